"""The driver API numba-cuda sees on xcc: ``cuda.bindings.driver`` as :mod:`xcc.runtime.driver` provides it.

numba-cuda's ``Driver`` calls every CUDA driver function through one module object (``binding`` in
``numba.cuda.cudadrv.driver``) and expects cuda-python's convention: a tuple whose first item is a
``CUresult``.  :data:`BINDING` stands in for that module.  A name resolves, in order, to

1. :mod:`xcc.runtime.driver` (the cuda-python-compatible driver over the emulated xg1 device);
2. the few driver calls numba-cuda needs that are defined here: primary contexts
   (``cuDevicePrimaryCtxRetain/Release/Reset``: one context per device, created on first retain),
   ``cuMemGetInfo``, ``cuMemGetAddressRange``, ``cuPointerGetAttribute`` (device pointer),
   ``cuLibraryGetGlobal`` and ``cuLibraryUnload`` (numba's libraries are xcc modules), occupancy with flags, and the calls
   that only tune a GPU (cache configuration, carveout, profiler start/stop), which succeed and do
   nothing;
3. a type or constant of the real ``cuda.bindings.driver`` (enums numba only passes along);
4. any other ``cu*`` function: a stand-in returning ``CUDA_ERROR_NOT_SUPPORTED``, so numba raises its
   usual ``CudaAPIError`` naming the call.

A failing call's ``CUresult`` carries xcc's diagnostic: its ``name`` (which numba-cuda puts in the
``CudaAPIError`` message) is the CUDA error name followed by the located xcc message, e.g.
``CUDA_ERROR_ILLEGAL_ADDRESS (xcc: kernel '...' line 42: out-of-bounds store ...)``.
"""

from __future__ import annotations

import functools
import threading

from cuda.bindings import driver as _cuda_bindings

from xcc.runtime import driver as _xcc

_R = _xcc.CUresult
_GIB = 1 << 30
TOTAL_MEMORY = 80 * _GIB  # reported by cuMemGetInfo: an H100's HBM (xg1 models an H100-class part)


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

_lock = threading.Lock()
_primary: dict[int, object] = {}  # device ordinal -> CUcontext of its primary context


def _ok(*values):
    return (_R.CUDA_SUCCESS, *values)


def cuDevicePrimaryCtxRetain(dev):
    """The device's primary context (created, not made current, on the first retain)."""
    d = int(dev)
    with _lock:
        if d not in _primary:
            err, ctx = _xcc.cuCtxCreate(None, 0, d)
            if err:
                return err, None
            _xcc.cuCtxPopCurrent()
            _primary[d] = ctx
    return _ok(_primary[d])


def cuDevicePrimaryCtxRelease(dev):
    """Numba releases on device reset; the context lives until :func:`cuDevicePrimaryCtxReset`."""
    return _ok()


def cuDevicePrimaryCtxReset(dev):
    """Destroy the primary context and all its memory, modules and streams."""
    with _lock:
        ctx = _primary.pop(int(dev), None)
    if ctx is not None:
        err, = _xcc.cuCtxDestroy(ctx)
        if err:
            return (err,)
    return _ok()


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


def cuPointerGetAttribute(attribute, ptr):
    """Only ``CU_POINTER_ATTRIBUTE_DEVICE_POINTER``: one address space, so the pointer itself."""
    if int(attribute) != int(_cuda_bindings.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER):
        return _R.CUDA_ERROR_NOT_SUPPORTED, None
    return _ok(_xcc.CUdeviceptr(int(ptr)))


def cuLibraryGetGlobal(library, name):
    """numba-cuda loads its code as a CUDA library; on xcc the handle is a module's."""
    return _xcc.cuModuleGetGlobal(library, name)


def cuLibraryUnload(library):
    return _xcc.cuModuleUnload(library)


def cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(func, blockSize, dynamicSMemSize, flags):
    """As without flags (the only flag, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE, changes nothing here)."""
    return _xcc.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, blockSize, dynamicSMemSize)


def _tuning_only(*args):
    """Cache configuration, shared-memory carveout, profiler control: nothing to do on xcc."""
    return _ok()


_EXTRAS = {
    "cuDevicePrimaryCtxRetain": cuDevicePrimaryCtxRetain,
    "cuDevicePrimaryCtxRelease": cuDevicePrimaryCtxRelease,
    "cuDevicePrimaryCtxReset": cuDevicePrimaryCtxReset,
    "cuMemGetInfo": cuMemGetInfo,
    "cuMemGetAddressRange": cuMemGetAddressRange,
    "cuPointerGetAttribute": cuPointerGetAttribute,
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
        setattr(self, name, value)
        return value


BINDING = Binding()
