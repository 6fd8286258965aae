"""indvars: kernels compute the same bits before and after it on the IR interpreter; 64-bit address chains
of a 32-bit counter are reduced only where the counter provably never wraps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_check import check_pass_on_case, same_on_ir

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager

GOLDEN = Path(__file__).parent / "golden" / "indvars.ptx"

CASES = ["gemm_tiled_f32_debug", "gemm_mma_m16n8k16", "histogram_atomic", "bitonic_sort",
         "llvm_row_xor_sum", "conv2d_nchw_debug", "scan_hillis_steele_debug", "collatz_steps_debug",
         "triton_matmul", "saxpy_debug", "layernorm_rows_debug"]


@pytest.mark.parametrize("name", CASES)
def test_indvars_keeps_results(name):
    check_pass_on_case(name, "gvn,licm,indvars,dce")


@pytest.mark.parametrize("n", [0, 1, 7, -3, 40])
def test_golden_kernel_on_the_interpreter(n):
    a = np.arange(512, dtype=np.float32)
    out = same_on_ir(GOLDEN.read_text(), "k", "indvars,dce", (1, 1, 1), (1, 1, 1), [a, np.int32(n)], [0])[0]
    if 0 < n <= 5:
        assert out[0] == np.float32(sum(range(n)))


UNSIGNED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
L_TOP:
  setp.{cmp} %p1, %r2, %r1;
  @!%p1 bra L_DONE;
  cvt.u64.u32 %rd2, %r2;
  shl.b64 %rd3, %rd2, 2;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r2;
  add.s32 %r2, %r2, 32;
  bra.uni L_TOP;
L_DONE:
  ret;
}
"""


@pytest.mark.parametrize(("cmp", "reduced"), [("lo.u32", False), ("lt.s32", False)])
def test_zero_extension_needs_an_unsigned_test_and_step_one(cmp, reduced):
    text = UNSIGNED.replace("{cmp}", cmp)
    out = print_module(PassManager("indvars,dce", verify=True).run(build_module(parse(text, "t.ptx"))))
    assert ("cvt.u64" not in out.split("L_TOP:")[1]) == reduced, out  # step 32: i + 32 may wrap, nothing to prove it does not
    res = same_on_ir(text, "k", "indvars,dce", (1, 1, 1), (32, 1, 1), [np.zeros(100, np.uint32), np.uint32(90)],
                     [0])[0]
    assert list(res[:90]) == list(range(90))


def test_zero_extension_of_an_unsigned_counter_stepping_by_one():
    text = UNSIGNED.replace("{cmp}", "lo.u32").replace("add.s32 %r2, %r2, 32", "add.s32 %r2, %r2, 1")
    out = print_module(PassManager("indvars,dce", verify=True).run(build_module(parse(text, "t.ptx"))))
    loop = out.split("L_TOP:")[1]
    assert "cvt.u64" not in loop and "shl" not in loop, out  # (the start address is computed before the loop)
    res = same_on_ir(text, "k", "indvars,dce", (1, 1, 1), (1, 1, 1), [np.zeros(20, np.uint32), np.uint32(12)],
                     [0])[0]
    assert list(res[:12]) == list(range(12))
    signed = text.replace("lo.u32", "lt.s32")
    out = print_module(PassManager("indvars,dce", verify=True).run(build_module(parse(signed, "t.ptx"))))
    assert "cvt.u64" in out.split("L_TOP:")[1], out  # a signed bound says nothing about the zero-extension
