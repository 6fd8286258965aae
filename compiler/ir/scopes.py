"""Name resolution for a PTX function body: nested ``{ }`` scopes, ``.reg`` ranges and labels.

Flattens a body into a list of :class:`FlatLabel` and :class:`FlatInst`, where
every register operand has become a :class:`RegVar` (a unique variable with
its declared type) and every label a unique key.  Inner scopes shadow outer
register names; labels are local to the scope that defines them (nvcc
inlines each ``asm()`` statement as such a scope, so labels repeat).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.types import ScalarType, ptx_type


@dataclass(frozen=True)
class RegVar:
    """One declared register: ``key`` is unique in the function, ``type`` its declared type."""

    key: str
    type: ScalarType
    vector: int | None = None


@dataclass(frozen=True)
class RegPart:
    """A video-instruction operand selector on a 32-bit register (PTX ISA 9.7.10): ``%r.b0``..``.b3`` (a byte),
    ``%r.h0``/``.h1`` (a half-word) of the scalar ones; the SIMD ones' masks (``.h10``, ``.b3210``, ...) and
    source selectors (``.h32``, ``.b7654``, ...).  Only the video instructions accept one; each checks its own."""

    reg: RegVar
    sel: str


VIDEO_SELECTOR = re.compile(r"b[0-7]{1,4}|h[0-3]{1,2}")
"""The spellings a video selector may take (the grammar's REG token admits the same)."""
_ELEMENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def element_or_part(rv: RegVar, comp: str) -> RegVar | RegPart | None:
    """``%v.x`` of vector register ``%v`` (PTX ISA 5.4.2: .x .y .z .w, or .r .g .b .a), one scalar register of
    its type per element; ``%r.b1`` of a scalar register; None for anything else."""
    if rv.vector and comp in _ELEMENTS and _ELEMENTS[comp] < rv.vector:
        return RegVar(f"{rv.key}.{'xyzw'[_ELEMENTS[comp]]}", rv.type)
    if not rv.vector and VIDEO_SELECTOR.fullmatch(comp):
        return RegPart(rv, comp)
    return None


# The carry flag CC.CF of extended-precision arithmetic (PTX ISA 9.7.1.x: add.cc, addc, ...): implicit per-thread
# state, modelled as a predicate register that no PTX name can denote ('.' is not an identifier character), so
# the SSA builder threads it through control flow like any register.
CC_REG = RegVar("%cc.cf", ptx_type("pred"))


@dataclass
class FlatLabel:
    key: str
    loc: object = None
    targets: tuple[str, ...] | None = None  # a ``.branchtargets`` table: the label keys it lists


@dataclass
class FlatInst:
    inst: ast.Instruction  # operands: ast.Reg replaced by RegVar, branch labels by label keys (str)


@dataclass
class FlatVar:
    decl: ast.VarDecl
    key: str


class _Scope:
    def __init__(self, parent: _Scope | None, sid: int):
        self.parent = parent
        self.sid = sid
        self.regs: dict[str, RegVar] = {}
        self.labels: dict[str, str] = {}
        self.vars: dict[str, str] = {}

    def _find(self, table: str, name: str):
        """Look ``name`` up in this scope's ``table`` ('regs', 'labels' or 'vars'), then outward."""
        s: _Scope | None = self
        while s is not None:
            found = getattr(s, table).get(name)
            if found is not None:
                return found
            s = s.parent
        return None

    def find_reg(self, name: str) -> RegVar | None:
        return self._find("regs", name)

    def find_label(self, name: str) -> str | None:
        return self._find("labels", name)

    def find_var(self, name: str) -> str | None:
        return self._find("vars", name)


BRANCH_OPCODES = frozenset({"bra", "brx"})


def flatten(fn: ast.Function) -> tuple[list[FlatLabel | FlatInst], list[FlatVar]]:
    """Resolve names in ``fn.body``; returns the flat item list and the function's variables."""
    ids = itertools.count()
    items: list[FlatLabel | FlatInst] = []
    variables: list[FlatVar] = []

    def declare(stmts: list, scope: _Scope) -> None:
        for st in stmts:
            if isinstance(st, ast.RegDecl):
                t = ptx_type(st.type)
                for base in st.names:
                    names = [f"{base}{i}" for i in range(st.count)] if st.count is not None else [base]
                    for n in names:
                        key = n if scope.parent is None else f"{n}.{scope.sid}"
                        scope.regs[n] = RegVar(key, t, st.vector)
            elif isinstance(st, ast.Label):
                scope.labels[st.name] = st.name if scope.parent is None else f"{st.name}.{scope.sid}"
            elif isinstance(st, ast.VarDecl):
                key = st.name if scope.parent is None else f"{st.name}.{scope.sid}"
                scope.vars[st.name] = key
                variables.append(FlatVar(st, key))

    def resolve(op, scope: _Scope, is_branch: bool):
        if isinstance(op, ast.Reg):
            rv = scope.find_reg(op.name)
            if rv is None and "." in op.name:  # %v.x (vector element), %r.b1 (video operand selector)
                base, _, comp = op.name.partition(".")
                brv = scope.find_reg(base)
                rv = element_or_part(brv, comp) if brv is not None else None
            if rv is None:
                # A name that is not a register may be a variable, a parameter or a function.
                if scope.find_var(op.name) is not None:
                    return ast.Symbol(scope.find_var(op.name), op.loc)
                raise PtxSemanticError(f"use of undeclared register '{op.name}'", op.loc)
            return rv
        if isinstance(op, ast.Symbol):
            if is_branch:
                key = scope.find_label(op.name)
                if key is None:
                    raise PtxSemanticError(f"branch to undefined label '{op.name}'", op.loc)
                return key
            rv = scope.find_reg(op.name)
            if rv is not None:
                return rv
            var = scope.find_var(op.name)
            return ast.Symbol(var, op.loc) if var is not None else op
        if isinstance(op, ast.SymbolOffset):  # var+imm: the variable's unique name
            var = scope.find_var(op.name)
            return replace(op, name=var) if var is not None else op
        if isinstance(op, ast.Address):
            base = resolve(op.base, scope, False) if op.base is not None else None
            if op.elements:  # [tensorMap, {c0, c1}]: the coordinates too
                return replace(op, base=base, elements=tuple(resolve(e, scope, False) for e in op.elements))
            return replace(op, base=base)
        if isinstance(op, ast.Vector):
            return replace(op, elements=tuple(resolve(e, scope, False) for e in op.elements))
        if isinstance(op, ast.Negated):  # (-%r.h1: the selector is resolved with the register, a RegPart)
            return replace(op, operand=resolve(op.operand, scope, False))
        return op

    def walk(stmts: list, scope: _Scope) -> None:
        declare(stmts, scope)
        for st in stmts:
            if isinstance(st, ast.Block):
                walk(st.body, _Scope(scope, next(ids)))
            elif isinstance(st, ast.Label):
                targets = None
                if st.targets is not None:  # name: .branchtargets A, B; (what brx.idx chooses from)
                    targets = tuple(resolve(ast.Symbol(t, st.loc), scope, True) for t in st.targets)
                items.append(FlatLabel(scope.labels[st.name], st.loc, targets))
            elif isinstance(st, ast.Instruction):
                is_branch = st.opcode in BRANCH_OPCODES
                ops = [resolve(o, scope, is_branch) for o in st.operands]
                guard = st.guard
                if guard is not None:
                    rv = scope.find_reg(guard.reg.name)
                    if rv is None:
                        raise PtxSemanticError(f"use of undeclared register '{guard.reg.name}'", guard.reg.loc)
                    guard = ast.Guard(rv, guard.negated)
                items.append(FlatInst(replace(st, operands=ops, guard=guard)))

    walk(fn.body or [], _Scope(None, next(ids)))
    return items, variables
