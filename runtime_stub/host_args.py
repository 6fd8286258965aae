"""Host memory as cuda-python hands it over: addresses, buffers, module images, ``kernelParams``.

A host pointer is an ``int`` address (``a.ctypes.data``), a ``ctypes.c_void_p``
or any C-contiguous object with the buffer protocol (numpy arrays, ``bytes``,
``bytearray``, ``memoryview``, ctypes arrays).  An address is trusted, as the
CUDA driver trusts it: a wrong one crashes the process.

``cuLaunchKernel``'s ``kernelParams`` comes in the forms cuda-python accepts:

* ``None`` or ``0``: no arguments;
* the address of an array of ``void*``, one per kernel parameter, each
  pointing at the argument's value (``args.ctypes.data`` in NVIDIA's samples,
  where ``args = np.array([a.ctypes.data for a in arrays], dtype=np.uint64)``);
  the numpy array itself, or a ctypes array of pointers, is accepted too;
* ``((values...), (ctypes types...))``: each value converted to its ctypes
  type; a ``None`` type takes a handle such as ``CUdeviceptr`` (its value), a
  ``ctypes.Structure`` (its bytes) or an enum member (a C ``int``).

As on a GPU, a parameter of ``n`` bytes takes the first ``n`` bytes of the value
pointed at (so a ``uint64`` holder for an ``int`` parameter works).  In the
``(values, types)`` form cuda-python puts each value in a zero-filled slot of its
own, so a value narrower than its parameter is zero-extended (a ``c_uint`` for a
``size_t`` parameter, as NVIDIA's simpleCudaGraphs sample passes it).
"""

from __future__ import annotations

import ctypes
import json
import struct
from enum import Enum

import numpy as np

from xcc.diagnostics import ObjectFormatError
from xcc.runtime.driver_core import CudaError
from xcc.runtime.driver_types import CUresult, _Handle

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
_XBIN_PREFIX = struct.Struct("<4sHHQ")  # magic, format major, minor, header length (backend/objfile.py)


def _address(p) -> int | None:
    if isinstance(p, ctypes.c_void_p | ctypes.c_char_p):
        return ctypes.cast(p, ctypes.c_void_p).value or 0
    if isinstance(p, int | np.integer) and not isinstance(p, bool):
        return int(p)
    return None


def host_view(p, nbytes: int, what: str, writable: bool = False) -> np.ndarray:
    """``nbytes`` bytes of host memory at ``p`` as a ``uint8`` array (a view, not a copy)."""
    if nbytes < 0:
        raise CudaError(_INVALID, f"{what}: negative byte count {nbytes}")
    addr = _address(p)
    if p is None or addr == 0:
        raise CudaError(_INVALID, f"{what} is a null pointer")
    if addr is not None:
        if nbytes == 0:
            return np.empty(0, np.uint8)
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(addr))
    try:
        mv = memoryview(p)
    except TypeError:
        raise TypeError(f"Argument '{what}' is not a host pointer: expected an int address or an object with "
                        f"the buffer protocol, found {type(p).__name__}") from None
    if not mv.c_contiguous:
        raise CudaError(_INVALID, f"{what}: the buffer is not contiguous")
    if writable and mv.readonly:
        raise CudaError(_INVALID, f"{what}: the buffer is read-only")
    flat = np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, np.uint8)
    if flat.size < nbytes:
        raise CudaError(_INVALID, f"{what}: the buffer holds {flat.size} bytes, {nbytes} to copy")
    return flat[:nbytes]


def image_bytes(image) -> bytes:
    """A module image: PTX (NUL-terminated, as the C API reads it) or an .xbin object, from a
    ``str``, a buffer or a host address."""
    if isinstance(image, str):
        return image.encode()
    addr = _address(image)
    if image is None or addr == 0:
        raise CudaError(_INVALID, "image is a null pointer")
    if addr is None:
        try:
            data = bytes(memoryview(image).cast("B"))
        except TypeError:
            raise TypeError(f"Argument 'image' is not PTX or an image: found {type(image).__name__}") from None
    elif ctypes.string_at(addr, 4) == b"XBIN":
        data = _xbin_at(addr)
    else:
        data = ctypes.string_at(addr)
    return data if data[:4] == b"XBIN" else data.split(b"\0", 1)[0]


def _xbin_at(addr: int) -> bytes:
    """An .xbin image in host memory: its size follows from its header."""
    hlen = _XBIN_PREFIX.unpack(ctypes.string_at(addr, _XBIN_PREFIX.size))[3]
    if hlen > 1 << 26:
        raise ObjectFormatError(f"<xbin at {addr:#x}>: implausible header length {hlen}")
    try:
        header = json.loads(ctypes.string_at(addr + _XBIN_PREFIX.size, hlen))
        code = sum(int(k["code_size"]) for k in header["kernels"])
    except (ValueError, KeyError, TypeError) as e:
        raise ObjectFormatError(f"<xbin at {addr:#x}>: malformed object header ({e})") from None
    return ctypes.string_at(addr, _XBIN_PREFIX.size + hlen + code + 32)


def kernel_args(params, kernel_params) -> list[bytes]:
    """The bytes of each parameter (``params``: the kernel's ``ParamInfo`` list) from ``kernelParams``."""
    n = len(params)
    kp = kernel_params
    if kp is None or _address(kp) == 0:
        if n:
            raise CudaError(_INVALID, f"the kernel takes {n} arguments and kernelParams is NULL")
        return []
    if isinstance(kp, tuple | list) and len(kp) == 2 and all(isinstance(x, tuple | list) for x in kp):
        return [raw.ljust(p.size, b"\0")[:p.size] for p, raw in zip(params, _packed_values(n, *kp))]
    if isinstance(kp, np.ndarray):
        if kp.dtype.kind not in "ui" or kp.dtype.itemsize != 8:
            raise CudaError(_INVALID, f"kernelParams: an array of 64-bit addresses expected, got {kp.dtype}")
        ptrs = [int(x) for x in kp.reshape(-1)]
    elif isinstance(kp, ctypes.Array):
        ptrs = [_address(x) if x is not None else 0 for x in kp]
    else:
        addr = _address(kp)
        if addr is None:
            raise TypeError(f"Argument 'kernelParams' is not a valid type: expected an int address, a numpy "
                            f"array of addresses or a (values, types) tuple, found {type(kp).__name__}")
        ptrs = list((ctypes.c_uint64 * n).from_address(addr)) if n else []
    if len(ptrs) < n:
        raise CudaError(_INVALID, f"kernelParams holds {len(ptrs)} pointers, the kernel takes {n} arguments")
    out = []
    for i, (p, ptr) in enumerate(zip(params, ptrs)):
        if not ptr:
            raise CudaError(_INVALID, f"kernelParams[{i}] ('{p.name}') is a null pointer")
        out.append(ctypes.string_at(ptr, p.size))
    return out


def _packed_values(n: int, values, types) -> list[bytes]:
    if len(values) != len(types):
        raise TypeError("Argument 'kernelParams' has tuples with different length")
    if len(values) != n:
        raise CudaError(_INVALID, f"kernelParams holds {len(values)} values, the kernel takes {n} arguments")
    out = []
    for v, t in zip(values, types):
        if t is None:
            if isinstance(v, _Handle):
                out.append(int(v).to_bytes(8, "little"))
            elif callable(getattr(v, "getPtr", None)):
                out.append(ctypes.string_at(v.getPtr(), 8))
            elif isinstance(v, ctypes.Structure):
                out.append(bytes(v))
            elif isinstance(v, Enum):
                out.append(bytes(ctypes.c_int(v.value)))
            else:
                raise TypeError(f"Provided argument is of type {type(v).__name__} but expected a ctypes.Structure, "
                                "an enum or a handle with getPtr()")
        elif isinstance(t, type) and issubclass(t, ctypes._SimpleCData):
            out.append(bytes(v if isinstance(v, t) else _convert(v, t)))
        else:
            raise TypeError(f"Unsupported type: {t!r}")
    return out


def _convert(v, t):
    if isinstance(v, ctypes._SimpleCData):
        v = v.value
    if t in (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble):
        return t(float(v))
    if t is ctypes.c_bool:
        return t(bool(v))
    if t is ctypes.c_void_p:
        return t(None if v is None else int(v))
    return t(int(v))
