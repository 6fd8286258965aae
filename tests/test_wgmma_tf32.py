"""TF32 ``wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`` (sm_90a) on both engines at -O0 and -O3, against an
independent reference: the operands placed in shared memory by the test from the PTX ISA's canonical K-major
layouts (9.7.15.5.1.2, 4-byte elements: 4 per 16-byte chunk; swizzled rows XOR their 16-byte chunk number
with address bits 7..), each element read as the upper 19 bits of its f32, the exact rational sum of the 8
products and the accumulator rounded once to f32 (xcc's documented rule, docs/semantics.md).  Nothing here
calls xcc.semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from xcc import runtime as rt

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]

KERNEL = r"""
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 img, .param .u64 out, .param .u64 da, .param .u64 db, .param .u32 sd)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<NR>;
    .shared .align 1024 .b8 smem[16384];
    ld.param.u64 %rd1, [img];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r6, smem;
COPY:
    mad.lo.u32 %r3, %r2, 128, %r1;
    shl.b32 %r4, %r3, 2;
    cvt.u64.u32 %rd3, %r4;
    add.s64 %rd5, %rd1, %rd3;
    ld.global.u32 %r5, [%rd5];
    add.u32 %r7, %r6, %r4;
    st.shared.u32 [%r7], %r5;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 32;
    @%p1 bra COPY;
    mul.wide.u32 %rd6, %r1, STRIDE;
    add.s64 %rd4, %rd2, %rd6;
LOADS
    ld.param.u64 %rd7, [da];
    ld.param.u64 %rd8, [db];
    shr.u32 %r8, %r6, 4;
    cvt.u64.u32 %rd9, %r8;
    add.s64 %rd7, %rd7, %rd9;
    add.s64 %rd8, %rd8, %rd9;
    ld.param.u32 %r9, [sd];
    setp.ne.u32 %p2, %r9, 0;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64nNNk8.f32.tf32.tf32 {REGS}, %rd7, %rd8, %p2, SCALES;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
STORES
    ret;
}
"""
"""128 threads copy a 16 KiB image (A at byte 0, B at 8192) into shared memory, load their N/2 accumulators from
out + 4 (N/2) t, run one tf32 wgmma from the descriptors da, db (offset by the shared array's address) and store
the accumulators back."""

_SW_MODE = {0: 0, 128: 1, 64: 2, 32: 3}


def kmajor_offset(r: int, k: int, sw: int, lbo: int, sbo: int) -> int:
    """Byte offset of element (r, k) (4-byte elements) in the canonical K-major layout, swizzled."""
    if sw == 0:
        return (r % 8) * 16 + (r // 8) * sbo + (k % 4) * 4 + (k // 4) * lbo
    lin = (r % 8) * sw + (r // 8) * sbo + 4 * k
    return lin ^ (((lin >> 7) & (sw // 16 - 1)) << 4)


def round_f32(x: Fraction) -> int:
    """Bits of ``x`` rounded to nearest even f32 (normal range)."""
    if x == 0:
        return 0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = e - 23
    s = a / Fraction(2) ** q
    n, rem = divmod(s.numerator, s.denominator)
    if 2 * rem > s.denominator or (2 * rem == s.denominator and n & 1):
        n += 1
    r = np.float32(float(Fraction(n) * Fraction(2) ** q))
    return int(np.float32(-r if x < 0 else r).view(np.uint32))


def tf32_value(bits: int) -> Fraction:
    return Fraction(float(np.uint32(bits & 0xFFFFE000).view(np.float32)))


def run_tf32_wgmma(n: int, sw: int, engine: str, opt: int, scale_d: bool = True, scale_a: int = 1,
                   scale_b: int = 1, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((64, 8)) * 2.0 ** rng.integers(-8, 9, (64, 8))).astype(np.float32).view(np.uint32)
    b = (rng.standard_normal((n, 8)) * 2.0 ** rng.integers(-8, 9, (n, 8))).astype(np.float32).view(np.uint32)
    lbo, sbo = (128, 256) if sw == 0 else (0, 8 * sw)
    img = np.zeros(4096, np.uint32)
    for r in range(64):
        for k in range(8):
            img[kmajor_offset(r, k, sw, lbo, sbo) // 4] = a[r, k]
    for c in range(n):
        for k in range(8):
            img[(8192 + kmajor_offset(c, k, sw, lbo, sbo)) // 4] = b[c, k]
    nr = n // 2
    c0 = (rng.standard_normal((128, nr)) * 4).astype(np.float32)
    want = np.zeros((128, nr), np.uint32)
    for t in range(128):
        for i in range(nr):
            row = 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2)
            col = 8 * (i // 4) + 2 * (t % 4) + i % 2
            acc = Fraction(float(c0[t, i])) if scale_d else Fraction(0)
            want[t, i] = round_f32(acc + sum(scale_a * tf32_value(int(a[row, k])) * scale_b * tf32_value(int(b[col, k]))
                                             for k in range(8)))
    ptx = (KERNEL.replace("NR", str(nr)).replace("STRIDE", str(4 * nr)).replace("NN", str(n))
           .replace("SCALES", f"{scale_a}, {scale_b}").replace("REGS", ", ".join(f"%f{i}" for i in range(nr)))
           .replace("LOADS", "\n".join(f"    ld.global.f32 %f{i}, [%rd4+{4 * i}];" for i in range(nr)))
           .replace("STORES", "\n".join(f"    st.global.f32 [%rd4+{4 * i}], %f{i};" for i in range(nr))))
    desc = lambda start: (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | _SW_MODE[sw] << 62  # noqa: E731
    dev = rt.Device()
    d_img, d_out = rt.to_device(img, dev), rt.to_device(c0.copy(), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (128, 1, 1), [d_img, d_out, np.uint64(desc(0)), np.uint64(desc(8192)),
                                                             np.uint32(scale_d)])
    return d_out.copy_to_host().view(np.uint32), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw", [(8, 0), (16, 128), (24, 64), (8, 32)])
def test_tf32_wgmma_matches_the_exact_reference(n, sw, engine, opt):
    got, want = run_tf32_wgmma(n, sw, engine, opt, seed=n + sw)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(t), int(i), hex(got[t, i]), hex(want[t, i])) for t, i in bad[:8]]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_tf32_wgmma_scale_d_and_negated_operands(engine):
    got, want = run_tf32_wgmma(8, 0, engine, 3, scale_d=False, scale_a=-1, seed=5)
    assert np.array_equal(got, want)
    got, want = run_tf32_wgmma(16, 128, engine, 0, scale_b=-1, seed=6)
    assert np.array_equal(got, want)
