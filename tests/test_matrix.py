"""Warp-level matrix operations: fragment layouts against the PTX ISA's formulas, the exactly rounded
accumulation against a Fraction reference, integer wrap/saturation, ldmatrix, and small PTX kernels on the
IR interpreter for the warp-collective rule, alignment faults, unsupported forms and the wmma/mma
fragment correspondence xcc assumes for sm_80."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, UnsupportedError
from xcc.runtime.ir_engine import launch_ptx
from xcc.semantics import matrix as M

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
LANE = np.arange(32)
G, T = LANE >> 2, LANE & 3


# ----------------------------------------------------------------------------- layouts (PTX ISA 9.7.14.5.x)
def _ptx_formula(shape: str, op: str, i: int):
    """(row, col) of element i for every lane, transcribed from the PTX ISA's "row =" / "col =" tables."""
    g, t = G, T
    if shape == "m16n8k16" and op == "a":
        row = g if (i < 2 or 4 <= i < 6) else g + 8
        col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    elif shape == "m16n8k16" and op == "b":
        row, col = t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    elif op == "c":
        row, col = (g if i < 2 else g + 8), t * 2 + (i & 1)
    elif shape == "m16n8k8" and op == "a":
        row, col = (g if i < 2 else g + 8), t * 2 + (i & 1)
    elif shape == "m16n8k8" and op == "b":
        row, col = t * 2 + i, g
    elif shape == "m16n8k32" and op == "a":
        row = g if (i < 4 or 8 <= i < 12) else g + 8
        col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    else:  # m16n8k32 b
        row, col = t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    return np.broadcast_to(row, (32,)), np.broadcast_to(col, (32,))


@pytest.mark.parametrize("shape,op,n", [("m16n8k16", "a", 8), ("m16n8k16", "b", 4), ("m16n8k16", "c", 4),
                                        ("m16n8k8", "a", 4), ("m16n8k8", "b", 2), ("m16n8k8", "c", 4),
                                        ("m16n8k32", "a", 16), ("m16n8k32", "b", 8), ("m16n8k32", "c", 4)])
def test_mma_layouts_match_the_ptx_isa(shape, op, n):
    rows, cols, distinct = M.layout(shape, op)
    rows, cols = np.broadcast_arrays(rows, cols)
    assert rows.shape == (32, n) and distinct == n
    for i in range(n):
        want_r, want_c = _ptx_formula(shape, op, i)
        np.testing.assert_array_equal(rows[:, i], want_r, err_msg=f"{shape} {op}{i} row")
        np.testing.assert_array_equal(cols[:, i], want_c, err_msg=f"{shape} {op}{i} col")


@pytest.mark.parametrize("op", ["a", "b", "c"])
def test_wmma_fragments_are_two_m16n8k16_fragments(op):
    """xcc's sm_80 wmma layout: A = the m16n8k16 A fragment (repeated), B and C = the m16n8k16 fragments of
    columns 0-7 then 8-15 (B repeated)."""
    rows, cols, distinct = M.layout("m16n16k16", op)
    rows, cols = np.broadcast_arrays(rows, cols)
    assert distinct == 8 and len(set(zip(rows[:, :8].ravel(), cols[:, :8].ravel()))) == 256
    r16, c16, n16 = M.layout("m16n8k16", op)
    r16, c16 = np.broadcast_arrays(r16, c16)
    if op == "a":
        np.testing.assert_array_equal(rows[:, :8], r16)
        np.testing.assert_array_equal(cols[:, :8], c16)
    else:
        np.testing.assert_array_equal(rows[:, :8], np.hstack([r16, r16]))
        np.testing.assert_array_equal(cols[:, :8], np.hstack([c16, c16 + 8]))
    if op in "ab":
        np.testing.assert_array_equal(rows[:, 8:], rows[:, :8])
        np.testing.assert_array_equal(cols[:, 8:], cols[:, :8])


def test_gather_scatter_round_trip():
    rng = np.random.default_rng(0)
    mat = rng.integers(0, 2**16, (3, 16, 8)).astype(np.uint32)
    regs = M.scatter("m16n8k16", "c", mat, "f16")
    assert regs.shape == (3, 32, 2)
    np.testing.assert_array_equal(M.gather("m16n8k16", "c", regs, "f16"), mat)
    # lane 5 (g=1, t=1): register 0 = elements (1, 2) low, (1, 3) high
    assert regs[0, 5, 0] == mat[0, 1, 2] | mat[0, 1, 3] << 16


# ----------------------------------------------------------------------------- accumulation
def _f32_round(x: Fraction) -> float:
    """Independent reference: the float32 nearest to x (ties to even) by comparing exact distances."""
    if x == 0:
        return 0.0
    with np.errstate(over="ignore"):
        guess = np.float32(float(x))
    cands = {guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))}
    cands = [c for c in cands if np.isfinite(c)]
    limit = Fraction(2) ** 128 - Fraction(2) ** 103  # at and above the midpoint to 2^128: overflow
    if abs(x) >= limit:
        return math.copysign(math.inf, x)

    def key(c):
        return (abs(Fraction(float(c)) - x), int(np.array(c, np.float32).view(np.uint32)) & 1)

    return float(min(cands, key=key))


def _f32_bits(v) -> np.ndarray:
    return np.asarray(v, np.float32).view(np.uint32)


def test_float_mma_is_the_exact_sum_rounded_once():
    """Random f16 inputs with exponents spread so wide that binary64 summation is inexact, checked against
    Fractions; every element must be bit-exact."""
    rng = np.random.default_rng(1)
    w = 3
    a = (rng.uniform(1, 2, (w, 16, 16)) * 2.0 ** rng.integers(-24, 15, (w, 16, 16))
         * rng.choice([-1, 1], (w, 16, 16))).astype(np.float16)
    b = (rng.uniform(1, 2, (w, 16, 8)) * 2.0 ** rng.integers(-24, 15, (w, 16, 8))
         * rng.choice([-1, 1], (w, 16, 8))).astype(np.float16)
    c = (rng.standard_normal((w, 16, 8)) * 2.0 ** rng.integers(-60, 40, (w, 16, 8))).astype(np.float32)
    a, b = np.nan_to_num(a, posinf=60000, neginf=-60000), np.nan_to_num(b, posinf=60000, neginf=-60000)
    got = M.float_mma(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64), "f32")
    want = np.empty(got.shape, np.uint32)
    for i in np.ndindex(got.shape):
        wi, m, n = i
        x = Fraction(float(c[i])) + sum(Fraction(float(a[wi, m, k])) * Fraction(float(b[wi, k, n]))
                                        for k in range(16))
        want[i] = _f32_bits(_f32_round(x))
    np.testing.assert_array_equal(got, want)


def test_float_mma_where_binary64_would_double_round():
    # 1 + 2^-24 + 2^-60: binary64 gives 1 + 2^-24 (a float32 tie) -> 1.0; exactly it is above the tie.
    a = np.zeros((1, 1, 2)), np.zeros((1, 2, 1))
    a, b = a
    a[0, 0, :] = [2.0**-12, 2.0**-30]
    b[0, :, 0] = [2.0**-12, 2.0**-30]
    c = np.ones((1, 1, 1))
    got = M.float_mma(a, b, c, "f32")
    assert got[0, 0, 0] == _f32_bits(np.nextafter(np.float32(1), np.float32(2)))
    # the tie itself rounds to even
    b[0, 1, 0] = 0.0
    assert M.float_mma(a, b, c, "f32")[0, 0, 0] == _f32_bits(1.0)


def test_float_mma_infinities_nans_and_f16_results():
    a = np.array([[[np.inf, 1.0], [np.inf, 1.0], [1.0, 2.0]]])   # 3 x 2
    b = np.array([[[0.0], [1.0]]])                                 # 2 x 1
    c = np.array([[[0.0], [5.0], [np.inf]]])
    b2 = np.array([[[1.0], [-1.0]]])
    got = M.float_mma(a, b, c, "f32")[0, :, 0]
    assert got[0] == 0x7FFFFFFF                      # inf * 0: NaN, canonical
    got2 = M.float_mma(a, b2, np.array([[[-np.inf], [0.0], [np.inf]]]), "f32")[0, :, 0]
    assert got2[0] == 0x7FFFFFFF                      # inf + -inf
    assert got2[1] == _f32_bits(np.inf) and got2[2] == _f32_bits(np.inf)
    # f16 result: 2048 + 1 rounds to even (2048), 2048 + 1 + 2^-20 rounds up; 65504 + 16 (a tie) overflows
    a16 = np.array([[[2048.0, 1.0, 2.0**-10], [65504.0, 16.0, 0.0]]])
    b16 = np.array([[[1.0], [1.0], [0.0]]])
    r = M.float_mma(a16, b16, np.zeros((1, 2, 1)), "f16")[0, :, 0]
    assert r[0] == np.float16(2048).view(np.uint16) and r[1] == np.float16(np.inf).view(np.uint16)
    b16[0, 2, 0] = 2.0**-10
    assert M.float_mma(a16, b16, np.zeros((1, 2, 1)), "f16")[0, 0, 0] == np.float16(2050).view(np.uint16)


def test_round_exact_matches_numpy_single_roundings():
    """round_exact agrees with numpy's (correctly rounded) float64 -> float32 / float16 conversions."""
    rng = np.random.default_rng(2)
    v = rng.standard_normal(2000) * 2.0 ** rng.integers(-160, 140, 2000)
    for dtype, np_t in (("f32", np.float32), ("f16", np.float16)):
        with np.errstate(over="ignore"):
            want = v.astype(np_t)
        got = np.array([M.round_exact([x], dtype) for x in v], np_t)
        np.testing.assert_array_equal(got.view(np.uint16 if dtype == "f16" else np.uint32),
                                      want.view(np.uint16 if dtype == "f16" else np.uint32))


def test_int_mma_wraps_or_saturates():
    a = np.full((1, 1, 32), 127, np.int64)
    b = np.full((1, 32, 1), 127, np.int64)
    c = np.array([[[2**31 - 1000]]])
    exact = 32 * 127 * 127 + 2**31 - 1000
    assert M.int_mma(a, b, c, False)[0, 0, 0] == exact - 2**32 + 2**32 and \
        M.int_mma(a, b, c, False).view(np.int32)[0, 0, 0] == exact - 2**32
    assert M.int_mma(a, b, c, True).view(np.int32)[0, 0, 0] == 2**31 - 1
    assert M.int_mma(-a, b, -c - 2000, True).view(np.int32)[0, 0, 0] == -(2**31)


def test_mma_u8_times_s8_fragments():
    """m16n8k32 .u8 x .s8 on whole fragments: the bytes are unsigned in A, signed in B."""
    rng = np.random.default_rng(3)
    am = rng.integers(0, 256, (2, 16, 32))
    bm = rng.integers(-128, 128, (2, 32, 8))
    cm = rng.integers(-1000, 1000, (2, 16, 8))
    regs_a = M.scatter("m16n8k32", "a", am.astype(np.uint8), "u8")
    regs_b = M.scatter("m16n8k32", "b", bm.astype(np.int8).view(np.uint8), "s8")
    regs_c = M.scatter("m16n8k32", "c", cm.astype(np.int32).view(np.uint32), "s32")
    d = M.mma("m16n8k32", ("s32", "u8", "s8", "s32"), regs_a, regs_b, regs_c)
    got = M.gather("m16n8k32", "d", d, "s32").view(np.int32)
    np.testing.assert_array_equal(got, np.einsum("wmk,wkn->wmn", am, bm) + cm)


def test_ldmatrix_lane_mapping():
    rows = np.arange(64, dtype=np.uint32).reshape(1, 8, 8)
    plain, trans = M.ldmatrix(rows, False)[0], M.ldmatrix(rows, True)[0]
    for t in range(32):
        r, c = t // 4, 2 * (t % 4)
        assert plain[t] == (8 * r + c) | (8 * r + c + 1) << 16
        assert trans[t] == (8 * c + r) | (8 * (c + 1) + r) << 16


# ----------------------------------------------------------------------------- PTX kernels (IR interpreter)
MMA_BODY = """
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.b32 %r2, 0x3C003C00;
    mov.f32 %f1, 0f00000000;
{pre}
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f5, %f6, %f7, %f8}}, {{%r2, %r2, %r2, %r2}}, {{%r2, %r2}},
        {{%f1, %f1, %f1, %f1}};
{post}
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f5;
    ret;
"""


def _kernel(body: str, params: str = ".param .u64 out") -> str:
    return HEADER + f".visible .entry k({params})\n{{\n{body}\n}}\n"


def test_mma_of_ones_on_two_warps():
    dev = rt.Device()
    out = rt.zeros(64, np.float32, dev)
    launch_ptx(_kernel(MMA_BODY.format(pre="", post="")), "k", 1, 64, [out], dev)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(64, 16.0, np.float32))


def test_divergent_mma_is_a_located_fault():
    pre = "    setp.lt.u32 %p1, %r1, 20;\n    @!%p1 bra DONE;"
    post = "DONE:"
    ptx = _kernel(MMA_BODY.format(pre=pre, post=post))
    dev = rt.Device()
    out = rt.zeros(32, np.float32, dev)
    with pytest.raises(KernelFault, match=r"mma.sync.aligned must be executed by all 32 lanes.*lane\(s\) 0-19") as e:
        launch_ptx(ptx, "k", 1, 32, [out], dev)
    assert e.value.line == next(i for i, s in enumerate(ptx.splitlines(), 1) if "mma.sync" in s)


def test_partial_warp_block_faults():
    dev = rt.Device()
    out = rt.zeros(48, np.float32, dev)
    with pytest.raises(KernelFault, match=r"lane\(s\) 0-15 of this thread's warp"):
        launch_ptx(_kernel(MMA_BODY.format(pre="", post="")), "k", 1, 48, [out], dev)


@pytest.mark.parametrize("inst,msg", [
    ("mma.sync.aligned.m8n8k4.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2}, "
     "{%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", r"\.m8n8k4 with \.bf16/\.bf16 A and B is not supported"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
     "{%f1, %f2, %f3, %f4};", r"mma.m16n8k16 with .f32.f16.bf16.f32 is not supported"),
    ("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6}, {%f1, %f2, %f3, %f4};", r"\.satfinite is supported for integer mma only"),
    ("ldmatrix.sync.aligned.m8n8.x2.shared.b8 {%r1, %r2}, [%r3];", r"only ldmatrix.m8n8 with .b16"),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f32 {%r1, %r2}, [%rd1], %r5;",
     r"\.f32 A/B fragments are not supported"),
])
def test_unsupported_forms_are_located_errors(inst, msg):
    body = """
    .reg .b32 %r<10>;
    .reg .f32 %f<10>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    """ + inst + "\n    ret;"
    ptx = _kernel(body)
    with pytest.raises(UnsupportedError, match=msg) as e:
        launch_ptx(ptx, "k", 1, 32, [rt.zeros(1, np.float32)], rt.Device())
    assert e.value.loc is not None and e.value.loc.line == next(
        i for i, line in enumerate(ptx.splitlines(), 1) if inst[:20] in line)


def test_predicated_ldmatrix_runs_under_a_uniform_guard_and_faults_under_a_divergent_one():
    """A guarded ldmatrix is branched around (build.EFFECTFUL): a warp-uniform guard runs it, a guard
    that splits the warp leaves it to part of the warp, a located fault."""
    body = """
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    .shared .align 16 .b8 buf[512];
    mov.u32 %r1, %tid.x;
    mov.u32 %r4, buf;
    shl.b32 %r3, %r1, 4;
    add.u32 %r3, %r4, %r3;
    st.shared.u32 [%r3], %r1;
    setp.lt.u32 %p1, %r1, LIMIT;
    mov.u32 %r2, 7;
    @%p1 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%r3];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r2;
    ret;"""
    dev = rt.Device()
    out = rt.zeros(32, np.uint32, dev)
    launch_ptx(_kernel(body.replace("LIMIT", "32")), "k", 1, 32, [out], dev)
    got = out.copy_to_host()
    # thread t holds row t // 4, elements 2 (t % 4) and 2 (t % 4) + 1: row r starts with the u32 r (lane r's
    # store), so elements 0-1 are (r, 0) and the rest zeros
    want = np.where(np.arange(32) % 4 == 0, np.arange(32) // 4, 0).astype(np.uint32)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(KernelFault, match="must be executed by all 32 lanes of the warp together"):
        launch_ptx(_kernel(body.replace("LIMIT", "20")), "k", 1, 32, [out], dev)


def test_misaligned_ldmatrix_row_faults():
    body = """
    .reg .b32 %r<10>;
    .shared .align 16 .b8 buf[512];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 4;
    add.u32 %r4, %r2, %r3;
    setp.eq.u32 %p1, %r1, 5;
    selp.u32 %r5, 2, 0, %p1;
    add.u32 %r4, %r4, %r5;
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r6}, [%r4];
    ret;"""
    body = ".reg .pred %p<2>;\n" + body
    with pytest.raises(KernelFault, match=r"misaligned ldmatrix row address .*thread \(5, 0, 0\)"):
        launch_ptx(_kernel(body), "k", 1, 32, [rt.zeros(1, np.float32)], rt.Device())


def test_wmma_load_fragment_feeds_mma_m16n8k16():
    """The sm_80 correspondence xcc implements: wmma.load.a registers 0-3 are an mma.m16n8k16 A fragment,
    wmma.load.b registers 0-1 (2-3) the B fragment of columns 0-7 (8-15), the wmma accumulator registers
    0-3 (4-7) the m16n8 accumulators of columns 0-7 (8-15)."""
    body = """
    .reg .b32 %r<40>;
    .reg .f32 %f<40>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    mov.f32 %f0, 0f00000000;
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];
    wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}, [%rd2];
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r11, %r12},
        {%f0, %f0, %f0, %f0};
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r13, %r14},
        {%f0, %f0, %f0, %f0};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd3], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, 24;
    ret;"""
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    dev = rt.Device()
    da, db = rt.to_device(a.ravel(), dev), rt.to_device(np.ascontiguousarray(b.T).ravel(), dev)
    out = rt.to_device(np.full(16 * 24, -1.0, np.float32), dev)
    launch_ptx(_kernel(body, ".param .u64 pa, .param .u64 pb, .param .u64 pc"), "k", 1, 32, [da, db, out], dev)
    got = out.copy_to_host().reshape(16, 24)
    np.testing.assert_array_equal(got[:, :16], a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_array_equal(got[:, 16:], -1.0)


def test_wmma_misaligned_stride_faults():
    body = """
    .reg .b32 %r<20>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], 12;
    ret;"""
    dev = rt.Device()
    buf = rt.zeros(1024, np.float16, dev)
    with pytest.raises(KernelFault, match=r"misaligned wmma.load.*stride 12 elements.*32 bytes"):
        launch_ptx(_kernel(body), "k", 1, 32, [buf], dev)


def test_ldmatrix_out_of_bounds_row_names_the_lane_that_gave_it():
    body = """
    .reg .b32 %r<10>;
    .reg .pred %p<2>;
    .shared .align 16 .b8 buf[512];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 4;
    setp.eq.u32 %p1, %r1, 13;
    selp.u32 %r5, 4096, 0, %p1;
    add.u32 %r3, %r3, %r5;
    add.u32 %r4, %r2, %r3;
    ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r6, %r7}, [%r4];
    ret;"""
    with pytest.raises(KernelFault, match=r"out-of-bounds 2-byte shared access.*thread \(13, 0, 0\)"):
        launch_ptx(_kernel(body), "k", 1, 32, [rt.zeros(1, np.float32)], rt.Device())


def test_mma_destination_of_the_wrong_width_is_a_located_error(tmp_path, capsys):
    """A 64-bit register among mma's D registers: the same located message from check and compile, no traceback."""
    from xcc.cli import main

    src = tmp_path / "bad.ptx"
    src.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                   "  .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<2>;\n"
                   "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %rd1}, {%r1, %r2, %r3, %r4},"
                   " {%r5, %r6}, {%f4, %f5, %f6, %f7};\n  ret;\n}\n")
    outs = []
    for cmd in (["check"], ["compile", "-o", str(tmp_path / "k.xbin")]):
        assert main([*cmd, str(src)]) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err
        outs.append(err.splitlines()[0])
    assert outs[0] == outs[1]
    assert outs[0].endswith(":7:3: error: 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32': D register '%rd1' is "
                            "b64, not a 32-bit register")
