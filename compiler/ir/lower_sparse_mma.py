"""Lowering of sparse warp MMA, ``mma.sp{::ordered_metadata}.sync.aligned`` (PTX ISA 9.7.14.6, sm_80+), into the
dense ``mma`` IR operation: each lane rebuilds its fragment of the dense A from the compressed fragment and the
metadata (``shfl.idx`` from the lanes that hold them, then a selection per element), so the result is the dense
MMA's, with its accumulation rules (:mod:`xcc.semantics.matrix`: the exact sum rounded once).

``mma.sp.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype d, a, b, c, e, f``: A (m x k) is 2:4
sparse: each chunk of 4 consecutive elements of a row holds 2 non-zeros, stored in order in the compressed A;
metadata ``e`` gives, per chunk, a nibble ``i1 << 2 | i0`` of their positions (``i0`` the first stored value's).
``f`` (a constant) selects which lanes of each quad hold the metadata.  The fragments and metadata lanes, as an
NVIDIA H200 showed (tests/data/gpu/mma_sp_probe.cu; ``g`` = lane / 4, ``t`` = lane % 4, chunk ``j`` = columns
4j .. 4j + 3):

* ``.m16n8k16`` ``.f16``/``.bf16``: compressed register ``r`` (0, 1) of lane (g, t) holds the 2 values of row
  ``g + 8r``, chunk ``t`` (low half first); the nibble of (row, chunk ``j``) is bits ``16 (row / 8) + 4j`` of lane
  ``4g + f`` (f in 0 .. 3).  -> one dense ``m16n8k16`` MMA.
* ``.m16n8k32`` ``.f16``/``.bf16``: registers 2, 3 are registers 0, 1 for chunks 4 .. 7; the nibble of (row,
  ``j``) is bits ``16 (row / 8) + 4 (j % 4)`` of lane ``4g + 2f + j / 4`` (f 0 or 1).  -> two dense ``m16n8k16``
  MMAs, the second (K columns 16 .. 31) accumulating onto the first's result: xg1 has no 32-deep f16 MMA, so
  this sum is rounded twice (after each half), where a dense MMA rounds once; exact for exactly representable
  sums, at most an ulp or so apart otherwise.
* ``.m16n8k32`` ``.s8``/``.u8``: register ``r`` (0, 1) holds row ``g + 8r``, chunks ``2t`` (bytes 0, 1) and
  ``2t + 1`` (bytes 2, 3); the nibble of (row, ``j``) is bits ``4j`` of lane ``4g + 2f + row / 8`` (f 0 or 1).
  -> one dense ``m16n8k32`` MMA.
* ``.m16n8k64`` ``.s8``/``.u8`` and ``.e4m3``/``.e5m2`` (sm_89 FP8, the same layout): registers 2, 3 are registers 0, 1 for chunks 8 .. 15; the nibble of (row, ``j``)
  is bits ``4 (j % 8)`` of lane ``4g + 2 (j / 8) + row / 8`` (f = 0).  -> two dense ``m16n8k32`` MMAs of the two
  K halves with a zero accumulator (their integer sum is exact), then ``C +`` it, wrapping or, with
  ``.satfinite``, saturating as the dense MMA does; FP8: the second dense MMA accumulates onto the first's
  result (xg1 has no 64-deep FP8 MMA: such a sum is rounded twice, after each half).

* ``.m16n8k64`` and ``.m16n8k128`` ``.s4``/``.u4``: the 8-bit forms' layout in bytes, each byte a pair of nibbles (2:4
  sparsity on nibble pairs: each chunk of 8 nibbles keeps 2 of its 4 pairs, the metadata nibble naming their
  positions).  The PTX ISA gives compressed register ``r`` of lane (g, t) row ``g + 8 (r % 2)``, 8 kept nibbles of
  columns ``16t .. 16t + 15`` (``+ 64`` for registers 2, 3 of k128), exactly the 8-bit m16n8k32/k64 byte layout;
  ptxas 13.0 takes 2 A registers and selectors 0, 1 for k64 and 4 registers and selector 0 for k128, as for s8
  k32/k64; and only pair granularity fits the metadata into the warp's registers (a 4-bit nibble per 4 elements
  would need 2048 bits for k128, the warp holds 1024).  So the metadata lanes and bits are the 8-bit ones (k64 as
  s8 k32, k128 as s8 k64; not probed on a GPU) and -> the dense A by the 8-bit rule, then the dense nibble product
  (8-bit MMAs on nibbles widened to bytes, :mod:`xcc.ir.lower_subbyte_mma`) from a zero accumulator, exact, and
  ``C +`` it, wrapping or with ``.satfinite`` saturating.

Metadata nibbles with ``i0 == i1`` are undefined behaviour in PTX; here the first value wins.  ``.tf32`` (``.m16n8k8``
-> one dense ``m16n8k8`` tf32 MMA, ``.m16n8k16`` -> two, the second accumulating onto the first's result, rounded
after each as for f16 m16n8k32): the probe's tf32 cases show tf32 as the 16-bit layouts in 16-bit units: a chunk is 2 elements of which one is stored,
nibble 0x4 naming the first and 0xE the second; ``.m16n8k8`` as f16 ``.m16n8k16`` (register ``r`` of lane (g, t):
row ``g + 8r``, chunk ``t``; metadata lane ``4g + f``, bits ``16 (row / 8) + 4 chunk``), ``.m16n8k16`` as f16
``.m16n8k32`` (registers 2, 3: chunks 4 .. 7; metadata lane ``4g + 2f + chunk / 4``); the stored value's position
is ``i0 / 2`` (other nibbles are undefined in PTX).  B is the dense tf32 B fragment (k8: ``b0, b1`` at rows ``t``,
``t + 4``; k16: ``b0 .. b3`` at rows ``t + 4i``).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

_FLOAT_IN = ("f16", "bf16")
_INT_IN = ("s8", "u8")
# (shape, input kind) -> (compressed A registers, selector values)
_FP8 = ("e4m3", "e5m2")
_INT4_IN = ("s4", "u4")
_FORMS = {("m16n8k16", "f"): (2, 4), ("m16n8k32", "f"): (4, 2), ("m16n8k32", "i"): (2, 2), ("m16n8k64", "i"): (4, 1),
          ("m16n8k64", "q"): (4, 1), ("m16n8k8", "t"): (2, 4), ("m16n8k16", "t"): (4, 2), ("m16n8k64", "n"): (2, 2),
          ("m16n8k128", "n"): (4, 1)}


def _text(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class SparseMmaLowering:
    def sparse_mma(self, inst) -> None:
        ms = inst.modifiers
        shape = next((m for m in ms if m.startswith("m16n8k")), None)
        types = [m for m in ms if m in ("f16", "bf16", "f32", "s8", "u8", "s32", "tf32", "e4m3", "e5m2", "s4", "u4")]
        lays = [m for m in ms if m in ("row", "col")]
        known = {"sp", "sp::ordered_metadata", "sync", "aligned", "row", "col", "satfinite", shape, *types}
        if "sync" not in ms or "aligned" not in ms or lays != ["row", "col"] or len(types) != 4 \
                or any(m not in known for m in ms):
            raise self.error(f"'{_text(inst)}': expected mma.sp.sync.aligned.shape.row.col{{.satfinite}}"
                             ".dtype.atype.btype.ctype", PtxSemanticError)
        dtype, atype, btype, ctype = types
        kind = "f" if atype in _FLOAT_IN else "i" if atype in _INT_IN else "q" if atype in _FP8 \
            else "t" if atype == "tf32" else "n" if atype in _INT4_IN else None
        form = _FORMS.get((shape, kind))
        if form is None:
            raise self.error(f"'{_text(inst)}' is not supported yet (sparse MMA: .m16n8k16 and .m16n8k32 with "
                             ".f16/.bf16, .m16n8k32 and .m16n8k64 with .s8/.u8, .m16n8k64 and .m16n8k128 with "
                             ".s4/.u4, .m16n8k64 with .e4m3/.e5m2, "
                             ".m16n8k8 and .m16n8k16 with .tf32)")
        ok = (atype == btype and dtype in ("f32", "f16") and ctype in ("f32", "f16")
              and (atype == "f16" or (dtype, ctype) == ("f32", "f32"))) if kind == "f" \
            else (btype == "tf32" and (dtype, ctype) == ("f32", "f32")) if kind == "t" \
            else (btype in _INT_IN and dtype == ctype == "s32") if kind == "i" \
            else (btype in _INT4_IN and dtype == ctype == "s32") if kind == "n" \
            else (btype in _FP8 and dtype in ("f32", "f16"))
        if not ok:
            raise self.error(f"'{_text(inst)}': .{dtype}.{atype}.{btype}.{ctype} is not a sparse MMA type "
                             "combination", PtxSemanticError)
        if dtype != ctype:  # ptxas 13.0: "Arguments mismatch for instruction 'mma'"
            raise self.error(f"'{_text(inst)}': a sparse MMA's .dtype and .ctype must be the same type",
                             PtxSemanticError)
        if "satfinite" in ms and kind not in ("i", "n"):
            raise self.error(f"'{_text(inst)}': .satfinite is for integer MMA", PtxSemanticError)
        na, nsel = form
        self._check(inst, 6)
        d, a, b, c, e, f = inst.operands
        if not isinstance(f, ast.Imm) or f.kind != "int" or not 0 <= f.value < nsel:
            raise self.error(f"'{_text(inst)}': the sparsity selector must be a constant 0 .. {nsel - 1}",
                             PtxSemanticError)
        u32 = ptx_type("u32")
        nb = 2 if shape == "m16n8k16" or (shape == "m16n8k32" and kind == "i") or (shape == "m16n8k64" and kind == "n") \
            else 4
        if kind == "t":  # tf32 B: 8 x 8 (k8) or 16 x 8 (k16) 32-bit elements
            nb = 2 if shape == "m16n8k8" else 4
        nc = 4 if ctype in ("f32", "s32") else 2
        nd = 4 if dtype in ("f32", "s32") else 2
        ca = self._mx_regs(self._mx_vector(a, na, "A"))
        regs_b = self._mx_regs(self._mx_vector(b, nb, "B"))
        regs_c = self._mx_regs(self._mx_vector(c, nc, "C"))
        dests = self._mx_dests(d, nd, "D")
        meta = self.read(e, u32)
        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        g4 = self._sp("and", lane, 0x1C)  # 4 g
        t = self._sp("and", lane, 3)
        if kind == "f":
            t_res = ptx_type(dtype if dtype == "f32" else "b32")
            attrs = dict(shape="m16n8k16", types=".".join(types), na=4, nb=2)
            if shape == "m16n8k16":
                dense = self._sp_dense_f16(ca, meta, g4, t, f.value, 0)
                self._mx_emit_parts("mma", dests, dense + regs_b + regs_c, t_res, **attrs)
                return
            # m16n8k32: the K halves as two dense m16n8k16 MMAs, the second accumulating onto the first's result
            dense = self._sp_dense_f16(ca, meta, g4, t, 2 * f.value, 0)
            acc = [self.emit("mma", t_res, dense + regs_b[:2] + regs_c, t_res, part=k, **attrs).result
                   for k in range(nd)]
            dense = self._sp_dense_f16(ca, meta, g4, t, 2 * f.value + 1, 1)
            attrs["types"] = f"{dtype}.{atype}.{btype}.{dtype}"  # C of the second half: the first's D
            self._mx_emit_parts("mma", dests, dense + regs_b[2:] + acc, t_res, **attrs)
            return
        if kind == "t":  # tf32: dense m16n8k8 tf32 MMAs (k16: two, the second accumulating onto the first)
            f32 = ptx_type("f32")
            attrs = dict(shape="m16n8k8", types="f32.tf32.tf32.f32", na=4, nb=2)
            if shape == "m16n8k8":
                dense = self._sp_dense_tf32(ca, meta, g4, t, f.value, 0)
                self._mx_emit_parts("mma", dests, dense + regs_b + regs_c, f32, **attrs)
                return
            dense = self._sp_dense_tf32(ca, meta, g4, t, 2 * f.value, 0)
            acc = [self.emit("mma", f32, dense + regs_b[:2] + regs_c, f32, part=k, **attrs).result for k in range(4)]
            dense = self._sp_dense_tf32(ca, meta, g4, t, 2 * f.value + 1, 1)
            self._mx_emit_parts("mma", dests, dense + regs_b[2:] + acc, f32, **attrs)
            return
        if kind == "q":  # FP8 m16n8k64: two dense m16n8k32 FP8 MMAs, the second accumulating onto the first
            t_res = ptx_type(dtype if dtype == "f32" else "b32")
            attrs = dict(shape="m16n8k32", types=".".join(types), na=4, nb=2)
            dense = self._sp_dense_s8(ca, meta, g4, t, 0, 0)
            acc = [self.emit("mma", t_res, dense + regs_b[:2] + regs_c, t_res, part=k, **attrs).result
                   for k in range(nd)]
            dense = self._sp_dense_s8(ca, meta, g4, t, 1, 2)
            self._mx_emit_parts("mma", dests, dense + regs_b[2:] + acc, t_res, **attrs)
            return
        if kind == "n":
            return self._sp_int4(inst, shape, types, ca, regs_b, regs_c, dests, meta, g4, t, f.value)
        halves = 1 if shape == "m16n8k32" else 2
        attrs = dict(shape="m16n8k32", types=".".join(types), na=4, nb=2)
        s32 = ptx_type("s32")
        if halves == 1:
            dense = self._sp_dense_s8(ca, meta, g4, t, 0, 2 * f.value)
            extra = {"satfinite": True} if "satfinite" in ms else {}
            self._mx_emit_parts("mma", dests, dense + regs_b + regs_c, s32, **attrs, **extra)
            return
        acc = [Const(u32, 0)] * 4
        for h in range(2):
            dense = self._sp_dense_s8(ca, meta, g4, t, h, 2 * h)
            acc = [self.emit("mma", s32, dense + regs_b[2 * h:2 * h + 2] + acc, s32, part=k, **attrs).result
                   for k in range(4)]
        sat = {"sat": True} if "satfinite" in ms else {}
        for k, dst in enumerate(dests):
            if not isinstance(dst, ast.Sink):
                self.write(dst, self.emit("add", s32, [regs_c[k], acc[k]], s32, **sat).result)

    def _sp_int4(self, inst, shape, types, ca, regs_b, regs_c, dests, meta, g4, t, sel: int) -> None:
        """.s4/.u4 (module doc): the byte-pair view of the 8-bit forms: the dense A from the 8-bit rule (each byte
        two nibbles), then the dense nibble product (:meth:`~xcc.ir.lower_subbyte_mma.SubByteMmaLowering
        ._sb_byte_mmas`: nibbles widened to bytes, 8-bit MMAs from a zero accumulator, exact) and ``C +`` it,
        wrapping or, with ``.satfinite``, saturating."""
        _, atype, btype, _ = types
        s32 = ptx_type("s32")
        signed = (atype == "s4", btype == "s4")
        widen = [lambda v, q, s=s: self._sb_nibbles(v, q, s) for s in signed]
        kind = tuple("s8" if s else "u8" for s in signed)
        acc = [Const(ptx_type("u32"), 0)] * 4
        for h in range(1 if shape == "m16n8k64" else 2):  # m16n8k128: the K halves 0-63, 64-127
            dense = self._sp_dense_s8(ca, meta, g4, t, h, 2 * sel if shape == "m16n8k64" else 2 * h)
            chunks = [(dense[0], dense[1], regs_b[2 * h]), (dense[2], dense[3], regs_b[2 * h + 1])]
            acc = self._sb_byte_mmas(chunks, widen, kind, 2, acc, {})
        sat = {"sat": True} if "satfinite" in inst.modifiers else {}
        for k, dst in enumerate(dests):
            if not isinstance(dst, ast.Sink):
                self.write(dst, self.emit("add", s32, [regs_c[k], acc[k]], s32, **sat).result)

    # ----------------------------------------------------------------- helpers
    def _sp(self, op: str, x, y):
        u32 = ptx_type("u32")
        return self.emit(op, u32, [x, Const(u32, y) if isinstance(y, int) else y], u32).result

    def _sp_fetch(self, v, src):
        u32 = ptx_type("u32")
        return self.emit("shfl", u32, [v, src, Const(u32, 0x1F), Const(u32, 0xFFFFFFFF)], u32, mode="idx").result

    def _sp_pick(self, pos: int | object, i0, i1, v0, v1):
        """``v0`` where ``pos == i0``, else ``v1`` where ``pos == i1``, else 0 (u32 values)."""
        from xcc.ir.types import PRED

        u32 = ptx_type("u32")
        p = Const(u32, pos) if isinstance(pos, int) else pos
        zero = Const(u32, 0)
        is1 = self.emit("setp", u32, [p, i1], PRED, cmp="eq").result
        r = self.emit("selp", u32, [v1, zero, is1], u32).result
        is0 = self.emit("setp", u32, [p, i0], PRED, cmp="eq").result
        return self.emit("selp", u32, [v0, r, is0], u32).result

    def _sp_nibble(self, meta_lane_value, shift):
        nib = self._sp("and", self._sp("shr", meta_lane_value, shift), 0xF)
        return self._sp("and", nib, 3), self._sp("shr", nib, 2)

    def _sp_dense_f16(self, ca, meta, g4, t, meta_lane: int, half: int) -> list:
        """The 4 registers of this lane's dense m16n8k16 A fragment (of K half ``half`` for m16n8k32): register ``i``
        holds row ``g + 8 (i % 2)``, columns ``2t + 8 (i / 2)`` and ``+ 1`` (chunk ``t / 2 + 2 (i / 2)`` of the
        half, positions ``2 (t % 2)``, ``+ 1``), from compressed register ``i % 2 + 2 half`` of lane ``4g + chunk``
        and the metadata of lane ``4g + meta_lane``."""
        m = self._sp_fetch(meta, self._sp("add", g4, meta_lane))
        thalf = self._sp("shr", t, 1)
        p0 = self._sp("shl", self._sp("and", t, 1), 1)
        p1 = self._sp("add", p0, 1)
        out = []
        for i in range(4):
            rh, kh = i % 2, i // 2
            chunk = self._sp("add", thalf, 2 * kh)
            v = self._sp_fetch(ca[rh + 2 * half], self._sp("add", g4, chunk))
            i0, i1 = self._sp_nibble(m, self._sp("add", self._sp("shl", chunk, 2), 16 * rh))
            lo, hi = self._sp("and", v, 0xFFFF), self._sp("shr", v, 16)
            e0 = self._sp_pick(p0, i0, i1, lo, hi)
            e1 = self._sp_pick(p1, i0, i1, lo, hi)
            out.append(self._sp("or", e0, self._sp("shl", e1, 16)))
        return out

    def _sp_dense_tf32(self, ca, meta, g4, t, meta_lane: int, half: int) -> list:
        """The 4 registers of this lane's dense m16n8k8 tf32 A fragment (of K half ``half`` for m16n8k16): register
        ``i`` holds row ``g + 8 (i % 2)``, column ``t + 4 (i / 2)`` of the half: chunk (column pair)
        ``t / 2 + 2 (i / 2)``, position ``t % 2``; the chunk's one stored value is compressed register ``i % 2 + 2 half``
        of lane ``4g + chunk``, and its nibble (bits ``16 (i % 2) + 4 chunk`` of lane ``4g + meta_lane``) names its
        position in 16-bit units: ``i0 / 2`` (0x4: the first, 0xE: the second)."""
        m = self._sp_fetch(meta, self._sp("add", g4, meta_lane))
        thalf, pos = self._sp("shr", t, 1), self._sp("and", t, 1)
        zero = Const(ptx_type("u32"), 0)
        out = []
        for i in range(4):
            rh, kh = i % 2, i // 2
            chunk = self._sp("add", thalf, 2 * kh)
            v = self._sp_fetch(ca[rh + 2 * half], self._sp("add", g4, chunk))
            i0, _ = self._sp_nibble(m, self._sp("add", self._sp("shl", chunk, 2), 16 * rh))
            out.append(self._sp_pick(pos, self._sp("shr", i0, 1), Const(ptx_type("u32"), 99), v, zero))
        return out

    def _sp_dense_s8(self, ca, meta, g4, t, half: int, meta_lane: int) -> list:
        """The 4 registers of this lane's dense m16n8k32 A fragment for K half ``half`` (chunks 8 half ..):
        register ``q`` holds row ``g + 8 (q % 2)``, chunk ``t + 4 (q / 2)`` (bytes at its positions 0 .. 3)."""
        out = []
        todd = self._sp("shl", self._sp("and", t, 1), 4)  # bit offset of the chunk's 2 bytes in the register
        for q in range(4):
            rh, kh = q % 2, q // 2
            chunk = self._sp("add", t, 4 * kh)  # within the half
            src = self._sp("add", g4, self._sp("shr", chunk, 1))
            v = self._sp_fetch(ca[rh + 2 * half], src)
            m = self._sp_fetch(meta, self._sp("add", g4, meta_lane + rh))
            i0, i1 = self._sp_nibble(m, self._sp("shl", chunk, 2))
            v = self._sp("shr", v, todd)
            b0, b1 = self._sp("and", v, 0xFF), self._sp("and", self._sp("shr", v, 8), 0xFF)
            word = None
            for pos in range(4):
                e = self._sp_pick(pos, i0, i1, b0, b1)
                e = self._sp("shl", e, 8 * pos) if pos else e
                word = e if word is None else self._sp("or", word, e)
            out.append(word)
        return out
