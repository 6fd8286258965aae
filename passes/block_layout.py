"""Profile-guided block layout: the hot path falls through, blocks that never ran go last.

Pettis and Hansen, "Profile Guided Code Positioning" (PLDI 1990), bottom-up chaining simplified to a greedy
walk, as LLVM's MachineBlockPlacement starts: from the entry, place each block's likelier successor (by the
profile's branch outcomes, ``fn.profile_index``, :mod:`xcc.profile.use`) right after it while it is not placed
yet; then the next unplaced block in the old order.  Blocks the profile shows were never entered (a branch
whose outcomes never went their way) are placed after all others.  Only the order changes: the backend then
drops each branch to the block that follows (``copy-cleanup``).  Without a profile nothing changes.
"""

from __future__ import annotations

from xcc.ir.core import Block, Function


def _successors_by_likelihood(b: Block, index) -> tuple[list[Block], set[Block]]:
    """``b``'s successors, likelier first, and those the profile says ``b`` never went to."""
    term = b.terminator
    succs = b.succs
    if term is None or term.op != "cbr" or len(succs) != 2:
        return succs, set()
    r = index.branch(term)
    if r is None or not sum(r):
        return succs, set()
    taken, not_taken = r[0] + r[2], r[1] + r[2]
    t, f = succs
    cold = {t} if taken == 0 else {f} if not_taken == 0 else set()
    return ([f, t] if not_taken > taken else [t, f]), cold


def layout_blocks(fn: Function) -> bool:
    """Reorder ``fn.blocks`` by its profile; True if the order changed."""
    index = getattr(fn, "profile_index", None)
    if index is None or len(fn.blocks) < 3:
        return False
    order: list[Block] = []
    placed: set[Block] = set()
    cold: set[Block] = set()
    likely: dict[Block, list[Block]] = {}
    for b in fn.blocks:
        likely[b], c = _successors_by_likelihood(b, index)
        cold |= c
    cold -= {fn.entry}
    # a block is cold only if every edge into it is cold
    warm = {s for b in fn.blocks for s in likely[b][:1]}
    cold -= warm
    fn.cold_blocks = {b.name for b in cold}  # for the register allocator (xcc.backend.cold_split)
    for start in [fn.entry] + [b for b in fn.blocks if b not in cold] + [b for b in fn.blocks if b in cold]:
        b = start
        while b is not None and b not in placed:
            order.append(b)
            placed.add(b)
            b = next((s for s in likely[b] if s not in placed and s not in cold), None)
    changed = order != fn.blocks
    fn.blocks = order
    return changed
