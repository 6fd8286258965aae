"""Instruction selection for comparison, selection and conversions: setp, selp, cvt (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`)."""

from __future__ import annotations

from xcc.backend.isa import PT, RZ
from xcc.backend.isel_core import SelectorCore, width_of
from xcc.backend.isel_tables import (
    COMPLEMENT,
    FLOAT_CMP,
    INT_CMP,
    LUT_AND,
    MIRROR,
    PLUT_AND,
    PLUT_OR,
    UNSIGNED_CMPS,
)
from xcc.backend.minst import Half, Imm, VReg, new_vreg
from xcc.ir.core import Const, Value
from xcc.ir.types import ScalarType, ptx_type


class ConvertSelection(SelectorCore):
    # ----------------------------------------------------------------- comparison and selection
    def op_setp(self, inst):
        t = inst.type
        a, b = inst.args[0], inst.args[1]
        if t.is_float:
            self._fbits(t)
            cmp = FLOAT_CMP[inst.attrs["cmp"]]
        else:
            cmp = INT_CMP[inst.attrs["cmp"]]
        if inst.attrs.get("negate"):
            cmp = COMPLEMENT[cmp]
            if not t.is_float:
                cmp = cmp.rstrip("U")
        if isinstance(a, Const) and not isinstance(b, Const):
            a, b, cmp = b, a, MIRROR[cmp]
        mods = {"cmp": cmp}
        if "bool" in inst.attrs:
            mods["bool"] = inst.attrs["bool"].upper()
            ps = self.pred_src(inst.args[2])
        else:
            ps = (PT, False)
        d = self.vreg(inst.result)
        if t.is_float and t.bits == 64:
            self.emit("DSETP", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps, mods=mods)
            return
        if t.is_float:
            if inst.attrs.get("ftz"):
                mods["FTZ"] = "FTZ"
            self.emit("FSETP", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps, mods=mods)
            return
        w = self._check_int(inst)
        signed = t.kind == "s" and inst.attrs["cmp"] not in UNSIGNED_CMPS
        if w == 2:
            self.emit("ISETP.64", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps,
                      mods={**mods, **({"type": "S64"} if signed else {})})
        else:
            if t.bits < 32 and signed:
                a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
            else:
                a_r, b_v = self.reg(a), self.src_b(b)
            self.emit("ISETP", pd=d, a=a_r, b=b_v, ps=ps, mods={**mods, **({"type": "S32"} if signed else {})})

    def op_selp(self, inst):
        a, b, c = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:  # d = (a & c) | (b & !c)
            t1, t2 = new_vreg(0), new_vreg(0)
            self.emit("PLOP3", pd=t1, pa=self.reg(a), ps=self.pred_src(c), mods={"lut": f"{PLUT_AND:#04x}"})
            self.emit("PLOP3", pd=t2, pa=self.reg(b), ps=self.pred_src(c, True), mods={"lut": f"{PLUT_AND:#04x}"})
            self.emit("PLOP3", pd=d, pa=t1, ps=(t2, False), mods={"lut": f"{PLUT_OR:#04x}"})
        elif w == 1:
            ps = self.pred_src(c)
            if isinstance(a, Const) and not isinstance(b, Const):
                a, b, ps = b, a, (ps[0], not ps[1])
            self.emit("SEL", d=d, a=self.reg(a), b=self.src_b(b), ps=ps)
        else:
            ps = self.pred_src(c)
            for i in (0, 1):
                self.emit("SEL", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), ps=ps)

    # ----------------------------------------------------------------- conversions
    def op_cvt(self, inst):
        dt, st = inst.type, ptx_type(inst.attrs["src"])
        a = inst.args[0]
        d = self.vreg(inst.result)
        rnd = inst.attrs.get("rnd")
        ftz = {"FTZ": "FTZ"} if inst.attrs.get("ftz") else {}
        if dt.is_float and dt.bits not in (32, 64) or st.is_float and st.bits not in (32, 64):
            raise self.error(f"cvt.{dt}.{st} is not supported yet")
        if not dt.is_float and not st.is_float and inst.attrs.get("sat"):
            self._cvt_int_sat(d, a, dt, st)
        elif not dt.is_float and not st.is_float:
            self._cvt_int(d, a, dt, st)
        elif dt.is_float and not st.is_float and inst.attrs.get("sat"):  # (float -> int saturates anyway)
            self._cvt_i2f_sat(d, a, dt, st)
        elif dt.is_float and not st.is_float:
            self._cvt_i2f(d, a, dt, st, rnd)
        elif not dt.is_float:
            self._cvt_f2i(d, a, dt, st, (rnd or "rzi").upper(), ftz)
        elif dt.bits == 64 and st.bits == 32:
            src = self.reg(a)
            if ftz:  # cvt.ftz.f64.f32 flushes a subnormal input to the zero of its sign (a zero exponent:
                # the sign alone), bit operations that keep a NaN's payload (an FADD would make it canonical)
                exp, tiny, sign, src = new_vreg(1), new_vreg(0), new_vreg(1), new_vreg(1)
                self.emit("LOP3", d=exp, a=self.reg(a), b=Imm(0x7F800000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
                self.emit("ISETP", pd=tiny, a=exp, b=RZ, ps=(PT, False), mods={"cmp": "EQ"})
                self.emit("LOP3", d=sign, a=self.reg(a), b=Imm(0x80000000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
                self.emit("SEL", d=src, a=sign, b=self.reg(a), ps=(tiny, False))
            self.emit("F2F.F64.F32", d=d, a=src)
        elif dt.bits == 32 and st.bits == 64:
            self.emit("F2F.F32.F64", d=d, a=self.reg(a),
                      mods={**({"rnd": rnd.upper()} if rnd and rnd != "rn" else {}), **ftz})
        elif rnd in ("rni", "rzi", "rmi", "rpi") and inst.attrs.get("sat") and dt == st and dt.bits == 32:
            whole = new_vreg(1)  # cvt.rXi.sat.f32.f32: rounded to an integral value, then clamped as cvt.sat.f32.f32
            self.emit("FRND", d=whole, a=self.reg(a), mods={"rnd": rnd.upper(), **ftz})
            self.emit("FADD", d=d, a=whole, b=Imm(0x80000000), mods=self._fmods(inst, rnd=False))
        elif dt == st and dt.bits == 64 and inst.attrs.get("sat") and rnd in (None, "rni", "rzi", "rmi", "rpi"):
            self._cvt_sat_f64(d, a, rnd)
        elif rnd in ("rni", "rzi", "rmi", "rpi") and not inst.attrs.get("sat"):  # round to integral
            if dt.bits == 64:
                self.emit("DRND", d=d, a=self.reg(a), mods={"rnd": rnd.upper()})
            else:
                self.emit("FRND", d=d, a=self.reg(a), mods={"rnd": rnd.upper(), **ftz})
        elif dt == st and not rnd and not (inst.attrs.get("sat") or inst.attrs.get("ftz")):
            self.alias(inst.result, a)
        elif dt == st and dt.bits == 32 and not rnd:  # cvt.sat/.ftz.f32.f32: a + (-0.0) is exact
            self.emit("FADD", d=d, a=self.reg(a), b=Imm(0x80000000), mods=self._fmods(inst, rnd=False))
        else:
            raise self.error(f"cvt.{rnd + '.' if rnd else ''}{dt}.{st} is not supported yet")


    def _cvt_i2f_sat(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType):
        """cvt.frnd.sat.{f32,f64}.int: an integer converted and clamped to [0, 1] is 1.0 when the value is at least
        1 and +0.0 otherwise, whatever the rounding: ISETP against 0, SEL of the two constants."""
        pos = new_vreg(0)
        typ = {"type": "S64" if st.bits == 64 else "S32"} if st.kind == "s" else {}
        if st.bits == 64:
            self.emit("ISETP.64", pd=pos, a=self.reg(a), b=Imm(0), ps=(PT, False), mods={"cmp": "GT", **typ})
        else:
            self.emit("ISETP", pd=pos, a=self._narrow_int(a, st), b=Imm(0), ps=(PT, False), mods={"cmp": "GT", **typ})
        if dt.bits == 64:
            self.emit("MOV", d=Half(d, 0), b=Imm(0))
            self.emit("SEL", d=Half(d, 1), a=RZ, b=Imm(0x3FF00000), ps=(pos, True))
        else:
            self.emit("SEL", d=d, a=RZ, b=Imm(0x3F800000), ps=(pos, True))

    def _cvt_sat_f64(self, d: VReg, a: Value, rnd: str | None):
        """cvt{.rXi}.sat.f64.f64: rounded to an integral value (DRND) when asked, then clamped to [0, 1] - a NaN or
        a negative value other than -0 gives +0 (xcc.semantics.convert: .sat keeps an f64 -0): DSETP against 0
        and 1.0, a SEL pair for each."""
        src = self.reg(a)
        if rnd:
            src = new_vreg(2)
            self.emit("DRND", d=src, a=self.reg(a), mods={"rnd": rnd.upper()})
        one, low, ge, big = new_vreg(2), new_vreg(2), new_vreg(0), new_vreg(0)
        self.emit("MOV", d=Half(one, 0), b=Imm(0))
        self.emit("MOV", d=Half(one, 1), b=Imm(0x3FF00000))
        self.emit("DSETP", pd=ge, a=src, b=Imm(0), ps=(PT, False), mods={"cmp": "GE"})
        self.emit("DSETP", pd=big, a=src, b=one, ps=(PT, False), mods={"cmp": "GT"})
        for i in (0, 1):
            self.emit("SEL", d=Half(low, i), a=Half(one, i), b=Half(src, i), ps=(big, False))
            self.emit("SEL", d=Half(d, i), a=Half(low, i), b=Imm(0), ps=(ge, False))

    def _narrow_int(self, a: Value, st: ScalarType):
        """An 8/16/32-bit integer source as 32 bits: sign-extended, or for an unsigned type its own low bits only
        (a .u8 in a 16-bit register, a .u16 in a 32-bit one: the register's higher bits are not the value's)."""
        if st.bits < 32 and st.kind != "s":
            x = new_vreg(1)
            self.emit("LOP3", d=x, a=self.reg(a), b=Imm((1 << st.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            return x
        return self._int_operand(a, st)

    def _cvt_i2f(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType, rnd: str | None):
        """I2F (32-bit -> f32), I2F.64 (64-bit -> f32), I2F.F64 (32-bit -> f64, exact), I2F.F64.64."""
        signed = st.kind == "s"
        rmod = {"rnd": rnd.upper()} if rnd and rnd != "rn" else {}
        src = self._narrow_int(a, st) if st.bits < 64 else self.reg(a)
        if st.bits == 64:
            mn = "I2F.F64.64" if dt.bits == 64 else "I2F.64"
            self.emit(mn, d=d, a=src, mods={**({"type": "S64"} if signed else {}), **rmod})
        elif dt.bits == 64:
            self.emit("I2F.F64", d=d, a=src, mods={"type": "U32"} if not signed else {})
        else:
            self.emit("I2F", d=d, a=src, mods={**({"type": "U32"} if not signed else {}), **rmod})

    def _cvt_f2i(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType, rnd: str, ftz: dict):
        """F2I (f32 -> 32-bit), F2I.64 (f32 -> 64-bit), F2I.F64 (f64 -> 32-bit), F2I.F64.64; 8/16-bit results
        as ptxas: the saturating 32-bit conversion, clamped to the narrow range (IMNMX). A NaN gives the
        narrow type's top bit from f64 (as an H200 does; xcc.semantics.convert): F2I.F64's 0x80000000 clamps to
        it for a signed type; for an unsigned one a DSETP.NAN + SEL puts it in after the clamp. From f32 F2I
        gives 0, as the GPU does."""
        signed = dt.kind == "s"
        if dt.bits < 32:
            wide = new_vreg(1)
            self._cvt_f2i(wide, a, ptx_type(f"{dt.kind}32"), st, rnd, ftz)
            lo, hi = _int_range(dt)
            r = self._clamp32(wide, lo, hi, signed)
            if st.bits == 64 and not signed:
                nan, top = new_vreg(0), new_vreg(1)
                self.emit("DSETP", pd=nan, a=self.reg(a), b=self.reg(a), ps=(PT, False), mods={"cmp": "NAN"})
                self.emit("SEL", d=top, a=r, b=Imm(1 << (dt.bits - 1)), ps=(nan, True))
                r = top
            self.emit("LOP3", d=d, a=r, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            return
        if dt.bits == 64:
            mn = "F2I.F64.64" if st.bits == 64 else "F2I.64"
            self.emit(mn, d=d, a=self.reg(a), mods={**({"type": "S64"} if signed else {}), "rnd": rnd,
                                                     **(ftz if st.bits == 32 else {})})
        elif st.bits == 64:
            self.emit("F2I.F64", d=d, a=self.reg(a), mods={**({"type": "U32"} if not signed else {}), "rnd": rnd})
        else:
            self.emit("F2I", d=d, a=self.reg(a), mods={**({"type": "U32"} if not signed else {}), "rnd": rnd, **ftz})

    def _clamp32(self, r, lo: int, hi: int, signed: bool, src_lo: int | None = None, src_hi: int | None = None):
        """``r`` (32 bits) clamped to ``[lo, hi]``: IMNMX, one per bound the source range can pass."""
        typ = {"type": "S32"} if signed else {}
        if src_lo is None or lo > src_lo:
            t = new_vreg(1)
            self.emit("IMNMX", d=t, a=r, b=Imm(lo & 0xFFFFFFFF), mods={"minmax": "MAX", **typ})
            r = t
        if src_hi is None or hi < src_hi:
            t = new_vreg(1)
            self.emit("IMNMX", d=t, a=r, b=Imm(hi & 0xFFFFFFFF), mods={"minmax": "MIN", **typ})
            r = t
        return r

    def _cvt_int_sat(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType):
        """cvt.sat between integer types (PTX ISA 9.7.9.21): the source value clamped to the destination
        type's range, which then converts exactly."""
        (dlo, dhi), (slo, shi) = _int_range(dt), _int_range(st)
        lo, hi = max(dlo, slo), min(dhi, shi)
        if (lo, hi) == (slo, shi):
            self._cvt_int(d, a, dt, st)
            return
        signed = st.kind == "s"
        if st.bits == 64:  # as ptxas: ISETP + ISETP.EX against each bound, a SEL per half
            r = self.reg(a)
            for bound, cmp in ((lo, "GT"), (hi, "LT")):
                if bound == (slo if cmp == "GT" else shi):
                    continue
                b, keep, t = new_vreg(2), new_vreg(0), new_vreg(2)
                self.copy(b, Const(ptx_type("u64"), bound & 0xFFFFFFFFFFFFFFFF))
                self.emit("ISETP.64", pd=keep, a=r, b=b, ps=(PT, False),
                          mods={"cmp": cmp, **({"type": "S64"} if signed else {})})
                for i in (0, 1):
                    self.emit("SEL", d=Half(t, i), a=Half(r, i), b=Half(b, i), ps=(keep, False))
                r = t
            if dt.bits == 64:
                for i in (0, 1):
                    self.emit("MOV", d=Half(d, i), b=Half(r, i))
                return
            low = Half(r, 0)
        else:
            src = self._int_operand(a, st)
            if self._needs_zext(a, st):
                src = new_vreg(1)
                self.emit("LOP3", d=src, a=self.reg(a), b=Imm((1 << st.bits) - 1), c=RZ,
                          mods={"lut": f"{LUT_AND:#04x}"})
            low = self._clamp32(src, lo, hi, signed or st.bits < 32, slo, shi)
        if dt.bits == 64:
            self.emit("MOV", d=Half(d, 0), b=low)
            if lo < 0:
                self.emit("SHR", d=Half(d, 1), a=low, b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
        elif dt.bits == 32:
            self.emit("MOV", d=d, b=low)
        else:
            self.emit("LOP3", d=d, a=low, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})

    def _needs_zext(self, a: Value, st: ScalarType) -> bool:
        """Whether reading ``a`` as the unsigned ``st`` (narrower than 32 bits) must clear its high bits: PTX
        takes a wider register's low ``st.bits`` bits (``cvt.u32.u8 %r, %r32``); a value loaded or converted
        as ``st`` or narrower is already zero-extended."""
        if st.kind == "s" or st.bits >= 32 or isinstance(a, Const) or a.type.bits <= st.bits:
            return False
        d = self.def_of(a)
        return not (d is not None and d.op in ("ld", "ld_param", "cvt") and d.type is not None
                    and d.type.kind in ("u", "b") and d.type.bits <= st.bits)

    def _cvt_int(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType):
        if dt.bits == 64:
            lo = Half(d, 0)
            if st.bits == 64:
                self.copy(d, a)
                return
            src = self.reg(a)
            if st.kind == "s" and st.bits < 32:
                src = self._sext(a, st.bits)
            elif self._needs_zext(a, st):
                src = new_vreg(1)
                self.emit("LOP3", d=src, a=self.reg(a), b=Imm((1 << st.bits) - 1), c=RZ,
                          mods={"lut": f"{LUT_AND:#04x}"})
            self.emit("MOV", d=lo, b=src)
            if st.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=src, b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        src = self.half(a, 0) if st.bits == 64 else self.src_b(a)
        if dt.bits == 32 and st.bits == 64:
            self.emit("MOV", d=d, b=src)
        elif dt.bits >= st.bits and st.kind == "s" and st.bits < 32:
            self.emit("SGXT", d=d, a=self.reg(a), b=Imm(st.bits))
            if dt.bits < 32:
                self.emit("LOP3", d=d, a=d, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        elif dt.bits >= st.bits and self._needs_zext(a, st):
            self.emit("LOP3", d=d, a=self.reg(a), b=Imm((1 << st.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        elif dt.bits >= st.bits:
            self.emit("MOV", d=d, b=src)
        else:
            r = self.half_reg(a, 0) if st.bits == 64 else self.reg(a)
            if dt.kind == "s":
                self.emit("SGXT", d=d, a=r, b=Imm(dt.bits))
                self.emit("LOP3", d=d, a=d, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            else:
                self.emit("LOP3", d=d, a=r, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})


def _int_range(t: ScalarType) -> tuple[int, int]:
    """The values of integer type ``t``."""
    return (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.kind == "s" else (0, (1 << t.bits) - 1)
