"""Numba on xcc: ``@numba.cuda.jit`` kernels launched on the emulated xg1 device.

    import numpy as np
    import xcc.numba
    from numba import cuda

    xcc.numba.activate()

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    a = np.arange(1000, dtype=np.float32)
    d_c = cuda.device_array_like(a)
    add[4, 256](a, a, d_c)          # numpy arrays are copied in and back, as on a GPU
    c = d_c.copy_to_host()

numba-cuda compiles the kernel to PTX with libNVVM, as it does for a GPU (for the compute capability
xcc's device reports, 9.0); xcc compiles that PTX (through its JIT cache) and runs it on the ISA
interpreter.  Device memory (``cuda.to_device``, ``device_array``, ``copy_to_host``), streams, events
and ``cuda.synchronize`` are xcc's driver calls.  How numba-cuda is reached: :mod:`xcc.numba.patch`
(the names rebound), :mod:`xcc.numba.binding` (the driver) and the ``cuda.core`` objects it uses:
:mod:`xcc.numba.device` (device, memory, streams), :mod:`xcc.numba.link` (NVRTC, link, kernels),
:mod:`xcc.numba.launch`.

Needs the ``numba`` extra (numba-cuda and numba at the pinned versions, NVRTC and libNVVM wheels).
Not supported: cooperative launches (``grid.sync()``), LTO (``lto=True``), linking cubins, fatbins or
libraries, mapped/managed host memory and IPC unless xcc's driver provides them.
"""

from __future__ import annotations

from xcc.numba.patch import PINNED, NumbaVersionError, check_versions, installed


def activate() -> None:
    """Make numba-cuda launch on xcc for the rest of this process (idempotent; there is no way back, as
    numba-cuda's objects made on xcc, such as device arrays, would outlive the switch)."""
    from xcc.numba.patch import install

    install()


def is_active() -> bool:
    return installed()


__all__ = ["NumbaVersionError", "PINNED", "activate", "check_versions", "is_active"]
