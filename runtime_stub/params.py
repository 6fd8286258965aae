"""Packing launch arguments into a kernel's parameter buffer, checked against its signature.

Scalars must be numpy scalars whose size matches the parameter (integers for
integer parameters, floats for float ones; nvcc declares C ``int`` as
``.u32``, so signedness is not checked); pointers are device arrays or plain
integer addresses; byte-array parameters take ``bytes`` or a numpy structured
scalar of the exact size (or any numpy scalar of that size: ``np.float16`` for a
``__half`` passed as ``.align 2 .b8 [2]``, ``np.uint32`` for a ``__half2``).
Half-precision parameters (``.f16``, ``.bf16``, ``.f16x2``, ``.bf16x2``) also take
their bit patterns as unsigned integers, and ``.bf16`` an ``ml_dtypes.bfloat16``
(numpy has no bfloat16).
"""

from __future__ import annotations

import numpy as np

from xcc.backend.objfile import KernelImage
from xcc.diagnostics import LaunchError

_HALF = frozenset({"f16", "bf16", "f16x2", "bf16x2"})


def pack_params(kernel: KernelImage, args) -> bytes:
    params = kernel.params
    if len(args) != len(params):
        raise LaunchError(f"kernel '{kernel.name}' takes {len(params)} arguments, got {len(args)}")
    buf = bytearray(kernel.param_bytes)
    for i, (p, a) in enumerate(zip(params, args)):
        buf[p.offset:p.offset + p.size] = _bytes_of(kernel.name, i, p, a)
    return bytes(buf)


def _bytes_of(kernel: str, i: int, p, a) -> bytes:
    where = f"argument {i} ('{p.name}', .{p.type}) of kernel '{kernel}'"
    if isinstance(a, bytes | bytearray):
        if len(a) != p.size:
            raise LaunchError(f"{where}: {len(a)} bytes given, {p.size} expected")
        return bytes(a)
    if hasattr(a, "ptr") and hasattr(a, "device"):  # a DeviceArray
        a = np.uint64(a.ptr)
    elif isinstance(a, int) and not isinstance(a, bool):
        if p.size != 8:
            raise LaunchError(f"{where}: a plain integer is only accepted as a 64-bit address; "
                              f"pass a numpy scalar such as np.int32({a})")
        a = np.uint64(a)
    if isinstance(a, np.void):
        if a.dtype.itemsize != p.size:
            raise LaunchError(f"{where}: structured value of {a.dtype.itemsize} bytes, {p.size} expected")
        return a.tobytes()
    if not isinstance(a, np.generic):
        raise LaunchError(f"{where}: expected a numpy scalar, a device array or bytes, got {type(a).__name__}")
    if a.dtype.itemsize != p.size:
        raise LaunchError(f"{where}: {a.dtype} has {a.dtype.itemsize} bytes, the parameter {p.size}")
    if p.type in _HALF and (a.dtype.kind == "u" or a.dtype.name == "bfloat16" and p.type == "bf16"):
        return a.tobytes()
    is_float = p.type.startswith(("f", "bf"))
    untyped = p.type.startswith("b") and not p.type.startswith("bf")
    if is_float != (a.dtype.kind == "f") and not untyped:
        raise LaunchError(f"{where}: {a.dtype} given for a .{p.type} parameter")
    return a.tobytes()
