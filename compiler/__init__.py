"""xcc: a PTX-to-xg1 compiler toolchain, ISA interpreter and JIT runtime.

Import map: ``xcc`` (compiler/), ``xcc.ir``, ``xcc.semantics``, ``xcc.frontend``,
``xcc.passes``, ``xcc.backend``, ``xcc.runtime``.
"""

__version__ = "0.1.0"

__all__ = ["Config", "Finding", "TuneResult", "__version__", "autotune"]


def __getattr__(name: str):
    """``xcc.TuneResult``, ``xcc.Config`` and ``xcc.autotune`` (:mod:`xcc.tune`) and ``xcc.Finding`` (the
    advisor's, defined in :mod:`xcc.diagnostics`), imported on first use so that ``import xcc`` stays light."""
    if name in ("Config", "TuneResult"):
        from xcc.tune import result

        return getattr(result, name)
    if name == "Finding":  # the advisor's findings (xcc.sim.perf.advisor, LaunchStats.advise())
        from xcc.diagnostics import Finding

        return Finding
    if name == "autotune":
        from xcc.tune.decorator import autotune

        return autotune
    raise AttributeError(f"module 'xcc' has no attribute '{name}'")
