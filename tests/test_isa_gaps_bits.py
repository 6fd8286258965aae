"""PTX forms issue 19's audit found refused (lop3 and its .BoolOp form, cnot, slct, testp, szext, 16x2 min/max,
.xorsign.abs, min.NaN.f32 and max.relu.s32 on xg1, mad.hi.sat.s32, cache hints and createpolicy, %globaltimer_lo/hi,
%pm<n>), run on both engines at -O0 and -O3 (xcc.ir.lower_bits). Expected values restate the PTX ISA 9.0 manual's
definitions with Python integers and floats (struct for the bit layouts), never xcc.semantics."""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

import numpy as np
import pytest
from test_isa_gaps import ENGINES, HEADER, M32, M64, check, run, s32

from xcc import runtime as rt

F32_EDGE = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
            0x7F800001, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x40490FDB, 0xC0000000]
F64_EDGE = [0, 1 << 63, 0x3FF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
            0x7FF0000000000001, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF]
I32_EDGE = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0x8000, 0xFFFF8000, 31, 32, 33]


def pairs(values):
    return [(a, b) for a in values for b in values]


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & M32))[0]


# ----------------------------------------------------------------------------- lop3, cnot


def lop3_ref(a: int, b: int, c: int, lut: int, bits: int) -> int:
    return sum(((lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) & 1) << i for i in range(bits))


LUTS = [0x00, 0xFF, 0x96, 0xE8, 0xF0, 0xCC, 0xAA, 0x0F, 0x80, 0x01, 0x6A, 0x1B, 0xFE, 0x40]
ABC = [(0x0F0F0F0F, 0x00FF00FF, 0x3333CCCC), (M32, 0, 0x12345678), (0xDEADBEEF, 0xCAFEF00D, 0x80000001)]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("lut", LUTS)
def test_lop3_b32_every_kind_of_table(engine, opt, lut):
    body = f"lop3.b32 %r5, %r2, %r3, %r4, {lut:#x}; cvt.u64.u32 %rd8, %r5;"
    check(body, ABC, [lop3_ref(a, b, c, lut, 32) for a, b, c in ABC], engine, opt)


def test_lop3_b64_is_refused_as_ptxas_does():
    """ptxas 13.0 refuses lop3.b64 on every target ("Unexpected instruction types specified for 'lop3'"; the PTX ISA
    gives lop3 .b32 only); xcc, which once took it as an extension, now refuses it too, located."""
    from xcc.diagnostics import XccError

    msg = "'lop3.b64': unexpected instruction type .b64 for 'lop3' (.b32 only)"
    with pytest.raises(XccError, match=r":\d+:\d+: error: " + re.escape(msg)):
        run("lop3.b64 %rd8, %rd5, %rd6, %rd7, 0xB4;", [(0,)], "isa", 0)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("boolop", ["or", "and"])
def test_lop3_boolop_form_sets_the_predicate(engine, opt, boolop):
    """PTX ISA 8.2: ``lop3.BoolOp.b32 d|p, a, b, c, immLut, q``: p = (d != 0) BoolOp q; here q = (a's bit 31)."""
    body = (f"setp.lt.s32 %p1, %r2, 0; lop3.{boolop}.b32 %r5|%p2, %r2, %r3, %r4, 0x80, %p1;"
            " selp.u64 %rd9, 1, 0, %p2; cvt.u64.u32 %rd8, %r5; shl.b64 %rd9, %rd9, 32; or.b64 %rd8, %rd8, %rd9;")
    rows = [(M32, M32, 1), (M32, 0, 0), (0x7FFFFFFF, 0xF, 0xF), (0, 0, 0), (0x80000000, 0, 0)]
    want = []
    for a, b, c in rows:
        d = a & b & c
        p = (d != 0) or bool(a >> 31) if boolop == "or" else (d != 0) and bool(a >> 31)
        want.append(int(p) << 32 | d)
    check(body, rows, want, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t, bits", [("b16", 16), ("b32", 32), ("b64", 64)])
def test_cnot(engine, opt, t, bits):
    rows = [(0,), (1,), (1 << (bits - 1),), ((1 << bits) - 1,), (1 << bits,)]  # the last: 0 in the low bits
    body = {"b16": "cvt.u16.u32 %h1, %r2; cnot.b16 %h2, %h1; cvt.u64.u16 %rd8, %h2;",
            "b32": "cnot.b32 %r5, %r2; cvt.u64.u32 %rd8, %r5;", "b64": "cnot.b64 %rd8, %rd5;"}[t]
    check(body, rows, [int(r[0] & ((1 << bits) - 1) == 0) for r in rows], engine, opt)


# ----------------------------------------------------------------------------- slct, testp


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_slct_s32_selector(engine, opt):
    rows = [(11, 22, c) for c in (0, 1, 0x7FFFFFFF, 0x80000000, M32)]
    check("slct.u32.s32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;", rows,
          [a if s32(c) >= 0 else b for a, b, c in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("ftz", [False, True])
def test_slct_f32_selector(engine, opt, ftz):
    """c >= 0.0 selects a: -0.0 does, NaN does not; with .ftz a negative subnormal is -0.0 and selects a."""
    body = f"slct{'.ftz' if ftz else ''}.u64.f32 %rd8, %rd5, %rd6, %f3;"
    body = "mov.b32 %f3, %r4; " + body
    rows = [(0xAAAA, 0xBBBB, c) for c in F32_EDGE]

    def sel(c):
        if ftz and (c & 0x7F800000) == 0:
            c &= 0x80000000
        x = f32(c)
        return not math.isnan(x) and x >= 0.0

    check(body, rows, [a if sel(c) else b for a, b, c in rows], engine, opt)


def classify(x: float, smallest: float) -> dict[str, bool]:
    return {"finite": math.isfinite(x), "infinite": math.isinf(x), "number": not math.isnan(x),
            "notanumber": math.isnan(x), "normal": math.isfinite(x) and (x == 0 or abs(x) >= smallest),
            "subnormal": x != 0 and abs(x) < smallest}


TESTP = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", TESTP)
def test_testp_f32(engine, opt, op):
    rows = [(b,) for b in F32_EDGE]
    body = f"testp.{op}.f32 %p2, %f1; selp.u64 %rd8, 1, 0, %p2;"
    check(body, rows, [int(classify(f32(b), 2.0 ** -126)[op]) for (b,) in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", TESTP)
def test_testp_f64(engine, opt, op):
    rows = [(b,) for b in F64_EDGE]
    body = f"testp.{op}.f64 %p2, %fd1; selp.u64 %rd8, 1, 0, %p2;"
    want = [int(classify(struct.unpack("<d", struct.pack("<Q", b))[0], 2.0 ** -1022)[op]) for (b,) in rows]
    check(body, rows, want, engine, opt)


# ----------------------------------------------------------------------------- szext


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@pytest.mark.parametrize("t", ["s32", "u32"])
def test_szext(engine, opt, mode, t):
    """The low b bits of a (b = min(b, 32) or b mod 32), sign- or zero-extended; 0 bits give 0."""
    rows = [(a, n) for a in (0x12345678, 0x80000000, M32, 0x00008765) for n in (0, 1, 4, 16, 31, 32, 33, 255, M32)]

    def ref(a, n):
        n = min(n, 32) if mode == "clamp" else n % 32
        if n == 0:
            return 0
        v = a & ((1 << n) - 1)
        if t == "s32" and v >> (n - 1):
            v -= 1 << n
        return v & M32

    check(f"szext.{mode}.{t} %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;", rows, [ref(a, n) for a, n in rows],
          engine, opt)


# ----------------------------------------------------------------------------- min/max forms


def lanes16(x: int) -> list[int]:
    return [x & 0xFFFF, x >> 16 & 0xFFFF]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["min.s16x2", "max.s16x2", "min.u16x2", "max.u16x2", "min.relu.s16x2",
                                  "max.relu.s16x2"])
def test_min_max_16x2(engine, opt, form):
    rows = pairs([0, 0x7FFF8000, 0x80007FFF, 0xFFFF0001, 0x00010002, M32])
    op, signed, relu = form.split(".")[0], "s16x2" in form, "relu" in form

    def ref(a, b):
        out = 0
        for k, (x, y) in enumerate(zip(lanes16(a), lanes16(b))):
            if signed:
                x, y = (v - 0x10000 if v >> 15 else v for v in (x, y))
            r = min(x, y) if op == "min" else max(x, y)
            out |= (max(r, 0) if relu else r) % 0x10000 << (16 * k)
        return out

    check(f"{form} %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;", rows, [ref(a, b) for a, b in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", ["min", "max"])
def test_relu_s32(engine, opt, op):
    rows = pairs(I32_EDGE[:8])
    want = [max((min if op == "min" else max)(s32(a), s32(b)), 0) for a, b in rows]
    check(f"{op}.relu.s32 %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;", rows, want, engine, opt)


def minmax_bits(op: str, a: int, b: int, nan_mode: bool, ftz: bool, fmt: str = "f32") -> int:
    """PTX min/max on bit patterns: a NaN operand is ignored (both NaN, or any with .NaN: the canonical NaN);
    -0.0 < +0.0."""
    dec, canon = FMT[fmt]
    x, y = dec(a, ftz), dec(b, ftz)
    if (math.isnan(x) and math.isnan(y)) or (nan_mode and (math.isnan(x) or math.isnan(y))):
        return canon
    if math.isnan(x):
        return FLUSH[fmt](b, ftz)
    if math.isnan(y):
        return FLUSH[fmt](a, ftz)
    kx, ky = (x, math.copysign(1, x)), (y, math.copysign(1, y))
    pick_a = (kx <= ky) if op == "min" else (kx >= ky)
    return FLUSH[fmt](a if pick_a else b, ftz)


def _flush(bits: int, ftz: bool, exp_mask: int, sign: int) -> int:
    return bits & sign if ftz and bits & exp_mask == 0 else bits


def _dec16(bits: int, ftz: bool) -> float:
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def _decbf16(bits: int, ftz: bool) -> float:
    return f32(bits << 16)


FMT = {"f32": (lambda v, ftz: f32(_flush(v, ftz, 0x7F800000, 0x80000000)), 0x7FFFFFFF),
       "f16": (_dec16, 0x7FFF), "bf16": (_decbf16, 0x7FFF)}
FLUSH = {"f32": lambda v, ftz: _flush(v, ftz, 0x7F800000, 0x80000000), "f16": lambda v, ftz: v,
         "bf16": lambda v, ftz: v}
NAN_MAG = {"f32": 0x7F800000, "f16": 0x7C00, "bf16": 0x7F80}
SIGN = {"f32": 0x80000000, "f16": 0x8000, "bf16": 0x8000}


def xorsign_bits(op, a, b, nan_mode, ftz, fmt):
    """PTX ISA 9.7.3.x (min/max .xorsign.abs): |d| = op(|a|, |b|), its sign a's XOR b's unless d is NaN."""
    s = SIGN[fmt]
    m = minmax_bits(op, a & ~s & (s * 2 - 1), b & ~s & (s * 2 - 1), nan_mode, ftz, fmt)
    return m if m & (s - 1) > NAN_MAG[fmt] else m | ((a ^ b) & s)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mods", ["", ".NaN", ".ftz", ".ftz.NaN"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_xorsign_abs_f32(engine, opt, mods, op):
    rows = pairs(F32_EDGE[::2] + [0x807FFFFF, 0xFFC00001])
    body = f"{op}{mods}.xorsign.abs.f32 %f3, %f1, %f2; mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;"
    want = [xorsign_bits(op, a, b, "NaN" in mods, "ftz" in mods, "f32") for a, b in rows]
    check(body, rows, want, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mods", ["", ".NaN"])
def test_min_nan_f32_on_both_engines(engine, opt, mods):
    rows = pairs(F32_EDGE[::2] + [0x807FFFFF])
    body = f"min{mods}.f32 %f3, %f1, %f2; mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;"
    check(body, rows, [minmax_bits("min", a, b, bool(mods), False) for a, b in rows], engine, opt)


F16_EDGE = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x0001, 0x83FF, 0x7BFF]
BF16_EDGE = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x807F, 0x7F7F]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_xorsign_abs_half_and_x2(engine, opt, fmt, op):
    """Scalar form on the low half-words of a and b, the x2 form on the whole words (both lanes)."""
    edge = F16_EDGE if fmt == "f16" else BF16_EDGE
    rows = [(a | c << 16, b | d << 16) for (a, b), (c, d) in zip(pairs(edge), reversed(pairs(edge)))]
    body = (f"mov.b32 {{%h2, %h4}}, %r2; mov.b32 {{%h3, %h5}}, %r3; {op}.xorsign.abs.{fmt} %h1, %h2, %h3;"
            f" {op}.xorsign.abs.{fmt}x2 %r5, %r2, %r3; cvt.u64.u16 %rd8, %h1; cvt.u64.u32 %rd9, %r5;"
            " shl.b64 %rd9, %rd9, 16; or.b64 %rd8, %rd8, %rd9;")
    want = []
    for a, b in rows:
        lo = [xorsign_bits(op, x, y, False, False, fmt) for x, y in zip(lanes16(a), lanes16(b))]
        want.append(lo[0] | (lo[0] | lo[1] << 16) << 16)
    check(body, rows, want, engine, opt)


# ----------------------------------------------------------------------------- mad.hi.sat.s32


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_mad_hi_sat_s32(engine, opt):
    edge = [0, 1, M32, 0x7FFFFFFF, 0x80000000, 0x40000000, 0xC0000000]
    rows = [(a, b, c) for a in edge for b in edge for c in (0, 0x7FFFFFFF, 0x80000000, M32)][::3]
    want = [max(-(1 << 31), min((1 << 31) - 1, (s32(a) * s32(b) >> 32) + s32(c))) & M32 for a, b, c in rows]
    check("mad.hi.sat.s32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;", rows, want, engine, opt)


# ----------------------------------------------------------------------------- cache hints, createpolicy, sregs


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_cache_hints_change_no_value(engine, opt):
    """prefetch/prefetchu/applypriority/discard are no-ops on xg1 (discard's unspecified data: kept); a policy
    from createpolicy is accepted by .L2::cache_hint loads and stores."""
    body = ("prefetch.global.L2::evict_last [%rd4]; prefetchu.L1 [%rd4+8]; prefetch.L1 [%rd4];"
            " applypriority.global.L2::evict_normal [%rd4], 128; discard.global.L2 [%rd4], 128;"
            " createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd11, 0.5;"
            " ld.global.L2::cache_hint.u64 %rd8, [%rd4+8], %rd11;"
            " st.global.L2::cache_hint.u64 [%rd4+16], %rd8, %rd11; ld.global.u64 %rd9, [%rd4+16];"
            " add.u64 %rd8, %rd8, %rd9;")
    rows = [(1, 0x1234, 7), (2, M64, 0)]
    check(body, rows, [(b * 2) & M64 for _, b, _ in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_createpolicy_values(engine, opt):
    """The documented encoding (docs/semantics.md): tag 0x5C in bits 63:56, kind in 23:16, priorities 15:0."""
    forms = {"createpolicy.fractional.L2::evict_last.b64 %rd8, 1.0;": 0x5C << 56 | 1 << 16 | 1 << 8,
             "createpolicy.fractional.L2::evict_first.b64 %rd8;": 0x5C << 56 | 1 << 16 | 3 << 8,
             "createpolicy.range.L2::evict_last.L2::evict_first.b64 %rd8, [%rd4], 64, 128;":
                 0x5C << 56 | 2 << 16 | 1 << 8 | 3,
             "createpolicy.cvt.L2.b64 %rd8, %rd5;": 0xABCDEF}
    for body, want in forms.items():
        check(body, [(0xABCDEF,)], [want], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_globaltimer_halves_and_pm_counters(engine, opt):
    """%globaltimer_hi:%globaltimer_lo read before %globaltimer is at most it (one monotonic modelled clock);
    %pm0..%pm7, %pm<n>_64 and the %envreg<n> other than 1 and 2 read 0."""
    body = ("mov.u32 %r6, %globaltimer_hi; mov.u32 %r5, %globaltimer_lo; mov.u64 %rd9, %globaltimer;"
            " mov.b64 %rd10, {%r5, %r6}; setp.le.u64 %p2, %rd10, %rd9; selp.u64 %rd8, 1, 0, %p2;"
            " mov.u32 %r7, %pm3; mov.u64 %rd11, %pm7_64; cvt.u64.u32 %rd12, %r7; or.b64 %rd11, %rd11, %rd12;"
            " mov.u32 %r7, %envreg0; cvt.u64.u32 %rd12, %r7; or.b64 %rd11, %rd11, %rd12;"
            " mov.u32 %r7, %envreg31; cvt.u64.u32 %rd12, %r7; or.b64 %rd11, %rd11, %rd12;"
            " shl.b64 %rd11, %rd11, 1; or.b64 %rd8, %rd8, %rd11;")
    check(body, [(0,)] * 3, [1] * 3, engine, opt)


def test_cluster_forms_once_refused_now_run():
    """barrier.cluster and red.shared::cluster compile and run now (tests/test_cluster.py tests their meaning): a
    launch without clusters is a cluster of one CTA, and a shared::cta address names the CTA's own memory."""
    from test_isa_gaps import HEADER

    assert run("barrier.cluster.arrive; barrier.cluster.wait;", [(0,)], "isa", 0) == [0]
    body = "red.shared::cluster.add.u32 [%r2], %r3;"  # compiled only: the probe kernel has no shared memory
    rt.load_module(HEADER.replace("BODY", body), engine="isa", opt_level=0).get_function("k")


# ----------------------------------------------------------------------------- tf32 conversions


def tf32_ref(a: int, rnd: str, satfinite: bool, relu: bool) -> int:
    """Round f32 ``a`` to tf32 (10 fraction bits) with exact rationals: the two neighbours of |a| on the tf32
    grid of its binade, chosen by the rounding; a NaN gives 0x7fffffff."""
    x = f32(a)
    if math.isnan(x):
        return 0x7FFFFFFF
    sign = a & 0x80000000
    if relu and sign:
        return 0
    if math.isinf(x):
        return 0x7F7FE000 | sign if satfinite else a
    q = Fraction(x) if x >= 0 else -Fraction(x)
    mag = a & 0x7FFFFFFF
    lo_bits = mag & ~0x1FFF
    lo, hi = Fraction(f32(lo_bits)), Fraction(f32(lo_bits + 0x2000)) if lo_bits + 0x2000 < 0x7F800000 else None
    if q == lo:
        r = lo_bits
    else:
        ulp = Fraction(f32(lo_bits + 0x2000)) - lo if hi is not None else Fraction(2) ** 128 - lo
        half = lo + ulp / 2
        up = {"rz": False, "rna": q >= half, "rn": q > half or (q == half and (lo_bits >> 13) & 1)}[rnd]
        r = lo_bits + 0x2000 if up else lo_bits
    if r >= 0x7F800000 and satfinite:
        r = 0x7F7FE000
    return r | sign


TF32_EDGE = F32_EDGE + [0x3F801000, 0x3F803000, 0x3F801001, 0x3F802FFF, 0x7F7FF000, 0x7F7FEFFF, 0x00001000,
                        0x00003000, 0xBF801000, 0x807FFFFF, 0x00000FFF]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["rna", "rna.satfinite", "rn", "rn.satfinite", "rn.relu", "rz", "rz.relu.satfinite"])
def test_cvt_tf32(engine, opt, form):
    rnd = form.split(".")[0]
    rows = [(a,) for a in TF32_EDGE]
    body = f"cvt.{form}.tf32.f32 %r5, %f1; cvt.u64.u32 %rd8, %r5;"
    want = [tf32_ref(a, rnd, "satfinite" in form, "relu" in form) for (a,) in rows]
    if "satfinite" in form and rnd != "rna":  # ptxas 13.0: .satfinite with .rn/.rz needs sm_100
        header = HEADER.replace(".version 8.0\n.target sm_90", ".version 8.8\n.target sm_100a")
        assert run(body, rows, engine, opt, header=header) == want
        return
    check(body, rows, want, engine, opt)


# ----------------------------------------------------------------------------- Blackwell-only forms

BLACKWELL = """
.version 8.8
.target sm_100a
.address_size 64
.visible .entry fine(.param .u64 out)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], 7;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<2>;
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f40000000;
    mov.u32 %r4, 0;
    INST
    ret;
}
"""
BLACKWELL_FORMS = [
    "cvt.rn.satfinite.e2m1x2.f32 %h1, %f1, %f2;",
    "cvt.rn.satfinite.e2m3x2.f32 %h1, %f1, %f2;",
    "cvt.rn.satfinite.e3m2x2.f32 %h1, %f1, %f2;",
    "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f1, %f2;",
    "cvt.rn.f16x2.e2m1x2 %r5, %h1;",
    "cvt.rs.satfinite.f16x2.f32 %r5, %f1, %f2, %r4;",
    "tcgen05.fence::before_thread_sync;",
]


@pytest.mark.parametrize("inst", BLACKWELL_FORMS)
def test_blackwell_forms_refused_alike_by_check_compile_and_syntax_only(capsys, tmp_path, inst):
    """One located message, the same from `xcc compile`, `xcc check` and `xcc check --syntax-only`; the
    module's other kernel still checks and loads (lazy loading)."""
    from xcc.cli import main

    src = tmp_path / "bw.ptx"
    src.write_text(BLACKWELL.replace("INST", inst))
    line = BLACKWELL.replace("INST", inst).splitlines().index("    " + inst) + 1
    name = inst.split()[0].rstrip(";")
    want = f"{src}:{line}:5: error: {name} is a Blackwell (sm_100a) instruction that xcc does not support yet"
    outs = []
    for argv in (["compile", src, "-o", tmp_path / "o.xbin"], ["check", src], ["check", "--syntax-only", src]):
        rc = main([str(a) for a in argv])
        err = capsys.readouterr().err
        outs.append((rc, [ln for ln in err.splitlines() if ": error: " in ln]))
    assert outs == [(1, [want])] * 3
    dev = rt.Device()
    d = rt.to_device(np.zeros(1, np.uint32), dev)
    rt.load_module(BLACKWELL.replace("INST", inst), device=dev).get_function("fine").launch((1, 1, 1), (1, 1, 1),
                                                                                           [d])
    assert int(d.copy_to_host()[0]) == 7


# ----------------------------------------------------------------------------- fns


def fns_ref(mask: int, base: int, offset: int) -> int:
    """PTX ISA 9.7.1.24's loop, restated; base > 31 (undefined in PTX): 0xffffffff, as xcc documents."""
    if base > 31:
        return M32
    if offset == 0:
        return base if mask >> base & 1 else M32
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return M32


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_fns(engine, opt):
    masks = [0xAAAAAAAA, 0, M32, 0x80000001, 0x00F0F000]
    rows = [(m, b, o & M32) for m in masks for b in (0, 2, 3, 17, 31, 32) for o in (0, 1, -1, 2, -2, 5, -9, 32, -32,
                                                                                  33, 1 << 31)]
    want = [fns_ref(m, b, s32(o)) for m, b, o in rows]
    check("fns.b32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;", rows, want, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
def test_deprecated_shfl_without_sync_is_the_full_warp(engine, opt, mode):
    """shfl without .sync (deprecated; PTX ISA 9.7.9.6): as shfl.sync with membermask 0xffffffff."""
    b, c = {"up": (3, 0), "down": (3, 31), "bfly": (5, 31), "idx": (7, 31)}[mode]
    body = (f"shfl.{mode}.b32 %r5|%p2, %r2, {b}, {c}; selp.u32 %r6, 1, 0, %p2; cvt.u64.u32 %rd8, %r5;"
            " cvt.u64.u32 %rd9, %r6; shl.b64 %rd9, %rd9, 32; or.b64 %rd8, %rd8, %rd9;")
    vals = [(1000 + 7 * i) for i in range(32)]

    def src(i):
        j = {"up": i - b, "down": i + b, "bfly": i ^ b, "idx": b}[mode]
        return (j, True) if 0 <= j < 32 else (i, False)

    want = [vals[src(i)[0]] | int(src(i)[1]) << 32 for i in range(32)]
    # ptxas 13.0 takes shfl without .sync on sm_70+ only below PTX ISA 6.4, hence the old header
    old = HEADER.replace(".version 8.0\n.target sm_90", ".version 6.3\n.target sm_70")
    assert run(body, [(v,) for v in vals], engine, opt, header=old) == want


# ----------------------------------------------------------------------------- abs/neg forms xg1 lacked


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["abs.s16", "neg.s16", "abs.s64"])
def test_abs_neg_narrow_and_wide_integers(engine, opt, form):
    """The most negative value wraps to itself (two's complement of the type)."""
    bits = 16 if form.endswith("16") else 64
    rows = [(v,) for v in (0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, 0x1234, (1 << bits) - 0x1234)]

    def ref(v):
        x = v - (1 << bits) if v >> (bits - 1) else v
        r = abs(x) if form.startswith("abs") else -x
        return r % (1 << bits)

    body = (f"cvt.u16.u32 %h1, %r2; {form} %h2, %h1; cvt.u64.u16 %rd8, %h2;" if bits == 16
            else f"{form} %rd8, %rd5;")
    check(body, rows, [ref(v) for (v,) in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", ["abs", "neg"])
def test_abs_neg_ftz_f16_and_x2(engine, opt, op):
    """.ftz: a subnormal element becomes the zero of its sign, then abs clears and neg flips the sign bit; a NaN
    element gives the canonical NaN 0x7FFF, as the non-.ftz forms do (the H200's results, docs/semantics.md)."""
    rows = [(a | b << 16,) for a, b in zip(F16_EDGE, reversed(F16_EDGE))]

    def one(h):
        if h & 0x7C00 == 0x7C00 and h & 0x3FF:
            return 0x7FFF
        if h & 0x7C00 == 0:
            h &= 0x8000
        return h & 0x7FFF if op == "abs" else h ^ 0x8000

    body = (f"mov.b32 {{%h2, %h3}}, %r2; {op}.ftz.f16 %h1, %h2; {op}.ftz.f16x2 %r5, %r2; cvt.u64.u16 %rd8, %h1;"
            " cvt.u64.u32 %rd9, %r5; shl.b64 %rd9, %rd9, 16; or.b64 %rd8, %rd8, %rd9;")
    want = [one(v & 0xFFFF) | (one(v & 0xFFFF) | one(v >> 16) << 16) << 16 for (v,) in rows]
    check(body, rows, want, engine, opt)


@pytest.mark.parametrize("body, msg", [
    ("mad.wide.s64 %rd8, %rd5, %rd6, %rd7;", "'mad.wide.s64': .wide needs a 16- or 32-bit integer type"),
    ("mul.wide.u64 %rd8, %rd5, %rd6;", "'mul.wide.u64': .wide needs a 16- or 32-bit integer type"),
    ("sqrt.rm.approx.f32 %f3, %f1;", "'sqrt.rm.approx.f32': .approx and a rounding modifier exclude each other"),
])
def test_forms_ptxas_rejects_get_a_located_error(body, msg):
    """Forms the checker's table lets through and ptxas 13.0 rejects: a located error, not a traceback (mad.wide.s64
    raised KeyError) nor a silent choice between .approx and the rounding (the engines disagreed)."""
    from xcc.diagnostics import XccError

    with pytest.raises(XccError, match=r":\d+:\d+: error: " + re.escape(msg)):
        run(body, [(0,)], "isa", 0)


# ----------------------------------------------------------------------------- vavrg2/4, vset2/4


def elems(x: int, n: int, signed: bool) -> list[int]:
    w = 32 // n
    out = []
    for i in range(n):
        e = x >> (i * w) & ((1 << w) - 1)
        out.append(e - (1 << w) if signed and e >> (w - 1) else e)
    return out


SIMD_WORDS = [0, M32, 0x7FFF8000, 0x80017FFE, 0x01FF807F, 0xFE0280FF, 0x12345678, 0x00010001]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("types", ["u32.u32.u32", "s32.s32.s32", "s32.u32.s32", "u32.s32.u32"])
@pytest.mark.parametrize("form", ["", ".sat", ".add"])
def test_vavrg(engine, opt, n, types, form):
    """PTX ISA 9.7.10.3: t = (a + b + 1) >> 1 if a + b >= 0 else (a + b) >> 1, per element; merge: the low bits
    (.sat: clamped to dtype's element range first); .add: c + the sum of the t."""
    dt, at, bt = (t == "s32" for t in types.split("."))
    w = 32 // n
    rows = [(a, b, c) for a in SIMD_WORDS for b in SIMD_WORDS[::3] for c in (0, 0x55555555)]

    def ref(a, b, c):
        ts = []
        for x, y in zip(elems(a, n, at), elems(b, n, bt)):
            s = x + y
            ts.append((s + 1) >> 1 if s >= 0 else s >> 1)
        if form == ".add":
            return (c + sum(ts)) & M32
        if form == ".sat":
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt else (0, (1 << w) - 1)
            ts = [max(lo, min(hi, t)) for t in ts]
        return sum((t & ((1 << w) - 1)) << (i * w) for i, t in enumerate(ts))

    body = f"vavrg{n}.{types}{form} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    check(body, rows, [ref(a, b, c) for a, b, c in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("cmp", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("add", [False, True])
def test_vset_simd(engine, opt, n, cmp, add):
    import operator

    op = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
          "ge": operator.ge}[cmp]
    w = 32 // n
    rows = [(a, b, 7) for a in SIMD_WORDS for b in SIMD_WORDS[::2]]

    def ref(a, b, c):
        ts = [int(op(x, y)) for x, y in zip(elems(a, n, True), elems(b, n, False))]
        return (c + sum(ts)) & M32 if add else sum(t << (i * w) for i, t in enumerate(ts))

    body = f"vset{n}.s32.u32.{cmp}{'.add' if add else ''} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    check(body, rows, [ref(a, b, c) for a, b, c in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["mul.hi.u16", "mul.hi.s16", "mad.hi.u16", "mad.hi.s16"])
def test_mul_mad_hi_16(engine, opt, form):
    edge = [0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x1234, 0xFEDC]
    rows = [(a, b, c) for a in edge for b in edge for c in (0, 0xFFFF)][::2]
    signed = form.endswith("s16")

    def ref(a, b, c):
        x, y = ((v - 0x10000 if signed and v >> 15 else v) for v in (a, b))
        hi = (x * y >> 16) & 0xFFFF
        return (hi + c) & 0xFFFF if form.startswith("mad") else hi

    args = "%h1, %h2, %h3, %h4" if form.startswith("mad") else "%h1, %h2, %h3"
    body = (f"cvt.u16.u32 %h2, %r2; cvt.u16.u32 %h3, %r3; cvt.u16.u32 %h4, %r4; {form} {args};"
            " cvt.u64.u16 %rd8, %h1;")
    check(body, rows, [ref(a, b, c) for a, b, c in rows], engine, opt)


# ----------------------------------------------------------------------------- vmad


SELS = {"": (0, 32), ".b0": (0, 8), ".b1": (8, 8), ".b2": (16, 8), ".b3": (24, 8), ".h0": (0, 16), ".h1": (16, 16)}


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("types", ["u32.u32.u32", "s32.s32.s32", "s32.u32.s32", "u32.s32.u32"])
@pytest.mark.parametrize("mods", ["", ".sat", ".po", ".shr7", ".shr15.sat", ".po.sat"])
@pytest.mark.parametrize("sels", [("", ""), (".h1", ".b0"), (".b3", ".h0")])
def test_vmad(engine, opt, types, mods, sels):
    """PTX ISA 9.7.10.2's pseudo-code restated with Python integers (tmp exact; 128 bits wide there)."""
    _, at, bt = (t == "s32" for t in types.split("."))
    edge = [0, 1, M32, 0x7FFFFFFF, 0x80000000, 0x12345678, 0xFFFF8000, 0x00FF7F80]
    rows = [(a, b, c) for a in edge for b in edge[::2] for c in (0, 0x80000000, 0x7FFFFFFF)][::2]

    def part(v, sel, signed):
        shift, w = SELS[sel]
        x = v >> shift & ((1 << w) - 1)
        return x - (1 << w) if signed and x >> (w - 1) else x

    def ref(a, b, c):
        signed = at or bt
        tmp = part(a, sels[0], at) * part(b, sels[1], bt) + (s32(c) if signed else c) + (1 if ".po" in mods else 0)
        tmp >>= 7 if ".shr7" in mods else 15 if ".shr15" in mods else 0
        if ".sat" in mods:
            tmp = max(-(1 << 31), min((1 << 31) - 1, tmp)) if signed else max(0, min(M32, tmp))
        return tmp & M32

    body = f"vmad.{types}{mods} %r5, %r2{sels[0]}, %r3{sels[1]}, %r4; cvt.u64.u32 %rd8, %r5;"
    check(body, rows, [ref(a, b, c) for a, b, c in rows], engine, opt)
