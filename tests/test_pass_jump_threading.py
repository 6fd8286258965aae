"""jump-threading (passes/jump_threading.py): -G kernels unchanged bit for bit; a phi of constants feeding a
branch is threaded (results identical on the IR interpreter); functions with warp collectives are left
alone; the duplication is bounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernel_cases import Launch
from pass_harness import PassCase, assert_pass_preserves, build_text, corpus_cases, debug_cases

from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
GOLDEN = Path(__file__).parent / "golden" / "jump_threading.ptx"


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("jump-threading", case, before="simplifycfg")


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("jump-threading", case, before="simplifycfg")


def _launch(rng):
    return Launch((1, 1, 1), (64, 1, 1), [np.zeros(4, np.uint32), np.uint32(40)], [0], {})


def test_golden_kernel_runs_the_same():
    mod = assert_pass_preserves("jump-threading,simplifycfg,dce", PassCase("jt", GOLDEN, "jump_threading", _launch))
    names = [b.name for b in mod.functions[0].blocks]
    assert "L__J" not in names


LOOP_FLAG = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, 0;          // found = 0
  mov.u32 %r4, 0;          // i
LOOP:
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra DONE;           // found: leave (a phi of constants on the edges into LOOP)
  add.u32 %r4, %r4, 1;
  mul.lo.u32 %r5, %r4, %r4;
  setp.gt.u32 %p2, %r5, %r2;
  selp.u32 %r3, 1, 0, %p2;
  @%p2 bra SET;
  setp.lt.u32 %p3, %r4, %r1;
  @%p3 bra LOOP;
  bra.uni DONE;
SET:
  mov.u32 %r3, 1;
  bra.uni LOOP;
DONE:
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""


def test_loop_exit_flag_threaded(tmp_path):
    path = tmp_path / "flag.ptx"
    path.write_text(LOOP_FLAG)

    def make(rng):
        return Launch((1, 1, 1), (64, 1, 1), [np.zeros(64, np.uint32), np.uint32(6)], [0], {})

    mod = assert_pass_preserves("jump-threading", PassCase("flag", path, "k", make), before="simplifycfg")
    assert any(".from." in b.name for b in mod.functions[0].blocks)


def test_warp_collectives_block_threading():
    text = GOLDEN.read_text().replace("st.global.u32 \t[%rd1+4], %r2;",
                                      "shfl.sync.down.b32 %r5, %r2, 1, 31, -1;\n\tst.global.u32 [%rd1+4], %r5;")
    text = text.replace(".reg .b32 \t%r<10>;", ".reg .b32 \t%r<10>;")
    assert "shfl" in text
    mod = build_text(text)
    PassManager("jump-threading", verify=True).run(mod)
    assert not any(".from." in b.name for b in mod.functions[0].blocks)


def test_duplication_bounded():
    mod = build_text(GOLDEN.read_text())
    PassManager("jump-threading{max-dup=0}", verify=True).run(mod)
    assert not any(".from." in b.name for b in mod.functions[0].blocks)
    mod = build_text(GOLDEN.read_text())
    PassManager("jump-threading{max-threads=1}", verify=True).run(mod)
    assert sum(".from." in b.name for b in mod.functions[0].blocks) == 1


# found by tests/test_pass_random_cfg.py: B4 (a phi of the counter it increments) is threaded from B1 to B3,
# whose only predecessor was B4; B3 then reaches B4 again through the copy without passing B4, so the phi's
# operand on the edge from B3 (defined in B4) would no longer be dominated
_LOOP_BACK_INTO_B = '.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n  .local .align 4 .b8 __local_depot0[16];\n  .reg .b64 %SP, %SPL;\n  .reg .pred %p<3>;\n  .reg .b32 %r<4>;\n  .reg .b32 %c<1>;\n  .reg .b64 %rd<4>;\n  mov.u64 %SPL, __local_depot0;\n  cvta.local.u64 %SP, %SPL;\n  ld.param.u64 %rd1, [out];\n  mov.u32 %c0, 0;\n  mov.u32 %r0, %tid.x;\n  mul.lo.u32 %r1, %r0, -7;\n  mov.u32 %r2, 5;\n  xor.b32 %r3, %r0, 12;\n  mul.wide.u32 %rd2, %r0, 16;\n  add.s64 %rd3, %rd1, %rd2;\nB0:\n  setp.lt.u32 %p2, %r0, 0;\n  @%p2 bra B1;\nB1:\n  add.u32 %r0, %r0, 0;\n  bra.uni B4;\nB2:\n  add.u32 %r0, %r0, 0;\n  add.u32 %c0, %c0, 1;\n  setp.lt.u32 %p0, %c0, 3;\n  @%p0 bra B0;\n  setp.lt.u32 %p2, %r0, 0;\n  @%p2 bra B3;\nB3:\n  setp.lt.u32 %p2, %r0, 0;\n  @%p2 bra B4;\nB4:\n  add.u32 %c0, %c0, 1;\n  setp.lt.u32 %p0, %c0, 3;\n  @%p0 bra B3;\n  setp.lt.u32 %p2, %r0, 0;\n  @%p2 bra B5;\nB5:\n  st.global.u32 [%rd3+0], %r0;\n  st.global.u32 [%rd3+4], %r1;\n  st.global.u32 [%rd3+8], %r2;\n  st.global.u32 [%rd3+12], %r3;\n  ret;\n}\n'


def test_no_threading_when_the_target_region_loops_back_into_the_block():
    mod = build_text(_LOOP_BACK_INTO_B)
    PassManager("jump-threading", verify=True).run(mod)  # the verifier raised before
    assert not any(".from." in b.name for fn in mod.functions for b in fn.blocks if b.name.startswith("B4"))
