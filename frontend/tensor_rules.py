"""The qualifier and operand rules ptxas 13.0 enforces on the synchronisation, asynchronous-copy and matrix
instructions (issue 19's tensor sweep, tests/data/isa_inventory/sweep_tensor.ptx-lines), checked by
:mod:`xcc.frontend.checker` beside :mod:`~xcc.frontend.memory_rules` and :mod:`~xcc.frontend.arith_rules`, so
that ``xcc check`` (``--syntax-only`` too) and ``compile`` refuse what ptxas refuses, with a message naming the
cause.

:func:`problem` returns the first broken rule of one instruction or None; the checker calls it only on an
instruction it found nothing else wrong with (and not on a Blackwell-only one, or one naming a ``.b128``
register, which IR lowering refuses with its own messages).  Each rule is the one ptxas states in its message;
the rules are measured, form by form, against ptxas -arch=sm_90a at PTX ISA 9.0:

* mbarrier: ``.sem`` and ``.scope`` come together (arrive/arrive_drop take .release/.relaxed, expect_tx and
  complete_tx .relaxed, test_wait/try_wait .acquire/.relaxed; scopes .cta/.cluster); init/inval/test_wait/
  try_wait take no ``.shared::cluster``, init/inval no other space than shared; ``.noComplete`` takes neither
  .relaxed, .cluster nor .shared::cluster; an arrive on ``.shared::cluster`` writes ``_``; pending_count is
  ``.b64`` with no state space; states are 64-bit, counts, parities and hints 32-bit.
* bar/barrier: ``.aligned`` is barrier's only (not bar's, nor bar.warp's), ``.cta`` comes first, one of
  .sync/.arrive/.red; an immediate barrier is 0..15, an immediate thread count a multiple of 32; .red's last
  operand is a predicate; barrier.cluster.arrive takes .release/.relaxed and wait .acquire, one of them.
* fence.proxy.tensormap::generic.acquire takes ``[a], 128`` (the other fence forms:
  :mod:`xcc.frontend.memory_rules`).
* wgmma needs .sync; mma_async's descriptors are 64-bit; the integer and .b1 forms take only the N of the
  manual's list.  mma/mma.sp/wmma.mma fragments of A and B are 32-bit non-float registers (f64 ones for .f64);
  wmma.mma's integer A and B have one type; mma.sp with FP8 inputs takes only .f32 accumulators on sm_90a.
* stmatrix's source is a braced vector; movmatrix's operands and elect's destination are 32-bit; wmma's stride
  is 32-bit; cp.async.bulk's size is 32-bit and its ctaMask 16-bit (its cache policy: memory_rules); .noftz is
  for .f16/.bf16 only; tensor coordinates are 32-bit.
* multimem: ld_reduce takes .relaxed/.acquire, st .relaxed/.release/.weak, red .relaxed/.release, each with a
  scope; st takes no 8- or 16-bit integer type; ``.acc::f16`` is Blackwell's; ld_reduce's ``.acc::f32`` goes with
  .add only; .f16/.bf16 are vectors (.v2/.v4/.v8) of 16-bit registers in all three."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from xcc.frontend import ast
from xcc.frontend.instructions import TYPE_WIDTH, blackwell_only

_MB_SEMS = {"arrive": {"release", "relaxed"}, "arrive_drop": {"release", "relaxed"}, "expect_tx": {"relaxed"},
            "complete_tx": {"relaxed"}, "test_wait": {"acquire", "relaxed"}, "try_wait": {"acquire", "relaxed"}}
_MB_KINDS = ("init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait",
             "pending_count")
_SEMS = ("release", "acquire", "relaxed", "acq_rel", "weak", "sc")
_SCOPES = ("cta", "cluster", "gpu", "sys")
_OTHER_SPACES = ("global", "local", "const", "param", "generic")
_WG_N_INT = frozenset({8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256})


@dataclass(frozen=True)
class Reg:
    """A register operand as the rules see it: its declared type's ``name``, width in ``bits`` and ``kind``
    ('b', 'u', 's', 'f' or 'pred'; a packed .f16x2/.bf16x2 register is 'b', as IR lowering types it)."""

    name: str
    bits: int
    kind: str


_FLOAT_REGS = frozenset({"f16", "bf16", "f32", "f64"})
_OPAQUE = frozenset({"texref", "samplerref", "surfref"})  # 64-bit handles


def _reg(t: str) -> Reg | None:
    if t in _OPAQUE:
        return Reg(t, 64, "u")
    if t not in TYPE_WIDTH:
        return None
    kind = "pred" if t == "pred" else "f" if t in _FLOAT_REGS else t[0] if t[0] in "bus" else "b"
    return Reg(t, TYPE_WIDTH[t], kind)


def _resolve(op, reg_type: Callable[[object], str | None]):
    """``op`` with each register (of vectors, negations and tensor coordinates too) replaced by its :class:`Reg`."""
    if isinstance(op, (ast.Reg, ast.Symbol)):
        t = reg_type(op)
        r = _reg(t) if t is not None else None
        return r if r is not None else op
    if isinstance(op, ast.Vector):
        return replace(op, elements=tuple(_resolve(e, reg_type) for e in op.elements))
    if isinstance(op, ast.Negated):
        return replace(op, operand=_resolve(op.operand, reg_type))
    if isinstance(op, ast.Address):
        base = _resolve(op.base, reg_type) if op.base is not None else None
        return replace(op, base=base, elements=tuple(_resolve(e, reg_type) for e in op.elements))
    return op


def _names_b128(ops) -> bool:
    for op in ops:
        if isinstance(op, Reg) and op.name == "b128":
            return True
        if isinstance(op, ast.Vector) and _names_b128(op.elements):
            return True
        if isinstance(op, ast.Address) and _names_b128([op.base]):
            return True
    return False


def _bits(op) -> int | None:
    """The declared width of a register operand (None for anything else)."""
    return op.bits if isinstance(op, Reg) else None


def _is_float(op) -> bool:
    return isinstance(op, Reg) and op.kind == "f"


def _width(op, bits: int, what: str, n: int) -> str | None:
    """A message when operand ``n`` (1-based) is a register of another width than ``bits`` (or a predicate)."""
    b = _bits(op)
    if b is not None and (b != bits or op.kind == "pred"):
        return f"operand {n} ({what}) must be a {bits}-bit register or an immediate, got a .{op.name} register"
    return None


def _elements(op) -> tuple:
    return op.elements if isinstance(op, ast.Vector) else (op,)


def problem(inst: ast.Instruction, reg_type: Callable[[object], str | None]) -> str | None:
    """The first rule of this module ``inst`` breaks, as a message (without the instruction), or None.
    ``reg_type(op)`` is the declared type of a register operand (a vector register's element type for ``%v`` and
    ``%v.x``), None for anything else.  A Blackwell-only instruction, and one naming a ``.b128`` register, are
    left to IR lowering, which refuses both with its own messages."""
    rule = _RULES.get(inst.opcode)
    if rule is None or blackwell_only(inst.opcode, inst.modifiers):
        return None
    ops = [_resolve(op, reg_type) for op in inst.operands]
    if _names_b128(ops):
        return None
    return rule(replace(inst, operands=ops), set(inst.modifiers))


def _sem_scope(name: str, ms: set[str], sems: set[str], scopes=("cta", "cluster")) -> str | None:
    got_sem = [m for m in _SEMS if m in ms]
    got_scope = [m for m in _SCOPES if m in ms]
    for s in got_sem:
        if s not in sems:
            return f"'.{s}' is not a memory order of '{name}' (it takes {', '.join('.' + x for x in sorted(sems))})"
    for s in got_scope:
        if s not in scopes:
            return f"'.{s}' is not a scope of '{name}'"
    if got_sem and not got_scope:
        return f"'.{got_sem[0]}' needs a scope (.{', .'.join(scopes)}) on '{name}'"
    if got_scope and not got_sem:
        return f"the scope '.{got_scope[0]}' needs a memory order on '{name}'"
    return None


# ----------------------------------------------------------------------------- mbarrier
def _mbarrier(inst, ms) -> str | None:
    kind = next((m for m in inst.modifiers if m in _MB_KINDS), None)
    if kind is None:
        return None
    name = f"mbarrier.{kind}"
    ops = inst.operands
    if kind == "pending_count":
        if ms & {"shared", "shared::cta", "shared::cluster", *_OTHER_SPACES}:
            return "mbarrier.pending_count takes no state space (its operand is a state, not an address)"
        if "b64" not in ms or ms & {"b32", "u64", "s64", "u32"}:
            return "mbarrier.pending_count takes .b64 only"
        if len(ops) == 2:
            return _width(ops[0], 32, "count", 1) or _width(ops[1], 64, "state", 2)
        return None
    sem = _sem_scope(name, ms, _MB_SEMS.get(kind, set()))
    if sem:
        return sem
    if ms & set(_OTHER_SPACES):
        return f"{name} addresses shared memory (.shared, .shared::cta{'' if kind in ('init', 'inval') else ', .shared::cluster'})"
    if "shared::cluster" in ms and kind in ("init", "inval", "test_wait", "try_wait"):
        return f"{name} takes no .shared::cluster (the barrier must be in this CTA's shared memory)"
    if "noComplete" in ms:
        bad = ms & {"relaxed", "cluster", "shared::cluster"}
        if bad:
            return f"'.{min(bad)}' cannot be combined with .noComplete"
    if kind in ("arrive", "arrive_drop") and "shared::cluster" in ms and ops and not isinstance(ops[0], ast.Sink):
        return f"{name} on .shared::cluster has no state to return: its destination must be the sink '_'"
    if kind == "init" and len(ops) == 2:
        return _width(ops[1], 32, "count", 2)
    if kind in ("expect_tx", "complete_tx") and len(ops) == 2:
        return _width(ops[1], 32, "transaction count", 2)
    if kind in ("arrive", "arrive_drop"):
        if ops:
            r = _width(ops[0], 64, "state", 1)
            if r:
                return r
        if len(ops) == 3:
            return _width(ops[2], 32, "count", 3)
    if kind in ("test_wait", "try_wait") and len(ops) >= 3:
        if "parity" in ms:
            r = _width(ops[2], 32, "phase parity", 3)
        else:
            r = _width(ops[2], 64, "state", 3)
        if r:
            return r
        if len(ops) == 4:
            return _width(ops[3], 32, "suspend-time hint", 4)
    return None


# ----------------------------------------------------------------------------- bar / barrier
def _bar(inst, ms) -> str | None:
    name = inst.opcode
    mods = inst.modifiers
    if "cluster" in ms and name == "barrier":
        mode = [m for m in mods if m in ("arrive", "wait")]
        sems = [m for m in mods if m in _SEMS]
        if len(mode) == 1:
            allowed = {"arrive": ("release", "relaxed"), "wait": ("acquire",)}[mode[0]]
            for s in sems:
                if s not in allowed:
                    return f"barrier.cluster.{mode[0]} takes no '.{s}' (it takes .{' or .'.join(allowed)})"
            if len(sems) > 1:
                return f"barrier.cluster.{mode[0]} takes one memory order, got {len(sems)}"
        return None
    if "aligned" in ms and (name == "bar" or "warp" in ms):
        return f"'.aligned' is not a modifier of '{name}{'.warp' if 'warp' in ms else ''}' (barrier takes it)"
    if "warp" in ms:
        return None
    if "cta" in ms and mods[0] != "cta":
        return f"'.cta' comes right after '{name}' ({name}.cta.sync ...)"
    modes = [m for m in mods if m in ("sync", "arrive", "red")]
    if len(modes) > 1:
        return f"'{name}' takes one of .sync, .arrive and .red, got {len(modes)}"
    if not modes and name == "barrier":
        return "barrier needs .sync, .arrive or .red"
    ops = inst.operands
    ids = ops[1:-1] if modes == ["red"] else ops
    if modes == ["red"] and ops:
        c = ops[-1].operand if isinstance(ops[-1], ast.Negated) else ops[-1]
        if isinstance(c, Reg) and c.kind != "pred" or isinstance(c, ast.Imm):
            return f"the last operand of {name}.red is a predicate"
    for i, op in enumerate(ids):
        if isinstance(op, ast.Imm) and i == 0 and not 0 <= op.value <= 15:
            return f"barrier number {op.value} is out of range 0..15"
        if isinstance(op, ast.Imm) and i == 1 and op.value % 32:
            return f"the thread count of a barrier is a multiple of the warp size (32), got {op.value}"
        r = _width(op, 32, "barrier" if i == 0 else "thread count", i + 1 + (modes == ["red"]))
        if r:
            return r
    return None


# ----------------------------------------------------------------------------- fence
def _fence(inst, ms) -> str | None:
    """fence.proxy.tensormap::generic.acquire's operands; the modifiers of every fence, and the operands of the
    others, are :mod:`xcc.frontend.memory_rules`' (which the checker applies first)."""
    if {"proxy", "tensormap::generic", "acquire"} <= ms:
        ops = inst.operands
        if len(ops) != 2:
            return "fence.proxy.tensormap::generic.acquire takes [address], 128"
        if not (isinstance(ops[1], ast.Imm) and ops[1].value == 128):
            return "the size operand of fence.proxy.tensormap::generic.acquire must be the immediate 128"
    return None


# ----------------------------------------------------------------------------- wgmma / mma / wmma
def _wgmma(inst, ms) -> str | None:
    if "sync" not in ms:
        return f"'{inst.opcode}.{inst.modifiers[0]}' needs .sync (.sync.aligned)"
    if "mma_async" not in ms:
        return None
    shape = next((m for m in inst.modifiers if m.startswith("m64n")), None)
    if shape and ms & {"s8", "u8", "b1"}:
        n = int(shape[4:shape.index("k")]) if "k" in shape else 0
        if n not in _WG_N_INT:
            return f"'.{shape}': the integer and .b1 forms take N of 8, 16, 24, 32, 48, ..., 256 (multiples of 16 " \
                   "above 32)"
    ops = inst.operands
    if len(ops) >= 3:
        a, b = ops[1], ops[2]
        if not isinstance(a, ast.Vector) and _bits(a) not in (None, 64):
            return "operand 2 (the A matrix descriptor) must be a 64-bit register"
        if _bits(b) not in (None, 64):
            return "operand 3 (the B matrix descriptor) must be a 64-bit register"
    return None


def _fragments(inst, ab: tuple, f64: bool) -> str | None:
    for n, op in ab:
        for e in _elements(op):
            if not isinstance(e, Reg):
                continue
            if f64 and (e.bits != 64 or not _is_float(e)):
                return f"operand {n}: .f64 fragments are .f64 registers"
            if not f64 and (e.bits != 32 or _is_float(e)):
                return f"operand {n}: A and B fragments are 32-bit integer-typed (.b32) registers, got .{e.name}"
    return None


def _mma(inst, ms) -> str | None:
    ops = inst.operands
    if len(ops) >= 3:
        r = _fragments(inst, ((2, ops[1]), (3, ops[2])), "f64" in ms)
        if r:
            return r
    if "sp" in ms or "sp::ordered_metadata" in ms:
        types = [m for m in inst.modifiers if m in ("f16", "f32")]
        if ms & {"e4m3", "e5m2"} and types and types[0] == "f16":
            return "mma.sp with FP8 inputs and an .f16 accumulator is not available on sm_90a (.f32 only)"
    return None


def _wmma(inst, ms) -> str | None:
    if "mma" in ms:
        ints = [m for m in inst.modifiers if m in ("s8", "u8", "s4", "u4")]
        if len(ints) == 2 and ints[0] != ints[1]:
            return f"wmma.mma takes one integer type for A and B, got .{ints[0]} and .{ints[1]}"
        return _mma(inst, ms)
    ops = inst.operands
    if ("load" in ms or "store" in ms) and len(ops) == 3:
        return _width(ops[2], 32, "stride", 3)
    return None


def _stmatrix(inst, ms) -> str | None:
    if len(inst.operands) == 2 and not isinstance(inst.operands[1], ast.Vector):
        return "the source of stmatrix is a braced vector of registers ({%r})"
    return None


def _movmatrix(inst, ms) -> str | None:
    for i, op in enumerate(inst.operands):
        r = _width(op, 32, "a .b16x2 row pair", i + 1)
        if r:
            return r
    return None


def _elect(inst, ms) -> str | None:
    ops = inst.operands
    if ops and isinstance(ops[0], ast.Vector):  # d|p parses as a pair
        return _width(ops[0].elements[0], 32, "the elected lane", 1)
    return _width(ops[0], 32, "the elected lane", 1) if ops and not _is_pred(ops[0]) else None


def _is_pred(op) -> bool:
    return isinstance(op, Reg) and op.kind == "pred"


# ----------------------------------------------------------------------------- cp.async.bulk / cp.reduce
def _cp(inst, ms) -> str | None:
    if "bulk" not in ms:
        return None
    if "noftz" in ms and not ms & {"f16", "bf16"}:
        return ".noftz is for .add on .f16 and .bf16 only"
    ops = list(inst.operands)
    if "tensor" in ms:
        for op in ops:
            if isinstance(op, ast.Address) and op.elements:
                for i, e in enumerate(e for el in op.elements for e in _elements(el)):
                    r = _width(e, 32, f"tensor coordinate {i}", 2)
                    if r:
                        return r
        return None
    if "prefetch" in ms or "commit_group" in ms or "wait_group" in ms or len(ops) < 3:
        return None
    r = _width(ops[2], 32, "size", 3)
    if r:
        return r
    rest = ops[4:] if "mbarrier::complete_tx::bytes" in ms else ops[3:]
    if "multicast::cluster" in ms and rest:  # (the cache policy's width: memory_rules)
        return _width(rest[0], 16, "ctaMask", 5)
    return None


# ----------------------------------------------------------------------------- multimem
def _multimem(inst, ms) -> str | None:
    kind = inst.modifiers[0] if inst.modifiers else ""
    sems = {"ld_reduce": {"relaxed", "acquire", "weak"}, "st": {"relaxed", "release", "weak"},
            "red": {"relaxed", "release"}}.get(kind)
    if sems is None:
        return None
    name = f"multimem.{kind}"
    got = [m for m in _SEMS if m in ms]
    for s in got:
        if s not in sems:
            return f"'.{s}' is not a memory order of '{name}'"
    if got and got[0] != "weak" and not ms & set(_SCOPES):
        return f"'.{got[0]}' needs a scope (.cta, .cluster, .gpu, .sys) on '{name}'"
    if "acc::f16" in ms:
        return ".acc::f16 is a Blackwell (sm_100a) qualifier"
    if kind == "st" and ms & {"u8", "s8", "b8", "u16", "s16", "b16"}:
        return "multimem.st takes no 8- or 16-bit integer type"
    if kind == "ld_reduce" and "acc::f32" in ms and ms & {"min", "max"}:  # ptxas: "Illegal reduction operation"
        return ".acc::f32 accumulates .add only"
    if ms & {"f16", "bf16"}:  # ptxas: "Unexpected instruction types" / "Arguments mismatch"
        if not ms & {"v2", "v4", "v8"}:
            return f"a scalar .f16/.bf16 is not a {name} type (.f16x2/.bf16x2, or .v2/.v4/.v8 of halves)"
        data = inst.operands[0 if kind == "ld_reduce" else 1] if len(inst.operands) > 1 else None
        for e in _elements(data) if data is not None else ():
            if _bits(e) not in (None, 16):
                return (f"the {'destinations' if kind == 'ld_reduce' else 'sources'} of .f16/.bf16 vectors are "
                        f"16-bit registers, got a .{e.name} register")
    return None


_RULES = {"mbarrier": _mbarrier, "bar": _bar, "barrier": _bar, "fence": _fence, "wgmma": _wgmma, "mma": _mma,
          "wmma": _wmma, "stmatrix": _stmatrix, "movmatrix": _movmatrix, "elect": _elect, "cp": _cp,
          "multimem": _multimem}
