"""xcc's stand-in for ``cuda.bindings._example_helpers``, the helpers NVIDIA's cuda-python samples import.

A sample runs on xcc with its imports changed::

    from xcc.runtime import driver as cuda                  # was: from cuda.bindings import driver as cuda
    from xcc.runtime.example_helpers import KernelHelper, check_cuda_errors, find_cuda_device

The names and their behaviour follow the samples' helpers; the one difference is where a module
comes from.  The samples compile their CUDA C++ source with NVRTC; :class:`KernelHelper` instead loads
PTX that nvcc made from the same source (``nvcc -arch=sm_80 -ptx``), found by the source's SHA-256
as ``<sha256[:16]>.ptx`` in :func:`ptx_dir` and, where it is missing and ``nvcc`` is on ``PATH``,
compiled there once.  ``find_cuda_device`` initialises the driver and makes device 0's primary
context current (the samples' ``cudart.cudaSetDevice``).  Command-line flags (``device=``) are read as
the samples read them: ``-device=N`` in ``sys.argv``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from xcc.runtime import driver

PTX_DIR_ENV = "XCC_CUDA_PYTHON_PTX_DIR"
NVCC_FLAGS = ("-arch=sm_80", "-ptx", "-std=c++17", "--fmad=true")


def ptx_dir() -> Path:
    """Where the samples' PTX lives: ``$XCC_CUDA_PYTHON_PTX_DIR``, else ``~/.cache/xcc/cuda_python_ptx``."""
    env = os.environ.get(PTX_DIR_ENV)
    return Path(env) if env else Path.home() / ".cache" / "xcc" / "cuda_python_ptx"


def ptx_path(code: str) -> Path:
    return ptx_dir() / f"{hashlib.sha256(code.encode()).hexdigest()[:16]}.ptx"


def ptx_for(code: str) -> bytes:
    """nvcc's PTX for CUDA C++ ``code``: the stored file, else compiled now (and stored)."""
    path = ptx_path(code)
    if not path.is_file():
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            raise RuntimeError(f"no PTX for this sample's kernels at {path} and no nvcc to make it "
                               f"(set {PTX_DIR_ENV} to a directory holding it)")
        path.parent.mkdir(parents=True, exist_ok=True)
        src = path.with_suffix(".cu")
        src.write_text(code)
        subprocess.run([nvcc, *NVCC_FLAGS, str(src), "-o", str(path)], check=True, capture_output=True)
    return path.read_bytes()


def check_cuda_errors(result):
    """Raise ``RuntimeError`` naming the error if ``result[0]`` is not success; else the call's values."""
    if result[0].value:
        err, name = driver.cuGetErrorName(result[0])
        text = name.decode() if err == driver.CUresult.CUDA_SUCCESS else "<unknown>"
        raise RuntimeError(f"CUDA error code={result[0].value}({text})")
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


def check_cmd_line_flag(name: str) -> bool:
    return any(arg.lstrip("-").startswith(name) for arg in sys.argv[1:])


def get_cmd_line_argument_int(name: str) -> int:
    for arg in sys.argv[1:]:
        if arg.lstrip("-").startswith(name):
            return int(arg.lstrip("-")[len(name):])
    return 0


def _device_id() -> int:
    return get_cmd_line_argument_int("device=") if check_cmd_line_flag("device=") else 0


def find_cuda_device_drv():
    """Initialise the driver; device ``-device=N`` (0 by default) as a ``CUdevice``."""
    check_cuda_errors(driver.cuInit(0))
    return check_cuda_errors(driver.cuDeviceGet(_device_id()))


def find_cuda_device() -> int:
    """Initialise the driver and make the device's primary context current; its ordinal."""
    dev = find_cuda_device_drv()
    check_cuda_errors(driver.cuCtxSetCurrent(check_cuda_errors(driver.cuDevicePrimaryCtxRetain(dev))))
    return int(dev)


def requirement_not_met(message: str):
    print(message, file=sys.stderr)
    sys.exit(int(os.environ.get("CUDA_BINDINGS_SKIP_EXAMPLE", "1")))


def check_compute_capability_too_low(dev_id, required_cc_major_minor) -> None:
    A = driver.CUdevice_attribute
    have = tuple(check_cuda_errors(driver.cuDeviceGetAttribute(a, dev_id)) for a in (
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    if have < tuple(required_cc_major_minor):
        requirement_not_met(f"CUDA device compute capability too low: {have=!r}, {required_cc_major_minor=!r}")


class KernelHelper:
    """A module made from the CUDA C++ ``code`` (its nvcc PTX; see the module docstring), loaded in the
    current context (the device's primary context if none is current)."""

    def __init__(self, code: str, dev_id):
        err, ctx = driver.cuCtxGetCurrent()
        if err != driver.CUresult.CUDA_SUCCESS or int(ctx) == 0:
            find_cuda_device()
        self.module = check_cuda_errors(driver.cuModuleLoadData(ptx_for(code)))

    def get_function(self, name):
        return check_cuda_errors(driver.cuModuleGetFunction(self.module, name))

    getFunction = get_function  # the older samples' spelling


# -- running a sample with its imports changed -----------------------------------------------------

IMPORTS = [  # cuda-python's import -> xcc's
    (re.compile(r"^(\s*)from cuda\.bindings import driver\b", re.M), r"\1from xcc.runtime import driver"),
    (re.compile(r"^(\s*)from cuda\.bindings import runtime\b", re.M), r"\1from xcc.runtime import cudart"),
    (re.compile(r"^(\s*)from cuda\.bindings\._example_helpers import", re.M),
     r"\1from xcc.runtime.example_helpers import"),
]


def adapt(source: str) -> tuple[str, int]:
    """``source`` with its cuda-python imports pointed at xcc (``from cuda.bindings import driver`` ->
    ``from xcc.runtime import driver``, ``runtime`` -> ``xcc.runtime.cudart``, the example helpers ->
    this module), and the number of lines changed; nothing else is touched."""
    changed = 0
    for pattern, replacement in IMPORTS:
        source, n = pattern.subn(replacement, source)
        changed += n
    return source, changed


def run_sample(path, argv=()) -> None:
    """Run NVIDIA's sample ``path`` as ``__main__`` with its imports adapted (:func:`adapt`); a failing
    sample exits non-zero (``SystemExit``) or raises, as it would on a GPU."""
    path = Path(path)
    source, _ = adapt(path.read_text())
    saved = sys.argv
    sys.argv = [str(path), *argv]
    try:
        exec(compile(source, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
    finally:
        sys.argv = saved


__all__ = ["IMPORTS", "KernelHelper", "adapt", "run_sample", "check_cmd_line_flag", "check_compute_capability_too_low", "check_cuda_errors",
           "find_cuda_device", "find_cuda_device_drv", "get_cmd_line_argument_int", "ptx_dir", "ptx_for",
           "requirement_not_met"]


def main(argv=None) -> None:
    """``python -m xcc.runtime.example_helpers SAMPLE.py [ARGS...]``: run one of NVIDIA's samples on xcc."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.exit("usage: python -m xcc.runtime.example_helpers SAMPLE.py [ARGS...]")
    run_sample(args[0], args[1:])


if __name__ == "__main__":
    main()
