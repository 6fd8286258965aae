"""Machine-code combining after instruction selection: operands folded into their users, as ptxas folds them.

Instruction selection lowers one IR op at a time, so a constant it had to put in a register, or a product
that only feeds an addition, costs an instruction of its own.  This pass, on the virtual-register code of
one function (before convergence barriers and register allocation), folds:

- a register whose only definition is ``MOV t, imm`` into the instructions that read it: ``RZ`` for 0 in a
  32-bit register operand, the immediate itself in a B operand (``RIC``); in ``IADD3`` a constant in the A or
  C slot swaps with a register B, and a constant address register of a shared or local access becomes the
  access's immediate offset (``[RZ + imm]``), as in ptxas's ``LDS R0, [0x10]``;
- a multiplication whose only reader adds it to a register: ``IMAD t, x, y, RZ; IADD3 d, t, z, RZ`` is
  ``IMAD d, x, y, z``, ``SHL t, x, k; IADD3 d, t, z, RZ`` is ``IMAD d, x, 2**k, z`` and ``IMAD.WIDE t, x,
  y, RZ; IADD.64 d, t, z`` is ``IMAD.WIDE d, x, y, z`` (ptxas's ``IMAD.WIDE R2, R2, 0x4, R4`` for
  ``&p[i]``): the same bits modulo 2**32 (2**64), one instruction fewer.

A fold moves a computation to its reader only when the reader is in the same block, nothing between them
redefines the registers it reads, and the folded register has one definition and that one reader; every
instruction involved is unguarded.  What becomes dead is left to machine dead-code elimination.
"""

from __future__ import annotations

from xcc.backend.isa import CTA_BARRIERS, LOADS, MEMORY_SPACE, PT, RZ, STORES, TABLE
from xcc.backend.minst import Half, Imm, MInst, VReg, inst_defs, inst_uses

_OFFSET_ACCESS = frozenset(mn for mn in LOADS | STORES if MEMORY_SPACE.get(mn) in ("shared", "local"))
"""Shared and local accesses: a 32-bit address register ``a`` and an immediate offset ``b``."""


_RZ_MEANS_ALL = frozenset(mn for mn in CTA_BARRIERS if any(o.field == "c" for o in TABLE[mn].operands))
"""CTA barriers with a thread count (BAR.CNT, BAR.RED): they read RZ there as 'every thread of the CTA', not 0."""




def combine(blocks: list) -> None:
    """Fold constants and multiply-adds in ``blocks`` (a list of :class:`xcc.backend.isel_core.MBlock`), in
    place."""
    defs: dict[VReg, list[MInst]] = {}
    uses: dict[VReg, int] = {}
    for b in blocks:
        for m in b.insts:
            for v in inst_defs(m):
                defs.setdefault(v, []).append(m)
            for v in inst_uses(m):
                uses[v] = uses.get(v, 0) + 1
    consts = {v: ms[0].ops["b"].value for v, ms in defs.items()
              if len(ms) == 1 and _const_mov(ms[0]) and ms[0].ops["d"] is v}
    for b in blocks:
        for m in b.insts:
            _fold_constants(m, consts)
    same = _repeated_constants(blocks, consts)
    halves = _half_copies(blocks, defs, uses)
    if same or halves:
        _substitute(blocks, {**same, **halves})
    for b in blocks:
        _fold_multiply_adds(b, defs, uses)
        _fold_shared_products(b, defs, uses)
        _merge_shuffles(b)


def _const_mov(m: MInst) -> bool:
    return m.mnemonic == "MOV" and m.guard is None and isinstance(m.ops["d"], VReg) and isinstance(m.ops["b"], Imm)


def _fold_constants(m: MInst, consts: dict[VReg, int]) -> None:
    kinds = {o.field: o.kind for o in m.d.operands if not o.is_def}
    if m.mnemonic in _OFFSET_ACCESS and m.ops.get("a") in consts:
        off = m.ops["b"] + consts[m.ops["a"]]
        if -(1 << 31) <= off < (1 << 31):
            m.ops["a"], m.ops["b"] = RZ, off
    if (m.mnemonic == "IADD3" and not m.mods and isinstance(m.ops["b"], VReg | int)
            and not isinstance(m.ops["b"], Imm)):
        for f in ("a", "c"):
            if m.ops[f] in consts and consts[m.ops[f]] != 0:
                m.ops[f], m.ops["b"] = m.ops["b"], m.ops[f]
                break
    for f, kind in kinds.items():
        x = m.ops.get(f)
        if not isinstance(x, VReg) or x not in consts:
            continue
        if kind == "RIC":
            m.ops[f] = Imm(consts[x])
        elif kind == "R" and consts[x] == 0 and m.mnemonic not in _RZ_MEANS_ALL:
            m.ops[f] = RZ


def _repeated_constants(blocks: list, consts: dict[VReg, int]) -> dict[VReg, VReg]:
    """A constant moved into a register again in the same block: the later register -> the earlier one."""
    same: dict[VReg, VReg] = {}
    for b in blocks:
        first: dict[int, VReg] = {}
        for m in b.insts:
            d = m.ops.get("d")
            if _const_mov(m) and d in consts:
                if consts[d] in first:
                    same[d] = first[consts[d]]
                else:
                    first[consts[d]] = d
    return same


def _half_copies(blocks: list, defs: dict[VReg, list[MInst]], uses: dict[VReg, int]) -> dict[VReg, Half]:
    """The registers defined once by ``MOV t, p.lo|hi`` (an element of a vector load, ``unpack``) whose readers
    all follow in the same block, ``p`` having one definition: they can read the half of ``p`` itself, which
    holds the same bits there (the copy becomes dead and ``p``'s pair is read in place, as ptxas reads
    ``LDS.64 R4`` as R4 and R5)."""
    out: dict[VReg, Half] = {}
    for b in blocks:
        for start, m in enumerate(b.insts):
            t, h = m.ops.get("d"), m.ops.get("b")
            if not (m.mnemonic == "MOV" and m.guard is None and isinstance(t, VReg) and t.width == 1
                    and isinstance(h, Half) and len(defs.get(t, ())) == 1 and len(defs.get(h.vreg, ())) == 1):
                continue
            readers = sum(1 for x in b.insts[start + 1:] for v in inst_uses(x) if v is t)
            if readers == uses.get(t, 0):
                out[t] = h
    return out


def _substitute(blocks: list, same: dict[VReg, VReg | Half]) -> None:
    """Read the registers of ``same`` from their replacements (the replaced definitions become dead)."""
    for b in blocks:
        for m in b.insts:
            for o in m.d.operands:
                x = m.ops.get(o.field)
                if o.is_def or x is None:
                    continue
                if isinstance(x, VReg) and x in same:
                    m.ops[o.field] = same[x]
                elif isinstance(x, tuple) and x[0] in same:
                    m.ops[o.field] = (same[x[0]], x[1])
            if m.guard is not None and m.guard[0] in same:
                m.guard = (same[m.guard[0]], m.guard[1])


def _merge_shuffles(b) -> None:
    """PTX ``shfl.sync d|p, ...`` is selected as one SHFL for ``d`` and one for ``p`` (``d`` = RZ): when
    nothing between them changes their operands, the first writes both and the second goes."""
    dead: set[int] = set()
    for i, m in enumerate(b.insts):
        if m.mnemonic != "SHFL" or m.guard is not None or m.ops["pd"] != PT or not isinstance(m.ops["d"], VReg):
            continue
        for j in range(i + 1, len(b.insts)):
            n = b.insts[j]
            if (n.mnemonic == "SHFL" and n.guard is None and n.ops["d"] == RZ and n.mods == m.mods
                    and all(n.ops[f] == m.ops[f] for f in ("a", "b", "c", "e"))):
                p = n.ops["pd"]
                if any(p in inst_uses(x) or p in inst_defs(x) for x in b.insts[i + 1:j]):
                    break
                m.ops["pd"] = p
                dead.add(id(n))
                break
            if n.d.has_effects or n.d.is_fence or any(
                    _redefined([n], m.ops[f]) for f in ("a", "b", "c", "e", "d")):
                break
    if dead:
        b.insts = [m for m in b.insts if id(m) not in dead]


def _fold_multiply_adds(b, defs: dict[VReg, list[MInst]], uses: dict[VReg, int]) -> None:
    pos = {id(m): i for i, m in enumerate(b.insts)}
    dead: set[int] = set()
    for i, m in enumerate(b.insts):
        wide = m.mnemonic == "IADD.64"
        if m.guard is not None or m.mods or not (wide or m.mnemonic == "IADD3"):
            continue
        if not wide and m.ops["c"] != RZ:
            continue
        for f, other in (("a", "b"), ("b", "a")):
            t, z = m.ops[f], m.ops[other]
            if not (isinstance(t, VReg) and (isinstance(z, VReg) or z == RZ) and uses.get(t) == 1
                    and t.width == (2 if wide else 1)):
                continue
            if wide and len(defs.get(t, ())) == 2 and _fold_extension(b, m, i, t, z, defs[t], pos, dead):
                break
            if len(defs.get(t, ())) != 1:
                continue
            p = defs[t][0]
            j = pos.get(id(p))
            if j is None or j >= i or id(p) in dead or p.guard is not None or p.ops.get("d") is not t:
                continue
            new = _multiply_add(p, wide)
            if new is None:
                continue
            mnemonic, ops, mods = new
            if any(_redefined(b.insts[j + 1:i], x) for x in (ops["a"], ops["b"])):
                continue
            m.d = TABLE[mnemonic]
            m.ops, m.mods = {"d": m.ops["d"], **ops, "c": z}, mods
            dead.add(id(p))
            break
    if dead:
        b.insts = [m for m in b.insts if id(m) not in dead]


def _fold_shared_products(b, defs: dict[VReg, list[MInst]], uses: dict[VReg, int]) -> None:
    """A product every reader of which adds it to a register, all later in the block (``&x[i]``, ``&y[i]``,
    ``&z[i]`` from one ``i * 4``): each addition becomes the multiply-add, as ptxas's three IMAD.WIDE, and
    the product goes."""
    dead: set[int] = set()
    for j, p in enumerate(b.insts):
        t = p.ops.get("d")
        if not isinstance(t, VReg) or p.guard is not None or len(defs.get(t, ())) != 1 or uses.get(t, 0) < 2:
            continue
        wide = t.width == 2
        new = _multiply_add(p, wide)
        if new is None:
            continue
        mnemonic, ops, mods = new
        readers = []
        for i in range(j + 1, len(b.insts)):
            m = b.insts[i]
            if t not in inst_uses(m):
                continue
            if (m.guard is not None or m.mods or m.mnemonic != ("IADD.64" if wide else "IADD3")
                    or (not wide and m.ops["c"] != RZ) or (m.ops["a"] == t) == (m.ops["b"] == t)):
                break
            z = m.ops["b"] if m.ops["a"] == t else m.ops["a"]
            if not (isinstance(z, VReg) or z == RZ) or any(_redefined(b.insts[j + 1:i], x) for x in ops.values()):
                break
            readers.append((m, z))
        if len(readers) != uses[t]:
            continue
        for m, z in readers:
            m.d = TABLE[mnemonic]
            m.ops, m.mods = {"d": m.ops["d"], **ops, "c": z}, dict(mods)
        dead.add(id(p))
    if dead:
        b.insts = [m for m in b.insts if id(m) not in dead]


def _fold_extension(b, m: MInst, i: int, t: VReg, z, pair: list[MInst], pos: dict, dead: set[int]) -> bool:
    """``t = sext|zext(x)`` (``MOV t.lo, x`` and ``SHR.S32 t.hi, x, 31`` or ``MOV t.hi, 0``) added to ``z``
    by ``m`` (IADD.64): ``IMAD.WIDE[.S32] m.d, x, 1, z``, as ptxas folds ``cvt.s64.s32`` into the address."""
    lo = next((p for p in pair if p.ops.get("d") == Half(t, 0)), None)
    hi = next((p for p in pair if p.ops.get("d") == Half(t, 1)), None)
    if lo is None or hi is None or lo.mnemonic != "MOV" or not isinstance(lo.ops["b"], VReg):
        return False
    x = lo.ops["b"]
    if hi.mnemonic == "MOV" and hi.ops["b"] == Imm(0):
        mods = {}
    elif (hi.mnemonic == "SHR" and hi.ops["a"] in (x, Half(t, 0)) and hi.ops["b"] == Imm(31)
          and hi.mods == {"type": "S32"}):
        mods = {"type": "S32"}
    else:
        return False
    js = [pos.get(id(p)) for p in (lo, hi)]
    if any(j is None or j >= i for j in js) or any(p.guard is not None or id(p) in dead for p in (lo, hi)):
        return False
    if _redefined(b.insts[min(js) + 1:i], x) or x.width != 1:
        return False
    m.d = TABLE["IMAD.WIDE"]
    m.ops, m.mods = {"d": m.ops["d"], "a": x, "b": Imm(1), "c": z}, mods
    dead.update((id(lo), id(hi)))
    return True


def _multiply_add(p: MInst, wide: bool) -> tuple[str, dict, dict] | None:
    """The multiplication ``p`` computes as (mnemonic, its a and b operands, modifiers), or None."""
    if wide:
        if p.mnemonic == "IMAD.WIDE" and p.ops["c"] == RZ:
            return "IMAD.WIDE", {"a": p.ops["a"], "b": p.ops["b"]}, dict(p.mods)
        return None
    if p.mnemonic == "IMAD" and p.ops["c"] == RZ and p.mods.get("mode", "LO") == "LO":
        return "IMAD", {"a": p.ops["a"], "b": p.ops["b"]}, {}
    if p.mnemonic == "SHL" and isinstance(p.ops["b"], Imm) and p.ops["b"].value < 32:
        return "IMAD", {"a": p.ops["a"], "b": Imm(1 << p.ops["b"].value)}, {}
    return None


def _redefined(between: list[MInst], x) -> bool:
    if isinstance(x, Half):
        x = x.vreg
    if not isinstance(x, VReg):
        return False
    return any(x in inst_defs(m) for m in between)

