"""Numba on xcc (issue 16): ``@numba.cuda.jit`` kernels launched on the emulated device after
``xcc.numba.activate()``, and a named selection of numba-cuda's own kernel tests run the same way.

numba-cuda's tests are unittest classes (and a few plain functions); each selection entry below names
a module, class or method of the installed ``numba.cuda.tests.cudapy`` package and the number of tests
it holds, so a test that silently disappears is noticed.  ``EXCLUDED`` lists the tests taken out of a
selected class and why (xcc backend gaps, and one numba-cuda test that writes past its array, which
xcc reports as the out-of-bounds store it is).  The long entries are in the slow tier.
"""

from __future__ import annotations

import io
import unittest

import numpy as np
import pytest

pytest.importorskip("numba.cuda")

import xcc.numba  # noqa: E402

T = "numba.cuda.tests.cudapy."

# (dotted name, number of tests it holds), fast enough for the default tier (a few seconds each).
SELECTION = [
    (T + "test_array_args", 11),                 # arrays, tuples, namedtuples of arrays and scalars as arguments
    (T + "test_blackscholes", 1),                # float32/float64 math (exp, log, sqrt, erf via libdevice)
    (T + "test_montecarlo", 1),                  # grid-stride loop, libdevice math, host reduction
    (T + "test_mandel", 1),                      # loops, complex arithmetic in registers
    (T + "test_sync.TestCudaSync", 19),          # syncthreads(_count/_and/_or), syncwarp, threadfence
    (T + "test_warp_ops", 20),                   # shfl (up/down/xor/idx), vote (all/any/eq/ballot), match, activemask
    (T + "test_idiv", 2),                        # integer and float floor division
    (T + "test_forall", 4),                      # kernel.forall launches (occupancy-derived block size)
    (T + "test_random", 7),                      # xoroshiro128+ RNG states in device arrays
    (T + "test_minmax", 8),                      # min/max on floats with NaNs
    (T + "test_exception", 6),                   # raise in a kernel (debug=True: error codes read back)
    (T + "test_retrieve_autoconverted_arrays", 8),  # cuda.In/Out/InOut host arrays copied back or not
    (T + "test_stream_api", 6),                  # streams, events, stream callbacks and async_done
]

# Longer entries (tens of seconds each on the ISA interpreter), or many small kernels.
SLOW_SELECTION = [
    (T + "test_atomics", 128),                   # every atomic op on global and shared memory, all widths, CAS
    (T + "test_math.TestCudaMath", 47),          # the math module on float16/32/64 and ints (libdevice, NVRTC fp16)
    (T + "test_localmem.TestCudaLocalMem", 10),  # cuda.local.array of scalars, records and structs
    (T + "test_reduction", 7),                   # cuda.reduce: shared-memory tree reductions
    (T + "test_transpose", 4),                   # shared-memory tiled transpose, 2-D grids
    (T + "test_vector_type", 4),                 # float32x4 and friends: constructors, attributes, arithmetic
    (T + "test_record_dtype", 42),               # numpy record arrays and records as arguments
    (T + "test_operator", 20),                   # fp16 operators (C++ helpers compiled by NVRTC, linked by xcc)
    (T + "test_array", 24),                      # device arrays: shapes, strides, local/shared arrays, views
    (T + "test_intrinsics.TestCudaIntrinsic", 74),  # thread indexing, popc/brev/clz/ffs, fma, cbrt, fp16
    (T + "test_complex_kernel", 1),
    (T + "test_freevar", 1),
    (T + "test_globals", 1),
    (T + "test_boolean", 1),
    (T + "test_slicing", 2),
    (T + "test_iterators", 4),
    (T + "test_lang", 3),
    (T + "test_enums", 7),
    (T + "test_frexp_ldexp", 4),
    (T + "test_inline", 10),
    (T + "test_py2_div_issue", 1),
    (T + "test_userexc", 1),
    (T + "test_nondet", 1),
]

EXCLUDED = {
    T + "test_localmem.TestCudaLocalMem.test_struct_model_type_arr":
        "numba-cuda's test writes 10 int32 into np.array((10,)), a 1-element array: xcc reports the "
        "out-of-bounds store (a GPU does not notice it)",
    T + "test_intrinsics.TestCudaIntrinsic.test_issue_9229":
        "a 22121216 x 256 grid (5.7e9 threads): passes, in 130 s on the ISA interpreter",
    T + "test_intrinsics.TestCudaIntrinsic.test_round_to_f4":
        "hundreds of launches of a long rounding kernel: more than 200 s on the ISA interpreter",
    T + "test_intrinsics.TestCudaIntrinsic.test_round_to_f8": "as test_round_to_f4, on float64 (not run here)",
}


@pytest.fixture(scope="module", autouse=True)
def on_xcc():
    xcc.numba.activate()  # for the rest of the process (only this module uses numba)


def _suite(name: str) -> unittest.TestSuite:
    """The tests under ``name`` (a plain test function becomes one test), less :data:`EXCLUDED`."""
    import importlib

    module, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        obj = None
    if callable(obj) and not isinstance(obj, type) and attr.startswith("test"):
        return unittest.TestSuite([unittest.FunctionTestCase(obj, description=name)])
    suite = unittest.defaultTestLoader.loadTestsFromName(name)

    def flat(s):
        for t in s:
            yield from (flat(t) if isinstance(t, unittest.TestSuite) else [t])

    return unittest.TestSuite([t for t in flat(suite) if t.id() not in EXCLUDED])


def _run(name: str, count: int) -> None:
    suite = _suite(name)
    excluded = sum(1 for e in EXCLUDED if e.startswith(name + "."))
    assert suite.countTestCases() + excluded == count, (
        f"{name}: {suite.countTestCases()} tests + {excluded} excluded, expected {count} (numba-cuda changed?)")
    out = io.StringIO()
    result = unittest.TextTestRunner(stream=out, verbosity=2).run(suite)
    if not result.wasSuccessful():
        from numba import cuda

        cuda.close()  # a kernel fault is sticky: give the next entry a fresh context
    print(f"{name}: {result.testsRun - len(result.skipped)} passed of {result.testsRun} run "
          f"({len(result.skipped)} skipped, {excluded} excluded)")
    assert result.wasSuccessful(), out.getvalue()[-8000:]


@pytest.mark.parametrize("name,count", SELECTION, ids=[n[len(T):] for n, _ in SELECTION])
def test_numba_cuda_selection(name, count):
    _run(name, count)


@pytest.mark.slow
@pytest.mark.parametrize("name,count", SLOW_SELECTION, ids=[n[len(T):] for n, _ in SLOW_SELECTION])
def test_numba_cuda_selection_slow(name, count):
    _run(name, count)


# -- the launch path itself ----------------------------------------------------------------------

def _add_kernel():
    from numba import cuda

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    return add


def test_launch_with_numpy_and_device_arrays():
    from numba import cuda

    add = _add_kernel()
    a = np.arange(300, dtype=np.float32)
    b = np.full(300, 0.5, np.float32)
    c = np.zeros_like(a)
    add[3, 128](a, b, c)  # host arrays: copied in and back
    np.testing.assert_array_equal(c, a + b)
    d_a, d_b, d_c = cuda.to_device(a), cuda.to_device(b), cuda.device_array_like(a)
    add[(3,), (128,)](d_a, d_b, d_c)
    np.testing.assert_array_equal(d_c.copy_to_host(), a + b)
    assert "xcc" in cuda.get_current_device().name


def test_scalars_2d_grid_and_stream():
    from numba import cuda

    @cuda.jit
    def axpy2d(alpha, x, out):
        i, j = cuda.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = alpha * x[i, j] + i - j

    x = np.arange(20 * 12, dtype=np.float64).reshape(20, 12)
    stream = cuda.stream()
    d_x = cuda.to_device(x, stream=stream)
    d_out = cuda.device_array_like(x, stream=stream)
    axpy2d[(3, 2), (8, 8), stream](2.5, d_x, d_out)
    got = d_out.copy_to_host(stream=stream)
    stream.synchronize()
    i, j = np.indices(x.shape)
    np.testing.assert_array_equal(got, 2.5 * x + i - j)


def test_kernel_fault_is_a_located_cuda_error():
    """An out-of-bounds store is numba's CudaAPIError carrying xcc's located diagnostic; the context
    is reset afterwards, as a CUDA program must after a sticky error."""
    from numba import cuda
    from numba.cuda.cudadrv.driver import CudaAPIError

    @cuda.jit
    def oob(out):
        out[cuda.grid(1) + 1000] = 1.0

    d = cuda.device_array(4, np.float32)
    with pytest.raises(CudaAPIError, match=r"ILLEGAL_ADDRESS \(xcc: .*out-of-bounds"):
        oob[1, 1](d)
    cuda.close()  # drop the faulted context; the next call makes a fresh one
    test_launch_with_numpy_and_device_arrays()


def test_unsupported_link_input_is_a_clear_error():
    """numba-cuda links cubins, fatbins, LTO-IR and libraries through cuda.core; xcc takes PTX only."""
    from xcc.numba.link import Linker, ObjectCode, XccLinkError

    with pytest.raises(XccLinkError, match="libcudadevrt.a: a library .* xcc links PTX only"):
        ObjectCode.from_library(b"!<arch>", name="libcudadevrt.a")
    with pytest.raises(XccLinkError, match="link-time optimisation"):
        Linker(ObjectCode.from_ptx(".version 8.0"), options=None).link("ptx")


def test_versions_are_pinned():
    from importlib import metadata

    assert xcc.numba.PINNED == {"numba-cuda": "0.30.4", "numba": "0.68.1"}
    for dist, want in xcc.numba.PINNED.items():
        assert metadata.version(dist) == want


def test_other_numba_cuda_version_is_refused(monkeypatch):
    from xcc.numba import patch

    monkeypatch.setattr(patch.metadata, "version", lambda dist: "0.1.0")
    with pytest.raises(xcc.numba.NumbaVersionError, match=r"numba-cuda==0\.30\.4, found 0\.1\.0"):
        xcc.numba.check_versions()
