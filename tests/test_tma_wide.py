"""TMA loads whose operands did not fit xg1's TMALD rows, on both engines (issue 19): 5d .multicast::cluster tile
loads and .multicast::cluster .im2col loads (3d-5d); the 5d im2col load is test_tma_store's.  xg1 runs them as
BOXBYTES + TMALD.X (the offsets and the ctaMask in a fourth register pair).  tests/data/runtime/tma_wide.ptx
(hand-written, ptxas-clean sm_90a): rank 0 of a 2-CTA cluster loads the box into every CTA of the mask, each of
which waits on its own mbarrier and copies the box out.  Expected values: numpy indexing of the tile box, and
test_tma_store's im2col reference (the PTX ISA's im2col mode restated)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_tma_store import DT, I2C, coords_param, encode, encode_im2col, im2col_reference, window

from xcc import runtime as rt

PTX = Path(__file__).resolve().parent / "data" / "runtime" / "tma_wide.ptx"
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]


def _launch(engine, opt, name, tm, nbytes, mask, coords, offsets=()):
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    out = rt.to_device(np.full(1024, 0xDEAD, np.uint32), dev)
    m.get_function(name).launch((2, 1, 1), (32, 1, 1),
                                [tm(dev), out, np.uint32(nbytes), np.uint32(mask), coords_param(coords),
                                 np.array(list(offsets) + [0] * (4 - len(offsets)), np.int16).tobytes()],
                                cluster=(2, 1, 1))
    return out.copy_to_host().reshape(2, 512)


@pytest.mark.parametrize("mask", [0b11, 0b10])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_a_5d_multicast_tile_load(engine, opt, mask):
    shape, box, at = (2, 3, 4, 5, 8), (2, 2, 2, 4, 4), (1, 2, -1, 3, 4)  # outermost first
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    keep = {}

    def tm(dev):
        keep["x"] = rt.to_device(x, dev)
        return encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(keep["x"]), shape, box)

    n = int(np.prod(box))
    got = _launch(engine, opt, "mc_tile_5d", tm, n * 4, mask, tuple(reversed(at)))
    want = np.zeros(box, np.uint32)
    t, b = window(shape, box, at)
    want[b] = x[t]
    for r in range(2):
        expect = want.reshape(-1) if mask >> r & 1 else np.full(n, 0xDEAD, np.uint32)
        np.testing.assert_array_equal(got[r, :n], expect)


@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_multicast_im2col_loads(engine, opt, rank):
    shape, lower, upper, channels, pixels, cases = I2C[rank]
    c, start, nimg, offsets = cases[-1]
    x = (np.arange(int(np.prod(shape)), dtype=np.uint32) + 1).reshape(shape)
    keep = {}

    def tm(dev):
        keep["x"] = rt.to_device(x, dev)
        return encode_im2col(int(keep["x"]), shape, lower, upper, channels, pixels)

    words = channels * pixels
    got = _launch(engine, opt, f"mc_i2c_{rank}d", tm, words * 4, 0b11, (c, *start, nimg), offsets)
    want = im2col_reference(x, lower, upper, channels, pixels, c, start, nimg, offsets).reshape(-1)
    for r in range(2):
        np.testing.assert_array_equal(got[r, :words], want)
