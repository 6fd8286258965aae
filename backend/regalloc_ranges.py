"""Register allocation over live ranges with holes, for code whose values are split around cold blocks.

:func:`xcc.backend.regalloc.linear_scan` gives each value one interval, from its first to its last position in
layout order.  That is exact enough for straight-line hot code, but a value that is dead across a region laid out
in the middle of its interval (the cold blocks :mod:`xcc.backend.cold_split` renames it out of) would still hold
its register there.  Here a value's liveness is a list of ranges, one per run of consecutive blocks in which it
is live (Traub, Holloway and Smith, "Quality and Speed in Linear-scan Register Allocation", PLDI 1998: lifetime
holes; Wimmer and Mössenböck, "Optimized Interval Splitting in a Linear Scan Register Allocator", VEE 2005), and
two values may share a register when their ranges do not meet.

Values are taken in order of their first position; each gets the lowest register (an even one for a 64-bit
pair) that no value already there is live with at any position.  When there is none, the spiller (the same
:class:`xcc.backend.spill_choice.SpillChooser` Belady rule) evicts, among the values whose ranges meet the new
one's and the new one itself, until a register fits; the evicted values are returned, as
:func:`~xcc.backend.regalloc.linear_scan` returns them, for the caller to rewrite and scan again.  Used only by
profile-guided builds whose code spills (:mod:`xcc.backend.codegen`); every other build keeps the interval scan.
"""

from __future__ import annotations

from xcc.backend.isa import NUM_PREDS
from xcc.backend.isel import MBlock
from xcc.backend.minst import Half, VReg, inst_uses
from xcc.backend.regalloc import Spiller, check_values, guarded_kills, liveness
from xcc.diagnostics import UnsupportedError

Ranges = list[tuple[int, int]]


def live_ranges(blocks: list[MBlock]) -> dict[VReg, Ranges]:
    """Each value's live positions (instructions numbered in layout order) as sorted, disjoint ``(first, last)``
    ranges.  Within a block a backward walk from its live-out set closes a range at each definition that kills
    (an unguarded write of the whole register, or one :func:`xcc.backend.regalloc.guarded_kills` proves kills;
    never the write of one half of a pair) and opens one at each read,
    so a value read at the top of a block and written again at its end is dead in between; a definition nothing
    reads still takes its own position.  Ranges that meet or touch are merged."""
    live_in, live_out = liveness(blocks)
    killing = guarded_kills(blocks)
    runs: dict[VReg, list[tuple[int, int]]] = {}
    pos = 0
    for b in blocks:
        start, n = pos, len(b.insts)
        last = start + n - 1 if n else start
        open_: dict[VReg, int] = {v: last for v in live_out[b.name]}
        for q in range(last, start - 1, -1) if n else ():
            m = b.insts[q - start]
            whole = m.guard is None or id(m) in killing
            for v, kills in _defs(m, whole):
                if v in open_:
                    if kills:
                        runs.setdefault(v, []).append((q, open_.pop(v)))
                elif kills:
                    runs.setdefault(v, []).append((q, q))
                else:
                    open_[v] = q
            for v in inst_uses(m):
                open_.setdefault(v, q)
        for v, e in open_.items():
            runs.setdefault(v, []).append((start, e))
        pos += n
    out: dict[VReg, Ranges] = {}
    for v, rs in runs.items():
        merged: list[list[int]] = []
        for s, e in sorted(rs):
            if merged and s <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        out[v] = [(s, e) for s, e in merged]
    return out


def _defs(m, whole: bool) -> list[tuple[VReg, bool]]:
    """The values ``m`` writes, each with whether the write ends what the value held before: an unguarded (or
    provably killing, ``whole``) write of the whole register does; a write of one half of a pair does not (the
    other half may have been written earlier and still be read after), so the range reaches back past it."""
    out = []
    for x in m.defs():
        x = x[0] if isinstance(x, tuple) else x
        if isinstance(x, Half):
            out.append((x.vreg, False))
        elif isinstance(x, VReg):
            out.append((x, whole))
    return out


def meet(a: Ranges, b: Ranges) -> bool:
    """Whether two sorted range lists share a position."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


def linear_scan_ranges(blocks: list[MBlock], max_registers: int = 255, kernel: str = "",
                       spiller: Spiller | None = None, reserved: frozenset[int] = frozenset(),
                       cold: frozenset[str] = frozenset()) -> tuple[dict[VReg, int], int, list[VReg]]:
    """(assignment, registers used, values to spill), as :func:`xcc.backend.regalloc.linear_scan` returns them,
    over live ranges with holes (see the module docstring).  ``cold``: the blocks that never ran; when a value
    must go, one that lives only in them is evicted before any other (its spill code runs only there)."""
    ranges = live_ranges(blocks)
    cold_pos: set[int] = set()
    pos = 0
    for b in blocks:
        if b.name in cold:
            cold_pos.update(range(pos, pos + len(b.insts)))
        pos += len(b.insts)

    def cold_only(v: VReg) -> bool:
        return all(p in cold_pos for s, e in ranges[v] for p in range(s, e + 1))

    order = sorted(ranges, key=lambda v: (ranges[v][0][0], v.id))
    holders: dict[tuple[int, int], list[VReg]] = {}  # (class: 0 predicate / 1 general, register) -> values
    assign: dict[VReg, int] = {}
    victims: list[VReg] = []
    used = 0

    def blockers(v: VReg, r: int) -> list[VReg]:
        cls = 0 if v.width == 0 else 1
        regs = [r] if v.width < 2 else [r, r + 1]
        return [a for i in regs for a in holders.get((cls, i), ()) if meet(ranges[a], ranges[v])]

    def fit(v: VReg) -> int | None:
        if v.width == 0:
            return next((i for i in range(NUM_PREDS) if not blockers(v, i)), None)
        step = 2 if v.width == 2 else 1
        return next((i for i in range(0, max_registers - v.width + 1, step)
                     if not any(k in reserved for k in range(i, i + v.width)) and not blockers(v, i)), None)

    def release(a: VReg) -> None:
        cls = 0 if a.width == 0 else 1
        for i in range(assign[a], assign[a] + max(a.width, 1)):
            holders[(cls, i)].remove(a)
        del assign[a]

    for v in order:
        r = fit(v)
        if r is None and v.width == 0:
            raise UnsupportedError(f"kernel '{kernel}' needs more than {NUM_PREDS} live predicates "
                                   "after predicate spilling (spill_predicates must run first)")
        while r is None:
            if spiller is None:
                raise UnsupportedError(f"kernel '{kernel}' needs more than {max_registers} registers "
                                       "(spilling is not enabled for this allocation)")
            meeting = {a for i in range(max_registers) for a in blockers(v, i)} if v.width else set()
            candidates = sorted((a for a in meeting if a.width and a not in spiller.pinned), key=lambda a: a.id)
            if v not in spiller.pinned:
                candidates.append(v)
            if not candidates:
                raise UnsupportedError(f"kernel '{kernel}' needs more than {max_registers} registers at one "
                                       "instruction, even with every other value spilled")
            victim = spiller.choose([c for c in candidates if cold_only(c)] or candidates, ranges[v][0][0])
            victims.append(victim)
            if victim is v:
                break
            release(victim)
            r = fit(v)
        if r is None:
            continue  # v itself is spilled
        assign[v] = r
        cls = 0 if v.width == 0 else 1
        for i in range(r, r + max(v.width, 1)):
            holders.setdefault((cls, i), []).append(v)
        if v.width:
            used = max(used, r + v.width)
    return assign, used, victims


def check_ranges(blocks: list[MBlock], assign: dict[VReg, int], origin: dict | None = None,
                 slots: dict | None = None) -> None:
    """:func:`xcc.backend.regalloc.check_allocation` for an allocation over live ranges with holes: no two values
    whose live ranges meet share a physical register, and every read finds its value
    (:func:`xcc.backend.regalloc.check_values`)."""
    ranges = live_ranges(blocks)
    owners: dict[tuple[int, int], list[VReg]] = {}
    for v in ranges:
        for i in range(assign[v], assign[v] + max(v.width, 1)):
            owners.setdefault((0 if v.width == 0 else 1, i), []).append(v)
    for (cls, r), vs in owners.items():
        for k, a in enumerate(vs):
            for b in vs[k + 1:]:
                if meet(ranges[a], ranges[b]):
                    raise AssertionError(f"register allocation conflict: {a} and {b} share "
                                         f"{'P' if cls == 0 else 'R'}{r} where both are live")
    check_values(blocks, assign, origin or {}, slots or {})
