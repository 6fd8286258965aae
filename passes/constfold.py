"""Constant folding: replace a pure instruction whose operands are all constants by its value.

The value is computed by :func:`xcc.ir.evaluate.evaluate`, i.e. by the same
semantics the interpreters use, so folding never changes a result.  Also
folds ``cbr`` on a constant predicate into ``br`` (dropping the dead edge
and its phi operands).  Classic compiler-textbook pass (Aho et al., 9.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import reachable_blocks
from xcc.ir.core import Const, Function, Value
from xcc.ir.fold import try_fold
from xcc.ir.ops import PURE_OPS
from xcc.ir.rewrite import remove_edge, replace_uses
from xcc.passes.manager import FunctionPass


@dataclass(frozen=True)
class ConstantFold(FunctionPass):
    name: ClassVar[str] = "constfold"

    def run_function(self, fn: Function) -> None:
        repl: dict[Value, Value] = {}
        for b in fn.blocks:
            kept = []
            for inst in b.instructions:
                inst.args = [repl.get(a, a) for a in inst.args]
                if inst.op in PURE_OPS and inst.args and all(isinstance(a, Const) for a in inst.args):
                    r = try_fold(inst, inst.args)
                    if r is None:  # not foldable here: stays for run time
                        kept.append(inst)
                        continue
                    repl[inst.result] = Const(inst.result.type, r)
                    continue
                kept.append(inst)
            b.instructions = kept
        replace_uses(fn, repl)
        for b in list(fn.blocks):
            term = b.terminator
            if term is not None and term.op == "cbr" and isinstance(term.args[0], Const):
                taken, dead = term.targets if term.args[0].bits else term.targets[::-1]
                term.op, term.args, term.attrs = "br", [], {"targets": [taken]}
                if dead is not taken:
                    remove_edge(b, dead)
        _drop_unreachable(fn)


def _drop_unreachable(fn: Function) -> None:
    seen = reachable_blocks(fn)
    for b in [b for b in fn.blocks if b not in seen]:
        for s in b.succs:
            if s in seen:
                remove_edge(b, s)
    fn.blocks = [b for b in fn.blocks if b in seen]
