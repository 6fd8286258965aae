"""Function pointers: give every address-taken function an address and turn indirect calls into direct ones.

PTX takes a function's address with ``mov.u64 %rd, f`` or in a variable's initialiser
(``.global .u64 table[2] = {f, g};``) and calls through it with ``call (r), %rd, (a), proto;``
(PTX ISA 9.0 sections 5.3 and 9.7.12.2, ``.callprototype``).  After linking, this pass

* numbers the module's address-taken functions in order of first reference and gives function
  ``k`` the address ``CODE_BASE + 16 * k`` (outside every data allocation and window, so a load or
  store through a function pointer faults as an illegal address);
* replaces each ``addr_of {space=code}`` with that constant and patches the variables' relocations;
* expands each indirect call into a compare-and-branch chain over the address-taken functions whose
  signature fits the call (argument count and sizes, return count) followed by direct calls: the
  whole-program form of indirect-call promotion (as in LLVM's ``IndirectCallPromotion``, here with
  every possible target known).  A pointer that matches no candidate reaches a ``trap`` whose
  ``reason`` names the call and says so, which both interpreters report as a located fault.

Afterwards the module holds only direct calls, so the interpreters and the backend know one kind.
"""

from __future__ import annotations

from xcc.diagnostics import LinkError
from xcc.ir.core import Block, Const, Function, Instruction, Module, Value, Variable
from xcc.ir.types import PRED, ptx_type

CODE_BASE = 0x7FFC_0000_0000
U64 = ptx_type("u64")


def resolve_function_pointers(module: Module) -> Module:
    """Rewrite ``module`` in place (see the module docstring) and return it."""
    taken = _address_taken(module)
    if not taken and not any(_indirect_calls(f) for f in module.functions):
        return module
    address = {name: CODE_BASE + 16 * k for k, name in enumerate(taken)}
    defined = {f.name: f for f in module.functions}
    for name, loc in taken.items():
        if name not in defined:
            raise LinkError(f"address of function '{name}', which no module defines", loc)
    module.variables = [_patched(v, address) for v in module.variables]
    for f in module.functions:
        for inst in f.instructions():
            if inst.op == "addr_of" and inst.attrs.get("space") == "code":
                _replace_uses(f, inst.result, Const(U64, address[inst.attrs["symbol"]]))
        for inst in _indirect_calls(f):
            _expand(f, inst, [defined[n] for n in taken if _fits(f, inst, defined[n])], address)
        for b in f.blocks:
            b.instructions = [i for i in b.instructions if not (i.op == "addr_of" and i.attrs.get("space") == "code")]
    return module


def _address_taken(module: Module) -> dict[str, object]:
    """Function names whose address the module takes, in order of first reference -> a location."""
    taken: dict[str, object] = {}
    for v in module.variables:
        for _, name in v.relocs:
            taken.setdefault(name, None)
    for f in module.functions:
        for i in f.instructions():
            if i.op == "addr_of" and i.attrs.get("space") == "code" and taken.get(i.attrs["symbol"]) is None:
                taken[i.attrs["symbol"]] = i.loc  # (keeps its place if a variable named it first)
    return taken


def _indirect_calls(f: Function) -> list[Instruction]:
    return [i for i in f.instructions() if i.op == "call" and i.attrs.get("callee") is None]


def _patched(v: Variable, address: dict[str, int]) -> Variable:
    if not v.relocs:
        return v
    data = bytearray(v.init or bytes(v.size))
    for off, name in v.relocs:
        data[off:off + 8] = address[name].to_bytes(8, "little")
    return Variable(v.name, v.space, v.size, v.align, bytes(data), v.extern, v.linkage, (), v.addr_relocs)


def _replace_uses(f: Function, old: Value, new: Value) -> None:
    for b in f.blocks:
        for phi in b.phis:
            phi.args = [new if a is old else a for a in phi.args]
        for i in b.instructions:
            i.args = [new if a is old else a for a in i.args]


def _fits(caller: Function, call: Instruction, callee: Function) -> bool:
    """Whether ``callee``'s signature fits ``call``: as many arguments of the same sizes, enough returns."""
    sizes = {v.name: v.size for v in caller.variables if v.space == "param"}
    params, rets = call.attrs.get("params", []), call.attrs.get("rets", [])
    return (len(params) == len(callee.params) and len(rets) <= len(callee.ret_params)
            and all(sizes.get(a) == p.size for a, p in zip(params, callee.params))
            and all(sizes.get(r) == p.size for r, p in zip(rets, callee.ret_params)))


def _expand(f: Function, call: Instruction, candidates: list[Function], address: dict[str, int]) -> None:
    """Split ``call``'s block at the call: test the pointer against each candidate in turn, call the
    match directly, and join in a block holding the rest of the original block."""
    block = call.block
    at = block.instructions.index(call)
    rest = Block(f"{block.name}.icall_join{at}", instructions=block.instructions[at + 1:])
    for i in rest.instructions:
        i.block = rest
    for s in rest.succs:  # the successors' phis now come from the join block
        s.preds = [rest if p is block else p for p in s.preds]
    block.instructions = block.instructions[:at]
    target = call.args[0]
    where = f"{call.loc.file}:{call.loc.line}" if call.loc is not None else f"'{f.name}'"
    fail = Block(f"{block.name}.icall_bad{at}")
    fail.append(Instruction("trap", None, [], None, {"reason": f"indirect call at {where} through a pointer that "
                                                               "is no function of this signature"},
                            call.loc, call.debug_loc))
    new_blocks, test = [], block
    for k, callee in enumerate(candidates):
        hit = Block(f"{block.name}.icall{at}_{callee.name}")
        hit.append(Instruction("call", None, [], None, {**call.attrs, "callee": callee.name}, call.loc,
                               call.debug_loc))
        hit.append(Instruction("br", None, [], None, {"targets": [rest]}, call.loc))
        rest.preds.append(hit)
        hit.preds.append(test)
        nxt = Block(f"{block.name}.icall{at}_next{k}") if k + 1 < len(candidates) else fail
        nxt.preds.append(test)
        eq = Value(PRED)
        test.append(Instruction("setp", U64, [target, Const(U64, address[callee.name])], eq, {"cmp": "eq"},
                                call.loc))
        test.append(Instruction("cbr", None, [eq], None, {"targets": [hit, nxt]}, call.loc))
        new_blocks.append(hit)
        if nxt is not fail:
            new_blocks.append(nxt)
        test = nxt
    if not candidates:
        block.append(Instruction("br", None, [], None, {"targets": [fail]}, call.loc))
        fail.preds.append(block)
    pos = f.blocks.index(block) + 1
    f.blocks[pos:pos] = [*new_blocks, fail, rest]
