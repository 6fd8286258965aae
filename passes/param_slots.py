"""Promotion of a function's own ``.param`` variables to SSA values: what is left of a call's argument and
return copies once the call is inlined (used by :mod:`xcc.passes.inline`; not a pass of its own).

A caller passes arguments by ``st.param`` into its ``.param`` variables and reads results back with
``ld.param`` (nvcc's call sequence, PTX ISA 9.0 section 5.1.6.4).  When no ``call`` names a variable any
more, its bytes are private to the function and every access is a load or store at a constant offset, so
each slot (variable, offset, size) is a scalar: a load becomes the value the reaching store wrote, with a
phi where stores on several paths meet.  This is SSA construction on demand, Braun et al., "Simple and
Efficient Construction of Static Single Assignment Form" (CC 2013), section 2 (readVariable with trivial
phis removed), over a CFG whose every block is complete (sealed).

A variable is left in memory (correct, only slower) when it is still named by a call, when its address is
used other than as the address of a ``param`` load or store, when two of its slots overlap without being
equal, or when a load or store changes the width (``ld.u8`` into a 16-bit register, ``st.b32`` of a 64-bit
value); a slot is, when a load may run before any store to it (its bytes are undefined: the value of the
entry block's ``readVariable`` in Braun et al.), found after the construction, whose new phis it discards.  A value is
its bit pattern (:mod:`xcc.ir.types`): a ``b32`` store forwarded to an ``f32`` load needs no conversion, as
a register read as another type needs none in the lowering.
"""

from __future__ import annotations

from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import PRED

Slot = tuple[str, int, int]  # (variable, byte offset, bytes)
VOID = PRED  # the type of the marker for an undefined slot value (never in the IR)


def promote_param_slots(fn: Function) -> list[str]:
    """Promote ``fn``'s promotable ``.param`` variables (see the module docstring) and drop every ``.param``
    variable nothing names any more; returns the names of the variables removed."""
    candidates = {v.name for v in fn.variables if v.space == "param"}
    for inst in fn.instructions():
        if inst.op == "call":
            candidates -= set(inst.attrs.get("params") or []) | set(inst.attrs.get("rets") or [])
    base = {i.result: i.attrs["symbol"] for i in fn.instructions()
            if i.op == "addr_of" and i.attrs.get("space") == "param" and i.attrs.get("symbol") in candidates}
    accesses = _accesses(fn, base, candidates)
    _promote(fn, accesses)
    return _drop_unused(fn)


def _accesses(fn: Function, base: dict[Value, str], candidates: set[str]) -> dict[Instruction, Slot]:
    """The loads and stores of the promotable variables -> their slot."""
    found: dict[Instruction, Slot] = {}
    bad: set[str] = set()
    for b in fn.blocks:
        for phi in b.phis:
            bad |= {base[a] for a in phi.args if a in base}
        for inst in b.instructions:
            for k, a in enumerate(inst.args):
                if a not in base:
                    continue
                var = base[a]
                if inst.op not in ("ld", "st") or k != 0 or inst.attrs.get("space") != "param":
                    bad.add(var)
                    continue
                value_bits = inst.result.type.bits if inst.op == "ld" else inst.args[1].type.bits
                if value_bits != inst.type.bits or inst.type.bits < 8:
                    bad.add(var)
                    continue
                found[inst] = (var, int(inst.attrs.get("offset", 0)), inst.type.bytes)
    slots: dict[str, set[tuple[int, int]]] = {}
    for var, off, size in found.values():
        slots.setdefault(var, set()).add((off, size))
    for var, spans in slots.items():
        ordered = sorted(spans)
        if any(a_off + a_size > b_off for (a_off, a_size), (b_off, _) in zip(ordered, ordered[1:])):
            bad.add(var)  # overlapping slots of different extents: bytes, not scalars
    return {i: s for i, s in found.items() if s[0] not in bad and s[0] in candidates}


def _promote(fn: Function, accesses: dict[Instruction, Slot]) -> None:
    if not accesses:
        return
    # A phi's type: the type of the first value stored to its slot (the others have the same width).
    slot_type = {}
    end_def: dict[tuple[Slot, Block], Value] = {}
    for b in fn.blocks:
        for inst in b.instructions:
            s = accesses.get(inst)
            if s is not None and inst.op == "st":
                slot_type.setdefault(s, inst.args[1].type)
                end_def[(s, b)] = inst.args[1]  # the block's last store to the slot
    undefined = Value(VOID, "undefined")  # what a load reads before any store: the slot stays in memory
    entry_def: dict[tuple[Slot, Block], Value] = {}
    phis: dict[Slot, list[Phi]] = {}

    def at_entry(s: Slot, b: Block) -> Value:
        key = (s, b)
        if key in entry_def:
            return entry_def[key]
        if b is fn.entry or s not in slot_type:
            v: Value = undefined
        elif not b.preds:  # an unreachable block: any value will do
            v = Const(slot_type[s], 0)
        elif len(b.preds) == 1:
            v = at_end(s, b.preds[0])
        else:
            phi = Phi(Value(slot_type[s]), [], b)
            entry_def[key] = phi.result
            phis.setdefault(s, []).append(phi)
            phi.args = [at_end(s, p) for p in b.preds]
            v = phi.result
        entry_def[key] = v
        return v

    def at_end(s: Slot, b: Block) -> Value:
        return end_def[(s, b)] if (s, b) in end_def else at_entry(s, b)

    # Each load's value: the block's latest store to the slot before it, else the value at the block's entry.
    loaded: dict[Instruction, Value] = {}
    for b in fn.blocks:
        current: dict[Slot, Value] = {}
        for inst in b.instructions:
            s = accesses.get(inst)
            if s is not None:
                if inst.op == "st":
                    current[s] = inst.args[1]
                else:
                    loaded[inst] = current[s] if s in current else at_entry(s, b)
    bad = _undefined_slots(loaded, accesses, phis, undefined)
    repl: dict[Value, Value] = {inst.result: v for inst, v in loaded.items() if accesses[inst] not in bad}
    for b in fn.blocks:
        b.instructions = [i for i in b.instructions if i not in accesses or accesses[i] in bad]
    new_phis = [phi for s, ps in phis.items() if s not in bad for phi in ps]
    for phi in new_phis:
        phi.block.phis.append(phi)
    _remove_trivial_phis(fn, new_phis, repl)
    replace_uses(fn, repl)


def _undefined_slots(loaded: dict[Instruction, Value], accesses: dict[Instruction, Slot],
                     phis: dict[Slot, list[Phi]], undefined: Value) -> set[Slot]:
    """The slots with a load whose value may be ``undefined``: directly, or through the new phis."""
    tainted: set[Value] = set()
    new = [p for ps in phis.values() for p in ps]
    changed = True
    while changed:
        changed = False
        for p in new:
            if p.result not in tainted and any(a is undefined or a in tainted for a in p.args):
                tainted.add(p.result)
                changed = True
    return {accesses[i] for i, v in loaded.items() if v is undefined or v in tainted}


def _remove_trivial_phis(fn: Function, phis: list[Phi], repl: dict[Value, Value]) -> None:
    """Braun et al.'s tryRemoveTrivialPhi, to a fixed point: a phi whose operands are one value and itself
    is that value."""
    def find(v: Value) -> Value:
        while v in repl:
            v = repl[v]
        return v

    changed = True
    live = set(map(id, phis))
    while changed:
        changed = False
        for phi in phis:
            if id(phi) not in live:
                continue
            ops = {find(a) for a in phi.args} - {phi.result}
            if len(ops) == 1:
                repl[phi.result] = ops.pop()
                live.discard(id(phi))
                phi.block.phis.remove(phi)
                changed = True
    for phi in phis:
        if id(phi) in live:
            phi.args = [find(a) for a in phi.args]


def _drop_unused(fn: Function) -> list[str]:
    """Remove ``addr_of`` of ``.param`` variables whose result nothing uses, then the ``.param`` variables
    nothing names."""
    used = {a for b in fn.blocks for x in [*b.phis, *b.instructions] for a in x.args}
    for b in fn.blocks:
        b.instructions = [i for i in b.instructions
                          if not (i.op == "addr_of" and i.attrs.get("space") == "param" and i.result not in used)]
    named = {i.attrs.get("symbol") for i in fn.instructions() if i.op == "addr_of"}
    for i in fn.instructions():
        if i.op == "call":
            named |= set(i.attrs.get("params") or []) | set(i.attrs.get("rets") or [])
    gone = [v.name for v in fn.variables if v.space == "param" and v.name not in named]
    fn.variables = [v for v in fn.variables if not (v.space == "param" and v.name not in named)]
    return gone
