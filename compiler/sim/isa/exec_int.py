"""Executors of the integer instructions (add, multiply-add, compare, logic, shifts, bit fields, dot
products, division) and the predicate logic; registered in :data:`xcc.sim.isa.exec_base.IMPLS`."""

from __future__ import annotations

import numpy as np

from xcc.semantics import integer as I
from xcc.semantics.compare import compare, select
from xcc.sim.isa.exec_base import U32, Binder, _setp, impl


# ============================================================================= integer
@impl("IADD3")
def _iadd3(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    if x.flag("NEG_A"):
        a0 = a
        a = lambda sel, n: I.ineg(a0(sel, n), 32)  # noqa: E731
    if x.flag("NEG_B"):
        return lambda sel, idx, n: d(sel, I.add(I.add(a(sel, n), I.ineg(b(sel, n), 32), 32), c(sel, n), 32))
    return lambda sel, idx, n: d(sel, I.add(I.add(a(sel, n), b(sel, n), 32), c(sel, n), 32))


@impl("IADD.64")
def _iadd64(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    op = I.sub if x.flag("NEG_B") else I.add
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n), 64))


@impl("IMAD")
def _imad(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    mode, signed = x.mod("mode").lower(), x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 32, mode, signed))


@impl("IMAD.WIDE")
def _imad_wide(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.w("c"), x.set_w()
    signed = x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 32, "wide", signed))


@impl("IMAD.64")
def _imad64(x: Binder):
    a, b, c, d = x.w("a"), x.wic("b"), x.w("c"), x.set_w()
    mode, signed = x.mod("mode").lower(), x.mod("type") == "S64"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 64, mode, signed))


@impl("ISETP")
def _isetp(x: Binder):
    kind = "s" if x.mod("type") == "S32" else "u"
    return _setp(x, x.r("a"), x.ric("b"), lambda cmp, a, b: compare(cmp, a, b, 32, kind))


@impl("ISETP.64")
def _isetp64(x: Binder):
    kind = "s" if x.mod("type") == "S64" else "u"
    return _setp(x, x.w("a"), x.wic("b"), lambda cmp, a, b: compare(cmp, a, b, 64, kind))


@impl("PLOP3")
def _plop3(x: Binder):
    pa, ps, pd = x.p("pa"), x.p("ps"), x.set_p("pd")
    lut = int(x.mod("lut"), 16)
    table = np.array([(lut >> i) & 1 for i in range(4)], bool)  # bit (pa << 1) | ps
    return lambda sel, idx, n: pd(sel, table[(pa(sel, n).astype(np.intp) << 1) | ps(sel, n)])


@impl("SEL")
def _sel(x: Binder):
    a, b, ps, d = x.r("a"), x.ric("b"), x.p("ps"), x.set_r()
    return lambda sel, idx, n: d(sel, select(ps(sel, n), a(sel, n), b(sel, n)))


@impl("P2R")
def _p2r(x: Binder):
    ps, d = x.p("ps"), x.set_r()
    one, zero = U32(1), U32(0)
    return lambda sel, idx, n: d(sel, select(ps(sel, n), one, zero))


@impl("LOP3")
def _lop3(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    lut = int(x.mod("lut"), 16)
    return lambda sel, idx, n: d(sel, I.lop3(a(sel, n), b(sel, n), c(sel, n), lut, 32))


def _shift(x: Binder, fn, bits: int, signed: bool):
    a = x.r("a") if bits == 32 else x.w("a")
    b, d = x.ric("b"), (x.set_r() if bits == 32 else x.set_w())
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), bits, signed))


@impl("SHL")
def _shl(x: Binder):
    return _shift(x, I.shl, 32, False)


@impl("SHR")
def _shr(x: Binder):
    return _shift(x, I.shr, 32, x.mod("type") == "S32")


@impl("SHL.64")
def _shl64(x: Binder):
    return _shift(x, I.shl, 64, False)


@impl("SHR.64")
def _shr64(x: Binder):
    return _shift(x, I.shr, 64, x.mod("type") == "S64")


@impl("SGXT")
def _sgxt(x: Binder):
    """Sign-extend from the low b bits (b >= 32: a unchanged; b == 0: 0): (a << (32-b)) >>s (32-b)."""
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    u32 = U32(32)

    def run(sel, idx, n):
        s = I.sub(u32, I.imin(b(sel, n), u32, 32), 32)
        d(sel, I.shr(I.shl(a(sel, n), s, 32), s, 32, True))

    return run


@impl("IMNMX")
def _imnmx(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, signed = (I.imin if x.mod("minmax") == "MIN" else I.imax), x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, signed))


def _unary(x: Binder, fn):
    a, d = x.r("a"), x.set_r()
    return lambda sel, idx, n: d(sel, fn(a(sel, n), 32))


@impl("IABS")
def _iabs(x: Binder):
    return _unary(x, I.iabs)


@impl("POPC")
def _popc(x: Binder):
    return _unary(x, I.popc)


@impl("FLO")
def _flo(x: Binder):
    signed, sh = x.mod("type") == "S32", x.flag("SH")
    return _unary(x, lambda a, bits: I.bfind(a, bits, signed, sh))


@impl("BREV")
def _brev(x: Binder):
    return _unary(x, I.brev)


def _field_control(b):
    """BFE/BFI control word -> (pos, len): bits 7:0 and 15:8."""
    return b & U32(0xFF), (b >> U32(8)) & U32(0xFF)


@impl("BFE", "BFE.64")
def _bfe(x: Binder):
    bits = 64 if x.inst.mnemonic.endswith(".64") else 32
    a, d = (x.w("a"), x.set_w()) if bits == 64 else (x.r("a"), x.set_r())
    b, signed = x.ric("b"), x.mod("type") in ("S32", "S64")

    def run(sel, idx, n):
        pos, ln = _field_control(b(sel, n))
        d(sel, I.bfe(a(sel, n), pos, ln, bits, signed))

    return run


@impl("BFI", "BFI.64")
def _bfi(x: Binder):
    bits = 64 if x.inst.mnemonic.endswith(".64") else 32
    a, c, d = (x.w("a"), x.w("c"), x.set_w()) if bits == 64 else (x.r("a"), x.r("c"), x.set_r())
    b = x.ric("b")

    def run(sel, idx, n):
        pos, ln = _field_control(b(sel, n))
        d(sel, I.bfi(a(sel, n), c(sel, n), pos, ln, bits))

    return run


@impl("PRMT")
def _prmt(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    mode = None if x.mod("mode") == "IDX" else x.mod("mode").lower()
    return lambda sel, idx, n: d(sel, I.prmt(a(sel, n), c(sel, n), b(sel, n), mode))


@impl("SHF")
def _shf(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    left, clamp = x.mod("dir") == "L", not x.flag("W")
    return lambda sel, idx, n: d(sel, I.shf(a(sel, n), c(sel, n), b(sel, n), left, clamp))


@impl("BMSK")
def _bmsk(x: Binder):
    a, b, d, clamp = x.r("a"), x.ric("b"), x.set_r(), not x.flag("W")
    return lambda sel, idx, n: d(sel, I.bmsk(a(sel, n), b(sel, n), clamp))


@impl("IDP.4A")
def _idp4a(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    sa, sb = x.mod("atype") == "S8", x.mod("btype") == "S8"
    return lambda sel, idx, n: d(sel, I.dp4a(a(sel, n), b(sel, n), c(sel, n), sa, sb))


@impl("IDP.2A")
def _idp2a(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    sa, sb, hi = x.mod("atype") == "S16", x.mod("btype") == "S8", x.mod("mode") == "HI"
    return lambda sel, idx, n: d(sel, I.dp2a(a(sel, n), b(sel, n), c(sel, n), sa, sb, hi))


@impl("IDIV", "IDIV.64")
def _idiv(x: Binder):
    if x.inst.mnemonic == "IDIV":
        a, b, d, bits = x.r("a"), x.ric("b"), x.set_r(), 32
    else:
        a, b, d, bits = x.w("a"), x.wic("b"), x.set_w(), 64
    fn, signed = (I.div if x.mod("op") == "DIV" else I.rem), x.mod("type") in ("S32", "S64")
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), bits, signed))


