"""Executors of the control instructions (branch, exit, barriers, convergence barriers, NOP) and the
moves (MOV, special registers, constant-bank loads); registered in :data:`xcc.sim.isa.exec_base.IMPLS`."""

from __future__ import annotations

import struct

import numpy as np

from xcc.backend.isa import NUM_CONV_BARRIERS, RZ, SPECIAL_REGS
from xcc.diagnostics import ObjectFormatError
from xcc.semantics.threads import special_register
from xcc.sim.isa.exec_base import _LO32, U32, U64, Binder, Control, ExecFault, _const, impl


# ============================================================================= control
@impl("BRA")
def _bra(x: Binder):
    return Control("branch", target=x.pc + 1 + int(x.ops["b"]))


@impl("EXIT")
def _exit(x: Binder):
    return Control("exit")


@impl("BAR")
def _bar(x: Binder):
    return Control("barrier", barrier=x.ric("b"))


@impl("BAR.CNT", "BAR.RED")
def _bar_counted(x: Binder):
    """A named barrier: ``barrier`` reads b; ``count`` c (None: the CTA); BAR.RED's ``pred`` and ``result``."""
    count = None if x.ops.get("c", RZ) == RZ else x.r("c")
    if x.inst.mnemonic == "BAR.CNT":
        return Control("barrier", barrier=x.ric("b"), count=count, mode=x.mod("mode"))
    return Control("barrier", barrier=x.ric("b"), count=count, mode=x.mod("op"), pred=x.p("ps"), result=x.set_r("d"))


@impl("BSYNC")
def _bsync(x: Binder):
    k = int(x.ops["c"])
    if not 0 <= k < NUM_CONV_BARRIERS:
        raise ObjectFormatError(f"instruction {x.pc}: invalid convergence barrier B{k}")
    return Control("reconverge", barrier=k)


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


