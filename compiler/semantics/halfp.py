"""Half-precision arithmetic: f16 and bf16, scalar and packed x2 (PTX ISA 9.0 section 9.7.4,
"Half Precision Floating-Point Instructions": add, sub, mul, fma, neg, abs, min, max, tanh, ex2,
and 9.7.4.x setp/set on half types).

Operands and results are bit patterns (uint16; uint32 for the packed ``.f16x2``/``.bf16x2``
forms, element 0 in bits 15:0 as for ``mov`` packing, PTX ISA 9.7.9.10).  Each result is the
exact result rounded once, computed like this:

* f16 and bf16 values are exact in float64 (11 and 8 significand bits, exponents -24..15 and
  -133..127).
* ``mul``: the product of two significands of at most 11 bits has at most 22 bits and its
  exponent lies in [-266, 256], inside float64's normal range, so float64 ``a * b`` is exact.
* ``add``/``sub``: float64 ``a + b`` is exact for f16 (both are multiples of 2^-24 below 2^17,
  so the sum needs at most 41 bits) but not always for bf16 (``2^100 + 2^-100``); ``fma``:
  ``a * b`` is exact (above) but ``a * b + c`` need not be for either (f16: ``2^-48 + 65504``
  needs 64 bits).  So every sum is taken as :func:`rounding.two_sum` (s + err exactly) and made
  the round-to-odd float64 of the exact sum (:func:`rounding.to_odd`); rounding that to f16 or
  bf16 (p + 2 <= 53) is the correct rounding of the exact sum in every mode (Boldo-Melquiond).
* the final rounding (:func:`rounding.round_f64`) is integer bit manipulation, exact by
  construction; PTX defines only ``.rn`` for half arithmetic, the others are supported too.

Flags: ``.ftz`` (f16 only in PTX) flushes subnormal inputs and results to sign-preserving zero;
``.sat`` clamps the result to [0, 1], NaN to +0; ``.relu`` (fma, min, max) clamps a negative
result to +0 and keeps NaN; ``.NaN`` (min, max) returns NaN when either input is NaN; ``.oob`` (fma, sm_90)
gives +0 where a or b is the tensor OOB-NaN (:data:`OOB_NAN`), per element.  Every
NaN result of an operation is the canonical NaN 0x7FFF (a deterministic choice: PTX leaves the
NaN open, NVIDIA GPUs are reported to return 0x7FFF); neg and abs are sign-bit operations.
``ex2.approx`` and ``tanh.approx`` are the float64 function rounded to nearest (within PTX's
documented bounds).
"""

from __future__ import annotations

import numpy as np

from xcc.semantics.rounding import FORMATS, Format, round_f64, to_odd, two_sum

HALF_FORMATS = ("f16", "bf16")
U16, U32 = np.uint16, np.uint32
OOB_NAN = 0x7FF7
"""The OOB-NaN of a 16-bit element: what a tensor copy's NaN fill writes out of bounds (PTX ISA 5.5.3.3); an H200
fills an f32 map with 0x7FF77FF7 (tests/data/gpu/tensormap_replace_probe.h200.txt), the 16-bit pattern twice.
``fma.oob`` (PTX ISA 9.7.4.4, "Out Of Bounds modifier") tests for exactly this pattern: ptxas 13.0 selects
HFMA2.OOB, the test is the hardware's."""


def fmt_of(name: str) -> Format:
    """The element format of a half type name: f16, bf16, f16x2, bf16x2."""
    return FORMATS[name.removesuffix("x2")]


def to_f64(a, fmt: Format) -> np.ndarray:
    """The exact float64 value of f16 / bf16 bit patterns (NaN keeps its sign; payloads are not kept)."""
    a = np.asarray(a).astype(U16)
    if fmt.name == "f16":
        with np.errstate(invalid="ignore"):
            return a.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return (a.astype(U32) << U32(16)).view(np.float32).astype(np.float64)


def from_f64(x, fmt: Format, rnd: str = "rn") -> np.ndarray:
    """float64 values (exact or round-to-odd) rounded to ``fmt``; NaN -> canonical NaN."""
    return round_f64(x, fmt, rnd, canonical_nan=True)


def is_nan(a, fmt: Format) -> np.ndarray:
    a = np.asarray(a).astype(U16)
    return ((a & U16(fmt.inf)) == U16(fmt.inf)) & ((a & U16(fmt.quiet * 2 - 1)) != 0)


def _flush(a, fmt: Format) -> np.ndarray:
    """Subnormals (exponent 0, fraction non-zero) to the zero of their sign."""
    a = np.asarray(a).astype(U16)
    sub = (a & U16(fmt.inf)) == 0
    return np.where(sub, a & U16(0x8000), a).astype(U16)


def _finish(r, fmt: Format, ftz: bool, sat: bool, relu: bool = False) -> np.ndarray:
    """Flags applied to rounded results ``r`` (bit patterns)."""
    if ftz:
        r = _flush(r, fmt)
    nan = is_nan(r, fmt)
    negative = (r & U16(0x8000)) != 0
    if sat:  # [0, 1]; NaN -> +0
        one = from_f64(np.ones(1), fmt)[0]
        above = ~negative & ~nan & (to_f64(r, fmt) > 1.0)
        r = np.where(nan | negative, U16(0), np.where(above, one, r))
    if relu:  # negative (-0 included) -> +0, NaN stays NaN
        r = np.where(negative & ~nan, U16(0), r)
    return np.asarray(r).astype(U16)


def _inputs(args, fmt: Format, ftz: bool):
    return [to_f64(_flush(a, fmt) if ftz else a, fmt) for a in args]


def _odd_sum(x, y, rnd: str) -> np.ndarray:
    """The round-to-odd float64 of the exact x + y (float64 operands, the sum finite or not).  An exact zero
    sum is -0 when both are -0 or, rounding toward minus infinity, unless both are +0 (IEEE 754 6.3)."""
    with np.errstate(invalid="ignore"):
        s, err = two_sum(x, y)
    r = to_odd(s, np.where(np.isfinite(s), err, 0.0))
    if rnd == "rm":
        r = np.where((r == 0) & ~(~np.signbit(x) & ~np.signbit(y)), -0.0, r)
    return r


def hadd(a, b, fmt: Format, rnd="rn", ftz=False, sat=False):
    """``add{.rnd}{.ftz}{.sat}.f16/.bf16``: a + b rounded once."""
    x, y = _inputs((a, b), fmt, ftz)
    return _finish(from_f64(_odd_sum(x, y, rnd), fmt, rnd), fmt, ftz, sat)


def hsub(a, b, fmt: Format, rnd="rn", ftz=False, sat=False):
    """``sub``: a + (-b) (the sign of b flipped as a bit: exact)."""
    return hadd(a, np.asarray(b).astype(U16) ^ U16(0x8000), fmt, rnd, ftz, sat)


def hmul(a, b, fmt: Format, rnd="rn", ftz=False, sat=False):
    """``mul``: a * b, exact in float64 (module docstring), rounded once."""
    x, y = _inputs((a, b), fmt, ftz)
    with np.errstate(invalid="ignore"):
        return _finish(from_f64(x * y, fmt, rnd), fmt, ftz, sat)


def hfma(a, b, c, fmt: Format, rnd="rn", ftz=False, sat=False, relu=False, oob=False):
    """``fma.rn{.ftz}{.sat|.relu}``: a * b + c, the exact product (float64) plus c as a round-to-odd
    float64, rounded once.  ``.oob``: +0 where a or b (the multiplicands: "either of the operands") is
    :data:`OOB_NAN`, whatever c is."""
    x, y, z = _inputs((a, b, c), fmt, ftz)
    with np.errstate(invalid="ignore"):
        p = x * y
    r = _finish(from_f64(_odd_sum(p, z, rnd), fmt, rnd), fmt, ftz, sat, relu)
    if oob:
        hit = (np.asarray(a).astype(U16) == U16(OOB_NAN)) | (np.asarray(b).astype(U16) == U16(OOB_NAN))
        r = np.where(hit, U16(0), r).astype(U16)
    return r


def hneg(a, fmt: Format, ftz=False):
    """``neg``: the sign bit flipped (after flushing a subnormal with .ftz); a NaN gives the canonical NaN
    0x7FFF, as an NVIDIA H200 does for f16 and bf16, scalar and x2 (bench/gpu_semantics.py, probes nan_f16,
    nan_bf16, nan_f16x2, nan_bf16x2)."""
    a = _flush(a, fmt) if ftz else np.asarray(a).astype(U16)
    return np.where(is_nan(a, fmt), U16(0x7FFF), a ^ U16(0x8000)).astype(U16)


def habs(a, fmt: Format, ftz=False):
    """``abs``: the sign bit cleared; a NaN gives the canonical NaN 0x7FFF (as :func:`hneg`)."""
    a = _flush(a, fmt) if ftz else np.asarray(a).astype(U16)
    return np.where(is_nan(a, fmt), U16(0x7FFF), a & U16(0x7FFF)).astype(U16)


def hminmax(a, b, fmt: Format, pick_min: bool, ftz=False, nan=False, relu=False):
    """``min``/``max{.ftz}{.NaN}{.relu}``: -0 < +0; a NaN input gives the other input (two NaNs, or one
    with ``.NaN``: the canonical NaN)."""
    a = _flush(a, fmt) if ftz else np.asarray(a).astype(U16)
    b = _flush(b, fmt) if ftz else np.asarray(b).astype(U16)
    x, y = to_f64(a, fmt), to_f64(b, fmt)
    na, nb = is_nan(a, fmt), is_nan(b, fmt)
    neg_x = np.signbit(x)
    with np.errstate(invalid="ignore"):
        take_a = (x < y) | ((x == y) & neg_x) if pick_min else (x > y) | ((x == y) & ~neg_x)
    r = np.where(take_a, a, b)
    r = np.where(nb, a, r)
    r = np.where(na, b, r)
    both = (na | nb) if nan else (na & nb)
    r = np.where(both, U16(fmt.canonical_nan), r)
    return _finish(r, fmt, False, False, relu)


def happrox(op: str, a, fmt: Format, ftz=False):
    """``ex2.approx`` / ``tanh.approx``: the float64 function of the input, rounded to nearest."""
    (x,) = _inputs((a,), fmt, ftz)
    with np.errstate(all="ignore"):
        r = {"ex2": np.exp2, "tanh": np.tanh}[op](x)
    return _finish(from_f64(r, fmt), fmt, ftz, False)


def hcompare(cmp: str, a, b, fmt: Format, ftz=False) -> np.ndarray:
    """``setp.cmp.f16/.bf16`` (ordered and unordered comparisons, as for f32): exact on the float64
    values."""
    from xcc.semantics.compare import compare

    x, y = _inputs((a, b), fmt, ftz)
    return compare(cmp, x.view(np.uint64), y.view(np.uint64), 64, "f")


# ----------------------------------------------------------------------------- packed x2 forms
def lane(a, k: int) -> np.ndarray:
    """Element k (0: bits 15:0, 1: bits 31:16) of packed 32-bit values."""
    return (np.asarray(a).astype(U32) >> U32(16 * k)).astype(U16)


def pack2(lo, hi) -> np.ndarray:
    """Two 16-bit elements packed: lo in bits 15:0, hi in bits 31:16."""
    return np.asarray(lo).astype(U32) | (np.asarray(hi).astype(U32) << U32(16))


def lanewise(fn, *args) -> np.ndarray:
    """``fn`` applied to element 0 and to element 1 of the packed ``args``, results packed."""
    return pack2(fn(*[lane(a, 0) for a in args]), fn(*[lane(a, 1) for a in args]))
