"""CFG simplification: the clean-up of LLVM's ``SimplifyCFG`` that needs no speculation.

Repeated to a fixed point, in block-list order:

* a ``cbr`` on a constant predicate becomes a ``br`` to the taken target (the other edge and its phi
  operands go);
* a ``cbr`` whose two targets are one block becomes a ``br`` when the target's phis take the same value
  on both edges;
* an **empty forwarding block** ``B: br S`` (no phis, not the entry) is bypassed: each predecessor
  jumps straight to ``S`` and ``S``'s phis take, for each of those edges, the value they took from
  ``B``.  Where a predecessor already jumps to ``S`` as well, this is done only if ``S``'s phis agree on
  the two edges (LLVM's ``TryToSimplifyUncondBranchFromEmptyBlock``).  ``nvcc -G`` emits long chains of
  such blocks (a ``bra`` to the next label after every source line);
* a block whose only predecessor ends in ``br`` to it is **merged** into that predecessor (its phis
  replaced by their one operand, its instructions appended);
* blocks unreachable from the entry are removed.

Control flow only changes shape: every thread runs the same non-branch instructions in the same order,
and the immediate post-dominator of each remaining divergent branch is the same join (or the block a
removed forwarding block led to), where both interpreters reconverge, so no result changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import reachable_blocks
from xcc.ir.core import Block, Const, Function, Instruction
from xcc.ir.rewrite import remove_edge, replace_uses
from xcc.passes.manager import FunctionPass


@dataclass(frozen=True)
class SimplifyCFG(FunctionPass):
    """Constant and same-target cbr folding, empty-block forwarding, block merging, unreachable-block removal
    (LLVM SimplifyCFG's CFG clean-up)."""

    name: ClassVar[str] = "simplifycfg"

    def run_function(self, fn: Function) -> None:
        changed = True
        while changed:
            changed = drop_unreachable(fn)
            removed: set[Block] = set()
            for b in fn.blocks:
                if b in removed:
                    continue
                changed |= fold_branch(b)
                if forward_empty(fn, b) or merge_into_pred(fn, b):
                    removed.add(b)
                    changed = True
            fn.blocks = [b for b in fn.blocks if b not in removed]


def drop_unreachable(fn: Function) -> bool:
    """Remove the blocks unreachable from the entry (and their edges into reachable ones)."""
    seen = reachable_blocks(fn)
    dead = [b for b in fn.blocks if b not in seen]
    for b in dead:
        for s in b.succs:
            if s in seen:
                remove_edge(b, s)
    fn.blocks = [b for b in fn.blocks if b in seen]
    return bool(dead)


def _to_br(term: Instruction, target: Block) -> None:
    term.op, term.args, term.attrs = "br", [], {"targets": [target]}


def fold_branch(b: Block) -> bool:
    """``cbr`` on a constant, or to one block twice with agreeing phis, becomes ``br``."""
    term = b.terminator
    if term is None or term.op != "cbr":
        return False
    t, f = term.targets
    if isinstance(term.args[0], Const):
        taken, dead = (t, f) if term.args[0].bits else (f, t)
        _to_br(term, taken)
        remove_edge(b, dead)  # one edge b -> dead (the other, if taken is dead, stays)
        return True
    if t is f:
        ks = [k for k, p in enumerate(t.preds) if p is b]
        if all(phi.args[ks[0]] is phi.args[ks[1]] for phi in t.phis):
            _to_br(term, t)
            remove_edge(b, t)
            return True
    return False


def forward_empty(fn: Function, b: Block) -> bool:
    """Bypass ``b: br s`` (no phis, not the entry): its predecessors jump to ``s``; the caller drops ``b``."""
    term = b.terminator
    if b is fn.entry or b.phis or len(b.instructions) != 1 or term is None or term.op != "br":
        return False
    s = term.targets[0]
    if s is b or not b.preds:
        return False
    k = s.preds.index(b)
    for p in b.preds:  # a pred already jumping to s: the phis must agree on both edges
        if p in s.preds and any(phi.args[s.preds.index(p)] is not phi.args[k] for phi in s.phis):
            return False
    if s is fn.entry:  # the entry block stays first and keeps its shape
        return False
    new_preds = list(b.preds)
    s.preds[k:k + 1] = new_preds
    for phi in s.phis:
        phi.args[k:k + 1] = [phi.args[k]] * len(new_preds)
    for p in dict.fromkeys(new_preds):
        pt = p.terminator
        pt.attrs["targets"] = [s if x is b else x for x in pt.targets]
    b.preds = []
    return True


def merge_into_pred(fn: Function, b: Block) -> bool:
    """Append ``b`` to its only predecessor ``p`` when ``p`` ends in ``br b``; the caller drops ``b``."""
    if b is fn.entry or len(b.preds) != 1:
        return False
    p = b.preds[0]
    pt = p.terminator
    if p is b or pt is None or pt.op != "br":
        return False
    if b.phis:
        replace_uses(fn, {phi.result: phi.args[0] for phi in b.phis})
        b.phis = []
    p.instructions.pop()
    for inst in b.instructions:
        p.append(inst)
    for s in b.succs:
        s.preds = [p if x is b else x for x in s.preds]
    b.instructions, b.preds = [], []
    return True
