"""Lowering of the asynchronous copy and warpgroup instructions (``cp.async``, ``wgmma``) into IR.

A mixin of :class:`xcc.ir.lower.InstLowering`: one ``op_<opcode>`` method per PTX opcode.

* ``cp.async.{ca,cg}.shared{::cta}.global [d], [s], cp-size{, src-size | ignore-src}{, cache-policy}`` ->
  ``cp_async(d, s, src-size)`` (``ignore-src`` becomes ``src-size = ignore-src ? 0 : cp-size``);
  ``cp.async.commit_group`` -> ``cp_async_commit``; ``cp.async.wait_group N`` / ``wait_all`` ->
  ``cp_async_wait {n, all}`` (PTX ISA 9.7.9.25).  A guarded ``cp.async`` is branched around (it is
  effectful, :data:`xcc.ir.build.EFFECTFUL`).  ``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]``
  (9.7.9.25.3.3) -> ``cp_async_arrive {noinc}``: the thread's pending copies are performed, then the arrive-on
  (:func:`xcc.semantics.mbarrier.copy_arrive`).
* ``wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} {d...}, a-desc, b-desc, scale-d,
  imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b`` and (FP8) ``...m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2} {d...},
  a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b`` (trans 0) and ``...m64nNk8.f32.tf32.tf32`` (the same
  operands) and ``...m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite} {d...}, a-desc, b-desc, scale-d`` -> one ``wgmma``
  per accumulator register (``part``),
  each reading its own register of C (all are read before any is written).  With A in registers (``{a0, a1, a2,
  a3}`` in place of a-desc, no imm-trans-a) a part's A operand is the pair ``a[h] | a[h+2] << 32`` of its half
  ``h = (part/2)%2`` (``attrs.a_regs``; :func:`xcc.semantics.wgmma.register_a`); ``wgmma.mma_async.sp`` (m64nNk32
  .f16/.bf16, m64nNk16 .tf32, m64nNk64 .e4m3/.e5m2/.s8/.u8) ``d, a, b-desc, sp-meta, sp-sel, scale-d, ...`` -> the
  same with ``attrs.sparse``, ``sp_sel`` and the metadata register a fifth arg (:func:`xcc.semantics.wgmma.sparse_a`).  ``wgmma.fence``,
  ``commit_group``, ``wait_group N`` -> ``wgmma_sync {kind, n}`` (PTX ISA 9.7.15).
* ``fence.proxy.async`` needs nothing here: :meth:`op_fence` (= ``op_membar``) makes it a ``fence``, and in
  the interpreter's model generic-proxy writes are already visible to the async proxy (``wgmma`` reads
  shared memory when it executes), so it orders nothing more than any fence.
"""

from __future__ import annotations

import itertools
import re

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.scopes import RegVar
from xcc.ir.types import PRED, ptx_type

CP_SIZES = (4, 8, 16)
_CP_COPY_MODS = frozenset({"async", "ca", "cg", "shared", "shared::cta", "global", "L2::cache_hint", "L2::64B",
                           "L2::128B", "L2::256B"})
_WGMMA_SHAPE = re.compile(r"m64n(\d+)k(8|16|32|64|256)$")
_WGMMA_TYPES = ("f16", "bf16")
_WGMMA_FP8 = ("e4m3", "e5m2")
_wgmma_ids = itertools.count(1)


def _text(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class AsyncLowering:
    # ----------------------------------------------------------------- cp.async
    def op_cp(self, inst) -> None:
        ms = inst.modifiers
        if ms[:2] == ("async", "bulk") and "tensor" not in ms and "prefetch" not in ms:
            return self._cp_bulk(inst)  # xcc.ir.lower_hopper
        if ms[:3] == ("async", "bulk", "tensor") and "prefetch" not in ms:
            return self._cp_tensor(inst)  # xcc.ir.lower_hopper
        if ms[:3] == ("reduce", "async", "bulk") and "tensor" not in ms:
            return self._cp_reduce_bulk(inst)  # xcc.ir.lower_hopper
        if ms[:4] == ("reduce", "async", "bulk", "tensor"):
            return self._cp_reduce_tensor(inst)  # xcc.ir.lower_hopper
        if ms[:3] == ("async", "bulk", "prefetch"):
            return self._cp_prefetch(inst)  # xcc.ir.lower_hopper
        if ms[:3] == ("async", "mbarrier", "arrive"):
            return self._cp_mbarrier_arrive(inst)
        if "async" not in ms or any(m in ms for m in ("bulk", "tensor", "mbarrier", "reduce", "arrive")):
            raise self.error(f"instruction '{_text(inst)}' is not supported yet")
        if "commit_group" in ms or "wait_all" in ms:
            self._cp_operands(inst, 0)
            if "commit_group" in ms:
                self.emit("cp_async_commit", None, [])
            else:
                self.emit("cp_async_wait", None, [], n=0, all=True)
            return
        if "wait_group" in ms:
            self._cp_operands(inst, 1)
            # ptxas 13.0 (sm_90a SASS) waits with DEPBAR.LE SB0, N for 0 <= N <= 63 and DEPBAR.LE SB0, 0x3f (its
            # 6-bit field's largest count) for any other N, negative ones included: at most 63 groups pending
            n = self._imm(inst.operands[0], "N", -(1 << 63))
            self.emit("cp_async_wait", None, [], n=n if 0 <= n <= 63 else 63)
            return
        self._cp_copy(inst)

    def _cp_mbarrier_arrive(self, inst) -> None:
        """``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]`` -> ``cp_async_arrive``."""
        extra = [m for m in inst.modifiers[3:] if m not in ("noinc", "shared", "shared::cta", "b64")]
        if extra or "b64" not in inst.modifiers:
            raise self.error(f"'{_text(inst)}': expected cp.async.mbarrier.arrive{{.noinc}}{{.shared{{::cta}}}}.b64",
                             PtxSemanticError)
        self._cp_operands(inst, 1)
        base, off = self._hp_shared(inst, inst.operands[0])
        self.emit("cp_async_arrive", None, [base], offset=off, noinc="noinc" in inst.modifiers)

    def _cp_operands(self, inst, n: int) -> None:
        if len(inst.operands) != n:
            raise self.error(f"'{_text(inst)}' takes {n} operand(s), got {len(inst.operands)}", PtxSemanticError)

    def _imm(self, op, what: str, lo: int) -> int:
        if not isinstance(op, ast.Imm) or op.kind != "int" or op.value < lo:
            raise self.error(f"'{_text(self.inst)}': {what} must be an integer constant >= {lo}", PtxSemanticError)
        return op.value

    def _cp_copy(self, inst) -> None:
        ms = inst.modifiers
        extra = [m for m in ms if m not in _CP_COPY_MODS]
        if extra or "shared" not in ms and "shared::cta" not in ms or "global" not in ms:
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (cp.async copies global to "
                             ".shared::cta memory)")
        if ms.index("global") < next(k for k, m in enumerate(ms) if m in ("shared", "shared::cta")):
            raise self.error(f"'{_text(inst)}': state space incorrect (ptxas 13.0): the destination's space comes "
                             "first, cp.async.ca.shared.global", PtxSemanticError)
        ops = list(inst.operands)
        if "L2::cache_hint" in ms:  # the trailing 64-bit cache-policy operand: only a hint
            ops = ops[:-1]
        if not 3 <= len(ops) <= 4:
            raise self.error(f"'{_text(inst)}' takes [dst], [src], cp-size and an optional src-size or "
                             "ignore-src", PtxSemanticError)
        cp = self._imm(ops[2], "cp-size", 0)
        if cp not in CP_SIZES or "cg" in ms and cp != 16:
            raise self.error(f"'{_text(inst)}': cp-size must be {'16' if 'cg' in ms else '4, 8 or 16'}, not {cp}",
                             PtxSemanticError)
        dst, doff, dparam = self._address(ops[0])
        src, soff, sparam = self._address(ops[1])
        if dparam is not None or sparam is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a shared or global address",
                             PtxSemanticError)
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        if not isinstance(src, Const):  # ptxas 13.0 zero-extends a 32-bit register here
            src = self.zero_extend(src, u64)  # (sm_90a SASS: LDGSTS.E.128 [R0+0x1], [R0.U32+0x2])
        size = Const(u32, cp)
        if len(ops) == 4:
            last = ops[3]
            if isinstance(last, ast.Negated) or isinstance(last, RegVar) and last.type.kind == "pred":
                ignore = self.read(last, PRED)  # ignore-src: src-size = ignore-src ? 0 : cp-size
                size = self.emit("selp", u32, [Const(u32, 0), Const(u32, cp), ignore], u32).result
            else:
                size = self.read(last, u32)
        self.emit("cp_async", None, [dst, src, size], cp_size=cp, dst_offset=doff, src_offset=soff,
                  cache="cg" if "cg" in ms else "ca")

    # ----------------------------------------------------------------- wgmma
    def op_wgmma(self, inst) -> None:
        ms = inst.modifiers
        if inst.guard is not None:
            raise self.error(f"a guarded '{_text(inst)}' is not supported (wgmma is executed by the whole "
                             "warpgroup)")
        kind = next((m for m in ms if m in ("fence", "commit_group", "wait_group", "mma_async")), None)
        if kind is None or "sp" in ms and kind != "mma_async":
            raise self.error(f"instruction '{_text(inst)}' is not supported yet")
        if kind == "mma_async":
            return self._wgmma_mma(inst)
        self._cp_operands(inst, 1 if kind == "wait_group" else 0)
        n = self._imm(inst.operands[0], "N", 0) if kind == "wait_group" else 0
        self.emit("wgmma_sync", None, [], kind=kind, n=n)

    def _wgmma_mma(self, inst) -> None:
        ms = inst.modifiers
        shape = next((m for m in ms if m.startswith("m64n")), "")
        m = _WGMMA_SHAPE.match(shape)
        types = [x for x in ms if x in ("f32", "f16", "bf16", "tf32", "e4m3", "e5m2", "s32", "u8", "s8", "b1")]
        n = int(m.group(1)) if m else 0
        fp8 = len(types) == 3 and types[1] in _WGMMA_FP8 and types[2] in _WGMMA_FP8
        tf32 = types == ["f32", "tf32", "tf32"]
        sparse = "sp" in ms  # wgmma.mma_async.sp: A compressed, K doubled (xcc.semantics.wgmma.sparse_a)
        if len(types) == 3 and types[0] == "s32":  # integer: wgmma.mma_async{.sp}...s32.{s8,u8}.{s8,u8}
            return self._wgmma_int(inst, m, types, sparse)
        f16acc = len(types) == 3 and types[0] == "f16" and (fp8 or types[1:] == ["f16", "f16"])
        dense_k = 32 if fp8 else 8 if tf32 else 16
        if not m or not (8 <= n <= 256 and n % 8 == 0) or len(types) != 3 or not (types[0] == "f32" or f16acc) \
                or not (fp8 or tf32 or types[1] == types[2] and types[1] in _WGMMA_TYPES) or "satfinite" in ms \
                or m.group(2) != str(dense_k * (2 if sparse else 1)):
            raise self.error(f"'{_text(inst)}' is not supported yet (supported: m64nNk16 with an f32 "
                             "accumulator and f16 or bf16 A and B, or an f16 accumulator and f16 A and B; "
                             "m64nNk32 with an f32 or f16 accumulator and e4m3/e5m2 A and B; m64nNk8 .f32.tf32.tf32; "
                             "sparse .sp: the same with K doubled)")
        ops = list(inst.operands)
        meta, sel = self._wgmma_sp_operands(inst, ops, (0,) if fp8 else (0, 1)) if sparse else (None, None)
        a_regs = len(ops) > 1 and isinstance(ops[1], ast.Vector)
        a_what = "{a0, a1, a2, a3}" if a_regs else "a-desc"
        if fp8 or tf32:  # no imm-trans operands: both K-major
            if len(ops) != 6:
                raise self.error(f"'{_text(inst)}' takes d, {a_what}, b-desc, scale-d, imm-scale-a and imm-scale-b, "
                                 f"got {len(ops)} operands", PtxSemanticError)
            ops += [ast.Imm(0, "int"), ast.Imm(0, "int")]
        elif a_regs:  # A in registers: no imm-trans-a
            if len(ops) != 7:
                raise self.error(f"'{_text(inst)}' takes d, {a_what}, b-desc, scale-d, imm-scale-a, imm-scale-b and "
                                 f"imm-trans-b, got {len(ops)} operands", PtxSemanticError)
            ops.insert(6, ast.Imm(0, "int"))
        if len(ops) != 8:
            raise self.error(f"'{_text(inst)}' takes d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, "
                             f"imm-trans-a and imm-trans-b, got {len(ops)} operands", PtxSemanticError)
        d, nregs = ops[0], n // 4 if f16acc else n // 2
        if not isinstance(d, ast.Vector) or len(d.elements) != nregs:
            raise self.error(f"'{_text(inst)}' needs {{}} with {nregs} {'f16x2' if f16acc else 'f32'} accumulator "
                             "registers", PtxSemanticError)
        imms = []
        for op, what, allowed in ((ops[4], "imm-scale-a", (1, -1)), (ops[5], "imm-scale-b", (1, -1)),
                                  (ops[6], "imm-trans-a", (0, 1)), (ops[7], "imm-trans-b", (0, 1))):
            if not isinstance(op, ast.Imm) or op.kind != "int" or op.value not in allowed:
                raise self.error(f"'{_text(inst)}': {what} must be {' or '.join(map(str, allowed))}",
                                 PtxSemanticError)
            imms.append(op.value)
        f32, u64, u32 = ptx_type("f32"), ptx_type("u64"), ptx_type("u32")
        cs = [self.read(r, u32 if f16acc else f32) for r in d.elements]  # every C register before any D is written
        da, db, scale_d = self._wgmma_a(ops[1]), self.read(ops[2], u64), self.read(ops[3], PRED)
        sp = [self.read(meta, u32)] if sparse else []
        attrs = dict(n=n, atype=types[1], btype=types[2], scale_a=imms[0], scale_b=imms[1], trans_a=imms[2],
                     trans_b=imms[3], wgmma_id=next(_wgmma_ids), **({"acc": "f16"} if f16acc else {}),
                     **({"a_regs": True} if a_regs else {}), **({"sparse": True, "sp_sel": sel.value} if sparse else {}))
        if f16acc:  # element k from the packed register k / 2 (its half k % 2), the halves packed back
            halves = [self.emit("wgmma", u32, [cs[k // 2], da[(k // 2) % 2], db, scale_d, *sp], u32, part=k,
                                **attrs).result for k in range(n // 2)]
            parts = [self.emit("or", u32, [lo, self.emit("shl", u32, [hi, Const(u32, 16)], u32).result], u32).result
                     for lo, hi in zip(halves[::2], halves[1::2])]
        else:
            parts = [self.emit("wgmma", f32, [c, da[(k // 2) % 2], db, scale_d, *sp], f32, part=k, **attrs).result
                     for k, c in enumerate(cs)]
        for reg, v in zip(d.elements, parts):
            self.write(reg, v)

    def _wgmma_a(self, op) -> tuple:
        """The A operand each half of the parts reads (part k: element ``(k/2)%2``): the u64 descriptor for both,
        or, with A in registers ``{a0, a1, a2, a3}`` (32-bit registers or immediates), the u64 pairs a0|a2<<32 and
        a1|a3<<32 (:func:`xcc.semantics.wgmma.register_a`: a part reads only the rows of its half)."""
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        if not isinstance(op, ast.Vector):
            desc = self.read(op, u64)
            return desc, desc
        if len(op.elements) != 4:
            raise self.error(f"'{_text(self.inst)}': A in registers must be a vector of 4 .b32 registers, got "
                             f"{len(op.elements)}", PtxSemanticError)
        for r in op.elements:
            if not (isinstance(r, RegVar) and r.type.bits == 32 or isinstance(r, ast.Imm) and r.kind == "int"):
                what = f"register '{r.key}' is {r.type}" if isinstance(r, RegVar) else (
                    "a float literal" if isinstance(r, ast.Imm) else f"a {type(r).__name__.lower()}")
                raise self.error(f"'{_text(self.inst)}': A in registers takes 32-bit registers, {what}",
                                 PtxSemanticError)
        regs = [self.read(r, u32) for r in op.elements]
        return tuple(self.emit("pack", u64, [regs[h], regs[h + 2]], u64).result for h in (0, 1))

    def _wgmma_sp_operands(self, inst, ops: list, sels: tuple) -> tuple:
        """Take sp-meta and sp-sel out of ``ops`` (d, a, b-desc, sp-meta, sp-sel, scale-d, ...: the rest as the dense
        form's); sp-sel must be a constant of ``sels`` (ptxas 13.0: 0 or 1 for f16/bf16/tf32, 0 for 8-bit types)."""
        if len(ops) < 5:
            raise self.error(f"'{_text(inst)}' takes d, a, b-desc, sp-meta, sp-sel, scale-d, ..., got {len(ops)} "
                             "operands", PtxSemanticError)
        meta, sel = ops.pop(3), ops.pop(3)
        if not isinstance(sel, ast.Imm) or sel.kind != "int" or sel.value not in sels:
            what = "the constant 0 or 1 (the pair of threads of each quad that holds the metadata)" if len(sels) > 1 \
                else "the constant 0 for 8-bit types"
            raise self.error(f"'{_text(inst)}': sp-sel must be {what}", PtxSemanticError)
        return meta, sel

    def _wgmma_int(self, inst, m, types, sparse: bool = False) -> None:
        """``wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite} d, a-desc, b-desc, scale-d`` and
        ``...m64nNk256.s32.b1.b1.and.popc``: one ``wgmma`` per .s32 accumulator register (``attrs.acc = s32``), both
        operands K-major; ``wgmma.mma_async.sp...m64nNk64.s32.{s8,u8}.{s8,u8}{.satfinite} d, a, b-desc, sp-meta, 0,
        scale-d``: the same with ``attrs.sparse`` and the metadata register a fifth arg."""
        n = int(m.group(1)) if m else 0
        b1 = types[1:] == ["b1", "b1"]
        if not m or m.group(2) != ("256" if b1 else "64" if sparse else "32") or not (8 <= n <= 256 and n % 8 == 0) \
                or not (b1 or types[1] in ("s8", "u8") and types[2] in ("s8", "u8")) or b1 and sparse \
                or b1 and ("and" not in inst.modifiers or "popc" not in inst.modifiers or "satfinite" in inst.modifiers) \
                or not b1 and ("and" in inst.modifiers or "popc" in inst.modifiers):
            raise self.error(f"'{_text(inst)}' is not supported yet (integer wgmma: m64nNk32.s32 with .s8/.u8 A and B, "
                             "or m64nNk256.s32.b1.b1.and.popc; sparse .sp m64nNk64.s32 with .s8/.u8 A and B)")
        ops = list(inst.operands)
        meta, sel = self._wgmma_sp_operands(inst, ops, (0,)) if sparse else (None, None)
        if len(ops) != 4:
            a_what = "{a0, a1, a2, a3}" if len(ops) > 1 and isinstance(ops[1], ast.Vector) else "a-desc"
            raise self.error(f"'{_text(inst)}' takes d, {a_what}, b-desc and scale-d, got {len(ops)} operands",
                             PtxSemanticError)
        d = ops[0]
        if not isinstance(d, ast.Vector) or len(d.elements) != n // 2:
            raise self.error(f"'{_text(inst)}' needs {{}} with {n // 2} .s32 accumulator registers", PtxSemanticError)
        s32, u64 = ptx_type("s32"), ptx_type("u64")
        cs = [self.read(r, s32) for r in d.elements]
        da, db, scale_d = self._wgmma_a(ops[1]), self.read(ops[2], u64), self.read(ops[3], PRED)
        flags = {"satfinite": "satfinite" in inst.modifiers, "a_regs": isinstance(ops[1], ast.Vector),
                 "sparse": sparse}
        sp = [self.read(meta, ptx_type("u32"))] if sparse else []
        attrs = dict(n=n, atype=types[1], btype=types[2], scale_a=1, scale_b=1, trans_a=0, trans_b=0,
                     wgmma_id=next(_wgmma_ids), acc="s32", **{k: True for k, v in flags.items() if v},
                     **({"sp_sel": sel.value} if sparse else {}))
        parts = [self.emit("wgmma", s32, [c, da[(k // 2) % 2], db, scale_d, *sp], s32, part=k, **attrs).result
                 for k, c in enumerate(cs)]
        for reg, v in zip(d.elements, parts):
            self.write(reg, v)
