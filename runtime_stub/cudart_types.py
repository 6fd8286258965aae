"""The structs of :mod:`xcc.runtime.cudart`, as ``cuda.bindings.runtime`` shapes them: ``dim3``,
``cudaPos``, ``cudaExtent``, ``cudaPitchedPtr`` (and their ``make_*`` functions), ``cudaMemcpy3DParms``,
``cudaMemsetParams`` and ``cudaDeviceProp``.

Integer fields convert as cuda-python's do (:mod:`xcc.runtime.driver_structs`); pointer fields keep
what they are given (an address, a handle, a buffer or a ctypes object).
"""

from __future__ import annotations

from xcc.runtime.driver_structs import _Struct
from xcc.runtime.driver_types import CUdevice_attribute


class dim3(_Struct):
    _uint = {"x": 32, "y": 32, "z": 32}

    def __init__(self, _ptr=0):
        super().__init__()
        self.x = self.y = self.z = 1


class cudaPos(_Struct):
    _uint = {"x": 64, "y": 64, "z": 64}


class cudaExtent(_Struct):
    _uint = {"width": 64, "height": 64, "depth": 64}


class cudaPitchedPtr(_Struct):
    _uint = {"pitch": 64, "xsize": 64, "ysize": 64}
    _any = ("ptr",)


class cudaMemcpy3DParms(_Struct):
    _uint = {"kind": 32}
    _any = ("srcArray", "srcPos", "srcPtr", "dstArray", "dstPos", "dstPtr", "extent")


class cudaMemsetParams(_Struct):
    _uint = {"pitch": 64, "value": 32, "elementSize": 32, "width": 64, "height": 64}
    _any = ("dst",)


def make_cudaPos(x, y, z) -> cudaPos:
    p = cudaPos()
    p.x, p.y, p.z = x, y, z
    return p


def make_cudaExtent(w, h, d) -> cudaExtent:
    e = cudaExtent()
    e.width, e.height, e.depth = w, h, d
    return e


def make_cudaPitchedPtr(d, p, xsz, ysz) -> cudaPitchedPtr:
    pp = cudaPitchedPtr()
    pp.ptr, pp.pitch, pp.xsize, pp.ysize = d, p, xsz, ysz
    return pp


# cudaDeviceProp field -> the device attribute it reports (CU_DEVICE_ATTRIBUTE_<name>)
_PROP_ATTRIBUTES = {
    "sharedMemPerBlock": "MAX_SHARED_MEMORY_PER_BLOCK", "regsPerBlock": "MAX_REGISTERS_PER_BLOCK",
    "warpSize": "WARP_SIZE", "memPitch": "MAX_PITCH", "maxThreadsPerBlock": "MAX_THREADS_PER_BLOCK",
    "totalConstMem": "TOTAL_CONSTANT_MEMORY", "major": "COMPUTE_CAPABILITY_MAJOR",
    "minor": "COMPUTE_CAPABILITY_MINOR", "textureAlignment": "TEXTURE_ALIGNMENT",
    "texturePitchAlignment": "TEXTURE_PITCH_ALIGNMENT", "multiProcessorCount": "MULTIPROCESSOR_COUNT",
    "integrated": "INTEGRATED", "canMapHostMemory": "CAN_MAP_HOST_MEMORY", "surfaceAlignment": "SURFACE_ALIGNMENT",
    "concurrentKernels": "CONCURRENT_KERNELS", "ECCEnabled": "ECC_ENABLED", "pciBusID": "PCI_BUS_ID",
    "pciDeviceID": "PCI_DEVICE_ID", "pciDomainID": "PCI_DOMAIN_ID", "tccDriver": "TCC_DRIVER",
    "asyncEngineCount": "ASYNC_ENGINE_COUNT", "unifiedAddressing": "UNIFIED_ADDRESSING",
    "memoryBusWidth": "GLOBAL_MEMORY_BUS_WIDTH", "l2CacheSize": "L2_CACHE_SIZE",
    "persistingL2CacheMaxSize": "MAX_PERSISTING_L2_CACHE_SIZE",
    "maxThreadsPerMultiProcessor": "MAX_THREADS_PER_MULTIPROCESSOR",
    "streamPrioritiesSupported": "STREAM_PRIORITIES_SUPPORTED", "globalL1CacheSupported": "GLOBAL_L1_CACHE_SUPPORTED",
    "localL1CacheSupported": "LOCAL_L1_CACHE_SUPPORTED",
    "sharedMemPerMultiprocessor": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "regsPerMultiprocessor": "MAX_REGISTERS_PER_MULTIPROCESSOR", "managedMemory": "MANAGED_MEMORY",
    "isMultiGpuBoard": "MULTI_GPU_BOARD", "multiGpuBoardGroupID": "MULTI_GPU_BOARD_GROUP_ID",
    "hostNativeAtomicSupported": "HOST_NATIVE_ATOMIC_SUPPORTED", "pageableMemoryAccess": "PAGEABLE_MEMORY_ACCESS",
    "concurrentManagedAccess": "CONCURRENT_MANAGED_ACCESS",
    "computePreemptionSupported": "COMPUTE_PREEMPTION_SUPPORTED",
    "canUseHostPointerForRegisteredMem": "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
    "cooperativeLaunch": "COOPERATIVE_LAUNCH", "sharedMemPerBlockOptin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "pageableMemoryAccessUsesHostPageTables": "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
    "directManagedMemAccessFromHost": "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
    "maxBlocksPerMultiProcessor": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "accessPolicyMaxWindowSize": "MAX_ACCESS_POLICY_WINDOW_SIZE",
    "reservedSharedMemPerBlock": "RESERVED_SHARED_MEMORY_PER_BLOCK", "hostRegisterSupported": "HOST_REGISTER_SUPPORTED",
    "sparseCudaArraySupported": "SPARSE_CUDA_ARRAY_SUPPORTED",
    "hostRegisterReadOnlySupported": "READ_ONLY_HOST_REGISTER_SUPPORTED",
    "timelineSemaphoreInteropSupported": "TIMELINE_SEMAPHORE_INTEROP_SUPPORTED",
    "memoryPoolsSupported": "MEMORY_POOLS_SUPPORTED", "gpuDirectRDMASupported": "GPU_DIRECT_RDMA_SUPPORTED",
    "gpuDirectRDMAFlushWritesOptions": "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
    "gpuDirectRDMAWritesOrdering": "GPU_DIRECT_RDMA_WRITES_ORDERING",
    "memoryPoolSupportedHandleTypes": "MEMPOOL_SUPPORTED_HANDLE_TYPES",
    "deferredMappingCudaArraySupported": "DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED",
    "ipcEventSupported": "IPC_EVENT_SUPPORTED", "clusterLaunch": "CLUSTER_LAUNCH",
    "unifiedFunctionPointers": "UNIFIED_FUNCTION_POINTERS", "deviceNumaConfig": "NUMA_CONFIG",
    "deviceNumaId": "NUMA_ID", "mpsEnabled": "MPS_ENABLED", "hostNumaId": "HOST_NUMA_ID",
    "gpuPciDeviceID": "GPU_PCI_DEVICE_ID", "gpuPciSubsystemID": "GPU_PCI_SUBSYSTEM_ID",
    "hostNumaMultinodeIpcSupported": "HOST_NUMA_MULTINODE_IPC_SUPPORTED",
}


class cudaDeviceProp:
    """``cudaGetDeviceProperties``' answer: each field the device attribute it stands for (texture and
    surface sizes, all 0 on xg1, are lists of zeros), ``name`` the device name (bytes) and
    ``totalGlobalMem`` the emulator's address space for device memory."""

    def __init__(self, attributes: dict[int, int], name: bytes, total_global_mem: int):
        A = CUdevice_attribute
        for field, attr in _PROP_ATTRIBUTES.items():
            setattr(self, field, attributes[int(A["CU_DEVICE_ATTRIBUTE_" + attr])])
        self.name, self.totalGlobalMem = name, total_global_mem
        self.maxThreadsDim = [attributes[int(A[f"CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{c}"])] for c in "XYZ"]
        self.maxGridSize = [attributes[int(A[f"CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{c}"])] for c in "XYZ"]
        for field, n in (("maxTexture1D", 1), ("maxTexture2D", 2), ("maxTexture3D", 3), ("maxSurface1D", 1),
                         ("maxSurface2D", 2), ("maxSurface3D", 3), ("maxTextureCubemap", 1)):
            setattr(self, field, 0 if n == 1 else [0] * n)
        self.uuid, self.luid, self.luidDeviceNodeMask = bytes(16), bytes(8), 0
