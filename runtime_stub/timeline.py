"""Timelines of a program on the emulated device, in modelled time (issue 20): ``rt.trace``, ``rt.range``.

    with rt.trace("out.json"):            # or "out.sqlite" (Nsight Systems' export schema), format="sqlite"
        with rt.range("step"):            # an NVTX-style push/pop range (also a decorator)
            fn.launch(grid, block, args, stream=s)
    XCC_TRACE=out.json python prog.py     # the whole process, written at exit; xcc run --trace FILE

What is recorded, and where the runtime reports it (the seams both runtimes share):

* **host calls** - every driver API call (the ``api`` wrapper of :mod:`xcc.runtime.driver_core`, so
  ``cu*`` and the runtime API's ``cuda*`` names) and every call of the Pythonic runtime under the name of
  its driver equivalent (``Function.launch`` is ``cuLaunchKernel``, ``DeviceArray.copy_to_host``
  ``cuMemcpyDtoH``, ``Stream.synchronize`` ``cuStreamSynchronize``, ...; the Python name in ``args``).  A
  call made inside another (``cuLaunchKernel`` running ``Function.launch``) belongs to the outer one.
  Module loads carry one JIT slice per kernel resolved (``compile``, ``cache hit`` or ``hook``).
* **device work** - kernels (``queues.run_on``, where every launch of either engine and either API is
  enqueued), copies and memsets (``DeviceArray``'s and ``driver_core.Context.run``), on their stream.

Modelled time (nanoseconds).  The host clock advances by each call's cost from the machine description's
``[host]`` table (``launch_api_us``, ``copy_api_us``, ``alloc_us``, ...; a JIT compile or cache hit adds
``jit_compile_us`` / ``jit_cache_hit_us``) and, for a synchronising call (a synchronize, a copy to or from
pageable host memory), waits until the device work it waits for has finished.  Device work starts when its
stream's earlier work has finished, no earlier than ``launch_latency_us`` after the enqueueing call for a
kernel (the call's end for a copy), and, as CUDA's legacy default stream, after every blocking stream's
work (and a blocking stream's work after the default stream's).  A kernel lasts its cycle model's cycles
at ``[sm] clock_mhz``; a copy over the host link ``link_latency_us`` + bytes / ``link_bandwidth_gbs``; a
device-to-device copy reads and writes DRAM (2 x bytes / DRAM bandwidth, ``[memory]``), a memset writes
it.  Streams overlap as the hardware's copy engines and SMs let them (no contention is modelled).  Wall
clock durations are annotations (``wall_us``).  Writers: :mod:`xcc.runtime.timeline_json` (Chrome
trace-event JSON) and :mod:`xcc.runtime.timeline_sqlite` (Nsight Systems' SQLite export schema).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xcc.backend.lineinfo import kernel_source
from xcc.backend.machine import Machine, load_machine
from xcc.backend.objfile import KernelImage
from xcc.diagnostics import XccError

__all__ = ["Timeline", "active", "call", "nvtx_range", "trace", "FORMATS"]

FORMATS = ("json", "sqlite")
_COSTS = (("launch", "launch_api_us"), ("memcpy", "copy_api_us"), ("memset", "copy_api_us"),
          ("alloc", "alloc_us"), ("free", "free_us"), ("synchronize", "sync_us"), ("moduleload", "module_load_us"))


@dataclass
class Call:
    """A host call: ``name`` (the driver API's), ``api`` (the Python one, or None), modelled ``start``/``end``
    (ns), ``corr`` (correlation id of the device work it enqueued), ``ret`` (its CUresult, 0 success)."""

    name: str
    api: str | None
    start: int
    cost: int
    corr: int
    extra: int = 0  # modelled time of nested work (JIT), before the call's own cost
    until: int = 0  # the host waits for device work up to here
    end: int = 0
    ret: int = 0
    wall_ns: int = 0
    slices: list = field(default_factory=list)  # nested slices: (name, start, end, args)

    @property
    def submit(self) -> int:
        """When the work it enqueues reaches the device's queue."""
        return self.start + self.extra + self.cost


@dataclass
class StreamState:
    id: int
    kind: str  # 'legacy', 'blocking' or 'non-blocking'
    group: object  # the device (Pythonic runtime) or context (driver API) whose streams synchronise
    device: int
    context: int
    label: str
    ready: int = 0  # when its work so far finishes


@dataclass
class DeviceOp:
    kind: str  # 'kernel', 'memcpy' or 'memset'
    name: str
    stream: StreamState
    start: int
    end: int
    corr: int
    info: dict


@dataclass
class Place:
    """Where enqueued work goes: its stream, the call that enqueued it, and when it reached the queue."""

    stream: StreamState
    corr: int
    submit: int


class Timeline:
    """The modelled host clock, the streams' device clocks and everything recorded on them."""

    def __init__(self, machine: Machine):
        self.machine = machine
        self.now = 0
        self.calls: list[Call] = []
        self.ops: list[DeviceOp] = []
        self.ranges: list[tuple[str, int, int]] = []  # NVTX push/pop ranges: (text, start, end)
        self._open: list[tuple[str, int]] = []
        self._stack: list[Call] = []
        self._streams: dict[int, tuple[object, StreamState]] = {}
        self._groups: dict[int, tuple[object, int]] = {}  # id(group) -> (group, context id)
        self._devices: dict[int, tuple[object, int]] = {}
        self._corr = itertools.count(1)
        self._sid = itertools.count(13)
        self.override: Place | None = None  # set by the driver's Context.run while its work runs
        self.keep_stats = False  # keep each kernel's LaunchStats in its info["stats"] (xcc report --run)

    # ------------------------------------------------------------------------------- figures
    def host_ns(self, key: str, machine: Machine | None = None) -> int:
        """``[host] <key>`` (microseconds) of ``machine`` (default: the trace's) in nanoseconds."""
        return round(float(host_table(machine or self.machine)[key]) * 1000)

    def cost(self, name: str) -> int:
        low = name.lower()
        for word, key in _COSTS:
            if word in low:
                return self.host_ns(key)
        return self.host_ns("api_call_us")

    # ------------------------------------------------------------------------------- host calls
    @contextmanager
    def call(self, name: str, api: str | None = None):
        if self._stack:  # inside another call: part of it
            yield self._stack[0]
            return
        c = Call(name, api, self.now, self.cost(name), next(self._corr))
        self._stack.append(c)
        t0 = time.perf_counter_ns()
        try:
            yield c
        except BaseException:
            c.ret = c.ret or 1
            raise
        finally:
            self._stack.pop()
            c.wall_ns = time.perf_counter_ns() - t0
            c.end = max(c.submit, c.until)
            self.now = c.end
            self.calls.append(c)

    def wait(self, t: int) -> None:
        """The host waits until device time ``t``."""
        if self._stack:
            self._stack[0].until = max(self._stack[0].until, t)
        else:
            self.now = max(self.now, t)

    def jit(self, kernel: str | None, hit: bool | None, wall_ns: int) -> None:
        """A kernel resolved to a binary inside the current call: a compile, a cache hit or a hook's binary."""
        what = "compile" if hit is False else "cache hit" if hit else "hook"
        cost = self.host_ns("jit_compile_us" if hit is False else "jit_cache_hit_us")
        c = self._stack[0] if self._stack else None
        start = (c.start + c.extra) if c else self.now
        args = {"kernel": kernel or "(linked module)", "jit": what, "wall_us": wall_ns / 1000}
        if c is None:
            self.now += cost
            self.calls.append(Call(f"JIT {what}", None, start, cost, 0, end=start + cost, wall_ns=wall_ns))
            return
        c.extra += cost
        c.slices.append((f"JIT {what}: {args['kernel']}", start, start + cost, args))

    # ------------------------------------------------------------------------------- streams
    def stream(self, obj, kind: str, group, device, label: str) -> StreamState:
        """The state of stream ``obj`` (created at first use)."""
        got = self._streams.get(id(obj))
        if got is not None and got[0] is obj:
            return got[1]
        g = self._groups.setdefault(id(group), (group, len(self._groups) + 1))[1]
        d = self._devices.setdefault(id(device), (device, len(self._devices)))[1]
        first_legacy = kind == "legacy" and not any(s.id == 7 for _, s in self._streams.values())
        s = StreamState(7 if first_legacy else next(self._sid), kind, group, d, g, label)
        self._streams[id(obj)] = (obj, s)
        return s

    def states(self, group) -> list[StreamState]:
        return [s for _, s in self._streams.values() if s.group is group]

    def ready_for(self, s: StreamState) -> int:
        """When work enqueued now on ``s`` may start (its stream, and the legacy stream's implicit sync)."""
        t = s.ready
        if s.kind == "legacy":
            t = max([t] + [o.ready for o in self.states(s.group) if o.kind == "blocking"])
        elif s.kind == "blocking":
            t = max([t] + [o.ready for o in self.states(s.group) if o.kind == "legacy"])
        return t

    def place(self, s: StreamState) -> Place:
        """Where work enqueued now on ``s`` goes (the driver's stream while it runs its work)."""
        if self.override is not None:
            return self.override
        c = self._stack[0] if self._stack else None
        return Place(s, c.corr if c else 0, c.submit if c else self.now)

    def device_op(self, place: Place, kind: str, name: str, dur: int, info: dict) -> DeviceOp:
        """Put ``dur`` ns of work on ``place``'s stream after its earlier work."""
        s = place.stream
        start = max(self.ready_for(s), place.submit)
        if kind == "kernel":  # the device-side launch latency after the call
            start = max(start, place.submit + self.host_ns("launch_latency_us"))
        op = DeviceOp(kind, name, s, start, start + max(int(dur), 1), place.corr, info)
        s.ready = op.end
        self.ops.append(op)
        return op

    def kernel(self, place: Place, run, kernel, shared_mem: int, machine: Machine):
        """Run ``run()`` (a launch returning its statistics) and put the kernel on ``place``'s stream."""
        t0 = time.perf_counter_ns()
        stats = run()
        wall = time.perf_counter_ns() - t0
        cycles = getattr(stats, "cycles", None)
        clock = float(machine.data["sm"]["clock_mhz"])
        dur = round(cycles * 1000 / clock) if cycles else wall
        info = {"grid": tuple(stats.grid), "block": tuple(stats.block), "cycles": cycles, "clock_mhz": clock,
                "registers": getattr(kernel, "registers", 0), "static_shared": getattr(kernel, "shared_bytes", 0),
                "local_bytes": getattr(kernel, "local_bytes", 0), "dynamic_shared": shared_mem,
                "wall_ns": wall, "modelled": bool(cycles), "metrics": getattr(stats, "metrics", {}) or {}}
        if self.keep_stats:  # in memory only (xcc report --run gives them to the advisor)
            info["stats"] = stats
        if isinstance(kernel, KernelImage):  # the kernel's CUDA source file and line (-lineinfo/-G PTX) and PTX line
            src = kernel_source(kernel)
            info.update(ptx_line=src.ptx_line, source_file=src.file, source_line=src.line)
        self.device_op(place, "kernel", stats.kernel, dur, info)
        return stats

    def copy(self, place: Place, kind: str, nbytes: int, machine: Machine, wall_ns: int, sync: bool) -> DeviceOp:
        """A copy (``kind`` HtoD, DtoH, DtoD) or memset (``memset``) of ``nbytes`` on ``place``'s stream;
        ``sync``: the host waits for it."""
        mem = machine.data.get("memory", {})
        dram_gbs = float(mem.get("dram_bytes_per_cycle", 0)) * float(machine.data["sm"]["clock_mhz"]) / 1000
        if kind in ("HtoD", "DtoH"):
            dur = self.host_ns("link_latency_us", machine) + nbytes / float(host_table(machine)["link_bandwidth_gbs"])
        else:
            dur = (2 if kind == "DtoD" else 1) * nbytes / dram_gbs if dram_gbs else 1
        op = self.device_op(place, "memset" if kind == "memset" else "memcpy",
                            "Memset" if kind == "memset" else f"Memcpy {kind}", round(dur),
                            {"copy": kind, "bytes": int(nbytes), "wall_ns": wall_ns})
        if sync:
            self.wait(op.end)
        return op

    # ------------------------------------------------------------------------------- NVTX ranges
    def push(self, text: str) -> None:
        self._open.append((text, self.now))

    def pop(self) -> None:
        text, start = self._open.pop()
        self.ranges.append((text, start, self.now))

    def write(self, path: Path, fmt: str) -> None:
        """Write the trace to ``path`` (``fmt`` json or sqlite) through a temporary file in its directory: a
        failure leaves nothing behind."""
        from xcc.runtime import timeline_json, timeline_sqlite

        check_path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            if fmt == "sqlite":
                timeline_sqlite.write(self, tmp)
            else:
                tmp.write_text(timeline_json.dumps(self))
            os.replace(tmp, path)
        except OSError as e:
            raise XccError(f"cannot write trace '{path}': {e.strerror or e}") from None
        finally:
            tmp.unlink(missing_ok=True)


def py_stream(tl: Timeline, stream, device) -> StreamState:
    """The state of a Pythonic runtime stream (:mod:`xcc.runtime.queues`; None: the device's default stream)."""
    if stream is None:
        return tl.stream(device, "legacy", device, device, "Default stream")
    return tl.stream(stream, "non-blocking" if stream.non_blocking else "blocking", stream.device, stream.device,
                     f"Stream {stream.id}")


def driver_stream(tl: Timeline, stream) -> StreamState:
    """The state of a driver API stream (:class:`xcc.runtime.driver_core.Stream`)."""
    kind = "legacy" if stream.kind == "legacy" else "blocking" if stream.blocking else "non-blocking"
    label = {"legacy": "Default stream", "per-thread": "Per-thread default stream"}.get(stream.kind, "Stream")
    return tl.stream(stream, kind, stream.ctx, stream.ctx.device, label)


def host_table(machine: Machine) -> dict:
    host = machine.data.get("host")
    if not isinstance(host, dict):
        raise XccError(f"machine description '{machine.name}' lacks [host] (the host link and runtime costs)")
    return host


# ----------------------------------------------------------------------------------- the public face
_active: Timeline | None = None


def active() -> Timeline | None:
    """The timeline being recorded, or None (then every hook is a no-op)."""
    return _active


@contextmanager
def call(name: str, api: str | None = None):
    """A host call named ``name`` (a driver API name) on the active timeline; yields its :class:`Call` or None."""
    if _active is None:
        yield None
        return
    with _active.call(name, api) as c:
        yield c


def traced(name: str, api: str):
    """Decorate a runtime function: each call is a host call ``name`` on the active timeline."""
    def wrap(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if _active is None:
                return fn(*args, **kwargs)
            with _active.call(name, api):
                return fn(*args, **kwargs)

        return wrapped

    return wrap


def trace_format(path: Path, fmt: str | None) -> str:
    """The format of a trace written to ``path``: ``fmt``, else sqlite for a ``.sqlite`` path, else json."""
    if fmt is None:
        return "sqlite" if path.suffix.lower() in (".sqlite", ".sqlite3", ".db") else "json"
    if fmt not in FORMATS:
        raise XccError(f"unknown trace format '{fmt}': expected json or sqlite")
    return fmt


def check_path(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise XccError(f"cannot write trace '{path}': directory '{parent}' does not exist")


def _machine(machine) -> Machine:
    m = machine if isinstance(machine, Machine) else load_machine(machine or "xg1")
    host_table(m)
    return m


@contextmanager
def trace(path, format: str | None = None, machine: Machine | str | None = None):
    """Record a timeline of the work inside the ``with`` block and write it to ``path`` at its end: Chrome
    trace-event JSON, or for a path ending in ``.sqlite`` (or ``format="sqlite"``) Nsight Systems' SQLite
    export schema.  ``machine`` (a :class:`Machine` or a description's name or file; default xg1) gives the
    ``[host]`` costs of host calls.  Yields the :class:`Timeline`.  A path in a missing directory is an
    :class:`~xcc.diagnostics.XccError` before anything runs."""
    global _active
    path = Path(path)
    fmt = trace_format(path, format)
    check_path(path)
    tl, prev = Timeline(_machine(machine)), _active
    _active = tl
    try:
        yield tl
    finally:
        _active = prev
        tl.write(path, fmt)


class nvtx_range:
    """``with rt.range("name"):`` or ``@rt.range("name")``: an NVTX push/pop range on the host timeline."""

    def __init__(self, name: str):
        self.name = str(name)

    def __enter__(self):
        if _active is not None:
            _active.push(self.name)
        self._on = _active
        return self

    def __exit__(self, *exc):
        if self._on is not None and self._on is _active and _active._open:
            _active.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with nvtx_range(self.name):
                return fn(*args, **kwargs)

        return wrapped


def from_environment() -> None:
    """``XCC_TRACE=FILE``: trace the whole process, written at exit (checked now: a missing directory ends the
    process with status 1 and the reason)."""
    global _active
    spec = os.environ.get("XCC_TRACE")
    if not spec or _active is not None:
        return
    path = Path(spec)
    try:
        fmt = trace_format(path, os.environ.get("XCC_TRACE_FORMAT") or None)
        check_path(path)
        _active = tl = Timeline(_machine(None))
    except XccError as e:
        print(f"{e} (XCC_TRACE)", file=sys.stderr)
        raise SystemExit(1) from None

    def write_at_exit():
        try:
            tl.write(path, fmt)
        except XccError as e:
            print(f"{e} (XCC_TRACE)", file=sys.stderr)

    atexit.register(write_at_exit)
