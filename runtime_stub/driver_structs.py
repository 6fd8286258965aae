"""cuda-python's parameter structs for graph nodes and 3D copies: ``CUDA_KERNEL_NODE_PARAMS``,
``CUDA_MEMCPY3D``, ``CUDA_MEMSET_NODE_PARAMS``, ``CUDA_HOST_NODE_PARAMS``.

As in ``cuda.bindings.driver``, a struct is created empty (every field 0 or None) and filled by
attribute assignment; integer fields convert as cuda-python's do (a float is truncated, a negative or
too large value raises ``OverflowError``, a non-number ``TypeError``), and assigning a field the struct
does not have raises ``AttributeError``.  Pointer fields (``srcHost``, ``dstHost``, ``kernelParams``,
``extra``, ``fn``, ``userData``) keep what they are given; the driver reads them when the struct is used.
"""

from __future__ import annotations

from xcc.runtime.driver_core import as_uint


class _Struct:
    """Fields: ``_uint`` maps integer fields to their width in bits; ``_any`` lists the others."""

    _uint: dict[str, int] = {}
    _any: tuple[str, ...] = ()

    def __init__(self, _ptr=0):
        for name in self._uint:
            object.__setattr__(self, name, 0)
        for name in self._any:
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        if name in self._uint:
            value = as_uint(value, name, self._uint[name])
        elif name not in self._any:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        object.__setattr__(self, name, value)

    def copy(self):
        """A field-by-field copy (the driver keeps a copy of a node's parameters, as CUDA does)."""
        other = type(self)()
        for name in (*self._uint, *self._any):
            object.__setattr__(other, name, getattr(self, name))
        return other

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in (*self._uint, *self._any))
        return f"{type(self).__name__}({fields})"


class CUDA_KERNEL_NODE_PARAMS(_Struct):
    """A kernel node: ``func`` (a ``CUfunction``), grid and block dimensions, dynamic shared memory,
    ``kernelParams`` in any form ``cuLaunchKernel`` takes, ``extra`` (None or 0)."""

    _uint = {"gridDimX": 32, "gridDimY": 32, "gridDimZ": 32, "blockDimX": 32, "blockDimY": 32, "blockDimZ": 32,
             "sharedMemBytes": 32}
    _any = ("func", "kernelParams", "extra", "kern", "ctx")


class CUDA_MEMCPY3D(_Struct):
    """A 3D copy: each side is ``*MemoryType`` (a ``CUmemorytype``), its address (``*Host`` or
    ``*Device``), origin (``*XInBytes``, ``*Y``, ``*Z``) and layout (``*Pitch``, ``*Height``); the copy is
    ``WidthInBytes`` x ``Height`` x ``Depth``.  CUDA arrays (``*Array``) are not supported."""

    _uint = {f"{side}{f}": 64 for side in ("src", "dst")
             for f in ("XInBytes", "Y", "Z", "LOD", "Pitch", "Height")} | {
        "srcMemoryType": 32, "dstMemoryType": 32, "WidthInBytes": 64, "Height": 64, "Depth": 64}
    _any = ("srcHost", "srcDevice", "srcArray", "dstHost", "dstDevice", "dstArray")


class CUDA_MEMSET_NODE_PARAMS(_Struct):
    """A memset node: ``height`` rows of ``width`` elements of ``elementSize`` (1, 2 or 4) bytes set to
    ``value``, rows ``pitch`` bytes apart, from device address ``dst``."""

    _uint = {"pitch": 64, "value": 32, "elementSize": 32, "width": 64, "height": 64}
    _any = ("dst",)


class CUDA_HOST_NODE_PARAMS(_Struct):
    """A host node: ``fn`` (a ``CUhostFn``: the address of a ``void (*)(void *)``, or a ctypes function) called
    with ``userData`` (a pointer) each time the graph runs."""

    _any = ("fn", "userData")
