"""Semantic checks on a parsed PTX module.

After parsing, :func:`check` verifies what the grammar cannot:

* the module header: a known ``.version`` no newer than xcc reads, one known ``.target``
  architecture, and that the version is new enough for the target (PTX ISA 9.0, 11.3);
* names: every register and symbol is declared before use in an enclosing block (PTX ISA 9.0,
  5.1 and 11.1: a ``{ }`` block is a scope, its declarations shadow outer ones and its labels
  are local), labels are unique within a block, branch targets and call prototypes exist;
* instructions: the opcode exists, its modifiers are ones it takes and fit together (a
  rounding mode only on floating-point types, ``.hi/.lo/.wide`` only on integers, a required
  comparison, rounding or ``.approx``), the number and kind of its operands, and that each
  register's declared type agrees with the instruction type (section 6.4: same size, and bit
  types are compatible with every type of their size; ``ld``, ``st`` and ``cvt`` accept wider
  registers), all as ptxas 13.0 enforces them;
* target and version: an instruction needs the architecture and PTX ISA version its "Target
  ISA Notes" give (``redux`` in a ``.target sm_75`` module is an error).

Every problem found is reported, not only the first: :func:`check` raises the first as a
:class:`~xcc.diagnostics.PtxSemanticError` carrying the rest (``err.errors``), each pointing at
the offending token. :class:`RegScope` is shared with the parser, which uses it to tell
plain-identifier registers (``.reg .pred p;``) from symbols.
"""

from __future__ import annotations

import functools
import re
from collections import ChainMap
from dataclasses import replace

from xcc.diagnostics import PtxSemanticError, SourceLoc, UnsupportedError, raise_errors
from xcc.frontend import ast
from xcc.frontend.arith_rules import modifier_problem, operand_problems
from xcc.frontend.instructions import (
    FORMS,
    ROUND_F,
    ROUND_I,
    SHAPE,
    TENSOR_FAMILIES,
    TYPE_WIDTH,
    TYPES,
    blackwell_only,
    category,
    requirements,
)
from xcc.frontend.memory_rules import declaration_problems, memory_operand_problems, memory_problems
from xcc.frontend.targets import NEWEST_PTX, Target, min_ptx_version, parse_target, parse_version
from xcc.frontend.tensor_rules import problem as tensor_problem
from xcc.semantics.comparisons import FLOAT_CMPS, INT_CMPS
from xcc.semantics.texture import OPAQUE_KEYWORDS, field_keyword

PTX_OPCODES = frozenset(FORMS)
BRANCH_OPCODES = frozenset({"bra"})
MAX_ERRORS = 50

# Special registers that are 64 bits wide; every other one reads as 32 bits (16 for the legacy
# ``mov.u16 %rh, %tid.x`` form).
_SPECIAL_64 = frozenset({"clock64", "globaltimer", "gridid", "current_graph_exec"} | {f"pm{i}_64" for i in range(8)})

_SURFACE_FIELDS = ("width", "height", "depth", "channel_data_type", "channel_order")
_SAMPLER_FIELDS = ("addr_mode_0", "addr_mode_1", "addr_mode_2", "filter_mode", "force_unnormalized_coords")
_OPAQUE_FIELDS = {"samplerref": _SAMPLER_FIELDS, "surfref": _SURFACE_FIELDS,
                  "texref": (*_SURFACE_FIELDS, "normalized_coords", *_SAMPLER_FIELDS[:4])}
"""The fields an initialiser of each opaque type takes (a ``.texref``'s: independent mode's)."""


class RegScope:
    """The registers declared directly in one scope, with a link to the enclosing scope.

    ``.reg .b32 %r<10>;`` declares the range %r0..%r9; ``.reg .pred p, q;`` single names."""

    def __init__(self, parent: RegScope | None = None):
        self.parent = parent
        self.names: dict[str, ast.RegDecl | None] = {}
        self.ranges: dict[str, int] = {}
        self.range_decls: dict[str, ast.RegDecl] = {}
        self._seen: dict[str, ast.RegDecl | None | bool] = {}

    def declare(self, decl: ast.RegDecl) -> str | None:
        """Add a declaration; return a name it declares twice in this scope, if any."""
        self._seen.clear()
        dup = None
        for name in decl.names:
            if decl.count is None:
                if name in self.names:
                    dup = name
                self.names[name] = decl
            else:
                self.ranges[name] = max(self.ranges.get(name, 0), decl.count)
                self.range_decls[name] = decl
        return dup

    def declares(self, name: str) -> bool:
        return self.lookup(name) is not False

    def lookup(self, name: str) -> ast.RegDecl | None | bool:
        """The declaration of ``name`` (None for a register parameter), or False if undeclared.
        Answers are memoised: call it only once every declaration of the scope is in."""
        found = self._seen.get(name, _UNSEEN)
        if found is _UNSEEN:
            found = self._seen[name] = self._lookup(name)
        return found

    def _lookup(self, name: str) -> ast.RegDecl | None | bool:
        scope: RegScope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            if scope.ranges:
                prefix = _range_prefix(name, scope.ranges)
                if prefix is not None:
                    return scope.range_decls.get(prefix)
            scope = scope.parent
        return False


_UNSEEN = object()


def _range_prefix(name: str, ranges: dict[str, int]) -> str | None:
    """The ``prefix<count>`` declaration that ``name`` (e.g. '%rd12') belongs to, if any."""
    i = len(name)
    while i > 0 and name[i - 1].isdigit():
        i -= 1
        digits = name[i:]
        if len(digits) > 1 and digits[0] == "0":
            continue
        count = ranges.get(name[:i])
        if count is not None and int(digits) < count:
            return name[:i]
    return None


def _suggest(opcode: str) -> str | None:
    """The closest real opcode, preferring ones that share the first letter."""
    import difflib  # here, not at the top: only a misspelt opcode needs it

    close = difflib.get_close_matches(opcode, PTX_OPCODES, n=5, cutoff=0.6)
    score = {c: difflib.SequenceMatcher(None, opcode, c).ratio() for c in close}
    return min(close, key=lambda c: (-score[c], c[:1] != opcode[:1], c), default=None)


# --------------------------------------------------------------------------- module


def check(module: ast.Module, text: str) -> None:
    """Raise PtxSemanticError for the semantic problems in ``module`` (all of them, see above)."""
    checker = _Checker(module, text)
    checker.run()
    raise_errors(checker.errors)


class _TooMany(Exception):
    pass


class _Checker:
    def __init__(self, module: ast.Module, text: str):
        self.module = module
        self.lines = text.split("\n")
        self.errors: list[PtxSemanticError] = []
        self.target: Target | None = None
        self.version: tuple[int, int] | None = None
        self.functions = {f.name for f in module.functions}
        self.address_bits = module.address_size or 32

    def error(self, message: str, loc: SourceLoc | None) -> None:
        self.errors.append(PtxSemanticError(message, loc))
        if len(self.errors) >= MAX_ERRORS:
            raise _TooMany

    def run(self) -> None:
        try:
            self.header()
            self.opaque_initialisers()
            # every name in scope -> its state space ("func" for a function): cvta/ld/prefetch compare them
            module_names = {f: "func" for f in self.functions} | {v.name: v.space for v in self.module.variables}
            bodies: dict[str, ast.Function] = {}
            for fn in self.module.functions:
                if fn.body is None:
                    continue
                if fn.name in bodies:
                    self.error(f"redefinition of function '{fn.name}'", fn.loc)
                bodies[fn.name] = fn
                regs = RegScope()
                names: dict[str, str] = {}
                for p in fn.params + fn.return_params:
                    if p.space == "reg":
                        regs.names[p.name] = ast.RegDecl(p.type, [p.name], loc=p.loc)
                    else:
                        names[p.name] = p.space
                self.block(fn.body, regs, ChainMap(names, module_names), ChainMap())
        except _TooMany:
            self.errors.append(PtxSemanticError(f"too many errors (stopped after {MAX_ERRORS})"))
        self.errors.sort(key=lambda e: (e.loc.line, e.loc.col) if e.loc else (1 << 30, 0))

    def directive_loc(self, name: str) -> SourceLoc:
        """Where the module directive ``name`` ('.version', '.target') is, or line 1."""
        for i, line in enumerate(self.lines):
            m = re.match(rf"\s*({re.escape(name)})\b", line)
            if m:
                return SourceLoc(self.module.filename, i + 1, m.start(1) + 1, line)
        return SourceLoc(self.module.filename, 1, 1, self.lines[0] if self.lines else None)

    def header(self) -> None:
        m = self.module
        if not m.version:
            self.error("missing '.version' directive (a PTX module starts with '.version X.Y')",
                       self.directive_loc(".version"))
        else:
            self.version = parse_version(m.version)
            if self.version > NEWEST_PTX:
                self.error(f"PTX ISA version {m.version} is newer than this xcc reads "
                           f"(up to {NEWEST_PTX[0]}.{NEWEST_PTX[1]})", self.directive_loc(".version"))
        if not m.target:
            self.error("missing '.target' directive", self.directive_loc(".target"))
            return
        self.target, problems = parse_target(m.target)
        for p in problems:
            self.error(p, self.directive_loc(".target"))
        if self.target is None and not problems:
            self.error("'.target' names no architecture (such as sm_80)", self.directive_loc(".target"))
        t = self.target
        if t is not None and self.version is not None:
            need = min_ptx_version(t.sm, t.suffix)
            if need is not None and self.version < need:
                self.error(f"target {t.name} needs PTX ISA {need[0]}.{need[1]} or later "
                           f"(the module declares .version {m.version})", self.directive_loc(".target"))

    # ---- blocks and names

    def block(self, body: list, parent_regs: RegScope, parent_names: ChainMap, parent_labels: ChainMap):
        regs = RegScope(parent_regs)
        names: dict[str, str] = {}
        labels: dict[str, ast.Label] = {}
        for st in body:
            if isinstance(st, ast.RegDecl):
                dup = regs.declare(st)
                if dup is not None:
                    self.error(f"redeclaration of register '{dup}'", st.loc)
            elif isinstance(st, ast.VarDecl):
                names[st.name] = st.space
            elif isinstance(st, ast.Label):
                if st.name in labels:
                    first = labels[st.name].loc
                    where = f" (first defined at line {first.line})" if first else ""
                    self.error(f"duplicate label '{st.name}'{where}", st.loc)
                labels[st.name] = st
        names_here = parent_names.new_child(names)
        labels_here = parent_labels.new_child(labels)
        for st in body:
            if isinstance(st, ast.Instruction):
                self.instruction(st, regs, names_here, labels_here)
            elif isinstance(st, ast.Block):
                self.block(st.body, regs, names_here, labels_here)

    def instruction(self, ins: ast.Instruction, regs: RegScope, names: ChainMap, labels: ChainMap):
        if ins.opcode not in PTX_OPCODES:
            hint = _suggest(ins.opcode)
            suffix = f" (did you mean '{hint}'?)" if hint else ""
            self.error(f"unknown opcode '{ins.opcode}'{suffix}", ins.loc)
            return
        before = len(self.errors)
        if ins.guard is not None:
            self.name(ins.guard.reg, regs, names, labels)
        ops = ins.operands
        if ins.opcode in BRANCH_OPCODES and ops and isinstance(ops[0], ast.Symbol):
            if ops[0].name not in labels:
                self.error(f"branch to undefined label '{ops[0].name}'", ops[0].loc or ins.loc)
            ops = ops[1:]
        elif ins.opcode == "call":
            ops = self.call_operands(ins, labels)
        for op in ops:
            self.name(op, regs, names, labels)
        if len(self.errors) == before:  # types only make sense once every name resolves
            _InstructionCheck(self, ins, regs, names).run()
        if ins.opcode in ("tex", "tld4") and "texmode_independent" in self.module.target:
            self.independent_texture(ins)

    def opaque_initialisers(self) -> None:
        """``{ field = value, ... }`` initialises an opaque variable only (PTX ISA, "Texture Sampler and Surface
        Types"), with the fields ptxas 13 takes (others: "Unrecognized field name ... in opaque struct
        initializer"): a ``.samplerref``'s ``addr_mode_0..2``, ``filter_mode``, ``force_unnormalized_coords``, in a
        ``texmode_independent`` module (ptxas: "violates .target texmode_unified setting"); a ``.surfref``'s
        ``width``, ``height``, ``depth``, ``channel_data_type``, ``channel_order``; an independent-mode
        ``.texref``'s those and ``normalized_coords``, ``filter_mode``, ``addr_mode_0..2`` (ptxas: "ignored in
        .texref variables in independent texture mode").  A ``.surfref``'s and an independent-mode ``.texref``'s
        fields are declarations with no effect: the bound object's properties and the sampler operand decide, and
        ptxas's cubin is byte-identical with and without them.  A unified-mode ``.texref``'s fields:
        :func:`xcc.ir.lower_texture.sampler_of`.  Each value an integer or one of ptxas's keywords
        (:data:`xcc.semantics.texture.OPAQUE_KEYWORDS`; ptxas: "Unrecognized initial value symbol")."""
        for v in self.module.variables:
            fields = [e for e in v.init or () if isinstance(e, ast.InitField)]
            if not fields and not (v.type == "samplerref" and v.init is not None):
                continue
            if v.type not in ("texref", "samplerref", "surfref"):
                self.error(f"'{v.name}': a {{ field = value }} initialiser needs an opaque type (.samplerref)",
                           v.loc)
                continue
            independent = "texmode_independent" in self.module.target
            if v.type == "texref" and not independent:
                continue  # unified mode: its sampling fields (xcc.ir.lower_texture.sampler_of)
            if v.type == "samplerref" and not independent:
                self.error(f"'{v.name}': an initialised .samplerref needs .target texmode_independent (the "
                           "module is texmode_unified)", v.loc)
            allowed = _OPAQUE_FIELDS[v.type]
            for f in fields:
                if f.name not in allowed:
                    self.error(f"'{v.name}': unknown .{v.type} field '{f.name}' ({', '.join(allowed)})",
                               f.loc or v.loc)
                elif v.type != "samplerref":
                    try:
                        field_keyword(f.value)
                    except ValueError:
                        self.error(f"'{v.name}': {f.name} = {f.value}: unknown value '{f.value}' (an integer, or "
                                   f"{', '.join(OPAQUE_KEYWORDS)})", f.loc or v.loc)

    def independent_texture(self, ins: ast.Instruction) -> None:
        """A ``texmode_independent`` module's ``tex``/``tld4`` names its sampler, ``[texture, sampler,
        coordinates]`` (PTX ISA 9.7.10.1: the mode is the module's; ptxas 13 refuses the unified form there:
        "Argument 2 of instruction 'tex': .samplerref or .u64 register expected")."""
        addr = ins.operands[1] if len(ins.operands) > 1 else None
        if isinstance(addr, ast.Address) and len(addr.elements) == 1:
            self.error(f"'{ins.opcode}' in a texmode_independent module takes [texture, sampler, coordinates]: "
                       "operand 2 must name a .samplerref or a .u64 register holding one", addr.loc or ins.loc)

    def call_operands(self, ins: ast.Instruction, labels: ChainMap) -> list:
        """Check the call target (and prototype); return the operands left to check."""
        ops = list(ins.operands)
        i = 1 if ops and isinstance(ops[0], ast.Vector) else 0
        if i < len(ops) and isinstance(ops[i], ast.Symbol):
            target = ops.pop(i)
            if target.name not in self.functions:
                self.error(f"call to undeclared function '{target.name}'", target.loc or ins.loc)
        if ops and isinstance(ops[-1], ast.Symbol):
            proto = ops.pop()
            label = labels.get(proto.name)
            if label is None or label.prototype is None:
                self.error(f"'{proto.name}' is not a call prototype", proto.loc or ins.loc)
        return ops

    def name(self, op: ast.Operand, regs: RegScope, names: ChainMap, labels: ChainMap):
        if isinstance(op, ast.Reg):
            name = op.name.split(".", 1)[0]
            if not regs.declares(name):
                self.error(f"use of undeclared register '{name}'", op.loc)
        elif isinstance(op, ast.Symbol):
            if op.name not in names and op.name not in labels:
                self.error(f"use of undeclared name '{op.name}'", op.loc)
        elif isinstance(op, ast.SymbolOffset):  # var+imm: a variable's or parameter's address (ptxas 13.0's words)
            if op.name in self.functions or (op.name in labels and op.name not in names):
                what = "function" if op.name in self.functions else "label"
                self.error(f"cannot take the address of {what} '{op.name}' in arithmetic expressions", op.loc)
            elif op.name not in names:
                self.error(f"use of undeclared name '{op.name}'", op.loc)
        elif isinstance(op, ast.Address):
            if op.base is not None:
                self.name(op.base, regs, names, labels)
            for el in op.elements:
                self.name(el, regs, names, labels)
        elif isinstance(op, ast.Vector):
            for el in op.elements:
                self.name(el, regs, names, labels)
        elif isinstance(op, ast.Negated):
            self.name(op.operand, regs, names, labels)


# --------------------------------------------------------------------------- one instruction


class _InstructionCheck:
    """Modifiers, operand kinds and widths, and target requirements of one instruction."""

    def __init__(self, checker: _Checker, ins: ast.Instruction, regs: RegScope, names):
        self.c, self.ins, self.regs = checker, ins, regs
        self.names = names  # every name in scope -> its state space ("func" for a function)
        self.form = FORMS[ins.opcode]
        self.types = [m for m in ins.modifiers if m in TYPES]
        self.mods = set(ins.modifiers)
        self.text = ".".join((ins.opcode, *ins.modifiers))

    def error(self, message: str, loc: SourceLoc | None = None) -> None:
        self.c.error(message, loc or self.ins.loc)

    def modifier_loc(self, mod: str) -> SourceLoc | None:
        """The place of ``.mod`` inside the opcode token."""
        loc = self.ins.loc
        if loc is None:
            return None
        offset = len(self.ins.opcode)
        for m in self.ins.modifiers:
            if m == mod:
                return replace(loc, col=loc.col + offset)
            offset += 1 + len(m)
        return loc

    def run(self) -> None:
        ins, c = self.ins, self.c
        before = len(c.errors)
        spelling, needs = _opcode_problems(ins.opcode, ins.modifiers, len(ins.operands), c.target, c.version,
                                           c.module.version)
        for message, mod in spelling:
            self.error(message, self.modifier_loc(mod) if mod else None)
        if not spelling and self.form.operands is not None:
            self.operands()
        if not spelling:  # frontend/memory_rules.py
            for message, loc in memory_operand_problems(ins, self.reg_width):
                self.error(message, loc)
            for message, loc in declaration_problems(ins, self.names.get, c.address_bits, c.target):
                self.error(message, loc)
        if not spelling:
            for message, loc in operand_problems(ins, self.reg_type, c.target, c.version):
                self.error(message, loc)
        for message in needs:
            self.error(message)
        if len(c.errors) == before and (msg := tensor_problem(ins, self.element_type)):  # frontend/tensor_rules.py
            self.error(f"'{self.text}': {msg}")

    # ---- operands

    def reg_width(self, op) -> int | None:
        """The declared width in bits of a plain register operand (None for anything else)."""
        decl = self.regs.lookup(op.name) if isinstance(op, ast.Reg) and "." not in op.name else None
        return TYPE_WIDTH.get(decl.type) if isinstance(decl, ast.RegDecl) and not decl.vector else None

    def reg_type(self, op) -> str | None:
        """The declared type of a plain register operand (None for anything else)."""
        if not isinstance(op, ast.Reg) or "." in op.name:
            return None
        decl = self.regs.lookup(op.name)
        return decl.type if isinstance(decl, ast.RegDecl) and not decl.vector else None

    def element_type(self, op) -> str | None:
        """The declared type of a register operand: a scalar or vector register's, or one element's (``%v.x``);
        None for anything else (a video selector ``%r.b1`` included)."""
        if not isinstance(op, (ast.Reg, ast.Symbol)):
            return None
        base, _, comp = op.name.partition(".")
        decl = self.regs.lookup(base)
        if not isinstance(decl, ast.RegDecl):
            return None
        if comp and not (decl.vector and _ELEMENT.get(comp, 4) < decl.vector):
            return None
        return decl.type

    def operands(self) -> None:
        ops = self.ins.operands
        candidates = self.form.operands
        if "sync" in self.mods and self.ins.opcode in ("shfl", "vote"):  # .sync adds the member mask
            candidates = (max(candidates, key=len),)
        sigs = [s for s in candidates if len(s) == len(ops)]
        if not sigs:
            counts = sorted({len(s) for s in candidates})
            want = " or ".join(str(n) for n in counts)
            self.error(f"'{self.text}' takes {want} operand{'s' if counts != [1] else ''}, got {len(ops)}")
            return
        t0 = self.types[0] if self.types else None
        t1 = self.types[1] if len(self.types) > 1 else t0
        if "wide" in self.mods:  # mul.wide/mad.wide: the signature with the double-width result
            sigs = [s for s in sigs if "W" in s] or sigs
        if "L2::cache_hint" in self.mods:  # the trailing 64-bit cache-policy operand (atom d, [a], b, policy)
            sigs = [s for s in sigs if s.endswith("x")] or sigs
        for i, (role, op) in enumerate(zip(sigs[0], ops, strict=True)):
            self.operand(i, role, op, t1 if role == "a" else t0)

    def operand(self, i: int, role: str, op, t: str | None) -> None:
        if role == "x":
            return
        where = f"operand {i + 1} of '{self.text}'"
        loc = getattr(op, "loc", None)
        if role == "m":
            if not isinstance(op, ast.Address):
                self.error(f"{where} must be a memory operand '[...]'", loc)
            return
        if isinstance(op, ast.Address):
            self.error(f"{where} cannot be a memory operand", loc)
            return
        if role == "l":
            if not isinstance(op, ast.Symbol):
                self.error(f"{where} must be a label", loc)
            return
        if isinstance(op, ast.Vector):
            self.vector(where, role, op, t)
            return
        if isinstance(op, ast.Sink):
            if role not in "dqUWv":
                self.error(f"{where}: '_' can only be a destination", loc)
            return
        if role in "qp":
            self.predicate(where, role, op)
            return
        if role in "uU":
            t = "b32"
        elif role in "Ww":
            t = _double(t)
        elif role == "A":
            t = t or f"u{self.c.address_bits}"
            if self.ins.opcode == "isspacep" and self.reg_width(op) == 32:  # zero-extended, as ptxas 13.0 does
                t = "u32"  # (sm_90a SASS: IMAD.MOV.U32 R5, RZ, RZ, RZ; QSPC.E.G P0, RZ, [R4])
        if t is None:
            return
        if isinstance(op, ast.Reg):
            self.register(where, op, t, relaxed=self.form.relaxed)
        elif isinstance(op, ast.Imm):
            if role in "dUW" or (role == "v" and self.ins.opcode != "st"):
                self.error(f"{where} is a destination and cannot be a constant", loc)
            else:
                self.immediate(where, op, t)
        elif isinstance(op, ast.SpecialReg):
            if role in "dUW":
                self.error(f"{where}: special register '%{op.name}' is read-only", loc)
            else:
                self.special(where, op, t)
        elif isinstance(op, (ast.Symbol, ast.SymbolOffset)):
            if not self.form.symbols and role != "x":
                self.error(f"{where} must be a register or a constant, not the name '{op.name}'", loc)
        elif isinstance(op, ast.Negated) and op.minus:
            if self.ins.opcode != "vmad" or role in "dqUWv" or "po" in self.mods:
                self.error(f"{where}: '-' negates only vmad's a, b and c operands (not with .po)", loc)
            else:
                self.operand(i, role, op.operand, t)
        elif isinstance(op, ast.Negated) and t == "pred":  # and.pred d, !a, b (ptxas 13.0 takes it)
            self.predicate(where, "p", op)
        elif isinstance(op, ast.Negated):
            self.error(f"{where}: '!' only applies to predicate operands", loc)

    def vector(self, where: str, role: str, op: ast.Vector, t: str | None) -> None:
        if role == "q" or (role == "d" and len(op.elements) == 2 and self.ins.opcode in _PAIR_DESTS):
            pred = op.elements[1] if role == "d" else None
            if pred is not None:
                self.predicate(where, "q", pred)
                inner = op.elements[0]
                if isinstance(inner, ast.Reg) and t is not None:
                    self.register(where, inner, t, relaxed=False)
                return
            for el in op.elements:
                self.predicate(where, "q", el)
            return
        if role == "v":
            n = next((int(m[1:]) for m in self.ins.modifiers if m in ("v2", "v4", "v8")), 1)
            if len(op.elements) != n:
                self.error(f"{where} has {len(op.elements)} elements but the instruction moves "
                           f"{'.v' + str(n) if n > 1 else 'a scalar'}", op.loc)
                return
            for el in op.elements:
                if isinstance(el, ast.Reg) and t is not None:
                    self.register(where, el, t, relaxed=True)
                elif isinstance(el, ast.Imm) and t is not None and self.ins.opcode == "st":
                    self.immediate(where, el, t)

    def predicate(self, where: str, role: str, op) -> None:
        loc = getattr(op, "loc", None)
        if isinstance(op, ast.Negated):
            if role == "q":
                self.error(f"{where}: a destination cannot be negated", loc)
                return
            op = op.operand
        if isinstance(op, ast.Sink) and role == "q":
            return
        if isinstance(op, ast.Imm) and role == "p" and op.kind == "int":
            return
        if not isinstance(op, ast.Reg):
            self.error(f"{where} must be a predicate register", loc)
            return
        decl = self.regs.lookup(op.name.split(".", 1)[0])
        if isinstance(decl, ast.RegDecl) and decl.type != "pred":
            self.error(f"{where} must be a predicate register, but '{op.name}' is .{decl.type}", loc)

    def register(self, where: str, op: ast.Reg, t: str, relaxed: bool) -> None:
        decl = self.regs.lookup(op.name.split(".", 1)[0])
        if not isinstance(decl, ast.RegDecl) or not decl.type or decl.vector or "." in op.name:
            return
        r = decl.type
        if r not in TYPE_WIDTH or t not in TYPE_WIDTH:
            return
        if not _compatible(t, r, relaxed):
            self.error(f"{where}: register '{op.name}' is .{r}, which does not match the instruction "
                       f"type .{t}", op.loc)

    def immediate(self, where: str, op: ast.Imm, t: str) -> None:
        cat = category(t)
        if t in ("f16", "bf16", "f16x2", "bf16x2"):  # ptxas 13.0: "Arguments mismatch", for any constant
            self.error(f"{where}: a .{t} operand cannot be a constant (move its bits into a register first)", op.loc)
        elif op.kind == "int" and cat == "f":
            self.error(f"{where}: integer constant {op.value} for a .{t} operand (write a float literal "
                       f"such as 0f3F800000)", op.loc)
        elif op.kind == "float" and cat in ("u", "s", "pred"):
            self.error(f"{where}: floating-point constant for a .{t} operand", op.loc)

    def special(self, where: str, op: ast.SpecialReg, t: str) -> None:
        if op.name == "is_explicit_cluster":  # the one .pred special register (PTX ISA 10.x)
            if t != "pred":
                self.error(f"{where}: special register '%is_explicit_cluster' is a .pred, the instruction type "
                           f"is .{t}", op.loc)
            return
        width = 64 if op.name in _SPECIAL_64 else 32
        if TYPE_WIDTH.get(t) not in ((64,) if width == 64 else (16, 32)):
            self.error(f"{where}: special register '%{op.name}' is {width} bits wide, the instruction "
                       f"type .{t} is {TYPE_WIDTH.get(t)}", op.loc)

@functools.lru_cache(maxsize=8192)
def _opcode_problems(opcode: str, modifiers: tuple[str, ...], n_operands: int, target: Target | None,
                     version: tuple[int, int] | None, version_text: str
                     ) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]:
    """What is wrong with an opcode spelling, whatever its operands: (problems with its
    modifiers, each with the modifier to point at; unmet target and version requirements).
    The same spelling recurs thousands of times in a module, so the answer is memoised."""
    form = FORMS[opcode]
    text = ".".join((opcode, *modifiers))
    types = [m for m in modifiers if m in TYPES]
    spelling: list[tuple[str, str | None]] = []
    if form.mods is not None:
        for m in modifiers:
            if m not in TYPES and m not in form.mods and not (opcode in TENSOR_FAMILIES and SHAPE.fullmatch(m)):
                spelling.append((f"'.{m}' is not a modifier of '{opcode}'", m))
        for t in types:
            if t not in form.types:
                spelling.append((f"'{text}': '{opcode}' does not take type '.{t}'", t))
    lo, hi = form.ntypes
    if not lo <= len(types) <= hi:
        want = "no type" if hi == 0 else (f"{lo} type modifier{'s' if lo > 1 else ''}" if lo == hi
                                          else f"{lo} to {hi} type modifiers")
        spelling.append((f"'{text}' takes {want}, got {len(types)}", None))
    rule = _RULES.get(opcode)
    if not spelling and types:  # combinations ptxas rejects
        msg = (rule(set(modifiers), types) if rule is not None else None) or modifier_problem(opcode, set(modifiers),
                                                                                              types)
        if msg:
            spelling.append((f"'{text}': {msg}", None))
    if not spelling and (msg := memory_problems(opcode, modifiers)):  # frontend/memory_rules.py
        spelling.append((f"'{text}': {msg}", None))
    needs = []
    for req in requirements(opcode, modifiers, n_operands):
        if target is not None and not target.supports(req.sm, req.arch_specific):
            want = f"sm_{req.sm}a" if req.arch_specific else f"sm_{req.sm} or later"
            needs.append(f"'{req.feature}' needs .target {want} (this module targets {target.name})")
        if version is not None and version < req.ptx:
            needs.append(f"'{req.feature}' needs PTX ISA {req.ptx[0]}.{req.ptx[1]} or later "
                         f"(this module declares .version {version_text})")
    return tuple(spelling), tuple(needs)


_ELEMENT = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}  # %v.x (PTX ISA 5.4.2)
_PAIR_DESTS = frozenset({"shfl", "match", "lop3", "elect", "setp", "mma"})


def _double(t: str | None) -> str | None:
    if t is None:
        return None
    width = TYPE_WIDTH[t] * 2
    return f"{t[0] if t[0] in 'bus' else 'b'}{width}"


def _compatible(t: str, r: str, relaxed: bool) -> bool:
    """May a register declared ``.r`` be an operand of an instruction of type ``.t``?
    PTX ISA 9.0 section 6.4.1 and its relaxed rules for ld/st/cvt, as ptxas applies them."""
    ct, cr = category(t), category(r)
    if (ct == "pred") != (cr == "pred"):
        return False
    wt, wr = TYPE_WIDTH[t], TYPE_WIDTH[r]
    same_kind = ct == "b" or cr == "b" or ct == cr or (ct in "us" and cr in "us")
    if not same_kind:
        return False
    if wt == wr:
        return True
    # ptxas 13.0 also takes a wider floating-point register for a bit-size type (ld.global.b16 %f1: LDG.E.U16 into
    # the 32-bit register, its bits zero-extended, as for ld.global.u16 %r1; b8/b16 in .f32, b16/b32 in .f64)
    return relaxed and wr > wt and (cr == "b" or (cr in "us" and ct in "bus") or (ct == "b" and cr == "f"))


# --------------------------------------------------------------------------- modifier rules

_FTZ_TYPES = frozenset({"f32", "f16", "f16x2", "bf16", "bf16x2", "f32x2"})
_HALF = frozenset({"f16", "f16x2", "bf16", "bf16x2"})


def _arith_rule(required_rounding: bool = False, approx_ok: bool = False, approx_required: bool = False,
                f64_ftz: bool = False):
    """add/sub/mul/mad/fma/div/sqrt/rcp/...: rounding, ftz, sat, .hi/.lo/.wide and .approx.  ``f64_ftz``: .ftz is
    taken on an .f64 with a rounding too (rcp: ptxas 13.0 takes it and ignores it)."""

    def rule(ms: set[str], types: list[str]) -> str | None:
        t = types[0]
        flt = category(t) == "f"
        rounding = ms & ROUND_F
        if rounding and not flt:
            return f"rounding modifier '.{min(rounding)}' needs a floating-point type"
        if "ftz" in ms and t not in _FTZ_TYPES and not (t == "f64" and ("approx" in ms or f64_ftz and rounding)):
            return f"'.ftz' does not apply to .{t}"
        if "sat" in ms and t not in ("s32", "f32", "f16", "f16x2", "f32x2"):
            return f"'.sat' does not apply to .{t}"
        if ms & {"hi", "lo", "wide"} and flt:
            return f"'.{min(ms & {'hi', 'lo', 'wide'})}' needs an integer type"
        if ms & {"approx", "full"} and not approx_ok:
            return "'.approx' is not a mode of this instruction"
        if flt and t not in _HALF and t != "f32x2":
            if approx_required and "approx" not in ms:
                return "'.approx' is required"
            if required_rounding and not rounding and not ms & {"approx", "full"}:
                return "a rounding modifier (.rn, .rz, .rm, .rp) is required" + (
                    " or '.approx'" if approx_ok and t == "f32" else "")
        return None

    return rule


def _mul_rule(ms: set[str], types: list[str]) -> str | None:
    msg = _arith_rule()(ms, types)
    if msg is None and category(types[0]) in "bus" and not ms & {"hi", "lo", "wide"}:
        return "an integer multiply needs '.lo', '.hi' or '.wide'"
    return msg


def _mad_rule(ms: set[str], types: list[str]) -> str | None:
    msg = _mul_rule(ms, types) if category(types[0]) in "bus" else _arith_rule(required_rounding=True)(ms, types)
    if msg is None and "sat" in ms and category(types[0]) in "bus" and "hi" not in ms:
        return "'.sat' on an integer mad needs '.hi'"
    return msg


def _compare_rule(ms: set[str], types: list[str]) -> str | None:
    t = types[-1]
    cmps = ms & (INT_CMPS | FLOAT_CMPS)
    if len(cmps) != 1:
        return "exactly one comparison (.eq, .lt, ...) is required" if not cmps else "more than one comparison"
    cmp = next(iter(cmps))
    cat = category(t)
    if cat in "bus" and cmp not in INT_CMPS:
        return f"comparison '.{cmp}' is for floating-point types, not .{t}"
    if cmp in ("lo", "ls", "hi", "hs") and cat not in "bu":
        return f"comparison '.{cmp}' is for unsigned types, not .{t}"
    if cat in "bus" and "ftz" in ms:
        return f"'.ftz' does not apply to .{t}"
    if len(ms & {"and", "or", "xor"}) > 1:
        return "more than one boolean operation"
    return None


_BASIC = frozenset("u8 u16 u32 u64 s8 s16 s32 s64 b8 b16 b32 b64 f16 bf16 f32 f64".split())


def _cvt_rule(ms: set[str], types: list[str]) -> str | None:
    """cvt.frnd.dtype.atype: the rounding a conversion needs (PTX ISA 9.0, 9.7.9.21)."""
    if len(types) != 2 or not set(types) <= _BASIC:
        return None  # packed and narrow float formats: checked by later stages
    d, a = types
    fd, fa = category(d) == "f", category(a) == "f"
    rf, ri = ms & ROUND_F, ms & ROUND_I
    if len(rf | ri) > 1:
        return "more than one rounding modifier"
    if fd and not fa:
        if not rf:
            return "converting an integer to floating point needs a rounding modifier (.rn, .rz, .rm, .rp)"
    elif fa and not fd:
        if not ri:
            return "converting floating point to an integer needs an integer rounding modifier (.rni, .rzi, ...)"
    elif fa and fd:
        wd, wa = TYPE_WIDTH[d], TYPE_WIDTH[a]
        if wd < wa and not rf:
            return f"narrowing .{a} to .{d} needs a rounding modifier (.rn, .rz, .rm, .rp)"
        if wd > wa and (ri or rf and a != "bf16"):  # ptxas 13.0 takes (and ignores) .rn/.rz/.rm/.rp from .bf16
            return f"widening .{a} to .{d} is exact and takes no rounding modifier"
        if wd == wa and {a, d} == {"f16", "bf16"}:
            if ri:
                return f"converting .{a} to .{d} takes a rounding modifier (.rn, .rz, .rm, .rp), not '.{min(ri)}'"
        elif wd == wa and rf:
            return "a same-size float conversion takes an integer rounding modifier (.rni, ...), not " \
                   f"'.{min(rf)}'"
    elif rf or ri:
        return "an integer-to-integer conversion takes no rounding modifier"
    return None


def _one_of(group: set[str], what: str):
    def rule(ms: set[str], types: list[str]) -> str | None:
        n = len(ms & group)
        if n == 0:
            return f"a {what} ({', '.join('.' + g for g in sorted(group))}) is required"
        if n > 1:
            return f"more than one {what}"
        return None

    return rule


_ATOM_OPS = {"and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"}

_RULES = {
    "add": _arith_rule(),
    "sub": _arith_rule(),
    "mul": _mul_rule,
    "mad": _mad_rule,
    "fma": _arith_rule(required_rounding=True),
    "div": _arith_rule(required_rounding=True, approx_ok=True),
    "sqrt": _arith_rule(required_rounding=True, approx_ok=True),
    "rcp": _arith_rule(required_rounding=True, approx_ok=True, f64_ftz=True),
    "rsqrt": _arith_rule(approx_ok=True, approx_required=True),
    "sin": _arith_rule(approx_ok=True, approx_required=True),
    "cos": _arith_rule(approx_ok=True, approx_required=True),
    "lg2": _arith_rule(approx_ok=True, approx_required=True),
    "ex2": _arith_rule(approx_ok=True, approx_required=True),
    "tanh": _arith_rule(approx_ok=True, approx_required=True),
    "setp": _compare_rule,
    "set": _compare_rule,
    "cvt": _cvt_rule,
    "atom": _one_of(_ATOM_OPS, "operation"),
    "red": _one_of(_ATOM_OPS - {"cas", "exch"}, "operation"),
    "shfl": _one_of({"up", "down", "bfly", "idx"}, "shuffle mode"),
    "vote": _one_of({"all", "any", "uni", "ballot"}, "vote mode"),
}

__all__ = ["MAX_ERRORS", "PTX_OPCODES", "RegScope", "check"]


def blackwell_refusals(module: ast.Module) -> list[UnsupportedError]:
    """The Blackwell-only instructions of ``module`` (:func:`xcc.frontend.instructions.blackwell_only`), each with
    the located message IR lowering refuses it with: what ``xcc check --syntax-only`` reports, so that it and
    ``xcc check``/``xcc compile`` say the same."""
    out: list[UnsupportedError] = []

    def walk(stmts) -> None:
        for st in stmts:
            if isinstance(st, ast.Block):
                walk(st.body)
            elif isinstance(st, ast.Instruction) and blackwell_only(st.opcode, st.modifiers):
                text = ".".join((st.opcode, *st.modifiers))
                out.append(UnsupportedError(f"{text} is a Blackwell (sm_100a) instruction that xcc does not "
                                            "support yet", st.loc))

    for fn in module.functions:
        walk(fn.body or [])
    return out
