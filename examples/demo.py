"""`make demo`: compile nvcc's PTX for saxpy to xg1, run it on the ISA interpreter, check it against numpy.

Shows the whole pipeline: PTX -> IR -> passes -> xg1 microcode (.xbin) -> emulator, through the
public runtime API, then the disassembly and the launch statistics.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from xcc import runtime as rt
from xcc.backend.codegen import disassemble_kernel

HERE = Path(__file__).resolve().parent


def main() -> int:
    n, a = 10_000, np.float32(2.5)
    rng = np.random.default_rng(2026)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    # Reference: PTX's fma.rn.f32 rounds a*x+y once; the f64 product is exact and the f64 sum
    # is rounded to f32 afterwards (double rounding cannot occur for these magnitudes' checks
    # below: we compare within one ulp and report the bit-exact count separately).
    want = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)

    ptx = HERE / "saxpy.sm_90.ptx"
    mod = rt.load_module(ptx, arch="xg1", opt_level=3)
    fn = mod.get_function("saxpy")
    print(f"compiled {ptx.name}: kernel 'saxpy', {fn.kernel.registers} registers, "
          f"{fn.kernel.instruction_count} xg1 instructions\n")
    print(disassemble_kernel(fn.kernel), "\n")

    d_x, d_y = rt.to_device(x), rt.to_device(y)
    block = 256
    stats = fn.launch(grid=((n + block - 1) // block, 1, 1), block=(block, 1, 1),
                      args=(np.int32(n), a, d_x, d_y))
    got = d_y.copy_to_host()

    exact = int(np.sum(got.view(np.uint32) == want.view(np.uint32)))
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    print(f"y[:4] = {got[:4]}")
    print(f"bit-exact vs numpy: {exact}/{n}; max difference {int(ulps.max())} ulp")
    print(f"launch: grid={stats.grid} block={stats.block} thread_instructions={stats.thread_instructions} "
          f"warp_instructions={stats.warp_instructions} cycles={stats.cycles}")
    ok = int(ulps.max()) <= 1
    print("RESULT:", "verified against numpy" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
