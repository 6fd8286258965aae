"""Hopper's mbarrier, cp.async.bulk, elect.sync, setmaxnreg and griddepcontrol (issue 19) on both engines at -O0
and -O3.  Expected values restate the PTX ISA 9.x manual's definitions (section 9.7.13.15, mbarrier: a phase
completes once its pending arrival count and its tx-count are both zero; test_wait.parity p is true once the
phase of parity p has completed; try_wait may suspend the thread until then; cp.async.bulk copies size bytes
and performs a complete-tx of size bytes on its mbarrier), never xcc.semantics.
"""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, PtxSemanticError, UnsupportedError

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]

HEADER = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<24>;
    .shared .align 8 .b64 bar;
    .shared .align 8 .b64 bar2;
    .shared .align 16 .b8 buf[1024];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd20, [in];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r30, bar;
    mov.u64 %rd9, 0;
BODY
    st.global.u64 [%rd3], %rd9;
    ret;
}
"""
"""Thread i runs BODY and stores %rd9 to out[i]; %r1 = tid.x, %r30 = the shared address of ``bar``, %rd20 = in."""

INIT_BY_0 = """
    setp.ne.u32 %p7, %r1, 0;
    @%p7 bra INIT_DONE;
    mbarrier.init.shared::cta.b64 [bar], COUNT;
INIT_DONE:
    bar.sync 0;
"""


def run(body: str, nthreads: int, engine: str, opt: int, data=None, max_steps=None) -> list[int]:
    dev = rt.Device()
    out = rt.to_device(np.zeros(nthreads, np.uint64), dev)
    src = rt.to_device(np.zeros(16, np.uint8) if data is None else data, dev)
    module = rt.load_module(HEADER.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (nthreads, 1, 1), [out, src], max_steps=max_steps)
    return [int(v) for v in out.copy_to_host()]


def init(count: int) -> str:
    return INIT_BY_0.replace("COUNT", str(count))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_arrive_returns_the_state_and_try_wait_waits_for_every_arrival(engine, opt):
    """64 threads arrive on a barrier expecting 64: thread i's state (before its arrive) has 64 - i pending;
    each try_wait with its state returns true only once all 64 arrived (phase 0 complete, so test_wait.parity 0
    is true and test_wait.parity 1 false)."""
    body = init(64) + """
    mbarrier.arrive.release.cta.shared::cta.b64 %rd4, [bar];
    mbarrier.pending_count.b64 %r2, %rd4;
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd4;
    @!%p2 bra WAIT;
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;
    mbarrier.test_wait.parity.shared::cta.b64 %p4, [bar], 1;
    selp.u32 %r3, 1000, 0, %p3;
    selp.u32 %r4, 2000, 0, %p4;
    add.u32 %r2, %r2, %r3;
    add.u32 %r2, %r2, %r4;
    cvt.u64.u32 %rd9, %r2;
"""
    assert run(body, 64, engine, opt) == [1000 + 64 - i for i in range(64)]


TX_BODY = """
    setp.ne.u32 %p7, %r1, 0;
    @%p7 bra SKIP;
    mbarrier.init.shared.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared.b64 %rd4, [bar], 64;
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd4;
    mbarrier.complete_tx.shared::cta.b64 [bar], 32;
    mbarrier.test_wait.shared.b64 %p2, [bar], %rd4;
    mbarrier.expect_tx.shared::cta.b64 [bar], 16;
    mbarrier.complete_tx.shared::cta.b64 [bar], 40;
    mbarrier.test_wait.shared.b64 %p3, [bar], %rd4;
    mbarrier.complete_tx.shared::cta.b64 [bar], 8;
    mbarrier.test_wait.shared.b64 %p4, [bar], %rd4;
    mbarrier.test_wait.parity.shared.b64 %p5, [bar], 0;
    mbarrier.test_wait.parity.shared.b64 %p6, [bar], 1;
    selp.u64 %rd10, 1, 0, %p1;
    selp.u64 %rd11, 2, 0, %p2;
    selp.u64 %rd12, 4, 0, %p3;
    selp.u64 %rd13, 8, 0, %p4;
    selp.u64 %rd14, 16, 0, %p5;
    selp.u64 %rd15, 32, 0, %p6;
    or.b64 %rd9, %rd10, %rd11;
    or.b64 %rd9, %rd9, %rd12;
    or.b64 %rd9, %rd9, %rd13;
    or.b64 %rd9, %rd9, %rd14;
    or.b64 %rd9, %rd9, %rd15;
SKIP:
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_the_phase_completes_only_when_arrivals_and_tx_bytes_are_both_done(engine, opt):
    """init 1; arrive.expect_tx 64 (all arrivals done, 64 bytes pending): incomplete; complete_tx 32: 32
    pending; expect_tx 16 and complete_tx 40: 8 pending; complete_tx 8: complete (phase 0 of parity 0)."""
    assert run(TX_BODY, 1, engine, opt) == [8 | 16]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_arrive_drop_lowers_the_expected_count_of_later_phases(engine, opt):
    """init 3: threads 0 and 1 arrive_drop, thread 2 arrives (phase 0 completes with 3 arrivals); phase 1
    expects 1: thread 2's arrive alone completes it (parity 1 done), and its state counts 1 pending."""
    body = init(3) + """
    setp.gt.u32 %p1, %r1, 1;
    @%p1 bra ARRIVE;
    mbarrier.arrive_drop.shared.b64 %rd4, [bar];
    bra.uni WAIT0;
ARRIVE:
    mbarrier.arrive.shared.b64 %rd4, [bar];
WAIT0:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra WAIT0;
    bar.sync 0;
    @!%p1 bra DONE;
    mbarrier.arrive.shared.b64 %rd5, [bar];
    mbarrier.pending_count.b64 %r2, %rd5;
    mbarrier.test_wait.parity.shared.b64 %p3, [bar], 1;
    selp.u32 %r3, 100, 0, %p3;
    add.u32 %r2, %r2, %r3;
    cvt.u64.u32 %rd9, %r2;
DONE:
"""
    assert run(body, 3, engine, opt) == [0, 0, 101]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_try_wait_suspends_consumers_until_the_producer_arrives(engine, opt):
    """Warp 1 (threads 32-63) waits on the barrier first in program order, before warp 0 has written the
    data: the waiting warp is suspended (it would otherwise spin ahead of the producer for ever), and once
    the 32 producer arrivals complete phase 0 it reads what warp 0 stored."""
    body = init(32) + """
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra PRODUCE;
CONSUME:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra CONSUME;
    sub.u32 %r5, %r1, 32;
    shl.b32 %r6, %r5, 2;
    mov.u32 %r7, buf;
    add.u32 %r7, %r7, %r6;
    ld.shared.u32 %r8, [%r7];
    cvt.u64.u32 %rd9, %r8;
    bra.uni END;
PRODUCE:
    shl.b32 %r6, %r1, 2;
    mov.u32 %r7, buf;
    add.u32 %r7, %r7, %r6;
    mul.lo.u32 %r8, %r1, 7;
    add.u32 %r8, %r8, 5;
    st.shared.u32 [%r7], %r8;
    mbarrier.arrive.release.cta.shared::cta.b64 %rd4, [%r30];
END:
"""
    assert run(body, 64, engine, opt) == [0] * 32 + [7 * i + 5 for i in range(32)]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_a_try_wait_on_a_barrier_never_completed_is_a_located_deadlock(engine, opt):
    body = init(2) + """
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
"""
    with pytest.raises(KernelFault) as e:
        run(body, 32, engine, opt)
    msg = str(e.value)
    assert "deadlock" in msg and "mbarrier at shared offset 0x0" in msg and "try_wait" in msg
    assert e.value.line == HEADER.replace("BODY", body).splitlines().index("    mbarrier.try_wait.parity."
                                                                           "shared.b64 %p2, [bar], 0;") + 1


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_a_test_wait_spin_on_a_barrier_never_completed_is_caught_by_the_watchdog(engine, opt):
    body = init(2) + """
SPIN:
    mbarrier.test_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra SPIN;
"""
    with pytest.raises(KernelFault, match="did not finish within 2000 scheduler steps"):
        run(body, 32, engine, opt, max_steps=2000)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("body, why", [
    ("mbarrier.arrive.shared.b64 %rd4, [bar];", "not initialised"),
    ("mbarrier.init.shared.b64 [bar], 0;", "count 0 is outside 1 .. 1048575"),
    ("mbarrier.init.shared.b64 [bar], 1;\n    mbarrier.arrive.shared.b64 %rd4, [bar], 2;",
     "2 arrival\\(s\\) on an mbarrier phase with 1 pending"),
    ("mbarrier.init.shared.b64 [bar], 1;\n    mbarrier.arrive.noComplete.shared.b64 %rd4, [bar], 1;",
     "noComplete completed"),
    ("mbarrier.init.shared.b64 [bar], 1;\n    mbarrier.inval.shared.b64 [bar];\n"
     "    mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;", "not initialised \\(or was invalidated\\)"),
    ("add.u32 %r9, %r30, 4;\n    mbarrier.init.shared.b64 [%r9], 1;", "misaligned"),
])
def test_undefined_mbarrier_uses_are_located_faults(engine, opt, body, why):
    with pytest.raises(KernelFault, match=why) as e:
        run(body, 1, engine, opt)
    assert e.value.line > 0 and e.value.thread == (0, 0, 0)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_generic_addresses_reach_the_same_mbarrier(engine, opt):
    """mbarrier without a state space takes a generic address (cvta.shared of bar)."""
    body = """
    mov.u64 %rd6, bar;
    cvta.shared.u64 %rd5, %rd6;
    mbarrier.init.b64 [%rd5], 1;
    mbarrier.arrive.b64 %rd4, [%rd5];
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd4;
    selp.u64 %rd9, 1, 0, %p1;
"""
    assert run(body, 1, engine, opt) == [1]


BULK = """
    @%p7 bra WAIT;
    mov.u32 %r5, buf;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [bar], 512;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd20], 256, [bar];
    add.u32 %r6, %r5, 256;
    add.s64 %rd21, %rd20, 256;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r6], [%rd21], 256, [%r30];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    shl.b32 %r7, %r1, 3;
    mov.u32 %r8, buf;
    add.u32 %r8, %r8, %r7;
    ld.shared.u64 %rd9, [%r8];
    bar.sync 0;
    @%p7 bra END;
    add.s64 %rd22, %rd1, 512;
    cp.async.bulk.global.shared::cta.bulk_group [%rd22], [buf], 512;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
    cp.async.bulk.wait_group 0;
END:
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("n", [0, -1, 100])
def test_bulk_copies_complete_tx_bytes_and_copy_back(engine, opt, n):
    """Thread 0 expects 512 bytes and starts two 256-byte bulk copies into shared memory; the 64 threads wait
    on the barrier's phase 0 and each reads 8 bytes of the copy; thread 0 then copies the 512 bytes back
    to out + 512 with a bulk-group copy and waits with cp.async.bulk.wait_group{.read} n.  ptxas 13.0 takes any
    integer n (sm_90a SASS: DEPBAR.LE SB0, 0x3f for n outside 0..63, -1 included), and so does xcc."""
    data = np.arange(1024, dtype=np.uint8) * np.uint8(37) + np.uint8(11)
    dev = rt.Device()
    out = rt.to_device(np.zeros(128, np.uint64), dev)
    src = rt.to_device(data, dev)
    body = init(1) + BULK.replace("wait_group.read 0;", f"wait_group.read {n};")
    module = rt.load_module(HEADER.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (64, 1, 1), [out, src])
    got = out.copy_to_host()
    assert got[:64].tolist() == data[:512].view(np.uint64).tolist()
    assert got[64:].tolist() == data[:512].view(np.uint64).tolist()


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_a_misaligned_bulk_copy_is_a_located_fault(engine, opt):
    body = """
    mbarrier.init.shared.b64 [bar], 1;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd20], 24, [bar];
"""
    with pytest.raises(KernelFault, match="size 24 must be a positive multiple of 16"):
        run(body, 1, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0xFFFFFFF0, 0x00F00000])
def test_elect_sync_elects_the_lowest_active_lane_of_the_mask(engine, opt, mask):
    """Lanes 0-2 leave before elect.sync: the leader is the lowest lane >= 3 of the member mask; every
    participating lane gets its number, and only the leader the predicate."""
    body = f"""
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra END;
    elect.sync %r2|%p2, {mask:#x};
    selp.u32 %r3, 100, 0, %p2;
    add.u32 %r2, %r2, %r3;
    cvt.u64.u32 %rd9, %r2;
END:
"""
    leader = min(i for i in range(3, 32) if mask >> i & 1)
    want = [0] * 3 + [leader + (100 if i == leader else 0) for i in range(3, 32)]
    assert run(body, 32, engine, opt) == want


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_elect_sync_may_discard_the_lane_number(engine, opt):
    body = """
    elect.sync _|%p2, 0xffffffff;
    selp.u64 %rd9, 1, 0, %p2;
"""
    assert run(body, 64, engine, opt) == ([1] + [0] * 31) * 2


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_setmaxnreg_and_griddepcontrol_run_as_no_ops(engine, opt):
    body = """
    griddepcontrol.wait;
    setmaxnreg.dec.sync.aligned.u32 40;
    setmaxnreg.inc.sync.aligned.u32 232;
    griddepcontrol.launch_dependents;
    mov.u64 %rd9, 5;
"""
    assert run(body, 32, engine, opt) == [5] * 32


@pytest.mark.parametrize("bad", ["setmaxnreg.inc.sync.aligned.u32 20;", "setmaxnreg.dec.sync.aligned.u32 41;",
                                 "setmaxnreg.inc.sync.aligned.u32 %r1;"])
def test_setmaxnreg_checks_its_register_count(bad):
    with pytest.raises(PtxSemanticError, match="multiple of 8 in 24 .. 256"):
        rt.load_module(HEADER.replace("BODY", "    " + bad), device=rt.Device(), engine="ir").get_function("k")


STMATRIX = """
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 4;
    add.u32 %r4, %r2, %r3;
    shl.b32 %r5, %r1, 1;
    add.u32 %r10, %r5, 0;
    add.u32 %r11, %r5, 256;
    add.u32 %r12, %r5, 512;
    add.u32 %r13, %r5, 768;
    or.b32 %r14, %r5, 1;
    shl.b32 %r15, %r14, 16;
    or.b32 %r10, %r10, %r15;
    add.u32 %r15, %r15, 0x1000000;
    or.b32 %r11, %r11, %r15;
    add.u32 %r15, %r15, 0x1000000;
    or.b32 %r12, %r12, %r15;
    add.u32 %r15, %r15, 0x1000000;
    or.b32 %r13, %r13, %r15;
    stmatrix.sync.aligned.m8n8.x4FORM.shared.b16 [%r4], {%r10, %r11, %r12, %r13};
    bar.sync 0;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra END;
    cp.async.bulk.global.shared::cta.bulk_group [%rd1], [buf], 512;
END:
"""


def _stmatrix_reference(trans: bool) -> np.ndarray:
    """The 32 x 8 halves of buf: matrix i's rows at lanes 8i .. 8i+7's addresses (buf + 16 * lane); lane l
    holds elements 2(l%4) + k (k = 0, 1) of row l/4 (trans: of column l/4), here the value 256i + 2l + k."""
    buf = np.zeros((32, 8), np.uint16)
    for i in range(4):
        for lane in range(32):
            for k in range(2):
                r, c = lane // 4, 2 * (lane % 4) + k
                if trans:
                    r, c = c, r
                buf[8 * i + r, c] = 256 * i + 2 * lane + k
    return buf


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_stores_the_fragments_ldmatrix_loads(engine, opt, trans):
    dev = rt.Device()
    out = rt.to_device(np.zeros(256, np.uint16), dev)
    src = rt.to_device(np.zeros(16, np.uint8), dev)
    body = STMATRIX.replace("FORM", ".trans" if trans else "")
    module = rt.load_module(HEADER.replace("BODY", body).replace("    st.global.u64 [%rd3], %rd9;\n", ""),
                            device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [out, src])
    assert out.copy_to_host().reshape(32, 8).tolist() == _stmatrix_reference(trans).tolist()


REDUCE = """
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 3;
    add.u32 %r4, %r2, %r3;
    mul.wide.u32 %rd5, %r1, 8;
    add.s64 %rd6, %rd20, %rd5;
    ld.global.u64 %rd7, [%rd6];
    st.shared.u64 [%r4], %rd7;
    bar.sync 0;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra END;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.OP [%rd1], [buf], 256;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.OP [%rd1], [buf+256], 256;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
END:
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op, dtype", [("add.u32", np.uint32), ("min.s32", np.int32), ("xor.b64", np.uint64),
                                       ("add.f32", np.float32), ("add.f64", np.float64)])
def test_cp_reduce_async_bulk_reduces_shared_into_global(engine, opt, op, dtype):
    """64 threads stage 512 bytes of `in` in shared memory; thread 0 reduces its two halves into the same 256
    bytes of `out` (PTX: each element as an atomic op): out = op(op(out, first half), second half)."""
    rng = np.random.default_rng(7)
    n = 256 // np.dtype(dtype).itemsize
    if np.dtype(dtype).kind == "f":
        x, y = (rng.integers(-64, 64, 2 * n) / 4).astype(dtype), (rng.integers(-64, 64, n) / 4).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 2 * n, dtype=dtype, endpoint=True)
        y = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    f = {"add": np.add, "min": np.minimum, "xor": np.bitwise_xor}[op.split(".")[0]]
    want = f(f(y, x[:n]), x[n:])
    dev = rt.Device()
    out, src = rt.to_device(y.copy(), dev), rt.to_device(x, dev)
    body = REDUCE.replace("OP", op)
    module = rt.load_module(HEADER.replace("BODY", body).replace("    st.global.u64 [%rd3], %rd9;\n", ""),
                            device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (64, 1, 1), [out, src])
    assert out.copy_to_host().tobytes() == want.tobytes()


def test_cp_reduce_async_bulk_forms_ptx_does_not_define_are_errors():
    body = "    cp.reduce.async.bulk.global.shared::cta.bulk_group.and.u32 [%rd1], [buf], 16;"
    with pytest.raises(UnsupportedError, match="not supported yet"):
        rt.load_module(HEADER.replace("BODY", body), device=rt.Device(), engine="ir").get_function("k")
