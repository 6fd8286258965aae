"""Post-RA list scheduling: reorder each basic block to hide latency.

Classic cycle-driven list scheduling over the block's dependence DAG (Gibbons and Muchnick,
"Efficient Instruction Scheduling for a Pipelined Architecture", SIGPLAN '86; the priority is the
latency-weighted longest path to the end of the block, as in most production schedulers):

* **Dependences.**  Register and predicate true dependences (RAW) carry the producer's latency from
  the machine description (a variable-latency producer its class's typical latency); anti (WAR)
  and output (WAW) dependences only order.  Memory: loads may pass loads; any store, atomic or
  generic access is ordered with every other memory access.  Control and synchronisation
  (branches, EXIT, convergence barriers, BAR, MEMBAR) and warp-collective instructions (SHFL,
  VOTE, MATCH, REDUX) are fences (:data:`xcc.backend.isa.FENCES`, from the ISA table's instruction
  classes): nothing moves across them, so the active mask each instruction runs with is unchanged.
* **Selection.**  Each cycle, of the instructions whose dependences are met, the one with the
  longest path to the block's end issues (ties: original order, so the result is deterministic);
  when none is ready the clock advances to the earliest.

Runs on physical registers after allocation, before :mod:`xcc.backend.control` computes stall
counts and scoreboards for the new order.  Only the order changes; the instructions, their
operands and their line-table entries are the same.
"""

from __future__ import annotations

from xcc.backend.isel import MBlock
from xcc.backend.machine import Machine
from xcc.backend.minst import Half, MInst, VReg, register_operands


def schedule_blocks(blocks: list[MBlock], machine: Machine, virtual: bool = False) -> None:
    """Reorder each block of ``blocks`` in place (see the module docstring).  ``virtual``: before register
    allocation, where operands are virtual registers — no anti or output dependences between different values, so
    independent loads can start early (the pre-RA machine scheduler of LLVM's ``MachineScheduler``); a call or
    return stays last in its block either way (every later stage assumes it)."""
    operands = _virtual_operands if virtual else register_operands
    live_out = _live_out(blocks) if virtual else {}
    for b in blocks:
        if len(b.insts) > 2:
            if not virtual:
                b.insts = schedule_block(b.insts, machine, operands)
                continue
            out = live_out[b.name]
            if any(m.ahead for m in b.insts):  # loads for later iterations: latency first, pressure after
                b.insts = schedule_block(b.insts, machine, operands)
                continue
            limit = pressure(b.insts, out) + PRESSURE_SLACK
            order = schedule_block(b.insts, machine, operands, (out, limit))
            if pressure(order, out) <= limit:  # else keep the order that needs fewer registers
                b.insts = order


PRESSURE_SLACK = 0
"""Registers (32-bit units) pre-RA scheduling may add to a block's peak pressure; a reorder needing more is dropped."""


def _live_out(blocks: list[MBlock]) -> dict:
    from xcc.backend.regalloc import liveness

    return liveness(blocks)[1]


def pressure(insts: list[MInst], live_out) -> int:
    """Peak number of 32-bit registers the virtual registers live in ``insts`` need (pairs count two, predicates
    none), walking backwards from ``live_out``."""
    live = {v for v in live_out if v.width}
    size = sum(v.width for v in live)
    peak = size
    for m in reversed(insts):
        for v in _virtual_operands(m, True):
            if isinstance(v, VReg) and v in live:
                live.discard(v)
                size -= v.width
        for v in _virtual_operands(m, False):
            if isinstance(v, VReg) and v.width and v not in live:
                live.add(v)
                size += v.width
        peak = max(peak, size)
    return peak


class _Pressure:
    """Registers live at the current point of a forward schedule of one block (32-bit units)."""

    def __init__(self, insts: list[MInst], operands, live_out, limit: int):
        self.limit, self.live_out = limit, live_out
        self.uses = [[v for v in operands(m, False) if isinstance(v, VReg) and v.width] for m in insts]
        self.defs = [[v for v in operands(m, True) if isinstance(v, VReg) and v.width] for m in insts]
        self.left: dict[VReg, int] = {}
        for us in self.uses:
            for v in us:
                self.left[v] = self.left.get(v, 0) + 1
        defined = {v for ds in self.defs for v in ds}
        self.size = sum(v.width for v in self.left if v not in defined)  # live into the block and read in it

    def delta(self, i: int) -> int:
        born = sum(v.width for v in self.defs[i] if self.left.get(v, 0) or v in self.live_out)
        dies = sum(v.width for v in self.uses[i] if self.left[v] == 1 and v not in self.live_out)
        return born - dies

    def issue(self, i: int) -> None:
        self.size += self.delta(i)
        for v in self.uses[i]:
            self.left[v] -= 1

    def over(self) -> bool:
        return self.size > self.limit


def _virtual_operands(m: MInst, defs: bool) -> set:
    """The virtual registers (and any physical ones) ``m`` writes or reads, as dependence keys."""
    out = set(register_operands(m, defs))
    for x in (m.defs() if defs else m.uses()):
        if isinstance(x, tuple):
            x = x[0]
        if isinstance(x, VReg):
            out.add(x)
        elif isinstance(x, Half):
            out.add(x.vreg)
    return out


def latency(m: MInst, machine: Machine) -> int:
    """Cycles from ``m``'s issue until a dependent instruction can use its result (an estimate for a
    variable-latency class; global loads count as L1 hits, ``[latency] l1_hit``)."""
    if m.d.is_load and m.d.space in ("global", "generic"):
        return machine.latency("l1_hit")
    return machine.latency(m.d.latency)


def _memory_kind(m: MInst) -> str | None:
    if not m.d.memory_operand:
        return None
    return "load" if m.d.independent_load else "store"


def schedule_block(insts: list[MInst], machine: Machine, operands=register_operands,
                   pressure_limit: tuple | None = None) -> list[MInst]:
    """The instructions of one block in their new order (``operands(m, defs)``: the dependence keys).
    ``pressure_limit`` = (live-out virtual registers, limit): while the registers live at the current point
    exceed the limit, the ready instruction that frees the most (then the most critical) goes first, as
    register-pressure-aware schedulers do (Goodman and Hsu, "Code scheduling and register allocation in large
    basic blocks", ICS 1988; LLVM's GenericScheduler)."""
    n = len(insts)
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    npred = [0] * n
    last_def: dict = {}
    readers: dict = {}
    last_store, loads_since = None, []
    last_fence, since_fence = None, []

    def edge(i: int, j: int, lat: int) -> None:
        succs[i].append((j, lat))
        npred[j] += 1

    for j, m in enumerate(insts):
        uses, defs = operands(m, False), operands(m, True)
        deps: dict[int, int] = {}  # predecessor -> latency

        def dep(i, lat, deps=deps):
            if i is not None and i != j:
                deps[i] = max(deps.get(i, 0), lat)

        for r in uses:
            i = last_def.get(r)
            dep(i, latency(insts[i], machine) if i is not None else 0)
        for r in defs:
            dep(last_def.get(r), 1)
            for i in readers.get(r, ()):
                dep(i, 0)
        kind = _memory_kind(m)
        if kind is not None:
            dep(last_store, 0)
            if kind == "store":
                for i in loads_since:
                    dep(i, 0)
        if m.d.is_fence or (pressure_limit is not None and m.mnemonic == "MOV"):
            # before allocation a copy stays after everything before it: moved up, its source and destination
            # would live at once and the copy could no longer be coalesced (phi copies, accumulator chains)
            for i in since_fence:
                dep(i, 0)
        dep(last_fence, 0)
        for i, lat in deps.items():
            edge(i, j, lat)
        for r in uses:
            readers.setdefault(r, []).append(j)
        for r in defs:
            last_def[r] = j
            readers[r] = []
        if kind == "store":
            last_store, loads_since = j, []
        elif kind == "load":
            loads_since.append(j)
        if m.d.is_fence:
            last_fence, since_fence = j, []
        else:
            since_fence.append(j)

    ahead = [i for i in range(n) if insts[i].ahead]
    if ahead:  # loads for a later iteration, and what they need, before everything else of the block
        feeds = set(ahead)
        preds: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            for j, _ in succs[i]:
                preds[j].append(i)
        work = list(ahead)
        while work:
            for i in preds[work.pop()]:
                if i not in feeds:
                    feeds.add(i)
                    work.append(i)
        for a in ahead:
            for j in range(n):
                if j not in feeds:
                    edge(a, j, 0)
    prio = [0] * n  # latency-weighted longest path to the end of the block
    for i in range(n - 1, -1, -1):
        prio[i] = max((lat + prio[j] for j, lat in succs[i]), default=0) + 1
        if insts[i].ahead:  # read in a later iteration: a miss's latency to cover before then
            prio[i] += machine.latency("dram")
    earliest = [0] * n
    ready = [i for i in range(n) if npred[i] == 0]
    order: list[int] = []
    cycle = 0
    track = _Pressure(insts, operands, *pressure_limit) if pressure_limit is not None else None
    while ready:
        if track is not None and track.over():
            pick = min(ready, key=lambda i: (track.delta(i), -prio[i], i))
            cycle = max(cycle, earliest[pick])
        else:
            now = [i for i in ready if earliest[i] <= cycle]
            if not now:
                cycle = min(earliest[i] for i in ready)
                continue
            pick = max(now, key=lambda i: (prio[i], -i))
        if track is not None:
            track.issue(pick)
        ready.remove(pick)
        order.append(pick)
        for j, lat in succs[pick]:
            earliest[j] = max(earliest[j], cycle + lat)
            npred[j] -= 1
            if npred[j] == 0:
                ready.append(j)
        cycle += 1
    assert len(order) == n, "dependence cycle in a basic block"
    return [insts[i] for i in order]
