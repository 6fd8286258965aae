"""Explicit reconvergence: BSSY/BSYNC around every divergent branch (as NVIDIA GPUs since Volta).

A branch instruction selection marked ``uniform`` (its predicate is the same in every thread of the warp,
:mod:`xcc.passes.divergence`) cannot split a warp and gets no barrier, as ptxas leaves uniform branches alone.

For each conditional branch in block B, the threads of a warp reconverge at the
immediate post-dominator J of B: ``BSSY Bk, J`` before the branch records the
warp's active threads in convergence barrier k, ``BSYNC Bk`` at the head of J
waits for them.  Branches that share J share a barrier.  A region is every block a
thread can run between its BSSY and its BSYNC (back edges included: the region of a
loop's exit branch is the whole loop); regions that can be live at once get different
barriers (greedy colouring of their interference graph), others reuse a number.
Post-dominators come from :func:`xcc.ir.cfg.post_dominator_sets` (the iterative data-flow algorithm
of Cooper, Harvey and Kennedy 2001 on the reverse CFG, with a virtual exit).
"""

from __future__ import annotations

from xcc.backend.isa import NUM_CONV_BARRIERS
from xcc.backend.isel import MBlock
from xcc.backend.minst import mi
from xcc.diagnostics import UnsupportedError
from xcc.ir.cfg import EXIT, immediate, post_dominator_sets


def region_interior(blocks: dict[str, MBlock], branches: list[MBlock], join: str) -> set[str]:
    """Blocks a thread can execute between a BSSY in ``branches`` and the BSYNC at the head of ``join``:
    those reachable from the branches' successors without passing ``join`` (back edges included, so a
    region whose BSSY sits at a loop's latch covers the whole loop)."""
    seen: set[str] = set()
    work = [s for b in branches for s in b.succs if s != join]
    while work:
        n = work.pop()
        if n not in seen:
            seen.add(n)
            work.extend(s for s in blocks[n].succs if s != join)
    return seen


def insert_convergence_barriers(blocks: list[MBlock]) -> int:
    """Insert BSSY/BSYNC pairs; returns the number of convergence barriers used."""
    index = {b.name: i for i, b in enumerate(blocks)}
    by_name = {b.name: b for b in blocks}
    pdom = post_dominator_sets([b.name for b in blocks], lambda n: by_name[n].succs)
    regions: dict[str, list[MBlock]] = {}
    for b in blocks:
        if any(m.mnemonic == "BRA" and m.guard is not None and not m.uniform for m in b.insts):
            j = immediate(pdom, b.name, EXIT)
            if j != EXIT:
                regions.setdefault(j, []).append(b)
    # A region is live inside its interior, at the tail of its branch blocks (from the BSSY) and at the
    # head of its join (the BSYNC).  Two regions interfere, and need different barriers, when one is live
    # throughout a block where the other is live at all, or both BSSY in one block: a thread of one
    # would otherwise execute the other's BSSY or wait at its BSYNC while still a member of the barrier.
    interior = {j: region_interior(by_name, bs, j) for j, bs in regions.items()}
    full = {j: interior[j] | {b.name for b in bs} | {j} for j, bs in regions.items()}
    heads = {j: {b.name for b in bs} for j, bs in regions.items()}

    def interfere(a: str, b: str) -> bool:
        return bool(interior[a] & full[b] or interior[b] & full[a] or heads[a] & heads[b])

    order = sorted(regions, key=lambda j: (min(index[n] for n in full[j]), index[j]))
    barrier_of: dict[str, int] = {}
    for j in order:  # greedy colouring in layout order of the regions' first blocks
        taken = {barrier_of[o] for o in barrier_of if interfere(j, o)}
        k = next(i for i in range(len(taken) + 1) if i not in taken)
        if k >= NUM_CONV_BARRIERS:
            raise UnsupportedError(f"more than {NUM_CONV_BARRIERS} overlapping divergent regions")
        barrier_of[j] = k
    for j, bs in regions.items():
        k = barrier_of[j]
        for b in bs:
            pos = next(i for i, m in enumerate(b.insts) if m.mnemonic == "BRA" and m.guard is not None
                       and not m.uniform)
            line = b.insts[pos].line
            b.insts.insert(pos, mi("BSSY", c=k, b=j, line=line))
        jb = blocks[index[j]]
        jb.insts.insert(0, mi("BSYNC", c=k, line=jb.insts[0].line if jb.insts else 0))
    return max(barrier_of.values(), default=-1) + 1
