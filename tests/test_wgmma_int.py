"""Integer ``wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite}`` (sm_90a) on both engines at
-O0 and -O3, against numpy: the operands placed in shared memory by the test from the PTX ISA's canonical
K-major layouts (9.7.15.5.1.2, 1-byte elements: 16 per 16-byte chunk; swizzled rows XOR their 16-byte chunk
number with address bits 7..), the exact integer products summed with the accumulator (or 0 when scale-d is
false), wrapped to 32 bits or saturated.  Nothing here calls xcc.semantics."""

from __future__ import annotations

import numpy as np
import pytest
from wgmma_harness import ENGINES, image, kernel, launch, owner


def run_int_wgmma(n, at, bt, sat, sw, engine, opt, scale_d=True, seed=0):
    rng = np.random.default_rng(seed)
    lo = {"s8": -128, "u8": 0}
    a = rng.integers(lo[at], lo[at] + 256, (64, 32))
    b = rng.integers(lo[bt], lo[bt] + 256, (n, 32))          # B^T: row = column n of B
    a[0], b[:4] = lo[at] + 255, lo[bt] + 255                  # the largest products
    img = image(a & 0xFF, b & 0xFF, sw, 1)
    nr = n // 2
    c0 = rng.integers(-(2**31), 2**31, (128, nr))
    c0[0, :4] = [2**31 - 1, -(2**31), 2**31 - 10, -(2**31) + 10]
    want = np.zeros((128, nr), np.int64)
    for t in range(128):
        for i in range(nr):
            row, col = owner(t, i)
            want[t, i] = int(a[row] @ b[col]) + (int(c0[t, i]) if scale_d else 0)
    want = np.clip(want, -(2**31), 2**31 - 1) if sat else (want + 2**31) % 2**32 - 2**31
    mma = f"wgmma.mma_async.sync.aligned.m64n{n}k32.s32.{at}.{bt}" + (".satfinite" if sat else "")
    got = launch(kernel(mma, n // 2, "s32"), img, c0.astype(np.int32), sw, engine, opt, scale_d)
    return got.view(np.int32), want


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
    img = image(ab, bb, sw, 1)
    nr = n // 2
    c0 = rng.integers(-(2**31), 2**31, (128, nr))
    c0[0, 0] = 2**31 - 1
    want = np.zeros((128, nr), np.int64)
    for t in range(128):
        for i in range(nr):
            row, col = owner(t, i)
            want[t, i] = int((a[row] & b[col]).sum()) + int(c0[t, i])
    want = (want + 2**31) % 2**32 - 2**31
    mma = f"wgmma.mma_async.sync.aligned.m64n{n}k256.s32.b1.b1.and.popc"
    got = launch(kernel(mma, n // 2, "s32"), img, c0.astype(np.int32), sw, engine, opt, True)
    return got.view(np.int32), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw", [(8, 0), (16, 128)])
def test_b1_wgmma_and_popc(n, sw, engine, opt):
    got, want = run_b1_wgmma(n, sw, engine, opt, seed=n + sw)
    np.testing.assert_array_equal(got, want)
