"""xcc.runtime.driver behaving as cuda-python's cuda.bindings.driver: argument conversion, the full
enums, managed and mapped host memory, pointer attributes, explicit graphs, function attributes,
cooperative launches, stream-ordered allocation, and the runtime-API layer (xcc.runtime.cudart)."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc.runtime import cudart
from xcc.runtime import driver as cuda

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR, fma_f32  # noqa: E402
from test_driver_api import check  # noqa: E402

R = cuda.CUresult
A = cuda.CUdevice_attribute
P = cuda.CUpointer_attribute
SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"

# cooperative_groups::this_grid().sync() as nvcc compiles it reads the grid workspace from %envreg1/2 (high, low)
GRID_SYNC_PTX = """
.version 8.0
.target sm_80
.address_size 64

.visible .entry gsync(.param .u64 gsync_param_0)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [gsync_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %envreg1;
    mov.u32 %r2, %envreg2;
    st.global.v2.u32 [%rd2], {%r1, %r2};
    ret;
}
"""


@pytest.fixture
def ctx():
    check(cuda.cuInit(0))
    c = check(cuda.cuCtxCreate(None, 0, check(cuda.cuDeviceGet(0))))
    yield c
    cuda.cuCtxDestroy(c)


@pytest.fixture
def saxpy(ctx):
    mod = check(cuda.cuModuleLoadData(SAXPY.read_bytes()))
    return check(cuda.cuModuleGetFunction(mod, b"saxpy"))


def _args(n, a, x, y):
    return (int(n), float(a), x, y), (ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p)


def _host(ptr, n, dtype=np.float32) -> np.ndarray:
    """A numpy view of ``n`` elements of host memory at ``ptr`` (as the samples' ctypes arrays)."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * (n * np.dtype(dtype).itemsize)).from_address(int(ptr))).view(dtype)


# -- arguments and enums ---------------------------------------------------------------------------

def test_launch_dimensions_convert_as_cython_does(saxpy):
    n = 1000
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    x = np.arange(n, dtype=np.float32)
    check(cuda.cuMemcpyHtoD(d_x, x, 4 * n))
    check(cuda.cuMemsetD32(d_y, 0, n))
    blocks = (n + 255) / 256  # a float, as in NVIDIA's vectorAddDrv: truncated to 4 blocks
    check(cuda.cuLaunchKernel(saxpy, blocks, 1, 1, 256.0, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0))
    out = np.zeros(n, np.float32)
    check(cuda.cuMemcpyDtoH(out, d_y, 4 * n))
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(OverflowError, match="negative"):
        cuda.cuLaunchKernel(saxpy, -1, 1, 1, 256, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0)
    with pytest.raises(OverflowError, match="too large"):
        cuda.cuLaunchKernel(saxpy, 2**32, 1, 1, 256, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0)
    with pytest.raises(TypeError, match="integer is required"):
        cuda.cuLaunchKernel(saxpy, "4", 1, 1, 256, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0)
    with pytest.raises(OverflowError):
        cuda.cuMemAlloc(-4)
    # what the driver checks is a CUresult: a zero grid, an oversized block
    assert cuda.cuLaunchKernel(saxpy, 0, 1, 1, 256, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0)[0] == \
        R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuLaunchKernel(saxpy, 1, 1, 1, 2048, 1, 1, 0, 0, _args(n, 2.0, d_x, d_y), 0)[0] == \
        R.CUDA_ERROR_INVALID_VALUE


def test_every_device_attribute_has_a_value(ctx):
    from xcc.backend.machine import load_machine

    m = load_machine("xg1")
    values = {a: check(cuda.cuDeviceGetAttribute(a, 0)) for a in A if a != A.CU_DEVICE_ATTRIBUTE_MAX}
    assert len(A) >= 160
    assert values[A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] == m.data["sm"]["count"]
    assert values[A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] == m.limits["shared_memory_bytes"]
    assert values[A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE] == m.data["sm"]["clock_mhz"] * 1000
    assert values[A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY] == 1
    assert values[A.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] == 1
    assert values[A.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS] == 0  # kernels see only driver-allocated memory
    assert values[A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH] == 0  # no textures
    assert cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1)[0] == R.CUDA_ERROR_INVALID_DEVICE


def test_every_cuda_error_has_a_name_and_a_string():
    assert len(R) > 100
    for code in R:
        assert check(cuda.cuGetErrorName(code)) == code.name.encode()
        assert check(cuda.cuGetErrorString(code))
    assert check(cuda.cuGetErrorString(R.CUDA_ERROR_INVALID_VALUE)) == b"invalid argument"
    assert cuda.cuGetErrorName(12345)[0] == R.CUDA_ERROR_INVALID_VALUE


# -- managed and host memory -----------------------------------------------------------------------

def test_managed_memory_is_shared_by_host_and_kernel(saxpy, ctx):
    n = 500
    x = check(cuda.cuMemAllocManaged(4 * n, cuda.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
    y = check(cuda.cuMemAllocManaged(4 * n, cuda.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
    hx, hy = _host(x, n), _host(y, n)
    hx[:] = np.arange(n)
    hy[:] = 1.0
    check(cuda.cuLaunchKernel(saxpy, 2, 1, 1, 256, 1, 1, 0, 0, _args(n, 3.0, x, y), 0))
    check(cuda.cuCtxSynchronize())
    np.testing.assert_array_equal(hy, fma_f32(np.float32(3), np.arange(n, dtype=np.float32), np.ones(n, np.float32)))
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_IS_MANAGED, x)) is True
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_SIZE, int(x) + 8)) == 4 * n
    out = np.zeros(n, np.float32)  # the driver's copies read managed memory too
    check(cuda.cuMemcpyDtoH(out, y, 4 * n))
    np.testing.assert_array_equal(out, hy)
    check(cuda.cuMemFree(x))
    assert cuda.cuMemFree(x)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuMemAllocManaged(0, 1)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuMemAllocManaged(64, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    check(cuda.cuMemFree(y))


def test_mapped_host_memory(saxpy, ctx):
    n = 300
    p = check(cuda.cuMemHostAlloc(8 * n, cuda.CU_MEMHOSTALLOC_DEVICEMAP))
    assert isinstance(p, int)
    d = check(cuda.cuMemHostGetDevicePointer(p, 0))
    assert int(d) == p  # unified addressing
    hx, hy = _host(p, n), _host(p + 4 * n, n)
    hx[:] = 2.0
    check(cuda.cuLaunchKernel(saxpy, 2, 1, 1, 256, 1, 1, 0, 0, _args(n, 1.5, d, int(d) + 4 * n), 0))
    np.testing.assert_array_equal(hy, np.full(n, 3.0, np.float32))
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)) == cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    assert cuda.cuMemHostGetDevicePointer(p, 1)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuMemHostAlloc(64, 0x80)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuMemFreeHost(p + 4)[0] == R.CUDA_ERROR_INVALID_VALUE
    check(cuda.cuMemFreeHost(p))
    assert cuda.cuMemHostGetDevicePointer(p, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    q = check(cuda.cuMemAllocHost(16))
    check(cuda.cuMemFreeHost(q))


def test_a_kernel_past_a_host_buffer_faults(ctx):
    from test_driver_api import OOB_PTX

    mod = check(cuda.cuModuleLoadData(OOB_PTX.encode()))
    oob = check(cuda.cuModuleGetFunction(mod, b"oob"))
    p = check(cuda.cuMemHostAlloc(64, 0))
    r = cuda.cuLaunchKernel(oob, 1, 1, 1, 1, 1, 1, 0, 0, ((p,), (ctypes.c_void_p,)), 0)
    assert r[0] == R.CUDA_ERROR_ILLEGAL_ADDRESS
    assert "host buffer" in cuda.last_error_message()


def test_pointer_attributes_of_device_memory(ctx):
    d = check(cuda.cuMemAlloc(1024))
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_CONTEXT, d)) == ctx
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d)) == \
        cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert int(check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, int(d) + 100))) == int(d)
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_IS_MANAGED, d)) is False
    assert cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_HOST_POINTER, d)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_CONTEXT, 0x1234)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_P2P_TOKENS, d)[0] == R.CUDA_ERROR_INVALID_VALUE


# -- explicit graphs -------------------------------------------------------------------------------

def _memcpy_dtoh(src, dst_host, nbytes):
    c = cuda.CUDA_MEMCPY3D()
    c.srcMemoryType, c.srcDevice = cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE, src
    c.dstMemoryType, c.dstHost = cuda.CUmemorytype.CU_MEMORYTYPE_HOST, dst_host
    c.WidthInBytes, c.Height, c.Depth = nbytes, 1, 1
    return c


def test_graph_built_node_by_node(saxpy, ctx):
    n = 256
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    check(cuda.cuMemcpyHtoD(d_x, np.arange(n, dtype=np.float32), 4 * n))
    out = np.zeros(n, np.float32)
    g = check(cuda.cuGraphCreate(0))
    ms = cuda.CUDA_MEMSET_NODE_PARAMS()
    ms.dst, ms.value, ms.elementSize, ms.width, ms.height = d_y, np.float32(1).view(np.uint32), 4, n, 1
    memset = check(cuda.cuGraphAddMemsetNode(g, None, 0, ms, ctx))
    kp = cuda.CUDA_KERNEL_NODE_PARAMS()
    kp.func, kp.gridDimX, kp.gridDimY, kp.gridDimZ = saxpy, 1.0, 1, 1
    kp.blockDimX, kp.blockDimY, kp.blockDimZ, kp.sharedMemBytes = n, 1, 1, 0
    kp.kernelParams = _args(n, 2.0, d_x, d_y)
    kernel = check(cuda.cuGraphAddKernelNode(g, [memset], 1, kp))
    copy = check(cuda.cuGraphAddMemcpyNode(g, None, 0, _memcpy_dtoh(d_y, out, 4 * n), ctx))
    check(cuda.cuGraphAddDependencies(g, [kernel], [copy], None, 1))  # cuda-python 13's form
    assert cuda.cuGraphAddDependencies(g, [kernel], [copy], None, 1)[0] == R.CUDA_ERROR_INVALID_VALUE  # exists
    nodes, count = check(cuda.cuGraphGetNodes(g, 3))
    T = cuda.CUgraphNodeType
    assert count == 3 and [check(cuda.cuGraphNodeGetType(x)) for x in nodes] == [
        T.CU_GRAPH_NODE_TYPE_MEMSET, T.CU_GRAPH_NODE_TYPE_KERNEL, T.CU_GRAPH_NODE_TYPE_MEMCPY]
    clone = check(cuda.cuGraphClone(g))
    s = check(cuda.cuStreamCreate(0))
    want = fma_f32(np.float32(2), np.arange(n, dtype=np.float32), np.ones(n, np.float32))
    for graph in (g, clone):
        out[:] = 0
        exe = check(cuda.cuGraphInstantiate(graph, 0))
        check(cuda.cuGraphLaunch(exe, s))
        check(cuda.cuStreamSynchronize(s))
        np.testing.assert_array_equal(out, want)  # memset before the kernel, copy after it: every launch
        check(cuda.cuGraphExecDestroy(exe))
    check(cuda.cuGraphDestroy(g))
    assert cuda.cuGraphNodeGetType(kernel)[0] == R.CUDA_ERROR_INVALID_HANDLE
    check(cuda.cuGraphDestroy(clone))


def test_graph_construction_errors(saxpy, ctx):
    g, other = check(cuda.cuGraphCreate(0)), check(cuda.cuGraphCreate(0))
    a = check(cuda.cuGraphAddEmptyNode(g, None, 0))
    b = check(cuda.cuGraphAddEmptyNode(g, [a], 1))
    foreign = check(cuda.cuGraphAddEmptyNode(other, None, 0))
    assert cuda.cuGraphAddEmptyNode(g, [foreign], 1)[0] == R.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(RuntimeError, match="too small"):
        cuda.cuGraphAddEmptyNode(g, [a], 2)
    with pytest.raises(TypeError):
        cuda.cuGraphAddEmptyNode(g, [1], 1)
    assert cuda.cuGraphCreate(1)[0] == R.CUDA_ERROR_INVALID_VALUE
    kp = cuda.CUDA_KERNEL_NODE_PARAMS()
    assert cuda.cuGraphAddKernelNode(g, None, 0, kp)[0] == R.CUDA_ERROR_INVALID_VALUE  # no func
    kp.func, kp.gridDimX, kp.gridDimY, kp.gridDimZ, kp.blockDimX, kp.blockDimY, kp.blockDimZ = saxpy, 1, 1, 1, 4096, 1, 1
    kp.kernelParams = _args(1, 1.0, 0, 0)
    assert cuda.cuGraphAddKernelNode(g, None, 0, kp)[0] == R.CUDA_ERROR_INVALID_VALUE  # a launch error, at creation
    with pytest.raises(AttributeError):
        kp.gridDim = 3
    ms = cuda.CUDA_MEMSET_NODE_PARAMS()
    ms.dst, ms.elementSize, ms.width, ms.height = check(cuda.cuMemAlloc(64)), 3, 4, 1
    assert cuda.cuGraphAddMemsetNode(g, None, 0, ms, ctx)[0] == R.CUDA_ERROR_INVALID_VALUE
    c = _memcpy_dtoh(0, np.zeros(4), 4)
    c.srcMemoryType = cuda.CUmemorytype.CU_MEMORYTYPE_ARRAY
    assert cuda.cuGraphAddMemcpyNode(g, None, 0, c, ctx)[0] == R.CUDA_ERROR_NOT_SUPPORTED
    check(cuda.cuGraphAddDependencies(g, [b], [a], 1))  # cuda-python 12's form; a cycle
    assert cuda.cuGraphInstantiate(g, 0)[0] == R.CUDA_ERROR_INVALID_VALUE


def test_host_nodes_and_exec_kernel_node_params(saxpy, ctx):
    n = 256
    x = np.arange(n, dtype=np.float32)
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    check(cuda.cuMemcpyHtoD(d_x, x, 4 * n))
    check(cuda.cuMemsetD32(d_y, 0, n))
    g = check(cuda.cuGraphCreate(0))
    p = cuda.CUDA_KERNEL_NODE_PARAMS()
    p.func, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ = saxpy, 1, 1, 1, n, 1, 1
    p.kernelParams = _args(n, 2.0, d_x, d_y)
    k = check(cuda.cuGraphAddKernelNode(g, None, 0, p))
    seen = []  # a C host function (its address, as cuda-python passes a CUhostFn) reading the result
    out = np.zeros(n, np.float32)

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def host_fn(user_data):
        check(cuda.cuMemcpyDtoH(out, d_y, 4 * n))
        seen.append((user_data, float(out[3])))

    h = cuda.CUDA_HOST_NODE_PARAMS()
    h.fn, h.userData = cuda.CUhostFn(ctypes.cast(host_fn, ctypes.c_void_p).value), 1234
    host = check(cuda.cuGraphAddHostNode(g, [k], 1, h))
    assert check(cuda.cuGraphNodeGetType(host)) == cuda.CUgraphNodeType.CU_GRAPH_NODE_TYPE_HOST
    ge = check(cuda.cuGraphInstantiate(g, 0))
    check(cuda.cuGraphLaunch(ge, 0))
    assert seen == [(1234, 6.0)]  # y = 2x + y after the kernel node, before the host node's read
    p.kernelParams = _args(n, 10.0, d_x, d_y)
    check(cuda.cuGraphExecKernelNodeSetParams(ge, k, p))
    check(cuda.cuGraphLaunch(ge, 0))
    assert seen[-1] == (1234, 36.0)  # 10 * 3 + 6: the new parameters
    check(cuda.cuGraphLaunch(check(cuda.cuGraphInstantiate(g, 0)), 0))
    assert seen[-1] == (1234, 42.0)  # the graph itself kept a = 2
    assert cuda.cuGraphExecKernelNodeSetParams(ge, host, p)[0] == R.CUDA_ERROR_INVALID_VALUE  # not a kernel node
    other = check(cuda.cuGraphCreate(0))
    k2 = check(cuda.cuGraphAddKernelNode(other, None, 0, p))
    assert cuda.cuGraphExecKernelNodeSetParams(ge, k2, p)[0] == R.CUDA_ERROR_INVALID_VALUE  # another graph's node
    p.blockDimX = 4096
    assert cuda.cuGraphExecKernelNodeSetParams(ge, k, p)[0] == R.CUDA_ERROR_INVALID_VALUE  # checked as at launch
    h.fn = None
    assert cuda.cuGraphAddHostNode(g, None, 0, h)[0] == R.CUDA_ERROR_INVALID_VALUE


def test_prefetch_and_advise_check_their_arguments(saxpy, ctx):
    n = 64
    m = check(cuda.cuMemAllocManaged(4 * n, cuda.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
    dev = check(cuda.cuMemAlloc(4 * n))
    loc = cuda.CUmemLocation()
    loc.type, loc.id = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, 0
    host = cuda.CUmemLocation()
    host.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST
    stream = check(cuda.cuStreamCreate(0))
    check(cuda.cuMemPrefetchAsync(m, 4 * n, loc, 0, stream))  # cuda-python 13
    check(cuda.cuMemPrefetchAsync(m, 4 * n, host, 0, 0))
    check(cuda.cuMemPrefetchAsync(m, 4 * n, 0, stream))  # cuda-python 12: a device ordinal
    check(cuda.cuMemPrefetchAsync(m, 16, cuda.CU_DEVICE_CPU, 0))
    A_ = cuda.CUmem_advise
    check(cuda.cuMemAdvise(m, 4 * n, A_.CU_MEM_ADVISE_SET_READ_MOSTLY, loc))
    check(cuda.cuMemAdvise(m, 4 * n, A_.CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host))
    check(cuda.cuMemAdvise(m, 4 * n, A_.CU_MEM_ADVISE_SET_ACCESSED_BY, 0))
    loc.id = 1
    assert cuda.cuMemPrefetchAsync(m, 4 * n, loc, 0, stream)[0] == R.CUDA_ERROR_INVALID_DEVICE
    assert cuda.cuMemAdvise(m, 4 * n, A_.CU_MEM_ADVISE_SET_ACCESSED_BY, 3)[0] == R.CUDA_ERROR_INVALID_DEVICE
    assert cuda.cuMemPrefetchAsync(dev, 4 * n, 0, 0)[0] == R.CUDA_ERROR_INVALID_VALUE  # not managed
    assert cuda.cuMemPrefetchAsync(m, 4 * n + 4, 0, 0)[0] == R.CUDA_ERROR_INVALID_VALUE  # past the allocation
    assert cuda.cuMemPrefetchAsync(m, 4 * n, host, 1, 0)[0] == R.CUDA_ERROR_INVALID_VALUE  # flags
    assert cuda.cuMemAdvise(m, 4 * n, 99, host)[0] == R.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(TypeError):
        cuda.cuMemPrefetchAsync(m, 4 * n, "gpu", 0)
    # the memory still works as before
    _host(m, n)[:] = np.arange(n, dtype=np.float32)
    y = check(cuda.cuMemAllocManaged(4 * n, cuda.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
    check(cuda.cuLaunchKernel(saxpy, 1, 1, 1, n, 1, 1, 0, 0, _args(n, 1.0, m, y), 0))
    check(cuda.cuCtxSynchronize())
    np.testing.assert_array_equal(_host(y, n), np.arange(n, dtype=np.float32))


# -- function attributes, cooperative launches -----------------------------------------------------

def test_dynamic_shared_memory_needs_the_attribute_beyond_48_kib(saxpy):
    F = cuda.CUfunction_attribute
    default = check(cuda.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, saxpy))
    assert default == 48 * 1024
    args = _args(0, 1.0, 0, 0)
    assert cuda.cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 64 * 1024, 0, args, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    check(cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024))
    check(cuda.cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 64 * 1024, 0, args, 0))
    assert cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20)[0] == \
        R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_NUM_REGS, 8)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101)[0] == \
        R.CUDA_ERROR_INVALID_VALUE
    check(cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50))
    assert check(cuda.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, saxpy)) == 50
    check(cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1))
    with pytest.raises(OverflowError):
        cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 1 << 31)
    assert cuda.cuFuncSetAttribute(saxpy, F.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2)[0] == \
        R.CUDA_ERROR_NOT_SUPPORTED


def test_cooperative_launch(saxpy, ctx):
    n = 64
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    check(cuda.cuLaunchCooperativeKernel(saxpy, 1, 1, 1, n, 1, 1, 0, 0, _args(n, 1.0, d_x, d_y)))
    assert cuda.cuLaunchCooperativeKernel(saxpy, 1 << 20, 1, 1, 1024, 1, 1, 0, 0, _args(n, 1.0, d_x, d_y))[0] == \
        R.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
    # the grid-sync workspace: its address in %envreg1/2 for a cooperative launch, 0 for any other
    mod = check(cuda.cuModuleLoadData(GRID_SYNC_PTX.encode()))
    gsync = check(cuda.cuModuleGetFunction(mod, b"gsync"))
    out = np.ones(2, np.uint32)
    d_out = check(cuda.cuMemAlloc(8))
    args = ((d_out,), (ctypes.c_void_p,))
    check(cuda.cuLaunchKernel(gsync, 1, 1, 1, 1, 1, 1, 0, 0, args, 0))
    check(cuda.cuMemcpyDtoH(out, d_out, 8))
    assert out.tolist() == [0, 0]
    check(cuda.cuLaunchCooperativeKernel(gsync, 2, 1, 1, 32, 1, 1, 0, 0, args))
    check(cuda.cuMemcpyDtoH(out, d_out, 8))
    assert int(out[0]) << 32 | int(out[1]) != 0


def test_cooperative_grid_sync_matches_numpy(ctx):
    """examples/grid_sync.cu (nvcc's cooperative_groups grid.sync()) through cuLaunchCooperativeKernel."""
    mod = check(cuda.cuModuleLoadData((EXAMPLES_DIR / "grid_sync.sm_80.ptx").read_bytes()))
    smooth = check(cuda.cuModuleGetFunction(mod, b"grid_sync_smooth"))
    n, iters, blocks = 1000, 5, 6
    x = np.random.default_rng(3).random(n).astype(np.float32)
    b0, b1 = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    check(cuda.cuMemcpyHtoD(b0, x, 4 * n))
    args = ((n, iters, b0, b1), (ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p))
    check(cuda.cuLaunchCooperativeKernel(smooth, blocks, 1, 1, 128, 1, 1, 0, 0, args))
    out = np.zeros(n, np.float32)
    check(cuda.cuMemcpyDtoH(out, b1 if iters % 2 else b0, 4 * n))
    ref = x.copy()
    for _ in range(iters):
        ref = (np.concatenate([ref[:1], ref[:-1]]) + ref + np.concatenate([ref[1:], ref[-1:]])) / np.float32(3)
    np.testing.assert_array_equal(out, ref)
    sms = check(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0))
    per_sm = check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(smooth, 128, 0))
    assert cuda.cuLaunchCooperativeKernel(smooth, sms * per_sm + 1, 1, 1, 128, 1, 1, 0, 0, args)[0] == \
        R.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE


# -- stream-ordered allocation, the runtime API ----------------------------------------------------

def test_stream_ordered_allocation(ctx):
    s = check(cuda.cuStreamCreate(0))
    d = check(cuda.cuMemAllocAsync(256, s))
    check(cuda.cuMemsetD8Async(d, 7, 256, s))
    check(cuda.cuMemFreeAsync(d, s))
    assert cuda.cuMemsetD8(d, 0, 256)[0] == R.CUDA_ERROR_INVALID_VALUE  # freed
    pool = check(cuda.cuDeviceGetDefaultMemPool(0))
    check(cuda.cuMemPoolSetAttribute(pool, 4, cuda.cuuint64_t(2**64 - 1)))
    assert int(check(cuda.cuMemPoolGetAttribute(pool, 4))) == 2**64 - 1
    check(cuda.cuStreamBeginCapture(s, 0))
    assert cuda.cuMemAllocAsync(256, s)[0] == R.CUDA_ERROR_NOT_SUPPORTED


def test_runtime_api_on_the_driver():
    E = cudart.cudaError_t
    err, p = cudart.cudaMallocManaged(40, cudart.cudaMemAttachGlobal)
    assert err == E.cudaSuccess and isinstance(p, int)
    assert cudart.cudaMemset(p, 0xFF, 40) == (E.cudaSuccess,)
    assert (_host(p, 10, np.int32) == -1).all()
    assert cudart.cudaSetDevice(1)[0] == E.cudaErrorInvalidDevice
    assert cudart.cudaFree(p + 4)[0] == E.cudaErrorInvalidValue
    assert cudart.cudaFree(p) == (E.cudaSuccess,)
    err, prop = cudart.cudaGetDeviceProperties(0)
    assert prop.managedMemory == 1 and prop.pageableMemoryAccess == 0 and (prop.major, prop.minor) == (9, 0)
    assert prop.maxThreadsDim == [1024, 1024, 64]
    assert cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrComputeMode, 0) == (E.cudaSuccess, 0)
    assert cudart.cudaGetErrorName(E.cudaErrorInvalidValue) == (E.cudaSuccess, b"cudaErrorInvalidValue")
    h = ctypes.c_double(0)
    d = cudart.cudaMalloc(8)[1]
    assert cudart.cudaMemcpy(d, np.array([2.5]), 8, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)[0] == E.cudaSuccess
    assert cudart.cudaMemcpy(h, d, 8, cudart.cudaMemcpyKind.cudaMemcpyDefault)[0] == E.cudaSuccess
    assert h.value == 2.5
    assert cudart.cudaMemcpy(h, d, 8, 9)[0] == E.cudaErrorInvalidMemcpyDirection


def test_registered_host_memory(saxpy, ctx):
    n = 128
    x, y = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    for a in (x, y):
        check(cuda.cuMemHostRegister(a, a.nbytes, 0))
    assert cuda.cuMemHostRegister(y, 8, 0)[0] == R.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    dx, dy = (check(cuda.cuMemHostGetDevicePointer(a, 0)) for a in (x, y))
    check(cuda.cuLaunchKernel(saxpy, 1, 1, 1, n, 1, 1, 0, 0, _args(n, 2.0, dx, dy), 0))
    np.testing.assert_array_equal(y, 2 * x)  # the kernel wrote the caller's numpy array
    assert check(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, y)) == \
        cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    for a in (x, y):
        check(cuda.cuMemHostUnregister(a))
    assert cuda.cuMemHostUnregister(x)[0] == R.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED


def test_narrow_values_are_zero_extended_as_cuda_python_packs_them():
    from types import SimpleNamespace

    from xcc.runtime.host_args import kernel_args

    size_t = SimpleNamespace(name="n", size=8, type="u64")
    assert kernel_args([size_t], ((512,), (ctypes.c_uint,))) == [(512).to_bytes(8, "little")]
