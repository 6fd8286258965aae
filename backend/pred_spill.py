"""Predicate spilling: keep predicates beyond P0-P6 in general-purpose registers.

Runs before register allocation, on virtual registers.  A linear scan over the predicate
intervals (the same intervals the allocator uses) finds the points where more than
:data:`NUM_PREDS` predicates are live and spills, at each, the predicate the register spiller's
chooser picks (:class:`xcc.backend.spill_choice.SpillChooser`: the one whose next use lies furthest
ahead, Belady's rule, as in Braun and Hack, "Register Spilling and Live-Range Splitting for
SSA-Form Programs", CC 2009).  A spilled predicate lives in a 32-bit register
for its whole range, as ptxas keeps predicates with ``P2R``/``R2P``:

- after each definition ``P2R g, t`` stores the new value (0 or 1) from a short-lived
  predicate ``t`` into ``g``;
- before each use (an operand or a guard, branches included) ``ISETP.NE t, g, RZ``
  reloads it into a fresh short-lived predicate;
- a guarded definition keeps the old value where the guard is false, so it reloads first.

The temporaries are never spilled; the rewrite repeats until the scan needs no spill, and each
round spills at least one original predicate, so it ends.  The returned :class:`PredSpills`
maps every register it created to the predicate whose value it carries, which is what
:func:`xcc.backend.regalloc.check_allocation` needs to prove the spill code right.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.backend.isa import NUM_PREDS, PT, RZ
from xcc.backend.isel import MBlock
from xcc.backend.minst import MInst, VReg, mi, new_vreg
from xcc.backend.regalloc import intervals
from xcc.backend.spill_choice import SpillChooser
from xcc.diagnostics import UnsupportedError


@dataclass
class PredSpills:
    """What :func:`spill_predicates` did: ``origin`` maps each spill register and each reload or
    store temporary to the predicate whose value it holds."""

    origin: dict[VReg, VReg] = field(default_factory=dict)
    slots: dict[VReg, VReg] = field(default_factory=dict)  # spilled predicate -> its 32-bit register
    stores: int = 0  # P2R instructions inserted
    reloads: int = 0  # ISETP.NE reloads inserted

    @property
    def count(self) -> int:
        return len(self.slots)


def spill_predicates(blocks: list[MBlock], kernel: str = "", max_rounds: int = 64) -> PredSpills:
    """Spill predicates until at most :data:`NUM_PREDS` are live anywhere; rewrites ``blocks``."""
    spills = PredSpills()
    for _ in range(max_rounds):
        victims = _choose_victims(blocks, set(spills.origin), kernel)
        if not victims:
            return spills
        _rewrite(blocks, victims, spills)
    raise UnsupportedError(f"kernel '{kernel}': predicate spilling did not converge")


def _choose_victims(blocks: list[MBlock], pinned: set[VReg], kernel: str) -> list[VReg]:
    """Linear scan over the predicate intervals; the predicates to spill, in a stable order."""
    iv = intervals(blocks)
    chooser = SpillChooser(blocks, pinned, tracked=lambda v: v.width == 0)
    active: list[VReg] = []
    victims: list[VReg] = []
    for v in sorted((v for v in iv if v.width == 0), key=lambda v: (iv[v][0], v.id)):
        start = iv[v][0]
        active = [a for a in active if iv[a][1] >= start]
        if len(active) < NUM_PREDS:
            active.append(v)
            continue
        candidates = [a for a in active + [v] if a not in chooser.pinned]
        if not candidates:
            raise UnsupportedError(f"kernel '{kernel}' needs more than {NUM_PREDS} predicates in one place")
        victim = chooser.choose(candidates, start)
        victims.append(victim)
        if victim is not v:
            active.remove(victim)
            active.append(v)
    return victims


def _rewrite(blocks: list[MBlock], victims: list[VReg], spills: PredSpills) -> None:
    for p in victims:
        g = spills.slots[p] = new_vreg(1)
        spills.origin[g] = p
    chosen = set(victims)
    for b in blocks:
        out: list[MInst] = []
        for m in b.insts:
            pre, post = [], []
            temps: dict[VReg, VReg] = {}

            def reload(p: VReg, m=m, pre=pre) -> VReg:
                t = new_vreg(0)
                spills.origin[t] = p
                pre.append(mi("ISETP", line=m.line, debug_loc=m.debug_loc, mods={"cmp": "NE"}, pd=t,
                              a=spills.slots[p], b=RZ, ps=(PT, False)))
                spills.reloads += 1
                return t

            def use(x, m=m):
                if isinstance(x, tuple) and isinstance(x[0], VReg) and x[0] in chosen:
                    if x[0] not in temps:
                        temps[x[0]] = reload(x[0])
                    return (temps[x[0]], x[1])
                if isinstance(x, VReg) and x in chosen:
                    if x not in temps:
                        temps[x] = reload(x)
                    return temps[x]
                return x

            for o in m.d.operands:
                if not o.is_def and o.kind == "P" and o.field in m.ops:
                    m.ops[o.field] = use(m.ops[o.field])
            if m.guard is not None:
                m.guard = use(m.guard)
            for o in m.d.operands:
                p = m.ops.get(o.field)
                if o.is_def and o.kind == "P" and isinstance(p, VReg) and p in chosen:
                    # a guarded definition leaves the old value where the guard is false
                    t = reload(p) if m.guard is not None else new_vreg(0)
                    spills.origin[t] = p
                    m.ops[o.field] = t
                    post.append(mi("P2R", line=m.line, debug_loc=m.debug_loc, d=spills.slots[p], ps=(t, False)))
                    spills.stores += 1
            out += pre + [m] + post
        b.insts = out
