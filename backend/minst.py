"""Machine instructions: an :class:`InstrDef` from the ISA table with concrete operands.

Before register allocation register operands are :class:`VReg` (virtual,
width 1 or 2 registers, or a predicate); afterwards they are ints (R0..R254,
RZ=255, P0..P6, PT=7).  Operand values by kind:

- R, W, P: a register (VReg or int); RIC/WIC: a register, ``Imm`` or ``CBank``;
- C: ``CBank``; I: int; L: a label (a block name before layout, an int
  relative offset in instructions after); SR: special register number;
  B: convergence barrier number.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from xcc.backend.isa import PT, RZ, TABLE, InstrDef


@dataclass(frozen=True)
class VReg:
    """A virtual register: ``width`` 1 (32-bit), 2 (64-bit pair) or 0 (predicate)."""

    id: int
    width: int

    def __repr__(self) -> str:
        return f"{'%p' if self.width == 0 else '%v' if self.width == 1 else '%w'}{self.id}"


@dataclass(frozen=True)
class Half:
    """The low (``index`` 0) or high (1) 32-bit half of a 64-bit virtual register."""

    vreg: VReg
    index: int

    def __repr__(self) -> str:
        return f"{self.vreg!r}.{'lo' if self.index == 0 else 'hi'}"


_vreg_ids = itertools.count()


def new_vreg(width: int) -> VReg:
    return VReg(next(_vreg_ids), width)


@dataclass(frozen=True)
class Imm:
    value: int  # the 32-bit pattern (sign-extended to 64 bits for a WIC operand)


@dataclass(frozen=True)
class CBank:
    bank: int
    offset: int


@dataclass
class Ctrl:
    """Control code: stall cycles, yield hint, scoreboard set on write/read, scoreboards waited on."""

    stall: int = 1
    yield_: bool = False
    wsb: int = 7
    rsb: int = 7
    wait: int = 0


@dataclass(eq=False)
class MInst:
    d: InstrDef
    ops: dict[str, object]
    mods: dict[str, str] = field(default_factory=dict)
    guard: tuple[object, bool] | None = None  # (predicate, negated)
    ctrl: Ctrl = field(default_factory=Ctrl)
    line: int = 0  # the PTX line this came from (0: none)
    debug_loc: tuple[int, int, int] | None = None
    # a conditional branch every thread of a warp takes the same way (xcc.passes.divergence): it needs no
    # reconvergence barrier (xcc.backend.convergence)
    uniform: bool = False
    # a load issued for a later loop iteration (xcc.passes.pipeline_loads, IR attribute ``ahead``): the pre-RA
    # scheduler starts it, and what its address needs, before the rest of its block, registers permitting or not
    ahead: bool = False

    @property
    def mnemonic(self) -> str:
        return self.d.mnemonic

    def defs(self) -> list[object]:
        return [self.ops[o.field] for o in self.d.operands if o.is_def and o.field in self.ops]

    def uses(self) -> list[object]:
        out = [self.ops[o.field] for o in self.d.operands if not o.is_def and o.field in self.ops]
        if self.guard is not None:
            out.append(self.guard[0])
        return out


def mi(mnemonic: str, guard=None, line: int = 0, debug_loc=None, mods: dict | None = None, **ops) -> MInst:
    """Build a machine instruction: ``mi("IADD3", d=v1, a=v2, b=Imm(4), c=RZ)``."""
    d = TABLE[mnemonic]
    known = {o.field for o in d.operands}
    unknown = set(ops) - known
    if unknown:
        raise ValueError(f"{mnemonic} has no operand field(s) {sorted(unknown)}")
    for m in mods or {}:
        d.mod(m)  # raises StopIteration on an unknown modifier group
    return MInst(d, dict(ops), dict(mods or {}), guard, Ctrl(), line, debug_loc)


def register_operands(m: MInst, defs: bool) -> set[tuple[str, int]]:
    """The physical registers (("r", n)) and predicates (("p", n)) instruction ``m`` writes (``defs``) or
    reads (its guard included); RZ and PT are never dependences, a 64-bit operand is its register pair."""
    out = set()
    for op in m.d.operands:
        if op.is_def != defs or op.field not in m.ops:
            continue
        v = m.ops[op.field]
        if isinstance(v, tuple):
            v = v[0]
        if not isinstance(v, int):
            continue
        if op.kind == "P":
            if v != PT:
                out.add(("p", v))
        elif op.kind in ("R", "RIC"):
            if v != RZ:
                out.add(("r", v))
        elif op.kind in ("W", "WIC"):
            if v != RZ:
                out |= {("r", v), ("r", v + 1)}
    if not defs and m.guard is not None and m.guard[0] != PT:
        out.add(("p", m.guard[0]))
    return out


def virtual_registers(values) -> list[VReg]:
    """The virtual registers among operand values: a register, a half of a pair (its pair), a guard's
    (predicate, negated) tuple (its predicate)."""
    out = []
    for x in values:
        if isinstance(x, tuple):
            x = x[0]
        if isinstance(x, Half):
            x = x.vreg
        if isinstance(x, VReg):
            out.append(x)
    return out


def inst_defs(m: MInst) -> list[VReg]:
    """The virtual registers ``m`` writes."""
    return virtual_registers(m.defs())


def inst_uses(m: MInst) -> list[VReg]:
    """The virtual registers ``m`` reads (its guard included)."""
    return virtual_registers(m.uses())


def block_predecessors(blocks) -> dict[str, list[str]]:
    """Each machine block's predecessors (names, in block order), from the blocks' ``succs``."""
    preds: dict[str, list[str]] = {b.name: [] for b in blocks}
    for b in blocks:
        for s in b.succs:
            preds[s].append(b.name)
    return preds


def two_way_branch(block) -> tuple[MInst, MInst] | None:
    """The ``@P BRA t; BRA f`` that ends a machine block, as (conditional, unconditional), or None."""
    if len(block.insts) < 2:
        return None
    cond, other = block.insts[-2], block.insts[-1]
    if cond.mnemonic == "BRA" and cond.guard is not None and other.mnemonic == "BRA" and other.guard is None:
        return cond, other
    return None
