"""Register allocation by linear scan over live intervals (Poletto and Sarkar, "Linear Scan
Register Allocation", TOPLAS 1999), with 64-bit values in even-aligned register pairs and a
separate pool of predicate registers.

Liveness is the classic backward data-flow over the machine CFG; each virtual
register's interval runs from its first to its last live position in layout
order (loops extend it over the whole loop).  Registers go lowest-first, so
the count reported is what occupancy depends on.  When the register file is
full, :func:`linear_scan` asks a spiller which value to evict
(:mod:`xcc.backend.spill` spills it to local memory and scans again); without
one, more pressure than ``max_registers`` is an error naming the kernel.

:func:`check_allocation` is the checker beside the algorithm: it re-derives
liveness and proves that no two simultaneously live values share a register,
and follows every value through predicate spill registers and local-memory
spill slots to each of its reads.
"""

from __future__ import annotations

from typing import Protocol

from xcc.backend.isa import NUM_PREDS, PT, RZ
from xcc.backend.isel import MBlock
from xcc.backend.minst import Half, MInst, VReg, block_predecessors, inst_defs, inst_uses, virtual_registers
from xcc.diagnostics import UnsupportedError


def _vregs_in(value) -> list[VReg]:
    return virtual_registers([value])


def guarded_kills(blocks: list[MBlock]) -> set[int]:
    """The guarded instructions (by ``id``) whose definitions kill all the same: each register it defines
    has no other definition, and every read of it comes later in the same block under the very same guard,
    with the guard's predicate not redefined in between (predicated code, :mod:`xcc.backend.predicate`).
    Where the guard is false the old value is never read, so it need not be kept."""
    ndefs: dict[VReg, int] = {}
    for b in blocks:
        for m in b.insts:
            for v in inst_defs(m):
                ndefs[v] = ndefs.get(v, 0) + 1
    out: set[int] = set()
    for b in blocks:
        for i, m in enumerate(b.insts):
            if m.guard is None or not isinstance(m.guard[0], VReg):
                continue
            regs = inst_defs(m)
            if not regs or any(ndefs[v] != 1 or v == m.guard[0] for v in regs):
                continue
            reads = sum(1 for x in b.insts[i + 1:] for v in inst_uses(x) if v in regs)
            ok = 0
            for x in b.insts[i + 1:]:
                if any(v in regs for v in inst_uses(x)):
                    if x.guard != m.guard:
                        break
                    ok += sum(1 for v in inst_uses(x) if v in regs)
                if m.guard[0] in inst_defs(x):
                    break
            total = sum(1 for bb in blocks for x in bb.insts for v in inst_uses(x) if v in regs)
            if ok == reads == total:
                out.add(id(m))
    return out


def liveness(blocks: list[MBlock]) -> tuple[dict[str, set[VReg]], dict[str, set[VReg]]]:
    """(live-in, live-out) sets per block."""
    use, kill = {}, {}
    killing = guarded_kills(blocks)
    for b in blocks:
        u, k = set(), set()
        for m in b.insts:
            for v in inst_uses(m):
                if v not in k:
                    u.add(v)
            for x in m.defs():
                # A guarded definition does not kill the old value (unless nothing reads the old value:
                # guarded_kills).  Both halves of a pair are always written together, so a
                # half-register write counts as a definition.
                if m.guard is None or id(m) in killing:
                    k.update(_vregs_in(x))
        use[b.name], kill[b.name] = u, k
    live_in = {b.name: set() for b in blocks}
    live_out = {b.name: set() for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out = set().union(*(live_in[s] for s in b.succs)) if b.succs else set()
            inn = use[b.name] | (out - kill[b.name])
            if out != live_out[b.name] or inn != live_in[b.name]:
                live_out[b.name], live_in[b.name], changed = out, inn, True
    return live_in, live_out


def intervals(blocks: list[MBlock]) -> dict[VReg, list[int]]:
    live_in, live_out = liveness(blocks)
    iv: dict[VReg, list[int]] = {}

    def touch(v: VReg, pos: int):
        r = iv.get(v)
        if r is None:
            iv[v] = [pos, pos]
        else:
            r[0], r[1] = min(r[0], pos), max(r[1], pos)

    pos = 0
    for b in blocks:
        start = pos
        for v in live_in[b.name]:
            touch(v, start)
        for m in b.insts:
            for v in inst_uses(m):
                touch(v, pos)
            for v in inst_defs(m):
                touch(v, pos)
            pos += 1
        for v in live_out[b.name]:
            touch(v, max(pos - 1, start))
    return iv


def allocate(blocks: list[MBlock], max_registers: int = 255, kernel: str = "") -> tuple[dict[VReg, int], int]:
    """Assign physical registers; returns (assignment, registers used).  More pressure than
    ``max_registers`` is an error here: :func:`xcc.backend.spill.allocate_with_spilling` spills."""
    assign, used, _ = linear_scan(blocks, max_registers, kernel)
    return assign, used


class Spiller(Protocol):
    """What :func:`linear_scan` asks when no register is free (:mod:`xcc.backend.spill`)."""

    pinned: set[VReg]  # never spilled: the short-lived reload and store temporaries

    def choose(self, candidates: list[VReg], position: int) -> VReg: ...


def linear_scan(blocks: list[MBlock], max_registers: int = 255, kernel: str = "",
                spiller: Spiller | None = None,
                reserved: frozenset[int] = frozenset()) -> tuple[dict[VReg, int], int, list[VReg]]:
    """The scan itself: (assignment, registers used, values to spill).  Without a ``spiller`` a
    full register file is an error; with one, values are evicted (the spiller picks which, among
    the unpinned active intervals and the new one, as in Poletto and Sarkar's section 2.2) until
    the new interval fits, and the evicted ones are returned: the assignment is then incomplete
    and the caller rewrites the code and scans again.  Whatever the spiller, a scan that evicts
    nothing makes exactly the choices of a scan without one.  ``reserved`` registers are never
    assigned (the stack pointer and return-address pair of the calling convention)."""
    iv = intervals(blocks)
    order = sorted(iv, key=lambda v: (iv[v][0], v.id))
    free_r = [i not in reserved for i in range(max_registers)]
    free_p = [True] * NUM_PREDS
    active: list[tuple[int, VReg]] = []
    assign: dict[VReg, int] = {}
    victims: list[VReg] = []
    used = 0

    def fit(v: VReg) -> int | None:
        step = 2 if v.width == 2 else 1
        return next((i for i in range(0, max_registers - v.width + 1, step) if all(free_r[i:i + v.width])), None)

    for v in order:
        start, end = iv[v]
        still = []
        for e, a in active:  # expire intervals that ended before this one starts
            if e < start:
                _release(a, assign[a], free_r, free_p)
            else:
                still.append((e, a))
        active = still
        if v.width == 0:
            r = next((i for i in range(NUM_PREDS) if free_p[i]), None)
            if r is None:
                raise UnsupportedError(f"kernel '{kernel}' needs more than {NUM_PREDS} live predicates "
                                       "after predicate spilling (spill_predicates must run first)")
            free_p[r] = False
        else:
            r = fit(v)
            while r is None:
                if spiller is None:
                    raise UnsupportedError(f"kernel '{kernel}' needs more than {max_registers} registers "
                                           "(spilling is not enabled for this allocation)")
                candidates = [a for _, a in active if a.width and a not in spiller.pinned]
                if v not in spiller.pinned:
                    candidates.append(v)
                if not candidates:
                    raise UnsupportedError(f"kernel '{kernel}' needs more than {max_registers} registers at one "
                                           "instruction, even with every other value spilled")
                victim = spiller.choose(candidates, start)
                victims.append(victim)
                if victim is v:
                    break
                active = [(e, a) for e, a in active if a is not victim]
                _release(victim, assign.pop(victim), free_r, free_p)
                r = fit(v)
            if r is None:
                continue  # v itself is spilled
            for i in range(r, r + v.width):
                free_r[i] = False
            used = max(used, r + v.width)
        assign[v] = r
        active.append((end, v))
    return assign, used, victims


def _release(v: VReg, r: int, free_r, free_p) -> None:
    if v.width == 0:
        free_p[r] = True
    else:
        for i in range(r, r + v.width):
            free_r[i] = True


def rewrite(blocks: list[MBlock], assign: dict[VReg, int]) -> None:
    """Replace virtual registers by physical ones in place."""

    def phys(x):
        if isinstance(x, VReg):
            return assign[x]
        if isinstance(x, Half):
            return assign[x.vreg] + x.index
        if isinstance(x, tuple):
            return (phys(x[0]), x[1])
        return x

    for b in blocks:
        for m in b.insts:
            m.ops = {k: phys(v) for k, v in m.ops.items()}
            if m.guard is not None:
                m.guard = (phys(m.guard[0]), m.guard[1])


def check_allocation(blocks: list[MBlock], assign: dict[VReg, int], origin: dict[VReg, VReg | Half] | None = None,
                     slots: dict[MInst, int] | None = None) -> None:
    """Prove that no two values whose intervals overlap share a physical register, and that every
    read finds its value (:func:`check_values`).  ``origin``: spill registers and temporaries ->
    the value they carry (:attr:`xcc.backend.pred_spill.PredSpills.origin`, and
    :attr:`xcc.backend.spill.Spills.origin`, where a 32-bit temporary may carry one half of a
    64-bit value); ``slots``: the spill stores and reloads -> the local-memory offset they access
    (:attr:`xcc.backend.spill.Spills.accesses`).  An allocation over live ranges with holes has its own first
    half (:func:`xcc.backend.regalloc_ranges.check_ranges`)."""
    iv = intervals(blocks)
    for cls in (0, 1):
        owners: dict[int, list[tuple[int, int, VReg]]] = {}
        for v, (s, e) in iv.items():
            if (v.width == 0) != (cls == 0):
                continue
            for i in range(assign[v], assign[v] + max(v.width, 1)):
                owners.setdefault(i, []).append((s, e, v))
        for r, spans in owners.items():
            spans.sort(key=lambda t: (t[0], t[1]))
            for (_s1, e1, v1), (s2, _e2, v2) in zip(spans, spans[1:]):
                if s2 <= e1:
                    raise AssertionError(f"register allocation conflict: {v1} and {v2} share "
                                         f"{'P' if cls == 0 else 'R'}{r} over [{s2}, {e1}]")
    check_values(blocks, assign, origin or {}, slots or {})


_CONFLICT = "<different values on different paths>"


def _locations(x, assign: dict[VReg, int], origin: dict) -> list[tuple[tuple[str, int], tuple]]:
    """(physical location, symbolic value) pairs an operand reads or writes."""
    if isinstance(x, tuple):
        x = x[0]
    if isinstance(x, Half):
        v = x.vreg
        return [(("r", assign[v] + x.index), (origin.get(v, v), x.index))]
    if not isinstance(x, VReg):
        return []
    val = origin.get(x, x)
    if isinstance(val, Half):  # a 32-bit temporary that carries one half of a spilled 64-bit value
        return [(("r", assign[x]), (val.vreg, val.index))]
    if x.width == 0:
        return [(("p", assign[x]), (val, 0))]
    return [(("r", assign[x] + i), (val, i)) for i in range(x.width)]


def _spill_move(m: MInst, origin: dict[VReg, VReg]) -> tuple[VReg, VReg] | None:
    """(source, destination) when ``m`` is a predicate spill store (``P2R g, t``) or reload
    (``ISETP.NE t, g, RZ``) between registers of the spill map, else None."""
    if m.guard is not None:
        return None
    if m.mnemonic == "P2R":
        src, dst = m.ops["ps"], m.ops["d"]
        if src[1] or src[0] not in origin or dst not in origin:
            return None
        return src[0], dst
    if m.mnemonic == "ISETP":
        src, dst = m.ops["a"], m.ops["pd"]
        if (src in origin and dst in origin and m.ops["b"] == RZ and m.ops["ps"] == (PT, False)
                and m.mods.get("cmp") == "NE" and m.mods.get("bool", "AND") == "AND"):
            return src, dst
    return None


def check_values(blocks: list[MBlock], assign: dict[VReg, int], origin: dict,
                 slots: dict[MInst, int] | None = None) -> None:
    """Symbolic execution of the allocated program: each physical register holds the value last
    written to it (a spill register and the temporaries of a predicate hold that predicate's
    value), merged over a block's predecessors (a register keeps a value only if every path that
    wrote it agrees).  Spill stores and reloads copy what their source register holds, so a
    reload from the wrong register is caught at the use of the reloaded value.  Spill slots in
    local memory (``slots``: spill store or reload -> byte offset) are locations too, one per
    32-bit word: a store copies its registers' values into the slot's words, a reload copies the
    words back, so a reload from the wrong slot, or from a slot that another value overwrote on
    some path, is caught at the use of the reloaded value.  A read of a register that holds
    another value raises AssertionError."""
    slots = slots or {}
    preds = block_predecessors(blocks)
    out: dict[str, dict] = {}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            seen = [out[p] for p in preds[b.name] if p in out]
            state: dict = {}
            for st in seen:
                for loc, val in st.items():
                    state[loc] = val if state.get(loc, val) == val else _CONFLICT
            for m in b.insts:
                if m in slots:
                    _slot_access(m, slots[m], assign, state)
                    continue
                move = _spill_move(m, origin)
                if move is not None:  # the destination holds whatever the source holds
                    (src, _), = _locations(move[0], assign, origin)
                    (dst, _), = _locations(move[1], assign, origin)
                    if src in state:
                        state[dst] = state[src]
                    else:
                        state.pop(dst, None)
                    continue
                for x in m.uses():
                    for loc, val in _locations(x, assign, origin):
                        held = state.get(loc, val)  # never written on any path: an undefined read
                        if held != val:
                            raise AssertionError(
                                f"register allocation checker: {m.mnemonic} in block {b.name} reads "
                                f"{val[0]!r} from {loc[0].upper()}{loc[1]}, which holds "
                                f"{held if held is _CONFLICT else repr(held[0])}")
                for x in m.defs():
                    for loc, val in _locations(x, assign, origin):
                        state[loc] = val
            if out.get(b.name) != state:
                out[b.name], changed = state, True


def _slot_access(m: MInst, offset: int, assign: dict[VReg, int], state: dict) -> None:
    """A spill store copies registers into slot words, a reload slot words into registers."""
    store = m.mnemonic.startswith("STL")
    reg = m.ops["c" if store else "d"]
    width = 2 if m.mnemonic.endswith(".64") else 1
    for i in range(width):
        r, word = ("r", assign[reg] + i), ("l", offset + 4 * i)
        src, dst = (r, word) if store else (word, r)
        if src in state:
            state[dst] = state[src]
        else:
            state.pop(dst, None)


__all__ = ["allocate", "check_allocation", "check_values", "rewrite", "RZ", "PT"]
