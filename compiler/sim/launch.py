"""The launch engine both interpreters run on: launch checks, waves, fault location, the watchdog.

An interpreter (:mod:`xcc.sim.ir.interpreter`, :mod:`xcc.sim.isa.emulator`) subclasses :class:`Launch`
and supplies its executors: how to build them, how to run one wave (:meth:`Launch.run_wave`) and how
to name a position (:meth:`Launch.where`, :meth:`Launch.line_of`).  The engine owns everything else:

* **Launch checks** (CUDA's ``cudaErrorInvalidConfiguration`` and friends): grid and block of one to
  three positive integers, at most the machine's (or ``.maxntid``'s) threads per block, ``.reqntid``,
  shared memory per CTA, the parameter buffer's size.
* **Waves**: CTAs run in waves of whole CTAs (:mod:`xcc.sim.waves` keeps each wave's books); memory a
  wave uses is cleared before the next.
* **Faults**: every kernel error becomes a :class:`~xcc.diagnostics.KernelFault` naming the kernel, the
  PTX line, the instruction, the first faulting CTA and thread (and the address for a memory fault).
* **The watchdog**: a launch runs at most ``max_steps`` scheduler steps (one instruction for one group
  of threads); None means :func:`default_max_steps` (``XCC_MAX_STEPS``, else
  :data:`DEFAULT_MAX_STEPS`), 0 means no limit.  A runaway launch, or one interrupted by Ctrl-C, ends in
  a :class:`~xcc.diagnostics.KernelFault` (:class:`~xcc.diagnostics.LaunchInterrupted` for Ctrl-C) that names the kernel,
  where its warps are (PTX line and pc), how many warps are still running and the limit.
* **Cooperative launches** (``cooperative=True``; CUDA's ``cuLaunchCooperativeKernel``, whose grid the
  runtime has checked to be co-resident): every CTA runs in one wave, and the CTAs take turns
  (:class:`~xcc.sim.waves.FairScheduler`: a CTA runs until it branches backwards, then the others run),
  so a CTA spinning at a grid-wide barrier lets the others reach it.  ``grid_workspace`` is the address
  of the zero-initialised grid-sync workspace the driver provides, read by the kernel as
  ``%envreg1 << 32 | %envreg2`` (0 outside a cooperative launch, where nvcc's ``grid.sync()`` traps).
* **Thread-block clusters** (``cluster=(x, y, z)`` or the kernel's ``.reqnctapercluster``; CUDA's rules in
  :func:`xcc.semantics.cluster.resolve_cluster`): the CTAs run cluster by cluster, a wave holds whole clusters
  (co-resident) whose CTAs take turns as in a cooperative launch; ``barrier.cluster`` is the wave's
  (:mod:`xcc.sim.waves`), and shared-space addresses with a rank field reach the named CTA of the cluster.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from xcc.backend.lineinfo import line_info
from xcc.backend.machine import Machine, load_machine
from xcc.backend.objfile import KernelImage
from xcc.diagnostics import KernelFault, LaunchError, LaunchInterrupted, XccError
from xcc.semantics.cluster import dims, resolve_cluster
from xcc.semantics.faults import MemoryFault
from xcc.semantics.threads import fault_message, thread_at
from xcc.sim.memory import ModuleGlobals
from xcc.sim.stats import LaunchStats
from xcc.sim.waves import EXITED, WAIT_BAR, WAIT_BSYNC, WAIT_CLUSTER, WAIT_MBAR, ExecFault, Wave

__all__ = ["CURRENT_GRAPH_EXEC", "DEFAULT_MAX_STEPS", "Launch", "LaunchInterrupted", "default_max_steps", "dims",
           "step_limit"]

DEFAULT_MAX_STEPS = 1_000_000
"""Scheduler steps a launch may take unless told otherwise: a single spinning warp reaches it in about
10 s on the IR engine and 40 s on the ISA engine (2-core CI machine), far beyond what the kernels of the
corpus, the tests and the benchmarks take."""


_LAUNCH_IDS = itertools.count(1)
"""The process's launch counter: launch n (from 1, over every device and both engines) has ``%gridid`` n."""

CURRENT_GRAPH_EXEC: ContextVar[int] = ContextVar("current_graph_exec", default=0)
"""The handle of the executable graph whose kernel node is being launched (0 outside a graph launch): the
runtime's ``cuGraphLaunch`` sets it while a kernel node runs; a launch reads it as ``%current_graph_exec``."""


def default_max_steps() -> int:
    """The watchdog's limit when a launch names none: ``XCC_MAX_STEPS`` (0: no limit), else
    :data:`DEFAULT_MAX_STEPS`."""
    env = os.environ.get("XCC_MAX_STEPS", "").strip()
    if not env:
        return DEFAULT_MAX_STEPS
    try:
        value = int(env, 0)
    except ValueError:
        raise LaunchError(f"XCC_MAX_STEPS must be a non-negative integer, not {env!r}") from None
    if value < 0:
        raise LaunchError(f"XCC_MAX_STEPS must be a non-negative integer, not {env!r}")
    return value


def step_limit(max_steps: int | None) -> int | None:
    """The launch's step limit (None: unlimited) from its ``max_steps`` argument."""
    if max_steps is None:
        max_steps = default_max_steps()
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 0:
        raise LaunchError(f"max_steps must be a non-negative integer (0: no limit), not {max_steps!r}")
    return int(max_steps) or None


class Launch:
    """One launch of kernel ``name`` on ``grid`` x ``block`` threads; subclasses supply the executors."""

    barrier_names = {WAIT_BAR: "barrier {k}", WAIT_BSYNC: "convergence barrier B{k}",
                     WAIT_MBAR: "the mbarrier at shared offset {k:#x} (try_wait; no phase completes)",
                     WAIT_CLUSTER: "barrier.cluster.wait of cluster {k} (not every thread of its CTAs arrived)"}
    """How a deadlock report names what threads wait at (by wave status)."""
    deadlock_rule = "A barrier waits for every non-exited thread of the CTA"

    def __init__(self, name: str, grid, block, machine: Machine | str | None, max_steps: int | None, *,
                 max_threads: int = 0, reqntid=None, cooperative: bool = False, grid_workspace: int = 0,
                 cluster=None, reqnctapercluster=None, explicit_cluster: bool = False, maxclusterrank=None):
        if machine is None or isinstance(machine, str):
            machine = load_machine(machine or "xg1")
        self.machine, self.name = machine, name
        self.grid, self.block = dims(grid, "grid"), dims(block, "block")
        self.max_steps = step_limit(max_steps)
        lim = machine.limits
        self.tpb = self.block[0] * self.block[1] * self.block[2]
        max_block = min(int(lim.get("max_threads_per_block", 1024)), max_threads or 1 << 30)
        if self.tpb > max_block:
            raise LaunchError(f"kernel '{name}': block {self.block} has {self.tpb} threads, more than the "
                              f"{max_block} allowed")
        if reqntid and dims(reqntid, "reqntid") != self.block:
            raise LaunchError(f"kernel '{name}' requires block {tuple(reqntid)} (.reqntid), launched with "
                              f"{self.block}")
        self.P = (self.tpb + 31) & ~31  # thread slots per CTA: whole warps
        self.nctas = self.grid[0] * self.grid[1] * self.grid[2]
        self.sm_count = int(machine.data["sm"]["count"])
        self.nwarpid = int(lim.get("max_warps", 64))
        self.max_shared = int(lim.get("shared_memory_per_block", lim["shared_memory_bytes"]))
        self.smem_unit = int(lim["shared_memory_allocation_unit"])
        self.cooperative, self.grid_workspace = bool(cooperative), int(grid_workspace)
        self.gridid = next(_LAUNCH_IDS)  # %gridid: distinct for every launch of the process
        self.graph_exec = CURRENT_GRAPH_EXEC.get()  # %current_graph_exec
        self.set_cluster(cluster, reqnctapercluster, explicit_cluster, maxclusterrank)
        self.cta0 = 0
        self.step = 0
        self.wave: Wave | None = None
        self.wave_ctas = 0
        self.printf: list[tuple[int, int, int, str]] = []  # (CTA, thread, order, text) of device printf
        self.ext: dict = {}  # per-wave state of op families, by name (see wave_state)

    def set_cluster(self, cluster, reqnctapercluster, explicit: bool, maxclusterrank) -> None:
        """The launch's cluster shape (xcc.semantics.cluster.resolve_cluster: checked as CUDA does)."""
        if explicit and cluster is None and not reqnctapercluster:
            raise LaunchError(f"kernel '{self.name}' is declared .explicitcluster: launch it with a cluster shape "
                              "(launch(..., cluster=(x, y, z)) or cuLaunchKernelEx's cluster-dimension attribute)")
        self.cluster = resolve_cluster(self.name, self.grid, cluster, reqnctapercluster, maxclusterrank)
        self.csize = self.cluster[0] * self.cluster[1] * self.cluster[2]
        self.explicit_cluster = bool(explicit or cluster is not None or reqnctapercluster)

    @staticmethod
    def check_memory(name: str, dynamic_shared: int, param_bytes: int, params: bytes) -> None:
        """The launch's dynamic shared memory size and parameter buffer, checked."""
        if dynamic_shared < 0:
            raise LaunchError("dynamic shared memory size must be >= 0")
        if len(params) < param_bytes:
            raise LaunchError(f"kernel '{name}' takes {param_bytes} bytes of parameters, got {len(params)}")

    def check_shared(self, shared: int, detail: str = "") -> None:
        if shared > self.max_shared:
            raise LaunchError(f"kernel '{self.name}': {shared} bytes of shared memory per CTA{detail} exceed "
                              f"{self.max_shared}")

    # -- what a subclass supplies ----------------------------------------------------------------
    def where(self, pos: int) -> str:  # pragma: no cover - abstract
        """``PTX line N (instruction text)`` of position ``pos``."""
        raise NotImplementedError

    def line_of(self, pos: int) -> int:  # pragma: no cover - abstract
        """The PTX line of position ``pos`` (0: unknown)."""
        raise NotImplementedError

    def loc_of(self, pos: int):
        """The source location a fault at ``pos`` carries (None: none)."""
        return None

    def source_of(self, pos: int) -> tuple[str, int] | None:
        """The CUDA source position (file as the PTX names it, line) of position ``pos`` of a kernel image
        built from PTX with ``.loc``/``.file`` (nvcc ``-lineinfo``/``-G``; :mod:`xcc.backend.lineinfo`), else None."""
        kernel = getattr(self, "kernel", None)
        if not isinstance(kernel, KernelImage) or pos is None:
            return None
        info = line_info(kernel, pos)
        return (info.file, info.line) if info.file is not None else None

    def place(self, pos: int) -> str:
        """:meth:`where` ``pos`` is, and the CUDA source line beside it when known, as compute-sanitizer names
        ``file.cu:line`` beside the SASS offset."""
        src = self.source_of(pos)
        return self.where(pos) + (f", {src[0]}:{src[1]}" if src is not None else "")

    # -- waves -------------------------------------------------------------------------------------
    def wave_size(self, per_wave: int) -> int:
        """CTAs per wave: ``per_wave`` (what the interpreter's memory allows), or the whole grid for a
        cooperative launch, whose CTAs must all be resident at once."""
        if self.cooperative:
            return self.nctas
        return max(self.csize, per_wave // self.csize * self.csize)  # whole clusters, co-resident

    def total_smem_size(self, shared: int) -> int:
        """``%total_smem_size`` of a CTA with ``shared`` bytes (static + dynamic): rounded up to the machine's
        ``[limits] shared_memory_allocation_unit``.  ``%aggr_smem_size`` adds the reserved shared memory, of which
        xcc has none."""
        return -(-shared // self.smem_unit) * self.smem_unit

    def envregs(self) -> dict[str, int]:
        """The ``%envreg`` values of this launch: the grid-sync workspace's address, high and low words."""
        return {"envreg1": self.grid_workspace >> 32, "envreg2": self.grid_workspace & 0xFFFFFFFF}

    def new_wave(self, nslots: int, nctas: int, start: int) -> Wave:
        self.wave, self.wave_ctas = Wave(self.P, self.tpb, nslots, nctas, start,
                                         fair=self.cooperative or self.csize > 1), nctas
        self.wave.cluster = self.csize
        return self.wave

    def wave_state(self, key: str, make):
        """The state op family ``key`` keeps for the wave now running (e.g. the cp.async groups), made by
        ``make()`` at its first use in the wave; a new wave starts without it."""
        state = self.ext.get(key)
        if state is None or state[0] != self.cta0:
            state = self.ext[key] = (self.cta0, make())
        return state[1]

    @contextmanager
    def module_globals(self, gmem, module_globals: ModuleGlobals | None):
        """The module's ``.global`` variables: ``module_globals`` (they persist across launches), or the
        launch's own, freed at its end."""
        own = module_globals is None
        globs = ModuleGlobals(gmem) if own else module_globals
        try:
            yield globs
        finally:
            if own:
                globs.free()

    def waves(self, per_wave: int):
        """(first CTA, CTAs) of each wave; kernel arithmetic never warns, as on a GPU."""
        with np.errstate(all="ignore"):
            for cta0 in range(0, self.nctas, per_wave):
                self.cta0 = cta0
                yield cta0, min(per_wave, self.nctas - cta0)

    # -- faults ------------------------------------------------------------------------------------
    def coords(self, slot: int):
        return thread_at(slot, self, self.P)

    def fault(self, pos: int, reason: str, slot: int | None, nthreads: int = 1, address=None,
              cls: type[KernelFault] = KernelFault) -> KernelFault:
        msg, c3, t3 = fault_message(self.name, self.place(pos), reason, self, self.P, slot, nthreads)
        err = cls(msg, self.loc_of(pos))
        err.kernel, err.pc, err.cta, err.thread, err.address = self.name, pos, c3, t3, address
        err.line = self.line_of(pos)
        err.source_file, err.source_line = self.source_of(pos) or (None, None)
        return err

    def located(self, e: BaseException, pos: int, idx: np.ndarray) -> BaseException:
        """The error ``e`` raised while threads ``idx`` ran position ``pos``, located."""
        if isinstance(e, KernelFault):
            return e
        if isinstance(e, KeyboardInterrupt):
            return self.runaway(pos, idx, "interrupted (Ctrl-C)", LaunchInterrupted)
        if isinstance(e, MemoryFault):
            reason = re.sub(r" \(thread \d+(; \d+ threads faulted)?\)", "", str(e))
            t = e.thread if e.thread is not None and e.thread < idx.size else 0
            return self.fault(pos, reason, int(idx[t]) if idx.size else None, e.addresses.size, e.address)
        if isinstance(e, ExecFault):
            t = e.thread if e.thread is not None and e.thread < idx.size else 0
            return self.fault(pos, e.reason, int(idx[t]) if idx.size else None, e.nthreads)
        if isinstance(e, XccError):  # e.g. an UnsupportedError raised by xcc.semantics: locate it
            return type(e)(f"kernel '{self.name}' at {self.place(pos)}: {e.message}", self.loc_of(pos))
        return e

    def over_limit(self, pos: int, idx: np.ndarray) -> KernelFault:
        """The watchdog's fault: the launch took more than ``max_steps`` steps."""
        return self.runaway(pos, idx, f"the kernel did not finish within {self.max_steps} scheduler steps "
                                      "(the watchdog's limit: launch(max_steps=N), xcc run --max-steps N or "
                                      "XCC_MAX_STEPS; 0 for none)", KernelFault)

    def runaway(self, pos: int, idx: np.ndarray, why: str, cls: type[KernelFault]) -> KernelFault:
        """A fault that says where the warps of a launch that did not end are."""
        wave = self.wave
        groups = [(pos, idx)] if idx.size else []
        if wave is not None:
            groups += wave.sched.pending()
        spots = {}
        for p, arr in groups:
            spots.setdefault(p, []).append(np.unique(arr >> 5))
        parts = [f"{np.unique(np.concatenate(w)).size} warp(s) at {self.place(p)} (pc {p})"
                 for p, w in sorted(spots.items())]
        running = 0
        if wave is not None:
            alive = np.flatnonzero(wave.state != EXITED)
            running = np.unique(alive >> 5).size
            if wave.at_bar or (wave.state == WAIT_BSYNC).any():
                parts.append(f"{np.unique(wave.waiting() >> 5).size} warp(s) waiting at barriers")
        later = self.nctas - self.cta0 - (self.wave_ctas if wave is not None else 0)
        reason = (f"{why}; {running} warp(s) still running" + (f", {later} CTA(s) not started" if later > 0 else "")
                  + (": " + "; ".join(parts) if parts else ""))
        return self.fault(pos, reason, int(idx[0]) if idx.size else None, cls=cls)

    def deadlock(self) -> KernelFault:
        """No thread can run but some wait at barriers: name each barrier, where, and who waits."""
        wave = self.wave
        waiting = wave.waiting()
        key = (wave.state[waiting].astype(np.int64) << 56 | wave.wait_k[waiting] << 32 | wave.wait_pc[waiting])
        parts = []
        for kv in np.unique(key):
            sel = waiting[key == kv]
            st, k, pc = int(kv >> 56), int(kv >> 32) & 0xFFFFFF, int(kv & 0xFFFFFFFF)
            parts.append(f"{sel.size} thread(s) waiting at {self.barrier_names[st].format(k=k)} at "
                         f"{self.place(pc)} (first: {self.coords(int(sel[0]))[0]})")
        first = int(waiting[0])
        return self.fault(int(wave.wait_pc[first]), "deadlock: no thread can proceed; " + "; ".join(parts)
                          + f". {self.deadlock_rule}", first)

    # -- results -----------------------------------------------------------------------------------
    def stats(self, names: list[str], tcounts: list[int], wcounts: list[int], **extra) -> LaunchStats:
        """The launch's statistics (``names``: each position's op or mnemonic); device printf output is
        written to stdout in thread order."""
        output = "".join(t for *_, t in sorted(self.printf))
        if output:
            sys.stdout.write(output)
            sys.stdout.flush()
        by_op: dict[str, int] = {}
        for name, w in zip(names, wcounts):
            if w:
                by_op[name] = by_op.get(name, 0) + w
        return LaunchStats(thread_instructions=sum(tcounts), warp_instructions=sum(wcounts),
                           instructions_executed=by_op, kernel=self.name, grid=self.grid, block=self.block,
                           steps=self.step, printf_output=output, **extra)

