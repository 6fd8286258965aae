"""The xcc SSA IR: values, instructions, blocks (with phi nodes), functions and modules.

Every value is defined once: by an instruction (its ``result``), by a phi at
the head of a block, or as a constant.  Operations are named by strings whose
meaning is given by :mod:`xcc.ir.ops` (the table) and :mod:`xcc.semantics`.
Each instruction remembers the PTX line it came from (``loc``) and the
``.loc`` source position when there is one (``debug_loc``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from xcc.diagnostics import SourceLoc
from xcc.ir.types import ScalarType


class Value:
    """An SSA value: the result of an instruction or phi, or a constant."""

    __slots__ = ("type", "name", "id")
    _ids = itertools.count()

    def __init__(self, type: ScalarType, name: str = ""):
        self.type = type
        self.name = name
        self.id = next(Value._ids)

    def __repr__(self) -> str:
        return f"%{self.name or self.id}:{self.type}"


class Const(Value):
    """A constant, held as its bit pattern (``bits``) of ``type``'s width."""

    __slots__ = ("bits",)

    def __init__(self, type: ScalarType, bits: int):
        super().__init__(type)
        mask = (1 << type.bits) - 1 if type.bits > 1 else 1
        self.bits = int(bits) & mask

    def __repr__(self) -> str:
        return f"{self.type} {self.bits:#x}"

    def same(self, other: Value) -> bool:
        return isinstance(other, Const) and other.type == self.type and other.bits == self.bits


@dataclass(eq=False)
class Instruction:
    """``result = op.type(args) {attrs}``; ``result`` is None for ops without one.

    ``attrs`` holds what is not a value: comparison, rounding, state space,
    address offset, special-register name, branch targets (:class:`Block`)."""

    op: str
    type: ScalarType | None
    args: list[Value]
    result: Value | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    loc: SourceLoc | None = None
    debug_loc: tuple[int, int, int] | None = None
    block: Block | None = field(default=None, repr=False)

    @property
    def targets(self) -> list[Block]:
        return self.attrs.get("targets", [])


@dataclass(eq=False)
class Phi:
    """``result = phi [v0 from preds[0], v1 from preds[1], ...]`` in the order of ``block.preds``."""

    result: Value
    args: list[Value] = field(default_factory=list)
    block: Block | None = field(default=None, repr=False)
    op: str = "phi"


@dataclass(eq=False)
class Block:
    name: str
    phis: list[Phi] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    preds: list[Block] = field(default_factory=list, repr=False)

    @property
    def terminator(self) -> Instruction | None:
        if self.instructions and self.instructions[-1].op in TERMINATORS:
            return self.instructions[-1]
        return None

    @property
    def succs(self) -> list[Block]:
        term = self.terminator
        return list(term.targets) if term is not None else []

    def append(self, inst: Instruction) -> Instruction:
        inst.block = self
        self.instructions.append(inst)
        return inst

    def __repr__(self) -> str:
        return f"<block {self.name}>"


TERMINATORS = frozenset({"br", "cbr", "ret", "exit", "trap"})


@dataclass(frozen=True)
class Param:
    """A kernel parameter: name, PTX type, byte offset and size in the parameter buffer."""

    name: str
    type: str
    offset: int
    size: int
    align: int


@dataclass(frozen=True)
class Variable:
    """A module- or function-level variable in a state space (shared, global, const, local)."""

    name: str
    space: str
    size: int
    align: int
    init: bytes | None = None
    extern: bool = False
    linkage: str | None = None  # 'visible', 'extern', 'weak', 'common' or None (internal to the module)
    # function addresses in the initialiser: (byte offset, function name), 8 bytes each, patched in by
    # xcc.ir.funcptr once the linked module's functions have addresses (init holds zeros there until then)
    relocs: tuple[tuple[int, str], ...] = ()
    # variable addresses in the initialiser (``.global .u64 p = generic(lut)+8;``, ``{lut, lut+4}``):
    # (byte offset, width in bytes, .global variable, addend, mask or 0), written by the loader when it
    # allocates the variable (xcc.sim.memory.ModuleGlobals; init holds zeros there)
    addr_relocs: tuple[tuple[int, int, str, int, int], ...] = ()


@dataclass(eq=False)
class Function:
    """A kernel (``is_entry``) or a device function (``.func``).

    A kernel's ``params`` are its launch parameter buffer.  A device function's ``params`` and
    ``ret_params`` are the start of its ``.param`` frame (ins at their offsets, then the return
    parameters); its ``ld.param``/``st.param`` are ``ld``/``st`` in the ``param`` space, and a
    ``call`` copies the caller's argument variables into the callee's frame and the callee's
    return parameters back (PTX ISA 9.0 section 5.1.6.4)."""

    name: str
    is_entry: bool
    params: list[Param]
    blocks: list[Block] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    directives: dict[str, list[int]] = field(default_factory=dict)
    loc: SourceLoc | None = None
    ret_params: list[Param] = field(default_factory=list)
    linkage: str | None = None

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    @property
    def param_bytes(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)

    def instructions(self):
        for b in self.blocks:
            yield from b.instructions


@dataclass(eq=False)
class Module:
    functions: list[Function]
    variables: list[Variable] = field(default_factory=list)
    source_files: dict[int, str] = field(default_factory=dict)
    filename: str = "<ptx>"
    # functions declared without a body (``.extern .func f``), by name: resolved by linking
    declarations: dict[str, SourceLoc | None] = field(default_factory=dict)

    def function(self, name: str) -> Function:
        """The function (kernel or device function) ``name``; KeyError if none."""
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


def layout_variables(variables: list[Variable], dynamic: int = 0) -> tuple[dict[str, int], int]:
    """Offsets of ``variables`` packed in order with their alignment; ``.extern`` (dynamic) arrays all
    start at the aligned end of the others.  Returns (offsets, total size including ``dynamic``).
    The one layout of a state space's variables, used by the IR interpreter and instruction selection."""
    offsets, off = {}, 0
    for v in variables:
        if not v.extern:
            off = (off + v.align - 1) // v.align * v.align
            offsets[v.name] = off
            off += v.size
    ext = [v for v in variables if v.extern]
    if ext:
        align = max(v.align for v in ext)
        off = (off + align - 1) // align * align
        for v in ext:
            offsets[v.name] = off
    return offsets, off + dynamic
