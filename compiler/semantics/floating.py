"""Floating-point arithmetic (PTX ISA 9.0 section 9.7.3) with exact rounding.

Every result is correctly rounded in the requested mode.  numpy has IEEE
round-to-nearest f32 and f64 add/sub/mul/div/sqrt, which are used as they are
(f32 add/sub/mul through :mod:`xcc.semantics.native`, which hands .rn to numpy);
the rest (every fma, and the directed modes .rz .rm .rp of add/sub/mul/div/sqrt/rcp)
are the host CPU's own instructions, run in the requested rounding mode by the
small JIT-compiled loops of :mod:`xcc.semantics.native` (checked exact on first use).  f32 rcp/sqrt in
.rn are computed in f64 and rounded once, which is exact (2p + 2 <= 53).
``.ftz`` flushes subnormal inputs and results to sign-preserving zero (f32
only, as in PTX); ``.sat`` clamps to [0, 1] with NaN and -0 -> +0.

NaN results of arithmetic (PTX: "any NaN") follow what an NVIDIA H200 returns
(bench/gpu_semantics.py, docs/semantics.md): an f32 NaN result is the canonical NaN 0x7FFFFFFF; an f64
NaN result is a NaN operand, quieted, with its sign (``sub`` does not flip it), picked in the order of
:data:`NAN_ORDER_F64`, or 0xFFF8000000000000 when no operand is a NaN.  ``neg``/``abs`` of a NaN follow the
H200 too: f32 the canonical NaN, f64 the NaN quieted with its sign unchanged.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.semantics import native
from xcc.semantics.bits import UDTYPE, as_float, as_unsigned, from_float

ROUNDINGS = ("rn", "rz", "rm", "rp")
CANONICAL_NAN = {32: np.uint32(0x7FFFFFFF), 64: np.uint64(0x7FFFFFFFFFFFFFFF)}
DEFAULT_NAN_F64 = np.uint64(0xFFF8000000000000)  # an f64 NaN made from no NaN operand (inf - inf, 0 * inf)
QUIET_F64 = np.uint64(1 << 51)
# which operand's NaN an f64 result carries when several are NaNs, first first (measured on an H200):
# add/sub/mul/min/max b then a, fma b then c then a, div a then b
NAN_ORDER_F64 = {"add": (1, 0), "mul": (1, 0), "fma": (1, 2, 0), "div": (0, 1), "minmax": (1, 0)}


def _ftz(x: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _nan_f64(r: np.ndarray, operands: list) -> np.ndarray:
    """The f64 bits ``r`` with each NaN replaced by the first NaN of ``operands`` (f64 bit patterns, in
    priority order), quieted, or by :data:`DEFAULT_NAN_F64`."""
    nan = np.isnan(as_float(r, 64))
    if not nan.any():
        return r
    out = np.where(nan, DEFAULT_NAN_F64, r)
    for u in reversed(operands):
        u = as_unsigned(u, 64)
        out = np.where(nan & np.isnan(as_float(u, 64)), u | QUIET_F64, out)
    return out.astype(np.uint64)


def _finish(r: np.ndarray, bits: int, ftz: bool, sat: bool, nan_from: list | None = None) -> np.ndarray:
    """Result bits: .ftz, .sat (NaN and -0 to +0), then the NaN rule (f32: canonical; f64: the first NaN
    of ``nan_from``, the operands in priority order)."""
    if ftz and bits == 32:
        r = _ftz(r)
    if sat:
        r = np.where(np.isnan(r) | (r == 0), 0, np.clip(r, 0, 1)).astype(r.dtype)
    out = from_float(r, bits)
    if bits == 32:
        return np.where(np.isnan(r), CANONICAL_NAN[32], out).astype(np.uint32)
    return _nan_f64(out, nan_from or [])


def _inputs(args, bits, ftz):
    xs = [as_float(a, bits) for a in args]
    if ftz and bits == 32:
        xs = [_ftz(x) for x in xs]
    return xs


def fadd(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a + b rounded in ``rnd``."""
    x, y = _inputs((a, b), bits, ftz)
    return _finish(native.add(x, y, rnd), bits, ftz, sat, [b, a])


def fsub(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a - b rounded in ``rnd`` (a NaN ``b`` keeps its sign)."""
    x, y = _inputs((a, b), bits, ftz)
    return _finish(native.sub(x, y, rnd), bits, ftz, sat, [b, a])


def fmul(a, b, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b rounded in ``rnd``."""
    x, y = _inputs((a, b), bits, ftz)
    return _finish(native.mul(x, y, rnd), bits, ftz, sat, [b, a])


def ffma(a, b, c, bits, rnd="rn", ftz=False, sat=False):
    """d = a * b + c with a single rounding in ``rnd`` (the host's fused multiply-add)."""
    x, y, z = _inputs((a, b, c), bits, ftz)
    return _finish(native.fma(x, y, z, rnd), bits, ftz, sat, [b, c, a])


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
    # two NaNs: f32 the canonical NaN, f64 b's NaN quieted (as an H200 gives them)
    r = np.where(either, CANONICAL_NAN[32] if bits == 32 else uy | QUIET_F64, r)
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
    """neg, abs (exact; a NaN: f32 the canonical NaN, f64 quieted with its sign kept); rcp, sqrt (correctly rounded in ``rnd``: .rn f32 is computed in f64 and
    rounded once, which is exact for both (2p+2 <= 53); directed modes are the host's); rsqrt, ex2,
    lg2, sin, cos, tanh (.approx: f64 result rounded to nearest, well inside PTX's documented error
    bounds)."""
    (x,) = _inputs((a,), bits, ftz)
    with np.errstate(all="ignore"):
        if op in ("neg", "abs"):  # exact (.ftz: after the flush); a NaN as an H200 gives it (probes nan_f32,
            # nan_f64), which is the usual NaN rule: f32 the canonical NaN, f64 the input quieted, its sign unchanged
            return _finish(_UNARY[op](x), bits, ftz, False, [a])
        if op in ("rcp", "sqrt") and rnd in native.ROUNDINGS and rnd != "rn":
            r = native.sqrt(x, rnd) if op == "sqrt" else native.div(np.ones_like(x), x, rnd)
            return _finish(r, bits, ftz, sat, [a])
        if bits == 32:
            r = _UNARY[op](x.astype(np.float64)).astype(np.float32)
        elif op in ("rsqrt", "rcp") and (ftz or op == "rsqrt"):
            # rsqrt.approx{.ftz}.f64, rcp.approx.ftz.f64: 1 / sqrt(a), 1 / a, each step rounded to nearest;
            # .ftz: a subnormal input is the zero of its sign (an H200 also flushes a subnormal result,
            # computes only the high word and gives the NaN 0x7FFFFFFF00000000: not followed, see
            # docs/semantics.md)
            r = _UNARY[op](_ftz(x) if ftz else x)
        else:
            if op not in ("rcp", "sqrt") or rnd != "rn":
                raise UnsupportedError(f"{op}.{rnd}.f64 is not supported yet")
            r = _UNARY[op](x)
    return _finish(r, bits, ftz, sat, [a])


def fdiv(a, b, bits, rnd="rn", ftz=False, sat=False, approx=False):
    """d = a / b; .rn is IEEE division (numpy), .rz/.rm/.rp the host's, .approx/.full within 2 ulp
    (computed as .rn), except that ``div.approx.f32`` is ``a * (1/b)`` with ``1/b`` = 0 for
    2^126 < |b| < 2^128 (PTX ISA 9.7.3.8; a signed zero, or NaN for an infinite ``a``)."""
    x, y = _inputs((a, b), bits, ftz)
    if rnd in native.ROUNDINGS and rnd != "rn":
        return _finish(native.div(x, y, rnd), bits, ftz, sat, [a, b])
    with np.errstate(all="ignore"):
        r = x / y
        if approx and bits == 32:
            big = (np.abs(y) > np.float32(2.0**126)) & np.isfinite(y)
            r = np.where(big, x * np.copysign(np.float32(0), y), r).astype(np.float32)
        return _finish(r, bits, ftz, sat, [a, b])


def copysign(a, b, bits):
    """``copysign.type d, a, b`` (PTX ISA 9.7.3.2): b with the sign bit of a (a bit operation:
    NaNs keep their payload)."""
    sign = UDTYPE[bits](1 << (bits - 1))
    return (as_unsigned(a, bits) & sign) | (as_unsigned(b, bits) & ~sign)
