"""Evaluate one pure IR instruction on numpy bit patterns through :mod:`xcc.semantics`.

Shared by the constant folder and the IR interpreter: the IR has one meaning.
"""

from __future__ import annotations

import numpy as np

from xcc.ir.core import Instruction
from xcc.semantics import compare, convert, floating, integer, select
from xcc.semantics.bits import as_unsigned

PURE_OPS = frozenset({"add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "and", "or", "xor",
                      "shl", "shr", "neg", "abs", "not", "popc", "clz", "brev", "rcp", "sqrt", "rsqrt",
                      "ex2", "lg2", "sin", "cos", "tanh", "setp", "selp", "cvt", "mov", "bfind", "bfe",
                      "bfi", "bmsk", "prmt", "shf", "dp4a", "dp2a", "mul24", "mad24", "copysign"})
_FLOAT_BINARY = {"add": floating.fadd, "sub": floating.fsub, "mul": floating.fmul, "div": floating.fdiv}


def _rnd(inst: Instruction) -> str:
    return inst.attrs.get("rnd", "rn")


def evaluate(inst: Instruction, args: list[np.ndarray]) -> np.ndarray:
    """The result bit patterns of ``inst`` applied to ``args`` (arrays, one element per thread)."""
    op, t, at = inst.op, inst.type, inst.attrs
    bits = t.bits
    ftz, sat = at.get("ftz", False), at.get("sat", False)
    if op == "setp":
        r = compare(at["cmp"], args[0], args[1], bits, t.kind)
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
        return convert(args[0], bits, t.kind, s.bits, s.kind, at.get("rnd"), sat, ftz)
    if op == "mov":
        return as_unsigned(args[0], bits)
    if op in _BITS:
        return _BITS[op](inst, args)
    if t.is_float:
        if op in _FLOAT_BINARY:
            return _FLOAT_BINARY[op](args[0], args[1], bits, _rnd(inst), ftz, sat)
        if op in ("mad", "fma"):
            return floating.ffma(args[0], args[1], args[2], bits, _rnd(inst), ftz, sat)
        if op == "min":
            return floating.fmin(args[0], args[1], bits, ftz)
        if op == "max":
            return floating.fmax(args[0], args[1], bits, ftz)
        return floating.funary(op, args[0], bits, _rnd(inst), ftz, sat)
    signed = t.kind == "s"
    if op == "mul":
        return integer.mul(args[0], args[1], bits, at.get("mode", "lo"), signed)
    if op == "mad":
        return integer.mad(args[0], args[1], args[2], bits, at.get("mode", "lo"), signed, sat)
    if op in ("add", "sub") and sat:
        return integer.add_sat(args[0], args[1], bits, negate_b=op == "sub")
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


def _type(name: str):
    from xcc.ir.types import ptx_type

    return ptx_type(name)
