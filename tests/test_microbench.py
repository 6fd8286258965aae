"""Validation of the cycle model by microbenchmarks (bench/microbench.py, examples/microbench.cu):
latencies and issue rates measured as slopes must recover the machine description within 5%,
bank-conflict wavefronts and sectors per request exactly, and they must follow a modified
description."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from harness import modified_description

from xcc.backend.machine import load_machine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import microbench as mbm  # noqa: E402

TOL = mbm.TOLERANCE


@pytest.fixture(scope="module")
def mb():
    return mbm.Microbench("xg1")


@pytest.fixture(scope="module")
def lat():
    return load_machine("xg1").data["latency"]


def close(measured: float, expected: float) -> bool:
    return abs(measured - expected) <= TOL * expected


@pytest.mark.parametrize("cls", ["fma", "alu", "sfu", "fp64", "tensor"])
def test_dependent_chain_recovers_latency(mb, lat, cls):
    got = mb.chain_latency(cls)
    assert close(got, lat[cls]), (cls, got, lat[cls])


def test_shared_pointer_chase_recovers_lsu_latency(mb, lat):
    got = mb.shared_latency()
    assert close(got, lat["lsu"]), got


def test_global_pointer_chase_recovers_dram_l2_and_l1_latencies(mb, lat):
    dram, l2, l1 = mb.dram_latency(), mb.l2_latency(), mb.l1_latency()
    assert close(dram, lat["dram"]), dram
    assert close(l2, lat["l2_hit"]), l2  # ld.global.cg: the L1 is bypassed
    assert close(l1, lat["l1_hit"]), l1  # ld.global.ca: the second pass hits in the SM's L1
    assert dram > l2 > l1  # the first touch of a sector and the second pass are told apart


def test_a_chase_over_more_than_the_l1_misses_it_every_time(mb, lat):
    """The L1 is LRU over ``l1_bytes`` (no shared memory here: no carveout): a cycle of 1024 sectors
    more than it holds evicts every sector before its next use (L2 latency); 1024 fewer stays in it."""
    from xcc.sim.perf.timing import l1_capacity_sectors

    kernel = mb.module.get_function("chase_global_ca").kernel
    cap = l1_capacity_sectors(mb.machine, kernel, 1)
    assert cap == mb.machine.data["memory"]["l1_bytes"] // 32
    for n, want in ((cap + 1024, lat["l2_hit"]), (cap - 1024, lat["l1_hit"])):
        ring = mb._ring(n)
        one, two = (mb._chase(ring, passes * n // 16, "chase_global_ca") for passes in (1, 2))
        assert close((two - one) / n, want), (n, (two - one) / n, want)


@pytest.mark.parametrize("pipe", ["fma", "sfu", "fp64", "tensor"])
def test_independent_streams_recover_issue_rate(mb, pipe):
    want = mbm.expected_issue(mb.machine, pipe)
    got = mb.issue_rate(pipe)
    assert close(got, want), (pipe, got, want)


def test_mma_streams_recover_tensor_flops_per_sm(mb):
    """mma.sync m16n8k16 (f16 in, f32 accumulators) over 32 warps: 2048 FLOP per HMMA.16816 half, 0.5 per
    cycle per sub-partition, 4 sub-partitions: H100's 4096 dense FP16 FLOP per cycle per SM."""
    assert mbm.HMMA_FLOP == 2048
    assert mbm.expected_tensor_flops(mb.machine) == 4096
    got = mb.tensor_flops()
    assert close(got, 4096), got


def test_imma_streams_recover_int8_ops_per_sm(mb):
    """mma.sync m16n8k32 (s8 in, s32 accumulators): 4096 ops per IMMA.16832 half; [tensor] i8 = 8192 ops per
    cycle per SM (H100's 1979 dense INT8 TOPS), twice the f16 rate."""
    assert mbm.IMMA_OPS == 4096
    assert mbm.expected_tensor_flops(mb.machine, "i8") == 8192
    got = mb.int8_tensor_ops()
    assert close(got, 8192), got


def test_device_wide_bandwidths_recover_dram_and_l2(mb):
    """Every SM streaming first-touched sectors is DRAM-bound; every SM re-reading 16 KiB is L2-bound."""
    dram, l2 = mb.dram_bandwidth(), mb.l2_bandwidth()
    assert close(dram, mb.machine.bandwidth("dram")), dram
    assert close(l2, mb.machine.bandwidth("l2")), l2


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 8, 16, 31, 32])
def test_bank_conflict_wavefronts(mb, stride):
    by_metric, by_cycles = mb.bank_conflicts(stride)
    want = mbm.expected_ways(stride, mb.machine)
    assert want == (1 if stride % 2 else min(32, stride & -stride))  # gcd(stride, 32)
    assert by_metric == want
    assert abs(by_cycles - want) <= TOL * want  # one extra cycle per extra wavefront


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_sectors_per_request(mb, stride, sectors):
    ld, st = mb.sectors_per_request(stride)
    assert mbm.expected_sectors(stride, mb.machine) == sectors
    assert ld == sectors
    assert st == 4  # the stores are contiguous


@pytest.mark.parametrize("space,stride", [("global", 1), ("shared", 1)])
def test_memory_streams_recover_unit_throughput(mb, space, stride):
    """Sectors (global) / wavefronts (shared) per cycle per SM of 16 -> 32 warps of independent loads.
    Before the sub-partitions got the SM's MIO/LG round-robin, the first ones starved the others and
    shared memory reached only 0.83 wavefronts per cycle."""
    want = float(mb.machine.data["memory"]["l1_sectors_per_cycle"]) if space == "global" else 1.0
    got = mb.memory_throughput(space, stride)
    assert close(got, want), (space, got, want)


SB_REUSE = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry sb_reuse(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[64];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  ld.global.u32 %r1, [%rd1];
  mov.u32 %r20, buf;
""" + "".join(f"  ld.shared.u32 %r{2 + k}, [%r20+{4 * k}];\n" for k in range(7)) + """
  add.u32 %r9, %r1, %r2;
""" + "".join(f"  add.u32 %r9, %r9, %r{3 + k};\n" for k in range(6)) + """
  st.global.u32 [%rd2], %r9;
  ret;
}
"""


def test_a_scoreboard_waits_for_all_its_outstanding_writes():
    """A DRAM-miss LDG and, six variable-latency instructions later, an LDS on the same scoreboard
    (the compiler hands out six round-robin): the wait before the add that reads the LDG's result
    must last until the LDG completes, as compiler/sim/isa/hazards.py's contract says, not only the LDS."""
    from xcc import runtime as rt

    dev = rt.Device()
    fn = rt.load_module(SB_REUSE, device=dev).get_function("sb_reuse")
    st = fn.launch(1, 32, [rt.to_device(np.ones(1, np.uint32), dev), rt.to_device(np.zeros(1, np.uint32), dev)])
    assert st.cycles >= dev.machine.latency("dram")


MODIFIED = {"fma = 4 ": "fma = 6 ", "l2_hit = 262": "l2_hit = 300", "l1_hit = 38 ": "l1_hit = 50 ", "lsu = 32 ": "lsu = 40 ",
            "sfu = 18 ": "sfu = 24 ", "banks = 32": "banks = 16", "tensor = 30 ": "tensor = 40 ",
            "\nf16 = 4096 ": "\nf16 = 2048 ", "\ni8 = 8192 ": "\ni8 = 2048 ",
            "dram_bytes_per_cycle = 1909 ": "dram_bytes_per_cycle = 1000 ",
            "l2_bytes_per_cycle = 3136 ": "l2_bytes_per_cycle = 2048 "}


def modified_machine(tmp_path: Path) -> str:
    return modified_description(tmp_path, "xg1_mod", {**MODIFIED, "\nfma = 1.0": "\nfma = 0.5"})  # + half-rate FFMA


def test_measured_figures_follow_a_modified_description(tmp_path):
    path = modified_machine(tmp_path)
    mb = mbm.Microbench(path)
    lat = mb.machine.data["latency"]
    assert (lat["fma"], lat["l2_hit"], lat["lsu"], lat["sfu"]) == (6, 300, 40, 24)
    assert close(mb.chain_latency("fma"), 6)
    assert close(mb.chain_latency("sfu"), 24)
    assert close(mb.l2_latency(), 300)
    assert close(mb.l1_latency(), 50)
    assert close(mb.shared_latency(), 40)
    assert close(mb.issue_rate("fma"), 0.5)
    # tensor latency 40, half-rate f16 and quarter-rate int8 tensor cores: 2048 ops/cycle/SM each
    assert (lat["tensor"], mb.machine.tensor_rate("f16"), mb.machine.tensor_rate("i8")) == (40, 2048, 2048)
    assert close(mb.chain_latency("tensor"), 40)
    assert close(mbm.expected_tensor_flops(mb.machine), 2048) and close(mb.tensor_flops(), 2048)
    assert close(mb.issue_rate("tensor"), 0.25)
    assert close(mb.int8_tensor_ops(), 2048)
    # DRAM 1000 and L2 2048 bytes per cycle, device-wide
    assert close(mb.dram_bandwidth(), 1000) and close(mb.l2_bandwidth(), 2048)
    # 16 banks: stride 16 is a 32-way conflict... of 32 lanes over 16 banks (2 lanes per bank at stride 1)
    assert mb.bank_conflicts(1)[0] == mbm.expected_ways(1, mb.machine) == 2
    assert mb.bank_conflicts(16)[0] == mbm.expected_ways(16, mb.machine) == 32
    # unchanged figures stay where they were
    assert close(mb.chain_latency("alu"), lat["alu"])


def test_report_marks_every_figure_and_a_miss(tmp_path):
    figs = [mbm.Figure("latency", "x", "[latency] fma", "cycles", 4.0, 4.1, False),
            mbm.Figure("latency", "y", "[latency] alu", "cycles", 4.0, 4.5, False),
            mbm.Figure("coalescing", "z", "[memory] sector_bytes", "sectors", 4.0, 4.0, True)]
    assert [f.ok for f in figs] == [True, False, True]
    lines = mbm.markdown_section(figs)
    assert lines[0] == mbm.BEGIN and lines[-1] == mbm.END
    body = "\n".join(lines)
    assert "+2.50%" in body and "+12.50% (over 5%)" in body and "exact" in body
    assert "2 of 3 figures recovered" in body
    md = tmp_path / "B.md"
    md.write_text("# Benchmarks\n\nintro\n")
    mbm.write_section(lines, md)
    mbm.write_section(lines, md)  # replaced in place, not appended twice
    text = md.read_text()
    assert text.count(mbm.BEGIN) == 1 and text.startswith("# Benchmarks\n\nintro\n")


@pytest.mark.slow
def test_full_table_recovers_every_figure():
    figs = mbm.measure()
    assert all(f.ok for f in figs), [f for f in figs if not f.ok]
