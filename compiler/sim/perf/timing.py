"""A first cycle model: replays the functional run's per-warp instruction trace on the machine description.

Trace-driven, as in Accel-Sim's trace mode: the ISA interpreter (:mod:`xcc.sim.isa.emulator`)
records, step by step, which warps executed which pc and, for memory instructions, one number
per warp - 32-byte sectors for global/local/generic accesses, shared-memory wavefronts (the
largest number of distinct 4-byte words in one bank) for shared ones - plus a miss flag.  The
timing pass below then replays each warp's instruction stream; nothing it does feeds back into
the functional results.  The model, in order of what it covers:

* **Dispatch.**  CTAs go to SMs breadth-first, up to the theoretical occupancy
  (:func:`xcc.backend.occupancy.occupancy`); a finished CTA's slot takes the next CTA at once.
* **Issue.**  Each SM has ``[sm] subpartitions`` schedulers; a warp lives on sub-partition
  ``warp slot % subpartitions``.  Each cycle a scheduler issues at most one instruction, from a
  ready warp chosen greedy-then-oldest (``gto``) or loose round-robin (``lrr``).
* **Dependencies come from the control codes only**, as on the hardware: the next instruction of
  a warp waits ``stall`` cycles and for the scoreboards in its wait mask.  A scoreboard set by a
  variable-latency instruction is released after that instruction's latency (a scoreboard counts
  its pending writes: with several outstanding, after the last to complete).  The latency: its
  class's ``[latency]`` for SFU/S2R/LDC/SHFL/division; ``lsu + wavefronts - 1`` for shared memory;
  ``l1_hit`` for local memory; ``l2_hit`` or ``dram`` plus ``ceil(sectors / l1_sectors_per_cycle) - 1``
  plus the L2/DRAM queueing delay (below) for global and generic memory; a tensor instruction's
  ``[latency] tensor_<type>`` (else ``[latency] tensor``).  LDSM (ldmatrix) is a shared load whose
  wavefronts are those of each matrix's 8 rows of 16 bytes (from 8 lanes' addresses); LDGSTS
  (cp.async) a global load of its source (operand ``c``) that sets no scoreboard: it joins the warp's
  open copy group, LDGDEPBAR closes the group, and the instruction after a ``DEPBAR b`` waits until
  every closed group but the ``b`` newest completed (the stall counts as ``long_scoreboard``).
* **Memory hit model (simple, stated):** each SM has an L1 data cache of 32-byte sectors, LRU, of
  ``[memory] l1_bytes`` less the shared-memory carveout (:func:`l1_capacity_sectors`).  A global read
  (LDG, generic LD, LDGSTS) looks its sectors up there, in the replay's time order, and allocates the
  missing ones; if every sector hits it costs ``l1_hit`` (+ the sector transfer) and no L2 traffic.
  Reads marked BYPASS (PTX ``.cg``, ``.cv``, ``.volatile``, strong loads at ``.gpu``/``.sys`` scope)
  skip the L1; stores and atomics write through and drop their sectors from the SM's L1 (other SMs'
  L1s are not coherent, as on the hardware).  What the L1 passes on goes to the L2: a sector's first
  access in the launch (in the functional run's order) goes on to DRAM, every later one hits in L2
  (an L2 of unbounded capacity).  Generic addresses count as global.  Local memory is interleaved
  per thread (coalesced) and always hits in L1, without L2 traffic.
* **L2 and DRAM bandwidth (device-wide queues):** the L2 and the DRAM are each one first-come
  first-served server shared by every SM, like the per-SM MIO/LG units: a next-free time that an
  access moves on by its sectors over ``[memory] l2_bytes_per_cycle / sector_bytes`` (L2: every
  sector of a global access, hit or miss, load or store) or ``dram_bytes_per_cycle / sector_bytes``
  (DRAM: the access's first-touched sectors).  A load waits for the L2 to be free (from its issue),
  then, if it has misses, for the DRAM (from when its L2 turn came); that wait is added to its
  latency, so it shows as ``long_scoreboard`` stalls, as Nsight shows memory-bound waits
  (``lg_throttle`` stays the per-SM L1 queue).  A store's first-touched sectors are written to DRAM
  (``dram__sectors_write``) when it issues, occupying it; no warp waits for a store, but the launch
  ends only when the last warp has finished and the L2 and DRAM queues have drained.  The
  replay handles every SM's events in one time order, so the queues are deterministic; a
  description without these keys has no limit.  Launches beyond :data:`TRACE_CAP` are
  extrapolated from the recorded CTAs, which ran on all ``[sm] count`` SMs against the same
  device-wide bandwidths, so a few CTAs do not make a kernel DRAM-bound.
* **Throughput.**  Each pipe of a sub-partition accepts an instruction every ``1 / [issue] pipe``
  cycles (math_pipe_throttle); the tensor pipe is held by an HMMA/IMMA/WGMMA for its ops (``2 m n
  k`` of the instruction's share of the product) over ``[tensor] <input type> / subpartitions``
  (ops per cycle per sub-partition; f16, bf16 or i8), or ``1 / [issue] tensor`` cycles where the
  description has no such rate; per SM, the shared-memory unit is busy one cycle per wavefront
  (mio_throttle) and the L1 one cycle per ``l1_sectors_per_cycle`` sectors (lg_throttle).  The
  SM's sub-partitions get these shared units round-robin (each cycle a different one first).
* **Barriers.**  A warp that issues BAR waits until every unfinished warp of its CTA has
  arrived; a warp is finished after its last instruction.

Not modelled: instruction cache, register-bank conflicts, yield hints, L2 capacity (evictions), L1
sectoring into 128-byte lines and ``L1::no_allocate``/``evict_*`` hints,
DRAM pages and banks, store latency, LDGSTS's shared-memory write (and its MIO cost), clock/smid
feedback into the functional run.  Tensor cores are a pipe per sub-partition (occupied per input
type, above) and a latency per input type; sparsity is not modelled.

**Statistics** use Nsight Compute's names.  Stall reasons are counted for every resident warp
in every cycle (sampling every cycle), so they sum to the warp-cycles of the launch; a warp's
waiting time before an issue is attributed, in order, to ``wait`` (stall count), the scoreboard
(``long_scoreboard`` for global/local memory, else ``short_scoreboard``), ``barrier``, the
throttles, and ``not_selected``; the issue cycle is ``selected``.  Memory traffic:
``lts__t_sectors_srcunit_tex_op_read/write.sum`` (L2 sectors from the SMs; ``_lookup_hit`` /
``_lookup_miss`` for reads), ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit/miss.sum`` and ``l1tex__t_sector_pipe_lsu_mem_
global_op_ld_hit_rate.pct`` (the L1's cacheable reads), ``dram__sectors_read/write.sum`` and ``dram__bytes_read/write.sum``,
``dram__throughput`` and ``lts__throughput`` ``.avg.pct_of_peak_sustained_elapsed`` (busy cycles of the
queue over the recorded cycles, at most 100).  Tensor cores: ``sm__inst_executed_pipe_tensor_op_{hmma,imma,gmma}.sum`` and
``sm__pipe_tensor_op_{hmma,imma,gmma}_cycles_active.avg.pct_of_peak_sustained_active`` (cycles the
sub-partitions' tensor pipes are held, over SM active cycles x sub-partitions).

**Bounded memory:** at most :data:`TRACE_CAP` warp-instructions are recorded; the waves of CTAs
beyond it run functionally only, and the cycles of the recorded CTAs are scaled by
``total CTAs / recorded CTAs`` (``metrics['xcc__sampled_ctas']`` says how many were timed).
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict

import numpy as np

from xcc.backend.isa import MMA_SHAPE, NUM_SCOREBOARDS, tensor_ops
from xcc.backend.machine import Machine
from xcc.backend.occupancy import occupancy

__all__ = ["TraceRecorder", "time_launch", "TRACE_CAP", "STALL_REASONS"]

TRACE_CAP = 1 << 21
"""Warp-instructions recorded per launch; later waves run untimed and cycles are extrapolated."""

STALL_REASONS = ("selected", "not_selected", "wait", "long_scoreboard", "short_scoreboard", "barrier",
                 "mio_throttle", "lg_throttle", "math_pipe_throttle")
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
_REASON_INDEX = {r: i for i, r in enumerate(STALL_REASONS)}

# memory space of a memory instruction, by mnemonic (without .64)
_SPACE = {"LDG": "g", "STG": "g", "ATOMG": "g", "LD": "g", "ST": "g", "ATOM": "g",
          "LDS": "s", "STS": "s", "ATOMS": "s", "LDL": "l", "STL": "l",
          "LDSM": "s",  # ldmatrix: each matrix 8 rows of 16 bytes, from 8 lanes' addresses
          "LDGSTS": "g"}  # cp.async: the global read (its shared write lands at the DEPBAR that covers it)
_OP = {"LDSM": "ldsm", "LDGSTS": "ldgsts"}  # Nsight's op_ of the metrics, where not ld / st
_BAR_KIND = ("BAR", "BAR.RED")  # CTA-wide waits; BAR.CNT (named barriers, arrive) issues as a plain instruction

# Tensor-core instructions (the ISA table's MMA_SHAPE): Nsight's op kind of the tensor pipe by mnemonic family;
# ops per warp instruction from xcc.backend.isa.tensor_ops.  The input type is IMMA's i8 or the atype modifier
# (f16, bf16); HMMA.*.F16 takes f16.
_TENSOR_FAMILY = {"HMMA": "hmma", "IMMA": "imma", "WGMMA": "gmma"}
TENSOR_KINDS = tuple(_TENSOR_FAMILY.values())


def tensor_op(inst) -> tuple[str, str, int]:
    """(Nsight op kind, input type, ops) of the tensor-core instruction ``inst``."""
    kind = _TENSOR_FAMILY[inst.mnemonic.split(".")[0]]
    dtype = "i8" if kind == "imma" else str(inst.mods.get("atype", "F16")).lower()
    return kind, dtype, tensor_ops(inst.mnemonic)


def mem_space(mnemonic: str) -> str | None:
    return _SPACE.get(mnemonic.removesuffix(".64"))


# ------------------------------------------------------------------------------ recording
class TraceRecorder:
    """Per-step records of the functional run: (pc, global warp ids) and, for memory
    instructions, (warps, sectors or wavefronts per warp, first-touched (DRAM) sectors per warp)."""

    def __init__(self, cap: int = TRACE_CAP):
        self.cap = cap
        self.pcs: list[int] = []
        self.warps: list = []  # per step: (first, last) warp range or an array of warp ids
        self.mem: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.sectors: dict[int, np.ndarray] = {}  # per global step: its distinct sectors, by warp (the L1 model)
        self.entries = 0
        self.ctas = 0  # CTAs whose whole execution is recorded
        self.seen: set[int] = set()  # global sectors touched so far (the L2/DRAM hit model)
        self.wave_start = (0, 0)
        self.stopped = False  # a wave overflowed: nothing after the recorded CTAs is recorded

    def begin_wave(self) -> None:
        self.wave_start = (len(self.pcs), self.entries)

    def end_wave(self, nctas: int) -> None:
        self.ctas += nctas

    def drop_wave(self) -> None:
        n, e = self.wave_start
        del self.pcs[n:], self.warps[n:]
        for k in [k for k in self.mem if k >= n]:
            del self.mem[k]
        for k in [k for k in self.sectors if k >= n]:
            del self.sectors[k]
        self.entries = e
        self.stopped = True

    def step_range(self, pc: int, w0: int, w1: int) -> None:
        self.pcs.append(pc)
        self.warps.append((w0, w1))
        self.entries += w1 - w0 + 1

    def step_array(self, pc: int, warps: np.ndarray) -> None:
        self.pcs.append(pc)
        self.warps.append(warps)
        self.entries += warps.size

    def global_access(self, warps: np.ndarray, addr: np.ndarray, width: int) -> None:
        """Sectors per warp of one global/generic access (``warps`` per executing thread, sorted)."""
        a = addr.astype(np.uint64)
        sec = a >> np.uint64(5)
        last = (a + np.uint64(width - 1)) >> np.uint64(5)
        if bool((last != sec).any()):
            warps, sec = np.concatenate([warps, warps]), np.concatenate([sec, last])
        order = np.lexsort((sec, warps))
        w, s = warps[order], sec[order]
        new = np.ones(w.size, bool)
        new[1:] = (w[1:] != w[:-1]) | (s[1:] != s[:-1])
        w, s = w[new], s[new]
        uw, start = np.unique(w, return_index=True)
        count = np.diff(np.append(start, w.size))
        seen = self.seen
        fresh = np.fromiter((x not in seen for x in s.tolist()), bool, s.size)
        seen.update(s.tolist())
        miss = np.add.reduceat(fresh.astype(np.int64), start)
        self.mem[len(self.pcs) - 1] = (uw, count, miss)
        self.sectors[len(self.pcs) - 1] = s.astype(np.int64)

    def shared_access(self, warps: np.ndarray, rel: np.ndarray, width: int, banks: int, bank_width: int) -> None:
        """Wavefronts per warp: the largest number of distinct words that fall in one bank."""
        word = rel.astype(np.int64) // bank_width
        nw = max(1, -(-width // bank_width))
        if nw > 1:
            warps = np.repeat(warps, nw)
            word = (word[:, None] + np.arange(nw)).ravel()
        order = np.lexsort((word, warps))
        w, wd = warps[order], word[order]
        new = np.ones(w.size, bool)
        new[1:] = (w[1:] != w[:-1]) | (wd[1:] != wd[:-1])
        w, wd = w[new], wd[new]
        bank = wd % banks
        order = np.lexsort((bank, w))
        w, bank = w[order], bank[order]
        head = np.ones(w.size, bool)
        head[1:] = (w[1:] != w[:-1]) | (bank[1:] != bank[:-1])
        starts = np.flatnonzero(head)
        per_bank = np.diff(np.append(starts, w.size))
        bw = w[starts]
        uw, ws = np.unique(bw, return_index=True)
        ways = np.maximum.reduceat(per_bank, ws)
        self.mem[len(self.pcs) - 1] = (uw, ways, np.zeros(uw.size, np.int64))

    def local_access(self, warps: np.ndarray, width: int) -> None:
        uw, start = np.unique(warps, return_index=True)
        active = np.diff(np.append(start, warps.size))
        self.mem[len(self.pcs) - 1] = (uw, -(-active * width // 32), np.zeros(uw.size, np.int64))

    def streams(self):
        """(warp ids, pcs, values, first-touched sectors, sector offsets, sectors) of every recorded entry,
        grouped by warp in program order: a global access's distinct sectors are
        ``sectors[offset : offset + value]`` (offset -1 for other entries)."""
        if not self.pcs:
            e = np.empty(0, np.int64)
            return e, e, e, e, e, e
        parts = [np.arange(w[0], w[1] + 1) if isinstance(w, tuple) else w for w in self.warps]
        lens = np.fromiter((p.size for p in parts), np.int64, len(parts))
        W = np.concatenate(parts).astype(np.int64)
        PC = np.repeat(np.asarray(self.pcs, np.int64), lens)
        V = np.zeros(W.size, np.int64)
        M = np.zeros(W.size, np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)])
        SO = np.full(W.size, -1, np.int64)
        base = 0
        for s, (uw, val, miss) in self.mem.items():
            pos = offs[s] + np.searchsorted(parts[s], uw)
            V[pos], M[pos] = val, miss
            if s in self.sectors:  # the warps' sector runs lie in warp order, val sectors each
                SO[pos] = base + np.concatenate([[0], np.cumsum(val)[:-1]])
                base += int(val.sum())
        SEC = (np.concatenate([self.sectors[s] for s in self.mem if s in self.sectors])
               if self.sectors else np.empty(0, np.int64))
        order = np.argsort(W, kind="stable")
        return W[order], PC[order], V[order], M[order], SO[order], SEC


# ------------------------------------------------------------------------------ timing
class _Static:
    """Per-pc issue facts read from the control codes and the machine description."""

    __slots__ = ("stall", "wait", "wsb", "rsb", "pipe", "interval", "bar", "space", "lat", "long", "store", "op",
                 "cp", "tensor", "l1")

    def __init__(self, inst, machine: Machine):
        d, c = inst.d, inst.ctrl
        issue = machine.data.get("issue", {})
        self.stall = max(1, c.stall)
        self.wait = tuple(k for k in range(NUM_SCOREBOARDS) if c.wait >> k & 1)
        self.wsb = c.wsb if c.wsb < NUM_SCOREBOARDS else -1
        self.rsb = c.rsb if c.rsb < NUM_SCOREBOARDS else -1
        self.pipe = d.pipe
        self.interval = 1.0 / float(issue.get(d.pipe, 1.0))
        self.bar = inst.mnemonic in _BAR_KIND
        self.space = mem_space(inst.mnemonic)
        self.lat = machine.latency(d.latency) if d.latency in machine.data["latency"] else 1
        self.tensor = None  # Nsight's op kind of a tensor-core instruction
        if inst.mnemonic in MMA_SHAPE:
            self.tensor, dtype, ops = tensor_op(inst)
            rate = machine.tensor_rate(dtype)
            if rate is not None:  # else 1 / [issue] tensor, as above
                self.interval = ops / (rate / int(machine.data["sm"]["subpartitions"]))
            self.lat = machine.tensor_latency(dtype)
        self.long = self.space in ("g", "l")
        self.store = self.space is not None and not any(o.is_def for o in d.operands)
        self.op = _OP.get(inst.mnemonic, "st" if self.store else "ld")
        # the L1's part in a global access: 1 a cacheable read (looked up, allocated on a miss), 0 a read that
        # bypasses it (BYPASS: .cg/.cv/.volatile/strong), -1 a store or atomic (write-through: invalidates)
        cacheable = any(m.name == "BYPASS" for m in d.mods)  # the ISA table's L1-cacheable global reads
        self.l1 = (0 if inst.mods.get("BYPASS") else 1) if cacheable else -1
        # cp.async: 1 an LDGSTS (joins the open group), 2 LDGDEPBAR (closes it), 3 + b DEPBAR b (waits for
        # all but the b most recently closed groups); 0 otherwise
        self.cp = {"LDGSTS": 1, "LDGDEPBAR": 2}.get(inst.mnemonic, 3 + int(inst.ops["b"]) if inst.mnemonic == "DEPBAR"
                                                     else 0)


def l1_capacity_sectors(machine: Machine, kernel, ctas_per_sm: int, dynamic_shared: int = 0) -> int:
    """Sectors of an SM's L1 data cache for a launch: the unified L1/shared array (``[memory] l1_bytes``)
    less the shared-memory carveout, the smallest of ``[memory] shared_carveouts_kb`` that holds the
    resident CTAs' shared memory (as the driver picks it when the kernel states no preference; CUDA C
    Programming Guide, "Shared Memory" for compute capability 9.0).  0 (no L1 for global data) where the
    description has no ``l1_bytes``."""
    mem = machine.data.get("memory", {})
    total = int(mem.get("l1_bytes", 0))
    if not total:
        return 0
    need = ctas_per_sm * (kernel.shared_bytes + dynamic_shared)
    carveouts = sorted(int(c) * 1024 for c in mem.get("shared_carveouts_kb", [0]))
    carve = next((c for c in carveouts if c >= need), need)
    return max(total - carve, 0) // int(mem.get("sector_bytes", 32))


def time_launch(rec: TraceRecorder, insts, kernel, machine: Machine, block_threads: int, total_ctas: int,
                dynamic_shared: int = 0) -> tuple[int, dict]:
    """Replay ``rec`` and return (cycles, metrics)."""
    W, PC, V, M, SO, SEC = rec.streams()
    sm_d, lat = machine.data["sm"], machine.data["latency"]
    mem_d = machine.data.get("memory", {})
    nsub = int(sm_d["subpartitions"])
    nsm = int(sm_d["count"])
    gto = str(sm_d.get("scheduler", "gto")).lower() == "gto"
    l2, dram = int(lat.get("l2_hit", 262)), int(lat.get("dram", 650))
    l1, lsu = int(lat.get("l1_hit", 38)), int(lat["lsu"])
    sec_rate = int(mem_d.get("l1_sectors_per_cycle", 4))
    sector_bytes = int(mem_d.get("sector_bytes", 32))
    l2_rate = machine.bandwidth("l2") / sector_bytes  # sectors per cycle, device-wide (inf: no limit)
    dram_rate = machine.bandwidth("dram") / sector_bytes
    bar_lat = int(lat.get("barrier", 1))
    wpc = -(-block_threads // 32)
    occ = occupancy(kernel, machine, block_threads, dynamic_shared)
    per_sm = max(1, occ.ctas_per_sm)
    static = [_Static(i, machine) for i in insts]

    nctas = rec.ctas
    nwarps = nctas * wpc
    bounds = np.searchsorted(W, np.arange(nwarps + 1))
    PCl, Vl, Ml, SOl, SECl = PC.tolist(), V.tolist(), M.tolist(), SO.tolist(), SEC.tolist()
    l1_cap = l1_capacity_sectors(machine, kernel, per_sm, dynamic_shared)
    l1_tags: list[OrderedDict] = [OrderedDict() for _ in range(nsm)]  # per SM: cached sectors, oldest use first
    l1_hit = [0, 0]  # sectors of cacheable global reads: hits, misses
    stall = dict.fromkeys(STALL_REASONS, 0)
    pc_samples = [[0] * len(STALL_REASONS) for _ in insts]  # per pc: warp-cycles by reason (Nsight's source view)
    pipe_insts: dict[str, int] = {}
    conf = {"ld": [0, 0], "st": [0, 0], "ldsm": [0, 0]}  # shared: [requests, wavefronts]
    glob = {"ld": [0, 0], "st": [0, 0], "ldgsts": [0, 0]}  # global: [requests, sectors]
    l2_sec = [0, 0, 0, 0]  # L2 sectors: read, read misses, written, written first-touched (DRAM writes)
    tensor_n = dict.fromkeys(TENSOR_KINDS, 0)  # tensor instructions by op kind
    tensor_busy = dict.fromkeys(TENSOR_KINDS, 0.0)  # ... and the cycles they held the tensor pipes

    # warp state
    pos = bounds[:-1].tolist()
    end = bounds[1:].tolist()
    ready = [0] * nwarps  # earliest issue time of the next instruction
    since = [0] * nwarps  # start of the current waiting interval
    w_wait = [0] * nwarps  # stall-count end
    w_sb = [0] * nwarps  # scoreboard end
    w_sbl = [False] * nwarps  # that scoreboard is a long one
    w_bar = [0] * nwarps  # barrier release
    sbs = [[0] * NUM_SCOREBOARDS for _ in range(nwarps)]
    sbl = [[False] * NUM_SCOREBOARDS for _ in range(nwarps)]
    cp_open = [0] * nwarps  # completion of the warp's open cp.async group (its LDGSTS so far)
    cp_groups: list[list[int]] = [[] for _ in range(nwarps)]  # completions of its closed, unwaited groups
    at_bar = [False] * nwarps
    done = [False] * nwarps
    wsp = [0] * nwarps  # sub-partition id
    # sub-partition / SM state
    nsp = nsm * nsub
    sp_warps: list[list[int]] = [[] for _ in range(nsp)]
    sp_last = [-1] * nsp
    sp_pipe: list[dict[str, float]] = [{} for _ in range(nsp)]
    sp_sched = [-1] * nsp  # time of the pending event, -1 none
    mio = [0.0] * nsm
    lg = [0.0] * nsm
    sm_free_slots: list[list[int]] = [list(range(per_sm)) for _ in range(nsm)]
    sm_resident = [0] * nsm
    sm_since = [0] * nsm
    sm_active = [0] * nsm
    cta_live = [0] * nctas
    cta_arrived = [0] * nctas
    cta_slot = [0] * nctas
    cta_sm = [0] * nctas
    thr_until = [0.0] * nwarps
    thr_why = ["math_pipe_throttle"] * nwarps
    warp_cycles = 0
    heap: list[tuple[int, int, int]] = []  # (time, arbitration rank, sub-partition)
    next_cta = 0
    t_end = 0
    l2_q = dram_q = 0.0  # next free time of the device-wide L2 and DRAM queues

    def schedule(sp: int, t: int) -> None:
        if sp_sched[sp] < 0 or t < sp_sched[sp]:
            sp_sched[sp] = t
            # the SM's shared units (MIO, LG) are arbitrated round-robin: in cycle t the SM's
            # sub-partition t % nsub is served first, then the next ones (a fixed order would let the
            # first sub-partitions starve the others and finish their warps early, leaving the units
            # idle at the end of a memory-bound phase)
            heapq.heappush(heap, (t, (sp - t) % nsub, sp))

    def dispatch(sm: int, t: int, most: int = 1 << 30) -> None:
        nonlocal next_cta
        while sm_free_slots[sm] and next_cta < nctas and most > 0:
            most -= 1
            c = next_cta
            next_cta += 1
            slot = sm_free_slots[sm].pop(0)
            cta_slot[c], cta_sm[c] = slot, sm
            if sm_resident[sm] == 0:
                sm_since[sm] = t
            sm_resident[sm] += 1
            live = 0
            for i in range(wpc):
                w = c * wpc + i
                sp = sm * nsub + (slot * wpc + i) % nsub
                wsp[w] = sp
                ready[w] = since[w] = w_wait[w] = w_sb[w] = w_bar[w] = t
                if pos[w] < end[w]:
                    sp_warps[sp].append(w)
                    live += 1
                    schedule(sp, t)
                else:
                    done[w] = True
            cta_live[c] = live
            if not live:
                finish_cta(c, t)

    def finish_cta(c: int, t: int) -> None:
        nonlocal t_end
        sm = cta_sm[c]
        t_end = max(t_end, t)
        sm_free_slots[sm].append(cta_slot[c])
        sm_free_slots[sm].sort()
        sm_resident[sm] -= 1
        if sm_resident[sm] == 0:
            sm_active[sm] += t - sm_since[sm]
        dispatch(sm, t)

    def release_bar(c: int, t: int) -> None:
        for i in range(wpc):
            w = c * wpc + i
            if at_bar[w]:
                at_bar[w] = False
                w_bar[w] = ready[w] = max(ready[w], t + bar_lat)
                schedule(wsp[w], ready[w])
        cta_arrived[c] = 0

    def throttle(w: int, st: _Static) -> tuple[float, str]:
        sp = wsp[w]
        f = sp_pipe[sp].get(st.pipe, 0.0)
        why = "math_pipe_throttle"
        if st.space == "s":
            m = mio[sp // nsub]
            if m > f:
                f, why = m, "mio_throttle"
        elif st.space is not None:
            m = lg[sp // nsub]
            if m > f:
                f, why = m, "lg_throttle"
        return f, why

    for _ in range(per_sm):  # breadth-first, one CTA per SM per round, as the hardware's CTA scheduler
        for sm in range(nsm):
            if next_cta < nctas:
                dispatch(sm, 0, 1)

    while heap:
        t, _, sp = heapq.heappop(heap)
        if sp_sched[sp] != t:
            continue
        sp_sched[sp] = -1
        warps = sp_warps[sp]
        cand = -1
        nxt = math.inf
        order = warps
        if gto and sp_last[sp] in warps:
            order = [sp_last[sp]] + [w for w in warps if w != sp_last[sp]]
        elif not gto and sp_last[sp] in warps:
            k = warps.index(sp_last[sp]) + 1
            order = warps[k:] + warps[:k]
        for w in order:
            if at_bar[w]:
                continue
            r = ready[w]
            if r > t:
                nxt = min(nxt, r)
                continue
            f, why = throttle(w, static[PCl[pos[w]]])
            if f > t:
                if f > thr_until[w]:
                    thr_until[w], thr_why[w] = f, why
                nxt = min(nxt, math.ceil(f))
                continue
            if cand < 0:
                cand = w
            else:
                nxt = t + 1
                break
        if cand < 0:
            if nxt < math.inf:
                schedule(sp, int(nxt))
            continue
        # -- issue cand at t
        w = cand
        sp_last[sp] = w
        i = pos[w]
        pc = PCl[i]
        st = static[pc]
        # attribute [since, t) then the issue cycle
        cur = since[w]
        row = pc_samples[pc]
        for until, why in ((w_wait[w], "wait"), (w_sb[w], "long_scoreboard" if w_sbl[w] else "short_scoreboard"),
                           (w_bar[w], "barrier"), (thr_until[w], thr_why[w])):
            u = min(math.ceil(until), t)
            if u > cur:
                stall[why] += u - cur
                row[_REASON_INDEX[why]] += u - cur
                cur = u
        if t > cur:
            stall["not_selected"] += t - cur
            row[1] += t - cur
        stall["selected"] += 1
        row[0] += 1
        warp_cycles += t + 1 - since[w]
        since[w] = t + 1
        thr_until[w] = 0.0
        pipe_insts[st.pipe] = pipe_insts.get(st.pipe, 0) + 1
        pipes = sp_pipe[sp]
        pipes[st.pipe] = max(pipes.get(st.pipe, 0.0), t) + st.interval
        sm = sp // nsub
        latency = st.lat
        if st.space == "s":
            ways = max(1, Vl[i])
            mio[sm] = max(mio[sm], t) + ways
            latency = lsu + ways - 1
            c2 = conf[st.op]
            c2[0] += 1
            c2[1] += ways
        elif st.space == "l":
            sectors = max(1, Vl[i])
            lg[sm] = max(lg[sm], t) + -(-sectors // sec_rate)
            latency = l1 + -(-sectors // sec_rate) - 1
        elif st.space is not None:
            sectors = max(1, Vl[i])
            lg[sm] = max(lg[sm], t) + -(-sectors // sec_rate)
            misses = Ml[i]
            below = sectors  # sectors the L1 passes on to the L2
            so = SOl[i]
            if so >= 0 and l1_cap:
                tags = l1_tags[sm]
                if st.l1 > 0:  # a cacheable read: LRU lookup, allocate on a miss
                    below = 0
                    for sec in SECl[so:so + Vl[i]]:
                        if sec in tags:
                            tags.move_to_end(sec)
                        else:
                            below += 1
                            tags[sec] = None
                            if len(tags) > l1_cap:
                                tags.popitem(last=False)
                    l1_hit[0] += Vl[i] - below
                    l1_hit[1] += below
                    misses = min(misses, below)  # replay order may differ from the functional run's
                elif st.l1 < 0:  # write-through: the written sectors leave this SM's L1
                    for sec in SECl[so:so + Vl[i]]:
                        tags.pop(sec, None)
            if below:
                # the device-wide L2, then (first-touched sectors) the DRAM: first come, first served
                start = l2_q if l2_q > t else t
                l2_q = start + below / l2_rate
                if misses:
                    if dram_q > start:
                        start = dram_q
                    dram_q = start + misses / dram_rate
                latency = (dram if misses else l2) + -(-sectors // sec_rate) - 1 + int(start - t)  # whole cycles waited
            else:
                latency = l1 + -(-sectors // sec_rate) - 1
            g2 = glob[st.op]
            g2[0] += 1
            g2[1] += sectors
            k = 2 if st.store else 0
            l2_sec[k] += below
            l2_sec[k + 1] += misses
        if st.tensor is not None:
            tensor_n[st.tensor] += 1
            tensor_busy[st.tensor] += st.interval
        if st.wsb >= 0:
            # a scoreboard counts its outstanding writes (the contract compiler/sim/isa/hazards.py checks): a wait
            # on it lasts until the last of them completes, not the last one issued (an L2 hit issued
            # after a DRAM miss, or an S2R after an LDG, on the same scoreboard)
            if t + latency >= sbs[w][st.wsb]:
                sbs[w][st.wsb] = t + latency
                sbl[w][st.wsb] = st.long
        if st.rsb >= 0:
            sbs[w][st.rsb] = max(sbs[w][st.rsb], t + 2)
        dep_t = 0
        if st.cp:  # cp.async: LDGSTS completes when its global read does; DEPBAR waits for the covered groups
            if st.cp == 1:
                cp_open[w] = max(cp_open[w], t + latency)
            elif st.cp == 2:
                cp_groups[w].append(cp_open[w])
                cp_open[w] = 0
            elif len(cp_groups[w]) > st.cp - 3:
                done_groups = cp_groups[w][:len(cp_groups[w]) - (st.cp - 3)]
                del cp_groups[w][:len(done_groups)]
                dep_t = max(done_groups)
        pos[w] = i + 1
        w_wait[w] = t + st.stall
        if i + 1 >= end[w]:  # the warp is finished
            done[w] = True
            warps.remove(w)
            c = w // wpc
            cta_live[c] -= 1
            t_end = max(t_end, t + 1)
            if cta_live[c] == 0:
                finish_cta(c, t + 1)
            elif cta_arrived[c] and cta_arrived[c] >= cta_live[c]:
                release_bar(c, t + 1)
        else:
            nst = static[PCl[i + 1]]
            sb_t, sb_long = 0, False
            for k in nst.wait:
                if sbs[w][k] > sb_t:
                    sb_t, sb_long = sbs[w][k], sbl[w][k]
            if dep_t > sb_t:  # after a DEPBAR: its wait on the LDGSTS (global memory) counts as a long scoreboard
                sb_t, sb_long = dep_t, True
            w_sb[w], w_sbl[w] = sb_t, sb_long
            w_bar[w] = 0
            ready[w] = max(w_wait[w], sb_t)
            if st.bar:
                c = w // wpc
                at_bar[w] = True
                cta_arrived[c] += 1
                if cta_arrived[c] >= cta_live[c]:
                    release_bar(c, t + 1)
        if warps:
            schedule(sp, t + 1)
        # a barrier deadlock in the replay (divergent BAR arrivals) is broken rather than hung
        if not heap and any(at_bar):
            for c in range(nctas):
                if cta_arrived[c]:
                    release_bar(c, t + 1)

    for sm in range(nsm):
        if sm_resident[sm]:
            sm_active[sm] += t_end - sm_since[sm]
    cycles = max(t_end, math.ceil(max(l2_q, dram_q)))  # ... and the device-wide queues have drained the stores
    scale = total_ctas / nctas if nctas else 0.0
    active = sum(sm_active)
    issued = stall["selected"]
    metrics: dict[str, float | int] = {}
    metrics["gpc__cycles_elapsed.max"] = round(cycles * scale) if nctas else 0
    metrics["sm__cycles_active.sum"] = active
    metrics["smsp__inst_executed.sum"] = issued
    metrics["sm__inst_executed.avg.per_cycle_active"] = issued / active if active else 0.0
    metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] = (
        100.0 * warp_cycles / (active * occ.max_warps_per_sm) if active else 0.0)
    metrics["sm__maximum_warps_per_active_cycle_pct"] = 100.0 * occ.fraction
    metrics["launch__occupancy_limit"] = occ.limiter
    metrics["smsp__warp_cycles.sum"] = warp_cycles
    for k in STALL_REASONS:
        metrics[STALL_PREFIX + k] = stall[k]
    for op in ("ld", "st", "ldsm"):
        req, wave = conf[op]
        metrics[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] = wave
        metrics[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] = wave - req
    for op in ("ld", "st", "ldgsts"):
        req, sec = glob[op]
        metrics[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] = req
        metrics[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] = sec
        metrics[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.ratio"] = sec / req if req else 0.0
    for p in sorted(pipe_insts):
        metrics[f"sm__inst_executed_pipe_{p}.sum"] = pipe_insts[p]
    metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] = l1_hit[0]
    metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"] = l1_hit[1]
    metrics["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"] = (
        100.0 * l1_hit[0] / (l1_hit[0] + l1_hit[1]) if l1_hit[0] + l1_hit[1] else 0.0)
    rd, rd_miss, wr, wr_dram = l2_sec
    metrics["lts__t_sectors_srcunit_tex_op_read.sum"] = rd
    metrics["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] = rd - rd_miss
    metrics["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"] = rd_miss
    metrics["lts__t_sectors_srcunit_tex_op_write.sum"] = wr
    metrics["dram__sectors_read.sum"] = rd_miss
    metrics["dram__sectors_write.sum"] = wr_dram
    metrics["dram__bytes_read.sum"] = rd_miss * sector_bytes
    metrics["dram__bytes_write.sum"] = wr_dram * sector_bytes
    # busy cycles of the device-wide queues over the recorded cycles
    for name, busy in (("dram__throughput", (rd_miss + wr_dram) / dram_rate), ("lts__throughput", (rd + wr) / l2_rate)):
        metrics[f"{name}.avg.pct_of_peak_sustained_elapsed"] = min(100.0, 100.0 * busy / cycles) if cycles else 0.0
    for kind in TENSOR_KINDS:
        metrics[f"sm__inst_executed_pipe_tensor_op_{kind}.sum"] = tensor_n[kind]
        metrics[f"sm__pipe_tensor_op_{kind}_cycles_active.avg.pct_of_peak_sustained_active"] = (
            100.0 * tensor_busy[kind] / (active * nsub) if active else 0.0)
    # the stall samples of each instruction (the pc a waiting warp will issue next), for hot-spot views:
    # rows [pc, selected, not_selected, wait, ...] in STALL_REASONS order, for every pc that issued
    metrics["xcc__pc_samples"] = [[pc, *row] for pc, row in enumerate(pc_samples) if row[0]]
    metrics["xcc__sampled_ctas"] = nctas
    metrics["xcc__total_ctas"] = total_ctas
    return int(metrics["gpc__cycles_elapsed.max"]), metrics
