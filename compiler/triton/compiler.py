"""xcc's Triton compiler backend: Triton's own NVIDIA pipeline, stopping at PTX.

Triton picks a backend by its target's ``backend`` field; xcc's targets say ``"xcc"`` (with the CUDA
capability 80 or 90 and warp size 32), so Triton's NVIDIA backend keeps ``"cuda"`` and the two never
compete.  Every stage is the NVIDIA backend's (ttir -> ttgir -> llir -> ptx, the same passes, the same
options, the same PTX a GPU build gets) except the last: there is no ``cubin`` stage, ptxas does not run,
and the PTX itself is the kernel's binary (``binary_ext = "ptx"``), which :mod:`xcc.triton.driver`
hands to xcc's JIT.

The PTX ``.version`` follows Triton's rule (the CUDA version of its bundled ptxas: 8.8 for sm_80, 9.4 for
sm_90a); where that ptxas cannot run, those versions are assumed, so compiling needs no CUDA tool at all.
"""

from __future__ import annotations

import functools

from triton.backends.nvidia import compiler as _nvidia

FALLBACK_PTX_VERSION = {80: 88, 90: 94}  # ptxas 12.9 (sm_80) and ptxas-blackwell 13.4 (sm_90a)


@functools.lru_cache
def _ptx_version(capability: int) -> int:
    """The PTX ISA version Triton would write for ``capability`` (``88`` is PTX 8.8)."""
    try:
        return _nvidia.ptx_get_version(_nvidia.get_ptxas(capability).version)
    except Exception:  # no runnable ptxas: the versions of the ptxas Triton 3.9 bundles
        return FALLBACK_PTX_VERSION.get(capability, 88)


class XccBackend(_nvidia.CUDABackend):
    """Triton's CUDA backend for targets ``GPUTarget("xcc", 80 | 90, 32)``, its result the kernel's PTX."""

    @staticmethod
    def supports_target(target) -> bool:
        return target.backend == "xcc"

    def __init__(self, target) -> None:
        super().__init__(target)
        self.binary_ext = "ptx"

    def parse_options(self, opts):
        opts = dict(opts)
        if opts.get("ptx_version") is None:
            opts["ptx_version"] = _ptx_version(self.target.arch)
        return super().parse_options(opts)

    def add_stages(self, stages, options, language):
        super().add_stages(stages, options, language)
        stages.pop("cubin", None)

    @functools.lru_cache  # noqa: B019 (one backend object per target; as Triton's own hash)
    def hash(self) -> str:
        return f"xcc-ptx{_ptx_version(self.target.arch)}-{self.target.arch}"
