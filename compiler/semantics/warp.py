"""Warp-level operations (PTX ISA 9.0 sections 9.7.9.6 ``shfl.sync`` and 9.7.13 ``vote.sync``,
``activemask``), once, for both interpreters.

Every function takes the threads that execute one instruction together: ``idx``, a sorted int64
array of thread slots in which warp = ``slot >> 5`` and lane = ``slot & 31`` (both interpreters lay
threads out so), and one value per thread in each other array.  A warp's *executing* lanes are
the lanes of that warp present in ``idx``; lanes that diverged away, were predicated off or have
exited are absent.

PTX leaves some cases undefined; xcc picks one deterministic rule for each, stated with the
function it concerns, so that the IR interpreter (the oracle) and the ISA interpreter agree:

* **shfl.sync** -- a source lane is *valid* when it is in range (the ``c`` clamp and segment
  rule), executes this shfl, and is in the reading thread's ``membermask``.  PTX: the value read
  from an inactive lane or a lane outside ``membermask`` is unspecified.  xcc: a reader whose
  source is not valid gets its own ``a`` and ``p = false`` (what PTX prescribes for a source out
  of range).
* **vote.sync / activemask** -- a thread takes part when it executes the vote and its own lane
  bit is set in its own ``membermask``; the others still receive the warp's result.  PTX: the
  behaviour is undefined when the executing thread is not in ``membermask``.
"""

from __future__ import annotations

import numpy as np

SHFL_MODES = ("up", "down", "bfly", "idx")
VOTE_MODES = ("all", "any", "uni")

_U32, _U64 = np.uint32, np.uint64


def warp_runs(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offset in ``idx`` where each warp's run starts, run number of each thread) for sorted slots."""
    w = idx >> 5
    head = np.empty(idx.size, bool)
    head[:1] = True
    np.not_equal(w[1:], w[:-1], out=head[1:])
    return np.flatnonzero(head), np.cumsum(head) - 1


def shfl_source(mode: str, lane: np.ndarray, b, c) -> tuple[np.ndarray, np.ndarray]:
    """``shfl.sync.mode`` (PTX ISA 9.7.9.6): (source lane ``j``, whether ``j`` is in range) for each lane.

    ``c = ((32 - width) << 8) | clamp``: ``segmask = c[12:8]`` splits the warp into segments,
    ``maxLane = (lane & segmask) | (clamp & ~segmask)`` and ``minLane = lane & segmask``::

        up:   j = lane - b[4:0];                       in range iff j >= maxLane
        down: j = lane + b[4:0];                       in range iff j <= maxLane
        bfly: j = lane ^ b[4:0];                       in range iff j <= maxLane
        idx:  j = minLane | (b[4:0] & ~segmask);       in range iff j <= maxLane
    """
    lane = np.asarray(lane, np.int64)
    bval = np.asarray(b).astype(np.int64) & 31
    cv = np.asarray(c).astype(np.int64)
    clamp, segmask = cv & 31, (cv >> 8) & 31
    min_lane = lane & segmask
    max_lane = min_lane | (clamp & ~segmask)
    if mode == "up":
        j = lane - bval
        return j, j >= max_lane
    if mode == "down":
        j = lane + bval
    elif mode == "bfly":
        j = lane ^ bval
    elif mode == "idx":
        j = min_lane | (bval & ~segmask)
    else:
        raise ValueError(f"shfl mode {mode!r} is not one of {SHFL_MODES}")
    return j, j <= max_lane


def shfl(mode: str, idx: np.ndarray, a, b, c, membermask) -> tuple[np.ndarray, np.ndarray]:
    """``shfl.sync.mode.b32 d|p, a, b, c, membermask`` (PTX ISA 9.7.9.6): (d, p) of each thread.

    ``d`` is ``a`` of the source lane (:func:`shfl_source`) and ``p`` is true when that source is
    valid: in range, executing this shfl (present in ``idx``) and in the reader's ``membermask``.
    Otherwise ``d`` is the reader's own ``a`` and ``p`` is false.  PTX leaves the value from an
    inactive source or one outside ``membermask`` unspecified; the rule here is xcc's choice.
    """
    n = idx.size
    a = np.broadcast_to(np.asarray(a), (n,))
    j, ok = shfl_source(mode, idx & 31, b, c)
    src = (idx & ~31) | np.where(ok, j, idx & 31)
    pos = np.minimum(np.searchsorted(idx, src), n - 1)
    ok &= idx[pos] == src
    ok &= ((np.asarray(membermask).astype(_U64) >> (src & 31).astype(_U64)) & _U64(1)).astype(bool)
    return np.where(ok, a[pos], a), ok


def _members(idx: np.ndarray, membermask) -> np.ndarray:
    """Whether each executing thread's lane bit is set in its own ``membermask``."""
    lane = (idx & 31).astype(_U64)
    return ((np.asarray(membermask).astype(_U64) >> lane) & _U64(1)).astype(bool)


def ballot(idx: np.ndarray, pred, membermask) -> np.ndarray:
    """``vote.sync.ballot.b32 d, pred, membermask`` (PTX ISA 9.7.13): bit ``i`` of every thread's ``d``
    is set iff lane ``i`` of its warp executes the vote, is in its own ``membermask`` and has ``pred``."""
    starts, run = warp_runs(idx)
    vote = np.asarray(pred, bool) & _members(idx, membermask)
    bits = vote.astype(_U64) << (idx & 31).astype(_U64)
    return np.add.reduceat(bits, starts).astype(_U32)[run]  # distinct lanes: the sum is the or


def vote(mode: str, idx: np.ndarray, pred, membermask) -> np.ndarray:
    """``vote.sync.mode.pred d, pred, membermask`` (PTX ISA 9.7.13), over the warp's taking-part lanes
    (executing and in their own ``membermask``): ``all`` -- every one has ``pred``; ``any`` -- some
    one has; ``uni`` -- all have or none has.  With no lane taking part: all and uni true, any false."""
    if mode not in VOTE_MODES:
        raise ValueError(f"vote mode {mode!r} is not one of {VOTE_MODES}")
    starts, run = warp_runs(idx)
    member = _members(idx, membermask)
    n_true = np.add.reduceat((np.asarray(pred, bool) & member).astype(np.int32), starts)
    if mode == "any":
        return (n_true > 0)[run]
    n_member = np.add.reduceat(member.astype(np.int32), starts)
    r = n_true == n_member
    return (r if mode == "all" else r | (n_true == 0))[run]


def activemask(idx: np.ndarray) -> np.ndarray:
    """``activemask.b32 d`` (PTX ISA 9.7.13): bit ``i`` of ``d`` is set iff lane ``i`` of the thread's
    warp executes this instruction with it."""
    starts, run = warp_runs(idx)
    return np.add.reduceat(_U64(1) << (idx & 31).astype(_U64), starts).astype(_U32)[run]
