"""``xcc tune``: the command-line face of ``fn.autotune`` (arguments written as for ``xcc run``,
:mod:`xcc.runtime.run_args`).

Prints the plain build's and the tuned build's modelled cycles, the speedup and the knobs that won (or that the
result came from the JIT cache); ``--json FILE`` writes them.  Exit status: 0 tuned (or found), 1 an error in
the input (bad PTX, a plain build that faults, an unknown knob), 2 a usage error.  A corrupt tuning record in
the cache is a warning (``xcc: warning: ...``) and the search runs again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from xcc.diagnostics import XccError


@dataclass(frozen=True)
class TuneRequest:
    source: Path
    kernel: str
    grid: tuple
    block: tuple
    shared_mem: int
    args: tuple  # ('scalar' | 'buffer', value) as parsed by xcc.runtime.run_args
    budget: int
    strategy: str = "auto"
    seed: int = 0
    opt_level: int = 3
    machine: str = "xg1"
    knobs: tuple[str, ...] = ()  # NAME=V1,V2,... (the plain build's value first)
    workers: int = 1
    scheduler: str | None = None
    progress: bool | None = None
    max_steps: int | None = None
    retune: bool = False
    json_out: Path | None = None
    profile: object = None  # a profile file, True (record this launch's), or None


def parse_knob(text: str) -> tuple[str, list]:
    """``NAME=V1,V2,...`` -> (name, values): integers, true/false, else strings."""
    name, sep, values = text.partition("=")
    if not sep or not name or not values:
        raise XccError(f"--knob '{text}': expected NAME=V1,V2,... (the plain build's value first)")
    return name.strip(), [_value(v.strip()) for v in values.split(",")]


def _value(text: str):
    if text.lower() in ("true", "false", "on", "off"):
        return text.lower() in ("true", "on")
    try:
        return int(text, 0)
    except ValueError:
        return text


def execute(req: TuneRequest, echo) -> int:
    import warnings

    from xcc import runtime as rt

    space = dict(parse_knob(k) for k in req.knobs) or None
    device = rt.Device(machine=req.machine)
    fn = rt.load_module(str(req.source), opt_level=req.opt_level, device=device).get_function(req.kernel)
    args = [rt.to_device(v, device) if kind == "buffer" else v for kind, v in req.args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn.autotune(req.grid, req.block, args, req.shared_mem, req.budget, space=space,
                             strategy=req.strategy, seed=req.seed, workers=req.workers, scheduler=req.scheduler,
                             progress=req.progress, max_steps=req.max_steps, retune=req.retune,
                             profile=req.profile)
    for w in caught:
        echo(f"xcc: warning: {w.message}", err=True)
    echo(f"kernel:          {result.kernel}")
    echo(f"baseline cycles: {result.baseline_cycles}")
    echo(f"tuned cycles:    {result.cycles}")
    echo(f"speedup:         {result.speedup:.3f}x")
    how = "found in the JIT cache (no search)" if result.from_cache else \
        f"{len(result.candidates)} candidate builds, {result.strategy}"
    echo(f"search:          {how}")
    changed = result.changed()
    echo("knobs:           " + (", ".join(f"{k}={v}" for k, v in changed.items()) or "the plain build's"))
    if req.json_out:
        doc = {"kernel": result.kernel, "cycles": result.cycles, "baseline_cycles": result.baseline_cycles,
               "speedup": result.speedup, "config": result.config, "changed": changed,
               "from_cache": result.from_cache, "strategy": result.strategy, "candidates": len(result.candidates),
               "options": result.options, "key": result.key}
        tmp = req.json_out.with_name(f".{req.json_out.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, req.json_out)
    return 0
