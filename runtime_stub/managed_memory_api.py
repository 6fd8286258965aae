"""Unified-memory hints of :mod:`xcc.runtime.driver`: ``cuMemPrefetchAsync`` and ``cuMemAdvise``, with the
types they take (``CUmemLocation``, ``CUmemLocationType``, ``CUmem_advise``, ``CU_DEVICE_CPU``).

On a GPU these move managed pages or set how the driver places them; the emulated xg1 is one device
whose managed memory is host memory it reads directly (:mod:`xcc.runtime.host_memory_api`), so both
are no-ops that check their arguments as the driver does (CUDA Driver API reference, "Unified
Addressing"): the range must lie in one managed allocation (else ``CUDA_ERROR_INVALID_VALUE``), the
location must be device 0 or the host (else ``CUDA_ERROR_INVALID_DEVICE``), the advice a
``CUmem_advise``, ``flags`` 0, and the stream one of the current context.  The signatures are
cuda-python 13's (``location`` a ``CUmemLocation``; prefetch also takes ``flags``) and, by argument
count, cuda-python 12's (a device ordinal, ``CU_DEVICE_CPU`` for the host).
"""

from __future__ import annotations

from enum import IntEnum

from xcc.runtime.driver_core import CudaError, api, as_int, as_uint, current
from xcc.runtime.driver_structs import _Struct
from xcc.runtime.driver_types import CUdevice, CUresult
from xcc.runtime.host_memory_api import _address, _owner
from xcc.runtime.streams import _stream

R = CUresult
CU_DEVICE_CPU = -1  # a device ordinal that names the host
CU_DEVICE_INVALID = -2


class CUmemLocationType(IntEnum):
    CU_MEM_LOCATION_TYPE_INVALID = 0
    CU_MEM_LOCATION_TYPE_DEVICE = 1
    CU_MEM_LOCATION_TYPE_HOST = 2
    CU_MEM_LOCATION_TYPE_HOST_NUMA = 3
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 4


class CUmem_advise(IntEnum):
    CU_MEM_ADVISE_SET_READ_MOSTLY = 1
    CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2
    CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3
    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4
    CU_MEM_ADVISE_SET_ACCESSED_BY = 5
    CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6


class CUmemLocation(_Struct):
    """Where memory is: ``type`` (a ``CUmemLocationType``) and ``id`` (a device ordinal or NUMA node)."""

    _uint = {"type": 32}
    _any = ("id",)

    def __init__(self, _ptr=0):
        super().__init__(_ptr)
        object.__setattr__(self, "id", 0)


def _managed_range(devPtr, count) -> None:
    addr, n = _address(devPtr, "devPtr"), as_uint(count, "count", 64)
    _, _, start, size, managed = _owner(addr)
    if not managed:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"{addr:#x} is not managed memory (cuMemAllocManaged)")
    if n == 0 or addr + n > start + size:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"{n} bytes from {addr:#x} do not lie in the managed "
                                                    f"allocation of {size} bytes at {start:#x}")


def _location(where, what: str, host_ok: bool = True) -> None:
    """``where``: a ``CUmemLocation`` (cuda-python 13) or a device ordinal (12; ``CU_DEVICE_CPU``: the host)."""
    if isinstance(where, CUmemLocation):
        kind, ident = where.type, as_int(where.id or 0, f"{what}.id")
        if kind == CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE:
            ordinal = ident
        elif kind in (CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA,
                      CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT):
            ordinal = CU_DEVICE_CPU
        else:
            raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"{what}.type {where.type} is not a valid CUmemLocationType")
    elif isinstance(where, CUdevice | int) and not isinstance(where, bool):
        ordinal = as_int(int(where), what)
    else:
        raise TypeError(f"Argument '{what}' is not instance of type (expected CUmemLocation or CUdevice, found "
                        f"{type(where).__name__})")
    if ordinal != 0 and not (host_ok and ordinal == CU_DEVICE_CPU):
        raise CudaError(R.CUDA_ERROR_INVALID_DEVICE, f"{what}: device {ordinal} does not exist (the emulated "
                                                     "device is 0; the host is CU_DEVICE_CPU)")


@api()
def cuMemPrefetchAsync(devPtr, count, location, *rest) -> None:
    """Prefetch managed memory to ``location``: ``(devPtr, count, location, flags, hStream)`` as in cuda-python
    13 or ``(devPtr, count, dstDevice, hStream)`` as in 12.  A no-op once the arguments check out (the
    module docstring)."""
    if len(rest) == 2:
        flags, hStream = rest
        if as_uint(flags, "flags") != 0:
            raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "cuMemPrefetchAsync: flags must be 0")
    elif len(rest) == 1:
        hStream = rest[0]
    else:
        raise TypeError(f"cuMemPrefetchAsync takes 5 arguments (or 4 as in cuda-python 12), got {3 + len(rest)}")
    current()
    _stream(hStream)
    _location(location, "location")
    _managed_range(devPtr, count)


@api()
def cuMemAdvise(devPtr, count, advice, location) -> None:
    """Advise how managed memory is used (``location`` a ``CUmemLocation`` or, as in cuda-python 12, a device
    ordinal); a no-op once the arguments check out.  Read-mostly advice ignores ``location``."""
    current()
    a = as_int(advice, "advice")
    if a not in CUmem_advise._value2member_map_:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"advice {a} is not a CUmem_advise")
    if a not in (CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, CUmem_advise.CU_MEM_ADVISE_UNSET_READ_MOSTLY):
        _location(location, "location")
    _managed_range(devPtr, count)


__all__ = ["CU_DEVICE_CPU", "CU_DEVICE_INVALID", "CUmemLocation", "CUmemLocationType", "CUmem_advise",
           "cuMemAdvise", "cuMemPrefetchAsync"]
