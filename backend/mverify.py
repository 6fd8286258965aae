"""The machine-code verifier (``xcc compile --verify-ir`` after every backend stage), in the spirit of LLVM's
``-verify-machineinstrs``: checks what every later stage relies on, and names the stage that broke it.

* every operand field an instruction's definition requires is present, and no field it does not define;
* register operands hold registers of the operand's kind: a 32-bit register (``R``) a virtual register of width 1,
  a half of a pair, or a physical register below 256; a pair (``W``) a virtual register of width 2 or an even
  physical register; a predicate (``P``) a predicate virtual register or a physical predicate (0-7);
* branch targets name blocks of the function (a call's names a function), and block successors exist;
* from register allocation on, no virtual register remains.
"""

from __future__ import annotations

from xcc.backend.isa import CALLS, PT, RZ
from xcc.backend.minst import Half, Imm, VReg
from xcc.diagnostics import XccError


class MachineVerifyError(XccError):
    """Machine code that breaks an invariant of the backend: a bug in the stage named."""


def verify_machine(blocks, stage: str, fn_name: str, allocated: bool) -> None:
    names = {b.name for b in blocks}
    for b in blocks:
        for s in b.succs:
            if s not in names:
                _fail(stage, fn_name, b.name, None, f"successor '{s}' is not a block")
        for i, m in enumerate(b.insts):
            where = (b.name, i)
            fields = {op.field for op in m.d.operands}
            extra = sorted(set(m.ops) - fields)
            if extra:
                _fail(stage, fn_name, *where, f"{m.mnemonic} has no operand field(s) {', '.join(extra)}")
            for op in m.d.operands:
                if op.field not in m.ops:
                    continue
                v = m.ops[op.field]
                problem = _operand_problem(op.kind, v, allocated)
                if problem:
                    _fail(stage, fn_name, *where, f"{m.mnemonic} operand {op.field} ({op.kind}): {problem}")
                if op.kind == "L" and isinstance(v, str) and v not in names and m.mnemonic not in CALLS:
                    _fail(stage, fn_name, *where, f"{m.mnemonic} branches to '{v}', which is not a block")
            if m.guard is not None:
                problem = _operand_problem("P", m.guard[0], allocated)
                if problem:
                    _fail(stage, fn_name, *where, f"guard: {problem}")


def _operand_problem(kind: str, v, allocated: bool) -> str | None:
    if isinstance(v, VReg | Half) and allocated:
        return f"virtual register {v!r} after register allocation"
    if kind == "R":
        ok = (isinstance(v, VReg) and v.width == 1) or isinstance(v, Half) or (isinstance(v, int) and 0 <= v <= RZ)
        return None if ok else f"expected a 32-bit register, got {v!r}"
    if kind == "W":
        ok = (isinstance(v, VReg) and v.width == 2) or (isinstance(v, int) and (v == RZ or 0 <= v < RZ and v % 2 == 0))
        return None if ok else f"expected a 64-bit register pair, got {v!r}"
    if kind == "P":
        reg = v[0] if isinstance(v, tuple) else v
        ok = (isinstance(reg, VReg) and reg.width == 0) or (isinstance(reg, int) and 0 <= reg <= PT)
        return None if ok else f"expected a predicate, got {v!r}"
    if kind in ("RIC", "WIC") and isinstance(v, VReg):
        want = 1 if kind == "RIC" else 2
        return None if v.width == want else f"expected a {32 * want}-bit register, got {v!r}"
    if kind == "I" and not isinstance(v, int | Imm | str):
        return f"expected an immediate, got {v!r}"
    return None


def _fail(stage: str, fn_name: str, block: str, index: int | None, message: str):
    at = f"block {block}" + (f", instruction {index}" if index is not None else "")
    raise MachineVerifyError(f"machine verifier after {stage} in '{fn_name}', {at}: {message}")
