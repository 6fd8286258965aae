"""Launching a Triton kernel on xcc: Triton's arguments to an xcc launch.

A Triton launch passes every argument of the ``@triton.jit`` function, constexprs included; the kernel's
PTX takes the others, in order, with tuples flattened, and then two pointers Triton adds: its global
scratch and its profile scratch.  This module converts each argument by the type Triton specialised it to:

* pointers (``*fp32``, ...): anything with ``data_ptr()`` (an xcc device array: ``rt.to_device``,
  ``rt.empty``), or an integer address; ``None`` is the null pointer.
* integers (``i1`` ... ``u64``) and floats (``fp16``, ``bf16``, ``fp32``, ``fp64``): Python or numpy
  numbers, range-checked.

Anything else is a :class:`~xcc.diagnostics.LaunchError` naming the kernel and the argument.  The block is
``num_warps`` warps, the dynamic shared memory Triton's ``metadata.shared``; scratch Triton asks for is
allocated on the xcc device for the launch and freed after it.  Launches run to completion (Triton's
``stream`` is ignored) with the cycle model on, and each one's statistics go to :mod:`xcc.triton.timeline`.
"""

from __future__ import annotations

import numpy as np

from xcc.diagnostics import LaunchError
from xcc.runtime import DeviceArray
from xcc.triton import timeline

# Triton scalar type -> the numpy type of its PTX parameter
SCALARS = {"i1": np.int8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u1": np.uint8, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "fp16": np.float16, "fp32": np.float32, "f32": np.float32, "fp64": np.float64}


def _bf16_bits(value: float) -> np.uint16:
    """The bfloat16 nearest ``value`` (ties to even), as its bit pattern."""
    bits = int(np.array(value, np.float32).view(np.uint32))
    return np.uint16((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)


def convert(kernel: str, name: str, ty: str, value, device=None):
    """The launch argument for ``value`` passed as Triton type ``ty`` to argument ``name`` of ``kernel``,
    launched on xcc ``device`` (a device array of another device is refused)."""
    where = f"argument '{name}' ({ty}) of Triton kernel '{kernel}'"
    if ty.startswith("*"):
        if value is None:
            return np.uint64(0)
        if isinstance(value, DeviceArray) and device is not None and value.device is not device:
            raise LaunchError(f"{where}: the array is on another xcc device than the kernel's")
        if hasattr(value, "data_ptr"):
            return np.uint64(int(value.data_ptr()))
        if isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 0:
            return np.uint64(value)
        raise LaunchError(f"{where}: expected an xcc device array (xcc.runtime.to_device / empty) or an "
                          f"address, got {type(value).__name__}")
    if ty == "bf16":
        return _bf16_bits(_number(where, value, float))
    if ty not in SCALARS:
        raise LaunchError(f"{where}: xcc does not launch Triton arguments of type {ty}")
    np_type = SCALARS[ty]
    if np.dtype(np_type).kind == "f":
        return np_type(_number(where, value, float))
    number = _number(where, value, int)
    info = np.iinfo(np_type)
    if ty in ("i1", "u1"):
        number = int(bool(number))
    elif not info.min <= number <= info.max:
        raise LaunchError(f"{where}: {number} does not fit")
    return np_type(number)


def _number(where: str, value, kind: type):
    if isinstance(value, bool | np.bool_):
        return kind(value)
    if isinstance(value, int | np.integer) or (kind is float and isinstance(value, float | np.floating)):
        return kind(value)
    raise LaunchError(f"{where}: expected a {'number' if kind is float else 'integer'}, "
                      f"got {type(value).__name__}")


def _flatten(names: list[str], types: list, values: list, out: list) -> None:
    """(name, type, value) of every non-constexpr argument, tuples flattened in order."""
    for name, ty, value in zip(names, types, values):
        if isinstance(ty, tuple):
            _flatten([f"{name}[{i}]" for i in range(len(ty))], list(ty), list(value), out)
        elif ty != "constexpr":
            out.append((name, ty, value))


class XccLauncher:
    """Triton's ``launcher_cls`` for xcc: built once per compiled kernel, called once per launch."""

    def __init__(self, src, metadata):
        self.names = list(src.signature)
        self.types = list(src.signature.values())
        if any(isinstance(t, str) and t.startswith("tensordesc") for t in self.types):
            raise LaunchError(f"Triton kernel '{metadata.name}': tensor descriptors (TMA) are not supported on xcc")
        if getattr(metadata, "num_ctas", 1) != 1:
            raise LaunchError(f"Triton kernel '{metadata.name}': num_ctas={metadata.num_ctas} (thread block "
                              "clusters) is not supported on xcc")
        self.kernel = metadata.name
        self.block = (metadata.num_warps * metadata.warp_size, 1, 1)
        self.shared = metadata.shared
        self.scratch = [(metadata.global_scratch_size, metadata.global_scratch_align),
                        (metadata.profile_scratch_size, metadata.profile_scratch_align)]

    def __call__(self, grid_x, grid_y, grid_z, stream, function, kernel_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        flat: list = []
        _flatten(self.names, self.types, list(args), flat)
        values = [convert(self.kernel, n, t, v, function.device) for n, t, v in flat]
        grid = (grid_x, grid_y, grid_z)
        if min(grid) <= 0:  # Triton launches nothing for an empty grid, as CUDA would refuse it
            return
        device = function.device
        buffers = [device.alloc(size * grid_x * grid_y * grid_z) if size > 0 else None
                   for size, _align in self.scratch]
        if launch_enter_hook is not None:
            launch_enter_hook(launch_metadata)
        try:
            stats = function.launch(grid, self.block, [*values, *(np.uint64(b or 0) for b in buffers)],
                                    shared_mem=self.shared)
        finally:
            for b in buffers:
                if b is not None:
                    device.memory.free(b)
        timeline.record(stats, device)
        if launch_exit_hook is not None:
            launch_exit_hook(launch_metadata)
