"""Executors of the mbarrier and bulk-copy instructions (``SYNCS.INIT``, ``SYNCS.ARRIVE``, ``SYNCS.TX``,
``SYNCS.PHASECHK``, ``BLKCP``, ``BLKCP.S2G``, ``BLKCP.S2S``, ``BLKCP.MC``, ``BLKRED``, ``BLKRED.S2S``, ``BLKRED.H``,
``TMALD``, ``TMALD.3D``, ``TMALD.ND``, ``TMAST``, ``TMAPF``, ``TMAPF.I2C``, ``TMALD.X``, ``BOXBYTES``, ``LDGSTS.ARRIVE``; PTX ISA 9.7.13.15 ``mbarrier``, 9.7.9.25.4 ``cp.async.bulk`` and 9.7.9.25.5 ``cp.async.bulk.tensor``).

Each binds its operands and calls :mod:`xcc.sim.mbarrier`, the functions the IR interpreter calls, so both
engines update an mbarrier and copy bit for bit alike.  ``SYNCS.PHASECHK.TRYWAIT`` is a :class:`Control`
(kind ``mbar_wait``): the emulator runs it and lets only the threads whose phase completed go on; the others
wait until an arrive or complete-tx completes a phase of their object.
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import tensormap as T
from xcc.semantics.faults import MemoryFault
from xcc.sim import mbarrier as mbar
from xcc.sim.copies import copy_groups
from xcc.sim.isa.exec_base import Binder, Control, impl
from xcc.sim.tma import (
    box_bytes_executor,
    bulk_multicast_executor,
    multicast_tx_executor,
    tma_load_executor,
    tma_prefetch_executor,
    tma_store_executor,
)


def _view(x: Binder) -> mbar.SharedView:
    c = x.ctx
    return mbar.SharedView(lambda: c.smem, lambda: c.smem_size, lambda: c.smem_stride, c.tpb_pad, c.launch.csize)


def _where(x: Binder, width: int = 8):
    return _view(x).where(x.r("a"), int(x.ops["b"]), width)


@impl("SYNCS.INIT")
def _syncs_init(x: Binder):
    inval, ctx = x.flag("INVAL"), x.ctx
    return mbar.init_executor(ctx.launch, lambda: ctx.smem, _where(x), None if inval else x.r("c"), inval)


@impl("SYNCS.ARRIVE")
def _syncs_arrive(x: Binder):
    ctx, drop = x.ctx, x.flag("DROP")
    return mbar.arrive_executor(ctx.launch, lambda: ctx.smem, _where(x), x.r("c"), x.r("e"), x.set_w("d"),
                                drop=drop, no_complete=x.flag("NOCOMPLETE"),
                                what="mbarrier.arrive_drop" if drop else "mbarrier.arrive")


@impl("LDGSTS.ARRIVE")
def _ldgsts_arrive(x: Binder):
    ctx = x.ctx
    return mbar.copy_arrive_executor(ctx.launch, lambda: ctx.smem, _where(x),
                                     lambda: copy_groups(ctx.launch, ctx.regs.shape[1]), x.flag("NOINC"))


@impl("SYNCS.TX")
def _syncs_tx(x: Binder):
    ctx, complete = x.ctx, x.flag("COMPLETE")
    return mbar.tx_executor(ctx.launch, lambda: ctx.smem, _where(x), x.r("c"), complete,
                            "mbarrier.complete_tx" if complete else "mbarrier.expect_tx")


@impl("SYNCS.PHASECHK")
def _syncs_phasechk(x: Binder):
    ctx, wait = x.ctx, x.flag("TRYWAIT")
    test = mbar.test_executor(ctx.launch, lambda: ctx.smem, _where(x), x.w("c"), x.flag("PARITY"),
                              "mbarrier.try_wait" if wait else "mbarrier.test_wait")
    wr = x.set_p("pd")
    if not wait:
        return lambda sel, idx, n: wr(sel, test(sel, idx, n)[0])

    def run(sel, idx, n, pc):
        done, addr = test(sel, idx, n)
        wr(sel, np.ones(n, bool))
        return mbar.suspend(ctx.launch, pc, idx, done, addr, ctx.smem_stride)

    return Control("mbar_wait", barrier=run)


@impl("UCGABAR.ARV")
def _cluster_arrive(x: Binder):
    ctx = x.ctx
    return lambda sel, idx, n: ctx.launch.wave.cluster_arrive(idx)


@impl("UCGABAR.WAIT")
def _cluster_wait(x: Binder):
    """A :class:`Control` of kind ``mbar_wait``: the threads whose cluster phase completed go on (xcc.sim.waves)."""
    ctx = x.ctx
    return Control("mbar_wait", barrier=lambda sel, idx, n, pc: ctx.launch.wave.cluster_wait(idx, pc))


def _lo(r):
    return lambda sel, n: (np.asarray(r(sel, n), np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.int64)


def _hi(r):
    return lambda sel, n: (np.asarray(r(sel, n), np.uint64) >> np.uint64(32)).astype(np.int64)


def _tma_operands(x: Binder):
    """(CTA-relative shared address reader, coordinate readers) of a TMA row: TMALD/TMALD.3D (shared[a + b],
    e.lo, e.hi, TMALD.3D's third in b) or TMALD.ND/TMAST/TMAPF (shared[a.lo]; e.lo, e.hi, b.lo, b.hi, a.hi)."""
    e = x.w("e")
    if next(o for o in x.inst.d.operands if o.field == "a").kind == "R":  # TMALD, TMALD.3D
        three = x.inst.mnemonic == "TMALD.3D"  # the third coordinate in b, the whole shared address in a
        a, off = x.r("a"), 0 if three else int(x.ops["b"])
        shared = lambda sel, n: np.asarray(a(sel, n)).astype(np.int64) + off  # noqa: E731
        return shared, [_lo(e), _hi(e), x.ric("b")] if three else [_lo(e), _hi(e)][:int(x.mod("rank")[1])]
    a, b = x.w("a"), x.wic("b")
    return _lo(a), [_lo(e), _hi(e), _lo(b), _hi(b), _hi(a)][:int(x.mod("rank")[1])]  # (TMALD.MC: ranks 1 .. 4)


def tma_memrec(x: Binder):
    """The cycle model's record of a TMA load or store (``rec(esel, eidx, m, rec, wbase)``): the global addresses
    of the in-bounds elements of each thread's box, as accesses of its warp; nothing for a map that is not one
    (the executor faults)."""
    ctx, c = x.ctx, x.w("c")
    _, coords = _tma_operands(x)
    offs = _im2col_offsets(x)

    def record(esel, eidx, m, rec, wb):
        maps = np.broadcast_to(np.asarray(c(esel, m), np.uint64), (m,))
        cs_all = [np.broadcast_to(np.asarray(r(esel, m)), (m,)).astype(np.int64) for r in coords]
        os_all = [np.broadcast_to(np.asarray(r(esel, m)), (m,)).astype(np.int64) for r in offs or ()]
        warps, addrs, width = [], [], 0
        for i in range(m):
            try:
                raw = ctx.generic.load((maps[i] + np.arange(16, dtype=np.uint64) * np.uint64(8),
                                        np.full(16, eidx[i])), 8)
                tm = T.decode(np.asarray(raw, np.uint64).tobytes())
            except (MemoryFault, T.TensorMapError):
                return
            if tm["rank"] != len(coords) or (tm["im2col"] is None) != (offs is None):
                return
            cs = [int(np.int32(np.uint32(c[i] & 0xFFFFFFFF))) for c in cs_all]
            addr, inside, _, _ = (T.tile_box(tm, cs) if offs is None
                                  else T.im2col_box(tm, cs, [int(o[i]) & 0xFFFF for o in os_all]))
            addrs.append(addr[inside].astype(np.uint64))
            warps.append(np.full(int(inside.sum()), (int(eidx[i]) >> 5) + wb, np.int64))
            width = tm["esize"]
        if width and sum(a.size for a in addrs):
            rec.global_access(np.concatenate(warps), np.concatenate(addrs), width)

    return record


@impl("TMALD", "TMALD.3D", "TMALD.ND", "TMALD.MC", "TMALD.I2C", "TMALD.X")
def _tmald(x: Binder):
    ctx, wide = x.ctx, x.inst.mnemonic == "TMALD.X"
    dst, coords = _tma_operands(x)
    if wide:
        d = x.w("d")
        mask = (lambda sel, n: np.asarray(d(sel, n), np.uint64) >> np.uint64(48)) if x.mod("MC") else None
    else:
        mask = _hi(x.w("a")) if x.inst.mnemonic == "TMALD.MC" else None
    return tma_load_executor(ctx.launch, _view(x), ctx.gmem, lambda: ctx.generic, dst, x.w("c"), coords,
                             None, None if wide else x.set_r("d"), mask=mask, offsets=_im2col_offsets(x))


@impl("BOXBYTES")
def _boxbytes(x: Binder):
    return box_bytes_executor(lambda: x.ctx.generic, x.w("c"), int(x.mod("rank")[1]), bool(x.mod("I2C")),
                              x.set_r("d"))


def _im2col_offsets(x: Binder):
    """Readers of the 16-bit im2col offsets of TMALD.I2C (a.hi[15:0], a.hi[31:16]) and TMALD.X.I2C (the 64-bit d,
    16 bits each from bit 0), zeros for TMAST.I2C (.im2col_no_offs); None for the other rows."""
    if x.inst.mnemonic == "TMALD.X" and x.mod("I2C"):
        d = x.w("d")
        return [lambda sel, n, k=k: (np.asarray(d(sel, n), np.uint64) >> np.uint64(16 * k)).astype(np.int64) & 0xFFFF
                for k in range(int(x.mod("rank")[1]) - 2)]
    if x.inst.mnemonic == "TMAST" and x.mod("I2C"):  # .im2col_no_offs: the column at zero offsets
        return [lambda sel, n: np.zeros(n, np.int64)] * (int(x.mod("rank")[1]) - 2)
    if x.inst.mnemonic != "TMALD.I2C":
        return None
    a = _hi(x.w("a"))
    return [lambda sel, n, k=k: (np.asarray(a(sel, n)) >> (16 * k)) & 0xFFFF for k in range(int(x.mod("rank")[1]) - 2)]


@impl("SYNCS.TX.MC")
def _syncs_tx_mc(x: Binder):
    a, off = x.r("a"), int(x.ops["b"])
    return multicast_tx_executor(x.ctx.launch, _view(x), lambda sel, n: np.asarray(a(sel, n)).astype(np.int64) + off,
                                 x.r("c"), x.r("e"))


@impl("TMAST")
def _tmast(x: Binder):
    ctx, red = x.ctx, x.mod("red")
    src, coords = _tma_operands(x)
    return tma_store_executor(_view(x), ctx.gmem, lambda: ctx.generic, src, x.w("c"), coords,
                              red.lower() if red else None, bool(x.mod("I2C")))


@impl("TMAPF", "TMAPF.I2C")
def _tmapf(x: Binder):
    _, coords = _tma_operands(x)
    return tma_prefetch_executor(lambda: x.ctx.generic, x.w("c"), coords, x.inst.mnemonic == "TMAPF.I2C")


@impl("BLKCP.MC")
def _blkcp_mc(x: Binder):
    a, off = x.w("a"), int(x.ops["b"])
    dst = lambda sel, n: (np.asarray(a(sel, n)).astype(np.int64) & 0xFFFFFFFF) + off  # noqa: E731
    return bulk_multicast_executor(_view(x), x.ctx.gmem, dst, x.w("c"), x.r("e"), _hi(a))


@impl("BLKRED", "BLKRED.S2S", "BLKRED.H")
def _blkred(x: Binder):
    ctx, s2s = x.ctx, x.inst.mnemonic == "BLKRED.S2S"
    a, off = x.r("a"), int(x.ops["b"])
    src = lambda sel, n: np.asarray(a(sel, n)).astype(np.int64) + off  # noqa: E731
    kind, width = mbar.reduce_kind(x.mod("type"))
    return mbar.bulk_reduce_executor(_view(x), ctx.gmem, x.r("c") if s2s else x.w("c"), src, x.r("e"),
                                     x.mod("op").lower(), kind, width, to_shared=s2s)


@impl("BLKCP", "BLKCP.S2G", "BLKCP.S2S")
def _blkcp(x: Binder):
    ctx, mn = x.ctx, x.inst.mnemonic
    a, off = x.r("a"), int(x.ops["b"])
    c = x.r("c") if mn == "BLKCP.S2S" else x.w("c")
    shared = lambda sel, n: np.asarray(a(sel, n)).astype(np.int64) + off  # noqa: E731
    dst, src = (shared, c) if mn == "BLKCP" else (c, shared)
    return mbar.bulk_executor(ctx.launch, _view(x), ctx.gmem, mn != "BLKCP.S2G", dst, src, x.r("e"), None,
                              from_shared=mn == "BLKCP.S2S")
