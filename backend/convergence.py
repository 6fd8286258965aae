"""Explicit reconvergence: BSSY/BSYNC around every divergent branch (as NVIDIA GPUs since Volta).

For each conditional branch in block B, the threads of a warp reconverge at the
immediate post-dominator J of B: ``BSSY Bk, J`` before the branch records the
warp's active threads in convergence barrier k, ``BSYNC Bk`` at the head of J
waits for them.  Branches that share J share a barrier; barriers whose regions
(in layout order) do not overlap reuse the same number (interval colouring).
Post-dominators come from the iterative data-flow algorithm on the reverse CFG
(Cooper, Harvey and Kennedy 2001) with a virtual exit.
"""

from __future__ import annotations

from xcc.backend.isa import NUM_CONV_BARRIERS
from xcc.backend.isel import MBlock
from xcc.backend.minst import mi
from xcc.diagnostics import UnsupportedError

EXIT = "<exit>"


def post_dominators(blocks: list[MBlock]) -> dict[str, set[str]]:
    names = [b.name for b in blocks]
    succs = {b.name: b.succs or [EXIT] for b in blocks}
    everything = set(names) | {EXIT}
    pdom = {n: set(everything) for n in names}
    pdom[EXIT] = {EXIT}
    changed = True
    while changed:
        changed = False
        for n in reversed(names):
            new = set.intersection(*(pdom[s] for s in succs[n])) | {n}
            if new != pdom[n]:
                pdom[n], changed = new, True
    return pdom


def immediate_post_dominator(pdom: dict[str, set[str]], n: str) -> str:
    strict = pdom[n] - {n}
    # The immediate one is the strict post-dominator that every other strict one post-dominates.
    for c in strict:
        if all(o in pdom[c] for o in strict):
            return c
    return EXIT


def insert_convergence_barriers(blocks: list[MBlock]) -> int:
    """Insert BSSY/BSYNC pairs; returns the number of convergence barriers used."""
    pdom = post_dominators(blocks)
    index = {b.name: i for i, b in enumerate(blocks)}
    regions: dict[str, list[MBlock]] = {}
    for b in blocks:
        if any(m.mnemonic == "BRA" and m.guard is not None for m in b.insts):
            j = immediate_post_dominator(pdom, b.name)
            if j != EXIT:
                regions.setdefault(j, []).append(b)
    intervals = sorted((min(index[b.name] for b in bs + [blocks[index[j]]]), max(index[j], *(index[b.name] for b in bs)), j)
                       for j, bs in regions.items())
    free_at: list[int] = []  # per barrier: the last block index of its current region
    barrier_of: dict[str, int] = {}
    for start, end, j in intervals:
        k = next((i for i, e in enumerate(free_at) if e < start), None)
        if k is None:
            k = len(free_at)
            if k >= NUM_CONV_BARRIERS:
                raise UnsupportedError(f"more than {NUM_CONV_BARRIERS} overlapping divergent regions")
            free_at.append(end)
        else:
            free_at[k] = end
        barrier_of[j] = k
    for j, bs in regions.items():
        k = barrier_of[j]
        for b in bs:
            pos = next(i for i, m in enumerate(b.insts) if m.mnemonic == "BRA" and m.guard is not None)
            line = b.insts[pos].line
            b.insts.insert(pos, mi("BSSY", c=k, b=j, line=line))
        jb = blocks[index[j]]
        jb.insts.insert(0, mi("BSYNC", c=k, line=jb.insts[0].line if jb.insts else 0))
    return len(free_at)
