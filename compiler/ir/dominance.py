"""Dominators and post-dominators by the iterative data-flow algorithm
(Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", 2001, in set form)."""

from __future__ import annotations

from xcc.ir.core import Block, Function


def dominators(fn: Function) -> dict[Block, set[Block]]:
    """For each block, the set of blocks that dominate it (itself included)."""
    blocks = fn.blocks
    entry = blocks[0]
    everything = set(blocks)
    dom = {b: set(everything) for b in blocks}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in blocks[1:]:
            preds = [p for p in b.preds if p in everything]
            new = set.intersection(*(dom[p] for p in preds)) | {b} if preds else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom
