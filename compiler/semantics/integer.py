"""Integer and bitwise operations (PTX ISA 9.0 sections 9.7.1 and 9.7.8).

All arithmetic wraps modulo 2**bits.  Shift counts at or beyond the width
give 0 (``shl``, ``shr.u``) or the sign fill (``shr.s``), as PTX specifies.
Division by zero is unspecified in PTX; xcc returns what NVIDIA hardware
returns: all ones for the quotient and the dividend for the remainder
(unsigned and signed alike).  Signed ``INT_MIN / -1`` wraps to ``INT_MIN``.
"""

from __future__ import annotations

import numpy as np

from xcc.semantics.bits import SDTYPE, UDTYPE, as_signed, as_unsigned, from_signed


def _u(a, bits):
    return as_unsigned(a, bits)


def add(a, b, bits, signed=False):
    """d = a + b (mod 2**bits)."""
    return _u(a, bits) + _u(b, bits)


def sub(a, b, bits, signed=False):
    """d = a - b (mod 2**bits)."""
    return _u(a, bits) - _u(b, bits)


def _wide(a, b, bits, signed):
    """The exact 2*bits-wide product as (hi, lo) unsigned halves of ``bits`` each."""
    if bits <= 32:
        if signed:
            p = as_signed(a, bits).astype(np.int64) * as_signed(b, bits).astype(np.int64)
            p = p.view(np.uint64)
        else:
            p = _u(a, bits).astype(np.uint64) * _u(b, bits).astype(np.uint64)
        return _u(p >> np.uint64(bits), bits), _u(p, bits)
    # 64 x 64 -> 128 by 32-bit limbs.
    ua, ub = _u(a, 64), _u(b, 64)
    m32 = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = ua & m32, ua >> np.uint64(32)
    b_lo, b_hi = ub & m32, ub >> np.uint64(32)
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> np.uint64(32)) + (lh & m32) + (hl & m32)
    lo = (ll & m32) | ((mid & m32) << np.uint64(32))
    hi = hh + (lh >> np.uint64(32)) + (hl >> np.uint64(32)) + (mid >> np.uint64(32))
    if signed:  # correct the unsigned high half for negative operands
        hi = hi - np.where(as_signed(ua, 64) < 0, ub, np.uint64(0)) - np.where(as_signed(ub, 64) < 0, ua, np.uint64(0))
    return hi, lo


def mul(a, b, bits, mode="lo", signed=False):
    """``mul.lo``: low half of the product; ``.hi``: high half; ``.wide``: the full 2*bits product."""
    hi, lo = _wide(a, b, bits, signed)
    if mode == "lo":
        return lo
    if mode == "hi":
        return hi
    if mode == "wide":
        w = 2 * bits
        return (_u(hi, w) << UDTYPE[w](bits)) | _u(lo, w)
    raise ValueError(mode)


def mad(a, b, c, bits, mode="lo", signed=False):
    """d = (a * b).mode + c, where c has 2*bits for ``.wide``."""
    p = mul(a, b, bits, mode, signed)
    w = 2 * bits if mode == "wide" else bits
    return p + _u(c, w)


def div(a, b, bits, signed=False):
    """Truncating division; x / 0 = all ones."""
    zero = _u(b, bits) == 0
    if signed:
        sa, sb = as_signed(a, bits).astype(np.int64), as_signed(b, bits).astype(np.int64)
        safe = np.where(zero, 1, sb)
        q = np.abs(sa) // np.abs(safe) * np.sign(sa) * np.sign(safe)
        if bits == 64:
            with np.errstate(over="ignore"):
                q = np.where((sa == np.iinfo(np.int64).min) & (safe == -1), sa, q)
        return np.where(zero, UDTYPE[bits](-1 & ((1 << bits) - 1)), from_signed(q, bits))
    ua, ub = _u(a, bits), _u(b, bits)
    return np.where(zero, UDTYPE[bits]((1 << bits) - 1), ua // np.where(zero, 1, ub).astype(ua.dtype))


def rem(a, b, bits, signed=False):
    """Remainder with the sign of the dividend; x % 0 = x."""
    zero = _u(b, bits) == 0
    if signed:
        sa, sb = as_signed(a, bits).astype(np.int64), as_signed(b, bits).astype(np.int64)
        safe = np.where(zero, 1, sb)
        r = np.fmod(sa, safe) if bits < 64 else sa - (np.abs(sa) // np.abs(safe) * np.sign(sa) * np.sign(safe)) * safe
        return np.where(zero, _u(a, bits), from_signed(r, bits))
    ua, ub = _u(a, bits), _u(b, bits)
    return np.where(zero, ua, ua % np.where(zero, 1, ub).astype(ua.dtype))


def imin(a, b, bits, signed=False):
    if signed:
        return from_signed(np.minimum(as_signed(a, bits), as_signed(b, bits)), bits)
    return np.minimum(_u(a, bits), _u(b, bits))


def imax(a, b, bits, signed=False):
    if signed:
        return from_signed(np.maximum(as_signed(a, bits), as_signed(b, bits)), bits)
    return np.maximum(_u(a, bits), _u(b, bits))


def iabs(a, bits):
    """|a| for signed a; abs(INT_MIN) = INT_MIN."""
    return from_signed(np.abs(as_signed(a, bits)), bits)


def ineg(a, bits):
    return UDTYPE[bits](0) - _u(a, bits)


def inot(a, bits):
    if bits == 1:
        return ~np.asarray(a, dtype=bool)
    return ~_u(a, bits)


def band(a, b, bits, signed=False):
    if bits == 1:
        return np.asarray(a, bool) & np.asarray(b, bool)
    return _u(a, bits) & _u(b, bits)


def bor(a, b, bits, signed=False):
    if bits == 1:
        return np.asarray(a, bool) | np.asarray(b, bool)
    return _u(a, bits) | _u(b, bits)


def bxor(a, b, bits, signed=False):
    if bits == 1:
        return np.asarray(a, bool) ^ np.asarray(b, bool)
    return _u(a, bits) ^ _u(b, bits)


def shl(a, n, bits, signed=False):
    """a << n; n is an unsigned 32-bit count, n >= bits gives 0."""
    n = _u(n, 32)
    big = n >= bits
    s = np.where(big, 0, n).astype(UDTYPE[bits])
    return np.where(big, UDTYPE[bits](0), _u(a, bits) << s)


def shr(a, n, bits, signed=False):
    """a >> n, arithmetic for signed types; n >= bits gives 0 or the sign fill."""
    n = _u(n, 32)
    if signed:
        s = np.minimum(n, bits - 1).astype(SDTYPE[bits])
        return from_signed(as_signed(a, bits) >> s, bits)
    big = n >= bits
    s = np.where(big, 0, n).astype(UDTYPE[bits])
    return np.where(big, UDTYPE[bits](0), _u(a, bits) >> s)


def popc(a, bits):
    """Number of one bits, as u32."""
    return np.bitwise_count(_u(a, bits)).astype(np.uint32)


def clz(a, bits):
    """Leading zeros, as u32 (clz(0) = bits)."""
    u = _u(a, bits).astype(np.uint64)
    n = np.full(u.shape, bits, dtype=np.uint32)
    nz = u != 0
    if np.any(nz):
        msb = np.floor(np.log2(u[nz].astype(np.float64))).astype(np.int64)
        # log2 of 64-bit values can round up near powers of two: correct it exactly.
        msb = np.where((np.uint64(1) << msb.astype(np.uint64)) > u[nz], msb - 1, msb)
        n[nz] = (bits - 1 - msb).astype(np.uint32)
    return n


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def brev(a, bits):
    """Bit reversal: bit i of the result is bit bits-1-i of a."""
    u = np.ascontiguousarray(_u(a, bits))
    b = _REV8[u.view(np.uint8).reshape(u.shape + (bits // 8,))][..., ::-1]
    return np.ascontiguousarray(b).view(UDTYPE[bits]).reshape(u.shape)


INT_BINARY = {
    "add": add, "sub": sub, "div": div, "rem": rem, "min": imin, "max": imax,
    "and": band, "or": bor, "xor": bxor, "shl": shl, "shr": shr,
}
