"""The constant folders' integer subset on Python ints (xcc.ir.fold.fold_scalar) returns, bit for bit, what
the interpreters' semantics (xcc.ir.evaluate.evaluate, numpy) return, wherever it returns a value: every
operation of the subset, on every integer type, with each attribute it reads, on edge and random operands."""

from __future__ import annotations

import random

import numpy as np
import pytest

from xcc.ir.core import Const, Instruction, Value
from xcc.ir.evaluate import evaluate
from xcc.ir.fold import const_array, fold_bits, fold_scalar
from xcc.ir.types import ptx_type

INT_TYPES = [f"{k}{w}" for k in "bus" for w in (8, 16, 32, 64)]


def _operands(bits: int, rng: random.Random, n: int) -> list[int]:
    top = 1 << bits
    edge = [0, 1, 2, 3, top - 1, top - 2, top >> 1, (top >> 1) - 1, (top >> 1) + 1, bits, bits - 1, 31, 32, 33,
            63, 64, 65]
    return [v % top for v in edge] + [rng.getrandbits(bits) for _ in range(n)]


def _cases(op: str, tname: str, attrs: dict, arity: int, arg_types: list[str] | None = None):
    """(instruction, constant operands) over edge and random operand values."""
    rng = random.Random(f"{op}{tname}{sorted(attrs.items())}")
    t = ptx_type(tname)
    types = [ptx_type(n) for n in (arg_types or [tname] * arity)]
    columns = [_operands(at.bits, rng, 24) if at.bits > 1 else [0, 1] for at in types]
    rows = [[rng.choice(c) for c in columns] for _ in range(150)]
    rows += [[c[i % len(c)] for c in columns] for i in range(max(len(c) for c in columns))]
    result_bits = 2 * t.bits if attrs.get("mode") == "wide" else 1 if op == "setp" else t.bits
    result = ptx_type("pred") if result_bits == 1 else ptx_type(f"b{result_bits}")
    inst = Instruction(op, t, [Value(at) for at in types], Value(result), dict(attrs))
    for row in rows:
        yield inst, [Const(at, v) for at, v in zip(types, row)]


def _check(inst: Instruction, consts: list[Const]) -> None:
    got = fold_scalar(inst, [c.bits for c in consts])
    assert got is not None, f"{inst.op}.{inst.type} {inst.attrs} is outside the scalar subset"
    want = int(np.asarray(evaluate(inst, [const_array(c) for c in consts])).reshape(-1)[0])
    assert got == want, f"{inst.op}.{inst.type} {inst.attrs} {[hex(c.bits) for c in consts]}: {got:#x} != {want:#x}"


BINARY = ["add", "sub", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"]


@pytest.mark.parametrize("tname", INT_TYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary(op, tname):
    for inst, consts in _cases(op, tname, {}, 2, [tname, "u32"] if op in ("shl", "shr") else None):
        _check(inst, consts)


@pytest.mark.parametrize("tname", INT_TYPES)
@pytest.mark.parametrize("op", ["not", "neg", "abs", "popc", "clz", "brev", "mov"])
def test_unary(op, tname):
    for inst, consts in _cases(op, tname, {}, 1):
        _check(inst, consts)


@pytest.mark.parametrize("tname", [n for n in INT_TYPES if n[0] != "b"])
@pytest.mark.parametrize("mode", ["lo", "hi", "wide"])
@pytest.mark.parametrize("op", ["mul", "mad"])
def test_multiply(op, mode, tname):
    bits = ptx_type(tname).bits
    if mode == "wide" and bits == 64:
        pytest.skip("no 128-bit result")
    arg_types = [tname, tname] + ([f"b{2 * bits if mode == 'wide' else bits}"] if op == "mad" else [])
    for inst, consts in _cases(op, tname, {"mode": mode}, len(arg_types), arg_types):
        _check(inst, consts)


@pytest.mark.parametrize("op", ["and", "or", "xor", "not"])
def test_predicate_logic(op):
    for inst, consts in _cases(op, "pred", {}, 1 if op == "not" else 2):
        _check(inst, consts)


@pytest.mark.parametrize("tname", INT_TYPES)
@pytest.mark.parametrize("cmp", ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"])
def test_setp(cmp, tname):
    for inst, consts in _cases("setp", tname, {"cmp": cmp}, 2):
        _check(inst, consts)
    for extra in ({"negate": True}, {"bool": "and"}, {"bool": "or", "negate": True}, {"bool": "xor"}):
        arity = 3 if "bool" in extra else 2
        types = [tname, tname, "pred"][:arity]
        for inst, consts in _cases("setp", tname, {"cmp": cmp, **extra}, arity, types):
            _check(inst, consts)


@pytest.mark.parametrize("tname", ["pred", "b8", "u16", "s32", "b64", "f32", "f64"])
def test_selp(tname):
    for inst, consts in _cases("selp", tname, {}, 3, [tname, tname, "pred"]):
        _check(inst, consts)


@pytest.mark.parametrize("dst", INT_TYPES)
@pytest.mark.parametrize("src", INT_TYPES)
def test_cvt_between_integers(src, dst):
    for sat in (False, True):
        attrs = {"src": src, "sat": True} if sat else {"src": src}
        for inst, consts in _cases("cvt", dst, attrs, 1, [src]):
            _check(inst, consts)


def test_operands_of_another_width_are_truncated_or_extended_as_the_semantics_do():
    for inst, consts in _cases("add", "u32", {}, 2, ["u64", "u16"]):
        _check(inst, consts)
    for inst, consts in _cases("shr", "s16", {}, 2, ["s32", "u64"]):
        _check(inst, consts)


@pytest.mark.parametrize("op,tname,attrs,arity", [
    ("add", "f32", {}, 2), ("add", "s32", {"sat": True}, 2), ("min", "s32", {"relu": True}, 2),
    ("mul", "u64", {"mode": "wide"}, 2), ("cvt", "f32", {"src": "s32"}, 1), ("cvt", "s32", {"src": "f32"}, 1),
    ("add", "f16x2", {}, 2), ("mov", "pred", {}, 1), ("setp", "f32", {"cmp": "lt"}, 2), ("bfe", "u32", {}, 3),
])
def test_outside_the_subset_is_left_to_the_semantics(op, tname, attrs, arity):
    """fold_scalar declines (None) and fold_bits gives what evaluate gives (or raises what it raises)."""
    t = ptx_type(tname)
    arg_t = ptx_type(attrs.get("src", tname))
    consts = [Const(arg_t if op == "cvt" else t, 0x3F800000 & ((1 << arg_t.bits) - 1))] * arity
    inst = Instruction(op, t, [Value(c.type) for c in consts], Value(t), dict(attrs))
    assert fold_scalar(inst, [c.bits for c in consts]) is None
    try:
        want = int(np.asarray(evaluate(inst, [const_array(c) for c in consts])).reshape(-1)[0])
    except (KeyError, ValueError) as e:
        with pytest.raises(type(e)):
            fold_bits(inst, consts)
    else:
        assert fold_bits(inst, consts) == want
