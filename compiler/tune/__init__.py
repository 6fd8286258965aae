"""xcc.tune: autotuning on the cycle model.

* compiler knobs of one launch: ``fn.autotune(grid=..., block=..., args=..., budget=N)`` (the runtime's
  :mod:`xcc.runtime.tuning`), ``xcc tune`` (:mod:`xcc.tune.command`); the knobs (:mod:`xcc.tune.space`), the
  strategies (:mod:`xcc.tune.search`), the record in the JIT cache (:mod:`xcc.tune.record`);
* launch-level choices of a Python launch function: ``@xcc.autotune(configs=[xcc.Config(...)], key=[...])``
  (:mod:`xcc.tune.decorator`).

Importing this package imports nothing else: ``xcc.TuneResult``, ``xcc.Config`` and ``xcc.autotune`` load
only what they need.
"""

__all__ = ["Config", "TuneResult", "autotune"]


def __getattr__(name: str):
    if name in ("Config", "TuneResult"):
        from xcc.tune import result

        return getattr(result, name)
    if name == "autotune":
        from xcc.tune.decorator import autotune

        return autotune
    raise AttributeError(f"module 'xcc.tune' has no attribute '{name}'")
