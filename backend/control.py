"""Control codes: stall counts and scoreboards, computed from the machine description.

The compiler is responsible for hazards (as on NVIDIA GPUs since Maxwell):
a fixed-latency result is protected by stalling the issuing instructions long
enough; a variable-latency result (memory, SFU, S2R, LDC, SHFL) sets one of six
scoreboards and its first reader waits on it.  At block boundaries every
outstanding scoreboard is waited for and fixed latencies are drained (at the
block's end and at every branch, which may leave it early), which is
conservative but always safe.  Runs after register allocation, on physical
registers (Mesa NAK's ``calc_instr_deps`` does the same job).
"""

from __future__ import annotations

from xcc.backend.isa import NUM_SCOREBOARDS, PT, RZ
from xcc.backend.isel import MBlock
from xcc.backend.machine import Machine
from xcc.backend.minst import MInst

MAX_STALL = 15


def _regs(m: MInst, defs: bool) -> set[tuple[str, int]]:
    out = set()
    for op in m.d.operands:
        if op.is_def != defs or op.field not in m.ops:
            continue
        v = m.ops[op.field]
        if isinstance(v, tuple):
            v = v[0]
        if not isinstance(v, int):
            continue
        if op.kind == "P":
            if v != PT:
                out.add(("p", v))
        elif op.kind in ("R", "RIC"):
            if v != RZ:
                out.add(("r", v))
        elif op.kind in ("W", "WIC"):
            if v != RZ:
                out |= {("r", v), ("r", v + 1)}
    if not defs and m.guard is not None and m.guard[0] != PT:
        out.add(("p", m.guard[0]))
    return out


def assign_control_codes(blocks: list[MBlock], machine: Machine) -> None:
    for b in blocks:
        ready: dict[tuple[str, int], int] = {}  # register -> cycle its value is ready
        pending: dict[tuple[str, int], int] = {}  # register -> scoreboard it waits on
        next_sb = 0
        t = 0
        prev: MInst | None = None
        first = True
        for m in b.insts:
            uses, defs = _regs(m, False), _regs(m, True)
            wait = 0
            if first:
                wait = (1 << NUM_SCOREBOARDS) - 1  # conservative at block entry
                first = False
            for r in uses | defs:  # RAW on reads, WAW on writes
                if r in pending:
                    wait |= 1 << pending.pop(r)
            need = max((ready.get(r, 0) for r in uses | defs), default=0)
            if prev is not None and need > t:
                extra = min(need - t, MAX_STALL - prev.ctrl.stall)
                prev.ctrl.stall += max(extra, 0)
                t += max(extra, 0)
            m.ctrl.wait |= wait
            if wait:
                for r, sb in list(pending.items()):
                    if wait >> sb & 1:
                        del pending[r]
            if m.d.fixed_latency:
                lat = machine.latency(m.d.latency)
                for r in defs:
                    ready[r] = t + lat
            elif defs:
                m.ctrl.wsb = next_sb
                for r in defs:
                    pending[r] = next_sb
                next_sb = (next_sb + 1) % NUM_SCOREBOARDS
            m.ctrl.stall = max(m.ctrl.stall, 1)
            if m.mnemonic == "BRA":  # a taken branch leaves the block here: drain fixed latencies first
                outstanding = max((c - t for c in ready.values()), default=0)
                m.ctrl.stall = min(MAX_STALL, max(m.ctrl.stall, outstanding))
            t += m.ctrl.stall
            prev = m
        # Drain fixed latencies before leaving the block.
        if prev is not None:
            outstanding = max((c - t for c in ready.values()), default=0)
            if outstanding > 0:
                prev.ctrl.stall = min(MAX_STALL, prev.ctrl.stall + outstanding)
