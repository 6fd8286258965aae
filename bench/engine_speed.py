"""Interpreter speed in one JSON line, to compare two revisions of the engine on the same machine.

    python bench/engine_speed.py            (in each checkout, one after the other)

Best of 5 functional and best of 2 timed launches of bench/throughput.py's workloads (the 256^3 SIMT GEMM,
the reduction over 1M floats), and the sum over every non-xfail case of tests/kernel_cases.py of the best of
3 functional and timed launches (small launches: the engine's fixed costs per step and per launch).  Seconds;
lower is better.  The refactor of issue 14 was checked this way against the revision before it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import throughput  # noqa: E402
from run import best_of, case_launches  # noqa: E402


def main() -> None:
    out = {}
    for name, work in (("gemm", throughput._gemm), ("reduce", throughput._reduce)):
        out[f"{name}_functional_s"] = min(work(False)[1] for _ in range(5))
        out[f"{name}_timed_s"] = min(work(True)[1] for _ in range(2))
    functional = timed = 0.0
    for case, fn, launch, args in case_launches():
        fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)  # compile, warm up

        def run(timing: bool, fn=fn, launch=launch, args=args, case=case):
            return fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem, timing=timing)

        functional += best_of(lambda: run(False), 3)
        timed += best_of(lambda: run(True), 3)
    out["cases_functional_s"], out["cases_timed_s"] = functional, timed
    print(json.dumps(out))


if __name__ == "__main__":
    main()
