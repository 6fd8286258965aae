"""Autotuning a launch on the cycle model: ``fn.autotune(...)``, and the tuned binaries that later launches of
the same shape run (``rt.load_module(src, autotuned=True)`` in any process).

The search space and strategies are :mod:`xcc.tune`; this module builds and launches the candidates.  Every
candidate runs on a fresh device of the same machine description with the argument buffers as they were
snapshotted before the search (so each starts from the same inputs, and the caller's buffers are left as
they were), is scored by its modelled cycles, and scores infinity when it fails to compile, faults, hits the
watchdog or writes outputs that differ from the plain build's: bit for bit, except that floating-point
buffers of a kernel with floating-point atomics (whose order of additions may change) are compared with
``rtol``/``atol``.  Candidates fan out over Dask with ``workers``/``scheduler`` (:mod:`xcc.parallel`),
sharing this process's JIT cache directory.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import sys
from dataclasses import dataclass

import numpy as np

from xcc.backend.machine import Machine
from xcc.backend.objfile import KernelImage, ObjectFile
from xcc.diagnostics import LaunchError, XccError
from xcc.driver import CompileOptions, Source, compile_module
from xcc.parallel import map_units
from xcc.runtime.device import Device, DeviceArray, to_device
from xcc.runtime.jit import _options_key, jit_cache, resolve
from xcc.runtime.launch import Function, dim3
from xcc.sim.launch import step_limit
from xcc.sim.memory import ModuleGlobals
from xcc.tune import record
from xcc.tune.result import TuneResult
from xcc.tune.search import search, winner
from xcc.tune.space import SearchSpace, default_space, options_for, space_of

_FLOAT_ATOMIC = re.compile(r"\b(?:atom|red)(?:\.\w+)*\.(?:f16x2|bf16x2|f16|bf16|f32|f64)\b")


class Tuned:
    """A function's tuned binaries by launch shape (grid, block, shared memory): ``(image, scalar values it
    was specialised for or None)``, or None for a shape with none.  With ``lookup``, a shape not seen yet is
    looked up in the JIT cache (the latest tuning record of that shape)."""

    def __init__(self, lookup: bool = False):
        self.lookup = lookup
        self.by_shape: dict[tuple, tuple[KernelImage, dict | None] | None] = {}

    def kernel_for(self, fn: Function, shape: tuple, args) -> KernelImage:
        if shape not in self.by_shape:
            self.by_shape[shape] = _cached_tuning(fn, shape) if self.lookup else None
        entry = self.by_shape[shape]
        if entry is None:
            return fn.kernel
        image, values = entry
        if values and _scalar_values(fn.kernel, list(args)) != values:
            return fn.kernel  # specialised on other argument values: the plain build
        return image


@dataclass(frozen=True)
class CandidateTask:
    """One candidate build and timed launch, self-contained (it travels to a Dask worker)."""

    sources: tuple[Source, ...]
    kernel: str
    options: CompileOptions
    machine: Machine
    grid: tuple
    block: tuple
    shared_mem: int
    args: tuple  # ("buffer", ndarray) or ("value", scalar), in parameter order
    max_steps: int


def run_candidate(task: CandidateTask, cache_dir: str | None = None, memo: dict | None = None) -> dict:
    """Compile (through the JIT cache) and launch ``task`` on a fresh device: ``cycles``, ``steps`` and the
    buffers' contents afterwards (``outputs``), or ``problem``.  ``memo`` (in-process: binary -> result) skips
    the launch of a binary an earlier candidate of the same search already ran (the launch is the same)."""
    if cache_dir and os.path.isdir(cache_dir):  # a Dask worker on the same file system shares the JIT cache
        os.environ["XCC_CACHE_DIR"] = cache_dir
    try:
        image = compile_kernel(task.sources, task.kernel, task.options, task.machine)
        digest = hashlib.sha256(ObjectFile({task.kernel: image}, task.options.arch).to_bytes()).digest()
        if memo is not None and digest in memo and task.max_steps == memo[digest][0]:
            return memo[digest][1]
        device = Device(task.machine)
        args = [to_device(v, device) if kind == "buffer" else v for kind, v in task.args]
        fn = Function(image, device, ModuleGlobals(device.memory))
        stats = fn.launch(task.grid, task.block, args, task.shared_mem, max_steps=task.max_steps)
        outputs = [a.copy_to_host() for a in args if isinstance(a, DeviceArray)]
        out = {"cycles": stats.cycles, "steps": stats.steps, "outputs": outputs, "problem": None}
        if memo is not None:
            memo[digest] = (task.max_steps, out)
        return out
    except XccError as e:
        return {"cycles": math.inf, "problem": str(e).splitlines()[0]}


def compile_kernel(sources, kernel: str, options: CompileOptions, machine: Machine) -> KernelImage:
    """``kernel`` of ``sources`` built with ``options`` for ``machine``, through the JIT cache."""
    def build() -> bytes:
        return compile_module(list(sources), options, [kernel], machine=machine).to_bytes()

    obj = resolve(tuple(s.text.encode() for s in sources), kernel, options, machine, build,
                  ", ".join(s.name for s in sources))
    return obj.kernels[kernel]


def autotune(fn: Function, grid, block, args=(), shared_mem: int = 0, budget: int = 32, *,
             space: SearchSpace | dict | None = None, strategy: str = "auto", seed: int = 0, workers: int = 1,
             scheduler: str | None = None, progress: bool | None = None, max_steps: int | None = None,
             retune: bool = False, rtol: float = 1e-5, atol: float = 1e-6, profile=None) -> TuneResult:
    """Tune ``fn``'s compiler knobs for this launch (``space``: the knobs, default
    :func:`xcc.tune.space.default_space`; a dict ``{knob: [values]}`` names them) with at most ``budget``
    candidate builds, scored by modelled cycles (:mod:`xcc.tune.search`: ``strategy``, ``seed``).  A record of
    the same launch shape, machine, options and space in the JIT cache is used without searching (``retune``
    searches again).  ``workers`` > 1 or ``scheduler`` (a Dask address) fan the candidates out; ``progress``
    shows a bar (default: when stderr is a terminal); ``max_steps`` is each launch's watchdog limit.
    ``profile`` (an ``xcc.profile.Profile``, a path, or True: record one of this launch now, on a copy of the
    arguments) adds the knob ``profile_use``: profile-guided optimisation as one more choice."""
    module = fn.module
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    shape = (grid, block, int(shared_mem))
    snapshot = _snapshot(fn.kernel, list(args))
    values = _scalar_values(fn.kernel, list(args))
    base = module.options
    prof = _profile(fn, profile, grid, block, snapshot, int(shared_mem), max_steps)
    space = _space(space, base, bool(values), prof)
    machine = fn.device.machine
    sources = tuple(module.sources)
    ptx = tuple(s.text.encode() for s in sources)
    opts = _options_key(base, False)
    fingerprint = space.fingerprint() + (f"|profile {prof.digest}" if prof is not None else "")
    key = record.record_key(ptx, fn.name, opts, machine.hash, shape, fingerprint)
    latest = record.record_key(ptx, fn.name, opts, machine.hash, shape, None)
    what = f"kernel '{fn.name}', grid {grid}, block {block}, shared memory {shared_mem}"
    if not retune:
        doc = _load_quietly(key, what)
        if doc is not None:
            _install(fn, shape, doc, base)
            return record.to_result(doc, key)
    float_atomics = bool(_FLOAT_ATOMIC.search("\n".join(s.text for s in sources)))
    state: dict = {"baseline": None, "steps": step_limit(max_steps) or 0}
    memo: dict = {}
    bar = _progress_bar(budget if space.size > budget else space.size, progress, fn.name)

    def evaluate(configs: list[dict]) -> list[tuple[float, str | None]]:
        tasks = [CandidateTask(sources, fn.name, options_for(c, base, values, (grid, block), prof), machine,
                               grid, block, int(shared_mem), snapshot, state["steps"]) for c in configs]
        run = run_candidate if workers > 1 or scheduler else functools.partial(run_candidate, memo=memo)
        done = map_units(run, tasks, workers, scheduler, progress=lambda _: bar.update(1))
        return [_score(r, state, max_steps, float_atomics, rtol, atol) for r in done]

    try:
        candidates, ran = search(space, evaluate, budget, strategy, seed)
    finally:
        bar.close()
    best = winner(candidates)
    options = options_for(best.config, base, values, (grid, block), prof)
    result = TuneResult(fn.name, dict(best.config), int(best.cycles), int(candidates[0].cycles),
                        tuple(candidates), ran, False, key, record.options_record(options, base), space.defaults)
    specialised = values if options.specialize is not None else None
    record.store(jit_cache(), [key, latest], record.encode(result, shape, fingerprint, specialised),
                 {"kernel": fn.name, "machine": machine.name, "machine_hash": machine.hash,
                  "options": opts, "cycles": result.cycles, "baseline_cycles": result.baseline_cycles})
    _install(fn, shape, record.decode(record.encode(result, shape, fingerprint, specialised), what), base)
    return result


def _space(space, base: CompileOptions, specialisable: bool, profile) -> SearchSpace:
    if space is None:
        return default_space(base, specialisable, profile is not None)
    space = space if isinstance(space, SearchSpace) else space_of(space)
    if profile is None and any(k.name == "profile_use" for k in space.knobs):
        raise XccError("search space: the knob 'profile_use' needs a profile (fn.autotune(profile=...))")
    if options_for(space.defaults, base, {}, None) != base:
        raise XccError(f"search space: the first value of each knob must be the plain build's ({space.defaults} "
                       "changes the build)")
    return space


def _profile(fn: Function, profile, grid, block, snapshot: tuple, shared_mem: int, max_steps):
    """The profile ``fn.autotune(profile=...)`` names: None, a Profile or a path, or True: this launch's,
    recorded on a fresh device from the snapshot (the caller's buffers are left alone)."""
    if profile is None or profile is False:
        return None
    if profile is not True:
        from xcc.profile.format import load_profile

        return load_profile(profile)
    device = Device(fn.device.machine)
    f = Function(fn.kernel, device, ModuleGlobals(device.memory), fn.source)
    f.module = fn.module
    args = [to_device(v, device) if kind == "buffer" else v for kind, v in snapshot]
    return f.launch(grid, block, args, shared_mem, max_steps=max_steps, profile=True).profile


def _snapshot(kernel: KernelImage, args: list) -> tuple:
    """The launch's arguments with every device array copied to the host (the state each candidate starts
    from); an integer where a 64-bit parameter is expected is refused (an address into this device)."""
    if len(args) != len(kernel.params):
        raise LaunchError(f"'{kernel.name}' takes {len(kernel.params)} arguments, got {len(args)}")
    out = []
    for i, (p, a) in enumerate(zip(kernel.params, args)):
        if isinstance(a, DeviceArray):
            out.append(("buffer", a.copy_to_host()))
        elif isinstance(a, int) and not isinstance(a, bool) and p.size == 8:
            raise LaunchError(f"autotune of '{kernel.name}': argument {i} ('{p.name}') is an integer; pass "
                              "buffers as device arrays (each candidate runs on its own copy of them)")
        else:
            out.append(("value", a))
    return tuple(out)


def _scalar_values(kernel: KernelImage, args: list) -> dict:
    """The launch's scalar arguments by parameter name (what the ``specialize`` knob folds in)."""
    out = {}
    for p, a in zip(kernel.params, args):
        if not isinstance(a, DeviceArray | int) and isinstance(a, np.generic | float) and p.size in (4, 8):
            out[p.name] = a.item() if hasattr(a, "item") else a
    return out


def _score(r: dict, state: dict, max_steps, float_atomics: bool, rtol: float, atol: float):
    if r["problem"] is not None:
        return math.inf, r["problem"]
    if state["baseline"] is None:
        state["baseline"] = r["outputs"]
        if max_steps is None:  # a runaway candidate stops at 4x the plain build's steps
            state["steps"] = min(state["steps"] or sys.maxsize, max(4 * r["steps"], 100_000))
        return float(r["cycles"]), None
    for i, (got, want) in enumerate(zip(r["outputs"], state["baseline"])):
        if got.tobytes() == want.tobytes():
            continue
        if float_atomics and got.dtype.kind == "f" and np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            continue
        return math.inf, f"output buffer {i} differs from the plain build's"
    return float(r["cycles"]), None


def _load_quietly(key: str, what: str) -> dict | None:
    """The record under ``key``, or None; a corrupt one is reported as a warning and searched again."""
    import warnings

    from xcc.cache import XccCacheWarning

    try:
        return record.load(jit_cache(), key, what)
    except record.TuningRecordError as e:
        warnings.warn(f"{e.message}; searching again", XccCacheWarning, stacklevel=3)
        return None


def _install(fn: Function, shape: tuple, doc: dict, base: CompileOptions) -> None:
    where = f"the tuning record of kernel '{fn.name}'"
    options = record.winner_options(doc, base, where)
    image = fn.kernel if options == base else compile_kernel(fn.module.sources, fn.name, options,
                                                             fn.device.machine)
    if fn.tuned is None:
        fn.tuned = Tuned()
    fn.tuned.by_shape[shape] = (image, doc.get("specialize"))


def _cached_tuning(fn: Function, shape: tuple):
    """The latest tuned binary of ``shape`` in the JIT cache (a module loaded with ``autotuned=True``), or None;
    a corrupt record is a :class:`xcc.tune.record.TuningRecordError`."""
    module = fn.module
    key = record.record_key(tuple(s.text.encode() for s in module.sources), fn.name,
                            _options_key(module.options, False), fn.device.machine.hash, shape, None)
    doc = record.load(jit_cache(), key, f"kernel '{fn.name}', grid {shape[0]}, block {shape[1]}")
    if doc is None:
        return None
    tmp = Tuned()
    saved, fn.tuned = fn.tuned, tmp
    try:
        _install(fn, shape, doc, module.options)
    finally:
        fn.tuned = saved
    return tmp.by_shape[shape]


def _progress_bar(total: int, progress: bool | None, name: str):
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else progress
    return tqdm(total=total, desc=f"tuning {name}", unit="build", disable=not show, leave=False)
