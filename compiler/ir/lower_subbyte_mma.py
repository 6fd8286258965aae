"""Lowering of the sub-byte integer warp MMAs into the 8-bit one (PTX ISA 9.7.14.5, sm_75/sm_80):

* ``mma.sync.aligned.{m8n8k32,m16n8k32,m16n8k64}.row.col{.satfinite}.s32.{s4,u4}.{s4,u4}.s32``;
* ``mma.sync.aligned.{m8n8k128,m16n8k128,m16n8k256}.row.col.s32.b1.b1.s32.{and,xor}.popc``;
* ``mma.sync.aligned.{m8n8k16,m16n8k16}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32``: already bytes, their A
  registers (row g, columns 4t + j; m16n8k16 also row g + 8) and B register (rows 4t + j) are registers 0 (1) of
  the m16n8k32 fragments, the rest zero: one MMA;
* their wmma forms ``wmma.mma.sync.aligned.row.col.m8n8k32.s32.{s4,u4}.{s4,u4}.s32{.satfinite}`` and
  ``wmma.mma.{and,xor}.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32`` (whose fragments
  :mod:`xcc.ir.lower_wmma_simt` makes the m8n8 mma fragments below).

xg1's only integer MMA is IMMA.16832 (``mma.m16n8k32`` on bytes), so each lane widens its own A and B elements to
bytes and the product is one or more dense ``m16n8k32`` ``.s8``/``.u8`` MMAs (IR ``mma``).  No data moves
between lanes: a dot product does not depend on the order of its k terms, so A and B may be permuted along k
alike, and lane (g, t) = (lane >> 2, lane & 3) holds the same k indices of A and of B in every shape here.

**Fragments** (the PTX ISA's "Matrix Fragments for mma.m8n8k32 / m16n8k32 / m16n8k64 (.s4/.u4)" and
"... m8n8k128 / m16n8k128 / m16n8k256 (.b1)"; ``E`` = elements per register, 8 for 4-bit, 32 for 1-bit; element
``j`` of a register is bits ``j*32/E ..`` low first):

* m8n8: A register 0 holds row ``g``, columns ``E t + j``; B register 0 rows ``E t + j`` of column ``g``; C/D
  ``c0, c1`` at (g, 2t + i).
* m16n8: A register ``r`` holds row ``g + 8 (r % 2)``, columns ``E t + j + 4E (r / 2)``; B register ``r`` rows
  ``E t + j + 4E r`` of column ``g``; C/D ``c0..c3`` at (g + 8 (i / 2), 2t + i % 2).

The 8-bit ``m16n8k32`` fragment has A register ``r`` at row ``g + 8 (r % 2)``, columns ``4t + j + 16 (r / 2)`` and
B register ``r`` at rows ``4t + j + 16 r``: four consecutive elements of one row (column) per register.  So a
group of four sub-byte elements of a lane's A register, widened to bytes, is an 8-bit A register of the same
row, and the same group of its B register an 8-bit B register: an 8-bit MMA takes groups (2q, 2q + 1) of the
row-``g`` and row-``g + 8`` A registers and of the B register (for an m8n8 shape the row-``g + 8`` registers are
zero and C/D are registers 0, 1 of the m16n8 accumulator).

* ``.s4``/``.u4``: groups are 4 nibbles, sign- or zero-extended to bytes (``.s8``/``.u8`` MMAs).  m8n8k32 and
  m16n8k32 are one MMA onto C; m16n8k64 two MMAs with a zero accumulator, whose sum (at most 64 * 8 * 15 in
  magnitude, exact) is added to C, wrapping or with ``.satfinite`` saturating, as once.
* ``.b1`` ``.and.popc``: ``popc(a & b)`` is the dot product of the 0/1 bits, so groups are 4 bits widened to
  0/1 bytes (``.u8``) and the MMAs accumulate onto C in turn (k = 128: 4 MMAs of 32 bits, k = 256: 8), wrapping
  modulo 2^32.  ``.xor.popc``: with ``s = 1 - 2 bit`` (+1 or -1 as an ``.s8`` byte), ``a ^ b = (1 - s_a s_b) / 2``,
  so ``popc(a ^ b) = (K - S) / 2`` where ``S`` is the ``.s8`` MMAs' dot product from a zero accumulator
  (|S| <= K, exact); D = C + (K - S) >> 1, wrapping.
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

SUBBYTE_SHAPES = {"m8n8k32": ("4", 8), "m16n8k32": ("4", 16), "m16n8k64": ("4", 16),
                  "m8n8k128": ("1", 8), "m16n8k128": ("1", 16), "m16n8k256": ("1", 16)}
BYTE_SHAPES = {"m8n8k16": ("8", 8), "m16n8k16": ("8", 16)}
"""The shallower .s8/.u8 shapes, whose fragments are the m16n8k32 one's first registers: (element bits, M)."""
"""Sub-byte mma shapes: (element bits, M)."""


def _full(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class SubByteMmaLowering:
    def subbyte_mma(self, inst, shape: str, types: list[str]) -> None:
        """``mma`` on .s4/.u4 or .b1 A and B (module doc)."""
        bits, m = SUBBYTE_SHAPES.get(shape) or BYTE_SHAPES[shape]
        k = int(shape.split("k")[1])
        mods = set(inst.modifiers)
        known = {"sync", "aligned", "row", "col", shape, "s32", "s4", "u4", "b1", "s8", "u8", "satfinite", "and", "xor",
                 "popc", *(("mma",) if inst.opcode == "wmma" else ())}
        extra = [x for x in inst.modifiers if x not in known]
        if extra or "sync" not in mods or "aligned" not in mods:
            raise self.error(f"'{_full(inst)}': {', '.join('.' + x for x in extra) or 'needs .sync.aligned'} "
                             "is not supported")
        if [x for x in inst.modifiers if x in ("row", "col")] != ["row", "col"]:
            raise self.error(f"'{_full(inst)}': .{shape} takes the layouts .row.col", PtxSemanticError)
        dtype, atype, btype, ctype = types
        bad = (dtype, ctype) != ("s32", "s32")
        if bits == "8":
            bad |= atype not in ("s8", "u8") or btype not in ("s8", "u8") or bool({"and", "xor", "popc"} & mods)
        elif bits == "4":
            bad |= atype not in ("s4", "u4") or btype not in ("s4", "u4") or bool({"and", "xor", "popc"} & mods)
        else:
            op = [x for x in inst.modifiers if x in ("and", "xor")]
            bad |= (atype, btype) != ("b1", "b1") or len(op) != 1 or "popc" not in mods or "satfinite" in mods
        if bad:
            want = f".s32.{{s{bits},u{bits}}}.{{s{bits},u{bits}}}.s32{{.satfinite}}" if bits != "1" \
                else ".s32.b1.b1.s32.{and,xor}.popc"
            raise self.error(f"'{_full(inst)}': .{shape} takes {want}", PtxSemanticError)
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        per = {"8": 4, "4": 8, "1": 32}[bits]                # elements per register
        na, nb = m * k // (32 * per), k * 8 // (32 * per)
        ncd = m * 8 // 32
        ra = self._mx_regs(self._mx_vector(a, na, "A"))
        rb = self._mx_regs(self._mx_vector(b, nb, "B"))
        rc = self._mx_regs(self._mx_vector(c, ncd, "C"))
        dests = self._mx_dests(d, ncd, "D")
        u32, s32 = ptx_type("u32"), ptx_type("s32")
        zero = Const(u32, 0)
        # (row g register, row g + 8 register or None, B register) per 32 k of each lane's own elements
        if m == 8:
            chunks = [(ra[0], None, rb[0])]
        else:
            chunks = [(ra[2 * q], ra[2 * q + 1], rb[q]) for q in range(nb)]
        groups = per // 4                                    # groups of 4 elements per register
        if bits == "8":  # already bytes: the m16n8k32 fragment's first registers, the others zero
            attrs = dict(shape="m16n8k32", types=f"s32.{atype}.{btype}.s32", na=4, nb=2)
            sat = {"satfinite": True} if "satfinite" in mods else {}
            a8 = [ra[0], ra[1] if m == 16 else zero, zero, zero]
            acc = list(rc) + [zero] * (4 - ncd)
            for i, dst in enumerate(dests):
                if not isinstance(dst, ast.Sink):
                    self.write(dst, self.emit("mma", s32, a8 + [rb[0], zero] + acc, s32, part=i, **attrs, **sat).result)
            return
        if bits == "4":
            signed = (atype == "s4", btype == "s4")
            widen = [lambda v, q, s=s: self._sb_nibbles(v, q, s) for s in signed]
            kind = ("s8" if signed[0] else "u8", "s8" if signed[1] else "u8")
        elif "and" in mods:
            widen = [lambda v, q: self._sb_bits(v, q, False)] * 2
            kind = ("u8", "u8")
        else:
            widen = [lambda v, q: self._sb_bits(v, q, True)] * 2
            kind = ("s8", "s8")
        onto_c = bits == "1" and "and" in mods or bits == "4" and len(chunks) == 1
        acc = list(rc) + [zero] * (4 - ncd) if onto_c else [zero] * 4
        sat = {"satfinite": True} if "satfinite" in mods and onto_c else {}
        acc = self._sb_byte_mmas(chunks, widen, kind, groups, acc, sat)
        for i, dst in enumerate(dests):
            if isinstance(dst, ast.Sink):
                continue
            v = acc[i]
            if bits == "1" and "xor" in mods:                 # C + (K - S) / 2
                half = self.emit("shr", s32, [self.emit("sub", s32, [Const(s32, k), v], s32).result,
                                             Const(u32, 1)], s32).result
                v = self.emit("add", s32, [rc[i], half], s32).result
            elif not onto_c:                                  # m16n8k64: C + the exact sum, once
                v = self.emit("add", s32, [rc[i], v], s32, **({"sat": True} if "satfinite" in mods else {})).result
            self.write(dst, v)

    def _sb_byte_mmas(self, chunks, widen, kind, groups: int, acc: list, sat: dict) -> list:
        """``acc`` (4 values) plus the product of ``chunks`` (row-g A register, row-g + 8 A register or None, B
        register) whose elements ``widen`` makes bytes: one 8-bit m16n8k32 MMA per 8 elements of each register."""
        u32, s32 = ptx_type("u32"), ptx_type("s32")
        zero = Const(u32, 0)
        attrs = dict(shape="m16n8k32", types=f"s32.{kind[0]}.{kind[1]}.s32", na=4, nb=2)
        for lo, hi, breg in chunks:
            for q in range(0, groups, 2):
                a8 = [widen[0](lo, q), widen[0](hi, q) if hi is not None else zero,
                      widen[0](lo, q + 1), widen[0](hi, q + 1) if hi is not None else zero]
                b8 = [widen[1](breg, q), widen[1](breg, q + 1)]
                acc = [self.emit("mma", s32, a8 + b8 + acc, s32, part=i, **attrs, **sat).result for i in range(4)]
        return acc

    def _sb(self, op: str, x, y, **kw):
        u32 = ptx_type("u32")
        return self.emit(op, u32, [x, Const(u32, y) if isinstance(y, int) else y], u32, **kw).result

    def _sb_nibbles(self, v, q: int, signed: bool):
        """Nibbles ``4q .. 4q + 3`` of ``v`` as four bytes (low first), sign-extended (``signed``) or not."""
        y = self._sb("and", self._sb("shr", v, 16 * q) if q else v, 0xFFFF)
        spread = self._sb("and", y, 0xF)
        for j in range(1, 4):                                # nibble j to byte j
            spread = self._sb("or", spread, self._sb("shl", self._sb("and", y, 0xF << 4 * j), 4 * j))
        if signed:                                           # each byte's bit 3 set: or 0xF0 into that byte
            spread = self._sb("or", spread, self._sb("mul", self._sb("and", spread, 0x08080808), 0x1E, mode="lo"))
        return spread

    def _sb_bits(self, v, q: int, pm1: bool):
        """Bits ``4q .. 4q + 3`` of ``v`` as four bytes: 0/1, or with ``pm1`` 1 - 2 bit (0x01 / 0xFF)."""
        y = self._sb("and", self._sb("shr", v, 4 * q) if q else v, 0xF)
        # bit j of y times 2^(7j) lands on bit 8j; the four shifted copies of y do not overlap (no carries)
        ones = self._sb("and", self._sb("mul", y, 0x00204081, mode="lo"), 0x01010101)
        if not pm1:
            return ones
        return self._sb("or", self._sb("mul", ones, 0xFE, mode="lo"), 0x01010101)  # bit 0 -> 0x01, 1 -> 0xFF
