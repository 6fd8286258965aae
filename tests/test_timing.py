"""The cycle model (xcc.sim.perf.timing): properties that any sound model of the machine description must have."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from harness import modified_description
from kernel_cases import CASES, case_params, ptx_path

from xcc import runtime as rt
from xcc.backend.machine import MACHINES_DIR
from xcc.sim.perf.timing import STALL_PREFIX, STALL_REASONS

# the cases the backend compiles (kernel_cases marks the IR-only ones with engines=("ir",))
ISA_CASES = [c for c in CASES if "isa" in getattr(c, "engines", ("isa",))]

SMEM_STRIDE = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry smem_stride(.param .u64 out, .param .u32 stride)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[1024];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [stride];
  mul.lo.u32 %r3, %r1, %r2;
  and.b32 %r3, %r3, 1023;
  shl.b32 %r4, %r3, 2;
  mov.u32 %r5, buf;
  add.u32 %r6, %r5, %r4;
  st.shared.u32 [%r6], %r1;
  bar.sync 0;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r7;
  ret;
}
"""

GLOBAL_STRIDE = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry gload(.param .u64 src, .param .u64 dst, .param .u32 stride)
{
  .reg .b32 %r<6>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %ntid.x;
  mad.lo.u32 %r1, %r4, %r5, %r1;
  ld.param.u32 %r2, [stride];
  mul.lo.u32 %r3, %r1, %r2;
  ld.param.u64 %rd1, [src];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r3, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  ld.param.u64 %rd4, [dst];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd6, %rd4, %rd5;
  st.global.f32 [%rd6], %f1;
  ret;
}
"""


def ffma_chain(n: int) -> str:
    body = "\n".join("  fma.rn.f32 %f1, %f1, %f2, %f3;" for _ in range(n))
    return f"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 dst, .param .f32 a, .param .f32 b)
{{
  .reg .b32 %r<2>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
  ld.param.f32 %f2, [a];
  ld.param.f32 %f3, [b];
{body}
  ld.param.u64 %rd1, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f1;
  ret;
}}
"""


def launch(src: str, name: str, grid, block, args, device=None):
    device = device or rt.Device()
    fn = rt.load_module(src, device=device).get_function(name)
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    return fn.launch(grid, block, dev)


def smem(stride: int):
    return launch(SMEM_STRIDE, "smem_stride", 1, 32, [np.zeros(32, np.uint32), np.uint32(stride)]).metrics


@pytest.mark.parametrize("stride,ways", [(1, 1), (2, 2), (4, 4), (32, 32), (33, 1)])
def test_shared_bank_conflicts(stride, ways):
    m = smem(stride)
    for op in ("ld", "st"):
        assert m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] == ways
        assert m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] == ways - 1  # extra wavefronts


def test_bank_conflicts_cost_cycles():
    fast = launch(SMEM_STRIDE, "smem_stride", 1, 32, [np.zeros(32, np.uint32), np.uint32(1)])
    slow = launch(SMEM_STRIDE, "smem_stride", 1, 32, [np.zeros(32, np.uint32), np.uint32(32)])
    assert slow.cycles >= fast.cycles + 31  # at least the 31 extra wavefronts of the load


def gload(stride: int, device=None, grid=1):
    n = 32 * grid
    src = np.arange(n * stride, dtype=np.float32)
    return launch(GLOBAL_STRIDE, "gload", grid, 32, [src, np.zeros(n, np.float32), np.uint32(stride)], device)


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (8, 32), (32, 32)])
def test_sectors_per_request(stride, sectors):
    m = gload(stride).metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sectors
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.ratio"] == sectors
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.ratio"] == 4


def test_dependent_ffma_chain_takes_n_times_latency():
    lat = rt.Device().machine.latency("fma")
    out = np.zeros(32, np.float32)
    c64 = launch(ffma_chain(64), "chain", 1, 32, [out, np.float32(1.0), np.float32(0.5)]).cycles
    c192 = launch(ffma_chain(192), "chain", 1, 32, [out, np.float32(1.0), np.float32(0.5)]).cycles
    assert abs((c192 - c64) - 128 * lat) <= 0.05 * 128 * lat


def test_more_warps_hide_latency():
    subs = int(rt.Device().machine.data["sm"]["subpartitions"])
    cycles = {}
    for warps in (1, subs, 2 * subs):
        out = np.zeros(32 * warps, np.float32)
        cycles[warps] = launch(ffma_chain(128), "chain", 1, 32 * warps,
                               [out, np.float32(1.0), np.float32(0.5)]).cycles
    assert cycles[subs] < 1.1 * cycles[1]  # one warp per scheduler: all in parallel
    assert cycles[2 * subs] < 1.5 * cycles[1]  # two per scheduler: the FFMA latency is hidden


def test_cycles_are_deterministic():
    a, b = gload(4, grid=8), gload(4, grid=8)
    assert a.cycles == b.cycles and a.metrics == b.metrics


def test_bigger_dram_latency_costs_cycles(tmp_path: Path):
    text = (MACHINES_DIR / "xg1.toml").read_text()
    assert "dram = 650" in text
    slow = tmp_path / "slow.toml"
    slow.write_text(text.replace("dram = 650", "dram = 2000"))
    base = gload(32, grid=4).cycles
    more = gload(32, device=rt.Device(machine=str(slow)), grid=4).cycles
    assert more >= base + 2000 - 650


def test_timing_off_gives_same_results_and_no_cycles():
    device = rt.Device()
    fn = rt.load_module(GLOBAL_STRIDE, device=device).get_function("gload")
    src = rt.to_device(np.arange(64 * 3, dtype=np.float32), device)
    outs = []
    for timing in (True, False):
        dst = rt.to_device(np.zeros(64, np.float32), device)
        st = fn.launch(2, 32, [src, dst, np.uint32(3)], timing=timing)
        outs.append((dst.copy_to_host(), st))
    assert np.array_equal(outs[0][0], outs[1][0])
    assert outs[0][1].warp_instructions == outs[1][1].warp_instructions
    assert outs[1][1].cycles is None and not outs[1][1].metrics


@pytest.mark.parametrize("case", case_params(ISA_CASES, "default"))
def test_every_kernel_case_has_cycles_and_a_full_stall_breakdown(case):
    launch_ = case.make(np.random.default_rng(0))
    device = rt.Device()
    fn = rt.load_module(ptx_path(case, case.default_arch), device=device).get_function(case.entry)
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch_.args]
    stats = fn.launch(launch_.grid, launch_.block, args, case.shared_mem)
    m = stats.metrics
    assert stats.cycles > 0
    assert sum(m[STALL_PREFIX + r] for r in STALL_REASONS) == m["smsp__warp_cycles.sum"]
    assert m[STALL_PREFIX + "selected"] == stats.warp_instructions  # every instruction timed (no sampling here)
    assert 0 < stats.ipc <= int(device.machine.data["sm"]["subpartitions"])
    assert 0 < m["sm__warps_active.avg.pct_of_peak_sustained_active"] <= 100


# One warp: lane l copies 16 bytes from src + l * gstride into shared[16 l] (cp.async, one group, waited on
# with wait_group 0), then ldmatrix .x4 reads four 8x8 b16 matrices whose rows are `rstride` bytes apart
# (lane l gives row l: matrix l / 8), and every lane stores its 4 registers.
LDSM_CP = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry ldsm_cp(.param .u64 src, .param .u64 dst, .param .u32 gstride, .param .u32 rstride)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .shared .align 16 .b8 buf[5120];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [src];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r2, [gstride];
  mul.wide.u32 %rd2, %r1, %r2;
  add.u64 %rd3, %rd1, %rd2;
  mov.u32 %r3, buf;
  shl.b32 %r4, %r1, 4;
  add.u32 %r5, %r3, %r4;
  cp.async.ca.shared.global [%r5], [%rd3], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  ld.param.u32 %r6, [rstride];
  mul.lo.u32 %r7, %r1, %r6;
  add.u32 %r8, %r3, %r7;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r9, %r10, %r11, %r12}, [%r8];
  ld.param.u64 %rd4, [dst];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r1, 16;
  add.u64 %rd6, %rd4, %rd5;
  st.global.v4.u32 [%rd6], {%r9, %r10, %r11, %r12};
  ret;
}
"""


def ldsm_cp(gstride: int, rstride: int, device=None):
    src = np.arange(32 * max(gstride, 16) // 4, dtype=np.uint32)
    out = np.zeros(32 * 4, np.uint32)
    return launch(LDSM_CP, "ldsm_cp", 1, 32, [src, out, np.uint32(gstride), np.uint32(rstride)], device)


@pytest.mark.parametrize("rstride,ways", [(16, 1), (128, 8), (144, 1), (64, 4)])
def test_ldsm_bank_conflicts(rstride, ways):
    """Each LDSM (one matrix: 8 rows of 16 bytes) takes as many wavefronts as its rows put distinct words in
    one bank: rows 128 bytes apart all start in bank 0 (8-way), 16 bytes of padding (144) spread them."""
    m = ldsm_cp(16, rstride).metrics
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"] == 4 * ways  # .x4: 4 LDSM
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"] == 4 * (ways - 1)
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 0  # not counted as LDS


def test_ldsm_bank_conflicts_cost_cycles():
    fast, slow = ldsm_cp(16, 16).cycles, ldsm_cp(16, 128).cycles
    assert slow >= fast + 7  # the last matrix's 7 extra wavefronts at least


@pytest.mark.parametrize("gstride,sectors", [(16, 16), (32, 32), (64, 32)])
def test_ldgsts_sectors_and_depbar_waits_for_the_copy(gstride, sectors):
    """LDGSTS reads its 16 bytes per lane from global memory at operand c: 16 sectors for 512 contiguous
    bytes, 32 when every lane's 16 bytes have a sector of their own. The instruction after DEPBAR waits for
    the copy, a first touch of its sectors (DRAM)."""
    dev = rt.Device()
    st = ldsm_cp(gstride, 16, dev)
    m = st.metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"] == sectors
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 0
    assert st.cycles >= dev.machine.latency("dram")
    assert m[STALL_PREFIX + "long_scoreboard"] >= dev.machine.latency("dram") - 10


# ------------------------------------------------------------------ tensor cores per input type
MICROBENCH = Path(__file__).resolve().parent.parent / "examples" / "microbench.sm_80.ptx"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import microbench  # noqa: E402  (bench/microbench.py: the microbenchmarks compiled as written)

F16X2, S8X4 = np.uint32(0x24002400), np.uint32(0x01010101)  # the microbenchmarks' mma fragments


def streams(machine: str, kernel: str):
    """One CTA of 32 warps of ``kernel`` from examples/microbench.cu (its independent streams, 16 rounds)."""
    device = rt.Device(machine=machine)
    fn = microbench.load(MICROBENCH, device).get_function(kernel)
    if kernel.startswith("hmma"):
        args = [rt.zeros(1024, np.float32, device), F16X2, F16X2]
    elif kernel.startswith("imma"):
        args = [rt.zeros(1024, np.int32, device), S8X4, S8X4]
    else:
        args = [rt.zeros(1024, np.float32, device), np.float32(1.0001), np.float32(0.5)]
    return fn.launch(1, 1024, args)


def matrix_case(machine: str, name: str):
    case = next(c for c in CASES if c.name == name)
    launch_ = case.make(np.random.default_rng(0))
    device = rt.Device(machine=machine)
    fn = rt.load_module(ptx_path(case, case.default_arch), device=device).get_function(case.entry)
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch_.args]
    return fn.launch(launch_.grid, launch_.block, args, case.shared_mem)


HMMA_UTIL = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"


def test_doubling_fp16_tensor_throughput_speeds_up_fp16_kernels_only(tmp_path: Path):
    """[tensor] f16 4096 -> 8192 ops per cycle per SM: the HMMA kernel (tensor-bound, 32 warps) gets faster,
    the IMMA kernel (int8, [tensor] i8) and an FFMA kernel keep their cycles; the example GEMM (one warp
    per tile, latency-bound) is no slower and holds its tensor pipes half as long."""
    fast = modified_description(tmp_path, "fast_f16", {"\nf16 = 4096 ": "\nf16 = 8192 "})
    base, quick = streams("xg1", "hmma_streams_16"), streams(fast, "hmma_streams_16")
    assert base.metrics["sm__inst_executed_pipe_tensor_op_hmma.sum"] == quick.metrics[
        "sm__inst_executed_pipe_tensor_op_hmma.sum"] == base.instructions_executed["HMMA.16816.F32"] > 0
    assert quick.cycles < 0.8 * base.cycles, (base.cycles, quick.cycles)
    for kernel in ("imma_streams_16", "ffma_streams_16"):
        assert streams(fast, kernel).cycles == streams("xg1", kernel).cycles, kernel
    g0, g1 = matrix_case("xg1", "gemm_mma_m16n8k16"), matrix_case(fast, "gemm_mma_m16n8k16")
    assert g1.cycles <= g0.cycles
    assert g0.metrics[HMMA_UTIL] > 0 and abs(g1.metrics[HMMA_UTIL] - g0.metrics[HMMA_UTIL] / 2) < 1e-9


def test_tensor_pipe_metrics():
    """Instruction counts per tensor op kind, and the utilisation: each HMMA.16816 holds its sub-partition's
    pipe 2048 / (4096 / 4) = 2 cycles, over SM active cycles x 4 sub-partitions."""
    st = streams("xg1", "hmma_streams_16")
    m = st.metrics
    n = st.instructions_executed["HMMA.16816.F32"]
    assert m["sm__inst_executed_pipe_tensor_op_hmma.sum"] == m["sm__inst_executed_pipe_tensor.sum"] == n
    assert m["sm__inst_executed_pipe_tensor_op_imma.sum"] == m["sm__inst_executed_pipe_tensor_op_gmma.sum"] == 0
    assert m[HMMA_UTIL] == pytest.approx(100.0 * 2 * n / (m["sm__cycles_active.sum"] * 4))
    assert 50 < m[HMMA_UTIL] <= 100  # tensor-bound, one SM
    s8 = streams("xg1", "imma_streams_16").metrics
    assert s8["sm__inst_executed_pipe_tensor_op_imma.sum"] > 0 == s8["sm__inst_executed_pipe_tensor_op_hmma.sum"]


def test_a_description_without_tensor_rates_falls_back_to_issue_tensor(tmp_path: Path):
    """An older description (no [tensor] table, ``[issue] tensor = 0.5`` HMMA/IMMA per cycle per
    sub-partition) times HMMA.16816 and IMMA.16832 as xg1's 4096 f16 / 8192 i8 ops per cycle per SM do."""
    text = (MACHINES_DIR / "xg1.toml").read_text()
    head, rest = text.split("\n[tensor]", 1)
    _, more, tail = rest.partition("\n[")  # the tables after [tensor] stay
    old = tmp_path / "old.toml"
    old.write_text(head.replace("\nadu = 0.5\n", "\nadu = 0.5\ntensor = 0.5\n") + ("\n[" + tail if more else ""))
    for kernel in ("hmma_streams_16", "imma_streams_16"):
        assert streams(str(old), kernel).cycles == streams("xg1", kernel).cycles, kernel


# ------------------------------------------------------------------ L2 and DRAM bandwidth
def dram_stream(machine: str, per_sm: int = 1):
    device = rt.Device(machine=machine)
    nsm = int(device.machine.data["sm"]["count"])
    n = nsm * per_sm * 256
    fn = microbench.load(MICROBENCH, device).get_function("dram_stream")
    return fn.launch(nsm * per_sm, 256, [rt.to_device(np.ones(32 * n, np.float32), device),
                                         rt.zeros(n, np.float32, device)])


def test_l2_and_dram_traffic_metrics():
    """4 CTAs of 32 threads reading in[32 i] (one sector per thread, every one a first touch) and storing
    contiguously: read sectors all miss, and go to DRAM; the stores write 4 fresh sectors per warp."""
    m = gload(8, grid=4).metrics
    assert m["lts__t_sectors_srcunit_tex_op_read.sum"] == m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 128
    assert m["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"] == m["dram__sectors_read.sum"] == 128
    assert m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] == 0
    assert m["lts__t_sectors_srcunit_tex_op_write.sum"] == m["dram__sectors_write.sum"] == 16
    assert m["dram__bytes_read.sum"] == 128 * 32 and m["dram__bytes_write.sum"] == 16 * 32
    assert 0 < m["dram__throughput.avg.pct_of_peak_sustained_elapsed"] < 1  # 144 sectors in ~1000 cycles
    assert 0 < m["lts__throughput.avg.pct_of_peak_sustained_elapsed"] < 1


def test_dram_bandwidth_bounds_a_streaming_kernel_but_not_a_small_one(tmp_path: Path):
    """Every SM streaming first-touched sectors is DRAM-bound: at half the DRAM bandwidth it takes about
    the extra transfer time, waiting on long scoreboards (lg_throttle, the per-SM L1, barely moves), and
    reports DRAM busy most of the time. A 4-CTA kernel is not: the bandwidth is device-wide, so its cycles
    are those of a description with no bandwidth limit, but for its own sectors' transfer time."""
    half = modified_description(tmp_path, "half_dram", {"dram_bytes_per_cycle = 1909 ": "dram_bytes_per_cycle = 954.5 "})
    a, b = dram_stream("xg1"), dram_stream(half)
    ma, mb = a.metrics, b.metrics
    sectors = ma["dram__sectors_read.sum"]
    assert sectors == mb["dram__sectors_read.sum"] == 132 * 256 * 8 * 16 // 32  # 8 x 16 B per thread
    extra = sectors * 32 / 954.5 - sectors * 32 / 1909
    assert abs((b.cycles - a.cycles) - extra) < 0.05 * extra, (a.cycles, b.cycles, extra)
    ls = STALL_PREFIX + "long_scoreboard"
    assert mb[ls] - ma[ls] > 0.9 * (mb["smsp__warp_cycles.sum"] - ma["smsp__warp_cycles.sum"])
    assert ma["dram__throughput.avg.pct_of_peak_sustained_elapsed"] > 70
    unlimited = tmp_path / "unlimited.toml"
    unlimited.write_text("\n".join(line for line in (MACHINES_DIR / "xg1.toml").read_text().splitlines()
                                   if "_bytes_per_cycle" not in line))
    small = gload(8, grid=4)  # 4 warps on 4 SMs, each loading 32 first-touched sectors in the same cycle
    free = gload(8, device=rt.Device(machine=str(unlimited)), grid=4)
    assert 0 <= small.cycles - free.cycles <= 128 * 32 / 1909  # at most the DRAM time of all 128 sectors
