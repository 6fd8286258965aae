"""Theoretical occupancy: CTAs per SM for a kernel and block size, and what limits it.

As CUDA's occupancy calculator (cudaOccupancyMaxActiveBlocksPerMultiprocessor): the
minimum over the per-SM limits on warps, CTAs, registers (granted per warp in units of
``register_allocation_unit``) and shared memory, all read from the machine description.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.backend.machine import Machine
from xcc.backend.objfile import KernelImage


@dataclass(frozen=True)
class Occupancy:
    ctas_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limiter: str  # 'warps', 'ctas', 'registers' or 'shared_memory'
    limits: dict[str, int] = field(default_factory=dict, compare=False)  # the CTAs per SM each resource allows

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm


def occupancy(kernel: KernelImage, machine: Machine, block_threads: int, dynamic_shared: int = 0) -> Occupancy:
    lim = machine.limits
    warp = int(machine.data.get("warp_size", 32))
    warps_per_cta = -(-block_threads // warp)
    unit = int(lim.get("register_allocation_unit", 256))
    regs_per_warp = -(-kernel.registers * warp // unit) * unit
    smem = kernel.shared_bytes + dynamic_shared
    bounds = {
        "warps": int(lim["max_warps"]) // warps_per_cta,
        "ctas": int(lim["max_ctas"]),
        "registers": int(lim["registers"]) // (regs_per_warp * warps_per_cta) if regs_per_warp else 1 << 30,
        "shared_memory": int(lim["shared_memory_bytes"]) // smem if smem else 1 << 30,
    }
    limiter = min(bounds, key=lambda k: (bounds[k], list(bounds).index(k)))
    ctas = max(bounds[limiter], 0)
    return Occupancy(ctas, ctas * warps_per_cta, int(lim["max_warps"]), limiter, bounds)


def launch_metrics(kernel: KernelImage, machine: Machine, grid: tuple[int, int, int], block: tuple[int, int, int],
                   dynamic_shared: int = 0) -> dict[str, int | float | str]:
    """Nsight Compute's *Launch Statistics* and *Occupancy* figures of a launch configuration
    (``launch__*``; a resource that sets no limit reports the SM's CTA limit, as Nsight does)."""
    threads = block[0] * block[1] * block[2]
    ctas = grid[0] * grid[1] * grid[2]
    occ = occupancy(kernel, machine, threads, dynamic_shared)
    sms = int(machine.data["sm"]["count"])
    cap = int(machine.limits["max_ctas"])
    return {
        "launch__grid_size": ctas,
        "launch__block_size": threads,
        "launch__thread_count": ctas * threads,
        "launch__registers_per_thread": kernel.registers,
        "launch__shared_mem_per_block_static": kernel.shared_bytes,
        "launch__shared_mem_per_block_dynamic": dynamic_shared,
        "launch__sm_count": sms,
        "launch__occupancy_limit_blocks": occ.limits["ctas"],
        "launch__occupancy_limit_warps": occ.limits["warps"],
        "launch__occupancy_limit_registers": min(occ.limits["registers"], cap),
        "launch__occupancy_limit_shared_mem": min(occ.limits["shared_memory"], cap),
        "launch__waves_per_multiprocessor": ctas / (max(occ.ctas_per_sm, 1) * sms),
        "sm__maximum_warps_avg_per_active_cycle": occ.warps_per_sm,
        "gpc__cycles_elapsed.avg.per_second": float(machine.data["sm"].get("clock_mhz", 1000)) * 1e6,
    }


def launch_bounds_register_limit(max_threads: int, min_ctas: int, machine: Machine) -> int:
    """The most registers per thread with which ``min_ctas`` CTAs of ``max_threads`` threads fit in one SM:
    the limit ptxas derives from ``__launch_bounds__(maxThreadsPerBlock, minBlocksPerMultiprocessor)``
    (PTX ``.maxntid`` and ``.minnctapersm``), with registers granted per warp in allocation units."""
    lim = machine.limits
    warp = int(machine.data.get("warp_size", 32))
    unit = int(lim.get("register_allocation_unit", 256))
    warps = -(-max_threads // warp) * max(min_ctas, 1)
    per_warp = int(lim["registers"]) // warps // unit * unit
    return per_warp // warp
