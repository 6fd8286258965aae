"""Kernel cases for the async examples (see :mod:`kernel_cases` for the format).

Imported only by ``kernel_cases`` (which adds ``ASYNC_CASES`` to its lists): import that module, not this one.

All run on both engines: the xg1 backend compiles cp.async into LDGSTS, LDGDEPBAR and DEPBAR, the wgmma
(sm_90) Triton matmul into WGMMA.F32 (one per accumulator register) and WARPGROUP.ARRIVE / .COMMIT / .DEPBAR,
and the sm_90a mbarrier / cp.async.bulk pipeline (examples/hopper_pipeline.cu) into SYNCS.* and BLKCP; the
thread-block cluster example (examples/cluster_dsmem.cu: distributed shared memory, barrier.cluster) launches
with the cluster shape of its kernel's .reqnctapercluster.
"""

from __future__ import annotations

import numpy as np
from kernel_cases import SENTINEL_F32, KernelCase, Launch, _ceil_div

_TILE = 128
_TRITON_SCRATCH = [np.uint64(0), np.uint64(0)]  # Triton's global / profile scratch pointers: never touched


def _make_cp_async_pipeline(rng: np.random.Generator) -> Launch:
    """cp_async_pipeline: out[i] = in[i] * scale through a two-stage cp.async pipeline, tiles of 128 floats;
    n = 1000 (8 tiles, the last ragged) on 3 blocks, so each block loops over 2 or 3 tiles."""
    n, scale, grid = 1000, np.float32(1.75), 3
    x = rng.standard_normal(n + 9).astype(np.float32)
    out = np.full(n + 9, SENTINEL_F32, np.float32)
    exp = out.copy()
    exp[:n] = x[:n] * scale
    return Launch((grid, 1, 1), (_TILE, 1, 1), [np.int32(n), scale, x, out], [3], {3: exp})


def _make_cp_async_asm(rng: np.random.Generator) -> Launch:
    """cp_async_asm: the same with 16-byte cp.async.cg copies (tiles of 512 floats) and 4-byte cp.async.ca
    copies for the ragged tail: n = 2046 (4 tiles, the last 2 floats short of a 16-byte copy) on 3 blocks."""
    n, scale, grid = 2046, np.float32(-0.625), 3
    x = rng.standard_normal(n + 6).astype(np.float32)
    out = np.full(n + 6, SENTINEL_F32, np.float32)
    exp = out.copy()
    exp[:n] = x[:n] * scale
    return Launch((grid, 1, 1), (_TILE, 1, 1), [np.int32(n), scale, x, out], [3], {3: exp})


def _wgmma_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A @ B as the Triton kernel computes it with wgmma (xcc.semantics.wgmma's arithmetic): over K tiles
    of 32 padded with zeros, one m64n64k16 per 16 k, each adding its 16 products in k order in f64 to the f32
    accumulator and rounding once to f32."""
    m, k = a.shape
    kp = _ceil_div(k, 32) * 32
    a64, b64 = np.zeros((m, kp)), np.zeros((kp, b.shape[1]))
    a64[:, :k], b64[:k] = a, b
    acc = np.zeros((m, b.shape[1]), np.float32)
    for k0 in range(0, kp, 16):
        s = acc.astype(np.float64)
        for kk in range(k0, k0 + 16):
            s = s + a64[:, kk, None] * b64[None, kk, :]
        acc = s.astype(np.float32)
    return acc


def _triton_matmul(rng, m: int, n: int, k: int, exact: bool, a_col_major: bool, ldc: int) -> Launch:
    """matmul (examples/triton/matmul.sm_90.ptx): fp32 C[M, N] = fp16 A[M, K] @ fp16 B[K, N], one 64x64 tile
    of C per program (grid cdiv(M, 64) x cdiv(N, 64)), K loop in tiles of 32, masked tails; C rows ``ldc``
    floats apart (the gap and the tail keep the sentinel).  ``exact``: A and B are multiples of 1/8 in
    [-2, 2], so every sum is exact in f32 and the result is A @ B whatever the tensor core's summation order;
    otherwise normal samples, checked bit for bit against xcc's documented wgmma arithmetic."""
    if exact:
        a = (rng.integers(-16, 17, (m, k)) / 8).astype(np.float16)
        b = (rng.integers(-16, 17, (k, n)) / 8).astype(np.float16)
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        assert np.array_equal(want, _wgmma_reference(a, b))
    else:
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        want = _wgmma_reference(a, b)
    if a_col_major:  # A stored K x M: stride_am = 1, stride_ak = M
        a_buf, sam, sak = np.ascontiguousarray(a.T).reshape(-1), 1, m
    else:
        a_buf, sam, sak = a.reshape(-1), k, 1
    c = np.full(m * ldc + 5, SENTINEL_F32, np.float32)
    exp = c.copy()
    exp[:m * ldc].reshape(m, ldc)[:, :n] = want
    args = [a_buf, b.reshape(-1).copy(), c, np.int32(m), np.int32(n), np.int32(k), np.int32(sam), np.int32(sak),
            np.int32(n), np.int32(1), np.int32(ldc), np.int32(1), *_TRITON_SCRATCH]
    return Launch((_ceil_div(m, 64), _ceil_div(n, 64), 1), (128, 1, 1), args, [2], {2: exp})


def _make_triton_matmul_wgmma(rng: np.random.Generator) -> Launch:
    return _triton_matmul(rng, 100, 80, 72, exact=True, a_col_major=False, ldc=80)


def _make_triton_matmul_wgmma_random(rng: np.random.Generator) -> Launch:
    return _triton_matmul(rng, 64, 70, 45, exact=False, a_col_major=True, ldc=73)


def _make_hopper_rowsum(rng: np.random.Generator) -> Launch:
    """hopper_rowsum (examples/hopper_pipeline.cu): out[r] = the f32 sum of row r's 32 floats in column order
    (as the kernel adds them, starting from 0.0f); 10 tiles of 64 rows on 3 blocks of 96 threads, so each
    block's producer goes round the 3-stage ring more than once (parities 0 and 1 of every barrier)."""
    ntiles, cols = 10, 32
    x = rng.standard_normal((ntiles * 64, cols)).astype(np.float32)
    acc = np.zeros(ntiles * 64, np.float32)
    for j in range(cols):
        acc = (acc + x[:, j]).astype(np.float32)
    out = np.full(ntiles * 64 + 7, SENTINEL_F32, np.float32)
    exp = out.copy()
    exp[:ntiles * 64] = acc
    return Launch((3, 1, 1), (96, 1, 1), [x.reshape(-1), out, np.int32(ntiles)], [1], {1: exp})


def _core_matrix_tiles(x: np.ndarray) -> np.ndarray:
    """``x`` (R x K f16, R and K multiples of 64 and 16) as hopper_gemm's bulk copies expect it: 64 x 16 tiles
    ordered (row tile, k step), each in wgmma's K-major unswizzled core-matrix order, element (r, k) at half
    (r % 8) * 8 + (r / 8) * 128 + (k % 8) + (k / 8) * 64 (examples/hopper_pipeline.cu)."""
    rows, k = x.shape
    r, kk = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    at = (r % 8) * 8 + (r // 8) * 128 + (kk % 8) + (kk // 8) * 64
    out = np.zeros((rows // 64, k // 16, 64 * 16), np.float16)
    for mt in range(rows // 64):
        for kt in range(k // 16):
            out[mt, kt, at] = x[64 * mt:64 * mt + 64, 16 * kt:16 * kt + 16]
    return out.reshape(-1).view(np.uint16)


def _make_hopper_gemm(rng: np.random.Generator) -> Launch:
    """hopper_gemm (examples/hopper_pipeline.cu): C = A @ B, 128 x 128 x 64 (a 2 x 2 grid of 64 x 64 tiles, 4 k
    steps round the 3-stage ring), A and B multiples of 1/8 in [-2, 2] so every sum is exact in f32 whatever
    the order; C rows 131 floats apart (the gaps keep the sentinel)."""
    m, n, k, ldc = 128, 128, 64, 131
    a = (rng.integers(-16, 17, (m, k)) / 8).astype(np.float16)
    b = (rng.integers(-16, 17, (k, n)) / 8).astype(np.float16)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    c = np.full(m * ldc, SENTINEL_F32, np.float32)
    exp = c.copy()
    exp.reshape(m, ldc)[:, :n] = want
    args = [_core_matrix_tiles(a), _core_matrix_tiles(np.ascontiguousarray(b.T)), c, np.int32(k // 16), np.int32(ldc)]
    return Launch((n // 64, m // 64, 1), (160, 1, 1), args, [2], {2: exp})


_TRITON_SMEM = 16384  # the kernel's dynamic shared memory: the 64x64 f32 C tile of its epilogue

def _make_cluster_neighbour_sum(rng: np.random.Generator) -> Launch:
    """cluster_neighbour_sum (examples/cluster_dsmem.cu, clusters of 4 CTAs from its __cluster_dims__): out[i] =
    x[i] + the same position of the next CTA of the cluster (rank + 1 mod 4, read through distributed shared
    memory), an f32 add; info = {rank, 4, cluster, 1} per CTA; 12 blocks of 128 (3 clusters)."""
    nb = 12
    x = rng.standard_normal(nb * 128).astype(np.float32)
    xr = x.reshape(nb // 4, 4, 128)
    out = np.full(nb * 128, SENTINEL_F32, np.float32)
    info = np.zeros(nb * 4, np.uint32)
    want_info = np.array([[b % 4, 4, b // 4, 1] for b in range(nb)], np.uint32).reshape(-1)
    return Launch((nb, 1, 1), (128, 1, 1), [x, out, info], [1, 2],
                  {1: (xr + np.roll(xr, -1, axis=1)).reshape(-1), 2: want_info})


ASYNC_CASES: list[KernelCase] = [
    *(KernelCase(name + suffix, "async_copy", entry, make, ptx_file=f"async_copy.{arch}.ptx")
      for suffix, arch in (("", "sm_80"), ("_sm90", "sm_90"))
      for name, entry, make in (("cp_async_pipeline", "_Z17cp_async_pipelineifPKfPf", _make_cp_async_pipeline),
                                ("cp_async_asm", "cp_async_asm", _make_cp_async_asm))),
    KernelCase("hopper_rowsum", "hopper_pipeline", "hopper_rowsum", _make_hopper_rowsum,
               ptx_file="hopper_pipeline.sm_90a.ptx"),
    KernelCase("hopper_gemm", "hopper_pipeline", "hopper_gemm", _make_hopper_gemm,
               ptx_file="hopper_pipeline.sm_90a.ptx"),
    KernelCase("cluster_neighbour_sum", "cluster_dsmem", "cluster_neighbour_sum", _make_cluster_neighbour_sum,
               ptx_file="cluster_dsmem.sm_90a.ptx"),
    KernelCase("triton_matmul_wgmma", "matmul", "matmul", _make_triton_matmul_wgmma,
               ptx_file="triton/matmul.sm_90.ptx", shared_mem=_TRITON_SMEM),
    KernelCase("triton_matmul_wgmma_random", "matmul", "matmul", _make_triton_matmul_wgmma_random,
               ptx_file="triton/matmul.sm_90.ptx", shared_mem=_TRITON_SMEM),
]
