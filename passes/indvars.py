"""Induction-variable simplification: strength reduction of expressions of a loop's induction variables.

Operator strength reduction after Cooper, Simpson and Vick ("Operator Strength Reduction", TOPLAS 2001) and
LLVM's ``IndVarSimplify``/``LoopStrengthReduce``, on loops with a preheader and one latch.  A *basic*
induction variable is a header phi ``i = phi [start from the preheader, i + step from the latch]`` with a
loop-invariant ``step``.  In the loop body, in reverse postorder:

* ``mul.lo i, k`` / ``shl i, k`` (``k`` invariant, a constant for shifts, the width of ``i``) becomes a new
  induction variable ``j = phi [start * k, j + step * k]``: exact modulo 2^w, as the wrap-around of the
  original is (``(i + s) * k == i*k + s*k``, ``(i + s) << k == (i << k) + (s << k)``);
* ``cvt.s64.s32 i`` / ``cvt.u64.u32 i`` / ``mul.wide i, k`` become 64-bit induction variables only when ``i``
  provably never wraps while the loop runs: its step is 1 and the loop is *top-tested* on it, i.e. the
  header (or the chain of one-way blocks it falls into) ends in ``cbr (setp.lt i, bound)`` (signed for the
  sign-extension, unsigned for the zero-extension) leaving the loop when false, the extension and the
  increment lie below the test, so every value ``i`` takes there is below ``bound`` and ``i + 1`` cannot
  pass the type's maximum.  Bottom-tested loops are left alone: their first iteration is not tested;
* ``add a, x`` of an induction variable ``x`` and an invariant ``a`` whose result is the address of a
  load, store or atomic becomes a pointer induction variable ``p = phi [a + start, p + step]``.

New start values and steps are computed in the preheader (folded when constant), the new increments at the
end of the latch.  The replaced instructions go; induction variables left without uses (the old cvt and
shl chains) are removed by ``dce``, which sweeps dead phi cycles.  The exit test is not rewritten onto a
reduced variable (that needs the bound's pointer, and a proof that it does not wrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import Loop, natural_loops
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import ptx_type
from xcc.passes.loop_utils import dominator_tree, ensure_preheader
from xcc.passes.manager import FunctionPass
from xcc.passes.memory_model import space_of

ACCESSES = ("ld", "st", "atom")


@dataclass
class IV:
    """``value`` takes ``start`` in the first iteration and grows by ``step`` per iteration (modulo 2^w)."""

    value: Value
    start: Value
    step: Value


@dataclass(frozen=True)
class InductionVariableSimplification(FunctionPass):
    """Strength-reduce multiplications, shifts, extensions and address additions of induction variables."""

    name: ClassVar[str] = "indvars"

    def run_function(self, fn: Function) -> None:
        loops = natural_loops(fn)
        if not loops:
            return
        for loop in loops:
            if len(loop.latches) == 1 and [p for p in loop.header.preds if p not in loop.body]:
                ensure_preheader(fn, loop)
        tree = dominator_tree(fn)
        dom, rpo = tree.sets(), tree.rpo
        for loop in sorted(natural_loops(fn, dom), key=lambda lp: len(lp.body)):
            if len(loop.latches) == 1 and len(loop.header.preds) == 2:
                _Reducer(fn, loop, dom, rpo).run()


class _Reducer:
    def __init__(self, fn: Function, loop: Loop, dom, rpo: list[Block]):
        self.fn, self.loop, self.dom = fn, loop, dom
        self.body = [b for b in rpo if b in loop.body]
        self.latch = loop.latches[0]
        h = loop.header
        self.li = h.preds.index(self.latch)
        self.pre = h.preds[1 - self.li]
        self.defs = {i.result: i for b in self.body for i in b.instructions if i.result is not None}
        self.inside = set(self.defs) | {p.result for b in self.body for p in b.phis}
        self.ivs: dict[Value, IV] = {}
        self.uses_as_address = {i.args[0] for b in self.body for i in b.instructions
                                if i.op in ACCESSES and i.args and space_of(i) != "param"}
        self.wanted = self._address_chains()
        self.pre_code: list[Instruction] = []
        self.latch_code: list[Instruction] = []

    def run(self) -> None:
        self._basic()
        if not self.ivs:
            return
        repl: dict[Value, Value] = {}
        for b in self.body:
            kept = []
            for inst in b.instructions:
                inst.args = [repl.get(x, x) for x in inst.args]
                new = self._reduce(inst) if inst.result is not None else None
                if new is None:
                    kept.append(inst)
                else:
                    repl[inst.result] = new
            b.instructions = kept
        if not repl:
            return
        term = self.pre.instructions.pop()
        for inst in self.pre_code:
            self.pre.append(inst)
        self.pre.append(term)
        term = self.latch.instructions.pop()
        for inst in self.latch_code:
            self.latch.append(inst)
        self.latch.append(term)
        replace_uses(self.fn, repl)

    def _address_chains(self) -> set[Value]:
        """The additions that form addresses from a cvt/mul/shl chain over the loop's values, with those chains,
        where every value of a chain is used only by the chain: only these are reduced, so that after ``dce``
        one pointer increment replaces the chain (elsewhere a new induction variable would add a register and
        an addition per iteration for nothing)."""
        users: dict[Value, list[Instruction]] = {}
        for b in self.body:
            for i in b.instructions:
                for a in i.args:
                    users.setdefault(a, []).append(i)
        wanted: set[Value] = set()
        roots = [v for v in self.uses_as_address if v in self.defs and self.defs[v].op == "add"]
        work = list(roots)
        while work:
            v = work.pop()
            if v in wanted:
                continue
            wanted.add(v)
            for a in self.defs[v].args:
                d = self.defs.get(a)
                if d is not None and d.op in ("cvt", "mul", "shl", "add"):
                    work.append(a)
        changed = True
        while changed:
            changed = False
            for v in list(wanted):
                inst = self.defs[v]
                outside = v not in self.uses_as_address and any(
                    u.result not in wanted for u in users.get(v, []))
                fed = inst.op != "add" or any(a in wanted for a in inst.args)
                if outside or not fed:
                    wanted.discard(v)
                    changed = True
        return wanted

    def _inv(self, v: Value) -> bool:
        return isinstance(v, Const) or v not in self.inside

    # ------------------------------------------------------------------ basic induction variables
    def _basic(self) -> None:
        for phi in self.loop.header.phis:
            nxt = self.defs.get(phi.args[self.li])
            if nxt is None or nxt.op not in ("add", "sub") or not _integer(nxt) or nxt.type.bits != phi.result.type.bits:
                continue
            a, b = nxt.args
            if a is phi.result and self._inv(b):
                step = b
                if nxt.op == "sub":
                    if not isinstance(b, Const):
                        continue
                    step = Const(b.type, -b.bits)
            elif b is phi.result and nxt.op == "add" and self._inv(a):
                step = a
            else:
                continue
            self.ivs[phi.result] = IV(phi.result, phi.args[1 - self.li], step)

    # ------------------------------------------------------------------ reductions
    def _reduce(self, inst: Instruction) -> Value | None:
        op, a, at = inst.op, inst.args, inst.attrs
        if not _integer(inst) or inst.result not in self.wanted:
            return None
        bits = inst.result.type.bits
        if op in ("mul", "shl") and at.get("mode", "lo") == "lo" and len(a) == 2:
            x, k = (a[0], a[1]) if a[0] in self.ivs else (a[1], a[0]) if op == "mul" else (None, None)
            if x not in self.ivs or not self._inv(k) or (op == "shl" and not isinstance(k, Const)):
                return None
            if inst.type.bits != bits or x.type.bits != bits:
                return None
            iv = self.ivs[x]
            args0 = [iv.start, k] if x is a[0] else [k, iv.start]
            argss = [iv.step, k] if x is a[0] else [k, iv.step]
            return self._new_iv(self._pre(inst, args0), self._pre(inst, argss), inst.result.type)
        if op == "cvt" and bits == 64 and at.get("src") in ("s32", "u32") and len(at) == 1 and a[0] in self.ivs:
            if not self._never_wraps(a[0], at["src"][0] == "s"):
                return None
            return self._new_iv(self._pre(inst, [self.ivs[a[0]].start]), Const(ptx_type("s64"), 1),
                                inst.result.type)
        if op == "mul" and at.get("mode") == "wide" and bits == 64 and isinstance(a[1], Const) and a[0] in self.ivs:
            if not self._never_wraps(a[0], inst.type.kind == "s"):
                return None
            k = a[1].bits - (1 << 32) if inst.type.kind == "s" and a[1].bits >> 31 else a[1].bits
            return self._new_iv(self._pre(inst, [self.ivs[a[0]].start, a[1]]), Const(ptx_type("s64"), k),
                                inst.result.type)
        if op == "add" and len(a) == 2 and inst.type.bits == bits:
            x, other = (a[0], a[1]) if a[0] in self.ivs else (a[1], a[0])
            if x not in self.ivs or not self._inv(other) or x.type.bits != bits:
                return None
            iv = self.ivs[x]
            args0 = [iv.start, other] if x is a[0] else [other, iv.start]
            return self._new_iv(self._pre(inst, args0), iv.step, inst.result.type)
        return None

    def _new_iv(self, start: Value, step: Value, t) -> Value:
        """``j = phi [start, j + step]`` in the header, its increment at the end of the latch."""
        h = self.loop.header
        j, nxt = Value(t), Value(t)
        add_t = ptx_type(f"u{t.bits}")
        self.latch_code.append(Instruction("add", add_t, [j, step], nxt, {}, None, None))
        args = [None, None]
        args[self.li], args[1 - self.li] = nxt, start
        h.phis.append(Phi(j, args, h))
        self.ivs[j] = IV(j, start, step)
        return j

    def _pre(self, like: Instruction, args: list[Value]) -> Value:
        """``like`` applied to ``args`` in the preheader (a constant when they all are; ``x`` for ``x + 0``,
        ``x * 1`` and ``x << 0``)."""
        identity = {"add": 0, "mul": 1, "shl": 0}.get(like.op)
        if identity is not None and like.attrs.get("mode", "lo") == "lo" and len(args) == 2 \
                and args[0].type.bits == like.result.type.bits:
            k = [x for x in args if isinstance(x, Const) and x.bits == identity]
            rest = [x for x in args if not (isinstance(x, Const) and x.bits == identity)]
            if k and len(rest) == 1 and (like.op != "shl" or args[1] is k[0]):
                return rest[0]
        if all(isinstance(x, Const) for x in args):
            from xcc.ir.fold import try_fold

            bits = try_fold(Instruction(like.op, like.type, args, like.result, like.attrs), args)
            if bits is not None:
                return Const(like.result.type, bits)
        v = Value(like.result.type)
        self.pre_code.append(Instruction(like.op, like.type, list(args), v, dict(like.attrs), like.loc,
                                         like.debug_loc))
        return v

    # ------------------------------------------------------------------ the no-wrap proof
    def _never_wraps(self, x: Value, signed: bool) -> bool:
        """``x`` steps by 1 and the loop is top-tested ``x < bound`` (signed or unsigned) above every use."""
        iv = self.ivs[x]
        if not isinstance(iv.step, Const) or iv.step.bits != 1 or not isinstance(x, Value) or \
                not any(p.result is x for p in self.loop.header.phis):
            return False
        b = self.loop.header
        while b.terminator is not None and b.terminator.op == "br":
            nxt = b.succs[0]
            if nxt not in self.loop.body or nxt is self.loop.header or len(nxt.preds) != 1:
                return False
            b = nxt
        term = b.terminator
        if term is None or term.op != "cbr":
            return False
        p, (t, f) = term.args[0], term.targets
        test = _def_in(p, b)
        if test is not None and test.op == "not":
            t, f = f, t
            test = _def_in(test.args[0], b)
        if test is None or test.op != "setp" or "bool" in test.attrs or test.attrs.get("negate"):
            return False
        cmp, kind = test.attrs.get("cmp"), test.type.kind
        ok_cmp = (cmp == "lt" and kind == "s") if signed else (cmp == "lo" or (cmp == "lt" and kind in "ub"))
        if not ok_cmp or test.args[0] is not x or not self._inv(test.args[1]):
            return False
        if test.type.bits != x.type.bits or t not in self.loop.body or f in self.loop.body or len(t.preds) != 1:
            return False
        nxt = self.defs[self.loop.header.phis[[ph.result for ph in self.loop.header.phis].index(x)].args[self.li]]
        below = [blk for blk in self.body if t in self.dom[blk]]
        return nxt.block in below and all(
            i.block in below for i in self._users(x) if i.op in ("cvt", "mul"))

    def _users(self, v: Value) -> list[Instruction]:
        return [i for b in self.body for i in b.instructions if v in i.args]


def _def_in(v: Value, b: Block) -> Instruction | None:
    return next((i for i in b.instructions if i.result is v), None)


def _integer(inst: Instruction) -> bool:
    t = inst.type
    return (t is not None and t.kind in ("u", "s", "b") and t.name not in ("f16x2", "bf16x2")
            and not inst.attrs.get("sat") and not inst.attrs.get("carry") and inst.result is not None
            and inst.result.type.kind != "pred")
