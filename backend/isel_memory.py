"""Instruction selection for values from the launch, addresses and memory: ld.param, special registers,
addr_of, cvta, isspacep, mov, ld, st, atom/red (a rule group of :class:`xcc.backend.isel.InstructionSelector`;
see :mod:`xcc.backend.isel_core`)."""

from __future__ import annotations

from xcc.backend.isa import (
    CBANK_NCTAID,
    CBANK_NTID,
    CBANK_PARAMS,
    ENVREGS,
    LAUNCH_SREGS,
    PT,
    RZ,
    SR_INDEX,
    WINDOWS,
)
from xcc.backend.isel_core import SelectorCore, width_of
from xcc.backend.isel_tables import ATOM_KIND, MEM_PREFIX, SREG_NAMES, SUB_WORD_SIZE
from xcc.backend.minst import CBank, Half, Imm, new_vreg
from xcc.ir.core import Const

_WINDOW_LO = min(WINDOWS.values())


class MemorySelection(SelectorCore):
    # ----------------------------------------------------------------- values from the launch
    def op_ld_param(self, inst):
        off = CBANK_PARAMS + inst.attrs["offset"]
        w = width_of(inst.result.type)
        if inst.type.bits < 32 and inst.type.kind != "pred":
            return self.ld_param_narrow(inst, off)
        if inst.type.bits < 32 or off % (4 * max(w, 1)) and not (w == 2 and inst.type.bits == 32 and off % 4 == 0):
            raise self.error(f"kernel parameter of type {inst.type} at offset {inst.attrs['offset']} "
                             "is not supported yet")
        if w == 2 and inst.type.bits == 32:  # ld.param.s32 %rd: zero- or sign-extended (PTX 6.4), as op_ld
            d = self.vreg(inst.result)
            self.emit("LDC", d=Half(d, 0), b=CBank(0, off))
            if inst.type.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        self.cbank[inst.result] = CBank(0, off)
        self.emit("LDC.64" if w == 2 else "LDC", d=self.vreg(inst.result), b=CBank(0, off))

    def op_sreg(self, inst):
        name, _, comp = inst.attrs["name"].partition(".")
        d = self.vreg(inst.result)
        if name in ("ntid", "nctaid"):
            base = CBANK_NTID if name == "ntid" else CBANK_NCTAID
            cb = CBank(0, base + 4 * "xyz".index(comp))
            self.cbank[inst.result] = cb
            self.emit("LDC", d=d, b=cb)
            return
        if name in ENVREGS:  # the grid-sync workspace of a cooperative launch, written by the launch
            cb = self.cbank[inst.result] = CBank(0, ENVREGS[name])
            self.emit("LDC", d=d, b=cb)
            return
        if name in LAUNCH_SREGS:  # written by the launch into constant bank 0
            off, words = LAUNCH_SREGS[name]
            cb = self.cbank[inst.result] = CBank(0, off)
            self.emit("LDC.64" if words == 2 else "LDC", d=d, b=cb)
            return
        sr = SREG_NAMES.get(name)
        if sr is None:
            raise self.error(f"special register %{inst.attrs['name']} is not supported yet")
        sr = f"SR_{sr}" + (f".{comp.upper()}" if comp else "")
        if sr == "SR_CLOCK64":
            self.emit("CS2R.64", d=d, b=SR_INDEX[sr])
        else:
            self.emit("S2R", d=d, b=SR_INDEX[sr])

    def op_addr_of(self, inst):
        """A shared or local variable's address in its space: a constant offset; a .global variable's
        address is read from constant bank 0, where the launch puts it."""
        sym, space = inst.attrs["symbol"], inst.attrs["space"]
        if space == "global" and sym in self.global_slots and width_of(inst.result.type) == 2:
            cb = self.cbank[inst.result] = CBank(0, self.global_slots[sym])  # allocated by the launch
            self.emit("LDC.64", d=self.vreg(inst.result), b=cb)
            return
        if self.frame_address(inst):  # .param variables, device functions' .local ones (isel_calls)
            return
        if space == "const" and sym in self.const_offsets:  # its offset in bank 3; ld.const reads it with LDC
            self.const_addr[inst.result] = self.const_offsets[sym]
        table = {"shared": self.shared_offsets, "local": self.local_offsets,
                 "const": self.const_offsets}.get(space, {})
        if sym not in table:
            raise self.error(f"the address of .{space} variable '{sym}' is not supported by the backend yet")
        d = self.vreg(inst.result)
        if d.width == 2:
            self.emit("MOV", d=Half(d, 0), b=Imm(table[sym]))
            self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            self.emit("MOV", d=d, b=Imm(table[sym]))

    def op_cvta(self, inst):
        """Global addresses are generic; the shared, local, const and param windows are 4 GiB-aligned
        (:data:`xcc.backend.isa.WINDOWS`), so cvta adds or subtracts the base's high word."""
        space = inst.attrs.get("space")
        if space == "global" or space in WINDOWS and width_of(inst.type) == 1:
            self.alias(inst.result, inst.args[0])  # a 32-bit address: the base's low word is 0
            return
        if space not in ("shared", "local", "param", "const"):
            raise self.error(f"cvta for the .{space} space is not supported by the backend yet")
        hi = WINDOWS[space] >> 32
        if not inst.attrs.get("to_generic", True):
            hi = -hi & 0xFFFFFFFF
        d = self.vreg(inst.result)
        self.emit("MOV", d=Half(d, 0), b=self.half(inst.args[0], 0))
        self.emit("IADD3", d=Half(d, 1), a=self.half_reg(inst.args[0], 1), b=Imm(hi), c=RZ)

    def op_isspacep(self, inst):
        """The high word of the address against the window bases (global: no window)."""
        space = inst.attrs["space"]
        if space != "global" and space not in WINDOWS:
            raise self.error(f"isspacep.{space} is not supported by the backend yet")
        hi = self.half_reg(inst.args[0], 1)
        d = self.vreg(inst.result)
        if space == "global":
            t = new_vreg(1)
            self.emit("IADD3", d=t, a=hi, b=Imm(-(_WINDOW_LO >> 32) & 0xFFFFFFFF), c=RZ)
            self.emit("ISETP", pd=d, a=t, b=Imm(len(WINDOWS)), ps=(PT, False), mods={"cmp": "GE"})
        else:
            self.emit("ISETP", pd=d, a=hi, b=Imm(WINDOWS[space] >> 32), ps=(PT, False), mods={"cmp": "EQ"})

    def op_mov(self, inst):
        src, dst = inst.args[0], inst.result
        sw, dw = width_of(src.type), width_of(dst.type)
        if sw == dw:
            self.alias(dst, src)
        elif sw == 2 and dw == 1:
            self.emit("MOV", d=self.vreg(dst), b=self.half(src, 0))
        elif sw == 1 and dw == 2:
            d = self.vreg(dst)
            self.emit("MOV", d=Half(d, 0), b=self.src_b(src))
            self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            raise self.error(f"bit copy from {src.type} to {dst.type} is not supported")


    # ----------------------------------------------------------------- memory
    def _mem(self, inst) -> tuple[str, object, int, dict]:
        space = inst.attrs["space"]
        prefix = MEM_PREFIX.get(space)
        if prefix is None:
            raise self.error(f"memory accesses to the .{space} space are not supported yet")
        base = inst.args[0]
        off = inst.attrs["offset"]
        if prefix in ("G", ""):
            if width_of(base.type) != 2:
                raise self.error("a global address must be 64 bits")
            a = self.reg(base)
        else:
            if isinstance(base, Const):
                off += base.bits
                a = RZ
            else:
                a = self.half(base, 0) if width_of(base.type) == 2 else self.reg(base)
        t = inst.type
        mods = {}
        if t.bits < 32:
            mods["size"] = SUB_WORD_SIZE[(t.bits, t.kind if t.kind != "f" else "u")]
        if not -(1 << 31) <= off < (1 << 31):
            raise self.error(f"address offset {off} does not fit 32 bits")
        return prefix, a, off, mods

    def op_ld(self, inst):
        if inst.attrs["space"] == "const":
            return self._ld_const(inst)
        prefix, a, off, mods = self._mem(inst)
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        bypass = {"BYPASS": "BYPASS"} if prefix in ("G", "") and inst.attrs.get("cache") else {}
        mods.update(bypass)
        if w == 2:
            self.emit(f"LD{prefix}.64", d=d, a=a, b=off, mods=bypass)
            return
        if width_of(inst.result.type) == 2:  # PTX 6.4: zero-extended (.u/.b) or sign-extended (.s) to the register
            self.emit(f"LD{prefix}", d=Half(d, 0), a=a, b=off, mods=mods)
            if inst.type.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        self.emit(f"LD{prefix}", d=d, a=a, b=off, mods=mods)
        if inst.result.type.bits < 32 and mods.get("size", "").startswith("S"):
            self._narrow(inst, d)

    def _ld_const(self, inst):
        """ld.const of a .const variable at a constant offset: LDC from constant bank 3 (SASS's c[0x3][..])."""
        base, off = inst.args[0], inst.attrs.get("offset", 0)
        t = inst.type
        if base not in self.const_addr:  # a computed address: a generic load through the const window
            return self._ld_const_window(inst, self.half(base, 0) if width_of(base.type) == 2 else self.reg(base),
                                         off)
        at = self.const_addr[base] + off
        w = width_of(inst.result.type)
        if t.bits < 32 or at % (4 * max(width_of(t), 1)):  # LDC reads aligned words: as a computed address
            return self._ld_const_window(inst, Imm(at & 0xFFFFFFFF), 0)
        if width_of(t) == 2:
            self.emit("LDC.64", d=self.vreg(inst.result), b=CBank(3, at))
        elif w == 2:
            d = self.vreg(inst.result)
            self.emit("LDC", d=Half(d, 0), b=CBank(3, at))
            if t.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            self.emit("LDC", d=self.vreg(inst.result), b=CBank(3, at))

    def _ld_const_window(self, inst, low, off: int):
        """ld.const at const-space address ``low + off`` (any width, any alignment the type allows) as a generic
        LD: the const window's high word (:data:`xcc.backend.isa.WINDOWS`) over the const-space offset."""
        a = new_vreg(2)
        self.emit("MOV", d=Half(a, 0), b=low)
        self.emit("MOV", d=Half(a, 1), b=Imm(WINDOWS["const"] >> 32))
        t, d = inst.type, self.vreg(inst.result)
        mods = {"size": SUB_WORD_SIZE[(t.bits, t.kind if t.kind != "f" else "u")]} if t.bits < 32 else {}
        if width_of(t) == 2:
            self.emit("LD.64", d=d, a=a, b=off)
        elif width_of(inst.result.type) == 2:
            self.emit("LD", d=Half(d, 0), a=a, b=off, mods=mods)
            if t.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            self.emit("LD", d=d, a=a, b=off, mods=mods)
            if inst.result.type.bits < 32 and mods.get("size", "").startswith("S"):
                self._narrow(inst, d)

    def op_st(self, inst):
        prefix, a, off, mods = self._mem(inst)
        v = inst.args[1]
        if width_of(inst.type) == 2:
            self.emit(f"ST{prefix}.64", a=a, b=off, c=self.reg(v))
            return
        self.emit(f"ST{prefix}", a=a, b=off, c=self.reg(v), mods=mods)

    def op_atom(self, inst):
        """atom/red on global or shared memory: ATOMG/ATOMS (32-bit), ATOMG.64/ATOMS.64 (64-bit); a red,
        or an atom whose result is unused, writes RZ."""
        if "part" in inst.attrs:
            return self._atom128(inst)
        prefix, a, off, _ = self._mem(inst)
        if prefix == "L":
            raise self.error("atomics on the .local space are not defined by PTX")
        t = inst.type
        op = inst.attrs["atom_op"].upper()
        half = ({"f16": "F16", "bf16": "BF16", "f16x2": "F16X2", "bf16x2": "BF16X2"}.get(t.name)
                if op in ("ADD", "MIN", "MAX") else None)
        if half or (t.bits == 16 and op == "CAS"):  # ATOM*.H: 16-bit CAS, f16/bf16 (x2) ADD/MIN/MAX
            c = self.reg(inst.args[1])
            e = self.reg(inst.args[2]) if op == "CAS" else RZ
            d = self.vreg(inst.result) if inst.result is not None else RZ
            self.emit(f"ATOM{prefix}.H", d=d, a=a, b=off, c=c, e=e, mods={"op": op, "type": half or "U16"})
            return
        if t.bits not in (32, 64) or t.name in ("f16x2", "bf16x2"):
            raise self.error(f"atom.{inst.attrs['atom_op']}.{t} is not supported yet")
        wide = t.bits == 64
        typ = ATOM_KIND[t.kind] + str(t.bits)
        c = self.reg(inst.args[1])
        e = self.reg(inst.args[2]) if op == "CAS" else RZ
        d = self.vreg(inst.result) if inst.result is not None else RZ
        self.emit(f"ATOM{prefix}" + (".64" if wide else ""), d=d, a=a, b=off, c=c, e=e, mods={"op": op, "type": typ})

    def _atom128(self, inst):
        """A ``.b128`` atomic's parts (xcc.ir.lower_b128; a strong ld/st.b128 too, op LD/ST): part 0 is
        ATOM{G,S,}.128 (a CAS's new value put in the latch by ATOMX.SET first), part 1, right after it, ATOMX.GET
        reading the old high half."""
        if inst.attrs["part"] == 1:
            self.emit("ATOMX.GET", d=self.vreg(inst.result), a=self._atom128_d)
            return
        prefix, a, off, _ = self._mem(inst)
        if prefix == "L":
            raise self.error("atomics on the .local space are not defined by PTX")
        op = inst.attrs["atom_op"].upper()
        if op == "CAS":
            self.emit("ATOMX.SET", c=self.reg(inst.args[3]), e=self.reg(inst.args[4]))
        d = self._atom128_d = self.vreg(inst.result)
        c, e = (self.reg(inst.args[1]), self.reg(inst.args[2])) if op != "LD" else (RZ, RZ)
        self.emit(f"ATOM{prefix}.128", d=d, a=a, b=off, c=c, e=e, mods={"op": op})

    # ----------------------------------------------------------------- narrow kernel parameters
    def ld_param_narrow(self, inst, off: int):
        """A 8/16-bit kernel parameter (``ld.param.u16`` of a ``__half``): the constant-bank word holding
        it, its bytes picked by PRMT, zero- or sign-extended to the result's width."""
        t, rt = inst.type, inst.result.type
        if off % t.bytes:
            raise self.error(f"kernel parameter of type {t} at offset {inst.attrs['offset']} into .{rt} "
                             "is not supported yet")
        word = new_vreg(1)
        self.emit("LDC", d=word, b=CBank(0, off & ~3))
        k, nb = off & 3, min(t.bytes, rt.bytes)
        sign = t.kind == "s" and rt.bits > t.bits
        sel = 0
        for i in range(4):
            if i < nb:
                s = k + i
            elif i < rt.bytes and sign:
                s = 8 | (k + t.bytes - 1)  # the sign of the top byte, replicated
            else:
                s = 4  # a byte of RZ
            sel |= s << (4 * i)
        d = self.vreg(inst.result)
        if width_of(rt) == 2:  # into a 64-bit register (ld.param.u16 %rd): the high word extends the low one
            self.emit("PRMT", d=Half(d, 0), a=word, b=Imm(sel), c=RZ)
            if sign:
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        self.emit("PRMT", d=d, a=word, b=Imm(sel), c=RZ)
