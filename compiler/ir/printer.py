"""The IR's text form, one instruction a line, for ``--print-after`` and golden tests.

    func @saxpy(.u32 n @0, .f32 a @4, ...) {         (func @f(.b32 a @0) -> (.b32 r @4) { for a .func)
    entry:
      %3:u32 = sreg tid.x
      %7:pred = setp.s32 %5, %6 {cmp=ge}
      call @f(param0.1) -> (retval0.1)
      cbr %7, bb3, bb2
    bb2:
      %9:u32 = phi [%4, entry], [%8, bb2]
    }
"""

from __future__ import annotations

from xcc.ir.core import Block, Const, Function, Instruction, Module, Phi, Value


class Namer:
    """Stable per-function names: %0, %1, ... in order of definition."""

    def __init__(self):
        self.names: dict[Value, str] = {}

    def __call__(self, v: Value) -> str:
        if isinstance(v, Const):
            return f"{v.type}:{v.bits:#x}"
        if v not in self.names:
            self.names[v] = f"%{len(self.names)}"
        return self.names[v]


def _attr(v) -> str:
    if isinstance(v, list) and v and isinstance(v[0], Block):
        return "[" + ", ".join(b.name for b in v) + "]"
    if isinstance(v, bool):
        return "" if v else "false"
    return str(v)


def format_inst(inst: Instruction | Phi, name: Namer) -> str:
    if isinstance(inst, Phi):
        pairs = ", ".join(f"[{name(a)}, {p.name}]" for a, p in zip(inst.args, inst.block.preds))
        return f"{name(inst.result)}:{inst.result.type} = phi {pairs}"
    lhs = f"{name(inst.result)}:{inst.result.type} = " if inst.result is not None else ""
    if inst.op == "call":  # call @f(param0, param1) -> (retval0)
        rets = inst.attrs.get("rets") or []
        text = f"call @{inst.attrs['callee']}({', '.join(inst.attrs.get('params') or [])})"
        text += f" -> ({', '.join(rets)})" if rets else ""
        return text + (f" ; line {inst.loc.line}" if inst.loc is not None else "")
    op = inst.op + (f".{inst.type}" if inst.type is not None else "")
    args = ", ".join(name(a) for a in inst.args)
    targets = inst.attrs.get("targets")
    if targets:
        args = ", ".join(filter(None, [args, ", ".join(b.name for b in targets)]))
    attrs = {k: v for k, v in inst.attrs.items() if k != "targets"}
    attr_text = (" {" + ", ".join(f"{k}={_attr(v)}" if _attr(v) else k for k, v in sorted(attrs.items())) + "}"
                 if attrs else "")
    line = f" ; line {inst.loc.line}" if inst.loc is not None else ""
    return f"{lhs}{op} {args}{attr_text}".rstrip() + line


def print_function(fn: Function, with_lines: bool = False) -> str:
    name = Namer()
    params = ", ".join(f".{p.type} {p.name} @{p.offset}" for p in fn.params)
    rets = ", ".join(f".{p.type} {p.name} @{p.offset}" for p in fn.ret_params)
    rets = f" -> ({rets})" if rets else ""
    out = [f"{'entry' if fn.is_entry else 'func'} @{fn.name}({params}){rets} {{"]
    for v in fn.variables:
        out.append(f"  .{v.space} {v.name}[{v.size}] align {v.align}")
    for b in fn.blocks:
        out.append(f"{b.name}:")
        for phi in b.phis:
            out.append("  " + format_inst(phi, name))
        for inst in b.instructions:
            text = format_inst(inst, name)
            if not with_lines:
                text = text.split(" ; line ")[0]
            out.append("  " + text)
    out.append("}")
    return "\n".join(out)


def print_module(mod: Module, with_lines: bool = False) -> str:
    parts = [f".{v.space} {v.name}[{v.size}] align {v.align}" for v in mod.variables]
    parts += [print_function(f, with_lines) for f in mod.functions]
    return "\n\n".join(parts) + "\n"
