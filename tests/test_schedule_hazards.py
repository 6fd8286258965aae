"""Post-RA list scheduling (xcc.backend.schedule) and the strict hazard mode that checks it and the
control codes at run time (xcc.sim.isa.hazards)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.codegen import BackendOptions, compile_function
from xcc.backend.encoding import encode_all
from xcc.backend.machine import load_machine
from xcc.backend.schedule import schedule_block
from xcc.diagnostics import KernelFault
from xcc.driver import CompileOptions, compile_module, frontend, read_source
from xcc.passes import PassManager, pipeline_for_level
from xcc.runtime.params import pack_params
from xcc.sim.isa.emulator import run_kernel

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES_BY_NAME, EXAMPLES_DIR, fma_f32, ptx_path  # noqa: E402

SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"


def _kernel(path: Path, name: str, level: int = 3):
    return compile_module([read_source(path)], CompileOptions(opt_level=level)).kernels[name]


def _saxpy_launch(kernel, strict: bool, n: int = 200):
    dev = rt.Device()
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy = rt.to_device(x, dev), rt.to_device(y, dev)
    params = pack_params(kernel, [np.int32(n), np.float32(2.5), dx, dy])
    run_kernel(kernel, 1, 256, params, dev.memory, strict=strict, timing=False)
    return dy.copy_to_host(), fma_f32(np.float32(2.5), x, y)


def test_strict_mode_catches_a_dropped_scoreboard_wait_and_a_short_stall():
    k = _kernel(SAXPY, "saxpy")
    got, want = _saxpy_launch(k, strict=True)
    np.testing.assert_array_equal(got, want)
    insts = k.instructions
    waits = [i for i, m in enumerate(insts) if m.ctrl.wait]
    assert waits
    broken = [dataclasses.replace(m, ctrl=dataclasses.replace(m.ctrl, wait=0)) for m in insts]  # no waits at all
    bad = dataclasses.replace(k, code=encode_all(broken))
    _saxpy_launch(bad, strict=False)  # the functional interpreter cannot tell ...
    with pytest.raises(KernelFault, match=r"hazard .* is read before any instruction waited on scoreboard SB\d, "
                                          r"which the (LDG|LDC|S2R)"):
        _saxpy_launch(bad, strict=True)  # ... the strict mode can
    fixed = [i for i, m in enumerate(insts) if m.d.fixed_latency and m.ctrl.stall > 1]
    if fixed:
        short = [dataclasses.replace(m, ctrl=dataclasses.replace(m.ctrl)) for m in insts]
        short[fixed[0]].ctrl.stall = 1
        with pytest.raises(KernelFault, match=r"hazard .* cycle\(s\) before the"):
            _saxpy_launch(dataclasses.replace(k, code=encode_all(short)), strict=True)


def test_scheduling_lowers_modelled_cycles_of_the_tiled_gemm():
    """The scheduler only reorders (same instructions, same results: the whole corpus runs strict in
    test_examples), and on the tiled GEMM the cycle model sees the latency it hides."""
    case = CASES_BY_NAME["gemm_tiled_f32"]
    module = frontend([read_source(ptx_path(case, "sm_80"))])
    PassManager(pipeline_for_level(3)).run(module)
    fn, machine = module.function(case.entry), load_machine("xg1")
    on, off = (compile_function(fn, machine, BackendOptions(schedule=s), module.variables) for s in (True, False))
    assert on.code != off.code and len(on.code) == len(off.code)
    assert sorted(m.mnemonic for m in on.instructions) == sorted(m.mnemonic for m in off.instructions)
    cycles = []
    for k in (on, off):
        launch = case.make(np.random.default_rng(0))
        dev = rt.Device()
        args = [rt.to_device(a, dev) if isinstance(a, np.ndarray) else a for a in launch.args]
        stats = run_kernel(k, launch.grid, launch.block, pack_params(k, args), dev.memory, machine=machine)
        for i, want in launch.expected.items():
            np.testing.assert_array_equal(args[i].copy_to_host(), want)
        cycles.append(stats.cycles)
    assert cycles[0] < cycles[1], cycles


def test_schedule_block_respects_dependences_and_is_deterministic():
    k = _kernel(EXAMPLES_DIR / "gemm_simt.sm_80.ptx", "_Z14gemm_tiled_f32iiiPKfS0_Pf")
    insts = k.instructions
    machine = load_machine("xg1")
    once = schedule_block(list(insts), machine)
    assert [id(m) for m in schedule_block(list(insts), machine)] == [id(m) for m in once]
    assert sorted(map(id, once)) == sorted(map(id, insts))
