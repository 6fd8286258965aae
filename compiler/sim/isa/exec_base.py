"""The executors' common ground: :class:`Binder`, :class:`Control`, the ``@impl`` registry :data:`IMPLS`.

What each xg1 instruction does is one executor builder per mnemonic of :data:`isa.TABLE`, registered
with ``@impl("MNEMONIC")`` in a module per instruction family (``exec_control``, ``exec_int``,
``exec_float``, ``exec_memory``, ``exec_warp``, ``exec_half``, ``exec_matrix``, ``exec_calls``); the
complete table is :mod:`xcc.sim.isa.executors`, which imports them all and checks that every mnemonic
has one.  A builder takes a :class:`Binder` for one decoded instruction of one wave of a launch and
returns either

* an *executor* ``run(sel, idx, n)`` that applies the instruction to the ``n``
  threads ``idx`` (a sorted int64 array of thread slots; ``sel`` is the same
  set as a ``slice`` when the slots are contiguous, else ``idx`` itself), or
* a :class:`Control` describing a scheduling action (branch, exit, barrier),
  which :mod:`xcc.sim.isa.emulator` carries out.

Operand readers and writers are bound when the executor is built, so the
interpreter's inner loop does no decoding.  Every value-level operation calls
:mod:`xcc.semantics`; the executor modules only wire operands to those functions.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xcc.backend.isa import NUM_PREDS, PT, RZ, TABLE
from xcc.backend.minst import CBank, Imm, MInst
from xcc.diagnostics import ObjectFormatError
from xcc.semantics import integer as I
from xcc.sim.waves import ExecFault

__all__ = ["IMPLS", "Binder", "Control", "ExecFault", "Executor", "impl"]

U32, U64 = np.uint32, np.uint64
_32 = U64(32)
_LO32 = U64(0xFFFFFFFF)

Executor = Callable[[object, np.ndarray, int], None]
IMPLS: dict[str, Callable[[Binder], Executor | Control]] = {}


def impl(*mnemonics: str):
    """Register the decorated builder as the executor factory of ``mnemonics``."""

    def deco(fn):
        for m in mnemonics:
            if m not in TABLE:
                raise KeyError(f"@impl({m!r}): no such instruction in the ISA table")
            if m in IMPLS:
                raise KeyError(f"@impl({m!r}) registered twice")
            IMPLS[m] = fn
        return fn

    return deco


@dataclass(frozen=True)
class Control:
    """An instruction the scheduler carries out, by what it does to the threads (``kind``): 'branch'
    (``target``), 'exit', 'barrier' (``barrier``: a reader of the CTA barrier number; ``count``, ``mode``,
    ``pred``, ``result`` for named barriers and reductions), 'reconverge' (``barrier``: the convergence
    barrier number a BSYNC waits at), 'call' (``target``; ``barrier``: the stack probe and the
    return-address writer), 'return' (``barrier``: the return-address reader) or 'mbar_wait' (``barrier``:
    ``run(sel, idx, n, pc)`` -> the threads that go on; SYNCS.PHASECHK.TRYWAIT)."""

    kind: str
    target: int = 0
    barrier: object = None
    count: object = None  # BAR.CNT / BAR.RED: a reader of the thread count (None: the whole CTA)
    mode: str = "SYNC"  # BAR: SYNC, ARV (arrive only), or the reduction POPC / AND / OR
    pred: object = None  # BAR.RED: a reader of the predicate reduced
    result: object = None  # BAR.RED: the writer of d


def _const(value, dtype):
    v = dtype(value)
    return lambda sel, n: np.broadcast_to(v, (n,))


def _fail(reason: str):
    def rd(sel, n):
        raise ExecFault(reason)

    return rd


def _drop(sel, v):
    pass


def _raise(reason: str):
    """An executor that faults when (and only if) it is executed."""

    def run(sel, idx, n):
        raise ExecFault(reason)

    return run


_ZERO32, _ZERO64 = _const(0, U32), _const(0, U64)
_TRUE, _FALSE = _const(True, np.bool_), _const(False, np.bool_)


class Binder:
    """Operand readers/writers of one instruction against the launch's wave state ``ctx``.

    Readers are ``rd(sel, n) -> array of n``; writers ``wr(sel, values)``.  ``ctx`` provides
    ``regs`` (uint32 [R, T]), ``preds`` (bool [8, T]), ``cbank`` (bytes of constant bank 0) and
    the launch geometry used by the special-register, shared-memory and warp executors.
    """

    def __init__(self, ctx, inst: MInst, pc: int):
        self.ctx, self.inst, self.pc = ctx, inst, pc
        self.ops = inst.ops
        self.nregs = ctx.regs.shape[0]

    # -- modifiers -------------------------------------------------------------------------
    def mod(self, name: str) -> str:
        return self.inst.mods.get(name, self.inst.d.mod(name).values[0])

    def flag(self, name: str) -> bool:
        return bool(self.inst.mods.get(name))

    # -- registers -------------------------------------------------------------------------
    def _reg(self, field: str, width: int) -> int:
        r = self.ops.get(field, RZ)  # an absent operand encodes as field 0; decode always fills it
        if r == RZ:
            return r
        if not isinstance(r, int) or r < 0 or r + width > self.nregs:
            what = f"R{r}:R{r + 1}" if width == 2 else f"R{r}"
            raise ObjectFormatError(f"instruction {self.pc} ({self.inst.mnemonic}) uses {what} but the kernel "
                                    f"declares {self.nregs} register(s)")
        return r

    def r(self, field: str):
        r = self._reg(field, 1)
        if r == RZ:
            return _ZERO32
        row = self.ctx.regs[r]
        return lambda sel, n: row[sel]

    def w(self, field: str):
        r = self._reg(field, 2)
        if r == RZ:
            return _ZERO64
        lo, hi = self.ctx.regs[r], self.ctx.regs[r + 1]
        return lambda sel, n: lo[sel].astype(U64) | (hi[sel].astype(U64) << _32)

    def set_r(self, field: str = "d"):
        r = self._reg(field, 1)
        if r == RZ:
            return _drop
        row = self.ctx.regs[r]

        def wr(sel, v):
            row[sel] = v

        return wr

    def set_w(self, field: str = "d"):
        r = self._reg(field, 2)
        if r == RZ:
            return _drop
        lo, hi = self.ctx.regs[r], self.ctx.regs[r + 1]

        def wr(sel, v):
            v = np.asarray(v, U64)
            hi[sel] = (v >> _32).astype(U32)
            lo[sel] = (v & _LO32).astype(U32)

        return wr

    # -- register / immediate / constant-bank operands -------------------------------------------
    def cbank(self, v, size: int) -> bytes | None:
        """Bank 0 (launch dimensions, parameters, .global addresses) or bank 3 (the module's .const data)."""
        if not isinstance(v, CBank) or v.bank not in (0, 3):
            return None
        cb = self.ctx.cbank if v.bank == 0 else getattr(self.ctx, "cbank3", b"")
        if v.offset % size or v.offset + size > len(cb):
            return None
        return cb[v.offset:v.offset + size]

    def _cbank_fail(self, v, size):
        if not isinstance(v, CBank):
            return _fail(f"operand {v!r} is not a constant-bank reference")
        if v.bank not in (0, 3):
            return _fail(f"constant bank c[{v.bank:#x}] does not exist (banks 0 and 3 are mapped)")
        return _fail(f"{size}-byte constant bank access c[{v.bank:#x}][{v.offset:#x}] is "
                     f"{'misaligned' if v.offset % size else 'out of range'} (bank {v.bank} holds "
                     f"{len(self.ctx.cbank if v.bank == 0 else getattr(self.ctx, 'cbank3', b''))} bytes)")

    def ric(self, field: str = "b"):
        v = self.ops[field]
        if isinstance(v, Imm):
            return _const(v.value & 0xFFFFFFFF, U32)
        if isinstance(v, CBank):
            raw = self.cbank(v, 4)
            return self._cbank_fail(v, 4) if raw is None else _const(struct.unpack("<I", raw)[0], U32)
        return self.r(field)

    def wic(self, field: str = "b"):
        v = self.ops[field]
        if isinstance(v, Imm):
            x = v.value & 0xFFFFFFFF
            return _const(x | (0xFFFFFFFF00000000 if x >> 31 else 0), U64)  # sign-extended
        if isinstance(v, CBank):
            raw = self.cbank(v, 8)
            return self._cbank_fail(v, 8) if raw is None else _const(struct.unpack("<Q", raw)[0], U64)
        return self.w(field)

    # -- predicates ------------------------------------------------------------------------
    def p(self, field: str):
        v = self.ops.get(field, PT)
        reg, neg = v if isinstance(v, tuple) else (v, False)
        if reg == PT:
            return _FALSE if neg else _TRUE
        if not 0 <= reg < NUM_PREDS:
            raise ObjectFormatError(f"instruction {self.pc}: invalid predicate P{reg}")
        row = self.ctx.preds[reg]
        return (lambda sel, n: ~row[sel]) if neg else (lambda sel, n: row[sel])

    def set_p(self, field: str = "pd"):
        reg = self.ops.get(field, PT)
        if reg == PT:
            return _drop
        row = self.ctx.preds[reg]

        def wr(sel, v):
            row[sel] = v

        return wr


# ============================================================================= predicate results
_BOOL = {"AND": I.band, "OR": I.bor, "XOR": I.bxor}


def _setp(x: Binder, a, b, cmp_fn):
    """pd = cmp_fn(a, b) bool ps."""
    ps, pd = x.p("ps"), x.set_p("pd")
    combine = _BOOL[x.mod("bool")]
    cmp = x.mod("cmp")
    if cmp in ("F", "T"):
        const = cmp == "T"
        return lambda sel, idx, n: pd(sel, combine(np.broadcast_to(const, (n,)), ps(sel, n), 1))
    return lambda sel, idx, n: pd(sel, combine(cmp_fn(cmp.lower(), a(sel, n), b(sel, n)), ps(sel, n), 1))


