"""The JIT linker of :mod:`xcc.runtime.driver`: ``cuLinkCreate``, ``cuLinkAddData``, ``cuLinkAddFile``,
``cuLinkComplete``, ``cuLinkDestroy``, as cuda-python shapes them.

Inputs are PTX (``CU_JIT_INPUT_PTX``), typically modules compiled with ``nvcc -rdc=true``.
``cuLinkComplete`` links them (:func:`xcc.ir.link.link_modules`: every ``.extern`` function and
variable resolved, a duplicate or unresolved symbol is ``CUDA_ERROR_INVALID_PTX`` with the linker's
message in ``CU_JIT_ERROR_LOG_BUFFER``) and compiles every kernel into one ``.xbin`` image, xcc's
cubin: it returns the image's host address and size, valid until ``cuLinkDestroy``, and
``cuModuleLoadData`` loads it.  cubin, fatbinary and library inputs are ``CUDA_ERROR_NOT_SUPPORTED``.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from xcc.diagnostics import XccError
from xcc.driver import CompileOptions, Source, compile_module
from xcc.runtime.driver_core import CudaError, api, as_int, current, lookup, register, unregister
from xcc.runtime.driver_types import CUjitInputType, CUlinkState, CUresult
from xcc.runtime.host_args import host_view
from xcc.runtime.jit_options import JitOptions, parse_jit_options

R = CUresult


class LinkState:
    def __init__(self, ctx, jit: JitOptions):
        self.ctx, self.jit = ctx, jit
        self.sources: list[Source] = []
        self.image = None  # the ctypes buffer holding the completed image


def _state(h) -> LinkState:
    st = lookup(h, CUlinkState, LinkState, "state")
    st.ctx.check()
    return st


def _add(st: LinkState, kind, text: bytes, name: str) -> None:
    t = CUjitInputType(as_int(kind, "type"))
    if t != CUjitInputType.CU_JIT_INPUT_PTX:
        raise CudaError(R.CUDA_ERROR_NOT_SUPPORTED, f"{t.name} inputs are not supported (xcc links PTX)")
    if st.image is not None:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "the link is already complete")
    try:
        st.sources.append(Source(text.split(b"\0", 1)[0].decode("utf-8"), name))
    except UnicodeDecodeError as e:
        raise CudaError(R.CUDA_ERROR_INVALID_PTX, f"{name}: not PTX text (byte {e.start} is not UTF-8)") from None


@api(1)
def cuLinkCreate(numOptions, options, optionValues) -> CUlinkState:
    """A link; options as for ``cuModuleLoadDataEx`` (optimisation level, register limit, log buffers)."""
    return register(CUlinkState, LinkState(current(), parse_jit_options(numOptions, options, optionValues)))


@api()
def cuLinkAddData(state, type, data, size, name, numOptions, options, optionValues) -> None:
    """Add ``size`` bytes of PTX from ``data`` (bytes, a buffer or a host address) named ``name``."""
    st = _state(state)
    n = as_int(size, "size")
    raw = data if isinstance(data, bytes) else host_view(data, n, "data").tobytes()
    label = name.decode() if isinstance(name, bytes) else str(name or "<ptx>")
    _add(st, type, bytes(raw[:n]), label)


@api()
def cuLinkAddFile(state, type, path, numOptions, options, optionValues) -> None:
    st = _state(state)
    p = Path(path.decode() if isinstance(path, bytes) else path)
    if not p.is_file():
        raise CudaError(R.CUDA_ERROR_FILE_NOT_FOUND, f"cannot read '{p}'")
    _add(st, type, p.read_bytes(), str(p))


@api(2)
def cuLinkComplete(state) -> tuple[int, int]:
    """(host address, size) of the linked and compiled ``.xbin`` image."""
    st = _state(state)
    if not st.sources:
        raise CudaError(R.CUDA_ERROR_INVALID_VALUE, "nothing was added to the link")
    if st.image is None:
        opts = CompileOptions(opt_level=st.jit.opt_level, max_registers=max(16, st.jit.max_registers),
                              machine=st.ctx.device.machine.name)
        try:
            data = compile_module(st.sources, opts, machine=st.ctx.device.machine).to_bytes()
        except XccError as e:
            st.jit.write_error(str(e))
            raise
        st.jit.write_error("")
        st.jit.write_info(f"xcc: linked {len(st.sources)} input(s) into {len(data)} bytes")
        st.image = ctypes.create_string_buffer(data, len(data))
    return ctypes.addressof(st.image), len(st.image.raw)


@api()
def cuLinkDestroy(state) -> None:
    unregister(_state(state))


__all__ = ["cuLinkAddData", "cuLinkAddFile", "cuLinkComplete", "cuLinkCreate", "cuLinkDestroy"]
