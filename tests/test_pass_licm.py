"""licm: kernels compute the same bits before and after it on the IR interpreter; invariant values and loads
leave loops (a new preheader where the header has several ways in), and what must stay does."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import check_pass_on_case, same_on_ir

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

CASES = ["saxpy_debug", "gemm_tiled_f32", "gemm_tiled_f32_debug", "llvm_saxpy_loop", "llvm_row_xor_sum",
         "collatz_steps", "histogram_atomic", "block_reduce_debug", "vector_add_grid_stride",
         "scan_hillis_steele", "producer_consumer", "conv2d_nchw"]


@pytest.mark.parametrize("name", CASES)
def test_licm_keeps_results(name):
    check_pass_on_case(name, "gvn,licm,dce")


TWO_WAYS_IN = HEADER + """
.visible .entry k(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.lt.u32 %p1, %r2, 7;
  mov.u32 %r3, 0;
  mov.u32 %r4, 5;
  @%p1 bra L1;
  mov.u32 %r4, 9;
L1:
  mul.lo.s32 %r5, %r2, %r4;
  add.s32 %r6, %r5, %r1;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r7, [%rd3];
  add.s32 %r7, %r7, %r6;
  st.global.u32 [%rd3], %r7;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra L1;
  ret;
}
"""


def test_new_preheader_for_a_header_with_two_ways_in():
    mod = PassManager("licm", verify=True).run(build_module(parse(TWO_WAYS_IN, "t.ptx")))
    text = print_module(mod)
    pre = text.split("L1.pre:")[1].split("L1:")[0]
    assert "phi" in pre and "mul.s32" in pre and "mul.u32" in pre, text  # %r4 merges in the preheader
    loop = text.split("\nL1:")[1]
    assert "mul" not in loop and "ld.u32" in loop, text  # the loop stores to what it loads
    out = np.arange(64, dtype=np.uint32)
    same_on_ir(TWO_WAYS_IN, "k", "licm", (1, 1, 1), (32, 1, 1), [out, np.uint32(3)], [0])


def test_no_hoisting_of_a_guarded_load_or_across_a_barrier():
    text = HEADER + """
.visible .entry k(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, 0;
  mov.u32 %r8, 0;
L1:
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra L2;
  ld.global.u32 %r4, [%rd1];
  add.s32 %r8, %r8, %r4;
L2:
  ld.shared.u32 %r5, [%rd1];
  add.s32 %r8, %r8, %r5;
  bar.sync 0;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, 4;
  @%p2 bra L1;
  st.global.u32 [%rd1+8], %r8;
  ret;
}
"""
    mod = PassManager("licm", verify=True).run(build_module(parse(text, "t.ptx")))
    loop = print_module(mod).split("\nL1:")[1]
    assert "space=global" in loop.split("L2:")[0] and "space=shared" in loop.split("L2:")[1]
