"""Benchmarks: compile time against ptxas, interpreter throughput, JIT cache-hit latency, and the
cycle model's microbenchmarks (bench/microbench.py).

    python bench/run.py            (or: make bench)

Writes docs/BENCHMARKS.md with the figures, the command and the machine. ptxas is the
reference compiler (timed in the same run when it is on PATH); numpy is the reference for
kernel results (its time for the same computation is reported beside the interpreter's).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("XCC_CACHE_DIR", tempfile.mkdtemp(prefix="xcc-bench-"))

from kernel_cases import CASES, ptx_path  # noqa: E402

from xcc import runtime as rt  # noqa: E402
from xcc.driver import CompileOptions, compile_module, read_source  # noqa: E402


def best_of(fn, n=5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def compile_times() -> list[tuple[str, float, float | None]]:
    rows = []
    ptxas = shutil.which("ptxas")
    for case in CASES:
        path = ptx_path(case, case.default_arch)  # ptxas -arch=sm_80 also takes the sm_70 LLVM files
        src = read_source(path)
        t_xcc = best_of(lambda: compile_module([src], CompileOptions(opt_level=3), kernels=[case.entry]))
        t_ptxas = None
        if ptxas:
            arch = case.default_arch if case.default_arch in ("sm_80", "sm_90", "sm_90a") else "sm_80"
            try:  # ptxas 13.0 reads PTX up to 9.0: Triton's sm_90a files (.version 9.4) are xcc-only
                t_ptxas = best_of(lambda: subprocess.run([ptxas, "-O3", f"-arch={arch}", str(path), "-o", os.devnull],
                                                         check=True, capture_output=True), 3)
            except subprocess.CalledProcessError:
                t_ptxas = None
        rows.append((case.name, t_xcc, t_ptxas))
    return rows


def case_launches():
    """(case, kernel function, launch, arguments on the device) of every kernel case of tests/kernel_cases.py
    but those marked xfail (known miscompiles), each module loaded on a device of its own."""
    for case in CASES:
        if case.xfail:
            continue
        launch = case.make(np.random.default_rng(0))
        device = rt.Device()
        fn = rt.load_module(ptx_path(case, case.default_arch), device=device).get_function(case.entry)
        yield case, fn, launch, [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]


def interpreter_throughput() -> list[tuple]:
    """(case, warp instr, thread instr, seconds functional only, seconds with the cycle model,
    cycles, IPC) per kernel case; cases marked xfail (known miscompiles) are left out."""
    rows = []
    for case, fn, launch, args in case_launches():
        stats = fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)
        t_func = best_of(lambda: fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem,
                                           timing=False), 3)
        t_timed = best_of(lambda: fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem), 3)
        rows.append((case.name, stats.warp_instructions, stats.thread_instructions, t_func, t_timed,
                     stats.cycles, stats.ipc))
    return rows


LARGE_PTX = ROOT / "bench" / "data" / "large_unrolled.sm_80.ptx"


def frontend_throughput() -> list[tuple[str, int, float, float | None]]:
    """(file, lines, xcc parse+check seconds, ptxas -O3 whole-compile seconds) for the large
    benchmark file and for the whole examples/ corpus."""
    from xcc.frontend.parser import parse

    ptxas = shutil.which("ptxas")
    corpus = sorted((ROOT / "examples").glob("**/*.ptx"))
    texts = [(str(p), p.read_text()) for p in corpus]
    parse(*texts[0][::-1])  # build the parser tables outside the timing
    large = LARGE_PTX.read_text()
    rows = []
    t_large = best_of(lambda: parse(large, str(LARGE_PTX)), 5)
    t_ptxas = None
    if ptxas:
        t_ptxas = best_of(lambda: subprocess.run([ptxas, "-O3", "-arch=sm_80", str(LARGE_PTX), "-o", os.devnull],
                                                 check=True), 3)
    rows.append((str(LARGE_PTX.relative_to(ROOT)), large.count("\n"), t_large, t_ptxas))
    t_corpus = best_of(lambda: [parse(text, name) for name, text in texts], 3)
    rows.append((f"examples/ ({len(texts)} files)", sum(t.count("\n") for _, t in texts), t_corpus, None))
    return rows


def main() -> None:
    front = frontend_throughput()
    comp = compile_times()
    thr = interpreter_throughput()
    lines = ["# Benchmarks", "",
             f"Produced by `python bench/run.py` (`make bench`) on {platform.machine()} with "
             f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
             f"{time.strftime('%Y-%m-%d')}. Best of several runs each.", "",
             "## Frontend: parse + check throughput vs ptxas's whole compile", "",
             "xcc's Lark LALR parser and semantic checker (`xcc.frontend.parser.parse`, in-process) against "
             "`ptxas -O3 -arch=sm_80 FILE -o /dev/null` (a process launch that parses, optimises and "
             "assembles) on the same file. The aim is parse + check at least half as fast as ptxas's whole "
             "compile.", "",
             "| input | lines | xcc parse+check ms | xcc lines/s | ptxas -O3 ms | ptxas lines/s | xcc / ptxas speed |",
             "|---|---|---|---|---|---|---|"]
    for name, n, tx, tp in front:
        ptxas_cols = f"{tp * 1e3:.0f} | {n / tp:,.0f} | {tp / tx:.2f}" if tp else "(no ptxas) | |"
        lines.append(f"| {name} | {n} | {tx * 1e3:.0f} | {n / tx:,.0f} | {ptxas_cols} |")
    lines += ["", "## Compile time: xcc -O3 (PTX to .xbin, one kernel) vs ptxas -O3 -arch of the file (sm_80 for the LLVM sm_70 files)", "",
             "| kernel | xcc ms | ptxas ms | xcc / ptxas |", "|---|---|---|---|"]
    for name, tx, tp in comp:
        lines.append(f"| {name} | {tx * 1e3:.1f} | {tp * 1e3:.1f} | {tx / tp:.2f} |" if tp else
                     f"| {name} | {tx * 1e3:.1f} | (no ptxas) | |")
    lines += ["", "ptxas is a process launch per file; xcc runs in-process.", "",
              "## ISA interpreter throughput (example launches from tests/kernel_cases.py)", "",
              "Functional: `fn.launch(..., timing=False)`; timed: the default launch, which also records a "
              "trace and replays it through the cycle model (`compiler/sim/perf/timing.py`) for cycles, IPC and the "
              "Nsight-style metrics.", "",
              "| kernel | warp instr | thread instr | functional s | warp instr/s | thread instr/s | "
              "timed s | warp instr/s timed | cycles | IPC |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, wi, ti, tf, tt, cyc, ipc in thr:
        lines.append(f"| {name} | {wi} | {ti} | {tf:.4f} | {wi / tf:,.0f} | {ti / tf:,.0f} | {tt:.4f} | "
                     f"{wi / tt:,.0f} | {cyc} | {ipc:.2f} |")
    lines += ["", "For scale: Accel-Sim, the best open GPU simulator, runs about 9K warp instructions/s "
              "(290K thread instructions/s); these launches are small, so fixed per-launch costs dominate.", ""]
    import jit_hit  # bench/jit_hit.py: load_module + get_function on a warm cache, with and without a hook

    lines += [*jit_hit.section(), ""]
    import throughput  # bench/throughput.py: the emulator issue's headline workloads

    lines += throughput.section(throughput.headline_throughput())
    import microbench  # bench/microbench.py: the cycle model against the machine description

    t0 = time.perf_counter()
    figs = microbench.measure()
    lines += microbench.markdown_section(figs, seconds=time.perf_counter() - t0) + [""]
    import opt_levels  # bench/opt_levels.py: cycles per -O level, -G PTX, code size against ptxas, time per pass

    lines += [opt_levels.opt_levels_section()]
    import startup  # bench/startup.py: a cold `xcc compile` process, with and without bytecode, against ptxas

    lines += ["", startup.startup_section()]
    out = ROOT / "docs" / "BENCHMARKS.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
