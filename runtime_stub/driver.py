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

Arguments convert as cuda-python's Cython signatures convert them (an ``unsigned int`` grid size may
be a float, truncated; a negative one raises ``OverflowError``; a wrong type ``TypeError``): those are
exceptions in cuda-python too, and everything the driver itself checks is a ``CUresult``.

Device 0 is the only device; every ``CUdevice_attribute`` has a value, from the machine description
where it has one (:mod:`xcc.runtime.device_attributes`).  ``cuDriverGetVersion`` reports 13000 (CUDA
13.0, whose PTX ISA 9.0 the examples use).  Kernels, their attributes and launches:
:mod:`xcc.runtime.driver_functions`; graphs: :mod:`xcc.runtime.graphs` (capture, launch) and
:mod:`xcc.runtime.graph_build` (explicit construction); managed and host memory and pointer attributes:
:mod:`xcc.runtime.host_memory_api`; prefetch and advice on managed memory: :mod:`xcc.runtime.managed_memory_api`.
"""

from __future__ import annotations

from pathlib import Path

from xcc.diagnostics import LaunchError, XccError
from xcc.runtime import timeline
from xcc.runtime.device import Device
from xcc.runtime.device_attributes import device_attributes
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
from xcc.runtime.driver_functions import (
    LoadedModule,
    cuFuncGetAttribute,
    cuFuncSetAttribute,
    cuLaunchCooperativeKernel,
    cuLaunchKernel,
    cuOccupancyMaxActiveBlocksPerMultiprocessor,
)
from xcc.runtime.driver_structs import (
    CUDA_HOST_NODE_PARAMS,
    CUDA_KERNEL_NODE_PARAMS,
    CUDA_MEMCPY3D,
    CUDA_MEMSET_NODE_PARAMS,
)
from xcc.runtime.driver_types import (
    CU_MEMHOSTALLOC_DEVICEMAP,
    CU_MEMHOSTALLOC_PORTABLE,
    CU_MEMHOSTALLOC_WRITECOMBINED,
    CU_STREAM_LEGACY,
    CU_STREAM_PER_THREAD,
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
    CUhostFn,
    CUjit_option,
    CUjitInputType,
    CUlinkState,
    CUmemAttach_flags,
    CUmemoryPool,
    CUmemorytype,
    CUmodule,
    CUpointer_attribute,
    CUresult,
    CUstream,
    CUstream_flags,
    CUstreamCaptureMode,
    CUstreamCaptureStatus,
    cuuint32_t,
    cuuint64_t,
    error_string,
)
from xcc.runtime.graph_build import (
    cuGraphAddDependencies,
    cuGraphAddEmptyNode,
    cuGraphAddHostNode,
    cuGraphAddKernelNode,
    cuGraphAddMemcpyNode,
    cuGraphAddMemsetNode,
    cuGraphCreate,
    cuGraphExecKernelNodeSetParams,
)
from xcc.runtime.graphs import (
    cuGraphClone,
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
from xcc.runtime.host_args import image_bytes
from xcc.runtime.host_memory_api import (
    cuMemAllocHost,
    cuMemAllocManaged,
    cuMemcpy,
    cuMemcpyAsync,
    cuMemFreeHost,
    cuMemHostAlloc,
    cuMemHostGetDevicePointer,
    cuMemHostRegister,
    cuMemHostUnregister,
    cuPointerGetAttribute,
)
from xcc.runtime.jit_options import parse_jit_options
from xcc.runtime.launch_ex import (
    CUlaunchAttribute,
    CUlaunchAttributeID,
    CUlaunchAttributeValue,
    CUlaunchConfig,
    cuLaunchKernelEx,
)
from xcc.runtime.linker import cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkCreate, cuLinkDestroy
from xcc.runtime.managed_memory_api import (
    CU_DEVICE_CPU,
    CU_DEVICE_INVALID,
    CUmem_advise,
    CUmemLocation,
    CUmemLocationType,
    cuMemAdvise,
    cuMemPrefetchAsync,
)
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
from xcc.runtime.mempool_api import (
    cuDeviceGetDefaultMemPool,
    cuMemAllocAsync,
    cuMemFreeAsync,
    cuMemPoolGetAttribute,
    cuMemPoolSetAttribute,
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
from xcc.runtime.tensormap_api import (
    CUtensorMap,
    CUtensorMapDataType,
    CUtensorMapFloatOOBfill,
    CUtensorMapInterleave,
    CUtensorMapL2promotion,
    CUtensorMapSwizzle,
    cuTensorMapEncodeIm2col,
    cuTensorMapEncodeTiled,
)
from xcc.runtime.texture_api import (
    CU_TRSF_NORMALIZED_COORDINATES,
    CU_TRSF_READ_AS_INTEGER,
    CU_TRSF_SRGB,
    CUDA_ARRAY3D_CUBEMAP,
    CUDA_ARRAY3D_DESCRIPTOR,
    CUDA_ARRAY3D_LAYERED,
    CUDA_ARRAY3D_SURFACE_LDST,
    CUDA_ARRAY_DESCRIPTOR,
    CUDA_RESOURCE_DESC,
    CUDA_RESOURCE_VIEW_DESC,
    CUDA_TEXTURE_DESC,
    CUaddress_mode,
    CUarray,
    CUarray_format,
    CUfilter_mode,
    CUmipmappedArray,
    CUresourcetype,
    CUsurfObject,
    CUtexObject,
    cuArray3DCreate,
    cuArrayCreate,
    cuArrayDestroy,
    cuMemcpyAtoH,
    cuMemcpyHtoA,
    cuMipmappedArrayCreate,
    cuMipmappedArrayDestroy,
    cuMipmappedArrayGetLevel,
    cuSurfObjectCreate,
    cuSurfObjectDestroy,
    cuTexObjectCreate,
    cuTexObjectDestroy,
)

__all__ = [
    "CUDA_ARRAY3D_CUBEMAP", "CUDA_ARRAY3D_DESCRIPTOR", "CUDA_ARRAY3D_LAYERED", "CUDA_ARRAY3D_SURFACE_LDST", "CUDA_ARRAY_DESCRIPTOR",
    "CUDA_RESOURCE_DESC", "CUDA_RESOURCE_VIEW_DESC", "CUDA_TEXTURE_DESC", "CU_TRSF_NORMALIZED_COORDINATES",
    "CU_TRSF_READ_AS_INTEGER", "CU_TRSF_SRGB", "CUaddress_mode", "CUarray", "CUarray_format", "CUfilter_mode",
    "CUmipmappedArray", "CUresourcetype", "CUsurfObject", "CUtexObject", "cuArray3DCreate", "cuArrayCreate",
    "cuArrayDestroy", "cuMemcpyAtoH", "cuMemcpyHtoA", "cuMipmappedArrayCreate", "cuMipmappedArrayDestroy",
    "cuMipmappedArrayGetLevel", "cuSurfObjectCreate", "cuSurfObjectDestroy", "cuTexObjectCreate",
    "cuTexObjectDestroy",
    "CUtensorMap", "CUtensorMapDataType", "CUtensorMapFloatOOBfill", "CUtensorMapInterleave",
    "CUtensorMapL2promotion", "CUtensorMapSwizzle", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeTiled",
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
    "last_error_message", "CUDA_KERNEL_NODE_PARAMS", "CUDA_MEMCPY3D", "CUDA_MEMSET_NODE_PARAMS",
    "CU_MEMHOSTALLOC_DEVICEMAP", "CU_MEMHOSTALLOC_PORTABLE", "CU_MEMHOSTALLOC_WRITECOMBINED", "CUmemAttach_flags",
    "CUmemorytype", "CUpointer_attribute", "cuFuncSetAttribute", "cuGraphAddDependencies", "cuGraphAddEmptyNode",
    "cuGraphAddKernelNode", "cuGraphAddMemcpyNode", "cuGraphAddMemsetNode", "cuGraphClone", "cuGraphCreate",
    "cuLaunchCooperativeKernel", "cuMemAllocHost", "cuMemAllocManaged", "cuMemFreeHost", "cuMemHostAlloc",
    "cuMemHostGetDevicePointer", "cuMemcpy", "cuMemcpyAsync", "cuPointerGetAttribute", "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease", "cuDeviceGetDefaultMemPool", "cuMemAllocAsync", "cuMemFreeAsync",
    "cuMemPoolGetAttribute", "cuMemPoolSetAttribute", "CUmemoryPool", "cuuint32_t", "cuuint64_t",
    "cuMemHostRegister", "cuMemHostUnregister", "CUDA_HOST_NODE_PARAMS", "CUhostFn", "cuGraphAddHostNode",
    "cuGraphExecKernelNodeSetParams", "CU_DEVICE_CPU", "CU_DEVICE_INVALID", "CUmem_advise", "CUmemLocation",
    "CUmemLocationType", "cuMemAdvise", "cuMemPrefetchAsync",
    "CUlaunchAttribute", "CUlaunchAttributeID", "CUlaunchAttributeValue", "CUlaunchConfig", "cuLaunchKernelEx",
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
    return error_string(_result(error)).encode()


_device = {}


def machine_of(dev=0):
    """The machine description of device ``dev`` (only 0 exists)."""
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
    machine_of(as_int(ordinal, "ordinal"))
    return CUdevice(0)


@api(1)
def cuDeviceGetName(length, dev) -> bytes:
    """The name as ``length`` bytes, NUL-padded (C's char buffer)."""
    n = as_int(length, "len")
    if n <= 0:
        raise CudaError(_INVALID, "len must be positive")
    name = f"xcc emulated {machine_of(dev).name}".encode()[:n - 1]
    return name + b"\0" * (n - len(name))


@api(1)
def cuDeviceGetAttribute(attrib, dev) -> int:
    attrs = device_attributes(machine_of(dev))
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
    ctx = new_context(Device(machine_of(dev)))
    context_stack().append(ctx)
    return ctx.handle


_primary: dict[int, Context] = {}


@api(1)
def cuDevicePrimaryCtxRetain(dev) -> CUcontext:
    """The device's primary context (the one the runtime API uses), created at the first retain; it is
    not made current (``cuCtxSetCurrent`` does that)."""
    machine_of(dev)
    ctx = _primary.get(0)
    if ctx is None or not _is_live(ctx):
        ctx = _primary[0] = new_context(Device(machine_of(dev)))
    return ctx.handle


@api()
def cuDevicePrimaryCtxRelease(dev) -> None:
    """Release the primary context: it lives on while this process runs (as if still retained)."""
    machine_of(dev)
    if 0 not in _primary:
        raise CudaError(R.CUDA_ERROR_INVALID_CONTEXT, "the primary context was never retained")


def _is_live(ctx: Context) -> bool:
    try:
        return lookup(ctx.handle, CUcontext, Context, "ctx") is ctx
    except CudaError:
        return False


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
    ctx = current()
    tl = timeline.active()
    if tl is not None:  # on the modelled timeline the host waits for every stream of the context
        tl.wait(max([0] + [s.ready for s in tl.states(ctx)]))


# -- modules and functions -----------------------------------------------------------------------

def _load(image, opt_level: int = 3, max_registers: int = 255) -> CUmodule:
    ctx = current()
    data = image_bytes(image)
    try:
        m = LoadedModule(ctx, load_module(data, device=ctx.device, opt_level=opt_level, max_registers=max_registers))
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
    m = lookup(h, CUmodule, LoadedModule, "module")
    jit.write_info(f"xcc: kernels {', '.join(m.names)}; each is compiled (or found in the JIT cache) "
                   "at its cuModuleGetFunction")
    jit.write_error("")
    return h


def _module(h) -> LoadedModule:
    m = lookup(h, CUmodule, LoadedModule, "hmod")
    m.ctx.check()
    return m


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
