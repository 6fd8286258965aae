"""addrfold: kernels compute the same bits before and after it on the IR interpreter; constant address terms
become immediate offsets only where wrap-around cannot differ; the value ranges it relies on."""

from __future__ import annotations

import numpy as np
import pytest
from pass_check import check_pass_on_case, same_on_ir

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager
from xcc.passes.value_range import ValueRanges

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

CASES = ["triton_vector_add", "triton_layernorm", "triton_softmax_row", "atomic_min_max", "atomic_bitwise",
         "conv2d_nchw", "trig_f32", "mma_m16n8k8_f16_debug", "gemm_tiled_f32", "transpose_shared_debug"]


@pytest.mark.parametrize("name", CASES)
def test_addrfold_keeps_results(name):
    check_pass_on_case(name, "addrfold,gvn,dce")


WRAP = HEADER + """
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  add.s32 %r2, %r1, 2147483632;
  add.s32 %r3, %r2, 1;
  mul.wide.s32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  add.s32 %r4, %r1, 1;
  mul.wide.s32 %rd4, %r4, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.u32 %r5, [%rd5];
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def test_no_fold_where_the_32_bit_index_may_wrap():
    text = print_module(PassManager("addrfold,dce", verify=True).run(build_module(parse(WRAP, "t.ptx"))))
    assert "ld.u32 %{} {offset=4, space=global}" not in text
    ld = next(line for line in text.splitlines() if "ld.u32" in line)
    st = next(line for line in text.splitlines() if "st.u32" in line)
    assert "offset=4" in ld, text  # tid.x + 1 < 2^31: folded
    assert "offset=0" in st, text  # tid.x + 0x7ffffff0 + 1 may pass 2^31: mul.wide of it stays
    assert text.count("mul.s32") == 2, text


def test_ranges():
    mod = build_module(parse(WRAP, "t.ptx"))
    fn = mod.functions[0]
    defs = {i.result: i for i in fn.instructions() if i.result is not None}
    vr = ValueRanges(defs)
    by_op = {}
    for i in fn.instructions():
        by_op.setdefault(i.op, []).append(i.result)
    assert vr.of(by_op["sreg"][0]) == (0, 1023)
    adds32 = [v for v in by_op["add"] if v.type.bits == 32]
    assert vr.of(adds32[0]) == (2147483632, 2147483632 + 1023)
    assert vr.of(adds32[2]) == (1, 1024)
    assert vr.of(by_op["mul"][0]) is None  # a negative s32 operand of mul.wide
    assert vr.of(by_op["mul"][1]) == (4, 4096)


SHARED = HEADER + """
.shared .align 4 .u32 buf[64];
.visible .entry k(.param .u64 p, .param .u32 q)
{
  .reg .b32 %r<12>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r9, [q];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  add.s32 %r5, %r4, 4;
  st.shared.u32 [%r4], %r1;
  st.shared.u32 [%r5], %r1;
  bar.sync 0;
  add.s32 %r6, %r9, 4;
  ld.shared.u32 %r7, [%r6];
  ld.shared.u32 %r8, [%r5];
  add.s32 %r7, %r7, %r8;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  st.global.u32 [%rd3], %r7;
  ret;
}
"""


def test_shared_32_bit_base_folds_only_with_a_known_range():
    text = print_module(PassManager("addrfold,dce", verify=True).run(build_module(parse(SHARED, "t.ptx"))))
    assert text.count("{offset=4, space=shared}") == 2, text  # buf + tid*4 + 4, twice
    assert "add.s32 %1, s32:0x4" in text or "add.s32 %1, u32:0x4" in text, text  # q + 4: q's range unknown
    out = np.zeros(32, np.uint32)
    got = same_on_ir(SHARED, "k", "addrfold,gvn,dce", (1, 1, 1), (15, 1, 1), [out, np.uint32(8)], [0])[0]
    assert got[3] == 2 + 3  # word 3 (q + 4 = 12), last written by thread 2, + word tid + 1
