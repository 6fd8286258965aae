"""Microbenchmarks: recover the machine description's latencies and rates from the cycle model.

    python bench/microbench.py [--machine FILE_OR_NAME] [--arch sm_80|sm_90] [--no-write]

Runs the kernels of ``examples/microbench.cu`` through xcc (the ISA interpreter and the cycle
model of ``compiler/sim/perf/timing.py``), derives each figure from the launches' cycles and Nsight-named
metrics, and prints a table: the machine description's value, the measured one, the error. With
the default machine and without ``--no-write`` it also writes the table as the microbenchmark
section of docs/BENCHMARKS.md (between the ``microbench`` markers; ``bench/run.py`` includes
the same section when it rewrites the file).

Every latency and rate is a slope, as in Wong et al. (ISPASS 2010) and Jia et al. (2018): the
same kernel at two sizes, the difference in cycles over the difference in work, so launch,
set-up and drain costs cancel. Nothing here is fitted or assumed: the figures come from runs.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("XCC_CACHE_DIR", tempfile.mkdtemp(prefix="xcc-bench-"))

from xcc import runtime as rt  # noqa: E402
from xcc.backend.machine import Machine, load_machine  # noqa: E402
from xcc.driver import CompileOptions, compile_module, read_source  # noqa: E402

PTX = {arch: ROOT / "examples" / f"microbench.{arch}.ptx" for arch in ("sm_80", "sm_90")}
BENCHMARKS_MD = ROOT / "docs" / "BENCHMARKS.md"
BEGIN, END = "<!-- microbench:begin -->", "<!-- microbench:end -->"
TOLERANCE = 0.05  # relative, for the figures that are slopes of cycles

CHAIN_SIZES = (64, 128)  # the template instances of the dependent chains
STREAM_ROUNDS = (16, 32)  # ... and of the independent streams
CHAINS = {  # latency class -> kernel stem
    "fma": "ffma_chain", "alu": "alu_chain", "sfu": "mufu_chain", "fp64": "dfma_chain", "tensor": "hmma_chain"}
STREAMS = {"fma": "ffma_streams", "alu": "alu_streams", "sfu": "mufu_streams", "fp64": "dfma_streams",
           "tensor": "hmma_streams"}  # pipe -> kernel stem
MMA_FRAGMENT = np.uint32(0x24002400)  # f16x2 (2^-6, 2^-6): the initial mma's A and B elements
HMMA_FLOP = 2 * 8 * 8 * 16  # one HMMA.16816: an 8-row half of an m16n8k16 product (multiply + add)
IMMA_OPS = 2 * 8 * 8 * 32  # one IMMA.16832: an 8-row half of an m16n8k32 int8 product
IMMA_FRAGMENT = np.uint32(0x01010101)  # s8x4 (1, 1, 1, 1): the initial int8 mma's A and B elements
MEM_STREAM_LOADS = 32  # independent loads per thread of the memory-throughput kernels
MEM_STREAM_WARPS = (16, 32)  # ... and their CTA sizes in warps
UNROLL = 16  # dependent loads per trip of the chase loops
BANK_STRIDES = tuple(range(1, 33))
DRAM_CTAS_PER_SM = (1, 2)  # the DRAM bandwidth kernel's grid: this many CTAs of 256 threads per SM
L2_PASSES = (4, 8)  # ... and the L2 bandwidth kernel's passes over its footprint (one CTA per SM)
SECTOR_STRIDES = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Figure:
    group: str  # "latency", "issue", "bank conflicts", "coalescing"
    name: str  # what was measured, e.g. "fma latency (dependent FFMA chain)"
    key: str  # where the description holds it, e.g. "[latency] fma"
    unit: str
    expected: float
    measured: float
    exact: bool  # a count that must match exactly, not a slope within TOLERANCE

    @property
    def error(self) -> float:
        return (self.measured - self.expected) / self.expected

    @property
    def ok(self) -> bool:
        if self.exact:
            return self.measured == self.expected
        return abs(self.error) <= TOLERANCE


def load(path, device):
    """The microbenchmark module ``path`` on ``device``, compiled as written: no IR pass and no pre-RA scheduling.
    Their loops load one address again and again and chain one value through tensor ops on purpose; the optimiser
    would hoist, merge or reorder exactly what they time (benchmark authors guard real GPUs' compilers with
    volatile or inline assembly). The backend keeps its other -O3 settings (post-RA scheduling, control codes)."""
    options = CompileOptions(passes="", pre_schedule=False, machine=device.machine.name)
    image = compile_module([read_source(str(path))], options, machine=device.machine)
    return rt.load_module(image.to_bytes(), device=device)


class Microbench:
    """The microbenchmark kernels loaded on a device with the machine description ``machine``."""

    def __init__(self, machine: str | Path | Machine = "xg1", arch: str = "sm_80"):
        self.machine = machine if isinstance(machine, Machine) else load_machine(machine)
        self.device = rt.Device(machine=self.machine)
        self.module = load(PTX[arch], self.device)
        self.subpartitions = int(self.machine.data["sm"]["subpartitions"])
        self.arch = arch
        self._lrr = None

    def launch(self, name: str, grid, block, args, lrr: bool = False):
        device, module = self.lrr() if lrr else (self.device, self.module)
        dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
        return module.get_function(name).launch(grid, block, dev)

    def lrr(self):
        """(device, module) of the same description with loose round-robin warp scheduling, for the tensor
        throughput kernel. Under greedy-then-oldest, the oldest warps take every issue slot they can use
        and the youngest ones starve, then finish alone, latency-bound (a warp keeps at most 4 to 6 HMMAs
        in flight: its chains, or the 6 scoreboards), so the kernel's tail grows with its length and the
        slope over rounds is not the pipe's rate (from -20% to +1%, depending on latency x rate)."""
        if self._lrr is None:
            data = copy.deepcopy(self.machine.data)
            data["sm"]["scheduler"] = "lrr"
            m = Machine(self.machine.name, data, hashlib.sha256((self.machine.hash + ":lrr").encode()).hexdigest())
            device = rt.Device(machine=m)
            self._lrr = device, load(PTX[self.arch], device)
        return self._lrr

    # ------------------------------------------------------------------ latencies
    def _chain(self, cls: str, n: int):
        stem = f"{CHAINS[cls]}_{n}"
        if cls == "fma":
            return self.launch(stem, 1, 32, [np.zeros(32, np.float32), np.float32(1.0001), np.float32(0.5)])
        if cls == "alu":
            return self.launch(stem, 1, 32, [np.zeros(32, np.uint32), np.uint32(0x9E3779B9)])
        if cls == "sfu":
            return self.launch(stem, 1, 32, [np.zeros(32, np.float32), np.float32(0.5)])
        if cls == "tensor":
            return self.launch(stem, 1, 32, [np.zeros(32, np.float32), MMA_FRAGMENT, MMA_FRAGMENT])
        return self.launch(stem, 1, 32, [np.zeros(32, np.float64), np.float64(1.0001), np.float64(0.5)])

    def chain_latency(self, cls: str) -> float:
        """Cycles per instruction of a dependent chain (one warp): the class's latency. For ``tensor``
        per mma.sync m16n8k16: its two HMMA.16816 halves are independent chains, the second issued a
        pipe interval after the first, so a link of the chain costs one latency."""
        a, b = CHAIN_SIZES
        return (self._chain(cls, b).cycles - self._chain(cls, a).cycles) / (b - a)

    def _ring(self, n: int, stride: int = 32) -> rt.DeviceArray:
        """A cycle of ``n`` 64-bit pointers ``stride`` bytes apart (one 32-byte sector each)."""
        words = stride // 8
        arr = rt.zeros(n * words, np.uint64, self.device)
        host = np.zeros(n * words, np.uint64)
        i = np.arange(n, dtype=np.uint64)
        host[(i * words).astype(np.int64)] = np.uint64(arr.ptr) + (i + np.uint64(1)) % np.uint64(n) * np.uint64(stride)
        return arr.copy_from_host(host)

    def _chase(self, ring: rt.DeviceArray, iters: int, kernel: str = "chase_global") -> int:
        out = rt.zeros(1, np.uint64, self.device)
        st = self.launch(kernel, 1, 1, [np.uint64(ring.ptr), np.int32(iters), out])
        return st.cycles

    def dram_latency(self, iters: int = 16) -> float:
        """Pointer chase over more sectors than it touches: every load is a sector's first touch."""
        ring = self._ring(2 * iters * UNROLL)
        return (self._chase(ring, 2 * iters) - self._chase(ring, iters)) / (iters * UNROLL)

    def l2_latency(self, warm: int = 8, iters: int = 16) -> float:
        """Pointer chase around a cycle of ``warm * 16`` sectors: the first pass misses, later ones
        hit; the slope over extra passes is the L2 hit latency."""
        ring = self._ring(warm * UNROLL)
        return (self._chase(ring, warm + 2 * iters) - self._chase(ring, warm + iters)) / (iters * UNROLL)

    def l1_latency(self, warm: int = 8, iters: int = 16) -> float:
        """The same chase with cached loads (.ca): after the first pass the cycle sits in the SM's L1."""
        ring = self._ring(warm * UNROLL)
        return (self._chase(ring, warm + 2 * iters, "chase_global_ca")
                - self._chase(ring, warm + iters, "chase_global_ca")) / (iters * UNROLL)

    def _chase_shared(self, iters: int, n: int = 64, stride: int = 1) -> int:
        out = rt.zeros(1, np.uint32, self.device)
        return self.launch("chase_shared", 1, 1, [out, np.int32(n), np.int32(stride), np.int32(iters)]).cycles

    def shared_latency(self, iters: int = 16) -> float:
        return (self._chase_shared(2 * iters) - self._chase_shared(iters)) / (iters * UNROLL)

    # ------------------------------------------------------------------ issue rates
    def _streams(self, pipe: str, rounds: int, stats: bool = False):
        stem = f"{STREAMS[pipe]}_{rounds}"
        lrr = pipe == "tensor"
        out = rt.zeros(1024, np.float32, self.lrr()[0]) if lrr else None
        if pipe == "tensor":
            args = [out, MMA_FRAGMENT, MMA_FRAGMENT]
        elif pipe == "fma":
            args = [np.zeros(1024, np.float32), np.float32(1.0001), np.float32(0.5)]
        elif pipe == "alu":
            args = [np.zeros(1024, np.uint32), np.uint32(0x9E3779B9)]
        elif pipe == "sfu":
            args = [np.zeros(1024, np.float32), np.float32(0.5)]
        else:
            args = [np.zeros(1024, np.float64), np.float64(1.0001), np.float64(0.5)]
        st = self.launch(stem, 1, 1024, args, lrr)
        if stats:
            return st, out
        return st.cycles, st.metrics[f"sm__inst_executed_pipe_{pipe}.sum"]

    def issue_rate(self, pipe: str) -> float:
        """Instructions of ``pipe`` per cycle per sub-partition: one CTA of 32 warps (one SM, 8 warps
        per scheduler) of independent streams; d(pipe instructions) / d(cycles) / subpartitions.
        ``tensor`` (HMMA.16816 halves) runs with loose round-robin scheduling (:meth:`lrr`)."""
        (c0, i0), (c1, i1) = (self._streams(pipe, r) for r in STREAM_ROUNDS)
        return (i1 - i0) / (c1 - c0) / self.subpartitions

    def tensor_flops(self) -> float:
        """Dense FP16 FLOP per cycle per SM: the independent-accumulator mma.sync kernel (one CTA of 32
        warps, 2 accumulators each, loose round-robin scheduling: :meth:`lrr`) at 16 and 32 rounds;
        d(HMMA.16816.F32 executed) * 2048 / d(cycles).
        The sums of the accumulators must be finite and positive (the run computes, not only times)."""
        (st0, out0), (st1, out1) = (self._streams("tensor", r, stats=True) for r in STREAM_ROUNDS)
        for st, out in ((st0, out0), (st1, out1)):
            hmma = st.instructions_executed.get("HMMA.16816.F32", 0)
            res = out.copy_to_host()
            if hmma != st.metrics["sm__inst_executed_pipe_tensor.sum"] or not (np.isfinite(res) & (res > 0)).all():
                raise RuntimeError(f"{st.kernel}: {hmma} HMMA.16816.F32 of "
                                   f"{st.metrics['sm__inst_executed_pipe_tensor.sum']} tensor instructions, "
                                   f"outputs {res[:4]}")
        n0, n1 = (st.instructions_executed["HMMA.16816.F32"] for st in (st0, st1))
        return (n1 - n0) * HMMA_FLOP / (st1.cycles - st0.cycles)

    def int8_tensor_ops(self) -> float:
        """Dense int8 ops per cycle per SM: the mma.sync m16n8k32 s8 kernel, as :meth:`tensor_flops`;
        d(IMMA.16832 executed) * 4096 / d(cycles). Every tensor instruction must be an IMMA (counted by
        ``sm__inst_executed_pipe_tensor_op_imma.sum``) and the accumulators' sums must not all be zero."""
        device, _ = self.lrr()
        runs = []
        for r in STREAM_ROUNDS:
            out = rt.zeros(1024, np.int32, device)
            st = self.launch(f"imma_streams_{r}", 1, 1024, [out, IMMA_FRAGMENT, IMMA_FRAGMENT], lrr=True)
            n = st.instructions_executed.get("IMMA.16832", 0)
            m = st.metrics
            if not n or n != m["sm__inst_executed_pipe_tensor.sum"] or n != m["sm__inst_executed_pipe_tensor_op_imma.sum"] \
                    or not out.copy_to_host().any():
                raise RuntimeError(f"{st.kernel}: {n} IMMA.16832 of {m['sm__inst_executed_pipe_tensor.sum']} tensor "
                                   "instructions, or all-zero accumulators")
            runs.append((n, st.cycles))
        (n0, c0), (n1, c1) = runs
        return (n1 - n0) * IMMA_OPS / (c1 - c0)

    # ------------------------------------------------------------------ memory throughput
    def _mem_streams(self, space: str, warps: int, stride: int):
        k, block = MEM_STREAM_LOADS, 32 * warps
        if space == "global":
            src = np.zeros(k * 32768, np.float32)  # thread t's k-th load: in[t * stride + k * 32768]
            st = self.launch(f"gload_streams_{k}", 1, block, [src, np.zeros(block, np.float32), np.int32(stride)])
            return st.cycles, st.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
        st = self.launch(f"sload_streams_{k}", 1, block, [np.zeros(block, np.float32), np.int32(stride)])
        return st.cycles, st.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]

    def memory_throughput(self, space: str, stride: int) -> float:
        """Global: 32-byte sectors per cycle per SM; shared: wavefronts per cycle per SM. One CTA of
        16 or 32 warps (4 or 8 per scheduler), 32 independent loads per thread (lane l at word
        l * stride); the slope is over the number of warps, so that the per-warp epilogue (the sum
        of the loaded values, which grows with the loads per thread) cancels."""
        (c0, n0), (c1, n1) = (self._mem_streams(space, w, stride) for w in MEM_STREAM_WARPS)
        return (n1 - n0) / (c1 - c0)

    # ------------------------------------------------------------------ device-wide bandwidths
    def _dram_stream(self, per_sm: int):
        nsm = int(self.machine.data["sm"]["count"])
        grid, block = nsm * per_sm, 256
        n = grid * block
        st = self.launch("dram_stream", grid, block, [np.ones(8 * n * 4, np.float32), np.zeros(n, np.float32)])
        m = st.metrics
        return st.cycles, m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"], st

    def dram_bandwidth(self) -> float:
        """Device-wide DRAM bytes per cycle: one and two CTAs of 256 threads per SM, each thread reading
        8 16-byte pieces that nothing else reads (every sector a first touch: a DRAM read) and writing
        nothing; d(dram__bytes_read + dram__bytes_write) / d(cycles). (With a float stored per thread, the
        stores' DRAM writes came after the reads had drained, in the last loads' latency, at both sizes,
        so the slope over-counted by their 3%.)"""
        (c0, b0, _), (c1, b1, _) = (self._dram_stream(k) for k in DRAM_CTAS_PER_SM)
        return (b1 - b0) / (c1 - c0)

    def _l2_stream(self, passes: int):
        nsm = int(self.machine.data["sm"]["count"])
        block = 128
        st = self.launch("l2_stream", nsm, block, [np.ones(8 * block * 4, np.float32),
                                                   np.zeros(nsm * block, np.float32), np.int32(passes)])
        sector = int(self.machine.data.get("memory", {}).get("sector_bytes", 32))
        return st.cycles, st.metrics["lts__t_sectors_srcunit_tex_op_read.sum"] * sector, st

    def l2_bandwidth(self) -> float:
        """Device-wide L2 bytes per cycle: one CTA of 128 threads per SM, all re-reading the same 16 KiB
        (ld.global.cg: L2 only) 4 and 8 times; every sector after its first touch hits;
        d(lts__t_sectors_srcunit_tex_op_read * sector bytes) / d(cycles)."""
        (c0, b0, _), (c1, b1, _) = (self._l2_stream(p) for p in L2_PASSES)
        return (b1 - b0) / (c1 - c0)

    # ------------------------------------------------------------------ shared-memory banks
    def _smem_stride(self, stride: int, iters: int):
        st = self.launch("smem_stride", 1, 32, [np.zeros(32, np.uint32), np.int32(stride), np.int32(iters)])
        m = st.metrics
        waves = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
        requests = waves - m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
        return st.cycles, waves, requests

    def bank_conflicts(self, stride: int, iters: int = 4) -> tuple[float, float]:
        """(wavefronts per request from the metrics, wavefronts per request from the cycles) of a warp
        whose lane l reads word l * stride. From the cycles: a dependent load costs ``lsu + wavefronts
        - 1``, so wavefronts = 1 + (cycles per load at this stride - cycles per load at stride 1)."""
        c0, _, _ = self._smem_stride(stride, iters)
        c1, w1, r1 = self._smem_stride(stride, 2 * iters)
        per_load = (c1 - c0) / (iters * UNROLL)
        if stride == 1:
            base = per_load
        else:
            b0, _, _ = self._smem_stride(1, iters)
            b1, _, _ = self._smem_stride(1, 2 * iters)
            base = (b1 - b0) / (iters * UNROLL)
        return w1 / r1, 1 + per_load - base

    # ------------------------------------------------------------------ coalescing
    def sectors_per_request(self, stride: int) -> tuple[float, float]:
        """(load, store) 32-byte sectors per warp request: 2 CTAs of 1024 threads, thread i loads
        in[i * stride] and stores out[i]."""
        n = 2048
        st = self.launch("gload_stride", 2, 1024, [np.zeros(n * stride, np.float32), np.zeros(n, np.float32),
                                                   np.int32(stride)])
        m = st.metrics
        return (m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.ratio"],
                m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.ratio"])


def expected_tensor_flops(machine: Machine, dtype: str = "f16") -> float:
    """Ops per cycle per SM the description implies for tensor input type ``dtype``: ``[tensor] <dtype>``
    (xg1: 4096 f16, H100's 989 dense FP16 TFLOPS; 8192 i8), or, without it, ``[issue] tensor``
    instructions (HMMA.16816 / IMMA.16832 halves, 2048 / 4096 ops) per cycle per sub-partition."""
    rate = machine.tensor_rate(dtype)
    if rate is not None:
        return rate
    ops = IMMA_OPS if dtype == "i8" else HMMA_FLOP
    return float(machine.data["issue"]["tensor"]) * int(machine.data["sm"]["subpartitions"]) * ops


def expected_issue(machine: Machine, pipe: str) -> float:
    """Instructions per cycle per sub-partition of ``pipe``: ``[issue] pipe``; for ``tensor`` HMMA.16816
    halves: the f16 rate over the sub-partitions and 2048 FLOP (0.5 for xg1)."""
    if pipe == "tensor":
        return expected_tensor_flops(machine) / int(machine.data["sm"]["subpartitions"]) / HMMA_FLOP
    return float(machine.data.get("issue", {}).get(pipe, 1.0))


def expected_sectors(stride: int, machine: Machine, warp: int = 32, width: int = 4) -> int:
    sector = int(machine.data.get("memory", {}).get("sector_bytes", 32))
    return len({lane * stride * width // sector for lane in range(warp)})


def expected_ways(stride: int, machine: Machine, warp: int = 32) -> int:
    """The most distinct 4-byte words in one bank when lane l reads word l * stride."""
    banks = int(machine.data["shared_memory"]["banks"])
    per_bank: dict[int, set[int]] = {}
    for lane in range(warp):
        word = lane * stride
        per_bank.setdefault(word % banks, set()).add(word)
    return max(len(v) for v in per_bank.values())


def measure(machine: str | Path | Machine = "xg1", arch: str = "sm_80", bank_strides=BANK_STRIDES,
            sector_strides=SECTOR_STRIDES) -> list[Figure]:
    mb = Microbench(machine, arch)
    m = mb.machine
    lat = m.data["latency"]
    figs = []
    for cls, what in (("fma", "dependent FFMA chain"), ("alu", "dependent IADD3/LOP3 chain"),
                      ("sfu", "dependent MUFU.SIN chain"), ("fp64", "dependent DFMA chain"),
                      ("tensor", "dependent mma.sync m16n8k16 chain, 2 HMMA.16816 halves each")):
        figs.append(Figure("latency", f"{cls} latency ({what})", f"[latency] {cls}", "cycles",
                           float(lat[cls]), mb.chain_latency(cls), False))
    figs.append(Figure("latency", "shared load latency (pointer chase in shared memory)", "[latency] lsu",
                       "cycles", float(lat["lsu"]), mb.shared_latency(), False))
    figs.append(Figure("latency", "L1 hit latency (global pointer chase with ld.ca, second pass)",
                       "[latency] l1_hit", "cycles", float(lat["l1_hit"]), mb.l1_latency(), False))
    figs.append(Figure("latency", "L2 hit latency (global pointer chase with ld.cg, second pass)", "[latency] l2_hit",
                       "cycles", float(lat["l2_hit"]), mb.l2_latency(), False))
    figs.append(Figure("latency", "DRAM latency (global pointer chase, first touch)", "[latency] dram",
                       "cycles", float(lat["dram"]), mb.dram_latency(), False))
    for pipe, what in (("fma", "independent FFMA streams"), ("alu", "independent IADD3 streams"), ("sfu", "independent MUFU streams"),
                       ("fp64", "independent DFMA streams"), ("tensor", "independent HMMA.16816 chains, lrr")):
        key = "[tensor] f16 / (subpartitions x 2048)" if pipe == "tensor" else f"[issue] {pipe}"
        figs.append(Figure("issue", f"{pipe} issue rate per sub-partition ({what}, 32 warps)",
                           key, "inst/cycle", expected_issue(m, pipe), mb.issue_rate(pipe), False))
    figs.append(Figure("throughput", "dense FP16 tensor FLOP per cycle per SM (mma.sync m16n8k16 f32 accumulators, "
                       "32 warps, lrr)", "[tensor] f16", "FLOP/cycle",
                       expected_tensor_flops(m), mb.tensor_flops(), False))
    figs.append(Figure("throughput", "dense INT8 tensor ops per cycle per SM (mma.sync m16n8k32 s8, s32 accumulators, "
                       "32 warps, lrr)", "[tensor] i8", "ops/cycle",
                       expected_tensor_flops(m, "i8"), mb.int8_tensor_ops(), False))
    figs.append(Figure("throughput", "DRAM bytes per cycle, device-wide (1 -> 2 CTAs of 256 threads per SM, "
                       "every sector read once)", "[memory] dram_bytes_per_cycle", "B/cycle",
                       m.bandwidth("dram"), mb.dram_bandwidth(), False))
    figs.append(Figure("throughput", "L2 bytes per cycle, device-wide (1 CTA of 128 threads per SM re-reading "
                       "16 KiB with ld.global.cg, 4 -> 8 passes)", "[memory] l2_bytes_per_cycle", "B/cycle",
                       m.bandwidth("l2"), mb.l2_bandwidth(), False))
    rate = float(m.data.get("memory", {}).get("l1_sectors_per_cycle", 4))
    for s in (1, 8):
        figs.append(Figure("throughput", f"global load sectors per cycle per SM (stride {s} floats, 32 warps)",
                           "[memory] l1_sectors_per_cycle", "sectors/cycle", rate,
                           mb.memory_throughput("global", s), False))
    for s in (1, 32):
        figs.append(Figure("throughput", f"shared load wavefronts per cycle per SM (stride {s} words, 32 warps)",
                           "(model: one wavefront per cycle)", "wavefronts/cycle", 1.0,
                           mb.memory_throughput("shared", s), False))
    for s in bank_strides:
        by_metric, by_cycles = mb.bank_conflicts(s)
        want = float(expected_ways(s, m))
        figs.append(Figure("bank conflicts", f"shared wavefronts per request, stride {s} words (metrics)",
                           "[shared_memory] banks", "wavefronts", want, by_metric, True))
        figs.append(Figure("bank conflicts", f"shared wavefronts per request, stride {s} words (cycles)",
                           "[latency] lsu + wavefronts - 1", "wavefronts", want, by_cycles, False))
    store = None
    for s in sector_strides:
        ld, st = mb.sectors_per_request(s)
        store = st if store is None else store
        figs.append(Figure("coalescing", f"global load sectors per request, stride {s} floats",
                           "[memory] sector_bytes", "sectors", float(expected_sectors(s, m)), ld, True))
    figs.append(Figure("coalescing", "global store sectors per request, contiguous floats",
                       "[memory] sector_bytes", "sectors", float(expected_sectors(1, m)), store, True))
    return figs


def table(figs: list[Figure]) -> list[str]:
    lines = ["| figure | description | description value | measured | error |", "|---|---|---|---|---|"]
    for f in figs:
        err = ("exact" if f.ok else "MISMATCH") if f.exact else f"{100 * f.error:+.2f}%"
        if not f.ok and not f.exact:
            err += " (over 5%)"
        meas = f"{f.measured:.4g}" if not float(f.measured).is_integer() else f"{f.measured:.0f}"
        lines.append(f"| {f.name} | `{f.key}` | {f.expected:g} {f.unit} | {meas} | {err} |")
    return lines


def markdown_section(figs: list[Figure], machine_name: str = "xg1", seconds: float | None = None) -> list[str]:
    bad = [f for f in figs if not f.ok]
    took = f" ({seconds:.1f} s)" if seconds is not None else ""
    lines = [BEGIN, "## Cycle model validation: microbenchmarks", "",
             f"Produced by `python bench/microbench.py` (also run by `make bench`){took}: the kernels of "
             "`examples/microbench.cu` (`microbench.sm_80.ptx`) compiled by xcc and timed by the cycle model "
             f"(`compiler/sim/perf/timing.py`) on the `{machine_name}` machine description, each figure derived from the "
             "launches' cycles and metrics and set beside the description's value. Latencies and issue rates "
             "are slopes (the same kernel at two sizes: cycles difference over work difference, so launch "
             "and drain costs cancel); wavefronts and sectors per request are Nsight-named metric ratios. "
             f"`tests/test_microbench.py` pins them: slopes within {100 * TOLERANCE:.0f}%, counts exactly, and "
             "checks that they follow a modified description.", ""]
    banks = [f for f in figs if f.group == "bank conflicts"]
    lines += table([f for f in figs if f.group != "bank conflicts"])
    if banks:
        by_metric = [f for f in banks if f.exact]
        by_cycles = [f for f in banks if not f.exact]
        strides = [f.name.split("stride ")[1].split()[0] for f in by_metric]
        lines += ["", "Shared-memory bank conflicts, one warp, lane l reads word l * stride: wavefronts per request "
                  "(the most distinct words in one bank; `[shared_memory] banks`) from the metrics "
                  "(`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` over requests, must be exact) and from "
                  "the cycles (a dependent load costs `lsu + wavefronts - 1`: 1 + its cycles per load minus "
                  "stride 1's).", "",
                  "| stride | " + " | ".join(strides) + " |", "|---|" + "---|" * len(strides),
                  "| description | " + " | ".join(f"{f.expected:g}" for f in by_metric) + " |",
                  "| metrics | " + " | ".join(f"{f.measured:g}" + ("" if f.ok else " (MISMATCH)") for f in by_metric)
                  + " |",
                  "| cycles | " + " | ".join(f"{f.measured:.3g}" + ("" if f.ok else " (over 5%)") for f in by_cycles)
                  + " |"]
    lines += ["", (f"{len(figs) - len(bad)} of {len(figs)} figures recovered." if bad else
                   f"All {len(figs)} figures recovered."), "",
              "What the slopes include: the chase loops run 16 loads per trip (nvcc unrolls 4 trips), so a "
              "few cycles of loop control per 64 loads remain in the memory latencies (about 0.1 cycle per "
              "load). The dependent chains are straight-line code (template instances of 64 and 128 "
              "instructions), so they carry no overhead at all. The memory-throughput slopes are over the CTA "
              "size (16 to 32 warps, 32 loads each) and fall short of the peak by the last few cycles of "
              "the load phase, when fewer sub-partitions still have loads to issue.", "",
              "Found by these benchmarks and fixed in `compiler/sim/perf/timing.py`: (1) the SM's shared units (MIO "
              "for shared memory, LG for global) went to its sub-partitions in a fixed order, so the first "
              "ones starved the others, which then finished their loads alone with the unit half idle: "
              "shared wavefronts per cycle measured 0.83 (-17%) and global sectors per cycle 3.85; they are "
              "now granted round-robin. (2) A scoreboard set again while a write on it was outstanding took "
              "the later write's release time, even when earlier (an LDS issued after a DRAM-miss LDG on "
              "the same scoreboard released the LDG's reader after 32 cycles instead of 650); a scoreboard "
              "now counts its pending writes, the contract `compiler/sim/isa/hazards.py` checks.", "",
              "Tensor cores: a PTX `mma.sync.m16n8k16` is two HMMA.16816 halves (each 8 x 8 x 16, 2048 FLOP); the "
              "chain's slope per mma is the tensor latency (the halves are independent chains). The throughput "
              "kernel's A and B fragments are an initial mma's D pairs, since xcc moves any other HMMA operand "
              "into a register pair with two MOVs per pair at every HMMA (5 issue slots per HMMA, issue-bound "
              "at 0.18 HMMA per cycle per scheduler); each warp runs 2 accumulators (4 HMMA chains: with 4 "
              "accumulators, 8 chains share the 6 scoreboards and each HMMA waits for the one 2 before it). It "
              "runs with loose round-robin scheduling: under the description's greedy-then-oldest, the oldest "
              "warps take every slot they can use, the youngest starve and finish alone, latency-bound, so the "
              "tail grows with the rounds and the slope missed the rate by -20% to +1% depending on latency x "
              "rate (all within 1% under round-robin). The int8 kernel is the same with mma.sync m16n8k32 s8 "
              "(IMMA.16832 halves of 4096 ops, `[tensor] i8`); each input type has its own rate in the "
              "description (`[tensor]`, ops per cycle per SM), so a changed f16 rate leaves IMMA alone.", "",
              "Device-wide bandwidths: the L2 and the DRAM are one queue each for all SMs "
              "(`compiler/sim/perf/timing.py`). The DRAM figure streams 8 16-byte pieces per thread that nothing else "
              "reads, with one and then two CTAs of 256 threads per SM (`dram__bytes_read.sum` over cycles); "
              "it writes nothing, because stores issued after the last reads drain in those reads' latency at "
              "both sizes and would over-count by their share (+3% with one float per thread). The L2 figure "
              "re-reads 16 KiB from every SM with `ld.global.cg` (L2 only, as on the hardware) 4 and then 8 "
              "times; after the first touch every sector hits "
              "(`lts__t_sectors_srcunit_tex_op_read.sum` x 32 over cycles).", END]
    return lines


def write_section(lines: list[str], path: Path = BENCHMARKS_MD, begin: str = BEGIN, end: str = END) -> None:
    """Replace the block of ``path`` between the markers ``begin`` and ``end`` (by default the microbenchmarks'),
    or append it; ``lines`` hold the markers."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = "\n".join(lines)
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", default="xg1", help="machine description: a shipped name or a TOML file")
    ap.add_argument("--arch", default="sm_80", choices=sorted(PTX))
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/BENCHMARKS.md alone")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    figs = measure(a.machine, a.arch)
    lines = markdown_section(figs, load_machine(a.machine).name, time.perf_counter() - t0)
    print("\n".join(lines[1:-1]))
    if not a.no_write and a.machine == "xg1" and a.arch == "sm_80":
        write_section(lines)
        print(f"\nwritten to {BENCHMARKS_MD.relative_to(ROOT)}")
    return 0 if all(f.ok for f in figs) else 1


if __name__ == "__main__":
    sys.exit(main())
