"""Instruction combining: local algebraic simplification that is bit-exact for PTX semantics (LLVM's
``InstCombine``/``InstSimplify``; division by constants after Granlund and Montgomery, "Division by
Invariant Integers using Multiplication", PLDI 1994, and Warren, "Hacker's Delight", 2nd ed., ch. 10;
64-bit division bypass after LLVM's ``BypassSlowDivision``, which NVPTX enables for 64-bit operands).

Integer rules (types u/s/b of 8-64 bits, the packed half types excluded; only instructions without
``sat``, ``carry`` or other modifiers; results the width of the operand they become):

* ``x+0``, ``x-0``, ``x*1``, ``x|0``, ``x^0``, ``x&~0``, ``x&x``, ``x|x``, ``x<<0``, ``x>>0`` -> ``x``;
  ``x*0``, ``x&0``, ``x-x``, ``x^x`` -> 0; ``x|~0`` -> ~0; ``not(not x)``, ``neg(neg x)`` -> ``x``;
  the same for predicates (``and``/``or``/``xor``/``not`` on ``pred``);
* ``x - c`` -> ``x + (-c)``; ``(x + c1) + c2`` -> ``x + (c1 + c2)`` (wrapping, so exact);
* ``mul.lo x, 2^k`` -> ``shl x, k``;
* ``setp x, x`` (integers) -> a constant;
* ``not(setp a, b)`` -> ``setp`` with the inverse comparison (for floats the inverse of an ordered
  comparison is the unordered one: ``lt`` <-> ``geu``, ``eq`` <-> ``neu``, ``num`` <-> ``nan``, as
  :func:`xcc.semantics.compare` defines them); ``cbr (not p), T, F`` -> ``cbr p, F, T``;
* ``cvt`` of an integer ``cvt`` that widened ``x`` back to ``x``'s width (no saturation) -> ``x``;
* unsigned ``div``/``rem`` by ``2^k`` -> ``shr``/``and``, by any other constant -> the multiply-high
  sequence of Hacker's Delight figure 10-2 (with its add fix-up where the magic number needs W+1 bits);
  signed ``div`` by a constant ``d`` (|d| >= 2)
  -> the multiply-high sequence with the magic number of Hacker's Delight figure 10-1 (round-toward-zero
  shifts for powers of two), signed ``rem`` -> ``x - (x / d) * d``; ``div`` by 1 -> ``x``, by -1 ->
  ``neg``;
* 64-bit ``div``/``rem`` with a divisor that is not constant (option ``bypass_div64``): the block is split
  on ``((a | b) >> 32) == 0 && b != 0``; that path divides in 32 bits (exact: both operands are
  non-negative and below 2^32), the other keeps the 64-bit division, and a phi joins them (the test of
  ``b`` keeps division by zero on the 64-bit path, whose result differs).

Floating-point arithmetic is left alone: xcc.semantics returns the canonical NaN from arithmetic on a
NaN, honours ``ftz`` and signed zeros, so even ``x * 1.0`` and ``x + 0.0`` change some bit patterns.
Rules run in block order, repeatedly, until none applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.ops import HALF_TYPES
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import PRED, TYPES, ScalarType, ptx_type
from xcc.passes.divconst import signed_magic, unsigned_magic
from xcc.passes.manager import FunctionPass

U32 = TYPES["u32"]

INVERSE_CMP = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le",
               "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
INVERSE_FCMP = {"eq": "neu", "ne": "equ", "lt": "geu", "le": "gtu", "gt": "leu", "ge": "ltu", "num": "nan"}
INVERSE_FCMP.update({v: k for k, v in INVERSE_FCMP.items()})
_SELF_CMP = {"eq": True, "le": True, "ge": True, "ls": True, "hs": True,
             "ne": False, "lt": False, "gt": False, "lo": False, "hi": False}


def is_int(t: ScalarType | None) -> bool:
    return t is not None and t.kind in "bus" and t.name not in HALF_TYPES and 8 <= t.bits <= 64


def _plain(inst: Instruction, allowed=frozenset()) -> bool:
    return set(inst.attrs) <= set(allowed)


def _fits(v: Value, r: Value) -> bool:
    """``v`` can stand for result ``r``: one width, both predicates or neither."""
    return v.type.bits == r.type.bits and (v.type.kind == "pred") == (r.type.kind == "pred")


def _const(v: Value) -> int | None:
    return v.bits if isinstance(v, Const) else None


class _Emitter:
    """New instructions for one rewrite, placed before the instruction they replace."""

    def __init__(self, at: Instruction):
        self.at, self.out = at, []

    def __call__(self, op: str, t: ScalarType, args: list[Value], attrs: dict | None = None,
                 rtype: ScalarType | None = None) -> Value:
        r = Value(rtype or t)
        self.out.append(Instruction(op, t, args, r, attrs or {}, self.at.loc, self.at.debug_loc))
        return r


@dataclass(frozen=True)
class InstCombine(FunctionPass):
    """Bit-exact algebraic simplification: identities, constant reassociation, inverse compares, cvt
    round trips, division by constants (magic numbers), 64-bit division bypass."""

    name: ClassVar[str] = "instcombine"
    bypass_div64: bool = True
    max_rounds: int = 8

    def run_function(self, fn: Function) -> None:
        for _ in range(self.max_rounds):
            defs = {i.result: i for b in fn.blocks for i in b.instructions if i.result is not None}
            repl: dict[Value, Value] = {}
            changed = False
            for b in fn.blocks:
                new: list[Instruction] = []
                for inst in b.instructions:
                    inst.args = [_find(repl, a) for a in inst.args]
                    got = combine(inst, defs)
                    if got is None:
                        new.append(inst)
                        continue
                    changed = True
                    emitted, value = got
                    for e in emitted:
                        e.block = b
                        new.append(e)
                        if e.result is not None:
                            defs[e.result] = e
                    if value is None:  # rewritten in place
                        new.append(inst)
                    elif value is not inst.result:
                        repl[inst.result] = value
                b.instructions = new
            replace_uses(fn, repl)
            while self.bypass_div64 and bypass_slow_division(fn):
                changed = True
            if not changed:
                return


def _find(repl: dict[Value, Value], v: Value) -> Value:
    while v in repl:
        v = repl[v]
    return v


def combine(inst: Instruction, defs: dict[Value, Instruction]):
    """One rewrite of ``inst``: None, or (instructions to insert before it, the value that replaces its
    result; None when ``inst`` itself was changed in place and stays)."""
    op, t = inst.op, inst.type
    if op == "cbr":
        d = defs.get(inst.args[0])
        if d is not None and d.op == "not" and _plain(d):
            inst.args = [d.args[0]]
            inst.attrs["targets"] = inst.targets[::-1]
            return [], None
        return None
    r = inst.result
    if r is None or t is None:
        return None
    if t.kind == "pred" and op in ("and", "or", "xor", "not") and _plain(inst):
        return _logic(inst, defs, 1)
    if op == "not" and t.kind != "pred" and is_int(t) and _plain(inst):
        return _logic(inst, defs, t.bits)
    if op == "setp":
        return _setp(inst)
    if not is_int(t):
        return None
    if op in ("and", "or", "xor") and _plain(inst):
        return _logic(inst, defs, t.bits)
    if op == "cvt":
        return _cvt(inst, defs)
    if op in ("add", "sub") and _plain(inst):
        return _addsub(inst, defs)
    if op in ("shl", "mul") and t.bits == 64 and _plain(inst, {"mode"}) and inst.attrs.get("mode", "lo") == "lo":
        got = _widening_multiply(inst, defs)
        if got is not None:
            return got
    if op == "mul" and _plain(inst, {"mode"}) and inst.attrs.get("mode", "lo") == "lo":
        return _mul(inst)
    if op in ("shl", "shr") and _plain(inst) and _const(inst.args[1]) == 0 and _fits(inst.args[0], r):
        return [], inst.args[0]
    if op == "neg" and _plain(inst) and not (t.is_float and t.bits == 64):  # neg.f64 quiets a NaN: not an involution
        d = defs.get(inst.args[0])
        if d is not None and d.op == "neg" and d.type == t and _plain(d) and _fits(d.args[0], r):
            return [], d.args[0]
        return None
    if op in ("div", "rem") and _plain(inst) and isinstance(inst.args[1], Const):
        return divide_by_constant(inst)
    return None


def _logic(inst: Instruction, defs, bits: int):
    r, op = inst.result, inst.op
    ones = (1 << bits) - 1
    if op == "not":
        d = defs.get(inst.args[0])
        if d is not None and d.op == "not" and _plain(d) and _fits(d.args[0], r):
            return [], d.args[0]
        if d is not None and d.op == "setp" and bits == 1:
            return _inverse_setp(inst, d)
        return None
    a, b = inst.args
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a
    c = _const(b) if b.type.bits == bits else None
    if a is b or isinstance(a, Const) and a.same(b):
        if op == "xor":
            return [], Const(r.type, 0)
        return ([], a) if _fits(a, r) else None
    if c is None:
        return None
    if op == "and" and c == 0 or op == "or" and c & ones == ones:
        return [], Const(r.type, c)
    if (op == "and" and c & ones == ones or op in ("or", "xor") and c == 0) and _fits(a, r):
        return [], a
    return None


def _inverse_setp(inst: Instruction, d: Instruction):
    if not _plain(d, {"cmp", "ftz"}) or d.type.name in HALF_TYPES:
        return None
    table = INVERSE_FCMP if d.type.is_float else INVERSE_CMP
    cmp = table.get(d.attrs["cmp"])
    if cmp is None:
        return None
    inst.op, inst.type, inst.args, inst.attrs = "setp", d.type, list(d.args), {**d.attrs, "cmp": cmp}
    return [], None


def _setp(inst: Instruction):
    a, b = inst.args[:2]
    if a is not b or not is_int(inst.type) or not _plain(inst, {"cmp"}):
        return None
    value = _SELF_CMP.get(inst.attrs["cmp"])
    return None if value is None else ([], Const(PRED, int(value)))


def _cvt(inst: Instruction, defs):
    """cvt(cvt(x): widened): the outer narrows back to x's width with no saturation."""
    d = defs.get(inst.args[0])
    if d is None or d.op != "cvt" or not _plain(inst, {"src"}) or not _plain(d, {"src"}):
        return None
    x, inner_src, outer_src = d.args[0], TYPES.get(d.attrs["src"]), TYPES.get(inst.attrs["src"])
    if not (is_int(inner_src) and is_int(d.type) and is_int(outer_src)):
        return None
    if inner_src.bits == x.type.bits and d.type.bits >= inner_src.bits and inst.type.bits == inner_src.bits \
            and _fits(x, inst.result) and TYPES[inst.attrs["src"]].bits == d.type.bits:
        return [], x
    return None


def _addsub(inst: Instruction, defs):
    r, (a, b) = inst.result, inst.args
    bits, t = inst.type.bits, inst.type
    mask = (1 << bits) - 1
    if inst.op == "sub":
        if a is b:
            return [], Const(r.type, 0)
        c = _const(b)
        if c is None:
            return None
        if c & mask == 0:
            return ([], a) if _fits(a, r) else None
        inst.op, inst.args = "add", [a, Const(b.type, -c & mask)]
        return [], None
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a
    c = _const(b)
    if c is None:
        return None
    if c & mask == 0:
        return ([], a) if _fits(a, r) else None
    d = defs.get(a)
    if d is not None and d.op == "add" and is_int(d.type) and d.type.bits == bits and _plain(d) \
            and isinstance(d.args[1], Const) and not isinstance(d.args[0], Const) and d.args[0].type.bits == bits:
        inst.args = [d.args[0], Const(t, (d.args[1].bits + c) & mask)]
        return [], None
    return None


def _widening_multiply(inst: Instruction, defs):
    """``shl.b64 (cvt.s64.s32 x), k`` and ``mul.lo.s64 (cvt.s64.s32 x), c`` -> ``mul.wide.s32 x, 2^k`` / ``c``
    (and the unsigned forms): the extended value times a factor that fits the 32-bit type is the exact 64-bit
    product, which is what the 64-bit shift or multiply gives modulo 2^64.  One IMAD.WIDE instead of an
    extension and a 64-bit shift: the address arithmetic ``nvcc -G`` leaves (``cvt``, ``shl``, ``add``) becomes
    what ``nvcc -O3`` writes (``mul.wide``, ``add``)."""
    a, b = inst.args
    if inst.op == "mul" and isinstance(a, Const):
        a, b = b, a
    c = _const(b)
    d = defs.get(a)
    if c is None or d is None or d.op != "cvt" or not _plain(d, {"src"}) or d.type is None or d.type.bits != 64:
        return None
    src = ptx_type(d.attrs["src"])
    if src.bits != 32 or src.kind not in ("s", "u") or not is_int(d.type):
        return None
    if inst.op == "shl":
        if c >= 64:
            return None
        factor = 1 << c
    else:
        factor = c if c < (1 << 63) else c - (1 << 64)
    limit = 1 << 31 if src.kind == "s" else 1 << 32
    if not 0 < factor < limit:
        return None
    e = _Emitter(inst)
    product = e("mul", src, [d.args[0], Const(src, factor)], {"mode": "wide"}, rtype=inst.result.type)
    return e.out, product


def _mul(inst: Instruction):
    r, (a, b) = inst.result, inst.args
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a
    c = _const(b)
    if c is None or isinstance(a, Const):
        return None
    mask = (1 << inst.type.bits) - 1
    c &= mask
    if c == 0:
        return [], Const(r.type, 0)
    if c == 1:
        return ([], a) if _fits(a, r) else None
    if c & (c - 1) == 0:
        inst.op, inst.args, inst.attrs = "shl", [a, Const(U32, c.bit_length() - 1)], {}
        return [], None
    return None


def divide_by_constant(inst: Instruction):
    """div/rem by a constant: shifts, masks, or the magic-number multiply (Hacker's Delight 10-1)."""
    (x, dv), t, r = inst.args, inst.type, inst.result
    bits = t.bits
    if bits not in (16, 32, 64) or isinstance(x, Const) or not _fits(x, r) or dv.type.bits != bits:
        return None
    mask = (1 << bits) - 1
    d = dv.bits & mask
    if d == 0:
        return None
    e = _Emitter(inst)
    if t.kind != "s":
        if d & (d - 1):
            q = _unsigned_quotient(e, x, d, t)
            if inst.op == "div":
                return e.out, q
            return e.out, e("sub", t, [x, e("mul", t, [q, Const(t, d)], {"mode": "lo"})])
        k = d.bit_length() - 1
        if inst.op == "div":
            return ([], x) if k == 0 else (e.out, e("shr", t, [x, Const(U32, k)]))
        return e.out, e("and", t, [x, Const(t, d - 1)])
    sd = d - (1 << bits) if d >> (bits - 1) else d
    q = _signed_quotient(e, x, sd, t)
    if inst.op == "div":
        return e.out, q
    if abs(sd) == 1:
        return [], Const(r.type, 0)
    prod = e("mul", t, [q, Const(t, sd & mask)], {"mode": "lo"})
    return e.out, e("sub", t, [x, prod])


def _signed_quotient(e: _Emitter, x: Value, d: int, t: ScalarType) -> Value:
    """x / d for signed x (round toward zero), d a constant not 0."""
    bits, mask = t.bits, (1 << t.bits) - 1
    if d == 1:
        return x
    if d == -1:
        return e("neg", t, [x])
    ad = abs(d)
    if ad & (ad - 1) == 0:  # x / 2^k: add 2^k - 1 to negative x first (Hacker's Delight 10-1)
        k = ad.bit_length() - 1
        sign = e("shr", t, [x, Const(U32, bits - 1)])
        bias = e("shr", TYPES[f"u{bits}"], [sign, Const(U32, bits - k)]) if k else sign
        q = e("shr", t, [e("add", t, [x, bias]), Const(U32, k)])
        return e("neg", t, [q]) if d < 0 else q
    m, s = signed_magic(d, bits)
    q = e("mul", t, [x, Const(t, m & mask)], {"mode": "hi"})
    if d > 0 and m < 0:
        q = e("add", t, [q, x])
    elif d < 0 and m > 0:
        q = e("sub", t, [q, x])
    if s:
        q = e("shr", t, [q, Const(U32, s)])
    sign = e("shr", TYPES[f"u{bits}"], [q, Const(U32, bits - 1)])
    return e("add", t, [q, sign])


def _unsigned_quotient(e: _Emitter, x: Value, d: int, t: ScalarType) -> Value:
    """x / d for unsigned x, d a constant that is not a power of two (Hacker's Delight figure 10-2)."""
    m, add, s = unsigned_magic(d, t.bits)
    hi = e("mul", t, [x, Const(t, m)], {"mode": "hi"})
    if not add:
        return e("shr", t, [hi, Const(U32, s)]) if s else hi
    half = e("shr", t, [e("sub", t, [x, hi]), Const(U32, 1)])
    q = e("add", t, [half, hi])
    return e("shr", t, [q, Const(U32, s - 1)]) if s > 1 else q


def bypass_slow_division(fn: Function) -> bool:
    """Split the first block holding a 64-bit div/rem by a variable; True if one was split."""
    for b in list(fn.blocks):
        for k, inst in enumerate(b.instructions):
            if (inst.op in ("div", "rem") and is_int(inst.type) and inst.type.bits == 64 and _plain(inst)
                    and not isinstance(inst.args[1], Const) and not inst.attrs.get("bypassed")):
                _split(fn, b, k, inst)
                return True
    return False


def _split(fn: Function, b: Block, k: int, inst: Instruction) -> None:
    a, d = inst.args
    t, u64, u32 = inst.type, TYPES["u64"], U32
    name = f"{b.name}.div{k}"
    fast, slow, join = Block(f"{name}.fast"), Block(f"{name}.slow"), Block(f"{name}.join")
    e = _Emitter(inst)
    both = e("or", TYPES["b64"], [a, d])
    hi = e("shr", u64, [both, Const(u32, 32)])
    small = e("setp", u64, [hi, Const(u64, 0)], {"cmp": "eq"}, PRED)
    nonzero = e("setp", u64, [d, Const(u64, 0)], {"cmp": "ne"}, PRED)
    cond = e("and", PRED, [small, nonzero])
    head = b.instructions[:k]
    rest = b.instructions[k + 1:]
    b.instructions = []
    for i in head + e.out:
        b.append(i)
    b.append(Instruction("cbr", None, [cond], None, {"targets": [fast, slow]}, inst.loc, inst.debug_loc))
    f = _Emitter(inst)
    a32 = f("cvt", u32, [a], {"src": "u64"})
    d32 = f("cvt", u32, [d], {"src": "u64"})
    q32 = f("div" if inst.op == "div" else "rem", u32, [a32, d32])
    q = f("cvt", u64, [q32], {"src": "u32"}, inst.result.type)
    for i in f.out:
        fast.append(i)
    fast.append(Instruction("br", None, [], None, {"targets": [join]}, inst.loc, inst.debug_loc))
    slow_r = Value(inst.result.type)
    slow.append(Instruction(inst.op, t, [a, d], slow_r, {**inst.attrs, "bypassed": True}, inst.loc,
                            inst.debug_loc))
    slow.append(Instruction("br", None, [], None, {"targets": [join]}, inst.loc, inst.debug_loc))
    join.phis = [Phi(inst.result, [q, slow_r], join)]
    for i in rest:
        join.append(i)
    for s in join.succs:
        s.preds = [join if p is b else p for p in s.preds]
    fast.preds, slow.preds, join.preds = [b], [b], [fast, slow]
    at = fn.blocks.index(b)
    fn.blocks[at + 1:at + 1] = [fast, slow, join]
