"""Lazy loading per kernel, as CUDA_MODULE_LOADING=LAZY: a module loads and its kernels run even when one
of its kernels cannot be compiled; the located error comes when that kernel is fetched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import UnsupportedError, XccError
from xcc.runtime import driver as cuda

PTX = Path(__file__).parent / "data" / "runtime" / "lazy_two_kernels.ptx"
REFUSED_LINE = next(i for i, line in enumerate(PTX.read_text().splitlines(), 1) if line.strip().startswith("tcgen05."))


def test_the_other_kernels_of_a_module_run():
    mod = rt.load_module(PTX)
    assert mod.function_names == ["uses_tcgen05", "add_one"]
    out = rt.to_device(np.array([41], np.uint32))
    mod.get_function("add_one").launch(1, 1, (out,))
    assert out.copy_to_host()[0] == 42
    with pytest.raises(UnsupportedError) as err:
        mod.get_function("uses_tcgen05")
    assert err.value.loc.file == str(PTX) and err.value.loc.line == REFUSED_LINE
    assert "tcgen05.fence::before_thread_sync is a Blackwell (sm_100a) instruction" in str(err.value)
    mod.get_function("add_one").launch(1, 1, (out,))  # the module is still usable
    assert out.copy_to_host()[0] == 43


def test_a_kernel_not_in_the_module_names_those_it_has():
    with pytest.raises(XccError, match=r"no kernel named 'nope' \(the PTX defines: uses_tcgen05, add_one\)"):
        rt.load_module(PTX).get_function("nope")


def test_the_driver_api_loads_the_module_and_fails_at_cuModuleGetFunction():
    assert cuda.cuInit(0)[0].value == 0
    _, dev = cuda.cuDeviceGet(0)
    _, ctx = cuda.cuCtxCreate(None, 0, dev)
    try:
        res, mod = cuda.cuModuleLoadData(PTX.read_bytes())
        assert res.value == 0
        res, fn = cuda.cuModuleGetFunction(mod, b"add_one")
        assert res.value == 0
        assert cuda.cuModuleGetFunction(mod, b"uses_tcgen05") == (cuda.CUresult.CUDA_ERROR_INVALID_PTX, None)
        assert f":{REFUSED_LINE}:" in cuda.last_error_message() and "tcgen05" in cuda.last_error_message()
    finally:
        cuda.cuCtxDestroy(ctx)
