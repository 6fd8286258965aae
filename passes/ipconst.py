"""Interprocedural constant propagation: a parameter every call passes the same constant becomes that constant.

Source: LLVM's former ``IPConstantPropagation`` pass (``llvm/lib/Transforms/IPO/IPConstantPropagation.cpp``,
superseded by IPSCCP's argument lattice in ``llvm/lib/Transforms/IPO/SCCP.cpp``): for a function whose every
caller is known, an argument that is the same constant at every call site is that constant inside.

Here a caller passes an argument by storing it into the ``.param`` variable the ``call`` names (nvcc's call
sequence, PTX ISA 9.0 section 5.1.6.4).  For a device function without linkage (every caller is in the
module: after :class:`xcc.passes.internalize.Internalize` at link time, or a ``.func`` of one file), not
named by ``addr_of {space=code}`` (no unresolved indirect call can reach it), and with at least one call:
for each of its parameters, the value a call site passes is the constant of the last ``st.param`` to the
argument variable before the call in the call's block, when that store writes the whole parameter at
offset 0 and nothing else writes the variable in between.  When every call site passes the same constant,
the callee's loads of the whole parameter (offset 0, the parameter's width) become the constant, unless the
callee writes the parameter or uses its address otherwise than to load it.  The stores stay (the call still
copies the argument); the loads' users fold in later passes (constfold, sccp).  Return values are not
propagated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Const, Function, Instruction, Module, Value
from xcc.ir.rewrite import replace_uses
from xcc.passes.manager import ModulePass


@dataclass(frozen=True)
class InterproceduralConstants(ModulePass):
    """Replace a device function's parameter by the constant every call site passes (LLVM's IPConstProp)."""

    name: ClassVar[str] = "ipconst"

    def run(self, module: Module) -> None:
        funcs = {f.name: f for f in module.functions}
        sites: dict[str, list[tuple[Function, Instruction]]] = {}
        address_taken: set[str] = set()
        for f in module.functions:
            for i in f.instructions():
                if i.op == "call" and i.attrs.get("callee") in funcs:
                    sites.setdefault(i.attrs["callee"], []).append((f, i))
                elif i.op == "addr_of" and i.attrs.get("space") == "code":
                    address_taken.add(i.attrs["symbol"])
        address_taken |= {n for v in module.variables for _, n in v.relocs}
        for name, calls in sites.items():
            g = funcs[name]
            if g.is_entry or g.linkage is not None or name in address_taken or not g.blocks:
                continue
            for k, p in enumerate(g.params):
                passed = [_passed_constant(f, call, k, p.size) for f, call in calls]
                if all(c is not None for c in passed) and len({(c.type.bits, c.bits) for c in passed}) == 1:
                    _replace_loads(g, p.name, p.size, passed[0])


def _passed_constant(f: Function, call: Instruction, k: int, size: int) -> Const | None:
    """The constant ``call`` passes as argument ``k`` (of ``size`` bytes), or None when it is not known."""
    params = call.attrs.get("params") or []
    if k >= len(params):
        return None
    var = params[k]
    block = call.block
    bases = {i.result for i in block.instructions
             if i.op == "addr_of" and i.attrs.get("space") == "param" and i.attrs.get("symbol") == var}
    for inst in reversed(block.instructions[:block.instructions.index(call)]):
        if inst.op == "call" and var in (inst.attrs.get("params") or []) + (inst.attrs.get("rets") or []):
            return None  # another call's return value lands there
        if inst.op in ("st", "atom") and inst.args and inst.args[0] in bases:
            if inst.op == "st" and inst.attrs.get("offset", 0) == 0 and inst.type.bytes == size \
                    and isinstance(inst.args[1], Const) and inst.args[1].type.bits == inst.type.bits:
                return inst.args[1]
            return None
        if inst.op in ("st", "atom") and inst.attrs.get("space") == "param" and inst.args and \
                inst.args[0] not in bases and not _names_other_variable(block, inst.args[0]):
            return None  # a store through an address we cannot tell apart from var's
    return None


def _names_other_variable(block, addr: Value) -> bool:
    return any(i.result is addr and i.op == "addr_of" for i in block.instructions)


def _replace_loads(g: Function, param: str, size: int, c: Const) -> None:
    bases = {i.result for i in g.instructions()
             if i.op == "addr_of" and i.attrs.get("space") == "param" and i.attrs.get("symbol") == param}
    for b in g.blocks:  # g must only load the parameter: a store or an escaping address leaves it alone
        if any(a in bases for phi in b.phis for a in phi.args):
            return
        if any(a in bases and not (i.op == "ld" and k == 0) for i in b.instructions for k, a in enumerate(i.args)):
            return
    repl: dict[Value, Value] = {}
    for b in g.blocks:
        kept = []
        for i in b.instructions:
            if (i.op == "ld" and i.args[0] in bases and i.attrs.get("offset", 0) == 0 and i.type.bytes == size
                    and i.result.type.bits == c.type.bits):
                repl[i.result] = Const(i.result.type, c.bits)
            else:
                kept.append(i)
        b.instructions = kept
    replace_uses(g, repl)
