"""The backend's named stages, and what watches them: ``--print-after``, ``--verify-ir`` and ``--time-passes``.

The backend of :mod:`xcc.backend.codegen` runs, per function, the stages of :data:`BACKEND_STAGES` in order.  A
:class:`StageObserver` is told when each ends (:meth:`StageObserver.after`): it adds the stage's time to
``timings`` (seconds by stage name, the same dictionary the IR pass manager fills), checks the machine code with
:func:`xcc.backend.mverify.verify_machine` when ``verify`` is set, and prints it (:mod:`xcc.backend.mprint`) when
``print_after`` names the stage or is ``all`` — as LLVM's ``-print-after``/``-verify-machineinstrs``/``-time-passes``
do for its machine passes.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

BACKEND_STAGES = ("isel", "convergence", "machine-dce", "pre-schedule", "pred-spill", "regalloc", "copy-cleanup",
                  "schedule", "control-codes")
"""The backend stages in the order they run: instruction selection, convergence barriers (BSSY/BSYNC),
dead-code elimination on machine code, list scheduling on virtual registers (-O1 and above), predicate spilling,
register allocation with spilling (and its checker),
removal of self-moves and fall-through branches, list scheduling (-O1 and above), control codes (stalls,
scoreboards, yields)."""

ALLOCATED_FROM = BACKEND_STAGES.index("regalloc")


@dataclass
class StageObserver:
    print_after: str | None = None
    verify: bool = False
    out: TextIO | None = None
    timings: dict[str, float] | None = None
    _t: float = field(default=0.0, repr=False)

    def start(self) -> None:
        """Start the clock of the first stage of a function."""
        self._t = time.perf_counter()

    def after(self, stage: str, fn_name: str, blocks) -> None:
        """``stage`` has just ended for function ``fn_name`` leaving ``blocks`` (a list of MBlock)."""
        if self.timings is not None:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - self._t
        allocated = BACKEND_STAGES.index(stage) >= ALLOCATED_FROM
        if self.verify:
            from xcc.backend.mverify import verify_machine

            verify_machine(blocks, stage, fn_name, allocated)
        if self.print_after in (stage, "all"):
            from xcc.backend.mprint import format_blocks

            (self.out or sys.stderr).write(f"; *** machine code after {stage} ***\n"
                                           f"{format_blocks(blocks, fn_name, stage == 'control-codes')}\n")
        self._t = time.perf_counter()
