"""Bit-pattern helpers: reinterpret unsigned patterns as signed integers or floats and back."""

from __future__ import annotations

import numpy as np

UDTYPE = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SDTYPE = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
FDTYPE = {16: np.float16, 32: np.float32, 64: np.float64}


def mask(bits: int) -> int:
    return (1 << bits) - 1


def as_unsigned(a: np.ndarray, bits: int) -> np.ndarray:
    """The low ``bits`` of ``a`` as the unsigned dtype of that width."""
    a = np.asarray(a)
    dt = UDTYPE[bits]
    if a.dtype == dt:
        return a
    if a.dtype.kind == "f":
        raise TypeError("as_unsigned takes bit patterns, not floats")
    return a.astype(UDTYPE[max(bits, a.dtype.itemsize * 8)], copy=False).astype(dt)


def as_signed(a: np.ndarray, bits: int) -> np.ndarray:
    return as_unsigned(a, bits).view(SDTYPE[bits])


def as_float(a: np.ndarray, bits: int) -> np.ndarray:
    return as_unsigned(a, bits).view(FDTYPE[bits])


def from_float(f: np.ndarray, bits: int) -> np.ndarray:
    return np.asarray(f, dtype=FDTYPE[bits]).view(UDTYPE[bits])


def from_signed(a: np.ndarray, bits: int) -> np.ndarray:
    return np.asarray(a).astype(SDTYPE[bits]).view(UDTYPE[bits])
