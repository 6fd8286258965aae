""":class:`xcc.frontend.ast.Module` -> PTX text.

``parse(print_module(m)) == m`` for every module ``m`` that :func:`xcc.frontend.parser.parse`
returns (equality ignores source locations), and printing is idempotent. The output is valid
PTX for ptxas: LTO prints linked modules with it.

What the tree does not say is chosen here: the header comes first (``.version``, ``.target``,
``.address_size``, ``.file``, module ``.pragma``), then variables, functions and ``.alias``
directives interleaved so that every name is declared before an initialiser or another
directive uses it (:func:`_module_order`), then the ``.section`` debug blocks. A ``.loc`` line
is printed before an instruction whenever its ``debug_loc`` differs from the last one printed
in its function. Syntax that the tree stores as a :class:`~ast.Vector` is chosen by the
opcode: ``( ... )`` for the operands of ``call``, ``a|b`` for the first operand of
:data:`PAIR_DEST_OPCODES`, ``{ ... }`` otherwise.
"""

from __future__ import annotations

from dataclasses import replace

from xcc.frontend import ast

# Opcodes whose first operand may be a destination pair ``d|p``.
PAIR_DEST_OPCODES = frozenset({"setp", "shfl", "elect", "match"})

_INDENT = "\t"


def print_module(module: ast.Module) -> str:
    """The PTX text of ``module``."""
    out: list[str] = []
    if module.version:
        out.append(f".version {module.version}")
    if module.target:
        out.append(f".target {', '.join(module.target)}")
    out.append(f".address_size {module.address_size}")
    for index, name in sorted(module.files.items()):
        out.append(f".file {index} {_string(name)}")
    out += [format_pragma(p) for p in module.pragmas]
    for item in _module_order(module):
        out.append("")
        if isinstance(item, ast.Function):
            out += format_function(item)
        elif isinstance(item, ast.VarDecl):
            out.append(format_var_decl(item))
        else:
            out.append(f".alias {item.name}, {item.target};")
    for section in module.sections:
        out += ["", section]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- module layout


def _module_order(module: ast.Module) -> list[ast.Function | ast.VarDecl | ast.Alias]:
    """Functions, variables and aliases, each list in its own order, merged so that a variable
    comes as early as the names in its initialiser allow and an alias right after the names it
    joins. The parsed text was such an order, so this one is valid whenever the input was."""
    names = {f.name for f in module.functions} | {v.name for v in module.variables}
    seen: set[str] = set()
    out: list = []
    variables, functions, aliases = list(module.variables), list(module.functions), list(module.aliases)

    def ready(deps: set[str]) -> bool:
        return deps <= seen

    def emit(item) -> None:
        out.append(item)
        seen.add(item.name)
        while aliases and ready({aliases[0].name, aliases[0].target} & names):
            out.append(aliases.pop(0))

    while aliases and ready({aliases[0].name, aliases[0].target} & names):
        out.append(aliases.pop(0))
    while variables or functions:
        if variables and (not functions or ready(_init_names(variables[0]) & names)):
            emit(variables.pop(0))
        else:
            emit(functions.pop(0))
    return out + aliases


def _init_names(var: ast.VarDecl) -> set[str]:
    deps = set()
    for el in var.init or ():
        if isinstance(el, ast.Symbol):
            deps.add(el.name)
        elif isinstance(el, ast.Address) and el.base is not None:
            deps.add(getattr(el.base, "name", ""))
    return deps


# --------------------------------------------------------------------------- functions


def format_function(fn: ast.Function) -> list[str]:
    """The lines of a function definition or declaration."""
    head = f".{fn.linkage} " if fn.linkage else ""
    head += ".entry " if fn.is_entry else ".func "
    if fn.return_params:
        head += f"({', '.join(format_param(p) for p in fn.return_params)}) "
    head += fn.name
    lines = [head + "("]
    lines += [f"{_INDENT}{format_param(p)}{',' if i < len(fn.params) - 1 else ''}"
              for i, p in enumerate(fn.params)]
    lines.append(")")
    lines += [_INDENT + d for d in _directives(fn)]
    if fn.body is None:
        lines[-1] += ";"
        return lines
    lines.append("{")
    lines += _body(fn.body, 1, [None])
    lines.append("}")
    return lines


def format_param(p: ast.Param) -> str:
    """``.param .u64 .ptr .global .align 8 name``, ``.param .align 8 .b8 blob[368]``, ``.reg .b32 x``."""
    words = [f".{p.space}", f".align {p.align}" if p.align is not None else "", f".{p.type}" if p.type else ""]
    if p.ptr_space is not None:
        words += [".ptr", f".{p.ptr_space}" if p.ptr_space != "generic" else ""]
        words += [f".align {p.ptr_align}" if p.ptr_align is not None else ""]
    return " ".join(w for w in words if w) + " " + p.name + _dims(p.dims)


def _directives(fn: ast.Function) -> list[str]:
    return [f".{name} {', '.join(map(str, values))}".rstrip() for name, values in fn.directives.items()]


def _dims(dims: list) -> str:
    return "".join(f"[{d}]" if d is not None else "[]" for d in dims)


# --------------------------------------------------------------------------- statements


def _body(body: list, depth: int, last_loc: list) -> list[str]:
    """Statement lines at ``depth``; ``last_loc[0]`` is the ``.loc`` printed last."""
    pad = _INDENT * depth
    out = []
    for st in body:
        if isinstance(st, ast.Instruction):
            if st.debug_loc is not None and st.debug_loc != last_loc[0]:
                out.append(pad + ".loc " + " ".join(map(str, st.debug_loc)))
                last_loc[0] = st.debug_loc
            out.append(pad + format_instruction(st))
        elif isinstance(st, ast.Label):
            out.append(format_label(st))
        elif isinstance(st, ast.RegDecl):
            out.append(pad + format_reg_decl(st))
        elif isinstance(st, ast.VarDecl):
            out.append(pad + format_var_decl(st))
        elif isinstance(st, ast.Block):
            out += [pad + "{", *_body(st.body, depth + 1, last_loc), pad + "}"]
        elif isinstance(st, ast.Pragma):
            out.append(pad + format_pragma(st))
        else:
            raise TypeError(f"not a PTX statement: {st!r}")
    return out


def format_label(label: ast.Label) -> str:
    """``name:``, a call prototype or a ``.branchtargets`` table."""
    if label.targets is not None:
        return f"{label.name}: .branchtargets {', '.join(label.targets)};"
    if label.prototype is not None:
        proto = label.prototype
        text = f"{label.name}: .callprototype "
        if proto.return_params:
            text += f"({', '.join(format_param(p) for p in proto.return_params)}) "
        text += f"_ ({', '.join(format_param(p) for p in proto.params)})"
        return " ".join([text, *_directives(proto)]) + ";"
    return f"{label.name}:"


def format_reg_decl(decl: ast.RegDecl) -> str:
    """``.reg .v4 .f32 %v<2>;`` / ``.reg .pred p, q;``."""
    vec = f".v{decl.vector} " if decl.vector else ""
    count = f"<{decl.count}>" if decl.count is not None else ""
    return f".reg {vec}.{decl.type} " + ", ".join(n + count for n in decl.names) + ";"


def format_var_decl(var: ast.VarDecl) -> str:
    """``[linkage] .space [.attribute(...)] [.align N] [.vN] .type name[dims] [= init];``."""
    words = [f".{var.linkage}"] if var.linkage else []
    words.append(f".{var.space}")
    if var.attributes:
        words.append(f".attribute({', '.join('.' + a for a in var.attributes)})")
    if var.align is not None:
        words.append(f".align {var.align}")
    if var.vector:
        words.append(f".v{var.vector}")
    if var.type:
        words.append(f".{var.type}")
    text = " ".join(words) + " " + var.name + _dims(var.dims)
    if var.init is not None:
        text += " = " + format_initialiser(var)
    return text + ";"


def format_initialiser(var: ast.VarDecl) -> str:
    """The initialiser, nested by the inner dimensions when the element count allows it."""
    if var.init and all(isinstance(e, ast.InitField) for e in var.init):
        return "{ " + ", ".join(f"{e.name} = {e.value}" for e in var.init) + " }"
    elements = [format_constant(e) for e in var.init]
    shape = [*var.dims[1:], *([var.vector] if var.vector else [])]
    if not var.dims and not var.vector and len(elements) == 1:
        return elements[0]
    return _nest(elements, shape)


def _nest(elements: list[str], shape: list) -> str:
    size = 1
    for d in shape:
        size *= d or 0
    if not shape or size <= 0 or len(elements) % size:
        return "{" + ", ".join(elements) + "}"
    groups = [_nest(elements[i : i + size], shape[1:]) for i in range(0, len(elements), size)]
    return "{" + ", ".join(groups) + "}"


def format_pragma(p: ast.Pragma) -> str:
    return f".pragma {_string(p.text)};"


def _string(text: str) -> str:
    """A PTX string literal; ``text`` is kept as written (escapes included) by the parser."""
    return f'"{text}"'


# --------------------------------------------------------------------------- instructions


def format_instruction(ins: ast.Instruction) -> str:
    """``@!%p1 add.s32 %r1, %r2, 4;``."""
    text = ""
    if ins.guard is not None:
        text = f"@{'!' if ins.guard.negated else ''}{ins.guard.reg.name} "
    text += ".".join((ins.opcode, *ins.modifiers))
    if ins.operands:
        ops = []
        for i, op in enumerate(ins.operands):
            if isinstance(op, ast.Vector) and ins.opcode == "call":
                ops.append("(" + ", ".join(format_operand(e) for e in op.elements) + ")")
            elif isinstance(op, ast.Vector) and i == 0 and ins.opcode in PAIR_DEST_OPCODES \
                    and len(op.elements) == 2:
                ops.append("|".join(format_operand(e) for e in op.elements))
            else:
                ops.append(format_operand(op))
        text += " " + ", ".join(ops)
    return text + ";"


def format_operand(op: ast.Operand) -> str:
    """One instruction operand; vectors in braces (see :func:`format_instruction` for the rest)."""
    if isinstance(op, ast.Reg):
        return op.name
    if isinstance(op, ast.SpecialReg):
        return f"%{op.name}" + (f".{op.component}" if op.component else "")
    if isinstance(op, ast.Imm):
        return _imm(op)
    if isinstance(op, ast.Symbol):
        return op.name
    if isinstance(op, ast.SymbolOffset):
        return f"{op.name}+{op.offset}"
    if isinstance(op, ast.Sink):
        return "_"
    if isinstance(op, ast.Negated):
        return ("-" if op.minus else "!") + op.operand.name
    if isinstance(op, ast.Vector):
        return "{" + ", ".join(format_operand(e) for e in op.elements) + "}"
    if isinstance(op, ast.Address):
        return _address(op)
    raise TypeError(f"not a PTX operand: {op!r}")


def _imm(imm: ast.Imm) -> str:
    if imm.kind == "float":
        return f"0f{imm.value:08X}" if imm.bits == 32 else f"0d{imm.value:016X}"
    return str(imm.value)


def _address(a: ast.Address) -> str:
    if a.unified:
        return _address(replace(a, unified=False)) + ".unified"
    if a.elements:
        parts = ([format_operand(a.base)] if a.base is not None else []) + [format_operand(e) for e in a.elements]
        return "[" + ", ".join(parts) + "]"
    if a.base is None:
        return f"[{a.offset}]"
    base = format_operand(a.base)
    return f"[{base}+{a.offset}]" if a.offset else f"[{base}]"


def format_constant(c: ast.Operand) -> str:
    """One element of a variable initialiser: an integer, a float bit pattern, a name, or an
    address constant ``name+4``, ``generic(name)+4``, ``0xFF00(generic(name)+4)``."""
    if isinstance(c, ast.Imm):
        return _imm(c)
    if isinstance(c, ast.Symbol):
        return c.name
    if isinstance(c, ast.Address) and c.base is not None:
        text = f"generic({c.base.name})" if c.generic else c.base.name
        if c.offset:
            text += f"+{c.offset}" if c.offset > 0 else f"-{-c.offset}"
        return f"0x{c.mask:X}({text})" if c.mask is not None else text
    raise TypeError(f"not a PTX constant: {c!r}")


__all__ = ["PAIR_DEST_OPCODES", "format_constant", "format_function", "format_instruction",
           "format_operand", "format_param", "format_var_decl", "print_module"]
