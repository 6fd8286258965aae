"""Issue 19: the launch's special registers ``%gridid``, ``%current_graph_exec``, ``%total_smem_size`` and
``%aggr_smem_size`` (PTX ISA, "Special Registers") on both engines at -O0 and -O3.

What xcc gives (docs/semantics.md): ``%gridid`` is the process's launch counter (launch n has n, from 1), so
every launch has its own; ``%current_graph_exec`` is the handle of the executable graph whose kernel node runs
(``cuGraphLaunch``), 0 for a launch outside a graph; ``%total_smem_size`` is the CTA's static plus dynamic shared
memory rounded up to the allocation unit of sm_8x/sm_9x, 128 bytes (the manual's table); ``%aggr_smem_size``
adds the reserved shared memory, none in xcc.  The kernel (data/launch_sregs, ptxas-clean for sm_90a) has 100
bytes of static shared memory and an ``.extern`` array aligned to 16, so the dynamic part starts at byte 112."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.runtime import driver as cuda

sys.path.insert(0, str(Path(__file__).parent))
from test_driver_api import check  # noqa: E402

PTX = Path(__file__).parent / "data" / "launch_sregs" / "launch_sregs.sm_90a.ptx"
STATIC = 112  # sbuf's 100 bytes, then the .extern array at the next multiple of its alignment, 16


def _expected_total(dynamic: int) -> int:
    """The manual's rule: static + dynamic, a multiple of the 128-byte allocation unit."""
    return (STATIC + dynamic + 127) // 128 * 128


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("opt", [0, 3])
def test_shared_memory_sizes_and_distinct_grid_ids(engine, opt):
    dev = rt.Device()
    out = rt.zeros(8, np.uint32, dev)
    f = rt.load_module(PTX.read_text(), device=dev, engine=engine, opt_level=opt).get_function("k")
    ids = []
    for dynamic in (16, 17, 144):
        f.launch((1, 1, 1), (1, 1, 1), [out], shared_mem=dynamic)
        got = out.copy_to_host()
        gridid, graph_exec = got[:4].view(np.uint64).tolist()
        ids.append(gridid)
        total = _expected_total(dynamic)
        assert graph_exec == 0  # not launched by a graph
        assert got[4:].tolist() == [total, total, dynamic, total]
    assert len(set(ids)) == 3 and ids == sorted(ids)  # a distinct id per launch


def test_graph_launch_sees_its_executable_graph():
    check(cuda.cuInit(0))
    ctx = check(cuda.cuCtxCreate(None, 0, check(cuda.cuDeviceGet(0))))
    try:
        mod = check(cuda.cuModuleLoadData(PTX.read_bytes()))
        kernel = check(cuda.cuModuleGetFunction(mod, b"k"))
        d_out = check(cuda.cuMemAlloc(32))
        s = check(cuda.cuStreamCreate(0))
        params = ((d_out,), (None,))
        check(cuda.cuStreamBeginCapture(s, 0))
        check(cuda.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 16, s, params, 0))
        exe = check(cuda.cuGraphInstantiate(check(cuda.cuStreamEndCapture(s)), 0))
        out = np.zeros(8, np.uint32)
        check(cuda.cuGraphLaunch(exe, s))
        check(cuda.cuStreamSynchronize(s))
        check(cuda.cuMemcpyDtoH(out, d_out, 32))
        assert out[:4].view(np.uint64)[1] == int(exe) != 0
        check(cuda.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 16, s, params, 0))  # outside the graph again
        check(cuda.cuStreamSynchronize(s))
        check(cuda.cuMemcpyDtoH(out, d_out, 32))
        assert out[:4].view(np.uint64)[1] == 0
    finally:
        cuda.cuCtxDestroy(ctx)
