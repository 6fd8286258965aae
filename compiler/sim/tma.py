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
from xcc.semantics.cluster import CLUSTER_RANK_SHIFT, OFFSET_MASK
from xcc.semantics.faults import MemoryFault
from xcc.semantics.halfp import fmt_of, hminmax
from xcc.sim import mbarrier as mbar
from xcc.sim.waves import ExecFault

__all__ = ["box_bytes_executor", "bulk_multicast_executor", "multicast_tx_executor", "tma_load_executor", "tma_prefetch_executor", "tma_store_executor"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WORDS = np.arange(16, dtype=np.uint64) * np.uint64(8)


def _ints(v, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), (n,)).astype(np.int64)


def _maps(what: str, generic, tmap, coords, sel, idx, n, im2col: bool = False) -> tuple[list[dict], list[np.ndarray]]:
    """Each thread's decoded tensor map and its signed coordinates, checked (a located fault names the thread):
    its rank, and its mode (``im2col``: made by cuTensorMapEncodeIm2col, else by cuTensorMapEncodeTiled)."""
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
        if (tm["im2col"] is not None) != im2col:
            raise ExecFault(f"{what}: {'an im2col' if im2col else 'a tile-mode'} copy through a tensor map made by "
                            f"{'cuTensorMapEncodeIm2col' if tm['im2col'] else 'cuTensorMapEncodeTiled'}", i)
        maps.append(tm)
    return maps, cs


def _check_tile(what: str, tm: dict, cs: list[int], i: int, store: bool) -> None:
    """What an H200 refuses with an illegal-instruction error (tests/data/gpu/tma_h200.jsonl), a located fault
    here: a tile-mode box whose innermost coordinate is not a multiple of 16 bytes, and a tile-mode store or
    reduction at a negative coordinate (loads there fill with zeros)."""
    if cs[0] * tm["esize"] % 16:
        raise ExecFault(f"{what}: the innermost coordinate {cs[0]} is {cs[0] * tm['esize']} bytes into a row: it must "
                        "be a multiple of 16 bytes (an H200 faults with an illegal instruction)", i)
    if store and min(cs) < 0:
        raise ExecFault(f"{what}: a tile-mode store at negative coordinates {tuple(cs)} (an H200 faults with an "
                        "illegal instruction; loads there read zeros)", i)


def _box_shared(what: str, view, base: int, i: int, idx, tm, off):
    """The shared addresses of thread ``i``'s box at CTA-relative ``base`` (128-byte aligned, swizzled; a rank
    field in bits 24 .. names a CTA of the cluster, xcc.semantics.cluster)."""
    if base % 128:
        raise ExecFault(f"{what}: the shared box address {int(base):#x} must be 128-byte aligned", i)
    return view.at(np.full(off.size, idx[i]), T.swizzle(base + off, tm["swizzle"]), tm["esize"])


def _multicast(what: str, view, base: int, mask: int, i: int) -> list[int]:
    """The CTA-relative addresses of offset ``base`` in each CTA of the cluster whose bit is set in the 16-bit
    ``ctaMask`` (PTX ISA 9.7.9.25.5: ``.multicast::cluster``), lowest rank first."""
    ranks = [r for r in range(16) if mask >> r & 1]
    if any(r >= view.cluster for r in ranks):
        raise ExecFault(f"{what}: ctaMask {mask:#06x} names a CTA rank beyond the cluster's {view.cluster} CTA(s)", i)
    return [(r + 1) << CLUSTER_RANK_SHIFT | (base & OFFSET_MASK) for r in ranks]


def multicast_tx_executor(launch, view: mbar.SharedView, mbar_at, size, mask, what="cp.async.bulk.tensor"):
    """``run(sel, idx, n)``: a complete-tx of ``size`` bytes on the mbarrier at CTA-relative ``mbar_at`` in each
    CTA of the cluster named by ``mask`` (a multicast load's completion), thread after thread."""

    def run(sel, idx, n):
        mb, z, ms = _ints(mbar_at(sel, n), n), _ints(size(sel, n), n), _ints(mask(sel, n), n) & 0xFFFF
        owner, where, nbytes = [], [], []
        for i in range(n):
            for a in _multicast(what, view, int(mb[i]), int(ms[i]), i):
                owner.append(idx[i])
                where.append(a)
                nbytes.append(int(z[i]))
        if where:
            at = view.at(np.asarray(owner), np.asarray(where, np.int64), 8)
            mbar.apply(launch, view.mem(), at, lambda k, st: mbar._tx_rule(st, nbytes[k], True, what))

    return run


def bulk_multicast_executor(view: mbar.SharedView, gmem, dst, src, size, mask):
    """``cp.async.bulk.shared::cluster.global...multicast::cluster``: ``run(sel, idx, n)`` copies each thread's
    ``size`` bytes of global ``src`` to the CTA-relative offset ``dst`` in each CTA of the cluster whose bit is
    set in its 16-bit ``mask`` (lowest rank first), when it executes; the complete-tx is
    :func:`multicast_tx_executor`'s (PTX ISA 9.7.9.25.4.1)."""
    what = "cp.async.bulk"

    def run(sel, idx, n):
        d, s, z = mbar._bulk_operands(what, sel, n, dst, src, size)
        ms = _ints(mask(sel, n), n) & 0xFFFF
        smem = view.mem()
        for i in range(n):
            span = np.arange(int(z[i]), dtype=np.int64)
            try:
                data = gmem.load((s[i] + span).astype(np.uint64), 1)
                ats = [view.at(np.full(span.size, idx[i]), b + span, 1)
                       for b in _multicast(what, view, int(d[i]), int(ms[i]), i)]
            except MemoryFault as f:
                f.thread = i
                raise
            for at in ats:
                smem.store(at, data, 1)

    return run


def tma_load_executor(launch, view: mbar.SharedView, gmem, generic, dst, tmap, coords, mbar_at=None, write=None,
                      mask=None, offsets=None):
    """``run(sel, idx, n)``: readers of the CTA-relative shared destination, the tensor map's generic address
    and each coordinate (signed); ``generic()`` the generic memory; then a complete-tx of the box's bytes on
    the mbarrier at ``mbar_at`` (CTA-relative; None: none) and/or ``write(sel, bytes)``.  With a ``mask``
    reader (``.multicast::cluster``), the box lands at the destination's offset in each CTA of the cluster
    whose bit the mask sets, and the complete-tx goes to the mbarrier at ``mbar_at``'s offset in each.  With
    ``offsets`` (readers of the unsigned 16-bit im2col offsets), an ``.im2col`` load (:func:`xcc.semantics.tensormap.im2col_box`)."""
    what = "cp.async.bulk.tensor"

    def run(sel, idx, n):
        d = _ints(dst(sel, n), n)
        ms = None if mask is None else _ints(mask(sel, n), n) & 0xFFFF
        maps, cs = _maps(what, generic, tmap, coords, sel, idx, n, offsets is not None)
        os = None if offsets is None else [_ints(o(sel, n), n) & 0xFFFF for o in offsets]  # unsigned
        smem, sizes = view.mem(), np.zeros(n, np.int64)
        for i, tm in enumerate(maps):
            if os is None:
                _check_tile(what, tm, [int(c[i]) for c in cs], i, False)
                addr, inside, off, fill = T.tile_box(tm, [c[i] for c in cs])
            else:
                addr, inside, off, fill = T.im2col_box(tm, [c[i] for c in cs], [o[i] for o in os])
            es = tm["esize"]
            vals = np.full(addr.size, fill, _UINT[es])
            try:
                if inside.any():
                    vals[inside] = gmem.load(addr[inside].astype(np.uint64), es)
                bases = [int(d[i])] if ms is None else _multicast(what, view, int(d[i]), int(ms[i]), i)
                ats = [_box_shared(what, view, b, i, idx, tm, off) for b in bases]
            except MemoryFault as f:
                f.thread = i
                raise
            for at in ats:
                smem.store(at, vals, es)
            sizes[i] = addr.size * es
        if mbar_at is not None and ms is not None:
            multicast_tx_executor(launch, view, mbar_at, lambda sel, n: sizes, lambda sel, n: ms, what)(sel, idx, n)
        elif mbar_at is not None:
            where = view.at(idx, _ints(mbar_at(sel, n), n), 8)
            mbar.apply(launch, smem, where, lambda i, st: mbar._tx_rule(st, int(sizes[i]), True, what))
        if write is not None:
            write(sel, sizes.astype(np.uint32))

    return run


def tma_store_executor(view: mbar.SharedView, gmem, generic, src, tmap, coords, redop: str | None = None,
                       im2col: bool = False):
    """``run(sel, idx, n)`` of a tile-mode store (``redop`` None) or reduction: readers of the CTA-relative
    shared source, the tensor map's generic address and each coordinate (signed); each thread's box is read
    from shared memory and its in-bounds elements written (or reduced, as the atomics do, in thread order)
    to global memory; elements outside the tensor are dropped.  ``im2col``: an ``.im2col_no_offs`` store or
    reduction, the column :func:`xcc.semantics.tensormap.im2col_box` walks with zero offsets
    (:func:`xcc.semantics.tensormap.im2col_store_check`'s refusals are located faults)."""
    what = "cp.async.bulk.tensor" if redop is None else "cp.reduce.async.bulk.tensor"

    def run(sel, idx, n):
        s = _ints(src(sel, n), n)
        maps, cs = _maps(what, generic, tmap, coords, sel, idx, n, im2col)
        smem = view.mem()
        for i, tm in enumerate(maps):
            es = tm["esize"]
            at = [int(c[i]) for c in cs]
            try:
                if redop is not None:
                    kind, _ = T.reduce_kind(redop, tm["dtype"])
                if im2col:
                    T.im2col_store_check(tm, at)
            except T.TensorMapError as e:
                raise ExecFault(f"{what}: {e}", i) from None
            if im2col:
                addr, inside, off, _ = T.im2col_box(tm, at, [0] * (tm["rank"] - 2))
            else:
                _check_tile(what, tm, at, i, True)
                addr, inside, off, _ = T.tile_box(tm, at)
            try:
                vals = smem.load(_box_shared(what, view, int(s[i]), i, idx, tm, off), es)
                if not inside.any():
                    continue
                where = addr[inside].astype(np.uint64)
                vals = np.asarray(vals)[inside]
                if redop is None:
                    gmem.store(where, vals, es)
                elif redop in ("min", "max") and kind in ("f16", "bf16"):  # (the atomics have no half min/max)
                    old = gmem.load(where, es)
                    gmem.store(where, hminmax(old, vals, fmt_of(kind), redop == "min"), es)
                else:
                    gmem.atomic(redop, where, vals, es, kind)
            except MemoryFault as f:
                f.thread = i
                raise

    return run


def box_bytes_executor(generic, tmap, rank: int, im2col: bool, write):
    """``run(sel, idx, n)`` of xg1's BOXBYTES: ``write(sel, bytes)`` of one box of each thread's tensor map (an
    im2col map's channelsPerPixel x pixelsPerColumn elements; a tiled one's box, element strides applied), the
    map checked as a ``rank``-d load (``im2col``: of that mode) checks it, with the same located faults."""
    what = "cp.async.bulk.tensor"
    zero = [lambda sel, n: np.zeros(n, np.int64)] * rank

    def run(sel, idx, n):
        maps, _ = _maps(what, generic, tmap, zero, sel, idx, n, im2col)
        sizes = [(tm["im2col"]["channels"] * tm["im2col"]["pixels"] if im2col else
                  T.box_elements(tm)) * tm["esize"] for tm in maps]
        write(sel, np.asarray(sizes, np.uint32))

    return run


def tma_prefetch_executor(generic, tmap, coords, im2col: bool = False):
    """``run(sel, idx, n)`` of ``cp.async.bulk.prefetch.tensor``: the tensor map (``im2col``: made by
    cuTensorMapEncodeIm2col) and the coordinates' count are checked as a load's; no data moves (xcc models no
    L2)."""
    what = "cp.async.bulk.prefetch.tensor"

    def run(sel, idx, n):
        _maps(what, generic, tmap, coords, sel, idx, n, im2col)

    return run
