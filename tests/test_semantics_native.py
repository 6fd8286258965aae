"""f64 fma and directed rounding (:mod:`xcc.semantics.native`) against an exact reference.

Every operand is converted to an exact :class:`fractions.Fraction`, the operation is
done exactly (sqrt with integer square roots) and the result is rounded to binary64 or
binary32 by the small reference rounder below: 53/24-bit significand, gradual underflow,
overflow by mode, and IEEE 754-2019's signs of exact zeros (6.3).  The results under test
come through :mod:`xcc.semantics.floating` on bit patterns, as the interpreters call it.
"""

from __future__ import annotations

import math
import platform
import struct
import threading
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xcc.semantics import floating, native

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

MODES = ("rn", "rz", "rm", "rp")
SETTINGS = settings(max_examples=40, deadline=None)
FORMATS = {64: (53, -1022, 1023), 32: (24, -126, 127)}  # precision, emin, emax
UINT = {64: np.uint64, 32: np.uint32}
FLOAT = {64: np.float64, 32: np.float32}


# --------------------------------------------------------------------------- the reference rounder


def _ilog2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if a < Fraction(2) ** e else e


def _pick(negative: bool, n: int, q: int, exact: bool, vs_half: int, bits: int, mode: str) -> float:
    """(-1)^negative * (n or n + 1) * 2^q: ``n`` is the truncated significand at quantum ``q``,
    ``vs_half`` the sign of (remainder - 1/2); the rounded value, with overflow by mode."""
    p, _, emax = FORMATS[bits]
    if not exact:
        n += {"rz": False, "rp": not negative, "rm": negative,
              "rn": vs_half > 0 or (vs_half == 0 and n & 1 == 1)}[mode]
    if n * Fraction(2) ** q >= Fraction(2) ** (emax + 1):
        to_inf = mode == "rn" or mode == ("rm" if negative else "rp")
        v = math.inf if to_inf else math.ldexp((1 << p) - 1, emax - p + 1)
    else:
        v = math.ldexp(n, q)
    return -v if negative else v


def _quantum(e: int, bits: int) -> int:
    p, emin, _ = FORMATS[bits]
    return max(e, emin) - (p - 1)


def round_fraction(x: Fraction, bits: int, mode: str, zero_negative: bool = False) -> float:
    """The value x rounded to the format of ``bits`` in ``mode`` (an exact 0 gets ``zero_negative``)."""
    if x == 0:
        return -0.0 if zero_negative else 0.0
    a = abs(x)
    q = _quantum(_ilog2(a), bits)
    m = a / Fraction(2) ** q
    n = m.numerator // m.denominator
    r = m - n
    half = Fraction(1, 2)
    return _pick(x < 0, n, q, r == 0, (r > half) - (r < half), bits, mode)


def round_sqrt(a: Fraction, bits: int, mode: str) -> float:
    """sqrt(a) for a > 0, rounded: n = isqrt(floor(a / 4^q)) is the truncated significand."""
    q = _quantum(_ilog2(a) // 2, bits)
    x = a / Fraction(4) ** q
    n = math.isqrt(x.numerator // x.denominator)
    h = (n + Fraction(1, 2)) ** 2
    return _pick(False, n, q, n * n == x, (x > h) - (x < h), bits, mode)


def _neg(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def ref_fma(a: float, b: float, c: float, bits: int, mode: str) -> float:
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    p_neg = _neg(a) != _neg(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0 or (math.isinf(c) and _neg(c) != p_neg):
            return math.nan
        return -math.inf if p_neg else math.inf
    if math.isinf(c):
        return c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if (a == 0 or b == 0) and c == 0:  # two zeros: -0 only if both are, or under rm if either is
        zero_negative = (p_neg or _neg(c)) if mode == "rm" else (p_neg and _neg(c))
    else:  # exact cancellation of nonzero terms
        zero_negative = mode == "rm"
    return round_fraction(exact, bits, mode, zero_negative)


def ref_add(a, b, bits, mode):
    return ref_fma(a, 1.0, b, bits, mode)


def ref_sub(a, b, bits, mode):
    return ref_fma(a, 1.0, -b, bits, mode)


def ref_mul(a, b, bits, mode):
    if math.isnan(a) or math.isnan(b) or (math.isinf(a) and b == 0) or (math.isinf(b) and a == 0):
        return math.nan
    neg = _neg(a) != _neg(b)
    if math.isinf(a) or math.isinf(b):
        return -math.inf if neg else math.inf
    return round_fraction(Fraction(a) * Fraction(b), bits, mode, neg)


def ref_div(a, b, bits, mode):
    if math.isnan(a) or math.isnan(b) or (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    neg = _neg(a) != _neg(b)
    if math.isinf(a) or b == 0:
        return -math.inf if neg else math.inf
    if math.isinf(b):
        return -0.0 if neg else 0.0
    return round_fraction(Fraction(a) / Fraction(b), bits, mode, neg)


def ref_sqrt(a, bits, mode):
    if math.isnan(a) or (a < 0):
        return math.nan
    if a == 0 or math.isinf(a):
        return a
    return round_sqrt(Fraction(a), bits, mode)


def ref_rcp(a, bits, mode):
    return ref_div(1.0, a, bits, mode)


REFERENCE = {"fma": ref_fma, "add": ref_add, "sub": ref_sub, "mul": ref_mul, "div": ref_div,
             "sqrt": ref_sqrt, "rcp": ref_rcp}


def test_reference_rounder_on_known_values():
    assert round_fraction(Fraction(1) + Fraction(1, 2**60), 64, "rp") == 1 + 2**-52
    assert round_fraction(-(Fraction(1) + Fraction(1, 2**60)), 64, "rm") == -(1 + 2**-52)
    assert round_fraction(Fraction(1) + Fraction(1, 2**53), 64, "rn") == 1.0  # tie to even
    assert round_fraction(Fraction(1) + Fraction(3, 2**54), 64, "rn") == 1 + 2**-52
    assert round_fraction(Fraction(1, 2**1075), 64, "rn") == 0.0  # half the smallest subnormal: tie to 0
    assert round_fraction(Fraction(1, 2**1075), 64, "rp") == 2**-1074
    assert round_fraction(Fraction(2) ** 1024, 64, "rz") == 1.7976931348623157e308
    assert round_fraction(Fraction(1, 3), 32, "rz") == float.fromhex("0x1.555554p-2")
    assert round_sqrt(Fraction(2), 64, "rn") == math.sqrt(2)
    assert round_sqrt(Fraction(2), 32, "rp") == float.fromhex("0x1.6a09e8p0")


# --------------------------------------------------------------------------- operands


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _scaled(bits: int):
    """Values with any exponent of the format, subnormals included."""
    p, emin, emax = FORMATS[bits]
    return st.builds(lambda m, e, s: s * math.ldexp(m, e) if bits == 64 else s * float(np.float32(math.ldexp(m, e))),
                     st.integers(1 << (p - 1), (1 << p) - 1), st.integers(emin - 2 * p, emax - p + 1),
                     st.sampled_from((1.0, -1.0)))


EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2**-1074, -(2**-1074), 2**-1022,
         1.7976931348623157e308, 1 + 2**-52, 1 - 2**-53, 3.0]
EDGES32 = [float(np.float32(x)) for x in EDGES if not 3.5e38 < abs(x) < math.inf] + [2**-149, 2**-126, float(np.finfo(np.float32).max)]


def floats_of(bits: int):
    if bits == 64:
        return st.one_of(st.floats(width=64), st.integers(0, 2**64 - 1).map(_f64), _scaled(64),
                         st.sampled_from(EDGES))
    return st.one_of(st.floats(width=32), st.integers(0, 2**32 - 1).map(_f32), _scaled(32),
                     st.sampled_from(EDGES32))


def batches(bits: int, arity: int):
    return st.lists(st.tuples(*[floats_of(bits)] * arity), min_size=1, max_size=24)


def _bits_of(values, bits: int) -> np.ndarray:
    return np.array(values, FLOAT[bits]).view(UINT[bits])


def _check(op: str, rows, bits: int, mode: str, got_bits: np.ndarray) -> None:
    got = got_bits.view(FLOAT[bits])
    for row, g in zip(rows, got):
        want = REFERENCE[op](*row, bits, mode)
        if math.isnan(want):
            assert np.isnan(g), (op, mode, row, float(g))
        else:
            assert np.array(want, FLOAT[bits]).tobytes() == g.tobytes(), \
                (op, mode, [x.hex() for x in row], float(g).hex(), want.hex())


def _run(op: str, rows, bits: int, mode: str, **kw) -> np.ndarray:
    cols = [_bits_of(c, bits) for c in zip(*rows)]
    if op == "fma":
        return floating.ffma(*cols, bits, mode, **kw)
    if op in ("sqrt", "rcp"):
        return floating.funary(op, cols[0], bits, mode, **kw)
    fn = {"add": floating.fadd, "sub": floating.fsub, "mul": floating.fmul, "div": floating.fdiv}[op]
    return fn(*cols, bits, mode, **kw)


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(rows=batches(64, 3))
@example(rows=[(1 + 2**-52, 1 - 2**-52, -1.0), (1 + 2**-52, 1 + 2**-52, 0.0), (0.0, -1.0, 0.0),
               (2**-600, 2**-600, -0.0), (1e308, 10.0, -1e308), (math.inf, 0.0, 1.0), (3.0, 1 / 3, -1.0)])
def test_f64_fma(mode, rows):
    _check("fma", rows, 64, mode, _run("fma", rows, 64, mode))


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(ab=st.lists(st.tuples(_scaled(64), _scaled(64)), min_size=1, max_size=24),
       nudge=st.sampled_from((0.0, 2**-1074, -(2**-1074), 1e-300)))
def test_f64_fma_cancellation(mode, ab, nudge):
    """c = -fl(a*b) (+ a nudge): the result is the product's rounding error, which an unfused
    a*b+c loses entirely."""
    with np.errstate(all="ignore"):
        rows = [(a, b, -(a * b) + nudge) for a, b in ab]
    _check("fma", rows, 64, mode, _run("fma", rows, 64, mode))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(rows=batches(64, 2))
@example(rows=[(1.0, 2**-60), (-1.0, 2**-60), (1.0, -1.0), (-0.0, 0.0), (-0.0, -0.0), (2**-1074, 0.5),
               (1.7976931348623157e308, 2.0), (1.0, 3.0), (math.inf, math.inf), (0.0, 0.0)])
def test_f64_binary(op, mode, rows):
    _check(op, rows, 64, mode, _run(op, rows, 64, mode))


@pytest.mark.parametrize("op", ["sqrt", "rcp"])
@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(rows=batches(64, 1))
@example(rows=[(2.0,), (-0.0,), (-1.0,), (math.inf,), (2**-1074,), (3.0,), (1.7976931348623157e308,)])
def test_f64_unary(op, mode, rows):
    _check(op, rows, 64, mode, _run(op, rows, 64, mode))


@pytest.mark.parametrize("op", ["div", "sqrt", "rcp"])
@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
@SETTINGS
@given(data=st.data())
def test_f32_directed_div_sqrt_rcp(op, mode, data):
    rows = data.draw(batches(32, 2 if op == "div" else 1))
    _check(op, rows, 32, mode, _run(op, rows, 32, mode))


@pytest.mark.parametrize("op", ["fma", "add", "sub", "mul", "div", "sqrt"])
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_native_f32_loops(op, mode, data):
    """The f32 loops directly (tests/test_semantics.py checks f32 add/sub/mul/fma through floating)."""
    arity = native.OPS[op][0]
    rows = data.draw(batches(32, arity))
    cols = [np.array(c, np.float32) for c in zip(*rows)]
    _check("sqrt" if op == "sqrt" else op, rows, 32, mode, native.library()(op, mode, *cols).view(np.uint32))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
@pytest.mark.parametrize("bits", [32, 64])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_round_to_nearest_without_the_loops(op, bits, data):
    """.rn add/sub/mul/div/sqrt are numpy's IEEE operations (no JIT): exact, and the loops' values bit for bit."""
    arity = native.OPS[op][0]
    rows = data.draw(batches(bits, arity))
    cols = [np.array(c, FLOAT[bits]) for c in zip(*rows)]
    got = getattr(native, op)(*cols, "rn")
    assert got.dtype == FLOAT[bits] and got.shape == cols[0].shape
    _check(op, rows, bits, "rn", got.view(UINT[bits]))
    loops = native.library()(op, "rn", *cols)
    finite = ~np.isnan(got)
    assert np.array_equal(got[finite].view(UINT[bits]), loops[finite].view(UINT[bits]))
    assert np.array_equal(np.isnan(got), np.isnan(loops))


# --------------------------------------------------------------------------- modifiers, NaNs, the machine


def test_directed_f32_ftz_and_sat_still_apply():
    tiny = np.array([2.0**-140], np.float32).view(np.uint32)  # subnormal
    one = np.array([1.0], np.float32).view(np.uint32)
    assert floating.fdiv(tiny, one, 32, "rp", ftz=True)[0] == 0  # input flushed to +0
    assert floating.fdiv(one, tiny, 32, "rz")[0] == 0x7F7FFFFF  # 2^140 overflows: .rz gives the largest f32
    assert floating.fdiv(one, tiny, 32, "rp")[0] == 0x7F800000
    three = np.array([3.0], np.float32).view(np.uint32)
    assert floating.fdiv(three, one, 32, "rm", sat=True)[0] == one[0]  # clamped to 1
    nan = np.array([np.nan], np.float32).view(np.uint32)
    assert floating.funary("sqrt", nan, 32, "rp", sat=True)[0] == 0  # .sat: NaN -> +0
    small = np.array([2.0**-1000], np.float64).view(np.uint64)
    # f64 has no .ftz: a tiny product rounds up to the smallest subnormal under .rp
    assert floating.fmul(small, small, 64, "rp")[0] == 1


def test_fma_nan_is_a_nan_operand_quieted_b_then_c_then_a():
    """f64 fma's NaN as an NVIDIA H200 picks it (bench/gpu_semantics.py); f32: the canonical NaN."""
    snan = np.array([0x7FF0000000000001], np.uint64)
    qnan = np.array([0x7FF8000000000002], np.uint64)
    two = np.array([0x4000000000000000], np.uint64)
    assert floating.ffma(two, snan, qnan, 64)[0] == 0x7FF8000000000001
    assert floating.ffma(qnan, snan, two, 64)[0] == 0x7FF8000000000001
    assert floating.ffma(qnan, two, snan, 64)[0] == 0x7FF8000000000001
    assert floating.ffma(snan, two, qnan, 64)[0] == 0x7FF8000000000002
    assert floating.ffma(two, two, snan, 64, "rz")[0] == 0x7FF8000000000001
    inf = np.array([0x7FF0000000000000], np.uint64)
    zero = np.array([0], np.uint64)
    assert floating.ffma(inf, zero, two, 64)[0] == 0xFFF8000000000000  # no NaN operand: the default NaN
    assert floating.ffma(np.uint32(0x7F800001), np.uint32(0x40000000), np.uint32(0x7FC00002), 32) == 0x7FFFFFFF


def test_native_restores_the_callers_rounding_and_broadcasts():
    x = np.full(1000, 1.0)
    y = np.full(1000, 2.0**-60)
    assert (native.add(x, y, "rp") == 1 + 2**-52).all()
    assert (x + y == 1.0).all()  # numpy is back in round-to-nearest
    assert np.float64(1.0) / np.float64(3.0) == float.fromhex("0x1.5555555555555p-2")
    r = native.fma(np.float64(2.0), np.arange(4.0), np.float64(1.0), "rz")
    assert r.tolist() == [1.0, 3.0, 5.0, 7.0]
    assert native.sqrt(np.zeros(0), "rm").shape == (0,)
    with pytest.raises(TypeError):
        native.add(np.arange(3), np.arange(3))


def test_library_is_built_once_across_threads():
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(native.library())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(lib) for lib in seen}) == 1
    lib = seen[0]
    if platform.machine() in ("x86_64", "AMD64"):
        assert lib.hardware_fma == ("+fma" in lib.features.split(","))
        assert lib.fma_instruction is not None or not lib.hardware_fma


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 feature names")
def test_fallback_without_hardware_fma_is_still_exact():
    """A CPU without FMA3 gets the C library's fma (and passes the same self-test)."""
    lib = native.Library(cpu="x86-64", features="+sse2,-fma,-avx")
    assert not lib.hardware_fma
    rows = [(1 + 2**-52, 1 - 2**-52, -1.0), (0.1, 10.0, -1.0), (2**-600, 2**-600, 0.0)]
    for mode in MODES:
        cols = [np.array(c) for c in zip(*rows)]
        _check("fma", rows, 64, mode, lib("fma", mode, *cols).view(np.uint64))


def test_self_test_reports_a_wrong_host():
    lib = native.library()
    saved = native.SELF_TEST[:]
    try:
        native.SELF_TEST.append(("add", 64, "rz", ("0x1p0", "0x1p-60"), "0x1.0000000000001p0"))
        with pytest.raises(native.NativeFloatError, match="add.rz.f64"):
            lib.self_test()
    finally:
        native.SELF_TEST[:] = saved
