"""vectorize: kernels compute the same bits before and after it on the IR interpreter; pairs form only where
8-byte alignment is provable and nothing in between touches the memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_check import build, check_pass_on_case, count_ops, same_on_ir

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager

GOLDEN = Path(__file__).parent / "golden" / "vectorize.ptx"
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

CASES = ["triton_matmul", "u128_mul_add", "u64_mul_wide_limbs", "transpose_shared", "scan_warp",
         "softmax_rows", "gemm_mma_m16n8k16", "ldmatrix_variants", "dyn_smem_reverse", "bitonic_sort"]


@pytest.mark.parametrize("name", CASES)
def test_vectorize_keeps_results(name):
    check_pass_on_case(name, "gvn,vectorize,dce")


def test_golden_kernel_on_the_interpreter():
    a = np.arange(8, dtype=np.float32)
    out = same_on_ir(GOLDEN.read_text(), "k", "gvn,vectorize,dce", (1, 1, 1), (4, 1, 1), [a], [0])[0]
    assert out[2] == np.float32(1.0)  # a[0] + a[1], stored as the low word of the pair


def test_pairs_in_a_real_kernel():
    from kernel_cases import EXAMPLES_DIR

    mod = build(EXAMPLES_DIR / "triton" / "matmul.sm_80.ptx")
    PassManager("gvn,vectorize,dce", verify=True).run(mod)
    assert count_ops(mod, "unpack") >= 32


UNKNOWN = HEADER + """
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [%rd1];
  ld.global.u32 %r2, [%rd1+4];
  add.s32 %r3, %r1, %r2;
  st.global.u32 [%rd1+8], %r3;
  st.global.u32 [%rd1+12], %r3;
  ret;
}
"""


def test_no_pairs_through_a_pointer_of_unknown_alignment():
    text = print_module(PassManager("vectorize", verify=True).run(build_module(parse(UNKNOWN, "t.ptx"))))
    assert "b64 = ld.b64" not in text and "pack" not in text, text
    # a misaligned pointer (4 mod 8) runs the same
    same_on_ir(UNKNOWN, "k", "vectorize", (1, 1, 1), (1, 1, 1), [np.arange(6, dtype=np.uint32)], [0])


def test_store_between_a_load_pair_keeps_them_apart():
    text = HEADER + """
.shared .align 8 .b32 buf[8];
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<6>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r5, %tid.x;
  mov.u32 %r4, buf;
  st.shared.u32 [%r4+4], %r5;
  ld.shared.u32 %r1, [%r4];
  st.shared.u32 [%r4+4], 7;
  ld.shared.u32 %r2, [%r4+4];
  add.s32 %r3, %r1, %r2;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""
    out = print_module(PassManager("vectorize,dce", verify=True).run(build_module(parse(text, "t.ptx"))))
    assert "ld.b64" not in out and out.count("ld.u32") == 2, out
    moved = text.replace("  st.shared.u32 [%r4+4], 7;\n", "")
    out = print_module(PassManager("vectorize,dce", verify=True).run(build_module(parse(moved, "t.ptx"))))
    assert "ld.b64" in out, out  # without the store in between they pair


def test_pair_elements_are_read_in_place_on_xg1():
    """The machine combine reads an element of a vector load from its half of the register pair: the -O3
    build of attention_row (its dot product reads q from shared memory in pairs) has no MOV left from a half,
    and runs as numpy says."""
    import re
    import sys

    from kernel_cases import EXAMPLES_DIR

    from xcc.backend.codegen import disassemble_kernel
    from xcc.driver import CompileOptions, compile_module
    from xcc.sources import read_source

    sys.path.insert(0, str(EXAMPLES_DIR.parent / "bench"))
    import opt_levels

    case = opt_levels.corpus(names=["attention_row"])[0][0]
    path = opt_levels.ptx_path(case, opt_levels.ARCH)
    obj = compile_module([read_source(path)], CompileOptions(opt_level=3), kernels=[case.entry])
    text = disassemble_kernel(obj.kernels[case.entry])
    pairs = [int(m.group(1)) for m in re.finditer(r"LDS\.64 R(\d+):R\d+", text)]
    assert pairs, text
    for m in re.finditer(r"MOV R\d+, R(\d+) ;", text):
        assert not any(p <= int(m.group(1)) <= p + 1 for p in pairs), m.group(0)
    assert opt_levels.measure(case, path, 3, None, None).error is None
