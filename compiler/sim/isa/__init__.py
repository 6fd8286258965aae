"""xcc.sim.isa: the xg1 ISA interpreter (the executors of every machine instruction and the strict
hazard checker) on the shared launch engine."""
