"""Sparse conditional constant propagation (Wegman and Zadeck, "Constant Propagation with Conditional
Branches", TOPLAS 1991; LLVM's ``SCCP``).

Each SSA value sits on the lattice TOP (no value seen yet) > constant > BOTTOM (varies), and each CFG edge
is executable or not.  Starting from the entry, a CFG worklist marks edges executable and visits the
blocks they reach; an SSA worklist re-visits the users of a value whose lattice cell dropped.  A phi
takes the meet of its operands on executable edges only, so a value that is constant along every path
actually taken is found even when other paths would give other values.  A pure instruction
(:data:`xcc.ir.evaluate.PURE_OPS`) whose operands are constants gets the value
:func:`xcc.ir.evaluate.evaluate` computes, i.e. the interpreters' own semantics (an operation the
semantics refuse, an :class:`~xcc.diagnostics.UnsupportedError`, stays BOTTOM); ``selp`` on a constant
predicate takes the chosen operand's cell; ``and`` with 0, ``or`` with all ones and integer ``mul.lo`` by 0
are constant even when the other operand varies.  Everything else (loads, special registers, warp collectives)
is BOTTOM.  A ``cbr`` on a constant marks only the taken edge; one on a value still TOP at the fixed point
is made BOTTOM (both edges) and the propagation resumes.

Afterwards constant values replace their uses, the instructions and phis that computed them go, a ``cbr``
on a constant becomes a ``br``, and the blocks never reached are removed with their edges.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.fold import try_fold
from xcc.ir.ops import HALF_TYPES, PURE_OPS
from xcc.ir.rewrite import remove_edge, replace_uses
from xcc.passes.manager import FunctionPass

BOTTOM = object()
"""The lattice cell of a value that is not one constant."""


def fold(inst: Instruction, args: list[Const]) -> Const | None:
    """The constant result of pure ``inst`` on constant ``args`` (its result's type), or None where the
    semantics have no rule for it (:func:`xcc.ir.fold.fold_bits`: integer folds without numpy)."""
    if inst.op not in PURE_OPS or inst.result is None:
        return None
    r = try_fold(inst, args)
    return None if r is None else Const(inst.result.type, r)


@dataclass(frozen=True)
class SparseConditionalConstantPropagation(FunctionPass):
    """Wegman-Zadeck SCCP: constants through phis on executable edges, folding by the interpreters'
    semantics, never-taken edges and unreachable blocks removed."""

    name: ClassVar[str] = "sccp"

    def run_function(self, fn: Function) -> None:
        lat, live = _Solver(fn).solve()
        _rewrite(fn, lat, live)


class _Solver:
    def __init__(self, fn: Function):
        self.fn = fn
        self.lat: dict[Value, object] = {}  # Value -> int bits | BOTTOM; absent: TOP
        self.edges: set[tuple[int, int]] = set()
        self.live: set[Block] = set()
        self.users: dict[Value, list[Instruction | Phi]] = {}
        for b in fn.blocks:
            for u in [*b.phis, *b.instructions]:
                for a in u.args:
                    if not isinstance(a, Const):
                        self.users.setdefault(a, []).append(u)
        self.cfg_work: deque[tuple[Block | None, Block]] = deque([(None, fn.entry)])
        self.ssa_work: deque[Instruction | Phi] = deque()

    def cell(self, v: Value):
        return v.bits if isinstance(v, Const) else self.lat.get(v)

    def set(self, v: Value, new) -> None:
        if new is None or self.lat.get(v) is new or self.lat.get(v) == new and new is not BOTTOM:
            return
        self.lat[v] = new
        self.ssa_work.extend(self.users.get(v, ()))

    def solve(self):
        while True:
            self._propagate()
            stuck = [b for b in self.fn.blocks if b in self.live and b.terminator.op == "cbr"
                     and self.cell(b.terminator.args[0]) is None]
            if not stuck:
                return self.lat, self.live
            for b in stuck:  # a branch on a value never resolved: both ways
                self.lat[b.terminator.args[0]] = BOTTOM
                self._visit(b.terminator)

    def _propagate(self) -> None:
        while self.cfg_work or self.ssa_work:
            while self.cfg_work:
                p, b = self.cfg_work.popleft()
                key = (id(p), id(b))
                if key in self.edges:
                    continue
                self.edges.add(key)
                for phi in b.phis:
                    self._visit(phi)
                if b not in self.live:
                    self.live.add(b)
                    for inst in b.instructions:
                        self._visit(inst)
            while self.ssa_work and not self.cfg_work:
                u = self.ssa_work.popleft()
                if u.block in self.live:
                    self._visit(u)

    def _visit(self, u: Instruction | Phi) -> None:
        if u.result is not None and self.lat.get(u.result) is BOTTOM:  # the lattice only goes down
            return
        if isinstance(u, Phi):
            self.set(u.result, self._meet(u))
            return
        if u.op == "br":
            self.cfg_work.append((u.block, u.targets[0]))
        elif u.op == "cbr":
            c = self.cell(u.args[0])
            if c is BOTTOM:
                self.cfg_work.extend((u.block, t) for t in u.targets)
            elif c is not None:
                self.cfg_work.append((u.block, u.targets[0 if c else 1]))
        elif u.result is not None:
            self.set(u.result, self._evaluate(u))

    def _meet(self, phi: Phi):
        out = None
        for a, p in zip(phi.args, phi.block.preds):
            if (id(p), id(phi.block)) not in self.edges:
                continue
            c = self.cell(a)
            if c is BOTTOM or out is not None and c is not None and c != out:
                return BOTTOM
            out = c if c is not None else out
        return out

    def _evaluate(self, inst: Instruction):
        if inst.op not in PURE_OPS:
            return BOTTOM
        cells = [self.cell(a) for a in inst.args]
        if inst.op == "selp" and cells[2] is not None and cells[2] is not BOTTOM:
            return cells[0] if cells[2] else cells[1]
        absorbed = _absorbing(inst, cells)
        if absorbed is not None:
            return absorbed
        if any(c is BOTTOM for c in cells):
            return BOTTOM
        if any(c is None for c in cells):
            return None
        r = fold(inst, [Const(a.type, c) for a, c in zip(inst.args, cells)])
        return BOTTOM if r is None else r.bits


def _absorbing(inst: Instruction, cells: list) -> int | None:
    """``and`` with 0, ``or`` with all ones, integer ``mul.lo`` by 0: the result whatever the other operand
    is (as LLVM's SCCP does for an overdefined operand)."""
    t = inst.type
    if inst.op not in ("and", "or", "mul") or t.name in HALF_TYPES or t.bits > 64 or t.is_float:
        return None
    if set(inst.attrs) - {"mode"} or inst.attrs.get("mode", "lo") != "lo" or inst.result.type.bits != t.bits:
        return None
    ones = (1 << t.bits) - 1 if t.bits > 1 else 1
    absorbing = ones if inst.op == "or" else 0
    for a, c in zip(inst.args, cells):
        if c is not None and c is not BOTTOM and a.type.bits == t.bits and c & ones == absorbing:
            return absorbing
    return None


def _rewrite(fn: Function, lat: dict, live: set[Block]) -> None:
    repl: dict[Value, Value] = {}
    for b in fn.blocks:
        if b not in live:
            continue
        kept_phis = []
        for phi in b.phis:
            c = lat.get(phi.result)
            if c is not None and c is not BOTTOM:
                repl[phi.result] = Const(phi.result.type, c)
            else:
                kept_phis.append(phi)
        b.phis = kept_phis
        kept = []
        for inst in b.instructions:
            c = lat.get(inst.result) if inst.result is not None else None
            if c is not None and c is not BOTTOM and inst.op in PURE_OPS:
                repl[inst.result] = Const(inst.result.type, c)
            else:
                kept.append(inst)
        b.instructions = kept
    replace_uses(fn, repl)
    for b in fn.blocks:
        term = b.terminator
        if b in live and term.op == "cbr" and isinstance(term.args[0], Const):
            taken, dead = term.targets if term.args[0].bits else term.targets[::-1]
            term.op, term.args, term.attrs = "br", [], {"targets": [taken]}
            remove_edge(b, dead)  # one edge b -> dead (both arms to one block: one of the two)
    for b in fn.blocks:
        if b not in live:
            for s in b.succs:
                if s in live:
                    remove_edge(b, s)
    fn.blocks = [b for b in fn.blocks if b in live]
