"""Lowering of packing (``mov`` with vector operands), half-precision instructions and carry chains, run on the
IR interpreter: small PTX kernels, each thread writing its results to ``out``."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import PtxSemanticError, UnsupportedError
from xcc.runtime.ir_engine import launch_ptx

sys.path.insert(0, str(Path(__file__).parent))
from half_ref import from_floats, round_exact, value  # noqa: E402

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
REGS = """
    .reg .pred %p<8>;
    .reg .b16 %h<16>;
    .reg .b32 %r<32>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
"""


def run(body: str, inputs: np.ndarray, nout: int, opt_level: int = 3) -> np.ndarray:
    """Run ``body`` with %rd1 = &in[tid * k] (k = inputs per thread), %rd2 = &out[tid * nout] (u32 each)."""
    threads, k = inputs.shape
    ptx = HEADER + f"""
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{{REGS}
    ld.param.u64 %rd10, [pin];
    ld.param.u64 %rd11, [pout];
    mov.u32 %r30, %tid.x;
    mul.wide.u32 %rd12, %r30, {4 * k};
    add.s64 %rd1, %rd10, %rd12;
    mul.wide.u32 %rd13, %r30, {4 * nout};
    add.s64 %rd2, %rd11, %rd13;
{body}
    ret;
}}
"""
    dev = rt.Device()
    d_in = rt.to_device(np.ascontiguousarray(inputs, np.uint32).ravel(), dev)
    d_out = rt.to_device(np.full(threads * nout, 0xDEADBEEF, np.uint32), dev)
    launch_ptx(ptx, "k", 1, threads, [d_in, d_out], dev, opt_level=opt_level)
    return d_out.copy_to_host().reshape(threads, nout)


@pytest.mark.parametrize("opt", [0, 3])
def test_mov_pack_unpack(opt):
    ins = np.array([[0x11223344, 0xAABBCCDD], [0xFFFF0000, 0x0000FFFF]], np.uint32)
    body = """
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    mov.b32 {%h1, %h2}, %r1;          // h1 = low half, h2 = high half
    mov.b32 %r3, {%h2, %h1};          // halves swapped
    mov.b64 %rd3, {%r1, %r2};         // r1 low word
    mov.b64 {%r4, _}, %rd3;
    mov.b64 {_, %r5}, %rd3;
    mov.b32 %r6, {0, %h1};            // an immediate element
    mov.b64 %rd4, {%h1, %h2, %h2, %h1};
    mov.b64 {%r7, %r8}, %rd4;
    st.global.u32 [%rd2], %r3;
    st.global.u32 [%rd2+4], %r4;
    st.global.u32 [%rd2+8], %r5;
    st.global.u32 [%rd2+12], %r6;
    st.global.u32 [%rd2+16], %r7;
    st.global.u32 [%rd2+20], %r8;
"""
    got = run(body, ins, 6, opt)
    for t, (a, b) in enumerate(ins.tolist()):
        lo, hi = a & 0xFFFF, a >> 16
        assert got[t].tolist() == [lo << 16 | hi, a, b, lo << 16, hi << 16 | lo, lo << 16 | hi]


def test_guarded_unpack_keeps_old_value():
    ins = np.array([[0x12345678, 0], [0x12345678, 1]], np.uint32)
    body = """
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    mov.b32 %r3, 7;
    mov.b32 %r4, 9;
    setp.ne.u32 %p1, %r2, 0;
    mov.b64 %rd5, {%r1, %r2};
    @%p1 mov.b64 {%r3, %r4}, %rd5;
    st.global.u32 [%rd2], %r3;
    st.global.u32 [%rd2+4], %r4;
"""
    got = run(body, ins, 2)
    assert got.tolist() == [[7, 9], [0x12345678, 1]]


def _f16(*xs) -> list[int]:
    return from_floats(np.array(xs, np.float64), "f16").tolist()


def pack(lo: int, hi: int) -> int:
    return lo | hi << 16


def test_f16x2_arith_setp_set_and_cvt_pack():
    a = _f16(1.5, -2.0)  # element 0, element 1
    b = _f16(0.25, 3.0)
    ins = np.array([[pack(*a), pack(*b)]], np.uint32)
    body = """
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    add.rn.f16x2 %r3, %r1, %r2;
    mul.f16x2 %r4, %r1, %r2;
    setp.gt.f16x2 %p1|%p2, %r1, %r2;
    selp.u32 %r5, 1, 0, %p1;
    selp.u32 %r6, 1, 0, %p2;
    set.lt.f16x2.f16x2 %r7, %r1, %r2;
    set.lt.u32.f16x2 %r8, %r1, %r2;
    mov.b32 %f1, 0f40A00000;              // 5.0
    mov.b32 %f2, 0f3E800000;              // 0.25
    cvt.rn.f16x2.f32 %r9, %f1, %f2;       // 5.0 in bits 31:16, 0.25 in bits 15:0
    cvt.rn.bf16x2.f32 %r10, %f1, %f2;
    neg.f16x2 %r11, %r1;
    max.f16x2 %r12, %r1, %r2;
    st.global.u32 [%rd2], %r3;
    st.global.u32 [%rd2+4], %r4;
    st.global.u32 [%rd2+8], %r5;
    st.global.u32 [%rd2+12], %r6;
    st.global.u32 [%rd2+16], %r7;
    st.global.u32 [%rd2+20], %r8;
    st.global.u32 [%rd2+24], %r9;
    st.global.u32 [%rd2+28], %r10;
    st.global.u32 [%rd2+32], %r11;
    st.global.u32 [%rd2+36], %r12;
"""
    got = run(body, ins, 10)[0].tolist()
    assert got[0] == pack(*_f16(1.75, 1.0))
    assert got[1] == pack(*_f16(0.375, -6.0))
    assert got[2:4] == [1, 0]  # 1.5 > 0.25, -2 > 3 is false
    assert got[4] == pack(0, 0x3C00) and got[5] == 0xFFFF0000
    assert got[6] == pack(*_f16(0.25, 5.0))
    assert got[7] == pack(0x3E80, 0x40A0)
    assert got[8] == pack(a[0] ^ 0x8000, a[1] ^ 0x8000)
    assert got[9] == pack(a[0], b[1])


def test_scalar_half_ops_and_conversions():
    x = _f16(3.0)[0]
    ins = np.array([[x, 0x3F40]], np.uint32)  # f16 3.0, bf16 0.75
    body = """
    ld.global.u16 %h1, [%rd1];
    ld.global.u16 %h2, [%rd1+4];
    fma.rn.f16 %h3, %h1, %h1, %h1;            // 12
    cvt.f32.f16 %f1, %h3;
    fma.rn.bf16 %h4, %h2, %h2, %h2;           // 0.75 * 0.75 + 0.75 = 1.3125
    cvt.f32.bf16 %f2, %h4;
    cvt.rzi.s32.f16 %r1, %h1;
    cvt.rn.f16.s32 %h5, %r1;
    cvt.rz.f16.f32 %h6, %f1;
    ex2.approx.f16 %h7, %h1;                  // 8
    cvt.u32.u16 %r2, %h5;
    cvt.u32.u16 %r3, %h7;
    mov.b32 %r4, %f1;
    mov.b32 %r5, %f2;
    st.global.u32 [%rd2], %r4;
    st.global.u32 [%rd2+4], %r5;
    st.global.u32 [%rd2+8], %r1;
    st.global.u32 [%rd2+12], %r2;
    st.global.u32 [%rd2+16], %r3;
"""
    got = run(body, ins, 5)[0]
    assert got[:2].view(np.float32).tolist() == [12.0, 1.3125]
    assert got[2:].tolist() == [3, x, _f16(8.0)[0]]


def test_bf16_add_rounds_the_exact_sum_once():
    """2^100 + 2^-100 - 2^100 in bf16: the exact first sum rounds to 2^100 (one rounding, nothing left)."""
    big, tiny = from_floats(np.array([2.0**100, 2.0**-100]), "bf16").tolist()
    ins = np.array([[big, tiny]], np.uint32)
    body = """
    ld.global.u16 %h1, [%rd1];
    ld.global.u16 %h2, [%rd1+4];
    add.rn.bf16 %h3, %h1, %h2;
    cvt.u32.u16 %r1, %h3;
    st.global.u32 [%rd2], %r1;
"""
    assert run(body, ins, 1)[0, 0] == big
    assert value(big, "bf16") == Fraction(2) ** 100 and round_exact(Fraction(2) ** 100, "bf16") == big


def test_carry_flag_through_guard_and_loop():
    """CC.CF is a register: a guarded add.cc keeps the old flag, and the flag crosses a loop back edge."""
    ins = np.array([[0xFFFFFFFF, 1, 0], [0xFFFFFFFF, 1, 1], [5, 6, 1]], np.uint32)
    body = """
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    ld.global.u32 %r3, [%rd1+8];
    setp.ne.u32 %p1, %r3, 0;
    add.cc.u32 %r4, %r1, %r2;          // CF = carry of a + b
    @%p1 add.cc.u32 %r5, 1, 1;         // CF = 0 where p1
    addc.u32 %r6, 0, 0;                // the flag
    mov.u32 %r7, 0;
    mov.u32 %r11, 0;
    sub.cc.u32 %r9, 0, 1;              // a borrow: CF = 0 (NVIDIA's carry is the complement of the borrow)
LOOP:
    subc.cc.u32 %r10, 0, 0;            // 0 - 0 - borrow, and the borrow out is the same: the flag goes round the loop
    add.u32 %r11, %r11, %r10;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p2, %r7, 3;
    @%p2 bra LOOP;
    addc.u32 %r8, 0, 0;
    st.global.u32 [%rd2], %r6;
    st.global.u32 [%rd2+4], %r11;
    st.global.u32 [%rd2+8], %r8;
"""
    got = run(body, ins, 3)
    assert got[:, 0].tolist() == [1, 0, 0]
    # addc after the subtractions adds CF = 0 (the carry of a subtraction that borrowed), as an H200 does
    assert got[:, 1].tolist() == [0xFFFFFFFD] * 3 and got[:, 2].tolist() == [0] * 3


@pytest.mark.parametrize("line,cls,msg", [
    ("min.xorsign.f16 %h1, %h2, %h3;", PtxSemanticError, "xorsign needs .abs"),
    ("add.cc.u16 %h1, %h2, %h3;", PtxSemanticError, "extended-precision"),
    ("madc.u32 %r1, %r2, %r3, %r4;", PtxSemanticError, ".lo, .hi"),
    ("mov.b32 %r1, {%h1, %h2, %h3};", PtxSemanticError, "do not split"),
    ("cvt.rn.f16x2.f32 %r1, %f1;", PtxSemanticError, "takes 3 operands"),
    ("cvt.rn.relu.f32.f64 %f1, %rd1;", PtxSemanticError, "relu"),  # not PTX: ptxas 13.0 refuses it
    ("add.relu.f32 %f1, %f2, %f3;", UnsupportedError, "relu"),
])
def test_refused_variants_are_located(line, cls, msg):
    with pytest.raises(cls, match=msg) as e:
        run(f"    {line}\n", np.zeros((1, 1), np.uint32), 1)
    assert e.value.loc is not None and e.value.loc.line > 0


def test_half_parameters_take_numpy_halves_and_bit_patterns():
    """``.bf16``/``.f16`` parameters: np.float16 or the bit pattern (numpy has no bfloat16); a
    ``__half2`` by value (``.align 4 .b8 [4]``) takes any 4-byte numpy scalar."""
    from xcc.diagnostics import LaunchError

    ptx = HEADER + """
.visible .entry k(.param .bf16 a, .param .f16 b, .param .align 4 .b8 c[4], .param .u64 out)
{ .reg .b16 %h<4>; .reg .b64 %rd<2>; .reg .f32 %f<4>;
  ld.param.b16 %h1, [a]; ld.param.b16 %h2, [b]; ld.param.u16 %h3, [c+2]; ld.param.u64 %rd1, [out];
  cvt.f32.bf16 %f1, %h1; cvt.f32.f16 %f2, %h2; cvt.f32.f16 %f3, %h3;
  st.global.f32 [%rd1], %f1; st.global.f32 [%rd1+4], %f2; st.global.f32 [%rd1+8], %f3; ret; }
"""
    dev = rt.Device()
    out = rt.to_device(np.zeros(3, np.float32), dev)
    pair = np.array([1.0, -0.5], np.float16).view(np.uint32)[0]
    launch_ptx(ptx, "k", 1, 1, [np.uint16(0x3FC0), np.float16(2.5), pair, out], dev)
    assert out.copy_to_host().tolist() == [1.5, 2.5, -0.5]
    launch_ptx(ptx, "k", 1, 1, [np.uint16(0x4000), np.uint16(0x3C00), pair, out], dev)
    assert out.copy_to_host().tolist()[:2] == [2.0, 1.0]
    with pytest.raises(LaunchError, match="int16"):
        launch_ptx(ptx, "k", 1, 1, [np.int16(1), np.float16(2.5), pair, out], dev)


def test_directed_conversions_lower_and_round_exactly():
    """cvt.rz/.rm/.rp from integers and f64 narrowing in every mode, through the IR interpreter."""
    ins = np.array([[16777217, 0, 0x00000003, 0xB5000001]], np.uint32)  # 2^24 + 1; a u64 / negative f64 at +8
    body = """
    ld.global.u32 %r1, [%rd1];
    ld.global.u64 %rd3, [%rd1+8];
    cvt.rz.f32.s32 %f1, %r1;
    cvt.rp.f32.s32 %f2, %r1;
    cvt.rm.f32.u64 %f3, %rd3;
    cvt.rp.f32.f64 %f4, %rd3;
    cvt.rz.f16.f32 %h1, %f2;
    mov.b32 %r2, %f1;
    mov.b32 %r3, %f2;
    mov.b32 %r4, %f3;
    mov.b32 %r5, %f4;
    cvt.u32.u16 %r6, %h1;
    st.global.u32 [%rd2], %r2;
    st.global.u32 [%rd2+4], %r3;
    st.global.u32 [%rd2+8], %r4;
    st.global.u32 [%rd2+12], %r5;
    st.global.u32 [%rd2+16], %r6;
"""
    got = run(body, ins, 5)[0].tolist()
    u64 = 0xB500000100000003
    f64 = Fraction(float(np.array([u64], np.uint64).view(np.float64)[0]))
    assert got == [round_exact(Fraction(16777217), "f32", "rz"), round_exact(Fraction(16777217), "f32", "rp"),
                   round_exact(Fraction(u64), "f32", "rm"), round_exact(f64, "f32", "rp", negative_zero=True),
                   round_exact(Fraction(16777218), "f16", "rz")]
