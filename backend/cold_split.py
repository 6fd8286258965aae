"""Live-range splitting around cold blocks, so that spill code lands where the profile says nothing runs.

A profile (:mod:`xcc.profile.use`) tells which blocks never ran (``fn.cold_blocks``, set by
:func:`xcc.passes.block_layout.layout_blocks`).  In the machine CFG a block is cold when its IR block was, when
every predecessor is cold (an edge block out of a cold block), or when it always goes on into cold blocks.  For
every general-register value live into a cold region, :func:`split_around_cold` gives the region its own copy:

* at the top of each region entry (a cold block with a hot predecessor, which is then its only one: critical
  edges are split at selection) ``t = MOV v``, or, for a value whose one definition computes a constant from no
  register (an immediate, a constant-bank word, a launch-constant special register), that definition again
  into ``t``, which the spiller can then rematerialise inside the region;
* inside the cold blocks every read and write of ``v`` becomes one of ``t``;
* at the end of each region exit (a cold block whose one successor is hot) ``v = MOV t`` for the values that
  successor reads.

``v`` is then dead across the cold region, which live ranges with holes
(:mod:`xcc.backend.regalloc_ranges`) see, so the pressure of the cold code falls on ``t`` and the cold values:
when the allocator spills there, the stores and reloads (or the recomputations of a rematerialised constant) are
in cold blocks, and the hot path keeps its registers (LLVM's greedy allocator splits live ranges around cold
regions the same way, by block frequency).  The copies themselves run only on cold paths.
"""

from __future__ import annotations

from dataclasses import replace

from xcc.backend.isel import MBlock
from xcc.backend.minst import Ctrl, Half, MInst, VReg, block_predecessors, inst_defs, mi, new_vreg
from xcc.backend.regalloc import liveness
from xcc.backend.spill import rematerialisable_values


def machine_cold_blocks(blocks: list[MBlock], cold_names: set[str]) -> set[str]:
    """The machine blocks that never ran, from the IR blocks' (see the module docstring)."""
    cold = {b.name for b in blocks if b.name in cold_names}
    preds = block_predecessors(blocks)
    changed = bool(cold)
    while changed:
        changed = False
        for b in blocks:
            if b.name in cold or b is blocks[0]:
                continue
            p = preds[b.name]
            if (p and all(x in cold for x in p)) or (b.succs and all(s in cold for s in b.succs)):
                cold.add(b.name)
                changed = True
    return cold


def split_around_cold(blocks: list[MBlock], cold: set[str], exclude: set = frozenset()) -> list[VReg]:
    """Rename the values live into the cold blocks ``cold`` inside them (see the module docstring); returns the
    cold copies (for the copy coalescer to leave alone: coalesced with the values they copy, the split would be
    undone).  Nothing is split when a region
    has an entry or exit of another shape; ``exclude`` values (the predicate spiller's registers, which its
    checker follows by name) are never split."""
    if not cold:
        return []
    preds = block_predecessors(blocks)
    by_name = {b.name: b for b in blocks}
    entries = [b for b in blocks if b.name in cold and any(p not in cold for p in preds[b.name])]
    exits = [b for b in blocks if b.name in cold and any(s not in cold for s in b.succs)]
    if any(len(preds[b.name]) != 1 for b in entries) or any(len(b.succs) != 1 for b in exits):
        return []
    live_in, _ = liveness(blocks)
    values = sorted({v for b in entries for v in live_in[b.name] if v.width and v not in exclude}, key=lambda v: v.id)
    cold_defs = {v for b in blocks if b.name in cold for m in b.insts for v in inst_defs(m)}
    values += sorted({v for b in exits for v in live_in[b.succs[0]] if v.width and v in cold_defs and v not in exclude}
                     - set(values),
                     key=lambda v: v.id)
    if not values:
        return []
    copy = {v: new_vreg(v.width) for v in values}
    for b in blocks:
        if b.name in cold:
            for m in b.insts:
                _rename(m, copy)
    remat = rematerialisable_values(blocks)  # their cold copy recomputes them, rematerialisable in turn
    for b in entries:
        moves = [mv for v in sorted(live_in[b.name], key=lambda v: v.id) if v in copy
                 for mv in ([_recompute(remat[v], copy[v])] if v in remat else _moves(copy[v], v))]
        at = next((i for i, m in enumerate(b.insts) if "reconverge" not in m.d.classes), len(b.insts))
        b.insts[at:at] = moves
    for b in exits:
        succ = by_name[b.succs[0]]
        moves = [mv for v in sorted(live_in[succ.name], key=lambda v: v.id) if v in copy
                 for mv in _moves(v, copy[v])]
        at = len(b.insts)
        while at > 0 and b.insts[at - 1].d.is_fence:  # the block's closing branch and barrier bookkeeping
            at -= 1
        b.insts[at:at] = moves
    return list(copy.values())


def _recompute(m: MInst, dst: VReg) -> MInst:
    return replace(m, ops={**m.ops, "d": dst}, mods=dict(m.mods), ctrl=Ctrl())


def _moves(dst: VReg, src: VReg) -> list[MInst]:
    if dst.width == 2:
        return [mi("MOV", d=Half(dst, i), b=Half(src, i)) for i in (0, 1)]
    return [mi("MOV", d=dst, b=src)]


def _rename(m: MInst, copy: dict[VReg, VReg]) -> None:
    def new(x):
        if isinstance(x, VReg):
            return copy.get(x, x)
        if isinstance(x, Half) and x.vreg in copy:
            return Half(copy[x.vreg], x.index)
        if isinstance(x, tuple) and x and isinstance(x[0], VReg | Half):
            return (new(x[0]), *x[1:])
        return x

    m.ops = {k: new(x) for k, x in m.ops.items()}
    if m.guard is not None:
        m.guard = (new(m.guard[0]), m.guard[1])
