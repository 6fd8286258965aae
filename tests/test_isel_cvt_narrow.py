"""cvt from a narrow unsigned type reads only the low bits of a wider register (PTX ISA 9.0, cvt: "the source
operand ... is truncated to the source type's size"): cvt.u32.u8 / cvt.u32.u16 / cvt.u64.u8 of a 32-bit register
holding high bits must zero-extend on the ISA interpreter as on the IR interpreter (found by translation
validation: the backend copied the register)."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt

PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    cvt.{dst}.{src} {dreg}, %r2;
    mul.wide.u32 %rd5, %r1, 8;
    add.s64 %rd6, %rd2, %rd5;
    st.global.{dst} [%rd6], {dreg};
    ret;
}}
"""


@pytest.mark.parametrize("dst, src", [("u32", "u8"), ("u32", "u16"), ("u64", "u8"), ("u64", "u16"),
                                      ("u32", "s8"), ("u64", "s16")])
@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_narrow_source_reads_low_bits(dst, src, engine):
    text = PTX.format(dst=dst, src=src, dreg="%r3" if dst == "u32" else "%rd7")
    x = np.array([0x955235A4, 0x0000FFFF, 0xFFFF8081, 0x7F, 0x12345680] * 7, dtype=np.uint32)[:32]
    dev = rt.Device()
    din = rt.to_device(x, dev)
    dout = rt.to_device(np.zeros(32, np.uint64), dev)
    rt.load_module(text, device=dev, engine=engine).get_function("k").launch((1, 1, 1), (32, 1, 1), [din, dout])
    bits = int(src[1:])
    low = x.astype(np.uint64) & ((1 << bits) - 1)
    if src[0] == "s":
        low = np.where(low >> (bits - 1), low | ~np.uint64((1 << bits) - 1), low).astype(np.uint64)
    want = low & np.uint64(0xFFFFFFFF) if dst == "u32" else low
    got = dout.copy_to_host()
    if dst == "u32":
        got = got & np.uint64(0xFFFFFFFF)
    assert np.array_equal(got, want)
