"""mem2reg (passes/mem2reg.py): -G kernels unchanged bit for bit with their non-escaping local frames
promoted; escaping, overlapping and possibly-uninitialised (device function) variables stay in memory."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_cases import Launch
from pass_harness import (
    EXAMPLES,
    PassCase,
    assert_pass_preserves,
    build,
    build_text,
    corpus_cases,
    debug_cases,
)

from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize("case", debug_cases(one_per_file=True), ids=repr)
def test_debug_kernels_bit_identical(case):
    assert_pass_preserves("mem2reg", case)


@pytest.mark.slow
@pytest.mark.parametrize("case", debug_cases() + corpus_cases(), ids=repr)
def test_corpus_bit_identical(case):
    assert_pass_preserves("mem2reg", case)


def _locals(mod):
    return sum(1 for f in mod.functions for v in f.variables if v.space == "local")


def test_half_precision_debug_frames_promoted():
    """nvcc -G keeps every __half temporary in a local frame reached through cvta.local: the ones whose
    address stays in the function become registers."""
    path = EXAMPLES / "half_precision.sm_80.debug.ptx"
    if not path.exists():
        pytest.skip("no -G build of half_precision")
    mod = build(path)
    before = _locals(mod)
    PassManager("mem2reg", verify=True).run(mod)
    assert _locals(mod) < before // 2


def _kernel(body: str) -> str:
    return HEADER + f"""
.visible .entry k(.param .u64 out)
{{
  .local .align 8 .b8 __local_depot0[16];
  .reg .b64 %SP, %SPL;
  .reg .f32 %f<2>;
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


def _run_both(text: str, tmp_path, promoted: bool):
    path = tmp_path / "k.ptx"
    path.write_text(text)

    def make(rng):
        return Launch((1, 1, 1), (32, 1, 1), [np.full(64, 7, np.uint32)], [0], {})

    mod = assert_pass_preserves("mem2reg", PassCase("k", path, "k", make))
    assert (_locals(mod) == 0) == promoted
    return mod


def test_uninitialised_read_in_a_kernel_is_zero(tmp_path):
    _run_both(_kernel("""
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bra SKIP;
  st.local.u32 [%SPL+4], %r1;
SKIP:
  ld.local.u32 %r2, [%SPL+4];
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=True)


def test_escaping_address_stays(tmp_path):
    _run_both(_kernel("""
  st.local.u32 [%SPL], %r1;
  st.global.u64 [%rd1+128], %SP;
  ld.local.u32 %r2, [%SPL];
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=False)


def test_overlapping_accesses_stay(tmp_path):
    _run_both(_kernel("""
  st.local.u32 [%SPL], %r1;
  st.local.u32 [%SPL+4], 9;
  ld.local.u64 %rd4, [%SPL];
  cvt.u32.u64 %r2, %rd4;
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=False)


def test_narrowing_store_stays_and_dynamic_index_escapes(tmp_path):
    _run_both(_kernel("""
  st.local.u8 [%SPL], %r1;
  ld.local.u8 %r2, [%SPL];
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=False)
    _run_both(_kernel("""
  and.b32 %r3, %r1, 3;
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %SPL, %rd4;
  st.local.u32 [%rd5], %r1;
  ld.local.u32 %r2, [%SPL];
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=False)


def test_float_and_integer_views_of_one_slot(tmp_path):
    mod = _run_both(_kernel("""
  cvt.rn.f32.u32 %f1, %r1;
  st.f32 [%SP+8], %f1;
  ld.u32 %r2, [%SP+8];
  st.global.u32 [%rd3], %r2;"""), tmp_path, promoted=True)
    assert any(i.op == "mov" for i in mod.functions[0].instructions())  # the f32 -> u32 bit copy


DEVICE_UNINIT = HEADER + """
.func (.param .b32 r) f(.param .b32 a)
{
  .local .align 4 .b8 __local_depot1[4];
  .reg .b64 %SPL;
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u64 %SPL, __local_depot1;
  ld.param.u32 %r1, [a];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  st.local.u32 [%SPL], %r1;
SKIP:
  ld.local.u32 %r2, [%SPL];
  st.param.b32 [r], %r2;
  ret;
}
"""


def test_device_function_uninitialised_read_stays():
    """A device function's frame holds what an earlier call left: a read that may see unstored bytes is not
    promoted (its value is not 0)."""
    mod = build_text(DEVICE_UNINIT)
    PassManager("mem2reg", verify=True).run(mod)
    assert _locals(mod) == 1
    fixed = DEVICE_UNINIT.replace("setp.eq.u32 %p1, %r1, 0;", "st.local.u32 [%SPL], 5;\n  setp.eq.u32 %p1, %r1, 0;")
    mod = build_text(fixed)
    PassManager("mem2reg", verify=True).run(mod)
    assert _locals(mod) == 0
    phi = next(p for b in mod.functions[0].blocks for p in b.phis)
    assert sorted(a.bits if hasattr(a, "bits") else -1 for a in phi.args) == [-1, 5]


def test_call_free_param_variable_promoted_and_call_argument_kept():
    """A function-level .param variable no call names is ordinary private memory: promoted.  One a call
    names is that call's argument frame: it stays, with its store."""
    text = HEADER + """
.func (.param .b32 r) id(.param .b32 a)
{
  .reg .b32 %r<2>;
  ld.param.u32 %r1, [a];
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<4>;
  .param .b32 tmp;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  st.param.b32 [tmp], %r1;
  ld.param.b32 %r2, [tmp];
  { .param .b32 a0; st.param.b32 [a0], %r2; .param .b32 ret0;
    call.uni (ret0), id, (a0); ld.param.b32 %r3, [ret0]; }
  st.global.u32 [%rd1], %r3;
  ret;
}
"""
    mod = build_text(text)
    k = mod.function("k")
    before = sorted(v.name for v in k.variables if v.space == "param")
    PassManager("mem2reg", verify=True).run(mod)
    after = sorted(v.name for v in k.variables if v.space == "param")
    assert "tmp" in before and "tmp" not in after and len(after) == len(before) - 1
    stores = [i for i in k.instructions() if i.op == "st" and i.attrs.get("space") == "param"]
    assert len(stores) == 1  # the argument of the call
