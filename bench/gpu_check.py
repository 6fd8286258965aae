"""Run the kernel corpus on a real NVIDIA GPU and compare it bit for bit with xcc's ISA interpreter.

    python bench/gpu_check.py record --out DIR [--cases a,b] [--no-pairs]   (here, with xcc)
    python bench/gpu_check.py gpu DIR --json OUT.json [--dry-run] [--driver cuda|xcc] [--pairs all|small|none]
    python bench/gpu_check.py report OUT.json [--md docs/BENCHMARKS.md]

``record`` runs every case of ``tests/kernel_cases.py``'s ``ALL_CASES`` that the backend compiles
(``"isa"`` in its engines) and that is not xfail, on its default arch's PTX (sm_80 where the case has
it; the LLVM, Triton and sm_90-only cases on their one file), on the ISA interpreter at -O3 with
``timing=False``, from a fixed seed. It writes ``DIR/cases/<case>.npz`` (the arguments, launch shape,
which arguments are outputs, xcc's outputs, the numpy reference and its tolerances, and the PTX
features whose results PTX leaves open), ``DIR/ptx/`` (the PTX files) and ``DIR/manifest.json``. It
also runs kernel variant pairs with the cycle model on (``timing=True``) and records their cycles.

``gpu`` needs only numpy and cuda-python's ``cuda.bindings.driver``: it imports nothing from xcc (so it
runs where xcc is not installed). It JIT-loads each PTX with ``cuModuleLoadData``, launches each case
with the recorded arguments, and compares the outputs with xcc's bit for bit and with the reference
within the case's tolerance; then it times the variant pairs with CUDA events, at the size xcc ran and
at a larger one, and says whether the GPU ranks each pair as the cycle model does. ``--dry-run`` builds
every launch (argument packing checked against the PTX parameter lists) without a driver call;
``--driver xcc`` runs the same code on ``xcc.runtime.driver`` (cuda-python's shape) as a local self-test.

``report`` writes the results as the ``gpu`` section of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261117
FORMAT = 1
BEGIN, END = "<!-- gpu:begin -->", "<!-- gpu:end -->"

# ----------------------------------------------------------------------------------------------------
# PTX helpers (both modes): functions, parameter lists, the features whose results PTX leaves open
# ----------------------------------------------------------------------------------------------------

_FUNC_RE = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
_CALL_RE = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([%\w$]+)")
_PARAM_RE = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(?:\.ptr\s*(?:\.\w+\s*)*)?([\w$]+)\s*(?:\[(\d+)\])?")
_TYPE_SIZE = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
              "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "f16x2": 4, "bf16x2": 4, "b128": 16}

# feature -> regex over a kernel's PTX (its .entry and the .funcs it reaches); the groups say why a GPU
# may legitimately return other bits than xcc (docs/semantics.md, "Where PTX leaves the result open")
FEATURES = {
    "approx": r"\b(?:sin|cos|ex2|lg2|rsqrt|rcp|sqrt|tanh|div)\.approx[\w.]*|\bdiv\.full\.f32",
    "float_atomic": r"\b(?:atom|red)\.[\w.]*\.add[\w.]*\.(?:f16|bf16|f32|f64)\b|\b(?:atom|red)\.[\w.]*\.add\.noftz[\w.]*",
    "atomic_race": r"\batom\.[\w.]*\.(?:exch|cas)\.[\w.]+",
    "mma": r"\b(?:mma|wmma|wgmma)\.[\w.]+",
    "warp": r"\b(?:shfl|vote|match|redux)\.[\w.]*sync[\w.]*|\bactivemask\.b32",
    "int_div": r"\b(?:div|rem)\.[su](?:32|64)\b",
    "clock": r"%clock(?:64)?\b|%globaltimer\b",
    "nanosleep": r"\bnanosleep\.u32",
}
# a float mul and an add/sub without a rounding modifier: PTX lets the code generator fuse them into an fma
# (PTX ISA, add/sub/mul .f32/.f64: "mul/add sequences with no rounding modifiers may be optimized to use
# fused-multiply-add instructions on the target device"); ptxas does, xcc rounds each instruction
_CONTRACT_MUL = r"\bmul(?:\.ftz)?(?:\.sat)?\.f(?:32|64)\b"
_CONTRACT_ADD = r"\b(?:add|sub)(?:\.ftz)?(?:\.sat)?\.f(?:32|64)\b"
# feature -> the docs/semantics.md row(s) it falls under
SEMANTICS_ROWS = {
    "approx": "`.approx` f32 functions (f64 result rounded to nearest), `div.approx`/`div.full` (correctly rounded)",
    "float_atomic": "float atomics: the order of the adds (not fixed by PTX) changes the rounding",
    "atomic_race": "`atom.exch`/`atom.cas`: which thread wins is up to the hardware",
    "mma": "f16/bf16 `mma` summation order and precision (exact sum rounded once)",
    "warp": "`shfl`/`vote`/`match`/`redux` with inactive or non-member lanes",
    "int_div": "integer `div`/`rem` by zero",
    "clock": "`%clock`, `%globaltimer`",
    "nanosleep": "`nanosleep`",
    "contract": "`mul` then `add`/`sub` (.f32/.f64) without a rounding modifier, which PTX lets the code generator "
                "fuse into one fma (ptxas does; xcc rounds each)",
    "nan": "NaN results (xcc follows the H200's rules of bench/gpu_semantics.py, except for neg/abs)",
}


def ptx_functions(text: str) -> dict[str, tuple[str, str, str]]:
    """name -> (kind "entry"/"func", header (parameter list), body) of each defined function of ``text``."""
    out = {}
    for m in _FUNC_RE.finditer(text):
        i, depth = m.end(), 0
        while i < len(text):
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif depth == 0 and c in ";{":
                break
            i += 1
        if i >= len(text) or text[i] == ";":
            continue  # a declaration
        j, braces = i, 0
        while j < len(text):
            if text[j] == "{":
                braces += 1
            elif text[j] == "}":
                braces -= 1
                if braces == 0:
                    break
            j += 1
        out[m.group(2)] = (m.group(1), text[m.end():i], text[i:j + 1])
    return out


def entry_params(text: str, entry: str) -> list[tuple[str, int]]:
    """(name, byte size) of each parameter of ``.entry entry`` in PTX ``text``."""
    fns = ptx_functions(text)
    if entry not in fns or fns[entry][0] != "entry":
        raise KeyError(f"no .entry {entry} in the PTX")
    params = []
    for m in _PARAM_RE.finditer(fns[entry][1]):
        size = _TYPE_SIZE.get(m.group(2))
        if size is None:
            raise ValueError(f"{entry}: parameter {m.group(3)} of unknown type .{m.group(2)}")
        params.append((m.group(3), size * int(m.group(4) or 1)))
    return params


def kernel_features(text: str, entry: str) -> dict[str, list[str]]:
    """The FEATURES found in ``entry`` and the functions it calls (all of them after an indirect call)."""
    fns = ptx_functions(text)
    seen, todo, bodies = set(), [entry], []
    while todo:
        name = todo.pop()
        if name in seen or name not in fns:
            continue
        seen.add(name)
        body = fns[name][2]
        bodies.append(body)
        for callee in _CALL_RE.findall(body):
            if callee.startswith("%"):  # indirect call: any function of the file may run
                todo += [n for n, f in fns.items() if f[0] == "func"]
            else:
                todo.append(callee)
    code = "\n".join(bodies)
    found = {}
    for feat, rx in FEATURES.items():
        hits = sorted(set(re.findall(rx, code)))
        if hits:
            found[feat] = hits
    muls, adds = set(re.findall(_CONTRACT_MUL, code)), set(re.findall(_CONTRACT_ADD, code))
    pairs = {i for w in ("f32", "f64") for i in muls | adds
             if i.endswith(w) and any(m.endswith(w) for m in muls) and any(a.endswith(w) for a in adds)}
    if pairs:
        found["contract"] = sorted(pairs)
    return found


# ----------------------------------------------------------------------------------------------------
# record mode (xcc)
# ----------------------------------------------------------------------------------------------------

def _flat_ptx_name(rel: str) -> str:
    return rel.replace("/", "__")


def _unflat_ptx_name(name: str) -> str:
    return name.replace("__", "/")


def _variant_pairs() -> list[dict]:
    """Kernel variant pairs where the cycle model ranks one clearly ahead: each side a launch spec (PTX
    file relative to examples/, entry, shape, parameters), at the size xcc runs ("xcc") and a larger one
    for the GPU ("large"). Buffers are device allocations filled with a 32-bit pattern."""

    def buf(nbytes, fill=0):
        return {"kind": "buffer", "nbytes": int(nbytes), "fill": int(fill)}

    def i32(v):
        return {"kind": "scalar", "dtype": "<i4", "value": int(v)}

    def transpose(entry, n):
        t = -(-n // 32)
        return {"ptx": "transpose_shared.sm_80.ptx", "entry": entry, "grid": [t, t, 1], "block": [32, 8, 1],
                "shared_mem": 0, "params": [i32(n), i32(n), buf(4 * n * n, 0x3F800000), buf(4 * n * n)]}

    def smem(stride, iters):
        return {"ptx": "microbench.sm_80.ptx", "entry": "smem_stride", "grid": [1, 1, 1], "block": [32, 1, 1],
                "shared_mem": 0, "params": [buf(4 * 32), i32(stride), i32(iters)]}

    def gload(stride, blocks):
        n = blocks * 256
        return {"ptx": "microbench.sm_80.ptx", "entry": "gload_stride", "grid": [blocks, 1, 1],
                "block": [256, 1, 1], "shared_mem": 0,
                "params": [buf(4 * n * stride, 0x3F800000), buf(4 * n), i32(stride)]}

    def gemm(kind, n):
        ones_f32, ones_f16x2 = 0x3F800000, 0x3C003C00
        if kind == "simt":
            return {"ptx": "gemm_simt.sm_80.ptx", "entry": "_Z14gemm_tiled_f32iiiPKfS0_Pf",
                    "grid": [n // 16, n // 16, 1], "block": [16, 16, 1], "shared_mem": 0,
                    "params": [i32(n), i32(n), i32(n), buf(4 * n * n, ones_f32), buf(4 * n * n, ones_f32),
                               buf(4 * n * n)]}
        return {"ptx": "gemm_tensorcore.sm_80.ptx", "entry": "_Z17gemm_mma_m16n8k16iiiPK6__halfS1_Pf",
                "grid": [n // 8, n // 16, 1], "block": [32, 1, 1], "shared_mem": 0,
                "params": [i32(n), i32(n), i32(n), buf(2 * n * n, ones_f16x2), buf(2 * n * n, ones_f16x2),
                           buf(4 * n * n)]}

    return [
        {"name": "transpose: 32x33 padded tile vs 32x32 (32-way bank conflicts)",
         "a": "transpose_shared", "b": "transpose_shared_unpadded",
         "sizes": {"xcc": [transpose("_Z16transpose_sharediiPKfPf", 512),
                           transpose("_Z25transpose_shared_unpaddediiPKfPf", 512)],
                   "large": [transpose("_Z16transpose_sharediiPKfPf", 8192),
                             transpose("_Z25transpose_shared_unpaddediiPKfPf", 8192)]},
         "size_text": {"xcc": "512x512", "large": "8192x8192"}},
        {"name": "shared loads, one warp: stride 1 vs stride 32 words (32-way bank conflicts)",
         "a": "smem_stride(1)", "b": "smem_stride(32)",
         "sizes": {"xcc": [smem(1, 64), smem(32, 64)], "large": [smem(1, 4096), smem(32, 4096)]},
         "size_text": {"xcc": "64x16 loads", "large": "4096x16 loads"}},
        {"name": "global loads: stride 1 vs stride 32 floats (4 vs 32 sectors per request)",
         "a": "gload_stride(1)", "b": "gload_stride(32)",
         "sizes": {"xcc": [gload(1, 256), gload(32, 256)], "large": [gload(1, 16384), gload(32, 16384)]},
         "size_text": {"xcc": "64K threads", "large": "4M threads"}},
        {"name": "GEMM: SIMT f32 16x16 tiles vs mma.sync m16n8k16 f16 (one warp per 16x8 tile)",
         "a": "gemm_tiled_f32", "b": "gemm_mma_m16n8k16",
         "sizes": {"xcc": [gemm("simt", 256), gemm("mma", 256)], "large": [gemm("simt", 2048), gemm("mma", 2048)]},
         "size_text": {"xcc": "256^3", "large": "2048^3"}},
    ]


def _xcc_pair_cycles(spec: dict) -> tuple[int, float]:
    """Modelled cycles (and host seconds) of one launch spec on xcc, with the cycle model on."""
    from xcc import runtime as rt

    dev = rt.Device()
    mod = rt.load_module(ROOT / "examples" / spec["ptx"], opt_level=3, device=dev)
    fn = mod.get_function(spec["entry"])
    args = []
    for p in spec["params"]:
        if p["kind"] == "scalar":
            args.append(np.dtype(p["dtype"]).type(p["value"]))
        else:
            words = np.full(-(-p["nbytes"] // 4), p["fill"], np.uint32)
            args.append(rt.to_device(words.view(np.uint8)[:p["nbytes"]].copy(), dev))
    t0 = time.perf_counter()
    stats = fn.launch(tuple(spec["grid"]), tuple(spec["block"]), args, spec["shared_mem"], timing=True)
    return int(stats.cycles), time.perf_counter() - t0


def record(out: Path, only: list[str] | None, pairs: bool, opt_level: int = 3) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import kernel_cases as kc

    from xcc import runtime as rt

    out.mkdir(parents=True, exist_ok=True)
    (out / "cases").mkdir(exist_ok=True)
    (out / "ptx").mkdir(exist_ok=True)
    cases = [c for c in kc.ALL_CASES if "isa" in c.engines and not c.xfail]
    if only:
        unknown = set(only) - {c.name for c in cases}
        if unknown:
            raise SystemExit(f"unknown or skipped cases: {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.name in only]
    manifest = {"format": FORMAT, "seed": SEED, "opt_level": opt_level, "created": _now(), "xcc_commit": _git_rev(),
                "cases": {}, "pairs": []}
    for case in cases:
        arch = case.default_arch
        path = kc.ptx_path(case, arch)
        rel = str(path.relative_to(kc.EXAMPLES_DIR))
        ptx_name = _flat_ptx_name(rel)
        if not (out / "ptx" / ptx_name).exists():
            shutil.copyfile(path, out / "ptx" / ptx_name)
        text = path.read_text()
        launch = case.make(np.random.default_rng(SEED))
        arrays: dict[str, np.ndarray] = {}
        kinds = []
        for i, a in enumerate(launch.args):
            if isinstance(a, np.ndarray):
                arrays[f"arg{i}"] = np.ascontiguousarray(a).copy()
                kinds.append("buffer")
            elif isinstance(a, np.generic):
                arrays[f"arg{i}"] = np.asarray(a).copy()
                kinds.append("scalar")
            else:
                raise TypeError(f"{case.name}: argument {i} is a {type(a).__name__}, not a numpy value")
        params = entry_params(text, case.entry)
        if len(params) != len(launch.args):
            raise ValueError(f"{case.name}: {len(launch.args)} arguments for {len(params)} parameters")
        meta = {"name": case.name, "entry": case.entry, "ptx": ptx_name, "arch": arch,
                "grid": list(launch.grid), "block": list(launch.block), "shared_mem": case.shared_mem,
                "outputs": list(launch.outputs), "expected": sorted(launch.expected), "kinds": kinds,
                "rtol": case.rtol, "atol": case.atol, "features": kernel_features(text, case.entry),
                "xcc_error": None}
        t0 = time.perf_counter()
        try:
            dev = rt.Device()
            mod = rt.load_module(path, opt_level=opt_level, device=dev)
            fn = mod.get_function(case.entry)
            dev_args = [rt.to_device(a, dev) if isinstance(a, np.ndarray) else a for a in launch.args]
            stats = fn.launch(launch.grid, launch.block, dev_args, case.shared_mem, timing=False)
            for i in launch.outputs:
                arrays[f"xcc{i}"] = dev_args[i].copy_to_host()
            meta["thread_instructions"] = int(stats.thread_instructions)
        except Exception as e:  # recorded, not fatal: the GPU still runs the case against the reference
            meta["xcc_error"] = f"{type(e).__name__}: {e}"
        meta["xcc_seconds"] = round(time.perf_counter() - t0, 3)
        for i, want in launch.expected.items():
            arrays[f"ref{i}"] = np.ascontiguousarray(want)
        np.savez_compressed(out / "cases" / f"{case.name}.npz", meta=np.array(json.dumps(meta)), **arrays)
        manifest["cases"][case.name] = {"file": f"cases/{case.name}.npz", "ptx": ptx_name, "entry": case.entry,
                                        "arch": arch}
        status = "ok" if meta["xcc_error"] is None else meta["xcc_error"]
        print(f"{case.name:34s} {arch:7s} {meta['xcc_seconds']:7.2f}s  {status}", flush=True)
    if pairs:
        for pair in _variant_pairs():
            cycles = []
            for spec in pair["sizes"]["xcc"]:
                c, secs = _xcc_pair_cycles(spec)
                cycles.append(c)
                print(f"  pair {spec['entry']}: {c} cycles ({secs:.1f}s)", flush=True)
            pair["xcc_cycles"] = cycles
            for spec in (s for specs in pair["sizes"].values() for s in specs):
                name = _flat_ptx_name(spec["ptx"])
                if not (out / "ptx" / name).exists():
                    shutil.copyfile(ROOT / "examples" / spec["ptx"], out / "ptx" / name)
                spec["ptx"] = name
            manifest["pairs"].append(pair)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out} ({len(manifest['cases'])} cases, {len(manifest['pairs'])} pairs, {total / 2**20:.1f} MiB)")


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def _git_rev() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# ----------------------------------------------------------------------------------------------------
# gpu mode: numpy + cuda.bindings.driver only
# ----------------------------------------------------------------------------------------------------

class CudaCallError(RuntimeError):
    def __init__(self, call: str, code: str):
        super().__init__(f"{call}: {code}")
        self.call, self.code = call, code


class Driver:
    """Thin wrapper over cuda-python's driver module (or xcc's, shaped like it): each call returns its
    values or raises CudaCallError with the CUresult's name."""

    def __init__(self, which: str):
        if which == "xcc":
            from xcc.runtime import driver as cu  # local self-test only
        else:
            try:
                from cuda.bindings import driver as cu
            except ImportError:  # cuda-python < 12.6
                from cuda import cuda as cu
        self.cu = cu
        self.which = which

    def __call__(self, name: str, *args):
        res = getattr(self.cu, name)(*args)
        err, vals = res[0], res[1:]
        if int(err) != 0:
            raise CudaCallError(name, getattr(err, "name", str(err)))
        return vals[0] if len(vals) == 1 else (vals or None)

    def has(self, name: str) -> bool:
        return hasattr(self.cu, name)

    _extra = 0

    def launch(self, fn, grid, block, shared_mem: int, stream, params: Params) -> None:
        """cuLaunchKernel with ``kernelParams`` the address of the pointer array (``extra`` 0, or None
        where a binding refuses 0)."""
        try:
            self("cuLaunchKernel", fn, *grid, *block, shared_mem, stream, params.address, self._extra)
        except TypeError:
            if self._extra is None:
                raise
            self._extra = None
            self("cuLaunchKernel", fn, *grid, *block, shared_mem, stream, params.address, None)


class Params:
    """``kernelParams`` as the CUDA driver reads it: an array of pointers, each to a zero-filled,
    8-byte-aligned slot holding one argument's bytes (a buffer argument: its 64-bit device address)."""

    def __init__(self, values: list[bytes], sizes: list[int] | None = None):
        if sizes is not None:
            if len(values) != len(sizes):
                raise ValueError(f"{len(values)} arguments for {len(sizes)} parameters")
            for i, (v, s) in enumerate(zip(values, sizes)):
                if len(v) != s:
                    raise ValueError(f"argument {i}: {len(v)} bytes for a {s}-byte parameter")
        self.slots = []
        for v in values:
            slot = np.zeros(max(1, -(-len(v) // 8)), np.uint64)
            slot.view(np.uint8)[:len(v)] = np.frombuffer(v, np.uint8)
            self.slots.append(slot)
        self.pointers = np.array([s.ctypes.data for s in self.slots], np.uint64)

    @property
    def address(self) -> int:
        return int(self.pointers.ctypes.data) if len(self.slots) else 0

    def read_back(self) -> list[bytes]:
        """What the driver would read through the pointer array (the dry run's check of the packing)."""
        out = []
        for i, ptr in enumerate(np.ctypeslib.as_array((ctypes.c_uint64 * len(self.slots)).from_address(self.address))):
            out.append(ctypes.string_at(int(ptr), self.slots[i].nbytes))
        return out


def load_case(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(str(arrays.pop("meta"))), arrays


def _bits(a: np.ndarray) -> np.ndarray:
    """Each element's raw bits as an unsigned integer array (or rows of bytes for other sizes)."""
    a = np.ascontiguousarray(a)
    if a.dtype.itemsize in (1, 2, 4, 8) and a.dtype.kind != "V":
        return a.view(f"<u{a.dtype.itemsize}").reshape(-1)
    return a.view(np.uint8).reshape(a.size, a.dtype.itemsize)


def _fmt(v) -> str:
    if isinstance(v, np.floating):
        return repr(float(v))
    return repr(v.item() if isinstance(v, np.generic) else v)


def _ulp_diff(x: np.ndarray, y: np.ndarray) -> int | None:
    """Largest distance in units in the last place between two float arrays (finite elements)."""
    if x.dtype.kind != "f" or x.dtype.itemsize not in (2, 4, 8):
        return None
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return 0
    it = np.dtype(f"<i{x.dtype.itemsize}")
    bx, by = x[ok].view(it).astype(np.int64), y[ok].view(it).astype(np.int64)
    mn = np.int64(np.iinfo(it).min)
    ox = np.where(bx < 0, mn - bx, bx)  # order-preserving map of the bit patterns
    oy = np.where(by < 0, mn - by, by)
    return int(np.max(np.abs(ox - oy)))


def compare_arrays(got: np.ndarray, want: np.ndarray) -> dict:
    """Bit-for-bit comparison of ``got`` (GPU) with ``want`` (xcc): count, first difference, ulps."""
    g, w = _bits(got), _bits(want)
    diff = g != w if g.ndim == 1 else (g != w).any(axis=1)
    res = {"bit_exact": bool(np.array_equal(got.view(np.uint8), want.view(np.uint8))), "n": int(got.size),
           "n_diff": int(diff.sum())}
    if res["n_diff"]:
        idx = np.flatnonzero(diff)
        i = int(idx[0])
        res["first_diff"] = {"index": i, "gpu": _fmt(got.reshape(-1)[i]), "xcc": _fmt(want.reshape(-1)[i])}
        if g.ndim == 1:
            width = 2 * got.dtype.itemsize
            res["first_diff"].update(gpu_bits=f"0x{int(g[i]):0{width}x}", xcc_bits=f"0x{int(w[i]):0{width}x}")
        if got.dtype.kind == "f":
            gd, wd = got.reshape(-1)[idx], want.reshape(-1)[idx]
            res["all_nan"] = bool(np.isnan(gd).all() and np.isnan(wd).all())
            res["max_ulp"] = _ulp_diff(gd, wd)
            fin = np.isfinite(gd) & np.isfinite(wd)
            if fin.any():
                res["max_abs_diff"] = float(np.max(np.abs(gd[fin].astype(np.float64) - wd[fin].astype(np.float64))))
    return res


def check_reference(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> dict:
    """The test suite's check: bit-exact when both tolerances are 0, else |got - want| <= atol + rtol |want|."""
    if rtol or atol:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        n_bad = int(bad.sum())
        res = {"ok": n_bad == 0, "n_bad": n_bad, "tolerance": f"rtol={rtol:g} atol={atol:g}"}
        if n_bad:
            i = int(np.flatnonzero(bad.reshape(-1))[0])
            res["first_bad"] = {"index": i, "gpu": _fmt(got.reshape(-1)[i]), "ref": _fmt(want.reshape(-1)[i])}
        return res
    c = compare_arrays(got, want)
    res = {"ok": c["bit_exact"], "n_bad": c["n_diff"], "tolerance": "bit-exact"}
    if c["n_diff"]:
        res["first_bad"] = {"index": c["first_diff"]["index"], "gpu": c["first_diff"]["gpu"],
                            "ref": c["first_diff"]["xcc"]}
    return res


def explain(features: dict[str, list[str]], outputs: list[dict]) -> list[str]:
    """The features a difference between GPU and xcc is consistent with (docs/semantics.md's open cases)."""
    differing = [o for o in outputs if not o.get("bit_exact", True)]
    if not differing:
        return []
    if all(o.get("all_nan") for o in differing):
        return ["nan"]
    primary = [f for f in ("approx", "mma", "contract", "float_atomic", "atomic_race") if f in features]
    # the others change results only in corner cases (a lane outside the mask, a zero divisor, a timer):
    # named only when nothing above explains the difference
    return primary or [f for f in ("warp", "int_div", "clock", "nanosleep") if f in features]


def _max_ptx_version(driver_version: int) -> tuple[int, int] | None:
    """The newest PTX ISA the driver's JIT reads (CUDA 12.x: 8.x; 13.0: 9.0)."""
    major, minor = driver_version // 1000, (driver_version % 1000) // 10
    table = {(12, 0): (8, 0), (12, 1): (8, 1), (12, 2): (8, 2), (12, 3): (8, 3), (12, 4): (8, 4), (12, 5): (8, 5),
             (12, 6): (8, 5), (12, 8): (8, 7), (12, 9): (8, 8), (13, 0): (9, 0), (13, 1): (9, 1), (13, 2): (9, 2)}
    return table.get((major, minor))


class GpuRunner:
    def __init__(self, drv: Driver):
        self.drv = drv
        drv("cuInit", 0)
        self.dev = drv("cuDeviceGet", 0)
        self.ctx = None
        self._open_context()
        name = drv("cuDeviceGetName", 256, self.dev)
        self.name = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
        self.driver_version = int(drv("cuDriverGetVersion"))

    def _open_context(self):
        self.ctx = self.drv("cuDevicePrimaryCtxRetain", self.dev)
        self.drv("cuCtxSetCurrent", self.ctx)
        self.stream = self.drv("cuStreamCreate", 0)

    def reset(self):
        """After a sticky error (a fault, a trap, an assert): a fresh primary context."""
        for name, args in (("cuDevicePrimaryCtxRelease", (self.dev,)), ("cuDevicePrimaryCtxReset", (self.dev,))):
            if self.drv.has(name):
                try:
                    self.drv(name, *args)
                except CudaCallError:
                    pass
        self._open_context()

    def attribute(self, name: str) -> int | None:
        try:
            return int(self.drv("cuDeviceGetAttribute", getattr(self.drv.cu.CUdevice_attribute, name), self.dev))
        except (AttributeError, CudaCallError):
            return None

    def load(self, ptx: bytes):
        image = np.frombuffer(ptx + b"\0", np.uint8).copy()
        return self.drv("cuModuleLoadData", int(image.ctypes.data))

    def sync(self, timeout_s: float) -> None:
        """Wait for the stream, polling, so that a hung kernel ends the run with what it has."""
        deadline = time.monotonic() + timeout_s
        while True:
            err = self.drv.cu.cuStreamQuery(self.stream)[0]
            if int(err) == 0:
                return
            code = getattr(err, "name", str(err))
            if code != "CUDA_ERROR_NOT_READY":
                raise CudaCallError("cuStreamQuery", code)
            if time.monotonic() > deadline:
                raise TimeoutError(f"the kernel ran past {timeout_s:.0f} s")
            time.sleep(0.0005)

    def elapsed_ms(self, start, end) -> float:
        name = "cuEventElapsedTime" if self.drv.has("cuEventElapsedTime") else "cuEventElapsedTime_v2"
        return float(self.drv(name, start, end))


def build_case_launch(meta: dict, arrays: dict[str, np.ndarray], addresses: dict[int, int],
                      ptx_text: str) -> tuple[Params, list[int]]:
    """The kernelParams of a recorded case (``addresses``: arg index -> device address of each buffer),
    checked against the .entry's parameter list; and the parameter sizes."""
    sizes = [s for _, s in entry_params(ptx_text, meta["entry"])]
    values = []
    for i, kind in enumerate(meta["kinds"]):
        if kind == "buffer":
            values.append(int(addresses[i]).to_bytes(8, "little"))
        else:
            values.append(np.ascontiguousarray(arrays[f"arg{i}"]).tobytes())
    return Params(values, sizes), sizes


def build_spec_params(spec: dict, addresses: list[int | None], ptx_text: str) -> Params:
    values = []
    for p, addr in zip(spec["params"], addresses):
        if p["kind"] == "buffer":
            values.append(int(addr).to_bytes(8, "little"))
        else:
            values.append(np.array(p["value"], np.dtype(p["dtype"])).tobytes())
    return Params(values, [s for _, s in entry_params(ptx_text, spec["entry"])])


def _ptx_with_version(text: str, version: tuple[int, int]) -> str:
    return re.sub(r"^(\s*\.version\s+)\d+\.\d+", lambda m: f"{m.group(1)}{version[0]}.{version[1]}", text, count=1,
                  flags=re.M)


def run_case_gpu(gpu: GpuRunner | None, meta: dict, arrays: dict[str, np.ndarray], ptx_text: str,
                 timeout_s: float, keep: dict[str, np.ndarray] | None = None) -> dict:
    """One recorded case on the GPU (``gpu`` None: the dry run, which builds the launch only); ``keep``
    receives the GPU's output buffers (``<case>.arg<i>``) that differ from xcc or from the reference."""
    res = {"name": meta["name"], "entry": meta["entry"], "ptx": meta["ptx"], "arch": meta["arch"],
           "features": meta["features"], "tolerance": {"rtol": meta["rtol"], "atol": meta["atol"]},
           "xcc_error": meta.get("xcc_error"), "status": "ok"}
    buffers = {i: np.ascontiguousarray(arrays[f"arg{i}"]) for i, k in enumerate(meta["kinds"]) if k == "buffer"}
    if gpu is None:
        fake = {i: 0x7F0000000000 + 0x100000 * n for n, i in enumerate(buffers)}
        params, _ = build_case_launch(meta, arrays, fake, ptx_text)
        res["status"] = "dry-run"
        res["param_bytes"] = [b.hex() for b in params.read_back()]
        return res
    drv = gpu.drv
    module, dptrs = None, {}
    try:
        t0 = time.perf_counter()
        try:
            module = gpu.load(ptx_text.encode())
        except CudaCallError as e:
            top = _max_ptx_version(gpu.driver_version)
            if e.code != "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" or top is None:
                raise
            module = gpu.load(_ptx_with_version(ptx_text, top).encode())
            res["ptx_version_lowered_to"] = f"{top[0]}.{top[1]}"
        res["load_ms"] = round(1e3 * (time.perf_counter() - t0), 1)
        fn = drv("cuModuleGetFunction", module, meta["entry"].encode())
        for i, a in buffers.items():
            dptrs[i] = drv("cuMemAlloc", max(1, a.nbytes))
            if a.nbytes:
                drv("cuMemcpyHtoD", dptrs[i], int(a.ctypes.data), a.nbytes)
        params, _ = build_case_launch(meta, arrays, {i: int(p) for i, p in dptrs.items()}, ptx_text)
        drv("cuCtxSynchronize")
        t0 = time.perf_counter()
        drv.launch(fn, meta["grid"], meta["block"], meta["shared_mem"], gpu.stream, params)
        gpu.sync(timeout_s)
        res["kernel_ms"] = round(1e3 * (time.perf_counter() - t0), 3)
        outputs = []
        for i in meta["outputs"]:
            got = np.empty_like(buffers[i])
            if got.nbytes:
                drv("cuMemcpyDtoH", int(got.ctypes.data), dptrs[i], got.nbytes)
            o = {"arg": i, "dtype": str(got.dtype)}
            if f"xcc{i}" in arrays:
                o.update(compare_arrays(got, arrays[f"xcc{i}"]))
            if f"ref{i}" in arrays:
                o["ref"] = check_reference(got, arrays[f"ref{i}"], meta["rtol"], meta["atol"])
            if keep is not None and not (o.get("bit_exact", False) and o.get("ref", {}).get("ok", True)):
                keep[f"{meta['name']}.arg{i}"] = got
            outputs.append(o)
        res["outputs"] = outputs
        res["bit_exact"] = all(o.get("bit_exact", False) for o in outputs) if meta.get("xcc_error") is None else None
        res["ref_ok"] = all(o["ref"]["ok"] for o in outputs if "ref" in o)
        res["explained_by"] = explain(meta["features"], outputs)
    except TimeoutError:
        raise
    except CudaCallError as e:
        res["status"] = "error"
        res["error"] = str(e)
        if e.call in ("cuLaunchKernel", "cuStreamQuery", "cuMemcpyDtoH", "cuCtxSynchronize"):
            gpu.reset()  # a sticky error leaves the context unusable
            module, dptrs = None, {}
    except Exception as e:  # a conversion or packing problem: reported, the run goes on
        res["status"] = "error"
        res["error"] = f"{type(e).__name__}: {e}"
    finally:
        for p in dptrs.values():
            try:
                drv("cuMemFree", p)
            except CudaCallError:
                pass
        if module is not None:
            try:
                drv("cuModuleUnload", module)
            except CudaCallError:
                pass
    return res


def time_launches(gpu: GpuRunner, fn, grid, block, shared_mem: int, params: Params, target_ms: float = 20.0,
                  trials: int = 5, max_launches: int = 2000) -> dict:
    """Median time per launch of ``fn``, with CUDA events around batches of back-to-back launches: one warm-up
    batch, then ``trials`` batches of as many launches as take about ``target_ms`` (at most ``max_launches``)."""
    drv = gpu.drv
    start, end = drv("cuEventCreate", 0), drv("cuEventCreate", 0)

    def batch(n: int) -> float:
        drv("cuEventRecord", start, gpu.stream)
        for _ in range(n):
            drv.launch(fn, grid, block, shared_mem, gpu.stream, params)
        drv("cuEventRecord", end, gpu.stream)
        gpu.sync(60)
        return gpu.elapsed_ms(start, end) / n

    batch(2)  # warm-up
    one = batch(1)
    n = int(min(max_launches, max(1, math.ceil(target_ms / max(one, 1e-4)))))
    times = sorted(batch(n) for _ in range(trials))
    drv("cuEventDestroy", start)
    drv("cuEventDestroy", end)
    return {"ms": times[len(times) // 2], "min_ms": times[0], "launches": n, "trials": trials}


def time_spec(gpu: GpuRunner, spec: dict, ptx_text: str, target_ms: float = 20.0, trials: int = 5,
              max_launches: int = 2000) -> dict:
    """Median time per launch of one launch spec, with CUDA events around a batch of launches."""
    drv = gpu.drv
    module = gpu.load(ptx_text.encode())
    fn = drv("cuModuleGetFunction", module, spec["entry"].encode())
    ptrs = []
    try:
        addresses = []
        for p in spec["params"]:
            if p["kind"] == "buffer":
                d = drv("cuMemAlloc", p["nbytes"])
                ptrs.append(d)
                drv("cuMemsetD32", d, p["fill"], p["nbytes"] // 4)
                addresses.append(int(d))
            else:
                addresses.append(None)
        params = build_spec_params(spec, addresses, ptx_text)
        return time_launches(gpu, fn, spec["grid"], spec["block"], spec["shared_mem"], params, target_ms, trials,
                             max_launches)
    finally:
        for d in ptrs:
            drv("cuMemFree", d)
        drv("cuModuleUnload", module)


def _ranking(ta: float, tb: float, margin: float = 0.05) -> str:
    """"a" or "b" (the faster), or "tie" within ``margin``."""
    if abs(ta - tb) <= margin * max(ta, tb):
        return "tie"
    return "a" if ta < tb else "b"


def gpu_mode(d: Path, json_out: Path, dry_run: bool, driver: str, pairs: str, only: list[str] | None,
             timeout_s: float, pair_filter: str | None = None, max_launches: int = 2000, trials: int = 5) -> int:
    manifest = json.loads((d / "manifest.json").read_text())
    names = [n for n in manifest["cases"] if not only or n in only]
    result = {"format": FORMAT, "command": "python3 bench/gpu_check.py gpu DIR --json OUT.json"
              + (" --dry-run" if dry_run else "") + (f" --driver {driver}" if driver != "cuda" else ""),
              "started": _now(), "record": {k: manifest.get(k) for k in ("created", "xcc_commit", "seed", "opt_level")},
              "host": {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.node()},
              "cases": [], "pairs": []}
    kept: dict[str, np.ndarray] = {}  # the GPU's outputs that differ: <json stem>_outputs.npz beside the JSON

    def save():
        tmp = json_out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(json_out)
        if kept:
            np.savez_compressed(json_out.with_name(json_out.stem + "_outputs.npz"), **kept)

    gpu = None
    if not dry_run:
        try:
            gpu = GpuRunner(Driver(driver))
        except Exception as e:
            result["aborted"] = f"no GPU: {type(e).__name__}: {e}"
            save()
            print(result["aborted"], flush=True)
            return 2
        result["gpu"] = {"name": gpu.name, "driver_version": gpu.driver_version,
                         "cc": f"{gpu.attribute('CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR')}."
                               f"{gpu.attribute('CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR')}",
                         "sms": gpu.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
                         "binding": driver}
        try:
            import cuda.bindings
            result["gpu"]["cuda_bindings"] = cuda.bindings.__version__
        except (ImportError, AttributeError):
            pass
        smi = shutil.which("nvidia-smi")
        if smi:
            try:
                result["gpu"]["nvidia_smi"] = subprocess.run(
                    [smi, "--query-gpu=name,driver_version,clocks.max.sm", "--format=csv,noheader"],
                    capture_output=True, text=True, timeout=20).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                pass
        print(f"GPU: {result['gpu']}", flush=True)

    ptx_cache: dict[str, str] = {}

    def ptx(name: str) -> str:
        if name not in ptx_cache:
            ptx_cache[name] = (d / "ptx" / name).read_text()
        return ptx_cache[name]

    for name in names:
        meta, arrays = load_case(d / manifest["cases"][name]["file"])
        try:
            res = run_case_gpu(gpu, meta, arrays, ptx(meta["ptx"]), timeout_s, kept)
        except TimeoutError as e:
            result["cases"].append({"name": name, "status": "timeout", "error": str(e)})
            result["aborted"] = f"{name}: {e}"
            save()
            print(f"{name}: {e}; stopping", flush=True)
            os._exit(3)  # a hung kernel: nothing more can run in this process
        result["cases"].append(res)
        if res["status"] == "ok":
            diffs = [f"arg{o['arg']}: {o.get('n_diff', '?')}/{o['n']} differ" for o in res["outputs"]
                     if not o.get("bit_exact", False)]
            line = ("bit-exact" if res["bit_exact"] else "; ".join(diffs)) + \
                   ("" if res["ref_ok"] else "  [reference check FAILED]")
        else:
            line = res.get("error", res["status"])
        print(f"{name:34s} {line}", flush=True)
        save()

    if pairs != "none":
        for pair in manifest.get("pairs", []):
            if pair_filter and pair_filter not in pair["a"] + " " + pair["b"]:
                continue
            row = {"name": pair["name"], "a": pair["a"], "b": pair["b"], "xcc_cycles": pair.get("xcc_cycles"),
                   "sizes": []}
            if row["xcc_cycles"]:
                ca, cb = row["xcc_cycles"]
                row["xcc_faster"] = _ranking(ca, cb)
                row["xcc_ratio_b_over_a"] = round(cb / ca, 3)
            for label, specs in pair["sizes"].items():
                if pairs == "small" and label != "xcc":
                    continue
                entry = {"label": label, "size": pair.get("size_text", {}).get(label, label)}
                if gpu is None:
                    for spec in specs:
                        build_spec_params(spec, [0x7F0000000000 if p["kind"] == "buffer" else None
                                                 for p in spec["params"]], ptx(spec["ptx"]))
                    entry["status"] = "dry-run"
                else:
                    try:
                        ta, tb = (time_spec(gpu, s, ptx(s["ptx"]), trials=trials, max_launches=max_launches)
                                  for s in specs)
                        entry.update(ms_a=ta["ms"], ms_b=tb["ms"], launches=[ta["launches"], tb["launches"]],
                                     gpu_faster=_ranking(ta["ms"], tb["ms"]), ratio_b_over_a=round(tb["ms"] / ta["ms"], 3))
                        if row["xcc_cycles"]:
                            entry["agrees"] = entry["gpu_faster"] == row["xcc_faster"]
                    except TimeoutError as e:
                        entry["error"] = str(e)
                        row["sizes"].append(entry)
                        result["pairs"].append(row)
                        save()
                        os._exit(3)
                    except Exception as e:
                        entry["error"] = f"{type(e).__name__}: {e}"
                        if isinstance(e, CudaCallError):
                            gpu.reset()
                print(f"pair {pair['a']} vs {pair['b']} [{entry['size']}]: "
                      + (f"{entry.get('ms_a', 0):.4f} ms vs {entry.get('ms_b', 0):.4f} ms, GPU faster: "
                         f"{entry.get('gpu_faster')}, xcc faster: {row.get('xcc_faster')}"
                         if "ms_a" in entry else entry.get("error", entry.get("status", ""))), flush=True)
                row["sizes"].append(entry)
            result["pairs"].append(row)
            save()

    ok = [c for c in result["cases"] if c.get("status") == "ok"]
    result["summary"] = {
        "cases": len(result["cases"]), "ran": len(ok),
        "bit_exact": sum(1 for c in ok if c.get("bit_exact")),
        "differ": sum(1 for c in ok if c.get("bit_exact") is False),
        "ref_ok": sum(1 for c in ok if c.get("ref_ok")),
        "errors": [f"{c['name']}: {c.get('error')}" for c in result["cases"] if c.get("status") == "error"],
    }
    result["finished"] = _now()
    save()
    print(json.dumps(result["summary"], indent=1))
    return 0


# ----------------------------------------------------------------------------------------------------
# report mode
# ----------------------------------------------------------------------------------------------------

_FEATURE_TEXT = {"approx": "approximate functions", "mma": "mma summation", "contract": "mul+add fusion by ptxas", "float_atomic": "float atomic order",
                 "atomic_race": "exch/cas winner", "warp": "warp op lanes", "int_div": "integer division",
                 "clock": "clock", "nanosleep": "nanosleep", "nan": "NaN payload"}


def _case_row(c: dict) -> str:
    if c.get("status") != "ok":
        return f"| `{c['name']}` | {c.get('arch', '')} | - | - | {c.get('status')}: {c.get('error', '')} |"
    exact = "yes" if c.get("bit_exact") else ("no" if c.get("bit_exact") is False else "n/a (xcc failed)")
    ref = "ok" if c.get("ref_ok") else "**FAIL**"
    notes = []
    for o in c["outputs"]:
        if not o.get("bit_exact", True):
            fd = o.get("first_diff", {})
            s = f"arg {o['arg']}: {o['n_diff']}/{o['n']} differ, first [{fd.get('index')}] GPU {fd.get('gpu')} " \
                f"vs xcc {fd.get('xcc')}"
            if o.get("max_ulp") is not None:
                s += f", max {o['max_ulp']} ulp"
            notes.append(s)
        r = o.get("ref", {})
        if not r.get("ok", True):
            fb = r.get("first_bad", {})
            notes.append(f"arg {o['arg']} vs reference ({r['tolerance']}): {r['n_bad']} out, first [{fb.get('index')}] "
                         f"GPU {fb.get('gpu')} vs {fb.get('ref')}")
    if c.get("explained_by"):
        feats = c["explained_by"]
        insts = [i for f in feats for i in c["features"].get(f, [])[:3]]
        notes.append("consistent with: " + ", ".join(_FEATURE_TEXT[f] for f in feats)
                     + (f" (`{'`, `'.join(insts)}`)" if insts else ""))
    elif c.get("bit_exact") is False:
        notes.append("not explained by an open PTX result")
    elif c.get("bit_exact") and c["features"].get("approx"):
        notes.append(f"bit-exact although it uses `{'`, `'.join(c['features']['approx'][:4])}`")
    if c.get("ptx_version_lowered_to"):
        notes.append(f"loaded with `.version` lowered to {c['ptx_version_lowered_to']}")
    return f"| `{c['name']}` | {c['arch']} | {exact} | {ref} | {'; '.join(notes)} |"


def replace_section(md: Path, begin: str, end: str, section: str) -> None:
    """Write ``section`` (which starts with ``begin`` and ends with ``end``) into the Markdown file ``md`` in place
    of the text between those markers, or at its end when they are not there yet."""
    text = md.read_text() if md.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    md.write_text(text)


def report(json_path: Path, md: Path) -> None:
    r = json.loads(json_path.read_text())
    for c in r["cases"]:  # the open features as this checkout's gpu_check.py finds them in examples/
        ptx = ROOT / "examples" / _unflat_ptx_name(c.get("ptx", ""))
        if c.get("status") == "ok" and ptx.is_file():
            c["features"] = kernel_features(ptx.read_text(), c["entry"])
            c["explained_by"] = explain(c["features"], c["outputs"])
    g = r.get("gpu", {})
    s = r.get("summary", {})
    cases = r["cases"]
    ok = [c for c in cases if c.get("status") == "ok"]
    differ = [c for c in ok if c.get("bit_exact") is False]
    by_feat: dict[str, list[str]] = {}
    for c in differ:
        for f in c.get("explained_by") or ["unexplained"]:
            by_feat.setdefault(f, []).append(c["name"])
    lines = [
        BEGIN,
        "## The corpus on a real GPU: bit for bit against the ISA interpreter",
        "",
        f"`python bench/gpu_check.py record --out .gpucheck` (xcc {r['record'].get('xcc_commit')}, "
        f"recorded {r['record'].get('created')}, seed {r['record'].get('seed')}, -O{r['record'].get('opt_level')}, "
        "ISA interpreter), then on the GPU machine "
        "`python3 bench/gpu_check.py gpu .gpucheck --json gpu_check.json` (numpy and cuda-python's "
        "`cuda.bindings.driver` only: the driver JIT-compiles each PTX file, sm_80 where the case has it), "
        "then `python bench/gpu_check.py report bench/data/gpu_check.json`. Raw results: `bench/data/gpu_check.json`.",
        "",
        f"GPU: **{g.get('name')}** (compute capability {g.get('cc')}, {g.get('sms')} SMs), CUDA driver API "
        f"{g.get('driver_version')}, nvidia-smi: `{g.get('nvidia_smi', 'n/a')}`; cuda-bindings "
        f"{g.get('cuda_bindings', '?')}, Python {r['host']['python']}, numpy {r['host']['numpy']}; run {r.get('started')}.",
        "",
        f"**{s.get('bit_exact')} of {s.get('ran')} cases** that ran give the same bits as xcc in every output buffer; "
        f"{s.get('differ')} differ; {s.get('ref_ok')} of {s.get('ran')} pass the test suite's numpy reference check "
        f"(bit-exact, or the case's `atol`/`rtol`); {len(s.get('errors', []))} did not run"
        + (f" ({'; '.join(s['errors'])})" if s.get("errors") else "") + ".",
        "",
    ]
    if differ:
        lines.append("Where the differing cases fall (docs/semantics.md, \"Where PTX leaves the result open\"; "
                     "a case is listed under each open feature its kernel uses):")
        lines.append("")
        for f, names in by_feat.items():
            what = SEMANTICS_ROWS.get(f, "no open PTX result explains it: a real disagreement to investigate")
            lines.append(f"* {_FEATURE_TEXT.get(f, f)} ({what}): {', '.join(f'`{n}`' for n in names)}")
        lines.append("")
    lines += ["| case | PTX target | bit-exact vs xcc | vs reference | notes |", "|---|---|---|---|---|"]
    lines += [_case_row(c) for c in cases]
    lines.append("")
    if r.get("pairs"):
        lines += ["### Variant ranking: the cycle model against the GPU", "",
                  "xcc: modelled cycles of one launch (cycle model on) at the xcc size only (the ISA interpreter is "
                  "too slow for the large sizes). GPU: median time per launch over 5 batches of back-to-back "
                  "launches between CUDA events (inputs filled with 1.0), at the xcc size and at a large size. "
                  "Within 5% is a tie. At the large size the GPU is compared with the cycle model's ranking at the "
                  "xcc size.", "",
                  "| pair: a vs b | size | xcc cycles a / b (b/a) | GPU ms a / b (b/a) | xcc faster | GPU faster | agree |",
                  "|---|---|---|---|---|---|---|"]
        tally: dict[str, list[int]] = {}
        for p in r["pairs"]:
            cyc = p.get("xcc_cycles") or []
            for e in p["sizes"]:
                xc = f"{cyc[0]} / {cyc[1]} ({p['xcc_ratio_b_over_a']:.2f})" if cyc and e["label"] == "xcc" else \
                    "not modelled"
                if "ms_a" in e:
                    gms = f"{e['ms_a']:.4g} / {e['ms_b']:.4g} ({e['ratio_b_over_a']:.2f})"
                    agree = "yes" if e.get("agrees") else ("tie on the GPU" if e["gpu_faster"] == "tie" else "**no**")
                    faster = e["gpu_faster"]
                    t = tally.setdefault(e["label"], [0, 0])
                    t[0] += bool(e.get("agrees"))
                    t[1] += 1
                else:
                    gms, agree, faster = e.get("error", e.get("status", "-")), "-", "-"
                lines.append(f"| {p['name']}: `{p['a']}` vs `{p['b']}` | {e['size']} | {xc} | {gms} | "
                             f"{p.get('xcc_faster', '-')} | {faster} | {agree} |")
        lines.append("")
        lines.append("The GPU ranks the pairs as the cycle model does in "
                     + " and ".join(f"{a} of {n} at the {lab} size" for lab, (a, n) in tally.items()) + ".")
        lines.append("")
    for note in r.get("notes", []):
        lines.append(f"* {note}")
    if r.get("notes"):
        lines.append("")
    lines.append(END)
    replace_section(md, BEGIN, END, "\n".join(lines))
    print(f"wrote the gpu section of {md} ({len(cases)} cases, {len(r.get('pairs', []))} pairs)")


# ----------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("record", help="run the corpus on xcc and write DIR")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--cases", help="comma-separated case names (default: all)")
    r.add_argument("--no-pairs", action="store_true", help="skip the variant pairs")
    g = sub.add_parser("gpu", help="run DIR on the GPU (numpy + cuda-python only)")
    g.add_argument("dir", type=Path)
    g.add_argument("--json", type=Path, required=True)
    g.add_argument("--dry-run", action="store_true", help="build every launch, call no driver")
    g.add_argument("--driver", choices=("cuda", "xcc"), default="cuda",
                   help="cuda: cuda-python (the GPU); xcc: xcc.runtime.driver (a local self-test)")
    g.add_argument("--pairs", choices=("all", "small", "none"), default="all")
    g.add_argument("--cases", help="comma-separated case names (default: all in DIR)")
    g.add_argument("--timeout", type=float, default=30.0, help="seconds a kernel may run before the run stops")
    g.add_argument("--pair-filter", help="only the pairs whose variant names contain this")
    g.add_argument("--max-launches", type=int, default=2000, help="most launches in one timed batch")
    g.add_argument("--trials", type=int, default=5, help="timed batches per variant (the median is reported)")
    p = sub.add_parser("report", help="write the gpu section of docs/BENCHMARKS.md")
    p.add_argument("json", type=Path)
    p.add_argument("--md", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    a = ap.parse_args(argv)
    if a.mode == "record":
        record(a.out, a.cases.split(",") if a.cases else None, not a.no_pairs)
        return 0
    if a.mode == "gpu":
        return gpu_mode(a.dir, a.json, a.dry_run, a.driver, a.pairs, a.cases.split(",") if a.cases else None,
                        a.timeout, a.pair_filter, a.max_launches, a.trials)
    report(a.json, a.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
