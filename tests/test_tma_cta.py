"""TMA loads into the executing CTA's shared memory, PTX ISA 8.6's
``cp.async.bulk.tensor.Nd.shared::cta.global{.tile,.im2col}.mbarrier::complete_tx::bytes [dst], [tmap, {c}], [mbar]``
(issue 19), on both engines at -O0/-O3.  The kernels are examples/tma_store.sm_90a.ptx's and
tests/data/runtime/tma_copy.sm_90a.ptx's with their ``.shared::cluster`` loads turned into the ``.shared::cta`` form
(ptxas 13.0 accepts it for sm_90): the box lands in the CTA's own shared memory and its bytes complete the CTA's
mbarrier, whose wait the kernels pass.  Expected values: numpy indexing of the tile box, a 128-byte swizzle written
out (chunk ^= row % 8), and test_tma_store's im2col reference (the PTX ISA's im2col mode restated)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_tma import expected as copy_expected
from test_tma_store import (
    DT,
    I2C,
    NEGATIVE,
    RANKED,
    coords_param,
    encode,
    encode_im2col,
    im2col_reference,
    window,
)

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.runtime import driver as cuda
from xcc.sources import Source

HERE = Path(__file__).resolve().parent
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
# the non-multicast loads of a file, into .shared::cta (a multicast load's modifiers go on after "bytes")
_CLUSTER_LOAD = re.compile(r"\.shared::cluster\.global\.(tile|im2col)\.mbarrier::complete_tx::bytes \[")


def to_cta(text: str, loads: int) -> str:
    out, n = _CLUSTER_LOAD.subn(r".shared::cta.global.\1.mbarrier::complete_tx::bytes [", text)
    assert n == loads
    return out  # both files are .version 9.0 (the form needs 8.6)


STORE_PTX = to_cta((HERE.parent / "examples" / "tma_store.sm_90a.ptx").read_text(), 8)
COPY_PTX = to_cta((HERE / "data" / "runtime" / "tma_copy.sm_90a.ptx").read_text(), 1)


def _module(text: str, engine: str, opt: int):
    dev = rt.Device()
    return dev, rt.load_module(text, device=dev, engine=engine, opt_level=opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_tile_loads_of_every_rank_into_the_ctas_shared_memory(engine, opt, rank):
    shape, box, sticking_out = RANKED[rank]
    rng = np.random.default_rng(40 + rank)
    x = rng.integers(0, 1 << 32, shape, dtype=np.uint32)
    dev, m = _module(STORE_PTX, engine, opt)
    dx = rt.to_device(x, dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), shape, box)
    n = int(np.prod(box))
    for c in (tuple(0 for _ in box), NEGATIVE[rank], sticking_out):
        out = rt.to_device(np.full(n, 7, np.uint32), dev)
        m.get_function("tma_load_box").launch((1, 1, 1), (128, 1, 1),
                                              [tm, out, np.int32(n), np.int32(rank), coords_param(tuple(reversed(c)))])
        want = np.zeros(box, np.uint32)
        t, b = window(shape, box, c)
        want[b] = x[t]
        assert np.array_equal(out.copy_to_host().reshape(box), want), c


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_im2col_loads_into_the_ctas_shared_memory(engine, opt, rank):
    shape, lower, upper, channels, pixels, cases = I2C[rank]
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    dev, m = _module(STORE_PTX, engine, opt)
    tm = encode_im2col(int(rt.to_device(x, dev)), shape, lower, upper, channels, pixels)
    for c, start, n, offsets in cases:
        out = rt.to_device(np.full(channels * pixels, 0xDEAD, np.uint32), dev)
        m.get_function(f"tma_im2col_{rank}d").launch(
            (1, 1, 1), (128, 1, 1),
            [tm, out, np.int32(channels * pixels), coords_param((c, *start, n)),
             np.array(offsets + [0] * (3 - len(offsets)), np.int16).tobytes()])
        want = im2col_reference(x, lower, upper, channels, pixels, c, start, n, offsets)
        assert np.array_equal(out.copy_to_host().reshape(pixels, channels), want), (c, start, n, offsets)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_a_swizzled_load_into_the_ctas_shared_memory(engine, opt):
    """A box row of 32 floats is 128 bytes: its 16-byte chunk k lands at chunk k ^ (row % 8)."""
    rows, cols = 40, 52
    dev, m = _module(COPY_PTX, engine, opt)
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) + 0.5
    dx, out = rt.to_device(x, dev), rt.to_device(np.zeros(16 * 32, np.float32), dev)
    assert cuda.cuInit(0)[0] == 0
    err, tm = cuda.cuTensorMapEncodeTiled(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, int(dx), [cols, rows], [cols * 4],
                                          [32, 16], [1, 1], 0, cuda.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B, 0, 0)
    assert err == 0
    m.get_function("tma_copy").launch((1, 1, 1), (128, 1, 1), [bytes(tm), out, np.int32(28), np.int32(-3)])
    plain = copy_expected(x, 28, -3).reshape(16, 8, 4)
    want = np.empty_like(plain)
    for r in range(16):
        for k in range(8):
            want[r, k ^ (r % 8)] = plain[r, k]
    assert np.array_equal(out.copy_to_host().reshape(16, 32), want.reshape(16, 32))


BAD = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 map)
{
    .shared .align 128 .b8 buf[1024];
    .shared .align 8 .b64 bar;
    .reg .b32 %r<2>;
    .reg .b16 %h<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [map];
    mov.u32 %r1, 0;
    mov.u16 %h1, 1;
    cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [buf], [%rd1, {%r1, %r1}], [bar], %h1;
    ret;
}
"""


def test_a_multicast_into_shared_cta_is_refused_by_check_and_compile_alike():
    """PTX ISA 8.6 has no .multicast::cluster for a .shared::cta destination."""
    line = next(k for k, t in enumerate(BAD.splitlines(), 1) if "multicast" in t)
    errs = check_sources([Source(BAD, "bad.ptx")]).errors
    assert len(errs) == 1 and errs[0].loc.line == line and "not supported" in str(errs[0])
    with pytest.raises(XccError, match="not supported") as e:
        rt.load_module(BAD, device=rt.Device()).get_function("k")
    assert f":{line}:" in str(e.value)
