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
* **Scheduling.**  Runnable threads are kept in groups by pc.  Each step takes the minimum pc
  and executes that instruction for every runnable thread at it, across all warps and CTAs at
  once; threads whose guard predicate is false just advance.  Deterministic.  The launch ends
  when every thread has exited; if none can run but some wait, it is a deadlock (a
  :class:`KernelFault` naming the waiting instructions).
* **Convergence barriers** (Volta-style independent thread scheduling): ``BSSY Bk`` adds the
  executing threads to the warp's mask ``B[k]``; ``BSYNC Bk`` makes them wait.  A warp's threads
  waiting at ``Bk`` are released together (pc + 1) once every non-exited thread of ``B[k]`` in
  that warp waits at ``Bk``; the warp's ``B[k]`` is then cleared.  ``BAR`` waits until every
  non-exited thread of the CTA waits at the same barrier.  Exited threads never block anyone.
* **Memory.**  Global accesses go to the caller's :class:`GlobalMemory`; each CTA has
  ``kernel.shared_bytes + dynamic_shared`` bytes of zero-initialised shared memory and each thread
  ``kernel.local_bytes`` of zero-initialised local memory; generic accesses reach them through
  the windows of :class:`GenericMemory`; constant bank 0 holds ntid, nctaid and the parameters
  (``isa.CBANK_*``).  Any kernel error becomes a
  :class:`KernelFault` naming the kernel, PTX line, instruction, CTA and thread.

Per-step cost is O(threads executing the step) numpy work plus a few microseconds of Python;
instruction semantics live in :mod:`xcc.sim.isa.exec_ops`, which calls :mod:`xcc.semantics`.
"""

from __future__ import annotations

import heapq
import re
import struct
import sys
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from xcc.backend.encoding import decode_all, format_inst
from xcc.backend.isa import CBANK_GLOBALS, CBANK_NCTAID, CBANK_NTID, CBANK_PARAMS, NUM_CONV_BARRIERS, PT
from xcc.backend.machine import Machine, load_machine
from xcc.backend.objfile import KernelImage
from xcc.backend.occupancy import launch_metrics
from xcc.diagnostics import KernelFault, LaunchError, ObjectFormatError, XccError
from xcc.ir.core import Variable, layout_variables
from xcc.semantics.threads import fault_message, thread_at
from xcc.sim.isa import exec_ops
from xcc.sim.isa.exec_calls import check_stack, restore_state, save_state
from xcc.sim.isa.exec_ops import IMPLS, Binder, Control, ExecFault
from xcc.sim.isa.hazards import HazardChecker, strict_default
from xcc.sim.memory import FlatMemory, GenericMemory, GlobalMemory, MemoryFault, ModuleGlobals
from xcc.sim.perf.timing import TRACE_CAP, TraceRecorder, mem_space, time_launch

__all__ = ["LaunchStats", "run_kernel", "WAVE_THREADS"]

WAVE_THREADS = 1 << 16
"""Upper bound on the threads of one wave (whole CTAs; at least one CTA)."""

NUM_CTA_BARRIERS = 16
RUN, EXITED, WAIT_BAR, WAIT_BSYNC = 0, 1, 2, 3
_K_NORMAL, _K_BRA, _K_EXIT, _K_BAR, _K_BSYNC, _K_CALL, _K_RET = range(7)
_KIND = {"BRA": _K_BRA, "EXIT": _K_EXIT, "BAR": _K_BAR, "BSYNC": _K_BSYNC, "CALL": _K_CALL, "RET": _K_RET}
WAVE_LOCAL_BYTES = 64 << 20
"""Upper bound on the local memory of one wave (kernels with a call stack run in smaller waves)."""
_LANES = np.arange(32, dtype=np.int64)
_EMPTY = np.empty(0, np.int64)


@dataclass
class LaunchStats:
    """What a launch executed.  Counts follow NVIDIA's profilers: an instruction counts once per
    warp (``warp_instructions``) and once per thread (``thread_instructions``) that reaches it,
    whether or not its guard predicate is true."""

    thread_instructions: int
    warp_instructions: int
    cycles: int | None = None  # from the cycle model (xcc.sim.perf.timing); None with timing=False
    instructions_executed: dict[str, int] = field(default_factory=dict)  # mnemonic -> warp-level count
    kernel: str = ""
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    steps: int = 0  # scheduler steps (one instruction for a group of threads at one pc)
    printf_output: str = ""  # device printf output of the launch, in thread order (both engines)
    metrics: dict[str, float | int | str] = field(default_factory=dict)  # Nsight Compute names (timing.py)

    @property
    def ipc(self) -> float | None:
        """Warp-instructions issued per active SM cycle (Nsight's ``sm__inst_executed.avg.per_cycle_active``)."""
        return self.metrics.get("sm__inst_executed.avg.per_cycle_active")

    @property
    def stall_reasons(self) -> dict[str, int]:
        """Warp-cycles per stall reason (``smsp__pcsamp_warps_issue_stalled_<reason>``), summing to the
        launch's resident warp-cycles."""
        pre = "smsp__pcsamp_warps_issue_stalled_"
        return {k[len(pre):]: v for k, v in self.metrics.items() if k.startswith(pre)}

    def report(self) -> str:
        """The statistics as Nsight Compute's text report (:func:`xcc.sim.perf.report.format_report`)."""
        from xcc.sim.perf.report import format_report

        return format_report(self)


class _Ctx:
    """The state one wave's executors are bound to (see :class:`exec_ops.Binder`)."""

    regs: np.ndarray
    preds: np.ndarray
    bmask: np.ndarray
    smem: FlatMemory
    lmem: FlatMemory
    generic: GenericMemory
    cta0: int = 0
    step: int = 0


@lru_cache(maxsize=64)
def _decode(code: bytes):
    return tuple(decode_all(code))


def _dims(v, what: str) -> tuple[int, int, int]:
    try:
        t = tuple(int(x) for x in (v if isinstance(v, (tuple, list)) else (v,)))
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be up to three positive integers, not {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise LaunchError(f"{what} must be up to three positive integers, not {v!r}")
    return t + (1,) * (3 - len(t))


def _runs(keys: np.ndarray):
    """(distinct values, run lengths) of a sorted array."""
    head = np.empty(keys.size, bool)
    head[0] = True
    np.not_equal(keys[1:], keys[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    return keys[starts], np.diff(np.append(starts, keys.size))


def _merge(arrs: list[np.ndarray]) -> np.ndarray:
    """Union of disjoint sorted slot arrays, sorted."""
    arrs.sort(key=lambda a: int(a[0]))
    for a, b in zip(arrs, arrs[1:]):
        if a[-1] >= b[0]:
            return np.sort(np.concatenate(arrs))
    return np.concatenate(arrs)


def run_kernel(kernel: KernelImage, grid, block, params: bytes, gmem: GlobalMemory,
               dynamic_shared: int = 0, machine: Machine | str | None = None, *,
               max_steps: int | None = None, timing: bool = True,
               module_globals: ModuleGlobals | None = None, strict: bool | None = None) -> LaunchStats:
    """Run ``kernel`` on a ``grid`` of CTAs of ``block`` threads with parameter bytes ``params``.

    Global memory is ``gmem`` (modified in place).  ``max_steps`` (optional) bounds the number of
    scheduler steps; exceeding it is a :class:`KernelFault` (a watchdog for runaway kernels).
    ``timing`` records the trace that :mod:`xcc.sim.perf.timing` replays for ``cycles`` and ``metrics``.
    ``module_globals`` holds the module's ``.global`` variables, which persist across launches; without
    it the launch allocates the kernel's own and frees them at its end.  ``strict`` checks every
    register read against the control codes (:mod:`xcc.sim.isa.hazards`); None: ``XCC_STRICT_HAZARDS``.
    Raises :class:`LaunchError` for an impossible launch, :class:`KernelFault` for any kernel error.
    """
    return _Launch(kernel, _dims(grid, "grid"), _dims(block, "block"), bytes(params), gmem,
                   int(dynamic_shared), machine, max_steps, timing, module_globals,
                   strict_default() if strict is None else strict).run()


class _Launch:
    def __init__(self, kernel, grid, block, params, gmem, dynamic_shared, machine, max_steps, timing=True,
                 module_globals=None, strict=False):
        if machine is None or isinstance(machine, str):
            machine = load_machine(machine or "xg1")
        self.machine, self.dynamic_shared = machine, dynamic_shared
        self.rec = TraceRecorder() if timing else None
        self.kernel, self.grid, self.block, self.gmem, self.max_steps = kernel, grid, block, gmem, max_steps
        self.module_globals = module_globals
        self.strict = strict
        self.insts = _decode(bytes(kernel.code))
        self.lines = list(kernel.lines)
        lim = machine.limits
        nthreads = block[0] * block[1] * block[2]
        max_block = min(int(lim.get("max_threads_per_block", 1024)), kernel.max_threads or 1 << 30)
        if nthreads > max_block:
            raise LaunchError(f"kernel '{kernel.name}': block {block} has {nthreads} threads, more than "
                              f"the {max_block} allowed")
        if kernel.reqntid and tuple(_dims(kernel.reqntid, "reqntid")) != block:
            raise LaunchError(f"kernel '{kernel.name}' requires block {tuple(kernel.reqntid)} (.reqntid), "
                              f"launched with {block}")
        if dynamic_shared < 0:
            raise LaunchError("dynamic shared memory size must be >= 0")
        shared = kernel.shared_bytes + dynamic_shared
        max_shared = int(lim.get("shared_memory_per_block", lim["shared_memory_bytes"]))
        if shared > max_shared:
            raise LaunchError(f"kernel '{kernel.name}': {shared} bytes of shared memory per CTA "
                              f"({kernel.shared_bytes} static + {dynamic_shared} dynamic) exceed {max_shared}")
        if len(params) < kernel.param_bytes:
            raise LaunchError(f"kernel '{kernel.name}' takes {kernel.param_bytes} bytes of parameters, "
                              f"got {len(params)}")
        if int(machine.data.get("warp_size", 32)) != 32:
            raise LaunchError("the interpreter supports 32-thread warps only")
        cb = bytearray(CBANK_PARAMS + len(params) + 8)
        struct.pack_into("<3I", cb, CBANK_NTID, *block)
        struct.pack_into("<3I", cb, CBANK_NCTAID, *grid)
        cb[CBANK_PARAMS:CBANK_PARAMS + len(params)] = params
        self.tpb = nthreads
        self.tpb_pad = (nthreads + 31) & ~31
        self.nctas = grid[0] * grid[1] * grid[2]
        ctx = self.ctx = _Ctx()
        ctx.cbank, ctx.gmem, ctx.block, ctx.grid, ctx.tpb_pad = bytes(cb), gmem, block, grid, self.tpb_pad
        ctx.sm_count = int(machine.data["sm"]["count"])
        ctx.nwarpid = int(lim.get("max_warps", 64))
        ctx.smem_size = shared
        ctx.smem_stride = (shared + 15) & ~15
        ctx.local_size = int(kernel.local_bytes)
        ctx.local_stride = (ctx.local_size + 15) & ~15
        ctx.printf = []  # (CTA, thread, order, text) of device printf (SYSCALL.VPRINTF)
        ctx.messages = list(getattr(kernel, "messages", None) or [])  # SYSCALL.TRAP messages
        ninst = len(self.insts)
        self.thread_counts = [0] * ninst
        self.warp_counts = [0] * ninst
        self.step = 0

    # -- reporting -------------------------------------------------------------------------
    def where(self, pc: int) -> str:
        line = self.lines[pc] if 0 <= pc < len(self.lines) else 0
        text = f"PTX line {line}" if line else f"instruction {pc}"
        if 0 <= pc < len(self.insts):
            text += f" ({format_inst(self.insts[pc], pc)})"
        return text

    def coords(self, slot: int) -> tuple[str, tuple[int, int, int], tuple[int, int, int]]:
        return thread_at(slot, self.ctx, self.tpb_pad)

    def fault(self, pc: int, reason: str, slot: int | None, nthreads: int = 1, address=None) -> KernelFault:
        msg, c3, t3 = fault_message(self.kernel.name, self.where(pc), reason, self.ctx, self.tpb_pad, slot, nthreads)
        err = KernelFault(msg)
        err.kernel, err.pc, err.cta, err.thread, err.address = self.kernel.name, pc, c3, t3, address
        err.line = self.lines[pc] if 0 <= pc < len(self.lines) else 0
        return err

    # -- the launch --------------------------------------------------------------------------
    def run(self) -> LaunchStats:
        P = self.tpb_pad
        per_wave = min(self.nctas, max(1, WAVE_THREADS // P))
        if self.ctx.local_stride * per_wave * P > WAVE_LOCAL_BYTES:  # a call stack per thread: smaller waves
            per_wave = max(1, WAVE_LOCAL_BYTES // (self.ctx.local_stride * P))
        T = per_wave * P
        ctx = self.ctx  # one set of wave-sized arrays, reset per wave; the executors are bound to them
        ctx.regs = np.zeros((max(1, int(self.kernel.registers)), T), np.uint32)
        ctx.preds = np.zeros((8, T), bool)
        ctx.bmask = np.zeros((NUM_CONV_BARRIERS, T), bool)
        ctx.smem = FlatMemory(per_wave * ctx.smem_stride, "shared")
        self.hazards = HazardChecker(self.insts, self.machine, T, self.lines) if self.strict else None
        own = self.module_globals is None
        globs = ModuleGlobals(self.gmem) if own else self.module_globals
        try:
            addrs = [globs.address(g.name, g.size, bytes.fromhex(g.init) if g.init else None)
                     for g in self.kernel.globals]
            self.ctx.cbank3 = self._constant_bank(globs)
            return self._run(per_wave, T, addrs)
        finally:
            if own:
                globs.free()

    def _constant_bank(self, globs: ModuleGlobals) -> bytes:
        """Constant bank 3: the module's .const variables the kernel reads, laid out in the image's order,
        with their current contents (the host may have written them since the module was loaded)."""
        consts = [Variable(c.name, "const", c.size, c.align) for c in self.kernel.constants]
        offsets, size = layout_variables(consts)
        bank = bytearray(size)
        for c in self.kernel.constants:
            a = globs.address(c.name, c.size, bytes.fromhex(c.init) if c.init else None)
            bank[offsets[c.name]:offsets[c.name] + c.size] = self.gmem.read(a, c.size).tobytes()
        return bytes(bank)

    def _run(self, per_wave: int, T: int, addrs: list[int]) -> LaunchStats:
        """The launch with the kernel's .global variables at ``addrs`` (their addresses in constant bank 0)."""
        P, ctx = self.tpb_pad, self.ctx
        cb = bytearray(ctx.cbank)
        for i, a in enumerate(addrs):
            struct.pack_into("<Q", cb, CBANK_GLOBALS + 8 * i, a)
        ctx.cbank = bytes(cb)
        ctx.lmem = FlatMemory(T * ctx.local_stride, "local")
        ctx.generic = GenericMemory(self.gmem, {
            "shared": (lambda: ctx.smem, lambda: ctx.smem_size, lambda: ctx.smem_stride, lambda idx: idx // P),
            "local": (lambda: ctx.lmem, lambda: ctx.local_size, lambda: ctx.local_stride, lambda idx: idx)})
        execs = self.build()
        with np.errstate(all="ignore"):  # kernel arithmetic (NaN casts, overflow) never warns, as on a GPU
            for cta0 in range(0, self.nctas, per_wave):
                if cta0:
                    for a in (ctx.regs, ctx.preds, ctx.bmask, ctx.smem.buf, ctx.lmem.buf):
                        a.fill(0)
                    if self.hazards is not None:
                        self.hazards.reset()
                rec = self.rec
                if rec is not None and (rec.stopped or rec.entries >= rec.cap):
                    rec = None  # the cap: later waves run untimed (timing.py extrapolates)
                n = min(per_wave, self.nctas - cta0)
                if rec is not None:
                    rec.begin_wave()
                if self.run_wave(execs, cta0, per_wave, n, rec) and rec is not None:
                    rec.end_wave(n)
        cycles, metrics = None, {}
        if self.rec is not None and self.rec.ctas:
            cycles, metrics = time_launch(self.rec, self.insts, self.kernel, self.machine, self.tpb, self.nctas,
                                          self.dynamic_shared)
            metrics.update(launch_metrics(self.kernel, self.machine, self.grid, self.block, self.dynamic_shared))
        by_mn: dict[str, int] = {}
        for inst, w in zip(self.insts, self.warp_counts):
            if w:
                by_mn[inst.mnemonic] = by_mn.get(inst.mnemonic, 0) + w
        output = "".join(t for *_, t in sorted(ctx.printf))
        if output:
            sys.stdout.write(output)
            sys.stdout.flush()
        return LaunchStats(thread_instructions=sum(self.thread_counts), warp_instructions=sum(self.warp_counts),
                           cycles=cycles, instructions_executed=by_mn, kernel=self.kernel.name,
                           grid=self.grid, block=self.block, steps=self.step, metrics=metrics,
                           printf_output=output)

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
        sm = self.machine.data.get("shared_memory", {})
        banks, bw = int(sm.get("banks", 32)), int(sm.get("bank_width_bytes", 4))
        if inst.mnemonic == "LDSM":  # one matrix: 8 rows of 16 bytes at the addresses of lanes 8*mat .. 8*mat+7
            a, off, mat = b.r("a"), int(inst.ops["b"]), int(b.mod("mat")[1])

            def ldsm(esel, eidx, m, rec, wb):
                rows = (eidx & 31) >> 3 == mat
                if rows.any():
                    rel = np.broadcast_to(a(esel, m), (m,)).astype(np.int64) + off
                    rec.shared_access(((eidx >> 5) + wb)[rows], rel[rows], 16, banks, bw)
            return ldsm
        if inst.mnemonic == "LDGSTS":  # the global read of cp.async: cp-size bytes at c (a 64-bit pair)
            src, cp = b.w("c"), {"32": 4, "64": 8, "128": 16}[b.mod("size")]
            return lambda esel, eidx, m, rec, wb: rec.global_access(
                (eidx >> 5) + wb, np.broadcast_to(np.asarray(src(esel, m), np.uint64), (m,)), cp)
        width = 8 if inst.mnemonic.endswith(".64") else (
            exec_ops._SIZE[b.mod("size")][0] if any(m.name == "size" for m in inst.d.mods) else 4)
        if space == "g":
            addr = exec_ops._global_addr(b)
            return lambda esel, eidx, m, rec, wb: rec.global_access((eidx >> 5) + wb, addr(esel, m), width)
        if space == "s":
            a, off = b.r("a"), int(inst.ops["b"])
            return lambda esel, eidx, m, rec, wb: rec.shared_access((eidx >> 5) + wb, a(esel, m).astype(np.int64)
                                                                    + off, width, banks, bw)
        return lambda esel, eidx, m, rec, wb: rec.local_access((eidx >> 5) + wb, width)

    def run_wave(self, execs, cta0: int, nslots: int, nctas: int, rec: TraceRecorder | None = None) -> bool:
        """Run CTAs ``cta0 .. cta0+nctas-1`` in the first ``nctas`` of ``nslots`` CTA slots, recording
        the timing trace into ``rec`` if given; False if the recording was dropped (over the cap)."""
        tpb, P = self.tpb, self.tpb_pad
        wbase = cta0 * P >> 5
        memrec = self.memrec
        hard_cap = 4 * TRACE_CAP
        T = nslots * P
        ctx = self.ctx
        ctx.cta0 = cta0
        preds, bmask = ctx.preds, ctx.bmask
        preds[PT] = True
        ninst = len(execs)
        guards = [inst.guard for inst in self.insts]
        hz = self.hazards

        exists = np.tile(np.arange(P) < tpb, nslots)
        exists[nctas * P:] = False
        state = np.where(exists, RUN, EXITED).astype(np.int8)
        wait_k = np.zeros(T, np.int8)  # barrier number a waiting thread waits at
        pcw = np.zeros(T, np.int64)  # pc of a waiting thread
        alive_cta = np.where(np.arange(nslots) < nctas, tpb, 0)
        bar_count = np.zeros((nslots, NUM_CTA_BARRIERS), np.int64)
        bar_need = np.zeros((nslots, NUM_CTA_BARRIERS), np.int64)  # thread count of a named barrier (0: CTA)
        red_sum = np.zeros((nslots, NUM_CTA_BARRIERS), np.int64)  # BAR.RED: true predicates, threads so far
        red_n = np.zeros((nslots, NUM_CTA_BARRIERS), np.int64)
        bs_count = [0] * NUM_CONV_BARRIERS
        live = {"threads": nctas * tpb, "bar": 0}
        groups: dict[int, list[np.ndarray]] = {0: [np.flatnonzero(exists)]}
        heap = [0]
        tcounts, wcounts = self.thread_counts, self.warp_counts
        max_steps = self.max_steps

        def push(p: int, arr: np.ndarray) -> None:
            if arr.size:
                lst = groups.get(p)
                if lst is None:
                    groups[p] = [arr]
                    heapq.heappush(heap, p)
                else:
                    lst.append(arr)

        def resume(r: np.ndarray) -> None:
            state[r] = RUN
            p = pcw[r]
            if p[0] == p[-1] and bool((p == p[0]).all()):
                push(int(p[0]) + 1, r)
            else:
                for q in np.unique(p):
                    push(int(q) + 1, r[p == q])

        def check_bar(ctas: np.ndarray) -> None:
            """Release the barriers of ``ctas`` that every live thread (or their thread count) reached;
            the threads waiting at a BAR.RED get the reduction over all that arrived."""
            cnt, need = bar_count[ctas], bar_need[ctas]
            full = (cnt > 0) & (cnt >= np.where(need > 0, need, alive_cta[ctas][:, None]))
            for k in np.flatnonzero(full.any(0)):
                rc = ctas[full[:, k]]
                tt = (rc[:, None] * P + np.arange(P)).ravel()
                r = tt[(state[tt] == WAIT_BAR) & (wait_k[tt] == k)]
                if red_n[rc, k].any():
                    for q in np.unique(pcw[r]):
                        ex = execs[int(q)][1]
                        if ex.result is not None:
                            rq = r[pcw[r] == q]
                            tot, nn = red_sum[rq // P, k], red_n[rq // P, k]
                            val = tot if ex.mode == "POPC" else (tot == nn) if ex.mode == "AND" else (tot > 0)
                            ex.result(rq, np.asarray(val).astype(np.uint32))
                bar_count[rc, k] = bar_need[rc, k] = red_sum[rc, k] = red_n[rc, k] = 0
                live["bar"] -= r.size
                resume(r)

        def check_bsync(warps: np.ndarray, ks) -> None:
            """Release warps among ``warps`` whose live B[k] threads all wait at BSYNC Bk."""
            tt = (warps[:, None] << 5) + _LANES
            st, wk = state[tt], wait_k[tt]
            alive = st != EXITED
            for k in ks:
                waiting = (st == WAIT_BSYNC) & (wk == k)
                blocking = bmask[k][tt] & alive & ~waiting
                rel = waiting.any(1) & ~blocking.any(1)
                if rel.any():
                    rows = tt[rel]
                    r = rows[waiting[rel]]
                    bmask[k][rows] = False
                    bs_count[k] -= r.size
                    resume(r)

        pc, eidx = -1, _EMPTY
        try:
            while heap:
                pc = heapq.heappop(heap)
                arrs = groups.pop(pc)
                idx = arrs[0] if len(arrs) == 1 else _merge(arrs)
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
                    eidx = idx
                    raise ExecFault(f"the kernel did not finish within {max_steps} scheduler steps", 0, n)
                tcounts[pc] += n
                if contiguous:
                    wcounts[pc] += (hi >> 5) - (lo >> 5) + 1
                    if rec is not None:
                        rec.step_range(pc, wbase + (lo >> 5), wbase + (hi >> 5))
                else:
                    w = idx >> 5
                    wcounts[pc] += int(np.count_nonzero(w[1:] != w[:-1])) + 1
                    if rec is not None:
                        rec.step_array(pc, wbase + _runs(w)[0])
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
                elif kind == _K_EXIT:
                    if m:
                        state[eidx] = EXITED
                        live["threads"] -= m
                        ctas, cnt = _runs(eidx // P)
                        alive_cta[ctas] -= cnt
                        if live["bar"]:
                            check_bar(ctas)
                        ks = [k for k in range(NUM_CONV_BARRIERS) if bs_count[k]]
                        if ks:
                            check_bsync(_runs(eidx >> 5)[0], ks)
                    push(pc + 1, skip)
                elif kind == _K_BAR:
                    if m:
                        bid = np.asarray(ex.barrier(esel, m)).astype(np.int64)
                        if bool((bid >= NUM_CTA_BARRIERS).any()):
                            t = int(np.argmax(bid >= NUM_CTA_BARRIERS))
                            raise ExecFault(f"barrier number {int(bid[t])} out of range "
                                            f"(0..{NUM_CTA_BARRIERS - 1})", t)
                        ctas = eidx // P
                        if ex.count is not None:
                            bar_need[ctas, bid] = np.asarray(ex.count(esel, m)).astype(np.int64)
                        if ex.pred is not None:
                            np.add.at(red_sum, (ctas, bid), np.asarray(ex.pred(esel, m), bool).astype(np.int64))
                            np.add.at(red_n, (ctas, bid), 1)
                        if bool((bid == bid[0]).all()):
                            uc, cnt = _runs(ctas)
                            bar_count[uc, int(bid[0])] += cnt
                        else:
                            np.add.at(bar_count, (ctas, bid), 1)
                            uc = _runs(ctas)[0]
                        if ex.mode == "ARV":  # counted; the threads go on
                            check_bar(uc)
                            push(pc + 1, idx)
                            continue
                        state[eidx] = WAIT_BAR
                        pcw[eidx] = pc
                        wait_k[eidx] = bid
                        live["bar"] += m
                        check_bar(uc)
                    push(pc + 1, skip)
                elif kind == _K_CALL:
                    if m:
                        probe, set_ra = ex.barrier
                        check_stack(probe(esel, m), ctx.local_size, self.callee_name(ex.target))
                        hi = save_state(bmask, preds, esel)
                        set_ra(esel, np.uint64(pc + 1) | (hi << np.uint64(32)))
                        bmask[:, esel] = False  # the callee starts outside every convergence barrier
                        ks = [k for k in range(NUM_CONV_BARRIERS) if bs_count[k]]
                        if ks:
                            check_bsync(_runs(eidx >> 5)[0], ks)
                        push(ex.target, eidx)
                    push(pc + 1, skip)
                elif kind == _K_RET:
                    if m:
                        ra = np.broadcast_to(np.asarray(ex.barrier(esel, m), np.uint64), (m,))
                        restore_state(bmask, preds, esel, ra >> np.uint64(32))
                        preds[PT] = True
                        ks = [k for k in range(NUM_CONV_BARRIERS) if bs_count[k]]
                        if ks:
                            check_bsync(_runs(eidx >> 5)[0], ks)
                        tgt = (ra & np.uint64(0xFFFFFFFF)).astype(np.int64)
                        t0 = int(tgt[0])
                        if bool((tgt == t0).all()):
                            push(t0, eidx)
                        else:
                            for q in np.unique(tgt):
                                push(int(q), eidx[tgt == q])
                    push(pc + 1, skip)
                else:  # BSYNC
                    if m:
                        k = ex.barrier
                        state[eidx] = WAIT_BSYNC
                        pcw[eidx] = pc
                        wait_k[eidx] = k
                        bs_count[k] += m
                        check_bsync(_runs(eidx >> 5)[0], (k,))
                    push(pc + 1, skip)
        except MemoryFault as f:
            reason = re.sub(r" \(thread \d+(; \d+ threads faulted)?\)", "", str(f))
            t = f.thread if f.thread is not None and f.thread < eidx.size else 0
            raise self.fault(pc, reason, int(eidx[t]) if eidx.size else None, f.addresses.size,
                             f.address) from None
        except ExecFault as f:
            t = f.thread if f.thread is not None and f.thread < eidx.size else 0
            raise self.fault(pc, f.reason, int(eidx[t]) if eidx.size else None, f.nthreads) from None
        except KernelFault:
            raise
        except XccError as e:  # e.g. an UnsupportedError from the semantics library: locate it
            raise type(e)(f"kernel '{self.kernel.name}' at {self.where(pc)}: {e.message}") from None

        if live["threads"]:
            raise self.deadlock(state, wait_k, pcw)
        return rec is not None

    def callee_name(self, target: int) -> str:
        for name, start in getattr(self.kernel, "functions", None) or []:
            if start == target:
                return f" '{name}'"
        return ""

    def deadlock(self, state, wait_k, pcw) -> KernelFault:
        waiting = np.flatnonzero((state == WAIT_BAR) | (state == WAIT_BSYNC))
        key = state[waiting].astype(np.int64) << 40 | wait_k[waiting].astype(np.int64) << 32 | pcw[waiting]
        parts = []
        for kv in np.unique(key):
            sel = waiting[key == kv]
            st, k, pc = int(kv >> 40), int(kv >> 32) & 0xFF, int(kv & 0xFFFFFFFF)
            what = f"BAR {k}" if st == WAIT_BAR else f"BSYNC B{k}"
            parts.append(f"{sel.size} thread(s) waiting at {what} at {self.where(pc)} "
                         f"(first: {self.coords(int(sel[0]))[0]})")
        first = int(waiting[0])
        pc = int(pcw[first])
        text, c3, t3 = self.coords(first)
        msg = (f"kernel '{self.kernel.name}': deadlock: no thread can proceed; " + "; ".join(parts)
               + ". A BSYNC waits for every non-exited thread of its barrier's warp mask and a BAR for every "
               "non-exited thread of the CTA")
        err = KernelFault(msg)
        err.kernel, err.pc, err.cta, err.thread, err.address = self.kernel.name, pc, c3, t3, None
        err.line = self.lines[pc] if 0 <= pc < len(self.lines) else 0
        return err


assert exec_ops.IMPLS  # the import above asserted that every ISA mnemonic has an executor
