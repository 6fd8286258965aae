"""PTX forms issue 19 found missing (WARP_SZ, %dynamic_smem_size, vote without .sync, saturating and narrow
integer conversions, sad, cvt.pack, f64 approximations, nanosleep, FP8 conversions, video instructions), run
on both engines at -O0 and -O3. Every expected value comes from the PTX ISA 9.0 manual's definition restated
here with exact Python integers and fractions (and, for FP8, the OCP FP8 bit layouts), never from
xcc.semantics."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from xcc import runtime as rt

HEADER = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b16 %h<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 24;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    ld.global.u64 %rd6, [%rd4+8];
    ld.global.u64 %rd7, [%rd4+16];
    cvt.u32.u64 %r2, %rd5;
    cvt.u32.u64 %r3, %rd6;
    cvt.u32.u64 %r4, %rd7;
    mov.b64 %fd1, %rd5;
    mov.b64 %fd2, %rd6;
    mov.b32 %f1, %r2;
    mov.b32 %f2, %r3;
    mov.u64 %rd8, 0;
BODY
    mul.wide.u32 %rd9, %r1, 8;
    add.s64 %rd10, %rd2, %rd9;
    st.global.u64 [%rd10], %rd8;
    ret;
}
"""
"""Thread i loads three u64 inputs a, b, c (their low halves in %r2..%r4, their bits as %fd1, %fd2 and the
low halves as %f1, %f2), runs BODY and stores %rd8."""

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def run(body: str, inputs, engine: str, opt: int, header: str = HEADER) -> list[int]:
    rows = [[v & M64 for v in (list(t) + [0, 0, 0])[:3]] for t in inputs]
    dev = rt.Device()
    din = rt.to_device(np.array(rows, dtype=np.uint64).reshape(-1), dev)
    dout = rt.to_device(np.zeros(len(rows), np.uint64), dev)
    module = rt.load_module(header.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (len(rows), 1, 1), [din, dout])
    return [int(v) for v in dout.copy_to_host()]


def check(body: str, inputs, want, engine: str, opt: int) -> None:
    got = run(body, inputs, engine, opt)
    bad = [(i, [hex(v) for v in inputs[i]], hex(g), hex(w)) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, bad


def s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


INT_RANGE = {f"{k}{w}": ((-(1 << (w - 1)), (1 << (w - 1)) - 1) if k == "s" else (0, (1 << w) - 1))
             for k in "su" for w in (8, 16, 32, 64)}

# ----------------------------------------------------------------------------- WARP_SZ, %dynamic_smem_size, vote


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_warp_sz_is_the_constant_32(engine, opt):
    body = "mov.u32 %r5, WARP_SZ; add.u32 %r5, %r5, WARP_SZ; cvt.u64.u32 %rd8, %r5;"
    check(body, [(0,)] * 2, [64] * 2, engine, opt)


DYN_SMEM = r"""
.version 8.0
.target sm_90
.address_size 64
.shared .align 4 .b8 s[16];
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %dynamic_smem_size;
    mov.u32 %r2, s;
    st.shared.u32 [%r2], %r1;
    ld.shared.u32 %r3, [%r2];
    st.global.u32 [%rd1], %r3;
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dynamic", [0, 200])
def test_dynamic_smem_size_is_the_launch_dynamic_bytes(engine, opt, dynamic):
    """%dynamic_smem_size (PTX ISA 10.33): the dynamic shared memory of the launch, not the static 16 bytes."""
    dev = rt.Device()
    d = rt.to_device(np.zeros(1, np.uint32), dev)
    module = rt.load_module(DYN_SMEM, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [d], shared_mem=dynamic)
    assert int(d.copy_to_host()[0]) == dynamic


VOTES = [  # (body, reference over the warp's predicates)
    ("vote.all.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(all(ps))),
    ("vote.any.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(any(ps))),
    ("vote.uni.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(len(set(ps)) == 1)),
    ("vote.ballot.b32 %r5, %p1; cvt.u64.u32 %rd8, %r5;", lambda ps, i: sum(p << j for j, p in enumerate(ps))),
    ("vote.any.pred %p2, !%p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(not all(ps))),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("body, ref", VOTES)
@pytest.mark.parametrize("pattern", ["ones", "mixed", "zeros"])
def test_vote_without_sync_is_a_full_warp_vote(engine, opt, body, ref, pattern):
    """vote without .sync (deprecated, PTX ISA 9.7.13.1): on sm_70+ it is vote.sync with a full member mask.
    ptxas 13.0 takes it on sm_70+ only below PTX ISA 6.4, hence the old header."""
    preds = {"ones": [1] * 32, "zeros": [0] * 32, "mixed": [(i * 7) % 3 == 0 for i in range(32)]}[pattern]
    preds = [int(p) for p in preds]
    body = "setp.ne.u32 %p1, %r2, 0; " + body
    old = HEADER.replace(".version 8.0\n.target sm_90", ".version 6.3\n.target sm_70")
    got = run(body, [(p,) for p in preds], engine, opt, header=old)
    assert got == [ref(preds, i) for i in range(32)], got


# ----------------------------------------------------------------------------- saturating integer arithmetic

EDGES = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
         (1 << 31) - 1, 1 << 31, -(1 << 31), -(1 << 31) - 1, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, -(1 << 63),
         0x12345680, 0xFFFFFF7F, 0x7FFF_FFFF_0000_0001, 0x8000_0000_FFFF_FFFF, 0xDEADBEEF]


def _ext(v: int, t: str, width: int) -> int:
    """``v`` (in type ``t``'s range) in a ``width``-bit register: sign-extended for signed types, zero otherwise
    (PTX ISA 9.0 5.2.4, destination operands wider than the instruction type)."""
    bits = int(t[1:])
    v &= (1 << bits) - 1
    if t[0] == "s" and v >> (bits - 1):
        v -= 1 << bits
    return v & ((1 << width) - 1)


def _value(x: int, t: str) -> int:
    """The low ``t.bits`` of ``x`` read as type ``t``."""
    bits = int(t[1:])
    x &= (1 << bits) - 1
    return x - (1 << bits) if t[0] == "s" and x >> (bits - 1) else x


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_sub_sat_s32_clamps_to_the_s32_range(engine, opt, op):
    """add.sat.s32 / sub.sat.s32 (PTX ISA 9.7.1.1, 9.7.1.2): the exact sum clamped to [-2^31, 2^31 - 1]."""
    vals = [0, 1, -1, 2, (1 << 31) - 1, -(1 << 31), (1 << 30), -(1 << 30), 0x7FFFFFFE, -0x7FFFFFFF]
    pairs = [(a, b) for a in vals for b in vals][:1024]
    want = []
    for a, b in pairs:
        exact = a + b if op == "add" else a - b
        want.append(clamp(exact, -(1 << 31), (1 << 31) - 1) & M32)
    body = f"{op}.sat.s32 %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;"
    for chunk in range(0, len(pairs), 64):
        check(body, pairs[chunk:chunk + 64], want[chunk:chunk + 64], engine, opt)


INT_TYPES = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]
# The pairs ptxas 13.0 takes .sat on: those where the source range is not inside the destination's (cvt.sat.s32.s16
# is refused, "Illegal modifier '.sat'").
SAT_PAIRS = [(d, s) for d in INT_TYPES for s in INT_TYPES
             if d != s and not (int(d[1:]) >= int(s[1:]) if d[0] == s[0] else d[0] == "s" and int(d[1:]) > int(s[1:]))]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dst, src", SAT_PAIRS)
def test_cvt_sat_between_integer_types_clamps(engine, opt, dst, src):
    """cvt.sat.dst.src (PTX ISA 9.7.9.21): the source value (the source register's low src bits) clamped to
    dst's range. For 8- and 16-bit results only their own bits are compared (how they extend into the 32-bit
    register is xcc's rule for every narrow write, docs/isa.md, not this instruction's)."""
    sreg = "%rd5" if src[1:] == "64" else "%r2"
    width = int(dst[1:])
    if width == 64:
        body = f"cvt.sat.{dst}.{src} %rd8, {sreg};"
    else:
        body = f"cvt.sat.{dst}.{src} %r5, {sreg}; and.b32 %r5, %r5, {(1 << width) - 1}; cvt.u64.u32 %rd8, %r5;"
    lo, hi = INT_RANGE[dst]
    want = [_ext(clamp(_value(x, src), lo, hi), dst, width) for x in EDGES]
    check(body, [(x,) for x in EDGES], want, engine, opt)


# ----------------------------------------------------------------------------- float to 8/16-bit integers

FLOATS = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.7, -2.7, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0,
          32767.5, -32768.5, -32769.0, 65535.4, 65535.5, 65536.0, 1e10, -1e10, 1e-40, -1e-40, math.inf, -math.inf,
          math.nan, -math.nan, 3.4999998]


def _round(x: Fraction, mode: str) -> int:
    if mode == "rzi":
        return math.trunc(x)
    if mode == "rmi":
        return math.floor(x)
    if mode == "rpi":
        return math.ceil(x)
    return round(x)  # rni: to nearest, ties to even (Python's round of a Fraction)


def _f2i_ref(x: float, mode: str, dst: str, src: str = "f32") -> int:
    """cvt.{mode}.dst.f32/f64 (PTX ISA 9.7.9.21): rounded to an integer, saturated to dst's range; NaN -> 0,
    except from f64 (any destination) and to 64-bit integers, where it is the destination's top bit alone (the
    H200's results, docs/semantics.md)."""
    if math.isnan(x):
        w = int(dst[1:])
        if src == "f64" or w == 64:
            top = 1 << (w - 1)
            return top - (1 << w) if dst[0] == "s" else top
        return 0
    lo, hi = INT_RANGE[dst]
    if math.isinf(x):
        return lo if x < 0 else hi
    return clamp(_round(Fraction(x), mode), lo, hi)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["rni", "rzi", "rmi", "rpi"])
@pytest.mark.parametrize("dst", ["s8", "u8", "s16", "u16"])
@pytest.mark.parametrize("src", ["f32", "f64"])
def test_cvt_float_to_narrow_integer_saturates(engine, opt, mode, dst, src):
    if src == "f32":
        vals = [struct.unpack("<f", struct.pack("<f", x))[0] for x in FLOATS]  # each rounded to f32
        inputs = [(f32_bits(x),) for x in vals]
    else:
        vals = FLOATS
        inputs = [(f64_bits(x),) for x in vals]
    reg = "%f1" if src == "f32" else "%fd1"
    width = int(dst[1:])
    body = (f"cvt.{mode}.{dst}.{src} %h1, {reg}; cvt.u64.u16 %rd8, %h1; "
            f"and.b64 %rd8, %rd8, {(1 << width) - 1};")
    check(body, inputs, [_f2i_ref(x, mode, dst, src) & ((1 << width) - 1) for x in vals], engine, opt)


# ----------------------------------------------------------------------------- sad, nanosleep

SAD_VALUES = [0, 1, -1, 5, 0x7F, 0x80, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
              0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0x1234_5678_9ABC_DEF0]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["u16", "s16", "u32", "s32", "u64", "s64"])
def test_sad_is_c_plus_the_absolute_difference(engine, opt, t):
    """sad.type d, a, b, c (PTX ISA 9.7.1.13): d = c + ((a < b) ? b - a : a - b), wrapping in the type."""
    bits = int(t[1:])
    triples = [(a, b, c) for a in SAD_VALUES for b in SAD_VALUES[::2] for c in (0, 3, -1)][:512]
    if bits == 64:
        body = f"sad.{t} %rd8, %rd5, %rd6, %rd7;"
    elif bits == 32:
        body = f"sad.{t} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    else:
        body = (f"cvt.u16.u32 %h1, %r2; cvt.u16.u32 %h2, %r3; cvt.u16.u32 %h3, %r4; "
                f"sad.{t} %h4, %h1, %h2, %h3; cvt.u64.u16 %rd8, %h4;")
    want = []
    for a, b, c in triples:
        va, vb, vc = _value(a, t), _value(b, t), _value(c, t)
        want.append((vc + (vb - va if va < vb else va - vb)) & ((1 << bits) - 1))
    for i in range(0, len(triples), 128):
        check(body, triples[i:i + 128], want[i:i + 128], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_nanosleep_runs(engine, opt):
    """nanosleep.u32 t (PTX ISA 9.7.13.10): a sleep of at most 2t ns; nothing else changes."""
    check("nanosleep.u32 %r2; nanosleep.u32 1000; add.u32 %r5, %r2, 1; cvt.u64.u32 %rd8, %r5;",
          [(7,), (0,)], [8, 1], engine, opt)


# ----------------------------------------------------------------------------- f64 approximations

F64_VALUES = [1.0, 4.0, 2.0, 0.25, 3.0, 1e-300, 1e300, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-310,
              5e-324, -1e-310, 0.0, -0.0, math.inf, -math.inf, -1.0, math.nan, 123456.789, 0.1]


def _is_nan64(bits: int) -> bool:
    return (bits >> 52) & 0x7FF == 0x7FF and bits & ((1 << 52) - 1) != 0


def _rsqrt_ref(x: float, ftz: bool) -> float:
    """rsqrt.approx{.ftz}.f64 (PTX ISA 9.7.3.16): 1/sqrt(a); -0 -> -inf, +0 -> +inf, +inf -> +0, a < 0 -> NaN.
    xcc computes 1/sqrt(a) with two IEEE roundings (docs/semantics.md), which this reference restates with the
    host's IEEE sqrt and division; .ftz flushes a subnormal input to the zero of its sign first."""
    if ftz and x != 0 and abs(x) < 2.2250738585072014e-308:
        x = math.copysign(0.0, x)
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    return 1.0 / math.sqrt(x)


def _rcp_ref(x: float, ftz: bool) -> float:
    if ftz and x != 0 and abs(x) < 2.2250738585072014e-308:
        x = math.copysign(0.0, x)
    if math.isnan(x):
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    return float(1 / Fraction(x)) if not math.isinf(x) else math.copysign(0.0, x)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["rsqrt.approx.f64", "rsqrt.approx.ftz.f64", "rcp.approx.ftz.f64"])
def test_f64_approximations(engine, opt, form):
    ftz = ".ftz" in form
    ref = _rsqrt_ref if form.startswith("rsqrt") else _rcp_ref
    got = run(f"{form} %fd3, %fd1; mov.b64 %rd8, %fd3;", [(f64_bits(x),) for x in F64_VALUES], engine, opt)
    for x, g in zip(F64_VALUES, got, strict=True):
        want = ref(x, ftz)
        if math.isnan(want):
            assert _is_nan64(g), (x, hex(g))
        else:
            assert g == f64_bits(want), (x, hex(g), want)
    if form.startswith("rsqrt"):  # the documented choice is within 2 ulp of the exact 1/sqrt(a)
        for x in (3.0, 0.1, 123456.789, 1e-300):
            r = Fraction(ref(x, ftz))
            err = abs(r * r * Fraction(x) - 1)
            assert err < Fraction(4, 1 << 52)


# ----------------------------------------------------------------------------- cvt.pack


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["u16", "s16", "u8", "s8"])
def test_cvt_pack_saturates_and_packs(engine, opt, t):
    """cvt.pack.sat.t.s32{.b32} d, a, b{, c} (PTX ISA 9.7.9.21): a, b clamped to t; d = c << 2n | a << n | b."""
    n = int(t[1:])
    lo, hi = INT_RANGE[t]
    vals = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536, (1 << 31) - 1,
            -(1 << 31)]
    triples = [(a, b, c) for a in vals for b in vals[::3] for c in (0, 0xDEADBEEF)]
    if n == 16:
        body = f"cvt.pack.sat.{t}.s32 %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;"
    else:
        body = f"cvt.pack.sat.{t}.s32.b32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    want = []
    for a, b, c in triples:
        ta, tb = clamp(s32(a), lo, hi) & ((1 << n) - 1), clamp(s32(b), lo, hi) & ((1 << n) - 1)
        r = ta << n | tb
        if n == 8:
            r |= c << 16
        want.append(r & M32)
    for i in range(0, len(triples), 128):
        check(body, triples[i:i + 128], want[i:i + 128], engine, opt)


# ----------------------------------------------------------------------------- FP8 (OCP 8-bit floating point)

FP8_FORMATS = {"e4m3x2": (4, 3, 7), "e5m2x2": (5, 2, 15)}  # exponent bits, mantissa bits, bias


def fp8_value(code: int, kind: str):
    """The value of an fp8 code by the OCP FP8 v1.0 definitions: None for NaN, +-inf as floats."""
    e_bits, m_bits, bias = FP8_FORMATS[kind]
    sign = -1 if code & 0x80 else 1
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if kind == "e4m3x2" and e == 15 and m == 7:
        return None
    if kind == "e5m2x2" and e == 31:
        return None if m else sign * math.inf
    if e == 0:
        return sign * Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)


def fp8_encode(x: float, kind: str) -> int:
    """f32 x -> fp8, rounded to nearest (ties to the even code), .satfinite (largest finite), NaN -> 0x7F."""
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if math.copysign(1, x) < 0 else 0
    mag = abs(x)
    finite = [c for c in range(0x80) if fp8_value(c, kind) is not None and not math.isinf(fp8_value(c, kind))]
    if math.isinf(mag):
        return sign | max(finite)
    target = Fraction(mag)
    best = min(finite, key=lambda c: (abs(fp8_value(c, kind) - target), c & 1))
    return sign | best


F32_FP8 = [0.0, -0.0, 1.0, -1.0, 0.1, 448.0, 449.0, 464.0, 480.0, 500.0, -1e30, 1e30, math.inf, -math.inf, math.nan,
           2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 5 * 2.0 ** -10, 2.0 ** -6 * 1.0625, 2.0 ** -7 * 1.5, 1e-45, 0.3,
           57344.0, 61440.0, 65536.0, 2.0 ** -16, 2.0 ** -17, 3 * 2.0 ** -17, 1.125, 1.1875, 1.3125, 15.5, -240.0,
           2.0 ** -14 * 1.125, 0.0009765625, 7.0, 7.5, 9.0]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("kind", ["e4m3x2", "e5m2x2"])
def test_cvt_f32_to_fp8x2(engine, opt, kind):
    """cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b (PTX ISA 9.7.9.21): d[15:8] = fp8(a), d[7:0] = fp8(b)."""
    vals = [struct.unpack("<f", struct.pack("<f", x))[0] for x in F32_FP8]
    pairs = [(a, b) for a, b in zip(vals, vals[1:] + vals[:1], strict=True)]
    body = f"cvt.rn.satfinite.{kind}.f32 %h1, %f1, %f2; cvt.u64.u16 %rd8, %h1;"
    want = [fp8_encode(a, kind) << 8 | fp8_encode(b, kind) for a, b in pairs]
    check(body, [(f32_bits(a), f32_bits(b)) for a, b in pairs], want, engine, opt)


def _f16_bits(code: int, kind: str) -> int:
    """The f16 bits of fp8 ``code`` (exact; the canonical NaN 0x7FFF; -0 keeps its sign)."""
    v = fp8_value(code, kind)
    if v is None:
        return 0x7FFF
    return struct.unpack("<H", struct.pack("<e", math.copysign(float(abs(v)), -1 if code & 0x80 else 1)))[0]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("kind", ["e4m3x2", "e5m2x2"])
def test_cvt_fp8x2_to_f16x2_is_exact(engine, opt, kind):
    """cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a (PTX ISA 9.7.9.21): every one of the 256 codes, in both halves."""
    codes = list(range(256))
    pairs = [(c, (c * 37 + 11) & 0xFF) for c in codes]
    body = f"cvt.u16.u32 %h1, %r2; cvt.rn.f16x2.{kind} %r5, %h1; cvt.u64.u32 %rd8, %r5;"
    want = [_f16_bits(hi, kind) << 16 | _f16_bits(lo, kind) for hi, lo in pairs]
    for i in range(0, 256, 128):
        check(body, [(hi << 8 | lo,) for hi, lo in pairs[i:i + 128]], want[i:i + 128], engine, opt)


# ----------------------------------------------------------------------------- ld.const: narrow, computed address

CONST_TABLE = bytes([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xFF, 0x80])
LD_CONST = r"""
.version 8.0
.target sm_90
.address_size 64
.const .align 8 .b8 tab[16] = {TABLE};
.visible .entry k(.param .u64 out)
{
    .reg .b16 %h<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, tab;
BODY
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u64 [%rd4], %rd8;
    ret;
}
""".replace("TABLE", ", ".join(str(b) for b in CONST_TABLE))


def _const_read(at: int, t: str) -> int:
    n = int(t[1:]) // 8
    v = int.from_bytes(CONST_TABLE[at:at + n], "little")
    return _value(v, t) if t[0] == "s" else v


LD_CONST_CASES = [  # (body, reference for thread i)
    ("ld.const.u16 %h1, [tab+2]; cvt.u64.u16 %rd8, %h1;", lambda i: _const_read(2, "u16")),
    ("ld.const.s16 %h1, [tab+14]; cvt.s64.s16 %rd8, %h1;", lambda i: _const_read(14, "s16") & M64),
    ("ld.const.u8 %r5, [tab+15]; cvt.u64.u32 %rd8, %r5;", lambda i: _const_read(15, "u8")),
    ("ld.const.s8 %rd8, [tab+14];", lambda i: _const_read(14, "s8") & M64),
    ("mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd2, %rd5; ld.const.u32 %r5, [%rd6]; cvt.u64.u32 %rd8, %r5;",
     lambda i: _const_read(4 * i, "u32")),
    ("mul.wide.u32 %rd5, %r1, 2; add.s64 %rd6, %rd2, %rd5; ld.const.u16 %h1, [%rd6]; cvt.u64.u16 %rd8, %h1;",
     lambda i: _const_read(2 * i, "u16")),
    ("cvt.u64.u32 %rd5, %r1; add.s64 %rd6, %rd2, %rd5; ld.const.s8 %r5, [%rd6+12]; cvt.u64.u32 %rd8, %r5;",
     lambda i: _const_read(12 + i, "s8") & M32),
    ("and.b32 %r2, %r1, 1; mul.wide.u32 %rd5, %r2, 8; add.s64 %rd6, %rd2, %rd5; ld.const.u64 %rd8, [%rd6];",
     lambda i: _const_read(8 * (i & 1), "u64")),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("body, ref", LD_CONST_CASES)
def test_ld_const_narrow_and_computed_address(engine, opt, body, ref):
    """ld.const of 8/16-bit values (extended by the type's signedness into the register, PTX ISA 9.7.9.8) and
    through a run-time address (xg1: a generic load through the const window)."""
    dev = rt.Device()
    d = rt.to_device(np.zeros(4, np.uint64), dev)
    module = rt.load_module(LD_CONST.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (4, 1, 1), [d])
    assert [int(v) for v in d.copy_to_host()] == [ref(i) for i in range(4)]


# ----------------------------------------------------------------------------- scalar video instructions

_VSEL = {"": (0, 32), "b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def _video_ref(vop, dt, at, bt, sat, op2, asel, bsel, dsel, a, b, c, flag=""):
    """PTX ISA 9.7.10.1: ta/tb = the selected parts extended by their types; tmp = vop(ta, tb) exactly;
    optSaturate (to dtype, or to the dsel sub-word); then op2 with c, or the merge into c."""
    def part(x, t, sel):
        shift, width = _VSEL[sel]
        return _value((x & M32) >> shift, f"{t[0]}{width}")
    ta, tb = part(a, at, asel), part(b, bt, bsel)
    if vop in ("vshl", "vshr"):
        tb = min(tb, 32) if flag == "clamp" else tb & 31
        tmp = ta << tb if vop == "vshl" else ta >> tb
    elif vop == "vset":
        tmp = int({"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb, "gt": ta > tb,
                   "ge": ta >= tb}[flag])
    else:
        tmp = {"vadd": ta + tb, "vsub": ta - tb, "vabsdiff": abs(ta - tb), "vmin": min(ta, tb),
               "vmax": max(ta, tb)}[vop]
    width = _VSEL[dsel][1]
    if sat:
        lo, hi = INT_RANGE[f"{dt[0]}{width}"] if width < 32 else INT_RANGE[dt]
        tmp = clamp(tmp, lo, hi)
    r = tmp & M32
    if op2 == "add":
        r = (r + c) & M32
    elif op2 in ("min", "max"):
        f = min if op2 == "min" else max
        r = f(_value(r, dt), _value(c, dt)) & M32
    if dsel:
        shift, w = _VSEL[dsel]
        mask = ((1 << w) - 1) << shift
        r = (c & M32 & ~mask) | ((r << shift) & mask)
    return r


VIDEO_FORMS = [  # (vop, dtype, atype, btype, sat, op2, asel, bsel, dsel)
    ("vadd", "s32", "s32", "s32", False, None, "", "", ""),
    ("vadd", "s32", "s32", "s32", True, None, "", "", ""),
    ("vadd", "u32", "u32", "u32", True, None, "", "", ""),
    ("vadd", "s32", "u32", "s32", True, None, "b0", "h0", ""),
    ("vsub", "u32", "s32", "u32", True, None, "b3", "h1", ""),
    ("vsub", "s32", "s32", "s32", False, "add", "", "", ""),
    ("vabsdiff", "u32", "s32", "s32", False, None, "", "", ""),
    ("vabsdiff", "s32", "u32", "u32", True, "max", "b1", "b2", ""),
    ("vmin", "s32", "s32", "u32", False, "min", "h1", "", ""),
    ("vmax", "u32", "s32", "s32", True, None, "", "", ""),
    ("vmax", "s32", "s32", "s32", False, None, "b2", "b0", ""),
    ("vadd", "s32", "s32", "s32", True, None, "", "", "b1"),
    ("vadd", "u32", "u32", "u32", True, None, "b0", "b1", "h1"),
    ("vsub", "s32", "s32", "s32", False, None, "h0", "h1", "b3"),
]
VIDEO_VALUES = [0, 1, -1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0x12345678,
                0xFEDCBA98, 0x00FF80FF]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", VIDEO_FORMS, ids=lambda f: ".".join(str(x) for x in f if x))
def test_scalar_video_instructions(engine, opt, form):
    vop, dt, at, bt, sat, op2, asel, bsel, dsel = form
    text = ".".join([vop, dt, at, bt] + (["sat"] if sat else []) + ([op2] if op2 else []))
    sel = lambda r, s: f"{r}.{s}" if s else r  # noqa: E731
    tail = ", %r4" if op2 or dsel else ""
    dest = "%r5"
    body = f"mov.u32 %r5, %r4; {text} {sel(dest, dsel)}, {sel('%r2', asel)}, {sel('%r3', bsel)}{tail}; " \
           "cvt.u64.u32 %rd8, %r5;"
    triples = [(a, b, (a * 7 + b) & M32) for a in VIDEO_VALUES for b in VIDEO_VALUES[::2]]
    want = [_video_ref(vop, dt, at, bt, sat, op2, asel, bsel, dsel, a, b, c) for a, b, c in triples]
    check(body, triples, want, engine, opt)


# ----------------------------------------------------------------------------- vector register elements

VECTOR_BODY = """{
    .reg .v4 .b32 %v;
    .reg .v2 .b64 %w;
    mov.b32 %v.x, %r2;
    mov.b32 %v.w, %r3;
    mov.b32 %v.g, %r4;
    add.u32 %r5, %v.x, %v.a;
    add.u32 %r5, %r5, %v.y;
    mov.b64 %w.y, %rd5;
    add.u64 %rd8, %w.y, 0;
    cvt.u64.u32 %rd9, %r5;
    add.u64 %rd8, %rd8, %rd9;
}"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_vector_register_elements(engine, opt):
    """%v.x .y .z .w (and .r .g .b .a) of .v2/.v4 registers (PTX ISA 5.4.2) are registers of the element type."""
    rows = [(1, 2, 3), (0xFFFFFFFF, 1, 0x100000000)]
    want = [(a + ((a + b + c) & M32)) & M64 for a, b, c in ((r[0], r[1], r[2] & M32) for r in rows)]
    check(VECTOR_BODY, rows, want, engine, opt)


VIDEO_MORE = [  # (vop, dtype, atype, btype, sat, op2, asel, bsel, dsel, mode or comparison)
    ("vshl", "s32", "s32", "u32", False, None, "", "", "", "clamp"),
    ("vshl", "s32", "s32", "u32", True, None, "", "b0", "", "clamp"),
    ("vshl", "u32", "u32", "u32", True, None, "h1", "b0", "", "wrap"),
    ("vshr", "s32", "s32", "u32", False, None, "", "b0", "", "clamp"),
    ("vshr", "u32", "u32", "u32", False, "add", "", "b1", "", "wrap"),
    ("vshr", "s32", "s32", "u32", True, None, "b3", "b0", "h0", "clamp"),
    ("vset", "u32", "s32", "s32", False, None, "", "", "", "lt"),
    ("vset", "u32", "u32", "s32", False, "add", "b0", "b1", "", "ge"),
    ("vset", "u32", "s32", "u32", False, None, "h1", "", "b2", "ne"),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", VIDEO_MORE, ids=lambda f: ".".join(str(x) for x in f if x))
def test_video_shifts_and_set(engine, opt, form):
    """vshl/vshr (.clamp/.wrap) and vset (PTX ISA 9.7.10.2, 9.7.10.4), same harness as the arithmetic forms."""
    vop, dt, at, bt, sat, op2, asel, bsel, dsel, flag = form
    types = [at, bt] if vop == "vset" else [dt, at, bt]
    text = ".".join([vop, *types] + (["sat"] if sat else []) + [flag] + ([op2] if op2 else []))
    sel = lambda r, s: f"{r}.{s}" if s else r  # noqa: E731
    tail = ", %r4" if op2 or dsel else ""
    body = f"mov.u32 %r5, %r4; {text} {sel('%r5', dsel)}, {sel('%r2', asel)}, {sel('%r3', bsel)}{tail}; " \
           "cvt.u64.u32 %rd8, %r5;"
    counts = [0, 1, 7, 31, 32, 33, 0x120, 0xFFFFFFFF]
    triples = [(a, b, (a * 7 + b) & M32) for a in VIDEO_VALUES for b in (counts if vop != "vset" else VIDEO_VALUES)]
    want = [_video_ref(vop, dt, at, bt, sat, op2, asel, bsel, dsel, a, b, c, flag) for a, b, c in triples]
    for i in range(0, len(triples), 128):
        check(body, triples[i:i + 128], want[i:i + 128], engine, opt)


def _simd_ref(vop, n, dt, at, bt, sat, acc, a, b, c):
    """PTX ISA 9.7.10.3 with the default selectors and mask: element i of a and b, extended by type; merge form:
    saturated (.sat) to dtype's element range, low bits packed; .add: c + the sum of the element results."""
    w = 32 // n
    total, out = 0, 0
    for i in range(n):
        ea, eb = _value(a >> (i * w), f"{at[0]}{w}"), _value(b >> (i * w), f"{bt[0]}{w}")
        r = {"add": ea + eb, "sub": ea - eb, "absdiff": abs(ea - eb), "min": min(ea, eb), "max": max(ea, eb)}[vop]
        total += r
        if sat:
            r = clamp(r, *INT_RANGE[f"{dt[0]}{w}"])
        out |= (r & ((1 << w) - 1)) << (i * w)
    return (c + total) & M32 if acc else out


SIMD_FORMS = [(vop, n, dt, at, bt, sat, acc)
              for vop in ("add", "sub", "absdiff", "min", "max") for n in (2, 4)
              for dt, at, bt, sat, acc in (("u32", "u32", "u32", True, False), ("s32", "s32", "s32", True, False),
                                           ("s32", "u32", "s32", False, False), ("u32", "u32", "u32", False, True),
                                           ("s32", "s32", "u32", False, True))]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", SIMD_FORMS, ids=lambda f: "-".join(str(x) for x in f))
def test_simd_video_instructions(engine, opt, form):
    vop, n, dt, at, bt, sat, acc = form
    text = ".".join([f"v{vop}{n}", dt, at, bt] + (["sat"] if sat else []) + (["add"] if acc else []))
    body = f"{text} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    vals = [0, 0xFFFFFFFF, 0x7F80FF01, 0x80007FFF, 0x12345678, 0xFEDCBA98, 0x01010101, 0x7F7F7F7F]
    triples = [(a, b, 0x1000) for a in vals for b in vals]
    want = [_simd_ref(vop, n, dt, at, bt, sat, acc, a, b, c) for a, b, c in triples]
    check(body, triples, want, engine, opt)


V8 = r"""
.version 8.8
.target sm_100
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .f32 %f<9>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v8.u32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];
    ld.global.v8.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1+32];
    add.u32 %r0, %r0, %r7;
    add.f32 %f7, %f7, %f0;
    st.global.v8.u32 [%rd2], {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};
    st.global.v8.f32 [%rd2+32], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_v8_loads_and_stores(engine, opt):
    """ld/st.global.v8.{u32,f32} (PTX ISA 9.7.9.8/9, 256-bit accesses, sm_100)."""
    x = np.concatenate([np.arange(1, 9, dtype=np.uint32), np.arange(8, dtype=np.float32).view(np.uint32) + 0])
    dev = rt.Device()
    din, dout = rt.to_device(x, dev), rt.to_device(np.zeros(16, np.uint32), dev)
    rt.load_module(V8, device=dev, engine=engine, opt_level=opt).get_function("k").launch((1, 1, 1), (1, 1, 1),
                                                                                        [din, dout])
    got = dout.copy_to_host()
    assert list(got[:8]) == [9, 2, 3, 4, 5, 6, 7, 8]
    assert list(got[8:].view(np.float32)) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
