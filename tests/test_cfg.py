"""The CFG and call-graph utilities of :mod:`xcc.ir.cfg`, checked against brute-force definitions on every
function of the PTX corpus (as built, and after the -O3 pipeline), and on small hand-made graphs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from corpus import ALL_PTX, tiered

from xcc.diagnostics import LinkError, XccError
from xcc.frontend.parser import parse
from xcc.ir import cfg
from xcc.ir.build import build_module
from xcc.ir.core import Block, Function, Module
from xcc.passes import PassManager, pipeline_for_level

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _modules(path) -> list[Module]:
    try:
        ast = parse(path.read_text(), str(path))
        built = build_module(ast)
    except XccError:
        pytest.skip("the corpus file does not build")
    optimised = build_module(ast)
    try:
        PassManager(pipeline_for_level(3)).run(optimised)
    except XccError:
        return [built]
    return [built, optimised]


def _functions(path) -> list[Function]:
    return [f for m in _modules(path) for f in m.functions if f.blocks]


def _reach(start: Block, avoid: Block | None = None, back: bool = False) -> set[Block]:
    """Blocks reachable from ``start`` (along predecessors if ``back``) without entering ``avoid``."""
    seen, work = set(), [start] if start is not avoid else []
    while work:
        b = work.pop()
        if b not in seen:
            seen.add(b)
            work.extend(n for n in (b.preds if back else b.succs) if n is not avoid)
    return seen


def _to_exit(fn: Function, avoid: Block | None = None) -> set[Block]:
    """Blocks with a path to a block without successors that does not enter ``avoid``."""
    out: set[Block] = set()
    for e in fn.blocks:
        if not e.succs and e not in out:
            out |= _reach(e, avoid, back=True)
    return out


@pytest.mark.parametrize("path", tiered(ALL_PTX))
def test_cfg_utilities_match_their_definitions_on_the_corpus(path):
    for fn in _functions(path):
        reachable = _reach(fn.entry)
        rpo = cfg.reverse_postorder(fn)
        assert rpo[0] is fn.entry and len(rpo) == len(set(rpo)) and set(rpo) == reachable
        assert cfg.reachable_blocks(fn) == reachable
        rank = {b: k for k, b in enumerate(rpo)}

        # dominators: d dominates n iff n cannot be reached from the entry avoiding d
        dom = cfg.dominators(fn)
        want = {n: {n} for n in reachable}
        for d in reachable:
            for n in reachable - _reach(fn.entry, d):
                want[n].add(d)
        assert {n: dom[n] for n in reachable} == want
        # every edge goes forward in reverse postorder, except to a block that dominates its source
        for u in rpo:
            for v in u.succs:
                assert rank[u] < rank[v] or v in dom[u], (u, v)
        idom = cfg.immediate_dominators(fn)
        assert idom[fn.entry] is None
        for n in rpo[1:]:  # the strict dominator closest to n: the one with the most dominators itself
            assert idom[n] is max(dom[n] - {n}, key=lambda d: len(dom[d]))

        # post-dominators: p post-dominates n iff no path from n to an exit avoids p
        pdom = cfg.post_dominators(fn)
        assert pdom[cfg.EXIT] == {cfg.EXIT}
        leaving = _to_exit(fn)  # the blocks with a path to an exit
        want = {n: {n, cfg.EXIT} for n in leaving}
        for p in fn.blocks:
            for n in leaving - _to_exit(fn, p):
                want[n].add(p)
        assert {n: pdom[n] for n in leaving} == want
        ipdom = cfg.immediate_post_dominators(fn)
        for n in leaving:
            strict = pdom[n] - {n}
            assert ipdom[n] in strict and all(o in pdom[ipdom[n]] for o in strict)

        # natural loops: a back edge's target dominates its source; the body is what reaches the latch
        # without passing the header
        loops = cfg.natural_loops(fn, dom)
        edges = cfg.back_edges(fn, dom)
        assert sorted(rank[t] for lp in loops for t in lp.latches) == sorted(rank[t] for t, _ in edges)
        assert [rank[lp.header] for lp in loops] == sorted({rank[h] for _, h in edges})
        for lp in loops:
            body = {lp.header}
            for t in lp.latches:
                assert lp.header in t.succs and lp.header in dom[t]
                body |= _reach(t, lp.header, back=True) & reachable
            assert lp.body == body and all(lp.header in dom[b] for b in body)


def _fn(body: str, name: str = "k") -> Function:
    src = f"{HEADER}.visible .entry {name}(.param .u32 n)\n{{\n{body}}}\n"
    return build_module(parse(src, "t.ptx")).functions[0]


NESTED = """.reg .pred %p<3>;
.reg .b32 %r<4>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
OUTER:
    mov.u32 %r3, 0;
INNER:
    add.s32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r1;
    @%p1 bra INNER;
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, %r1;
    @%p2 bra OUTER;
    ret;
"""


def test_nested_loops_and_their_order():
    fn = _fn(NESTED)
    names = [b.name for b in cfg.reverse_postorder(fn)]
    assert names == [b.name for b in fn.blocks]  # the builder lays blocks out in reverse postorder
    loops = cfg.natural_loops(fn)
    assert len(loops) == 2
    outer, inner = loops
    assert inner.body < outer.body and outer.header is not inner.header
    assert [t.name for t in inner.latches] == [inner.header.name]  # a one-block inner loop
    exit_block = cfg.reverse_postorder(fn)[-1]
    assert cfg.immediate_post_dominators(fn)[fn.entry] is outer.header
    assert cfg.immediate_post_dominators(fn)[exit_block] == cfg.EXIT


def test_an_endless_loop_has_no_way_to_the_exit():
    fn = _fn("""LOOP:
    bra.uni LOOP;
""")
    pdom = cfg.post_dominators(fn)
    spin = fn.blocks[-1]
    assert cfg.EXIT in pdom[spin] and set(fn.blocks) <= pdom[spin]
    assert [lp.header for lp in cfg.natural_loops(fn)] == [spin]


def test_generic_forms_run_on_any_graph():
    succ = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}
    pred = {n: [m for m in succ if n in succ[m]] for n in succ}
    assert cfg.reverse_postorder_from("a", succ.__getitem__) == ["a", "c", "b", "d"]
    dom = cfg.dominator_sets(list(succ), "a", pred.__getitem__)
    assert dom == {"a": {"a"}, "b": {"a", "b"}, "c": {"a", "c"}, "d": {"a", "d"}}
    assert cfg.immediate(dom, "d") == "a" and cfg.immediate(dom, "a") is None
    pdom = cfg.post_dominator_sets(list(succ), succ.__getitem__)
    assert pdom["a"] == {"a", "d", cfg.EXIT} and cfg.immediate(pdom, "b", cfg.EXIT) == "d"
    assert cfg.immediate(pdom, "d", cfg.EXIT) == cfg.EXIT


def test_call_graph_of_the_device_functions_example():
    path = next(p for p in ALL_PTX if p.name == "device_functions.sm_80.ptx")
    module = build_module(parse(path.read_text(), str(path)))
    graph = cfg.call_graph(module)
    assert set(graph) == {f.name for f in module.functions}
    by_name = {f.name: f for f in module.functions}
    for f in module.functions:
        calls = cfg.callees(f)
        assert [c for c, _ in calls] == graph[f.name]
        assert all(i.op == "call" and i.attrs["callee"] == c for c, i in calls)
    assert graph["_Z3fibj"].count("_Z3fibj") == 2  # recursive
    for k in (f for f in module.functions if f.is_entry):
        reached = cfg.reachable_functions(k, by_name)
        assert reached[0] is k and len({f.name for f in reached}) == len(reached)
        closure, work = {k.name}, [k.name]  # brute force: the transitive closure of the graph
        while work:
            for c in graph[work.pop()]:
                if c in by_name and not by_name[c].is_entry and c not in closure:
                    closure.add(c)
                    work.append(c)
        assert {f.name for f in reached} == closure
    assert cfg.call_graph(module.functions) == graph


def test_reachable_functions_breadth_first_and_resolve_may_refuse():
    src = HEADER + "".join(f".func {n}()\n{{\n{body}ret;\n}}\n" for n, body in (
        ("d", ""), ("c", ""), ("b", "call d;\n"), ("a", "call c;\n")))
    src += ".visible .entry k()\n{\ncall a;\ncall b;\nret;\n}\n"
    module = build_module(parse(src, "t.ptx"))
    by_name = {f.name: f for f in module.functions}
    assert [f.name for f in cfg.reachable_functions(by_name["k"], by_name)] == ["k", "a", "b", "c", "d"]

    def refuse(name, inst):
        if name == "d":
            raise LinkError("no d", inst.loc)
        return by_name[name]

    with pytest.raises(LinkError):
        cfg.reachable_functions(by_name["k"], by_name, refuse)
    assert cfg.reachable_functions(by_name["k"], by_name, lambda n, i: by_name[n] if n != "b" else None) == [
        by_name[n] for n in ("k", "a", "c")]


def test_immediate_post_dominator_in_an_endless_loop_does_not_depend_on_string_hashing():
    """A branch inside an endless loop post-dominates nothing meaningful (every node qualifies): the first
    in the sets' order is taken, the same in every process whatever PYTHONHASHSEED is."""
    code = ("from xcc.ir import cfg\n"
            "succ = {'entry': ['loop'], 'loop': ['odd', 'even'], 'odd': ['next'], 'even': ['next'],"
            " 'next': ['loop']}\n"
            "pdom = cfg.post_dominator_sets(list(succ), succ.__getitem__)\n"
            "print(cfg.immediate(pdom, 'loop', cfg.EXIT))\n")
    seen = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                           capture_output=True, text=True, check=True).stdout.strip() for seed in range(4)}
    assert seen == {"next"}  # the first candidate: the sets list EXIT, then the nodes last to first
