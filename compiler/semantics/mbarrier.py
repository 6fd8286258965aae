"""The ``mbarrier`` object of PTX ISA 8.x/9.x (section 9.7.13.15, "Parallel Synchronization and Communication
Instructions: mbarrier"): a 64-bit object in shared memory that tracks the current phase, its pending
arrival count, the expected arrival count of the next phases and the transaction count (tx-count) of
asynchronous copies.

PTX leaves the object's bit layout opaque; xcc's (documented in docs/semantics.md, "mbarrier"):

======== ========================================================================================
bits     field
======== ========================================================================================
0 - 19   expected arrival count: what the pending count is reset to when a phase completes
20 - 39  pending arrival count of the current phase
40 - 60  tx-count, 21-bit two's complement (PTX's range is -(2^20 - 1) .. 2^20 - 1)
61 - 62  the current phase number modulo 4 (bit 61 is the phase parity)
63       valid: set by ``mbarrier.init``, cleared by ``mbarrier.inval`` (zeroed shared memory is invalid)
======== ========================================================================================

The *state* an arrive returns (the token of ``test_wait``/``try_wait`` and ``pending_count``) is the
object's 64 bits before that arrive: its phase field names the phase the arrive took part in.

Rules (the manual's definitions; anything it calls undefined is a fault here):

* ``init(count)``: count in 1 .. 2^20 - 1; phase 0, pending = expected = count, tx-count 0.
* an *expect-tx(n)* adds ``n`` to the tx-count, a *complete-tx(n)* subtracts it (n in 0 .. 2^20 - 1, the
  result within the tx-count's range).
* an *arrive-on(count)* subtracts ``count`` (1 .. 2^20 - 1) from the pending count, which must not go below 0;
  ``arrive_drop`` also subtracts it from the expected count.
* the current phase completes when its pending count and tx-count are both 0: the phase number advances,
  pending = expected, tx-count = 0.  ``.noComplete`` arrives must not complete the phase.
* ``test_wait``/``try_wait`` with a state: true when the phase the state names has completed (the current
  phase differs from it); with ``.parity p``: true when the current phase's parity is not ``p`` (the phase of
  parity ``p`` has completed).
* every operation but ``init`` on an object that is not valid is a fault.

Operations work on Python ints, one thread at a time, in ascending thread order (the order in which the
simulator serialises atomics): both interpreters call these functions through :mod:`xcc.sim.mbarrier`.
"""

from __future__ import annotations

MAX_COUNT = (1 << 20) - 1
_CNT = (1 << 20) - 1
_TX_BITS = 21
_TX_MASK = (1 << _TX_BITS) - 1
VALID = 1 << 63


class MbarrierError(Exception):
    """An operation PTX leaves undefined (the caller locates it at the thread)."""


def fields(state: int) -> tuple[int, int, int, int, bool]:
    """(expected, pending, tx-count, phase mod 4, valid) of a 64-bit object or state."""
    tx = (state >> 40) & _TX_MASK
    if tx >> (_TX_BITS - 1):
        tx -= 1 << _TX_BITS
    return state & _CNT, (state >> 20) & _CNT, tx, (state >> 61) & 3, bool(state >> 63)


def pack(expected: int, pending: int, tx: int, phase: int) -> int:
    return VALID | (phase & 3) << 61 | (tx & _TX_MASK) << 40 | pending << 20 | expected


def init(count: int) -> int:
    """The object after ``mbarrier.init`` with ``count`` expected arrivals."""
    if not 1 <= count <= MAX_COUNT:
        raise MbarrierError(f"mbarrier.init count {count} is outside 1 .. {MAX_COUNT}")
    return pack(count, count, 0, 0)


def _valid(state: int, what: str) -> tuple[int, int, int, int]:
    e, p, tx, ph, valid = fields(state)
    if not valid:
        raise MbarrierError(f"{what} on an mbarrier that is not initialised (or was invalidated)")
    return e, p, tx, ph


def _settle(e: int, p: int, tx: int, ph: int) -> tuple[int, bool]:
    """The packed object, the phase completed if its pending count and tx-count are both 0."""
    if p == 0 and tx == 0:
        return pack(e, e, 0, ph + 1), True
    return pack(e, p, tx, ph), False


def _tx(tx: int, n: int, what: str) -> int:
    if not 0 <= n <= MAX_COUNT:
        raise MbarrierError(f"{what}: transaction count {n} is outside 0 .. {MAX_COUNT}")
    if not -MAX_COUNT <= tx <= MAX_COUNT:
        raise MbarrierError(f"{what}: the mbarrier's tx-count {tx} leaves its range -{MAX_COUNT} .. {MAX_COUNT}")
    return tx


def arrive(state: int, count: int = 1, tx: int = 0, drop: bool = False, no_complete: bool = False,
           what: str = "mbarrier.arrive") -> tuple[int, int, bool]:
    """(new object, the returned state, whether the phase completed) of an arrive-on of ``count``, after an
    expect-tx of ``tx`` (``arrive.expect_tx``); ``drop``: ``arrive_drop``."""
    e, p, t, ph = _valid(state, what)
    if not 1 <= count <= MAX_COUNT:
        raise MbarrierError(f"{what}: count {count} is outside 1 .. {MAX_COUNT}")
    t = _tx(t + tx, tx, what)
    if count > p:
        raise MbarrierError(f"{what}: {count} arrival(s) on an mbarrier phase with {p} pending")
    if drop:
        e -= count
    new, done = _settle(e, p - count, t, ph)
    if done and no_complete:
        raise MbarrierError(f"{what}.noComplete completed the mbarrier's phase (undefined behaviour)")
    return new, state, done


def copy_arrive(state: int, noinc: bool, what: str) -> tuple[int, int, bool]:
    """(new object, the state, phase completed) of ``cp.async.mbarrier.arrive{.noinc}`` (PTX ISA 9.7.9.25.3.3)
    once the thread's prior ``cp.async`` copies have completed (the caller performs them first): an arrive-on
    of 1; without ``.noinc`` the pending count is first incremented by 1, so the arrive-on changes it by
    nothing (the manual's "zero-net change") and the phase cannot complete; ``.noinc``: the arrive-on counts
    against the expected count like ``mbarrier.arrive``."""
    if noinc:
        return arrive(state, 1, what=what)
    p = _valid(state, what)[1]
    if p + 1 > MAX_COUNT:
        raise MbarrierError(f"{what}: the pending count {p} + 1 leaves its range 0 .. {MAX_COUNT}")
    return state, state, False


def transaction(state: int, n: int, complete: bool, what: str) -> tuple[int, bool]:
    """(new object, phase completed) of an expect-tx (``complete`` False) or complete-tx of ``n`` bytes."""
    e, p, t, ph = _valid(state, what)
    t = _tx(t - n if complete else t + n, n, what)
    return _settle(e, p, t, ph)


def phase_done(state: int, token: int, parity: bool, what: str) -> bool:
    """``test_wait``/``try_wait``: whether the phase named by ``token`` (a state, or with ``parity`` a phase
    parity 0 or 1) has completed."""
    ph = _valid(state, what)[3]
    if parity:
        return (ph & 1) != (token & 1)
    return ph != (token >> 61) & 3


def pending_count(token: int) -> int:
    """``mbarrier.pending_count``: the pending arrival count recorded in a state."""
    return (token >> 20) & _CNT
