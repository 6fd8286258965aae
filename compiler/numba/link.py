"""Code objects, linking and kernels as numba-cuda takes them from ``cuda.core``, over xcc's driver.

numba-cuda hands the linker PTX: its kernel, and PTX that NVRTC makes from the ``.cu`` files it links
(``reshape_funcs.cu``, its fp16/bf16 helpers; :class:`Program` compiles them through
``cuda.bindings.nvrtc``).  ``Linker.link("cubin")`` keeps the PTX; the module is loaded when numba-cuda
first asks for its handle: one PTX as it is (``cuModuleLoadData``: each kernel compiled, or found in
xcc's JIT cache, when it is fetched), several linked by xcc's ``cuLinkComplete``.  LTO-IR, cubin,
fatbin, object and library inputs have no meaning on xcc and are refused with an
:class:`XccLinkError` naming the input (so are cooperative launches, which link ``libcudadevrt.a``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.numba.binding import numba_driver
from xcc.runtime import driver as _xcc


class XccLinkError(RuntimeError):
    """An input numba-cuda asked to link that xcc cannot take."""


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
        return Kernel(numba_driver().cuModuleGetFunction(self.handle, key.encode()), key)


def _load(ptxes: list[bytes]):
    """A module of the current context from PTX texts (linked by xcc when there are several)."""
    drv = numba_driver()
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
        return int(numba_driver().cuFuncGetAttribute(getattr(_xcc.CUfunction_attribute, attr), self.handle))

    num_regs = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_NUM_REGS"))
    const_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES"))
    local_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"))
    shared_size_bytes = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"))
    max_threads_per_block = property(lambda self: self._get("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"))


class Kernel:
    def __init__(self, handle, name: str):
        self.handle, self.name = handle, name
        self.attributes = KernelAttributes(handle)
