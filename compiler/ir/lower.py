"""Lowering of one PTX instruction (names resolved) into IR instructions.

One method per PTX instruction family, dispatched on the base opcode.  An
instruction xcc does not know yet raises :class:`UnsupportedError` at its
place: nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Protocol

from xcc.diagnostics import PtxSemanticError, UnsupportedError
from xcc.frontend import ast
from xcc.frontend.instructions import blackwell_only
from xcc.ir.core import Block, Const, Instruction, Param, Value, Variable
from xcc.ir.lower_async import AsyncLowering
from xcc.ir.lower_b128 import B128Lowering
from xcc.ir.lower_bits import BitsLowering
from xcc.ir.lower_hopper import HopperLowering
from xcc.ir.lower_matrix import MatrixLowering
from xcc.ir.lower_sm90 import Sm90Lowering
from xcc.ir.lower_tensormap import TensormapLowering
from xcc.ir.lower_texture import TextureLowering
from xcc.ir.lower_video import ScalarVideoLowering, SimdVideoLowering, VideoLowering
from xcc.ir.scopes import CC_REG, RegVar
from xcc.ir.types import PRED, ScalarType, bits_type, is_type_name, ptx_type

ROUNDING = ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")
FLOAT_FLAGS = ("ftz", "sat", "approx", "full", "relu", "NaN", "satfinite", "oob")
HALF = frozenset({"f16", "bf16", "f16x2", "bf16x2"})
# Modifiers with a meaning xcc implements only where listed: (opcode, modifier) -> the types allowed.
_LIMITED = {("min", "NaN"): HALF | {"f32"}, ("max", "NaN"): HALF | {"f32"},
            ("min", "relu"): HALF | {"s32"}, ("max", "relu"): HALF | {"s32"}, ("fma", "relu"): HALF,
            ("fma", "oob"): HALF}
_UNSUPPORTED_MODS = frozenset({"xorsign", "abs", "oob", "rs", "rna", "relu", "NaN"})
SPACES = ("global", "shared", "local", "param", "const")
# Hints that change nothing about the result: cache operators, eviction priorities, alignment.
HINTS = frozenset({"nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "uni", "aligned", "sync", "relaxed", "sys",
                   "gpu", "cta", "L1::no_allocate", "L2::64B", "L2::128B", "L2::256B", "weak"})
BINARY = ("add", "sub", "min", "max", "and", "or", "xor", "div", "rem", "shl", "shr")
UNARY = ("neg", "abs", "not", "popc", "clz", "brev", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
SREG_TYPES = {"clock64": "u64", "globaltimer": "u64", "gridid": "u64", "current_graph_exec": "u64"}
# The instructions with a .b128 form, and the xcc.ir.lower_b128 method lowering it.
_B128_FORMS = {"mov": "mov_b128", "ld": "ld_b128", "ldu": "ld_b128", "st": "st_b128", "atom": "atom_b128"}
INT_CMP = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"})
FLOAT_CMP = INT_CMP | {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}


def load_cache_policy(mods) -> str | None:
    """How a load may use the L1, from its PTX qualifiers (PTX ISA, ld: "Cache operators" and the memory
    consistency model): ``"cg"`` (cache in L2, not L1) for ``.cg`` and for strong loads (``.relaxed`` /
    ``.acquire``) at ``.gpu`` or ``.sys`` scope, which must see other SMs' writes; ``"cv"`` (fetch again at
    every access) for ``.cv`` and ``.volatile``; None for ``.ca``, ``.nc``, ``.cs``, ``.lu`` and plain loads,
    which the L1 may serve.  It changes no result, only the cycle model's L1 lookup."""
    ms = set(mods)
    if "cv" in ms or "volatile" in ms:
        return "cv"
    if "cg" in ms or (ms & {"relaxed", "acquire"} and ms & {"gpu", "sys"}):
        return "cg"
    return None


def types_of(mods) -> list[str]:
    return [m for m in mods if is_type_name(m)]


class SsaBuilder(Protocol):
    """What lowering needs from the function being built (:class:`xcc.ir.build.FunctionBuilder`, which
    imports this module: the dependency runs one way): the block being filled, SSA reads and writes of
    PTX registers, and the names in scope."""

    block: Block | None
    local_vars: dict[str, Variable]
    module_vars: dict[str, Variable]
    function_names: frozenset[str]
    param_by_name: dict[str, Param]

    def read(self, var: RegVar, block: Block) -> Value: ...

    def write(self, var: RegVar, block: Block, value: Value) -> None: ...


class InstLowering(MatrixLowering, AsyncLowering, HopperLowering, VideoLowering, ScalarVideoLowering,
                   SimdVideoLowering, BitsLowering, Sm90Lowering, TextureLowering,
                   TensormapLowering, B128Lowering):
    def __init__(self, builder: SsaBuilder):
        self.b = builder
        self.inst: ast.Instruction | None = None

    # ----------------------------------------------------------------- helpers
    def error(self, msg: str, cls=UnsupportedError):
        return cls(msg, self.inst.loc if self.inst is not None else None)

    def emit(self, op: str, type: ScalarType | None, args: list[Value], result_type: ScalarType | None = None,
             **attrs) -> Instruction:
        res = Value(result_type) if result_type is not None else None
        inst = Instruction(op, type, list(args), res, attrs, self.inst.loc, self.inst.debug_loc)
        self.b.block.append(inst)
        return inst

    def read(self, op, type: ScalarType) -> Value:
        """The value of a source operand, read as ``type``."""
        if isinstance(op, RegVar):
            v = self.b.read(op, self.b.block)
            return v
        if isinstance(op, ast.Imm):
            return Const(type, imm_bits(op, type))
        if isinstance(op, ast.SpecialReg):
            name = op.name.lstrip("%") + (f".{op.component}" if op.component else "")
            composed = self.special_composed(name)  # %globaltimer_lo/hi, %pm<n> (xcc.ir.lower_bits)
            if composed is not None:
                return composed
            st = ptx_type(SREG_TYPES.get(op.name.lstrip("%"), "u32"))
            v = self.emit("sreg", st, [], st, name=name).result
            if name == "is_explicit_cluster":  # a .pred register: read as 0/1, then compared
                v = self.emit("setp", st, [v, Const(st, 0)], PRED, cmp="ne").result
            return v
        if isinstance(op, ast.Symbol):
            return self.address_of(op.name)
        if isinstance(op, ast.SymbolOffset):
            return self.symbol_offset(op, type)
        if isinstance(op, ast.Negated):
            v = self.read(op.operand, PRED)
            return self.emit("not", PRED, [v], PRED).result
        raise self.error(f"operand {type_name(op)} is not supported here", PtxSemanticError)

    def address_of(self, name: str) -> Value:
        var = self.b.local_vars.get(name) or self.b.module_vars.get(name)
        if var is None and name in self.b.function_names:  # a function pointer (xcc.ir.funcptr gives its value)
            u64 = ptx_type("u64")
            return self.emit("addr_of", u64, [], u64, symbol=name, space="code").result
        if var is None:
            if name in self.b.param_by_name:  # its param-space address: its offset in the parameter buffer
                return Const(ptx_type("u64"), self.b.param_by_name[name].offset)
            raise self.error(f"use of undeclared name '{name}'", PtxSemanticError)
        t = ptx_type("u32" if var.space == "shared" else "u64")
        return self.emit("addr_of", t, [], t, symbol=var.name, space=var.space).result

    def zero_extend(self, v: Value, t: ScalarType) -> Value:
        """``v`` widened to ``t`` with zero bits above it (a ``mov`` to the wider type), ``v`` itself when it is as
        wide: a 32-bit address where ptxas 13.0 takes one for a 64-bit operand (its SASS zero-extends)."""
        return self.emit("mov", t, [v], t).result if v.type.bits < t.bits else v

    def symbol_offset(self, op: ast.SymbolOffset, type: ScalarType) -> Value:
        """``var+imm`` as a plain operand (``mov.u64 %rd, gbuf+16``), as ptxas 13.0 computes it (sm_90a SASS): the
        address plus imm at the width of the variable's addresses, then zero-extended or truncated to ``type``.
        A .global address is 64-bit (``ULDC.64 UR4, c[0x4][0x0]; UIADD3 UR4, UP0, UR4, -0x8; UIADD3.X UR5, UR5,
        -0x1`` for gbuf+-8); a .shared, .const, .local or .param one is a 32-bit offset in its space
        (``mov.u64 %rd, cbuf+-8`` is 0xfffffff8: ``MOV R4, 0xfffffff8; MOV R5, 0``)."""
        var = self.b.local_vars.get(op.name) or self.b.module_vars.get(op.name)
        if var is None and op.name not in self.b.param_by_name:
            what = "function" if op.name in self.b.function_names else "name"
            raise self.error(f"'{op.name}+{op.offset}': not a variable (a {what})", PtxSemanticError)
        base = self.address_of(op.name)
        wt = ptx_type("u64" if var is not None and var.space == "global" else "u32")
        if base.type.bits != wt.bits:
            base = self.emit("mov", wt, [base], wt).result
        v = self.emit("add", wt, [base, Const(wt, op.offset % (1 << wt.bits))], wt).result
        return v if type.bits == wt.bits else self.emit("mov", type, [v], type).result

    def write(self, dest, value: Value) -> None:
        if isinstance(dest, ast.Sink):
            return
        if not isinstance(dest, RegVar):
            raise self.error("destination must be a register", PtxSemanticError)
        guard = self.inst.guard
        if guard is not None:  # @p d = op(...)  ->  d = selp(new, old, p)
            old = self.b.read(dest, self.b.block)
            p = self.b.read(guard.reg, self.b.block)
            a, b = (old, value) if guard.negated else (value, old)
            value = self.emit("selp", dest.type, [a, b, p], dest.type).result
        if value.type.bits != dest.type.bits and not isinstance(value, Const):
            value = self.emit("mov", dest.type, [value], dest.type).result
        self.b.write(dest, self.b.block, value)

    def _attrs(self, mods) -> dict:
        a = {}
        for m in mods:
            if m in ROUNDING:
                a["rnd"] = m
            elif m in FLOAT_FLAGS:
                a[m] = True
        return a

    # ----------------------------------------------------------------- dispatch
    def lower(self, inst: ast.Instruction) -> None:
        self.inst = inst
        if blackwell_only(inst.opcode, inst.modifiers):  # (xcc check --syntax-only gives the same message)
            raise self.error(f"{_full(inst)} is a Blackwell (sm_100a) instruction that xcc does not support yet")
        if "b128" in inst.modifiers and inst.opcode in _B128_FORMS:  # two 64-bit halves (xcc.ir.lower_b128)
            return getattr(self, _B128_FORMS[inst.opcode])(inst)
        self.refuse_b128(inst)
        method = getattr(self, "op_" + inst.opcode.replace(".", "_"), None)
        if method is None:
            if inst.opcode in BINARY:
                return self.binary(inst)
            if inst.opcode in UNARY:
                return self.unary(inst)
            raise self.error(f"instruction '{_full(inst)}' is not supported yet")
        method(inst)

    def _type(self, inst) -> ScalarType:
        ts = types_of(inst.modifiers)
        if not ts:
            raise self.error(f"'{_full(inst)}' has no type", PtxSemanticError)
        return ptx_type(ts[-1])

    def _check(self, inst, n: int) -> None:
        if len(inst.operands) != n:
            raise self.error(f"'{_full(inst)}' takes {n} operands, got {len(inst.operands)}", PtxSemanticError)
        if "cc" in inst.modifiers:
            raise self.error(f"'{_full(inst)}' (carry chain) is not supported yet")

    def _flags_ok(self, inst, t: ScalarType) -> None:
        """A semantic modifier xcc does not implement for this opcode and type is an error, never ignored."""
        for m in inst.modifiers:
            allowed = _LIMITED.get((inst.opcode, m))
            if allowed is not None and t.name in allowed:
                continue
            if m in _UNSUPPORTED_MODS:
                raise self.error(f"'{_full(inst)}': .{m} is not supported yet")

    def binary(self, inst) -> None:
        self._check(inst, 3)
        t = self._type(inst)
        self._flags_ok(inst, t)
        d, a, b = inst.operands
        bt = ptx_type("u32") if inst.opcode in ("shl", "shr") else t
        v = self.emit(inst.opcode, t, [self.read(a, t), self.read(b, bt)], t, **self._attrs(inst.modifiers))
        self.write(d, v.result)

    def unary(self, inst) -> None:
        self._check(inst, 2)
        t = self._type(inst)
        self._flags_ok(inst, t)
        d, a = inst.operands
        rt = ptx_type("u32") if inst.opcode in ("popc", "clz") else t
        self.write(d, self.emit(inst.opcode, t, [self.read(a, t)], rt, **self._attrs(inst.modifiers)).result)

    def op_mul(self, inst) -> None:
        self._mul(inst, "mul", 3)

    def op_mad(self, inst) -> None:
        if "cc" in inst.modifiers:
            return self._carry(inst, "madc", carry_in=False)
        if self.mad_hi_sat(inst):  # xcc.ir.lower_bits
            return
        self._mul(inst, "mad", 4)

    def _mul(self, inst, op, n) -> None:
        if self.mul_hi16(inst, op, n):  # mul.hi/mad.hi .u16/.s16 (xcc.ir.lower_bits)
            return
        self._check(inst, n)
        t = self._type(inst)
        self._flags_ok(inst, t)
        mode = next((m for m in inst.modifiers if m in ("lo", "hi", "wide")), None)
        if not (t.is_float or t.name in HALF) and mode is None:
            raise self.error(f"'{_full(inst)}' needs .lo, .hi or .wide", PtxSemanticError)
        if mode == "wide" and (t.is_float or t.bits not in (16, 32)):
            raise self.error(f"'{_full(inst)}': .wide needs a 16- or 32-bit integer type", PtxSemanticError)
        wide = ptx_type(f"{t.kind}{t.bits * 2}") if mode == "wide" else t
        args = [self.read(inst.operands[1], t), self.read(inst.operands[2], t)]
        if n == 4:
            args.append(self.read(inst.operands[3], wide))
        attrs = self._attrs(inst.modifiers)
        if mode:
            attrs["mode"] = mode
        self.write(inst.operands[0], self.emit(op, t, args, wide, **attrs).result)

    # ----------------------------------------------------------------- bit fields, bytes, dot products
    def _emit_typed(self, inst, op: str, operand_types: list[ScalarType], rt: ScalarType, t: ScalarType | None = None,
                    **attrs) -> None:
        """d = op(operands...) with each source read as its type in ``operand_types``."""
        self._check(inst, len(operand_types) + 1)
        args = [self.read(o, ot) for o, ot in zip(inst.operands[1:], operand_types)]
        self.write(inst.operands[0], self.emit(op, t or rt, args, rt, **attrs).result)

    def _mode(self, inst, modes, required: bool = True) -> str | None:
        m = next((m for m in inst.modifiers if m in modes), None)
        if m is None and required:
            raise self.error(f"'{_full(inst)}' needs one of {', '.join('.' + x for x in modes)}", PtxSemanticError)
        return m

    def op_bfe(self, inst) -> None:
        t, u32 = self._type(inst), ptx_type("u32")
        self._emit_typed(inst, "bfe", [t, u32, u32], t)

    def op_bfi(self, inst) -> None:
        t, u32 = self._type(inst), ptx_type("u32")
        self._emit_typed(inst, "bfi", [t, t, u32, u32], t)

    def op_bfind(self, inst) -> None:
        t = self._type(inst)
        self._emit_typed(inst, "bfind", [t], ptx_type("u32"), t,
                         **({"shiftamt": True} if "shiftamt" in inst.modifiers else {}))

    def op_bmsk(self, inst) -> None:
        u32 = ptx_type("u32")
        self._emit_typed(inst, "bmsk", [u32, u32], self._type(inst), mode=self._mode(inst, ("clamp", "wrap")))

    def op_prmt(self, inst) -> None:
        from xcc.semantics.integer import PRMT_MODES  # numpy's: imported by the kernels that use prmt only

        b32 = self._type(inst)
        mode = self._mode(inst, tuple(PRMT_MODES), required=False)
        self._emit_typed(inst, "prmt", [b32, b32, b32], b32, **({"mode": mode} if mode else {}))

    def op_shf(self, inst) -> None:
        b32 = self._type(inst)
        self._emit_typed(inst, "shf", [b32, b32, ptx_type("u32")], b32, dir=self._mode(inst, ("l", "r")),
                         mode=self._mode(inst, ("clamp", "wrap")))

    def _dot(self, inst, op: str, **attrs) -> None:
        ts = types_of(inst.modifiers)
        if len(ts) != 2:
            raise self.error(f"'{_full(inst)}' needs an .atype and a .btype", PtxSemanticError)
        rt = ptx_type("s32" if "s32" in ts else "u32")
        self._emit_typed(inst, op, [ptx_type(ts[0]), ptx_type(ts[1]), rt], rt, atype=ts[0], btype=ts[1], **attrs)

    def op_dp4a(self, inst) -> None:
        self._dot(inst, "dp4a")

    def op_dp2a(self, inst) -> None:
        self._dot(inst, "dp2a", mode=self._mode(inst, ("lo", "hi")))

    def op_mul24(self, inst) -> None:
        t = self._type(inst)
        self._emit_typed(inst, "mul24", [t, t], t, mode=self._mode(inst, ("lo", "hi")))

    def op_mad24(self, inst) -> None:
        t = self._type(inst)
        mode = self._mode(inst, ("lo", "hi"))
        sat = "sat" in inst.modifiers
        if sat and (mode != "hi" or t.kind != "s"):
            raise self.error(f"'{_full(inst)}': .sat is defined only for mad24.hi.sat.s32", PtxSemanticError)
        self._emit_typed(inst, "mad24", [t, t, t], t, mode=mode, **({"sat": True} if sat else {}))

    def op_copysign(self, inst) -> None:
        t = self._type(inst)
        self._emit_typed(inst, "copysign", [t, t], t)

    def op_fma(self, inst) -> None:
        self._check(inst, 4)
        t = self._type(inst)
        self._flags_ok(inst, t)
        args = [self.read(o, t) for o in inst.operands[1:]]
        self.write(inst.operands[0], self.emit("fma", t, args, t, **self._attrs(inst.modifiers)).result)

    def op_setp(self, inst) -> None:
        t = self._type(inst)
        cmps = [m for m in inst.modifiers if m in FLOAT_CMP]
        if not cmps:
            raise self.error(f"'{_full(inst)}' has no comparison", PtxSemanticError)
        boolop = next((m for m in inst.modifiers if m in ("and", "or", "xor")), None)
        ops = inst.operands
        if len(ops) != (4 if boolop else 3):
            raise self.error(f"'{_full(inst)}' takes {4 if boolop else 3} operands", PtxSemanticError)
        args = [self.read(ops[1], t), self.read(ops[2], t)]
        attrs = {"cmp": cmps[0], **self._attrs(inst.modifiers)}
        if boolop:
            args.append(self.read(ops[3], PRED))
            attrs["bool"] = boolop
        dest = ops[0]
        if t.name in ("f16x2", "bf16x2"):  # p|q: the comparisons of elements 0 and 1 (PTX ISA 9.7.4.x)
            if not isinstance(dest, ast.Vector):  # one predicate, which ptxas 13.0 takes: element 0's, as p
                # (sm_90a: HSETP2.LT.AND P0, PT, R0.H0_H0, R5.H0_H0, PT; with .and: ..., P0 as the last source)
                self.write(dest, self.emit("setp", t, args, PRED, half=0, **attrs).result)
                return
            if len(dest.elements) != 2:
                raise self.error(f"'{_full(inst)}' needs two destination predicates p|q", PtxSemanticError)
            for k, e in enumerate(dest.elements):
                self.write(e, self.emit("setp", t, args, PRED, half=k, **attrs).result)
            return
        if isinstance(dest, ast.Vector):  # p|q: q is the complement comparison
            p = self.emit("setp", t, args, PRED, **attrs).result
            attrs_q = dict(attrs, negate=True)
            q = self.emit("setp", t, args, PRED, **attrs_q).result
            self.write(dest.elements[0], p)
            self.write(dest.elements[1], q)
            return
        self.write(dest, self.emit("setp", t, args, PRED, **attrs).result)

    def op_set(self, inst) -> None:
        """``set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}`` (PTX ISA 9.7.6.1, 9.7.4.x): each result
        element is "true" (all ones for integer dtypes, 1.0 for float ones) or 0, from ``setp`` and
        ``selp``; for an x2 source, element k of d comes from element k of a and b (packed)."""
        ts = types_of(inst.modifiers)
        if len(ts) != 2:
            raise self.error(f"'{_full(inst)}' needs a destination and a source type", PtxSemanticError)
        dt, st = ptx_type(ts[0]), ptx_type(ts[1])
        cmps = [m for m in inst.modifiers if m in FLOAT_CMP]
        boolop = next((m for m in inst.modifiers if m in ("and", "or", "xor")), None)
        ops = inst.operands
        if not cmps or len(ops) != (4 if boolop else 3):
            raise self.error(f"'{_full(inst)}' needs a comparison and {4 if boolop else 3} operands",
                             PtxSemanticError)
        args = [self.read(ops[1], st), self.read(ops[2], st)]
        attrs = {"cmp": cmps[0], **self._attrs(inst.modifiers)}
        if boolop:
            args.append(self.read(ops[3], PRED))
            attrs["bool"] = boolop
        lanes = 2 if st.name in ("f16x2", "bf16x2") else 1
        if lanes == 2 and dt.name not in ("f16x2", "bf16x2", "u32", "s32"):
            raise self.error(f"'{_full(inst)}': an x2 source needs an x2, .u32 or .s32 destination",
                             PtxSemanticError)
        et = bits_type(dt.bits // lanes)
        true = _true_bits(dt.name, dt.bits // lanes)
        elems = []
        for k in range(lanes):
            p = self.emit("setp", st, args, PRED, **({"half": k} if lanes == 2 else {}), **attrs).result
            elems.append(self.emit("selp", et, [Const(et, true), Const(et, 0), p], et).result)
        v = elems[0] if lanes == 1 else self.emit("pack", dt, elems, dt).result
        self.write(ops[0], v)

    def op_selp(self, inst) -> None:
        self._check(inst, 4)
        t = self._type(inst)
        d, a, b, c = inst.operands
        v = self.emit("selp", t, [self.read(a, t), self.read(b, t), self.read(c, PRED)], t)
        self.write(d, v.result)

    def op_cvt(self, inst) -> None:
        """``cvt``; ``cvt.frnd.{f16x2,bf16x2}.f32 d, a, b`` packs cvt(a) into bits 31:16 and cvt(b) into
        bits 15:0 (PTX ISA 9.7.9.21)."""
        if self.cvt_composed(inst) or self.cvt_tf32(inst):  # cvt.pack, FP8 (xcc.ir.lower_video), tf32 (lower_bits)
            return
        ts = types_of(inst.modifiers)
        if len(ts) != 2:
            raise self.error(f"'{_full(inst)}' needs a destination and a source type", PtxSemanticError)
        dt, st = ptx_type(ts[0]), ptx_type(ts[1])
        for m in ("rs", "rna", "pack"):
            if m in inst.modifiers:
                raise self.error(f"'{_full(inst)}': .{m} is not supported yet")
        attrs = self._attrs(inst.modifiers)
        if (attrs.get("relu") or attrs.get("satfinite")) and dt.name not in HALF:
            raise self.error(f"'{_full(inst)}': .relu and .satfinite are supported for f16/bf16 destinations only")
        if dt.name in ("f16x2", "bf16x2"):
            self._check(inst, 3)
            if st.name != "f32":
                raise self.error(f"'{_full(inst)}': the packing form converts from .f32", PtxSemanticError)
            et = ptx_type(dt.name[:-2])
            hi, lo = (self.emit("cvt", et, [self.read(o, st)], et, src=st.name, **attrs).result
                      for o in inst.operands[1:])
            self.write(inst.operands[0], self.emit("pack", dt, [lo, hi], dt).result)
            return
        self._check(inst, 2)
        v = self.emit("cvt", dt, [self.read(inst.operands[1], st)], dt, src=st.name, **attrs).result
        d = inst.operands[0]
        if dt.kind == "s" and isinstance(d, RegVar) and d.type.bits > dt.bits:
            # a register wider than a signed destination format: chopped, then sign-extended (PTX ISA 9.0 6.5.1,
            # the conversion tables' note 1: "cvt.s16.u32 targeting a 32-bit register ... sign-extends")
            wide = ptx_type(f"s{d.type.bits}")
            v = self.emit("cvt", wide, [v], wide, src=dt.name).result
        self.write(d, v)

    def op_mov(self, inst) -> None:
        """``mov``; with a vector operand it packs (``mov.b32 d, {a, b}``) or unpacks (``mov.b32 {a, b}, d``,
        ``_`` for an element not wanted): element 0 is the least significant (PTX ISA 9.7.9.10)."""
        self._check(inst, 2)
        t = self._type(inst)
        d, a = inst.operands
        if isinstance(d, ast.Vector) and isinstance(a, ast.Vector):
            raise self.error(f"'{_full(inst)}': both operands are vectors", PtxSemanticError)
        vec = a if isinstance(a, ast.Vector) else d if isinstance(d, ast.Vector) else None
        if vec is None:
            s = self.opaque_value(a)  # mov.u64 d, smp / tex: a sampler value or a handle (xcc.ir.lower_texture)
            self.write(d, s if s is not None else self.read(a, t))
            return
        n = len(vec.elements)
        if n < 2 or t.bits % n or t.bits // n < 8 or t.kind == "pred":
            raise self.error(f"'{_full(inst)}': {n} elements do not split .{t}", PtxSemanticError)
        if t.bits > 64:
            raise self.error(f"'{_full(inst)}': {t.bits}-bit packing is not supported yet")
        et = bits_type(t.bits // n)
        if vec is a:  # pack
            elems = []
            for e in a.elements:
                if isinstance(e, ast.Sink):
                    raise self.error(f"'{_full(inst)}': '_' is not a source", PtxSemanticError)
                v = self.read(e, et)
                elems.append(v if v.type.bits == et.bits else self.emit("mov", et, [v], et).result)
            self.write(d, self.emit("pack", t, elems, t).result)
            return
        src = self.read(a, t)  # unpack
        for k, e in enumerate(d.elements):
            if not isinstance(e, ast.Sink):
                self.write(e, self.emit("unpack", t, [src], et, index=k).result)

    # ----------------------------------------------------------------- extended precision (carry chains)
    def op_add(self, inst) -> None:
        if "u16x2" in inst.modifiers or "s16x2" in inst.modifiers:  # xcc.ir.lower_bits
            return self.add16x2(inst)
        if "cc" in inst.modifiers:
            return self._carry(inst, "addc", carry_in=False)
        self.binary(inst)

    def op_sub(self, inst) -> None:
        if "cc" in inst.modifiers:
            return self._carry(inst, "subc", carry_in=False)
        self.binary(inst)

    def op_addc(self, inst) -> None:
        self._carry(inst, "addc", carry_in=True)

    def op_subc(self, inst) -> None:
        self._carry(inst, "subc", carry_in=True)

    def _carry16(self, inst, op: str) -> None:
        """``addc.{u16,s16}`` / ``subc.{u16,s16}`` (no ``.cc``), which ptxas 13.0 takes though the PTX ISA defines
        extended precision for 32/64 bits: the 32-bit instruction on the widened 16-bit values, its low 16 bits
        (sm_90a SASS: ``IADD3.X R7, R4, R7, RZ, P0, !PT`` / ``IADD3.X R7, R4, ~R7, RZ, P0, !PT`` on the 16-bit
        loads, then ``STG.E.U16``): d = a + b + CF, a - b - (1 - CF) mod 2^16; CF is read, not written."""
        t, u32 = self._type(inst), ptx_type("u32")
        a, b = (self.emit("cvt", u32, [self.read(o, t)], u32, src=t.name).result for o in inst.operands[1:])
        r = self.emit(op, u32, [a, b, self.b.read(CC_REG, self.b.block)], u32).result
        self.write(inst.operands[0], self.emit("cvt", t, [r], t, src="u32").result)

    def op_madc(self, inst) -> None:
        self._carry(inst, "madc", carry_in=True)

    def _carry(self, inst, op: str, carry_in: bool) -> None:
        """``add.cc``, ``addc{.cc}``, ``sub.cc``, ``subc{.cc}``, ``mad{.lo,.hi}.cc``, ``madc{.lo,.hi}{.cc}``
        (PTX ISA 9.7.1.x): d = op(a, b[, c], CF) and, with ``.cc``, CF = its carry out.  The
        carry flag is the hidden predicate register :data:`~xcc.ir.scopes.CC_REG`, an SSA value like
        any register (phis where control flow joins; false before any write)."""
        n = 4 if op == "madc" else 3
        if len(inst.operands) != n:
            raise self.error(f"'{_full(inst)}' takes {n} operands, got {len(inst.operands)}", PtxSemanticError)
        t = self._type(inst)
        if t.name in ("u16", "s16") and carry_in and op != "madc" and "cc" not in inst.modifiers:
            return self._carry16(inst, op)
        if t.name not in ("u32", "s32", "u64", "s64"):
            raise self.error(f"'{_full(inst)}': extended-precision arithmetic is defined for .u32, .s32, .u64 "
                             "and .s64", PtxSemanticError)
        for m in inst.modifiers:
            if m not in ("cc", "lo", "hi", t.name):
                raise self.error(f"'{_full(inst)}': .{m} is not supported here", PtxSemanticError)
        attrs = {}
        if op == "madc":
            attrs["mode"] = self._mode(inst, ("lo", "hi"))
        args = [self.read(o, t) for o in inst.operands[1:]]
        # sub.cc is subc.cc with CC.CF = 1: CC.CF holds the carry of a + ~b + CF (xcc.semantics.integer)
        args.append(self.b.read(CC_REG, self.b.block) if carry_in else Const(PRED, int(op == "subc")))
        d = self.emit(op, t, args, t, **attrs).result
        cf = self.emit(op, t, args, PRED, carry=True, **attrs).result if "cc" in inst.modifiers else None
        self.write(inst.operands[0], d)
        if cf is not None:
            self.write(CC_REG, cf)

    def op_cvta(self, inst) -> None:
        self._check(inst, 2)
        t = self._type(inst)
        # .shared::cta and .shared::cluster are the shared window: a distributed shared-memory address is its base
        # plus the shared::cluster address (xcc.semantics.cluster)
        space = self._window_space(inst)
        to_generic = "to" not in inst.modifiers
        if space == "param" and not self.b.ast_fn.is_entry:
            raise self.error("cvta.param in a device function is not supported yet (only a kernel's parameters "
                             "have generic addresses)")
        a = self.zero_extend(self.read(inst.operands[1], t), t)  # cvta.u64 of a .shared variable: 32 bits
        v = self.emit("cvta", t, [a], t, space=space, to_generic=to_generic)
        self.write(inst.operands[0], v.result)

    def op_isspacep(self, inst) -> None:
        """``isspacep.<space> p, a``: ``p = isspacep {space} a`` (a: a 64-bit generic address)."""
        self._check(inst, 2)
        space = self._window_space(inst)
        pred, a = ptx_type("pred"), inst.operands[1]
        # var+imm: ptxas 13.0 takes it at 32 bits, zero-extended (SASS of isspacep.global %p, gbuf+8: ULDC UR4,
        # c[0x4][0x0]; UMOV UR5, URZ; UIADD3 UR4, UR4, 0x8; QSPC.E.G P0, RZ, [RZ.U32+UR4])
        u64 = ptx_type("u64")
        # a 32-bit register too: zero-extended (SASS: IMAD.MOV.U32 R5, RZ, RZ, RZ)
        addr = self.zero_extend(self.read(a, ptx_type("u32") if isinstance(a, ast.SymbolOffset) else u64), u64)
        v = self.emit("isspacep", pred, [addr], pred, space=space)
        self.write(inst.operands[0], v.result)

    def _window_space(self, inst) -> str | None:
        """The state space of ``cvta``/``isspacep`` (``.shared::cta``, ``.shared::cluster``: ``shared``;
        ``.param::entry``: ``param``, a kernel's parameters, PTX ISA 5.1.6.4)."""
        ms = ["shared" if m in ("shared::cta", "shared::cluster") else "param" if m == "param::entry" else m
              for m in inst.modifiers]
        return next((m for m in ms if m in SPACES), None)

    # ----------------------------------------------------------------- memory
    def _space(self, inst) -> str:
        """The state space of a memory instruction; ``.shared::cta`` and ``.shared::cluster`` are ``shared`` (a
        shared::cluster address names its CTA in bits 24-31, xcc.semantics.cluster)."""
        ms = ["shared" if m in ("shared::cta", "shared::cluster") else m for m in inst.modifiers]
        space = next((m for m in ms if m in SPACES), None)
        # A generic access naming a .shared or .local variable is that space's: ptxas 13.0 compiles ld.u32 [sbuf]
        # to LDS [UR4], st to STS, atom/red to ATOMS, exactly as with .shared (sm_90a SASS)
        at = {"ld": 1, "ldu": 1, "atom": 1, "st": 0, "red": 0}.get(inst.opcode)
        if space is None and at is not None and "async" not in ms and len(inst.operands) > at:
            a = inst.operands[at]
            var = (self.b.local_vars.get(a.base.name) or self.b.module_vars.get(a.base.name)
                   if isinstance(a, ast.Address) and isinstance(a.base, ast.Symbol) else None)
            if var is not None and var.space in ("shared", "local"):
                return var.space
        return space or "generic"

    def _vec(self, inst) -> int:
        v = next((m for m in inst.modifiers if m in ("v2", "v4", "v8")), None)
        return int(v[1:]) if v else 1

    def _address(self, op) -> tuple[Value | None, int, str | None]:
        """(base value, offset, parameter name if the address is a kernel parameter)."""
        if not isinstance(op, ast.Address):
            raise self.error("expected an address operand [..]", PtxSemanticError)
        base = op.base
        if isinstance(base, ast.Symbol):
            if base.name in self.b.param_by_name:
                return None, op.offset, base.name
            return self.address_of(base.name), op.offset, None
        if isinstance(base, RegVar):
            return self.b.read(base, self.b.block), op.offset, None
        if base is None:
            return Const(ptx_type("u64"), op.offset), 0, None
        raise self.error("unsupported address operand", PtxSemanticError)

    def _kernel_param_address(self, op) -> bool:
        """Whether ``[op]`` of a ``.param`` access is a run-time address in the kernel's parameters: a register
        (or absolute) address in a kernel, as ``mov.u64 %rd, param; ld.param.u32 %r, [%rd+8]``."""
        return self.b.ast_fn.is_entry and (op.base is None or isinstance(op.base, RegVar))

    def _param_window(self, base: Value) -> Value:
        """The generic address of param-space address ``base`` (its window: docs/isa.md)."""
        u64 = ptx_type("u64")
        if isinstance(base, Const):
            base = Const(u64, base.bits)
        elif base.type.bits != 64:  # a 32-bit param-space address, zero-extended
            base = self.emit("cvt", u64, [base], u64, src=f"u{base.type.bits}").result
        return self.emit("cvta", u64, [base], u64, space="param", to_generic=True).result

    def op_ld(self, inst) -> None:
        inst = self.without_cache_hint(inst)  # the .L2::cache_hint policy operand (xcc.ir.lower_bits)
        self._check(inst, 2)
        t = self._type(inst)
        space = self._space(inst)
        base, off, param = self._address(inst.operands[1])
        if space == "param" and param is None and self._kernel_param_address(inst.operands[1]):
            base, space = self._param_window(base), "generic"
        dests = inst.operands[0].elements if isinstance(inst.operands[0], ast.Vector) else (inst.operands[0],)
        cache = load_cache_policy(inst.modifiers)
        extra = {"cache": cache} if cache else {}
        # the memory-model qualifiers optimisers must honour (xcc.passes.memory_model): never merge such loads
        sem = next((m for m in inst.modifiers if m in ("volatile", "relaxed", "acquire", "sc", "mmio")), None)
        extra.update({"sem": sem} if sem else {}, **({"lu": True} if "lu" in inst.modifiers else {}))
        for k, d in enumerate(dests):
            if isinstance(d, ast.Sink):
                continue
            rt = d.type if isinstance(d, RegVar) else t
            if param is not None:
                p = self.b.param_by_name[param]
                v = self.emit("ld_param", t, [], rt, offset=p.offset + off + k * t.bytes)
            else:
                vec = {"vec": len(dests) * t.bytes} if k == 0 and len(dests) > 1 else {}  # its alignment
                v = self.emit("ld", t, [base], rt, space=space, offset=off + k * t.bytes, **extra, **vec)
            self.write(d, v.result)

    op_ldu = op_ld

    def op_st(self, inst) -> None:
        if "async" in inst.modifiers:  # st.async (xcc.ir.lower_sm90)
            return self.store_async(inst)
        inst = self.without_cache_hint(inst)
        self._check(inst, 2)
        t = self._type(inst)
        space = self._space(inst)
        base, off, param = self._address(inst.operands[0])
        if param is not None or space == "param" and self._kernel_param_address(inst.operands[0]):
            raise self.error("stores to kernel parameters are not supported (they are read-only)")
        srcs = inst.operands[1].elements if isinstance(inst.operands[1], ast.Vector) else (inst.operands[1],)
        sem = next((m for m in inst.modifiers if m in ("volatile", "relaxed", "release", "sc", "mmio")), None)
        for k, s in enumerate(srcs):
            vec = {"vec": len(srcs) * t.bytes} if k == 0 and len(srcs) > 1 else {}  # (PTX: aligned to its size)
            vec.update({"sem": sem} if sem else {})
            self.emit("st", t, [base, self.read(s, t)], None, space=space, offset=off + k * t.bytes, **vec)

    def op_atom(self, inst, has_result: bool = True) -> None:
        if self._vec(inst) > 1:  # vector atomics, sm_90 (xcc.ir.lower_sm90)
            return self.atom_vector(inst, has_result)
        if "L2::cache_hint" in inst.modifiers and "cas" in inst.modifiers:  # ptxas 13.0: an illegal modifier
            raise self.error(f"'{_full(inst)}': atom.cas takes no .L2::cache_hint", PtxSemanticError)
        inst = self.without_cache_hint(inst)
        t = self._type(inst)
        ops = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")
        aop = next((m for m in inst.modifiers if m in ops), None)
        if aop is None:
            raise self.error(f"'{_full(inst)}' has no atomic operation", PtxSemanticError)
        n = (2 if aop != "cas" else 3) + (1 if has_result else 0)
        self._check(inst, n)
        operands = inst.operands if has_result else [ast.Sink(), *inst.operands]
        base, off, param = self._address(operands[1])
        if param is not None or self._space(inst) == "param":
            raise self.error("atomics on kernel parameters are not supported (they are read-only)")
        args = [base] + [self.read(o, t) for o in operands[2:]]
        rt = operands[0].type if isinstance(operands[0], RegVar) else t
        v = self.emit("atom", t, args, rt, space=self._space(inst), offset=off, atom_op=aop)
        self.write(operands[0], v.result)

    def op_red(self, inst) -> None:
        if "async" in inst.modifiers:  # red.async (xcc.ir.lower_sm90)
            return self.reduce_async(inst)
        self.op_atom(inst, has_result=False)

    # ----------------------------------------------------------------- synchronisation and warps
    def op_bar(self, inst) -> None:
        """``bar{.cta}.sync|arrive|red a{, b}`` and ``barrier{.cta}...`` (PTX ISA 9.7.13.1); ``bar.warp.sync
        mask`` (9.7.13.2) only orders the warp's lanes, which execute together here: a warp-scope fence."""
        u32 = ptx_type("u32")
        if "cluster" in inst.modifiers:  # barrier.cluster.arrive / .wait (xcc.ir.lower_hopper)
            self.cluster_barrier(inst)
            return
        if "warp" in inst.modifiers:
            self._check(inst, 1)
            self.read(inst.operands[0], u32)
            self.emit("fence", None, [], scope="warp")
            return
        mode = next((m for m in inst.modifiers if m in ("sync", "arrive", "red")), "sync")
        if mode == "red":  # bar.red.popc.u32 d, a{, b}, {!}c  /  bar.red.and|or.pred p, a{, b}, {!}c
            redop = self._mode(inst, ("popc", "and", "or"))
            if len(inst.operands) not in (3, 4):
                raise self.error(f"'{_full(inst)}' takes 3 or 4 operands", PtxSemanticError)
            d, *ids, c = inst.operands
            rt = u32 if redop == "popc" else PRED
            v = self.emit("bar_red", rt, [self.read(c, PRED), *(self.read(o, u32) for o in ids)], rt, redop=redop)
            self.write(d, v.result)
            return
        if mode == "arrive" and len(inst.operands) != 2:
            raise self.error(f"'{_full(inst)}' needs a barrier and a thread count", PtxSemanticError)
        args = [self.read(o, u32) for o in inst.operands] or [Const(u32, 0)]
        self.emit("bar_sync" if mode == "sync" else "bar_arrive", None, args)

    op_barrier = op_bar

    def op_membar(self, inst) -> None:
        self.emit("fence", None, [], scope=inst.modifiers[0] if inst.modifiers else "gl")

    op_fence = op_membar

    def op_shfl(self, inst) -> None:
        if "sync" not in inst.modifiers and len(inst.operands) == 4:  # deprecated shfl: the full warp, as vote
            inst = dataclasses.replace(inst, operands=[*inst.operands, ast.Imm(0xFFFFFFFF)])
        self._check(inst, 5)
        mode = next((m for m in inst.modifiers if m in ("up", "down", "bfly", "idx")), None)
        u32 = ptx_type("u32")
        d, a, b, c, mask = inst.operands
        args = [self.read(a, u32), self.read(b, u32), self.read(c, u32), self.read(mask, u32)]
        v = self.emit("shfl", u32, args, u32, mode=mode)
        if isinstance(d, ast.Vector):
            pv = self.emit("shfl", u32, args, PRED, mode=mode, valid=True)
            self.write(d.elements[0], v.result)
            self.write(d.elements[1], pv.result)
        else:
            self.write(d, v.result)

    def op_vote(self, inst) -> None:
        # vote without .sync (deprecated, PTX ISA 9.7.13.1): on sm_70+ the vote.sync form over the full warp
        self._check(inst, 3 if "sync" in inst.modifiers else 2)
        mode = next((m for m in inst.modifiers if m in ("all", "any", "uni", "ballot")), None)
        rt = ptx_type("u32") if mode == "ballot" else PRED
        d, a = inst.operands[:2]
        mask = self.read(inst.operands[2], ptx_type("u32")) if len(inst.operands) == 3 else Const(ptx_type("u32"),
                                                                                                  0xFFFFFFFF)
        v = self.emit("vote", rt, [self.read(a, PRED), mask], rt, mode=mode)
        self.write(d, v.result)

    def op_match(self, inst) -> None:
        self._check(inst, 3)
        mode = self._mode(inst, ("any", "all"))
        t, u32 = self._type(inst), ptx_type("u32")
        d, a, mask = inst.operands
        args = [self.read(a, t), self.read(mask, u32)]
        v = self.emit("match", t, args, u32, mode=mode)
        if isinstance(d, ast.Vector):
            if mode != "all" or len(d.elements) != 2:
                raise self.error(f"'{_full(inst)}': only match.all has a predicate destination", PtxSemanticError)
            p = self.emit("match", t, args, PRED, mode=mode, pred=True)
            self.write(d.elements[0], v.result)
            self.write(d.elements[1], p.result)
        else:
            self.write(d, v.result)

    def op_redux(self, inst) -> None:
        self._check(inst, 3)
        op = self._mode(inst, ("add", "min", "max", "and", "or", "xor"))
        t = self._type(inst)
        d, a, mask = inst.operands
        v = self.emit("redux", t, [self.read(a, t), self.read(mask, ptx_type("u32"))], t, redop=op)
        self.write(d, v.result)

    def op_activemask(self, inst) -> None:
        self._check(inst, 1)
        u32 = ptx_type("u32")
        self.write(inst.operands[0], self.emit("activemask", u32, [], u32).result)


    # ----------------------------------------------------------------- calls
    def op_call(self, inst) -> None:
        """``call (r...), f, (a...)``: ``call {callee=f, params=[a...], rets=[r...]}``, where the ``a`` and
        ``r`` are the caller's ``.param`` variables (nvcc's callseq: ``st.param`` into them before,
        ``ld.param`` from them after)."""
        ops = list(inst.operands)
        rets = ops.pop(0).elements if ops and isinstance(ops[0], ast.Vector) else ()
        if not ops:
            raise self.error(f"'{_full(inst)}' names no function", PtxSemanticError)
        target = ops.pop(0)
        args = ops.pop(0).elements if ops and isinstance(ops[0], ast.Vector) else ()
        callee = self.b.signatures.get(target.name) if isinstance(target, ast.Symbol) else None
        moves: list[ast.Instruction] = []  # ld.param of register return values, after the call
        params = self._call_vars(args, "argument", callee.params if callee else None, moves)
        rets = self._call_vars(rets, "return value", callee.return_params if callee else None, moves)
        if isinstance(target, RegVar):  # call through a function pointer: xcc.ir.funcptr expands it
            self.emit("call", None, [self.read(target, ptx_type("u64"))], callee=None, params=params, rets=rets)
        elif not isinstance(target, ast.Symbol):
            raise self.error(f"'{_full(inst)}' calls neither a function nor a register", PtxSemanticError)
        elif target.name in self.b.local_vars or target.name in self.b.module_vars:
            raise self.error(f"'{target.name}' is a variable, not a function", PtxSemanticError)
        else:
            self.emit("call", None, [], callee=target.name, params=params, rets=rets)
        for m in moves:
            self.lower(m)
        self.inst = inst

    def _call_vars(self, ops, what: str, declared: list | None, moves: list) -> list[str]:
        """The caller's ``.param`` variables of a call's arguments or return values; a register or constant
        (passed to a ``.reg`` parameter, PTX ISA 9.0 section 5.1.6.4) goes through a fresh one, stored now
        (an argument) or loaded into the register after the call (appended to ``moves``)."""
        names = []
        for k, o in enumerate(ops):
            var = self.b.local_vars.get(o.name) if isinstance(o, ast.Symbol) else None
            if var is not None and var.space == "param":
                names.append(var.name)
                continue
            p = declared[k] if declared is not None and k < len(declared) else None
            t = ptx_type(p.type) if p is not None and p.space == "reg" else getattr(o, "type", None)
            if t is None or t.kind == "pred" or not (isinstance(o, RegVar) or (isinstance(o, ast.Imm) and
                                                                                what == "argument")):
                raise self.error(f"call {what} {_operand_text(o)} is neither a .param variable nor a register "
                                 "or constant passed to a scalar .reg parameter")
            name = f"__reg_{what[0]}{len(self.b.local_vars)}"
            self.b.local_vars[name] = Variable(name, "param", t.bytes, t.bytes)
            slot = ast.Address(ast.Symbol(name, self.inst.loc))
            mv = ast.Instruction("st" if what == "argument" else "ld", ("param", f"b{t.bits}"),
                                 [slot, o] if what == "argument" else [o, slot], loc=self.inst.loc)
            if what == "argument":
                call = self.inst
                self.lower(mv)
                self.inst = call
            else:
                moves.append(mv)
            names.append(name)
        return names


def _true_bits(dtype: str, bits: int) -> int:
    """What ``set`` writes for true into an element of ``bits`` of ``dtype``: 1.0 for float types, all ones
    for integer ones."""
    one = {"f16": 0x3C00, "f16x2": 0x3C00, "bf16": 0x3F80, "bf16x2": 0x3F80, "f32": 0x3F800000}
    return one.get(dtype, (1 << bits) - 1)


def _operand_text(op) -> str:
    name = getattr(op, "name", None) or getattr(op, "key", None)
    return f"'{name}'" if name else type_name(op)


def _full(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


def type_name(op) -> str:
    return type(op).__name__.lower()


def imm_bits(imm: ast.Imm, t: ScalarType) -> int:
    """The bit pattern of immediate ``imm`` as an operand of type ``t``."""
    if imm.kind == "int":
        if t.is_float:  # an integer literal where a float is expected: its value
            return _float_bits(float(imm.value), t.bits, t.name)
        return imm.value & ((1 << t.bits) - 1) if t.bits > 1 else int(bool(imm.value))
    if not t.is_float and not (t.kind == "b" and t.bits in (32, 64)):  # mov.b32 %r, 0f3F800000 is valid
        raise PtxSemanticError(f"float literal used as a {t} operand", imm.loc)
    if imm.bits == t.bits and t.name != "bf16":
        return imm.value
    value = struct.unpack("<f" if imm.bits == 32 else "<d", imm.value.to_bytes(imm.bits // 8, "little"))[0]
    return _float_bits(value, t.bits, t.name)


def _float_bits(value: float, bits: int, name: str | None = None) -> int:
    """The bit pattern of ``value`` in the float type of ``bits`` (``name`` 'bf16' for bfloat16), rounded to
    nearest."""
    import numpy as np

    from xcc.semantics import from_float
    from xcc.semantics.rounding import FORMATS, round_f64

    if bits == 16:
        return int(round_f64(np.array([value]), FORMATS["bf16" if name == "bf16" else "f16"])[0])
    return int(from_float(np.array([value]), bits)[0])
