"""The state behind :mod:`xcc.runtime.driver`: handles, contexts, the device timeline, error codes.

Every API function is wrapped by :func:`api`, which turns the exceptions raised
inside it into cuda-python's return convention: ``(CUresult, *values)``, with
``None`` for each value when the call fails.  The text of the last failure in
this thread is kept for :func:`last_error_message`.

A context owns an emulated :class:`~xcc.runtime.device.Device` (so its own
global memory), its modules, streams and events.  A kernel fault makes the
context's error sticky: every later call that touches the context returns it.

Timeline: every operation is executed eagerly, when it is enqueued, in issue
order (the interpreter is synchronous); beside that, each operation is placed
on a virtual device timeline (milliseconds since the context was created) as
a GPU with unlimited concurrency would run it: it starts when its stream's
previous work has finished and, for the legacy default stream, when every
blocking stream's work has finished (and a blocking stream's work waits for
the legacy stream's); a stream that waits for an event starts no earlier than
the event.  Events take their timestamps from this timeline.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from contextlib import contextmanager

from xcc.diagnostics import (
    KernelFault,
    LinkError,
    ObjectFormatError,
    PtxSemanticError,
    PtxSyntaxError,
    UnsupportedError,
    XccError,
)
from xcc.runtime import timeline
from xcc.runtime.device import Device
from xcc.runtime.driver_types import CUcontext, CUresult, CUstream, CUstream_flags
from xcc.runtime.mapped_memory import MappedGlobalMemory

R = CUresult


class CudaError(Exception):
    """An API call failed with ``code``; ``message`` says why (see :func:`last_error_message`)."""

    def __init__(self, code: CUresult, message: str = ""):
        super().__init__(message or code.name)
        self.code, self.message = code, message or code.name


_tls = threading.local()
_state = {"initialized": False}


def last_error_message() -> str:
    """What went wrong in this thread's most recent failed call (an xcc diagnostic where there is one)."""
    return getattr(_tls, "message", "")


def _code_of(e: XccError) -> CUresult:
    if isinstance(e, KernelFault):
        # A memory fault names its address; a trap or a deadlock is a launch failure.
        return R.CUDA_ERROR_ILLEGAL_ADDRESS if getattr(e, "address", None) is not None else R.CUDA_ERROR_LAUNCH_FAILED
    if isinstance(e, PtxSyntaxError | PtxSemanticError | UnsupportedError | LinkError):
        return R.CUDA_ERROR_INVALID_PTX
    if isinstance(e, ObjectFormatError):
        return R.CUDA_ERROR_INVALID_IMAGE
    return R.CUDA_ERROR_INVALID_VALUE  # LaunchError and other bad input


def api(outputs: int = 0, needs_init: bool = True, errors=None):
    """Give a function cuda-python's return convention; it returns its ``outputs`` values (a tuple
    when more than one) or raises :class:`CudaError` / :class:`~xcc.diagnostics.XccError`.
    ``errors`` maps the ``CUresult`` to the error type returned (the runtime API's ``cudaError_t``)."""
    convert = errors or (lambda code: code)

    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if timeline.active() is None:
                return invoke(*args, **kwargs)
            with timeline.call(fn.__name__) as c:  # a host call on the timeline (xcc.runtime.timeline)
                result = invoke(*args, **kwargs)
                c.ret = c.ret or int(result[0])
                return result

        def invoke(*args, **kwargs):
            try:
                if needs_init and not _state["initialized"]:
                    raise CudaError(R.CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called")
                values = fn(*args, **kwargs)
            except CudaError as e:
                _tls.message = e.message
                return (convert(e.code),) + (None,) * outputs
            except XccError as e:
                _tls.message = str(e)
                return (convert(_code_of(e)),) + (None,) * outputs
            if outputs == 0:
                return (convert(R.CUDA_SUCCESS),)
            return (convert(R.CUDA_SUCCESS),) + (values if outputs > 1 else (values,))

        return call

    return wrap


def value_of(result):
    """The values of another API call's result ``(CUresult, *values)``, or its error raised again
    (with its message) as :class:`CudaError`: for functions built on other API functions."""
    if result[0] != R.CUDA_SUCCESS:
        raise CudaError(R(int(result[0])), last_error_message())
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


def as_int(v, what: str) -> int:
    """An integer argument (an int, an IntEnum, a numpy integer or a number-like handle)."""
    try:
        return int(v.__index__()) if not isinstance(v, int) else int(v)
    except (AttributeError, TypeError):
        raise TypeError(f"Argument '{what}' is not an integer: {type(v).__name__}") from None


def as_uint(v, what: str, bits: int = 32) -> int:
    """An ``unsigned char``/``short``/``int`` (``bits`` 8, 16, 32) or ``size_t`` (64) argument, converted as cuda-python's Cython
    signatures convert it: anything with ``__index__`` or ``__int__`` (so a float grid size such as
    ``(n + 255) / 256`` is truncated, as in NVIDIA's vectorAddDrv sample); ``TypeError`` for other
    objects and ``OverflowError`` for a negative or too large value (exceptions, not a ``CUresult``)."""
    if isinstance(v, str | bytes | bytearray) or v is None:
        raise TypeError(f"an integer is required (argument '{what}', found {type(v).__name__})")
    try:
        n = int(v.__index__()) if hasattr(v, "__index__") else int(v)
    except (TypeError, ValueError, AttributeError):
        raise TypeError(f"an integer is required (argument '{what}', found {type(v).__name__})") from None
    ctype = {8: "unsigned char", 16: "unsigned short", 32: "unsigned int"}.get(bits, "size_t")
    if n < 0:
        raise OverflowError(f"can't convert negative value to {ctype} (argument '{what}')")
    if n >> bits:
        raise OverflowError(f"value too large to convert to {ctype} (argument '{what}')")
    return n


# -- handles -------------------------------------------------------------------------------------

_objects: dict[int, object] = {}
_ids = itertools.count(0x5C00_0000_1000, 0x100)  # handle values look like host addresses


def register(cls, obj):
    """A new handle of class ``cls`` for ``obj`` (stored as ``obj.handle``)."""
    obj.handle = cls(next(_ids))
    _objects[int(obj.handle)] = obj
    return obj.handle


def unregister(obj) -> None:
    _objects.pop(int(obj.handle), None)


def lookup(handle, cls, kind: type, what: str):
    """The live object of type ``kind`` behind ``handle`` (a ``cls`` or an int), else INVALID_HANDLE."""
    if not isinstance(handle, cls | int):
        raise TypeError(f"Argument '{what}' is not instance of type (expected {cls.__name__} or int, "
                        f"found {type(handle).__name__})")
    obj = _objects.get(int(handle))
    if not isinstance(obj, kind):
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, f"{what}: {int(handle):#x} is not a live {cls.__name__}")
    return obj


# -- contexts and streams ------------------------------------------------------------------------


class Stream:
    """A stream's place on its context's timeline."""

    def __init__(self, ctx: Context, flags: int, kind: str = "user"):
        self.ctx, self.flags, self.kind = ctx, flags, kind  # kind: 'legacy', 'per-thread' or 'user'
        self.ready = 0.0  # when its work enqueued so far finishes (ms on the timeline)
        self.handle = CUstream(0)
        self.capture = None  # the Graph its work goes into while it is capturing (xcc.runtime.graphs)

    @property
    def blocking(self) -> bool:
        """Synchronises with the legacy default stream (not the legacy stream itself, nor a non-blocking one)."""
        return self.kind != "legacy" and not self.flags & CUstream_flags.CU_STREAM_NON_BLOCKING


class Context:
    def __init__(self, device: Device):
        self.device = device
        self.sticky: CudaError | None = None
        self.modules: list = []
        self.streams: list[Stream] = []  # created streams
        self.events: list = []
        self.legacy = Stream(self, 0, "legacy")
        self.per_thread = Stream(self, 0, "per-thread")

    @property
    def memory(self):
        return self.device.memory

    def check(self) -> Context:
        """Raise the sticky error, if there is one; else this context."""
        if self.sticky is not None:
            raise CudaError(self.sticky.code, f"sticky error from an earlier launch: {self.sticky.message}")
        return self

    def start_time(self, stream: Stream) -> float:
        """When work enqueued now on ``stream`` may start: after its stream's work and the
        implicit synchronisation of the legacy default stream with blocking streams."""
        t = stream.ready
        if stream.kind == "legacy":
            t = max([t, self.per_thread.ready] + [s.ready for s in self.streams if s.blocking])
        elif stream.blocking:
            t = max(t, self.legacy.ready)
        return t

    def run(self, stream: Stream, op, modelled_ms=None, kind: str = "kernel", info: dict | None = None):
        """Execute ``op()`` now and place it on the timeline after ``stream``'s prior work; it lasts
        ``modelled_ms(result)`` milliseconds where that is not None, else its measured wall time.
        A kernel fault makes the context's error sticky.  On a capturing stream the work is recorded
        into its graph instead (``kind`` names the node) and runs at each launch of the graph.  On a
        recorded timeline (:mod:`xcc.runtime.timeline`) the work goes on ``stream``'s track: a kernel
        from the launch itself, a copy or memset from ``info`` (``copy``: HtoD, DtoH, DtoD or memset;
        ``bytes``; ``sync``: the host waits for it)."""
        if stream.capture is not None:
            stream.capture.add(kind, op, modelled_ms)
            return None
        if stream.kind == "legacy":
            capturing = [s for s in self.streams + [self.per_thread] if s.capture is not None and s.blocking]
            if capturing:
                for s in capturing:
                    s.capture.invalidated = True
                raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "work on the legacy default stream would "
                                "wait for a blocking stream that is capturing (its capture is now invalidated)")
        start = self.start_time(stream)
        t0 = time.perf_counter()
        try:
            with timeline_place(self, stream, info):
                result = op()
        except KernelFault as e:
            self.sticky = CudaError(_code_of(e), str(e))
            raise
        ms = modelled_ms(result) if modelled_ms is not None else None
        stream.ready = start + (ms if ms is not None else (time.perf_counter() - t0) * 1e3)
        return result

    def stream(self, h) -> Stream:
        """The stream named by ``h``: None, 0 or CU_STREAM_LEGACY the legacy default stream,
        CU_STREAM_PER_THREAD the per-thread one, else a stream created in this context."""
        if h is None or (isinstance(h, CUstream | int) and int(h) in (0, 1)):
            return self.legacy
        if isinstance(h, CUstream | int) and int(h) == 2:
            return self.per_thread
        s = lookup(h, CUstream, Stream, "hStream")
        if s.ctx is not self:
            raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "hStream belongs to another context")
        return s


@contextmanager
def timeline_place(ctx: Context, stream: Stream, info: dict | None):
    """While the work of ``ctx.run`` runs: its kernel goes on ``stream`` (the timeline's placement), and a copy
    or memset described by ``info`` is put there after it."""
    tl = timeline.active()
    if tl is None:
        yield
        return
    place, prev = tl.place(timeline.driver_stream(tl, stream)), tl.override
    tl.override = place
    t0 = time.perf_counter_ns()
    try:
        yield
    finally:
        tl.override = prev
    if info is not None:
        tl.copy(place, info["copy"], info["bytes"], ctx.device.machine, time.perf_counter_ns() - t0,
                info.get("sync", False))


def _stack() -> list[Context]:
    if not hasattr(_tls, "stack"):
        _tls.stack = []
    return _tls.stack


def current() -> Context:
    """This thread's current context (checked for a sticky error), else INVALID_CONTEXT."""
    stack = _stack()
    if not stack:
        raise CudaError(R.CUDA_ERROR_INVALID_CONTEXT, "no current context (call cuCtxCreate)")
    return stack[-1].check()


def context_stack() -> list[Context]:
    return _stack()


def new_context(device: Device) -> Context:
    """A context on ``device``, whose global memory also shows the process's host buffers
    (:mod:`xcc.runtime.mapped_memory`)."""
    device.memory = MappedGlobalMemory()
    ctx = Context(device)
    register(CUcontext, ctx)
    return ctx

