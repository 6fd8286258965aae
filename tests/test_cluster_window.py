"""Issue 19: ``cvta{.to}.shared::cluster`` and ``isspacep.shared::cluster`` (PTX ISA 9.7.9.x, sm_90) on both
engines at -O0 and -O3.  xcc's shared::cluster addresses contain the shared::cta window (xcc.semantics.cluster:
an address below 2^24 names the executing CTA's memory) and a generic address of distributed shared memory is
the shared window's base plus the shared::cluster address, so a shared::cta address converts to the same generic
address through either state space and back, the generic address reaches the same bytes, and
``isspacep.shared::cluster`` is true for it and false for a global address.  The kernel is ptxas-clean for
sm_90a."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt

KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .pred %p<3>;
    .shared .align 4 .b32 sbuf[4];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, sbuf;
    add.u32 %r1, %r1, 4;
    cvt.u64.u32 %rd2, %r1;
    cvta.shared::cluster.u64 %rd3, %rd2;
    cvta.shared.u64 %rd4, %rd2;
    cvta.to.shared::cluster.u64 %rd5, %rd3;
    isspacep.shared::cluster %p1, %rd3;
    isspacep.shared::cluster %p2, %rd1;
    st.u32 [%rd3], 42;
    ld.shared::cta.u32 %r2, [sbuf+4];
    setp.eq.u64 %p0, %rd3, %rd4;
    selp.u32 %r3, 1, 0, %p0;
    setp.eq.u64 %p0, %rd5, %rd2;
    selp.u32 %r4, 1, 0, %p0;
    selp.u32 %r5, 1, 0, %p1;
    selp.u32 %r6, 1, 0, %p2;
    st.global.v4.u32 [%rd1], {%r2, %r3, %r4, %r5};
    st.global.u32 [%rd1+16], %r6;
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)])
def test_shared_cluster_window(engine, opt):
    dev = rt.Device()
    out = rt.zeros(5, np.uint32, dev)
    rt.load_module(KERNEL, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (1, 1, 1), [out])
    # the store through the generic address, same generic address, round trip, shared::cluster, not global
    assert out.copy_to_host().tolist() == [42, 1, 1, 1, 0]
