"""Baselines: a versioned JSON record of a run, and the comparison of a run with one.

A gated figure (:data:`~xcc.regress.runner.GATED`) worse than the baseline's by more than the threshold is a
regression; so is an output failure.  The explanatory figures (IPC, the stall breakdown, the Nsight-named
metrics) are compared exactly and every change is reported, gating nothing.  Compile time, the one figure
that is not deterministic, is compared with a noise-aware rule: the samples of both sides go through a
one-sided Mann-Whitney U test (:mod:`xcc.regress.stats`), and the kernel compiles slower when p < ``ALPHA``
and its median rose by more than the compile-time threshold.  Format and rules: docs/regress.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from xcc.diagnostics import XccError
from xcc.regress.runner import EXPLANATORY, GATED, STALL_PREFIX
from xcc.regress.stats import mann_whitney_greater, median

FORMAT = "xcc-regress-baseline"
VERSION = 1
ALPHA = 0.05

# exit codes, usable with `git bisect run`
EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, EXIT_UNTESTABLE = 0, 1, 2, 125


class BaselineError(XccError):
    """A baseline file that cannot be read (exit 125: the run cannot be compared)."""


def make_baseline(corpus: str, options: dict, machines: dict, results: list[dict], label: str = "") -> dict:
    """The baseline document of a run (``results`` in corpus order)."""
    from xcc import __version__

    return {"format": FORMAT, "version": VERSION, "xcc": __version__, "label": label, "corpus": corpus,
            "options": options, "machines": machines, "results": results}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def load_baseline(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except OSError as e:
        raise BaselineError(f"cannot read baseline '{path}': {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BaselineError(f"{path}: not a baseline (invalid JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BaselineError(f"{path}: not an xcc regress baseline (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise BaselineError(f"{path}: baseline version {doc.get('version')!r}; this xcc reads version {VERSION} "
                            "(re-record it with --record)")
    for i, r in enumerate(doc.get("results", [])):
        for key in ("id", "kernel", "engine", "level", "status", "figures"):
            if key not in r:
                raise BaselineError(f"{path}: results[{i}] lacks \"{key}\"")
    return doc


def parse_threshold(text: str) -> float:
    """``5%`` or ``0.05`` -> 0.05; a :class:`ValueError` naming the text otherwise."""
    t = text.strip()
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise ValueError(f"'{text}' is not a fraction (0.05) or a percentage (5%)") from None
    if v < 0:
        raise ValueError(f"'{text}' is negative")
    return v


@dataclass
class Change:
    metric: str
    old: float | int | str | None
    new: float | int | str | None

    @property
    def relative(self) -> float | None:
        if not _is_number(self.old) or not _is_number(self.new) or self.old == 0:
            return None
        return (self.new - self.old) / abs(self.old)

    def text(self) -> str:
        rel = self.relative
        old, new = _fmt(self.old), _fmt(self.new)
        if old == new:  # a change below the 4 digits shown
            old, new = repr(self.old), repr(self.new)
        return f"{self.metric} {old} -> {new}" + (f" ({rel:+.1%})" if rel is not None else "")


def _is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _moved(old: dict, new: dict, skip=lambda name: False) -> list[Change]:
    """Every name of ``old`` or ``new`` whose value differs (absent on one side: None): what has no relative
    change (from 0, appeared, gone, not a number) first, then the largest relative change first, then by name,
    so that a report lists first what moved most."""
    out = [Change(k, old.get(k), new.get(k)) for k in sorted(set(old) | set(new))
           if not skip(k) and old.get(k) != new.get(k)]
    return sorted(out, key=lambda c: (-abs(c.relative) if c.relative is not None else float("-inf"), c.metric))


@dataclass
class Finding:
    """The comparison of one unit (kernel, engine, level) with the baseline.

    ``regressions``/``improvements``: the gated figures that moved (the only changes that gate);
    ``other_changes`` (IPC), ``stall_changes`` (warp-cycles per stall reason) and ``metric_changes`` (the
    Nsight-named metrics other than the stall ones): the explanatory figures that moved, reported only.
    ``missing``: a unit of the baseline that the run should have run and did not (a failure)."""

    id: str
    result: dict
    base: dict | None
    failures: list[str] = field(default_factory=list)
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    other_changes: list[Change] = field(default_factory=list)
    stall_changes: list[Change] = field(default_factory=list)
    metric_changes: list[Change] = field(default_factory=list)
    compile_time: dict = field(default_factory=dict)
    attribution: list[dict] = field(default_factory=list)
    missing: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    @property
    def moved(self) -> bool:
        """An explanatory figure changed."""
        return bool(self.other_changes or self.stall_changes or self.metric_changes)


def moved_rows(f: Finding) -> list[tuple[str, Change]]:
    """The explanatory changes of ``f`` for a report: (what, change) with what 'figure', 'stall' or 'metric'."""
    return ([("figure", c) for c in f.other_changes] + [("stall", c) for c in f.stall_changes]
            + [("metric", c) for c in f.metric_changes])


def moved_text(f: Finding, limit: int | None = None) -> str:
    """One line of what moved in ``f`` besides the gated figures: IPC, then the stall reasons, then the metrics,
    at most ``limit`` of each of the last two (the rest counted)."""
    def some(changes: list[Change]) -> str:
        shown = changes if limit is None else changes[:limit]
        more = len(changes) - len(shown)
        return ", ".join(c.text() for c in shown) + (f" and {more} more" if more else "")

    parts = [c.text() for c in f.other_changes]
    if f.stall_changes:
        parts.append("stalls: " + some(f.stall_changes))
    if f.metric_changes:
        parts.append(f"{len(f.metric_changes)} metric(s): " + some(f.metric_changes))
    return "; ".join(parts)


def match_base(result: dict, base_results: list[dict]) -> dict | None:
    """The baseline entry of ``result``: the same kernel, engine and level; else, when the baseline has one
    entry of that kernel and engine (a run at another -O than the baseline's), that one."""
    same = [b for b in base_results if b["kernel"] == result["kernel"] and b["engine"] == result["engine"]]
    exact = [b for b in same if b["level"] == result["level"]]
    if exact:
        return exact[0]
    return same[0] if len(same) == 1 else None


def is_regression(old, new, threshold: float) -> bool:
    """The gating rule: ``new`` worse (greater) than ``old`` by more than ``threshold`` times ``|old|``; from
    0, any rise."""
    return new > old and (new - old) > threshold * abs(old)


def compare(results: list[dict], baseline: dict | None, threshold: float = 0.0,
            ct_threshold: float = 0.1, opt_level: int | None = None) -> list[Finding]:
    """One :class:`Finding` per result, in order, then one per baseline unit the run lacks; without a
    baseline only output failures count.  ``opt_level``: the run's ``-O`` override, when it had one: the run
    was asked for that level only, so a kernel's baseline entries at other levels are not expected of it."""
    base_results = baseline["results"] if baseline else []
    findings = []
    matched: set[int] = set()
    for r in results:
        base = match_base(r, base_results) if baseline else None
        if base is not None:
            matched.add(id(base))
        f = Finding(r["id"], r, base, failures=list(r.get("failures", [])))
        if base is not None and r["status"] != "error":
            for metric in GATED:
                old, new = base["figures"].get(metric), r["figures"].get(metric)
                if old is None or new is None or old == new:
                    continue
                if is_regression(old, new, threshold):
                    f.regressions.append(Change(metric, old, new))
                elif new < old:
                    f.improvements.append(Change(metric, old, new))
            f.other_changes = _moved({m: base["figures"].get(m) for m in EXPLANATORY},
                                     {m: r["figures"].get(m) for m in EXPLANATORY})
            f.stall_changes = _moved(base.get("stalls", {}), r.get("stalls", {}))
            f.metric_changes = _moved(base.get("metrics", {}), r.get("metrics", {}),
                                      skip=lambda name: name.startswith(STALL_PREFIX))  # reported as stalls
            f.compile_time = compile_time_rule(base.get("compile_ms", []), r.get("compile_ms", []), ct_threshold)
        findings.append(f)
    run = {(r["kernel"], r["engine"]) for r in results}
    reported: set[tuple] = set()
    for base in base_results:  # a kernel the baseline has and the run does not is never dropped silently
        key = (base["kernel"], base["engine"])
        if id(base) in matched or key in reported:
            continue
        if opt_level is not None:
            if key in run:  # run at -O{opt_level}: its baseline entries at other levels were not asked for
                continue
            reported.add(key)  # once per kernel and engine: the run would have run it at one level
            where = f"{base['engine']}, run at -O{opt_level}"
            uid = f"{base['kernel']}[{base['engine']},O{opt_level}]"
        else:
            where, uid = f"{base['engine']}, -O{base['level']}", base.get("id", base["kernel"])
        why = (f"{base['kernel']} ({where}) is in the baseline but was not run: removed from the corpus? "
               "(record the baseline again: make rebaseline)")
        gone = {**base, "id": uid, "status": "error", "failures": [why]}
        findings.append(Finding(uid, gone, base, failures=[why], missing=True))
    return findings


def compile_time_rule(old: list[float], new: list[float], ct_threshold: float) -> dict:
    """The noise-aware comparison of compile-time samples: medians, the U test's p-value, and ``slower``."""
    if not old or not new:
        return {}
    m_old, m_new = median(old), median(new)
    p = mann_whitney_greater(new, old)
    slower = p < ALPHA and m_new > m_old * (1 + ct_threshold)
    return {"old_ms": m_old, "new_ms": m_new, "p": round(p, 6), "slower": slower}


def exit_code(findings: list[Finding], gate_compile_time: bool = False) -> int:
    bad = any(f.failed or f.regressed or (gate_compile_time and f.compile_time.get("slower")) for f in findings)
    return EXIT_REGRESSION if bad else EXIT_OK


def deterministic(result: dict) -> dict:
    """A result without its compile-time samples: what must be identical run after run."""
    return {k: v for k, v in result.items() if k != "compile_ms"}
