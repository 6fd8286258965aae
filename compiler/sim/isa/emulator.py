"""The xg1 ISA interpreter: runs a :class:`KernelImage` over a whole grid, vectorised with numpy.

Execution model (every later stage - runtime, profiler, debugger - relies on it):

* **Threads.**  All threads of the grid run together, in waves of whole CTAs of at most
  :data:`WAVE_THREADS` threads.  A wave's threads live in *slots*: CTA ``c`` of the wave owns
  slots ``[c*P, (c+1)*P)`` with ``P`` the block size rounded up to whole warps, thread ``t`` of
  the CTA (linear ``tid.x + ntid.x*(tid.y + ntid.y*tid.z)``) is slot ``c*P + t``, so warp =
  ``slot >> 5`` and lane = ``slot & 31``.  Slots past the block size (missing lanes of a partial
  last warp) never exist: they start exited.  Ascending slot order is ascending global thread
  order, the order in which atomics are serialised and the last of several stores wins.
* **State.**  ``regs`` uint32 [R, T] (R255 = RZ reads 0, writes are dropped; a 64-bit operand
  is the pair ``R[r] | R[r+1] << 32``), ``preds`` bool [8, T] (P7 = PT is always true), a pc and a
  status per thread: running, exited, waiting at a CTA barrier (BAR) or at a convergence barrier
  (BSYNC B0..B15).
* **Scheduling** (the launch engine, :mod:`xcc.sim.launch` and :mod:`xcc.sim.waves`).  Runnable
  threads are kept in groups by pc.  Each step takes the minimum pc and executes that instruction
  for every runnable thread at it, across all warps and CTAs at once; threads whose guard predicate
  is false just advance.  Deterministic.  The launch ends when every thread has exited; if none can
  run but some wait, it is a deadlock (a :class:`KernelFault` naming the waiting instructions); past
  ``max_steps`` steps, the watchdog stops it.
* **Convergence barriers** (Volta-style independent thread scheduling): ``BSSY Bk`` adds the
  executing threads to the warp's mask ``B[k]``; ``BSYNC Bk`` makes them wait.  A warp's threads
  waiting at ``Bk`` are released together (pc + 1) once every non-exited thread of ``B[k]`` in
  that warp waits at ``Bk``; the warp's ``B[k]`` is then cleared.  Each call frame has its own
  barriers: ``CALL`` saves the caller's masks (in the return-address pair, as the ABI does) and the
  callee starts outside every barrier, but a thread inside a call still counts as a member of the
  caller's barriers, so a ``BSYNC`` in the caller waits for the threads that took a call until they
  return (the emulator keeps each thread's call depth and outer masks for this).  ``BAR`` waits until every
  non-exited thread of the CTA waits at the same barrier.  Exited threads never block anyone.
* **Memory.**  Global accesses go to the caller's :class:`GlobalMemory`; each CTA has
  ``kernel.shared_bytes + dynamic_shared`` bytes of zero-initialised shared memory and each thread
  ``kernel.local_bytes`` of zero-initialised local memory; generic accesses reach them through
  the windows of :class:`GenericMemory`; constant bank 0 holds ntid, nctaid and the parameters
  (``isa.CBANK_*``).  Any kernel error becomes a
  :class:`KernelFault` naming the kernel, PTX line, instruction, CTA and thread.

Per-step cost is O(threads executing the step) numpy work plus a few microseconds of Python;
instruction semantics live in :mod:`xcc.sim.isa.executors` (one ``exec_*`` module per family), which call :mod:`xcc.semantics`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from xcc.backend.encoding import decode_all, format_inst
from xcc.backend.isa import (
    CBANK_DYNAMIC_SMEM,
    CBANK_ENVREG,
    CBANK_GLOBALS,
    CBANK_GRAPH_EXEC,
    CBANK_GRIDID,
    CBANK_NCTAID,
    CBANK_NTID,
    CBANK_PARAMS,
    CBANK_TOTAL_SMEM,
    LDGSTS_BYTES,
    NUM_CONV_BARRIERS,
    PT,
)
from xcc.backend.machine import Machine
from xcc.backend.objfile import KernelImage
from xcc.backend.occupancy import launch_metrics
from xcc.diagnostics import LaunchError, ObjectFormatError, XccError
from xcc.ir.core import Variable, layout_variables
from xcc.semantics.faults import MemoryFault
from xcc.sim.isa.exec_calls import check_stack, restore_state, save_state
from xcc.sim.isa.exec_memory import SIZE_BYTES, global_addr
from xcc.sim.isa.exec_sync import tma_memrec
from xcc.sim.isa.executors import IMPLS, Binder, Control
from xcc.sim.isa.hazards import HazardChecker, strict_default
from xcc.sim.launch import Launch
from xcc.sim.memory import (
    FlatMemory,
    GenericMemory,
    GlobalMemory,
    ModuleGlobals,
    ReadOnlyMemory,
    param_window,
)
from xcc.sim.perf.facts import machine_value
from xcc.sim.perf.timing import TRACE_CAP, TimedLaunch, TraceRecorder, mem_space
from xcc.sim.stats import LaunchStats
from xcc.sim.waves import EXITED, WAIT_BAR, WAIT_BSYNC, ExecFault, bar_reduce, runs

__all__ = ["LaunchStats", "run_kernel", "WAVE_THREADS"]

WAVE_THREADS = 1 << 16
"""Upper bound on the threads of one wave (whole CTAs; at least one CTA)."""
WAVE_LOCAL_BYTES = 64 << 20
"""Upper bound on the local memory of one wave (kernels with a call stack run in smaller waves)."""
_K_NORMAL, _K_BRA, _K_EXIT, _K_BAR, _K_BSYNC, _K_CALL, _K_RET, _K_MBAR = range(8)
_KIND = {"branch": _K_BRA, "exit": _K_EXIT, "barrier": _K_BAR, "reconverge": _K_BSYNC, "call": _K_CALL,
         "return": _K_RET, "mbar_wait": _K_MBAR}  # Control.kind: what the scheduler does
_LANES = np.arange(32, dtype=np.int64)
_EMPTY = np.empty(0, np.int64)


class _Ctx:
    """The state one wave's executors are bound to (see :class:`xcc.sim.isa.exec_base.Binder`)."""

    regs: np.ndarray
    preds: np.ndarray
    bmask: np.ndarray
    smem: FlatMemory
    lmem: FlatMemory
    generic: GenericMemory
    cta0: int = 0
    step: int = 0


@dataclass
class _Step:
    """The threads of one scheduler step: all at ``pc`` (``idx``), those whose guard holds (``eidx``,
    selected by ``esel``: a slice when contiguous), those whose guard fails (``skip``)."""

    pc: int
    idx: np.ndarray
    eidx: np.ndarray
    esel: object
    skip: np.ndarray


@lru_cache(maxsize=64)
def _decode(code: bytes):
    return tuple(decode_all(code))


def run_kernel(kernel: KernelImage, grid, block, params: bytes, gmem: GlobalMemory,
               dynamic_shared: int = 0, machine: Machine | str | None = None, *,
               max_steps: int | None = None, timing: bool = True,
               module_globals: ModuleGlobals | None = None, strict: bool | None = None,
               cooperative: bool = False, grid_workspace: int = 0, cluster=None) -> LaunchStats:
    """Run ``kernel`` on a ``grid`` of CTAs of ``block`` threads with parameter bytes ``params``.

    Global memory is ``gmem`` (modified in place).  ``max_steps`` bounds the number of scheduler steps
    (None: :func:`xcc.sim.launch.default_max_steps`; 0: no limit); exceeding it is a :class:`KernelFault`
    (the watchdog for runaway kernels).  ``timing`` records the trace that :mod:`xcc.sim.perf.timing`
    replays for ``cycles`` and ``metrics``.  ``module_globals`` holds the module's ``.global`` variables,
    which persist across launches; without it the launch allocates the kernel's own and frees them at its
    end.  ``strict`` checks every register read against the control codes (:mod:`xcc.sim.isa.hazards`);
    None: ``XCC_STRICT_HAZARDS``.  ``cooperative`` runs the grid as one wave of CTAs taking turns, and
    ``grid_workspace`` is the grid-sync workspace's address (``%envreg1/2``; :mod:`xcc.sim.launch`).  ``cluster``:
    the thread-block cluster shape (None: the kernel's ``.reqnctapercluster``, else one CTA).
    Raises :class:`LaunchError` for an impossible launch, :class:`KernelFault` for any kernel error.
    """
    return _Launch(kernel, grid, block, bytes(params), gmem, int(dynamic_shared), machine, max_steps, timing,
                   module_globals, strict_default() if strict is None else strict, cooperative, grid_workspace,
                   cluster).run()


class _Launch(Launch):
    barrier_names = {**Launch.barrier_names, WAIT_BAR: "BAR {k}", WAIT_BSYNC: "BSYNC B{k}"}
    deadlock_rule = ("A BSYNC waits for every non-exited thread of its barrier's warp mask and a BAR for every "
                     "non-exited thread of the CTA")

    def __init__(self, kernel, grid, block, params, gmem, dynamic_shared, machine, max_steps, timing=True,
                 module_globals=None, strict=False, cooperative=False, grid_workspace=0, cluster=None):
        super().__init__(kernel.name, grid, block, machine, max_steps, max_threads=kernel.max_threads,
                         reqntid=kernel.reqntid, cooperative=cooperative, grid_workspace=grid_workspace,
                         cluster=cluster, reqnctapercluster=getattr(kernel, "reqnctapercluster", None),
                         explicit_cluster=getattr(kernel, "explicitcluster", False),
                         maxclusterrank=getattr(kernel, "maxclusterrank", None))
        self.check_memory(kernel.name, dynamic_shared, kernel.param_bytes, params)
        shared = kernel.shared_bytes + dynamic_shared
        self.check_shared(shared, f" ({kernel.shared_bytes} static + {dynamic_shared} dynamic)")
        if int(self.machine.data.get("warp_size", 32)) != 32:
            raise LaunchError("the interpreter supports 32-thread warps only")
        self.dynamic_shared = dynamic_shared
        self.rec = (TraceRecorder(sector_bytes=int(machine_value(self.machine, "memory", "sector_bytes")))
                    if timing else None)
        self.kernel, self.gmem = kernel, gmem
        self.module_globals_arg = module_globals
        self.strict = strict
        self.insts = _decode(bytes(kernel.code))
        self.lines = list(kernel.lines)
        grid, block = self.grid, self.block
        cb = bytearray(CBANK_PARAMS + len(params) + 8)
        self.param_len = len(params)  # the param window's bytes (docs/isa.md)
        struct.pack_into("<3I", cb, CBANK_NTID, *block)
        struct.pack_into("<3I", cb, CBANK_NCTAID, *grid)
        struct.pack_into("<I", cb, CBANK_DYNAMIC_SMEM, dynamic_shared)
        struct.pack_into("<Q", cb, CBANK_ENVREG, self.grid_workspace)
        struct.pack_into("<I", cb, CBANK_TOTAL_SMEM, self.total_smem_size(shared))
        struct.pack_into("<Q", cb, CBANK_GRIDID, self.gridid)
        struct.pack_into("<Q", cb, CBANK_GRAPH_EXEC, self.graph_exec)
        cb[CBANK_PARAMS:CBANK_PARAMS + len(params)] = params
        ctx = self.ctx = _Ctx()
        ctx.launch = self  # the engine, for per-wave state (Launch.wave_state)
        ctx.cluster, ctx.explicit_cluster = self.cluster, self.explicit_cluster  # %cluster_* (xcc.semantics.threads)
        ctx.cbank, ctx.gmem, ctx.block, ctx.grid, ctx.tpb_pad = bytes(cb), gmem, block, grid, self.P
        ctx.sm_count, ctx.nwarpid = self.sm_count, self.nwarpid
        ctx.smem_size = shared
        ctx.smem_stride = (shared + 15) & ~15
        ctx.local_size = int(kernel.local_bytes)
        ctx.local_stride = (ctx.local_size + 15) & ~15
        ctx.printf = self.printf  # (CTA, thread, order, text) of device printf (SYSCALL.VPRINTF)
        ctx.messages = list(getattr(kernel, "messages", None) or [])  # SYSCALL.TRAP messages
        ninst = len(self.insts)
        self.thread_counts = [0] * ninst
        self.warp_counts = [0] * ninst

    # -- reporting -------------------------------------------------------------------------
    def where(self, pc: int) -> str:
        line = self.line_of(pc)
        text = f"PTX line {line}" if line else f"instruction {pc}"
        if 0 <= pc < len(self.insts):
            text += f" ({format_inst(self.insts[pc], pc)})"
        return text

    def line_of(self, pc: int) -> int:
        return self.lines[pc] if 0 <= pc < len(self.lines) else 0

    def callee_name(self, target: int) -> str:
        for name, start in getattr(self.kernel, "functions", None) or []:
            if start == target:
                return f" '{name}'"
        return ""

    # -- the launch --------------------------------------------------------------------------
    def run(self) -> LaunchStats:
        P = self.P
        per_wave = min(self.nctas, max(1, WAVE_THREADS // P))
        if self.ctx.local_stride * per_wave * P > WAVE_LOCAL_BYTES:  # a call stack per thread: smaller waves
            per_wave = max(1, WAVE_LOCAL_BYTES // (self.ctx.local_stride * P))
        per_wave = self.wave_size(per_wave)
        T = per_wave * P
        ctx = self.ctx  # one set of wave-sized arrays, reset per wave; the executors are bound to them
        ctx.regs = np.zeros((max(1, int(self.kernel.registers)), T), np.uint32)
        ctx.preds = np.zeros((8, T), bool)
        ctx.bmask = np.zeros((NUM_CONV_BARRIERS, T), bool)
        ctx.smem = FlatMemory(per_wave * ctx.smem_stride, "shared")
        self.hazards = HazardChecker(self.insts, self.machine, T, self.lines) if self.strict else None
        with self.module_globals(self.gmem, self.module_globals_arg) as globs:
            addrs = [globs.address(*_placed(g), self._reloc_target) for g in self.kernel.globals]
            self.ctx.cbank3 = self._constant_bank(globs)
            return self._run(per_wave, T, addrs)

    def _reloc_target(self, name: str) -> tuple:
        """(size, init, relocs) of a .global variable an initialiser's address names."""
        k = self.kernel
        return _placed(next(g for g in [*k.globals, *k.reloc_globals] if g.name == name))[1:]

    def _constant_bank(self, globs: ModuleGlobals) -> bytes:
        """Constant bank 3: the module's .const variables the kernel reads, laid out in the image's order,
        with their current contents (the host may have written them since the module was loaded)."""
        consts = [Variable(c.name, "const", c.size, c.align) for c in self.kernel.constants]
        offsets, size = layout_variables(consts)
        bank = bytearray(size)
        for c in self.kernel.constants:
            a = globs.address(*_placed(c), self._reloc_target)
            bank[offsets[c.name]:offsets[c.name] + c.size] = self.gmem.read(a, c.size).tobytes()
        return bytes(bank)

    def _run(self, per_wave: int, T: int, addrs: list[int]) -> LaunchStats:
        """The launch with the kernel's .global variables at ``addrs`` (their addresses in constant bank 0)."""
        P, ctx = self.P, self.ctx
        cb = bytearray(ctx.cbank)
        for i, a in enumerate(addrs):
            struct.pack_into("<Q", cb, CBANK_GLOBALS + 8 * i, a)
        ctx.cbank = bytes(cb)
        ctx.lmem = FlatMemory(T * ctx.local_stride, "local")
        ctx.generic = GenericMemory(self.gmem, {
            "shared": (lambda: ctx.smem, lambda: ctx.smem_size, lambda: ctx.smem_stride, lambda idx: idx // P),
            "local": (lambda: ctx.lmem, lambda: ctx.local_size, lambda: ctx.local_stride, lambda idx: idx),
            "param": param_window(ctx.cbank[CBANK_PARAMS:CBANK_PARAMS + self.param_len])}, self.csize)
        ctx.generic.spaces["const"] = _const_window(ctx.cbank3)  # ld.const through a computed address
        self.execs = self.build()
        for cta0, n in self.waves(per_wave):
            if cta0:
                for a in (ctx.regs, ctx.preds, ctx.bmask, ctx.smem.buf, ctx.lmem.buf):
                    a.fill(0)
                if self.hazards is not None:
                    self.hazards.reset()
            rec = self.rec
            if rec is not None and (rec.stopped or rec.entries >= rec.cap):
                rec = None  # the cap: later waves run untimed (timing.py extrapolates)
            if rec is not None:
                rec.begin_wave()
            if self.run_wave(cta0, per_wave, n, rec) and rec is not None:
                rec.end_wave(n)
        cycles, metrics, timed = None, {}, None
        if self.rec is not None and self.rec.ctas:
            timed = TimedLaunch(self.rec, self.insts, self.kernel, self.machine, self.tpb, self.nctas,
                                self.dynamic_shared)
            cycles, metrics = timed.time()
            metrics.update(launch_metrics(self.kernel, self.machine, self.grid, self.block, self.dynamic_shared))
        return self.stats([inst.mnemonic for inst in self.insts], self.thread_counts, self.warp_counts,
                          cycles=cycles, metrics=metrics, timed=timed)

    def build(self):
        ctx = self.ctx
        out = []
        self.memrec = [self._memrec(inst, pc) if self.rec is not None else None for pc, inst in enumerate(self.insts)]
        for pc, inst in enumerate(self.insts):
            try:
                ex = IMPLS[inst.mnemonic](Binder(ctx, inst, pc))
            except ObjectFormatError as e:
                raise ObjectFormatError(f"kernel '{self.kernel.name}': {e.message}") from None
            if isinstance(ex, Control):
                out.append((_KIND[ex.kind], ex))
            else:
                out.append((_K_NORMAL, ex))
        return out

    def _memrec(self, inst, pc: int):
        """The trace recorder of memory instruction ``pc`` (``rec(esel, eidx, m, rec, wbase)``), or None.
        It reads the address registers before the instruction executes and never faults."""
        space = mem_space(inst.mnemonic)
        if space is None:
            return None
        b = Binder(self.ctx, inst, pc)
        banks = int(machine_value(self.machine, "shared_memory", "banks"))
        bw = int(machine_value(self.machine, "shared_memory", "bank_width_bytes"))
        if inst.mnemonic == "LDSM":  # one matrix: 8 rows of 16 bytes at the addresses of lanes 8*mat .. 8*mat+7
            a, off, mat = b.r("a"), int(inst.ops["b"]), int(b.mod("mat")[1])

            def ldsm(esel, eidx, m, rec, wb):
                rows = (eidx & 31) >> 3 == mat
                if rows.any():
                    rel = np.broadcast_to(a(esel, m), (m,)).astype(np.int64) + off
                    rec.shared_access(((eidx >> 5) + wb)[rows], rel[rows], 16, banks, bw)
            return ldsm
        if inst.mnemonic == "LDGSTS":  # the global read of cp.async: cp-size bytes at c (a 64-bit pair)
            src, cp = b.w("c"), LDGSTS_BYTES[b.mod("size")]
            return lambda esel, eidx, m, rec, wb: rec.global_access(
                (eidx >> 5) + wb, np.broadcast_to(np.asarray(src(esel, m), np.uint64), (m,)), cp)
        if inst.mnemonic.startswith("TMA"):  # a TMA load or store: the in-bounds elements of its box
            return tma_memrec(b)
        if "sync" in inst.d.classes and space == "g":  # a bulk copy: e bytes at global c, 16-byte chunks
            src, size = b.w("c"), b.r("e")

            def blkcp(esel, eidx, m, rec, wb):
                z = np.broadcast_to(np.asarray(size(esel, m)), (m,)).astype(np.int64) // 16
                if (z > 0).all():
                    base = np.broadcast_to(np.asarray(src(esel, m), np.uint64), (m,))
                    k = np.arange(int(z.sum())) - np.repeat(np.cumsum(z) - z, z)
                    rec.global_access(np.repeat((eidx >> 5) + wb, z), np.repeat(base, z) + (16 * k).astype(np.uint64),
                                      16)
            return blkcp
        width = 8 if inst.mnemonic.endswith(".64") else 16 if inst.mnemonic.endswith(".128") else (
            SIZE_BYTES[b.mod("size")][0] if any(m.name == "size" for m in inst.d.mods) else 4)
        if space == "g":
            addr = global_addr(b)
            return lambda esel, eidx, m, rec, wb: rec.global_access((eidx >> 5) + wb, addr(esel, m), width)
        if space == "s":
            a, off = b.r("a"), int(inst.ops["b"])
            return lambda esel, eidx, m, rec, wb: rec.shared_access((eidx >> 5) + wb, a(esel, m).astype(np.int64)
                                                                    + off, width, banks, bw)
        return lambda esel, eidx, m, rec, wb: rec.local_access((eidx >> 5) + wb, width)

    def run_wave(self, cta0: int, nslots: int, nctas: int, rec: TraceRecorder | None = None) -> bool:
        """Run CTAs ``cta0 .. cta0+nctas-1`` in the first ``nctas`` of ``nslots`` CTA slots, recording
        the timing trace into ``rec`` if given; False if the recording was dropped (over the cap)."""
        execs = self.execs
        wbase = cta0 * self.P >> 5
        memrec = self.memrec
        hard_cap = 4 * TRACE_CAP
        ctx = self.ctx
        ctx.cta0 = cta0
        preds = ctx.preds
        preds[PT] = True
        ninst = len(execs)
        guards = [inst.guard for inst in self.insts]
        hz = self.hazards
        wave = self.new_wave(nslots, nctas, 0)
        wave.reduced = self._reduced
        self.bs_count = [0] * NUM_CONV_BARRIERS
        self.depth = np.zeros(nslots * self.P, np.int64)  # each thread's call depth
        self.outer: list[np.ndarray] = []  # per depth d: the B masks of the frames at depth d that made a call
        sched = wave.sched
        push, heap = sched.push, sched.heap
        tcounts, wcounts = self.thread_counts, self.warp_counts
        max_steps = self.max_steps
        handlers = {_K_EXIT: self._exit, _K_BAR: self._bar, _K_CALL: self._call, _K_RET: self._ret,
                    _K_BSYNC: self._bsync, _K_MBAR: self._mbar_wait}
        pc, idx, eidx = -1, _EMPTY, _EMPTY
        try:
            while heap:
                pc, idx = sched.pop()
                n = idx.size
                self.step += 1
                ctx.step = self.step
                lo, hi = int(idx[0]), int(idx[-1])
                contiguous = hi - lo + 1 == n
                if not 0 <= pc < ninst:
                    eidx = idx
                    raise ExecFault(f"execution reached instruction {pc}, outside the kernel's {ninst} "
                                    f"instructions (missing EXIT or bad branch target)", 0, n)
                if max_steps is not None and self.step > max_steps:
                    raise self.over_limit(pc, idx)
                tcounts[pc] += n
                if contiguous:
                    wcounts[pc] += (hi >> 5) - (lo >> 5) + 1
                    if rec is not None:
                        rec.step_range(pc, wbase + (lo >> 5), wbase + (hi >> 5))
                        if lo & 31 or ~hi & 31:  # some warp's lanes are left out: its lane mask
                            rec.lanes(idx)
                else:
                    w = idx >> 5
                    wcounts[pc] += int(np.count_nonzero(w[1:] != w[:-1])) + 1
                    if rec is not None:
                        rec.step_array(pc, wbase + runs(w)[0])
                        rec.lanes(idx)
                kind, ex = execs[pc]
                g = guards[pc]
                if g is None:
                    eidx, skip = idx, _EMPTY
                    esel = slice(lo, hi + 1) if contiguous else idx
                else:
                    greg, gneg = g
                    if greg == PT:
                        eidx, skip = (_EMPTY, idx) if gneg else (idx, _EMPTY)
                    else:
                        gv = preds[greg][slice(lo, hi + 1) if contiguous else idx]
                        if gneg:
                            gv = ~gv
                        eidx, skip = idx[gv], idx[~gv]
                    if eidx.size:
                        elo, ehi = int(eidx[0]), int(eidx[-1])
                        esel = slice(elo, ehi + 1) if ehi - elo + 1 == eidx.size else eidx
                m = eidx.size
                if hz is not None:
                    hz.step(pc, slice(lo, hi + 1) if contiguous else idx, idx, esel if m else eidx, eidx)
                if rec is not None:
                    if m and memrec[pc] is not None:
                        memrec[pc](esel, eidx, m, rec, wbase)
                    if rec.entries > hard_cap:
                        rec.drop_wave()
                        rec = None
                if kind == _K_NORMAL:
                    if m:
                        ex(esel, eidx, m)
                    push(pc + 1, idx)
                elif kind == _K_BRA:
                    push(ex.target, eidx)
                    push(pc + 1, skip)
                else:
                    if m:
                        handlers[kind](_Step(pc, idx, eidx, esel, skip), ex)
                        if kind == _K_BAR and ex.mode == "ARV":
                            continue
                    push(pc + 1, skip)
        except (MemoryFault, ExecFault, XccError, KeyboardInterrupt) as e:
            # a fault is located at the threads that executed; an interrupt reports every thread at pc
            here = idx if isinstance(e, KeyboardInterrupt) or not eidx.size else eidx
            raise self.located(e, pc, here) from None
        if wave.live:
            raise self.deadlock()
        return rec is not None

    # -- control instructions: what the scheduler does for the threads whose guard holds ----------
    def _reduced(self, pc: int, threads: np.ndarray, total, count) -> None:
        """BAR.RED released: each waiting thread's d gets the reduction over its CTA's arrivals."""
        ex = self.execs[pc][1]
        if ex.result is not None:
            ex.result(threads, np.asarray(bar_reduce(ex.mode, total, count)).astype(np.uint32))

    def _bsync_waiters(self, eidx: np.ndarray) -> None:
        """Threads of ``eidx``'s warps left a convergence barrier's mask (exit, call, return): release
        the BSYNCs that no longer wait for them."""
        ks = [k for k in range(NUM_CONV_BARRIERS) if self.bs_count[k]]
        if ks:
            self.check_bsync(runs(eidx >> 5)[0], ks)

    def _exit(self, s: _Step, ex) -> None:
        self.wave.exit(s.eidx)
        self._bsync_waiters(s.eidx)

    def _bar(self, s: _Step, ex) -> None:
        m = s.eidx.size
        bid = ex.barrier(s.esel, m)
        count = ex.count(s.esel, m) if ex.count is not None else None
        pred = ex.pred(s.esel, m) if ex.pred is not None else None
        if ex.mode == "ARV":  # counted; the threads go on
            self.wave.barrier(s.eidx, s.pc, bid, count, pred, wait=False)
            self.wave.sched.push(s.pc + 1, s.idx)
        else:
            self.wave.barrier(s.eidx, s.pc, bid, count, pred)

    def _mbar_wait(self, s: _Step, ex) -> None:
        """SYNCS.PHASECHK.TRYWAIT: the threads whose phase completed go on; the others wait (xcc.sim.mbarrier)."""
        self.wave.sched.push(s.pc + 1, ex.barrier(s.esel, s.eidx, s.eidx.size, s.pc))

    def _call(self, s: _Step, ex) -> None:
        ctx, esel, m = self.ctx, s.esel, s.eidx.size
        probe, set_ra = ex.barrier
        check_stack(probe(esel, m), ctx.local_size, self.callee_name(ex.target))
        hi = save_state(ctx.bmask, ctx.preds, esel)
        set_ra(esel, np.uint64(s.pc + 1) | (hi << np.uint64(32)))
        d = self.depth[s.eidx]
        for level in np.unique(d):  # the caller's masks: its barriers still wait for these threads
            while len(self.outer) <= level:
                self.outer.append(np.zeros_like(ctx.bmask))
            sub = s.eidx[d == level]
            self.outer[level][:, sub] = ctx.bmask[:, sub]
        self.depth[s.eidx] = d + 1
        ctx.bmask[:, esel] = False  # the callee starts outside every convergence barrier
        self.wave.sched.push(ex.target, s.eidx)

    def _ret(self, s: _Step, ex) -> None:
        ctx, esel, eidx, m = self.ctx, s.esel, s.eidx, s.eidx.size
        ra = np.broadcast_to(np.asarray(ex.barrier(esel, m), np.uint64), (m,))
        restore_state(ctx.bmask, ctx.preds, esel, ra >> np.uint64(32))
        ctx.preds[PT] = True
        d = self.depth[eidx] - 1
        self.depth[eidx] = d
        for level in np.unique(d):
            self.outer[level][:, eidx[d == level]] = False
        self._bsync_waiters(eidx)
        tgt = (ra & np.uint64(0xFFFFFFFF)).astype(np.int64)
        t0 = int(tgt[0])
        if bool((tgt == t0).all()):
            self.wave.sched.push(t0, eidx)
        else:
            for q in np.unique(tgt):
                self.wave.sched.push(int(q), eidx[tgt == q])

    def _bsync(self, s: _Step, ex) -> None:
        k = ex.barrier
        self.wave.wait(s.eidx, s.pc, k, WAIT_BSYNC)
        self.bs_count[k] += s.eidx.size
        self.check_bsync(runs(s.eidx >> 5)[0], (k,))

    def check_bsync(self, warps: np.ndarray, ks) -> None:
        """Release warps among ``warps`` whose live B[k] threads all wait at BSYNC Bk."""
        wave, bmask = self.wave, self.ctx.bmask
        tt = (warps[:, None] << 5) + _LANES
        st, wk = wave.state[tt], wave.wait_k[tt]
        alive = st != EXITED
        for k in ks:
            waiting = (st == WAIT_BSYNC) & (wk == k)
            if not self.outer:  # no call made: one frame per thread
                self._release(k, tt, waiting, bmask[k][tt] & alive & ~waiting, None)
                continue
            dep = self.depth[tt]
            for d in np.unique(dep[waiting]):  # the barrier Bk of the frames at depth d
                here = dep == d
                wd = waiting & here
                member = bmask[k][tt] & here
                if d < len(self.outer):
                    member |= (dep > d) & self.outer[d][k][tt]
                self._release(k, tt, wd, member & alive & ~wd, here)

    def _release(self, k: int, tt: np.ndarray, waiting: np.ndarray, blocking: np.ndarray, here) -> None:
        """Resume the ``waiting`` threads (rows of warps ``tt``) of the warps where nothing is
        ``blocking`` barrier ``k``, clearing the warp's ``B[k]`` (of the threads in that frame, ``here``)."""
        rel = waiting.any(1) & ~blocking.any(1)
        if rel.any():
            rows = tt[rel]
            r = rows[waiting[rel]]
            self.ctx.bmask[k][rows if here is None else rows[here[rel]]] = False
            self.bs_count[k] -= r.size
            self.wave.resume(r)


assert IMPLS  # the import above asserted that every ISA mnemonic has an executor


def _const_window(bank: bytes) -> tuple:
    """The generic window onto constant bank 3 (the kernel's .const variables): one copy for every thread,
    read-only (a generic store or atomic into it faults)."""
    mem = ReadOnlyMemory(bank, "const")
    return (lambda: mem, lambda: len(bank), lambda: 0, lambda idx: 0 * np.asarray(idx))


def _placed(g) -> tuple:
    """An image's GlobalVar as xcc.sim.memory.ModuleGlobals.address takes it: (name, size, init, relocs)."""
    return g.name, g.size, bytes.fromhex(g.init) if g.init else None, tuple(tuple(r) for r in g.relocs)
