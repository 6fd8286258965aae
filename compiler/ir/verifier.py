"""The IR verifier: structural invariants every pass must preserve.

- every block ends in exactly one terminator, and only there;
- branch targets are blocks of the function; ``preds`` match the edges;
- every phi has one operand per predecessor;
- every operation is in the op table with the right number of operands;
- SSA: each value is defined once and every use is dominated by its definition
  (a phi operand by the end of the corresponding predecessor).
"""

from __future__ import annotations

from xcc.diagnostics import XccError
from xcc.ir.cfg import dominators
from xcc.ir.core import Const, Function, Module, Value
from xcc.ir.ops import OPS


class VerifyError(XccError):
    """The IR broke an invariant: a bug in the pass that produced it."""

    kind = "internal error"


def verify_module(mod: Module, after: str = "") -> None:
    for fn in mod.functions:
        verify_function(fn, after)


def verify_function(fn: Function, after: str = "") -> None:
    where = f" after {after}" if after else ""

    def fail(msg: str, inst=None):
        raise VerifyError(f"IR verification failed{where} in {fn.name}: {msg}", getattr(inst, "loc", None))

    blocks = set(fn.blocks)
    preds: dict = {b: [] for b in fn.blocks}
    for b in fn.blocks:
        if b.terminator is None:
            fail(f"block {b.name} has no terminator")
        for i, inst in enumerate(b.instructions):
            opd = OPS.get(inst.op)
            if opd is None:
                fail(f"unknown operation '{inst.op}'", inst)
            if opd.terminator != (i == len(b.instructions) - 1):
                fail(f"terminator '{inst.op}' not at the end of {b.name}", inst)
            if opd.arity is not None and len(inst.args) != opd.arity:
                fail(f"'{inst.op}' has {len(inst.args)} operands, expects {opd.arity}", inst)
            if opd.has_result != (inst.result is not None) and inst.op != "atom":
                fail(f"'{inst.op}' result mismatch", inst)
            if inst.block is not b:
                fail(f"instruction '{inst.op}' has a stale block link", inst)
            if inst.op == "atom" and "part" in inst.attrs:
                k = i + 1 if inst.attrs["part"] == 0 else i - 1
                other = b.instructions[k] if 0 <= k < len(b.instructions) else None
                if other is None or other.op != "atom" or other.attrs.get("part") != 1 - inst.attrs["part"]:
                    fail("the two parts of a .b128 atom must be adjacent, part 0 first (xcc.ir.lower_b128)", inst)
        for s in b.succs:
            if s not in blocks:
                fail(f"{b.name} branches to a block outside the function")
            preds[s].append(b)
    for b in fn.blocks:
        if sorted(map(id, preds[b])) != sorted(map(id, b.preds)):
            fail(f"predecessor list of {b.name} does not match the CFG")
        for phi in b.phis:
            if len(phi.args) != len(b.preds):
                fail(f"phi in {b.name} has {len(phi.args)} operands for {len(b.preds)} predecessors")
    # SSA dominance.
    dom = dominators(fn)
    def_block: dict[Value, object] = {}
    def_index: dict[Value, int] = {}
    for b in fn.blocks:
        for phi in b.phis:
            if phi.result in def_block:
                fail("value defined twice")
            def_block[phi.result], def_index[phi.result] = b, -1
        for i, inst in enumerate(b.instructions):
            if inst.result is not None:
                if inst.result in def_block:
                    fail("value defined twice", inst)
                def_block[inst.result], def_index[inst.result] = b, i

    def dominated(v: Value, b, index: int) -> bool:
        if isinstance(v, Const):
            return True
        db = def_block.get(v)
        if db is None:
            return False
        if db is b:
            return def_index[v] < index
        return db in dom[b]

    for b in fn.blocks:
        for phi in b.phis:
            for a, p in zip(phi.args, b.preds):
                if not dominated(a, p, len(p.instructions)):
                    fail(f"phi operand in {b.name} not defined on the edge from {p.name}")
        for i, inst in enumerate(b.instructions):
            for a in inst.args:
                if not dominated(a, b, i):
                    fail(f"use of '{inst.op}' operand not dominated by its definition", inst)
