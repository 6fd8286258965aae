"""Loop-invariant code motion: move computations whose operands do not change in a loop to its preheader.

LLVM's ``LICM`` (hoisting half) on the natural loops of :mod:`xcc.ir.cfg`, innermost first, so an
expression hoisted out of an inner loop can leave the outer one too.  Each loop gets a preheader first
(:func:`xcc.passes.loop_utils.ensure_preheader`, LLVM's ``LoopSimplify``), and phis that only pass one
value around (``x = phi [v, x]``, what a variable the loop never assigns becomes) are replaced by it.  In reverse postorder of the
loop's blocks, an instruction is hoisted when every operand is a constant or is defined outside the loop
(or was hoisted already) and

* it is a value of its operands only (:func:`xcc.passes.gvn.numberable`: pure arithmetic, ``addr_of``,
  ``cvta``, ``ld_param``, the stable special registers), and either its block is *guaranteed to execute*
  whenever the loop is entered (it dominates every block that leaves the loop, by a branch or by
  ``ret``/``exit``/``trap``) or the operation is safe and cheap to run speculatively
  (:data:`xcc.passes.ifconvert.SPECULATABLE`: none of them traps in PTX, integer division by zero
  included, but division, square root and the transcendental ops are long-latency and stay where they are
  unless guaranteed to run); or
* it is a plain load (:func:`xcc.passes.memory_model.is_plain_load`) guaranteed to execute, from a space
  nothing in the loop may write or order (:func:`xcc.passes.memory_model.clobbers`: stores to an aliasing
  space, atomics, barriers, fences, acquire loads), in a loop without calls: a load may fault, so it is
  never speculated.

Warp-collective operations, atomics and everything with effects stay in the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import Loop, natural_loops
from xcc.ir.core import Block, Const, Function, Instruction, Value
from xcc.passes.gvn import numberable
from xcc.passes.ifconvert import SPECULATABLE
from xcc.passes.loop_utils import dominator_tree, ensure_preheader, remove_trivial_phis
from xcc.passes.manager import FunctionPass
from xcc.passes.memory_model import clobbers, is_plain_load, kills, space_of


@dataclass(frozen=True)
class LoopInvariantCodeMotion(FunctionPass):
    """Hoist loop-invariant pure values, and loads of memory the loop cannot change, to loop preheaders."""

    name: ClassVar[str] = "licm"
    loads: bool = True  # also hoist loads of memory nothing in the loop writes

    def run_function(self, fn: Function) -> None:
        loops = natural_loops(fn)
        if not loops:
            return
        for loop in sorted(loops, key=lambda lp: len(lp.body)):
            if _outside_preds(loop):  # a loop back to the entry block has no way in to put a preheader on
                ensure_preheader(fn, loop)
        remove_trivial_phis(fn)
        tree = dominator_tree(fn)
        dom, rpo = tree.sets(), tree.rpo
        for loop in sorted(natural_loops(fn, dom), key=lambda lp: len(lp.body)):
            if len(_outside_preds(loop)) == 1:
                self._hoist(loop, dom, rpo)

    def _hoist(self, loop: Loop, dom, rpo: list[Block]) -> None:
        pre = _outside_preds(loop)[0]
        body = [b for b in rpo if b in loop.body]
        defined: set[Value] = {p.result for b in body for p in b.phis}
        defined |= {i.result for b in body for i in b.instructions if i.result is not None}
        exiting = [b for b in body if not b.succs or any(s not in loop.body for s in b.succs)]
        written: set[str] = set()
        calls = False
        for b in body:
            for inst in b.instructions:
                written |= clobbers(inst)
                calls |= inst.op == "call"
        frozen_written = frozenset(written)
        moved: list[Instruction] = []
        for b in body:
            guaranteed = b is loop.header or (bool(exiting) and all(b in dom[e] for e in exiting))
            kept = []
            for inst in b.instructions:
                if self._can_hoist(inst, defined, guaranteed, frozen_written, calls):
                    defined.discard(inst.result)
                    moved.append(inst)
                else:
                    kept.append(inst)
            b.instructions = kept
        term = pre.instructions.pop()
        for inst in moved:
            pre.append(inst)
        pre.append(term)

    def _can_hoist(self, inst: Instruction, defined: set[Value], guaranteed: bool, written: frozenset[str],
                   calls: bool) -> bool:
        if inst.result is None or any(not isinstance(a, Const) and a in defined for a in inst.args):
            return False
        if numberable(inst):
            return guaranteed or inst.op in SPECULATABLE or inst.op in ("sreg", "addr_of", "cvta", "ld_param")
        if self.loads and is_plain_load(inst):
            return guaranteed and not calls and not kills(space_of(inst), written)
        return False


def _outside_preds(loop: Loop) -> list[Block]:
    return [p for p in loop.header.preds if p not in loop.body]
