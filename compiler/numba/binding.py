"""The driver API numba-cuda sees on xcc: ``cuda.bindings.driver`` as :mod:`xcc.runtime.driver` provides it.

numba-cuda's ``Driver`` calls every CUDA driver function through one module object (``binding`` in
``numba.cuda.cudadrv.driver``) and expects cuda-python's convention: a tuple whose first item is a
``CUresult``.  :data:`BINDING` stands in for that module.  A name resolves, in order, to

1. :mod:`xcc.runtime.driver` (the cuda-python-compatible driver over the emulated xg1 device);
2. the few driver calls numba-cuda needs that are defined here: ``cuDevicePrimaryCtxReset``
   (destroys the primary context), ``cuMemGetInfo``, ``cuMemGetAddressRange``,
   ``cuLibraryGetGlobal`` and ``cuLibraryUnload`` (numba's libraries are xcc modules), occupancy with
   flags, and the calls that only tune a GPU (cache configuration, carveout, profiler start/stop),
   which succeed and do nothing;
3. a type or constant of the real ``cuda.bindings.driver`` (enums numba only passes along);
4. any other ``cu*`` function: a stand-in returning ``CUDA_ERROR_NOT_SUPPORTED``, so numba raises its
   usual ``CudaAPIError`` naming the call.

A failing call's ``CUresult`` carries xcc's diagnostic: its ``name`` (which numba-cuda puts in the
``CudaAPIError`` message) is the CUDA error name followed by the located xcc message, e.g.
``CUDA_ERROR_ILLEGAL_ADDRESS (xcc: kernel '...' line 42: out-of-bounds store ...)``.  After such a
fault the frees (``cuMemFree``, ``cuStreamDestroy``, ``cuEventDestroy``, module unloads) and
``cuCtxGetDevice`` succeed, so that numba-cuda's reset (``numba.cuda.close()``) can destroy the faulted
context; a fresh one is made at the next call, as after ``cudaDeviceReset``.
"""

from __future__ import annotations

import functools

from cuda.bindings import driver as _cuda_bindings

from xcc.runtime import driver as _xcc

_R = _xcc.CUresult
_GIB = 1 << 30
TOTAL_MEMORY = 80 * _GIB  # reported by cuMemGetInfo: an H100's HBM (xg1 models an H100-class part)


def numba_driver():
    """numba-cuda's ``Driver`` (``numba.cuda.cudadrv.driver.driver``), which calls :data:`BINDING` and
    turns a failure into its ``CudaAPIError``."""
    from numba.cuda.cudadrv.driver import driver

    return driver


class Failure(int):
    """A failed call's ``CUresult``: equal to its code, named with the xcc diagnostic behind it."""

    def __new__(cls, code, message: str):
        obj = super().__new__(cls, int(code))
        obj.code = _R(int(code))
        obj.name = f"{obj.code.name} (xcc: {message})" if message else obj.code.name
        return obj

    def __repr__(self) -> str:
        return f"<CUresult.{self.name}>"


def _diagnosed(fn):
    """``fn`` with a failing result's code replaced by a :class:`Failure` carrying the message."""

    @functools.wraps(fn)
    def call(*args):
        out = fn(*args)
        if isinstance(out, tuple) and out and int(out[0]) != 0:
            return (Failure(out[0], _xcc.last_error_message()),) + out[1:]
        return out

    return call


# -- driver calls numba-cuda needs beyond xcc.runtime.driver -------------------------------------

def _ok(*values):
    return (_R.CUDA_SUCCESS, *values)


def cuDevicePrimaryCtxReset(dev):
    """Destroy the primary context with all its memory, modules and streams (and its sticky error);
    the next ``cuDevicePrimaryCtxRetain`` makes a fresh one."""
    err, ctx = _xcc.cuDevicePrimaryCtxRetain(dev)
    return (err,) if err else _xcc.cuCtxDestroy(ctx)


def _memory():
    """The current context's emulated global memory, or None without a context."""
    from xcc.runtime.driver_core import context_stack

    stack = context_stack()
    return stack[-1].memory if stack else None


def cuMemGetInfo():
    """``(free, total)``: :data:`TOTAL_MEMORY` less what the current context has allocated."""
    mem = _memory()
    if mem is None:
        return _R.CUDA_ERROR_INVALID_CONTEXT, None, None
    return _ok(max(TOTAL_MEMORY - mem.used_bytes, 0), TOTAL_MEMORY)


def cuMemGetAddressRange(dptr):
    """``(base, size)`` of the live allocation holding ``dptr``."""
    mem = _memory()
    if mem is None:
        return _R.CUDA_ERROR_INVALID_CONTEXT, None, None
    p = int(dptr)
    for base, size in mem.allocations:
        if base <= p < base + size:
            return _ok(_xcc.CUdeviceptr(base), size)
    return _R.CUDA_ERROR_NOT_FOUND, None, None


def cuLibraryGetGlobal(library, name):
    """numba-cuda loads its code as a CUDA library; on xcc the handle is a module's."""
    return _xcc.cuModuleGetGlobal(library, name)


def cuLibraryUnload(library):
    return _xcc.cuModuleUnload(library)


_STICKY = (_R.CUDA_ERROR_ILLEGAL_ADDRESS, _R.CUDA_ERROR_LAUNCH_FAILED)
# Calls that succeed after a kernel fault (the context's sticky error), with these values: frees (the
# resource goes with the context; also once the context is gone) and the context's device.  numba-cuda
# resets a faulted context (``cuda.close()``) by popping it and freeing everything, and frees from
# finalizers after that; it would otherwise stop at the first call.
_AFTER_FAULT = {"cuMemFree": (), "cuStreamDestroy": (), "cuEventDestroy": (), "cuLibraryUnload": (),
                "cuModuleUnload": (), "cuCtxGetDevice": (_xcc.CUdevice(0),)}
_RELEASES = ("cuMemFree", "cuStreamDestroy", "cuEventDestroy", "cuLibraryUnload", "cuModuleUnload")


def _survives_fault(fn, values: tuple):
    """``fn`` succeeding after a kernel fault, and (a free) with no current context: numba-cuda resets
    by popping its contexts, freeing, and destroying them."""

    @functools.wraps(fn)
    def call(*args):
        out = fn(*args)
        if fn.__name__ in _RELEASES and int(out[0]) == _R.CUDA_ERROR_INVALID_CONTEXT:
            return (_R.CUDA_SUCCESS,)  # freed after the contexts were popped, to be destroyed
        return (_R.CUDA_SUCCESS, *values) if int(out[0]) in _STICKY else out

    return call


def cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(func, blockSize, dynamicSMemSize, flags):
    """As without flags (the only flag, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE, changes nothing here)."""
    return _xcc.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, blockSize, dynamicSMemSize)


def _tuning_only(*args):
    """Cache configuration, shared-memory carveout, profiler control: nothing to do on xcc."""
    return _ok()


_EXTRAS = {
    "cuDevicePrimaryCtxReset": cuDevicePrimaryCtxReset,
    "cuMemGetInfo": cuMemGetInfo,
    "cuMemGetAddressRange": cuMemGetAddressRange,
    "cuLibraryGetGlobal": cuLibraryGetGlobal,
    "cuLibraryUnload": cuLibraryUnload,
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
    "cuKernelSetCacheConfig": _tuning_only,
    "cuKernelSetAttribute": _tuning_only,
    "cuProfilerStart": _tuning_only,
    "cuProfilerStop": _tuning_only,
}


def _unsupported(name: str):
    def call(*args):
        return (Failure(_R.CUDA_ERROR_NOT_SUPPORTED, f"{name} is not provided by xcc's driver"), None)

    call.__name__ = name
    return call


class Binding:
    """The module-like object numba-cuda's driver calls (resolution order: see the module docstring)."""

    __name__ = "xcc.numba.binding"

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if hasattr(_xcc, name):
            value = getattr(_xcc, name)
            value = _diagnosed(value) if name.startswith("cu") and callable(value) else value
        elif name in _EXTRAS:
            value = _diagnosed(_EXTRAS[name])
        elif hasattr(_cuda_bindings, name) and not name.startswith("cu"):
            value = getattr(_cuda_bindings, name)
        elif name.startswith("cu"):
            value = _unsupported(name)
        else:
            raise AttributeError(f"xcc's driver binding has no '{name}'")
        if name in _AFTER_FAULT:
            value = _survives_fault(value, _AFTER_FAULT[name])
        setattr(self, name, value)
        return value


BINDING = Binding()
