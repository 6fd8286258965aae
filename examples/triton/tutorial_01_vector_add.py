"""Triton tutorial 01, vector addition, on xcc.

Triton's ``python/tutorials/01-vector-add.py`` with torch replaced by numpy and xcc device arrays: the
kernel is the tutorial's, the host wrapper allocates with :mod:`xcc.triton.arrays`, and the benchmark's
times are the cycle model's (``triton.testing.do_bench`` after :func:`xcc.triton.activate`).

    python examples/triton/tutorial_01_vector_add.py [size]
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
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """output[i] = x[i] + y[i]: each program adds one block of BLOCK_SIZE elements, the tail masked."""
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y):
    """x + y for two xcc device arrays of one shape and float dtype, as a new device array."""
    arrays.check(x, "x", dtype=(np.float16, np.float32, np.float64))
    arrays.check(y, "y", dtype=x.dtype)
    if x.shape != y.shape:
        raise LaunchError(f"x and y differ in shape: {x.shape} and {y.shape}")
    output = arrays.empty_like(x)
    n_elements = x.size

    def grid(meta):
        return (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)

    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def main(size: int = 98432) -> float:
    """The tutorial's check and one point of its benchmark; returns the largest error."""
    xcc.triton.activate()
    rng = np.random.default_rng(0)
    x, y = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
    dx, dy = rt.to_device(x), rt.to_device(y)
    error = float(np.max(np.abs(add(dx, dy).copy_to_host() - (x + y))))
    print(f"The maximum difference between numpy and triton is {error}")
    ms = triton.testing.do_bench(lambda: add(dx, dy))
    print(f"size {size}: {ms * 1e3:.2f} us modelled on xg1, {3 * x.nbytes * 1e-9 / (ms * 1e-3):.0f} GB/s")
    return error


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
