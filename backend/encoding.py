"""Encoder, decoder and disassembler of xg1 instruction words, derived from :mod:`xcc.backend.isa`."""

from __future__ import annotations

from xcc.backend.isa import (
    B_CBANK,
    B_IMM,
    B_REG,
    BY_OPCODE,
    FIELDS,
    PT,
    RZ,
    SPECIAL_REGS,
)
from xcc.backend.minst import CBank, Ctrl, Imm, MInst
from xcc.diagnostics import ObjectFormatError

WORD_BYTES = 16


def _put(word: int, field: str, value: int) -> int:
    lo, width = FIELDS[field]
    if not 0 <= value < (1 << width):
        raise ValueError(f"value {value} does not fit field {field} ({width} bits)")
    return word | (value << lo)


def _get(word: int, field: str) -> int:
    lo, width = FIELDS[field]
    return (word >> lo) & ((1 << width) - 1)


def encode(inst: MInst) -> int:
    """The 128-bit word of an allocated instruction (all registers are ints)."""
    d = inst.d
    w = _put(0, "opcode", d.opcode)
    g = inst.guard
    w = _put(w, "guard", PT if g is None else g[0])
    w = _put(w, "guard_neg", int(bool(g and g[1])))
    for op in d.operands:
        if op.field not in inst.ops:
            # An omitted register operand is RZ and an omitted predicate PT, never R0 or P0.
            if op.kind == "P":
                w = _put(w, op.field, PT)
            elif op.kind in ("R", "W") or (op.field == "b" and op.kind in ("RIC", "WIC")):
                w = _put(w, op.field, RZ)
            continue
        v = inst.ops[op.field]
        if op.field == "b":
            if isinstance(v, Imm):
                w = _put(_put(w, "bkind", B_IMM), "b", v.value & 0xFFFFFFFF)
            elif isinstance(v, CBank):
                w = _put(_put(w, "bkind", B_CBANK), "b", (v.bank << 16) | v.offset)
            elif op.kind in ("I", "L", "SR"):
                w = _put(_put(w, "bkind", B_IMM), "b", int(v) & 0xFFFFFFFF)
            else:
                w = _put(_put(w, "bkind", B_REG), "b", int(v))
        elif op.field == "ps":
            reg, neg = v if isinstance(v, tuple) else (v, False)
            w = _put(_put(w, "ps", reg), "ps_neg", int(neg))
        else:
            w = _put(w, op.field, int(v))
    shift, mods = 0, 0
    for m in d.mods:
        mods |= m.values.index(inst.mods.get(m.name, m.values[0])) << shift
        shift += m.width
    w = _put(w, "mods", mods)
    c = inst.ctrl
    for f, v in (("stall", c.stall), ("yield", int(c.yield_)), ("wsb", c.wsb), ("rsb", c.rsb), ("wait", c.wait)):
        w = _put(w, f, v)
    return w


def decode(word: int, index: int = 0) -> MInst:
    """The instruction of a 128-bit word; an unknown opcode is an :class:`ObjectFormatError`."""
    opcode = _get(word, "opcode")
    d = BY_OPCODE.get(opcode)
    if d is None:
        raise ObjectFormatError(f"invalid opcode {opcode:#x} in instruction {index}")
    ops: dict[str, object] = {}
    bkind = _get(word, "bkind")
    if bkind not in (B_REG, B_IMM, B_CBANK):
        raise ObjectFormatError(f"invalid operand-B kind {bkind} in instruction {index} ({d.mnemonic})")
    for op in d.operands:
        if op.field == "b":
            raw = _get(word, "b")
            if op.kind in ("I", "L", "SR"):
                ops["b"] = raw - (1 << 32) if raw >= 1 << 31 and op.kind in ("I", "L") else raw
            elif bkind == B_IMM:
                ops["b"] = Imm(raw)
            elif bkind == B_CBANK:
                ops["b"] = CBank(raw >> 16, raw & 0xFFFF)
            else:
                if raw > 0xFF:
                    raise ObjectFormatError(f"invalid register number {raw} in instruction {index} ({d.mnemonic})")
                ops["b"] = raw
        elif op.field == "ps":
            ops["ps"] = (_get(word, "ps"), bool(_get(word, "ps_neg")))
        else:
            ops[op.field] = _get(word, op.field)
    mods, shift = _get(word, "mods"), 0
    modvals = {}
    for m in d.mods:
        i = (mods >> shift) & ((1 << m.width) - 1)
        if i >= len(m.values):
            raise ObjectFormatError(f"invalid modifier {m.name}={i} in instruction {index} ({d.mnemonic})")
        if i:
            modvals[m.name] = m.values[i]
        shift += m.width
    guard_reg = _get(word, "guard")
    guard = None if guard_reg == PT and not _get(word, "guard_neg") else (guard_reg, bool(_get(word, "guard_neg")))
    ctrl = Ctrl(_get(word, "stall"), bool(_get(word, "yield")), _get(word, "wsb"), _get(word, "rsb"),
                _get(word, "wait"))
    return MInst(d, ops, modvals, guard, ctrl)


def encode_all(insts: list[MInst]) -> bytes:
    return b"".join(encode(i).to_bytes(WORD_BYTES, "little") for i in insts)


def decode_all(code: bytes) -> list[MInst]:
    if len(code) % WORD_BYTES:
        raise ObjectFormatError(f"code size {len(code)} is not a multiple of {WORD_BYTES} bytes")
    return [decode(int.from_bytes(code[k:k + WORD_BYTES], "little"), k // WORD_BYTES)
            for k in range(0, len(code), WORD_BYTES)]


# ----------------------------------------------------------------------------- disassembly
def _reg(r: int, pair: bool = False) -> str:
    if r == RZ:
        return "RZ"
    return f"R{r}" + (f":R{r + 1}" if pair else "")


def _pred(p: int, neg: bool = False) -> str:
    return ("!" if neg else "") + ("PT" if p == PT else f"P{p}")


def format_operand(kind: str, v, index: int, unit: int = 1) -> str:
    """One operand of the instruction at ``index``; a branch target (kind ``L``) is shown as the target's
    index times ``unit`` (1: an instruction index; ``WORD_BYTES``: a byte address, as ``xcc disasm`` shows)."""
    if kind in ("R", "W"):
        return _reg(v, kind == "W")
    if kind == "P":
        return _pred(*v) if isinstance(v, tuple) else _pred(v)
    if kind == "L":
        return f"{(index + 1 + v) * unit:#06x}" if isinstance(v, int) else str(v)
    if kind == "SR":
        return SPECIAL_REGS[v] if isinstance(v, int) and v < len(SPECIAL_REGS) else str(v)
    if kind == "B":
        return f"B{v}"
    if kind == "I":
        return hex(v) if isinstance(v, int) else str(v)
    if isinstance(v, Imm):
        return hex(v.value)
    if isinstance(v, CBank):
        return f"c[{v.bank:#x}][{v.offset:#x}]"
    return _reg(v, kind == "WIC")


def format_inst(inst: MInst, index: int = 0, unit: int = 1) -> str:
    """The instruction at ``index`` in assembly syntax (``unit``: see :func:`format_operand`)."""
    d = inst.d
    text = d.mnemonic + "".join(f".{v}" for m in d.mods if (v := inst.mods.get(m.name)))
    if inst.guard is not None:
        text = f"@{_pred(*inst.guard)} {text}"
    ops = []
    mem_base = None
    for op in d.operands:
        if op.field not in inst.ops:
            continue
        v = inst.ops[op.field]
        if d.memory_operand and op.field in ("a", "b"):
            if op.field == "a":
                mem_base = format_operand(op.kind, v, index, unit)
                continue
            if op.kind != "I":  # b is a value, not the offset (TMALD.3D's third coordinate): [a], b
                ops += [f"[{mem_base}]", format_operand(op.kind, v, index, unit)]
                continue
            ops.append(f"[{mem_base}{'' if not v else f'+{v:#x}' if v > 0 else f'-{-v:#x}'}]")
            continue
        ops.append(format_operand(op.kind, v, index, unit))
    return f"{text} {', '.join(ops)}".rstrip()


def format_ctrl(c: Ctrl) -> str:
    wait = "".join(str(i) if c.wait >> i & 1 else "-" for i in range(6))
    return (f"[S{c.stall:02d}{'Y' if c.yield_ else '-'} W{c.wsb if c.wsb != 7 else '-'}"
            f" R{c.rsb if c.rsb != 7 else '-'} B{wait}]")


def disassemble(insts: list[MInst], lines: list[int] | None = None, notes: dict[int, list[str]] | None = None) -> str:
    """One line per instruction: its byte address, control codes, the instruction (branch targets as byte
    addresses too) and its PTX line; ``notes`` are comment lines printed above instruction ``i`` (the source
    lines of ``xcc disasm``)."""
    out = []
    for i, inst in enumerate(insts):
        out += [f"        //{n}" for n in (notes or {}).get(i, ())]
        tail = f"  // line {lines[i]}" if lines and lines[i] else ""
        out.append(f"  /*{i * WORD_BYTES:04x}*/  {format_ctrl(inst.ctrl)}  {format_inst(inst, i, WORD_BYTES)} ;{tail}")
    return "\n".join(out)
