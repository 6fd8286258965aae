"""Instruction selection for integer and float arithmetic: add/sub, mul/mad/fma, min/max, logic, shifts,
neg/abs/copysign, division and the MUFU functions (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`)."""

from __future__ import annotations

from xcc.backend.isa import PT, RZ
from xcc.backend.isel_core import SelectorCore, width_of
from xcc.backend.isel_tables import LOGIC, LUT_AND, LUT_NOT_A, LUT_SELECT, LUT_XOR, MUFU, PLUT_NOT_A, SHIFTS
from xcc.backend.minst import Half, Imm, new_vreg
from xcc.ir.core import Const, Value
from xcc.ir.types import ptx_type


class ArithSelection(SelectorCore):
    def op_add(self, inst, neg: bool = False):
        t = inst.type
        a, b = inst.args if neg else self._commute(*inst.args)
        d = self.vreg(inst.result)
        mods = {"NEG_B": "NEG_B"} if neg else {}
        if t.is_float:
            if self._fbits(t) == 64:
                self.emit("DADD", d=d, a=self.reg(a), b=self.src_b(b), mods={**mods, **self._dmods(inst)})
                return
            self.emit("FADD", d=d, a=self.reg(a), b=self.src_b(b), mods={**mods, **self._fmods(inst)})
        elif inst.attrs.get("sat") and t.kind == "s" and t.bits == 32:
            self._add_sat(d, a, b, neg)
        elif inst.attrs.get("sat"):
            raise self.error(f"{inst.op}.sat.{t} is not supported by the backend yet")
        elif self._check_int(inst) == 2:
            self.emit("IADD.64", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)
        else:
            self.emit("IADD3", d=d, a=self.reg(a), b=self.src_b(b), c=RZ, mods=mods)
            self._narrow(inst, d)

    def op_sub(self, inst):
        self.op_add(inst, neg=True)

    def _add_sat(self, d, a: Value, b: Value, neg: bool):
        """add/sub.sat.s32 (PTX ISA 9.7.1.1): the wrapped sum r, and where it overflowed (a and the effective b
        of one sign, r of the other) the bound of a's sign: ``a < 0 ? 0x80000000 : 0x7FFFFFFF``."""
        self._add_sat_regs(d, self.reg(a), self.reg(b), neg)

    def _add_sat_regs(self, d, ra, rb, neg: bool):
        """:meth:`_add_sat` of two registers (also mad24.hi.sat.s32's final sum)."""
        r = new_vreg(1)
        self.emit("IADD3", d=r, a=ra, b=rb, c=RZ, mods={"NEG_B": "NEG_B"} if neg else {})
        # overflow iff sign(a ^ r) & sign(b' ^ r), b' = b (add) or ~b (sub: a - b = a + ~b + 1)
        x, y, o, bound, ovf = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(0)
        self.emit("LOP3", d=x, a=ra, b=r, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
        self.emit("LOP3", d=y, a=rb, b=r, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
        if neg:
            self.emit("LOP3", d=y, a=y, b=RZ, c=RZ, mods={"lut": f"{LUT_NOT_A:#04x}"})
        self.emit("LOP3", d=o, a=x, b=y, c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        self.emit("ISETP", pd=ovf, a=o, b=RZ, ps=(PT, False), mods={"cmp": "LT", "type": "S32"})
        self.emit("SHR", d=bound, a=ra, b=Imm(31), mods={"type": "S32"})
        self.emit("LOP3", d=bound, a=bound, b=Imm(0x7FFFFFFF), c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
        self.emit("SEL", d=d, a=bound, b=r, ps=(ovf, False))


    def op_mul(self, inst):
        self._mul(inst, None)

    def op_mad(self, inst):
        self._mul(inst, inst.args[2])

    def op_fma(self, inst):
        self._mul(inst, inst.args[2])

    def _mul(self, inst, c: Value | None):
        t = inst.type
        a, b = self._commute(inst.args[0], inst.args[1])
        d = self.vreg(inst.result)
        if t.is_float:
            if self._fbits(t) == 64:
                if c is None:
                    self.emit("DMUL", d=d, a=self.reg(a), b=self.src_b(b), mods=self._dmods(inst))
                else:
                    self.emit("DFMA", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=self._dmods(inst))
                return
            if c is None:
                self.emit("FMUL", d=d, a=self.reg(a), b=self.src_b(b), mods=self._fmods(inst))
            else:
                self.emit("FFMA", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=self._fmods(inst))
            return
        mode = inst.attrs.get("mode", "lo")
        if inst.attrs.get("sat"):
            raise self.error(f"{inst.op}.{mode}.sat.{t} is not supported by the backend yet")
        typ = {"type": "S32"} if t.kind == "s" else {}
        if t.bits == 64:
            if mode not in ("lo", "hi"):
                raise self.error(f"mul.{mode}.{t} is not supported yet")
            self.emit("IMAD.64", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c) if c is not None else RZ,
                      mods={**({"type": "S64"} if t.kind == "s" else {}),
                            **({"mode": "HI"} if mode == "hi" else {})})
            return
        if t.bits < 32 and t.kind == "s":
            a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
        else:
            a_r, b_v = self.reg(a), self.src_b(b)
        if mode == "wide":
            if t.bits < 32:  # 16x16 -> 32 fits one IMAD
                self.emit("IMAD", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ)
                return
            self.emit("IMAD.WIDE", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ, mods=typ)
            return
        if mode == "hi" and t.bits < 32:
            raise self.error(f"mul.hi.{t} is not supported yet")
        self.emit("IMAD", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ,
                  mods={**typ, **({"mode": "HI"} if mode == "hi" else {})})
        self._narrow(inst, d)


    def op_min(self, inst, which="MIN"):
        t = inst.type
        a, b = self._commute(*inst.args)
        d = self.vreg(inst.result)
        if t.is_float:
            if self._fbits(t) == 64:
                self.emit("DMNMX", d=d, a=self.reg(a), b=self.src_b(b), mods={"minmax": which})
                return
            self.emit("FMNMX", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"minmax": which, **({"FTZ": "FTZ"} if inst.attrs.get("ftz") else {})})
        elif self._check_int(inst) == 1 and t.bits == 32:
            self.emit("IMNMX", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"minmax": which, **({"type": "S32"} if t.kind == "s" else {})})
        elif t.bits == 16:  # zero-extended in a 32-bit register: signed operands sign-extended first
            a_r, b_v = (self._sext(a, 16), self._sext(b, 16)) if t.kind == "s" else (self.reg(a), self.src_b(b))
            self.emit("IMNMX", d=d, a=a_r, b=b_v, mods={"minmax": which, **({"type": "S32"} if t.kind == "s" else {})})
            self._narrow(inst, d)
        elif t.bits == 64:  # as ptxas: ISETP + ISETP.EX, then a SEL per half
            take_a = new_vreg(0)
            self.emit("ISETP.64", pd=take_a, a=self.reg(a), b=self.src_b(b), ps=(PT, False),
                      mods={"cmp": "LT" if which == "MIN" else "GT", **({"type": "S64"} if t.kind == "s" else {})})
            for i in (0, 1):
                self.emit("SEL", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), ps=(take_a, False))
        else:
            raise self.error(f"{inst.op}.{t} is not supported yet")

    def op_max(self, inst):
        self.op_min(inst, "MAX")

    def _logic(self, inst, lut: int, plut: int):
        a, b = self._commute(*inst.args)
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:
            self.emit("PLOP3", pd=d, pa=self.pred_src(a)[0] if not isinstance(a, Const) else self._pconst(a),
                      ps=self.pred_src(b), mods={"lut": f"{plut:#04x}"})
        elif w == 1:
            self.emit("LOP3", d=d, a=self.reg(a), b=self.src_b(b), c=RZ, mods={"lut": f"{lut:#04x}"})
        else:
            for i in (0, 1):
                self.emit("LOP3", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), c=RZ,
                          mods={"lut": f"{lut:#04x}"})

    def _pconst(self, v: Const):
        return self.reg(v)

    def _logic_op(self, inst):
        """and/or/xor: LOP3 (PLOP3 on predicates) with the op's truth table."""
        self._logic(inst, *LOGIC[inst.op])

    op_and = op_or = op_xor = _logic_op


    def op_not(self, inst):
        (a,) = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:
            self.emit("PLOP3", pd=d, pa=self.reg(a), ps=(PT, False), mods={"lut": f"{PLUT_NOT_A:#04x}"})
        elif w == 1:
            self.emit("LOP3", d=d, a=self.reg(a), b=RZ, c=RZ, mods={"lut": f"{LUT_NOT_A:#04x}"})
            self._narrow(inst, d)
        else:
            for i in (0, 1):
                self.emit("LOP3", d=Half(d, i), a=self.half_reg(a, i), b=RZ, c=RZ, mods={"lut": f"{LUT_NOT_A:#04x}"})

    def _shift(self, inst):
        """shl/shr: SHL/SHR (SHR.S32 for signed types; .64 for 64-bit values)."""
        t = inst.type
        mn = SHIFTS[inst.op]
        a, b = inst.args
        d = self.vreg(inst.result)
        w = self._check_int(inst)
        mods = {}
        if mn == "SHR" and t.kind == "s":
            mods["type"] = "S64" if w == 2 else "S32"
        if w == 2:
            self.emit(mn + ".64", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)
        else:
            src = self._sext(a, t.bits) if (t.bits < 32 and t.kind == "s") else self.reg(a)
            self.emit(mn, d=d, a=src, b=self.src_b(b), mods=mods)
            self._narrow(inst, d)

    op_shl = op_shr = _shift

    def op_neg(self, inst):
        d = self.vreg(inst.result)
        if inst.type.is_float:
            self._sign_op(inst, d, False)
        elif self._check_int(inst) == 2:
            self.emit("IADD.64", d=d, a=RZ, b=self.reg(inst.args[0]), mods={"NEG_B": "NEG_B"})
        else:
            self.emit("IADD3", d=d, a=RZ, b=self.src_b(inst.args[0]), c=RZ, mods={"NEG_B": "NEG_B"})
            self._narrow(inst, d)

    def _sign_op(self, inst, d, is_abs: bool) -> None:
        """neg/abs of a float, so that a NaN comes out as an H200 gives it (docs/semantics.md): the sign is
        flipped by a multiplication by -1.0 (exact; FMUL: a NaN gives the canonical 0x7FFFFFFF, .ftz flushes a
        subnormal input to the zero of its sign first; DMUL: a NaN is quieted, its sign kept), and ``abs`` is
        the max of ``a`` and ``-a`` (FMNMX/DMNMX: +0 over -0; two NaNs give the canonical f32 NaN, b's f64 NaN
        quieted)."""
        a = inst.args[0]
        if self._fbits(inst.type) == 64:
            minus_one = self.reg(Const(ptx_type("f64"), 0xBFF0000000000000))
            neg = new_vreg(2) if is_abs else d
            self.emit("DMUL", d=neg, a=self.reg(a), b=minus_one)
            if is_abs:
                self.emit("DMNMX", d=d, a=self.reg(a), b=neg, mods={"minmax": "MAX"})
            return
        ftz = {"FTZ": "FTZ"} if inst.attrs.get("ftz") else {}
        neg = new_vreg(1) if is_abs else d
        self.emit("FMUL", d=neg, a=self.reg(a), b=Imm(0xBF800000), mods=ftz)
        if is_abs:
            self.emit("FMNMX", d=d, a=self.reg(a), b=neg, mods={"minmax": "MAX", **ftz})

    def op_abs(self, inst):
        d = self.vreg(inst.result)
        if inst.type.is_float:
            self._sign_op(inst, d, True)
        elif self._check_int(inst) == 1 and inst.type.bits == 32:
            self.emit("IABS", d=d, a=self.reg(inst.args[0]))
        else:
            raise self.error(f"abs.{inst.type} is not supported yet")


    def op_copysign(self, inst):
        """d = (a & 0x80000000) | (b & 0x7fffffff): one LOP3 on the word holding the sign."""
        a, b = inst.args
        d = self.vreg(inst.result)
        lut = {"lut": f"{LUT_SELECT:#04x}"}  # (a & b) | (c & ~b)
        if width_of(inst.type) == 2:
            self.emit("MOV", d=Half(d, 0), b=self.half(b, 0))
            self.emit("LOP3", d=Half(d, 1), a=self.half_reg(a, 1), b=Imm(0x80000000), c=self.half_reg(b, 1),
                      mods=lut)
        else:
            self.emit("LOP3", d=d, a=self.reg(a), b=Imm(0x80000000), c=self.reg(b), mods=lut)


    # ----------------------------------------------------------------- integer division
    def op_div(self, inst):
        self._idiv(inst, "DIV")

    def op_rem(self, inst):
        self._idiv(inst, "REM")

    def _fdiv(self, inst, a, b) -> None:
        """div.{rn,rz,rm,rp,full,approx}[.ftz].f32 -> FDIV; div.{rnd}.f64 -> DDIV."""
        d = self.vreg(inst.result)
        if self._fbits(inst.type) == 64:
            self.emit("DDIV", d=d, a=self.reg(a), b=self.src_b(b), mods=self._dmods(inst))
            return
        prec = "APPROX" if inst.attrs.get("approx") else "FULL" if inst.attrs.get("full") else "RN"
        mods = {**self._fmods(inst), **({"prec": prec} if prec != "RN" else {})}
        if mods.pop("SAT", None):
            raise self.error("div.sat.f32 is not valid PTX")
        self.emit("FDIV", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)

    def _idiv(self, inst, op: str):
        t = inst.type
        if t.is_float:
            if op != "DIV":
                raise self.error(f"rem.{t} is not valid PTX")
            self._fdiv(inst, *inst.args)
            return
        a, b = inst.args
        d = self.vreg(inst.result)
        signed = t.kind == "s"
        if self._check_int(inst) == 2:
            self.emit("IDIV.64", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"op": op, **({"type": "S64"} if signed else {})})
            return
        if t.bits < 32 and signed:
            a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
        else:
            a_r, b_v = self.reg(a), self.src_b(b)
        self.emit("IDIV", d=d, a=a_r, b=b_v, mods={"op": op, **({"type": "S32"} if signed else {})})
        self._narrow(inst, d)

    def _flush_f64(self, a: Value):
        """``a`` (f64) with a subnormal value flushed to the zero of its sign (.ftz): exponent bits 0 -> keep
        only the sign bit."""
        hi, tiny, out = self.half_reg(a, 1), new_vreg(0), new_vreg(2)
        exp, sign = new_vreg(1), new_vreg(1)
        self.emit("LOP3", d=exp, a=hi, b=Imm(0x7FF00000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        self.emit("ISETP", pd=tiny, a=exp, b=RZ, ps=(PT, False), mods={"cmp": "EQ"})
        self.emit("LOP3", d=sign, a=hi, b=Imm(0x80000000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        self.emit("SEL", d=Half(out, 0), a=RZ, b=self.half_reg(a, 0), ps=(tiny, False))
        self.emit("SEL", d=Half(out, 1), a=sign, b=hi, ps=(tiny, False))
        return out

    def _mufu(self, inst):
        if inst.type.is_float and self._fbits(inst.type) == 64:
            if inst.op == "sqrt":
                self.emit("DSQRT", d=self.vreg(inst.result), a=self.reg(inst.args[0]), mods=self._dmods(inst))
            elif inst.op == "rcp":  # 1 / a, correctly rounded (rcp.approx.ftz.f64 too: the semantics' choice,
                # after flushing a subnormal input)
                one = Const(ptx_type("f64"), 0x3FF0000000000000)
                rnd = inst.attrs.get("rnd", "rn")
                mods = {"rnd": rnd.upper()} if rnd != "rn" else {}
                src = self._flush_f64(inst.args[0]) if inst.attrs.get("ftz") else self.reg(inst.args[0])
                self.emit("DDIV", d=self.vreg(inst.result), a=self.reg(one), b=src, mods=mods)
            elif inst.op == "rsqrt":  # rsqrt.approx.f64 (xcc.semantics.floating.funary): 1 / sqrt(a), two roundings
                src = self._flush_f64(inst.args[0]) if inst.attrs.get("ftz") else self.reg(inst.args[0])
                root = new_vreg(2)
                one = Const(ptx_type("f64"), 0x3FF0000000000000)
                self.emit("DSQRT", d=root, a=src)
                self.emit("DDIV", d=self.vreg(inst.result), a=self.reg(one), b=root)
            else:
                raise self.error(f"{inst.op}.f64 is not supported by the backend yet")
            return
        self._f32(inst.type)
        if inst.op == "rcp" and inst.attrs.get("rnd", "rn") != "rn":  # directed: 1 / a in that mode
            one = Const(ptx_type("f32"), 0x3F800000)
            self._fdiv(inst, one, inst.args[0])
            return
        exact = inst.op in ("rcp", "sqrt") and not inst.attrs.get("approx")
        mods = {"fn": MUFU[inst.op], **({"prec": "RN"} if exact else {}),
                **({"FTZ": "FTZ"} if inst.attrs.get("ftz") else {})}
        if exact and inst.attrs.get("rnd", "rn") != "rn":  # sqrt.{rz,rm,rp}{.ftz}.f32 (rcp's went to _fdiv)
            self._sqrt_directed(inst)
            return
        self.emit("MUFU", d=self.vreg(inst.result), a=self.reg(inst.args[0]), mods=mods)

    def _sqrt_directed(self, inst) -> None:
        """``sqrt.{rz,rm,rp}{.ftz}.f32``: f64(a) (exact), DSQRT in the same mode, F2F.F32.F64 in the same mode.
        Exact: a directed rounding of a directed rounding in the same direction onto a coarser grid (every f32 is
        an f64) is that rounding of the exact root; a root of an f32 is never an f32 subnormal. ``.ftz`` flushes a
        subnormal input to the zero of its sign first (as _sign_op); NaN results are the canonical f32 NaN."""
        a, mods = inst.args[0], {"rnd": inst.attrs["rnd"].upper()}
        src = self.reg(a)
        if inst.attrs.get("ftz"):
            tiny, sign, src = new_vreg(0), new_vreg(1), new_vreg(1)
            self.emit("FSETP", pd=tiny, a=self.reg(a), b=RZ, ps=(PT, False), mods={"cmp": "EQ", "FTZ": "FTZ"})
            self.emit("LOP3", d=sign, a=self.reg(a), b=Imm(0x80000000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            self.emit("SEL", d=src, a=sign, b=self.reg(a), ps=(tiny, False))
        wide, root, r, nan = new_vreg(2), new_vreg(2), new_vreg(1), new_vreg(0)
        self.emit("F2F.F64.F32", d=wide, a=src)
        self.emit("DSQRT", d=root, a=wide, mods=mods)
        self.emit("F2F.F32.F64", d=r, a=root, mods=mods)
        self.emit("FSETP", pd=nan, a=r, b=RZ, ps=(PT, False), mods={"cmp": "NAN"})
        self.emit("SEL", d=self.vreg(inst.result), a=r, b=Imm(0x7FFFFFFF), ps=(nan, True))

    op_rcp = op_sqrt = op_rsqrt = op_ex2 = op_lg2 = op_sin = op_cos = op_tanh = _mufu
