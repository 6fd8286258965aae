"""``@xcc.autotune``: Triton's autotuner for launch-level choices, timed by the cycle model.

    @xcc.autotune(configs=[xcc.Config({"BLOCK": 128}), xcc.Config({"BLOCK": 256})], key=["n"],
                  restore_value=["y"])
    def saxpy(n, a, x, y, BLOCK):
        return fn.launch(grid=(n + BLOCK - 1) // BLOCK, block=BLOCK, args=(np.int32(n), a, x, y))

    saxpy(np.int32(n), np.float32(2), d_x, d_y)     # tunes on the first call for this n, then launches

The decorated function launches one or more kernels and returns what ``launch`` returned (a ``LaunchStats``,
a ``PendingLaunch`` or a list or tuple of them); a configuration's time is the sum of their modelled
``cycles``.  On the first call for a value of the ``key`` arguments (by value; an array by shape and dtype)
every configuration runs once, the arguments named in ``restore_value`` restored before each (device arrays,
snapshotted by ``copy_to_host``) and those in ``reset_to_zero`` zeroed; a configuration that raises an xcc
error scores infinity; the fastest (the first of equals) is kept for that key and the call runs with it.
Like Triton's: ``best_config``, ``configs_timings``, ``cache`` (key -> Config) on the wrapper.
The cycle model is deterministic, so a key is tuned once and the winner does not change between runs.
"""

from __future__ import annotations

import functools
import inspect
import math

from xcc.diagnostics import XccError
from xcc.tune.result import Config


class Autotuner:
    def __init__(self, fn, configs: list[Config], key: list[str], restore_value=(), reset_to_zero=(),
                 pre_hook=None):
        if not configs or not all(isinstance(c, Config) for c in configs):
            raise XccError("xcc.autotune: configs must be a non-empty list of xcc.Config")
        self.fn, self.configs, self.key = fn, list(configs), list(key)
        self.restore_value, self.reset_to_zero = list(restore_value), list(reset_to_zero)
        self.pre_hook = pre_hook
        self.signature = inspect.signature(fn)
        for name in (*self.key, *self.restore_value, *self.reset_to_zero):
            if name not in self.signature.parameters:
                raise XccError(f"xcc.autotune: '{name}' is not an argument of {fn.__qualname__} "
                               f"(arguments: {', '.join(self.signature.parameters)})")
        self.cache: dict = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        bound = self.signature.bind_partial(*args, **kwargs).arguments
        key = tuple(_key_value(bound.get(name)) for name in self.key)
        if key not in self.cache:
            self.cache[key] = self._tune(args, kwargs, bound)
        self.best_config = self.cache[key]
        return self._run(self.best_config, args, kwargs)

    def _tune(self, args, kwargs, bound) -> Config:
        saved = {name: bound[name].copy_to_host() for name in self.restore_value if name in bound}
        timings = {}
        try:
            for config in self.configs:
                for name in self.reset_to_zero:
                    if name in bound:
                        bound[name].copy_from_host(bound[name].copy_to_host() * 0)
                try:
                    ret = self._run(config, args, kwargs)
                except XccError:
                    timings[config] = math.inf
                else:
                    timings[config] = _cycles(ret, self.fn.__qualname__)
                for name, host in saved.items():
                    bound[name].copy_from_host(host)
        finally:
            for name, host in saved.items():
                bound[name].copy_from_host(host)
        self.configs_timings = timings
        best = min(self.configs, key=lambda c: timings[c])  # min keeps the first of equals
        if math.isinf(timings[best]):
            raise XccError(f"xcc.autotune: every configuration of {self.fn.__qualname__} failed")
        return best

    def _run(self, config: Config, args, kwargs):
        extra = config.all_kwargs()
        clash = sorted(set(extra) & set(kwargs))
        if clash:
            raise XccError(f"xcc.autotune: {self.fn.__qualname__} was called with {', '.join(clash)}, which "
                           "the configurations set")
        if config.pre_hook is not None:
            config.pre_hook({**kwargs, **extra})
        if self.pre_hook is not None:
            self.pre_hook({**kwargs, **extra})
        return self.fn(*args, **kwargs, **extra)


def _key_value(v):
    """A key argument as a hashable value: arrays by shape and dtype, numpy scalars by value."""
    if hasattr(v, "shape") and hasattr(v, "dtype") and not hasattr(v, "item") or hasattr(v, "copy_to_host"):
        return ("array", tuple(v.shape), str(v.dtype))
    return v.item() if hasattr(v, "item") else v


def _cycles(ret, name: str) -> float:
    """Modelled cycles of what the launch function returned."""
    items = ret if isinstance(ret, list | tuple) else [ret]
    total = 0
    for r in items:
        r = r.stats if hasattr(r, "stats") and not hasattr(r, "cycles") else r
        cycles = getattr(r, "cycles", None)
        if cycles is None:
            raise XccError(f"xcc.autotune: {name} must return its launches' results (LaunchStats or "
                           f"PendingLaunch, with timing), got {type(r).__name__}")
        total += cycles
    return total


def autotune(configs: list[Config], key: list[str], restore_value=(), reset_to_zero=(), pre_hook=None):
    """Decorate a launch function so that it picks the fastest of ``configs`` (by modelled cycles) for each
    value of the ``key`` arguments; see :mod:`xcc.tune.decorator`."""
    def decorator(fn):
        return Autotuner(fn, configs, key, restore_value, reset_to_zero, pre_hook)

    return decorator
