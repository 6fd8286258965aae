"""Host-visible memory of :mod:`xcc.runtime.driver`: managed and page-locked allocations, unified copies
and pointer attributes (``cuMemAllocManaged``, ``cuMemHostAlloc``, ``cuMemAllocHost``, ``cuMemFreeHost``,
``cuMemHostGetDevicePointer``, ``cuMemcpy``/``cuMemcpyAsync``, ``cuPointerGetAttribute``).

Managed and host allocations are numpy buffers of this process that kernels access at their host
address (:mod:`xcc.runtime.mapped_memory`): ``cuMemAllocManaged`` returns a ``CUdeviceptr`` that host
code may dereference, ``cuMemHostAlloc`` an ``int`` host pointer whose device pointer
(``cuMemHostGetDevicePointer``) is the same value, as under CUDA's unified addressing.  Both stay valid
until freed (``cuMemFree`` / ``cuMemFreeHost``), whatever context is current; on a GPU host memory is
also reachable from every context when allocated ``CU_MEMHOSTALLOC_PORTABLE``, and here always is.

``cuMemHostRegister`` maps existing host memory the same way (it must not overlap other host-visible
memory: ``CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED``).  Errors are the driver's: a size of 0, unknown flags, a pointer that is not the start of such an
allocation, or an attribute of memory the driver does not know are ``CUDA_ERROR_INVALID_VALUE``.
"""

from __future__ import annotations

import ctypes

import numpy as np

from xcc.runtime.driver_core import Context, CudaError, _objects, api, as_int, as_uint, current
from xcc.runtime.driver_types import (
    CUcontext,
    CUdeviceptr,
    CUmemAttach_flags,
    CUmemorytype,
    CUpointer_attribute,
)
from xcc.runtime.driver_types import CUresult as R
from xcc.runtime.host_args import host_view
from xcc.runtime.mapped_memory import HOST_BUFFERS
from xcc.sim.memory import MemoryFault

_INVALID = R.CUDA_ERROR_INVALID_VALUE


def _allocate(n: int, kind: str, flags: int = 0) -> int:
    try:
        return HOST_BUFFERS.allocate(n, kind, flags).address
    except (MemoryError, ValueError) as e:
        raise CudaError(R.CUDA_ERROR_OUT_OF_MEMORY, f"cannot allocate {n} bytes of host memory: {e}") from None
_HOSTALLOC_FLAGS = 0x7  # PORTABLE | DEVICEMAP | WRITECOMBINED


def _address(p, what: str) -> int:
    """A pointer argument as cuda-python takes one: an int, a ``CUdeviceptr``, a ``ctypes.c_void_p``, a
    ctypes object (its address) or a numpy array (its data)."""
    if isinstance(p, CUdeviceptr):
        return int(p)
    if isinstance(p, int) and not isinstance(p, bool):
        return p
    if isinstance(p, ctypes.c_void_p):
        return int(p.value or 0)
    if isinstance(p, ctypes._SimpleCData | ctypes.Array | ctypes.Structure):
        return ctypes.addressof(p)
    if isinstance(p, np.ndarray):
        return int(p.ctypes.data)
    raise TypeError(f"Argument '{what}' is not instance of type (expected int or CUdeviceptr, found "
                    f"{type(p).__name__})")


@api(1)
def cuMemAllocManaged(bytesize, flags) -> CUdeviceptr:
    """``bytesize`` zeroed bytes of managed memory, at the same address on the host and the device;
    ``flags`` is ``CU_MEM_ATTACH_GLOBAL`` or ``CU_MEM_ATTACH_HOST``."""
    n, f = as_uint(bytesize, "bytesize", 64), as_uint(flags, "flags")
    current()
    if n == 0 or f not in (CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL, CUmemAttach_flags.CU_MEM_ATTACH_HOST):
        raise CudaError(_INVALID, f"cuMemAllocManaged({n}, {f:#x}): the size must be positive and the flags "
                                  "CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST")
    return CUdeviceptr(_allocate(n, "managed", f))


@api(1)
def cuMemHostAlloc(bytesize, Flags) -> int:
    """``bytesize`` zeroed bytes of page-locked host memory, mapped into the device's address space
    whatever ``Flags`` (any of ``CU_MEMHOSTALLOC_PORTABLE``, ``_DEVICEMAP``, ``_WRITECOMBINED``) says."""
    n, f = as_uint(bytesize, "bytesize", 64), as_uint(Flags, "Flags")
    current()
    if n == 0 or f & ~_HOSTALLOC_FLAGS:
        raise CudaError(_INVALID, f"cuMemHostAlloc({n}, {f:#x}): the size must be positive and the flags "
                                  "a combination of CU_MEMHOSTALLOC_PORTABLE, _DEVICEMAP and _WRITECOMBINED")
    return _allocate(n, "host", f)


@api(1)
def cuMemAllocHost(bytesize) -> int:
    """``cuMemHostAlloc(bytesize, 0)``."""
    n = as_uint(bytesize, "bytesize", 64)
    current()
    if n == 0:
        raise CudaError(_INVALID, "cuMemAllocHost of 0 bytes")
    return _allocate(n, "host")


@api()
def cuMemFreeHost(p) -> None:
    addr = _address(p, "p")
    current()
    buf = HOST_BUFFERS.find(addr)
    if buf is None or buf.kind != "host" or buf.address != addr:
        raise CudaError(_INVALID, f"{addr:#x} is not the start of memory from cuMemHostAlloc/cuMemAllocHost")
    HOST_BUFFERS.free(addr)


def free_managed(addr: int) -> bool:
    """Free the managed allocation starting at ``addr`` (for ``cuMemFree``); False if there is none."""
    buf = HOST_BUFFERS.find(addr)
    if buf is None:
        return False
    if buf.kind != "managed" or buf.address != addr:
        raise CudaError(_INVALID, f"cuMemFree({addr:#x}): host memory is freed with cuMemFreeHost")
    HOST_BUFFERS.free(addr)
    return True


@api(1)
def cuMemHostGetDevicePointer(p, Flags) -> CUdeviceptr:
    """The device address of host memory from ``cuMemHostAlloc``: ``p`` itself (unified addressing)."""
    addr, f = _address(p, "p"), as_uint(Flags, "Flags")
    current()
    if f != 0:
        raise CudaError(_INVALID, "cuMemHostGetDevicePointer: Flags must be 0")
    buf = HOST_BUFFERS.find(addr)
    if buf is None or buf.kind not in ("host", "registered"):
        raise CudaError(_INVALID, f"{addr:#x} is not in memory allocated by cuMemHostAlloc or registered")
    return CUdeviceptr(addr)


@api()
def cuMemHostRegister(p, bytesize, Flags) -> None:
    """Page-lock existing host memory (``p``: an address, a ctypes object or a numpy array) and map it
    for the device at the same address; ``Flags`` combines ``CU_MEMHOSTREGISTER_*`` (1, 2, 4, 8)."""
    addr, n, f = _address(p, "p"), as_uint(bytesize, "bytesize", 64), as_uint(Flags, "Flags")
    current()
    if not addr or n == 0 or f & ~0xF:
        raise CudaError(_INVALID, f"cuMemHostRegister({addr:#x}, {n}, {f:#x}): a null pointer, no bytes or "
                                  "unknown flags")
    try:
        HOST_BUFFERS.register(addr, n, f)
    except ValueError as e:
        raise CudaError(R.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, str(e)) from None
    except MemoryError as e:
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, str(e)) from None


@api()
def cuMemHostUnregister(p) -> None:
    addr = _address(p, "p")
    current()
    buf = HOST_BUFFERS.find(addr)
    if buf is None or buf.kind != "registered" or buf.address != addr:
        raise CudaError(R.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, f"{addr:#x} is not the start of registered memory")
    HOST_BUFFERS.free(addr)


# -- unified copies ---------------------------------------------------------------------------------

def _is_memory(ctx: Context, addr: int) -> bool:
    """Whether ``addr`` is device or host-buffer memory of ``ctx`` (else it is plain host memory)."""
    try:
        ctx.memory.read(addr, 0)
        return True
    except MemoryFault:
        return False


def _endpoint(ctx: Context, p, n: int, what: str, writable: bool):
    """One side of a unified copy: ``(address, None)`` for device, managed or mapped memory, else
    ``(None, bytes view)`` of plain host memory (an address or a buffer)."""
    try:
        addr = _address(p, what)
    except TypeError:
        addr = None
    if addr is not None and _is_memory(ctx, addr):
        return addr, None
    return None, host_view(p, n, what, writable=writable)


def is_device_memory(addr: int) -> bool:
    """Whether ``addr`` is device, managed or host-mapped memory of the current context."""
    return _is_memory(current(), addr)


def unified_copy(stream, dst, src, ByteCount) -> None:
    """Copy ``ByteCount`` bytes between any two of device, managed, host-mapped or plain host memory
    (an address or a buffer), telling them apart by address (unified addressing), on ``stream``."""
    ctx, n = current(), as_uint(ByteCount, "ByteCount", 64)
    st = ctx.stream(stream)
    if not n:
        return
    d, dview = _endpoint(ctx, dst, n, "dst", True)
    s, sview = _endpoint(ctx, src, n, "src", False)

    def run():
        try:
            data = ctx.memory.read(s, n) if s is not None else sview.copy()
            if d is not None:
                ctx.memory.write(d, data)
            else:
                dview[:] = data
        except MemoryFault as e:
            raise CudaError(_INVALID, str(e)) from None

    kind = "DtoD" if s is not None and d is not None else "HtoD" if d is not None else "DtoH" if s is not None else None
    ctx.run(st, run, kind="memcpy", info=kind and {"copy": kind, "bytes": n, "sync": stream is None and kind != "DtoD"})


@api()
def cuMemcpy(dst, src, ByteCount) -> None:
    unified_copy(None, dst, src, ByteCount)


@api()
def cuMemcpyAsync(dst, src, ByteCount, hStream) -> None:
    unified_copy(hStream, dst, src, ByteCount)


# -- pointer attributes -----------------------------------------------------------------------------

def _owner(addr: int):
    """``(context or None, CUmemorytype, range start, range size, managed)`` of the allocation holding
    ``addr``; host buffers belong to the current context, if there is one."""
    buf = HOST_BUFFERS.find(addr)
    if buf is not None:
        kind = CUmemorytype.CU_MEMORYTYPE_DEVICE if buf.kind == "managed" else CUmemorytype.CU_MEMORYTYPE_HOST
        stack_ctx = None
        try:
            stack_ctx = current()
        except CudaError:
            pass
        return stack_ctx, kind, buf.address, buf.nbytes, buf.kind == "managed"
    for obj in list(_objects.values()):
        if isinstance(obj, Context):
            for start, size in obj.memory.allocations:
                if start <= addr < start + max(size, 1):
                    return obj, CUmemorytype.CU_MEMORYTYPE_DEVICE, start, size, False
    raise CudaError(_INVALID, f"{addr:#x} was not allocated by, mapped by or registered with the driver")


@api(1)
def cuPointerGetAttribute(attribute, ptr):
    """One attribute of the allocation holding ``ptr``, typed as cuda-python returns it: CONTEXT a
    ``CUcontext``, DEVICE_POINTER and RANGE_START_ADDR a ``CUdeviceptr``, IS_MANAGED, MAPPED and the
    other yes/no attributes a ``bool``, the rest an ``int``.  Managed memory reports memory type
    DEVICE (as CUDA does), host memory HOST; a buffer id is the allocation's start address."""
    A = CUpointer_attribute
    a = A(as_int(attribute, "attribute")) if as_int(attribute, "attribute") in A._value2member_map_ else None
    if a is None:
        raise CudaError(_INVALID, f"{as_int(attribute, 'attribute')} is not a CUpointer_attribute")
    addr = _address(ptr, "ptr")
    ctx, mtype, start, size, managed = _owner(addr)
    values = {
        A.CU_POINTER_ATTRIBUTE_CONTEXT: ctx.handle if ctx is not None else CUcontext(0),
        A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: int(mtype),
        A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER: CUdeviceptr(addr),
        A.CU_POINTER_ATTRIBUTE_HOST_POINTER: addr if mtype == CUmemorytype.CU_MEMORYTYPE_HOST or managed else None,
        A.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: True,
        A.CU_POINTER_ATTRIBUTE_BUFFER_ID: start,
        A.CU_POINTER_ATTRIBUTE_IS_MANAGED: managed,
        A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: 0,
        A.CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: False,
        A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: CUdeviceptr(start),
        A.CU_POINTER_ATTRIBUTE_RANGE_SIZE: size,
        A.CU_POINTER_ATTRIBUTE_MAPPED: True,
        A.CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: False,
        A.CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: 3,  # CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
    }
    if a not in values:
        raise CudaError(_INVALID, f"{a.name} is not supported by xcc (no P2P, IPC, memory pools or VMM)")
    if values[a] is None:
        raise CudaError(_INVALID, f"{addr:#x} is device memory: the host cannot access it directly")
    return values[a]


__all__ = ["cuMemHostRegister", "cuMemHostUnregister", "cuMemAllocHost", "cuMemAllocManaged", "cuMemFreeHost", "cuMemHostAlloc", "cuMemHostGetDevicePointer",
           "cuMemcpy", "cuMemcpyAsync", "cuPointerGetAttribute"]
