"""xcc as a Triton driver: Triton's ``DriverBase`` over the xcc runtime.

Triton asks its active driver for the target to compile for (``GPUTarget("xcc", 80 | 90, 32)``, which
selects :class:`xcc.triton.compiler.XccBackend`), for the current device and stream, and, through
``utils``, to load a compiled kernel: ``load_binary`` receives the kernel's PTX (the xcc backend's binary)
and compiles it with xcc's JIT (:func:`xcc.runtime.load_module`: the disk cache first, then the compiler),
so a kernel Triton has cached is not compiled again by xcc either.  Launches go through
:class:`xcc.triton.launcher.XccLauncher`; benchmarking reads the cycle model (:mod:`xcc.triton.bench`).

Triton discovers this module through the ``triton.backends`` entry point ``xcc`` (pyproject.toml); the
driver is active when :func:`xcc.triton.activate` was called or ``XCC_TRITON=1`` is set, and the latter
also sets ``TRITON_DEFAULT_BACKEND=xcc`` (unless set) so that a machine with a GPU still picks xcc.
"""

from __future__ import annotations

import os

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from xcc.diagnostics import XccError
from xcc.triton import bench, target, timeline

# Triton imports this module whenever it starts (the entry point), xcc in use or not: the runtime and the
# launcher are imported when the driver is created.

if target.env_enabled():
    os.environ.setdefault("TRITON_DEFAULT_BACKEND", "xcc")


class XccUtils:
    """The part of a Triton driver that talks to the device (``driver.active.utils``)."""

    @staticmethod
    def load_binary(name: str, kernel: bytes, shared: int, device: int):
        """Compile the kernel's PTX with xcc: ``(module, function, registers, spilled registers, max threads)``."""
        from xcc.runtime import load_module
        from xcc.sources import Source

        t = target.get(device)
        ptx = kernel.decode() if isinstance(kernel, bytes | bytearray) else kernel
        module = load_module([Source(ptx, f"<triton {name}.{t.arch}.ptx>")], device=t.device)
        function = module.get_function(name)
        image = function.kernel
        max_threads = min(image.max_threads, int(t.device.machine.limits["max_threads_per_block"]))
        return module, function, image.registers, image.spill_bytes // 4, max_threads

    @staticmethod
    def unload_module(module) -> None:
        module.unload()

    @staticmethod
    def get_device_properties(device: int) -> dict:
        """CUDA's device properties under Triton's names, from the machine description."""
        machine = target.get(device).device.machine
        limits, sm = machine.limits, machine.data["sm"]
        return {"max_shared_mem": int(limits["shared_memory_per_block"]),
                "multiprocessor_count": int(sm["count"]),
                "max_num_regs": int(limits["registers"]),
                "warpSize": int(machine.data["warp_size"]),
                "sm_clock_rate": int(sm["clock_mhz"]) * 1000,
                "max_threads_per_block": int(limits["max_threads_per_block"])}


class XccDriver(DriverBase):
    """Triton's active driver when xcc runs its kernels."""

    def __init__(self):
        super().__init__()
        from xcc.triton.launcher import XccLauncher

        self.utils = XccUtils()
        self.launcher_cls = XccLauncher
        bench.install()

    @classmethod
    def is_active(cls) -> bool:
        return target.enabled()

    def map_python_to_cpp_type(self, ty: str) -> str:
        from xcc.triton.launcher import SCALARS

        if ty.startswith("*"):
            return "uint64_t"
        if ty == "bf16":
            return "uint16_t"
        if ty not in SCALARS:
            raise XccError(f"xcc does not launch Triton arguments of type {ty}")
        return SCALARS[ty].__name__

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("xcc", target.get().capability, 32)

    def get_current_device(self) -> int:
        return target.current()

    def set_current_device(self, device: int) -> None:
        target.set_current(device)

    def get_current_stream(self, device: int | None = None) -> int:
        return 0  # launches run to completion in order: one stream

    def get_device_capability(self, device: int | None = None) -> tuple[int, int]:
        cap = target.get(device).capability
        return cap // 10, cap % 10

    def get_active_torch_device(self):
        raise XccError("xcc runs Triton without torch: pass xcc device arrays (xcc.runtime.to_device, empty)")

    def get_device_interface(self):
        return timeline.DeviceInterface

    def get_benchmarker(self):
        return bench.do_bench

    def get_empty_cache_for_benchmark(self):
        return None  # each launch's cycle model starts from cold caches: nothing to flush

    def clear_cache(self, cache) -> None:
        pass
