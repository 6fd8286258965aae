"""The xg1 ISA interpreter on hand-assembled programs, checked against numpy."""

from __future__ import annotations

import struct
import time
from fractions import Fraction

import numpy as np
import pytest

from xcc.backend.encoding import encode_all
from xcc.backend.isa import CBANK_NTID, CBANK_PARAMS, PT, RZ, SR_INDEX, TABLE
from xcc.backend.minst import CBank, Imm, MInst, mi
from xcc.backend.objfile import KernelImage, ParamInfo
from xcc.diagnostics import KernelFault, LaunchError
from xcc.sim.isa.emulator import LaunchStats, run_kernel
from xcc.sim.isa.executors import IMPLS
from xcc.sim.memory import GlobalMemory

U32 = np.uint32


@pytest.fixture(autouse=True)
def _no_strict_hazards(monkeypatch):
    """These programs are assembled by hand without control codes: the strict hazard mode
    (xcc.sim.isa.hazards), which checks compiled code, is off here."""
    monkeypatch.setenv("XCC_STRICT_HAZARDS", "0")


# -- a tiny assembler ------------------------------------------------------------------------------


def asm(items) -> list[MInst]:
    """MInsts and label strings -> MInsts with branch targets resolved to relative offsets."""
    labels, insts = {}, []
    for it in items:
        if isinstance(it, str):
            labels[it] = len(insts)
        else:
            insts.append(it)
    for pc, inst in enumerate(insts):
        for op in inst.d.operands:
            if op.kind == "L" and isinstance(inst.ops.get(op.field), str):
                inst.ops[op.field] = labels[inst.ops[op.field]] - (pc + 1)
    return insts


def kimage(items, nparams=0, registers=64, shared=0, name="k") -> KernelImage:
    insts = asm(items)
    params = [ParamInfo(f"p{i}", "u64", 8 * i, 8) for i in range(nparams)]
    return KernelImage(name, encode_all(insts), params, registers, shared_bytes=shared,
                       lines=[i.line for i in insts])


def pack(*ptrs) -> bytes:
    return struct.pack(f"<{len(ptrs)}Q", *ptrs)


def param(i):
    return CBank(0, CBANK_PARAMS + 8 * i)


def s2r(d, name):
    return mi("S2R", d=d, b=SR_INDEX[name])


def gid_prologue(addr_reg, param_idx, elem_bytes):
    """R0 = tid.x, R1 = ctaid.x, R2 = ntid.x, R3 = global id, addr_reg pair = param + R3*elem_bytes."""
    return [s2r(0, "SR_TID.X"), s2r(1, "SR_CTAID.X"), mi("LDC", d=2, b=CBank(0, CBANK_NTID)),
            mi("IMAD", d=3, a=1, b=2, c=0),
            mi("LDC.64", d=60, b=param(param_idx)),
            mi("IMAD.WIDE", d=addr_reg, a=3, b=Imm(elem_bytes), c=60)]


def upload(g: GlobalMemory, arr) -> int:
    arr = np.ascontiguousarray(arr)
    p = g.alloc(arr.nbytes)
    g.write(p, arr)
    return p


def download(g, p, n, dtype=U32):
    return g.read(p, n * np.dtype(dtype).itemsize).view(dtype)


def test_every_isa_instruction_has_an_executor():
    assert set(IMPLS) == set(TABLE)


# -- straight-line arithmetic ----------------------------------------------------------------------

K_IN, K_OUT = 5, 26


def f32_round(fr: Fraction) -> np.float32:
    """The exact value ``fr`` rounded to nearest-even f32 (reference for FFMA)."""
    x = np.float32(float(fr))
    cands = [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - fr), int(np.array(c).view(U32)) & 1))


def alu_program():
    st = lambda j, r: mi("STG", a=10, b=4 * j, c=r)  # noqa: E731
    return [
        *gid_prologue(8, 0, 4 * K_IN),
        mi("LDC.64", d=4, b=param(1)), mi("IMAD.WIDE", d=10, a=3, b=Imm(4 * K_OUT), c=4),
        mi("LDG", d=12, a=8, b=0), mi("LDG", d=13, a=8, b=4), mi("LDG", d=14, a=8, b=8),
        mi("LDG", d=15, a=8, b=12), mi("LDG", d=16, a=8, b=16),
        mi("IADD3", d=17, a=12, b=Imm(0x7FFFFFFF), c=13), st(0, 17),          # A + 0x7fffffff + B
        mi("IADD3", d=17, a=12, b=13, c=RZ, mods={"NEG_B": "NEG_B"}), st(1, 17),  # A - B
        mi("MOV", d=22, b=Imm(5)), mi("MOV", d=23, b=Imm(1)),                 # R22:R23 = 0x1_00000005
        mi("IMAD.WIDE", d=20, a=12, b=13, c=22, mods={"type": "S32"}), st(2, 20), st(3, 21),
        mi("IMAD.WIDE", d=20, a=12, b=13, c=22), st(4, 20), st(5, 21),
        mi("IMAD", d=17, a=12, b=13, c=12, mods={"mode": "HI", "type": "S32"}), st(6, 17),
        mi("ISETP", pd=0, a=12, b=13, ps=PT, mods={"cmp": "LT", "type": "S32"}),
        mi("SEL", d=17, a=12, b=13, ps=0), st(7, 17),                         # signed min via ISETP/SEL
        mi("FFMA", d=17, a=14, b=15, c=16), st(8, 17),
        mi("LOP3", d=17, a=12, b=13, c=14, mods={"lut": "0x96"}), st(9, 17),  # a ^ b ^ c
        mi("LOP3", d=17, a=12, b=Imm(0xFF00FF00), c=RZ, mods={"lut": "0xc0"}), st(10, 17),
        mi("SHL", d=17, a=12, b=Imm(7)), st(11, 17),
        mi("LOP3", d=18, a=13, b=Imm(63), c=RZ, mods={"lut": "0xc0"}),         # B & 63: counts >= 32 too
        mi("SHR", d=17, a=12, b=18, mods={"type": "S32"}), st(12, 17),
        mi("POPC", d=17, a=12), st(13, 17),
        mi("FLO", d=17, a=13), st(14, 17),
        mi("BREV", d=17, a=12), st(15, 17),
        mi("SGXT", d=17, a=12, b=Imm(12)), st(16, 17),
        mi("IMNMX", d=17, a=12, b=13, mods={"minmax": "MAX", "type": "U32"}), st(17, 17),
        mi("IABS", d=17, a=12), st(18, 17),
        mi("I2F", d=17, a=12, mods={"type": "S32"}), st(19, 17),
        mi("F2I", d=17, a=14, mods={"rnd": "RNI"}), st(20, 17),
        mi("FMNMX", d=17, a=14, b=15, mods={"minmax": "MIN"}), st(21, 17),
        mi("FSETP", pd=1, a=14, b=15, ps=(0, True), mods={"cmp": "GT", "bool": "AND"}),  # X > Y && !(A < B)
        mi("P2R", d=17, ps=1), st(22, 17),
        mi("PLOP3", pd=2, pa=0, ps=1, mods={"lut": "0x06"}), mi("P2R", d=17, ps=2), st(23, 17),  # P0 ^ P1
        mi("FMUL", d=17, a=14, b=15, mods={"rnd": "RZ"}), st(24, 17),
        mi("FADD", d=17, a=14, b=15, mods={"NEG_B": "NEG_B", "SAT": "SAT"}), st(25, 17),
        mi("EXIT"),
    ]


def test_straight_line_arithmetic():
    rng = np.random.default_rng(7)
    n = 200
    A = rng.integers(0, 2**32, n, dtype=np.uint64).astype(U32)
    B = rng.integers(0, 2**32, n, dtype=np.uint64).astype(U32)
    B[:8] = [0, 1, 31, 32, 33, 0xFFFFFFFF, 0x80000000, 5]
    A[:4] = [0x80000000, 0xFFFFFFFF, 0, 0x7FFFFFFF]
    X = (rng.standard_normal(n) * 10).astype(np.float32)
    Y = (rng.standard_normal(n) * 10).astype(np.float32)
    Z = (rng.standard_normal(n) * 100).astype(np.float32)
    # (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly; mul-then-add rounding gives 0
    X[0] = Y[0] = np.float32(1 + 2**-12)
    Z[0] = np.float32(-(1 + 2**-11))
    X[1], Y[1] = np.float32(np.nan), np.float32(1.0)
    inp = np.stack([A, B, X.view(U32), Y.view(U32), Z.view(U32)], 1)
    g = GlobalMemory()
    pin, pout = upload(g, inp), g.alloc(n * K_OUT * 4)
    stats = run_kernel(kimage(alu_program(), nparams=2), (4, 1, 1), (50, 1, 1), pack(pin, pout), g)
    out = download(g, pout, n * K_OUT).reshape(n, K_OUT)
    As, Bs = A.view(np.int32).astype(np.int64), B.view(np.int32).astype(np.int64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:, 0], A + U32(0x7FFFFFFF) + B)
        np.testing.assert_array_equal(out[:, 1], A - B)
        w = (As * Bs + 0x1_00000005).astype(np.uint64)
        np.testing.assert_array_equal(out[:, 2], (w & 0xFFFFFFFF).astype(U32))
        np.testing.assert_array_equal(out[:, 3], (w >> np.uint64(32)).astype(U32))
        w = A.astype(np.uint64) * B.astype(np.uint64) + np.uint64(0x1_00000005)
        np.testing.assert_array_equal(out[:, 4], (w & 0xFFFFFFFF).astype(U32))
        np.testing.assert_array_equal(out[:, 5], (w >> np.uint64(32)).astype(U32))
        np.testing.assert_array_equal(out[:, 6], ((As * Bs) >> 32).astype(np.int64).astype(U32) + A)
        np.testing.assert_array_equal(out[:, 7], np.minimum(As, Bs).astype(U32))
    assert out[0, 8] == np.array(np.float32(2.0**-24)).view(U32)  # a single rounding
    for i in range(2, n):
        exact = Fraction(float(X[i])) * Fraction(float(Y[i])) + Fraction(float(Z[i]))
        assert out[i, 8] == np.array(f32_round(exact)).view(U32), i
    np.testing.assert_array_equal(out[:, 9], A ^ B ^ X.view(U32))
    np.testing.assert_array_equal(out[:, 10], A & U32(0xFF00FF00))
    np.testing.assert_array_equal(out[:, 11], A << U32(7))
    sh = (B & U32(63)).astype(np.int64)
    np.testing.assert_array_equal(out[:, 12], (As >> np.minimum(sh, 31)).astype(U32))
    np.testing.assert_array_equal(out[:, 13], [bin(int(a)).count("1") for a in A])
    np.testing.assert_array_equal(out[:, 14], [int(b).bit_length() - 1 & 0xFFFFFFFF for b in B])  # FLO.U32: bfind
    np.testing.assert_array_equal(out[:, 15], [int(f"{int(a):032b}"[::-1], 2) for a in A])
    low = (A & U32(0xFFF)).astype(np.int64)
    np.testing.assert_array_equal(out[:, 16], np.where(low >= 2048, low - 4096, low).astype(U32))
    np.testing.assert_array_equal(out[:, 17], np.maximum(A, B))
    np.testing.assert_array_equal(out[:, 18], np.abs(A.view(np.int32)).view(U32))
    np.testing.assert_array_equal(out[:, 19].view(np.float32), As.astype(np.float32))
    xi = np.where(np.isnan(X), 0, np.clip(np.rint(X.astype(np.float64)), -2**31, 2**31 - 1)).astype(np.int64)
    np.testing.assert_array_equal(out[:, 20], xi.astype(U32))
    mn = np.where(np.isnan(X), Y, np.minimum(X, Y)).astype(np.float32)
    np.testing.assert_array_equal(out[:, 21].view(np.float32), mn)
    p0 = As < Bs
    p1 = (X > Y) & ~p0
    np.testing.assert_array_equal(out[:, 22], p1)
    np.testing.assert_array_equal(out[:, 23], p0 ^ p1)
    prod = X.astype(np.float64) * Y.astype(np.float64)
    rz = prod.astype(np.float32)
    rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(prod), np.nextafter(rz, np.float32(0)), rz)
    np.testing.assert_array_equal(out[2:, 24].view(np.float32), rz[2:])
    sat = np.clip(X - Y, 0, 1)
    np.testing.assert_array_equal(out[:, 25].view(np.float32), np.where(np.isnan(sat), 0, sat).astype(np.float32))
    ninst = len(alu_program())
    assert stats.thread_instructions == n * ninst
    assert stats.warp_instructions == 4 * 2 * ninst  # 50 threads per CTA = 2 warps
    assert stats.instructions_executed["STG"] == 8 * K_OUT and stats.cycles > 0
    assert isinstance(stats, LaunchStats) and stats.kernel == "k" and stats.block == (50, 1, 1)


# -- control flow ----------------------------------------------------------------------------------


def test_divergent_if_else_reconverges_at_bsync():
    """The else block is laid out after the join, so threads of the then-side reach the join first
    and must wait at BSYNC; the SHFL after it must see all 32 lanes."""
    prog = [
        s2r(0, "SR_TID.X"), s2r(4, "SR_LANEID"),
        mi("MOV", d=5, b=Imm(31)), mi("MOV", d=6, b=Imm(0xFFFFFFFF)),
        mi("BSSY", c=0, b="join"),
        mi("ISETP", pd=0, a=4, b=Imm(16), ps=PT, mods={"cmp": "GE", "type": "U32"}),
        mi("BRA", guard=(0, False), b="else"),
        mi("IADD3", d=1, a=0, b=Imm(100), c=RZ),
        "join",
        mi("BSYNC", c=0),
        mi("SHFL", d=2, pd=1, a=1, b=Imm(1), c=5, e=6, mods={"mode": "DOWN"}),
        mi("P2R", d=3, ps=1),
        mi("SHFL", d=7, pd=2, a=1, b=Imm(3), c=5, e=6, mods={"mode": "BFLY"}),
        mi("LDC.64", d=8, b=param(0)), mi("IMAD.WIDE", d=10, a=0, b=Imm(16), c=8),
        mi("STG", a=10, b=0, c=1), mi("STG", a=10, b=4, c=2), mi("STG", a=10, b=8, c=3),
        mi("STG", a=10, b=12, c=7),
        mi("EXIT"),
        "else",
        mi("IMAD", d=1, a=0, b=Imm(3), c=5),
        mi("BRA", b="join"),
    ]
    g = GlobalMemory()
    p = g.alloc(64 * 16)
    run_kernel(kimage(prog, 1), (1, 1, 1), (64, 1, 1), pack(p), g)
    out = download(g, p, 64 * 4).reshape(64, 4)
    tid = np.arange(64)
    lane = tid % 32
    r1 = np.where(lane < 16, tid + 100, tid * 3 + 31)
    np.testing.assert_array_equal(out[:, 0], r1)
    src = np.where(lane < 31, tid + 1, tid)
    np.testing.assert_array_equal(out[:, 1], r1[src])
    np.testing.assert_array_equal(out[:, 2], lane < 31)
    np.testing.assert_array_equal(out[:, 3], r1[tid ^ 3])


def test_loop_with_per_thread_trip_count():
    prog = [
        s2r(0, "SR_TID.X"), mi("MOV", d=1, b=RZ), mi("MOV", d=2, b=RZ),
        mi("BSSY", c=1, b="done"),
        "loop",
        mi("ISETP", pd=0, a=2, b=0, ps=PT, mods={"cmp": "GE", "type": "U32"}),
        mi("BRA", guard=(0, False), b="done"),
        mi("IMAD", d=1, a=2, b=2, c=1),
        mi("IADD3", d=2, a=2, b=Imm(1), c=RZ),
        mi("BRA", b="loop"),
        "done",
        mi("BSYNC", c=1),
        s2r(3, "SR_CTAID.X"), mi("LDC", d=5, b=CBank(0, CBANK_NTID)), mi("IMAD", d=3, a=3, b=5, c=0),
        mi("LDC.64", d=8, b=param(0)), mi("IMAD.WIDE", d=10, a=3, b=Imm(4), c=8),
        mi("STG", a=10, b=0, c=1), mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(2 * 96 * 4)
    stats = run_kernel(kimage(prog, 1), (2, 1, 1), (96, 1, 1), pack(p), g)
    t = np.arange(96)
    expect = np.array([sum(i * i for i in range(k)) for k in t], np.uint32)
    np.testing.assert_array_equal(download(g, p, 192), np.tile(expect, 2))
    # a warp executes the loop test once per iteration of its longest-running thread, plus the exit test
    per_warp = t.reshape(3, 32).max(1) + 1
    assert stats.instructions_executed["ISETP"] == 2 * per_warp.sum()
    assert stats.instructions_executed["BSYNC"] == 2 * 3


def reverse_program(with_barrier=True):
    return [
        *gid_prologue(6, 0, 4),
        mi("LDG", d=8, a=6, b=0),
        mi("SHL", d=9, a=0, b=Imm(2)),
        s2r(10, "SR_WARPID"),
        mi("LOP3", d=11, a=10, b=Imm(1), c=RZ, mods={"lut": "0xc0"}),
        mi("ISETP", pd=0, a=11, b=RZ, ps=PT, mods={"cmp": "NE"}),
        mi("BRA", guard=(0, False), b="far"),  # odd warps store late, from code after the barrier
        mi("STS", a=9, b=0, c=8),
        "back",
        mi("BAR", b=Imm(0)) if with_barrier else mi("NOP"),
        mi("MOV", d=13, b=Imm(0xFFFFFFFF)),
        mi("IADD3", d=12, a=2, b=0, c=13, mods={"NEG_B": "NEG_B"}),  # ntid - 1 - tid
        mi("SHL", d=12, a=12, b=Imm(2)),
        mi("LDS", d=14, a=12, b=0),
        mi("LDC.64", d=16, b=param(1)), mi("IMAD.WIDE", d=18, a=3, b=Imm(4), c=16),
        mi("STG", a=18, b=0, c=14),
        mi("EXIT"),
        "far",
        mi("STS", a=9, b=0, c=8),
        mi("BRA", b="back"),
    ]


def test_bar_reverses_through_shared_memory():
    g = GlobalMemory()
    data = np.arange(3 * 128, dtype=U32) * 7 + 1
    pin, pout = upload(g, data), g.alloc(data.nbytes)
    run_kernel(kimage(reverse_program(), 2, shared=512), (3, 1, 1), (128, 1, 1), pack(pin, pout), g)
    np.testing.assert_array_equal(download(g, pout, 384), data.reshape(3, 128)[:, ::-1].ravel())
    # without the barrier the even warps read before the odd warps have stored
    g2 = GlobalMemory()
    pin, pout = upload(g2, data), g2.alloc(data.nbytes)
    run_kernel(kimage(reverse_program(False), 2, shared=512), (3, 1, 1), (128, 1, 1), pack(pin, pout), g2)
    assert not np.array_equal(download(g2, pout, 384), data.reshape(3, 128)[:, ::-1].ravel())


def test_exited_threads_do_not_block_bar_or_bsync():
    prog = [
        s2r(0, "SR_TID.X"),
        mi("BSSY", c=2, b="join"),
        mi("ISETP", pd=0, a=0, b=Imm(40), ps=PT, mods={"cmp": "GE", "type": "U32"}),
        mi("EXIT", guard=(0, False)),
        mi("BAR", b=Imm(0)),
        "join",
        mi("BSYNC", c=2),
        mi("LDC.64", d=8, b=param(0)), mi("IMAD.WIDE", d=10, a=0, b=Imm(4), c=8),
        mi("STG", a=10, b=0, c=0), mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(64 * 4)
    g.memset(p, 0xFF, 64 * 4)
    run_kernel(kimage(prog, 1), (1, 1, 1), (64, 1, 1), pack(p), g)
    out = download(g, p, 64)
    np.testing.assert_array_equal(out[:40], np.arange(40))
    assert (out[40:] == 0xFFFFFFFF).all()


# -- atomics, geometry -----------------------------------------------------------------------------


def atomics_program():
    return [
        *gid_prologue(6, 0, 4 * 6),
        mi("LDC.64", d=20, b=param(1)),                         # R20:R21 -> 5 counters
        mi("MOV", d=9, b=Imm(1)),
        mi("IADD3", d=10, a=3, b=Imm(1), c=RZ),                 # gid + 1
        mi("ATOMG", d=11, a=20, b=0, c=9, e=RZ, mods={"op": "ADD"}),
        mi("ATOMG", d=12, a=20, b=4, c=10, e=RZ, mods={"op": "EXCH"}),
        mi("ATOMG", d=13, a=20, b=8, c=3, e=10, mods={"op": "CAS"}),
        mi("I2F", d=15, a=10, mods={"type": "U32"}),
        mi("MUFU", d=15, a=15, mods={"fn": "RCP"}),             # 1 / (gid + 1)
        mi("ATOMG", d=RZ, a=20, b=12, c=15, e=RZ, mods={"op": "ADD", "type": "F32"}),
        mi("LOP3", d=16, a=3, b=Imm(15), c=RZ, mods={"lut": "0xc0"}),
        mi("IADD3", d=16, a=16, b=Imm(0xFFFFFFF9), c=RZ),        # (gid & 15) - 7
        mi("ATOMG", d=17, a=20, b=16, c=16, e=RZ, mods={"op": "MAX", "type": "S32"}),
        mi("ATOMS", d=14, a=RZ, b=0, c=9, e=RZ, mods={"op": "ADD"}),
        mi("STG", a=6, b=0, c=11), mi("STG", a=6, b=4, c=12), mi("STG", a=6, b=8, c=13),
        mi("STG", a=6, b=12, c=14), mi("STG", a=6, b=16, c=17),
        mi("EXIT"),
    ]


def run_atomics():
    g = GlobalMemory()
    n = 4 * 80
    pout, pctr = g.alloc(n * 24), g.alloc(32)
    g.write(pctr + 16, np.array([-100], np.int32))
    stats = run_kernel(kimage(atomics_program(), 2, shared=16), (4, 1, 1), (80, 1, 1), pack(pout, pctr), g)
    return g, pout, pctr, n, stats


def test_atomics_are_serialised_in_thread_order():
    g, pout, pctr, n, _ = run_atomics()
    out = download(g, pout, n * 6).reshape(n, 6)
    gid = np.arange(n)
    np.testing.assert_array_equal(out[:, 0], gid)          # add: old value = number of earlier threads
    np.testing.assert_array_equal(out[:, 1], gid)          # exch: the previous thread's gid + 1
    np.testing.assert_array_equal(out[:, 2], gid)          # cas: every compare succeeds in order
    np.testing.assert_array_equal(out[:, 3], gid % 80)     # shared add, per CTA
    vals = (gid & 15) - 7
    running = np.maximum.accumulate(np.concatenate([[-100], vals]))[:-1]
    np.testing.assert_array_equal(out[:, 4].view(np.int32), running)
    ctr = download(g, pctr, 5)
    assert list(ctr[:3]) == [n, n, n] and ctr[4].view(np.int32) == 8
    acc = np.float32(0)
    for k in range(1, n + 1):
        acc = np.float32(acc + np.float32(1.0 / k))
    assert ctr[3].view(np.float32) == acc  # sequential float sum in thread order


def test_determinism():
    g1, p1, c1, n, s1 = run_atomics()
    g2, p2, c2, _, s2 = run_atomics()
    assert bytes(g1.read(p1, n * 24)) == bytes(g2.read(p2, n * 24))
    assert bytes(g1.read(c1, 32)) == bytes(g2.read(c2, 32))
    assert s1 == s2


def test_partial_last_warp():
    prog = [
        *gid_prologue(6, 0, 16),
        s2r(4, "SR_LANEID"), s2r(5, "SR_WARPID"),
        mi("ISETP", pd=0, a=0, b=Imm(40), ps=PT, mods={"cmp": "LT", "type": "U32"}),
        mi("MOV", d=9, b=Imm(0xFFFFFFFF)),
        mi("VOTE", d=10, pd=1, ps=PT, e=9, mods={"mode": "ALL"}),
        mi("VOTE", d=11, pd=2, ps=0, e=9, mods={"mode": "ALL"}),
        mi("P2R", d=12, ps=2),
        mi("STG", a=6, b=0, c=10), mi("STG", a=6, b=4, c=11), mi("STG", a=6, b=8, c=12),
        mi("IMAD", d=13, a=5, b=Imm(32), c=4), mi("STG", a=6, b=12, c=13),
        mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(100 * 16)
    stats = run_kernel(kimage(prog, 1), (2, 1, 1), (50, 1, 1), pack(p), g)
    out = download(g, p, 400).reshape(2, 50, 4)
    t = np.arange(50)
    full, part = 0xFFFFFFFF, (1 << 18) - 1
    np.testing.assert_array_equal(out[:, :, 0], np.where(t < 32, full, part)[None].repeat(2, 0))
    np.testing.assert_array_equal(out[:, :, 1], np.where(t < 32, full, (1 << 8) - 1)[None].repeat(2, 0))
    np.testing.assert_array_equal(out[:, :, 2], np.where(t < 32, 1, 0)[None].repeat(2, 0))
    np.testing.assert_array_equal(out[:, :, 3], np.tile(t, (2, 1)))
    assert stats.thread_instructions == len(prog) * 100
    assert stats.warp_instructions == len(prog) * 4


def test_2d_grid_and_block():
    prog = [
        s2r(0, "SR_TID.X"), s2r(1, "SR_TID.Y"), s2r(2, "SR_TID.Z"), s2r(3, "SR_CTAID.X"), s2r(4, "SR_CTAID.Y"),
        s2r(5, "SR_NTID.X"), s2r(6, "SR_NTID.Y"), s2r(7, "SR_NCTAID.X"),
        mi("IMAD", d=8, a=4, b=7, c=3),                          # linear CTA
        mi("IMAD", d=9, a=2, b=6, c=1), mi("IMAD", d=9, a=9, b=5, c=0),  # linear tid
        mi("IMAD", d=10, a=8, b=Imm(64), c=9),                   # global index
        mi("SHL", d=11, a=3, b=Imm(24)), mi("IMAD", d=11, a=4, b=Imm(1 << 16), c=11),
        mi("IMAD", d=11, a=0, b=Imm(1 << 8), c=11), mi("IMAD", d=11, a=1, b=Imm(1 << 4), c=11),
        mi("IADD3", d=11, a=11, b=2, c=RZ),
        s2r(12, "SR_SMID"), s2r(13, "SR_LANEMASK_LT"),
        mi("LDC.64", d=20, b=param(0)), mi("IMAD.WIDE", d=22, a=10, b=Imm(12), c=20),
        mi("STG", a=22, b=0, c=11), mi("STG", a=22, b=4, c=12), mi("STG", a=22, b=8, c=13),
        mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(6 * 64 * 12)
    run_kernel(kimage(prog, 1), (3, 2, 1), (8, 4, 2), pack(p), g, machine="xg1")
    out = download(g, p, 6 * 64 * 3).reshape(6 * 64, 3)
    cy, cx, tz, ty, tx = np.meshgrid(np.arange(2), np.arange(3), np.arange(2), np.arange(4), np.arange(8),
                                     indexing="ij")
    expect = (cx << 24) | (cy << 16) | (tx << 8) | (ty << 4) | tz
    order = ((cy * 3 + cx) * 64 + (tz * 32 + ty * 8 + tx)).ravel()
    got = np.empty(6 * 64, np.int64)
    got[order] = expect.ravel()
    np.testing.assert_array_equal(out[:, 0], got)
    np.testing.assert_array_equal(out[:, 1], (np.arange(6 * 64) // 64) % 132)
    lane = np.arange(6 * 64) % 64 % 32
    np.testing.assert_array_equal(out[:, 2], (1 << lane) - 1)


# -- faults ----------------------------------------------------------------------------------------


def test_out_of_bounds_load_is_a_located_fault():
    prog = gid_prologue(6, 0, 4)
    prog += [mi("LDG", d=8, a=6, b=0, line=7), mi("STG", a=6, b=0, c=8, line=8), mi("EXIT", line=9)]
    g = GlobalMemory()
    p = g.alloc(32 * 4)
    with pytest.raises(KernelFault) as ei:
        run_kernel(kimage(prog, 1), (2, 1, 1), (32, 1, 1), pack(p), g)
    msg = str(ei.value)
    assert "line 7" in msg and "LDG" in msg and "out-of-bounds" in msg
    assert "CTA (1, 0, 0) thread (0, 0, 0)" in msg and "32 threads faulted" in msg
    assert f"{p + 128:#x}" in msg
    assert ei.value.line == 7 and ei.value.cta == (1, 0, 0) and ei.value.thread == (0, 0, 0)


def test_shared_and_constant_faults():
    prog = [s2r(0, "SR_TID.X"), mi("SHL", d=1, a=0, b=Imm(2)), mi("LDS", d=2, a=1, b=0, line=3), mi("EXIT")]
    with pytest.raises(KernelFault, match=r"line 3 .*shared.*CTA \(0, 0, 0\) thread \(16, 0, 0\)"):
        run_kernel(kimage(prog, shared=64), (1, 1, 1), (32, 1, 1), b"", GlobalMemory())
    prog = [mi("LDC", d=2, b=param(3), line=4), mi("EXIT")]
    with pytest.raises(KernelFault, match=r"line 4 .*constant bank"):
        run_kernel(kimage(prog), (1, 1, 1), (32, 1, 1), b"", GlobalMemory())
    with pytest.raises(LaunchError):
        run_kernel(kimage([mi("EXIT")]), (1, 1, 1), (2048, 1, 1), b"", GlobalMemory())
    with pytest.raises(KernelFault, match="outside the kernel"):
        run_kernel(kimage([mi("NOP")]), (1, 1, 1), (32, 1, 1), b"", GlobalMemory())


def test_deadlock_bsync_waits_for_threads_stuck_at_bar():
    prog = [
        s2r(0, "SR_TID.X"),
        mi("BSSY", c=0, b="join", line=2),
        mi("ISETP", pd=0, a=0, b=Imm(16), ps=PT, mods={"cmp": "LT", "type": "U32"}, line=3),
        mi("BRA", guard=(0, False), b="join", line=4),
        mi("BAR", b=Imm(0), line=5),       # threads 16..31 wait for 0..15, which never come
        "join",
        mi("BSYNC", c=0, line=6),          # threads 0..15 wait for 16..31, stuck at the BAR
        mi("EXIT", line=7),
    ]
    with pytest.raises(KernelFault) as ei:
        run_kernel(kimage(prog), (1, 1, 1), (32, 1, 1), b"", GlobalMemory())
    msg = str(ei.value)
    assert "deadlock" in msg
    assert "16 thread(s) waiting at BAR 0 at PTX line 5" in msg
    assert "16 thread(s) waiting at BSYNC B0 at PTX line 6" in msg


# -- speed -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_speed_straight_line_1m_threads():
    body = [s2r(0, "SR_TID.X"), s2r(1, "SR_CTAID.X"), mi("IMAD", d=2, a=1, b=Imm(256), c=0)]
    for i in range(4):
        body += [mi("IADD3", d=3, a=2, b=Imm(i + 1), c=2), mi("IMAD", d=4, a=3, b=Imm(3), c=2),
                 mi("LOP3", d=2, a=4, b=Imm(0xFF), c=3, mods={"lut": "0x96"}),
                 mi("SHL", d=5, a=2, b=Imm(1)), mi("FFMA", d=6, a=5, b=Imm(0x3F800000), c=6)]
    body += [mi("EXIT")]
    k = kimage(body, registers=8)
    t0 = time.perf_counter()
    stats = run_kernel(k, (4096, 1, 1), (256, 1, 1), b"", GlobalMemory())
    dt = time.perf_counter() - t0
    assert stats.thread_instructions == len(body) * (1 << 20)
    print(f"\nemulator: {len(body)} instructions x 1M threads in {dt:.2f} s: "
          f"{stats.warp_instructions / dt / 1e6:.2f} M warp-instructions/s, "
          f"{stats.thread_instructions / dt / 1e6:.1f} M thread-instructions/s")


# -- more instructions: 64-bit, memory sizes, SFU, warp shuffles -------------------------------------


def wide_program():
    st64 = lambda j, r: mi("STG.64", a=6, b=8 * j, c=r)  # noqa: E731
    st32 = lambda j, r: mi("STG", a=6, b=8 * j, c=r)  # noqa: E731
    return [
        *gid_prologue(4, 0, 16),
        mi("LDC.64", d=56, b=param(1)), mi("IMAD.WIDE", d=6, a=3, b=Imm(8 * 18), c=56),
        mi("LDG.64", d=8, a=4, b=0), mi("LDG.64", d=10, a=4, b=8),
        mi("IADD.64", d=12, a=8, b=10), st64(0, 12),
        mi("IADD.64", d=12, a=8, b=10, mods={"NEG_B": "NEG_B"}), st64(1, 12),
        mi("IADD.64", d=12, a=8, b=Imm(0xFFFFFFFB)), st64(2, 12),               # X + (-5)
        mi("IMAD.64", d=12, a=8, b=10, c=8), st64(3, 12),
        mi("IMAD.64", d=12, a=8, b=10, c=RZ, mods={"mode": "HI", "type": "S64"}), st64(4, 12),
        mi("LOP3", d=14, a=10, b=Imm(63), c=RZ, mods={"lut": "0xc0"}),
        mi("SHL.64", d=12, a=8, b=14), st64(5, 12),
        mi("SHR.64", d=12, a=8, b=14, mods={"type": "S64"}), st64(6, 12),
        mi("ISETP.64", pd=3, a=8, b=10, ps=PT, mods={"cmp": "LT", "type": "S64"}),
        mi("P2R", d=15, ps=3), st32(7, 15),
        mi("F2F.F64.F32", d=12, a=8), st64(8, 12),
        mi("F2F.F32.F64", d=15, a=10), st32(9, 15),
        mi("LDG", d=15, a=4, b=1, mods={"size": "U8"}), st32(10, 15),
        mi("LDG", d=15, a=4, b=1, mods={"size": "S8"}), st32(11, 15),
        mi("LDG", d=15, a=4, b=2, mods={"size": "U16"}), st32(12, 15),
        mi("LDG", d=15, a=4, b=2, mods={"size": "S16"}), st32(13, 15),
        mi("STG", a=6, b=8 * 14, c=10, mods={"size": "U8"}),
        mi("STG", a=6, b=8 * 14 + 2, c=8, mods={"size": "S16"}),
        mi("FMNMX", d=15, a=8, b=RZ, mods={"minmax": "MAX"}),                    # max(x, 0): no NaN-sign games
        mi("MUFU", d=16, a=15, mods={"fn": "SQRT", "prec": "RN"}), st32(15, 16),
        mi("MUFU", d=16, a=8, mods={"fn": "RCP", "prec": "RN"}), st32(16, 16),
        mi("FSETP", pd=4, a=8, b=RZ, ps=PT, mods={"cmp": "EQ", "FTZ": "FTZ"}),
        mi("FSETP", pd=5, a=8, b=RZ, ps=PT, mods={"cmp": "EQ"}),
        mi("PLOP3", pd=6, pa=4, ps=(5, True), mods={"lut": "0x08"}),              # ftz-equal and not plain-equal
        mi("P2R", d=15, ps=6), st32(17, 15),
        mi("EXIT"),
    ]


def test_64bit_memory_sizes_and_sfu():
    rng = np.random.default_rng(3)
    n = 96
    X = rng.integers(0, 2**64, n, dtype=np.uint64)
    Y = rng.integers(0, 2**64, n, dtype=np.uint64)
    lo = (rng.standard_normal(n) * 4).astype(np.float32)
    lo[:3] = [np.float32(1e-40), np.float32(-1e-41), 0]  # subnormals for FTZ
    X = (X & np.uint64(0xFFFFFFFF00000000)) | lo.view(U32).astype(np.uint64)
    Yd = rng.standard_normal(n) * 1e3
    Y[: n // 2] = Yd[: n // 2].view(np.uint64)
    g = GlobalMemory()
    pin, pout = upload(g, np.stack([X, Y], 1)), g.alloc(n * 18 * 8)
    run_kernel(kimage(wide_program(), 2), (2, 1, 1), (48, 1, 1), pack(pin, pout), g)
    out = download(g, pout, n * 18, np.uint64).reshape(n, 18)
    o32 = (out & np.uint64(0xFFFFFFFF)).astype(U32)
    Xs, Ys = X.view(np.int64), Y.view(np.int64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:, 0], X + Y)
        np.testing.assert_array_equal(out[:, 1], X - Y)
        np.testing.assert_array_equal(out[:, 2], X - np.uint64(5))
        np.testing.assert_array_equal(out[:, 3], X * Y + X)
    hi = [((int(a) * int(b)) >> 64) & (2**64 - 1) for a, b in zip(Xs, Ys)]
    np.testing.assert_array_equal(out[:, 4], np.array(hi, np.uint64))
    sh = (Y & np.uint64(63))
    np.testing.assert_array_equal(out[:, 5], X << sh)
    np.testing.assert_array_equal(out[:, 6], (Xs >> sh.astype(np.int64)).view(np.uint64))
    np.testing.assert_array_equal(o32[:, 7], Xs < Ys)
    np.testing.assert_array_equal(out[:, 8].view(np.float64), lo.astype(np.float64))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o32[:n // 2, 9].view(np.float32), Yd[:n // 2].astype(np.float32))
    xb = X.astype(np.uint64)
    b1 = ((xb >> np.uint64(8)) & np.uint64(0xFF)).astype(np.int64)
    h1 = ((xb >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.int64)
    np.testing.assert_array_equal(o32[:, 10], b1)
    np.testing.assert_array_equal(o32[:, 11], np.where(b1 >= 128, b1 - 256, b1).astype(U32))
    np.testing.assert_array_equal(o32[:, 12], h1)
    np.testing.assert_array_equal(o32[:, 13], np.where(h1 >= 32768, h1 - 65536, h1).astype(U32))
    raw = g.read(pout, n * 18 * 8).reshape(n, 18 * 8)
    np.testing.assert_array_equal(raw[:, 8 * 14], (Y & np.uint64(0xFF)).astype(np.uint8))
    np.testing.assert_array_equal(raw[:, 8 * 14 + 2:8 * 14 + 4].copy().view(np.uint16).ravel(),
                                  (X & np.uint64(0xFFFF)).astype(np.uint16))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o32[:, 15].view(np.float32), np.sqrt(np.maximum(lo, np.float32(0))))
        np.testing.assert_array_equal(o32[3:, 16].view(np.float32), (1.0 / lo[3:].astype(np.float64)).astype(np.float32))
    np.testing.assert_array_equal(o32[:, 17], [1, 1] + [0] * (n - 2))


def shfl_reference(a, active, mode, b, width):
    """PTX shfl.sync over one warp: (d, pd) for each lane (inactive lanes: None)."""
    d, p = [None] * 32, [None] * 32
    c = ((32 - width) << 8) | (0 if mode == "UP" else 31)
    segmask, cval = (c >> 8) & 31, c & 31
    for lane in range(32):
        if not active[lane]:
            continue
        mx = (lane & segmask) | (cval & ~segmask & 31)
        mn = lane & segmask
        j, ok = {"UP": (lane - b, lane - b >= mx), "DOWN": (lane + b, lane + b <= mx),
                 "BFLY": (lane ^ b, (lane ^ b) <= mx), "IDX": (mn | (b & ~segmask), (mn | (b & ~segmask)) <= mx)}[mode]
        # a source in range that is inactive: 0 with p = true (an NVIDIA H200's rule)
        d[lane], p[lane] = ((a[j] if active[j] else 0), True) if ok else (a[lane], False)
    return d, p


@pytest.mark.parametrize("mode,b,width", [("UP", 1, 32), ("UP", 3, 8), ("DOWN", 2, 32), ("DOWN", 1, 4),
                                          ("BFLY", 5, 32), ("BFLY", 1, 16), ("IDX", 5, 32), ("IDX", 3, 8)])
def test_shfl_modes_with_inactive_lanes(mode, b, width):
    c = ((32 - width) << 8) | (0 if mode == "UP" else 31)
    prog = [
        s2r(0, "SR_TID.X"), s2r(1, "SR_LANEID"),
        mi("IMAD", d=2, a=0, b=Imm(7), c=1),                      # a = 7 * tid + lane
        mi("MOV", d=3, b=Imm(c)), mi("MOV", d=4, b=Imm(0xFFFFFFFF)), mi("MOV", d=5, b=Imm(0xDEAD)),
        mi("MOV", d=6, b=Imm(2)),
        mi("LOP3", d=7, a=1, b=Imm(5), c=RZ, mods={"lut": "0xc0"}),
        mi("ISETP", pd=0, a=7, b=Imm(5), ps=PT, mods={"cmp": "NE", "type": "U32"}),  # lanes with bits 0,2 set sit out
        mi("SHFL", d=5, pd=1, a=2, b=Imm(b), c=3, e=4, guard=(0, False), mods={"mode": mode}),
        mi("SEL", d=6, a=RZ, b=Imm(1), ps=1, guard=(0, False)),  # pd ? 0 : 1
        mi("LDC.64", d=8, b=param(0)), mi("IMAD.WIDE", d=10, a=0, b=Imm(8), c=8),
        mi("STG", a=10, b=0, c=5), mi("STG", a=10, b=4, c=6), mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(64 * 8)
    run_kernel(kimage(prog, 1), (1, 1, 1), (64, 1, 1), pack(p), g)
    out = download(g, p, 128).reshape(2, 32, 2)
    for w in range(2):
        a = [7 * (32 * w + lane) + lane for lane in range(32)]
        active = [(lane & 5) != 5 for lane in range(32)]
        d, pd = shfl_reference(a, active, mode, b, width)
        for lane in range(32):
            if active[lane]:
                assert (out[w, lane, 0], out[w, lane, 1]) == (d[lane], 0 if pd[lane] else 1), (w, lane)
            else:
                assert (out[w, lane, 0], out[w, lane, 1]) == (0xDEAD, 2)


def test_vote_modes():
    prog = [
        s2r(0, "SR_TID.X"), s2r(1, "SR_LANEID"),
        mi("MOV", d=9, b=Imm(0x0000FFFF)),
        mi("ISETP", pd=0, a=1, b=Imm(20), ps=PT, mods={"cmp": "LT", "type": "U32"}),
        mi("VOTE", d=2, pd=1, ps=0, e=9, mods={"mode": "ALL"}), mi("P2R", d=3, ps=1),
        mi("VOTE", d=2, pd=1, ps=(0, True), e=9, mods={"mode": "ANY"}), mi("P2R", d=4, ps=1),
        mi("VOTE", d=5, pd=1, ps=0, e=9, mods={"mode": "EQ"}), mi("P2R", d=6, ps=1),
        mi("VOTE", d=7, pd=1, ps=(0, True), e=RZ, mods={"mode": "ANY"}), mi("P2R", d=8, ps=1),
        mi("LDC.64", d=10, b=param(0)), mi("IMAD.WIDE", d=12, a=0, b=Imm(20), c=10),
        *[mi("STG", a=12, b=4 * i, c=r) for i, r in enumerate((2, 3, 4, 6, 8))],
        mi("EXIT"),
    ]
    g = GlobalMemory()
    p = g.alloc(32 * 20)
    run_kernel(kimage(prog, 1), (1, 1, 1), (32, 1, 1), pack(p), g)
    out = download(g, p, 32 * 5).reshape(32, 5)
    assert (out[:, 0] == 0).all()        # ballot of !P0 over lanes 0..15: nobody
    assert (out[:, 1] == 1).all()        # ALL of P0 over lanes 0..15
    assert (out[:, 2] == 0).all()        # ANY of !P0 over lanes 0..15
    assert (out[:, 3] == 1).all()        # EQ
    assert (out[:, 4] == 0).all()        # empty member mask: ANY is false


def test_large_grid_runs_in_waves_in_thread_order():
    """300 CTAs x 256 threads > one wave: atomics stay in global thread order, shared memory and
    registers start from zero in every wave, CTA ids continue across waves."""
    prog = [
        *gid_prologue(6, 0, 12),
        mi("LDC.64", d=20, b=param(1)), mi("MOV", d=9, b=Imm(1)),
        mi("ATOMG", d=11, a=20, b=0, c=9, e=RZ, mods={"op": "ADD"}),
        mi("ATOMS", d=12, a=RZ, b=4, c=9, e=RZ, mods={"op": "ADD"}),
        mi("IADD3", d=12, a=12, b=30, c=RZ),                    # + R30, never written: 0
        mi("STG", a=6, b=0, c=11), mi("STG", a=6, b=4, c=12), mi("STG", a=6, b=8, c=1),
        mi("EXIT"),
    ]
    g = GlobalMemory()
    n = 300 * 256
    p, ctr = g.alloc(n * 12), g.alloc(4)
    stats = run_kernel(kimage(prog, 2, shared=8), (300, 1, 1), (256, 1, 1), pack(p, ctr), g)
    out = download(g, p, n * 3).reshape(n, 3)
    np.testing.assert_array_equal(out[:, 0], np.arange(n))
    np.testing.assert_array_equal(out[:, 1], np.arange(n) % 256)
    np.testing.assert_array_equal(out[:, 2], np.arange(n) // 256)
    assert download(g, ctr, 1)[0] == n
    assert stats.warp_instructions == len(prog) * n // 32


def test_watchdog_and_barrier_mismatch():
    spin = [mi("NOP"), "loop", mi("IADD3", d=0, a=0, b=Imm(1), c=RZ), mi("BRA", b="loop", line=3)]
    with pytest.raises(KernelFault, match="did not finish within 1000 scheduler steps"):
        run_kernel(kimage(spin), (1, 1, 1), (32, 1, 1), b"", GlobalMemory(), max_steps=1000)
    prog = [
        s2r(0, "SR_TID.X"), mi("SHR", d=1, a=0, b=Imm(4)),       # barrier id = tid / 16
        mi("BAR", b=1, line=2), mi("EXIT"),
    ]
    with pytest.raises(KernelFault, match=r"16 thread\(s\) waiting at BAR 0 .*16 thread\(s\) waiting at BAR 1"):
        run_kernel(kimage(prog), (1, 1, 1), (32, 1, 1), b"", GlobalMemory())
    run_kernel(kimage(prog), (1, 1, 1), (16, 1, 1), b"", GlobalMemory())  # one barrier: fine
