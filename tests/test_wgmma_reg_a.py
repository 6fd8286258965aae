"""``wgmma.mma_async`` with A in registers (sm_90a): ``d, {a0, a1, a2, a3}, b-desc, scale-d{, imm-scale-a,
imm-scale-b{, imm-trans-b}}`` for every type xcc runs with a descriptor A (.f16/.bf16 with f32 or f16 accumulators,
.tf32, .e4m3/.e5m2 with f32 or f16 accumulators, .s8/.u8 with and without .satfinite, .b1.and.popc), each form one
ptxas 13.0 accepts for sm_90a, on both engines at -O0 and -O3, against an independent reference.

A's register fragment is written out here from the PTX ISA (9.7.15.5.1.1, "Register Fragments", figures for
m64nNk16, m64nNk8, m64nNk32, m64nNk256): warp ``w`` of the warpgroup holds rows 16w .. 16w+15 of A, each warp's
fragment that of the matching mma.sync shape (m16n8k16 for 16-bit, m16n8k8 for .tf32, m16n8k32 for 8-bit and
m16n8k256 for .b1 elements).  The test packs A into each thread's four .b32 registers, puts them in the harness's
shared-memory image where A would be (thread t's words at byte 16t; the kernel loads them after the barrier) and B
in its canonical K-major (or, imm-trans-b = 1, MN-major) layout; the expected accumulators are the exact sums
rounded once (tests/test_fp8_mma.py's reference: Fractions, IEEE specials) or the exact integer sums wrapped or
saturated (as tests/test_wgmma_int.py).  Nothing here calls xcc.semantics."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from test_fp8_mma import _mul, _neg, acc_value, dot, fp8
from wgmma_harness import ENGINES, image, kernel, launch, owner

from xcc import runtime as rt
from xcc.diagnostics import XccError

K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}


def a_coord(t: int, i: int, etype: str) -> tuple[int, int]:
    """(row, column) of A element a_i (low to high over the four registers) of warpgroup thread ``t``."""
    w, g, q = t // 32, (t % 32) >> 2, t % 4
    if etype in ("f16", "bf16"):  # m64nNk16: a0..a7, two per register
        return 16 * w + g + 8 * ((i // 2) % 2), 2 * q + (i & 1) + 8 * (i // 4)
    if etype == "tf32":  # m64nNk8: a0..a3
        return 16 * w + g + 8 * (i % 2), q + 4 * (i // 2)
    if etype == "b1":  # m64nNk256: a0..a127, 32 per register
        return 16 * w + g + 8 * ((i // 32) % 2), 32 * q + (i & 31) + 128 * (i // 64)
    return 16 * w + g + 8 * ((i // 4) % 2), 4 * q + (i & 3) + 16 * (i // 8)  # m64nNk32: a0..a15


def a_registers(a: np.ndarray, etype: str) -> np.ndarray:
    """The (128, 4) .b32 words of A (element bit patterns, 64 x K) in the threads' register fragments."""
    bits = BITS[etype]
    per = 32 // bits
    regs = np.zeros((128, 4), np.uint64)
    for t in range(128):
        for i in range(4 * per):
            row, col = a_coord(t, i, etype)
            regs[t, i // per] |= np.uint64(int(a[row, col])) << np.uint64(bits * (i % per))
    return regs.astype(np.uint32)


def mn_major_image(b: np.ndarray, elem_bytes: int) -> np.ndarray:
    """B^T (N x K) at byte 8192 in the MN-major layout without swizzling (9.7.15.5.1.2): element (n, k) at
    ``(n%T)*e + (n/T)*SBO + (k%8)*16 + (k/8)*LBO``, T = 16/e elements a chunk, LBO = 128, SBO = 256 (the harness's
    strides for swizzle 0)."""
    img = np.zeros(16384, np.uint8)
    per = 16 // elem_bytes
    raw = np.ascontiguousarray(b.astype(f"<u{elem_bytes}")).view(np.uint8).reshape(b.shape[0], b.shape[1], -1)
    for n in range(b.shape[0]):
        for k in range(b.shape[1]):
            off = 8192 + (n % per) * elem_bytes + (n // per) * 256 + (k % 8) * 16 + (k // 8) * 128
            img[off:off + elem_bytes] = raw[n, k]
    return img


def value(bits: int, etype: str):
    """An element's bit pattern as tests/test_fp8_mma.py's kinds (Fraction, '-0', 'nan', '+inf', '-inf')."""
    if etype in ("e4m3", "e5m2"):
        return fp8(bits, etype)
    if etype == "f16":
        return acc_value(bits, "f16")
    f32 = bits << 16 if etype == "bf16" else bits & 0xFFFFE000  # tf32: the upper 19 bits
    return acc_value(f32, "f32")


def float_bits(rng, etype: str, shape) -> np.ndarray:
    """Random element bit patterns of moderate magnitude (no overflow of the f16 accumulator)."""
    if etype in ("e4m3", "e5m2"):
        b = rng.integers(0, 256, shape)
        bad = (b & 0x7F) == 0x7F if etype == "e4m3" else (b & 0x7C) == 0x7C
        return np.where(bad, b & 0xB3, b)
    v = (rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 3, shape)).astype(np.float32)
    if etype == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.int64)
    u = v.view(np.uint32).astype(np.int64)
    return u >> 16 if etype == "bf16" else u  # bf16: truncated; tf32: the f32 bits (the low 13 ignored)


def run_float(acc, at, bt, n, sw, engine, opt, scale_d=True, scale_a=1, scale_b=1, trans_b=None, specials=False,
              seed=0):
    """One float wgmma with A in registers; (got, want) accumulator words (128, N/2 f32 or N/4 packed f16x2)."""
    rng = np.random.default_rng(seed)
    k = K_OF[at]
    a, b = float_bits(rng, at, (64, k)), float_bits(rng, bt, (n, k))
    if at in ("f16", "bf16"):  # -0, the smallest subnormal, its negation in row 0
        a[0, :3] = [0x8000, 0x0001, 0x8001]
    elif at == "tf32":
        a[0, :3] = [0x80000000, 0x00002000, 0x80002000]
    else:
        a[0, :3] = [0x80, 0x01, 0x81]
    if specials:  # f16: a NaN, +inf and -inf
        a[5, 3], a[9, 0], a[40, 15] = 0x7E00, 0x7C00, 0xFC00
    eb = BITS[bt] // 8
    img = image(np.zeros((64, k), np.int64), b, sw, eb) if not trans_b else mn_major_image(b, eb)
    img[:2048] = a_registers(a, at).view(np.uint8).reshape(-1)
    nr = n // 2 if acc == "f32" else n // 4
    if acc == "f32":
        c0 = (rng.integers(-64, 65, (128, nr)) / 4).astype(np.float32).view(np.uint32)
    else:
        c0 = (rng.integers(-64, 65, (128, 2 * nr)) / 4).astype(np.float16).view(np.uint32)
    want = np.zeros((128, n // 2), np.uint32)
    for t in range(128):
        for i in range(n // 2):
            row, col = owner(t, i)
            cb = int(c0[t, i]) if acc == "f32" else int(c0[t, i // 2]) >> (16 * (i % 2)) & 0xFFFF
            c = acc_value(cb, acc) if scale_d else Fraction(0)
            prods = [_mul(_neg(value(int(a[row, kk]), at), scale_a), _neg(value(int(b[col, kk]), bt), scale_b))
                     for kk in range(k)]
            want[t, i] = dot([c] + prods, acc)
    if acc == "f16":
        want = want[:, 0::2] | want[:, 1::2] << 16
    mma = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{acc}.{at}.{bt}"
    tail = f", {scale_a}, {scale_b}" + ("" if trans_b is None else f", {trans_b}")
    ptx = reg_a_kernel(kernel(mma, nr, "f32" if acc == "f32" else "b32", tail))
    return launch(ptx, img, c0, sw, engine, opt, scale_d), want


def run_int(at, bt, sat, n, sw, engine, opt, scale_d=True, seed=0):
    """One integer wgmma (.s8/.u8, or .b1.and.popc) with A in registers; (got, want) as .s32."""
    rng = np.random.default_rng(seed)
    if at == "b1":
        a, b = rng.integers(0, 2, (64, 256)), rng.integers(0, 2, (n, 256))
        a[0], b[0] = 1, 1
        img = image(np.zeros((64, 32), np.int64), np.packbits(b.astype(np.uint8), axis=1, bitorder="little"), sw, 1)
        mma = f"wgmma.mma_async.sync.aligned.m64n{n}k256.s32.b1.b1.and.popc"
    else:
        lo = {"s8": -128, "u8": 0}
        a, b = rng.integers(lo[at], lo[at] + 256, (64, 32)), rng.integers(lo[bt], lo[bt] + 256, (n, 32))
        a[0], b[:4] = lo[at] + 255, lo[bt] + 255  # the largest products
        img = image(np.zeros((64, 32), np.int64), b & 0xFF, sw, 1)
        mma = f"wgmma.mma_async.sync.aligned.m64n{n}k32.s32.{at}.{bt}" + (".satfinite" if sat else "")
    img[:2048] = a_registers(a & 0xFF, at).view(np.uint8).reshape(-1)
    nr = n // 2
    c0 = rng.integers(-(2**31), 2**31, (128, nr))
    c0[0, :4] = [2**31 - 1, -(2**31), 2**31 - 10, -(2**31) + 10]
    want = np.zeros((128, nr), np.int64)
    for t in range(128):
        for i in range(nr):
            row, col = owner(t, i)
            dot_ = int((a[row] & b[col]).sum()) if at == "b1" else int(a[row] @ b[col])
            want[t, i] = dot_ + (int(c0[t, i]) if scale_d else 0)
    want = np.clip(want, -(2**31), 2**31 - 1) if sat else (want + 2**31) % 2**32 - 2**31
    got = launch(reg_a_kernel(kernel(mma, nr, "s32")), img, c0.astype(np.int32), sw, engine, opt, scale_d)
    return got.view(np.int32), want


def reg_a_kernel(ptx: str) -> str:
    """The harness's kernel with A in registers: thread t loads its four A words from shared byte 16t after the
    barrier and passes them in place of the A descriptor."""
    ptx = ptx.replace("    .shared .align 1024", "    .reg .b32 %q<4>;\n    .shared .align 1024")
    loads = "".join(f"    ld.shared.u32 %q{j}, [%r11+{4 * j}];\n" for j in range(4))
    ptx = ptx.replace("    wgmma.fence.sync.aligned;\n",
                      f"    shl.b32 %r10, %r1, 4;\n    add.u32 %r11, %r6, %r10;\n{loads}    wgmma.fence.sync.aligned;\n")
    assert ", %rd7, %rd8, %p2" in ptx
    return ptx.replace(", %rd7, %rd8, %p2", ", {%q0, %q1, %q2, %q3}, %rd8, %p2")


FLOAT_CASES = [  # acc, atype, btype, n, swizzle, scale-a, scale-b, imm-trans-b (None: the form has none)
    ("f32", "f16", "f16", 8, 0, 1, 1, 0),
    ("f32", "bf16", "bf16", 16, 128, -1, 1, 0),
    ("f32", "f16", "f16", 16, 0, 1, -1, 1),
    ("f16", "f16", "f16", 16, 64, 1, 1, 0),
    ("f32", "tf32", "tf32", 8, 32, -1, 1, None),
    ("f32", "e4m3", "e5m2", 8, 0, 1, -1, None),
    ("f16", "e5m2", "e4m3", 16, 128, 1, 1, None),
    ("f32", "e5m2", "e5m2", 24, 64, 1, 1, None),
]


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("acc,at,bt,n,sw,sa,sb,tb", FLOAT_CASES)
def test_float_wgmma_with_a_in_registers(acc, at, bt, n, sw, sa, sb, tb, engine, opt):
    got, want = run_float(acc, at, bt, n, sw, engine, opt, scale_a=sa, scale_b=sb, trans_b=tb, seed=n + sw)
    bad = np.argwhere(got != want)
    assert not bad.size, [(int(t), int(i), hex(got[t, i]), hex(want[t, i])) for t, i in bad[:8]]


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("at,bt,sat,n,sw", [("s8", "u8", False, 8, 0), ("u8", "s8", True, 16, 128),
                                            ("b1", "b1", False, 8, 32)])
def test_int_wgmma_with_a_in_registers(at, bt, sat, n, sw, engine, opt):
    got, want = run_int(at, bt, sat, n, sw, engine, opt, seed=n + sw)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_scale_d_false_with_a_in_registers(engine):
    got, want = run_float("f32", "bf16", "bf16", 8, 0, engine, 3, scale_d=False, trans_b=0, seed=7)
    np.testing.assert_array_equal(got, want)
    got, want = run_int("s8", "s8", True, 8, 0, engine, 0, scale_d=False, seed=8)
    np.testing.assert_array_equal(got, want)


def test_nan_and_infinity_in_a_registers():
    """A NaN (row 5) and infinities (rows 9 and 40) in A's registers reach the products of their rows, the same on
    both engines."""
    outs = []
    for engine in ("ir", "isa"):
        got, want = run_float("f32", "f16", "f16", 8, 0, engine, 3, trans_b=0, specials=True, seed=3)
        np.testing.assert_array_equal(got, want)
        outs.append(got)
    assert np.array_equal(outs[0], outs[1])
    assert (outs[0] == 0x7FFFFFFF).any() and (outs[0] == 0x7F800000).any()


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_immediate_a_registers(engine, opt):
    """A from immediates (every element f16 1.0, constant at -O3): D = the exact column sums of B plus C."""
    rng = np.random.default_rng(11)
    b = float_bits(rng, "f16", (8, 16))
    img = image(np.zeros((64, 16), np.int64), b, 0, 2)
    c0 = (rng.integers(-64, 65, (128, 4)) / 4).astype(np.float32).view(np.uint32)
    want = np.zeros((128, 4), np.uint32)
    for t in range(128):
        for i in range(4):
            col = owner(t, i)[1]
            want[t, i] = dot([acc_value(int(c0[t, i]), "f32")] + [value(int(x), "f16") for x in b[col]], "f32")
    ptx = reg_a_kernel(kernel("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", 4, "f32", ", 1, 1, 0"))
    ptx = ptx.replace("{%q0, %q1, %q2, %q3}", "{0x3C003C00, 0x3C003C00, 0x3C003C00, 0x3C003C00}")
    np.testing.assert_array_equal(launch(ptx, img, c0, 0, engine, opt, True), want)


_BAD = [
    ("{%q0, %q1, %q2}, %rd8, %p2, 1, 1, 0", "A in registers must be a vector of 4 .b32 registers, got 3"),
    ("{%q0, %q1, %q2, %q3}, %rd8, %p2, 1, 1", "takes d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, "
                                               "imm-scale-b and imm-trans-b, got 6 operands"),
    ("{%q0, %q1, %q2, %q3}, %rd8, %p2, 1, 1, 0, 0", "got 8 operands"),
    ("{%q0, %q1, %q2, %rd1}, %rd8, %p2, 1, 1, 0", "A in registers takes 32-bit registers, register '%rd1' is b64"),
    ("{%q0, %q1, %q2, %q3}, %rd8, %p2, 1, 1, 2", "imm-trans-b must be 0 or 1"),
]


@pytest.mark.parametrize("operands,msg", _BAD)
def test_bad_register_a_forms_are_located_errors(operands, msg):
    """Wrong forms are refused with a located message, the same from ``xcc check`` and from the compile."""
    from xcc.check import check_sources
    from xcc.sources import Source

    ptx = reg_a_kernel(kernel("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", 4, "f32", ", 1, 1, 0"))
    ptx = ptx.replace("{%q0, %q1, %q2, %q3}, %rd8, %p2, 1, 1, 0", operands)
    res = check_sources([Source(ptx, "bad.ptx")])
    assert res.errors and msg in str(res.errors[0]) and "bad.ptx:" in str(res.errors[0])
    with pytest.raises(XccError) as e:
        rt.load_module(Source(ptx, "bad.ptx"), engine="isa").get_function("k")
    assert str(e.value) == str(res.errors[0])
