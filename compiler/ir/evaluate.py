"""Evaluate one pure IR instruction on numpy bit patterns through :mod:`xcc.semantics`.

Shared by the constant folder and the IR interpreter: the IR has one meaning.
"""

from __future__ import annotations

import numpy as np

from xcc.ir.core import Instruction
from xcc.ir.ops import HALF_TYPES, PURE_OPS
from xcc.semantics import floating, halfp, integer
from xcc.semantics.bits import UDTYPE, as_unsigned
from xcc.semantics.compare import compare, select
from xcc.semantics.convert import convert

__all__ = ["HALF_TYPES", "PURE_OPS", "evaluate"]  # the tables live in xcc.ir.ops (no numpy there)

_FLOAT_BINARY = {"add": floating.fadd, "sub": floating.fsub, "mul": floating.fmul, "div": floating.fdiv}


def _rnd(inst: Instruction) -> str:
    return inst.attrs.get("rnd", "rn")


def evaluate(inst: Instruction, args: list[np.ndarray]) -> np.ndarray:
    """The result bit patterns of ``inst`` applied to ``args`` (arrays, one element per thread)."""
    op, t, at = inst.op, inst.type, inst.attrs
    bits = t.bits
    ftz, sat = at.get("ftz", False), at.get("sat", False)
    if op == "setp":
        if t.name in HALF_TYPES:  # x2: element attrs.half (0: bits 15:0)
            x, y = (halfp.lane(a, at.get("half", 0)) if bits == 32 else a for a in args[:2])
            r = halfp.hcompare(at["cmp"], x, y, halfp.fmt_of(t.name), ftz)
        else:
            x, y = args[0], args[1]
            if ftz and t.name == "f32":  # setp.ftz.f32: a subnormal operand compares as a zero of its sign
                x, y = (np.where(as_unsigned(v, 32) & np.uint32(0x7F800000) == 0, as_unsigned(v, 32)
                                 & np.uint32(0x80000000), as_unsigned(v, 32)) for v in (x, y))
            r = compare(at["cmp"], x, y, bits, t.kind)
        if at.get("negate"):
            r = ~r
        if "bool" in at:
            r = integer.INT_BINARY[at["bool"]](r, args[2], 1)
        return r
    if op == "selp":
        return select(args[2], as_unsigned(args[0], bits) if bits > 1 else args[0],
                      as_unsigned(args[1], bits) if bits > 1 else args[1])
    if op == "cvt":
        s = _type(at["src"])
        return convert(args[0], bits, _kind(t), s.bits, _kind(s), at.get("rnd"), sat, ftz,
                       relu=at.get("relu", False), satfinite=at.get("satfinite", False))
    if op == "mov":
        return as_unsigned(args[0], bits)
    if op in _BITS:
        return _BITS[op](inst, args)
    if op in _CARRY:
        d, carry = _CARRY[op](inst, args)
        return carry if at.get("carry") else d
    if t.name in HALF_TYPES:
        return _half(inst, args)
    if t.is_float:
        if op == "div" and at.get("approx"):
            return floating.fdiv(args[0], args[1], bits, _rnd(inst), ftz, sat, approx=True)
        if op in _FLOAT_BINARY:
            return _FLOAT_BINARY[op](args[0], args[1], bits, _rnd(inst), ftz, sat)
        if op in ("mad", "fma"):
            return floating.ffma(args[0], args[1], args[2], bits, _rnd(inst), ftz, sat)
        if op == "min":
            return floating.fmin(args[0], args[1], bits, ftz, nan=at.get("NaN", False))
        if op == "max":
            return floating.fmax(args[0], args[1], bits, ftz, nan=at.get("NaN", False))
        return floating.funary(op, args[0], bits, _rnd(inst), ftz, sat)
    signed = t.kind == "s"
    if op == "mul":
        return integer.mul(args[0], args[1], bits, at.get("mode", "lo"), signed)
    if op == "mad":
        return integer.mad(args[0], args[1], args[2], bits, at.get("mode", "lo"), signed, sat)
    if op in ("add", "sub") and sat:
        return integer.add_sat(args[0], args[1], bits, negate_b=op == "sub")
    if op in ("min", "max") and at.get("relu"):  # min/max.relu.s32: negative results become 0
        return integer.relu(integer.INT_BINARY[op](args[0], args[1], bits, signed), bits)
    if op in integer.INT_BINARY:
        return integer.INT_BINARY[op](args[0], args[1], bits, signed)
    if op == "neg":
        return integer.ineg(args[0], bits)
    if op == "abs":
        return integer.iabs(args[0], bits)
    if op == "not":
        return integer.inot(args[0], bits)
    if op == "popc":
        return integer.popc(args[0], bits)
    if op == "clz":
        return integer.clz(args[0], bits)
    if op == "brev":
        return integer.brev(args[0], bits)
    raise KeyError(f"no semantics for '{op}.{t}'")


def _signed(name: str) -> bool:
    return name.startswith("s")


# Bit-field, byte, funnel-shift, dot-product and 24-bit operations: op -> f(inst, args).
_BITS = {
    "bfind": lambda i, x: integer.bfind(x[0], i.type.bits, i.type.kind == "s", i.attrs.get("shiftamt", False)),
    "bfe": lambda i, x: integer.bfe(x[0], x[1], x[2], i.type.bits, i.type.kind == "s"),
    "bfi": lambda i, x: integer.bfi(x[0], x[1], x[2], x[3], i.type.bits),
    "bmsk": lambda i, x: integer.bmsk(x[0], x[1], i.attrs["mode"] == "clamp"),
    "prmt": lambda i, x: integer.prmt(x[0], x[1], x[2], i.attrs.get("mode")),
    "shf": lambda i, x: integer.shf(x[0], x[1], x[2], i.attrs["dir"] == "l", i.attrs["mode"] == "clamp"),
    "dp4a": lambda i, x: integer.dp4a(x[0], x[1], x[2], _signed(i.attrs["atype"]), _signed(i.attrs["btype"])),
    "dp2a": lambda i, x: integer.dp2a(x[0], x[1], x[2], _signed(i.attrs["atype"]), _signed(i.attrs["btype"]),
                                      i.attrs["mode"] == "hi"),
    "mul24": lambda i, x: integer.mul24(x[0], x[1], i.attrs["mode"] == "hi", i.type.kind == "s"),
    "mad24": lambda i, x: integer.mad24(x[0], x[1], x[2], i.attrs["mode"] == "hi", i.type.kind == "s",
                                        i.attrs.get("sat", False)),
    "copysign": lambda i, x: floating.copysign(x[0], x[1], i.type.bits),
}


def _kind(t) -> str:
    """The kind ``convert`` takes: 'bf' for bf16 (a 16-bit float that is not IEEE half), else t.kind."""
    return "bf" if t.name == "bf16" else t.kind


def _pack(inst: Instruction, args):
    """``pack``: element k of width bits / len(args) in bits [k*w, (k+1)*w) (PTX ISA 9.7.9.10)."""
    bits = inst.type.bits
    w, dt = bits // len(args), UDTYPE[bits]
    r = np.zeros(np.shape(args[0]), dt)
    for k, a in enumerate(args):
        r = r | (as_unsigned(a, w).astype(dt) << dt(k * w))
    return r


def _unpack(inst: Instruction, args):
    """``unpack``: element attrs.index of the result's width (element 0: the least significant bits)."""
    w = inst.result.type.bits
    return as_unsigned(as_unsigned(args[0], inst.type.bits) >> UDTYPE[inst.type.bits](inst.attrs["index"] * w), w)


_BITS["pack"] = _pack
_BITS["unpack"] = _unpack

# Extended-precision arithmetic (PTX ISA 9.7.1.x): op -> f(inst, args) = (d, carry-out); the last argument is the
# carry (borrow) in, a predicate.
_CARRY = {
    "addc": lambda i, x: integer.add_carry(x[0], x[1], x[2], i.type.bits),
    "subc": lambda i, x: integer.sub_borrow(x[0], x[1], x[2], i.type.bits),
    "madc": lambda i, x: integer.mad_carry(x[0], x[1], x[2], x[3], i.type.bits, i.attrs["mode"] == "hi",
                                           i.type.kind == "s"),
}


def _half(inst: Instruction, args):
    """f16 / bf16 arithmetic, and its packed x2 forms element by element (:mod:`xcc.semantics.halfp`)."""
    op, at = inst.op, inst.attrs
    fmt = halfp.fmt_of(inst.type.name)
    rnd, ftz, sat = _rnd(inst), at.get("ftz", False), at.get("sat", False)
    relu, nan, oob = at.get("relu", False), at.get("NaN", False), at.get("oob", False)
    fns = {
        "add": lambda a, b: halfp.hadd(a, b, fmt, rnd, ftz, sat),
        "sub": lambda a, b: halfp.hsub(a, b, fmt, rnd, ftz, sat),
        "mul": lambda a, b: halfp.hmul(a, b, fmt, rnd, ftz, sat),
        "fma": lambda a, b, c: halfp.hfma(a, b, c, fmt, rnd, ftz, sat, relu, oob),
        "min": lambda a, b: halfp.hminmax(a, b, fmt, True, ftz, nan, relu),
        "max": lambda a, b: halfp.hminmax(a, b, fmt, False, ftz, nan, relu),
        "neg": lambda a: halfp.hneg(a, fmt, ftz),
        "abs": lambda a: halfp.habs(a, fmt, ftz),
        "ex2": lambda a: halfp.happrox("ex2", a, fmt, ftz),
        "tanh": lambda a: halfp.happrox("tanh", a, fmt, ftz),
    }
    fns["mad"] = fns["fma"]
    if op not in fns:
        raise KeyError(f"no semantics for '{op}.{inst.type}'")
    if inst.type.bits == 32:
        return halfp.lanewise(fns[op], *args)
    return fns[op](*args)


def _type(name: str):
    from xcc.ir.types import ptx_type

    return ptx_type(name)
