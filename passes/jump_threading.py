"""Jump threading: a predecessor whose edge fixes a block's branch jumps straight to the known target
(LLVM's ``JumpThreading``, the phi-of-constants case; Mueller and Whalley, "Avoiding Conditional
Branches by Code Replication", PLDI 1995).

For a block ``B`` ending in ``cbr c`` with at least two predecessors and at most ``max_dup`` instructions
before the branch, all pure (:data:`xcc.ir.evaluate.PURE_OPS`): for each predecessor ``P`` (not ``B``) the
phis of ``B`` are bound to their operands from ``P`` and ``B``'s instructions folded with
:func:`xcc.passes.sccp.fold` (the interpreters' semantics).  When ``c`` comes out constant, ``P`` gets
its own copy ``B'`` of ``B`` (the phis replaced by ``P``'s operands) ending in ``br T``, the known target;
``T``'s phis take on the edge from ``B'`` the copies of what they took from ``B``.  An edge is threaded only
where no value of ``B`` is used in the region ``T`` reaches without passing ``B`` (but for ``T``'s phis on
the edge from ``B``), so every use stays dominated by its definition without new phis.  ``B`` loses the
edge from ``P`` and is removed once unreachable.  At most ``max_threads`` edges are threaded per function.

Only functions without warp-collective operations (``shfl``, ``vote``, ``match``, ``redux``, matrix ops,
``activemask``) or calls are threaded: the copy changes which threads of a warp run ``B`` together, and
the interpreters' reconvergence (by block position, and BSSY/BSYNC at immediate post-dominators) must
not change what a warp collective sees.  CTA barriers count threads, so they do not stop it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Const, Function, Instruction, Value
from xcc.ir.ops import PURE_OPS
from xcc.passes.manager import FunctionPass
from xcc.passes.sccp import fold
from xcc.passes.simplifycfg import drop_unreachable

SAFE_OPS = PURE_OPS | {"ld", "st", "atom", "fence", "br", "cbr", "ret", "exit", "trap", "ld_param", "sreg",
                       "addr_of", "cvta", "isspacep", "bar_sync", "bar_arrive", "bar_red"}
"""The operations a threaded function may hold: none of them depends on which threads of a warp run it
together (CTA barriers count threads, not warps)."""


@dataclass(frozen=True)
class JumpThreading(FunctionPass):
    """Thread a predecessor across a block whose cbr condition its phi operands make constant (bounded
    duplication of pure instructions)."""

    name: ClassVar[str] = "jump-threading"
    max_dup: int = 6
    max_threads: int = 32

    def run_function(self, fn: Function) -> None:
        if any(i.op not in SAFE_OPS for i in fn.instructions()):
            return
        budget = self.max_threads
        progress = True
        while progress and budget > 0:
            progress = False
            for b in list(fn.blocks):
                if budget <= 0:
                    break
                if b in fn.blocks and self._candidate(fn, b):
                    n = _thread_block(fn, b, budget)
                    budget -= n
                    progress |= n > 0
            drop_unreachable(fn)

    def _candidate(self, fn: Function, b: Block) -> bool:
        term = b.terminator
        body = b.instructions[:-1]
        if b is fn.entry or term is None or term.op != "cbr" or not b.phis or len(set(map(id, b.preds))) < 2:
            return False
        return len(body) <= self.max_dup and all(i.op in PURE_OPS for i in body) and b not in term.targets


def _safe_uses(b: Block, target: Block) -> bool:
    """After ``P -> B' -> target`` bypasses ``b``, every use of a value ``b`` defines is still dominated by
    ``b``: none lies in the region reached from ``target`` without passing ``b``, except ``target``'s phi
    operands on the edge from ``b`` (the copy provides those); nor does an operand of ``b``'s own phis on an edge
from that region (the path through the copy reaches it without passing ``b``)."""
    own = {p.result for p in b.phis} | {i.result for i in b.instructions if i.result is not None}
    region, order, work = {target}, [target], [target]
    while work:
        for s in work.pop().succs:
            if s is not b and s not in region:
                region.add(s)
                order.append(s)
                work.append(s)
    for phi in b.phis:  # an edge back into b from the region must not carry a value of b
        if any(a in own and p in region for a, p in zip(phi.args, b.preds)):
            return False
    for x in order:
        for phi in x.phis:
            for a, p in zip(phi.args, x.preds):
                if a in own and p is not b and p in region:
                    return False
        for inst in x.instructions:
            if any(a in own for a in inst.args):
                return False
    return True


def _known_target(b: Block, k: int) -> tuple[Block, dict[Value, Value]] | None:
    """The target ``b``'s branch takes when entered along pred edge ``k``, and the bindings of its phis."""
    env: dict[Value, Value] = {phi.result: phi.args[k] for phi in b.phis}
    for inst in b.instructions[:-1]:
        args = [env.get(a, a) for a in inst.args]
        if all(isinstance(a, Const) for a in args):
            c = fold(inst, args)
            if c is not None:
                env[inst.result] = c
    cond = env.get(b.terminator.args[0], b.terminator.args[0])
    if not isinstance(cond, Const):
        return None
    return b.terminator.targets[0 if cond.bits else 1], env


def _thread_block(fn: Function, b: Block, budget: int) -> int:
    done = 0
    for p in list(dict.fromkeys(b.preds)):
        if done >= budget or p is b or b.terminator is None:
            break
        k = b.preds.index(p)
        known = _known_target(b, k)
        if known is None:
            continue
        target, _ = known
        if not _safe_uses(b, target):
            continue
        _thread(fn, b, p, target)
        done += 1
    return done


def _thread(fn: Function, b: Block, p: Block, target: Block) -> None:
    """Give ``p`` its own copy of ``b`` ending in ``br target``."""
    k = b.preds.index(p)
    name, taken = f"{b.name}.from.{p.name}", {x.name for x in fn.blocks}
    k2 = 1
    while name in taken:  # block names stay unique (PTX labels have no dots, so only copies can collide)
        k2 += 1
        name = f"{b.name}.from.{p.name}.{k2}"
    copy = Block(name)
    vmap: dict[Value, Value] = {phi.result: phi.args[k] for phi in b.phis}
    for inst in b.instructions[:-1]:
        r = Value(inst.result.type, inst.result.name) if inst.result is not None else None
        copy.append(Instruction(inst.op, inst.type, [vmap.get(a, a) for a in inst.args], r, dict(inst.attrs),
                                inst.loc, inst.debug_loc))
        if r is not None:
            vmap[inst.result] = r
    term = b.terminator
    copy.append(Instruction("br", None, [], None, {"targets": [target]}, term.loc, term.debug_loc))
    # p -> copy instead of p -> b (every edge p has into b)
    edges = [j for j, q in enumerate(b.preds) if q is p]
    for j in reversed(edges):
        del b.preds[j]
        for phi in b.phis:
            del phi.args[j]
    pt = p.terminator
    pt.attrs["targets"] = [copy if x is b else x for x in pt.targets]
    copy.preds = [p] * len(edges)
    # copy -> target: the target's phis take the copies of what they took from b
    kb = target.preds.index(b)
    target.preds.append(copy)
    for phi in target.phis:
        phi.args.append(vmap.get(phi.args[kb], phi.args[kb]))
    fn.blocks.insert(fn.blocks.index(b), copy)
