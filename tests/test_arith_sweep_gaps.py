"""Forms the arithmetic qualifier sweep (tests/isa_sweep_arith.py, issue 19) found ptxas 13.0 takes and xcc refused,
now compiled: each run on the IR and ISA interpreters at -O0 and -O3 against a reference written from the PTX ISA
manual's definition (not xcc's semantics library).

* ``cvt.frnd.sat.{f32,f64}.{u,s}{8,16,32,64}`` (PTX ISA 9.7.9.21): the integer converted, then clamped to [0, 1];
* ``cvt.{rni,rzi,rmi,rpi}{.ftz}.sat.f32.f32``: rounded to an integral value (a subnormal input flushed to a zero of
  its sign first with .ftz), then clamped to [0, 1], NaN giving +0 (.sat's definition);
* ``and/or/xor.pred`` with a negated source predicate ``!p``."""

from __future__ import annotations

import math
import struct

import pytest
from test_isa_gaps import ENGINES, M32, M64, check

INTS = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]
EDGES = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, M32,
         1 << 32, (1 << 63) - 1, 1 << 63, M64, 0x12345678_9ABCDEF0]


def _int(x: int, t: str) -> int:
    """The value of ``t`` held in the low bits of ``x``."""
    bits = int(t[1:])
    v = x & ((1 << bits) - 1)
    return v - (1 << bits) if t[0] == "s" and v >> (bits - 1) else v


def _sat01(v: float) -> float:
    """.sat: clamped to [0, 1], NaN and -0 giving +0."""
    if math.isnan(v) or v <= 0:
        return 0.0
    return min(v, 1.0)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dst", ["f32", "f64"])
@pytest.mark.parametrize("src", INTS)
def test_cvt_sat_int_to_float(engine, opt, dst, src):
    rnd = {"f32": "rz", "f64": "rn"}[dst]
    if src[1:] == "64":
        a = "%rd5"
    elif src[1:] == "32":
        a = "%r2"
    else:
        a = "%h1"
    pre = "cvt.u16.u32 %h1, %r2; " if a == "%h1" else ""
    if dst == "f32":
        body = pre + f"cvt.{rnd}.sat.f32.{src} %f3, {a}; mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;"
        want = [struct.unpack("<I", struct.pack("<f", _sat01(float(_int(x, src)))))[0] for x in EDGES]
    else:
        body = pre + f"cvt.{rnd}.sat.f64.{src} %fd3, {a}; mov.b64 %rd8, %fd3;"
        want = [struct.unpack("<Q", struct.pack("<d", _sat01(float(_int(x, src)))))[0] for x in EDGES]
    check(body, [(x,) for x in EDGES], want, engine, opt)


F32 = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x3F000000, 0xBF000000, 0x3F000001, 0x3EFFFFFF,
       0x3F800000, 0x3FC00000, 0xBF800000, 0x40490FDB, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x3F7FFFFF,
       0xBF7FFFFF, 0x3F400000]
ROUND = {"rni": lambda v: float(round(v)), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}


def _round_sat(bits: int, rnd: str, ftz: bool) -> int:
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    if ftz and bits & 0x7F800000 == 0:
        v = 0.0
    if not math.isnan(v) and not math.isinf(v):
        v = float(ROUND[rnd](v))  # Python's round() rounds half to even, as .rni does
    return struct.unpack("<I", struct.pack("<f", _sat01(v)))[0]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rnd", ["rni", "rzi", "rmi", "rpi"])
@pytest.mark.parametrize("ftz", [False, True])
def test_cvt_round_integral_sat_f32(engine, opt, rnd, ftz):
    body = f"cvt.{rnd}{'.ftz' if ftz else ''}.sat.f32.f32 %f3, %f1; mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;"
    check(body, [(x,) for x in F32], [_round_sat(x, rnd, ftz) for x in F32], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op, neg", [("and", 0), ("or", 1), ("xor", 0), ("and", 1)])
def test_logic_pred_with_a_negated_source(engine, opt, op, neg):
    srcs = ["!%p1, %p2", "%p1, !%p2"][neg]
    body = (f"setp.ne.u32 %p1, %r2, 0; setp.ne.u32 %p2, %r3, 0; {op}.pred %p3, {srcs};"
            " selp.u64 %rd8, 1, 0, %p3;")
    fn = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}[op]
    rows = [(a, b) for a in (0, 1) for b in (0, 5)]
    want = [int(fn(not a if neg == 0 else bool(a), bool(b) if neg == 0 else not b)) for a, b in rows]
    check(body, rows, want, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dst", ["f32", "f64"])
@pytest.mark.parametrize("src, reg", [("u8", "%h1"), ("u16", "%r2"), ("u8", "%r2")])
def test_cvt_unsigned_narrow_to_float_reads_only_its_bits(engine, opt, dst, src, reg):
    """cvt.rn.fNN.u8/.u16 from a wider register (PTX ISA 6.4.1, relaxed cvt operands) converts the low 8/16 bits;
    the ISA engine once converted the whole register."""
    out = "%f3" if dst == "f32" else "%fd3"
    move = "mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;" if dst == "f32" else "mov.b64 %rd8, %fd3;"
    body = f"cvt.u16.u32 %h1, %r2; cvt.rn.{dst}.{src} {out}, {reg}; {move}"
    fmt = "<f" if dst == "f32" else "<d"
    want = [int.from_bytes(struct.pack(fmt, float(_int(x, src))), "little") for x in EDGES]
    check(body, [(x,) for x in EDGES], want, engine, opt)


F64 = [0, 1 << 63, 1, (1 << 63) | 1, 0x3FE0000000000000, 0xBFE0000000000000, 0x3FE0000000000001, 0x3FEFFFFFFFFFFFFF,
       0x3FF0000000000000, 0x3FF0000000000001, 0x3FF8000000000000, 0xBFF0000000000000, 0x400921FB54442D18,
       0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000001, 0x0010000000000000]


def _round_sat_f64(bits: int, rnd: str | None) -> int:
    """.sat on f64 (PTX ISA 9.7.9.21): [0, 1], NaN giving +0; a -0 stays -0 (only a negative nonzero value is
    raised to +0)."""
    v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if rnd and not math.isnan(v) and not math.isinf(v):
        v = math.copysign(float(ROUND[rnd](v)), v)  # an integral result keeps the input's sign (-0.4 -> -0)
    if math.isnan(v) or (v < 0):
        v = 0.0
    elif v > 1:
        v = 1.0
    return struct.unpack("<Q", struct.pack("<d", v))[0]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rnd", [None, "rni", "rzi", "rmi", "rpi"])
def test_cvt_sat_f64(engine, opt, rnd):
    body = f"cvt{'.' + rnd if rnd else ''}.sat.f64.f64 %fd3, %fd1; mov.b64 %rd8, %fd3;"
    check(body, [(x,) for x in F64], [_round_sat_f64(x, rnd) for x in F64], engine, opt)


TESTP_LITERALS = [0x3F800000, 0x7F800000, 0x7FC00000, 0x00000001, 0x00000000, 0x80800000]


def _testp(cls: str, bits: int) -> int:
    """testp (PTX ISA 9.7.3.12) on an f32 bit pattern."""
    exp, man = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    nan, inf = exp == 0xFF and man != 0, exp == 0xFF and man == 0
    return int({"finite": not nan and not inf, "infinite": inf, "number": not nan, "notanumber": nan,
                "normal": exp < 0xFF and not (exp == 0 and man != 0),  # zero counts (test_isa_gaps_bits' reading)
                "subnormal": exp == 0 and man != 0}[cls])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("cls", ["finite", "infinite", "number", "notanumber", "normal", "subnormal"])
def test_testp_of_a_float_literal(engine, opt, cls):
    """testp with a 0fXXXXXXXX operand (ptxas 13.0 takes it; xcc once read the literal as a .u32 and refused)."""
    body = " ".join(f"testp.{cls}.f32 %p1, 0f{b:08X}; selp.u64 %rd9, {1 << i}, 0, %p1; or.b64 %rd8, %rd8, %rd9;"
                    for i, b in enumerate(TESTP_LITERALS))
    want = sum(_testp(cls, b) << i for i, b in enumerate(TESTP_LITERALS))
    check(body, [(0,)], [want], engine, opt)
