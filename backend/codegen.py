"""The backend pipeline for one kernel: IR function -> :class:`KernelImage`.

    isel -> convergence barriers -> dead-code elimination -> predicate spilling ->
    register allocation with spilling to local memory (+ checker) -> copy cleanup -> list scheduling ->
    control codes -> layout -> encoding

(the stage names of :data:`xcc.backend.stages.BACKEND_STAGES`: ``isel``, ``convergence``, ``machine-dce``,
``pred-spill``, ``regalloc``, ``copy-cleanup``, ``schedule``, ``control-codes``; a
:class:`~xcc.backend.stages.StageObserver` in :class:`BackendOptions` prints, verifies and times them).

A kernel that calls device functions is compiled with every function it reaches into one image: each
function runs the pipeline up to control codes on its own (values live across a call spilled first:
the calling convention of :mod:`xcc.backend.isel_calls`), then the frame sizes are patched into the
call sequences, the functions are laid out after the kernel and the CALL targets resolved.

Each stage is a function of its own module; this module only sequences them
and gathers the metadata that ``xcc compile -v`` and the object file report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xcc.backend.control import assign_control_codes
from xcc.backend.convergence import insert_convergence_barriers
from xcc.backend.encoding import disassemble, encode_all
from xcc.backend.isa import (
    BRANCH_TARGETS,
    CALLS,
    CBANK_GLOBALS,
    CTA_BARRIERS,
    LEAVES,
    MAX_GLOBALS,
    NUM_CTA_BARRIERS,
    PT,
    RZ,
)
from xcc.backend.isel import InstructionSelector, MBlock
from xcc.backend.isel_calls import RESERVED
from xcc.backend.machine import Machine
from xcc.backend.minst import Imm, MInst, VReg
from xcc.backend.objfile import GlobalVar, KernelImage, ParamInfo
from xcc.backend.occupancy import launch_bounds_register_limit
from xcc.backend.order_cost import function_cost
from xcc.backend.pred_spill import PredSpills, spill_predicates
from xcc.backend.regalloc import check_allocation, inst_defs, inst_uses, liveness, rewrite
from xcc.backend.regalloc_ranges import check_ranges
from xcc.backend.schedule import schedule_blocks
from xcc.backend.spill import MIN_REGISTERS, Spills, allocate_with_spilling
from xcc.backend.stages import StageObserver
from xcc.diagnostics import UnsupportedError
from xcc.ir.cfg import call_graph, reachable_functions
from xcc.ir.core import Function, Variable, layout_variables


@dataclass
class BackendOptions:
    max_registers: int = 255
    check: bool = True  # run the register-allocation checker
    schedule: bool = True  # post-RA list scheduling (xcc.backend.schedule); off at -O0
    # -O1 up: no reconvergence barrier for branches on warp-uniform predicates, and a branch to a block that only
    # exits becomes a guarded EXIT
    uniform_branches: bool = True
    pre_schedule: bool = True  # list scheduling on virtual registers (with ``schedule``)
    # -O0: every instruction waits for all earlier results and stalls the maximum, as ptxas -O0's SASS does
    # (xcc.backend.control, ``serial``)
    serial: bool = False
    observer: StageObserver | None = None  # --print-after / --verify-ir / --time-passes on the backend stages


def compile_function(fn: Function, machine: Machine, options: BackendOptions | None = None,
                     module_vars: list[Variable] = (), report: dict | None = None,
                     functions: dict[str, Function] | None = None) -> KernelImage:
    """``module_vars``: the module's variables, for the kernel's module-level ``.shared``/``.local`` ones.
    ``functions``: the module's functions by name, for the device functions the kernel calls (compiled
    into the kernel's image after it, :mod:`xcc.backend.isel_calls`).
    ``report``, when given, receives ``pred_spills`` (the :class:`PredSpills` of the kernel) and
    ``spills`` (its :class:`xcc.backend.spill.Spills`: general registers spilled to local memory).
    A register limit below :data:`MIN_REGISTERS` is raised to it, as ptxas raises one below its ABI
    minimum."""
    options = options or BackendOptions()
    if not fn.is_entry:
        raise UnsupportedError(f"'{fn.name}' is not a kernel", fn.loc)
    maxnreg = fn.directives.get("maxnreg")
    bounds = 255
    maxntid, minctas = fn.directives.get("maxntid") or fn.directives.get("reqntid"), fn.directives.get("minnctapersm")
    if maxntid and minctas:  # __launch_bounds__(threads, min blocks per SM): fit min blocks in one SM
        threads = 1
        for d in maxntid:
            threads *= d
        bounds = launch_bounds_register_limit(threads, minctas[0], machine)
    max_regs = max(MIN_REGISTERS, min(options.max_registers, maxnreg[0] if maxnreg else 255, bounds,
                                      int(machine.limits.get("max_registers_per_thread", 255))))
    funcs = reachable_functions(fn, functions or {})
    has_calls = any(i.op == "call" for f in funcs for i in f.instructions())
    messages: list[str] = []
    sels = [InstructionSelector(f, module_vars) for f in funcs]
    for s in sels:
        s.uniform_branches = s.early_exit = options.uniform_branches
    if len(funcs) > 1:
        _share_module_layout(funcs, sels, module_vars)
    bodies = [_compile_body(sel, machine, options, max_regs, functions or {}, messages, has_calls)
              for sel in sels]
    kbody = bodies[0]
    if report is not None:
        report["pred_spills"] = kbody.pred_spills
        report["spills"] = kbody.spills
    sel = kbody.sel
    stack = 0
    if has_calls:
        frames = {b.fn.name: b.frame_bytes for b in bodies}
        for b in bodies:
            for m, fld, sign, callee in b.sel.frame_fixups:
                size = sign * frames[callee or b.fn.name]
                v = m.ops[fld]
                m.ops[fld] = Imm((v.value + size) & 0xFFFFFFFF) if isinstance(v, Imm) else v + size
        stack = call_stack_bytes(funcs, frames, {b.fn.name: b.sel.out_bytes for b in bodies})
    insts: list[MInst] = []
    starts: dict[str, int] = {}
    for b in bodies:
        starts[b.fn.name] = len(insts)
        insts += b.insts
    for i, m in enumerate(insts):
        if m.mnemonic == "CALL":
            m.ops["b"] = starts[m.ops["b"]] - (i + 1)
    code = encode_all(insts)
    barriers = barrier_count(insts)
    reqntid = fn.directives.get("reqntid")
    maxntid = fn.directives.get("maxntid")
    max_threads = 1
    for d in (reqntid or maxntid or [int(machine.limits["max_threads_per_block"])]):
        max_threads *= d
    gspills = kbody.spills
    if has_calls:
        local_bytes = kbody.frame_bytes + stack
    else:
        local_bytes = kbody.frame + gspills.frame_bytes if gspills.frame_bytes else sel.local_bytes
    shared = max(b.sel.shared_bytes for b in bodies)
    return KernelImage(
        name=fn.name, code=code,
        params=[ParamInfo(p.name, p.type, p.offset, p.size) for p in fn.params],
        registers=max(max(b.nregs for b in bodies), 1), shared_bytes=shared,
        local_bytes=local_bytes,
        spill_bytes=sum(b.spills.frame_bytes for b in bodies), spill_stores=sum(b.spills.store_bytes for b in bodies),
        spill_loads=sum(b.spills.load_bytes for b in bodies),
        barriers=barriers, max_threads=max_threads, machine_hash=machine.hash,
        lines=[m.line for m in insts],
        debug_lines=[list(m.debug_loc) if m.debug_loc else None for m in insts],
        reqntid=list(reqntid) if reqntid else None,
        reqnctapercluster=list(fn.directives["reqnctapercluster"]) if fn.directives.get("reqnctapercluster") else None,
        explicitcluster="explicitcluster" in fn.directives,
        maxclusterrank=int(fn.directives["maxclusterrank"][0]) if fn.directives.get("maxclusterrank") else None,
        globals=[_global_var(v) for v in _image_globals(bodies)],
        constants=[_global_var(v) for v in bodies[0].sel.consts],
        reloc_globals=[_global_var(v) for v in _reloc_targets(_image_globals(bodies) + bodies[0].sel.consts,
                                                               module_vars)],
        stack_bytes=stack, functions=[[b.fn.name, starts[b.fn.name]] for b in bodies[1:]], messages=messages,
    )


RECURSIVE_STACK_BYTES = 8192
"""The call stack of a kernel whose call graph is recursive (its depth is not known statically).  CUDA's
default (``cudaLimitStackSize``) is 1 KiB; xg1's frames are larger (arguments in memory, every live value
saved around a call), so 8 KiB per thread."""


@dataclass
class _Body:
    """One function of an image, compiled up to control codes and laid out on its own."""

    fn: Function
    sel: object
    insts: list[MInst]
    nregs: int
    frame: int  # 8-aligned end of the function's own variables: where spill slots start
    spills: Spills
    pred_spills: PredSpills

    @property
    def frame_bytes(self) -> int:
        """The function's frame: its variables and spill slots, 16-byte aligned, then its outgoing-argument
        area."""
        return ((self.frame + self.spills.frame_bytes + 15) & ~15) + self.sel.out_bytes


def barrier_count(insts: list[MInst]) -> int:
    """The CTA barriers a kernel uses, as ``ptxas -v`` reports them ("used N barriers"): the highest barrier
    id of its BAR / BAR.CNT / BAR.RED plus one, and all of them (NUM_CTA_BARRIERS) when an id is only known
    at run time (ptxas 13.0 on ``bar.sync %r, n``: 16; on ``bar.sync 5``: 6)."""
    ids = [m.ops.get("b") for m in insts if m.mnemonic in CTA_BARRIERS]
    if any(not isinstance(b, Imm) for b in ids):
        return NUM_CTA_BARRIERS
    return max((b.value for b in ids), default=-1) + 1


def call_stack_bytes(funcs: list[Function], frames: dict[str, int], out: dict[str, int]) -> int:
    """Bytes of call stack past the kernel ``funcs[0]``'s frame: the deepest chain of callee frames (each
    starts at its caller's outgoing-argument area, ``out``), or :data:`RECURSIVE_STACK_BYTES` for a
    recursive call graph."""
    calls = call_graph(funcs)
    need: dict[str, int] = {}
    visiting: set[str] = set()

    def deepest(name: str) -> int | None:  # the stack below ``name``'s frame, None if recursive
        if name in need:
            return need[name]
        if name in visiting:
            return None
        visiting.add(name)
        best = 0
        for c in calls.get(name, []):
            if c in frames:
                below = deepest(c)
                if below is None:
                    return None
                best = max(best, frames[c] - out[name] + below)
        visiting.discard(name)
        need[name] = best
        return best

    below = deepest(funcs[0].name)
    return RECURSIVE_STACK_BYTES if below is None else below


def _global_var(v: Variable) -> GlobalVar:
    return GlobalVar(v.name, v.size, v.align, v.init.hex() if v.init else None, tuple(v.addr_relocs))


def _reloc_targets(named: list[Variable], module_vars) -> list[Variable]:
    """The variables the addresses in ``named``'s initialisers reach (transitively) that ``named`` lacks."""
    by_name = {v.name: v for v in module_vars}
    seen, out, todo = {v.name for v in named}, [], list(named)
    while todo:
        for _, _, target, _, _ in todo.pop().addr_relocs:
            if target not in seen:
                seen.add(target)
                out.append(by_name[target])
                todo.append(by_name[target])
    return out


def _image_globals(bodies: list[_Body]) -> list[Variable]:
    out, seen = [], set()
    for b in bodies:
        for v in b.sel.globals:
            if v.name not in seen:
                seen.add(v.name)
                out.append(v)
    return out


def _share_module_layout(funcs: list[Function], sels: list, module_vars) -> None:
    """One layout of shared memory and one table of ``.global`` addresses for every function of an image,
    as the IR interpreter lays them out: the functions' ``.shared`` variables, then the module's that any
    of them uses; the kernel's ``.global`` variables first, then those only its callees use."""
    used = {i.attrs["symbol"] for f in funcs for i in f.instructions() if i.op == "addr_of"}
    shared = ([v for f in funcs for v in f.variables if v.space == "shared"]
              + [v for v in module_vars if v.space == "shared" and v.name in used])
    offsets, size = layout_variables(shared)
    globs, seen = [], set()
    for sel in sels:
        for v in sel.globals:
            if v.name not in seen:
                seen.add(v.name)
                globs.append(v)
    if len(globs) > MAX_GLOBALS:
        raise UnsupportedError(f"kernel '{funcs[0].name}' and the functions it calls use {len(globs)} .global "
                               f"variables, more than the {MAX_GLOBALS} constant bank 0 has room for", funcs[0].loc)
    consts = [v for v in module_vars if v.space == "const" and v.name in used]
    const_offsets, const_bytes = layout_variables(consts)
    for sel in sels:
        sel.shared_offsets, sel.shared_bytes = offsets, size
        sel.consts, sel.const_offsets, sel.const_bytes = consts, const_offsets, const_bytes
        sel.globals = globs
        sel.global_slots = {v.name: CBANK_GLOBALS + 8 * i for i, v in enumerate(globs)}


def _compile_body(sel, machine: Machine, options: BackendOptions, max_regs: int,
                  functions: dict[str, Function], messages: list[str], has_calls: bool) -> _Body:
    fn = sel.fn
    sel.messages = messages
    sel.set_callees(functions)
    obs = options.observer
    after = (lambda stage: obs.after(stage, fn.name, blocks)) if obs is not None else (lambda stage: None)
    if obs is not None:
        obs.start()
    blocks = _split_at_calls(sel.select().blocks)
    after("isel")
    insert_convergence_barriers(blocks)
    after("convergence")
    eliminate_dead_code(blocks)
    after("machine-dce")
    if options.schedule and options.pre_schedule and not has_calls:
        # (not with calls: the calling convention's stack-pointer updates are physical registers that the frame
        # accesses through virtual registers do not show as dependences before allocation)
        _schedule(blocks, machine, virtual=True)
        after("pre-schedule")
    spills: PredSpills = spill_predicates(blocks, fn.name)
    after("pred-spill")
    frame = (sel.local_bytes + 7) & ~7  # spill slots follow the function's own variables
    force = live_across_calls(blocks) if has_calls else []
    split, cold = _split_if_spilling(blocks, fn, max_regs, frame, spills, sel) if not has_calls else ([], set())
    assign, nregs, gspills = allocate_with_spilling(
        blocks, max_regs, fn.name, frame, spills.origin, base_reg=sel.frame_base,
        reserved=RESERVED if has_calls else frozenset(), force=force, pinned=sel.call_probes, split=split,
        cold=frozenset(cold))
    if options.check:
        (check_ranges if split else check_allocation)(blocks, assign, gspills.origin, gspills.accesses)
    rewrite(blocks, assign)
    after("regalloc")
    _remove_self_moves(blocks)
    _remove_fallthrough_branches(blocks)
    after("copy-cleanup")
    if options.schedule:
        _schedule_if_faster(blocks, machine)
        after("schedule")
    assign_control_codes(blocks, machine, serial=options.serial)
    after("control-codes")
    if has_calls:
        nregs = max(nregs, max(RESERVED) + 1)
    return _Body(fn, sel, _layout(blocks), nregs, frame, gspills, spills)


def _split_if_spilling(blocks: list[MBlock], fn: Function, max_regs: int, frame: int, spills: PredSpills,
                       sel) -> tuple[list[VReg], set[str]]:
    """With a profile that shows blocks never ran (``fn.cold_blocks``, profile use) and code that spills, split
    the values live into those blocks around them (:mod:`xcc.backend.cold_split`), so the spill code goes
    there; returns the split values and the cold machine blocks for :func:`allocate_with_spilling` (no values:
    the plain allocation)."""
    cold_names = getattr(fn, "cold_blocks", None)
    if not cold_names:
        return [], set()
    from xcc.backend.cold_split import machine_cold_blocks, split_around_cold

    cold = machine_cold_blocks(blocks, cold_names)
    if not cold:
        return [], set()
    trial = [MBlock(b.name, [replace(m, ops=dict(m.ops), mods=dict(m.mods), ctrl=replace(m.ctrl)) for m in b.insts],
                    list(b.succs)) for b in blocks]
    _, _, trial_spills = allocate_with_spilling(trial, max_regs, fn.name, frame, spills.origin,
                                                base_reg=sel.frame_base, pinned=sel.call_probes)
    if not trial_spills.count:
        return [], set()
    exclude = {v for kv in spills.origin.items() for v in kv if isinstance(v, VReg)}
    return split_around_cold(blocks, cold, exclude), cold


def _schedule_if_faster(blocks: list[MBlock], machine: Machine) -> None:
    """Post-RA scheduling, kept where :mod:`xcc.backend.order_cost` ranks the new order (with its control codes)
    no slower than the allocated order: the list scheduler does not see the counting scoreboards."""
    before = [list(b.insts) for b in blocks]  # (the scheduler edits the lists it is given)
    saved = {id(m): replace(m.ctrl) for insts in before for m in insts}
    _schedule(blocks, machine)
    after = [b.insts for b in blocks]
    costs = []
    for order in (after, before):
        for b, insts in zip(blocks, order):
            b.insts = insts
        assign_control_codes(blocks, machine)
        costs.append(function_cost(blocks, machine))
        for insts in order:
            for m in insts:
                m.ctrl = replace(saved[id(m)])
    for b, insts in zip(blocks, after if costs[0] <= costs[1] else before):
        b.insts = insts


def _schedule(blocks: list[MBlock], machine: Machine, virtual: bool = False) -> None:
    """List-schedule every block (:mod:`xcc.backend.schedule`); a call or return ends its block and stays last."""
    tails = {}
    for b in blocks:
        if b.insts and b.insts[-1].mnemonic in CALLS:
            tails[b.name] = b.insts.pop()
    schedule_blocks(blocks, machine, virtual)
    for b in blocks:
        if b.name in tails:
            b.insts.append(tails[b.name])


_CALLS = CALLS - LEAVES  # the calls a block ends at: control comes back after them


def _split_at_calls(blocks: list[MBlock]) -> list[MBlock]:
    """End a block after every CALL and SYSCALL: the code after it is a new block, so control codes treat
    the call as a block boundary (every scoreboard waited, fixed latencies drained) and the scheduler
    moves nothing across it."""
    out = []
    for b in blocks:
        cur = MBlock(b.name)
        k = 0
        for m in b.insts:
            cur.insts.append(m)
            if m.mnemonic in _CALLS:
                k += 1
                nxt = MBlock(f"{b.name}.after_call{k}")
                cur.succs = [nxt.name]
                out.append(cur)
                cur = nxt
        cur.succs = list(b.succs)
        out.append(cur)
    return out


def live_across_calls(blocks: list[MBlock]) -> list[VReg]:
    """The general-register values live across a CALL (each ends its block): every register is
    caller-saved, so they are spilled around the calls (predicates are saved by CALL itself)."""
    _, live_out = liveness(blocks)
    out: set[VReg] = set()
    for b in blocks:
        if b.insts and b.insts[-1].mnemonic == "CALL":
            out |= {v for v in live_out[b.name] if v.width}
    return sorted(out, key=lambda v: v.id)


def eliminate_dead_code(blocks: list[MBlock]) -> None:
    """Remove instructions without effects whose results nobody reads, to a fixpoint."""
    while True:
        used = set()
        for b in blocks:
            for m in b.insts:
                used.update(inst_uses(m))
        removed = False
        for b in blocks:
            keep = []
            for m in b.insts:
                if not _has_effects(m) and not any(v in used for v in inst_defs(m)):
                    removed = True
                    continue
                keep.append(m)
            b.insts = keep
        if not removed:
            return


def _has_effects(m: MInst) -> bool:
    """Effects beyond the virtual registers it defines: memory, control, calls, or a physical register
    written before allocation (the calling convention's stack pointer)."""
    if m.d.has_effects:
        return True
    for op in m.d.operands:
        if op.is_def and isinstance(m.ops.get(op.field), int):
            if m.ops[op.field] != (PT if op.kind == "P" else RZ):
                return True
    return False


def _remove_self_moves(blocks: list[MBlock]) -> None:
    for b in blocks:
        b.insts = [m for m in b.insts
                   if not (m.mnemonic == "MOV" and m.guard is None and isinstance(m.ops["b"], int)
                           and m.ops["b"] == m.ops["d"])]


def _remove_fallthrough_branches(blocks: list[MBlock]) -> None:
    """Drop an unconditional branch to the next block; ``@P BRA next; BRA other`` becomes ``@!P BRA other``."""
    for b, nxt in zip(blocks, blocks[1:]):
        if (len(b.insts) >= 2 and b.insts[-1].mnemonic == "BRA" and b.insts[-1].guard is None
                and b.insts[-2].mnemonic == "BRA" and b.insts[-2].guard is not None
                and b.insts[-2].ops["b"] == nxt.name):
            cond, other = b.insts[-2], b.insts.pop()
            reg, negated = cond.guard
            cond.guard, cond.ops["b"] = (reg, not negated), other.ops["b"]
    for b, nxt in zip(blocks, blocks[1:]):
        if b.insts and b.insts[-1].mnemonic == "BRA" and b.insts[-1].guard is None and b.insts[-1].ops["b"] == nxt.name:
            b.insts.pop()


def _layout(blocks: list[MBlock]) -> list[MInst]:
    start, insts = {}, []
    for b in blocks:
        start[b.name] = len(insts)
        insts += b.insts
    for i, m in enumerate(insts):
        if m.mnemonic in BRANCH_TARGETS:
            m.ops["b"] = start[m.ops["b"]] - (i + 1)
    return insts


def disassemble_kernel(k: KernelImage, ptx_path=None) -> str:
    """The kernel's instructions (:func:`~xcc.backend.encoding.disassemble`) with, for a ``-lineinfo``/``-G``
    build, the CUDA source line above the instructions it produced, whenever it changes (as
    ``nvdisasm --print-line-info`` and ``cuobjdump -sass`` do): ``//## File "x.cu", line N`` and the line's
    text when the file is found (:func:`xcc.backend.lineinfo.resolve_source`, near ``ptx_path``)."""
    from xcc.backend.lineinfo import file_table, line_info, source_text

    files, notes, last = file_table(k), {}, None
    for pc in range(k.instruction_count):
        info = line_info(k, pc, files)
        if info.file is None or (info.file, info.line) == last:
            continue
        last = (info.file, info.line)
        text = source_text(info.file, info.line, ptx_path)
        notes[pc] = [f'## File "{info.file}", line {info.line}'] + ([f"   {text.strip()}"] if text else [])
    return disassemble(k.instructions, k.lines, notes)
