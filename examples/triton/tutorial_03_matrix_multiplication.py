"""Triton tutorial 03, matrix multiplication, on xcc.

Triton's ``python/tutorials/03-matrix-multiplication.py`` with torch replaced by numpy and xcc device
arrays: the kernel (grouped program ordering for L2 reuse, ``tl.dot`` over K blocks, optional fused
leaky ReLU, fp16 result) and the tutorial's CUDA autotuning configurations, fp8 ones included
(:func:`get_cuda_autotune_config`).  ``@triton.autotune`` times every configuration with the cycle model
(xcc's benchmarker), so :data:`matmul_kernel` runs with the configuration fastest on xg1.

:func:`make_matmul_kernel` builds the same kernel autotuned over another list: the tests use a shorter one
so that the ISA interpreter runs it in seconds.

    python examples/triton/tutorial_03_matrix_multiplication.py [M N K]
"""

# Triton's license (https://github.com/triton-lang/triton/blob/main/LICENSE), which covers the tutorial
# this file is ported from:
#
# Copyright 2018-2020 Philippe Tillet
# Copyright 2020-2022 OpenAI
#
# Permission is hereby granted, free of charge, to any person obtaining
# a copy of this software and associated documentation files
# (the "Software"), to deal in the Software without restriction,
# including without limitation the rights to use, copy, modify, merge,
# publish, distribute, sublicense, and/or sell copies of the Software,
# and to permit persons to whom the Software is furnished to do so,
# subject to the following conditions:
#
# The above copyright notice and this permission notice shall be
# included in all copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
# EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
# MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
# IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
# CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
# TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
# SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.

from __future__ import annotations

import sys

import numpy as np
import triton
import triton.language as tl

import xcc.triton
from xcc import runtime as rt
from xcc.diagnostics import LaunchError
from xcc.triton import arrays


def config(m: int, n: int, k: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                         num_stages=stages, num_warps=warps)


def get_cuda_autotune_config() -> list[triton.Config]:
    """The tutorial's CUDA configurations: (BLOCK_SIZE_M, N, K, num_stages, num_warps), GROUP_SIZE_M 8."""
    fp16 = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
            (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
    fp8 = [(128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (256, 64, 128, 4, 4), (64, 256, 128, 4, 4),
           (128, 128, 128, 4, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 32, 64, 4, 4)]
    return [config(*c) for c in fp16 + fp8]


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                   GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    """C = A @ B (fp32 accumulation, fp16 result): one BLOCK_SIZE_M x BLOCK_SIZE_N block of C per program,
    programs ordered in groups of GROUP_SIZE_M block rows so that neighbours share blocks of A and B."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def make_matmul_kernel(configs: list[triton.Config]):
    """The kernel, autotuned over ``configs`` per (M, N, K) as the tutorial's."""
    return triton.autotune(configs=configs, key=["M", "N", "K"])(_matmul_kernel)


matmul_kernel = make_matmul_kernel(get_cuda_autotune_config())


def matmul(a, b, activation: str = "", kernel=matmul_kernel):
    """a @ b for 2-D fp16 xcc device arrays, an fp16 device array (``activation``: "" or "leaky_relu")."""
    arrays.check(a, "a", dtype=np.float16, ndim=2)
    arrays.check(b, "b", dtype=np.float16, ndim=2)
    if a.shape[1] != b.shape[0]:
        raise LaunchError(f"incompatible dimensions: a is {a.shape}, b is {b.shape}")
    M, K = a.shape
    N = b.shape[1]
    c = rt.empty((M, N), np.float16, device=a.device)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

    kernel[grid](a, b, c, M, N, K, *arrays.strides(a), *arrays.strides(b), *arrays.strides(c),
                 ACTIVATION=activation)
    return c


def numpy_matmul(a: np.ndarray, b: np.ndarray, activation: str = "") -> np.ndarray:
    c = a.astype(np.float32) @ b.astype(np.float32)
    if activation == "leaky_relu":
        c = np.where(c >= 0, c, 0.01 * c)
    return c.astype(np.float16)


def main(M: int = 128, N: int = 128, K: int = 128, kernel=matmul_kernel) -> float:
    """The tutorial's check (fp16, atol 1e-2 against numpy's fp32 product) and the autotuner's choice."""
    xcc.triton.activate()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(rt.to_device(a), rt.to_device(b), kernel=kernel).copy_to_host()
    expected = numpy_matmul(a, b)
    error = float(np.max(np.abs(c.astype(np.float32) - expected.astype(np.float32))))
    print(f"The maximum difference between numpy and triton is {error}")
    print(f"best config on xg1: {kernel.best_config}")
    for cfg, ms in sorted(kernel.configs_timings.items(), key=lambda t: t[1][0]):
        print(f"  {ms[0] * 1e3:9.2f} us  {cfg}")
    return error


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
