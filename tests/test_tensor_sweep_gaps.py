"""Gaps and refusals the tensor qualifier sweep found (issue 19, tests/isa_sweep_tensor.py): PTX ISA 8.6's
``cp.async.bulk.shared::cta.global`` copy runs on both engines, and the qualifier and operand rules of
xcc.frontend.tensor_rules give located messages from the checker (``parse``), ``check`` and ``compile`` alike.

Expected values are the copied bytes themselves (numpy's view of the source), not xcc's semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from test_isa_sm90_rest import SPARSE as SPARSE_INT4  # the mma.sp probe kernel: A, B, C, E in, D out
from test_mbarrier import ENGINES, HEADER, init

from xcc import runtime as rt
from xcc.check import Source, check_sources
from xcc.diagnostics import PtxSemanticError
from xcc.frontend.parser import parse

BULK_CTA = """
    @%p7 bra WAIT;
    mov.u32 %r5, buf;
    mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 %rd4, [bar], 512;
    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r5], [%rd20], 256, [bar];
    add.u32 %r6, %r5, 256;
    add.s64 %rd21, %rd20, 256;
    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r6], [%rd21], 256, [%r30], %rd5;
WAIT:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    shl.b32 %r7, %r1, 3;
    mov.u32 %r8, buf;
    add.u32 %r8, %r8, %r7;
    ld.shared.u64 %rd9, [%r8];
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_bulk_copy_into_the_executing_ctas_shared_memory(engine, opt):
    """Thread 0 expects 512 bytes and starts two 256-byte .shared::cta.global copies (the second with a cache
    hint); the 64 threads wait on phase 0 and each reads its 8 bytes of the copy."""
    data = (np.arange(1024, dtype=np.uint32) * 2654435761 % 251).astype(np.uint8)
    dev = rt.Device()
    out = rt.to_device(np.zeros(64, np.uint64), dev)
    src = rt.to_device(data, dev)
    body = "    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;\n" + init(1) + BULK_CTA
    module = rt.load_module(HEADER.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (64, 1, 1), [out, src])
    assert out.copy_to_host().tolist() == data[:512].view(np.uint64).tolist()


REFUSED = [
    ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster [buf], [%rd20], 256, [bar], "
     "%h1;", "not supported yet"),
    ("mbarrier.arrive.release.shared::cta.b64 %rd4, [bar];", "'.release' needs a scope"),
    ("mbarrier.try_wait.cta.shared::cta.b64 %p1, [bar], %rd4;", "needs a memory order"),
    ("mbarrier.expect_tx.release.cta.shared::cta.b64 [bar], 64;", "'.release' is not a memory order"),
    ("mbarrier.test_wait.shared::cluster.b64 %p1, [%r30], %rd4;", "takes no .shared::cluster"),
    ("mbarrier.arrive.shared::cluster.b64 %rd4, [%r30];", "sink '_'"),
    ("mbarrier.arrive.noComplete.relaxed.cta.shared::cta.b64 %rd4, [bar], 1;", "cannot be combined with .noComplete"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %rd4;", "must be a 32-bit register"),
    ("mbarrier.pending_count.shared.b64 %r2, %rd4;", "no state space"),
    ("bar.sync.aligned 0;", "'.aligned' is not a modifier of 'bar'"),
    ("barrier.sync 16;", "out of range 0..15"),
    ("bar.sync 0, 48;", "multiple of the warp size"),
    ("barrier.cluster.wait.release;", "takes no '.release'"),
    ("fence.proxy.tensormap::generic.acquire.gpu [%rd20], 64;", "the immediate 128"),
    ("wgmma.fence.aligned;", "needs .sync"),
    ("multimem.st.acquire.gpu.global.u32 [%rd20], %r2;", "'.acquire' is not a memory order"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [buf], %r2;", "braced vector"),
    (".reg .v2 .b64 %vq;\n    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [bar], %vq.y;",
     "(phase parity) must be a 32-bit register or an immediate, got a .b64 register"),
]


@pytest.mark.parametrize("line, why", REFUSED)
def test_check_and_compile_refuse_with_the_same_located_message(line, why):
    src = HEADER.replace(".version 8.0", ".version 8.1").replace("BODY", "    .reg .b16 %h<2>;\n    " + line)
    try:  # the checker's refusals (xcc check --syntax-only too) raise; lowering's are collected
        errors = check_sources([Source(src, "bad.ptx")]).errors
    except PtxSemanticError as e:
        errors = [e, *e.also]
        assert "not supported yet" not in why
        with pytest.raises(PtxSemanticError) as p:
            parse(src, "bad.ptx")
        assert str(p.value) == str(e)
    else:
        assert "not supported yet" in why, "refused by IR lowering, not by the checker"
    assert len(errors) == 1 and why in str(errors[0]), errors
    with pytest.raises(PtxSemanticError if "not supported yet" not in why else Exception) as e:
        rt.load_module(src, device=rt.Device()).get_function("k")
    assert str(e.value) == str(errors[0]).replace("bad.ptx", str(e.value).split(":")[0])
    assert ":" in str(errors[0]).split("error")[0]  # located: file:line:column


# ----------------------------------------------------------------------------- mma.m16n8k16 with FP8 inputs
K16_BODY = {
    "f32": """    mov.b32 %f4, %r7;
    mov.b32 %f5, %r8;
    mov.b32 %f6, %r9;
    mov.b32 %f7, %r10;
    mma.sync.aligned.m16n8k16.row.col.f32.AT.BT.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2}, {%r5}, {%f4, %f5, %f6, %f7};
    st.global.v4.f32 [%rd5], {%f0, %f1, %f2, %f3};""",
    "f16": """    mma.sync.aligned.m16n8k16.row.col.f16.AT.BT.f16 {%r11, %r12}, {%r1, %r2}, {%r5}, {%r7, %r8};
    st.global.v4.u32 [%rd5], {%r11, %r12, %r11, %r12};""",
}


def k16_reference(words: np.ndarray, at: str, bt: str, acc: str) -> np.ndarray:
    """The PTX ISA's m16n8k16 8-bit fragments (9.7.14.5.8: A a0..a7 at row groupID + 8*(i >= 4), column
    4*tig + i%4; B b0..b3 at row 4*tig + i, column groupID; C/D as m16n8k16), D = A*B + C summed exactly and
    rounded once (test_fp8_mma's decoding and rounding)."""
    from test_fp8_mma import _mul, acc_value, c_coord, dot, fp8

    A = [[None] * 16 for _ in range(16)]
    B = [[None] * 8 for _ in range(16)]
    C = [[None] * 8 for _ in range(16)]
    cbits = 32 if acc == "f32" else 16
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        w = [int(x) for x in words[lane]]
        for i in range(8):
            A[g + 8 * (i >= 4)][4 * t + i % 4] = fp8((w[i // 4] >> (8 * (i % 4))) & 0xFF, at)
        for i in range(4):
            B[4 * t + i][g] = fp8((w[4] >> (8 * i)) & 0xFF, bt)
        for i in range(4):
            r, c = c_coord(lane, i)
            word = w[6 + i] if acc == "f32" else w[6 + i // 2] >> (16 * (i % 2))
            C[r][c] = acc_value(word & ((1 << cbits) - 1), acc)
    out = np.zeros((32, 4), np.uint32)
    for lane in range(32):
        d = []
        for i in range(4):
            r, c = c_coord(lane, i)
            d.append(dot([C[r][c]] + [_mul(A[r][k], B[k][c]) for k in range(16)], acc))
        out[lane] = d if acc == "f32" else [d[0] | d[1] << 16, d[2] | d[3] << 16] * 2
    return out


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("at, bt", [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")])
@pytest.mark.parametrize("kind", ["random", "edges"])
def test_fp8_mma_m16n8k16_matches_the_exact_reference(kind, at, bt, acc, engine, opt):
    """Random finite values and the edge values of test_fp8_mma (max normals, subnormals, negative zeros - a
    row of them gives a -0 sum with a -0 accumulator -, NaN, e5m2 infinities, f16 overflow)."""
    from test_fp8_mma import KERNEL, make_inputs

    words = make_inputs(kind, at, bt, acc, seed=len(at + bt + acc) + 1)
    if kind == "edges":  # A row 0 all -0, B column 0 all +0, C[0][0] = -0: D[0][0] is -0 (every term is -0)
        words[0:4, 0] = 0x80808080
        words[0:4, 4] = 0
        words[0, 6] = 0x80000000 if acc == "f32" else (int(words[0, 6]) & 0xFFFF0000) | 0x8000
    ptx = KERNEL.replace("BODY", K16_BODY[acc].replace("AT", at).replace("BT", bt))
    dev = rt.Device()
    din = rt.to_device(np.ascontiguousarray(words, np.uint32).reshape(-1), dev)
    dout = rt.to_device(np.zeros(32 * 4, np.uint32), dev)
    rt.load_module(ptx, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [din, dout])
    got, want = dout.copy_to_host().reshape(32, 4), k16_reference(words, at, bt, acc)
    if kind == "edges":
        assert want[0, 0] & (0xFFFFFFFF if acc == "f32" else 0xFFFF) == (0x80000000 if acc == "f32" else 0x8000)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(ln), int(i), hex(got[ln, i]), hex(want[ln, i])) for ln, i in bad[:8]]


# ----------------------------------------------------------------------------- wmma.mma ... .f32.f16
WMMA_F32_F16 = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<40>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.ALAY.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];
    wmma.load.b.sync.aligned.BLAY.m16n16k16.global.f16 {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}, [%rd2];
    wmma.load.c.sync.aligned.row.m16n16k16.global.f16 {%r21, %r22, %r23, %r24}, [%rd3];
    wmma.mma.sync.aligned.ALAY.BLAY.m16n16k16.f32.f16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7},
        {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18},
        {%r21, %r22, %r23, %r24};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("alay, blay", [("row", "col"), ("col", "row")])
def test_wmma_f32_result_from_an_f16_accumulator(engine, opt, alay, blay):
    """D (.f32) = A*B + C (.f16): numpy's float64 product of small f16 values (exact) plus C widened, rounded to
    f32 once; C holds values f16 represents exactly but f32 rounding of the sum must keep (subnormal, large)."""
    rng = np.random.default_rng(7)
    a = (rng.integers(-8, 9, (16, 16)) / 4).astype(np.float16)
    b = (rng.integers(-8, 9, (16, 16)) / 8).astype(np.float16)
    c = (rng.integers(-64, 65, (16, 16)) / 16).astype(np.float16)
    c[0, :4] = [np.float16(6e-8), np.float16(-0.0), np.float16(65504), np.float16(-2049)]
    want = (a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
    dev = rt.Device()
    mem_a = a if alay == "row" else np.ascontiguousarray(a.T)
    mem_b = b if blay == "row" else np.ascontiguousarray(b.T)
    da, db, dc = (rt.to_device(x.ravel(), dev) for x in (mem_a, mem_b, c))
    dd = rt.to_device(np.zeros(256, np.float32), dev)
    ptx = WMMA_F32_F16.replace("ALAY", alay).replace("BLAY", blay)
    rt.load_module(ptx, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [da, db, dc, dd])
    np.testing.assert_array_equal(dd.copy_to_host().reshape(16, 16).view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_setmaxnreg_takes_s32_as_ptxas_does(engine, opt):
    """ptxas 13.0 takes setmaxnreg.{inc,dec}.sync.aligned.s32 (the PTX ISA writes .u32): the same no-op."""
    from test_mbarrier import run

    body = """
    setmaxnreg.dec.sync.aligned.s32 40;
    setmaxnreg.inc.sync.aligned.s32 232;
    cvt.u64.u32 %rd9, %r1;
"""
    assert run(body, 32, engine, opt) == list(range(32))


# ----------------------------------------------------------------------------- mma .f64 with .rz/.rm/.rp
MMA_F64 = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b32 %r<4>;
    .reg .f64 %fd<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 32;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v2.f64 {%fd1, %fd2}, [%rd4];
    ld.global.v2.f64 {%fd3, %fd4}, [%rd4+16];
    mma.sync.aligned.m8n8k4.row.col.RND.f64.f64.f64.f64 {%fd5, %fd6}, {%fd1}, {%fd2}, {%fd3, %fd4};
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd5, %rd2, %rd3;
    st.global.v2.f64 [%rd5], {%fd5, %fd6};
    ret;
}
"""
"""Lane l loads a0, b0, c0, c1 (32 bytes at in + 32 l) and stores d0, d1."""


def _round_f64(exact: Fraction, mode: str) -> float:
    """``exact`` (finite, no overflow in these tests) rounded to binary64 in ``mode`` (directed roundings step
    from the nearest value toward the mode's direction when the nearest went the other way)."""
    r = float(exact)  # nearest even
    if mode == "rn" or Fraction(r) == exact:
        return r
    up = Fraction(r) < exact           # exact lies above r: r rounded down
    want_up = mode == "rp" or (mode == "rz" and exact < 0)
    if want_up and up:
        return float(np.nextafter(r, np.inf))
    if not want_up and not up:
        return float(np.nextafter(r, -np.inf))
    return r


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rnd", ["rz", "rm", "rp"])
def test_mma_f64_directed_rounding_is_each_fma_of_the_chain(engine, opt, rnd):
    """The PTX ISA's m8n8k4 .f64 fragments (A a0 at (g, t), B b0 at (t, g), C/D c0, c1 at (g, 2t + i)), and
    xcc's order (docs/semantics.md): d = fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, c)))), each fma
    computed exactly and rounded in the instruction's mode; inexact values so that the modes differ."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((8, 4)) * 3.0 ** rng.integers(-5, 6, (8, 4))
    b = rng.standard_normal((4, 8)) / 7.0
    c = rng.standard_normal((8, 8)) * 1e3
    words = np.zeros((32, 4))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        words[lane] = [a[g, t], b[t, g], c[g, 2 * t], c[g, 2 * t + 1]]
    def chain(mode):
        out = np.zeros((8, 8))
        for i in range(8):
            for j in range(8):
                acc = float(c[i, j])
                for x in range(4):
                    acc = _round_f64(Fraction(float(a[i, x])) * Fraction(float(b[x, j])) + Fraction(acc), mode)
                out[i, j] = acc
        return out

    want = chain(rnd)
    assert (want != chain("rn")).sum() > 8  # the mode matters for these values
    dev = rt.Device()
    din, dout = rt.to_device(words.ravel(), dev), rt.to_device(np.zeros(64), dev)
    rt.load_module(MMA_F64.replace("RND", rnd), device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [din, dout])
    got = dout.copy_to_host().reshape(32, 2)
    expect = np.array([[want[ln >> 2, 2 * (ln & 3)], want[ln >> 2, 2 * (ln & 3) + 1]] for ln in range(32)])
    np.testing.assert_array_equal(got.view(np.uint64), expect.view(np.uint64))


# ----------------------------------------------------------------------------- wmma m32n8k16 / m8n32k16 (.f16)
WMMA_TALL_WIDE = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<40>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.ALAY.SHAPE.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];
    wmma.load.b.sync.aligned.BLAY.SHAPE.global.f16 {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}, [%rd2], SB;
    wmma.load.c.sync.aligned.CLAY.SHAPE.global.CT CFRAG, [%rd3];
    wmma.mma.sync.aligned.ALAY.BLAY.SHAPE.DT.CT DFRAG, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8},
        {%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}, CFRAG;
    wmma.store.d.sync.aligned.CLAY.SHAPE.global.DT [%rd4], DFRAG, SD;
    ret;
}
"""
_FRAG = {"f32": "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}", "f16": "{%r21, %r22, %r23, %r24}"}
_FRAG_D = {"f32": "{%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15}", "f16": "{%r31, %r32, %r33, %r34}"}


def _run_wmma(engine, opt, shape, alay, blay, clay, dt, ct, a, b, c, sb, sd) -> np.ndarray:
    """D of WMMA_TALL_WIDE for A (m x 16), B (16 x n) and C (m x n) laid out in memory as ``alay``/``blay``/``clay``
    say, B's rows ``sb`` and D's ``sd`` elements apart (the stride operands); the whole D buffer, rows of ``sd``
    (D's type ``dt``), padding included."""
    m, n = a.shape[0], b.shape[1]
    mem_b = np.zeros((16, sb) if blay == "row" else (n, sb), np.float16)
    if blay == "row":
        mem_b[:, :n] = b
    else:
        mem_b[:, :16] = b.T
    mem_a = a if alay == "row" else np.ascontiguousarray(a.T)
    mem_c = c if clay == "row" else np.ascontiguousarray(c.T)
    dev = rt.Device()
    da, db, dc = (rt.to_device(np.ascontiguousarray(x).ravel(), dev) for x in (mem_a, mem_b, mem_c))
    rows_d = m if clay == "row" else n
    dd = rt.to_device(np.zeros(rows_d * sd, np.float16 if dt == "f16" else np.float32), dev)
    ptx = (WMMA_TALL_WIDE.replace("CFRAG", _FRAG[ct]).replace("DFRAG", _FRAG_D[dt]).replace("SHAPE", shape)
           .replace("ALAY", alay).replace("BLAY", blay).replace("CLAY", clay).replace("DT", dt).replace("CT", ct)
           .replace("SB", str(sb)).replace("SD", str(sd)))
    rt.load_module(ptx, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [da, db, dc, dd])
    return dd.copy_to_host().reshape(rows_d, sd)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("shape", ["m32n8k16", "m8n32k16"])
@pytest.mark.parametrize("alay, blay, clay", [("row", "col", "row"), ("col", "row", "col")])
@pytest.mark.parametrize("dt, ct", [("f32", "f32"), ("f16", "f16"), ("f32", "f16")])
def test_wmma_tall_and_wide_f16_shapes(engine, opt, shape, alay, blay, clay, dt, ct):
    """D = A*B + C through wmma.load/mma/store in memory (PTX leaves the fragments unspecified, so memory in and
    out is the whole contract): numpy's float64 product of small f16 values (exact) plus C, rounded once to D's
    type; B with a padded stride and D with one (the stride operand), the rest dense."""
    m, n = (32, 8) if shape == "m32n8k16" else (8, 32)
    rng = np.random.default_rng(len(shape + alay + dt + ct))
    a = (rng.integers(-8, 9, (m, 16)) / 4).astype(np.float16)
    b = (rng.integers(-8, 9, (16, n)) / 8).astype(np.float16)
    c = (rng.integers(-64, 65, (m, n)) / 16).astype(np.float16 if ct == "f16" else np.float32)
    want = (a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)).astype(
        np.float16 if dt == "f16" else np.float32)
    sb, sd = (n if blay == "row" else 16) + 8, (n if clay == "row" else m) + 4   # padded strides, in elements
    whole = _run_wmma(engine, opt, shape, alay, blay, clay, dt, ct, a, b, c, sb, sd)
    got = whole[:, :n] if clay == "row" else whole[:, :m].T
    bits = np.uint16 if dt == "f16" else np.uint32
    np.testing.assert_array_equal(got.view(bits), want.view(bits))
    assert not (whole[:, (n if clay == "row" else m):] != 0).any()


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """Values exactly representable in bf16 -> their bit patterns (the upper half of the f32's)."""
    f = x.astype(np.float32)
    assert (f.view(np.uint32) & 0xFFFF == 0).all()
    return (f.view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("shape", ["m32n8k16", "m8n32k16"])
@pytest.mark.parametrize("alay, blay", [("row", "col"), ("col", "row")])
def test_wmma_tall_and_wide_bf16_shapes(engine, opt, shape, alay, blay):
    """As the .f16 test, with .bf16 A and B (fragments of their distinct elements: m32n8k16 A 8 registers, B 2;
    m8n32k16 A 2, B 8) and .f32 C and D."""
    m, n = (32, 8) if shape == "m32n8k16" else (8, 32)
    na, nb = (8, 2) if shape == "m32n8k16" else (2, 8)
    rng = np.random.default_rng(len(shape + alay))
    a = rng.integers(-64, 65, (m, 16)) / 16.0
    b = rng.integers(-64, 65, (16, n)) / 32.0
    c = (rng.integers(-999, 1000, (m, n)) / 7.0).astype(np.float32)
    want = (a @ b + c.astype(np.float64)).astype(np.float32)
    ptx = (WMMA_TALL_WIDE.replace("CFRAG", _FRAG["f32"]).replace("DFRAG", _FRAG_D["f32"]).replace("SHAPE", shape)
           .replace("ALAY", alay).replace("BLAY", blay).replace("CLAY", "row").replace("DT", "f32").replace("CT", "f32")
           .replace(".global.f16", ".global.bf16").replace(", SB;", ";").replace(", SD;", ";")
           .replace("{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}", "{" + ", ".join(f"%r{i + 1}" for i in range(na)) + "}")
           .replace("{%r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18}",
                    "{" + ", ".join(f"%r{i + 11}" for i in range(nb)) + "}")
           .replace(".f32.f32 {%f8", ".f32.bf16.bf16.f32 {%f8"))
    mem_a = a if alay == "row" else a.T
    mem_b = b if blay == "row" else b.T
    dev = rt.Device()
    da, db = (rt.to_device(_bf16_bits(np.ascontiguousarray(x)).ravel(), dev) for x in (mem_a, mem_b))
    dc, dd = rt.to_device(c.ravel(), dev), rt.to_device(np.zeros(m * n, np.float32), dev)
    rt.load_module(ptx, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [da, db, dc, dd])
    np.testing.assert_array_equal(dd.copy_to_host().reshape(m, n).view(np.uint32), want.view(np.uint32))


WMMA_INT8 = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<40>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    wmma.load.a.sync.aligned.ALAY.SHAPE.global.AT AFRAG, [%rd1];
    wmma.load.b.sync.aligned.BLAY.SHAPE.global.BT BFRAG, [%rd2];
    wmma.load.c.sync.aligned.row.SHAPE.global.s32 {%r21, %r22, %r23, %r24, %r25, %r26, %r27, %r28}, [%rd3];
    wmma.mma.sync.aligned.ALAY.BLAY.SHAPE.s32.AT.BT.s32SAT {%r31, %r32, %r33, %r34, %r35, %r36, %r37, %r38},
        AFRAG, BFRAG, {%r21, %r22, %r23, %r24, %r25, %r26, %r27, %r28};
    wmma.store.d.sync.aligned.row.SHAPE.global.s32 [%rd4], {%r31, %r32, %r33, %r34, %r35, %r36, %r37, %r38};
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("shape", ["m32n8k16", "m8n32k16"])
@pytest.mark.parametrize("alay, blay", [("row", "col"), ("col", "row")])
@pytest.mark.parametrize("at, sat", [("s8", ""), ("u8", ".satfinite")])
def test_wmma_tall_and_wide_int8_shapes(engine, opt, shape, alay, blay, at, sat):
    """D = A*B + C in integers (numpy int64), wrapped to 32 bits, or with .satfinite clamped to the s32 range;
    C holds values next to the s32 limits so that both matter; A and B the same type (ptxas takes no mix)."""
    m, n = (32, 8) if shape == "m32n8k16" else (8, 32)
    na, nb = (4, 1) if shape == "m32n8k16" else (1, 4)
    rng = np.random.default_rng(len(shape + alay + at))
    lo, hi = (-128, 128) if at == "s8" else (0, 256)
    a = rng.integers(lo, hi, (m, 16))
    b = rng.integers(lo, hi, (16, n))
    c = rng.integers(-2 ** 31, 2 ** 31, (m, n))
    c[0, :4] = [2 ** 31 - 1, -2 ** 31, 2 ** 31 - 100, -2 ** 31 + 100]
    exact = a @ b + c
    want = np.clip(exact, -2 ** 31, 2 ** 31 - 1) if sat else (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert sat or (exact != want).any()
    dtype = np.int8 if at == "s8" else np.uint8
    mem_a = (a if alay == "row" else a.T).astype(dtype)
    mem_b = (b if blay == "row" else b.T).astype(dtype)
    ptx = (WMMA_INT8.replace("SAT", sat).replace("SHAPE", shape).replace("ALAY", alay).replace("BLAY", blay)
           .replace("AT", at).replace("BT", at)
           .replace("AFRAG", "{" + ", ".join(f"%r{i + 1}" for i in range(na)) + "}")
           .replace("BFRAG", "{" + ", ".join(f"%r{i + 11}" for i in range(nb)) + "}"))
    dev = rt.Device()
    da, db = (rt.to_device(np.ascontiguousarray(x).ravel(), dev) for x in (mem_a, mem_b))
    dc, dd = rt.to_device(c.astype(np.int32).ravel(), dev), rt.to_device(np.zeros(m * n, np.int32), dev)
    rt.load_module(ptx, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [da, db, dc, dd])
    np.testing.assert_array_equal(dd.copy_to_host().reshape(m, n), want.astype(np.int32))


# ----------------------------------------------------------------------------- multimem.ld_reduce .vN.f16/.bf16
MULTIMEM_HALVES = """.version 9.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<8>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd2, %rd3;
    add.s64 %rd5, %rd1, %rd3;
    LINE
STORES
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["add.v2.f16", "min.v8.f16", "add.acc::f32.v4.bf16", "max.v8.bf16",
                                  "add.acc::f32.v8.f16"])
def test_multimem_ld_reduce_vectors_of_halves(engine, opt, form):
    """ptxas 13.0 compiles ``multimem.ld_reduce...vN.f16 {%h...}`` as the packed .f16x2 form (xcc.ir.lower_sm90
    op_multimem cites the SASS): element k is the half at address + 2k.  On one device the reduction is over one
    copy, so each element is the half in memory, bit for bit (NaNs, -0, subnormals included; .acc::f32 widens and
    narrows exactly).  Reference: numpy's view of the input."""
    n = int(form.split(".v")[1].split(".")[0])
    regs = ", ".join(f"%h{i}" for i in range(n))
    line = f"multimem.ld_reduce.relaxed.sys.global.{form} {{{regs}}}, [%rd4];"
    stores = "\n".join(f"    st.global.u16 [%rd5+{2 * i}], %h{i};" for i in range(n))
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 16, 32 * 8, dtype=np.uint64).astype(np.uint16)
    bits[:6] = [0x7E00, 0x8000, 0x0001, 0xFC00, 0x7FBF, 0x03FF]
    dev = rt.Device()
    out = rt.to_device(np.zeros(32 * 8, np.uint16), dev)
    src = rt.to_device(bits, dev)
    text = MULTIMEM_HALVES.replace("LINE", line).replace("STORES", stores)
    module = rt.load_module(text, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [out, src])
    expect = bits.reshape(32, 8).copy()
    expect[:, n:] = 0
    np.testing.assert_array_equal(out.copy_to_host().reshape(32, 8), expect)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ["st.relaxed.sys.global.v2.f16", "st.weak.global.v8.bf16",
                                  "red.relaxed.sys.global.add.v4.f16", "red.relaxed.sys.global.add.acc::f32.v2.bf16",
                                  "red.relaxed.sys.global.min.v8.f16", "red.release.gpu.global.max.v4.bf16"])
def test_multimem_st_and_red_vectors_of_halves(engine, opt, form):
    """``multimem.st``/``red`` on ``.vN.f16``/``.bf16`` (ptxas 13.0: one STG of the packed words, one
    ``REDG.E.{ADD,MIN,MAX}.{F16,BF16}xN``; xcc.ir.lower_sm90 op_multimem): element k is stored to, or reduced
    into, address + 2k.  Each thread's eight halves of ``out`` start as y; x comes from ``in``.  Small integers
    (exact in both types, no zeros): st gives x, red.add y + x, red.min/max the smaller/larger; the halves past
    the vector keep y.  Reference: numpy on the values."""
    n = int(form.split(".v")[1].split(".")[0])
    bf16 = form.endswith("bf16")
    regs = ", ".join(f"%h{i}" for i in range(n))
    loads = "\n".join(f"    ld.global.u16 %h{i}, [%rd4+{2 * i}];" for i in range(n))
    text = MULTIMEM_HALVES.replace("LINE", f"multimem.{form} [%rd5], {{{regs}}};").replace("STORES", "")
    text = text.replace("    multimem.", loads + "\n    multimem.")
    rng = np.random.default_rng(n)
    x, y = (rng.choice(np.r_[-64:0, 1:65], 32 * 8).astype(np.float32) for _ in range(2))

    def bits(v):
        return (v.view(np.uint32) >> 16).astype(np.uint16) if bf16 else v.astype(np.float16).view(np.uint16)

    dev = rt.Device()
    out, src = rt.to_device(bits(y), dev), rt.to_device(bits(x), dev)
    rt.load_module(text, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [out, src])
    op = form.split(".")[-3] if form.startswith("red") and "acc::f32" not in form else form.split(".")[-4]
    want = {"st": x, "add": y + x, "min": np.minimum(y, x), "max": np.maximum(y, x)}[
        "st" if form.startswith("st") else op].reshape(32, 8).copy()
    want[:, n:] = y.reshape(32, 8)[:, n:]
    np.testing.assert_array_equal(out.copy_to_host().reshape(32, 8), bits(want.ravel()).reshape(32, 8))


# ----------------------------------------------------------------------------- wmma .f16 D from .f32 C
def _nearest_f32(x: Fraction) -> np.float32:
    """``x`` rounded to binary32, to nearest even (subnormals included; no overflow in these tests)."""
    if x == 0:
        return np.float32(0.0)
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    if Fraction(2) ** e > a:
        e -= 1
    q = Fraction(2) ** (max(e, -126) - 23)  # the quantum of a's binade
    n, rem = divmod(a / q, 1)
    n += rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1)
    return np.float32(float(n * q) * (1 if x > 0 else -1))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("shape, alay, blay, clay", [("m16n16k16", "row", "col", "row"),
                                                     ("m16n16k16", "col", "row", "col"),
                                                     ("m32n8k16", "row", "col", "row"),
                                                     ("m8n32k16", "col", "row", "col")])
def test_wmma_f16_result_from_an_f32_accumulator(engine, opt, shape, alay, blay, clay):
    """wmma.mma...f16.f32: ptxas 13.0 compiles it as the .f32 MMA and a conversion of each pair to f16
    (HMMA.16816.F32 then F2FP.F16.F32.PACK_AB, xcc.ir.lower_wmma_simt._f16_from_f32_d), so D is C + A*B summed
    exactly (fractions.Fraction), rounded to f32, then to f16: two roundings.  Element (0, 0) is one where that
    differs from one rounding: 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 in f32 (a tie, to even), then to 1 in f16 (a
    tie, to even); rounded once it would be 1 + 2^-10."""
    m, n = {"m16n16k16": (16, 16), "m32n8k16": (32, 8), "m8n32k16": (8, 32)}[shape]
    rng = np.random.default_rng(len(shape + alay))
    a = rng.normal(0, 1, (m, 16)).astype(np.float16)
    b = rng.normal(0, 1, (16, n)).astype(np.float16)
    c = rng.normal(0, 4, (m, n)).astype(np.float32)
    a[0, :], b[:, 0] = 0, 0
    a[0, 0], b[0, 0], c[0, 0] = 2.0 ** -14, 2.0 ** -10, 1 + 2.0 ** -11
    exact = [[Fraction(float(c[i, j])) + sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j])) for k in range(16))
              for j in range(n)] for i in range(m)]
    want = np.array([[_nearest_f32(x) for x in row] for row in exact], np.float32).astype(np.float16)
    assert want[0, 0] == 1.0 and np.float16(float(exact[0][0])) == 1 + 2.0 ** -10
    sb, sd = (n if blay == "row" else 16) + 16, (n if clay == "row" else m) + 16  # padded, 32-byte rows
    whole = _run_wmma(engine, opt, shape, alay, blay, clay, "f16", "f32", a, b, c, sb, sd)
    got = whole[:, :n] if clay == "row" else whole[:, :m].T
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


# ----------------------------------------------------------------------------- mma.sp .s4/.u4
_PAIRS = {0x4: (0, 1), 0x8: (0, 2), 0xC: (0, 3), 0x9: (1, 2), 0xD: (1, 3), 0xE: (2, 3)}  # nibble i1 << 2 | i0


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("k, types, sel, sat", [(64, "s4.s4", 0, False), (64, "u4.s4", 1, True),
                                                (128, "s4.u4", 0, False), (128, "u4.u4", 0, True)])
def test_mma_sp_int4_vs_python_integers(engine, opt, k, types, sel, sat):
    """mma.sp .s4/.u4 (m16n8k64, m16n8k128), written out from the PTX ISA's fragments: A (16 x K) is 2:4 sparse in
    pairs of nibbles (each chunk of 8 nibbles keeps 2 of its 4 pairs, a metadata nibble i1 << 2 | i0 of their
    positions: the 4-bit forms are the 8-bit forms' byte layout, each byte a nibble pair); compressed register r of
    lane (g, t) holds row g + 8 (r % 2), the kept pairs of chunks 2t, 2t + 1 (+ 8 for r >= 2: columns firstcol ..
    firstcol + 15, firstcol = 16t (+ 64), as 9.7.14.6.2.8 gives); the nibble of (row, chunk j) is bits 4 (j % 8) of
    lane 4g + 2 sel + 2 (j / 8) + row / 8 (the other lanes' metadata is noise and must not matter); B register r
    rows 32r + 8t + i of column g; C/D (g + 8 (i / 2), 2t + i % 2).  Reference: Python integers, wrapping or
    saturating to s32."""
    at, bt = types.split(".")
    rng = np.random.default_rng(k + sel + 2 * sat)
    chunks = k // 8
    nib = np.array(list(_PAIRS))[rng.integers(0, 6, (16, chunks))]
    aval = rng.integers(-8, 8, (16, k)) if at == "s4" else rng.integers(0, 16, (16, k))
    dense = np.zeros((16, k), np.int64)
    comp = np.zeros((16, k // 2), np.int64)  # kept nibbles in order
    for r in range(16):
        for j in range(chunks):
            for slot, p in enumerate(_PAIRS[int(nib[r, j])]):
                for h in range(2):
                    dense[r, 8 * j + 2 * p + h] = aval[r, 8 * j + 2 * p + h]
                    comp[r, 4 * j + 2 * slot + h] = aval[r, 8 * j + 2 * p + h]
    bmat = rng.integers(-8, 8, (k, 8)) if bt == "s4" else rng.integers(0, 16, (k, 8))
    cmat = rng.integers(-2**31, 2**31, (16, 8))
    if sat:
        cmat[0, :], cmat[9, :] = 2**31 - 5, -2**31 + 5
    a = np.zeros((32, 4), np.uint32)
    b = np.zeros((32, 4), np.uint32)
    c = np.zeros((32, 4), np.uint32)
    e = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for reg in range(k // 32):
            row, h = g + 8 * (reg % 2), reg // 2
            nibbles = comp[row, 32 * h + 8 * t:32 * h + 8 * t + 8]  # chunks 8h + 2t, + 1: 4 kept nibbles each
            a[lane, reg] = sum((int(x) & 0xF) << (4 * i) for i, x in enumerate(nibbles))
            b[lane, reg] = sum((int(bmat[32 * reg + 8 * t + i, g]) & 0xF) << (4 * i) for i in range(8))
        for i in range(4):
            c[lane, i] = int(cmat[g + 8 * (i // 2), 2 * t + i % 2]) & 0xFFFFFFFF
    for g in range(8):
        for rh in range(2):
            for half in range(chunks // 8):
                lane = 4 * g + 2 * sel + 2 * half + rh
                e[lane] = sum(int(nib[g + 8 * rh, 8 * half + j]) << (4 * j) for j in range(8))
    want = dense.dot(bmat) + cmat
    want = np.clip(want, -2**31, 2**31 - 1) if sat else (want + 2**31) % 2**32 - 2**31
    na = k // 32
    regs = lambda r: "{" + ", ".join(f"%{r}{i}" for i in range(na)) + "}"  # noqa: E731
    form = (f"mma.sp::ordered_metadata.sync.aligned.m16n8k{k}.row.col{'.satfinite' if sat else ''}.s32.{at}.{bt}.s32 "
            f"{{%d0, %d1, %d2, %d3}}, {regs('a')}, {regs('b')}, {{%c0, %c1, %c2, %c3}}, %e, {sel};")
    dev = rt.Device()
    bufs = [rt.to_device(x, dev) for x in (a, b, c, e)]
    out = rt.zeros(128, np.uint32, dev)
    rt.load_module(SPARSE_INT4.replace("MMA", form), device=dev, engine=engine, opt_level=opt).get_function(
        "k").launch((1, 1, 1), (32, 1, 1), [*bufs, out])
    got = out.copy_to_host().reshape(32, 4).view(np.int32)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(4):
            assert int(got[lane, i]) == int(want[g + 8 * (i // 2), 2 * t + i % 2]), (lane, i)
