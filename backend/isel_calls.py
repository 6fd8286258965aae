"""Instruction selection for calls: the xg1 calling convention (docs/isa.md, "Calls").

A rule group of :class:`xcc.backend.isel.InstructionSelector` (see :mod:`xcc.backend.isel_core`).  Arguments and
return values travel in memory, exactly as the IR interpreter models PTX's ``.param`` space: every
function has a frame in the thread's local memory at the stack pointer ``R1`` (its base; the kernel's
frame is at local address 0 and addressed absolutely), laid out as

    [0, P)      the function's ``.param`` frame: its parameters and return parameters at their PTX
                offsets (``Function.params``/``ret_params``), then its own call-site ``.param`` variables
    [P, L)      its ``.local`` variables (16-byte aligned start)
    [L, F-O)    spill slots: values live across a call (caller-saved everything) and register spills
    [F-O, F)    the outgoing-argument area: O bytes, the largest parameter block of the functions it
                calls (their parameters and return parameters, 16-byte aligned; 48 for a SYSCALL);
                F, the frame size, is a multiple of 16

A call copies each argument from the caller's call-site variable into the outgoing area at
``base + F - O + offset``, which is where the callee's frame, and so its parameter block, starts: sets
``R1 = base + F - O`` and ``CALL``s with the end of the callee's frame as the stack probe (every byte
the caller writes lies in its own frame, which its own call probed); after the return it restores
``R1`` and copies the return parameters back.  ``CALL`` writes the return address and the caller's saved state to
``R2:R3``; the callee moves that pair to a virtual register at its entry and ``RET``s through it.
Frame sizes are known only after register allocation: the immediates that depend on them are recorded
as :attr:`frame_fixups` and patched by :mod:`xcc.backend.codegen`.

The CUDA runtime's ``vprintf`` and ``__assertfail`` are ``SYSCALL`` services whose argument block is the
outgoing area, laid out like a callee's ``.param`` frame (:data:`BUILTIN_LAYOUT`); ``trap`` is ``SYSCALL.TRAP``
with its message in the image.
"""

from __future__ import annotations

from xcc.backend.isa import RZ
from xcc.backend.isel_core import SelectorCore
from xcc.backend.minst import Half, Imm, MInst, new_vreg
from xcc.diagnostics import LinkError, PtxSemanticError
from xcc.ir.core import Function, Instruction, Variable, layout_variables

SP = 1  # R1: the stack pointer (the current function's frame base)
RA = 2  # R2:R3: the return-address pair CALL writes
RESERVED = frozenset({1, 2, 3})  # never allocated in an image with calls
BUILTIN_FRAME = 48  # bytes of a SYSCALL argument block
# service -> ((offset, size) of each argument, offset of the return value or None)
BUILTIN_LAYOUT = {
    "vprintf": ("VPRINTF", ((0, 8), (8, 8)), 16),
    "__assertfail": ("ASSERTFAIL", ((0, 8), (8, 8), (16, 4), (24, 8), (32, 8)), None),
}


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


class CallSelection(SelectorCore):
    # ----------------------------------------------------------------- set up by the constructor
    def init_frame(self) -> None:
        """The frame layout of the function (see the module docstring); called by the constructor after the
        shared and local layouts.  Kernels keep their locals at absolute addresses and append their
        call-site ``.param`` variables; device functions address everything from ``R1``."""
        fn: Function = self.fn
        self.callees: dict[str, Function] = getattr(self, "callees", {})
        self.frame_fixups: list[tuple[MInst, str, int, str | None]] = []
        self.out_bytes = 0  # the outgoing-argument area (set_callees)
        self.messages: list[str] = getattr(self, "messages", [])
        self.ra = None
        pvars = [v for v in fn.variables if v.space == "param"]
        if fn.is_entry:
            self.frame_base = RZ
            start = _align(self.local_bytes, 16)
            offs, end = layout_variables(pvars)
            self.param_offsets = {k: start + o for k, o in offs.items()}
            if pvars:
                self.local_bytes = start + end
            return
        if any(v.space == "local" for v in getattr(self, "_module_locals", [])):
            raise self.error(f"device function '{fn.name}' uses a module-level .local variable, which the xg1 "
                             "backend does not support yet")
        self.frame_base = SP
        self.param_offsets = {p.name: p.offset for p in fn.params + fn.ret_params}
        end = max((p.offset + p.size for p in fn.params + fn.ret_params), default=0)
        offs, psize = layout_variables([Variable("", "param", end, 1)] + pvars)
        self.param_offsets.update((k, o) for k, o in offs.items() if k)
        lvars = [v for v in fn.variables if v.space == "local"]
        lstart = _align(psize, max([16] + [v.align for v in lvars]))
        loffs, lsize = layout_variables(lvars)
        self.local_offsets = {k: lstart + o for k, o in loffs.items()}
        self.local_bytes = lstart + lsize

    def set_callees(self, functions: dict[str, Function]) -> None:
        """The module's functions, for the calls' signatures; sizes the outgoing-argument area."""
        self.callees = functions
        out = 0
        for i in self.fn.instructions():
            if i.op != "call":
                continue
            g = functions.get(i.attrs["callee"])
            if i.attrs["callee"] in BUILTIN_LAYOUT:
                out = max(out, BUILTIN_FRAME)
            elif g is not None:
                out = max(out, max((p.offset + p.size for p in g.params + g.ret_params), default=0))
        self.out_bytes = _align(out, 16)

    def fixup(self, m: MInst, field: str, sign: int = 1, callee: str | None = None) -> MInst:
        """``m.ops[field]`` (an int or Imm) gets ``sign`` times the frame size of ``callee`` (None: this
        function) added once the frame sizes are known."""
        self.frame_fixups.append((m, field, sign, callee))
        return m

    # ----------------------------------------------------------------- entry, return, addresses
    def prologue(self) -> None:
        """At a device function's entry: the return-address pair CALL wrote to R2:R3 into a register."""
        if self.fn.is_entry:
            return
        self.inst = None
        self.ra = new_vreg(2)
        self.emit("MOV", d=Half(self.ra, 0), b=RA)
        self.emit("MOV", d=Half(self.ra, 1), b=RA + 1)

    def select_return(self, inst) -> None:
        self.emit("RET", a=self.ra)

    def frame_address(self, inst) -> bool:
        """``addr_of`` a ``.param`` variable, or a ``.local`` one of a device function: its local address
        (frame base + offset).  False when the symbol is not in the frame."""
        sym, space = inst.attrs["symbol"], inst.attrs["space"]
        if space == "param":
            table = self.param_offsets
        elif space == "local" and not self.fn.is_entry:
            table = self.local_offsets
        else:
            return False
        if sym not in table:
            return False
        d = self.vreg(inst.result)
        lo = Half(d, 0) if d.width == 2 else d
        if self.frame_base == RZ:
            self.emit("MOV", d=lo, b=Imm(table[sym]))
        else:
            self.emit("IADD3", d=lo, a=SP, b=Imm(table[sym]), c=RZ)
        if d.width == 2:
            self.emit("MOV", d=Half(d, 1), b=Imm(0))
        return True

    # ----------------------------------------------------------------- calls
    def _copy(self, src: int, dst: int, size: int, dst_fix: bool, src_fix: bool) -> None:
        """Copy ``size`` bytes of the frame: ``[base + src (+ F - O)]`` -> ``[base + dst (+ F - O)]`` (the
        outgoing area), by words where both are 4-byte aligned (F and O are multiples of 16), else by bytes."""
        base = self.frame_base
        if src_fix:
            src -= self.out_bytes
        if dst_fix:
            dst -= self.out_bytes
        step = 4 if size % 4 == 0 and src % 4 == 0 and dst % 4 == 0 else 1
        mods = {} if step == 4 else {"size": "U8"}
        for k in range(0, size, step):
            t = new_vreg(1)
            ld = self.emit("LDL", d=t, a=base, b=src + k, mods=mods)
            st = self.emit("STL", a=base, b=dst + k, c=t, mods=mods)
            if src_fix:
                self.fixup(ld, "b")
            if dst_fix:
                self.fixup(st, "b")

    def _call_operands(self, inst, want: int | None = None):
        name = inst.attrs["callee"]
        params, rets = inst.attrs.get("params", []), inst.attrs.get("rets", [])
        for v in params + rets:
            if v not in self.param_offsets:
                raise self.error(f"call to '{name}': '{v}' is not a .param variable of '{self.fn.name}'")
        return name, params, rets

    def _var_size(self, name: str) -> int:
        return next(x.size for x in self.fn.variables if x.name == name)

    def op_call(self, inst: Instruction) -> None:
        name, params, rets = self._call_operands(inst)
        if name in BUILTIN_LAYOUT:
            return self._builtin_call(inst, name, params, rets)
        g = self.callees.get(name)
        if g is None:
            raise LinkError(f"call to '{name}', which no module defines (link the module that defines it)",
                            inst.loc)
        if g.is_entry:
            raise self.error(f"call to kernel '{name}' (dynamic parallelism) is not supported")
        if len(params) != len(g.params) or len(rets) > len(g.ret_params):
            raise LinkError(f"call to '{name}' passes {len(params)} argument(s) and {len(rets)} return value(s); "
                            f"'{name}' takes {len(g.params)} and returns {len(g.ret_params)}", inst.loc)
        for v, p in zip(params + rets, g.params + g.ret_params):
            if self._var_size(v) < p.size:
                raise PtxSemanticError(f"call to '{name}': .param '{v}' has {self._var_size(v)} bytes, parameter "
                                       f"'{p.name}' {p.size}", inst.loc)
        for v, p in zip(params, g.params):
            self._copy(self.param_offsets[v], p.offset, p.size, dst_fix=True, src_fix=False)
        self.fixup(self.emit("IADD3", d=SP, a=self.frame_base, b=Imm(-self.out_bytes & 0xFFFFFFFF), c=RZ), "b")
        probe = new_vreg(1)
        self.call_probes.add(probe)
        self.fixup(self.emit("IADD3", d=probe, a=SP, b=Imm(0), c=RZ), "b", callee=name)
        self.emit("CALL", d=RA, b=name, a=probe)
        if self.frame_base == SP:
            self.fixup(self.emit("IADD3", d=SP, a=SP, b=Imm(self.out_bytes), c=RZ), "b", sign=-1)
        for v, p in zip(rets, g.ret_params):
            self._copy(p.offset, self.param_offsets[v], p.size, dst_fix=False, src_fix=True)

    def _builtin_call(self, inst, name: str, params: list[str], rets: list[str]) -> None:
        svc, layout, ret_off = BUILTIN_LAYOUT[name]
        if len(params) != len(layout):
            raise LinkError(f"call to '{name}' passes {len(params)} argument(s); the CUDA runtime's takes "
                            f"{len(layout)}", inst.loc)
        for v, (off, size) in zip(params, layout):
            self._copy(self.param_offsets[v], off, min(size, self._var_size(v)), dst_fix=True, src_fix=False)
        blk = new_vreg(1)
        self.fixup(self.emit("IADD3", d=blk, a=self.frame_base, b=Imm(-self.out_bytes & 0xFFFFFFFF), c=RZ), "b")
        self.emit("SYSCALL", a=blk, b=0, mods={"svc": svc})
        if rets and ret_off is not None:
            self._copy(ret_off, self.param_offsets[rets[0]], min(4, self._var_size(rets[0])), dst_fix=False,
                       src_fix=True)

    def op_trap(self, inst: Instruction) -> None:
        reason = inst.attrs.get("reason", "trap: the kernel aborted")
        if reason not in self.messages:
            self.messages.append(reason)
        self.emit("SYSCALL", a=RZ, b=self.messages.index(reason), mods={"svc": "TRAP"})
        self.emit("EXIT")

    @property
    def call_probes(self) -> set:
        s = self.__dict__.get("_call_probes")
        if s is None:
            s = self.__dict__["_call_probes"] = set()
        return s
