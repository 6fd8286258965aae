"""Inlining of direct ``.func`` calls, bottom-up over the call graph, with a size-based cost model.

Source: LLVM's inliner (``llvm/lib/Transforms/IPO/Inliner.cpp``, the CGSCC walk: callees are inlined into
before their callers are considered) and its cost model (``llvm/lib/Analysis/InlineCost.cpp``: about
``InstrCost`` = 5 per instruction, ``CallPenalty`` = 25 per call, the call site's own cost credited back, a
bonus that makes the last call to a local function always profitable).  The threshold of 1100 is gpucc's
(Wu et al., "gpucc: An Open-Source GPGPU Compiler", CGO 2016, section 5.2: inlining far more eagerly than
on CPUs pays off on GPUs, where a call spills the caller's live registers and blocks optimisation).

What the pass does, for each function ``F`` in bottom-up order and each call site ``call @g`` in ``F``:

* inlines ``g`` when it is a device function with a body, not recursive (no path of calls from ``g`` back
  to ``g``: those are never inlined), and either ``g`` has exactly one call site in the module, or
  ``cost(g) - saving(call) <= threshold``, where ``cost`` counts 5 per instruction (``br``, ``ret``,
  ``phi``, ``mov`` and the ``.param`` traffic that inlining removes are free) and 25 + 5 per argument per
  call inside ``g``, and ``saving`` is the call's own 25 + 5 + 5 per argument and return value;
* the copy: ``g``'s blocks are cloned into ``F`` between the call's block and a new block holding the
  rest of it; ``g``'s ``ret`` becomes a branch to that block; ``g``'s parameters become the caller's
  argument variables (``attrs.params``) and its return parameters the caller's ``attrs.rets`` (PTX ISA
  9.0 section 5.1.6.4: the call copies the one into ``g``'s frame and the other back);
* the ``.param`` round trip then leaves memory: :func:`xcc.passes.param_slots.promote_param_slots`
  forwards every ``st.param`` to the ``ld.param`` it reaches and drops the unused ``.param`` variables;
* afterwards the device functions no call reaches any more are deleted (kernels always stay).  With
  ``whole_program`` (the default: a compile or a link sees every caller) that is every unreachable device
  function; with ``whole_program=false`` (``xcc compile -c``, where other modules may call it) only those
  without linkage (``.func`` without ``.visible``/``.weak``).

A call is left alone when the callee is a builtin (``vprintf``, ``__assertfail``) or undefined, when it is
``.weak`` and the module is not the whole program (the link may choose another module's definition: LLVM
does not inline interposable functions either), when the
call passes the same ``.param`` variable twice, when the callee writes its own input parameters or uses
their address otherwise than to load them, or when it declares variables other than ``.param`` and
``.local`` ones (those are per-function statics: copies would not share them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import bottom_up, callees
from xcc.ir.core import Block, Function, Instruction, Module, Phi, Value, Variable
from xcc.passes.manager import ModulePass
from xcc.passes.param_slots import promote_param_slots

INSTR_COST = 5  # LLVM's InlineConstants::InstrCost
CALL_PENALTY = 25  # LLVM's InlineConstants::CallPenalty
FREE_OPS = frozenset({"br", "ret", "mov"})


@dataclass(frozen=True)
class Inliner(ModulePass):
    """Inline direct calls of device functions (bottom-up, LLVM's cost model, gpucc's threshold of 1100)."""

    name: ClassVar[str] = "inline"
    threshold: int = 1100
    whole_program: bool = True

    def run(self, module: Module) -> None:
        funcs = {f.name: f for f in module.functions}
        graph = {f.name: [n for n, _ in callees(f) if n in funcs] for f in module.functions}
        recursive = _recursive(graph)
        sites: dict[str, int] = {}
        for targets in graph.values():
            for n in targets:
                sites[n] = sites.get(n, 0) + 1
        ok: dict[str, bool] = {}  # callee -> whether its body can be inlined at all
        costs: dict[str, int] = {}
        for fn in bottom_up(module.functions, graph):
            calls = [i for i in fn.instructions() if i.op == "call"]
            names = {b.name for b in fn.blocks}
            sizes = {v.name: v.size for v in fn.variables}  # fn's variables (inlining adds to them)
            follow: dict[Block, list[Block]] = {}  # block -> the blocks inlining put right after it
            # the last call first: each split of a block then moves only what lies between two calls
            for serial, call in reversed(list(enumerate(calls))):
                g = funcs.get(call.attrs.get("callee"))
                if g is None or g is fn or g.is_entry or not g.blocks or g.name in recursive:
                    continue
                if not self.whole_program and g.linkage == "weak":
                    continue  # interposable: the link may pick another module's definition
                if g.name not in ok:
                    ok[g.name], costs[g.name] = _body_inlinable(g), cost(g)
                if not ok[g.name] or not _call_fits(sizes, call, g):
                    continue
                last_call = sites.get(g.name, 0) == 1 and (self.whole_program or g.linkage is None)
                if not last_call and costs[g.name] - saving(call) > _threshold(self.threshold, fn, call):
                    continue
                block = call.block
                follow[block] = inline_call(fn, call, g, names, serial, sizes) + follow.get(block, [])
            if follow:
                fn.blocks = _placed(fn.blocks, follow)
                promote_param_slots(fn)
        remove_dead_functions(module, self.whole_program)


def _threshold(threshold: int, fn: Function, call: Instruction) -> int:
    """With a profile (xcc.profile.use): a call that ran is hot (4x the threshold), one that never ran is not
    inlined."""
    index = getattr(fn, "profile_index", None)
    warps = index.call_warps(call) if index is not None else None
    if warps is None:
        return threshold
    return threshold * 4 if warps else -(1 << 30)


def cost(g: Function) -> int:
    """The cost of ``g``'s body in LLVM's units (see the module docstring)."""
    param_addrs = {i.result for i in g.instructions() if i.op == "addr_of" and i.attrs.get("space") == "param"}
    total = 0
    for inst in g.instructions():
        if inst.op in FREE_OPS or inst.result in param_addrs:
            continue
        if inst.op in ("ld", "st") and inst.args and inst.args[0] in param_addrs:
            continue
        if inst.op == "call":
            total += CALL_PENALTY + INSTR_COST * len(inst.attrs.get("params") or [])
        total += INSTR_COST
    return total


def saving(call: Instruction) -> int:
    """What inlining ``call`` removes: the call, its penalty and one copy per argument and return value."""
    n = len(call.attrs.get("params") or []) + len(call.attrs.get("rets") or [])
    return CALL_PENALTY + INSTR_COST * (1 + n)


def _call_fits(sizes: dict[str, int], call: Instruction, g: Function) -> bool:
    """Whether ``call`` passes ``g`` distinct variables (of the caller's ``sizes``) large enough for its
    parameters."""
    params, rets = list(call.attrs.get("params") or []), list(call.attrs.get("rets") or [])
    if len(params) != len(g.params) or len(rets) > len(g.ret_params) or len(set(params + rets)) != len(params + rets):
        return False
    return all(sizes.get(v, -1) >= p.size for v, p in zip(params + rets, g.params + g.ret_params))


def _body_inlinable(g: Function) -> bool:
    """Whether ``g``'s body can be copied: only ``.param``/``.local`` variables, an entry block without
    predecessors, and its input parameters only loaded."""
    if any(v.space not in ("param", "local") for v in g.variables) or g.entry.preds or g.entry.phis:
        return False
    inputs = {p.name for p in g.params}
    addrs = {i.result for i in g.instructions()
             if i.op == "addr_of" and i.attrs.get("space") == "param" and i.attrs.get("symbol") in inputs}
    for b in g.blocks:
        if any(a in addrs for phi in b.phis for a in phi.args):
            return False
        for inst in b.instructions:
            for k, a in enumerate(inst.args):
                if a in addrs and not (inst.op == "ld" and k == 0):
                    return False  # g writes or passes on the address of its own parameter
    return True


def inline_call(fn: Function, call: Instruction, g: Function, names: set[str], serial: int = 0,
                variables: dict[str, int] | None = None) -> list[Block]:
    """Replace ``call`` (in ``fn``) by a copy of ``g``'s body (see the module docstring); returns the new
    blocks, which belong right after the call's block, in order (the caller puts them into ``fn.blocks``).
    ``names`` holds the names of ``fn``'s blocks and gets the new ones; ``serial`` tags the copies' names;
    ``variables`` (name -> size of ``fn``'s variables, computed when None) gets the variables added."""
    block = call.block
    at = next(k for k in range(len(block.instructions) - 1, -1, -1) if block.instructions[k] is call)
    base = re.sub(r"(\.i\d+(\.\d+)?\.ret)+$", "", block.name)  # the rest of a block split before keeps its name
    tag = _unique(f"i{serial}", lambda t: any(f"{b.name}.{t}" in names for b in g.blocks)
                  or f"{base}.{t}.ret" in names)
    rest = Block(f"{base}.{tag}.ret", instructions=block.instructions[at + 1:])
    for inst in rest.instructions:
        inst.block = rest
    for s in rest.succs:  # the successors' phis now come from the block after the inlined body
        s.preds = [rest if p is block else p for p in s.preds]
    block.instructions = block.instructions[:at]

    # g's variables and parameters in fn: the argument variables, fresh copies of g's own variables
    symbols = dict(zip([p.name for p in g.params], call.attrs.get("params") or []))
    symbols.update(zip([p.name for p in g.ret_params], call.attrs.get("rets") or []))
    taken = variables if variables is not None else {v.name: v.size for v in fn.variables}
    added = [Variable(p.name, "param", p.size, p.align)  # a return value the call does not take
             for p in g.ret_params[len(call.attrs.get("rets") or []):]] + g.variables
    for v in added:
        symbols[v.name] = new_name = _unique(f"{v.name}.{tag}", taken.__contains__)
        taken[new_name] = v.size
        fn.variables.append(Variable(new_name, v.space, v.size, v.align, v.init, v.extern, v.linkage, v.relocs))

    bmap = {b: Block(f"{b.name}.{tag}") for b in g.blocks}
    vmap: dict[Value, Value] = {}  # every value g defines -> its copy, first: a phi may use a later value
    for b in g.blocks:
        for x in [*b.phis, *b.instructions]:
            if x.result is not None:
                vmap[x.result] = Value(x.result.type, x.result.name)
    get = vmap.get
    for b in g.blocks:
        nb = bmap[b]
        nb.preds = [bmap[p] for p in b.preds]
        nb.phis = [Phi(vmap[phi.result], [get(a, a) for a in phi.args], nb) for phi in b.phis]
        out = nb.instructions
        for inst in b.instructions:
            op = inst.op
            if op == "ret":
                out.append(Instruction("br", None, [], None, {"targets": [rest]}, inst.loc, inst.debug_loc, nb))
                rest.preds.append(nb)
                continue
            attrs = dict(inst.attrs)
            if "targets" in attrs:
                attrs["targets"] = [bmap[t] for t in attrs["targets"]]
            if op == "addr_of" and attrs.get("space") in ("param", "local"):
                attrs["symbol"] = symbols.get(attrs["symbol"], attrs["symbol"])
            elif op == "call":
                attrs["params"] = [symbols.get(n, n) for n in attrs.get("params") or []]
                attrs["rets"] = [symbols.get(n, n) for n in attrs.get("rets") or []]
            out.append(Instruction(op, inst.type, [get(a, a) for a in inst.args],
                                   None if inst.result is None else vmap[inst.result], attrs, inst.loc,
                                   inst.debug_loc, nb))
    entry = bmap[g.entry]
    block.append(Instruction("br", None, [], None, {"targets": [entry]}, call.loc, call.debug_loc))
    entry.preds = [block]
    new = [*(bmap[b] for b in g.blocks), rest]
    names.update(b.name for b in new)
    return new


def _placed(blocks: list[Block], follow: dict[Block, list[Block]]) -> list[Block]:
    """``blocks`` with each block's ``follow`` list right after it (recursively: an inlined body's blocks
    may have bodies of their own after them)."""
    out: list[Block] = []
    stack = list(reversed(blocks))
    while stack:
        b = stack.pop()
        out.append(b)
        stack.extend(reversed(follow.get(b, [])))
    return out


def remove_dead_functions(module: Module, whole_program: bool = True) -> list[str]:
    """Delete the device functions that no kernel (nor, unless ``whole_program``, no function with linkage)
    reaches through calls; returns their names.  Kernels always stay."""
    funcs = {f.name: f for f in module.functions}
    roots = [f for f in module.functions if f.is_entry or (not whole_program and f.linkage is not None)]
    roots += [funcs[n] for v in module.variables for _, n in v.relocs if n in funcs]
    live: set[str] = set()
    work = list(roots)
    while work:
        f = work.pop()
        if f.name in live:
            continue
        live.add(f.name)
        work.extend(funcs[n] for n in referenced_functions(f) if n in funcs)
    dead = [f.name for f in module.functions if f.name not in live]
    module.functions = [f for f in module.functions if f.name in live]
    return dead


def referenced_functions(f: Function) -> list[str]:
    """The functions ``f`` calls directly or whose address it takes (``addr_of {space=code}``)."""
    return [i.attrs["callee"] if i.op == "call" else i.attrs["symbol"] for i in f.instructions()
            if (i.op == "call" and i.attrs.get("callee")) or (i.op == "addr_of" and i.attrs.get("space") == "code")]


def _recursive(graph: dict[str, list[str]]) -> set[str]:
    """The functions from which a path of calls leads back to themselves."""
    out = set()
    for start in graph:
        seen, work = set(), list(graph[start])
        while work:
            n = work.pop()
            if n == start:
                out.add(start)
                break
            if n not in seen:
                seen.add(n)
                work.extend(graph.get(n, []))
    return out


def _unique(base: str, taken) -> str:
    name, k = base, 1
    while taken(name):
        k += 1
        name = f"{base}.{k}"
    return name
