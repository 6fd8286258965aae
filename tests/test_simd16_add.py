"""Issue 19: ``add.u16x2`` / ``add.s16x2`` (PTX ISA 9.7.1.1, PTX 8.0, sm_90) on both engines at -O0 and -O3: each
half-word sum wraps mod 2^16, element 0 in the low bits.  The expected values are numpy's uint16 additions
(independent of xcc.semantics); the kernel is ptxas-clean for sm_90a, and ``.sat`` (which ptxas refuses on the
16x2 types) is a located error.  Also the special registers ``%clock_hi`` and ``%reserved_smem_offset_*``."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import PtxSemanticError
from xcc.sources import Source

KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.v2.u32 {%r2, %r3}, [%rd4];
    add.u16x2 %r4, %r2, %r3;
    add.s16x2 %r5, %r3, %r2;
    st.global.v2.u32 [%rd5], {%r4, %r5};
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)])
def test_add_16x2_wraps_each_half(engine, opt):
    rng = np.random.default_rng(16)
    a = rng.integers(0, 1 << 16, (64, 2, 2), dtype=np.uint16)
    a[0] = [[0xFFFF, 0x7FFF], [0x0001, 0x0001]]  # carries out of the low half and into the sign of the high one
    a[1] = [[0x8000, 0xFFFF], [0x8000, 0xFFFF]]
    dev = rt.Device()
    din, out = rt.to_device(a.reshape(-1).view(np.uint32).copy(), dev), rt.zeros(128, np.uint32, dev)
    rt.load_module(KERNEL, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (64, 1, 1), [din, out])
    got = out.copy_to_host().view(np.uint16).reshape(64, 2, 2)
    want = (a[:, 0, :].astype(np.uint32) + a[:, 1, :]).astype(np.uint16)
    np.testing.assert_array_equal(got[:, 0, :], want)
    np.testing.assert_array_equal(got[:, 1, :], want)


def test_sat_is_refused_at_its_line():
    bad = KERNEL.replace("add.u16x2 %r4", "add.sat.s16x2 %r4")
    with pytest.raises(PtxSemanticError, match=r"bad.ptx:15:5: error: 'add.sat.s16x2': '.sat' does not apply"):
        check_sources([Source(bad, "bad.ptx")])


SREGS = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, %clock64;
    mov.u32 %r1, %clock_hi;
    mov.u32 %r2, %reserved_smem_offset_begin;
    mov.u32 %r3, %reserved_smem_offset_end;
    mov.u32 %r4, %reserved_smem_offset_cap;
    st.global.u64 [%rd1], %rd2;
    st.global.v4.u32 [%rd1+16], {%r1, %r2, %r3, %r4};
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", [("ir", 0), ("isa", 3)])
def test_clock_hi_and_reserved_shared_memory(engine, opt):
    """``%clock_hi`` is the upper half of ``%clock64`` (read after it: equal, or one more if the low half wrapped);
    xcc reserves no shared memory, so the reserved region's offsets and size are 0 (PTX ISA 10, special
    registers; ptxas-clean for sm_90a)."""
    dev = rt.Device()
    out = rt.zeros(8, np.uint32, dev)
    rt.load_module(SREGS, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (1, 1, 1), [out])
    got = out.copy_to_host()
    clock64 = int(got[:2].view(np.uint64)[0])
    assert int(got[4]) - (clock64 >> 32) in (0, 1)
    assert got[5:8].tolist() == [0, 0, 0]
