"""The loop and redundancy passes together on every kernel case, plain and -G builds (slow tier): the IR
interpreter's outputs are bit-identical with and without them, and the numpy references hold."""

from __future__ import annotations

import pytest
from kernel_cases import ALL_CASES, DEBUG_CASES
from pass_check import check_pass_on_case

PIPELINE = "gvn,licm,addrfold,indvars,unroll,gvn,vectorize,dce"
SWEEP = [c.name for c in ALL_CASES + DEBUG_CASES if not c.xfail]


@pytest.mark.slow
@pytest.mark.parametrize("name", SWEEP)
def test_pipeline_keeps_results(name):
    check_pass_on_case(name, PIPELINE)


@pytest.mark.parametrize("stem", ["gemm_simt.sm_80.debug", "scan_sort.sm_80", "triton/matmul.sm_80"])
def test_pipeline_is_deterministic_and_verifies(stem):
    from kernel_cases import EXAMPLES_DIR
    from pass_check import build

    from xcc.ir.printer import print_module
    from xcc.passes import PassManager

    once, twice = (print_module(PassManager(PIPELINE, verify=True).run(build(EXAMPLES_DIR / f"{stem}.ptx")))
                   for _ in range(2))
    assert once == twice
