"""xcc.runtime: a thin CUDA-driver-like runtime over the emulated xg1 device.

    from xcc import runtime as rt
    mod = rt.load_module("saxpy.ptx")          # JIT: cache hit or compile, per kernel
    fn = mod.get_function("saxpy")
    d_x = rt.to_device(x); d_y = rt.to_device(y)
    stats = fn.launch(grid=(g, 1, 1), block=(256, 1, 1), args=(np.int32(n), np.float32(2), d_x, d_y))
    y = d_y.copy_to_host()

``rt.load_module(src, engine="ir")`` runs the same launches on the IR interpreter, the PTX semantics oracle.
``fn.launch(..., stream=rt.Stream())`` enqueues instead and returns at once (:mod:`xcc.runtime.queues`).
``rt.jit_hooks.register(fn)`` wraps each resolution of a kernel to a binary (:mod:`xcc.runtime.jit_hooks`,
a :class:`JitRequest` each).
``with rt.trace("out.json"):`` records a timeline in modelled time (``.sqlite``: Nsight Systems' export schema),
``rt.range("name")`` an NVTX-style range on it, ``XCC_TRACE=FILE`` the whole process (:mod:`xcc.runtime.timeline`).
"""

from xcc.runtime import jit_hooks
from xcc.runtime.device import Device, DeviceArray, default_device, empty, set_device, to_device, zeros
from xcc.runtime.jit_hooks import JitRequest
from xcc.runtime.launch import Function
from xcc.runtime.module import Module, load_module
from xcc.runtime.queues import Event, PendingLaunch, Stream
from xcc.runtime.texture_api import sampler
from xcc.runtime.timeline import from_environment as _trace_from_environment
from xcc.runtime.timeline import nvtx_range as range  # noqa: A001 (NVTX's name: rt.range("step"))
from xcc.runtime.timeline import trace

__all__ = ["Device", "DeviceArray", "Event", "Function", "JitRequest", "Module", "PendingLaunch", "Stream",
           "default_device", "empty", "jit_hooks", "load_module", "range", "sampler", "set_device", "to_device", "trace", "zeros"]

_trace_from_environment()  # XCC_TRACE=FILE: a timeline of the whole process, written at exit
