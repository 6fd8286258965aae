"""What ptxas's own -O0 costs on a real GPU, beside what xcc's -O0 costs on the cycle model.

    python bench/gpu_opt_levels.py prepare DIR [--arch sm_90]          (here: ptxas, no GPU)
    python bench/gpu_opt_levels.py gpu DIR --json OUT.json             (on the GPU machine; numpy + cuda-python)
    python bench/gpu_opt_levels.py report OUT.json --opt-json OL.json [--md docs/BENCHMARKS.md]

Issue 15 asks that ``-O3`` take at least 1.3x fewer modelled cycles than ``-O0`` over the corpus.  Whether
that is a property of a good optimiser or of the launch sizes is a question about real hardware, so this
asks it there, with NVIDIA's own compiler at both levels on the same (nvcc ``-O3``) PTX:

* ``prepare`` takes a directory written by ``bench/gpu_check.py record`` (the corpus cases with their
  recorded arguments and numpy references) and compiles each PTX file with ``ptxas -O0`` and ``ptxas -O3``
  for the GPU's architecture into ``DIR/cubin/``, with each kernel's SASS instruction count
  (:mod:`ptxas_ref`);
* ``gpu`` loads both cubins of each case (``cuModuleLoadData``), launches the case once at each level and
  checks the outputs against the numpy reference, then times each level as ``bench/gpu_check.py`` times its
  variant pairs (CUDA events around batches of back-to-back launches, median of the batches), beside an
  empty kernel's time per launch (the launch-rate floor);
* ``report`` joins the GPU's ratios with xcc's modelled ``-O0``/``-O3`` cycles from
  ``python bench/opt_levels.py --json OL.json`` and writes the ``gpu-opt`` section of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from gpu_check import (  # noqa: E402
    CudaCallError,
    Driver,
    GpuRunner,
    Params,
    _ptx_with_version,
    build_case_launch,
    check_reference,
    load_case,
    replace_section,
    time_launches,
)

BEGIN, END = "<!-- gpu-opt:begin -->", "<!-- gpu-opt:end -->"
LEVELS = ("0", "3")
EMPTY_PTX = b""".version 8.0
.target sm_80
.address_size 64
.visible .entry empty() { ret; }
"""


def prepare(d: Path, arch: str) -> None:
    import ptxas_ref

    manifest = json.loads((d / "manifest.json").read_text())
    (d / "cubin").mkdir(exist_ok=True)
    counts: dict[str, dict[str, int]] = {}
    for ptx in sorted({c["ptx"] for c in manifest["cases"].values()}):
        text = (d / "ptx" / ptx).read_text()
        src = d / "cubin" / ptx  # the PTX as ptxas reads it: a newer .version lowered to what this ptxas reads
        src.write_text(_ptx_with_version(text, (9, 0)) if _version(text) > (9, 0) else text)
        target = arch + ("a" if re.search(r"^\s*\.target\s+sm_\d+a\b", text, re.M) else "")
        for level in LEVELS:
            out = d / "cubin" / f"{ptx}.O{level}.cubin"
            cmd = ["ptxas", f"-arch={target}", f"-O{level}", str(src), "-o", str(out)]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode:
                print(f"{ptx} -O{level}: ptxas failed: {run.stderr.strip().splitlines()[-1:]}", flush=True)
                out.unlink(missing_ok=True)
                continue
            for sec, code in ptxas_ref.elf_sections(out.read_bytes()).items():
                if sec.startswith(".text."):
                    counts.setdefault(f"{ptx}:{sec[6:]}", {})[level] = ptxas_ref.count_sass(code)
    (d / "opt_manifest.json").write_text(json.dumps({"arch": arch, "sass": counts}, indent=1) + "\n")
    print(f"wrote {d / 'cubin'} ({len(counts)} kernels)")


def _version(text: str) -> tuple[int, int]:
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _run_level(gpu: GpuRunner, meta: dict, arrays: dict, ptx_text: str, cubin: bytes) -> dict:
    drv = gpu.drv
    image = np.frombuffer(cubin, np.uint8).copy()
    module = drv("cuModuleLoadData", int(image.ctypes.data))
    buffers = {i: np.ascontiguousarray(arrays[f"arg{i}"]) for i, k in enumerate(meta["kinds"]) if k == "buffer"}
    dptrs = {}
    try:
        fn = drv("cuModuleGetFunction", module, meta["entry"].encode())
        for i, a in buffers.items():
            dptrs[i] = drv("cuMemAlloc", max(1, a.nbytes))
            if a.nbytes:
                drv("cuMemcpyHtoD", dptrs[i], int(a.ctypes.data), a.nbytes)
        params, _ = build_case_launch(meta, arrays, {i: int(p) for i, p in dptrs.items()}, ptx_text)
        drv.launch(fn, meta["grid"], meta["block"], meta["shared_mem"], gpu.stream, params)
        gpu.sync(30)
        ok = True
        for i in meta["outputs"]:
            got = np.empty_like(buffers[i])
            if got.nbytes:
                drv("cuMemcpyDtoH", int(got.ctypes.data), dptrs[i], got.nbytes)
            if f"ref{i}" in arrays:
                ok = ok and check_reference(got, arrays[f"ref{i}"], meta["rtol"], meta["atol"])["ok"]
        ms = time_launches(gpu, fn, meta["grid"], meta["block"], meta["shared_mem"], params)["ms"]
        return {"ms": ms, "ref_ok": bool(ok)}
    finally:
        for p in dptrs.values():
            drv("cuMemFree", p)
        drv("cuModuleUnload", module)


def gpu_mode(d: Path, json_out: Path) -> int:
    manifest = json.loads((d / "manifest.json").read_text())
    gpu = GpuRunner(Driver("cuda"))
    empty = np.frombuffer(EMPTY_PTX + b"\0", np.uint8).copy()
    module = gpu.drv("cuModuleLoadData", int(empty.ctypes.data))
    fn = gpu.drv("cuModuleGetFunction", module, b"empty")
    floor = time_launches(gpu, fn, (1, 1, 1), (32, 1, 1), 0, Params([]))["ms"]
    result = {"device": gpu.name, "driver": gpu.driver_version, "empty_kernel_ms": floor, "cases": {}}
    print(f"{gpu.name}: empty kernel {floor * 1e3:.2f} us per launch", flush=True)
    for name, entry in manifest["cases"].items():
        meta, arrays = load_case(d / entry["file"])
        ptx_text = (d / "ptx" / entry["ptx"]).read_text()
        row = {"entry": meta["entry"], "ptx": entry["ptx"]}
        t0 = time.perf_counter()
        for level in LEVELS:
            cubin = d / "cubin" / f"{entry['ptx']}.O{level}.cubin"
            if not cubin.exists():
                row[f"O{level}"] = {"error": "no cubin"}
                continue
            try:
                row[f"O{level}"] = _run_level(gpu, meta, arrays, ptx_text, cubin.read_bytes())
            except CudaCallError as e:
                row[f"O{level}"] = {"error": str(e)}
                gpu.reset()
        result["cases"][name] = row
        print(f"{name:34s} " + "  ".join(f"O{lv}={row[f'O{lv}'].get('ms', row[f'O{lv}'].get('error'))}"
                                          for lv in LEVELS) + f"  ({time.perf_counter() - t0:.1f}s)", flush=True)
        json_out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def _geo(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def report(json_in: Path, opt_json: Path, manifest_dir: Path | None, md: Path | None) -> str:
    gpu = json.loads(json_in.read_text())
    xcc = {r["case"]: r for r in json.loads(opt_json.read_text())["rows"]}
    sass = {}
    if manifest_dir is not None and (manifest_dir / "opt_manifest.json").exists():
        sass = json.loads((manifest_dir / "opt_manifest.json").read_text())["sass"]
    floor = gpu["empty_kernel_ms"] * 1e3
    lines = [BEGIN, "## ptxas -O0 against -O3 on the GPU, beside xcc -O0 against -O3 on the cycle model", "",
             f"`python bench/gpu_opt_levels.py` (prepare / gpu / report): each corpus case's PTX (nvcc -O3) compiled by "
             f"`ptxas -O0` and `ptxas -O3`, run on the {gpu['device']} at the corpus's own launch size with its "
             "recorded inputs (both levels' outputs checked against numpy), timed as median microseconds per launch "
             "over batches of back-to-back launches between CUDA events; xcc: modelled cycles of the same case "
             "at `-O0` and `-O3` (`python bench/opt_levels.py --json`). An empty kernel takes "
             f"{floor:.2f} us per launch on this GPU (the launch-rate floor: a kernel near it is bound by launching, "
             "not by its code).", "",
             "| kernel | ptxas SASS -O0 / -O3 | GPU us -O0 / -O3 | GPU O0/O3 | xcc cycles -O0 / -O3 | xcc O0/O3 |",
             "|---|---|---|---|---|---|"]
    rows = []
    for name, row in sorted(gpu["cases"].items()):
        a, b = row.get("O0", {}), row.get("O3", {})
        if "ms" not in a or "ms" not in b or not (a["ref_ok"] and b["ref_ok"]):
            continue
        levels = xcc.get(name, {}).get("levels", {})
        c0, c3 = (levels.get(k, {}).get("cycles") for k in ("0", "3"))
        if c0 and c3:
            rows.append((name, row, a["ms"] * 1e3, b["ms"] * 1e3, c0, c3))
    plateau = sorted(r[3] for r in rows)[len(rows) // 2] if rows else 0.0
    seen = []  # kernels whose work the GPU shows: a level's launch clearly above the common plateau
    for name, row, t0, t3, c0, c3 in rows:
        s = sass.get(f"{row['ptx']}:{row['entry']}", {})
        mark = max(t0, t3) > 1.25 * plateau
        if mark:
            seen.append((t0 / t3, c0 / c3))
        lines.append(f"| {name}{' *' if mark else ''} | {s.get('0', '?')} / {s.get('3', '?')} | {t0:.2f} / {t3:.2f} "
                     f"| {t0 / t3:.2f} | {c0} / {c3} | {c0 / c3:.2f} |")
    lines += ["", f"The median -O3 launch takes {plateau:.2f} us, the time of launching a kernel and of its first round "
              "trip to memory, which neither level changes; most of the corpus's launches take about that at both levels. "
              f"Geometric means over all {len(rows)} kernels: GPU (ptxas) -O0/-O3 **{_geo([r[2] / r[3] for r in rows]):.3f}**, "
              f"xcc -O0/-O3 **{_geo([r[4] / r[5] for r in rows]):.3f}**. Over the {len(seen)} kernels marked * (a level's "
              f"launch above 1.25 times that median, so the GPU shows their code): GPU **{_geo([g for g, _ in seen]):.3f}**, "
              f"xcc **{_geo([x for _, x in seen]):.3f}**.", END]
    text = "\n".join(lines) + "\n"
    if md is not None:
        replace_section(md, BEGIN, END, text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir", type=Path)
    p.add_argument("--arch", default="sm_90")
    g = sub.add_parser("gpu")
    g.add_argument("dir", type=Path)
    g.add_argument("--json", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("json", type=Path)
    r.add_argument("--opt-json", type=Path, required=True)
    r.add_argument("--dir", type=Path, help="the prepared directory (for the SASS counts)")
    r.add_argument("--md", type=Path)
    args = ap.parse_args(argv)
    if args.mode == "prepare":
        prepare(args.dir, args.arch)
        return 0
    if args.mode == "gpu":
        return gpu_mode(args.dir, args.json)
    print(report(args.json, args.opt_json, args.dir, args.md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
