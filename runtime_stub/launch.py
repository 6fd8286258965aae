"""Kernel launch on the emulated device: argument packing, launch checks, the ISA interpreter.

A cooperative launch (``launch(..., cooperative=True)``, CUDA's ``cudaLaunchCooperativeKernel``) is checked
to be co-resident (every CTA resident at once, from the kernel's occupancy; else a :class:`LaunchError`)
and runs with a zero-initialised grid-sync workspace of :data:`GRID_WORKSPACE_BYTES` in device memory,
allocated for the launch (:func:`grid_workspace`), whose address the kernel reads from ``%envreg1/2``
(nvcc's ``cooperative_groups::this_grid().sync()``); the CTAs take turns (:mod:`xcc.sim.launch`).
"""

from __future__ import annotations

from contextlib import contextmanager

from xcc.backend.objfile import KernelImage
from xcc.backend.occupancy import Occupancy, occupancy
from xcc.diagnostics import KernelFault, LaunchError, SourceLoc
from xcc.driver import Source
from xcc.runtime.device import Device
from xcc.runtime.params import pack_params
from xcc.runtime.profiling import module_of, record_profile, snapshot
from xcc.runtime.queues import PendingLaunch, Stream, run_on
from xcc.semantics.cluster import resolve_cluster
from xcc.sim.isa.emulator import LaunchStats, run_kernel
from xcc.sim.launch import step_limit
from xcc.sim.memory import ModuleGlobals

GRID_WORKSPACE_BYTES = 16
"""The grid-sync workspace: nvcc's grid barrier counts arrivals in the word at offset 4."""


@contextmanager
def grid_workspace(memory, cooperative: bool):
    """The address of a zeroed grid-sync workspace in ``memory`` for a cooperative launch (freed at the
    end), else 0."""
    if not cooperative:
        yield 0
        return
    addr = memory.alloc(GRID_WORKSPACE_BYTES)
    memory.memset(addr, 0, GRID_WORKSPACE_BYTES)
    try:
        yield addr
    finally:
        memory.free(addr)


def check_cooperative(fn: Function, grid, block, shared_mem: int) -> None:
    """A cooperative grid must be co-resident: at most occupancy x SMs CTAs (else a :class:`LaunchError`,
    CUDA's ``cudaErrorCooperativeLaunchTooLarge``)."""
    threads = block[0] * block[1] * block[2]
    resident = fn.occupancy(threads, shared_mem).ctas_per_sm * int(fn.device.machine.data["sm"]["count"])
    nctas = grid[0] * grid[1] * grid[2]
    if nctas > resident:
        raise LaunchError(f"a cooperative grid of {nctas} blocks of '{fn.name}' is too large: at most {resident} "
                          f"blocks of {threads} threads are co-resident (cudaErrorCooperativeLaunchTooLarge)")


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
               profile: bool = False, cooperative: bool = False, cluster=None) -> LaunchStats | PendingLaunch:
        """Run the kernel to completion on the default stream and return its statistics; ``timing=False``
        skips the cycle model (``cycles`` None, no ``metrics``), the results are the same.  With a
        ``stream`` (:class:`xcc.runtime.queues.Stream`) the launch is checked and enqueued, and returns at
        once a :class:`~xcc.runtime.queues.PendingLaunch` whose ``stats`` exist after synchronisation.
        ``max_steps`` is the watchdog's limit (:mod:`xcc.sim.launch`: None the default,
        ``XCC_MAX_STEPS`` or 1M scheduler steps; 0 none): a kernel that runs longer is a located
        :class:`KernelFault`, and so is a launch stopped with Ctrl-C.  ``profile=True`` records the launch's
        profile (:mod:`xcc.runtime.profiling`, docs/profiles.md) on the statistics' ``profile``.
        ``cooperative=True`` is a cooperative launch (grid-wide sync; the module docstring).
        ``cluster=(x, y, z)`` launches thread-block clusters of that shape (None: the kernel's
        ``.reqnctapercluster``, else none): the grid must be a multiple of it, at most 16 CTAs (CUDA's rules;
        :mod:`xcc.semantics.cluster`); a cluster's CTAs are co-resident and share distributed shared memory."""
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
        cluster = resolve_cluster(k.name, grid, cluster, getattr(k, "reqnctapercluster", None),
                                  getattr(k, "maxclusterrank", None)) if cluster is not None else None
        if cooperative:
            check_cooperative(self, grid, block, shared_mem)

        def run() -> LaunchStats:
            before = snapshot(self) if profile else None
            try:
                with grid_workspace(self.device.memory, cooperative) as ws:
                    stats = run_kernel(k, grid, block, params, self.device.memory, shared_mem, self.device.machine,
                                       timing=timing, module_globals=self.module_globals, max_steps=max_steps,
                                       cooperative=cooperative, grid_workspace=ws, cluster=cluster)
            except KernelFault as e:
                if e.loc is None and self.source is not None and getattr(e, "line", 0):
                    e.loc = source_loc(self.source, e.line)
                raise
            if profile:
                stats.profile = record_profile(self, k, grid, block, args, shared_mem, stats, before, max_steps)
            stats.sources = self.source  # the PTX (its name and .file table): the advisor's locations
            return stats

        return run_on(stream, self.device, run, f"the launch of '{k.name}'", kernel=k, shared_mem=shared_mem)

    def autotune(self, grid, block, args=(), shared_mem: int = 0, budget: int = 32, **options):
        """Search compiler knobs for the fastest build of this launch on the cycle model, with at most
        ``budget`` candidate builds; afterwards launches of this shape run the tuned binary.  Returns an
        :class:`xcc.TuneResult` (:func:`xcc.runtime.tuning.autotune` lists the options)."""
        if self.module is None or self.module.sources is None:
            raise LaunchError(f"'{self.name}' cannot be autotuned: it was not loaded from PTX")
        return self.module.autotune(self, grid, block, args, shared_mem, budget, **options)

    def __call__(self, grid, block, args=(), shared_mem: int = 0, timing: bool = True,
                 stream: Stream | None = None, *, max_steps: int | None = None,
                 profile: bool = False, cooperative: bool = False, cluster=None) -> LaunchStats | PendingLaunch:
        return self.launch(grid, block, args, shared_mem, timing, stream, max_steps=max_steps, profile=profile,
                           cooperative=cooperative, cluster=cluster)


def source_loc(source: Source, line: int) -> SourceLoc:
    """The place of PTX line ``line`` of ``source``: its first non-blank column and its text."""
    lines = source.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else None
    col = len(text) - len(text.lstrip()) + 1 if text is not None else 1
    return SourceLoc(source.name, line, col, text)
