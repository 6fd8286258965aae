"""Instruction selection of f32 division, rounding to integral, f64 arithmetic, comparisons and
conversions, and 64-bit min/max: each PTX instruction, on loaded (never constant) per-thread
operands, runs through the whole pipeline at -O0 and -O3 on the ISA interpreter and must match
:mod:`xcc.semantics` bit for bit.  Operands mix random bit patterns, random ordinary numbers (so
that sums and products round) and edge values: NaNs (quiet, signalling, negative), signed zeros,
subnormals, infinities, the largest and smallest normals, and divisors near 2^126."""

from __future__ import annotations

import numpy as np
import pytest
from test_isel_bits import R32, N, check_instruction

from xcc.semantics import floating
from xcc.semantics.compare import FLOAT_CMPS, compare
from xcc.semantics.convert import convert

M32 = np.uint64(0xFFFFFFFF)
RNDS = ("rn", "rz", "rm", "rp")
INT_RNDS = ("rni", "rzi", "rmi", "rpi")

# f32 operands in %f1..%f3 (from %r5..%r7), result %f0; f64 operands in %fd1..%fd3, result %fd0.
F32_IN = "mov.b32 %f1, %r5;\n  mov.b32 %f2, %r6;\n  mov.b32 %f3, %r7;\n  "
F32_OUT = "\n  mov.b32 %r0, %f0;" + R32
F64_IN = "mov.b64 %fd1, %rd7;\n  mov.b64 %fd2, %rd8;\n  mov.b64 %fd3, %rd9;\n  "
F64_OUT = "\n  mov.b64 %rd20, %fd0;"
PRED_OUT = "\n  selp.u32 %r0, 1, 0, %p1;" + R32


def _f32(f):
    """A reference on the low words of the operand columns, zero-extended to 64 bits."""
    return lambda a, b, c, e: np.asarray(f(*(np.asarray(x & M32, np.uint32) for x in (a, b, c, e)))).astype(
        np.uint64)


def _cases():
    cases = {}

    def f32(name, body, ref):
        cases[name] = (F32_IN + body + F32_OUT, _f32(ref))

    def f64(name, body, ref):
        cases[name] = (F64_IN + body + F64_OUT, ref)

    # f32 division in every mode and precision, rcp in the directed modes, round to integral
    for rnd in RNDS:
        for ftz in ("", ".ftz"):
            f32(f"div.{rnd}{ftz}.f32", f"div.{rnd}{ftz}.f32 %f0, %f1, %f2;",
                lambda a, b, c, e, r=rnd, z=bool(ftz): floating.fdiv(a, b, 32, r, ftz=z))
            f32(f"rcp.{rnd}{ftz}.f32", f"rcp.{rnd}{ftz}.f32 %f0, %f1;",
                lambda a, b, c, e, r=rnd, z=bool(ftz): floating.funary("rcp", a, 32, r, ftz=z))
    for prec in ("full", "approx"):
        for ftz in ("", ".ftz"):
            f32(f"div.{prec}{ftz}.f32", f"div.{prec}{ftz}.f32 %f0, %f1, %f2;",
                lambda a, b, c, e, z=bool(ftz), p=prec: floating.fdiv(a, b, 32, "rn", ftz=z, approx=p == "approx"))
    f32("div.rn.f32.imm", "div.rn.f32 %f0, %f1, 0f40400000;",
        lambda a, b, c, e: floating.fdiv(a, np.uint32(0x40400000), 32))
    f32("sqrt.rn.f32", "sqrt.rn.f32 %f0, %f1;", lambda a, b, c, e: floating.funary("sqrt", a, 32))
    for rnd in INT_RNDS:
        for ftz in ("", ".ftz"):
            f32(f"cvt.{rnd}{ftz}.f32.f32", f"cvt.{rnd}{ftz}.f32.f32 %f0, %f1;",
                lambda a, b, c, e, r=rnd, z=bool(ftz): convert(a, 32, "f", 32, "f", rnd=r, ftz=z))
    for op in ("neg", "abs"):
        f32(f"{op}.ftz.f32", f"{op}.ftz.f32 %f0, %f1;", lambda a, b, c, e, op=op: floating.funary(op, a, 32, ftz=True))

    # f64 arithmetic in every rounding mode
    for rnd in RNDS:
        for op, fn in (("add", floating.fadd), ("sub", floating.fsub), ("mul", floating.fmul),
                       ("div", floating.fdiv)):
            f64(f"{op}.{rnd}.f64", f"{op}.{rnd}.f64 %fd0, %fd1, %fd2;", lambda a, b, c, e, fn=fn, r=rnd: fn(a, b, 64, r))
        f64(f"fma.{rnd}.f64", f"fma.{rnd}.f64 %fd0, %fd1, %fd2, %fd3;",
            lambda a, b, c, e, r=rnd: floating.ffma(a, b, c, 64, r))
        for op in ("sqrt", "rcp"):
            f64(f"{op}.{rnd}.f64", f"{op}.{rnd}.f64 %fd0, %fd1;",
                lambda a, b, c, e, op=op, r=rnd: floating.funary(op, a, 64, r))
    f64("rcp.approx.ftz.f64", "rcp.approx.ftz.f64 %fd0, %fd1;",
        lambda a, b, c, e: floating.funary("rcp", a, 64, ftz=True))
    f64("add.f64.imm", "add.f64 %fd0, %fd1, 0d3FF8000000000000;",
        lambda a, b, c, e: floating.fadd(a, np.uint64(0x3FF8000000000000), 64))
    f64("mul.f64.imm.zero", "mul.f64 %fd0, 0d0000000000000000, %fd1;",
        lambda a, b, c, e: floating.fmul(np.uint64(0), a, 64))
    for op, fn in (("min", floating.fmin), ("max", floating.fmax)):
        f64(f"{op}.f64", f"{op}.f64 %fd0, %fd1, %fd2;", lambda a, b, c, e, fn=fn: fn(a, b, 64))
    for op in ("neg", "abs"):
        f64(f"{op}.f64", f"{op}.f64 %fd0, %fd1;", lambda a, b, c, e, op=op: floating.funary(op, a, 64))
    for cmp in sorted(FLOAT_CMPS):
        cases[f"setp.{cmp}.f64"] = (F64_IN + f"setp.{cmp}.f64 %p1, %fd1, %fd2;" + PRED_OUT,
                                    lambda a, b, c, e, cmp=cmp: compare(cmp, a, b, 64, "f").astype(np.uint64))
    cases["setp.lt.or.f64"] = (F64_IN + "setp.ne.u32 %p0, %r8, 0;\n  setp.lt.or.f64 %p1, %fd1, %fd2, %p0;" + PRED_OUT,
                               lambda a, b, c, e: (compare("lt", a, b, 64, "f") | ((e & M32) != 0)).astype(np.uint64))
    cases["setp.geu.f64.imm"] = (F64_IN + "setp.geu.f64 %p1, %fd1, 0d0000000000000000;" + PRED_OUT,
                                 lambda a, b, c, e: compare("geu", a, np.uint64(0), 64, "f").astype(np.uint64))

    # conversions with an f64 or 64-bit integer side
    for rnd in INT_RNDS:
        f64(f"cvt.{rnd}.f64.f64", f"cvt.{rnd}.f64.f64 %fd0, %fd1;",
            lambda a, b, c, e, r=rnd: convert(a, 64, "f", 64, "f", rnd=r))
        for t in ("s32", "u32", "s64", "u64"):
            bits, kind = int(t[1:]), t[0]
            out = f"cvt.{rnd}.{t}.f64 %{'rd20' if bits == 64 else 'r0'}, %fd1;" + ("" if bits == 64 else R32)
            cases[f"cvt.{rnd}.{t}.f64"] = (F64_IN + out, lambda a, b, c, e, r=rnd, bits=bits, kind=kind: convert(
                a, bits, kind, 64, "f", rnd=r).astype(np.uint64))
            if bits == 64:
                for ftz in ("", ".ftz"):
                    cases[f"cvt.{rnd}{ftz}.{t}.f32"] = (
                        F32_IN + f"cvt.{rnd}{ftz}.{t}.f32 %rd20, %f1;",
                        _f32(lambda a, b, c, e, r=rnd, kind=kind, z=bool(ftz): convert(a, 64, kind, 32, "f", rnd=r,
                                                                                       ftz=z)))
    for t in ("s32", "u32"):
        f64(f"cvt.rn.f64.{t}", f"cvt.rn.f64.{t} %fd0, %r5;",
            lambda a, b, c, e, k=t[0]: convert(a & M32, 64, "f", 32, k))
    for t in ("s64", "u64"):
        f64(f"cvt.rn.f64.{t}", f"cvt.rn.f64.{t} %fd0, %rd7;", lambda a, b, c, e, k=t[0]: convert(a, 64, "f", 64, k))
        cases[f"cvt.rn.f32.{t}"] = (f"cvt.rn.f32.{t} %f0, %rd7;" + F32_OUT,
                                    lambda a, b, c, e, k=t[0]: convert(a, 32, "f", 64, k).astype(np.uint64))
    for ftz in ("", ".ftz"):
        cases[f"cvt{ftz}.f64.f32"] = (F32_IN + f"cvt{ftz}.f64.f32 %fd0, %f1;" + F64_OUT,
                                      _f32(lambda a, b, c, e, z=bool(ftz): convert(a, 64, "f", 32, "f", ftz=z)))
    cases["cvt.rn.f32.f64"] = (F64_IN + "cvt.rn.f32.f64 %f0, %fd1;" + F32_OUT,
                               lambda a, b, c, e: convert(a, 32, "f", 64, "f").astype(np.uint64))
    cases["cvt.rn.f64.s16"] = ("cvt.u16.u32 %h1, %r5;\n  cvt.rn.f64.s16 %fd0, %h1;" + F64_OUT,
                               lambda a, b, c, e: convert(a & np.uint64(0xFFFF), 64, "f", 16, "s"))

    # 64-bit integer min/max (numba's poly_clip hits max.s64 with an immediate)
    from xcc.semantics import integer as I

    for op, fn in (("min", I.imin), ("max", I.imax)):
        for t in ("s64", "u64"):
            s = t == "s64"
            cases[f"{op}.{t}"] = (f"{op}.{t} %rd20, %rd7, %rd8;", lambda a, b, c, e, fn=fn, s=s: fn(a, b, 64, s))
            cases[f"{op}.{t}.imm"] = (f"{op}.{t} %rd20, %rd7, -1;",
                                      lambda a, b, c, e, fn=fn, s=s: fn(a, np.uint64(2**64 - 1), 64, s))
    return cases


CASES = _cases()

F32_EDGES = [0x0, 0x80000000, 0x1, 0x80000001, 0x7FFFFF, 0x807FFFFF, 0x800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,
             0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x3F800000, 0xBF800000,
             0x7E800000, 0x7EC00000, 0xFEFFFFFF, 0x00C00000, 0x4B000000, 0x4AFFFFFF, 0x3F000000, 0x3FC00000,
             0x3F400000, 0xCF000000, 0x4F000000, 0x5F000000, 0xDF000000, 0x5F800000]
F64_EDGES = [0x0, 1 << 63, 0x1, (1 << 63) | 1, 0xFFFFFFFFFFFFF, 0x10000000000000, 0x7FEFFFFFFFFFFFFF,
             0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
             0x7FF0000000000001, 0x7FF7FFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000,
             0x3FF8000000000000, 0x4330000000000000, 0x432FFFFFFFFFFFFF, 0x43E0000000000000, 0xC3E0000000000000,
             0x41E0000000000000, 0xC1E0000000000000, 0x41F0000000000000, 0x43F0000000000000, 0x7FE0000000000000,
             0x0010000000000001, 0x3FE0000000000001, 0xC3E0000000000001, 0x4000000000000000, 0x3CA0000000000000]


def _inputs(rng: np.random.Generator):
    """Four operand columns: random bits, random ordinary numbers (low word f32, whole word f64) and
    edge values in both the low word (f32) and the whole word (f64)."""
    cols = []
    f32_edges = np.array(F32_EDGES, np.uint64)
    f64_edges = np.array(F64_EDGES, np.uint64)
    for k in range(4):
        v = rng.integers(0, 2**64, N, dtype=np.uint64)
        nice32 = (rng.standard_normal(N // 4) * 2.0 ** rng.integers(-30, 30, N // 4)).astype(np.float32)
        nice64 = rng.standard_normal(N // 4) * 2.0 ** rng.integers(-60, 60, N // 4)
        v[: N // 4] = (v[: N // 4] & ~M32) | nice32.view(np.uint32).astype(np.uint64)
        v[N // 4: N // 2] = nice64.view(np.uint64)
        q = N // 2
        v[q: q + len(f32_edges)] = (v[q: q + len(f32_edges)] & ~M32) | np.roll(f32_edges, 5 * k)
        q += len(f32_edges)
        v[q: q + len(f64_edges)] = np.roll(f64_edges, 5 * k)
        q += len(f64_edges)
        v[q: q + 16] = rng.integers(-(2**40), 2**40, 16).astype(np.int64).astype(np.uint64)  # integers
        cols.append(rng.permutation(v) if k else v)
    # operands equal in some threads (x - x, min(x, x), setp.eq)
    cols[1][: N // 16] = cols[0][: N // 16]
    return cols


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_instruction_matches_semantics(name, opt_level):
    body, ref = CASES[name]
    check_instruction(name, body, ref, _inputs(np.random.default_rng(sum(map(ord, name)))), opt_level)
