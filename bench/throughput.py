"""Interpreter speed on real problem sizes: a 256x256x256 tiled SIMT GEMM and a reduction over 1M floats.

    python bench/throughput.py        (also part of bench/run.py / make bench)

Functional mode (``timing=False``) is measured in thread-instructions per second, timing mode (the
cycle model on) in warp-instructions per second: the two figures the emulator issue sets targets for
(functional 20M thread-instr/s; timing above Accel-Sim's ~9K warp-instr/s, aiming at 100K).  numpy's
time for the same computation is the reference beside them, and each result is checked against it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from kernel_cases import EXAMPLES_DIR  # noqa: E402

from xcc import runtime as rt  # noqa: E402

GEMM = ("gemm_simt", "_Z14gemm_tiled_f32iiiPKfS0_Pf")
REDUCE = ("block_reduce", "_Z16block_reduce_f32iPKfPf")


def _gemm(timing: bool):
    n = 256
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    dev = rt.Device()
    fn = rt.load_module(EXAMPLES_DIR / f"{GEMM[0]}.sm_80.ptx", device=dev).get_function(GEMM[1])
    d_a, d_b, d_c = rt.to_device(a, dev), rt.to_device(b, dev), rt.zeros(n * n, np.float32, dev)
    t0 = time.perf_counter()
    stats = fn.launch((n // 16, n // 16, 1), (16, 16, 1), (np.int32(n), np.int32(n), np.int32(n), d_a, d_b, d_c),
                      timing=timing)
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    want = a @ b
    dt_np = time.perf_counter() - t1
    np.testing.assert_allclose(d_c.copy_to_host().reshape(n, n), want, rtol=1e-4, atol=1e-4)
    return stats, dt, dt_np


def _reduce(timing: bool):
    n = 1 << 20
    data = np.random.default_rng(1).uniform(0, 1, n).astype(np.float32)
    dev = rt.Device()
    fn = rt.load_module(EXAMPLES_DIR / f"{REDUCE[0]}.sm_80.ptx", device=dev).get_function(REDUCE[1])
    d_x, d_out = rt.to_device(data, dev), rt.zeros(1, np.float32, dev)
    t0 = time.perf_counter()
    stats = fn.launch((n // 256, 1, 1), (256, 1, 1), (np.int32(n), d_x, d_out), timing=timing)
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    want = data.astype(np.float64).sum()
    dt_np = time.perf_counter() - t1
    np.testing.assert_allclose(d_out.copy_to_host()[0], want, rtol=1e-4)
    return stats, dt, dt_np


def headline_throughput() -> list[tuple]:
    """(name, thread instr, warp instr, functional s, timed s, cycles, numpy s) per workload."""
    rows = []
    for name, run in (("gemm_tiled_f32 256x256x256", _gemm), ("block_reduce_f32 over 1M floats", _reduce)):
        func, t_func, t_np = run(False)
        timed, t_timed, _ = run(True)
        assert (func.thread_instructions, func.warp_instructions) == (timed.thread_instructions,
                                                                        timed.warp_instructions)
        rows.append((name, func.thread_instructions, func.warp_instructions, t_func, t_timed, timed.cycles, t_np))
    return rows


def section(rows) -> list[str]:
    lines = ["## Interpreter speed on real problem sizes (the emulator issue's targets)", "",
             "`python bench/throughput.py`: one launch each, ISA interpreter, results checked against numpy. "
             "Functional = `timing=False` (target 20M thread-instr/s); timed = the cycle model on (target: "
             "beat Accel-Sim's ~9K warp-instr/s, aim 100K).", "",
             "| workload | thread instr | warp instr | functional s | thread instr/s | timed s | warp instr/s timed "
             "| cycles | numpy s |", "|---|---|---|---|---|---|---|---|---|"]
    for name, ti, wi, tf, tt, cyc, tnp in rows:
        lines.append(f"| {name} | {ti:,} | {wi:,} | {tf:.2f} | {ti / tf:,.0f} | {tt:.2f} | {wi / tt:,.0f} | "
                     f"{cyc:,} | {tnp:.4f} |")
    return lines + [""]


if __name__ == "__main__":
    print("\n".join(section(headline_throughput())))
