"""A timed launch's statistics as Nsight Compute prints them: sections of (metric, unit, value) rows.

The rows are a table: each names a label and unit as ``ncu``'s default sections do (*GPU Speed Of
Light Throughput*, *Launch Statistics*, *Occupancy*, *Warp State Statistics*, *Memory Workload
Analysis*, *Instruction Statistics*) and the metric it shows, by its Nsight name in
``LaunchStats.metrics`` (:mod:`xcc.sim.perf.metrics`, :func:`xcc.backend.occupancy.launch_metrics`) or
as a function of them.  A row whose metric the launch lacks is left out, so the report shows what the
cycle model measured and nothing else.  The stall reasons are warp-cycles per issued instruction, as
in Nsight's *Warp State* chart (they add up to *Warp Cycles Per Issued Instruction*).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xcc.sim.perf.facts import TENSOR_KINDS
from xcc.sim.perf.metrics import STALL_PREFIX, STALL_REASONS

Metrics = dict
_TOP_OPCODES = 12
Value = Callable[[Metrics], float | int | str | None]


def _get(name: str) -> Value:
    return lambda m: m.get(name)


def _ratio(num: str, den: str) -> Value:
    def f(m: Metrics):
        if num not in m or den not in m:
            return None
        return m[num] / m[den] if m[den] else 0.0
    return f


def _tensor_utilization(m: Metrics):
    """The tensor pipes' busy share, whatever held them (HMMA, IMMA, WGMMA share one pipe per sub-partition)."""
    keys = [f"sm__pipe_tensor_op_{kind}_cycles_active.avg.pct_of_peak_sustained_active" for kind in TENSOR_KINDS]
    return sum(m.get(k, 0.0) for k in keys) if any(k in m for k in keys) else None


def _shared_ways(op: str) -> Value:
    """Average wavefronts per shared-memory request (1 = no bank conflict, 32 = a 32-way conflict)."""
    waves = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
    conf = f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"

    def f(m: Metrics):
        if waves not in m or not m[waves]:
            return None
        return m[waves] / (m[waves] - m[conf])
    return f


def _per_sm(name: str) -> Value:
    """A ``.sum`` over the SMs as Nsight's ``.avg``: over every SM of the device, idle ones included."""
    return lambda m: m[name] / m["launch__sm_count"] if name in m and m.get("launch__sm_count") else None


def _achieved_warps(m: Metrics):
    pct = m.get("sm__warps_active.avg.pct_of_peak_sustained_active")
    theo = m.get("sm__maximum_warps_avg_per_active_cycle")
    top = m.get("sm__maximum_warps_per_active_cycle_pct")
    if pct is None or theo is None or not top:
        return None
    max_warps = theo * 100.0 / top  # the SM's warp slots
    return pct / 100.0 * max_warps


def _duration_us(m: Metrics):
    """Elapsed cycles at the machine's clock (``[sm] clock_mhz``), in microseconds."""
    clock = m.get("gpc__cycles_elapsed.avg.per_second")
    return 1e6 * m["gpc__cycles_elapsed.max"] / clock if clock and "gpc__cycles_elapsed.max" in m else None


def sections() -> list[tuple[str, list[tuple[str, str, Value]]]]:
    """The report's layout: (section, [(label, unit, value)])."""
    stall_rows = [(r.replace("_", " ").title().replace("Mio", "MIO").replace("Lg ", "LG "), "cycle/inst",
                   _ratio(STALL_PREFIX + r, "smsp__inst_executed.sum")) for r in STALL_REASONS]
    return [
        ("GPU Speed Of Light Throughput", [
            ("Elapsed Cycles", "cycle", _get("gpc__cycles_elapsed.max")),
            ("Duration", "usecond", _duration_us),
            ("SM Active Cycles", "cycle", _per_sm("sm__cycles_active.sum")),
            ("DRAM Throughput", "%", _get("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
            ("L2 Throughput", "%", _get("lts__throughput.avg.pct_of_peak_sustained_elapsed")),
            ("Tensor Pipe Utilization", "%", _tensor_utilization),
        ]),
        ("Launch Statistics", [
            ("Grid Size", "", _get("launch__grid_size")),
            ("Block Size", "", _get("launch__block_size")),
            ("Threads", "thread", _get("launch__thread_count")),
            ("Registers Per Thread", "register/thread", _get("launch__registers_per_thread")),
            ("Static Shared Memory Per Block", "byte/block", _get("launch__shared_mem_per_block_static")),
            ("Dynamic Shared Memory Per Block", "byte/block", _get("launch__shared_mem_per_block_dynamic")),
            ("# SMs", "SM", _get("launch__sm_count")),
            ("Waves Per SM", "", _get("launch__waves_per_multiprocessor")),
        ]),
        ("Occupancy", [
            ("Block Limit SM", "block", _get("launch__occupancy_limit_blocks")),
            ("Block Limit Registers", "block", _get("launch__occupancy_limit_registers")),
            ("Block Limit Shared Mem", "block", _get("launch__occupancy_limit_shared_mem")),
            ("Block Limit Warps", "block", _get("launch__occupancy_limit_warps")),
            ("Occupancy Limiter", "", _get("launch__occupancy_limit")),
            ("Theoretical Active Warps per SM", "warp", _get("sm__maximum_warps_avg_per_active_cycle")),
            ("Theoretical Occupancy", "%", _get("sm__maximum_warps_per_active_cycle_pct")),
            ("Achieved Occupancy", "%", _get("sm__warps_active.avg.pct_of_peak_sustained_active")),
            ("Achieved Active Warps Per SM", "warp", _achieved_warps),
        ]),
        ("Warp State Statistics", [
            ("Warp Cycles Per Issued Instruction", "cycle", _ratio("smsp__warp_cycles.sum", "smsp__inst_executed.sum")),
            *stall_rows,
        ]),
        ("Memory Workload Analysis", [
            ("Shared Load Wavefronts", "", _get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")),
            ("Shared Load Bank Conflicts", "", _get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")),
            ("Shared Load Wavefronts Per Request", "", _shared_ways("ld")),
            ("Shared Store Wavefronts", "", _get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")),
            ("Shared Store Bank Conflicts", "", _get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")),
            ("Shared Store Wavefronts Per Request", "", _shared_ways("st")),
            ("LDSM Wavefronts Per Request", "", _shared_ways("ldsm")),
            ("Global Load Requests", "", _get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
            ("Global Load Sectors Per Request", "sector", _get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.ratio")),
            ("Global Store Requests", "", _get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
            ("Global Store Sectors Per Request", "sector", _get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.ratio")),
            ("L1 Global Load Hit Rate", "%", _get("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")),
            ("L2 Sectors Read", "sector", _get("lts__t_sectors_srcunit_tex_op_read.sum")),
            ("DRAM Sectors Read", "sector", _get("dram__sectors_read.sum")),
        ]),
        ("Instruction Statistics", [
            ("Executed Instructions", "inst", _get("smsp__inst_executed.sum")),
            ("Executed Ipc Active", "inst/cycle", _get("sm__inst_executed.avg.per_cycle_active")),
        ]),
    ]


def _fmt(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(v):,}"


def format_report(stats, advise: bool = False) -> str:
    """The launch ``stats`` (a :class:`~xcc.sim.isa.emulator.LaunchStats`) as ncu's text report.  Its Advisor
    section names the rules that trigger; ``advise``: with their estimates measured (a replay of the launch per
    what-if; without it, ``x ?`` and a hint, unless the launch already measured them)."""
    m = stats.metrics
    lines = [f"  {stats.kernel} ({', '.join(map(str, stats.grid))})x({', '.join(map(str, stats.block))})"]
    if stats.cycles is None or not m:
        lines.append(f"    (no cycle model: {stats.warp_instructions:,} warp instructions, "
                     f"{stats.thread_instructions:,} thread instructions)")
        return "\n".join(lines)
    sampled, total = m.get("xcc__sampled_ctas"), m.get("xcc__total_ctas")
    rule = f"    {'-' * 40} {'-' * 15} {'-' * 14}"
    for title, rows in sections():
        shown = [(label, unit, v) for label, unit, f in rows if (v := f(m)) is not None]
        if not shown:
            continue
        lines += ["", f"    Section: {title}", rule, f"    {'Metric Name':<40} {'Metric Unit':>15} {'Metric Value':>14}",
                  rule]
        lines += [f"    {label:<40} {unit:>15} {_fmt(v):>14}" for label, unit, v in shown]
        lines.append(rule)
    mix = sorted(((k.removeprefix("sm__inst_executed_pipe_").removesuffix(".sum"), v) for k, v in m.items()
                  if k.startswith("sm__inst_executed_pipe_") and k.endswith(".sum") and v), key=lambda kv: (-kv[1], kv[0]))
    issued = m.get("smsp__inst_executed.sum") or 1
    if mix:
        lines += ["", "    Instruction mix by pipe (sm__inst_executed_pipe_*):"]
        lines += [f"      {p:<12} {n:>12,}  {100 * n / issued:5.1f}%" for p, n in mix]
    if stats.instructions_executed:  # Nsight's sass__inst_executed_per_opcode, over the whole launch
        ops = sorted(stats.instructions_executed.items(), key=lambda kv: (-kv[1], kv[0]))
        lines += ["", "    Executed instruction mix by opcode (warp instructions, whole launch):"]
        lines += [f"      {op:<12} {n:>12,}  {100 * n / stats.warp_instructions:5.1f}%" for op, n in ops[:_TOP_OPCODES]]
        if len(ops) > _TOP_OPCODES:
            rest = sum(n for _, n in ops[_TOP_OPCODES:])
            lines.append(f"      {'(others)':<12} {rest:>12,}  {100 * rest / stats.warp_instructions:5.1f}%")
    if sampled is not None and total is not None and sampled < total:
        lines += ["", f"    (timed {sampled} of {total} CTAs; cycles extrapolated)"]
    if getattr(stats, "timed", None) is not None:  # the advisor's findings (xcc.sim.perf.advisor)
        from xcc.sim.perf.advisor import advise as rules
        from xcc.sim.perf.advisor import format_findings

        found = rules(stats, measure=advise)
        lines += ["", "    Section: Advisor", "    " + format_findings(found).replace("\n", "\n    ")]
        if any(math.isnan(f.estimated_speedup) for f in found):
            lines.append("    (x ?: not measured; xcc advise, xcc run --stats --advise or LaunchStats.advise() "
                         "replays the launch per finding to measure the speedups)")
    return "\n".join(lines)
