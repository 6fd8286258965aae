"""Triton tutorial 02, fused softmax, on xcc.

Triton's ``python/tutorials/02-fused-softmax.py`` with torch replaced by numpy and xcc device arrays.  The
kernel is the tutorial's persistent one (each program walks rows ``tl.range(start, n_rows, step,
num_stages)``); the wrapper, as the tutorial's, compiles it ahead of the launch (``warmup``), reads its
registers and shared memory, and sizes the grid by the occupancy they allow on the device Triton reports
(xg1: 132 SMs, 64K registers, 227 KiB shared memory per block).

    python examples/triton/tutorial_02_fused_softmax.py [rows] [cols]
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
from triton.runtime import driver

import xcc.triton
from xcc import runtime as rt
from xcc.triton import arrays


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    """Row-wise softmax, numerically stable: each program takes rows start, start + step, ..."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax(x):
    """Row-wise softmax of a 2-D float32 xcc device array, as a new device array."""
    arrays.check(x, "x", dtype=np.float32, ndim=2)
    properties = driver.active.utils.get_device_properties(driver.active.get_current_device())
    n_rows, n_cols = x.shape
    block_size = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if properties["max_shared_mem"] > 200000 else 2
    y = arrays.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, arrays.stride(x, 0), arrays.stride(y, 0), n_rows, n_cols,
                                   BLOCK_SIZE=block_size, num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    occupancy = properties["max_num_regs"] // (kernel.n_regs * properties["warpSize"] * num_warps)
    if kernel.metadata.shared:
        occupancy = min(occupancy, properties["max_shared_mem"] // kernel.metadata.shared)
    num_programs = min(properties["multiprocessor_count"] * occupancy, n_rows)
    kernel[(num_programs, 1, 1)](y, x, arrays.stride(x, 0), arrays.stride(y, 0), n_rows, n_cols,
                                 block_size, num_stages)
    return y


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def main(n_rows: int = 1823, n_cols: int = 781) -> float:
    """The tutorial's check (an irregular shape, to exercise the masks) and one benchmark point."""
    xcc.triton.activate()
    x = np.random.default_rng(0).standard_normal((n_rows, n_cols)).astype(np.float32)
    dx = rt.to_device(x)
    error = float(np.max(np.abs(softmax(dx).copy_to_host() - numpy_softmax(x))))
    print(f"The maximum difference between numpy and triton is {error}")
    ms = triton.testing.do_bench(lambda: softmax(dx))
    print(f"{n_rows}x{n_cols}: {ms * 1e3:.2f} us modelled on xg1, {2 * x.nbytes * 1e-9 / (ms * 1e-3):.0f} GB/s")
    return error


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
