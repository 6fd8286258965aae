"""gvn: kernels compute the same bits before and after it on the IR interpreter; what it must not merge
(across a loop's back edge with a store in the loop, an atomic, a call, an acquire load, clock reads)."""

from __future__ import annotations

import pytest
from pass_check import build, check_pass_on_case, count_ops

from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.printer import print_module
from xcc.passes import PassManager

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

CASES = ["saxpy_debug", "gemm_tiled_f32", "transpose_shared", "histogram_atomic", "block_reduce_debug",
         "scan_warp", "affine_struct_debug", "producer_consumer", "atomic_cas_fmax", "bitonic_sort",
         "collatz_steps_debug", "dyn_smem_reverse_debug"]


@pytest.mark.parametrize("name", CASES)
def test_gvn_keeps_results(name):
    check_pass_on_case(name, "gvn,dce")


def _run(body: str, params: str = ".param .u64 p") -> str:
    mod = build_module(parse(HEADER + f".visible .entry k({params})\n{{\n{body}\n}}\n", "t.ptx"))
    PassManager("gvn,dce", verify=True).run(mod)
    return print_module(mod)


def test_loop_store_kills_load_from_before_the_loop():
    out = _run("""
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [%rd1];
  mov.u32 %r2, 0;
L1:
  ld.global.u32 %r3, [%rd1];
  add.s32 %r4, %r3, 1;
  st.global.u32 [%rd1], %r4;
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, 4;
  @%p1 bra L1;
  st.global.u32 [%rd1+4], %r1;
  ret;""")
    assert out.count("ld.u32") == 2, out  # the load in the loop reads what the last iteration stored


@pytest.mark.parametrize("between", ["atom.global.add.u32 %r5, [%rd2], 1;", "bar.sync 0;", "membar.gl;",
                                     "ld.acquire.gpu.global.u32 %r5, [%rd2];"])
def test_ordering_ops_kill_global_loads(between):
    out = _run(f"""
  .reg .b32 %r<8>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  add.s64 %rd2, %rd1, 64;
  ld.global.u32 %r1, [%rd1];
  {between}
  ld.global.u32 %r2, [%rd1];
  add.s32 %r3, %r1, %r2;
  st.global.u32 [%rd1+4], %r3;
  ret;""")
    assert out.count("ld.u32 %0 {offset=0, space=global}") == 2, out


def test_shared_load_survives_a_global_store_and_clock_is_read_twice():
    out = _run("""
  .reg .b32 %r<8>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r6, %clock;
  ld.shared.u32 %r1, [%rd1];
  st.global.u32 [%rd1], %r1;
  ld.shared.u32 %r2, [%rd1];
  mov.u32 %r7, %clock;
  add.s32 %r3, %r1, %r2;
  sub.s32 %r4, %r7, %r6;
  add.s32 %r3, %r3, %r4;
  st.global.u32 [%rd1+4], %r3;
  ret;""")
    assert out.count("ld.u32") == 1, out
    assert out.count("name=clock") == 2, out


def test_reduces_debug_address_arithmetic_and_is_deterministic():
    from kernel_cases import EXAMPLES_DIR

    path = EXAMPLES_DIR / "gemm_simt.sm_80.debug.ptx"
    mod, again = build(path), build(path)
    before = count_ops(mod, "cvt", "shl", "ld", "addr_of")
    PassManager("gvn,dce", verify=True).run(mod)
    PassManager("gvn,dce", verify=True).run(again)
    assert count_ops(mod, "cvt", "shl", "ld", "addr_of") < before
    assert print_module(mod) == print_module(again)


def test_memory_model_alias_table():
    from xcc.ir.core import Instruction
    from xcc.passes.memory_model import clobbers, is_plain_load, kills, may_alias

    spaces = ["global", "shared", "local", "param", "const", "generic"]
    disjoint = {("global", "shared"), ("global", "local"), ("shared", "local"), ("param", "generic")}
    for a in spaces:
        for b in spaces:
            expect = a == b or ("generic" in (a, b) and "param" not in (a, b) and "const" not in (a, b))
            assert may_alias(a, b) == expect, (a, b)
            if (a, b) in disjoint:
                assert not may_alias(a, b)
    bar = Instruction("bar_sync", None, [])
    assert kills("shared", clobbers(bar)) and kills("generic", clobbers(bar))
    assert not kills("const", clobbers(bar)) and not kills("local", clobbers(bar))
    call = Instruction("call", None, [], attrs={"callee": "f"})
    assert kills("param", clobbers(call)) and kills("local", clobbers(call)) and not kills("const", clobbers(call))
    assert not is_plain_load(Instruction("ld", None, [], attrs={"sem": "relaxed"}))


@pytest.mark.parametrize("stem", ["gemm_simt.sm_80.debug", "scan_sort.sm_80", "transformer_ops.sm_80.debug",
                                  "device_functions.sm_80.debug"])
def test_dominator_tree_matches_the_cfg_utilities(stem):
    from kernel_cases import EXAMPLES_DIR

    from xcc.ir.cfg import immediate_dominators
    from xcc.passes.loop_utils import dominator_tree

    for fn in build(EXAMPLES_DIR / f"{stem}.ptx").functions:
        tree = dominator_tree(fn)
        assert tree.idom == immediate_dominators(fn), fn.name
        for b, kids in tree.children.items():
            assert kids == [k for k in fn.blocks if tree.idom.get(k) is b]
