"""Where a thread is: launch coordinates and the special registers, shared by both interpreters.

Both interpreters lay a wave of CTAs out as *slots*: CTA ``cta0 + slot // slots_per_cta``, thread
``slot % slots_per_cta`` of it (``slots_per_cta`` is the CTA's thread count padded to whole warps).
Special registers follow PTX ISA 9.0 chapter 10: ``%tid``/``%ctaid`` are x-fastest linear
coordinates (cluster by cluster in a cluster launch, :mod:`xcc.semantics.cluster`, whose ``%cluster_*``
registers are read here too), ``%laneid`` is the thread's lane within its warp, ``%lanemask_*`` compare
lanes with it, ``%smid`` is the CTA's (or its cluster's) sequence number modulo the SM count; ``%clock``,
``%clock64`` and ``%globaltimer`` read the interpreter's step counter, so they increase monotonically
(their absolute values mean nothing, as on hardware).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from xcc.semantics.cluster import cluster_registers, cta_coords

_U64 = np.uint64
_LO32 = _U64(0xFFFFFFFF)


class Launch(Protocol):
    """What the readers consult at read time (``cta0`` and ``step`` change as the launch runs)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cta0: int
    step: int
    sm_count: int
    nwarpid: int


_CLUSTER_NAMES = frozenset(["cluster_ctarank", "cluster_nctarank", "is_explicit_cluster"]
                           + [f"{r}.{a}" for r in ("cluster_ctaid", "cluster_nctaid", "clusterid", "nclusterid")
                              for a in "xyz"])


def special_register(name: str, launch: Launch, slots_per_cta: int,
                     constants: dict[str, int] | None = None) -> Callable[[np.ndarray], np.ndarray] | None:
    """Reader ``f(slots)`` of special register ``name`` (PTX spelling: 'tid.x', 'laneid',
    'lanemask_lt', ...) for an array of slots; None for a register it does not know.
    ``constants`` adds launch-wide values (``{'total_smem_size': 49152}``)."""
    (bx, by, bz), (gx, gy, gz), P = launch.block, launch.grid, slots_per_cta

    def cta(idx):
        return launch.cta0 + idx // P

    cl = getattr(launch, "cluster", (1, 1, 1))
    csize = cl[0] * cl[1] * cl[2]
    if name in _CLUSTER_NAMES:  # %cluster_ctarank, %clusterid.x, ... (xcc.semantics.cluster)
        f = cluster_registers(launch.grid, cl, bool(getattr(launch, "explicit_cluster", False)))[name]
        return lambda idx: np.asarray(f(cta(idx))).astype(np.int64)

    def lanemask(f):
        return lambda idx: f(_U64(1) << (idx & 31).astype(_U64)) & _LO32

    def step(idx):
        return np.full(idx.size, launch.step, np.int64)

    table = {
        "tid.x": lambda idx: idx % P % bx, "tid.y": lambda idx: idx % P // bx % by,
        "tid.z": lambda idx: idx % P // (bx * by),
        "ctaid.x": lambda idx: cta_coords(cta(idx), launch.grid, cl)[0],
        "ctaid.y": lambda idx: cta_coords(cta(idx), launch.grid, cl)[1],
        "ctaid.z": lambda idx: cta_coords(cta(idx), launch.grid, cl)[2],
        "laneid": lambda idx: idx & 31, "warpid": lambda idx: idx % P >> 5,
        "smid": lambda idx: cta(idx) // csize % launch.sm_count,  # a cluster's CTAs share an SM (one GPC)
        "clock": step, "clock64": step, "globaltimer": step,
        "lanemask_eq": lanemask(lambda m: m), "lanemask_lt": lanemask(lambda m: m - _U64(1)),
        "lanemask_le": lanemask(lambda m: (m << _U64(1)) - _U64(1)),
        "lanemask_gt": lanemask(lambda m: ~((m << _U64(1)) - _U64(1))),
        "lanemask_ge": lanemask(lambda m: ~(m - _U64(1))),
    }
    consts = {"ntid.x": bx, "ntid.y": by, "ntid.z": bz, "nctaid.x": gx, "nctaid.y": gy, "nctaid.z": gz,
              "nwarpid": launch.nwarpid, "nsmid": launch.sm_count, **(constants or {})}
    if name in consts:
        c = consts[name]
        return lambda idx: np.full(idx.size, c, np.int64)
    return table.get(name)


def thread_at(slot: int, launch: Launch, slots_per_cta: int
              ) -> tuple[str, tuple[int, int, int], tuple[int, int, int]]:
    """('CTA (x, y, z) thread (x, y, z)', CTA coordinates, thread coordinates) of one slot."""
    g, b = launch.grid, launch.block
    cta, t = launch.cta0 + slot // slots_per_cta, slot % slots_per_cta
    c3 = tuple(int(v) for v in cta_coords(cta, g, getattr(launch, "cluster", (1, 1, 1))))
    t3 = (t % b[0], t // b[0] % b[1], t // (b[0] * b[1]))
    return f"CTA ({c3[0]}, {c3[1]}, {c3[2]}) thread ({t3[0]}, {t3[1]}, {t3[2]})", c3, t3


def fault_message(kernel: str, where: str, reason: str, launch: Launch, slots_per_cta: int,
                  slot: int | None, nthreads: int = 1):
    """(message, CTA coordinates, thread coordinates) of a kernel fault at ``where``."""
    msg = f"kernel '{kernel}' faulted at {where}: {reason}"
    c3 = t3 = None
    if slot is not None:
        text, c3, t3 = thread_at(slot, launch, slots_per_cta)
        msg += f"; first faulting thread: {text}"
        if nthreads > 1:
            msg += f" ({nthreads} threads faulted)"
    return msg, c3, t3


__all__ = ["Launch", "fault_message", "special_register", "thread_at"]
