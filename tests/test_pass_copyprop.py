"""copyprop (passes/copyprop.py): -G kernels unchanged bit for bit; each copy rule forwards exactly the
values it claims (checked against xcc.ir.evaluate on random operands) and leaves real conversions alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pass_harness import assert_pass_preserves, corpus_cases, debug_cases

from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.evaluate import evaluate
from xcc.ir.types import TYPES
from xcc.ir.verifier import verify_function
from xcc.passes.copyprop import CopyPropagation, copy_source


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("copyprop", case, before="simplifycfg,sccp")


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("copyprop", case)


INT_TYPES = [n for n, t in TYPES.items() if t.kind in "bus" and t.bits <= 64]


@settings(max_examples=200, deadline=None)
@given(src=st.sampled_from(INT_TYPES), dst=st.sampled_from(INT_TYPES), sat=st.booleans(),
       x=st.integers(0, (1 << 64) - 1))
def test_cvt_rule_is_exact(src, dst, sat, x):
    """Where copyprop calls an integer cvt a copy, the semantics return the operand's bits."""
    s, d = TYPES[src], TYPES[dst]
    a = Value(s)
    attrs = {"src": src, **({"sat": True} if sat else {})}
    inst = Instruction("cvt", d, [a], Value(d), attrs)
    if copy_source(inst) is None:
        return
    x &= (1 << s.bits) - 1
    r = evaluate(inst, [np.array([x], dtype=f"u{max(s.bits, 8) // 8}")])
    assert int(r[0]) == x


def _fn(blocks):
    fn = Function("f", True, [], blocks)
    for b in blocks:
        for i in b.instructions:
            i.block = b
        for p in b.phis:
            p.block = b
    return fn


def test_trivial_phis_and_selects_forwarded():
    u32, pred = TYPES["u32"], TYPES["pred"]
    entry, loop, done = Block("entry"), Block("loop"), Block("done")
    x = Value(u32)
    c = Value(pred)
    entry.instructions = [Instruction("sreg", u32, [], x, {"name": "tid.x"}),
                          Instruction("setp", u32, [x, Const(u32, 3)], c, {"cmp": "lt"}),
                          Instruction("br", None, [], None, {"targets": [loop]})]
    p1, p2 = Phi(Value(u32)), Phi(Value(u32))
    p1.args = [x, p2.result]  # p1 = phi(x, p2), p2 = phi(p1, p1): both are x
    loop.phis = [p1]
    s1, s2, m = Value(u32), Value(u32), Value(TYPES["b32"])
    loop.instructions = [Instruction("selp", u32, [p1.result, p1.result, c], s1),
                         Instruction("selp", u32, [s1, x, Const(pred, 0)], s2),
                         Instruction("mov", TYPES["b32"], [s2], m),
                         Instruction("cbr", None, [c], None, {"targets": [done, loop]})]
    done.phis = [p2]
    p2.args = [p1.result]
    w = Value(TYPES["u64"])
    done.instructions = [Instruction("mov", TYPES["u64"], [m], w),  # a widening mov: not a copy
                         Instruction("st", u32, [w, m], None, {"space": "global", "offset": 0}),
                         Instruction("ret", None, [])]
    loop.preds, done.preds = [entry, loop], [loop]
    fn = _fn([entry, loop, done])
    # loop's back edge: p1's second operand comes from loop itself
    p1.args = [x, m]
    verify_function(fn)
    CopyPropagation().run_function(fn)
    verify_function(fn)
    assert not loop.phis and not done.phis
    assert [i.op for i in loop.instructions] == ["cbr"]
    assert [i.op for i in done.instructions] == ["mov", "st", "ret"]
    assert done.instructions[0].args == [x] and done.instructions[1].args[1] is x


def test_real_conversions_stay():
    u32, s32, u8, f32 = TYPES["u32"], TYPES["s32"], TYPES["u8"], TYPES["f32"]
    a = Value(s32)
    assert copy_source(Instruction("cvt", u32, [a], Value(u32), {"src": "s32", "sat": True})) is None
    assert copy_source(Instruction("cvt", u32, [a], Value(u32), {"src": "s32"})) is a
    assert copy_source(Instruction("cvt", u8, [Value(u8)], Value(u32), {"src": "u8"})) is None  # widens
    assert copy_source(Instruction("cvt", f32, [Value(f32)], Value(f32), {"src": "f32"})) is None
    assert copy_source(Instruction("mov", TYPES["pred"], [Value(u32)], Value(TYPES["pred"]))) is None
