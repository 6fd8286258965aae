"""Dead-code elimination: remove instructions and phis whose results are never used and that
have no effects (mark-and-sweep from effectful roots, as in Cytron et al. 1991, section 7.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Function
from xcc.ir.ops import OPS
from xcc.passes.manager import FunctionPass


@dataclass(frozen=True)
class DeadCodeElimination(FunctionPass):
    name: ClassVar[str] = "dce"

    def run_function(self, fn: Function) -> None:
        defs = {}
        for b in fn.blocks:
            for phi in b.phis:
                defs[phi.result] = phi
            for inst in b.instructions:
                if inst.result is not None:
                    defs[inst.result] = inst
        live = set()
        work = [i for b in fn.blocks for i in b.instructions if OPS[i.op].effects]
        live.update(map(id, work))
        while work:
            for a in work.pop().args:
                d = defs.get(a)
                if d is not None and id(d) not in live:
                    live.add(id(d))
                    work.append(d)
        for b in fn.blocks:
            b.phis = [p for p in b.phis if id(p) in live]
            b.instructions = [i for i in b.instructions if id(i) in live]
