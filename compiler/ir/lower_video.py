"""Lowering of PTX instructions that compose from other IR ops: ``sad``, ``nanosleep``, ``cvt.pack``, FP8
conversions and the scalar video instructions (a mixin of :class:`xcc.ir.lower.InstLowering`, one
``op_<opcode>`` method per PTX opcode).

* ``vadd``, ``vsub``, ``vabsdiff``, ``vmin``, ``vmax``, ``vshl``/``vshr`` (``.clamp``/``.wrap``: the count
  limited to 32 or taken modulo 32), ``vset.atype.btype.cmp`` (1 or 0)
  ``.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel},
  b{.bsel}{, c}`` (PTX ISA 9.7.10.1): each source's selected byte/half-word/word extended by its type, the
  operation exact (64-bit), ``.sat`` clamps to the destination type's range (to the selected sub-word's with a
  ``.dsel`` merge), then ``.op2`` (``add`` wraps; ``min``/``max`` compare the 32-bit result with ``c`` as
  ``dtype``) or the merge of the result's low bits into ``c`` at ``dsel``.

* ``sad.type d, a, b, c`` (PTX ISA 9.7.1.13): ``d = c + ((a < b) ? b - a : a - b)``, wrap-around arithmetic of
  ``type`` (the comparison is signed for ``.s*``) -> ``setp.lt``, two ``sub``, ``selp``, ``add``. On xg1
  this is what ptxas emits for ``sad`` outside the video units (ISETP + IADD3 + SEL).
* ``nanosleep.u32 t`` (PTX ISA 9.7.13.10): suspends the thread for a time in ``[0, 2t]`` ns; a duration of 0 is
  allowed, so it lowers to nothing (the engines model no wall-clock time).
* ``cvt.pack.sat.{u16,s16}.s32 d, a, b`` and ``cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c`` (PTX ISA
  9.7.9.22): ``a`` and ``b`` clamped to the narrow type (``max``/``min``), ``d = c << 2n | a << n | b`` (n bits
  each).
* FP8 (sm_89+): ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`` (``d[15:8] = fp8(a)``, ``d[7:0] = fp8(b)``),
  ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`` (``d[15:8] = fp8(a[31:16])``, ``d[7:0] = fp8(a[15:0])``;
  f16 -> f32 is exact, so the one rounding is f32 -> fp8's) and ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a``
  (``d[31:16] = f16(a[15:8])``, ``d[15:0] = f16(a[7:0])``); ``.relu`` makes a negative result (-0 included) +0; all
  as integer operations on the bit patterns (OCP 8-bit floating point, v1.0: e4m3 has bias 7, no infinities and the
  NaN ``S.1111.111``; e5m2 bias 15 with IEEE infinities and NaNs). f32 -> fp8: round to nearest even at the
  target's quantum (subnormals included), ``.satfinite``: a finite result above the largest finite value and an
  infinity become the largest finite value of their sign, NaN becomes the NaN ``0x7F``; fp8 -> f16 is exact (a NaN
  becomes the canonical ``0x7FFF``).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.ir.core import Const
from xcc.ir.scopes import RegPart
from xcc.ir.types import PRED, ptx_type

_U32 = ptx_type("u32")
_S32 = ptx_type("s32")
_FP8 = {"e4m3x2": (3, 7, 0x7E), "e5m2x2": (2, 15, 0x7B)}  # mantissa bits, bias, largest finite code
_PACK = {"u16": (16, 0, 0xFFFF), "s16": (16, -0x8000, 0x7FFF), "u8": (8, 0, 0xFF), "s8": (8, -0x80, 0x7F),
         "u4": (4, 0, 0xF), "s4": (4, -0x8, 0x7), "u2": (2, 0, 0x3), "s2": (2, -0x2, 0x1)}


class VideoLowering:
    def op_sad(self, inst) -> None:
        self._check(inst, 4)
        t = self._type(inst)
        d, a, b, c = inst.operands
        va, vb, vc = self.read(a, t), self.read(b, t), self.read(c, t)
        lt = self.emit("setp", t, [va, vb], PRED, cmp="lt").result
        ba = self.emit("sub", t, [vb, va], t).result
        ab = self.emit("sub", t, [va, vb], t).result
        diff = self.emit("selp", t, [ba, ab, lt], t).result
        self.write(d, self.emit("add", t, [vc, diff], t).result)

    def op_nanosleep(self, inst) -> None:
        self._check(inst, 1)
        self.read(inst.operands[0], ptx_type("u32"))  # a register operand must still be defined

    # ----------------------------------------------------------------- cvt forms built from integer ops
    def _k(self, v: int, t=_U32) -> Const:
        return Const(t, v & ((1 << t.bits) - 1))

    def _op(self, op: str, *args, t=_U32, **attrs):
        return self.emit(op, t, list(args), PRED if op == "setp" else t, **attrs).result

    def cvt_composed(self, inst) -> bool:
        """Lower ``inst`` if it is ``cvt.pack`` or an FP8 ``cvt``; False for any other ``cvt``."""
        mods = inst.modifiers
        if "pack" in mods:
            self._cvt_pack(inst)
            return True
        fp8 = [m for m in mods if m in _FP8]
        if not fp8:
            return False
        relu = "relu" in mods
        if mods[-1] in ("f32", "f16x2") and mods[-2] in _FP8:  # f32 pair or f16x2 -> fp8x2
            if not ("rn" in mods and "satfinite" in mods):
                raise self.error(f"'{_text(inst)}' needs .rn.satfinite", PtxSemanticError)
            f32 = ptx_type("f32")
            if mods[-1] == "f32":
                self._check(inst, 3)
                d, a, b = inst.operands
                srcs = (self.read(a, f32), self.read(b, f32))
            else:  # the upper half of a to the upper byte of d; f16 -> f32 is exact, so one rounding
                self._check(inst, 2)
                d, a = inst.operands
                x = self.read(a, ptx_type("b32"))
                srcs = tuple(self._f16_to_f32(self._op("and", h, self._k(0xFFFF)))
                             for h in (self._op("shr", x, self._k(16)), x))
            hi, lo = (self._relu_code(self._to_fp8(v, fp8[0]), 0x80, relu) for v in srcs)
            u16 = ptx_type("u16")
            v = self._op("or", self._op("shl", hi, self._k(8)), lo)
            self.write(d, self.emit("cvt", u16, [v], u16, src="u32").result)
            return True
        if mods[-2:] == ("f16x2", fp8[0]):  # fp8x2 -> f16x2
            self._check(inst, 2)
            d, a = inst.operands
            x = self._op("and", self.emit("cvt", _U32, [self.read(a, ptx_type("u16"))], _U32, src="u16").result,
                         self._k(0xFFFF))
            hi = self._relu_code(self._from_fp8(self._op("shr", x, self._k(8)), fp8[0]), 0x8000, relu)
            lo = self._relu_code(self._from_fp8(self._op("and", x, self._k(0xFF)), fp8[0]), 0x8000, relu)
            self.write(d, self._op("or", self._op("shl", hi, self._k(16)), lo, t=ptx_type("b32")))
            return True
        raise self.error(f"'{_text(inst)}' is not supported yet")

    def _relu_code(self, code, sign: int, relu: bool):
        """``.relu`` (PTX ISA, cvt): a negative result, -0 included, becomes +0; NaN results are already the
        positive canonical NaN (0x7F, 0x7FFF) of the format, kept."""
        if not relu:
            return code
        neg = self._op("setp", self._op("and", code, self._k(sign)), self._k(0), cmp="ne")
        return self.emit("selp", _U32, [self._k(0), code, neg], _U32).result

    def _f16_to_f32(self, bits):
        """The f32 value of the f16 bit pattern ``bits`` (u32, low 16 bits): exact."""
        u16, f16, f32 = ptx_type("u16"), ptx_type("f16"), ptx_type("f32")
        h = self.emit("mov", f16, [self.emit("cvt", u16, [bits], u16, src="u32").result], f16).result
        return self.emit("cvt", f32, [h], f32, src="f16").result

    def _cvt_pack(self, inst) -> None:
        ts = [m for m in inst.modifiers if m in _PACK or m in ("s32", "b32")]
        if not ts or ts[0] not in _PACK or "sat" not in inst.modifiers:
            raise self.error(f"'{_text(inst)}' is not supported yet")
        n, lo, hi = _PACK[ts[0]]
        self._check(inst, 3 if n == 16 else 4)
        d, a, b = inst.operands[:3]
        parts = []
        for op in (a, b):
            v = self._op("min", self._op("max", self.read(op, _S32), self._k(lo, _S32), t=_S32), self._k(hi, _S32),
                         t=_S32)
            parts.append(self._op("and", v, self._k((1 << n) - 1), t=_S32))
        r = self._op("or", self._op("shl", parts[0], self._k(n), t=_S32), parts[1], t=_S32)
        if n < 16:  # the bits above the 2n packed ones are c's low bits
            c = self._op("shl", self.read(inst.operands[3], _U32), self._k(2 * n))
            r = self._op("or", r, c)
        self.write(d, r)

    def _to_fp8(self, f, kind: str):
        """The 8-bit code (u32) of f32 ``f`` rounded to nearest even, saturated to the finite range."""
        m, bias, top = _FP8[kind]
        x = self.emit("mov", _U32, [f], _U32).result
        sign = self._op("and", self._op("shr", x, self._k(24)), self._k(0x80))
        ax = self._op("and", x, self._k(0x7FFFFFFF))
        ex = self._op("shr", ax, self._k(23))
        mant = self._op("or", self._op("and", ax, self._k(0x7FFFFF)), self._k(0x800000))
        # binade E = max(ex - 127, 1 - bias); quantum 2^(E - m); shift of the 24-bit significand: E - m + 150 - ex
        emin = 127 + 1 - bias  # the f32 biased exponent of the smallest normal fp8 binade
        e_eff = self._op("max", ex, self._k(emin))
        sh = self._op("min", self._op("sub", self._op("add", e_eff, self._k(150 - m - 127)), ex), self._k(31))
        q0 = self._op("shr", mant, sh)
        rem = self._op("and", mant, self._op("sub", self._op("shl", self._k(1), sh), self._k(1)))
        half = self._op("shl", self._k(1), self._op("sub", sh, self._k(1)))
        up = self._op("or", self._op("setp", rem, half, cmp="gt"),
                      self.emit("and", PRED, [self._op("setp", rem, half, cmp="eq"),
                                              self._op("setp", self._op("and", q0, self._k(1)), self._k(0),
                                                       cmp="ne")], PRED).result, t=PRED)
        q = self._op("add", q0, self.emit("selp", _U32, [self._k(1), self._k(0), up], _U32).result)
        # code = (E + bias) << m + q - 2^m, E + bias = e_eff - emin + 1
        code = self._op("sub", self._op("add", self._op("shl", self._op("sub", e_eff, self._k(emin - 1)),
                                                                self._k(m)), q), self._k(1 << m))
        code = self._op("min", code, self._k(top))
        nan = self._op("setp", ax, self._k(0x7F800000), cmp="gt")
        code = self._op("or", code, sign)
        return self.emit("selp", _U32, [self._k(0x7F), code, nan], _U32).result

    def _from_fp8(self, code, kind: str):
        """The f16 bit pattern (u32) of fp8 ``code``: exact (the fp8 bits placed in an f16's, times 2^(15-bias)
        for e4m3; e5m2 is an f16's upper byte)."""
        m, bias, _ = _FP8[kind]
        f16 = ptx_type("f16")
        if kind == "e5m2x2":
            h = self._op("shl", code, self._k(8))
            nan = self._op("setp", self._op("and", code, self._k(0x7F)), self._k(0x7C), cmp="gt")
        else:
            sign = self._op("shl", self._op("and", code, self._k(0x80)), self._k(8))
            mag = self._op("shl", self._op("and", code, self._k(0x7F)), self._k(10 - m))
            raw = self.emit("cvt", ptx_type("u16"), [self._op("or", sign, mag)], ptx_type("u16"), src="u32").result
            scaled = self.emit("mul", f16, [self.emit("mov", f16, [raw], f16).result,
                                            Const(f16, 0x5C00)], f16, rnd="rn").result  # 2^8
            h = self._op("and", self.emit("cvt", _U32, [self.emit("mov", ptx_type("u16"), [scaled],
                                                                  ptx_type("u16")).result], _U32, src="u16").result,
                         self._k(0xFFFF))
            nan = self._op("setp", self._op("and", code, self._k(0x7F)), self._k(0x7F), cmp="eq")
        return self.emit("selp", _U32, [self._k(0x7FFF), h, nan], _U32).result


_SEL = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}
_S64 = ptx_type("s64")
_VCMP = ("eq", "ne", "lt", "le", "gt", "ge")


class ScalarVideoLowering:
    def op_vadd(self, inst) -> None:
        self._video(inst, "add")

    def op_vsub(self, inst) -> None:
        self._video(inst, "sub")

    def op_vabsdiff(self, inst) -> None:
        self._video(inst, "absdiff")

    def op_vmin(self, inst) -> None:
        self._video(inst, "min")

    def op_vmax(self, inst) -> None:
        self._video(inst, "max")

    def op_vshl(self, inst) -> None:
        self._video(inst, "shl")

    def op_vshr(self, inst) -> None:
        self._video(inst, "shr")

    def op_vset(self, inst) -> None:
        self._video(inst, "set")

    def _vshift(self, vop: str, ta, tb, mode: str):
        """vshl/vshr: ``.clamp`` limits the (unsigned) count to 32, ``.wrap`` takes it modulo 32; ``ta << 32`` is
        formed as ``(ta << 31) << 1`` with the intermediate clamped to +-2^62 (its low 32 bits are 0 either way,
        and a saturation sees a value beyond every 32-bit range of the right sign)."""
        if mode == "wrap":
            tb = self._op("and", tb, self._k(31, _S64), t=_S64)
        else:
            tb = self._op("min", tb, self._k(32, _S64), t=_S64)
        count = self.emit("cvt", _U32, [tb], _U32, src="s64").result
        if vop == "shr":
            return self._op("shr", ta, count, t=_S64)
        tmp = self._op("shl", ta, self._op("min", count, self._k(31)), t=_S64)
        big = self._op("shl", self._op("min", self._op("max", tmp, self._k(-(1 << 62), _S64), t=_S64),
                                       self._k(1 << 62, _S64), t=_S64), self._k(1), t=_S64)
        is32 = self._op("setp", count, self._k(32), cmp="eq")
        return self.emit("selp", _S64, [big, tmp, is32], _S64).result

    def _scalar_sel(self, inst, op: RegPart):
        """(shift, width) of a scalar video instruction's selector ``.b0``-``.b3``/``.h0``/``.h1``; another
        (a SIMD one's, ``.h10``) is a located error, as ptxas's "Incorrect video selector"."""
        if op.sel not in _SEL:
            raise self.error(f"'{_text(inst)}': .{op.sel} is not a selector of a scalar video instruction (.b0-.b3, "
                             ".h0, .h1)", PtxSemanticError)
        return _SEL[op.sel]

    def _vsource(self, inst, op, t: str):
        """A video source as s64: the selected part (the whole word without a selector) extended by ``t``."""
        shift, width = self._scalar_sel(inst, op) if isinstance(op, RegPart) else (0, 32)
        v = self.read(op.reg if isinstance(op, RegPart) else op, _U32)
        if shift:
            v = self._op("shr", v, self._k(shift))
        return self.emit("cvt", _S64, [v], _S64, src=f"{t[0]}{width}").result

    def _video(self, inst, vop: str) -> None:
        mods = inst.modifiers
        ts = [m for m in mods if m in ("s32", "u32")]
        cmp = next((m for m in mods if m in _VCMP), None) if vop == "set" else None
        mode = next((m for m in mods if m in ("clamp", "wrap")), None) if vop in ("shl", "shr") else None
        extra = [m for m in mods if m not in ("s32", "u32", "sat", "add", "min", "max", cmp, mode)]
        if vop == "set":  # vset.atype.btype.cmp: the result is 0 or 1, unsigned
            ts = ["u32", *ts]
        if len(ts) != 3 or extra or vop == "set" and (cmp is None or "sat" in mods) or \
                vop in ("shl", "shr") and (mode is None or ts[2] != "u32"):
            raise self.error(f"'{_text(inst)}' is not supported yet")
        dt, at, bt = ts
        op2 = next((m for m in mods if m in ("add", "min", "max")), None)
        ops = inst.operands
        d = ops[0]
        merge = isinstance(d, RegPart)
        if merge:
            self._scalar_sel(inst, d)
        # with neither, a c operand is read by nothing: ptxas 13.0 makes the same SASS of v{add,sub,absdiff,min,max,
        # shl,shr,set} d, a, b, c as of d, a, b (sm_90a; c is not even loaded), though the PTX ISA writes c only with
        # a secondary operation or d.dsel
        self._check(inst, 4 if op2 or merge or len(ops) == 4 else 3)
        if op2 and merge:
            raise self.error(f"'{_text(inst)}': a secondary operation and a merge", PtxSemanticError)
        ta, tb = self._vsource(inst, ops[1], at), self._vsource(inst, ops[2], bt)
        if vop == "set":
            p = self._op("setp", ta, tb, t=_S64, cmp=cmp)
            tmp = self.emit("selp", _S64, [self._k(1, _S64), self._k(0, _S64), p], _S64).result
        elif vop in ("shl", "shr"):
            tmp = self._vshift(vop, ta, tb, mode)
        elif vop == "absdiff":
            tmp = self._op("max", self._op("sub", ta, tb, t=_S64), self._op("sub", tb, ta, t=_S64), t=_S64)
        else:
            tmp = self._op(vop, ta, tb, t=_S64)
        signed = dt == "s32"
        width = _SEL[d.sel][1] if merge else 32
        if "sat" in mods:
            lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
            tmp = self._op("min", self._op("max", tmp, self._k(lo, _S64), t=_S64), self._k(hi, _S64), t=_S64)
        r = self.emit("cvt", _U32, [tmp], _U32, src="s64").result
        if op2:
            c = self.read(ops[3], _U32)
            rt = _S32 if signed and op2 != "add" else _U32
            r = self._op(op2, r, c, t=rt)
        if merge:
            shift, w = _SEL[d.sel]
            mask = ((1 << w) - 1) << shift
            c = self._op("and", self.read(ops[3], _U32), self._k(~mask))
            part = self._op("and", self._op("shl", r, self._k(shift)), self._k(mask))
            self.write(d.reg, self._op("or", c, part))
            return
        self.write(d, r)


def _masks(n: int) -> dict[str, tuple[int, ...]]:
    """The ``.mask`` names of the n-way SIMD video instructions -> the elements they select: ``.h0``, ``.h1``,
    ``.h10``; ``.b0`` .. ``.b3210`` (every non-empty set of bytes, digits in descending order)."""
    letter = "h" if n == 2 else "b"
    out = {}
    for bits in range(1, 1 << n):
        elems = tuple(i for i in range(n) if bits >> i & 1)
        out[letter + "".join(str(i) for i in reversed(elems))] = elems
    return out


_SIMD_MASKS = {2: _masks(2), 4: _masks(4)}


class SimdVideoLowering:
    """``vop2``/``vop4`` ``.dtype.atype.btype{.sat} d{.mask}, a{.asel}, b{.bsel}, c`` and ``... .add`` (PTX ISA
    9.7.10.3, "SIMD video instructions"): the selectors pick each element from the four half-words (``.hxy``) or
    eight bytes (``.bxyzw``) of the pair ``b:a`` (0, 1 (.. 3) are ``a``'s, the others ``b``'s; the last digit
    names element 0), by default ``a``'s for ``a`` (``.h10``/``.b3210``) and ``b``'s for ``b``
    (``.h32``/``.b7654``); each element extended by its type, the operation exact; merge form: ``.sat`` clamps
    each to dtype's element range, the elements in ``.mask`` (by default all) packed, the others ``c``'s;
    ``.add``: ``d = c + the sum of the results of the elements in .mask``."""

    def simd_sources(self, inst, n: int):
        """(d's register, the elements of ``.mask``, ``element(i, operand, kind)``: operand ``a`` (0) or ``b``
        (1)'s element ``i`` as selected, extended by ``kind`` to s32) of a SIMD video instruction; a selector the
        manual does not define for it is a located error (as ptxas's "Incorrect video selector")."""
        d, a, b, c = inst.operands
        letter, w = ("h", 16) if n == 2 else ("b", 8)
        mask = tuple(range(n))
        if isinstance(d, RegPart):
            if d.sel not in _SIMD_MASKS[n]:
                raise self.error(f"'{_text(inst)}': .{d.sel} is not a mask of a {n}-way SIMD video instruction "
                                 f"(one of {', '.join('.' + m for m in _SIMD_MASKS[n])})", PtxSemanticError)
            mask, d = _SIMD_MASKS[n][d.sel], d.reg
        if isinstance(c, RegPart):
            raise self.error(f"'{_text(inst)}': operand c takes no selector", PtxSemanticError)
        sels, regs = [], []
        for k, op in enumerate((a, b)):
            if isinstance(op, RegPart):
                digits = op.sel[1:]
                if op.sel[0] != letter or len(digits) != n or any(int(x) >= 2 * n for x in digits):
                    want = ".hxy (x, y in 0-3)" if n == 2 else ".bxyzw (x, y, z, w in 0-7)"
                    raise self.error(f"'{_text(inst)}': .{op.sel} is not a source selector of a {n}-way SIMD "
                                     f"video instruction ({want})", PtxSemanticError)
                sels.append(tuple(int(digits[n - 1 - i]) for i in range(n)))
                op = op.reg
            else:
                sels.append(tuple(range(k * n, k * n + n)))
            regs.append(op)
        va, vb = self.read(regs[0], _U32), self.read(regs[1], _U32)

        def element(i: int, operand: int, kind: str):
            part = sels[operand][i]
            return self.simd_element(va if part < n else vb, part % n, w, kind)

        return d, mask, element

    def simd_merge(self, inst, d, mask, n: int, packed):
        """Write the merge form's result: the elements in ``mask`` from ``packed`` (already in place), the others
        from ``c`` (PTX: ``d |= mask[i] ? t[i] : Vc[i]``)."""
        c = self.read(inst.operands[3], _U32)
        w = 32 // n
        keep = sum(((1 << w) - 1) << (i * w) for i in range(n) if i not in mask)
        if keep:
            packed = self._op("or", packed, self._op("and", c, self._k(keep), t=_S32), t=_S32)
        self.write(d, packed)

    def simd_element(self, v, i: int, w: int, kind: str):
        """Element ``i`` of width ``w`` of the packed 32-bit value ``v`` (bits ``i*w`` up), sign-extended
        (``kind`` 's') or zero-extended ('u') to s32: the operands of the SIMD video and 16x2 instructions."""
        return self.emit("cvt", _S32, [self._op("shr", v, self._k(i * w)) if i else v], _S32,
                         src=f"{kind}{w}").result

    def op_vadd2(self, inst) -> None:
        self._simd(inst, "add", 2)

    def op_vsub2(self, inst) -> None:
        self._simd(inst, "sub", 2)

    def op_vabsdiff2(self, inst) -> None:
        self._simd(inst, "absdiff", 2)

    def op_vmin2(self, inst) -> None:
        self._simd(inst, "min", 2)

    def op_vmax2(self, inst) -> None:
        self._simd(inst, "max", 2)

    def op_vadd4(self, inst) -> None:
        self._simd(inst, "add", 4)

    def op_vsub4(self, inst) -> None:
        self._simd(inst, "sub", 4)

    def op_vabsdiff4(self, inst) -> None:
        self._simd(inst, "absdiff", 4)

    def op_vmin4(self, inst) -> None:
        self._simd(inst, "min", 4)

    def op_vmax4(self, inst) -> None:
        self._simd(inst, "max", 4)

    def _simd(self, inst, vop: str, n: int) -> None:
        mods = inst.modifiers
        ts = [m for m in mods if m in ("s32", "u32")]
        extra = [m for m in mods if m not in ("s32", "u32", "sat", "add")]
        if len(ts) != 3 or extra or "sat" in mods and "add" in mods:
            raise self.error(f"'{_text(inst)}' is not supported yet")
        self._check(inst, 4)
        dt, at, bt = ts
        w = 32 // n
        d, mask, element = self.simd_sources(inst, n)
        out = None
        for i in mask:
            ea, eb = element(i, 0, at[0]), element(i, 1, bt[0])
            if vop == "absdiff":
                r = self._op("max", self._op("sub", ea, eb, t=_S32), self._op("sub", eb, ea, t=_S32), t=_S32)
            elif vop == "avrg":  # (a + b + (a + b >= 0)) >> 1: halves round away from zero (xcc.ir.lower_bits)
                r = self.simd_average(ea, eb)
            else:
                r = self._op(vop, ea, eb, t=_S32)
            if "add" not in mods:
                if "sat" in mods:
                    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt == "s32" else (0, (1 << w) - 1)
                    r = self._op("min", self._op("max", r, self._k(lo, _S32), t=_S32), self._k(hi, _S32), t=_S32)
                r = self._op("and", r, self._k((1 << w) - 1, _S32), t=_S32)
                if i:
                    r = self._op("shl", r, self._k(i * w), t=_S32)
                out = r if out is None else self._op("or", out, r, t=_S32)
            else:
                out = r if out is None else self._op("add", out, r, t=_S32)
        if "add" in mods:
            self.write(d, self._op("add", out, self.read(inst.operands[3], _S32), t=_S32))
        else:
            self.simd_merge(inst, d, mask, n, out)


def _text(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))
