"""If-conversion: turn short branches over pure code into straight-line code with ``selp``.

Control dependence becomes data dependence (Allen, Kennedy, Porterfield and Warren, "Conversion of
Control Dependence to Data Dependence", POPL 1983), restricted, as ptxas and LLVM's
``SimplifyCFG``/``EarlyIfConversion`` do, to small regions whose instructions are safe to execute
speculatively:

* a **triangle** ``A: cbr p, T, J;  T: ...; br J`` (or with the arms swapped), and
* a **diamond** ``A: cbr p, T, F;  T: ...; br J;  F: ...; br J``,

where each arm has ``A`` as its only predecessor and no phis, the arms together have at most ``max_insts``
instructions (every thread executes all of them afterwards), all
pure arithmetic (:data:`xcc.ir.evaluate.PURE_OPS` minus the long-latency division, square root and
transcendental ops: no memory, no effects, nothing warp-collective, so executing them for every thread changes
no result).  The arms' instructions move into ``A`` before the branch, each phi of ``J`` gets
``selp(value via T, value via F or A, p)`` for ``A``'s edge, and ``A`` jumps to ``J`` (or, when ``A``
is now ``J``'s only predecessor, ``J`` is merged into ``A``).  On a GPU this
removes a divergent branch and its reconvergence barrier; the ISA interpreter's cycle model sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Function, Instruction, Value
from xcc.ir.ops import PURE_OPS
from xcc.ir.rewrite import replace_uses
from xcc.passes.manager import FunctionPass

SPECULATABLE = PURE_OPS - {"div", "rem", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"}


@dataclass(frozen=True)
class IfConversion(FunctionPass):
    name: ClassVar[str] = "ifconvert"
    max_insts: int = 4

    def run_function(self, fn: Function) -> None:
        changed = True
        while changed:
            changed = any(self._convert(fn, a) for a in list(fn.blocks))

    def _arm(self, a: Block, b: Block, budget: int) -> bool:
        """``b`` can be folded into ``a``: only reached from ``a``, no phis, short, pure, ends in ``br``."""
        body = b.instructions[:-1]
        return (b.preds == [a] and not b.phis and b.terminator is not None and b.terminator.op == "br"
                and len(body) <= budget and all(i.op in SPECULATABLE for i in body))

    def _budget(self, a: Block, index) -> int:
        """``max_insts``; with a profile (xcc.profile.use): 4x for a branch that diverges, 0 for one that
        never diverged and always went one way (a uniform, predictable branch costs less than both arms)."""
        r = index.branch(a.terminator) if index is not None and a.terminator is not None else None
        if r is None or not sum(r):
            return self.max_insts
        if index.divergent(a.terminator):
            return 4 * self.max_insts
        return 0 if r[2] == 0 and 0 in (r[0], r[1]) else self.max_insts

    def _convert(self, fn: Function, a: Block) -> bool:
        term = a.terminator
        if term is None or term.op != "cbr" or a not in fn.blocks:
            return False
        t, f = term.targets
        if t is f or a in (t, f):
            return False
        p = term.args[0]
        budget = self._budget(a, getattr(fn, "profile_index", None))
        if self._arm(a, t, budget) and t.succs == [f]:  # triangle: A -> T -> F, A -> F
            self._fold(fn, a, term, p, [t], f, lambda phi: (_incoming(phi, f, t), _incoming(phi, f, a)))
            return True
        if self._arm(a, f, budget) and f.succs == [t]:  # triangle with the arms swapped
            self._fold(fn, a, term, p, [f], t, lambda phi: (_incoming(phi, t, a), _incoming(phi, t, f)))
            return True
        if (self._arm(a, t, budget) and self._arm(a, f, budget) and t.succs == f.succs and t.succs[0] not in (a, t, f)
                and len(t.instructions) + len(f.instructions) - 2 <= budget):
            j = t.succs[0]  # diamond
            self._fold(fn, a, term, p, [t, f], j, lambda phi: (_incoming(phi, j, t), _incoming(phi, j, f)))
            return True
        return False

    def _fold(self, fn: Function, a: Block, term: Instruction, p: Value, arms: list[Block], join: Block,
              sources) -> None:
        """Move the arms into ``a``, select each phi of ``join`` on ``p``, and jump straight to ``join``."""
        a.instructions.pop()  # the cbr
        for arm in arms:
            for inst in arm.instructions[:-1]:
                a.append(inst)
        selects = []
        for phi in join.phis:
            when_true, when_false = sources(phi)
            if when_true is when_false:
                selects.append(when_true)
                continue
            v = Value(phi.result.type)
            a.append(Instruction("selp", phi.result.type, [when_true, when_false, p], v, {}, term.loc,
                                 term.debug_loc))
            selects.append(v)
        # join's edges from the arms (and from a, in a triangle) become one edge from a
        old = join.preds
        keep = [k for k, b in enumerate(old) if b not in arms and b is not a]
        first = min(k for k, b in enumerate(old) if b in arms or b is a)
        order = sorted(keep + [first])
        for phi, sel in zip(join.phis, selects):
            phi.args = [sel if k == first else phi.args[k] for k in order]
        join.preds = [a if k == first else old[k] for k in order]
        fn.blocks = [b for b in fn.blocks if b not in arms]
        if join.preds == [a] and join is not fn.entry:  # a is now join's only way in: one block
            replace_uses(fn, {phi.result: arg for phi in join.phis for arg in phi.args})
            for inst in join.instructions:
                a.append(inst)
            for s in join.succs:
                s.preds = [a if q is join else q for q in s.preds]
            fn.blocks = [b for b in fn.blocks if b is not join]
        else:
            a.append(Instruction("br", None, [], None, {"targets": [join]}, term.loc, term.debug_loc))


def _incoming(phi, join: Block, pred: Block) -> Value:
    return phi.args[join.preds.index(pred)]
