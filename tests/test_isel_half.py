"""The half-precision, f16/bf16 conversion and carry-chain instructions of the xg1 backend.

* Executors (property tests): each new ISA instruction, executed on random register bit patterns
  (hypothesis), must equal the IR's meaning of the PTX instruction it is selected for
  (:func:`xcc.ir.evaluate.evaluate`, which the IR interpreter runs): the modifiers of the ISA row
  are checked against the IR attributes they stand for, not only against xcc.semantics.
* Selection (whole pipeline): each PTX instruction, on loaded per-thread operands, compiled at -O0
  and -O3 and run on the ISA interpreter (strict hazard mode), must match xcc.semantics bit for bit
  (operands mix random bit patterns with zeros, subnormals, infinities, NaNs, ties and the largest
  finite values).
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_isel_bits import KERNEL, R32, N
from test_isel_bits import check_instruction as check_bits

from xcc.backend.isa import PT, RZ
from xcc.backend.minst import Imm, mi
from xcc.ir.core import Instruction, Value
from xcc.ir.evaluate import evaluate
from xcc.ir.types import PRED, ptx_type
from xcc.semantics import halfp
from xcc.semantics import integer as I
from xcc.semantics.convert import convert
from xcc.semantics.rounding import FORMATS
from xcc.sim.isa.executors import IMPLS, Binder

# the executors run outside the interpreters' np.errstate here: NaN casts are expected
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

F16, BF16 = FORMATS["f16"], FORMATS["bf16"]
M32, M16 = np.uint64(0xFFFFFFFF), np.uint64(0xFFFF)
T = 64  # threads of an executor test

# ============================================================================= executors
words = st.lists(st.integers(0, 0xFFFFFFFF), min_size=T, max_size=T).map(lambda v: np.array(v, np.uint32))
HALF_EDGES = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00,
              0x7C01, 0xFFFF, 0x3555, 0x7F80, 0xFF80, 0x7F7F, 0x0080, 0x3F80]


@st.composite
def half_words(draw):
    """32-bit words whose 16-bit halves are random bit patterns or edge values of f16 and bf16."""
    lanes = draw(st.lists(st.one_of(st.integers(0, 0xFFFF), st.sampled_from(HALF_EDGES)),
                          min_size=2 * T, max_size=2 * T))
    v = np.array(lanes, np.uint32)
    return v[0::2] | (v[1::2] << np.uint32(16))


def _execute(mnemonic, mods, ops, regs, preds=()):
    """Run one instruction on T threads: ``regs`` fill R0.. (32-bit words), ``preds`` P0..; returns the
    register file and the predicates afterwards."""
    ctx = types.SimpleNamespace(regs=np.zeros((16, T), np.uint32), preds=np.zeros((8, T), bool),
                                cbank=bytes(0x200))
    for k, r in enumerate(regs):
        ctx.regs[k] = r
    for k, p in enumerate(preds):
        ctx.preds[k] = p
    run = IMPLS[mnemonic](Binder(ctx, mi(mnemonic, mods=mods, **ops), 0))
    run(slice(0, T), np.arange(T), T)
    return ctx.regs, ctx.preds


def _ir(op, tname, args, rtype=None, pred_last=False, **attrs):
    """The IR's result of ``op.tname`` (attrs) on ``args`` (numpy arrays)."""
    t = ptx_type(tname)
    vals = [Value(PRED if pred_last and k == len(args) - 1 else t) for k in range(len(args))]
    inst = Instruction(op, t, vals, Value(rtype or t), attrs=attrs)
    return evaluate(inst, list(args))


def _narrow(v, tname):
    """An operand as the IR holds a value of type tname (scalar halves: the low 16 bits)."""
    return (np.asarray(v) & np.uint32(0xFFFF)).astype(np.uint16) if ptx_type(tname).bits == 16 else v


HALF_TNAMES = ("f16", "bf16", "f16x2", "bf16x2")


def _hmods(tname, **extra):
    m = {k: v for k, v in extra.items() if v}
    if tname.startswith("bf16"):
        m["type"] = "BF16"
    if tname in ("f16", "bf16"):
        m["shape"] = "H0"
    return m


@settings(max_examples=40, deadline=None)
@given(a=half_words(), b=half_words(), c=half_words(), tname=st.sampled_from(HALF_TNAMES),
       op=st.sampled_from(("add", "sub", "mul", "fma")), rnd=st.sampled_from(("rn", "rz", "rm", "rp")),
       ftz=st.booleans(), sat=st.booleans(), relu=st.booleans())
def test_hadd_hmul_hfma_executors_match_the_ir(a, b, c, tname, op, rnd, ftz, sat, relu):
    relu = relu and op == "fma" and not sat
    mn = {"add": "HADD2", "sub": "HADD2", "mul": "HMUL2", "fma": "HFMA2"}[op]
    mods = _hmods(tname, FTZ=ftz and "FTZ", SAT=sat and "SAT", RELU=relu and "RELU",
                  NEG_B=op == "sub" and "NEG_B", rnd=rnd != "rn" and rnd.upper())
    ops = dict(d=4, a=0, b=1, **({"c": 2} if op == "fma" else {}))
    regs, _ = _execute(mn, mods, ops, [a, b, c])
    args = [_narrow(x, tname) for x in ((a, b, c) if op == "fma" else (a, b))]
    want = _ir(op, tname, args, rnd=rnd, ftz=ftz, sat=sat, relu=relu)
    np.testing.assert_array_equal(regs[4], np.asarray(want).astype(np.uint32))


@settings(max_examples=40, deadline=None)
@given(a=half_words(), b=half_words(), tname=st.sampled_from(HALF_TNAMES), op=st.sampled_from(("min", "max")),
       ftz=st.booleans(), nan=st.booleans(), relu=st.booleans())
def test_hmnmx2_executor_matches_the_ir(a, b, tname, op, ftz, nan, relu):
    mods = _hmods(tname, FTZ=ftz and "FTZ", NAN=nan and "NAN", RELU=relu and "RELU", minmax=op == "max" and "MAX")
    regs, _ = _execute("HMNMX2", mods, dict(d=4, a=0, b=1), [a, b])
    want = _ir(op, tname, [_narrow(a, tname), _narrow(b, tname)], ftz=ftz, NaN=nan, relu=relu)
    np.testing.assert_array_equal(regs[4], np.asarray(want).astype(np.uint32))


CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "num", "nan", "equ", "neu", "ltu", "leu", "gtu", "geu")


@settings(max_examples=40, deadline=None)
@given(a=half_words(), b=half_words(), p=st.lists(st.booleans(), min_size=T, max_size=T),
       tname=st.sampled_from(HALF_TNAMES), cmp=st.sampled_from(CMPS), lane=st.integers(0, 1),
       ftz=st.booleans(), boolop=st.sampled_from((None, "and", "or", "xor")))
def test_hsetp2_executor_matches_the_ir(a, b, p, tname, cmp, lane, ftz, boolop):
    lane = lane if tname.endswith("x2") else 0
    mods = {"cmp": cmp.upper(), **_hmods(tname, FTZ=ftz and "FTZ", lane=lane and "H1",
                                        bool=boolop and boolop.upper())}
    mods.pop("shape", None)
    _, preds = _execute("HSETP2", mods, dict(pd=3, a=0, b=1, ps=(0 if boolop else PT, False)), [a, b],
                        [np.array(p, bool)])
    attrs = {"cmp": cmp, "ftz": ftz, **({"half": lane} if tname.endswith("x2") else {}),
             **({"bool": boolop} if boolop else {})}
    args = [_narrow(a, tname), _narrow(b, tname)] + ([np.array(p, bool)] if boolop else [])
    t = ptx_type(tname)
    inst = Instruction("setp", t, [Value(t), Value(t)] + ([Value(PRED)] if boolop else []), Value(PRED),
                       attrs=attrs)
    np.testing.assert_array_equal(preds[3], evaluate(inst, args))


@settings(max_examples=25, deadline=None)
@given(a=half_words(), tname=st.sampled_from(HALF_TNAMES), fn=st.sampled_from(("ex2", "tanh")), ftz=st.booleans())
def test_hmufu_executor_matches_the_ir(a, tname, fn, ftz):
    regs, _ = _execute("HMUFU", {"fn": fn.upper(), **_hmods(tname, FTZ=ftz and "FTZ")}, dict(d=4, a=0), [a])
    want = _ir(fn, tname, [_narrow(a, tname)], ftz=ftz, approx=True)
    np.testing.assert_array_equal(regs[4], np.asarray(want).astype(np.uint32))


def _cvt_ir(dname, sname, a, **attrs):
    d, s = ptx_type(dname), ptx_type(sname)
    inst = Instruction("cvt", d, [Value(s)], Value(d), attrs={"src": sname, **attrs})
    return np.asarray(evaluate(inst, [a]))


FLOAT_NAMES = {"F16": "f16", "BF16": "bf16", "F32": "f32"}
CVT_RNDS = ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")


@settings(max_examples=60, deadline=None)
@given(a=st.one_of(words, half_words()), dtype=st.sampled_from(("F16", "BF16", "F32")),
       stype=st.sampled_from(("F16", "BF16", "F32")), rnd=st.sampled_from(CVT_RNDS), ftz=st.booleans(),
       flag=st.sampled_from((None, "sat", "relu", "satfinite")))
def test_f2f16_executor_matches_the_ir(a, dtype, stype, rnd, ftz, flag):
    if "F16" not in dtype + stype or (flag in ("relu", "satfinite") and dtype == "F32"):
        return  # F2F.16 has a 16-bit side; .relu/.satfinite exist for f16/bf16 destinations
    mods = {"dtype": dtype, "stype": stype, **({"rnd": rnd.upper()} if rnd != "rn" else {}),
            **({"FTZ": "FTZ"} if ftz else {}), **({flag.upper(): flag.upper()} if flag else {})}
    regs, _ = _execute("F2F.16", mods, dict(d=4, a=0), [a])
    sname = FLOAT_NAMES[stype]
    want = _cvt_ir(FLOAT_NAMES[dtype], sname, _narrow(a, sname), rnd=None if rnd == "rn" else rnd, ftz=ftz,
                   **({flag: True} if flag else {}))
    np.testing.assert_array_equal(regs[4], want.astype(np.uint32))


@settings(max_examples=40, deadline=None)
@given(lo=words, hi=st.one_of(words, half_words()), dtype=st.sampled_from(("F16", "BF16")),
       rnd=st.sampled_from(("rn", "rz", "rm", "rp")), flag=st.sampled_from((None, "SAT", "RELU", "SATFINITE")))
def test_f64_conversion_executors_match_the_ir(lo, hi, dtype, rnd, flag):
    mods = {"dtype": dtype, **({"rnd": rnd.upper()} if rnd != "rn" else {}), **({flag: flag} if flag else {})}
    regs, _ = _execute("F2F.16.F64", mods, dict(d=4, a=0), [lo, hi])
    a64 = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
    dname = FLOAT_NAMES[dtype]
    want = _cvt_ir(dname, "f64", a64, rnd=None if rnd == "rn" else rnd, **({flag.lower(): True} if flag else {}))
    np.testing.assert_array_equal(regs[4], want.astype(np.uint32))
    regs, _ = _execute("F2F.F64.16", {"stype": dtype}, dict(d=4, a=1), [lo, hi])
    got = regs[4].astype(np.uint64) | (regs[5].astype(np.uint64) << np.uint64(32))
    np.testing.assert_array_equal(got, _cvt_ir("f64", dname, _narrow(hi, dname)))


@settings(max_examples=60, deadline=None)
@given(lo=words, hi=words, dtype=st.sampled_from(("F16", "BF16")), signed=st.booleans(), wide=st.booleans(),
       rnd=st.sampled_from(("rn", "rz", "rm", "rp")), flag=st.sampled_from((None, "SAT", "RELU", "SATFINITE")))
def test_i2f16_executors_match_the_ir(lo, hi, dtype, signed, wide, rnd, flag):
    typ = ("S64" if signed else "U64") if wide else ("S32" if signed else "U32")
    mods = {"dtype": dtype, "type": typ, **({"rnd": rnd.upper()} if rnd != "rn" else {}),
            **({flag: flag} if flag else {})}
    regs, _ = _execute("I2F.16.64" if wide else "I2F.16", mods, dict(d=4, a=0), [lo, hi])
    a = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32)) if wide else lo
    sname = ("s" if signed else "u") + ("64" if wide else "32")
    want = _cvt_ir(FLOAT_NAMES[dtype], sname, a, rnd=None if rnd == "rn" else rnd,
                   **({flag.lower(): True} if flag else {}))
    np.testing.assert_array_equal(regs[4], want.astype(np.uint32))


@settings(max_examples=60, deadline=None)
@given(a=half_words(), stype=st.sampled_from(("F16", "BF16")),
       dtype=st.sampled_from(("S32", "U32", "S16", "U16", "S8", "U8", "S64", "U64")),
       rnd=st.sampled_from(("rzi", "rni", "rmi", "rpi")))
def test_f2i16_executors_match_the_ir(a, stype, dtype, rnd):
    wide = dtype.endswith("64")
    mods = {"stype": stype, ("type" if wide else "dtype"): dtype, "rnd": rnd.upper()}
    regs, _ = _execute("F2I.16.64" if wide else "F2I.16", mods, dict(d=4, a=0), [a])
    sname = FLOAT_NAMES[stype]
    want = _cvt_ir(dtype.lower(), sname, _narrow(a, sname), rnd=rnd)
    got = regs[4].astype(np.uint64) | (regs[5].astype(np.uint64) << np.uint64(32)) if wide else regs[4]
    np.testing.assert_array_equal(got, want.astype(got.dtype))


@settings(max_examples=60, deadline=None)
@given(a=words, b=words, c=words, e=words, f=words, g=words, cin=st.lists(st.booleans(), min_size=T, max_size=T),
       op=st.sampled_from(("addc", "subc", "madc")), tname=st.sampled_from(("u32", "s32", "u64", "s64")),
       hi=st.booleans(), imm=st.booleans())
def test_carry_executors_match_the_ir(a, b, c, e, f, g, cin, op, tname, hi, imm):
    """IADD3.CC / IADD.64.CC / IMAD.CC / IMAD.64.CC: the value and the carry-out, as the IR's two
    instructions (without and with attrs.carry) compute them."""
    wide = tname.endswith("64")
    cin = np.array(cin, bool)
    if wide:
        mn = {"addc": "IADD.64.CC", "subc": "IADD.64.CC", "madc": "IMAD.64.CC"}[op]
        regs_in, ops = [a, b, c, e, f, g], dict(d=8, pd=2, a=0, b=2, ps=(1, False))
        if op == "madc":
            ops["c"] = 4
        x = [w.astype(np.uint64) | (v.astype(np.uint64) << np.uint64(32)) for w, v in ((a, b), (c, e), (f, g))]
    else:
        mn = {"addc": "IADD3.CC", "subc": "IADD3.CC", "madc": "IMAD.CC"}[op]
        regs_in, ops = [a, b, c], dict(d=8, pd=2, a=0, b=1, ps=(1, False))
        if op == "madc":
            ops["c"] = 2
        x = [a, b, c]
    if imm:  # a B immediate (sign-extended for the 64-bit forms)
        ops["b"] = Imm(0xFFFFFFF0)
        x[1] = np.full(T, 0xFFFFFFFFFFFFFFF0 if wide else 0xFFFFFFF0, np.uint64 if wide else np.uint32)
    mods = {}
    if op == "subc":
        mods["op"] = "SUB"
    if op == "madc":
        mods["mode"] = "HI" if hi else "LO"
        if tname[0] == "s":
            mods["type"] = "S64" if wide else "S32"
    regs, preds = _execute(mn, mods, ops, regs_in, [np.zeros(T, bool), cin])
    args = x[:3] if op == "madc" else x[:2]
    attrs = {"mode": "hi" if hi else "lo"} if op == "madc" else {}
    want = _ir(op, tname, args + [cin], pred_last=True, **attrs)
    want_cf = _ir(op, tname, args + [cin], rtype=PRED, pred_last=True, carry=True, **attrs)
    got = regs[8].astype(np.uint64) | (regs[9].astype(np.uint64) << np.uint64(32)) if wide else regs[8]
    np.testing.assert_array_equal(got, np.asarray(want).astype(got.dtype))
    np.testing.assert_array_equal(preds[2], want_cf)


def test_carry_executor_without_carry_out_and_with_constant_carry_in():
    """pd = PT discards the carry; ps = !PT is a carry-in of 0 (add.cc), PT of 1."""
    a = np.full(T, 0xFFFFFFFF, np.uint32)
    for ps, want in (((PT, True), 0xFFFFFFFE), ((PT, False), 0xFFFFFFFF)):
        regs, preds = _execute("IADD3.CC", {}, dict(d=4, pd=PT, a=0, b=0, ps=ps), [a])
        assert (regs[4] == want).all() and not preds[:7].any()
    regs, preds = _execute("IADD3.CC", {}, dict(d=RZ, pd=0, a=0, b=Imm(1), ps=(PT, True)), [a])
    assert preds[0].all() and not regs[4:].any()


# ============================================================================= whole pipeline
def _lanes(rng: np.random.Generator, n: int) -> np.ndarray:
    """16-bit patterns: random, f16- and bf16-like ordinary numbers, and edge values."""
    v = rng.integers(0, 1 << 16, n).astype(np.uint64)
    k = n // 4
    v[:k] = (rng.standard_normal(k) * 4).astype(np.float16).view(np.uint16)
    v[k:2 * k] = (rng.standard_normal(k).astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    edges = np.array(HALF_EDGES, np.uint64)
    v[2 * k:2 * k + len(edges)] = edges
    return rng.permutation(v)


def _half_cols(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = []
    for _ in range(4):
        w = _lanes(rng, N) | (_lanes(rng, N) << np.uint64(16)) | (rng.integers(0, 1 << 32, N).astype(np.uint64)
                                                                 << np.uint64(32))
        cols.append(w)
    return cols


def _word_cols(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = []
    edges = np.array([0, 1, 0xFFFFFFFF, 0x80000000, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 1 << 32], np.uint64)
    for k in range(4):
        v = rng.integers(0, 2**64, N, dtype=np.uint64)
        v[:len(edges)] = np.roll(edges, k)
        v[16:48] = np.uint64((1 << 64) - 1)  # carries run through
        cols.append(rng.permutation(v))
    return cols


H_IN = ("cvt.u16.u32 %h1, %r5;\n  cvt.u16.u32 %h2, %r6;\n  cvt.u16.u32 %h3, %r7;\n  ")
H_OUT = "\n  cvt.u32.u16 %r0, %h0;" + R32


def _lo16(x):
    return (np.asarray(x) & M16).astype(np.uint16)


def _lo32(x):
    return (np.asarray(x) & M32).astype(np.uint32)


def _out(v):
    return np.asarray(v).astype(np.uint64)


def _pipeline_cases():
    cases = {}
    fmts = {"f16": F16, "bf16": BF16}
    for tn, fmt in fmts.items():
        for op, fn in (("add", halfp.hadd), ("sub", halfp.hsub), ("mul", halfp.hmul)):
            for flags in ("", ".ftz", ".sat", ".ftz.sat") if tn == "f16" else ("",):
                kw = {"ftz": "ftz" in flags, "sat": "sat" in flags}
                name = f"{op}.rn{flags}.{tn}"
                cases[name] = (H_IN + f"{name} %h0, %h1, %h2;" + H_OUT,
                               lambda a, b, c, e, fn=fn, fmt=fmt, kw=kw: _out(fn(_lo16(a), _lo16(b), fmt, **kw)))
                x2 = f"{op}.rn{flags}.{tn}x2"
                cases[x2] = (f"{x2} %r0, %r5, %r6;" + R32, lambda a, b, c, e, fn=fn, fmt=fmt, kw=kw: _out(
                    halfp.lanewise(lambda p, q: fn(p, q, fmt, **kw), _lo32(a), _lo32(b))))
        for flags in (("", ".relu", ".ftz", ".sat") if tn == "f16" else ("", ".relu")):
            kw = {"ftz": "ftz" in flags, "sat": "sat" in flags, "relu": "relu" in flags}
            name = f"fma.rn{flags}.{tn}"
            cases[name] = (H_IN + f"{name} %h0, %h1, %h2, %h3;" + H_OUT,
                           lambda a, b, c, e, fmt=fmt, kw=kw: _out(halfp.hfma(_lo16(a), _lo16(b), _lo16(c), fmt,
                                                                                **kw)))
            cases[name + "x2"] = (f"{name}x2 %r0, %r5, %r6, %r7;" + R32, lambda a, b, c, e, fmt=fmt, kw=kw: _out(
                halfp.lanewise(lambda p, q, r: halfp.hfma(p, q, r, fmt, **kw), _lo32(a), _lo32(b), _lo32(c))))
        for op in ("min", "max"):
            for flags in ("", ".NaN") + ((".ftz",) if tn == "f16" else ()):  # (.relu: integer min/max only)
                kw = {"ftz": "ftz" in flags, "nan": "NaN" in flags, "relu": "relu" in flags}
                name = f"{op}{flags}.{tn}"
                cases[name] = (H_IN + f"{name} %h0, %h1, %h2;" + H_OUT, lambda a, b, c, e, fmt=fmt, kw=kw, m=op == "min":
                               _out(halfp.hminmax(_lo16(a), _lo16(b), fmt, m, **kw)))
                cases[name + "x2"] = (f"{name}x2 %r0, %r5, %r6;" + R32, lambda a, b, c, e, fmt=fmt, kw=kw, m=op == "min":
                                      _out(halfp.lanewise(lambda p, q: halfp.hminmax(p, q, fmt, m, **kw),
                                                          _lo32(a), _lo32(b))))
        for op, fn in (("neg", halfp.hneg), ("abs", halfp.habs)):
            cases[f"{op}.{tn}"] = (H_IN + f"{op}.{tn} %h0, %h1;" + H_OUT,
                                   lambda a, b, c, e, fn=fn, fmt=fmt: _out(fn(_lo16(a), fmt)))
            cases[f"{op}.{tn}x2"] = (f"{op}.{tn}x2 %r0, %r5;" + R32, lambda a, b, c, e, fn=fn, fmt=fmt: _out(
                halfp.lanewise(lambda p: fn(p, fmt), _lo32(a))))
        for op in ("ex2", "tanh"):
            name = f"{op}.approx.ftz.{tn}" if (op, tn) == ("ex2", "bf16") else f"{op}.approx.{tn}"  # ptxas: .ftz
            cases[name] = (H_IN + f"{name} %h0, %h1;" + H_OUT,
                           lambda a, b, c, e, op=op, fmt=fmt: _out(halfp.happrox(op, _lo16(a), fmt)))
        for cmp in ("lt", "equ", "ge", "nan", "neu"):
            cases[f"setp.{cmp}.{tn}"] = (
                H_IN + f"setp.{cmp}.{tn} %p1, %h1, %h2;\n  selp.u32 %r0, 1, 0, %p1;" + R32,
                lambda a, b, c, e, cmp=cmp, fmt=fmt: _out(halfp.hcompare(cmp, _lo16(a), _lo16(b), fmt)))
            cases[f"setp.{cmp}.{tn}x2"] = (
                f"setp.{cmp}.{tn}x2 %p0|%p1, %r5, %r6;\n  selp.u32 %r1, 1, 0, %p0;\n  selp.u32 %r2, 2, 0, %p1;\n"
                "  or.b32 %r0, %r1, %r2;" + R32,
                lambda a, b, c, e, cmp=cmp, fmt=fmt: _out(
                    halfp.hcompare(cmp, halfp.lane(_lo32(a), 0), halfp.lane(_lo32(b), 0), fmt).astype(np.uint32)
                    | halfp.hcompare(cmp, halfp.lane(_lo32(a), 1), halfp.lane(_lo32(b), 1), fmt).astype(np.uint32) * 2))
        # conversions: f32 <-> half, f64 <-> half, int <-> half
        kind = "bf" if tn == "bf16" else "f"
        for rnd in ("rn", "rz", "rm", "rp"):
            for flags in ("", ".relu", ".satfinite"):
                kw = {"relu": "relu" in flags, "satfinite": "satfinite" in flags}
                name = f"cvt.{rnd}{flags}.{tn}.f32"
                cases[name] = ("mov.b32 %f1, %r5;\n  " + f"{name} %h0, %f1;" + H_OUT,
                               lambda a, b, c, e, r=rnd, k=kind, kw=kw: _out(
                                   convert(_lo32(a), 16, k, 32, "f", rnd=None if r == "rn" else r, **kw)))
            cases[f"cvt.{rnd}.{tn}.f64"] = (f"mov.b64 %fd1, %rd7;\n  cvt.{rnd}.{tn}.f64 %h0, %fd1;" + H_OUT,
                                             lambda a, b, c, e, r=rnd, k=kind: _out(
                                                 convert(a, 16, k, 64, "f", rnd=None if r == "rn" else r)))
            for it in ("s32", "u32", "s64", "u64", "s16"):
                src = {"32": "%r5", "64": "%rd7", "16": "%h1"}[it[1:]]
                cases[f"cvt.{rnd}.{tn}.{it}"] = (H_IN + f"cvt.{rnd}.{tn}.{it} %h0, {src};" + H_OUT,
                                                  lambda a, b, c, e, r=rnd, k=kind, it=it: _out(convert(
                                                      a & np.uint64((1 << int(it[1:])) - 1), 16, k, int(it[1:]),
                                                      it[0], rnd=None if r == "rn" else r)))
        cases[f"cvt.f32.{tn}"] = (H_IN + f"cvt.f32.{tn} %f0, %h1;\n  mov.b32 %r0, %f0;" + R32,
                                  lambda a, b, c, e, k=kind: _out(convert(_lo16(a), 32, "f", 16, k)))
        cases[f"cvt.f64.{tn}"] = (H_IN + f"cvt.f64.{tn} %fd0, %h1;\n  mov.b64 %rd20, %fd0;",
                                  lambda a, b, c, e, k=kind: _out(convert(_lo16(a), 64, "f", 16, k)))
        for rnd in ("rni", "rzi", "rmi", "rpi"):
            cases[f"cvt.{rnd}.{tn}.{tn}"] = (H_IN + f"cvt.{rnd}.{tn}.{tn} %h0, %h1;" + H_OUT,
                                             lambda a, b, c, e, r=rnd, k=kind: _out(convert(_lo16(a), 16, k, 16, k,
                                                                                             rnd=r)))
            for it in ("s32", "u32", "s64", "u64", "s16", "u16"):
                bits = int(it[1:])
                dst = {32: "%r0", 64: "%rd20", 16: "%h0"}[bits]
                tail = {32: R32, 64: "", 16: H_OUT}[bits]
                cases[f"cvt.{rnd}.{it}.{tn}"] = (H_IN + f"cvt.{rnd}.{it}.{tn} {dst}, %h1;" + tail,
                                                  lambda a, b, c, e, r=rnd, k=kind, it=it: _out(convert(
                                                      _lo16(a), int(it[1:]), it[0], 16, k, rnd=r)))
    cases["cvt.rn.f16x2.f32"] = ("mov.b32 %f1, %r5;\n  mov.b32 %f2, %r6;\n  cvt.rn.f16x2.f32 %r0, %f1, %f2;" + R32,
                                 lambda a, b, c, e: _out(halfp.pack2(convert(_lo32(b), 16, "f", 32, "f"),
                                                                     convert(_lo32(a), 16, "f", 32, "f"))))
    cases["cvt.rn.relu.bf16x2.f32"] = (
        "mov.b32 %f1, %r5;\n  mov.b32 %f2, %r6;\n  cvt.rn.relu.bf16x2.f32 %r0, %f1, %f2;" + R32,
        lambda a, b, c, e: _out(halfp.pack2(convert(_lo32(b), 16, "bf", 32, "f", relu=True),
                                            convert(_lo32(a), 16, "bf", 32, "f", relu=True))))
    # pack / unpack (mov with vector operands)
    cases["mov.b32.pack16"] = (H_IN + "mov.b32 %r0, {%h1, %h2};" + R32,
                               lambda a, b, c, e: (a & M16) | ((b & M16) << np.uint64(16)))
    cases["mov.b32.pack16.const"] = (H_IN + "mov.b32 %r0, {0, %h2};" + R32, lambda a, b, c, e: (b & M16) << np.uint64(16))
    cases["mov.b32.unpack16"] = ("mov.b32 {%h1, %h2}, %r5;\n  cvt.u32.u16 %r1, %h1;\n  cvt.u32.u16 %r2, %h2;\n"
                                 "  mad.lo.u32 %r0, %r2, 3, %r1;" + R32,
                                 lambda a, b, c, e: (((a >> np.uint64(16)) & M16) * np.uint64(3) + (a & M16)) & M32)
    cases["mov.b32.unpack16.sink"] = ("mov.b32 {_, %h0}, %r5;" + H_OUT, lambda a, b, c, e: (a >> np.uint64(16)) & M16)
    cases["mov.b64.pack32"] = ("mov.b64 %rd20, {%r5, %r6};", lambda a, b, c, e: (a & M32) | (b << np.uint64(32)))
    cases["mov.b64.unpack32"] = ("mov.b64 {%r1, %r2}, %rd7;\n  sub.u32 %r0, %r1, %r2;" + R32,
                                 lambda a, b, c, e: ((a & M32) - (a >> np.uint64(32))) & M32)
    cases["mov.b64.pack16"] = (H_IN + "mov.b64 %rd20, {%h1, %h2, %h3, %h1};",
                               lambda a, b, c, e: (a & M16) | (b & M16) << np.uint64(16) | (c & M16) << np.uint64(32)
                               | (a & M16) << np.uint64(48))
    cases["mov.b64.unpack16"] = ("mov.b64 {%h0, %h1, %h2, %h3}, %rd7;\n  mov.b32 %r0, {%h3, %h2};" + R32,
                                 lambda a, b, c, e: (a >> np.uint64(48)) | ((a >> np.uint64(32)) & M16) << np.uint64(16))
    cases["mov.b32.pack8"] = ("{ .reg .b8 %c<4>;\n  cvt.u8.u32 %c0, %r5;\n  cvt.u8.u32 %c1, %r6;\n"
                              "  cvt.u8.u32 %c2, %r7;\n  cvt.u8.u32 %c3, %r8;\n  mov.b32 %r0, {%c0, %c1, %c2, %c3}; }" + R32,
                              lambda a, b, c, e: (a & np.uint64(0xFF)) | (b & np.uint64(0xFF)) << np.uint64(8)
                              | (c & np.uint64(0xFF)) << np.uint64(16) | (e & np.uint64(0xFF)) << np.uint64(24))
    cases["mov.b16.pack8"] = ("{ .reg .b8 %c<2>;\n  cvt.u8.u32 %c0, %r5;\n  cvt.u8.u32 %c1, %r6;\n"
                              "  mov.b16 %h0, {%c0, %c1}; }" + H_OUT,
                              lambda a, b, c, e: (a & np.uint64(0xFF)) | (b & np.uint64(0xFF)) << np.uint64(8))
    cases["mov.b32.unpack8"] = ("{ .reg .b8 %c<4>;\n  mov.b32 {%c0, %c1, %c2, %c3}, %r5;\n  cvt.u32.u8 %r1, %c2;\n"
                                "  cvt.u32.u8 %r2, %c3;\n  shl.b32 %r2, %r2, 8;\n  or.b32 %r0, %r1, %r2; }" + R32,
                                lambda a, b, c, e: (a >> np.uint64(16)) & M16)
    return cases


def _carry_cases():
    cases = {}
    for t in ("u32", "s32"):
        cases[f"add.cc.addc.{t}"] = (
            f"add.cc.{t} %r1, %r5, %r6;\n  addc.cc.{t} %r2, %r7, %r8;\n  addc.{t} %r3, 0, 0;\n"
            "  mov.b64 %rd20, {%r1, %r2};\n  cvt.u64.u32 %rd21, %r3;\n  add.u64 %rd20, %rd20, %rd21;",
            lambda a, b, c, e: _ref_add(a, b, c, e))
        cases[f"sub.cc.subc.{t}"] = (
            f"sub.cc.{t} %r1, %r5, %r6;\n  subc.cc.{t} %r2, %r7, %r8;\n  subc.{t} %r3, 0, 0;\n"
            "  mov.b64 %rd20, {%r1, %r2};\n  cvt.u64.u32 %rd21, %r3;\n  xor.b64 %rd20, %rd20, %rd21;",
            lambda a, b, c, e: _ref_sub(a, b, c, e))
        cases[f"mad.cc.madc.{t}"] = (
            f"mad.lo.cc.{t} %r1, %r5, %r6, %r7;\n  madc.hi.cc.{t} %r2, %r5, %r6, %r8;\n  madc.lo.{t} %r3, %r7, %r8, 5;\n"
            "  mov.b64 %rd20, {%r1, %r2};\n  cvt.u64.u32 %rd21, %r3;\n  xor.b64 %rd20, %rd20, %rd21;",
            lambda a, b, c, e, s=t[0] == "s": _ref_mad(a, b, c, e, s))
    for t in ("u64", "s64"):
        cases[f"add.cc.addc.{t}"] = (f"add.cc.{t} %rd11, %rd7, %rd8;\n  addc.cc.{t} %rd12, %rd9, %rd10;\n"
                                     f"  addc.{t} %rd13, 0, 0;\n  xor.b64 %rd20, %rd11, %rd12;\n"
                                     "  add.u64 %rd20, %rd20, %rd13;", lambda a, b, c, e: _ref_add64(a, b, c, e))
        cases[f"sub.cc.subc.{t}"] = (f"sub.cc.{t} %rd11, %rd7, %rd8;\n  subc.cc.{t} %rd12, %rd9, 7;\n"
                                     f"  subc.{t} %rd13, 0, 0;\n  xor.b64 %rd20, %rd11, %rd12;\n"
                                     "  add.u64 %rd20, %rd20, %rd13;", lambda a, b, c, e: _ref_sub64(a, b, c, e))
        cases[f"mad.cc.madc.{t}"] = (f"mad.lo.cc.{t} %rd11, %rd7, %rd8, %rd9;\n  madc.hi.{t} %rd12, %rd7, %rd8, %rd10;\n"
                                     "  xor.b64 %rd20, %rd11, %rd12;",
                                     lambda a, b, c, e, s=t[0] == "s": _ref_mad64(a, b, c, e, s))
        cases[f"mul.hi.{t}"] = (f"mul.hi.{t} %rd20, %rd7, %rd8;", lambda a, b, c, e, s=t[0] == "s":
                                I.mul(a, b, 64, "hi", s))
        cases[f"mad.hi.{t}"] = (f"mad.hi.{t} %rd20, %rd7, %rd8, %rd9;", lambda a, b, c, e, s=t[0] == "s":
                                I.mad(a, b, c, 64, "hi", s))
    return cases


def _ref_add(a, b, c, e):
    f = np.zeros(N, bool)
    lo, cf = I.add_carry(a, b, f, 32)
    hi, cf = I.add_carry(c, e, cf, 32)
    top, _ = I.add_carry(0, 0, cf, 32)
    return (lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(32)) + top.astype(np.uint64)


def _ref_sub(a, b, c, e):
    f = np.ones(N, bool)  # sub.cc is subc.cc with CF = 1 (CC.CF is NVIDIA's carry, not the borrow)
    lo, cf = I.sub_borrow(a, b, f, 32)
    hi, cf = I.sub_borrow(c, e, cf, 32)
    top, _ = I.sub_borrow(0, 0, cf, 32)
    return (lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(32)) ^ top.astype(np.uint64)


def _ref_mad(a, b, c, e, signed):
    f = np.zeros(N, bool)
    lo, cf = I.mad_carry(a, b, c, f, 32, False, signed)
    hi, cf = I.mad_carry(a, b, e, cf, 32, True, signed)
    top, _ = I.mad_carry(c, e, np.full(N, 5, np.uint32), cf, 32, False, signed)
    return (lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(32)) ^ top.astype(np.uint64)


def _ref_add64(a, b, c, e):
    lo, cf = I.add_carry(a, b, np.zeros(N, bool), 64)
    hi, cf = I.add_carry(c, e, cf, 64)
    top, _ = I.add_carry(np.uint64(0), np.uint64(0), cf, 64)
    return (lo ^ hi) + top


def _ref_sub64(a, b, c, e):
    lo, cf = I.sub_borrow(a, b, np.ones(N, bool), 64)  # sub.cc: CF = 1
    hi, cf = I.sub_borrow(c, np.uint64(7), cf, 64)
    top, _ = I.sub_borrow(np.uint64(0), np.uint64(0), cf, 64)
    return (lo ^ hi) + top


def _ref_mad64(a, b, c, e, signed):
    lo, cf = I.mad_carry(a, b, c, np.zeros(N, bool), 64, False, signed)
    hi, _ = I.mad_carry(a, b, e, cf, 64, True, signed)
    return lo ^ hi


PIPELINE = {**_pipeline_cases(), **_carry_cases()}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(PIPELINE))
def test_instruction_matches_semantics(name, opt_level):
    body, ref = PIPELINE[name]
    seed = sum(map(ord, name))
    carry = name.startswith(("add.cc", "sub.cc", "mad.cc", "mul.hi", "mad.hi"))
    cols = _word_cols(seed) if carry else _half_cols(seed)
    check_instruction(name, body, ref, cols, opt_level)


KERNEL90 = KERNEL.replace(".target sm_80", ".target sm_90")  # bf16 arithmetic needs sm_90


def check_instruction(name: str, body: str, ref, cols: list[np.ndarray], opt_level: int) -> None:
    """test_isel_bits.check_instruction on an sm_90 module (f64 registers declared in a scope)."""
    if "%fd" in body:
        body = "{ .reg .f64 %fd<4>;\n  " + body + " }"
    check_bits(name, body, ref, cols, opt_level, KERNEL90)


def test_set_on_half_x2_selects_each_element():
    """set.gt.u32.f16x2 with a true predicate: all ones per element where the comparison holds."""
    body = ("setp.eq.u32 %p1, %r5, %r5;\n  set.gt.and.u32.f16x2 %r0, %r5, %r6, %p1;" + R32)

    def ref(a, b, c, e):
        x, y = _lo32(a), _lo32(b)
        g0 = halfp.hcompare("gt", halfp.lane(x, 0), halfp.lane(y, 0), F16)
        g1 = halfp.hcompare("gt", halfp.lane(x, 1), halfp.lane(y, 1), F16)
        return _out(np.where(g0, 0xFFFF, 0) | np.where(g1, 0xFFFF0000, 0))

    check_instruction("set.gt.f16x2", body, ref, _half_cols(7), 3)


def test_half_atomics_select_atomg_h():
    """x2 atomics are not integer adds: atom.add.noftz.f16x2 selects ATOMG.H (type F16X2), run against an exact
    reference in tests/test_isa_gaps_more.py."""
    from xcc.driver import CompileOptions, Source, compile_module

    body = "atom.global.add.noftz.f16x2 %r0, [%rd3], %r5;" + R32
    obj = compile_module([Source(KERNEL90.format(body=body), "k.ptx")], CompileOptions())
    atoms = [i for i in obj.kernels["k"].instructions if i.mnemonic.startswith("ATOM")]
    assert [(i.mnemonic, i.mods.get("type")) for i in atoms] == [("ATOMG.H", "F16X2")]


def test_carry_pair_selects_one_instruction():
    """add.cc + addc: the IR's value and carry-out instructions of each become one IADD3.CC writing both."""
    from xcc.driver import CompileOptions, Source, compile_module

    body = "add.cc.u32 %r1, %r5, %r6;\n  addc.u32 %r2, %r7, %r8;\n  mov.b64 %rd20, {%r1, %r2};"
    obj = compile_module([Source(KERNEL90.format(body=body), "k.ptx")], CompileOptions(opt_level=3))
    mnemonics = [i.mnemonic for i in obj.kernels["k"].instructions]
    assert mnemonics.count("IADD3.CC") == 2, mnemonics
