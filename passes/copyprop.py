"""Copy propagation: uses of a value that only copies another read the original instead (Mesa NAK's
``opt_copy_prop``, LLVM's ``InstSimplify`` on phis and selects).

A result is a copy of ``x`` when it is

* ``mov`` of ``x`` with the same bit width as ``x`` and the result, neither or both predicates (``mov`` is a
  bit copy, :mod:`xcc.ir.ops`; register values are held as bit patterns of their width, so the type
  name a value carries changes nothing, as the IR builder's own forwarding of ``mov`` already assumes);
* ``cvt`` between integer types of one width, neither saturating nor rounding, on an operand of that
  width: :func:`xcc.semantics.convert` returns the same bits;
* a phi whose operands are all ``x`` or the phi itself (Braun et al. 2013, "trivial phi"), or all one
  constant;
* ``selp a, a, p`` (both operands the same), or ``selp a, b, c`` on a constant ``c``.

The copies' uses are redirected and the copies deleted, repeated until nothing changes (a phi becomes
trivial once its operands are propagated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.passes.manager import FunctionPass


def same(a: Value, b: Value) -> bool:
    """``a`` and ``b`` are the same value: one SSA value, or equal constants of one type."""
    return a is b or isinstance(a, Const) and a.same(b)


def _same_width(a: Value, b: Value) -> bool:
    return a.type.bits == b.type.bits and (a.type.kind == "pred") == (b.type.kind == "pred")


def copy_source(u: Instruction | Phi) -> Value | None:
    """The value ``u``'s result copies, or None."""
    if isinstance(u, Phi):
        others = [a for a in u.args if a is not u.result]
        if others and all(same(a, others[0]) for a in others) and _same_width(others[0], u.result):
            return others[0]
        return None
    r = u.result
    if r is None:
        return None
    if u.op == "mov" and _same_width(u.args[0], r) and u.type.bits == r.type.bits:
        return u.args[0]
    if u.op == "cvt" and _integer_identity(u):
        return u.args[0]
    if u.op == "selp":
        a, b, c = u.args
        if isinstance(c, Const):
            pick = a if c.bits else b
            return pick if _same_width(pick, r) else None
        if same(a, b) and _same_width(a, r):
            return a
    return None


def _integer_identity(inst: Instruction) -> bool:
    from xcc.ir.types import TYPES

    src = TYPES.get(inst.attrs.get("src", ""))
    t, a = inst.type, inst.args[0]
    if src is None or src.kind not in "bus" or t.kind not in "bus":
        return False
    if set(inst.attrs) - {"src", "sat"} or inst.attrs.get("sat") and t.kind != "b":
        return False
    return src.bits == t.bits == a.type.bits == inst.result.type.bits


@dataclass(frozen=True)
class CopyPropagation(FunctionPass):
    """Forward same-width mov, identity integer cvt, trivial phis and trivial selp to their source."""

    name: ClassVar[str] = "copyprop"

    def run_function(self, fn: Function) -> None:
        changed = True
        while changed:
            changed = False
            repl: dict[Value, Value] = {}

            def forward(v: Value, src: Value) -> bool:
                while src in repl:
                    src = repl[src]
                if src is v:  # a cycle of copies of nothing else (dead): leave it
                    return False
                repl[v] = src
                return True

            for b in fn.blocks:
                kept_phis = []
                for phi in b.phis:
                    src = copy_source(phi)
                    if src is None or not forward(phi.result, src):
                        kept_phis.append(phi)
                b.phis = kept_phis
                kept = []
                for inst in b.instructions:
                    src = copy_source(inst)
                    if src is None or not forward(inst.result, src):
                        kept.append(inst)
                b.instructions = kept
            if repl:
                replace_uses(fn, repl)
                changed = True
