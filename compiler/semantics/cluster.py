"""Thread-block clusters (PTX ISA 9.x sections 2.2.2 "Cluster of Cooperative Thread Arrays", 5.1.5
"Distributed shared memory", 10 "%cluster_*" special registers, 9.7.9.x ``mapa``/``getctarank``,
9.7.13.x ``barrier.cluster``): the launch's cluster geometry, CUDA's launch rules for it, the order in which
xcc places the CTAs of a grid, the cluster special registers and the encoding of ``.shared::cluster``
addresses.  Both interpreters read these rules, so they agree bit for bit.

**CTA order.**  A cluster launch runs its CTAs cluster by cluster: CTA sequence number ``s`` is rank
``s % csize`` of cluster ``s // csize``; clusters are numbered x-fastest over the grid of clusters
(``%nclusterid``), ranks x-fastest within the cluster (``%cluster_nctaid``), and
``%ctaid = %clusterid * %cluster_nctaid + %cluster_ctaid``.  Without a cluster (1, 1, 1) this is the grid's
x-fastest order.

**shared::cluster addresses** (PTX leaves them opaque).  The shared::cta window (the CTA's own shared
memory, byte offsets below 2^24) lies inside the shared::cluster window, as PTX requires: such an address
names the executing CTA's memory.  ``mapa`` makes ``(rank + 1) << 24 | offset``: bits 24-31 hold the
target CTA's rank plus one, bits 0-23 the offset in its shared memory (xg1's CTAs have at most 228 KiB).
A generic address of distributed shared memory is the shared window's base plus that 32-bit address.
``getctarank`` of an address reads the rank back (the executing CTA's for a shared::cta address).
"""

from __future__ import annotations

from xcc.diagnostics import LaunchError

__all__ = ["CLUSTER_RANK_SHIFT", "dims", "resolve_cluster", "MAX_PORTABLE", "MAX_NONPORTABLE", "OFFSET_MASK", "check_cluster",
           "cta_coords", "cluster_registers", "decode_shared"]

CLUSTER_RANK_SHIFT = 24
OFFSET_MASK = (1 << CLUSTER_RANK_SHIFT) - 1
MAX_PORTABLE = 8
"""CTAs per cluster every sm_90 launch may use (CUDA's portable cluster size)."""
MAX_NONPORTABLE = 16
"""CTAs per cluster with ``cudaFuncAttributeNonPortableClusterSizeAllowed`` (H100's limit)."""


def check_cluster(grid, cluster, nonportable: bool = False) -> str | None:
    """Why ``cluster`` (x, y, z) cannot launch over ``grid`` (CUDA's cudaErrorInvalidClusterSize /
    CUDA_ERROR_INVALID_CLUSTER_SIZE), or None."""
    n = cluster[0] * cluster[1] * cluster[2]
    limit = MAX_NONPORTABLE if nonportable else MAX_PORTABLE
    if n > limit:
        return (f"cluster {tuple(cluster)} has {n} CTAs, more than the {limit} allowed"
                + ("" if nonportable else f" (portable size; {MAX_NONPORTABLE} with the non-portable "
                                          "cluster size attribute)"))
    for g, c, ax in zip(grid, cluster, "xyz"):
        if g % c:
            return f"grid {tuple(grid)} is not a multiple of cluster {tuple(cluster)} (grid.{ax} = {g}, cluster.{ax} = {c})"
    return None


def dims(v, what: str) -> tuple[int, int, int]:
    """A launch's grid, block or cluster shape as (x, y, z): one to three positive integers, the rest 1."""
    try:
        t = tuple(int(x) for x in (v if isinstance(v, tuple | list) else (v,)))
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be up to three positive integers, not {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise LaunchError(f"{what} must be up to three positive integers, not {v!r}")
    return t + (1,) * (3 - len(t))


def resolve_cluster(name: str, grid, cluster, reqnctapercluster=None, maxclusterrank=None,
                    nonportable: bool = True) -> tuple[int, int, int]:
    """The cluster shape of a launch of kernel ``name`` over ``grid`` (x, y, z): ``cluster`` (None: the kernel's
    ``.reqnctapercluster``, else (1, 1, 1)), checked as CUDA does (cudaErrorInvalidClusterSize): a multiple
    of the grid, at most :data:`MAX_NONPORTABLE` CTAs (``nonportable`` False: :data:`MAX_PORTABLE`), the
    kernel's ``.reqnctapercluster`` and ``.maxclusterrank``; a :class:`LaunchError` otherwise."""
    grid = dims(grid, "grid")
    req = dims(reqnctapercluster, "reqnctapercluster") if reqnctapercluster else None
    c = dims(cluster, "cluster") if cluster is not None else (req or (1, 1, 1))
    if req is not None and c != req:
        raise LaunchError(f"kernel '{name}' requires clusters of {req} (.reqnctapercluster), launched with {c}")
    why = check_cluster(grid, c, nonportable)
    if why is not None:
        raise LaunchError(f"kernel '{name}': {why}")
    n = c[0] * c[1] * c[2]
    if maxclusterrank and n > int(maxclusterrank):
        raise LaunchError(f"kernel '{name}': cluster {c} has {n} CTAs, more than its .maxclusterrank "
                          f"{maxclusterrank}")
    return c


def _split(v, dims3):
    return v % dims3[0], v // dims3[0] % dims3[1], v // (dims3[0] * dims3[1])


def cta_coords(seq, grid, cluster):
    """(%ctaid.x, .y, .z) of CTA sequence numbers ``seq`` (arrays or ints) in cluster-major order."""
    csize = cluster[0] * cluster[1] * cluster[2]
    if csize == 1:
        return _split(seq, grid)
    ncl = tuple(g // c for g, c in zip(grid, cluster))
    q, r = seq // csize, seq % csize
    cid, rk = _split(q, ncl), _split(r, cluster)
    return tuple(a * c + b for a, b, c in zip(cid, rk, cluster))


def cluster_registers(grid, cluster, explicit: bool) -> dict:
    """Readers ``f(seq) -> values`` of the cluster special registers for CTA sequence numbers ``seq``
    (PTX spellings: ``cluster_ctaid.x``, ``clusterid.y``, ``cluster_ctarank``, ...)."""
    import numpy as np  # here, not at the top: compiling imports this module and must not load numpy

    csize = cluster[0] * cluster[1] * cluster[2]
    ncl = tuple(g // c for g, c in zip(grid, cluster))
    out = {"cluster_ctarank": lambda s: s % csize, "cluster_nctarank": lambda s: np.full(np.size(s), csize),
           "is_explicit_cluster": lambda s: np.full(np.size(s), int(explicit))}
    for k, ax in enumerate("xyz"):
        out[f"cluster_ctaid.{ax}"] = lambda s, k=k: np.asarray(_split(s % csize, cluster)[k])
        out[f"cluster_nctaid.{ax}"] = lambda s, k=k: np.full(np.size(s), cluster[k])
        out[f"clusterid.{ax}"] = lambda s, k=k: np.asarray(_split(s // csize, ncl)[k])
        out[f"nclusterid.{ax}"] = lambda s, k=k: np.full(np.size(s), ncl[k])
    return out


def decode_shared(rel, frame, csize: int):
    """(frame, offset) of shared-space addresses ``rel`` issued by CTAs in wave frames ``frame`` (a wave
    holds whole clusters, rank = frame % csize): an address with a rank field ``1 .. csize`` in bits 24-31
    goes to that CTA of the issuer's cluster; any other is the issuer's own (and faults there if out of
    its window)."""
    import numpy as np

    rel = np.asarray(rel, np.int64)
    field = rel >> CLUSTER_RANK_SHIFT
    remote = (field >= 1) & (field <= csize)
    if not remote.any():
        return frame, rel
    frame = np.where(remote, frame - frame % csize + field - 1, frame)
    return frame, np.where(remote, rel & OFFSET_MASK, rel)
