"""The types of :mod:`xcc.runtime.driver`: cuda-python's enums and handle classes.

Enum members carry CUDA's own numbers (``cuda.h``), so code that compares
results with integers, or prints ``err.value``, behaves as with
``cuda.bindings.driver``.  ``CUresult``, ``CUdevice_attribute``, ``CUfunction_attribute``,
``CUgraphNodeType``, ``CUpointer_attribute``, ``CUmemorytype`` and ``CUmemAttach_flags`` are complete
(:mod:`xcc.runtime.driver_enums`); the other enums list the members xcc implements.

Handles (``CUcontext``, ``CUmodule``, ...) are, as in cuda-python, small
objects around one 64-bit value: ``int(h)`` is the value and ``h.getPtr()``
the host address where it is stored (which is what a ``None`` type in the
``(values, types)`` form of ``cuLaunchKernel``'s ``kernelParams`` reads).
"""

from __future__ import annotations

import ctypes
from enum import IntEnum

from xcc.runtime.driver_enums import (  # noqa: F401 - re-exported
    CUdevice_attribute,
    CUfunction_attribute,
    CUgraphNodeType,
    CUmemAttach_flags,
    CUmemorytype,
    CUpointer_attribute,
    CUresult,
)

ERROR_STRINGS = {  # cuGetErrorString's texts, as the CUDA driver words them
    CUresult.CUDA_SUCCESS: "no error",
    CUresult.CUDA_ERROR_INVALID_VALUE: "invalid argument",
    CUresult.CUDA_ERROR_OUT_OF_MEMORY: "out of memory",
    CUresult.CUDA_ERROR_NOT_INITIALIZED: "initialization error",
    CUresult.CUDA_ERROR_DEINITIALIZED: "driver shutting down",
    CUresult.CUDA_ERROR_NO_DEVICE: "no CUDA-capable device is detected",
    CUresult.CUDA_ERROR_INVALID_DEVICE: "invalid device ordinal",
    CUresult.CUDA_ERROR_INVALID_IMAGE: "device kernel image is invalid",
    CUresult.CUDA_ERROR_INVALID_CONTEXT: "invalid device context",
    CUresult.CUDA_ERROR_INVALID_PTX: "a PTX JIT compilation failed",
    CUresult.CUDA_ERROR_FILE_NOT_FOUND: "file not found",
    CUresult.CUDA_ERROR_INVALID_HANDLE: "invalid resource handle",
    CUresult.CUDA_ERROR_NOT_FOUND: "named symbol not found",
    CUresult.CUDA_ERROR_NOT_READY: "device not ready",
    CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: "an illegal memory access was encountered",
    CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: "too many resources requested for launch",
    CUresult.CUDA_ERROR_LAUNCH_FAILED: "unspecified launch failure",
    CUresult.CUDA_ERROR_NOT_SUPPORTED: "operation not supported",
    CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: "operation not permitted when stream is capturing",
    CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: "operation failed due to a previous error during capture",
    CUresult.CUDA_ERROR_STREAM_CAPTURE_UNJOINED: "capture was not joined with the origin stream",
    CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: "operation would make the legacy stream depend on a capturing "
                                                 "blocking stream",
    CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: "too many blocks in cooperative launch",
    CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE: "operation not supported on global/shared address space",
    CUresult.CUDA_ERROR_UNKNOWN: "unknown error",
}






def error_string(code: CUresult) -> str:
    """cuGetErrorString's text: the driver's wording where :data:`ERROR_STRINGS` has it, else the
    code's name in words (``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`` -> "cooperative launch too large")."""
    text = ERROR_STRINGS.get(code)
    return text if text is not None else code.name.removeprefix("CUDA_ERROR_").replace("_", " ").lower()


class CUjit_option(IntEnum):
    CU_JIT_MAX_REGISTERS = 0
    CU_JIT_THREADS_PER_BLOCK = 1
    CU_JIT_WALL_TIME = 2
    CU_JIT_INFO_LOG_BUFFER = 3
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
    CU_JIT_ERROR_LOG_BUFFER = 5
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
    CU_JIT_OPTIMIZATION_LEVEL = 7
    CU_JIT_TARGET_FROM_CUCONTEXT = 8
    CU_JIT_TARGET = 9
    CU_JIT_FALLBACK_STRATEGY = 10
    CU_JIT_GENERATE_DEBUG_INFO = 11
    CU_JIT_LOG_VERBOSE = 12
    CU_JIT_GENERATE_LINE_INFO = 13
    CU_JIT_CACHE_MODE = 14


class CUjitInputType(IntEnum):
    CU_JIT_INPUT_CUBIN = 0
    CU_JIT_INPUT_PTX = 1
    CU_JIT_INPUT_FATBINARY = 2
    CU_JIT_INPUT_OBJECT = 3
    CU_JIT_INPUT_LIBRARY = 4


class CUctx_flags(IntEnum):
    CU_CTX_SCHED_AUTO = 0
    CU_CTX_SCHED_SPIN = 1
    CU_CTX_SCHED_YIELD = 2
    CU_CTX_SCHED_BLOCKING_SYNC = 4
    CU_CTX_MAP_HOST = 8
    CU_CTX_LMEM_RESIZE_TO_MAX = 16


class CUstream_flags(IntEnum):
    CU_STREAM_DEFAULT = 0
    CU_STREAM_NON_BLOCKING = 1


class CUstreamCaptureStatus(IntEnum):
    CU_STREAM_CAPTURE_STATUS_NONE = 0
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2


class CUstreamCaptureMode(IntEnum):
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2




class CUevent_flags(IntEnum):
    CU_EVENT_DEFAULT = 0
    CU_EVENT_BLOCKING_SYNC = 1
    CU_EVENT_DISABLE_TIMING = 2
    CU_EVENT_INTERPROCESS = 4


class _Handle:
    """One 64-bit value kept in host memory (so that ``getPtr()`` has an address to give)."""

    def __init__(self, init_value=0):
        self._c = ctypes.c_uint64(int(init_value or 0))

    def __int__(self) -> int:
        return self._c.value

    def getPtr(self) -> int:
        return ctypes.addressof(self._c)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and int(other) == int(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, int(self)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {int(self):#x}>"


class _IntHandle(_Handle):
    """A handle that is a number (device ordinal, device address): usable wherever an int is."""

    def __index__(self) -> int:
        return int(self)


class CUdevice(_IntHandle):
    pass


class CUdeviceptr(_IntHandle):
    pass


class cuuint64_t(_IntHandle):
    """cuda-python's wrapper of a C ``cuuint64_t`` value (pool attributes take one)."""


class cuuint32_t(_IntHandle):
    pass


class CUcontext(_Handle):
    pass


class CUmodule(_Handle):
    pass


class CUfunction(_Handle):
    pass


class CUstream(_Handle):
    pass


class CUevent(_Handle):
    pass


class CUlinkState(_Handle):
    pass


class CUgraph(_Handle):
    pass


class CUgraphExec(_Handle):
    pass


class CUgraphNode(_Handle):
    pass


class CUhostFn(_IntHandle):
    """A host function's address (``void (*)(void *userData)``), for host nodes."""


class CUmemoryPool(_Handle):
    pass


CU_MEMHOSTALLOC_PORTABLE = 1
CU_MEMHOSTALLOC_DEVICEMAP = 2
CU_MEMHOSTALLOC_WRITECOMBINED = 4

CU_STREAM_LEGACY = CUstream(1)
CU_STREAM_PER_THREAD = CUstream(2)
