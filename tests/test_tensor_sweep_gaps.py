"""Gaps and refusals the tensor qualifier sweep found (issue 19, tests/isa_sweep_tensor.py): PTX ISA 8.6's
``cp.async.bulk.shared::cta.global`` copy runs on both engines, and the qualifier and operand rules of
xcc.ir.tensor_rules give located messages from ``check`` and from ``compile`` alike.

Expected values are the copied bytes themselves (numpy's view of the source), not xcc's semantics."""

from __future__ import annotations

import numpy as np
import pytest
from test_mbarrier import ENGINES, HEADER, init

from xcc import runtime as rt
from xcc.check import Source, check_sources
from xcc.diagnostics import PtxSemanticError

BULK_CTA = """
    @%p7 bra WAIT;
    mov.u32 %r5, buf;
    mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 %rd4, [bar], 512;
    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r5], [%rd20], 256, [bar];
    add.u32 %r6, %r5, 256;
    add.s64 %rd21, %rd20, 256;
    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r6], [%rd21], 256, [%r30], %rd5;
WAIT:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    shl.b32 %r7, %r1, 3;
    mov.u32 %r8, buf;
    add.u32 %r8, %r8, %r7;
    ld.shared.u64 %rd9, [%r8];
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_bulk_copy_into_the_executing_ctas_shared_memory(engine, opt):
    """Thread 0 expects 512 bytes and starts two 256-byte .shared::cta.global copies (the second with a cache
    hint); the 64 threads wait on phase 0 and each reads its 8 bytes of the copy."""
    data = (np.arange(1024, dtype=np.uint32) * 2654435761 % 251).astype(np.uint8)
    dev = rt.Device()
    out = rt.to_device(np.zeros(64, np.uint64), dev)
    src = rt.to_device(data, dev)
    body = "    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;\n" + init(1) + BULK_CTA
    module = rt.load_module(HEADER.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (64, 1, 1), [out, src])
    assert out.copy_to_host().tolist() == data[:512].view(np.uint64).tolist()


REFUSED = [
    ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster [buf], [%rd20], 256, [bar], "
     "%h1;", "not supported yet"),
    ("mbarrier.arrive.release.shared::cta.b64 %rd4, [bar];", "'.release' needs a scope"),
    ("mbarrier.try_wait.cta.shared::cta.b64 %p1, [bar], %rd4;", "needs a memory order"),
    ("mbarrier.expect_tx.release.cta.shared::cta.b64 [bar], 64;", "'.release' is not a memory order"),
    ("mbarrier.test_wait.shared::cluster.b64 %p1, [%r30], %rd4;", "takes no .shared::cluster"),
    ("mbarrier.arrive.shared::cluster.b64 %rd4, [%r30];", "sink '_'"),
    ("mbarrier.arrive.noComplete.relaxed.cta.shared::cta.b64 %rd4, [bar], 1;", "cannot be combined with .noComplete"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %rd4;", "must be a 32-bit register"),
    ("mbarrier.pending_count.shared.b64 %r2, %rd4;", "no state space"),
    ("bar.sync.aligned 0;", "'.aligned' is not a modifier of 'bar'"),
    ("barrier.sync 16;", "out of range 0..15"),
    ("bar.sync 0, 48;", "multiple of the warp size"),
    ("barrier.cluster.wait.release;", "takes no '.release'"),
    ("fence.proxy.tensormap::generic.acquire.gpu [%rd20], 64;", "the immediate 128"),
    ("wgmma.fence.aligned;", "needs .sync"),
    ("multimem.st.acquire.gpu.global.u32 [%rd20], %r2;", "'.acquire' is not a memory order"),
    ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [buf], %r2;", "braced vector"),
]


@pytest.mark.parametrize("line, why", REFUSED)
def test_check_and_compile_refuse_with_the_same_located_message(line, why):
    src = HEADER.replace(".version 8.0", ".version 8.1").replace("BODY", "    .reg .b16 %h<2>;\n    " + line)
    res = check_sources([Source(src, "bad.ptx")])
    assert len(res.errors) == 1 and why in str(res.errors[0]), res.errors
    with pytest.raises(PtxSemanticError if "not supported yet" not in why else Exception) as e:
        rt.load_module(src, device=rt.Device()).get_function("k")
    assert str(e.value) == str(res.errors[0]).replace("bad.ptx", str(e.value).split(":")[0])
    assert ":" in str(res.errors[0]).split("error")[0]  # located: file:line:column
