"""Running PTX on the IR interpreter with the runtime's launch API: how users tell a miscompile from a bug.

    from xcc.runtime.ir_engine import launch_ptx, load_module_ir
    stats = launch_ptx(ptx, "saxpy", grid, block, (np.int32(n), np.float32(a), d_x, d_y), device)

    mod = load_module_ir("saxpy.ptx", opt_level=0, device=device)
    mod.get_function("saxpy").launch(grid, block, args)

    mod = rt.load_module("saxpy.ptx", engine="ir")    # the same, through the runtime

Arguments are packed and checked exactly as :meth:`xcc.runtime.Function.launch` packs them (numpy
scalars, device arrays, plain 64-bit addresses, ``bytes`` or structured scalars for byte arrays);
buffers live in the same :class:`xcc.runtime.Device` memory, so a test can run one kernel on both
engines and compare.  The IR is optimised by the ``-O`` pipeline of :mod:`xcc.passes` first, so
``opt_level`` selects which IR is checked.
"""

from __future__ import annotations

from pathlib import Path

from xcc.diagnostics import LaunchError
from xcc.driver import Source, frontend, read_source
from xcc.ir.core import Module
from xcc.passes import PassManager, pipeline_for_level
from xcc.runtime.device import Device, default_device
from xcc.runtime.launch import dim3, grid_workspace
from xcc.runtime.params import pack_params
from xcc.runtime.queues import PendingLaunch, Stream, run_on
from xcc.semantics.cluster import resolve_cluster
from xcc.sim.ir.interpreter import run_function
from xcc.sim.launch import step_limit
from xcc.sim.memory import ModuleGlobals
from xcc.sim.stats import LaunchStats


def build_ir(src, opt_level: int = 0, verify: bool = False) -> Module:
    """The IR module of PTX ``src`` (a path, text, bytes or a list of these), after the ``-O`` pipeline."""
    items = src if isinstance(src, list | tuple) else [src]
    sources = [read_source(s, f"<ptx {i}>" if len(items) > 1 else "<ptx>") for i, s in enumerate(items)]
    return ir_of_sources(sources, opt_level, verify)


def ir_of_sources(sources: list[Source | bytes], opt_level: int = 0, verify: bool = False) -> Module:
    """The IR module of sources already read, after the ``-O`` pipeline; an .xbin image is a :class:`LaunchError`."""
    if not all(isinstance(s, Source) for s in sources):
        raise LaunchError("the IR interpreter runs PTX, not .xbin images")
    return PassManager(pipeline_for_level(opt_level), verify=verify).run(frontend(sources))


class IRFunction:
    """One kernel of an IR module, launched on the IR interpreter."""

    def __init__(self, module: Module, name: str, device: Device, module_globals: ModuleGlobals | None = None):
        fn = next((f for f in module.functions if f.name == name and f.is_entry), None)
        if fn is None:
            names = ", ".join(sorted(f.name for f in module.functions if f.is_entry)) or "none"
            raise LaunchError(f"no kernel named '{name}' in the module (it has: {names})")
        self.fn = fn
        self.module, self.device = module, device
        self.module_globals = module_globals  # the module's .global variables (None: fresh per launch)

    @property
    def name(self) -> str:
        return self.fn.name

    def launch(self, grid, block, args=(), shared_mem: int = 0, timing: bool = False,
               stream: Stream | None = None, *, max_steps: int | None = None,
               profile: bool = False, cooperative: bool = False, cluster=None) -> LaunchStats | PendingLaunch:
        """Run the kernel to completion, as :meth:`xcc.runtime.Function.launch` does (on ``stream``: enqueued).
        The IR interpreter has no cycle model: ``timing`` is accepted as the ISA engine's launch takes it,
        and every launch is functional (``cycles`` None).  Profiles are recorded by the ISA engine's launch.
        ``cooperative=True``: a cooperative launch with its grid-sync workspace (:mod:`xcc.runtime.launch`); the
        IR has no register allocation, so the co-residency check is the ISA engine's."""
        if profile:
            raise LaunchError(f"'{self.name}': profile=True records a launch of the ISA engine (its stall cycles "
                              "come from the cycle model); load the module with engine=\"isa\"")
        params = pack_params(self.fn, list(args))
        max_steps = step_limit(max_steps) or 0  # checked now, also for a launch enqueued on a stream
        grid, block = dim3(grid, "grid"), dim3(block, "block")
        d = self.fn.directives
        if cluster is not None:  # checked now (CUDA's rules), also for a launch enqueued on a stream
            cluster = resolve_cluster(self.name, grid, cluster, d.get("reqnctapercluster") or None,
                                      int(d["maxclusterrank"][0]) if d.get("maxclusterrank") else None)

        def run() -> LaunchStats:
            with grid_workspace(self.device.memory, cooperative) as ws:
                return run_function(self.module, self.fn.name, grid, block, params, self.device.memory, shared_mem,
                                    max_steps, self.device.machine, self.module_globals, cooperative=cooperative,
                                    grid_workspace=ws, cluster=cluster)

        return run_on(stream, self.device, run, f"the launch of '{self.fn.name}'")

    __call__ = launch


class IRModule:
    """``rt.load_module``'s counterpart for the IR engine: ``get_function(name).launch(...)``."""

    def __init__(self, module: Module, device: Device):
        self.module, self.device = module, device
        self.globals = ModuleGlobals(device.memory)  # .global variables persist across launches

    @property
    def function_names(self) -> list[str]:
        return [f.name for f in self.module.functions if f.is_entry]

    def get_function(self, name: str) -> IRFunction:
        return IRFunction(self.module, name, self.device, self.globals)


def load_module_ir(src: str | Path | bytes | list, opt_level: int = 0, device: Device | None = None) -> IRModule:
    return IRModule(build_ir(src, opt_level), device or default_device())


def launch_ptx(ptx, kernel_name: str, grid, block, args=(), device: Device | None = None, *,
               opt_level: int = 0, shared_mem: int = 0, max_steps: int | None = None) -> LaunchStats:
    """Build the IR of ``ptx`` and run ``kernel_name`` on the IR interpreter in ``device``'s memory."""
    mod = load_module_ir(ptx, opt_level, device)
    return mod.get_function(kernel_name).launch(grid, block, args, shared_mem, max_steps=max_steps)
