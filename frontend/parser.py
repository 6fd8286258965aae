"""PTX text -> :class:`xcc.frontend.ast.Module`.

The Lark LALR parser (grammar in ``ptx.lark``) is loaded once per process, lazily, from the
generated module ``ptx_standalone.py`` (Lark's runtime and the precomputed LALR tables, made by
``gen_parser.py``; ``make parser`` after editing the grammar), with the transformer below embedded,
so no parse tree is materialised and the ``lark`` package is not imported. After parsing,
:func:`_finish_body` gives each instruction its ``.loc`` debug position, turns plain
identifiers declared by ``.reg`` into :class:`~ast.Reg`, and collects ``.file`` entries;
then :func:`xcc.frontend.checker.check` runs the semantic checks.

Conventions of the tree: types, spaces and linkages are stored without the dot ('b32',
'shared', 'visible'); ``a|b`` destinations and the ``( ... )`` lists of ``call`` are
:class:`~ast.Vector` operands, so ``call.uni (r), f, (a, b);`` has the operands
``[Vector(r), Symbol(f), Vector(a, b)]``; bracket lists such as ``[tmap, {x, y}]`` are an
:class:`~ast.Address` with ``elements``; a ``.callprototype`` is a :class:`~ast.Label` with
``prototype`` set, a ``.branchtargets`` jump table one with ``targets`` set. Parenthesised
integer expressions in operands (``(4*8)``) are folded to an :class:`~ast.Imm`. A function declared and later defined appears twice in Module.functions
(``body`` None, then the definition), in text order.
"""

from __future__ import annotations

import dataclasses
import re
import struct
import threading

from xcc.diagnostics import PtxSyntaxError, SourceLoc, XccError, raise_errors
from xcc.frontend import ast
from xcc.frontend.checker import RegScope, check
from xcc.frontend.ptx_standalone import (
    Lark,
    Lark_StandAlone,
    PatternStr,
    Token,
    Transformer,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

SPECIAL_REGS = frozenset(
    """tid ntid laneid warpid nwarpid ctaid nctaid smid nsmid gridid is_explicit_cluster clusterid
    nclusterid cluster_ctaid cluster_nctaid cluster_ctarank cluster_nctarank lanemask_eq lanemask_le
    lanemask_lt lanemask_ge lanemask_gt clock clock_hi clock64 globaltimer globaltimer_lo
    globaltimer_hi total_smem_size aggr_smem_size dynamic_smem_size current_graph_exec
    reserved_smem_offset_begin reserved_smem_offset_end reserved_smem_offset_cap
    reserved_smem_offset_0 reserved_smem_offset_1""".split()
    + [f"pm{i}" for i in range(8)]
    + [f"pm{i}_64" for i in range(8)]
    + [f"envreg{i}" for i in range(32)]
)


# PTX's predefined constant WARP_SZ (ISA 9.0, 5.4.1 "predefined identifiers"): the warp size, which is 32
# on every NVIDIA target and on xg1 (backend/machines/xg1.toml, warp_size); an immediate wherever it appears.
PREDEFINED_CONSTANTS = {"WARP_SZ": 32}

MAX_SYNTAX_ERRORS = 20


def parse(text: str, filename: str = "<ptx>") -> ast.Module:
    """Parse and check one PTX module; raise PtxSyntaxError / PtxSemanticError / UnsupportedError.

    After a syntax error the parser recovers at statement level: it blanks the statement that
    holds the error (keeping every other character in place, so later positions stay exact) and
    parses again, so that one run reports every independent syntax error (up to
    :data:`MAX_SYNTAX_ERRORS`), as ``err.errors``. The semantic checks run only on a module
    that parsed cleanly."""
    errors: list[XccError] = []
    masked = text
    with _LOCK:
        lark = _get_parser()
        while True:
            _BUILDER.begin(filename, text)
            try:
                module = lark.parse(masked)
                break
            except UnexpectedInput as err:
                errors.append(_syntax_error(err, masked, _BUILDER))
                masked = _blank_statement(masked, _error_offset(err, masked))
                if masked is None or len(errors) >= MAX_SYNTAX_ERRORS:
                    break
            finally:
                _BUILDER.lines = []
    raise_errors(errors)
    check(module, text)
    return module


def _error_offset(err: UnexpectedInput, text: str) -> int | None:
    """Offset in ``text`` of the token or character a syntax error is at (None at end of file)."""
    if isinstance(err, UnexpectedCharacters):
        return err.pos_in_stream
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        return err.token.start_pos
    return None


def _blank_statement(text: str, offset: int | None) -> str | None:
    """``text`` with the statement around ``offset`` (from after the previous ';', '{' or '}' to
    the next ';' inclusive, or up to the next brace) replaced by spaces; None if nothing to blank."""
    if offset is None:
        return None
    start = max(text.rfind(c, 0, offset) for c in ";{}") + 1
    ends = [i for i in (text.find(";", offset), text.find("{", offset), text.find("}", offset)) if i >= 0]
    end = min(ends) if ends else len(text)
    if end < len(text) and text[end] == ";":
        end += 1
    elif end == offset:  # the error is the brace itself: blank that
        end += 1
    if start >= end or not text[start:end].strip():
        return None
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


_LOCK = threading.RLock()
_LARK: Lark | None = None


def _get_parser() -> Lark:
    """The LALR parser, loaded on first use from the committed tables (about 10 ms; building them from
    the grammar took about 250 ms, see gen_parser.py). Positions come from the tokens themselves, so
    Lark's position propagation (15% of the parse time) is off (gen_parser.LARK_OPTIONS)."""
    global _LARK
    if _LARK is None:
        _LARK = Lark_StandAlone(transformer=_BUILDER)
    return _LARK


# --------------------------------------------------------------------------- literals


def _int(text: str) -> int:
    text = text.rstrip("U")
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if text[:2] in ("0b", "0B"):
        return int(text[2:], 2)
    if len(text) > 1 and text[0] == "0":
        return int(text[1:], 8)
    return int(text)


def _float(text: str) -> tuple[int, int]:
    """(bit pattern, width) of a float literal; decimal literals are f64."""
    if text[:2] in ("0f", "0F"):
        return int(text[2:], 16), 32
    if text[:2] in ("0d", "0D"):
        return int(text[2:], 16), 64
    return struct.unpack("<Q", struct.pack("<d", float(text)))[0], 64


class _DebugLoc:
    """A ``.loc`` marker, removed from the body by :func:`_finish_body`."""

    __slots__ = ("pos",)

    def __init__(self, pos: tuple[int, int, int]):
        self.pos = pos


class _Paren(ast.Imm):
    """A parenthesised operand expression ``(e)``: an Imm, or a one-element argument list of
    ``call``; :func:`_unparen` decides which once the opcode is known."""


def _unparen(op, as_list: bool = False):
    if isinstance(op, _Paren):
        imm = ast.Imm(op.value, op.kind, op.bits, op.loc)
        return ast.Vector((imm,), op.loc) if as_list else imm
    return op


class _FileDir:
    """A ``.file`` marker, collected into Module.files."""

    __slots__ = ("index", "name")

    def __init__(self, index: int, name: str):
        self.index, self.name = index, name


def _flatten(items) -> list:
    out = []
    for it in items:
        if isinstance(it, list):
            out.extend(it)
        elif it is not None and not isinstance(it, Token):
            out.append(it)
    return out


# --------------------------------------------------------------------------- tree -> AST


class _Builder(Transformer):
    """Callbacks of the LALR parser, one per grammar rule (same names)."""

    def __init__(self):
        super().__init__(visit_tokens=False)
        self.filename = "<ptx>"
        self.lines: list[str] = []

    def begin(self, filename: str, text: str) -> None:
        self.filename = filename
        self.lines = text.split("\n")
        if "\r" in text:
            self.lines = [line.rstrip("\r") for line in self.lines]

    def _loc(self, tok: Token) -> SourceLoc:
        line = tok.line
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return SourceLoc(self.filename, line, tok.column, src)

    # ---- module level

    def start(self, items):
        version, target, address_size = "", [], 32
        functions, variables, files, pragmas, aliases, sections = [], [], {}, [], [], []
        for it in items:
            if isinstance(it, Token):
                sections.append(it.value)
            elif isinstance(it, ast.Pragma):
                pragmas.append(it)
            elif isinstance(it, ast.Alias):
                aliases.append(it)
            elif isinstance(it, tuple):
                if it[0] == "version":
                    version = it[1]
                elif it[0] == "target":
                    target.extend(it[1])
                else:
                    address_size = it[1]
            elif isinstance(it, _FileDir):
                files[it.index] = it.name
            elif isinstance(it, ast.Function):
                functions.append(it)
            elif isinstance(it, list):
                variables.extend(it)
        for fn in functions:
            if fn.body is not None:
                scope = RegScope()
                for p in fn.params + fn.return_params:
                    if p.space == "reg":
                        scope.names[p.name] = None
                fn.body = _finish_body(fn.body, scope, files, [None])
        return ast.Module(version, target, address_size, functions, variables, files, self.filename,
                          pragmas, aliases, sections)

    def version(self, c):
        return ("version", c[0].value)

    def target(self, c):
        return ("target", [t.value for t in c])

    def address_size(self, c):
        return ("address_size", _int(c[0].value))

    def file_dir(self, c):
        strings = [t.value[1:-1] for t in c if t.type == "STRING"]
        return _FileDir(_int(c[0].value), "/".join(strings))

    def alias(self, c):
        return ast.Alias(c[0].value, c[1].value, self._loc(c[0]))

    def pragma(self, c):
        return ast.Pragma(" ".join(t.value[1:-1] for t in c), self._loc(c[0]))

    def top_decl(self, c):
        linkage = c[0].value[1:] if isinstance(c[0], Token) else None
        decl = c[-1]
        for d in decl if isinstance(decl, list) else [decl]:
            d.linkage = linkage
        return decl

    # ---- functions

    def function(self, c):
        kind, name = c[0], None
        fn = ast.Function("", kind.value == ".entry", [], loc=None)
        pragmas = []
        for it in c[1:]:
            if isinstance(it, Token):
                name = it
            elif isinstance(it, ast.Pragma):
                pragmas.append(it)
            elif it[0] == "ret":
                fn.return_params = it[1]
            elif it[0] == "params":
                fn.params = it[1]
            elif it[0] == "dir":
                fn.directives[it[1]] = it[2]
            elif it[0] == "body":
                fn.body = pragmas + it[1]
        fn.name, fn.loc = name.value, self._loc(name)
        return fn

    def ret_params(self, c):
        return ("ret", c)

    def params(self, c):
        return ("params", c)

    def param(self, c, space=None):
        p = ast.Param("", "", space or c[0].value[1:])
        ptr = False
        for it in c if space else c[1:]:
            if isinstance(it, Token):
                if it.type == "TYPE":
                    p.type = it.value[1:]
                elif it.type == "SPACE":
                    p.ptr_space = it.value[1:]
                elif it.type in ("IDENT", "SINK"):
                    p.name, p.loc = it.value, self._loc(it)
            elif it[0] == "align":  # after .ptr: the alignment of what the pointer points to
                if ptr:
                    p.ptr_align = it[1]
                else:
                    p.align = it[1]
            elif it[0] == "ptr":
                ptr = True
            elif it[0] == "dims":
                p.dims = it[1]
        if ptr and p.ptr_space is None:
            p.ptr_space = "generic"
        if not p.type:
            raise PtxSyntaxError(f"parameter '{p.name}' needs a type such as .u64", p.loc)
        return p

    def reg_param(self, c):
        return self.param(c, space="reg")

    def perf_dir(self, c):
        return ("dir", c[0].value[1:], [_int(t.value) for t in c[1:]])

    def align(self, c):
        return ("align", _int(c[0].value))

    def ptr(self, c):
        return ("ptr",)

    def dims(self, c):
        return ("dims", c)

    def dim(self, c):
        return _int(c[0].value) if c else None

    def body(self, c):
        return ("body", _flatten(c[1:]))

    # ---- statements

    def block(self, c):
        return ast.Block(_flatten(c[1:]), self._loc(c[0]))

    def label(self, c):
        return ast.Label(c[0].value.rstrip(":").rstrip(), self._loc(c[0]))

    def proto(self, c):
        proto = ast.Function("_", False, [], body=None, loc=self._loc(c[0]))
        for it in c[1:]:
            if isinstance(it, tuple) and it[0] in ("ret", "params"):
                setattr(proto, "return_params" if it[0] == "ret" else "params", it[1])
            elif isinstance(it, tuple) and it[0] == "dir":
                proto.directives[it[1]] = it[2]
        return ast.Label(c[0].value.rstrip(":").rstrip(), self._loc(c[0]), prototype=proto)

    def branch_targets(self, c):
        name = c[0].value.rstrip(":").rstrip()
        return ast.Label(name, self._loc(c[0]), targets=[t.value for t in c[1:]])

    def reg_decl(self, c):
        type_, vector, plain, out = "", None, [], []
        for it in c:
            if isinstance(it, Token):
                if it.type == "TYPE":
                    type_ = it.value[1:]
                elif it.type == "VEC":
                    vector = int(it.value[2:])
            elif it[0] == "item":
                _, tok, count = it
                if count is None:
                    plain.append(tok)
                else:
                    out.append(ast.RegDecl(type_, [tok.value], count, vector, self._loc(tok)))
        if plain:
            out.insert(0, ast.RegDecl(type_, [t.value for t in plain], None, vector, self._loc(plain[0])))
        if not type_:
            raise PtxSyntaxError(".reg declaration needs a type such as .b32", out[0].loc)
        return out

    def reg_item(self, c):
        return ("item", c[0], _int(c[1].value) if len(c) > 1 else None)

    def var_decl(self, c):
        space, align, type_, vector, attributes, out = c[0].value[1:], None, "", None, [], []
        for it in c[1:]:
            if isinstance(it, Token):
                if it.type == "TYPE":
                    type_ = it.value[1:]
                elif it.type == "VEC":
                    vector = int(it.value[2:])
                elif it.type == "ATTRIBUTE":
                    attributes += _attributes(it.value)
            elif it[0] == "align":
                align = it[1]
            elif it[0] == "var":
                _, tok, dims, init = it
                if isinstance(init, _InitList) and any(isinstance(e, ast.InitField) for e in init):
                    if not all(isinstance(e, ast.InitField) for e in init):
                        raise PtxSyntaxError("an initialiser mixes 'field = value' and plain elements",
                                             self._loc(tok))
                    init = list(init)  # an opaque type's fields: { addr_mode_0 = clamp_to_edge, ... }
                elif init is not None:
                    shape = [*dims[1:], *([vector] if vector else [])]
                    init = _flatten_init(init, shape, _zero(type_))
                out.append(ast.VarDecl(space, type_, tok.value, align, dims, init, None, vector,
                                       self._loc(tok), list(attributes)))
        if not type_:
            raise PtxSyntaxError(f".{space} variable needs a type such as .b32", out[0].loc)
        return out

    def var_item(self, c):
        dims, init = [], None
        for it in c[1:]:
            if isinstance(it, tuple):
                dims = it[1]
            else:
                init = it
        return ("var", c[0], dims, init)

    def loc(self, c):
        return _DebugLoc((_int(c[0].value), _int(c[1].value), _int(c[2].value)))

    # ---- initialisers (constant expressions)

    def init_list(self, c):
        return _InitList(c)

    def init_field(self, c):
        v = c[1]
        if isinstance(v, int):  # field_neg
            return ast.InitField(c[0].value, v, self._loc(c[0]))
        return ast.InitField(c[0].value, _int(v.value) if v.type == "INT" else v.value, self._loc(c[0]))

    def field_neg(self, c):
        return -_int(c[0].value)

    def c_int(self, c):
        return ast.Imm(_int(c[0].value), loc=self._loc(c[0]))

    def c_float(self, c):
        bits, width = _float(c[0].value)
        return ast.Imm(bits, "float", width, self._loc(c[0]))

    def c_sym(self, c):
        if c[0].value in PREDEFINED_CONSTANTS:
            return ast.Imm(PREDEFINED_CONSTANTS[c[0].value], loc=self._loc(c[0]))
        return ast.Symbol(c[0].value, self._loc(c[0]))

    def c_generic(self, c):
        val = c[0]
        if isinstance(val, ast.Symbol):
            return ast.Address(val, 0, val.loc, generic=True)
        if isinstance(val, ast.Address) and val.mask is None:
            return ast.Address(val.base, val.offset, val.loc, generic=True)
        raise PtxSyntaxError("generic() needs a variable or function name", _loc_of(val))

    def c_mask(self, c):
        mask, val = _int(c[0].value), c[1]
        if _is_int(val):
            shift = (mask & -mask).bit_length() - 1 if mask else 0
            return ast.Imm((val.value & mask) >> shift, loc=val.loc)
        if isinstance(val, ast.Symbol):
            return ast.Address(val, 0, val.loc, mask=mask)
        if isinstance(val, ast.Address) and val.mask is None:
            return ast.Address(val.base, val.offset, val.loc, mask=mask, generic=val.generic)
        raise PtxSyntaxError("mask() needs an integer or an address constant", self._loc(c[0]))

    def c_add(self, c):
        a, b = c
        if isinstance(b, (ast.Symbol, ast.Address)) and _is_int(a):
            a, b = b, a
        if isinstance(a, ast.Symbol) and _is_int(b):
            return ast.Address(a, b.value, a.loc)
        if isinstance(a, ast.Address) and a.mask is None and _is_int(b):
            return ast.Address(a.base, a.offset + b.value, a.loc, generic=a.generic)
        return self._arith(a, b, lambda x, y: x + y)

    def c_sub(self, c):
        a, b = c
        if isinstance(a, (ast.Symbol, ast.Address)) and _is_int(b):
            return self.c_add([a, ast.Imm(-b.value, loc=b.loc)])
        return self._arith(a, b, lambda x, y: x - y)

    def _arith(self, a, b, op):
        if not (_is_int(a) and _is_int(b)):
            bad = b if _is_int(a) else a
            raise PtxSyntaxError("constant expression needs integer operands here", _loc_of(bad))
        return ast.Imm(op(a.value, b.value), loc=a.loc)

    def c_mul(self, c):
        return self._arith(*c, lambda x, y: x * y)

    def c_div(self, c):  # C semantics: truncates toward zero; x/0 gives 0
        return self._arith(*c, _div)

    def c_mod(self, c):
        return self._arith(*c, lambda x, y: x - y * _div(x, y) if y else 0)

    def c_shl(self, c):  # counts outside 0..63 give 0, as in 64-bit arithmetic
        return self._arith(*c, lambda x, y: x << y if 0 <= y < 64 else 0)

    def c_shr(self, c):
        return self._arith(*c, lambda x, y: x >> min(y, 64) if y >= 0 else 0)

    def c_and(self, c):
        return self._arith(*c, lambda x, y: x & y)

    def c_or(self, c):
        return self._arith(*c, lambda x, y: x | y)

    def c_xor(self, c):
        return self._arith(*c, lambda x, y: x ^ y)

    def c_neg(self, c):
        v = c[0]
        if isinstance(v, ast.Imm) and v.kind == "float":
            return ast.Imm(v.value ^ (1 << (v.bits - 1)), "float", v.bits, v.loc)
        return self._arith(ast.Imm(0, loc=v.loc), v, lambda x, y: x - y)

    def c_inv(self, c):
        return self._arith(c[0], ast.Imm(0), lambda x, y: ~x)

    def c_not(self, c):
        return self._arith(c[0], ast.Imm(0), lambda x, y: int(not x))

    # ---- instructions and operands

    def instruction(self, c):
        guard = c[0] if isinstance(c[0], ast.Guard) else None
        i = 1 if guard else 0
        tok = c[i]
        opcode, *mods = tok.value.split(".")
        operands = [_unparen(op, opcode == "call") for op in c[i + 1 :]]
        return ast.Instruction(opcode, tuple(mods), operands, guard, self._loc(tok))

    def guard(self, c):
        return ast.Guard(self._pred(c[0]))

    def negated_guard(self, c):
        return ast.Guard(self._pred(c[0]), negated=True)

    def _pred(self, tok: Token) -> ast.Reg:
        return ast.Reg(tok.value, self._loc(tok))

    def _reg(self, tok: Token) -> ast.Reg | ast.SpecialReg:
        base, _, comp = tok.value[1:].partition(".")
        if base in SPECIAL_REGS:
            return ast.SpecialReg(base, comp or None, self._loc(tok))
        return ast.Reg(tok.value, self._loc(tok))

    def _base(self, tok: Token):
        return self._reg(tok) if tok.type == "REG" else ast.Symbol(tok.value, self._loc(tok))

    def reg(self, c):
        return self._reg(c[0])

    def symbol(self, c):
        if c[0].value in PREDEFINED_CONSTANTS:
            return ast.Imm(PREDEFINED_CONSTANTS[c[0].value], loc=self._loc(c[0]))
        return ast.Symbol(c[0].value, self._loc(c[0]))

    def sym_offset(self, c, sign: int = 1):
        return ast.SymbolOffset(c[0].value, sign * _int(c[1].value), self._loc(c[0]))

    def sym_offset_neg(self, c):
        return self.sym_offset(c, -1)

    def int_imm(self, c):
        return ast.Imm(_int(c[0].value), loc=self._loc(c[0]))

    def paren_cexpr(self, c):
        value = next(v for v in c if not isinstance(v, Token))
        return _Paren(value.value, value.kind, value.bits, value.loc)

    def float_imm(self, c):
        bits, width = _float(c[0].value)
        return ast.Imm(bits, "float", width, self._loc(c[0]))

    def neg_float_imm(self, c):
        bits, width = _float(c[0].value)
        return ast.Imm(bits ^ (1 << (width - 1)), "float", width, self._loc(c[0]))

    def sink(self, c):
        return ast.Sink(self._loc(c[0]))

    def negated(self, c):
        return ast.Negated(self._pred(c[0]), self._loc(c[0]))

    def neg_reg(self, c):
        return ast.Negated(self._reg(c[0]), self._loc(c[0]), minus=True)

    def pair(self, c):
        return ast.Vector((self._pred(c[0]), self._pred(c[1])), self._loc(c[0]))

    def sink_pair(self, c):  # `_|p`: elect.sync's unused lane number
        return ast.Vector((ast.Sink(self._loc(c[0])), self._pred(c[1])), self._loc(c[0]))

    def vector(self, c):
        return ast.Vector(tuple(_unparen(op) for op in c[1:]), self._loc(c[0]))

    def vector_pred(self, c):  # `{d0, d1, d2, d3}|p`: tex/tld4's destinations and residency predicate
        loc = self._loc(c[0])
        return ast.Vector((ast.Vector(tuple(_unparen(op) for op in c[1:-1]), loc), self._pred(c[-1])), loc)

    def arg_list(self, c):
        return ast.Vector(tuple(_unparen(op) for op in c[1:]), self._loc(c[0]))

    def address(self, c):
        offset = _int(c[2].value) if len(c) > 2 else 0
        return ast.Address(self._base(c[1]), offset, self._loc(c[0]))

    def address_neg(self, c):
        return ast.Address(self._base(c[1]), -_int(c[2].value), self._loc(c[0]))

    def address_minus(self, c):  # [a-8]: ptxas 13.0 stops with "Parsing error near '-'"
        base = c[1].value if hasattr(c[1], "value") else c[1]
        raise PtxSyntaxError(f"'[{base}-{c[2].value}]': an address offset is written '+', a negative one "
                             f"'[{base}+-{c[2].value}]' (ptxas: parsing error near '-')", self._loc(c[0]))

    def unified_address(self, c):  # [a].unified
        return dataclasses.replace(c[0], unified=True)

    def address_sym(self, c):  # [gbuf+8], [gbuf+-8]
        sym = c[1]
        return ast.Address(ast.Symbol(sym.name, sym.loc), sym.offset, self._loc(c[0]))

    def address_abs(self, c):
        return ast.Address(None, _int(c[1].value), self._loc(c[0]))

    def address_list(self, c):
        first, rest = _unparen(c[1]), tuple(_unparen(op) for op in c[2:])
        if isinstance(first, (ast.Reg, ast.Symbol)):
            return ast.Address(first, 0, self._loc(c[0]), elements=rest)
        return ast.Address(None, 0, self._loc(c[0]), elements=(first, *rest))


class _InitList(list):
    """A ``{ ... }`` initialiser list, kept nested until the declaration's shape is known."""


def _attributes(text: str) -> list[str]:
    """``.attribute(.managed)`` -> ['managed']; ``.attribute(.unified(1, 2))`` -> ['unified(1, 2)']."""
    inner = text[text.index("(") + 1 : text.rindex(")")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = re.sub(r"\s*,\s*", ", ", re.sub(r"\s+", " ", p.strip())).lstrip(".")
        p = re.sub(r"\s*\(\s*", "(", p).replace(" )", ")")
        if p:
            out.append(p)
    return out


def _zero(type_: str) -> ast.Imm:
    """The padding element of an initialiser of ``type_``."""
    if type_ in ("f32", "f64"):
        return ast.Imm(0, "float", 32 if type_ == "f32" else 64)
    return ast.Imm(0)


def _flatten_init(init, shape: list, zero: ast.Imm) -> list:
    """The elements of a (nested) initialiser in memory order. A nested ``{...}`` stands for
    one element of the outer list and covers ``prod(shape)`` scalars; a shorter one is padded
    with ``zero``. Scalars directly in a list (brace elision) are taken as they come."""
    if not isinstance(init, _InitList):
        return [init]
    out = []
    for el in init:
        if isinstance(el, _InitList) and shape:
            inner = _flatten_init(el, shape[1:], zero)
            size = 1
            for d in shape:
                size *= d or 0
            out += inner + [zero] * (size - len(inner))
        elif isinstance(el, _InitList):
            out += _flatten_init(el, [], zero)
        else:
            out.append(el)
    return out


def _div(x: int, y: int) -> int:
    """Integer division truncating toward zero (exact for any size); 0 when y is 0."""
    if not y:
        return 0
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _is_int(v) -> bool:
    return isinstance(v, ast.Imm) and v.kind == "int"


def _loc_of(v) -> SourceLoc | None:
    return v[0].loc if isinstance(v, list) and v else getattr(v, "loc", None)


_BUILDER = _Builder()


# --------------------------------------------------------------------------- after the parse


def _finish_body(body: list, parent: RegScope, files: dict[int, str], debug: list) -> list:
    """Drop ``.loc``/``.file`` markers (recording them), resolve plain-name registers."""
    scope = RegScope(parent)
    for st in body:
        if isinstance(st, ast.RegDecl):
            scope.declare(st)
    plain = _has_plain_names(scope)
    out = []
    for st in body:
        if isinstance(st, _DebugLoc):
            debug[0] = st.pos
            continue
        if isinstance(st, _FileDir):
            files[st.index] = st.name
            continue
        if isinstance(st, ast.Instruction):
            st.debug_loc = debug[0]
            if plain:
                st.operands = [_resolve(op, scope) for op in st.operands]
        elif isinstance(st, ast.Block):
            st.body = _finish_body(st.body, scope, files, debug)
        out.append(st)
    return out


def _has_plain_names(scope: RegScope | None) -> bool:
    while scope is not None:
        if any(n[0] != "%" for n in scope.names) or any(n[0] != "%" for n in scope.ranges):
            return True
        scope = scope.parent
    return False


def _resolve(op, scope: RegScope):
    if isinstance(op, ast.Symbol) and scope.declares(op.name):
        return ast.Reg(op.name, op.loc)
    if isinstance(op, ast.Address):
        base, elements = _resolve(op.base, scope), tuple(_resolve(e, scope) for e in op.elements)
        if base is not op.base or elements != op.elements:
            return dataclasses.replace(op, base=base, elements=elements)
    if isinstance(op, ast.Vector):
        elements = tuple(_resolve(e, scope) for e in op.elements)
        if elements != op.elements:
            return ast.Vector(elements, op.loc)
    return op


# --------------------------------------------------------------------------- syntax errors

_DESCRIPTIONS = {
    "REG": "a register",
    "IDENT": "a name",
    "INT": "an integer",
    "FLOAT": "a float literal",
    "OPCODE": "an instruction",
    "LABEL_DEF": "a label",
    "TYPE": "a type such as .b32",
    "VEC": ".v2/.v4",
    "SPACE": "a state space such as .global",
    "LINKAGE": "a linkage such as .visible",
    "FUNC_KIND": "'.entry' or '.func'",
    "PERF_DIR": "a performance directive",
    "ATTRIBUTE": "'.attribute(...)'",
    "SECTION": "a .section block",
    "VERSION": "a version number such as 9.0",
    "STRING": "a string",
    "$END": "end of file",
}
_OPERAND_START = {"REG", "IDENT", "INT", "FLOAT"}
_STATEMENT_START = {"OPCODE", "LABEL_DEF"}


def _terminal_text(name: str) -> str | None:
    """The literal text of terminal ``name``; None for a pattern or '$END' (not a terminal)."""
    if name == "$END":
        return None
    term = _get_parser().get_terminal(name)
    return term.pattern.value if isinstance(term.pattern, PatternStr) else None


def _describe_expected(names) -> str:
    names = set(names)
    parts = []
    if _OPERAND_START <= names:
        parts.append("an operand")
        names -= _OPERAND_START | {"SINK", "LBRACE", "LSQB", "LPAR"}
        names = {n for n in names if _terminal_text(n) not in ("-", "!", "~")}
    if {"FUNC_KIND", "LINKAGE"} <= names:
        parts.append("a directive, function or variable")
        names -= {"FUNC_KIND", "LINKAGE", "SPACE", "SECTION"}
        names = {n for n in names if not (_terminal_text(n) or "").startswith(".")}
    if _STATEMENT_START <= names:
        parts.append("an instruction, label or directive")
        names -= _STATEMENT_START | {"SPACE", "LBRACE"}
        names = {n for n in names if not (_terminal_text(n) or "").startswith((".", "@"))}
    quoted = sorted(f"'{_terminal_text(n)}'" for n in names if _terminal_text(n) is not None)
    described = sorted(_DESCRIPTIONS.get(n, n) for n in names if _terminal_text(n) is None)
    items = quoted + parts + described
    if len(items) > 6:
        items = items[:6] + [f"{len(items) - 6} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _show(tok: Token) -> str:
    text = tok.value if len(tok.value) <= 40 else tok.value[:37] + "..."
    return f"token '{text}'"


def _code(line: str) -> str:
    return line.split("//", 1)[0].rstrip()


def _syntax_error(err: UnexpectedInput, text: str, builder: _Builder) -> PtxSyntaxError:
    lines = builder.lines

    def at(line: int, col: int) -> SourceLoc:
        src = lines[line - 1] if 0 < line <= len(lines) else None
        return SourceLoc(builder.filename, line, col, src)

    if isinstance(err, UnexpectedCharacters):
        word = re.match(r"\.?[\w$%]+|.", text[err.pos_in_stream :]).group()
        msg = f"unexpected {'character' if len(word) == 1 else 'text'} '{word}'"
        if err.allowed:
            msg += f", expected {_describe_expected(err.allowed)}"
        return PtxSyntaxError(msg, at(err.line, err.column))
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        return _eof_error(text, lines, at, _describe_expected(err.expected))
    assert isinstance(err, UnexpectedToken)
    tok, expected = err.token, err.expected
    before = lines[tok.line - 1][: tok.column - 1] if tok.line <= len(lines) else ""
    if ";" in {_terminal_text(n) for n in expected} and not _code(before).strip():
        for n in range(tok.line - 1, 0, -1):  # first token on its line: ';' missing above?
            if _code(lines[n - 1]).strip():
                return PtxSyntaxError(f"expected ';' at end of line (before {_show(tok)} on line {tok.line})",
                                      at(n, len(_code(lines[n - 1])) + 1))
    return PtxSyntaxError(f"unexpected {_show(tok)}, expected {_describe_expected(expected)}",
                          at(tok.line, tok.column))


def _eof_error(text: str, lines: list[str], at, expected: str) -> PtxSyntaxError:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    col = len(stripped) - (stripped.rfind("\n") + 1) + 1
    msg = f"unexpected end of file, expected {expected}"
    open_line = _unclosed_brace(text)
    if open_line is not None:
        msg += f" (the '{{' on line {open_line} is never closed)"
    return PtxSyntaxError(msg, at(line, col))


_NOISE = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"')


def _unclosed_brace(text: str) -> int | None:
    """Line of the innermost '{' without its '}', ignoring comments and strings."""
    stack = []
    clean = _NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    for m in re.finditer(r"[{}]", clean):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            stack.pop()
    return clean.count("\n", 0, stack[-1]) + 1 if stack else None
