"""Conversions between types (PTX ISA 9.0 section 9.7.9.21, ``cvt``).

- int -> int: truncate or sign/zero-extend by the source type; ``.sat`` clamps
  to the destination's range.
- int -> float: exact when representable, else rounded in the given mode
  (default .rn).
- float -> int: ``rni rzi rmi rpi`` round to an integral value first; the result
  saturates to the destination range and NaN converts to 0 (PTX: float-to-int
  conversions always saturate).
- float -> float: f32 <-> f64 (narrowing rounds, .rn by default; ``.ftz``
  flushes subnormal f32); f16 via numpy's IEEE half.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.semantics.bits import FDTYPE, SDTYPE, UDTYPE, as_float, as_signed, as_unsigned, from_float

_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _int_range(bits: int, kind: str):
    if kind == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def convert(a, dst_bits: int, dst_kind: str, src_bits: int, src_kind: str,
            rnd: str | None = None, sat: bool = False, ftz: bool = False) -> np.ndarray:
    """cvt.rnd.sat.dst.src: the bit pattern of ``a`` (of the source type) in the destination type."""
    if src_kind != "f" and dst_kind != "f":
        if src_kind == "s":
            v = as_signed(a, src_bits).astype(np.int64)
        else:
            v = as_unsigned(a, src_bits).astype(np.uint64)
        if sat and dst_kind != "b":
            lo, hi = _int_range(dst_bits, dst_kind)
            if src_kind == "s":
                v = np.clip(v, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1))
            else:
                v = np.minimum(v, np.uint64(min(hi, (1 << 64) - 1)))
        return v.astype(SDTYPE[64] if src_kind == "s" else UDTYPE[64]).astype(UDTYPE[dst_bits])
    if src_kind != "f":  # int -> float
        v = as_signed(a, src_bits) if src_kind == "s" else as_unsigned(a, src_bits)
        if rnd not in (None, "rn"):
            raise UnsupportedError(f"cvt.{rnd} from integer to float is not supported yet")
        r = v.astype(np.float64).astype(FDTYPE[dst_bits]) if src_bits < 64 else v.astype(FDTYPE[dst_bits])
        return from_float(r, dst_bits)
    x = as_float(a, src_bits)
    if ftz and src_bits == 32:
        x = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), x), x)
    if dst_kind != "f":  # float -> int, saturating; NaN -> 0
        f = _INT_ROUND.get(rnd or "rzi", np.trunc)(x.astype(np.float64))
        f = np.where(np.isnan(f), 0.0, f)
        lo, hi = _int_range(dst_bits, dst_kind)
        # Compare in f64 against the exact powers of two: lo is one, hi + 1 is one.
        too_low, too_high = f < float(lo), f >= float(hi + 1)
        safe = np.where(too_low | too_high, 0.0, f)
        if dst_kind == "s":
            out = safe.astype(np.int64).view(np.uint64)
        else:
            big = safe >= 2.0**63
            out = np.where(big, (safe - 2.0**63).astype(np.uint64) + np.uint64(1 << 63),
                           np.maximum(safe, 0).astype(np.uint64))
        out = np.where(too_low, np.uint64(lo & (2**64 - 1)), out)
        out = np.where(too_high, np.uint64(hi), out)
        return out.astype(np.uint64).astype(UDTYPE[dst_bits])
    if rnd in _INT_ROUND:  # float -> float, round to integral
        return from_float(_INT_ROUND[rnd](x).astype(FDTYPE[dst_bits]), dst_bits)
    if dst_bits < src_bits and rnd not in (None, "rn"):
        raise UnsupportedError(f"cvt.{rnd} narrowing float conversion is not supported yet")
    with np.errstate(over="ignore"):
        r = x.astype(FDTYPE[dst_bits])
    if ftz and dst_bits == 32:
        r = np.where(np.abs(r) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), r), r)
    if sat:
        r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
    return from_float(r, dst_bits)
