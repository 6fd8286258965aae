"""examples/tma_store.cu's TMA kernels on both xcc engines against what an NVIDIA H200 computed for the same inputs
(tests/data/gpu/tma_h200.jsonl, recorded by tests/data/gpu/tma_gpu_check.cu: each case's output words):
tile stores (clipped at the tensor's far edges, a 128-byte swizzle; 2d and 3d), a 2d tile load, tile reductions
(u32 add/min/max/inc/dec/and/or/xor, s32 add/min/max, f32 add, f16/bf16 add/min/max over NaNs, signed zeros,
infinities and subnormals, u64 add/and/xor, s64 min/max), im2col loads of rank 3 - 5 (offsets of 0xFFFF read as
65535) and multicast loads.

What the H200 refused: the harness's cases that ended with CUDA error 715 (an illegal instruction at the TMA
instruction) are missing from the recording: tile boxes whose innermost coordinate is not a multiple of 16 bytes
(loads and stores), tile stores at a negative coordinate (loads there read zeros, and are recorded), and an
``.or`` reduction into an s64 map.  xcc makes each a located fault."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_tma_store import DT, ENGINES, I2C, SW, coords_param, encode, module, run_im2col

from xcc import runtime as rt
from xcc.diagnostics import KernelFault

H200 = {d["case"]: np.array(d["words"], np.uint32)
        for d in map(json.loads, (Path(__file__).parent / "data" / "gpu" / "tma_h200.jsonl").read_text().splitlines())}
OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _store2d(engine, opt, a0, a1, swizzle, rows, cols, init):
    dev, m = module(engine, opt)
    x = np.full((rows, cols), init, np.float32)
    dx = rt.to_device(x, dev)
    din = rt.to_device((np.arange(512, dtype=np.float32) + 0.25).view(np.uint32), dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, int(dx), x.shape, (16, 32), swizzle)
    m.get_function("tma_store_box").launch((1, 1, 1), (128, 1, 1), [tm, din, np.int32(512), np.int32(2),
                                                                    coords_param((a1, a0))])
    return dx.copy_to_host().view(np.uint32).reshape(-1)


def _reduce2d(engine, opt, dtype, op):
    s = 20 if dtype == DT.CU_TENSOR_MAP_DATA_TYPE_INT32 else 0
    xi = (7 * np.arange(240)) % 40 - s
    bi = (13 * np.arange(128)) % 40 - s
    if dtype == DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
        x, b = (xi / 8).astype(np.float32).view(np.uint32), (bi / 8).astype(np.float32).view(np.uint32)
    else:
        x, b = xi.astype(np.int64).astype(np.uint32), bi.astype(np.int64).astype(np.uint32)
    dev, m = module(engine, opt)
    dx, din = rt.to_device(x, dev), rt.to_device(b, dev)
    tm = encode(dtype, int(dx), (12, 20), (8, 16))
    m.get_function("tma_reduce_box").launch((1, 1, 1), (128, 1, 1), [tm, din, np.int32(128), np.int32(op),
                                                                     np.int32(12), np.int32(6)])
    return dx.copy_to_host()


STORES = {"store2d_0_0": (0, 0), "store2d_24_20": (24, 20), "store2d_40_0": (40, 0)}


def _ranked(engine, opt, kernel, shape, box, at):
    """tma_store_box of box words 0x80000000 + j, or tma_load_box, on a u32 tensor x[i] = i + 1 (outermost first)."""
    x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.uint32)
    nb = int(np.prod(box))
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), shape, box)
    buf = rt.to_device((np.arange(nb) + 0x80000000).astype(np.uint32) if kernel == "tma_store_box"
                       else np.full(nb, 7, np.uint32), dev)
    m.get_function(kernel).launch((1, 1, 1), (128, 1, 1), [tm, buf, np.int32(nb), np.int32(len(shape)),
                                                           coords_param(tuple(reversed(at)))])
    return (dx if kernel == "tma_store_box" else buf).copy_to_host()


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_a_3d_store_and_a_2d_load_match_the_h200(engine, opt):
    got = _ranked(engine, opt, "tma_store_box", (5, 6, 20), (2, 4, 8), (4, 3, 16))
    assert np.array_equal(got, H200["store3d_pos"])
    got = _ranked(engine, opt, "tma_load_box", (40, 52), (16, 32), (30, 24))
    assert np.array_equal(got, H200["load2d"])


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_stores_match_the_h200(engine, opt):
    for name, (a0, a1) in STORES.items():
        assert np.array_equal(_store2d(engine, opt, a0, a1, SW.CU_TENSOR_MAP_SWIZZLE_NONE, 40, 52, -1.5), H200[name]), name
    got = _store2d(engine, opt, 0, 0, SW.CU_TENSOR_MAP_SWIZZLE_128B, 16, 32, 0.0)
    assert np.array_equal(got, H200["store2d_swizzle128"])


REDUCE = ([(f"reduce_u32_{op}", DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, k) for k, op in enumerate(OPS)]
          + [(f"reduce_s32_{op}", DT.CU_TENSOR_MAP_DATA_TYPE_INT32, k) for k, op in enumerate(OPS[:3])]
          + [("reduce_f32_add", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0)])


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("name, dtype, op", REDUCE, ids=[r[0] for r in REDUCE])
def test_reductions_match_the_h200(engine, opt, name, dtype, op):
    assert np.array_equal(_reduce2d(engine, opt, dtype, op), H200[name])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_im2col_loads_match_the_h200(engine, opt, rank):
    for k, case in enumerate(I2C[rank][5]):
        _, got = run_im2col(engine, opt, rank, case)
        assert np.array_equal(got.reshape(-1), H200[f"im2col{rank}d_{k}"]), case


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mask", [0b0101, 0b1111])
def test_multicast_loads_match_the_h200(engine, opt, mask):
    x = np.arange(480, dtype=np.uint32) + 1000
    dev, m = module(engine, opt)
    dx = rt.to_device(x, dev)
    tm = encode(DT.CU_TENSOR_MAP_DATA_TYPE_UINT32, int(dx), (20, 24), (8, 16))
    out = rt.to_device(np.full(8 * 128, 7, np.uint32), dev)
    m.get_function("tma_multicast_box").launch((8, 1, 1), (64, 1, 1), [tm, out, np.int32(128), np.uint16(mask),
                                                                       np.int32(12), np.int32(15)], cluster=(4, 1, 1))
    assert np.array_equal(out.copy_to_host(), H200[f"multicast_{mask:04b}"])


def test_the_recording_covers_what_this_file_checks():
    names = set(STORES) | {"store2d_swizzle128", "store3d_pos", "load2d"} | {r[0] for r in REDUCE} | {"multicast_0101", "multicast_1111"}
    names |= {f"im2col{r}d_{k}" for r in (3, 4, 5) for k in range(len(I2C[r][5]))}
    assert names <= set(H200), names - set(H200)


PROBES = {"probe2d_0_4": (0, 4), "probe2d_-1_0": (-1, 0), "probe2d_0_-4": (0, -4), "probe2d_38_8": (38, 8),
          "probe2d_-16_0": (-16, 0), "probe2d_0_48": (0, 48)}


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_loads_at_aligned_and_negative_coordinates_match_the_h200(engine, opt):
    for name, at in PROBES.items():
        assert np.array_equal(_ranked(engine, opt, "tma_load_box", (40, 52), (16, 32), at), H200[name]), name
    for name, at in (("probe4d_pos", (2, 3, 2, 8)), ("probe4d_neg", (2, 3, -1, 8))):
        assert np.array_equal(_ranked(engine, opt, "tma_load_box", (3, 4, 5, 12), (2, 2, 4, 4), at), H200[name])
    got = _ranked(engine, opt, "tma_store_box", (5, 6, 20), (2, 4, 8), (4, 3, 12))
    assert np.array_equal(got, H200["probe3d_store_c12"])


REFUSED = [("tma_load_box", (40, 52), (16, 32), (0, 2), "innermost coordinate 2 is 8 bytes"),
           ("tma_load_box", (40, 52), (16, 32), (0, 30), "innermost coordinate 30 is 120 bytes"),
           ("tma_load_box", (3, 4, 5, 12), (2, 2, 4, 4), (2, 3, -1, 10), "innermost coordinate 10 is 40 bytes"),
           ("tma_store_box", (5, 6, 20), (2, 4, 8), (4, -2, 16), "a tile-mode store at negative coordinates"),
           ("tma_store_box", (2, 3, 4, 5, 8), (2, 2, 2, 2, 4), (1, 2, 3, 4, 6), "innermost coordinate 6 is 24 bytes")]


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("kernel, shape, box, at, why", REFUSED, ids=[f"{r[0]}{r[3]}" for r in REFUSED])
def test_what_the_h200_refused_is_a_located_fault(engine, kernel, shape, box, at, why):
    """Each case is one the recording lacks because the H200 faulted on it (store2d_-16_0 and probe2d_0_2 among
    them)."""
    assert "probe2d_0_2" not in H200 and "store2d_-16_0" not in H200 and "load4d" not in H200
    with pytest.raises(KernelFault, match=why):
        _ranked(engine, 0, kernel, shape, box, at)


F16_SPECIAL = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0x0001, 0x8001, 0x3555, 0x4900, 0xC500,
               0x7BFF, 0x0400, 0xFE01]
BF16_SPECIAL = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0x7FA0, 0x0001, 0x8001, 0x3EAB, 0x4120, 0xC0A0,
                0x7F7F, 0x0080, 0xFFC1]
"""Zeros, ones, infinities, NaNs (quiet, signalling, negative with a payload), subnormals, the largest finite."""


def _reduce_half(engine, opt, dtype, op):
    tab = np.array(F16_SPECIAL if dtype == DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16 else BF16_SPECIAL, np.uint16)
    x, b = tab[(7 * np.arange(480)) % 16], tab[(13 * np.arange(256)) % 16]
    dev, m = module(engine, opt)
    dx, din = rt.to_device(x, dev), rt.to_device(b.view(np.uint32), dev)
    tm = encode(dtype, int(dx), (12, 40), (8, 32))
    m.get_function("tma_reduce_box").launch((1, 1, 1), (128, 1, 1), [tm, din, np.int32(128), np.int32(op),
                                                                     np.int32(24), np.int32(6)])
    return dx.copy_to_host().view(np.uint32)


def _reduce_64(engine, opt, dtype, op):
    i, j = np.arange(120, dtype=np.uint64), np.arange(64, dtype=np.uint64)
    if dtype == DT.CU_TENSOR_MAP_DATA_TYPE_INT64:
        x = ((7 * i.astype(np.int64)) % 40 - 20).view(np.uint64)
        b = ((13 * j.astype(np.int64)) % 40 - 20).view(np.uint64)
    else:
        x, b = i * np.uint64(0x9E3779B97F4A7C15), j * np.uint64(0xC2B2AE3D27D4EB4F)
    dev, m = module(engine, opt)
    dx, din = rt.to_device(x, dev), rt.to_device(b.view(np.uint32), dev)
    tm = encode(dtype, int(dx), (12, 10), (8, 8))
    m.get_function("tma_reduce_box").launch((1, 1, 1), (128, 1, 1), [tm, din, np.int32(128), np.int32(op),
                                                                     np.int32(6), np.int32(6)])
    return dx.copy_to_host().view(np.uint32)


HALF = [(f"reduce_{t}_{op}", dt, k) for k, op in enumerate(OPS[:3])
        for t, dt in (("f16", DT.CU_TENSOR_MAP_DATA_TYPE_FLOAT16), ("bf16", DT.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16))]
WIDE = [("reduce_u64_add", DT.CU_TENSOR_MAP_DATA_TYPE_UINT64, 0), ("reduce_u64_and", DT.CU_TENSOR_MAP_DATA_TYPE_UINT64, 5),
        ("reduce_u64_xor", DT.CU_TENSOR_MAP_DATA_TYPE_UINT64, 7), ("reduce_s64_min", DT.CU_TENSOR_MAP_DATA_TYPE_INT64, 1),
        ("reduce_s64_max", DT.CU_TENSOR_MAP_DATA_TYPE_INT64, 2)]


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("name, dtype, op", HALF + WIDE, ids=[r[0] for r in HALF + WIDE])
def test_half_and_64_bit_reductions_match_the_h200(engine, opt, name, dtype, op):
    """f16/bf16 add, min and max over special values (NaN payloads, signed zeros, infinities, subnormals) and
    u64/s64 reductions."""
    run = _reduce_half if (name, dtype, op) in HALF else _reduce_64
    assert np.array_equal(run(engine, opt, dtype, op), H200[name])


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_an_or_reduction_into_an_s64_map_is_a_located_fault(engine):
    """The H200 stopped it with an illegal-instruction error (the recording lacks reduce_s64_or)."""
    assert "reduce_s64_or" not in H200
    with pytest.raises(KernelFault, match=r"\.or is not supported on a tensor of s64 elements"):
        _reduce_64(engine, 0, DT.CU_TENSOR_MAP_DATA_TYPE_INT64, 6)
