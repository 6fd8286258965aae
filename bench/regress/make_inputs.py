"""Inputs and numpy-reference expected outputs of the examples corpus (bench/regress/examples.toml).

Deterministic (a fixed seed): running it again rewrites the same bytes.  The .npy files are committed;
run it after changing a kernel's sizes here and in examples.toml:  .venv/bin/python bench/regress/make_inputs.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def collatz(x: int) -> int:
    count = 0
    while x > 1 and count < 1000:
        x = 3 * x + 1 if x & 1 else x // 2
        count += 1
    return count


def main() -> None:
    DATA.mkdir(exist_ok=True)
    rng = np.random.default_rng(20261125)

    def save(name: str, a) -> None:
        np.save(DATA / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)

    # saxpy: y = 2.5 x + y, n = 1024
    x = rng.standard_normal(1024).astype(np.float32)
    y = rng.standard_normal(1024).astype(np.float32)
    save("saxpy_x", x)
    save("saxpy_y", y)
    save("saxpy_expected", np.float32(2.5) * x + y)
    # vector_add_grid_stride: c = a + b, n = 2048 over 2 x 256 threads
    a = rng.standard_normal(2048).astype(np.float32)
    b = rng.standard_normal(2048).astype(np.float32)
    save("vadd_a", a)
    save("vadd_b", b)
    save("vadd_expected", a + b)
    # block_reduce: one int, the sum of 1024 ints (atomics: any order gives the same integer)
    v = rng.integers(-1000, 1000, 1024, dtype=np.int32)
    save("reduce_in", v)
    save("reduce_expected", np.array([v.sum()], dtype=np.int32))
    # warp_reduce_shfl: one sum per warp, 512 ints
    w = rng.integers(-1000, 1000, 512, dtype=np.int32)
    save("warp_in", w)
    save("warp_expected", w.reshape(-1, 32).sum(axis=1).astype(np.int32))
    # transpose_shared: 64 x 64
    m = rng.standard_normal((64, 64)).astype(np.float32)
    save("transpose_in", m.reshape(-1))
    save("transpose_expected", m.T.reshape(-1))
    # histogram_atomic: 4096 bytes into 256 bins
    d = rng.integers(0, 256, 4096, dtype=np.uint8)
    save("hist_in", d)
    save("hist_expected", np.bincount(d, minlength=256).astype(np.uint32))
    # gemm_tiled_f32: 32 x 32 x 32
    A = rng.standard_normal((32, 32)).astype(np.float32)
    B = rng.standard_normal((32, 32)).astype(np.float32)
    save("gemm_a", A.reshape(-1))
    save("gemm_b", B.reshape(-1))
    save("gemm_expected", (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32).reshape(-1))
    # collatz_steps: 256 starting values
    c = rng.integers(1, 10000, 256, dtype=np.uint32)
    save("collatz_in", c)
    save("collatz_expected", np.array([collatz(int(t)) for t in c], dtype=np.uint32))
    # rdc_apply (rdc_main + rdc_lib linked): y = w x + 2 * 0.5
    rx = rng.standard_normal(256).astype(np.float32)
    rw = rng.standard_normal(256).astype(np.float32)
    save("rdc_x", rx)
    save("rdc_w", rw)
    save("rdc_expected", rw * rx + np.float32(1.0))


if __name__ == "__main__":
    main()
