"""``cuDeviceGetAttribute``'s answers for the emulated device: every ``CUdevice_attribute``.

From the machine description (``backend/machines/<name>.toml``, :mod:`xcc.backend.machine`):

* MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X/Y = ``limits.max_threads_per_block``;
  MULTIPROCESSOR_COUNT = ``sm.count``; WARP_SIZE = ``warp_size``; CLOCK_RATE = ``sm.clock_mhz`` in kHz;
* MAX_SHARED_MEMORY_PER_BLOCK and ..._OPTIN = ``limits.shared_memory_per_block`` (the emulator needs
  no opt-in), MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = ``limits.shared_memory_bytes``,
  RESERVED_SHARED_MEMORY_PER_BLOCK = their difference;
* MAX_REGISTERS_PER_BLOCK / _PER_MULTIPROCESSOR = ``limits.registers``,
  MAX_THREADS_PER_MULTIPROCESSOR = ``limits.max_threads``, MAX_BLOCKS_PER_MULTIPROCESSOR =
  ``limits.max_ctas``;
* COMPUTE_CAPABILITY_MAJOR/MINOR = ``compute_capability`` if the description has one, else 9.0 (the
  per-SM limits above are those of compute capability 9.0).

What the emulator does, it reports as supported (1): unified addressing, managed memory and
concurrent managed access, mapping host memory and host-native atomics (a kernel's accesses to
managed or host-allocated buffers are accesses to the host's bytes, and kernels run synchronously),
direct managed access from the host, concurrent kernels, stream priorities (accepted, not modelled),
64-bit and generic address space, cooperative launch (``cuLaunchCooperativeKernel``; see there for
grid-wide synchronisation), global and local L1 caching, memory pools (stream-ordered
allocation: :mod:`xcc.runtime.mempool_api`).  Block Z (64), grid dimensions
(2**31-1, 65535, 65535), the constant bank (64 KiB), alignment and pitch limits are CUDA's figures for
compute capability 9.0.

What xg1 lacks reports 0, as a GPU without the feature does: access to pageable host memory (a
kernel reaches only memory the driver allocated, so PAGEABLE_MEMORY_ACCESS is 0 and programs take
their managed-memory path), textures and surfaces (every texture and
surface size is 0), thread block clusters, ECC, integrated memory, multi-GPU boards, P2P/IPC/RDMA, virtual memory management,
shareable pool handles, external-memory handles, NUMA, MPS, compression, DMA-BUF, multicast, logical
endpoints.  Physical figures the emulator has no model for take H100 SXM's values where a program may
size work from them (L2 cache 50 MiB, memory clock 2619 MHz, 5120-bit bus); IDs (PCI bus, device,
domain, UUID-derived) are 0.  Attributes that are not in this table (none in cuda-bindings 13.5) are
``CUDA_ERROR_INVALID_VALUE``, as an attribute unknown to the driver is.
"""

from __future__ import annotations

from xcc.runtime.driver_types import CUdevice_attribute

_SUPPORTED = (
    "CONCURRENT_KERNELS", "UNIFIED_ADDRESSING", "CAN_MAP_HOST_MEMORY", "MANAGED_MEMORY", "CONCURRENT_MANAGED_ACCESS",
    "HOST_NATIVE_ATOMIC_SUPPORTED", "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
    "STREAM_PRIORITIES_SUPPORTED", "GLOBAL_L1_CACHE_SUPPORTED", "LOCAL_L1_CACHE_SUPPORTED", "COOPERATIVE_LAUNCH",
    "COMPUTE_PREEMPTION_SUPPORTED", "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "GPU_OVERLAP",
    "UNIFIED_FUNCTION_POINTERS", "ATOMIC_REDUCTION_SUPPORTED", "MEMORY_POOLS_SUPPORTED",
)


def device_attributes(m) -> dict[int, int]:
    """Every ``CUdevice_attribute`` value (aliases included) for machine ``m``."""
    lim, A = m.limits, CUdevice_attribute
    major, minor = (int(x) for x in str(m.data.get("compute_capability", "9.0")).split("."))
    tpb = int(lim["max_threads_per_block"])
    smem_block, smem_sm = int(lim["shared_memory_per_block"]), int(lim["shared_memory_bytes"])
    sms = int(m.data["sm"]["count"])
    named = {
        "MAX_THREADS_PER_BLOCK": tpb, "MAX_BLOCK_DIM_X": tpb, "MAX_BLOCK_DIM_Y": tpb, "MAX_BLOCK_DIM_Z": 64,
        "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535, "MAX_GRID_DIM_Z": 65535,
        "MAX_SHARED_MEMORY_PER_BLOCK": smem_block, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": smem_block,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": smem_sm, "RESERVED_SHARED_MEMORY_PER_BLOCK": smem_sm - smem_block,
        "TOTAL_CONSTANT_MEMORY": 65536, "WARP_SIZE": int(m.data.get("warp_size", 32)), "MAX_PITCH": 2**31 - 1,
        "MAX_REGISTERS_PER_BLOCK": int(lim["registers"]), "MAX_REGISTERS_PER_MULTIPROCESSOR": int(lim["registers"]),
        "CLOCK_RATE": int(m.data["sm"]["clock_mhz"]) * 1000, "MULTIPROCESSOR_COUNT": sms,
        "MAX_THREADS_PER_MULTIPROCESSOR": int(lim["max_threads"]),
        "MAX_BLOCKS_PER_MULTIPROCESSOR": int(lim["max_ctas"]),
        "COMPUTE_CAPABILITY_MAJOR": major, "COMPUTE_CAPABILITY_MINOR": minor,
        "COMPUTE_MODE": 0,  # CU_COMPUTEMODE_DEFAULT
        "TEXTURE_ALIGNMENT": 512, "TEXTURE_PITCH_ALIGNMENT": 32, "SURFACE_ALIGNMENT": 512,
        "ASYNC_ENGINE_COUNT": 2, "MEMORY_CLOCK_RATE": 2619000, "GLOBAL_MEMORY_BUS_WIDTH": 5120,
        "L2_CACHE_SIZE": 50 * 2**20, "MAX_PERSISTING_L2_CACHE_SIZE": 0, "MAX_ACCESS_POLICY_WINDOW_SIZE": 0,
        "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": 2, "MEM_SYNC_DOMAIN_COUNT": 1, "NUMA_ID": -1, "HOST_NUMA_ID": -1,
        "LOCALITY_DOMAIN_COUNT": 1, "LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT": sms,
        **{name: 1 for name in _SUPPORTED},
    }
    values = {int(a): 0 for a in A}
    for name, v in named.items():
        values[int(A["CU_DEVICE_ATTRIBUTE_" + name])] = v
    values.pop(int(A.CU_DEVICE_ATTRIBUTE_MAX), None)  # a count, not an attribute
    return values
