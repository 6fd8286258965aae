"""The cycle model's statistics under Nsight Compute's metric names.

Stall reasons are counted for every resident warp in every cycle (Nsight's PC sampling at every cycle), so
they sum to the warp-cycles of the launch; a warp's waiting time before an issue is attributed, in order, to
``wait`` (stall count), the scoreboard (``long_scoreboard`` for global/local memory, else
``short_scoreboard``), ``barrier``, the throttles (``mio_throttle``, ``lg_throttle``,
``math_pipe_throttle``), and ``not_selected``; the issue cycle is ``selected``
(:mod:`xcc.sim.perf.replay`).  Memory traffic (:mod:`xcc.sim.perf.memsys`):
``lts__t_sectors_srcunit_tex_op_read/write.sum`` (L2 sectors from the SMs; ``_lookup_hit`` /
``_lookup_miss`` for reads), ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit/miss.sum`` and
``l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct`` (the L1's cacheable reads),
``dram__sectors_read/write.sum`` and ``dram__bytes_read/write.sum``, ``dram__throughput`` and
``lts__throughput`` ``.avg.pct_of_peak_sustained_elapsed`` (busy cycles of the queue over the recorded
cycles, at most 100).  Tensor cores: ``sm__inst_executed_pipe_tensor_op_{hmma,imma,gmma}.sum`` and
``sm__pipe_tensor_op_{hmma,imma,gmma}_cycles_active.avg.pct_of_peak_sustained_active`` (cycles the
sub-partitions' tensor pipes are held, over SM active cycles x sub-partitions).  Names from the Nsight
Compute Profiling Guide ("Metrics Reference", "Warp Scheduler States").

``xcc__`` metrics are the model's own: ``xcc__pc_samples`` (per pc, the warp-cycles by reason, for the
hot-spot view :mod:`xcc.sim.perf.hotspots`), ``xcc__sampled_ctas`` and ``xcc__total_ctas`` (cycles of the
recorded CTAs are scaled by ``total / sampled``), ``xcc__cta_residency`` (per recorded CTA: SM, slot, first and
last cycle; the per-SM residency of a timeline, :mod:`xcc.runtime.timeline`).
"""

from __future__ import annotations

import math

from xcc.sim.perf.facts import GLOBAL_OPS, SHARED_OPS, TENSOR_KINDS

__all__ = ["STALL_REASONS", "STALL_PREFIX", "REASON_INDEX", "launch_metrics"]

STALL_REASONS = ("selected", "not_selected", "wait", "long_scoreboard", "short_scoreboard", "barrier",
                 "mio_throttle", "lg_throttle", "math_pipe_throttle")
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
REASON_INDEX = {r: i for i, r in enumerate(STALL_REASONS)}


def launch_metrics(rp, total_ctas: int) -> tuple[int, dict]:
    """(cycles, metrics) of the finished replay ``rp`` (a :class:`xcc.sim.perf.replay.Replay`) of a launch
    of ``total_ctas`` CTAs."""
    mem = rp.mem
    cycles = max(rp.t_end, math.ceil(mem.drained()))  # ... and the device-wide queues have drained the stores
    nctas = rp.nctas
    scale = total_ctas / nctas if nctas else 0.0
    active = sum(rp.sm_active)
    issued = rp.stall["selected"]
    m: dict[str, float | int] = {}
    m["gpc__cycles_elapsed.max"] = round(cycles * scale) if nctas else 0
    m["sm__cycles_active.sum"] = active
    m["smsp__inst_executed.sum"] = issued
    m["sm__inst_executed.avg.per_cycle_active"] = issued / active if active else 0.0
    m["sm__warps_active.avg.pct_of_peak_sustained_active"] = (
        100.0 * rp.warp_cycles / (active * rp.occ.max_warps_per_sm) if active else 0.0)
    m["sm__maximum_warps_per_active_cycle_pct"] = 100.0 * rp.occ.fraction
    m["launch__occupancy_limit"] = rp.occ.limiter
    m["smsp__warp_cycles.sum"] = rp.warp_cycles
    for k in STALL_REASONS:
        m[STALL_PREFIX + k] = rp.stall[k]
    _request_metrics(m, mem)
    for p in sorted(rp.pipe_insts):
        m[f"sm__inst_executed_pipe_{p}.sum"] = rp.pipe_insts[p]
    _cache_metrics(m, mem, cycles)
    for kind in TENSOR_KINDS:
        m[f"sm__inst_executed_pipe_tensor_op_{kind}.sum"] = rp.tensor_n[kind]
        m[f"sm__pipe_tensor_op_{kind}_cycles_active.avg.pct_of_peak_sustained_active"] = (
            100.0 * rp.tensor_busy[kind] / (active * rp.nsub) if active else 0.0)
    # the stall samples of each instruction (the pc a waiting warp will issue next), for hot-spot views:
    # rows [pc, selected, not_selected, wait, ...] in STALL_REASONS order, for every pc that issued
    m["xcc__pc_samples"] = [[pc, *row] for pc, row in enumerate(rp.pc_samples) if row[0]]
    m["xcc__sampled_ctas"] = nctas
    # per CTA: [cta, SM, slot, start cycle, end cycle], the per-SM residency of the timeline (xcc.runtime.timeline)
    m["xcc__cta_residency"] = [[c, rp.cta_sm[c], rp.cta_slot[c], rp.cta_start[c], rp.cta_end[c]] for c in range(nctas)]
    m["xcc__total_ctas"] = total_ctas
    return int(m["gpc__cycles_elapsed.max"]), m


def _request_metrics(m: dict, mem) -> None:
    """The shared-memory wavefronts and global requests and sectors of the memory system ``mem``."""
    for op in SHARED_OPS:
        req, wave = mem.conf[op]
        m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] = wave
        m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] = wave - req
    for op in GLOBAL_OPS:
        req, sec = mem.glob[op]
        m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] = req
        m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] = sec
        m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.ratio"] = sec / req if req else 0.0


def _cache_metrics(m: dict, mem, cycles: int) -> None:
    """The L1, L2 and DRAM traffic of the memory system ``mem`` over ``cycles`` recorded cycles."""
    hit, miss = mem.l1_hit
    m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] = hit
    m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"] = miss
    m["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"] = 100.0 * hit / (hit + miss) if hit + miss else 0.0
    rd, rd_miss, wr, wr_dram = mem.l2_sec
    m["lts__t_sectors_srcunit_tex_op_read.sum"] = rd
    m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] = rd - rd_miss
    m["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"] = rd_miss
    m["lts__t_sectors_srcunit_tex_op_write.sum"] = wr
    m["dram__sectors_read.sum"] = rd_miss
    m["dram__sectors_write.sum"] = wr_dram
    m["dram__bytes_read.sum"] = rd_miss * mem.sector_bytes
    m["dram__bytes_write.sum"] = wr_dram * mem.sector_bytes
    # busy cycles of the device-wide queues over the recorded cycles
    for name, busy in (("dram__throughput", (rd_miss + wr_dram) / mem.dram_rate),
                       ("lts__throughput", (rd + wr) / mem.l2_rate)):
        m[f"{name}.avg.pct_of_peak_sustained_elapsed"] = min(100.0, 100.0 * busy / cycles) if cycles else 0.0
