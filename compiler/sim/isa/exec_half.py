"""What the half ISA instructions do when interpreted (executors registered with
:func:`xcc.sim.isa.exec_base.impl`; imported by :mod:`xcc.sim.isa.executors` before its completeness
check).

Half-precision arithmetic (HADD2, HMUL2, HFMA2, HMNMX2, HSETP2, HMUFU), conversions to and from
f16/bf16 (F2F.16, F2F.16.F64, F2F.F64.16, I2F.16, I2F.16.64, F2I.16, F2I.16.64) and the carry-chain
instructions (IADD3.CC, IADD.64.CC, IMAD.CC, IMAD.64.CC).  Every value-level operation is the
function of :mod:`xcc.semantics` that the IR interpreter calls for the same PTX instruction
(:mod:`~xcc.semantics.halfp`, :func:`~xcc.semantics.convert.convert`,
:func:`~xcc.semantics.integer.add_carry` / ``sub_borrow`` / ``mad_carry``), so the engines cannot
disagree; this module only wires operands to them.

Register layout: an f16/bf16 value lives zero-extended in a 32-bit register (element 0); a packed
x2 value holds element 0 in bits 15:0 and element 1 in bits 31:16.  ``shape`` X2 applies an
operation to both elements; H0 to element 0 of every operand, the result zero-extended.
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import halfp
from xcc.semantics import integer as I
from xcc.semantics.convert import convert
from xcc.semantics.rounding import FORMATS
from xcc.sim.isa.exec_base import Binder, _setp, impl

U32 = np.uint32
_KIND = {"F16": (16, "f"), "BF16": (16, "bf"), "F32": (32, "f")}


def _fmt(x: Binder):
    return FORMATS["bf16" if x.mod("type") == "BF16" else "f16"]


def _elementwise(x: Binder, fn):
    """``fn`` (on uint16 element arrays) applied per the shape modifier: both elements, or element 0."""
    if x.mod("shape") == "X2":
        return lambda *args: halfp.lanewise(fn, *args)
    return lambda *args: np.asarray(fn(*[halfp.lane(a, 0) for a in args])).astype(U32)


def _rfs(x: Binder) -> dict:
    """The rounding, .ftz and .sat keyword arguments of a halfp call."""
    return dict(rnd=x.mod("rnd").lower(), ftz=x.flag("FTZ"), sat=x.flag("SAT"))


@impl("HADD2")
def _hadd2(x: Binder):
    a, b, d, fmt, kw = x.r("a"), x.ric("b"), x.set_r(), _fmt(x), _rfs(x)
    fn = halfp.hsub if x.flag("NEG_B") else halfp.hadd
    op = _elementwise(x, lambda p, q: fn(p, q, fmt, **kw))
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n)))


@impl("HMUL2")
def _hmul2(x: Binder):
    a, b, d, fmt, kw = x.r("a"), x.ric("b"), x.set_r(), _fmt(x), _rfs(x)
    op = _elementwise(x, lambda p, q: halfp.hmul(p, q, fmt, **kw))
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n)))


@impl("HFMA2")
def _hfma2(x: Binder):
    a, b, c, d, fmt, kw = x.r("a"), x.ric("b"), x.r("c"), x.set_r(), _fmt(x), _rfs(x)
    relu, oob = x.flag("RELU"), x.flag("OOB")
    op = _elementwise(x, lambda p, q, r: halfp.hfma(p, q, r, fmt, **kw, relu=relu, oob=oob))
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n), c(sel, n)))


@impl("HMNMX2")
def _hmnmx2(x: Binder):
    a, b, d, fmt = x.r("a"), x.ric("b"), x.set_r(), _fmt(x)
    pick_min, ftz, nan, relu = x.mod("minmax") == "MIN", x.flag("FTZ"), x.flag("NAN"), x.flag("RELU")
    op = _elementwise(x, lambda p, q: halfp.hminmax(p, q, fmt, pick_min, ftz, nan, relu))
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n)))


@impl("HSETP2")
def _hsetp2(x: Binder):
    fmt, k, ftz = _fmt(x), int(x.mod("lane")[1]), x.flag("FTZ")
    return _setp(x, x.r("a"), x.ric("b"),
                 lambda cmp, a, b: halfp.hcompare(cmp, halfp.lane(a, k), halfp.lane(b, k), fmt, ftz))


@impl("HMUFU")
def _hmufu(x: Binder):
    a, d, fmt, ftz, fn = x.r("a"), x.set_r(), _fmt(x), x.flag("FTZ"), x.mod("fn").lower()
    op = _elementwise(x, lambda p: halfp.happrox(fn, p, fmt, ftz))
    return lambda sel, idx, n: d(sel, op(a(sel, n)))


def _cvt_flags(x: Binder) -> dict:
    return dict(sat=x.flag("SAT"), relu=x.flag("RELU"), satfinite=x.flag("SATFINITE"))


def _rnd(x: Binder) -> str | None:
    """The rounding modifier for ``convert`` (None for the default RN, as the IR passes it)."""
    r = x.mod("rnd").lower()
    return None if r == "rn" else r


@impl("F2F.16")
def _f2f16(x: Binder):
    """Float -> float among f16, bf16 and f32 (one side 16 bits)."""
    a, d = x.r("a"), x.set_r()
    (db, dk), (sb, sk) = _KIND[x.mod("dtype")], _KIND[x.mod("stype")]
    kw = dict(rnd=_rnd(x), ftz=x.flag("FTZ"), **_cvt_flags(x))
    return lambda sel, idx, n: d(sel, convert(a(sel, n) if sb == 32 else halfp.lane(a(sel, n), 0),
                                              db, dk, sb, sk, **kw).astype(U32))


@impl("F2F.16.F64")
def _f2f16_f64(x: Binder):
    a, d = x.w("a"), x.set_r()
    db, dk = _KIND[x.mod("dtype")]
    kw = dict(rnd=_rnd(x), **_cvt_flags(x))
    return lambda sel, idx, n: d(sel, convert(a(sel, n), db, dk, 64, "f", **kw).astype(U32))


@impl("F2F.F64.16")
def _f2f_f64_16(x: Binder):
    a, d = x.r("a"), x.set_w()
    sb, sk = _KIND[x.mod("stype")]
    sat = x.flag("SAT")
    return lambda sel, idx, n: d(sel, convert(halfp.lane(a(sel, n), 0), 64, "f", sb, sk, sat=sat))


@impl("I2F.16", "I2F.16.64")
def _i2f16(x: Binder):
    wide = x.inst.mnemonic == "I2F.16.64"
    a, d = (x.w("a") if wide else x.r("a")), x.set_r()
    db, dk = _KIND[x.mod("dtype")]
    sk = "s" if x.mod("type") in ("S32", "S64") else "u"
    kw = dict(rnd=_rnd(x), **_cvt_flags(x))
    bits = 64 if wide else 32
    return lambda sel, idx, n: d(sel, convert(a(sel, n), db, dk, bits, sk, **kw).astype(U32))


@impl("F2I.16", "F2I.16.64")
def _f2i16(x: Binder):
    wide = x.inst.mnemonic == "F2I.16.64"
    a = x.r("a")
    sb, sk = _KIND[x.mod("stype")]
    if wide:
        d, kind, bits = x.set_w(), ("s" if x.mod("type") == "S64" else "u"), 64
    else:
        t = x.mod("dtype")
        d, kind, bits = x.set_r(), t[0].lower(), int(t[1:])
    rnd = x.mod("rnd").lower()
    conv = (lambda v: v) if wide else (lambda v: v.astype(U32))  # a narrow result zero-extended
    return lambda sel, idx, n: d(sel, conv(convert(halfp.lane(a(sel, n), 0), bits, kind, sb, sk, rnd=rnd)))


# ----------------------------------------------------------------------------- carry chains
def _carry_fn(x: Binder, bits: int):
    if x.mod("op") == "SUB":
        return lambda a, b, cin: I.sub_borrow(a, b, cin, bits)
    return lambda a, b, cin: I.add_carry(a, b, cin, bits)


@impl("IADD3.CC", "IADD.64.CC")
def _iadd_cc(x: Binder):
    """d, pd = a +/- b +/- ps with the carry (borrow) out: PTX's add.cc/addc/sub.cc/subc."""
    wide = x.inst.mnemonic == "IADD.64.CC"
    a, b, d = (x.w("a"), x.wic("b"), x.set_w()) if wide else (x.r("a"), x.ric("b"), x.set_r())
    ps, pd = x.p("ps"), x.set_p("pd")
    fn = _carry_fn(x, 64 if wide else 32)

    def run(sel, idx, n):
        v, carry = fn(a(sel, n), b(sel, n), ps(sel, n))
        d(sel, v)
        pd(sel, carry)

    return run


@impl("IMAD.CC", "IMAD.64.CC")
def _imad_cc(x: Binder):
    """d, pd = (a * b).mode + c + ps with the carry out of the addition: PTX's mad.cc/madc."""
    wide = x.inst.mnemonic == "IMAD.64.CC"
    if wide:
        a, b, c, d, bits = x.w("a"), x.wic("b"), x.w("c"), x.set_w(), 64
    else:
        a, b, c, d, bits = x.r("a"), x.ric("b"), x.r("c"), x.set_r(), 32
    ps, pd = x.p("ps"), x.set_p("pd")
    hi, signed = x.mod("mode") == "HI", x.mod("type") in ("S32", "S64")

    def run(sel, idx, n):
        v, carry = I.mad_carry(a(sel, n), b(sel, n), c(sel, n), ps(sel, n), bits, hi, signed)
        d(sel, v)
        pd(sel, carry)

    return run
