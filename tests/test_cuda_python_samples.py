"""NVIDIA's cuda-python samples (cuda_bindings/examples of NVIDIA/cuda-python) run on xcc with only their
imports changed (xcc.runtime.example_helpers.adapt): ``driver`` -> ``xcc.runtime.driver``, ``runtime`` ->
``xcc.runtime.cudart``, the example helpers -> ``xcc.runtime.example_helpers``, whose KernelHelper
loads nvcc's PTX of the sample's CUDA C++ in place of NVRTC's output.

The samples are not part of this repository: point ``XCC_CUDA_PYTHON_SAMPLES`` at a directory holding
them (a checkout's ``cuda_bindings/examples``; files are found by name below it).  Their kernels' PTX
comes from ``XCC_CUDA_PYTHON_PTX_DIR`` or is made with nvcc (on PATH) the first time.  Each sample
checks its own results and exits non-zero on a mismatch.  One sample runs at a smaller size than it
is written for (REDUCED), as its full size outlasts a test run on the interpreter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xcc.runtime.example_helpers import PTX_DIR_ENV, adapt

SAMPLES_ENV = "XCC_CUDA_PYTHON_SAMPLES"

# sample -> why it is slow on the interpreter (None: quick)
RUNNING = {
    "vector_add_drv.py": None,
    "clock_nvrtc.py": None,
    "system_wide_atomics.py": "16384 threads x 50 rounds of ten system-scope atomics",
    "simple_zero_copy.py": "2**20 elements initialised and checked element by element in Python",
    "stream_ordered_allocation.py": "21 launches over 2**20 elements",
    "simple_cuda_graphs.py": "12 reductions (of 2**16 floats: see REDUCED)",
    "conjugate_gradient_multi_block_cg.py": "264 CTAs of 512 threads with grid-wide syncs (n cut: see REDUCED)",
}

# sample -> (text, replacement): the one change beyond the imports, for time on the interpreter
REDUCED = {"simple_cuda_graphs.py": ("size = 1 << 24", "size = 1 << 16"),
           "conjugate_gradient_multi_block_cg.py": ("n = 1048576", "n = 1024")}


def _sample(name: str) -> Path:
    root = os.environ.get(SAMPLES_ENV)
    if not root or not Path(root).is_dir():
        pytest.skip(f"set {SAMPLES_ENV} to a directory of NVIDIA's cuda-python samples")
    found = sorted(Path(root).rglob(name))
    if not found:
        pytest.skip(f"{name} is not under {root}")
    if not os.environ.get(PTX_DIR_ENV) and shutil.which("nvcc") is None:
        pytest.skip(f"no nvcc to make the sample's PTX, and {PTX_DIR_ENV} is not set")
    return found[0]


def test_adapt_changes_only_the_imports():
    source = ("import ctypes\n"
              "from cuda.bindings import driver as cuda\n"
              "from cuda.bindings import runtime as cudart\n"
              "from cuda.bindings._example_helpers import KernelHelper, check_cuda_errors\n"
              "x = 'from cuda.bindings import driver'\n")
    out, changed = adapt(source)
    assert changed == 3
    assert out.splitlines() == ["import ctypes", "from xcc.runtime import driver as cuda",
                                "from xcc.runtime import cudart as cudart",
                                "from xcc.runtime.example_helpers import KernelHelper, check_cuda_errors",
                                "x = 'from cuda.bindings import driver'"]


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if why else [])
                                  for n, why in RUNNING.items()])
def test_sample_reports_success(name, tmp_path):
    path = _sample(name)
    if name in REDUCED:
        old, new = REDUCED[name]
        text = path.read_text()
        assert text.count(old) == 1, f"{name} no longer has '{old}'"
        path = tmp_path / name
        path.write_text(text.replace(old, new))
    run = subprocess.run([sys.executable, "-c", "import sys; from xcc.runtime.example_helpers import run_sample; "
                          "run_sample(sys.argv[1])", str(path)], capture_output=True, text=True, timeout=3000,
                         cwd=tmp_path)
    assert run.returncode == 0, f"{name} failed:\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    assert "FAIL" not in run.stdout + run.stderr
