"""The device-side ``cuda.core`` objects numba-cuda uses, over xcc's driver: the device (compute
capability, primary context, memory), streams, and views of host arrays.

numba-cuda 0.30 takes these from ``cuda.core`` 1.x; the classes here have the same shape and call the
driver through numba-cuda's own ``driver`` object, so a failure is numba's ``CudaAPIError`` carrying
xcc's diagnostic (:mod:`xcc.numba.binding`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np
from cuda.core import Buffer
from cuda.core import MemoryResource as _CoreMemoryResource
from cuda.core.utils import StridedMemoryView

from xcc.numba.binding import BINDING, numba_driver
from xcc.runtime import driver as _xcc


class _Context:
    def __init__(self, handle):
        self.handle = handle


class MemoryResource(_CoreMemoryResource):
    """Device memory as ``cuda.core.Buffer`` objects (numba-cuda copies a host array argument into one):
    ``cuMemAlloc`` in the current context, ``cuMemFree`` when cuda.core drops the buffer.

    It reports itself host-accessible and not device-accessible: for a device-accessible resource
    cuda.core records a stream token (and reads pointer attributes) through the real libcuda, which
    is absent; numba-cuda only reads the buffer's address, shape and strides.
    """

    def __init__(self, device_id: int = 0):
        self._device_id = device_id

    def allocate(self, size, stream=None):
        return Buffer.from_handle(int(numba_driver().cuMemAlloc(int(size))), int(size), mr=self)

    def deallocate(self, ptr, size, stream=None):
        BINDING.cuMemFree(int(ptr))  # a context already reset has freed it: nothing to report

    @property
    def is_device_accessible(self) -> bool:
        return False

    @property
    def is_host_accessible(self) -> bool:
        return True

    @property
    def is_managed(self) -> bool:
        return False

    @property
    def device_id(self) -> int:
        return self._device_id


class Device:
    """``cuda.core.Device``: ordinal, compute capability and name from the driver; the primary context."""

    def __init__(self, device_id: int = 0):
        drv, A = numba_driver(), _xcc.CUdevice_attribute
        self.device_id = int(device_id)
        major = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device_id)
        minor = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device_id)
        self.compute_capability = (int(major), int(minor))
        name = drv.cuDeviceGetName(64, self.device_id)
        self.name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
        self.uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"xcc:{self.name}:{self.device_id}"))
        self.memory_resource = MemoryResource(self.device_id)

    def allocate(self, size: int, stream=None):
        return self.memory_resource.allocate(size, stream)

    @property
    def context(self) -> _Context:
        """The primary context (a new one after ``cuDevicePrimaryCtxReset``, e.g. ``cuda.close()``)."""
        return _Context(numba_driver().cuDevicePrimaryCtxRetain(self.device_id))

    def set_current(self) -> None:
        """Make the primary context current (pushed, unless it already is)."""
        drv, ctx = numba_driver(), self.context.handle
        if int(drv.cuCtxGetCurrent()) != int(ctx):
            drv.cuCtxPushCurrent(ctx)

    def sync(self) -> None:
        numba_driver().cuCtxSynchronize()


class Stream:
    """``cuda.core.Stream``: a stream handle (0 is the default stream)."""

    def __init__(self, handle=0):
        self.handle = int(handle or 0)

    @classmethod
    def from_handle(cls, handle) -> Stream:
        return cls(handle)

    def __cuda_stream__(self):
        return (0, self.handle)

    def sync(self) -> None:
        numba_driver().cuStreamSynchronize(self.handle)


def native_handle(h) -> int:
    """``cuda.bindings.utils.get_cuda_native_handle``: a handle's value."""
    return int(h)


@dataclass(frozen=True)
class HostArrayView:
    """A host array as numba-cuda reads a ``StridedMemoryView`` of it: address, shape, strides in items."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def host_memory_view(obj, *, stream_ptr):
    """numba-cuda's ``_make_strided_memory_view``.  A numpy array whose dtype DLPack cannot carry
    (records, datetimes, bytes) is described directly: cuda.core's array-interface path asks libcuda
    for the current device.  Anything else goes through cuda.core, as in numba-cuda."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "VMmSU":
        item = obj.dtype.itemsize
        if any(s % item for s in obj.strides):
            raise ValueError(f"array of {obj.dtype} with strides {obj.strides} not a multiple of its item size")
        return HostArrayView(obj.ctypes.data, obj.shape, tuple(s // item for s in obj.strides), obj.dtype)
    if isinstance(obj, np.generic) and obj.dtype.kind in "VMmSU":
        return host_memory_view(np.asarray(obj), stream_ptr=stream_ptr)
    return StridedMemoryView.from_any_interface(obj, stream_ptr=stream_ptr)
