"""Warp-level operations (PTX ISA 9.0 sections 9.7.9.6 ``shfl.sync``, 9.7.13 ``vote.sync``,
``match.sync``, ``activemask`` and ``redux.sync``), once, for both interpreters.

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
* **match.sync / redux.sync** -- the same rule as vote: the lanes *taking part* are those that
  execute the instruction with their own lane bit set in their own ``membermask`` (PTX: "the
  non-exited threads in membermask"); every executing thread receives the result over them.
"""

from __future__ import annotations

import numpy as np

SHFL_MODES = ("up", "down", "bfly", "idx")
VOTE_MODES = ("all", "any", "uni")
MATCH_MODES = ("any", "all")
REDUX_OPS = ("add", "min", "max", "and", "or", "xor")

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

    ``p`` is true when the source lane (:func:`shfl_source`) is in range; then ``d`` is ``a`` of the
    source lane if it executes this shfl (present in ``idx``) and is in the reader's ``membermask``,
    and 0 if not (PTX leaves that value unspecified; 0 is what an NVIDIA H200 returns, with ``p``
    true, bench/gpu_semantics.py).  A source out of range gives the reader's own ``a`` and ``p``
    false.
    """
    n = idx.size
    a = np.broadcast_to(np.asarray(a), (n,))
    j, in_range = shfl_source(mode, idx & 31, b, c)
    src = (idx & ~31) | np.where(in_range, j, idx & 31)
    pos = np.minimum(np.searchsorted(idx, src), n - 1)
    ok = in_range & (idx[pos] == src)
    ok &= ((np.asarray(membermask).astype(_U64) >> (src & 31).astype(_U64)) & _U64(1)).astype(bool)
    d = np.where(ok, a[pos], np.where(in_range, np.zeros_like(a), a))
    return d, np.asarray(in_range, bool)


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


def _lane_bits(idx: np.ndarray, take: np.ndarray) -> np.ndarray:
    """Each thread's lane bit (uint64) where ``take``, else 0."""
    return np.where(take, _U64(1) << (idx & 31).astype(_U64), _U64(0))


def match(mode: str, idx: np.ndarray, a, membermask) -> tuple[np.ndarray, np.ndarray]:
    """``match.mode.sync.b32|b64 d[|p], a, membermask`` (PTX ISA 9.7.13.6): (d, p) of each thread.

    ``any``: ``d`` is the mask of the taking-part lanes of the thread's warp whose ``a`` equals the
    thread's own ``a`` (``p`` is undefined by PTX and set false here).  ``all``: ``d`` is the mask
    of the taking-part lanes when they all hold the same ``a``, else 0, and ``p`` says whether they
    do.  A thread that executes but does not take part compares its own ``a`` the same way (PTX
    leaves its result undefined)."""
    if mode not in MATCH_MODES:
        raise ValueError(f"match mode {mode!r} is not one of {MATCH_MODES}")
    n = idx.size
    a = np.broadcast_to(np.asarray(a), (n,))
    starts, run = warp_runs(idx)
    member = _members(idx, membermask)
    bits = _lane_bits(idx, member)
    group = np.add.reduceat(bits, starts)  # taking-part lanes of each warp
    if mode == "all":
        lo = np.where(member, a, a.max(initial=0) if n else 0)
        hi = np.where(member, a, a.min(initial=0) if n else 0)
        vmin = np.minimum.reduceat(lo, starts)
        vmax = np.maximum.reduceat(hi, starts)
        # a warp with no taking-part lane: the fill values make min > max; treat as all equal
        same = (vmin == vmax) | (group == 0)
        return np.where(same, group, _U64(0)).astype(_U32)[run], same[run]
    out = np.zeros(n, _U64)
    for s, e in zip(starts, np.append(starts[1:], n)):  # at most 32 lanes: compare all pairs
        v, m = a[s:e], bits[s:e]
        eq = v[:, None] == v[None, :]
        out[s:e] = np.bitwise_or.reduce(np.where(eq, m[None, :], _U64(0)), axis=1)
    return out.astype(_U32), np.zeros(n, bool)


def redux(op: str, idx: np.ndarray, a, membermask, signed: bool) -> np.ndarray:
    """``redux.sync.op.type d, a, membermask`` (PTX ISA 9.7.13.7): ``op`` over the ``a`` (32-bit) of
    the warp's taking-part lanes, in every executing thread.  ``add`` wraps modulo 2^32; ``min`` and
    ``max`` compare as ``.s32`` when ``signed``, else ``.u32``.  With no lane taking part the result
    is the operation's identity (0 for add/or/xor, ~0 for and, the type's extreme for min/max)."""
    if op not in REDUX_OPS:
        raise ValueError(f"redux operation {op!r} is not one of {REDUX_OPS}")
    n = idx.size
    a = np.broadcast_to(np.asarray(a).astype(_U32), (n,))
    starts, run = warp_runs(idx)
    member = _members(idx, membermask)
    if op == "add":
        r = np.add.reduceat(np.where(member, a, _U32(0)).astype(_U64), starts) & _U64(0xFFFFFFFF)
        return r.astype(_U32)[run]
    if op in ("and", "or", "xor"):
        ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        ident = _U32(0xFFFFFFFF) if op == "and" else _U32(0)
        return ufunc.reduceat(np.where(member, a, ident), starts)[run]
    v = a.view(np.int32) if signed else a
    info = np.iinfo(v.dtype)
    ident = info.max if op == "min" else info.min
    ufunc = np.minimum if op == "min" else np.maximum
    return ufunc.reduceat(np.where(member, v, v.dtype.type(ident)), starts).astype(v.dtype).view(_U32)[run]


def partial_warp(idx: np.ndarray, what: str) -> tuple[str, int] | None:
    """The rule of ``.sync.aligned`` warp-collective instructions (mma, ldmatrix, wmma): every warp among
    the executing thread slots ``idx`` (sorted, 32 per warp) must be there with all 32 lanes.  None when
    so; else the fault reason and the index in ``idx`` of the first thread of the first partial warp."""
    n = idx.size
    if n % 32 == 0:
        lanes = idx.reshape(-1, 32)
        if bool((lanes[:, 0] % 32 == 0).all() and (lanes[:, 31] - lanes[:, 0] == 31).all()):
            return None
    warp = idx >> 5
    first = int(np.flatnonzero(np.bincount(warp - warp[0])[warp - warp[0]] < 32)[0])
    present = (idx[warp == warp[first]] & 31).tolist()
    return (f"{what} must be executed by all 32 lanes of the warp together, but only lane(s) "
            f"{_lane_ranges(present)} of this thread's warp reached it (the others diverged, exited or do "
            "not exist)", first)


def _lane_ranges(lanes: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out, start = [], None
    for i, v in enumerate(lanes):
        if start is None:
            start = v
        if i + 1 == len(lanes) or lanes[i + 1] != v + 1:
            out.append(f"{start}-{v}" if v != start else f"{v}")
            start = None
    return ",".join(out)


def partial_warpgroup(idx: np.ndarray, padded: int, threads: int, what: str) -> tuple[str, int, int] | None:
    """The rule of warpgroup instructions (wgmma, PTX ISA 9.7.15): the executing thread slots ``idx``
    (sorted; ``padded`` slots per CTA, ``threads`` of them real) must form whole warpgroups, all 128 threads
    of 4 consecutive warps (warpgroup ``t // 128`` of CTA thread ``t``).  None when so; else the fault
    reason, the index in ``idx`` of the first thread of the first partial warpgroup and its thread count."""
    local = idx % padded
    key = (idx // padded) * 8 + local // 128
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    counts = np.diff(np.r_[starts, idx.size])
    bad = counts != 128
    if not bad.any():
        return None
    g = int(np.argmax(bad))
    first = int(local[starts[g]]) // 128 * 128
    have = min(128, threads - first)
    why = (f"the block's warpgroup of threads {first}..{first + 127} has only {have} threads" if have < 128
           else f"only {int(counts[g])} of the 128 threads of its warpgroup (threads {first}..{first + 127}) "
           "execute it together")
    return (f"{what} must be executed by all 128 threads of a warpgroup together (.sync.aligned): {why}",
            int(starts[g]), int(counts[g]))
