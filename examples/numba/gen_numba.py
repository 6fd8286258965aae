"""Generate the Numba PTX corpus in ``examples/numba/`` without a GPU.

Each Python kernel below is compiled with ``numba.cuda.compile_ptx(fn, signature, cc=(8, 0))``
(NVVM, no driver or GPU needed) and written to ``examples/numba/<name>.sm_80.ptx``. Numba
mangles entry names (``_ZN8__main__10vector_addB2v1B92...E5ArrayIfLi1E1C7mutable7alignedE...``; ``v1``..``v4``
  count compilations in the process, so keep the KERNELS order)
and declares a ``.common .global`` ``NumbaEnv`` pointer per kernel.

Kernels (1-D launches, float32 unless noted):

* ``vector_add``     ``c[i] = a[i] + b[i]`` for ``i = cuda.grid(1) < c.size``.
* ``poly_clip``      grid-stride loop; Horner evaluation of ``coeffs`` (a loop), then an
  if/elif/else clamp of the result to ``[lo, hi]``.
* ``block_sum``      256-wide ``cuda.shared.array`` tree sum with ``cuda.syncthreads()``;
  thread 0 writes ``out[blockIdx.x]``. Needs ``blockDim.x == 256``.
* ``gauss_sqrt``     ``out[i] = math.sqrt(abs(x)) * math.exp(-x*x * scale)`` on float32
  (libdevice ``__nv_expf`` / ``sqrt.rn.f32``).

Needs numba-cuda and NVRTC 13 (numba-cuda asks NVRTC for the supported archs) in a separate
venv, and the CUDA 13 toolkit's libnvvm / libdevice (found via ``CUDA_HOME``):

    python3 -m venv /tmp/gen-venv
    /tmp/gen-venv/bin/pip install numba-cuda numpy "nvidia-cuda-nvrtc==13.0.*"
    CUDA_HOME=/usr/local/cuda /tmp/gen-venv/bin/python examples/numba/gen_numba.py

Output is deterministic (rerunning rewrites byte-identical files).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")

from numba import cuda, float32  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent
CC = (8, 0)


def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def poly_clip(x, coeffs, lo, hi, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        v = x[i]
        acc = float32(0.0)
        for k in range(coeffs.size):
            acc = acc * v + coeffs[k]
        if acc < lo:
            acc = lo
        elif acc > hi:
            acc = hi
        out[i] = acc


def block_sum(inp, out):
    tile = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = inp[i] if i < inp.size else float32(0.0)
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


def gauss_sqrt(x, scale, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sqrt(abs(v)) * math.exp(-v * v * scale)


KERNELS = [
    ("vector_add", vector_add, "void(float32[::1], float32[::1], float32[::1])"),
    ("poly_clip", poly_clip, "void(float32[::1], float32[::1], float32, float32, float32[::1])"),
    ("block_sum", block_sum, "void(float32[::1], float32[::1])"),
    ("gauss_sqrt", gauss_sqrt, "void(float32[::1], float32, float32[::1])"),
]


def main() -> None:
    for name, fn, sig in KERNELS:
        ptx, _ = cuda.compile_ptx(fn, sig, cc=CC)
        path = OUT_DIR / f"{name}.sm_{CC[0]}{CC[1]}.ptx"
        path.write_text(ptx)
        print(f"wrote {path.relative_to(OUT_DIR.parent.parent)}")


if __name__ == "__main__":
    main()
