"""What each IR operation does when interpreted: one executor builder per op, registered with ``@impl``.

A builder takes an :class:`OpBinder` (one instruction bound to one launch) and
returns an executor ``run(sel, idx, n)`` that applies the instruction to the
``n`` threads ``idx`` (sorted wave slots; ``sel`` is the same set as a slice
when the slots are contiguous).  Pure operations all go through
:func:`xcc.ir.evaluate.evaluate`, the dispatch the constant folder uses, so the
IR has one meaning; memory goes through :mod:`xcc.sim.memory`, the model
the ISA interpreter uses; the warp rules (shfl lanes, vote and activemask over
the member mask) are :mod:`xcc.semantics.warp`, which the ISA interpreter calls
too.  Sources: PTX ISA 9.0 sections 9.7.9 (ld, st), 9.7.13 (atom, bar) and 10
(special registers).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xcc.diagnostics import UnsupportedError
from xcc.ir.core import Const, Instruction, Value
from xcc.ir.evaluate import PURE_OPS, evaluate
from xcc.ir.types import ScalarType
from xcc.semantics import warp
from xcc.semantics.bits import UDTYPE, as_unsigned
from xcc.semantics.convert import convert
from xcc.sim.memory import HALF_ATOMIC_KINDS, WINDOWS, window_space

U32, U64 = np.uint32, np.uint64
IMPLS: dict[str, Callable[[OpBinder], Callable]] = {}
# Ops the scheduler carries out itself (control flow and barriers).
CONTROL = frozenset({"br", "cbr", "ret", "exit", "trap", "bar_sync", "bar_arrive", "bar_red"})


def impl(*ops: str):
    def deco(fn):
        for op in ops:
            IMPLS[op] = fn
        return fn

    return deco


def storage_dtype(t: ScalarType):
    """How values of ``t`` are held: bool for predicates, the unsigned integer of the width otherwise."""
    if t.kind == "pred":
        return np.bool_
    if t.bits not in UDTYPE:
        raise UnsupportedError(f"values of type {t} are not supported by the IR interpreter yet")
    return UDTYPE[t.bits]


class OpBinder:
    """Readers and the writer of one instruction against a launch's value store ``launch.vals``."""

    def __init__(self, launch, inst: Instruction):
        self.launch, self.inst, self.attrs = launch, inst, inst.attrs

    def error(self, msg: str) -> UnsupportedError:
        return UnsupportedError(msg, self.inst.loc)

    def reader(self, v: Value):
        if isinstance(v, Const):
            c = np.array(bool(v.bits) if v.type.kind == "pred" else v.bits, storage_dtype(v.type))
            return lambda sel, n: np.full(n, c)
        vals, slot = self.launch.vals, self.launch.slot_of(v)
        return lambda sel, n: vals[slot][sel]

    def arg(self, i: int):
        return self.reader(self.inst.args[i])

    def set(self):
        vals, slot = self.launch.vals, self.launch.slot_of(self.inst.result)

        def wr(sel, v):
            vals[slot][sel] = v

        return wr


def build_executor(launch, inst: Instruction):
    """The executor of ``inst``; an op without semantics is an :class:`UnsupportedError` at its line."""
    x = OpBinder(launch, inst)
    if inst.op in PURE_OPS:
        return _pure(x)
    builder = IMPLS.get(inst.op)
    if builder is None:
        raise x.error(f"the IR interpreter has no semantics for op '{inst.op}'")
    return builder(x)


def _pure(x: OpBinder):
    """Arithmetic, comparison, selection and conversion: :func:`evaluate`, probed once at build."""
    inst = x.inst
    try:
        with np.errstate(all="ignore"):
            evaluate(inst, [np.zeros(1, storage_dtype(a.type)) for a in inst.args])
    except (KeyError, ValueError, TypeError, NotImplementedError, UnsupportedError) as e:
        msg = e.message if isinstance(e, UnsupportedError) else str(e).strip("'\"")
        raise x.error(f"no semantics for '{inst.op}.{inst.type}' in xcc.semantics: {msg}") from None
    rds, wr = [x.reader(a) for a in inst.args], x.set()
    if len(rds) == 1:
        r0 = rds[0]
        return lambda sel, idx, n: wr(sel, evaluate(inst, [r0(sel, n)]))
    return lambda sel, idx, n: wr(sel, evaluate(inst, [r(sel, n) for r in rds]))


# ============================================================================= values from the launch
@impl("ld_param")
def _ld_param(x: OpBinder):
    t, rt = x.inst.type, x.inst.result.type
    off, params = x.attrs["offset"], x.launch.params
    if off < 0 or off + t.bytes > len(params):
        raise x.error(f"parameter load of {t.bytes} bytes at offset {off} is outside the "
                      f"{len(params)}-byte parameter buffer")
    raw = np.frombuffer(params, UDTYPE[t.bits], 1, off)
    value = _extend(raw, t, rt)
    wr = x.set()
    return lambda sel, idx, n: wr(sel, value[0])


@impl("sreg")
def _sreg(x: OpBinder):
    f = x.launch.special(x.attrs["name"])
    if f is None:
        raise x.error(f"special register %{x.attrs['name']} is not supported by the IR interpreter yet")
    wr, bits = x.set(), x.inst.result.type.bits
    return lambda sel, idx, n: wr(sel, as_unsigned(np.asarray(f(idx), U64), bits))


@impl("addr_of")
def _addr_of(x: OpBinder):
    """A variable's address; a device function's ``.local``/``.param`` variables lie in the calling
    thread's current frame (``base()[idx]`` + offset)."""
    found = x.launch.address_of(x.attrs["symbol"], x.attrs["space"], x.inst)
    if found is None:
        raise x.error(f".{x.attrs['space']} variable '{x.attrs['symbol']}' is not known to the IR interpreter")
    addr, base = found
    dt, wr = storage_dtype(x.inst.result.type), x.set()
    v = dt(addr)
    if base is None:
        return lambda sel, idx, n: wr(sel, v)
    return lambda sel, idx, n: wr(sel, (base()[idx] + addr).astype(dt))


@impl("cvta")
def _cvta(x: OpBinder):
    """``cvta.<space>``: the space's window base added (to generic) or subtracted (from generic), in
    the address's width; global addresses are generic addresses (:mod:`xcc.sim.memory`)."""
    space = x.attrs.get("space")
    a, wr = x.arg(0), x.set()
    if space == "global":
        return lambda sel, idx, n: wr(sel, a(sel, n))
    if space not in WINDOWS:
        raise x.error(f"cvta for the .{space} space is not supported by the IR interpreter")
    bits = x.inst.type.bits
    base = WINDOWS[space] if x.attrs.get("to_generic", True) else -WINDOWS[space]
    dt = UDTYPE[bits]
    delta = dt(base % (1 << bits))
    return lambda sel, idx, n: wr(sel, (np.asarray(a(sel, n), dt) + delta).astype(dt))


@impl("isspacep")
def _isspacep(x: OpBinder):
    """``isspacep.<space>``: whether a generic address lies in the space's window (global: in none)."""
    space = x.attrs["space"]
    if space != "global" and space not in WINDOWS:
        raise x.error(f"isspacep.{space} is not supported by the IR interpreter")
    a, wr = x.arg(0), x.set()
    code = 0 if space == "global" else 1 + sorted(WINDOWS, key=WINDOWS.get).index(space)
    return lambda sel, idx, n: wr(sel, window_space(np.asarray(a(sel, n), U64)) == code)


@impl("fence")
def _fence(x: OpBinder):
    """Every access is performed in program order by one interpreter: fences change nothing."""
    return lambda sel, idx, n: None


# ============================================================================= memory
def _extend(raw, t: ScalarType, rt: ScalarType):
    """A loaded ``t`` value in a register of ``rt``: sign-extended for signed types, else zero-extended."""
    if rt.bits == t.bits or rt.kind == "pred":
        return raw
    if rt.bits < t.bits:
        return as_unsigned(raw, rt.bits)
    kind = "s" if t.kind == "s" else "u"
    return convert(raw, rt.bits, kind, t.bits, kind)


def _memory(x: OpBinder):
    """(memory, address function ``where(sel, idx, n)``) of a ld/st/atom."""
    space = x.attrs["space"]
    width = x.inst.type.bytes
    if width not in (1, 2, 4, 8):
        raise x.error(f"{width}-byte accesses are not supported by the IR interpreter yet")
    where = x.launch.addresser(space, x.arg(0), int(x.attrs.get("offset", 0)), width)
    if where is None:
        raise x.error(f"memory accesses to the .{space} space are not supported by the IR interpreter yet")
    return where, width


@impl("ld")
def _ld(x: OpBinder):
    (mem, where), width = _memory(x)
    t, rt, wr = x.inst.type, x.inst.result.type, x.set()
    return lambda sel, idx, n: wr(sel, _extend(mem().load(where(sel, idx, n), width), t, rt))


@impl("st")
def _st(x: OpBinder):
    (mem, where), width = _memory(x)
    v, bits = x.arg(1), x.inst.type.bits
    return lambda sel, idx, n: mem().store(where(sel, idx, n), _truncate(v(sel, n), bits), width)


def _truncate(v, bits: int):
    """The low ``bits`` of a register value (zero-extended when the register is narrower)."""
    v = np.asarray(v)
    return v.astype(UDTYPE[bits]) if v.dtype.itemsize * 8 < bits else as_unsigned(v, bits)


@impl("atom")
def _atom(x: OpBinder):
    (mem, where), width = _memory(x)
    t, rt, wr = x.inst.type, x.inst.result.type, x.set()
    op = x.attrs["atom_op"]
    if "part" in x.attrs:  # a .b128 atomic's two halves (xcc.ir.lower_b128)
        return _atom128(x)
    kind = "f" if t.is_float else "s" if t.kind == "s" else "u"
    if t.name in HALF_ATOMIC_KINDS and op in ("add", "min", "max"):  # f16/bf16 (x2): their own rules (xcc.sim.memory)
        kind = t.name
    b = x.arg(1)
    if op == "cas":
        c = x.arg(2)
        return lambda sel, idx, n: wr(sel, _extend(mem().atomic(
            "cas", where(sel, idx, n), _truncate(c(sel, n), t.bits), width, kind,
            compare=_truncate(b(sel, n), t.bits)), t, rt))
    if kind in ("f",) and op not in ("add", "exch"):
        raise x.error(f"atom.{op}.{t} is not supported by the memory model")
    return lambda sel, idx, n: wr(sel, _extend(mem().atomic(op, where(sel, idx, n), _truncate(b(sel, n), t.bits),
                                                            width, kind), t, rt))


def _atom128(x: OpBinder):
    """``atom.cas.b128`` / ``atom.exch.b128`` and the strong ``ld``/``st.b128`` (atom_op ``ld``: no operand, nothing
    written; ``st``: as exch): part 0 performs the 16-byte transaction at ``[a + offset]`` (new value
    {b, c} for exch; compare {b, c}, new {d, e} for cas: low halves first), d = the old bits 63:0, and keeps the
    old bits 127:64 in the thread's latch; part 1, which follows it, d = that latch (both as xg1's ATOM*.128 and
    ATOMX.GET)."""
    wr, launch = x.set(), x.launch
    if x.attrs["part"] == 1:
        return lambda sel, idx, n: wr(sel, launch.atom_latch()[idx])
    mem, where = launch.addresser(x.attrs["space"], x.arg(0), int(x.attrs.get("offset", 0)), 16)
    if where is None:
        raise x.error(f"memory accesses to the .{x.attrs['space']} space are not supported by the IR interpreter yet")
    rds = [x.arg(k) for k in range(1, len(x.inst.args))]

    def pair(r0, r1, sel, n):
        return np.stack([np.asarray(r0(sel, n), U64), np.asarray(r1(sel, n), U64)], axis=1)

    def run(sel, idx, n):  # a strong ld.b128 (atom_op 'ld') has no operand: it writes nothing
        v = pair(*rds[-2:], sel, n) if rds else np.zeros((n, 2), U64)
        c = pair(*rds[:2], sel, n) if len(rds) == 4 else None
        old = np.asarray(mem().atomic(x.attrs["atom_op"], where(sel, idx, n), v, 16, "u", compare=c)).reshape(-1, 2)
        launch.atom_latch()[idx] = old[:, 1]
        wr(sel, old[:, 0])

    return run


# ============================================================================= warp-level
@impl("shfl")
def _shfl(x: OpBinder):
    """shfl.sync: :func:`xcc.semantics.warp.shfl` (d, or p when ``attrs.valid``)."""
    a, b, c, mask = x.arg(0), x.arg(1), x.arg(2), x.arg(3)
    mode, want_pred, wr = x.attrs["mode"], bool(x.attrs.get("valid")), x.set()
    if mode not in warp.SHFL_MODES:
        raise x.error(f"shfl.{mode} is not supported by the IR interpreter yet")

    def run(sel, idx, n):
        d, p = warp.shfl(mode, idx, a(sel, n), b(sel, n), c(sel, n), mask(sel, n))
        wr(sel, p if want_pred else d)

    return run


@impl("vote")
def _vote(x: OpBinder):
    """vote.sync: :func:`xcc.semantics.warp.ballot` or :func:`xcc.semantics.warp.vote`."""
    p, mask, mode, wr = x.arg(0), x.arg(1), x.attrs["mode"], x.set()
    if mode == "ballot":
        return lambda sel, idx, n: wr(sel, warp.ballot(idx, p(sel, n), mask(sel, n)))
    if mode not in warp.VOTE_MODES:
        raise x.error(f"vote.{mode} is not supported by the IR interpreter yet")
    return lambda sel, idx, n: wr(sel, warp.vote(mode, idx, p(sel, n), mask(sel, n)))


@impl("match")
def _match(x: OpBinder):
    """match.sync: :func:`xcc.semantics.warp.match` (d, or p when ``attrs.pred``)."""
    a, mask, mode, want_pred, wr = x.arg(0), x.arg(1), x.attrs["mode"], bool(x.attrs.get("pred")), x.set()

    def run(sel, idx, n):
        d, p = warp.match(mode, idx, a(sel, n), mask(sel, n))
        wr(sel, p if want_pred else d)

    return run


@impl("redux")
def _redux(x: OpBinder):
    """redux.sync: :func:`xcc.semantics.warp.redux`."""
    a, mask, op, wr = x.arg(0), x.arg(1), x.attrs["redop"], x.set()
    signed = x.inst.type.kind == "s"
    return lambda sel, idx, n: wr(sel, warp.redux(op, idx, a(sel, n), mask(sel, n), signed))


@impl("activemask")
def _activemask(x: OpBinder):
    wr = x.set()
    return lambda sel, idx, n: wr(sel, warp.activemask(idx))


# ============================================================================= device printf
