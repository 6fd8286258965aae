"""Which accesses reach a function's own ``.local`` (or call-free ``.param``) variable, when its address never
escapes: the analysis :mod:`xcc.passes.mem2reg` and :mod:`xcc.passes.dse` share.

An address of variable ``v`` is ``addr_of v`` in ``v``'s space, that address plus a constant (``add`` with a
constant operand), or either converted to a generic address (``cvta`` to generic from ``v``'s space: PTX ISA
9.0 section 6.4.1.5.1, a generic address in the local window reaches the same bytes).  The address escapes
unless every use of every such value is one of those address computations or the address operand of an
``ld``/``st`` in the matching space (``v``'s own space for a direct address, ``generic`` after ``cvta``)
with no attribute but ``space``, ``offset`` and ``cache``, of 8 to 64 bits, in bounds and naturally
aligned (offset a multiple of the size, the variable aligned at least that much: a misaligned or
out-of-bounds access faults, and must go on faulting).  A use by a phi, ``selp``, ``call``, ``atom``, a
store of the address itself, or anything else escapes.  A ``.param`` variable that a ``call`` names
(``attrs.params``/``attrs.rets``) is the call's argument frame and is never a candidate; nor are a device
function's own parameters (``Function.params``, filled by its caller).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.ir.core import Const, Function, Instruction, Value, Variable

_ACCESS_ATTRS = frozenset({"space", "offset", "cache"})


@dataclass
class Access:
    inst: Instruction
    offset: int  # bytes from the variable's start
    size: int  # bytes

    @property
    def is_store(self) -> bool:
        return self.inst.op == "st"


@dataclass
class VarAccesses:
    """Every load and store of ``var`` (in block order) and the address computations that lead to them."""

    var: Variable
    accesses: list[Access] = field(default_factory=list)
    address_insts: list[Instruction] = field(default_factory=list)


def candidate_variables(fn: Function) -> list[Variable]:
    """``fn``'s ``.local`` variables and the ``.param`` variables no call names."""
    named = {n for i in fn.instructions() if i.op == "call"
             for n in [*(i.attrs.get("params") or []), *(i.attrs.get("rets") or [])]}
    return [v for v in fn.variables if v.space == "local" or v.space == "param" and v.name not in named]


def users_of(fn: Function) -> dict[Value, list]:
    """Value -> the instructions and phis that use it, in block order (a user once per operand)."""
    users: dict[Value, list] = {}
    for b in fn.blocks:
        for u in [*b.phis, *b.instructions]:
            for a in u.args:
                if not isinstance(a, Const):
                    users.setdefault(a, []).append(u)
    return users


def analyse(fn: Function, var: Variable, users: dict[Value, list]) -> VarAccesses | None:
    """The accesses of ``var``, or None when its address escapes (or an access is not a plain, aligned,
    in-bounds scalar one)."""
    out = VarAccesses(var)
    work: list[tuple[Value, int, bool]] = []  # (address value, byte offset, generic)
    for b in fn.blocks:
        for inst in b.instructions:
            if inst.op == "addr_of" and inst.attrs.get("symbol") == var.name and inst.attrs.get("space") == var.space:
                out.address_insts.append(inst)
                work.append((inst.result, 0, False))
    while work:
        addr, off, generic = work.pop()
        for u in users.get(addr, []):
            got = _use(u, addr, off, generic, var)
            if got is None:
                return None
            if isinstance(got, Access):
                out.accesses.append(got)
            else:
                out.address_insts.append(u)
                work.append(got)
    order = {id(i): k for k, i in enumerate(fn.instructions())}
    out.accesses.sort(key=lambda a: order[id(a.inst)])
    out.address_insts.sort(key=lambda i: order[id(i)])
    return out


def _use(u, addr: Value, off: int, generic: bool, var: Variable):
    """What use ``u`` of address ``addr`` is: an Access, a new (address, offset, generic), or None (escape)."""
    op = getattr(u, "op", "phi")
    if op in ("ld", "st"):
        if u.args[0] is not addr or op == "st" and u.args[1] is addr or not set(u.attrs) <= _ACCESS_ATTRS:
            return None
        if u.attrs.get("space") != ("generic" if generic else var.space):
            return None
        size, start = u.type.bits // 8, off + u.attrs.get("offset", 0)
        if u.type.bits not in (8, 16, 32, 64) or start < 0 or start + size > var.size:
            return None
        if start % size or var.align < size:
            return None
        return Access(u, start, size)
    if op == "add" and u.result is not None and u.result.type.bits == 64 and not u.attrs:
        other = u.args[1] if u.args[0] is addr else u.args[0]
        if isinstance(other, Const) and other is not addr:
            c = other.bits - (1 << other.type.bits) if other.bits >> (other.type.bits - 1) else other.bits
            return u.result, off + c, generic
        return None
    if op == "cvta" and not generic and u.attrs.get("to_generic") and u.attrs.get("space") == var.space:
        return u.result, off, True
    return None
