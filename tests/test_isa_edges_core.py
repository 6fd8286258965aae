"""Issue 19's per-instruction edge values for the core PTX arithmetic forms: integer add/sub/mul/mad (.lo,
.hi, .wide), div/rem, min/max/abs/neg, shifts, carry chains, bfe/bfi/prmt; f32/f64 add/sub/mul/fma/div/sqrt in
every rounding mode with .ftz/.sat; cvt between floats and integers (and to narrow integers in a 32-bit
register); setp with every comparison. Each form is a one-instruction kernel (tests/test_isa_gaps.py's harness)
run on both engines at -O0 and -O3; the expected values restate the PTX ISA 9.0 manual's definitions with
Python integers and ``fractions.Fraction`` (IEEE 754 rounding written out here), never xcc.semantics. Where PTX
leaves a result open (division by zero, NaN results, carry before any ``.cc``), the reference follows the rule
docs/semantics.md records for the H200 ("Where PTX leaves the result open"). The fast tier runs a sample of the
forms; the rest are ``slow``."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from test_isa_gaps import ENGINES, INT_RANGE, M32, M64, _f2i_ref, _round, clamp, run

SAMPLE = 7  # every SAMPLE-th form runs in the fast tier


def sampled(forms):
    """``forms`` as pytest params, all but every SAMPLE-th one marked slow."""
    return [f if i % SAMPLE == 0 else pytest.param(f, marks=pytest.mark.slow) for i, f in enumerate(forms)]


def check_rows(body: str, rows, want, engine: str, opt: int) -> None:
    got = []
    for k in range(0, len(rows), 256):
        got += run(body, rows[k:k + 256], engine, opt)
    bad = [(i, [hex(v & M64) for v in rows[i]], hex(g), hex(w & M64)) for i, (g, w) in enumerate(zip(got, want))
           if g != w & M64]
    assert not bad, (len(bad), bad[:8])


def val(x: int, t: str) -> int:
    """The low bits of ``x`` read as integer type ``t`` (s/u/b + width)."""
    w = int(t[1:])
    x &= (1 << w) - 1
    return x - (1 << w) if t[0] == "s" and x >> (w - 1) else x


def int_edges(w: int) -> list[int]:
    """Edge values of a ``w``-bit integer (as unsigned bit patterns): 0, 1, -1, the extremes and their
    neighbours, alternating bits, the half-width boundary."""
    m, h = (1 << w) - 1, 1 << (w - 1)
    vals = [0, 1, 2, 3, 7, h - 1, h, h + 1, h - 2, m, m - 1, m - 2, m - 6, m // 3, 2 * (m // 3),
            1 << (w // 2), (1 << (w // 2)) - 1]
    return [v & m for v in vals]


# ----------------------------------------------------------------------------- registers by width

def regs(w: int):
    """(a, b, c, d, setup, store) for a ``w``-bit form: the inputs' low ``w`` bits in a, b, c; d stored zero-
    extended into the row's output."""
    if w == 16:
        return ("%h1", "%h2", "%h3", "%h4", "cvt.u16.u32 %h1, %r2; cvt.u16.u32 %h2, %r3; cvt.u16.u32 %h3, %r4;",
                "cvt.u64.u16 %rd8, %h4;")
    if w == 32:
        return "%r2", "%r3", "%r4", "%r5", "", "cvt.u64.u32 %rd8, %r5;"
    return "%rd5", "%rd6", "%rd7", "%rd11", "", "mov.b64 %rd8, %rd11;"


WIDE = {16: ("%r5", "cvt.u64.u32 %rd8, %r5;", "%r4"), 32: ("%rd11", "mov.b64 %rd8, %rd11;", "%rd7")}


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_ref(op: str, t: str, a: int, b: int, c: int) -> int:
    """``op``.``t`` (PTX ISA 9.0 9.7.1) of the raw inputs, as the destination's bits (wide forms: 2w bits)."""
    w = int(t[1:])
    m = (1 << w) - 1
    a, b, cv = val(a, t), val(b, t), val(c, t)
    if op == "add":
        return (a + b) & m
    if op == "sub":
        return (a - b) & m
    if op in ("add.sat", "sub.sat"):
        lo, hi = INT_RANGE[t]
        return clamp(a + b if op == "add.sat" else a - b, lo, hi) & m
    if op == "mul.lo":
        return (a * b) & m
    if op == "mul.hi":
        return ((a * b) >> w) & m
    if op == "mul.wide":
        return (a * b) & ((1 << 2 * w) - 1)
    if op == "mad.lo":
        return (a * b + cv) & m
    if op == "mad.hi":
        return (((a * b) >> w) + cv) & m
    if op == "mad.wide":
        return (a * b + val(c, t[0] + str(2 * w))) & ((1 << 2 * w) - 1)
    if op in ("div", "rem"):
        if b == 0:  # docs/semantics.md: integer div and rem by zero give all ones (the H200's results)
            return m
        q = _div(a, b)  # INT_MIN / -1 wraps to INT_MIN, its remainder is 0
        return (q if op == "div" else a - b * q) & m
    if op in ("min", "max"):
        return (min(a, b) if op == "min" else max(a, b)) & m
    if op == "abs":
        return abs(a) & m
    if op == "neg":
        return -a & m
    raise AssertionError(op)


INT_FORMS = ([(op, t) for op in ("add", "sub", "mul.lo", "mul.hi", "mad.lo", "mad.hi", "div", "rem", "min", "max")
              for t in ("s16", "u16", "s32", "u32", "s64", "u64")]
             + [(op, t) for op in ("mul.wide", "mad.wide") for t in ("s16", "u16", "s32", "u32")]
             + [(op, t) for op in ("abs", "neg") for t in ("s16", "s32", "s64")]
             + [("add.sat", "s32"), ("sub.sat", "s32")])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(INT_FORMS), ids=lambda f: ".".join(f))
def test_integer_arithmetic_edges(engine, opt, form):
    op, t = form
    w = int(t[1:])
    a, b, c, d, setup, store = regs(w)
    name, mods = op.split(".")[0], op.split(".")[1:]
    if op.endswith("wide"):
        d, store, cwide = WIDE[w]
        if name == "mad":
            c = cwide
    srcs = {"abs": [a], "neg": [a], "mad": [a, b, c]}.get(name, [a, b])
    inst = f"{'.'.join([name] + mods)}.{t} {d}, {', '.join(srcs)};"
    vals = int_edges(w)
    rows = [(x, y, vals[(i * 5 + j) % len(vals)]) for i, x in enumerate(vals) for j, y in enumerate(vals)]
    if name == "mad" and op.endswith("wide"):
        wide = int_edges(2 * w)
        rows = [(x, y, wide[(i * 3) % len(wide)]) for i, (x, y, _) in enumerate(rows)]
    want = [int_ref(op, t, *r) for r in rows]
    check_rows(setup + inst + store, rows, want, engine, opt)


# ----------------------------------------------------------------------------- shifts

SHIFT_FORMS = [(op, t) for op in ("shl", "shr") for t in ("b16", "b32", "b64")] + \
    [("shr", t) for t in ("u16", "s16", "u32", "s32", "u64", "s64")]


def shift_ref(op: str, t: str, a: int, n: int) -> int:
    """shl/shr (PTX ISA 9.0 9.7.8.7-8): shift amounts above the width are clamped to the width; shr.s fills
    with the sign bit, the others with zeros."""
    w = int(t[1:])
    n = min(n & 0xFFFFFFFF, w)
    if op == "shl":
        return (a << n) & ((1 << w) - 1)
    return (val(a, t) >> n) & ((1 << w) - 1)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(SHIFT_FORMS), ids=lambda f: ".".join(f))
def test_shift_counts_at_and_beyond_the_width(engine, opt, form):
    op, t = form
    w = int(t[1:])
    a, _, _, d, setup, store = regs(w)
    counts = [0, 1, w - 1, w, w + 1, 255, 256, 0x7FFFFFFF, 0xFFFFFFFF, 2 * w]
    rows = [(x, n) for x in int_edges(w) for n in counts]
    check_rows(f"{setup}{op}.{t} {d}, {a}, %r3;{store}", rows, [shift_ref(op, t, x, n) for x, n in rows], engine, opt)


# ----------------------------------------------------------------------------- carry chains

def _words(x: int, n: int, w: int) -> list[int]:
    return [(x >> (w * i)) & ((1 << w) - 1) for i in range(n)]


CHAINS = [  # (name, width, body producing %rd8 from words, reference over the inputs)
    ("add96_lo", 32, "add.cc.u32 %r5, %r2, %r3; addc.cc.u32 %r6, %r3, %r4; addc.cc.u32 %r7, %r4, %r2; "
     "addc.u32 %r8, 0, 0; mov.b64 %rd8, {%r5, %r6};",
     lambda a, b, c: ((a | b << 32 | c << 64) + (b | c << 32 | a << 64)) & M64),
    ("add96_hi", 32, "add.cc.u32 %r5, %r2, %r3; addc.cc.u32 %r6, %r3, %r4; addc.cc.u32 %r7, %r4, %r2; "
     "addc.u32 %r8, 0, 0; mov.b64 %rd8, {%r7, %r8};",
     lambda a, b, c: ((a | b << 32 | c << 64) + (b | c << 32 | a << 64)) >> 64),
    ("sub96_lo", 32, "sub.cc.u32 %r5, %r2, %r3; subc.cc.u32 %r6, %r3, %r4; subc.cc.u32 %r7, %r4, %r2; "
     "subc.u32 %r8, 0, 0; mov.b64 %rd8, {%r5, %r6};",
     lambda a, b, c: ((a | b << 32 | c << 64) - (b | c << 32 | a << 64)) & M64),
    ("sub96_hi", 32, "sub.cc.u32 %r5, %r2, %r3; subc.cc.u32 %r6, %r3, %r4; subc.cc.u32 %r7, %r4, %r2; "
     "subc.u32 %r8, 0, 0; mov.b64 %rd8, {%r7, %r8};",
     lambda a, b, c: (((a | b << 32 | c << 64) - (b | c << 32 | a << 64)) >> 64) & M64),
    ("add128_lo", 64, "add.cc.u64 %rd11, %rd5, %rd6; addc.cc.u64 %rd12, %rd7, %rd5; addc.u64 %rd13, 0, 0; "
     "mov.b64 %rd8, %rd11;", lambda a, b, c: (a + b) & M64),
    ("add128_hi", 64, "add.cc.u64 %rd11, %rd5, %rd6; addc.cc.u64 %rd12, %rd7, %rd5; addc.u64 %rd13, 0, 0; "
     "mov.b64 %rd8, %rd12;", lambda a, b, c: (((a | c << 64) + (b | a << 64)) >> 64) & M64),
    ("add128_out", 64, "add.cc.u64 %rd11, %rd5, %rd6; addc.cc.u64 %rd12, %rd7, %rd5; addc.u64 %rd13, 0, 0; "
     "mov.b64 %rd8, %rd13;", lambda a, b, c: ((a | c << 64) + (b | a << 64)) >> 128),
    ("sub128_hi", 64, "sub.cc.u64 %rd11, %rd5, %rd6; subc.cc.u64 %rd12, %rd7, %rd5; subc.u64 %rd13, 0, 0; "
     "mov.b64 %rd8, %rd12;", lambda a, b, c: (((a | c << 64) - (b | a << 64)) >> 64) & M64),
    ("sub128_out", 64, "sub.cc.u64 %rd11, %rd5, %rd6; subc.cc.u64 %rd12, %rd7, %rd5; subc.u64 %rd13, 0, 0; "
     "mov.b64 %rd8, %rd13;", lambda a, b, c: (((a | c << 64) - (b | a << 64)) >> 128) & M64),
    # docs/semantics.md "Carry chains": CF is the GPU's carry, subc computes a + ~b + CF (mixed chains)
    ("add_then_subc", 32, "add.cc.u32 %r5, %r2, %r3; subc.u32 %r6, %r4, %r2; cvt.u64.u32 %rd8, %r6;",
     lambda a, b, c: (c + (~a & 0xFFFFFFFF) + ((a + b) >> 32)) & 0xFFFFFFFF),
    ("sub_then_addc", 64, "sub.cc.u64 %rd11, %rd5, %rd6; addc.u64 %rd8, %rd7, %rd5;",
     lambda a, b, c: (c + a + (a >= b)) & M64),
    # docs/semantics.md: before any .cc instruction CF = 0: addc adds 0, subc subtracts 1
    ("addc_first", 32, "addc.u32 %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;", lambda a, b, c: (a + b) & 0xFFFFFFFF),
    ("subc_first", 32, "subc.u32 %r5, %r2, %r3; cvt.u64.u32 %rd8, %r5;",
     lambda a, b, c: (a - b - 1) & 0xFFFFFFFF),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: c[0])
def test_carry_and_borrow_chains(engine, opt, chain):
    """add.cc/addc/sub.cc/subc (PTX ISA 9.0 9.7.2): multi-word sums and differences at 32 and 64 bits,
    carries propagated through every word (all-ones words carry through)."""
    _, w, body, ref = chain
    e = int_edges(w)
    rows = [(x, y, e[(i + j) % len(e)]) for i, x in enumerate(e) for j, y in enumerate(e)]
    check_rows(body, rows, [ref(*r) for r in rows], engine, opt)


# ----------------------------------------------------------------------------- bfe, bfi, prmt

def bfe_ref(t: str, a: int, pos: int, ln: int) -> int:
    """bfe (PTX ISA 9.0 9.7.8.13) pseudo-code."""
    msb = int(t[1:]) - 1
    pos, ln = pos & 0xFF, ln & 0xFF
    sbit = 0 if t[0] == "u" or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(msb + 1):
        bit = (a >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit
        d |= bit << i
    return d


def bfi_ref(t: str, a: int, b: int, pos: int, ln: int) -> int:
    """bfi (PTX ISA 9.0 9.7.8.14) pseudo-code: a's low bits inserted into b."""
    msb = int(t[1:]) - 1
    pos, ln, f = pos & 0xFF, ln & 0xFF, b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


FIELDS = [(0, 0), (0, 1), (0, 8), (3, 5), (7, 9), (0, 31), (0, 32), (1, 31), (31, 1), (31, 2), (32, 1), (30, 7),
          (63, 1), (62, 4), (64, 1), (0, 64), (1, 63), (255, 3), (0x103, 0x104), (16, 255), (5, 0x100)]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_bfe_positions_and_lengths_at_the_edges(engine, opt, t):
    w = int(t[1:])
    a, _, _, d, _, store = regs(w)
    rows = [(x, p, n) for x in int_edges(w) + [0x1234567890ABCDEF & ((1 << w) - 1)] for p, n in FIELDS]
    check_rows(f"bfe.{t} {d}, {a}, %r3, %r4;{store}", rows, [bfe_ref(t, *r) for r in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("t", ["b32", "b64"])
def test_bfi_positions_and_lengths_at_the_edges(engine, opt, t):
    w = int(t[1:])
    a, b, _, d, _, store = regs(w)
    m = (1 << w) - 1
    rows = [(x, y, p | n << 32) for x, y in [(m, 0), (0, m), (0x5A5A5A5A5A5A5A5A & m, 0x0F0F0F0FF0F0F0F0 & m)]
            for p, n in FIELDS]
    body = f"cvt.u32.u64 %r8, %rd7; shr.u64 %rd12, %rd7, 32; cvt.u32.u64 %r9, %rd12; bfi.{t} {d}, {a}, {b}, %r8, %r9;"
    check_rows(body + store, rows, [bfi_ref(t, x, y, pn & 0xFFFFFFFF, pn >> 32) for x, y, pn in rows], engine, opt)


def prmt_ref(mode: str, a: int, b: int, c: int) -> int:
    """prmt.b32 (PTX ISA 9.0 9.7.8.9): bytes of {b, a}; the default mode's selector nibbles (bit 3: the byte's
    sign replicated), the named modes' tables on c[1:0]."""
    src = [((b << 32 | a) >> (8 * i)) & 0xFF for i in range(8)]
    s = c & 3
    pick = {"f4e": lambda i: src[(s + i) & 7], "b4e": lambda i: src[(s - i) & 7], "rc8": lambda i: src[s],
            "ecl": lambda i: src[max(i, s)], "ecr": lambda i: src[min(i, s)],
            "rc16": lambda i: src[(s & 1) * 2 + (i & 1)]}
    out = 0
    for i in range(4):
        if mode == "":
            n = (c >> (4 * i)) & 0xF
            byte = (0xFF if src[n & 7] >> 7 else 0) if n & 8 else src[n & 7]
        else:
            byte = pick[mode](i)
        out |= byte << (8 * i)
    return out


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", ["", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt_every_mode(engine, opt, mode):
    sels = [0x3210, 0x7654, 0x0000, 0x8888, 0xFEDC, 0x89AB, 0x1F2E, 0x4567, 0xFFFF0123, 0, 1, 2, 3, 7]
    rows = [(a, b, s) for a, b in [(0x80FF7F01, 0x12C3447E), (0xDEADBEEF, 0x00800080)] for s in sels]
    body = f"prmt.b32{'.' + mode if mode else ''} %r5, %r2, %r3, %r4; cvt.u64.u32 %rd8, %r5;"
    check_rows(body, rows, [prmt_ref(mode, *r) for r in rows], engine, opt)


# ----------------------------------------------------------------------------- IEEE 754 binary32/binary64, exactly

FMT = {"f32": (24, 8), "f64": (53, 11)}  # significand bits (with the hidden one), exponent bits
QUIET = {"f32": 1 << 22, "f64": 1 << 51}
CANON_F32_NAN, DEFAULT_F64_NAN = 0x7FFFFFFF, 0xFFF8000000000000


def fparams(fmt: str):
    p, e = FMT[fmt]
    bias = (1 << (e - 1)) - 1
    return p, e, bias, 1 - bias, p + e  # emin, total width


def decode(bits: int, fmt: str, ftz: bool = False):
    """(kind, negative, magnitude): kind 'nan', 'inf' or 'num' (magnitude a Fraction); ``ftz`` reads a
    subnormal as the zero of its sign."""
    p, e, bias, emin, w = fparams(fmt)
    neg = bool(bits >> (w - 1) & 1)
    ex, man = bits >> (p - 1) & ((1 << e) - 1), bits & ((1 << (p - 1)) - 1)
    if ex == (1 << e) - 1:
        return ("nan" if man else "inf"), neg, None
    if ex == 0:
        return "num", neg, Fraction(0) if ftz else Fraction(man, 1 << (p - 1)) * Fraction(2) ** emin
    return "num", neg, (1 + Fraction(man, 1 << (p - 1))) * Fraction(2) ** (ex - bias)


def floor_log2(x: Fraction) -> int:
    k = x.numerator.bit_length() - x.denominator.bit_length()
    return k if Fraction(2) ** k <= x else k - 1


def round_int(n: int, frac_cmp: int, exact: bool, neg: bool, mode: str) -> int:
    """The magnitude's integer part ``n`` rounded in ``mode``: ``frac_cmp`` compares the dropped fraction with
    one half (-1, 0, 1); ``exact`` says nothing was dropped."""
    if exact:
        return n
    if mode == "rn":
        return n + (frac_cmp > 0 or (frac_cmp == 0 and n % 2 == 1))
    up = {"rz": False, "rm": neg, "rp": not neg}[mode]
    return n + up


def encode(neg: bool, mag, fmt: str, mode: str, ftz: bool = False, sqrt_of=None) -> int:
    """The value ``(-1)^neg * mag`` rounded to ``fmt`` in ``mode`` (IEEE 754: subnormals kept, overflow to
    infinity or the largest finite number per mode; a result rounded to a subnormal with ``ftz``: a signed
    zero). ``mag`` None is an infinity. ``sqrt_of``: round sqrt(sqrt_of) instead of ``mag``."""
    p, e, bias, emin, w = fparams(fmt)
    sign = int(neg) << (w - 1)
    inf, maxf = ((1 << e) - 1) << (p - 1), (((1 << e) - 1) << (p - 1)) - 1
    if mag is None:
        return sign | inf
    if sqrt_of is not None:
        if sqrt_of == 0:
            return sign
        k = floor_log2(sqrt_of)
        q = max(k // 2, emin) - (p - 1)
        y = sqrt_of / Fraction(2) ** (2 * q)  # sqrt(y) = result / 2^q
        n = math.isqrt(math.floor(y))
        exact = Fraction(n * n) == y
        half = (Fraction(2 * n + 1, 2)) ** 2
        n = round_int(n, (y > half) - (y < half), exact, neg, mode)
    else:
        if mag == 0:
            return sign
        q = max(floor_log2(mag), emin) - (p - 1)
        y = mag / Fraction(2) ** q
        n, r = math.floor(y), y - math.floor(y)
        n = round_int(n, (r > Fraction(1, 2)) - (r < Fraction(1, 2)), r == 0, neg, mode)
    v = n * Fraction(2) ** q
    if v >= Fraction(2) ** (bias + 1):  # overflow, after rounding
        to_inf = {"rn": True, "rz": False, "rm": neg, "rp": not neg}[mode]
        return sign | (inf if to_inf else maxf)
    if n < (1 << (p - 1)) or v < Fraction(2) ** emin:  # subnormal (or zero)
        return sign if ftz else sign | n
    k = floor_log2(v)
    return sign | (k + bias) << (p - 1) | (int(v / Fraction(2) ** (k - p + 1)) - (1 << (p - 1)))


def nan_result(fmt: str, op: str, ops) -> int:
    """docs/semantics.md "Where PTX leaves the result open", NaN results: f32 the canonical 0x7FFFFFFF; f64 a
    NaN operand quieted (add/sub/mul b's, else a's; fma b's, c's, a's; div a's, b's; sqrt a's), else
    0xFFF8000000000000."""
    if fmt == "f32":
        return CANON_F32_NAN
    order = {"add": (1, 0), "sub": (1, 0), "mul": (1, 0), "fma": (1, 2, 0), "div": (0, 1), "sqrt": (0,)}[op]
    for i in order:
        if decode(ops[i], fmt)[0] == "nan":
            return ops[i] | QUIET[fmt]
    return DEFAULT_F64_NAN


def float_ref(op: str, fmt: str, mode: str, ftz: bool, sat: bool, ops) -> int:
    """``op``.``mode``{.ftz}{.sat}.``fmt`` (PTX ISA 9.0 9.7.3) of the operand bits ``ops``."""
    xs = [decode(b, fmt, ftz) for b in ops[:{"sqrt": 1, "fma": 3}.get(op, 2)]]
    res = float_exact(op, fmt, mode, ftz, xs)
    if res is None:
        res = nan_result(fmt, op, ops)
    if sat:  # clamp to [0, 1]; NaN and -0.0 give +0.0 (docs/semantics.md ".sat of -0.0")
        kind, neg, mag = decode(res, fmt)
        if kind == "nan" or neg:
            return 0
        if kind == "inf" or mag > 1:
            return encode(False, Fraction(1), fmt, "rn")
    return res


def float_exact(op, fmt, mode, ftz, xs):
    """The rounded result's bits, or None for a NaN result."""
    if any(k == "nan" for k, _, _ in xs):
        return None
    if op == "sqrt":
        k, neg, m = xs[0]
        if neg and (k == "inf" or m != 0):
            return None
        return encode(neg, None, fmt, mode) if k == "inf" else encode(neg, m, fmt, mode, ftz, sqrt_of=m)
    if op == "sub":
        xs = [xs[0], (xs[1][0], not xs[1][1], xs[1][2])]
    if op in ("mul", "fma", "div"):
        (ka, na, ma), (kb, nb, mb) = xs[0], xs[1]
        pneg = na != nb
        if op == "div":
            if (ka == "inf" and kb == "inf") or (ka == "num" and kb == "num" and ma == 0 and mb == 0):
                return None
            if ka == "inf" or (kb == "num" and mb == 0):
                return encode(pneg, None, fmt, mode)
            return encode(pneg, Fraction(0) if kb == "inf" else ma / mb, fmt, mode, ftz)
        if (ka == "inf" and kb == "num" and mb == 0) or (kb == "inf" and ka == "num" and ma == 0):
            return None
        prod = ("inf" if "inf" in (ka, kb) else "num", pneg, None if "inf" in (ka, kb) else ma * mb)
        if op == "mul":
            return encode(pneg, prod[2], fmt, mode, ftz)
        xs = [prod, xs[2]]
    (ka, na, ma), (kb, nb, mb) = xs[0], xs[1]
    if ka == "inf" or kb == "inf":
        if ka == kb == "inf" and na != nb:
            return None
        return encode(na if ka == "inf" else nb, None, fmt, mode)
    s = (-ma if na else ma) + (-mb if nb else mb)
    if s == 0:  # exact zero: the common sign of two zeros, otherwise -0 only when rounding down
        return encode(na if (ma == 0 and mb == 0 and na == nb) else mode == "rm", Fraction(0), fmt, mode)
    return encode(s < 0, abs(s), fmt, mode, ftz)


F32_EDGES = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x3FC00000, 0x40400000, 0x3EAAAAAB, 0x3F800001, 0x33800000,
             0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000, 0x00400000, 0x7F7FFFFF, 0xFF7FFFFF,
             0x7F000000, 0x4B000001, 0x7F800000, 0xFF800000, 0x7FC12345, 0x7F800001, 0xFFC00007, 0x0DA24260,
             0x5F800000]
F64_EDGES = [0, 1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF8000000000000, 0x4008000000000000,
             0x3FD5555555555555, 0x3FF0000000000001, 0x3CA0000000000000, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF,
             0x0010000000000000, 0x8010000000000000, 0x0008000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
             0x7FE0000000000000, 0x4330000000000001, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000012345, 0x7FF0000000000001, 0xFFF8000000000007, 0x01A56E1FC2F8F359, 0x43F0000000000000]
EDGES_F = {"f32": F32_EDGES, "f64": F64_EDGES}
FREG = {"f32": ("%f1", "%f2", "%f3", "%f4", "mov.b32 %f3, %r4;", "mov.b32 %r5, %f4; cvt.u64.u32 %rd8, %r5;"),
        "f64": ("%fd1", "%fd2", "%fd3", "%fd4", "mov.b64 %fd3, %rd7;", "mov.b64 %rd8, %fd4;")}
MODES = ["rn", "rz", "rm", "rp"]
FLOAT_FORMS = ([(op, "f32", m, ftz, sat) for op in ("add", "sub", "mul", "fma") for m in MODES
                for ftz in (False, True) for sat in (False, True)]
               + [(op, "f32", m, ftz, False) for op in ("div", "sqrt") for m in MODES for ftz in (False, True)]
               + [(op, "f64", m, False, False) for op in ("add", "sub", "mul", "fma", "div", "sqrt") for m in MODES])


def _fid(f):
    op, fmt, m, ftz, sat = f
    return ".".join([op, m] + ["ftz"] * ftz + ["sat"] * sat + [fmt])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(FLOAT_FORMS), ids=_fid)
def test_float_arithmetic_edges(engine, opt, form):
    """Signed zeros, subnormals (with and without .ftz), the largest finite numbers (overflow per mode),
    infinities and NaNs with distinct payloads (quiet, signalling, negative), every pair (fma: every pair with
    a cycling third operand), against exact rational arithmetic rounded in each mode."""
    op, fmt, m, ftz, sat = form
    a, b, c, d, setup, store = FREG[fmt]
    srcs = {"sqrt": [a], "fma": [a, b, c]}.get(op, [a, b])
    inst = f"{_fid(form)} {d}, {', '.join(srcs)};"
    e = EDGES_F[fmt]
    rows = [(x, y, e[(i * 7 + j * 3) % len(e)]) for i, x in enumerate(e) for j, y in enumerate(e)]
    if op == "sqrt":
        rows = [(x, 0, 0) for x in e] + [(0x3F800000 + 12345 * k if fmt == "f32" else 0x3FF0000000000000 + 987654321 * k,
                                          0, 0) for k in range(1, 60)]
    want = [float_ref(op, fmt, m, ftz, sat, r) for r in rows]
    check_rows(setup + inst + store, rows, want, engine, opt)


def sign_op_ref(op: str, fmt: str, ftz: bool, bits: int) -> int:
    """neg/abs (PTX ISA 9.0 9.7.3.5-6): the sign flipped or cleared (.ftz: a subnormal input is first the zero of
    its sign). NaN (PTX: any NaN): f64 the input quieted with its sign unchanged, f32 the canonical NaN, as the
    H200 gives them (docs/semantics.md, the neg/abs NaN row)."""
    p, _, _, _, w = fparams(fmt)
    kind, neg, mag = decode(bits, fmt, ftz)
    if kind == "nan":
        return bits | QUIET[fmt] if fmt == "f64" else CANON_F32_NAN
    if kind == "num" and mag == 0:
        bits &= 1 << (w - 1)
    sign = 1 << (w - 1)
    return bits & ~sign if op == "abs" else bits ^ sign


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", [(op, fmt, ftz) for op in ("neg", "abs") for fmt in ("f32", "f64")
                                  for ftz in ((False, True) if fmt == "f32" else (False,))],
                         ids=lambda f: f"{f[0]}{'.ftz' * f[2]}.{f[1]}")
def test_neg_abs_float_edges(engine, opt, form):
    op, fmt, ftz = form
    a, _, _, d, _, store = FREG[fmt]
    rows = [(b,) for b in EDGES_F[fmt]]
    body = f"{op}{'.ftz' * ftz}.{fmt} {d}, {a};{store}"
    check_rows(body, rows, [sign_op_ref(op, fmt, ftz, b) for (b,) in rows], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_neg_neg_f64_quiets_a_signalling_nan(engine, opt):
    """neg.f64 twice is not folded away at -O3: each quiets a NaN (the H200's rule), so a signalling NaN comes
    out quiet, its sign unchanged; ordinary values come back unchanged."""
    rows = [(b,) for b in F64_EDGES]
    body = "neg.f64 %fd4, %fd1; neg.f64 %fd4, %fd4; mov.b64 %rd8, %fd4;"
    want = [b | QUIET["f64"] if decode(b, "f64")[0] == "nan" else b for (b,) in rows]
    check_rows(body, rows, want, engine, opt)


# ----------------------------------------------------------------------------- cvt

def _to_float(bits: int, fmt: str, ftz: bool) -> float:
    kind, neg, mag = decode(bits, fmt, ftz)
    x = math.nan if kind == "nan" else math.inf if kind == "inf" else float(mag)
    return -x if neg and kind != "nan" else x


def f2i_ref(mode: str, dst: str, src: str, ftz: bool, bits: int) -> int:
    """cvt.{rni,rzi,rmi,rpi}.dst.src (PTX ISA 9.0 9.7.9.21): rounded to an integer in the mode, saturated to
    dst's range (float-to-integer conversions saturate by default), NaN -> 0, except (docs/semantics.md, NaN
    rows: the H200's results) from f64 to any integer and from f32 to 64-bit integers, where a NaN gives the
    destination's top bit alone, signed or unsigned. The integer is computed from the exact Fraction, not from
    the float."""
    kind, neg, mag = decode(bits, src, ftz)
    w = int(dst[1:])
    if kind == "nan" and (src == "f64" or w == 64):
        return val(1 << (w - 1), dst)
    if kind == "num":
        lo, hi = INT_RANGE[dst]
        return clamp(_round(-mag if neg else mag, mode), lo, hi)
    return _f2i_ref(_to_float(bits, src, ftz), mode, dst)


F2I_FORMS = ([(m, d, s, ftz, False) for m in ("rni", "rzi", "rmi", "rpi") for d in ("s32", "u32", "s64", "u64", "s8", "u16")
              for s in ("f32", "f64") for ftz in ((False, True) if s == "f32" else (False,))]
             + [("rzi", d, s, False, True) for d in ("s32", "u32", "s64", "u64", "s16", "u8") for s in ("f32", "f64")])
CVT_F32 = F32_EDGES + [0x3F000000, 0x3FC00000, 0x40200000, 0xBF000000, 0xBFC00000, 0xC0200000, 0x4EFFFFFF,
                       0x4F000000, 0xCF000000, 0xCF000001, 0x4F800000, 0x4F7FFFFF, 0x5EFFFFFF, 0x5F000000,
                       0xDF000000, 0xDF000001, 0x42FF0000, 0xC3010000, 0x477FFF00, 0x3F7FFFFF, 0xBF7FFFFF]
CVT_F64 = F64_EDGES + [0x3FE0000000000000, 0x3FF8000000000000, 0x4004000000000000, 0xBFE0000000000000,
                       0xC004000000000000, 0x41DFFFFFFFC00000, 0x41DFFFFFFFE00000, 0x41E0000000000000,
                       0xC1E0000000000000, 0xC1E0000000100000, 0x41EFFFFFFFE00000, 0x41F0000000000000,
                       0x43DFFFFFFFFFFFFF, 0x43E0000000000000, 0xC3E0000000000000, 0xC3E0000000000001,
                       0x43EFFFFFFFFFFFFF, 0x3FEFFFFFFFFFFFFF, 0x41DFFFFFFFFFFFFF]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(F2I_FORMS),
                         ids=lambda f: "cvt." + ".".join(f[:1] + ("ftz",) * f[3] + ("sat",) * f[4] + f[1:3]))
def test_cvt_float_to_integer(engine, opt, form):
    """Ties, just inside and just outside each integer range, subnormals (with .ftz a zero: rpi of a tiny
    positive number gives 0, not 1), infinities and NaNs; 8/16-bit results in a 32-bit register, extended
    per the destination type (PTX ISA 9.0 6.5.1 note 1: sign-extended for signed, zero-extended otherwise).
    .sat changes nothing: float-to-integer conversions saturate anyway (PTX ISA 9.0 9.7.9.21)."""
    mode, dst, src, ftz, sat = form
    reg = "%f1" if src == "f32" else "%fd1"
    w = int(dst[1:])
    d, store = ("%rd11", "mov.b64 %rd8, %rd11;") if w == 64 else ("%r5", "cvt.u64.u32 %rd8, %r5;")
    ext = 64 if w == 64 else 32
    rows = [(b,) for b in (CVT_F32 if src == "f32" else CVT_F64)]
    want = [f2i_ref(mode, dst, src, ftz, b) & ((1 << ext) - 1) for (b,) in rows]
    check_rows(f"cvt.{mode}{'.ftz' * ftz}{'.sat' * sat}.{dst}.{src} {d}, {reg};{store}", rows, want, engine, opt)


I2F_FORMS = [(m, d, s) for m in MODES for d in ("f32", "f64") for s in ("s32", "u32", "s64", "u64")]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(I2F_FORMS), ids=lambda f: "cvt." + ".".join(f))
def test_cvt_integer_to_float(engine, opt, form):
    """Integers just past the significand (2^24 + 1, 2^53 + 1, ties), the extremes, in every rounding mode."""
    mode, dst, src = form
    w = int(src[1:])
    a = "%r2" if w == 32 else "%rd5"
    _, _, _, d, _, store = FREG[dst]
    extra = [(1 << 24) + 1, (1 << 24) + 3, (1 << 25) + 2, (1 << 53) + 1, (1 << 53) + 3, (1 << 54) + 2,
             (1 << 62) + (1 << 38), -((1 << 24) + 1) & M64, -((1 << 53) + 1) & M64]
    rows = [(v & ((1 << w) - 1),) for v in int_edges(w) + extra]
    want = [encode(val(v, src) < 0, Fraction(abs(val(v, src))), dst, mode) for (v,) in rows]
    check_rows(f"cvt.{mode}.{dst}.{src} {d}, {a};{store}", rows, want, engine, opt)


def f64_of_f32(bits: int, ftz: bool) -> int:
    """cvt{.ftz}.f64.f32: exact; a NaN keeps its sign and payload, quieted (docs/semantics.md, conversions)."""
    kind, neg, mag = decode(bits, "f32", ftz)
    if kind == "nan":
        return (bits >> 31) << 63 | 0x7FF8000000000000 | (bits & 0x7FFFFF) << 29
    return encode(neg, mag if kind == "num" else None, "f64", "rn")


def f32_of_f64(bits: int, mode: str, ftz: bool) -> int:
    """cvt.{mode}{.ftz}.f32.f64: rounded (subnormal results flushed with .ftz); a NaN keeps its sign and its
    leading payload bits, quieted (docs/semantics.md, conversions)."""
    kind, neg, mag = decode(bits, "f64")
    if kind == "nan":
        return (bits >> 63) << 31 | 0x7FC00000 | (bits >> 29 & 0x7FFFFF)
    return encode(neg, mag if kind == "num" else None, "f32", mode, ftz)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("ftz", [False, True])
def test_cvt_f64_f32(engine, opt, ftz):
    body = f"cvt{'.ftz' * ftz}.f64.f32 %fd4, %f1; mov.b64 %rd8, %fd4;"
    check_rows(body, [(b,) for b in CVT_F32], [f64_of_f32(b, ftz) for b in CVT_F32], engine, opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ftz", [False, True])
def test_cvt_f32_f64(engine, opt, mode, ftz):
    """Rounding to f32 across its subnormal range and past its largest finite number (overflow per mode)."""
    extra = [0x36A0000000000000, 0x36A0000000000001, 0x3690000000000000, 0x3690000000000001, 0x380FFFFFF0000000,
             0x380FFFFFFFFFFFFF, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x47EFFFFFEFFFFFFF, 0xC7EFFFFFF0000000,
             0x3FF0000010000000, 0x3FF0000030000000, 0x3FF0000010000001, 0xBFF0000010000000]
    rows = [(b,) for b in CVT_F64 + extra]
    body = f"cvt.{mode}{'.ftz' * ftz}.f32.f64 %f4, %fd1; mov.b32 %r5, %f4; cvt.u64.u32 %rd8, %r5;"
    check_rows(body, rows, [f32_of_f64(b, mode, ftz) for (b,) in rows], engine, opt)


NARROW_INT = ([(d, s, sat) for d in ("s8", "u8", "s16", "u16") for s in ("s32", "u32") for sat in (False, True)]
              + [(d, s, False) for d in ("s32", "u32") for s in ("s8", "u8", "s16", "u16")])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", NARROW_INT, ids=lambda f: "cvt" + ".sat" * f[2] + f".{f[0]}.{f[1]}")
def test_cvt_narrow_integers_in_a_32_bit_register(engine, opt, form):
    """cvt between 32-bit and 8/16-bit integers, all in 32-bit registers (PTX ISA 9.0 9.7.9.21): a narrow source
    is its low bits read as the source type; a narrow result is chopped (or with .sat clamped) to the
    destination type, then sign-extended (signed destination) or zero-extended to the register's 32 bits."""
    dst, src, sat = form
    rows = [(v,) for v in int_edges(32) + [0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0xFFFFFF80,
                                           0xFFFF8000, 0x12345678, 0xFEDCBA98]]
    lo, hi = INT_RANGE[dst]

    def ref(v):
        x = val(v, src)
        return val(clamp(x, lo, hi) if sat else x, dst) & M32
    body = f"cvt{'.sat' * sat}.{dst}.{src} %r5, %r2; cvt.u64.u32 %rd8, %r5;"
    check_rows(body, rows, [ref(v) for (v,) in rows], engine, opt)



# ----------------------------------------------------------------------------- setp

FCMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def setp_float_ref(cmp: str, fmt: str, ftz: bool, x: int, y: int) -> int:
    """setp (PTX ISA 9.0 9.7.3.x, Table 'floating-point comparison operators'): ordered comparisons are false
    when either operand is NaN, the unordered ones (suffix u) true; num: neither NaN, nan: either; -0 == +0."""
    (ka, na, ma), (kb, nb, mb) = decode(x, fmt, ftz), decode(y, fmt, ftz)
    unordered = "nan" in (ka, kb)
    if cmp in ("num", "nan"):
        return int(unordered == (cmp == "nan"))
    if unordered:
        return int(cmp.endswith("u"))

    def value(k, n, m):
        v = Fraction(10) ** 400 if k == "inf" else m
        return -v if n else v
    return int(FCMP[cmp.rstrip("u") if cmp != "neu" else "ne"](value(ka, na, ma), value(kb, nb, mb)))


SETP_F = [(c, fmt, ftz) for fmt in ("f32", "f64") for ftz in ((False, True) if fmt == "f32" else (False,))
          for c in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(SETP_F), ids=lambda f: f"setp.{f[0]}{'.ftz' * f[2]}.{f[1]}")
def test_setp_float_every_comparison(engine, opt, form):
    cmp, fmt, ftz = form
    a, b = FREG[fmt][:2]
    e = EDGES_F[fmt]
    rows = [(x, y) for x in e for y in e]
    body = f"setp.{cmp}{'.ftz' * ftz}.{fmt} %p1, {a}, {b}; selp.u64 %rd8, 1, 0, %p1;"
    check_rows(body, rows, [setp_float_ref(cmp, fmt, ftz, x, y) for x, y in rows], engine, opt)


ICMP = {**FCMP, "lo": FCMP["lt"], "ls": FCMP["le"], "hi": FCMP["gt"], "hs": FCMP["ge"]}
SETP_I = ([(c, t) for t in ("s16", "s32", "s64") for c in ("eq", "ne", "lt", "le", "gt", "ge")]
          + [(c, t) for t in ("u16", "u32", "u64") for c in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")]
          + [(c, t) for t in ("b16", "b32", "b64") for c in ("eq", "ne")])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", sampled(SETP_I), ids=lambda f: f"setp.{f[0]}.{f[1]}")
def test_setp_integer_every_comparison(engine, opt, form):
    cmp, t = form
    w = int(t[1:])
    a, b, _, _, setup, _ = regs(w)
    e = int_edges(w)
    rows = [(x, y) for x in e for y in e]
    body = f"{setup}setp.{cmp}.{t} %p1, {a}, {b}; selp.u64 %rd8, 1, 0, %p1;"
    check_rows(body, rows, [int(ICMP[cmp](val(x, t), val(y, t))) for x, y in rows], engine, opt)


def round_integral_ref(mode: str, fmt: str, ftz: bool, sat: bool, bits: int) -> int:
    """cvt.{rni,rzi,rmi,rpi}{.ftz}.f.f (round to an integral value, PTX ISA 9.0 9.7.9.21) and cvt{.ftz}.sat.f32.f32
    (``mode`` None): a zero result keeps the input's sign; NaN: docs/semantics.md's NaN rows (f32 canonical, f64
    the input quieted); .sat clamps to [0, 1] with NaN and -0.0 giving +0.0."""
    kind, neg, mag = decode(bits, fmt, ftz)
    if kind == "nan":
        res = CANON_F32_NAN if fmt == "f32" else bits | QUIET[fmt]
    elif kind == "inf" or mode is None:
        res = encode(neg, mag, fmt, "rn", ftz)
    else:
        res = encode(neg, Fraction(abs(_round(-mag if neg else mag, mode))), fmt, "rn")
    return float_ref("add", fmt, "rn", False, True, (res, 0)) if sat else res


ROUND_INTEGRAL = ([(m, "f32", ftz, False) for m in ("rni", "rzi", "rmi", "rpi") for ftz in (False, True)]
                  + [(m, "f64", False, False) for m in ("rni", "rzi", "rmi", "rpi")]
                  + [(None, "f32", ftz, True) for ftz in (False, True)])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", ROUND_INTEGRAL,
                         ids=lambda f: f"cvt{'.' + f[0] if f[0] else ''}{'.ftz' * f[2]}{'.sat' * f[3]}.{f[1]}")
def test_cvt_round_to_integral_and_sat(engine, opt, form):
    mode, fmt, ftz, sat = form
    rows = [(b,) for b in (CVT_F32 if fmt == "f32" else CVT_F64)]
    _, _, _, d, _, store = FREG[fmt]
    body = f"cvt{'.' + mode if mode else ''}{'.ftz' * ftz}{'.sat' * sat}.{fmt}.{fmt} {d}, {FREG[fmt][0]};{store}"
    check_rows(body, rows, [round_integral_ref(mode, fmt, ftz, sat, b) for (b,) in rows], engine, opt)
