"""A profile of one launch: the IR interpreter's counts and the cycle model's stalls, keyed by PTX position.

The IR interpreter (:func:`xcc.sim.ir.interpreter.run_function` with ``profile=``) gives, for the IR it ran
(the module's ``-O`` pipeline, no profile use), each block's warp and thread executions and each conditional
branch's outcome per warp (all threads taken, none, divergent).  From them: active-lane fraction per block
(threads / 32 warps), loop trip counts (the header's executions over the entries from outside the loop, per
warp), call counts.  The ISA run's ``xcc__pc_samples`` (:mod:`xcc.sim.perf.hotspots`) give issue and stall
cycles per PTX line.
"""

from __future__ import annotations

from xcc.ir.cfg import natural_loops
from xcc.ir.core import Block, Function, Instruction
from xcc.profile.format import FORMAT, VERSION, Profile, encode_value


def _pos(inst: Instruction | None, fallback: str) -> tuple[str, int]:
    loc = inst.loc if inst is not None else None
    return (loc.file, loc.line) if loc is not None else (fallback, 0)


def record_launch(module_hash: str, module_name: str, fn: Function, raw: dict, args: dict, grid, block,
                  stalls: list | None = None) -> Profile:
    """The profile of one launch of kernel ``fn``: ``raw`` from the IR interpreter, ``args`` param name ->
    (PTX type, value) of the scalar arguments, ``stalls`` the hot-spot rows (line, issued, cycles, reasons)."""
    name = module_name
    warps = {b: w for b, w, _ in raw["blocks"]}
    blocks = []
    for b, w, t in raw["blocks"]:
        f, line = _pos(b.instructions[0], name)
        blocks.append({"block": b.name, "file": f, "line": line, "warps": int(w), "threads": int(t)})
    branches = []
    for inst, (tk, nt, dv) in raw["branches"].items():
        f, line = _pos(inst, name)
        branches.append({"block": inst.block.name, "file": f, "line": line, "taken": int(tk), "not_taken": int(nt),
                         "divergent": int(dv)})
    loops = [_loop(lp, warps, raw["branches"], name) for lp in natural_loops(fn) if lp.header in warps]
    calls = []
    for b in fn.blocks:
        for i in b.instructions:
            if i.op == "call" and b in warps:
                f, line = _pos(i, name)
                calls.append({"callee": str(i.attrs.get("callee", "")), "file": f, "line": line,
                              "warps": int(warps[b])})
    kernel = {
        "launches": 1,
        "shapes": [{"grid": list(grid), "block": list(block), "launches": 1}],
        "args": {p: {"type": t, "values": [[encode_value(v), 1]], "other": 0} for p, (t, v) in sorted(args.items())},
        "blocks": sorted(blocks, key=_order), "branches": sorted(branches, key=_order),
        "loops": sorted(loops, key=_order), "calls": sorted(calls, key=_order),
        "stalls": [{"file": name, "line": int(line), "issued": int(i), "cycles": int(c),
                    "reasons": {r: int(n) for r, n in sorted(reasons.items()) if n}}
                   for line, i, c, reasons in sorted(stalls or [])],
    }
    return Profile({"format": FORMAT, "version": VERSION, "module": {"hash": module_hash, "name": name},
                    "kernels": {fn.name: kernel}})


def _order(row: dict):
    return (row["file"], row["line"], row.get("block") or row.get("header") or row.get("callee") or "")


def _loop(lp, warps: dict[Block, int], outcomes: dict, name: str) -> dict:
    """Entries (warps arriving from outside) and iterations (header executions) of natural loop ``lp``, keyed by
    the PTX line of its first latch's branch, the back edge."""
    back = 0
    for latch in lp.latches:
        term = latch.terminator
        if term is None:
            continue
        if term.op == "br":
            back += warps.get(latch, 0)
        elif term.op == "cbr" and term in outcomes:
            tk, nt, dv = outcomes[term]
            back += (tk + dv if term.targets[0] is lp.header else 0) + (nt + dv if term.targets[1] is lp.header else 0)
    iterations = warps[lp.header]
    f, line = _pos(lp.latches[0].terminator, name)
    return {"header": lp.header.name, "file": f, "line": line, "entries": int(max(iterations - back, 0)),
            "iterations": int(iterations)}
