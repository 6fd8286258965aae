"""Sub-byte integer ``mma.sync`` (.s4/.u4 with and without .satfinite; .b1 with .and.popc / .xor.popc) on both
engines at -O0 and -O3, against numpy: the test places each lane's fragment registers from the PTX ISA's fragment
tables (restated in :func:`coords`), and the reference is the exact integer product (``popc`` of the and / xor
of the bit rows and columns for .b1), wrapped to 32 bits or saturated to the .s32 range.  Nothing here calls
xcc.semantics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import XccError

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]

KERNEL = """
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd5, %r0, 16;
    add.s64 %rd1, %rd1, %rd5;
    add.s64 %rd2, %rd2, %rd5;
    add.s64 %rd3, %rd3, %rd5;
    add.s64 %rd4, %rd4, %rd5;
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
    ld.global.v2.u32 {%r5, %r6}, [%rd2];
    ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd3];
    MMA
    st.global.v4.u32 [%rd4], {%r11, %r12, %r13, %r14};
    ret;
}
"""
"""Thread t reads A registers at pa + 16 t, B at pb + 16 t, C at pc + 16 t, and stores D (4 words) at pd + 16 t."""


def mma_line(shape: str, types: str, suffix: str) -> str:
    m = 8 if shape.startswith("m8") else 16
    k = int(shape.split("k")[1])
    per = 32 if "b1" in types else 4 if "8." in types else 8
    na, nb, nc = m * k // (32 * per), k * 8 // (32 * per), m * 8 // 32
    regs = lambda first, n: "{" + ", ".join(f"%r{first + i}" for i in range(n)) + "}"  # noqa: E731
    return (f"mma.sync.aligned.{shape}.row.col{suffix}.{types} {regs(11, nc)}, {regs(1, na)}, {regs(5, nb)}, "
            f"{regs(7, nc)};" + ("\n    mov.u32 %r13, 0;\n    mov.u32 %r14, 0;" if nc == 2 else ""))


def coords(shape: str, operand: str, lane: int, per: int) -> list[list[tuple[int, int]]]:
    """Per register, the (row, column) of each element (low bits first): PTX ISA fragment tables for
    m8n8k32/m16n8k32/m16n8k64 (.s4/.u4) and m8n8k128/m16n8k128/m16n8k256 (.b1); ``per`` elements a register."""
    g, t = lane // 4, lane % 4
    m = 8 if shape.startswith("m8") else 16
    k = int(shape.split("k")[1])
    if operand == "a":
        nregs = m * k // (32 * per)
        return [[(g + 8 * (r % 2) if m == 16 else g, per * t + j + 4 * per * (r // 2)) for j in range(per)]
                for r in range(nregs)]
    if operand == "b":
        return [[(per * t + j + 4 * per * r, g) for j in range(per)] for r in range(k * 8 // (32 * per))]
    return [[(g + 8 * (i // 2), 2 * t + i % 2)] for i in range(m * 8 // 32)]


def place(mat: np.ndarray, shape: str, operand: str, per: int) -> np.ndarray:
    """Each lane's fragment registers (uint32 [32, 4]) holding ``mat`` (unsigned element codes)."""
    bits = 32 // per
    out = np.zeros((32, 4), np.uint32)
    for lane in range(32):
        for r, els in enumerate(coords(shape, operand, lane, per)):
            word = 0
            for j, (row, col) in enumerate(els):
                word |= (int(mat[row, col]) & ((1 << bits) - 1)) << (bits * j)
            out[lane, r] = word & 0xFFFFFFFF
    return out


def gather_d(frag: np.ndarray, shape: str) -> np.ndarray:
    m = 8 if shape.startswith("m8") else 16
    d = np.zeros((m, 8), np.int64)
    for lane in range(32):
        for r, [(row, col)] in enumerate(coords(shape, "c", lane, 1)):
            d[row, col] = int(np.int32(frag[lane, r]))
    return d


def run(shape, types, suffix, a, b, c, engine, opt, per):
    fa, fb, fc = place(a, shape, "a", per), place(b, shape, "b", per), place(c, shape, "c", 1)
    dev = rt.Device()
    ins = [rt.to_device(x, dev) for x in (fa, fb, fc)]
    dout = rt.to_device(np.zeros((32, 4), np.uint32), dev)
    module = rt.load_module(KERNEL.replace("MMA", mma_line(shape, types, suffix)), device=dev, engine=engine,
                            opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    return gather_d(dout.copy_to_host().reshape(32, 4), shape)


def wrap_or_sat(d: np.ndarray, sat: bool) -> np.ndarray:
    if sat:
        return np.clip(d, -(2**31), 2**31 - 1)
    return ((d + 2**31) % 2**32) - 2**31


S4_CASES = [(shape, at, bt, sat) for shape in ("m8n8k32", "m16n8k32", "m16n8k64")
            for at, bt in (("s4", "s4"), ("u4", "s4"), ("u4", "u4")) for sat in (False, True)]
S8_CASES = [(shape, at, bt, sat) for shape in ("m8n8k16", "m16n8k16")
            for at, bt in (("s8", "s8"), ("s8", "u8"), ("u8", "u8")) for sat in (False, True)]


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("shape,at,bt,sat", S4_CASES)
def test_mma_s4_u4(shape, at, bt, sat, engine, opt):
    m = 8 if shape.startswith("m8") else 16
    k = int(shape.split("k")[1])
    rng = np.random.default_rng(k + m + opt)
    lo = {"s4": -8, "u4": 0}
    a = rng.integers(lo[at], lo[at] + 16, (m, k))
    b = rng.integers(lo[bt], lo[bt] + 16, (k, 8))
    c = rng.integers(-(2**31), 2**31, (m, 8))
    c[0, :4] = [2**31 - 1, -(2**31), 2**31 - 100, -(2**31) + 100]  # saturation and wrapping bounds
    a[0], b[:, :4] = lo[at] + 15, lo[bt] + 15                         # the largest products
    got = run(shape, f"s32.{at}.{bt}.s32", ".satfinite" if sat else "", a, b, c, engine, opt, 8)
    np.testing.assert_array_equal(got, wrap_or_sat(a @ b + c, sat))


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("shape,at,bt,sat", S8_CASES)
def test_mma_s8_u8_shallow_shapes(shape, at, bt, sat, engine, opt):
    """m8n8k16 / m16n8k16 .s8/.u8 (the fragment tables' 8-bit rows: four bytes of a row of A, of a column of B)."""
    m = 8 if shape.startswith("m8") else 16
    rng = np.random.default_rng(m + opt + len(at + bt))
    lo = {"s8": -128, "u8": 0}
    a, b = rng.integers(lo[at], lo[at] + 256, (m, 16)), rng.integers(lo[bt], lo[bt] + 256, (16, 8))
    c = rng.integers(-(2**31), 2**31, (m, 8))
    c[0, :4] = [2**31 - 1, -(2**31), 2**31 - 100, -(2**31) + 100]
    a[0], b[:, :4] = lo[at] + 255, lo[bt] + 255
    got = run(shape, f"s32.{at}.{bt}.s32", ".satfinite" if sat else "", a, b, c, engine, opt, 4)
    np.testing.assert_array_equal(got, wrap_or_sat(a @ b + c, sat))


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("shape", ["m8n8k128", "m16n8k128", "m16n8k256"])
@pytest.mark.parametrize("op", ["and", "xor"])
def test_mma_b1_popc(shape, op, engine, opt):
    m = 8 if shape.startswith("m8") else 16
    k = int(shape.split("k")[1])
    rng = np.random.default_rng(k + m + opt + len(op))
    a, b = rng.integers(0, 2, (m, k)), rng.integers(0, 2, (k, 8))
    a[1], b[:, 1] = 1, 1                                              # all-ones row and column
    c = rng.integers(-(2**31), 2**31, (m, 8))
    c[0, 0] = 2**31 - 1                                               # wraps
    bit = (a[:, :, None] & b[None, :, :]) if op == "and" else (a[:, :, None] ^ b[None, :, :])
    got = run_b1(shape, op, a, b, c, engine, opt)
    np.testing.assert_array_equal(got, wrap_or_sat(bit.sum(axis=1) + c, False))


def run_b1(shape, op, a, b, c, engine, opt):
    fa, fb, fc = place(a, shape, "a", 32), place(b, shape, "b", 32), place(c, shape, "c", 1)
    line = mma_line(shape, "s32.b1.b1.s32", "").replace(".s32.b1.b1.s32 ", f".s32.b1.b1.s32.{op}.popc ")
    dev = rt.Device()
    ins = [rt.to_device(x, dev) for x in (fa, fb, fc)]
    dout = rt.to_device(np.zeros((32, 4), np.uint32), dev)
    module = rt.load_module(KERNEL.replace("MMA", line), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    return gather_d(dout.copy_to_host().reshape(32, 4), shape)


@pytest.mark.parametrize("line,msg", [
    ("mma.sync.aligned.m8n8k32.row.col.s32.s4.s8.s32 {%r11, %r12}, {%r1}, {%r5}, {%r7, %r8};", r"takes \.s32\.\{s4,u4\}"),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.popc {%r11, %r12}, {%r1}, {%r5}, {%r7, %r8};",
     r"\{and,xor\}\.popc"),
    ("mma.sync.aligned.m8n8k128.row.col.satfinite.s32.b1.b1.s32.and.popc {%r11, %r12}, {%r1}, {%r5}, {%r7, %r8};",
     r"\{and,xor\}\.popc"),
    ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%r11, %r12, %r13, %r14}, {%r1, %r2}, {%r5, %r6}, "
     "{%r7, %r8, %r9, %r10};", r"A must be a vector of 4 registers"),
])
def test_bad_subbyte_forms_are_located_errors(line, msg):
    with pytest.raises(XccError, match=msg) as e:
        rt.load_module(KERNEL.replace("MMA", line), device=rt.Device(), engine="isa", opt_level=0).get_function("k")
    assert ":22:" in str(e.value)


PTX = (Path(__file__).parent / "data" / "runtime" / "mma_subbyte.sm_80.ptx").read_text()


def kernel_ptx(name: str) -> str:
    """The module's header and the one entry ``name``."""
    head, *entries = PTX.split("\n\t// .globl\t")
    return head + "".join("\n\t// .globl\t" + e for e in entries if e.startswith(name + "\n"))


def pack_rows(mat: np.ndarray, bits: int) -> np.ndarray:
    """Rows of ``mat`` (element codes) packed into 32-bit words, element 0 in the low bits."""
    per = 32 // bits
    m, k = mat.shape
    codes = (mat.astype(np.int64) & ((1 << bits) - 1)).reshape(m, k // per, per)
    return (codes << (bits * np.arange(per))).sum(axis=2).astype(np.uint32)


def run_wmma(name, a, b, c, engine, opt, bits, outs=1):
    dev = rt.Device()
    ins = [rt.to_device(pack_rows(a, bits), dev), rt.to_device(pack_rows(b.T, bits), dev),
           rt.to_device(c.astype(np.int32), dev)]
    douts = [rt.to_device(np.zeros((8, 8), np.int32), dev) for _ in range(outs)]
    module = rt.load_module(kernel_ptx(name), device=dev, engine=engine, opt_level=opt)
    module.get_function(name).launch((1, 1, 1), (32, 1, 1), [*ins, *douts])
    return [d.copy_to_host().reshape(8, 8).astype(np.int64) for d in douts]


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("name,lo,sat", [("wmma_s4", -8, True), ("wmma_u4", 0, False)])
def test_wmma_s4_u4_from_nvcc(name, lo, sat, engine, opt):
    rng = np.random.default_rng(3 + opt - lo)
    a, b = rng.integers(lo, lo + 16, (8, 32)), rng.integers(lo, lo + 16, (32, 8))
    c = rng.integers(-(2**31), 2**31, (8, 8))
    c[0, :2] = [2**31 - 1, -(2**31)]
    [got] = run_wmma(name, a, b, c, engine, opt, 4)
    np.testing.assert_array_equal(got, wrap_or_sat(a @ b + c, sat))


@pytest.mark.parametrize("engine,opt", ENGINES)
def test_bmma_b1_from_nvcc(engine, opt):
    rng = np.random.default_rng(5 + opt)
    a, b = rng.integers(0, 2, (8, 128)), rng.integers(0, 2, (128, 8))
    c = rng.integers(-1000, 1000, (8, 8))
    got_xor, got_and = run_wmma("bmma_b1", a, b, c, engine, opt, 1, outs=2)
    np.testing.assert_array_equal(got_xor, (a[:, :, None] ^ b[None]).sum(axis=1) + c)
    np.testing.assert_array_equal(got_and, (a[:, :, None] & b[None]).sum(axis=1) + c)


@pytest.mark.parametrize("engine,opt", ENGINES)
@pytest.mark.parametrize("name", ["wmma_s8", "wmma_u8"])
def test_wmma_bytes_from_nvcc(name, engine, opt):
    """nvcuda::wmma m16n16k16 signed char (A, B row-major, saturating) / unsigned char (A, B column-major)."""
    signed = name == "wmma_s8"
    rng = np.random.default_rng(17 + opt + signed)
    lo = -128 if signed else 0
    a, b = rng.integers(lo, lo + 256, (16, 16)), rng.integers(lo, lo + 256, (16, 16))
    a[0], b[:, 0] = lo + 255, lo + 255
    c = rng.integers(-(2**31), 2**31, (16, 16))
    c[0, 0], c[0, 1] = 2**31 - 100, -(2**31) + 100
    dt = np.int8 if signed else np.uint8
    mats = (a, b) if signed else (a.T, b.T)                     # as the kernel reads them
    dev = rt.Device()
    ins = [rt.to_device(np.ascontiguousarray(x).astype(dt), dev) for x in mats] + \
        [rt.to_device(c.astype(np.int32), dev)]
    dout = rt.to_device(np.zeros((16, 16), np.int32), dev)
    module = rt.load_module(kernel_ptx(name), device=dev, engine=engine, opt_level=opt)
    module.get_function(name).launch((1, 1, 1), (32, 1, 1), [*ins, dout])
    got = dout.copy_to_host().reshape(16, 16).astype(np.int64)
    np.testing.assert_array_equal(got, wrap_or_sat(a @ b + c, signed))
