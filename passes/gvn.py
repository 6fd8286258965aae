"""Global value numbering: dominator-based common-subexpression elimination of pure values and redundant loads.

A walk of the dominator tree in preorder with a scoped hash table, as in Click's "Global Code Motion / Global
Value Numbering" (PLDI 1995, the hash-based dominator walk) and LLVM's ``EarlyCSE``: an instruction equal to one
already seen in a dominating position (same operation, types, attributes, and operands after renaming) is
deleted and its uses take the earlier result.  Equal means:

* pure operations (:data:`xcc.ir.evaluate.PURE_OPS`), ``addr_of``, ``cvta``, ``ld_param`` and the special
  registers that keep their value during a thread's life (``tid``, ``ctaid``, ``laneid``, ...; never
  ``clock``, ``globaltimer``, ``smid``, ``warpid`` or the performance counters); the integer operands of the
  commutative operations are sorted first (``a + b`` == ``b + a``; floats are left in order);
* loads (``ld``) of the same space, base value, offset and types, when no instruction on any path between the
  two may have written that memory or ordered it (:mod:`xcc.passes.memory_model`: a store to an aliasing
  space, an atomic, a call, a barrier, a fence or an acquire load; ``.const`` and kernel parameters are never
  written); a plain load after a full-width store of the same address and type takes the stored value.
  Loads with ``.volatile``/``.relaxed``/``.acquire`` ordering or ``.cv``/``.lu`` caching are never merged.

Memory state is carried down a dominator-tree edge ``A -> B`` only for the spaces nothing clobbers on the paths
from the end of ``A`` to the start of ``B`` (the blocks that reach ``B`` backwards without passing ``A``).
Finally, phis of one block with equal operands are merged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Block, Const, Function, Instruction, Value
from xcc.ir.ops import HALF_TYPES, PURE_OPS
from xcc.ir.rewrite import replace_uses
from xcc.passes.loop_utils import dominator_tree
from xcc.passes.manager import FunctionPass
from xcc.passes.memory_model import clobbers, is_plain_load, kills, space_of

STABLE_SREGS = frozenset({"tid", "ntid", "ctaid", "nctaid", "laneid", "lanemask_eq", "lanemask_le",
                          "lanemask_lt", "lanemask_ge", "lanemask_gt", "gridid", "nsmid", "nwarpid",
                          "dynamic_smem_size", "total_smem_size", "aggr_smem_size", "clusterid", "nclusterid",
                          "cluster_ctaid", "cluster_nctaid", "cluster_ctarank", "cluster_nctarank",
                          "is_explicit_cluster"})
"""Special registers whose value a thread sees unchanged for its whole life (PTX ISA 9.0, chapter 10)."""

VALUE_OPS = PURE_OPS | {"addr_of", "cvta", "ld_param"}
COMMUTATIVE = frozenset({"add", "mul", "min", "max", "and", "or", "xor", "mul24", "addc"})
COMMUTATIVE_FIRST_TWO = frozenset({"mad", "fma", "mad24", "madc"})


def numberable(inst: Instruction) -> bool:
    """An instruction whose result depends only on its operands and attributes (during one thread's life)."""
    if inst.result is None:
        return False
    if inst.op == "sreg":
        return inst.attrs.get("name", "").split(".")[0] in STABLE_SREGS
    return inst.op in VALUE_OPS


def _operand(v: Value) -> tuple:
    return (0, v.type.name, v.bits) if isinstance(v, Const) else (1, "", v.id)


def _freeze(x):
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, Block):
        return ("block", x.name)
    return x


def _attrs_key(attrs: dict) -> tuple:
    items = tuple(sorted(attrs.items()))
    try:
        hash(items)
        return items
    except TypeError:
        return _freeze(attrs)


def value_key(inst: Instruction) -> tuple:
    """The hash key of a numberable instruction (operands as already renamed)."""
    args = [_operand(a) for a in inst.args]
    t = inst.type
    integer = t is not None and not t.is_float and t.name not in HALF_TYPES
    if len(args) >= 2 and integer and (inst.op in COMMUTATIVE or inst.op in COMMUTATIVE_FIRST_TWO
                                       or (inst.op == "setp" and inst.attrs.get("cmp") in ("eq", "ne"))):
        if args[1] < args[0]:
            args[0], args[1] = args[1], args[0]
    return (inst.op, t.name if t is not None else "", inst.result.type.name, tuple(args), _attrs_key(inst.attrs))


def load_key(space: str, base: tuple, offset: int, nbytes: int, t, rtype) -> tuple:
    """A load's key: where, how many bytes, and how they are widened into the result (sign or zero)."""
    ext = t.kind if rtype.bits > t.bits else ""
    return ("ld", space, base, offset, nbytes, rtype.bits, ext)


@dataclass(frozen=True)
class GlobalValueNumbering(FunctionPass):
    """Dominator-tree value numbering of pure values and of loads nothing writes in between (Click 1995)."""

    name: ClassVar[str] = "gvn"
    loads: bool = True  # also merge redundant loads and forward stored values

    def run_function(self, fn: Function) -> None:
        tree = dominator_tree(fn)
        written = {b: _block_clobbers(b) for b in tree.rpo}
        table: dict[tuple, Value] = {}
        loads: dict[tuple, tuple[str, Value]] = {}  # key -> (space, value)
        repl: dict[Value, Value] = {}
        missing = object()
        stack: list[tuple[Block, bool]] = [(tree.rpo[0], True)]
        undo: list[list] = []
        while stack:
            b, entering = stack.pop()
            if not entering:
                for d, key, old in reversed(undo.pop()):
                    if old is missing:
                        del d[key]
                    else:
                        d[key] = old
                continue
            log: list = []
            undo.append(log)
            idom = tree.idom[b]
            if idom is not None and self.loads and loads:
                gone = _clobbered_between(idom, b, written)
                if gone:
                    for key in [k for k, (acc, _) in loads.items() if kills(acc[0], gone)]:
                        log.append((loads, key, loads.pop(key)))
            kept = []
            for inst in b.instructions:
                inst.args = [_find(repl, a) for a in inst.args]
                if numberable(inst):
                    key = value_key(inst)
                    hit = table.get(key)
                    if hit is not None:
                        repl[inst.result] = hit
                        continue
                    log.append((table, key, missing))
                    table[key] = inst.result
                elif self.loads:
                    if self._load(inst, loads, repl, log, missing):
                        continue
                kept.append(inst)
            b.instructions = kept
            stack.append((b, False))
            for c in reversed(tree.children[b]):
                stack.append((c, True))
        replace_uses(fn, repl)
        _merge_equal_phis(fn)

    @staticmethod
    def _load(inst: Instruction, loads: dict, repl: dict, log: list, missing) -> bool:
        """Look up or record a load, kill what ``inst`` clobbers, record a store's value; True: ``inst`` is
        redundant (its result is now in ``repl``)."""
        if is_plain_load(inst):
            access = _access(inst, inst.type)
            key = load_key(*access, inst.type, inst.result.type)
            hit = loads.get(key)
            if hit is not None:
                repl[inst.result] = hit[1]
                return True
            log.append((loads, key, missing))
            loads[key] = (access, inst.result)
            return False
        gone = clobbers(inst)
        if gone:
            here = _access(inst, inst.type) if inst.op == "st" else None
            for key in [k for k, (acc, _) in loads.items() if kills(acc[0], gone) and not _disjoint(acc, here)]:
                log.append((loads, key, loads.pop(key)))
        if inst.op == "st":
            val = inst.args[1]
            if val.type.bits == inst.type.bits and val.type.bits > 1:
                access = _access(inst, inst.type)
                key = load_key(*access, inst.type, val.type)
                log.append((loads, key, loads.get(key, missing)))
                loads[key] = (access, val)
        return False


def _access(inst: Instruction, t) -> tuple:
    """(space, base operand key, offset, bytes) of a memory access."""
    return (space_of(inst), _operand(inst.args[0]), inst.attrs.get("offset", 0), t.bytes)


def _disjoint(a: tuple, b: tuple | None) -> bool:
    """Two accesses through the same base value whose byte ranges do not meet."""
    if b is None or a[1] != b[1]:
        return False
    return a[2] + a[3] <= b[2] or b[2] + b[3] <= a[2]


def _find(repl: dict, v: Value) -> Value:
    while v in repl:
        v = repl[v]
    return v


def _block_clobbers(b: Block) -> frozenset[str]:
    out: set[str] = set()
    for inst in b.instructions:
        out |= clobbers(inst)
    return frozenset(out)


def _clobbered_between(a: Block, b: Block, written: dict) -> frozenset[str]:
    """What may be written on a path from the end of ``a`` (b's immediate dominator) to the start of ``b``."""
    if b.preds == [a]:
        return frozenset()
    out: set[str] = set()
    seen = {a}
    work = [p for p in b.preds if p is not a]
    while work:
        x = work.pop()
        if x in seen:
            continue
        seen.add(x)
        out |= written.get(x, frozenset())
        work.extend(x.preds)
    return frozenset(out)


def _merge_equal_phis(fn: Function) -> None:
    repl: dict[Value, Value] = {}
    for b in fn.blocks:
        seen: dict[tuple, Value] = {}
        kept = []
        for phi in b.phis:
            key = (phi.result.type, tuple(_operand(_find(repl, a)) for a in phi.args))
            if key in seen:
                repl[phi.result] = seen[key]
                continue
            seen[key] = phi.result
            kept.append(phi)
        b.phis = kept
    replace_uses(fn, repl)
