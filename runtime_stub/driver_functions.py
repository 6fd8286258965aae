"""Kernels of :mod:`xcc.runtime.driver`: function handles, their attributes, occupancy and launches
(``cuFuncGetAttribute``, ``cuFuncSetAttribute``, ``cuOccupancyMaxActiveBlocksPerMultiprocessor``,
``cuLaunchKernel``, ``cuLaunchCooperativeKernel``).

Launch dimensions, the dynamic shared memory size and attribute values are converted as cuda-python
converts its ``unsigned int``/``int`` parameters (:func:`~xcc.runtime.driver_core.as_uint`: a float is
truncated, a negative or too large value raises ``OverflowError``).  What the driver checks comes back
as its ``CUresult``: a grid or block outside the device's limits, or more dynamic shared memory than
the function allows, is ``CUDA_ERROR_INVALID_VALUE``; a block whose registers do not fit in an SM
``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES``; a cooperative grid larger than can be co-resident
``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE``.

Dynamic shared memory: as on a GPU, a launch may use up to
``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`` bytes, which is 48 KiB less the static shared
memory until ``cuFuncSetAttribute`` raises it (up to the per-block limit less static memory).

Cooperative launches, after the co-residency check, support grid-wide synchronisation
(``cooperative_groups::this_grid().sync()``): nvcc implements it by reading the grid's sync workspace
from ``%envreg1``/``%envreg2`` and spinning on a counter there; the launch provides a zero-initialised
workspace (:mod:`xcc.runtime.launch`) and runs every CTA of the grid in one wave, the CTAs taking turns
so that spinning CTAs let the others arrive (:mod:`xcc.sim.launch`).  In an ordinary launch the
workspace address is 0 and nvcc's ``grid.sync()`` traps, as on a GPU.
"""

from __future__ import annotations

from xcc.backend.occupancy import occupancy
from xcc.runtime.driver_core import Context, CudaError, api, as_int, as_uint, lookup, register
from xcc.runtime.driver_types import CUfunction, CUfunction_attribute, CUresult
from xcc.runtime.host_args import kernel_args

R = CUresult
_INVALID = R.CUDA_ERROR_INVALID_VALUE
DEFAULT_DYNAMIC_SHARED = 48 * 1024  # what a launch may use before cuFuncSetAttribute raises it


class LoadedModule:
    """A module of a context: its kernels' names (PTX parsed and checked at load) and the kernels
    fetched so far (each compiled, or found in the JIT cache, at its first ``cuModuleGetFunction``)."""

    def __init__(self, ctx: Context, module):
        self.ctx, self.module = ctx, module
        self.names = module.function_names  # parses and checks PTX: INVALID_PTX at load, as in CUDA
        self.functions: dict[str, KernelFunction] = {}

    def function(self, name: str) -> KernelFunction:
        f = self.functions.get(name)
        if f is None:
            if name not in self.names:
                raise CudaError(R.CUDA_ERROR_NOT_FOUND, f"no kernel named '{name}' in the module "
                                                        f"(it has: {', '.join(sorted(self.names)) or 'none'})")
            f = self.functions[name] = KernelFunction(self, self.module.get_function(name))
            register(CUfunction, f)
        return f


class KernelFunction:
    """A kernel handle: the runtime's compiled function and the attributes set on it."""

    def __init__(self, module: LoadedModule, fn):
        self.module, self.fn = module, fn
        self.max_dynamic_shared = max(0, min(DEFAULT_DYNAMIC_SHARED - self.kernel.shared_bytes, self.shared_room))
        self.carveout = -1

    @property
    def kernel(self):
        return self.fn.kernel

    @property
    def shared_room(self) -> int:
        """The most dynamic shared memory the device allows this kernel (per-block limit less static)."""
        return int(self.fn.device.machine.limits["shared_memory_per_block"]) - self.kernel.shared_bytes

    def max_block(self) -> int:
        """The largest block the kernel can be launched with: its .maxntid/.reqntid and the
        device limit, lowered until one CTA's registers and shared memory fit in an SM."""
        m = self.fn.device.machine
        warp = int(m.data.get("warp_size", 32))
        t = min(self.kernel.max_threads, int(m.limits["max_threads_per_block"]))
        while t > 0 and occupancy(self.kernel, m, t).ctas_per_sm < 1:
            t = (t - 1) // warp * warp
        return t


def function_of(h, what: str = "hfunc") -> KernelFunction:
    """The live kernel behind handle ``h`` (its context checked for a sticky error)."""
    f = lookup(h, CUfunction, KernelFunction, what)
    f.module.ctx.check()
    return f


# -- attributes ------------------------------------------------------------------------------------

@api(1)
def cuFuncGetAttribute(attrib, hfunc) -> int:
    """Attributes of the compiled kernel image (registers, static shared and local memory, block limit)
    and those set with ``cuFuncSetAttribute``; the required cluster shape is the kernel's ``.reqnctapercluster``
    (0 without), CLUSTER_SIZE_MUST_BE_SET its ``.explicitcluster``."""
    f = function_of(hfunc)
    k, A = f.kernel, CUfunction_attribute
    req = list(getattr(k, "reqnctapercluster", None) or [0, 0, 0]) + [1, 1]
    values = {
        A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: f.max_block(),
        A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: k.shared_bytes,
        A.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: 0,
        A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: k.local_bytes,
        A.CU_FUNC_ATTRIBUTE_NUM_REGS: k.registers,
        A.CU_FUNC_ATTRIBUTE_PTX_VERSION: 90,
        A.CU_FUNC_ATTRIBUTE_BINARY_VERSION: 90,
        A.CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: 0,
        A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: f.max_dynamic_shared,
        A.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: f.carveout,
        A.CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: int(bool(getattr(k, "explicitcluster", False))),
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: req[0],
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: req[1] if req[0] else 0,
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: req[2] if req[0] else 0,
        A.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: int(getattr(f, "nonportable_cluster", False)),
        A.CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: 0,
    }
    a = as_int(attrib, "attrib")
    if a not in values:
        raise CudaError(_INVALID, f"function attribute {a} is not supported by xcc")
    return values[a]


@api()
def cuFuncSetAttribute(hfunc, attrib, value) -> None:
    """Set MAX_DYNAMIC_SHARED_SIZE_BYTES (0 .. the per-block limit less static shared memory) or
    PREFERRED_SHARED_MEMORY_CARVEOUT (-1 or 0..100, a hint the emulator records); cluster attributes
    other than a required size of 0 are ``CUDA_ERROR_NOT_SUPPORTED``; read-only attributes are
    ``CUDA_ERROR_INVALID_VALUE``, as on a GPU."""
    f = function_of(hfunc)
    A = CUfunction_attribute
    a, v = as_int(attrib, "attrib"), as_int(value, "value")
    if not -(1 << 31) <= v < 1 << 31:
        raise OverflowError("value too large to convert to int")
    if a == A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if not 0 <= v <= f.shared_room:
            raise CudaError(_INVALID, f"MAX_DYNAMIC_SHARED_SIZE_BYTES {v} is outside 0..{f.shared_room} "
                                      f"('{f.kernel.name}' has {f.kernel.shared_bytes} bytes of static shared memory)")
        f.max_dynamic_shared = v
    elif a == A.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if not -1 <= v <= 100:
            raise CudaError(_INVALID, f"PREFERRED_SHARED_MEMORY_CARVEOUT {v} is outside -1..100")
        f.carveout = v
    elif a == A.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:  # clusters of up to 16 CTAs (cuLaunchKernelEx)
        if v not in (0, 1):
            raise CudaError(_INVALID, f"NON_PORTABLE_CLUSTER_SIZE_ALLOWED must be 0 or 1, not {v}")
        f.nonportable_cluster = bool(v)
    elif a in (A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
               A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, A.CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE):
        if v != 0:
            raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "a required cluster shape set with cuFuncSetAttribute is not "
                                                        "supported (give it in the launch: cuLaunchKernelEx)")
    else:
        raise CudaError(_INVALID, f"function attribute {a} cannot be set")


@api(1)
def cuOccupancyMaxActiveBlocksPerMultiprocessor(func, blockSize, dynamicSMemSize) -> int:
    """CTAs per SM for this block size, from the runtime's ``Function.occupancy`` (0 if it cannot launch)."""
    f = function_of(func, "func")
    b, smem = as_int(blockSize, "blockSize"), as_uint(dynamicSMemSize, "dynamicSMemSize", 64)
    if b < 1:
        raise CudaError(_INVALID, "blockSize must be positive")
    if b > f.max_block():
        return 0
    return f.fn.occupancy(b, smem).ctas_per_sm


# -- launches --------------------------------------------------------------------------------------

def launch_op(fn: KernelFunction, grid_dims, block_dims, sharedMemBytes, kernelParams, extra=None,
              cooperative: bool = False, cluster=None):
    """Check a launch as the driver does and return ``(op, modelled_ms)`` for
    :meth:`~xcc.runtime.driver_core.Context.run`; the arguments are read now (CUDA copies them at launch,
    and at node creation for a graph's kernel node)."""
    grid = tuple(as_uint(v, "gridDim") for v in grid_dims)
    block = tuple(as_uint(v, "blockDim") for v in block_dims)
    shared = as_uint(sharedMemBytes, "sharedMemBytes")
    tpb = int(fn.fn.device.machine.limits["max_threads_per_block"])
    if min(grid) < 1 or grid[0] > 2**31 - 1 or max(grid[1:]) > 65535:
        raise CudaError(_INVALID, f"grid {grid} is outside 1..(2**31-1, 65535, 65535)")
    if min(block) < 1 or block[0] > tpb or block[1] > tpb or block[2] > 64:
        raise CudaError(_INVALID, f"block {block} is outside 1..({tpb}, {tpb}, 64)")
    threads = block[0] * block[1] * block[2]
    if threads > min(fn.kernel.max_threads, tpb):
        raise CudaError(_INVALID, f"a block of {threads} threads exceeds the limit of "
                                  f"{min(fn.kernel.max_threads, tpb)} for '{fn.kernel.name}'")
    if shared > fn.max_dynamic_shared:
        raise CudaError(_INVALID, f"{shared} bytes of dynamic shared memory exceed the {fn.max_dynamic_shared} "
                                  f"allowed for '{fn.kernel.name}' (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_"
                                  "SIZE_BYTES with cuFuncSetAttribute)")
    if threads > fn.max_block():
        raise CudaError(R.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                        f"a block of {threads} threads of '{fn.kernel.name}' ({fn.kernel.registers} registers per "
                        f"thread) does not fit in an SM; at most {fn.max_block()}")
    if cooperative:
        m = fn.fn.device.machine
        resident = fn.fn.occupancy(threads, shared).ctas_per_sm * int(m.data["sm"]["count"])
        if grid[0] * grid[1] * grid[2] > resident:
            raise CudaError(R.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                            f"a cooperative grid of {grid[0] * grid[1] * grid[2]} blocks; at most {resident} "
                            f"blocks of {threads} threads of '{fn.kernel.name}' are co-resident")
    if not (extra is None or (isinstance(extra, int) and extra == 0) or (isinstance(extra, list | tuple) and not extra)):
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernel's 'extra' argument is not supported")
    args = kernel_args(fn.kernel.params, kernelParams)
    clock_khz = int(fn.fn.device.machine.data["sm"]["clock_mhz"]) * 1000
    return (lambda: fn.fn.launch(grid, block, args, shared, cooperative=cooperative, cluster=cluster),
            lambda stats: stats.cycles / clock_khz if stats.cycles is not None else None)


@api()
def cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                   sharedMemBytes, hStream, kernelParams, extra) -> None:
    """Launch ``f`` on ``hStream``; it runs to completion before this returns (see xcc.runtime.streams).
    ``extra`` must be None or 0 (CU_LAUNCH_PARAM_BUFFER_POINTER is not supported)."""
    fn = function_of(f, "f")
    op, ms = launch_op(fn, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                       kernelParams, extra)
    ctx = fn.module.ctx
    ctx.run(ctx.stream(hStream), op, ms)


@api()
def cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                              sharedMemBytes, hStream, kernelParams) -> None:
    """As ``cuLaunchKernel``, for a grid whose blocks are all co-resident (else
    ``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE``), with grid-wide sync (the module docstring)."""
    fn = function_of(f, "f")
    op, ms = launch_op(fn, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                       kernelParams, cooperative=True)
    ctx = fn.module.ctx
    ctx.run(ctx.stream(hStream), op, ms)


__all__ = ["KernelFunction", "LoadedModule", "cuFuncGetAttribute", "cuFuncSetAttribute", "cuLaunchCooperativeKernel",
           "cuLaunchKernel", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "function_of", "launch_op"]
