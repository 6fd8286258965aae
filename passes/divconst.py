"""Magic numbers for signed division by a constant (a helper of :mod:`xcc.passes.instcombine`).

Warren, "Hacker's Delight", 2nd ed., figure 10-1 (``magic``), written for any word width ``W``:
``q = mulhi_s(n, M)``, then ``+ n`` when ``d > 0`` and ``M < 0``, ``- n`` when ``d < 0`` and ``M > 0``,
then ``>> s`` (arithmetic) and ``+ 1`` if the quotient is negative, gives ``n / d`` rounded toward
zero for every W-bit ``n`` (Granlund and Montgomery, PLDI 1994).  The arithmetic of the figure is
unsigned W-bit, so the quotients wrap modulo 2^W as they do there.
"""

from __future__ import annotations


def signed_magic(d: int, bits: int) -> tuple[int, int]:
    """(M as a signed integer, shift s) for the divisor ``d`` (2 <= |d| < 2^(bits-1), or d = -2^(bits-1)
    is not needed: powers of two are shifts)."""
    mask = (1 << bits) - 1
    two = 1 << (bits - 1)
    ad = abs(d)
    t = two + ((d & mask) >> (bits - 1))
    anc = t - 1 - t % ad
    p = bits - 1
    q1, r1 = divmod(two, anc)
    q2, r2 = divmod(two, ad)
    while True:
        p += 1
        q1, r1 = (2 * q1) & mask, 2 * r1
        if r1 >= anc:
            q1, r1 = (q1 + 1) & mask, r1 - anc
        q2, r2 = (2 * q2) & mask, 2 * r2
        if r2 >= ad:
            q2, r2 = (q2 + 1) & mask, r2 - ad
        delta = ad - r2
        if not (q1 < delta or q1 == delta and r1 == 0):
            break
    m = (q2 + 1) & mask
    m = m - (1 << bits) if m >> (bits - 1) else m
    if d < 0:
        m = -m
        m = (m & mask) - (1 << bits) if (m & mask) >> (bits - 1) else m & mask
    return m, p - bits


def unsigned_magic(d: int, bits: int) -> tuple[int, bool, int]:
    """(M, add, s) for unsigned division by ``d`` (2 <= d < 2^bits, not a power of two), Hacker's Delight
    figure 10-2 (``magicu``) for word width ``bits``: ``t = mulhi_u(n, M)``; without ``add`` the quotient
    is ``t >> s``, with it ``(((n - t) >> 1) + t) >> (s - 1)``."""
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)
    add = False
    nc = mask - ((1 << bits) - d) % d
    p = bits - 1
    q1, r1 = divmod(half, nc)
    q2, r2 = divmod(half - 1, d)
    while True:
        p += 1
        if r1 >= nc - r1:
            q1, r1 = (2 * q1 + 1) & mask, 2 * r1 - nc
        else:
            q1, r1 = (2 * q1) & mask, 2 * r1
        if r2 + 1 >= d - r2:
            if q2 >= half - 1:
                add = True
            q2, r2 = (2 * q2 + 1) & mask, 2 * r2 + 1 - d
        else:
            if q2 >= half:
                add = True
            q2, r2 = (2 * q2) & mask, 2 * r2 + 1
        delta = d - 1 - r2
        if not (p < 2 * bits and (q1 < delta or q1 == delta and r1 == 0)):
            break
    return (q2 + 1) & mask, add, p - bits
