"""Floating-point arithmetic (PTX ISA 9.0 section 9.7.3) with exact rounding.

Every result is correctly rounded in the requested mode.  numpy has IEEE
round-to-nearest f64 add/sub/mul/div/sqrt, which are used as they are; the
rest (every fma, f32 add/sub/mul, and the directed modes .rz .rm .rp of
add/sub/mul/div/sqrt/rcp) are the host CPU's own instructions, run in the
requested rounding mode by the small JIT-compiled loops of
:mod:`xcc.semantics.native` (checked exact on first use).  f32 rcp/sqrt in
.rn are computed in f64 and rounded once, which is exact (2p + 2 <= 53).
``.ftz`` flushes subnormal inputs and results to sign-preserving zero (f32
only, as in PTX); ``.sat`` clamps to [0, 1] with NaN -> +0.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.semantics import native
from xcc.semantics.bits import UDTYPE, as_float, as_unsigned, from_float

ROUNDINGS = ("rn", "rz", "rm", "rp")
CANONICAL_NAN = {32: np.uint32(0x7FFFFFFF), 64: np.uint64(0x7FFFFFFFFFFFFFFF)}


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


def fadd(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a + b rounded in ``rnd``."""
    x, y = _inputs((a, b), bits, ftz)
    if bits == 64 and rnd == "rn":
        return _finish(x + y, bits, ftz, sat)
    return _finish(native.add(x, y, rnd), bits, ftz, sat)


def fsub(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a - b rounded in ``rnd``."""
    return fadd(a, from_float(-as_float(b, bits), bits), bits, rnd, ftz, sat)


def fmul(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b rounded in ``rnd``."""
    x, y = _inputs((a, b), bits, ftz)
    if bits == 64 and rnd == "rn":
        with np.errstate(over="ignore", invalid="ignore"):
            return _finish(x * y, bits, ftz, sat)
    return _finish(native.mul(x, y, rnd), bits, ftz, sat)


def ffma(a, b, c, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b + c with a single rounding in ``rnd`` (the host's fused multiply-add)."""
    x, y, z = _inputs((a, b, c), bits, ftz)
    return _finish(native.fma(x, y, z, rnd), bits, ftz, sat)


def _minmax(a, b, bits, ftz, pick_min: bool, nan: bool = False):
    """PTX min/max: a NaN operand yields the other; two NaNs give the canonical NaN; -0 < +0.
    ``nan`` (``min.NaN``/``max.NaN``, PTX ISA 9.7.3.10-11): one NaN operand gives the canonical NaN."""
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
    either = np.isnan(x) | np.isnan(y) if nan else np.isnan(x) & np.isnan(y)
    r = np.where(either, CANONICAL_NAN[bits], r)
    return from_float(_ftz(as_float(r, bits)), bits) if ftz and bits == 32 else r


def fmin(a, b, bits, ftz=False, nan=False):
    return _minmax(a, b, bits, ftz, True, nan)


def fmax(a, b, bits, ftz=False, nan=False):
    return _minmax(a, b, bits, ftz, False, nan)


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
    """neg, abs (exact); rcp, sqrt (correctly rounded in ``rnd``: .rn f32 is computed in f64 and
    rounded once, which is exact for both (2p+2 <= 53); directed modes are the host's); rsqrt, ex2,
    lg2, sin, cos, tanh (.approx: f64 result rounded to nearest, well inside PTX's documented error
    bounds)."""
    (x,) = _inputs((a,), bits, ftz)
    with np.errstate(all="ignore"):
        if op in ("neg", "abs"):
            return _finish(_UNARY[op](x), bits, ftz, sat)
        if op in ("rcp", "sqrt") and rnd in native.ROUNDINGS and rnd != "rn":
            r = native.sqrt(x, rnd) if op == "sqrt" else native.div(np.ones_like(x), x, rnd)
            return _finish(r, bits, ftz, sat)
        if bits == 32:
            r = _UNARY[op](x.astype(np.float64)).astype(np.float32)
        elif op == "rsqrt":  # rsqrt.approx{.ftz}.f64: 1 / sqrt(a), each step rounded to nearest (< 2 ulp);
            r = _UNARY[op](_ftz(x) if ftz else x)  # .ftz: a subnormal input is the zero of its sign
        elif op == "rcp" and ftz:  # rcp.approx.ftz.f64
            r = _UNARY[op](_ftz(x))
        else:
            if op not in ("rcp", "sqrt") or rnd != "rn":
                raise UnsupportedError(f"{op}.{rnd}.f64 is not supported yet")
            r = _UNARY[op](x)
    return _finish(r, bits, ftz, sat)


def fdiv(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a / b; .rn is IEEE division (numpy), .rz/.rm/.rp the host's, .approx/.full within 2 ulp
    (computed as .rn)."""
    x, y = _inputs((a, b), bits, ftz)
    if rnd in native.ROUNDINGS and rnd != "rn":
        return _finish(native.div(x, y, rnd), bits, ftz, sat)
    with np.errstate(all="ignore"):
        return _finish(x / y, bits, ftz, sat)


def copysign(a, b, bits):
    """``copysign.type d, a, b`` (PTX ISA 9.7.3.2): b with the sign bit of a (a bit operation:
    NaNs keep their payload)."""
    sign = UDTYPE[bits](1 << (bits - 1))
    return (as_unsigned(a, bits) & sign) | (as_unsigned(b, bits) & ~sign)
