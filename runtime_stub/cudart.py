"""``xcc.runtime.cudart``: the part of the CUDA runtime API that NVIDIA's cuda-python samples use, as
``cuda.bindings.runtime`` shapes it, built on :mod:`xcc.runtime.driver`::

    from xcc.runtime import cudart      # was: from cuda.bindings import runtime as cudart

Every function returns ``(cudaError_t, *values)``.  The first call initialises the driver and makes
the device's primary context current, as the runtime does; ``cudaSetDevice(0)`` does the same and any
other ordinal is ``cudaErrorInvalidDevice``.  Each function is the driver function of the same job,
so its errors are the driver's, as the runtime code of the same number (``cudaError_t`` and
``CUresult`` share their numbers), except for the runtime's own checks (a bad ``cudaMemcpyKind`` is
``cudaErrorInvalidMemcpyDirection``); streams, events and graphs are the driver's handles, so they pass
freely between the two APIs as they do in cuda-python.  Pointers are ``int`` addresses; a host pointer
may also be a ctypes object or a buffer (what the samples pass).  Copies infer their direction from
the addresses (unified addressing), and check ``kind`` is a ``cudaMemcpyKind``.
"""

from __future__ import annotations

from xcc.runtime import driver as drv
from xcc.runtime.cudart_base import _device, _init, _kind, _ptr, _rt, _to_error  # noqa: F401 - the runtime's helpers
from xcc.runtime.cudart_enums import *  # noqa: F403 - the runtime's enums and flags, as cuda.bindings.runtime has them
from xcc.runtime.cudart_enums import cudaDeviceAttr, cudaError_t
from xcc.runtime.cudart_types import (  # noqa: F401 - re-exported
    cudaDeviceProp,
    cudaExtent,
    cudaMemcpy3DParms,
    cudaMemsetParams,
    cudaPitchedPtr,
    cudaPos,
    dim3,
    make_cudaExtent,
    make_cudaPitchedPtr,
    make_cudaPos,
)
from xcc.runtime.device_attributes import device_attributes
from xcc.runtime.driver_core import CudaError, as_uint, value_of
from xcc.runtime.driver_types import CUresult
from xcc.runtime.host_memory_api import is_device_memory

RUNTIME_VERSION = 13000
TOTAL_GLOBAL_MEM = 80 * 2**30  # H100 SXM's; the emulator's device memory grows as it is allocated


# -- device ------------------------------------------------------------------------------------------

@_rt(1)
def cudaGetDeviceCount() -> int:
    return 1


@_rt()
def cudaSetDevice(device) -> None:
    _device(device)


@_rt(1)
def cudaGetDevice() -> int:
    return 0


@_rt()
def cudaSetDeviceFlags(flags) -> None:
    """Accepted: mapped host memory needs no flag on xcc (``cudaDeviceMapHost`` is implied)."""
    as_uint(flags, "flags")


@_rt(1)
def cudaDeviceGetAttribute(attr, device) -> int:
    return value_of(drv.cuDeviceGetAttribute(cudaDeviceAttr(int(attr)), _device(device)))


@_rt(1)
def cudaGetDeviceProperties(device) -> cudaDeviceProp:
    dev = _device(device)
    name = value_of(drv.cuDeviceGetName(256, dev)).split(b"\0")[0]
    return cudaDeviceProp(device_attributes(drv.machine_of(dev)), name, TOTAL_GLOBAL_MEM)


@_rt(1)
def cudaDriverGetVersion() -> int:
    return value_of(drv.cuDriverGetVersion())


@_rt(1)
def cudaRuntimeGetVersion() -> int:
    return RUNTIME_VERSION


@_rt()
def cudaDeviceSynchronize() -> None:
    value_of(drv.cuCtxSynchronize())


@_rt(1)
def cudaGetErrorName(error) -> bytes:
    return cudaError_t(int(error)).name.encode()


@_rt(1)
def cudaGetErrorString(error) -> bytes:
    return value_of(drv.cuGetErrorString(CUresult(int(error)) if int(error) in CUresult._value2member_map_
                                         else CUresult.CUDA_ERROR_UNKNOWN))


# -- memory ------------------------------------------------------------------------------------------

@_rt(1)
def cudaMalloc(size) -> int:
    return int(value_of(drv.cuMemAlloc(size)))


@_rt()
def cudaFree(devPtr) -> None:
    if _ptr(devPtr):
        value_of(drv.cuMemFree(_ptr(devPtr)))


@_rt(1)
def cudaMallocManaged(size, flags) -> int:
    return int(value_of(drv.cuMemAllocManaged(size, flags)))


@_rt(1)
def cudaMallocHost(size) -> int:
    return value_of(drv.cuMemAllocHost(size))


@_rt(1)
def cudaHostAlloc(size, flags) -> int:
    return value_of(drv.cuMemHostAlloc(size, flags))


@_rt()
def cudaFreeHost(ptr) -> None:
    value_of(drv.cuMemFreeHost(_ptr(ptr)))


@_rt()
def cudaHostRegister(ptr, size, flags) -> None:
    value_of(drv.cuMemHostRegister(_ptr(ptr), size, flags))


@_rt()
def cudaHostUnregister(ptr) -> None:
    value_of(drv.cuMemHostUnregister(_ptr(ptr)))


@_rt(1)
def cudaHostGetDevicePointer(pHost, flags) -> int:
    return int(value_of(drv.cuMemHostGetDevicePointer(_ptr(pHost), flags)))


@_rt()
def cudaMemcpy(dst, src, count, kind) -> None:
    _kind(kind)
    value_of(drv.cuMemcpy(_ptr(dst), _ptr(src), count))


@_rt()
def cudaMemcpyAsync(dst, src, count, kind, stream) -> None:
    _kind(kind)
    value_of(drv.cuMemcpyAsync(_ptr(dst), _ptr(src), count, stream))


@_rt()
def cudaMemset(devPtr, value, count) -> None:
    value_of(drv.cuMemsetD8(_ptr(devPtr), int(value) & 0xFF, count))


@_rt()
def cudaMemsetAsync(devPtr, value, count, stream) -> None:
    value_of(drv.cuMemsetD8Async(_ptr(devPtr), int(value) & 0xFF, count, stream))


@_rt(1)
def cudaMallocAsync(size, hStream) -> int:
    return int(value_of(drv.cuMemAllocAsync(size, hStream)))


@_rt()
def cudaFreeAsync(devPtr, hStream) -> None:
    value_of(drv.cuMemFreeAsync(_ptr(devPtr), hStream))


@_rt(1)
def cudaDeviceGetDefaultMemPool(device):
    return value_of(drv.cuDeviceGetDefaultMemPool(_device(device)))


@_rt()
def cudaMemPoolSetAttribute(memPool, attr, value) -> None:
    value_of(drv.cuMemPoolSetAttribute(memPool, attr, value))


@_rt(1)
def cudaMemPoolGetAttribute(memPool, attr) -> int:
    return value_of(drv.cuMemPoolGetAttribute(memPool, attr))


# -- streams and events ------------------------------------------------------------------------------

@_rt(1)
def cudaStreamCreate():
    return value_of(drv.cuStreamCreate(0))


@_rt(1)
def cudaStreamCreateWithFlags(flags):
    return value_of(drv.cuStreamCreate(flags))


@_rt()
def cudaStreamDestroy(stream) -> None:
    value_of(drv.cuStreamDestroy(stream))


@_rt()
def cudaStreamSynchronize(stream) -> None:
    value_of(drv.cuStreamSynchronize(stream))


@_rt()
def cudaStreamQuery(stream) -> None:
    value_of(drv.cuStreamQuery(stream))


@_rt()
def cudaStreamWaitEvent(stream, event, flags=0) -> None:
    value_of(drv.cuStreamWaitEvent(stream, event, flags))


@_rt()
def cudaStreamBeginCapture(stream, mode) -> None:
    value_of(drv.cuStreamBeginCapture(stream, mode))


@_rt(1)
def cudaStreamEndCapture(stream):
    return value_of(drv.cuStreamEndCapture(stream))


@_rt(1)
def cudaEventCreate():
    return value_of(drv.cuEventCreate(0))


@_rt(1)
def cudaEventCreateWithFlags(flags):
    return value_of(drv.cuEventCreate(flags))


@_rt()
def cudaEventRecord(event, stream=0) -> None:
    value_of(drv.cuEventRecord(event, stream))


@_rt()
def cudaEventSynchronize(event) -> None:
    value_of(drv.cuEventSynchronize(event))


@_rt(1)
def cudaEventElapsedTime(start, end) -> float:
    return value_of(drv.cuEventElapsedTime(start, end))


@_rt()
def cudaEventDestroy(event) -> None:
    value_of(drv.cuEventDestroy(event))


# -- graphs ------------------------------------------------------------------------------------------

@_rt(1)
def cudaGraphCreate(flags):
    return value_of(drv.cuGraphCreate(flags))


def _memcpy3d(p: cudaMemcpy3DParms) -> drv.CUDA_MEMCPY3D:
    """The driver's ``CUDA_MEMCPY3D`` for a runtime copy between linear memories (no CUDA arrays)."""
    if p.srcArray is not None or p.dstArray is not None:
        raise CudaError(CUresult.CUDA_ERROR_NOT_SUPPORTED, "CUDA arrays are not supported")
    _kind(p.kind)
    c, ext = drv.CUDA_MEMCPY3D(), p.extent or make_cudaExtent(0, 0, 0)
    for side in ("src", "dst"):
        ptr, pos = getattr(p, f"{side}Ptr"), getattr(p, f"{side}Pos") or make_cudaPos(0, 0, 0)
        if ptr is None:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{side}Ptr is not set")
        address = _ptr(ptr.ptr)
        device = isinstance(address, int) and is_device_memory(address)
        setattr(c, f"{side}MemoryType", drv.CUmemorytype.CU_MEMORYTYPE_DEVICE if device
                else drv.CUmemorytype.CU_MEMORYTYPE_HOST)
        setattr(c, f"{side}Device" if device else f"{side}Host", address)
        setattr(c, f"{side}XInBytes", pos.x)
        setattr(c, f"{side}Y", pos.y)
        setattr(c, f"{side}Z", pos.z)
        setattr(c, f"{side}Pitch", ptr.pitch)
        setattr(c, f"{side}Height", ptr.ysize)
    c.WidthInBytes, c.Height, c.Depth = ext.width, ext.height, ext.depth
    return c


@_rt(1)
def cudaGraphAddMemcpyNode(graph, pDependencies, numDependencies, pCopyParams):
    return value_of(drv.cuGraphAddMemcpyNode(graph, pDependencies, numDependencies, _memcpy3d(pCopyParams),
                                             value_of(drv.cuCtxGetCurrent())))


@_rt(1)
def cudaGraphAddMemsetNode(graph, pDependencies, numDependencies, pMemsetParams):
    p, m = pMemsetParams, drv.CUDA_MEMSET_NODE_PARAMS()
    m.dst, m.value, m.elementSize, m.width, m.height, m.pitch = (_ptr(p.dst), p.value, p.elementSize, p.width,
                                                                  p.height, p.pitch)
    return value_of(drv.cuGraphAddMemsetNode(graph, pDependencies, numDependencies, m,
                                             value_of(drv.cuCtxGetCurrent())))


@_rt(2)
def cudaGraphGetNodes(graph, numNodes=0):
    return value_of(drv.cuGraphGetNodes(graph, numNodes))


@_rt(1)
def cudaGraphInstantiate(graph, flags=0):
    return value_of(drv.cuGraphInstantiate(graph, flags))


@_rt(1)
def cudaGraphClone(originalGraph):
    return value_of(drv.cuGraphClone(originalGraph))


@_rt()
def cudaGraphLaunch(graphExec, stream) -> None:
    value_of(drv.cuGraphLaunch(graphExec, stream))


@_rt()
def cudaGraphExecDestroy(graphExec) -> None:
    value_of(drv.cuGraphExecDestroy(graphExec))


@_rt()
def cudaGraphDestroy(graph) -> None:
    value_of(drv.cuGraphDestroy(graph))


# CUDA arrays, texture and surface objects (their own module; it builds on the helpers above)
from xcc.runtime.cudart_texture import *  # noqa: E402, F403
