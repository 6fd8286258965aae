"""Numba kernels launched on xcc: ``@cuda.jit`` as written for a GPU, after ``xcc.numba.activate()``.

    pip install -e '.[numba]'
    python examples/numba/run_vector_add.py

numba-cuda compiles each kernel to PTX with libNVVM; xcc compiles the PTX and runs it on the ISA
interpreter.  Host arrays passed to a kernel are copied in and back; device arrays
(``cuda.to_device``, ``cuda.device_array``) stay on the device until ``copy_to_host``.
"""

from __future__ import annotations

import warnings

import numpy as np

import xcc.numba

xcc.numba.activate()

from numba import cuda, float32  # noqa: E402
from numba.cuda.core.errors import NumbaPerformanceWarning  # noqa: E402

# The grids are small on purpose (the ISA interpreter runs every thread): no low-occupancy advice.
warnings.simplefilter("ignore", NumbaPerformanceWarning)


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def block_sum(inp, out):
    tile = cuda.shared.array(128, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = inp[i] if i < inp.size else float32(0.0)
    cuda.syncthreads()
    s = 64
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


def main() -> None:
    n = 1000
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)

    c = np.zeros_like(a)
    vector_add[(n + 127) // 128, 128](a, b, c)  # numpy arrays: copied to the device and back
    assert np.array_equal(c, a + b)

    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array_like(a)
    vector_add[(n + 127) // 128, 128](d_a, d_b, d_c)
    assert np.array_equal(d_c.copy_to_host(), a + b)

    blocks = (n + 127) // 128
    d_partial = cuda.device_array(blocks, np.float32)
    block_sum[blocks, 128](d_a, d_partial)
    total = d_partial.copy_to_host().sum()
    assert np.isclose(total, a.sum(), rtol=1e-4), (total, a.sum())

    print(f"vector_add: {n} elements match numpy; block_sum: {total:.4f} (numpy {a.sum():.4f})")
    print(f"device: {cuda.get_current_device().name}")


if __name__ == "__main__":
    main()
