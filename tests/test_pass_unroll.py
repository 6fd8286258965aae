"""unroll: kernels compute the same bits before and after it on the IR interpreter; full unrolling needs a
known trip count (wrap-around included), partial unrolling keeps every exit test, nounroll is honoured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_check import check_pass_on_case, same_on_ir

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager

GOLDEN = Path(__file__).parent / "golden" / "unroll.ptx"
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

CASES = ["gemm_tiled_f32", "llvm_saxpy_loop", "llvm_row_xor_sum", "collatz_steps", "bitonic_sort",
         "block_reduce", "scan_hillis_steele", "histogram_atomic", "u128_mul_add", "s128_row_sum",
         "layernorm_rows", "conv2d_nchw"]


@pytest.mark.parametrize("name", CASES)
def test_unroll_keeps_results(name):
    check_pass_on_case(name, "unroll,dce")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8])
@pytest.mark.parametrize("passes", ["unroll{factor=2},dce", "unroll{factor=3},dce", "unroll{max-trip=2},dce",
                                    "unroll{factor=4 runtime=false},dce"])
def test_golden_kernel_on_the_interpreter(n, passes):
    a = np.arange(8, dtype=np.float32)
    same_on_ir(GOLDEN.read_text(), "k", passes, (1, 1, 1), (2, 1, 1), [a, np.uint32(n)], [0])


WRAP = HEADER + """
.visible .entry k(.param .u64 a)
{
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [a];
  mov.u32 %r1, -2;
  mov.u32 %r2, 0;
L1:
  mul.lo.s32 %r3, %r1, 3;
  add.s32 %r2, %r2, %r3;
  add.s32 %r1, %r1, 1;
  setp.ne.s32 %p1, %r1, 2;
  @%p1 bra L1;
  st.global.u32 [%rd1], %r2;
  st.global.u32 [%rd1+4], %r1;
  ret;
}
"""


def test_full_unroll_through_wrap_around():
    mod = PassManager("unroll,dce", verify=True).run(build_module(parse(WRAP, "t.ptx")))
    text = print_module(mod)
    assert "L1.u3:" in text and "L1.u4:" not in text and "cbr" not in text, text  # -2, -1, 0, 1: 4 trips
    out = same_on_ir(WRAP, "k", "unroll,dce", (1, 1, 1), (1, 1, 1), [np.zeros(2, np.int32)], [0])[0]
    assert list(out) == [3 * (-2 - 1 + 0 + 1), 2]


def test_limits_and_nounroll():
    text = GOLDEN.read_text()
    small = print_module(PassManager("unroll{max-trip=2 factor=1}", verify=True).run(
        build_module(parse(text, "t.ptx"))))
    assert ".u1:" not in small  # 4 trips > max-trip, and no partial unrolling
    big = print_module(PassManager("unroll{max-size=8 factor=4}", verify=True).run(
        build_module(parse(text, "t.ptx"))))
    assert "L_FULL.u1" not in big and "L_RT.u1" not in big  # 4 copies of 6 instructions > 8
    default = print_module(PassManager("unroll", verify=True).run(build_module(parse(text, "t.ptx"))))
    assert "L_RT.rt3:" in default and "L_NO.u1" not in default and "L_NO.rt" not in default


def test_known_trip_count_multiple_of_the_factor_keeps_one_test():
    text = print_module(PassManager("unroll{max-trip=2},dce", verify=True).run(
        build_module(parse(GOLDEN.read_text(), "t.ptx"))))
    full = text.split("L_FULL:")[1].split("bb3:")[0]  # 4 trips, factor 4: copies 0-2 cannot leave
    assert full.count("cbr") == 1 and "L_FULL.u3:" in full, text
    rt = text.split("\nL_RT:")[1].split("L_NO:")[0]  # unknown trip count: the remainder loop after groups
    assert rt.count("cbr") == 1 and "L_RT.rt3:" in text, text
    partial = print_module(PassManager("unroll{max-trip=2 runtime=false},dce", verify=True).run(
        build_module(parse(GOLDEN.read_text(), "t.ptx"))))
    rt = partial.split("\nL_RT:")[1].split("L_NO:")[0]  # without runtime unrolling every copy tests
    assert rt.count("cbr") == 4 and "L_RT.u3:" in rt, partial


RUNTIME = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 start, .param .u32 bound)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [start];
  ld.param.u32 %r2, [bound];
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
L1:
  add.s32 %r3, %r3, 1;
  xor.b32 %r5, %r1, %r3;
  add.s32 %r4, %r4, %r5;
  add.s32 %r1, %r1, 1;
  setp.{cmp} %p1, %r1, %r2;
  @%p1 bra L1;
  st.global.u32 [%rd1], %r3;
  st.global.u32 [%rd1+4], %r4;
  st.global.u32 [%rd1+8], %r1;
  ret;
}
"""
I32_MAX, I32_MIN = 0x7FFFFFFF, 0x80000000


@pytest.mark.parametrize(("cmp", "start", "bound", "trips"), [
    ("lt.s32", 0, 10, 10), ("lt.s32", 5, 3, 1), ("lt.s32", 5, 6, 1), ("lt.s32", 5, 7, 2),
    ("lt.s32", (-5) & 0xFFFFFFFF, 3, 8), ("lt.s32", I32_MAX, I32_MIN + 3, 4), ("lt.s32", I32_MAX, I32_MIN, 1),
    ("lt.s32", I32_MAX - 1, I32_MAX, 1), ("lo.u32", 0xFFFFFFFF, 3, 4), ("lo.u32", 2, 13, 11),
    ("lt.u32", 7, 7, 1)])
@pytest.mark.parametrize("factor", [2, 4, 8])
def test_runtime_unrolling_trip_counts(cmp, start, bound, trips, factor):
    text = RUNTIME.replace("{cmp}", cmp)
    ir = print_module(PassManager(f"unroll{{factor={factor}}},dce", verify=True).run(
        build_module(parse(text, "t.ptx"))))
    assert f"L1.rt{factor - 1}:" in ir, ir
    out = same_on_ir(text, "k", f"unroll{{factor={factor}}},dce", (1, 1, 1), (1, 1, 1),
                     [np.zeros(3, np.uint32), np.uint32(start), np.uint32(bound)], [0])[0]
    assert out[0] == trips
