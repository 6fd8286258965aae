"""Load/store vectorisation: two adjacent 32-bit accesses through one base become one 64-bit access.

LLVM's ``LoadStoreVectorizer``, cut to what xg1 encodes: the backend selects 64-bit ``LDG.64``/``LDS.64``/
``LDL.64``/``LD.64``/``LDC.64`` (and the stores) for an access of a 64-bit type (:mod:`xcc.backend.isel_memory`),
there is no 128-bit access, and the IR has no vector type: PTX ``ld.v2``/``ld.v4`` are lowered to scalar
accesses at consecutive offsets, the first of them carrying ``attrs.vec`` (the vector's size in bytes, to
which PTX requires its address to be aligned; :mod:`xcc.ir.lower`).  So a pair

    a = ld.b32 [p + o];  b = ld.b32 [p + o + 4]      ->  w = ld.b64 [p + o];  a = unpack w, 0;  b = unpack w, 1
    st.b32 [p + o], a;   st.b32 [p + o + 4], b       ->  st.b64 [p + o], pack(a, b)

(element 0 is the low word: little-endian) is formed in a block when ``p + o`` is provably 8-byte aligned,
from an ``attrs.vec`` access through the same base (``p + o'`` aligned to ``vec`` bytes and ``o - o'`` a
multiple of 8 within it), or from the known alignment of ``p`` (``addr_of`` of a variable with its
``.align``, through additions, shifts and multiplications by constants, conversions and ``cvta``).  Both
accesses have the same space, 32-bit type and result, the same attributes but the offset (plain loads only:
:func:`xcc.passes.memory_model.is_plain_load`), and nothing between them may write or order that memory
(a load pair) or touch it at all (a store pair, which moves the first store down to the second).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Const, Function, Instruction, Module, Value
from xcc.ir.types import ptx_type
from xcc.passes.manager import ModulePass
from xcc.passes.memory_model import clobbers, is_plain_load, kills, may_alias, space_of

_SPACES = frozenset({"global", "shared", "local", "generic", "const"})


@dataclass(frozen=True)
class LoadStoreVectorizer(ModulePass):
    """Pair adjacent, 8-byte-aligned 32-bit loads and stores of one base into 64-bit ones (LLVM LSV)."""

    name: ClassVar[str] = "vectorize"

    def run(self, module: Module) -> None:
        for fn in module.functions:
            aligns = {v.name: v.align for v in list(module.variables) + list(fn.variables)}
            _Vectorizer(fn, aligns).run()


class _Vectorizer:
    def __init__(self, fn: Function, var_align: dict[str, int]):
        self.fn, self.var_align = fn, var_align
        self.defs = {i.result: i for i in fn.instructions() if i.result is not None}
        self.memo: dict[Value, int] = {}
        # base value -> offsets known to be aligned to the given bytes (from attrs.vec)
        self.vec: dict[Value, list[tuple[int, int]]] = {}
        for inst in fn.instructions():
            if inst.op in ("ld", "st") and "vec" in inst.attrs and inst.args:
                self.vec.setdefault(inst.args[0], []).append((inst.attrs.get("offset", 0), inst.attrs["vec"]))

    def run(self) -> None:
        for b in self.fn.blocks:
            self._block(b)

    def _block(self, b: Block) -> None:
        i = 0
        while i < len(b.instructions):
            first = b.instructions[i]
            if self._candidate(first):
                j = self._partner(b, i)
                if j is not None:
                    self._merge(b, i, j)
            i += 1

    def _candidate(self, inst: Instruction) -> bool:
        if inst.op not in ("ld", "st") or space_of(inst) not in _SPACES or isinstance(inst.args[0], Const):
            return False
        if inst.type.bits != 32 or inst.type.name in ("f16x2", "bf16x2"):
            return False
        if inst.op == "ld":
            return is_plain_load(inst) and inst.result.type.bits == 32
        return inst.args[1].type.bits == 32 and "sem" not in inst.attrs  # (never a volatile or strong store)

    def _partner(self, b: Block, i: int) -> int | None:
        """The index of the access 4 bytes above ``b.instructions[i]`` that can join it, or None."""
        first = b.instructions[i]
        base, off, space = first.args[0], first.attrs.get("offset", 0), space_of(first)
        if self._align(base, off) < 8:
            return None
        for j in range(i + 1, len(b.instructions)):
            inst = b.instructions[j]
            if (inst.op == first.op and self._candidate(inst) and inst.args[0] is base
                    and inst.attrs.get("offset", 0) == off + 4 and _same_attrs(first, inst)):
                return j
            if first.op == "ld" and kills(space, clobbers(inst)):
                return None
            if first.op == "st" and (inst.op in ("ld", "st", "atom") and may_alias(space, space_of(inst))
                                     or clobbers(inst) - {"local"} or inst.op == "call"):
                return None
        return None

    def _merge(self, b: Block, i: int, j: int) -> None:
        first, second = b.instructions[i], b.instructions[j]
        b64 = ptx_type("b64")
        attrs = {k: v for k, v in first.attrs.items() if k != "vec"}
        if first.op == "ld":
            wide = Value(b64)
            ld = Instruction("ld", b64, [first.args[0]], wide, attrs, first.loc, first.debug_loc)
            lo = Instruction("unpack", b64, [wide], first.result, {"index": 0}, first.loc, first.debug_loc)
            hi = Instruction("unpack", b64, [wide], second.result, {"index": 1}, second.loc, second.debug_loc)
            new = [ld, lo, hi]
            b.instructions[i:i + 1] = new
            del b.instructions[j + 2]
        else:
            packed = Value(b64)
            pk = Instruction("pack", b64, [first.args[1], second.args[1]], packed, {}, second.loc, second.debug_loc)
            st = Instruction("st", b64, [first.args[0], packed], None, attrs, second.loc, second.debug_loc)
            new = [pk, st]
            b.instructions[j:j + 1] = new
            del b.instructions[i]
        for inst in new:
            inst.block = b

    # ------------------------------------------------------------------ alignment
    def _align(self, base: Value, off: int) -> int:
        """A power of two that ``base + off`` is known to be a multiple of."""
        best = _pow2(off, self._value_align(base))
        for o, size in self.vec.get(base, ()):
            best = max(best, min(size, _pow2(off - o, 1 << 64)))
        return best

    def _value_align(self, v: Value, depth: int = 0) -> int:
        if isinstance(v, Const):
            return _pow2(v.bits, 1 << 64)
        if v in self.memo:
            return self.memo[v]
        inst = self.defs.get(v)
        r = 1
        if inst is not None and depth < 16:
            op, a = inst.op, inst.args
            if op == "addr_of" and inst.attrs.get("space") in ("shared", "local", "const"):
                r = self.var_align.get(inst.attrs.get("symbol"), 1)  # laid out at its .align in the window
            elif op in ("add", "sub") and not inst.attrs.get("sat") and not inst.attrs.get("carry"):
                r = min(self._value_align(a[0], depth + 1), self._value_align(a[1], depth + 1))
            elif op == "shl" and isinstance(a[1], Const) and a[1].bits < 64:
                r = self._value_align(a[0], depth + 1) << a[1].bits
            elif op == "mul" and inst.attrs.get("mode", "lo") in ("lo", "wide"):
                r = self._value_align(a[0], depth + 1) * self._value_align(a[1], depth + 1)
            elif op == "mov" or (op == "cvt" and len(inst.attrs) == 1 and inst.attrs.get("src", "f")[0] in "usb"):
                r = self._value_align(a[0], depth + 1)
            elif op == "cvta":
                r = min(self._value_align(a[0], depth + 1), 1 << 32)  # the windows are 4 GiB aligned
        r = min(r, 1 << min(v.type.bits, 64))
        self.memo[v] = r
        return r


def _pow2(x: int, cap: int) -> int:
    """The largest power of two dividing ``x`` (``cap`` for 0), at most ``cap``."""
    x %= 1 << 64
    return cap if x == 0 else min(x & -x, cap)


def _same_attrs(a: Instruction, b: Instruction) -> bool:
    strip = ("offset", "vec")
    return {k: v for k, v in a.attrs.items() if k not in strip} == {k: v for k, v in b.attrs.items() if k not in strip}
