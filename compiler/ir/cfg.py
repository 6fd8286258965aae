"""Control-flow and call-graph utilities: the one home of the graph algorithms the compiler and the
engines share.

Each algorithm comes in two forms: a generic one over any graph (nodes plus a successor or
predecessor function, so the backend runs it on machine blocks named by strings) and one over the
IR (:class:`xcc.ir.core.Function`: ``fn.entry`` is ``fn.blocks[0]``, edges are ``block.succs`` and
``block.preds``).

- :func:`reverse_postorder`: iterative depth-first search from the entry, successors in order;
- :func:`dominators` / :func:`post_dominators`: the iterative data-flow algorithm in set form
  (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", 2001), post-dominators on the
  reverse CFG with a virtual exit (:data:`EXIT`) after every block without successors;
- :func:`immediate` picks the immediate (post-)dominator out of those sets;
- :func:`natural_loops`: back edges (``t -> h`` where ``h`` dominates ``t``) and the loop bodies
  they close (Aho, Lam, Sethi and Ullman, "Compilers", 2nd ed., section 9.6.6);
- :func:`callees`, :func:`call_graph`, :func:`reachable_functions`: the direct calls of a function,
  the call graph of a module, and the functions a kernel reaches through calls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xcc.ir.core import Block, Function, Instruction, Module

N = TypeVar("N", bound=Hashable)

EXIT = "<exit>"
"""The virtual exit node of :func:`post_dominator_sets`: the successor of every block that has none."""


# ------------------------------------------------------------------------------------ orders


def reverse_postorder_from(entry: N, succs: Callable[[N], Iterable[N]]) -> list[N]:
    """The nodes reachable from ``entry`` in reverse postorder of an iterative depth-first search that
    visits each node's successors in the order ``succs`` gives them (nodes are told apart by
    identity).  Every node comes before its successors except along back edges."""
    seen, post = {id(entry)}, []
    stack = [(entry, iter(succs(entry)))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if id(s) not in seen:
                seen.add(id(s))
                stack.append((s, iter(succs(s))))
                break
        else:
            post.append(node)
            stack.pop()
    return post[::-1]


def reverse_postorder(fn: Function) -> list[Block]:
    """``fn``'s blocks reachable from its entry, in reverse postorder (:func:`reverse_postorder_from`)."""
    return reverse_postorder_from(fn.entry, lambda b: b.succs)


def reachable_blocks(fn: Function) -> set[Block]:
    """The blocks of ``fn`` reachable from its entry."""
    return set(reverse_postorder(fn))


# ------------------------------------------------------------------------------------ dominance


def dominator_sets(nodes: Sequence[N], entry: N, preds: Callable[[N], Iterable[N]]) -> dict[N, set[N]]:
    """For each of ``nodes``, the set of nodes that dominate it (itself included): every path from
    ``entry`` to it passes them.  Cooper, Harvey and Kennedy's iterative data-flow algorithm in set
    form: start from "everything" and intersect over the predecessors (those among ``nodes``) to the
    greatest fixed point, which does not depend on the visiting order.  A node unreachable from
    ``entry`` gets an arbitrary superset of itself."""
    everything = set(nodes)
    dom = {n: set(everything) for n in nodes}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n == entry:
                continue
            ps = [p for p in preds(n) if p in everything]
            new = set.intersection(*(dom[p] for p in ps)) | {n} if ps else {n}
            if new != dom[n]:
                dom[n], changed = new, True
    return dom


def dominators(fn: Function) -> dict[Block, set[Block]]:
    """For each block of ``fn``, the set of blocks that dominate it (itself included)."""
    return dominator_sets(fn.blocks, fn.entry, lambda b: b.preds)


def post_dominator_sets(nodes: Sequence[N], succs: Callable[[N], Sequence[N]]) -> dict[N | str, set[N | str]]:
    """For each of ``nodes`` and the virtual :data:`EXIT`, the set of nodes that post-dominate it (itself
    included): every path from it to the exit passes them.  Dominators (:func:`dominator_sets`) of the
    reverse CFG rooted at :data:`EXIT`, which follows every node without successors.  A node from
    which no path leaves (an endless loop) keeps every node, :data:`EXIT` included."""
    order: list[N | str] = [EXIT, *reversed(nodes)]
    out = {n: list(succs(n)) or [EXIT] for n in nodes}
    return dominator_sets(order, EXIT, lambda n: out[n])


def post_dominators(fn: Function) -> dict[Block | str, set[Block | str]]:
    """For each block of ``fn`` and :data:`EXIT`, the set of blocks that post-dominate it."""
    return post_dominator_sets(fn.blocks, lambda b: b.succs)


def immediate(sets: Mapping[N, set[N]], n: N, default=None):
    """The immediate (post-)dominator of ``n`` from its (post-)dominator sets: the strict one that every
    other strict one (post-)dominates; ``default`` if there is none (the entry, or :data:`EXIT`).

    It is unique wherever the sets are meaningful.  Where they are not (a node unreachable from the
    entry, or one in an endless loop for post-dominators, whose set is every node), several qualify and
    the first in the order of ``sets`` is taken, so that the answer never depends on set iteration
    order (string hashing changes from run to run)."""
    strict = sets[n] - {n}
    for c in sets:
        if c in strict and all(o in sets[c] for o in strict):
            return c
    return default


def immediate_dominators(fn: Function) -> dict[Block, Block | None]:
    """Each block's immediate dominator (None for the entry), for the blocks reachable from the entry."""
    dom = dominators(fn)
    return {b: immediate(dom, b) for b in reverse_postorder(fn)}


def immediate_post_dominators(fn: Function) -> dict[Block, Block | str]:
    """Each block's immediate post-dominator, :data:`EXIT` where every path leaves the function first."""
    pdom = post_dominators(fn)
    return {b: immediate(pdom, b, EXIT) for b in fn.blocks}


# ------------------------------------------------------------------------------------ loops


@dataclass
class Loop:
    """A natural loop: its ``header``, the ``latches`` whose back edges return to it (in reverse
    postorder) and its ``body`` (header and latches included)."""

    header: Block
    latches: list[Block]
    body: set[Block]


def back_edges(fn: Function, dom: Mapping[Block, set[Block]] | None = None) -> list[tuple[Block, Block]]:
    """The edges ``t -> h`` between blocks reachable from the entry where ``h`` dominates ``t``, in
    reverse postorder of ``t``, successors in order."""
    dom = dominators(fn) if dom is None else dom
    return [(t, h) for t in reverse_postorder(fn) for h in t.succs if h in dom[t]]


def natural_loops(fn: Function, dom: Mapping[Block, set[Block]] | None = None) -> list[Loop]:
    """One :class:`Loop` per header of a back edge, in reverse postorder of the headers: the body of
    ``t -> h`` is ``h`` and every block that reaches ``t`` without passing ``h`` (found backwards from
    ``t``); back edges to one header share a loop."""
    rank = {b: k for k, b in enumerate(reverse_postorder(fn))}
    loops: dict[Block, Loop] = {}
    for t, h in back_edges(fn, dom):
        loop = loops.setdefault(h, Loop(h, [], {h}))
        loop.latches.append(t)
        work = [t]
        while work:
            b = work.pop()
            if b not in loop.body:
                loop.body.add(b)
                work.extend(p for p in b.preds if p in rank)
    return sorted(loops.values(), key=lambda lp: rank[lp.header])


# ------------------------------------------------------------------------------------ calls


def callees(fn: Function) -> list[tuple[str, Instruction]]:
    """``fn``'s call instructions in order with the name each calls (None for an indirect call that
    :mod:`xcc.ir.funcptr` has not resolved)."""
    return [(i.attrs["callee"], i) for i in fn.instructions() if i.op == "call"]


def call_graph(module: Module | Iterable[Function]) -> dict[str, list[str]]:
    """Function name -> the names it calls, once per call site, in order (builtins and undefined
    functions included)."""
    functions = module.functions if isinstance(module, Module) else module
    return {f.name: [name for name, _ in callees(f)] for f in functions}


def bottom_up(functions: list[Function], graph: Mapping[str, list[str]] | None = None) -> list[Function]:
    """``functions`` in depth-first postorder of the call graph (callees before their callers), the
    roots taken in the order given; ``graph`` maps a name to the names it calls (by default
    :func:`call_graph` of ``functions``; names not among ``functions`` are ignored)."""
    by_name = {f.name: f for f in functions}
    if graph is None:
        graph = call_graph(functions)
    order: list[Function] = []
    seen: set[str] = set()
    for f in functions:
        if f.name in seen:
            continue
        seen.add(f.name)
        stack = [(f.name, iter(graph.get(f.name, ())))]
        while stack:
            name, it = stack[-1]
            nxt = next((n for n in it if n not in seen and n in by_name), None)
            if nxt is None:
                stack.pop()
                order.append(by_name[name])
            else:
                seen.add(nxt)
                stack.append((nxt, iter(graph.get(nxt, ()))))
    return order


def reachable_functions(fn: Function, functions: Mapping[str, Function],
                        resolve: Callable[[str, Instruction], Function | None] | None = None) -> list[Function]:
    """``fn`` and every function it calls, transitively, in breadth-first discovery order.

    ``resolve(name, call)`` gives the function a call reaches, or None to leave the call out (it may
    raise to refuse the call); by default, the device function ``functions[name]``, leaving out
    builtins, undefined names and kernels, which code generation refuses where it selects the call."""
    if resolve is None:
        def resolve(name: str, _: Instruction) -> Function | None:
            g = functions.get(name)
            return g if g is not None and not g.is_entry else None
    order, seen, work = [fn], {fn.name}, deque([fn])
    while work:
        for name, inst in callees(work.popleft()):
            if name in seen:
                continue
            g = resolve(name, inst)
            if g is not None:
                seen.add(name)
                order.append(g)
                work.append(g)
    return order
