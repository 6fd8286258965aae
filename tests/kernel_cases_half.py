"""Kernel cases for the half examples (see :mod:`kernel_cases` for the format).

Imported only by ``kernel_cases`` (which adds ``HALF_CASES`` to its lists): import that module, not this one.

The references round exact rational results (:mod:`half_ref`, ``fractions.Fraction``) once, as PTX's
half-precision instructions do; f16 and bf16 buffers are their bit patterns (``uint16``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from half_ref import from_floats, round_exact, value
from kernel_cases import SENTINEL_F32, SENTINEL_U32, KernelCase, Launch

SENTINEL_U16 = np.uint16(0xDEAD)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _f16_bits(rng: np.random.Generator, n: int, scale: float = 4.0) -> np.ndarray:
    """Random finite f16 bit patterns: mostly moderate values, some subnormal and some large ones."""
    x = (rng.standard_normal(n) * scale).astype(np.float16)
    x[rng.random(n) < 0.02] = 0.0
    bits = x.view(np.uint16).copy()
    k = max(n // 16, 1)
    bits[rng.choice(n, k, replace=False)] = rng.integers(1, 0x400, k).astype(np.uint16)  # subnormals
    bits[rng.choice(n, k, replace=False)] = rng.integers(0x7000, 0x7C00, k).astype(np.uint16)  # large
    return bits | (rng.integers(0, 2, n).astype(np.uint16) << np.uint16(15))


def _exact(bits, name: str) -> list[Fraction]:
    return [value(int(b), name) for b in np.asarray(bits).tolist()]


def _sum_zero_sign(a_bits: int, b_bits: int) -> bool:
    """IEEE round to nearest: an exact zero sum a + b is -0 only when both are -0."""
    return a_bits == 0x8000 and b_bits == 0x8000


def _make_f32_to_f16(rng: np.random.Generator) -> Launch:
    n, bs = 1500, 128
    grid = _ceil_div(n, bs)
    x = (rng.standard_normal(grid * bs) * 100).astype(np.float32)
    x[:8] = [65504.0, 65519.996, 65520.0, 1e6, -1e6, 2.0**-24, 2.0**-25, 3 * 2.0**-26]  # max, ties, overflow, tiny
    x[8:16] = [np.inf, -np.inf, 0.0, -0.0, 1 + 2.0**-11, 1 + 3 * 2.0**-11, -(1 + 2.0**-11), 2.0**-14 * 1.5]
    x[16:200] = (rng.standard_normal(184) * 1e-5).astype(np.float32)  # f16 subnormal range
    y = np.full(grid * bs + 5, SENTINEL_U16, np.uint16)
    exp = y.copy()
    fin = np.isfinite(x[:n])
    exp[:n] = np.where(fin, from_floats(np.where(fin, x[:n], 0), "f16"),
                       np.where(x[:n] > 0, np.uint16(0x7C00), np.uint16(0xFC00)))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


def _make_f16_to_f32_scale(rng: np.random.Generator) -> Launch:
    n, bs = 1200, 128
    grid = _ceil_div(n, bs)
    x = _f16_bits(rng, grid * bs)
    s = np.float32(1.7)
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:n] = x[:n].view(np.float16).astype(np.float32) * s  # f16 -> f32 is exact; one f32 multiply
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), s, x, y], [3], {3: exp})


def _make_half2_axpy_relu(rng: np.random.Generator) -> Launch:
    n2, bs = 700, 128
    grid = _ceil_div(n2, bs)
    a = np.array([1.25, -0.7], np.float16).view(np.uint16)
    x = _f16_bits(rng, 2 * grid * bs)
    y = _f16_bits(rng, 2 * grid * bs + 6)
    exp = y.copy()
    av = _exact(a, "f16")
    for i in range(2 * n2):
        xv, yv = value(int(x[i]), "f16"), value(int(y[i]), "f16")
        r = av[i % 2] * xv + yv  # element 0 of a pairs with element 0 of x[i]
        bits = round_exact(r, "f16")  # (the sign of an exact zero does not matter: max(-0, +0) = +0)
        exp[i] = 0 if bits & 0x8000 else bits  # max(r, +0): -0 and negatives -> +0
    a_arg = a.view(np.uint32)[0]  # the __half2 parameter (.align 4 .b8 [4]): its 4 bytes
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n2), a_arg, x.view(np.uint32), y.view(np.uint32)], [3],
                  {3: exp.view(np.uint32)})


def _make_half_threshold(rng: np.random.Generator) -> Launch:
    n, bs = 1300, 128
    grid = _ceil_div(n, bs)
    t = np.float16(0.75)
    x = _f16_bits(rng, grid * bs)
    x[:6] = np.array([0.75, -0.75, 300.0, -300.0, 0.0, -0.0], np.float16).view(np.uint16)
    y = np.full(grid * bs + 4, SENTINEL_U16, np.uint16)
    exp = y.copy()
    tv = Fraction(float(t))
    for i in range(n):
        xv = value(int(x[i]), "f16")
        if xv > tv:
            exp[i] = round_exact(xv * xv, "f16")
        else:
            exp[i] = round_exact(xv - tv, "f16", negative_zero=_sum_zero_sign(int(x[i]), 0x8000 ^ int(t.view(np.uint16))))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), t, x, y], [3], {3: exp})


def _make_bf16_fma_roundtrip(rng: np.random.Generator) -> Launch:
    n, bs = 1100, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    x = (rng.standard_normal(total) * 3).astype(np.float32)
    x[:4] = [1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.0e38, -1e-40]  # ties to even, overflow after fma, subnormal
    w = from_floats(rng.standard_normal(total) * 2, "bf16")
    b = from_floats(rng.standard_normal(total) * 2.0 ** rng.integers(-40, 40, total), "bf16")
    w[2] = from_floats(np.array([4.0]), "bf16")[0]
    y = np.full(total + 2, SENTINEL_F32, np.float32)
    exp = y.copy()
    for i in range(n):
        xb = round_exact(Fraction(float(x[i])), "bf16")
        r = value(xb, "bf16") * value(int(w[i]), "bf16") + value(int(b[i]), "bf16")
        rb = round_exact(r, "bf16")
        exp[i] = np.uint32(rb << 16).view(np.float32)  # bf16 -> f32: the bits in the upper half
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, w, b, y], [4], {4: exp})


def _make_half_dot_f32(rng: np.random.Generator) -> Launch:
    n, bs, grid = 5000, 128, 8
    # multiples of 1/8 in [-2, 2]: products are multiples of 1/64 and every partial sum stays below 2^14, so
    # each f32 operation is exact and the sum is the same in any order of the atomics
    a = (rng.integers(-16, 17, n) / 8).astype(np.float16).view(np.uint16)
    b = (rng.integers(-16, 17, n) / 8).astype(np.float16).view(np.uint16)
    out = np.array([0.25, SENTINEL_F32], np.float32)
    exp = out.copy()
    exp[0] += np.float32((a.view(np.float16).astype(np.float64) * b.view(np.float16).astype(np.float64)).sum())
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, out], [3], {3: exp})


# ----------------------------------------------------------------------------- carry chains (examples/carry_chain.cu)
M64, M128 = (1 << 64) - 1, (1 << 128) - 1


def _u64s(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random uint64s, some at the edges (all ones, zero, top bit only) where carries start or stop."""
    v = rng.integers(0, 1 << 64, n, dtype=np.uint64)
    k = max(n // 8, 1)
    v[rng.choice(n, k, replace=False)] = np.uint64(M64)
    v[rng.choice(n, k, replace=False)] = np.uint64(0)
    v[rng.choice(n, k, replace=False)] = np.uint64(1 << 63)
    return v


def _make_u128_mul_add(rng: np.random.Generator) -> Launch:
    n, bs = 900, 128
    grid = _ceil_div(n, bs)
    a, b, c = (_u64s(rng, grid * bs) for _ in range(3))
    out = np.full(2 * grid * bs + 4, np.uint64(0xDEADBEEFDEADBEEF), np.uint64)
    exp = out.copy()
    for i in range(n):
        r = (int(a[i]) * int(b[i]) + int(c[i])) & M128
        exp[2 * i], exp[2 * i + 1] = r & M64, r >> 64
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, c, out], [4], {4: exp})


def _make_s128_row_sum(rng: np.random.Generator) -> Launch:
    n, m, bs = 300, 5, 64
    grid = _ceil_div(n, bs)
    x = _u64s(rng, 2 * m * grid * bs).view(np.int64)
    bias = np.int64(-1234567890123456789)
    out = np.full(2 * grid * bs + 2, np.int64(-1), np.int64)
    exp = out.copy()
    u = x.view(np.uint64)
    for i in range(n):
        acc = 0
        for k in range(m):
            j = 2 * (i * m + k)
            acc += int(u[j]) | int(u[j + 1]) << 64  # the bit pattern; signed or not, the sum mod 2^128 is one
        r = (acc - int(bias)) & M128
        exp.view(np.uint64)[2 * i], exp.view(np.uint64)[2 * i + 1] = r & M64, r >> 64
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), np.int32(m), x, bias, out], [4], {4: exp})


def _limbs_to_int(v: np.ndarray) -> int:
    return sum(int(w) << (32 * k) for k, w in enumerate(v.tolist()))


def _int_to_limbs(x: int, count: int) -> list[int]:
    return [(x >> (32 * k)) & 0xFFFFFFFF for k in range(count)]


def _make_u256_add_sub(rng: np.random.Generator) -> Launch:
    n, bs = 500, 128
    grid = _ceil_div(n, bs)
    a = _u64s(rng, 4 * grid * bs).view(np.uint32).copy()
    b = _u64s(rng, 4 * grid * bs).view(np.uint32).copy()
    b[8:16] = 0xFFFFFFFF  # a + b carries through every limb (b = 2^256 - 1)
    a[16:24], b[16:24] = 0, 1  # a - b borrows through every limb
    sums = np.full(8 * grid * bs + 8, SENTINEL_U32, np.uint32)
    diffs = sums.copy()
    exp_s, exp_d = sums.copy(), diffs.copy()
    m256 = (1 << 256) - 1
    for i in range(n):
        x, y = _limbs_to_int(a[8 * i:8 * i + 8]), _limbs_to_int(b[8 * i:8 * i + 8])
        exp_s[8 * i:8 * i + 8] = _int_to_limbs((x + y) & m256, 8)
        exp_d[8 * i:8 * i + 8] = _int_to_limbs((x - y) & m256, 8)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, sums, diffs], [3, 4], {3: exp_s, 4: exp_d})


def _make_u64_mul_wide_limbs(rng: np.random.Generator) -> Launch:
    n, bs = 700, 128
    grid = _ceil_div(n, bs)
    a = _u64s(rng, grid * bs).view(np.uint32).copy()
    b = _u64s(rng, grid * bs).view(np.uint32).copy()
    out = np.full(4 * grid * bs + 4, SENTINEL_U32, np.uint32)
    exp = out.copy()
    for i in range(n):
        p = _limbs_to_int(a[2 * i:2 * i + 2]) * _limbs_to_int(b[2 * i:2 * i + 2])
        exp[4 * i:4 * i + 4] = _int_to_limbs(p, 4)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, out], [3], {3: exp})


def _make_carry_across_branch(rng: np.random.Generator) -> Launch:
    n, bs = 800, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    a = rng.integers(0, 1 << 32, total, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, total, dtype=np.uint64).astype(np.uint32)
    flag = rng.integers(0, 2, total).astype(np.uint32)
    a[:4], b[:4], flag[:4] = 0xFFFFFFFF, [0, 0, 1, 1], [0, 1, 0, 1]  # the +1 (or a + b) carries out
    lo = np.full(total + 3, SENTINEL_U32, np.uint32)
    hi = lo.copy()
    exp_lo, exp_hi = lo.copy(), hi.copy()
    for i in range(n):
        s = int(a[i]) + int(b[i])
        cf = s >> 32
        if flag[i]:
            s = (s & 0xFFFFFFFF) + 1 + cf
            cf = s >> 32
        exp_lo[i], exp_hi[i] = s & 0xFFFFFFFF, cf
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, flag, lo, hi], [4, 5], {4: exp_lo, 5: exp_hi})


CARRY_CASES: list[KernelCase] = [
    KernelCase("u128_mul_add", "carry_chain", "u128_mul_add", _make_u128_mul_add),
    KernelCase("s128_row_sum", "carry_chain", "s128_row_sum", _make_s128_row_sum),
    KernelCase("u256_add_sub", "carry_chain", "u256_add_sub", _make_u256_add_sub),
    KernelCase("u64_mul_wide_limbs", "carry_chain", "u64_mul_wide_limbs", _make_u64_mul_wide_limbs),
    KernelCase("carry_across_branch", "carry_chain", "carry_across_branch", _make_carry_across_branch),
]

HALF_CASES: list[KernelCase] = [
    KernelCase("f32_to_f16", "half_precision", "f32_to_f16", _make_f32_to_f16),
    KernelCase("f16_to_f32_scale", "half_precision", "_Z16f16_to_f32_scaleifPK6__halfPf", _make_f16_to_f32_scale),
    KernelCase("half2_axpy_relu", "half_precision", "_Z15half2_axpy_relui7__half2PKS_PS_", _make_half2_axpy_relu),
    KernelCase("half_threshold", "half_precision", "_Z14half_thresholdi6__halfPKS_PS_", _make_half_threshold),
    KernelCase("bf16_fma_roundtrip", "half_precision", "_Z18bf16_fma_roundtripiPKfPK13__nv_bfloat16S3_Pf",
               _make_bf16_fma_roundtrip),
    KernelCase("half_dot_f32", "half_precision", "_Z12half_dot_f32iPK6__halfS1_Pf", _make_half_dot_f32),
] + CARRY_CASES
