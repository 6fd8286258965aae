"""Tile-mode TMA loads (cp.async.bulk.tensor ... .global.tile.mbarrier::complete_tx::bytes, PTX ISA 9.7.9.25.5)
through tensor maps from the driver API's cuTensorMapEncodeTiled, on both engines at -O0/-O3: the box is read
from the tensor's global coordinates (c0 + j, c1 + i), elements outside the tensor are zero (or NaN with the
NaN fill), a swizzle permutes the 16-byte chunks of each 128-byte row of shared memory (chunk ^= row % 8), and
the box's bytes complete the mbarrier's transaction count.  The kernel is nvcc's
(tests/data/runtime/tma_copy.cu)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.runtime import driver as cuda

PTX = (Path(__file__).parent / "data" / "runtime" / "tma_copy.sm_90a.ptx").read_text()
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
ROWS, COLS = 40, 52
DT = cuda.CUtensorMapDataType
SW = cuda.CUtensorMapSwizzle


def encode(ptr: int, swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE, fill=0, box=(32, 16)) -> bytes:
    assert cuda.cuInit(0)[0] == 0
    err, tm = cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, ptr, [COLS, ROWS], [COLS * 4],
                                          list(box), [1, 1], cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          swizzle, cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE, fill)
    assert err == 0, cuda.last_error_message()
    assert ctypes.sizeof(tm) == 128
    return bytes(tm)


def expected(x: np.ndarray, c0: int, c1: int, fill=0.0) -> np.ndarray:
    want = np.full((16, 32), fill, np.float32)
    for i in range(16):
        for j in range(32):
            r, c = c1 + i, c0 + j
            if 0 <= r < ROWS and 0 <= c < COLS:
                want[i, j] = x[r, c]
    return want


def run(engine: str, opt: int, c0: int, c1: int, **kw) -> tuple[np.ndarray, np.ndarray]:
    dev = rt.Device()
    x = (np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) + 0.5)
    dx, out = rt.to_device(x, dev), rt.to_device(np.zeros(16 * 32, np.float32), dev)
    tm = encode(int(dx), **kw)
    module = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    module.get_function("tma_copy").launch((1, 1, 1), (128, 1, 1), [tm, out, np.int32(c0), np.int32(c1)])
    return x, out.copy_to_host().reshape(16, 32)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("c0, c1", [(0, 0), (28, -3), (-4, 30), (60, 0)])
def test_a_tile_load_reads_the_box_and_fills_outside_with_zeros(engine, opt, c0, c1):
    x, got = run(engine, opt, c0, c1)
    assert np.array_equal(got, expected(x, c0, c1))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_the_nan_fill_fills_float_elements_outside_with_nan(engine, opt):
    x, got = run(engine, opt, 40, 0, fill=cuda.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    want = expected(x, 40, 0, np.nan)
    assert np.array_equal(got, want, equal_nan=True) and np.isnan(got).sum() == 16 * 20
    assert set(got[np.isnan(got)].view(np.uint32).tolist()) == {0x7FF77FF7}  # the H200's fill (tensormap_replace_probe)


OOB_FMA = (Path(__file__).parent / "data" / "runtime" / "tma_oob_fma.sm_90a.ptx").read_text()


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_fma_oob_zeroes_what_the_nan_fill_wrote(engine, opt, dtype):
    """A half map's NaN fill is the OOB NaN that fma.oob tests for (PTX ISA 9.7.4.4: the result is +0 where an
    operand is the OOB NaN that TMA fills out-of-bounds elements with): a 16 x 64 box at (40, 30) of a 40 x 52
    half tensor, loaded and copied out as loaded and through fma.rn.oob.f16x2 d, a, 1.0, -0.0
    (tests/data/runtime/tma_oob_fma.cu).  Outside, the fill 0x7FF7 (the 16-bit half of the H200's f32 fill
    0x7FF77FF7), and fma.oob's +0; inside, the values (small integers, exact in both types), unchanged by
    a * 1 + -0.  The kernel multiplies as f16x2 whatever the map's type: only the fill's bits matter, and 0x7FF7
    is a NaN in both."""
    dev = rt.Device()
    x = (np.arange(ROWS * 56) % 512).reshape(ROWS, 56)  # rows of 52 halves, 112 bytes apart (a multiple of 16)
    bits = x.astype(np.float16).view(np.uint16) if dtype == "f16" else \
        (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # bf16: exact, the high half
    dx = rt.to_device(bits, dev)
    raw, fma = (rt.to_device(np.zeros(16 * 32, np.uint32), dev) for _ in range(2))
    kind = DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16 if dtype == "f16" else DT.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    assert cuda.cuInit(0)[0] == 0
    err, tm = cuda.cuTensorMapEncodeTiled(kind, 2, int(dx), [COLS, ROWS], [56 * 2], [64, 16], [1, 1],
                                          cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          SW.CU_TENSOR_MAP_SWIZZLE_NONE,
                                          cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                          cuda.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    assert err == 0, cuda.last_error_message()
    module = rt.load_module(OOB_FMA, device=dev, engine=engine, opt_level=opt)
    module.get_function("tma_oob_fma").launch((1, 1, 1), (128, 1, 1), [bytes(tm), raw, fma, np.int32(40),
                                                                          np.int32(30)])
    inside = np.zeros((16, 64), bool)
    inside[:ROWS - 30, :COLS - 40] = True
    want_raw = np.full((16, 64), 0x7FF7, np.uint16)
    want_raw[inside] = bits[30:, 40:COLS].ravel()
    want_fma = np.where(inside, want_raw, 0).astype(np.uint16)
    np.testing.assert_array_equal(raw.copy_to_host().view(np.uint16).reshape(16, 64), want_raw)
    got = fma.copy_to_host().view(np.uint16).reshape(16, 64)
    if dtype == "f16":
        np.testing.assert_array_equal(got, want_fma)
    else:  # the f16x2 fma reads bf16 bits as f16: inside is not a * 1 then, but outside is still +0
        np.testing.assert_array_equal(got[~inside], 0)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_a_128_byte_swizzle_permutes_the_16_byte_chunks_of_each_row(engine, opt):
    """A box row of 32 floats is 128 bytes: its 16-byte chunk k lands at chunk k ^ (row % 8)."""
    x, got = run(engine, opt, 0, 0, swizzle=SW.CU_TENSOR_MAP_SWIZZLE_128B)
    plain = expected(x, 0, 0).reshape(16, 8, 4)
    want = np.empty_like(plain)
    for r in range(16):
        for k in range(8):
            want[r, k ^ (r % 8)] = plain[r, k]
    assert np.array_equal(got, want.reshape(16, 32))


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_an_innermost_coordinate_off_16_bytes_is_a_located_fault(engine):
    """An H200 stops such a load with an illegal-instruction error (tests/data/gpu/tma_h200.jsonl: columns 30 and
    2 of a u32 box fault; 28, -4 and 48 load)."""
    with pytest.raises(KernelFault, match="the innermost coordinate 30 is 120 bytes into a row") as e:
        run(engine, 0, 30, -3)
    assert "cp.async.bulk.tensor" in PTX.splitlines()[e.value.line - 1]


def test_cu_tensor_map_encode_tiled_checks_its_arguments():
    assert cuda.cuInit(0)[0] == 0
    args = [DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, 1 << 40, [COLS, ROWS], [COLS * 4], [32, 16], [1, 1], 0, 0, 0, 0]
    for k, bad, why in ((4, [COLS * 4 + 4], "globalStrides"), (2, (1 << 40) + 4, "globalAddress"),
                        (5, [32, 300], "boxDim"), (5, [3, 16], "multiple of 16"), (7, 3, "INTERLEAVE_NONE"), (8, 1, "32-byte swizzle span"),
                        (1, 6, "tensorRank")):
        a = list(args)
        a[k] = bad
        err, tm = cuda.cuTensorMapEncodeTiled(*a)
        assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE and tm is None
        assert why in cuda.last_error_message()


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_tensor_map_operand_that_is_not_one_is_a_located_fault(engine):
    dev = rt.Device()
    out = rt.to_device(np.zeros(16 * 32, np.float32), dev)
    module = rt.load_module(PTX, device=dev, engine=engine)
    with pytest.raises(KernelFault, match="does not point at a tensor map made by cuTensorMapEncodeTiled") as e:
        module.get_function("tma_copy").launch((1, 1, 1), (128, 1, 1), [bytes(128), out, np.int32(0), np.int32(0)])
    assert "cp.async.bulk.tensor" in PTX.splitlines()[e.value.line - 1]


def test_the_driver_api_launches_a_tma_kernel_with_the_tensor_map_by_value():
    assert cuda.cuInit(0)[0] == 0
    err, dev = cuda.cuDeviceGet(0)
    err, ctx = cuda.cuCtxCreate(0, dev)
    try:
        x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) + 0.5
        err, dx = cuda.cuMemAlloc(x.nbytes)
        err, dout = cuda.cuMemAlloc(16 * 32 * 4)
        assert cuda.cuMemcpyHtoD(dx, x, x.nbytes)[0] == 0
        err, tm = cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dx, [COLS, ROWS], [COLS * 4],
                                              [32, 16], [1, 1], 0, 0, 0, 0)
        assert err == 0
        err, mod = cuda.cuModuleLoadData(PTX.encode())
        err, fn = cuda.cuModuleGetFunction(mod, b"tma_copy")
        assert err == 0, cuda.last_error_message()
        params = ((tm, dout, 8, 2), (None, None, ctypes.c_int, ctypes.c_int))
        assert cuda.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, 0, params, 0)[0] == 0, cuda.last_error_message()
        got = np.zeros(16 * 32, np.float32)
        assert cuda.cuMemcpyDtoH(got, dout, got.nbytes)[0] == 0
        assert np.array_equal(got.reshape(16, 32), expected(x, 8, 2))
    finally:
        cuda.cuCtxDestroy(ctx)


GEMM_PTX = (Path(__file__).parent.parent / "examples" / "hopper_pipeline.sm_90a.ptx").read_text()


def _gemm_maps(a_ptr: int, bt_ptr: int, m: int, n: int, k: int) -> tuple[bytes, bytes]:
    """hopper_tma_gemm's tensor maps: row-major f16 A (M x K) and B^T (N x K), boxes of 64 rows x 8."""
    assert cuda.cuInit(0)[0] == 0
    maps = []
    for ptr, rows in ((a_ptr, m), (bt_ptr, n)):
        err, tm = cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, [k, rows], [k * 2],
                                              [8, 64], [1, 1], 0, 0, 0, 0)
        assert err == 0, cuda.last_error_message()
        maps.append(bytes(tm))
    return maps[0], maps[1]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_the_tma_wgmma_pipeline_example_computes_a_times_b(engine, opt):
    """examples/hopper_pipeline.cu's hopper_tma_gemm: TMA boxes of plain row-major A and B^T feed wgmma through
    the full/empty mbarrier ring; 128 x 128 x 64 (2 x 2 blocks, 4 k steps round 3 stages), exact inputs."""
    rng = np.random.default_rng(3)
    m, n, k, ldc = 128, 128, 64, 131
    a = (rng.integers(-16, 17, (m, k)) / 8).astype(np.float16)
    b = (rng.integers(-16, 17, (k, n)) / 8).astype(np.float16)
    dev = rt.Device()
    da, dbt = rt.to_device(a, dev), rt.to_device(np.ascontiguousarray(b.T), dev)
    dc = rt.to_device(np.full(m * ldc, -7.0, np.float32), dev)
    amap, bmap = _gemm_maps(int(da), int(dbt), m, n, k)
    module = rt.load_module(GEMM_PTX, device=dev, engine=engine, opt_level=opt)
    module.get_function("hopper_tma_gemm").launch((n // 64, m // 64, 1), (160, 1, 1),
                                                  [amap, bmap, dc, np.int32(k // 16), np.int32(ldc)])
    got = dc.copy_to_host().reshape(m, ldc)
    assert np.array_equal(got[:, :n], (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))
    assert (got[:, n:] == -7.0).all()


def test_the_tma_wgmma_pipeline_runs_through_the_driver_api():
    """The host side as a CUDA program writes it: cuMemAlloc, cuTensorMapEncodeTiled on the device pointers,
    cuModuleLoadData of nvcc's PTX, cuLaunchKernel with the two CUtensorMap parameters by value."""
    rng = np.random.default_rng(4)
    m, n, k, ldc = 64, 128, 32, 128
    a = (rng.integers(-16, 17, (m, k)) / 8).astype(np.float16)
    bt = (rng.integers(-16, 17, (n, k)) / 8).astype(np.float16)
    assert cuda.cuInit(0)[0] == 0
    _, dev = cuda.cuDeviceGet(0)
    _, ctx = cuda.cuCtxCreate(0, dev)
    try:
        ptrs = []
        for h in (a, bt):
            _, p = cuda.cuMemAlloc(h.nbytes)
            assert cuda.cuMemcpyHtoD(p, h, h.nbytes)[0] == 0
            ptrs.append(p)
        _, dc = cuda.cuMemAlloc(m * ldc * 4)
        maps = [cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p, [k, rows], [k * 2], [8, 64],
                                            [1, 1], 0, 0, 0, 0)[1] for p, rows in zip(ptrs, (m, n))]
        _, mod = cuda.cuModuleLoadData(GEMM_PTX.encode())
        err, fn = cuda.cuModuleGetFunction(mod, b"hopper_tma_gemm")
        assert err == 0, cuda.last_error_message()
        params = ((*maps, dc, k // 16, ldc), (None, None, None, ctypes.c_int, ctypes.c_int))
        assert cuda.cuLaunchKernel(fn, n // 64, m // 64, 1, 160, 1, 1, 0, 0, params, 0)[0] == 0, \
            cuda.last_error_message()
        got = np.zeros((m, ldc), np.float32)
        assert cuda.cuMemcpyDtoH(got, dc, got.nbytes)[0] == 0
        assert np.array_equal(got, (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32))
    finally:
        cuda.cuCtxDestroy(ctx)


# ------------------------------------------------------------------ rank 3 (CUTLASS 3.x's maps: M/N, K, batch L)
DEPTH = 3
PTX_3D = (PTX.replace("\t.param .u32 tma_copy_param_3\n", "\t.param .u32 tma_copy_param_3,\n\t.param .u32 tma_copy_param_4\n")
          .replace("\tld.param.u32 \t%r6, [tma_copy_param_3];\n",
                   "\tld.param.u32 \t%r6, [tma_copy_param_3];\n\tld.param.u32 \t%r4, [tma_copy_param_4];\n")
          .replace("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], "
                   "[%rd4, {%r5, %r6}], [%r7];",
                   "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], "
                   "[%rd4, {%r5, %r6, %r4}], [%r7];"))


def test_the_3d_kernel_is_the_2d_one_with_a_third_coordinate():
    assert PTX_3D.count("tensor.3d") == 1 and "tma_copy_param_4]" in PTX_3D  # (ptxas -arch=sm_90a accepts it)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("c0, c1, c2", [(0, 0, 1), (28, -3, 2), (-4, 30, 0), (0, 0, 3)])
def test_a_3d_tile_load_reads_one_slice(engine, opt, c0, c1, c2):
    """A [DEPTH, ROWS, COLS] tensor, box 32 x 16 x 1: the box at (c0, c1) of slice c2 (zeros past the last slice);
    xg1 runs it as TMALD.3D."""
    dev = rt.Device()
    x = np.arange(DEPTH * ROWS * COLS, dtype=np.float32).reshape(DEPTH, ROWS, COLS) + 0.25
    dx, out = rt.to_device(x, dev), rt.to_device(np.full(16 * 32, -1, np.float32), dev)
    assert cuda.cuInit(0)[0] == 0
    err, tm = cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, int(dx), [COLS, ROWS, DEPTH],
                                          [COLS * 4, COLS * ROWS * 4], [32, 16, 1], [1, 1, 1],
                                          cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          SW.CU_TENSOR_MAP_SWIZZLE_NONE,
                                          cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE, 0)
    assert err == 0, cuda.last_error_message()
    module = rt.load_module(PTX_3D, device=dev, engine=engine, opt_level=opt)
    module.get_function("tma_copy").launch((1, 1, 1), (128, 1, 1),
                                           [bytes(tm), out, np.int32(c0), np.int32(c1), np.int32(c2)])
    want = expected(x[c2], c0, c1) if c2 < DEPTH else np.zeros((16, 32), np.float32)
    assert np.array_equal(out.copy_to_host().reshape(16, 32), want)
