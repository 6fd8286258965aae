"""Dynamic stack allocation: ``alloca``, ``stacksave``, ``stackrestore`` (PTX ISA 7.3+, section 9.7.17,
"Stack Manipulation Instructions"), rewritten into ordinary PTX before a function is flattened (xcc.ir.build).

Each function that uses them gets an *arena*, a ``.local`` array of :data:`ARENA_BYTES` bytes (16-byte aligned,
part of its frame, so released when the function returns, as the manual says allocations are), and a hidden
64-bit stack pointer register, set to the arena's start at entry.  ``alloca.type ptr, size{, immAlign}``
(immAlign a power of two, default 8) rounds the stack pointer up to the alignment, gives that address (a local
address, for ``ld.local``/``st.local`` or ``cvta.local``) and moves the pointer past ``size`` bytes; an
allocation past the arena's end stops the kernel with a located fault (:data:`OVERFLOW_REASON`) instead of the
manual's undefined behaviour.  ``stacksave.type d`` copies the pointer, ``stackrestore.type a`` sets it.  The
``.u32`` forms convert to and from the 64-bit pointer.  Both engines and the xg1 backend run the rewritten
instructions, so they agree bit for bit."""

from __future__ import annotations

from dataclasses import replace

from xcc.diagnostics import PtxSemanticError, UnsupportedError
from xcc.frontend import ast

ARENA_BYTES = 4096
"""Bytes of each function's alloca arena (per thread)."""
OVERFLOW_REASON = f"alloca: stack overflow (the function's {ARENA_BYTES}-byte alloca arena is exhausted)"
OVERFLOW_MARK = "xcc_alloca_overflow"
"""The modifier of the guarded ``trap`` an overflow check ends in (xcc.ir.build gives it OVERFLOW_REASON)."""
OPCODES = ("alloca", "stacksave", "stackrestore")
ARENA = "__xcc_alloca_arena"
"""The name of the arena variable (a device function with one needs a deeper call stack on the IR engine)."""
_ARENA, _SP, _T, _OVF = ARENA, "%__xcc_sp", "%__xcc_at", "%__xcc_aovf"


def _uses(body) -> bool:
    return any(isinstance(s, ast.Instruction) and s.opcode in OPCODES
               or isinstance(s, ast.Block) and _uses(s.body) for s in body or ())


def rewrite(fn: ast.Function) -> ast.Function:
    """``fn`` with its stack-manipulation instructions rewritten (``fn`` itself when it has none)."""
    if not _uses(fn.body):
        return fn
    loc = fn.loc
    head = [ast.VarDecl("local", "b8", _ARENA, 16, [ARENA_BYTES], loc=loc),
            ast.RegDecl("u64", [_SP, _T + "0", _T + "1", _T + "2"], loc=loc), ast.RegDecl("pred", [_OVF], loc=loc),
            _i("mov", ("u64",), [ast.Reg(_SP), ast.Symbol(_ARENA)], loc)]
    return replace(fn, body=head + _body(fn.body))


def _body(body) -> list:
    out = []
    for s in body:
        if isinstance(s, ast.Block):
            out.append(replace(s, body=_body(s.body)))
        elif isinstance(s, ast.Instruction) and s.opcode in OPCODES:
            out += _expand(s)
        else:
            out.append(s)
    return out


def _i(op: str, mods: tuple, operands: list, loc, guard=None, debug_loc=None) -> ast.Instruction:
    return ast.Instruction(op, mods, operands, guard, loc, debug_loc)


def _expand(s: ast.Instruction) -> list:
    text = ".".join((s.opcode, *s.modifiers))
    if s.guard is not None:
        raise UnsupportedError(f"a guarded '{text}' is not supported yet (the stack pointer would need a select)",
                               s.loc)
    t = next((m for m in s.modifiers if m in ("u32", "u64")), None)
    ops, want = list(s.operands), {"alloca": (2, 3), "stacksave": (1, 1), "stackrestore": (1, 1)}[s.opcode]
    if t is None or not want[0] <= len(ops) <= want[1]:
        raise PtxSemanticError(f"'{text}' needs .u32 or .u64 and {' or '.join(map(str, sorted(set(want))))} "
                               "operands", s.loc)
    i = lambda op, mods, operands, guard=None: _i(op, mods, operands, s.loc, guard, s.debug_loc)  # noqa: E731
    sp, t0, t1, t2 = ast.Reg(_SP), ast.Reg(_T + "0"), ast.Reg(_T + "1"), ast.Reg(_T + "2")

    def to64(op):  # a .u32 operand widened into t2 (.u64: the operand itself)
        if t == "u64":
            return op
        return None if isinstance(op, ast.Imm) else i("cvt", ("u64", "u32"), [t2, op])

    def from64(dst, src):
        return i("mov", ("u64",), [dst, src]) if t == "u64" else i("cvt", ("u32", "u64"), [dst, src])

    if s.opcode == "stacksave":
        return [from64(ops[0], sp)]
    if s.opcode == "stackrestore":
        w = to64(ops[0])
        return [i("mov", ("u64",), [sp, ops[0]])] if w is ops[0] else [w, i("mov", ("u64",), [sp, t2])]
    align = 8
    if len(ops) == 3:
        a = ops[2]
        if not isinstance(a, ast.Imm) or a.kind != "int" or a.value <= 0 or a.value & (a.value - 1) \
                or a.value > 1 << 23:
            raise PtxSemanticError(f"'{text}': immAlign must be a power of two constant up to 2^23", s.loc)
        align = max(a.value, 8)
    if align > 16:
        raise UnsupportedError(f"'{text}': alignment {align} is not supported yet (the arena is 16-byte aligned)",
                               s.loc)
    size, pre = ops[1], []
    w = to64(size)
    if w is None:  # a .u32 immediate
        size = ast.Imm(size.value & 0xFFFFFFFF, "int")
    elif w is not size:
        pre, size = [w], t2
    return pre + [
        i("add", ("u64",), [t0, sp, ast.Imm(align - 1, "int")]),
        i("and", ("b64",), [t0, t0, ast.Imm(-align & 0xFFFFFFFFFFFFFFFF, "int")]),
        i("add", ("u64",), [t1, t0, size]),
        i("mov", ("u64",), [t2, ast.Symbol(_ARENA)]),
        i("add", ("u64",), [t2, t2, ast.Imm(ARENA_BYTES, "int")]),
        i("setp", ("gt", "u64"), [ast.Reg(_OVF), t1, t2]),
        i("setp", ("lt", "or", "u64"), [ast.Reg(_OVF), t1, t0, ast.Reg(_OVF)]),  # size wrapped around
        i("trap", (OVERFLOW_MARK,), [], ast.Guard(ast.Reg(_OVF))),
        i("mov", ("u64",), [sp, t1]),
        from64(ops[0], t0),
    ]
