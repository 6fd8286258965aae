"""One wave of CTAs on the launch engine: thread slots, the scheduler's groups, CTA barriers.

Both interpreters run a launch as waves of whole CTAs.  CTA ``c`` of a wave owns slots
``[c*P, (c+1)*P)``, ``P`` the block size rounded up to whole warps; thread ``t`` of the CTA (linear
``tid.x + ntid.x*(tid.y + ntid.y*tid.z)``) is slot ``c*P + t``, so warp = ``slot >> 5`` and lane =
``slot & 31``.  Slots past the block size (missing lanes of a partial last warp) never exist: they
start exited.  Ascending slot order is ascending global thread order, the order in which atomics
are serialised and the last of several stores wins.

* :class:`Scheduler` keeps the runnable threads in groups by position (a pc, or an IR instruction
  position); the lowest position runs next, except that no CTA starves: when a group has waited
  ``STARVE_LIMIT`` pops, the lowest group of its CTAs runs next (within a CTA the lowest position still runs
  first; only CTAs take turns), so that threads spinning on a flag that another CTA of the wave will set
  (CUTLASS's serial split-K semaphore) cannot starve that CTA, as a GPU's scheduler does not.  Deterministic.
* :class:`FairScheduler` (a cooperative launch) keeps the groups per CTA and lets the CTAs take turns:
  within a CTA the lowest position runs next, as above; a CTA keeps its turn until it branches backwards
  (a loop, or a spin-wait), and then every other CTA with runnable threads has its turn first.  A CTA
  spinning at a grid-wide barrier thus cannot starve the CTAs that have yet to arrive.
* :class:`Wave` keeps each thread's status (running, exited, waiting at a CTA barrier, waiting at a
  convergence barrier) and the CTA barriers of PTX ``bar``/``barrier`` (PTX ISA 9.0 section 9.7.13.1):
  ``bar.sync a[, b]`` waits until every non-exited thread of the CTA (or ``b`` threads) has arrived at
  barrier ``a``; ``bar.arrive a, b`` counts toward it and goes on; ``bar.red`` waits like ``bar.sync`` and
  gives every waiting thread the popc/and/or of the predicates of all that took part.  Exited threads
  never block anyone.  The interpreters decide what runs; this module only keeps the books.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from xcc.backend.isa import NUM_CTA_BARRIERS

__all__ = ["RUN", "EXITED", "WAIT_BAR", "WAIT_BSYNC", "WAIT_CLUSTER", "WAIT_MBAR", "ExecFault", "FairScheduler", "Scheduler", "Wave", "runs",
           "bar_reduce"]

RUN, EXITED, WAIT_BAR, WAIT_BSYNC = 0, 1, 2, 3
STARVE_LIMIT = 1024  # pops a runnable group may wait behind lower positions before it runs (Scheduler)
WAIT_MBAR = 4  # suspended by mbarrier.try_wait until a phase of its object completes (xcc.sim.mbarrier)
WAIT_CLUSTER = 5  # at barrier.cluster.wait until every non-exited thread of the cluster arrived


class ExecFault(Exception):
    """A kernel error found while executing one step; the launch engine locates it.

    ``thread`` indexes the executing threads of the failing step (None: the first); ``nthreads`` is
    how many faulted."""

    def __init__(self, reason: str, thread: int | None = None, nthreads: int = 1):
        super().__init__(reason)
        self.reason, self.thread, self.nthreads = reason, thread, nthreads


def runs(keys: np.ndarray):
    """(distinct values, run lengths) of a sorted array."""
    head = np.empty(keys.size, bool)
    head[0] = True
    np.not_equal(keys[1:], keys[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    return keys[starts], np.diff(np.append(starts, keys.size))


def merge(arrs: list[np.ndarray]) -> np.ndarray:
    """Union of disjoint sorted slot arrays, sorted."""
    if len(arrs) == 1:
        return arrs[0]
    arrs.sort(key=lambda a: int(a[0]))
    for a, b in zip(arrs, arrs[1:]):
        if a[-1] >= b[0]:
            return np.sort(np.concatenate(arrs))
    return np.concatenate(arrs)


def bar_reduce(mode: str, total, count):
    """``bar.red.{popc,and,or}``: the number of true predicates, whether all, or whether any were true,
    from the true predicates ``total`` among the ``count`` threads that took part."""
    mode = mode.lower()
    return total if mode == "popc" else (total == count) if mode == "and" else (total > 0)


class Scheduler:
    """Runnable threads grouped by position, lowest position first; a group that waited ``STARVE_LIMIT``
    pops gives its CTAs a turn (module docstring).  A group's age is the pop count when it became runnable; the
    groups a popped group makes by going forward keep its age, so that a starving group, once chosen, goes
    on until it branches backwards or waits; a backward branch makes a new (young) group."""

    __slots__ = ("groups", "heap", "born", "ages", "pops", "cur_pos", "cur_born", "cta_slots")

    def __init__(self, cta_slots: int = 1 << 62):
        self.cta_slots = cta_slots  # thread slots per CTA (Wave's P)
        self.groups: dict[int, list[np.ndarray]] = {}
        self.heap: list[int] = []
        self.born: dict[int, int] = {}  # position -> its group's age
        self.ages: list[tuple[int, int]] = []  # (age, position), oldest first; entries of popped groups stale
        self.pops = 0
        self.cur_pos, self.cur_born = -1, 0  # the group popped last

    def push(self, pos: int, arr: np.ndarray) -> None:
        """Threads ``arr`` (sorted slots) become runnable at ``pos``."""
        if arr.size:
            lst = self.groups.get(pos)
            if lst is None:
                self.groups[pos] = [arr]
                b = self.cur_born if pos > self.cur_pos else self.pops
                self.born[pos] = b
                heapq.heappush(self.ages, (b, pos))
                heapq.heappush(self.heap, pos)
            else:
                lst.append(arr)

    def pop(self) -> tuple[int, np.ndarray]:
        """The lowest position and every thread runnable there, or the oldest group if it starves."""
        self.pops += 1
        ages, born, heap = self.ages, self.born, self.heap
        while ages and born.get(ages[0][1]) != ages[0][0]:
            heapq.heappop(ages)
        if len(heap) > 1 and self.pops - ages[0][0] >= STARVE_LIMIT and ages[0][1] != heap[0]:
            b, pos = ages[0]
            pos = self._lagging(pos)
            heap.remove(pos)
            heapq.heapify(heap)
        else:
            pos = heapq.heappop(heap)
            b = born[pos]
        del born[pos]
        self.cur_pos, self.cur_born = pos, b
        return pos, merge(self.groups.pop(pos))

    def _lagging(self, pos: int) -> int:
        """The group to run for the starving group at ``pos``: the lowest-positioned group holding threads of
        its CTAs (itself, unless some of their threads wait at lower positions), so that within a CTA the lowest
        position still runs first, as always (warps reconverge, warp-specialised pipelines keep their order):
        only the CTAs take turns."""
        ctas = np.unique(merge(list(self.groups[pos])) // self.cta_slots)
        for q in sorted(self.groups):
            if q >= pos:
                break
            if np.isin(np.concatenate(self.groups[q]) // self.cta_slots, ctas).any():
                return q
        return pos

    def absorb(self, pos: int, idx: np.ndarray) -> np.ndarray:
        """``idx`` with the threads waiting at ``pos`` joined (reconvergence), if any wait there."""
        if self.heap and self.heap[0] == pos:
            heapq.heappop(self.heap)
            del self.born[pos]
            return merge([idx, *self.groups.pop(pos)])
        return idx

    def pending(self) -> list[tuple[int, np.ndarray]]:
        """(position, threads) of every group still waiting to run, by position."""
        return [(p, merge(list(self.groups[p]))) for p in sorted(self.groups)]


class _Head:
    """``FairScheduler.heap`` as the interpreters read a heap: true while any group waits, and ``[0]`` the
    position the CTA that holds the turn runs next (-1: none)."""

    __slots__ = ("s",)

    def __init__(self, s: FairScheduler):
        self.s = s

    def __bool__(self) -> bool:
        return bool(self.s.turns)

    def __len__(self) -> int:
        return len(self.s.turns)

    def __getitem__(self, i: int) -> int:
        h = self.s.ctas.get(self.s.current)
        return h[0] if h else -1


class FairScheduler(Scheduler):
    """A cooperative launch's scheduler: groups per (CTA, position); the CTAs take turns (module docstring)."""

    __slots__ = ("P", "ctas", "turns", "rounds", "last", "current")

    def __init__(self, P: int):
        super().__init__()
        self.P = P
        self.ctas: dict[int, list[int]] = {}  # CTA slot -> heap of its groups' positions
        self.turns: list[tuple[int, int]] = []  # (round, CTA) of each CTA with runnable threads
        self.rounds: dict[int, int] = {}  # CTA -> its round (bumped when it branches backwards)
        self.last: dict[int, int] = {}  # CTA -> the position it ran last
        self.current = -1  # the CTA that ran last
        self.heap = _Head(self)

    def push(self, pos: int, arr: np.ndarray) -> None:
        if not arr.size:
            return
        ctas, cnt = runs(arr // self.P)
        start = 0
        for c, k in zip(ctas.tolist(), cnt.tolist()):
            sub, start = arr[start:start + k], start + k
            if pos <= self.last.get(c, -1):  # a backward branch (or a restart): the others' turn
                self.rounds[c] = self.rounds.get(c, 0) + 1
                self.last[c] = -1
            h = self.ctas.setdefault(c, [])
            if not h:
                heapq.heappush(self.turns, (self.rounds.get(c, 0), c))
            lst = self.groups.get((c, pos))
            if lst is None:
                self.groups[(c, pos)] = [sub]
                heapq.heappush(h, pos)
            else:
                lst.append(sub)

    def pop(self) -> tuple[int, np.ndarray]:
        while True:
            r, c = self.turns[0]
            h = self.ctas[c]
            if r != self.rounds.get(c, 0):  # its round moved on since it queued
                heapq.heapreplace(self.turns, (self.rounds.get(c, 0), c))
                continue
            pos = heapq.heappop(h)
            if not h:
                heapq.heappop(self.turns)
            self.current, self.last[c] = c, pos
            return pos, merge(self.groups.pop((c, pos)))

    def absorb(self, pos: int, idx: np.ndarray) -> np.ndarray:
        c = int(idx[0]) // self.P
        h = self.ctas.get(c)
        if h and h[0] == pos:
            heapq.heappop(h)
            if not h:
                self.turns = [t for t in self.turns if t[1] != c]
                heapq.heapify(self.turns)
            return merge([idx, *self.groups.pop((c, pos))])
        return idx

    def pending(self) -> list[tuple[int, np.ndarray]]:
        by_pos: dict[int, list[np.ndarray]] = {}
        for (_, p), arrs in self.groups.items():
            by_pos.setdefault(p, []).extend(arrs)
        return [(p, np.sort(np.concatenate(by_pos[p]))) for p in sorted(by_pos)]


class Wave:
    """The books of one wave: ``nctas`` CTAs in ``nslots`` CTA slots of ``P`` thread slots each; ``fair``
    schedules the CTAs in turns (a cooperative launch: :class:`FairScheduler`)."""

    def __init__(self, P: int, tpb: int, nslots: int, nctas: int, start: int, fair: bool = False):
        T = nslots * P
        exists = np.tile(np.arange(P) < tpb, nslots)
        exists[nctas * P:] = False
        self.P, self.sched = P, FairScheduler(P) if fair else Scheduler(P)
        self.state = np.where(exists, RUN, EXITED).astype(np.int8)
        self.wait_k = np.zeros(T, np.int64)  # barrier number a waiting thread waits at
        self.wait_pc = np.zeros(T, np.int64)  # position of a waiting thread
        self.alive_cta = np.where(np.arange(nslots) < nctas, tpb, 0)
        shape = (nslots, NUM_CTA_BARRIERS)
        self.bar_count = np.zeros(shape, np.int64)
        self.bar_need = np.zeros(shape, np.int64)  # thread count of a named barrier (0: the whole CTA)
        self.red_sum = np.zeros(shape, np.int64)  # bar.red: true predicates, and threads, so far
        self.red_n = np.zeros(shape, np.int64)
        self.live = nctas * tpb  # threads not exited
        self.at_bar = 0  # threads waiting at CTA barriers
        self.reduced: Callable[[int, np.ndarray, np.ndarray, np.ndarray], None] | None = None
        self.cluster = 1  # CTAs per cluster (the wave holds whole clusters; set by the launch)
        self.cl_count: dict[int, int] = {}  # barrier.cluster: arrivals in the current phase, by cluster
        self.cl_phase: dict[int, int] = {}  # and the phases completed
        self.cl_arrived = np.full(T, -1, np.int64)  # the phase each thread arrived in last
        self.sched.push(start, np.flatnonzero(exists))

    def resume(self, r: np.ndarray) -> None:
        """Waiting threads ``r`` run again, each at the position after the one it waited at."""
        self.state[r] = RUN
        p = self.wait_pc[r]
        if p[0] == p[-1] and bool((p == p[0]).all()):
            self.sched.push(int(p[0]) + 1, r)
        else:
            for q in np.unique(p):
                self.sched.push(int(q) + 1, r[p == q])

    def wait(self, eidx: np.ndarray, pos: int, k, status: int) -> None:
        """Threads ``eidx`` wait at barrier ``k`` (CTA or convergence, by ``status``) at ``pos``."""
        self.state[eidx] = status
        self.wait_pc[eidx] = pos
        self.wait_k[eidx] = k

    def exit(self, eidx: np.ndarray) -> None:
        """Threads ``eidx`` exit; the CTA barriers they no longer block are released."""
        self.state[eidx] = EXITED
        self.live -= eidx.size
        ctas, cnt = runs(eidx // self.P)
        self.alive_cta[ctas] -= cnt
        if self.at_bar:
            self.check_bar(ctas)
        if self.cl_count:
            self.check_cluster(np.unique(ctas // self.cluster))

    # -- barrier.cluster (PTX ISA 9.7.13.x): all non-exited threads of all CTAs of the cluster ----------
    def cluster_arrive(self, eidx: np.ndarray) -> None:
        """Threads ``eidx`` perform ``barrier.cluster.arrive``; a phase every live thread arrived in completes."""
        cl = eidx // self.P // self.cluster
        ucl, cnt = runs(cl)
        for c, k in zip(ucl.tolist(), cnt.tolist()):
            self.cl_count[c] = self.cl_count.get(c, 0) + k
        self.cl_arrived[eidx] = [self.cl_phase.get(c, 0) for c in cl.tolist()]
        self.check_cluster(ucl)

    def cluster_wait(self, eidx: np.ndarray, pos: int) -> np.ndarray:
        """``barrier.cluster.wait``: threads ``eidx`` whose arrival's phase completed go on (returned); the
        others wait at ``pos`` until it completes."""
        cl = eidx // self.P // self.cluster
        arrived = self.cl_arrived[eidx]
        if bool((arrived < 0).any()):
            raise ExecFault("barrier.cluster.wait without a barrier.cluster.arrive before it (PTX: each wait "
                            "follows an arrive of the same thread)", int(np.argmax(arrived < 0)))
        phase = np.array([self.cl_phase.get(c, 0) for c in cl.tolist()], np.int64)
        done = arrived < phase
        self.cl_arrived[eidx[done]] = -1
        wait = eidx[~done]
        if wait.size:
            self.wait(wait, pos, wait // self.P // self.cluster, WAIT_CLUSTER)
            self.at_bar += wait.size
        return eidx[done]

    def check_cluster(self, clusters) -> None:
        """Complete the barrier.cluster phase of ``clusters`` whose live threads all arrived."""
        cs, P = self.cluster, self.P
        for c in np.asarray(clusters).tolist():
            n = self.cl_count.get(c, 0)
            if not n or n < int(self.alive_cta[c * cs:(c + 1) * cs].sum()):
                continue
            self.cl_count[c] = 0
            self.cl_phase[c] = self.cl_phase.get(c, 0) + 1
            tt = np.arange(c * cs * P, (c + 1) * cs * P)
            r = tt[self.state[tt] == WAIT_CLUSTER]
            self.cl_arrived[r] = -1
            if r.size:
                self.at_bar -= r.size
                self.resume(r)

    def barrier(self, eidx: np.ndarray, pos: int, bid, count=None, pred=None, wait: bool = True) -> None:
        """Threads ``eidx`` arrive at CTA barrier ``bid`` (per thread) at ``pos``: with ``count`` threads
        expected (None: the CTA's), ``pred`` their bar.red predicates; ``wait`` False for bar.arrive."""
        m = eidx.size
        bid = np.broadcast_to(np.asarray(bid).astype(np.int64), (m,))
        if bool((bid >= NUM_CTA_BARRIERS).any()):
            t = int(np.argmax(bid >= NUM_CTA_BARRIERS))
            raise ExecFault(f"barrier number {int(bid[t])} out of range (0..{NUM_CTA_BARRIERS - 1})", t)
        ctas = eidx // self.P
        if count is not None:
            self.bar_need[ctas, bid] = np.asarray(count).astype(np.int64)
        if pred is not None:
            np.add.at(self.red_sum, (ctas, bid), np.asarray(pred, bool).astype(np.int64))
            np.add.at(self.red_n, (ctas, bid), 1)
        if bool((bid == bid[0]).all()):
            uc, cnt = runs(ctas)
            self.bar_count[uc, int(bid[0])] += cnt
        else:
            np.add.at(self.bar_count, (ctas, bid), 1)
            uc = runs(ctas)[0]
        if wait:
            self.wait(eidx, pos, bid, WAIT_BAR)
            self.at_bar += m
        self.check_bar(uc)

    def check_bar(self, ctas: np.ndarray) -> None:
        """Release the barriers of ``ctas`` that every live thread (or their thread count) reached;
        the threads waiting at a bar.red get the reduction over all that arrived (``reduced``)."""
        P, state, wait_k = self.P, self.state, self.wait_k
        cnt, need = self.bar_count[ctas], self.bar_need[ctas]
        full = (cnt > 0) & (cnt >= np.where(need > 0, need, self.alive_cta[ctas][:, None]))
        for k in np.flatnonzero(full.any(0)):
            rc = ctas[full[:, k]]
            tt = (rc[:, None] * P + np.arange(P)).ravel()
            r = tt[(state[tt] == WAIT_BAR) & (wait_k[tt] == k)]
            if self.reduced is not None and self.red_n[rc, k].any():
                for q in np.unique(self.wait_pc[r]):
                    rq = r[self.wait_pc[r] == q]
                    self.reduced(int(q), rq, self.red_sum[rq // P, k], self.red_n[rq // P, k])
            self.bar_count[rc, k] = self.bar_need[rc, k] = self.red_sum[rc, k] = self.red_n[rc, k] = 0
            self.at_bar -= r.size
            if r.size:
                self.resume(r)

    def waiting(self) -> np.ndarray:
        """The slots of the threads waiting at any barrier."""
        return np.flatnonzero((self.state == WAIT_BAR) | (self.state == WAIT_BSYNC) | (self.state == WAIT_MBAR)
                              | (self.state == WAIT_CLUSTER))
