"""Issue 19's last refused forms: ``sqrt.{rz,rm,rp}{.ftz}.f32`` (exact directed rounding), ``testp`` with no
test named (ptxas 13.0 emits nothing for it: the predicate keeps its value), ``wgmma.mma_async`` with an ``.f16``
accumulator (f16 and FP8 inputs), ``alloca``/``stacksave``/``stackrestore`` (xcc.ir.alloca); run on both engines at
-O0 and -O3.  Expected values come from exact integer square roots (``math.isqrt``), exact Fraction sums rounded
once, or Python integers, never xcc.semantics."""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_fp8_mma import _finite_bytes, _mul, _neg, acc_value, dot, fp8
from test_isa_gaps import ENGINES
from wgmma_harness import image, kernel, launch, owner

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import KernelFault
from xcc.sources import Source

SQRT = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    sqrt.MODE.f32 %f2, %f1;
    st.global.f32 [%rd5], %f2;
    ret;
}
"""
CANONICAL_NAN = 0x7FFFFFFF  # docs/semantics.md: an f32 NaN result is the canonical NaN


def _f32_value(bits: int) -> Fraction:
    e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    v = Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else Fraction((1 << 23) | m, 1 << 23) * Fraction(2) ** (e - 127)
    return -v if bits >> 31 else v


def _sqrt_ref(bits: int, rnd: str, ftz: bool) -> int:
    """The f32 result bits of sqrt.rnd{.ftz}.f32 from an exact integer square root."""
    e = (bits >> 23) & 0xFF
    if ftz and e == 0:
        bits &= 0x80000000
    if (bits & 0x7FFFFFFF) > 0x7F800000 or (bits >> 31 and bits & 0x7FFFFFFF):
        return CANONICAL_NAN  # NaN, or a negative non-zero (-inf included)
    if bits & 0x7FFFFFFF in (0, 0x7F800000):
        return bits  # +-0 and +inf are their own roots
    x = _f32_value(bits)
    # root in [2^k, 2^(k+1)) -> 24 significant bits: q = floor(sqrt(x) * 2^(23-k)) exactly by isqrt
    k = (x.numerator.bit_length() - x.denominator.bit_length()) // 2 + 1
    while Fraction(2) ** (2 * k) > x:
        k -= 1
    s = Fraction(2) ** (2 * (23 - k)) * x  # sqrt(x) * 2^(23-k) = sqrt(s)
    q = math.isqrt(s.numerator // s.denominator)
    exact = Fraction(q * q) == s
    if not exact and rnd == "rp":
        q += 1
    val = Fraction(q) * Fraction(2) ** (k - 23)
    return struct.unpack("<I", struct.pack("<f", float(val)))[0]  # val is an f32 (q <= 2^24)


EDGES = [0x00000000, 0x80000000, 0x00000001, 0x00000002, 0x00000003, 0x007FFFFF, 0x00400000, 0x80000001,
         0x807FFFFF, 0x00800000, 0x00800001, 0x3F800000, 0x3F800001, 0x40000000, 0x40400000, 0x3FFFFFFF,
         0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0xBF800000,
         0x4B000001, 0x3E800000, 0x0000FFFF, 0x41C80000]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["rz", "rm", "rp", "rz.ftz", "rm.ftz", "rp.ftz"])
def test_sqrt_directed_f32(engine, opt, mode):
    rng = np.random.default_rng(5)
    vals = EDGES + [int(v) for v in rng.integers(0, 1 << 32, 100, dtype=np.uint64)]
    n = len(vals)
    dev = rt.Device()
    a = rt.to_device(np.array(vals, np.uint32), dev)
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module(SQRT.replace("MODE", mode), device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (n, 1, 1), [a, out])
    rnd, ftz = mode.split(".")[0], mode.endswith("ftz")
    got = [int(v) for v in out.copy_to_host()]
    want = [_sqrt_ref(v, rnd, ftz) for v in vals]
    bad = [(hex(v), hex(g), hex(w)) for v, g, w in zip(vals, got, want) if g != w]
    assert not bad, bad[:8]


TESTP = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .f32 %f<2>;
    .reg .f64 %fd<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 1;
    setp.lt.u32 %p2, %r1, 5;
    mov.f32 %f1, 0f7FC00000;
    cvt.f64.f32 %fd1, %f1;
    testp.f32 %p1, %f1;
    testp.f64 %p2, %fd1;
    selp.u32 %r3, 1, 0, %p1;
    selp.u32 %r2, 2, 0, %p2;
    add.u32 %r3, %r3, %r2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_testp_without_a_test_leaves_the_predicate(engine, opt):
    """testp.f32/.f64 with no test named compile to nothing (ptxas 13.0's cubin equals the one without the line):
    p1 = odd thread, p2 = thread < 5 survive a NaN operand that every named test would classify."""
    n = 32
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module(TESTP, device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (n, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [(i & 1) + (2 if i < 5 else 0) for i in range(n)]


# ----------------------------------------------------------------------------- wgmma with an .f16 accumulator
def _f16(bits: int, fmt: str = "f16"):
    """An f16 bit pattern -> the kinds test_fp8_mma.fp8 gives (Fraction, 'nan', '+inf'/'-inf', '-0')."""
    return acc_value(bits, "f16")


def run_f16acc_wgmma(n: int, at: str, bt: str, sw: int, engine: str, opt: int, scale_d: bool = True,
                     scale_a: int = 1, scale_b: int = 1, seed: int = 0):
    """One m64nNk16 .f16.f16.f16 or m64nNk32 .f16.FP8.FP8 wgmma, K-major with swizzle ``sw``; (got, want) words."""
    rng = np.random.default_rng(seed)
    e = 2 if at == "f16" else 1
    k = 32 // e
    if e == 2:  # small f16 values (exact products), a few edge values
        a = (rng.integers(-64, 65, (64, k)) / 16).astype(np.float16).view(np.uint16)
        b = (rng.integers(-64, 65, (n, k)) / 16).astype(np.float16).view(np.uint16)
        a[0, :4] = [0x8000, 0x0001, 0x7BFF, 0x8001]  # -0, the smallest subnormal, the largest, -subnormal
        b[1, 5], b[2, 0] = 0x7E00, 0x7C00            # a NaN in column 1, +inf in column 2 of B
        val = _f16
    else:
        a = _finite_bytes(rng, at, 64 * k).reshape(64, k).astype(np.uint8)
        b = _finite_bytes(rng, bt, n * k).reshape(n, k).astype(np.uint8)
        a[0, :4] = [0x80, 0x01, 0x7E if at == "e4m3" else 0x7B, 0x81]
        b[1, 5] = 0x7F
        val = fp8
    img = image(a, b, sw, e)
    nr = n // 4
    c0 = (rng.integers(-64, 65, (128, 2 * nr)) / 4).astype(np.float16)
    c0[0, 0], c0[1, 1] = np.float16(65504), np.float16(6e-8)  # the largest f16, a subnormal
    want = np.zeros((128, nr), np.uint32)
    for t in range(128):
        for i in range(2 * nr):
            row, col = owner(t, i)
            acc = _f16(int(c0[t, i].view(np.uint16))) if scale_d else Fraction(0)
            prods = [_mul(_neg(val(int(a[row, kk]), at), scale_a), _neg(val(int(b[col, kk]), bt), scale_b))
                     for kk in range(k)]
            want[t, i // 2] |= dot([acc] + prods, "f16") << (16 * (i % 2))
    trans = ", 0, 0" if e == 2 else ""
    ptx = kernel(f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f16.{at}.{bt}", nr, "b32", f", {scale_a}, {scale_b}{trans}")
    return launch(ptx, img, c0.view(np.uint32).copy(), sw, engine, opt, scale_d), want, ptx


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("at, bt, n, sw", [("f16", "f16", 8, 0), ("f16", "f16", 16, 128), ("e4m3", "e5m2", 8, 0),
                                           ("e5m2", "e4m3", 16, 64), ("e4m3", "e4m3", 8, 32)])
def test_wgmma_f16_accumulator_matches_the_exact_reference(at, bt, n, sw, engine, opt):
    got, want, _ = run_f16acc_wgmma(n, at, bt, sw, engine, opt, seed=n + sw)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(t), int(i), hex(got[t, i]), hex(want[t, i])) for t, i in bad[:8]]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_wgmma_f16_accumulator_scale_d_and_negation(engine):
    got, want, _ = run_f16acc_wgmma(8, "f16", "f16", 0, engine, 3, scale_d=False, scale_a=-1, seed=3)
    assert np.array_equal(got, want)
    got, want, _ = run_f16acc_wgmma(8, "e5m2", "e5m2", 128, engine, 0, scale_b=-1, seed=4)
    assert np.array_equal(got, want)


def test_wgmma_f16_accumulator_kernels_are_ptx():
    """The generated kernels pass xcc check (ptxas 13.0 accepts them too: checked when the test was written)."""
    ptx = run_f16acc_wgmma(8, "f16", "f16", 0, "ir", 0)[2]
    assert not check_sources([Source(ptx, "w.ptx")]).errors
    bad = ptx.replace("k16.f16.f16.f16", "k16.f16.bf16.bf16")
    errors = check_sources([Source(bad, "w.ptx")]).errors
    assert errors and errors[0].loc is not None, errors


# ----------------------------------------------------------------------------- alloca, stacksave, stackrestore
DATA = Path(__file__).parent / "data" / "runtime"


def _alloca_run(engine: str, opt: int, n: int, threads: int = 32):
    dev = rt.Device()
    out = rt.to_device(np.zeros(4 * threads, np.uint32), dev)
    m = rt.load_module((DATA / "alloca_sum.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("alloca_sum").launch((1, 1, 1), (threads, 1, 1), [out, out, np.uint32(n)])
    return out.copy_to_host().reshape(threads, 4)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_alloca_runtime_sized_array_and_stacksave_loop(engine, opt):
    """alloca_sum.ptx (ptxas-clean): thread t allocas m = n + t words (align 16), fills a[i] = 3 i + t and sums
    them; then 200 times stacksave, alloca.u32 of i + 1 bytes, a store and load through it, stackrestore; the
    stack pointer ends 4 m bytes past the array (the loop's allocations all released)."""
    n = 37
    got = _alloca_run(engine, opt, n)
    t = np.arange(32, dtype=np.int64)
    m = n + t
    want = np.stack([3 * m * (m - 1) // 2 + t * m, np.full(32, sum(range(200))), 4 * m, m], axis=1)
    assert np.array_equal(got.astype(np.int64), want), (got[:3], want[:3])


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_alloca_overflow_is_a_located_fault(engine):
    """2,000 + t words do not fit the 4,096-byte arena: the kernel stops at the first alloca's line (15)."""
    with pytest.raises(KernelFault, match=r"line 15 \(.*alloca: stack overflow") as e:
        _alloca_run(engine, 0, 2000)
    assert "32 threads faulted" in str(e.value), e.value


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_alloca_in_a_called_function(engine, opt):
    """alloca_func.ptx (ptxas-clean): a .func allocas n = t + 5 words in its own frame (released at its return),
    fills and sums them: out[t] = n (n - 1) / 2."""
    dev = rt.Device()
    out = rt.to_device(np.zeros(32, np.uint32), dev)
    m = rt.load_module((DATA / "alloca_func.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (32, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [(t + 5) * (t + 4) // 2 for t in range(32)]
