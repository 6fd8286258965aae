"""Machine code as text between backend stages (``xcc compile --print-after=STAGE``), for dumps and golden tests.

Before register allocation operands are virtual registers, printed ``%vN`` (32-bit), ``%wN`` (64-bit pair, halves
``%wN.lo``/``.hi``) and ``%pN`` (predicate), numbered per function in order of first appearance so that the text
does not depend on what was compiled before; afterwards physical registers print as the disassembler prints them
(:func:`xcc.backend.encoding.format_operand`).  Branch targets are block names until layout, control codes are shown
after the ``control-codes`` stage.  One line per instruction, each block headed by its name and successors::

    .L_entry:                                ; -> L__BB0_2, L__BB0_1
      S2R %v0, SR_TID.X
"""

from __future__ import annotations

from xcc.backend.encoding import format_ctrl, format_operand
from xcc.backend.minst import Half, MInst, VReg


class _Names:
    def __init__(self):
        self.ids: dict[VReg, int] = {}

    def __call__(self, v) -> str:
        if isinstance(v, Half):
            return f"{self(v.vreg)}.{'lo' if v.index == 0 else 'hi'}"
        n = self.ids.setdefault(v, len(self.ids))
        return f"%{'p' if v.width == 0 else 'v' if v.width == 1 else 'w'}{n}"


def _operand(kind: str, v, names: _Names) -> str:
    if isinstance(v, VReg | Half):
        return names(v)
    if isinstance(v, tuple) and v and isinstance(v[0], VReg):
        return ("!" if v[1] else "") + names(v[0])
    if kind == "L" and isinstance(v, str):
        return v
    return format_operand(kind, v, 0)


def format_minst(m: MInst, names: _Names, ctrl: bool = False) -> str:
    d = m.d
    text = d.mnemonic + "".join(f".{v}" for mod in d.mods if (v := m.mods.get(mod.name)))
    if m.guard is not None:
        text = f"@{_operand('P', m.guard, names)} {text}"
    ops = []
    for op in d.operands:
        if op.field in m.ops:
            ops.append(_operand(op.kind, m.ops[op.field], names))
    return f"{text} {', '.join(ops)}".rstrip() + (f"  {format_ctrl(m.ctrl)}" if ctrl else "")


def format_blocks(blocks, fn_name: str, ctrl: bool = False) -> str:
    """The machine code of function ``fn_name`` (a list of MBlock) as text; ``ctrl``: with control codes."""
    names = _Names()
    out = [f"machine function @{fn_name} {{"]
    for b in blocks:
        succs = f"  ; -> {', '.join(b.succs)}" if b.succs else ""
        out.append(f"{b.name}:{succs}")
        out.extend(f"  {format_minst(m, names, ctrl)}" for m in b.insts)
    out.append("}")
    return "\n".join(out)
