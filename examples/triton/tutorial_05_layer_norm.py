"""Triton tutorial 05, layer normalization (the forward pass), on xcc.

Triton's ``python/tutorials/05-layer-norm.py``, its fused forward kernel, with torch replaced by numpy and
xcc device arrays: one program per row computes the row's mean and reciprocal standard deviation in fp32
(stored for a backward pass) and writes ``(x - mean) * rstd * w + b``, in blocks of BLOCK_SIZE columns.

    python examples/triton/tutorial_05_layer_norm.py [M N]
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


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """Y[row] = (X[row] - mean) * rstd * W + B for row = the program id; Mean[row], Rstd[row] kept."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def layer_norm(x, weight, bias, eps: float = 1e-5):
    """Layer norm over the last dimension of ``x`` (fp16 or fp32 device arrays; ``weight`` and ``bias`` of
    the last dimension's length): ``(y, mean, rstd)``, ``mean`` and ``rstd`` fp32 per row."""
    arrays.check(x, "x", dtype=(np.float16, np.float32))
    arrays.check(weight, "weight", dtype=x.dtype, ndim=1)
    arrays.check(bias, "bias", dtype=x.dtype, ndim=1)
    N = x.shape[-1]
    M = x.size // N
    if weight.shape != (N,) or bias.shape != (N,):
        raise LaunchError(f"weight {weight.shape} and bias {bias.shape} must both be ({N},)")
    y = arrays.empty_like(x)
    mean = rt.empty((M,), np.float32, device=x.device)
    rstd = rt.empty((M,), np.float32, device=x.device)
    max_fused_size = 65536 // x.dtype.itemsize  # less than 64 KB per feature
    block_size = min(max_fused_size, triton.next_power_of_2(N))
    if N > block_size:
        raise LaunchError("This layer norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(block_size // 256, 1), 8)
    row_stride = N  # x is contiguous: its rows, as an (M, N) array, are N apart
    _layer_norm_fwd_fused[(M,)](x, y, weight, bias, mean, rstd, row_stride, N, eps,
                                BLOCK_SIZE=block_size, num_warps=num_warps, num_ctas=1)
    return y, mean, rstd


def numpy_layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    x32 = x.astype(np.float32)
    mean = x32.mean(axis=-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x32 - mean) / np.sqrt(var + eps) * weight.astype(np.float32) + bias.astype(np.float32)
    return y.astype(x.dtype)


def main(M: int = 1151, N: int = 8192, dtype=np.float16, eps: float = 1e-5) -> float:
    """The tutorial's forward check (fp16 input, weight and bias) and one benchmark point."""
    xcc.triton.activate()
    rng = np.random.default_rng(0)
    weight = rng.random(N).astype(dtype)
    bias = rng.random(N).astype(dtype)
    x = (-2.3 + 0.5 * rng.standard_normal((M, N))).astype(dtype)
    dx, dw, db = rt.to_device(x), rt.to_device(weight), rt.to_device(bias)
    y = layer_norm(dx, dw, db, eps)[0].copy_to_host()
    error = float(np.max(np.abs(y.astype(np.float32) - numpy_layer_norm(x, weight, bias, eps).astype(np.float32))))
    print(f"The maximum difference between numpy and triton is {error}")
    ms = triton.testing.do_bench(lambda: layer_norm(dx, dw, db, eps))
    print(f"{M}x{N}: {ms * 1e3:.2f} us modelled on xg1, {2 * x.nbytes * 1e-9 / (ms * 1e-3):.0f} GB/s")
    return error


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
