"""PTX forms issue 19 found missing (WARP_SZ, %dynamic_smem_size, vote without .sync, saturating and narrow
integer conversions, sad, cvt.pack, f64 approximations, nanosleep, FP8 conversions, video instructions), run
on both engines at -O0 and -O3. Every expected value comes from the PTX ISA 9.0 manual's definition restated
here with exact Python integers and fractions (and, for FP8, the OCP FP8 bit layouts), never from
xcc.semantics."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from xcc import runtime as rt

HEADER = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b16 %h<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 24;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    ld.global.u64 %rd6, [%rd4+8];
    ld.global.u64 %rd7, [%rd4+16];
    cvt.u32.u64 %r2, %rd5;
    cvt.u32.u64 %r3, %rd6;
    cvt.u32.u64 %r4, %rd7;
    mov.b64 %fd1, %rd5;
    mov.b64 %fd2, %rd6;
    mov.b32 %f1, %r2;
    mov.b32 %f2, %r3;
    mov.u64 %rd8, 0;
BODY
    mul.wide.u32 %rd9, %r1, 8;
    add.s64 %rd10, %rd2, %rd9;
    st.global.u64 [%rd10], %rd8;
    ret;
}
"""
"""Thread i loads three u64 inputs a, b, c (their low halves in %r2..%r4, their bits as %fd1, %fd2 and the
low halves as %f1, %f2), runs BODY and stores %rd8."""

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def run(body: str, inputs, engine: str, opt: int, header: str = HEADER) -> list[int]:
    rows = [[v & M64 for v in (list(t) + [0, 0, 0])[:3]] for t in inputs]
    dev = rt.Device()
    din = rt.to_device(np.array(rows, dtype=np.uint64).reshape(-1), dev)
    dout = rt.to_device(np.zeros(len(rows), np.uint64), dev)
    module = rt.load_module(header.replace("BODY", body), device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (len(rows), 1, 1), [din, dout])
    return [int(v) for v in dout.copy_to_host()]


def check(body: str, inputs, want, engine: str, opt: int) -> None:
    got = run(body, inputs, engine, opt)
    bad = [(i, [hex(v) for v in inputs[i]], hex(g), hex(w)) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, bad


def s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


INT_RANGE = {f"{k}{w}": ((-(1 << (w - 1)), (1 << (w - 1)) - 1) if k == "s" else (0, (1 << w) - 1))
             for k in "su" for w in (8, 16, 32, 64)}

# ----------------------------------------------------------------------------- WARP_SZ, %dynamic_smem_size, vote


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_warp_sz_is_the_constant_32(engine, opt):
    body = "mov.u32 %r5, WARP_SZ; add.u32 %r5, %r5, WARP_SZ; cvt.u64.u32 %rd8, %r5;"
    check(body, [(0,)] * 2, [64] * 2, engine, opt)


DYN_SMEM = r"""
.version 8.0
.target sm_90
.address_size 64
.shared .align 4 .b8 s[16];
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %dynamic_smem_size;
    mov.u32 %r2, s;
    st.shared.u32 [%r2], %r1;
    ld.shared.u32 %r3, [%r2];
    st.global.u32 [%rd1], %r3;
    ret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dynamic", [0, 200])
def test_dynamic_smem_size_is_the_launch_dynamic_bytes(engine, opt, dynamic):
    """%dynamic_smem_size (PTX ISA 10.33): the dynamic shared memory of the launch, not the static 16 bytes."""
    dev = rt.Device()
    d = rt.to_device(np.zeros(1, np.uint32), dev)
    module = rt.load_module(DYN_SMEM, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (32, 1, 1), [d], shared_mem=dynamic)
    assert int(d.copy_to_host()[0]) == dynamic


VOTES = [  # (body, reference over the warp's predicates)
    ("vote.all.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(all(ps))),
    ("vote.any.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(any(ps))),
    ("vote.uni.pred %p2, %p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(len(set(ps)) == 1)),
    ("vote.ballot.b32 %r5, %p1; cvt.u64.u32 %rd8, %r5;", lambda ps, i: sum(p << j for j, p in enumerate(ps))),
    ("vote.any.pred %p2, !%p1; selp.u64 %rd8, 1, 0, %p2;", lambda ps, i: int(not all(ps))),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("body, ref", VOTES)
@pytest.mark.parametrize("pattern", ["ones", "mixed", "zeros"])
def test_vote_without_sync_is_a_full_warp_vote(engine, opt, body, ref, pattern):
    """vote without .sync (deprecated, PTX ISA 9.7.13.1): on sm_70+ it is vote.sync with a full member mask."""
    preds = {"ones": [1] * 32, "zeros": [0] * 32, "mixed": [(i * 7) % 3 == 0 for i in range(32)]}[pattern]
    preds = [int(p) for p in preds]
    body = "setp.ne.u32 %p1, %r2, 0; " + body
    check(body, [(p,) for p in preds], [ref(preds, i) for i in range(32)], engine, opt)
