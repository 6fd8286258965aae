"""Point numba-cuda at xcc: the module globals through which it reaches the driver and ``cuda.core``.

numba-cuda is not forked.  It reaches the GPU through a handful of names bound at import in its own
modules; :func:`install` rebinds them (for the rest of the process):

========================================  =============================================================
``numba.cuda.cudadrv.driver``             ``binding`` (every ``cu*`` call): :data:`xcc.numba.binding.BINDING`;
                                          ``ExperimentalDevice``, ``ExperimentalStream``, ``ObjectCode``,
                                          ``Linker``, ``LinkerOptions``, ``get_cuda_native_handle``:
                                          :mod:`xcc.numba.device`, :mod:`xcc.numba.link`
``numba.cuda.cudadrv.devicearray``        ``_make_strided_memory_view`` (host arrays of records)
``numba.cuda.cudadrv.nvrtc``              ``Program`` (C++ that numba-cuda links, compiled to PTX)
``numba.cuda.dispatcher``                 ``launch``, ``LaunchConfig`` (the kernel launch)
``numba.cuda.memory_management.nrt``      ``launch``, ``LaunchConfig`` (NRT's own kernels)
========================================  =============================================================

numba-cuda's ``Driver`` singleton, made at import, found no ``libcuda`` and recorded that; installing
clears that record (and the driver functions it had bound) so that its next call initialises against
xcc.  The device list is rebuilt likewise.  The pinned versions are those whose internals were read:
another numba-cuda is refused with the versions named.
"""

from __future__ import annotations

import importlib
from importlib import metadata

PINNED = {"numba-cuda": "0.30.4", "numba": "0.68.1"}
SERIES = {"cuda-core": "1."}  # xcc.numba.device/link mirror cuda.core 1.x (properties, MemoryResource)
_originals: dict[tuple[str, str], object] = {}


class NumbaVersionError(RuntimeError):
    """numba or numba-cuda is missing, or not the version xcc's Numba path was built against."""


def check_versions() -> None:
    """Raise :class:`NumbaVersionError` unless the pinned numba and numba-cuda (and cuda.core 1.x) are
    installed."""
    for dist, want in PINNED.items():
        try:
            have = metadata.version(dist)
        except metadata.PackageNotFoundError:
            raise NumbaVersionError(f"{dist} is not installed: pip install 'xcc[numba]' "
                                    f"(pins {dist}=={want})") from None
        if have != want:
            raise NumbaVersionError(f"xcc's Numba path is built against {dist}=={want}, found {have}: "
                                    f"pip install '{dist}=={want}'")
    for dist, prefix in SERIES.items():
        have = metadata.version(dist)
        if not have.startswith(prefix):
            raise NumbaVersionError(f"xcc's Numba path needs {dist} {prefix}x, found {have}")


def _replacements() -> dict[str, dict[str, object]]:
    """Module -> {name: xcc's object} (imported only once the versions are checked)."""
    from xcc.numba import device, launch, link
    from xcc.numba.binding import BINDING

    launching = {"launch": launch.launch, "LaunchConfig": launch.LaunchConfig}
    return {
        "numba.cuda.cudadrv.driver": {
            "binding": BINDING,
            "ExperimentalDevice": device.Device,
            "ExperimentalStream": device.Stream,
            "ObjectCode": link.ObjectCode,
            "Linker": link.Linker,
            "LinkerOptions": link.LinkerOptions,
            "get_cuda_native_handle": device.native_handle,
        },
        "numba.cuda.cudadrv.devicearray": {"_make_strided_memory_view": device.host_memory_view},
        "numba.cuda.cudadrv.nvrtc": {"Program": link.Program},
        "numba.cuda.dispatcher": launching,
        "numba.cuda.memory_management.nrt": launching,
    }


def _reset_driver() -> None:
    """Forget numba-cuda's driver initialisation (the failed search for libcuda, or xcc's), the driver
    calls it bound and its device list; the next driver call initialises again."""
    from numba.cuda.cudadrv import devices, driver

    drv = driver.driver
    for name in [n for n in vars(drv) if n.startswith("cu")]:
        delattr(drv, name)
    drv.__init__()  # looks for libcuda again; with xcc installed, not finding it is no failure
    drv.lib, drv.is_initialized, drv.initialization_error = None, False, None
    type(devices._runtime.gpus).lst.fget.cache_clear()
    tls = driver._ActiveContext._tls_cache
    if hasattr(tls, "ctx_devnum"):
        del tls.ctx_devnum


def installed() -> bool:
    return bool(_originals)


def install() -> None:
    """Rebind numba-cuda's driver, ``cuda.core`` and launch names to xcc's (idempotent)."""
    if installed():
        return
    check_versions()
    for modname, names in _replacements().items():
        mod = importlib.import_module(modname)
        for name, value in names.items():
            _originals[modname, name] = getattr(mod, name)
            setattr(mod, name, value)
    _reset_driver()
