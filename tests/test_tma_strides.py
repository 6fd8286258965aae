"""TMA tile-mode loads and stores through tensor maps with element strides and interleaved layouts, on both
engines (issue 19).  The rules restated here from the CUDA driver API (cuTensorMapEncodeTiled: ``elementStrides``
1 - 8, the first ignored unless the layout is interleaved, ``ceil(boxDim[i] / elementStrides[i])`` elements along
dim i; ``CU_TENSOR_MAP_INTERLEAVE_16B/32B`` needs rank >= 3, 32B a 32-byte aligned address and strides and the
32-byte swizzle) and the PTX ISA (5.5.3.2 "Traversal-Stride": box element j of dim i at coordinate c_i + j * e_i).
The kernels are examples/tma_store.cu's tma_load_box / tma_store_box (nvcc -arch=sm_90a)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.runtime import driver as cuda

PTX = (Path(__file__).parent.parent / "examples" / "tma_store.sm_90a.ptx").read_text()
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
U32 = cuda.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32
IL = cuda.CUtensorMapInterleave
SW = cuda.CUtensorMapSwizzle


def _map(ptr, shape, box, estrides, interleave=IL.CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE):
    """A u32 map; shape, box and element strides outermost first (numpy's order)."""
    assert cuda.cuInit(0)[0] == 0
    dims = list(reversed(shape))
    strides = [int(np.prod(dims[:d + 1])) * 4 for d in range(len(dims) - 1)]
    err, tm = cuda.cuTensorMapEncodeTiled(U32, len(shape), ptr, dims, strides, list(reversed(box)),
                                          list(reversed(estrides)), interleave, swizzle, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def _coords(at):
    return np.array(list(reversed(at)) + [0] * (5 - len(at)), np.int32).tobytes()


def _gather(x, box, estrides, at, interleaved):
    """The box the rules above read: (count per dim, values; zero outside the tensor)."""
    es = list(estrides)
    if not interleaved:
        es[-1] = 1  # the innermost element stride is ignored without an interleaved layout
    counts = [-(-b // e) for b, e in zip(box, es)]
    want = np.zeros(counts, x.dtype)
    for j in np.ndindex(*counts):
        c = [a + k * e for a, k, e in zip(at, j, es)]
        if all(0 <= v < n for v, n in zip(c, x.shape)):
            want[j] = x[tuple(c)]
    return counts, es, want


def _swizzle32_words(n):
    """Word index in shared memory of dense word w under the 32-byte swizzle (byte bit 4 ^= bit 7)."""
    b = np.arange(n) * 4
    return (b ^ (((b >> 7) & 1) << 4)) // 4


CASES = {  # name -> (shape, box, element strides, interleave, swizzle, coordinates), outermost first
    "strided_2d": ((10, 24), (6, 8), (3, 5), IL.CU_TENSOR_MAP_INTERLEAVE_NONE, SW.CU_TENSOR_MAP_SWIZZLE_NONE, (2, 4)),
    "strided_edge_3d": ((3, 7, 16), (2, 8, 4), (2, 4, 1), IL.CU_TENSOR_MAP_INTERLEAVE_NONE,
                        SW.CU_TENSOR_MAP_SWIZZLE_NONE, (1, -3, 12)),
    "interleave16": ((2, 6, 4), (2, 3, 4), (1, 2, 1), IL.CU_TENSOR_MAP_INTERLEAVE_16B, SW.CU_TENSOR_MAP_SWIZZLE_NONE,
                     (0, 1, 0)),
    "interleave16_dim0_stride": ((2, 5, 8), (1, 4, 8), (1, 1, 2), IL.CU_TENSOR_MAP_INTERLEAVE_16B,
                                 SW.CU_TENSOR_MAP_SWIZZLE_NONE, (1, 1, 0)),
    "interleave32": ((3, 8, 8), (2, 8, 8), (1, 1, 1), IL.CU_TENSOR_MAP_INTERLEAVE_32B, SW.CU_TENSOR_MAP_SWIZZLE_32B,
                     (1, 0, 0)),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_strided_and_interleaved_loads(engine, opt, name):
    shape, box, es, il, sw, at = CASES[name]
    x = ((np.arange(int(np.prod(shape)), dtype=np.uint64) * 2654435761) % (1 << 32)).astype(np.uint32).reshape(shape)
    counts, _, want = _gather(x, box, es, at, il != IL.CU_TENSOR_MAP_INTERLEAVE_NONE)
    n = int(np.prod(counts))
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    dx = rt.to_device(x, dev)
    out = rt.to_device(np.full(n, 7, np.uint32), dev)
    m.get_function("tma_load_box").launch((1, 1, 1), (128, 1, 1),
                                          [_map(int(dx), shape, box, es, il, sw), out, np.int32(n),
                                           np.int32(len(shape)), _coords(at)])
    got = out.copy_to_host()
    if sw == SW.CU_TENSOR_MAP_SWIZZLE_32B:
        got = got[_swizzle32_words(n)]  # dense word w lies at its swizzled place
    np.testing.assert_array_equal(got.reshape(counts), want)


STORE_AT = {"strided_edge_3d": (1, 4, 12)}  # a store at negative coordinates faults (an H200's illegal instruction)


@pytest.mark.parametrize("name", ["strided_2d", "strided_edge_3d", "interleave16_dim0_stride"])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_strided_and_interleaved_stores(engine, opt, name):
    shape, box, es, il, sw, at = CASES[name]
    at = STORE_AT.get(name, at)
    x = np.full(shape, 0xAAAAAAAA, np.uint32)
    counts, eff, _ = _gather(x, box, es, at, il != IL.CU_TENSOR_MAP_INTERLEAVE_NONE)
    boxv = (np.arange(int(np.prod(counts)), dtype=np.uint32) + 1).reshape(counts)
    want = x.copy()
    for j in np.ndindex(*counts):
        c = [a + k * e for a, k, e in zip(at, j, eff)]
        if all(0 <= v < n for v, n in zip(c, shape)):
            want[tuple(c)] = boxv[j]
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    dx = rt.to_device(x, dev)
    din = rt.to_device(boxv.reshape(-1), dev)
    m.get_function("tma_store_box").launch((1, 1, 1), (128, 1, 1),
                                           [_map(int(dx), shape, box, es, il, sw), din, np.int32(boxv.size),
                                            np.int32(len(shape)), _coords(at)])
    np.testing.assert_array_equal(dx.copy_to_host().reshape(shape), want)


@pytest.mark.parametrize("args, match", [
    (dict(estrides=(1, 9)), "elementStrides"),
    (dict(shape=(4, 8), box=(2, 8), interleave=IL.CU_TENSOR_MAP_INTERLEAVE_16B), "tensorRank >= 3"),
    (dict(interleave=IL.CU_TENSOR_MAP_INTERLEAVE_32B), "SWIZZLE_32B"),
])
def test_what_cuTensorMapEncodeTiled_refuses(args, match):
    assert cuda.cuInit(0)[0] == 0
    a = dict(shape=(2, 4, 8), box=(1, 4, 8), estrides=(1, 1, 1), interleave=IL.CU_TENSOR_MAP_INTERLEAVE_NONE)
    a.update(args)
    dims = list(reversed(a["shape"]))
    strides = [int(np.prod(dims[:d + 1])) * 4 for d in range(len(dims) - 1)]
    err, _ = cuda.cuTensorMapEncodeTiled(U32, len(dims), 1 << 20, dims, strides, list(reversed(a["box"])),
                                         list(reversed(a["estrides"]))[:len(dims)], a["interleave"],
                                         SW.CU_TENSOR_MAP_SWIZZLE_NONE, 0, 0)
    assert err != 0 and match in cuda.last_error_message()
