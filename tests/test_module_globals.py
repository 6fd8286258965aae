"""Module-scope ``.global`` variables (``__device__`` variables) persist across launches, per loaded
module, on both engines, and the host reaches them with ``Module.get_global`` / ``cuModuleGetGlobal``."""

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import LaunchError
from xcc.runtime import driver as cuda

EX = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(Path(__file__).parent))
LIB, MAIN = EX / "rdc_lib.sm_80.ptx", EX / "rdc_main.sm_80.ptx"


def _bias(mod) -> float:
    return float(mod.get_global("rdc_bias", np.float32).copy_to_host()[0])


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_a_kernel_sets_a_device_variable_that_later_launches_and_the_host_see(engine):
    dev = rt.Device()
    mod = rt.load_module(LIB, device=dev, engine=engine)
    assert _bias(mod) == 0.5  # initialised at first use, before any launch
    mod.get_function("rdc_set_bias").launch(1, 1, [np.float32(1.25)])
    assert _bias(mod) == 1.25
    mod.get_function("rdc_set_bias").launch(1, 1, [np.float32(-3.0)])
    assert _bias(mod) == -3.0
    other = rt.load_module(LIB, device=dev, engine=engine)  # another module: its own copy
    assert _bias(other) == 0.5
    mod.get_global("rdc_bias", np.float32).copy_from_host(np.array([7.5], np.float32))
    assert _bias(mod) == 7.5 and _bias(other) == 0.5
    mod.unload()
    assert dev.memory.used_bytes == other.globals.vars["rdc_bias"][1]


def test_linked_modules_share_the_variable_across_kernels():
    """rdc_set_bias (rdc_lib) writes rdc_bias; rdc_apply (rdc_main, extern) reads the new value."""
    dev = rt.Device()
    mod = rt.load_module([MAIN, LIB], device=dev, engine="ir")
    n = 64
    x = np.arange(n, dtype=np.float32)
    w = np.full(n, 2.0, np.float32)
    d_x, d_w, d_y = rt.to_device(x, dev), rt.to_device(w, dev), rt.to_device(np.zeros(n, np.float32), dev)
    mod.get_function("rdc_set_bias").launch(1, 1, [np.float32(0.25)])
    mod.get_function("rdc_apply").launch(1, n, [np.int32(n), d_x, d_w, d_y])
    np.testing.assert_array_equal(d_y.copy_to_host(), w * x + np.float32(0.25) + np.float32(0.25))


def test_unknown_or_misshapen_global_is_a_launch_error():
    mod = rt.load_module(LIB, device=rt.Device())
    with pytest.raises(LaunchError, match="no .global or .const variable named 'nope'.*it has: rdc_bias"):
        mod.get_global("nope")
    with pytest.raises(LaunchError, match="4 bytes, not a whole number of float64"):
        mod.get_global("rdc_bias", np.float64)


def test_cu_module_get_global():
    assert cuda.cuInit(0)[0] == cuda.CUresult.CUDA_SUCCESS
    err, ctx = cuda.cuCtxCreate(0, 0)
    try:
        err, mod = cuda.cuModuleLoadData(LIB.read_bytes())
        err, dptr, size = cuda.cuModuleGetGlobal(mod, b"rdc_bias")
        assert err == cuda.CUresult.CUDA_SUCCESS and size == 4
        out = np.zeros(1, np.float32)
        assert cuda.cuMemcpyDtoH(out, dptr, 4)[0] == cuda.CUresult.CUDA_SUCCESS
        assert out[0] == 0.5
        assert cuda.cuModuleGetGlobal(mod, "missing")[0] == cuda.CUresult.CUDA_ERROR_NOT_FOUND
        assert cuda.cuModuleUnload(mod)[0] == cuda.CUresult.CUDA_SUCCESS
    finally:
        cuda.cuCtxDestroy(ctx)


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_constant_memory_set_by_the_host_is_what_the_next_launch_reads(engine):
    """cudaMemcpyToSymbol(poly_coeffs, ...) then poly_constant: Horner's rule with fma, bit for bit."""
    from kernel_cases import fma_f32

    dev = rt.Device()
    mod = rt.load_module(EX / "globals_misc.sm_80.ptx", device=dev, engine=engine)
    fn = mod.get_function("_Z13poly_constantiPKfPf")
    n = 200
    x = np.linspace(-2, 2, n, dtype=np.float32)
    d_x, d_y = rt.to_device(x, dev), rt.zeros(n, np.float32, dev)
    for coeffs in (np.arange(1, 9, dtype=np.float32) / 8, np.float32([3, -1, 0.5, 0, 0, 0, 0, 0.25])):
        mod.get_global("poly_coeffs", np.float32).copy_from_host(coeffs)
        fn.launch((n + 127) // 128, 128, [np.int32(n), d_x, d_y])
        want = np.full(n, coeffs[7], np.float32)
        for k in range(6, -1, -1):
            want = fma_f32(want, x, coeffs[k])
        np.testing.assert_array_equal(d_y.copy_to_host(), want)
