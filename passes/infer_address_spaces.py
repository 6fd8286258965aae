"""Address-space inference: generic loads, stores and atomics whose address provably points into ``.global``
memory become ``.global`` accesses.

Unoptimised PTX (``nvcc -G``, ``llc -O0``, hand-written code) addresses memory through generic pointers taken
straight from the kernel's parameters; a generic access must find its window at run time, a ``.global`` one
need not.  As LLVM's NVPTX back end does (``NVPTXLowerArgs`` marks every pointer parameter of a kernel as
pointing to global memory — CUDA gives kernels only global, host-mapped or managed pointers, all in the global
window — and ``InferAddressSpaces`` propagates the fact through address arithmetic), a value is a *global
address* when it is

* a 64-bit kernel parameter (``ld_param``), or ``cvta.to.global``'s result, or ``cvta.global`` to generic of a
  global address (the generic and global addresses of global memory are the same, :data:`xcc.backend.isa.WINDOWS`);
* a global address plus or minus a value that is not itself an address of another space (``add``/``sub``), or a
  ``mov``/``cvt`` between 64-bit types of one;
* a ``phi`` or ``selp`` whose every incoming value is a global address (found optimistically: a loop-carried
  pointer is global when every value entering it is).

Since a generic address of global memory is the global address itself, only the access's ``space`` changes.
Addresses that come from memory (a pointer loaded from an array) are never assumed global.

Generic addresses into the **shared and local windows** are followed too (any function): ``cvta.to_generic`` of
a ``.shared``/``.local`` address ``x``, plus or minus offsets, is that window's base plus ``x`` plus the same
offsets, so the access becomes a ``.shared``/``.local`` one of ``x`` + offsets (new ``add``/``sub`` instructions
beside the generic ones, which dead-code elimination then drops).  This is what lets ``nvcc -G``'s stack frame
(``cvta.local`` of ``__local_depot``) be promoted to registers by mem2reg, and its shared arrays use the
shared-memory path.

In a kernel, a generic **load from the param window** at a constant address (``cvta.param`` of a constant
param-space address, as ``mov.b64 %rd, params; ld.param.u32 %r, [%rd+8]`` lowers once the offsets fold) is the
parameter load ``ld_param`` at that offset (on xg1 an ``LDC`` from constant bank 0 rather than a generic ``LD``):
kernel parameters are read-only, so the two read the same bytes.  Only naturally aligned loads inside the
parameter buffer are rewritten; any other stays generic and faults at run time as it must.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Const, Function, Instruction, Phi, Value
from xcc.passes.manager import FunctionPass

REWRITTEN_OPS = frozenset({"ld", "st", "atom"})

_OTHER_SPACE_SOURCES = ("addr_of", "cvta")  # addresses of other spaces when not shown global


@dataclass(frozen=True)
class InferAddressSpaces(FunctionPass):
    """Generic accesses through addresses derived from kernel pointer parameters become .global ones."""

    name: ClassVar[str] = "infer-address-spaces"

    def run_function(self, fn: Function) -> None:
        # a device function's global pointers come from its callers: known only after inlining
        glob = global_addresses(fn) if fn.is_entry else set()
        windows = _Windows(fn)
        for inst in list(fn.instructions()):
            if inst.op not in REWRITTEN_OPS or inst.attrs.get("space") != "generic":
                continue
            if fn.is_entry and _to_param_load(inst, windows.defs, fn.param_bytes):
                continue
            if inst.args[0] in glob:
                inst.attrs["space"] = "global"
                continue
            found = windows.address(inst.args[0])
            if found is not None:
                inst.attrs["space"], inst.args[0] = found


def global_addresses(fn: Function) -> set[Value]:
    """The values of kernel ``fn`` that are provably addresses in the global window (see the module's rules)."""
    defs: dict[Value, Instruction | Phi] = {}
    for b in fn.blocks:
        for phi in b.phis:
            defs[phi.result] = phi
        for inst in b.instructions:
            if inst.result is not None:
                defs[inst.result] = inst
    # optimistic: start from every candidate and remove what is not shown global, to a fixed point
    cand = {v for v, d in defs.items() if v.type.bits == 64 and _candidate(d)}
    changed = True
    while changed:
        changed = False
        for v in list(cand):
            if not _holds(defs[v], cand, defs):
                cand.discard(v)
                changed = True
    return cand


def _candidate(d: Instruction | Phi) -> bool:
    return isinstance(d, Phi) or d.op in ("ld_param", "cvta", "add", "sub", "mov", "cvt", "selp")


def _is_other_address(v: Value, defs) -> bool:
    d = defs.get(v)
    return isinstance(d, Instruction) and d.op in _OTHER_SPACE_SOURCES


def _holds(d: Instruction | Phi, cand: set[Value], defs) -> bool:
    if isinstance(d, Phi):
        return all(a in cand for a in d.args)
    op = d.op
    if op == "ld_param":
        return True
    if op == "cvta":
        return d.attrs.get("space") == "global" and (not d.attrs.get("to_generic") or d.args[0] in cand
                                                     or not _is_other_address(d.args[0], defs))
    if op in ("mov", "cvt"):
        return d.args[0] in cand and d.args[0].type.bits == 64
    if op == "selp":
        return d.args[0] in cand and d.args[1] in cand
    if op == "add":
        a, b = d.args
        return (a in cand and not _is_other_address(b, defs)) or (b in cand and not _is_other_address(a, defs))
    if op == "sub":
        a, b = d.args
        return a in cand and (isinstance(b, Const) or b not in cand) and not _is_other_address(b, defs)
    return False


def _to_param_load(inst: Instruction, defs: dict, param_bytes: int) -> bool:
    """Rewrite generic load ``inst`` into ``ld_param`` when its address is ``cvta.param`` of a constant that, with
    the load's offset, is a naturally aligned place inside the ``param_bytes`` of parameters (see the module)."""
    d = defs.get(inst.args[0]) if inst.op == "ld" and inst.args else None
    if d is None or d.op != "cvta" or d.attrs.get("space") != "param" or not d.attrs.get("to_generic"):
        return False
    t, rt = inst.type, inst.result.type if inst.result is not None else None
    if not isinstance(d.args[0], Const) or rt is None or "sem" in inst.attrs:
        return False
    at = d.args[0].bits + int(inst.attrs.get("offset", 0))
    if at < 0 or at + t.bytes > param_bytes or at % t.bytes or not (rt.bits == t.bits or rt.bits <= 32 > t.bits):
        return False
    inst.op, inst.args, inst.attrs = "ld_param", [], {"offset": at}
    return True


class _Windows:
    """Generic addresses that point into the shared or local window, with the same address in that space."""

    def __init__(self, fn: Function):
        self.defs: dict[Value, Instruction] = {}
        self.where: dict[int, list[Instruction]] = {}
        for b in fn.blocks:
            for inst in b.instructions:
                if inst.result is not None:
                    self.defs[inst.result] = inst
                    self.where[id(inst)] = b.instructions
        self.memo: dict[Value, tuple[str, Value] | None] = {}

    def address(self, v: Value) -> tuple[str, Value] | None:
        """(space, the address in that space) when generic address ``v`` provably lies in a shared or local
        window, else None."""
        if v not in self.memo:
            self.memo[v] = None  # cycles (through phis) are not followed
            self.memo[v] = self._find(v)
        return self.memo[v]

    def _find(self, v: Value) -> tuple[str, Value] | None:
        d = self.defs.get(v)
        if d is None:
            return None
        if d.op == "cvta" and d.attrs.get("to_generic") and d.attrs.get("space") in ("shared", "local"):
            return d.attrs["space"], d.args[0]
        if d.op in ("add", "sub") and d.type is not None and d.type.bits == 64:
            sides = ((0, 1), (1, 0)) if d.op == "add" else ((0, 1),)
            for p, q in sides:
                inner = self.address(d.args[p])
                other = d.args[q]
                if inner is not None and (isinstance(other, Const) or self.address(other) is None):
                    args = [inner[1], other] if p == 0 else [other, inner[1]]
                    return inner[0], self._beside(d, args)
        return None

    def _beside(self, d: Instruction, args: list[Value]) -> Value:
        """A copy of ``d`` (an add or sub) on ``args``, inserted right after it."""
        out = Value(d.result.type)
        new = Instruction(d.op, d.type, args, out, dict(d.attrs), d.loc, d.debug_loc)
        insts = self.where[id(d)]
        new.block = d.block
        insts.insert(next(k for k, i in enumerate(insts) if i is d) + 1, new)
        self.where[id(new)] = insts
        self.defs[out] = new
        return out
