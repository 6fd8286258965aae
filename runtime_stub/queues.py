"""Streams and events of the Pythonic runtime: deferred, in-order work queues (CUDA's semantics).

    s = rt.Stream()
    pending = fn.launch(grid, block, args, stream=s)   # returns at once; nothing has run yet
    done = s.record()                                   # an Event after the launch
    s.synchronize()                                     # runs the stream's work, in order
    pending.stats.cycles, s.record().elapsed_ms(done)

* Work on a stream runs in the order it was enqueued, when the host needs it: ``Stream.synchronize``,
  ``Event.synchronize`` (the stream up to the event), ``Device.synchronize`` (every stream), and
  before any work on the default stream.
* The default stream (``stream=None``: a plain ``launch``, ``DeviceArray`` copies, ``rt.to_device``)
  is CUDA's legacy default stream: it first completes the work of every blocking stream, and runs
  at once.  A ``Stream(non_blocking=True)`` is not synchronised with it.
* ``Stream.wait(event)`` makes the stream's later work wait for the event: when the stream reaches
  the wait, the event's stream first runs up to the event.
* A launch on a stream returns a :class:`PendingLaunch`; its ``stats`` exist once it has run
  (asking earlier is a :class:`~xcc.diagnostics.LaunchError`, as reading results before a
  synchronisation is a bug).  A kernel fault surfaces at the synchronisation that runs it and the
  stream stays failed (sticky), every later synchronisation raising it again.
* Events carry device time: a stream's clock advances by each launch's modelled cycles at the
  machine's clock (``timing=True``), so ``elapsed_ms`` between two events is the cycle model's time.
  Copies and launches without timing take no device time.

Unsynchronised streams run in the order the host synchronises them, one of the orders a GPU may
choose; a correctly synchronised program cannot tell.
"""

from __future__ import annotations

import itertools
from collections import deque

from xcc.diagnostics import LaunchError, XccError
from xcc.runtime import timeline
from xcc.runtime.device import default_device, sync_blocking

_NOT_RUN = object()
_ids = itertools.count(1)


class PendingLaunch:
    """A launch enqueued on a stream: ``done``, and ``stats`` once it has run."""

    def __init__(self, stream: Stream, what: str):
        self.stream, self.what = stream, what
        self._result = _NOT_RUN

    @property
    def done(self) -> bool:
        return self._result is not _NOT_RUN

    @property
    def stats(self):
        if not self.done:
            raise LaunchError(f"{self.what} has not run yet: synchronize its stream (or an event after it) "
                              "before reading its statistics")
        return self._result

    @property
    def profile(self):
        """The launch's profile (``profile=True``), like ``stats`` once its stream has run."""
        return self.stats.profile

    def synchronize(self):
        """Run the stream up to and including this launch; its statistics."""
        with timeline.call("cuStreamSynchronize", "PendingLaunch.synchronize"):
            self.stream._run_until(lambda: self.done)
            self.stream._host_waits()
        return self.stats


class Event:
    """A point in a stream's work (``Stream.record``) and the device time it was reached."""

    def __init__(self):
        self.stream: Stream | None = None
        self.time_ms: float | None = None  # set when the stream's work reaches it

    @property
    def done(self) -> bool:
        return self.time_ms is not None

    def synchronize(self) -> None:
        with timeline.call("cuEventSynchronize", "Event.synchronize"):
            if self.stream is not None:
                self.stream._run_until(lambda: self.done)
                tl = timeline.active()
                if tl is not None:
                    tl.wait(getattr(self, "timeline_ns", 0))

    def elapsed_ms(self, start: Event) -> float:
        """Device milliseconds from ``start`` to this event (both must have been reached)."""
        for e in (start, self):
            if not e.done:
                raise LaunchError("elapsed_ms: an event has not been reached yet (synchronize first)")
        return self.time_ms - start.time_ms


class Stream:
    def __init__(self, device=None, non_blocking: bool = False):
        self.device = device or default_device()
        self.non_blocking = non_blocking
        self.id = next(_ids)
        self.clock_ms = 0.0  # the stream's device time: when its work so far finishes
        self._queue: deque = deque()
        self._error: XccError | None = None
        self.device.streams.append(self)

    def __repr__(self) -> str:
        return f"<xcc Stream {self.id}{' non-blocking' if self.non_blocking else ''}, {len(self._queue)} pending>"

    def query(self) -> bool:
        """True when all enqueued work has run (CUDA's cuStreamQuery == CUDA_SUCCESS)."""
        return not self._queue

    def enqueue_launch(self, run, what: str) -> PendingLaunch:
        """Enqueue ``run()`` (a launch returning its stats); returns at once."""
        p = PendingLaunch(self, what)
        self._queue.append(("launch", run, p))
        return p

    def record(self, event: Event | None = None) -> Event:
        with timeline.call("cuEventRecord", "Stream.record"):
            event = event or Event()
            event.stream, event.time_ms = self, None
            self._queue.append(("record", None, event))
        return event

    def wait(self, event: Event) -> None:
        """Later work on this stream waits for ``event`` (already reached, or not yet recorded: no wait)."""
        with timeline.call("cuStreamWaitEvent", "Stream.wait"):
            if event.stream is not None and not event.done:
                self._queue.append(("wait", None, event))

    def synchronize(self) -> None:
        with timeline.call("cuStreamSynchronize", "Stream.synchronize"):
            self._run_until(lambda: not self._queue)
            self._host_waits()

    def _host_waits(self) -> None:
        """On a timeline, the host waits for this stream's work so far."""
        tl = timeline.active()
        if tl is not None:
            tl.wait(timeline.py_stream(tl, self, self.device).ready)

    def _run_until(self, finished) -> None:
        if self._error is not None:
            raise self._error
        while not finished() and self._queue:
            kind, run, obj = self._queue.popleft()
            tl = timeline.active()
            if kind == "record":
                obj.time_ms = self.clock_ms
                if tl is not None:
                    obj.timeline_ns = tl.ready_for(timeline.py_stream(tl, self, self.device))
            elif kind == "wait":
                obj.stream._run_until(lambda o=obj: o.done)
                self.clock_ms = max(self.clock_ms, obj.time_ms)
                if tl is not None:
                    st = timeline.py_stream(tl, self, self.device)
                    st.ready = max(st.ready, getattr(obj, "timeline_ns", 0))
            else:
                try:
                    stats = run()
                except XccError as e:
                    self._error = e
                    self._queue.clear()
                    raise
                obj._result = stats
                self.clock_ms += _duration_ms(stats, self.device)
        if self._error is not None:
            raise self._error


def _duration_ms(stats, device) -> float:
    cycles = getattr(stats, "cycles", None)
    if cycles is None:
        return 0.0
    return cycles / (float(device.machine.data["sm"]["clock_mhz"]) * 1e3)


def run_on(stream: Stream | None, device, run, what: str, kernel=None, shared_mem: int = 0):
    """Run ``run()`` on ``stream`` (a :class:`PendingLaunch`, at once) or on the default stream (after every
    blocking stream's work; the result).  Every kernel launch of the runtime comes here: on a timeline
    (:mod:`xcc.runtime.timeline`) it is a ``cuLaunchKernel`` call and its ``kernel`` (the image: registers,
    shared memory) is placed on its stream when it runs."""
    if stream is not None and stream.device is not device:
        raise LaunchError("the stream belongs to another device")
    tl = timeline.active()
    if tl is None:
        return _run_on(stream, device, run, what)
    with tl.call("cuLaunchKernel", "Function.launch"):
        place = tl.place(timeline.py_stream(tl, stream, device))
        return _run_on(stream, device, lambda: tl.kernel(place, run, kernel, shared_mem, device.machine), what)


def _run_on(stream: Stream | None, device, run, what: str):
    if stream is not None:
        return stream.enqueue_launch(run, what)
    sync_blocking(device)
    return run()
