"""Tile-mode tensor loads (``cp.async.bulk.tensor...global.tile.mbarrier::complete_tx::bytes``, PTX ISA
9.7.9.25.5) for both interpreters' executors: the tensor map is read through the generic address space (a
``__grid_constant__`` kernel parameter's window, or global memory), decoded and applied by
:mod:`xcc.semantics.tensormap`; the box is written to shared memory when the instruction executes, then its
bytes complete transactions on the mbarrier (:mod:`xcc.sim.mbarrier`), as a bulk copy's do.
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import tensormap as T
from xcc.semantics.faults import MemoryFault
from xcc.sim import mbarrier as mbar
from xcc.sim.waves import ExecFault

__all__ = ["tma_load_executor"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WORDS = np.arange(16, dtype=np.uint64) * np.uint64(8)


def _ints(v, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), (n,)).astype(np.int64)


def tma_load_executor(launch, view: mbar.SharedView, gmem, generic, dst, tmap, coords, mbar_at=None, write=None):
    """``run(sel, idx, n)``: readers of the CTA-relative shared destination, the tensor map's generic address
    and each coordinate (signed); ``generic()`` the generic memory; then a complete-tx of the box's bytes on
    the mbarrier at ``mbar_at`` (CTA-relative; None: none) and/or ``write(sel, bytes)``."""
    what = "cp.async.bulk.tensor"

    def run(sel, idx, n):
        d, t = _ints(dst(sel, n), n), np.broadcast_to(np.asarray(tmap(sel, n), np.uint64), (n,))
        cs = [_ints(c(sel, n), n).astype(np.int32).astype(np.int64) for c in coords]
        try:
            raw = generic().load((np.repeat(t, 16) + np.tile(_WORDS, n), np.repeat(idx, 16)), 8)
        except MemoryFault as f:
            f.thread = None if f.thread is None else int(f.thread) // 16
            raise
        raw = np.ascontiguousarray(np.asarray(raw, np.uint64)).reshape(n, 16)
        smem, sizes = view.mem(), np.zeros(n, np.int64)
        for i in range(n):
            try:
                tm = T.decode(raw[i].tobytes())
            except T.TensorMapError as e:
                raise ExecFault(f"{what}: {e}", i) from None
            if tm["rank"] != len(cs):
                raise ExecFault(f"{what}: a {len(cs)}d load through a tensor map of rank {tm['rank']}", i)
            if d[i] % 128:
                raise ExecFault(f"{what}: the shared destination {int(d[i]):#x} must be 128-byte aligned", i)
            addr, inside, off, fill = T.tile_box(tm, [c[i] for c in cs])
            es = tm["esize"]
            vals = np.full(addr.size, fill, _UINT[es])
            try:
                if inside.any():
                    vals[inside] = gmem.load(addr[inside].astype(np.uint64), es)
                at = view.at(np.full(addr.size, idx[i]), T.swizzle(d[i] + off, tm["swizzle"]), es)
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
