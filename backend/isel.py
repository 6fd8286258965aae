"""Instruction selection: IR -> xg1 machine instructions on virtual registers.

Rules, in the spirit of Cranelift's ISLE lowering, one method per IR op:
constants fold into the B operand (immediate) where the slot allows it,
kernel parameters and launch dimensions are read from constant bank 0 (and
used in place as ``c[0x0][off]`` operands where the slot allows), 32x32->64
multiply-adds become ``IMAD.WIDE``, float multiply-add ``FFMA``, address
offsets fold into the memory instruction's immediate.  Out of SSA: phis
become parallel copies at the end of each predecessor (critical edges are
split first), sequentialised through temporaries.

Invariant: 8- and 16-bit values live zero-extended in 32-bit registers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.backend.isa import (
    CBANK_GLOBALS,
    CBANK_NCTAID,
    CBANK_NTID,
    CBANK_PARAMS,
    MAX_GLOBALS,
    PT,
    RZ,
    SR_INDEX,
    WINDOWS,
)
from xcc.backend.isel_calls import CallSelection
from xcc.backend.isel_half import HalfSelection
from xcc.backend.isel_matrix import MatrixSelection
from xcc.backend.minst import CBank, Half, Imm, MInst, VReg, mi, new_vreg
from xcc.diagnostics import UnsupportedError
from xcc.ir.core import Block, Const, Function, Instruction, Value, Variable, layout_variables
from xcc.ir.types import ScalarType, ptx_type

LUT_AND, LUT_OR, LUT_XOR, LUT_NOT_A = 0xC0, 0xFC, 0x3C, 0x0F
PLUT_AND, PLUT_OR, PLUT_XOR, PLUT_NOT_A, PLUT_A = 0x8, 0xE, 0x6, 0x3, 0xC
INT_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
           "lo": "LT", "ls": "LE", "hi": "GT", "hs": "GE"}
FLOAT_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE", "num": "NUM", "nan": "NAN",
             "equ": "EQU", "neu": "NEU", "ltu": "LTU", "leu": "LEU", "gtu": "GTU", "geu": "GEU"}
COMPLEMENT = {"LT": "GEU", "LE": "GTU", "GT": "LEU", "GE": "LTU", "EQ": "NEU", "NE": "EQU", "NUM": "NAN"}
COMPLEMENT.update({v: k for k, v in COMPLEMENT.items()})
MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE", "LTU": "GTU", "GTU": "LTU",
          "LEU": "GEU", "GEU": "LEU", "EQU": "EQU", "NEU": "NEU", "NUM": "NUM", "NAN": "NAN"}
SREG_NAMES = {"tid": "TID", "ctaid": "CTAID", "laneid": "LANEID", "warpid": "WARPID", "nwarpid": "NWARPID",
              "smid": "SMID", "nsmid": "NSMID", "clock": "CLOCKLO", "clock64": "CLOCK64",
              "lanemask_eq": "LANEMASK_EQ", "lanemask_lt": "LANEMASK_LT", "lanemask_le": "LANEMASK_LE",
              "lanemask_gt": "LANEMASK_GT", "lanemask_ge": "LANEMASK_GE", "globaltimer": "GLOBALTIMER"}
MUFU = {"rcp": "RCP", "sqrt": "SQRT", "rsqrt": "RSQ", "ex2": "EX2", "lg2": "LG2", "sin": "SIN", "cos": "COS",
        "tanh": "TANH"}


_WINDOW_LO = min(WINDOWS.values())


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


# IR attributes (PTX modifiers) that no selector rule implements yet: an instruction carrying one is
# refused rather than compiled as if the modifier were absent.
_UNIMPLEMENTED_FLAGS = ("relu", "NaN", "satfinite")


class InstructionSelector(MatrixSelection, HalfSelection, CallSelection):
    """``module_vars``: the module's variables (those the kernel names are laid out with its own);
    shared and local variables are laid out as the IR interpreter lays them out
    (:func:`xcc.ir.core.layout_variables`): module-level locals first, ``.extern .shared`` arrays at
    the aligned end of the static shared variables, where the launch's dynamic shared memory starts."""

    def __init__(self, fn: Function, module_vars: list[Variable] = ()):
        self.fn = fn
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
        self.out.append(m)
        return m

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
        _split_critical_edges(self.fn)
        blocks: list[MBlock] = []
        for b in self.fn.blocks:
            self.out = []
            if b is self.fn.blocks[0]:
                self.prologue()
            for inst in b.instructions:
                self.inst = inst
                if inst.op in ("br", "cbr", "ret", "exit", "trap"):
                    self._phi_copies(b)
                    self.inst = inst
                ignored = [a for a in _UNIMPLEMENTED_FLAGS
                           if inst.attrs.get(a) and not self.implements_flag(inst, a)]
                if ignored:  # never compile a modifier away: refuse what the selector does not look at
                    raise self.error(f"'{inst.op}' with .{', .'.join(ignored)} is not supported by the xg1 "
                                     "backend yet (run it with engine='ir')")
                (self.half_rule(inst) or getattr(self, "op_" + inst.op, self._unsupported))(inst)
            blocks.append(MBlock(b.name, self.out, [s.name for s in b.succs]))
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

    # ----------------------------------------------------------------- terminators
    def op_br(self, inst):
        self.emit("BRA", b=inst.targets[0].name)

    def op_cbr(self, inst):
        t, f = inst.targets
        self.emit("BRA", guard=self.pred_src(inst.args[0]), b=t.name)
        self.emit("BRA", b=f.name)

    def op_ret(self, inst):
        if not self.fn.is_entry:  # a device function returns to its caller (isel_calls)
            self.select_return(inst)
            return
        self.emit("EXIT")

    def op_exit(self, inst):
        self.emit("EXIT")

    # ----------------------------------------------------------------- values from the launch
    def op_ld_param(self, inst):
        off = CBANK_PARAMS + inst.attrs["offset"]
        w = width_of(inst.result.type)
        if inst.type.bits < 32 and inst.type.kind != "pred":
            return self.ld_param_narrow(inst, off)
        if inst.type.bits < 32 or off % (4 * max(w, 1)):
            raise self.error(f"kernel parameter of type {inst.type} at offset {inst.attrs['offset']} "
                             "is not supported yet")
        self.cbank[inst.result] = CBank(0, off)
        self.emit("LDC.64" if w == 2 else "LDC", d=self.vreg(inst.result), b=CBank(0, off))

    def op_sreg(self, inst):
        name, _, comp = inst.attrs["name"].partition(".")
        d = self.vreg(inst.result)
        if name in ("ntid", "nctaid"):
            base = CBANK_NTID if name == "ntid" else CBANK_NCTAID
            cb = CBank(0, base + 4 * "xyz".index(comp))
            self.cbank[inst.result] = cb
            self.emit("LDC", d=d, b=cb)
            return
        sr = SREG_NAMES.get(name)
        if sr is None:
            raise self.error(f"special register %{inst.attrs['name']} is not supported yet")
        sr = f"SR_{sr}" + (f".{comp.upper()}" if comp else "")
        if sr == "SR_CLOCK64":
            self.emit("CS2R.64", d=d, b=SR_INDEX[sr])
        else:
            self.emit("S2R", d=d, b=SR_INDEX[sr])

    def op_addr_of(self, inst):
        """A shared or local variable's address in its space: a constant offset; a .global variable's
        address is read from constant bank 0, where the launch puts it."""
        sym, space = inst.attrs["symbol"], inst.attrs["space"]
        if space == "global" and sym in self.global_slots and width_of(inst.result.type) == 2:
            cb = self.cbank[inst.result] = CBank(0, self.global_slots[sym])  # allocated by the launch
            self.emit("LDC.64", d=self.vreg(inst.result), b=cb)
            return
        if self.frame_address(inst):  # .param variables, device functions' .local ones (isel_calls)
            return
        if space == "const" and sym in self.const_offsets:  # its offset in bank 3; ld.const reads it with LDC
            self.const_addr[inst.result] = self.const_offsets[sym]
        table = {"shared": self.shared_offsets, "local": self.local_offsets,
                 "const": self.const_offsets}.get(space, {})
        if sym not in table:
            raise self.error(f"the address of .{space} variable '{sym}' is not supported by the backend yet")
        d = self.vreg(inst.result)
        if d.width == 2:
            self.emit("MOV", d=Half(d, 0), b=Imm(table[sym]))
            self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            self.emit("MOV", d=d, b=Imm(table[sym]))

    def op_cvta(self, inst):
        """Global addresses are generic; shared and local windows are 4 GiB-aligned
        (:data:`xcc.backend.isa.WINDOWS`), so cvta adds or subtracts the base's high word."""
        space = inst.attrs.get("space")
        if space == "global" or space in WINDOWS and width_of(inst.type) == 1:
            self.alias(inst.result, inst.args[0])  # a 32-bit address: the base's low word is 0
            return
        if space not in ("shared", "local"):
            raise self.error(f"cvta for the .{space} space is not supported by the backend yet")
        hi = WINDOWS[space] >> 32
        if not inst.attrs.get("to_generic", True):
            hi = -hi & 0xFFFFFFFF
        d = self.vreg(inst.result)
        self.emit("MOV", d=Half(d, 0), b=self.half(inst.args[0], 0))
        self.emit("IADD3", d=Half(d, 1), a=self.half_reg(inst.args[0], 1), b=Imm(hi), c=RZ)

    def op_isspacep(self, inst):
        """The high word of the address against the window bases (global: no window)."""
        space = inst.attrs["space"]
        if space != "global" and space not in WINDOWS:
            raise self.error(f"isspacep.{space} is not supported by the backend yet")
        hi = self.half_reg(inst.args[0], 1)
        d = self.vreg(inst.result)
        if space == "global":
            t = new_vreg(1)
            self.emit("IADD3", d=t, a=hi, b=Imm(-(_WINDOW_LO >> 32) & 0xFFFFFFFF), c=RZ)
            self.emit("ISETP", pd=d, a=t, b=Imm(len(WINDOWS)), ps=(PT, False), mods={"cmp": "GE"})
        else:
            self.emit("ISETP", pd=d, a=hi, b=Imm(WINDOWS[space] >> 32), ps=(PT, False), mods={"cmp": "EQ"})

    def op_mov(self, inst):
        src, dst = inst.args[0], inst.result
        sw, dw = width_of(src.type), width_of(dst.type)
        if sw == dw:
            self.alias(dst, src)
        elif sw == 2 and dw == 1:
            self.emit("MOV", d=self.vreg(dst), b=self.half(src, 0))
        elif sw == 1 and dw == 2:
            d = self.vreg(dst)
            self.emit("MOV", d=Half(d, 0), b=self.src_b(src))
            self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            raise self.error(f"bit copy from {src.type} to {dst.type} is not supported")

    # ----------------------------------------------------------------- integer and float arithmetic
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

    def op_add(self, inst, neg: bool = False):
        t = inst.type
        a, b = inst.args if neg else self._commute(*inst.args)
        d = self.vreg(inst.result)
        mods = {"NEG_B": "NEG_B"} if neg else {}
        if t.is_float:
            if self._fbits(t) == 64:
                self.emit("DADD", d=d, a=self.reg(a), b=self.src_b(b), mods={**mods, **self._dmods(inst)})
                return
            self.emit("FADD", d=d, a=self.reg(a), b=self.src_b(b), mods={**mods, **self._fmods(inst)})
        elif inst.attrs.get("sat"):
            raise self.error(f"{inst.op}.sat.{t} is not supported by the backend yet")
        elif self._check_int(inst) == 2:
            self.emit("IADD.64", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)
        else:
            self.emit("IADD3", d=d, a=self.reg(a), b=self.src_b(b), c=RZ, mods=mods)
            self._narrow(inst, d)

    def op_sub(self, inst):
        self.op_add(inst, neg=True)

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

    def op_mul(self, inst):
        self._mul(inst, None)

    def op_mad(self, inst):
        self._mul(inst, inst.args[2])

    def op_fma(self, inst):
        self._mul(inst, inst.args[2])

    def _mul(self, inst, c: Value | None):
        t = inst.type
        a, b = self._commute(inst.args[0], inst.args[1])
        d = self.vreg(inst.result)
        if t.is_float:
            if self._fbits(t) == 64:
                if c is None:
                    self.emit("DMUL", d=d, a=self.reg(a), b=self.src_b(b), mods=self._dmods(inst))
                else:
                    self.emit("DFMA", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=self._dmods(inst))
                return
            if c is None:
                self.emit("FMUL", d=d, a=self.reg(a), b=self.src_b(b), mods=self._fmods(inst))
            else:
                self.emit("FFMA", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=self._fmods(inst))
            return
        mode = inst.attrs.get("mode", "lo")
        if inst.attrs.get("sat"):
            raise self.error(f"{inst.op}.{mode}.sat.{t} is not supported by the backend yet")
        typ = {"type": "S32"} if t.kind == "s" else {}
        if t.bits == 64:
            if mode not in ("lo", "hi"):
                raise self.error(f"mul.{mode}.{t} is not supported yet")
            self.emit("IMAD.64", d=d, a=self.reg(a), b=self.src_b(b), c=self.reg(c) if c is not None else RZ,
                      mods={**({"type": "S64"} if t.kind == "s" else {}),
                            **({"mode": "HI"} if mode == "hi" else {})})
            return
        if t.bits < 32 and t.kind == "s":
            a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
        else:
            a_r, b_v = self.reg(a), self.src_b(b)
        if mode == "wide":
            if t.bits < 32:  # 16x16 -> 32 fits one IMAD
                self.emit("IMAD", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ)
                return
            self.emit("IMAD.WIDE", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ, mods=typ)
            return
        if mode == "hi" and t.bits < 32:
            raise self.error(f"mul.hi.{t} is not supported yet")
        self.emit("IMAD", d=d, a=a_r, b=b_v, c=self.reg(c) if c is not None else RZ,
                  mods={**typ, **({"mode": "HI"} if mode == "hi" else {})})
        self._narrow(inst, d)

    def _sext(self, v: Value, bits: int):
        r = new_vreg(1)
        self.emit("SGXT", d=r, a=self.reg(v), b=Imm(bits))
        return r

    def op_min(self, inst, which="MIN"):
        t = inst.type
        a, b = self._commute(*inst.args)
        d = self.vreg(inst.result)
        if t.is_float:
            if self._fbits(t) == 64:
                self.emit("DMNMX", d=d, a=self.reg(a), b=self.src_b(b), mods={"minmax": which})
                return
            self.emit("FMNMX", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"minmax": which, **({"FTZ": "FTZ"} if inst.attrs.get("ftz") else {})})
        elif self._check_int(inst) == 1 and t.bits == 32:
            self.emit("IMNMX", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"minmax": which, **({"type": "S32"} if t.kind == "s" else {})})
        elif t.bits == 64:  # as ptxas: ISETP + ISETP.EX, then a SEL per half
            take_a = new_vreg(0)
            self.emit("ISETP.64", pd=take_a, a=self.reg(a), b=self.src_b(b), ps=(PT, False),
                      mods={"cmp": "LT" if which == "MIN" else "GT", **({"type": "S64"} if t.kind == "s" else {})})
            for i in (0, 1):
                self.emit("SEL", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), ps=(take_a, False))
        else:
            raise self.error(f"{inst.op}.{t} is not supported yet")

    def op_max(self, inst):
        self.op_min(inst, "MAX")

    def _logic(self, inst, lut: int, plut: int):
        a, b = self._commute(*inst.args)
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:
            self.emit("PLOP3", pd=d, pa=self.pred_src(a)[0] if not isinstance(a, Const) else self._pconst(a),
                      ps=self.pred_src(b), mods={"lut": f"{plut:#04x}"})
        elif w == 1:
            self.emit("LOP3", d=d, a=self.reg(a), b=self.src_b(b), c=RZ, mods={"lut": f"{lut:#04x}"})
        else:
            for i in (0, 1):
                self.emit("LOP3", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), c=RZ,
                          mods={"lut": f"{lut:#04x}"})

    def _pconst(self, v: Const):
        return self.reg(v)

    def op_and(self, inst):
        self._logic(inst, LUT_AND, PLUT_AND)

    def op_or(self, inst):
        self._logic(inst, LUT_OR, PLUT_OR)

    def op_xor(self, inst):
        self._logic(inst, LUT_XOR, PLUT_XOR)

    def op_not(self, inst):
        (a,) = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:
            self.emit("PLOP3", pd=d, pa=self.reg(a), ps=(PT, False), mods={"lut": f"{PLUT_NOT_A:#04x}"})
        elif w == 1:
            self.emit("LOP3", d=d, a=self.reg(a), b=RZ, c=RZ, mods={"lut": f"{LUT_NOT_A:#04x}"})
            self._narrow(inst, d)
        else:
            for i in (0, 1):
                self.emit("LOP3", d=Half(d, i), a=self.half_reg(a, i), b=RZ, c=RZ, mods={"lut": f"{LUT_NOT_A:#04x}"})

    def op_shl(self, inst):
        self._shift(inst, "SHL")

    def op_shr(self, inst):
        self._shift(inst, "SHR")

    def _shift(self, inst, mn: str):
        t = inst.type
        a, b = inst.args
        d = self.vreg(inst.result)
        w = self._check_int(inst)
        mods = {}
        if mn == "SHR" and t.kind == "s":
            mods["type"] = "S64" if w == 2 else "S32"
        if w == 2:
            self.emit(mn + ".64", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)
        else:
            src = self._sext(a, t.bits) if (t.bits < 32 and t.kind == "s") else self.reg(a)
            self.emit(mn, d=d, a=src, b=self.src_b(b), mods=mods)
            self._narrow(inst, d)

    def op_neg(self, inst):
        d = self.vreg(inst.result)
        if inst.type.is_float:
            self._sign_op(inst, d, 0x80000000, LUT_XOR)
        elif self._check_int(inst) == 2:
            self.emit("IADD.64", d=d, a=RZ, b=self.reg(inst.args[0]), mods={"NEG_B": "NEG_B"})
        else:
            self.emit("IADD3", d=d, a=RZ, b=self.src_b(inst.args[0]), c=RZ, mods={"NEG_B": "NEG_B"})
            self._narrow(inst, d)

    def _sign_op(self, inst, d, mask: int, lut: int) -> None:
        """neg/abs of a float: one LOP3 on the word holding the sign (the low word of f64 is copied).
        ``.ftz`` (f32 only) flushes a subnormal input first, as neg.ftz/abs.ftz define."""
        a = inst.args[0]
        if self._fbits(inst.type) == 64:
            self.emit("MOV", d=Half(d, 0), b=self.half(a, 0))
            self.emit("LOP3", d=Half(d, 1), a=self.half_reg(a, 1), b=Imm(mask), c=RZ, mods={"lut": f"{lut:#04x}"})
            return
        src = self.reg(a)
        if inst.attrs.get("ftz"):  # zero or subnormal (FSETP.FTZ sees 0) -> its sign alone; NaNs keep their bits
            tiny, sign, src = new_vreg(0), new_vreg(1), new_vreg(1)
            self.emit("FSETP", pd=tiny, a=self.reg(a), b=RZ, ps=(PT, False), mods={"cmp": "EQ", "FTZ": "FTZ"})
            self.emit("LOP3", d=sign, a=self.reg(a), b=Imm(0x80000000), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            self.emit("SEL", d=src, a=sign, b=self.reg(a), ps=(tiny, False))
        self.emit("LOP3", d=d, a=src, b=Imm(mask), c=RZ, mods={"lut": f"{lut:#04x}"})

    def op_abs(self, inst):
        d = self.vreg(inst.result)
        if inst.type.is_float:
            self._sign_op(inst, d, 0x7FFFFFFF, LUT_AND)
        elif self._check_int(inst) == 1 and inst.type.bits == 32:
            self.emit("IABS", d=d, a=self.reg(inst.args[0]))
        else:
            raise self.error(f"abs.{inst.type} is not supported yet")

    def op_popc(self, inst):
        a, d = inst.args[0], self.vreg(inst.result)
        if width_of(inst.type) == 2:  # POPC of each half, added
            lo, hi = new_vreg(1), new_vreg(1)
            self.emit("POPC", d=lo, a=self.half_reg(a, 0))
            self.emit("POPC", d=hi, a=self.half_reg(a, 1))
            self.emit("IADD3", d=d, a=lo, b=hi, c=RZ)
        else:
            self.emit("POPC", d=d, a=self.reg(a))

    def op_clz(self, inst):
        """clz = msb - bfind (as ptxas: FLO.U32 + IADD3; bfind's ~0 for 0 gives the full width)."""
        bits = 32 * width_of(inst.type)
        pos = self._bfind(inst.args[0], bits, signed=False)
        self.emit("IADD3", d=self.vreg(inst.result), a=pos, b=Imm(bits - 1), c=RZ, mods={"NEG_A": "NEG_A"})

    def op_bfind(self, inst):
        t = inst.type
        shiftamt = bool(inst.attrs.get("shiftamt"))
        if t.bits == 32:
            self.emit("FLO", d=self.vreg(inst.result), a=self.reg(inst.args[0]),
                      mods={**({"type": "S32"} if t.kind == "s" else {}), **({"SH": "SH"} if shiftamt else {})})
            return
        pos = self._bfind(inst.args[0], 64, signed=t.kind == "s")
        if not shiftamt:
            self.vregs[inst.result] = pos
            return
        d, amount, none = self.vreg(inst.result), new_vreg(1), new_vreg(0)
        self.emit("IADD3", d=amount, a=pos, b=Imm(63), c=RZ, mods={"NEG_A": "NEG_A"})
        self.emit("ISETP", pd=none, a=pos, b=Imm(0xFFFFFFFF), ps=(PT, False), mods={"cmp": "EQ"})
        self.emit("SEL", d=d, a=pos, b=amount, ps=(none, False))

    def _bfind(self, v: Value, bits: int, signed: bool) -> VReg:
        """A register holding bfind.{u,s}{bits}(v): the most significant non-sign bit, ~0 if none."""
        pos = new_vreg(1)
        if bits == 32:
            self.emit("FLO", d=pos, a=self.reg(v), mods={"type": "S32"} if signed else {})
            return pos
        lo, hi = self.half_reg(v, 0), self.half_reg(v, 1)
        if signed:  # negative: find the top 0, i.e. the top 1 of ~v
            sign, nlo, nhi = new_vreg(1), new_vreg(1), new_vreg(1)
            self.emit("SHR", d=sign, a=hi, b=Imm(31), mods={"type": "S32"})
            self.emit("LOP3", d=nlo, a=lo, b=sign, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
            self.emit("LOP3", d=nhi, a=hi, b=sign, c=RZ, mods={"lut": f"{LUT_XOR:#04x}"})
            lo, hi = nlo, nhi
        fhi, flo, fhi32, upper = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(0)
        self.emit("FLO", d=fhi, a=hi)
        self.emit("FLO", d=flo, a=lo)
        self.emit("IADD3", d=fhi32, a=fhi, b=Imm(32), c=RZ)
        self.emit("ISETP", pd=upper, a=hi, b=RZ, ps=(PT, False), mods={"cmp": "NE"})
        self.emit("SEL", d=pos, a=fhi32, b=flo, ps=(upper, False))
        return pos

    def op_brev(self, inst):
        a, d = inst.args[0], self.vreg(inst.result)
        if width_of(inst.type) == 2:  # the halves swap
            self.emit("BREV", d=Half(d, 0), a=self.half_reg(a, 1))
            self.emit("BREV", d=Half(d, 1), a=self.half_reg(a, 0))
        else:
            self.emit("BREV", d=d, a=self.reg(a))

    # ----------------------------------------------------------------- bit fields, bytes, dot products
    def _field_control(self, pos: Value, length: Value):
        """The BFE/BFI control operand ``pos | len << 8``: an immediate, or built with one PRMT."""
        if isinstance(pos, Const) and isinstance(length, Const):
            return Imm((pos.bits & 0xFF) | (length.bits & 0xFF) << 8)
        ctl = new_vreg(1)  # byte 0 = pos.b0, byte 1 = len.b0 (selector nibbles 0 and 4)
        self.emit("PRMT", d=ctl, a=self.reg(pos), b=Imm(0x0040), c=self.reg(length))
        return ctl

    def op_bfe(self, inst):
        a, pos, length = inst.args
        w = width_of(inst.type)
        typ = {"type": "S64" if w == 2 else "S32"} if inst.type.kind == "s" else {}
        self.emit("BFE.64" if w == 2 else "BFE", d=self.vreg(inst.result), a=self.reg(a),
                  b=self._field_control(pos, length), mods=typ)

    def op_bfi(self, inst):
        a, base, pos, length = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if (w == 2 and isinstance(pos, Const) and isinstance(length, Const) and pos.bits & 0xFF in (0, 32)
                and length.bits & 0xFF == 32):  # a whole half replaced: register moves
            k = (pos.bits & 0xFF) // 32
            self.emit("MOV", d=Half(d, k), b=self.half(a, 0))
            self.emit("MOV", d=Half(d, 1 - k), b=self.half(base, 1 - k))
            return
        self.emit("BFI.64" if w == 2 else "BFI", d=d, a=self.reg(a), b=self._field_control(pos, length),
                  c=self.reg(base))

    def op_bmsk(self, inst):
        a, b = inst.args
        self.emit("BMSK", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b),
                  mods={"W": "W"} if inst.attrs["mode"] == "wrap" else {})

    def op_prmt(self, inst):
        a, b, c = inst.args
        mode = inst.attrs.get("mode")
        self.emit("PRMT", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(c), c=self.reg(b),
                  mods={"mode": mode.upper()} if mode else {})

    def op_shf(self, inst):
        a, b, c = inst.args
        self.emit("SHF", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(c), c=self.reg(b),
                  mods={"dir": inst.attrs["dir"].upper(), **({"W": "W"} if inst.attrs["mode"] == "wrap" else {})})

    def _dot_types(self, inst, narrow: dict) -> dict:
        return {k: narrow[inst.attrs[k].startswith("s")] for k in ("atype", "btype")}

    def op_dp4a(self, inst):
        a, b, c = inst.args
        mods = self._dot_types(inst, {False: "U8", True: "S8"})
        self.emit("IDP.4A", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=mods)

    def op_dp2a(self, inst):
        a, b, c = inst.args
        mods = {"mode": inst.attrs["mode"].upper(), "atype": "S16" if inst.attrs["atype"] == "s32" else "U16",
                "btype": "S8" if inst.attrs["btype"] == "s32" else "U8"}
        self.emit("IDP.2A", d=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c), mods=mods)

    def _low24(self, v: Value, signed: bool):
        """v[23:0], sign- or zero-extended: an immediate for a constant, else SGXT / LOP3."""
        if isinstance(v, Const):
            x = v.bits & 0xFFFFFF
            return Imm((x - (1 << 24) if signed and x >> 23 else x) & 0xFFFFFFFF)
        r = new_vreg(1)
        if signed:
            self.emit("SGXT", d=r, a=self.reg(v), b=Imm(24))
        else:
            self.emit("LOP3", d=r, a=self.reg(v), b=Imm(0xFFFFFF), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        return r

    def op_mul24(self, inst, c: Value | None = None):
        """As ptxas on sm_70+: SGXT/LOP3 to 24 bits, then IMAD (.lo) or IMAD.WIDE + SHF.R (.hi)."""
        signed, hi = inst.type.kind == "s", inst.attrs["mode"] == "hi"
        if inst.attrs.get("sat"):
            raise self.error("mad24.hi.sat.s32 is not supported by the backend yet")
        a, b = self._commute(*inst.args[:2])
        x, y = self._low24(a, signed), self._low24(b, signed)
        if isinstance(x, Imm):
            x = self._imm_reg(x)
        d = self.vreg(inst.result)
        if not hi:
            self.emit("IMAD", d=d, a=x, b=y, c=self.reg(c) if c is not None else RZ)
            return
        p = new_vreg(2)
        self.emit("IMAD.WIDE", d=p, a=x, b=y, c=RZ, mods={"type": "S32"} if signed else {})
        t = new_vreg(1) if c is not None else d
        self.emit("SHF", d=t, a=Half(p, 0), b=Imm(16), c=Half(p, 1), mods={"dir": "R", "W": "W"})
        if c is not None:
            self.emit("IADD3", d=d, a=t, b=self.src_b(c), c=RZ)

    def op_mad24(self, inst):
        self.op_mul24(inst, inst.args[2])

    def _imm_reg(self, imm: Imm):
        if imm.value == 0:
            return RZ
        r = new_vreg(1)
        self.emit("MOV", d=r, b=imm)
        return r

    def op_copysign(self, inst):
        """d = (a & 0x80000000) | (b & 0x7fffffff): one LOP3 on the word holding the sign."""
        a, b = inst.args
        d = self.vreg(inst.result)
        lut = {"lut": "0xe2"}  # (a & b) | (c & ~b)
        if width_of(inst.type) == 2:
            self.emit("MOV", d=Half(d, 0), b=self.half(b, 0))
            self.emit("LOP3", d=Half(d, 1), a=self.half_reg(a, 1), b=Imm(0x80000000), c=self.half_reg(b, 1),
                      mods=lut)
        else:
            self.emit("LOP3", d=d, a=self.reg(a), b=Imm(0x80000000), c=self.reg(b), mods=lut)

    # ----------------------------------------------------------------- integer division
    def op_div(self, inst):
        self._idiv(inst, "DIV")

    def op_rem(self, inst):
        self._idiv(inst, "REM")

    def _fdiv(self, inst, a, b) -> None:
        """div.{rn,rz,rm,rp,full,approx}[.ftz].f32 -> FDIV; div.{rnd}.f64 -> DDIV."""
        d = self.vreg(inst.result)
        if self._fbits(inst.type) == 64:
            self.emit("DDIV", d=d, a=self.reg(a), b=self.src_b(b), mods=self._dmods(inst))
            return
        prec = "APPROX" if inst.attrs.get("approx") else "FULL" if inst.attrs.get("full") else "RN"
        mods = {**self._fmods(inst), **({"prec": prec} if prec != "RN" else {})}
        if mods.pop("SAT", None):
            raise self.error("div.sat.f32 is not valid PTX")
        self.emit("FDIV", d=d, a=self.reg(a), b=self.src_b(b), mods=mods)

    def _idiv(self, inst, op: str):
        t = inst.type
        if t.is_float:
            if op != "DIV":
                raise self.error(f"rem.{t} is not valid PTX")
            self._fdiv(inst, *inst.args)
            return
        a, b = inst.args
        d = self.vreg(inst.result)
        signed = t.kind == "s"
        if self._check_int(inst) == 2:
            self.emit("IDIV.64", d=d, a=self.reg(a), b=self.src_b(b),
                      mods={"op": op, **({"type": "S64"} if signed else {})})
            return
        if t.bits < 32 and signed:
            a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
        else:
            a_r, b_v = self.reg(a), self.src_b(b)
        self.emit("IDIV", d=d, a=a_r, b=b_v, mods={"op": op, **({"type": "S32"} if signed else {})})
        self._narrow(inst, d)

    def _mufu(self, inst):
        if inst.type.is_float and self._fbits(inst.type) == 64:
            if inst.op == "sqrt":
                self.emit("DSQRT", d=self.vreg(inst.result), a=self.reg(inst.args[0]), mods=self._dmods(inst))
            elif inst.op == "rcp":  # 1 / a, correctly rounded (rcp.approx.ftz.f64 too: the semantics' choice)
                one = Const(ptx_type("f64"), 0x3FF0000000000000)
                rnd = inst.attrs.get("rnd", "rn")
                mods = {"rnd": rnd.upper()} if rnd != "rn" else {}
                self.emit("DDIV", d=self.vreg(inst.result), a=self.reg(one), b=self.reg(inst.args[0]), mods=mods)
            else:
                raise self.error(f"{inst.op}.f64 is not supported by the backend yet")
            return
        self._f32(inst.type)
        if inst.op == "rcp" and inst.attrs.get("rnd", "rn") != "rn":  # directed: 1 / a in that mode
            one = Const(ptx_type("f32"), 0x3F800000)
            self._fdiv(inst, one, inst.args[0])
            return
        exact = inst.op in ("rcp", "sqrt") and not inst.attrs.get("approx")
        mods = {"fn": MUFU[inst.op], **({"prec": "RN"} if exact else {}),
                **({"FTZ": "FTZ"} if inst.attrs.get("ftz") else {})}
        if exact and inst.attrs.get("rnd", "rn") != "rn":
            raise self.error(f"{inst.op}.{inst.attrs['rnd']}.f32 is not supported yet")
        self.emit("MUFU", d=self.vreg(inst.result), a=self.reg(inst.args[0]), mods=mods)

    op_rcp = op_sqrt = op_rsqrt = op_ex2 = op_lg2 = op_sin = op_cos = op_tanh = _mufu

    # ----------------------------------------------------------------- comparison and selection
    def op_setp(self, inst):
        t = inst.type
        a, b = inst.args[0], inst.args[1]
        if t.is_float:
            self._fbits(t)
            cmp = FLOAT_CMP[inst.attrs["cmp"]]
        else:
            cmp = INT_CMP[inst.attrs["cmp"]]
        if inst.attrs.get("negate"):
            cmp = COMPLEMENT[cmp]
            if not t.is_float:
                cmp = cmp.rstrip("U")
        if isinstance(a, Const) and not isinstance(b, Const):
            a, b, cmp = b, a, MIRROR[cmp]
        mods = {"cmp": cmp}
        if "bool" in inst.attrs:
            mods["bool"] = inst.attrs["bool"].upper()
            ps = self.pred_src(inst.args[2])
        else:
            ps = (PT, False)
        d = self.vreg(inst.result)
        if t.is_float and t.bits == 64:
            self.emit("DSETP", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps, mods=mods)
            return
        if t.is_float:
            if inst.attrs.get("ftz"):
                mods["FTZ"] = "FTZ"
            self.emit("FSETP", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps, mods=mods)
            return
        w = self._check_int(inst)
        signed = t.kind == "s" and inst.attrs["cmp"] not in ("lo", "ls", "hi", "hs")
        if w == 2:
            self.emit("ISETP.64", pd=d, a=self.reg(a), b=self.src_b(b), ps=ps,
                      mods={**mods, **({"type": "S64"} if signed else {})})
        else:
            if t.bits < 32 and signed:
                a_r, b_v = self._sext(a, t.bits), self._sext(b, t.bits)
            else:
                a_r, b_v = self.reg(a), self.src_b(b)
            self.emit("ISETP", pd=d, a=a_r, b=b_v, ps=ps, mods={**mods, **({"type": "S32"} if signed else {})})

    def op_selp(self, inst):
        a, b, c = inst.args
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        if w == 0:  # d = (a & c) | (b & !c)
            t1, t2 = new_vreg(0), new_vreg(0)
            self.emit("PLOP3", pd=t1, pa=self.reg(a), ps=self.pred_src(c), mods={"lut": f"{PLUT_AND:#04x}"})
            self.emit("PLOP3", pd=t2, pa=self.reg(b), ps=self.pred_src(c, True), mods={"lut": f"{PLUT_AND:#04x}"})
            self.emit("PLOP3", pd=d, pa=t1, ps=(t2, False), mods={"lut": f"{PLUT_OR:#04x}"})
        elif w == 1:
            ps = self.pred_src(c)
            if isinstance(a, Const) and not isinstance(b, Const):
                a, b, ps = b, a, (ps[0], not ps[1])
            self.emit("SEL", d=d, a=self.reg(a), b=self.src_b(b), ps=ps)
        else:
            ps = self.pred_src(c)
            for i in (0, 1):
                self.emit("SEL", d=Half(d, i), a=self.half_reg(a, i), b=self.half(b, i), ps=ps)

    # ----------------------------------------------------------------- conversions
    def op_cvt(self, inst):
        dt, st = inst.type, ptx_type(inst.attrs["src"])
        a = inst.args[0]
        d = self.vreg(inst.result)
        rnd = inst.attrs.get("rnd")
        ftz = {"FTZ": "FTZ"} if inst.attrs.get("ftz") else {}
        if inst.attrs.get("sat") and not (dt.is_float and st.is_float):
            raise self.error(f"cvt.sat.{dt}.{st} is not supported yet")
        if dt.is_float and dt.bits not in (32, 64) or st.is_float and st.bits not in (32, 64):
            raise self.error(f"cvt.{dt}.{st} is not supported yet")
        if not dt.is_float and not st.is_float:
            self._cvt_int(d, a, dt, st)
        elif dt.is_float and not st.is_float:
            self._cvt_i2f(d, a, dt, st, rnd)
        elif not dt.is_float:
            self._cvt_f2i(d, a, dt, st, (rnd or "rzi").upper(), ftz)
        elif dt.bits == 64 and st.bits == 32:
            src = self.reg(a)
            if ftz:  # cvt.ftz.f64.f32 flushes a subnormal input: a + (-0.0) with FTZ is exact otherwise
                src = new_vreg(1)
                self.emit("FADD", d=src, a=self.reg(a), b=Imm(0x80000000), mods=ftz)
            self.emit("F2F.F64.F32", d=d, a=src)
        elif dt.bits == 32 and st.bits == 64:
            self.emit("F2F.F32.F64", d=d, a=self.reg(a),
                      mods={**({"rnd": rnd.upper()} if rnd and rnd != "rn" else {}), **ftz})
        elif rnd in ("rni", "rzi", "rmi", "rpi") and not inst.attrs.get("sat"):  # round to integral
            if dt.bits == 64:
                self.emit("DRND", d=d, a=self.reg(a), mods={"rnd": rnd.upper()})
            else:
                self.emit("FRND", d=d, a=self.reg(a), mods={"rnd": rnd.upper(), **ftz})
        elif dt == st and not rnd and not (inst.attrs.get("sat") or inst.attrs.get("ftz")):
            self.alias(inst.result, a)
        elif dt == st and dt.bits == 32 and not rnd:  # cvt.sat/.ftz.f32.f32: a + (-0.0) is exact
            self.emit("FADD", d=d, a=self.reg(a), b=Imm(0x80000000), mods=self._fmods(inst, rnd=False))
        else:
            raise self.error(f"cvt.{rnd + '.' if rnd else ''}{dt}.{st} is not supported yet")

    def _int_operand(self, a: Value, st: ScalarType):
        """An integer source in a register of its width; 8/16-bit values extended to 32 bits by kind."""
        if st.bits < 32 and st.kind == "s":
            return self._sext(a, st.bits)
        return self.reg(a)

    def _cvt_i2f(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType, rnd: str | None):
        """I2F (32-bit -> f32), I2F.64 (64-bit -> f32), I2F.F64 (32-bit -> f64, exact), I2F.F64.64."""
        signed = st.kind == "s"
        rmod = {"rnd": rnd.upper()} if rnd and rnd != "rn" else {}
        src = self._int_operand(a, st)
        if st.bits == 64:
            mn = "I2F.F64.64" if dt.bits == 64 else "I2F.64"
            self.emit(mn, d=d, a=src, mods={**({"type": "S64"} if signed else {}), **rmod})
        elif dt.bits == 64:
            self.emit("I2F.F64", d=d, a=src, mods={"type": "U32"} if not signed else {})
        else:
            self.emit("I2F", d=d, a=src, mods={**({"type": "U32"} if not signed else {}), **rmod})

    def _cvt_f2i(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType, rnd: str, ftz: dict):
        """F2I (f32 -> 32-bit), F2I.64 (f32 -> 64-bit), F2I.F64 (f64 -> 32-bit), F2I.F64.64."""
        if dt.bits not in (32, 64):
            raise self.error(f"cvt.{dt}.{st} is not supported yet")
        signed = dt.kind == "s"
        if dt.bits == 64:
            mn = "F2I.F64.64" if st.bits == 64 else "F2I.64"
            self.emit(mn, d=d, a=self.reg(a), mods={**({"type": "S64"} if signed else {}), "rnd": rnd,
                                                     **(ftz if st.bits == 32 else {})})
        elif st.bits == 64:
            self.emit("F2I.F64", d=d, a=self.reg(a), mods={**({"type": "U32"} if not signed else {}), "rnd": rnd})
        else:
            self.emit("F2I", d=d, a=self.reg(a), mods={**({"type": "U32"} if not signed else {}), "rnd": rnd, **ftz})

    def _cvt_int(self, d: VReg, a: Value, dt: ScalarType, st: ScalarType):
        if dt.bits == 64:
            lo = Half(d, 0)
            if st.bits == 64:
                self.copy(d, a)
                return
            src = self.reg(a)
            if st.kind == "s" and st.bits < 32:
                src = self._sext(a, st.bits)
            self.emit("MOV", d=lo, b=src)
            if st.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=src, b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        src = self.half(a, 0) if st.bits == 64 else self.src_b(a)
        if dt.bits == 32 and st.bits == 64:
            self.emit("MOV", d=d, b=src)
        elif dt.bits >= st.bits and st.kind == "s" and st.bits < 32:
            self.emit("SGXT", d=d, a=self.reg(a), b=Imm(st.bits))
            if dt.bits < 32:
                self.emit("LOP3", d=d, a=d, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        elif dt.bits >= st.bits:
            self.emit("MOV", d=d, b=src)
        else:
            r = self.half_reg(a, 0) if st.bits == 64 else self.reg(a)
            if dt.kind == "s":
                self.emit("SGXT", d=d, a=r, b=Imm(dt.bits))
                self.emit("LOP3", d=d, a=d, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
            else:
                self.emit("LOP3", d=d, a=r, b=Imm((1 << dt.bits) - 1), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})

    # ----------------------------------------------------------------- memory
    _SIZE = {(8, "u"): "U8", (8, "b"): "U8", (8, "s"): "S8", (16, "u"): "U16", (16, "b"): "U16", (16, "s"): "S16"}

    def _mem(self, inst) -> tuple[str, object, int, dict]:
        space = inst.attrs["space"]
        prefix = {"global": "G", "generic": "", "shared": "S", "local": "L", "param": "L"}.get(space)
        if prefix is None:
            raise self.error(f"memory accesses to the .{space} space are not supported yet")
        base = inst.args[0]
        off = inst.attrs["offset"]
        if prefix in ("G", ""):
            if width_of(base.type) != 2:
                raise self.error("a global address must be 64 bits")
            a = self.reg(base)
        else:
            if isinstance(base, Const):
                off += base.bits
                a = RZ
            else:
                a = self.half(base, 0) if width_of(base.type) == 2 else self.reg(base)
        t = inst.type
        mods = {}
        if t.bits < 32:
            mods["size"] = self._SIZE[(t.bits, t.kind if t.kind != "f" else "u")]
        if not -(1 << 31) <= off < (1 << 31):
            raise self.error(f"address offset {off} does not fit 32 bits")
        return prefix, a, off, mods

    def op_ld(self, inst):
        if inst.attrs["space"] == "const":
            return self._ld_const(inst)
        prefix, a, off, mods = self._mem(inst)
        d = self.vreg(inst.result)
        w = width_of(inst.type)
        bypass = {"BYPASS": "BYPASS"} if prefix in ("G", "") and inst.attrs.get("cache") else {}
        mods.update(bypass)
        if w == 2:
            self.emit(f"LD{prefix}.64", d=d, a=a, b=off, mods=bypass)
            return
        if width_of(inst.result.type) == 2:  # PTX 6.4: zero-extended (.u/.b) or sign-extended (.s) to the register
            self.emit(f"LD{prefix}", d=Half(d, 0), a=a, b=off, mods=mods)
            if inst.type.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
            return
        self.emit(f"LD{prefix}", d=d, a=a, b=off, mods=mods)
        if inst.result.type.bits < 32 and mods.get("size", "").startswith("S"):
            self._narrow(inst, d)

    def _ld_const(self, inst):
        """ld.const of a .const variable at a constant offset: LDC from constant bank 3 (SASS's c[0x3][..])."""
        base, off = inst.args[0], inst.attrs.get("offset", 0)
        if base not in self.const_addr:
            raise self.error("ld.const through a computed address (dynamic indexing into constant memory) "
                             "is not supported by the backend yet")
        t, at = inst.type, self.const_addr[base] + off
        w = width_of(inst.result.type)
        if t.bits < 32 or at % (4 * max(width_of(t), 1)):
            raise self.error(f"ld.const.{t} at offset {at} is not supported by the backend yet (narrow or "
                             "misaligned)")
        if width_of(t) == 2:
            self.emit("LDC.64", d=self.vreg(inst.result), b=CBank(3, at))
        elif w == 2:
            d = self.vreg(inst.result)
            self.emit("LDC", d=Half(d, 0), b=CBank(3, at))
            if t.kind == "s":
                self.emit("SHR", d=Half(d, 1), a=Half(d, 0), b=Imm(31), mods={"type": "S32"})
            else:
                self.emit("MOV", d=Half(d, 1), b=Imm(0))
        else:
            self.emit("LDC", d=self.vreg(inst.result), b=CBank(3, at))

    def op_st(self, inst):
        prefix, a, off, mods = self._mem(inst)
        v = inst.args[1]
        if width_of(inst.type) == 2:
            self.emit(f"ST{prefix}.64", a=a, b=off, c=self.reg(v))
            return
        self.emit(f"ST{prefix}", a=a, b=off, c=self.reg(v), mods=mods)

    def op_atom(self, inst):
        """atom/red on global or shared memory: ATOMG/ATOMS (32-bit), ATOMG.64/ATOMS.64 (64-bit); a red,
        or an atom whose result is unused, writes RZ."""
        prefix, a, off, _ = self._mem(inst)
        if prefix == "L":
            raise self.error("atomics on the .local space are not defined by PTX")
        t = inst.type
        if t.bits not in (32, 64):
            raise self.error(f"atom.{t} is not supported yet")
        op = inst.attrs["atom_op"].upper()
        wide = t.bits == 64
        typ = {"u": "U", "b": "U", "s": "S", "f": "F"}[t.kind] + str(t.bits)
        c = self.reg(inst.args[1])
        e = self.reg(inst.args[2]) if op == "CAS" else RZ
        d = self.vreg(inst.result) if inst.result is not None else RZ
        self.emit(f"ATOM{prefix}" + (".64" if wide else ""), d=d, a=a, b=off, c=c, e=e, mods={"op": op, "type": typ})

    # ----------------------------------------------------------------- synchronisation and warps
    def op_bar_sync(self, inst):
        if len(inst.args) > 1:  # bar.sync a, b: a named barrier completed by b threads
            self.emit("BAR.CNT", b=self.src_b(inst.args[0]), c=self.reg(inst.args[1]), mods={"mode": "SYNC"})
            return
        self.emit("BAR", b=self.src_b(inst.args[0]))

    def op_bar_arrive(self, inst):
        self.emit("BAR.CNT", b=self.src_b(inst.args[0]), c=self.reg(inst.args[1]), mods={"mode": "ARV"})

    def op_bar_red(self, inst):
        """bar.red.popc.u32 d / bar.red.and|or.pred p: BAR.RED into a register (then ISETP for a predicate)."""
        p, bar, *count = inst.args
        op = inst.attrs["redop"].upper()
        d = self.vreg(inst.result) if op == "POPC" else new_vreg(1)
        self.emit("BAR.RED", d=d, b=self.src_b(bar), c=self.reg(count[0]) if count else RZ, ps=self.pred_src(p),
                  mods={"op": op})
        if op != "POPC":
            self.emit("ISETP", pd=self.vreg(inst.result), a=d, b=Imm(0), ps=(PT, False), mods={"cmp": "NE"})

    def op_fence(self, inst):
        if inst.attrs.get("scope") == "proxy":  # fence.proxy.async: orders generic against async-proxy accesses
            self.emit("FENCE.VIEW.ASYNC")
            return
        scope = {"cta": "CTA", "sys": "SYS"}.get(inst.attrs.get("scope", "gl"), "GPU")
        self.emit("MEMBAR", mods={"scope": scope} if scope != "CTA" else {})

    def op_shfl(self, inst):
        a, b, c, mask = inst.args
        mode = inst.attrs["mode"].upper()
        if inst.attrs.get("valid"):
            self.emit("SHFL", d=RZ, pd=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c),
                      e=self.reg(mask), mods={"mode": mode})
        else:
            self.emit("SHFL", d=self.vreg(inst.result), pd=PT, a=self.reg(a), b=self.src_b(b), c=self.reg(c),
                      e=self.reg(mask), mods={"mode": mode})

    def op_vote(self, inst):
        p, mask = inst.args
        mode = inst.attrs["mode"]
        d = self.vreg(inst.result)
        if mode == "ballot":
            self.emit("VOTE", d=d, pd=PT, ps=self.pred_src(p), e=self.reg(mask))
        else:
            self.emit("VOTE", d=RZ, pd=d, ps=self.pred_src(p), e=self.reg(mask),
                      mods={"mode": {"all": "ALL", "any": "ANY", "uni": "EQ"}[mode]})

    def op_match(self, inst):
        """match.{any,all}.sync: MATCH (b32) or MATCH.64 (b64); match.all's predicate is pd."""
        a, mask = inst.args
        mn = "MATCH.64" if width_of(inst.type) == 2 else "MATCH"
        mods = {"mode": inst.attrs["mode"].upper()}
        if inst.attrs.get("pred"):
            self.emit(mn, d=RZ, pd=self.vreg(inst.result), a=self.reg(a), e=self.reg(mask), mods=mods)
        else:
            self.emit(mn, d=self.vreg(inst.result), pd=PT, a=self.reg(a), e=self.reg(mask), mods=mods)

    def op_redux(self, inst):
        a, mask = inst.args
        op = {"add": "SUM"}.get(inst.attrs["redop"], inst.attrs["redop"].upper())
        self.emit("REDUX", d=self.vreg(inst.result), a=self.reg(a), e=self.reg(mask),
                  mods={"op": op, **({"type": "S32"} if inst.type.kind == "s" else {})})

    def op_activemask(self, inst):
        ones = new_vreg(1)
        self.emit("MOV", d=ones, b=Imm(0xFFFFFFFF))
        self.emit("VOTE", d=self.vreg(inst.result), pd=PT, ps=(PT, False), e=ones)


def _split_critical_edges(fn: Function) -> None:
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
