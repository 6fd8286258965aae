"""xcc.runtime.driver: cuda-python's driver API over the emulated device (calling conventions,
error codes, sticky faults, streams and events, memory, function attributes, the example script)."""

import ctypes
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.machine import load_machine
from xcc.driver import CompileOptions, compile_module, read_source
from xcc.runtime import driver as cuda
from xcc.runtime import driver_core

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR, fma_f32  # noqa: E402

R = cuda.CUresult
SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"
TRANSPOSE = EXAMPLES_DIR / "transpose_shared.sm_80.ptx"

# One thread stores 7 at p + 4096 bytes: past the end of a small allocation. .maxntid 64.
OOB_PTX = """
.version 8.0
.target sm_80
.address_size 64

.visible .entry oob(.param .u64 oob_param_0)
.maxntid 64, 1, 1
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [oob_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 7;
    st.global.u32 [%rd2+4096], %r1;
    ret;
}
"""


def check(result):
    """cuda-python's checkCudaErrors."""
    assert isinstance(result, tuple) and isinstance(result[0], R)
    if result[0].value:
        raise RuntimeError(f"{result[0].name}: {cuda.last_error_message()}")
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


@pytest.fixture
def ctx():
    check(cuda.cuInit(0))
    dev = check(cuda.cuDeviceGet(0))
    c = check(cuda.cuCtxCreate(None, 0, dev))
    yield c
    cuda.cuCtxDestroy(c)


def saxpy_kernel():
    mod = check(cuda.cuModuleLoadData(SAXPY.read_bytes()))
    return mod, check(cuda.cuModuleGetFunction(mod, b"saxpy"))


def saxpy_params(form: str, n, a, d_x, d_y, keep: list):
    """kernelParams for saxpy(int n, float a, float *x, float *y) in one of cuda-python's forms."""
    if form == "tuple":
        return ((int(n), float(a), d_x, d_y), (ctypes.c_int, ctypes.c_float, None, None))
    values = [np.array([n], np.int32), np.array([a], np.float32),
              np.array([int(d_x)], np.uint64), np.array([int(d_y)], np.uint64)]
    ptrs = np.array([v.ctypes.data for v in values], dtype=np.uint64)
    keep += [values, ptrs]
    if form == "address":
        return ptrs.ctypes.data
    if form == "array":
        return ptrs
    return (ctypes.c_void_p * 4)(*(int(p) for p in ptrs))  # a ctypes array of pointers


@pytest.mark.parametrize("form", ["address", "array", "tuple", "ctypes"])
def test_saxpy_cuda_python_style_is_bit_exact(ctx, form):
    _, kernel = saxpy_kernel()
    n, a = 1000, np.float32(2.5)
    rng = np.random.default_rng(1)
    h_x = rng.standard_normal(n).astype(np.float32)
    h_y = rng.standard_normal(n).astype(np.float32)
    d_x, d_y = check(cuda.cuMemAlloc(h_x.nbytes)), check(cuda.cuMemAlloc(h_y.nbytes))
    assert isinstance(d_x, cuda.CUdeviceptr) and int(d_x) > 1 << 32
    stream = check(cuda.cuStreamCreate(0))
    check(cuda.cuMemcpyHtoDAsync(d_x, h_x.ctypes.data, h_x.nbytes, stream))
    check(cuda.cuMemcpyHtoDAsync(d_y, h_y, h_y.nbytes, stream))
    keep: list = []
    params = saxpy_params(form, n, a, d_x, d_y, keep)
    check(cuda.cuLaunchKernel(kernel, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, params, 0))
    out = np.zeros(n, np.float32)
    check(cuda.cuMemcpyDtoHAsync(out.ctypes.data, d_y, out.nbytes, stream))
    check(cuda.cuStreamSynchronize(stream))
    np.testing.assert_array_equal(out.view(np.uint32), fma_f32(a, h_x, h_y).view(np.uint32))
    check(cuda.cuStreamDestroy(stream))
    check(cuda.cuMemFree(d_x))
    check(cuda.cuMemFree(d_y))


def test_module_image_forms(ctx):
    text = SAXPY.read_text()
    xbin = compile_module([read_source(SAXPY)], CompileOptions()).to_bytes()
    char = np.char.array(SAXPY.read_bytes())
    raw = np.frombuffer(xbin, np.uint8).copy()
    for image in (text, SAXPY.read_bytes(), char.ctypes.data, xbin, raw, raw.ctypes.data):
        mod = check(cuda.cuModuleLoadData(image))
        check(cuda.cuModuleGetFunction(mod, "saxpy"))
        check(cuda.cuModuleUnload(mod))
    mod = check(cuda.cuModuleLoad(str(SAXPY)))
    check(cuda.cuModuleGetFunction(mod, b"saxpy"))


def test_device_queries_follow_the_machine_description():
    check(cuda.cuInit(0))
    m = load_machine("xg1")
    A = cuda.CUdevice_attribute
    dev = check(cuda.cuDeviceGet(0))
    assert check(cuda.cuDeviceGetCount()) == 1
    assert check(cuda.cuDriverGetVersion()) >= 12000
    assert check(cuda.cuDeviceGetName(64, dev)).split(b"\0")[0] == b"xcc emulated xg1"
    want = {A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: m.limits["max_threads_per_block"],
            A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: m.data["sm"]["count"],
            A.CU_DEVICE_ATTRIBUTE_WARP_SIZE: m.data["warp_size"],
            A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: m.limits["shared_memory_per_block"],
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0}
    for attr, value in want.items():
        assert check(cuda.cuDeviceGetAttribute(attr, dev)) == value, attr.name


def test_legacy_cuctxcreate_signature_and_current_context():
    check(cuda.cuInit(0))
    c = check(cuda.cuCtxCreate(0, cuda.CUdevice(0)))
    assert check(cuda.cuCtxGetCurrent()) == c
    check(cuda.cuCtxSynchronize())
    check(cuda.cuCtxDestroy(c))
    assert cuda.cuCtxDestroy(c) == (R.CUDA_ERROR_INVALID_HANDLE,)


def test_error_names_and_strings():
    assert cuda.cuGetErrorName(R.CUDA_ERROR_ILLEGAL_ADDRESS) == (R.CUDA_SUCCESS, b"CUDA_ERROR_ILLEGAL_ADDRESS")
    assert cuda.cuGetErrorString(R.CUDA_ERROR_INVALID_VALUE) == (R.CUDA_SUCCESS, b"invalid argument")
    assert cuda.cuGetErrorName(12345) == (R.CUDA_ERROR_INVALID_VALUE, None)
    assert R.CUDA_SUCCESS == 0


def test_not_initialized_and_no_context(monkeypatch):
    check(cuda.cuInit(0))
    assert cuda.cuInit(1) == (R.CUDA_ERROR_INVALID_VALUE,)
    out = []
    t = threading.Thread(target=lambda: out.append(cuda.cuMemAlloc(16)))  # a thread with no context
    t.start()
    t.join()
    assert out == [(R.CUDA_ERROR_INVALID_CONTEXT, None)]
    monkeypatch.setitem(driver_core._state, "initialized", False)
    assert cuda.cuDeviceGetCount() == (R.CUDA_ERROR_NOT_INITIALIZED, None)
    assert cuda.cuDriverGetVersion()[0] == R.CUDA_SUCCESS


def test_error_codes(ctx):
    mod, kernel = saxpy_kernel()
    # devices and attributes
    assert cuda.cuDeviceGet(1) == (R.CUDA_ERROR_INVALID_DEVICE, None)
    assert cuda.cuDeviceGetAttribute(9999, cuda.CUdevice(0))[0] == R.CUDA_ERROR_INVALID_VALUE
    # modules
    assert cuda.cuModuleGetFunction(mod, b"nope") == (R.CUDA_ERROR_NOT_FOUND, None)
    assert "no kernel named 'nope'" in cuda.last_error_message()
    assert cuda.cuModuleLoad("/nonexistent/k.ptx") == (R.CUDA_ERROR_FILE_NOT_FOUND, None)
    xbin = bytearray(compile_module([read_source(SAXPY)], CompileOptions()).to_bytes())
    xbin[40] ^= 1
    assert cuda.cuModuleLoadData(bytes(xbin)) == (R.CUDA_ERROR_INVALID_IMAGE, None)
    assert "checksum" in cuda.last_error_message()
    # handles
    assert cuda.cuLaunchKernel(cuda.CUfunction(), 1, 1, 1, 1, 1, 1, 0, 0, None, 0) == (R.CUDA_ERROR_INVALID_HANDLE,)
    stream = check(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_NON_BLOCKING))
    check(cuda.cuStreamDestroy(stream))
    assert cuda.cuStreamSynchronize(stream) == (R.CUDA_ERROR_INVALID_HANDLE,)
    check(cuda.cuModuleUnload(mod))
    assert cuda.cuModuleGetFunction(mod, b"saxpy") == (R.CUDA_ERROR_INVALID_HANDLE, None)
    assert cuda.cuFuncGetAttribute(cuda.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, kernel)[0] == \
        R.CUDA_ERROR_INVALID_HANDLE
    # values
    mod, kernel = saxpy_kernel()
    d = check(cuda.cuMemAlloc(64))
    assert cuda.cuMemAlloc(0) == (R.CUDA_ERROR_INVALID_VALUE, None)
    assert cuda.cuStreamCreate(7) == (R.CUDA_ERROR_INVALID_VALUE, None)
    assert cuda.cuMemcpyHtoD(d, np.zeros(32, np.float32), 128) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert "out-of-bounds" in cuda.last_error_message()
    assert cuda.cuMemcpyHtoD(d, np.zeros(4, np.float32), 64) == (R.CUDA_ERROR_INVALID_VALUE,)  # host too small
    args = ((10, 1.0, d, d), (ctypes.c_int, ctypes.c_float, None, None))
    assert cuda.cuLaunchKernel(kernel, 1, 1, 1, 2048, 1, 1, 0, 0, args, 0) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert cuda.cuLaunchKernel(kernel, 0, 1, 1, 32, 1, 1, 0, 0, args, 0) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert cuda.cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, 0, ((d,), (None,)), 0) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert cuda.cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, 0, None, 0) == (R.CUDA_ERROR_INVALID_VALUE,)
    check(cuda.cuMemFree(d))
    assert cuda.cuMemFree(d) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert "double-free" in cuda.last_error_message()


def test_invalid_ptx_reports_the_xcc_diagnostic(ctx):
    bad = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n    ad.s32 %r1, %r2, %r3;\n}\n"
    assert cuda.cuModuleLoadData(bad) == (R.CUDA_ERROR_INVALID_PTX, None)
    assert "<ptx>:6:5: error: unknown opcode 'ad'" in cuda.last_error_message()
    log = bytearray(1024)
    J = cuda.CUjit_option
    res = cuda.cuModuleLoadDataEx(bad, 2, [J.CU_JIT_ERROR_LOG_BUFFER, J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES],
                                  [log, len(log)])
    assert res == (R.CUDA_ERROR_INVALID_PTX, None)
    assert b"<ptx>:6:5: error: unknown opcode 'ad'" in log.split(b"\0")[0]
    mod = check(cuda.cuModuleLoadDataEx(SAXPY.read_bytes(), 1, [J.CU_JIT_OPTIMIZATION_LEVEL], [0]))
    check(cuda.cuModuleGetFunction(mod, b"saxpy"))


def test_kernel_fault_is_illegal_address_and_sticky(ctx):
    mod = check(cuda.cuModuleLoadData(OOB_PTX))
    oob = check(cuda.cuModuleGetFunction(mod, b"oob"))
    _, good = saxpy_kernel()
    d = check(cuda.cuMemAlloc(16))
    stream = check(cuda.cuStreamCreate(0))
    event = check(cuda.cuEventCreate(0))
    assert cuda.cuLaunchKernel(oob, 1, 1, 1, 1, 1, 1, 0, stream, ((d,), (None,)), 0) == \
        (R.CUDA_ERROR_ILLEGAL_ADDRESS,)
    assert "out-of-bounds" in cuda.last_error_message()
    sticky = R.CUDA_ERROR_ILLEGAL_ADDRESS
    assert cuda.cuCtxSynchronize() == (sticky,)
    assert cuda.cuStreamSynchronize(stream) == (sticky,)
    assert cuda.cuEventRecord(event, stream) == (sticky,)
    assert cuda.cuMemAlloc(16) == (sticky, None)
    assert cuda.cuMemcpyDtoH(np.zeros(4, np.float32), d, 16) == (sticky,)
    assert cuda.cuMemsetD8(d, 0, 16) == (sticky,)
    assert cuda.cuModuleLoadData(SAXPY.read_bytes()) == (sticky, None)
    args = ((4, 1.0, d, d), (ctypes.c_int, ctypes.c_float, None, None))
    assert cuda.cuLaunchKernel(good, 1, 1, 1, 32, 1, 1, 0, 0, args, 0) == (sticky,)
    assert cuda.cuMemFree(d) == (sticky,)
    # device queries do not touch the context; destroying it recovers, as on a GPU
    assert check(cuda.cuDeviceGetCount()) == 1
    check(cuda.cuCtxDestroy(ctx))
    fresh = check(cuda.cuCtxCreate(None, 0, cuda.CUdevice(0)))
    check(cuda.cuMemAlloc(16))
    check(cuda.cuCtxDestroy(fresh))


def test_maxntid_limits_the_block_and_the_attribute(ctx):
    mod = check(cuda.cuModuleLoadData(OOB_PTX))
    oob = check(cuda.cuModuleGetFunction(mod, b"oob"))
    A = cuda.CUfunction_attribute
    assert check(cuda.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, oob)) == 64
    d = check(cuda.cuMemAlloc(8192))
    assert cuda.cuLaunchKernel(oob, 1, 1, 1, 128, 1, 1, 0, 0, ((d,), (None,)), 0) == (R.CUDA_ERROR_INVALID_VALUE,)
    assert check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(oob, 128, 0)) == 0


def test_function_attributes_and_occupancy_match_the_runtime(ctx):
    name = "_Z16transpose_sharediiPKfPf"
    mod = check(cuda.cuModuleLoadData(TRANSPOSE.read_text()))
    f = check(cuda.cuModuleGetFunction(mod, name.encode()))
    ref = rt.load_module(TRANSPOSE).get_function(name)
    k, A = ref.kernel, cuda.CUfunction_attribute
    assert check(cuda.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_NUM_REGS, f)) == k.registers
    assert check(cuda.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f)) == k.shared_bytes > 0
    assert check(cuda.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f)) == k.local_bytes
    assert check(cuda.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)) == 1024
    for block, smem in [(32, 0), (256, 0), (1024, 0), (256, 100_000)]:
        got = check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, block, smem))
        assert got == ref.occupancy(block, smem).ctas_per_sm, (block, smem)
    assert cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, 0, 0) == (R.CUDA_ERROR_INVALID_VALUE, None)


def test_events_are_ordered_and_follow_stream_semantics(ctx):
    _, kernel = saxpy_kernel()
    n = 4096
    d_x, d_y = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    args = ((n, 2.0, d_x, d_y), (ctypes.c_int, ctypes.c_float, None, None))
    blocking = check(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_DEFAULT))
    nonblocking = check(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_NON_BLOCKING))
    assert check(cuda.cuStreamGetFlags(nonblocking)) == 1
    e = [check(cuda.cuEventCreate(0)) for _ in range(6)]

    def launch(stream):
        check(cuda.cuLaunchKernel(kernel, n // 256, 1, 1, 256, 1, 1, 0, stream, args, 0))

    def ms(a, b):
        return check(cuda.cuEventElapsedTime(a, b))

    check(cuda.cuEventRecord(e[0], blocking))
    launch(blocking)
    check(cuda.cuEventRecord(e[1], blocking))
    launch(blocking)
    check(cuda.cuEventRecord(e[2], blocking))
    assert 0 < ms(e[0], e[1]) <= ms(e[0], e[2])
    assert ms(e[0], e[0]) == 0
    # a non-blocking stream does not wait for the legacy default stream; a blocking stream does
    check(cuda.cuEventRecord(e[3], nonblocking))
    launch(None)
    check(cuda.cuEventRecord(e[4], nonblocking))
    assert ms(e[3], e[4]) == 0
    check(cuda.cuEventRecord(e[5], blocking))
    assert ms(e[2], e[5]) > 0
    # cuStreamWaitEvent orders the non-blocking stream after the event
    check(cuda.cuStreamWaitEvent(nonblocking, e[5], 0))
    check(cuda.cuEventRecord(e[4], nonblocking))
    assert ms(e[5], e[4]) >= 0 and ms(e[3], e[4]) >= ms(e[3], e[5])
    check(cuda.cuEventSynchronize(e[4]))
    check(cuda.cuEventQuery(e[4]))
    # unrecorded and timing-disabled events
    fresh = check(cuda.cuEventCreate(0))
    assert cuda.cuEventElapsedTime(fresh, e[0]) == (R.CUDA_ERROR_INVALID_HANDLE, None)
    untimed = check(cuda.cuEventCreate(cuda.CUevent_flags.CU_EVENT_DISABLE_TIMING))
    check(cuda.cuEventRecord(untimed, blocking))
    assert cuda.cuEventElapsedTime(e[0], untimed) == (R.CUDA_ERROR_INVALID_HANDLE, None)
    check(cuda.cuEventDestroy(fresh))
    assert cuda.cuEventRecord(fresh, blocking) == (R.CUDA_ERROR_INVALID_HANDLE,)


def test_memset_and_memcpy_variants(ctx):
    n = 64
    a, b = check(cuda.cuMemAlloc(4 * n)), check(cuda.cuMemAlloc(4 * n))
    stream = check(cuda.cuStreamCreate(0))

    def read(ptr, dtype=np.uint32):
        out = bytearray(4 * n)
        check(cuda.cuMemcpyDtoH(out, ptr, len(out)))
        return np.frombuffer(bytes(out), dtype)

    check(cuda.cuMemsetD8(a, 0xAB, 4 * n))
    assert (read(a, np.uint8) == 0xAB).all()
    check(cuda.cuMemsetD16(a, 0x1234, 2 * n))
    assert (read(a, np.uint16) == 0x1234).all()
    check(cuda.cuMemsetD32(a, 0xDEADBEEF, n))
    assert (read(a) == 0xDEADBEEF).all()
    check(cuda.cuMemsetD32Async(b, 7, n // 2, stream))
    check(cuda.cuMemsetD8Async(int(b) + 2 * n, 1, 2 * n, stream))
    check(cuda.cuMemsetD16Async(b, 9, 1, stream))
    check(cuda.cuStreamSynchronize(stream))
    want = np.concatenate([np.full(n // 2, 7, np.uint32), np.full(n // 2, 0x01010101, np.uint32)])
    want[0] = 9  # the low half-word of 7 replaced by 9
    np.testing.assert_array_equal(read(b), want)
    assert cuda.cuMemsetD32(int(a) + 2, 0, 4) == (R.CUDA_ERROR_INVALID_VALUE,)  # misaligned
    host = np.arange(n, dtype=np.uint32)
    check(cuda.cuMemcpyHtoD(a, host.tobytes(), host.nbytes))  # from bytes
    check(cuda.cuMemcpyDtoD(b, a, host.nbytes))
    np.testing.assert_array_equal(read(b), host)
    check(cuda.cuMemcpyDtoDAsync(int(b) + 4, a, 8, stream))
    out = np.zeros(n, np.uint32)
    check(cuda.cuMemcpyDtoHAsync(out, b, out.nbytes, stream))
    check(cuda.cuStreamSynchronize(stream))
    np.testing.assert_array_equal(out[:4], [0, 0, 1, 3])
    check(cuda.cuMemcpyHtoD(a, host, 0))  # zero bytes: nothing to do
    assert cuda.cuMemcpyDtoH(b"immutable" * 40, a, 16) == (R.CUDA_ERROR_INVALID_VALUE,)


def test_example_script_runs():
    script = EXAMPLES_DIR / "driver_api_saxpy.py"
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "bit-exact against numpy" in res.stdout
