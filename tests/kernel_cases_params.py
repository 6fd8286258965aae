"""Kernel cases for struct parameters read as memory (examples/struct_params.cu; see :mod:`kernel_cases` for the
format): an 1800-byte ``Lut`` by value, indexed at run time (``ld.param`` through a register address), and the
same as a ``__grid_constant__`` parameter whose address a device function takes (``cvta.param``, generic loads).

Imported only by ``kernel_cases`` (which adds ``PARAM_CASES`` to its lists): import that module, not this one.
"""

from __future__ import annotations

import numpy as np
from kernel_cases import SENTINEL_F32, KernelCase, Launch

# struct Lut of examples/struct_params.cu: 1800 bytes, aligned to 4
LUT = np.dtype([("n", "<i4"), ("alpha", "<f4"), ("beta", "<f4"), ("perm", "<i4", (32,)), ("table", "<f4", (415,))],
               align=True)
assert LUT.itemsize == 1800


def _make_lut(rng: np.random.Generator) -> Launch:
    """y[i] = alpha * table[perm[idx[i] & 31]] + beta * table[idx[i] % 415]: small integers and powers of two,
    so every rounding (and fma contraction) is exact."""
    n = 300
    p = np.zeros((), LUT)
    p["n"], p["alpha"], p["beta"] = n, 0.25, -2.0
    p["perm"] = rng.permutation(415)[:32]
    p["table"] = rng.integers(-1000, 1000, 415)
    idx = rng.integers(0, 1 << 20, n + 3).astype(np.int32)
    y = np.full(n + 4, SENTINEL_F32, np.float32)
    exp = y.copy()
    k = idx[:n]
    exp[:n] = (np.float32(0.25) * p["table"][p["perm"][k & 31]] + np.float32(-2.0) * p["table"][k % 415])
    return Launch((-(-n // 128), 1, 1), (128, 1, 1), [p[()], idx, y], [2], {2: exp.astype(np.float32)})


PARAM_CASES = [
    KernelCase("struct_params_lut", "struct_params", "_Z17struct_params_lut3LutPKiPf", _make_lut),
    KernelCase("struct_params_lut_grid_constant", "struct_params", "_Z31struct_params_lut_grid_constant3LutPKiPf",
               _make_lut),
]
