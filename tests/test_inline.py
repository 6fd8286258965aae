"""The inliner (xcc.passes.inline) and the .param slot promotion behind it (xcc.passes.param_slots).

Kernels with calls run on the IR interpreter after ``inline`` (verified) and must give the numpy reference of
their kernel case (or, for the call-heavy launches without one, the outputs of the un-inlined IR bit for bit);
compiled with ``inline,constfold,dce`` they must have no CALL left (but for recursion) and run the same on the
ISA interpreter.  The golden files tests/golden/inline*.ptx show the IR (run by tests/test_passes.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernel_cases import CASES_BY_NAME
from pass_harness import EXAMPLES, PassCase, build, count_ops, debug_cases, run_outputs

from xcc import runtime as rt
from xcc.backend.codegen import disassemble_kernel
from xcc.driver import CompileOptions, Source, compile_module, frontend, read_source
from xcc.ir.printer import print_module
from xcc.passes import PassManager
from xcc.passes.inline import Inliner, cost
from xcc.runtime.ir_engine import IRModule

GOLDEN = Path(__file__).parent / "golden" / "inline.ptx"
CALL_FILES = ("device_functions.sm_80.debug.ptx", "spmv_csr.sm_80.debug.ptx", "scan_sort.sm_80.debug.ptx",
              "transformer_ops.sm_80.debug.ptx", "globals_misc.sm_80.debug.ptx")
CASES = [c for c in debug_cases() if c.path.name in CALL_FILES]


def _with_reference(case: PassCase):
    """``case`` with the launch (inputs and numpy reference) of its kernel case: the ``_debug`` one for an
    nvcc -G file (whose references follow -G's uncontracted arithmetic); (case, None) when there is none."""
    name = case.id.split(":")[1]
    kc = CASES_BY_NAME.get(name + "_debug" if ".debug." in case.path.name else name)
    if kc is None:
        return case, None
    return PassCase(case.id, case.path, case.entry, kc.make, case.shared_mem), kc


def _check_outputs(case, got, want_uninlined=None):
    """``got`` against the kernel case's numpy reference (its tolerance), or bit for bit against the outputs
    of the un-inlined IR where the case has no reference."""
    case, kc = _with_reference(case)
    launch = case.make(np.random.default_rng(0))
    for k, idx in enumerate(launch.outputs):
        if idx in launch.expected and kc is not None:
            want = launch.expected[idx]
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got[k], want, rtol=kc.rtol, atol=kc.atol, err_msg=case.id)
            else:
                np.testing.assert_array_equal(got[k], want, err_msg=case.id)
        else:
            w = want_uninlined[k] if want_uninlined is not None else run_outputs(build(case.path), case)[k]
            np.testing.assert_array_equal(got[k].view(np.uint8), w.view(np.uint8), err_msg=case.id)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_inlined_kernels_compute_the_same(case):
    mod = build(case.path)
    PassManager("inline", verify=True).run(mod)
    for fn in mod.functions:  # no .param variable is left but those a remaining call uses
        used = {n for i in fn.instructions() if i.op == "call" for n in i.attrs["params"] + i.attrs["rets"]}
        assert {v.name for v in fn.variables if v.space == "param"} <= used, fn.name
    _check_outputs(case, run_outputs(mod, _with_reference(case)[0]))


def test_only_recursion_keeps_calls_and_dead_callees_go():
    mod = build(EXAMPLES / "device_functions.sm_80.debug.ptx")
    PassManager("inline", verify=True).run(mod)
    calls = sorted({(f.name, i.attrs["callee"]) for f in mod.functions for i in f.instructions() if i.op == "call"})
    assert calls == [("_Z3fibj", "_Z3fibj"), ("recursive_fib", "_Z3fibj")]
    assert sorted(f.name for f in mod.functions if not f.is_entry) == ["_Z3fibj"]
    for path in ("spmv_csr.sm_80.debug.ptx", "scan_sort.sm_80.debug.ptx"):
        mod = build(EXAMPLES / path)
        PassManager("inline", verify=True).run(mod)
        assert count_ops(mod, "call") == 0 and all(f.is_entry for f in mod.functions)
        assert not any(v.space == "param" for f in mod.functions for v in f.variables)


def test_backend_has_no_call_left_and_runs_the_same():
    for name in ("device_functions.sm_80.debug.ptx", "spmv_csr.sm_80.debug.ptx", "device_functions.sm_80.ptx"):
        src = read_source(str(EXAMPLES / name))
        obj = compile_module([src], CompileOptions(passes="inline,constfold,dce"))
        for kname, k in obj.kernels.items():
            assert ("CALL" in disassemble_kernel(k)) == (kname == "recursive_fib"), (name, kname)
            assert kname == "recursive_fib" or k.stack_bytes == 0
        for case in [_with_reference(c)[0] for c in CASES if c.path.name == name]:
            launch = case.make(np.random.default_rng(0))
            device = rt.Device()
            args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
            mod = rt.load_module(obj.to_bytes(), device=device)
            mod.get_function(case.entry).launch(launch.grid, launch.block, args, case.shared_mem)
            _check_outputs(case, [args[i].copy_to_host() for i in launch.outputs])


def test_threshold_and_single_call_sites():
    text = GOLDEN.read_text()
    callees = {}
    for threshold in (-1000, 1100):
        mod = frontend([Source(text, "inline.ptx")])
        Inliner(threshold=threshold).run(mod)
        callees[threshold] = sorted(i.attrs["callee"] for f in mod.functions for i in f.instructions()
                                    if i.op == "call")
    assert callees[-1000] == ["fact", "fact", "twice", "twice"]  # pick: one call site, inlined anyway
    assert callees[1100] == ["fact", "fact"]
    mod = frontend([Source(text, "inline.ptx")])
    assert cost(mod.function("twice")) == 10 and cost(mod.function("pick")) > cost(mod.function("twice"))


def test_relocatable_keeps_functions_with_linkage():
    text = GOLDEN.read_text().replace(".func  (.param .b32 func_retval0) pick(",
                                      ".visible .func  (.param .b32 func_retval0) pick(")
    for whole, kept in ((True, ["fact"]), (False, ["fact", "pick"])):
        mod = frontend([Source(text, "inline.ptx")])
        PassManager([Inliner(whole_program=whole)], verify=True).run(mod)
        assert sorted(f.name for f in mod.functions if not f.is_entry) == kept  # inlined, kept for other callers
        assert count_ops(mod, "call") == 2  # fact's
        # -c: the visible pick may have callers elsewhere, so its one call here earns no bonus over the threshold
        mod = frontend([Source(text, "inline.ptx")])
        PassManager([Inliner(whole_program=whole, threshold=-1000)], verify=True).run(mod)
        assert any(i.attrs.get("callee") == "pick" for i in mod.function("inl").instructions()) == (not whole)


def test_deterministic():
    texts = set()
    for _ in range(2):
        mod = build(EXAMPLES / "device_functions.sm_80.debug.ptx")
        PassManager("inline", verify=True).run(mod)
        texts.add(print_module(mod))
    assert len(texts) == 1


def test_param_slot_left_in_memory_when_read_before_written():
    # a load of a .param variable that no store reaches keeps its memory (its bytes are undefined)
    text = GOLDEN.read_text().replace("ld.param.b32 \t%r6, [retval0+0];\n\t}", "ld.param.b32 \t%r6, [retval0+0];\n"
                                      "\tld.param.b32 \t%r6, [param0+4];\n\t}")
    text = text.replace(".param .b32 param0;\n\tst.param.b32 \t[param0+0], %r1;",
                        ".param .b64 param0;\n\tst.param.b32 \t[param0+0], %r1;")
    text = text.replace("(.param .b32 func_retval0) twice(\n\t.param .b32 twice_param_0",
                        "(.param .b32 func_retval0) twice(\n\t.param .b64 twice_param_0")
    mod = frontend([Source(text, "inline.ptx")])
    PassManager("inline", verify=True).run(mod)
    kernel = mod.function("inl")
    base = {i.result for i in kernel.instructions() if i.op == "addr_of" and i.attrs["symbol"] == "param0.1"}
    access = [(i.op, i.attrs["offset"]) for i in kernel.instructions() if i.args and i.args[0] in base]
    assert access == [("ld", 4)]  # the slot at 0 (stored, then read by the inlined twice) is promoted
    assert "param0.1" in {v.name for v in kernel.variables}


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in debug_cases() if "call.uni" in c.path.read_text()], ids=repr)
def test_every_debug_kernel_with_calls_computes_the_same_inlined(case):
    mod = build(case.path)
    PassManager("inline,constfold,dce", verify=True).run(mod)
    _check_outputs(case, run_outputs(mod, _with_reference(case)[0]))


IPCONST_FILES = ("device_functions.sm_80.debug.ptx", "spmv_csr.sm_80.debug.ptx", "warp_vote.sm_80.debug.ptx",
                 "bit_ops.sm_80.debug.ptx")


@pytest.mark.parametrize("case", [c for c in debug_cases() if c.path.name in IPCONST_FILES], ids=repr)
def test_link_time_passes_compute_the_same(case):
    # ipconst alone (its constants visible to the calls that stay), then the whole link-time pipeline
    for pipeline in ("internalize,ipconst", "internalize,ipconst,inline,globaldce"):
        mod = build(case.path)
        PassManager(pipeline, verify=True).run(mod)
        _check_outputs(case, run_outputs(mod, _with_reference(case)[0]))


def test_ipconst_changes_what_it_should():
    mod = build(EXAMPLES / "device_functions.sm_80.debug.ptx")
    PassManager("internalize,ipconst", verify=True).run(mod)
    clamp = mod.function("_Z11clamp_indexiiiPKi")  # clamp_index(i - 3, 0, n - 1, table): lo is always 0
    loads = [i.attrs.get("symbol") for i in clamp.instructions() if i.op == "addr_of"
             if any(u.op == "ld" and u.args[0] is i.result for u in clamp.instructions())]
    assert "_Z11clamp_indexiiiPKi_param_1" not in loads and "_Z11clamp_indexiiiPKi_param_0" in loads
    fib = mod.function("_Z3fibj")  # called with n % 20, n - 1, n - 2: nothing to propagate
    assert any(i.op == "ld" for i in fib.instructions())


LOCAL_PTX = """
.version 8.0
.target sm_80
.address_size 64

.func  (.param .b32 func_retval0) rev_sum(
	.param .b32 rev_sum_param_0
)
{
	.local .align 4 .b8 	buf[16];
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<3>;
	ld.param.u32 	%r1, [rev_sum_param_0];
	mov.u64 	%rd1, buf;
	add.s32 	%r2, %r1, 1;
	add.s32 	%r3, %r1, 2;
	add.s32 	%r4, %r1, 3;
	st.local.u32 	[buf], %r1;
	st.local.u32 	[buf+4], %r2;
	st.local.u32 	[buf+8], %r3;
	st.local.u32 	[buf+12], %r4;
	ld.local.u32 	%r5, [buf+12];
	ld.local.u32 	%r6, [buf];
	mul.lo.s32 	%r7, %r5, 10;
	add.s32 	%r8, %r7, %r6;
	st.param.b32 	[func_retval0+0], %r8;
	ret;
}

.visible .entry loc(
	.param .u64 loc_param_0
)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [loc_param_0];
	mov.u32 	%r1, %tid.x;
	{
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), rev_sum, (param0);
	ld.param.b32 	%r2, [retval0+0];
	}
	add.s32 	%r3, %r1, 100;
	{
	.param .b32 param0;
	st.param.b32 	[param0+0], %r3;
	.param .b32 retval0;
	call.uni (retval0), rev_sum, (param0);
	ld.param.b32 	%r4, [retval0+0];
	}
	add.s32 	%r5, %r2, %r4;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd2, %rd2, %rd3;
	st.global.u32 	[%rd2], %r5;
	ret;
}
"""


def test_callee_local_arrays_get_a_copy_per_inlined_call():
    want = sum((i + 3) * 10 + i for i in (np.arange(64), np.arange(64) + 100))
    src = Source(LOCAL_PTX, "local.ptx")
    mod = frontend([src])
    PassManager("inline", verify=True).run(mod)
    assert sorted(v.name for v in mod.function("loc").variables) == ["buf.i0", "buf.i1"]
    dev = rt.Device()
    out = rt.to_device(np.zeros(64, np.int32), dev)
    IRModule(mod, dev).get_function("loc").launch((1, 1, 1), (64, 1, 1), [out])
    np.testing.assert_array_equal(out.copy_to_host(), want)
    obj = compile_module([src], CompileOptions(passes="inline,constfold,dce"))
    assert "CALL" not in disassemble_kernel(obj.kernels["loc"])
    out = rt.to_device(np.zeros(64, np.int32), dev)
    rt.load_module(obj.to_bytes(), device=dev).get_function("loc").launch((1, 1, 1), (64, 1, 1), [out])
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_weak_callee_is_not_inlined_in_a_relocatable_module():
    text = GOLDEN.read_text().replace(".func  (.param .b32 func_retval0) twice(",
                                      ".weak .func  (.param .b32 func_retval0) twice(")
    for whole, calls in ((True, 0), (False, 2)):
        mod = frontend([Source(text, "inline.ptx")])
        PassManager([Inliner(whole_program=whole)], verify=True).run(mod)
        assert sum(i.attrs.get("callee") == "twice" for i in mod.function("inl").instructions()) == calls
