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
  the factor that fills the machine, but at most the number of times the median warp goes round its code
  (its entries over its distinct pcs): a kernel without a loop has no work to spread, and is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from xcc.sim.perf.facts import mem_space

__all__ = ["Idealise", "idealise_streams", "spill_pcs", "converged_keep"]


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
    """How many times a warp's stream goes round its code (entries over distinct pcs, the median warp): the
    pieces it can be cut into, one trip of a grid-stride loop each at the least."""
    if not W.size:
        return 1
    pairs = np.unique(W * (int(PC.max()) + 1) + PC)
    distinct = np.bincount(pairs // (int(PC.max()) + 1))
    entries = np.bincount(W)
    live = distinct > 0
    return max(1, int(np.median(entries[live] // distinct[live])))


def _split(W: np.ndarray, wpc: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``fill_machine``: new warp ids cutting each warp's entries into ``k`` pieces; the order grouping them."""
    head = np.flatnonzero(np.concatenate([[True], W[1:] != W[:-1]])) if W.size else np.empty(0, np.int64)
    lens = np.diff(np.append(head, W.size))
    pos = np.arange(W.size) - np.repeat(head, lens)
    piece = pos * k // np.repeat(lens, lens)
    W2 = ((W // wpc) * k + piece) * wpc + W % wpc
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
    if ideal.fill_machine and 0 < nctas < slots:
        k = min(-(-slots // nctas), _trips(W, PC))
    if k > 1:
        W, order = _split(W, wpc, k)
        W, PC, V, M, SO = W[order], PC[order], V[order], M[order], SO[order]
        nctas *= k
    if ideal.pipes:
        for st in static:
            if st.pipe in ideal.pipes:
                st.interval = min(st.interval, 1.0)
    return (W, PC, V, M, SO), nctas, k
