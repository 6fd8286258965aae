"""The former home of the ISA interpreter's executors, kept for its importers: the complete table and
its types come from :mod:`xcc.sim.isa.executors` (every executor module imported, every mnemonic of the
ISA table checked), the executors themselves live in one module per instruction family (``exec_*``).
New code imports :mod:`xcc.sim.isa.executors`."""

from __future__ import annotations

from xcc.sim.isa.exec_memory import _SIZE, _global_addr, _shared_addr
from xcc.sim.isa.executors import IMPLS, Binder, Control, ExecFault, Executor, impl

__all__ = ["IMPLS", "Binder", "Control", "ExecFault", "Executor", "impl", "_SIZE", "_global_addr", "_shared_addr"]
