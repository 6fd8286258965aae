"""Tensor-core and async-copy instructions of the xg1 backend (backend/isel_matrix.py, compiler/sim/isa/exec_matrix.py).

* Executors against :mod:`xcc.semantics` on random fragments (hypothesis): every D register of every
  supported ``mma`` shape and type combination, computed by the half instruction that selection picks
  (:func:`mma_half_plan`) from the registers it names, equals :func:`xcc.semantics.matrix.mma` on the
  whole fragments - which checks the split of an m16n8 mma into two 8-row halves bit for bit (NaN, inf,
  subnormal and overflowing inputs included).  LDSM against :func:`xcc.semantics.matrix.ldmatrix`.
* Warp-collective instructions fault when a lane is missing; warpgroup-collective ones (WGMMA.F32,
  WARPGROUP.*) when a thread of the warpgroup is.
* WGMMA.F32 against :func:`xcc.semantics.wgmma.mma_part` on random shared memory, descriptors, N and
  flags; a wgmma kernel bit for bit alike on both interpreters.
* cp.async groups end to end on both interpreters: a read before the covering wait sees the old shared
  memory (so the scheduler must not move it across DEPBAR), ``wait_group 1`` leaves the newest group
  pending, zero fill, ``wait_all``.
* Unsupported variants are located errors.
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcc import runtime as rt
from xcc.backend.codegen import disassemble_kernel
from xcc.backend.isel_matrix import mma_half_plan, wmma_plan
from xcc.backend.minst import mi
from xcc.diagnostics import UnsupportedError
from xcc.driver import CompileOptions, Source, compile_module
from xcc.semantics import matrix, wgmma
from xcc.sim.isa.exec_matrix import mma_half
from xcc.sim.isa.executors import IMPLS, Binder, ExecFault
from xcc.sim.memory import FlatMemory

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
W = 2  # warps
T = 32 * W
F16_EDGES = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01]
BF16_EDGES = [0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0]
F32_EDGES = [0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF,
             0x7F800000, 0xFF800000, 0x7FC00000, 0x477FE000, 0x33800000]

CONFIGS = [  # (shape, dtype.atype.btype.ctype, satfinite)
    ("m16n8k16", "f32.f16.f16.f32", False), ("m16n8k16", "f32.bf16.bf16.f32", False),
    ("m16n8k16", "f16.f16.f16.f16", False), ("m16n8k8", "f32.f16.f16.f32", False),
    ("m16n8k8", "f32.bf16.bf16.f32", False), ("m16n8k8", "f16.f16.f16.f16", False),
    ("m16n8k32", "s32.s8.s8.s32", False), ("m16n8k32", "s32.s8.s8.s32", True),
    ("m16n8k32", "s32.u8.s8.s32", True), ("m16n8k32", "s32.u8.u8.s32", False),
    ("m16n16k16", "f32.f16.f16.f32", False), ("m16n16k16", "f16.f16.f16.f16", False),
]


def _elements(rng: np.random.Generator, etype: str, n: int, special: float) -> np.ndarray:
    """``n`` element bit patterns of ``etype``: random, with a fraction ``special`` of edge values."""
    bits = matrix.ELEM_BITS[etype]
    v = rng.integers(0, 1 << bits, n, dtype=np.uint64)
    if etype in ("f16", "bf16", "f32"):
        if etype != "f32":  # mostly moderate magnitudes, so sums are not all inf/NaN
            v = np.where(rng.random(n) < 0.7, v & 0x3FFF | (v & 0x8000) if etype == "f16" else v & 0x3FFF |
                         (v & 0x8000) | 0x3800, v)
        edges = {"f16": F16_EDGES, "bf16": BF16_EDGES, "f32": F32_EDGES}[etype]
        v = np.where(rng.random(n) < special, np.array(edges, np.uint64)[rng.integers(0, len(edges), n)], v)
    elif etype == "s32":
        v = np.where(rng.random(n) < 0.5, (rng.integers(-(2**20), 2**20, n) + (2**31 - 1) *
                                           rng.choice([-1, 1], n)).astype(np.int64) & 0xFFFFFFFF, v)
    return v.astype(np.uint32)


def _fragment(rng, shape: str, operand: str, etype: str, special: float) -> np.ndarray:
    nregs = matrix.MMA_SHAPES[shape].regs(operand, etype)
    per = 32 // matrix.ELEM_BITS[etype]
    return matrix.pack(_elements(rng, etype, W * 32 * nregs * per, special).reshape(W, 32, nregs * per),
                       matrix.ELEM_BITS[etype])


def _ctx(nregs: int = 32):
    return types.SimpleNamespace(regs=np.zeros((nregs, T), np.uint32), preds=np.zeros((8, T), bool),
                                 cbank=bytes(0x200))


def _execute(ctx, mnemonic: str, mods: dict, idx: np.ndarray | None = None, **ops) -> None:
    run = IMPLS[mnemonic](Binder(ctx, mi(mnemonic, mods=mods, **ops), 0))
    idx = np.arange(T) if idx is None else idx
    with np.errstate(all="ignore"):  # as the emulator runs executors (NaN inputs)
        run(slice(0, T) if idx.size == T else idx, idx, idx.size)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), special=st.sampled_from([0.0, 0.05, 0.3]))
@pytest.mark.parametrize("shape,tstr,sat", CONFIGS)
def test_half_instructions_compute_each_d_register_of_mma(shape, tstr, sat, seed, special):
    """Each D register through the half instruction and the operand registers selection names for it."""
    rng = np.random.default_rng(seed)
    tys = tuple(tstr.split("."))
    dtype, atype, btype, ctype = tys
    spec = matrix.MMA_SHAPES[shape]
    a = _fragment(rng, shape, "a", atype, special)
    b = _fragment(rng, shape, "b", btype, special)
    c = _fragment(rng, shape, "c", ctype, special)
    with np.errstate(all="ignore"):
        want = matrix.mma(shape, tys, a, b, c, sat)
    na, nb = spec.regs("a", atype), spec.regs("b", btype)
    for part in range(spec.regs("d", dtype)):
        mn, mods, _, ai, bi, ci, index = mma_half_plan(shape, tys, part, na, nb)
        if sat:
            mods = {**mods, "SAT": "SAT"}
        ctx = _ctx()
        for base, frag, which in ((16, a, ai), (18, b, bi), (20, c, ci)):  # each operand in R16.. (pairs even)
            for k, r in enumerate(which):
                ctx.regs[base + k] = frag[:, :, r].reshape(T)
        _execute(ctx, mn, mods, d=22, a=16, b=18, c=20)
        got = ctx.regs[22 + (index or 0)].reshape(W, 32)
        np.testing.assert_array_equal(got, want[:, :, part], err_msg=f"{shape}.{tstr} D register {part} ({mn})")


def test_mma_half_matches_the_direct_helper():
    """mma_half on the pairs of both halves reassembles the whole m16n8k16 D fragment."""
    rng = np.random.default_rng(7)
    tys = ("f32", "f16", "f16", "f32")
    a, b, c = (_fragment(rng, "m16n8k16", op, t, 0.05) for op, t in (("a", "f16"), ("b", "f16"), ("c", "f32")))
    with np.errstate(all="ignore"):
        top, bottom, want = _both_halves(tys, a, b, c)
    np.testing.assert_array_equal(np.concatenate([top, bottom], axis=-1), want)


def _both_halves(tys, a, b, c):
    top = mma_half("HMMA.16816.F32", tys, a[..., [0, 2]], b, c[..., [0, 1]])
    bottom = mma_half("HMMA.16816.F32", tys, a[..., [1, 3]], b, c[..., [2, 3]])
    return top, bottom, matrix.mma("m16n8k16", tys, a, b, c)


def test_unsupported_mma_plans():
    assert mma_half_plan("m16n8k16", ("f32", "f16", "f16", "f16"), 0, 4, 2) is None  # mixed accumulators
    assert mma_half_plan("m16n8k16", ("f16", "bf16", "bf16", "f16"), 0, 4, 2) is None
    assert mma_half_plan("m8n8k4", ("f32", "f16", "f16", "f32"), 0, 2, 2) is None


@pytest.mark.parametrize("frag", ["a", "b", "c"])
@pytest.mark.parametrize("layout", ["row", "col"])
def test_wmma_plan_reproduces_the_element_offsets(frag, layout):
    """The selection-time split of wmma addresses (lane part + constants) equals wmma_offsets for any stride."""
    lead, minor, consts = wmma_plan(frag, layout)
    lane = np.arange(32)
    part = {"g": lane >> 2, "t2": 2 * (lane & 3)}
    for stride in (16, 24, 40):
        got = np.array([[(part[lead][ln] + lc) * stride + part[minor][ln] + mc for lc, mc in consts]
                        for ln in range(32)])
        np.testing.assert_array_equal(got, matrix.wmma_offsets(frag, layout, stride))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mat=st.integers(0, 3), trans=st.booleans())
def test_ldsm_matches_ldmatrix(seed, mat, trans):
    rng = np.random.default_rng(seed)
    size = 2048
    ctx = _ctx()
    ctx.tpb_pad, ctx.smem_size, ctx.smem_stride = T, size, size
    ctx.smem = FlatMemory(size, "shared")
    data = rng.integers(0, 1 << 16, size // 2).astype(np.uint16)
    ctx.smem.store(np.arange(0, size, 2, dtype=np.uint64), data, 2)
    rows_at = rng.integers(0, size // 16, T).astype(np.uint32) * 16 + 8  # the instruction adds -8
    ctx.regs[3] = rows_at
    _execute(ctx, "LDSM", {"mat": f"M{mat}", **({"T": "T"} if trans else {})}, d=5, a=3, b=-8)
    addr = (rows_at.astype(np.int64) - 8).reshape(W, 32)[:, 8 * mat:8 * mat + 8]
    rows = data[(addr[:, :, None] // 2 + np.arange(8))]
    np.testing.assert_array_equal(ctx.regs[5].reshape(W, 32), matrix.ldmatrix(rows, trans))


def test_ldsm_misaligned_row_faults():
    ctx = _ctx()
    ctx.tpb_pad, ctx.smem_size, ctx.smem_stride, ctx.smem = T, 1024, 1024, FlatMemory(1024, "shared")
    ctx.regs[3] = 32
    ctx.regs[3, 9] = 40
    with pytest.raises(ExecFault, match="16-byte aligned"):
        _execute(ctx, "LDSM", {"mat": "M1"}, d=5, a=3, b=0)


@pytest.mark.parametrize("mnemonic,ops", [("HMMA.16816.F32", dict(d=22, a=16, b=18, c=20)),
                                          ("IMMA.16832", dict(d=22, a=16, b=18, c=20)),
                                          ("LDSM", dict(d=5, a=3, b=0))])
def test_warp_collectives_fault_on_a_missing_lane(mnemonic, ops):
    ctx = _ctx()
    ctx.tpb_pad, ctx.smem_size, ctx.smem_stride, ctx.smem = T, 1024, 1024, FlatMemory(1024, "shared")
    idx = np.delete(np.arange(T), 37)  # lane 5 of warp 1 diverged
    with pytest.raises(ExecFault, match=r"all 32 lanes .* lane\(s\) 0-4,6-31"):
        _execute(ctx, mnemonic, {}, idx=idx, **ops)


# ============================================================================= cp.async end to end
CP_ASYNC = """\
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<16>;
    .shared .align 16 .b8 buf[3072];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 4;
    add.u32 %r4, %r2, %r3;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r1, 32;
    add.s64 %rd6, %rd2, %rd5;
    cp.async.cg.shared.global [%r4], [%rd4], 16;
    cp.async.commit_group;
    rem.u32 %r5, %r1, 9;
    cp.async.ca.shared.global [%r4+1024], [%rd4+1024], 8, %r5;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r4+2048], [%rd4+2048], 4;
    cp.async.commit_group;
    ld.shared.u32 %r6, [%r4];
    cp.async.wait_group 1;
    ld.shared.u32 %r7, [%r4];
    ld.shared.u32 %r8, [%r4+12];
    ld.shared.u32 %r9, [%r4+1024];
    ld.shared.u32 %r10, [%r4+1028];
    ld.shared.u32 %r11, [%r4+2048];
    cp.async.wait_all;
    ld.shared.u32 %r12, [%r4+2048];
    st.global.u32 [%rd6], %r6;
    st.global.u32 [%rd6+4], %r7;
    st.global.u32 [%rd6+8], %r8;
    st.global.u32 [%rd6+12], %r9;
    st.global.u32 [%rd6+16], %r10;
    st.global.u32 [%rd6+20], %r11;
    st.global.u32 [%rd6+24], %r12;
    ret;
}
"""


@pytest.mark.parametrize("opt_level", [0, 3])
def test_cp_async_groups_on_both_interpreters(opt_level):
    n = 64
    src = np.random.default_rng(3).integers(1, 2**32, 3 * 1024 // 4, dtype=np.uint64).astype(np.uint32)
    outs = {}
    for engine in ("isa", "ir"):
        dev = rt.Device()
        mod = rt.load_module(CP_ASYNC, engine=engine, opt_level=opt_level, device=dev)
        d_in, d_out = rt.to_device(src, dev), rt.to_device(np.full(n * 8, 0xDEADBEEF, np.uint32), dev)
        mod.get_function("k").launch((1, 1, 1), (n, 1, 1), (d_in, d_out))
        outs[engine] = d_out.copy_to_host().reshape(n, 8)
    np.testing.assert_array_equal(outs["isa"], outs["ir"])
    o, t = outs["isa"], np.arange(n)
    w = src.reshape(-1, 4)  # 16 bytes per thread and region
    np.testing.assert_array_equal(o[:, 0], 0)  # before any wait: the copy has not been performed
    np.testing.assert_array_equal(o[:, 1], w[t, 0])
    np.testing.assert_array_equal(o[:, 2], w[t, 3])
    part = np.stack([w[64 + t, 0], w[64 + t, 1]], 1).view(np.uint8).reshape(n, 8)
    part = np.where(np.arange(8) < (t % 9)[:, None], part, 0).view(np.uint32).reshape(n, 2)
    np.testing.assert_array_equal(o[:, 3:5], part)  # zero fill past src-size
    np.testing.assert_array_equal(o[:, 5], 0)  # the newest group is still pending after wait_group 1
    np.testing.assert_array_equal(o[:, 6], w[128 + t, 0])
    np.testing.assert_array_equal(o[:, 7], 0xDEADBEEF)


def test_cp_async_selects_ldgsts_and_group_barriers():
    image = compile_module([Source(CP_ASYNC, "k.ptx")], CompileOptions(opt_level=3)).kernels["k"]
    text = disassemble_kernel(image)
    assert text.count("LDGSTS") == 3 and "LDGSTS.128.BYPASS" in text and ".ZFILL" in text
    assert text.count("LDGDEPBAR") == 4 and text.count("DEPBAR") - text.count("LDGDEPBAR") == 2


MIXED = """\
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    mov.b32 %r1, 0;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f1, %f2, %f3, %f4}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1};
    ld.param.u64 %rd1, [out];
    st.global.f32 [%rd1], %f1;
    ret;
}
"""


def test_mixed_accumulator_types_are_a_located_error():
    with pytest.raises(UnsupportedError, match=r":10:.*mma\.m16n8k16\.f32\.f16\.f16\.f16 is not supported"):
        compile_module([Source(MIXED, "k.ptx")], CompileOptions(opt_level=3))


# ============================================================================= wmma through loads and stores
WMMA = """\
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 ld)
{{
    .reg .b32 %r<40>;
    .reg .f32 %f<20>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    ld.param.u32 %r30, [ld];
    wmma.load.a.sync.aligned.{la}.m16n16k16{sp}.f16 {{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}}, [%rd1+64]{st};
    wmma.load.b.sync.aligned.{lb}.m16n16k16{sp}.f16 {{%r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15}}, [%rd2]{st};
    wmma.load.c.sync.aligned.{lc}.m16n16k16{sp}.{t} {c}, [%rd3]{st};
    wmma.mma.sync.aligned.{la}.{lb}.m16n16k16.{t}.{t} {d}, {{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}}, {{%r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15}}, {c};
    wmma.store.d.sync.aligned.{lo}.m16n16k16{sp}.{t} [%rd4+32], {d}{st};
    ret;
}}
"""


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("layouts", ["row.row.row.row", "col.col.col.col", "row.col.col.row", "col.row.row.col"])
@pytest.mark.parametrize("space,stride", [(".global", 32), ("", 32), (".global", None)])
def test_wmma_loads_and_stores_match_the_ir(t, layouts, space, stride):
    """wmma.load/mma/store in every layout, global and generic, register and default stride: ISA == IR."""
    la, lb, lc, lo = layouts.split(".")
    if t == "f32":
        c, d = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}", "{%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15}"
    else:
        c, d = "{%r16, %r17, %r18, %r19}", "{%r20, %r21, %r22, %r23}"
    ptx = WMMA.format(la=la, lb=lb, lc=lc, lo=lo, sp=space, t=t, c=c, d=d, st=", %r30" if stride else "")
    ld = stride or 16
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, 16 * ld + 32).astype(np.float16)
    b = rng.uniform(-1, 1, 16 * ld).astype(np.float16)
    cm = rng.uniform(-4, 4, 16 * ld).astype(np.float32 if t == "f32" else np.float16)
    outs = {}
    for engine in ("isa", "ir"):
        dev = rt.Device()
        mod = rt.load_module(ptx, engine=engine, opt_level=3, device=dev)
        out = rt.to_device(np.full(16 * ld + 16, -7.5, cm.dtype), dev)
        args = (rt.to_device(a, dev), rt.to_device(b, dev), rt.to_device(cm, dev), out, np.int32(ld))
        mod.get_function("k").launch((1, 1, 1), (32, 1, 1), args)
        outs[engine] = out.copy_to_host()
    np.testing.assert_array_equal(outs["isa"].view(np.uint8), outs["ir"].view(np.uint8))
    assert (outs["isa"] != cm.dtype.type(-7.5)).sum() == 256  # every element of D was stored once


def test_tensor_pipe_in_launch_stats():
    """The cycle model accepts the tensor pipe: a launch with timing counts its HMMA halves there."""
    rng = np.random.default_rng(5)
    dev = rt.Device()
    mod = rt.load_module(EXAMPLES / "mma_shapes.sm_80.ptx", opt_level=3, device=dev)
    args = [rt.to_device(x, dev) for x in (rng.integers(0, 0x3C00, 4 * 128).astype(np.uint16),
                                           rng.integers(0, 0x3C00, 4 * 64).astype(np.uint16),
                                           rng.uniform(-1, 1, 4 * 128).astype(np.float32),
                                           np.zeros(4 * 128, np.float32))]
    res = mod.get_function("mma_m16n8k8_f16").launch((2, 1, 1), (64, 1, 1), args)
    assert res.instructions_executed["HMMA.1688.F32"] == 8  # 4 warps x 2 halves
    assert res.metrics["sm__inst_executed_pipe_tensor.sum"] == 8 and res.cycles > 0


# ============================================================================= wgmma (sm_90a)
def _wg_ctx(ctas: int = 2, size: int = 65536):
    t = 128 * ctas
    return types.SimpleNamespace(regs=np.zeros((32, t), np.uint32), preds=np.zeros((8, t), bool),
                                 cbank=bytes(0x200), tpb_pad=128, smem_size=size, smem_stride=size,
                                 smem=FlatMemory(ctas * size, "shared"))


def _wg_execute(ctx, mnemonic: str, mods: dict, idx: np.ndarray | None = None, **ops) -> None:
    t = ctx.regs.shape[1]
    run = IMPLS[mnemonic](Binder(ctx, mi(mnemonic, mods=mods, **ops), 0))
    idx = np.arange(t) if idx is None else idx
    with np.errstate(all="ignore"):
        run(slice(0, t) if idx.size == t else idx, idx, idx.size)


def _wg_desc(rng) -> int:
    return (int(rng.integers(0, 256)) | int(rng.integers(0, 64)) << 16 | int(rng.integers(0, 32)) << 32
            | int(rng.integers(0, 4)) << 62)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), special=st.sampled_from([0.0, 0.05]))
def test_wgmma_part_matches_the_ir_semantics(seed, special):
    """WGMMA.F32 on two warpgroups (two CTAs, each with its own shared memory, descriptors and scale-d) equals
    xcc.semantics.wgmma.mma_part on the matrices matrix_addresses reads, for random layouts, swizzles, N,
    types, transposes and negations (NaN, inf and subnormal inputs included)."""
    rng = np.random.default_rng(seed)
    ctx = _wg_ctx()
    n = 8 * int(rng.integers(1, 33))
    atype, btype = (str(rng.choice(["f16", "bf16"])),) * 2
    ta, tb, na, nb = (bool(v) for v in rng.integers(0, 2, 4))
    size = ctx.smem_size
    for g, et in ((0, atype), (1, btype)):  # CTA 0 holds f16|bf16 elements of A's type, CTA 1 of B's
        bits = _elements(rng, et, size, special).astype(np.uint16)
        ctx.smem.store(np.arange(g * size, (g + 1) * size, 2, dtype=np.uint64), bits[:size // 2], 2)
    da, db = np.array([_wg_desc(rng) for _ in range(2)], np.uint64), np.array([_wg_desc(rng) for _ in range(2)],
                                                                                np.uint64)
    sd = rng.integers(0, 2, 2).astype(bool)
    c = _elements(rng, "f32", 256, special)
    for r, v in ((4, da), (6, db)):
        ctx.regs[r] = np.repeat(v & np.uint64(0xFFFFFFFF), 128).astype(np.uint32)
        ctx.regs[r + 1] = np.repeat(v >> np.uint64(32), 128).astype(np.uint32)
    ctx.regs[8], ctx.preds[1] = c, np.repeat(sd, 128)
    mods = {"n": f"N{n}", "atype": atype.upper(), "btype": btype.upper(),
            **{f: f for f, on in (("TRANS_A", ta), ("TRANS_B", tb), ("NEG_A", na), ("NEG_B", nb)) if on}}

    def matrix(desc, rows, k_major, etype, scale):
        addr = wgmma.matrix_addresses(wgmma.decode_descriptor(desc), rows, 2, k_major)
        flat = (np.arange(2)[:, None, None] * size + addr).ravel().astype(np.uint64)
        return wgmma.to_f64(np.asarray(ctx.smem.load(flat, 2)), etype).reshape(2, rows, wgmma.K) * scale

    with np.errstate(all="ignore"):
        a = matrix(da, 64, not ta, atype, -1.0 if na else 1.0)
        b = matrix(db, n, not tb, btype, -1.0 if nb else 1.0)
    for part in sorted({0, n // 2 - 1, *rng.integers(0, n // 2, 3).tolist()}):
        _wg_execute(ctx, "WGMMA.F32", mods, d=10, a=4, b=part, c=6, e=8, ps=(1, False))
        with np.errstate(all="ignore"):
            want = wgmma.mma_part(a, b, part, c.reshape(2, 128), sd)
        np.testing.assert_array_equal(ctx.regs[10].reshape(2, 128), want, err_msg=f"m64n{n}k16 part {part}")


@pytest.mark.parametrize("mnemonic,ops,what", [
    ("WGMMA.F32", dict(d=10, a=4, b=0, c=6, e=8, ps=(7, False)), "wgmma.mma_async"),
    ("WARPGROUP.ARRIVE", {}, "wgmma.fence"), ("WARPGROUP.COMMIT", {}, "wgmma.commit_group"),
    ("WARPGROUP.DEPBAR", dict(b=0), "wgmma.wait_group")])
def test_warpgroup_collectives_fault_on_a_missing_thread(mnemonic, ops, what):
    ctx = _wg_ctx()
    idx = np.delete(np.arange(256), 200)  # thread 72 of CTA 1 diverged
    with pytest.raises(ExecFault, match=rf"{what} must be executed by all 128 threads .*only 127 of the 128 "
                                        r"threads of its warpgroup \(threads 0\.\.127\)") as e:
        _wg_execute(ctx, mnemonic, {"n": "N8"} if mnemonic == "WGMMA.F32" else {}, idx=idx, **ops)
    assert e.value.thread == 128  # the first thread of the incomplete warpgroup (an index into idx)


def test_wgmma_operands_must_be_uniform_in_the_warpgroup():
    ctx = _wg_ctx()
    ctx.regs[6, 130] = 16  # B descriptor of one thread of warpgroup 1
    with pytest.raises(ExecFault, match="matrix descriptor b differs") as e:
        _wg_execute(ctx, "WGMMA.F32", {"n": "N8"}, d=10, a=4, b=0, c=6, e=8, ps=(7, False))
    assert e.value.thread == 130
    ctx.regs[6, 130], ctx.preds[1, 5] = 0, True
    with pytest.raises(ExecFault, match="scale-d differs"):
        _wg_execute(ctx, "WGMMA.F32", {"n": "N8"}, d=10, a=4, b=0, c=6, e=8, ps=(1, False))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_wgmma_kernel_on_both_interpreters(opt_level):
    """A whole wgmma (fence.proxy.async, wgmma.fence, m64n24k16 with MN-major swizzled B, commit, wait) runs
    bit for bit alike on the ISA and IR interpreters, and selects one WGMMA.F32 per accumulator register."""
    from test_async import _address, _desc, _layout, _wgmma_kernel

    rng = np.random.default_rng(5)
    n = 24
    ptx = _wgmma_kernel(n, "1, -1, 0, 1")
    img = np.zeros(8192, np.float16)
    la, sa = _layout(64, True, 64)
    lb, sb = _layout(n, False, 128)
    for r in range(64):
        for k in range(16):
            img[_address(r, k, True, 64, la, sa) // 2] = rng.standard_normal()
    for col in range(n):
        for k in range(16):
            img[(8192 + _address(col, k, False, 128, lb, sb)) // 2] = rng.standard_normal()
    c0 = rng.standard_normal((128, n // 2)).astype(np.float32)
    outs = {}
    for engine in ("isa", "ir"):
        dev = rt.Device()
        mod = rt.load_module(ptx, engine=engine, opt_level=opt_level, device=dev)
        d_img, d_out = rt.to_device(img.view(np.uint32), dev), rt.to_device(c0, dev)
        mod.get_function("k").launch((1, 1, 1), (128, 1, 1), (d_img, d_out, np.uint64(_desc(0, la, sa, 64)),
                                                              np.uint64(_desc(8192, lb, sb, 128)), np.uint32(1)))
        outs[engine] = d_out.copy_to_host().view(np.uint32)
    np.testing.assert_array_equal(outs["isa"], outs["ir"])
    assert not np.array_equal(outs["isa"], c0.view(np.uint32))
    text = disassemble_kernel(compile_module([Source(ptx, "k.ptx")], CompileOptions(opt_level=opt_level)).kernels["k"])
    assert text.count("WGMMA.F32.N24.TRANS_B.NEG_B") == n // 2
    for sync in ("FENCE.VIEW.ASYNC", "WARPGROUP.ARRIVE", "WARPGROUP.COMMIT", "WARPGROUP.DEPBAR"):
        assert sync in text
