"""pipeline-loads: loads issued iterations ahead leave every result as it was (IR interpreter before/after, the
ISA interpreter against plain -O3, numpy), at every trip count around the distance; loops that write or order
the loaded space, and loads whose address depends on a load, are left alone; profile use and the autotuner
choose it where the loop waits on memory."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_cases import CASES_BY_NAME, ptx_path
from pass_check import check_pass_on_case

from xcc import runtime as rt
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.passes import PassManager
from xcc.passes.manager import pipeline_text
from xcc.runtime.device import Device
from xcc.runtime.ir_engine import IRModule

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# out[t] = sum over k < n of x[t + 32 k] * w[k]: a one-block counted loop with two global loads
STRIDED_SUM = HEADER + """
.visible .entry k(.param .u64 x, .param .u64 w, .param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<8>; .reg .f32 %f<6>; .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [w];
  ld.param.u64 %rd3, [out];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd6, %r2, 4;
  add.s64 %rd7, %rd4, %rd6;
  mov.f32 %f1, 0f00000000;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r3, 0;
LOOP:
  ld.global.f32 %f2, [%rd7];
  mul.wide.u32 %rd8, %r3, 4;
  add.s64 %rd9, %rd5, %rd8;
  ld.global.f32 %f3, [%rd9];
  fma.rn.f32 %f1, %f2, %f3, %f1;
  add.s64 %rd7, %rd7, 128;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra LOOP;
DONE:
  cvta.to.global.u64 %rd10, %rd3;
  add.s64 %rd11, %rd10, %rd6;
  st.global.f32 [%rd11], %f1;
  ret;
}
"""


def _module(text: str, passes: str):
    mod = build_module(parse(text))
    return PassManager(passes, verify=True).run(mod)


def _ops(mod, op: str, **attrs) -> int:
    return sum(1 for f in mod.functions for i in f.instructions()
               if i.op == op and all(i.attrs.get(k) == v for k, v in attrs.items()))


def _strided_inputs(n: int):
    rng = np.random.default_rng(n)
    x = rng.uniform(-2, 2, 32 * max(n, 1)).astype(np.float32)
    w = rng.uniform(-2, 2, max(n, 1)).astype(np.float32)
    want = np.zeros(32, np.float32)
    for k in range(n):  # in the loop's order, one fma (f32 product exact in f64, one rounding) per step
        want = (want.astype(np.float64) + x[32 * k:32 * k + 32].astype(np.float64) * np.float64(w[k])
                ).astype(np.float32)
    return x, w, want


def _run_ir(mod, n: int) -> np.ndarray:
    device = Device()
    x, w, _ = _strided_inputs(n)
    args = [rt.to_device(x, device), rt.to_device(w, device), rt.to_device(np.zeros(32, np.float32), device),
            np.uint32(n)]
    IRModule(mod, device).get_function("k").launch((1, 1, 1), (32, 1, 1), args)
    return args[2].copy_to_host()


@pytest.mark.parametrize("distance", [1, 2, 4])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 9])
def test_every_trip_count_around_the_distance(distance, n):
    """Trip counts below, at and above the distance: the fallback address covers iterations that do not run."""
    plain = _run_ir(_module(STRIDED_SUM, ""), n)
    piped = _run_ir(_module(STRIDED_SUM, f"pipeline-loads{{distance={distance}}},dce"), n)
    np.testing.assert_array_equal(piped.view(np.uint32), plain.view(np.uint32))
    want = _strided_inputs(n)[2]
    np.testing.assert_allclose(piped, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("distance", [1, 2])
def test_isa_engine_agrees_with_plain_O3(distance, tmp_path):
    """The compiled code (loads scheduled first) gives plain -O3's bits on the ISA interpreter."""
    path = tmp_path / "k.ptx"
    path.write_text(STRIDED_SUM)
    passes = pipeline_text(3).replace("pipeline-loads", f"pipeline-loads{{distance={distance}}}")
    outs = []
    for p in (None, passes):
        fn = rt.load_module(str(path), passes=p).get_function("k")
        x, w, _ = _strided_inputs(5)
        args = [rt.to_device(x), rt.to_device(w), rt.to_device(np.zeros(32, np.float32)), np.uint32(5)]
        fn.launch((1, 1, 1), (32, 1, 1), args)
        outs.append(args[2].copy_to_host())
    np.testing.assert_array_equal(outs[1].view(np.uint32), outs[0].view(np.uint32))


def test_shape_of_the_pipelined_loop():
    """Distance 2: two loads per load in the preheader, one ahead load per copy, d + 1 = 3 copies of the loop."""
    mod = _module(STRIDED_SUM, "pipeline-loads{distance=2}")
    fn = mod.functions[0]
    assert _ops(mod, "ld", ahead=True) == 2 * 2 + 2 * 3
    assert sum(1 for b in fn.blocks if b.name.startswith("LOOP")) == 3
    assert _ops(mod, "selp") >= 3 * 2


def test_distance_zero_without_profile_changes_nothing():
    from xcc.ir.printer import print_module

    assert print_module(_module(STRIDED_SUM, "pipeline-loads")) == print_module(_module(STRIDED_SUM, ""))


STORE_IN_LOOP = STRIDED_SUM.replace("  fma.rn.f32 %f1, %f2, %f3, %f1;",
                                    "  fma.rn.f32 %f1, %f2, %f3, %f1;\n  st.global.f32 [%rd9], %f1;")
BARRIER_IN_LOOP = STRIDED_SUM.replace("  fma.rn.f32 %f1, %f2, %f3, %f1;",
                                      "  fma.rn.f32 %f1, %f2, %f3, %f1;\n  bar.sync 0;")
CHASE = STRIDED_SUM.replace("  ld.global.f32 %f2, [%rd7];",
                            "  ld.global.u64 %rd7, [%rd7];\n  ld.global.f32 %f2, [%rd7];")


@pytest.mark.parametrize("text", [STORE_IN_LOOP, BARRIER_IN_LOOP], ids=["store", "barrier"])
def test_loops_that_write_or_order_memory_are_left_alone(text):
    assert _ops(_module(text, "pipeline-loads{distance=2}"), "ld", ahead=True) == 0


def test_address_from_a_load_is_not_pipelined():
    """Pointer chasing: the loaded pointer's target is not computable ahead (the w[k] load still is)."""
    mod = _module(CHASE, "pipeline-loads{distance=1}")
    ahead = [i for f in mod.functions for i in f.instructions() if i.op == "ld" and i.attrs.get("ahead")]
    assert len(ahead) == 3 and all(i.type.name == "f32" for i in ahead)  # w[k]: prologue + 2 copies
    plain = _run_chase(_module(CHASE, ""))
    np.testing.assert_array_equal(_run_chase(mod), plain)


def _run_chase(mod) -> np.ndarray:
    """Two iterations through a chain of pointers: the first buffer's slots point at the second, whose slots point
    at a buffer of zeros; each step reads a float where its pointer leads and moves 128 bytes on."""
    device = Device()
    x = rt.to_device(np.zeros(64, np.uint64), device)
    x = rt.to_device(np.full(64, x.ptr, np.uint64), device)
    first = rt.to_device(np.full(64, x.ptr, np.uint64), device)
    w = rt.to_device(np.arange(4, dtype=np.float32), device)
    out = rt.to_device(np.zeros(32, np.float32), device)
    IRModule(mod, device).get_function("k").launch((1, 1, 1), (1, 1, 1), [first, w, out, np.uint32(2)])
    return out.copy_to_host()


@pytest.mark.parametrize("name", ["softmax_rows", "layernorm_rows", "rmsnorm_rows", "attention_row",
                                  "gemm_mma_m16n8k16", "group_norm_nchw", "timestep_embedding",
                                  "llvm_row_xor_sum"])
@pytest.mark.parametrize("distance", [1, 3])
def test_corpus_kernels_keep_their_results(name, distance):
    passes = pipeline_text(3).replace("pipeline-loads", f"pipeline-loads{{distance={distance}}}") + ",dce"
    check_pass_on_case(name, passes)


@pytest.mark.parametrize("name", ["softmax_rows", "gemm_mma_m16n8k16"])
def test_isa_results_and_fewer_cycles_on_the_corpus(name):
    """On the ISA interpreter: bit for bit with plain -O3, and the cycle model's count is lower (a comparison of
    two deterministic model figures, not a timing)."""
    case = CASES_BY_NAME[name]
    path = str(ptx_path(case, "sm_80"))
    results = []
    for p in (None, pipeline_text(3).replace("pipeline-loads", "pipeline-loads{distance=1}")):
        fn = rt.load_module(path, passes=p).get_function(case.entry)
        launch = case.make(np.random.default_rng(0))
        args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
        stats = fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)
        results.append((stats.cycles, {i: args[i].copy_to_host() for i in launch.outputs}))
    (plain, want), (piped, got) = results
    for i in want:
        np.testing.assert_array_equal(got[i].view(np.uint8), want[i].view(np.uint8))
    assert piped < plain


def test_profile_use_pipelines_the_loop_that_waited(tmp_path):
    """A profile of softmax_rows shows its row loops waiting on global loads: profile use issues them ahead."""
    case = CASES_BY_NAME["softmax_rows"]
    path = str(ptx_path(case, "sm_80"))
    launch = case.make(np.random.default_rng(0))
    args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
    res = rt.load_module(path).get_function(case.entry).launch(launch.grid, launch.block, args, profile=True)
    prof = tmp_path / "p.json"
    res.profile.save(str(prof))
    from xcc.driver import CompileOptions, compile_module, read_source

    obj_plain = compile_module([read_source(path)], CompileOptions(opt_level=3), kernels=[case.entry])
    obj_pgo = compile_module([read_source(path)], CompileOptions(opt_level=3, profile_use=str(prof)),
                             kernels=[case.entry])
    assert obj_pgo.to_bytes() != obj_plain.to_bytes()
    args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
    stats = rt.load_module(path, profile_use=str(prof)).get_function(case.entry).launch(
        launch.grid, launch.block, args)
    np.testing.assert_allclose(args[3].copy_to_host(), launch.expected[3], atol=case.atol)
    assert stats.cycles < res.cycles


def test_profile_pipelining_that_spills_is_built_again_without_it(tmp_path, monkeypatch):
    """At a register limit where the loads a profile issues ahead make attention_row spill, the driver keeps the
    build without them when it spills less; its results are the plain build's bits."""
    import xcc.driver as driver
    from xcc.driver import CompileOptions, compile_module, read_source

    case = CASES_BY_NAME["attention_row"]
    path = str(ptx_path(case, "sm_80"))
    launch = case.make(np.random.default_rng(0))

    def args():
        return [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]

    a = args()
    res = rt.load_module(path, max_registers=16).get_function(case.entry).launch(
        launch.grid, launch.block, a, shared_mem=case.shared_mem, profile=True)
    want = a[6].copy_to_host()
    prof = tmp_path / "p.json"
    res.profile.save(str(prof))

    def spill_bytes() -> int:
        stats: dict = {}
        compile_module([read_source(path)], CompileOptions(opt_level=3, max_registers=16, profile_use=str(prof)),
                       kernels=[case.entry], stats=stats)
        return stats[case.entry].spill_bytes

    kept = spill_bytes()
    b = args()
    rt.load_module(path, max_registers=16, profile_use=str(prof)).get_function(case.entry).launch(
        launch.grid, launch.block, b, shared_mem=case.shared_mem)
    np.testing.assert_array_equal(b[6].copy_to_host().view(np.uint32), want.view(np.uint32))
    monkeypatch.setattr(driver._Unpipelined, "fewer_spills", lambda self, k, report, *rest: (k, report))
    assert kept < spill_bytes()
