"""sm_80 tf32 and f64 warp-level matrix products on both engines at -O0 and -O3, run from nvcc's PTX of
tests/data/runtime/mma_tf32_f64.cu (inline-PTX ``mma.sync`` with fragments placed by hand from the PTX ISA's
fragment tables, and ``nvcuda::wmma``), against numpy.

Reference for .tf32 inputs: each input keeps the upper 19 bits of its f32 (the low 13 mantissa bits are
ignored: xcc's rule, docs/semantics.md), products and sums are taken in exact rational arithmetic
(``fractions.Fraction``) and the result rounded once to f32 (round to nearest even): xcc's documented
accumulation rule for every floating-point mma.  Test data are finite and normal, so numpy's float64 ->
float32 conversion of the exact sum rounded to float64 could differ only by double rounding; the reference
avoids that by rounding the Fraction directly.  Nothing here calls xcc.semantics."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt

PTX = (Path(__file__).parent / "data" / "runtime" / "mma_tf32_f64.sm_80.ptx").read_text()


def kernel_ptx(name: str) -> str:
    """The module's header and the one entry ``name`` (each kernel is tested on its own)."""
    head, *entries = PTX.split("\n\t// .globl\t")
    return head + "".join("\n\t// .globl\t" + e for e in entries if e.startswith(name + "\n"))
ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]


def tf32(x: np.ndarray) -> np.ndarray:
    """f32 values with their low 13 mantissa bits cleared (the tf32 an mma reads)."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def round_f32(x: Fraction) -> np.float32:
    """``x`` rounded to nearest even f32 (normal range: the test data stay there)."""
    if x == 0:
        return np.float32(0.0)
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
    return -r if x < 0 else r


def exact_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``A B + C`` on float inputs, each element the exact sum rounded once to f32."""
    m, k = a.shape
    n = b.shape[1]
    d = np.zeros((m, n), np.float32)
    for i in range(m):
        for j in range(n):
            d[i, j] = round_f32(sum((Fraction(float(a[i, x])) * Fraction(float(b[x, j])) for x in range(k)),
                                    Fraction(float(c[i, j]))))
    return d


def run(name: str, engine: str, opt: int, *arrays, out_shape, dtype):
    dev = rt.Device()
    ins = [rt.to_device(np.ascontiguousarray(x), dev) for x in arrays]
    dout = rt.to_device(np.zeros(out_shape, dtype), dev)
    module = rt.load_module(kernel_ptx(name), device=dev, engine=engine, opt_level=opt)
    module.get_function(name).launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    return dout.copy_to_host().reshape(out_shape)


def _data(rng, shape):
    """Random f32 values of mixed magnitudes and signs, full 24-bit mantissas (so truncation to tf32 matters)."""
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)).astype(np.float32)


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("name,k", [("mma_tf32_k8", 8), ("mma_tf32_k4", 4)])
def test_mma_tf32_matches_the_exact_reference(name, k, engine, opt):
    rng = np.random.default_rng(k * 10 + opt)
    a, b, c = _data(rng, (16, k)), _data(rng, (k, 8)), _data(rng, (16, 8))
    a[0, 0], b[0, 0] = np.float32(1 + 2.0 ** -20), np.float32(1 + 2.0 ** -12)  # truncated / kept mantissa bits
    got = run(name, engine, opt, a, b, c, out_shape=(16, 8), dtype=np.float32)
    want = exact_mma(tf32(a), tf32(b), c)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # and within the bound any f32-accumulating tf32 GEMM meets: |error| <= (k + 1) u sum |a b| + |c|
    exact = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64) + c
    bound = (k + 1) * 2.0 ** -24 * (np.abs(tf32(a)).astype(np.float64) @ np.abs(tf32(b)) + np.abs(c))
    assert (np.abs(got - exact) <= bound).all()
