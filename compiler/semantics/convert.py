"""Conversions between types (PTX ISA 9.0 section 9.7.9.21, ``cvt``).

- int -> int: truncate or sign/zero-extend by the source type; ``.sat`` clamps
  to the destination's range.
- int -> float: exact when representable, else rounded in the given mode
  (default .rn; .rz .rm .rp exact too, by :func:`xcc.semantics.rounding.round_int`).
- float -> int: ``rni rzi rmi rpi`` round to an integral value first; the result
  saturates to the destination range (PTX: float-to-int conversions always saturate).
  NaN converts to 0 as PTX says, except where an NVIDIA H200 gives otherwise
  (bench/data/gpu_semantics.json, probes ``nan_cvt_int_*`` and ``nan_cvt_narrow_*``,
  every integer rounding mode probed): from f64 to every integer type, and from f32 or
  f16 to 64-bit integers, a NaN gives the destination's top bit alone (0x80, 0x8000,
  0x80000000, 0x8000000000000000; for the unsigned types too); f32 and f16 to 8-, 16-
  and 32-bit integers give 0. bf16 sources were not probed and keep 0.
- float -> float, among f16, bf16 (kind ``"bf"``), f32 and f64: widening is exact;
  narrowing rounds in the given mode (.rn by default) with
  :func:`xcc.semantics.rounding.round_f64` (f64 -> f32 .rn is numpy's IEEE cast);
  ``.ftz`` flushes subnormal f32 inputs and results; a NaN narrowed to f32 keeps its
  leading payload bits (quiet), a NaN result in f16/bf16 is the canonical NaN 0x7FFF.
  NaNs as an NVIDIA H200 gives them (bench/gpu_semantics.py): f16 -> f32 and f32 -> f32
  (``cvt.rzi.f32.f32``) give the canonical NaN 0x7FFFFFFF; bf16 -> f32 shifts the bits up
  (a signalling NaN stays signalling); f16 -> f64 and f32 -> f64 keep the payload (quieted);
  f64 -> f16 gives 0x7E00 with the NaN's sign.
- Flags on a float result: ``.sat`` clamps to [0, 1] (NaN -> +0); ``.relu`` (f16/bf16)
  clamps negative results to +0 and keeps NaN; ``.satfinite`` gives the largest finite
  value of the sign for results beyond it (infinities included) and keeps NaN.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.semantics.bits import FDTYPE, SDTYPE, UDTYPE, as_float, as_signed, as_unsigned, from_float
from xcc.semantics.rounding import FORMATS, round_f64, round_int

_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _int_range(bits: int, kind: str):
    if kind == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def float_format(bits: int, kind: str):
    """The :class:`~xcc.semantics.rounding.Format` of a float type given as (bits, kind 'f' or 'bf')."""
    return FORMATS["bf16" if kind == "bf" else f"f{bits}"]


def decode(a, bits: int, kind: str) -> np.ndarray:
    """The exact float64 values of float bit patterns (f16, bf16 with kind 'bf', f32, f64)."""
    with np.errstate(invalid="ignore"):  # widening a signalling NaN is exact here, not an error
        if kind == "bf":
            return (as_unsigned(a, 16).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        return as_float(a, bits).astype(np.float64)


def nan_top_bit(src_bits: int, dst_bits: int, src_kind: str = "f") -> bool:
    """Whether a NaN converts to the destination's top bit alone (from f64, or to a 64-bit integer from f32 or
    f16, as the H200 gives them) rather than to 0 (module docstring)."""
    return src_kind == "f" and (src_bits == 64 or dst_bits == 64)


def convert(a, dst_bits: int, dst_kind: str, src_bits: int, src_kind: str,
            rnd: str | None = None, sat: bool = False, ftz: bool = False,
            relu: bool = False, satfinite: bool = False) -> np.ndarray:
    """cvt.rnd.sat.dst.src: the bit pattern of ``a`` (of the source type) in the destination type.
    Kinds: 'u', 's', 'b' integers, 'f' IEEE floats, 'bf' bfloat16."""
    src_float, dst_float = src_kind in ("f", "bf"), dst_kind in ("f", "bf")
    if not src_float and not dst_float:
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
    if not src_float:  # int -> float
        mode = rnd or "rn"
        if mode in _INT_ROUND:
            raise UnsupportedError(f"cvt.{mode} from integer to float: an integer rounding mode needs a float source")
        fmt = float_format(dst_bits, dst_kind)
        if mode == "rn" and src_bits <= 32 and dst_kind == "f" and dst_bits >= 32:  # exact in f64, one rounding
            v = as_signed(a, src_bits) if src_kind == "s" else as_unsigned(a, src_bits)
            r = from_float(v.astype(np.float64).astype(FDTYPE[dst_bits]), dst_bits)
        else:
            r = round_int(a, src_bits, src_kind == "s", fmt, mode)
        return _float_flags(r, fmt, ftz, sat, relu, satfinite)
    x = decode(a, src_bits, src_kind)
    if ftz and src_bits == 32:
        x = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0.0, x), x)
    if not dst_float:  # float -> int, saturating; NaN -> 0, or the top bit (nan_top_bit)
        f = _INT_ROUND.get(rnd or "rzi", np.trunc)(x)
        nan = np.isnan(f)
        f = np.where(nan, 0.0, f)
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
        if nan_top_bit(src_bits, dst_bits, src_kind):
            out = np.where(nan, np.uint64(1 << (dst_bits - 1)), out)
        return out.astype(np.uint64).astype(UDTYPE[dst_bits])
    fmt, src_fmt = float_format(dst_bits, dst_kind), float_format(src_bits, src_kind)
    mode = rnd or "rn"
    if mode in _INT_ROUND:  # round to an integral value (exact in f64), then to the destination
        x, mode = _INT_ROUND[mode](x), "rn"
    if fmt.bits == 16:
        r = round_f64(x, fmt, mode, canonical_nan=True)
        if src_bits == 64 and fmt.name == "f16":  # f64 -> f16: a NaN is 0x7E00 with its sign
            r = np.where(np.isnan(x), np.where(np.signbit(x), np.uint16(0xFE00), np.uint16(0x7E00)), r)
            r = r.astype(np.uint16)
    elif fmt.bits >= src_fmt.bits or mode == "rn":  # widening (exact) or IEEE narrowing to nearest
        src = x if src_fmt.bits == 16 else as_float(a, src_bits)
        if ftz and src_bits == 32 or rnd in _INT_ROUND:
            src = x
        with np.errstate(over="ignore", invalid="ignore"):
            r = from_float(np.asarray(src).astype(FDTYPE[dst_bits]), dst_bits)
        if dst_bits == 32 and src_kind == "bf":  # the bits shifted up: a NaN keeps them, signalling too
            r = as_unsigned(a, 16).astype(np.uint32) << np.uint32(16)
        elif dst_bits == 32 and src_bits in (16, 32):  # f16 -> f32 and f32 -> f32: the canonical NaN
            r = np.where(np.isnan(x), np.uint32(0x7FFFFFFF), r).astype(np.uint32)
        elif dst_bits == 64 and src_bits in (16, 32):  # f16/f32 -> f64: the payload, quieted
            r = np.where(np.isnan(x), r | np.uint64(1 << 51), r).astype(np.uint64)
    else:  # f64 -> f32 in .rz .rm .rp
        r = round_f64(x, fmt, mode)
    return _float_flags(r, fmt, ftz, sat, relu, satfinite)


def _float_flags(r, fmt, ftz: bool, sat: bool, relu: bool, satfinite: bool) -> np.ndarray:
    """.ftz (f32 results), .sat, .relu and .satfinite applied to the float result bits ``r``."""
    dt = UDTYPE[fmt.bits]
    sign = dt(1 << (fmt.bits - 1))
    mag = r & ~sign
    nan = mag > dt(fmt.inf)
    if ftz and fmt.name == "f32":
        r = np.where(mag < dt(1 << fmt.mbits), r & sign, r)
    if sat:  # [0, 1], NaN -> +0; f32: -0 -> +0 too (as an H200's .sat gives it)
        one = dt(fmt.bias << fmt.mbits)
        neg = (r & sign) != 0
        r = np.where(nan | neg & ((mag != 0) | (fmt.name == "f32")), dt(0), np.where(~neg & (mag > one), one, r))
    if relu:
        r = np.where(((r & sign) != 0) & ~nan, dt(0), r)
    if satfinite:
        r = np.where((r & ~sign) == dt(fmt.inf), (r & sign) | dt(fmt.max_finite), r)
    return np.asarray(r).astype(dt)
