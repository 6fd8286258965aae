"""Triton's benchmarker on xcc: the modelled time of a function's launches.

``triton.testing.do_bench(fn)`` on a GPU runs ``fn`` for ``rep`` milliseconds of wall time and summarises
CUDA-event timings.  On xcc a launch's time is the cycle model's (:mod:`xcc.triton.timeline`), which does
not vary from run to run, so :func:`do_bench` runs ``fn`` once (the first call also compiles; compiling
costs no modelled time) and reports that modelled time, in milliseconds, in Triton's return forms
(``quantiles``, ``return_mode``).  It is the driver's ``get_benchmarker()``, so ``@triton.autotune``
ranks its configurations by modelled time, and :func:`xcc.triton.activate` installs it as
``triton.testing.do_bench`` (Triton's own would repeat the interpreted launches thousands of times).
"""

from __future__ import annotations

from xcc.triton import timeline

_original_do_bench = None


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Modelled milliseconds of the Triton launches ``fn`` makes (``warmup`` and ``rep`` are accepted and
    unused: every run of ``fn`` takes the same modelled time)."""
    from triton.testing import _summarize_statistics

    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be min, max, mean, median or all, not {return_mode!r}")
    for x in grad_to_none or ():
        x.grad = None
    start = timeline.now_ms()
    fn()
    return _summarize_statistics([timeline.now_ms() - start], quantiles, return_mode)


def install() -> None:
    """Make :func:`do_bench` ``triton.testing.do_bench`` (callers that look it up at call time see it)."""
    global _original_do_bench
    import triton.testing

    if triton.testing.do_bench is not do_bench:
        _original_do_bench = triton.testing.do_bench
        triton.testing.do_bench = do_bench


def uninstall() -> None:
    """Give ``triton.testing.do_bench`` back."""
    import triton.testing

    if _original_do_bench is not None and triton.testing.do_bench is do_bench:
        triton.testing.do_bench = _original_do_bench
