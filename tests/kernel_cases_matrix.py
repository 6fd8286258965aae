"""Kernel cases for the matrix examples (see :mod:`kernel_cases` for the format).

Imported only by ``kernel_cases`` (which adds ``MATRIX_CASES`` to its lists): import that module, not this one.

The tensor-core kernels run on both engines (the default): the xg1 backend compiles ``mma`` into HMMA/IMMA
halves, ``ldmatrix`` into LDSM and ``wmma.load``/``wmma.store`` into ordinary loads and stores, and the
IR-vs-ISA differential compares them bit for bit.  Float references are numpy's float64 products rounded to
float32 at the end; the kernels round to f32 after every k-step of 16 (8 for m16n8k8), so those cases
carry an ``atol`` well above that rounding (a few ulp of the sums) and far below any layout mistake
(which moves results by O(1)).  Integer cases are bit-exact.
"""

from __future__ import annotations

import numpy as np
from kernel_cases import SENTINEL_F32, SENTINEL_I32, KernelCase, Launch

_TRITON_SCRATCH = [np.uint64(0), np.uint64(0)]


def _f16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape).astype(np.float16)


def _matmul(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None) -> np.ndarray:
    """float64 A B (+ C), rounded to float32."""
    d = a.astype(np.float64) @ b.astype(np.float64)
    return (d if c is None else d + c.astype(np.float64)).astype(np.float32)


# ---------------------------------------------------------------- examples/gemm_tensorcore.cu
_M, _N, _K = 32, 48, 64


def _make_gemm_wmma(rng: np.random.Generator) -> Launch:
    """gemm_wmma_f16_f32: one warp per 16x16 tile of C = A B (row-major A and B, wmma m16n16k16)."""
    a, b = _f16(rng, _M, _K), _f16(rng, _K, _N)
    c = np.full(_M * _N + 8, SENTINEL_F32, np.float32)
    exp = c.copy()
    exp[:_M * _N] = _matmul(a, b).ravel()
    args = [np.int32(_M), np.int32(_N), np.int32(_K), a.ravel(), b.ravel(), c]
    return Launch((_N // 16, _M // 16, 1), (32, 1, 1), args, [5], {5: exp})


def _make_gemm_wmma_accumulate(rng: np.random.Generator) -> Launch:
    """gemm_wmma_accumulate: C = A B + C with B column-major (Bt[n*K + k]), C loaded with wmma.load.c."""
    a, b = _f16(rng, _M, _K), _f16(rng, _K, _N)
    c0 = rng.uniform(-4.0, 4.0, (_M, _N)).astype(np.float32)
    c = np.concatenate([c0.ravel(), np.full(8, SENTINEL_F32, np.float32)])
    exp = c.copy()
    exp[:_M * _N] = _matmul(a, b, c0).ravel()
    args = [np.int32(_M), np.int32(_N), np.int32(_K), a.ravel(), np.ascontiguousarray(b.T).ravel(), c]
    return Launch((_N // 16, _M // 16, 1), (32, 1, 1), args, [5], {5: exp})


def _make_gemm_mma(rng: np.random.Generator) -> Launch:
    """gemm_mma_m16n8k16: one warp per 16x8 tile; ldmatrix.x4 for A, ldmatrix.x2.trans for B, mma.sync."""
    a, b = _f16(rng, _M, _K), _f16(rng, _K, _N)
    c = np.full(_M * _N + 8, SENTINEL_F32, np.float32)
    exp = c.copy()
    exp[:_M * _N] = _matmul(a, b).ravel()
    args = [np.int32(_M), np.int32(_N), np.int32(_K), a.ravel(), b.ravel(), c]
    return Launch((_N // 8, _M // 16, 1), (32, 1, 1), args, [5], {5: exp})


# ---------------------------------------------------------------- examples/triton/matmul.sm_80.ptx
def _make_triton_matmul(rng: np.random.Generator) -> Launch:
    """matmul: C[M,N] f32 = A[M,K] f16 @ B[K,N] f16, 64x64x32 tiles, 4 warps (mma.sync m16n8k16 fed by
    ldmatrix); M, N, K not multiples of the tile so the masks matter (K = 48: the second K step is half
    masked).  The epilogue goes through 16 KiB of dynamic shared memory (the 64x64 f32 tile)."""
    m, n, k = 80, 72, 48
    a, b = _f16(rng, m, k), _f16(rng, k, n)
    c = np.full(m * n + 8, SENTINEL_F32, np.float32)
    exp = c.copy()
    exp[:m * n] = _matmul(a, b).ravel()
    args = [a.ravel(), b.ravel(), c, np.int32(m), np.int32(n), np.int32(k), np.int32(k), np.int32(1),
            np.int32(n), np.int32(1), np.int32(n), np.int32(1), *_TRITON_SCRATCH]
    return Launch((-(-m // 64), -(-n // 64), 1), (128, 1, 1), args, [2], {2: exp})


# ---------------------------------------------------------------- examples/mma_shapes.cu
# Every kernel: grid 2 x 64 threads = 4 warps, each on its own problem (so warps must not mix).
_WARPS, _GRID, _BLOCK = 4, (2, 1, 1), (64, 1, 1)


def _bf16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Random bf16 bit patterns (uint16): float32 values in [-1, 1) truncated to their top 16 bits."""
    f = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    return (f.view(np.uint32) >> 16).astype(np.uint16)


def _bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _make_mma_m16n8k8(rng: np.random.Generator) -> Launch:
    """mma_m16n8k8_f16: D (16x8 f32) = A (16x8 f16) B (8x8 f16) + C, per warp."""
    a, b = _f16(rng, _WARPS, 16, 8), _f16(rng, _WARPS, 8, 8)
    c = rng.uniform(-2.0, 2.0, (_WARPS, 16, 8)).astype(np.float32)
    d = np.full(_WARPS * 128 + 4, SENTINEL_F32, np.float32)
    exp = d.copy()
    exp[:_WARPS * 128] = np.stack([_matmul(a[w], b[w], c[w]) for w in range(_WARPS)]).ravel()
    return Launch(_GRID, _BLOCK, [a.view(np.uint16).ravel(), b.view(np.uint16).ravel(), c.ravel(), d], [3],
                  {3: exp})


def _make_mma_bf16(rng: np.random.Generator) -> Launch:
    """mma_m16n8k16_bf16: D (16x8 f32) = A (16x16 bf16) B (16x8 bf16) + C, per warp."""
    a, b = _bf16(rng, _WARPS, 16, 16), _bf16(rng, _WARPS, 16, 8)
    c = rng.uniform(-2.0, 2.0, (_WARPS, 16, 8)).astype(np.float32)
    d = np.full(_WARPS * 128 + 4, SENTINEL_F32, np.float32)
    exp = d.copy()
    exp[:_WARPS * 128] = np.stack([_matmul(_bf16_value(a[w]), _bf16_value(b[w]), c[w])
                                   for w in range(_WARPS)]).ravel()
    return Launch(_GRID, _BLOCK, [a.ravel(), b.ravel(), c.ravel(), d], [3], {3: exp})


def _make_mma_f16acc(rng: np.random.Generator) -> Launch:
    """mma_m16n8k16_f16acc: D (16x8 f16) = A (16x16 f16) B (16x8 f16) + C (f16), rounded once to f16."""
    a, b, c = _f16(rng, _WARPS, 16, 16), _f16(rng, _WARPS, 16, 8), _f16(rng, _WARPS, 16, 8)
    d = np.full(_WARPS * 128 + 4, np.float16(-7.5), np.float16)
    exp = d.copy()
    exp[:_WARPS * 128] = np.stack([(a[w].astype(np.float64) @ b[w] + c[w]).astype(np.float16)
                                   for w in range(_WARPS)]).ravel()
    args = [a.view(np.uint16).ravel(), b.view(np.uint16).ravel(), c.view(np.uint16).ravel(), d]
    return Launch(_GRID, _BLOCK, args, [3], {3: exp})


def _make_mma_s8(rng: np.random.Generator) -> Launch:
    """mma_m16n8k32_s8: D (16x8 s32) = A (16x32 s8) B (32x8 s8) + C, wrapping (Dw) and .satfinite (Ds);
    half of C sits within 2^19 of the s32 limits, so both overflow rules are exercised."""
    a = rng.integers(-128, 128, (_WARPS, 16, 32)).astype(np.int8)
    bt = rng.integers(-128, 128, (_WARPS, 8, 32)).astype(np.int8)  # B column-major: Bt[n, k]
    c = rng.integers(-(2**31), 2**31, (_WARPS, 16, 8)).astype(np.int64)
    edge = rng.random((_WARPS, 16, 8)) < 0.5
    c = np.where(edge, np.sign(c) * (2**31 - 1 - rng.integers(0, 2**19, c.shape)), c).astype(np.int32)
    exact = np.einsum("wmk,wnk->wmn", a.astype(np.int64), bt.astype(np.int64)) + c
    dw = np.full(_WARPS * 128 + 4, SENTINEL_I32, np.int32)
    ds, exp_w = dw.copy(), dw.copy()
    exp_s = dw.copy()
    exp_w[:_WARPS * 128] = (exact.ravel() & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    exp_s[:_WARPS * 128] = np.clip(exact, -(2**31), 2**31 - 1).ravel()
    args = [a.view(np.int32).ravel(), bt.view(np.int32).ravel(), c.ravel(), dw, ds]
    return Launch(_GRID, _BLOCK, args, [3, 4], {3: exp_w, 4: exp_s})


def _ldmatrix_reference(tile: np.ndarray) -> np.ndarray:
    """The 18 x 32 registers of ldmatrix_variants for one warp's 32x8 tile (PTX ISA 9.7.14.5.15): row r of
    matrix i comes from the address of lane 8i + r, i.e. tile row (13 (8i + r) + 7) % 32; lane t gets row
    t // 4, elements 2 (t % 4) and 2 (t % 4) + 1 (low half first); .trans: column t // 4 instead."""
    perm = (13 * np.arange(32) + 7) % 32
    mats = tile.astype(np.uint32)[perm].reshape(4, 8, 8)
    t = np.arange(32)
    r, c = t // 4, 2 * (t % 4)
    plain = [mats[i, r, c] | mats[i, r, c + 1] << 16 for i in range(4)]
    trans = [mats[i, c, r] | mats[i, c + 1, r] << 16 for i in range(4)]
    return np.stack(plain[:1] + plain[:2] + plain + trans[:1] + trans[:2] + trans + plain)


def _make_ldmatrix(rng: np.random.Generator) -> Launch:
    """ldmatrix_variants: .x1/.x2/.x4, with and without .trans, and .x4 through a generic address."""
    tiles = rng.integers(0, 2**16, (_WARPS, 32, 8)).astype(np.uint16)
    out = np.full(_WARPS * 18 * 32 + 4, SENTINEL_I32, np.int32).view(np.uint32)
    exp = out.copy()
    exp[:_WARPS * 18 * 32] = np.stack([_ldmatrix_reference(tiles[w]) for w in range(_WARPS)]).ravel()
    return Launch(_GRID, _BLOCK, [tiles.ravel(), out], [1], {1: exp})


def _make_wmma_f16acc(rng: np.random.Generator) -> Launch:
    """wmma_f16acc_col: per block, D = A B + C in f16 (wmma m16n16k16 .f16.f16), A column-major from shared
    memory, D stored column-major (stride 24) and copied out column-major."""
    p = 3
    a, b, c = _f16(rng, p, 16, 16), _f16(rng, p, 16, 16), _f16(rng, p, 16, 16)
    d = np.full(p * 256 + 4, np.float16(-7.5), np.float16)
    exp = d.copy()
    exp[:p * 256] = np.stack([(a[i].astype(np.float64) @ b[i] + c[i]).astype(np.float16).T
                              for i in range(p)]).ravel()
    args = [np.ascontiguousarray(a.transpose(0, 2, 1)).ravel(), b.ravel(), c.ravel(), d]
    return Launch((p, 1, 1), (32, 1, 1), args, [3], {3: exp})


def _e4m3_value(bits: np.ndarray) -> np.ndarray:
    """e4m3 bit patterns -> exact float64 (OCP FP8 v1.0: bias 7, subnormals m * 2^-9; no NaN codes used here)."""
    b = bits.astype(np.int64)
    e, m = (b >> 3) & 15, (b & 7).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(m, -9), np.ldexp(8.0 + m, e - 10))
    return np.where(b & 0x80, -mag, mag)


def _make_fp8_gemm(rng: np.random.Generator) -> Launch:
    """fp8_gemm: D (32x16 f32) = A (32x64 e4m3) B (64x16 e4m3), 4 warps.  The inputs' exponents lie in
    [2^-2, 2^2) (and zeros), so every partial sum is exact in f32 and the reference (exact products summed in
    float64) is bit-exact whatever the rounding points."""
    m, n, k = 32, 16, 64

    def fp8(*shape):
        b = (rng.integers(5, 9, shape) << 3) | rng.integers(0, 8, shape) | (rng.integers(0, 2, shape) << 7)
        return np.where(rng.random(shape) < 0.05, 0x80, b).astype(np.uint8)  # a few negative zeros

    a, bt = fp8(m, k), fp8(n, k)
    exp = (_e4m3_value(a) @ _e4m3_value(bt).T).astype(np.float32)
    d = np.full(m * n, SENTINEL_F32, np.float32)
    return Launch((1, 1, 1), (128, 1, 1), [np.int32(m), np.int32(n), np.int32(k), a.ravel(), bt.ravel(), d],
                  [5], {5: exp.ravel()})


MATRIX_CASES: list[KernelCase] = [
    KernelCase("mma_m16n8k8_f16", "mma_shapes", "mma_m16n8k8_f16", _make_mma_m16n8k8, atol=1e-6),
    KernelCase("mma_m16n8k16_bf16", "mma_shapes", "mma_m16n8k16_bf16", _make_mma_bf16, atol=1e-6),
    KernelCase("mma_m16n8k16_f16acc", "mma_shapes", "mma_m16n8k16_f16acc", _make_mma_f16acc, atol=1.6e-2),
    KernelCase("mma_m16n8k32_s8", "mma_shapes", "mma_m16n8k32_s8", _make_mma_s8),
    KernelCase("ldmatrix_variants", "mma_shapes", "ldmatrix_variants", _make_ldmatrix),
    KernelCase("wmma_f16acc_col", "mma_shapes", "_Z15wmma_f16acc_colPK6__halfS1_S1_PS_", _make_wmma_f16acc,
               atol=1.6e-2),
    KernelCase("gemm_wmma_f16_f32", "gemm_tensorcore", "gemm_wmma_f16_f32", _make_gemm_wmma, atol=2e-6),
    KernelCase("gemm_wmma_accumulate", "gemm_tensorcore", "_Z20gemm_wmma_accumulateiiiPK6__halfS1_Pf",
               _make_gemm_wmma_accumulate, atol=4e-6),
    KernelCase("gemm_mma_m16n8k16", "gemm_tensorcore", "_Z17gemm_mma_m16n8k16iiiPK6__halfS1_Pf", _make_gemm_mma,
               atol=2e-6),
    KernelCase("fp8_gemm", "fp8_gemm", "fp8_gemm", _make_fp8_gemm, ptx_file="fp8_gemm.sm_90a.ptx"),
    KernelCase("triton_matmul", "matmul", "matmul", _make_triton_matmul, atol=2e-6, shared_mem=16384,
               ptx_file="triton/matmul.sm_80.ptx"),
]
