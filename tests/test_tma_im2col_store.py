"""TMA im2col-mode stores (``cp.async.bulk.tensor.Nd.global.shared::cta.im2col_no_offs.bulk_group``, 3d - 5d, and
the ``cp.reduce.async.bulk.tensor`` form) and im2col maps with element strides or interleaved layouts, on both
engines at -O0/-O3 (issue 19), against a numpy restatement of the documented rules:

* PTX ISA 5.5.4 (im2col mode): the column is ``pixelsPerColumn`` pixels of ``channelsPerPixel`` channels; the
  pixels are visited from the coordinates' (W, H, D, N) inside the bounding box ``lower .. size - 1 + upper`` of
  each spatial dim (W fastest; past a dim's end it restarts at its lower corner and the next dim steps; past D,
  N steps), pixel p's channels ``c ..`` at the position plus the im2col offsets, densely in shared memory (p
  outer, channel inner); zero outside the tensor.
* 5.5.4.2 (Traversal Stride): the steps along D, H and W are the map's element strides of those dims; the
  count of pixels stays pixelsPerColumn.
* The store direction's ``.im2col_no_offs`` is the im2col mode with no offsets (cp.reduce.async.bulk.tensor:
  "In .im2col_no_offs mode, some dimensions of the source tensors are unrolled in a single dimensional column"):
  column element (p, channel) goes to where the load would read it, elements outside the tensor are not
  written; 9.7.9.25.5.1 requires of the .global.shared::cta direction non-negative coordinates and the pixel box
  inside the tensor (lower corners >= 0, upper corners <= 0): xcc makes each violation a located fault.
* 5.5.6 / cuTensorMapEncodeIm2col: interleaved layouts (16B, 32B with the 32-byte swizzle) address the tensor
  by its dims and strides; the swizzles are the manual's 5.5.7 tables (16-byte chunk j of 128-byte row r lands
  at chunk j ^ (r % 2) for 32B, j ^ (r % 8) for 128B).

The store kernels are written here in PTX (one thread issues the store after the block fills shared memory from
``src``); the loads are examples/tma_store.cu's tma_im2col_{3,4,5}d."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.runtime import driver as cuda

EXAMPLE = (Path(__file__).parent.parent / "examples" / "tma_store.sm_90a.ptx").read_text()
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
U32 = cuda.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32
IL = cuda.CUtensorMapInterleave
SW = cuda.CUtensorMapSwizzle

_HEAD = """.version 8.0
.target sm_90a
.address_size 64
"""
_KERNEL = """
.visible .entry {name}(.param .align 64 .b8 p_map[128], .param .u64 p_src, .param .u32 p_n, .param .align 4 .b8 p_c[20])
{{
    .reg .pred %p<4>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 col[8192];
    mov.b64 %rd1, p_map;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [p_src];
    cvta.to.global.u64 %rd3, %rd3;
    ld.param.u32 %r1, [p_n];
    ld.param.u32 %r10, [p_c];
    ld.param.u32 %r11, [p_c+4];
    ld.param.u32 %r12, [p_c+8];
    ld.param.u32 %r13, [p_c+12];
    ld.param.u32 %r14, [p_c+16];
    mov.u32 %r2, %tid.x;
    mov.u32 %r5, col;
FILL:
    setp.ge.s32 %p1, %r2, %r1;
    @%p1 bra FILLED;
    mul.wide.s32 %rd4, %r2, 4;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.u32 %r3, [%rd5];
    shl.b32 %r4, %r2, 2;
    add.s32 %r6, %r5, %r4;
    st.shared.u32 [%r6], %r3;
    add.s32 %r2, %r2, 128;
    bra.uni FILL;
FILLED:
    fence.proxy.async.shared::cta;
    bar.sync 0;
    mov.u32 %r2, %tid.x;
    setp.ne.s32 %p2, %r2, 0;
    @%p2 bra END;
    {inst} [%rd2, {{{coords}}}], [%r5];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
END:
    ret;
}}
"""


def _kernels() -> str:
    out = [_HEAD]
    for rank in (3, 4, 5):
        coords = ", ".join(f"%r{10 + k}" for k in range(rank))
        out.append(_KERNEL.format(name=f"store{rank}", coords=coords,
                                  inst=f"cp.async.bulk.tensor.{rank}d.global.shared::cta.im2col_no_offs.bulk_group"))
        out.append(_KERNEL.format(name=f"add{rank}", coords=coords,
                                  inst=f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.add.im2col_no_offs"
                                       ".bulk_group"))
    out.append(_KERNEL.format(name="tile3", coords="%r10, %r11, %r12",
                              inst="cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group"))
    return "".join(out)


STORES = _kernels()


def _encode(ptr, shape, lower, upper, channels, pixels, estrides=None, interleave=IL.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE, strides=None):
    """An im2col map of a C-order u32 tensor of ``shape`` (N, spatial .., C: outermost first); ``lower``,
    ``upper`` and ``estrides`` innermost first (the driver API's order); ``strides``: byte strides of dims 1 ..
    (default: dense)."""
    assert cuda.cuInit(0)[0] == 0
    dims = list(reversed(shape))
    if strides is None:
        strides = [int(np.prod(dims[:d + 1])) * 4 for d in range(len(dims) - 1)]
    err, tm = cuda.cuTensorMapEncodeIm2col(U32, len(shape), ptr, dims, strides, lower, upper, channels, pixels,
                                           estrides or [1] * len(shape), interleave, swizzle, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def _coords(c) -> bytes:
    return np.array(list(c) + [0] * (5 - len(c)), np.int32).tobytes()


def walk(shape, lower, upper, pixels, start, n, estrides):
    """The pixels of a column (PTX ISA 5.5.4 / 5.5.4.2): a list of (n, spatial innermost first), ``estrides``
    of the spatial dims innermost first."""
    k = len(shape) - 2
    sdims = list(reversed(shape[1:-1]))  # innermost first
    lo, hi = list(lower), [sdims[d] - 1 + upper[d] for d in range(k)]
    pos, batch, out = list(start), n, []
    for _ in range(pixels):
        out.append((batch, list(pos)))
        d = 0
        pos[0] += estrides[0]
        while d < k and pos[d] > hi[d]:  # restart the dim at its lower corner, step the next one
            pos[d] = lo[d]
            if d + 1 < k:
                pos[d + 1] += estrides[d + 1]
            else:
                batch += 1
            d += 1
    return out


def _inside(shape, batch, where, ch):
    return 0 <= batch < shape[0] and 0 <= ch < shape[-1] and all(0 <= w < s for w, s in
                                                                  zip(where, reversed(shape[1:-1])))


def swizzled_word(w: int, span: int) -> int:
    """The shared word holding dense word ``w`` under a ``span``-byte swizzle (PTX ISA 5.5.7's tables: 16-byte
    chunk j of 128-byte row r at chunk j ^ (r % (span / 16)))."""
    if not span:
        return w
    b = 4 * w
    row, chunk = b // 128, (b % 128) // 16
    return (row * 128 + ((chunk ^ (row % (span // 16))) * 16) + b % 16) // 4


def load_reference(x, lower, upper, channels, pixels, c, start, n, offsets, estrides, span=0):
    """The shared words an im2col load leaves (zeros outside the tensor), in shared-memory order."""
    out = np.zeros(channels * pixels, x.dtype)
    for p, (batch, pos) in enumerate(walk(x.shape, lower, upper, pixels, start, n, estrides)):
        where = [pos[d] + (offsets[d] & 0xFFFF) for d in range(len(pos))]
        for j in range(channels):
            if _inside(x.shape, batch, where, c + j):
                out[swizzled_word(p * channels + j, span)] = x[(batch, *reversed(where), c + j)]
    return out


def store_reference(x, src, lower, upper, channels, pixels, c, start, n, estrides, span=0, add=False):
    """The tensor after an im2col store (``add``: a .add reduction) of the shared words ``src``."""
    y = x.copy()
    for p, (batch, pos) in enumerate(walk(x.shape, lower, upper, pixels, start, n, estrides)):
        for j in range(channels):
            if _inside(x.shape, batch, pos, c + j):
                at = (batch, *reversed(pos), c + j)
                v = src[swizzled_word(p * channels + j, span)]
                y[at] = (int(y[at]) + int(v)) & 0xFFFFFFFF if add else v
    return y


_MODULES: dict = {}


def _module(engine, opt, text):
    dev = rt.Device()
    return dev, rt.load_module(text, device=dev, engine=engine, opt_level=opt)


# ------------------------------------------------------------------ im2col stores
# rank -> (shape N, spatial.., C; lower; upper; channels; pixels; element strides of the spatial dims (innermost
# first); cases of (c, start innermost first, n))
STORE_CASES = {
    3: ((3, 10, 8), [0], [0], 8, 24, [1], [(0, [0], 0), (0, [7], 1), (4, [3], 2)]),
    4: ((2, 5, 6, 16), [0, 0], [-1, -2], 8, 20, [1, 1], [(8, [0, 0], 0), (0, [3, 1], 1), (4, [2, 2], 0)]),
    5: ((2, 3, 4, 4, 4), [0, 0, 0], [-1, 0, 0], 4, 40, [1, 1, 1], [(0, [0, 0, 0], 0), (0, [1, 2, 1], 1)]),
}
STRIDED_STORES = {  # the same with element strides 2 (W), 2 and 3 (W, H), 2, 1, 2 (W, H, D)
    3: ((2, 11, 8), [0], [0], 8, 12, [2], [(0, [1], 0)]),
    4: ((2, 5, 7, 16), [0, 0], [0, -1], 8, 20, [2, 3], [(8, [0, 0], 0), (0, [2, 0], 1)]),
    5: ((2, 3, 4, 5, 4), [0, 0, 0], [0, 0, 0], 4, 30, [2, 1, 2], [(0, [0, 1, 0], 0)]),
}


def _run_store(engine, opt, rank, spec, case, add=False, swizzle=SW.CU_TENSOR_MAP_SWIZZLE_NONE, span=0):
    shape, lower, upper, channels, pixels, es, _ = spec
    c, start, n = case
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) * 3 + 5).reshape(shape)
    words = channels * pixels
    src = (np.arange(words, dtype=np.uint32) + 0x80000000) if not add else np.arange(words, dtype=np.uint32) * 1000
    dev, m = _module(engine, opt, STORES)
    dx, dsrc = rt.to_device(x, dev), rt.to_device(src, dev)
    tm = _encode(int(dx), shape, lower, upper, channels, pixels, [1, *es, 1], swizzle=swizzle)
    m.get_function(f"{'add' if add else 'store'}{rank}").launch(
        (1, 1, 1), (128, 1, 1), [tm, dsrc, np.int32(words), _coords((c, *start, n))])
    got = dx.copy_to_host().reshape(shape)
    return got, store_reference(x, src, lower, upper, channels, pixels, c, start, n, es, span, add)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_im2col_stores(engine, opt, rank):
    """Columns running past the image's end into the next image and past the batch, and past the channels: what
    lies outside the tensor is not written."""
    spec = STORE_CASES[rank]
    for case in spec[-1]:
        got, want = _run_store(engine, opt, rank, spec, case)
        assert np.array_equal(got, want), case


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_im2col_stores_with_element_strides(engine, opt, rank):
    spec = STRIDED_STORES[rank]
    for case in spec[-1]:
        got, want = _run_store(engine, opt, rank, spec, case)
        assert np.array_equal(got, want), case


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_im2col_reduction_and_swizzled_store(engine, opt):
    """cp.reduce.async.bulk.tensor .add.im2col_no_offs (4d), and a 3d store of 32 channels through the 128-byte
    swizzle."""
    got, want = _run_store(engine, opt, 4, STORE_CASES[4], (0, [3, 1], 1), add=True)
    assert np.array_equal(got, want)
    spec = ((2, 9, 40), [0], [0], 32, 12, [1], None)
    got, want = _run_store(engine, opt, 3, spec, (8, [4], 0), swizzle=SW.CU_TENSOR_MAP_SWIZZLE_128B, span=128)
    assert np.array_equal(got, want)


BAD_STORES = [  # (lower, upper, coordinates c, W, H, N, what the fault says)
    ([0, 0], [0, 0], (0, -1, 0, 0), r"an im2col-mode store at negative coordinates \(0, -1, 0, 0\)"),
    ([-1, 0], [0, 0], (0, 0, 0, 0), r"pixel box \(lower corner \(-1, 0\), upper corner \(0, 0\)\) leaves the tensor"),
    ([0, 0], [0, 1], (0, 0, 0, 0), r"upper corner \(0, 1\)\) leaves the tensor"),
]


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("lower, upper, at, why", BAD_STORES, ids=["negative", "lower", "upper"])
def test_what_ptx_forbids_an_im2col_store_is_a_located_fault(engine, lower, upper, at, why):
    """PTX ISA 9.7.9.25.5.1's restrictions on the .global.shared::cta direction."""
    shape = (2, 5, 6, 16)
    dev, m = _module(engine, 0, STORES)
    dx, dsrc = rt.to_device(np.zeros(shape, np.uint32), dev), rt.to_device(np.zeros(160, np.uint32), dev)
    tm = _encode(int(dx), shape, lower, upper, 8, 20)
    with pytest.raises(KernelFault, match=why) as e:
        m.get_function("store4").launch((1, 1, 1), (128, 1, 1), [tm, dsrc, np.int32(160), _coords(at)])
    assert "im2col_no_offs" in STORES.splitlines()[e.value.line - 1]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_mode_mismatch_is_a_located_fault(engine):
    """A tile-mode store through an im2col map, an im2col store through a tiled map."""
    shape = (3, 10, 8)
    dev, m = _module(engine, 0, STORES)
    dx, dsrc = rt.to_device(np.zeros(shape, np.uint32), dev), rt.to_device(np.zeros(64, np.uint32), dev)
    tm = _encode(int(dx), shape, [0], [0], 8, 8)
    with pytest.raises(KernelFault, match="a tile-mode copy through a tensor map made by cuTensorMapEncodeIm2col"):
        m.get_function("tile3").launch((1, 1, 1), (128, 1, 1), [tm, dsrc, np.int32(64), _coords((0, 0, 0))])
    err, tiled = cuda.cuTensorMapEncodeTiled(U32, 3, int(dx), [8, 10, 3], [32, 320], [8, 8, 1], [1, 1, 1], 0, 0, 0, 0)
    assert err == 0
    with pytest.raises(KernelFault, match="an im2col copy through a tensor map made by cuTensorMapEncodeTiled"):
        m.get_function("store3").launch((1, 1, 1), (128, 1, 1), [bytes(tiled), dsrc, np.int32(64),
                                                                 _coords((0, 0, 0))])


# ------------------------------------------------------------------ im2col loads: element strides, interleave
# rank -> (shape; lower; upper; channels; pixels; element strides (spatial, innermost first); cases of
# (c, start, n, offsets))
STRIDED_LOADS = {
    3: ((2, 13, 8), [-1], [-1], 8, 16, [2], [(0, [-1], 0, [1]), (0, [9], 0, [2])]),
    4: ((2, 7, 9, 8), [-1, -1], [-1, -1], 8, 24, [2, 3], [(0, [-1, -1], 0, [1, 1]), (0, [5, 2], 1, [0, 2])]),
    5: ((2, 3, 4, 5, 4), [-1, -1, 0], [0, -1, 0], 4, 36, [2, 2, 1], [(0, [-1, -1, 0], 0, [1, 0, 1])]),
}


def _run_load(engine, opt, rank, x, tm, words, c, start, n, offsets):
    dev, m = _module(engine, opt, EXAMPLE)
    dx = rt.to_device(x, dev)
    out = rt.to_device(np.full(words, 0xDEAD, np.uint32), dev)
    m.get_function(f"tma_im2col_{rank}d").launch(
        (1, 1, 1), (128, 1, 1), [tm(int(dx)), out, np.int32(words), _coords((c, *start, n)),
                                 np.array(offsets + [0] * (3 - len(offsets)), np.int16).tobytes()])
    return out.copy_to_host()


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_im2col_loads_with_element_strides(engine, opt, rank):
    """The walk steps by the strides of W, H, D inside the bounding box (restarting at the lower corner); the
    channel stride is ignored without an interleaved layout (here 3); pixelsPerColumn pixels either way."""
    shape, lower, upper, channels, pixels, es, cases = STRIDED_LOADS[rank]
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    for c, start, n, offsets in cases:
        tm = lambda p: _encode(p, shape, lower, upper, channels, pixels, [3, *es, 1])  # noqa: E731
        got = _run_load(engine, opt, rank, x, tm, channels * pixels, c, start, n, offsets)
        want = load_reference(x, lower, upper, channels, pixels, c, start, n, offsets, es)
        assert np.array_equal(got, want), (c, start, n, offsets)


INTERLEAVED = {  # name -> (shape, interleave, swizzle, span, channels, element strides (spatial), padded row bytes)
    "16B": ((3, 5, 6, 4), IL.CU_TENSOR_MAP_INTERLEAVE_16B, SW.CU_TENSOR_MAP_SWIZZLE_NONE, 0, 4, [1, 1], None),
    "16B_strided": ((3, 5, 6, 4), IL.CU_TENSOR_MAP_INTERLEAVE_16B, SW.CU_TENSOR_MAP_SWIZZLE_64B, 64, 4, [2, 1], None),
    "32B": ((2, 5, 6, 8), IL.CU_TENSOR_MAP_INTERLEAVE_32B, SW.CU_TENSOR_MAP_SWIZZLE_32B, 32, 8, [1, 2], None),
}


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("name", list(INTERLEAVED))
def test_interleaved_im2col_loads(engine, opt, name):
    """NC/8HWC8-style maps (the interleaved channel slice is dim 0: 16 or 32 bytes of u32 channels): addressed by
    the dims and strides, the 32B one through the 32-byte swizzle; a 4d tensor whose last dim holds N x C/slice."""
    shape, il, sw, span, channels, es, _ = INTERLEAVED[name]
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    pixels = 24
    for c, start, n, offsets in ((0, [-1, -1], 0, [1, 1]), (0, [3, 2], 1, [0, 1])):
        tm = lambda p: _encode(p, shape, [-1, -1], [-1, -1], channels, pixels, [1, *es, 1], il, sw)  # noqa: E731
        got = _run_load(engine, opt, 4, x, tm, channels * pixels, c, start, n, offsets)
        want = load_reference(x, [-1, -1], [-1, -1], channels, pixels, c, start, n, offsets, es, span)
        assert np.array_equal(got, want), (name, c, start, n, offsets)


def test_cu_tensor_map_encode_im2col_takes_strides_and_interleave():
    """Accepted: element strides 1 - 8 on the spatial dims, any channel stride without interleave, 16B/32B
    interleave; refused as the driver API does (32B interleave without the 32-byte swizzle, a stride of 9,
    strides not multiples of 32 with 32B), and what xcc does not support yet (a batch stride, a channel stride
    with interleave), each a CUDA_ERROR_INVALID_VALUE naming the argument."""
    assert cuda.cuInit(0)[0] == 0
    args = [U32, 4, 1 << 40, [8, 6, 5, 2], [32, 192, 960], [-1, -1], [-1, -1], 8, 20, [1, 2, 8, 1], 0, 0, 0, 0]
    assert cuda.cuTensorMapEncodeIm2col(*args)[0] == 0
    a = list(args)
    a[9], a[10], a[11] = [1, 1, 1, 1], IL.CU_TENSOR_MAP_INTERLEAVE_32B, SW.CU_TENSOR_MAP_SWIZZLE_32B
    assert cuda.cuTensorMapEncodeIm2col(*a)[0] == 0
    for k, bad, why in ((9, [1, 9, 1, 1], "elementStrides[1] = 9 must be in 1 .. 8"),
                        (9, [1, 1, 1, 2], "elementStrides[3] = 2 (the batch dim) other than 1 is not supported yet"),
                        (10, IL.CU_TENSOR_MAP_INTERLEAVE_32B,
                         "CU_TENSOR_MAP_INTERLEAVE_32B needs CU_TENSOR_MAP_SWIZZLE_32B")):
        b = list(args)
        b[k] = bad
        err, tm = cuda.cuTensorMapEncodeIm2col(*b)
        assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE and tm is None, why
        assert why in cuda.last_error_message()
    b = list(a)
    b[9] = [2, 1, 1, 1]
    assert cuda.cuTensorMapEncodeIm2col(*b)[0] == cuda.CUresult.CUDA_ERROR_INVALID_VALUE
    assert "elementStrides[0] = 2 (the channel dim) other than 1 is not supported yet" in cuda.last_error_message()
    b = list(a)
    b[4] = [32, 208, 1040]
    assert cuda.cuTensorMapEncodeIm2col(*b)[0] == cuda.CUresult.CUDA_ERROR_INVALID_VALUE
    assert "multiple of 32" in cuda.last_error_message()


def test_check_agrees_with_the_compile():
    """Every store form above passes xcc check and compiles for both engines; a 2d .im2col_no_offs store is the
    same located refusal from both."""
    from xcc.check import check_sources
    from xcc.diagnostics import XccError
    from xcc.sources import Source

    assert not check_sources([Source(STORES, "im2col_store.ptx")]).errors
    for engine in ("ir", "isa"):
        m = rt.load_module(STORES, device=rt.Device(), engine=engine)
        for name in ("store3", "store4", "store5", "add3", "add4", "add5"):
            m.get_function(name)
    bad = _HEAD + _KERNEL.format(name="k2", coords="%r10, %r11",
                                 inst="cp.async.bulk.tensor.2d.global.shared::cta.im2col_no_offs.bulk_group")
    res = check_sources([Source(bad, "k2.ptx")])
    assert res.errors
    with pytest.raises(XccError) as e:
        rt.load_module(Source(bad, "k2.ptx"), device=rt.Device(), engine="isa").get_function("k2")
    assert str(e.value).splitlines()[0] == str(res.errors[0]).splitlines()[0]
    assert "is not supported yet" in str(e.value) and "k2.ptx:" in str(e.value)
