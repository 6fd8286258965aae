"""instcombine (passes/instcombine.py): every rewrite is bit-exact.  Property tests build small functions,
run the pass, and compare the stored results with xcc.ir.evaluate before and after on random operands
(edge values included); the -G kernels compute the same bits on the IR interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pass_harness import assert_pass_preserves, build_text, corpus_cases, debug_cases

from xcc.ir.core import Block, Const, Function, Instruction, Value
from xcc.ir.evaluate import evaluate
from xcc.ir.fold import const_array
from xcc.ir.types import PRED, TYPES
from xcc.ir.verifier import verify_function
from xcc.passes import PassManager
from xcc.passes.divconst import signed_magic
from xcc.passes.instcombine import InstCombine

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
U64 = TYPES["u64"]


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("instcombine", case, before="simplifycfg")


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("instcombine", case)


# --------------------------------------------------------------------------- a tiny evaluator


def _val(env, v):
    return const_array(v) if isinstance(v, Const) else env[v]


def run(fn: Function, inputs: dict) -> list[int]:
    """Run ``fn`` (pure instructions, br/cbr/phis, ``st`` as outputs) on scalar ``inputs``; the stored values."""
    env = {v: const_array(Const(v.type, x)) for v, x in inputs.items()}
    out, prev, b = [], None, fn.entry
    for _ in range(100):
        vals = [_val(env, phi.args[b.preds.index(prev)]) for phi in b.phis]
        for phi, x in zip(b.phis, vals):
            env[phi.result] = x
        for inst in b.instructions:
            if inst.op == "ld_param":
                continue
            if inst.op == "st":
                out.append(int(np.asarray(_val(env, inst.args[1])).reshape(-1)[0]))
            elif inst.op == "ret":
                return out
            elif inst.op == "br":
                prev, b = b, inst.targets[0]
                break
            elif inst.op == "cbr":
                prev, b = b, inst.targets[0 if bool(_val(env, inst.args[0])[0]) else 1]
                break
            else:
                env[inst.result] = evaluate(inst, [_val(env, a) for a in inst.args])
    raise AssertionError("no ret")


def make_fn(insts: list[Instruction]) -> Function:
    """One block: the operands ``insts`` use without defining them (loaded as parameters), ``insts``, a store
    of each result, ret."""
    b = Block("entry")
    fn = Function("f", True, [], [b])
    addr = Value(U64)
    defined = {i.result for i in insts}
    inputs = list(dict.fromkeys(a for i in insts for a in i.args if not isinstance(a, Const) and a not in defined))
    for k, v in enumerate([addr, *inputs]):
        b.append(Instruction("ld_param", v.type, [], v, {"offset": 8 * k}))
    for i in insts:
        b.append(i)
    for i in insts:
        if i.result is not None:
            b.append(Instruction("st", i.result.type, [addr, i.result], None, {"space": "global", "offset": 0}))
    b.append(Instruction("ret", None, []))
    return fn


def check(fn: Function, inputs: dict) -> Function:
    want = run(fn, inputs)
    verify_function(fn)
    InstCombine().run_function(fn)
    verify_function(fn)
    assert run(fn, inputs) == want
    return fn


INT_TYPES = ["u16", "s16", "b16", "u32", "s32", "b32", "u64", "s64", "b64"]


def _interesting(bits):
    m = (1 << bits) - 1
    return st.one_of(st.integers(0, m), st.sampled_from([0, 1, 2, 3, 5, 7, 10, 64, m, m - 1, m - 6, 1 << (bits - 1),
                                                         (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]),
                     st.integers(0, bits - 1).map(lambda k: 1 << k), st.integers(0, bits - 1).map(lambda k: m - (1 << k) + 1))


@settings(max_examples=250, deadline=None)
@given(data=st.data(), typ=st.sampled_from(INT_TYPES),
       op=st.sampled_from(["add", "sub", "mul", "and", "or", "xor", "shl", "shr", "div", "rem"]),
       shape=st.sampled_from(["xc", "cx", "xx"]))
def test_binary_rules_exact(data, typ, op, shape):
    t = TYPES[typ]
    bits = t.bits
    if op in ("div", "rem") and t.kind == "b" or op in ("shl", "shr") and shape != "xc":
        return
    x = Value(t)
    c = data.draw(_interesting(bits), "c")
    if op in ("shl", "shr"):
        b = Const(TYPES["u32"], data.draw(st.sampled_from([0, 1, bits - 1, bits, 40])))
        a = x
    else:
        a, b = {"xc": (x, Const(t, c)), "cx": (Const(t, c), x), "xx": (x, x)}[shape]
    attrs = {"mode": "lo"} if op == "mul" else {}
    inst = Instruction(op, t, [a, b], Value(t), attrs)
    xv = data.draw(_interesting(bits), "x")
    check(make_fn([inst]), {x: xv})


@settings(max_examples=150, deadline=None)
@given(data=st.data(), typ=st.sampled_from(["s16", "s32", "s64", "u16", "u32", "u64"]), op=st.sampled_from(["div", "rem"]))
def test_division_by_constants_exact(data, typ, op):
    t = TYPES[typ]
    bits = t.bits
    d = data.draw(_interesting(bits), "d")
    x = Value(t)
    fn = make_fn([Instruction(op, t, [x, Const(t, d)], Value(t))])
    for xv in data.draw(st.lists(_interesting(bits), min_size=4, max_size=8), "xs"):
        check(make_fn([Instruction(op, t, [x, Const(t, d)], Value(t))]), {x: xv})
    InstCombine().run_function(fn)
    ops = [i.op for i in fn.blocks[0].instructions]
    if d not in (0, 1) and (t.kind == "u" or d != (1 << bits) - 1):
        assert "div" not in ops and "rem" not in ops, ops  # every other constant is a multiply or a shift


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_unsigned_magic_small_divisors(bits):
    """The unsigned magic multiply (with and without the add fix-up) divides exactly for every divisor below 100
    and random large ones, on edge and random dividends."""
    rng = np.random.default_rng(bits + 1)
    m = (1 << bits) - 1
    xs = [0, 1, m, m - 1, 1 << (bits - 1), *map(int, rng.integers(0, m, 30, dtype=np.uint64))]
    t = TYPES[f"u{bits}"]
    divisors = [*range(3, 100), *map(int, rng.integers(3, m, 10, dtype=np.uint64))]
    for d in divisors:
        if d & (d - 1) == 0:
            continue
        x = Value(t)
        fn = make_fn([Instruction("div", t, [x, Const(t, d)], Value(t)), Instruction("rem", t, [x, Const(t, d)], Value(t))])
        ref = [run(fn, {x: v}) for v in xs]
        InstCombine().run_function(fn)
        assert [run(fn, {x: v}) for v in xs] == ref, d


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_signed_magic_exhaustive_small_divisors(bits):
    """The magic multiply gives C division for every divisor in [-100, 100] on edge and random dividends."""
    rng = np.random.default_rng(bits)
    m = (1 << bits) - 1
    xs = [0, 1, m, 1 << (bits - 1), (1 << (bits - 1)) - 1, *map(int, rng.integers(0, m, 40, dtype=np.uint64))]
    t = TYPES[f"s{bits}"]
    for d in range(-100, 101):
        if d in (0, 1, -1) or abs(d) & (abs(d) - 1) == 0:
            continue
        signed_magic(d, bits)
        x = Value(t)
        fn = make_fn([Instruction("div", t, [x, Const(t, d)], Value(t))])
        ref = [run(fn, {x: v}) for v in xs]
        InstCombine().run_function(fn)
        assert [run(fn, {x: v}) for v in xs] == ref, d


@settings(max_examples=120, deadline=None)
@given(data=st.data(), typ=st.sampled_from(["u64", "s64"]), op=st.sampled_from(["div", "rem"]))
def test_div64_bypass_exact(data, typ, op):
    t = TYPES[typ]
    small = st.integers(0, (1 << 32) - 1)
    a, b = Value(t), Value(t)
    av = data.draw(st.one_of(small, _interesting(64)), "a")
    bv = data.draw(st.one_of(small, _interesting(64), st.just(0)), "b")
    fn = make_fn([Instruction(op, t, [a, b], Value(t))])
    check(fn, {a: av, b: bv})
    assert len(fn.blocks) == 4
    assert [i.op for i in fn.blocks[1].instructions] == ["cvt", "cvt", op, "cvt", "br"]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), typ=st.sampled_from(["u32", "s32", "s64", "f32", "f64", "u16"]),
       cmp=st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
                            "gtu", "geu", "num", "nan"]))
def test_not_of_setp_exact(data, typ, cmp):
    """not(setp a cmp b) == setp a inverse(cmp) b, NaNs included for floats; setp x, x folds for integers."""
    t = TYPES[typ]
    is_f = t.kind == "f"
    if is_f != (cmp not in ("lo", "ls", "hi", "hs")) and cmp not in ("eq", "ne", "lt", "le", "gt", "ge"):
        return
    m = (1 << t.bits) - 1
    nan = 0x7FC00001 if t.bits == 32 else 0x7FF8000000000001
    vals = st.one_of(_interesting(t.bits), st.sampled_from([nan, 0, 1 << (t.bits - 1)])) if is_f else _interesting(t.bits)
    a, b = Value(t), Value(t)
    p, q, s = Value(PRED), Value(PRED), Value(PRED)
    insts = [Instruction("setp", t, [a, b], p, {"cmp": cmp}), Instruction("not", PRED, [p], q),
             Instruction("setp", t, [a, a], s, {"cmp": cmp})]
    fn = make_fn(insts)
    check(fn, {a: data.draw(vals, "a") & m, b: data.draw(vals, "b") & m})
    nots = [i for i in fn.blocks[0].instructions if i.op == "not"]
    assert not nots


@settings(max_examples=200, deadline=None)
@given(data=st.data(), inner=st.sampled_from(["u8", "s8", "u16", "s16", "u32", "s32"]),
       mid=st.sampled_from(["u32", "s32", "u64", "s64"]), outer=st.sampled_from(["u8", "s8", "u16", "s16", "u32", "s32"]))
def test_cvt_round_trip_exact(data, inner, mid, outer):
    ti, tm, to = TYPES[inner], TYPES[mid], TYPES[outer]
    if tm.bits < ti.bits:
        return
    x = Value(ti)
    w, n = Value(tm), Value(to)
    fn = make_fn([Instruction("cvt", tm, [x], w, {"src": inner}), Instruction("cvt", to, [w], n, {"src": mid})])
    check(fn, {x: data.draw(_interesting(ti.bits))})


@settings(max_examples=200, deadline=None)
@given(data=st.data(), typ=st.sampled_from(["u32", "s64", "b16"]))
def test_chains_exact(data, typ):
    """(x + c1) + c2, x - c, not(not x), neg(neg x), and/or/xor on predicates."""
    t = TYPES[typ]
    bits = t.bits
    x = Value(t)
    c1, c2 = data.draw(_interesting(bits)), data.draw(_interesting(bits))
    v1, v2, v3, v4, v5, v6 = (Value(t) for _ in range(6))
    insts = [Instruction("add", t, [x, Const(t, c1)], v1), Instruction("add", t, [v1, Const(t, c2)], v2),
             Instruction("sub", t, [v2, Const(t, c1)], v3), Instruction("not", t, [x], v4),
             Instruction("not", t, [v4], v5), Instruction("sub", t, [v5, v5], v6)]
    if t.kind != "b":
        n1, n2 = Value(t), Value(t)
        insts += [Instruction("neg", t, [x], n1), Instruction("neg", t, [n1], n2)]
    p, q, r = Value(PRED), Value(PRED), Value(PRED)
    insts += [Instruction("setp", t, [x, Const(t, c1)], p, {"cmp": "eq"}),
              Instruction("and", PRED, [p, Const(PRED, 1)], q), Instruction("xor", PRED, [q, q], r)]
    fn = check(make_fn(insts), {x: data.draw(_interesting(bits))})
    adds = [i for i in fn.blocks[0].instructions if i.op == "add"]
    assert all(not isinstance(i.args[0], Const) for i in adds)


# --------------------------------------------------------------------------- on PTX


def test_not_feeding_cbr_is_folded_into_the_branch():
    text = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.lt.s32 %p1, %r2, %r1;
  not.pred %p2, %p1;
  @%p2 bra DONE;
  st.global.u32 [%rd1], %r2;
DONE:
  ret;
}
"""
    mod = build_text(text)
    PassManager("instcombine,dce", verify=True).run(mod)
    ops = [i.op for i in mod.functions[0].instructions()]
    assert "not" not in ops
    fn = mod.functions[0]
    cbr = next(i for i in fn.instructions() if i.op == "cbr")
    setp = next(i for i in fn.instructions() if i.result is cbr.args[0])  # not(lt) became ge
    assert setp.op == "setp" and setp.attrs["cmp"] == "ge" and cbr.targets[0].name == "DONE"


def test_not_of_a_non_compare_feeding_cbr_swaps_the_targets():
    p, q = Value(PRED), Value(PRED)
    b, t, f = Block("entry"), Block("t"), Block("f")
    fn = Function("g", True, [], [b, t, f])
    b.append(Instruction("ld_param", PRED, [], p, {"offset": 0}))
    b.append(Instruction("not", PRED, [p], q))
    b.append(Instruction("cbr", None, [q], None, {"targets": [t, f]}))
    t.append(Instruction("ret", None, []))
    f.append(Instruction("ret", None, []))
    t.preds, f.preds = [b], [b]
    InstCombine().run_function(fn)
    verify_function(fn)
    cbr = b.instructions[-1]
    assert cbr.args == [p] and cbr.targets == [f, t]


DIVS = HEADER + """
.visible .entry divs(.param .u64 inp, .param .u64 out, .param .u64 den)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<20>;
  ld.param.u64 %rd1, [inp];
  ld.param.u64 %rd2, [out];
  ld.param.u64 %rd19, [den];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u64 %rd5, [%rd4];
  mul.wide.u32 %rd6, %r1, 64;
  add.s64 %rd7, %rd2, %rd6;
  div.u64 %rd8, %rd5, 7;
  rem.u64 %rd9, %rd5, 10;
  div.s64 %rd10, %rd5, -5;
  rem.s64 %rd11, %rd5, 12;
  cvt.u32.u64 %r2, %rd5;
  div.u32 %r3, %r2, 641;
  div.s32 %r4, %r2, 7;
  rem.u32 %r5, %r2, 1000;
  div.u64 %rd12, %rd5, %rd19;
  st.global.u64 [%rd7], %rd8;
  st.global.u64 [%rd7+8], %rd9;
  st.global.u64 [%rd7+16], %rd10;
  st.global.u64 [%rd7+24], %rd11;
  st.global.u32 [%rd7+32], %r3;
  st.global.u32 [%rd7+36], %r4;
  st.global.u32 [%rd7+40], %r5;
  st.global.u64 [%rd7+48], %rd12;
  ret;
}
"""


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_division_rewrites_compile_and_run(engine):
    """The magic-number sequences and the 64-bit bypass through the backend (and the IR interpreter) agree
    with C division; the den parameter is small, so the bypass's 32-bit path runs."""
    from xcc import runtime as rt

    rng = np.random.default_rng(7)
    n = 64
    x = rng.integers(0, 1 << 64, n, dtype=np.uint64)
    x[:4] = [0, 1, (1 << 64) - 1, 1 << 63]
    x[4:36] &= np.uint64(0xFFFFFFFF)  # some dividends fit in 32 bits
    device = rt.Device()
    d_in, d_out = rt.to_device(x, device), rt.to_device(np.zeros(n * 8, np.uint64), device)
    mod = rt.load_module(DIVS, engine=engine, device=device, passes="instcombine,dce")
    mod.get_function("divs").launch(1, n, [d_in, d_out, np.uint64(3)])
    got = d_out.copy_to_host().reshape(n, 8)
    sx = x.view(np.int64)

    def cdiv(a, b):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q

    for i in range(n):
        xi, si, x32 = int(x[i]), int(sx[i]), int(x[i]) & 0xFFFFFFFF
        s32 = x32 - (1 << 32) if x32 >> 31 else x32
        want64 = [xi // 7, xi % 10, cdiv(si, -5) & ((1 << 64) - 1), (si - cdiv(si, 12) * 12) & ((1 << 64) - 1)]
        assert [int(v) for v in got[i, :4]] == want64, i
        w32 = got[i, 4:6].view(np.uint32)
        assert [int(v) for v in w32] == [x32 // 641, cdiv(s32, 7) & 0xFFFFFFFF, x32 % 1000, 0][:4], i
        assert int(got[i, 6]) == xi // 3, i
