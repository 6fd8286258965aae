"""Issue 19's per-instruction edge values, continued from tests/test_isa_edges_core.py (whose harness this
reuses): mul24/mad24 (.lo, .hi, mad24.hi.sat.s32), narrow global loads (8- and 16-bit types into 16-, 32- and
64-bit registers) and the approximate float functions (ex2, lg2, sin, cos, rcp, rsqrt, sqrt .approx{.ftz}.f32;
rcp.approx.ftz.f64, rsqrt.approx{.ftz}.f64). Each form is a one-instruction kernel run on both engines at -O0
and -O3. Integer references restate the PTX ISA 9.0 manual's definitions with Python integers; approximate
functions are checked against the manual's error bounds (relative to Python's ``math`` in f64, whose own error
is below 2^-52) plus their exact special values (signed zeros, infinities, NaN, subnormal inputs and results
with and without ``.ftz``), never against xcc.semantics. 16-bit integer arithmetic (add, sub, mul.lo/.hi/.wide,
mad, div/rem by zero and of the most negative value) is in tests/test_isa_edges_core.py's INT_FORMS."""

from __future__ import annotations

import math
import random
import struct
from fractions import Fraction

import pytest
from test_isa_edges_core import CANON_F32_NAN, check_rows, decode, int_edges, val
from test_isa_gaps import ENGINES, INT_RANGE, M32, M64, clamp, run

# ----------------------------------------------------------------------------- mul24, mad24


def mul24_ref(t: str, hi: bool, a: int, b: int) -> int:
    """mul24.{lo,hi}.t (PTX ISA 9.0 9.7.1.5): the product of the 24-bit values a[23:0], b[23:0] (read as signed
    24-bit numbers for .s32) is 48 bits wide; .lo gives its bits 31..0, .hi its bits 47..16."""
    x, y = val(a, t[0] + "24"), val(b, t[0] + "24")
    p = (x * y) & ((1 << 48) - 1)
    return (p >> 16 if hi else p) & M32


def mad24_ref(t: str, hi: bool, sat: bool, a: int, b: int, c: int) -> int:
    """mad24.{lo,hi}{.sat}.t (PTX ISA 9.0 9.7.1.6): mul24's result plus c, modulo 2^32; .sat (mad24.hi.sat.s32
    only) clamps the sum of the signed 32-bit part and c to the s32 range instead."""
    part = mul24_ref(t, hi, a, b)
    if sat:
        lo, top = INT_RANGE["s32"]
        return clamp(val(part, "s32") + val(c, "s32"), lo, top) & M32
    return (part + c) & M32


MUL24_EDGES = int_edges(32) + [0x7FFFFF, 0x800000, 0x800001, 0xFFFFFF, 0x1000000, 0xFF800000, 0xFF7FFFFF,
                               0x12345678, 0xABCDEF01, 0x00FFFFFE, 0x400000]
MUL24_FORMS = ([("mul24", m, t, False) for m in ("lo", "hi") for t in ("s32", "u32")]
               + [("mad24", m, t, False) for m in ("lo", "hi") for t in ("s32", "u32")]
               + [("mad24", "hi", "s32", True)])


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", MUL24_FORMS, ids=lambda f: f"{f[0]}.{f[1]}{'.sat' * f[3]}.{f[2]}")
def test_mul24_mad24_edges(engine, opt, form):
    """Operands whose upper 8 bits are set (ignored), the 24-bit extremes (-2^23, 2^23 - 1, 2^24 - 1) and
    their products at the .hi boundary; mad24's addend at the s32 extremes (saturating for .hi.sat.s32)."""
    op, mode, t, sat = form
    e = MUL24_EDGES
    rows = [(x, y, e[(i * 5 + j * 3) % len(e)]) for i, x in enumerate(e) for j, y in enumerate(e)]
    if op == "mul24":
        body = f"mul24.{mode}.{t} %r5, %r2, %r3;"
        want = [mul24_ref(t, mode == "hi", a, b) for a, b, _ in rows]
    else:
        body = f"mad24.{mode}{'.sat' * sat}.{t} %r5, %r2, %r3, %r4;"
        want = [mad24_ref(t, mode == "hi", sat, a, b, c & M32) for a, b, c in rows]
    check_rows(body + "cvt.u64.u32 %rd8, %r5;", rows, want, engine, opt)


# ----------------------------------------------------------------------------- narrow loads

LOAD_BYTES = [0x80FF7F0100FE8001, 0x7FFF800012345678, 0xFFFFFFFFFFFFFFFF, 0, 0x0180FF7F807F01FF]


def load_ref(t: str, reg_bits: int, word: int, offset: int) -> int:
    """ld.global.t of the little-endian bytes at ``offset`` into a ``reg_bits``-wide register (PTX ISA 9.0
    6.4.1 / 6.5.1: an operand wider than the instruction type is sign-extended for signed types and
    zero-extended for unsigned and bit-size types)."""
    w = int(t[1:])
    x = (word >> (8 * offset)) & ((1 << w) - 1)
    return val(x, "s" + t[1:] if t[0] == "s" else "u" + t[1:]) & ((1 << reg_bits) - 1)


LOAD_FORMS = [(t, reg) for t in ("u8", "s8", "b8", "u16", "s16", "b16") for reg in (16, 32, 64)]
REG = {16: ("%h1", "cvt.u64.u16 %rd8, %h1;"), 32: ("%r5", "cvt.u64.u32 %rd8, %r5;"),
       64: ("%rd11", "mov.b64 %rd8, %rd11;")}


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", LOAD_FORMS, ids=lambda f: f"ld.global.{f[0]}.into{f[1]}")
def test_narrow_global_loads_extend_per_type(engine, opt, form):
    """Each byte (half-word) offset of words holding 0x00, 0x01, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000 and 0xFFFF;
    the register's bits above the loaded width are the extension the type defines, in 16-, 32- and 64-bit
    registers (the 16- and 32-bit ones stored zero-extended)."""
    t, reg_bits = form
    w = int(t[1:])
    d, store = REG[reg_bits]
    offsets = range(0, 8, w // 8)
    for off in offsets:
        rows = [(word,) for word in LOAD_BYTES]
        check_rows(f"ld.global.{t} {d}, [%rd4+{off}];{store}", rows,
                   [load_ref(t, reg_bits, word, off) for (word,) in rows], engine, opt)


# ----------------------------------------------------------------------------- approximate functions (f32)

F32_TINY = 2.0 ** -126


def f32_val(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & M32))[0]


def f32_bits_of(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def is_nan32(bits: int) -> bool:
    return bits & 0x7F800000 == 0x7F800000 and bits & 0x7FFFFF != 0


# PTX ISA 9.0 section 9.7.3 (each function's "Notes"), as the manual states the bounds: ``rel`` a relative error
# bound, ``abs`` an absolute one, ``ulp`` units in the last place of the correctly rounded result, each over
# the input domain ``dom`` (None: the whole range). The H200 stays within them (docs/semantics.md, the .approx
# rows: ex2 2^-22.8 relative, lg2 2^-22.3 absolute on (0.5, 2), sin/cos 3.4e-7 for |x| <= pi, rcp/rsqrt/sqrt
# <= 1 ulp).
APPROX_BOUNDS = {
    "ex2": ("ulp", 2, None),
    "lg2": ("abs", 2.0 ** -22, (0.5, 2.0)),
    "sin": ("abs", 2.0 ** -20.9, (-math.pi, math.pi)),
    "cos": ("abs", 2.0 ** -20.9, (-math.pi, math.pi)),
    "rcp": ("ulp", 1, None),
    "rsqrt": ("rel", 2.0 ** -22.9, None),
    "sqrt": ("rel", 2.0 ** -23, None),
}
EXACT_FN = {"ex2": lambda x: 2.0 ** x if x < 1024 else math.inf, "lg2": math.log2, "sin": math.sin, "cos": math.cos, "rcp": lambda x: 1 / x,
            "rsqrt": lambda x: 1 / math.sqrt(x), "sqrt": math.sqrt}


def approx_special(op: str, ftz: bool, bits: int):
    """The exact result bits where the manual fixes one (its tables of special values; NaN results are the
    canonical 0x7FFFFFFF, docs/semantics.md), or None where the error bound applies."""
    kind, neg, mag = decode(bits, "f32", ftz)
    nan = CANON_F32_NAN
    sign = int(neg) << 31
    zero_in = kind == "num" and mag == 0
    if kind == "nan":
        return nan
    if op == "ex2":
        if kind == "inf":
            return 0 if neg else 0x7F800000
        return 0x3F800000 if zero_in else None
    if op == "lg2":
        if zero_in:
            return 0xFF800000
        if neg:
            return nan
        return 0x7F800000 if kind == "inf" else None
    if op in ("sin", "cos"):
        if kind == "inf":
            return nan
        if zero_in:
            return sign if op == "sin" else 0x3F800000
        return None
    if op == "rcp":
        if kind == "inf":
            return sign
        return sign | 0x7F800000 if zero_in else None
    if op == "rsqrt":
        if zero_in:
            return sign | 0x7F800000
        if neg:
            return nan
        return 0 if kind == "inf" else None
    if op == "sqrt":
        if zero_in:
            return sign
        if neg:
            return nan
        return 0x7F800000 if kind == "inf" else None
    raise AssertionError(op)


def within_bound(op: str, ftz: bool, bits: int, got: int) -> str | None:
    """None if ``got`` is an allowed result of ``op``.approx{.ftz}.f32 on ``bits``, else why not."""
    special = approx_special(op, ftz, bits)
    if special is not None:
        return None if got == special else f"special value: want {special:#x}"
    kind, neg, mag = decode(bits, "f32", ftz)
    x = -float(mag) if neg else float(mag)
    exact = EXACT_FN[op](x)
    if is_nan32(got):
        return "NaN for a number"
    y = f32_val(got)
    if ftz and y != 0 and abs(y) < F32_TINY:
        return "subnormal result with .ftz"
    how, bound, dom = APPROX_BOUNDS[op]
    if dom is not None and not dom[0] < x < dom[1]:
        # outside the domain the manual bounds: sin/cos within [-1, 1]; lg2 (|result| >= 1 there) within a
        # relative 2^-21 (a sanity check of ours, twice the bound inside the domain)
        if op == "lg2":
            return None if abs(y - exact) <= 2.0 ** -21 * abs(exact) else f"lg2 {y!r} far from {exact!r}"
        return None if abs(y) <= 1.0 else "out of [-1, 1]"
    rounded = f32_val(f32_bits_of(exact)) if abs(exact) < 3.4028235677973366e38 else math.copysign(math.inf, exact)
    if ftz and abs(rounded) < F32_TINY:  # a subnormal result flushed: zero of its sign, or the smallest normal
        return None if (y == 0 and math.copysign(1, y) == math.copysign(1, exact)) or abs(y) == F32_TINY \
            else f"want a flushed zero, got {y!r}"
    if math.isinf(rounded):
        return None if y == rounded or abs(y) >= 3.4e38 else f"want {rounded!r}, got {y!r}"
    if how == "abs":
        err = abs(y - exact)
    elif how == "rel":
        err = abs(y - exact) / abs(exact)
    else:  # ulp of the correctly rounded result (subnormal results: the subnormal spacing)
        ulp = 2.0 ** (max(math.frexp(rounded)[1], -125) - 24) if rounded else 2.0 ** -149
        err = abs(Fraction(y) - Fraction(rounded)) / Fraction(ulp)
    return None if err <= bound else f"error {float(err):.3g} > {bound:.3g} (exact {exact!r}, got {y!r})"


F32_SPECIAL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC12345, 0x7F800001, 0x00000001, 0x80000001,
               0x007FFFFF, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF]


def approx_inputs(op: str) -> list[int]:
    """The special values, then numbers across each function's interesting range (deterministic)."""
    rng = random.Random(19)
    xs = {"ex2": [rng.uniform(-160, 130) for _ in range(60)] + [-126.0, -127.5, -149.0, -150.0, 127.99, 128.0, 0.5],
          "lg2": [rng.uniform(0.5, 2.0) for _ in range(40)] + [2.0 ** rng.uniform(-149, 127) for _ in range(30)],
          "sin": [rng.uniform(-math.pi, math.pi) for _ in range(60)] + [1e-30, -3e-39, 1.5e-45, 100.0],
          "cos": [rng.uniform(-math.pi, math.pi) for _ in range(60)] + [1e-30, -3e-39, 1.5e-45, 100.0],
          "rcp": [2.0 ** rng.uniform(-130, 130) * rng.choice((-1, 1)) for _ in range(60)] + [2.0 ** 126, 3.0 * 2.0 ** 125,
                                                                                           2.0 ** -127, -2.0 ** -128],
          "rsqrt": [2.0 ** rng.uniform(-149, 128) for _ in range(60)] + [-1.0, -1e-40, 4.0, 0.25],
          "sqrt": [2.0 ** rng.uniform(-149, 128) for _ in range(60)] + [-1.0, -1e-40, 4.0, 0.25, 2.0 ** -149]}[op]
    return F32_SPECIAL + [f32_bits_of(x) for x in xs]


APPROX_FORMS = [(op, ftz) for op in ("ex2", "lg2", "sin", "cos", "rcp", "rsqrt", "sqrt") for ftz in (False, True)]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", APPROX_FORMS, ids=lambda f: f"{f[0]}.approx{'.ftz' * f[1]}.f32")
def test_approx_f32_special_values_and_error_bounds(engine, opt, form):
    """Signed zeros, infinities, NaNs (quiet, signalling, negative: the canonical NaN out), subnormal inputs
    (with .ftz the zero of their sign) and results (with .ftz flushed), then sampled inputs within the manual's
    bound of the exact function."""
    op, ftz = form
    rows = [(b,) for b in approx_inputs(op)]
    got = run(f"{op}.approx{'.ftz' * ftz}.f32 %f3, %f1; mov.b32 %r5, %f3; cvt.u64.u32 %rd8, %r5;", rows, engine,
              opt)
    bad = [(hex(b), hex(g), why) for (b,), g in zip(rows, got) if (why := within_bound(op, ftz, b, g))]
    assert not bad, bad[:8]


# ----------------------------------------------------------------------------- approximate functions (f64)

def f64_val(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & M64))[0]


def f64_bits_of(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


F64_TINY = 2.0 ** -1022
F64_SPECIAL = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001, 0xFFF0000000000ABC, 1,
               (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
               0x7FEFFFFFFFFFFFFF, 0x7FD0000000000000, 0x7FE0000000000000, 0xFFE0000000000000]
F64_FORMS = ["rcp.approx.ftz.f64", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64"]


def f64_approx_ok(form: str, bits: int, got: int) -> str | None:
    """rcp.approx.ftz.f64 / rsqrt.approx{.ftz}.f64 (PTX ISA 9.0 9.7.3.14, 9.7.3.16): 1/a and 1/sqrt(a) with the
    special values of rcp/rsqrt (+-0 -> +-inf, +-inf -> +-0 for rcp; +0 -> +inf, -0 -> -inf, +inf -> +0,
    a < 0 -> NaN for rsqrt; NaN -> NaN); .ftz reads a subnormal input as the zero of its sign and may flush a
    subnormal result. Elsewhere the result is within a relative 2^-20 of the exact value, which the H200's
    high-word-only rcp.approx.ftz (2^-20.1) meets; xcc's choice (docs/semantics.md) is far inside."""
    ftz = ".ftz" in form
    kind, neg, mag = decode(bits, "f64", ftz)
    g_kind, g_neg, g_mag = decode(got, "f64")
    if kind == "nan" or (form.startswith("rsqrt") and neg and not (kind == "num" and mag == 0)):
        return None if g_kind == "nan" else "want NaN"
    if kind == "num" and mag == 0:
        return None if (g_kind, g_neg) == ("inf", neg) else "want an infinity of the input's sign"
    if kind == "inf":
        return None if got == int(neg) << 63 else "want the zero of the input's sign"
    # rsqrt: 1 / sqrt(a) through the host's correctly rounded sqrt (its 2^-53 is far inside the bound)
    exact = 1 / mag if form.startswith("rcp") else 1 / Fraction(math.sqrt(mag))
    if g_kind != "num" or g_neg != neg:
        return f"want a number of the input's sign, got {got:#x}"
    if ftz and exact < F64_TINY and g_mag == 0:
        return None
    err = abs(g_mag - exact) / exact
    return None if err <= Fraction(1, 1 << 20) else f"relative error {float(err):.3g}"


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("form", F64_FORMS)
def test_approx_f64_special_values_and_error_bounds(engine, opt, form):
    rng = random.Random(64)
    xs = [2.0 ** rng.uniform(-1074, 1023) for _ in range(40)] + [2.0 ** rng.uniform(-4, 4) for _ in range(20)]
    if form.startswith("rcp"):
        xs += [-x for x in xs[:20]] + [2.0 ** 1022 * 1.5, 2.0 ** -1023]
    rows = [(b,) for b in F64_SPECIAL + [f64_bits_of(x) for x in xs]]
    got = run(f"{form} %fd3, %fd1; mov.b64 %rd8, %fd3;", rows, engine, opt)
    bad = [(hex(b), hex(g), why) for (b,), g in zip(rows, got) if (why := f64_approx_ok(form, b, g))]
    assert not bad, bad[:8]



# ----------------------------------------------------------------------------- the checks against real hardware

GPU_APPROX = {"approx_f32": {f"{op}.approx{'.ftz' * ftz}": (op, ftz) for op, ftz in APPROX_FORMS},
              "approx_f64": {"rsqrt.approx": "rsqrt.approx.f64", "rsqrt.approx.ftz": "rsqrt.approx.ftz.f64",
                             "rcp.approx.ftz": "rcp.approx.ftz.f64"}}


@pytest.mark.parametrize("probe", sorted(GPU_APPROX))
def test_the_h200s_approx_results_pass_the_same_checks(probe):
    """The checks above accept what an NVIDIA H200 returned (bench/data/gpu_semantics_outputs.npz: 4,112 inputs
    per function, specials included), so their special values and bounds are those of real hardware, not
    only of xcc's choice."""
    import sys
    from pathlib import Path

    import numpy as np

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "bench"))
    import gpu_semantics as gs

    p = gs.probes()[probe]
    with np.load(root / "bench" / "data" / "gpu_semantics_outputs.npz") as z:
        gpu = z[probe].reshape(len(p["labels"]), p["n"])
    wide = probe == "approx_f64"
    x = p["inputs"][0].view(np.uint64 if wide else np.uint32)
    checked = 0
    for j, label in enumerate(p["labels"]):
        form = GPU_APPROX[probe].get(label)
        if form is None:
            continue
        for a, g in zip(x.tolist(), gpu[j].tolist()):
            why = f64_approx_ok(form, a, g) if wide else within_bound(*form, a, g & M32)
            assert why is None, (label, hex(a), hex(g), why)
        checked += 1
    assert checked == (3 if wide else 9)


def test_the_h200s_mul24_mad24_results_match_the_reference():
    """mul24_ref/mad24_ref give what an NVIDIA H200 returned for every form over 512 operand triples (24-bit
    extremes, upper bytes set, s32 extremes as the addend: bench/data/gpu_semantics_outputs.npz, probe int24)."""
    import sys
    from pathlib import Path

    import numpy as np

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "bench"))
    import gpu_semantics as gs

    p = gs.probes()["int24"]
    with np.load(root / "bench" / "data" / "gpu_semantics_outputs.npz") as z:
        gpu = z["int24"].reshape(len(p["labels"]), p["n"])
    a, b, c = (x.tolist() for x in p["inputs"])
    for j, label in enumerate(p["labels"]):
        op, mode, *rest = label.split(".")
        t, sat = rest[-1], "sat" in rest
        for i, g in enumerate(gpu[j].tolist()):
            want = (mul24_ref(t, mode == "hi", a[i], b[i]) if op == "mul24"
                    else mad24_ref(t, mode == "hi", sat, a[i], b[i], c[i]))
            assert g & M32 == want, (label, hex(a[i]), hex(b[i]), hex(c[i]), hex(g), hex(want))
