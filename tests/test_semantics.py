"""Property tests of :mod:`xcc.semantics` against exact Python references.

Integers are checked against Python's unbounded ints, floats against an exact
:class:`fractions.Fraction` value rounded to f32 by a small reference rounder
written here (IEEE 754 binary32: 24-bit significand, subnormals, overflow by mode).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xcc.semantics import convert, floating, integer, warp
from xcc.semantics.bits import UDTYPE
from xcc.semantics.compare import compare as fcompare

# numpy warns about casts of NaN/inf and nextafter overflow inside xcc.semantics; the results are checked.
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

SETTINGS = settings(max_examples=100, deadline=None)
INT_TYPES = [(32, False), (32, True), (64, False), (64, True)]
INT_IDS = ["u32", "s32", "u64", "s64"]
MODES = ("rn", "rz", "rm", "rp")


# --------------------------------------------------------------------------- helpers


def arr(x: int, bits: int) -> np.ndarray:
    """A one-element array holding the bit pattern ``x`` (any Python int, reduced mod 2**bits)."""
    return np.array([x & ((1 << bits) - 1)], dtype=UDTYPE[bits])


def one(r) -> int:
    """The single element of a result array as a Python int (bools as 0/1)."""
    r = np.asarray(r).reshape(-1)
    assert r.size == 1
    return int(r[0])


def to_s(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def to_u(x: int, bits: int) -> int:
    return x & ((1 << bits) - 1)


def value(x: int, bits: int, signed: bool) -> int:
    return to_s(x, bits) if signed else to_u(x, bits)


def trunc_div(a: int, b: int) -> int:
    """C-style division (rounds toward zero), exact on Python ints."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def ints(bits: int):
    """Bit patterns of width ``bits``, with the interesting edges made likely."""
    m = (1 << bits) - 1
    edges = [0, 1, 2, m, m - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
    return st.one_of(st.integers(0, m), st.sampled_from(edges), st.integers(0, 300))


# f32 <-> bits ------------------------------------------------------------------------


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_of(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def is_finite_bits(b: int) -> bool:
    return (b >> 23) & 0xFF != 0xFF


def is_nan_bits(b: int) -> bool:
    return (b >> 23) & 0xFF == 0xFF and b & 0x7FFFFF != 0


def negative(b: int) -> bool:
    return bool(b >> 31)


finite_f32 = st.one_of(
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(f32_bits),
    st.integers(0, 0xFFFFFFFF).filter(is_finite_bits),
    st.sampled_from([0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0x33800000,
                     0x80000000, 0x00000000, 0x4B800000]),
)
any_f32 = st.one_of(finite_f32, st.integers(0, 0xFFFFFFFF),
                    st.sampled_from([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001]))

F32_MAX = Fraction((1 << 24) - 1) * Fraction(2) ** 104
MAX_BITS, INF_BITS, SIGN = 0x7F7FFFFF, 0x7F800000, 0x80000000


def pow2(e: int) -> Fraction:
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


def round_to_f32(q: Fraction, mode: str) -> int:
    """The f32 bit pattern of the exact nonzero value ``q`` rounded in ``mode`` (rn ties-to-even).

    Rounds to a 24-bit significand with the exponent bounded below at -126 (so subnormals
    lose precision), then applies IEEE overflow: rn and the modes rounding away from zero
    give infinity, the others the largest finite value.
    """
    assert q != 0
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if pow2(e) > a:
        e -= 1
    assert pow2(e) <= a < pow2(e + 1)
    quantum = max(e, -126) - 23
    scaled = a / pow2(quantum)
    n = scaled.numerator // scaled.denominator
    rest = scaled - n
    if mode == "rn":
        up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rm":
        up = rest != 0 and neg
    elif mode == "rp":
        up = rest != 0 and not neg
    else:
        raise ValueError(mode)
    mag = (n + up) * pow2(quantum)
    if mag > F32_MAX:
        to_inf = mode == "rn" or (mode == "rp" and not neg) or (mode == "rm" and neg)
        bits = INF_BITS if to_inf else MAX_BITS
    else:
        bits = f32_bits(float(mag))  # exact: mag is an f32 value
        assert Fraction(f32_of(bits)) == mag
    return bits | (SIGN if neg else 0)


def exact_sum_bits(terms: list[tuple[Fraction, bool]], mode: str) -> int:
    """The IEEE result of an exactly computed sum; ``terms`` are (value, sign bit) pairs, the
    sign bits matter only for the sign of an exact zero (IEEE 754-2019 section 6.3)."""
    total = sum(v for v, _ in terms)
    if total != 0:
        return round_to_f32(total, mode)
    if all(v == 0 for v, _ in terms) and len({s for _, s in terms}) == 1:
        return SIGN if terms[0][1] else 0  # (+0) + (+0) = +0, (-0) + (-0) = -0
    return SIGN if mode == "rm" else 0


def fr(b: int) -> Fraction:
    return Fraction(f32_of(b))


def f32_arr(b: int) -> np.ndarray:
    return np.array([b], dtype=np.uint32)


# --------------------------------------------------------------------------- the reference itself


@pytest.mark.parametrize("mode", MODES)
def test_reference_rounder_agrees_with_numpy_on_representable_and_rn(mode):
    # Every f32 value rounds to itself, and rn of f64 values matches numpy's cast.
    for b in (0x00000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0x7F7FFFFF, 0xBF800001):
        assert round_to_f32(fr(b), mode) == b
    for x in (0.1, 1 / 3, 1e-45, 3.4028235677973366e38, 2.0**-150, 1.5 * 2.0**-149, 1e39):
        if mode == "rn":
            with np.errstate(over="ignore"):
                assert round_to_f32(Fraction(x), "rn") == f32_bits(float(np.float32(x)))


# --------------------------------------------------------------------------- integers


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@SETTINGS
@given(data=st.data())
def test_add_sub_wrap(bits, signed, data):
    a, b = data.draw(ints(bits)), data.draw(ints(bits))
    assert one(integer.add(arr(a, bits), arr(b, bits), bits, signed)) == to_u(a + b, bits)
    assert one(integer.sub(arr(a, bits), arr(b, bits), bits, signed)) == to_u(a - b, bits)
    assert integer.add(arr(a, bits), arr(b, bits), bits).dtype == UDTYPE[bits]


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@SETTINGS
@given(data=st.data())
def test_mul_lo_hi(bits, signed, data):
    a, b = data.draw(ints(bits)), data.draw(ints(bits))
    p = value(a, bits, signed) * value(b, bits, signed)
    assert one(integer.mul(arr(a, bits), arr(b, bits), bits, "lo", signed)) == to_u(p, bits)
    assert one(integer.mul(arr(a, bits), arr(b, bits), bits, "hi", signed)) == to_u(p >> bits, bits)


@pytest.mark.parametrize(("bits", "signed"), [(16, False), (16, True), (32, False), (32, True)],
                         ids=["u16", "s16", "u32", "s32"])
@SETTINGS
@given(data=st.data())
def test_mul_and_mad_wide(bits, signed, data):
    a, b = data.draw(ints(bits)), data.draw(ints(bits))
    c = data.draw(ints(2 * bits))
    p = value(a, bits, signed) * value(b, bits, signed)
    w = integer.mul(arr(a, bits), arr(b, bits), bits, "wide", signed)
    assert w.dtype == UDTYPE[2 * bits]
    assert one(w) == to_u(p, 2 * bits)
    assert one(integer.mad(arr(a, bits), arr(b, bits), arr(c, 2 * bits), bits, "wide", signed)) == \
        to_u(p + c, 2 * bits)


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@SETTINGS
@given(data=st.data())
def test_mad_lo_hi(bits, signed, data):
    a, b, c = data.draw(ints(bits)), data.draw(ints(bits)), data.draw(ints(bits))
    p = value(a, bits, signed) * value(b, bits, signed)
    assert one(integer.mad(arr(a, bits), arr(b, bits), arr(c, bits), bits, "lo", signed)) == to_u(p + c, bits)
    assert one(integer.mad(arr(a, bits), arr(b, bits), arr(c, bits), bits, "hi", signed)) == \
        to_u((p >> bits) + c, bits)


def _div_rem_reference(a: int, b: int, bits: int, signed: bool) -> tuple[int, int]:
    if to_u(b, bits) == 0:  # documented (as an NVIDIA H200 gives them): quotient and remainder all ones
        return (1 << bits) - 1, (1 << bits) - 1
    x, y = value(a, bits, signed), value(b, bits, signed)
    q = trunc_div(x, y)
    return to_u(q, bits), to_u(x - q * y, bits)  # INT_MIN / -1 wraps to INT_MIN, remainder 0


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@SETTINGS
@given(data=st.data())
def test_div_rem(bits, signed, data):
    a, b = data.draw(ints(bits)), data.draw(ints(bits))
    q, r = _div_rem_reference(a, b, bits, signed)
    assert one(integer.div(arr(a, bits), arr(b, bits), bits, signed)) == q
    assert one(integer.rem(arr(a, bits), arr(b, bits), bits, signed)) == r


# Regression: np.abs(INT64_MIN) overflowed, so INT64_MIN / 2 gave +2**62 and 5 / INT64_MIN gave 1.
@pytest.mark.parametrize(("a", "b"), [(1 << 63, 2), (1 << 63, 3), (5, 1 << 63), (to_u(-7, 64), 1 << 63),
                                      (1 << 63, 1 << 63), (1 << 63, to_u(-3, 64))])
def test_div_rem_s64_int64_min(a, b):
    q, r = _div_rem_reference(a, b, 64, True)
    assert (one(integer.div(arr(a, 64), arr(b, 64), 64, True)),
            one(integer.rem(arr(a, 64), arr(b, 64), 64, True))) == (q, r)


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
def test_div_rem_by_zero_documented(bits, signed):
    for a in (0, 1, 7, (1 << bits) - 1, 1 << (bits - 1)):
        assert one(integer.div(arr(a, bits), arr(0, bits), bits, signed)) == (1 << bits) - 1
        assert one(integer.rem(arr(a, bits), arr(0, bits), bits, signed)) == (1 << bits) - 1


@pytest.mark.parametrize("bits", [32, 64])
def test_signed_int_min_div_minus_one_wraps(bits):
    int_min = 1 << (bits - 1)
    assert one(integer.div(arr(int_min, bits), arr(-1, bits), bits, True)) == int_min
    assert one(integer.rem(arr(int_min, bits), arr(-1, bits), bits, True)) == 0


def test_operations_are_elementwise_on_arrays():
    a = np.array([1, 2, 0xFFFFFFFF, 0x80000000], dtype=np.uint32)
    b = np.array([3, 0, 2, 0xFFFFFFFF], dtype=np.uint32)
    assert integer.div(a, b, 32, True).tolist() == [0, 0xFFFFFFFF, 0, 0x80000000]
    assert integer.rem(a, b, 32, False).tolist() == [1, 0xFFFFFFFF, 1, 0x80000000]
    assert integer.add(a, b, 32).tolist() == [4, 2, 1, 0x7FFFFFFF]


counts = st.one_of(st.integers(0, 70), st.integers(0, 0xFFFFFFFF), st.sampled_from([31, 32, 33, 63, 64, 65]))


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@SETTINGS
@given(data=st.data())
def test_shifts_including_counts_at_or_beyond_the_width(bits, signed, data):
    a, n = data.draw(ints(bits)), data.draw(counts)
    shl = to_u(a << n, bits) if n < bits else 0
    shr = to_u(to_s(a, bits) >> n, bits) if signed else to_u(a, bits) >> n
    assert one(integer.shl(arr(a, bits), arr(n, 32), bits, signed)) == shl
    assert one(integer.shr(arr(a, bits), arr(n, 32), bits, signed)) == shr


@pytest.mark.parametrize("bits", [32, 64])
@SETTINGS
@given(data=st.data())
def test_popc_brev(bits, data):
    a = data.draw(ints(bits))
    assert one(integer.popc(arr(a, bits), bits)) == bin(a).count("1")
    assert one(integer.brev(arr(a, bits), bits)) == int(format(a, f"0{bits}b")[::-1], 2)
    assert integer.popc(arr(a, bits), bits).dtype == np.uint32


@SETTINGS
@given(a=ints(32))
@example(a=0)
def test_clz_32(a):
    assert one(integer.clz(arr(a, 32), 32)) == 32 - a.bit_length()


@SETTINGS
@given(a=st.one_of(ints(64), st.integers((1 << 64) - (1 << 17), (1 << 64) - 1)))
@example(a=0)
@example(a=(1 << 53) + 1)
@example(a=(1 << 63))
@example(a=(1 << 54) - 1)
def test_clz_64(a):
    assert one(integer.clz(arr(a, 64), 64)) == 64 - a.bit_length()


# Regression: log2 of u64 values within ~2**15.5 of 2**64 rounds to 64.0, which made clz.b64 0xFFFFFFFF.
@pytest.mark.parametrize("a", [(1 << 64) - 1, (1 << 64) - 1000, (1 << 64) - 40000])
def test_clz_64_top_values(a):
    assert one(integer.clz(arr(a, 64), 64)) == 0


INT_CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
PY_CMP = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
          "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
UNSIGNED_CMP = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@pytest.mark.parametrize("bits", [16, 32, 64])
@pytest.mark.parametrize("kind", ["u", "s", "b"])
@SETTINGS
@given(data=st.data())
def test_integer_compare(bits, kind, data):
    a, b = data.draw(ints(bits)), data.draw(st.one_of(ints(bits), st.just(None)))
    b = a if b is None else b
    for cmp in INT_CMPS:
        if cmp in UNSIGNED_CMP:
            ref = PY_CMP[UNSIGNED_CMP[cmp]](to_u(a, bits), to_u(b, bits))
        else:
            ref = PY_CMP[cmp](value(a, bits, kind == "s"), value(b, bits, kind == "s"))
        got = fcompare(cmp, arr(a, bits), arr(b, bits), bits, kind)
        assert got.dtype == np.bool_
        assert bool(got[0]) == ref, cmp


@SETTINGS
@given(a=any_f32, b=any_f32)
def test_float_compare_ordered_and_unordered(a, b):
    unordered = is_nan_bits(a) or is_nan_bits(b)
    x, y = f32_of(a), f32_of(b)
    for cmp, fn in PY_CMP.items():
        ordered = (not unordered) and fn(x, y)
        assert bool(fcompare(cmp, f32_arr(a), f32_arr(b), 32, "f")[0]) == ordered, cmp
        assert bool(fcompare(cmp + "u", f32_arr(a), f32_arr(b), 32, "f")[0]) == (unordered or fn(x, y))
    assert bool(fcompare("nan", f32_arr(a), f32_arr(b), 32, "f")[0]) == unordered
    assert bool(fcompare("num", f32_arr(a), f32_arr(b), 32, "f")[0]) == (not unordered)


# --------------------------------------------------------------------------- f32 arithmetic

FSETTINGS = settings(max_examples=200, deadline=None)


@pytest.mark.parametrize("mode", MODES)
@FSETTINGS
@given(a=finite_f32, b=finite_f32)
@example(a=0x3F800000, b=0x33800000)  # 1 + 2**-24: a tie, rn keeps the even 1.0
@example(a=0x3F800001, b=0x33800000)  # odd neighbour: rn rounds up
@example(a=0x7F7FFFFF, b=0x7F7FFFFF)  # overflow
@example(a=0x00000001, b=0x80000002)  # subnormal difference
@example(a=0x80000000, b=0x80000000)  # -0 + -0
@example(a=0x00000000, b=0x80000000)  # +0 + -0
def test_fadd_fsub_exactly_rounded(mode, a, b):
    terms = [(fr(a), negative(a)), (fr(b), negative(b))]
    assert one(floating.fadd(f32_arr(a), f32_arr(b), 32, mode)) == exact_sum_bits(terms, mode)
    nb = b ^ SIGN
    terms = [(fr(a), negative(a)), (fr(nb), negative(nb))]
    assert one(floating.fsub(f32_arr(a), f32_arr(b), 32, mode)) == exact_sum_bits(terms, mode)


@pytest.mark.parametrize("mode", MODES)
@FSETTINGS
@given(a=finite_f32, b=finite_f32)
@example(a=0x7F7FFFFF, b=0x40000000)  # overflow
@example(a=0x00000001, b=0x3F000000)  # 2**-149 * 0.5: underflow to a tie with zero
@example(a=0x00000003, b=0x3F000000)  # 1.5 * 2**-149: tie between 1 and 2 ulps
@example(a=0x80000000, b=0x3F800000)  # -0 * 1
def test_fmul_exactly_rounded(mode, a, b):
    p = fr(a) * fr(b)
    ref = round_to_f32(p, mode) if p != 0 else (SIGN if negative(a) != negative(b) else 0)
    assert one(floating.fmul(f32_arr(a), f32_arr(b), 32, mode)) == ref


def _fma_reference(a: int, b: int, c: int, mode: str):
    terms = [(fr(a) * fr(b), negative(a) != negative(b)), (fr(c), negative(c))]
    return terms, exact_sum_bits(terms, mode)


@pytest.mark.parametrize("mode", MODES)
@FSETTINGS
@given(a=finite_f32, b=finite_f32, c=finite_f32)
@example(a=0x3F800001, b=0x3F800001, c=0xBF800002)  # (1+u)^2 - (1+2u) = u^2: a single rounding
@example(a=0x7F7FFFFF, b=0x3F800000, c=0x7F7FFFFF)
@example(a=0x00000001, b=0x00000001, c=0x00000000)  # product far below the subnormals
@example(a=0x00000001, b=0x00000001, c=0x80000000)
def test_ffma_single_rounding(mode, a, b, c):
    _, ref = _fma_reference(a, b, c, mode)
    assert one(floating.ffma(f32_arr(a), f32_arr(b), f32_arr(c), 32, mode)) == ref


@pytest.mark.parametrize("mode", MODES)
@FSETTINGS
@given(a=finite_f32, b=finite_f32, nudge=st.integers(-2, 2))
def test_ffma_near_cancellation(mode, a, b, nudge):
    """c = -(a*b rounded) +- a few ulps: the result is the tiny exact residual, rounded once."""
    with np.errstate(all="ignore"):
        p = np.float32(f32_of(a)) * np.float32(f32_of(b))
    if not np.isfinite(p):
        return
    c = f32_bits(-float(p))
    if c & 0x7FFFFFFF and is_finite_bits(c + nudge) and ((c + nudge) >> 31) == (c >> 31):
        c += nudge
    _, ref = _fma_reference(a, b, c, mode)
    assert one(floating.ffma(f32_arr(a), f32_arr(b), f32_arr(c), 32, mode)) == ref


# Regression: an exact zero sum of operands of opposite signs was +0 under .rm (IEEE 754-2019 6.3: -0).
@pytest.mark.parametrize(("op", "x", "y"), [("add", 0x3F800000, 0xBF800000), ("add", 0x00000000, 0x80000000),
                                            ("fma", 0x3F800000, 0xBF800000), ("fma", 0x00000000, 0x80000000)])
def test_rm_exact_zero_sum_gives_negative_zero(op, x, y):
    if op == "add":
        r = floating.fadd(f32_arr(x), f32_arr(y), 32, "rm")
    else:  # x * 1 + y
        r = floating.ffma(f32_arr(x), f32_arr(0x3F800000), f32_arr(y), 32, "rm")
    assert one(r) == SIGN


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=100, deadline=None)
@given(a=any_f32, b=any_f32, c=any_f32)
def test_nan_and_infinity_rules(mode, a, b, c):
    x, y, z = f32_of(a), f32_of(b), f32_of(c)
    with np.errstate(all="ignore"):
        add_nan = math.isnan(x) or math.isnan(y) or (math.isinf(x) and math.isinf(y) and x != y)
        mul_nan = math.isnan(x) or math.isnan(y) or (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0)
    assert is_nan_bits(one(floating.fadd(f32_arr(a), f32_arr(b), 32, mode))) == add_nan
    assert is_nan_bits(one(floating.fmul(f32_arr(a), f32_arr(b), 32, mode))) == mul_nan
    if math.isinf(x) and not add_nan:
        assert one(floating.fadd(f32_arr(a), f32_arr(b), 32, mode)) == a
    if mul_nan or math.isnan(z):
        assert is_nan_bits(one(floating.ffma(f32_arr(a), f32_arr(b), f32_arr(c), 32, mode)))


@pytest.mark.parametrize(("mode", "expected"), [("rn", INF_BITS), ("rz", MAX_BITS), ("rm", MAX_BITS),
                                                ("rp", INF_BITS)])
def test_overflow_by_rounding_mode(mode, expected):
    big = f32_arr(MAX_BITS)
    assert one(floating.fadd(big, big, 32, mode)) == expected
    assert one(floating.fmul(f32_arr(MAX_BITS | SIGN), f32_arr(0x40000000), 32, mode)) == \
        round_to_f32(-2 * F32_MAX, mode)


# --------------------------------------------------------------------------- min / max


def _minmax_reference(a: int, b: int, pick_min: bool) -> int:
    """PTX min/max: a NaN operand yields the other, two NaNs the canonical NaN, -0 < +0."""
    if is_nan_bits(a) and is_nan_bits(b):
        return 0x7FFFFFFF
    if is_nan_bits(a):
        return b
    if is_nan_bits(b):
        return a

    def key(v):  # order by value, -0 before +0
        return (f32_of(v), 0 if negative(v) else 1)

    return min(a, b, key=key) if pick_min else max(a, b, key=key)


@SETTINGS
@given(a=any_f32, b=any_f32)
@example(a=0x80000000, b=0x00000000)
@example(a=0x00000000, b=0x80000000)
@example(a=0x7FC00000, b=0xFF800000)
@example(a=0x7FC00001, b=0xFFC00002)
def test_fmin_fmax_nan_and_signed_zero(a, b):
    assert one(floating.fmin(f32_arr(a), f32_arr(b), 32)) == _minmax_reference(a, b, True)
    assert one(floating.fmax(f32_arr(a), f32_arr(b), 32)) == _minmax_reference(a, b, False)


def test_fmin_fmax_signed_zero_explicit():
    pz, nz = f32_arr(0), f32_arr(SIGN)
    for x, y in ((pz, nz), (nz, pz)):
        assert one(floating.fmin(x, y, 32)) == SIGN
        assert one(floating.fmax(x, y, 32)) == 0
    nan = f32_arr(0x7FC00000)
    assert one(floating.fmin(nan, f32_arr(0x40400000), 32)) == 0x40400000
    assert one(floating.fmax(f32_arr(0xC0400000), nan, 32)) == 0xC0400000
    assert one(floating.fmin(nan, nan, 32)) == floating.CANONICAL_NAN[32]


# --------------------------------------------------------------------------- conversions


def _f2i_reference(b: int, bits: int, signed: bool, rnd: str) -> int:
    """f32 -> integer; a NaN gives 0 for 32-bit results and 2^63 (the top bit) for 64-bit ones, as the H200 does
    (docs/semantics.md, NaN rows)."""
    if is_nan_bits(b):
        return 1 << 63 if bits == 64 else 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    x = f32_of(b)
    if math.isinf(x):
        return to_u(hi if x > 0 else lo, bits)
    q = Fraction(x)
    n = {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil, "rni": round}[rnd](q)  # round(): half even
    return to_u(min(max(n, lo), hi), bits)


f2i_inputs = st.one_of(any_f32, st.floats(-3e9, 3e9, width=32).map(f32_bits),
                       st.sampled_from([0x4F000000, 0xCF000000, 0x4EFFFFFF, 0x4F800000, 0x3F000000, 0x3FC00000,
                                        0xBF000000, 0xC0200000, 0x5F000000, 0xDF000000]))


@pytest.mark.parametrize("rnd", ["rzi", "rni", "rmi", "rpi"])
@pytest.mark.parametrize(("bits", "signed"), [(32, True), (32, False)], ids=["s32", "u32"])
@SETTINGS
@given(b=f2i_inputs)
def test_f32_to_int32_saturates_nan_is_zero(rnd, bits, signed, b):
    got = convert(f32_arr(b), bits, "s" if signed else "u", 32, "f", rnd)
    assert one(got) == _f2i_reference(b, bits, signed, rnd)


def test_f32_to_s32_default_rounding_is_truncation():
    assert one(convert(f32_arr(f32_bits(-2.75)), 32, "s", 32, "f")) == to_u(-2, 32)
    assert one(convert(f32_arr(0x7FC00000), 32, "s", 32, "f")) == 0
    assert one(convert(f32_arr(0xFF800000), 32, "s", 32, "f")) == 0x80000000
    assert one(convert(f32_arr(f32_bits(3e9)), 32, "s", 32, "f")) == 0x7FFFFFFF


@SETTINGS
@given(b=st.one_of(f2i_inputs, st.floats(-(2.0**64), 2.0**65, width=32).map(f32_bits)))
def test_f32_to_64bit_ints_saturate_nan_is_the_top_bit(b):
    for rnd in ("rzi", "rni", "rmi", "rpi"):
        for signed in (True, False):
            got = convert(f32_arr(b), 64, "s" if signed else "u", 32, "f", rnd)
            assert one(got) == _f2i_reference(b, 64, signed, rnd), (rnd, signed)


# Regression: clipping to 2**63-1 / 2**64-1 in f64 rounded to 2**63 / 2**64, so f32 1e30 or +inf gave
# s64 -1 and u64 0 instead of saturating.
@pytest.mark.parametrize(("b", "kind", "expected"), [(f32_bits(1e30), "s", (1 << 63) - 1), (INF_BITS, "s", (1 << 63) - 1),
                                                     (f32_bits(1e30), "u", (1 << 64) - 1), (INF_BITS, "u", (1 << 64) - 1)])
def test_f32_to_64bit_saturates_high(b, kind, expected):
    assert one(convert(f32_arr(b), 64, kind, 32, "f", "rzi")) == expected


@SETTINGS
@given(a=ints(32))
@example(a=0x7FFFFFFF)
@example(a=0x80000000)
@example(a=(1 << 24) + 1)
def test_int32_to_f32_rn(a):
    for signed in (True, False):
        v = value(a, 32, signed)
        ref = round_to_f32(Fraction(v), "rn") if v else 0
        assert one(convert(arr(a, 32), 32, "f", 32, "s" if signed else "u")) == ref


@SETTINGS
@given(a=ints(64))
def test_int64_to_f32_rn(a):
    for signed in (True, False):
        v = value(a, 64, signed)
        ref = round_to_f32(Fraction(v), "rn") if v else 0
        assert one(convert(arr(a, 64), 32, "f", 64, "s" if signed else "u")) == ref


@SETTINGS
@given(a=ints(32), dst=st.sampled_from([(8, "u"), (8, "s"), (16, "u"), (16, "s"), (64, "u"), (64, "s")]))
def test_int_to_int_conversions(a, dst):
    bits, kind = dst
    for src_kind in ("u", "s"):
        v = value(a, 32, src_kind == "s")
        assert one(convert(arr(a, 32), bits, kind, 32, src_kind)) == to_u(v, bits)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if kind == "s" else (0, (1 << bits) - 1)
        assert one(convert(arr(a, 32), bits, kind, 32, src_kind, sat=True)) == to_u(min(max(v, lo), hi), bits)


# --------------------------------------------------------------------------- bit fields, bytes, dot products
# References written from the pseudo-code of the PTX ISA 9.0 sections named in each test, on Python ints.

BSETTINGS = settings(max_examples=60, deadline=None)
counts = st.one_of(st.integers(0, 70), st.sampled_from([255, 256, 257, 0x1FF, 0xFFFFFFFF, 0x100 + 5]),
                   st.integers(0, 0xFFFFFFFF))


def bit(x: int, i: int) -> int:
    return (x >> i) & 1


def ref_bfe(a: int, b: int, c: int, bits: int, signed: bool) -> int:
    """9.7.1.19 bfe."""
    msb, pos, ln = bits - 1, b & 0xFF, c & 0xFF
    sbit = 0 if (not signed or ln == 0) else bit(a, min(pos + ln - 1, msb))
    return sum(((bit(a, pos + i) if (i < ln and pos + i <= msb) else sbit) << i) for i in range(msb + 1))


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@BSETTINGS
@given(data=st.data())
def test_bfe(bits, signed, data):
    a, b, c = data.draw(ints(bits)), data.draw(counts), data.draw(counts)
    assert one(integer.bfe(arr(a, bits), arr(b, 32), arr(c, 32), bits, signed)) == ref_bfe(a, b, c, bits, signed)


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@pytest.mark.parametrize(("a", "b", "c"), [(0xF0, 4, 4), (0x80000000, 31, 255), (0x12345678, 40, 8),
                                           (0x12345678, 0x104, 0x108), (5, 0, 0), (1 << 63, 63, 1)])
def test_bfe_edges(bits, signed, a, b, c):
    """Fields running past the msb, positions beyond it, only the low 8 bits of pos and len."""
    a = to_u(a, bits)
    assert one(integer.bfe(arr(a, bits), arr(b, 32), arr(c, 32), bits, signed)) == ref_bfe(a, b, c, bits, signed)


@pytest.mark.parametrize("bits", [32, 64])
@BSETTINGS
@given(data=st.data())
def test_bfi(bits, data):
    """9.7.1.20 bfi: f = b; f[pos + i] = a[i] for i < len and pos + i <= msb."""
    a, b, c, d = data.draw(ints(bits)), data.draw(ints(bits)), data.draw(counts), data.draw(counts)
    msb, pos, ln = bits - 1, c & 0xFF, d & 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (bit(a, i) << (pos + i))
        i += 1
    assert one(integer.bfi(arr(a, bits), arr(b, bits), arr(c, 32), arr(d, 32), bits)) == f


def ref_prmt(a: int, b: int, c: int, mode: str | None) -> int:
    """9.7.9.7 prmt; the modes as closed forms of the table (selector s = c[1:0], result byte i)."""
    tmp64 = (b << 32) | a
    source = {
        "f4e": lambda s, i: s + i, "b4e": lambda s, i: (s - i) % 8, "rc8": lambda s, i: s,
        "ecl": lambda s, i: max(i, s), "ecr": lambda s, i: min(i, s), "rc16": lambda s, i: 2 * (s & 1) + (i & 1),
    }
    d = 0
    for i in range(4):
        if mode is None:
            ctl = (c >> (4 * i)) & 0xF
            byte = (tmp64 >> (8 * (ctl & 7))) & 0xFF
            if ctl & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = (tmp64 >> (8 * source[mode](c & 3, i))) & 0xFF
        d |= byte << (8 * i)
    return d


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@BSETTINGS
@given(a=ints(32), b=ints(32), c=st.one_of(ints(32), st.integers(0, 0xFFFF)))
def test_prmt(mode, a, b, c):
    assert one(integer.prmt(arr(a, 32), arr(b, 32), arr(c, 32), mode)) == ref_prmt(a, b, c, mode)


def test_prmt_documented_examples():
    a, b = arr(0x03020100, 32), arr(0x07060504, 32)  # byte k holds k
    assert one(integer.prmt(a, b, arr(0x7531, 32))) == 0x07050301  # CUB's PRMT example
    assert one(integer.prmt(a, arr(0x87060504, 32), arr(0x000F, 32))) == 0xFF  # sign of byte 7 replicated
    for mode, rows in integer.PRMT_MODES.items():  # the table reads d.b3 .. d.b0
        for sel, row in enumerate(rows):
            want = sum(src << (8 * (3 - k)) for k, src in enumerate(row))
            assert one(integer.prmt(a, b, arr(sel | 0xFC, 32), mode)) == want, (mode, sel)


@pytest.mark.parametrize("left", [True, False], ids=["l", "r"])
@pytest.mark.parametrize("clamp", [True, False], ids=["clamp", "wrap"])
@BSETTINGS
@given(a=ints(32), b=ints(32), c=counts)
def test_shf(left, clamp, a, b, c):
    """9.7.8.7 shf, with C's u32 truncation made explicit."""
    n = min(c, 32) if clamp else c & 0x1F
    d = (b << n) | (a >> (32 - n)) if left else (b << (32 - n)) | (a >> n)
    assert one(integer.shf(arr(a, 32), arr(b, 32), arr(c, 32), left, clamp)) == d & 0xFFFFFFFF


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@pytest.mark.parametrize("shiftamt", [False, True])
@BSETTINGS
@given(data=st.data())
def test_bfind(bits, signed, shiftamt, data):
    """9.7.1.16 bfind."""
    a = data.draw(ints(bits))
    msb, x = bits - 1, a
    if signed and bit(x, msb):  # negate negative signed inputs
        x = ~x & ((1 << bits) - 1)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if bit(x, i):
            d = i
            break
    if shiftamt and d != 0xFFFFFFFF:
        d = msb - d
    assert one(integer.bfind(arr(a, bits), bits, signed, shiftamt)) == d


@pytest.mark.parametrize(("bits", "signed"), INT_TYPES, ids=INT_IDS)
@BSETTINGS
@given(data=st.data())
def test_bfind_signed_inverts_negative_inputs(bits, signed, data):
    a = data.draw(ints(bits))
    got = one(integer.bfind(arr(a, bits), bits, signed))
    v = value(a, bits, signed)
    want = (v if v >= 0 else ~v).bit_length() - 1
    assert got == want & 0xFFFFFFFF


@pytest.mark.parametrize("clamp", [True, False], ids=["clamp", "wrap"])
@BSETTINGS
@given(a=counts, b=counts)
def test_bmsk(clamp, a, b):
    """9.7.1.22 bmsk."""
    m = 0xFFFFFFFF
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = (m << a1) & m
    total = a1 + b1
    mask1 = (m << total) & m
    overflow = total >= 32
    if clamp:
        if a >= 32:
            overflow, mask0 = True, 0
        if b >= 32:
            overflow = True
    if overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = m
    assert one(integer.bmsk(arr(a, 32), arr(b, 32), clamp)) == mask0 & ~mask1 & m


def fields(x: int, count: int, width: int, signed: bool) -> list[int]:
    return [value(x >> (width * i), width, signed) for i in range(count)]


@pytest.mark.parametrize("sa", [False, True], ids=["a_u32", "a_s32"])
@pytest.mark.parametrize("sb", [False, True], ids=["b_u32", "b_s32"])
@BSETTINGS
@given(a=ints(32), b=ints(32), c=ints(32))
def test_dp4a(sa, sb, a, b, c):
    """9.7.1.23 dp4a."""
    d = c + sum(x * y for x, y in zip(fields(a, 4, 8, sa), fields(b, 4, 8, sb)))
    assert one(integer.dp4a(arr(a, 32), arr(b, 32), arr(c, 32), sa, sb)) == to_u(d, 32)


@pytest.mark.parametrize("sa", [False, True], ids=["a_u32", "a_s32"])
@pytest.mark.parametrize("sb", [False, True], ids=["b_u32", "b_s32"])
@pytest.mark.parametrize("hi", [False, True], ids=["lo", "hi"])
@BSETTINGS
@given(a=ints(32), b=ints(32), c=ints(32))
def test_dp2a(sa, sb, hi, a, b, c):
    """9.7.1.24 dp2a."""
    va, vb = fields(a, 2, 16, sa), fields(b, 4, 8, sb)
    k = 2 if hi else 0
    d = c + va[0] * vb[k] + va[1] * vb[k + 1]
    assert one(integer.dp2a(arr(a, 32), arr(b, 32), arr(c, 32), sa, sb, hi)) == to_u(d, 32)


@pytest.mark.parametrize("signed", [False, True], ids=["u32", "s32"])
@pytest.mark.parametrize("hi", [False, True], ids=["lo", "hi"])
@BSETTINGS
@given(a=ints(32), b=ints(32), c=ints(32))
def test_mul24_mad24(signed, hi, a, b, c):
    """9.7.1.5 mul24 / 9.7.1.6 mad24: t = a[23:0] * b[23:0]; d = t<47..16> or t<31..0> (+ c)."""
    t = value(a, 24, signed) * value(b, 24, signed)
    part = t >> 16 if hi else t
    assert one(integer.mul24(arr(a, 32), arr(b, 32), hi, signed)) == to_u(part, 32)
    assert one(integer.mad24(arr(a, 32), arr(b, 32), arr(c, 32), hi, signed)) == to_u(part + c, 32)
    if hi and signed:  # mad24.hi.sat.s32: the exact sum clamped
        s = min(max(to_s(part, 32) + to_s(c, 32), -(1 << 31)), (1 << 31) - 1)
        assert one(integer.mad24(arr(a, 32), arr(b, 32), arr(c, 32), True, True, sat=True)) == to_u(s, 32)


def test_bit_operation_documented_examples():
    assert one(integer.bmsk(arr(1, 32), arr(2, 32), clamp=False)) == 0x6  # PTX 9.7.1.22's example
    assert one(integer.bmsk(arr(40, 32), arr(3, 32), clamp=True)) == 0  # position >= 32 clamps
    # (-2**23)**2 = 2**46: bits 47..16 are 2**30; + INT_MAX saturates
    assert one(integer.mul24(arr(0x800000, 32), arr(0x800000, 32), hi=True, signed=True)) == 1 << 30
    assert one(integer.mad24(arr(0x800000, 32), arr(0x800000, 32), arr(0x7FFFFFFF, 32), True, True, True)) \
        == 0x7FFFFFFF
    assert one(integer.bfind(arr(0, 64), 64, shiftamt=True)) == 0xFFFFFFFF
    assert one(integer.bfind(arr(-1, 32), 32, signed=True)) == 0xFFFFFFFF  # no non-sign bit


@pytest.mark.parametrize("bits", [32, 64])
@BSETTINGS
@given(data=st.data())
def test_copysign(bits, data):
    """9.7.3.2 copysign: d = b with the sign bit of a (NaN payloads kept)."""
    a, b = data.draw(ints(bits)), data.draw(ints(bits))
    fmt = "<f" if bits == 32 else "<d"
    fb = struct.unpack(fmt, b.to_bytes(bits // 8, "little"))[0]
    fa = struct.unpack(fmt, a.to_bytes(bits // 8, "little"))[0]
    got = one(floating.copysign(arr(a, bits), arr(b, bits), bits))
    if math.isnan(fb):
        assert got == (b & ((1 << (bits - 1)) - 1)) | (a & (1 << (bits - 1)))
    else:
        want = struct.pack(fmt, math.copysign(fb, -1.0 if a >> (bits - 1) else 1.0))
        assert got == int.from_bytes(want, "little"), (fa, fb)


@SETTINGS
@given(a=ints(32), b=ints(32), c=ints(32))
def test_saturating_add_sub_and_mad_hi(a, b, c):
    """add.sat.s32, sub.sat.s32 and mad.hi.sat.s32 (9.7.1.1, 9.7.1.2, 9.7.1.4): exact, then clamped."""
    def clamp(v):
        return to_u(min(max(v, -(1 << 31)), (1 << 31) - 1), 32)

    x, y, z = to_s(a, 32), to_s(b, 32), to_s(c, 32)
    assert one(integer.add_sat(arr(a, 32), arr(b, 32), 32)) == clamp(x + y)
    assert one(integer.add_sat(arr(a, 32), arr(b, 32), 32, negate_b=True)) == clamp(x - y)
    assert one(integer.mad(arr(a, 32), arr(b, 32), arr(c, 32), 32, "hi", True, sat=True)) == clamp(((x * y) >> 32) + z)


# --------------------------------------------------------------------------- warp-level (shfl, vote, activemask)
# The threads executing together: sorted slots of three warps; warp = slot >> 5, lane = slot & 31.
WSETTINGS = settings(max_examples=200, deadline=None)
u32s = st.integers(0, 2**32 - 1)
# c operands: ((32 - width) << 8) | clamp as compilers write them, or any 32 bits.
c_operands = st.one_of(st.builds(lambda w, cl: ((32 - w) << 8) | cl, st.sampled_from([1, 2, 4, 8, 16, 32]),
                                 st.sampled_from([0, 31]) | st.integers(0, 31)), u32s)
masks = st.sampled_from([0xFFFFFFFF, 0x0000FFFF, 0x55555555, 0]) | u32s


@st.composite
def warp_threads(draw, per_thread: dict):
    """(sorted slot array, {name: one value per thread}) for the strategies in ``per_thread``."""
    slots = sorted(draw(st.sets(st.integers(0, 95), min_size=1)))
    return np.array(slots, np.int64), {k: [draw(s) for _ in slots] for k, s in per_thread.items()}


def shfl_reference(mode: str, slots, a, b, c, mask):
    """PTX ISA 9.7.9.6's pseudocode, one thread at a time, with xcc's rule (an NVIDIA H200's) for a
    source in range that is not executing or not in the reader's membermask: 0 and p = true."""
    where = {s: i for i, s in enumerate(slots)}
    out = []
    for i, s in enumerate(slots):
        lane, bval, cval, segmask = s & 31, b[i] & 31, c[i] & 31, (c[i] >> 8) & 31
        max_lane = (lane & segmask) | (cval & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - bval
            pval = j >= max_lane
        else:
            j = {"down": lane + bval, "bfly": lane ^ bval, "idx": min_lane | (bval & ~segmask)}[mode]
            pval = j <= max_lane
        src = s - lane + j
        if not pval:
            out.append((a[i], False))
        elif src in where and (mask[i] >> j) & 1 == 1:
            out.append((a[where[src]], True))
        else:
            out.append((0, True))
    return out


def warps_of(slots):
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(slots):
        groups.setdefault(s >> 5, []).append(i)
    return [groups[s >> 5] for s in slots]


@pytest.mark.parametrize("mode", warp.SHFL_MODES)
@WSETTINGS
@given(t=warp_threads({"a": u32s, "b": st.integers(0, 40) | u32s, "c": c_operands, "mask": masks}))
def test_shfl_matches_the_per_lane_rule(mode, t):
    slots, v = t
    d, p = warp.shfl(mode, slots, np.array(v["a"], np.uint32), np.array(v["b"], np.uint32),
                     np.array(v["c"], np.uint32), np.array(v["mask"], np.uint32))
    want = shfl_reference(mode, slots.tolist(), v["a"], v["b"], v["c"], v["mask"])
    assert list(zip(d.tolist(), p.tolist())) == want


@pytest.mark.parametrize("mode", ("ballot",) + warp.VOTE_MODES)
@WSETTINGS
@given(t=warp_threads({"pred": st.booleans(), "mask": masks}))
def test_vote_matches_the_per_lane_rule(mode, t):
    slots, v = t
    pred, mask = np.array(v["pred"]), np.array(v["mask"], np.uint32)
    got = (warp.ballot(slots, pred, mask) if mode == "ballot" else warp.vote(mode, slots, pred, mask)).tolist()
    want = []
    for members in warps_of(slots.tolist()):
        taking_part = [i for i in members if (v["mask"][i] >> (slots[i] & 31)) & 1]
        votes = [v["pred"][i] for i in taking_part]
        want.append({"ballot": sum(1 << int(slots[i] & 31) for i in taking_part if v["pred"][i]),
                     "all": all(votes), "any": any(votes), "uni": all(votes) or not any(votes)}[mode])
    assert got == want


@WSETTINGS
@given(t=warp_threads({}))
def test_activemask_is_the_executing_lanes_of_the_warp(t):
    slots, _ = t
    want = [sum(1 << int(slots[i] & 31) for i in members) for members in warps_of(slots.tolist())]
    assert warp.activemask(slots).tolist() == want


def test_shfl_documented_cases():
    full = np.arange(32, dtype=np.int64)
    a = full.astype(np.uint32) * 10
    # down by 1 over the whole warp: lane 31 has no source and keeps its own value
    d, p = warp.shfl("down", full, a, 1, 31, 0xFFFFFFFF)
    assert d.tolist() == [10 * (i + 1) for i in range(31)] + [310] and p.tolist() == [True] * 31 + [False]
    # idx 3 within segments of 8 lanes (c = 0x181F): every lane reads lane 3 of its segment
    d, p = warp.shfl("idx", full, a, 3, 0x181F, 0xFFFFFFFF)
    assert d.tolist() == [10 * ((i & ~7) | 3) for i in range(32)] and all(p)
    # a source in range but outside the member mask, or not executing, gives 0 with p = true (as an
    # NVIDIA H200 does: bench/gpu_semantics.py)
    d, p = warp.shfl("bfly", full, a, 1, 31, 0x0000FFFF)
    assert d.tolist() == [10 * (i ^ 1) for i in range(16)] + [0] * 16
    assert p.all()
    half = full[full % 2 == 0]
    d, p = warp.shfl("bfly", half, a[half], 1, 31, 0xFFFFFFFF)
    assert d.tolist() == [0] * 16 and p.all()
