"""Reference rounding for the half-precision tests, built differently from ``xcc.semantics.rounding``:
exact rational arithmetic (``fractions.Fraction``) one value at a time, and rounding by comparing the
exact value with the two neighbouring representable values (no bit manipulation of significands).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# name -> (exponent bits, fraction bits)
FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


def params(name: str):
    eb, mb = FORMATS[name]
    bias = (1 << (eb - 1)) - 1
    return eb, mb, bias, 1 - bias  # emin


def value(bits: int, name: str) -> Fraction | str:
    """The exact value of a bit pattern: a Fraction, or 'nan', '+inf', '-inf'."""
    eb, mb, bias, emin = params(name)
    sign = -1 if bits >> (eb + mb) & 1 else 1
    be = bits >> mb & ((1 << eb) - 1)
    frac = bits & ((1 << mb) - 1)
    if be == (1 << eb) - 1:
        return "nan" if frac else ("+inf" if sign > 0 else "-inf")
    if be == 0:
        v = Fraction(frac, 1 << mb) * Fraction(2) ** emin
    else:
        v = (1 + Fraction(frac, 1 << mb)) * Fraction(2) ** (be - bias)
    return sign * v


def _encode_exact(v: Fraction, negative: bool, name: str) -> int:
    """The bit pattern of an exactly representable value (magnitude |v|, sign from ``negative``)."""
    eb, mb, bias, emin = params(name)
    a = abs(v)
    sign = (1 << (eb + mb)) if negative else 0
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    if e < emin:  # subnormal
        frac = a / Fraction(2) ** emin * (1 << mb)
        assert frac.denominator == 1
        return sign | int(frac)
    frac = (a / Fraction(2) ** e - 1) * (1 << mb)
    assert frac.denominator == 1, (v, name)
    return sign | (e + bias) << mb | int(frac)


def round_exact(v: Fraction, name: str, rnd: str = "rn", negative_zero: bool = False) -> int:
    """The bit pattern of the exact value ``v`` rounded to format ``name`` in ``rnd`` (IEEE 754)."""
    eb, mb, bias, emin = params(name)
    negative = v < 0 or (v == 0 and negative_zero)
    a = abs(v)
    max_finite = (2 - Fraction(1, 1 << mb)) * Fraction(2) ** ((1 << eb) - 2 - bias)
    # the quantum: 2^(e - mb) for |v| in [2^e, 2^(e+1)), 2^(emin - mb) below 2^emin
    if a == 0:
        return (1 << (eb + mb)) if negative else 0
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - mb)
    lo = (a // quantum) * quantum  # floor to the grid
    hi = lo + quantum
    if lo == a:
        r = a
    else:
        away = {"rz": False, "rm": negative, "rp": not negative}.get(rnd)
        if rnd == "rn":
            mid = (lo + hi) / 2
            away = a > mid or (a == mid and (lo / quantum) % 2 == 1)
        r = hi if away else lo
    inf = ((1 << eb) - 1) << mb
    sign = (1 << (eb + mb)) if negative else 0
    if r > max_finite:
        to_inf = rnd == "rn" or (rnd == "rm" and negative) or (rnd == "rp" and not negative)
        return sign | (inf if to_inf else _encode_exact(max_finite, False, name))
    return _encode_exact(r, negative, name)


def to_f64_array(bits: np.ndarray, name: str) -> np.ndarray:
    """float64 values of bit patterns (finite or infinite; NaN as NaN), through :func:`value`."""
    out = []
    for b in np.asarray(bits).ravel().tolist():
        v = value(int(b), name)
        out.append({"nan": np.nan, "+inf": np.inf, "-inf": -np.inf}.get(v, None) if isinstance(v, str) else float(v))
    return np.array(out, np.float64).reshape(np.shape(bits))


def round_array(values, name: str, rnd: str = "rn", negative_zeros=None) -> np.ndarray:
    """Exact Fractions (an iterable) rounded to ``name``: bit patterns as the unsigned dtype of the width
    (``negative_zeros``: for each value, whether a zero is -0)."""
    width = 1 + sum(FORMATS[name])
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    values = list(values)
    nz = [False] * len(values) if negative_zeros is None else list(negative_zeros)
    return np.array([round_exact(v, name, rnd, z) for v, z in zip(values, nz)], dt)


def from_floats(x, name: str, rnd: str = "rn") -> np.ndarray:
    """Finite float64 (or float32) values rounded to ``name`` (bit patterns; -0.0 stays -0)."""
    flat = [float(v) for v in np.asarray(x).ravel()]
    return round_array((Fraction(v) for v in flat), name, rnd,
                       (math.copysign(1.0, v) < 0 for v in flat)).reshape(np.shape(x))
