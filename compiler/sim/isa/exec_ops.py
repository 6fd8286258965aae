"""What each xg1 instruction does: one executor builder per mnemonic of :data:`isa.TABLE`.

A builder, registered with ``@impl("MNEMONIC")``, takes a :class:`Binder` for
one decoded instruction of one wave of a launch and returns either

* an *executor* ``run(sel, idx, n)`` that applies the instruction to the ``n``
  threads ``idx`` (a sorted int64 array of thread slots; ``sel`` is the same
  set as a ``slice`` when the slots are contiguous, else ``idx`` itself), or
* a :class:`Control` describing a scheduling action (branch, exit, barrier),
  which :mod:`xcc.sim.isa.emulator` carries out.

Operand readers and writers are bound when the executor is built, so the
interpreter's inner loop does no decoding.  Every value-level operation calls
:mod:`xcc.semantics`; this module only wires operands to those functions.
Importing it asserts that every mnemonic of the ISA table has an executor.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xcc.backend.isa import NUM_CONV_BARRIERS, NUM_PREDS, PT, RZ, SPECIAL_REGS, TABLE
from xcc.backend.minst import CBank, Imm, MInst
from xcc.diagnostics import ObjectFormatError
from xcc.semantics import floating, warp
from xcc.semantics import integer as I
from xcc.semantics.compare import compare, select
from xcc.semantics.convert import convert
from xcc.semantics.threads import special_register
from xcc.sim.memory import check_window
from xcc.sim.waves import ExecFault

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
    """A scheduling instruction: ``kind`` is 'BRA' (``target``), 'EXIT', 'BAR' (``barrier``: a reader
    of the barrier number; ``count``, ``mode``, ``pred``, ``result`` for named barriers and reductions)
    or 'BSYNC' (``barrier``: the convergence barrier number)."""

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


# ============================================================================= control
@impl("BRA")
def _bra(x: Binder):
    return Control("BRA", target=x.pc + 1 + int(x.ops["b"]))


@impl("EXIT")
def _exit(x: Binder):
    return Control("EXIT")


@impl("BAR")
def _bar(x: Binder):
    return Control("BAR", barrier=x.ric("b"))


@impl("BAR.CNT", "BAR.RED")
def _bar_counted(x: Binder):
    """A named barrier: ``barrier`` reads b; ``count`` c (None: the CTA); BAR.RED's ``pred`` and ``result``."""
    count = None if x.ops.get("c", RZ) == RZ else x.r("c")
    if x.inst.mnemonic == "BAR.CNT":
        return Control("BAR", barrier=x.ric("b"), count=count, mode=x.mod("mode"))
    return Control("BAR", barrier=x.ric("b"), count=count, mode=x.mod("op"), pred=x.p("ps"), result=x.set_r("d"))


@impl("BSYNC")
def _bsync(x: Binder):
    k = int(x.ops["c"])
    if not 0 <= k < NUM_CONV_BARRIERS:
        raise ObjectFormatError(f"instruction {x.pc}: invalid convergence barrier B{k}")
    return Control("BSYNC", barrier=k)


@impl("BSSY")
def _bssy(x: Binder):
    k = int(x.ops["c"])
    if not 0 <= k < NUM_CONV_BARRIERS:
        raise ObjectFormatError(f"instruction {x.pc}: invalid convergence barrier B{k}")
    row = x.ctx.bmask[k]

    def run(sel, idx, n):
        row[sel] = True

    return run


@impl("NOP", "MEMBAR")
def _nop(x: Binder):
    return lambda sel, idx, n: None


# ============================================================================= moves
@impl("MOV")
def _mov(x: Binder):
    b, d = x.ric("b"), x.set_r()
    return lambda sel, idx, n: d(sel, b(sel, n))


_PTX_SPECIAL = {"SR_CLOCKLO": "clock"}  # xg1 names that are not SR_ + the PTX name in capitals


def _special(x: Binder, sr: int):
    """Reader ``f(idx) -> uint64 values`` of special register ``sr`` for thread slots ``idx``."""
    c = x.ctx
    name = SPECIAL_REGS[sr] if 0 <= sr < len(SPECIAL_REGS) else None
    ptx = _PTX_SPECIAL.get(name, name[3:].lower()) if name else None
    f = special_register(ptx, c, c.tpb_pad) if ptx else None
    if f is not None:
        return lambda idx: np.asarray(f(idx)).astype(U64)
    reason = f"unknown special register {sr}"

    def unknown(idx):
        raise ExecFault(reason)

    return unknown


@impl("S2R")
def _s2r(x: Binder):
    f, d = _special(x, int(x.ops["b"])), x.set_r()
    return lambda sel, idx, n: d(sel, (f(idx) & _LO32).astype(U32))


@impl("CS2R.64")
def _cs2r(x: Binder):
    f, d = _special(x, int(x.ops["b"])), x.set_w()
    return lambda sel, idx, n: d(sel, f(idx))


@impl("LDC")
def _ldc(x: Binder):
    v = x.ops["b"]
    raw = x.cbank(v, 4)
    b = x._cbank_fail(v, 4) if raw is None else _const(struct.unpack("<I", raw)[0], U32)
    d = x.set_r()
    return lambda sel, idx, n: d(sel, b(sel, n))


@impl("LDC.64")
def _ldc64(x: Binder):
    v = x.ops["b"]
    raw = x.cbank(v, 8)
    b = x._cbank_fail(v, 8) if raw is None else _const(struct.unpack("<Q", raw)[0], U64)
    d = x.set_w()
    return lambda sel, idx, n: d(sel, b(sel, n))


# ============================================================================= integer
@impl("IADD3")
def _iadd3(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    if x.flag("NEG_A"):
        a0 = a
        a = lambda sel, n: I.ineg(a0(sel, n), 32)  # noqa: E731
    if x.flag("NEG_B"):
        return lambda sel, idx, n: d(sel, I.add(I.add(a(sel, n), I.ineg(b(sel, n), 32), 32), c(sel, n), 32))
    return lambda sel, idx, n: d(sel, I.add(I.add(a(sel, n), b(sel, n), 32), c(sel, n), 32))


@impl("IADD.64")
def _iadd64(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    op = I.sub if x.flag("NEG_B") else I.add
    return lambda sel, idx, n: d(sel, op(a(sel, n), b(sel, n), 64))


@impl("IMAD")
def _imad(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    mode, signed = x.mod("mode").lower(), x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 32, mode, signed))


@impl("IMAD.WIDE")
def _imad_wide(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.w("c"), x.set_w()
    signed = x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 32, "wide", signed))


@impl("IMAD.64")
def _imad64(x: Binder):
    a, b, c, d = x.w("a"), x.wic("b"), x.w("c"), x.set_w()
    mode, signed = x.mod("mode").lower(), x.mod("type") == "S64"
    return lambda sel, idx, n: d(sel, I.mad(a(sel, n), b(sel, n), c(sel, n), 64, mode, signed))


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


@impl("ISETP")
def _isetp(x: Binder):
    kind = "s" if x.mod("type") == "S32" else "u"
    return _setp(x, x.r("a"), x.ric("b"), lambda cmp, a, b: compare(cmp, a, b, 32, kind))


@impl("ISETP.64")
def _isetp64(x: Binder):
    kind = "s" if x.mod("type") == "S64" else "u"
    return _setp(x, x.w("a"), x.wic("b"), lambda cmp, a, b: compare(cmp, a, b, 64, kind))


def _flush(v):
    """``cvt.ftz.f32.f32``: subnormal f32 inputs become sign-preserving zeros."""
    return convert(v, 32, "f", 32, "f", ftz=True)


@impl("FSETP")
def _fsetp(x: Binder):
    a, b = x.r("a"), x.ric("b")
    if x.flag("FTZ"):
        a0, b0 = a, b
        a, b = (lambda sel, n: _flush(a0(sel, n))), (lambda sel, n: _flush(b0(sel, n)))
    return _setp(x, a, b, lambda cmp, a, b: compare(cmp, a, b, 32, "f"))


@impl("PLOP3")
def _plop3(x: Binder):
    pa, ps, pd = x.p("pa"), x.p("ps"), x.set_p("pd")
    lut = int(x.mod("lut"), 16)
    table = np.array([(lut >> i) & 1 for i in range(4)], bool)  # bit (pa << 1) | ps
    return lambda sel, idx, n: pd(sel, table[(pa(sel, n).astype(np.intp) << 1) | ps(sel, n)])


@impl("SEL")
def _sel(x: Binder):
    a, b, ps, d = x.r("a"), x.ric("b"), x.p("ps"), x.set_r()
    return lambda sel, idx, n: d(sel, select(ps(sel, n), a(sel, n), b(sel, n)))


@impl("P2R")
def _p2r(x: Binder):
    ps, d = x.p("ps"), x.set_r()
    one, zero = U32(1), U32(0)
    return lambda sel, idx, n: d(sel, select(ps(sel, n), one, zero))


@impl("LOP3")
def _lop3(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    lut = int(x.mod("lut"), 16)
    return lambda sel, idx, n: d(sel, I.lop3(a(sel, n), b(sel, n), c(sel, n), lut, 32))


def _shift(x: Binder, fn, bits: int, signed: bool):
    a = x.r("a") if bits == 32 else x.w("a")
    b, d = x.ric("b"), (x.set_r() if bits == 32 else x.set_w())
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), bits, signed))


@impl("SHL")
def _shl(x: Binder):
    return _shift(x, I.shl, 32, False)


@impl("SHR")
def _shr(x: Binder):
    return _shift(x, I.shr, 32, x.mod("type") == "S32")


@impl("SHL.64")
def _shl64(x: Binder):
    return _shift(x, I.shl, 64, False)


@impl("SHR.64")
def _shr64(x: Binder):
    return _shift(x, I.shr, 64, x.mod("type") == "S64")


@impl("SGXT")
def _sgxt(x: Binder):
    """Sign-extend from the low b bits (b >= 32: a unchanged; b == 0: 0): (a << (32-b)) >>s (32-b)."""
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    u32 = U32(32)

    def run(sel, idx, n):
        s = I.sub(u32, I.imin(b(sel, n), u32, 32), 32)
        d(sel, I.shr(I.shl(a(sel, n), s, 32), s, 32, True))

    return run


@impl("IMNMX")
def _imnmx(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, signed = (I.imin if x.mod("minmax") == "MIN" else I.imax), x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, signed))


def _unary(x: Binder, fn):
    a, d = x.r("a"), x.set_r()
    return lambda sel, idx, n: d(sel, fn(a(sel, n), 32))


@impl("IABS")
def _iabs(x: Binder):
    return _unary(x, I.iabs)


@impl("POPC")
def _popc(x: Binder):
    return _unary(x, I.popc)


@impl("FLO")
def _flo(x: Binder):
    signed, sh = x.mod("type") == "S32", x.flag("SH")
    return _unary(x, lambda a, bits: I.bfind(a, bits, signed, sh))


@impl("BREV")
def _brev(x: Binder):
    return _unary(x, I.brev)


def _field_control(b):
    """BFE/BFI control word -> (pos, len): bits 7:0 and 15:8."""
    return b & U32(0xFF), (b >> U32(8)) & U32(0xFF)


@impl("BFE", "BFE.64")
def _bfe(x: Binder):
    bits = 64 if x.inst.mnemonic.endswith(".64") else 32
    a, d = (x.w("a"), x.set_w()) if bits == 64 else (x.r("a"), x.set_r())
    b, signed = x.ric("b"), x.mod("type") in ("S32", "S64")

    def run(sel, idx, n):
        pos, ln = _field_control(b(sel, n))
        d(sel, I.bfe(a(sel, n), pos, ln, bits, signed))

    return run


@impl("BFI", "BFI.64")
def _bfi(x: Binder):
    bits = 64 if x.inst.mnemonic.endswith(".64") else 32
    a, c, d = (x.w("a"), x.w("c"), x.set_w()) if bits == 64 else (x.r("a"), x.r("c"), x.set_r())
    b = x.ric("b")

    def run(sel, idx, n):
        pos, ln = _field_control(b(sel, n))
        d(sel, I.bfi(a(sel, n), c(sel, n), pos, ln, bits))

    return run


@impl("PRMT")
def _prmt(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    mode = None if x.mod("mode") == "IDX" else x.mod("mode").lower()
    return lambda sel, idx, n: d(sel, I.prmt(a(sel, n), c(sel, n), b(sel, n), mode))


@impl("SHF")
def _shf(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    left, clamp = x.mod("dir") == "L", not x.flag("W")
    return lambda sel, idx, n: d(sel, I.shf(a(sel, n), c(sel, n), b(sel, n), left, clamp))


@impl("BMSK")
def _bmsk(x: Binder):
    a, b, d, clamp = x.r("a"), x.ric("b"), x.set_r(), not x.flag("W")
    return lambda sel, idx, n: d(sel, I.bmsk(a(sel, n), b(sel, n), clamp))


@impl("IDP.4A")
def _idp4a(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    sa, sb = x.mod("atype") == "S8", x.mod("btype") == "S8"
    return lambda sel, idx, n: d(sel, I.dp4a(a(sel, n), b(sel, n), c(sel, n), sa, sb))


@impl("IDP.2A")
def _idp2a(x: Binder):
    a, b, c, d = x.r("a"), x.ric("b"), x.r("c"), x.set_r()
    sa, sb, hi = x.mod("atype") == "S16", x.mod("btype") == "S8", x.mod("mode") == "HI"
    return lambda sel, idx, n: d(sel, I.dp2a(a(sel, n), b(sel, n), c(sel, n), sa, sb, hi))


@impl("IDIV", "IDIV.64")
def _idiv(x: Binder):
    if x.inst.mnemonic == "IDIV":
        a, b, d, bits = x.r("a"), x.ric("b"), x.set_r(), 32
    else:
        a, b, d, bits = x.w("a"), x.wic("b"), x.set_w(), 64
    fn, signed = (I.div if x.mod("op") == "DIV" else I.rem), x.mod("type") in ("S32", "S64")
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), bits, signed))


# ============================================================================= floating point
def _fmods(x: Binder) -> dict:
    """Keyword arguments of the semantics call for the RND, FTZ and SAT modifiers."""
    return dict(rnd=x.mod("rnd").lower(), ftz=x.flag("FTZ"), sat=x.flag("SAT"))


@impl("FADD")
def _fadd(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, kw = (floating.fsub if x.flag("NEG_B") else floating.fadd), _fmods(x)
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, **kw))


@impl("FMUL")
def _fmul(x: Binder):
    a, b, d, kw = x.r("a"), x.ric("b"), x.set_r(), _fmods(x)
    return lambda sel, idx, n: d(sel, floating.fmul(a(sel, n), b(sel, n), 32, **kw))


@impl("FFMA")
def _ffma(x: Binder):
    a, b, c, d, kw = x.r("a"), x.ric("b"), x.r("c"), x.set_r(), _fmods(x)
    return lambda sel, idx, n: d(sel, floating.ffma(a(sel, n), b(sel, n), c(sel, n), 32, **kw))


@impl("FMNMX")
def _fmnmx(x: Binder):
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    fn, ftz = (floating.fmin if x.mod("minmax") == "MIN" else floating.fmax), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 32, ftz=ftz))


_MUFU = {"RCP": "rcp", "SQRT": "sqrt", "RSQ": "rsqrt", "EX2": "ex2", "LG2": "lg2", "SIN": "sin", "COS": "cos",
         "TANH": "tanh"}


@impl("MUFU")
def _mufu(x: Binder):
    """RCP/SQRT are correctly rounded (.RN exact; .APPROX computed the same way, within PTX's bounds)."""
    a, d = x.r("a"), x.set_r()
    op, ftz = _MUFU[x.mod("fn")], x.flag("FTZ")
    return lambda sel, idx, n: d(sel, floating.funary(op, a(sel, n), 32, "rn", ftz=ftz))


@impl("I2F")
def _i2f(x: Binder):
    a, d = x.r("a"), x.set_r()
    kind, rnd = ("s" if x.mod("type") == "S32" else "u"), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 32, kind, rnd=rnd))


@impl("F2I")
def _f2i(x: Binder):
    a, d = x.r("a"), x.set_r()
    kind, rnd, ftz = ("s" if x.mod("type") == "S32" else "u"), x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, kind, 32, "f", rnd=rnd, ftz=ftz))


@impl("F2F.F64.F32")
def _f2f_wide(x: Binder):
    a, d = x.r("a"), x.set_w()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 64, "f", 32, "f"))


@impl("F2F.F32.F64")
def _f2f_narrow(x: Binder):
    a, d = x.w("a"), x.set_r()
    rnd, ftz = x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 64, "f", rnd=rnd, ftz=ftz))


@impl("FDIV")
def _fdiv(x: Binder):
    """Every prec computes xcc.semantics' division (correctly rounded), within PTX's bounds."""
    a, b, d = x.r("a"), x.ric("b"), x.set_r()
    rnd, ftz = x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, floating.fdiv(a(sel, n), b(sel, n), 32, rnd, ftz=ftz))


@impl("FRND")
def _frnd(x: Binder):
    a, d = x.r("a"), x.set_r()
    rnd, ftz = x.mod("rnd").lower(), x.flag("FTZ")
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 32, "f", 32, "f", rnd=rnd, ftz=ftz))


@impl("DRND")
def _drnd(x: Binder):
    a, d, rnd = x.w("a"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, convert(a(sel, n), 64, "f", 64, "f", rnd=rnd))


def _int_kind(x: Binder) -> str:
    return "s" if x.mod("type") in ("S32", "S64") else "u"


@impl("I2F.64", "I2F.F64", "I2F.F64.64")
def _i2f_wide(x: Binder):
    """Integer -> float where a side is 64 bits: I2F.64 (s64/u64 -> f32), I2F.F64 (32-bit -> f64),
    I2F.F64.64 (64-bit -> f64)."""
    mn = x.inst.mnemonic
    src_bits, dst_bits = (32 if mn == "I2F.F64" else 64), (32 if mn == "I2F.64" else 64)
    a = x.r("a") if src_bits == 32 else x.w("a")
    d = x.set_r() if dst_bits == 32 else x.set_w()
    kind = _int_kind(x)
    rnd = x.mod("rnd").lower() if any(m.name == "rnd" for m in x.inst.d.mods) else None
    rnd = None if rnd == "rn" else rnd
    return lambda sel, idx, n: d(sel, convert(a(sel, n), dst_bits, "f", src_bits, kind, rnd=rnd))


@impl("F2I.64", "F2I.F64", "F2I.F64.64")
def _f2i_wide(x: Binder):
    """Float -> integer where a side is 64 bits: F2I.64 (f32 -> 64-bit), F2I.F64 (f64 -> 32-bit),
    F2I.F64.64 (f64 -> 64-bit); saturating, NaN -> 0."""
    mn = x.inst.mnemonic
    src_bits, dst_bits = (32 if mn == "F2I.64" else 64), (32 if mn == "F2I.F64" else 64)
    a = x.r("a") if src_bits == 32 else x.w("a")
    d = x.set_r() if dst_bits == 32 else x.set_w()
    kind, rnd = _int_kind(x), x.mod("rnd").lower()
    ftz = x.flag("FTZ") if src_bits == 32 else False
    return lambda sel, idx, n: d(sel, convert(a(sel, n), dst_bits, kind, src_bits, "f", rnd=rnd, ftz=ftz))


@impl("DADD")
def _dadd(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    fn, rnd = (floating.fsub if x.flag("NEG_B") else floating.fadd), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 64, rnd))


@impl("DMUL")
def _dmul(x: Binder):
    a, b, d, rnd = x.w("a"), x.wic("b"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.fmul(a(sel, n), b(sel, n), 64, rnd))


@impl("DFMA")
def _dfma(x: Binder):
    a, b, c, d, rnd = x.w("a"), x.wic("b"), x.w("c"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.ffma(a(sel, n), b(sel, n), c(sel, n), 64, rnd))


@impl("DSETP")
def _dsetp(x: Binder):
    return _setp(x, x.w("a"), x.wic("b"), lambda cmp, a, b: compare(cmp, a, b, 64, "f"))


@impl("DMNMX")
def _dmnmx(x: Binder):
    a, b, d = x.w("a"), x.wic("b"), x.set_w()
    fn = floating.fmin if x.mod("minmax") == "MIN" else floating.fmax
    return lambda sel, idx, n: d(sel, fn(a(sel, n), b(sel, n), 64))


@impl("DDIV")
def _ddiv(x: Binder):
    a, b, d, rnd = x.w("a"), x.wic("b"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.fdiv(a(sel, n), b(sel, n), 64, rnd))


@impl("DSQRT")
def _dsqrt(x: Binder):
    a, d, rnd = x.w("a"), x.set_w(), x.mod("rnd").lower()
    return lambda sel, idx, n: d(sel, floating.funary("sqrt", a(sel, n), 64, rnd))


# ============================================================================= memory
_SIZE = {"32": (4, "u"), "U8": (1, "u"), "S8": (1, "s"), "U16": (2, "u"), "S16": (2, "s")}


def _extend(v, width: int, kind: str):
    """A loaded 1/2/4-byte value zero/sign-extended into a 32-bit register."""
    return v if width == 4 else convert(v, 32, kind, 8 * width, kind)


def _truncate(v, width: int):
    """The low ``width`` bytes of a 32-bit register value."""
    return v if width == 4 else convert(v, 8 * width, "u", 32, "u")


def _global_addr(x: Binder):
    a = x.w("a")
    off = U64(int(x.ops["b"]) % (1 << 64))
    if off == 0:
        return a
    return lambda sel, n: a(sel, n) + off


def _shared_addr(x: Binder):
    """Reader of (flat offset into the wave's shared memory, CTA-relative address) for a width."""
    a, b, c = x.r("a"), int(x.ops["b"]), x.ctx

    def addr(sel, idx, n, width):
        rel = a(sel, n).astype(np.int64) + b
        size = c.smem_size
        check_window(rel, size, width, "shared", f"the CTA's shared memory is {size} bytes")
        return (idx // c.tpb_pad) * c.smem_stride + rel

    return addr


def _local_addr(x: Binder):
    """Reader of the flat offset into the wave's local memory of ``[a + b]`` (the thread's own frame)."""
    a, b, c = x.r("a"), int(x.ops["b"]), x.ctx

    def addr(sel, idx, n, width):
        rel = a(sel, n).astype(np.int64) + b
        size = c.local_size
        check_window(rel, size, width, "local", f"the thread's local memory is {size} bytes")
        return idx * c.local_stride + rel

    return addr


def _generic_addr(x: Binder):
    """Reader of ``(generic addresses, wave slots)`` of ``[a + b]``, for :class:`GenericMemory`."""
    a = _global_addr(x)
    return lambda sel, idx, n, width: (a(sel, n), idx)


_SPACE_ADDR = {"L": _local_addr, "": _generic_addr}
_SPACE_MEM = {"L": "lmem", "": "generic"}


def _loads_stores(prefix: str) -> None:
    """LD<prefix>, ST<prefix> and their .64 forms over ``ctx.<memory>`` (local or generic)."""
    addr_of, mem_name = _SPACE_ADDR[prefix], _SPACE_MEM[prefix]

    @impl(f"LD{prefix}")
    def _ld(x: Binder):
        addr, d, ctx = addr_of(x), x.set_r(), x.ctx
        width, kind = _SIZE[x.mod("size")]
        return lambda sel, idx, n: d(sel, _extend(getattr(ctx, mem_name).load(addr(sel, idx, n, width), width),
                                                  width, kind))

    @impl(f"ST{prefix}")
    def _st(x: Binder):
        addr, c, ctx = addr_of(x), x.r("c"), x.ctx
        width = _SIZE[x.mod("size")][0]
        return lambda sel, idx, n: getattr(ctx, mem_name).store(addr(sel, idx, n, width),
                                                                _truncate(c(sel, n), width), width)

    @impl(f"LD{prefix}.64")
    def _ld64(x: Binder):
        addr, d, ctx = addr_of(x), x.set_w(), x.ctx
        return lambda sel, idx, n: d(sel, getattr(ctx, mem_name).load(addr(sel, idx, n, 8), 8))

    @impl(f"ST{prefix}.64")
    def _st64(x: Binder):
        addr, c, ctx = addr_of(x), x.w("c"), x.ctx
        return lambda sel, idx, n: getattr(ctx, mem_name).store(addr(sel, idx, n, 8), c(sel, n), 8)


_loads_stores("L")
_loads_stores("")


@impl("LDG")
def _ldg(x: Binder):
    addr, d, g = _global_addr(x), x.set_r(), x.ctx.gmem
    width, kind = _SIZE[x.mod("size")]
    return lambda sel, idx, n: d(sel, _extend(g.load(addr(sel, n), width), width, kind))


@impl("LDG.64")
def _ldg64(x: Binder):
    addr, d, g = _global_addr(x), x.set_w(), x.ctx.gmem
    return lambda sel, idx, n: d(sel, g.load(addr(sel, n), 8))


@impl("STG")
def _stg(x: Binder):
    addr, c, g = _global_addr(x), x.r("c"), x.ctx.gmem
    width = _SIZE[x.mod("size")][0]
    return lambda sel, idx, n: g.store(addr(sel, n), _truncate(c(sel, n), width), width)


@impl("STG.64")
def _stg64(x: Binder):
    addr, c, g = _global_addr(x), x.w("c"), x.ctx.gmem
    return lambda sel, idx, n: g.store(addr(sel, n), c(sel, n), 8)


@impl("LDS")
def _lds(x: Binder):
    addr, d, ctx = _shared_addr(x), x.set_r(), x.ctx
    width, kind = _SIZE[x.mod("size")]
    return lambda sel, idx, n: d(sel, _extend(ctx.smem.load(addr(sel, idx, n, width), width), width, kind))


@impl("STS")
def _sts(x: Binder):
    addr, c, ctx = _shared_addr(x), x.r("c"), x.ctx
    width = _SIZE[x.mod("size")][0]
    return lambda sel, idx, n: ctx.smem.store(addr(sel, idx, n, width), _truncate(c(sel, n), width), width)


@impl("LDS.64")
def _lds64(x: Binder):
    addr, d, ctx = _shared_addr(x), x.set_w(), x.ctx
    return lambda sel, idx, n: d(sel, ctx.smem.load(addr(sel, idx, n, 8), 8))


@impl("STS.64")
def _sts64(x: Binder):
    addr, c, ctx = _shared_addr(x), x.w("c"), x.ctx
    return lambda sel, idx, n: ctx.smem.store(addr(sel, idx, n, 8), c(sel, n), 8)


_ATOM_KIND = {"U32": "u", "S32": "s", "F32": "f", "U64": "u", "S64": "s", "F64": "f"}


def _atomic(x: Binder, space: str):
    op, kind = x.mod("op").lower(), _ATOM_KIND[x.mod("type")]
    width = 8 if x.inst.mnemonic.endswith(".64") else 4
    if width == 8:
        d, c, e = x.set_w(), x.w("c"), x.w("e")
    else:
        d, c, e = x.set_r(), x.r("c"), x.r("e")
    ctx = x.ctx
    if kind == "f" and op not in ("add", "exch", "cas"):
        return _raise(f"invalid atomic: {x.inst.mnemonic}.{x.mod('op')}.{x.mod('type')} is not defined on floats")
    if width == 8 and op in ("inc", "dec"):
        return _raise(f"invalid atomic: {x.inst.mnemonic}.{x.mod('op')} is defined on 32 bits only")
    if space == "global":
        gaddr, mem = _global_addr(x), ctx.gmem

        def where(sel, idx, n):
            return gaddr(sel, n)
    elif space == "generic":
        gaddr, mem = _global_addr(x), ctx.generic

        def where(sel, idx, n):
            return gaddr(sel, n), idx
    else:
        saddr, mem = _shared_addr(x), ctx.smem

        def where(sel, idx, n):
            return saddr(sel, idx, n, width)

    if op == "cas":  # c = compare, e = new value
        return lambda sel, idx, n: d(sel, mem.atomic("cas", where(sel, idx, n), e(sel, n), width, kind,
                                                     compare=c(sel, n)))
    return lambda sel, idx, n: d(sel, mem.atomic(op, where(sel, idx, n), c(sel, n), width, kind))


@impl("ATOMG", "ATOMG.64")
def _atomg(x: Binder):
    return _atomic(x, "global")


@impl("ATOMS", "ATOMS.64")
def _atoms(x: Binder):
    return _atomic(x, "shared")


@impl("ATOM", "ATOM.64")
def _atom_generic(x: Binder):
    return _atomic(x, "generic")


# ============================================================================= warp-level
@impl("SHFL")
def _shfl(x: Binder):
    """PTX shfl.sync with the member mask e: :func:`xcc.semantics.warp.shfl`."""
    a, b, c, e = x.r("a"), x.ric("b"), x.r("c"), x.r("e")
    d, pd = x.set_r(), x.set_p("pd")
    mode = x.mod("mode").lower()

    def run(sel, idx, n):
        out, ok = warp.shfl(mode, idx, a(sel, n), b(sel, n), c(sel, n), e(sel, n))
        d(sel, out)
        pd(sel, ok)

    return run


@impl("VOTE")
def _vote(x: Binder):
    """PTX vote.sync (d = ballot, pd = mode) over the member mask e: :mod:`xcc.semantics.warp`."""
    ps, e, d, pd = x.p("ps"), x.r("e"), x.set_r(), x.set_p("pd")
    mode = {"ALL": "all", "ANY": "any", "EQ": "uni"}[x.mod("mode")]

    def run(sel, idx, n):
        p, mask = ps(sel, n), e(sel, n)
        if d is not _drop:
            d(sel, warp.ballot(idx, p, mask))
        if pd is not _drop:
            pd(sel, warp.vote(mode, idx, p, mask))

    return run


@impl("MATCH", "MATCH.64")
def _match(x: Binder):
    """PTX match.sync over the member mask e: :func:`xcc.semantics.warp.match`."""
    a = x.r("a") if x.inst.mnemonic == "MATCH" else x.w("a")
    e, d, pd, mode = x.r("e"), x.set_r(), x.set_p("pd"), x.mod("mode").lower()

    def run(sel, idx, n):
        mask, same = warp.match(mode, idx, a(sel, n), e(sel, n))
        d(sel, mask)
        pd(sel, same)

    return run


_REDUX = {"SUM": "add", "MIN": "min", "MAX": "max", "AND": "and", "OR": "or", "XOR": "xor"}


@impl("REDUX")
def _redux(x: Binder):
    """PTX redux.sync over the member mask e: :func:`xcc.semantics.warp.redux`."""
    a, e, d = x.r("a"), x.r("e"), x.set_r()
    op, signed = _REDUX[x.mod("op")], x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, warp.redux(op, idx, a(sel, n), e(sel, n), signed))


from xcc.sim.isa import exec_calls, exec_half, exec_matrix  # noqa: E402, F401  (they register their executors)

_missing = sorted(set(TABLE) - set(IMPLS))
assert not _missing, f"ISA instructions without an interpreter implementation: {_missing}"
