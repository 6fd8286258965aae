"""Address folding: constant parts of a memory access's address become the access's immediate offset.

``ld``/``st``/``atom`` compute ``base + attrs.offset``; the backend encodes the offset as the 32-bit signed
immediate of ``LDG``/``STS``/``ATOMG``... (:mod:`xcc.backend.isel_memory`, operand ``b``).  This pass splits
the base into ``x + c`` with ``c`` a constant and moves ``c`` into the offset, so neighbouring accesses
(``a[i]``, ``a[i + 1]``, ...) share one base register and one address computation (LLVM's
``SeparateConstOffsetFromGEP`` and ``StraightLineStrengthReduce``; ptxas does the same).  The split looks
through, for a 64-bit base (exact modulo 2^64, which is how addresses wrap in PTX and in the interpreters):

* ``add x, c`` / ``add c, x`` / ``sub x, c``;  ``add x, y`` where ``x`` or ``y`` splits (a new ``add`` of the
  parts is placed where the old one was);
* ``shl y, k`` and ``mul.lo y, k`` of a splitting ``y`` (``(a + c) << k == (a << k) + (c << k)``);
* the 32-to-64-bit steps ``cvt.u64/s64 (a + c)`` and ``mul.wide (a + c), k``, only where
  :mod:`xcc.passes.value_range` proves that ``a + c`` does not wrap in 32 bits (then sign or zero extension
  of the sum is the sum of the extensions); otherwise they are left alone, as wrap-around would differ.

A 32-bit base (``.shared``/``.local`` addresses) is split only as ``a + c`` with ``a + c`` provably not
wrapping in 32 bits.  The new offset must fit the signed 32-bit immediate.  Instructions the split no
longer needs are left for ``dce``; equal new instructions for ``gvn`` (run ``addrfold,gvn,dce``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Const, Function, Instruction, Value
from xcc.passes.manager import FunctionPass
from xcc.passes.value_range import ValueRanges, signed

ACCESSES = frozenset({"ld", "st", "atom"})
_IMM_MIN, _IMM_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True)
class AddressFolding(FunctionPass):
    """Move constant address terms into the immediate offset of ld/st/atom (SeparateConstOffsetFromGEP)."""

    name: ClassVar[str] = "addrfold"

    def run_function(self, fn: Function) -> None:
        _Folder(fn).run()


class _Folder:
    def __init__(self, fn: Function):
        self.fn = fn
        self.defs: dict[Value, Instruction] = {}
        for b in fn.blocks:
            for inst in b.instructions:
                if inst.result is not None:
                    self.defs[inst.result] = inst
        self.ranges = ValueRanges(self.defs)
        self.memo: dict[Value, tuple[Value, int]] = {}
        self.inserts: dict[Instruction, list[Instruction]] = {}  # new instructions to place before the key

    def run(self) -> None:
        for b in self.fn.blocks:
            for inst in b.instructions:
                if inst.op in ACCESSES and inst.args and not isinstance(inst.args[0], Const):
                    self._fold(inst)
        for b in self.fn.blocks:
            if any(i in self.inserts for i in b.instructions):
                out = []
                for inst in b.instructions:
                    for new in self.inserts.get(inst, ()):
                        new.block = b
                        out.append(new)
                    out.append(inst)
                b.instructions = out

    def _fold(self, inst: Instruction) -> None:
        base = inst.args[0]
        bits = base.type.bits
        if bits == 64:
            x, c = self.split64(base)
        elif bits == 32:
            x, c = self.split_nowrap(base, 1 << 32)
        else:
            return
        if c == 0 or x is base:
            return
        off = inst.attrs.get("offset", 0) + signed(c % (1 << bits), bits)
        if not _IMM_MIN <= off <= _IMM_MAX:
            return
        inst.args[0] = x
        inst.attrs["offset"] = off

    # -------------------------------------------------------------------- splitting

    def split64(self, v: Value) -> tuple[Value, int]:
        """(x, c) with v == x + c modulo 2^64 (c as an unsigned 64-bit pattern)."""
        if v in self.memo:
            return self.memo[v]
        self.memo[v] = (v, 0)  # a cycle through phis never splits
        r = self._split64(v)
        self.memo[v] = r
        return r

    def _split64(self, v: Value) -> tuple[Value, int]:
        inst = self.defs.get(v)
        mask = (1 << 64) - 1
        if inst is None or v.type.bits != 64 or not _plain_int(inst):
            return v, 0
        op, a = inst.op, inst.args
        if op == "add" and len(a) == 2:
            if isinstance(a[1], Const) or isinstance(a[0], Const):
                k, other = (a[1], a[0]) if isinstance(a[1], Const) else (a[0], a[1])
                x, c = self.split64(other)
                return x, (c + k.bits) & mask
            (x, cx), (y, cy) = self.split64(a[0]), self.split64(a[1])
            if cx == 0 and cy == 0:
                return v, 0
            return self._new(inst, "add", [x, y]), (cx + cy) & mask
        if op == "sub" and isinstance(a[1], Const):
            x, c = self.split64(a[0])
            return x, (c - a[1].bits) & mask
        if op in ("shl", "mul") and isinstance(a[1], Const) and inst.attrs.get("mode", "lo") == "lo" \
                and inst.type.bits == 64:
            x, c = self.split64(a[0])
            if c == 0:
                return v, 0
            k = a[1].bits
            c2 = (c << k) & mask if op == "shl" else (c * k) & mask
            if op == "shl" and k >= 64:
                return v, 0
            return self._new(inst, op, [x, a[1]]), c2
        if op == "cvt" and inst.attrs.get("src") in ("s32", "u32", "b32") and len(inst.attrs) == 1:
            x, c = self.split_nowrap(a[0], 1 << 31)
            if c == 0:
                return v, 0
            return self._new(inst, "cvt", [x]), c & mask
        if op == "mul" and inst.attrs.get("mode") == "wide" and isinstance(a[1], Const) and inst.type.bits == 32:
            x, c = self.split_nowrap(a[0], 1 << 31)
            if c == 0:
                return v, 0
            k = signed(a[1].bits, 32) if inst.type.kind == "s" else a[1].bits
            return self._new(inst, "mul", [x, a[1]]), (c * k) & mask
        return v, 0

    def split_nowrap(self, v: Value, limit: int) -> tuple[Value, int]:
        """(x, c) with v == x + c as integers, x and x + c both in [0, limit): ``v = add x, c`` (or ``sub``)
        where the range of ``x`` proves it; c is a signed integer."""
        inst = self.defs.get(v)
        if inst is None or not _plain_int(inst) or inst.op not in ("add", "sub") or len(inst.args) != 2:
            return v, 0
        a, b = inst.args
        if inst.op == "add" and isinstance(a, Const) and not isinstance(b, Const):
            a, b = b, a
        if not isinstance(b, Const) or isinstance(a, Const):
            return v, 0
        bits = v.type.bits
        c = signed(b.bits, bits)
        if inst.op == "sub":
            c = -c
        r = self.ranges.of(a)
        if r is None or r[1] >= limit or r[0] + c < 0 or r[1] + c >= limit:
            return v, 0
        return a, c

    def _new(self, like: Instruction, op: str, args: list[Value]) -> Value:
        """A copy of ``like`` with ``args``, placed right before it (so it dominates what ``like`` does)."""
        res = Value(like.result.type)
        new = Instruction(op, like.type, args, res, dict(like.attrs), like.loc, like.debug_loc)
        self.inserts.setdefault(like, []).append(new)
        self.defs[res] = new
        return res


def _plain_int(inst: Instruction) -> bool:
    t = inst.type
    return (t is not None and not t.is_float and t.name not in ("f16x2", "bf16x2") and not inst.attrs.get("sat")
            and not inst.attrs.get("carry"))

