"""The scalar passes together (issue 15, group A): simplifycfg, mem2reg, sccp, copyprop, instcombine, dse,
jump-threading, then dce and simplifycfg.  -G kernels compute the same bits on the IR interpreter, shrink,
and the backend compiles the result: the backend's kernel cases match their numpy references on the ISA
interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_cases import CASES, ptx_path
from pass_harness import assert_pass_preserves, build, corpus_cases, debug_cases

from xcc import runtime as rt
from xcc.passes import PassManager

PIPELINE = "simplifycfg,mem2reg,sccp,copyprop,instcombine,dse,jump-threading,dce,simplifycfg"
ISA_SAMPLE = ["saxpy", "collatz_steps", "bit_ops_u64", "dnorm_i64", "scan_warp", "llvm_row_xor_sum"]


def _size(mod) -> tuple[int, int]:
    return (sum(len(f.blocks) for f in mod.functions),
            sum(len(b.instructions) + len(b.phis) for f in mod.functions for b in f.blocks))


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical_and_smaller(case):
    blocks0, insts0 = _size(build(case.path))
    mod = assert_pass_preserves(PIPELINE, case)
    blocks1, insts1 = _size(mod)
    assert blocks1 < blocks0 and insts1 < insts0


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves(PIPELINE, case)


def _isa(case):
    device = rt.Device()
    launch = case.make(np.random.default_rng(0))
    mod = rt.load_module(ptx_path(case, case.default_arch), device=device, passes=PIPELINE)
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    mod.get_function(case.entry).launch(launch.grid, launch.block, args, case.shared_mem, timing=False)
    for i, want in launch.expected.items():
        got = args[i].copy_to_host()
        if case.rtol or case.atol:
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
        else:
            np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("name", ISA_SAMPLE)
def test_backend_compiles_the_result(name):
    _isa(next(c for c in CASES if c.name == name))


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if not c.xfail], ids=repr)
def test_backend_cases_on_the_isa_interpreter(case):
    _isa(case)


def test_pipeline_is_deterministic():
    path = debug_cases(one_per_file=True)[0].path
    a, b = build(path), build(path)
    PassManager(PIPELINE, verify=True).run(a)
    PassManager(PIPELINE, verify=True).run(b)
    from xcc.ir.printer import print_module

    assert print_module(a) == print_module(b)
