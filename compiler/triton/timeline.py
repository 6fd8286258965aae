"""Modelled time of Triton launches on xcc: the clock Triton's benchmarking reads.

Every Triton launch through xcc runs with the cycle model (:mod:`xcc.sim.perf`) and adds its modelled
cycles, at the machine's SM clock (``[sm] clock_mhz`` of its description), to one modelled clock.  Launches
run back to back, so a stretch of host code takes the modelled time of the kernels it launched; host work
itself costs nothing.  :class:`Event` reads that clock the way Triton reads CUDA events, and
:func:`launches` keeps each launch's :class:`~xcc.sim.stats.LaunchStats` for inspection.
"""

from __future__ import annotations

from collections import deque

HISTORY = 1024  # launches whose statistics are kept

_now_ms = 0.0
_history: deque = deque(maxlen=HISTORY)


def modelled_ms(stats, device) -> float:
    """The modelled duration of one launch, in milliseconds, on ``device``'s machine."""
    if stats.cycles is None:
        return 0.0
    return stats.cycles / (float(device.machine.data["sm"]["clock_mhz"]) * 1e3)


def record(stats, device) -> None:
    """Account for one finished launch."""
    global _now_ms
    _now_ms += modelled_ms(stats, device)
    _history.append(stats)


def now_ms() -> float:
    """The modelled clock: milliseconds of all Triton launches so far in this process."""
    return _now_ms


def launches() -> list:
    """The :class:`~xcc.sim.stats.LaunchStats` of the latest Triton launches, oldest first."""
    return list(_history)


class Event:
    """A point on the modelled clock (``torch.cuda.Event``'s interface, for Triton's benchmarking)."""

    def __init__(self, enable_timing: bool = True):
        self.ms: float | None = None

    def record(self, stream=None) -> None:
        self.ms = _now_ms

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: Event) -> float:
        """Modelled milliseconds from this event to ``end`` (both recorded)."""
        if self.ms is None or end.ms is None:
            raise RuntimeError("elapsed_time of an event that was not recorded")
        return end.ms - self.ms


class DeviceInterface:
    """What Triton's benchmarking asks of ``driver.get_device_interface()``: events and synchronisation
    (xcc launches have finished when they return)."""

    Event = Event

    @staticmethod
    def synchronize(device=None) -> None:
        pass
