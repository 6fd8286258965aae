"""Sparse ``wgmma.mma_async.sp.sync.aligned.m64nNk32.{f32,f16}.{f16,bf16}.{f16,bf16}`` (sm_90a) on both engines at
-O0 and -O3, against an independent reference written from the PTX ISA (9.7.15.6, "wgmma.mma_async.sp"):

* A (64 x 32) is 2:4 sparse: each chunk of 4 consecutive elements of a row holds 2 non-zeros, stored in order in
  the compressed A (64 x 16), which lies in shared memory in the canonical K-major layout of a dense m64nNk16 A;
  B (32 x N) is dense, K-major, 32 elements deep.
* The metadata: each thread holds a .b32 register; in each group of 4 consecutive threads the pair the sparsity
  selector names (0: threads 0, 1; 1: threads 2, 3) holds it.  For warp ``w``, lane ``4g + 2*sel + p``: bits
  ``16h + 4i`` .. ``16h + 4i + 3`` are the nibble ``i1 << 2 | i0`` (the positions of the chunk's two stored
  values) of chunk ``4p + i`` of row ``16w + g + 8h``.  (xcc follows the manual's layout; no GPU confirmed it for
  wgmma.sp: docs/semantics.md.)
* D = A*B + (scale-d ? C : 0), the exact sum of the 32 products and the accumulator rounded once (the dense rule).

The other kinds (``run_kind``), each per warp the ``mma.sp`` layout of the same kind (an H200 confirmed those for
mma.sp; not for wgmma.sp):

* ``.tf32`` m64nNk16: 1:2 sparse, the compressed A 64 x 8 (a dense m64nNk8 A's layout); chunk ``j`` of a row is
  dense columns 2j, 2j+1, its one stored value compressed column j, its nibble 0x4 (the first) or 0xE (the
  second) where the f16 rule puts the nibble of chunk ``j``.  Each tf32 read as its f32's upper 19 bits.
* ``.e4m3``/``.e5m2`` (f32 or f16 accumulator) and ``.s8``/``.u8`` (.s32, wrapping or ``.satfinite``) m64nNk64:
  2:4 sparse, the compressed A 64 x 32 (a dense m64nNk32 A's layout); sp-sel 0 only, every thread holds metadata:
  thread ``32w + 4g + 2q + h`` has in bits ``4i`` the nibble ``i1 << 2 | i0`` of chunk ``8q + i`` (dense columns
  ``4(8q + i)`` ..) of row ``16w + g + 8h``.

Nothing here calls xcc.semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from test_fp8_mma import fp8, round_once
from test_wgmma_tf32 import round_f32
from wgmma_harness import ENGINES, SW_MODE, kernel, kmajor_offset, owner

from xcc import runtime as rt

PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
META_AT = 12288
REGS_AT = 13312


def _layout(sw: int, k: int) -> tuple[int, int]:
    """(LBO, SBO) of a K-major matrix ``k`` f16 elements deep (no swizzle: core matrices of 8 rows x 16 bytes,
    k/8 of them side by side)."""
    return (128, 128 * (k // 8)) if sw == 0 else (0, 8 * sw)


def _place(img: np.ndarray, base: int, m: np.ndarray, sw: int) -> None:
    lbo, sbo = _layout(sw, m.shape[1])
    raw = np.ascontiguousarray(m.astype("<u2")).view(np.uint8).reshape(m.shape[0], m.shape[1], 2)
    for r in range(m.shape[0]):
        for k in range(m.shape[1]):
            off = base + kmajor_offset(r, k, sw, lbo, sbo, 2)
            img[off:off + 2] = raw[r, k]


def _value(bits: int, etype: str) -> Fraction:
    if etype == "f16":
        return Fraction(float(np.uint16(bits).view(np.float16)))
    return Fraction(float(np.uint32(int(bits) << 16).view(np.float32)))


def _bits(x: np.ndarray, etype: str) -> np.ndarray:
    if etype == "f16":
        return x.astype(np.float16).view(np.uint16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact for these values


def _launch_sparse(ptx: str, img, c0, sel: int, a_regs: bool, sw: int, a_lbo_sbo, b_lbo_sbo, scale_d: int,
                   acc: str, n: int, engine: str, opt: int) -> np.ndarray:
    """Run the kernel ``ptx`` (its metadata, and A when ``a_regs``, loaded from shared memory) on the shared image
    ``img`` with accumulators ``c0``; A's and B's descriptors from their leading/stride byte offsets; the D
    fragment as 32-bit words (f16 accumulators widened)."""
    a_op = "{%r12, %r13, %r14, %r15}" if a_regs else "%rd7"
    loads = (f"    shl.b32 %r11, %r1, 2;\n    add.u32 %r11, %r11, %r6;\n    ld.shared.u32 %r10, [%r11+{META_AT}];\n"
             + (f"    shl.b32 %r11, %r1, 4;\n    add.u32 %r11, %r11, %r6;\n"
                f"    ld.shared.v4.u32 {{%r12, %r13, %r14, %r15}}, [%r11+{REGS_AT}];\n" if a_regs else ""))
    ptx = ptx.replace("%rd7, %rd8, %p2", f"{a_op}, %rd8, %r10, {sel}, %p2").replace(
        "    bar.sync 0;\n", "    bar.sync 0;\n" + loads)

    def desc(start, lbo, sbo):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | SW_MODE[sw] << 62

    dev = rt.Device()
    d_img, d_out = rt.to_device(img.view(np.uint32), dev), rt.to_device(np.ascontiguousarray(c0), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (128, 1, 1), [d_img, d_out, np.uint64(desc(0, *a_lbo_sbo)),
                                                             np.uint64(desc(8192, *b_lbo_sbo)), np.uint32(scale_d)])
    got = d_out.copy_to_host().view(np.uint32).reshape(c0.shape)
    if acc == "f16":
        got = got.view(np.uint16).reshape(128, n // 2).astype(np.uint32)
    return got


def run_sparse(n: int, sw: int, sel: int, engine: str, opt: int, etype: str = "f16", acc: str = "f32",
               scale_d: bool = True, seed: int = 0, a_regs: bool = False):
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 6, (64, 8))
    vals = rng.integers(-64, 64, (64, 16)) / 8.0
    comp = _bits(vals, etype)  # the compressed A
    dense = [[Fraction(0)] * 32 for _ in range(64)]
    for r in range(64):
        for j in range(8):
            i0, i1 = PAIRS[pos[r, j]]
            dense[r][4 * j + i0] = _value(comp[r, 2 * j], etype)
            dense[r][4 * j + i1] = _value(comp[r, 2 * j + 1], etype)
    bt = _bits(rng.standard_normal((n, 32)).astype(np.float32) * 4, etype)  # B^T, N x 32
    meta = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)  # threads not selected: noise
    for t in range(128):
        w, lane = t // 32, t % 32
        if (lane % 4) // 2 != sel:
            continue
        word = 0
        for h in range(2):
            for i in range(4):
                i0, i1 = PAIRS[pos[16 * w + lane // 4 + 8 * h, 4 * (lane % 2) + i]]
                word |= (i1 << 2 | i0) << (16 * h + 4 * i)
        meta[t] = word
    img = np.zeros(16384, np.uint8)
    _place(img, 0, comp, sw)
    _place(img, 8192, bt, sw)
    img[META_AT:META_AT + 512] = meta.view(np.uint8)
    if a_regs:  # the compressed A as the dense m64nNk16 A fragment: register j of thread t (warp w, lane l) packs
        # A(16w + l/4 + 8(j%2), 2(l%4) + 8(j/2) + s), s = 0 low, 1 high
        frag = np.zeros((128, 4), np.uint32)
        for t in range(128):
            w, lane = t // 32, t % 32
            for j in range(4):
                r, c = 16 * w + lane // 4 + 8 * (j % 2), 2 * (lane % 4) + 8 * (j // 2)
                frag[t, j] = int(comp[r, c]) | int(comp[r, c + 1]) << 16
        img[REGS_AT:REGS_AT + 2048] = frag.reshape(-1).view(np.uint8)
    nr = n // 2 if acc == "f32" else n // 4
    if acc == "f32":
        c0 = (rng.standard_normal((128, nr)) * 4).astype(np.float32)
    else:
        c0 = (rng.standard_normal((128, 2 * nr)) * 4).astype(np.float16).view(np.uint32)
    want = np.zeros((128, n // 2), np.uint32)
    for t in range(128):
        for i in range(n // 2):
            row, col = owner(t, i)
            if acc == "f32":
                c = Fraction(float(c0[t, i]))
            else:
                c = Fraction(float(c0[t].view(np.float16)[i]))
            s = (c if scale_d else Fraction(0)) + sum(dense[row][k] * _value(bt[col, k], etype) for k in range(32))
            want[t, i] = round_f32(s) if acc == "f32" else int(np.float16(float(s)).view(np.uint16))
    mma = f"wgmma.mma_async.sp.sync.aligned.m64n{n}k32.{acc}.{etype}.{etype}"
    ptx = kernel(mma, nr, "f32" if acc == "f32" else "b32", ", 1, 1, 0" if a_regs else ", 1, 1, 0, 0")
    la, sa = _layout(sw, 16)
    lb, sb = _layout(sw, 32)
    return _launch_sparse(ptx, img, c0, sel, a_regs, sw, (la, sa), (lb, sb), scale_d, acc, n, engine, opt), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw,sel", [(8, 0, 0), (16, 128, 1), (32, 64, 0)])
def test_sparse_f16_wgmma_matches_the_manuals_layout(n, sw, sel, engine, opt):
    got, want = run_sparse(n, sw, sel, engine, opt, seed=n + sw + sel)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES[::3])
def test_sparse_bf16_wgmma(engine, opt):
    got, want = run_sparse(16, 0, 1, engine, opt, etype="bf16", seed=7)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES[::3])
def test_sparse_wgmma_with_an_f16_accumulator_and_scale_d_false(engine, opt):
    got, want = run_sparse(16, 128, 0, engine, opt, acc="f16", scale_d=False, seed=3)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_sparse_wgmma_with_a_in_registers(engine, opt):
    got, want = run_sparse(16, 0, 1, engine, opt, a_regs=True, seed=11)
    assert np.array_equal(got, want)


# ----------------------------------------------------------------------------- tf32, FP8 and integer kinds
EBYTES = {"tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


def _kind_value(bits: int, etype: str) -> Fraction:
    if etype == "tf32":  # the upper 19 bits of the f32
        return Fraction(float(np.uint32(int(bits) & 0xFFFFE000).view(np.float32)))
    if etype in ("s8", "u8"):
        return Fraction(int(bits) - 256 if etype == "s8" and bits >= 128 else int(bits))
    v = fp8(int(bits), etype)
    return Fraction(0) if v == "-0" else v


def _kind_bits(rng, etype: str, shape) -> np.ndarray:
    if etype == "tf32":  # small exact values, with noise in the 13 bits tf32 drops
        v = (rng.integers(-64, 64, shape) / 8.0).astype(np.float32).view(np.uint32)
        return v | rng.integers(0, 1 << 13, shape).astype(np.uint32)
    b = rng.integers(0, 256, shape).astype(np.uint8)
    if etype == "e4m3":
        b[(b & 0x7F) == 0x7F] = 0x38  # no NaN: 1.0
    elif etype == "e5m2":
        b[(b & 0x7C) == 0x7C] = 0x3C  # no infinity or NaN: 1.0
    return b


def _place_kind(img: np.ndarray, base: int, m: np.ndarray, sw: int, eb: int) -> None:
    kbytes = m.shape[1] * eb
    lbo, sbo = (128, 8 * kbytes) if sw == 0 else (0, 8 * sw)
    raw = np.ascontiguousarray(m.astype(f"<u{eb}" if eb > 1 else np.uint8)).view(np.uint8).reshape(*m.shape, eb)
    for r in range(m.shape[0]):
        for k in range(m.shape[1]):
            off = base + kmajor_offset(r, k, sw, lbo, sbo, eb)
            img[off:off + eb] = raw[r, k]


def run_kind(etype: str, n: int, sw: int, sel: int, engine: str, opt: int, acc: str = "f32", btype: str = "",
             scale_d: bool = True, seed: int = 0, a_regs: bool = False, satfinite: bool = False, big_c: bool = False,
             scale_a: int = 1):
    """One sparse tf32 (m64nNk16), FP8 or integer (m64nNk64) wgmma; (got, want) accumulator words (128, N/2);
    ``scale_a`` the imm-scale-a of a float kind (-1: A negated)."""
    btype = btype or etype
    rng = np.random.default_rng(seed)
    eb, tf32 = EBYTES[etype], etype == "tf32"
    kd = 16 if tf32 else 64  # the dense K
    kc = kd // 2
    comp = _kind_bits(rng, etype, (64, kc))
    bt = _kind_bits(rng, btype, (n, kd))  # B^T, N x K
    dense = [[Fraction(0)] * kd for _ in range(64)]
    nib = np.zeros((64, kd // (2 if tf32 else 4)), np.uint32)  # the metadata nibble of each chunk
    for r in range(64):
        for j in range(nib.shape[1]):
            if tf32:  # 1:2: one stored value per chunk of 2
                pos = int(rng.integers(0, 2))
                nib[r, j] = 0x4 if pos == 0 else 0xE
                dense[r][2 * j + pos] = _kind_value(comp[r, j], etype)
            else:  # 2:4
                i0, i1 = PAIRS[int(rng.integers(0, 6))]
                nib[r, j] = i1 << 2 | i0
                dense[r][4 * j + i0] = _kind_value(comp[r, 2 * j], etype)
                dense[r][4 * j + i1] = _kind_value(comp[r, 2 * j + 1], etype)
    meta = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)  # threads not selected: noise
    for t in range(128):
        w, lane = t // 32, t % 32
        g = lane // 4
        word = 0
        if tf32:  # the f16 rule: the pair sp-sel names, thread 4g + 2 sel + p: chunk 4p + i of row g + 8h
            if (lane % 4) // 2 != sel:
                continue
            for h in range(2):
                for i in range(4):
                    word |= int(nib[16 * w + g + 8 * h, 4 * (lane % 2) + i]) << (16 * h + 4 * i)
        else:  # thread 4g + 2q + h: chunk 8q + i of row g + 8h, bits 4i
            q, h = (lane % 4) // 2, lane % 2
            for i in range(8):
                word |= int(nib[16 * w + g + 8 * h, 8 * q + i]) << (4 * i)
        meta[t] = word
    img = np.zeros(16384, np.uint8)
    _place_kind(img, 0, comp, sw, eb)
    _place_kind(img, 8192, bt, sw, eb)
    img[META_AT:META_AT + 512] = meta.view(np.uint8)
    if a_regs:  # the compressed A as a dense A fragment (p = 4/e elements a register): element s of register j of
        # thread t (warp w, lane l) is A(16w + l/4 + 8(j%2), p(l%4) + s + 4p(j/2))
        p = 4 // eb
        frag = np.zeros((128, 4), np.uint32)
        for t in range(128):
            w, lane = t // 32, t % 32
            for j in range(4):
                r = 16 * w + lane // 4 + 8 * (j % 2)
                for s_ in range(p):
                    frag[t, j] |= int(comp[r, p * (lane % 4) + s_ + 4 * p * (j // 2)]) << (8 * eb * s_)
        img[REGS_AT:REGS_AT + 2048] = frag.reshape(-1).view(np.uint8)
    integer = etype in ("s8", "u8")
    nr = n // 4 if acc == "f16" else n // 2
    if integer:
        c0 = rng.integers(-(2**20), 2**20, (128, nr)).astype(np.int32)
        if big_c:  # near the .s32 bounds
            c0[:, 0::2], c0[:, 1::2] = 2**31 - 5, -(2**31) + 5
        c0 = c0.view(np.uint32)
    elif acc == "f32":
        c0 = (rng.standard_normal((128, nr)) * 4).astype(np.float32)
    else:
        c0 = (rng.standard_normal((128, 2 * nr)) * 4).astype(np.float16).view(np.uint32)
    want = np.zeros((128, n // 2), np.uint32)
    for t in range(128):
        for i in range(n // 2):
            row, col = owner(t, i)
            prod = scale_a * sum(dense[row][k] * _kind_value(bt[col, k], btype) for k in range(kd))
            if integer:
                s_ = prod + (int(c0[t, i].view(np.int32)) if scale_d else 0)
                s_ = min(max(s_, -(2**31)), 2**31 - 1) if satfinite else (int(s_) + 2**31) % 2**32 - 2**31
                want[t, i] = np.int32(s_).view(np.uint32)
                continue
            c = Fraction(float(c0[t, i])) if acc == "f32" else Fraction(float(c0[t].view(np.float16)[i]))
            s_ = (c if scale_d else Fraction(0)) + prod
            if acc == "f32":
                want[t, i] = round_f32(s_) if s_ else 0
            else:
                want[t, i] = int(np.float16(round_once(s_, "f16")).view(np.uint16))
    shape = f"m64n{n}k{kd}"
    mma = f"wgmma.mma_async.sp.sync.aligned.{shape}.{'s32' if integer else acc}.{etype}.{btype}" \
        + (".satfinite" if satfinite else "")
    ptx = kernel(mma, nr, "s32" if integer else "f32" if acc == "f32" else "b32", "" if integer else f", {scale_a}, 1")
    lbo_a, sbo_a = (128, 8 * kc * eb) if sw == 0 else (0, 8 * sw)
    lbo_b, sbo_b = (128, 8 * kd * eb) if sw == 0 else (0, 8 * sw)
    return _launch_sparse(ptx, img, c0, sel, a_regs, sw, (lbo_a, sbo_a), (lbo_b, sbo_b), scale_d, acc, n, engine,
                          opt), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw,sel", [(8, 0, 0), (16, 128, 1), (16, 64, 1)])
def test_sparse_tf32_wgmma(n, sw, sel, engine, opt):
    """Both sparsity selectors (noise in the other pair's metadata), 3 swizzles, imm-scale-a -1 once."""
    got, want = run_kind("tf32", n, sw, sel, engine, opt, seed=n + sw + sel, scale_a=-1 if sw == 64 else 1)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("at,bt,acc,n,sw", [("e4m3", "e4m3", "f32", 8, 0), ("e5m2", "e4m3", "f32", 16, 128),
                                            ("e4m3", "e5m2", "f16", 16, 64)])
def test_sparse_fp8_wgmma(at, bt, acc, n, sw, engine, opt):
    """Mixed e4m3/e5m2, f32 and f16 accumulators, imm-scale-a -1 once."""
    got, want = run_kind(at, n, sw, 0, engine, opt, acc=acc, btype=bt, seed=n + sw, scale_a=-1 if n == 8 else 1)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("at,bt,n,sw,sat", [("s8", "s8", 8, 0, False), ("u8", "s8", 16, 128, False),
                                            ("s8", "u8", 16, 64, True), ("u8", "u8", 8, 0, True)])
def test_sparse_integer_wgmma(at, bt, n, sw, sat, engine, opt):
    """C near the .s32 bounds: wrapping, or clamped with .satfinite."""
    got, want = run_kind(at, n, sw, 0, engine, opt, btype=bt, seed=n + sw, satfinite=sat, big_c=True)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine,opt", ENGINES[::3])
@pytest.mark.parametrize("etype,acc", [("tf32", "f32"), ("e5m2", "f16"), ("s8", "f32")])
def test_sparse_kinds_with_a_in_registers_and_scale_d_false(etype, acc, engine, opt):
    got, want = run_kind(etype, 16, 0, 1 if etype == "tf32" else 0, engine, opt, acc=acc, seed=5, a_regs=True,
                         scale_d=False)
    assert np.array_equal(got, want)


_REFUSED = """.version 8.2
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    setp.ne.u64 %p1, %rd1, 0;
    LINE
    ret;
}
"""


@pytest.mark.parametrize("line, why", [
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd1, %r5, 2, %p1, 1, 1, 0, 0;",
     "sp-sel must be the constant 0 or 1"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd1, %r5, %r6, %p1, 1, 1, 0, 0;",
     "sp-sel must be the constant 0 or 1"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.f32.e4m3.e4m3 {%f1, %f2, %f3, %f4}, %rd1, %rd1, %r5, 1, %p1, 1, 1;",
     "sp-sel must be the constant 0 for 8-bit types"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd1, %r5, 1, %p1;",
     "sp-sel must be the constant 0 for 8-bit types"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd1, %r5, 0, %p1;",
     "is not supported yet"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k16.f16.tf32.tf32 {%r1, %r2}, %rd1, %rd1, %r5, 0, %p1, 1, 1;",
     "is not supported yet"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd1, %r5, 0, %p1, 1, 1, 0, "
     "0;", "takes d, a-desc, b-desc, scale-d, imm-scale-a and imm-scale-b"),
])
def test_sparse_forms_xcc_does_not_take_are_located_errors_in_check_and_compile(line, why):
    from xcc.check import check_sources
    from xcc.diagnostics import XccError
    from xcc.sources import Source

    ptx = _REFUSED.replace("LINE", line)
    where = next(k for k, t in enumerate(ptx.splitlines(), 1) if "wgmma" in t)
    errs = check_sources([Source(ptx, "sp.ptx")]).errors
    assert len(errs) == 1 and errs[0].loc.line == where and why in str(errs[0])
    with pytest.raises(XccError, match=why) as e:
        rt.load_module(ptx, device=rt.Device()).get_function("k")
    assert f":{where}:" in str(e.value)
