"""Issue 19's last refused forms: ``sqrt.{rz,rm,rp}{.ftz}.f32`` (exact directed rounding) and ``testp`` with no
test named (ptxas 13.0 emits nothing for it: the predicate keeps its value); run on both engines at -O0 and -O3.
Expected values come from exact integer square roots (``math.isqrt`` of the scaled operand), never xcc.semantics."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from test_isa_gaps import ENGINES

from xcc import runtime as rt

SQRT = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    sqrt.MODE.f32 %f2, %f1;
    st.global.f32 [%rd5], %f2;
    ret;
}
"""
CANONICAL_NAN = 0x7FFFFFFF  # docs/semantics.md: an f32 NaN result is the canonical NaN


def _f32_value(bits: int) -> Fraction:
    e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    v = Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else Fraction((1 << 23) | m, 1 << 23) * Fraction(2) ** (e - 127)
    return -v if bits >> 31 else v


def _sqrt_ref(bits: int, rnd: str, ftz: bool) -> int:
    """The f32 result bits of sqrt.rnd{.ftz}.f32 from an exact integer square root."""
    e = (bits >> 23) & 0xFF
    if ftz and e == 0:
        bits &= 0x80000000
    if (bits & 0x7FFFFFFF) > 0x7F800000 or (bits >> 31 and bits & 0x7FFFFFFF):
        return CANONICAL_NAN  # NaN, or a negative non-zero (-inf included)
    if bits & 0x7FFFFFFF in (0, 0x7F800000):
        return bits  # +-0 and +inf are their own roots
    x = _f32_value(bits)
    # root in [2^k, 2^(k+1)) -> 24 significant bits: q = floor(sqrt(x) * 2^(23-k)) exactly by isqrt
    k = (x.numerator.bit_length() - x.denominator.bit_length()) // 2 + 1
    while Fraction(2) ** (2 * k) > x:
        k -= 1
    s = Fraction(2) ** (2 * (23 - k)) * x  # sqrt(x) * 2^(23-k) = sqrt(s)
    q = math.isqrt(s.numerator // s.denominator)
    exact = Fraction(q * q) == s
    if not exact and rnd == "rp":
        q += 1
    val = Fraction(q) * Fraction(2) ** (k - 23)
    return struct.unpack("<I", struct.pack("<f", float(val)))[0]  # val is an f32 (q <= 2^24)


EDGES = [0x00000000, 0x80000000, 0x00000001, 0x00000002, 0x00000003, 0x007FFFFF, 0x00400000, 0x80000001,
         0x807FFFFF, 0x00800000, 0x00800001, 0x3F800000, 0x3F800001, 0x40000000, 0x40400000, 0x3FFFFFFF,
         0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0xBF800000,
         0x4B000001, 0x3E800000, 0x0000FFFF, 0x41C80000]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["rz", "rm", "rp", "rz.ftz", "rm.ftz", "rp.ftz"])
def test_sqrt_directed_f32(engine, opt, mode):
    rng = np.random.default_rng(5)
    vals = EDGES + [int(v) for v in rng.integers(0, 1 << 32, 100, dtype=np.uint64)]
    n = len(vals)
    dev = rt.Device()
    a = rt.to_device(np.array(vals, np.uint32), dev)
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module(SQRT.replace("MODE", mode), device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (n, 1, 1), [a, out])
    rnd, ftz = mode.split(".")[0], mode.endswith("ftz")
    got = [int(v) for v in out.copy_to_host()]
    want = [_sqrt_ref(v, rnd, ftz) for v in vals]
    bad = [(hex(v), hex(g), hex(w)) for v, g, w in zip(vals, got, want) if g != w]
    assert not bad, bad[:8]


TESTP = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .f32 %f<2>;
    .reg .f64 %fd<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 1;
    setp.lt.u32 %p2, %r1, 5;
    mov.f32 %f1, 0f7FC00000;
    cvt.f64.f32 %fd1, %f1;
    testp.f32 %p1, %f1;
    testp.f64 %p2, %fd1;
    selp.u32 %r3, 1, 0, %p1;
    selp.u32 %r2, 2, 0, %p2;
    add.u32 %r3, %r3, %r2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_testp_without_a_test_leaves_the_predicate(engine, opt):
    """testp.f32/.f64 with no test named compile to nothing (ptxas 13.0's cubin equals the one without the line):
    p1 = odd thread, p2 = thread < 5 survive a NaN operand that every named test would classify."""
    n = 32
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module(TESTP, device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (n, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [(i & 1) + (2 if i < 5 else 0) for i in range(n)]
