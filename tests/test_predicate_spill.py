"""Predicate spilling (issue 5): more than seven live predicates are kept in general registers
with P2R stores and ISETP.NE reloads, on both engines and through the allocation checker."""

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.codegen import eliminate_dead_code
from xcc.backend.convergence import insert_convergence_barriers
from xcc.backend.isel import InstructionSelector
from xcc.backend.pred_spill import spill_predicates
from xcc.backend.regalloc import allocate, check_allocation, check_values
from xcc.driver import CompileOptions, KernelStats, Source, compile_module, frontend, optimise, read_source

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR  # noqa: E402

NPRED = 12
ITERS = 5


def _many_preds_ptx() -> str:
    """Twelve predicates (the low bits of x) live across a loop: each selects a value every
    iteration, p5 is redefined in the loop, p2 guards an add and p11 a branch."""
    setps = "\n".join(f"  and.b32 %r{10 + k}, %r6, {1 << k};\n  setp.ne.u32 %p{k}, %r{10 + k}, 0;"
                      for k in range(NPRED))
    sels = "\n".join(f"  add.u32 %r41, %r31, {k};\n  selp.b32 %r40, %r41, {3 * k + 1}, %p{k};\n"
                     f"  mad.lo.u32 %r30, %r30, 3, %r40;" for k in range(NPRED))
    return f"""
.version 8.0
.target sm_80
.address_size 64

.visible .entry preds12(.param .u64 pin, .param .u64 pout, .param .u32 iters)
{{
  .reg .pred %p<16>;
  .reg .b32 %r<64>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r1, [iters];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mad.lo.s32 %r5, %r3, %r4, %r2;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r6, [%rd4];
{setps}
  mov.u32 %r30, 0;
  mov.u32 %r31, 0;
LOOP:
{sels}
  xor.pred %p5, %p5, %p0;
  @%p2 add.u32 %r30, %r30, 100;
  @!%p11 bra SKIP;
  add.u32 %r30, %r30, 7;
SKIP:
  add.u32 %r31, %r31, 1;
  setp.lt.u32 %p13, %r31, %r1;
  @%p13 bra LOOP;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r30;
  ret;
}}
"""


def _reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for j, v in enumerate(x.tolist()):
        p = [(v >> k) & 1 == 1 for k in range(NPRED)]
        acc = 0
        for i in range(ITERS):
            for k in range(NPRED):
                acc = (acc * 3 + (i + k if p[k] else 3 * k + 1)) & 0xFFFFFFFF
            p[5] ^= p[0]
            if p[2]:
                acc = (acc + 100) & 0xFFFFFFFF
            if p[11]:
                acc = (acc + 7) & 0xFFFFFFFF
        out[j] = acc
    return out


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_twelve_live_predicates_across_a_loop(engine, opt_level):
    src = _many_preds_ptx()
    x = np.random.default_rng(5).integers(0, 1 << 32, 256, dtype=np.uint32)
    x[:4] = [0, 0xFFF, 0x555, 0xAAA]
    d_in, d_out = rt.to_device(x), rt.to_device(np.zeros_like(x))
    mod = rt.load_module(src, opt_level=opt_level, engine=engine)
    mod.get_function("preds12").launch((2, 1, 1), (128, 1, 1), (d_in, d_out, np.uint32(ITERS)))
    np.testing.assert_array_equal(d_out.copy_to_host(), _reference(x))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_spills_are_reported_but_not_as_bytes(opt_level):
    stats: dict[str, KernelStats] = {}
    compile_module([Source(_many_preds_ptx(), "preds12.ptx")], CompileOptions(opt_level=opt_level), stats=stats)
    s = stats["preds12"]
    assert s.pred_spills >= NPRED + 1 - 7
    assert s.spill_bytes == 0 and s.local_bytes == 0


TRITON = EXAMPLES_DIR.parent / "triton" if (EXAMPLES_DIR.parent / "triton").is_dir() else EXAMPLES_DIR / "triton"


@pytest.mark.parametrize("name", ["vector_add", "layernorm", "softmax_row"])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_triton_kernels_compile(name, opt_level):
    stats: dict[str, KernelStats] = {}
    compile_module([read_source(TRITON / f"{name}.sm_80.ptx")], CompileOptions(opt_level=opt_level), stats=stats)
    assert stats[name].pred_spills > 0 and stats[name].spill_bytes == 0


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_triton_vector_add_runs(engine):
    n = 3000  # three full programs of BLOCK_SIZE=1024 would be 3072: the tail is masked
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    d_a, d_b = rt.to_device(a), rt.to_device(b)
    d_out = rt.to_device(np.full(n, np.nan, dtype=np.float32))
    scratch = rt.to_device(np.zeros(16, dtype=np.uint8))
    mod = rt.load_module(TRITON / "vector_add.sm_80.ptx", engine=engine)
    mod.get_function("vector_add").launch(((n + 1023) // 1024, 1, 1), (4 * 32, 1, 1),
                                          (d_a, d_b, d_out, np.int32(n), scratch, scratch))
    np.testing.assert_array_equal(d_out.copy_to_host().view(np.uint32), (a + b).view(np.uint32))


def _spilled_kernel():
    module = frontend([Source(_many_preds_ptx(), "preds12.ptx")])
    optimise(module, CompileOptions(opt_level=3))
    fn = module.functions[0]
    blocks = InstructionSelector(fn).select().blocks
    insert_convergence_barriers(blocks)
    eliminate_dead_code(blocks)
    spills = spill_predicates(blocks, fn.name)
    assign, _ = allocate(blocks, 255, fn.name)
    return blocks, assign, spills


def test_checker_accepts_the_spill_code():
    blocks, assign, spills = _spilled_kernel()
    assert spills.count > 0 and spills.stores > 0 and spills.reloads > 0
    check_allocation(blocks, assign, spills.origin)


def test_checker_rejects_a_reload_from_the_wrong_register():
    blocks, assign, spills = _spilled_kernel()
    reload = next(m for b in blocks for m in b.insts
                  if m.mnemonic == "ISETP" and m.ops["a"] in spills.origin and m.ops["pd"] in spills.origin)
    other = next(g for p, g in spills.slots.items() if g is not reload.ops["a"])
    reload.ops["a"] = other
    with pytest.raises(AssertionError, match="reads"):
        check_values(blocks, assign, spills.origin)
    with pytest.raises(AssertionError):
        check_allocation(blocks, assign, spills.origin)


def test_checker_rejects_a_clobbered_spill_register():
    """The checker does not trust the spill map: a reload whose register another value overwrote
    before it (here: the spill register given the register of a live value) is caught."""
    blocks, assign, spills = _spilled_kernel()
    g = next(iter(spills.slots.values()))
    victim = next(v for v in assign if v.width == 1 and v not in spills.origin and assign[v] != assign[g])
    assign = {**assign, g: assign[victim]}
    with pytest.raises(AssertionError):
        check_values(blocks, assign, spills.origin)
