"""JIT cache hit: ``rt.load_module(PTX).get_function(name)`` in-process on a warm cache.

    python bench/jit_hit.py [--runs N] [--no-write] [FILE.ptx KERNEL]

The kernel (default: saxpy of examples/saxpy.sm_80.ptx) is compiled once into a fresh cache
directory, then loaded and fetched ``runs`` times; the figure is the median (target: under 1 ms,
issue 16), beside the 90th percentile and the same loop with one pass-through JIT hook registered
(:mod:`xcc.runtime.jit_hooks`).  Without ``--no-write`` the section replaces the JIT-cache-hit block
of docs/BENCHMARKS.md (between the ``jit_hit`` markers; ``bench/run.py`` includes the same section
when it rewrites the file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("XCC_CACHE_DIR", tempfile.mkdtemp(prefix="xcc-bench-"))

from microbench import BENCHMARKS_MD, write_section  # noqa: E402

from xcc import runtime as rt  # noqa: E402

PTX, KERNEL = ROOT / "examples" / "saxpy.sm_80.ptx", "saxpy"
TARGET_S = 1e-3
BEGIN, END = "<!-- jit_hit:begin -->", "<!-- jit_hit:end -->"


@dataclass(frozen=True)
class HitFigures:
    file: str
    kernel: str
    runs: int
    median: float  # seconds
    p90: float
    hooked_median: float  # with one pass-through hook
    load: tuple[float, float]  # 1-minute load average before and after


def _times(path: Path, kernel: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        rt.load_module(path).get_function(kernel)
        out.append(time.perf_counter() - t0)
    return out


def measure(path: Path = PTX, kernel: str = KERNEL, runs: int = 1000) -> HitFigures:
    """Warm the cache with one compile, then time ``runs`` hits without and with a hook."""
    load0 = os.getloadavg()[0]
    rt.load_module(path).get_function(kernel)  # the miss: compile and store
    _times(path, kernel, 20)  # warm the interpreter's caches
    plain = sorted(_times(path, kernel, runs))

    def passthrough(request, compile):
        return compile()

    rt.jit_hooks.register(passthrough)
    try:
        hooked = _times(path, kernel, runs)
    finally:
        rt.jit_hooks.unregister(passthrough)
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return HitFigures(name, kernel, runs, statistics.median(plain), plain[int(0.9 * (len(plain) - 1))],
                      statistics.median(hooked), (load0, os.getloadavg()[0]))


def markdown_section(fig: HitFigures) -> list[str]:
    """The section's lines, markers included (what bench/run.py puts into docs/BENCHMARKS.md)."""
    verdict = "met" if fig.median < TARGET_S else "NOT met"
    return [BEGIN, "## JIT cache hit", "",
            f"`python bench/jit_hit.py`: `rt.load_module(\"{fig.file}\").get_function(\"{fig.kernel}\")` in-process "
            f"on a warm cache, {fig.runs} runs: median {fig.median * 1e3:.3f} ms (target < 1 ms: {verdict}), "
            f"90th percentile {fig.p90 * 1e3:.3f} ms; with one pass-through JIT hook registered, median "
            f"{fig.hooked_median * 1e3:.3f} ms. 1-minute load average {fig.load[0]:.1f} before, "
            f"{fig.load[1]:.1f} after.", "",
            "A hit parses no PTX: it reads the file, hashes it with the options, the machine description and "
            "xcc's sources into the key (`xcc.cache.cache_key`), reads the entry (diskcache, SQLite), verifies "
            "it as an object file once per distinct entry per process (checksum and decoding; later hits of "
            "the same bytes reuse the verified object) and counts the hit in the cache directory. With no "
            "hook registered no `JitRequest` is built.", END]


def section(runs: int = 1000) -> list[str]:
    """Measure and return the section's lines."""
    return markdown_section(measure(runs=runs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="*", help="FILE.ptx KERNEL (default: examples/saxpy.sm_80.ptx saxpy)")
    ap.add_argument("--runs", type=int, default=1000, help="hits timed (default 1000)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/BENCHMARKS.md alone")
    a = ap.parse_args(argv)
    if a.source and (len(a.source) != 2 or not Path(a.source[0]).is_file()):
        ap.error("give a PTX file that exists and a kernel name, or nothing")
    path, kernel = (Path(a.source[0]).resolve(), a.source[1]) if a.source else (PTX, KERNEL)
    fig = measure(path, kernel, a.runs)
    lines = markdown_section(fig)
    print("\n".join(lines[1:-1]))
    if not a.no_write and (path, kernel) == (PTX, KERNEL):
        write_section(lines, BENCHMARKS_MD, BEGIN, END)
        print(f"\nwritten to {BENCHMARKS_MD.relative_to(ROOT)}")
    return 0 if fig.median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
