"""Cold start: `xcc compile` as a whole process, against ptxas on the same files.

    python bench/startup.py [--runs N] [--no-strict] [FILE.ptx ...]

Each file of the corpus (default: examples/*.sm_80.ptx) is compiled by a fresh
``xcc compile FILE -o OUT.xbin`` process ``runs`` times; a figure is the median over the corpus
of each file's median. Three bytecode states are measured (issue 15's targets: at most 0.25 s
cached, 0.5 s without bytecode):

* cached: every module's .pyc is there (a warmed ``PYTHONPYCACHEPREFIX`` directory);
* xcc uncached: the same directory without xcc's own .pyc files, and nothing written
  (``PYTHONDONTWRITEBYTECODE``): xcc's modules are compiled from source, as in a fresh checkout
  or an install that did not compile them, while Python's and the dependencies' .pyc are used;
* strict: an empty ``PYTHONPYCACHEPREFIX``: everything, the standard library and numpy
  included, is compiled from source.

Beside them: ``ptxas -arch=sm_80 FILE -o /dev/null`` on the same files in the same run,
``python -c pass`` (the interpreter's own start), and the warm in-process compile
(``xcc.driver.compile_module``, best of 3 per file). Wall-clock time is what the targets are
about; the child's CPU time (user + system, from ``getrusage``) is shown beside it because it
stays meaningful on a loaded machine, where wall-clock time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "examples").glob("*.sm_80.ptx"))
TARGET_CACHED_S, TARGET_UNCACHED_S = 0.25, 0.5
# xcc's packages: their .pyc files are what "xcc uncached" leaves out
XCC_PACKAGES = ("xcc", "xcc.ir", "xcc.semantics", "xcc.frontend", "xcc.passes", "xcc.backend", "xcc.sim",
                "xcc.runtime")


@dataclass(frozen=True)
class Timing:
    """Median seconds over the corpus of each file's median: wall-clock and the child's CPU time."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class StartupFigures:
    files: int
    runs: int
    cached: Timing
    uncached: Timing
    strict: Timing | None  # None when not measured (--no-strict)
    ptxas: Timing | None  # None without ptxas on PATH
    ptxas_files: int
    interpreter: Timing  # python -c pass
    in_process: float  # median over the corpus of the best warm in-process compile, seconds
    load: tuple[float, float]  # 1-minute load average before and after
    skipped: tuple[str, ...] = ()  # files xcc does not compile on their own (an -rdc file needing its library)


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of ``cmd``; RuntimeError if it fails."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _median_timing(per_file: list[list[tuple[float, float]]]) -> Timing:
    walls = [statistics.median(w for w, _ in runs) for runs in per_file]
    cpus = [statistics.median(c for _, c in runs) for runs in per_file]
    return Timing(statistics.median(walls), statistics.median(cpus))


def _xcc_command() -> list[str]:
    """The ``xcc`` console script beside this interpreter (what a user runs), else ``python -m xcc.cli``."""
    script = Path(sys.executable).with_name("xcc")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "xcc.cli"]


def _env(prefix: Path, write: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _xcc_mirrors(prefix: Path) -> list[Path]:
    """Where the .pyc files of xcc's packages live under a PYTHONPYCACHEPREFIX of ``prefix``
    (the source folder's absolute path below the prefix, as importlib.util.cache_from_source puts them)."""
    dirs = set()
    for name in XCC_PACKAGES:
        spec = importlib.util.find_spec(name)
        for loc in (spec.submodule_search_locations or []) if spec else []:
            src = Path(os.path.abspath(loc))
            dirs.add(prefix / src.relative_to(src.anchor))
    return sorted(dirs)


def _per_file(cmd_of, files: list[Path], runs: int, env: dict[str, str], cwd: Path) -> list[list[tuple]]:
    return [[_run(cmd_of(f), env, cwd) for _ in range(runs)] for f in files]


def _in_process(files: list[Path]) -> float:
    from xcc.driver import CompileOptions, compile_module, read_source

    best = []
    for f in files:
        src = read_source(f)
        compile_module([src], CompileOptions())  # warm: parser tables, regexes, caches
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            compile_module([src], CompileOptions())
            times.append(time.perf_counter() - t0)
        best.append(min(times))
    return statistics.median(best)


def measure(files: list[Path] | None = None, runs: int = 3, strict: bool = True) -> StartupFigures:
    """Run every measurement described in the module docstring."""
    files = [Path(f).resolve() for f in (files or CORPUS)]
    load0 = os.getloadavg()[0]
    xcc = _xcc_command()
    ptxas = shutil.which("ptxas")
    with tempfile.TemporaryDirectory(prefix="xcc-startup-") as tmp:
        tmp = Path(tmp)
        out = tmp / "out.xbin"

        def compile_cmd(f: Path) -> list[str]:
            return [*xcc, "compile", str(f), "-o", str(out)]

        cached_dir, uncached_dir, empty_dir = tmp / "pyc-all", tmp / "pyc-no-xcc", tmp / "pyc-none"
        empty_dir.mkdir()
        _run([sys.executable, "-c", "pass"], _env(cached_dir, write=True), tmp)
        skipped = []
        for f in files:  # warm: writes every .pyc; a file xcc does not compile alone (-rdc) is left out
            try:
                _run(compile_cmd(f), _env(cached_dir, write=True), tmp)
            except RuntimeError:
                skipped.append(f)
        files = [f for f in files if f not in skipped]
        if not files:
            raise RuntimeError("xcc compiles none of the files on its own")
        mirrors = [m for m in _xcc_mirrors(cached_dir) if m.is_dir()]
        if not mirrors:
            raise RuntimeError(f"no .pyc of xcc's packages under {cached_dir}: cannot measure 'xcc uncached'")
        shutil.copytree(cached_dir, uncached_dir)
        for m in _xcc_mirrors(uncached_dir):
            shutil.rmtree(m, ignore_errors=True)

        cached = _median_timing(_per_file(compile_cmd, files, runs, _env(cached_dir, write=False), tmp))
        uncached = _median_timing(_per_file(compile_cmd, files, runs, _env(uncached_dir, write=False), tmp))
        strict_t = (_median_timing(_per_file(compile_cmd, files, 1, _env(empty_dir, write=False), tmp))
                    if strict else None)
        interp = _median_timing([[_run([sys.executable, "-c", "pass"], _env(cached_dir, write=False), tmp)
                                  for _ in range(max(5, runs))]])
        ptxas_t, ptxas_files = None, 0
        if ptxas:
            rows = []
            for f in files:
                try:
                    rows.append([_run([ptxas, "-arch=sm_80", str(f), "-o", os.devnull], dict(os.environ), tmp)
                                 for _ in range(runs)])
                except RuntimeError:  # a file ptxas does not take (a newer PTX ISA): xcc-only
                    continue
            ptxas_files = len(rows)
            ptxas_t = _median_timing(rows) if rows else None
    in_proc = _in_process(files)
    return StartupFigures(len(files), runs, cached, uncached, strict_t, ptxas_t, ptxas_files, interp, in_proc,
                          (load0, os.getloadavg()[0]), tuple(f.name for f in skipped))


def _ms(t: float) -> str:
    return f"{t * 1e3:.0f}"


def markdown(fig: StartupFigures) -> str:
    """The figures as a markdown section (what bench/run.py appends to docs/BENCHMARKS.md)."""

    def row(what: str, t: Timing | None, target: float | None = None) -> str:
        if t is None:
            return f"| {what} | (not measured) | | |"
        verdict = "" if target is None else f"≤ {_ms(target)}: {'met' if t.wall <= target else 'NOT met'}"
        return f"| {what} | {_ms(t.wall)} | {_ms(t.cpu)} | {verdict} |"

    lines = [
        "## Cold start: `xcc compile` as a process", "",
        f"`python bench/startup.py`: `xcc compile FILE -o OUT.xbin` in a fresh process, {fig.runs} runs per file "
        f"over {fig.files} files (examples/*.sm_80.ptx); median over the files of each file's median. "
        "Wall-clock time is what the targets are about; CPU time (user + system of the process) is shown "
        "beside it because it stays meaningful on a loaded machine. 1-minute load average "
        f"{fig.load[0]:.1f} before, {fig.load[1]:.1f} after."
        + (f" Left out (not compilable on their own): {', '.join(fig.skipped)}." if fig.skipped else ""), "",
        "| process | wall ms | CPU ms | target ms |", "|---|---|---|---|",
        row("`xcc compile`, bytecode cached", fig.cached, TARGET_CACHED_S),
        row("`xcc compile`, xcc's bytecode absent (its modules compiled from source)", fig.uncached,
            TARGET_UNCACHED_S),
        row("`xcc compile`, no bytecode at all (empty `PYTHONPYCACHEPREFIX`: stdlib and numpy from source too)",
            fig.strict),
        row(f"`ptxas -arch=sm_80 FILE -o /dev/null` ({fig.ptxas_files} files)", fig.ptxas),
        row("`python -c pass` (the interpreter's own start)", fig.interpreter),
        "",
        f"In-process compile (`xcc.driver.compile_module`, -O3, warm, best of 3 per file), median over the files: "
        f"{fig.in_process * 1e3:.1f} ms.", "",
    ]
    return "\n".join(lines)


def startup_section(runs: int = 3, strict: bool = True) -> str:
    """Measure and return the markdown section for docs/BENCHMARKS.md."""
    return markdown(measure(runs=runs, strict=strict))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="PTX files (default: examples/*.sm_80.ptx)")
    ap.add_argument("--runs", type=int, default=3, help="runs per file and bytecode state (default 3)")
    ap.add_argument("--no-strict", dest="strict", action="store_false", help="skip the no-bytecode-at-all runs")
    args = ap.parse_args(argv)
    missing = [str(f) for f in args.files if not f.is_file()]
    if missing:
        ap.error(f"no such file: {', '.join(missing)}")
    print(markdown(measure(args.files or None, runs=args.runs, strict=args.strict)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
