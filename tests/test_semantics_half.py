"""Half precision, exact rounding, conversions, packing and carry chains in ``xcc.semantics``, bit for bit
against references built differently: exact rational arithmetic (``fractions.Fraction``, :mod:`half_ref`)
and Python integers."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcc.semantics import halfp, integer
from xcc.semantics.convert import convert
from xcc.semantics.rounding import FORMATS, bit_length, round_dyadic, round_f64, round_int

sys.path.insert(0, str(Path(__file__).parent))
from half_ref import round_exact, value  # noqa: E402

MODES = ("rn", "rz", "rm", "rp")
HALVES = ("f16", "bf16")
F16, BF16 = FORMATS["f16"], FORMATS["bf16"]
SETTINGS = settings(max_examples=300, deadline=None)


def finite16(name: str):
    """Finite bit patterns of f16/bf16 (every exponent, subnormals and zeros included)."""
    inf = FORMATS[name].inf
    return st.integers(0, 0xFFFF).filter(lambda b: (b & inf) != inf)


def _u16(*bs):
    return [np.array([b], np.uint16) for b in bs]


def _ref_sum(a: int, b: int, name: str, rnd: str) -> int:
    """IEEE rounding of the exact sum of two bit patterns; an exact zero sum is -0 if both are -0, or, in rm,
    unless both are +0 (IEEE 754-2019 6.3)."""
    v = value(a, name) + value(b, name)
    both_neg, both_pos = a == b == 0x8000, a == b == 0
    return round_exact(v, name, rnd, negative_zero=both_neg or (rnd == "rm" and not both_pos))


# ----------------------------------------------------------------------------- the rounding core
@SETTINGS
@given(st.integers(0, (1 << 64) - 1).filter(lambda u: (u >> 52) & 0x7FF != 0x7FF),
       st.sampled_from(["f16", "bf16", "f32"]), st.sampled_from(MODES))
def test_round_f64_matches_exact_rounding(u, name, rnd):
    x = np.array([u], np.uint64).view(np.float64)
    got = int(round_f64(x, FORMATS[name], rnd)[0])
    want = round_exact(Fraction(float(x[0])), name, rnd, negative_zero=bool(u >> 63))
    assert got == want, (float(x[0]).hex(), name, rnd, hex(got), hex(want))


@SETTINGS
@given(st.integers(-(1 << 63), (1 << 64) - 1), st.sampled_from(["f16", "bf16", "f32", "f64"]),
       st.sampled_from(MODES))
def test_round_int_matches_exact_rounding(v, name, rnd):
    bits = v & ((1 << 64) - 1)
    for signed, gives_v in ((True, v < (1 << 63)), (False, v >= 0)):  # each reading of the pattern that is v
        if gives_v:
            got = int(round_int(np.array([bits], np.uint64), 64, signed, FORMATS[name], rnd)[0])
            assert got == round_exact(Fraction(v), name, rnd), (v, signed, name, rnd)


@SETTINGS
@given(st.integers(0, (1 << 64) - 1), st.integers(-1200, 1100), st.booleans(),
       st.sampled_from(["f16", "bf16", "f32", "f64"]), st.sampled_from(MODES))
def test_round_dyadic_matches_exact_rounding(m, e, neg, name, rnd):
    got = int(round_dyadic(np.array([neg]), np.array([m], np.uint64), np.array([e]), FORMATS[name], rnd)[0])
    v = Fraction(m) * Fraction(2) ** e * (-1 if neg else 1)
    assert got == round_exact(v, name, rnd, negative_zero=neg)


def test_bit_length():
    vals = [0, 1, 2, 3, 255, 256, (1 << 53) + 1, (1 << 63), (1 << 64) - 1]
    assert bit_length(np.array(vals, np.uint64)).tolist() == [v.bit_length() for v in vals]


# ----------------------------------------------------------------------------- f16 / bf16 arithmetic
@SETTINGS
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(MODES), st.sampled_from(["add", "sub", "mul"]))
def test_binary_matches_exact(data, name, rnd, op):
    a, b = data.draw(finite16(name)), data.draw(finite16(name))
    fmt = FORMATS[name]
    fn = {"add": halfp.hadd, "sub": halfp.hsub, "mul": halfp.hmul}[op]
    got = int(fn(*_u16(a, b), fmt, rnd)[0])
    x, y = value(a, name), value(b, name)
    if op == "mul":
        neg = (a >> 15) != (b >> 15)
        want = round_exact(x * y, name, rnd, negative_zero=neg)
    else:
        want = _ref_sum(a, b ^ 0x8000 if op == "sub" else b, name, rnd)
    assert got == want, (name, op, rnd, hex(a), hex(b), hex(got), hex(want))


@SETTINGS
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(MODES))
def test_fma_matches_exact(data, name, rnd):
    a, b, c = (data.draw(finite16(name)) for _ in range(3))
    got = int(halfp.hfma(*_u16(a, b, c), FORMATS[name], rnd)[0])
    p = value(a, name) * value(b, name)
    p_neg = (a >> 15) != (b >> 15)
    v = p + value(c, name)
    if v == 0:
        both_neg = p == 0 and p_neg and c == 0x8000
        both_pos = p == 0 and not p_neg and c == 0
        neg = both_neg or (rnd == "rm" and not both_pos)
        want = round_exact(v, name, rnd, negative_zero=neg)
    else:
        want = round_exact(v, name, rnd)
    assert got == want, (name, rnd, hex(a), hex(b), hex(c), hex(got), hex(want))


# (a, b, c) -> results in rn, rz, rm, rp: a * b + c needs more than float64's 53 bits, so only the
# round-to-odd sum decides these right (a plain float64 sum rounds the tiny product away first)
BEYOND_F64 = [
    ("f16", (0x0001, 0x0001, 0x6400), (0x6400, 0x6400, 0x6400, 0x6401)),  # 1024 + 2^-48
    ("f16", (0x0001, 0x0001, 0xE400), (0xE400, 0xE3FF, 0xE400, 0xE3FF)),  # -1024 + 2^-48
    ("bf16", (0x0001, 0x0001, 0x7180), (0x7180, 0x7180, 0x7180, 0x7181)),  # 2^100 + 2^-266
    ("bf16", (0x0001, 0x0001, 0xF180), (0xF180, 0xF17F, 0xF180, 0xF17F)),  # -2^100 + 2^-266
    ("bf16", (0x3F81, 0x3FC0, 0x8001), (0x3FC1, 0x3FC1, 0x3FC1, 0x3FC2)),  # a tie minus 2^-133
    ("bf16", (0x3F81, 0x3FC0, 0x0001), (0x3FC2, 0x3FC1, 0x3FC1, 0x3FC2)),  # a tie plus 2^-133
]


@pytest.mark.parametrize("name,args,want", BEYOND_F64)
def test_fma_beyond_float64(name, args, want):
    got = [int(halfp.hfma(*_u16(*args), FORMATS[name], rnd)[0]) for rnd in MODES]
    assert got == list(want), [hex(g) for g in got]
    exact = value(args[0], name) * value(args[1], name) + value(args[2], name)
    assert [round_exact(exact, name, rnd) for rnd in MODES] == list(want)  # the table itself, checked


def test_flags_ftz_sat_relu_and_nan():
    f = F16
    sub = 0x0001  # smallest subnormal
    one, two, m_one = 0x3C00, 0x4000, 0xBC00
    assert int(halfp.hadd(*_u16(sub, 0), f)[0]) == sub
    assert int(halfp.hadd(*_u16(sub, 0), f, ftz=True)[0]) == 0
    assert int(halfp.hadd(*_u16(0x8001, 0x8000), f, ftz=True)[0]) == 0x8000
    assert int(halfp.hmul(*_u16(0x0400, 0x3800), f)[0]) == 0x0200  # result subnormal
    assert int(halfp.hmul(*_u16(0x0400, 0x3800), f, ftz=True)[0]) == 0  # flushed result
    assert int(halfp.hadd(*_u16(one, one), f, sat=True)[0]) == one
    assert int(halfp.hadd(*_u16(m_one, 0), f, sat=True)[0]) == 0
    assert int(halfp.hfma(*_u16(one, m_one, 0), f, relu=True)[0]) == 0
    assert int(halfp.hfma(*_u16(one, two, 0), f, relu=True)[0]) == two
    inf, nan = 0x7C00, 0x7E01
    assert int(halfp.hadd(*_u16(inf, 0xFC00), f)[0]) == 0x7FFF  # inf - inf: canonical NaN
    assert int(halfp.hmul(*_u16(nan, one), f)[0]) == 0x7FFF
    assert int(halfp.hadd(*_u16(nan, one), f, sat=True)[0]) == 0
    assert int(halfp.hfma(*_u16(nan, one, one), f, relu=True)[0]) == 0x7FFF
    assert int(halfp.hadd(*_u16(0x7BFF, 0x7BFF), f)[0]) == inf  # overflow
    assert int(halfp.hadd(*_u16(0x7BFF, 0x7BFF), f, "rz")[0]) == 0x7BFF
    assert int(halfp.hneg(*_u16(nan), f)[0]) == 0x7FFF  # canonical NaN, as the H200 gives it (docs/semantics.md)
    assert int(halfp.habs(*_u16(0x8001), f, ftz=True)[0]) == 0


@SETTINGS
@given(st.data(), st.sampled_from(HALVES), st.booleans(), st.booleans())
def test_min_max(data, name, pick_min, nan_flag):
    fmt = FORMATS[name]
    a, b = data.draw(st.integers(0, 0xFFFF)), data.draw(st.integers(0, 0xFFFF))
    got = int(halfp.hminmax(*_u16(a, b), fmt, pick_min, nan=nan_flag)[0])
    va, vb = value(a, name), value(b, name)
    if va == "nan" or vb == "nan":
        if nan_flag or (va == "nan" and vb == "nan"):
            assert got == 0x7FFF
        else:
            assert got == (b if va == "nan" else a)
        return
    order = {"-inf": Fraction(-(10**50)), "+inf": Fraction(10**50)}
    xa, xb = order.get(va, va), order.get(vb, vb)

    def key(v, bits):
        return v, 0 if bits >> 15 else 1  # -0 < +0

    smaller = a if key(xa, a) <= key(xb, b) else b
    larger = b if smaller == a else a
    if key(xa, a) == key(xb, b):
        assert got == a  # the same value and sign: the same bits
    else:
        assert got == (smaller if pick_min else larger)


@SETTINGS
@given(st.data(), st.sampled_from(HALVES),
       st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]))
def test_compare(data, name, cmp):
    a, b = data.draw(st.integers(0, 0xFFFF)), data.draw(st.integers(0, 0xFFFF))
    got = bool(halfp.hcompare(cmp, *_u16(a, b), FORMATS[name])[0])
    va, vb = value(a, name), value(b, name)
    unordered = va == "nan" or vb == "nan"
    if cmp == "num":
        assert got == (not unordered)
        return
    if cmp == "nan":
        assert got == unordered
        return
    if unordered:
        assert got == cmp.endswith("u")
        return
    order = {"-inf": Fraction(-(10**50)), "+inf": Fraction(10**50)}
    xa, xb = order.get(va, va), order.get(vb, vb)
    base = cmp[:-1] if cmp.endswith("u") else cmp
    want = {"eq": xa == xb, "ne": xa != xb, "lt": xa < xb, "le": xa <= xb, "gt": xa > xb, "ge": xa >= xb}[base]
    assert got == want


def test_x2_lanes():
    a = np.array([0x40003C00], np.uint32)  # {1.0 (element 0), 2.0 (element 1)}
    b = np.array([0x3C004000], np.uint32)  # {2.0, 1.0}
    got = halfp.lanewise(lambda x, y: halfp.hadd(x, y, F16), a, b)
    assert int(got[0]) == 0x42004200  # {3.0, 3.0}
    got = halfp.lanewise(lambda x, y: halfp.hminmax(x, y, F16, False), a, b)
    assert int(got[0]) == 0x40004000


# ----------------------------------------------------------------------------- conversions
@SETTINGS
@given(st.integers(0, (1 << 32) - 1).filter(lambda u: (u >> 23) & 0xFF != 0xFF), st.sampled_from(MODES),
       st.sampled_from(["f16", "bf16"]))
def test_cvt_f32_to_half(u, rnd, name):
    kind = "bf" if name == "bf16" else "f"
    got = int(convert(np.array([u], np.uint32), 16, kind, 32, "f", rnd)[0])
    x = float(np.array([u], np.uint32).view(np.float32)[0])
    assert got == round_exact(Fraction(x), name, rnd, negative_zero=bool(u >> 31))


@SETTINGS
@given(st.integers(0, (1 << 64) - 1).filter(lambda u: (u >> 52) & 0x7FF != 0x7FF), st.sampled_from(MODES))
def test_cvt_f64_to_f32_every_mode(u, rnd):
    got = int(convert(np.array([u], np.uint64), 32, "f", 64, "f", rnd)[0])
    x = float(np.array([u], np.uint64).view(np.float64)[0])
    assert got == round_exact(Fraction(x), "f32", rnd, negative_zero=bool(u >> 63))


@SETTINGS
@given(st.integers(0, (1 << 32) - 1), st.sampled_from(["s", "u"]), st.sampled_from(MODES), st.sampled_from([16, 32]))
def test_cvt_int32_to_float_every_mode(u, kind, rnd, dst):
    got = int(convert(np.array([u], np.uint32), dst, "f", 32, kind, rnd)[0])
    v = u - (1 << 32) if kind == "s" and u >> 31 else u
    assert got == round_exact(Fraction(v), f"f{dst}", rnd)


@SETTINGS
@given(st.integers(0, 0xFFFF), st.sampled_from(HALVES))
def test_cvt_half_widens_exactly(u, name):
    kind = "bf" if name == "bf16" else "f"
    v = value(u, name)
    for bits, fname in ((32, "f32"), (64, "f64")):
        got = int(convert(np.array([u], np.uint16), bits, "f", 16, kind)[0])
        if v == "nan":
            assert value(got, fname) == "nan"
        elif isinstance(v, str):
            assert value(got, fname) == v
        else:
            assert got == round_exact(v, fname, negative_zero=bool(u >> 15))


def test_cvt_half_flags_and_nan():
    f32 = np.array([70000.0, -70000.0, np.nan, -1.5, 0.5, np.inf], np.float32).view(np.uint32)
    sf = convert(f32, 16, "f", 32, "f", "rn", satfinite=True).tolist()
    assert sf == [0x7BFF, 0xFBFF, 0x7FFF, 0xBE00, 0x3800, 0x7BFF]
    relu = convert(f32, 16, "bf", 32, "f", "rn", relu=True).tolist()
    assert relu[1] == 0 and relu[2] == 0x7FFF and relu[3] == 0 and relu[4] == 0x3F00
    assert convert(f32, 16, "f", 32, "f", "rn", sat=True).tolist() == [0x3C00, 0, 0, 0, 0x3800, 0x3C00]
    # float -> int from f16 / bf16, saturating
    h = np.array([0x3E00, 0xC200, 0x7C00, 0x7E00], np.uint16)  # 1.5, -3.0, inf, NaN
    assert convert(h, 32, "s", 16, "f", "rni").tolist() == [2, 0xFFFFFFFD, 0x7FFFFFFF, 0]
    assert convert(np.array([0x3FC0], np.uint16), 32, "u", 16, "bf", "rzi").tolist() == [1]  # 1.5
    # integer rounding within a float type
    assert convert(np.array([0x3E00], np.uint16), 16, "f", 16, "f", "rmi").tolist() == [0x3C00]


def test_cvt_directed_int64():
    big = np.array([(1 << 63) - 1, 1 << 62 | 1], np.uint64)
    assert convert(big, 32, "f", 64, "s", "rz").view(np.float32).tolist() == [2.0**63 - 2.0**39, 2.0**62]
    assert convert(big, 32, "f", 64, "s", "rp").view(np.float32).tolist() == [2.0**63, 2.0**62 + 2.0**39]
    assert convert(big, 64, "f", 64, "u", "rm").view(np.float64).tolist() == [2.0**63 - 1024, 2.0**62]
    neg = np.array([np.uint64(1 << 63)], np.uint64)  # INT64_MIN
    assert convert(neg, 32, "f", 64, "s", "rp").view(np.float32).tolist() == [-(2.0**63)]


# ----------------------------------------------------------------------------- carry chains
@SETTINGS
@given(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1), st.booleans(), st.sampled_from([32, 64]))
def test_add_sub_carry(a, b, c, bits):
    m = (1 << bits) - 1
    a, b = a & m, b & m
    dt = np.uint32 if bits == 32 else np.uint64
    d, co = integer.add_carry(np.array([a], dt), np.array([b], dt), np.array([c]), bits)
    assert (int(d[0]), bool(co[0])) == ((a + b + c) & m, a + b + c > m)
    # subtraction on the same carry (NVIDIA's): a + ~b + c, carry-out the complement of the borrow
    d, co = integer.sub_borrow(np.array([a], dt), np.array([b], dt), np.array([c]), bits)
    assert (int(d[0]), bool(co[0])) == ((a - b - (1 - c)) & m, a - b - (1 - c) >= 0)


@SETTINGS
@given(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1),
       st.booleans(), st.sampled_from([32, 64]), st.booleans(), st.booleans())
def test_mad_carry(a, b, c, cin, bits, hi, signed):
    m = (1 << bits) - 1
    a, b, c = a & m, b & m, c & m
    dt = np.uint32 if bits == 32 else np.uint64
    d, co = integer.mad_carry(np.array([a], dt), np.array([b], dt), np.array([c], dt), np.array([cin]), bits, hi, signed)

    def s(v):
        return v - (1 << bits) if signed and v >> (bits - 1) else v

    p = (s(a) * s(b)) & ((1 << (2 * bits)) - 1)
    half = p >> bits if hi else p & m
    assert (int(d[0]), bool(co[0])) == ((half + c + cin) & m, half + c + cin > m)


def test_is_nan():
    x = np.array([0x7E00, 0x7C00], np.uint16)
    assert halfp.is_nan(x, F16).tolist() == [True, False]
    assert halfp.is_nan(np.array([0x7FC0, 0x7F80], np.uint16), BF16).tolist() == [True, False]


@pytest.mark.parametrize("name", ["f16", "bf16", "f32"])
def test_round_f64_ties_and_boundaries(name):
    """Ties go to even; the largest finite value, the overflow threshold and the subnormal boundary."""
    fmt = FORMATS[name]
    ulp1 = 2.0 ** -fmt.mbits
    xs = [1 + ulp1 / 2, 1 + 3 * ulp1 / 2, -(1 + ulp1 / 2), 2.0 ** (fmt.emin - fmt.mbits - 1),
          2.0 ** (fmt.emin - fmt.mbits - 1) * 3, (2 - ulp1 / 2) * 2.0 ** fmt.bias, 2.0 ** fmt.emin * (1 - ulp1 / 2)]
    for rnd in MODES:
        got = round_f64(np.array(xs), fmt, rnd).tolist()
        want = [round_exact(Fraction(x), name, rnd) for x in xs]
        assert got == want, (rnd, [hex(g) for g in got], [hex(w) for w in want])
