"""The advisor: rules modelled on Nsight Compute's guided analysis, each finding with a measured speedup.

:func:`advise` applies the rules of :data:`RULES` to a timed launch (its ``LaunchStats``) and returns
:class:`Finding` values, most promising first.  A rule that names a cause the cycle model can remove
measures what removing it buys: it replays the launch's recorded trace with that cause idealised
(:class:`xcc.sim.perf.idealise.Idealise`) and reports ``cycles now / cycles idealised`` - the what-if
analysis of GPA (Zhou et al., CGO 2021), exact here because the model is re-run rather than estimated from
samples.  The symptom rules measure too: a tail wave and achieved occupancy replay the work balanced over
whole waves; the stall breakdown (CPIStall) and speed of light (SOLBottleneck) take the estimate of the
cause finding that produces them, else replay their own what-if (the top stall reason idealised, the
limiting unit at twice its rate).  Only the idle tensor pipe carries 1.0: the trace cannot say which FMAs
a matrix product would move to the tensor pipe.  Rule names are Nsight Compute's where it has one (Nsight
Compute Profiling Guide, "Guided Analysis"); thresholds and estimates are listed in ``docs/advisor.md``.

Each finding names the instructions responsible as (PTX file, PTX line, source file, source line): the
kernel image's line table read by :mod:`xcc.backend.lineinfo` (for PTX with ``.loc``/``.file`` debug
directives, ``nvcc -lineinfo``/``-G``, its source positions; kept in the image, so a kernel loaded from an
``.xbin`` names them too).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from xcc.backend.lineinfo import file_table, line_info
from xcc.diagnostics import Finding
from xcc.sim.perf.idealise import Idealise, converged_keep, spill_pcs
from xcc.sim.perf.metrics import STALL_PREFIX, STALL_REASONS

__all__ = ["Finding", "advise", "format_findings", "findings_json", "RULES"]

_TOP_LOCATIONS = 5
_MIN_GAIN = 1.01  # a what-if rule whose idealised replay gains less than 1% reports nothing


class _Launch:
    """A timed launch as the rules see it: metrics, the trace's entries by pc, what-if replays (cached)."""

    def __init__(self, stats, measure: bool = True):
        self.stats, self.m, self.timed, self.measure = stats, stats.metrics, stats.timed, measure
        t = self.timed
        self.kernel = t.kernel
        W, self.PC, self.V, _, _, _ = t.rec.streams()
        self.G, self.K = t.rec.extras()
        self.W = W
        self.space = np.array([_space(i) for i in t.insts] + [""])
        self.found: list[Finding] = []  # the findings so far (CPIStall and SOLBottleneck read them)
        self.cache = getattr(t, "whatif", None)
        if self.cache is None:
            self.cache = t.whatif = {}

    def speedup(self, ideal: Idealise) -> float:
        """cycles now / cycles replayed with ``ideal`` (cached per launch); NaN when not measuring and not cached."""
        if ideal not in self.cache and not self.measure:
            return math.nan
        if ideal not in self.cache:
            self.cache[ideal] = self.timed.time(ideal)[0]
        now, then = self.stats.cycles, self.cache[ideal]
        return max(1.0, now / then) if then else 1.0

    def locations(self, weight: dict[int, float]) -> list[tuple]:
        """The PTX lines of the pcs weighted most (summed by line), as finding locations; the source position
        of a line is that of its first pc with one (:func:`xcc.backend.lineinfo.line_info`)."""
        ptx = str(getattr(self.stats.sources, "name", "") or "")
        files = file_table(self.kernel)
        by_line: dict[int, float] = {}
        src: dict[int, tuple] = {}
        for pc, w in sorted(weight.items()):
            info = line_info(self.kernel, pc, files)
            if not info.ptx_line or w <= 0:
                continue
            by_line[info.ptx_line] = by_line.get(info.ptx_line, 0) + w
            if info.file is not None and info.ptx_line not in src:
                src[info.ptx_line] = (info.file, info.line)
        top = sorted(by_line, key=lambda ln: (-by_line[ln], ln))[:_TOP_LOCATIONS]
        return [(ptx, ln, *src.get(ln, (None, None))) for ln in top]

    def per_pc(self, values: np.ndarray, mask: np.ndarray) -> dict[int, float]:
        sel = np.flatnonzero(mask)
        sums = np.bincount(self.PC[sel], weights=values[sel].astype(np.float64))
        return {pc: float(v) for pc, v in enumerate(sums) if v > 0}


def _space(inst) -> str:
    from xcc.sim.perf.facts import mem_space

    return mem_space(inst.mnemonic) or ""


def _shared_conflicts(a: _Launch) -> Finding | None:
    """SharedMemoryConflicts: bank conflicts are at least 10% of the shared-memory wavefronts."""
    sh = a.space[a.PC] == "s"
    waves, reqs = int(a.V[sh].sum()), int(sh.sum())
    if not reqs or waves - reqs < 0.1 * waves:
        return None
    s = a.speedup(Idealise(bank_conflicts=True))
    return Finding("SharedMemoryConflicts", f"shared-memory accesses take {waves / reqs:.2f} wavefronts per request "
                   f"(1 is conflict-free): {waves - reqs:,} of {waves:,} wavefronts are bank conflicts; pad or swizzle "
                   f"the shared array so that a warp's threads hit distinct banks", s,
                   a.locations(a.per_pc(a.V - 1, sh)))


def _uncoalesced(a: _Launch) -> Finding | None:
    """UncoalescedGlobalAccess: the global requests touch at least 10% more sectors than their bytes need."""
    g = (a.space[a.PC] == "g") & (a.G > 0)
    sb = a.timed.rec.sector_bytes
    need = np.maximum(1, -(-a.G // sb))
    excess = np.where(g, np.maximum(a.V - need, 0), 0)
    total = int(a.V[g].sum())
    if not total or excess.sum() < 0.1 * total:
        return None
    s = a.speedup(Idealise(uncoalesced=True))
    return Finding("UncoalescedGlobalAccess", f"global accesses touch {total / int(g.sum()):.1f} sectors per request, "
                   f"{int(excess.sum()):,} of {total:,} sectors more than the bytes they move need; make consecutive "
                   f"threads access consecutive addresses", s, a.locations(a.per_pc(excess, g)))


def _divergence(a: _Launch) -> Finding | None:
    """ThreadDivergence: converging every warp would drop at least 5% of the issued warp instructions."""
    keep = converged_keep(a.W, a.K)
    dropped = int((~keep).sum())
    if dropped < 0.05 * keep.size:
        return None
    s = a.speedup(Idealise(divergence=True))
    threads = a.stats.thread_instructions / max(a.stats.warp_instructions, 1)
    return Finding("ThreadDivergence", f"warps diverge: {threads:.1f} active threads per warp instruction, and "
                   f"{dropped:,} of {keep.size:,} issued warp instructions serve the other groups of divergent "
                   f"branches; make branch conditions uniform across a warp", s,
                   a.locations(a.per_pc(np.ones(keep.size), ~keep)))


def _occupancy(a: _Launch) -> Finding | None:
    """TheoreticalOccupancy: registers or shared memory hold the resident warps below the SM's limit."""
    m = a.m
    limiter = m.get("launch__occupancy_limit")
    if limiter not in ("registers", "shared_memory"):
        return None
    hw = min(m.get("launch__occupancy_limit_warps", 0), m.get("launch__occupancy_limit_blocks", 0))
    now = m.get("launch__occupancy_limit_registers" if limiter == "registers" else "launch__occupancy_limit_shared_mem")
    s = a.speedup(Idealise(occupancy=True))
    what = (f"{m.get('launch__registers_per_thread')} registers per thread" if limiter == "registers" else
            f"{m.get('launch__shared_mem_per_block_static', 0) + m.get('launch__shared_mem_per_block_dynamic', 0):,} "
            f"bytes of shared memory per block")
    return Finding("TheoreticalOccupancy", f"theoretical occupancy is {m.get('sm__maximum_warps_per_active_cycle_pct', 0):.1f}%: "
                   f"{what} allow {now} blocks per SM where the warp slots allow {hw}; reduce them "
                   f"(__launch_bounds__, fewer live values)", s, a.locations(_first_pc(a)))


def _launch_config(a: _Launch) -> Finding | None:
    """LaunchConfiguration: the grid fills less than one wave of the machine, or its last wave is mostly empty."""
    m = a.m
    ctas, sms = m.get("launch__grid_size", 0), m.get("launch__sm_count", 0)
    waves = m.get("launch__waves_per_multiprocessor", 0.0)
    if not ctas or not sms:
        return None
    if waves < 1.0:
        s = a.speedup(Idealise(fill_machine=True))
        return Finding("LaunchConfiguration", f"the grid of {ctas} blocks fills {100 * waves:.0f}% of one wave "
                       f"({sms} SMs); launch more, smaller blocks (a grid-stride loop keeps the work the same)", s,
                       a.locations(_first_pc(a)))
    tail = waves - int(waves)
    if 0 < tail <= 0.5:
        s = a.speedup(Idealise(balance=True))
        return Finding("LaunchConfiguration", f"{waves:.2f} waves per SM: the last wave runs {100 * tail:.0f}% full "
                       f"(a tail effect); size the grid to whole waves (a grid-stride loop over "
                       f"{round(int(waves) * ctas / waves)} blocks keeps the work the same)", s, a.locations(_first_pc(a)))
    return None


def _spills(a: _Launch) -> Finding | None:
    """RegisterSpilling: the kernel issues spill stores and reloads."""
    pcs = spill_pcs(a.timed.insts, a.kernel)
    mask = np.isin(a.PC, sorted(pcs)) if pcs else np.zeros(a.PC.size, bool)
    if not mask.any():
        return None
    s = a.speedup(Idealise(spills=True))
    return Finding("RegisterSpilling", f"{int(mask.sum()):,} warp instructions are register spills to local memory "
                   f"({a.kernel.spill_bytes} bytes of spill slots); raise the register limit or shorten live ranges", s,
                   a.locations(a.per_pc(np.ones(mask.size), mask)))


def _pipes(a: _Launch) -> list[Finding]:
    """SlowPipeLimiter: a pipe slower than one instruction per cycle is busy at least 50% of the active cycles;
    an idle tensor pipe while the FMA pipe issues at least half the instructions and is busy 60% of the time."""
    m, out = a.m, []
    active = m.get("sm__cycles_active.sum", 0) * int(a.timed.machine.data["sm"]["subpartitions"])
    rates = a.timed.machine.data.get("issue", {})
    issued = m.get("smsp__inst_executed.sum", 0) or 1
    for p, rate in sorted(rates.items()):
        n = m.get(f"sm__inst_executed_pipe_{p}.sum", 0)
        if not active or float(rate) >= 1.0 or n / float(rate) < 0.5 * active:
            continue
        pcs = {pc for pc, i in enumerate(a.timed.insts) if i.d.pipe == p}
        mask = np.isin(a.PC, sorted(pcs))
        out.append(Finding("SlowPipeLimiter", f"the {p} pipe (rate {rate} per cycle) is busy "
                           f"{100 * n / float(rate) / active:.0f}% of the active cycles", a.speedup(Idealise(pipes=(p,))),
                           a.locations(a.per_pc(np.ones(mask.size), mask))))
    tensor = sum(v for k, v in m.items() if k.startswith("sm__inst_executed_pipe_tensor_op_") and k.endswith(".sum"))
    fma = m.get("sm__inst_executed_pipe_fma.sum", 0)
    fma_busy = fma / float(rates["fma"]) if "fma" in rates else fma  # no [issue] rate: one per cycle
    if active and not tensor and fma >= 0.5 * issued and fma_busy >= 0.6 * active:
        out.append(Finding("SlowPipeLimiter", "the tensor pipe is idle while the FMA pipe issues "
                           f"{100 * m['sm__inst_executed_pipe_fma.sum'] / issued:.0f}% of the instructions: "
                           "matrix products could use mma (tensor cores); x1.00 is not a measurement: the trace "
                           "cannot say which FMAs form a matrix product, so an opportunity, not a measured saving",
                           1.0, []))
    return out


def _sol(a: _Launch) -> Finding | None:
    """SOLBottleneck: the higher of compute (busiest pipe) and memory (L2, DRAM) throughput, or neither above 60%
    (latency-bound).  Its estimate is settled by :func:`_sol_estimate` once the other rules have run."""
    m = a.m
    active = m.get("sm__cycles_active.sum", 0) * int(a.timed.machine.data["sm"]["subpartitions"])
    rates = a.timed.machine.data.get("issue", {})
    busy = {p: 100 * m.get(f"sm__inst_executed_pipe_{p}.sum", 0) / float(r) / active
            for p, r in rates.items()} if active else {}
    pipe = max(busy, key=lambda p: (busy[p], p)) if busy else None
    compute = busy.get(pipe, 0.0)
    dram = m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0.0)
    l2 = m.get("lts__throughput.avg.pct_of_peak_sustained_elapsed", 0.0)
    memory = max(dram, l2)
    if max(compute, memory) >= 60:
        a.sol_kind = "compute" if compute >= memory else "memory"
        unit = pipe if a.sol_kind == "compute" else "dram" if dram >= l2 else "l2"
        a.sol_ideal = Idealise(throughput=(unit,)), f"the {unit} {'pipe' if a.sol_kind == 'compute' else 'bandwidth'} " \
                                                    f"at twice its rate"
        text = f"{a.sol_kind}-bound: compute throughput {compute:.0f}%, memory throughput {memory:.0f}% of peak"
    else:
        a.sol_kind = "latency"
        top, ideal = _top_stall(a)
        a.sol_ideal = ideal, (f"{_IDEAL_TEXT[top]} (its top stall reason, {top})" if ideal else "")
        text = (f"latency-bound: compute throughput {compute:.0f}% and memory throughput {memory:.0f}% of peak are "
                f"both low; see the stall reasons")
    return Finding("SOLBottleneck", text, math.nan, [])


_ADDRESSES = {"memory": ("UncoalescedGlobalAccess", "SharedMemoryConflicts", "RegisterSpilling"),
              "compute": ("SlowPipeLimiter", "ThreadDivergence", "RegisterSpilling"),
              "latency": ("TheoreticalOccupancy", "AchievedOccupancy", "LaunchConfiguration", "CPIStall",
                          "ThreadDivergence", "RegisterSpilling")}
"""The findings whose causes load each kind of bottleneck: the one that buys most gives SOLBottleneck's estimate."""


def _sol_estimate(a: _Launch, sol: Finding, found: list[Finding]) -> Finding:
    """SOLBottleneck's estimate: that of the finding addressing the bottleneck that buys most (named); without
    one, the limiting unit at twice its throughput (latency-bound: the top stall reason idealised) replayed."""
    addressed = [f for f in found if f.rule in _ADDRESSES[a.sol_kind] and not math.isnan(f.estimated_speedup)]
    if addressed:
        best = max(addressed, key=lambda f: f.estimated_speedup)
        return dataclasses.replace(sol, estimated_speedup=best.estimated_speedup,
                                   message=f"{sol.message}; estimate: {best.rule}'s, the finding that addresses it")
    ideal, what = a.sol_ideal
    if ideal is None:
        return dataclasses.replace(sol, estimated_speedup=1.0,
                                   message=f"{sol.message}; x1.00: no single stall reason to idealise")
    return dataclasses.replace(sol, estimated_speedup=a.speedup(ideal), message=f"{sol.message}; estimate: {what}")


def _stall_ideal(a: _Launch, reason: str) -> Idealise | None:
    """The what-if that removes stall reason ``reason`` (None: no idealisation models it)."""
    if reason == "long_scoreboard":
        return Idealise(memory_latency=True)
    if reason in ("mio_throttle", "lg_throttle"):
        return Idealise(lsu_queues=True)
    if reason == "barrier":
        return Idealise(barriers=True)
    if reason == "math_pipe_throttle":
        return Idealise(throughput=tuple(sorted(a.timed.machine.data.get("issue", {}))))
    return None


def _top_stall(a: _Launch) -> tuple[str | None, Idealise | None]:
    """The stall reason (not ``selected``) with the most warp-cycles, and its what-if."""
    reasons = {r: a.m.get(STALL_PREFIX + r, 0) for r in STALL_REASONS[1:]}
    top = max(reasons, key=lambda r: (reasons[r], r)) if reasons else None
    return top, (_stall_ideal(a, top) if top and reasons[top] else None)


def _stalls(a: _Launch) -> Finding | None:
    """CPIStall: one stall reason takes at least 30% of the warp-cycles.  Estimate: that of the cause finding
    (above) that produces such stalls and buys most, named; without one, that reason idealised, replayed."""
    m = a.m
    total = m.get("smsp__warp_cycles.sum", 0)
    top, ideal = _top_stall(a)
    n = m.get(STALL_PREFIX + top, 0) if top else 0
    if not total or top is None or n < 0.3 * total:
        return None
    k = STALL_REASONS.index(top)
    weight = {row[0]: row[1 + k] for row in m.get("xcc__pc_samples", [])}
    issued = m.get("smsp__inst_executed.sum", 0) or 1
    text = (f"warps stall on {top} for {100 * n / total:.0f}% of their cycles "
            f"({n / issued:.1f} cycles per issued instruction)")
    causes = [f for f in a.found if f.rule in _CAUSES.get(top, ()) and not math.isnan(f.estimated_speedup)]
    if causes:
        best = max(causes, key=lambda f: f.estimated_speedup)
        return Finding("CPIStall", f"{text}; estimate: {best.rule}'s, the cause found for them",
                       best.estimated_speedup, a.locations(weight))
    what = f"; estimate: {_IDEAL_TEXT[top]}" if ideal else f"; x1.00: no what-if of the model removes {top} stalls"
    return Finding("CPIStall", text + what, a.speedup(ideal) if ideal else 1.0, a.locations(weight))


_CAUSES = {"long_scoreboard": ("UncoalescedGlobalAccess", "TheoreticalOccupancy", "LaunchConfiguration",
                               "RegisterSpilling"),
           "lg_throttle": ("UncoalescedGlobalAccess", "RegisterSpilling"),
           "mio_throttle": ("SharedMemoryConflicts", "SlowPipeLimiter"),
           "short_scoreboard": ("SharedMemoryConflicts", "SlowPipeLimiter"),
           "math_pipe_throttle": ("SlowPipeLimiter",), "barrier": ("ThreadDivergence",)}
"""Per stall reason, the cause rules whose findings produce it (CPIStall takes the best one's estimate)."""


_IDEAL_TEXT = {"long_scoreboard": "global memory at the L1 hit latency", "mio_throttle": "the shared-memory unit's "
               "queue unbounded", "lg_throttle": "the L1's queue unbounded", "barrier": "no barrier waits",
               "math_pipe_throttle": "every pipe at twice its rate"}


def _achieved(a: _Launch) -> Finding | None:
    """AchievedOccupancy: the achieved occupancy is below 80% of the theoretical one; estimate: the work spread
    over whole waves (the machine filled, or the tail balanced)."""
    m = a.m
    theo = m.get("sm__maximum_warps_per_active_cycle_pct", 0)
    got = m.get("sm__warps_active.avg.pct_of_peak_sustained_active", 0)
    if not theo or got >= 0.8 * theo:
        return None
    s = a.speedup(Idealise(balance=True))
    return Finding("AchievedOccupancy", f"achieved occupancy {got:.1f}% is well below the theoretical {theo:.1f}% "
                   f"(warps finish unevenly, or too few blocks per SM); estimate: the launch's work spread evenly "
                   f"over whole waves", s, [])


def _first_pc(a: _Launch) -> dict[int, float]:
    """The kernel's first instruction with a PTX line: where a finding about the whole kernel points."""
    return {next((pc for pc, line in enumerate(a.kernel.lines) if line), 0): 1.0}


RULES = (_shared_conflicts, _uncoalesced, _divergence, _occupancy, _launch_config, _spills, _pipes, _stalls, _achieved,
         _sol)
"""The rules, in the order that breaks ties between equal estimates (causes before descriptions; SOLBottleneck,
whose estimate may be another finding's, last)."""


def advise(stats, measure: bool = True) -> list[Finding]:
    """The findings of every rule on the timed launch ``stats``, by estimated speedup (highest first).

    ``measure=False``: the rules' triggers only, without the replays that measure the estimates (the cheap
    Advisor section of ``--stats``); a finding whose replay has not run yet (none cached on the launch)
    carries ``estimated_speedup`` NaN and keeps the rules' order."""
    if getattr(stats, "timed", None) is None or not stats.cycles:
        return []
    a = _Launch(stats, measure)
    found: list[tuple[int, Finding]] = []
    for rank, rule in enumerate(RULES):
        got = rule(a)
        for f in got if isinstance(got, list) else [got]:
            if f is not None and f.rule == "SOLBottleneck":
                f = _sol_estimate(a, f, a.found)
            if f is not None and (not f.estimated_speedup < _MIN_GAIN or f.rule in _DESCRIPTIVE):
                found.append((rank, f))
                a.found.append(f)
    return [f for _, f in sorted(found, key=lambda rf: (-_key(rf[1]), rf[0]))]


def _key(f: Finding) -> float:
    return 0.0 if math.isnan(f.estimated_speedup) else f.estimated_speedup


_DESCRIPTIVE = ("SOLBottleneck", "CPIStall", "AchievedOccupancy", "LaunchConfiguration", "SlowPipeLimiter")


def _where(loc) -> str:
    ptx, line, src, sline = loc
    text = f"{ptx or 'PTX'}:{line}"
    return f"{src}:{sline} ({text})" if src else text


def format_findings(findings: list[Finding]) -> str:
    """The findings as text: one paragraph each, estimate first."""
    if not findings:
        return "  (no findings)"
    out = []
    for f in findings:
        est = "x ?" if math.isnan(f.estimated_speedup) else f"x{f.estimated_speedup:.2f}"
        out.append(f"  [{f.rule}] {est}  {f.message}")
        out += [f"      at {_where(loc)}" for loc in f.locations]
    return "\n".join(out)


def findings_json(findings: list[Finding]) -> list[dict]:
    """The findings as JSON-ready dicts (locations as [ptx_file, ptx_line, source_file, source_line]; an
    estimate not measured as null): the schema of ``xcc advise --json`` and ``xcc run --stats-json``'s
    ``findings`` (docs/advisor.md)."""
    return [{"rule": f.rule, "message": f.message,
             "estimated_speedup": None if math.isnan(f.estimated_speedup) else round(f.estimated_speedup, 4),
             "locations": [list(loc) for loc in f.locations]} for f in findings]
