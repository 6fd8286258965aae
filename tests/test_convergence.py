"""Convergence barriers (BSSY/BSYNC) around loops whose threads leave inner regions early.

A thread that takes a loop's back edge is still a member of the barrier its latch's BSSY armed
(the region of a loop's exit branch is the whole loop), so no region inside the loop may reuse
that barrier: it would wait at an inner BSYNC for threads parked at the loop's join and deadlock.
"""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt

NESTED_CONTINUE_BREAK = """
.version 8.0
.target sm_80
.address_size 64

.visible .entry nest(.param .u64 out, .param .u32 ni)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r20, [ni];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    add.s32 %r2, %r2, 2;
    mov.u32 %r10, 0;
    mov.u32 %r11, 0;
$OUTER:
    mov.u32 %r12, 0;
$INNER:
    add.s32 %r3, %r12, %r1;
    rem.u32 %r4, %r3, 3;
    setp.eq.u32 %p1, %r4, 0;
    @%p1 bra $LATCH;
    mad.lo.s32 %r5, %r11, %r12, %r1;
    rem.u32 %r6, %r5, 7;
    setp.eq.u32 %p2, %r6, 5;
    @%p2 bra $OUTER_LATCH;
    add.s32 %r7, %r11, %r3;
    and.b32 %r8, %r7, 1;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $EVEN;
    add.s32 %r10, %r10, 3;
    bra.uni $LATCH;
$EVEN:
    add.s32 %r10, %r10, %r12;
$LATCH:
    add.s32 %r12, %r12, 1;
    setp.lt.u32 %p4, %r12, %r2;
    @%p4 bra $INNER;
$OUTER_LATCH:
    add.s32 %r10, %r10, 100;
    add.s32 %r11, %r11, 1;
    setp.lt.u32 %p5, %r11, %r20;
    @%p5 bra $OUTER;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r10;
    ret;
}
"""


def nested_reference(nthreads: int, ni: int) -> np.ndarray:
    """The kernel above in Python: ``continue`` when (j + t) % 3 == 0, ``break`` when (i*j + t) % 7 == 5."""
    out = np.zeros(nthreads, np.uint32)
    for t in range(nthreads):
        acc = 0
        for i in range(ni):
            for j in range(t % 4 + 2):
                if (j + t) % 3 == 0:
                    continue
                if (i * j + t) % 7 == 5:
                    break
                acc += j if (i + j + t) % 2 == 0 else 3
            acc += 100
        out[t] = acc
    return out


@pytest.mark.parametrize("opt_level", [0, 3])
def test_divergent_continue_and_break_leaving_nested_loops(opt_level):
    nthreads, ni = 64, 3
    want = nested_reference(nthreads, ni)
    for engine in ("ir", "isa"):
        device = rt.Device()
        out = rt.zeros(nthreads, np.uint32, device)
        fn = rt.load_module(NESTED_CONTINUE_BREAK, opt_level=opt_level, device=device,
                            engine=engine).get_function("nest")
        fn.launch(1, nthreads, (out, np.uint32(ni)))
        np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=f"engine={engine}")
