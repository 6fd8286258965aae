"""The typed PTX syntax tree produced by :mod:`xcc.frontend.parser`.

The tree mirrors the PTX text closely; meaning (types of registers, SSA,
resolution of names) is given by the IR builder in :mod:`xcc.ir.build`.
Every node that a diagnostic may point at carries a :class:`SourceLoc`. Locations (and
Module.filename) are excluded from ``==``, so two trees compare equal when their content is
equal: :func:`xcc.frontend.printer.print_module` output re-parses to an equal tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.diagnostics import SourceLoc

# --------------------------------------------------------------------------- operands


@dataclass(frozen=True)
class Reg:
    """A register operand: ``%r1``, ``%rd4``, ``%p2`` (name includes the ``%``)."""

    name: str
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SpecialReg:
    """A special register: ``%tid.x`` -> name='tid', component='x'; ``%laneid`` -> component=None."""

    name: str
    component: str | None = None
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Imm:
    """An immediate. ``kind`` is 'int' (value: int) or 'float' (value: the raw bit pattern as int,
    ``bits`` 32 for ``0fXXXXXXXX`` and 64 for ``0dXXXXXXXXXXXXXXXX``; decimal float literals are
    stored as their f64 bit pattern with bits=64)."""

    value: int
    kind: str = "int"
    bits: int = 0
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Symbol:
    """A name that is not a register: a variable, parameter, function or label."""

    name: str
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SymbolOffset:
    """A variable's address plus a byte offset as a plain (unbracketed) operand: ``gbuf+16``, ``cbuf+-8`` (``mov``,
    ``cvta``, ``isspacep``; what ptxas 13.0 computes: :meth:`xcc.ir.lower.InstLowering.symbol_offset`)."""

    name: str
    offset: int
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InitField:
    """A field of an opaque variable's initialiser: ``addr_mode_0 = clamp_to_edge`` (``.samplerref``); the value
    a name or an integer."""

    name: str
    value: str | int
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Address:
    """A memory operand ``[base+offset]``; base is a Reg, Symbol or None (absolute ``[imm]``).
    In a variable initialiser it is an address constant: ``sym+offset`` (an offset in sym's state
    space) or, with ``generic`` set, ``generic(sym)+offset`` (a generic address); ``mask`` is set
    for the byte-extraction form ``0xFF00(sym+offset)`` (the address bits selected by the mask,
    shifted down to bit 0). ``elements`` holds the further operands of a bracketed list, as in
    tensor, texture and surface instructions: ``[%rd3, {%r6, %r7}]`` -> base=Reg('%rd3'),
    elements=(Vector(...),)."""

    base: Reg | Symbol | None
    offset: int = 0
    loc: SourceLoc | None = field(default=None, compare=False)
    mask: int | None = None
    generic: bool = False
    elements: tuple[Operand, ...] = ()
    unified: bool = False  # `[a].unified` (ld, ldu, atom: PTX ISA 9.7.9.8)


@dataclass(frozen=True)
class Vector:
    """A vector operand ``{%f1, %f2, _, %f4}``."""

    elements: tuple[Operand, ...]
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Sink:
    """The bit bucket ``_``."""

    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Negated:
    """A negated predicate source operand ``!%p1`` (as in ``selp`` or ``setp ... , !%p``), or with ``minus``
    an arithmetically negated register ``-%r1`` (``vmad``'s operand negation, PTX ISA 9.0 section 9.7.10.2)."""

    operand: Reg
    loc: SourceLoc | None = field(default=None, compare=False)
    minus: bool = False


Operand = Reg | SpecialReg | Imm | Symbol | SymbolOffset | Address | Vector | Sink | Negated

# --------------------------------------------------------------------------- statements


@dataclass
class Guard:
    """``@%p`` or ``@!%p``."""

    reg: Reg
    negated: bool = False


@dataclass
class Instruction:
    """One PTX instruction. ``opcode`` is the base name ('ld', 'add', 'setp'); ``modifiers`` the
    dotted suffixes in order without dots: ``ld.global.nc.v4.f32`` -> ('global', 'nc', 'v4', 'f32').
    ``loc`` is the opcode's place; ``debug_loc`` the source position of the last ``.loc`` directive
    before it, if any: (file index, line, column). The ``function_name``/``inlined_at`` extras of
    a ``.loc`` are dropped."""

    opcode: str
    modifiers: tuple[str, ...]
    operands: list[Operand]
    guard: Guard | None = None
    loc: SourceLoc | None = field(default=None, compare=False)
    debug_loc: tuple[int, int, int] | None = None


@dataclass
class Label:
    """A label. ``prototype`` is set for a call prototype ``name: .callprototype (...) _ (...);``
    (a body-less :class:`Function` named '_'), the last operand of an indirect ``call``.
    ``targets`` is set for a jump table ``name: .branchtargets A, B;`` (the labels that
    ``brx.idx %r, name;`` chooses from)."""

    name: str
    loc: SourceLoc | None = field(default=None, compare=False)
    prototype: Function | None = None
    targets: list[str] | None = None


@dataclass
class RegDecl:
    """``.reg .b32 %r<10>;`` -> type='b32', names=['%r'], count=10 (declares %r0..%r9).
    ``.reg .pred %p, %q;`` -> names=['%p', '%q'], count=None. ``vector`` is 2/4 for ``.v2/.v4``."""

    type: str
    names: list[str]
    count: int | None = None
    vector: int | None = None
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass
class VarDecl:
    """A variable in a state space: ``.shared .align 4 .b8 smem[1024];``, ``.global .u32 g = 5;``.
    ``dims`` lists array dimensions (None for ``[]`` of an extern array); ``init`` the flattened
    initialiser (ints, float bit patterns as Imm, Symbol or Address for addresses; an inner
    ``{...}`` shorter than its dimension is padded with zeros). ``attributes`` holds the
    ``.attribute(...)`` list without dots: ``.attribute(.managed)`` -> ['managed']."""

    space: str
    type: str
    name: str
    align: int | None = None
    dims: list[int | None] = field(default_factory=list)
    init: list[Operand] | None = None
    linkage: str | None = None
    vector: int | None = None
    loc: SourceLoc | None = field(default=None, compare=False)
    attributes: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A nested ``{ ... }`` scope: its declarations shadow outer names, its labels are local."""

    body: list[Statement]
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass
class Pragma:
    """``.pragma "nounroll";`` -> text='nounroll' (several strings are joined by a space)."""

    text: str
    loc: SourceLoc | None = field(default=None, compare=False)


Statement = Instruction | Label | RegDecl | VarDecl | Block | Pragma

# --------------------------------------------------------------------------- functions and modules


@dataclass
class Param:
    """A kernel/function parameter: ``.param .u64 .ptr .global .align 8 p``; byte arrays have
    ``dims`` ([368] for ``.b8 p[368]``). ``align`` is the parameter's own alignment (``.param
    .align 8 .b8 p[368]``); ``ptr_align`` the alignment of the memory a ``.ptr`` parameter points
    to (the ``.align`` after ``.ptr``, PTX ISA 9.0 section 5.1.6.1), which does not move the
    parameter."""

    name: str
    type: str
    space: str = "param"
    align: int | None = None
    dims: list[int] = field(default_factory=list)
    ptr_space: str | None = None
    loc: SourceLoc | None = field(default=None, compare=False)
    ptr_align: int | None = None


@dataclass
class Function:
    """An ``.entry`` (kernel) or ``.func``. ``directives`` holds performance directives by name
    (``{'maxntid': [256, 1, 1], 'reqntid': [...], 'minnctapersm': [2]}``). ``body`` is None for a
    declaration (prototype without body)."""

    name: str
    is_entry: bool
    params: list[Param]
    return_params: list[Param] = field(default_factory=list)
    body: list[Statement] | None = None
    linkage: str | None = None
    directives: dict[str, list[int]] = field(default_factory=dict)
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass
class Alias:
    """``.alias name, target;``: the function ``name`` is another name for ``target``."""

    name: str
    target: str
    loc: SourceLoc | None = field(default=None, compare=False)


@dataclass
class Module:
    """A whole PTX file. ``files`` maps ``.file`` indices to file names (for ``.loc``; the
    optional timestamp and size are dropped). ``pragmas`` are the module-level ``.pragma``
    directives, ``aliases`` the ``.alias`` directives, and ``sections`` the raw text of each
    ``.section name { ... }`` debug block (DWARF from ``nvcc -G``), kept verbatim."""

    version: str
    target: list[str]
    address_size: int
    functions: list[Function]
    variables: list[VarDecl]
    files: dict[int, str] = field(default_factory=dict)
    filename: str = field(default="<ptx>", compare=False)
    pragmas: list[Pragma] = field(default_factory=list)
    aliases: list[Alias] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
