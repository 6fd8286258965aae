"""The cycle model's replay: the warp schedulers, issue, dependencies and per-pipe throughput.

Each warp's recorded instruction stream (:mod:`xcc.sim.perf.trace`) is replayed on the machine description,
its warps placed on SMs and sub-partitions by :mod:`xcc.sim.perf.residency`:

* **Issue.**  Each SM has ``[sm] subpartitions`` schedulers.  Each cycle a scheduler issues at most one
  instruction, from a ready warp chosen greedy-then-oldest (``gto``) or loose round-robin (``lrr``),
  ``[sm] scheduler``.
* **Dependencies come from the control codes only**, as on the hardware: the next instruction of a warp waits
  ``stall`` cycles and for the scoreboards in its wait mask.  A scoreboard set by a variable-latency
  instruction is released after that instruction's latency (a scoreboard counts its pending writes: with
  several outstanding, after the last to complete); a read scoreboard two cycles after issue, when the
  operands have been read.  The latency: its class's ``[latency]``, a tensor instruction's ``[latency]
  tensor_<type>`` (else ``[latency] tensor``), a memory instruction's from the memory system
  (:mod:`xcc.sim.perf.memsys`).  LDGSTS (cp.async) sets no scoreboard: it joins the warp's open copy group,
  LDGDEPBAR closes the group, and the instruction after a ``DEPBAR b`` waits until every closed group but the
  ``b`` newest completed (the stall counts as ``long_scoreboard``).
* **Throughput.**  Each pipe of a sub-partition accepts an instruction every ``1 / [issue] pipe`` cycles
  (``math_pipe_throttle``); the tensor pipe is held by an HMMA/IMMA/WGMMA for its ops (``2 m n k`` of the
  instruction's share of the product) over ``[tensor] <input type> / subpartitions`` (ops per cycle per
  sub-partition; f16, bf16 or i8), or ``1 / [issue] tensor`` cycles where the description has no such rate;
  per SM, the shared-memory unit and the L1 are busy per wavefront and per sector (``mio_throttle``,
  ``lg_throttle``; :mod:`xcc.sim.perf.memsys`).
* **Stall attribution** (Nsight's warp states, :mod:`xcc.sim.perf.metrics`): a warp's waiting time before an
  issue goes, in order, to ``wait``, the scoreboard, ``barrier``, the throttle it last met, and
  ``not_selected``; the issue cycle is ``selected``.

Sources: scheduler policies as in GPGPU-Sim / Accel-Sim (``gto``, ``lrr``); control codes and scoreboards
after NVIDIA's SASS control words (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
Microbenchmarking", 2018; ``docs/isa.md``); tensor rates from the NVIDIA H100 whitepaper via
``machines/xg1.toml``.  Not modelled: instruction cache, register-bank conflicts, yield hints, clock/smid
feedback into the functional run; tensor sparsity.
"""

from __future__ import annotations

import heapq
import math

from xcc.sim.perf.facts import InstFacts
from xcc.sim.perf.metrics import REASON_INDEX
from xcc.sim.perf.residency import Residency

__all__ = ["Replay"]


class Replay(Residency):
    """One launch's replay: build it from the trace, :meth:`run` it, then read its counts
    (:func:`xcc.sim.perf.metrics.launch_metrics`)."""

    def run(self) -> None:
        self.start()
        heap, sp_sched, sp_warps, sp_last, sp_pipe = self.heap, self.sp_sched, self.sp_warps, self.sp_last, self.sp_pipe
        pos, end, ready, PCl, static = self.pos, self.end, self.ready, self.PCl, self.static
        w_wait, w_sb, w_sbl, w_bar, sbs, sbl = self.w_wait, self.w_sb, self.w_sbl, self.w_bar, self.sbs, self.sbl
        at_bar, pipe_insts = self.at_bar, self.pipe_insts
        tensor_n, tensor_busy, mem, nsub = self.tensor_n, self.tensor_busy, self.mem, self.nsub
        Vl, Ml, SOl = self.Vl, self.Ml, self.SOl
        select, attribute, schedule, warp_cycles = self._selector(), self._attributor(), self.schedule, 0
        while heap:
            t, _, sp = heapq.heappop(heap)
            if sp_sched[sp] != t:
                continue
            sp_sched[sp] = -1
            w = select(sp, t)
            if w < 0:
                continue
            # -- issue w at t
            sp_last[sp] = w
            i = pos[w]
            pc = PCl[i]
            st = static[pc]
            warp_cycles += attribute(w, pc, t)
            # -- the pipe, the memory units, the latency
            pipe_insts[st.pipe] = pipe_insts.get(st.pipe, 0) + 1
            pipes = sp_pipe[sp]
            pipes[st.pipe] = max(pipes.get(st.pipe, 0.0), t) + st.interval
            latency = st.lat
            if st.space == "s":
                latency = mem.shared(sp // nsub, t, st.op, Vl[i])
            elif st.space == "l":
                latency = mem.local(sp // nsub, t, Vl[i])
            elif st.space is not None:
                latency = mem.global_access(sp // nsub, t, st, Vl[i], Ml[i], SOl[i])
            if st.tensor is not None:
                tensor_n[st.tensor] += 1
                tensor_busy[st.tensor] += st.interval
            # -- scoreboards: one counts its outstanding writes (the contract compiler/sim/isa/hazards.py
            # checks): a wait on it lasts until the last of them completes, not the last one issued (an L2 hit
            # issued after a DRAM miss, or an S2R after an LDG, on the same scoreboard)
            if st.wsb >= 0 and t + latency >= sbs[w][st.wsb]:
                sbs[w][st.wsb] = t + latency
                sbl[w][st.wsb] = st.long
            if st.rsb >= 0:
                sbs[w][st.rsb] = max(sbs[w][st.rsb], t + 2)
            dep_t = self._async_copy(w, st, t, latency) if st.cp else 0
            pos[w] = i + 1
            w_wait[w] = t + st.stall
            if i + 1 >= end[w]:
                self.finish_warp(w, sp, t)
            else:  # -- when the next instruction may issue
                sb_t, sb_long = 0, False
                for k in static[PCl[i + 1]].wait:
                    if sbs[w][k] > sb_t:
                        sb_t, sb_long = sbs[w][k], sbl[w][k]
                if dep_t > sb_t:  # after a DEPBAR: its wait on the LDGSTS (global memory) is a long scoreboard
                    sb_t, sb_long = dep_t, True
                w_sb[w], w_sbl[w] = sb_t, sb_long
                w_bar[w] = 0
                ready[w] = max(w_wait[w], sb_t)
                if st.bar:
                    self.arrive(w, t)
            if sp_warps[sp]:
                schedule(sp, t + 1)
            if not heap and any(at_bar):
                self.break_deadlock(t)
        self.warp_cycles = warp_cycles
        self.close()

    def _selector(self):
        """``select(sp, t)``: the warp sub-partition ``sp`` issues at ``t``, or -1 (then its next event is
        scheduled).  A ready warp waits while the pipe or the SM's memory unit its next instruction needs is
        busy (a throttle).  (A closure over the replay's lists: it runs once per scheduler event.)"""
        sp_warps, sp_last, sp_pipe, schedule, gto = self.sp_warps, self.sp_last, self.sp_pipe, self.schedule, self.gto
        at_bar, ready, pos, PCl, static = self.at_bar, self.ready, self.pos, self.PCl, self.static
        thr_until, thr_why, mio, lg, nsub = self.thr_until, self.thr_why, self.mem.mio, self.mem.lg, self.nsub
        inf, ceil = math.inf, math.ceil

        def select(sp: int, t: int) -> int:
            warps, last, pipes = sp_warps[sp], sp_last[sp], sp_pipe[sp]
            cand = -1
            nxt = inf
            order = warps
            if last in warps:
                if gto:
                    order = [last] + [w for w in warps if w != last]
                else:
                    k = warps.index(last) + 1
                    order = warps[k:] + warps[:k]
            for w in order:
                if at_bar[w]:
                    continue
                r = ready[w]
                if r > t:
                    nxt = min(nxt, r)
                    continue
                st = static[PCl[pos[w]]]
                f = pipes.get(st.pipe, 0.0)
                why = "math_pipe_throttle"
                if st.space == "s":
                    if mio[sp // nsub] > f:
                        f, why = mio[sp // nsub], "mio_throttle"
                elif st.space is not None and lg[sp // nsub] > f:
                    f, why = lg[sp // nsub], "lg_throttle"
                if f > t:
                    if f > thr_until[w]:
                        thr_until[w], thr_why[w] = f, why
                    nxt = min(nxt, ceil(f))
                    continue
                if cand < 0:
                    cand = w
                else:
                    nxt = t + 1
                    break
            if cand < 0 and nxt < inf:
                schedule(sp, int(nxt))
            return cand
        return select

    def _attributor(self):
        """``attribute(w, pc, t)``: warp ``w`` issues ``pc`` at ``t``: its waiting interval [since, t) goes, in
        order, to ``wait`` (its stall count), the scoreboard it waited for, ``barrier``, the throttle it last
        met and ``not_selected``, the issue cycle to ``selected``, in the launch's and the pc's samples; the
        warp-cycles attributed.  (A closure over the replay's lists: it runs once per issue.)"""
        stall, pc_samples, since, w_wait, w_sb, w_sbl = (self.stall, self.pc_samples, self.since, self.w_wait,
                                                         self.w_sb, self.w_sbl)
        w_bar, thr_until, thr_why, ceil = self.w_bar, self.thr_until, self.thr_why, math.ceil

        def attribute(w: int, pc: int, t: int) -> int:
            cur = since[w]
            row = pc_samples[pc]
            for until, why in ((w_wait[w], "wait"), (w_sb[w], "long_scoreboard" if w_sbl[w] else "short_scoreboard"),
                               (w_bar[w], "barrier"), (thr_until[w], thr_why[w])):
                u = min(ceil(until), t)
                if u > cur:
                    stall[why] += u - cur
                    row[REASON_INDEX[why]] += u - cur
                    cur = u
            if t > cur:
                stall["not_selected"] += t - cur
                row[1] += t - cur
            stall["selected"] += 1
            row[0] += 1
            cycles = t + 1 - since[w]
            since[w] = t + 1
            thr_until[w] = 0.0
            return cycles
        return attribute

    def _async_copy(self, w: int, st: InstFacts, t: int, latency: int) -> int:
        """The cp.async groups of warp ``w`` after ``st`` issued at ``t``: an LDGSTS completes when its global
        read does; a DEPBAR waits for the groups it covers: the time the next instruction waits for (0: none)."""
        groups = self.cp_groups[w]
        if st.cp == 1:
            self.cp_open[w] = max(self.cp_open[w], t + latency)
        elif st.cp == 2:
            groups.append(self.cp_open[w])
            self.cp_open[w] = 0
        elif len(groups) > st.cp - 3:
            done_groups = groups[:len(groups) - (st.cp - 3)]
            del groups[:len(done_groups)]
            return max(done_groups)
        return 0
