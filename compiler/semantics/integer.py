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


def _magnitude(a, bits):
    """|a| of a signed value as an unsigned number of the same width (exact for INT_MIN)."""
    ua = _u(a, bits)
    neg = as_signed(ua, bits) < 0
    return np.where(neg, UDTYPE[bits](0) - ua, ua), neg


def div(a, b, bits, signed=False):
    """Truncating division; x / 0 = all ones; INT_MIN / -1 wraps to INT_MIN."""
    ua, ub = _u(a, bits), _u(b, bits)
    zero = ub == 0
    ones = UDTYPE[bits]((1 << bits) - 1)
    if signed:
        ma, na = _magnitude(ua, bits)
        mb, nb = _magnitude(ub, bits)
        q = ma // np.where(zero, 1, mb).astype(ma.dtype)
        q = np.where(na != nb, UDTYPE[bits](0) - q, q)
        return np.where(zero, ones, q)
    return np.where(zero, ones, ua // np.where(zero, 1, ub).astype(ua.dtype))


def rem(a, b, bits, signed=False):
    """Remainder with the sign of the dividend; x % 0 = x."""
    ua, ub = _u(a, bits), _u(b, bits)
    zero = ub == 0
    if signed:
        ma, na = _magnitude(ua, bits)
        mb, _ = _magnitude(ub, bits)
        r = ma % np.where(zero, 1, mb).astype(ma.dtype)
        r = np.where(na, UDTYPE[bits](0) - r, r)
        return np.where(zero, ua, r)
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
    """Leading zeros, as u32 (clz(0) = bits); exact binary search over shift widths."""
    u = _u(a, bits).astype(np.uint64)
    n = np.zeros(u.shape, dtype=np.uint32)
    width = bits
    shift = bits // 2
    while shift:
        top_empty = (u >> np.uint64(width - shift)) == 0 if width < 64 or shift < 64 else u == 0
        n = n + np.where(top_empty, np.uint32(shift), np.uint32(0))
        u = np.where(top_empty, u << np.uint64(shift), u)
        shift //= 2
    # u now has its highest set bit at position bits-1, or is zero.
    return n + ((u >> np.uint64(bits - 1)) == 0).astype(np.uint32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def brev(a, bits):
    """Bit reversal: bit i of the result is bit bits-1-i of a."""
    u = np.ascontiguousarray(_u(a, bits))
    b = _REV8[u.view(np.uint8).reshape(u.shape + (bits // 8,))][..., ::-1]
    return np.ascontiguousarray(b).view(UDTYPE[bits]).reshape(u.shape)


def _lut2(f: int, b, c):
    """The 2-input function with truth table ``f`` (bit ``(b<<1)|c``), bitwise; None for all zeros."""
    return {
        0x0: None, 0x1: lambda: ~(b | c), 0x2: lambda: ~b & c, 0x3: lambda: ~b, 0x4: lambda: b & ~c,
        0x5: lambda: ~c, 0x6: lambda: b ^ c, 0x7: lambda: ~(b & c), 0x8: lambda: b & c,
        0x9: lambda: ~(b ^ c), 0xA: lambda: c, 0xB: lambda: ~b | c, 0xC: lambda: b,
        0xD: lambda: b | ~c, 0xE: lambda: b | c, 0xF: lambda: b | ~b,
    }[f]


def lop3(a, b, c, lut, bits=32):
    """``lop3.b32``: bit i of the result is bit ``(a_i<<2)|(b_i<<1)|c_i`` of the 8-bit ``lut``."""
    ua, ub, uc = _u(a, bits), _u(b, bits), _u(c, bits)
    f0, f1 = _lut2(lut & 0xF, ub, uc), _lut2((lut >> 4) & 0xF, ub, uc)
    zero = UDTYPE[bits](0)
    r0 = f0() if f0 else np.broadcast_to(zero, np.broadcast(ua, ub, uc).shape)
    if (lut & 0xF) == (lut >> 4):  # independent of a
        return np.array(r0, dtype=UDTYPE[bits])
    r1 = f1() if f1 else zero
    return np.asarray(r0 ^ (ua & (r0 ^ r1)), dtype=UDTYPE[bits])  # a ? r1 : r0, bitwise


INT_BINARY = {
    "add": add, "sub": sub, "div": div, "rem": rem, "min": imin, "max": imax,
    "and": band, "or": bor, "xor": bxor, "shl": shl, "shr": shr,
}
