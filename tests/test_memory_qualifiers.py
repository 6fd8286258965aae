"""Memory-instruction qualifier forms the memory sweep (tests/isa_sweep_memory.py, issue 19) found ptxas 13.0
taking and xcc refusing, now compiled: ``ld``/``st.b128`` with ``.L2::cache_hint`` and its policy operand (a hint,
no effect on the values: the reference is the plain copy), on both engines at -O0 and -O3, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from test_b128 import data, kernel, rows, run_all


def test_b128_copy_with_cache_hint_moves_every_byte():
    body = """\
    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;
    ld.global.L2::cache_hint.b128 %q1, [%rd1], %rd5;
    st.global.L2::cache_hint.b128 [%rd2], %q1, %rd5;"""
    src = data(21)
    out = run_all(kernel("b128_hint", body), "b128_hint", src)
    assert rows(out).tobytes() == rows(src).tobytes()


def test_b128_relaxed_load_with_cache_hint_is_one_16_byte_read():
    body = """\
    createpolicy.fractional.L2::evict_first.b64 %rd5, 0.5;
    ld.relaxed.gpu.global.L2::cache_hint.b128 %q1, [%rd1], %rd5;
    st.global.b128 [%rd2], %q1;"""
    src = data(22)
    out = run_all(kernel("b128_hint_relaxed", body), "b128_hint_relaxed", src)
    assert np.array_equal(rows(out), rows(src))


# ----------------------------------------------------------------- a variable's address plus an offset
def _run_scalar(text: str, name: str, words: int, args=()) -> np.ndarray:
    """One thread's ``words`` u64 outputs (its first parameter) on every engine and level, asserted equal."""
    from xcc import runtime as rt
    from xcc.check import check_sources
    from xcc.sources import Source

    assert check_sources([Source(text, f"{name}.ptx")]).ok
    outs = []
    for engine, opt in (("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)):
        dev = rt.Device()  # a fresh device each time: the same variable addresses
        out = rt.to_device(np.zeros(words, np.uint64), dev)
        rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt).get_function(
            name).launch((1, 1, 1), (1, 1, 1), (out, *args))
        outs.append(out.copy_to_host())
    for got in outs:
        assert got.tolist() == outs[0].tolist()
    return outs[0]


SYM_OFFSET = """\
.version 9.0
.target sm_90
.address_size 64
.global .align 16 .b8 gbuf[64];
.const .align 16 .b8 cbuf[64];

.visible .entry symoff(.param .u64 out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<24>;
    .shared .align 16 .b8 sbuf[64];
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, gbuf;
    mov.u64 %rd3, gbuf+16;
    mov.u64 %rd4, gbuf+-8;
    cvta.global.u64 %rd5, gbuf+8;
    mov.u64 %rd6, sbuf;
    mov.u64 %rd7, sbuf+4;
    mov.u64 %rd8, cbuf;
    mov.u64 %rd9, cbuf+-8;
    cvta.shared.u64 %rd10, sbuf;
    cvta.shared.u64 %rd11, sbuf+8;
    mov.u32 %r1, gbuf+8;
    cvt.u64.u32 %rd12, %r1;
    st.global.u64 [%rd1], %rd2;
    st.global.u64 [%rd1+8], %rd3;
    st.global.u64 [%rd1+16], %rd4;
    st.global.u64 [%rd1+24], %rd5;
    st.global.u64 [%rd1+32], %rd6;
    st.global.u64 [%rd1+40], %rd7;
    st.global.u64 [%rd1+48], %rd8;
    st.global.u64 [%rd1+56], %rd9;
    st.global.u64 [%rd1+64], %rd10;
    st.global.u64 [%rd1+72], %rd11;
    st.global.u64 [%rd1+80], %rd12;
    st.global.u32 [%rd3], 77;
    ld.global.u32 %r2, [gbuf+16];
    st.shared.u32 [%rd7], 99;
    ld.shared.u32 %r3, [sbuf+4];
    cvt.u64.u32 %rd13, %r2;
    cvt.u64.u32 %rd14, %r3;
    st.global.u64 [%rd1+88], %rd13;
    st.global.u64 [%rd1+96], %rd14;
    // isspacep of var+imm: the address at 32 bits, zero-extended, written out here with registers
    isspacep.global %p1, gbuf+8;
    cvt.u32.u64 %r4, %rd2;
    add.u32 %r4, %r4, 8;
    cvt.u64.u32 %rd15, %r4;
    isspacep.global %p2, %rd15;
    isspacep.shared %p3, sbuf+8;
    cvt.u32.u64 %r5, %rd6;
    add.u32 %r5, %r5, 8;
    cvt.u64.u32 %rd16, %r5;
    isspacep.shared %p4, %rd16;
    selp.u64 %rd17, 1, 0, %p1;
    selp.u64 %rd18, 2, 0, %p2;
    selp.u64 %rd19, 4, 0, %p3;
    selp.u64 %rd20, 8, 0, %p4;
    or.b64 %rd17, %rd17, %rd18;
    or.b64 %rd17, %rd17, %rd19;
    or.b64 %rd17, %rd17, %rd20;
    st.global.u64 [%rd1+104], %rd17;
    ret;
}
"""


def test_a_variables_address_plus_an_offset_as_an_operand():
    """``mov``/``cvta``/``isspacep`` of ``var+imm`` (PTX ISA 6.4.1 "variable-plus-offset"), as ptxas 13.0 computes it
    (sm_90a SASS): a .global address plus imm at 64 bits (``gbuf+-8`` is the address minus 8), a .shared or .const
    one a 32-bit offset plus imm, zero-extended (``mov.u64 d, cbuf+-8`` is 0xfffffff8 when cbuf is at 0), ``mov.u32
    d, gbuf+8`` the low word plus 8, and isspacep's operand the 32-bit sum, zero-extended; loads and stores through
    the addresses reach the variables' bytes."""
    m64, m32 = (1 << 64) - 1, (1 << 32) - 1
    got = [int(x) for x in _run_scalar(SYM_OFFSET, "symoff", 14)]
    g, s, c = got[0], got[4], got[6]
    assert got[1] == (g + 16) & m64 and got[2] == (g - 8) & m64 and got[3] == (g + 8) & m64
    assert got[5] == (s + 4) & m32 and got[7] == (c - 8) & m32
    assert got[9] == got[8] + 8  # cvta.shared of sbuf+8: the generic address of sbuf plus 8
    assert got[10] == (g + 8) & m32
    assert got[11:13] == [77, 99]
    assert got[13] & 1 == (got[13] >> 1) & 1 and (got[13] >> 2) & 1 == (got[13] >> 3) & 1, bin(got[13])


def test_an_offset_from_a_function_or_label_is_refused_where_it_is():
    """ptxas 13.0: "Cannot take address of function 'f0' in arithmetic expressions" (and of a label); an unknown
    name and the ``var-imm`` spelling (a syntax error to ptxas) are refused too, each at its operand."""
    from xcc.check import check_sources
    from xcc.diagnostics import XccError
    from xcc.sources import Source

    head = ".version 9.0\n.target sm_90\n.address_size 64\n.func f0()\n{\n    ret;\n}\n"
    for line, want in (("mov.u64 %rd1, f0+8;", "cannot take the address of function 'f0' in arithmetic"),
                       ("mov.u64 %rd1, L+8;", "cannot take the address of label 'L' in arithmetic"),
                       ("mov.u64 %rd1, nosuch+8;", "use of undeclared name 'nosuch'"),
                       ("mov.u64 %rd1, g-8;", "unexpected token '-'")):
        text = head + f".global .b8 g[8];\n.visible .entry k()\n{{\n    .reg .b64 %rd1;\nL:\n    {line}\n    ret;\n}}\n"
        with pytest.raises(XccError, match=want) as e:
            check_sources([Source(text, "k.ptx")])
        assert e.value.loc is not None and e.value.loc.line == 13, line


# ----------------------------------------------------------------- [a].unified
def test_unified_address_loads_and_atomics_are_the_plain_ones():
    """``ld``/``ldu``/``atom`` with ``[a].unified`` (PTX ISA 9.7.9.8): ptxas 13.0 adds ``__UDT_OFFSET`` to the
    address (sm_90a SASS: ``ULDC.64 UR4, c[0x4][0x8]; UIADD3 ...; LDG.E R5, desc[UR4][R4.64]``; the relocatable
    cubin relocates it with ``R_CUDA_ABS32_LO_32/HI_32 __UDT_OFFSET``), the offset of the unified data table, which
    is 0 in a program that has none (ptxas's whole-program cubin holds 0 there) - as in every xcc module.  So each
    reads and updates the very bytes of the plain form: the reference is numpy on the input words."""
    body = """\
    ld.global.u32 %r1, [%rd1].unified;
    ld.v2.u32 {%r2, %r3}, [%rd1+8].unified;
    ldu.global.u32 %r4, [%rd1+12].unified;
    ld.global.L2::cache_hint.u32 %r5, [%rd1+8].unified, %rd5;
    st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};
    atom.global.add.u32 %r6, [%rd2].unified, %r5;
    atom.exch.b32 %r7, [%rd2+4].unified, %r6;
    st.global.u32 [%rd2+8], %r7;"""
    src = data(23)
    out = run_all(kernel("unified", "    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;\n" + body), "unified",
                  src)
    w = rows(src).copy().view("<u4")  # (N, 4) input words
    want = np.stack([w[:, 0] + w[:, 2],  # atom.add of word 2 onto the stored word 0
                     w[:, 0],  # exch: the stored word 2 becomes atom.add's old value, word 0
                     w[:, 2],  # exch's old value
                     w[:, 3]], axis=1)
    assert np.array_equal(rows(out).view("<u4"), want)


# ----------------------------------------------------------------- what the declarations decide
_DECL_HEAD = """\
.version 9.0
.target {target}
.address_size 64
.global .align 16 .b8 gbuf[64];
.const .align 16 .b8 cbuf[64];
.func f0()
{{
    ret;
}}
.visible .entry k(.param .u64 p0)
{{
    .reg .pred %p1;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b8 sbuf[64];
    .local .align 16 .b8 lbuf[64];
    {line}
    ret;
}}
"""
_LINE = 17  # where {line} is


def _check(line: str, target: str = "sm_90a"):
    from xcc.check import check_sources
    from xcc.sources import Source

    return check_sources([Source(_DECL_HEAD.format(target=target, line=line), "k.ptx")])


@pytest.mark.parametrize("line, want", [
    # ptxas 13.0: "State space mismatch between instruction and address in instruction 'cvta'" (and 'prefetch', 'ld')
    ("cvta.global.u64 %rd1, sbuf;", "'sbuf' is a .shared variable, the instruction's space is .global"),
    ("cvta.shared.u64 %rd1, gbuf+8;", "'gbuf' is a .global variable, the instruction's space is .shared"),
    ("cvta.global.u64 %rd1, f0;", "'f0' is a function"),
    ("prefetch.tensormap [p0];", "'p0' is a .param variable, which has no generic address"),
    ("prefetch.L1 [cbuf];", "'cbuf' is a .const variable, which has no generic address"),
    ("prefetch.global.L2 [sbuf];", "'sbuf' is a .shared variable"),
    ("ld.global.u32 %r1, [sbuf];", "'sbuf' is a .shared variable"),
    ("prefetchu.L1 [cbuf+8];", "'cbuf' is a .const variable, which has no generic address"),
    # ptxas 13.0: "Non-generic address is not supported as operand for prefetchu instruction"
    ("prefetchu.L1 [sbuf];", "'sbuf' is a .shared variable, a non-generic address"),
    ("prefetchu.L1 [lbuf];", "'lbuf' is a .local variable, a non-generic address"),
    # ptxas 13.0: "Program uses 32-bit address ... conflicting with .address_size 64" and the 32-bit ABI refused
    ("cvta.to.shared.u32 %r1, %r2;", "32-bit addressing is not supported on sm_90"),
    ("mov.b32 %r1, gbuf;", "32-bit addressing is not supported on sm_90"),
])
def test_declarations_refused_as_ptxas_does(line, want):
    from xcc.diagnostics import XccError

    with pytest.raises(XccError, match="state space mismatch|uses a 32-bit address") as e:
        _check(line)
    assert want in str(e.value) and e.value.loc is not None and e.value.loc.line == _LINE, str(e.value)


@pytest.mark.parametrize("line", ["cvta.shared::cluster.u64 %rd1, sbuf;", "prefetch.tensormap [sbuf];",
                                  "prefetch.param.tensormap [p0];", "prefetch.const.tensormap [cbuf];",
                                  "ld.u32 %r1, [lbuf];", "mov.u32 %r1, sbuf;", "mov.u32 %r1, gbuf+8;",
                                  "isspacep.global %p1, sbuf+8;", "atom.add.u32 %r1, [%rd1].unified, %r2;",
                                  "prefetchu.L1 [gbuf+8];"])
def test_declarations_ptxas_takes_are_taken(line):
    assert _check(line).ok


def test_a_32_bit_address_before_sm_90_has_ptxas_13s_other_message():
    """ptxas 13.0 refuses 32-bit addresses in a 64-bit module on sm_80 too: "32-Bit compilation is no longer
    supported"."""
    from xcc.diagnostics import XccError

    with pytest.raises(XccError, match="32-bit compilation is no longer supported"):
        _check("cvta.global.u32 %r1, %r2;", "sm_80")


GENERIC_VARS = """\
.version 9.0
.target sm_90
.address_size 64

.visible .entry generic_vars(.param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 sbuf[64];
    .local .align 16 .b8 lbuf[64];
    ld.param.u64 %rd1, [out];
    st.u32 [sbuf], 5;
    st.u32 [sbuf+4], 7;
    ld.u32 %r1, [sbuf+4];
    atom.add.u32 %r2, [sbuf], 10;
    red.add.u32 [sbuf+4], 3;
    ld.shared.u32 %r3, [sbuf];
    ld.shared.u32 %r4, [sbuf+4];
    mov.u64 %rd2, sbuf;
    cvta.shared.u64 %rd3, %rd2;
    ld.u32 %r5, [%rd3+4];
    st.u32 [lbuf+8], 21;
    ld.local.u32 %r6, [lbuf+8];
    st.local.u32 [lbuf+12], 33;
    ld.u32 %r7, [lbuf+12];
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
    st.global.v2.u32 [%rd1+16], {%r5, %r6};
    st.global.u32 [%rd1+24], %r7;
    ret;
}
"""


def test_a_generic_access_naming_a_shared_or_local_variable_is_that_spaces():
    """``ld.u32 %r, [sbuf]`` (no state space, a .shared variable): ptxas 13.0 compiles it to ``LDS R5, [UR4]`` as
    ``ld.shared`` (``st`` to STS, ``atom``/``red`` to ATOMS; sm_90a SASS), so the access is the variable's own space,
    .local likewise; the values are the manual's stores, loads and read-modify-writes in order."""
    got = _run_scalar(GENERIC_VARS, "generic_vars", 4).view("<u4")
    assert got[:7].tolist() == [7, 5, 15, 10, 10, 21, 33]


# ----------------------------------------------------------------- st.async / red.async: spaces, no mbarrier
_GENERIC = "cvt.u64.u32 %rd7, %r17;\n    cvta.shared.u64 %rd7, %rd7;\n    "
ASYNC_FORMS = [  # (form, bytes expected on the mbarrier, stored: 'st' the first word, 'add' added to it, None)
    ("st.async.shared.mbarrier::complete_tx::bytes.u32 [%r17], %r10, [%r18];", 4, "st"),
    ("st.async.shared::cta.mbarrier::complete_tx::bytes.u32 [%r17], %r10, [%r18];", 4, "st"),
    (_GENERIC + "st.async.mbarrier::complete_tx::bytes.u32 [%rd7], %r10, [%r18];", 4, "st"),
    (_GENERIC + "red.async.relaxed.cluster.mbarrier::complete_tx::bytes.add.u32 [%rd7], %r10, [%r18];", 4, "add"),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r17], %r10;", 0, None),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r17], %r10;", 0, None),
]


@pytest.mark.parametrize("form, nbytes, effect", ASYNC_FORMS)
def test_st_async_and_red_async_in_every_space_ptxas_takes(form, nbytes, effect):
    """ptxas 13.0 (sm_90a SASS) compiles ``st.async``/``red.async`` with ``.shared``, ``.shared::cta`` and
    ``.shared::cluster`` to the same ``STAS``/``REDAS [R4.64]`` (R4 the shared::cluster address, R5 the mbarrier),
    with no state space the same on the generic address's low word, and without the mbarrier operand to nothing at
    all.  Each CTA of a 2-CTA cluster sends to the other's buffer (tests/test_isa_sm90_rest.py's kernel): the slots
    hold the other CTA's first input word (st), FILL plus it (add), or FILL (no mbarrier: nothing stored, nothing
    expected)."""
    from test_isa_sm90_rest import ENGINES, FILL, _launch

    data = np.random.default_rng(nbytes + len(form)).integers(0, 1 << 32, (2, 32, 4), dtype=np.uint32)
    want = np.full((2, 32, 4), FILL, np.uint32)
    if effect == "st":
        want[:, :, 0] = data[::-1, :, 0]
    elif effect == "add":
        want[:, :, 0] = (data[::-1, :, 0].astype(np.uint64) + FILL).astype(np.uint32)
    for engine, opt in ENGINES:
        got = _launch(form, 32 * nbytes, (FILL << 32) | FILL, data, engine, opt)
        np.testing.assert_array_equal(got, want, err_msg=f"{engine} -O{opt}")


WAIT_GROUP = """\
.version 9.0
.target sm_90
.address_size 64

.visible .entry waitg(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 buf[512];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 4;
    mov.u32 %r3, buf;
    add.u32 %r3, %r3, %r2;
    st.shared.v4.u32 [%r3], {7, 7, 7, 7};
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mul.wide.u32 %rd3, %r1, 16;
    add.u64 %rd1, %rd1, %rd3;
    mul.wide.u32 %rd4, %r1, 8;
    add.u64 %rd2, %rd2, %rd4;
    cp.async.cg.shared.global [%r3], [%rd1], 16;
    cp.async.commit_group;
    cp.async.wait_group N;
    ld.shared.u32 %r4, [%r3];
    cp.async.wait_group 0;
    ld.shared.u32 %r5, [%r3+4];
    st.global.v2.u32 [%rd2], {%r4, %r5};
    ret;
}
"""


def test_cp_async_wait_group_counts_past_63_are_63():
    """``cp.async.wait_group N``: ptxas 13.0 emits ``DEPBAR.LE SB0, N`` for 0 <= N <= 63 and ``DEPBAR.LE SB0, 0x3f``
    for every other N, -1 and 100 included (sm_90a SASS), so those wait as 63 does: with one group pending, not at
    all.  Each kernel's first word is what its engine's first load saw, the second (after wait_group 0) the copied
    word; -1 and 100 give what 63 gives on each engine and level, and 0 waits for the copy."""
    from xcc import runtime as rt
    from xcc.sources import Source

    data = np.random.default_rng(5).integers(0, 1 << 32, 32 * 4, dtype=np.uint32)
    for engine, opt in (("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)):
        got = {}
        for n in ("0", "63", "-1", "100"):
            dev = rt.Device()
            din, out = rt.to_device(data, dev), rt.to_device(np.zeros(64, np.uint32), dev)
            rt.load_module(Source(WAIT_GROUP.replace("N;", f"{n};"), "w.ptx"), device=dev, engine=engine,
                           opt_level=opt).get_function("waitg").launch((1, 1, 1), (32, 1, 1), [din, out])
            got[n] = out.copy_to_host().reshape(32, 2)
        assert (got["0"][:, 0] == data.reshape(32, 4)[:, 0]).all()
        for n in ("63", "-1", "100"):
            assert (got[n][:, 1] == data.reshape(32, 4)[:, 1]).all()
            assert (got[n] == got["63"]).all(), (engine, opt, n)


BITS_IN_FLOAT_REGS = """\
.version 9.0
.target sm_90
.address_size 64

.visible .entry bits_in_f(.param .u64 in, .param .u64 out)
{
    .reg .f32 %f<4>;
    .reg .f64 %fd<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.b16 %f1, [%rd1];
    ld.global.b8 %f2, [%rd1+3];
    ld.global.b32 %fd1, [%rd1+4];
    ld.global.b16 %fd2, [%rd1+6];
    st.global.f32 [%rd2], %f1;
    st.global.f32 [%rd2+4], %f2;
    st.global.f64 [%rd2+8], %fd1;
    st.global.f64 [%rd2+16], %fd2;
    st.global.b16 [%rd2+24], %f1;
    st.global.b32 [%rd2+28], %fd1;
    ret;
}
"""


def test_bit_size_loads_into_wider_float_registers_zero_extend():
    """``ld.global.b16 %f1`` (a .b16 load into an .f32 register, which ptxas 13.0 takes): ``LDG.E.U16 R5`` as for
    ``ld.global.u16 %r1``, so the register holds the 16 bits zero-extended; ``ld.global.b32 %fd1`` is ``LDG.E R2;
    HFMA2.MMA R3, -RZ, RZ, 0, 0`` (high word 0); ``st.global.b16 [a], %f1`` stores the low 16 bits (``STG.E.U16``).
    The reference is the input bytes placed by hand."""
    from xcc import runtime as rt
    from xcc.sources import Source

    src = bytes([0xF1, 0xF2, 0xF3, 0xF4, 0x85, 0x86, 0x87, 0x88])
    want = (src[0:2] + bytes(2) + src[3:4] + bytes(3) + src[4:8] + bytes(4) + src[6:8] + bytes(6) + src[0:2]
            + b"\xee\xee" + src[4:8])
    for engine, opt in (("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)):
        dev = rt.Device()
        din, out = rt.to_device(np.frombuffer(src, np.uint8).copy(), dev), rt.to_device(np.full(32, 0xEE, np.uint8),
                                                                                         dev)
        rt.load_module(Source(BITS_IN_FLOAT_REGS, "b.ptx"), device=dev, engine=engine, opt_level=opt).get_function(
            "bits_in_f").launch((1, 1, 1), (1, 1, 1), [din, out])
        assert out.copy_to_host().tobytes() == want, (engine, opt)


ZEXT_ADDRESSES = """\
.version 9.0
.target sm_90
.address_size 64
.global .align 16 .b8 gbuf[64];

.visible .entry zext(.param .u64 out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    .reg .b128 %q<4>;
    .shared .align 16 .b8 sbuf[64];
    ld.param.u64 %rd1, [out];
    mov.b128 %q1, gbuf;
    mov.b128 {%rd2, %rd3}, %q1;
    mov.b128 %q2, sbuf;
    mov.b128 {%rd4, %rd5}, %q2;
    mov.u64 %rd6, gbuf;
    mov.u64 %rd7, sbuf;
    st.global.v2.u64 [%rd1], {%rd2, %rd3};
    st.global.v2.u64 [%rd1+16], {%rd4, %rd5};
    st.global.v2.u64 [%rd1+32], {%rd6, %rd7};
    // isspacep of a 32-bit register: of the register zero-extended
    cvta.shared.u64 %rd8, %rd7;
    cvt.u32.u64 %r1, %rd8;
    cvt.u64.u32 %rd9, %r1;
    isspacep.shared %p1, %r1;
    isspacep.shared %p2, %rd9;
    isspacep.global %p3, %r1;
    isspacep.global %p4, %rd9;
    selp.u32 %r2, 1, 0, %p1;
    selp.u32 %r3, 1, 0, %p2;
    selp.u32 %r4, 1, 0, %p3;
    selp.u32 %r5, 1, 0, %p4;
    st.global.v4.u32 [%rd1+48], {%r2, %r3, %r4, %r5};
    ret;
}
"""


def test_a_b128_of_an_address_and_a_32_bit_isspacep_operand_are_zero_extended():
    """ptxas 13.0 (sm_90a SASS): ``mov.b128 %q, gbuf`` is the address in the low half and 0 in the high half
    (``LDC.64 R4, c[0x4][RZ]``; ``STG.E.64 ... RZ``), a .shared variable's 32-bit address likewise; ``isspacep`` of a
    32-bit register tests the register zero-extended (``IMAD.MOV.U32 R5, RZ, RZ, RZ; QSPC.E.G P0, RZ, [R4]``)."""
    got = [int(x) for x in _run_scalar(ZEXT_ADDRESSES, "zext", 8)]
    assert got[0:2] == [got[4], 0] and got[2:4] == [got[5], 0]
    flags = [(got[6] >> s) & 1 for s in (0, 32)] + [(got[7] >> s) & 1 for s in (0, 32)]
    assert flags[0] == flags[1] and flags[2] == flags[3], flags


CP_ASYNC_32 = """\
.version 9.0
.target sm_90
.address_size 64

.visible .entry cp32(.param .u32 src)
{
    .reg .b32 %r<4>;
    .shared .align 16 .b8 buf[64];
    ld.param.u32 %r1, [src];
    mov.u32 %r2, buf;
    cp.async.ca.shared.global [%r2], [%r1+16], 4;
    cp.async.wait_all;
    ret;
}
"""


def test_cp_async_from_a_32_bit_register_reads_the_zero_extended_address():
    """``cp.async.ca.shared.global [d], [%r+16], 4`` with a 32-bit register: ptxas 13.0 compiles it to
    ``LDGSTS.E [R0+0x1], [R0.U32+0x2]`` (sm_90a SASS), the register zero-extended to 64 bits; below 4 GiB there is no
    global memory, so both engines fault at exactly that address (0xfffffff0 + 16, not a sign-extended one)."""
    from xcc import runtime as rt
    from xcc.diagnostics import KernelFault
    from xcc.sources import Source

    for engine, opt in (("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)):
        fn = rt.load_module(Source(CP_ASYNC_32, "c.ptx"), engine=engine, opt_level=opt).get_function("cp32")
        with pytest.raises(KernelFault, match="at address 0x100000000") as e:
            fn.launch((1, 1, 1), (1, 1, 1), [np.uint32(0xFFFFFFF0)])
        assert e.value.loc is not None and e.value.loc.line == 11, (engine, opt)


def test_the_new_operand_forms_print_back_and_parse_to_the_same_tree():
    """``var+imm`` and ``[a].unified`` survive ``parse(print_module(parse(text)))`` (tests/test_printer.py's rule)."""
    from xcc.frontend.parser import parse
    from xcc.frontend.printer import print_module

    text = _DECL_HEAD.format(target="sm_90a", line="mov.u64 %rd1, gbuf+-8;\n    cvta.shared.u64 %rd2, sbuf+16;\n"
                             "    ld.global.u32 %r1, [%rd1+4].unified;\n    atom.add.u32 %r2, [%rd2].unified, %r1;")
    module = parse(text)
    printed = print_module(module)
    assert "gbuf+-8" in printed and "[%rd1+4].unified" in printed
    assert parse(printed).functions == module.functions
