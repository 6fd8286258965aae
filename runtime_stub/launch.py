"""Kernel launch on the emulated device: argument packing, launch checks, the ISA interpreter."""

from __future__ import annotations

from xcc.backend.objfile import KernelImage
from xcc.backend.occupancy import Occupancy, occupancy
from xcc.diagnostics import KernelFault, LaunchError, SourceLoc
from xcc.driver import Source
from xcc.runtime.device import Device
from xcc.runtime.params import pack_params
from xcc.runtime.profiling import module_of, record_profile, snapshot
from xcc.runtime.queues import PendingLaunch, Stream, run_on
from xcc.sim.isa.emulator import LaunchStats, run_kernel
from xcc.sim.launch import step_limit
from xcc.sim.memory import ModuleGlobals


def dim3(v, what: str) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3 or not all(isinstance(x, int) and x >= 1 for x in t):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return (t + (1, 1))[:3]


class Function:
    module = None  # the Module that loaded it (set by Module.get_function)
    tuned = None  # the autotuned binaries by launch shape (xcc.runtime.tuning.Tuned); None: none
    variants = None  # launch-time specialisation (xcc.runtime.specialize.Variants); None: the general build

    def __init__(self, kernel: KernelImage, device: Device, module_globals: ModuleGlobals | None = None,
                 source: Source | None = None):
        self.kernel = kernel
        self.device = device
        self.module_globals = module_globals  # the module's .global variables (None: fresh per launch)
        self.source = source  # the PTX that defines the kernel: a fault names its file, line and text

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def num_regs(self) -> int:
        return self.kernel.registers

    def occupancy(self, block_size: int, shared_mem: int = 0) -> Occupancy:
        """Active CTAs per SM for ``block_size`` threads and the resource that limits them."""
        return occupancy(self.kernel, self.device.machine, block_size, shared_mem)

    def launch(self, grid, block, args=(), shared_mem: int = 0, timing: bool = True,
               stream: Stream | None = None, *, max_steps: int | None = None,
               profile: bool = False) -> LaunchStats | PendingLaunch:
        """Run the kernel to completion on the default stream and return its statistics; ``timing=False``
        skips the cycle model (``cycles`` None, no ``metrics``), the results are the same.  With a
        ``stream`` (:class:`xcc.runtime.queues.Stream`) the launch is checked and enqueued, and returns at
        once a :class:`~xcc.runtime.queues.PendingLaunch` whose ``stats`` exist after synchronisation.
        ``max_steps`` is the watchdog's limit (:mod:`xcc.sim.launch`: None the default,
        ``XCC_MAX_STEPS`` or 1M scheduler steps; 0 none): a kernel that runs longer is a located
        :class:`KernelFault`, and so is a launch stopped with Ctrl-C.  ``profile=True`` records the launch's
        profile (:mod:`xcc.runtime.profiling`, docs/profiles.md) on the statistics' ``profile``."""
        if profile:
            module_of(self)  # a clear error now for a kernel not loaded from PTX
        max_steps = step_limit(max_steps) or 0  # checked now, also for a launch enqueued on a stream
        grid, block = dim3(grid, "grid"), dim3(block, "block")
        k = self.kernel if self.tuned is None else self.tuned.kernel_for(self, (grid, block, shared_mem), args)
        if self.variants is not None:
            k = self.variants.kernel_for(self, grid, block, args)
        limits = self.device.machine.limits
        threads = block[0] * block[1] * block[2]
        if threads > min(k.max_threads, int(limits["max_threads_per_block"])):
            raise LaunchError(f"block of {threads} threads exceeds the limit of "
                              f"{min(k.max_threads, int(limits['max_threads_per_block']))} for '{k.name}'")
        if k.reqntid and tuple(k.reqntid + [1, 1])[:3] != block:
            raise LaunchError(f"'{k.name}' requires a block of {tuple(k.reqntid)} (.reqntid), got {block}")
        if shared_mem < 0 or k.shared_bytes + shared_mem > int(limits["shared_memory_per_block"]):
            raise LaunchError(f"{k.shared_bytes + shared_mem} bytes of shared memory exceed the per-block "
                              f"limit of {limits['shared_memory_per_block']}")
        params = pack_params(k, list(args))

        def run() -> LaunchStats:
            before = snapshot(self) if profile else None
            try:
                stats = run_kernel(k, grid, block, params, self.device.memory, shared_mem, self.device.machine,
                                   timing=timing, module_globals=self.module_globals, max_steps=max_steps)
            except KernelFault as e:
                if e.loc is None and self.source is not None and getattr(e, "line", 0):
                    e.loc = source_loc(self.source, e.line)
                raise
            if profile:
                stats.profile = record_profile(self, k, grid, block, args, shared_mem, stats, before, max_steps)
            return stats

        return run_on(stream, self.device, run, f"the launch of '{k.name}'")

    def autotune(self, grid, block, args=(), shared_mem: int = 0, budget: int = 32, **options):
        """Search compiler knobs for the fastest build of this launch on the cycle model, with at most
        ``budget`` candidate builds; afterwards launches of this shape run the tuned binary.  Returns an
        :class:`xcc.TuneResult` (:func:`xcc.runtime.tuning.autotune` lists the options)."""
        if self.module is None or self.module.sources is None:
            raise LaunchError(f"'{self.name}' cannot be autotuned: it was not loaded from PTX")
        return self.module.autotune(self, grid, block, args, shared_mem, budget, **options)

    def __call__(self, grid, block, args=(), shared_mem: int = 0, timing: bool = True,
                 stream: Stream | None = None, *, max_steps: int | None = None,
                 profile: bool = False) -> LaunchStats | PendingLaunch:
        return self.launch(grid, block, args, shared_mem, timing, stream, max_steps=max_steps, profile=profile)


def source_loc(source: Source, line: int) -> SourceLoc:
    """The place of PTX line ``line`` of ``source``: its first non-blank column and its text."""
    lines = source.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else None
    col = len(text) - len(text.lstrip()) + 1 if text is not None else 1
    return SourceLoc(source.name, line, col, text)
