"""Host memory that kernels read and write: the emulated device's view of page-locked, mapped and
managed allocations (``cuMemHostAlloc``, ``cuMemAllocHost``, ``cuMemAllocManaged``).

A :class:`HostBuffer` is a numpy array in this process; under unified addressing its device address
is its host address (as with CUDA's UVA, where ``cuMemHostGetDevicePointer`` returns the host pointer
and a managed pointer is dereferenced directly by host code), so ``(ctypes.c_int * n).from_address(p)``
on the host and ``p`` in a kernel name the same bytes.  :data:`HOST_BUFFERS` holds every live buffer of
the process: they are visible to every context (as ``CU_MEMHOSTALLOC_PORTABLE`` memory is).

:class:`MappedGlobalMemory` is a context's device memory: the emulator's
:class:`~xcc.sim.memory.GlobalMemory`, with every access (a kernel's loads, stores and atomics, and the
driver's copies and memsets) that falls in a host buffer served from that buffer.  Kernels run
synchronously, so a host thread never sees a kernel's accesses half done; system-scope atomics are
as atomic as device-scope ones.  A host buffer whose address would fall inside the device's own
address range or the shared/local/const windows of the generic address space is allocated again
elsewhere.
"""

from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass

import numpy as np

from xcc.sim.memory import (  # one implementation each
    GLOBAL_BASE,
    WINDOW_BYTES,
    WINDOWS,
    GlobalMemory,
    MemoryFault,
    _atomic_core,
    _gather,
    _raw_bytes,
    _scatter,
    check_window,
)

_DEVICE_SPAN = 1 << 36  # the device's own global addresses: [base, base + 64 GiB)
_TRIES = 64
_RESERVED = [(GLOBAL_BASE, GLOBAL_BASE + _DEVICE_SPAN),  # device memory, and the shared/local/const windows
             (min(WINDOWS.values()), max(WINDOWS.values()) + WINDOW_BYTES)]


@dataclass
class HostBuffer:
    """``nbytes`` bytes of host memory at ``address`` (``array``'s data), of kind ``'host'``
    (cuMemHostAlloc / cuMemAllocHost), ``'managed'`` (cuMemAllocManaged) or ``'registered'`` (the
    caller's memory, cuMemHostRegister)."""

    array: np.ndarray
    nbytes: int
    kind: str
    flags: int

    @property
    def address(self) -> int:
        return int(self.array.ctypes.data)


class HostBuffers:
    """The live host buffers of the process, by address."""

    def __init__(self):
        self._starts: list[int] = []
        self._by_start: dict[int, HostBuffer] = {}

    def allocate(self, nbytes: int, kind: str, flags: int = 0) -> HostBuffer:
        """A zeroed, 256-byte aligned buffer outside the device's own address range."""
        held = []
        for _ in range(_TRIES):
            raw = np.zeros(max(nbytes, 1) + 256, np.uint8)
            off = -raw.ctypes.data % 256
            arr = raw[off:off + max(nbytes, 1)]
            addr = int(arr.ctypes.data)
            if not any(lo - nbytes < addr < hi for lo, hi in _RESERVED):
                break
            held.append(raw)  # keep it so that the next allocation lands elsewhere
        else:
            raise MemoryError(f"no host memory for {nbytes} bytes outside the device's address ranges")
        return self._add(HostBuffer(arr, nbytes, kind, flags))

    def register(self, address: int, nbytes: int, flags: int = 0) -> HostBuffer:
        """Make the caller's ``nbytes`` bytes at ``address`` a buffer (kind ``'registered'``): ValueError
        if they overlap a buffer, MemoryError if they lie in the device's address ranges."""
        if any(lo - nbytes < address < hi for lo, hi in _RESERVED):
            raise MemoryError(f"host memory at {address:#x} lies in the device's address ranges")
        i = bisect.bisect_left(self._starts, address)
        near = [self._by_start[self._starts[j]] for j in (i - 1, i) if 0 <= j < len(self._starts)]
        if any(b.address < address + nbytes and address < b.address + b.nbytes for b in near):
            raise ValueError(f"{address:#x} ({nbytes} bytes) overlaps host memory already registered or allocated")
        arr = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
        return self._add(HostBuffer(arr, nbytes, "registered", flags))

    def _add(self, buf: HostBuffer) -> HostBuffer:
        bisect.insort(self._starts, buf.address)
        self._by_start[buf.address] = buf
        return buf

    def free(self, address: int) -> HostBuffer | None:
        """Remove the buffer that starts at ``address``; None if there is none."""
        buf = self._by_start.pop(int(address), None)
        if buf is not None:
            self._starts.remove(int(address))
        return buf

    def find(self, address: int) -> HostBuffer | None:
        """The buffer holding ``address``, if any."""
        i = bisect.bisect_right(self._starts, int(address)) - 1
        if i >= 0:
            buf = self._by_start[self._starts[i]]
            if address < buf.address + max(buf.nbytes, 1):
                return buf
        return None

    def describe(self, address: int) -> str:
        """Where ``address`` lies relative to the host buffers, for fault messages."""
        i = bisect.bisect_right(self._starts, int(address)) - 1
        if i >= 0:
            buf = self._by_start[self._starts[i]]
            return (f"{address - buf.address - buf.nbytes} bytes past the end of host buffer {buf.address:#x} "
                    f"({buf.nbytes} bytes)")
        return "outside device memory and every host buffer"

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __iter__(self):
        return iter(list(self._by_start.values()))


HOST_BUFFERS = HostBuffers()


class MappedGlobalMemory(GlobalMemory):
    """Device global memory in which the process's host buffers appear at their host addresses."""

    def __init__(self, host: HostBuffers = HOST_BUFFERS, **kwargs):
        super().__init__(**kwargs)
        self.host = host

    # -- device access: split an access between device memory and host buffers ---------------------

    def _split(self, addresses, width: int):
        """None when every address is device memory; else ``[(positions, buffer or None)]``.  An address
        outside device memory and every host buffer faults here, described by the nearest host buffer."""
        if not self.host:
            return None
        a = np.asarray(addresses, np.uint64).reshape(-1)
        outside = (a < np.uint64(self.base)) | (a >= np.uint64(self.base + _DEVICE_SPAN))  # windows: never here
        if not outside.any():
            return None
        parts = []
        inside = np.flatnonzero(~outside)
        if inside.size:
            parts.append((inside, None))
        rest = np.flatnonzero(outside)
        while rest.size:
            buf = self.host.find(int(a[rest[0]]))
            if buf is None:
                raise MemoryFault("out-of-bounds", a[rest], int(rest[0]), width=width,
                                  detail=f"address is {self.host.describe(int(a[rest[0]]))}")
            lo, hi = buf.address, buf.address + buf.nbytes
            mine = (a[rest] >= np.uint64(lo)) & (a[rest] < np.uint64(hi))
            parts.append((rest[mine], buf))
            rest = rest[~mine]
        return parts

    @staticmethod
    def _offsets(buf: HostBuffer, a: np.ndarray, width: int) -> np.ndarray:
        rel = (a.astype(np.uint64) - np.uint64(buf.address)).astype(np.int64)
        check_window(rel, buf.nbytes, width, "global", f"host buffer {buf.address:#x} ({buf.nbytes} bytes)")
        return rel

    def _each(self, addresses, width: int, device_op, host_op):
        parts = self._split(addresses, width)
        if parts is None:
            return device_op(addresses)
        a = np.asarray(addresses, np.uint64).reshape(-1)
        out = None
        for pos, buf in parts:
            try:
                r = device_op(a[pos], pos) if buf is None else host_op(buf, self._offsets(buf, a[pos], width), pos)
            except MemoryFault as f:
                if f.thread is not None:
                    f.thread = int(pos[f.thread])
                raise
            if r is not None:
                if out is None:
                    out = np.zeros((a.size,) + r.shape[1:], r.dtype)
                out[pos] = r
        return out

    @staticmethod
    def _take(values, pos, n: int):
        v = np.asarray(values)
        return v[pos] if v.ndim and v.shape[0] == n else v

    def load(self, addresses, width: int) -> np.ndarray:
        return self._each(addresses, width, lambda a, pos=None: super(MappedGlobalMemory, self).load(a, width),
                          lambda buf, off, pos: _gather(buf.array, off, width))

    def store(self, addresses, values, width: int) -> None:
        n = np.asarray(addresses).size

        def dev(a, pos=None):
            v = values if pos is None else self._take(values, pos, n)
            return super(MappedGlobalMemory, self).store(a, v, width)

        self._each(addresses, width, dev, lambda buf, off, pos: _scatter(buf.array, off, self._take(values, pos, n),
                                                                          width))

    def atomic(self, op: str, addresses, values, width: int, kind: str, compare=None) -> np.ndarray:
        n = np.asarray(addresses).size

        def pick(x, pos):
            return x if x is None or pos is None else self._take(x, pos, n)

        def dev(a, pos=None):
            return super(MappedGlobalMemory, self).atomic(op, a, pick(values, pos), width, kind, pick(compare, pos))

        def host(buf, off, pos):
            return _atomic_core(buf.array, off, op, pick(values, pos), width, kind, pick(compare, pos))

        return self._each(addresses, width, dev, host)

    # -- host access (the driver's copies and memsets) ------------------------------------------

    def _host_span(self, addr: int, nbytes: int) -> np.ndarray | None:
        """The bytes ``[addr, addr+nbytes)`` of a host buffer (a view), or None if ``addr`` is not in one."""
        buf = self.host.find(int(addr)) if self.host else None
        if buf is None:
            return None
        off = int(addr) - buf.address
        if nbytes < 0 or off + nbytes > buf.nbytes:
            raise MemoryFault("out-of-bounds", [int(addr)], None,
                              detail=f"{nbytes}-byte copy at offset {off} of host buffer {buf.address:#x} "
                                     f"({buf.nbytes} bytes)")
        return buf.array[off:off + nbytes]

    def write(self, addr: int, data) -> None:
        raw = _raw_bytes(data)
        span = self._host_span(addr, raw.size)
        if span is None:
            return super().write(addr, raw)
        span[:] = raw

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        span = self._host_span(addr, nbytes)
        return super().read(addr, nbytes) if span is None else span.copy()

    def memset(self, addr: int, byte: int, nbytes: int) -> None:
        span = self._host_span(addr, nbytes)
        if span is None:
            return super().memset(addr, byte, nbytes)
        span[:] = byte & 0xFF

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        if self._host_span(dst, nbytes) is None and self._host_span(src, nbytes) is None:
            return super().copy(dst, src, nbytes)
        self.write(dst, self.read(src, nbytes))
