"""Instruction selection for the half IR ops: a rule group of :class:`xcc.backend.isel.InstructionSelector`
(one ``op_<irop>`` method per IR op, as in :mod:`xcc.backend.isel_core`).

* f16/bf16 arithmetic (scalar and packed x2): ``add``/``sub`` -> HADD2, ``mul`` -> HMUL2,
  ``fma``/``mad`` -> HFMA2 (``fma.oob`` -> HFMA2.OOB, as ptxas 13.0), ``min``/``max`` -> HMNMX2, ``setp`` -> HSETP2 (one element each),
  ``ex2``/``tanh`` -> HMUFU, ``neg`` -> HMUL2 by -1, ``abs`` -> HMUL2 + HMNMX2.  A scalar uses shape H0
  (element 0, the result zero-extended: the register invariant of sub-word values).
* ``cvt`` with an f16/bf16 side: F2F.16 (among f16, bf16, f32), F2F.16.F64 / F2F.F64.16, I2F.16
  (I2F.16.64), F2I.16 (F2I.16.64).
* ``pack`` / ``unpack`` (mov with vector operands): PRMT, as ptxas (``PRMT R0, R1, 0x5410, R2``);
  an element of a 64-bit value is a register of its pair.
* carry chains: ``addc``/``subc`` -> IADD3.CC (IADD.64.CC), ``madc`` -> IMAD.CC (IMAD.64.CC); the IR
  computes a result and its carry-out with two instructions of the same operands, which select to one.

:meth:`half_rule` routes an instruction here (called by ``InstructionSelector.select``), and
:meth:`implements_flag` says which .relu/.NaN/.satfinite modifiers these rules implement.
"""

from __future__ import annotations

from xcc.backend.isa import PT, RZ
from xcc.backend.isel_core import SelectorCore
from xcc.backend.isel_tables import (
    COMPLEMENT,
    FLOAT_CMP,
    MIRROR,
    PRMT_PACK_BYTES,
    PRMT_PACK_LO16,
)
from xcc.backend.minst import Half, Imm, new_vreg
from xcc.ir.core import Const, Instruction
from xcc.ir.types import ptx_type

HALF_TYPES = frozenset({"f16", "bf16", "f16x2", "bf16x2"})
HALF_SCALARS = frozenset({"f16", "bf16"})
# IR ops on values of a half type that the ordinary rules select correctly (bit moves, memory)
_PASSTHROUGH = frozenset({"mov", "selp", "ld", "st", "ld_param", "pack", "unpack", "atom"})  # atom: op_atom (ATOM*.H)
_ARITH = frozenset({"add", "sub", "mul", "fma", "mad", "min", "max", "neg", "abs", "setp", "ex2", "tanh"})
_FLAGS = ("ftz", "sat", "approx", "full", "relu", "NaN", "satfinite", "oob")
_INT_RNDS = ("rni", "rzi", "rmi", "rpi")
# half_rule: IR op -> the half_<rule> that selects it (the others: half_<op>)
_HALF_RULE = {"sub": "add", "mad": "fma", "max": "min", "abs": "neg", "tanh": "mufu", "ex2": "mufu"}
# (op, flag) pairs of the .relu/.NaN modifiers the arithmetic rules implement
_HALF_FLAGS = frozenset({("fma", "relu"), ("fma", "oob"), ("mad", "relu"), ("min", "relu"), ("max", "relu"), ("min", "NaN"),
                         ("max", "NaN")})


def _half_type(name: str) -> bool:
    return name in HALF_TYPES


def _cvt_half(inst: Instruction) -> bool:
    return inst.op == "cvt" and (inst.type.name in HALF_SCALARS or inst.attrs["src"] in HALF_SCALARS)


class HalfSelection(SelectorCore):
    # ----------------------------------------------------------------- routing
    def half_rule(self, inst: Instruction):
        """The selection method for ``inst`` when it is a half-precision operation, else None."""
        if _cvt_half(inst):
            return self.half_cvt
        if inst.type is None or not _half_type(inst.type.name) or inst.op in _PASSTHROUGH:
            return None
        if inst.op in _ARITH:
            return getattr(self, "half_" + _HALF_RULE.get(inst.op, inst.op))
        return self._half_unsupported

    def implements_flag(self, inst: Instruction, flag: str) -> bool:
        """Whether the half rules implement modifier ``flag`` (relu, NaN, satfinite) of ``inst``."""
        if inst.type is None:
            return False
        if _cvt_half(inst):
            return flag in ("relu", "satfinite") and inst.type.name in HALF_SCALARS
        if not _half_type(inst.type.name):
            return False
        return (inst.op, flag) in _HALF_FLAGS

    def _half_unsupported(self, inst):
        raise self.error(f"'{inst.op}.{inst.type}' is not supported by the xg1 backend yet")

    def _half_check(self, inst, allowed: tuple[str, ...], rnd: bool = True) -> None:
        """Refuse a modifier this rule does not implement (never compile it away)."""
        bad = [f for f in _FLAGS if inst.attrs.get(f) and f not in allowed]
        if not rnd and inst.attrs.get("rnd", "rn") != "rn":
            bad.append(inst.attrs["rnd"])
        if bad:
            raise self.error(f"'{inst.op}.{inst.type}' with .{', .'.join(bad)} is not supported by the xg1 "
                             "backend yet (run it with engine='ir')")

    def _hmods(self, inst) -> dict:
        t = inst.type.name
        m = {}
        if t.startswith("bf16"):
            m["type"] = "BF16"
        if t in HALF_SCALARS:
            m["shape"] = "H0"
        rnd = inst.attrs.get("rnd", "rn")
        if rnd != "rn":
            if rnd not in ("rz", "rm", "rp"):
                raise self.error(f"{inst.op}.{rnd}.{t} is not valid")
            m["rnd"] = rnd.upper()
        for f, name in (("ftz", "FTZ"), ("sat", "SAT"), ("relu", "RELU"), ("NaN", "NAN"), ("oob", "OOB")):
            if inst.attrs.get(f):
                m[name] = name
        return m

    # ----------------------------------------------------------------- arithmetic
    def half_add(self, inst):
        self._half_check(inst, ("ftz", "sat"))
        a, b = inst.args
        if inst.op == "add":
            a, b = self._commute(a, b)
        mods = {**self._hmods(inst), **({"NEG_B": "NEG_B"} if inst.op == "sub" else {})}
        self.emit("HADD2", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), mods=mods)

    def half_mul(self, inst):
        self._half_check(inst, ("ftz", "sat"))
        a, b = self._commute(*inst.args)
        self.emit("HMUL2", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), mods=self._hmods(inst))

    def half_fma(self, inst):
        self._half_check(inst, ("ftz", "sat", "relu", "oob"))
        a, b = self._commute(inst.args[0], inst.args[1])
        self.emit("HFMA2", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(inst.args[2]),
                  mods=self._hmods(inst))

    def half_min(self, inst):
        self._half_check(inst, ("ftz", "relu", "NaN"), rnd=False)
        a, b = self._commute(*inst.args)
        self.emit("HMNMX2", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b),
                  mods={**self._hmods(inst), **({"minmax": "MAX"} if inst.op == "max" else {})})

    def half_mufu(self, inst):
        self._half_check(inst, ("ftz", "approx"), rnd=False)
        self.emit("HMUFU", d=self.vreg(inst.result), a=self.reg(inst.args[0]),
                  mods={"fn": inst.op.upper(), **self._hmods(inst)})

    def half_neg(self, inst):
        """neg/abs per element, a NaN giving the canonical 0x7FFF as an H200 does (docs/semantics.md): HMUL2 by
        -1.0 (exact) flips the sign; abs is HMNMX2.MAX of a and -a (+0 over -0; two NaNs the canonical NaN)."""
        self._half_check(inst, ("ftz",), rnd=False)
        mods = self._hmods(inst)
        minus_one = 0xBF80 if mods.get("type") == "BF16" else 0xBC00
        d, a = self.vreg(inst.result), self.reg(inst.args[0])
        neg = new_vreg(1) if inst.op == "abs" else d
        self.emit("HMUL2", d=neg, a=a, b=Imm(minus_one | minus_one << 16), mods=mods)
        if inst.op == "abs":
            self.emit("HMNMX2", d=d, a=a, b=neg, mods={**mods, "minmax": "MAX"})

    def half_setp(self, inst):
        """setp on f16/bf16 (x2: element attrs.half, as the IR splits p|q) -> HSETP2."""
        self._half_check(inst, ("ftz",), rnd=False)
        a, b = inst.args[0], inst.args[1]
        cmp = FLOAT_CMP[inst.attrs["cmp"]]
        if inst.attrs.get("negate"):
            cmp = COMPLEMENT[cmp]
        if isinstance(a, Const) and not isinstance(b, Const):
            a, b, cmp = b, a, MIRROR[cmp]
        mods = {"cmp": cmp}
        if inst.type.name.startswith("bf16"):
            mods["type"] = "BF16"
        if inst.type.bits == 32 and inst.attrs.get("half", 0):
            mods["lane"] = "H1"
        if inst.attrs.get("ftz"):
            mods["FTZ"] = "FTZ"
        ps = (PT, False)
        if "bool" in inst.attrs:
            mods["bool"] = inst.attrs["bool"].upper()
            ps = self.pred_src(inst.args[2])
        self.emit("HSETP2", pd=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), ps=ps, mods=mods)

    # ----------------------------------------------------------------- conversions
    def half_cvt(self, inst):
        dt, st = inst.type, ptx_type(inst.attrs["src"])
        a, d = inst.args[0], self.vreg(inst.result)
        rnd = inst.attrs.get("rnd")
        flags = {name: name for f, name in (("sat", "SAT"), ("relu", "RELU"), ("satfinite", "SATFINITE"))
                 if inst.attrs.get(f)}
        ftz = {"FTZ": "FTZ"} if inst.attrs.get("ftz") else {}
        hname = {"f16": "F16", "bf16": "BF16", "f32": "F32"}
        if dt.is_float and st.is_float:
            if dt == st and not rnd and not flags and not ftz:
                self.alias(inst.result, a)
            elif dt.bits <= 32 and st.bits <= 32:
                self.emit("F2F.16", d=d, a=self.reg(a), mods={"dtype": hname[dt.name], "stype": hname[st.name],
                                                             **({"rnd": rnd.upper()} if rnd else {}), **ftz, **flags})
            elif dt.bits == 64:  # exact widening (a rounding to integral first, in the source format)
                src = self.reg(a)
                if rnd in _INT_RNDS:
                    src = new_vreg(1)
                    self.emit("F2F.16", d=src, a=self.reg(a), mods={"dtype": hname[st.name], "stype": hname[st.name],
                                                                   "rnd": rnd.upper()})
                self.emit("F2F.F64.16", d=d, a=src, mods={"stype": hname[st.name], **flags})
            else:  # f64 -> f16/bf16
                if rnd in _INT_RNDS:
                    raise self.error(f"cvt.{rnd}.{dt}.{st} is not supported by the xg1 backend yet")
                self.emit("F2F.16.F64", d=d, a=self.reg(a),
                          mods={"dtype": hname[dt.name], **({"rnd": rnd.upper()} if rnd and rnd != "rn" else {}),
                                **flags})
            return
        if dt.is_float:  # integer -> f16/bf16
            if rnd in _INT_RNDS:
                raise self.error(f"cvt.{rnd}.{dt}.{st}: an integer rounding mode needs a float source")
            rmod = {"rnd": rnd.upper()} if rnd and rnd != "rn" else {}
            if st.bits == 64:
                self.emit("I2F.16.64", d=d, a=self.reg(a), mods={"dtype": hname[dt.name], **rmod, **flags,
                                                                 **({"type": "S64"} if st.kind == "s" else {})})
            else:
                self.emit("I2F.16", d=d, a=self._int_operand(a, st), mods={
                    "dtype": hname[dt.name], **rmod, **flags, **({"type": "U32"} if st.kind != "s" else {})})
            return
        # f16/bf16 -> integer, saturating (a non-integer rounding mode truncates, as xcc.semantics does)
        r = (rnd if rnd in _INT_RNDS else "rzi").upper()
        if flags.keys() - {"SAT"}:
            raise self.error(f"cvt.{dt}.{st} with .relu/.satfinite is not valid")
        kind = "S" if dt.kind == "s" else "U"
        if dt.bits == 64:
            self.emit("F2I.16.64", d=d, a=self.reg(a), mods={"stype": hname[st.name], "rnd": r,
                                                             **({"type": "S64"} if kind == "S" else {})})
        else:
            self.emit("F2I.16", d=d, a=self.reg(a), mods={"stype": hname[st.name], "rnd": r,
                                                          "dtype": f"{kind}{dt.bits}"})

    # ----------------------------------------------------------------- pack / unpack
    def _pair16(self, lo, hi):
        """A register holding lo[15:0] | hi[15:0] << 16 (lo, hi: registers)."""
        r = new_vreg(1)
        self.emit("PRMT", d=r, a=lo, b=Imm(PRMT_PACK_LO16), c=hi)
        return r

    def _pack32(self, elems: list, w: int):
        """One 32-bit register from 32 // w elements of w bits (zero-extended registers)."""
        regs = [self.reg(e) for e in elems]
        if w == 32:
            return regs[0]
        if w == 16:
            return self._pair16(regs[0], regs[1])
        lo, hi = new_vreg(1), new_vreg(1)  # w == 8: bytes {e0, e1} and {e2, e3}, then the halves
        self.emit("PRMT", d=lo, a=regs[0], b=Imm(PRMT_PACK_BYTES), c=regs[1])
        self.emit("PRMT", d=hi, a=regs[2], b=Imm(PRMT_PACK_BYTES), c=regs[3])
        return self._pair16(lo, hi)

    def op_pack(self, inst):
        t = inst.type
        n = len(inst.args)
        w = t.bits // n
        d = self.vreg(inst.result)
        if t.bits == 64:
            per = n // 2
            for k in (0, 1):
                part = inst.args[k * per:(k + 1) * per]
                if w == 32:
                    self.copy_word(Half(d, k), part[0])
                else:
                    self.emit("MOV", d=Half(d, k), b=self._pack32(part, w))
        elif t.bits == 32:
            if w == 32:
                self.copy(d, inst.args[0])
            elif w == 16:
                self.emit("PRMT", d=d, a=self.reg(inst.args[0]), b=Imm(PRMT_PACK_LO16), c=self.reg(inst.args[1]))
            else:
                self.emit("MOV", d=d, b=self._pack32(list(inst.args), 8))
        elif t.bits == 16 and w == 8:  # byte 1 from e1; bytes 2, 3 are e0's (zero: it is zero-extended)
            self.emit("PRMT", d=d, a=self.reg(inst.args[0]), b=Imm(0x1140), c=self.reg(inst.args[1]))
        else:
            raise self.error(f"pack of {n} elements into .{t} is not supported by the xg1 backend yet")

    def copy_word(self, dst, v):
        """dst (a register or half of a pair) = the 32-bit value v."""
        self.emit("MOV", d=dst, b=self.src_b(v))

    def op_unpack(self, inst):
        """Element attrs.index (of the result's width) of a: PRMT with RZ's zero bytes above it."""
        src, k = inst.args[0], inst.attrs["index"]
        w = inst.result.type.bits
        d = self.vreg(inst.result)
        if inst.type.bits == 64:
            word, k = self.half_reg(src, (k * w) // 32), k % (32 // w)
        else:
            word = self.reg(src)
        if w == 32:
            self.emit("MOV", d=d, b=word)
            return
        nb = w // 8
        sel = 0
        for i in range(4):
            sel |= (k * nb + i if i < nb else 4) << (4 * i)
        self.emit("PRMT", d=d, a=word, b=Imm(sel), c=RZ)

    # ----------------------------------------------------------------- carry chains
    def _carry_sibling(self, inst):
        """The IR instruction computing the other result (value or carry-out) of the same operation."""
        blk = inst.block
        if blk is None:
            return None
        want = not inst.attrs.get("carry")

        def same(x, y):
            return x is y or (isinstance(x, Const) and isinstance(y, Const) and x.type == y.type and x.bits == y.bits)

        for o in blk.instructions:
            if (o is not inst and o.op == inst.op and bool(o.attrs.get("carry")) == want and o.type == inst.type
                    and o.attrs.get("mode") == inst.attrs.get("mode") and len(o.args) == len(inst.args)
                    and all(same(x, y) for x, y in zip(o.args, inst.args))):
                return o
        return None

    def _carry_dests(self, inst):
        """(value register, carry predicate) of inst and its sibling, or None once the pair is selected."""
        done = self.__dict__.setdefault("_carry_done", set())
        if id(inst) in done:
            return None
        sib = self._carry_sibling(inst)
        pair = [inst] + ([sib] if sib is not None else [])
        done.update(id(i) for i in pair)
        value = next((i for i in pair if not i.attrs.get("carry")), None)
        carry = next((i for i in pair if i.attrs.get("carry")), None)
        return (self.vreg(value.result) if value is not None else RZ,
                self.vreg(carry.result) if carry is not None else PT)

    def _carry_add(self, inst, op: str):
        dests = self._carry_dests(inst)
        if dests is None:
            return
        d, pd = dests
        a, b, cin = inst.args
        if op == "ADD":
            a, b = self._commute(a, b)
        mn = "IADD.64.CC" if inst.type.bits == 64 else "IADD3.CC"
        self.emit(mn, d=d, pd=pd, a=self.reg(a), b=self.src_b(b), ps=self.pred_src(cin),
                  mods={"op": op} if op != "ADD" else {})

    def op_addc(self, inst):
        self._carry_add(inst, "ADD")

    def op_subc(self, inst):
        self._carry_add(inst, "SUB")

    def op_madc(self, inst):
        dests = self._carry_dests(inst)
        if dests is None:
            return
        d, pd = dests
        a, b = self._commute(inst.args[0], inst.args[1])
        c, cin = inst.args[2], inst.args[3]
        wide = inst.type.bits == 64
        mods = {}
        if inst.attrs.get("mode") == "hi":
            mods["mode"] = "HI"
        if inst.type.kind == "s":
            mods["type"] = "S64" if wide else "S32"
        self.emit("IMAD.64.CC" if wide else "IMAD.CC", d=d, pd=pd, a=self.reg(a), b=self.src_b(b), c=self.reg(c),
                  ps=self.pred_src(cin), mods=mods)
