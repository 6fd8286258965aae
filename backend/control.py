"""Control codes: stall counts and scoreboards, computed from the machine description.

The compiler is responsible for hazards (as on NVIDIA GPUs since Maxwell):
a fixed-latency result is protected by stalling the issuing instructions long
enough; a variable-latency result (memory, SFU, S2R, LDC, SHFL) sets one of six
scoreboards and its first reader (or overwriter) waits on it.

Scoreboards are tracked across blocks: a forward data-flow analysis over the
function's control-flow graph (a may-analysis to a fixpoint: register -> the
scoreboards its pending producers may have set, the union over predecessors)
tells each block which results may still be in flight on entry, so a load
issued before a branch or a loop back edge is waited for at its first use, not
at the block boundary.  Fixed latencies are drained at the end of each block
and at every branch, which may leave it early (at most a few cycles).  A
function's entry waits for every scoreboard, and CALL, SYSCALL and RET wait
for everything pending (the callee or caller may overwrite any register).
Runs after register allocation, on physical registers (Mesa NAK's
``calc_instr_deps`` does the same job).  ``compiler/sim/isa/hazards.py`` checks the
result on every strict-mode run.

With ``serial=True`` (``-O0``) every instruction then waits on all six scoreboards and stalls the maximum,
:data:`MAX_STALL` cycles: each one issues only after every earlier result is in, as in the SASS ``ptxas -O0``
writes for the same PTX (sm_80, decoded from the cubins' control bits: stall 15 on 760 of the 776
instructions of ``gemm_mma_m16n8k16`` and 1367 of the 1376 of ``attention_row``, about two scoreboard waits
per instruction, against a mean stall of 2.3 and 3.0 at ``-O3``; bench/gpu_opt_levels.py).
"""

from __future__ import annotations

import heapq

from xcc.backend.isa import CALLS, LEAVES, NUM_SCOREBOARDS, PT
from xcc.backend.isel import MBlock
from xcc.backend.machine import Machine
from xcc.backend.minst import register_operands

MAX_STALL = 15


def _successors(blocks: list[MBlock]) -> dict[str, list[str]]:
    """Each block's successors, from its branches and its fall-through (the instruction stream is the truth
    after layout decisions: a removed fall-through branch leaves only the fall-through)."""
    succ: dict[str, list[str]] = {}
    for i, b in enumerate(blocks):
        out = [m.ops["b"] for m in b.insts if m.mnemonic == "BRA" and isinstance(m.ops.get("b"), str)]
        last = b.insts[-1] if b.insts else None
        always = last is not None and (last.guard is None or last.guard[0] == PT and not last.guard[1])
        ends = always and (last.mnemonic in LEAVES or last.mnemonic == "BRA")  # a guarded EXIT falls through
        if not ends and i + 1 < len(blocks):
            out.append(blocks[i + 1].name)
        succ[b.name] = out
    return succ


_ALL = (1 << NUM_SCOREBOARDS) - 1


def _transfer(b: MBlock, pending: dict, first: bool, emit: bool, machine: Machine | None = None) -> dict:
    """Pending scoreboards (register -> frozenset of scoreboards) after ``b`` given those on entry; with
    ``emit``, also write the wait masks and stall counts."""
    pending = dict(pending)
    ready: dict[tuple[str, int], int] = {}  # register -> cycle its fixed-latency value is ready
    t, prev = 0, None
    for k, m in enumerate(b.insts):
        uses, defs = register_operands(m, False), register_operands(m, True)
        wait = _ALL if (first and k == 0) or m.mnemonic in CALLS else 0
        for r in uses | defs:  # RAW on reads, WAW on writes
            for sb in pending.get(r, ()):
                wait |= 1 << sb
        if wait:
            for r in list(pending):
                left = frozenset(sb for sb in pending[r] if not wait >> sb & 1)
                if left:
                    pending[r] = left
                else:
                    del pending[r]
        if m.d.fixed_latency:
            for r in defs:
                pending.pop(r, None)
        elif defs:
            for r in defs:
                pending[r] = frozenset((m.ctrl.wsb,))
        if not emit:
            continue
        need = max((ready.get(r, 0) for r in uses | defs), default=0)
        if prev is not None and need > t:
            extra = min(need - t, MAX_STALL - prev.ctrl.stall)
            prev.ctrl.stall += max(extra, 0)
            t += max(extra, 0)
        m.ctrl.wait |= wait
        if m.d.fixed_latency:
            lat = machine.latency(m.d.latency)
            for r in defs:
                ready[r] = t + lat
        m.ctrl.stall = max(m.ctrl.stall, 1)
        if m.mnemonic == "BRA":  # a taken branch leaves the block here: drain fixed latencies first
            outstanding = max((c - t for c in ready.values()), default=0)
            m.ctrl.stall = min(MAX_STALL, max(m.ctrl.stall, outstanding))
        t += m.ctrl.stall
        prev = m
    if emit and prev is not None:  # drain fixed latencies before leaving the block
        outstanding = max((c - t for c in ready.values()), default=0)
        if outstanding > 0:
            prev.ctrl.stall = min(MAX_STALL, prev.ctrl.stall + outstanding)
    return pending


def assign_control_codes(blocks: list[MBlock], machine: Machine, serial: bool = False) -> None:
    """Stall counts, write scoreboards and wait masks of every instruction of ``blocks`` (in place); ``serial``:
    the ``-O0`` codes of the module docstring."""
    if not blocks:
        return
    next_sb = 0  # scoreboards in rotation over the function, in layout order
    for b in blocks:
        for m in b.insts:
            if not m.d.fixed_latency and register_operands(m, True):
                m.ctrl.wsb = next_sb
                next_sb = (next_sb + 1) % NUM_SCOREBOARDS
    succ = _successors(blocks)
    preds: dict[str, list[str]] = {b.name: [] for b in blocks}
    for name, out in succ.items():
        for s in out:
            preds.setdefault(s, []).append(name)
    entry = blocks[0].name
    out_state: dict[str, dict] = {b.name: {} for b in blocks}
    by_name = {b.name: b for b in blocks}

    def entry_state(name: str) -> dict:
        merged: dict = {}
        for p in preds.get(name, ()):
            for r, sbs in out_state[p].items():
                merged[r] = merged.get(r, frozenset()) | sbs
        return merged

    # the may-pending sets only grow (each block's is joined with its previous one): a worklist reaches the
    # fixpoint, revisiting only the blocks whose predecessors changed, in layout order
    order = {b.name: i for i, b in enumerate(blocks)}
    work = list(range(len(blocks)))
    queued = set(work)
    heapq.heapify(work)
    while work:
        i = heapq.heappop(work)
        queued.discard(i)
        b = blocks[i]
        old = out_state[b.name]
        new = _transfer(b, entry_state(b.name), b.name == entry, emit=False)
        for r, sbs in old.items():  # joined with what it was: a wait in the block can drop a scoreboard
            new[r] = new.get(r, frozenset()) | sbs  # when more are pending on entry, so the transfer is not
        if new != old:  # monotone by itself (a loop of wgmma fragments oscillated for ever)
            out_state[b.name] = new
            for s in succ.get(b.name, ()):
                j = order.get(s)
                if j is not None and j not in queued:
                    queued.add(j)
                    heapq.heappush(work, j)
    for b in blocks:
        _transfer(by_name[b.name], entry_state(b.name), b.name == entry, emit=True, machine=machine)
    if serial:
        for b in blocks:
            for m in b.insts:
                m.ctrl.wait = _ALL
                m.ctrl.stall = MAX_STALL
