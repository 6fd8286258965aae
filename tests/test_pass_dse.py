"""dse (passes/dse.py): -G kernels unchanged bit for bit; stores never read again or overwritten in their
block go, stores a later path, a loop's next iteration, a call or an unknown pointer may read stay."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_cases import Launch
from pass_harness import PassCase, assert_pass_preserves, build_text, corpus_cases, debug_cases

from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("dse", case)


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("dse", case)


def _kernel(body: str) -> str:
    return HEADER + f"""
.visible .entry k(.param .u64 out)
{{
  .local .align 8 .b8 __local_depot0[16];
  .reg .b64 %SP, %SPL;
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
{body}
  ret;
}}
"""


def _stores(mod) -> list:
    return [(i.args[1].bits if hasattr(i.args[1], "bits") else "v") for f in mod.functions for i in f.instructions()
            if i.op == "st" and i.attrs.get("space") in ("local", "generic")]


def _check(text: str, tmp_path) -> list:
    path = tmp_path / "k.ptx"
    path.write_text(text)

    def make(rng):
        return Launch((1, 1, 1), (32, 1, 1), [np.full(64, 7, np.uint32)], [0], {})

    return _stores(assert_pass_preserves("dse", PassCase("k", path, "k", make)))


def test_loop_carried_store_stays(tmp_path):
    """The store at the bottom of the loop is read at the top of the next iteration; the one after the loop
    is never read."""
    got = _check(_kernel("""
  st.local.u32 [%SPL], 0;
  mov.u32 %r2, 0;
LOOP:
  ld.local.u32 %r3, [%SPL];
  add.u32 %r4, %r3, %r1;
  st.local.u32 [%SPL], %r4;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 4;
  @%p1 bra LOOP;
  st.global.u32 [%rd3], %r4;
  st.local.u32 [%SPL], 99;"""), tmp_path)
    assert got == [0, "v"]


def test_partial_overlap_keeps_the_store(tmp_path):
    """A 64-bit load reads the bytes of both 32-bit stores; a later 32-bit store covers only one."""
    got = _check(_kernel("""
  st.local.u32 [%SPL], 1;
  st.local.u32 [%SPL+4], 2;
  ld.local.u64 %rd4, [%SPL];
  st.local.u32 [%SPL+4], 3;
  cvt.u32.u64 %r2, %rd4;
  st.global.u32 [%rd3], %r2;
  ld.local.u32 %r5, [%SPL+4];
  st.global.u32 [%rd1+128], %r5;"""), tmp_path)
    assert got == [1, 2, 3]


def test_one_arm_reads(tmp_path):
    """Read on one path only: the store stays; overwritten on both paths before any read: it goes."""
    got = _check(_kernel("""
  st.local.u32 [%SPL], 5;
  st.local.u32 [%SPL+8], 6;
  setp.lt.u32 %p1, %r1, 9;
  @%p1 bra A;
  st.local.u32 [%SPL+8], 7;
  ld.local.u32 %r2, [%SPL];
  bra.uni J;
A:
  st.local.u32 [%SPL+8], 8;
  mov.u32 %r2, 1;
J:
  ld.local.u32 %r3, [%SPL+8];
  add.u32 %r4, %r2, %r3;
  st.global.u32 [%rd3], %r4;"""), tmp_path)
    assert got == [5, 7, 8]


def test_call_reads_the_argument_frame():
    """A .param variable a call names is its argument: never a candidate, and a call clears the candidates."""
    text = HEADER + """
.func (.param .b32 r) f(.param .b64 p)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.u32 %r1, [%rd1];
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .local .align 4 .b8 __local_depot0[4];
  .reg .b64 %SP, %SPL, %rd<2>;
  .reg .b32 %r<3>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd1, [out];
  st.local.u32 [%SPL], 1;
  { .param .b64 a; st.param.b64 [a], %SP; .param .b32 ret0;
    call.uni (ret0), f, (a); ld.param.b32 %r1, [ret0]; }
  st.local.u32 [%SPL], 2;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
    mod = build_text(text)
    PassManager("dse", verify=True).run(mod)
    assert _stores(mod) == [1, 2]


def test_device_function_frame_survives_return():
    """A device function's last store is what the next call's frame holds: it stays."""
    text = HEADER + """
.func (.param .b32 r) f(.param .b32 a)
{
  .local .align 4 .b8 __local_depot1[4];
  .reg .b64 %SPL;
  .reg .b32 %r<3>;
  mov.u64 %SPL, __local_depot1;
  ld.param.u32 %r1, [a];
  ld.local.u32 %r2, [%SPL];
  st.local.u32 [%SPL], %r1;
  st.param.b32 [r], %r2;
  ret;
}
"""
    mod = build_text(text)
    PassManager("dse", verify=True).run(mod)
    assert _stores(mod) == ["v"]
