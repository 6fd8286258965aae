"""Dead-store elimination for a function's own ``.local`` (and call-free ``.param``) variables (LLVM's
``DSE``, restricted to thread-private memory, which no other thread can read).

Two rules:

* **Never read again** (variables whose address does not escape, :func:`xcc.passes.localvars.analyse`):
  a backward data-flow of the variable's live bytes (a bit per byte: a load makes its bytes live, a
  store kills them; nothing is live after a kernel ends, whose frame no one reads again) to a fixed
  point; a store none of whose bytes are live after it is removed.  In a device function the bytes are
  taken as live at the return, since the next call's frame is this one's memory (a read before any
  store there sees them), so only stores overwritten on every path go.
* **Overwritten in the block** (any variable, its address escaping or not): a store to a known
  (variable, offset) range is dead when a later store in the same block covers every byte of it and
  nothing in between may read it: a load of an overlapping or unknown local/generic/param address, a
  ``call``, an atomic or any other memory-reading operation clears the candidates (a load from
  ``.global``, ``.shared`` or ``.const`` cannot reach local memory).  An address is known when it is
  ``addr_of`` the variable plus constants, possibly through ``cvta`` to generic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import reverse_postorder
from xcc.ir.core import Const, Function, Instruction, Value
from xcc.ir.ops import OPS
from xcc.passes.localvars import analyse, candidate_variables, users_of
from xcc.passes.manager import FunctionPass

_PRIVATE_SAFE = frozenset({"global", "shared", "const"})  # spaces a load cannot reach local/param through


@dataclass(frozen=True)
class DeadStoreElimination(FunctionPass):
    """Remove .local stores never read afterwards (byte-precise liveness) or overwritten in the same block."""

    name: ClassVar[str] = "dse"

    def run_function(self, fn: Function) -> None:
        variables = candidate_variables(fn)
        if not variables:
            return
        dead: set[int] = set()
        users = users_of(fn)
        for var in variables:
            acc = analyse(fn, var, users)
            if acc is not None:
                dead |= _never_read(fn, acc.accesses, var.size, fn.is_entry)
        dead |= _overwritten(fn, {v.name: v for v in variables})
        if dead:
            for b in fn.blocks:
                b.instructions = [i for i in b.instructions if id(i) not in dead]


def _mask(offset: int, size: int) -> int:
    return ((1 << size) - 1) << offset


def _never_read(fn: Function, accesses, size: int, is_kernel: bool) -> set[int]:
    by_inst = {id(a.inst): a for a in accesses}
    order = reverse_postorder(fn)
    everything = (1 << size) - 1
    live_in = {b: 0 for b in fn.blocks}

    def live_out(b) -> int:
        succs = b.succs
        if not succs:
            return 0 if is_kernel else everything
        out = 0
        for s in succs:
            out |= live_in[s]
        return out

    def transfer(b, live: int, dead: set[int] | None) -> int:
        for inst in reversed(b.instructions):
            a = by_inst.get(id(inst))
            if a is None:
                continue
            m = _mask(a.offset, a.size)
            if a.is_store:
                if dead is not None and not live & m:
                    dead.add(id(inst))
                live &= ~m
            else:
                live |= m
        return live

    changed = True
    while changed:
        changed = False
        for b in reversed(order):
            new = transfer(b, live_out(b), None)
            if new != live_in[b]:
                live_in[b], changed = new, True
    dead: set[int] = set()
    for b in order:
        transfer(b, live_out(b), dead)
    return dead


def _resolve(v: Value, defs: dict[Value, Instruction], variables) -> tuple[str, int] | None:
    """(variable name, byte offset) that address ``v`` points at, when it is known."""
    off = 0
    for _ in range(64):
        d = defs.get(v)
        if d is None:
            return None
        if d.op == "addr_of":
            var = variables.get(d.attrs.get("symbol"))
            return (var.name, off) if var is not None and d.attrs.get("space") == var.space else None
        if d.op == "cvta" and d.attrs.get("to_generic"):
            v = d.args[0]
        elif d.op == "add" and not d.attrs and d.result.type.bits == 64 and any(isinstance(a, Const) for a in d.args):
            c = next(a for a in d.args if isinstance(a, Const))
            off += c.bits - (1 << 64) if c.bits >> 63 else c.bits
            v = d.args[0] if d.args[1] is c else d.args[1]
        else:
            return None
    return None


def _overwritten(fn: Function, variables) -> set[int]:
    defs = {i.result: i for i in fn.instructions() if i.result is not None}
    dead: set[int] = set()
    for b in fn.blocks:
        pending: list[tuple[str, int, int, Instruction]] = []  # (var, start, end, store)
        for inst in b.instructions:
            if inst.op == "st" and not isinstance(inst.args[0], Const):
                where = _resolve(inst.args[0], defs, variables)
                if where is None or set(inst.attrs) - {"space", "offset", "cache"}:
                    continue
                name, start = where[0], where[1] + inst.attrs.get("offset", 0)
                end = start + inst.type.bits // 8
                keep = []
                for p in pending:
                    if p[0] == name and start <= p[1] and p[2] <= end:
                        dead.add(id(p[3]))
                    else:
                        keep.append(p)
                pending = keep + [(name, start, end, inst)]
            elif inst.op == "ld" and inst.attrs.get("space") in _PRIVATE_SAFE:
                continue
            elif inst.op == "ld":
                where = _resolve(inst.args[0], defs, variables)
                if where is None:
                    pending = []
                    continue
                start = where[1] + inst.attrs.get("offset", 0)
                end = start + inst.type.bits // 8
                pending = [p for p in pending if p[0] != where[0] or p[2] <= start or end <= p[1]]
            elif OPS[inst.op].reads_memory or inst.op == "call":
                pending = []
    return dead
