"""Instruction selection, the core: IR -> xg1 machine instructions on virtual registers.

Rules, in the spirit of Cranelift's ISLE lowering, one method per IR op (``op_<irop>``), in groups by
module: :mod:`~xcc.backend.isel_arith` (integer and float arithmetic), :mod:`~xcc.backend.isel_bits` (bit
counts, fields, bytes, dot products), :mod:`~xcc.backend.isel_convert` (comparison, selection,
conversions), :mod:`~xcc.backend.isel_memory` (launch values, addresses, loads, stores, atomics),
:mod:`~xcc.backend.isel_sync` (terminators, barriers, fences, warp-collective ops),
:mod:`~xcc.backend.isel_half`, :mod:`~xcc.backend.isel_matrix` and :mod:`~xcc.backend.isel_calls`; the
data they look up is in :mod:`~xcc.backend.isel_tables`.  :class:`xcc.backend.isel.InstructionSelector`
puts them together.  This module holds what every rule uses: operands (constants fold into the B operand
where the slot allows it; kernel parameters and launch dimensions are ``c[0x0][off]`` operands where the
slot allows), copies, and the driver.  Out of SSA: phis become parallel copies at the end of each
predecessor (critical edges are split first), sequentialised through temporaries.

Invariant: 8- and 16-bit values live zero-extended in 32-bit registers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.backend.combine import combine
from xcc.backend.isa import CBANK_GLOBALS, MAX_GLOBALS, PT, RZ
from xcc.backend.isel_tables import LUT_AND, PLUT_A, TERMINATORS, UNIMPLEMENTED_FLAGS
from xcc.backend.minst import CBank, Half, Imm, MInst, VReg, mi, new_vreg
from xcc.backend.predicate import predicate
from xcc.diagnostics import UnsupportedError
from xcc.ir.core import Block, Const, Function, Instruction, Value, Variable, layout_variables
from xcc.ir.types import ScalarType


def width_of(t: ScalarType) -> int:
    """Registers a value of ``t`` occupies: 0 for a predicate, 1 for up to 32 bits, 2 for 64."""
    if t.kind == "pred":
        return 0
    if t.bits <= 32:
        return 1
    if t.bits == 64:
        return 2
    raise UnsupportedError(f"values of type {t} are not supported by the backend yet")


@dataclass
class MBlock:
    name: str
    insts: list[MInst] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)


@dataclass
class SelectedFunction:
    name: str
    blocks: list[MBlock]
    shared_offsets: dict[str, int]
    shared_bytes: int
    local_offsets: dict[str, int] = field(default_factory=dict)
    local_bytes: int = 0
    globals: list[Variable] = field(default_factory=list)  # their addresses: c[0x0][CBANK_GLOBALS + 8*i]


class SelectorCore:
    """``module_vars``: the module's variables (those the kernel names are laid out with its own);
    shared and local variables are laid out as the IR interpreter lays them out
    (:func:`xcc.ir.core.layout_variables`): module-level locals first, ``.extern .shared`` arrays at
    the aligned end of the static shared variables, where the launch's dynamic shared memory starts."""

    def __init__(self, fn: Function, module_vars: list[Variable] = ()):
        self.fn = fn
        self.uniform_branches = False  # mark branches on warp-uniform predicates (BackendOptions.uniform_branches)
        self.early_exit = False  # a branch to a block that only exits becomes a guarded EXIT (BackendOptions)
        self._uniformity = None
        self._defs: dict[Value, Instruction] | None = None
        self.vregs: dict[Value, VReg] = {}
        self.cbank: dict[Value, CBank] = {}  # values that are a constant-bank word
        self.out: list[MInst] = []
        self.inst: Instruction | None = None
        for v in fn.variables:
            if v.space not in ("shared", "local", "param"):  # .param: call-site variables (isel_calls)
                raise UnsupportedError(f".{v.space} variable '{v.name}' is not supported by the backend yet",
                                       fn.loc)
        used = {i.attrs["symbol"] for i in fn.instructions() if i.op == "addr_of"}
        mvars = [v for v in module_vars if v.name in used]
        self.shared_offsets, self.shared_bytes = layout_variables(
            [v for v in fn.variables if v.space == "shared"] + [v for v in mvars if v.space == "shared"])
        self.local_offsets, self.local_bytes = layout_variables(
            [v for v in mvars if v.space == "local"] + [v for v in fn.variables if v.space == "local"])
        self.globals = [v for v in mvars if v.space == "global"]
        if len(self.globals) > MAX_GLOBALS:
            raise UnsupportedError(f"kernel '{fn.name}' uses {len(self.globals)} .global variables, more than "
                                   f"the {MAX_GLOBALS} constant bank 0 has room for", fn.loc)
        self.global_slots = {v.name: CBANK_GLOBALS + 8 * i for i, v in enumerate(self.globals)}
        # .const variables live in constant bank 3 (codegen lays them out once per image)
        self.consts = [v for v in mvars if v.space == "const"]
        self.const_offsets, self.const_bytes = layout_variables(self.consts)
        if self.const_bytes > 1 << 16:
            raise UnsupportedError(f"kernel '{fn.name}' reads {self.const_bytes} bytes of .const data, more than "
                                   "the 64 KiB of constant bank 3", fn.loc)
        self.const_addr: dict[Value, int] = {}  # values that are the bank-3 offset of a .const variable
        self._module_locals = [v for v in mvars if v.space == "local"]
        self.init_frame()


    # ----------------------------------------------------------------- operands
    def error(self, msg: str) -> UnsupportedError:
        return UnsupportedError(msg, self.inst.loc if self.inst is not None else None)

    def emit(self, mnemonic: str, guard=None, mods=None, **ops) -> MInst:
        inst = self.inst
        m = mi(mnemonic, guard, inst.loc.line if inst is not None and inst.loc else 0,
               inst.debug_loc if inst is not None else None, mods, **ops)
        m.ahead = inst is not None and bool(inst.attrs.get("ahead"))
        self.out.append(m)
        return m

    def def_of(self, v: Value) -> Instruction | None:
        """The instruction of this function that defines ``v`` (None for phis, constants and parameters)."""
        if self._defs is None:
            self._defs = {i.result: i for i in self.fn.instructions() if i.result is not None}
        return self._defs.get(v)

    def vreg(self, v: Value) -> VReg:
        """The virtual register of an SSA value (created on first mention)."""
        r = self.vregs.get(v)
        if r is None:
            r = self.vregs[v] = new_vreg(width_of(v.type))
        return r

    def reg(self, v: Value):
        """``v`` in a register: constants are materialised (0 is RZ, true is PT)."""
        if isinstance(v, Const):
            w = width_of(v.type)
            if w == 0:
                if v.bits:
                    return PT
                r = new_vreg(0)
                self.emit("PLOP3", pd=r, pa=PT, ps=(PT, False), mods={"lut": "0x00"})
                return r
            if w == 1:
                if v.bits == 0:
                    return RZ
                r = new_vreg(1)
                self.emit("MOV", d=r, b=Imm(v.bits & 0xFFFFFFFF))
                return r
            r = new_vreg(2)
            self.emit("MOV", d=Half(r, 0), b=Imm(v.bits & 0xFFFFFFFF))
            self.emit("MOV", d=Half(r, 1), b=Imm(v.bits >> 32))
            return r
        return self.vreg(v)

    def half(self, v: Value, index: int):
        """One 32-bit half of a 64-bit value, as a register or immediate."""
        if isinstance(v, Const):
            return Imm((v.bits >> (32 * index)) & 0xFFFFFFFF)
        return Half(self.vreg(v), index)

    def half_reg(self, v: Value, index: int):
        h = self.half(v, index)
        if isinstance(h, Imm):
            if h.value == 0:
                return RZ
            r = new_vreg(1)
            self.emit("MOV", d=r, b=h)
            return r
        return h

    def src_b(self, v: Value):
        """``v`` for a B slot (RIC/WIC): an immediate when it fits, a constant-bank word, or a register."""
        if isinstance(v, Const):
            if v.type.bits <= 32 and v.type.kind != "pred":
                return Imm(v.bits & 0xFFFFFFFF)
            if v.type.bits == 64 and (v.bits < 1 << 31 or v.bits >= (1 << 64) - (1 << 31)):
                return Imm(v.bits & 0xFFFFFFFF)
        if v in self.cbank:
            return self.cbank[v]
        return self.reg(v)

    def pred_src(self, v: Value, negated: bool = False):
        if isinstance(v, Const) and v.type.kind == "pred":
            if v.bits:
                return (PT, negated)
            return (PT, not negated)
        return (self.reg(v), negated)

    def alias(self, result: Value, source: Value) -> None:
        """``result`` is the same bits as ``source``: share its register."""
        if isinstance(source, Const):
            r = self.reg(source)
            if r == RZ or r == PT:
                self.copy(self.vreg(result), source)
                return
            self.vregs[result] = r
        else:
            self.vregs[result] = self.vreg(source)
            if source in self.cbank:
                self.cbank[result] = self.cbank[source]

    # ----------------------------------------------------------------- copies
    def copy(self, dst: VReg, src: Value | VReg) -> None:
        """dst = src for a register or value of any width."""
        if isinstance(src, Value):
            if isinstance(src, Const):
                w = dst.width
                if w == 0:
                    self.emit("PLOP3", pd=dst, pa=PT, ps=(PT, False), mods={"lut": "0x0f" if src.bits else "0x00"})
                elif w == 1:
                    self.emit("MOV", d=dst, b=Imm(src.bits & 0xFFFFFFFF))
                else:
                    self.emit("MOV", d=Half(dst, 0), b=Imm(src.bits & 0xFFFFFFFF))
                    self.emit("MOV", d=Half(dst, 1), b=Imm(src.bits >> 32))
                return
            src = self.vreg(src)
        if dst.width == 0:
            self.emit("PLOP3", pd=dst, pa=src, ps=(PT, False), mods={"lut": f"{PLUT_A:#04x}"})
        elif dst.width == 1:
            self.emit("MOV", d=dst, b=src)
        else:
            self.emit("MOV", d=Half(dst, 0), b=Half(src, 0))
            self.emit("MOV", d=Half(dst, 1), b=Half(src, 1))

    # ----------------------------------------------------------------- driver
    def select(self) -> SelectedFunction:
        split_critical_edges(self.fn)
        blocks: list[MBlock] = []
        for b in self.fn.blocks:
            self.out = []
            self.block = b
            if b is self.fn.blocks[0]:
                self.prologue()
            for inst in b.instructions:
                self.inst = inst
                if inst.op in TERMINATORS:
                    self._phi_copies(b)
                    self.inst = inst
                ignored = [a for a in UNIMPLEMENTED_FLAGS
                           if inst.attrs.get(a) and not self.implements_flag(inst, a)]
                if ignored:  # never compile a modifier away: refuse what the selector does not look at
                    raise self.error(f"'{inst.op}' with .{', .'.join(ignored)} is not supported by the xg1 "
                                     "backend yet (run it with engine='ir')")
                (self.half_rule(inst) or getattr(self, "op_" + inst.op, self._unsupported))(inst)
            blocks.append(MBlock(b.name, self.out, [s.name for s in b.succs]))
        combine(blocks)
        if self.early_exit:  # -O1 and up: short branches become guarded instructions
            predicate(blocks)
        return SelectedFunction(self.fn.name, blocks, self.shared_offsets, self.shared_bytes, self.local_offsets,
                                self.local_bytes, self.globals)


    def _unsupported(self, inst: Instruction) -> None:
        t = f".{inst.type}" if inst.type else ""
        raise self.error(f"the xg1 backend cannot select '{inst.op}{t}' yet")

    def _phi_copies(self, b: Block) -> None:
        """Parallel copies for the phis of b's (single, after edge splitting) successor with phis."""
        copies = []
        for s in b.succs:
            if not s.phis:
                continue
            k = next(i for i, p in enumerate(s.preds) if p is b)
            copies += [(self.vreg(phi.result), phi.args[k]) for phi in s.phis]
        if not copies:
            return
        # the copies carry the branch's PTX line (self.inst): the line table and hot-spot views put their
        # cost on the branch that leaves the block
        dests = {d for d, _ in copies}
        staged = []
        for d, src in copies:  # a source that is also a destination is read into a temporary first
            if not isinstance(src, Const) and self.vregs.get(src) in dests:
                tmp = new_vreg(d.width)
                self.copy(tmp, src)
                staged.append((d, tmp))
            else:
                staged.append((d, src))
        for d, src in staged:
            if src is not d and not (isinstance(src, Value) and self.vregs.get(src) is d):
                self.copy(d, src)


    # ----------------------------------------------------------------- hooks of the rule groups
    def init_frame(self) -> None:
        """Lay out the function's frame (CallSelection); called last by the constructor."""

    def prologue(self) -> None:
        """Instructions at the function's entry (CallSelection)."""

    def half_rule(self, inst: Instruction):
        """The selection method for ``inst`` when a rule group routes it by more than its op (the half and
        matrix rules), else None: ``op_<irop>`` selects it."""
        return None

    def implements_flag(self, inst: Instruction, flag: str) -> bool:
        """Whether a rule implements modifier ``flag`` (one of UNIMPLEMENTED_FLAGS) of ``inst``."""
        return False

    # ----------------------------------------------------------------- helpers of the rules
    def _commute(self, a: Value, b: Value) -> tuple[Value, Value]:
        return (b, a) if isinstance(a, Const) and not isinstance(b, Const) else (a, b)

    def _narrow(self, inst, d) -> None:
        """Re-establish the zero-extension invariant of a sub-word result."""
        if inst.result.type.bits < 32 and inst.result.type.kind != "pred":
            self.emit("LOP3", d=d, a=d, b=Imm((1 << inst.result.type.bits) - 1), c=RZ,
                      mods={"lut": f"{LUT_AND:#04x}"})

    def _check_int(self, inst) -> int:
        w = width_of(inst.type)
        if w == 0:
            raise self.error(f"'{inst.op}' on predicates is not supported")
        return w


    def _f32(self, t: ScalarType) -> None:
        if t.bits != 32:
            raise self.error(f"{t} arithmetic is not supported by the backend yet")

    def _fbits(self, t: ScalarType) -> int:
        """32 or 64 for f32 / f64 arithmetic; anything else is not selected yet."""
        if t.bits not in (32, 64):
            raise self.error(f"{t} arithmetic is not supported by the backend yet")
        return t.bits

    def _dmods(self, inst) -> dict:
        """The RND modifier of an f64 instruction (PTX has no .ftz or .sat on f64 arithmetic)."""
        if inst.attrs.get("sat") or inst.attrs.get("ftz"):
            raise self.error(f"{inst.op}.{inst.type} with .sat or .ftz is not valid PTX")
        rnd = inst.attrs.get("rnd", "rn")
        return {"rnd": rnd.upper()} if rnd != "rn" else {}

    def _fmods(self, inst, rnd=True) -> dict:
        m = {}
        if rnd and inst.attrs.get("rnd", "rn") != "rn":
            m["rnd"] = inst.attrs["rnd"].upper()
        for f in ("ftz", "sat"):
            if inst.attrs.get(f):
                m[f.upper()] = f.upper()
        return m


    def _sext(self, v: Value, bits: int):
        r = new_vreg(1)
        self.emit("SGXT", d=r, a=self.reg(v), b=Imm(bits))
        return r


    def _imm_reg(self, imm: Imm):
        if imm.value == 0:
            return RZ
        r = new_vreg(1)
        self.emit("MOV", d=r, b=imm)
        return r


    def _int_operand(self, a: Value, st: ScalarType):
        """An integer source in a register of its width; 8/16-bit values extended to 32 bits by kind."""
        if st.bits < 32 and st.kind == "s":
            return self._sext(a, st.bits)
        return self.reg(a)



def split_critical_edges(fn: Function) -> None:
    """Put a block on every edge from a block with several successors to a block with phis."""
    new_blocks = []
    for b in list(fn.blocks):
        term = b.terminator
        if term is None or len(term.targets) < 2:
            continue
        for k, s in enumerate(term.targets):
            if not s.phis or len(s.preds) < 2:
                continue
            mid = Block(f"{b.name}_to_{s.name}")
            mid.append(Instruction("br", None, [], attrs={"targets": [s]}, loc=term.loc))
            mid.preds = [b]
            s.preds[next(i for i, p in enumerate(s.preds) if p is b)] = mid
            term.attrs["targets"] = list(term.targets)
            term.attrs["targets"][k] = mid
            new_blocks.append((b, mid))
    for b, mid in new_blocks:
        fn.blocks.insert(fn.blocks.index(b) + 1, mid)
