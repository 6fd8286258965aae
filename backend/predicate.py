"""Predicated execution instead of short branches: if-conversion on machine code after instruction selection.

``if (i < n) v = x[i]; else v = 0;`` leaves instruction selection as a diamond: a conditional branch,
two short blocks that end in the phi copies of their join, and a branch each to the join.  ptxas emits it
as ``MOV R, 0; @P LDG R, [..]`` (Allen, Kennedy, Porterfield and Warren, "Conversion of Control Dependence
to Data Dependence", POPL 1983; Mahlke et al., "Effective Compiler Support for Predicated Execution Using
the Hyperblock", MICRO 1992): every xg1 instruction may be guarded, so a branch around at most
:data:`MAX_INSTRUCTIONS` instructions becomes those instructions guarded by the branch's predicate (the
other side's by its complement) and no branch, no BSSY/BSYNC.

A side qualifies when its block has the branching block as its only predecessor, ends in an unconditional
branch to the join, and holds only instructions that may be guarded (no control flow, barriers,
warp-collective or asynchronous operations, nothing already guarded) and that do not redefine the
predicate.  A triangle (one side empty: the branch goes straight to the join) is the same with one side.
Atomics are never guarded, nor memory accesses in a loop: a guarded-off access still issues and its
result is still waited for (the cycle model, as the hardware), so there the branch is cheaper.

Guards cost registers when they are not needed: a register whose every definition is guarded is, for
liveness, live before them (:func:`xcc.backend.regalloc.liveness`).  So an instruction that cannot fault
and has no effect beyond registers that nothing outside its side reads runs unguarded; a guarded copy
``@P MOV v, t`` of a temporary ``t`` written only by the instruction before it under the same guard writes
``v`` directly (``@P LDG v``); and a join value that one side sets by a plain move is set unguarded first,
the other side's guarded definition overriding it, as in ptxas's ``MOV R, 0; @P LDG R``.
"""

from __future__ import annotations

from xcc.backend.isa import PT
from xcc.backend.minst import MInst, VReg, block_predecessors, mi, two_way_branch, virtual_registers

MAX_INSTRUCTIONS = 8
"""The most instructions (both sides together, without their branches) turned into guarded ones."""

_NOT_PREDICABLE = frozenset({"branch", "leave", "reconverge", "call", "barrier", "barrier_wait", "sync",
                             "warp_sync", "collective", "warpgroup", "tensor", "async_copy", "async_wait", "nop"})




def predicate(blocks: list) -> None:
    """If-convert the short diamonds and triangles of ``blocks`` (:class:`xcc.backend.isel_core.MBlock`), in
    place, until none is left; first a branch to a block that only exits becomes that ``EXIT``."""
    duplicate_exits(blocks)
    while _convert_one(blocks):
        pass


def duplicate_exits(blocks: list) -> None:
    """``BRA J`` where ``J`` is only ``EXIT`` becomes ``EXIT`` (tail duplication, as ptxas ends each side
    of ``if (..) y[i] = a; else y[i] = b;`` with its own EXIT): no branch, and the sides no longer meet, so
    they need no convergence barrier.  A block nothing reaches any more is dropped."""
    exits = {b.name for b in blocks if len(b.insts) == 1 and b.insts[0].mnemonic == "EXIT"
             and b.insts[0].guard is None}
    if not exits:
        return
    for b, nxt in zip(blocks, blocks[1:] + [None]):
        last = b.insts[-1] if b.insts else None
        if (last is not None and last.mnemonic == "BRA" and last.guard is None and last.ops["b"] in exits
                and (nxt is None or nxt.name != last.ops["b"])):  # not a fall-through, which costs nothing
            target = last.ops["b"]
            b.insts[-1] = mi("EXIT", line=last.line, debug_loc=last.debug_loc)
            if not any(m.mnemonic == "BRA" and m.ops["b"] == target for m in b.insts):
                b.succs = [s for s in b.succs if s != target]
    reached = {s for b in blocks for s in b.succs} | {blocks[0].name}
    blocks[:] = [b for b in blocks if b.name in reached or b.name not in exits]


def _convert_one(blocks: list) -> bool:
    by_name = {b.name: b for b in blocks}
    preds = block_predecessors(blocks)
    for a in blocks:
        branch = two_way_branch(a)
        if branch is None or not isinstance(branch[0].guard[0], VReg):
            continue
        cond, other = branch
        t, f = cond.ops["b"], other.ops["b"]
        if t == f or t == a.name or f == a.name:
            continue
        shape = _shape(by_name, preds, a.name, t, f)
        if shape is None:
            continue
        sides, join = shape
        p, neg = cond.guard
        guarded = [(by_name[t], (p, neg)) if t in sides else None, (by_name[f], (p, not neg)) if f in sides else None]
        if _rewrite(blocks, a, [g for g in guarded if g is not None], join):
            return True
    return False


def _shape(by_name, preds, a: str, t: str, f: str) -> tuple[set[str], str] | None:
    """(the side blocks to guard, the join) when ``a``'s branch to ``t`` or ``f`` is a short diamond or
    triangle, else None."""

    def side(name: str) -> str | None:  # the join a qualifying side block branches to
        b = by_name[name]
        if preds[name] != [a] or not b.insts or len(b.succs) != 1 or b is entry:
            return None
        last = b.insts[-1]
        if last.mnemonic != "BRA" or last.guard is not None or last.ops["b"] != b.succs[0]:
            return None
        if not all(_predicable(m) for m in b.insts[:-1]):
            return None
        return last.ops["b"]

    entry = next(iter(by_name.values()))
    jt, jf = side(t), side(f)
    if jt is not None and jt == jf and jt != a:
        sides, join = {t, f}, jt
    elif jt is not None and jt == f:
        sides, join = {t}, f
    elif jf is not None and jf == t:
        sides, join = {f}, t
    else:
        return None
    if sum(len(by_name[s].insts) - 1 for s in sides) > MAX_INSTRUCTIONS:
        return None
    insts = [m for s in sides for m in by_name[s].insts]
    if any("atomic" in m.d.classes for m in insts):
        return None  # every thread would issue the atomic, guarded off or not: it serialises
    if any(m.d.memory_operand for m in insts) and _in_loop(by_name, a):
        return None  # a guarded-off access still issues and is waited for, on every trip
    return sides, join


def _in_loop(by_name, a: str) -> bool:
    """Whether block ``a`` reaches itself."""
    seen, work = set(), list(by_name[a].succs)
    while work:
        n = work.pop()
        if n == a:
            return True
        if n not in seen and n in by_name:
            seen.add(n)
            work.extend(by_name[n].succs)
    return False


def _predicable(m: MInst) -> bool:
    return m.guard is None and not (m.d.classes & _NOT_PREDICABLE)


def _rewrite(blocks: list, a, sides: list, join: str) -> bool:
    """Guard the sides into ``a``, which then branches to ``join``; False (nothing changed) when a side
    redefines the branch's predicate."""
    p = a.insts[-2].guard[0]
    names = {b.name for b, _ in sides}
    if any(p in virtual_registers(m.defs()) for b, _ in sides for m in b.insts):
        return False
    # reads of every register outside the sides: a side's temporaries are read nowhere else
    outside: set[VReg] = set()
    for b in blocks:
        if b.name not in names:
            for m in b.insts:
                outside.update(virtual_registers(m.uses()))
    seqs = [(b.insts[:-1], g) for b, g in sides]
    if len(seqs) == 2 and _first_plain(seqs[1][0], seqs) and not _first_plain(seqs[0][0], seqs):
        seqs.reverse()  # the side whose join values are plain moves goes first, unguarded
    body: list[MInst] = []
    for k, (insts, g) in enumerate(seqs):
        insts = _fuse_copies(insts)
        own_defs = {v for m in insts for v in virtual_registers(m.defs())}
        for m in insts:
            free = _pure(m) and not any(v in outside for v in virtual_registers(m.defs())) and all(
                v not in own_defs or v in body_unguarded(body, insts, m) for v in virtual_registers(m.uses()))
            if not free and k == 0 and len(seqs) == 2 and _plain_join_def(m, seqs, body):
                free = True
            if not free:
                m.guard = g
            body.append(m)
    a.insts[-2:] = body + [a.insts[-1]]
    a.insts[-1].ops["b"] = join
    a.succs = [join]
    blocks[:] = [b for b in blocks if b.name not in names]
    return True


def body_unguarded(body: list[MInst], insts: list[MInst], m: MInst) -> set[VReg]:
    """Registers of ``insts`` that instructions placed before ``m`` define unguarded."""
    out = set()
    for x in insts:
        if x is m:
            break
        if x.guard is None:
            out.update(virtual_registers(x.defs()))
    return out


def _pure(m: MInst) -> bool:
    """Runs harmlessly where its guard would be false: no effects, no memory read (it could fault)."""
    return not m.d.has_effects and not m.d.is_load and not m.d.classes & _NOT_PREDICABLE


def _first_plain(insts: list[MInst], seqs) -> bool:
    return any(_plain_join_def(m, seqs, []) for m in insts)


def _plain_join_def(m: MInst, seqs, body: list[MInst]) -> bool:
    """``m`` computes, from nothing either side defines and without effects, a register the other side
    also defines and no instruction of either side reads: it may run unguarded before the other side's
    definition (which overrides it where that side's guard holds)."""
    defs = virtual_registers(m.defs())
    if not _pure(m) or len(defs) != 1 or not isinstance(m.ops.get("d"), VReg):
        return False
    v = defs[0]
    insts = [x for s, _ in seqs for x in s]
    side_defs = {d for x in insts for d in virtual_registers(x.defs())}
    if any(v in virtual_registers(x.uses()) for x in insts) or any(u in side_defs for u in virtual_registers(m.uses())):
        return False
    return sum(v in virtual_registers(x.defs()) for x in insts) == 2


def _fuse_copies(insts: list[MInst]) -> list[MInst]:
    """``X t, ...; MOV v, t`` with ``t`` read by nothing else: ``X v, ...`` (its guard will be the same)."""
    out = list(insts)
    i = 1
    while i < len(out):
        m, prev = out[i], out[i - 1]
        if (m.mnemonic == "MOV" and isinstance(m.ops["b"], VReg) and isinstance(m.ops["d"], VReg)
                and prev.ops.get("d") is m.ops["b"] and m.ops["b"].width == m.ops["d"].width
                and sum(m.ops["b"] in virtual_registers(x.uses()) for x in out) == 1
                and sum(m.ops["b"] in virtual_registers(x.defs()) for x in out) == 1
                and m.ops["d"] not in virtual_registers(prev.uses())):
            prev.ops["d"] = m.ops["d"]
            del out[i]
            continue
        i += 1
    return out


__all__ = ["MAX_INSTRUCTIONS", "PT", "predicate"]
