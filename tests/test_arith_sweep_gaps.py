"""Forms the arithmetic qualifier sweep (tests/isa_sweep_arith.py, issue 19) found ptxas 13.0 takes and xcc refused,
now compiled: each run on the IR and ISA interpreters at -O0 and -O3 against a reference written from the PTX ISA
manual's definition (not xcc's semantics library).

* ``cvt.frnd.sat.{f32,f64}.{u,s}{8,16,32,64}`` (PTX ISA 9.7.9.21): the integer converted, then clamped to [0, 1];
* ``cvt.{rni,rzi,rmi,rpi}{.ftz}.sat.f32.f32``: rounded to an integral value (a subnormal input flushed to a zero of
  its sign first with .ftz), then clamped to [0, 1], NaN giving +0 (.sat's definition);
* ``and/or/xor.pred`` with a negated source predicate ``!p``;
* ``fma.rn.oob{.relu}.{f16,f16x2,bf16,bf16x2}``, ``fma.rn.oob.sat.{f16,f16x2}`` and ``fma.rz.oob.bf16`` (PTX ISA 9.7.4.4, "Out Of Bounds modifier"):
  +0 where a or b is the OOB-NaN 0x7FF7, per element;
* ``cvt.pack.sat.{u4,s4,u2,s2}.s32.b32`` (PTX ISA 9.7.9.22): 4- and 2-bit fields, c's bits above them."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import pytest
from half_ref import round_exact, value
from test_isa_gaps import ENGINES, HEADER, M32, M64, check, run, s32

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


OOB_NAN = 0x7FF7  # an H200 fills an f32 tensor map's out-of-bounds elements with 0x7FF77FF7: this, twice
HALF_EDGE = {  # 10 values: 1000 (a, b, c) rows, one block
    "f16": [OOB_NAN, 0xFFF7, 0x3C00, 0xBC00, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x7BFF, 0x3555],
    "bf16": [OOB_NAN, 0xFFF7, 0x3F80, 0xBF80, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7F7F, 0x3EAB],
}


def _fma_oob(a: int, b: int, c: int, t: str, rnd: str, relu: bool, sat: bool = False) -> int:
    """PTX ISA 9.7.4.4: d = a * b + c rounded once; .relu: a negative result (-0 too) becomes +0, NaN stays NaN
    (xcc's canonical 0x7FFF); .sat: clamped to [0, 1], NaN giving +0; .oob: +0 when either multiplicand is the
    OOB-NaN, whatever c is."""
    if OOB_NAN in (a, b):
        return 0
    if sat:
        r = _fma_oob(a, b, c, t, rnd, False)
        one = 0x3C00 if t == "f16" else 0x3F80
        v = value(r, t)
        return 0 if v == "nan" or r & 0x8000 else (one if v == "+inf" or v > 1 else r)
    x, y, z = value(a, t), value(b, t), value(c, t)
    if "nan" in (x, y, z):
        return 0x7FFF
    inf = {"+inf": 1, "-inf": -1}
    if x in inf or y in inf:
        other = y if x in inf else x
        if other == 0:
            return 0x7FFF
        sx = inf[x] if x in inf else (1 if x > 0 else -1)
        sy = inf[y] if y in inf else (1 if y > 0 else -1)
        if z in inf and inf[z] != sx * sy:
            return 0x7FFF
        r = (0x7C00 if t == "f16" else 0x7F80) | (0x8000 if sx * sy < 0 else 0)
    elif z in inf:
        r = (0x7C00 if t == "f16" else 0x7F80) | (0x8000 if inf[z] < 0 else 0)
    else:
        exact = x * y + z
        product_negative = (a ^ b) & 0x8000 != 0
        both_negative_zeros = exact == 0 and product_negative and c & 0x8000 != 0
        if exact == 0 and (x * y != 0 or z != 0):  # an exact zero sum of opposite terms: +0 (-0 rounding down)
            both_negative_zeros = rnd == "rm"
        r = round_exact(Fraction(exact), t, rnd, negative_zero=both_negative_zeros)
    if relu and r & 0x8000:
        return 0
    return r


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("spelling", ["rn.oob.f16", "rn.oob.relu.f16", "rn.oob.bf16", "rn.oob.relu.bf16",
                                      "rz.oob.bf16", "rn.oob.f16x2", "rn.oob.relu.f16x2", "rn.oob.bf16x2",
                                      "rn.oob.relu.bf16x2", "rn.oob.sat.f16", "rn.oob.sat.f16x2"])
def test_fma_oob(engine, opt, spelling):
    rnd, t = spelling.split(".")[0], spelling.split(".")[-1]
    relu, sat, scalar = "relu" in spelling, "sat" in spelling, t in ("f16", "bf16")
    edge = HALF_EDGE[t.removesuffix("x2")]
    if scalar:
        rows = [(a, b, c) for a in edge for b in edge for c in edge]
        body = (f"cvt.u16.u32 %h1, %r2; cvt.u16.u32 %h2, %r3; cvt.u16.u32 %h3, %r4; fma.{spelling} %h4, %h1, %h2, "
                "%h3; cvt.u64.u16 %rd8, %h4;")
        want = [_fma_oob(a, b, c, t, rnd, relu, sat) for a, b, c in rows]
    else:  # the two elements differ: element 1 takes the edge values in another order
        rev = edge[::-1]
        rows = [(a | rev[i] << 16, b | edge[j - 1] << 16, c | rev[k - 2] << 16)
                for i, a in enumerate(edge) for j, b in enumerate(edge) for k, c in enumerate(edge)]
        body = f"fma.{spelling} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
        h = t.removesuffix("x2")
        want = [_fma_oob(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF, h, rnd, relu, sat)
                | _fma_oob(a >> 16, b >> 16, c >> 16, h, rnd, relu, sat) << 16 for a, b, c in rows]
    got = run(body, rows, engine, opt, HEADER.replace(".version 8.0", ".version 8.1"))
    bad = [(hex(a), hex(b), hex(c), hex(g), hex(w)) for (a, b, c), g, w in zip(rows, got, want) if g != w]
    assert not bad, (len(bad), bad[:8])


PACK_EDGE = [0, 1, 2, 3, 4, 7, 8, 15, 16, 0x7FFFFFFF, -1, -2, -3, -8, -9, -0x80000000, 0x1234, -0x1234]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["u4", "s4", "u2", "s2"])
def test_cvt_pack_sub_byte(engine, opt, t):
    """cvt.pack.sat.{u4,s4,u2,s2}.s32.b32 d, a, b, c (PTX ISA 9.7.9.22): a and b (s32) clamped to [MIN, MAX] of
    the n-bit type; d[n-1:0] = tb, d[2n-1:n] = ta, d[31:2n] = c's low bits."""
    n = int(t[1:])
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t[0] == "s" else (0, (1 << n) - 1)
    rows = [(a & M32, b & M32, c) for a in PACK_EDGE for b in PACK_EDGE[::3] for c in (0, M32, 0x9ABCDEF1)]
    mask = (1 << n) - 1

    def want(a, b, c):
        ta, tb = (min(max(s32(x), lo), hi) for x in (a, b))
        return (tb & mask) | (ta & mask) << n | (c << 2 * n) & M32

    check(f"cvt.pack.sat.{t}.s32.b32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;", rows,
          [want(*r) for r in rows], engine, opt)


# ----------------------------------------------------------------------------- forms the manual does not define,
# which ptxas 13.0 takes: the meaning its sm_90a SASS gives them (see each lowering's docstring)


def _lop3(a: int, b: int, c: int, lut: int) -> int:
    return sum(((lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) & 1) << i for i in range(32))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("lut", ["256", "-1", "0x1E8", "-2", "0x100000096"])
def test_lop3_immlut_keeps_its_low_8_bits(engine, opt, lut):
    """ptxas 13.0: lop3.b32 with immLut 256 is LOP3.LUT ..., 0x0; -1 is 0xff; 0x1E8 is 0xe8."""
    rows = [(0x0F0F0F0F, 0x00FF00FF, 0x3333CCCC), (M32, 0, 0x12345678), (0xDEADBEEF, 0xCAFEF00D, 0x80000001)]
    table = int(lut, 0) & 0xFF
    check(f"lop3.b32 %r5, %r2, %r3, %r4, {lut}; cvt.u64.u32 %rd8, %r5;", rows,
          [_lop3(a, b, c, table) for a, b, c in rows], engine, opt)


F64_RCP = [0x3FF0000000000000, 0xC008000000000000, 0x4009_21FB_5444_2D18, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000,
           0x7FEFFFFFFFFFFFFF, 0xFFE0000000000001, 0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000,
           0x3FB999999999999A, 0x000FFFFFFFFFFFFF]


def _rcp_f64(bits: int, rnd: str) -> int:
    """1 / a rounded once to f64 in ``rnd`` (IEEE 754), subnormal inputs and results kept."""
    v = value(bits, "f64")
    negative = bits >> 63 == 1
    if v == 0:
        return 0x7FF0000000000000 | (1 << 63 if negative else 0)
    if v in ("+inf", "-inf"):
        return 1 << 63 if negative else 0
    return round_exact(1 / v, "f64", rnd)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_rcp_rnd_ftz_f64_is_rcp_rnd_f64(engine, opt, rnd):
    """ptxas 13.0 makes the same cubin of rcp.rnd.ftz.f64 and rcp.rnd.f64: .ftz flushes nothing."""
    check(f"rcp.{rnd}.ftz.f64 %fd3, %fd1; mov.b64 %rd8, %fd3;", [(x,) for x in F64_RCP],
          [_rcp_f64(x, rnd) for x in F64_RCP], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op, t", [("addc", "u16"), ("subc", "u16"), ("addc", "s16"), ("subc", "s16")])
def test_addc_subc_16_bit(engine, opt, op, t):
    """A 32-bit add.cc/sub.cc, then addc/subc on 16-bit halves of c: d = a + b + carry, a - b - borrow (mod 2^16),
    the carry (borrow) out of the 32-bit operation (ptxas 13.0: IADD3.X on the halves, the low 16 bits stored)."""
    first = "add" if op == "addc" else "sub"
    body = (f"{first}.cc.u32 %r5, %r2, %r3; cvt.u16.u32 %h1, %r4; shr.u32 %r6, %r4, 16; cvt.u16.u32 %h2, %r6; "
            f"{op}.{t} %h3, %h1, %h2; cvt.u64.u16 %rd8, %h3;")
    rows = [(a, b, c) for a in (0, 1, 0x80000000, M32) for b in (0, 1, M32) for c in (0, 0xFFFF0001, 0x0001FFFF,
                                                                                 0x80007FFF, M32)]

    def want(a, b, c):
        x, y = c & 0xFFFF, c >> 16
        if op == "addc":
            return (x + y + (a + b > M32)) & 0xFFFF
        return (x - y - (a < b)) & 0xFFFF

    check(body, rows, [want(*r) for r in rows], engine, opt)


HALF2_CMP = {"f16": [0x3C00, 0xBC00, 0x0000, 0x8000, 0x7C00, 0x7E00, 0x3C01], "bf16": [0x3F80, 0xBF80, 0x0000,
                                                                                      0x8000, 0x7F80, 0x7FC0]}


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("boolop", [None, "and"])
def test_setp_x2_with_one_predicate_compares_element_0(engine, opt, t, boolop):
    """ptxas 13.0: setp.lt.f16x2 p, a, b is HSETP2.LT.AND P0, PT, a.H0_H0, b.H0_H0, PT: p of the p|q form."""
    h = t.removesuffix("x2")
    edge = HALF2_CMP[h]
    # element 1 of a and b always compares true, so a result from it would show
    rows = [(a | edge[0] << 16 ^ 0x8000 << 16, b | edge[0] << 16, c) for a in edge for b in edge for c in (0, 1)]
    extra = ", %p2" if boolop else ""
    body = (f"setp.ne.u32 %p2, %r4, 0; setp.lt{'.' + boolop if boolop else ''}.{t} %p1, %r2, %r3{extra}; "
            "selp.u64 %rd8, 1, 0, %p1;")

    def lt(x, y):
        vx, vy = value(x, h), value(y, h)
        if "nan" in (vx, vy):
            return False
        inf = {"+inf": Fraction(10) ** 100, "-inf": -Fraction(10) ** 100}
        return inf.get(vx, vx) < inf.get(vy, vy)

    want = [int(lt(a & 0xFFFF, b & 0xFFFF) and (not boolop or c != 0)) for a, b, c in rows]
    check(body, rows, want, engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("op", ["vadd", "vsub", "vabsdiff", "vmin", "vmax"])
def test_scalar_video_c_without_op2_or_dsel_is_ignored(engine, opt, op):
    """ptxas 13.0 makes the same SASS of vop.u32.u32.u32 d, a, b, c as of d, a, b (c is not even loaded); also with
    .s32 types, .sat and source selectors."""
    rows = [(a, b, c) for a in (0, 1, 0x7FFFFFFF, 0x80000000, M32, 0x12345678) for b in (0, 2, 0x80000001, M32)
            for c in (0, 0xDEADBEEF)]
    fn = {"vadd": lambda x, y: x + y, "vsub": lambda x, y: x - y, "vabsdiff": lambda x, y: abs(x - y),
          "vmin": min, "vmax": max}[op]
    check(f"{op}.u32.u32.u32 %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;", rows,
          [fn(a, b) & M32 for a, b, c in rows], engine, opt)

    def sel(x, shift, width):  # a selected part, sign-extended
        v = x >> shift & ((1 << width) - 1)
        return v - (1 << width) if v >> (width - 1) else v

    want = [min(max(fn(sel(a, 8, 8), sel(b, 16, 16)), -(1 << 31)), (1 << 31) - 1) & M32 for a, b, c in rows]
    check(f"{op}.s32.s32.s32.sat %r5, %r2.b1, %r3.h1, %r4; cvt.u64.u32 %rd8, %r5;", rows, want, engine, opt)
