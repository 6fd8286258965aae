"""The kernel launch numba-cuda makes through ``cuda.core`` (``LaunchConfig``, ``launch``), on xcc's
``cuLaunchKernel``: the kernel runs on the ISA interpreter before ``launch`` returns."""

from __future__ import annotations

import ctypes

import numpy as np

from xcc.numba.binding import numba_driver
from xcc.numba.device import Stream
from xcc.numba.link import Kernel, XccLinkError


def _dim3(v, what: str) -> tuple[int, int, int]:
    t = tuple(int(x) for x in v) if isinstance(v, tuple | list) else (int(v),)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {v!r}")
    return t + (1,) * (3 - len(t))


class LaunchConfig:
    """``cuda.core.LaunchConfig``: grid and block (ints or 1-3 tuples), dynamic shared memory."""

    def __init__(self, grid=1, block=1, shmem_size=0, is_cooperative=False, cooperative_launch=False, **kw):
        if kw:
            raise TypeError(f"LaunchConfig: unsupported options {sorted(kw)}")
        self.grid, self.block = _dim3(grid, "grid"), _dim3(block, "block")
        self.shmem_size = int(shmem_size or 0)
        self.is_cooperative = bool(is_cooperative or cooperative_launch)


_CTYPE_OF = {bool: ctypes.c_bool, int: ctypes.c_int64, float: ctypes.c_double}


def _param(v):
    """One kernel argument as (value, ctypes type): ctypes values keep their type; Python ints are
    ``intptr_t`` (numba passes array sizes, shapes, strides and pointers so), floats ``double``."""
    if isinstance(v, ctypes._SimpleCData):
        return v, type(v)
    if isinstance(v, np.generic):
        return v.item(), np.ctypeslib.as_ctypes_type(v.dtype)
    t = _CTYPE_OF.get(type(v))
    if t is None and isinstance(v, int):
        t = ctypes.c_int64
    if t is None:
        raise TypeError(f"kernel argument of type {type(v).__name__} is not supported by xcc's launch")
    return v, t


def launch(stream, config: LaunchConfig, kernel: Kernel, *args) -> None:
    """``cuda.core.launch``: ``cuLaunchKernel`` on xcc (the launch runs before this returns)."""
    if config.is_cooperative:
        raise XccLinkError(f"kernel '{kernel.name}': cooperative launches (grid.sync()) are not supported by "
                           "xcc's Numba path")
    params = [_param(a) for a in args]
    values = tuple(v for v, _ in params)
    types = tuple(t for _, t in params)
    handle = stream.handle if isinstance(stream, Stream) else int(stream or 0)
    numba_driver().cuLaunchKernel(kernel.handle, *config.grid, *config.block, config.shmem_size, handle,
                             (values, types), 0)
