"""The trace the cycle model replays: per-step records of the ISA interpreter's functional run.

Trace-driven, as in Accel-Sim's trace mode: the ISA interpreter (:mod:`xcc.sim.isa.emulator`) records,
step by step, which warps executed which pc and, for memory instructions, one number per warp - the
distinct sectors a global/generic access touches, the bytes a local access moves (local memory is
interleaved per thread, so the active threads' bytes are contiguous), the shared-memory wavefronts (the
largest number of distinct bank-width words in one bank: Nsight's ``l1tex__data_pipe_lsu_wavefronts``) -
plus, for global accesses, the sectors touched for the first time in the launch (the L2/DRAM hit model of
:mod:`xcc.sim.perf.memsys`).  Nothing recorded feeds back into the functional results.

Sector ids are addresses over ``sector_bytes`` (``[memory] sector_bytes`` of the description; the replay
checks that its machine has the same).  **Bounded memory:** at most :data:`TRACE_CAP` warp-instructions are
recorded; a wave that overflows is dropped and the CTAs after the recorded ones run functionally only
(:func:`xcc.sim.perf.timing.time_launch` scales the cycles).
"""

from __future__ import annotations

import numpy as np

from xcc.backend.machine import load_machine
from xcc.diagnostics import XccError

__all__ = ["TraceRecorder", "TRACE_CAP"]

TRACE_CAP = 1 << 21
"""Warp-instructions recorded per launch; later waves run untimed and cycles are extrapolated."""


class TraceRecorder:
    """Per-step records of the functional run: (pc, global warp ids) and, for memory instructions, (warps,
    sectors, bytes or wavefronts per warp, first-touched (DRAM) sectors per warp).  ``sector_bytes``: the
    machine's ``[memory] sector_bytes`` (None: the default description's)."""

    def __init__(self, cap: int = TRACE_CAP, *, sector_bytes: int | None = None):
        if sector_bytes is None:
            sector_bytes = int(load_machine().data["memory"]["sector_bytes"])
        if sector_bytes <= 0 or sector_bytes & (sector_bytes - 1):
            raise XccError(f"[memory] sector_bytes = {sector_bytes}: the trace needs a power of two")
        self.sector_bytes = sector_bytes
        self._shift = np.uint64(sector_bytes.bit_length() - 1)
        self.cap = cap
        self.pcs: list[int] = []
        self.warps: list = []  # per step: (first, last) warp range or an array of warp ids
        self.mem: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.sectors: dict[int, np.ndarray] = {}  # per global step: its distinct sectors, by warp (the L1 model)
        # for the advisor's what-ifs (xcc.sim.perf.idealise), never read by the replay itself:
        self.gbytes: dict[int, np.ndarray] = {}  # per global step: the bytes its active threads access, by warp
        self.masks: dict[int, np.ndarray] = {}  # per step with partial warps: each warp's lane mask
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
        for d in (self.sectors, self.gbytes, self.masks):
            for k in [k for k in d if k >= n]:
                del d[k]
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

    def lanes(self, threads: np.ndarray) -> None:
        """The lane mask of each warp of the last step, whose ``threads`` (sorted slots) leave some of its
        warps' lanes out (a step of whole warps records none: all 32 lanes)."""
        w = threads >> 5
        head = np.flatnonzero(np.concatenate([[True], w[1:] != w[:-1]]))
        bits = np.left_shift(np.uint64(1), (threads & 31).astype(np.uint64))
        self.masks[len(self.pcs) - 1] = np.bitwise_or.reduceat(bits, head)

    def global_access(self, warps: np.ndarray, addr: np.ndarray, width: int) -> None:
        """Sectors per warp of one global/generic access (``warps`` per executing thread, sorted)."""
        head = np.flatnonzero(np.concatenate([[True], warps[1:] != warps[:-1]]))
        self.gbytes[len(self.pcs) - 1] = np.diff(np.append(head, warps.size)) * width
        a = addr.astype(np.uint64)
        sec = a >> self._shift
        last = (a + np.uint64(width - 1)) >> self._shift
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
        """Bytes per warp of one local access (the replay turns them into sectors)."""
        uw, start = np.unique(warps, return_index=True)
        active = np.diff(np.append(start, warps.size))
        self.mem[len(self.pcs) - 1] = (uw, active * width, np.zeros(uw.size, np.int64))

    def _layout(self):
        """(warps of each step, entry offset of each step, the order that groups entries by warp)."""
        parts = [np.arange(w[0], w[1] + 1) if isinstance(w, tuple) else w for w in self.warps]
        lens = np.fromiter((p.size for p in parts), np.int64, len(parts))
        offs = np.concatenate([[0], np.cumsum(lens)])
        W = np.concatenate(parts).astype(np.int64)
        return parts, lens, offs, W, np.argsort(W, kind="stable")

    def streams(self):
        """(warp ids, pcs, values, first-touched sectors, sector offsets, sectors) of every recorded entry,
        grouped by warp in program order: a global access's distinct sectors are
        ``sectors[offset : offset + value]`` (offset -1 for other entries)."""
        if not self.pcs:
            e = np.empty(0, np.int64)
            return e, e, e, e, e, e
        parts, lens, offs, W, order = self._layout()
        PC = np.repeat(np.asarray(self.pcs, np.int64), lens)
        V = np.zeros(W.size, np.int64)
        M = np.zeros(W.size, np.int64)
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
        return W[order], PC[order], V[order], M[order], SO[order], SEC

    def extras(self):
        """(active bytes of each global access, lane mask of each entry) in :meth:`streams`' order: 0 for
        an entry that is no global access; all 32 lanes for an entry of a whole-warp step."""
        if not self.pcs:
            return np.empty(0, np.int64), np.empty(0, np.uint64)
        parts, _, offs, W, order = self._layout()
        G = np.zeros(W.size, np.int64)
        K = np.full(W.size, 0xFFFFFFFF, np.uint64)
        for s, nbytes in self.gbytes.items():
            G[offs[s] + np.searchsorted(parts[s], self.mem[s][0])] = nbytes
        for s, masks in self.masks.items():
            K[offs[s]:offs[s + 1]] = masks
        return G[order], K[order]
