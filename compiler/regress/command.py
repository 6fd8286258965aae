"""``xcc regress CORPUS.toml``: compile, run and check every kernel of a corpus, record a baseline or compare
with one, attribute regressions, write reports.  Exit codes (``git bisect run`` reads them): 0 no regression,
1 a regression or output failure, 2 a usage error, 125 the corpus cannot be tested."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from xcc.diagnostics import XccError
from xcc.regress.baseline import (
    EXIT_UNTESTABLE,
    EXIT_USAGE,
    BaselineError,
    Finding,
    compare,
    dumps,
    exit_code,
    load_baseline,
    make_baseline,
    moved_text,
)
from xcc.regress.corpus import CorpusError, load_corpus
from xcc.regress.runner import RunOptions, Unit, machine_record, run_unit, units_of


@dataclass
class Request:
    """Everything ``xcc regress`` was asked to do (the command line's options)."""

    corpus: Path
    options: RunOptions = field(default_factory=RunOptions)
    record: Path | None = None
    baseline: Path | None = None
    threshold: float = 0.0
    compile_time_threshold: float = 0.1
    gate_compile_time: bool = False
    attribute: bool = False
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    history: tuple[Path, ...] = ()
    workers: int = 1
    scheduler: str | None = None
    progress: bool | None = None  # None: when stderr is a terminal
    label: str = ""


def _attribute_task(item, cache_dir):
    from xcc.regress.attribute import attribute

    unit, result, base, machines, metrics = item
    if cache_dir:
        import os

        if os.path.isdir(cache_dir):
            os.environ["XCC_CACHE_DIR"] = cache_dir
    try:
        return attribute(unit, result, base, machines, metrics)
    except XccError as e:
        why = str(e)
    except Exception as e:  # a crash of xcc while attributing: reported, the rest of the run goes on
        why = f"internal error: {type(e).__name__}: {e}"
    return [{"metric": m, "kind": "unknown", "cause": f"attribution failed: {why}", "before": None, "after": None}
            for m in metrics]


def _progress(total: int, enabled: bool | None, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr, disable=None if enabled is None else not enabled,
                leave=False)


def check_request(req: Request) -> None:
    """Options that cannot work are usage errors (exit 2), found before anything runs."""
    from xcc.backend.machine import load_machine
    from xcc.driver import CompileOptions

    o = req.options
    if req.options.machine:
        load_machine(req.options.machine)
    CompileOptions(opt_level=o.opt_level if o.opt_level is not None else 3, max_registers=o.maxrregcount,
                   passes=o.passes)
    if req.workers < 1:
        raise click.BadParameter(f"--workers must be at least 1, got {req.workers}")


def execute(req: Request) -> tuple[int, list[Finding]]:
    """Run the request; returns (exit code, findings).  Errors come back as exit codes with a message on
    stderr, never as an exception."""
    from xcc.regress.parallel import map_units

    try:
        check_request(req)
    except XccError as e:
        click.echo(f"xcc regress: {e}", err=True)
        return EXIT_USAGE, []
    try:
        corpus = load_corpus(req.corpus)
        baseline = load_baseline(req.baseline) if req.baseline else None
        history = [(p.stem, load_baseline(p)) for p in req.history]
        machines = {}
        for spec in sorted({u.machine for u in units_of(corpus.kernels, req.options)}):
            rec = machine_record(spec)
            machines[rec["hash"]] = rec
    except (CorpusError, BaselineError) as e:
        click.echo(str(e), err=True)
        return EXIT_UNTESTABLE, []
    except XccError as e:  # a kernel's machine description
        click.echo(f"xcc regress: {req.corpus}: {e}", err=True)
        return EXIT_UNTESTABLE, []
    options = RunOptions(req.options.opt_level, req.options.passes, req.options.machine, req.options.maxrregcount,
                         req.options.repeats, stages=req.record is not None)
    units = units_of(corpus.kernels, options)
    with _progress(len(units), req.progress, "xcc regress") as bar:
        results = map_units(run_unit, units, req.workers, req.scheduler, progress=lambda r: bar.update(1))
    findings = compare(results, baseline, req.threshold, req.compile_time_threshold, req.options.opt_level)
    if req.attribute and baseline is not None:
        _attribute(findings, units, baseline, req)
    if req.record:
        doc = make_baseline(req.corpus.name, _options_record(req.options), machines, results, req.label)
        _write(req.record, dumps(doc))
    _summary(findings, baseline is not None, req.gate_compile_time)
    _reports(req, findings, baseline is not None, history)
    return exit_code(findings, req.gate_compile_time), findings


def _options_record(o: RunOptions) -> dict:
    return {"opt_level": o.opt_level, "passes": o.passes, "machine": o.machine, "maxrregcount": o.maxrregcount,
            "repeats": o.repeats}


def _attribute(findings: list[Finding], units: list[Unit], baseline: dict, req: Request) -> None:
    from xcc.regress.parallel import map_units

    by_id = {u.id: u for u in units}
    todo = [f for f in findings if f.regressed and f.base is not None]
    if not todo:
        return
    items = [(by_id[f.id], f.result, f.base, baseline.get("machines", {}), [c.metric for c in f.regressions])
             for f in todo]
    with _progress(len(items), req.progress, "attributing") as bar:
        causes = map_units(_attribute_task, items, req.workers, req.scheduler, progress=lambda r: bar.update(1))
    for f, c in zip(todo, causes):
        f.attribution = c


def _summary(findings: list[Finding], compared: bool, gate_compile_time: bool) -> None:
    for f in findings:
        if f.failed:
            click.echo(f"FAIL      {f.id}: " + "; ".join(f.failures))
        if f.regressed:
            click.echo(f"REGRESSED {f.id}: " + "; ".join(c.text() for c in f.regressions))
            for c in f.attribution:
                click.echo(f"          {c['metric']}: {c['cause']} ({c['before']} -> {c['after']})")
        elif f.improvements and not f.failed:
            click.echo(f"improved  {f.id}: " + "; ".join(c.text() for c in f.improvements))
        if f.moved:  # explanatory figures: reported, never gating
            head = "          moved: " if f.regressed or (f.improvements and not f.failed) else f"moved     {f.id}: "
            click.echo(head + moved_text(f, limit=3))
        ct = f.compile_time
        if ct.get("slower"):
            gate = "" if gate_compile_time else " (not gating: --gate-compile-time)"
            click.echo(f"SLOWER    {f.id}: compile time {ct['old_ms']:.1f} -> {ct['new_ms']:.1f} ms "
                       f"(Mann-Whitney U p={ct['p']:.3f}){gate}")
    click.echo("xcc regress: " + counts(findings, compared))


def counts(findings: list[Finding], compared: bool) -> str:
    """'N kernel run(s), F failed[, M in the baseline but not run], R regressed, I improved' (the summary line)."""
    runs = [f for f in findings if not f.missing]
    missing = len(findings) - len(runs)
    text = f"{len(runs)} kernel run(s), {sum(f.failed for f in runs)} failed"
    if missing:
        text += f", {missing} in the baseline but not run"
    if not compared:
        return text + " (no baseline: outputs checked only)"
    regressed = sum(f.regressed for f in runs)
    improved = sum(bool(f.improvements) and not f.regressed for f in runs)
    return text + f", {regressed} regressed, {improved} improved"


def _reports(req: Request, findings: list[Finding], compared: bool, history: list) -> None:
    suite = req.corpus.stem
    if req.junit:
        from xcc.regress.report_junit import junit_xml

        _write(req.junit, junit_xml(findings, suite, _options_record(req.options)))
    if req.markdown:
        from xcc.regress.report_markdown import markdown

        _write(req.markdown, markdown(findings, req.corpus.name, compared, req.gate_compile_time))
    if req.html:
        from xcc.regress.report_html import html_report

        past = list(history)
        if req.baseline and compared:
            past.append((req.baseline.stem, load_baseline(req.baseline)))
        _write(req.html, html_report(findings, req.corpus.name, past))


def _write(path: Path, text: str) -> None:
    import os

    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise XccError(f"cannot write '{path}': {e.strerror}") from None
