"""Lowering of PTX instructions that compose from other IR ops (a mixin of :class:`xcc.ir.lower.InstLowering`, one
``op_<opcode>`` method per PTX opcode, beside :mod:`xcc.ir.lower_video`'s): logic, selection, classification,
16x2 SIMD min/max, ``.xorsign.abs``, cache hints and a few special registers.  Each follows the PTX ISA 9.0
manual's definition (section in the method's docstring) with integer and comparison IR ops both engines and
the xg1 backend already implement, so nothing here needs a new IR op or a new machine instruction.

* ``lop3.b32 d, a, b, c, immLut`` (9.7.8.6): bit i of d is ``immLut[(a_i << 2) | (b_i << 1) | c_i]``, of an
  immLut outside 0..255 its low 8 bits (ptxas 13.0's SASS: ``LOP3.LUT ..., 0x0`` for 256, ``0xff`` for -1),
  built by Shannon expansion on ``a`` then ``b`` (``mux(s, x, y) = y ^ ((x ^ y) & s)``); the PTX 8.2 form
  ``lop3.BoolOp.b32 d|p, a, b, c, immLut, q`` also sets ``p = (d != 0) BoolOp q``.
* ``cnot.type d, a`` (9.7.8.5): ``d = (a == 0) ? 1 : 0``.
* ``slct.dtype.s32 d, a, b, c`` / ``slct{.ftz}.dtype.f32`` (9.7.7.2): ``d = (c >= 0) ? a : b`` (a NaN ``c``
  selects ``b``; ``-0.0 >= 0``; ``.ftz`` flushes a subnormal ``c`` to a zero of its sign first).
* ``testp.op.{f32,f64} p, a`` (9.7.4.2): a classification of a's bits (zeros count as normal numbers); with no
  ``op`` (accepted by ptxas, undefined by the manual) nothing, as ptxas 13.0 compiles it: ``p`` keeps its value.
* ``fns.b32 d, mask, base, offset`` (9.7.1.24): a popc binary search (:meth:`BitsLowering.op_fns`).
* ``szext.{clamp,wrap}.{u32,s32} d, a, b`` (9.7.1.25): the low ``b`` bits of ``a`` (``b`` clamped to 32 or taken
  modulo 32; 0 bits give 0) zero- or sign-extended: ``bfe`` from bit 0.
* ``min``/``max`` ``.{u16x2,s16x2}`` and ``{.relu}.s16x2`` (9.7.1.10/11): per half-word; ``max.relu.s32``/
  ``min.relu.s32``: the result clamped below at 0; ``{min,max}.NaN.f32``: a NaN operand gives the canonical NaN
  ``0x7fffffff``; ``.xorsign.abs`` (f32, f16, f16x2, bf16, bf16x2): ``|d| = min/max(|a|, |b|)`` (NaN rules of
  the plain form, or of ``.NaN``) and, unless ``d`` is NaN, its sign the XOR of a's and b's.
* ``abs.s16``/``neg.s16``/``abs.s64`` (``0 - a`` and a select; the most negative value wraps to itself),
  which xg1's selector lacks; ``sqrt``/``rcp`` with both ``.approx`` and a rounding modifier are refused (ptxas does too).
* ``cvt`` to ``.tf32`` (9.7.9.21): rounding of the f32 bit pattern (:meth:`BitsLowering.cvt_tf32`).
* ``vavrg2``/``vavrg4`` (with :mod:`xcc.ir.lower_video`'s SIMD frame) and ``vset2``/``vset4`` (9.7.10.3) with the
  default selectors and mask: per element, extended by its type; the average rounds halves away from zero.
* ``mul.hi``/``mad.hi`` ``.u16``/``.s16``: ``mul.wide``, a shift by 16 and a truncation (:meth:`BitsLowering.mul_hi16`).
* ``vmad`` (9.7.10.2) with ``.po``, ``.sat``, ``.shr7``/``.shr15``, selectors and operand negation: the manual's
  128-bit pseudo-code on pairs of 64-bit IR values (:meth:`BitsLowering.op_vmad`).
* ``mad.hi.sat.s32 d, a, b, c`` (9.7.1.4): ``d = sat(hi32(a * b) + c)``: ``mul.hi`` then ``add.sat``.
* ``prefetch``, ``prefetchu``, ``applypriority``, ``discard`` (9.7.9.15/16/17): cache hints; xg1 models no
  cache it could act on, so they lower to nothing once the address operand is checked (``discard`` and
  ``applypriority`` of 128 bytes only, as PTX defines).  ``discard`` leaves the data unchanged, which is one of
  the values PTX allows (it makes them unspecified).
* ``createpolicy`` (9.7.9.18): an opaque 64-bit cache policy (docs/semantics.md gives its encoding); every
  ``.L2::cache_hint`` operand accepts one and ignores it (:meth:`BitsLowering.without_cache_hint`).
* ``%globaltimer_lo``/``%globaltimer_hi``: the halves of ``%globaltimer`` (the engines' modelled clock);
  ``%pm0..%pm7`` and ``%pm0_64..%pm7_64`` (performance monitoring counters): 0, as no counter is configured;
  ``%envreg0`` and ``%envreg3..%envreg31`` (driver-defined): 0, as xcc's driver defines only ``%envreg1/2``
  (a cooperative launch's grid-sync workspace, :mod:`xcc.sim.launch`); ``%clock_hi``: the upper 32 bits of
  ``%clock64``; ``%reserved_smem_offset_begin``/``_end``/``_cap``: 0, as xcc reserves no shared memory, so
  ``%aggr_smem_size`` is ``%total_smem_size``.
"""

from __future__ import annotations

import struct
from dataclasses import replace

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import PRED, ptx_type

_U32, _S32, _U64 = ptx_type("u32"), ptx_type("s32"), ptx_type("u64")
# float formats: total bits per lane, lanes, the magnitude of +infinity (larger magnitudes are NaNs)
_FLOATS = {"f32": (32, 1, 0x7F800000), "f16": (16, 1, 0x7C00), "bf16": (16, 1, 0x7F80),
           "f16x2": (16, 2, 0x7C00), "bf16x2": (16, 2, 0x7F80)}
# special registers that read 0 in xcc: the performance-monitor counters, the environment registers (envreg1/2:
# the grid-sync workspace, read for real) and the reserved shared-memory region, which is empty, at offset 0
_ZERO_SREGS = frozenset({f"pm{i}" for i in range(8)} | {f"pm{i}_64" for i in range(8)}
                        | {f"envreg{i}" for i in range(32) if i not in (1, 2)}
                        | {"reserved_smem_offset_begin", "reserved_smem_offset_end", "reserved_smem_offset_cap"})
_EVICT = {"L2::evict_last": 1, "L2::evict_normal": 2, "L2::evict_first": 3, "L2::evict_unchanged": 4}


class BitsLowering:
    # ----------------------------------------------------------------- logic
    def op_lop3(self, inst) -> None:
        t = self._type(inst)
        boolop = next((m for m in inst.modifiers if m in ("and", "or")), None)
        self._check(inst, 6 if boolop else 5)
        d, a, b, c, lut = inst.operands[:5]
        if not isinstance(lut, ast.Imm) or lut.kind != "int":
            raise self.error(f"'{_text(inst)}': immLut must be an integer constant", PtxSemanticError)
        va, vb, vc = (self.read(o, t) for o in (a, b, c))
        table = lut.value & 0xFF  # ptxas 13.0 keeps the low 8 bits: 256 -> LOP3.LUT 0x0, -1 -> 0xff, 0x1E8 -> 0xe8
        ones = Const(t, (1 << t.bits) - 1)

        def g(i: int):  # the function of c alone that minterms i+1 (c=1) and i (c=0) give
            hi, lo = table >> (i + 1) & 1, table >> i & 1
            if hi == lo:
                return ones if hi else Const(t, 0)
            return vc if hi else self._op("not", vc, t=t)

        def mux(s, x, y):
            if x is y or (isinstance(x, Const) and isinstance(y, Const) and x.bits == y.bits):
                return x
            if isinstance(x, Const) and isinstance(y, Const):
                return s if x.bits else self._op("not", s, t=t)  # (ones, 0) -> s, (0, ones) -> ~s
            return self._op("xor", y, self._op("and", self._op("xor", x, y, t=t), s, t=t), t=t)

        f1 = mux(vb, g(6), g(4))  # a = 1: b = 1 (minterms 7, 6) or b = 0 (5, 4)
        f0 = mux(vb, g(2), g(0))
        r = mux(va, f1, f0)
        if isinstance(r, Const) or r is vc:  # a constant or a copy: still an instruction with a result
            r = self._op("or", r, Const(t, 0), t=t)
        if boolop:
            dest, p = d.elements if isinstance(d, ast.Vector) else (d, None)
            if p is None:
                raise self.error(f"'{_text(inst)}' needs a destination pair d|p", PtxSemanticError)
            nz = self._op("setp", r, Const(t, 0), t=t, cmp="ne")
            self.write(p, self._op(boolop, nz, self.read(inst.operands[5], PRED), t=PRED))
            self.write(dest, r)
            return
        self.write(d, r)

    def op_cnot(self, inst) -> None:
        self._check(inst, 2)
        t = self._type(inst)
        z = self._op("setp", self.read(inst.operands[1], t), Const(t, 0), t=t, cmp="eq")
        self.write(inst.operands[0], self.emit("selp", t, [Const(t, 1), Const(t, 0), z], t).result)

    # ----------------------------------------------------------------- selection and classification
    def op_slct(self, inst) -> None:
        self._check(inst, 4)
        ts = [m for m in inst.modifiers if m not in ("ftz",)]
        if len(ts) != 2 or ts[1] not in ("s32", "f32"):
            raise self.error(f"'{_text(inst)}' needs a .dtype and an .s32 or .f32 selector type", PtxSemanticError)
        dt, st = ptx_type(ts[0]), ptx_type(ts[1])
        if "ftz" in inst.modifiers and st.name != "f32":
            raise self.error(f"'{_text(inst)}': .ftz needs an .f32 selector", PtxSemanticError)
        d, a, b, c = inst.operands
        attrs = {"ftz": True} if "ftz" in inst.modifiers else {}
        ge = self._op("setp", self.read(c, st), Const(st, 0), t=st, cmp="ge", **attrs)
        self.write(d, self.emit("selp", dt, [self.read(a, dt), self.read(b, dt), ge], dt).result)

    def op_testp(self, inst) -> None:
        self._check(inst, 2)
        t = self._type(inst)
        op = self._mode(inst, ("finite", "infinite", "number", "notanumber", "normal", "subnormal"), required=False)
        if t.name not in ("f32", "f64"):
            raise self.error(f"'{_text(inst)}' needs .f32 or .f64", PtxSemanticError)
        if op is None:  # no test named: ptxas 13.0 emits nothing (the cubin equals the one without the line,
            return  # sm_80 and sm_90a, f32 and f64): p keeps the value it had
        ut = ptx_type(f"u{t.bits}")
        inf, smallest = (0x7F800000, 0x00800000) if t.bits == 32 else (0x7FF << 52, 1 << 52)
        bits = self.emit("mov", ut, [self.read(inst.operands[1], t)], ut).result  # (a float literal reads as t)
        mag = self._op("and", bits, Const(ut, (1 << (t.bits - 1)) - 1), t=ut)

        def cmp(c, k):
            return self._op("setp", mag, Const(ut, k), t=ut, cmp=c)

        if op in ("finite", "infinite", "number", "notanumber"):
            p = cmp({"finite": "lo", "infinite": "eq", "number": "ls", "notanumber": "hi"}[op], inf)
        elif op == "subnormal":
            p = self._op("and", cmp("ne", 0), cmp("lo", smallest), t=PRED)
        else:  # normal: a normal number or a zero
            p = self._op("or", self._op("and", cmp("hs", smallest), cmp("lo", inf), t=PRED), cmp("eq", 0), t=PRED)
        self.write(inst.operands[0], p)

    # ----------------------------------------------------------------- bit fields
    def op_szext(self, inst) -> None:
        self._check(inst, 3)
        t = self._type(inst)
        mode = self._mode(inst, ("clamp", "wrap"))
        n = self.read(inst.operands[2], _U32)
        n = self._op("min", n, Const(_U32, 32)) if mode == "clamp" else self._op("and", n, Const(_U32, 31))
        v = self.emit("bfe", t, [self.read(inst.operands[1], t), Const(_U32, 0), n], t).result
        self.write(inst.operands[0], v)

    def op_fns(self, inst) -> None:
        """``fns.b32 d, mask, base, offset`` (9.7.1.24): the position of the ``|offset|``-th set bit of mask from bit
        ``base`` upwards (offset > 0) or downwards (offset < 0), ``base`` itself if set for offset 0, else
        ``0xffffffff``.  The bits searched are isolated (``mask & ~0 << base``, or ``brev(mask & ~0 >> 31 - base)``
        for a downward search) and the k-th set bit from the bottom found by a 5-step binary search on ``popc``
        of half windows.  A base above 31 (undefined in PTX) gives ``0xffffffff``."""
        self._check(inst, 4)
        d, mask, base, off = inst.operands
        vm, vb, vo = self.read(mask, _U32), self.read(base, _U32), self.read(off, _S32)
        ones = self._k(0xFFFFFFFF)
        in_range = self._op("setp", vb, self._k(32), cmp="lo")
        up = self._op("setp", vo, Const(_S32, 0), t=_S32, cmp="gt")
        above = self._op("and", vm, self._op("shl", ones, vb))
        below = self._op("and", vm, self._op("shr", ones, self._op("sub", self._k(31), vb)))
        src = self.emit("selp", _U32, [above, self._op("brev", below), up], _U32).result
        k = self._op("abs", vo, t=_S32)
        total = self.emit("popc", _U32, [src], _U32).result
        found = self._op("setp", total, k, cmp="hs")
        pos, rem = self._k(0), k
        for w in (16, 8, 4, 2, 1):
            window = self._op("shr", src, pos)
            c = self.emit("popc", _U32, [self._op("and", window, self._k((1 << w) - 1))], _U32).result
            go = self._op("setp", c, rem, cmp="lo")
            pos = self._op("add", pos, self.emit("selp", _U32, [self._k(w), self._k(0), go], _U32).result)
            rem = self._op("sub", rem, self.emit("selp", _U32, [c, self._k(0), go], _U32).result)
        pos = self.emit("selp", _U32, [pos, self._op("sub", self._k(31), pos), up], _U32).result
        r = self.emit("selp", _U32, [pos, ones, found], _U32).result
        bit = self._op("and", self._op("shr", vm, vb), self._k(1))
        r0 = self.emit("selp", _U32, [vb, ones, self._op("setp", bit, self._k(1), cmp="eq")], _U32).result
        zero = self._op("setp", vo, Const(_S32, 0), t=_S32, cmp="eq")
        r = self.emit("selp", _U32, [r0, r, zero], _U32).result
        self.write(d, self.emit("selp", _U32, [r, ones, in_range], _U32).result)

    # ----------------------------------------------------------------- abs, neg, sqrt, rcp forms
    def op_sqrt(self, inst) -> None:
        self._approx_or_rounding(inst)
        self.unary(inst)

    def op_rcp(self, inst) -> None:
        """``rcp.rnd.ftz.f64``, which ptxas 13.0 takes though the PTX ISA gives .ftz only to rcp.approx.f64, is
        ``rcp.rnd.f64``: ptxas makes the same cubin of both, for every rounding (sm_90a), so .ftz flushes
        nothing."""
        self._approx_or_rounding(inst)
        mods = inst.modifiers
        if "f64" in mods and "ftz" in mods and any(m in ("rn", "rz", "rm", "rp") for m in mods):
            inst = replace(inst, modifiers=tuple(m for m in mods if m != "ftz"))
        self.unary(inst)

    def _approx_or_rounding(self, inst) -> None:
        """sqrt/rcp take ``.approx`` or a rounding modifier, not both (PTX ISA 9.7.3.x; ptxas 13.0 agrees)."""
        if "approx" in inst.modifiers and any(m in ("rn", "rz", "rm", "rp") for m in inst.modifiers):
            raise self.error(f"'{_text(inst)}': .approx and a rounding modifier exclude each other", PtxSemanticError)

    def op_abs(self, inst) -> None:
        self._sign_op(inst)

    def op_neg(self, inst) -> None:
        self._sign_op(inst)

    def _sign_op(self, inst) -> None:
        """``abs``/``neg`` ``.s16``/``.s64`` (9.7.1.x; the most negative value wraps to itself): ``selp`` of ``0 - a``
        and ``a`` (abs) or ``0 - a`` (neg) in the type; the float forms (``.ftz`` included) are the IR's own
        ``neg``/``abs``."""
        mods = inst.modifiers
        if "s16" in mods or ("s64" in mods and inst.opcode == "abs"):
            self._check(inst, 2)
            t = self._type(inst)
            a = self.read(inst.operands[1], t)
            n = self._op("sub", Const(t, 0), a, t=t)
            if inst.opcode == "abs":
                neg = self._op("setp", a, Const(t, 0), t=t, cmp="lt")
                n = self.emit("selp", t, [n, a, neg], t).result
            self.write(inst.operands[0], n)
            return
        self.unary(inst)

    # ----------------------------------------------------------------- SIMD video: vavrg2/4, vset2/4
    def op_vavrg2(self, inst) -> None:
        self._simd(inst, "avrg", 2)

    def op_vavrg4(self, inst) -> None:
        self._simd(inst, "avrg", 4)

    def simd_average(self, a, b):
        """``vavrg`` of two extended elements (PTX ISA 9.7.10.3): ``(a + b + 1) >> 1`` if ``a + b >= 0``, else
        ``(a + b) >> 1`` (arithmetic shift)."""
        s = self._op("add", a, b, t=_S32)
        ge = self._op("setp", s, Const(_S32, 0), t=_S32, cmp="ge")
        one = self.emit("selp", _S32, [Const(_S32, 1), Const(_S32, 0), ge], _S32).result
        return self._op("shr", self._op("add", s, one, t=_S32), Const(_U32, 1), t=_S32)

    def op_vset2(self, inst) -> None:
        self._vset_simd(inst, 2)

    def op_vset4(self, inst) -> None:
        self._vset_simd(inst, 4)

    def _vset_simd(self, inst, n: int) -> None:
        """``vsetN.atype.btype.cmp d{.mask}, a{.asel}, b{.bsel}, c`` (merge: element i of d in the mask is
        ``a[i] cmp b[i]``, 1 or 0, the others ``c``'s) and ``vsetN.atype.btype.cmp.add d{.mask}, a, b, c`` (``d = c +
        the number of elements of the mask compared true``), PTX ISA 9.7.10.3; selectors and masks as for the other
        SIMD video instructions (:meth:`xcc.ir.lower_video.SimdVideoLowering.simd_sources`)."""
        mods = inst.modifiers
        ts = [m for m in mods if m in ("s32", "u32")]
        cmp = [m for m in mods if m in ("eq", "ne", "lt", "le", "gt", "ge")]
        extra = [m for m in mods if m not in ("s32", "u32", "add", *cmp)]
        if len(ts) != 2 or len(cmp) != 1 or extra:
            raise self.error(f"'{_text(inst)}' is not supported yet")
        self._check(inst, 4)
        w = 32 // n
        d, mask, element = self.simd_sources(inst, n)
        out = None
        for i in mask:
            ea, eb = element(i, 0, ts[0][0]), element(i, 1, ts[1][0])
            p = self._op("setp", ea, eb, t=_S32, cmp=cmp[0])
            r = self.emit("selp", _U32, [self._k(1 << (i * w) if "add" not in mods else 1), self._k(0), p], _U32).result
            out = r if out is None else self._op("add" if "add" in mods else "or", out, r)
        if "add" in mods:
            self.write(d, self._op("add", out, self.read(inst.operands[3], _U32)))
        else:
            self.simd_merge(inst, d, mask, n, out)

    def op_vmad(self, inst) -> None:
        """``vmad.dtype.atype.btype{.po}{.sat}{.shr7,.shr15} d, {-}a{.asel}, {-}b{.bsel}, {-}c`` (9.7.10.2), the
        manual's pseudo-code on a 128-bit ``tmp`` kept as two 64-bit words: ``tmp = a * b`` (exact; signed when a
        or b is), ``~tmp`` and lsb 1 when exactly one of a, b is negated, else ``~c`` and lsb 1 when c is, lsb 1
        with ``.po``; ``tmp += c (sign-extended when the result is signed, else zero-extended) + lsb``; the result
        is ``(tmp >> 7 or 15) & (2^64 - 1)``, ``.sat`` clamped (as s64) to the s32 range when signed, else (as
        u64) to the u32 range, and its low 32 bits written.  Signed: a or b signed, or a negated product or c."""
        mods = inst.modifiers
        ts = [m for m in mods if m in ("s32", "u32")]
        extra = [m for m in mods if m not in ("s32", "u32", "sat", "po", "shr7", "shr15")]
        if len(ts) != 3 or extra:
            raise self.error(f"'{_text(inst)}' is not supported yet")
        self._check(inst, 4)
        _dt, at, bt = ts
        s64, u64 = ptx_type("s64"), _U64
        d, *src = inst.operands
        neg = [isinstance(o, ast.Negated) and o.minus for o in src]
        a, b, c = (o.operand if n else o for o, n in zip(src, neg))
        neg_p = neg[0] != neg[1]
        if neg_p and neg[2] or "po" in mods and any(neg):
            raise self.error(f"'{_text(inst)}': operand negation is limited to (a xor b) or c, and not with .po",
                             PtxSemanticError)
        signed = "s32" in (at, bt) or neg_p or neg[2]  # the manual's signedFinal
        lo = self.emit("mul", s64, [self._vsource(inst, a, at), self._vsource(inst, b, bt)], s64, mode="lo").result
        hi = self._op("shr", lo, Const(_U32, 63), t=s64) if "s32" in (at, bt) else Const(u64, 0)
        vc = self.read(c, _U32)
        if neg_p:
            lo, hi = self._op("not", lo, t=u64), self._op("not", hi, t=u64)
        elif neg[2]:
            vc = self._op("not", vc)
        lsb = 1 if "po" in mods or neg_p or neg[2] else 0
        vc = self.emit("cvt", s64, [vc], s64, src="s32" if signed else "u32").result
        hc = self._op("shr", vc, Const(_U32, 63), t=s64) if signed else Const(u64, 0)
        lo, hi = self._add128(lo, hi, vc, hc)
        if lsb:
            lo, hi = self._add128(lo, hi, Const(u64, 1), Const(u64, 0))
        shift = 7 if "shr7" in mods else 15 if "shr15" in mods else 0
        tmp = lo
        if shift:
            tmp = self._op("or", self._op("shr", lo, Const(_U32, shift), t=u64),
                           self._op("shl", hi, Const(_U32, 64 - shift), t=u64), t=u64)
        if "sat" in mods:
            if signed:
                tmp = self._op("min", self._op("max", tmp, Const(s64, -(1 << 31)), t=s64), Const(s64, (1 << 31) - 1),
                               t=s64)
            else:
                tmp = self._op("min", tmp, Const(u64, 0xFFFFFFFF), t=u64)
        self.write(d, self.emit("cvt", _U32, [tmp], _U32, src="u64").result)

    def _add128(self, lo, hi, lo2, hi2):
        """(lo, hi) + (lo2, hi2) modulo 2^128, each half a 64-bit value."""
        s = self._op("add", lo, lo2, t=_U64)
        carry = self._op("setp", s, lo, t=_U64, cmp="lt")
        c = self.emit("selp", _U64, [Const(_U64, 1), Const(_U64, 0), carry], _U64).result
        return s, self._op("add", self._op("add", hi, hi2, t=_U64), c, t=_U64)

    # ----------------------------------------------------------------- min / max forms
    def op_min(self, inst) -> None:
        self._minmax(inst)

    def op_max(self, inst) -> None:
        self._minmax(inst)

    def _minmax(self, inst) -> None:
        mods = inst.modifiers
        if "s16x2" in mods or "u16x2" in mods:
            return self._minmax16x2(inst)
        ts = [m for m in mods if m in _FLOATS or m in ("s32", "f64")]
        if "xorsign" in mods:
            return self._xorsign(inst)
        if ts == ["s32"] and "relu" in mods:  # max(min/max(a, b), 0)
            self._check(inst, 3)
            a, b = (self.read(o, _S32) for o in inst.operands[1:])
            r = self._op(inst.opcode, a, b, t=_S32)
            self.write(inst.operands[0], self._op("max", r, Const(_S32, 0), t=_S32))
            return None
        if ts == ["f32"] and "NaN" in mods and len(inst.operands) == 3:
            self._flags_ok(inst, ptx_type("f32"))
            a, b = (self.read(o, ptx_type("f32")) for o in inst.operands[1:])
            self.write(inst.operands[0], self._float_minmax(inst.opcode, "f32", a, b, mods))
            return None
        return self.binary(inst)

    def _float_minmax(self, opcode: str, fmt: str, a, b, mods):
        """min/max in ``fmt`` with ``.ftz``/``.NaN`` from ``mods``; for f32, ``.NaN`` as a NaN test and a select of
        the canonical NaN (xg1's FMNMX has no NaN-propagating form; the halves' HMNMX2 has)."""
        t = ptx_type(fmt)
        attrs = {m: True for m in ("ftz", "NaN") if m in mods and not (m == "NaN" and fmt == "f32")}
        r = self.emit(opcode, t, [a, b], t, **attrs).result
        if fmt == "f32" and "NaN" in mods:
            nan = self._op("setp", a, b, t=t, cmp="nan")
            r = self.emit("selp", t, [Const(t, 0x7FFFFFFF), r, nan], t).result
        return r

    def _minmax16x2(self, inst) -> None:
        """Per half-word, element 0 the low bits; ``.relu`` (s16x2 only) clamps each element below at 0."""
        self._check(inst, 3)
        mods = inst.modifiers
        signed = "s16x2" in mods
        if "relu" in mods and not signed:
            raise self.error(f"'{_text(inst)}': .relu needs .s16x2", PtxSemanticError)
        extra = [m for m in mods if m not in ("s16x2", "u16x2", "relu")]
        if extra:
            raise self.error(f"'{_text(inst)}': .{extra[0]} does not apply to 16x2 integers", PtxSemanticError)
        va, vb = (self.read(o, _U32) for o in inst.operands[1:])
        kind = "s" if signed else "u"
        out = None
        for i in range(2):
            ea, eb = self.simd_element(va, i, 16, kind), self.simd_element(vb, i, 16, kind)
            r = self._op(inst.opcode, ea, eb, t=_S32)
            if "relu" in mods:
                r = self._op("max", r, Const(_S32, 0), t=_S32)
            r = self._op("and", r, self._k(0xFFFF))
            out = r if out is None else self._op("or", out, self._op("shl", r, self._k(16)))
        self.write(inst.operands[0], out)

    def add16x2(self, inst) -> None:
        """``add.{u16x2,s16x2} d, a, b`` (9.7.1.1, sm_90): each half-word sum wraps mod 2^16 (signed or not, the
        bits are the same; ptxas takes no .sat): the low 15 bits of each half added with no carry across the halves,
        then each top bit is the XOR of the operands' top bits and that carry,
        ``((a & 0x7FFF7FFF) + (b & 0x7FFF7FFF)) ^ ((a ^ b) & 0x80008000)``."""
        self._check(inst, 3)
        extra = [m for m in inst.modifiers if m not in ("s16x2", "u16x2")]
        if extra:
            raise self.error(f"'{_text(inst)}': .{extra[0]} does not apply to 16x2 integers", PtxSemanticError)
        a, b = (self.read(o, _U32) for o in inst.operands[1:])
        low = self._op("add", self._op("and", a, self._k(0x7FFF7FFF)), self._op("and", b, self._k(0x7FFF7FFF)))
        top = self._op("and", self._op("xor", a, b), self._k(0x80008000))
        self.write(inst.operands[0], self._op("xor", low, top))

    def _xorsign(self, inst) -> None:
        """``|d| = op(|a|, |b|)`` in the float type (its ``.NaN``/``.ftz``), then each element that is not a NaN
        takes the XOR of the sign bits of a's and b's elements."""
        self._check(inst, 3)
        mods = inst.modifiers
        fmt = next((m for m in mods if m in _FLOATS), None)
        if "abs" not in mods or fmt is None:
            raise self.error(f"'{_text(inst)}': .xorsign needs .abs and an f32, f16 or bf16 type", PtxSemanticError)
        w, lanes, inf = _FLOATS[fmt]
        ut = ptx_type(f"u{w * lanes}")
        sign = sum(1 << (w * k + w - 1) for k in range(lanes))
        va, vb = (self.read(o, ut) for o in inst.operands[1:])
        xs = self._op("and", self._op("xor", va, vb, t=ut), Const(ut, sign), t=ut)
        aa, ab = (self._op("and", v, Const(ut, ~sign & ((1 << ut.bits) - 1)), t=ut) for v in (va, vb))
        m = self._float_minmax(inst.opcode, fmt, aa, ab, mods)
        keep = None
        for k in range(lanes):
            e = self._op("shr", m, Const(_U32, w * k), t=ut) if k else m
            e = self._op("and", e, Const(ut, (1 << (w - 1)) - 1), t=ut)
            num = self._op("setp", e, Const(ut, inf), t=ut, cmp="ls")
            bit = self.emit("selp", ut, [Const(ut, 1 << (w * k + w - 1)), Const(ut, 0), num], ut).result
            keep = bit if keep is None else self._op("or", keep, bit, t=ut)
        r = self._op("or", m, self._op("and", xs, keep, t=ut), t=ut)
        self.write(inst.operands[0], r)

    def mad_hi_sat(self, inst) -> bool:
        """``mad.hi.sat.s32``: ``add.sat.s32(mul.hi.s32(a, b), c)``; False for any other ``mad``."""
        mods = inst.modifiers
        if not ("hi" in mods and "sat" in mods and "s32" in mods):
            return False
        self._check(inst, 4)
        a, b, c = (self.read(o, _S32) for o in inst.operands[1:])
        hi = self.emit("mul", _S32, [a, b], _S32, mode="hi").result
        self.write(inst.operands[0], self.emit("add", _S32, [hi, c], _S32, sat=True).result)
        return True

    # ----------------------------------------------------------------- tf32
    def cvt_tf32(self, inst) -> bool:
        """``cvt.rna{.satfinite}.tf32.f32`` (sm_80) and ``cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32`` (sm_90), PTX ISA
        9.7.9.21: a's magnitude rounded to 10 fraction bits (the low 13 bits of the f32 pattern zero) by
        adding half a quantum (``.rna``: ties away), that less one plus the kept lsb (``.rn``: ties to even) or
        nothing (``.rz``), then masking; a carry into the exponent gives infinity, which ``.satfinite`` (and for an
        infinite input too) turns into the largest finite tf32 ``0x7f7fe000`` of the sign; ``.relu`` makes a
        negative result +0; a NaN gives the canonical NaN ``0x7fffffff``.  False for any other ``cvt``."""
        mods = inst.modifiers
        if "tf32" not in mods:
            return False
        rnd = [m for m in mods if m in ("rna", "rn", "rz", "rm", "rp", "rs")]
        extra = [m for m in mods if m not in ("rna", "rn", "rz", "relu", "satfinite", "tf32", "f32")]
        if mods[-2:] != ("tf32", "f32") or len(rnd) != 1 or extra or ("relu" in mods and rnd[0] == "rna"):
            raise self.error(f"'{_text(inst)}' is not a tf32 conversion PTX defines (cvt.rna{{.satfinite}}.tf32.f32, "
                             "cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32)", PtxSemanticError)
        self._check(inst, 2)
        a = self.read(inst.operands[1], _U32)
        mag = self._op("and", a, self._k(0x7FFFFFFF))
        bias = {"rz": None, "rna": self._k(0x1000),
                "rn": self._op("add", self._op("and", self._op("shr", mag, self._k(13)), self._k(1)),
                               self._k(0xFFF))}[rnd[0]]
        r = self._op("and", self._op("add", mag, bias) if bias is not None else mag, self._k(~0x1FFF))
        if "satfinite" in mods:
            big = self._op("setp", r, self._k(0x7F800000), cmp="hs")
            r = self.emit("selp", _U32, [self._k(0x7F7FE000), r, big], _U32).result
        r = self._op("or", r, self._op("and", a, self._k(0x80000000)))
        if "relu" in mods:
            neg = self._op("setp", a, self._k(0x80000000), cmp="hs")
            r = self.emit("selp", _U32, [self._k(0), r, neg], _U32).result
        nan = self._op("setp", mag, self._k(0x7F800000), cmp="hi")
        self.write(inst.operands[0], self.emit("selp", _U32, [self._k(0x7FFFFFFF), r, nan], _U32).result)
        return True

    def mul_hi16(self, inst, op: str, n: int) -> bool:
        """``mul.hi``/``mad.hi`` on ``.u16``/``.s16`` (9.7.1.3/4): bits 31:16 of the exact 32-bit product, from
        ``mul.wide`` and a shift (``mad``: then ``+ c`` wrapping at 16 bits); False for any other form."""
        mods = inst.modifiers
        t = next((ptx_type(m) for m in mods if m in ("u16", "s16")), None)
        if "hi" not in mods or t is None:
            return False
        self._check(inst, n)
        if "sat" in mods:
            raise self.error(f"'{_text(inst)}': .sat is defined for mad.hi.s32 only", PtxSemanticError)
        wt = ptx_type(f"{t.kind}32")
        a, b = (self.read(o, t) for o in inst.operands[1:3])
        p = self.emit("mul", t, [a, b], wt, mode="wide").result
        hi = self.emit("cvt", t, [self._op("shr", p, Const(_U32, 16), t=wt)], t, src=wt.name).result
        if op == "mad":
            hi = self._op("add", hi, self.read(inst.operands[3], t), t=t)
        self.write(inst.operands[0], hi)
        return True

    # ----------------------------------------------------------------- cache hints
    def _hint_address(self, inst, op) -> None:
        if not isinstance(op, ast.Address):
            raise self.error(f"'{_text(inst)}' needs an address operand [a]", PtxSemanticError)
        self._address(op)  # a register base must be defined, a name declared

    def op_prefetch(self, inst) -> None:
        self._check(inst, 1)
        self._hint_address(inst, inst.operands[0])

    op_prefetchu = op_prefetch

    def op_applypriority(self, inst) -> None:
        self._sized_hint(inst)

    def op_discard(self, inst) -> None:
        self._sized_hint(inst)

    def _sized_hint(self, inst) -> None:
        self._check(inst, 2)
        self._hint_address(inst, inst.operands[0])
        size = inst.operands[1]
        if not (isinstance(size, ast.Imm) and size.value == 128):
            raise self.error(f"'{_text(inst)}': the size must be the constant 128", PtxSemanticError)

    def op_createpolicy(self, inst) -> None:
        """The policy: bits 63:56 = 0x5C (a tag), 15:8 the primary and 7:0 the secondary priority (1 evict_last,
        2 evict_normal, 3 evict_first, 4 evict_unchanged), 23:16 = 1 for ``.fractional``, 2 for ``.range``;
        ``.cvt.L2`` returns its operand (a policy is already in this format)."""
        mods = inst.modifiers
        ops = inst.operands
        if "cvt" in mods:
            self._check(inst, 2)
            self.write(ops[0], self.read(ops[1], _U64))
            return
        pri = [_EVICT[m] for m in mods if m in _EVICT]
        if not pri or len(pri) > 2:
            raise self.error(f"'{_text(inst)}' needs a primary (and at most a secondary) L2 priority",
                             PtxSemanticError)
        kind = 2 if "range" in mods else 1
        if kind == 2:
            self._check(inst, 4)
            self._hint_address(inst, ops[1])
            for o in ops[2:]:
                self.read(o, _U32)
        else:
            if len(ops) not in (1, 2):
                raise self.error(f"'{_text(inst)}' takes 1 or 2 operands", PtxSemanticError)
            if len(ops) == 2:
                f = ops[1]
                if isinstance(f, ast.Imm) and not 0.0 < _imm_float(f) <= 1.0:
                    raise self.error(f"'{_text(inst)}': the fraction must be in (0, 1]", PtxSemanticError)
                self.read(f, ptx_type("f32"))
        value = 0x5C << 56 | kind << 16 | pri[0] << 8 | (pri[1] if len(pri) > 1 else 0)
        self.write(ops[0], self._op("or", Const(_U64, value), Const(_U64, 0), t=_U64))

    def without_cache_hint(self, inst):
        """``inst`` without its trailing ``.L2::cache_hint`` policy operand (read, so it must be defined)."""
        if "L2::cache_hint" not in inst.modifiers or not inst.operands:
            return inst
        self.read(inst.operands[-1], _U64)
        return replace(inst, operands=list(inst.operands[:-1]))

    # ----------------------------------------------------------------- special registers
    def special_composed(self, name: str):
        """The value of a special register built from others (None: not one of them)."""
        if name in _ZERO_SREGS:
            t = _U64 if name.endswith("_64") else _U32
            return self._op("or", Const(t, 0), Const(t, 0), t=t)
        if name in ("globaltimer_lo", "globaltimer_hi"):
            g = self.emit("sreg", _U64, [], _U64, name="globaltimer").result
            if name.endswith("hi"):
                g = self._op("shr", g, Const(_U32, 32), t=_U64)
            return self.emit("cvt", _U32, [g], _U32, src="u64").result
        if name == "clock_hi":  # the upper 32 bits of %clock64 (PTX ISA 10.x)
            c = self._op("shr", self.emit("sreg", _U64, [], _U64, name="clock64").result, Const(_U32, 32), t=_U64)
            return self.emit("cvt", _U32, [c], _U32, src="u64").result
        if name == "aggr_smem_size":  # %total_smem_size plus the reserved shared memory (none in xcc)
            return self.emit("sreg", _U32, [], _U32, name="total_smem_size").result
        return None


def _imm_float(imm) -> float:
    if imm.kind != "float":
        return float(imm.value)
    fmt, size = ("<f", "<I") if imm.bits == 32 else ("<d", "<Q")
    return struct.unpack(fmt, struct.pack(size, imm.value))[0]


def _text(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))
