"""Lowering of the warp-level matrix instructions (``mma``, ``ldmatrix``, ``wmma``) into IR.

A mixin of :class:`xcc.ir.lower.InstLowering`: one ``op_<opcode>`` method per PTX opcode.  IR values
have one result, so an instruction with ``r`` destination registers becomes ``r`` IR instructions,
``part = 0 .. r-1``, each with every source register as an argument (its executor recomputes what
it needs); ``wmma.store.d`` is one instruction.  What they compute is :mod:`xcc.semantics.matrix`.

* ``mma.sync.aligned.{m16n8k8,m16n8k16}.row.col.dtype.{f16,bf16}.{f16,bf16}.ctype d, a, b, c``
  (.dtype/.ctype .f32 or .f16; .bf16 with .f32 only),
  ``mma.sync.aligned.{m16n8k4,m16n8k8}.row.col.f32.tf32.tf32.f32`` (sm_80 tf32) and
  ``mma.sync.aligned.m16n8k32.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32`` (PTX ISA 9.7.14.5.14)
  and ``mma.sync.aligned.m16n8k32.row.col.dtype.{e4m3,e5m2}.{e4m3,e5m2}.ctype`` (sm_89 FP8; .dtype = .ctype,
  .f32 or .f16; PTX ISA 8.7's ``.m16n8k16`` FP8 form is the m16n8k32 one with a neutral k 16..31, see
  ``_mma_fp8_k16``) -> ``mma {shape, types=d.a.b.c, na, nb, part}`` with args A, B, C registers.
* ``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 r, [p]`` (9.7.14.5.15)
  -> ``ldmatrix {num, trans, space, offset, part}`` with arg p.
* ``wmma.load.{a,b,c}.sync.aligned.{row,col}.m16n16k16{.global,.shared}.type r, [p]{, stride}``,
  ``wmma.mma.sync.aligned.alayout.blayout.m16n16k16.dtype.ctype d, a, b, c`` (f16 inputs) and
  ``wmma.store.d.sync.aligned.layout.m16n16k16{.ss}.type [p], r{, stride}`` (9.7.14.4) ->
  ``wmma_load {frag, layout, space, offset, part}`` (args p, stride), ``mma {shape=m16n16k16}``,
  ``wmma_store`` (args p, stride, D registers).

``mma.sp`` (sparse A) is :mod:`xcc.ir.lower_sparse_mma`'s, ``.f64`` mma :mod:`xcc.ir.lower_dmma`'s, the Volta
quad-pair ``.m8n8k4`` with .f16 A and B :mod:`xcc.ir.lower_mma884`'s, the wmma
shapes ``.m16n16k8`` (tf32), ``.m8n8k4`` (f64), ``.m32n8k16`` and ``.m8n32k16`` (f16) :mod:`xcc.ir.lower_wmma_simt`'s, ``.s4``/``.u4``/``.b1`` mma
:mod:`xcc.ir.lower_subbyte_mma`'s.  Anything else in these families is an
:class:`UnsupportedError` at the instruction.
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.lower_dmma import F64_SHAPES, Float64MmaLowering
from xcc.ir.lower_mma884 import QuadPairMmaLowering
from xcc.ir.lower_sparse_mma import SparseMmaLowering
from xcc.ir.lower_subbyte_mma import SUBBYTE_SHAPES, SubByteMmaLowering
from xcc.ir.lower_wmma_simt import WMMA_SIMT, F32Temp, WmmaSimtLowering
from xcc.ir.scopes import RegVar
from xcc.ir.types import is_type_name, ptx_type

_B32 = "b32"


def _elem_type(m: str) -> bool:
    """Whether modifier ``m`` is a matrix element type: an IR type name, an FP8 format (.e4m3, .e5m2) or .tf32."""
    return is_type_name(m) or m in ("e4m3", "e5m2", "tf32")


def _full(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


def _space(mods) -> str:
    for m in mods:
        if m.startswith("shared"):
            return "shared"
        if m == "global":
            return "global"
        if m in ("local", "const", "param"):
            return m
    return "generic"


class MatrixLowering(SparseMmaLowering, Float64MmaLowering, QuadPairMmaLowering, WmmaSimtLowering,
                     SubByteMmaLowering):
    # ----------------------------------------------------------------- helpers
    def _mx_check(self, inst, known: set[str]) -> None:
        """.sync and .aligned are required; every modifier must be in ``known`` or be a type."""
        for req in ("sync", "aligned"):
            if req not in inst.modifiers:
                raise self.error(f"'{_full(inst)}' without .{req} is not supported")
        extra = [m for m in inst.modifiers if m not in known and not _elem_type(m)]
        if extra:
            raise self.error(f"'{_full(inst)}': {', '.join('.' + m for m in extra)} is not supported")

    def _mx_vector(self, op, n: int, what: str) -> tuple:
        els = op.elements if isinstance(op, ast.Vector) else None
        if els is None or len(els) != n:
            got = len(els) if els is not None else "no vector"
            raise self.error(f"'{_full(self.inst)}': {what} must be a vector of {n} registers, got {got}",
                             PtxSemanticError)
        return els

    def _mx_dests(self, op, n: int, what: str) -> list:
        els = self._mx_vector(op, n, what)
        for d in els:
            if isinstance(d, RegVar) and d.type.bits != 32:
                raise self.error(f"'{_full(self.inst)}': {what} register '{d.key}' is {d.type}, "
                                 "not a 32-bit register", PtxSemanticError)
        return list(els)

    def _mx_emit_parts(self, op: str, dests, args, t, **attrs) -> None:
        """One ``op`` per destination register (``part`` = its position); sinks are skipped."""
        for k, d in enumerate(dests):
            if isinstance(d, ast.Sink):
                continue
            v = self.emit(op, t, args, d.type, part=k, **attrs).result
            if isinstance(d, F32Temp):
                d.value = v
            else:
                self.write(d, v)

    def _mx_regs(self, ops) -> list:
        b32 = ptx_type(_B32)
        return [self.read(o, b32) for o in ops]

    # ----------------------------------------------------------------- mma.sync
    def op_mma(self, inst) -> None:
        if {"sp", "sp::ordered_metadata"} & set(inst.modifiers):  # sparse A (xcc.ir.lower_sparse_mma)
            return self.sparse_mma(inst)
        types = [m for m in inst.modifiers if _elem_type(m) or m in ("s4", "u4", "b1")]
        byte_shape = next((m for m in inst.modifiers if m in ("m16n8k16", "m8n8k16")), None)
        if {"s4", "u4", "b1"} & set(types) or byte_shape and {"s8", "u8"} & set(types):  # xcc.ir.lower_subbyte_mma
            if byte_shape and not {"s4", "u4", "b1"} & set(types):
                return self.subbyte_mma(inst, byte_shape, types)
            shape = next((m for m in inst.modifiers if m in SUBBYTE_SHAPES), None)
            if shape is None or len(types) != 4:
                raise self.error(f"'{_full(inst)}': sub-byte mma takes .m8n8k32, .m16n8k32, .m16n8k64 (.s4/.u4) or "
                                 ".m8n8k128, .m16n8k128, .m16n8k256 (.b1) and .dtype.atype.btype.ctype",
                                 PtxSemanticError)
            return self.subbyte_mma(inst, shape, types)
        if types == ["f64"] * 4:  # double precision: xcc.ir.lower_dmma
            self._mx_check(inst, {"sync", "aligned", "row", "col", "rn", "rz", "rm", "rp", *F64_SHAPES})
            shape = next((m for m in inst.modifiers if m in F64_SHAPES), None)
            rnd = [m for m in inst.modifiers if m in ("rn", "rz", "rm", "rp")]
            if shape is None or [m for m in inst.modifiers if m in ("row", "col")] != ["row", "col"] or len(rnd) > 1:
                raise self.error(f"'{_full(inst)}': .f64 mma takes .m8n8k4, .m16n8k4, .m16n8k8 or .m16n8k16, "
                                 "the layouts .row.col and at most one of .rn, .rz, .rm, .rp", PtxSemanticError)
            return self.f64_mma(inst, shape, rnd[0] if rnd else "rn")
        if "m8n8k4" in inst.modifiers:  # Volta quad pairs: xcc.ir.lower_mma884
            return self.quad_pair_mma(inst)
        shapes = {"m16n8k4", "m16n8k8", "m16n8k16", "m16n8k32"}
        self._mx_check(inst, {"sync", "aligned", "row", "col", "satfinite"} | shapes)
        shape = next((m for m in inst.modifiers if m in shapes), None)
        if shape is None:
            raise self.error(f"'{_full(inst)}': only the shapes .m16n8k4, .m16n8k8, .m16n8k16 and .m16n8k32 "
                             "are supported")
        lays = [m for m in inst.modifiers if m in ("row", "col")]
        if lays != ["row", "col"]:
            raise self.error(f"'{_full(inst)}': .{shape} takes the layouts .row.col", PtxSemanticError)
        types = [m for m in inst.modifiers if _elem_type(m)]
        if len(types) != 4:
            raise self.error(f"'{_full(inst)}' needs .dtype.atype.btype.ctype", PtxSemanticError)
        self._mma(inst, shape, tuple(types), "satfinite" in inst.modifiers)

    def _mma(self, inst, shape: str, types: tuple[str, str, str, str], satfinite: bool, c_values=None,
             dests=None) -> None:
        """``c_values``: the C fragment's values when they are not ``inst``'s C registers; ``dests``: where D goes
        when not to ``inst``'s D registers (see op_wmma)."""
        from xcc.semantics.matrix import ELEM_BITS, MMA_SHAPES  # numpy's: imported by matrix kernels only

        dtype, atype, btype, ctype = types
        if shape == "m16n8k16" and {atype, btype} <= {"e4m3", "e5m2"} and dtype == ctype in ("f32", "f16") \
                and not satfinite:
            return self._mma_fp8_k16(inst, types)
        spec = MMA_SHAPES[shape]
        name = "wmma.mma" if spec.wmma else "mma"
        kinds = {"s8": "int", "u8": "int", "e4m3": "fp8", "e5m2": "fp8"}  # A/B may differ within a kind
        accums = ("s32",) if kinds.get(atype) == "int" else tuple(x for x in spec.accums if x != "s32")
        if atype not in spec.inputs or btype not in spec.inputs or dtype not in accums \
                or ctype not in accums or (atype != btype and kinds.get(atype, atype) != kinds.get(btype, btype)) \
                or (kinds.get(atype) == "fp8" and dtype != ctype) \
                or (atype in ("bf16", "tf32") and (dtype, ctype) != ("f32", "f32")):
            raise self.error(f"{name}.{shape} with .{dtype}.{atype}.{btype}.{ctype} is not supported "
                             f"(inputs {'/'.join(spec.inputs)}, accumulators {'/'.join(spec.accums)})")
        if satfinite and atype not in ("s8", "u8"):
            raise self.error(f"'{_full(inst)}': .satfinite is supported for integer mma only")
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        na, nb = spec.regs("a", atype), spec.regs("b", btype)
        nc, nd = spec.regs("c", ctype), spec.regs("d", dtype)
        args = (self._mx_regs(self._mx_vector(a, na, "A")) + self._mx_regs(self._mx_vector(b, nb, "B"))
                + (self._mx_regs(self._mx_vector(c, nc, "C")) if c_values is None else c_values))
        dests = self._mx_dests(d, nd, "D") if dests is None else dests
        t = ptx_type(dtype if ELEM_BITS[dtype] == 32 else _B32)
        self._mx_emit_parts("mma", dests, args, t, shape=shape, types=".".join(types), na=na, nb=nb,
                            **({"satfinite": True} if satfinite else {}))

    def _f16_fragment_as_f32(self, op) -> list:
        """The 8 elements of a wmma .f16 accumulator fragment (4 .f16x2 registers, element 2j in register j's low
        half) as .f32 values: element i of either accumulator type sits at the same (row, column), so
        ``wmma.mma...f32.f16`` is ``...f32.f32`` on the exactly widened C (one rounding, as xcc's rule wants)."""
        u16, u32, f16, f32 = (ptx_type(t) for t in ("u16", "u32", "f16", "f32"))
        out = []
        for v in self._mx_regs(self._mx_vector(op, 4, "C")):
            for half in (v, self.emit("shr", u32, [v, Const(u32, 16)], u32).result):
                h = self.emit("mov", f16, [self.emit("cvt", u16, [half], u16, src="u32").result], f16).result
                out.append(self.emit("cvt", f32, [h], f32, src="f16").result)
        return out

    def _mma_fp8_k16(self, inst, types: tuple[str, str, str, str]) -> None:
        """``mma.m16n8k16`` with FP8 A and B (PTX ISA 8.7): its fragments are the first halves of m16n8k32's
        (A registers 0, 1 and B register 0 hold k 0..15 in both layouts, 9.7.14.5.10), so it is the m16n8k32 mma
        with k 16..31 of A all -0 (0x80) and of B all +0: each added product is -0, which leaves the exact sum
        and the sign of a zero result as the 16 real products make them (docs/semantics.md's rounding rule)."""
        from xcc.semantics.matrix import MMA_SHAPES

        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        spec = MMA_SHAPES["m16n8k32"]
        dtype, atype, btype, ctype = types
        nc, nd = spec.regs("c", ctype), spec.regs("d", dtype)
        b32 = ptx_type(_B32)
        args = (self._mx_regs(self._mx_vector(a, 2, "A")) + [Const(b32, 0x80808080)] * 2
                + self._mx_regs(self._mx_vector(b, 1, "B")) + [Const(b32, 0)]
                + self._mx_regs(self._mx_vector(c, nc, "C")))
        t = ptx_type(dtype if dtype == "f32" else _B32)
        self._mx_emit_parts("mma", self._mx_dests(d, nd, "D"), args, t, shape="m16n8k32", types=".".join(types),
                            na=spec.regs("a", atype), nb=spec.regs("b", btype))

    # ----------------------------------------------------------------- ldmatrix
    def op_ldmatrix(self, inst) -> None:
        nums = {"x1": 1, "x2": 2, "x4": 4}
        self._mx_check(inst, {"sync", "aligned", "m8n8", "trans", "shared", "shared::cta"} | set(nums))
        if "m8n8" not in inst.modifiers or "b16" not in inst.modifiers:
            raise self.error(f"'{_full(inst)}': only ldmatrix.m8n8 with .b16 elements is supported")
        num = next((nums[m] for m in inst.modifiers if m in nums), None)
        if num is None:
            raise self.error(f"'{_full(inst)}' needs .x1, .x2 or .x4", PtxSemanticError)
        if len(inst.operands) != 2:
            raise self.error(f"'{_full(inst)}' takes 2 operands (r, [p])", PtxSemanticError)
        dests = self._mx_dests(inst.operands[0], num, "the destination")
        base, off, param = self._address(inst.operands[1])
        if param is not None:
            raise self.error(f"'{_full(inst)}' from a kernel parameter is not supported", PtxSemanticError)
        self._mx_emit_parts("ldmatrix", dests, [base], ptx_type("b16"), num=num, trans="trans" in inst.modifiers,
                            space=_space(inst.modifiers), offset=off)

    # ----------------------------------------------------------------- wmma
    def op_wmma(self, inst) -> None:
        verb = inst.modifiers[0] if inst.modifiers else ""
        simt = next((m for m in inst.modifiers if m in WMMA_SIMT), None)
        if simt is None and "m16n16k16" in inst.modifiers and {"s8", "u8", "s32"} & set(inst.modifiers):
            simt = "m16n16k16.int"  # integer m16n16k16
        if simt in ("m32n8k16", "m8n32k16") and {"s8", "u8", "s32"} & set(inst.modifiers):
            simt += ".int"
        if simt is not None and verb in ("load", "store", "mma"):  # tf32 and f64 shapes: xcc.ir.lower_wmma_simt
            return self.wmma_simt(inst, verb, simt)
        if verb == "mma":
            self._mx_check(inst, {"mma", "sync", "aligned", "row", "col", "m16n16k16"})
            lays = [m for m in inst.modifiers if m in ("row", "col")]
            types = [m for m in inst.modifiers if is_type_name(m)]
            if "m16n16k16" not in inst.modifiers or len(lays) != 2:
                raise self.error(f"'{_full(inst)}': only wmma.mma.alayout.blayout.m16n16k16 is supported")
            if len(types) == 4 and types[1:3] == ["bf16", "bf16"]:  # wmma.mma...m16n16k16.f32.bf16.bf16.f32
                return self._mma(inst, "m16n16k16", tuple(types), False)
            if len(types) != 2:
                raise self.error(f"'{_full(inst)}': only .f16 inputs (wmma.mma...dtype.ctype) and "
                                 ".f32.bf16.bf16.f32 are supported")
            if types == ["f16", "f32"] and len(inst.operands) == 4:  # the .f32 mma, then to f16 (_f16_from_f32_d)
                temps = [F32Temp() for _ in range(8)]
                self._mma(inst, "m16n16k16", ("f32", "f16", "f16", "f32"), False, dests=temps)
                return self._f16_from_f32_d(inst.operands[0], temps)
            if types == ["f32", "f16"] and len(inst.operands) == 4:  # .f16 C widened exactly: the .f32.f32 mma
                return self._mma(inst, "m16n16k16", ("f32", "f16", "f16", "f32"), False,
                                 self._f16_fragment_as_f32(inst.operands[3]))
            return self._mma(inst, "m16n16k16", (types[0], "f16", "f16", types[1]), False)
        if verb not in ("load", "store"):
            raise self.error(f"'{_full(inst)}' is not supported")
        frags = ("a", "b", "c") if verb == "load" else ("d",)
        self._mx_check(inst, {verb, *frags, "sync", "aligned", "row", "col", "m16n16k16", "global", "shared",
                              "shared::cta"})
        frag = inst.modifiers[1] if len(inst.modifiers) > 1 else ""
        lay = next((m for m in inst.modifiers if m in ("row", "col")), None)
        types = [m for m in inst.modifiers if is_type_name(m)]
        if frag not in frags or lay is None or "m16n16k16" not in inst.modifiers or len(types) != 1:
            raise self.error(f"'{_full(inst)}': only wmma.{verb}.{'/'.join(frags)}.layout.m16n16k16.type "
                             "is supported")
        etype = types[0]
        allowed = ("f16", "bf16") if frag in "ab" else ("f16", "f32")
        if etype not in allowed:
            raise self.error(f"'{_full(inst)}': .{etype} {('A/B' if frag in 'ab' else 'accumulator')} fragments "
                             f"are not supported (only {'/'.join('.' + a for a in allowed)})")
        ops = inst.operands
        if len(ops) not in (2, 3):
            raise self.error(f"'{_full(inst)}' takes 2 or 3 operands", PtxSemanticError)
        u32 = ptx_type("u32")
        stride = self.read(ops[2], u32) if len(ops) == 3 else Const(u32, 16)
        addr = ops[1] if verb == "load" else ops[0]
        base, off, param = self._address(addr)
        if param is not None:
            raise self.error(f"'{_full(inst)}' on a kernel parameter is not supported", PtxSemanticError)
        from xcc.semantics.matrix import MMA_SHAPES

        spec = MMA_SHAPES["m16n16k16"]
        nregs = spec.regs(frag, etype)
        attrs = dict(frag=frag, layout=lay, space=_space(inst.modifiers), offset=off)
        if verb == "load":
            dests = self._mx_dests(ops[0], nregs, f"the {frag.upper()} fragment")
            self._mx_emit_parts("wmma_load", dests, [base, stride], ptx_type(etype), **attrs)
        else:
            regs = self._mx_regs(self._mx_vector(ops[1], nregs, "the D fragment"))
            self.emit("wmma_store", ptx_type(etype), [base, stride, *regs], None, **attrs)
