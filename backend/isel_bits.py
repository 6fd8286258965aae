"""Instruction selection for bit counts and bit fields, bytes and dot products: popc, clz, bfind, brev,
bfe, bfi, bmsk, prmt, shf, dp4a/dp2a, mul24/mad24 (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`)."""

from __future__ import annotations

from xcc.backend.isa import PT, RZ
from xcc.backend.isel_core import SelectorCore, width_of
from xcc.backend.isel_tables import LUT_AND, LUT_XOR, PRMT_PACK_BYTES
from xcc.backend.minst import Half, Imm, VReg, new_vreg
from xcc.ir.core import Const, Value


class BitSelection(SelectorCore):
    def op_popc(self, inst):
        a, d = inst.args[0], self.vreg(inst.result)
        if width_of(inst.type) == 2:  # POPC of each half, added
            lo, hi = new_vreg(1), new_vreg(1)
            self.emit("POPC", d=lo, a=self.half_reg(a, 0))
            self.emit("POPC", d=hi, a=self.half_reg(a, 1))
            self.emit("IADD3", d=d, a=lo, b=hi, c=RZ)
        else:
            self.emit("POPC", d=d, a=self.reg(a))

    def op_clz(self, inst):
        """clz = msb - bfind (as ptxas: FLO.U32 + IADD3; bfind's ~0 for 0 gives the full width)."""
        bits = 32 * width_of(inst.type)
        pos = self._bfind(inst.args[0], bits, signed=False)
        self.emit("IADD3", d=self.vreg(inst.result), a=pos, b=Imm(bits - 1), c=RZ, mods={"NEG_A": "NEG_A"})

    def op_bfind(self, inst):
        t = inst.type
        shiftamt = bool(inst.attrs.get("shiftamt"))
        if t.bits == 32:
            self.emit("FLO", d=self.vreg(inst.result), a=self.reg(inst.args[0]),
                      mods={**({"type": "S32"} if t.kind == "s" else {}), **({"SH": "SH"} if shiftamt else {})})
            return
        pos = self._bfind(inst.args[0], 64, signed=t.kind == "s")
        if not shiftamt:
            self.vregs[inst.result] = pos
            return
        d, amount, none = self.vreg(inst.result), new_vreg(1), new_vreg(0)
        self.emit("IADD3", d=amount, a=pos, b=Imm(63), c=RZ, mods={"NEG_A": "NEG_A"})
        self.emit("ISETP", pd=none, a=pos, b=Imm(0xFFFFFFFF), ps=(PT, False), mods={"cmp": "EQ"})
        self.emit("SEL", d=d, a=pos, b=amount, ps=(none, False))

    def _bfind(self, v: Value, bits: int, signed: bool) -> VReg:
        """A register holding bfind.{u,s}{bits}(v): the most significant non-sign bit, ~0 if none."""
        pos = new_vreg(1)
        if bits == 32:
            self.emit("FLO", d=pos, a=self.reg(v), mods={"type": "S32"} if signed else {})
            return pos
        lo, hi = self.half_reg(v, 0), self.half_reg(v, 1)
        if signed:  # negative: find the top 0, i.e. the top 1 of ~v
            sign, nlo, nhi = new_vreg(1), new_vreg(1), new_vreg(1)
            self.emit("SHR", d=sign, a=hi, b=Imm(31), mods={"type": "S32"})
            self.emit("LOP3", d=nlo, a=lo, b=sign, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
            self.emit("LOP3", d=nhi, a=hi, b=sign, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
            lo, hi = nlo, nhi
        fhi, flo, fhi32, upper = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(0)
        self.emit("FLO", d=fhi, a=hi)
        self.emit("FLO", d=flo, a=lo)
        self.emit("IADD3", d=fhi32, a=fhi, b=Imm(32), c=RZ)
        self.emit("ISETP", pd=upper, a=hi, b=RZ, ps=(PT, False), mods={"cmp": "NE"})
        self.emit("SEL", d=pos, a=fhi32, b=flo, ps=(upper, False))
        return pos

    def op_brev(self, inst):
        a, d = inst.args[0], self.vreg(inst.result)
        if width_of(inst.type) == 2:  # the halves swap
            self.emit("BREV", d=Half(d, 0), a=self.half_reg(a, 1))
            self.emit("BREV", d=Half(d, 1), a=self.half_reg(a, 0))
        else:
            self.emit("BREV", d=d, a=self.reg(a))


    # ----------------------------------------------------------------- bit fields, bytes, dot products
    def _field_control(self, pos: Value, length: Value):
        """The BFE/BFI control operand ``pos | len << 8``: an immediate, or built with one PRMT."""
        if isinstance(pos, Const) and isinstance(length, Const):
            return Imm((pos.bits & 0xFF) | (length.bits & 0xFF) << 8)
        ctl = new_vreg(1)  # byte 0 = pos.b0, byte 1 = len.b0 (selector nibbles 0 and 4)
        self.emit("PRMT", d=ctl, a=self.reg(pos), b=Imm(PRMT_PACK_BYTES), c=self.reg(length))
        return ctl

    def op_bfe(self, inst):
        a, pos, length = inst.args
        w = width_of(inst.type)
        typ = {"type": "S64" if w == 2 else "S32"} if inst.type.kind == "s" else {}
        self.emit("BFE.64" if w == 2 else "BFE", d=self.vreg(inst.result), a=self.reg(a),
                  b=self._field_control(pos, length), mods=typ)

    def op_bfi(self, inst):
        a, base, pos, length = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if (w == 2 and isinstance(pos, Const) and isinstance(length, Const) and pos.bits & 0xFF in (0, 32)
                and length.bits & 0xFF == 32):  # a whole half replaced: register moves
            k = (pos.bits & 0xFF) // 32
            self.emit("MOV", d=Half(d, k), b=self.half(a, 0))
            self.emit("MOV", d=Half(d, 1 - k), b=self.half(base, 1 - k))
            return
        self.emit("BFI.64" if w == 2 else "BFI", d=d, a=self.reg(a), b=self._field_control(pos, length),
                  c=self.reg(base))

    def op_bmsk(self, inst):
        a, b = inst.args
        self.emit("BMSK", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b),
                  mods={"W": "W"} if inst.attrs["mode"] == "wrap" else {})

    def op_prmt(self, inst):
        a, b, c = inst.args
        mode = inst.attrs.get("mode")
        self.emit("PRMT", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(c), c=self.reg(b),
                  mods={"mode": mode.upper()} if mode else {})

    def op_shf(self, inst):
        a, b, c = inst.args
        self.emit("SHF", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(c), c=self.reg(b),
                  mods={"dir": inst.attrs["dir"].upper(), **({"W": "W"} if inst.attrs["mode"] == "wrap" else {})})

    def _dot_types(self, inst, narrow: dict) -> dict:
        return {k: narrow[inst.attrs[k].startswith("s")] for k in ("atype", "btype")}

    def op_dp4a(self, inst):
        a, b, c = inst.args
        mods = self._dot_types(inst, {False: "U8", True: "S8"})
        self.emit("IDP.4A", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=mods)

    def op_dp2a(self, inst):
        a, b, c = inst.args
        mods = {"mode": inst.attrs["mode"].upper(), "atype": "S16" if inst.attrs["atype"] == "s32" else "U16",
                "btype": "S8" if inst.attrs["btype"] == "s32" else "U8"}
        self.emit("IDP.2A", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=mods)

    def _low24(self, v: Value, signed: bool):
        """v[23:0], sign- or zero-extended: an immediate for a constant, else SGXT / LOP3."""
        if isinstance(v, Const):
            x = v.bits & 0xFFFFFF
            return Imm((x - (1 << 24) if signed and x >> 23 else x) & 0xFFFFFFFF)
        r = new_vreg(1)
        if signed:
            self.emit("SGXT", d=r, a=self.reg(v), b=Imm(24))
        else:
            self.emit("LOP3", d=r, a=self.reg(v), b=Imm(0xFFFFFF), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        return r

    def op_mul24(self, inst, c: Value | None = None):
        """As ptxas on sm_70+: SGXT/LOP3 to 24 bits, then IMAD (.lo) or IMAD.WIDE + SHF.R (.hi);
        mad24.hi.sat.s32 (PTX ISA 9.7.1.6) adds ``c`` to the .hi part with add.sat.s32's sequence."""
        signed, hi, sat = inst.type.kind == "s", inst.attrs["mode"] == "hi", bool(inst.attrs.get("sat"))
        if sat and not (hi and signed and c is not None):
            raise self.error(f"{inst.op}.sat is defined for mad24.hi.sat.s32 only")
        a, b = self._commute(*inst.args[:2])
        x, y = self._low24(a, signed), self._low24(b, signed)
        if isinstance(x, Imm):
            x = self._imm_reg(x)
        d = self.vreg(inst.result)
        if not hi:
            self.emit("IMAD", d=d, a=x, b=y, c=self.reg(c) if c is not None else RZ)
            return
        p = new_vreg(2)
        self.emit("IMAD.WIDE", d=p, a=x, b=y, c=RZ, mods={"type": "S32"} if signed else {})
        t = new_vreg(1) if c is not None else d
        self.emit("SHF", d=t, a=Half(p, 0), b=Imm(16), c=Half(p, 1), mods={"dir": "R", "W": "W"})
        if c is not None and sat:
            self._add_sat_regs(d, t, self.reg(c), False)
        elif c is not None:
            self.emit("IADD3", d=d, a=t, b=self.src_b(c), c=RZ)

    def op_mad24(self, inst):
        self.op_mul24(inst, inst.args[2])
