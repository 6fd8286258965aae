"""The ``nvcc -G`` builds of the examples (``examples/<stem>.sm_80.debug.ptx``, the Makefile's PTX_DEBUG).

-G PTX is unoptimised: every local lives in a register copied through ``mov`` chains, the intrinsics
(``__shfl_xor_sync``, ``fmaxf``, ...) are calls to ``.func`` wrappers, and no ``a * b + c`` is contracted
into ``fma``. Every kernel case whose stem has a -G build (``kernel_cases.DEBUG_CASES``) runs on it with the
same launch and a numpy reference that rounds like -G: on the IR interpreter against numpy, and compiled by
the xg1 backend on the ISA interpreter against numpy and, bit for bit, against the IR interpreter.

Fast tier: the first case of each -G file at -O3 that is not a known failure (async_copy's 600 KB file
only in the slow tier); slow
tier: the other cases, and -O0 to -O2. Known failures are ``kernel_cases.DEBUG_XFAIL`` /
``DEBUG_IR_XFAIL`` (strict xfail, with the reason).
"""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import run_case  # noqa: E402
from kernel_cases import DEBUG_CASES, DEBUG_IR_XFAIL, EXAMPLES_DIR  # noqa: E402
from test_ir_interpreter import assert_same, run_case_ir  # noqa: E402

from xcc import runtime as rt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SLOW_FILES = {"async_copy.sm_80.debug.ptx"}  # 600 KB of -G PTX: about 8 s to parse each time


def _fast(case) -> bool:
    """The first case of its -G file that is not a known failure (those run in the slow tier; the reduced
    reproducers below run in the fast one)."""
    first = next(c for c in DEBUG_CASES if c.ptx_file == case.ptx_file and not c.xfail)
    return case is first and case.ptx_file not in SLOW_FILES


FIXED_FROM_LEVEL = {"softmax_rows_debug": 2, "attention_row_debug": 0, "cp_async_pipeline_debug": 3}
"""Known failures the optimiser removes from this -O level on: -O2 inlines the device function whose call keeps
the warp from reconverging; -O3's inlining and global DCE leave cuda::pipeline's kernel few enough .global
variables for constant bank 0.  attention_row_debug runs right at every level: xg1 reconverges after the loop
(per-frame convergence barriers), and since a shuffle from a lane outside the member mask reads 0 (the H200's
rule, docs/semantics.md) the IR interpreter's lone-lane shuffles give the same results too (softmax_rows_debug's
still differ there)."""


def _params(xfails: dict[str, str] | None, fast: bool | None, levels=(3,)) -> list:
    """(case) params (``(case, level)`` when several ``levels``): ``fast`` True -> the fast tier, False -> the
    others marked slow, None -> every case marked slow; xfail from ``xfails`` (or from ``case.xfail`` where
    ``xfails`` is None) unless the level is one the optimiser fixes it at (:data:`FIXED_FROM_LEVEL`)."""
    out = []
    for case in DEBUG_CASES:
        if fast is not None and _fast(case) != fast:
            continue
        for level in levels:
            reason = case.xfail if xfails is None else xfails.get(case.name)
            if level >= FIXED_FROM_LEVEL.get(case.name, 99):
                reason = None
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            if fast is not True:
                marks.append(pytest.mark.slow)
            values = case if len(levels) == 1 else (case, level)
            out.append(pytest.param(*([values] if len(levels) == 1 else values), marks=marks,
                                    id=case.name if len(levels) == 1 else f"{case.name}-O{level}"))
    return out


def check_ir_reference(case, level: int) -> dict:
    _, got, launch = run_case_ir(case, "sm_80", level)
    for i, want in launch.expected.items():
        assert_same(case, got[i], want, f"{case.name} -O{level} arg {i} (IR interpreter)", reference=True)
    return got


def check_isa(case, level: int) -> None:
    """The compiled -G kernel against numpy and, bit for bit (``case.rtol`` for float atomics), the IR
    interpreter at the same level."""
    _, got, launch = run_case(case, "sm_80", level)
    for i, want in launch.expected.items():
        assert_same(case, got[i], want, f"{case.name} -O{level} arg {i} (ISA interpreter)", reference=True)
    _, ir_got, _ = run_case_ir(case, "sm_80", level)
    for i in ir_got:
        assert_same(case, got[i], ir_got[i], f"{case.name} -O{level} arg {i}: ISA vs IR interpreter")


@pytest.mark.parametrize("case", _params(DEBUG_IR_XFAIL, True) + _params(DEBUG_IR_XFAIL, False))
def test_debug_build_on_ir_interpreter(case):
    check_ir_reference(case, 3)


@pytest.mark.parametrize("case", _params(None, True) + _params(None, False))
def test_debug_build_compiled(case):
    assert "isa" in case.engines
    check_isa(case, 3)


@pytest.mark.parametrize("case, level", _params(None, None, (0, 1, 2)))
def test_debug_build_compiled_other_levels(case, level):
    check_isa(case, level)


def test_debug_files_are_the_makefiles_and_nvcc_G_builds():
    """PTX_DEBUG names exactly the committed .debug.ptx files, each a -G build (``.target sm_80, debug``) of
    its .cu; every stem of PTX_DEBUG with a kernel case has debug cases."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    stems = set(re.search(r"^PTX_DEBUG\s*:=(.*)$", text, re.M).group(1).split())
    files = {p.name.removesuffix(".sm_80.debug.ptx") for p in EXAMPLES_DIR.glob("*.sm_80.debug.ptx")}
    assert stems == files
    for stem in stems:
        assert (EXAMPLES_DIR / f"{stem}.cu").exists(), stem
        assert re.search(r"^\.target sm_80, debug$", (EXAMPLES_DIR / f"{stem}.sm_80.debug.ptx").read_text(), re.M)
    assert len(stems) >= 12
    assert {c.ptx_file for c in DEBUG_CASES} >= {f"{s}.sm_80.debug.ptx" for s in ("saxpy", "transformer_ops",
                                                                                   "gemm_simt", "warp_vote")}


# ---------------------------------------------------------------- the reconvergence finding, reduced
# A while loop (exit test at the top) whose body calls a function; lanes < 13 run it twice, the others once;
# then a full-warp butterfly sum of the trip counts. shfl.sync with membermask -1 makes every lane wait for
# all 32 (PTX ISA 9.0, shfl.sync: "causes executing thread to wait until all non-exited threads corresponding
# to membermask have executed shfl.sync"), so every lane must read 13 * 2 + 19 = 45. ptxas accepts it.
_LOOP_THEN_SHFL = """
.version 8.0
.target sm_80
.address_size 64

.func (.param .b32 r) id_f(.param .b32 a)
{
    .reg .b32 %x;
    ld.param.b32 %x, [a];
    st.param.b32 [r], %x;
    ret;
}

.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r3, %r1;
L_loop:
    EXIT_TEST
    BODY
    add.s32 %r2, %r2, 1;
    add.s32 %r3, %r3, 32;
    bra.uni L_loop;
L_done:
    shfl.sync.bfly.b32 %r4, %r2, 16, 31, -1;
    add.s32 %r2, %r2, %r4;
    shfl.sync.bfly.b32 %r4, %r2, 8, 31, -1;
    add.s32 %r2, %r2, %r4;
    shfl.sync.bfly.b32 %r4, %r2, 4, 31, -1;
    add.s32 %r2, %r2, %r4;
    shfl.sync.bfly.b32 %r4, %r2, 2, 31, -1;
    add.s32 %r2, %r2, %r4;
    shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
    add.s32 %r2, %r2, %r4;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""
_CALL = """{
    .param .b32 p0;
    st.param.b32 [p0], %r2;
    .param .b32 rv;
    call.uni (rv), id_f, (p0);
    ld.param.b32 %r2, [rv];
    }"""


_EXIT = "setp.ge.s32 %p1, %r3, 45;\n    @%p1 bra L_done;"
_EXIT_NEGATED = "setp.lt.s32 %p1, %r3, 45;\n    @!%p1 bra L_done;"


def _loop_then_shfl(body: str, engine: str, exit_test: str = _EXIT) -> np.ndarray:
    device = rt.Device()
    out = rt.to_device(np.zeros(32, np.int32), device)
    ptx = _LOOP_THEN_SHFL.replace("BODY", body).replace("EXIT_TEST", exit_test)
    # -O0: the engines' own reconvergence, with the call kept (-O2 up inline it, and the kernel then runs right)
    rt.load_module(ptx, device=device, engine=engine, opt_level=0).get_function("k").launch(
        (1, 1, 1), (32, 1, 1), [out])
    return out.copy_to_host()


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_warp_reconverges_after_a_divergent_loop(engine):
    np.testing.assert_array_equal(_loop_then_shfl("", engine), np.full(32, 45, np.int32))


@pytest.mark.parametrize("engine", [
    pytest.param("ir", marks=pytest.mark.xfail(strict=True, reason="the IR interpreter does not reconverge the "
                                                                     "warp after a loop that exits by @!%p bra")),
    "isa"])
def test_warp_reconverges_after_a_divergent_loop_with_a_negated_exit(engine):
    np.testing.assert_array_equal(_loop_then_shfl("", engine, _EXIT_NEGATED), np.full(32, 45, np.int32))


@pytest.mark.parametrize("engine", [
    pytest.param("ir", marks=pytest.mark.xfail(strict=True, reason="no reconvergence after a divergent loop whose "
                                                                     "body calls a function (softmax_rows_debug)")),
    "isa"])  # xg1: the caller's convergence barrier counts the threads inside the call (per-frame barriers)
def test_warp_reconverges_after_a_divergent_loop_with_a_call(engine):
    np.testing.assert_array_equal(_loop_then_shfl(_CALL, engine), np.full(32, 45, np.int32))
