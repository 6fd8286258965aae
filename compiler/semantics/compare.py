"""Comparison and selection (PTX ISA 9.0 sections 9.7.6.1-9.7.6.4).

Integer comparisons: eq ne lt le gt ge (signed or unsigned by type) and the
explicitly unsigned lo ls hi hs.  Float comparisons: eq ne lt le gt ge are
ordered (false when either operand is NaN), equ neu ltu leu gtu geu are
unordered (true when either is NaN), num (neither is NaN) and nan (either is).
"""

from __future__ import annotations

import numpy as np

from xcc.semantics.bits import as_float, as_signed, as_unsigned
from xcc.semantics.comparisons import FLOAT_CMPS, INT_CMPS  # noqa: F401 (re-exported)
from xcc.semantics.comparisons import ORDERED as _BASE
from xcc.semantics.comparisons import UNSIGNED_ALIAS as _UNSIGNED_ALIAS


def compare(cmp: str, a, b, bits: int, kind: str) -> np.ndarray:
    """The predicate ``a cmp b`` for operands of ``kind`` ('u', 's', 'b', 'f') and width ``bits``."""
    if kind == "f":
        x, y = as_float(a, bits), as_float(b, bits)
        unordered = np.isnan(x) | np.isnan(y)
        if cmp == "num":
            return ~unordered
        if cmp == "nan":
            return unordered
        if cmp.endswith("u") and cmp[:-1] in _BASE:
            with np.errstate(invalid="ignore"):
                return _BASE[cmp[:-1]](x, y) | unordered
        with np.errstate(invalid="ignore"):
            r = _BASE[cmp](x, y)
        return r & ~unordered if cmp == "ne" else r
    if cmp in _UNSIGNED_ALIAS:
        cmp, kind = _UNSIGNED_ALIAS[cmp], "u"
    if bits == 1:
        return _BASE[cmp](np.asarray(a, bool), np.asarray(b, bool))
    if kind == "s":
        return _BASE[cmp](as_signed(a, bits), as_signed(b, bits))
    return _BASE[cmp](as_unsigned(a, bits), as_unsigned(b, bits))


def select(cond, a, b) -> np.ndarray:
    """``selp``: cond ? a : b."""
    return np.where(np.asarray(cond, bool), a, b)
