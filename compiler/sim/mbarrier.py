"""The ``mbarrier`` operations and the Hopper bulk copy, for both interpreters' executors (PTX ISA 9.7.13.15
``mbarrier``, 9.7.9.25.4 ``cp.async.bulk``; the object's layout and rules are
:mod:`xcc.semantics.mbarrier`).

Each operation reads the 8-byte objects of the executing threads from the wave's shared memory, applies the
rule of each thread in ascending thread order (several threads may address one object: each sees the
object as the threads before it left it) and writes the objects back.  A phase that completes releases the
threads suspended on that object by ``try_wait``.

**try_wait suspends.**  A thread whose ``try_wait`` finds its phase incomplete waits (wave status
:data:`~xcc.sim.waves.WAIT_MBAR`) until an arrive or a complete-tx completes a phase of the object; it then
resumes after the ``try_wait`` with the predicate true (the wait's result is written when it executes, as it
is only read after the thread resumes).  A barrier nobody completes leaves its waiters stuck: if no thread
can run, the launch engine reports a deadlock naming the mbarrier (a located :class:`KernelFault`); if
others spin, the watchdog ends the launch.

**Bulk copies** are performed when they execute (an execution PTX allows: the copy may complete at any time
before the completion mechanism reports it): ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes``
copies and then performs a complete-tx of its size on the mbarrier; ``cp.async.bulk.global.shared::cta``
(bulk groups) copies, and its ``commit_group``/``wait_group`` have nothing left to wait for.

The callers (``xcc.sim.ir.async_ops``, ``xcc.sim.isa.exec_sync``) bind ``where(sel, idx, n)`` to the
absolute byte addresses of the objects in the wave's shared memory (checked: inside the CTA's window,
8-byte aligned), ``mem()`` to that memory and ``stride`` to the CTA's shared-memory stride.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xcc.semantics import mbarrier as M
from xcc.semantics.cluster import decode_shared
from xcc.semantics.faults import MemoryFault
from xcc.sim.memory import check_window
from xcc.sim.waves import WAIT_MBAR, ExecFault

__all__ = ["SharedView", "apply", "init_executor", "arrive_executor", "copy_arrive_executor", "tx_executor",
           "test_executor", "suspend", "bulk_executor"]

_U64 = np.uint64


@dataclass(frozen=True)
class SharedView:
    """The wave's shared memory as an engine holds it: ``mem()``, the CTA window's ``size()`` in bytes, the
    CTAs' ``stride()`` in the memory, ``P`` thread slots per CTA."""

    mem: Callable
    size: Callable[[], int]
    stride: Callable[[], int]
    P: int
    cluster: int = 1  # CTAs per cluster: an address with a rank field names a CTA of the cluster
    def at(self, idx: np.ndarray, rel: np.ndarray, width: int) -> np.ndarray:
        """Absolute addresses of CTA-relative ``rel`` of threads ``idx`` (checked: in the window, aligned)."""
        frame, rel = decode_shared(np.asarray(rel, np.int64), idx // self.P, self.cluster)
        size = self.size()
        check_window(rel, size, width, "shared", f"the CTA's shared memory is {size} bytes")
        return frame * self.stride() + rel

    def where(self, base, offset: int, width: int):
        """``where(sel, idx, n)``: the absolute addresses of ``[base + offset]`` (``base`` a reader)."""
        return lambda sel, idx, n: self.at(idx, np.asarray(base(sel, n)).astype(np.int64) + offset, width)


def _waiters(launch) -> dict:
    """Absolute address of an mbarrier -> arrays of the threads suspended on it (this wave)."""
    return launch.wave_state("mbarrier", dict)


def release(launch, addr: int) -> None:
    """A phase of the object at ``addr`` completed: its suspended threads run again."""
    arrs = _waiters(launch).pop(addr, None)
    if arrs:
        r = np.sort(np.concatenate(arrs))
        launch.wave.at_bar -= r.size
        launch.wave.resume(r)


def apply(launch, mem, addr: np.ndarray, rule: Callable[[int, int], tuple[int, int, bool]]) -> np.ndarray:
    """Apply ``rule(thread index, object) -> (new object, result, phase completed)`` to the objects at
    ``addr`` (one per executing thread, in order); the results as uint64."""
    addr = np.asarray(addr, np.int64)
    words = np.asarray(mem.load(addr, 8), _U64)
    cur: dict[int, int] = {}
    out = np.zeros(addr.size, _U64)
    done = []
    for i, a in enumerate(addr.tolist()):
        state = cur.get(a, int(words[i]))
        try:
            new, res, completed = rule(i, state)
        except M.MbarrierError as e:
            raise ExecFault(str(e), i) from None
        cur[a] = new
        out[i] = res
        if completed:
            done.append(a)
    if cur:
        keys = np.fromiter(cur, np.int64, len(cur))
        mem.store(keys, np.fromiter(cur.values(), _U64, len(cur)), 8)
    for a in dict.fromkeys(done):
        release(launch, a)
    return out


def _ints(v, n: int) -> list[int]:
    return np.broadcast_to(np.asarray(v), (n,)).astype(np.int64).tolist()


def init_executor(launch, mem, where, count, inval: bool = False):
    """``mbarrier.init [a], count`` / ``mbarrier.inval [a]``."""
    def run(sel, idx, n):
        c = _ints(count(sel, n), n) if count is not None else None
        apply(launch, mem(), where(sel, idx, n),
              lambda i, s: (0, 0, False) if inval else (M.init(c[i]), 0, False))
    return run


def arrive_executor(launch, mem, where, count, tx, write, *, drop=False, no_complete=False, what="mbarrier.arrive"):
    """``mbarrier.arrive{_drop}{.expect_tx}{.noComplete}``: ``write(sel, state)`` gets each thread's state
    (None: a sink)."""
    def run(sel, idx, n):
        c = _ints(count(sel, n), n) if count is not None else [1] * n
        t = _ints(tx(sel, n), n) if tx is not None else [0] * n
        res = apply(launch, mem(), where(sel, idx, n),
                    lambda i, s: M.arrive(s, c[i], t[i], drop, no_complete, what))
        if write is not None:
            write(sel, res)
    return run


def copy_arrive_executor(launch, mem, where, groups: Callable, noinc: bool):
    """``cp.async.mbarrier.arrive{.noinc}``: each executing thread's pending ``cp.async`` copies are performed
    (``groups()``: the wave's :class:`~xcc.semantics.async_copy.CopyGroups`), then the arrive-on of
    :func:`xcc.semantics.mbarrier.copy_arrive`.  The manual lets the arrive-on happen at any time after the
    copies complete; doing both now is one of the executions it allows."""
    what = "cp.async.mbarrier.arrive" + (".noinc" if noinc else "")

    def run(sel, idx, n):
        groups().perform_all(idx)
        apply(launch, mem(), where(sel, idx, n), lambda i, s: M.copy_arrive(s, noinc, what))
    return run


def tx_executor(launch, mem, where, count, complete: bool, what: str):
    """``mbarrier.expect_tx`` / ``mbarrier.complete_tx [a], n``."""
    def run(sel, idx, n):
        c = _ints(count(sel, n), n)
        apply(launch, mem(), where(sel, idx, n), lambda i, s: _tx_rule(s, c[i], complete, what))
    return run


def test_executor(launch, mem, where, token, parity: bool, what: str):
    """``test_wait``/``try_wait``: ``run(sel, idx, n)`` -> (done per thread, absolute addresses)."""
    def run(sel, idx, n):
        tok = np.broadcast_to(np.asarray(token(sel, n)), (n,)).astype(_U64).tolist()
        addr = np.asarray(where(sel, idx, n), np.int64)
        res = apply(launch, mem(), addr, lambda i, s: (s, int(M.phase_done(s, int(tok[i]), parity, what)), False))
        return res.astype(bool), addr
    return run


def suspend(launch, pos: int, idx: np.ndarray, done: np.ndarray, addr: np.ndarray, stride: int) -> np.ndarray:
    """try_wait: threads ``idx`` whose phase is not ``done`` wait at ``pos`` on their object; the threads that
    go on."""
    wait = np.flatnonzero(~done)
    if not wait.size:
        return idx
    wave, waiters = launch.wave, _waiters(launch)
    for a in np.unique(addr[wait]).tolist():
        r = idx[wait[addr[wait] == a]]
        wave.wait(r, pos, a % stride, WAIT_MBAR)
        waiters.setdefault(a, []).append(r)
    wave.at_bar += wait.size
    return idx[done]


def _bulk_operands(what: str, sel, n: int, dst, src, size):
    """Each thread's destination, source and size of a bulk copy or reduction (int64), checked as PTX
    requires: the size a positive multiple of 16, both addresses 16-byte aligned (else a located fault)."""
    d, s, z = (np.broadcast_to(np.asarray(r(sel, n)), (n,)).astype(np.int64) for r in (dst, src, size))
    bad = (z <= 0) | (z % 16 != 0) | (d % 16 != 0) | (s % 16 != 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ExecFault(f"{what}: size {int(z[i])} must be a positive multiple of 16 and both addresses "
                        f"16-byte aligned (destination {int(d[i]) % (1 << 64):#x}, source "
                        f"{int(s[i]) % (1 << 64):#x})", i, int(bad.sum()))
    return d, s, z


def bulk_executor(launch, view: SharedView, gmem, to_shared: bool, dst, src, size, mbar, from_shared: bool = False):
    """``cp.async.bulk``: readers of each thread's destination, source (absolute global, CTA-relative shared
    addresses), size and mbarrier address (None: none); performed now, then a complete-tx of the size on
    the mbarrier (the ISA's BLKCP leaves that to the SYNCS.TX.COMPLETE after it).  ``from_shared``: the source
    is this CTA's shared memory (``.shared::cluster.shared::cta``; the destination a shared::cluster address)."""
    what = "cp.async.bulk"

    def run(sel, idx, n):
        d, s, z = _bulk_operands(what, sel, n, dst, src, size)
        mb = None if mbar is None else view.at(idx, np.broadcast_to(np.asarray(mbar(sel, n)), (n,)).astype(np.int64), 8)
        smem = view.mem()
        for i in range(n):
            span = np.arange(int(z[i]), dtype=np.int64)
            try:
                if to_shared:
                    at = view.at(np.full(span.size, idx[i]), d[i] + span, 1)
                    data = smem.load(view.at(np.full(span.size, idx[i]), s[i] + span, 1), 1) if from_shared \
                        else gmem.load((s[i] + span).astype(_U64), 1)
                    smem.store(at, data, 1)
                else:
                    at = view.at(np.full(span.size, idx[i]), s[i] + span, 1)
                    gmem.store((d[i] + span).astype(_U64), smem.load(at, 1), 1)
            except MemoryFault as f:
                f.thread = i
                raise
        if mb is not None:
            apply(launch, smem, mb, lambda i, st: _tx_rule(st, int(z[i]), True, what))

    return run


def reduce_kind(etype: str) -> tuple[str, int]:
    """(atomic kind, element bytes) of a ``cp.reduce.async.bulk`` element type (PTX name, any case)."""
    t = etype.lower()
    if t in ("f16", "bf16"):
        return t, 2
    return {"f": "f", "s": "s"}.get(t[0], "u"), 8 if t.endswith("64") else 4


def bulk_reduce_executor(view: SharedView, gmem, dst, src, size, op: str, kind: str, width: int,
                         to_shared: bool = False):
    """``cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], size``: each thread's
    ``size / width`` elements of shared ``src`` are reduced into global ``dst`` element by element (the
    atomics' read-modify-write, :meth:`GlobalMemory.atomic`; .f16/.bf16 as ``atom.add.noftz``/min/max), thread
    after thread, when it executes.  ``to_shared``: ``dst`` is a shared::cluster address (the mbarrier's
    complete-tx is a separate step)."""
    what = "cp.reduce.async.bulk"

    def run(sel, idx, n):
        d, s, z = _bulk_operands(what, sel, n, dst, src, size)
        smem = view.mem()
        for i in range(n):
            span = np.arange(int(z[i]) // width, dtype=np.int64) * width
            try:
                values = smem.load(view.at(np.full(span.size, idx[i]), s[i] + span, width), width)
                if to_shared:
                    smem.atomic(op, view.at(np.full(span.size, idx[i]), d[i] + span, width), values, width, kind)
                else:
                    gmem.atomic(op, (d[i] + span).astype(_U64), values, width, kind)
            except MemoryFault as f:
                f.thread = i
                raise

    return run


def _tx_rule(state: int, n: int, complete: bool, what: str) -> tuple[int, int, bool]:
    new, done = M.transaction(state, n, complete, what)
    return new, 0, done
