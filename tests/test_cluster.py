"""Thread-block clusters on both engines (issue 19): the %cluster_* special registers, distributed shared memory
(mapa, getctarank, ld/atom/red.shared::cluster, generic addresses from mapa.u64), barrier.cluster, CUDA's launch
rules for clusters and the driver API's cuLaunchKernelEx with the cluster-dimension attribute.

The probes are hand-written PTX (tests/data/runtime/cluster_ops.ptx, ptxas-clean for sm_90) and nvcc's
examples/cluster_dsmem.sm_90a.ptx.  The expected values are computed here from the PTX ISA's definitions
(cluster-major CTA order and xcc's documented shared::cluster encoding, docs/semantics.md), not from xcc.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, LaunchError

ROOT = Path(__file__).resolve().parent.parent
OPS = ROOT / "tests" / "data" / "runtime" / "cluster_ops.ptx"
EXAMPLE = ROOT / "examples" / "cluster_dsmem.sm_90a.ptx"
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]


def _module(engine: str, opt: int, path: Path = OPS):
    dev = rt.Device()
    return dev, rt.load_module(path, device=dev, engine=engine, opt_level=opt)


def _sregs_reference(grid, cluster):
    """{linear ctaid: the 20 words cluster_sregs writes}, from the PTX ISA's definitions."""
    ncl = [g // c for g, c in zip(grid, cluster)]
    want = {}
    for z, y, x in itertools.product(*(range(g) for g in reversed(grid))):
        cc = (x % cluster[0], y % cluster[1], z % cluster[2])
        cid = (x // cluster[0], y // cluster[1], z // cluster[2])
        rank = cc[0] + cluster[0] * (cc[1] + cluster[1] * cc[2])
        words = [x, y, z, grid[0], *cc, *cluster, *cid, *ncl, rank, cluster[0] * cluster[1] * cluster[2], 1, grid[0]]
        want[x + grid[0] * (y + grid[1] * z)] = words
    return want


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("grid, cluster", [((4, 2, 2), (2, 1, 2)), ((3, 2, 1), (1, 2, 1)), ((2, 2, 2), (2, 2, 2))])
def test_each_cluster_special_register(engine, opt, grid, cluster):
    dev, m = _module(engine, opt)
    n = grid[0] * grid[1] * grid[2]
    out = rt.zeros(n * 20, np.uint32, dev)
    m.get_function("cluster_sregs").launch(grid, (32, 1, 1), [out], cluster=cluster)
    got = out.copy_to_host().reshape(n, 20)
    for k, words in _sregs_reference(grid, cluster).items():
        assert got[k].tolist() == words, k


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_without_a_cluster_each_cta_is_its_own_implicit_cluster(engine):
    dev, m = _module(engine, 3)
    out = rt.zeros(6 * 20, np.uint32, dev)
    m.get_function("cluster_sregs").launch((3, 2, 1), (32, 1, 1), [out])
    got = out.copy_to_host().reshape(6, 20)
    for k, words in _sregs_reference((3, 2, 1), (1, 1, 1)).items():
        words[18] = 0  # %is_explicit_cluster: false for a launch without clusters
        assert got[k].tolist() == words


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_distributed_shared_memory_mapa_getctarank_and_remote_atomics(engine, opt):
    dev, m = _module(engine, opt)
    grid, csize = 8, 4
    out, addr = rt.zeros(grid * 64, np.uint32, dev), rt.zeros(grid * 64, np.uint32, dev)
    ranks, cnt = rt.zeros(grid * 128, np.uint32, dev), rt.zeros(grid, np.uint32, dev)
    m.get_function("cluster_dsmem").launch((grid, 1, 1), (64, 1, 1), [out, addr, ranks, cnt], cluster=(csize, 1, 1))
    rank = np.arange(grid) % csize
    nxt = (rank + 1) % csize
    t = np.arange(64)
    np.testing.assert_array_equal(out.copy_to_host().reshape(grid, 64), nxt[:, None] * 1000 + t[None, :])
    # mapa gives (rank + 1) << 24 | the offset of s[t] (s's own offset: where the layout put it)
    a = addr.copy_to_host().reshape(grid, 64).astype(np.int64)
    base = int(a[0, 0]) & 0xFFFFFF
    np.testing.assert_array_equal(a, ((nxt[:, None] + 1) << 24) | (base + 4 * t[None, :]))
    r = ranks.copy_to_host().reshape(grid, 64, 2)
    np.testing.assert_array_equal(r[:, :, 0], np.broadcast_to(nxt[:, None], (grid, 64)))
    np.testing.assert_array_equal(r[:, :, 1], np.broadcast_to(rank[:, None], (grid, 64)))
    # every thread of the cluster added 1 (atom) and 2 (red) to rank 0's counter
    np.testing.assert_array_equal(cnt.copy_to_host(), np.where(rank == 0, 3 * 64 * csize, 0))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_nvcc_cluster_histogram_through_generic_mapa(engine, opt):
    dev, m = _module(engine, opt, EXAMPLE)
    n, nbins, cl = 1000, 16, 2
    xv = (np.arange(n, dtype=np.uint64) * 2654435761 % 97).astype(np.uint32)
    dx, hist = rt.to_device(xv, dev), rt.zeros(cl * nbins, np.uint32, dev)
    m.get_function("cluster_histogram").launch((8, 1, 1), (128, 1, 1), [dx, hist, np.int32(nbins), np.int32(n)],
                                               nbins * 4, cluster=(cl, 1, 1))
    want = np.zeros(cl * nbins, np.uint32)
    np.add.at(want, (xv // nbins) % cl * nbins + xv % nbins, 1)
    np.testing.assert_array_equal(hist.copy_to_host(), want)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_barrier_cluster_waits_for_every_live_thread_and_exited_threads_do_not_block(engine):
    dev, m = _module(engine, 3)
    out = rt.zeros(4, np.uint32, dev)
    m.get_function("cluster_partial").launch((4, 1, 1), (64, 1, 1), [out], cluster=(2, 1, 1))  # others exit
    with pytest.raises(KernelFault, match="deadlock.*barrier.cluster"):
        m.get_function("cluster_stuck").launch((2, 1, 1), (64, 1, 1), [out], cluster=(2, 1, 1))
    with pytest.raises(KernelFault, match=r"barrier.cluster.wait without a barrier.cluster.arrive.*thread \(1, 0, 0\)"):
        m.get_function("cluster_unpaired").launch((2, 1, 1), (64, 1, 1), [out], cluster=(2, 1, 1))


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("grid, cluster, match", [
    ((6, 1, 1), (4, 1, 1), "not a multiple of cluster"),
    ((32, 1, 1), (32, 1, 1), "more than the 16 allowed"),
    ((4, 1, 1), (0, 1, 1), "cluster must be"),
])
def test_cluster_launch_errors(engine, grid, cluster, match):
    dev, m = _module(engine, 3)
    out = rt.zeros(400, np.uint32, dev)
    with pytest.raises(LaunchError, match=match):
        m.get_function("cluster_sregs").launch(grid, (32, 1, 1), [out], cluster=cluster)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_reqnctapercluster_is_the_default_and_a_contradicting_launch_fails(engine):
    dev, m = _module(engine, 3)
    out = rt.zeros(4, np.uint32, dev)
    f = m.get_function("cluster_fixed")
    f.launch((4, 1, 1), (32, 1, 1), [out])
    f.launch((4, 1, 1), (32, 1, 1), [out], cluster=(2, 1, 1))
    with pytest.raises(LaunchError, match=r"requires clusters of \(2, 1, 1\) \(.reqnctapercluster\)"):
        f.launch((4, 1, 1), (32, 1, 1), [out], cluster=(4, 1, 1))


def _config(grid, block, cluster=None, smem=0, extra_attrs=()):
    from xcc.runtime import driver as cuda

    cfg = cuda.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes, cfg.hStream = smem, 0
    attrs = []
    if cluster is not None:
        a = cuda.CUlaunchAttribute()
        a.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cluster
        attrs.append(a)
    attrs += list(extra_attrs)
    cfg.attrs, cfg.numAttrs = attrs, len(attrs)
    return cfg


def test_cuLaunchKernelEx_with_the_cluster_dimension_attribute():
    """The host side as a CUDA program writes it: cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION for
    nvcc's DSMEM histogram; a grid that is not a multiple, more than 8 CTAs (16 with the non-portable attribute)
    and a shape against .reqnctapercluster are CUDA_ERROR_INVALID_CLUSTER_SIZE."""
    import ctypes

    from xcc.runtime import driver as cuda

    R = cuda.CUresult
    n, nbins, cl = 1000, 16, 4
    xv = (np.arange(n, dtype=np.uint64) * 2654435761 % 97).astype(np.uint32)
    assert cuda.cuInit(0)[0] == 0
    _, dev = cuda.cuDeviceGet(0)
    _, ctx = cuda.cuCtxCreate(0, dev)
    try:
        _, dx = cuda.cuMemAlloc(xv.nbytes)
        assert cuda.cuMemcpyHtoD(dx, xv, xv.nbytes)[0] == 0
        _, dh = cuda.cuMemAlloc(16 * nbins * 4)  # room for the bins of a cluster of 16
        assert cuda.cuMemsetD32(dh, 0, 16 * nbins)[0] == 0
        _, mod = cuda.cuModuleLoadData(EXAMPLE.read_bytes())
        _, fn = cuda.cuModuleGetFunction(mod, b"cluster_histogram")
        params = ((dx, dh, nbins, n), (None, None, ctypes.c_int, ctypes.c_int))
        err = cuda.cuLaunchKernelEx(_config((8, 1, 1), (128, 1, 1), (cl, 1, 1), nbins * 4), fn, params, 0)[0]
        assert err == 0, cuda.last_error_message()
        got = np.zeros(cl * nbins, np.uint32)
        assert cuda.cuMemcpyDtoH(got, dh, got.nbytes)[0] == 0
        want = np.zeros(cl * nbins, np.uint32)
        np.add.at(want, (xv // nbins) % cl * nbins + xv % nbins, 1)
        np.testing.assert_array_equal(got, want)
        bad = cuda.cuLaunchKernelEx(_config((6, 1, 1), (128, 1, 1), (4, 1, 1), nbins * 4), fn, params, 0)[0]
        assert bad == R.CUDA_ERROR_INVALID_CLUSTER_SIZE and "not a multiple" in cuda.last_error_message()
        big = _config((16, 1, 1), (128, 1, 1), (16, 1, 1), nbins * 4)
        assert cuda.cuLaunchKernelEx(big, fn, params, 0)[0] == R.CUDA_ERROR_INVALID_CLUSTER_SIZE
        attr = cuda.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        assert cuda.cuFuncSetAttribute(fn, attr, 1)[0] == 0
        assert cuda.cuLaunchKernelEx(big, fn, params, 0)[0] == 0, cuda.last_error_message()
        _, fixed = cuda.cuModuleGetFunction(mod, b"cluster_neighbour_sum")  # .reqnctapercluster 4, 1, 1
        F = cuda.CUfunction_attribute
        assert [cuda.cuFuncGetAttribute(getattr(F, f"CU_FUNC_ATTRIBUTE_{a}"), fixed)[1] for a in
                ("REQUIRED_CLUSTER_WIDTH", "REQUIRED_CLUSTER_HEIGHT", "REQUIRED_CLUSTER_DEPTH",
                 "CLUSTER_SIZE_MUST_BE_SET")] == [4, 1, 1, 1]
        assert cuda.cuFuncGetAttribute(attr, fn)[1] == 1
        p2 = ((dx, dx, dh), (None, None, None))
        assert cuda.cuLaunchKernelEx(_config((8, 1, 1), (128, 1, 1), (2, 1, 1)), fixed, p2, 0)[0] == \
            R.CUDA_ERROR_INVALID_CLUSTER_SIZE
        prog = cuda.CUlaunchAttribute()
        prog.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        assert cuda.cuLaunchKernelEx(_config((8, 1, 1), (128, 1, 1), None, nbins * 4, [prog]), fn, params, 0)[0] \
            == R.CUDA_ERROR_NOT_SUPPORTED
    finally:
        cuda.cuCtxDestroy(ctx)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_remote_mbarrier_arrive_and_bulk_copy_into_another_cta(engine, opt):
    dev, m = _module(engine, opt)
    src = np.arange(16, dtype=np.uint32) * 7 + 3
    dsrc, out = rt.to_device(src, dev), rt.zeros(16, np.uint32, dev)
    m.get_function("cluster_mbar").launch((2, 1, 1), (32, 1, 1), [dsrc, out], cluster=(2, 1, 1))
    np.testing.assert_array_equal(out.copy_to_host(), src)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_explicitcluster_needs_a_cluster_and_a_cluster_shares_one_sm(engine):
    dev, m = _module(engine, 3)
    out = rt.zeros(16, np.uint32, dev)
    f = m.get_function("cluster_explicit")
    with pytest.raises(LaunchError, match=r"\.explicitcluster: launch it with a cluster shape"):
        f.launch((8, 1, 1), (32, 1, 1), [out])
    f.launch((8, 1, 1), (32, 1, 1), [out], cluster=(4, 1, 1))
    got = out.copy_to_host().reshape(8, 2)
    assert got[:, 0].tolist() == [4] * 8
    assert len(set(got[:4, 1])) == 1 and len(set(got[4:, 1])) == 1 and got[0, 1] != got[4, 1]
