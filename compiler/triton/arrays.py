"""The few tensor operations Triton host code uses, for xcc device arrays.

Triton's host wrappers are written against torch tensors (``x.stride(0)``, ``torch.empty_like(x)``, checks
that an input is a contiguous CUDA tensor of some dtype).  xcc device arrays are row-major and contiguous,
so those are small functions here; :func:`check` turns a wrong input (a numpy array still in host memory,
a wrong dtype or rank) into a :class:`~xcc.diagnostics.LaunchError` naming it, before any kernel runs.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import LaunchError


def check(x, name: str, dtype=None, ndim: int | None = None):
    """``x`` if it is an xcc device array of ``dtype`` (one or a tuple; any if None) and rank ``ndim``."""
    from xcc.runtime import DeviceArray

    if isinstance(x, np.ndarray):
        raise LaunchError(f"{name} is a numpy array in host memory: copy it to the device with "
                          "xcc.runtime.to_device")
    if not isinstance(x, DeviceArray):
        raise LaunchError(f"{name} must be an xcc device array, not {type(x).__name__}")
    wanted = tuple(np.dtype(d) for d in (dtype if isinstance(dtype, tuple | list) else (dtype,))) if dtype else ()
    if wanted and x.dtype not in wanted:
        raise LaunchError(f"{name} has dtype {x.dtype}; expected {' or '.join(str(d) for d in wanted)}")
    if ndim is not None and len(x.shape) != ndim:
        raise LaunchError(f"{name} has shape {x.shape}; expected {ndim} dimension(s)")
    return x


def strides(x) -> tuple[int, ...]:
    """Row-major strides of ``x`` in elements (``torch.Tensor.stride()``)."""
    out, step = [], 1
    for extent in reversed(x.shape):
        out.append(step)
        step *= extent
    return tuple(reversed(out))


def stride(x, dim: int) -> int:
    """The stride of dimension ``dim`` in elements (``torch.Tensor.stride(dim)``)."""
    return strides(x)[dim]


def empty_like(x, dtype=None):
    """A new device array of ``x``'s shape (and dtype unless given), on its device."""
    from xcc.runtime import empty

    return empty(x.shape, x.dtype if dtype is None else dtype, device=x.device)
