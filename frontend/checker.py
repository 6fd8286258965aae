"""Checks on a parsed PTX module that the grammar cannot make: every opcode exists, every
register is declared in an enclosing ``{ }`` scope, every name and branch target resolves.

:func:`check` raises :class:`~xcc.diagnostics.PtxSemanticError` at the first problem, pointing
at the offending token. :class:`RegScope` is shared with the parser, which uses it to tell
plain-identifier registers (``.reg .pred p;``) from symbols.
"""

from __future__ import annotations

import difflib
from collections import ChainMap

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast

# Base names (text before the first '.') of every PTX ISA 9.0 instruction.
PTX_OPCODES = frozenset(
    """
    add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi bmsk
    szext dp4a dp2a addc subc madc testp copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh
    set setp selp slct and or xor not cnot lop3 shf shl shr
    mov shfl prmt ld ldu st multimem prefetch prefetchu applypriority discard createpolicy
    isspacep cvta cvt mapa getctarank cp tensormap ldmatrix stmatrix movmatrix
    tex tld4 txq istypep suld sust sured suq
    bra brx call ret exit
    bar barrier membar fence atom red vote match activemask redux elect mbarrier griddepcontrol
    clusterlaunchcontrol wmma mma wgmma tcgen05 setmaxnreg
    trap brkpt nanosleep pmevent stackrestore stacksave alloca
    vadd vsub vabsdiff vmin vmax vshl vshr vmad vset
    vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4
    """.split()
)

BRANCH_OPCODES = frozenset({"bra"})


class RegScope:
    """The registers declared directly in one scope, with a link to the enclosing scope.

    ``.reg .b32 %r<10>;`` declares the range %r0..%r9; ``.reg .pred p, q;`` single names."""

    def __init__(self, parent: RegScope | None = None):
        self.parent = parent
        self.names: dict[str, ast.RegDecl | None] = {}
        self.ranges: dict[str, int] = {}

    def declare(self, decl: ast.RegDecl) -> str | None:
        """Add a declaration; return a name it declares twice in this scope, if any."""
        dup = None
        for name in decl.names:
            if decl.count is None:
                if name in self.names:
                    dup = name
                self.names[name] = decl
            else:
                self.ranges[name] = max(self.ranges.get(name, 0), decl.count)
        return dup

    def declares(self, name: str) -> bool:
        scope: RegScope | None = self
        while scope is not None:
            if name in scope.names or (scope.ranges and _in_range(name, scope.ranges)):
                return True
            scope = scope.parent
        return False


def _in_range(name: str, ranges: dict[str, int]) -> bool:
    """Is ``name`` (e.g. '%rd12') one of the registers of a ``prefix<count>`` declaration?"""
    i = len(name)
    while i > 0 and name[i - 1].isdigit():
        i -= 1
        digits = name[i:]
        if len(digits) > 1 and digits[0] == "0":
            continue
        count = ranges.get(name[:i])
        if count is not None and int(digits) < count:
            return True
    return False


def _suggest(opcode: str) -> str | None:
    """The closest real opcode, preferring ones that share the first letter."""
    close = difflib.get_close_matches(opcode, PTX_OPCODES, n=5, cutoff=0.6)
    score = {c: difflib.SequenceMatcher(None, opcode, c).ratio() for c in close}
    return min(close, key=lambda c: (-score[c], c[:1] != opcode[:1], c), default=None)


def check(module: ast.Module, text: str) -> None:
    """Raise PtxSemanticError for the first semantic problem in ``module``."""
    del text  # every node carries its own source line
    functions = {f.name for f in module.functions}
    module_names = functions | {v.name for v in module.variables}
    bodies: dict[str, ast.Function] = {}
    for fn in module.functions:
        if fn.body is None:
            continue
        if fn.name in bodies:
            raise PtxSemanticError(f"redefinition of function '{fn.name}'", fn.loc)
        bodies[fn.name] = fn
        regs = RegScope()
        names: set[str] = set()
        for p in fn.params + fn.return_params:
            if p.space == "reg":
                regs.names[p.name] = None
            else:
                names.add(p.name)
        _Walker(functions).block(fn.body, regs, ChainMap(names, module_names), ChainMap())


class _Walker:
    def __init__(self, functions: set[str]):
        self.functions = functions

    def block(self, body: list, parent_regs: RegScope, parent_names: ChainMap, parent_labels: ChainMap):
        regs = RegScope(parent_regs)
        names: set[str] = set()
        labels: dict[str, ast.Label] = {}
        for st in body:
            if isinstance(st, ast.RegDecl):
                dup = regs.declare(st)
                if dup is not None:
                    raise PtxSemanticError(f"redeclaration of register '{dup}'", st.loc)
            elif isinstance(st, ast.VarDecl):
                names.add(st.name)
            elif isinstance(st, ast.Label):
                if st.name in labels:
                    first = labels[st.name].loc
                    where = f" (first defined at line {first.line})" if first else ""
                    raise PtxSemanticError(f"duplicate label '{st.name}'{where}", st.loc)
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
            raise PtxSemanticError(f"unknown opcode '{ins.opcode}'{suffix}", ins.loc)
        if ins.guard is not None:
            self.operand(ins.guard.reg, regs, names, labels)
        ops = ins.operands
        if ins.opcode in BRANCH_OPCODES and ops and isinstance(ops[0], ast.Symbol):
            if ops[0].name not in labels:
                raise PtxSemanticError(f"branch to undefined label '{ops[0].name}'", ops[0].loc or ins.loc)
            ops = ops[1:]
        elif ins.opcode == "call":
            ops = self.call_operands(ins, labels)
        for op in ops:
            self.operand(op, regs, names, labels)

    def call_operands(self, ins: ast.Instruction, labels: ChainMap) -> list:
        """Check the call target (and prototype); return the operands left to check."""
        ops = list(ins.operands)
        i = 1 if ops and isinstance(ops[0], ast.Vector) else 0
        if i < len(ops) and isinstance(ops[i], ast.Symbol):
            target = ops.pop(i)
            if target.name not in self.functions:
                raise PtxSemanticError(f"call to undeclared function '{target.name}'", target.loc or ins.loc)
        if ops and isinstance(ops[-1], ast.Symbol):
            proto = ops.pop()
            label = labels.get(proto.name)
            if label is None or label.prototype is None:
                raise PtxSemanticError(f"'{proto.name}' is not a call prototype", proto.loc or ins.loc)
        return ops

    def operand(self, op: ast.Operand, regs: RegScope, names: ChainMap, labels: ChainMap):
        if isinstance(op, ast.Reg):
            name = op.name.split(".", 1)[0]
            if not regs.declares(name):
                raise PtxSemanticError(f"use of undeclared register '{name}'", op.loc)
        elif isinstance(op, ast.Symbol):
            if op.name not in names and op.name not in labels:
                raise PtxSemanticError(f"use of undeclared name '{op.name}'", op.loc)
        elif isinstance(op, ast.Address):
            if op.base is not None:
                self.operand(op.base, regs, names, labels)
            for el in op.elements:
                self.operand(el, regs, names, labels)
        elif isinstance(op, ast.Vector):
            for el in op.elements:
                self.operand(el, regs, names, labels)
        elif isinstance(op, ast.Negated):
            self.operand(op.operand, regs, names, labels)


__all__ = ["PTX_OPCODES", "RegScope", "check"]
