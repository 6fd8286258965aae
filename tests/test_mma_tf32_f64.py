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
from xcc.diagnostics import XccError

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


def fma_chain(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``D = A B + C`` in f64 as xcc defines it (docs/semantics.md): per element, fma.rn over k ascending from
    C, each fma computed exactly with Fractions and rounded once to binary64 (Python's float(Fraction) rounds
    to nearest even)."""
    m, k = a.shape
    d = np.array(c, np.float64)
    for i in range(m):
        for j in range(b.shape[1]):
            acc = float(c[i, j])
            for x in range(k):
                acc = fma_rn(float(a[i, x]), float(b[x, j]), acc)
            d[i, j] = acc
    return d


def fma_rn(x: float, y: float, z: float) -> float:
    """IEEE 754 fusedMultiplyAdd in binary64, round to nearest even (finite inputs through Fractions; a finite
    product plus an infinite z is z; overflow past the largest finite value's rounding boundary is infinite)."""
    if not (np.isfinite(x) and np.isfinite(y)):
        with np.errstate(all="ignore"):
            return float(np.float64(x) * np.float64(y) + np.float64(z))
    if not np.isfinite(z):
        return z
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if abs(exact) >= 2 ** 1024 - 2 ** 970:
        return float("inf") if exact > 0 else float("-inf")
    r = float(exact)
    return r if r != 0 or exact != 0 else (-0.0 if np.signbit(x * y) and np.signbit(z) else 0.0)


F64_BODY = """
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;
    .reg .f64 %fd<32>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd5, %r0, 128;
    add.s64 %rd1, %rd1, %rd5;
    add.s64 %rd2, %rd2, %rd5;
    add.s64 %rd3, %rd3, %rd5;
    add.s64 %rd4, %rd4, %rd5;
    ld.global.v2.f64 {%fd0, %fd1}, [%rd1];
    ld.global.v2.f64 {%fd2, %fd3}, [%rd1+16];
    ld.global.v2.f64 {%fd4, %fd5}, [%rd1+32];
    ld.global.v2.f64 {%fd6, %fd7}, [%rd1+48];
    ld.global.v2.f64 {%fd8, %fd9}, [%rd2];
    ld.global.v2.f64 {%fd10, %fd11}, [%rd2+16];
    ld.global.v2.f64 {%fd12, %fd13}, [%rd3];
    ld.global.v2.f64 {%fd14, %fd15}, [%rd3+16];
    MMA
    st.global.v2.f64 [%rd4], {%fd16, %fd17};
    st.global.v2.f64 [%rd4+16], {%fd18, %fd19};
    ret;
}
"""
"""Thread t reads its A fragment registers (up to 8 f64) at pa + 128 t, B (up to 4) at pb + 128 t, C (up to 4)
at pc + 128 t, and stores D (up to 4) at pd + 128 t: the fragments are placed by the test from the PTX ISA's
tables (restated in :func:`frag_coords`)."""

F64_MMA = {
    "m16n8k4": "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%fd16,%fd17,%fd18,%fd19}, {%fd0,%fd1}, {%fd8}, "
               "{%fd12,%fd13,%fd14,%fd15};",
    "m16n8k8": "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%fd16,%fd17,%fd18,%fd19}, {%fd0,%fd1,%fd2,%fd3}, "
               "{%fd8,%fd9}, {%fd12,%fd13,%fd14,%fd15};",
    "m16n8k16": "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd16,%fd17,%fd18,%fd19}, "
                "{%fd0,%fd1,%fd2,%fd3,%fd4,%fd5,%fd6,%fd7}, {%fd8,%fd9,%fd10,%fd11}, {%fd12,%fd13,%fd14,%fd15};",
}


def frag_coords(shape: str, operand: str, lane: int) -> list[tuple[int, int]]:
    """(row, column) of each element of ``lane``'s f64 fragment (PTX ISA, "Matrix Fragments for mma.m16n8k*"
    with .f64): A ``(g + 8 (i % 2), t + 4 (i / 2))``, B ``(t + 4 i, g)``, C/D ``(g + 8 (i / 2), 2 t + i % 2)``."""
    g, t = lane // 4, lane % 4
    k = int(shape.split("k")[1])
    if operand == "a":
        return [(g + 8 * (i % 2), t + 4 * (i // 2)) for i in range(k // 2)]
    if operand == "b":
        return [(t + 4 * i, g) for i in range(k // 4)]
    return [(g + 8 * (i // 2), 2 * t + i % 2) for i in range(4)]


def _f64_data(rng, shape):
    return rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 21, shape)


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_mma_m8n8k4_f64_from_nvcc(engine, opt):
    rng = np.random.default_rng(40 + opt)
    a, b, c = _f64_data(rng, (8, 4)), _f64_data(rng, (4, 8)), _f64_data(rng, (8, 8))
    a[0] = [1e308, -1e308, 3.0, 2.0 ** -1074]  # overflow then cancellation, and a subnormal product
    b[:, 0] = [4.0, 4.0, 5e-324, 1.0]
    got = run("mma_f64", engine, opt, a, b, c, out_shape=(8, 8), dtype=np.float64)
    np.testing.assert_array_equal(got.view(np.uint64), fma_chain(a, b, c).view(np.uint64))


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("shape", sorted(F64_MMA))
def test_mma_sm90_f64_shapes(shape, engine, opt):
    k = int(shape.split("k")[1])
    rng = np.random.default_rng(k + opt)
    a, b, c = _f64_data(rng, (16, k)), _f64_data(rng, (k, 8)), _f64_data(rng, (16, 8))
    fa, fb, fc = (np.zeros((32, 16)) for _ in range(3))
    for lane in range(32):
        for i, (r, col) in enumerate(frag_coords(shape, "a", lane)):
            fa[lane, i] = a[r, col]
        for i, (r, col) in enumerate(frag_coords(shape, "b", lane)):
            fb[lane, i] = b[r, col]
        for i, (r, col) in enumerate(frag_coords(shape, "c", lane)):
            fc[lane, i] = c[r, col]
    dev = rt.Device()
    ins = [rt.to_device(x, dev) for x in (fa, fb, fc)]
    dout = rt.to_device(np.zeros((32, 16)), dev)
    module = rt.load_module(F64_BODY.replace("MMA", F64_MMA[shape]), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    fd = dout.copy_to_host().reshape(32, 16)
    want = fma_chain(a, b, c)
    got = np.zeros((16, 8))
    for lane in range(32):
        for i, (r, col) in enumerate(frag_coords(shape, "c", lane)):
            got[r, col] = fd[lane, i]
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_wmma_tf32_from_nvcc(engine, opt):
    """nvcuda::wmma m16n16k8 precision::tf32: the kernel rounds its A and B fragments with __float_to_tf32
    (cvt.rna.tf32.f32: to nearest, ties away from zero, in 10 mantissa bits), so the reference does too."""
    rng = np.random.default_rng(7 + opt)
    a, bt, c = _data(rng, (16, 8)), _data(rng, (16, 8)), _data(rng, (16, 16))
    got = run("wmma_tf32", engine, opt, a, bt, c, out_shape=(16, 16), dtype=np.float32)
    want = exact_mma(rna_tf32(a), rna_tf32(bt).T, c)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def rna_tf32(x: np.ndarray) -> np.ndarray:
    """f32 -> tf32 rounding to nearest, ties away from zero (PTX cvt.rna.tf32.f32; finite inputs): add half an
    ulp of the 10-bit mantissa to the magnitude's bits, then clear the low 13."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    sign, mag = u & 0x80000000, u & 0x7FFFFFFF
    mag = ((mag + 0x1000) & 0x7FFFE000)
    return (sign | mag).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_wmma_f64_from_nvcc(engine, opt):
    rng = np.random.default_rng(9 + opt)
    a, b, c = _f64_data(rng, (8, 4)), _f64_data(rng, (4, 8)), _f64_data(rng, (8, 8))
    got = run("wmma_f64", engine, opt, a, b, c, out_shape=(8, 8), dtype=np.float64)
    np.testing.assert_array_equal(got.view(np.uint64), fma_chain(a, b, c).view(np.uint64))


WMMA_F64_COL = """
.version 8.7
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .reg .f64 %fd<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r1, 12;
    wmma.load.a.sync.aligned.col.m8n8k4.global.f64 {%fd1}, [%rd1], %r1;
    wmma.load.b.sync.aligned.col.m8n8k4.f64 {%fd2}, [%rd2];
    wmma.load.c.sync.aligned.col.m8n8k4.f64 {%fd3, %fd4}, [%rd3+64], %r1;
    wmma.mma.sync.aligned.col.col.m8n8k4.f64.f64.f64.f64.rn {%fd5, %fd6}, {%fd1}, {%fd2}, {%fd3, %fd4};
    wmma.store.d.sync.aligned.col.m8n8k4.global.f64 [%rd4], {%fd5, %fd6}, %r1;
    ret;
}
"""
"""Column-major A (8 x 4, stride 12), B (4 x 8, dense: stride 4), C (8 x 8 at +64 bytes, stride 12), D (stride 12)."""


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_wmma_f64_column_major_with_strides(engine, opt):
    rng = np.random.default_rng(11 + opt)
    a, b, c = _f64_data(rng, (8, 4)), _f64_data(rng, (4, 8)), _f64_data(rng, (8, 8))
    ma = np.zeros((4, 12))
    ma[:, :8] = a.T                            # column j of A at element 12 j
    mc = np.zeros(8 + 8 * 12)
    mc[8:].reshape(8, 12)[:, :8] = c.T         # C at +64 bytes, column j at 12 j
    dev = rt.Device()
    ins = [rt.to_device(np.ascontiguousarray(x), dev) for x in (ma, b.T.copy(), mc)]
    dout = rt.to_device(np.zeros((8, 12)), dev)
    module = rt.load_module(WMMA_F64_COL, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    got = dout.copy_to_host().reshape(8, 12)[:, :8].T
    np.testing.assert_array_equal(got.view(np.uint64), fma_chain(a, b, c).view(np.uint64))


@pytest.mark.parametrize("line,msg", [
    ("wmma.load.a.sync.aligned.row.m8n8k4.f32 {%fd1}, [%rd1];", r"\.m8n8k4 A fragments take \.f64, not \.f32"),
    ("wmma.mma.sync.aligned.row.row.m8n8k4.f64.f64.f64.f32 {%fd5, %fd6}, {%fd1}, {%fd2}, {%fd3, %fd4};",
     r"only wmma\.mma\.alayout\.blayout\.m8n8k4\.f64\.f64\.f64\.f64"),
    ("mma.sync.aligned.m8n8k4.row.row.f64.f64.f64.f64 {%fd5, %fd6}, {%fd1}, {%fd2}, {%fd3, %fd4};",
     r"layouts \.row\.col"),
    ("mma.sync.aligned.m16n8k8.row.col.f16.tf32.tf32.f32 {%r1, %r2}, {%r1, %r2, %r1, %r2}, {%r1, %r2}, "
     "{%r1, %r2, %r1, %r2};", r"is not supported"),
])
def test_bad_forms_are_located_errors(line, msg):
    ptx = WMMA_F64_COL.replace("    wmma.load.a.sync.aligned.col.m8n8k4.global.f64 {%fd1}, [%rd1], %r1;", "    " + line)
    with pytest.raises(XccError, match=msg) as e:
        rt.load_module(ptx, device=rt.Device(), engine="isa", opt_level=0).get_function("k")
    assert ":15:" in str(e.value)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """f32 values that are exactly bf16 -> their 16-bit patterns."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_wmma_bf16_from_nvcc(engine, opt):
    """nvcuda::wmma m16n16k16 __nv_bfloat16 (4-register A/B fragments): exact products, the sum rounded once."""
    rng = np.random.default_rng(13 + opt)
    a, bt = (tf32(_data(rng, (16, 16))).view(np.uint32) & 0xFFFF0000).view(np.float32), \
        (tf32(_data(rng, (16, 16))).view(np.uint32) & 0xFFFF0000).view(np.float32)
    c = _data(rng, (16, 16))
    dev = rt.Device()
    ins = [rt.to_device(x, dev) for x in (bf16_bits(a), bf16_bits(bt), c)]
    dout = rt.to_device(np.zeros((16, 16), np.float32), dev)
    module = rt.load_module(kernel_ptx("wmma_bf16"), device=dev, engine=engine, opt_level=opt)
    module.get_function("wmma_bf16").launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    got = dout.copy_to_host().reshape(16, 16)
    np.testing.assert_array_equal(got.view(np.uint32), exact_mma(a, bt.T, c).view(np.uint32))
