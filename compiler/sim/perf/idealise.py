"""What-if switches of the cycle model: replay a launch with one cause of lost cycles idealised away.

The advisor (:mod:`xcc.sim.perf.advisor`) measures what fixing a bottleneck buys by replaying the recorded
trace with that bottleneck removed and comparing the cycles (the what-if analysis of GPA, Zhou et al.,
"GPA: A GPU Performance Advisor Based on Instruction Sampling", CGO 2021, done here by re-running the model
rather than estimating from samples).  :class:`Idealise` names the switches; all default to off, and a
replay with every switch off is exactly the ordinary one.  Each switch rewrites the replayed entries
(:meth:`xcc.sim.perf.trace.TraceRecorder.streams`) or the residency before the replay starts:

* ``bank_conflicts`` - every shared-memory request is one wavefront (conflict-free shared memory).
* ``uncoalesced`` - every global request touches the fewest sectors its active threads' bytes need,
  ``ceil(bytes / sector_bytes)``; an instruction keeps its DRAM traffic (first-touched sectors), spread
  evenly over its requests, and a request that lost sectors skips the L1 lookup (its recorded sectors are
  no longer the ones it would touch).
* ``occupancy`` - the CTAs resident per SM are limited by the SM's warp and CTA slots only, not by
  registers or shared memory (occupancy at its hardware limit).
* ``spills`` - the register spill stores and reloads (local accesses to the kernel's spill slots,
  ``KernelImage.spill_bytes``) are not issued.
* ``divergence`` - each warp issues what it would issue fully converged: the path of its busiest thread
  (the lane present in the most of the warp's recorded entries; the lowest such lane).  Its entries whose
  lane mask (:meth:`~xcc.sim.perf.trace.TraceRecorder.extras`) leaves that lane out - the other groups of a
  divergent branch, the extra trips of a divergent loop - are dropped.  This is exact for the usual fix,
  making a branch uniform per warp, when the paths are equally long; with unequal paths it is the longest
  one, a lower bound on any warp that must run that thread.
* ``pipes`` - the named pipes accept one instruction per cycle per sub-partition (a slow pipe's work at
  full rate).
* ``fill_machine`` - the launch's work spread over enough CTAs to fill every SM to its occupancy: each
  warp's recorded stream is cut into ``k`` consecutive, equally long pieces and piece ``j`` of the warps of
  CTA ``c`` forms CTA ``c k + j`` - what a grid-stride loop does when the grid grows ``k``-fold.  ``k`` is
  the factor that fills the machine, but at most the number of times the median warp goes round its loop
  (the issues of its most issued pc): a kernel without a loop has no work to spread, and is left as it is.
* ``balance`` - a grid of more than one wave whose last wave is partly empty (a tail) has its work spread
  over whole waves: each warp's stream is cut into ``k`` pieces (``k`` as for ``fill_machine``, the median
  warp's trips) and the ``C k`` pieces, in order, are dealt to ``floor(waves)`` waves' worth of CTAs
  (``floor(C / slots) slots``), each taking a run of consecutive pieces - what a grid-stride loop does when
  the grid is cut to whole waves.  A kernel without a loop is left as it is.  With fewer CTAs than one wave
  it is ``fill_machine``.
* ``memory_latency`` - global accesses take the L1 hit latency (``[latency] l1_hit``) instead of the L2's or
  DRAM's; the L2 and DRAM queues (bandwidth) still delay them (``long_scoreboard`` stalls' what-if).
* ``lsu_queues`` - the SM's shared-memory unit (MIO) and L1 (LG) are never busy: their queues are unbounded
  (``mio_throttle`` / ``lg_throttle`` stalls' what-if).
* ``barriers`` - CTA barriers do not make warps wait (``barrier`` stalls' what-if; the execution is the
  recorded one, so this is the time the waits cost, not a correct program without them).
* ``throughput=("fma", "l2", ...)`` - the named units run at twice their rate: pipes (their issue interval
  halved), ``l2`` and ``dram`` (their bandwidth doubled); the speed-of-light rule's what-if.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from xcc.sim.perf.facts import mem_space

__all__ = ["Idealise", "idealise_streams", "idealise_memory", "spill_pcs", "converged_keep"]


@dataclass(frozen=True)
class Idealise:
    """The causes a replay idealises away (see the module's docstring); all off by default."""

    bank_conflicts: bool = False
    uncoalesced: bool = False
    occupancy: bool = False
    spills: bool = False
    divergence: bool = False
    pipes: tuple[str, ...] = ()
    fill_machine: bool = False
    balance: bool = False
    memory_latency: bool = False
    lsu_queues: bool = False
    barriers: bool = False
    throughput: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))


def spill_pcs(insts, kernel) -> set[int]:
    """The pcs of the spill stores and reloads: local accesses whose offset lies in the spill slots, which
    follow the kernel's own ``.local`` variables and precede its call stack."""
    spill = int(getattr(kernel, "spill_bytes", 0) or 0)
    if not spill:
        return set()
    hi = int(kernel.local_bytes) - int(getattr(kernel, "stack_bytes", 0) or 0)
    lo = hi - spill
    return {pc for pc, i in enumerate(insts) if mem_space(i.mnemonic) == "l" and lo <= int(i.ops.get("b", -1)) < hi}


def converged_keep(W: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Entries of each warp that hold its busiest lane (the one present in most of its entries)."""
    nw = int(W.max()) + 1 if W.size else 0
    full = K == 0xFFFFFFFF
    counts = np.repeat(np.bincount(W[full], minlength=nw)[:, None], 32, axis=1)
    part = np.flatnonzero(~full)
    if part.size:
        bits = ((K[part, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool)
        cells = (W[part, None] * 32 + np.arange(32))[bits]
        counts += np.bincount(cells, minlength=nw * 32).reshape(nw, 32)
    leader = np.argmax(counts, axis=1).astype(np.uint64)
    return ((K >> leader[W]) & np.uint64(1)).astype(bool)


def _coalesce(PC, V, M, SO, G, glob: np.ndarray, sector_bytes: int):
    """``uncoalesced``: each global entry's sectors cut to the fewest its bytes need, DRAM sectors kept per pc."""
    sel = np.flatnonzero(glob[PC] & (G > 0))
    need = np.maximum(1, -(-G[sel] // sector_bytes))
    V, M, SO = V.copy(), M.copy(), SO.copy()
    cut = need < V[sel]
    V[sel] = np.minimum(V[sel], need)
    SO[sel[cut]] = -1
    for pc in np.unique(PC[sel]).tolist():
        e = sel[PC[sel] == pc]
        share = V[e] * (M[e].sum() / V[e].sum())  # this pc's first-touched sectors, spread by sectors
        cum = np.floor(np.cumsum(share) + 1e-9).astype(np.int64)
        M[e] = np.minimum(np.diff(np.concatenate([[0], cum])), V[e])
    return V, M, SO


def _trips(W: np.ndarray, PC: np.ndarray) -> int:
    """How many times a warp goes round its loop (the issues of its most issued pc; the median warp): the
    pieces its stream can be cut into, one trip of a grid-stride loop each at the least."""
    if not W.size:
        return 1
    span = int(PC.max()) + 1
    pairs, counts = np.unique(W.astype(np.int64) * span + PC, return_counts=True)
    warp = pairs // span
    starts = np.flatnonzero(np.concatenate([[True], warp[1:] != warp[:-1]]))
    return max(1, int(np.median(np.maximum.reduceat(counts, starts))))


def _split(W: np.ndarray, wpc: int, k: int, nctas: int = 0, groups: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``fill_machine``: new warp ids cutting each warp's entries into ``k`` pieces; the order grouping them.
    ``balance`` (``groups`` > 0): the ``nctas k`` pieces dealt in order to ``groups`` CTAs, a run of consecutive
    pieces each (within a new warp, pieces keep their order: stable sort)."""
    head = np.flatnonzero(np.concatenate([[True], W[1:] != W[:-1]])) if W.size else np.empty(0, np.int64)
    lens = np.diff(np.append(head, W.size))
    pos = np.arange(W.size) - np.repeat(head, lens)
    piece = (W // wpc) * k + pos * k // np.repeat(lens, lens)
    if groups:
        piece = piece * groups // (nctas * k)
    W2 = piece * wpc + W % wpc
    return W2, np.argsort(W2, kind="stable")


def idealise_streams(ideal: Idealise, rec, static, insts, kernel, streams, wpc: int, slots: int):
    """The replay's entries ``streams`` = (W, PC, V, M, SO) rewritten by ``ideal``; with the CTA count and the
    factor ``k`` by which ``fill_machine`` multiplied it (``slots``: CTAs the machine holds at once)."""
    W, PC, V, M, SO = streams
    nctas, k = rec.ctas, 1
    G, K = rec.extras()
    space = np.array([st.space or "" for st in static] + [""])
    if ideal.bank_conflicts:
        V = np.where(space[PC] == "s", 1, V)
    if ideal.uncoalesced:
        V, M, SO = _coalesce(PC, V, M, SO, G, space == "g", rec.sector_bytes)
    keep = np.ones(W.size, bool)
    if ideal.spills:
        drop = sorted(spill_pcs(insts, kernel))
        if drop:
            keep &= ~np.isin(PC, drop)
    if ideal.divergence:
        keep &= converged_keep(W, K)
    if not keep.all():
        W, PC, V, M, SO = W[keep], PC[keep], V[keep], M[keep], SO[keep]
    if (ideal.fill_machine or ideal.balance) and 0 < nctas < slots:
        k = min(-(-slots // nctas), _trips(W, PC))
    elif ideal.balance and nctas > slots and nctas % slots:
        k = _trips(W, PC)
        if k > 1:
            W, order = _split(W, wpc, k, nctas, nctas // slots * slots)
            W, PC, V, M, SO = W[order], PC[order], V[order], M[order], SO[order]
            return _static(ideal, static, (W, PC, V, M, SO)), nctas // slots * slots, 1
        k = 1
    if k > 1:
        W, order = _split(W, wpc, k)
        W, PC, V, M, SO = W[order], PC[order], V[order], M[order], SO[order]
        nctas *= k
    return _static(ideal, static, (W, PC, V, M, SO)), nctas, k


def _static(ideal: Idealise, static, streams):
    """The switches that change the instructions' facts (pipes, barriers), applied to ``static``; ``streams``."""
    for st in static:
        if st.pipe in ideal.pipes:
            st.interval = min(st.interval, 1.0)
        if st.pipe in ideal.throughput:
            st.interval /= 2
        if ideal.barriers:
            st.bar = False
    return streams


class NeverBusy(list):
    """A unit's per-SM next-free times that never advance (``lsu_queues``): a write is dropped."""

    def __setitem__(self, i, v) -> None:
        pass


def idealise_memory(ideal: Idealise, mem) -> None:
    """The switches that change the memory system ``mem`` (:class:`xcc.sim.perf.memsys.MemorySystem`)."""
    if ideal.memory_latency:
        mem.l2 = mem.dram = mem.l1
    if ideal.lsu_queues:
        mem.mio, mem.lg = NeverBusy(mem.mio), NeverBusy(mem.lg)
    if "l2" in ideal.throughput:
        mem.l2_rate *= 2
    if "dram" in ideal.throughput:
        mem.dram_rate *= 2
