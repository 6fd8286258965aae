"""CUDA graphs through xcc.runtime.driver: stream capture records instead of running, an instantiated
graph replays on every launch, and CUDA's capture errors."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc.runtime import driver as cuda

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR, fma_f32  # noqa: E402
from test_driver_api import check  # noqa: E402

R = cuda.CUresult
S = cuda.CUstreamCaptureStatus
SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"


@pytest.fixture
def ctx():
    check(cuda.cuInit(0))
    c = check(cuda.cuCtxCreate(None, 0, check(cuda.cuDeviceGet(0))))
    yield c
    cuda.cuCtxDestroy(c)


def _saxpy():
    mod = check(cuda.cuModuleLoadData(SAXPY.read_bytes()))
    return check(cuda.cuModuleGetFunction(mod, b"saxpy"))


def _launch(kernel, stream, n, a, d_x, d_y):
    params = ((int(n), float(a), d_x, d_y), (ctypes.c_int, ctypes.c_float, None, None))
    check(cuda.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, stream, params, 0))


def test_captured_work_runs_only_when_the_graph_is_launched(ctx):
    kernel, n, a = _saxpy(), 300, np.float32(1.5)
    rng = np.random.default_rng(0)
    h_x, h_y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    check(cuda.cuMemcpyHtoD(d_y, h_y0, 4 * n))
    s = check(cuda.cuStreamCreate(0))
    out = np.zeros(n, np.float32)
    check(cuda.cuStreamBeginCapture(s, cuda.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
    assert check(cuda.cuStreamIsCapturing(s)) == S.CU_STREAM_CAPTURE_STATUS_ACTIVE
    check(cuda.cuMemcpyHtoDAsync(d_x, h_x, 4 * n, s))
    _launch(kernel, s, n, a, d_x, d_y)
    check(cuda.cuMemcpyDtoHAsync(out, d_y, 4 * n, s))
    graph = check(cuda.cuStreamEndCapture(s))
    assert check(cuda.cuStreamIsCapturing(s)) == S.CU_STREAM_CAPTURE_STATUS_NONE
    assert not out.any()  # nothing ran during the capture
    nodes, count = check(cuda.cuGraphGetNodes(graph, 0))
    assert count == 3 and nodes == []
    nodes, _ = check(cuda.cuGraphGetNodes(graph, count))
    T = cuda.CUgraphNodeType
    assert [check(cuda.cuGraphNodeGetType(node)) for node in nodes] == [
        T.CU_GRAPH_NODE_TYPE_MEMCPY, T.CU_GRAPH_NODE_TYPE_KERNEL, T.CU_GRAPH_NODE_TYPE_MEMCPY]
    exe = check(cuda.cuGraphInstantiate(graph, 0))
    want = h_y0
    for _ in range(2):  # each launch replays every node: y = a x + y twice
        check(cuda.cuGraphLaunch(exe, s))
        check(cuda.cuStreamSynchronize(s))
        want = fma_f32(a, h_x, want)
        np.testing.assert_array_equal(out, want)
    h_x[:] = 0  # a copy node reads its host source when the graph runs, as in CUDA
    check(cuda.cuGraphLaunch(exe, s))
    np.testing.assert_array_equal(out, want)
    check(cuda.cuGraphExecDestroy(exe))
    check(cuda.cuGraphDestroy(graph))
    assert cuda.cuGraphLaunch(exe, s)[0] == R.CUDA_ERROR_INVALID_HANDLE


def test_capture_errors(ctx):
    s = check(cuda.cuStreamCreate(0))
    assert cuda.cuStreamBeginCapture(0, 0)[0] == R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED  # the legacy stream
    check(cuda.cuStreamBeginCapture(s, 0))
    assert cuda.cuStreamBeginCapture(s, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuStreamSynchronize(s)[0] == R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
    assert check(cuda.cuStreamIsCapturing(s)) == S.CU_STREAM_CAPTURE_STATUS_INVALIDATED
    assert cuda.cuStreamEndCapture(s)[0] == R.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
    # the legacy default stream may not wait for a capturing blocking stream
    d = check(cuda.cuMemAlloc(64))
    check(cuda.cuStreamBeginCapture(s, 0))
    assert cuda.cuMemsetD32(d, 7, 16)[0] == R.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
    assert cuda.cuStreamEndCapture(s)[0] == R.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
    # a non-blocking stream does not synchronise with it: the legacy stream's work runs
    nb = check(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_NON_BLOCKING))
    check(cuda.cuStreamBeginCapture(nb, 0))
    check(cuda.cuMemsetD32(d, 7, 16))
    check(cuda.cuStreamEndCapture(nb))


def test_fork_join_across_streams(ctx):
    """s2 joins s1's capture by waiting on an event recorded there; the capture ends only once s1 has
    waited for s2's work again."""
    s1, s2 = check(cuda.cuStreamCreate(0)), check(cuda.cuStreamCreate(0))
    fork, join = check(cuda.cuEventCreate(0)), check(cuda.cuEventCreate(0))
    d = check(cuda.cuMemAlloc(64))
    check(cuda.cuStreamBeginCapture(s1, 0))
    check(cuda.cuMemsetD32Async(d, 1, 8, s1))
    check(cuda.cuEventRecord(fork, s1))
    check(cuda.cuStreamWaitEvent(s2, fork, 0))
    assert check(cuda.cuStreamIsCapturing(s2)) == S.CU_STREAM_CAPTURE_STATUS_ACTIVE
    check(cuda.cuMemsetD32Async(int(d) + 32, 2, 8, s2))
    check(cuda.cuEventRecord(join, s2))
    check(cuda.cuStreamWaitEvent(s1, join, 0))
    graph = check(cuda.cuStreamEndCapture(s1))
    assert check(cuda.cuStreamIsCapturing(s2)) == S.CU_STREAM_CAPTURE_STATUS_NONE
    out = np.zeros(16, np.uint32)
    check(cuda.cuMemcpyDtoH(out, d, 64))
    assert not out.any()
    check(cuda.cuGraphLaunch(check(cuda.cuGraphInstantiate(graph, 0)), s1))
    check(cuda.cuMemcpyDtoH(out, d, 64))
    np.testing.assert_array_equal(out, [1] * 8 + [2] * 8)
    # without the join back, ending the capture fails
    check(cuda.cuStreamBeginCapture(s1, 0))
    check(cuda.cuEventRecord(fork, s1))
    check(cuda.cuStreamWaitEvent(s2, fork, 0))
    check(cuda.cuMemsetD32Async(d, 3, 8, s2))
    assert cuda.cuStreamEndCapture(s1)[0] == R.CUDA_ERROR_STREAM_CAPTURE_UNJOINED
