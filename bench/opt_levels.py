"""What the optimiser buys: modelled cycles per -O level, nvcc -G PTX against nvcc -O3 PTX, code size against
ptxas, and compile time per pass.

    python bench/opt_levels.py --quick [-k NAME[,NAME...]] [--passes PIPELINE] [--json FILE]
    python bench/opt_levels.py                       (the whole corpus; bench/run.py appends it to BENCHMARKS.md)

The corpus is every kernel case of tests/kernel_cases.py (``CASES``, the backend's) whose example has an
``nvcc -G`` build (``kernel_cases.DEBUG_CASES``), on sm_80; ``--quick`` takes the first case of each -G file
whose -G case is not a known failure (async_copy's excepted: its 600 KB of PTX takes seconds to parse), ``-k`` the cases whose name contains one
of the NAMEs. Per case:

* cycles of the ISA interpreter's cycle model (``LaunchStats.cycles``: the timed launch, compiler/sim/perf/
  timing.py on backend/machines/xg1.toml) for xcc -O0, -O1 and -O3 on nvcc's -O3 PTX, and for xcc -O0 and -O3
  on the -G PTX; each launch's results are checked against the case's numpy reference (a wrong one is reported, and
  left out of the means);
* registers and instructions of xcc -O3 against ``ptxas -v -O3 -arch=sm_80`` on the same PTX
  (bench/ptxas_ref.py), and xcc -O3's on the -G PTX;
* seconds per pass and backend stage (``compile_module(..., pass_times=d)``), summed over the corpus, for the
  -O3 compiles of both PTX flavours.

``--passes PIPELINE`` (an xDSL/MLIR-style pipeline string, ``CompileOptions.passes``) replaces the -O3 pipeline
in the -O3 columns (both PTX flavours); -O0 and -O1 keep theirs. The summary reports the targets of issue 15
with pass/fail (:data:`TARGETS`). Means are geometric.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("XCC_CACHE_DIR", tempfile.mkdtemp(prefix="xcc-bench-"))

import ptxas_ref  # noqa: E402
from kernel_cases import CASES, DEBUG_CASES, ptx_path  # noqa: E402

from xcc import runtime as rt  # noqa: E402
from xcc.diagnostics import XccError  # noqa: E402
from xcc.driver import CompileOptions, KernelStats, compile_module, read_source  # noqa: E402

LEVELS = (0, 1, 3)
ARCH = "sm_80"
SLOW_FILES = {"async_copy.sm_80.debug.ptx"}

# issue 15's "Done when": (key, text, predicate on the summary)
TARGETS = (
    ("debug_vs_o3", "-G PTX at -O3 within 15% of -O3 PTX at -O3 (geomean of cycle ratios <= 1.15)",
     lambda s: s["geomean_cycles_debug_over_o3"] <= 1.15),
    ("registers", "registers at or below ptxas -O3 (geomean of xcc/ptxas <= 1)",
     lambda s: s["geomean_registers_xcc_over_ptxas"] <= 1.0),
    ("instructions", "instructions at or below ptxas -O3 (geomean of xcc/ptxas <= 1)",
     lambda s: s["geomean_instructions_xcc_over_ptxas"] <= 1.0),
    ("o3_speedup", "-O3 at least 1.3x fewer cycles than -O0 (geomean of O0/O3 cycles >= 1.3)",
     lambda s: s["geomean_speedup_o0_over_o3"] >= 1.3),
    ("no_regression", "no kernel slower at -O3 than at -O0",
     lambda s: s["slower_at_o3_than_o0"] == 0),
)


@dataclass
class Measure:
    """One compile and timed launch: cycles (None when it failed), code size, and why it failed."""

    cycles: int | None = None
    registers: int | None = None
    instructions: int | None = None
    error: str | None = None  # 'wrong result: ...' or the compiler's / launch's diagnostic


@dataclass
class Row:
    case: str
    levels: dict[int, Measure] = field(default_factory=dict)  # xcc -O<level> on nvcc -O3 PTX
    debug: Measure | None = None  # xcc -O3 on the -G PTX
    debug_o0: Measure | None = None  # xcc -O0 on the -G PTX
    ptxas_registers: int | None = None
    ptxas_instructions: int | None = None


def corpus(quick: bool = False, names: list[str] | None = None) -> list[tuple]:
    """(case, its -G case) pairs, in CASES order: every non-xfail case of ``CASES`` with a -G build; ``names``
    keeps those whose name contains one of them, ``quick`` the first of each -G file that is not xfail."""
    debug = {c.name.removesuffix("_debug"): c for c in DEBUG_CASES}
    pairs = [(c, debug[c.name]) for c in CASES if not c.xfail and c.name in debug and ARCH in c.archs]
    if names:
        return [p for p in pairs if any(n in p[0].name for n in names)]
    if quick:
        seen: set[str] = set()
        out = []
        for c, d in pairs:
            if d.ptx_file not in seen and d.ptx_file not in SLOW_FILES and not d.xfail:
                seen.add(d.ptx_file)
                out.append((c, d))
        return out
    return pairs


def _result_error(case, got: dict, launch) -> str | None:
    """None when every output matches the numpy reference (the harness's rule), else a short description."""
    for i, want in launch.expected.items():
        if case.rtol or case.atol:
            ok = np.allclose(got[i], want, rtol=case.rtol, atol=case.atol, equal_nan=True)
        else:
            ok = np.array_equal(got[i].view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
        if not ok:
            return f"wrong result in argument {i}"
    return None


def measure(case, path: Path, level: int, passes: str | None, pass_times: dict[str, float] | None) -> Measure:
    """Compile ``case.entry`` of ``path`` at ``level`` (``passes`` replacing the pipeline), launch it timed on a
    fresh device, check the result."""
    try:
        stats: dict[str, KernelStats] = {}
        obj = compile_module([read_source(path)], CompileOptions(opt_level=level, passes=passes),
                             kernels=[case.entry], stats=stats, pass_times=pass_times)
        k = stats[case.entry]
        device = rt.Device()
        fn = rt.load_module(obj.to_bytes(), device=device).get_function(case.entry)
        launch = case.make(np.random.default_rng(0))
        args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
        res = fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)
        error = _result_error(case, {i: args[i].copy_to_host() for i in launch.outputs}, launch)
        return Measure(None if error else res.cycles, k.registers, k.instructions, error)
    except XccError as e:
        return Measure(error=str(e).splitlines()[0])


_PTXAS_CACHE: dict[Path, dict] = {}


def ptxas_figures(path: Path, entry: str) -> tuple[int | None, int | None]:
    if not ptxas_ref.available():
        return None, None
    if path not in _PTXAS_CACHE:
        rdc = re.search(r"^\s*\.extern\s+\.func", path.read_text(), re.M) is not None
        try:
            _PTXAS_CACHE[path] = ptxas_ref.ptxas_kernels(path, ARCH, relocatable=rdc)
        except subprocess.CalledProcessError:
            _PTXAS_CACHE[path] = {}
    k = _PTXAS_CACHE[path].get(entry)
    return (k.registers, k.instructions) if k else (None, None)


def run(pairs, passes: str | None = None, progress=None) -> tuple[list[Row], dict[str, dict[str, float]]]:
    """The rows of ``pairs`` and the seconds per pass / stage of the -O3 compiles ({'o3': ..., 'debug': ...})."""
    times: dict[str, dict[str, float]] = {"o3": {}, "debug": {}}
    rows = []
    for case, dcase in pairs:
        row = Row(case.name)
        path = ptx_path(case, ARCH)
        for level in LEVELS:
            row.levels[level] = measure(case, path, level, passes if level == 3 else None,
                                        times["o3"] if level == 3 else None)
        if not dcase.xfail:
            row.debug = measure(dcase, ptx_path(dcase, ARCH), 3, passes, times["debug"])
            row.debug_o0 = measure(dcase, ptx_path(dcase, ARCH), 0, None, None)
        else:
            reason = dcase.xfail if len(dcase.xfail) <= 100 else dcase.xfail[:97] + "..."
            row.debug = row.debug_o0 = Measure(error=f"xfail (tests/kernel_cases.py DEBUG_XFAIL): {reason}")
        row.ptxas_registers, row.ptxas_instructions = ptxas_figures(path, case.entry)
        rows.append(row)
        if progress:
            progress(row)
    return rows, times


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarise(rows: list[Row]) -> dict:
    def ratios(pick) -> list[float]:
        out = []
        for r in rows:
            a, b = pick(r)
            if a and b:
                out.append(a / b)
        return out

    o3 = [r.levels[3] for r in rows]
    s = {
        "cases": len(rows),
        "geomean_cycles_debug_over_o3": _geomean(ratios(lambda r: (r.debug.cycles, r.levels[3].cycles))),
        "geomean_speedup_o0_over_o3": _geomean(ratios(lambda r: (r.levels[0].cycles, r.levels[3].cycles))),
        "geomean_speedup_o0_over_o1": _geomean(ratios(lambda r: (r.levels[0].cycles, r.levels[1].cycles))),
        "geomean_speedup_o0_over_o3_debug": _geomean(ratios(lambda r: (r.debug_o0.cycles, r.debug.cycles))),
        "geomean_registers_xcc_over_ptxas": _geomean(ratios(lambda r: (r.levels[3].registers, r.ptxas_registers))),
        "geomean_instructions_xcc_over_ptxas": _geomean(
            ratios(lambda r: (r.levels[3].instructions, r.ptxas_instructions))),
        "geomean_registers_debug_over_ptxas": _geomean(ratios(lambda r: (r.debug.registers, r.ptxas_registers))),
        "geomean_instructions_debug_over_ptxas": _geomean(
            ratios(lambda r: (r.debug.instructions, r.ptxas_instructions))),
        "slower_at_o3_than_o0": sum(1 for r in rows if r.levels[3].cycles and r.levels[0].cycles
                                    and r.levels[3].cycles > r.levels[0].cycles),
        "slower_at_o3_than_o0_debug": sum(1 for r in rows if r.debug.cycles and r.debug_o0.cycles
                                          and r.debug.cycles > r.debug_o0.cycles),
        "failures": [f"{r.case} {what}: {m.error}" for r in rows
                     for what, m in [*((f"-O{lv}", r.levels[lv]) for lv in LEVELS), ("-G -O3", r.debug),
                                     ("-G -O0", r.debug_o0)]
                     if m.error and not (what == "-G -O0" and m is r.debug)],
        "o3_cycles_measured": sum(1 for m in o3 if m.cycles),
    }
    s["targets"] = {key: {"text": text, "met": bool(s[_TARGET_VALUE[key]] is not None and pred(s))}
                    for key, text, pred in TARGETS}
    return s


# the summary figure each target reads (a target with no figure, e.g. no ptxas, is not met)
_TARGET_VALUE = {"debug_vs_o3": "geomean_cycles_debug_over_o3", "registers": "geomean_registers_xcc_over_ptxas",
                 "instructions": "geomean_instructions_xcc_over_ptxas", "o3_speedup": "geomean_speedup_o0_over_o3",
                 "no_regression": "slower_at_o3_than_o0"}


def _fmt(v, spec: str = "") -> str:
    return "-" if v is None else format(v, spec)


def _ratio(a, b) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def table(rows: list[Row], times: dict[str, dict[str, float]], summary: dict, passes: str | None) -> list[str]:
    """The markdown lines: per-case table, targets, failures, seconds per pass."""
    lines = [f"Pipeline at -O3: `{passes}`" if passes is not None else "Pipeline at -O3: the -O3 default", "",
             "| kernel | cycles -O0 | -O1 | -O3 | O0/O3 | -G -O0 | -G -O3 | G O0/O3 | G/O3 | regs xcc | ptxas | -G | "
             "instr xcc | ptxas | -G |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lv, d = r.levels, r.debug
        lines.append(f"| {r.case} | {_fmt(lv[0].cycles)} | {_fmt(lv[1].cycles)} | {_fmt(lv[3].cycles)} | "
                     f"{_ratio(lv[0].cycles, lv[3].cycles)} | {_fmt(r.debug_o0.cycles)} | {_fmt(d.cycles)} | "
                     f"{_ratio(r.debug_o0.cycles, d.cycles)} | {_ratio(d.cycles, lv[3].cycles)} | "
                     f"{_fmt(lv[3].registers)} | {_fmt(r.ptxas_registers)} | {_fmt(d.registers)} | "
                     f"{_fmt(lv[3].instructions)} | {_fmt(r.ptxas_instructions)} | {_fmt(d.instructions)} |")
    s = summary
    lines += ["", f"Geometric means over {s['cases']} kernels: -G/-O3 PTX cycles at -O3 "
              f"{_fmt(s['geomean_cycles_debug_over_o3'], '.3f')}; -O0/-O3 cycles "
              f"{_fmt(s['geomean_speedup_o0_over_o3'], '.3f')} (-O0/-O1 {_fmt(s['geomean_speedup_o0_over_o1'], '.3f')}; "
              f"on the -G PTX {_fmt(s['geomean_speedup_o0_over_o3_debug'], '.3f')}); "
              f"xcc/ptxas registers {_fmt(s['geomean_registers_xcc_over_ptxas'], '.3f')} (-G PTX "
              f"{_fmt(s['geomean_registers_debug_over_ptxas'], '.3f')}), instructions "
              f"{_fmt(s['geomean_instructions_xcc_over_ptxas'], '.3f')} (-G PTX "
              f"{_fmt(s['geomean_instructions_debug_over_ptxas'], '.3f')}); kernels slower at -O3 than -O0: "
              f"{s['slower_at_o3_than_o0']} (on the -G PTX {s['slower_at_o3_than_o0_debug']}).", "", "| target | met |", "|---|---|"]
    lines += [f"| {t['text']} | {'PASS' if t['met'] else 'FAIL'} |" for t in s["targets"].values()]
    if s["failures"]:
        lines += ["", "Not measured (left out of the means):", ""] + [f"- {f}" for f in s["failures"]]
    keys = sorted(set(times["o3"]) | set(times["debug"]), key=lambda k: -(times["o3"].get(k, 0) + times["debug"].get(k, 0)))
    if keys:
        lines += ["", "Seconds per pass / backend stage, summed over the corpus (-O3 compiles):", "",
                  "| pass or stage | -O3 PTX s | -G PTX s |", "|---|---|---|"]
        lines += [f"| {k} | {times['o3'].get(k, 0):.3f} | {times['debug'].get(k, 0):.3f} |" for k in keys]
        lines += [f"| total | {sum(times['o3'].values()):.3f} | {sum(times['debug'].values()):.3f} |"]
    return lines


def opt_levels_section(passes: str | None = None) -> str:
    """The markdown section bench/run.py appends to docs/BENCHMARKS.md: the whole corpus."""
    rows, times = run(corpus(), passes)
    head = ["## Optimisation levels: cycles, -G PTX, code size against ptxas, time per pass", "",
            "`python bench/opt_levels.py` (quick: `--quick [-k NAME]`, `--json FILE`, `--passes PIPELINE`): every "
            "kernel case with an `nvcc -G` build on sm_80; cycles of the cycle model (timed launch) at xcc -O0, "
            "-O1, -O3 on nvcc's -O3 PTX and at -O3 on the -G PTX; registers and SASS instructions of "
            "`ptxas -v -O3 -arch=sm_80` (bench/ptxas_ref.py); a result that differs from numpy is not counted.", ""]
    return "\n".join(head + table(rows, times, summarise(rows), passes)) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the first case of each -G file only")
    ap.add_argument("-k", dest="names", help="cases whose name contains one of these (comma-separated)")
    ap.add_argument("--passes", help="pipeline string replacing the -O3 pipeline, e.g. 'sccp,gvn,dce'")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)
    try:
        if args.passes is not None:
            CompileOptions(passes=args.passes)  # a bad pipeline is one located error, before any work
    except XccError as e:
        print(e, file=sys.stderr)
        return 2
    pairs = corpus(args.quick, args.names.split(",") if args.names else None)
    if not pairs:
        print("error: no kernel case matches", file=sys.stderr)
        return 2
    rows, times = run(pairs, args.passes, progress=lambda r: print(f"  {r.case}", file=sys.stderr, flush=True))
    summary = summarise(rows)
    print("\n".join(table(rows, times, summary, args.passes)))
    if args.json:
        args.json.write_text(json.dumps({"passes": args.passes, "summary": summary, "pass_times": times,
                                         "rows": [asdict(r) for r in rows]}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
