"""xcc.sim.perf: performance from execution: the cycle model that replays an ISA launch's trace on a
machine description, the Nsight Compute-style report and the hot-spot view."""
