"""What tuning gives back: :class:`TuneResult` (compiler knobs, ``fn.autotune``) and :class:`Config` (a
launch-level choice of the Triton-style decorator, :mod:`xcc.tune.decorator`).

Plain data with no import of the compiler or the runtime, so ``xcc.TuneResult`` and ``xcc.Config`` load light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """One candidate build of a search: its knob values, its score (modelled cycles; ``inf`` when its outputs
    differed from the baseline's, it faulted or it hit the watchdog) and why it was rejected."""

    config: dict
    cycles: float
    problem: str | None = None


@dataclass(frozen=True)
class TuneResult:
    """The outcome of ``fn.autotune``: ``config`` (knob -> value) of the fastest candidate, its modelled
    ``cycles``, the plain build's ``baseline_cycles``; ``candidates`` in the order they were built (empty
    when the result came from the cache, ``from_cache``), the ``strategy`` that ran and the cache ``key``
    of the tuning record."""

    kernel: str
    config: dict
    cycles: int
    baseline_cycles: int
    candidates: tuple[Candidate, ...] = ()
    strategy: str = ""
    from_cache: bool = False
    key: str = ""
    options: dict = field(default_factory=dict)  # the winner's compile options (CompileOptions fields)
    defaults: dict = field(default_factory=dict)  # every knob's value in the plain build

    @property
    def speedup(self) -> float:
        """``baseline_cycles / cycles``: how many times fewer modelled cycles the tuned build takes."""
        return self.baseline_cycles / self.cycles if self.cycles else math.inf

    def changed(self) -> dict:
        """The knobs whose winning value is not the plain build's (``defaults``)."""
        return {k: v for k, v in self.config.items() if self.defaults.get(k, v) != v}

    def __str__(self) -> str:
        knobs = ", ".join(f"{k}={v}" for k, v in self.changed().items()) or "the plain build"
        src = " (from the cache)" if self.from_cache else f" ({len(self.candidates)} candidates, {self.strategy})"
        return (f"{self.kernel}: {self.baseline_cycles} -> {self.cycles} modelled cycles "
                f"({self.speedup:.3f}x){src}: {knobs}")


class Config:
    """One launch configuration for :func:`xcc.autotune`, as Triton's ``triton.Config``: ``kwargs`` are passed
    to the decorated launch function as keyword arguments (block size, which entry variant ...);
    ``num_warps`` and ``maxnreg``, when given, are passed too (as ``num_warps=`` / ``maxnreg=``);
    ``pre_hook(kwargs)`` runs before each call with this configuration."""

    def __init__(self, kwargs: dict | None = None, num_warps: int | None = None, maxnreg: int | None = None,
                 pre_hook=None):
        self.kwargs = dict(kwargs or {})
        self.num_warps = num_warps
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The keyword arguments this configuration adds to a call."""
        extra = {k: v for k, v in (("num_warps", self.num_warps), ("maxnreg", self.maxnreg)) if v is not None}
        return {**self.kwargs, **extra}

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self.all_kwargs() == other.all_kwargs()

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self.all_kwargs().items())))

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.all_kwargs().items()) + ")"
