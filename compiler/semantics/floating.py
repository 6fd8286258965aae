"""Floating-point arithmetic (PTX ISA 9.0 section 9.7.3) with exact rounding.

f32 results are computed exactly: the f64 product of two f32 values is exact,
and TwoSum gives the exact residual of an f64 sum, so every f32 add, mul and
fma is an exactly known value ``s + err`` that is rounded once, in the
requested mode, through round-to-odd (Boldo & Melquiond, "Emulation of FMA
and correctly rounded sums: proved algorithms using rounding to odd", 2008).
f64 add/sub/mul/div/sqrt in round-to-nearest are numpy's IEEE operations.
``.ftz`` flushes subnormal inputs and results to sign-preserving zero (f32
only, as in PTX); ``.sat`` clamps to [0, 1] with NaN -> +0.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.semantics.bits import UDTYPE, as_float, as_unsigned, from_float

ROUNDINGS = ("rn", "rz", "rm", "rp")
CANONICAL_NAN = {32: np.uint32(0x7FFFFFFF), 64: np.uint64(0x7FFFFFFFFFFFFFFF)}


def _two_sum(a: np.ndarray, b: np.ndarray):
    """Knuth's TwoSum: s = fl(a + b) and err with s + err == a + b exactly."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), err, 0.0)


def _round_exact_to_f32(s: np.ndarray, err: np.ndarray, mode: str, addends=None) -> np.ndarray:
    """Round the exact value s + err (f64 pair, |err| tiny) to f32 in ``mode``.  ``addends`` are
    the two operands of the sum, for the sign of an exact zero (IEEE 754-2019 6.3: -0 under
    roundTowardNegative unless both addends are +0)."""
    if mode == "rm" and addends is not None:
        x, y = addends
        exact_zero = (s == 0) & (err == 0)
        both_pos_zero = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
        s = np.where(exact_zero & ~both_pos_zero, -0.0, s)
    bits = s.view(np.uint64)
    inexact = (err != 0) & ((bits & np.uint64(1)) == 0)
    toward = np.where(err > 0, np.inf, -np.inf)
    s_odd = np.where(inexact, np.nextafter(s, toward), s)
    with np.errstate(over="ignore"):
        r = s_odd.astype(np.float32)
    if mode == "rn":
        return r
    rd = r.astype(np.float64)
    above = rd > s_odd  # rounded result lies above the exact value
    below = rd < s_odd
    if mode == "rz":
        fix_down = above & (s_odd > 0)
        fix_up = below & (s_odd < 0)
    elif mode == "rm":
        fix_down, fix_up = above, np.zeros_like(above)
    elif mode == "rp":
        fix_down, fix_up = np.zeros_like(above), below
    else:
        raise ValueError(mode)
    r = np.where(fix_down, np.nextafter(r, np.float32(-np.inf)), r)
    r = np.where(fix_up, np.nextafter(r, np.float32(np.inf)), r)
    return r.astype(np.float32)


def _ftz(x: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _finish(r: np.ndarray, bits: int, ftz: bool, sat: bool) -> np.ndarray:
    if ftz and bits == 32:
        r = _ftz(r)
    if sat:
        r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
    return from_float(r, bits)


def _inputs(args, bits, ftz):
    xs = [as_float(a, bits) for a in args]
    if ftz and bits == 32:
        xs = [_ftz(x) for x in xs]
    return xs


def _f64_only_rn(bits: int, rnd: str, what: str) -> None:
    if bits == 64 and rnd != "rn":
        raise UnsupportedError(f"{what}.{rnd}.f64 (directed rounding of f64) is not supported yet")


def fadd(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a + b rounded in ``rnd``."""
    x, y = _inputs((a, b), bits, ftz)
    if bits == 32:
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        s, err = _two_sum(x64, y64)
        return _finish(_round_exact_to_f32(s, err, rnd, (x64, y64)), bits, ftz, sat)
    _f64_only_rn(bits, rnd, "add")
    return _finish(x + y, bits, ftz, sat)


def fsub(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a - b rounded in ``rnd``."""
    return fadd(a, from_float(-as_float(b, bits), bits), bits, rnd, ftz, sat)


def fmul(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b rounded in ``rnd`` (the f64 product of two f32 is exact)."""
    x, y = _inputs((a, b), bits, ftz)
    if bits == 32:
        with np.errstate(over="ignore", invalid="ignore"):
            p = x.astype(np.float64) * y.astype(np.float64)
        return _finish(_round_exact_to_f32(p, np.zeros_like(p), rnd), bits, ftz, sat)
    _f64_only_rn(bits, rnd, "mul")
    with np.errstate(over="ignore", invalid="ignore"):
        return _finish(x * y, bits, ftz, sat)


def ffma(a, b, c, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b + c with a single rounding in ``rnd``."""
    x, y, z = _inputs((a, b, c), bits, ftz)
    if bits != 32:
        raise UnsupportedError("fma.f64 is not supported yet (needs an exact 106-bit product)")
    with np.errstate(over="ignore", invalid="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)
        z64 = z.astype(np.float64)
        s, err = _two_sum(p, z64)
    return _finish(_round_exact_to_f32(s, err, rnd, (p, z64)), bits, ftz, sat)


def _minmax(a, b, bits, ftz, pick_min: bool):
    """PTX min/max: a NaN operand yields the other; two NaNs give the canonical NaN; -0 < +0."""
    x, y = _inputs((a, b), bits, ftz)
    ux, uy = from_float(x, bits), from_float(y, bits)
    neg_x = np.signbit(x)
    if pick_min:
        take_x = (x < y) | ((x == y) & neg_x)
    else:
        take_x = (x > y) | ((x == y) & ~neg_x)
    r = np.where(take_x, ux, uy)
    r = np.where(np.isnan(y), ux, r)
    r = np.where(np.isnan(x), uy, r)
    r = np.where(np.isnan(x) & np.isnan(y), CANONICAL_NAN[bits], r)
    return from_float(_ftz(as_float(r, bits)), bits) if ftz and bits == 32 else r


def fmin(a, b, bits, ftz=False):
    return _minmax(a, b, bits, ftz, True)


def fmax(a, b, bits, ftz=False):
    return _minmax(a, b, bits, ftz, False)


def _rcp(x):
    return np.float64(1.0) / x


_UNARY = {
    "neg": lambda x: -x,
    "abs": np.abs,
    "rcp": _rcp,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: np.float64(1.0) / np.sqrt(x),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


def funary(op, a, bits, rnd="rn", ftz=False, sat=False):
    """neg, abs (exact); rcp, sqrt (correctly rounded in ``rnd`` for .rn, computed in f64 and
    rounded once for f32); rsqrt, ex2, lg2, sin, cos, tanh (.approx: f64 result rounded to
    nearest, well inside PTX's documented error bounds)."""
    (x,) = _inputs((a,), bits, ftz)
    with np.errstate(all="ignore"):
        if op in ("neg", "abs"):
            return _finish(_UNARY[op](x), bits, ftz, sat)
        if bits == 32:
            r64 = _UNARY[op](x.astype(np.float64))
            if op in ("rcp", "sqrt") and rnd != "rn":
                raise UnsupportedError(f"{op}.{rnd}.f32 is not supported yet")
            r = r64.astype(np.float32)
        else:
            if op not in ("rcp", "sqrt") or rnd != "rn":
                raise UnsupportedError(f"{op}.{rnd}.f64 is not supported yet")
            r = _UNARY[op](x)
    return _finish(r, bits, ftz, sat)


def fdiv(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a / b; .rn is IEEE division (numpy), .approx/.full within 2 ulp (computed as .rn)."""
    x, y = _inputs((a, b), bits, ftz)
    if rnd not in ("rn", "approx", "full"):
        _f64_only_rn(64, rnd, "div")
    with np.errstate(all="ignore"):
        return _finish(x / y, bits, ftz, sat)


def copysign(a, b, bits):
    """``copysign.type d, a, b`` (PTX ISA 9.7.3.2): b with the sign bit of a (a bit operation:
    NaNs keep their payload)."""
    sign = UDTYPE[bits](1 << (bits - 1))
    return (as_unsigned(a, bits) & sign) | (as_unsigned(b, bits) & ~sign)
