"""TF32 ``wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`` (sm_90a) on both engines at -O0 and -O3, against an
independent reference: the operands placed in shared memory by the test from the PTX ISA's canonical K-major
layouts (9.7.15.5.1.2, 4-byte elements: 4 per 16-byte chunk; swizzled rows XOR their 16-byte chunk number
with address bits 7..), each element read as the upper 19 bits of its f32, the exact rational sum of the 8
products and the accumulator rounded once to f32 (xcc's documented rule, docs/semantics.md).  Nothing here
calls xcc.semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from wgmma_harness import ENGINES, image, kernel, launch, owner


def round_f32(x: Fraction) -> int:
    """Bits of ``x`` rounded to nearest even f32 (normal range)."""
    if x == 0:
        return 0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = e - 23
    s = a / Fraction(2) ** q
    n, rem = divmod(s.numerator, s.denominator)
    if 2 * rem > s.denominator or (2 * rem == s.denominator and n & 1):
        n += 1
    r = np.float32(float(Fraction(n) * Fraction(2) ** q))
    return int(np.float32(-r if x < 0 else r).view(np.uint32))


def tf32_value(bits: int) -> Fraction:
    return Fraction(float(np.uint32(bits & 0xFFFFE000).view(np.float32)))


def run_tf32_wgmma(n: int, sw: int, engine: str, opt: int, scale_d: bool = True, scale_a: int = 1,
                   scale_b: int = 1, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((64, 8)) * 2.0 ** rng.integers(-8, 9, (64, 8))).astype(np.float32).view(np.uint32)
    b = (rng.standard_normal((n, 8)) * 2.0 ** rng.integers(-8, 9, (n, 8))).astype(np.float32).view(np.uint32)
    img = image(a, b, sw, 4)
    nr = n // 2
    c0 = (rng.standard_normal((128, nr)) * 4).astype(np.float32)
    want = np.zeros((128, nr), np.uint32)
    for t in range(128):
        for i in range(nr):
            row, col = owner(t, i)
            acc = Fraction(float(c0[t, i])) if scale_d else Fraction(0)
            want[t, i] = round_f32(acc + sum(scale_a * tf32_value(int(a[row, k])) * scale_b * tf32_value(int(b[col, k]))
                                             for k in range(8)))
    mma = f"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32"
    return launch(kernel(mma, n // 2, "f32", f", {scale_a}, {scale_b}"), img, c0, sw, engine, opt, scale_d), want


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("n,sw", [(8, 0), (16, 128), (24, 64), (8, 32)])
def test_tf32_wgmma_matches_the_exact_reference(n, sw, engine, opt):
    got, want = run_tf32_wgmma(n, sw, engine, opt, seed=n + sw)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(t), int(i), hex(got[t, i]), hex(want[t, i])) for t, i in bad[:8]]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_tf32_wgmma_scale_d_and_negated_operands(engine):
    got, want = run_tf32_wgmma(8, 0, engine, 3, scale_d=False, scale_a=-1, seed=5)
    assert np.array_equal(got, want)
    got, want = run_tf32_wgmma(16, 128, engine, 0, scale_b=-1, seed=6)
    assert np.array_equal(got, want)
