"""Volta's quad-pair ``mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype`` (sm_70) on both engines at -O0
and -O3, bit for bit with each other and with a numpy reference.

Each kernel loads every lane's A, B and C registers from memory, runs one ``mma`` and stores its D registers.
The test places the four quad pairs' matrices into those registers with the fragment tables of the PTX ISA
("Matrix Fragments for mma.m8n8k4 with .f16 floating point type"), written out below, and reads D back the same
way.  Reference: xcc's documented rule (docs/semantics.md), in numpy float32: ``acc = C``, then for k = 0..3
``acc = acc + A[m, k] * B[k, n]`` (the product of two f16 is exact in float32; the float32 addition rounds once,
to nearest even), and an .f16 D is ``float16(acc)``.  Nothing here calls xcc.semantics."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.sources import Source

TYPES = [("f16", "f16"), ("f32", "f32"), ("f32", "f16")]  # (dtype, ctype): the forms ptxas 13.0 accepts
LAYOUTS = [("row", "col"), ("row", "row"), ("col", "col"), ("col", "row")]
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]

KERNEL = """\
.version 6.4
.target sm_70
.address_size 64

.visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %r<32>;
    .reg .f32 %f<32>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd5, %r0, 8;
    add.s64 %rd6, %rd1, %rd5;
    add.s64 %rd7, %rd2, %rd5;
    ld.global.v2.b32 {{%r1, %r2}}, [%rd6];
    ld.global.v2.b32 {{%r3, %r4}}, [%rd7];
    mul.wide.u32 %rd8, %r0, {cbytes};
    add.s64 %rd9, %rd3, %rd8;
{cload}
    mma.sync.aligned.m8n8k4.{alay}.{blay}.{dtype}.f16.f16.{ctype} {d}, {{%r1, %r2}}, {{%r3, %r4}}, {c};
    mul.wide.u32 %rd10, %r0, {dbytes};
    add.s64 %rd11, %rd4, %rd10;
{dstore}
    ret;
}}
"""
_F32_REGS = ("{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}", "{%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}")
_F16_REGS = ("{%r11, %r12, %r13, %r14}", "{%r21, %r22, %r23, %r24}")


def kernel(name: str, alay: str, blay: str, dtype: str, ctype: str) -> str:
    if ctype == "f32":
        c = _F32_REGS[0]
        cload = ("    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd9];\n"
                 "    ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd9+16];")
    else:
        c = _F16_REGS[0]
        cload = "    ld.global.v4.b32 {%r11, %r12, %r13, %r14}, [%rd9];"
    if dtype == "f32":
        d = _F32_REGS[1]
        dstore = ("    st.global.v4.f32 [%rd11], {%f11, %f12, %f13, %f14};\n"
                  "    st.global.v4.f32 [%rd11+16], {%f15, %f16, %f17, %f18};")
    else:
        d = _F16_REGS[1]
        dstore = "    st.global.v4.b32 [%rd11], {%r21, %r22, %r23, %r24};"
    return KERNEL.format(name=name, alay=alay, blay=blay, dtype=dtype, ctype=ctype, c=c, d=d, cload=cload,
                         dstore=dstore, cbytes=32 if ctype == "f32" else 16, dbytes=32 if dtype == "f32" else 16)


# ----------------------------------------------------------------- the manual's fragment tables
def _qp(lane: int) -> tuple[int, int, int]:
    """(quad pair, lane % 4, 1 for the high group 16-31) of ``lane``."""
    return (lane >> 2) & 3, lane % 4, lane >> 4


def where(operand: str, layout: str, lane: int, i: int) -> tuple[int, int, int]:
    """(quad pair, row, column) of element ``i`` of ``lane``'s fragment of ``operand`` ('a', 'b'; 'c' with
    ``layout`` the element type .f16 or .f32)."""
    q, r, h = _qp(lane)
    if operand == "a":
        return (q, r + 4 * h, i) if layout == "row" else (q, i % 4 + 4 * h, r)
    if operand == "b":
        return (q, r, i + 4 * h) if layout == "row" else (q, i, r + 4 * h)
    if layout == "f16":
        return q, r + 4 * h, i
    return q, (lane & 1) + (i & 2) + 4 * h, (i & 4) + (lane & 2) + (i & 1)


def to_fragments(mats: np.ndarray, operand: str, layout: str, n: int) -> np.ndarray:
    """``mats [4, rows, cols]`` (one per quad pair) -> each lane's ``n`` elements ``[32, n]``."""
    out = np.zeros((32, n), mats.dtype)
    for lane in range(32):
        for i in range(n):
            out[lane, i] = mats[where(operand, layout, lane, i)]
    return out


def from_fragments(frags: np.ndarray, layout: str) -> np.ndarray:
    """Each lane's 8 D elements ``[32, 8]`` -> the four 8 x 8 D matrices; every element written exactly once."""
    out = np.zeros((4, 8, 8), frags.dtype)
    seen = np.zeros((4, 8, 8), int)
    for lane in range(32):
        for i in range(8):
            out[where("c", layout, lane, i)] = frags[lane, i]
            seen[where("c", layout, lane, i)] += 1
    assert (seen == 1).all()
    return out


# ----------------------------------------------------------------- reference and data
def reference(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: str) -> np.ndarray:
    """D of each quad pair: the float32 chain over k ascending (module doc), as float32 or float16."""
    acc = c.astype(np.float32)
    for k in range(4):
        with np.errstate(invalid="ignore", over="ignore"):  # exact: 11-bit x 11-bit significands, >= 2^-48
            prod = a[:, :, k, None].astype(np.float32) * b[:, None, k, :].astype(np.float32)
            acc = acc + prod
    with np.errstate(over="ignore"):
        return acc.astype(np.float16) if dtype == "f16" else acc


def f16_data(rng, shape) -> np.ndarray:
    """Random f16 values, both signs, magnitudes 2^-20 .. 2^6 (subnormals among them), full mantissas."""
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 7, shape)).astype(np.float16)


def run(text: str, name: str, engine: str, opt: int, a, b, c, dtype: str) -> np.ndarray:
    dev = rt.Device()
    args = [rt.to_device(np.ascontiguousarray(x), dev) for x in (a, b, c)]
    dout = rt.to_device(np.zeros((32, 8), np.float32 if dtype == "f32" else np.float16), dev)
    module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
    module.get_function(name).launch((1, 1, 1), (32, 1, 1), [*args, dout])
    return dout.copy_to_host().reshape(32, 8)


def inputs(seed: int, alay: str, blay: str, ctype: str, special: bool = False):
    rng = np.random.default_rng(seed)
    am, bm = f16_data(rng, (4, 8, 4)), f16_data(rng, (4, 4, 8))
    cm = f16_data(rng, (4, 8, 8)).astype(np.float16 if ctype == "f16" else np.float32)
    if ctype == "f32":
        cm *= np.float32(rng.standard_normal((4, 8, 8)) * 3).astype(np.float32)  # full f32 mantissas
    if special:  # infinities, a NaN, signed zeros, the largest and smallest f16
        am[0, 0, 1], bm[0, 1, 3] = np.inf, 2.0      # D[0, 0, 3]: +inf (unless C is -inf)
        am[1, 2, 0], bm[1, 0, 5] = np.inf, 0.0      # D[1, 2, 5]: inf * 0 = NaN
        am[2, 3, 2] = np.nan
        am[3, 4, :], cm[3, 4, :] = -0.0, -0.0       # D[3, 4, n]: -0 + (-0) b
        am[3, 5, :], bm[3, :, 6] = 65504.0, 65504.0  # overflows an f16 D, not an f32 one
        am[3, 6, :], bm[3, :, 7] = 2.0 ** -24, 2.0 ** -24  # 2^-48 products: f32-normal
        cm[0, 0, 3] = 1.0
    return am, bm, cm


def fragments(am, bm, cm, alay, blay, ctype):
    a = to_fragments(am, "a", alay, 4).view(np.uint32)  # [32, 4] f16 -> [32, 2] registers, low element first
    b = to_fragments(bm, "b", blay, 4).view(np.uint32)
    c = to_fragments(cm, "c", ctype, 8)
    return a, b, c


@pytest.mark.parametrize("dtype, ctype", TYPES, ids=[f"{d}.f16.f16.{c}" for d, c in TYPES])
@pytest.mark.parametrize("alay, blay", LAYOUTS, ids=[f"{a}.{b}" for a, b in LAYOUTS])
def test_m8n8k4_matches_numpy_on_both_engines(alay, blay, dtype, ctype):
    name = f"mma884_{alay}_{blay}_{dtype}_{ctype}"
    text = kernel(name, alay, blay, dtype, ctype)
    assert check_sources([Source(text, f"{name}.ptx")]).ok
    am, bm, cm = inputs(10 * LAYOUTS.index((alay, blay)) + TYPES.index((dtype, ctype)), alay, blay, ctype)
    a, b, c = fragments(am, bm, cm, alay, blay, ctype)
    want = reference(am, bm, cm, dtype)
    outs = [run(text, name, engine, opt, a, b, c, dtype) for engine, opt in ENGINES]
    for (engine, opt), got in zip(ENGINES, outs):
        assert outs[0].tobytes() == got.tobytes(), (engine, opt)
    got = from_fragments(outs[0], dtype)
    bad = np.argwhere(got.view(np.uint32 if dtype == "f32" else np.uint16)
                      != want.view(np.uint32 if dtype == "f32" else np.uint16))
    assert bad.size == 0, [(tuple(x), got[tuple(x)], want[tuple(x)]) for x in bad[:5]]


@pytest.mark.parametrize("dtype, ctype", TYPES, ids=[f"{d}.f16.f16.{c}" for d, c in TYPES])
def test_m8n8k4_special_values(dtype, ctype):
    """Infinities, NaN, signed zeros, f16 overflow and tiny products: IEEE through the chain (NaN compared as
    NaN; the engines bit for bit)."""
    alay, blay = "col", "row"
    name = f"mma884_special_{dtype}_{ctype}"
    text = kernel(name, alay, blay, dtype, ctype)
    am, bm, cm = inputs(7, alay, blay, ctype, special=True)
    a, b, c = fragments(am, bm, cm, alay, blay, ctype)
    want = reference(am, bm, cm, dtype)
    outs = [run(text, name, engine, opt, a, b, c, dtype) for engine, opt in (("ir", 0), ("isa", 3))]
    assert outs[0].tobytes() == outs[1].tobytes()
    got = from_fragments(outs[0], dtype)
    assert np.isnan(got[1, 2, 5]) and np.isnan(got[2, 3]).all() and got[0, 0, 3] == np.inf
    assert (np.signbit(got[3, 4]) == np.signbit(want[3, 4])).all()
    assert (np.isinf(got[3, 5, 6]) == (dtype == "f16"))
    np.testing.assert_array_equal(got, want)  # NaN positions equal, everything else exactly


REFUSED = [
    ("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32 {%r21, %r22, %r23, %r24}, {%r1, %r2}, {%r3, %r4}, "
     "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"\.dtype must be \.f32 when \.ctype is \.f32"),
    ("mma.sync.aligned.m8n8k4.row.col.f32.bf16.bf16.f32 {%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}, "
     "{%r1, %r2}, {%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"documents \.f16 A and B only"),
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f11, %f12, %f13, %f14}, {%r1, %r2}, {%r3, %r4}, "
     "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"D must be a vector of 8 registers, got 4"),
    ("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%r21, %r22, %r23, %r24}, {%r1}, {%r3, %r4}, "
     "{%r11, %r12, %r13, %r14};", r"A must be a vector of 2 registers, got 1"),
    ("mma.sync.aligned.m8n8k4.row.f32.f16.f16.f32 {%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}, {%r1, %r2}, "
     "{%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"takes an A and a B layout"),
    ("mma.sync.aligned.m8n8k4.row.col.satfinite.f32.f16.f16.f32 {%f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18}, "
     "{%r1, %r2}, {%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"\.satfinite is not supported"),
]


@pytest.mark.parametrize("line, message", REFUSED, ids=range(len(REFUSED)))
def test_m8n8k4_refusals_are_located_and_check_agrees(line, message):
    """Forms ptxas refuses (or the manual does not define) are refused at the instruction, by ``check`` and
    ``compile`` alike."""
    text = kernel("bad", "row", "col", "f32", "f32")
    text = "\n".join(line if "mma.sync" in ln else ln for ln in text.splitlines())
    lineno = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("mma.sync"))
    res = check_sources([Source(text, "bad.ptx")])
    assert len(res.errors) == 1
    by_check = str(res.errors[0])
    with pytest.raises(XccError, match=message) as e:
        rt.load_module(Source(text, "bad.ptx"), engine="isa").get_function("bad")
    assert str(e.value) == by_check
    assert f"bad.ptx:{lineno}:" in by_check
