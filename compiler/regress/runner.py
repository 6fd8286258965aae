"""Compile, run and check one kernel of a corpus at one level on one engine, and record its figures.

A :class:`Unit` is one (kernel, level, engine) of the corpus with the run's options applied; :func:`run_unit`
returns a plain, picklable dict (it runs in a Dask worker as well as in-process) whose deterministic part
depends only on the unit: the compile time samples are the one part that does not.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import lzma
import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from xcc.diagnostics import XccError
from xcc.regress.corpus import Kernel

# Deterministic figures: lower is better for every one of them; they gate (docs/regress.md, "Comparison").
GATED = ("registers", "instructions", "spill_bytes", "shared_bytes", "local_bytes", "warp_instructions", "cycles")
# Recorded and compared exactly, every change reported, gating nothing: IPC (executed warp instructions per
# active SM cycle) moves with warp_instructions and cycles, both gated, so gating it would count them twice
# and call a change that removes instructions and makes the kernel faster a regression; the stall breakdown
# and the Nsight-named metrics explain the cycles rather than add to them.
EXPLANATORY = ("ipc",)
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"


@dataclass(frozen=True)
class RunOptions:
    """The run's code-changing options (``xcc compile``'s), overriding the corpus's per-kernel values."""

    opt_level: int | None = None
    passes: str | None = None
    machine: str | None = None
    maxrregcount: int = 255
    repeats: int = 5  # compile-time samples per kernel and level (engine isa)
    stages: bool = False  # record a fingerprint of every pass's and backend stage's output (for attribution)


@dataclass(frozen=True)
class Unit:
    kernel: Kernel
    level: int
    engine: str
    options: RunOptions

    @property
    def id(self) -> str:
        return unit_id(self.kernel.name, self.engine, self.level)

    @property
    def machine(self) -> str:
        return self.options.machine or self.kernel.machine or "xg1"


def unit_id(name: str, engine: str, level: int) -> str:
    return f"{name}[{engine},O{level}]"


def units_of(kernels: list[Kernel], options: RunOptions) -> list[Unit]:
    """Every (kernel, level, engine) of the corpus in corpus order; ``-O`` replaces each kernel's levels."""
    out = []
    for k in kernels:
        levels = (options.opt_level,) if options.opt_level is not None else k.opt_levels
        out += [Unit(k, lv, e, options) for lv in levels for e in k.engines]
    return out


def pipeline_items(level: int, passes: str | None) -> list[str]:
    """The IR pipeline as a list of items (``unroll{factor=1}``): ``passes`` when given, else the level's."""
    from xcc.passes.manager import parse_pipeline, pipeline_for_level

    if passes is None:
        return pipeline_for_level(level)
    return [name + ("{" + " ".join(f"{k}={v}" for k, v in o.items()) + "}" if o else "")
            for name, o in parse_pipeline(passes)]


def machine_record(spec: str) -> dict:
    """What a baseline keeps of a machine description: name, hash, and its TOML text (for attribution)."""
    from xcc.backend.machine import MACHINES_DIR, load_machine

    m = load_machine(spec)
    path = Path(spec) if Path(spec).suffix else MACHINES_DIR / f"{spec}.toml"
    return {"name": m.name, "hash": m.hash, "toml": path.read_text()}


def _compile_options(unit: Unit, level: int, passes: str | None, maxrregcount: int):
    from xcc.driver import CompileOptions

    return CompileOptions(opt_level=level, max_registers=maxrregcount, machine=unit.machine, passes=passes)


def run_unit(unit: Unit, cache_dir: str | None = None) -> dict:
    """Compile, run and check ``unit``; every figure recorded.  A compile error, a kernel fault or a crash of
    xcc is a failed unit (``status`` 'error'), never an exception: the rest of the corpus still runs."""
    if cache_dir and os.path.isdir(cache_dir):  # a Dask worker on the same file system shares the JIT cache
        os.environ["XCC_CACHE_DIR"] = cache_dir
    result = {"id": unit.id, "kernel": unit.kernel.name, "engine": unit.engine, "level": unit.level,
              "machine": Path(unit.machine).name,  # for reading: machine_hash identifies it
              "pipeline": pipeline_items(unit.level, unit.options.passes),
              "maxrregcount": unit.options.maxrregcount, "status": "pass", "failures": [],
              "figures": {}, "stalls": {}, "metrics": {}, "compile_ms": [], "stages": []}
    try:
        from xcc.backend.machine import load_machine

        result["machine_hash"] = load_machine(unit.machine).hash
        figures, stalls, metrics, failures = measure(unit, unit.level, unit.options.passes,
                                                     unit.options.maxrregcount, unit.machine)
        result.update(figures=figures, stalls=stalls, metrics=metrics, failures=failures)
        if failures:
            result["status"] = "fail"
        if unit.engine == "isa":
            result["compile_ms"] = compile_times(unit, unit.options.repeats)
            if unit.options.stages:
                result["stages"], docs = stage_record(unit, unit.level, unit.options.passes,
                                                      unit.options.maxrregcount, unit.machine, keep_ir=True)
                result["stage_ir"] = encode_stage_ir(docs)
    except XccError as e:
        result.update(status="error", failures=[_portable(str(e), unit)])
    except Exception as e:  # a crash of xcc on this kernel: a failure of this commit, not of the corpus
        result.update(status="error", failures=[f"internal error: {type(e).__name__}: {_portable(str(e), unit)}"])
    return result


def measure(unit: Unit, level: int, passes: str | None, maxrregcount: int, machine) -> tuple:
    """Compile and run ``unit`` with these settings (``machine``: a name, a TOML file or a Machine); returns
    (figures, stall breakdown, Nsight metrics, output failures).  Errors propagate as :class:`XccError`."""
    from xcc import runtime as rt

    device = rt.Device(machine=machine)
    mod = rt.load_module(list(unit.kernel.ptx), opt_level=level, max_registers=maxrregcount, device=device,
                         engine=unit.engine, passes=passes)
    return _launch(unit, mod, device)


def measure_ir(unit: Unit, ir: bytes, level: int, passes: str, maxrregcount: int, machine) -> tuple:
    """As :func:`measure`, from the IR document ``ir`` (one stage's output, :mod:`xcc.ir.serialize`): the pass
    pipeline ``passes`` (the stages after that one; "" for none) and the backend with ``level``'s settings,
    then the run (engine isa).  Attribution replays a baseline's stage outputs through this compiler so."""
    from xcc import runtime as rt
    from xcc.backend.machine import Machine, load_machine
    from xcc.driver import CompileOptions, compile_ir
    from xcc.ir.serialize import load_module_ir

    if not isinstance(machine, Machine):
        machine = load_machine(machine)
    options = CompileOptions(opt_level=level, max_registers=maxrregcount, machine=machine.name, passes=passes)
    obj = compile_ir(load_module_ir(ir, f"the stage IR of {unit.id}"), options, [unit.kernel.entry], machine=machine)
    device = rt.Device(machine=machine)
    return _launch(unit, rt.load_module(obj.to_bytes(), device=device), device)


def _launch(unit: Unit, mod, device) -> tuple:
    import numpy as np

    from xcc import runtime as rt
    from xcc.runtime.run_args import parse_run_arg

    k = unit.kernel
    fn = mod.get_function(k.entry)
    launch_args, buffers = [], {}
    for i, text in enumerate(k.args):
        kind, v = parse_run_arg(text)
        if kind == "buffer":
            buffers[i] = rt.to_device(v, device)
            launch_args.append(buffers[i])
        else:
            launch_args.append(v)
    stats = fn.launch(k.grid, k.block, launch_args, k.shared_mem, max_steps=k.max_steps)
    failures = []
    for c in k.check:
        got = buffers[c.arg].copy_to_host()
        failures += check_output(got, np.load(c.expected, allow_pickle=False), c.arg, c.rtol, c.atol)
    figures: dict = {"cycles": stats.cycles, "warp_instructions": stats.warp_instructions,
                     "ipc": stats.ipc}
    if unit.engine == "isa":
        img = fn.kernel
        figures.update(registers=img.registers, instructions=img.instruction_count, spill_bytes=img.spill_bytes,
                       shared_bytes=img.shared_bytes, local_bytes=img.local_bytes)
    figures = {f: figures.get(f) for f in (*GATED, *EXPLANATORY)}
    stalls = {name[len(STALL_PREFIX):]: v for name, v in sorted(stats.metrics.items()) if name.startswith(STALL_PREFIX)}
    metrics = {name: v for name, v in sorted(stats.metrics.items()) if not isinstance(v, list | dict)}
    return figures, stalls, metrics, failures


def check_output(got, expected, arg: int, rtol: float, atol: float) -> list[str]:
    """Output ``got`` of argument ``arg`` against ``expected``: bit-exact when both tolerances are 0, else
    numpy's ``isclose`` (NaN equal to NaN).  Returns the failures, each naming the first differing element."""
    import numpy as np

    got = np.ascontiguousarray(got).reshape(-1)
    expected = np.ascontiguousarray(expected).reshape(-1)
    if got.size != expected.size:
        return [f"arg {arg}: {got.size} elements, expected {expected.size}"]
    if rtol == 0 and atol == 0:
        bad = got.view(np.uint8).reshape(got.size, -1) != expected.astype(got.dtype).view(np.uint8).reshape(got.size, -1)
        wrong = np.flatnonzero(bad.any(axis=1))
    else:
        wrong = np.flatnonzero(~np.isclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                                           equal_nan=True))
    if not len(wrong):
        return []
    i = int(wrong[0])
    mode = "bit-exact" if rtol == 0 and atol == 0 else f"rtol={rtol}, atol={atol}"
    return [f"arg {arg}: {len(wrong)} of {got.size} elements differ ({mode}); first at [{i}]: "
            f"{got[i]!r}, expected {expected[i]!r}"]


def compile_times(unit: Unit, repeats: int) -> list[float]:
    """``repeats`` wall-clock samples, in milliseconds, of compiling the kernel from PTX (no cache)."""
    from xcc.driver import compile_module, read_source

    sources = [read_source(Path(p)) for p in unit.kernel.ptx]
    options = _compile_options(unit, unit.level, unit.options.passes, unit.options.maxrregcount)
    compile_module(sources, options, [unit.kernel.entry])  # warm-up, not counted: the passes' first imports
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        compile_module(sources, options, [unit.kernel.entry])
        samples.append(round((time.perf_counter() - t0) * 1000, 3))
    return samples


_STAGE = re.compile(r"^; \*\*\* (?:IR|machine code) after (.+?) \*\*\*$", re.M)
STAGE_IR_FORMAT = "xcc-regress-stage-ir"


def stage_record(unit: Unit, level: int, passes: str | None, maxrregcount: int, machine,
                 keep_ir: bool = False) -> tuple[list[list[str]], list[bytes | None]]:
    """[stage name, hash of its output] for the IR as built, every pass of the pipeline and every backend
    stage, in order (``--print-after=all`` of this kernel, with the corpus's folder taken out of paths); and,
    with ``keep_ir``, the IR document (:mod:`xcc.ir.serialize`) after each IR stage (the build, then each
    pass), None where one cannot be written: what attribution replays."""
    from xcc.backend.machine import Machine, load_machine
    from xcc.driver import compile_module, read_source
    from xcc.ir.serialize import dump_module

    sources = [read_source(Path(p)) for p in unit.kernel.ptx]
    options = _compile_options(unit, level, passes, maxrregcount)
    if not isinstance(machine, Machine):
        machine = load_machine(machine)
    options = replace(options, machine=machine.name)
    docs: list[bytes | None] = []

    def keep(name, module) -> None:
        try:
            docs.append(_portable(dump_module(module).decode(), unit).encode())
        except Exception:  # noqa: BLE001 - attribution then falls back to the fingerprints
            docs.append(None)

    out = io.StringIO()
    compile_module(sources, options, [unit.kernel.entry], print_after="all", out=out, machine=machine,
                   on_stage=keep if keep_ir else None)
    return fingerprints(_portable(out.getvalue(), unit)), docs


def stage_fingerprints(unit: Unit, level: int, passes: str | None, maxrregcount: int, machine) -> list[list[str]]:
    """The fingerprints of :func:`stage_record`."""
    return stage_record(unit, level, passes, maxrregcount, machine)[0]


def fingerprints(printed: str) -> list[list[str]]:
    """[stage name, hash of its output] of a ``--print-after=all`` text."""
    parts = _STAGE.split(printed)  # ['', name, body, name, body, ...]
    return [[parts[i], hashlib.sha256(parts[i + 1].encode()).hexdigest()[:16]] for i in range(1, len(parts) - 1, 2)]


def encode_stage_ir(docs: list[bytes | None]) -> str | None:
    """The IR after each IR stage, for a baseline: each distinct document once, xz-compressed, base64 (a few
    kilobytes a kernel); None when a document is missing."""
    if not docs or any(d is None for d in docs):
        return None
    table: dict[bytes, int] = {}
    order = [table.setdefault(d, len(table)) for d in docs]
    doc = {"format": STAGE_IR_FORMAT, "version": 1, "stages": order, "docs": [d.decode() for d in table]}
    return base64.b64encode(lzma.compress(json.dumps(doc, sort_keys=True).encode(), preset=9)).decode()


def decode_stage_ir(text: str | None) -> list[bytes] | None:
    """The documents of :func:`encode_stage_ir`, one per IR stage; None when absent or unreadable."""
    if not text:
        return None
    try:
        doc = json.loads(lzma.decompress(base64.b64decode(text)))
        if doc.get("format") != STAGE_IR_FORMAT or doc.get("version") != 1:
            return None
        return [doc["docs"][i].encode() for i in doc["stages"]]
    except (ValueError, lzma.LZMAError, KeyError, IndexError, TypeError, AttributeError):
        return None


def _portable(text: str, unit: Unit) -> str:
    """``text`` with the PTX files' folders taken out: the same kernel gives the same record in any checkout."""
    for p in unit.kernel.ptx:
        text = text.replace(str(Path(p).parent) + os.sep, "")
    return text
