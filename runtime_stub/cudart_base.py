"""The helpers every runtime API module of :mod:`xcc.runtime.cudart` is built with: the ``cudaError_t``
return convention (:func:`_rt`), lazy initialisation of the driver and the primary context, and the runtime's
pointer and ``cudaMemcpyKind`` arguments."""

from __future__ import annotations

import ctypes
import functools

from xcc.runtime import driver as drv
from xcc.runtime.cudart_enums import cudaError_t, cudaMemcpyKind
from xcc.runtime.driver_core import CudaError, _state, api, as_int, as_uint, value_of
from xcc.runtime.driver_types import CUresult

__all__ = ["_device", "_init", "_kind", "_ptr", "_rt", "_to_error"]


def _to_error(code) -> cudaError_t:
    try:
        return cudaError_t(int(code))
    except ValueError:
        return cudaError_t.cudaErrorUnknown


def _rt(outputs: int = 0):
    """A runtime API function: initialises the runtime first, returns ``cudaError_t`` codes."""
    base = api(outputs, needs_init=False, errors=_to_error)

    def wrap(fn):
        @functools.wraps(fn)
        def body(*args, **kwargs):
            _init()
            return fn(*args, **kwargs)

        return base(body)

    return wrap


def _init() -> None:
    """Initialise the driver and make device 0's primary context current, unless a context is."""
    if not _state["initialized"]:
        value_of(drv.cuInit(0))
    if int(value_of(drv.cuCtxGetCurrent())) == 0:
        value_of(drv.cuCtxSetCurrent(value_of(drv.cuDevicePrimaryCtxRetain(0))))


def _ptr(p):
    """A pointer argument: ctypes objects by address, handles and ints as ints, buffers as they are."""
    if isinstance(p, ctypes._SimpleCData | ctypes.Array | ctypes.Structure):
        return ctypes.addressof(p)
    if isinstance(p, drv.CUdeviceptr):
        return int(p)
    return p


def _device(device) -> int:
    d = as_int(device, "device")
    if d != 0:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_DEVICE, f"no device {d}: the emulator has one device, 0")
    return d


def _kind(kind) -> None:
    """A ``cudaMemcpyKind`` (an int is accepted, as by cuda-python); else the runtime's own error."""
    if as_uint(kind, "kind") not in cudaMemcpyKind._value2member_map_:
        raise CudaError(cudaError_t.cudaErrorInvalidMemcpyDirection, f"{int(kind)} is not a cudaMemcpyKind")
