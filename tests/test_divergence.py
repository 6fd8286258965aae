"""The uniformity analysis (xcc.passes.divergence), its use by instruction selection (no reconvergence barrier
for a warp-uniform branch), and address-space inference (xcc.passes.infer_address_spaces)."""

from __future__ import annotations

import numpy as np

from xcc import runtime as rt
from xcc.driver import CompileOptions, Source, compile_module, frontend
from xcc.passes import PassManager
from xcc.passes.divergence import analyse_uniformity
from xcc.passes.infer_address_spaces import global_addresses

KERNEL = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    // uniform: a loop over the kernel argument n
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
$L_loop:
    add.s32 %r5, %r5, %r3;
    add.s32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r1;
    @%p1 bra $L_loop;
    // divergent: a branch on the thread index, and the value that merges after it
    setp.lt.u32 %p2, %r2, 5;
    mov.u32 %r6, 7;
    @%p2 bra $L_skip;
    mov.u32 %r6, 9;
$L_skip:
    add.s32 %r7, %r6, %r5;
    // temporal divergence: a loop left after a thread-dependent number of iterations
    mov.u32 %r8, 0;
$L_t:
    add.s32 %r8, %r8, 1;
    setp.lt.u32 %p3, %r8, %r2;
    @%p3 bra $L_t;
    add.s32 %r9, %r7, %r8;
    cvta.to.global.u64 %rd2, %rd1;
    mad.lo.u32 %r10, %r3, 64, %r2;
    mul.wide.u32 %rd3, %r10, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r9;
    ret;
}
"""


def _fn():
    return frontend([Source(KERNEL, "k.ptx")]).functions[0]


def _defs(fn):
    return {i.result: i for i in fn.instructions() if i.result is not None} | {
        p.result: p for b in fn.blocks for p in b.phis}


def test_sources_data_and_sync_dependence():
    fn = _fn()
    u = analyse_uniformity(fn)
    defs = _defs(fn)
    sregs = {i.attrs["name"]: i.result for i in fn.instructions() if i.op == "sreg"}
    assert not u.is_uniform(sregs["tid.x"]) and u.is_uniform(sregs["ctaid.x"])
    params = [i.result for i in fn.instructions() if i.op == "ld_param"]
    assert all(u.is_uniform(p) for p in params)
    branches = [b for b in fn.blocks if b.terminator is not None and b.terminator.op == "cbr"]
    # the loop over n is uniform; the branch on tid and the temporal loop's exit are divergent
    verdicts = [u.is_divergent_branch(b) for b in branches]
    assert verdicts == [False, True, True], verdicts
    # the phi merging 7 and 9 after the divergent branch is divergent (sync dependence)
    merged = [v for v, d in defs.items() if getattr(d, "op", "") == "phi" and len(d.args) == 2
              and all(getattr(a, "bits", None) in (7, 9) for a in d.args)]
    assert merged and not u.is_uniform(merged[0])


def test_temporal_divergence_at_uses_outside_the_loop():
    fn = _fn()
    u = analyse_uniformity(fn)
    store = next(i for i in fn.instructions() if i.op == "st")
    add = _defs(fn)[store.args[1]]
    counter = add.args[1]  # %r8: the same in every thread while they iterate together, not after the exit
    assert u.operand_divergent(counter, store.block)


def _barriers(opt_level: int) -> int:
    obj = compile_module([Source(KERNEL, "k.ptx")], CompileOptions(opt_level=opt_level))
    from xcc.backend.encoding import decode_all

    return sum(m.mnemonic == "BSSY" for m in decode_all(obj.kernels["k"].code))


def test_uniform_branches_get_no_reconvergence_barrier_and_results_stay():
    assert _barriers(0) == 3  # every conditional branch at -O0
    # from -O1 the uniform loop's branch needs none (and the short diamond on tid may be predicated instead)
    assert _barriers(1) <= 2
    outs = []
    for opt in (0, 3):
        dev = rt.Device()
        buf = rt.to_device(np.zeros(128, np.uint32), dev)
        mod = rt.load_module(KERNEL, opt_level=opt, device=dev)
        mod.get_function("k").launch((2, 1, 1), (64, 1, 1), [buf, np.uint32(3)])
        outs.append(buf.copy_to_host())
    cta, tid = np.divmod(np.arange(128), 64)
    want = (np.where(tid < 5, 7, 9) + 3 * cta + np.maximum(tid, 1)).astype(np.uint32)
    for got in outs:
        assert np.array_equal(got, want)


GENERIC = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry g(.param .u64 a, .param .u64 b)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 s[32];
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.u32 %r2, [%rd4];
    mov.u64 %rd5, s;
    cvta.shared.u64 %rd6, %rd5;
    add.s64 %rd7, %rd6, %rd3;
    st.u32 [%rd7], %r2;
    ld.u32 %r3, [%rd7];
    add.s64 %rd4, %rd2, %rd3;
    st.u32 [%rd4], %r3;
    ret;
}
"""


def test_infer_address_spaces_kernel_pointers_global_and_shared_window():
    m = frontend([Source(GENERIC, "g.ptx")])
    fn = m.functions[0]
    spaces_before = [i.attrs["space"] for i in fn.instructions() if i.op in ("ld", "st")]
    assert spaces_before == ["generic"] * 4
    glob = global_addresses(fn)
    PassManager("infer-address-spaces", verify=True).run(m)
    spaces = [i.attrs["space"] for i in fn.instructions() if i.op in ("ld", "st")]
    assert spaces == ["global", "shared", "shared", "global"]  # the shared window's accesses use its address
    assert glob
    dev = rt.Device()
    a = rt.to_device(np.arange(32, dtype=np.uint32) * 3, dev)
    b = rt.to_device(np.zeros(32, np.uint32), dev)
    for passes in ("", "infer-address-spaces"):
        mod = rt.load_module(GENERIC, device=dev, passes=passes or None, opt_level=3 if passes else 0)
        mod.get_function("g").launch((1, 1, 1), (32, 1, 1), [a, b])
        assert np.array_equal(b.copy_to_host(), np.arange(32, dtype=np.uint32) * 3)
