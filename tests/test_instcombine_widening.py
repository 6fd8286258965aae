"""instcombine's widening multiplies: ``shl.b64 (cvt.s64.s32 x), k`` / ``mul.lo.s64 (cvt x), c`` -> ``mul.wide``
(nvcc -G's address arithmetic in nvcc -O3's form), bit for bit on the IR interpreter for extreme inputs, and left
alone where the factor does not fit the 32-bit type."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.driver import Source, frontend
from xcc.passes import PassManager

PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    cvt.{wide}.{narrow} %rd5, %r2;
    {op}.{otype} %rd6, %rd5, {factor};
    mul.wide.u32 %rd7, %r1, 8;
    add.s64 %rd8, %rd2, %rd7;
    st.global.u64 [%rd8], %rd6;
    ret;
}}
"""

CASES = [("s64", "s32", "shl", "b64", 2, True), ("s64", "s32", "shl", "b64", 30, True),
         ("s64", "s32", "shl", "b64", 31, False), ("u64", "u32", "shl", "b64", 31, True),
         ("s64", "s32", "mul.lo", "s64", 12, True), ("s64", "s32", "mul.lo", "s64", -3, False),
         ("u64", "u32", "mul.lo", "u64", 4294967295, True), ("u64", "s32", "shl", "b64", 3, True)]


@pytest.mark.parametrize("wide, narrow, op, otype, factor, rewritten", CASES)
def test_widening_multiply_is_exact(wide, narrow, op, otype, factor, rewritten):
    text = PTX.format(wide=wide, narrow=narrow, op=op, otype=otype, factor=factor)
    m = frontend([Source(text, "w.ptx")])
    PassManager("instcombine,dce", verify=True).run(m)
    ops = [(i.op, i.attrs.get("mode")) for i in m.functions[0].instructions()]
    assert ops.count(("mul", "wide")) == (3 if rewritten else 2), ops  # two are in the PTX
    x = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0xDEADBEEF, 3] * 4, np.uint32)
    results = []
    for passes in ("", "instcombine,dce"):
        dev = rt.Device()
        din, dout = rt.to_device(x, dev), rt.to_device(np.zeros(32, np.uint64), dev)
        mod = rt.load_module(text, device=dev, engine="ir", passes=passes)
        mod.get_function("k").launch((1, 1, 1), (32, 1, 1), [din, dout])
        results.append(dout.copy_to_host())
    assert np.array_equal(results[0], results[1])
