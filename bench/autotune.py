"""What autotuning buys on the cycle model: plain -O3 against ``fn.autotune`` on the corpus's transformer and
diffusion kernels.

    python bench/autotune.py [--budget N (64)] [-k NAME[,NAME...]] [--workers N] [--json FILE] [--no-write]

Per kernel case of tests/kernel_cases*.py (:data:`KERNELS`, sm_80 PTX, the case's own launch and inputs): the
modelled cycles of the plain -O3 build, of the tuned build (the default search space,
:func:`xcc.tune.space.default_space`, at most ``--budget`` candidate builds, seed 0) and the knobs that won;
the tuned build's outputs are checked against the case's numpy reference (and, by the tuner, bit for bit
against the plain build's).  The geometric mean of plain / tuned cycles sums it up.  Writes its section of
docs/BENCHMARKS.md between the ``autotune`` markers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("XCC_CACHE_DIR", tempfile.mkdtemp(prefix="xcc-bench-autotune-"))

from kernel_cases import CASES_BY_NAME, ptx_path  # noqa: E402
from microbench import BENCHMARKS_MD, write_section  # noqa: E402
from opt_levels import _result_error  # noqa: E402

from xcc import runtime as rt  # noqa: E402

KERNELS = ("attention_row", "softmax_rows", "layernorm_rows", "rmsnorm_rows", "group_norm_nchw", "conv2d_nchw",
           "gelu_erf", "gelu_tanh", "silu", "upsample_nearest2x", "timestep_embedding", "gemm_tiled_f32",
           "gemm_tiled_alpha_beta", "gemm_wmma_f16_f32", "gemm_wmma_accumulate", "gemm_mma_m16n8k16")
BEGIN, END = "<!-- autotune:begin -->", "<!-- autotune:end -->"
ARCH = "sm_80"


def tune_case(name: str, budget: int, workers: int, profile: bool = False) -> dict:
    case = CASES_BY_NAME[name]
    fn = rt.load_module(str(ptx_path(case, ARCH))).get_function(case.entry)
    launch = case.make(np.random.default_rng(0))
    args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
    t0 = time.perf_counter()
    res = fn.autotune(launch.grid, launch.block, args, case.shared_mem, budget, workers=workers, progress=False,
                      profile=profile or None)
    seconds = time.perf_counter() - t0
    stats = fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)  # the tuned binary
    error = _result_error(case, {i: args[i].copy_to_host() for i in launch.outputs}, launch)
    return {"case": name, "plain": res.baseline_cycles, "tuned": stats.cycles, "search_cycles": res.cycles,
            "knobs": res.changed(), "candidates": len(res.candidates), "strategy": res.strategy,
            "rejected": sum(1 for c in res.candidates if math.isinf(c.cycles)), "seconds": round(seconds, 1),
            "error": error}


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def markdown(rows: list[dict], budget: int, total_s: float, profile: bool) -> list[str]:
    ok = [r for r in rows if not r["error"]]
    g = geomean([r["plain"] / r["tuned"] for r in ok])
    lines = [BEGIN, "## Autotuning (issue 17)", "",
             f"`python bench/autotune.py --budget {budget}{' --profile' if profile else ''}`: `fn.autotune(...)` "
             "with the default search space (xcc.tune.space.default_space"
             + ("; with `profile=True`: a profile of the launch recorded first and `profile_use` one more knob"
                if profile else "") + f"), at most {budget} candidate builds per kernel (greedy coordinate "
             "descent on the modelled cycles, then a seeded evolutionary search), on sm_80 PTX with each case's "
             "own launch (tests/kernel_cases*.py). \"tuned\" is a launch of the tuned binary after the search, "
             "its outputs checked against the case's numpy reference; every candidate's outputs were checked bit "
             f"for bit against the plain build's (\"rejected\": candidates that differed, faulted or ran away). "
             f"Whole run {total_s:.0f} s.", "",
             "| kernel | plain -O3 cycles | tuned cycles | plain / tuned | knobs that won | candidates | rejected | "
             "search s |", "|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        knobs = ", ".join(f"`{k}={v}`" for k, v in r["knobs"].items()) or "(the plain build)"
        ratio = f"{r['plain'] / r['tuned']:.3f}" if not r["error"] else f"wrong: {r['error']}"
        lines.append(f"| {r['case']} | {r['plain']} | {r['tuned']} | {ratio} | {knobs} | {r['candidates']} | "
                     f"{r['rejected']} | {r['seconds']} |")
    lines += ["", f"Geometric mean of plain / tuned cycles over {len(ok)} kernels: **{g:.3f}x**"
              + (" (issue 17's target for profile use and autotuning together: 1.3x)." if profile else
                 " (autotuning without a profile; `--profile` adds profile use as a knob)."), END]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=64, help="candidate builds per kernel (default 64)")
    ap.add_argument("-k", dest="names", help="only the kernels whose name contains one of these (comma-separated)")
    ap.add_argument("--workers", type=int, default=1, help="Dask worker processes (default: in-process)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    ap.add_argument("--profile", action="store_true", help="record a profile of each launch first and add the "
                    "profile_use knob (profile-guided optimisation) to the space")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/BENCHMARKS.md alone")
    a = ap.parse_args(argv)
    names = [n for n in KERNELS if not a.names or any(k in n for k in a.names.split(","))]
    t0 = time.perf_counter()
    rows = []
    for name in names:
        rows.append(tune_case(name, a.budget, a.workers, a.profile))
        r = rows[-1]
        print(f"{name:24} plain {r['plain']:>7} tuned {r['tuned']:>7} ({r['plain'] / r['tuned']:.3f}x) "
              f"{r['seconds']:>6}s  {r['knobs'] or ''}{'  WRONG: ' + r['error'] if r['error'] else ''}", flush=True)
    lines = markdown(rows, a.budget, time.perf_counter() - t0, a.profile)
    print("\n".join(lines[-2:-1]))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2, default=str) + "\n")
    if not a.no_write and not a.names:
        write_section(lines, BENCHMARKS_MD, BEGIN, END)
        print(f"written to {BENCHMARKS_MD.relative_to(ROOT)}")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
