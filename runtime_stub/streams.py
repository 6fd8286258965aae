"""Streams and events of :mod:`xcc.runtime.driver` (``cuStream*``, ``cuEvent*``).

What is modelled (see :mod:`xcc.runtime.driver_core` for the timeline):

* order: work on one stream runs in issue order; in fact all work runs
  eagerly, when it is enqueued, so every call returns with its work done -
  one of the schedules a GPU may pick, which any correctly synchronised
  program cannot tell apart from the others;
* the legacy default stream (``None``, ``0``, ``CU_STREAM_LEGACY``) waits for,
  and is waited for by, every blocking stream of its context; streams created
  with ``CU_STREAM_NON_BLOCKING`` do not synchronise with it;
  ``CU_STREAM_PER_THREAD`` is one blocking stream per context (not per thread);
* ``cuStreamWaitEvent`` delays the stream's later work until the event;
* event timestamps and ``cuEventElapsedTime`` come from the virtual device
  timeline, on which a kernel lasts ``LaunchStats.cycles`` at the machine's
  clock when the interpreter reports cycles, else the interpreter's measured
  wall time, and a copy or memset its measured wall time; host time between
  calls does not appear on it.

Not modelled: work still running when a call returns (``cuStreamQuery`` and
``cuEventQuery`` never answer ``CUDA_ERROR_NOT_READY``), so races between
unsynchronised streams cannot show; contention between concurrent streams
(the timeline lets them overlap without slowing each other); priorities and
host callbacks.  Stream capture and graphs: :mod:`xcc.runtime.graphs`.
"""

from __future__ import annotations

from xcc.runtime import timeline
from xcc.runtime.driver_core import CudaError, Stream, api, as_int, current, lookup, register, unregister
from xcc.runtime.driver_types import CUevent, CUevent_flags, CUresult, CUstream, CUstream_flags

R = CUresult


class Event:
    def __init__(self, ctx, flags: int):
        self.ctx, self.flags = ctx, flags
        self.time: float | None = None  # timestamp on the context's timeline (ms), once recorded
        self.graph = None  # the capture it was last recorded in (xcc.runtime.graphs), and on which stream
        self.stream: Stream | None = None

    def record(self, stream: Stream) -> None:
        """Take the time at which the work enqueued so far on ``stream`` finishes."""
        self.time = stream.ctx.start_time(stream)
        stream.ready = self.time  # recording is a zero-length operation on the stream


def _stream(h) -> Stream:
    if h is None or (isinstance(h, CUstream | int) and int(h) in (0, 1, 2)):
        return current().stream(h)
    s = lookup(h, CUstream, Stream, "hStream")
    s.ctx.check()
    return s


def _event(h, what: str = "hEvent") -> Event:
    e = lookup(h, CUevent, Event, what)
    e.ctx.check()
    return e


# -- the stream side of a capture (the captured Graph and the capture API: xcc.runtime.graphs) ----------
def join_capture(stream: Stream, graph, recorded_on: Stream | None) -> bool:
    """``stream`` waits on an event recorded on ``recorded_on`` in ``graph``'s capture: it joins the
    capture (True); already in it, the wait is an order the graph keeps anyway (and the origin waiting
    for a joined stream joins that stream back)."""
    if graph is None or graph.origin.capture is not graph:
        return False
    if stream.kind == "legacy":
        raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "the legacy default stream cannot join a capture")
    if stream.capture is None:
        stream.capture = graph
        graph.joined.append(stream)
        graph.rejoined.discard(id(stream))
    elif stream is graph.origin and recorded_on is not None:
        graph.rejoined.add(id(recorded_on))
    return True


def refuse_if_capturing(stream: Stream, what: str) -> None:
    """Synchronous operations on a capturing stream are illegal and invalidate the capture."""
    if stream.capture is not None:
        stream.capture.invalidated = True
        raise CudaError(R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, f"{what} on a stream that is capturing")


@api(1)
def cuStreamCreate(Flags=0) -> CUstream:
    """A new stream; ``Flags`` is ``CU_STREAM_DEFAULT`` (blocking) or ``CU_STREAM_NON_BLOCKING``."""
    flags = as_int(Flags, "Flags")
    if flags not in (CUstream_flags.CU_STREAM_DEFAULT, CUstream_flags.CU_STREAM_NON_BLOCKING):
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"unknown stream flags {flags:#x}")
    ctx = current()
    s = Stream(ctx, flags)
    ctx.streams.append(s)
    return register(CUstream, s)


@api(1)
def cuStreamGetFlags(hStream) -> int:
    return _stream(hStream).flags


@api()
def cuStreamSynchronize(hStream) -> None:
    """Wait for the stream's work: already done (work runs when it is enqueued); illegal while capturing."""
    s = _stream(hStream)
    refuse_if_capturing(s, "cuStreamSynchronize")
    tl = timeline.active()
    if tl is not None:  # on the modelled timeline the host waits for the stream's work
        tl.wait(timeline.driver_stream(tl, s).ready)


@api()
def cuStreamQuery(hStream) -> None:
    """CUDA_SUCCESS: the stream's work is always complete."""
    _stream(hStream)


@api()
def cuStreamWaitEvent(hStream, hEvent, Flags=0) -> None:
    """Later work on ``hStream`` waits for the work captured by ``hEvent`` (a no-op if never recorded)."""
    s, e = _stream(hStream), _event(hEvent)
    if e.ctx is not s.ctx:
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "hEvent and hStream belong to different contexts")
    if as_int(Flags, "Flags") != 0:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "cuStreamWaitEvent flags must be 0")
    if join_capture(s, e.graph, e.stream):
        return
    if s.capture is not None:  # an event from outside the capture: already complete when the graph runs
        return
    if e.time is not None:
        s.ready = max(s.ready, e.time)
    tl = timeline.active()
    if tl is not None and hasattr(e, "timeline_ns"):
        st = timeline.driver_stream(tl, s)
        st.ready = max(st.ready, e.timeline_ns)


@api()
def cuStreamDestroy(hStream) -> None:
    s = lookup(hStream, CUstream, Stream, "hStream")
    s.ctx.check()
    s.ctx.streams.remove(s)
    unregister(s)


@api(1)
def cuEventCreate(Flags=0) -> CUevent:
    """A new event; ``Flags`` combines ``CU_EVENT_BLOCKING_SYNC``, ``CU_EVENT_DISABLE_TIMING`` and
    ``CU_EVENT_INTERPROCESS`` (accepted; only DISABLE_TIMING changes anything)."""
    flags = as_int(Flags, "Flags")
    if flags & ~0x7:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, f"unknown event flags {flags:#x}")
    ctx = current()
    e = Event(ctx, flags)
    ctx.events.append(e)
    return register(CUevent, e)


@api()
def cuEventRecord(hEvent, hStream) -> None:
    """Capture the work enqueued so far on ``hStream``: the event's timestamp is when it finishes."""
    e, s = _event(hEvent), _stream(hStream)
    if e.ctx is not s.ctx:
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "hEvent and hStream belong to different contexts")
    if s.capture is not None:  # a node of the graph: the event is taken each time the graph runs
        e.graph, e.stream = s.capture, s
        s.capture.add("event", e.record)
        return
    e.graph, e.stream = None, s
    e.record(s)
    tl = timeline.active()
    if tl is not None:
        e.timeline_ns = tl.ready_for(timeline.driver_stream(tl, s))


@api()
def cuEventQuery(hEvent) -> None:
    _event(hEvent)


@api()
def cuEventSynchronize(hEvent) -> None:
    e = _event(hEvent)
    tl = timeline.active()
    if tl is not None:
        tl.wait(getattr(e, "timeline_ns", 0))


@api(1)
def cuEventElapsedTime(hStart, hEnd) -> float:
    """Milliseconds between two recorded events on the device timeline (see the module docstring)."""
    a, b = _event(hStart, "hStart"), _event(hEnd, "hEnd")
    for e, what in ((a, "hStart"), (b, "hEnd")):
        if e.time is None:
            raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, f"{what} has not been recorded")
        if e.flags & CUevent_flags.CU_EVENT_DISABLE_TIMING:
            raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, f"{what} was created with CU_EVENT_DISABLE_TIMING")
    if a.ctx is not b.ctx:
        raise CudaError(R.CUDA_ERROR_INVALID_HANDLE, "the events belong to different contexts")
    return float(b.time - a.time)


@api()
def cuEventDestroy(hEvent) -> None:
    e = lookup(hEvent, CUevent, Event, "hEvent")
    e.ctx.check()
    e.ctx.events.remove(e)
    unregister(e)
