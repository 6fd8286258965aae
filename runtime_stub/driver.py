"""``xcc.runtime.driver``: the CUDA driver API as cuda-python's ``cuda.bindings.driver`` shapes it.

Code written for cuda-python runs on the emulated xg1 device with its import changed::

    from xcc.runtime import driver as cuda      # was: from cuda.bindings import driver as cuda

Every function returns a tuple: a :class:`CUresult` first (``CUDA_SUCCESS == 0``), then its values
(``None`` when the call failed); :func:`last_error_message` gives the xcc diagnostic behind the last
failure in this thread.  Errors take CUDA's codes: a destroyed or foreign handle is
``CUDA_ERROR_INVALID_HANDLE``, a bad argument ``CUDA_ERROR_INVALID_VALUE``, an unknown kernel name
``CUDA_ERROR_NOT_FOUND``, PTX that does not compile ``CUDA_ERROR_INVALID_PTX`` (the diagnostic also
goes to ``CU_JIT_ERROR_LOG_BUFFER``), a damaged ``.xbin`` ``CUDA_ERROR_INVALID_IMAGE``, a block the
kernel's registers cannot hold ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES``.  A kernel's memory fault is
``CUDA_ERROR_ILLEGAL_ADDRESS`` (also for a misaligned access, which a GPU reports as
``CUDA_ERROR_MISALIGNED_ADDRESS``), a trap or a deadlock ``CUDA_ERROR_LAUNCH_FAILED``; both are
sticky, as on a GPU: every later call on that context returns the error until ``cuCtxDestroy``.

Modules: ``cuModuleLoadData`` takes PTX (``bytes``, ``str``, a numpy char array or a host address of
NUL-terminated text) or an ``.xbin`` image.  PTX is parsed and checked at load (invalid PTX is
``CUDA_ERROR_INVALID_PTX`` there, as in CUDA); each kernel is compiled, or found in xcc's JIT cache, at
its ``cuModuleGetFunction`` (CUDA compiles the whole module at load: here a kernel xcc cannot compile
yet fails only when it is asked for).  Kernels run on the ISA interpreter.  Streams, events and what of CUDA's
ordering is modelled: :mod:`xcc.runtime.streams`; memory: :mod:`xcc.runtime.memory_api`;
``kernelParams`` forms: :mod:`xcc.runtime.host_args`.

Device 0 is the only device; its attributes come from the machine description (``xg1.toml``):
MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X/Y = ``limits.max_threads_per_block`` (1024),
MULTIPROCESSOR_COUNT = ``sm.count`` (132), WARP_SIZE = ``warp_size`` (32),
MAX_SHARED_MEMORY_PER_BLOCK and ..._OPTIN = ``limits.shared_memory_per_block`` (227 KiB: xg1 needs no
opt-in), MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = ``limits.shared_memory_bytes``,
MAX_REGISTERS_PER_BLOCK / _PER_MULTIPROCESSOR = ``limits.registers``, MAX_THREADS_PER_MULTIPROCESSOR
= ``limits.max_threads``, MAX_BLOCKS_PER_MULTIPROCESSOR = ``limits.max_ctas``, CLOCK_RATE =
``sm.clock_mhz`` in kHz; COMPUTE_CAPABILITY_MAJOR/MINOR = 9.0 (``compute_capability`` in the
description if it has one; xg1's per-SM limits are those of compute capability 9.0); block Z (64) and
grid dimensions (2**31-1, 65535, 65535) are CUDA's.  ``cuDriverGetVersion`` reports 13000 (CUDA 13.0,
whose PTX ISA 9.0 the examples use).
"""

from __future__ import annotations

from pathlib import Path

from xcc.backend.occupancy import occupancy
from xcc.diagnostics import LaunchError, XccError
from xcc.runtime.device import Device
from xcc.runtime.driver_core import (
    Context,
    CudaError,
    _state,
    api,
    as_int,
    context_stack,
    current,
    last_error_message,
    lookup,
    new_context,
    register,
    unregister,
)
from xcc.runtime.driver_types import (
    CU_STREAM_LEGACY,
    CU_STREAM_PER_THREAD,
    ERROR_STRINGS,
    CUcontext,
    CUctx_flags,
    CUdevice,
    CUdevice_attribute,
    CUdeviceptr,
    CUevent,
    CUevent_flags,
    CUfunction,
    CUfunction_attribute,
    CUgraph,
    CUgraphExec,
    CUgraphNode,
    CUgraphNodeType,
    CUjit_option,
    CUjitInputType,
    CUlinkState,
    CUmodule,
    CUresult,
    CUstream,
    CUstream_flags,
    CUstreamCaptureMode,
    CUstreamCaptureStatus,
)
from xcc.runtime.graphs import (
    cuGraphDestroy,
    cuGraphExecDestroy,
    cuGraphGetNodes,
    cuGraphInstantiate,
    cuGraphLaunch,
    cuGraphNodeGetType,
    cuStreamBeginCapture,
    cuStreamEndCapture,
    cuStreamIsCapturing,
)
from xcc.runtime.host_args import image_bytes, kernel_args
from xcc.runtime.jit_options import parse_jit_options
from xcc.runtime.linker import cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkCreate, cuLinkDestroy
from xcc.runtime.memory_api import (
    cuMemAlloc,
    cuMemcpyDtoD,
    cuMemcpyDtoDAsync,
    cuMemcpyDtoH,
    cuMemcpyDtoHAsync,
    cuMemcpyHtoD,
    cuMemcpyHtoDAsync,
    cuMemFree,
    cuMemsetD8,
    cuMemsetD8Async,
    cuMemsetD16,
    cuMemsetD16Async,
    cuMemsetD32,
    cuMemsetD32Async,
)
from xcc.runtime.module import load_module
from xcc.runtime.streams import (
    cuEventCreate,
    cuEventDestroy,
    cuEventElapsedTime,
    cuEventQuery,
    cuEventRecord,
    cuEventSynchronize,
    cuStreamCreate,
    cuStreamDestroy,
    cuStreamGetFlags,
    cuStreamQuery,
    cuStreamSynchronize,
    cuStreamWaitEvent,
)

__all__ = [
    "CU_STREAM_LEGACY", "CU_STREAM_PER_THREAD", "CUcontext", "CUctx_flags", "CUdevice", "CUdevice_attribute",
    "CUdeviceptr", "CUevent", "CUevent_flags", "CUfunction", "CUfunction_attribute", "CUjit_option", "CUmodule",
    "CUresult", "CUstream", "CUstream_flags", "CUgraph", "CUgraphExec", "CUgraphNode", "CUgraphNodeType",
    "CUstreamCaptureMode", "CUstreamCaptureStatus", "CUjitInputType", "CUlinkState",
    "cuLinkAddData", "cuLinkAddFile", "cuLinkComplete", "cuLinkCreate", "cuLinkDestroy",
    "cuGraphDestroy", "cuGraphExecDestroy", "cuGraphGetNodes", "cuGraphInstantiate", "cuGraphLaunch",
    "cuGraphNodeGetType", "cuStreamBeginCapture", "cuStreamEndCapture", "cuStreamIsCapturing",
    "cuCtxCreate", "cuCtxDestroy", "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxPopCurrent", "cuCtxPushCurrent",
    "cuCtxSetCurrent", "cuCtxSynchronize", "cuDeviceGet", "cuDeviceGetAttribute", "cuDeviceGetCount",
    "cuDeviceGetName", "cuDriverGetVersion", "cuEventCreate", "cuEventDestroy", "cuEventElapsedTime", "cuEventQuery",
    "cuEventRecord", "cuEventSynchronize", "cuFuncGetAttribute", "cuGetErrorName", "cuGetErrorString", "cuInit",
    "cuLaunchKernel", "cuMemAlloc", "cuMemFree", "cuMemcpyDtoD", "cuMemcpyDtoDAsync", "cuMemcpyDtoH",
    "cuMemcpyDtoHAsync", "cuMemcpyHtoD", "cuMemcpyHtoDAsync", "cuMemsetD16", "cuMemsetD16Async", "cuMemsetD32",
    "cuMemsetD32Async", "cuMemsetD8", "cuMemsetD8Async", "cuModuleGetFunction", "cuModuleGetGlobal", "cuModuleLoad", "cuModuleLoadData",
    "cuModuleLoadDataEx", "cuModuleUnload", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuStreamCreate",
    "cuStreamDestroy", "cuStreamGetFlags", "cuStreamQuery", "cuStreamSynchronize", "cuStreamWaitEvent",
    "last_error_message",
]

R = CUresult
DRIVER_VERSION = 13000
_INVALID = R.CUDA_ERROR_INVALID_VALUE


# -- initialisation, errors, devices -------------------------------------------------------------

@api(needs_init=False)
def cuInit(Flags) -> None:
    if as_int(Flags, "Flags") != 0:
        raise CudaError(_INVALID, "cuInit flags must be 0")
    _state["initialized"] = True


@api(1, needs_init=False)
def cuDriverGetVersion() -> int:
    return DRIVER_VERSION


def _result(error) -> CUresult:
    try:
        return CUresult(as_int(error, "error"))
    except ValueError:
        raise CudaError(_INVALID, f"{int(error)} is not a CUresult") from None


@api(1, needs_init=False)
def cuGetErrorName(error) -> bytes:
    return _result(error).name.encode()


@api(1, needs_init=False)
def cuGetErrorString(error) -> bytes:
    return ERROR_STRINGS[_result(error)].encode()


_device = {}


def _machine(dev=0):
    if not isinstance(dev, CUdevice | int):
        raise TypeError(f"Argument 'dev' is not instance of type (expected CUdevice or int, found {type(dev).__name__})")
    if int(dev) != 0:
        raise CudaError(R.CUDA_ERROR_INVALID_DEVICE, f"no device {int(dev)}: the emulator has one device, 0")
    if "machine" not in _device:
        _device["machine"] = Device().machine
    return _device["machine"]


@api(1)
def cuDeviceGetCount() -> int:
    return 1


@api(1)
def cuDeviceGet(ordinal) -> CUdevice:
    _machine(as_int(ordinal, "ordinal"))
    return CUdevice(0)


@api(1)
def cuDeviceGetName(length, dev) -> bytes:
    """The name as ``length`` bytes, NUL-padded (C's char buffer)."""
    n = as_int(length, "len")
    if n <= 0:
        raise CudaError(_INVALID, "len must be positive")
    name = f"xcc emulated {_machine(dev).name}".encode()[:n - 1]
    return name + b"\0" * (n - len(name))


def _device_attributes(m) -> dict[CUdevice_attribute, int]:
    A, lim = CUdevice_attribute, m.limits
    major, minor = (int(x) for x in str(m.data.get("compute_capability", "9.0")).split("."))
    tpb = int(lim["max_threads_per_block"])
    return {
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: tpb,
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: tpb, A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: tpb,
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: 64,
        A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: 2**31 - 1, A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: 65535,
        A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: 65535,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: int(lim["shared_memory_per_block"]),
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: int(lim["shared_memory_per_block"]),
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: int(lim["shared_memory_bytes"]),
        A.CU_DEVICE_ATTRIBUTE_WARP_SIZE: int(m.data.get("warp_size", 32)),
        A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: int(lim["registers"]),
        A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: int(lim["registers"]),
        A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE: int(m.data["sm"]["clock_mhz"]) * 1000,
        A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: int(m.data["sm"]["count"]),
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: int(lim["max_threads"]),
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: int(lim["max_ctas"]),
        A.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: 1,
        A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: 1,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: major,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: minor,
    }


@api(1)
def cuDeviceGetAttribute(attrib, dev) -> int:
    attrs = _device_attributes(_machine(dev))
    a = as_int(attrib, "attrib")
    if a not in attrs:
        raise CudaError(_INVALID, f"device attribute {a} is not supported by xcc")
    return attrs[a]


# -- contexts ------------------------------------------------------------------------------------

@api(1)
def cuCtxCreate(*args) -> CUcontext:
    """``cuCtxCreate(ctxCreateParams, flags, dev)`` (cuda-python 13) or ``cuCtxCreate(flags, dev)`` (12.x):
    a new context with its own device memory, made current (pushed on this thread's stack)."""
    if len(args) == 3:
        params, flags, dev = args
        if params is not None:
            raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "ctxCreateParams (execution affinity, CIG) is not supported")
    elif len(args) == 2:
        flags, dev = args
    else:
        raise TypeError(f"cuCtxCreate takes (ctxCreateParams, flags, dev) or (flags, dev), got {len(args)} arguments")
    if as_int(flags, "flags") & ~0x3F:
        raise CudaError(_INVALID, f"unknown context flags {as_int(flags, 'flags'):#x}")
    ctx = new_context(Device(_machine(dev)))
    context_stack().append(ctx)
    return ctx.handle


def _ctx(h) -> Context:
    return lookup(h, CUcontext, Context, "ctx")


@api()
def cuCtxDestroy(ctx) -> None:
    """Destroy a context and everything in it (allowed after a sticky error, as on a GPU)."""
    c = _ctx(ctx)
    for obj in [*c.streams, *c.events, *(f for m in c.modules for f in m.functions.values()), *c.modules, c]:
        unregister(obj)
    stack = context_stack()
    stack[:] = [s for s in stack if s is not c]


@api(1)
def cuCtxGetCurrent() -> CUcontext:
    stack = context_stack()
    return stack[-1].handle if stack else CUcontext(0)


@api()
def cuCtxSetCurrent(ctx) -> None:
    stack = context_stack()
    if ctx is None or int(ctx) == 0:
        if stack:
            stack.pop()
        return
    c = _ctx(ctx)
    if stack:
        stack[-1] = c
    else:
        stack.append(c)


@api()
def cuCtxPushCurrent(ctx) -> None:
    context_stack().append(_ctx(ctx))


@api(1)
def cuCtxPopCurrent() -> CUcontext:
    stack = context_stack()
    if not stack:
        raise CudaError(R.CUDA_ERROR_INVALID_CONTEXT, "no current context to pop")
    return stack.pop().handle


@api(1)
def cuCtxGetDevice() -> CUdevice:
    current()
    return CUdevice(0)


@api()
def cuCtxSynchronize() -> None:
    """Wait for the context's work: already done; returns a sticky error if there is one."""
    current()


# -- modules and functions -----------------------------------------------------------------------

class _Module:
    def __init__(self, ctx: Context, module):
        self.ctx, self.module = ctx, module
        self.names = module.function_names  # parses and checks PTX: INVALID_PTX at load, as in CUDA
        self.functions: dict[str, _Function] = {}  # compiled at cuModuleGetFunction

    def function(self, name: str) -> _Function:
        f = self.functions.get(name)
        if f is None:
            if name not in self.names:
                raise CudaError(R.CUDA_ERROR_NOT_FOUND, f"no kernel named '{name}' in the module "
                                                        f"(it has: {', '.join(sorted(self.names)) or 'none'})")
            f = self.functions[name] = _Function(self, self.module.get_function(name))
            register(CUfunction, f)
        return f


class _Function:
    def __init__(self, module: _Module, fn):
        self.module, self.fn = module, fn

    @property
    def kernel(self):
        return self.fn.kernel

    def max_block(self) -> int:
        """The largest block the kernel can be launched with: its .maxntid/.reqntid and the
        device limit, lowered until one CTA's registers and shared memory fit in an SM."""
        m = self.fn.device.machine
        warp = int(m.data.get("warp_size", 32))
        t = min(self.kernel.max_threads, int(m.limits["max_threads_per_block"]))
        while t > 0 and occupancy(self.kernel, m, t).ctas_per_sm < 1:
            t = (t - 1) // warp * warp
        return t


def _load(image, opt_level: int = 3, max_registers: int = 255) -> CUmodule:
    ctx = current()
    data = image_bytes(image)
    try:
        m = _Module(ctx, load_module(data, device=ctx.device, opt_level=opt_level, max_registers=max_registers))
    except XccError as e:
        if type(e) is XccError:  # neither PTX nor an image (e.g. not UTF-8 text)
            raise CudaError(R.CUDA_ERROR_INVALID_IMAGE, str(e)) from None
        raise
    ctx.modules.append(m)
    return register(CUmodule, m)


@api(1)
def cuModuleLoad(fname) -> CUmodule:
    path = Path(fname.decode() if isinstance(fname, bytes) else fname)
    if not path.is_file():
        raise CudaError(R.CUDA_ERROR_FILE_NOT_FOUND, f"cannot read '{path}'")
    return _load(path.read_bytes())


@api(1)
def cuModuleLoadData(image) -> CUmodule:
    return _load(image)


@api(1)
def cuModuleLoadDataEx(image, numOptions, options, optionValues) -> CUmodule:
    """As cuModuleLoadData, with JIT options: CU_JIT_OPTIMIZATION_LEVEL (0-4; xcc's -O0..-O3, 4 = 3),
    CU_JIT_MAX_REGISTERS, CU_JIT_ERROR_LOG_BUFFER / CU_JIT_INFO_LOG_BUFFER (a bytearray, a numpy array
    or an address with its ..._SIZE_BYTES; they receive xcc's diagnostic, and the module's kernel names);
    the other options are accepted and ignored.  An immutable ``bytes`` log buffer is not written:
    read :func:`last_error_message` instead."""
    jit = parse_jit_options(numOptions, options, optionValues)
    try:
        h = _load(image, jit.opt_level, jit.max_registers)
    except (CudaError, XccError) as e:
        jit.write_error(str(e))
        raise
    m = lookup(h, CUmodule, _Module, "module")
    jit.write_info(f"xcc: kernels {', '.join(m.names)}; each is compiled (or found in the JIT cache) "
                   "at its cuModuleGetFunction")
    jit.write_error("")
    return h


def _module(h) -> _Module:
    m = lookup(h, CUmodule, _Module, "hmod")
    m.ctx.check()
    return m


def _function(h, what: str = "hfunc") -> _Function:
    f = lookup(h, CUfunction, _Function, what)
    f.module.ctx.check()
    return f


@api(1)
def cuModuleGetFunction(hmod, name) -> CUfunction:
    """Kernel ``name`` (bytes, as in cuda-python, or str); compiled now through the JIT cache, so a
    kernel that xcc cannot compile fails here with CUDA_ERROR_INVALID_PTX."""
    m = _module(hmod)
    key = name.decode() if isinstance(name, bytes | bytearray) else name
    if not isinstance(key, str):
        raise TypeError(f"Argument 'name' is not bytes or str: {type(name).__name__}")
    return m.function(key).handle


@api(2)
def cuModuleGetGlobal(hmod, name) -> tuple[CUdeviceptr, int]:
    """``(CUdeviceptr, bytes)`` of the module's ``.global`` variable ``name`` (a ``__device__`` variable):
    the memory its kernels use, which keeps its contents across launches until the module is unloaded."""
    m = _module(hmod)
    key = name.decode() if isinstance(name, bytes | bytearray) else name
    if not isinstance(key, str):
        raise TypeError(f"Argument 'name' is not bytes or str: {type(name).__name__}")
    try:
        arr = m.module.get_global(key)
    except LaunchError as e:
        raise CudaError(R.CUDA_ERROR_NOT_FOUND, str(e)) from None
    return CUdeviceptr(arr.ptr), arr.nbytes


@api()
def cuModuleUnload(hmod) -> None:
    m = _module(hmod)
    for obj in [*m.functions.values(), m]:
        unregister(obj)
    m.ctx.modules.remove(m)
    m.module.unload()


@api(1)
def cuFuncGetAttribute(attrib, hfunc) -> int:
    """Attributes of the compiled kernel image (registers, static shared and local memory, block limit)."""
    f = _function(hfunc)
    k, A = f.kernel, CUfunction_attribute
    lim = f.fn.device.machine.limits
    values = {
        A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: f.max_block(),
        A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: k.shared_bytes,
        A.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: 0,
        A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: k.local_bytes,
        A.CU_FUNC_ATTRIBUTE_NUM_REGS: k.registers,
        A.CU_FUNC_ATTRIBUTE_BINARY_VERSION: 90,
        A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: int(lim["shared_memory_per_block"]) - k.shared_bytes,
    }
    a = as_int(attrib, "attrib")
    if a not in values:
        raise CudaError(_INVALID, f"function attribute {a} is not supported by xcc")
    return values[a]


@api(1)
def cuOccupancyMaxActiveBlocksPerMultiprocessor(func, blockSize, dynamicSMemSize) -> int:
    """CTAs per SM for this block size, from the runtime's ``Function.occupancy`` (0 if it cannot launch)."""
    f = _function(func, "func")
    b, smem = as_int(blockSize, "blockSize"), as_int(dynamicSMemSize, "dynamicSMemSize")
    if b < 1 or smem < 0:
        raise CudaError(_INVALID, "blockSize must be positive and dynamicSMemSize non-negative")
    if b > f.max_block():
        return 0
    return f.fn.occupancy(b, smem).ctas_per_sm


# -- launch --------------------------------------------------------------------------------------

@api()
def cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                   sharedMemBytes, hStream, kernelParams, extra) -> None:
    """Launch ``f`` on ``hStream``; it runs to completion before this returns (see xcc.runtime.streams).
    ``extra`` must be None or 0 (CU_LAUNCH_PARAM_BUFFER_POINTER is not supported)."""
    fn = _function(f, "f")
    ctx = fn.module.ctx
    grid = tuple(as_int(v, "gridDim") for v in (gridDimX, gridDimY, gridDimZ))
    block = tuple(as_int(v, "blockDim") for v in (blockDimX, blockDimY, blockDimZ))
    shared = as_int(sharedMemBytes, "sharedMemBytes")
    lim = fn.fn.device.machine.limits
    tpb = int(lim["max_threads_per_block"])
    if min(grid) < 1 or grid[0] > 2**31 - 1 or max(grid[1:]) > 65535:
        raise CudaError(_INVALID, f"grid {grid} is outside 1..(2**31-1, 65535, 65535)")
    if min(block) < 1 or block[0] > tpb or block[1] > tpb or block[2] > 64:
        raise CudaError(_INVALID, f"block {block} is outside 1..({tpb}, {tpb}, 64)")
    threads = block[0] * block[1] * block[2]
    if threads > min(fn.kernel.max_threads, tpb):
        raise CudaError(_INVALID, f"a block of {threads} threads exceeds the limit of "
                                  f"{min(fn.kernel.max_threads, tpb)} for '{fn.kernel.name}'")
    if shared < 0 or fn.kernel.shared_bytes + shared > int(lim["shared_memory_per_block"]):
        raise CudaError(_INVALID, f"{shared} bytes of dynamic shared memory exceed the per-block limit")
    if threads > fn.max_block():
        raise CudaError(R.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                        f"a block of {threads} threads of '{fn.kernel.name}' ({fn.kernel.registers} registers per "
                        f"thread) does not fit in an SM; at most {fn.max_block()}")
    if not (extra is None or (isinstance(extra, int) and extra == 0) or (isinstance(extra, list | tuple) and not extra)):
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernel's 'extra' argument is not supported")
    stream = ctx.stream(hStream)
    args = kernel_args(fn.kernel.params, kernelParams)
    clock_khz = int(fn.fn.device.machine.data["sm"]["clock_mhz"]) * 1000
    ctx.run(stream, lambda: fn.fn.launch(grid, block, args, shared),
            lambda stats: stats.cycles / clock_khz if stats.cycles is not None else None)
