"""Generate the Triton PTX corpus in ``examples/triton/`` without a GPU.

Each ``@triton.jit`` kernel below is compiled ahead of time with
``triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", cc, 32))``
and ``asm["ptx"]`` is written to ``examples/triton/<name>.sm_<cc>.ptx``. Triton runs its whole
pipeline (ttir -> ttgir -> llir -> ptx -> cubin); the cubin stage uses the ptxas bundled in
the triton wheel, no GPU or driver is touched.

Kernels (num_warps=4):

* ``vector_add``  (sm_80, sm_90): ``out = x + y`` over fp32, BLOCK_SIZE=1024, masked tail.
* ``softmax_row`` (sm_80): one program per row, numerically stable fp32 softmax, BLOCK_SIZE=1024.
* ``matmul``      (sm_80, sm_90): C[M,N] fp32 = A[M,K] fp16 @ B[K,N] fp16 with ``tl.dot``
  (``mma.sync`` on sm_80, ``wgmma`` on sm_90), 64x64x32 tiles, K loop, num_stages=3.
* ``layernorm``   (sm_80): one program per row, fp32 mean/var/rstd, weight and bias, BLOCK_SIZE=1024.

Needs a separate venv with triton (not the project venv):

    python3 -m venv /tmp/gen-venv && /tmp/gen-venv/bin/pip install triton numpy
    /tmp/gen-venv/bin/python examples/triton/gen_triton.py

Output is deterministic (a fresh, throw-away Triton cache is used on every run).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# A fresh cache per run, removed at exit: never reuse (or pollute) ~/.triton/cache.
_CACHE_DIR = tempfile.mkdtemp(prefix="triton-cache-")
atexit.register(shutil.rmtree, _CACHE_DIR, True)
os.environ["TRITON_CACHE_DIR"] = _CACHE_DIR

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_row(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
           stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def layernorm(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, xc * rstd * w + b, mask=mask)


P32 = "*fp32"
P16 = "*fp16"
I32 = "i32"
CE = "constexpr"

# name -> (fn, signature, constexprs, options, capabilities)
KERNELS = {
    "vector_add": (
        vector_add,
        {"x_ptr": P32, "y_ptr": P32, "out_ptr": P32, "n_elements": I32, "BLOCK_SIZE": CE},
        {"BLOCK_SIZE": 1024}, {"num_warps": 4, "enable_fp_fusion": True}, (80, 90)),
    "softmax_row": (
        softmax_row,
        {"out_ptr": P32, "in_ptr": P32, "in_row_stride": I32, "out_row_stride": I32,
         "n_cols": I32, "BLOCK_SIZE": CE},
        {"BLOCK_SIZE": 1024}, {"num_warps": 4, "enable_fp_fusion": True}, (80,)),
    "matmul": (
        matmul,
        {"a_ptr": P16, "b_ptr": P16, "c_ptr": P32, "M": I32, "N": I32, "K": I32,
         "stride_am": I32, "stride_ak": I32, "stride_bk": I32, "stride_bn": I32,
         "stride_cm": I32, "stride_cn": I32, "BLOCK_M": CE, "BLOCK_N": CE, "BLOCK_K": CE},
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, {"num_warps": 4, "num_stages": 3, "enable_fp_fusion": True}, (80, 90)),
    "layernorm": (
        layernorm,
        {"x_ptr": P32, "y_ptr": P32, "w_ptr": P32, "b_ptr": P32, "stride": I32, "N": I32,
         "eps": "fp32", "BLOCK_SIZE": CE},
        {"BLOCK_SIZE": 1024}, {"num_warps": 4, "enable_fp_fusion": True}, (80,)),
}


def _stable_file_names() -> None:
    """Triton's debug line info (``.file``, DWARF) names each @jit function's source file by
    its absolute path; use repository- / package-relative names so the PTX does not depend on
    where the checkout or the venv lives."""
    for fn, *_rest in KERNELS.values():
        fn.file_name = "examples/triton/gen_triton.py"
    pkg = os.path.dirname(triton.__file__)
    for obj in vars(tl.standard).values():
        if isinstance(obj, JITFunction) and os.path.isabs(obj.file_name):
            obj.file_name = "triton/" + os.path.relpath(obj.file_name, pkg)


def main() -> None:
    _stable_file_names()
    for name, (fn, signature, constexprs, options, ccs) in KERNELS.items():
        for cc in ccs:
            src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
            compiled = triton.compile(src, target=GPUTarget("cuda", cc, 32), options=options)
            path = OUT_DIR / f"{name}.sm_{cc}.ptx"
            path.write_text(compiled.asm["ptx"])
            print(f"wrote {path.relative_to(OUT_DIR.parent.parent)}")


if __name__ == "__main__":
    main()
