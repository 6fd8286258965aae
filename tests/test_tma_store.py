"""TMA tile-mode stores, reductions, prefetches and loads of every rank (cp.async.bulk.tensor.{1..5}d,
cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor; PTX ISA 9.7.9.25.5) through tensor maps from the
driver API's cuTensorMapEncodeTiled, on both engines at -O0/-O3, against numpy: a store writes the box's
elements that lie inside the tensor and leaves the others alone; a reduction combines them with global memory
in the map's element type; loads fill elements outside the tensor with zeros.  The kernels are nvcc's
(examples/tma_store.cu); xg1 runs them as TMAST, TMAPF and (4d, 5d loads) TMALD.ND."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.runtime import driver as cuda

PTX = (Path(__file__).parent.parent / "examples" / "tma_store.sm_90a.ptx").read_text()
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
DT = cuda.CUtensorMapDataType
SW = cuda.CUtensorMapSwizzle
_MODULES: dict = {}
# CUtensorMapDataType -> numpy element type
NP = {DT.CU_TENSOR_MAP_DATA_TYPE_UINT32: np.uint32, DT.CU_TENSOR_MAP_DATA_TYPE_INT32: np.int32,
      DT.CU_TENSOR_MAP_DATA_TYPE_UINT64: np.uint64, DT.CU_TENSOR_MAP_DATA_TYPE_INT64: np.int64,
      DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32: np.float32, DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16: np.float16,
      DT.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: None}


def module(engine: str, opt: int):
    """The example's module on a fresh device (the kernels only ever touch the buffers each test allocates)."""
    dev = rt.Device()
    return dev, rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)


def encode(dtype, ptr: int, shape: tuple[int, ...], box: tuple[int, ...], swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE) -> bytes:
    """A tiled map of a C-order numpy-shaped tensor (``shape`` and ``box`` outermost first, as numpy's)."""
    assert cuda.cuInit(0)[0] == 0
    es = np.dtype(NP[dtype] or np.uint16).itemsize
    dims = list(reversed(shape))
    strides = [int(np.prod(dims[:d + 1])) * es for d in range(len(dims) - 1)]
    err, tm = cuda.cuTensorMapEncodeTiled(dtype, len(shape), ptr, dims, strides, list(reversed(box)), [1] * len(shape),
                                          0, swizzle, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def coords_param(c: tuple[int, ...]) -> bytes:
    """The kernels' ``Coords`` struct: c[0] the innermost coordinate, 5 ints."""
    return np.array(list(c) + [0] * (5 - len(c)), np.int32).tobytes()


def window(shape, box, at):
    """(slices of the tensor, slices of the box) where the box at ``at`` (outermost first) overlaps the tensor."""
    t, b = [], []
    for n, w, c in zip(shape, box, at):
        lo, hi = max(c, 0), min(c + w, n)
        lo, hi = (lo, hi) if lo < hi else (0, 0)
        t.append(slice(lo, hi))
        b.append(slice(lo - c, hi - c) if hi > lo else slice(0, 0))
    return tuple(t), tuple(b)


def store(engine, opt, dtype, x: np.ndarray, boxv: np.ndarray, at: tuple[int, ...], kernel="tma_store_box", op=None,
          swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE) -> np.ndarray:
    """Launch the store (or, with ``op``, the 2d reduction) of ``boxv`` at ``at`` (outermost first) into ``x``."""
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    words = np.ascontiguousarray(boxv).reshape(-1).view(np.uint32)
    din = rt.to_device(words, dev)
    tm = encode(dtype, int(dx), x.shape, boxv.shape, swizzle)
    c = tuple(reversed(at))
    if op is None:
        args = [tm, din, np.int32(words.size), np.int32(len(at)), coords_param(c)]
    else:
        args = [tm, din, np.int32(words.size), np.int32(op), np.int32(c[0]), np.int32(c[1])]
    m.get_function(kernel).launch((1, 1, 1), (128, 1, 1), args)
    return dx.copy_to_host().reshape(x.shape)


# ------------------------------------------------------------------ stores
@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("at", [(0, 0), (30, 24), (24, 20), (40, 0), (4, 44), (0, 60)])
def test_a_2d_tile_store_writes_the_in_bounds_part_of_the_box(engine, opt, at):
    rows, cols = 40, 52
    x = np.full((rows, cols), -1.5, np.float32)
    boxv = np.arange(16 * 32, dtype=np.float32).reshape(16, 32) + 0.25
    got = store(engine, opt, DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, x, boxv, at)
    want = x.copy()
    t, b = window(x.shape, boxv.shape, at)
    want[t] = boxv[b]
    assert np.array_equal(got, want)


RANKED = {1: ((200,), (64,), (148,)),
          2: ((9, 40), (4, 16), (7, 28)),
          3: ((5, 6, 20), (2, 4, 8), (4, 3, 16)),
          4: ((3, 4, 5, 12), (2, 2, 4, 4), (2, 3, 2, 8)),
          5: ((2, 3, 4, 5, 8), (2, 2, 2, 2, 4), (1, 2, 3, 4, 4))}
"""rank -> (tensor shape, box, coordinates of a box that sticks out of the tensor), outermost first (innermost
coordinates a multiple of 16 bytes and none negative: what an H200 runs, tests/data/gpu/tma_h200.jsonl)."""
NEGATIVE = {1: (-4,), 2: (-1, 0), 3: (4, -2, 16), 4: (2, 3, -1, 8), 5: (1, -1, 3, 4, 4)}
"""rank -> coordinates of a box sticking out before the tensor's start (loads read zeros there)."""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_stores_of_every_rank(engine, opt, rank):
    shape, box, at = RANKED[rank]
    rng = np.random.default_rng(rank)
    x = rng.integers(0, 1 << 32, shape, dtype=np.uint32)
    boxv = rng.integers(0, 1 << 32, box, dtype=np.uint32)
    for c in (tuple(0 for _ in at), at):
        got = store(engine, opt, DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, x, boxv, c)
        want = x.copy()
        t, b = window(shape, box, c)
        want[t] = boxv[b]
        assert np.array_equal(got, want), c


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_a_128_byte_swizzled_store_undoes_the_load_swizzle(engine, opt):
    """A box row of 32 floats is 128 bytes: shared chunk k ^ (row % 8) lands at the row's global chunk k."""
    x = np.zeros((16, 32), np.float32)
    boxv = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    got = store(engine, opt, DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, x, boxv, (0, 0), swizzle=SW.CU_TENSOR_MAP_SWIZZLE_128B)
    chunks = boxv.reshape(16, 8, 4)
    want = np.empty_like(chunks)
    for r in range(16):
        for k in range(8):
            want[r, k] = chunks[r, k ^ (r % 8)]
    assert np.array_equal(got, want.reshape(16, 32))


# ------------------------------------------------------------------ loads of every rank
@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [1, 4, 5])
def test_loads_of_every_rank(engine, opt, rank):
    shape, box, _ = RANKED[rank]
    at = NEGATIVE[rank]
    rng = np.random.default_rng(10 + rank)
    x = rng.integers(0, 1 << 32, shape, dtype=np.uint32)
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), shape, box)
    n = int(np.prod(box))
    for c in (tuple(0 for _ in at), at):
        out = rt.to_device(np.full(n, 7, np.uint32), dev)
        m.get_function("tma_load_box").launch((1, 1, 1), (128, 1, 1),
                                              [tm, out, np.int32(n), np.int32(rank), coords_param(tuple(reversed(c)))])
        want = np.zeros(box, np.uint32)
        t, b = window(shape, box, c)
        want[b] = x[t]
        assert np.array_equal(out.copy_to_host().reshape(box), want), c


# ------------------------------------------------------------------ reductions
OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _reduce_ref(op: str, old: np.ndarray, v: np.ndarray) -> np.ndarray:
    """PTX ISA 9.7.13.5 (atom) restated: inc/dec on u32 wrap to 0 / to v."""
    if op == "add":
        return old + v
    if op in ("min", "max"):
        return np.minimum(old, v) if op == "min" else np.maximum(old, v)
    if op == "inc":
        return np.where(old >= v, 0, old + 1).astype(old.dtype)
    if op == "dec":
        return np.where((old == 0) | (old > v), v, old - 1).astype(old.dtype)
    return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, v)


CASES = ([(op, DT.CU_TENSOR_MAP_DATA_TYPE_UINT32) for op in OPS]
         + [(op, DT.CU_TENSOR_MAP_DATA_TYPE_INT32) for op in ("add", "min", "max", "xor")]
         + [(op, DT.CU_TENSOR_MAP_DATA_TYPE_UINT64) for op in ("add", "and")]
         + [(op, DT.CU_TENSOR_MAP_DATA_TYPE_INT64) for op in ("min", "max")]
         + [("add", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32), ("add", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16),
            ("min", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16), ("max", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16)])


def _values(dtype, shape, rng) -> np.ndarray:
    t = NP[dtype]
    if np.dtype(t).kind == "f":
        return (rng.integers(-64, 65, shape) / 8).astype(t)
    if np.dtype(t).kind == "u":
        return rng.integers(0, 40, shape, dtype=t)
    return rng.integers(-20, 20, shape).astype(t)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op, dtype", CASES, ids=[f"{o}-{d.name[24:].lower()}" for o, d in CASES])
def test_a_2d_tile_reduction_combines_the_in_bounds_part(engine, opt, op, dtype):
    if (engine, opt) in (("ir", 3), ("isa", 0)) and op not in ("add", "inc", "min"):
        pytest.skip("every operation runs at ir -O0 and isa -O3; add, inc and min on all four")
    rng = np.random.default_rng(OPS.index(op))
    es = np.dtype(NP[dtype]).itemsize
    box = (8, 64 // es)  # 64-byte box rows
    x = _values(dtype, (12, 40 // es * 2), rng)
    boxv = _values(dtype, box, rng)
    at = (6, 40 // es * 2 - box[1] // 2)  # sticks out past the last row and column
    got = store(engine, opt, dtype, x, boxv, at, kernel="tma_reduce_box", op=OPS.index(op))
    want = x.copy()
    t, b = window(x.shape, box, at)
    with np.errstate(over="ignore"):
        want[t] = _reduce_ref(op, x[t], boxv[b])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_reduction_the_element_type_does_not_allow_is_a_located_fault(engine):
    x = np.zeros((8, 16), np.float32)
    with pytest.raises(KernelFault, match=r"cp.reduce.async.bulk.tensor: .inc is not supported on a tensor of f32") \
            as e:
        store(engine, 0, DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, x, np.ones((8, 16), np.float32), (0, 0),
              kernel="tma_reduce_box", op=OPS.index("inc"))
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.inc" in PTX.splitlines()[e.value.line - 1]


# ------------------------------------------------------------------ what an H200 refuses, and bad tensor maps
@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("at, why", [((-16, 0), "a tile-mode store at negative coordinates \\(0, -16\\)"),
                                     ((0, 30), "the innermost coordinate 30 is 120 bytes into a row")])
def test_stores_an_h200_faults_on_are_located_faults(engine, at, why):
    x = np.zeros((40, 52), np.float32)
    with pytest.raises(KernelFault, match=why) as e:
        store(engine, 3, DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, x, np.ones((16, 32), np.float32), at)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in PTX.splitlines()[e.value.line - 1]


# ------------------------------------------------------------------ bad tensor maps
@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_store_through_something_that_is_not_a_tensor_map_is_a_located_fault(engine):
    """The prefetch before the store checks the map first."""
    dev, m = module(engine, 0)
    din = rt.to_device(np.zeros(512, np.uint32), dev)
    with pytest.raises(KernelFault, match="cp.async.bulk.prefetch.tensor: the tensor map operand does not point at") \
            as e:
        m.get_function("tma_store_box").launch((1, 1, 1), (128, 1, 1),
                                               [bytes(128), din, np.int32(512), np.int32(2), coords_param((0, 0))])
    assert "cp.async.bulk.prefetch.tensor.2d" in PTX.splitlines()[e.value.line - 1]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_store_of_another_rank_than_the_map_is_a_located_fault(engine):
    dev, m = module(engine, 3)
    x = np.zeros((8, 16), np.uint32)
    dx, din = rt.to_device(x, dev), rt.to_device(np.zeros(128, np.uint32), dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), x.shape, (8, 16))
    with pytest.raises(KernelFault, match="a 3d copy through a tensor map of rank 2") as e:
        m.get_function("tma_store_box").launch((1, 1, 1), (128, 1, 1),
                                               [tm, din, np.int32(128), np.int32(3), coords_param((0, 0, 0))])
    assert "tensor.3d" in PTX.splitlines()[e.value.line - 1]


# ------------------------------------------------------------------ multicast loads (clusters)
@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mask", [0b1111, 0b0101, 0b1000])
def test_a_multicast_load_lands_in_each_cta_of_the_mask(engine, opt, mask):
    """Two clusters of 4 CTAs: CTA rank 0 of each loads a box sticking out of the tensor into the CTAs whose
    ctaMask bit is set (their mbarriers complete); the others' rows of `out` keep their sentinel."""
    rows, cols = 20, 24
    x = np.arange(rows * cols, dtype=np.uint32).reshape(rows, cols) + 1000
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    box = (8, 16)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), x.shape, box)
    n = box[0] * box[1]
    out = rt.to_device(np.full(8 * n, 7, np.uint32), dev)
    at = (15, 12)
    m.get_function("tma_multicast_box").launch((8, 1, 1), (64, 1, 1), [tm, out, np.int32(n), np.uint16(mask),
                                                                       np.int32(at[1]), np.int32(at[0])],
                                               cluster=(4, 1, 1))
    want_box = np.zeros(box, np.uint32)
    t, b = window(x.shape, box, at)
    want_box[b] = x[t]
    got = out.copy_to_host().reshape(8, *box)
    for cta in range(8):
        want = want_box if mask >> (cta % 4) & 1 else np.full(box, 7, np.uint32)
        assert np.array_equal(got[cta], want), cta


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_multicast_mask_beyond_the_cluster_is_a_located_fault(engine):
    dev, m = module(engine, 0)
    x = np.zeros((8, 16), np.uint32)
    dx, out = rt.to_device(x, dev), rt.to_device(np.zeros(2 * 128, np.uint32), dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), x.shape, (8, 16))
    with pytest.raises(KernelFault, match="ctaMask 0x0005 names a CTA rank beyond the cluster's 2 CTA") as e:
        m.get_function("tma_multicast_box").launch((2, 1, 1), (64, 1, 1), [tm, out, np.int32(128), np.uint16(5),
                                                                           np.int32(0), np.int32(0)], cluster=(2, 1, 1))
    assert "multicast::cluster" in PTX.splitlines()[e.value.line - 1]


# ------------------------------------------------------------------ im2col loads
def encode_im2col(ptr: int, shape, lower, upper, channels: int, pixels: int) -> bytes:
    """An im2col map of a C-order u32 tensor of ``shape`` (N, spatial .., C: outermost first)."""
    assert cuda.cuInit(0)[0] == 0
    dims = list(reversed(shape))
    strides = [int(np.prod(dims[:d + 1])) * 4 for d in range(len(dims) - 1)]
    err, tm = cuda.cuTensorMapEncodeIm2col(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, len(shape), ptr, dims, strides, lower,
                                           upper, channels, pixels, [1] * len(shape), 0, 0, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def im2col_reference(x: np.ndarray, lower, upper, channels: int, pixels: int, c: int, start, n: int, offsets):
    """The column the PTX ISA's im2col mode reads, restated (the offsets are unsigned 16-bit values, as an H200
    reads them: -1 is 65535): ``x`` is (N, spatial outermost .. innermost, C);
    ``lower``/``upper``/``start``/``offsets`` list the spatial dims innermost (W) first, as the coordinates do."""
    k = x.ndim - 2
    sdims = list(reversed(x.shape[1:-1]))  # innermost first
    lo, hi = list(lower), [sdims[d] - 1 + upper[d] for d in range(k)]
    pos, batch = list(start), n
    out = np.zeros((pixels, channels), x.dtype)
    for p in range(pixels):
        where = [pos[d] + (offsets[d] & 0xFFFF) for d in range(k)]  # unsigned 16-bit offsets
        for j in range(channels):
            ch = c + j
            ok = 0 <= batch < x.shape[0] and 0 <= ch < x.shape[-1] and all(0 <= where[d] < sdims[d] for d in range(k))
            if ok:
                out[p, j] = x[(batch, *reversed(where), ch)]
        d = 0
        pos[0] += 1
        while d < k and pos[d] > hi[d]:  # wrap inside the bounding box, then the next image
            pos[d] = lo[d]
            if d + 1 < k:
                pos[d + 1] += 1
            else:
                batch += 1
            d += 1
    return out


I2C = {  # rank -> (shape N, spatial.., C; lower; upper; channels; pixels; cases of (c, start innermost first, n, offsets))
    3: ((3, 10, 8), [-2], [0], 8, 24, [(0, [-2], 0, [0]), (0, [5], 1, [3]), (4, [0], 2, [-1])]),
    4: ((2, 5, 6, 16), [-1, -1], [-1, -1], 8, 20,
        [(8, [-1, -1], 0, [0, 0]), (0, [-1, -1], 0, [2, 1]), (0, [2, 3], 1, [1, 2]), (4, [0, 0], 0, [-1, 0])]),
    5: ((2, 3, 4, 4, 4), [-1, -1, -1], [-1, -1, -1], 4, 40, [(0, [-1, -1, -1], 0, [1, 1, 1]), (0, [1, 2, 0], 1, [0, 2, 1])]),
}


def run_im2col(engine, opt, rank, case):
    shape, lower, upper, channels, pixels, _ = I2C[rank]
    c, start, n, offsets = case
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    tm = encode_im2col(int(dx), shape, lower, upper, channels, pixels)
    words = channels * pixels
    out = rt.to_device(np.full(words, 0xDEAD, np.uint32), dev)
    m.get_function(f"tma_im2col_{rank}d").launch(
        (1, 1, 1), (128, 1, 1),
        [tm, out, np.int32(words), coords_param((c, *start, n)), np.array(offsets + [0] * (3 - len(offsets)), np.int16).tobytes()])
    return x, out.copy_to_host().reshape(pixels, channels)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4])
def test_im2col_loads(engine, opt, rank):
    shape, lower, upper, channels, pixels, cases = I2C[rank]
    for case in cases:
        x, got = run_im2col(engine, opt, rank, case)
        c, start, n, offsets = case
        assert np.array_equal(got, im2col_reference(x, lower, upper, channels, pixels, c, start, n, offsets)), case


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_5d_im2col_loads(engine, opt):
    """xg1: BOXBYTES + TMALD.X (the three offsets in the pair d)."""
    shape, lower, upper, channels, pixels, cases = I2C[5]
    for case in cases:
        x, got = run_im2col(engine, opt, 5, case)
        c, start, n, offsets = case
        assert np.array_equal(got, im2col_reference(x, lower, upper, channels, pixels, c, start, n, offsets)), case


def test_cu_tensor_map_encode_im2col_checks_its_arguments():
    assert cuda.cuInit(0)[0] == 0
    args = [DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, 1 << 40, [16, 6, 5, 2], [64, 384, 1920], [-1, -1], [-1, -1], 8, 20,
            [1] * 4, 0, 0, 0, 0]
    for k, bad, why in ((1, 2, "tensorRank 2 must be 3 .. 5"), (5, [-200, 0], "pixelBoxLowerCorner"),
                        (7, 300, "channelsPerPixel"), (7, 3, "channelsPerPixel * element size"),
                        (8, 2000, "pixelsPerColumn"), (4, [64, 384], "globalStrides")):
        a = list(args)
        a[k] = bad
        err, tm = cuda.cuTensorMapEncodeIm2col(*a)
        assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE and tm is None, why
        assert why in cuda.last_error_message()


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_tile_load_through_an_im2col_map_is_a_located_fault(engine):
    dev, m = module(engine, 0)
    x = np.zeros((2, 5, 6, 16), np.uint32)
    dx, out = rt.to_device(x, dev), rt.to_device(np.zeros(160, np.uint32), dev)
    tm = encode_im2col(int(dx), x.shape, [-1, -1], [-1, -1], 8, 20)
    with pytest.raises(KernelFault, match="a tile-mode copy through a tensor map made by cuTensorMapEncodeIm2col") as e:
        m.get_function("tma_load_box").launch((1, 1, 1), (128, 1, 1),
                                              [tm, out, np.int32(160), np.int32(4), coords_param((0, 0, 0, 0))])
    assert "tensor.4d" in PTX.splitlines()[e.value.line - 1]


# ------------------------------------------------------------------ the accepted forms
FORMS = Path(__file__).parent / "data" / "runtime" / "tma_forms.ptx"


def test_every_tma_form_compiles_for_both_engines():
    """Cache hints and policies on stores, reductions and prefetches, the bulk (non-tensor) prefetch, multicast
    and im2col loads (the multicast im2col one included: xg1's TMALD.X): xcc check and the lazy compile agree."""
    from xcc.check import check_sources
    from xcc.sources import Source

    src = FORMS.read_text()
    for engine in ("ir", "isa"):
        rt.load_module(src, device=rt.Device(), engine=engine).get_function("tma_forms")
    assert not check_sources([Source(src, "tma_forms.ptx")]).errors
