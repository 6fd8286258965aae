"""The emulated device and its memory: a CUDA-driver-like view of one xg1 GPU.

Device arrays carry 64-bit device addresses (``int(arr)`` or ``arr.ptr``);
host<->device copies go through numpy.  One default device per process.
"""

from __future__ import annotations

import time
import weakref
from contextlib import contextmanager

import numpy as np

from xcc.backend.machine import Machine, load_machine
from xcc.diagnostics import LaunchError
from xcc.runtime import timeline
from xcc.sim.memory import GlobalMemory, MemoryFault


class Device:
    def __init__(self, machine: str | Machine = "xg1"):
        self.machine = machine if isinstance(machine, Machine) else load_machine(machine)
        self.memory = GlobalMemory()
        self._streams: list[weakref.ref] = []  # the device's streams (xcc.runtime.queues), weakly

    @property
    def streams(self) -> _StreamList:
        return _StreamList(self._streams)

    def synchronize(self) -> None:
        """Run all work enqueued on the device's streams (cudaDeviceSynchronize)."""
        with timeline.call("cuCtxSynchronize", "Device.synchronize"):
            for s in self.streams:
                s.synchronize()
            tl = timeline.active()
            if tl is not None:
                tl.wait(max([0] + [st.ready for st in tl.states(self)]))

    @property
    def name(self) -> str:
        return f"xcc emulated {self.machine.name}"

    def alloc(self, nbytes: int) -> int:
        with timeline.call("cuMemAlloc", "Device.alloc"):
            return self.memory.alloc(max(int(nbytes), 1))


class _StreamList:
    """The live streams of a device, in creation order; ``append`` keeps a weak reference."""

    def __init__(self, refs: list):
        refs[:] = [r for r in refs if r() is not None]
        self._refs = refs

    def append(self, stream) -> None:
        self._refs.append(weakref.ref(stream))

    def __iter__(self):
        return iter([s for s in (r() for r in list(self._refs)) if s is not None])


class DeviceArray:
    """A typed buffer in device global memory."""

    def __init__(self, device: Device, shape, dtype, ptr: int | None = None):
        self.device = device
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, tuple | list) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.ptr = ptr if ptr is not None else device.alloc(self.nbytes)

    def __int__(self) -> int:
        return self.ptr

    def data_ptr(self) -> int:
        """The device address, under the name tensor libraries use (``torch.Tensor.data_ptr``): Triton
        launches accept an object with ``data_ptr()`` and ``dtype`` wherever a kernel takes a pointer."""
        return self.ptr

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def copy_from_host(self, a: np.ndarray) -> DeviceArray:
        """A copy on the default stream: after the work of every blocking stream."""
        with timeline.call("cuMemcpyHtoD", "DeviceArray.copy_from_host"):
            sync_blocking(self.device)
            a = np.ascontiguousarray(a)
            if a.nbytes != self.nbytes:
                raise LaunchError(f"copy of {a.nbytes} bytes into a device array of {self.nbytes} bytes")
            with _default_stream_op(self.device, "HtoD", a.nbytes, sync=True):
                self.device.memory.write(self.ptr, a.view(np.uint8).reshape(-1))
        return self

    def copy_to_host(self) -> np.ndarray:
        """A copy on the default stream: after the work of every blocking stream."""
        with timeline.call("cuMemcpyDtoH", "DeviceArray.copy_to_host"):
            sync_blocking(self.device)
            with _default_stream_op(self.device, "DtoH", self.nbytes, sync=True):
                raw = self.device.memory.read(self.ptr, self.nbytes)
        return np.frombuffer(raw.tobytes(), dtype=self.dtype).reshape(self.shape).copy()

    def free(self) -> None:
        with timeline.call("cuMemFree", "DeviceArray.free"):
            try:
                self.device.memory.free(self.ptr)
            except MemoryFault as e:
                raise LaunchError(str(e)) from None

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"


@contextmanager
def _default_stream_op(device, kind: str, nbytes: int, sync: bool):
    """On a timeline: the copy or memset in the ``with`` block on ``device``'s default stream."""
    tl = timeline.active()
    t0 = time.perf_counter_ns()
    yield
    if tl is not None:
        tl.copy(tl.place(timeline.py_stream(tl, None, device)), kind, nbytes, device.machine,
                time.perf_counter_ns() - t0, sync)


def sync_blocking(device) -> None:
    """What the legacy default stream waits for: the work of every blocking stream of ``device``
    (its streams: :mod:`xcc.runtime.queues`)."""
    for s in list(getattr(device, "streams", ())):
        if not s.non_blocking and s._queue:
            s.synchronize()


_default: Device | None = None


def default_device() -> Device:
    global _default
    if _default is None:
        _default = Device()
    return _default


def set_device(device: Device) -> None:
    global _default
    _default = device


def to_device(a: np.ndarray, device: Device | None = None) -> DeviceArray:
    a = np.ascontiguousarray(a)
    return DeviceArray(device or default_device(), a.shape, a.dtype).copy_from_host(a)


def empty(shape, dtype=np.float32, device: Device | None = None) -> DeviceArray:
    return DeviceArray(device or default_device(), shape, dtype)


def zeros(shape, dtype=np.float32, device: Device | None = None) -> DeviceArray:
    arr = empty(shape, dtype, device)
    with timeline.call("cuMemsetD8", "rt.zeros"):
        sync_blocking(arr.device)
        with _default_stream_op(arr.device, "memset", arr.nbytes, sync=False):
            arr.device.memory.memset(arr.ptr, 0, arr.nbytes)
    return arr
