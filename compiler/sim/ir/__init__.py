"""xcc.sim.ir: the IR interpreter (the executors of every IR op, with PTX semantics) on the shared
launch engine: the oracle that tells a miscompile from a kernel bug."""
