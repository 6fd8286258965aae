"""cp.async.bulk / cp.reduce.async.bulk into another CTA of the cluster and .f16/.bf16 bulk reductions on both
engines (issue 19; PTX ISA 9.7.9.25.4 cp.async.bulk and cp.reduce.async.bulk).

tests/data/runtime/bulk_cluster.ptx (hand-written, ptxas-clean for sm_90a): rank 1 of a 2-CTA cluster copies (or
reduces) 64 bytes of its shared memory into rank 0's buffer and completes the transaction bytes on rank 0's mbarrier,
which rank 0 waits on; rank 2 of a 4-CTA cluster multicasts 64 bytes of global memory to the CTAs of a ctaMask,
each of which waits on its own mbarrier; one CTA reduces 32 halves of shared memory into global memory.  Expected values follow the
manual's rules restated here with numpy (integer atomics wrap; inc/dec as atom.inc/dec; .add.noftz one
round-to-nearest-even addition with subnormals kept; min/max of the type), not xcc.semantics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt

PTX = Path(__file__).resolve().parent / "data" / "runtime" / "bulk_cluster.ptx"
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
RNG = np.random.default_rng(19)


def _run_cluster(engine, opt, name, src, init):
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    out = rt.zeros(16, np.uint32, dev)
    m.get_function(name).launch((2, 1, 1), (32, 1, 1), [rt.to_device(src, dev), rt.to_device(init, dev), out],
                                cluster=(2, 1, 1))
    return out.copy_to_host()


def _words():
    w = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    w[:4] = [0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
    return w


def _reduce(op, a, b):
    """rank 0's word a after rank 1's word b is reduced into it (PTX atom semantics)."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    if op == "add_u32":
        return ((a64 + b64) & 0xFFFFFFFF).astype(np.uint32)
    if op == "min_s32":
        return np.minimum(a.view(np.int32), b.view(np.int32)).view(np.uint32)
    if op == "max_u32":
        return np.maximum(a, b)
    if op == "inc_u32":
        return np.where(a >= b, 0, a64 + 1).astype(np.uint32)
    if op == "dec_u32":
        return np.where((a == 0) | (a > b), b64, a64 - 1).astype(np.uint32)
    if op == "xor_b32":
        return a ^ b
    raise AssertionError(op)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_bulk_copy_into_another_cta_completes_its_mbarrier(engine, opt):
    src, init = _words(), _words()[:16]
    np.testing.assert_array_equal(_run_cluster(engine, opt, "bulk_s2c", src, init), src[16:])


@pytest.mark.parametrize("mask", [0b1011, 0b0100, 0b1111])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_multicast_bulk_copy_lands_in_every_cta_of_the_mask(engine, opt, mask):
    src = _words()[:16]
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    out = rt.to_device(np.full(64, 0xDEADBEEF, np.uint32), dev)
    m.get_function("bulk_mc").launch((4, 1, 1), (32, 1, 1), [rt.to_device(src, dev), np.uint32(mask), out],
                                     cluster=(4, 1, 1))
    want = np.full((4, 16), 0xDEADBEEF, np.uint32)
    for r in range(4):
        if mask >> r & 1:
            want[r] = src
    np.testing.assert_array_equal(out.copy_to_host().reshape(4, 16), want)


@pytest.mark.parametrize("op", ["add_u32", "min_s32", "max_u32", "inc_u32", "dec_u32", "xor_b32"])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_bulk_reduce_into_another_cta(engine, opt, op):
    src, init = _words(), _words()[:16]
    init[4:8] = [5, 0, 7, 0xFFFFFFFF]
    src[20:24] = [5, 3, 0, 0xFFFFFFFF]  # inc/dec at and beyond their bound, 0
    got = _run_cluster(engine, opt, f"red_s2c_{op}", src, init)
    np.testing.assert_array_equal(got, _reduce(op, init, src[16:]))


def _bf16_round(x32: np.ndarray) -> np.ndarray:
    """f32 (exact sums here) -> bf16 bits, round to nearest even."""
    b = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _halves(kind):
    if kind == "f16":
        v = RNG.uniform(-8, 8, 32).astype(np.float16)
        v[:6] = [np.float16(6.0e-8), np.float16(-6.0e-8), np.inf, 65504, np.float16(1e-5), 0]
        return v.view(np.uint16)
    v = _bf16_round(RNG.uniform(-8, 8, 32).astype(np.float32))
    v[:3] = _bf16_round(np.array([1.0, -0.0, 3.0], np.float32))
    return v


def _minmax(a, b, lo):
    """PTX min/max: -0 is below +0 (no NaNs here)."""
    r = np.minimum(a, b) if lo else np.maximum(a, b)
    zeros = (a == 0) & (b == 0)
    neg = np.signbit(a) | np.signbit(b) if lo else np.signbit(a) & np.signbit(b)
    return np.where(zeros, np.where(neg, -0.0, 0.0).astype(r.dtype), r)


@pytest.mark.parametrize("name, kind, op", [("red_add_f16", "f16", "add"), ("red_add_bf16", "bf16", "add"),
                                            ("red_min_f16", "f16", "min"), ("red_max_bf16", "bf16", "max")])
@pytest.mark.parametrize("engine, opt", ENGINES)
def test_bulk_reduce_halves_into_global(engine, opt, name, kind, op):
    src, dst = _halves(kind), _halves(kind)
    if kind == "f16":
        dst[:6] = np.array([6.0e-8, 6.0e-8, 1, 65504, 1e-5, -0.0], np.float16).view(np.uint16)
    dev = rt.Device()
    m = rt.load_module(PTX, device=dev, engine=engine, opt_level=opt)
    out = rt.to_device(dst, dev)
    m.get_function(name).launch((1, 1, 1), (32, 1, 1), [rt.to_device(src, dev), out])
    got = out.copy_to_host()
    if kind == "f16":
        a, b = dst.view(np.float16).astype(np.float64), src.view(np.float16).astype(np.float64)
        with np.errstate(over="ignore"):  # the sum of two f16 is exact in f64: one rounding to f16 (inf past 65504)
            want = {"add": lambda: (a + b).astype(np.float16), "min": lambda: _minmax(a, b, True).astype(np.float16),
                    "max": lambda: _minmax(a, b, False).astype(np.float16)}[op]().view(np.uint16)
    else:
        a, b = _bf16(dst), _bf16(src)
        want = {"add": lambda: _bf16_round(a + b), "max": lambda: _bf16_round(_minmax(a, b, False))}[op]()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("inst, match", [
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%rd1], [%r1], 32;", "needs .noftz"),
    ("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.u64 [%r1], [%r1], 32, [%r1];",
     "is not supported yet"),
    ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%r1], 32, "
     "[%r1], %h1;", "is not supported yet"),
])
def test_invalid_bulk_forms_are_located_errors_of_check_and_compile(inst, match):
    """What ptxas 13.0 refuses (.add.f16 without .noftz, .min.u64 into shared::cluster, a multicast from shared
    memory): the same located error from xcc check and the compile."""
    from xcc.check import check_sources
    from xcc.sources import Source

    ptx = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  .reg .b16 %h<2>;\n"
           "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n  mov.u32 %r1, 0;\n  mov.u64 %rd1, 0;\n  mov.u16 %h1, 1;\n  "
           + inst + "\n  ret;\n}\n")
    line = ptx.splitlines().index("  " + inst) + 1
    errors = check_sources([Source(ptx, "k.ptx")]).errors
    assert len(errors) == 1 and errors[0].loc.line == line and match in str(errors[0])
    with pytest.raises(Exception, match=match) as e:
        rt.load_module(ptx, device=rt.Device(), engine="isa").get_function("k")
    assert e.value.loc.line == line
