"""Spilling general registers to local memory, for when a kernel needs more than ``max_registers``.

The allocator (:func:`xcc.backend.regalloc.linear_scan`) runs unchanged until no register is free
for a new interval; then the spill chooser (:class:`xcc.backend.spill_choice.SpillChooser`, shared
with predicate spilling) picks the value to evict among the active intervals and the new one
(Poletto and Sarkar, "Linear Scan Register Allocation", TOPLAS 1999, section 2.2, with Belady's
furthest-next-use rule in place of their furthest-end rule, as Braun and Hack, "Register Spilling
and Live-Range Splitting for SSA-Form Programs", CC 2009, argue for).  The
evicted values are spilled *everywhere* (Chaitin's rule) and the scan runs again on the rewritten
code, until a scan evicts nothing:

- a spilled value gets one slot in the thread's local memory, after the kernel's own ``.local``
  variables (8-byte aligned; 4 bytes, or 8 for a 64-bit pair);
- after each definition ``STL``/``STL.64 [RZ + slot]`` stores it from a fresh temporary; a
  definition of one half of a pair stores that half alone (``STL [RZ + slot + 4*half]``);
- before each instruction that reads it, ``LDL``/``LDL.64`` reloads it into a fresh temporary
  (one per instruction; a read of one half reloads that half only);
- a guarded definition keeps the old value where its guard is false, so it reloads first;
- a value whose only definition is a constant (``MOV`` of an immediate or constant-bank word,
  ``LDC``, ``S2R`` of a launch-constant special register) is *rematerialised* instead: the
  definition is repeated before each read and costs no memory (Briggs, Cooper and Torczon,
  "Rematerialization", PLDI 1992).

One slot per value, written after every definition and read before every use, is correct on every
path through loops and divergent branches: whichever definition reached a use last also stored
last.  The temporaries live from their reload to their use or from their definition to their
store; they are never spilled themselves (the registers they need are, in effect, reserved at
each instruction by evicting everything else), so each round evicts only original values and the
iteration ends.  Every instruction needs at most 10 registers for its operands (an
``IMAD.64``'s three 64-bit sources and its guarded 64-bit result), so :data:`MIN_REGISTERS`
always suffices.

:class:`Spills` records what was done: the temporaries' ``origin`` (the value each carries) and
the spill instructions' slots, which :func:`xcc.backend.regalloc.check_allocation` uses to follow
each value through memory, and the byte counts ``xcc compile -v`` reports as ptxas does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.backend.coalesce import coalesce_copies, drop_unreachable, hoist_common, thread_branches
from xcc.backend.isa import CONSTANT_LOADS, RZ, SR_INDEX
from xcc.backend.isel import MBlock
from xcc.backend.minst import CBank, Ctrl, Half, Imm, MInst, VReg, mi, new_vreg
from xcc.backend.regalloc import inst_defs, linear_scan
from xcc.backend.spill_choice import SpillChooser
from xcc.diagnostics import UnsupportedError

MIN_REGISTERS = 16
"""The lowest register limit xcc compiles for: a smaller ``--maxrregcount`` or ``.maxnreg`` is
raised to it, as ptxas raises one below its ABI minimum (24 on sm_80: "adjusting per thread
register count of 8 to lower bound of 24").  The floor is what one instruction's spill
temporaries need (10), with room to spare even in an image with calls, whose calling convention
reserves R1-R3 (:mod:`xcc.backend.isel_calls`)."""

# Special registers whose value never changes during a thread's life: safe to read again.
_CONSTANT_SREGS = frozenset(SR_INDEX[n] for n in (
    "SR_TID.X", "SR_TID.Y", "SR_TID.Z", "SR_NTID.X", "SR_NTID.Y", "SR_NTID.Z", "SR_CTAID.X", "SR_CTAID.Y",
    "SR_CTAID.Z", "SR_NCTAID.X", "SR_NCTAID.Y", "SR_NCTAID.Z", "SR_LANEID", "SR_LANEMASK_EQ", "SR_LANEMASK_LT",
    "SR_LANEMASK_LE", "SR_LANEMASK_GT", "SR_LANEMASK_GE"))


@dataclass
class Spills:
    """What :func:`allocate_with_spilling` did to a kernel."""

    base: int = 0  # local-memory offset of the spill area (after the kernel's .local variables)
    origin: dict[VReg, VReg | Half] = field(default_factory=dict)  # register -> the value it carries
    temps: set[VReg] = field(default_factory=set)  # reload/store temporaries (never spilled)
    slots: dict[VReg, int] = field(default_factory=dict)  # spilled value -> its slot's offset
    remat: dict[VReg, MInst] = field(default_factory=dict)  # rematerialised value -> its definition
    accesses: dict[MInst, int] = field(default_factory=dict)  # spill STL/LDL -> the offset it accesses
    frame_bytes: int = 0  # bytes of spill slots
    store_bytes: int = 0  # bytes stored by the spill stores (static, as ptxas counts)
    load_bytes: int = 0  # bytes loaded by the reloads
    rounds: int = 0  # scans that spilled
    base_reg: int = RZ  # the register slots are addressed from (R1, the stack pointer, in a device function)
    call_saves: int = 0  # values saved around calls (spilled because they are live across a CALL)

    @property
    def count(self) -> int:
        """Values spilled to memory or rematerialised."""
        return len(self.slots) + len(self.remat)


def allocate_with_spilling(blocks: list[MBlock], max_registers: int, kernel: str = "", base: int = 0,
                           origin: dict | None = None,
                           max_rounds: int = 200, *, base_reg: int = RZ, reserved: frozenset[int] = frozenset(),
                           force: list[VReg] = (), pinned: set[VReg] = frozenset(), coalesce: bool = True,
                           split: list[VReg] = (), cold: frozenset[str] = frozenset()
                           ) -> tuple[dict[VReg, int], int, Spills]:
    """Allocate registers, spilling to local memory from offset ``base`` (8-byte aligned) as needed;
    rewrites ``blocks``.  ``origin``: the predicate spiller's map, extended in the result.  Returns
    (assignment, registers used, :class:`Spills`).  Below the limit this is exactly
    :func:`xcc.backend.regalloc.allocate`.

    For the calling convention (:mod:`xcc.backend.isel_calls`): slots are addressed from ``base_reg``;
    ``force`` values (those live across a call: every register is caller-saved) are spilled, or
    rematerialised, before the first scan; ``pinned`` values are never spilled (a call's stack probe,
    which lives where R1 already points at the callee's frame); ``reserved`` registers are never assigned.

    With ``coalesce`` the copies between values that do not interfere are coalesced first
    (:mod:`xcc.backend.coalesce`; the predicate spiller's, ``force`` and ``pinned`` values excepted).

    ``split``: values :func:`xcc.backend.cold_split.split_around_cold` split around cold blocks (and their
    copies): their copies stay, and the scans work on live ranges with holes
    (:func:`xcc.backend.regalloc_ranges.linear_scan_ranges`), which see the split values dead in the ``cold``
    blocks and evict values that live only there first."""
    if base % 8:
        raise ValueError("the spill area must be 8-byte aligned")
    spills = Spills(base=base, origin=dict(origin or {}), base_reg=base_reg)
    if coalesce:
        keep = set(pinned) | set(force) | set(split)
        keep |= {v for kv in spills.origin.items() for v in kv if isinstance(v, VReg)}
        coalesce_copies(blocks, keep)
        hoist_common(blocks)
        thread_branches(blocks)
        drop_unreachable(blocks)
    spills.temps |= set(pinned)
    scan = linear_scan
    if split:
        from functools import partial

        from xcc.backend.regalloc_ranges import linear_scan_ranges

        scan = partial(linear_scan_ranges, cold=frozenset(cold))
    if force:
        spills.call_saves = len(force)
        _rewrite(blocks, list(force), _chooser(blocks, spills), spills)
    for _ in range(max_rounds):
        chooser = _chooser(blocks, spills)
        assign, used, victims = scan(blocks, max_registers, kernel, chooser, reserved)
        if not victims:
            return assign, used, spills
        spills.rounds += 1
        _rewrite(blocks, victims, chooser, spills)
    raise UnsupportedError(f"kernel '{kernel}': register spilling did not converge in {max_rounds} rounds "
                           f"at {max_registers} registers")


def _chooser(blocks: list[MBlock], spills: Spills) -> SpillChooser:
    """The spill chooser for this round: the temporaries pinned, every value with a single
    rematerialisable definition preferred."""
    return SpillChooser(blocks, spills.temps, rematerialisable_values(blocks))


def rematerialisable_values(blocks: list[MBlock]) -> dict[VReg, MInst]:
    """Each value whose only definition computes a constant from no register (:func:`rematerialisable`), with that
    definition."""
    defs: dict[VReg, list[MInst]] = {}
    for b in blocks:
        for m in b.insts:
            for v in inst_defs(m):
                defs.setdefault(v, []).append(m)
    return {v: ms[0] for v, ms in defs.items() if len(ms) == 1 and rematerialisable(ms[0], v)}


def rematerialisable(m: MInst, v: VReg) -> bool:
    """``m``, the only definition of ``v``, computes a constant from no register: it can be repeated."""
    if m.guard is not None or m.ops.get("d") is not v:
        return False
    if m.mnemonic == "MOV":
        return isinstance(m.ops["b"], Imm | CBank)
    if m.mnemonic in CONSTANT_LOADS:
        return True
    return m.mnemonic == "S2R" and m.ops["b"] in _CONSTANT_SREGS


def _rewrite(blocks: list[MBlock], victims: list[VReg], chooser: SpillChooser, spills: Spills) -> None:
    for v in victims:
        if v in chooser.remat:
            spills.remat[v] = chooser.remat[v]
        else:
            align = 4 * v.width
            off = spills.base + spills.frame_bytes
            off += -off % align
            spills.slots[v] = off
            spills.frame_bytes = off + align - spills.base
    chosen = set(victims)
    dropped = {id(spills.remat[v]) for v in victims if v in spills.remat}
    for b in blocks:
        out: list[MInst] = []
        for m in b.insts:
            if id(m) in dropped:
                continue
            out += _rewrite_inst(m, chosen, spills)
        b.insts = out


def _rewrite_inst(m: MInst, chosen: set[VReg], spills: Spills) -> list[MInst]:
    pre: list[MInst] = []
    post: list[MInst] = []
    reloaded: dict[tuple[VReg, int | None], VReg] = {}

    def temp(width: int, carries: VReg | Half) -> VReg:
        t = new_vreg(width)
        spills.temps.add(t)
        spills.origin[t] = spills.origin.get(carries, carries) if isinstance(carries, VReg) else carries
        return t

    def access(mnemonic: str, offset: int, **ops) -> MInst:
        x = mi(mnemonic, line=m.line, debug_loc=m.debug_loc, a=spills.base_reg, b=offset, **ops)
        spills.accesses[x] = offset
        return x

    def load(v: VReg, half: int | None) -> VReg:
        """A temporary holding ``v`` (or its half), loaded or rematerialised before ``m``."""
        key = (v, half)
        if key in reloaded:
            return reloaded[key]
        if v in spills.remat:
            t = reloaded[key] = temp(v.width, v)
            d = spills.remat[v]
            pre.append(MInst(d.d, {**d.ops, "d": t}, dict(d.mods), None, Ctrl(), m.line, m.debug_loc))
            return t
        if half is None:
            t = reloaded[key] = temp(v.width, v)
            pre.append(access("LDL.64" if v.width == 2 else "LDL", spills.slots[v], d=t))
            spills.load_bytes += 4 * v.width
        else:
            t = reloaded[key] = temp(1, Half(v, half))
            pre.append(access("LDL", spills.slots[v] + 4 * half, d=t))
            spills.load_bytes += 4
        return t

    for o in m.d.operands:
        if o.is_def or o.field not in m.ops:
            continue
        x = m.ops[o.field]
        if isinstance(x, VReg) and x in chosen:
            m.ops[o.field] = load(x, None)
        elif isinstance(x, Half) and x.vreg in chosen:
            if x.vreg in spills.remat:
                m.ops[o.field] = Half(load(x.vreg, None), x.index)
            else:
                m.ops[o.field] = load(x.vreg, x.index)
    for o in m.d.operands:
        x = m.ops.get(o.field)
        if not o.is_def or not isinstance(x, VReg | Half):
            continue
        v, half = (x, None) if isinstance(x, VReg) else (x.vreg, x.index)
        if v not in chosen:
            continue
        assert v not in spills.remat, "a rematerialised value has one definition, which is dropped"
        width = v.width if half is None else 1
        offset = spills.slots[v] + 4 * (half or 0)
        t = temp(width, v if half is None else Half(v, half))
        if m.guard is not None:  # the old value survives where the guard is false
            pre.append(access("LDL.64" if width == 2 else "LDL", offset, d=t))
            spills.load_bytes += 4 * width
        m.ops[o.field] = t
        post.append(access("STL.64" if width == 2 else "STL", offset, c=t))
        spills.store_bytes += 4 * width
    return pre + [m] + post
