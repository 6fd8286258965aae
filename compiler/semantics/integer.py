"""Integer and bitwise operations (PTX ISA 9.0 sections 9.7.1, 9.7.7 and 9.7.9.7).

All arithmetic wraps modulo 2**bits.  Shift counts at or beyond the width
give 0 (``shl``, ``shr.u``) or the sign fill (``shr.s``), as PTX specifies.
Division by zero is unspecified in PTX; xcc returns what an NVIDIA H200
returns (bench/gpu_semantics.py): all ones for the quotient and for the
remainder (unsigned and signed alike).  Signed ``INT_MIN / -1`` wraps to ``INT_MIN``.
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


def add_sat(a, b, bits, negate_b=False):
    """``add.sat.s32`` / ``sub.sat.s32`` (PTX ISA 9.7.1.1-2): the exact signed sum (or difference)
    clamped to [INT_MIN, INT_MAX]."""
    x, y = as_signed(a, bits).astype(np.int64), as_signed(b, bits).astype(np.int64)
    s = x - y if negate_b else x + y
    return from_signed(np.clip(s, -(1 << (bits - 1)), (1 << (bits - 1)) - 1), bits)


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


def mad(a, b, c, bits, mode="lo", signed=False, sat=False):
    """d = (a * b).mode + c, where c has 2*bits for ``.wide``.  ``sat`` (PTX defines only
    ``mad.hi.sat.s32``, 9.7.1.4) clamps the exact signed sum to [INT_MIN, INT_MAX]."""
    p = mul(a, b, bits, mode, signed)
    if sat:
        s = as_signed(p, bits).astype(np.int64) + as_signed(c, bits).astype(np.int64)
        return from_signed(np.clip(s, -(1 << (bits - 1)), (1 << (bits - 1)) - 1), bits)
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
    """Remainder with the sign of the dividend; x % 0 = all ones (as an NVIDIA H200 gives it)."""
    ua, ub = _u(a, bits), _u(b, bits)
    zero = ub == 0
    ones = UDTYPE[bits]((1 << bits) - 1)
    if signed:
        ma, na = _magnitude(ua, bits)
        mb, _ = _magnitude(ub, bits)
        r = ma % np.where(zero, 1, mb).astype(ma.dtype)
        r = np.where(na, UDTYPE[bits](0) - r, r)
        return np.where(zero, ones, r)
    return np.where(zero, ones, ua % np.where(zero, 1, ub).astype(ua.dtype))


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


# ------------------------------------------------------------------ bit-field and byte operations
def _low_mask(k, bits):
    """Per element, the mask of the low ``k`` bits (0 <= k <= bits) as uint64."""
    k = np.asarray(k, dtype=np.uint64)
    full = k >= 64
    return np.where(full, np.uint64(2**64 - 1), (np.uint64(1) << np.where(full, 0, k).astype(np.uint64))
                    - np.uint64(1))


def bfe(a, b, c, bits, signed=False):
    """``bfe.type d, a, b, c`` (PTX ISA 9.7.1.19): extract ``len = c & 0xff`` bits of a from
    ``pos = b & 0xff``; bits at or beyond the msb of a are not part of the field.  The rest of d
    is filled with the sign bit: 0 for .u32/.u64 or len == 0, else ``a[min(pos + len - 1, msb)]``."""
    u = _u(a, bits).astype(np.uint64)
    pos = (_u(b, 32) & np.uint32(0xFF)).astype(np.int64)
    ln = (_u(c, 32) & np.uint32(0xFF)).astype(np.int64)
    k = np.clip(np.minimum(ln, bits - pos), 0, bits)  # bits actually taken from a
    field = (u >> np.minimum(pos, bits - 1).astype(np.uint64)) & _low_mask(k, bits)
    if not signed:
        return field.astype(UDTYPE[bits])
    top = np.minimum(pos + ln - 1, bits - 1).clip(0).astype(np.uint64)
    sbit = (ln != 0) & (((u >> top) & np.uint64(1)) == 1)
    fill = ~_low_mask(k, bits)
    return np.where(sbit, field | fill, field).astype(np.uint64).astype(UDTYPE[bits])


def bfi(a, b, c, d, bits):
    """``bfi.type f, a, b, c, d`` (PTX ISA 9.7.1.20): f = b with bits ``pos .. pos+len-1`` (those
    not beyond the msb) replaced by the low bits of a; ``pos = c & 0xff``, ``len = d & 0xff``."""
    ua, ub = _u(a, bits).astype(np.uint64), _u(b, bits).astype(np.uint64)
    pos = (_u(c, 32) & np.uint32(0xFF)).astype(np.int64)
    ln = (_u(d, 32) & np.uint32(0xFF)).astype(np.int64)
    k = np.clip(np.minimum(ln, bits - pos), 0, bits)
    s = np.minimum(pos, bits - 1).astype(np.uint64)
    m = _low_mask(k, bits) << s  # k == 0 makes m zero whatever the shift
    return ((ub & ~m) | ((ua << s) & m)).astype(UDTYPE[bits])


# prmt modes (PTX ISA 9.7.9.7, table "prmt modes"): for selector c[1:0], the source byte of
# d.b3, d.b2, d.b1, d.b0 (bytes of {b, a}: a is bytes 0-3, b bytes 4-7).
PRMT_MODES = {
    "f4e": ((3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)),
    "b4e": ((5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)),
    "rc16": ((1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)),
}
_PRMT_TABLE = {m: np.array([row[::-1] for row in rows], dtype=np.uint64)  # [selector, byte of d]
               for m, rows in PRMT_MODES.items()}


def prmt(a, b, c, mode=None):
    """``prmt.b32{.mode} d, a, b, c`` (PTX ISA 9.7.9.7): byte i of d is a byte of ``{b, a}``.
    Generic form: nibble i of c selects it (bits 2:0) and bit 3 replicates its sign over the
    byte.  With a mode, c[1:0] picks a row of :data:`PRMT_MODES` (no sign replication)."""
    src = (_u(b, 32).astype(np.uint64) << np.uint64(32)) | _u(a, 32).astype(np.uint64)
    cu = _u(c, 32).astype(np.uint64)
    d = np.zeros(np.broadcast(src, cu).shape, dtype=np.uint64)
    for i in range(4):
        if mode is None:
            ctl = (cu >> np.uint64(4 * i)) & np.uint64(0xF)
            sel = ctl & np.uint64(7)
        else:
            sel = _PRMT_TABLE[mode][(cu & np.uint64(3)).astype(np.intp), i]
        byte = (src >> (sel * np.uint64(8))) & np.uint64(0xFF)
        if mode is None:
            sign = (ctl >> np.uint64(3)) & (byte >> np.uint64(7))
            byte = np.where(sign == 1, np.uint64(0xFF), np.where((ctl >> np.uint64(3)) == 1, 0, byte))
        d |= byte.astype(np.uint64) << np.uint64(8 * i)
    return d.astype(np.uint32)


def shf(a, b, c, left, clamp):
    """``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`` (PTX ISA 9.7.8.7): shift the 64-bit ``{b, a}`` by
    ``n = clamp ? min(c, 32) : c & 31``; .l keeps the upper 32 bits, .r the lower 32."""
    v = (_u(b, 32).astype(np.uint64) << np.uint64(32)) | _u(a, 32).astype(np.uint64)
    cu = _u(c, 32)
    n = (np.minimum(cu, np.uint32(32)) if clamp else cu & np.uint32(31)).astype(np.uint64)
    s = np.uint64(32) - n if left else n  # .l: bits 63-n .. 32-n are bits 31..0 of (v >> (32 - n))
    return ((v >> s) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def bfind(a, bits, signed=False, shiftamt=False):
    """``bfind[.shiftamt].type d, a`` (PTX ISA 9.7.1.16): the position of the most significant
    non-sign bit of a (signed negative inputs are inverted first), or 0xFFFFFFFF if there is none;
    .shiftamt gives ``msb - position`` instead (the left shift that brings it to the msb)."""
    u = _u(a, bits)
    if signed:
        u = np.where(as_signed(u, bits) < 0, ~u, u)
    lz = clz(u, bits)
    none = lz == bits
    d = lz if shiftamt else np.uint32(bits - 1) - lz
    return np.where(none, np.uint32(0xFFFFFFFF), d).astype(np.uint32)


def bmsk(a, b, clamp):
    """``bmsk.{clamp,wrap}.b32 d, a, b`` (PTX ISA 9.7.1.22): a mask of width b starting at bit a.
    Both wrap to 0..31 (.wrap); with .clamp, a >= 32 gives 0 and b >= 32 extends to the msb."""
    ua, ub = _u(a, 32).astype(np.uint64), _u(b, 32).astype(np.uint64)
    a1, b1 = ua & np.uint64(31), ub & np.uint64(31)
    ones = np.uint64(0xFFFFFFFF)
    mask0 = (ones << a1) & ones
    total = a1 + b1
    over = total >= 32
    if clamp:
        over = over | (ua >= 32) | (ub >= 32)
        mask0 = np.where(ua >= 32, np.uint64(0), mask0)
    mask1 = np.where(over, np.uint64(0), np.where(b1 == 0, ones, (ones << np.minimum(total, 31)) & ones))
    return (mask0 & ~mask1 & ones).astype(np.uint32)


def _bytes(a, count, width, signed):
    """The ``count`` packed ``width``-bit fields of a 32-bit value, sign- or zero-extended, as int64."""
    u = _u(a, 32).astype(np.int64)
    out = []
    for i in range(count):
        f = (u >> (width * i)) & ((1 << width) - 1)
        if signed:
            f = np.where(f >> (width - 1), f - (1 << width), f)
        out.append(f)
    return out


def dp4a(a, b, c, a_signed, b_signed):
    """``dp4a.atype.btype d, a, b, c`` (PTX ISA 9.7.1.23): d = c + sum of the products of the four
    bytes of a and of b (each sign- or zero-extended by its type), mod 2**32."""
    va, vb = _bytes(a, 4, 8, a_signed), _bytes(b, 4, 8, b_signed)
    s = _u(c, 32).astype(np.int64) + sum(x * y for x, y in zip(va, vb))
    return s.astype(np.uint64).astype(np.uint32)


def dp2a(a, b, c, a_signed, b_signed, hi=False):
    """``dp2a.{lo,hi}.atype.btype d, a, b, c`` (PTX ISA 9.7.1.24): d = c + the two 16-bit halves
    of a times bytes 0, 1 (.lo) or 2, 3 (.hi) of b, each extended by its type, mod 2**32."""
    va, vb = _bytes(a, 2, 16, a_signed), _bytes(b, 4, 8, b_signed)
    k = 2 if hi else 0
    s = _u(c, 32).astype(np.int64) + va[0] * vb[k] + va[1] * vb[k + 1]
    return s.astype(np.uint64).astype(np.uint32)


def _mul24(a, b, signed):
    """The exact 48-bit product of the low 24 bits of a and b, as int64."""
    x, y = (_u(v, 32).astype(np.int64) & 0xFFFFFF for v in (a, b))
    if signed:
        x, y = (np.where(v >> 23, v - (1 << 24), v) for v in (x, y))
    return x * y


def mul24(a, b, hi=False, signed=False):
    """``mul24.{lo,hi}.type d, a, b`` (PTX ISA 9.7.1.5): t = a[23:0] * b[23:0] (48 bits, signed
    for .s32); d = t[31:0] (.lo) or t[47:16] (.hi)."""
    t = _mul24(a, b, signed)
    return ((t >> 16) if hi else t).astype(np.uint64).astype(np.uint32)


def mad24(a, b, c, hi=False, signed=False, sat=False):
    """``mad24.{lo,hi}[.sat].type d, a, b, c`` (PTX ISA 9.7.1.6): mul24's result + c, mod 2**32;
    .sat (PTX defines only mad24.hi.sat.s32) clamps the exact signed sum to [INT_MIN, INT_MAX]."""
    t = _mul24(a, b, signed)
    part = (t >> 16) if hi else t
    if sat:
        part = part.astype(np.uint64).astype(np.uint32).view(np.int32).astype(np.int64)
        s = np.clip(part + as_signed(c, 32).astype(np.int64), -(1 << 31), (1 << 31) - 1)
        return s.astype(np.int32).view(np.uint32)
    return (part + _u(c, 32).astype(np.int64)).astype(np.uint64).astype(np.uint32)


INT_BINARY = {
    "add": add, "sub": sub, "div": div, "rem": rem, "min": imin, "max": imax,
    "and": band, "or": bor, "xor": bxor, "shl": shl, "shr": shr,
}


def relu(a, bits):
    """``min.relu``/``max.relu`` (PTX ISA 9.7.1.10-11, s32): a negative result becomes 0."""
    return np.where(as_signed(a, bits) < 0, UDTYPE[bits](0), _u(a, bits))


# ----------------------------------------------------------------------------- extended precision
# PTX ISA 9.0 section 9.7.1.x "Extended-Precision Integer Arithmetic": add.cc, addc, sub.cc, subc,
# mad.cc, madc.  The carry flag CC.CF is one bit; every sum is of the operands' bit patterns (signed
# types alike), and the carry-out is whether the exact unsigned sum reaches 2**bits.  Subtraction uses
# the same carry, as NVIDIA GPUs do (measured on an H200, bench/gpu_semantics.py): ``subc`` computes
# a + ~b + CC.CF = a - b - (1 - CC.CF) and its carry-out is that sum's, the complement of the borrow;
# ``sub.cc`` is ``subc.cc`` with CC.CF = 1.  Chains of one kind read as PTX's borrow, and the
# mixed ones (add.cc then subc, sub.cc then addc) and a subc before any .cc (CC.CF = 0: a - b - 1)
# give the GPU's results.
def add_carry(a, b, cin, bits):
    """(a + b + cin mod 2**bits, carry-out) for ``add.cc``/``addc{.cc}``; ``cin`` is a bool array."""
    x, y = _u(a, bits), _u(b, bits)
    c = np.asarray(cin, bool).astype(UDTYPE[bits])
    s1 = x + y
    s2 = s1 + c
    return s2, (s1 < x) | (s2 < s1)


def sub_borrow(a, b, cin, bits):
    """(a + ~b + cin mod 2**bits, carry-out) for ``sub.cc`` (``cin`` true) and ``subc{.cc}``: the
    carry-out is the complement of the borrow of ``a - b - (1 - cin)``."""
    x, y = _u(a, bits), _u(b, bits)
    borrow_in = ~np.asarray(cin, bool)
    d = x - y - borrow_in.astype(UDTYPE[bits])
    return d, ~((x < y) | ((x == y) & borrow_in))


def mad_carry(a, b, c, cin, bits, hi=False, signed=False):
    """(lo or hi half of a * b, plus c + cin, mod 2**bits; carry-out of that addition) for
    ``mad{.lo,.hi}.cc`` and ``madc{.lo,.hi}{.cc}``."""
    ph, pl = _wide(a, b, bits, signed)
    return add_carry(ph if hi else pl, c, cin, bits)
