"""Value specialisation of a kernel: scalar parameters (and the launch shape) folded in as constants.

Two forms, both run by the driver before the IR pipeline (``CompileOptions.specialize`` /
``launch_shape``, and profile use, :mod:`xcc.profile.use`):

* :func:`fold_arguments` replaces every ``ld_param`` of a named parameter by the constant, and the
  ``%ntid``/``%nctaid`` special registers by the launch shape: the caller guarantees every launch of the
  result passes those values (launch-time specialisation: the runtime keys its variants on them).
* :func:`guarded_clone` keeps the general kernel and puts in front of it a clone with the values folded in,
  behind a check of the real parameter values (``setp.eq`` on each, ``and``-ed): a launch with other values
  runs the general code.  The check reads only parameters, so its branch is uniform (no reconvergence barrier).

sccp, instcombine, unroll and simplifycfg then do the rest (known trip counts, divisions by constants, dead
branches).  Source: ProSpec (value specialisation from profiles) and Proteus (CGO 2025, launch-time
specialisation on argument values and launch shape).
"""

from __future__ import annotations

import struct

from xcc.diagnostics import XccError
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import PRED, ptx_type

SPECIALISABLE_SIZES = (4, 8)
"""Parameter sizes a value can be folded for: the 32- and 64-bit scalars (sizes, strides, flags, scales)."""

SHAPE_REGISTERS = ("nctaid", "ntid")  # the launch shape: (grid, block)


def normalise_values(values) -> tuple[tuple[str, int | float], ...] | None:
    """``{param: value}`` (numpy scalars, bools, ints, floats) as a sorted tuple of (name, int | float)."""
    if values is None:
        return None
    items = values.items() if isinstance(values, dict) else values
    out = []
    for name, v in items:
        v = v.item() if hasattr(v, "item") else v
        if isinstance(v, bool):
            v = int(v)
        if not isinstance(name, str) or not isinstance(v, int | float):
            raise XccError(f"specialize: parameter {name!r} needs an int or float value, got {v!r}")
        out.append((name, v))
    return tuple(sorted(out))


def param_bits(fn: Function, name: str, value: int | float) -> int:
    """The bit pattern of ``value`` in parameter ``name`` of ``fn`` (its size's worth of bytes)."""
    p = next((p for p in fn.params if p.name == name), None)
    if p is None:
        raise XccError(f"specialize: kernel '{fn.name}' has no parameter '{name}' "
                       f"(its parameters: {', '.join(q.name for q in fn.params) or 'none'})")
    if p.size not in SPECIALISABLE_SIZES:
        raise XccError(f"specialize: parameter '{name}' of '{fn.name}' is {p.size} bytes; only 4- and 8-byte "
                       f"scalars can be specialised")
    kind = p.type.lstrip(".")[:1]
    if isinstance(value, float):
        if kind != "f":
            raise XccError(f"specialize: parameter '{name}' of '{fn.name}' is .{p.type.lstrip('.')}, "
                           f"got the float {value!r}")
        fmt = "<f" if p.size == 4 else "<d"
        return int.from_bytes(struct.pack(fmt, value), "little")
    return value & ((1 << (8 * p.size)) - 1)


def shape_registers(shape: tuple[tuple[int, int, int], tuple[int, int, int]]) -> dict[str, int]:
    """``{'nctaid.x': .., 'ntid.z': ..}`` of a launch shape (grid, block)."""
    return {f"{reg}.{axis}": shape[k][a] for k, reg in enumerate(SHAPE_REGISTERS) for a, axis in enumerate("xyz")}


def fold_arguments(fn: Function, values: dict[str, int | float],
                   shape: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None,
                   registers: dict[str, int] | None = None) -> int:
    """Replace ``fn``'s loads of the parameters in ``values`` and its launch-shape special registers (``shape``
    = (grid, block), or some of them by name in ``registers``) by constants, in place.  Returns the number of
    instructions replaced."""
    regs = {**(shape_registers(shape) if shape is not None else {}), **(registers or {})}
    images = {}
    for name, v in values.items():
        bits = param_bits(fn, name, v)
        p = next(q for q in fn.params if q.name == name)
        images[p.offset] = (p.size, bits)
    repl: dict[Value, Value] = {}
    for b in fn.blocks:
        kept = []
        for i in b.instructions:
            c = _constant_of(i, images, regs)
            if c is None:
                kept.append(i)
            else:
                repl[i.result] = c
        b.instructions = kept
    replace_uses(fn, repl)
    return len(repl)


def _constant_of(i: Instruction, images: dict, regs: dict[str, int]) -> Const | None:
    if i.op == "sreg":
        v = regs.get(i.attrs.get("name", ""))
        return Const(i.result.type, v) if v is not None else None
    if i.op != "ld_param" or i.result is None:
        return None
    off = i.attrs.get("offset", 0)
    for start, (size, bits) in images.items():
        if start <= off and off + i.type.bytes <= start + size:
            v = (bits >> (8 * (off - start))) & ((1 << (8 * i.type.bytes)) - 1)
            if i.type.bits < i.result.type.bits and i.type.is_signed and v >> (i.type.bits - 1):
                v -= 1 << i.type.bits  # a narrow signed load widens with its sign
            return Const(i.result.type, v)
    return None


def guarded_clone(fn: Function, values: dict[str, int | float], registers: dict[str, int] | None = None) -> bool:
    """Put a clone of ``fn``'s body with ``values`` (and launch-shape ``registers``, ``{'ntid.x': 256}``) folded
    in (:func:`fold_arguments`) in front of the general body, behind a uniform check of the real parameter and
    register values.  False (nothing changed) when there is nothing to fold or the entry block has predecessors."""
    registers = registers or {}
    if not (values or registers) or fn.entry.preds or fn.entry.phis:
        return False
    checks = [(next(p for p in fn.params if p.name == n), param_bits(fn, n, v)) for n, v in sorted(values.items())]
    general = fn.entry
    clone = _clone_blocks(fn, ".spec")
    loc = next((i.loc for i in general.instructions), fn.loc)
    guard = Block(_fresh(fn, "spec.guard"))
    cond = None
    loads = [(ptx_type(f"u{8 * p.size}"), "ld_param", {"offset": p.offset}, p.name, bits) for p, bits in checks]
    loads += [(ptx_type("u32"), "sreg", {"name": r}, r, v) for r, v in sorted(registers.items())]
    for t, op, attrs, name, bits in loads:
        v = Value(t, name.replace(".", "_"))
        guard.append(Instruction(op, t, [], v, attrs, loc))
        eq = Value(PRED)
        guard.append(Instruction("setp", t, [v, Const(t, bits)], eq, {"cmp": "eq"}, loc))
        if cond is not None:
            both = Value(PRED)
            guard.append(Instruction("and", PRED, [cond, eq], both, {}, loc))
            eq = both
        cond = eq
    guard.append(Instruction("cbr", None, [cond], None, {"targets": [clone[0], general]}, loc))
    clone[0].preds = [guard]
    general.preds = [guard]
    fold_arguments(Function(fn.name, True, fn.params, clone), values, registers=registers)
    fn.blocks = [guard, *clone, *fn.blocks]
    return True


def _clone_blocks(fn: Function, suffix: str) -> list[Block]:
    """Copies of all of ``fn``'s blocks (same order, fresh values and names), wired among themselves."""
    bmap = {b: Block(_fresh(fn, b.name + suffix)) for b in fn.blocks}
    vmap: dict[Value, Value] = {}
    for b in fn.blocks:
        for phi in b.phis:
            vmap[phi.result] = Value(phi.result.type, phi.result.name)
        for i in b.instructions:
            if i.result is not None:
                vmap[i.result] = Value(i.result.type, i.result.name)
    for b in fn.blocks:
        nb = bmap[b]
        nb.preds = [bmap[p] for p in b.preds]
        nb.phis = [Phi(vmap[p.result], [vmap.get(a, a) for a in p.args], nb) for p in b.phis]
        for i in b.instructions:
            attrs = dict(i.attrs)
            if "targets" in attrs:
                attrs["targets"] = [bmap[t] for t in i.targets]
            nb.append(Instruction(i.op, i.type, [vmap.get(a, a) for a in i.args],
                                  vmap.get(i.result) if i.result is not None else None, attrs, i.loc, i.debug_loc))
    return [bmap[b] for b in fn.blocks]


def _fresh(fn: Function, base: str) -> str:
    taken = {b.name for b in fn.blocks}
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}.{k}"
    return name
