"""Stream-ordered allocation of :mod:`xcc.runtime.driver`: ``cuMemAllocAsync``, ``cuMemFreeAsync``,
``cuDeviceGetDefaultMemPool``, ``cuMemPoolSetAttribute``, ``cuMemPoolGetAttribute``.

Work on a stream runs when it is enqueued (:mod:`xcc.runtime.streams`), so allocating and freeing in
stream order is allocating and freeing at the call: every earlier use of the memory has finished.
Each context has one pool, its default pool, whose attributes are recorded (the release threshold
changes nothing: freed memory goes back to the context's allocator at once).  In a stream capture the
calls would become memory nodes, which are not modelled: ``CUDA_ERROR_NOT_SUPPORTED``.
"""

from __future__ import annotations

from xcc.runtime.driver_core import (
    CudaError,
    api,
    as_int,
    as_uint,
    current,
    lookup,
    register,
    value_of,
)
from xcc.runtime.driver_types import CUdeviceptr, CUmemoryPool, CUresult
from xcc.runtime.memory_api import cuMemAlloc, cuMemFree

R = CUresult


class MemPool:
    def __init__(self, ctx):
        self.ctx = ctx
        self.attributes: dict[int, int] = {}


def _default_pool(ctx) -> MemPool:
    pool = getattr(ctx, "mempool", None)
    if pool is None:
        pool = ctx.mempool = MemPool(ctx)
        register(CUmemoryPool, pool)
    return pool


def _not_capturing(hStream) -> None:
    if current().stream(hStream).capture is not None:
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "stream-ordered allocation in a capture (memory nodes) is "
                                                    "not supported")


@api(1)
def cuMemAllocAsync(bytesize, hStream) -> CUdeviceptr:
    _not_capturing(hStream)
    return value_of(cuMemAlloc(bytesize))


@api()
def cuMemFreeAsync(dptr, hStream) -> None:
    _not_capturing(hStream)
    value_of(cuMemFree(dptr))


@api(1)
def cuDeviceGetDefaultMemPool(dev) -> CUmemoryPool:
    if as_int(dev, "dev") != 0:
        raise CudaError(R.CUDA_ERROR_INVALID_DEVICE, f"no device {as_int(dev, 'dev')}")
    return _default_pool(current()).handle


@api()
def cuMemPoolSetAttribute(pool, attr, value) -> None:
    p = lookup(pool, CUmemoryPool, MemPool, "pool")
    p.attributes[as_int(attr, "attr")] = as_uint(value, "value", 64)


@api(1)
def cuMemPoolGetAttribute(pool, attr) -> int:
    p = lookup(pool, CUmemoryPool, MemPool, "pool")
    return p.attributes.get(as_int(attr, "attr"), 0)


__all__ = ["cuDeviceGetDefaultMemPool", "cuMemAllocAsync", "cuMemFreeAsync", "cuMemPoolGetAttribute",
           "cuMemPoolSetAttribute"]
