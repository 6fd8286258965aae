"""Asynchronous copies ``cp.async`` and their groups (PTX ISA 9.0 section 9.7.9.25, "Data Movement and
Conversion Instructions: cp.async", with ``cp.async.commit_group`` 9.7.9.25.3.1 and
``cp.async.wait_group`` / ``cp.async.wait_all`` 9.7.9.25.3.2).

``cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}`` starts a copy of
``cp-size`` (4, 8 or 16) bytes from global ``src`` to shared ``dst``: the first ``src-size`` bytes come from
``src``, the rest of the ``cp-size`` bytes are zeros (``ignore-src`` true: ``src-size`` = 0; ``src-size`` >
``cp-size`` is undefined behaviour).  PTX guarantees only that a copy has been performed, and its writes are
visible to the executing thread, once a ``cp.async.wait_group N`` (or ``wait_all``) has waited for the
copy's group: ``commit_group`` closes the thread's open group (all its copies not yet committed), and
``wait_group N`` waits until at most the ``N`` most recent committed groups of the thread are pending;
``wait_all`` is ``commit_group; wait_group 0``.  No other synchronisation (``bar.sync`` included) completes
a copy.

**xcc's model** (one of the executions PTX allows, chosen so that a kernel that reads shared memory before
waiting sees stale data and so fails its tests):

* a copy *reads* its source when ``cp.async`` executes (out-of-bounds or misaligned source and destination
  addresses are kernel faults located there; no source byte is read for ``src-size`` = 0);
* it *writes* its destination when the issuing thread executes the ``wait_group``/``wait_all`` that covers
  its group: each thread's copies are performed there, in the order the thread issued them.  Copies that no
  wait covers are never performed (their CTA's shared memory ends with the CTA).

:class:`CopyGroups` keeps the pending copies and group counters of every thread of one wave (threads are
``slots``, as in both interpreters); the memory accesses themselves are the caller's (the IR interpreter's
addresser and :mod:`xcc.sim.memory`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xcc.semantics.faults import MemoryFault

CP_SIZES = (4, 8, 16)
_WORD = {4: np.uint32, 8: np.uint64, 16: np.uint64}


def source_accesses(src_size: np.ndarray, cp_size: int):
    """How the sources of copies with ``src_size`` bytes each (clamped to ``cp_size``) are read: yields
    (copy indices, access width, byte offset), a whole copy as one ``cp_size``-wide access (which must be
    aligned), a partial one byte by byte (its source must still be aligned to ``cp_size``); copies with
    ``src_size`` = 0 read nothing (all zeros)."""
    src_size = np.minimum(np.asarray(src_size, np.int64), cp_size)
    whole = np.flatnonzero(src_size == cp_size)
    if whole.size:
        yield whole, cp_size, 0
    for offset in range(cp_size - 1):
        rows = np.flatnonzero((src_size > offset) & (src_size < cp_size))
        if not rows.size:
            break
        yield rows, 1, offset


def words(data: np.ndarray, cp_size: int) -> np.ndarray:
    """``(n, cp_size)`` bytes as the values a ``cp_size``-wide store takes (``(n, 2)`` uint64 for 16)."""
    w = np.ascontiguousarray(data).view(_WORD[cp_size])
    return w.reshape(-1, 2) if cp_size == 16 else w.reshape(-1)


@dataclass
class _Copies:
    """The copies one ``cp.async`` issued for some threads (one row per thread)."""

    slots: np.ndarray  # int64 thread slots
    group: np.ndarray  # the issuing thread's open group number at issue
    dst: np.ndarray  # destination, already checked (the caller's representation)
    data: np.ndarray  # (n, cp_size) uint8, read at issue
    cp_size: int
    store: Callable  # store(dst, words, cp_size)
    done: np.ndarray  # bool


class CopyGroups:
    """The cp.async state of the ``nthreads`` thread slots of one wave: each thread's committed-group count
    and its pending copies, in issue order.  Group ``g`` of a thread is the ``g``-th it commits; a copy
    belongs to the thread's open group, numbered by the groups committed before it."""

    def __init__(self, nthreads: int):
        self.committed = np.zeros(nthreads, np.int64)
        self.pending: list[_Copies] = []

    def issue(self, slots: np.ndarray, dst: np.ndarray, data: np.ndarray, cp_size: int, store: Callable) -> None:
        """Threads ``slots`` start copies of ``data`` (rows) to ``dst``."""
        slots = np.asarray(slots, np.int64).copy()
        self.pending.append(_Copies(slots, self.committed[slots].copy(), np.asarray(dst).copy(), data, cp_size,
                                    store, np.zeros(slots.size, bool)))

    def commit(self, slots: np.ndarray) -> None:
        """``cp.async.commit_group``: close the open group of each thread."""
        self.committed[slots] += 1

    def wait(self, slots: np.ndarray, keep: int) -> int:
        """``cp.async.wait_group keep``: perform, in issue order, the pending copies of threads ``slots``
        in all but their ``keep`` most recent committed groups; returns how many copies were performed."""
        limit = np.full(self.committed.size, -1, np.int64)
        limit[slots] = self.committed[slots] - keep
        performed = 0
        for c in self.pending:
            due = ~c.done & (c.group < limit[c.slots])
            if due.any():
                rows = np.flatnonzero(due)
                c.store(c.dst[rows], words(c.data[rows], c.cp_size), c.cp_size)
                c.done[rows] = True
                performed += rows.size
        self.pending = [c for c in self.pending if not c.done.all()]
        return performed

    def perform_all(self, slots: np.ndarray) -> int:
        """Perform, in issue order, every pending copy of threads ``slots``, their open group's included, and
        leave the group counters as they are (``cp.async.mbarrier.arrive``: its arrive-on waits for all prior
        copies of the thread, xcc performs them when it executes); returns how many were performed."""
        return self.wait(slots, -1)  # limit = committed + 1: every group up to the open one


def read_zero_filled(mem, src: np.ndarray, cp_size: int, src_size: np.ndarray) -> np.ndarray:
    """(n, cp_size) bytes: ``src_size`` bytes of each copy read from ``mem`` (a GlobalMemory) at ``src``, then
    zeros (:func:`source_accesses`); a misaligned or out-of-bounds source is a MemoryFault naming the
    copy's thread.  Both interpreters read cp.async sources through it."""
    out = np.zeros((src.size, cp_size), np.uint8)
    for rows, width, offset in source_accesses(src_size, cp_size):
        a = src[rows]
        try:
            if width == cp_size:
                out[rows] = np.ascontiguousarray(mem.load(a, cp_size)).view(np.uint8).reshape(rows.size, cp_size)
                continue
            bad = (a % np.uint64(cp_size)) != 0
            if bad.any():
                raise MemoryFault("misaligned", a[bad], int(np.argmax(bad)), width=cp_size,
                                  detail=f"the source of a {cp_size}-byte cp.async must be aligned to {cp_size} bytes")
            out[rows, offset] = mem.load(a + np.uint64(offset), 1)
        except MemoryFault as f:
            if f.thread is not None:
                f.thread = int(rows[f.thread])
            raise
    return out


def oversized_source(src_size: np.ndarray, cp_size: int) -> tuple[str, int, int] | None:
    """A src-size larger than the cp-size is undefined behaviour (PTX ISA 9.7.9.25): (the fault reason, the
    first offending thread, how many) or None."""
    over = src_size > cp_size
    if not over.any():
        return None
    t = int(np.argmax(over))
    return (f"cp.async src-size {int(src_size[t])} is larger than its cp-size {cp_size} (undefined behaviour)",
            t, int(over.sum()))
