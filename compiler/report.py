"""``xcc report``'s input: a trace or a set of launches, read into one :class:`Report` that the page is drawn from.

Three sources give the same :class:`Report` (docs/report.md):

* a trace: the Chrome trace-event JSON of ``rt.trace`` / ``xcc run --trace`` / ``XCC_TRACE``
  (:mod:`xcc.runtime.timeline_json`): the kernels, copies and memsets of every stream in modelled time, each
  kernel's stall breakdown (its ``warps by state`` counter: average warps per Nsight warp state, times its
  cycles, are warp-cycles) and occupancy (its event's ``theoreticalOccupancy``, ``achievedOccupancy``,
  ``occupancyLimiter``);
* statistics files of ``xcc run --stats-json`` (one launch each, laid end to end on one row; the metrics give
  the stalls and occupancy);
* a live timeline (``xcc report --run``): its trace, plus the advisor's findings on each kernel's
  ``LaunchStats`` (``stats.advise()``, where this xcc has the advisor), with their source lines.

A file that is neither trace nor statistics is a :class:`~xcc.diagnostics.XccError` naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from xcc.diagnostics import XccError

__all__ = ["Copy", "Kernel", "Report", "findings_of", "from_stats", "from_trace", "load"]

STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"  # xcc.sim.perf.metrics.STALL_PREFIX (Nsight's name)


@dataclass
class Kernel:
    """One launch: where it ran (row, modelled ns), its shape and figures, and the advisor's findings."""

    name: str
    row: str
    start: float
    end: float
    cycles: int | None = None
    grid: tuple = ()
    block: tuple = ()
    stalls: dict[str, float] = field(default_factory=dict)  # reason -> warp-cycles
    theoretical: float | None = None  # occupancy, % of the SM's warps
    achieved: float | None = None
    limiter: str | None = None
    source: str | None = None  # file.cu:line (a -lineinfo/-G build)
    ptx_line: int | None = None
    findings: list[dict] = field(default_factory=list)  # rule, message, estimated_speedup, locations


@dataclass
class Copy:
    kind: str  # HtoD, DtoH, DtoD or memset
    row: str
    start: float
    end: float
    nbytes: int = 0


@dataclass
class Report:
    title: str
    origin: str  # "trace", "stats" or "run"
    kernels: list[Kernel] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)
    machine: str = ""
    advisor: bool = False  # findings were asked for (xcc report --run with the advisor present)

    @property
    def rows(self) -> list[str]:
        """The timeline's rows (streams), in order of first use."""
        return list(dict.fromkeys(w.row for w in sorted([*self.kernels, *self.copies], key=lambda w: w.start)))


def load(paths: list[Path], title: str | None = None) -> Report:
    """A report of ``paths``: one trace JSON, or one or more ``--stats-json`` files."""
    docs = []
    for p in paths:
        try:
            docs.append(json.loads(Path(p).read_text()))
        except (OSError, UnicodeDecodeError) as e:
            raise XccError(f"cannot read '{p}': {getattr(e, 'strerror', None) or e}") from None
        except json.JSONDecodeError as e:
            raise XccError(f"{p}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    kinds = [_kind(d, p) for d, p in zip(docs, paths)]
    name = title or ", ".join(Path(p).name for p in paths)
    if "trace" in kinds:
        if len(docs) > 1:
            raise XccError("xcc report takes one trace (or any number of --stats-json files), got "
                           f"{len(docs)} files with a trace among them")
        return from_trace(docs[0], name)
    return from_stats(docs, name)


def _kind(doc, path) -> str:
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return "trace"
    if isinstance(doc, list) and all(isinstance(e, dict) for e in doc):
        raise XccError(f"{path}: a trace-event array without its object: xcc writes {{\"traceEvents\": [...]}}")
    if isinstance(doc, dict) and isinstance(doc.get("kernel"), str) and isinstance(doc.get("metrics"), dict):
        return "stats"
    raise XccError(f"{path}: neither a trace (rt.trace, xcc run --trace: an object with 'traceEvents') nor the "
                   "statistics of xcc run --stats-json (an object with 'kernel' and 'metrics')")


def _num(v):
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def _source(args: dict) -> str | None:
    f, line = args.get("sourceFile"), args.get("sourceLine")
    return f"{Path(f).name}:{line}" if isinstance(f, str) and line else None


def from_trace(doc: dict, title: str, findings: dict[int, list[dict]] | None = None) -> Report:
    """The report of a trace document; ``findings``: the advisor's, by the kernel's correlation id."""
    events = [e for e in doc["traceEvents"] if isinstance(e, dict)]
    threads = {(e.get("pid"), e.get("tid")): e.get("args", {}).get("name") for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    states = {(e.get("pid"), e.get("ts"), e.get("name")): e.get("args", {}) for e in events
              if e.get("ph") == "C" and str(e.get("name", "")).startswith("warps by state")}
    rep = Report(title, "trace", machine=str(doc.get("otherData", {}).get("machine", "")),
                 advisor=findings is not None)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "memcpy", "memset"):
            continue
        a = e.get("args") or {}
        ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        if ts is None or dur is None:
            raise XccError(f"trace event '{e.get('name')}' has no numeric ts/dur")
        row = threads.get((e.get("pid"), e.get("tid"))) or f"stream {e.get('tid')}"
        start, end = ts * 1000, (ts + dur) * 1000
        if e["cat"] != "kernel":
            rep.copies.append(Copy(str(a.get("copyKind", e["cat"])), row, start, end, int(a.get("bytes") or 0)))
            continue
        cycles = _num(a.get("cycles"))
        avg = states.get((e.get("pid"), ts, f"warps by state (stream {a.get('streamId', e.get('tid'))})"), {})
        rep.kernels.append(Kernel(
            str(e.get("name")), row, start, end, cycles, tuple(a.get("grid") or ()), tuple(a.get("block") or ()),
            {r: float(v) * (cycles or 0) for r, v in sorted(avg.items()) if _num(v)},
            _num(a.get("theoreticalOccupancy")), _num(a.get("achievedOccupancy")), a.get("occupancyLimiter"),
            _source(a), a.get("ptxLine"), list((findings or {}).get(a.get("correlationId"), []))))
    return rep


def from_stats(docs: list[dict], title: str) -> Report:
    """The report of ``xcc run --stats-json`` documents: their launches end to end on one row."""
    from xcc.backend.machine import load_machine

    rep = Report(title, "stats", machine=str(docs[0].get("machine", "")) if docs else "",
                 advisor=any("findings" in d for d in docs))
    clocks: dict[str, float] = {}
    t = 0.0
    for d in docs:
        machine = str(d.get("machine") or "xg1")
        if machine not in clocks:
            try:
                clocks[machine] = float(load_machine(machine).data["sm"]["clock_mhz"])
            except XccError:
                clocks[machine] = 1000.0
        m, cycles = d["metrics"], _num(d.get("cycles"))
        dur = (cycles or 0) * 1000 / clocks[machine]
        rep.kernels.append(Kernel(
            d["kernel"], "launches", t, t + max(dur, 1.0), cycles, tuple(d.get("grid") or ()),
            tuple(d.get("block") or ()),
            {k[len(STALL_PREFIX):]: float(v) for k, v in sorted(m.items()) if k.startswith(STALL_PREFIX) and _num(v)},
            _num(m.get("sm__maximum_warps_per_active_cycle_pct")),
            _num(m.get("sm__warps_active.avg.pct_of_peak_sustained_active")), m.get("launch__occupancy_limit"),
            findings=[f for f in d.get("findings") or [] if isinstance(f, dict)]))
        t += max(dur, 1.0)
    return rep


def findings_of(stats) -> list[dict] | None:
    """The advisor's findings on a launch as dicts (``locations`` as lists), or None where this xcc has no
    advisor (``LaunchStats.advise``) or the launch was not timed."""
    advise = getattr(stats, "advise", None)
    if advise is None or getattr(stats, "cycles", None) is None:
        return None
    return [{"rule": f.rule, "message": f.message, "estimated_speedup": float(f.estimated_speedup),
             "locations": [list(loc) for loc in f.locations]} for f in advise()]
