"""The JIT options of ``cuModuleLoadDataEx`` and ``cuLinkCreate`` (``CUjit_option`` / value arrays)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xcc.runtime.driver_core import CudaError, as_int
from xcc.runtime.driver_types import CUjit_option, CUresult
from xcc.runtime.host_args import host_view

J = CUjit_option


@dataclass
class JitOptions:
    """CU_JIT_OPTIMIZATION_LEVEL (0-4; xcc's -O0..-O3, 4 = 3), CU_JIT_MAX_REGISTERS, and the error and
    info log buffers (a bytearray, a numpy array or an address with its ..._SIZE_BYTES); the other
    options are accepted and ignored."""

    opt_level: int = 3
    max_registers: int = 255
    error_log: tuple = (None, None)
    info_log: tuple = (None, None)

    def write_error(self, text: str) -> None:
        write_log(*self.error_log, text)

    def write_info(self, text: str) -> None:
        write_log(*self.info_log, text)


def parse_jit_options(numOptions, options, optionValues) -> JitOptions:
    n = as_int(numOptions, "numOptions")
    options, values = list(options or []), list(optionValues or [])
    if len(options) != n or len(values) != n:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE,
                        f"numOptions is {n}, but {len(options)} options and {len(values)} values given")
    opts = {}
    for o, v in zip(options, values):
        try:
            opts[J(as_int(o, "options"))] = v
        except ValueError:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown JIT option {o!r}") from None
    return JitOptions(
        min(as_int(opts.get(J.CU_JIT_OPTIMIZATION_LEVEL, 4), "CU_JIT_OPTIMIZATION_LEVEL"), 3),
        as_int(opts.get(J.CU_JIT_MAX_REGISTERS, 255), "CU_JIT_MAX_REGISTERS"),
        (opts.get(J.CU_JIT_ERROR_LOG_BUFFER), opts.get(J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)),
        (opts.get(J.CU_JIT_INFO_LOG_BUFFER), opts.get(J.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)))


def write_log(buf, size, text: str) -> None:
    """Write ``text`` NUL-terminated into a log buffer (an immutable ``bytes`` buffer is left alone)."""
    if buf is None or isinstance(buf, bytes):
        return
    n = as_int(size, "log buffer size") if size is not None else len(memoryview(buf).cast("B"))
    if n <= 0:
        return
    raw = text.encode()[:n - 1] + b"\0"
    host_view(buf, len(raw), "log buffer", writable=True)[:] = np.frombuffer(raw, np.uint8)
