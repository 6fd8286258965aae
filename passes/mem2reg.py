"""Promote memory to registers: SROA and mem2reg for a function's own ``.local`` variables and its
call-free ``.param`` variables (LLVM's ``SROA`` + ``PromoteMemToReg``; SSA construction after Cytron,
Ferrante, Rosen, Wegman and Zadeck, "Efficiently Computing Static Single Assignment Form and the Control
Dependence Graph", TOPLAS 1991, with dominance frontiers as in Cooper, Harvey and Kennedy 2001).

A variable qualifies when its address never escapes (:func:`xcc.passes.localvars.analyse`: only
``addr_of`` + constants, optionally through ``cvta`` to generic, feeding the address of plain, aligned,
in-bounds ``ld``/``st``).  It is split into **slots** by (offset, size) (scalar replacement of
aggregates); a variable with two overlapping accesses of different (offset, size), or a store or load
whose register is wider or narrower than the access (a truncating store, an extending load), stays in
memory (``dse`` may still remove its dead stores).  For each slot, phis go on the iterated dominance
frontier of its stores, and a walk of the dominator tree gives every load the value that reaches it:
the load becomes that value (through a ``mov``, a bit copy of one width, where a float and an integer
register type meet),
the stores and the address computations go, and so does the variable (the frame shrinks).

A load that bytes never stored may reach reads what the memory holds.  A kernel's local frame starts
zeroed in both interpreters (each wave's local memory is cleared, and callees' frames lie above the
kernel's), so there it reads 0 exactly.  A device function's frame is reused from call to call: a variable
such a read may reach (through phis included) is left in memory.  A load in a block unreachable from the
entry also leaves its variable alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import immediate_dominators, reverse_postorder
from xcc.ir.core import Block, Const, Function, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import TYPES
from xcc.passes.localvars import Access, analyse, candidate_variables, users_of
from xcc.passes.manager import FunctionPass

UNDEF = Value(TYPES["b8"], "undef")
"""The reaching value of a slot before any store (replaced by 0 in a kernel)."""


@dataclass(frozen=True)
class PromoteMemoryToRegisters(FunctionPass):
    """SROA + mem2reg: non-escaping .local (and call-free .param) variables split into scalar slots and
    promoted to SSA values with phis."""

    name: ClassVar[str] = "mem2reg"

    def run_function(self, fn: Function) -> None:
        variables = candidate_variables(fn)
        if not variables:
            return
        order = reverse_postorder(fn)
        idom = immediate_dominators(fn)
        tree = _DomTree(order, idom)
        for var in variables:
            acc = analyse(fn, var, users_of(fn))
            if acc is None:
                continue
            slots = _slots(acc.accesses)
            if slots is None or any(a.inst.block not in tree.rank for a in acc.accesses):
                continue
            plan = _rename(tree, slots)
            if not fn.is_entry and _reads_undef(plan):
                continue
            _commit(fn, acc, plan)


class _DomTree:
    def __init__(self, order: list[Block], idom: dict[Block, Block | None]):
        self.order, self.idom = order, idom
        self.rank = {b: k for k, b in enumerate(order)}
        self.children: dict[Block, list[Block]] = {b: [] for b in order}
        for b in order:
            if idom[b] is not None:
                self.children[idom[b]].append(b)
        self.frontier: dict[Block, list[Block]] = {b: [] for b in order}
        for b in order:
            preds = [p for p in b.preds if p in self.rank]
            if len(preds) < 2:
                continue
            for p in dict.fromkeys(preds):
                runner = p
                while runner is not idom[b]:
                    if b not in self.frontier[runner]:
                        self.frontier[runner].append(b)
                    runner = idom[runner]


def _slots(accesses: list[Access]) -> dict[tuple[int, int], list[Access]] | None:
    """Accesses grouped by (offset, size); None when two groups overlap or a register's width is not the
    access's."""
    slots: dict[tuple[int, int], list[Access]] = {}
    for a in accesses:
        v = a.inst.args[1] if a.is_store else a.inst.result
        if v.type.bits != 8 * a.size and not (a.is_store and isinstance(v, Const)):
            return None
        slots.setdefault((a.offset, a.size), []).append(a)
    end = -1
    for off, size in sorted(slots):
        if off < end:
            return None
        end = off + size
    return slots


@dataclass
class _Plan:
    phis: dict[tuple[Block, tuple[int, int]], Phi]
    loads: dict[int, Value]  # id(load) -> reaching value
    slot_type: dict[tuple[int, int], object]


def _rename(tree: _DomTree, slots: dict[tuple[int, int], list[Access]]) -> _Plan:
    """Place phis on the iterated dominance frontiers of the stores and find each load's reaching value."""
    slot_type = {}
    for key, accs in slots.items():
        stored = [a.inst.args[1].type for a in accs if a.is_store and not isinstance(a.inst.args[1], Const)]
        slot_type[key] = stored[0] if stored else TYPES[f"b{8 * key[1]}"]
    phis: dict[tuple[Block, tuple[int, int]], Phi] = {}
    for key, accs in slots.items():
        work = list(dict.fromkeys(a.inst.block for a in accs if a.is_store))
        seen = set(work)
        while work:
            for f in tree.frontier[work.pop()]:
                if (f, key) not in phis:
                    phis[(f, key)] = Phi(Value(slot_type[key]), [UNDEF] * len(f.preds), f)
                    if f not in seen:
                        seen.add(f)
                        work.append(f)
    by_inst = {id(a.inst): key for key, accs in slots.items() for a in accs}
    block_phis: dict[Block, list[tuple[tuple[int, int], Phi]]] = {}
    for (blk, key), phi in phis.items():
        block_phis.setdefault(blk, []).append((key, phi))
    loads: dict[int, Value] = {}
    stack = [(tree.order[0], {key: UNDEF for key in slots})]
    while stack:
        b, cur = stack.pop()
        cur = dict(cur)
        for key, phi in block_phis.get(b, []):
            cur[key] = phi.result
        for inst in b.instructions:
            key = by_inst.get(id(inst))
            if key is None:
                continue
            if inst.op == "st":
                v = inst.args[1]
                cur[key] = Const(slot_type[key], v.bits) if isinstance(v, Const) else v
            else:
                loads[id(inst)] = cur[key]
        for s in b.succs:
            for key, phi in block_phis.get(s, []):
                for k, p in enumerate(s.preds):
                    if p is b:
                        phi.args[k] = cur[key]
        for c in reversed(tree.children[b]):
            stack.append((c, cur))
    return _Plan(phis, loads, slot_type)


def _reads_undef(plan: _Plan) -> bool:
    """Whether a load may read bytes never stored (directly or through phis)."""
    undef_phis: set[Value] = set()
    changed = True
    while changed:
        changed = False
        for phi in plan.phis.values():
            if phi.result not in undef_phis and any(a is UNDEF or a in undef_phis for a in phi.args):
                undef_phis.add(phi.result)
                changed = True
    return any(v is UNDEF or v in undef_phis for v in plan.loads.values())


def _commit(fn: Function, acc, plan: _Plan) -> None:
    for (blk, key), phi in plan.phis.items():
        phi.args = [Const(plan.slot_type[key], 0) if a is UNDEF else a for a in phi.args]
        blk.phis.append(phi)
    repl: dict[Value, Value] = {}
    dead = {id(i) for i in acc.address_insts}
    for a in acc.accesses:
        inst = a.inst
        if a.is_store:
            dead.add(id(inst))
            continue
        v = plan.loads[id(inst)]
        r = inst.result
        if v is UNDEF:
            repl[r] = Const(r.type, 0)
            dead.add(id(inst))
        elif v.type == r.type or v.type.kind in "bus" and r.type.kind in "bus":
            repl[r] = v
            dead.add(id(inst))
        else:  # a bit copy into the load's register type
            inst.op, inst.type, inst.args, inst.attrs = "mov", r.type, [v], {}
    for b in fn.blocks:
        b.instructions = [i for i in b.instructions if id(i) not in dead]
    replace_uses(fn, repl)
    fn.variables = [v for v in fn.variables if v is not acc.var]
