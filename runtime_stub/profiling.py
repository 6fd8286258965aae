"""``fn.launch(..., profile=True)``: a launch's profile (docs/profiles.md), on ``res.profile``.

The launch runs as always on the ISA interpreter (its statistics and cycle model unchanged); the profile adds
what the IR interpreter sees running the same launch on a snapshot of device memory taken just before (so the
user's buffers are written once): block and branch counts of the module's ``-O`` IR (no profile use), keyed by
PTX position, and the cycle model's issue and stall cycles per PTX line of the ISA run.  On a stream, the
profile, like the statistics, exists after synchronisation.
"""

from __future__ import annotations

import copy
import weakref

import numpy as np

from xcc.diagnostics import LaunchError
from xcc.driver import frontend
from xcc.passes import PassManager, pipeline_for_level
from xcc.profile.format import Profile, module_hash
from xcc.profile.record import record_launch
from xcc.runtime.params import pack_params
from xcc.sim.ir.interpreter import run_function
from xcc.sim.perf.hotspots import hotspots

_IR = weakref.WeakKeyDictionary()  # Module -> its plain -O IR, built at the first profiled launch


def snapshot(function):
    """Device memory and the module's .global variables as they are now (deep copies)."""
    return copy.deepcopy((function.device.memory, function.module_globals))


def module_of(function):
    module = getattr(function, "module", None)
    if module is None or module.sources is None:
        raise LaunchError(f"'{function.name}' cannot be profiled: it was not loaded from PTX (profiles are "
                          "keyed by PTX position)")
    return module


def scalar_arguments(params, args) -> dict[str, tuple[str, int | float]]:
    """param name -> (PTX type, value) of the arguments given as numpy scalars (or floats) of 4 or 8 bytes."""
    out = {}
    for p, a in zip(params, args):
        if isinstance(a, float):
            a = np.float64(a)
        if isinstance(a, np.generic) and not isinstance(a, np.void) and a.dtype.itemsize in (4, 8) \
                and p.size == a.dtype.itemsize:
            out[p.name] = (p.type.lstrip("."), float(a) if a.dtype.kind == "f" else int(a))
    return out


def record_profile(function, kernel, grid, block, args, shared_mem: int, stats, before, max_steps) -> Profile:
    """The profile of the launch that produced ``stats`` from memory state ``before`` (:func:`snapshot`)."""
    module = module_of(function)
    ir = _IR.get(module)
    if ir is None:  # what engine="ir" runs (xcc.runtime.ir_engine.ir_of_sources)
        ir = _IR[module] = PassManager(pipeline_for_level(module.options.opt_level)).run(frontend(module.sources))
    fn = ir.function(kernel.name)
    gmem, globs = before
    raw: dict = {}
    run_function(ir, fn.name, grid, block, pack_params(fn, list(args)), gmem, shared_mem, max_steps,
                 function.device.machine, globs, profile=raw)
    stalls = [(h.line, h.issued, h.cycles, h.reasons) for h in hotspots(stats, kernel, top=None)]
    name = ", ".join(s.name for s in module.sources)
    return record_launch(module_hash([s.text for s in module.sources]), name, fn, raw,
                         scalar_arguments(fn.params, args), grid, block, stalls)
