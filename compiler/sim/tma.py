"""Tile-mode tensor copies (``cp.async.bulk.tensor``, ``cp.reduce.async.bulk.tensor``,
``cp.async.bulk.prefetch.tensor``; PTX ISA 9.7.9.25.5) for both interpreters' executors: the tensor map is read
through the generic address space (a ``__grid_constant__`` kernel parameter's window, or global memory), decoded
and applied by :mod:`xcc.semantics.tensormap`.  A load writes the box to shared memory when the instruction
executes, then its bytes complete transactions on the mbarrier (:mod:`xcc.sim.mbarrier`), as a bulk copy's do;
a store or reduction reads the box from shared memory and writes (reduces) its in-bounds elements to global
memory when it executes, so ``cp.async.bulk.commit_group`` / ``wait_group`` have nothing left to wait for; a
prefetch checks its operands and moves no data.
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import tensormap as T
from xcc.semantics.faults import MemoryFault
from xcc.sim import mbarrier as mbar
from xcc.sim.waves import ExecFault

__all__ = ["tma_load_executor", "tma_prefetch_executor", "tma_store_executor"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WORDS = np.arange(16, dtype=np.uint64) * np.uint64(8)


def _ints(v, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), (n,)).astype(np.int64)


def _maps(what: str, generic, tmap, coords, sel, idx, n) -> tuple[list[dict], list[np.ndarray]]:
    """Each thread's decoded tensor map and its signed coordinates, checked (a located fault names the thread)."""
    t = np.broadcast_to(np.asarray(tmap(sel, n), np.uint64), (n,))
    cs = [_ints(c(sel, n), n).astype(np.int32).astype(np.int64) for c in coords]
    try:
        raw = generic().load((np.repeat(t, 16) + np.tile(_WORDS, n), np.repeat(idx, 16)), 8)
    except MemoryFault as f:
        f.thread = None if f.thread is None else int(f.thread) // 16
        raise
    raw = np.ascontiguousarray(np.asarray(raw, np.uint64)).reshape(n, 16)
    maps = []
    for i in range(n):
        try:
            tm = T.decode(raw[i].tobytes())
        except T.TensorMapError as e:
            raise ExecFault(f"{what}: {e}", i) from None
        if tm["rank"] != len(cs):
            raise ExecFault(f"{what}: a {len(cs)}d copy through a tensor map of rank {tm['rank']}", i)
        maps.append(tm)
    return maps, cs


def _box_shared(what: str, view, sh, i: int, idx, tm, off):
    """The shared addresses of thread ``i``'s box at CTA-relative ``sh[i]`` (128-byte aligned, swizzled)."""
    if sh[i] % 128:
        raise ExecFault(f"{what}: the shared box address {int(sh[i]):#x} must be 128-byte aligned", i)
    return view.at(np.full(off.size, idx[i]), T.swizzle(sh[i] + off, tm["swizzle"]), tm["esize"])


def tma_load_executor(launch, view: mbar.SharedView, gmem, generic, dst, tmap, coords, mbar_at=None, write=None):
    """``run(sel, idx, n)``: readers of the CTA-relative shared destination, the tensor map's generic address
    and each coordinate (signed); ``generic()`` the generic memory; then a complete-tx of the box's bytes on
    the mbarrier at ``mbar_at`` (CTA-relative; None: none) and/or ``write(sel, bytes)``."""
    what = "cp.async.bulk.tensor"

    def run(sel, idx, n):
        d = _ints(dst(sel, n), n)
        maps, cs = _maps(what, generic, tmap, coords, sel, idx, n)
        smem, sizes = view.mem(), np.zeros(n, np.int64)
        for i, tm in enumerate(maps):
            addr, inside, off, fill = T.tile_box(tm, [c[i] for c in cs])
            es = tm["esize"]
            vals = np.full(addr.size, fill, _UINT[es])
            try:
                if inside.any():
                    vals[inside] = gmem.load(addr[inside].astype(np.uint64), es)
                at = _box_shared(what, view, d, i, idx, tm, off)
            except MemoryFault as f:
                f.thread = i
                raise
            smem.store(at, vals, es)
            sizes[i] = addr.size * es
        if mbar_at is not None:
            where = view.at(idx, _ints(mbar_at(sel, n), n), 8)
            mbar.apply(launch, smem, where, lambda i, st: mbar._tx_rule(st, int(sizes[i]), True, what))
        if write is not None:
            write(sel, sizes.astype(np.uint32))

    return run


def tma_store_executor(view: mbar.SharedView, gmem, generic, src, tmap, coords, redop: str | None = None):
    """``run(sel, idx, n)`` of a tile-mode store (``redop`` None) or reduction: readers of the CTA-relative
    shared source, the tensor map's generic address and each coordinate (signed); each thread's box is read
    from shared memory and its in-bounds elements written (or reduced, as the atomics do, in thread order)
    to global memory; elements outside the tensor are dropped."""
    what = "cp.async.bulk.tensor" if redop is None else "cp.reduce.async.bulk.tensor"

    def run(sel, idx, n):
        s = _ints(src(sel, n), n)
        maps, cs = _maps(what, generic, tmap, coords, sel, idx, n)
        smem = view.mem()
        for i, tm in enumerate(maps):
            es = tm["esize"]
            if redop is not None:
                try:
                    kind, _ = T.reduce_kind(redop, tm["dtype"])
                except T.TensorMapError as e:
                    raise ExecFault(f"{what}: {e}", i) from None
            addr, inside, off, _ = T.tile_box(tm, [c[i] for c in cs])
            try:
                vals = smem.load(_box_shared(what, view, s, i, idx, tm, off), es)
                if not inside.any():
                    continue
                where = addr[inside].astype(np.uint64)
                vals = np.asarray(vals)[inside]
                if redop is None:
                    gmem.store(where, vals, es)
                else:
                    gmem.atomic(redop, where, vals, es, kind)
            except MemoryFault as f:
                f.thread = i
                raise

    return run


def tma_prefetch_executor(generic, tmap, coords):
    """``run(sel, idx, n)`` of ``cp.async.bulk.prefetch.tensor``: the tensor map and the coordinates' count are
    checked as a load's; no data moves (xcc models no L2)."""
    what = "cp.async.bulk.prefetch.tensor"

    def run(sel, idx, n):
        _maps(what, generic, tmap, coords, sel, idx, n)

    return run
