"""A static cost of a function's machine code once control codes are assigned: which of two block orders to keep.

The post-RA list scheduler (:mod:`xcc.backend.schedule`) estimates latencies without the six counting
scoreboards of :mod:`xcc.backend.control`: a wait on a scoreboard also waits for every later producer that
shares it, so a reorder that looks better to the scheduler can serialise long memory latencies (a tensor-core
GEMM whose loads were hoisted ran 55% longer).  This module replays one warp through each block in issue
order, as the cycle model's scoreboard rule does (``compiler/sim/perf/replay.py``): an instruction issues
after its predecessor's stall count and once every scoreboard it waits on is released; a variable-latency
producer releases its scoreboard after its latency (a global or generic load: ``[latency] l2_hit``, the
middle of the memory hierarchy).  A block's cost is weighted by 8 per enclosing loop, loops being found from
the backward branches of the layout.  Deterministic; the estimate only ranks orders of the same code.
"""

from __future__ import annotations

from xcc.backend.isa import NUM_SCOREBOARDS
from xcc.backend.isel import MBlock
from xcc.backend.machine import Machine
from xcc.backend.minst import MInst

LOOP_WEIGHT = 8
"""How many times a block inside a loop counts relative to the code around the loop."""


def producer_latency(m: MInst, machine: Machine) -> int:
    """Cycles until the scoreboard of variable-latency producer ``m`` is released (see the module docstring)."""
    if m.d.is_load and m.d.space in ("global", "generic"):
        return machine.latency("l2_hit")
    return machine.latency(m.d.latency)


def block_cycles(b: MBlock, machine: Machine) -> int:
    """Cycles for one warp to issue ``b`` from an idle start (scoreboards released)."""
    ready = [0] * NUM_SCOREBOARDS
    t = 0
    for m in b.insts:
        c = m.ctrl
        for sb in range(NUM_SCOREBOARDS):
            if c.wait >> sb & 1:
                t = max(t, ready[sb])
        if 0 <= c.wsb < NUM_SCOREBOARDS:
            ready[c.wsb] = max(ready[c.wsb], t + producer_latency(m, machine))
        t += c.stall
    return max([t, *ready])


def loop_depths(blocks: list[MBlock]) -> list[int]:
    """Per block (in layout order): how many backward branches of the layout span it."""
    index = {b.name: i for i, b in enumerate(blocks)}
    depth = [0] * len(blocks)
    for i, b in enumerate(blocks):
        for m in b.insts:
            target = m.ops.get("b") if m.mnemonic == "BRA" else None
            j = index.get(target) if isinstance(target, str) else None
            if j is not None and j <= i:
                for k in range(j, i + 1):
                    depth[k] += 1
    return depth


def function_cost(blocks: list[MBlock], machine: Machine) -> int:
    """The loop-weighted sum of :func:`block_cycles` over ``blocks``."""
    return sum(block_cycles(b, machine) * LOOP_WEIGHT ** min(d, 4) for b, d in zip(blocks, loop_depths(blocks)))
