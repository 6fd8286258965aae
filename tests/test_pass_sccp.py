"""sccp (passes/sccp.py): every -G kernel computes the same bits after it; constants found through phis on
executable edges only; never-taken edges and unreachable blocks removed; the IR verifies."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_cases import Launch
from pass_check import refuse_rsqrt
from pass_harness import PassCase, assert_pass_preserves, build_text, corpus_cases, debug_cases, run_outputs

from xcc.ir.core import Const
from xcc.ir.printer import print_module
from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("sccp", case, before="simplifycfg")


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("sccp", case)


# A switch-like chain: k = 2 is known, so only one arm is live; the unknown tid keeps its arithmetic.
CHAIN = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 2;
  setp.eq.u32 %p1, %r2, 1;
  @%p1 bra ONE;
  setp.eq.u32 %p2, %r2, 2;
  @%p2 bra TWO;
  mov.u32 %r3, 300;
  bra.uni DONE;
ONE:
  mov.u32 %r3, 100;
  bra.uni DONE;
TWO:
  mul.lo.u32 %r4, %r2, 100;
  mov.u32 %r3, %r4;
  bra.uni DONE;
DONE:
  add.u32 %r5, %r3, %r1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  st.global.u32 [%rd1+256], %r3;
  ret;
}
"""


def test_dead_arms_removed_and_constant_through_phi(tmp_path):
    mod = build_text(CHAIN)
    PassManager("sccp", verify=True).run(mod)
    fn = mod.functions[0]
    assert not any(i.op == "cbr" for i in fn.instructions()), print_module(mod)
    assert not any(b.phis for b in fn.blocks)
    stores = [i for i in fn.instructions() if i.op == "st"]
    assert isinstance(stores[1].args[1], Const) and stores[1].args[1].bits == 200
    path = tmp_path / "chain.ptx"
    path.write_text(CHAIN)

    def make(rng):
        return Launch((1, 1, 1), (32, 1, 1), [np.zeros(65, np.uint32)], [0], {})

    case = PassCase("chain", path, "k", make)
    got = run_outputs(mod, case)[0]
    assert list(got[:32]) == [200 + t for t in range(32)] and got[64] == 200
    assert_pass_preserves("sccp", case)


def test_same_target_constant_branch_keeps_preds_consistent():
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  setp.eq.u32 %p1, 1, 1;
  @%p1 bra J;
J:
  st.global.u32 [%rd1], 1;
  ret;
}
"""
    mod = build_text(text)
    PassManager("sccp,simplifycfg", verify=True).run(mod)
    assert len(mod.functions[0].blocks) == 1


def test_unfoldable_operations_stay(monkeypatch):
    """An operation whose semantics refuse to evaluate (UnsupportedError; stood in for here by rsqrt, which
    folds since issue 19) stays for run time: sccp leaves it BOTTOM, as constfold does."""
    refuse_rsqrt(monkeypatch)
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .f64 %fd<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  rsqrt.approx.f64 %fd1, 0d4000000000000000;
  add.f64 %fd2, %fd1, 0d3FF0000000000000;
  st.global.f64 [%rd1], %fd2;
  ret;
}
"""
    mod = build_text(text)
    PassManager("sccp", verify=True).run(mod)
    assert [i.op for i in mod.functions[0].instructions()] == ["ld_param", "rsqrt", "add", "st", "ret"]


def test_absorbing_operands_make_constants():
    """and with false (0), or with true (all ones), mul.lo by 0 are constant whatever the other operand."""
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<6>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 5;
  setp.eq.u32 %p2, 0, 1;
  and.pred %p3, %p1, %p2;
  @%p3 bra NEVER;
  mul.lo.u32 %r2, %r1, 0;
  or.b32 %r3, %r1, -1;
  st.global.u32 [%rd1], %r2;
  st.global.u32 [%rd1+4], %r3;
  ret;
NEVER:
  st.global.u32 [%rd1+8], %r1;
  ret;
}
"""
    mod = build_text(text)
    PassManager("sccp,dce", verify=True).run(mod)
    fn = mod.functions[0]
    assert "NEVER" not in [b.name for b in fn.blocks] and not any(i.op == "cbr" for i in fn.instructions())
    stores = [i.args[1] for i in fn.instructions() if i.op == "st"]
    assert [(isinstance(v, Const), getattr(v, "bits", None)) for v in stores] == [(True, 0), (True, 0xFFFFFFFF)]
