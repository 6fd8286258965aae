"""Where the replayed warps live: CTA dispatch to SMs, warp slots on sub-partitions, CTA barriers.

The bookkeeping half of the cycle model's replay (:mod:`xcc.sim.perf.replay` issues the instructions):

* **Dispatch.**  CTAs go to SMs breadth-first, up to the theoretical occupancy
  (:func:`xcc.backend.occupancy.occupancy`); a finished CTA's slot takes the next CTA at once.  A CTA has
  ``ceil(block threads / warp_size)`` warps; a warp lives on sub-partition ``warp slot % [sm] subpartitions``.
* **Events.**  Each sub-partition has at most one pending event (the next cycle its scheduler looks for a
  warp to issue), in one device-wide time order; the SM's shared units (MIO, LG) are arbitrated round-robin
  among its sub-partitions: in cycle ``t`` sub-partition ``t % subpartitions`` is served first.
* **Barriers.**  A warp that issues a CTA barrier that always waits (``isa.BARRIER_WAITS``) waits until every
  unfinished warp of its CTA has arrived, then ``[latency] barrier``; a warp is finished after its last
  instruction.
* **Active cycles.**  An SM is active while it holds a CTA (``sm__cycles_active``).

Sources: the machine description (``[sm] count`` and ``subpartitions``, ``[limits]``, ``[latency]
barrier``, a placeholder in ``machines/xg1.toml``, not measured); occupancy as CUDA's occupancy calculator
computes it (:mod:`xcc.backend.occupancy`).  Dispatch is breadth-first, one CTA per SM per round, as the
hardware's CTA scheduler places them.
"""

from __future__ import annotations

import heapq

import numpy as np

from xcc.backend.isa import NUM_SCOREBOARDS
from xcc.backend.machine import Machine
from xcc.backend.occupancy import Occupancy, occupancy
from xcc.sim.perf.facts import TENSOR_KINDS, InstFacts, machine_value
from xcc.sim.perf.idealise import Idealise, idealise_memory, idealise_streams
from xcc.sim.perf.memsys import MemorySystem, l1_capacity_sectors
from xcc.sim.perf.metrics import STALL_REASONS
from xcc.sim.perf.trace import TraceRecorder

__all__ = ["Residency"]


class Residency:
    """The state of one launch's replay: the trace, the warps, sub-partitions, SMs and CTAs, the event
    queue, the counts; and the events that move warps on and off the SMs."""

    def __init__(self, rec: TraceRecorder, insts, kernel, machine: Machine, block_threads: int,
                 dynamic_shared: int = 0, ideal: Idealise | None = None):
        W, PC, V, M, SO, SEC = rec.streams()
        sm_d = machine.data["sm"]
        self.nsub = nsub = int(sm_d["subpartitions"])
        self.nsm = nsm = int(sm_d["count"])
        self.gto = str(sm_d.get("scheduler", "gto")).lower() == "gto"
        self.bar_lat = machine.latency("barrier")
        self.wpc = wpc = -(-block_threads // int(machine_value(machine, None, "warp_size")))
        self.occ = occupancy(kernel, machine, block_threads, dynamic_shared)
        if ideal is not None and ideal.occupancy:  # what the SM's warp and CTA slots alone allow
            ctas = min(self.occ.limits["warps"], self.occ.limits["ctas"])
            self.occ = Occupancy(ctas, ctas * wpc, self.occ.max_warps_per_sm, "warps", self.occ.limits)
        self.per_sm = per_sm = max(1, self.occ.ctas_per_sm)
        self.static = [InstFacts(i, machine) for i in insts]
        self.mem = MemorySystem(machine, nsm, l1_capacity_sectors(machine, kernel, per_sm, dynamic_shared),
                                SEC.tolist())
        self.nctas = nctas = rec.ctas
        self.split = 1  # Idealise.fill_machine: the factor the CTAs were multiplied by
        if ideal:
            (W, PC, V, M, SO), nctas, self.split = idealise_streams(ideal, rec, self.static, insts, kernel,
                                                                    (W, PC, V, M, SO), wpc, nsm * per_sm)
            self.nctas = nctas
            idealise_memory(ideal, self.mem)
        self.nwarps = nwarps = nctas * wpc
        bounds = np.searchsorted(W, np.arange(nwarps + 1))
        self.PCl, self.Vl, self.Ml, self.SOl = PC.tolist(), V.tolist(), M.tolist(), SO.tolist()
        # counts
        self.stall = dict.fromkeys(STALL_REASONS, 0)
        self.pc_samples = [[0] * len(STALL_REASONS) for _ in insts]  # per pc: warp-cycles by reason (Nsight's source view)
        self.pipe_insts: dict[str, int] = {}
        self.tensor_n = dict.fromkeys(TENSOR_KINDS, 0)  # tensor instructions by op kind
        self.tensor_busy = dict.fromkeys(TENSOR_KINDS, 0.0)  # ... and the cycles they held the tensor pipes
        self.warp_cycles = 0
        # warp state
        self.pos = bounds[:-1].tolist()
        self.end = bounds[1:].tolist()
        self.ready = [0] * nwarps  # earliest issue time of the next instruction
        self.since = [0] * nwarps  # start of the current waiting interval
        self.w_wait = [0] * nwarps  # stall-count end
        self.w_sb = [0] * nwarps  # scoreboard end
        self.w_sbl = [False] * nwarps  # that scoreboard is a long one
        self.w_bar = [0] * nwarps  # barrier release
        self.sbs = [[0] * NUM_SCOREBOARDS for _ in range(nwarps)]
        self.sbl = [[False] * NUM_SCOREBOARDS for _ in range(nwarps)]
        self.cp_open = [0] * nwarps  # completion of the warp's open cp.async group (its LDGSTS so far)
        self.cp_groups: list[list[int]] = [[] for _ in range(nwarps)]  # completions of its closed, unwaited groups
        self.at_bar = [False] * nwarps
        self.done = [False] * nwarps
        self.wsp = [0] * nwarps  # sub-partition id
        self.thr_until = [0.0] * nwarps
        self.thr_why = ["math_pipe_throttle"] * nwarps
        # sub-partition / SM / CTA state
        nsp = nsm * nsub
        self.sp_warps: list[list[int]] = [[] for _ in range(nsp)]
        self.sp_last = [-1] * nsp
        self.sp_pipe: list[dict[str, float]] = [{} for _ in range(nsp)]
        self.sp_sched = [-1] * nsp  # time of the pending event, -1 none
        self.sm_free_slots: list[list[int]] = [list(range(per_sm)) for _ in range(nsm)]
        self.sm_resident = [0] * nsm
        self.sm_since = [0] * nsm
        self.sm_active = [0] * nsm
        self.cta_live = [0] * nctas
        self.cta_arrived = [0] * nctas
        self.cta_slot = [0] * nctas
        self.cta_sm = [0] * nctas
        self.cta_start = [0] * nctas  # when each CTA was placed on its SM, and when it finished (the timeline's
        self.cta_end = [0] * nctas  # per-SM residency, xcc.runtime.timeline)
        self.heap: list[tuple[int, int, int]] = []  # (time, arbitration rank, sub-partition)
        self.next_cta = 0
        self.t_end = 0

    # ---------------------------------------------------------------------------------------- events
    def start(self) -> None:
        """Place the first CTAs: breadth-first, one CTA per SM per round, as the hardware's CTA scheduler."""
        for _ in range(self.per_sm):
            for sm in range(self.nsm):
                if self.next_cta < self.nctas:
                    self.dispatch(sm, 0, 1)

    def close(self) -> None:
        """The replay has ended (at ``t_end``): count the active cycles of the SMs still holding CTAs."""
        for sm in range(self.nsm):
            if self.sm_resident[sm]:
                self.sm_active[sm] += self.t_end - self.sm_since[sm]

    def schedule(self, sp: int, t: int) -> None:
        if self.sp_sched[sp] < 0 or t < self.sp_sched[sp]:
            self.sp_sched[sp] = t
            # the SM's shared units (MIO, LG) are arbitrated round-robin: in cycle t the SM's
            # sub-partition t % nsub is served first, then the next ones (a fixed order would let the
            # first sub-partitions starve the others and finish their warps early, leaving the units
            # idle at the end of a memory-bound phase)
            heapq.heappush(self.heap, (t, (sp - t) % self.nsub, sp))

    def dispatch(self, sm: int, t: int, most: int = 1 << 30) -> None:
        """Place up to ``most`` waiting CTAs in the free slots of SM ``sm`` at ``t``."""
        wpc, nsub = self.wpc, self.nsub
        free = self.sm_free_slots[sm]
        while free and self.next_cta < self.nctas and most > 0:
            most -= 1
            c = self.next_cta
            self.next_cta += 1
            slot = free.pop(0)
            self.cta_slot[c], self.cta_sm[c], self.cta_start[c] = slot, sm, t
            if self.sm_resident[sm] == 0:
                self.sm_since[sm] = t
            self.sm_resident[sm] += 1
            live = 0
            for i in range(wpc):
                w = c * wpc + i
                sp = sm * nsub + (slot * wpc + i) % nsub
                self.wsp[w] = sp
                self.ready[w] = self.since[w] = self.w_wait[w] = self.w_sb[w] = self.w_bar[w] = t
                if self.pos[w] < self.end[w]:
                    self.sp_warps[sp].append(w)
                    live += 1
                    self.schedule(sp, t)
                else:
                    self.done[w] = True
            self.cta_live[c] = live
            if not live:
                self.finish_cta(c, t)

    def finish_cta(self, c: int, t: int) -> None:
        sm = self.cta_sm[c]
        self.cta_end[c] = t
        self.t_end = max(self.t_end, t)
        free = self.sm_free_slots[sm]
        free.append(self.cta_slot[c])
        free.sort()
        self.sm_resident[sm] -= 1
        if self.sm_resident[sm] == 0:
            self.sm_active[sm] += t - self.sm_since[sm]
        self.dispatch(sm, t)

    def release_bar(self, c: int, t: int) -> None:
        at_bar, ready = self.at_bar, self.ready
        for i in range(self.wpc):
            w = c * self.wpc + i
            if at_bar[w]:
                at_bar[w] = False
                self.w_bar[w] = ready[w] = max(ready[w], t + self.bar_lat)
                self.schedule(self.wsp[w], ready[w])
        self.cta_arrived[c] = 0

    def finish_warp(self, w: int, sp: int, t: int) -> None:
        """Warp ``w`` issued its last instruction at ``t``."""
        self.done[w] = True
        self.sp_warps[sp].remove(w)
        c = w // self.wpc
        self.cta_live[c] -= 1
        self.t_end = max(self.t_end, t + 1)
        if self.cta_live[c] == 0:
            self.finish_cta(c, t + 1)
        elif self.cta_arrived[c] and self.cta_arrived[c] >= self.cta_live[c]:
            self.release_bar(c, t + 1)

    def arrive(self, w: int, t: int) -> None:
        """Warp ``w`` issued a waiting CTA barrier at ``t``."""
        c = w // self.wpc
        self.at_bar[w] = True
        self.cta_arrived[c] += 1
        if self.cta_arrived[c] >= self.cta_live[c]:
            self.release_bar(c, t + 1)

    def break_deadlock(self, t: int) -> None:
        """No event is left but warps wait at barriers (divergent arrivals): release them rather than hang."""
        for c in range(self.nctas):
            if self.cta_arrived[c]:
                self.release_bar(c, t + 1)
