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
        if not fn.is_entry:
            return  # a device function's pointers come from its callers: known only after inlining
        glob = global_addresses(fn)
        for inst in fn.instructions():
            if inst.op in REWRITTEN_OPS and inst.attrs.get("space") == "generic" and inst.args[0] in glob:
                inst.attrs["space"] = "global"


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
