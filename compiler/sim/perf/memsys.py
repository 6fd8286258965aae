"""The cycle model's memory system: per-SM shared-memory banks and L1, device-wide L2 and DRAM queues.

Called by the replay (:mod:`xcc.sim.perf.replay`) for every memory instruction it issues, in one time order
over every SM; it returns the instruction's latency (from issue to the release of its scoreboard) and keeps
the traffic counts that :mod:`xcc.sim.perf.metrics` reports under Nsight Compute's names.

* **Shared memory.**  ``[latency] lsu + wavefronts - 1``; the SM's shared-memory unit (MIO) is busy one cycle
  per wavefront (``mio_throttle``).  LDSM (ldmatrix) counts the wavefronts of each matrix's 8 rows of 16
  bytes (from 8 lanes' addresses).
* **Local memory** is interleaved per thread (coalesced) and always hits in L1, without L2 traffic:
  ``[latency] l1_hit + ceil(sectors / l1_sectors_per_cycle) - 1``.
* **L1 (simple, stated):** each SM has an L1 data cache of ``[memory] sector_bytes`` sectors, LRU, of
  ``[memory] l1_bytes`` less the shared-memory carveout (:func:`l1_capacity_sectors`).  A global read (LDG,
  generic LD, LDGSTS) looks its sectors up there, in the replay's time order, and allocates the missing ones;
  if every sector hits it costs ``l1_hit`` (+ the sector transfer) and no L2 traffic.  Reads marked BYPASS
  (PTX ``.cg``, ``.cv``, ``.volatile``, strong loads at ``.gpu``/``.sys`` scope) skip the L1; stores and
  atomics write through and drop their sectors from the SM's L1 (other SMs' L1s are not coherent, as on the
  hardware).  The L1 is busy one cycle per ``[memory] l1_sectors_per_cycle`` sectors (``lg_throttle``).
* **L2 and DRAM:** what the L1 passes on goes to the L2: a sector's first access in the launch (in the
  functional run's order) goes on to DRAM, every later one hits in L2 (an L2 of unbounded capacity).  The L2
  and the DRAM are each one first-come first-served server shared by every SM: a next-free time that an
  access moves on by its sectors over ``[memory] l2_bytes_per_cycle / sector_bytes`` (every sector of a
  global access, hit or miss, load or store) or ``dram_bytes_per_cycle / sector_bytes`` (the access's
  first-touched sectors).  A load waits for the L2 to be free (from its issue), then, if it has misses, for
  the DRAM (from when its L2 turn came); that wait is added to its latency (``[latency] l2_hit`` or ``dram``
  plus ``ceil(sectors / l1_sectors_per_cycle) - 1``), so it shows as ``long_scoreboard`` stalls, as Nsight
  shows memory-bound waits.  A store's first-touched sectors are written to DRAM when it issues, occupying
  it; no warp waits for a store, but the launch ends only when the queues have drained
  (:meth:`MemorySystem.drained`).  A description without these bandwidths has no limit.

Sources: the L1 hit, L2 hit and DRAM latencies in ``machines/xg1.toml`` (Luo et al. 2024, arXiv:2402.13499),
the sector size (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"), the L1/shared capacity
and carveouts (NVIDIA Hopper Tuning Guide; CUDA C Programming Guide, compute capability 9.0), the device-wide
bandwidths (NVIDIA H100 datasheet; Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth").

Not modelled: L2 capacity (evictions), L1 sectoring into 128-byte lines and ``L1::no_allocate``/``evict_*``
hints, DRAM pages and banks, store latency, LDGSTS's shared-memory write (and its MIO cost).
"""

from __future__ import annotations

from collections import OrderedDict

from xcc.backend.machine import Machine
from xcc.sim.perf.facts import GLOBAL_OPS, SHARED_OPS, InstFacts, machine_value

__all__ = ["MemorySystem", "l1_capacity_sectors"]


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
    return max(total - carve, 0) // int(machine_value(machine, "memory", "sector_bytes"))


class MemorySystem:
    """The memory units of ``nsm`` SMs and the device's L2 and DRAM, with their traffic counts.
    ``sectors``: the trace's distinct sectors of the global accesses (:meth:`TraceRecorder.streams`)."""

    def __init__(self, machine: Machine, nsm: int, l1_cap: int, sectors: list[int]):
        self.lsu = machine.latency("lsu")
        self.l1 = machine.latency("l1_hit")
        self.l2 = machine.latency("l2_hit")
        self.dram = machine.latency("dram")
        self.sec_rate = int(machine_value(machine, "memory", "l1_sectors_per_cycle"))
        self.sector_bytes = int(machine_value(machine, "memory", "sector_bytes"))
        self.l2_rate = machine.bandwidth("l2") / self.sector_bytes  # sectors per cycle, device-wide (inf: no limit)
        self.dram_rate = machine.bandwidth("dram") / self.sector_bytes
        self.sectors = sectors
        self.l1_cap = l1_cap
        self.l1_tags: list[OrderedDict] = [OrderedDict() for _ in range(nsm)]  # per SM: cached sectors, oldest first
        self.mio = [0.0] * nsm  # next free time of each SM's shared-memory unit
        self.lg = [0.0] * nsm  # ... and of its L1
        self.l2_q = self.dram_q = 0.0  # next free time of the device-wide L2 and DRAM queues
        # counts
        self.conf = {op: [0, 0] for op in SHARED_OPS}  # shared: [requests, wavefronts]
        self.glob = {op: [0, 0] for op in GLOBAL_OPS}  # global: [requests, sectors]
        self.l1_hit = [0, 0]  # sectors of cacheable global reads: hits, misses
        self.l2_sec = [0, 0, 0, 0]  # L2 sectors: read, read misses, written, written first-touched (DRAM writes)

    def shared(self, sm: int, t: int, op: str, ways: int) -> int:
        """Latency of a shared access of ``ways`` wavefronts issued at ``t``."""
        ways = max(1, ways)
        self.mio[sm] = max(self.mio[sm], t) + ways
        c = self.conf[op]
        c[0] += 1
        c[1] += ways
        return self.lsu + ways - 1

    def local(self, sm: int, t: int, nbytes: int) -> int:
        """Latency of a local access moving ``nbytes`` (an L1 hit)."""
        sectors = max(1, -(-nbytes // self.sector_bytes))
        self.lg[sm] = max(self.lg[sm], t) + -(-sectors // self.sec_rate)
        return self.l1 + -(-sectors // self.sec_rate) - 1

    def global_access(self, sm: int, t: int, st: InstFacts, n: int, misses: int, offset: int) -> int:
        """Latency of a global access issued at ``t``: ``n`` distinct sectors (``self.sectors[offset:offset +
        n]``; offset -1: not recorded), ``misses`` of them first touched in the launch."""
        sec_rate = self.sec_rate
        sectors = max(1, n)
        self.lg[sm] = max(self.lg[sm], t) + -(-sectors // sec_rate)
        below = sectors  # sectors the L1 passes on to the L2
        if offset >= 0 and self.l1_cap:
            if st.l1 > 0:  # a cacheable read: LRU lookup, allocate on a miss
                below = self._l1_read(sm, offset, n)
                misses = min(misses, below)  # replay order may differ from the functional run's
            elif st.l1 < 0:  # write-through: the written sectors leave this SM's L1
                tags = self.l1_tags[sm]
                for sec in self.sectors[offset:offset + n]:
                    tags.pop(sec, None)
        if below:
            # the device-wide L2, then (first-touched sectors) the DRAM: first come, first served
            start = self.l2_q if self.l2_q > t else t
            self.l2_q = start + below / self.l2_rate
            if misses:
                if self.dram_q > start:
                    start = self.dram_q
                self.dram_q = start + misses / self.dram_rate
            latency = (self.dram if misses else self.l2) + -(-sectors // sec_rate) - 1 + int(start - t)  # whole cycles
        else:
            latency = self.l1 + -(-sectors // sec_rate) - 1
        g = self.glob[st.op]
        g[0] += 1
        g[1] += sectors
        k = 2 if st.store else 0
        self.l2_sec[k] += below
        self.l2_sec[k + 1] += misses
        return latency

    def _l1_read(self, sm: int, offset: int, n: int) -> int:
        """Look ``n`` sectors up in the SM's L1 (LRU), allocating the missing ones; the misses."""
        tags, cap = self.l1_tags[sm], self.l1_cap
        below = 0
        for sec in self.sectors[offset:offset + n]:
            if sec in tags:
                tags.move_to_end(sec)
            else:
                below += 1
                tags[sec] = None
                if len(tags) > cap:
                    tags.popitem(last=False)
        self.l1_hit[0] += n - below
        self.l1_hit[1] += below
        return below

    def drained(self) -> float:
        """When the device-wide queues have served every access (the stores' DRAM writes included)."""
        return max(self.l2_q, self.dram_q)
