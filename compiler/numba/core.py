"""The ``cuda.core`` objects numba-cuda uses, over xcc's driver.

numba-cuda 0.30 takes a few objects from ``cuda.core`` (1.x) besides the driver binding: the device
(``Device``: compute capability, primary context), streams (``Stream.from_handle``), code objects and
their link (``ObjectCode``, ``Linker``, ``LinkerOptions``), kernels (``ObjectCode.get_kernel``, with
``attributes``) and the launch (``LaunchConfig``, ``launch``).  These classes have the same shape and
call the driver through numba-cuda's own ``driver`` object (so a failure is numba's ``CudaAPIError``
with xcc's diagnostic, see :mod:`xcc.numba.binding`).

Linking: numba-cuda hands the linker PTX (its kernel, and PTX that NVRTC made from the ``.cu`` files it
links, e.g. ``reshape_funcs.cu``).  ``Linker.link("cubin")`` keeps the PTX; the module is loaded when
numba-cuda asks for its handle: one PTX is loaded as it is (``cuModuleLoadData``: each kernel is
compiled, or found in xcc's JIT cache, when it is first fetched), several are linked by xcc's
``cuLinkComplete``.  LTO-IR, cubin, fatbin, object and library inputs have no meaning on xcc and are
refused with a :class:`XccLinkError` naming the input (cooperative launches, which link
``libcudadevrt.a``, are therefore not supported).
"""

from __future__ import annotations

import ctypes
import uuid
from dataclasses import dataclass

import numpy as np
from cuda.core import Buffer
from cuda.core import MemoryResource as _CoreMemoryResource
from cuda.core.utils import StridedMemoryView

from xcc.numba.binding import BINDING
from xcc.runtime import driver as _xcc


def _driver():
    from numba.cuda.cudadrv.driver import driver

    return driver


class XccLinkError(RuntimeError):
    """An input numba-cuda asked to link that xcc cannot take."""


# -- device, context, stream ---------------------------------------------------------------------

class _Context:
    def __init__(self, handle):
        self.handle = handle


class MemoryResource(_CoreMemoryResource):
    """Device memory as ``cuda.core.Buffer`` objects (numba-cuda copies a host array argument into one):
    ``cuMemAlloc`` in the current context, ``cuMemFree`` when cuda.core drops the buffer.

    It reports itself host-accessible and not device-accessible: for a device-accessible resource
    cuda.core records a stream token (and reads pointer attributes) through the real libcuda, which
    is absent; numba-cuda only reads the buffer's address, shape and strides.
    """

    def __init__(self, device_id: int = 0):
        self._device_id = device_id

    def allocate(self, size, stream=None):
        return Buffer.from_handle(int(_driver().cuMemAlloc(int(size))), int(size), mr=self)

    def deallocate(self, ptr, size, stream=None):
        BINDING.cuMemFree(int(ptr))  # a context already reset has freed it: nothing to report

    @property
    def is_device_accessible(self) -> bool:
        return False

    @property
    def is_host_accessible(self) -> bool:
        return True

    @property
    def is_managed(self) -> bool:
        return False

    @property
    def device_id(self) -> int:
        return self._device_id


class Device:
    """``cuda.core.Device``: ordinal, compute capability and name from the driver; the primary context."""

    def __init__(self, device_id: int = 0):
        drv, A = _driver(), _xcc.CUdevice_attribute
        self.device_id = int(device_id)
        major = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device_id)
        minor = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device_id)
        self.compute_capability = (int(major), int(minor))
        name = drv.cuDeviceGetName(64, self.device_id)
        self.name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
        self.uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"xcc:{self.name}:{self.device_id}"))
        self.memory_resource = MemoryResource(self.device_id)

    def allocate(self, size: int, stream=None):
        return self.memory_resource.allocate(size, stream)

    @property
    def context(self) -> _Context:
        """The primary context (a new one after ``cuDevicePrimaryCtxReset``, e.g. ``cuda.close()``)."""
        return _Context(_driver().cuDevicePrimaryCtxRetain(self.device_id))

    def set_current(self) -> None:
        """Make the primary context current (pushed, unless it already is)."""
        drv, ctx = _driver(), self.context.handle
        if int(drv.cuCtxGetCurrent()) != int(ctx):
            drv.cuCtxPushCurrent(ctx)

    def sync(self) -> None:
        _driver().cuCtxSynchronize()


class Stream:
    """``cuda.core.Stream``: a stream handle (0 is the default stream)."""

    def __init__(self, handle=0):
        self.handle = int(handle or 0)

    @classmethod
    def from_handle(cls, handle) -> Stream:
        return cls(handle)

    def __cuda_stream__(self):
        return (0, self.handle)

    def sync(self) -> None:
        _driver().cuStreamSynchronize(self.handle)


def native_handle(h) -> int:
    """``cuda.bindings.utils.get_cuda_native_handle``: a handle's value."""
    return int(h)


@dataclass(frozen=True)
class HostArrayView:
    """A host array as numba-cuda reads a ``StridedMemoryView`` of it: address, shape, strides in items."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def host_memory_view(obj, *, stream_ptr):
    """numba-cuda's ``_make_strided_memory_view``.  A numpy array whose dtype DLPack cannot carry
    (records, datetimes, bytes) is described directly: cuda.core's array-interface path asks libcuda
    for the current device.  Anything else goes through cuda.core, as in numba-cuda."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "VMmSU":
        item = obj.dtype.itemsize
        if any(s % item for s in obj.strides):
            raise ValueError(f"array of {obj.dtype} with strides {obj.strides} not a multiple of its item size")
        return HostArrayView(obj.ctypes.data, obj.shape, tuple(s // item for s in obj.strides), obj.dtype)
    if isinstance(obj, np.generic) and obj.dtype.kind in "VMmSU":
        return host_memory_view(np.asarray(obj), stream_ptr=stream_ptr)
    return StridedMemoryView.from_any_interface(obj, stream_ptr=stream_ptr)


# -- code, link, kernels -------------------------------------------------------------------------

def _refuse(what: str):
    """An ``ObjectCode.from_*`` constructor for an input kind xcc cannot link."""

    def make(cls, data, name: str = ""):
        raise XccLinkError(f"cannot link {name or 'an input'}: {what} holds NVIDIA machine code or NVVM IR; "
                           "xcc links PTX only")

    return classmethod(make)


class ObjectCode:
    """``cuda.core.ObjectCode``: PTX before the link; after it, the module's PTX texts, loaded into the
    current context when ``handle`` is first read."""

    def __init__(self, code, code_type: str, name: str = ""):
        self.code, self.code_type, self.name = code, code_type, name
        self._handle = None

    @classmethod
    def from_ptx(cls, ptx, name: str = "<ptx>") -> ObjectCode:
        return cls(ptx.encode() if isinstance(ptx, str) else bytes(ptx), "ptx", name)

    from_cubin = _refuse("a cubin")
    from_ltoir = _refuse("LTO-IR")
    from_fatbin = _refuse("a fatbin")
    from_object = _refuse("an object file")
    from_library = _refuse("a library")

    @property
    def handle(self):
        if self._handle is None:
            self._handle = _load(self.code)
        return self._handle

    def get_kernel(self, name) -> Kernel:
        key = name.decode() if isinstance(name, bytes) else name
        return Kernel(_driver().cuModuleGetFunction(self.handle, key.encode()), key)


def _load(ptxes: list[bytes]):
    """A module of the current context from PTX texts (linked by xcc when there are several)."""
    drv = _driver()
    if len(ptxes) == 1:
        return drv.cuModuleLoadData(ptxes[0] + b"\0")
    state = drv.cuLinkCreate(0, [], [])
    try:
        for i, ptx in enumerate(ptxes):
            drv.cuLinkAddData(state, _xcc.CUjitInputType.CU_JIT_INPUT_PTX, ptx, len(ptx),
                              f"<numba-ptx-{i}>".encode(), 0, [], [])
        addr, _size = drv.cuLinkComplete(state)
        return drv.cuModuleLoadData(addr)
    finally:
        drv.cuLinkDestroy(state)


class Program:
    """``cuda.core.Program`` for the CUDA C++ numba-cuda compiles with NVRTC (the ``.cu`` files it links,
    e.g. its fp16 and bf16 helpers): compiled to PTX through ``cuda.bindings.nvrtc`` directly, since
    cuda.core's own ``compile`` first asks libcuda for the driver version."""

    def __init__(self, code, code_type: str, options=None):
        if code_type.lower() not in ("c++", "cxx"):
            raise XccLinkError(f"NVRTC program of type {code_type!r}: xcc's Numba path compiles C++ only")
        self.code = code.encode() if isinstance(code, str) else bytes(code)
        self.options = options

    def compile(self, target_type: str, logs=None, **kw) -> ObjectCode:
        from cuda.bindings import nvrtc
        from numba.cuda.cudadrv.error import NvrtcCompilationError

        if target_type != "ptx":
            raise XccLinkError(f"NVRTC to {target_type!r}: xcc takes PTX (LTO-IR needs nvJitLink)")
        name = (getattr(self.options, "name", None) or "<numba-cu>")
        opts = self.options.as_bytes("nvrtc") if self.options is not None else []
        err, prog = nvrtc.nvrtcCreateProgram(self.code, name.encode(), 0, [], [])
        if err:
            raise NvrtcCompilationError(f"{name}: nvrtcCreateProgram: {err.name}")
        try:
            err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            log = log.rstrip(b"\0").decode(errors="replace").strip()
            if err:
                raise NvrtcCompilationError(f"{name}: NVRTC failed ({err.name}):\n{log}")
            if log and logs is not None:
                logs.write(log)
            _, size = nvrtc.nvrtcGetPTXSize(prog)
            ptx = b" " * size
            nvrtc.nvrtcGetPTX(prog, ptx)
        finally:
            nvrtc.nvrtcDestroyProgram(prog)
        return ObjectCode.from_ptx(ptx.rstrip(b"\0"), name=name)


class LinkerOptions:
    """``cuda.core.LinkerOptions``: kept; xcc compiles with its own defaults (-O3, 255 registers)."""

    def __init__(self, **options):
        self.options = options


class Linker:
    """``cuda.core.Linker`` over PTX inputs; ``link("cubin")`` gives the :class:`ObjectCode` to load."""

    def __init__(self, *object_codes, options: LinkerOptions | None = None):
        self.options = options
        self.ptxes = []
        for obj in object_codes:
            if getattr(obj, "code_type", None) != "ptx":
                raise XccLinkError(f"cannot link {getattr(obj, 'name', obj)!r} "
                                   f"({getattr(obj, 'code_type', '?')}): xcc links PTX only")
            code = obj.code
            self.ptxes.append(code.encode() if isinstance(code, str) else bytes(code).split(b"\0", 1)[0])

    def link(self, target_type: str) -> ObjectCode:
        if target_type != "cubin":
            raise XccLinkError(f"link to {target_type!r}: xcc links to a loadable module ('cubin') only; "
                               "link-time optimisation (numba's lto=True) needs nvJitLink")
        return ObjectCode(self.ptxes, "xcc-module", "<numba-module>")

    def get_info_log(self) -> str:
        return ""

    def get_error_log(self) -> str:
        return ""

    def close(self) -> None:
        pass


@dataclass
class KernelAttributes:
    """``cuda.core`` kernel attributes (cuda-core >= 1.0: properties), from ``cuFuncGetAttribute``."""

    handle: object

    def _get(self, attr: str) -> int:
        return int(_driver().cuFuncGetAttribute(getattr(_xcc.CUfunction_attribute, attr), self.handle))

    num_regs = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_NUM_REGS"))
    const_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES"))
    local_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"))
    shared_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"))
    max_threads_per_block = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"))


class Kernel:
    def __init__(self, handle, name: str):
        self.handle, self.name = handle, name
        self.attributes = KernelAttributes(handle)


# -- launch --------------------------------------------------------------------------------------

def _dim3(v, what: str) -> tuple[int, int, int]:
    t = tuple(int(x) for x in v) if isinstance(v, tuple | list) else (int(v),)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {v!r}")
    return t + (1,) * (3 - len(t))


class LaunchConfig:
    """``cuda.core.LaunchConfig``: grid and block (ints or 1-3 tuples), dynamic shared memory."""

    def __init__(self, grid=1, block=1, shmem_size=0, is_cooperative=False, cooperative_launch=False, **kw):
        if kw:
            raise TypeError(f"LaunchConfig: unsupported options {sorted(kw)}")
        self.grid, self.block = _dim3(grid, "grid"), _dim3(block, "block")
        self.shmem_size = int(shmem_size or 0)
        self.is_cooperative = bool(is_cooperative or cooperative_launch)


_CTYPE_OF = {bool: ctypes.c_bool, int: ctypes.c_int64, float: ctypes.c_double}


def _param(v):
    """One kernel argument as (value, ctypes type): ctypes values keep their type; Python ints are
    ``intptr_t`` (numba passes array sizes, shapes, strides and pointers so), floats ``double``."""
    if isinstance(v, ctypes._SimpleCData):
        return v, type(v)
    if isinstance(v, np.generic):
        return v.item(), np.ctypeslib.as_ctypes_type(v.dtype)
    t = _CTYPE_OF.get(type(v))
    if t is None and isinstance(v, int):
        t = ctypes.c_int64
    if t is None:
        raise TypeError(f"kernel argument of type {type(v).__name__} is not supported by xcc's launch")
    return v, t


def launch(stream, config: LaunchConfig, kernel: Kernel, *args) -> None:
    """``cuda.core.launch``: ``cuLaunchKernel`` on xcc (the launch runs before this returns)."""
    if config.is_cooperative:
        raise XccLinkError(f"kernel '{kernel.name}': cooperative launches (grid.sync()) are not supported by "
                           "xcc's Numba path")
    params = [_param(a) for a in args]
    values = tuple(v for v, _ in params)
    types = tuple(t for _, t in params)
    handle = stream.handle if isinstance(stream, Stream) else int(stream or 0)
    _driver().cuLaunchKernel(kernel.handle, *config.grid, *config.block, config.shmem_size, handle,
                             (values, types), 0)
