"""CFG helpers the loop and redundancy passes share: the dominator tree, loop nests with preheaders and exits,
block splitting, and the trip count of a counted loop.

* :func:`dominator_tree`: each reachable block's immediate dominator and children (in ``fn.blocks`` order),
  by Cooper, Harvey and Kennedy's algorithm on reverse-postorder numbers;
* :func:`loops_innermost_first`: :func:`xcc.ir.cfg.natural_loops` ordered so a loop comes before any
  loop containing it;
* :func:`ensure_preheader`: a block that is the only way into a loop from outside (LLVM's
  ``LoopSimplify``: the one predecessor of the header outside the loop, ending in ``br header``, or a
  new block the outside edges are redirected through, with the header's phis split);
* :func:`exit_blocks`: the blocks outside a loop that its blocks branch to;
* :func:`counted_loop` / :func:`trip_count`: the ``i = phi [start, i + step]; cbr (i' cmp bound)`` shape of a
  loop with one latch that is also its only exit, and its constant trip count when start, step and
  bound are constants (evaluated with the interpreters' integer semantics, wrap-around included).
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.ir.cfg import Loop, natural_loops, reverse_postorder
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses


@dataclass
class DomTree:
    """Immediate dominators and dominator-tree children of the blocks reachable from the entry."""

    idom: dict[Block, Block | None]
    children: dict[Block, list[Block]]
    rpo: list[Block]

    def dominates(self, a: Block, b: Block | None) -> bool:
        while b is not None:
            if b is a:
                return True
            b = self.idom.get(b)
        return False

    def sets(self) -> _DominatorSets:
        """``dom[b]``-style membership (``a in sets[b]``: a dominates b) for :func:`xcc.ir.cfg.natural_loops`."""
        return _DominatorSets(self)


class _DominatorSets:
    def __init__(self, tree: DomTree):
        self.tree = tree

    def __getitem__(self, b: Block) -> _Dominators:
        return _Dominators(self.tree, b)


@dataclass
class _Dominators:
    tree: DomTree
    block: Block

    def __contains__(self, a: Block) -> bool:
        return self.tree.dominates(a, self.block)


def dominator_tree(fn: Function) -> DomTree:
    """Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm", 2001) on
    reverse-postorder numbers; children in ``fn.blocks`` order."""
    rpo = reverse_postorder(fn)
    num = {b: k for k, b in enumerate(rpo)}
    idom: dict[Block, Block | None] = {rpo[0]: rpo[0]}

    def intersect(a: Block, b: Block) -> Block:
        while a is not b:
            while num[a] > num[b]:
                a = idom[a]
            while num[b] > num[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            done = [p for p in b.preds if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(b) is not new:
                idom[b], changed = new, True
    idom[rpo[0]] = None
    children: dict[Block, list[Block]] = {b: [] for b in rpo}
    for b in fn.blocks:
        if b in num and idom[b] is not None:
            children[idom[b]].append(b)
    return DomTree(idom, children, rpo)


def loops_innermost_first(fn: Function, dom=None) -> list[Loop]:
    """Natural loops, a nested loop before the loops containing it (then in reverse postorder of headers)."""
    loops = natural_loops(fn, dom)
    return sorted(loops, key=lambda lp: len(lp.body))


def exit_blocks(loop: Loop, fn: Function) -> list[Block]:
    """The blocks outside ``loop`` that a block of it branches to, in ``fn.blocks`` order."""
    targets = {s for b in loop.body for s in b.succs if s not in loop.body}
    return [b for b in fn.blocks if b in targets]


def outside_preds(loop: Loop) -> list[Block]:
    return [p for p in loop.header.preds if p not in loop.body]


def ensure_preheader(fn: Function, loop: Loop) -> Block:
    """The loop's preheader: the one outside predecessor of the header when it ends in ``br header``;
    otherwise a new block, placed before the header in ``fn.blocks``, that the outside edges now reach
    the header through (the header's phis get a phi in the preheader for those edges)."""
    h = loop.header
    outs = outside_preds(loop)
    if len(outs) == 1 and outs[0].terminator.op == "br" and outs[0].succs == [h]:
        return outs[0]
    term0 = outs[0].terminator
    pre = Block(_fresh_name(fn, h.name + ".pre"))
    idx = [k for k, p in enumerate(h.preds) if p not in loop.body]
    for phi in h.phis:
        vals = [phi.args[k] for k in idx]
        if all(v is vals[0] for v in vals):
            merged = vals[0]
        else:
            merged = Value(phi.result.type)
            pre.phis.append(Phi(merged, vals, pre))
        keep = [a for k, a in enumerate(phi.args) if k not in idx]
        phi.args = [merged] + keep
    pre.preds = [h.preds[k] for k in idx]
    h.preds = [pre] + [p for k, p in enumerate(h.preds) if k not in idx]
    for p in pre.preds:
        t = p.terminator
        t.attrs["targets"] = [pre if x is h else x for x in t.targets]
    pre.append(Instruction("br", None, [], None, {"targets": [h]}, term0.loc, term0.debug_loc))
    fn.blocks.insert(fn.blocks.index(h), pre)
    return pre


def remove_trivial_phis(fn: Function) -> None:
    """Replace each phi whose operands are one value ``v`` and the phi itself by ``v`` (to a fixed point)."""
    changed = True
    while changed:
        changed = False
        repl: dict[Value, Value] = {}
        for b in fn.blocks:
            kept = []
            for phi in b.phis:
                others = {id(a): a for a in phi.args if a is not phi.result}
                target = next(iter(others.values())) if len(others) == 1 else None
                if target is not None and target not in repl:  # (never a cycle of replacements)
                    repl[phi.result] = target
                else:
                    kept.append(phi)
            b.phis = kept
        if repl:
            replace_uses(fn, repl)
            changed = True


def _fresh_name(fn: Function, base: str) -> str:
    names = {b.name for b in fn.blocks}
    name, k = base, 1
    while name in names:
        k += 1
        name = f"{base}{k}"
    return name


def split_edge(fn: Function, src: Block, dst: Block) -> Block:
    """A new block on the edge ``src -> dst`` (every such edge of ``src``), ending in ``br dst``."""
    term = src.terminator
    mid = Block(_fresh_name(fn, f"{src.name}.{dst.name}"))
    mid.preds = [src]
    t = src.terminator
    t.attrs["targets"] = [mid if x is dst else x for x in t.targets]
    dst.preds = [mid if p is src else p for p in dst.preds]
    mid.append(Instruction("br", None, [], None, {"targets": [dst]}, term.loc, term.debug_loc))
    fn.blocks.insert(fn.blocks.index(src) + 1, mid)
    return mid


@dataclass
class CountedLoop:
    """``iv = phi [start from outside, next from the latch]``, ``next = iv + step`` (or ``next = step + iv``),
    and the latch ends in ``cbr (cmp next bound)``: the loop runs again while the test is ``stay``."""

    loop: Loop
    iv: Phi
    start: Value
    step: Value
    next: Instruction
    cmp: Instruction
    bound: Value
    stay: bool  # True: targets[0] of the latch's cbr continues the loop
    next_on_left: bool  # the compare reads ``next`` as its first operand


def counted_loop(loop: Loop) -> CountedLoop | None:
    """The counted-loop shape of ``loop`` (one latch, which ends in the only exit test of the loop), or None."""
    if len(loop.latches) != 1:
        return None
    latch, h = loop.latches[0], loop.header
    term = latch.terminator
    if term is None or term.op != "cbr":
        return None
    inside = [t in loop.body for t in term.targets]
    if inside.count(True) != 1 or term.targets[inside.index(True)] is not h:
        return None
    if any(s not in loop.body for b in loop.body if b is not latch for s in b.succs):
        return None  # another exit
    if len(outside_preds(loop)) != len(h.preds) - 1:
        return None
    cmp = _def_in(term.args[0], latch)
    if cmp is None or cmp.op != "setp" or "bool" in cmp.attrs or cmp.attrs.get("negate") or cmp.type.is_float \
            or cmp.type.name in ("f16x2", "bf16x2"):
        return None
    li = h.preds.index(latch)
    oi = 0 if li == 1 else 1
    if len(h.preds) != 2:
        return None
    for phi in h.phis:
        nxt = _def_in(phi.args[li], None, loop)
        if nxt is None or nxt.op not in ("add", "sub") or nxt.attrs.get("sat") or nxt.type.is_float \
                or nxt.type.bits != cmp.type.bits:
            continue
        a, b = nxt.args
        if a is phi.result:
            step = b
        elif b is phi.result and nxt.op == "add":
            step = a
        else:
            continue
        if not is_invariant(step, loop):
            continue
        x, y = cmp.args
        if x is nxt.result and is_invariant(y, loop):
            bound, left = y, True
        elif y is nxt.result and is_invariant(x, loop):
            bound, left = x, False
        else:
            continue
        if nxt.op == "sub":
            if not isinstance(step, Const):
                continue
            step = Const(step.type, -step.bits)
        return CountedLoop(loop, phi, phi.args[oi], step, nxt, cmp, bound, inside[0], left)
    return None


def _def_in(v: Value, block: Block | None, loop: Loop | None = None) -> Instruction | None:
    """The instruction defining ``v`` if it lies in ``block`` (or in ``loop``)."""
    blocks = [block] if block is not None else loop.body
    for b in blocks:
        for inst in b.instructions:
            if inst.result is v:
                return inst
    return None


def is_invariant(v: Value, loop: Loop) -> bool:
    """``v`` is a constant or defined outside ``loop``."""
    if isinstance(v, Const):
        return True
    return not any(p.result is v for b in loop.body for p in b.phis) and \
        not any(i.result is v for b in loop.body for i in b.instructions)


def trip_count(cl: CountedLoop, limit: int = 1 << 20) -> int | None:
    """How many times the body runs (>= 1: the test is at the bottom) when start, step and bound are constants,
    by stepping the integer semantics (so wrap-around is exact); None when unknown or above ``limit``."""
    if not all(isinstance(v, Const) for v in (cl.start, cl.step, cl.bound)):
        return None
    from xcc.ir.fold import fold_bits

    t = cl.next.type
    i, step, bound = cl.start.bits, cl.step.bits, cl.bound.bits
    mask = (1 << t.bits) - 1
    for n in range(1, limit + 1):
        i = (i + step) & mask
        args = [i, bound] if cl.next_on_left else [bound, i]
        r = bool(fold_bits(cl.cmp, [Const(t, a) for a in args]))
        if r != cl.stay:
            return n
    return None


def clone_body(fn: Function, order: list[Block], header: Block, vmap: dict[Value, Value], suffix: str) -> dict:
    """Copies of the loop blocks ``order`` (header first) named ``<name><suffix>``, returned as old -> new.
    ``vmap`` maps each header phi to the value it has in the copy and receives a new value for everything the
    blocks define; the header's copy has no phis and no predecessors yet; branches to ``header`` stay
    branches to ``header`` (the caller chains the copies), to other loop blocks go to their copies."""
    bmap = {b: Block(_fresh_name(fn, b.name + suffix)) for b in order}
    for b in order:
        if b is not header:
            for phi in b.phis:
                vmap[phi.result] = Value(phi.result.type, phi.result.name)
        for inst in b.instructions:
            if inst.result is not None:
                vmap[inst.result] = Value(inst.result.type, inst.result.name)
    for b in order:
        nb = bmap[b]
        if b is not header:
            nb.phis = [Phi(vmap[p.result], [vmap.get(a, a) for a in p.args], nb) for p in b.phis]
            nb.preds = [bmap[p] for p in b.preds]
        for inst in b.instructions:
            attrs = dict(inst.attrs)
            if "targets" in attrs:
                attrs["targets"] = [t if t is header else bmap.get(t, t) for t in inst.targets]
            nb.append(Instruction(inst.op, inst.type, [vmap.get(a, a) for a in inst.args],
                                  vmap.get(inst.result) if inst.result is not None else None, attrs,
                                  inst.loc, inst.debug_loc))
    return bmap


def close_loop(fn: Function, loop: Loop, exit_: Block) -> None:
    """Loop-closed SSA: a one-operand phi in ``exit_`` (the loop's only exit, reached only from it) for every
    value of the loop used outside it, and those uses read the phi."""
    inside = {p.result for b in loop.body for p in b.phis}
    inside |= {i.result for b in loop.body for i in b.instructions if i.result is not None}
    used_outside: list[Value] = []
    seen: set[Value] = set()
    for b in fn.blocks:
        if b in loop.body:
            continue
        for a in [a for p in b.phis for a in p.args] + [a for i in b.instructions for a in i.args]:
            if not isinstance(a, Const) and a in inside and a not in seen:
                seen.add(a)
                used_outside.append(a)
    repl = {}
    for v in used_outside:
        phi = Phi(Value(v.type, v.name), [v], exit_)
        exit_.phis.append(phi)
        repl[v] = phi.result
    if not repl:
        return
    mine = {id(p) for p in exit_.phis[-len(repl):]}
    for b in fn.blocks:
        if b in loop.body:
            continue
        for p in b.phis:
            if id(p) not in mine:
                p.args = [repl.get(a, a) for a in p.args]
        for i in b.instructions:
            i.args = [repl.get(a, a) for a in i.args]
