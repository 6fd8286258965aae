"""The value of a pure instruction on constant operands, as the constant folders compute it.

:func:`fold_bits` is ``int(evaluate(inst, arrays)[0])`` (:func:`xcc.ir.evaluate.evaluate`, the
interpreters' semantics on numpy arrays) for constants, with the same exceptions.  The integer operations
most folds meet (address and index arithmetic: ``add``, ``sub``, ``mul``, ``mad``, ``shl``, ``shr``, the
logic operations, integer ``setp``, ``selp``, ``cvt`` between integer types, ``mov``, ...) are computed
here on Python integers first, so that compiling a kernel whose folds are all of that kind does not import
numpy and the semantics library (tens of milliseconds of a cold ``xcc compile``).  Everything else, and
any attribute this subset does not know, goes to :func:`~xcc.ir.evaluate.evaluate`.

The subset follows :mod:`xcc.semantics.integer`, :mod:`xcc.semantics.compare` and
:mod:`xcc.semantics.convert` (PTX ISA 9.0 sections 9.7.1, 9.7.6, 9.7.7, 9.7.9.21): arithmetic modulo
2**bits, shift counts taken as unsigned 32-bit and at or beyond the width giving 0 (``shr.s``: the sign
fill), ``x / 0`` and ``x % 0`` all ones, ``INT_MIN / -1`` = ``INT_MIN``, the remainder with the
dividend's sign.  tests/test_fold_scalar.py checks that it returns what ``evaluate`` returns, bit for bit,
wherever it returns a value.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from xcc.diagnostics import UnsupportedError
from xcc.ir.core import Const, Instruction
from xcc.ir.ops import HALF_TYPES
from xcc.semantics.comparisons import ORDERED, UNSIGNED_ALIAS

_WIDTHS = (8, 16, 32, 64)  # the integer widths the semantics' dtypes cover


def fold_bits(inst: Instruction, args: list[Const]) -> int:
    """The result bits of pure ``inst`` on the constants ``args`` (1/0 for a predicate), exactly
    ``int(evaluate(inst, [one-element arrays of args])[0])``; raises what ``evaluate`` raises."""
    r = fold_scalar(inst, [a.bits for a in args])
    if r is not None:
        return r
    import numpy as np  # here, not at the top: only the folds outside the scalar subset need the semantics

    from xcc.ir.evaluate import evaluate

    return int(np.asarray(evaluate(inst, [const_array(a) for a in args])).reshape(-1)[0])


def try_fold(inst: Instruction, args: list[Const]) -> int | None:
    """:func:`fold_bits`, or None where the semantics have no rule for ``inst`` on ``args`` (unsupported, an
    unknown attribute, a value they refuse): what a folding pass leaves unfolded."""
    try:
        return fold_bits(inst, args)
    except (UnsupportedError, KeyError, ValueError, ZeroDivisionError):
        return None


def const_array(c: Const):
    """A constant as the one-element array the semantics take (bool for predicates)."""
    import numpy as np

    from xcc.semantics.bits import UDTYPE

    if c.type.bits == 1:
        return np.array([bool(c.bits)])
    return np.array([c.bits], dtype=UDTYPE[max(c.type.bits, 8)])


def fold_scalar(inst: Instruction, args: list[int]) -> int | None:
    """``inst`` on the operand bit patterns ``args`` (Python ints, each below 2**its width), or None when
    the instruction is outside the integer subset described above (the caller then asks the semantics)."""
    op, t, at = inst.op, inst.type, inst.attrs
    if t is None or t.name in HALF_TYPES or t.is_float and op not in ("selp", "mov"):
        return None
    rule = _RULES.get(op)
    if rule is None or not set(at) <= rule[0] or rule[1] >= 0 and len(args) != rule[1]:
        return None
    return rule[2](inst, args, t.bits)


def _m(bits: int) -> int:
    return (1 << bits) - 1


def _s(v: int, bits: int) -> int:
    """The low ``bits`` of ``v`` as a two's-complement signed number."""
    v &= _m(bits)
    return v - (1 << bits) if v >> (bits - 1) else v


def _integer(fn: Callable[[list[int], int, bool], int | None], one_bit: bool = False):
    """A rule for an integer operation of width 8..64 (and 1 where ``one_bit``: the predicate logic)."""
    def rule(inst: Instruction, args: list[int], bits: int) -> int | None:
        if bits not in _WIDTHS and not (one_bit and bits == 1):
            return None
        return fn(args, bits, inst.type.kind == "s")
    return rule


def _logic(f: Callable[[int, int], int]):
    """A bitwise rule; on predicates (width 1) the operands count as true when nonzero, as numpy's bool."""
    def g(a: list[int], bits: int, signed: bool) -> int:
        if bits == 1:
            return f(bool(a[0]), bool(a[1])) & 1
        return f(a[0] & _m(bits), a[1] & _m(bits)) & _m(bits)
    return _integer(g, one_bit=True)


def _not(a: list[int], bits: int, signed: bool) -> int:
    return int(not a[0]) if bits == 1 else ~a[0] & _m(bits)


def _shl(a: list[int], bits: int, signed: bool) -> int:
    n = a[1] & 0xFFFFFFFF
    return 0 if n >= bits else (a[0] << n) & _m(bits)


def _shr(a: list[int], bits: int, signed: bool) -> int:
    n = a[1] & 0xFFFFFFFF
    if signed:
        return (_s(a[0], bits) >> min(n, bits - 1)) & _m(bits)
    return 0 if n >= bits else (a[0] & _m(bits)) >> n


def _div(a: list[int], bits: int, signed: bool) -> int:
    x, y = (_s(v, bits) for v in a) if signed else (v & _m(bits) for v in a)
    if y == 0:
        return _m(bits)
    q = abs(x) // abs(y)
    return (-q if (x < 0) != (y < 0) else q) & _m(bits)


def _rem(a: list[int], bits: int, signed: bool) -> int:
    x, y = (_s(v, bits) for v in a) if signed else (v & _m(bits) for v in a)
    if y == 0:
        return _m(bits)
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) & _m(bits)


def _minmax(pick: Callable[[int, int], int]):
    def f(a: list[int], bits: int, signed: bool) -> int:
        x, y = (_s(v, bits) for v in a) if signed else (v & _m(bits) for v in a)
        return pick(x, y) & _m(bits)
    return f


def _product(a: list[int], bits: int, signed: bool, mode: str) -> tuple[int, int] | None:
    """(the product's part ``mode`` selects, its width), or None for an unknown mode."""
    x, y = (_s(v, bits) for v in a[:2]) if signed else (v & _m(bits) for v in a[:2])
    p = x * y
    if mode == "lo":
        return p & _m(bits), bits
    if mode == "hi":
        return (p >> bits) & _m(bits), bits
    if mode == "wide" and bits <= 32:
        return p & _m(2 * bits), 2 * bits
    return None


def _mul(inst: Instruction, args: list[int], bits: int) -> int | None:
    if bits not in _WIDTHS:
        return None
    r = _product(args, bits, inst.type.kind == "s", inst.attrs.get("mode", "lo"))
    return None if r is None else r[0]


def _mad(inst: Instruction, args: list[int], bits: int) -> int | None:
    if bits not in _WIDTHS:
        return None
    r = _product(args, bits, inst.type.kind == "s", inst.attrs.get("mode", "lo"))
    return None if r is None else (r[0] + (args[2] & _m(r[1]))) & _m(r[1])


def _setp(inst: Instruction, args: list[int], bits: int) -> int | None:
    at, kind = inst.attrs, inst.type.kind
    if bits not in _WIDTHS or kind not in "usb" or len(args) != (3 if "bool" in at else 2):
        return None
    cmp = at.get("cmp")
    if cmp in UNSIGNED_ALIAS:
        cmp, kind = UNSIGNED_ALIAS[cmp], "u"
    if cmp not in ORDERED or at.get("bool", "and") not in _PRED_LOGIC:
        return None
    x, y = (_s(v, bits) for v in args[:2]) if kind == "s" else (v & _m(bits) for v in args[:2])
    r = int(ORDERED[cmp](x, y))
    if at.get("negate"):
        r ^= 1
    return _PRED_LOGIC[at["bool"]](r, int(bool(args[2]))) if "bool" in at else r


_PRED_LOGIC = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}


def _selp(inst: Instruction, args: list[int], bits: int) -> int | None:
    """``cond ? a : b``; a predicate result is the chosen operand as it is (numpy's ``where`` does not
    narrow it)."""
    if bits not in _WIDTHS and bits != 1:
        return None
    chosen = args[0] if args[2] else args[1]
    return chosen if bits == 1 else chosen & _m(bits)


def _mov(inst: Instruction, args: list[int], bits: int) -> int | None:
    return args[0] & _m(bits) if bits in _WIDTHS else None


def _cvt(inst: Instruction, args: list[int], bits: int) -> int | None:
    """``cvt`` between integer types: the source's value (sign- or zero-extended by its type), ``.sat``
    clamped to the destination's range, truncated to the destination's width."""
    from xcc.ir.types import TYPES

    src, dst = TYPES.get(inst.attrs.get("src", "")), inst.type
    if src is None or src.name in HALF_TYPES or dst.kind not in "usb" or src.kind not in "usb" \
            or src.bits not in _WIDTHS or bits not in _WIDTHS:
        return None
    v = _s(args[0], src.bits) if src.kind == "s" else args[0] & _m(src.bits)
    if inst.attrs.get("sat") and dst.kind != "b":
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst.kind == "s" else (0, _m(bits))
        v = max(lo, min(hi, v)) if src.kind == "s" else min(hi, v)
    return v & _m(bits)


def _clz(a: list[int], bits: int, signed: bool) -> int:
    return bits - (a[0] & _m(bits)).bit_length()


def _brev(a: list[int], bits: int, signed: bool) -> int:
    return int(format(a[0] & _m(bits), f"0{bits}b")[::-1], 2)


# op -> (the attributes the rule reads: any other one sends the fold to the semantics, operand count, rule)
_RULES: dict[str, tuple[frozenset, int, Callable[[Instruction, list[int], int], int | None]]] = {
    "add": (frozenset(), 2, _integer(lambda a, bits, s: (a[0] + a[1]) & _m(bits))),
    "sub": (frozenset(), 2, _integer(lambda a, bits, s: (a[0] - a[1]) & _m(bits))),
    "mul": (frozenset({"mode"}), 2, _mul),
    "mad": (frozenset({"mode"}), 3, _mad),
    "div": (frozenset(), 2, _integer(_div)),
    "rem": (frozenset(), 2, _integer(_rem)),
    "min": (frozenset(), 2, _integer(_minmax(min))),
    "max": (frozenset(), 2, _integer(_minmax(max))),
    "and": (frozenset(), 2, _logic(operator.and_)),
    "or": (frozenset(), 2, _logic(operator.or_)),
    "xor": (frozenset(), 2, _logic(operator.xor)),
    "not": (frozenset(), 1, _integer(_not, one_bit=True)),
    "neg": (frozenset(), 1, _integer(lambda a, bits, s: -a[0] & _m(bits))),
    "abs": (frozenset(), 1, _integer(lambda a, bits, s: abs(_s(a[0], bits)) & _m(bits))),
    "shl": (frozenset(), 2, _integer(_shl)),
    "shr": (frozenset(), 2, _integer(_shr)),
    "popc": (frozenset(), 1, _integer(lambda a, bits, s: (a[0] & _m(bits)).bit_count())),
    "clz": (frozenset(), 1, _integer(_clz)),
    "brev": (frozenset(), 1, _integer(_brev)),
    "setp": (frozenset({"cmp", "negate", "bool"}), -1, _setp),
    "selp": (frozenset(), 3, _selp),
    "mov": (frozenset(), 1, _mov),
    "cvt": (frozenset({"src", "sat"}), 1, _cvt),
}
