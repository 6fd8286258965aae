"""xcc.sim: execution.  One launch engine (:mod:`xcc.sim.engine`: grid, CTA and warp bookkeeping, wave
scheduling, barriers, deadlock detection, the watchdog, fault location) with two sets of executors:
:mod:`xcc.sim.ir` runs the IR with PTX semantics (the compiler's oracle) and :mod:`xcc.sim.isa` runs xg1
machine code; :mod:`xcc.sim.memory` holds the memory spaces and the device address map, and
:mod:`xcc.sim.perf` the cycle model, the Nsight-style report and the hot-spot view.

Layering: sim sits above the semantics library, the IR and the ISA table (it runs what the compiler
produced) and below the runtime; nothing in the compiler imports it.
"""
