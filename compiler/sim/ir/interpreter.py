"""The IR interpreter: runs an IR kernel over a whole grid with PTX semantics, the compiler's oracle.

Execution model (the same as the ISA interpreter's, :mod:`xcc.sim.isa.emulator`, so the two agree):

* **Threads.**  CTAs run in waves of whole CTAs (at most :data:`WAVE_THREADS` threads).  CTA ``c``
  of a wave owns slots ``[c*P, (c+1)*P)``, ``P`` the block size rounded up to whole warps; thread
  ``t`` (linear ``tid.x + ntid.x*(tid.y + ntid.y*tid.z)``) is slot ``c*P + t``, so warp =
  ``slot >> 5`` and lane = ``slot & 31``.  Ascending slots are ascending global thread order: the
  order in which atomics are serialised and the last of several stores wins.
* **Values.**  Every SSA value is one numpy array over the wave's slots (bool for predicates,
  the unsigned integer of its width otherwise: bit patterns, as in :mod:`xcc.ir.types`).
* **Scheduling.**  Blocks are numbered in reverse post-order and every instruction gets a position
  ``base[block] + index``.  Each thread has a position; the scheduler takes the lowest position
  any runnable thread is at and runs that group of threads through its block, absorbing the
  threads waiting at each later position it reaches (reconvergence), until a branch, an exit or
  a barrier.  A branch evaluates the target's phis for the threads taking that edge (parallel
  copies: every operand is read before any phi is written).  Loops and nested ifs reconverge
  because a back edge goes to a lower position, so threads that left a loop wait until every
  thread of the loop has left it.
* **Barriers.**  ``bar_sync a[, b]`` waits until every non-exited thread of the CTA (or ``b``
  threads) waits at barrier ``a``; exited threads never block anyone.  If no thread can run but
  some wait, the launch is a deadlock: a :class:`KernelFault` naming the barriers' PTX lines.
  ``bar_arrive a, b`` counts toward barrier ``a`` and goes on; ``bar_red`` waits like ``bar_sync``
  and gives every waiting thread the popc/and/or of the predicates of all that took part.
* **Calls.**  Every function reachable from the kernel gets its own range of positions, so a group
  of threads runs through a callee like any other code (threads that call at different times, or
  diverge inside the callee, are just groups at different positions).  Each thread has a call
  stack (return position, ``.param`` and ``.local`` frame bases): ``call`` copies the caller's
  argument variables into a fresh ``.param`` frame above the caller's and jumps; ``ret`` copies
  the return parameters into the caller's variables and goes back to the instruction after the
  call.  A ``ret`` is the reconvergence point of the call: threads reaching it wait there while
  threads of their warp that entered the same call from the same call site are still inside it
  (e.g. in a further call that the positions order after the ``ret``), so they come back to the
  caller together, as on the xg1 machine, whose caller's convergence barrier waits for them.  A call that may re-enter its caller (recursion, found on the call graph) saves the
  caller's SSA values for those threads and ``ret`` restores them.  Deeper than
  :data:`MAX_CALL_DEPTH` frames, or out of ``.local`` stack, is a "call stack overflow" fault.
* **Memory.**  Global accesses go to the caller's :class:`GlobalMemory`; generic ones through the
  windows of :class:`~xcc.sim.memory.GenericMemory` (shared, local, const; global elsewhere); each CTA
  has its static ``.shared`` variables (laid out as instruction selection lays them out) plus
  ``dynamic_shared`` bytes, zero-initialised; ``.local`` variables live in a per-thread frame;
  ``.const`` and ``.global`` module variables get their initialisers.  Every illegal access is a
  :class:`KernelFault` naming the kernel, the PTX line, the CTA, the thread and the address.

What each op computes lives in :mod:`xcc.sim.ir.ops` (which calls :mod:`xcc.semantics`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xcc.backend.machine import Machine
from xcc.diagnostics import LinkError, PtxSemanticError, UnsupportedError, XccError
from xcc.ir.alloca import ARENA as ALLOCA_ARENA
from xcc.ir.cfg import callees, reachable_functions, reverse_postorder
from xcc.ir.core import Block, Function, Instruction, Module, Value, Variable, layout_variables
from xcc.semantics.cluster import decode_shared
from xcc.semantics.faults import MemoryFault
from xcc.semantics.threads import special_register
from xcc.semantics.warp import warp_runs
from xcc.sim.ir import async_ops, matrix, texture_ops  # noqa: F401  (they register their ops' executors)
from xcc.sim.ir.ops import CONTROL, OpBinder, build_executor, storage_dtype
from xcc.sim.launch import Launch
from xcc.sim.memory import (
    FlatMemory,
    GenericMemory,
    GlobalMemory,
    ModuleGlobals,
    ReadOnlyView,
    check_window,
    param_window,
)
from xcc.sim.printf import c_printf
from xcc.sim.stats import LaunchStats
from xcc.sim.waves import EXITED, ExecFault, bar_reduce, merge

__all__ = ["run_function", "WAVE_THREADS"]

WAVE_THREADS = 1 << 14
"""Upper bound on the threads of one wave (whole CTAs; at least one CTA)."""

MAX_CALL_DEPTH = 256
"""Call frames a thread may hold below the kernel's; one more is a "call stack overflow" fault."""
LOCAL_STACK_BYTES = 1024
"""``.local`` bytes per thread for device functions' frames (CUDA's default cudaLimitStackSize)."""
WAVE_THREADS_CALLS = 1 << 11
"""The wave bound of kernels that call functions (each thread then holds a call stack)."""
BUILTINS = frozenset({"vprintf", "__assertfail"})
"""Functions the CUDA runtime provides (declared ``.extern``, never defined in PTX): device ``printf``
(collected per thread, printed in thread order after the launch, ``LaunchStats.printf_output``) and
``assert`` (a located :class:`KernelFault` with the message, file, line and function)."""

_NORMAL, _BR, _CBR, _EXIT, _TRAP, _BAR, _CALL, _RET, _WAIT = range(9)  # _WAIT: mbarrier.try_wait
_U64 = np.uint64
_LANES = np.arange(32, dtype=np.int64)


def run_function(module: Module, fn_name: str, grid, block, params: bytes, gmem: GlobalMemory,
                 dynamic_shared: int = 0, max_steps: int | None = None,
                 machine: Machine | str | None = None, module_globals: ModuleGlobals | None = None,
                 profile: dict | None = None, cooperative: bool = False, grid_workspace: int = 0,
                 cluster=None) -> LaunchStats:
    """Run kernel ``fn_name`` of IR ``module`` on ``grid`` x ``block`` threads; ``gmem`` is modified in place.

    ``params`` is the packed parameter buffer (:func:`xcc.runtime.params.pack_params` packs launch
    arguments).  ``max_steps`` bounds the scheduler steps (one instruction for one group of threads;
    None: :func:`xcc.sim.launch.default_max_steps`, 0: no limit); exceeding it is a :class:`KernelFault`.
    ``module_globals`` holds the module's ``.global`` variables across launches (without it the
    launch allocates its own and frees them at its end).
    Raises :class:`LaunchError` for an impossible launch, :class:`UnsupportedError` for an operation
    without semantics and :class:`KernelFault` for any error of the kernel itself.
    ``profile``, when given, receives what :mod:`xcc.profile.record` makes a profile of: ``blocks``, a list of
    (block, warp executions, thread executions), and ``branches``, cbr instruction -> [warps all taken, warps
    all not taken, warps divergent].  ``cooperative`` and ``grid_workspace``: a cooperative launch
    (:mod:`xcc.sim.launch`).  ``cluster``: the thread-block cluster shape (x, y, z) (None: the kernel's
    ``.reqnctapercluster``, else one CTA; :mod:`xcc.semantics.cluster`).
    """
    fn = module.function(fn_name)
    launch = _Launch(module, fn, grid, block, bytes(params), gmem, int(dynamic_shared), machine, max_steps,
                     module_globals, cooperative, grid_workspace, cluster)
    launch.branches = {} if profile is not None else None
    stats = launch.run()
    if profile is not None:
        profile["blocks"] = [(b, launch.wcounts[launch.base[b]], launch.tcounts[launch.base[b]])
                             for b in launch.blocks if b.instructions]
        profile["branches"] = {launch.insts[pos]: rec for pos, rec in launch.branches.items()}
    return stats


def _reachable(module: Module, fn: Function) -> list[Function]:
    """``fn`` and every function it calls, transitively; a call to a function the module neither
    defines nor gets from the runtime is a located :class:`LinkError`."""
    def resolve(name: str, inst: Instruction) -> Function | None:
        if name in BUILTINS:
            return None
        try:
            callee = module.function(name)
        except KeyError:
            raise LinkError(f"call to '{name}', which no module defines (link the module that defines it)",
                            inst.loc) from None
        if callee.is_entry:
            raise UnsupportedError(f"call to kernel '{name}' (dynamic parallelism) is not supported", inst.loc)
        return callee

    return reachable_functions(fn, {}, resolve)


class _Frame:
    """Where one function's ``.param`` and ``.local`` variables lie in its frames (offsets from the frame base)."""

    def __init__(self, fn: Function, static_local: list[Variable]):
        self.fn = fn
        if fn.is_entry:
            self.param_off, psize = layout_variables([v for v in fn.variables if v.space == "param"])
        else:
            self.param_off = {p.name: p.offset for p in fn.params + fn.ret_params}
            end = max((p.offset + p.size for p in fn.params + fn.ret_params), default=0)
            body = [Variable("", "param", end, 1)] + [v for v in fn.variables if v.space == "param"]
            offs, psize = layout_variables(body)
            self.param_off.update((k, o) for k, o in offs.items() if k)
        self.param_size = (psize + 15) & ~15
        self.local_off, lsize = layout_variables(([] if not fn.is_entry else static_local)
                                        + [v for v in fn.variables if v.space == "local"])
        self.local_size = (lsize + 15) & ~15
        self.static = {v.name for v in static_local}  # module-level .local: in the kernel's frame


class _Launch(Launch):
    branches: dict | None = None  # pos -> [all taken, all not taken, divergent] warps, when profiling

    def __init__(self, module, fn, grid, block, params, gmem, dynamic_shared, machine, max_steps,
                 module_globals=None, cooperative=False, grid_workspace=0, cluster=None):
        d = fn.directives
        super().__init__(fn.name, grid, block, machine, max_steps, reqntid=d.get("reqntid"),
                         cooperative=cooperative, grid_workspace=grid_workspace, cluster=cluster,
                         reqnctapercluster=d.get("reqnctapercluster") or None,
                         explicit_cluster="explicitcluster" in d,
                         maxclusterrank=int(d["maxclusterrank"][0]) if d.get("maxclusterrank") else None)
        self.check_memory(fn.name, dynamic_shared, fn.param_bytes, params)
        self.fn, self.params, self.gmem = fn, params, gmem
        self.source_files = dict(module.source_files)  # .file names of the .loc positions (-lineinfo/-G PTX)
        self.param_window = param_window(params)  # the kernel parameters, read-only, in the generic space
        self.funcs = _reachable(module, fn)
        self.has_calls = len(self.funcs) > 1 or any(callees(fn))
        used = set().union(*(_used_symbols(f) for f in self.funcs))
        mvars = [v for v in module.variables if v.name in used]
        self.module_vars = {v.name: v for v in module.variables}  # (targets of initialisers' addresses)
        space = lambda s: ([v for f in self.funcs for v in f.variables if v.space == s]  # noqa: E731
                           + [v for v in mvars if v.space == s])
        self.shared_off, self.smem_size = layout_variables(space("shared"), dynamic_shared)
        self.dynamic_shared = dynamic_shared
        self.check_shared(self.smem_size)
        self.smem_stride = (self.smem_size + 15) & ~15
        self.frames = {f.name: _Frame(f, [v for v in mvars if v.space == "local"]) for f in self.funcs}
        kf = self.frames[fn.name]
        self.local_off = kf.local_off
        # a device function with an alloca arena (xcc.ir.alloca) adds its frame to the call stack, once
        self.stack_bytes = LOCAL_STACK_BYTES + sum(f.local_size for f in self.frames.values() if not f.fn.is_entry
                                                   and any(v.name.startswith(ALLOCA_ARENA) for v in f.fn.variables))
        self.local_size = kf.local_size + (self.stack_bytes if self.has_calls else 0)
        self.local_stride = (self.local_size + 15) & ~15
        if not self.has_calls:  # exact window: an overrun of a kernel's local array faults
            self.local_size = layout_variables(space("local"))[1]
        max_pframe = max((f.param_size for f in self.frames.values()), default=0)
        self.param_stride = kf.param_size + (MAX_CALL_DEPTH * max_pframe if self.has_calls else 0)
        self.const_off, const_size = layout_variables(space("const"))
        self.cmem = FlatMemory(const_size, "const")
        self.const_vars = space("const")
        for v in space("const"):
            if v.init:
                self.cmem.write(self.const_off[v.name], v.init)
        self.global_vars = space("global")
        self.global_addr: dict[str, int] = {}
        self.module_globals_arg = module_globals
        self.vals: list[np.ndarray] = []
        self._slots: dict[Value, int] = {}

    # -- what the op executors bind to ----------------------------------------------------------
    def slot_of(self, v: Value) -> int:
        s = self._slots.get(v)
        if s is None:
            s = self._slots[v] = len(self._slots)
        return s

    def atom_latch(self) -> np.ndarray:
        """Each thread's old bits 127:64 of its last ``.b128`` atomic (xcc.sim.ir.ops._atom128)."""
        latch = getattr(self, "_atom_latch", None)
        if latch is None or latch.size != self.T:
            latch = self._atom_latch = np.zeros(self.T, np.uint64)
        return latch

    def address_of(self, symbol: str, space: str, inst: Instruction | None = None):
        """(address, per-thread frame base array or None) of ``symbol``; None if unknown.  ``.local``
        and ``.param`` variables of a device function lie at its frame base (which differs per thread)."""
        if space in ("local", "param") and inst is not None and inst.block is not None:
            fr = self.fn_frame.get(id(inst.block))
            if fr is not None:
                table = fr.local_off if space == "local" else fr.param_off
                if symbol not in table:
                    return None
                if fr.fn.is_entry or symbol in fr.static:
                    return table[symbol], None
                return table[symbol], (lambda: self.lbase) if space == "local" else (lambda: self.pbase)
        table = {"shared": self.shared_off, "local": self.local_off, "const": self.const_off,
                 "global": self.global_addr}.get(space, {})
        return (table[symbol], None) if symbol in table else None

    def special(self, name: str) -> Callable | None:
        """Reader ``f(idx)`` of special register ``name`` (``tid.x``, ``laneid``, ...) for wave slots."""
        return special_register(name, self, self.P, {
            "gridid": self.gridid, "current_graph_exec": self.graph_exec, "dynamic_smem_size": self.dynamic_shared,
            "total_smem_size": self.total_smem_size(self.smem_size), **self.envregs()})

    def addresser(self, space: str, base, offset: int, width: int):
        """(memory getter, ``where(sel, idx, n)`` -> checked addresses) for an access of ``space``."""
        off = _U64(offset % (1 << 64))
        if space == "global":
            gmem = self.gmem
            return (lambda: gmem), lambda sel, idx, n: np.asarray(base(sel, n)).astype(_U64) + off
        frames = self._frames()
        if space == "generic":  # windows onto shared, local, const memory and the kernel parameters; global elsewhere
            cmem = ReadOnlyView(self.cmem)  # generic stores and atomics into the const window fault
            generic = GenericMemory(self.gmem, {**{k: (mem, size, stride, frame)
                                                   for k, (size, stride, frame, mem) in frames.items() if k != "param"},
                                                "const": (lambda: cmem, frames["const"][0], lambda: 0,
                                                          frames["const"][2]),
                                                "param": self.param_window}, self.csize)
            return (lambda: generic), lambda sel, idx, n: (np.asarray(base(sel, n)).astype(_U64) + off, idx)
        if space not in frames:
            return None
        size_of, stride_of, frame_of, mem = frames[space]

        csize = self.csize
        def where(sel, idx, n):
            rel = np.asarray(base(sel, n)).astype(np.int64) + offset
            frame = frame_of(idx)
            if space == "shared":  # a shared::cluster address names a CTA of the cluster
                frame, rel = decode_shared(rel, frame, csize)
            size = size_of()
            check_window(rel, size, width, space, f"the {space} window is {size} bytes")
            return frame * stride_of() + rel

        return mem, where

    def _frames(self) -> dict:
        """space -> (window bytes, frame stride, frame of wave slots, memory) getters."""
        return {"shared": (lambda: self.smem_size, lambda: self.smem_stride, lambda idx: idx // self.P,
                           lambda: self.smem),
                "local": (lambda: self.local_size, lambda: self.local_stride, lambda idx: idx,
                          lambda: self.lmem),
                "param": (lambda: self.param_stride, lambda: self.param_stride, lambda idx: idx,
                          lambda: self.pmem),
                "const": (lambda: len(self.cmem.buf), lambda: 0, lambda idx: 0 * idx, lambda: self.cmem)}

    # -- building --------------------------------------------------------------------------------
    def build(self):
        """Positions, per-block code and edges (target position, phi copies), for the kernel and every
        function it calls."""
        self.fn_frame: dict[int, _Frame] = {}
        self.blocks, self.fn_slots, self.fn_entry = [], {}, {}
        for f in self.funcs:
            fb = reverse_postorder(f)
            self.fn_entry[f.name] = fb[0]
            for b in fb:
                self.fn_frame[id(b)] = self.frames[f.name]
            self.blocks += fb
        blocks = self.blocks
        self.base, pos = {}, 0
        for b in blocks:
            self.base[b] = pos
            pos += len(b.instructions)
        self.insts: list[Instruction] = [i for b in blocks for i in b.instructions]
        for b in blocks:
            slots = self.fn_slots.setdefault(self.fn_frame[id(b)].fn.name, [])
            for phi in b.phis:
                slots.append(self.slot_of(phi.result))
            for inst in b.instructions:
                if inst.result is not None:
                    slots.append(self.slot_of(inst.result))
        by_name = {f.name: f for f in self.funcs}
        reach = {f.name: {g.name for g in reachable_functions(f, by_name)} for f in self.funcs}
        code = []
        for b in blocks:
            caller = self.fn_frame[id(b)]
            for inst in b.instructions:
                op = inst.op
                x = OpBinder(self, inst)
                if op == "call":
                    code.append(self.call_site(inst, caller, reach))
                elif op in ("mbar_wait", "cluster_wait"):  # may suspend threads (xcc.sim.mbarrier, waves)
                    code.append((_WAIT, build_executor(self, inst)))
                elif op not in CONTROL:
                    code.append((_NORMAL, build_executor(self, inst)))
                elif op == "br":
                    code.append((_BR, self.edge(b, inst.targets[0])))
                elif op == "cbr":
                    code.append((_CBR, (x.arg(0), self.edge(b, inst.targets[0]), self.edge(b, inst.targets[1]))))
                elif op == "ret" and not caller.fn.is_entry:
                    code.append((_RET, None))
                elif op in ("ret", "exit"):
                    code.append((_EXIT, None))
                elif op == "trap":
                    code.append((_TRAP, inst.attrs.get("reason", "trap: the kernel aborted")))
                else:  # bar_sync a[, b] / bar_arrive a, b / bar_red p, a[, b]
                    rd = [x.arg(i) for i in range(len(inst.args))]
                    pred = rd.pop(0) if op == "bar_red" else None
                    code.append((_BAR, (op, rd, pred, self.slot_of(inst.result) if op == "bar_red" else None,
                                        inst.attrs.get("redop"))))
            if b.terminator is None:
                raise UnsupportedError(f"block {b.name} of '{caller.fn.name}' has no terminator", caller.fn.loc)
        self.code = code

    def call_site(self, inst: Instruction, caller: _Frame, reach: dict[str, set[str]]):
        """(_CALL, (callee entry, callee frame, caller frame, argument copies, return copies, saved slots))."""
        name = inst.attrs["callee"]
        if name in BUILTINS:
            return _NORMAL, self.builtin(inst, caller)
        callee = self.frames[name]
        g = callee.fn
        params, rets = inst.attrs.get("params", []), inst.attrs.get("rets", [])
        if len(params) != len(g.params) or len(rets) > len(g.ret_params):
            raise LinkError(f"call to '{name}' passes {len(params)} argument(s) and {len(rets)} return value(s); "
                            f"'{name}' takes {len(g.params)} and returns {len(g.ret_params)}", inst.loc)

        args = [(caller.param_off[v], p.offset, p.size) for v, p in zip(params, g.params)]
        rcopies = [(p.offset, caller.param_off[v], p.size) for v, p in zip(rets, g.ret_params)]
        for v, p in zip(params + rets, g.params + g.ret_params):
            size = next(x.size for x in caller.fn.variables if x.name == v)
            if size < p.size:
                raise PtxSemanticError(f"call to '{name}': .param '{v}' has {size} bytes, parameter "
                                       f"'{p.name}' {p.size}", inst.loc)
        saved = self.fn_slots.get(caller.fn.name, []) if caller.fn.name in reach[name] else []
        return _CALL, (self.base[self.fn_entry[name]], callee, caller, args, rcopies, saved)

    def builtin(self, inst: Instruction, caller: _Frame):
        """The executor of a call to the CUDA runtime's ``vprintf`` (format with C semantics, collected per
        thread and printed after the launch) or ``__assertfail`` (a located fault with the message)."""
        name, params, rets = inst.attrs["callee"], inst.attrs.get("params", []), inst.attrs.get("rets", [])
        want = 2 if name == "vprintf" else 5
        if len(params) != want:
            raise LinkError(f"call to '{name}' passes {len(params)} argument(s); the CUDA runtime's takes {want}",
                            inst.loc)
        offs = [caller.param_off[p] for p in params]
        ret = caller.param_off[rets[0]] if rets else None
        frames = self._frames()
        generic = GenericMemory(self.gmem, {k: (mem, size, stride, frame)
                                            for k, (size, stride, frame, mem) in frames.items() if k != "param"},
                                self.csize)

        def param(slot: int, k: int, nbytes: int = 8) -> int:
            at = slot * self.param_stride + int(self.pbase[slot]) + offs[k]
            return int.from_bytes(self.pmem.buf[at:at + nbytes].tobytes(), "little")

        def run(sel, idx, n):
            for i, slot in enumerate(idx.tolist()):
                if name == "__assertfail":
                    msg, file, func = (generic.read_bytes(param(slot, k), slot).decode(errors="replace")
                                       for k in (0, 1, 3))
                    raise ExecFault(f"assertion failed: {file}:{param(slot, 2, 4)}: {func}: Assertion `{msg}` failed.", i)
                fmt = generic.read_bytes(param(slot, 0), slot)
                text, count = c_printf(fmt, lambda a, size, s=slot: generic.read_bytes(a, s, size), param(slot, 1))
                self.printf.append((self.cta0 + slot // self.P, slot % self.P, len(self.printf), text))
                if ret is not None:
                    at = slot * self.param_stride + int(self.pbase[slot]) + ret
                    self.pmem.buf[at:at + 4] = np.frombuffer(np.int32(count).tobytes(), np.uint8)

        return run

    def edge(self, src: Block, dst: Block):
        k = dst.preds.index(src)
        x = OpBinder(self, dst.instructions[0])
        copies = [(self.slot_of(phi.result), x.reader(phi.args[k])) for phi in dst.phis]
        return self.base[dst], copies

    # -- reporting --------------------------------------------------------------------------------
    def where(self, pos: int) -> str:
        inst = self.insts[pos] if 0 <= pos < len(self.insts) else None
        if inst is None or inst.loc is None:
            return f"IR instruction {pos}" + (f" ({inst.op})" if inst is not None else "")
        text = f"PTX line {inst.loc.line}"
        src = (inst.loc.source_line or "").strip()
        return text + f" ({src or inst.op})"

    def line_of(self, pos: int) -> int:
        inst = self.insts[pos] if 0 <= pos < len(self.insts) else None
        return inst.loc.line if inst is not None and inst.loc is not None else 0

    def loc_of(self, pos: int):
        inst = self.insts[pos] if 0 <= pos < len(self.insts) else None
        return inst.loc if inst is not None else None

    def source_of(self, pos: int) -> tuple[str, int] | None:
        inst = self.insts[pos] if pos is not None and 0 <= pos < len(self.insts) else None
        d = inst.debug_loc if inst is not None else None
        if not d or d[1] <= 0 or d[0] not in self.source_files:
            return None
        return self.source_files[d[0]], d[1]

    def _target(self, name: str) -> tuple[int, bytes | None, tuple]:
        v = self.module_vars[name]
        return v.size, v.init, v.addr_relocs

    # -- the launch --------------------------------------------------------------------------------
    def run(self) -> LaunchStats:
        wave = WAVE_THREADS_CALLS if self.has_calls else WAVE_THREADS
        per_wave = self.wave_size(min(self.nctas, max(1, wave // self.P)))
        T = per_wave * self.P
        with self.module_globals(self.gmem, self.module_globals_arg) as globs:
            for v in self.global_vars:  # executors bind these addresses: allocate before building
                self.global_addr[v.name] = globs.address(v.name, v.size, v.init, v.addr_relocs, self._target)
            for v in self.const_vars:  # constant memory: the module's copy as the host left it
                if not v.extern:
                    a = globs.address(v.name, v.size, v.init, v.addr_relocs, self._target)
                    self.cmem.write(self.const_off[v.name], self.gmem.read(a, v.size))
            self.build()
            self.vals.extend(np.zeros(T, storage_dtype(v.type)) for v in self._slots)
            self.smem = FlatMemory(per_wave * self.smem_stride, "shared")
            self.lmem = FlatMemory(T * self.local_stride, "local")
            self.pmem = FlatMemory(T * self.param_stride, "param")
            self.T = T
            self.tcounts = [0] * len(self.insts)
            self.wcounts = [0] * len(self.insts)
            for cta0, n in self.waves(per_wave):
                if cta0:
                    self.smem.buf.fill(0)
                    self.lmem.buf.fill(0)
                    self.pmem.buf.fill(0)
                self.run_wave(per_wave, n)
        return self.stats([inst.op for inst in self.insts], self.tcounts, self.wcounts)

    def run_wave(self, nslots: int, nctas: int) -> None:
        """Run the IR for one wave: a group runs through its block, absorbing the threads waiting at each
        position it reaches (reconvergence), until a branch, an exit, a call, a return or a barrier."""
        T = nslots * self.P
        wave = self.new_wave(nslots, nctas, self.base[self.blocks[0]])
        wave.reduced = self._reduced
        self.depth = np.zeros(T, np.int64)
        self.pbase, self.lbase = np.zeros(T, np.int64), np.zeros(T, np.int64)
        self.stack: list[tuple[np.ndarray, np.ndarray, np.ndarray, dict]] = []
        self.parked: list[np.ndarray] = []  # threads waiting at a ret for the rest of their call
        sched, heap = wave.sched, wave.sched.heap
        code, tcounts, wcounts = self.code, self.tcounts, self.wcounts
        max_steps = self.max_steps
        pos, idx = -1, np.empty(0, np.int64)
        try:
            while True:
                if self.parked:
                    self.unpark(force=not heap)
                if not heap:
                    break
                pos, idx = sched.pop()
                sel, n, nw = _sel(idx)
                while True:
                    if heap and heap[0] == pos:  # threads waiting here join: reconvergence
                        idx = sched.absorb(pos, idx)
                        sel, n, nw = _sel(idx)
                    self.step += 1
                    if max_steps is not None and self.step > max_steps:
                        raise self.over_limit(pos, idx)
                    tcounts[pos] += n
                    wcounts[pos] += nw
                    kind, ex = code[pos]
                    if kind == _NORMAL:
                        ex(sel, idx, n)
                        pos += 1
                        continue
                    if self.control(kind, ex, pos, idx, sel, n):
                        pos += 1
                        continue
                    break
        except (MemoryFault, ExecFault, XccError, KeyboardInterrupt) as e:
            raise self.located(e, pos, idx) from None
        if wave.at_bar:
            raise self.deadlock()

    def control(self, kind: int, ex, pos: int, idx: np.ndarray, sel, n: int) -> bool:
        """Carry out control op ``code[pos]`` for threads ``idx``; True if they go on to ``pos + 1``."""
        wave, push, vals = self.wave, self.wave.sched.push, self.vals
        if kind == _BR:
            _take(ex, vals, sel, n)
            push(ex[0], idx)
        elif kind == _CBR:
            cond, et, ef = ex
            c = np.asarray(cond(sel, n), bool)
            if self.branches is not None:
                self._count_branch(pos, idx, c)
            for e, sub in ((et, idx[c]), (ef, idx[~c])):
                if sub.size:
                    s2, n2, _ = _sel(sub)
                    _take(e, vals, s2, n2)
                    push(e[0], sub)
        elif kind == _CALL:
            self.call(ex, pos, idx)
            push(ex[0], idx)
        elif kind == _RET:
            self.parked.append(idx)
        elif kind == _EXIT:
            wave.exit(idx)
        elif kind == _TRAP:
            raise ExecFault(ex, 0, n)
        elif kind == _WAIT:  # mbarrier.try_wait: the threads whose phase completed go on, the rest wait
            go = ex(sel, idx, n, pos)
            if go.size == idx.size:
                return True
            push(pos + 1, go)
        else:  # _BAR: bar_sync a[, b] / bar_arrive a, b / bar_red p, a[, b]
            op, rd, pred, _, _ = ex
            count = rd[1](sel, n) if len(rd) > 1 else None
            if op == "bar_arrive":  # counts toward the barrier; the thread goes on
                wave.barrier(idx, pos, rd[0](sel, n), count, wait=False)
                return True
            wave.barrier(idx, pos, rd[0](sel, n), count, pred(sel, n) if pred is not None else None)
        return False

    def _reduced(self, pos: int, threads: np.ndarray, total, count) -> None:
        """bar.red released: each waiting thread's result is the reduction over its CTA's arrivals."""
        op, _, _, slot, redop = self.code[pos][1]
        if op == "bar_red":
            self.vals[slot][threads] = bar_reduce(redop, total, count)

    # -- calls ------------------------------------------------------------------------------------
    def _copy_params(self, idx, src_base, dst_base, copies) -> None:
        """For each (source offset, destination offset, size): copy ``.param`` bytes between frames."""
        buf, tb = self.pmem.buf, idx * self.param_stride
        for so, do, size in copies:
            k = np.arange(size)
            buf[(tb + dst_base + do)[:, None] + k] = buf[(tb + src_base + so)[:, None] + k]

    def _count_branch(self, pos: int, idx: np.ndarray, c: np.ndarray) -> None:
        """Per warp of the group: all its threads took the branch, none did, or it diverged."""
        taken, not_taken = np.unique(idx[c] >> 5), np.unique(idx[~c] >> 5)
        div = np.intersect1d(taken, not_taken, assume_unique=True).size
        rec = self.branches.setdefault(pos, [0, 0, 0])
        rec[0] += taken.size - div
        rec[1] += not_taken.size - div
        rec[2] += div

    def call(self, ex, pos: int, idx: np.ndarray) -> None:
        """Threads ``idx`` call at ``pos``: push (return position, frame bases, saved values), copy the
        arguments into the callee's new ``.param`` frame."""
        _, callee, caller, args, _, saved_slots = ex
        d = self.depth[idx]
        over = d >= MAX_CALL_DEPTH
        npb, nlb = self.pbase[idx] + caller.param_size, self.lbase[idx] + caller.local_size
        if not over.any():
            over = nlb + callee.local_size > self.local_stride
            if over.any():
                raise ExecFault(f"call stack overflow: the .local frames of the calls (up to '{callee.fn.name}') need "
                            f"more than the {self.stack_bytes}-byte stack of a thread", int(np.argmax(over)))
            over = npb + callee.param_size > self.param_stride
        if over.any():
            raise ExecFault(f"call stack overflow: more than {MAX_CALL_DEPTH} nested calls (calling "
                        f"'{callee.fn.name}'; unbounded recursion?)", int(np.argmax(over)))
        self._copy_params(idx, self.pbase[idx], npb, args)
        T, vals = self.T, self.vals
        for level in np.unique(d):
            sub = idx[d == level]
            while len(self.stack) <= level:
                self.stack.append((np.zeros(T, np.int64), np.zeros(T, np.int64), np.zeros(T, np.int64), {}))
            rp, pb, lb, saved = self.stack[level]
            rp[sub], pb[sub], lb[sub] = pos, self.pbase[sub], self.lbase[sub]
            for s in saved_slots:
                arr = saved.get(s)
                if arr is None:
                    arr = saved[s] = np.zeros(T, vals[s].dtype)
                arr[sub] = vals[s][sub]
        self.depth[idx] = d + 1
        self.pbase[idx], self.lbase[idx] = npb, nlb

    def unpark(self, force: bool) -> None:
        """Return the threads waiting at a ``ret`` whose warp has no other thread still inside the same
        call (same depth or deeper, entered from the same call site); with ``force`` (nothing else can
        run), all of them if none of them could go."""
        idx = merge(self.parked)
        self.parked = []
        done = self._call_complete(idx)
        if force and not done.any():
            done[:] = True
        if not done.all():
            self.parked.append(idx[~done])
        idx = idx[done]
        if idx.size:
            for q, r in self.ret(idx):
                self.wave.sched.push(q + 1, r)

    def _call_complete(self, idx: np.ndarray) -> np.ndarray:
        """Per thread of ``idx`` (waiting at a ``ret``): whether no other live thread of its warp is still
        inside the call it is returning from."""
        T, depth = self.T, self.depth
        lanes = (idx >> 5)[:, None] * 32 + np.arange(32)  # each thread's warp, lane by lane
        parked = np.zeros(T, bool)
        parked[idx] = True
        d = depth[idx]
        site = np.empty(idx.size, np.int64)
        site_of = np.empty(lanes.shape, np.int64)
        for level in np.unique(d - 1):
            rows = d - 1 == level
            rp = self.stack[level][0]
            site[rows] = rp[idx[rows]]
            site_of[rows] = rp[lanes[rows]]
        dl = depth[lanes]
        inside = ((self.wave.state[lanes] != EXITED) & (dl >= d[:, None]) & (site_of == site[:, None])
                  & ~(parked[lanes] & (dl == d[:, None])))
        return ~inside.any(1)

    def ret(self, idx: np.ndarray):
        """Threads ``idx`` return: copy the return parameters into each caller's variables, restore the
        caller's frame and values; yields (call position, threads) per call site."""
        d = self.depth[idx] - 1
        for level in np.unique(d):
            sub = idx[d == level]
            rp, pb, lb, saved = self.stack[level]
            sites = rp[sub]
            for q in np.unique(sites):
                r = sub[sites == q]
                _, callee, caller, _, rets, saved_slots = self.code[int(q)][1]
                self._copy_params(r, self.pbase[r], pb[r], rets)
                for s in saved_slots:
                    self.vals[s][r] = saved[s][r]
                self.pbase[r], self.lbase[r], self.depth[r] = pb[r], lb[r], level
                yield int(q), r


def _used_symbols(fn: Function) -> set[str]:
    return {i.attrs["symbol"] for i in fn.instructions() if i.op == "addr_of"}


def _sel(idx: np.ndarray):
    """(slice or index array, thread count, warp count) of a sorted slot array."""
    n = idx.size
    lo, hi = int(idx[0]), int(idx[-1])
    if hi - lo + 1 == n:
        return slice(lo, hi + 1), n, (hi >> 5) - (lo >> 5) + 1
    return idx, n, len(warp_runs(idx)[0])


def _take(edge, vals, sel, n) -> None:
    """Phi copies of an edge for the threads ``sel``: read every operand, then write."""
    copies = edge[1]
    if copies:
        new = [np.array(rd(sel, n)) for _, rd in copies]
        for (slot, _), v in zip(copies, new):
            vals[slot][sel] = v
