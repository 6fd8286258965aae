"""Copy coalescing before register allocation: a copy whose source and destination never hold different
values at the same time is removed, the two virtual registers becoming one.

Leaving SSA puts a parallel copy for each phi at the end of every predecessor
(:meth:`xcc.backend.isel_core.SelectorCore._phi_copies`).  A loop-carried value ``v = phi(init, next)``
gets ``MOV v, next`` on the back edge; the linear-scan allocator (:mod:`xcc.backend.regalloc`) sees two
intervals that both span the loop, so without coalescing they always get two registers and the copy stays.
Here the copies are coalesced on the machine code, as Chaitin's allocator does ("Register Allocation &
Spilling via Graph Coloring", SIGPLAN 1982): two values *interfere* when one is live where the other is
defined, except that a copy's destination does not interfere with its source, which holds the same value
(the test of Budimlic et al., "Fast Copy Coalescing and Live-Range Identification", PLDI 2002, section
3, on the exact liveness instead of their dominance-forest approximation).  Copies are visited in
program order and coalesced aggressively (every pair that does not interfere), since a copy's
source interval ends where its destination's starts: the merged interval covers no position that one of
the two did not, so linear scan never needs more registers for it.

Only 32-bit register copies (``MOV``), 64-bit ones (a ``MOV`` per half) and predicate copies (``PLOP3``
with the LUT of its first operand) without a guard count as copies; values named by ``keep`` (the
predicate spiller's registers, call-related values) are left alone.  After renaming, the copies that
became ``x = x`` are deleted, and a branch to a block that is now only an unconditional branch goes to
that branch's target instead (the block, if nothing else reaches it and no convergence barrier names it,
is dropped): the back edge of a rotated loop is then one conditional branch.  Blocks nothing reaches any
more are dropped (:func:`drop_unreachable`).
"""

from __future__ import annotations

from xcc.backend.isa import LEAVES, PT
from xcc.backend.isel import MBlock
from xcc.backend.isel_tables import PLUT_A
from xcc.backend.minst import Half, MInst, VReg, block_predecessors, two_way_branch
from xcc.backend.regalloc import inst_defs, inst_uses, liveness


def copy_pair(m: MInst) -> tuple[VReg, VReg] | None:
    """(destination, source) when ``m`` is an unguarded register-to-register copy, else None."""
    if m.guard is not None:
        return None
    if m.mnemonic == "MOV":
        d, s = m.ops["d"], m.ops["b"]
        if isinstance(d, VReg) and isinstance(s, VReg) and d.width == s.width == 1:
            return d, s
        if isinstance(d, Half) and isinstance(s, Half) and d.index == s.index and d.vreg.width == s.vreg.width:
            return d.vreg, s.vreg
        return None
    if m.mnemonic == "PLOP3":
        d, a, s = m.ops["pd"], m.ops["pa"], m.ops["ps"]
        if (isinstance(d, VReg) and isinstance(a, VReg) and s == (PT, False)
                and int(m.mods.get("lut", "0"), 16) == PLUT_A):
            return d, a
    return None


def coalesce_copies(blocks: list[MBlock], keep: set[VReg] = frozenset()) -> dict[VReg, VReg]:
    """Coalesce the copies of ``blocks`` in place; returns each renamed register -> its representative."""
    copies = [(d, s) for b in blocks for m in b.insts if (p := copy_pair(m)) for d, s in [p]
              if d != s and d not in keep and s not in keep]
    if not copies:
        return {}
    related = {v for p in copies for v in p}
    adj = _interference(blocks, related)
    parent: dict[VReg, VReg] = {}

    def find(v: VReg) -> VReg:
        while v in parent:
            v = parent[v]
        return v

    for d, s in copies:
        a, b = find(d), find(s)
        if a == b or b in adj.get(a, ()):
            continue
        parent[b] = a  # b's neighbours become a's
        na = adj.setdefault(a, set())
        for n in adj.pop(b, set()):
            na.add(n)
            adj[n].discard(b)
            adj[n].add(a)
    rename = {v: find(v) for v in parent}
    if rename:
        _rename(blocks, rename)
        _drop_self_copies(blocks)
    return rename


def _interference(blocks: list[MBlock], related: set[VReg]) -> dict[VReg, set[VReg]]:
    """Interference among ``related`` registers: at every definition, the defined value against every
    value live after it (the copy's source excepted), and the values an instruction defines together."""
    live_in, live_out = liveness(blocks)
    adj: dict[VReg, set[VReg]] = {}

    def edge(x: VReg, y: VReg) -> None:
        if x != y and x.width == y.width:
            adj.setdefault(x, set()).add(y)
            adj.setdefault(y, set()).add(x)

    if blocks:  # values read before any definition on some path: all live at the entry together
        entry = sorted((v for v in live_in[blocks[0].name] if v in related), key=lambda v: v.id)
        for i, x in enumerate(entry):
            for y in entry[i + 1:]:
                edge(x, y)
    for b in blocks:
        live = {v for v in live_out[b.name] if v in related}
        for m in reversed(b.insts):
            defs = inst_defs(m)
            pair = copy_pair(m)
            src = pair[1] if pair else None
            rdefs = [v for v in defs if v in related]
            for d in rdefs:
                for x in live:
                    if x != src:
                        edge(d, x)
            for i, x in enumerate(rdefs):
                for y in rdefs[i + 1:]:
                    edge(x, y)
            if m.guard is None:
                live.difference_update(defs)
            live.update(v for v in inst_uses(m) if v in related)
    return adj


def _rename(blocks: list[MBlock], rename: dict[VReg, VReg]) -> None:
    def sub(x):
        if isinstance(x, VReg):
            return rename.get(x, x)
        if isinstance(x, Half) and x.vreg in rename:
            return Half(rename[x.vreg], x.index)
        if isinstance(x, tuple) and isinstance(x[0], VReg):
            return (rename.get(x[0], x[0]), x[1])
        return x

    for b in blocks:
        for m in b.insts:
            m.ops = {k: sub(v) for k, v in m.ops.items()}
            if m.guard is not None:
                m.guard = sub(m.guard)


def _drop_self_copies(blocks: list[MBlock]) -> None:
    for b in blocks:
        b.insts = [m for m in b.insts if not ((p := copy_pair(m)) and p[0] == p[1]
                                              and (m.mnemonic != "MOV" or m.ops["d"] == m.ops["b"]))]


def thread_branches(blocks: list[MBlock]) -> None:
    """A branch to a block that holds only an unconditional ``BRA`` goes to its target; such a block that
    nothing reaches any more (no branch, no fall-through, no convergence barrier) is dropped."""
    only = {b.name: b.insts[0].ops["b"] for b in blocks
            if len(b.insts) == 1 and b.insts[0].mnemonic == "BRA" and b.insts[0].guard is None}
    if not only:
        return

    def final(name: str) -> str:
        seen = set()
        while name in only and name not in seen:
            seen.add(name)
            name = only[name]
        return name

    for i, b in enumerate(blocks):
        moved = set()
        for m in b.insts:
            if m.mnemonic == "BRA" and m.ops["b"] in only and final(m.ops["b"]) != m.ops["b"]:
                moved.add(m.ops["b"])
                m.ops["b"] = final(m.ops["b"])
        if not moved:
            continue
        falls = blocks[i + 1].name if i + 1 < len(blocks) and _falls_through(b) else None
        succs = []
        for s in b.succs:
            if s in moved:
                succs.append(final(s))
                if s == falls:
                    succs.append(s)
            else:
                succs.append(s)
        b.succs = list(dict.fromkeys(succs))
    named = {m.ops["b"] for b in blocks for m in b.insts if m.mnemonic == "BSSY"}
    reached = {s for b in blocks for s in b.succs} | named | {blocks[0].name}
    blocks[:] = [b for b in blocks if b.name in reached or b.name not in only]


def hoist_common(blocks: list[MBlock]) -> None:
    """An instruction that both successors of a two-way branch start with, when the branch is their only
    predecessor, moves above the branch (code hoisting): after coalescing, ``if (n > 0) {loop} else {}``
    sets the loop's counter and the join's value, now one register, with one ``MOV R, 0`` instead of two,
    and the side left with only its branch is threaded away (:func:`thread_branches`)."""
    by_name = {b.name: b for b in blocks}
    preds = block_predecessors(blocks)
    for a in blocks:
        branch = two_way_branch(a)
        if branch is None or branch[0].ops["b"] == branch[1].ops["b"]:
            continue
        cond, other = branch
        x, y = by_name.get(cond.ops["b"]), by_name.get(other.ops["b"])
        if x is None or y is None or preds[x.name] != [a.name] or preds[y.name] != [a.name] or x is blocks[0] \
                or y is blocks[0]:
            continue
        at = len(a.insts) - 2
        while at > 0 and a.insts[at - 1].mnemonic == "BSSY":
            at -= 1
        while len(x.insts) > 1 and len(y.insts) > 1 and _same(x.insts[0], y.insts[0]):
            m = x.insts[0]
            if (m.guard is not None or m.d.has_effects or m.d.is_load or m.mnemonic == "BRA"
                    or cond.guard[0] in inst_defs(m)):
                break
            a.insts.insert(at, x.insts.pop(0))
            y.insts.pop(0)
            at += 1


def _same(m: MInst, n: MInst) -> bool:
    return m.d is n.d and m.ops == n.ops and m.mods == n.mods and m.guard == n.guard


def drop_unreachable(blocks: list[MBlock]) -> None:
    """Drop the blocks no instruction reaches (a branch, or a fall-through) from the entry: e.g. the exit
    block of a loop whose exit test became a guarded ``EXIT``.  Blocks a BSSY names stay; successor lists
    lose the dropped blocks."""
    index = {b.name: i for i, b in enumerate(blocks)}
    keep = {m.ops["b"] for b in blocks for m in b.insts if m.mnemonic == "BSSY"}
    seen, work = set(), [blocks[0].name] if blocks else []
    while work:
        n = work.pop()
        if n in seen or n not in index:
            continue
        seen.add(n)
        b = blocks[index[n]]
        work += [m.ops["b"] for m in b.insts if m.mnemonic == "BRA"]
        if _falls_through(b) and index[n] + 1 < len(blocks):
            work.append(blocks[index[n] + 1].name)
    gone = {b.name for b in blocks} - seen - keep
    if gone:
        blocks[:] = [b for b in blocks if b.name not in gone]
        for b in blocks:
            b.succs = [x for x in b.succs if x not in gone]


def _falls_through(b: MBlock) -> bool:
    """Whether control can run off the end of ``b`` into the next block."""
    if not b.insts:
        return True
    last = b.insts[-1]
    return not (last.guard is None and (last.mnemonic == "BRA" or last.mnemonic in LEAVES))
