"""saxpy written for cuda-python's driver API, run on the emulated xg1 with only its import changed.

The script follows NVIDIA's cuda-python overview sample: PTX loaded with cuModuleLoadData from a
numpy char array's address, copies and the launch on a created stream, kernel arguments as an
array of pointers to their values, events around the launch.  The kernel is nvcc's PTX for
``saxpy(int n, float a, const float *x, float *y)`` (y = a*x + y, in place).

    .venv/bin/python examples/driver_api_saxpy.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from xcc.runtime import driver  # with a GPU: from cuda.bindings import driver

PTX = Path(__file__).resolve().parent / "saxpy.sm_80.ptx"


def _error_name(err) -> str:
    e, name = driver.cuGetErrorName(err)
    return name.decode() if e == driver.CUresult.CUDA_SUCCESS else "<unknown>"


def check(result):
    """cuda-python's checkCudaErrors: raise on an error, else return the call's values."""
    if result[0].value:
        raise RuntimeError(f"CUDA error code={result[0].value} ({_error_name(result[0])})")
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


def main() -> int:
    check(driver.cuInit(0))
    device = check(driver.cuDeviceGet(0))
    name = check(driver.cuDeviceGetName(64, device)).split(b"\0")[0].decode()
    major = check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    sms = check(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                            device))
    print(f"device 0: {name}, compute capability {major}.{minor}, {sms} SMs")
    context = check(driver.cuCtxCreate(None, 0, device))  # cuda-python 12.x: cuCtxCreate(0, device)

    ptx = np.char.array(PTX.read_bytes())
    module = check(driver.cuModuleLoadData(ptx.ctypes.data))
    kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))
    regs = check(driver.cuFuncGetAttribute(driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, kernel))

    NUM_THREADS = 256
    NUM_BLOCKS = 64
    # a = 2 makes a*x exact in float32, so numpy's a*x + y rounds once, as fma.rn.f32 does
    a = np.array([2.0], dtype=np.float32)
    n = np.array(NUM_THREADS * NUM_BLOCKS - 100, dtype=np.int32)
    buffer_size = int(n) * a.itemsize
    rng = np.random.default_rng(7)
    hX = rng.random(int(n), dtype=np.float32)
    hY = rng.random(int(n), dtype=np.float32)
    hOut = np.zeros(int(n), dtype=np.float32)

    dXclass = check(driver.cuMemAlloc(buffer_size))
    dYclass = check(driver.cuMemAlloc(buffer_size))
    stream = check(driver.cuStreamCreate(0))
    start, stop = check(driver.cuEventCreate(0)), check(driver.cuEventCreate(0))

    check(driver.cuMemcpyHtoDAsync(dXclass, hX.ctypes.data, buffer_size, stream))
    check(driver.cuMemcpyHtoDAsync(dYclass, hY.ctypes.data, buffer_size, stream))

    # kernelParams: the address of an array of pointers, one to each argument's value
    dX = np.array([int(dXclass)], dtype=np.uint64)
    dY = np.array([int(dYclass)], dtype=np.uint64)
    args = [n, a, dX, dY]
    args = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)

    check(driver.cuEventRecord(start, stream))
    check(driver.cuLaunchKernel(
        kernel,
        NUM_BLOCKS, 1, 1,    # grid
        NUM_THREADS, 1, 1,   # block
        0,                   # dynamic shared memory
        stream,
        args.ctypes.data,    # kernel arguments
        0,                   # extra
    ))
    check(driver.cuEventRecord(stop, stream))
    check(driver.cuMemcpyDtoHAsync(hOut.ctypes.data, dYclass, buffer_size, stream))
    check(driver.cuStreamSynchronize(stream))
    ms = check(driver.cuEventElapsedTime(start, stop))

    expected = a[0] * hX + hY
    ok = np.array_equal(hOut, expected)
    print(f"saxpy on {int(n)} elements: {regs} registers per thread, {ms:.3f} ms; "
          f"{'bit-exact' if ok else 'MISMATCH'} against numpy")

    check(driver.cuEventDestroy(start))
    check(driver.cuEventDestroy(stop))
    check(driver.cuStreamDestroy(stream))
    check(driver.cuMemFree(dXclass))
    check(driver.cuMemFree(dYclass))
    check(driver.cuModuleUnload(module))
    check(driver.cuCtxDestroy(context))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
