"""The ISA interpreter's strict mode: prove at run time that the control codes cover every hazard.

xg1 leaves hazards to the compiler (docs/isa.md, "Control codes"): a fixed-latency result may be read
``latency`` cycles after its producer issued, counted with the producers' and later instructions'
stall counts; a variable-latency result only after an instruction waited on the scoreboard its
producer set.  :class:`HazardChecker` replays exactly that contract per thread while the kernel runs:

* each thread has an issue clock that every instruction it reaches (guarded off or not) advances by
  its stall count;
* a fixed-latency write makes the register ready at ``issue + latency`` (the latency of the machine
  the code was scheduled for); a variable-latency write leaves it pending on its scoreboard until a
  later instruction's wait mask names that scoreboard (an epoch per scoreboard and thread tells
  which writes a wait covered);
* a read (operands and guard predicate) or a write (WAW) of a register that is not yet ready, or
  still pending on a scoreboard nobody waited for, is a fault naming the register, the producer and
  the cycles missing: a compiler bug, caught where it happens.

The emulator runs it when ``strict`` is on (``XCC_STRICT_HAZARDS=1``; the test suite sets it).
"""

from __future__ import annotations

import os

import numpy as np

from xcc.backend.isa import NUM_SCOREBOARDS
from xcc.backend.machine import Machine
from xcc.backend.minst import register_operands
from xcc.sim.waves import ExecFault

NO_SCOREBOARD = -2  # reg_sb of a variable-latency result written without a scoreboard


def strict_default() -> bool:
    """Whether launches check hazards unless told otherwise (``XCC_STRICT_HAZARDS=1``)."""
    return os.environ.get("XCC_STRICT_HAZARDS", "") not in ("", "0")


def _name(key) -> str:
    kind, n = key
    return f"P{n}" if kind == "p" else f"R{n}"


class HazardChecker:
    def __init__(self, insts, machine: Machine, T: int, lines: list[int]):
        keys = sorted({k for m in insts for k in register_operands(m, False) | register_operands(m, True)})
        self.keys, row = keys, {k: i for i, k in enumerate(keys)}
        self.insts, self.lines = insts, lines
        self.plan = []
        for m in insts:
            reads = [row[k] for k in sorted(register_operands(m, False))]
            writes = [row[k] for k in sorted(register_operands(m, True))]
            lat = machine.latency(m.d.latency) if m.d.fixed_latency else None
            self.plan.append((reads, writes, m.ctrl.wait, lat, m.ctrl.wsb, m.ctrl.stall))
        rows = max(len(keys), 1)
        self.clock = np.zeros(T, np.int64)
        self.ready = np.zeros((rows, T), np.int64)
        self.writer = np.zeros((rows, T), np.int32)
        self.reg_sb = np.full((rows, T), -1, np.int8)
        self.reg_epoch = np.zeros((rows, T), np.int32)
        self.issued = np.zeros((NUM_SCOREBOARDS, T), np.int32)
        self.done = np.zeros((NUM_SCOREBOARDS, T), np.int32)

    def reset(self) -> None:
        for a in (self.clock, self.ready, self.writer, self.reg_epoch, self.issued, self.done):
            a.fill(0)
        self.reg_sb.fill(-1)

    def step(self, pc: int, sel, idx: np.ndarray, esel, eidx: np.ndarray) -> None:
        """Instruction ``pc`` issued by threads ``idx`` (``sel``) and executed by ``eidx`` (``esel``)."""
        reads, writes, wait, lat, wsb, stall = self.plan[pc]
        if wait:
            for s in range(NUM_SCOREBOARDS):
                if wait >> s & 1:
                    self.done[s, sel] = self.issued[s, sel]
        if eidx.size:
            clock = self.clock[esel]
            for r in reads:
                self._check(pc, r, esel, eidx, clock, "read")
            for r in writes:
                self._check(pc, r, esel, eidx, clock, "overwritten")
            for r in writes:
                self.writer[r, esel] = pc
                if lat is not None:
                    self.ready[r, esel] = clock + lat
                    self.reg_sb[r, esel] = -1
                elif wsb >= NUM_SCOREBOARDS:  # a variable-latency result no wait can ever cover
                    self.reg_sb[r, esel] = NO_SCOREBOARD
                else:
                    self.issued[wsb, esel] += 1
                    self.reg_sb[r, esel] = wsb
                    self.reg_epoch[r, esel] = self.issued[wsb, esel]
        self.clock[sel] += stall

    def _check(self, pc: int, r: int, esel, eidx: np.ndarray, clock: np.ndarray, what: str) -> None:
        early = self.ready[r, esel] > clock
        sb = self.reg_sb[r, esel]
        pending = sb != -1
        if pending.any():
            tids = eidx if not isinstance(esel, slice) else np.arange(esel.start, esel.stop)
            s = np.maximum(sb, 0).astype(np.int64)
            pending &= (sb == NO_SCOREBOARD) | (self.reg_epoch[r, esel] > self.done[s, tids])
        bad = early | pending
        if not bad.any():
            return
        t = int(np.argmax(bad))
        src = int(self.writer[r, esel][t])
        producer = f"{self.insts[src].mnemonic} at pc {src} (PTX line {self.lines[src] if src < len(self.lines) else 0})"
        reg = _name(self.keys[r])
        if pending[t] and sb[t] == NO_SCOREBOARD:
            why = f"{reg} is {what} but the {producer}, a variable-latency instruction, set no scoreboard"
        elif pending[t]:
            why = (f"{reg} is {what} before any instruction waited on scoreboard SB{int(sb[t])}, which the "
                   f"{producer} set")
        else:
            missing = int(self.ready[r, esel][t] - clock[t])
            why = f"{reg} is {what} {missing} cycle(s) before the {producer} has written it"
        raise ExecFault(f"hazard (the control codes do not cover a dependence: a compiler bug): {why}", t)
