"""A first cycle model: replays the functional run's per-warp instruction trace on the machine description.

Trace-driven, as in Accel-Sim's trace mode (Khairy et al., "Accel-Sim: An Extensible Simulation Framework
for Validated GPU Modeling", ISCA 2020): the ISA interpreter (:mod:`xcc.sim.isa.emulator`) records which
warps executed which pc and what their memory instructions touched; :func:`time_launch` replays each warp's
instruction stream and returns the cycles and Nsight Compute-named metrics.  Nothing the replay does feeds
back into the functional results.  The model lives in these modules, each stating what it models and its
sources:

* :mod:`xcc.sim.perf.trace` - the recorded trace (:class:`TraceRecorder`, :data:`TRACE_CAP`);
* :mod:`xcc.sim.perf.facts` - what the model reads from the ISA table and the machine description per
  instruction (memory space, barrier, tensor family, cp.async role, latency class, pipe rate);
* :mod:`xcc.sim.perf.replay` - CTA dispatch, the warp schedulers, dependencies through the control codes,
  per-pipe throughput and barriers;
* :mod:`xcc.sim.perf.memsys` - shared-memory banks, the per-SM L1, the device-wide L2 and DRAM queues;
* :mod:`xcc.sim.perf.metrics` - stall attribution and the statistics under Nsight Compute's names;
* :mod:`xcc.sim.perf.idealise` - what-if switches (:class:`Idealise`, all off by default) that replay the
  trace with one cause idealised away, which the advisor (:mod:`xcc.sim.perf.advisor`) measures its
  estimates with; :class:`TimedLaunch` keeps what a re-run needs.

Every figure comes from the machine description (``machines/xg1.toml`` cites a source for each); a figure
the model needs and the description lacks is an error naming it.  Every instruction class comes from the ISA
table (:mod:`xcc.backend.isa`).

**Bounded memory:** at most :data:`TRACE_CAP` warp-instructions are recorded; the waves of CTAs beyond it run
functionally only, and the cycles of the recorded CTAs are scaled by ``total CTAs / recorded CTAs``
(``metrics['xcc__sampled_ctas']`` says how many were timed).  The recorded CTAs ran on all ``[sm] count`` SMs
against the same device-wide bandwidths, so a few CTAs do not make a kernel DRAM-bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.backend.machine import Machine
from xcc.diagnostics import XccError
from xcc.sim.perf.facts import TENSOR_KINDS, mem_space, tensor_op
from xcc.sim.perf.idealise import Idealise
from xcc.sim.perf.memsys import l1_capacity_sectors
from xcc.sim.perf.metrics import STALL_PREFIX, STALL_REASONS, launch_metrics
from xcc.sim.perf.replay import Replay
from xcc.sim.perf.trace import TRACE_CAP, TraceRecorder

__all__ = ["TraceRecorder", "time_launch", "TimedLaunch", "Idealise", "TRACE_CAP", "STALL_REASONS", "STALL_PREFIX", "TENSOR_KINDS",
           "mem_space", "tensor_op", "l1_capacity_sectors"]


def time_launch(rec: TraceRecorder, insts, kernel, machine: Machine, block_threads: int, total_ctas: int,
                dynamic_shared: int = 0, ideal: Idealise | None = None) -> tuple[int, dict]:
    """Replay ``rec`` (the trace of ``insts``, the decoded instructions of ``kernel``, launched with
    ``block_threads`` threads per CTA) on ``machine``; (cycles of all ``total_ctas`` CTAs, metrics).
    ``ideal``: the causes to idealise away (:mod:`xcc.sim.perf.idealise`; None: the launch as it ran)."""
    rp = Replay(rec, insts, kernel, machine, block_threads, dynamic_shared, ideal)
    if rec.sector_bytes != rp.mem.sector_bytes:
        raise XccError(f"the trace was recorded with {rec.sector_bytes}-byte sectors, machine description "
                       f"'{machine.name}' has [memory] sector_bytes = {rp.mem.sector_bytes}")
    rp.run()
    return launch_metrics(rp, total_ctas * rp.split)


@dataclass
class TimedLaunch:
    """What re-running a timed launch's cycle model needs (kept by ``LaunchStats.timed``): the recorded
    trace, the decoded instructions, the kernel image, the machine and the launch shape."""

    rec: TraceRecorder
    insts: tuple
    kernel: object
    machine: Machine
    block_threads: int
    total_ctas: int
    dynamic_shared: int = 0

    def time(self, ideal: Idealise | None = None) -> tuple[int, dict]:
        """(cycles, metrics) of the launch replayed with ``ideal``'s causes idealised away."""
        return time_launch(self.rec, self.insts, self.kernel, self.machine, self.block_threads, self.total_ctas,
                           self.dynamic_shared, ideal)
