"""Device memory of :mod:`xcc.runtime.driver`: ``cuMemAlloc``, ``cuMemFree``, ``cuMemcpy*``, ``cuMemset*``.

Memory belongs to the current context (each context has its own emulated global memory, with
64-bit addresses, red zones between allocations and use-after-free detection).  A copy or memset
outside a live allocation is ``CUDA_ERROR_INVALID_VALUE`` naming the allocation it missed.  The
synchronous forms run on the legacy default stream, the ``*Async`` forms on ``hStream``; all run
when they are called (see :mod:`xcc.runtime.streams`).  Host pointers: :mod:`xcc.runtime.host_args`.
Sizes, counts and memset values convert as cuda-python's ``size_t``/``unsigned`` parameters do
(:func:`~xcc.runtime.driver_core.as_uint`).  Device addresses may also be managed or host-mapped memory
(:mod:`xcc.runtime.host_memory_api`); ``cuMemFree`` frees managed memory too.
"""

from __future__ import annotations

import numpy as np

from xcc.runtime.driver_core import Context, CudaError, api, as_uint, current
from xcc.runtime.driver_types import CUdeviceptr, CUresult
from xcc.runtime.host_args import host_view
from xcc.runtime.host_memory_api import free_managed
from xcc.sim.memory import MemoryFault

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


def _dptr(v, what: str) -> int:
    if isinstance(v, CUdeviceptr) or (isinstance(v, int | np.integer) and not isinstance(v, bool)):
        return int(v)
    raise TypeError(f"Argument '{what}' is not instance of type (expected CUdeviceptr or int, found {type(v).__name__})")


def _memop(ctx: Context, stream, op, *args, kind: str = "memcpy", info: dict | None = None) -> None:
    def run():
        try:
            op(*args)
        except MemoryFault as e:
            raise CudaError(_INVALID, str(e)) from None

    ctx.run(stream, run, kind=kind, info=info)


@api(1)
def cuMemAlloc(bytesize) -> CUdeviceptr:
    n = as_uint(bytesize, "bytesize", 64)
    if n == 0:
        raise CudaError(_INVALID, "cuMemAlloc of 0 bytes")
    ctx = current()
    try:
        return CUdeviceptr(ctx.memory.alloc(n))
    except (MemoryError, ValueError) as e:
        raise CudaError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, f"cannot allocate {n} bytes: {e}") from None


@api()
def cuMemFree(dptr) -> None:
    addr = _dptr(dptr, "dptr")
    ctx = current()
    if addr and not free_managed(addr):
        try:
            ctx.memory.free(addr)
        except MemoryFault as e:
            raise CudaError(_INVALID, str(e)) from None


def _htod(stream, dstDevice, srcHost, ByteCount) -> None:
    ctx, n = current(), as_uint(ByteCount, "ByteCount", 64)
    dst, st = _dptr(dstDevice, "dstDevice"), ctx.stream(stream)
    src = host_view(srcHost, n, "srcHost")
    if n:  # the synchronous form waits for the copy (pageable host memory)
        _memop(ctx, st, ctx.memory.write, dst, src, info={"copy": "HtoD", "bytes": n, "sync": stream is None})


def _dtoh(stream, dstHost, srcDevice, ByteCount) -> None:
    ctx, n = current(), as_uint(ByteCount, "ByteCount", 64)
    src, st = _dptr(srcDevice, "srcDevice"), ctx.stream(stream)
    dst = host_view(dstHost, n, "dstHost", writable=True)
    if n:
        _memop(ctx, st, lambda: dst.__setitem__(slice(None), ctx.memory.read(src, n)),
               info={"copy": "DtoH", "bytes": n, "sync": stream is None})


def _dtod(stream, dstDevice, srcDevice, ByteCount) -> None:
    ctx, n = current(), as_uint(ByteCount, "ByteCount", 64)
    dst, src, st = _dptr(dstDevice, "dstDevice"), _dptr(srcDevice, "srcDevice"), ctx.stream(stream)
    if n:
        _memop(ctx, st, ctx.memory.copy, dst, src, n, info={"copy": "DtoD", "bytes": n})


def _memset(stream, dstDevice, value, N, width: int) -> None:
    ctx, n = current(), as_uint(N, "N", 64)
    dst, st = _dptr(dstDevice, "dstDevice"), ctx.stream(stream)
    v = as_uint(value, "value", 8 * width)
    if dst % width:
        raise CudaError(_INVALID, f"cuMemsetD{8 * width}: address {dst:#x} is not {width}-byte aligned")
    if n:
        pattern = np.full(n, v, {1: np.uint8, 2: np.uint16, 4: np.uint32}[width])
        _memop(ctx, st, ctx.memory.write, dst, pattern, kind="memset", info={"copy": "memset", "bytes": n * width})


@api()
def cuMemcpyHtoD(dstDevice, srcHost, ByteCount) -> None:
    _htod(None, dstDevice, srcHost, ByteCount)


@api()
def cuMemcpyHtoDAsync(dstDevice, srcHost, ByteCount, hStream) -> None:
    _htod(hStream, dstDevice, srcHost, ByteCount)


@api()
def cuMemcpyDtoH(dstHost, srcDevice, ByteCount) -> None:
    _dtoh(None, dstHost, srcDevice, ByteCount)


@api()
def cuMemcpyDtoHAsync(dstHost, srcDevice, ByteCount, hStream) -> None:
    _dtoh(hStream, dstHost, srcDevice, ByteCount)


@api()
def cuMemcpyDtoD(dstDevice, srcDevice, ByteCount) -> None:
    _dtod(None, dstDevice, srcDevice, ByteCount)


@api()
def cuMemcpyDtoDAsync(dstDevice, srcDevice, ByteCount, hStream) -> None:
    _dtod(hStream, dstDevice, srcDevice, ByteCount)


@api()
def cuMemsetD8(dstDevice, uc, N) -> None:
    _memset(None, dstDevice, uc, N, 1)


@api()
def cuMemsetD8Async(dstDevice, uc, N, hStream) -> None:
    _memset(hStream, dstDevice, uc, N, 1)


@api()
def cuMemsetD16(dstDevice, us, N) -> None:
    _memset(None, dstDevice, us, N, 2)


@api()
def cuMemsetD16Async(dstDevice, us, N, hStream) -> None:
    _memset(hStream, dstDevice, us, N, 2)


@api()
def cuMemsetD32(dstDevice, ui, N) -> None:
    _memset(None, dstDevice, ui, N, 4)


@api()
def cuMemsetD32Async(dstDevice, ui, N, hStream) -> None:
    _memset(hStream, dstDevice, ui, N, 4)

