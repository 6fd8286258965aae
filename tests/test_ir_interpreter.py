"""The IR interpreter (the semantic oracle): corpus kernels against numpy and against the ISA interpreter,
and small PTX kernels for divergence, loops, barriers, shuffles, votes and located faults."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, UnsupportedError
from xcc.ir.core import Instruction
from xcc.runtime.ir_engine import build_ir, launch_ptx, load_module_ir
from xcc.sim.ir.interpreter import run_function

sys.path.insert(0, str(Path(__file__).parent))
from harness import run_case  # noqa: E402
from kernel_cases import ALL_CASES, CASES, IR_ONLY_CASES, case_params, ptx_path  # noqa: E402

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def run_case_ir(case, arch: str, opt_level: int, seed: int = 0, device: rt.Device | None = None):
    """``harness.run_case`` on the IR interpreter: (stats, {arg index: host array}, launch)."""
    device = device or rt.Device()
    launch = case.make(np.random.default_rng(seed))
    mod = load_module_ir(ptx_path(case, arch), opt_level=opt_level, device=device)
    dev_args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    stats = mod.get_function(case.entry).launch(launch.grid, launch.block, dev_args, case.shared_mem)
    return stats, {i: dev_args[i].copy_to_host() for i in launch.outputs}, launch


def assert_same(case, got, want, what: str, reference: bool = False) -> None:
    """The harness's rule: bit for bit, or within ``case.rtol`` where atomic order changes rounding (and,
    against a numpy ``reference``, within ``case.atol`` for math-library results)."""
    if case.rtol or reference and case.atol:
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol if reference else 0, err_msg=what)
    else:
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                      np.ascontiguousarray(want).view(np.uint8), err_msg=what)


def check_reference(case, arch: str, level: int) -> None:
    _, got, launch = run_case_ir(case, arch, level)
    for i, want in launch.expected.items():
        assert_same(case, got[i], want, f"{case.name} {arch} -O{level} arg {i} (IR interpreter)", reference=True)


def check_differential(case, arch: str, level: int) -> None:
    _, ir_out, _ = run_case_ir(case, arch, level)
    _, isa_out, _ = run_case(case, arch, level)
    for i in ir_out:
        assert_same(case, ir_out[i], isa_out[i], f"{case.name} {arch} -O{level} arg {i}: IR vs ISA interpreter")


# ----------------------------------------------------------------------------- the corpus
# every case (``ALL_CASES``, IR-only ones included) against numpy; the IR-vs-ISA differential for the cases the
# backend compiles (``CASES``, engines ("isa", "ir")).
@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.name)
def test_case_matches_numpy_reference(case, level):
    check_reference(case, case.default_arch, level)


@pytest.mark.parametrize("case", case_params(CASES, "default"))
def test_ir_and_isa_interpreters_agree(case):
    check_differential(case, case.default_arch, 3)


@pytest.mark.slow
@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("case,arch", case_params(CASES))
def test_matrix_reference_and_differential(case, arch, level):
    check_reference(case, arch, level)
    check_differential(case, arch, level)


@pytest.mark.slow
@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("case,arch", case_params(IR_ONLY_CASES))
def test_matrix_ir_only_reference(case, arch, level):
    """The IR-only cases (the backend refuses them) against numpy at every arch and level, two more seeds."""
    for seed in (1, 2):
        _, got, launch = run_case_ir(case, arch, level, seed)
        for i, want in launch.expected.items():
            assert_same(case, got[i], want, f"{case.name} {arch} -O{level} seed {seed} arg {i}", reference=True)


def test_stats_count_threads_and_warps():
    case = next(c for c in CASES if c.name == "saxpy")
    stats, _, launch = run_case_ir(case, "sm_80", 3)
    threads = int(np.prod(launch.grid) * np.prod(launch.block))
    assert stats.thread_instructions >= threads and stats.warp_instructions >= threads // 32
    assert stats.instructions_executed["fma"] > 0 and stats.kernel == case.entry


# ----------------------------------------------------------------------------- small kernels
def kernel_ptx(body: str, params: str) -> str:
    return HEADER + f".visible .entry k({params})\n{{\n{body}\n}}\n"


def run_ptx(body: str, params: str, grid, block, args, device, **kw):
    return launch_ptx(kernel_ptx(body, params), "k", grid, block, args, device, **kw)


def line_of(text: str, ptx: str) -> int:
    return next(i for i, s in enumerate(ptx.splitlines(), 1) if text in s)


REGS = """
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
"""


def out_ptr_prologue(param: str = "out") -> str:
    """%rd1 = &out[global thread index], %r1 = tid.x, %r2 = global thread index."""
    return f"""
    ld.param.u64 %rd0, [{param}];
    cvta.to.global.u64 %rd0, %rd0;
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.s32 %r2, %r3, %r4, %r1;
    mul.wide.s32 %rd2, %r2, 4;
    add.s64 %rd1, %rd0, %rd2;
"""


def test_nested_if_else_within_a_warp():
    body = REGS + out_ptr_prologue() + """
    and.b32 %r5, %r1, 1;
    setp.eq.s32 %p1, %r5, 0;
    @%p1 bra EVEN;
    and.b32 %r6, %r1, 2;
    setp.eq.s32 %p2, %r6, 0;
    @%p2 bra ODD_A;
    mov.u32 %r10, 300;
    bra ODD_END;
ODD_A:
    mov.u32 %r10, 200;
ODD_END:
    bra JOIN;
EVEN:
    setp.lt.u32 %p3, %r1, 8;
    selp.u32 %r10, 100, 0, %p3;
    @%p3 bra JOIN;
    add.u32 %r10, %r10, 7;
JOIN:
    add.u32 %r11, %r10, %r1;
    st.global.u32 [%rd1], %r11;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(64, np.uint32, dev)
    run_ptx(body, ".param .u64 out", 1, 64, [out], dev)
    t = np.arange(64, dtype=np.uint32)
    want = np.where(t & 1, np.where(t & 2, 300, 200), np.where(t < 8, 100, 7)) + t
    np.testing.assert_array_equal(out.copy_to_host(), want.astype(np.uint32))


def test_loop_with_data_dependent_trip_counts_reconverges_for_a_shuffle():
    # Each thread loops tid % 7 times, then the warp shuffles: every lane must have reconverged.
    body = REGS + out_ptr_prologue() + """
    rem.u32 %r5, %r1, 7;
    mov.u32 %r6, 0;
    mov.u32 %r7, 0;
    setp.eq.u32 %p1, %r5, 0;
    @%p1 bra DONE;
LOOP:
    add.u32 %r6, %r6, %r1;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p2, %r7, %r5;
    @%p2 bra LOOP;
DONE:
    shfl.sync.bfly.b32 %r8|%p3, %r6, 1, 31, -1;
    selp.u32 %r9, 1000000, 0, %p3;
    add.u32 %r8, %r8, %r9;
    st.global.u32 [%rd1], %r8;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(96, np.uint32, dev)
    run_ptx(body, ".param .u64 out", 1, 96, [out], dev)
    t = np.arange(96, dtype=np.uint32)
    mine = t * (t % 7)
    np.testing.assert_array_equal(out.copy_to_host(), mine[t ^ 1] + 1000000)


def test_barrier_orders_shared_memory_across_warps():
    # Reverse a block through shared memory: every read happens after every write.
    body = REGS + out_ptr_prologue() + """
    .shared .align 4 .b8 buf[512];
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.u32 %r7, %r5, %r6;
    mul.lo.u32 %r8, %r1, 3;
    st.shared.u32 [%r7], %r8;
    bar.sync 0;
    sub.u32 %r9, 127, %r1;
    shl.b32 %r9, %r9, 2;
    add.u32 %r9, %r5, %r9;
    ld.shared.u32 %r10, [%r9];
    st.global.u32 [%rd1], %r10;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(256, np.uint32, dev)
    run_ptx(body, ".param .u64 out", 2, 128, [out], dev)
    t = np.arange(128, dtype=np.uint32)
    np.testing.assert_array_equal(out.copy_to_host(), np.tile((127 - t) * 3, 2))


@pytest.mark.parametrize("mode,b,c", [("up", 3, 0), ("down", 5, 31), ("bfly", 6, 31), ("idx", 9, 31),
                                      ("idx", 3, 0x1C1F)])  # the last: segments of 8 lanes
def test_shfl_modes_match_ptx(mode, b, c):
    body = REGS + out_ptr_prologue() + f"""
    mul.lo.u32 %r5, %r1, 10;
    shfl.sync.{mode}.b32 %r6|%p1, %r5, {b}, {c}, -1;
    selp.u32 %r7, 1, 0, %p1;
    shl.b32 %r7, %r7, 16;
    or.b32 %r6, %r6, %r7;
    st.global.u32 [%rd1], %r6;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(32, np.uint32, dev)
    run_ptx(body, ".param .u64 out", 1, 32, [out], dev)
    lane = np.arange(32)
    seg = (c >> 8) & 31
    lo = lane & seg
    hi = lo | ((c & 31) & ~seg)
    j, ok = {"up": (lane - b, lane - b >= hi), "down": (lane + b, lane + b <= hi),
             "bfly": (lane ^ b, (lane ^ b) <= hi), "idx": (lo | (b & ~seg), (lo | (b & ~seg)) <= hi)}[mode]
    src = np.where(ok, j, lane)
    want = (src * 10) | (ok.astype(np.int64) << 16)
    np.testing.assert_array_equal(out.copy_to_host(), want.astype(np.uint32))


def test_vote_ballot_and_all_over_the_member_mask():
    body = REGS + out_ptr_prologue() + """
    and.b32 %r5, %r1, 3;
    setp.eq.u32 %p1, %r5, 0;
    vote.sync.ballot.b32 %r6, %p1, -1;
    setp.lt.u32 %p2, %r1, 40;
    vote.sync.all.pred %p3, %p2, -1;
    selp.u32 %r7, 1, 0, %p3;
    add.u32 %r6, %r6, %r7;
    st.global.u32 [%rd1], %r6;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(64, np.uint32, dev)
    run_ptx(body, ".param .u64 out", 1, 64, [out], dev)
    want = np.array([0x11111111 + 1] * 32 + [0x11111111] * 32, np.uint32)
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_out_of_bounds_store_is_a_located_fault():
    body = REGS + out_ptr_prologue() + """
    st.global.u32 [%rd1+256], %r2;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(64, np.uint32, dev)
    with pytest.raises(KernelFault) as e:
        run_ptx(body, ".param .u64 out", 1, 64, [out], dev)
    line = line_of("st.global.u32 [%rd1+256]", kernel_ptx(body, ".param .u64 out"))
    assert e.value.line == line and f"PTX line {line}" in str(e.value)
    assert "out-of-bounds" in str(e.value) and "thread (0, 0, 0)" in str(e.value)
    assert "st.global.u32 [%rd1+256], %r2;" in str(e.value)


def test_shared_out_of_bounds_load_names_the_space():
    body = REGS + """
    .shared .align 4 .b8 buf[64];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    ld.shared.u32 %r3, [%r2+4];
    ret;
"""
    with pytest.raises(KernelFault, match=r"out-of-bounds 4-byte shared access.*thread \(15, 0, 0\)"):
        run_ptx(body, "", 1, 32, [], rt.Device())


def test_barrier_that_cannot_complete_is_a_deadlock():
    body = REGS + """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra A;
    bar.sync 1;
    ret;
A:
    bar.sync 0;
    ret;
"""
    with pytest.raises(KernelFault, match=r"deadlock.*16 thread\(s\) waiting at barrier 0 at PTX line"):
        run_ptx(body, "", 1, 32, [], rt.Device())


def test_watchdog_bounds_a_runaway_kernel():
    body = REGS + """
L:
    bra L;
"""
    with pytest.raises(KernelFault, match="did not finish within 50 scheduler steps"):
        run_ptx(body, "", 1, 32, [], rt.Device(), max_steps=50)


def test_unknown_op_is_unsupported_at_its_line():
    case = next(c for c in CASES if c.name == "saxpy")
    module = build_ir(ptx_path(case, "sm_80"))
    fn = module.function(case.entry)
    fma = next(i for i in fn.instructions() if i.op == "fma")
    fma.block.instructions.insert(0, Instruction("bogus", fma.type, [], None, {}, fma.loc, block=fma.block))
    with pytest.raises(UnsupportedError, match="no semantics for op 'bogus'") as e:
        run_function(module, case.entry, 1, 32, bytes(fn.param_bytes), rt.Device().memory)
    assert e.value.loc.line == fma.loc.line


def test_params_accept_launch_arguments_and_bytes():
    body = REGS + out_ptr_prologue() + """
    ld.param.u32 %r5, [n];
    add.u32 %r6, %r5, %r2;
    st.global.u32 [%rd1], %r6;
    ret;
"""
    dev = rt.Device()
    out = rt.zeros(32, np.uint32, dev)
    run_ptx(body, ".param .u64 out, .param .u32 n", 1, 32, [out, np.uint32(1000)], dev)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.uint32) + 1000)


def test_dynamic_shared_and_local_memory():
    body = REGS + out_ptr_prologue() + """
    .local .align 4 .b8 frame[16];
    mov.u32 %r5, dyn;
    shl.b32 %r6, %r1, 2;
    add.u32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r1;
    bar.sync 0;
    xor.b32 %r8, %r6, 4;
    add.u32 %r8, %r5, %r8;
    ld.shared.u32 %r9, [%r8];
    mov.u64 %rd5, frame;
    st.local.u32 [%rd5+8], %r9;
    ld.local.u32 %r10, [%rd5+8];
    st.global.u32 [%rd1], %r10;
    ret;
"""
    ptx = HEADER + ".extern .shared .align 4 .b8 dyn[];\n" + kernel_ptx(body, ".param .u64 out")[len(HEADER):]
    dev = rt.Device()
    out = rt.zeros(64, np.uint32, dev)
    launch_ptx(ptx, "k", 1, 64, [out], dev, shared_mem=256)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64, dtype=np.uint32) ^ 1)
    with pytest.raises(KernelFault, match="shared window is 128 bytes"):
        launch_ptx(ptx, "k", 1, 64, [rt.zeros(64, np.uint32, dev)], dev, shared_mem=128)
