"""The backend pipeline for one kernel: IR function -> :class:`KernelImage`.

    isel -> convergence barriers -> dead-code elimination -> predicate spilling ->
    register allocation with spilling to local memory (+ checker) -> copy cleanup -> list scheduling ->
    layout -> control codes -> encoding

Each stage is a function of its own module; this module only sequences them
and gathers the metadata that ``xcc compile -v`` and the object file report.
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.backend.control import assign_control_codes
from xcc.backend.convergence import insert_convergence_barriers
from xcc.backend.encoding import disassemble, encode_all
from xcc.backend.isel import InstructionSelector, MBlock
from xcc.backend.machine import Machine
from xcc.backend.minst import Imm, MInst
from xcc.backend.objfile import GlobalVar, KernelImage, ParamInfo
from xcc.backend.pred_spill import PredSpills, spill_predicates
from xcc.backend.regalloc import check_allocation, inst_defs, inst_uses, rewrite
from xcc.backend.schedule import schedule_blocks
from xcc.backend.spill import MIN_REGISTERS, allocate_with_spilling
from xcc.diagnostics import UnsupportedError
from xcc.ir.core import Function, Variable


@dataclass
class BackendOptions:
    max_registers: int = 255
    check: bool = True  # run the register-allocation checker
    schedule: bool = True  # post-RA list scheduling (xcc.backend.schedule); off at -O0


def compile_function(fn: Function, machine: Machine, options: BackendOptions | None = None,
                     module_vars: list[Variable] = (), report: dict | None = None) -> KernelImage:
    """``module_vars``: the module's variables, for the kernel's module-level ``.shared``/``.local`` ones.
    ``report``, when given, receives ``pred_spills`` (the :class:`PredSpills` of the kernel) and
    ``spills`` (its :class:`xcc.backend.spill.Spills`: general registers spilled to local memory).
    A register limit below :data:`MIN_REGISTERS` is raised to it, as ptxas raises one below its ABI
    minimum."""
    options = options or BackendOptions()
    if not fn.is_entry:
        raise UnsupportedError(f"'{fn.name}' is not a kernel", fn.loc)
    maxnreg = fn.directives.get("maxnreg")
    max_regs = max(MIN_REGISTERS, min(options.max_registers, maxnreg[0] if maxnreg else 255,
                                      int(machine.limits.get("max_registers_per_thread", 255))))
    sel = InstructionSelector(fn, module_vars).select()
    blocks = sel.blocks
    insert_convergence_barriers(blocks)
    eliminate_dead_code(blocks)
    spills: PredSpills = spill_predicates(blocks, fn.name)
    if report is not None:
        report["pred_spills"] = spills
    frame = (sel.local_bytes + 7) & ~7  # spill slots follow the kernel's own .local variables
    assign, nregs, gspills = allocate_with_spilling(blocks, max_regs, fn.name, frame, spills.origin)
    if report is not None:
        report["spills"] = gspills
    if options.check:
        check_allocation(blocks, assign, gspills.origin, gspills.accesses)
    rewrite(blocks, assign)
    _remove_self_moves(blocks)
    _remove_fallthrough_branches(blocks)
    if options.schedule:
        schedule_blocks(blocks, machine)
    assign_control_codes(blocks, machine)
    insts = _layout(blocks)
    code = encode_all(insts)
    bars = {m.ops["b"].value for m in insts if m.mnemonic == "BAR" and isinstance(m.ops.get("b"), Imm)}
    reqntid = fn.directives.get("reqntid")
    maxntid = fn.directives.get("maxntid")
    max_threads = 1
    for d in (reqntid or maxntid or [int(machine.limits["max_threads_per_block"])]):
        max_threads *= d
    return KernelImage(
        name=fn.name, code=code,
        params=[ParamInfo(p.name, p.type, p.offset, p.size) for p in fn.params],
        registers=max(nregs, 1), shared_bytes=sel.shared_bytes,
        local_bytes=frame + gspills.frame_bytes if gspills.frame_bytes else sel.local_bytes,
        spill_bytes=gspills.frame_bytes, spill_stores=gspills.store_bytes, spill_loads=gspills.load_bytes,
        barriers=len(bars), max_threads=max_threads, machine_hash=machine.hash,
        lines=[m.line for m in insts],
        debug_lines=[list(m.debug_loc) if m.debug_loc else None for m in insts],
        reqntid=list(reqntid) if reqntid else None,
        globals=[GlobalVar(v.name, v.size, v.align, v.init.hex() if v.init else None) for v in sel.globals],
    )


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
                if not m.d.has_effects and not any(v in used for v in inst_defs(m)):
                    removed = True
                    continue
                keep.append(m)
            b.insts = keep
        if not removed:
            return


def _remove_self_moves(blocks: list[MBlock]) -> None:
    for b in blocks:
        b.insts = [m for m in b.insts
                   if not (m.mnemonic == "MOV" and m.guard is None and isinstance(m.ops["b"], int)
                           and m.ops["b"] == m.ops["d"])]


def _remove_fallthrough_branches(blocks: list[MBlock]) -> None:
    for b, nxt in zip(blocks, blocks[1:]):
        if b.insts and b.insts[-1].mnemonic == "BRA" and b.insts[-1].guard is None and b.insts[-1].ops["b"] == nxt.name:
            b.insts.pop()


def _layout(blocks: list[MBlock]) -> list[MInst]:
    start, insts = {}, []
    for b in blocks:
        start[b.name] = len(insts)
        insts += b.insts
    for i, m in enumerate(insts):
        if m.mnemonic in ("BRA", "BSSY"):
            m.ops["b"] = start[m.ops["b"]] - (i + 1)
    return insts


def disassemble_kernel(k: KernelImage) -> str:
    return disassemble(k.instructions, k.lines)
