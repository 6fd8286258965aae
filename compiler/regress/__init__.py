"""``xcc regress``: CI compile-and-run regression jobs over a corpus of kernels (docs/regress.md).

corpus (the TOML corpus file, checked) -> runner (compile, run, check one kernel at one level; its figures)
-> parallel (in-process or Dask) -> baseline (record, compare, the compile-time rule, exit codes) ->
attribute (the pass, option or machine key behind a regression) -> report_junit / report_markdown /
report_html; command strings them together for the ``xcc regress`` command of :mod:`xcc.cli`.
"""
