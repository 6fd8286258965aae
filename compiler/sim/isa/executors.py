"""The complete executor table of the ISA interpreter: importing this module imports every executor
module, each of which registers its builders with :func:`~xcc.sim.isa.exec_base.impl`, and asserts that
every mnemonic of the ISA table has one.

The families: control flow and moves (:mod:`~xcc.sim.isa.exec_control`), integer
(:mod:`~xcc.sim.isa.exec_int`), f32/f64 (:mod:`~xcc.sim.isa.exec_float`), loads, stores and atomics
(:mod:`~xcc.sim.isa.exec_memory`), warp-level (:mod:`~xcc.sim.isa.exec_warp`), half precision
(:mod:`~xcc.sim.isa.exec_half`), tensor cores and asynchronous copies (:mod:`~xcc.sim.isa.exec_matrix`),
calls (:mod:`~xcc.sim.isa.exec_calls`).  They all import :mod:`~xcc.sim.isa.exec_base` and none imports
another's table, so there is no import cycle.
"""

from __future__ import annotations

from xcc.backend.isa import TABLE
from xcc.sim.isa import (  # noqa: F401  (each registers its executors)
    exec_calls,
    exec_control,
    exec_float,
    exec_half,
    exec_int,
    exec_matrix,
    exec_memory,
    exec_sync,
    exec_texture,
    exec_warp,
)
from xcc.sim.isa.exec_base import IMPLS, Binder, Control, ExecFault, Executor, impl

__all__ = ["IMPLS", "Binder", "Control", "ExecFault", "Executor", "impl"]

_missing = sorted(set(TABLE) - set(IMPLS))
assert not _missing, f"ISA instructions without an interpreter implementation: {_missing}"
