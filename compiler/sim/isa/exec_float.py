"""Executors of the f32 and f64 instructions (arithmetic, compare, min/max, MUFU, division, rounding and
the int <-> float conversions); registered in :data:`xcc.sim.isa.exec_base.IMPLS`."""

from __future__ import annotations

from xcc.semantics import floating
from xcc.semantics.compare import compare
from xcc.semantics.convert import convert
from xcc.sim.isa.exec_base import Binder, _setp, impl


# ============================================================================= floating point
def _fmods(x: Binder) -> dict:
    """Keyword arguments of the semantics call for the RND, FTZ and SAT modifiers."""
    return dict(rnd=x.mod("rnd").lower(), ftz=x.flag("FTZ"), sat=x.flag("SAT"))


def _flush(v):
    """``cvt.ftz.f32.f32``: subnormal f32 inputs become sign-preserving zeros."""
    return convert(v, 32, "f", 32, "f", ftz=True)


@impl("FSETP")
def _fsetp(x: Binder):
    a, b = x.r("a"), x.ric("b")
    if x.flag("FTZ"):
        a0, b0 = a, b
        a, b = (lambda sel, n: _flush(a0(sel, n))), (lambda sel, n: _flush(b0(sel, n)))
    return _setp(x, a, b, lambda cmp, a, b: compare(cmp, a, b, 32, "f"))


@impl("FADD")
def _fadd(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, kw = (floating.fsub if x.flag("NEG_B") else floating.fadd), _fmods(x)
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, **kw))


@impl("FMUL")
def _fmul(x: Binder):
    a, b, d, kw = x.r("a"), x.ric("b"), x.set_r(), _fmods(x)
    return lambda sel, idx, n: d(sel, floating.fmul(a(sel, n), b(sel, n), 32, **kw))


@impl("FFMA")
def _ffma(x: Binder):
    a, b, c, d, kw = x.r("a"), x.ric("b"), x.r("c"), x.set_r(), _fmods(x)
    return lambda sel, idx, n: d(sel, floating.ffma(a(sel, n), b(sel, n), c(sel, n), 32, **kw))


@impl("FMNMX")
def _fmnmx(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, ftz = (floating.fmin if x.mod("minmax") == "MIN" else floating.fmax), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, ftz=ftz))


_MUFU = {"RCP": "rcp", "SQRT": "sqrt", "RSQ": "rsqrt", "EX2": "ex2", "LG2": "lg2", "SIN": "sin", "COS": "cos",
         "TANH": "tanh"}


@impl("MUFU")
def _mufu(x: Binder):
    """RCP/SQRT are correctly rounded (.RN exact; .APPROX computed the same way, within PTX's bounds)."""
    a, d = x.r("a"), x.set_r()
    op, ftz = _MUFU[x.mod("fn")], x.flag("FTZ")
    return lambda sel, idx, n: d(sel, floating.funary(op, a(sel, n), 32, "rn", ftz=ftz))


@impl("I2F")
def _i2f(x: Binder):
    a, d = x.r("a"), x.set_r()
    kind, rnd = ("s" if x.mod("type") == "S32" else "u"), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 32, kind, rnd=rnd))


@impl("F2I")
def _f2i(x: Binder):
    a, d = x.r("a"), x.set_r()
    kind, rnd, ftz = ("s" if x.mod("type") == "S32" else "u"), x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, kind, 32, "f", rnd=rnd, ftz=ftz))


@impl("F2F.F64.F32")
def _f2f_wide(x: Binder):
    a, d = x.r("a"), x.set_w()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 64, "f", 32, "f"))


@impl("F2F.F32.F64")
def _f2f_narrow(x: Binder):
    a, d = x.w("a"), x.set_r()
    rnd, ftz = x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 64, "f", rnd=rnd, ftz=ftz))


@impl("FDIV")
def _fdiv(x: Binder):
    """Every prec computes xcc.semantics' division (correctly rounded), within PTX's bounds; APPROX
    with div.approx's zero reciprocal for 2^126 < |b| < 2^128."""
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    rnd, ftz, approx = x.mod("rnd").lower(), x.flag("FTZ"), x.mod("prec") == "APPROX"
    return lambda sel, idx, n: d(sel, floating.fdiv(a(sel, n), b(sel, n), 32, rnd, ftz=ftz, approx=approx))


@impl("FRND")
def _frnd(x: Binder):
    a, d = x.r("a"), x.set_r()
    rnd, ftz = x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 32, "f", rnd=rnd, ftz=ftz))


@impl("DRND")
def _drnd(x: Binder):
    a, d, rnd = x.w("a"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 64, "f", 64, "f", rnd=rnd))


def _int_kind(x: Binder) -> str:
    return "s" if x.mod("type") in ("S32", "S64") else "u"


@impl("I2F.64", "I2F.F64", "I2F.F64.64")
def _i2f_wide(x: Binder):
    """Integer -> float where a side is 64 bits: I2F.64 (s64/u64 -> f32), I2F.F64 (32-bit -> f64),
    I2F.F64.64 (64-bit -> f64)."""
    mn = x.inst.mnemonic
    src_bits, dst_bits = (32 if mn == "I2F.F64" else 64), (32 if mn == "I2F.64" else 64)
    a = x.r("a") if src_bits == 32 else x.w("a")
    d = x.set_r() if dst_bits == 32 else x.set_w()
    kind = _int_kind(x)
    rnd = x.mod("rnd").lower() if any(m.name == "rnd" for m in x.inst.d.mods) else None
    rnd = None if rnd == "rn" else rnd
    return lambda sel, idx, n: d(sel, convert(a(sel, n), dst_bits, "f", src_bits, kind, rnd=rnd))


@impl("F2I.64", "F2I.F64", "F2I.F64.64")
def _f2i_wide(x: Binder):
    """Float -> integer where a side is 64 bits: F2I.64 (f32 -> 64-bit), F2I.F64 (f64 -> 32-bit),
    F2I.F64.64 (f64 -> 64-bit); saturating; a NaN gives the destination's top bit alone, as an H200 does
    (xcc.semantics.convert.nan_top_bit)."""
    mn = x.inst.mnemonic
    src_bits, dst_bits = (32 if mn == "F2I.64" else 64), (32 if mn == "F2I.F64" else 64)
    a = x.r("a") if src_bits == 32 else x.w("a")
    d = x.set_r() if dst_bits == 32 else x.set_w()
    kind, rnd = _int_kind(x), x.mod("rnd").lower()
    ftz = x.flag("FTZ") if src_bits == 32 else False
    return lambda sel, idx, n: d(sel, convert(a(sel, n), dst_bits, kind, src_bits, "f", rnd=rnd, ftz=ftz))


@impl("DADD")
def _dadd(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    fn, rnd = (floating.fsub if x.flag("NEG_B") else floating.fadd), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 64, rnd))


@impl("DMUL")
def _dmul(x: Binder):
    a, b, d, rnd = x.w("a"), x.wic("b"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.fmul(a(sel, n), b(sel, n), 64, rnd))


@impl("DFMA")
def _dfma(x: Binder):
    a, b, c, d, rnd = x.w("a"), x.wic("b"), x.w("c"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.ffma(a(sel, n), b(sel, n), c(sel, n), 64, rnd))


@impl("DSETP")
def _dsetp(x: Binder):
    return _setp(x, x.w("a"), x.wic("b"), lambda cmp, a, b: compare(cmp, a, b, 64, "f"))


@impl("DMNMX")
def _dmnmx(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    fn = floating.fmin if x.mod("minmax") == "MIN" else floating.fmax
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 64))


@impl("DDIV")
def _ddiv(x: Binder):
    a, b, d, rnd = x.w("a"), x.wic("b"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.fdiv(a(sel, n), b(sel, n), 64, rnd))


@impl("DSQRT")
def _dsqrt(x: Binder):
    a, d, rnd = x.w("a"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.funary("sqrt", a(sel, n), 64, rnd))


