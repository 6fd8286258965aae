"""What the asynchronous copy and warpgroup ops do when interpreted (registered with
:func:`xcc.sim.ir.ops.impl`).

* ``cp_async``, ``cp_async_commit``, ``cp_async_wait``: PTX ISA 9.7.9.25, with the model of
  :mod:`xcc.semantics.async_copy` (the source is read when ``cp.async`` executes, the destination written at
  the issuing thread's ``wait_group``/``wait_all`` that covers the copy's group).  Each wave's pending copies
  and group counters are the wave state ``launch.wave_state("cp.async", ...)``; addresses go through the launch's addresser and the
  memories of :mod:`xcc.sim.memory`, so faults are located :class:`KernelFault` s as for ``ld``/``st``.
* ``wgmma`` (one per accumulator register, ``attrs.part``), ``wgmma_sync`` (fence, commit_group,
  wait_group): PTX ISA 9.7.15, with the layouts and arithmetic of :mod:`xcc.semantics.wgmma`.  Every
  warpgroup that executes one must do so with all its 128 threads together; the matrix descriptors and
  ``scale-d`` must be the same in all of them.  The multiplication is performed when ``wgmma.mma_async``
  executes (its shared-memory operands are read then, so the accumulators are complete at once and
  ``wgmma.wait_group`` has nothing left to wait for); the operands are read once per execution and shared by
  the instruction's parts.  With A in registers (``attrs.a_regs``) each part reads its half of A from the register
  pairs of the warpgroup's 128 threads (:func:`xcc.semantics.wgmma.register_a`).
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import warp, wgmma
from xcc.semantics.async_copy import CopyGroups, oversized_source, read_zero_filled
from xcc.sim import mbarrier as mbar
from xcc.sim.copies import commit_executor, copy_groups, wait_executor
from xcc.sim.ir.ops import OpBinder, impl
from xcc.sim.memory import MemoryFault
from xcc.sim.tma import (
    bulk_multicast_executor,
    multicast_tx_executor,
    tma_load_executor,
    tma_prefetch_executor,
    tma_store_executor,
)
from xcc.sim.waves import ExecFault

_U64 = np.uint64


# ============================================================================= cp.async
def _groups(launch) -> CopyGroups:
    """The cp.async state of the launch's current wave (a new wave starts with none pending)."""
    return copy_groups(launch, launch.T)


@impl("cp_async")
def _cp_async(x: OpBinder):
    """cp.async: check and map both addresses, read the source now, queue the write in the open group."""
    cp = int(x.attrs["cp_size"])
    dmem, dst_at = x.launch.addresser("shared", x.arg(0), int(x.attrs.get("dst_offset", 0)), cp)
    gmem, src_at = x.launch.addresser("global", x.arg(1), int(x.attrs.get("src_offset", 0)), cp)
    size, launch = x.arg(2), x.launch

    def store(dst, words, width):
        dmem().store(dst, words, width)

    def run(sel, idx, n):
        dst = dst_at(sel, idx, n)
        src = np.asarray(src_at(sel, idx, n), _U64)
        src_size = np.asarray(size(sel, n)).astype(np.int64)
        bad = oversized_source(src_size, cp)
        if bad is not None:
            raise ExecFault(*bad)
        _groups(launch).issue(idx, dst, read_zero_filled(gmem(), src, cp, src_size), cp, store)

    return run


@impl("cp_async_commit")
def _cp_async_commit(x: OpBinder):
    return commit_executor(lambda: _groups(x.launch))


@impl("cp_async_wait")
def _cp_async_wait(x: OpBinder):
    """cp.async.wait_group N (``attrs.n``) or wait_all (``attrs.all``: commit, then wait_group 0)."""
    return wait_executor(lambda: _groups(x.launch), int(x.attrs.get("n", 0)), bool(x.attrs.get("all")))


# ============================================================================= wgmma
def _warpgroups(launch, idx: np.ndarray, what: str) -> int:
    """The number of warpgroups executing ``idx`` (sorted slots), each of which must be complete
    (:func:`xcc.semantics.warp.partial_warpgroup`)."""
    bad = warp.partial_warpgroup(idx, launch.P, launch.tpb, what)
    if bad is not None:
        raise ExecFault(*bad)
    return idx.size // 128


def _uniform(values: np.ndarray, g: int, what: str, inst: str) -> np.ndarray:
    """The one value of each of ``g`` warpgroups (``values`` per thread); a differing one is a fault."""
    v = np.asarray(values).reshape(g, 128)
    bad = (v != v[:, :1]).any(axis=1)
    if bad.any():
        w = int(np.argmax(bad))
        t = int(np.argmax(v[w] != v[w, 0]))
        raise ExecFault(f"{inst}: {what} differs between the threads of a warpgroup (it must be the same in all)",
                    w * 128 + t)
    return v[:, 0]


class _Operands:
    """The A and B operands (f64, scaled; B transposed to N x K) of one wgmma execution, read once from
    shared memory by the first part that runs and reused by the later parts of the same execution."""

    def __init__(self, x: OpBinder):
        at = x.attrs
        self.launch, self.key = x.launch, at["wgmma_id"]
        self.pos = x.inst.block.instructions.index(x.inst) if x.inst.block is not None else 0
        self.n, self.atype, self.btype = int(at["n"]), at["atype"], at["btype"]
        self.trans_a, self.trans_b = bool(at["trans_a"]), bool(at["trans_b"])
        self.scale_a, self.scale_b = float(at["scale_a"]), float(at["scale_b"])
        self.ebytes, self.k = wgmma.ELEMENT_BYTES[self.atype], wgmma.k_of(self.atype)
        self.da, self.db = x.arg(1), x.arg(2)
        self.a_regs, self.half = bool(at.get("a_regs")), (int(at["part"]) // 2) % 2
        self.sparse, self.sp_sel = bool(at.get("sparse")), int(at.get("sp_sel", 0))  # A compressed, B 2K deep
        self.meta = x.arg(4) if self.sparse else None
        self.addresses = np.zeros(0, np.int64)
        src = lambda sel, n: self.addresses  # noqa: E731
        self.mem, self.where = x.launch.addresser("shared", src, 0, self.ebytes)

    def get(self, sel, idx: np.ndarray, g: int):
        launch = self.launch
        a = None
        if self.a_regs:  # this part's half of A from the warpgroup's register pairs (not shared by the parts)
            pairs = np.broadcast_to(np.asarray(self.da(sel, idx.size)).astype(np.uint64), (idx.size,)).reshape(g, 128)
            a = self._expand(sel, idx, g, wgmma.register_a(pairs, self.atype, self.half)) * self.scale_a
        hit = launch.ext.get("wgmma")
        if (hit is not None and hit[0] == self.key and launch.step - hit[1] == self.pos - hit[2]
                and np.array_equal(hit[3], idx)):
            return (hit[4][0] if a is None else a), hit[4][1]
        inst = "wgmma.mma_async"
        lead = idx.reshape(g, 128)[:, 0]
        if a is None:
            a = self._load(_uniform(self.da(sel, idx.size), g, "matrix descriptor a", inst), lead, wgmma.M,
                           not self.trans_a, self.atype, self.k)
            a = self._expand(sel, idx, g, a) * self.scale_a
        b = self._load(_uniform(self.db(sel, idx.size), g, "matrix descriptor b", inst), lead, self.n,
                       not self.trans_b, self.btype, 2 * self.k if self.sparse else self.k) * self.scale_b
        launch.ext["wgmma"] = (self.key, launch.step, self.pos, idx.copy(), (a, b))
        return a, b

    def _expand(self, sel, idx: np.ndarray, g: int, a: np.ndarray) -> np.ndarray:
        """``a`` itself, or for wgmma.mma_async.sp the dense A of the compressed ``a`` and the metadata."""
        if not self.sparse:
            return a
        meta = np.broadcast_to(np.asarray(self.meta(sel, idx.size)).astype(np.uint64), (idx.size,)).reshape(g, 128)
        return wgmma.sparse_a(a, meta, self.sp_sel, self.atype)

    def _load(self, desc: np.ndarray, lead: np.ndarray, rows: int, k_major: bool, etype: str,
              k: int) -> np.ndarray:
        d = wgmma.decode_descriptor(desc)
        if (d.base_offset != 0).any():
            w = int(np.argmax(d.base_offset != 0))
            raise ExecFault(f"wgmma.mma_async: matrix descriptor {int(desc[w]):#x} has base offset "
                        f"{int(d.base_offset[w])}; only 0 is supported", w * 128)
        addr = wgmma.matrix_addresses(d, rows, self.ebytes, k_major, k)
        per = rows * k
        self.addresses = addr.reshape(-1)
        slots = np.repeat(lead, per)
        try:
            bits = self.mem().load(self.where(None, slots, slots.size), self.ebytes)
        except MemoryFault as f:  # name the warpgroup's first thread
            f.thread = None if f.thread is None else int(f.thread) // per * 128
            raise
        return wgmma.to_f64(bits, etype).reshape(lead.size, rows, k)


@impl("wgmma")
def _wgmma(x: OpBinder):
    """Accumulator register ``attrs.part`` of ``wgmma.mma_async``: D = A*B + (scale-d ? C : 0)."""
    part, ops, acc = int(x.attrs["part"]), _Operands(x), x.attrs.get("acc", "f32")
    sat = bool(x.attrs.get("satfinite"))
    c, scale_d, wr = x.arg(0), x.arg(3), x.set()

    def run(sel, idx, n):
        g = _warpgroups(ops.launch, idx, "wgmma.mma_async")
        a, b = ops.get(sel, idx, g)
        sd = _uniform(scale_d(sel, n), g, "scale-d", "wgmma.mma_async")
        cb = np.asarray(c(sel, n)).reshape(g, 128)
        if acc == "s32":
            wr(sel, wgmma.int_part(a, b, part, cb.astype(np.int64).astype(np.uint32), sd, sat,
                                   ops.atype == "b1").reshape(-1))
        else:
            wr(sel, wgmma.mma_part(a, b, part, cb, sd, acc).reshape(-1))

    return run


@impl("wgmma_sync")
def _wgmma_sync(x: OpBinder):
    """wgmma.fence / commit_group / wait_group: warpgroup-collective; with every wgmma.mma_async complete when
    it executes, there is nothing to order or wait for."""
    launch, what = x.launch, f"wgmma.{x.attrs['kind']}"
    return lambda sel, idx, n: _warpgroups(launch, idx, what) and None


# ============================================================================= thread-block clusters
@impl("cluster_arrive")
def _cluster_arrive(x: OpBinder):
    launch = x.launch
    return lambda sel, idx, n: launch.wave.cluster_arrive(idx)


@impl("cluster_wait")
def _cluster_wait(x: OpBinder):
    """barrier.cluster.wait (a control op, as mbar_wait): the threads whose cluster phase completed go on."""
    launch = x.launch
    return lambda sel, idx, n, pos: launch.wave.cluster_wait(idx, pos)


# ============================================================================= mbarrier, cp.async.bulk
def _view(launch) -> mbar.SharedView:
    return mbar.SharedView(lambda: launch.smem, lambda: launch.smem_size, lambda: launch.smem_stride, launch.P,
                           launch.csize)


def _where(x: OpBinder, i: int = 0, key: str = "offset"):
    return _view(x.launch).where(x.arg(i), int(x.attrs.get(key, 0)), 8)


@impl("mbar_init")
def _mbar_init(x: OpBinder):
    inval = bool(x.attrs.get("inval"))
    return mbar.init_executor(x.launch, lambda: x.launch.smem, _where(x), None if inval else x.arg(1), inval)


@impl("mbar_arrive")
def _mbar_arrive(x: OpBinder):
    wr = x.set()
    return mbar.arrive_executor(x.launch, lambda: x.launch.smem, _where(x), x.arg(1), x.arg(2), wr,
                                drop=bool(x.attrs.get("drop")), no_complete=bool(x.attrs.get("nocomplete")),
                                what="mbarrier.arrive_drop" if x.attrs.get("drop") else "mbarrier.arrive")


@impl("cp_async_arrive")
def _cp_async_arrive(x: OpBinder):
    launch = x.launch
    return mbar.copy_arrive_executor(launch, lambda: launch.smem, _where(x), lambda: _groups(launch),
                                     bool(x.attrs.get("noinc")))


@impl("mbar_tx")
def _mbar_tx(x: OpBinder):
    complete = bool(x.attrs.get("complete"))
    return mbar.tx_executor(x.launch, lambda: x.launch.smem, _where(x), x.arg(1), complete,
                            "mbarrier.complete_tx" if complete else "mbarrier.expect_tx")


@impl("mbar_test", "mbar_wait")
def _mbar_test(x: OpBinder):
    """test_wait: d = phase complete; try_wait (``mbar_wait``, a control op of the interpreter): ``run(sel,
    idx, n, pos)`` writes d = 1 and returns the threads that go on (the others wait, xcc.sim.mbarrier)."""
    wait, launch = x.inst.op == "mbar_wait", x.launch
    test = mbar.test_executor(launch, lambda: launch.smem, _where(x), x.arg(1), bool(x.attrs.get("parity")),
                              "mbarrier.try_wait" if wait else "mbarrier.test_wait")
    wr = x.set()
    if not wait:
        return lambda sel, idx, n: wr(sel, test(sel, idx, n)[0])

    def run(sel, idx, n, pos):
        done, addr = test(sel, idx, n)
        wr(sel, True)
        return mbar.suspend(launch, pos, idx, done, addr, launch.smem_stride)

    return run


def _plus(x: OpBinder, i: int, key: str):
    """A reader of operand ``i`` plus the offset ``attrs[key]``."""
    r, off = x.arg(i), int(x.attrs.get(key, 0))
    return r if not off else (lambda sel, n: np.asarray(r(sel, n)).astype(np.int64) + off)


@impl("bulk_copy")
def _bulk_copy(x: OpBinder):
    launch, to_shared = x.launch, bool(x.attrs.get("to_shared"))
    return mbar.bulk_executor(launch, _view(launch), launch.gmem, to_shared, _plus(x, 0, "dst_offset"),
                              _plus(x, 1, "src_offset"), x.arg(2), _plus(x, 3, "mbar_offset") if to_shared else None,
                              from_shared=bool(x.attrs.get("from_shared")))


@impl("bulk_copy_mc")
def _bulk_copy_mc(x: OpBinder):
    launch, view = x.launch, _view(x.launch)
    copy = bulk_multicast_executor(view, launch.gmem, _plus(x, 0, "dst_offset"), _plus(x, 1, "src_offset"), x.arg(2),
                                   x.arg(4))
    tx = multicast_tx_executor(launch, view, _plus(x, 3, "mbar_offset"), x.arg(2), x.arg(4), "cp.async.bulk")

    def run(sel, idx, n):
        copy(sel, idx, n)
        tx(sel, idx, n)

    return run


@impl("tma_load")
def _tma_load(x: OpBinder):
    launch = x.launch
    generic, _ = launch.addresser("generic", lambda sel, n: np.zeros(n, np.uint64), 0, 8)
    rank, im2col = int(x.attrs["rank"]), bool(x.attrs.get("im2col"))
    coords = [x.arg(3 + k) for k in range(rank)]
    offsets = [x.arg(3 + rank + k) for k in range(rank - 2)] if im2col else None
    mask = x.arg(3 + rank + (rank - 2 if im2col else 0)) if x.attrs.get("multicast") else None
    return tma_load_executor(launch, _view(launch), launch.gmem, generic, _plus(x, 0, "dst_offset"), x.arg(1),
                             coords, _plus(x, 2, "mbar_offset"), mask=mask, offsets=offsets)


def _generic(launch):
    return launch.addresser("generic", lambda sel, n: np.zeros(n, np.uint64), 0, 8)[0]


@impl("tma_store")
def _tma_store(x: OpBinder):
    launch = x.launch
    coords = [x.arg(2 + k) for k in range(int(x.attrs["rank"]))]
    redop = x.attrs.get("redop")
    return tma_store_executor(_view(launch), launch.gmem, _generic(launch), _plus(x, 0, "src_offset"), x.arg(1),
                              coords, None if redop is None else str(redop), bool(x.attrs.get("im2col")))


@impl("tma_prefetch")
def _tma_prefetch(x: OpBinder):
    coords = [x.arg(1 + k) for k in range(int(x.attrs["rank"]))]
    return tma_prefetch_executor(_generic(x.launch), x.arg(0), coords, bool(x.attrs.get("im2col")))


@impl("bulk_reduce")
def _bulk_reduce(x: OpBinder):
    t = str(x.attrs["etype"])
    kind, width = mbar.reduce_kind(t)
    return mbar.bulk_reduce_executor(_view(x.launch), x.launch.gmem, _plus(x, 0, "dst_offset"),
                                     _plus(x, 1, "src_offset"), x.arg(2), str(x.attrs["redop"]), kind, width,
                                     to_shared=bool(x.attrs.get("to_shared")))
