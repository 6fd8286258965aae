"""simplifycfg (passes/simplifycfg.py): every -G kernel computes the same bits after it, the chains of
empty blocks are gone, and the phi-sensitive cases (forwarding into a block that the predecessor already
reaches) stay correct."""

from __future__ import annotations

import pytest
from pass_harness import assert_pass_preserves, build_text, corpus_cases, debug_cases

from xcc.ir.printer import print_module
from xcc.ir.verifier import verify_module
from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    before = sum(len(f.blocks) for f in build_text(case.path.read_text()).functions)
    mod = assert_pass_preserves("simplifycfg", case)
    after = sum(len(f.blocks) for f in mod.functions)
    assert after < before
    for fn in mod.functions:  # no empty forwarding block is left (the entry, and ones that phis need, aside)
        assert not [b for b in fn.blocks[1:] if not b.phis and len(b.instructions) == 1
                    and b.instructions[0].op == "br" and not b.instructions[0].targets[0].phis], fn.name


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("simplifycfg", case)


DISAGREE = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 7;
  mov.u32 %r2, 10;
  @%p1 bra JOIN;
  mov.u32 %r2, 20;
  bra.uni MID;
MID:
  bra.uni JOIN;
JOIN:
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def test_forwarding_keeps_disagreeing_phis():
    """entry -> JOIN and entry -> bb -> MID -> JOIN with different phi values: MID may merge into its
    predecessor, but the two edges from one block into JOIN must not carry different values."""
    mod = build_text(DISAGREE)
    PassManager("simplifycfg", verify=True).run(mod)
    fn = mod.functions[0]
    join = next(b for b in fn.blocks if b.phis)
    assert len(join.preds) == 2 and join.preds[0] is not join.preds[1]
    vals = sorted(a.bits for a in join.phis[0].args)
    assert vals == [10, 20]


def test_unreachable_blocks_and_constant_branches_go():
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  setp.eq.u32 %p1, 1, 1;
  mov.u32 %r1, 3;
  @%p1 bra DONE;
  mov.u32 %r1, 4;
DONE:
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
    mod = build_text(text)
    PassManager("constfold,simplifycfg", verify=True).run(mod)
    fn = mod.functions[0]
    assert len(fn.blocks) == 1
    st = next(i for i in fn.instructions() if i.op == "st")
    assert st.args[1].bits == 3


def test_deterministic_and_idempotent():
    path = debug_cases()[0].path
    a, b = build_text(path.read_text()), build_text(path.read_text())
    PassManager("simplifycfg", verify=True).run(a)
    PassManager("simplifycfg", verify=True).run(b)
    assert print_module(a) == print_module(b)
    PassManager("simplifycfg", verify=True).run(a)
    verify_module(a)
    assert print_module(a) == print_module(b)
