"""The cycle model on a real kernel: nvcc's shared-memory transpose with and without padding.

``examples/transpose_shared.cu`` has two entries built from one template: a ``32 x 33`` tile (the
column read spreads over the 32 banks) and a ``32 x 32`` tile (a column of 32 words falls in one bank:
a 32-way conflict).  Each CTA issues 32 column loads (8 warps x 4), so the unpadded tile costs
``32 * 31`` extra wavefronts per CTA, and the shared-memory unit (one wavefront per cycle per SM) is
busy that much longer.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from harness import modified_description, run_case
from kernel_cases import CASES

from xcc import runtime as rt

PTX = Path(__file__).resolve().parents[1] / "examples" / "transpose_shared.sm_80.ptx"
PADDED = "_Z16transpose_sharediiPKfPf"
UNPADDED = "_Z25transpose_shared_unpaddediiPKfPf"
LOADS_PER_CTA = 32  # 8 warps x 4 unrolled column reads
LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"


def transpose(entry: str, n: int = 256, machine: str | Path = "xg1"):
    """Transpose an ``n x n`` matrix (``(n/32)^2`` CTAs, at most one per SM for n <= 256), check it."""
    device = rt.Device(machine=str(machine))
    fn = rt.load_module(PTX, device=device).get_function(entry)
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    d_in, d_out = rt.to_device(a.ravel(), device), rt.to_device(np.zeros(n * n, np.float32), device)
    stats = fn.launch((n // 32, n // 32), (32, 8), [np.int32(n), np.int32(n), d_in, d_out])
    assert np.array_equal(d_out.copy_to_host().reshape(n, n), a.T)
    return stats


def machine_with(tmp_path: Path, old: str, new: str) -> str:
    return modified_description(tmp_path, "xg1_mod", {old: new})


@pytest.fixture(scope="module")
def base():
    return {entry: transpose(entry) for entry in (PADDED, UNPADDED)}


def test_padding_removes_the_32_way_conflict(base):
    ctas = 64
    padded, unpadded = base[PADDED].metrics, base[UNPADDED].metrics
    assert padded[LD] == ctas * LOADS_PER_CTA and padded[LD_CONFLICTS] == 0
    assert unpadded[LD] == 32 * ctas * LOADS_PER_CTA  # every column read: 32 wavefronts
    assert unpadded[LD_CONFLICTS] == 31 * ctas * LOADS_PER_CTA
    assert padded[ST_CONFLICTS] == unpadded[ST_CONFLICTS] == 0  # rows are written: no conflict either way


def test_conflict_cycles_match_the_extra_wavefronts(base):
    """One CTA per SM: the extra wavefronts of one CTA serialise on its SM's shared-memory unit, so
    the launch takes about that many cycles more (a little less: the first loads overlap the
    global-memory phase)."""
    extra = 31 * LOADS_PER_CTA
    diff = base[UNPADDED].cycles - base[PADDED].cycles
    assert 0.8 * extra <= diff <= 1.05 * extra, (diff, extra)
    m = base[UNPADDED].metrics
    assert m["smsp__pcsamp_warps_issue_stalled_mio_throttle"] > base[PADDED].metrics[
        "smsp__pcsamp_warps_issue_stalled_mio_throttle"]


def test_64_banks_halve_the_unpadded_conflict(base, tmp_path):
    """With 64 banks a 32-word column (stride 32 words) spans 2 banks: 16-way, not 32-way."""
    path = machine_with(tmp_path, "banks = 32", "banks = 64")
    wide = {entry: transpose(entry, machine=path) for entry in (PADDED, UNPADDED)}
    assert wide[UNPADDED].metrics[LD] == 16 * 64 * LOADS_PER_CTA
    assert wide[PADDED].cycles == base[PADDED].cycles  # no conflict to remove: nothing changes
    assert base[PADDED].cycles < wide[UNPADDED].cycles < base[UNPADDED].cycles
    # the cycles saved follow the wavefronts saved (16 per load), as for the 32-bank case
    saved = base[UNPADDED].cycles - wide[UNPADDED].cycles
    assert 0.8 * 16 * LOADS_PER_CTA <= saved <= 1.05 * 16 * LOADS_PER_CTA, saved


def test_slower_shared_memory_costs_both_versions(base, tmp_path):
    path = machine_with(tmp_path, "lsu = 32 ", "lsu = 64 ")
    for entry in (PADDED, UNPADDED):
        assert transpose(entry, machine=path).cycles > base[entry].cycles


def test_launch_statistics_and_occupancy_limits(base):
    """The launch carries Nsight's *Launch Statistics* and per-resource block limits, consistent with the
    occupancy query (``fn.occupancy``, CUDA's cudaOccupancyMaxActiveBlocksPerMultiprocessor)."""
    device = rt.Device()
    fn = rt.load_module(PTX, device=device).get_function(UNPADDED)
    occ = fn.occupancy(256)
    m = base[UNPADDED].metrics
    assert (m["launch__grid_size"], m["launch__block_size"], m["launch__thread_count"]) == (64, 256, 64 * 256)
    assert m["launch__shared_mem_per_block_static"] == 32 * 32 * 4
    assert m["launch__registers_per_thread"] == fn.num_regs
    limits = [m[f"launch__occupancy_limit_{r}"] for r in ("blocks", "warps", "registers", "shared_mem")]
    assert min(limits) == occ.ctas_per_sm == 8  # 64 warp slots / 8 warps
    assert m["launch__occupancy_limit_warps"] == 8 and m["launch__occupancy_limit_shared_mem"] == 32  # max CTAs
    assert m["sm__maximum_warps_avg_per_active_cycle"] == occ.warps_per_sm == 64


def test_report_shows_the_metrics_it_names(base):
    stats = base[UNPADDED]
    m = stats.metrics
    text = stats.report()
    per_inst = m["smsp__warp_cycles.sum"] / m["smsp__inst_executed.sum"]
    assert f"{per_inst:,.2f}" in text
    assert f"{m['gpc__cycles_elapsed.max']:,}" in text
    us = m["gpc__cycles_elapsed.max"] / rt.Device().machine.data["sm"]["clock_mhz"]
    assert f"{us:,.2f}" in text
    for line in text.splitlines():  # every stall row, in cycles per issued instruction
        if line.strip().startswith("MIO Throttle"):
            assert float(line.split()[-1]) == round(
                m["smsp__pcsamp_warps_issue_stalled_mio_throttle"] / m["smsp__inst_executed.sum"], 2)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])  # every case compiles for xg1
def test_functional_mode_gives_the_timed_results(case):
    """``timing=False`` executes exactly what the timed mode does: the same outputs bit for bit (float
    atomics included: both modes run warps in the same order) and the same instruction counts."""
    timed, got_timed, _ = run_case(case, case.default_arch, 3)
    functional, got_functional, _ = run_case(case, case.default_arch, 3, timing=False)
    assert functional.cycles is None and timed.cycles > 0
    assert (functional.warp_instructions, functional.thread_instructions) == (
        timed.warp_instructions, timed.thread_instructions)
    assert functional.instructions_executed == timed.instructions_executed
    for i, arr in got_timed.items():
        assert arr.tobytes() == got_functional[i].tobytes(), f"{case.name} arg {i}"


@pytest.mark.parametrize("old,new,key", [
    ('scheduler = "gto"', 'scheduler = "fifo"', "[sm] scheduler"),
    ("banks = 32", "banks = 0", "[shared_memory] banks"),
    ("banks = 32", 'banks = "32"', "[shared_memory] banks"),
    ("max_warps = 64", "max_warps = 64.5", "[limits] max_warps"),
    ("lsu = 32 ", "lsu = -1 ", "[latency] lsu"),
    ("\nfma = 1.0", "\nfma = 0", "[issue] fma"),
])
def test_a_bad_figure_in_a_description_is_named(tmp_path, old, new, key):
    from xcc.backend.machine import load_machine
    from xcc.diagnostics import XccError

    with pytest.raises(XccError, match=re.escape(key)):
        load_machine(machine_with(tmp_path, old, new))


# ------------------------------------------------------------------------------ the L1 data cache
RELOAD = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry reload(.param .u64 buf, .param .u32 store)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [buf];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r2, [store];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.CACHE.f32 %f1, [%rd3];
  setp.ne.u32 %p1, %r2, 0;
  @%p1 st.global.f32 [%rd3+4096], %f1;
  @%p1 st.global.f32 [%rd3], %f1;
  ld.global.CACHE.f32 %f2, [%rd3];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd3+8192], %f3;
  ret;
}
"""


@pytest.mark.parametrize("cache,store,hits", [("ca", 0, 4), ("ca", 1, 0), ("cg", 0, 0), ("cv", 0, 0)])
def test_l1_serves_a_reload_unless_bypassed_or_written(cache, store, hits):
    """One warp reads 4 sectors twice: the second read hits in the SM's L1 (4 sector hits), unless the
    loads bypass it (.cg, .cv) or the warp wrote those sectors in between (write-through invalidates)."""
    device = rt.Device()
    fn = rt.load_module(RELOAD.replace("CACHE", cache), device=device).get_function("reload")
    buf = rt.to_device(np.arange(3 * 1024, dtype=np.float32), device)
    m = fn.launch(1, 32, [buf, np.uint32(store)]).metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] == hits
    cached_reads = 8 if cache == "ca" else 0
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"] == cached_reads - hits
    assert m["lts__t_sectors_srcunit_tex_op_read.sum"] == 8 - hits  # what the L1 does not serve, the L2 does


def test_l1_capacity_is_the_unified_array_less_the_shared_carveout():
    from xcc.sim.perf.timing import l1_capacity_sectors

    machine = rt.Device().machine
    fn = rt.load_module(PTX).get_function(PADDED)  # 4224 bytes of shared memory per CTA
    kib = 1024 // 32  # sectors per KiB
    assert l1_capacity_sectors(machine, fn.kernel, 1) == (256 - 8) * kib  # the 8 KiB carveout holds 4.1 KiB
    assert l1_capacity_sectors(machine, fn.kernel, 8) == (256 - 64) * kib  # 33 KiB -> the 64 KiB carveout
    assert l1_capacity_sectors(machine, fn.kernel, 1, dynamic_shared=120 * 1024) == (256 - 132) * kib
