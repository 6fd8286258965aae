"""Triton on xcc: ``@triton.jit`` kernels launch on the xg1 ISA interpreter, unchanged.

    import xcc.triton
    xcc.triton.activate()                       # or XCC_TRITON=1 in the environment
    x = rt.to_device(a); out = rt.empty(a.shape, np.float32)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)

Triton's own NVIDIA backend lowers the kernel to PTX for ``sm_80`` (``activate(arch="sm_90a")`` or
``XCC_TRITON_ARCH=sm_90a`` for Hopper's), stopping before ptxas (:mod:`xcc.triton.compiler`); xcc compiles
that PTX through its JIT cache and runs it on the ISA interpreter (:mod:`xcc.triton.driver`,
:mod:`xcc.triton.launcher`).  Wherever a kernel takes a pointer it accepts an xcc device array (anything
with ``data_ptr()`` and a numpy ``dtype``); Triton specialises on 16-byte alignment and on integers equal
to 1 or divisible by 16 as on a GPU.  ``triton.testing.do_bench`` and ``@triton.autotune`` measure the
cycle model's time (:mod:`xcc.triton.bench`), so autotuning picks the configuration fastest on xg1.
Needs the ``triton`` extra (``pip install -e '.[triton]'``, Triton 3.9.0).
"""

from __future__ import annotations

import sys

from xcc.diagnostics import XccError
from xcc.triton import target
from xcc.triton.timeline import launches, now_ms

__all__ = ["activate", "deactivate", "is_active", "launches", "now_ms"]


def _require_triton() -> None:
    try:
        import triton  # noqa: F401
    except ImportError as e:
        raise XccError("xcc.triton needs Triton 3.9: pip install -e '.[triton]' (in an xcc checkout) "
                       f"({e})") from None


def activate(arch: str = target.DEFAULT_ARCH, device=None):
    """Make xcc Triton's active driver, compiling for ``arch`` (``"sm_80"`` or ``"sm_90a"``) and launching
    on ``device`` (an :class:`xcc.runtime.Device`; xcc's default device if None).  Returns the driver."""
    _require_triton()
    from triton.backends import Backend, backends
    from triton.runtime.driver import driver

    from xcc.triton.compiler import XccBackend
    from xcc.triton.driver import XccDriver

    target.select(arch, device)
    # without the package's entry point (an install older than it), register the backend by hand
    backends.setdefault("xcc", Backend(XccBackend, XccDriver))
    if not isinstance(driver._active, XccDriver):  # not driver.active: that would create Triton's default
        driver.set_active(XccDriver())
    return driver._active


def deactivate() -> None:
    """Give Triton its default driver back (the one it would pick without xcc) and its own ``do_bench``."""
    target.deselect()
    if "triton.runtime.driver" not in sys.modules:  # Triton never started: nothing to give back
        return
    from triton.runtime.driver import driver

    from xcc.triton import bench

    bench.uninstall()
    driver._active = None
    driver._default = None


def is_active() -> bool:
    """Whether Triton's active driver is xcc's."""
    runtime = sys.modules.get("triton.runtime.driver")
    if runtime is None:
        return False
    from xcc.triton.driver import XccDriver

    return isinstance(runtime.driver._active, XccDriver)
