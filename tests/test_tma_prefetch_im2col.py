"""cp.async.bulk.prefetch.tensor.Nd.L2.global.im2col (3d-5d) on both engines (issue 19; PTX ISA 9.7.9.25.5.3):
a prefetch moves no data, so what is observable is the check of its operands - the tensor map must be one made
by cuTensorMapEncodeIm2col of the copy's rank (a located fault otherwise), and the kernel goes on.
tests/data/runtime/tma_prefetch_im2col.ptx is hand-written and ptxas-clean for sm_90a."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.runtime import driver as cuda

PTX = Path(__file__).resolve().parent / "data" / "runtime" / "tma_prefetch_im2col.ptx"
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
U32 = cuda.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32


def _dims(rank):
    dims = [8] + [4] * (rank - 2) + [2]  # C innermost, then the spatial dims, then N
    return dims, [int(np.prod(dims[:d + 1])) * 4 for d in range(rank - 1)]


def _im2col_map(ptr, rank):
    assert cuda.cuInit(0)[0] == 0
    dims, strides = _dims(rank)
    k = rank - 2
    err, tm = cuda.cuTensorMapEncodeIm2col(U32, rank, ptr, dims, strides, [-1] * k, [-1] * k, 8, 16, [1] * rank,
                                           0, 0, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def _tiled_map(ptr, rank):
    assert cuda.cuInit(0)[0] == 0
    dims, strides = _dims(rank)
    err, tm = cuda.cuTensorMapEncodeTiled(U32, rank, ptr, dims, strides, [4] * rank, [1] * rank, 0, 0, 0, 0)
    assert err == 0, cuda.last_error_message()
    return bytes(tm)


def _run(engine, opt, rank, make):
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    x = rt.zeros(int(np.prod(_dims(rank)[0])), np.uint32, dev)
    out = rt.zeros(1, np.uint32, dev)
    m.get_function(f"prefetch_i2c_{rank}d").launch((1, 1, 1), (32, 1, 1), [make(int(x), rank), out])
    return out.copy_to_host()[0]


@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_an_im2col_prefetch_checks_the_map_and_moves_nothing(engine, opt, rank):
    assert _run(engine, opt, rank, _im2col_map) == 1


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_an_im2col_prefetch_through_a_tiled_map_is_a_located_fault(engine):
    with pytest.raises(KernelFault, match="an im2col copy through a tensor map made by cuTensorMapEncodeTiled") as e:
        _run(engine, 3, 3, _tiled_map)
    assert "prefetch.tensor.3d.L2.global.im2col" in PTX.read_text().splitlines()[e.value.line - 1]
