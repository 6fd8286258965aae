"""Integer ``wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite}`` (sm_90a) on both engines at
-O0 and -O3, against numpy: the operands placed in shared memory by the test from the PTX ISA's canonical
K-major layouts (9.7.15.5.1.2, 1-byte elements: 16 per 16-byte chunk; swizzled rows XOR their 16-byte chunk
number with address bits 7..), the exact integer products summed with the accumulator (or 0 when scale-d is
false), wrapped to 32 bits or saturated.  Nothing here calls xcc.semantics."""

from __future__ import annotations

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
    .reg .s32 %s<NR>;
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
    wgmma.mma_async.sync.aligned.m64nNNk32.s32.@A@.@B@ {REGS}, %rd7, %rd8, %p2;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
STORES
    ret;
}
"""
"""128 threads copy a 16 KiB image (A at byte 0, B at 8192) into shared memory, load their N/2 accumulators from
out + 4 (N/2) t, run one integer wgmma from the descriptors da, db (offset by the shared array's address) and
store the accumulators back."""

_SW_MODE = {0: 0, 128: 1, 64: 2, 32: 3}


def kmajor_offset(r: int, k: int, sw: int, lbo: int, sbo: int) -> int:
    if sw == 0:
        return (r % 8) * 16 + (r // 8) * sbo + (k % 16) + (k // 16) * lbo
    lin = (r % 8) * sw + (r // 8) * sbo + k
    return lin ^ (((lin >> 7) & (sw // 16 - 1)) << 4)


def run_int_wgmma(n, at, bt, sat, sw, engine, opt, scale_d=True, seed=0):
    rng = np.random.default_rng(seed)
    lo = {"s8": -128, "u8": 0}
    a = rng.integers(lo[at], lo[at] + 256, (64, 32))
    b = rng.integers(lo[bt], lo[bt] + 256, (n, 32))          # B^T: row = column n of B
    a[0], b[:4] = lo[at] + 255, lo[bt] + 255                  # the largest products
    lbo, sbo = (128, 256) if sw == 0 else (0, 8 * sw)
    img = np.zeros(16384, np.uint8)
    for r in range(64):
        for k in range(32):
            img[kmajor_offset(r, k, sw, lbo, sbo)] = a[r, k] & 0xFF
    for c in range(n):
        for k in range(32):
            img[8192 + kmajor_offset(c, k, sw, lbo, sbo)] = b[c, k] & 0xFF
    nr = n // 2
    c0 = rng.integers(-(2**31), 2**31, (128, nr))
    c0[0, :4] = [2**31 - 1, -(2**31), 2**31 - 10, -(2**31) + 10]
    want = np.zeros((128, nr), np.int64)
    for t in range(128):
        for i in range(nr):
            row = 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2)
            col = 8 * (i // 4) + 2 * (t % 4) + i % 2
            want[t, i] = int(a[row] @ b[col]) + (int(c0[t, i]) if scale_d else 0)
    want = np.clip(want, -(2**31), 2**31 - 1) if sat else (want + 2**31) % 2**32 - 2**31
    ptx = (KERNEL.replace("NR", str(nr)).replace("STRIDE", str(4 * nr)).replace("NN", str(n))
           .replace("@A@", at).replace("@B@", bt + (".satfinite" if sat else ""))
           .replace("REGS", ", ".join(f"%s{i}" for i in range(nr)))
           .replace("LOADS", "\n".join(f"    ld.global.s32 %s{i}, [%rd4+{4 * i}];" for i in range(nr)))
           .replace("STORES", "\n".join(f"    st.global.s32 [%rd4+{4 * i}], %s{i};" for i in range(nr))))
    desc = lambda start: (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | _SW_MODE[sw] << 62  # noqa: E731
    dev = rt.Device()
    d_img, d_out = rt.to_device(img.view(np.uint32), dev), rt.to_device(c0.astype(np.int32), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (128, 1, 1), [d_img, d_out, np.uint64(desc(0)), np.uint64(desc(8192)),
                                                             np.uint32(scale_d)])
    return d_out.copy_to_host().view(np.int32).reshape(128, nr), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,at,bt,sat,sw", [(8, "s8", "s8", False, 0), (16, "u8", "s8", True, 128),
                                            (24, "s8", "u8", True, 64), (8, "u8", "u8", False, 32)])
def test_int_wgmma_matches_numpy(n, at, bt, sat, sw, engine, opt):
    got, want = run_int_wgmma(n, at, bt, sat, sw, engine, opt, seed=n + sw)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_int_wgmma_scale_d_false(engine):
    got, want = run_int_wgmma(8, "s8", "u8", True, 0, engine, 3, scale_d=False, seed=5)
    np.testing.assert_array_equal(got, want)


def run_b1_wgmma(n, sw, engine, opt, seed=0):
    """``m64nNk256.s32.b1.b1.and.popc``: A (64 x 256 bits) and B^T (N x 256 bits) stored as 32 bytes a row in the
    byte layouts, element 8j + i at bit i of byte j; D = popc(A & B) + C, wrapping."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, (64, 256)), rng.integers(0, 2, (n, 256))
    a[0], b[0] = 1, 1
    ab = np.packbits(a.astype(np.uint8), axis=1, bitorder="little")
    bb = np.packbits(b.astype(np.uint8), axis=1, bitorder="little")
    lbo, sbo = (128, 256) if sw == 0 else (0, 8 * sw)
    img = np.zeros(16384, np.uint8)
    for r in range(64):
        for k in range(32):
            img[kmajor_offset(r, k, sw, lbo, sbo)] = ab[r, k]
    for c in range(n):
        for k in range(32):
            img[8192 + kmajor_offset(c, k, sw, lbo, sbo)] = bb[c, k]
    nr = n // 2
    c0 = rng.integers(-(2**31), 2**31, (128, nr))
    c0[0, 0] = 2**31 - 1
    want = np.zeros((128, nr), np.int64)
    for t in range(128):
        for i in range(nr):
            row = 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2)
            col = 8 * (i // 4) + 2 * (t % 4) + i % 2
            want[t, i] = int((a[row] & b[col]).sum()) + int(c0[t, i])
    want = (want + 2**31) % 2**32 - 2**31
    ptx = (KERNEL.replace("NR", str(nr)).replace("STRIDE", str(4 * nr)).replace("NN", str(n))
           .replace("k32.s32.@A@.@B@", "k256.s32.b1.b1.and.popc")
           .replace("REGS", ", ".join(f"%s{i}" for i in range(nr)))
           .replace("LOADS", "\n".join(f"    ld.global.s32 %s{i}, [%rd4+{4 * i}];" for i in range(nr)))
           .replace("STORES", "\n".join(f"    st.global.s32 [%rd4+{4 * i}], %s{i};" for i in range(nr))))
    desc = lambda start: (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | _SW_MODE[sw] << 62  # noqa: E731
    dev = rt.Device()
    d_img, d_out = rt.to_device(img.view(np.uint32), dev), rt.to_device(c0.astype(np.int32), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (128, 1, 1), [d_img, d_out, np.uint64(desc(0)), np.uint64(desc(8192)),
                                                             np.uint32(1)])
    return d_out.copy_to_host().view(np.int32).reshape(128, nr), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw", [(8, 0), (16, 128)])
def test_b1_wgmma_and_popc(n, sw, engine, opt):
    got, want = run_b1_wgmma(n, sw, engine, opt, seed=n + sw)
    np.testing.assert_array_equal(got, want)
