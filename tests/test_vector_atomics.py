"""Issue 19: vector atomics and reductions of sm_90 (PTX ISA 9.7.13.5 ``atom`` / 9.7.13.6 ``red``, "with vector
type", PTX 8.1): ``.add`` on ``.v2``/``.v4`` ``.f32``, ``.add``/``.min``/``.max`` ``.noftz`` on ``.v2``/``.v4``/``.v8``
``.f16``/``.bf16`` and ``.v2``/``.v4`` ``.f16x2``/``.bf16x2``, on both engines at -O0 and -O3.

The manual guarantees atomicity for each scalar element separately; 32 threads update the same vectors, so each
element is the serial result of the threads' updates in thread order (xcc's order of atomics), and each thread's
old values are the running values before its update.  The expected values come from float64 sums rounded once
by numpy (exact for the operands chosen) and a min/max written out from the manual's rules for ``min``/``max``
(-0 < +0; a NaN operand gives the other), never from xcc.semantics.  The kernel is ptxas-clean for sm_90a."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.sources import Source

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
N = 32
KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 acc, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .b16 %h<20>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [acc];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 64;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd3, %rd4;
    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5];
    ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd5+16];
    mov.b32 {%h1, %h2}, %r2;
    mov.b32 {%h3, %h4}, %r3;
    mov.b32 {%h5, %h6}, %r4;
    mov.b32 {%h7, %h8}, %r5;
    ld.global.v4.b32 {%r6, %r7, %r8, %r9}, [%rd5+32];
    ld.global.v2.b32 {%r10, %r11}, [%rd5+48];
    atom.global.v4.f32.add {%f1, %f2, %f3, %f4}, [%rd2], {%f1, %f2, %f3, %f4};
    atom.global.v8.f16.max.noftz {%h11, %h12, %h13, %h14, %h15, %h16, %h17, %h18}, [%rd2+16], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};
    atom.global.v4.bf16x2.min.noftz {%r12, %r13, %r14, %r15}, [%rd2+32], {%r6, %r7, %r8, %r9};
    red.global.v2.f16x2.add.noftz [%rd2+48], {%r10, %r11};
    st.global.v4.f32 [%rd6], {%f1, %f2, %f3, %f4};
    mov.b32 %r2, {%h11, %h12};
    mov.b32 %r3, {%h13, %h14};
    mov.b32 %r4, {%h15, %h16};
    mov.b32 %r5, {%h17, %h18};
    st.global.v4.b32 [%rd6+16], {%r2, %r3, %r4, %r5};
    st.global.v4.b32 [%rd6+32], {%r12, %r13, %r14, %r15};
    ret;
}
"""


def _bf16_bits(x: float) -> int:
    """The bf16 bits of a value that bf16 holds exactly (the top half of its f32 bits)."""
    b = int(np.array([x], np.float32).view(np.uint32)[0])
    assert b & 0xFFFF == 0, x
    return b >> 16


def _bf16_value(bits: int) -> float:
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def _minmax(a: float, b: float, pick_min: bool) -> float:
    """PTX min/max (9.7.3.10/11): a NaN operand gives the other, -0 is less than +0."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        neg = math.copysign(1, a) < 0 or math.copysign(1, b) < 0
        pos = math.copysign(1, a) > 0 or math.copysign(1, b) > 0
        return (-0.0 if neg else 0.0) if pick_min else (0.0 if pos else -0.0)
    return min(a, b) if pick_min else max(a, b)


def _inputs(rng):
    f32 = (rng.integers(-64, 64, (N, 4)) / 8.0).astype(np.float32)  # eighths: every sum exact in f32
    f16 = (rng.integers(-2048, 2048, (N, 8)) / 256.0).astype(np.float16)
    f16[3, 0], f16[5, 1], f16[7, 2] = np.float16("nan"), np.float16(-0.0), np.float16(6.0e-8)  # NaN, -0, subnormal
    bf = rng.integers(-100, 100, (N, 8)).astype(np.float64) / 4.0
    bf[2, 3], bf[4, 4] = -0.0, float("nan")
    f16x2 = (rng.integers(-512, 512, (N, 4)) / 64.0).astype(np.float16)
    return f32, f16, bf, f16x2


def _expected(f32, f16, bf, f16x2):
    old_f32, acc = np.zeros((N, 4), np.float32), np.zeros(4, np.float64)
    for t in range(N):
        old_f32[t] = acc
        acc = np.float32(acc + f32[t].astype(np.float64)).astype(np.float64)
    old_h, acch = np.zeros((N, 8), np.float16), [0.0] * 8
    for t in range(N):
        old_h[t] = acch
        acch = [_minmax(acch[k], float(f16[t, k]), False) for k in range(8)]
    old_bf, accb = np.zeros((N, 8), np.float64), [0.0] * 8
    for t in range(N):
        old_bf[t] = accb
        accb = [_minmax(accb[k], float(bf[t, k]), True) for k in range(8)]
    acc2 = np.zeros(4, np.float64)
    for t in range(N):
        acc2 = np.float16(acc2 + f16x2[t].astype(np.float64)).astype(np.float64)
    finals = (np.float32(acc), np.float16(acch), accb, np.float16(acc2))
    return old_f32, old_h, old_bf, finals


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_vector_atomics_update_each_element_in_thread_order(engine, opt):
    rng = np.random.default_rng(19)
    f32, f16, bf, f16x2 = _inputs(rng)
    row = np.zeros((N, 64), np.uint8)
    row[:, 0:16] = f32.view(np.uint8)
    row[:, 16:32] = f16.view(np.uint8)
    bfbits = np.array([[_bf16_bits(x) for x in r] for r in bf], np.uint16)
    row[:, 32:48] = bfbits.view(np.uint8)
    row[:, 48:56] = f16x2.view(np.uint8)
    dev = rt.Device()
    din, acc, out = rt.to_device(row.reshape(-1), dev), rt.zeros(64, np.uint8, dev), rt.zeros(N * 64, np.uint8, dev)
    rt.load_module(KERNEL, device=dev, engine=engine, opt_level=opt).get_function("k").launch(
        (1, 1, 1), (N, 1, 1), [din, acc, out])
    got, final = out.copy_to_host().reshape(N, 64), acc.copy_to_host()
    old_f32, old_h, old_bf, (f_f32, f_h, f_bf, f_h2) = _expected(f32, f16, bf, f16x2)
    np.testing.assert_array_equal(got[:, 0:16].copy().view(np.float32), old_f32)
    np.testing.assert_array_equal(got[:, 16:32].copy().view(np.uint16), old_h.view(np.uint16))
    got_bf = got[:, 32:48].copy().view(np.uint16)
    for t in range(N):
        for k in range(8):
            want = old_bf[t, k]
            assert (math.isnan(want) and got_bf[t, k] & 0x7FFF > 0x7F80) or (
                _bf16_value(int(got_bf[t, k])) == want
                and math.copysign(1, _bf16_value(int(got_bf[t, k]))) == math.copysign(1, want)), (t, k)
    np.testing.assert_array_equal(final[0:16].copy().view(np.float32), f_f32)
    np.testing.assert_array_equal(final[16:32].copy().view(np.uint16), f_h.view(np.uint16))
    assert [_bf16_value(int(b)) for b in final[32:48].copy().view(np.uint16)] == f_bf
    np.testing.assert_array_equal(final[48:56].copy().view(np.uint16), f_h2.view(np.uint16))


BAD = [
    ("atom.global.v8.f32.add {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd2], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
     "vector atom takes .v2/.v4 of .f32"),
    ("atom.global.v2.f32.min {%f1, %f2}, [%rd2], {%f1, %f2};", "operation .min takes"),
    ("atom.shared.v2.f32.add {%f1, %f2}, [%rd2], {%f1, %f2};", "works on the .global space only"),
    ("atom.global.v2.f16.add {%h1, %h2}, [%rd2], {%h1, %h2};", "'.noftz' is required"),
    ("red.global.v8.f16x2.add.noftz [%rd2], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};", "vector red takes"),
]


@pytest.mark.parametrize("inst, message", BAD)
def test_forms_ptxas_refuses_are_refused_at_their_line(inst, message):
    """ptxas 13.0 rejects each of these (vector width, operation, state space, .noftz): so does xcc, located."""
    src = KERNEL.replace("    ret;", f"    {inst}\n    ret;")
    try:  # the checker's refusals raise, later stages' are collected
        errors = check_sources([Source(src, "bad.ptx")]).errors
    except XccError as e:
        errors = [e]
    assert len(errors) == 1 and message in str(errors[0])
    assert f"bad.ptx:{src.splitlines().index('    ' + inst) + 1}:" in str(errors[0])
