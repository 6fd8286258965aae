"""Issue 19: ``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]`` (PTX ISA 9.7.9.25.3.3, sm_80) on both
engines at -O0 and -O3.

The manual: the instruction makes the mbarrier track every prior ``cp.async`` of the executing thread, an
arrive-on being triggered once they have all completed; without ``.noinc`` the pending count is incremented by 1
first, so the asynchronous arrive-on makes no net change to it; with ``.noinc`` the arrive-on counts against the
count the mbarrier was initialised with.  Each kernel here copies one 16-byte row per thread into shared memory
with ``cp.async`` (no ``commit_group``, no ``wait_group``: only the mbarrier says the copies are complete), waits
on the mbarrier's phase 0 and reads its neighbour's row: the rows must be there.  The expected values are the
input rows (numpy) and the pending counts the manual's rule gives, computed here.  Both kernels are ptxas-clean
for sm_90a."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.sources import Source

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
N = 32
KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 pend)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    .reg .pred %p<3>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 buf[512];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INIT_DONE;
    mbarrier.init.shared::cta.b64 [bar], 32;
INIT_DONE:
    bar.sync 0;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [pend];
    mul.wide.u32 %rd4, %r1, 16;
    add.s64 %rd5, %rd1, %rd4;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 4;
    add.u32 %r4, %r2, %r3;
    cp.async.ca.shared.global [%r4], [%rd5], 16;
ARRIVE
    mov.u32 %r6, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], %r6;
    @!%p2 bra WAIT;
    add.u32 %r7, %r1, 1;
    and.b32 %r7, %r7, 31;
    shl.b32 %r7, %r7, 4;
    add.u32 %r8, %r2, %r7;
    ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [%r8];
    add.s64 %rd6, %rd2, %rd4;
    st.global.v4.u32 [%rd6], {%r8, %r9, %r10, %r11};
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd3, %rd7;
    st.global.u32 [%rd8], %r5;
    ret;
}
"""
# .noinc: the 32 asynchronous arrive-ons complete phase 0 on their own
NOINC = """    cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];
    mov.u32 %r5, 0;"""
# without .noinc: a net-zero arrive-on, then each thread's own mbarrier.arrive; its state's pending count
INC = """    cp.async.mbarrier.arrive.shared.b64 [bar];
    mbarrier.arrive.shared::cta.b64 %rd9, [bar];
    mbarrier.pending_count.b64 %r5, %rd9;"""


def _run(body: str, engine: str, opt: int):
    rng = np.random.default_rng(80)
    rows = rng.integers(0, 1 << 32, (N, 4), dtype=np.uint32)
    dev = rt.Device()
    din, out, pend = rt.to_device(rows.reshape(-1), dev), rt.zeros(N * 4, np.uint32, dev), rt.zeros(N, np.uint32, dev)
    rt.load_module(KERNEL.replace("ARRIVE", body), device=dev, engine=engine, opt_level=opt).get_function(
        "k").launch((1, 1, 1), (N, 1, 1), [din, out, pend])
    return rows, out.copy_to_host().reshape(N, 4), pend.copy_to_host()


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_noinc_arrivals_complete_the_phase_once_the_copies_landed(engine, opt):
    rows, got, _ = _run(NOINC, engine, opt)
    np.testing.assert_array_equal(got, np.roll(rows, -1, axis=0))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_without_noinc_the_pending_count_is_unchanged(engine, opt):
    """Thread t's mbarrier.arrive sees 32 - t pending: the t earlier cp.async arrive-ons changed nothing."""
    rows, got, pend = _run(INC, engine, opt)
    np.testing.assert_array_equal(got, np.roll(rows, -1, axis=0))
    np.testing.assert_array_equal(pend, N - np.arange(N))


def test_check_accepts_both_forms_and_refuses_other_modifiers():
    for body in (NOINC, INC):
        assert check_sources([Source(KERNEL.replace("ARRIVE", body), "ok.ptx")]).ok
    bad = KERNEL.replace("ARRIVE", "    cp.async.mbarrier.arrive.noinc.shared::cta.b32 [bar];\n    mov.u32 %r5, 0;")
    with pytest.raises(XccError, match="cp.async.mbarrier.arrive needs the type .b64") as e:
        check_sources([Source(bad, "bad.ptx")])
    assert e.value.loc is not None and e.value.loc.line > 0
