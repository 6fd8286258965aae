"""Exact rounding into the IEEE binary formats f16, bf16, f32 and f64, in every rounding mode.

IEEE 754-2019 section 4.3 (rounding-direction attributes) and PTX ISA 9.0 section 9.7.9.21
(``cvt`` rounding modifiers ``.rn .rz .rm .rp``).  Everything here is integer arithmetic on
bit patterns, so it is exact by construction:

- :func:`round_dyadic` rounds ``(-1)^neg * m * 2^e`` (``m`` a uint64, ``e`` an int64) to a format:
  the value's quantum in the target is ``2^q`` with ``q = max(E - mbits, emin - mbits)`` (``E``
  the exponent of m's leading bit), ``m`` is shifted right by ``q - e`` and the bits shifted out
  decide the increment (.rn: above half, or exactly half and the kept part odd; .rz: never;
  .rm/.rp: any bit out, when the sign points that way).  A carry into a new binade, gradual
  underflow (the subnormal quantum ``2^(emin - mbits)``) and overflow (to infinity or the largest
  finite value, by mode) follow from the encoding.
- :func:`round_f64` rounds float64 values (decomposed by :func:`split_f64`); NaN becomes the
  quiet NaN with the truncated payload (or the format's canonical NaN where asked), infinity
  stays infinite.
- :func:`two_sum` and :func:`to_odd` give sums of float64 values that cannot be exact in float64
  (e.g. bf16 ``2^100 + 2^-100``) as *round-to-odd* float64 values: rounding a round-to-odd value
  with ``p + 2 <= 53`` significand bits again in any mode gives the correctly rounded exact sum
  (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
  rounding to odd", IEEE Trans. Computers 57(4), 2008, theorem 1): true for f16 (11) and bf16 (8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcc.semantics.bits import UDTYPE

ROUNDINGS = ("rn", "rz", "rm", "rp")


@dataclass(frozen=True)
class Format:
    """An IEEE binary interchange format: ``ebits`` exponent bits, ``mbits`` stored fraction bits."""

    name: str
    ebits: int
    mbits: int

    @property
    def bits(self) -> int:
        return 1 + self.ebits + self.mbits

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def inf(self) -> int:
        return ((1 << self.ebits) - 1) << self.mbits

    @property
    def max_finite(self) -> int:
        return self.inf - 1

    @property
    def quiet(self) -> int:
        return 1 << (self.mbits - 1)

    @property
    def canonical_nan(self) -> int:
        """All exponent and fraction bits set, sign clear (0x7FFF for f16 and bf16)."""
        return self.inf | ((1 << self.mbits) - 1)


FORMATS = {f.name: f for f in (Format("f16", 5, 10), Format("bf16", 8, 7), Format("f32", 8, 23),
                                Format("f64", 11, 52))}
_U64 = np.uint64


def bit_length(m) -> np.ndarray:
    """Number of significant bits of each uint64 (0 for 0), by binary search."""
    x = np.asarray(m, _U64).copy()
    n = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= _U64(1 << s)
        n += np.where(big, s, 0)
        x = np.where(big, x >> _U64(s), x)
    return n + (x > 0)


def round_dyadic(neg, m, e, fmt: Format, rnd: str = "rn") -> np.ndarray:
    """The bit pattern (unsigned dtype of ``fmt.bits``) of ``(-1)^neg * m * 2^e`` rounded to ``fmt``
    in ``rnd``; ``m`` = 0 gives the zero of that sign."""
    if rnd not in ROUNDINGS:
        raise ValueError(f"rounding mode {rnd!r}")
    neg = np.asarray(neg, bool)
    m = np.asarray(m, _U64)
    e = np.asarray(e, np.int64)
    big = fmt.mbits + 1  # significand width of the format
    lead = bit_length(m) - 1 + e
    q = np.maximum(lead - fmt.mbits, fmt.emin - fmt.mbits)
    shift = q - e
    # shift <= 0: exact, m << -shift < 2^big.  0 < shift: bits shifted out decide the rounding.
    left = np.clip(-shift, 0, 63).astype(_U64)
    right = np.clip(shift, 0, 63).astype(_U64)
    out_all = shift >= 64  # every bit of m is below the quantum
    t = np.where(shift <= 0, m << left, np.where(out_all, _U64(0), m >> right))
    rem = np.where(shift <= 0, _U64(0), np.where(out_all, m, m & ((_U64(1) << right) - _U64(1))))
    # half = 2^(shift-1): representable for shift <= 64; beyond, every remainder is below it
    half = np.where(shift >= 1, _U64(1) << np.clip(shift - 1, 0, 63).astype(_U64), _U64(0))
    above = (shift >= 1) & (shift <= 64) & (rem > half)
    at_half = (shift >= 1) & (shift <= 64) & (rem == half)
    sticky = rem != 0
    if rnd == "rn":
        inc = above | (at_half & ((t & _U64(1)) == 1))
    elif rnd == "rz":
        inc = np.zeros(t.shape, bool)
    elif rnd == "rm":
        inc = neg & sticky
    else:
        inc = ~neg & sticky
    t = t + inc.astype(_U64)
    carry = t >> _U64(big) != 0
    t = np.where(carry, t >> _U64(1), t)
    q = q + carry
    normal = t >= _U64(1 << fmt.mbits)
    biased = np.where(normal, q + fmt.mbits + fmt.bias, 0)
    frac = np.where(normal, t - _U64(1 << fmt.mbits), t)
    overflow = biased >= (1 << fmt.ebits) - 1
    to_inf = {"rn": np.ones(t.shape, bool), "rz": np.zeros(t.shape, bool), "rm": neg, "rp": ~neg}[rnd]
    bits = (np.clip(biased, 0, (1 << fmt.ebits) - 1).astype(_U64) << _U64(fmt.mbits)) | frac
    bits = np.where(overflow, np.where(to_inf, _U64(fmt.inf), _U64(fmt.max_finite)), bits)
    bits = bits | (neg.astype(_U64) << _U64(fmt.bits - 1))
    return bits.astype(UDTYPE[fmt.bits])


def split_f64(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sign, integer significand, exponent) of finite float64 values: ``x = (-1)^s * m * 2^e``."""
    u = np.asarray(x, np.float64).view(_U64)
    neg = (u >> _U64(63)) != 0
    be = ((u >> _U64(52)) & _U64(0x7FF)).astype(np.int64)
    frac = u & _U64((1 << 52) - 1)
    m = np.where(be == 0, frac, frac | _U64(1 << 52))
    e = np.where(be == 0, -1074, be - 1075)
    return neg, m, e


def round_f64(x, fmt: Format, rnd: str = "rn", canonical_nan: bool = False) -> np.ndarray:
    """float64 values rounded to ``fmt`` in ``rnd`` (bit patterns).  NaN: the quiet NaN with the
    sign and leading payload bits kept (``canonical_nan``: the format's canonical NaN)."""
    x = np.asarray(x, np.float64)
    neg, m, e = split_f64(np.where(np.isfinite(x), x, 0.0))
    r = round_dyadic(neg, m, e, fmt, rnd)
    dt = UDTYPE[fmt.bits]
    u = x.view(_U64)
    sign = (u >> _U64(63)).astype(dt) << dt(fmt.bits - 1)
    r = np.where(np.isinf(x), sign | dt(fmt.inf), r)
    if canonical_nan:
        nan = np.full(x.shape, fmt.canonical_nan, dt)
    else:
        payload = ((u & _U64((1 << 52) - 1)) >> _U64(52 - fmt.mbits)).astype(dt)
        nan = sign | dt(fmt.inf) | dt(fmt.quiet) | payload
    return np.where(np.isnan(x), nan, r).astype(dt)


def round_int(v, bits: int, signed: bool, fmt: Format, rnd: str = "rn") -> np.ndarray:
    """Integers (bit patterns of ``bits``, signed or not) rounded to ``fmt`` in ``rnd``."""
    u = np.asarray(v).astype(UDTYPE[bits]).astype(_U64)
    if signed:
        neg = (u >> _U64(bits - 1)) & _U64(1) != 0
        mag = np.where(neg, (_U64(1 << bits) - u) if bits < 64 else (~u + _U64(1)), u)
    else:
        neg = np.zeros(u.shape, bool)
        mag = u
    return round_dyadic(neg, mag, np.zeros(u.shape, np.int64), fmt, rnd)


def two_sum(a, b) -> tuple[np.ndarray, np.ndarray]:
    """(s, err) with s = fl(a + b) and s + err = a + b exactly (Knuth, TAOCP vol. 2, 4.2.2),
    for finite float64 a, b whose sum does not overflow."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def to_odd(s, err) -> np.ndarray:
    """The round-to-odd float64 of s + err, where s = fl(s + err) (round to nearest): s itself when
    err = 0, else the float64 toward zero from s + err with its last significand bit set."""
    s = np.asarray(s, np.float64)
    err = np.asarray(err, np.float64)
    exact = err == 0
    same = np.signbit(s) == np.signbit(err)
    rz = np.where(same, s, np.nextafter(s, np.zeros_like(s)))
    odd = (rz.view(_U64) | _U64(1)).view(np.float64)
    return np.where(exact | ~np.isfinite(s), s, odd)
