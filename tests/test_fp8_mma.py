"""FP8 ``mma.sync.aligned.m16n8k32.row.col.dtype.{e4m3,e5m2}.{e4m3,e5m2}.ctype`` (sm_89) on both engines at
-O0 and -O3, against an independent reference: the FP8 bit patterns decoded with exact rational arithmetic
from the OCP 8-bit floating point specification (v1.0: e4m3 bias 7, no infinities, S.1111.111 NaN, largest
448; e5m2 bias 15, IEEE-like with infinities and NaNs), the fragment layouts restated from the PTX ISA
(9.7.14.5.10, "Matrix Fragments for mma.m16n8k32" for 8-bit types), the exact dot products, rounded once to
the accumulator type (xcc's documented accumulation rule, docs/semantics.md).  Nothing here calls
xcc.semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from wgmma_harness import image, kernel, launch, owner

from xcc import runtime as rt

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
COMBOS = [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")]

KERNEL = r"""
.version 8.7
.target sm_89
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<24>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd3, %r0, 40;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd4];
    ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd4+16];
    ld.global.v2.u32 {%r9, %r10}, [%rd4+32];
    mul.wide.u32 %rd3, %r0, 16;
    add.s64 %rd5, %rd2, %rd3;
BODY
    ret;
}
"""
"""Thread t loads 10 words at in + 40 t: A a0..a3, B b0, b1, C (4 f32 or 2 f16x2 words); stores D at out + 16 t."""

BODY = {
    "f32": """    mov.b32 %f4, %r7;
    mov.b32 %f5, %r8;
    mov.b32 %f6, %r9;
    mov.b32 %f7, %r10;
    mma.sync.aligned.m16n8k32.row.col.f32.AT.BT.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, {%r5, %r6},
        {%f4, %f5, %f6, %f7};
    st.global.v4.f32 [%rd5], {%f0, %f1, %f2, %f3};""",
    "f16": """    mma.sync.aligned.m16n8k32.row.col.f16.AT.BT.f16 {%r11, %r12}, {%r1, %r2, %r3, %r4}, {%r5, %r6},
        {%r7, %r8};
    st.global.v4.u32 [%rd5], {%r11, %r12, %r11, %r12};""",
}


# ----------------------------------------------------------------------------- the reference
def fp8(bits: int, fmt: str):
    """An FP8 bit pattern -> Fraction, 'nan', '+inf'/'-inf'; negative zero as ('-0')."""
    sign = -1 if bits & 0x80 else 1
    if fmt == "e4m3":
        e, m, bias, mbits = (bits >> 3) & 15, bits & 7, 7, 3
        if bits & 0x7F == 0x7F:
            return "nan"
    else:
        e, m, bias, mbits = (bits >> 2) & 31, bits & 3, 15, 2
        if e == 31:
            return "nan" if m else ("-inf" if sign < 0 else "+inf")
    if e == 0:
        mag = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    else:
        mag = (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
    if mag == 0 and sign < 0:
        return "-0"
    return sign * mag


FORMATS = {"f32": (24, -126, 127), "f16": (11, -14, 15)}


def round_once(x: Fraction, acc: str) -> float:
    """``x`` rounded to nearest even in the accumulator format (subnormals kept, overflow to infinity)."""
    p, emin, emax = FORMATS[acc]
    if x == 0:
        return 0.0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, emin) - (p - 1)
    scaled = a / Fraction(2) ** q
    n, rem = divmod(scaled.numerator, scaled.denominator)
    if 2 * rem > scaled.denominator or (2 * rem == scaled.denominator and n & 1):
        n += 1
    r = float(Fraction(n) * Fraction(2) ** q) if q > -1074 else n * 2.0 ** q
    if r >= 2.0 ** (emax + 1):
        r = float("inf")
    return -r if x < 0 else r


def acc_value(bits: int, acc: str):
    """An f32/f16 accumulator bit pattern -> the same kinds as :func:`fp8`."""
    v = float(np.array(bits, np.uint32).view(np.float32)) if acc == "f32" else \
        float(np.array(bits, np.uint16).view(np.float16))
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "+inf" if v > 0 else "-inf"
    if v == 0 and np.signbit(v):
        return "-0"
    return Fraction(v)


def _mul(x, y):
    if "nan" in (x, y):
        return "nan"
    inf = [v for v in (x, y) if v in ("+inf", "-inf")]
    if inf:
        other = y if x in inf else x
        if other in ("-0", 0):
            return "nan"
        neg = sum(v in ("-inf", "-0") or (isinstance(v, Fraction) and v < 0) for v in (x, y)) % 2
        return "-inf" if neg else "+inf"
    neg = sum(v == "-0" or (isinstance(v, Fraction) and v < 0) for v in (x, y)) % 2
    val = (0 if x == "-0" else x) * (0 if y == "-0" else y)
    return "-0" if val == 0 and neg else Fraction(val)


def dot(terms, acc: str) -> int:
    """The accumulator bit pattern of the exact sum of ``terms`` rounded once (canonical NaN; an exact zero is
    -0 only when every term is -0, as IEEE sums of zeros)."""
    nan = 0x7FFFFFFF if acc == "f32" else 0x7FFF
    if "nan" in terms or ("+inf" in terms and "-inf" in terms):
        return nan
    r = float("inf") if "+inf" in terms else float("-inf") if "-inf" in terms else None
    if r is None:
        total = sum((t for t in terms if t != "-0"), Fraction(0))
        r = round_once(total, acc)
        if total == 0 and all(t == "-0" for t in terms):
            r = -0.0
    return int(np.array(r, np.float32 if acc == "f32" else np.float16).view(
        np.uint32 if acc == "f32" else np.uint16))


def a_coord(lane: int, i: int):
    """PTX 9.7.14.5.10, A of m16n8k32 (.s8/.u8/.e4m3/.e5m2): a_i of lane."""
    g, t = lane >> 2, lane % 4
    row = g if i < 4 or 8 <= i < 12 else g + 8
    col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    return row, col


def b_coord(lane: int, i: int):
    return (lane % 4) * 4 + (i & 3) + (16 if i >= 4 else 0), lane >> 2


def c_coord(lane: int, i: int):
    return (lane >> 2) + (8 if i >= 2 else 0), (lane % 4) * 2 + (i & 1)


def reference(words: np.ndarray, at: str, bt: str, acc: str) -> np.ndarray:
    """Per lane, the D words the kernel stores (f16: d0, d1, d0, d1)."""
    A = [[None] * 32 for _ in range(16)]
    B = [[None] * 8 for _ in range(32)]
    C = [[None] * 8 for _ in range(16)]
    cbits = 32 if acc == "f32" else 16
    for lane in range(32):
        w = [int(x) for x in words[lane]]
        for i in range(16):
            r, c = a_coord(lane, i)
            A[r][c] = fp8((w[i // 4] >> (8 * (i % 4))) & 0xFF, at)
        for i in range(8):
            r, c = b_coord(lane, i)
            B[r][c] = fp8((w[4 + i // 4] >> (8 * (i % 4))) & 0xFF, bt)
        for i in range(4):
            r, c = c_coord(lane, i)
            word = w[6 + i] if acc == "f32" else w[6 + i // 2] >> (16 * (i % 2))
            C[r][c] = acc_value(word & ((1 << cbits) - 1), acc)
    out = np.zeros((32, 4), np.uint32)
    for lane in range(32):
        d = []
        for i in range(4):
            r, c = c_coord(lane, i)
            d.append(dot([C[r][c]] + [_mul(A[r][k], B[k][c]) for k in range(32)], acc))
        out[lane] = d if acc == "f32" else [d[0] | d[1] << 16, d[2] | d[3] << 16] * 2
    return out


# ----------------------------------------------------------------------------- inputs
def _finite_bytes(rng, fmt: str, n: int) -> np.ndarray:
    b = rng.integers(0, 256, n, dtype=np.uint16)
    bad = (b & 0x7F) == 0x7F if fmt == "e4m3" else (b & 0x7C) == 0x7C
    return np.where(bad, b & 0xB3, b).astype(np.uint32)  # NaN/inf codes -> a finite value


def _pack(b: np.ndarray) -> np.ndarray:
    b = b.reshape(32, -1, 4).astype(np.uint32)
    return b[..., 0] | b[..., 1] << 8 | b[..., 2] << 16 | b[..., 3] << 24


def make_inputs(kind: str, at: str, bt: str, acc: str, seed: int = 0) -> np.ndarray:
    """[32, 10] words: random finite FP8 values and small accumulators, or the edge values (max normals,
    subnormals, negative zeros, NaN, e5m2 infinities, sums that overflow f16)."""
    rng = np.random.default_rng(seed)
    a, b = _finite_bytes(rng, at, 32 * 16), _finite_bytes(rng, bt, 32 * 8)
    if kind == "random":
        cf = rng.standard_normal(32 * 4) * 4
    else:
        top = {"e4m3": 0x7E, "e5m2": 0x7B}  # 448, 57344
        a[:64] = [top[at], top[at] | 0x80, 0x01, 0x81, 0x80, 0x00, 0x07, 0x08] * 8      # max, subnormals, -0, 0
        b[:32] = [top[bt], 0x01, 0x80, top[bt] | 0x80] * 8
        a[100] = 0x7F                                           # a NaN (both formats)
        b[200] = 0x7C if bt == "e5m2" else 0xFF                 # +inf (e5m2) or -NaN (e4m3)
        a[300:332] = 0x80                                       # a row of negative zeros
        b[64:96] = 0x80
        b[96:128] = top[bt]
        a[384:416] = top[at]                                    # a row of max normals: overflows f16
        cf = np.array([-0.0, 0.0, 1e-45, -3.4e38, 65504.0, 6e-8, -1.5, 3.4e38] * 16)
    if acc == "f32":
        c = cf.astype(np.float32).view(np.uint32).reshape(32, 4)
    else:
        with np.errstate(over="ignore"):  # +-3.4e38 -> +-inf in f16
            h = cf.astype(np.float16).view(np.uint16).astype(np.uint32).reshape(32, 2, 2)
        c = np.concatenate([h[..., 0] | h[..., 1] << 16, np.zeros((32, 2), np.uint32)], axis=1)
    return np.concatenate([_pack(a), _pack(b), c], axis=1).astype(np.uint32)


def run(words: np.ndarray, at: str, bt: str, acc: str, engine: str, opt: int) -> np.ndarray:
    ptx = KERNEL.replace("BODY", BODY[acc].replace("AT", at).replace("BT", bt))
    dev = rt.Device()
    din = rt.to_device(np.ascontiguousarray(words, np.uint32).reshape(-1), dev)
    dout = rt.to_device(np.zeros(32 * 4, np.uint32), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [din, dout])
    return dout.copy_to_host().reshape(32, 4)


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("at,bt", COMBOS)
@pytest.mark.parametrize("kind", ["random", "edges"])
def test_fp8_mma_matches_the_exact_reference(kind, at, bt, acc, engine, opt):
    words = make_inputs(kind, at, bt, acc, seed=len(at + bt + acc))
    want = reference(words, at, bt, acc)
    got = run(words, at, bt, acc, engine, opt)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(ln), int(i), hex(got[ln, i]), hex(want[ln, i])) for ln, i in bad[:8]]


def test_reference_decodes_the_ocp_table():
    assert fp8(0x7E, "e4m3") == 448 and fp8(0x7F, "e4m3") == "nan" and fp8(0xFF, "e4m3") == "nan"
    assert fp8(0x01, "e4m3") == Fraction(1, 512) and fp8(0x80, "e4m3") == "-0"
    assert fp8(0x7B, "e5m2") == 57344 and fp8(0x7C, "e5m2") == "+inf" and fp8(0x7D, "e5m2") == "nan"
    assert fp8(0x01, "e5m2") == Fraction(1, 65536) and fp8(0x08, "e4m3") == Fraction(1, 64)
    assert round_once(Fraction(65520), "f16") == float("inf") and round_once(Fraction(65519), "f16") == 65504


@pytest.mark.parametrize("form, msg", [
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.s8.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
     "{%f4, %f5, %f6, %f7};", "is not supported"),
    ("mma.sync.aligned.m16n8k32.row.col.s32.e4m3.e4m3.s32 {%r11, %r12, %r13, %r14}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6}, {%r7, %r8, %r9, %r10};", "is not supported"),
])
def test_fp8_mma_bad_types_are_located_errors(form, msg):
    from xcc.diagnostics import XccError

    ptx = KERNEL.replace("BODY", "    " + form)
    with pytest.raises(XccError, match=msg) as e:
        rt.load_module(ptx, device=rt.Device(), engine="isa", opt_level=0).get_function("k")
    assert ":" in str(e.value)


# ----------------------------------------------------------------------------- wgmma (sm_90a)
def run_fp8_wgmma(n: int, at: str, bt: str, sw: int, engine: str, opt: int, scale_d: bool = True,
                  scale_a: int = 1, scale_b: int = 1, seed: int = 0):
    """One m64nNk32 FP8 wgmma (both operands K-major with swizzle ``sw``); (got, want) accumulator words."""
    rng = np.random.default_rng(seed)
    a = _finite_bytes(rng, at, 64 * 32).reshape(64, 32)
    b = _finite_bytes(rng, bt, n * 32).reshape(n, 32)     # B^T: row = column n of B
    a[0, :4] = [0x80, 0x01, 0x7E if at == "e4m3" else 0x7B, 0x81]  # -0, a subnormal, the largest, -subnormal
    b[1, 5] = 0x7F                                                 # a NaN in column 1 of B
    img = image(a, b, sw, 1)
    nr = n // 2
    c0 = (rng.integers(-64, 65, (128, nr)) / 4).astype(np.float32)
    want = np.zeros((128, nr), np.uint32)
    for t in range(128):
        for i in range(nr):
            row, col = owner(t, i)
            acc = acc_value(int(c0[t, i].view(np.uint32)), "f32") if scale_d else Fraction(0)
            prods = [_mul(_neg(fp8(int(a[row, k]), at), scale_a), _neg(fp8(int(b[col, k]), bt), scale_b))
                     for k in range(32)]
            want[t, i] = dot([acc] + prods, "f32")
    mma = f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{at}.{bt}"
    return launch(kernel(mma, n // 2, "f32", f", {scale_a}, {scale_b}"), img, c0, sw, engine, opt, scale_d), want


def _neg(v, scale: int):
    """``v`` times imm-scale (1 or -1)."""
    if scale == 1 or v == "nan":
        return v
    flip = {"-0": Fraction(0), "+inf": "-inf", "-inf": "+inf"}
    if v in flip:
        return flip[v]
    return "-0" if v == 0 else -v


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("at,bt,n,sw", [("e4m3", "e4m3", 16, 0), ("e4m3", "e5m2", 8, 128), ("e5m2", "e4m3", 24, 64),
                                        ("e5m2", "e5m2", 8, 32)])
def test_fp8_wgmma_matches_the_exact_reference(at, bt, n, sw, engine, opt):
    got, want = run_fp8_wgmma(n, at, bt, sw, engine, opt, seed=n + sw)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(t), int(i), hex(got[t, i]), hex(want[t, i])) for t, i in bad[:8]]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_fp8_wgmma_scale_d_and_negated_operands(engine):
    got, want = run_fp8_wgmma(8, "e4m3", "e5m2", 0, engine, 3, scale_d=False, scale_a=-1, seed=5)
    assert np.array_equal(got, want)
    got, want = run_fp8_wgmma(8, "e5m2", "e4m3", 128, engine, 0, scale_b=-1, seed=6)
    assert np.array_equal(got, want)
