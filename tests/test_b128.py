"""PTX's 128-bit values (``.b128``, PTX ISA 8.3; section 5.2.2 "Fundamental types"): ``mov`` packing and unpacking,
``ld``/``st`` in every state space, ``.b128`` parameters, on both engines at -O0 and -O3, bit for bit with each
other and with numpy byte arrays (xcc.ir.lower_b128 holds a ``.b128`` register as two 64-bit halves).

The reference is the manual's definition written out here: a ``.b128`` value in memory is its 16 bytes,
little-endian; ``mov.b128 d, {a, b}`` puts ``a`` in bits 63:0 and ``b`` in bits 127:64 (element 0 is the least
significant), ``{a, b, c, e}`` of ``.b32`` likewise 32 bits each.  Nothing here calls xcc.semantics."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.sources import Source

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]
N = 64  # threads: two warps

HEADER = """\
.version 8.3
.target sm_90
.address_size 64
"""
# %rd1 = in + 16 * tid, %rd2 = out + 16 * tid (both 16-byte aligned)
PROLOGUE = """\
    .reg .b128 %q<8>;
    .reg .b64 %rd<16>;
    .reg .b32 %r<16>;
    .reg .pred %p<4>;
    ld.param.u64 %rd10, [pin];
    ld.param.u64 %rd11, [pout];
    cvta.to.global.u64 %rd10, %rd10;
    cvta.to.global.u64 %rd11, %rd11;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd12, %r0, 16;
    add.s64 %rd1, %rd10, %rd12;
    add.s64 %rd2, %rd11, %rd12;
"""


def kernel(name: str, body: str, extra: str = "", params: str = "") -> str:
    return (HEADER + extra + f"\n.visible .entry {name}(.param .u64 pin, .param .u64 pout{params})\n{{\n"
            + PROLOGUE + body + "\n    ret;\n}\n")


def run_all(text: str, name: str, data: np.ndarray, extra_args=(), out_bytes: int = 16 * N) -> np.ndarray:
    """The output bytes of every engine and level (asserted equal), as uint8."""
    assert check_sources([Source(text, f"{name}.ptx")]).ok
    outs = []
    for engine, opt in ENGINES:
        dev = rt.Device()
        din = rt.to_device(data, dev)
        dout = rt.to_device(np.zeros(out_bytes, np.uint8), dev)
        module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
        module.get_function(name).launch((1, 1, 1), (N, 1, 1), [din, dout, *extra_args])
        outs.append(dout.copy_to_host().view(np.uint8))
    for (engine, opt), got in zip(ENGINES, outs):
        assert got.tobytes() == outs[0].tobytes(), (engine, opt)
    return outs[0]


def data(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, 16 * N, dtype=np.uint8)


def rows(b: np.ndarray) -> np.ndarray:
    """Bytes -> one 16-byte row per thread."""
    return b.reshape(N, 16)


# ----------------------------------------------------------------- ld / st in every state space
SPACES = {
    "global": """\
    ld.global.b128 %q1, [%rd1];
    st.global.b128 [%rd2], %q1;""",
    "global_nc_ldu": """\
    ld.global.nc.b128 %q1, [%rd1];
    ldu.global.b128 %q2, [%rd1];
    st.global.b128 [%rd2], %q1;
    st.global.b128 [%rd2+0], %q2;""",
    "shared": """\
    .shared .align 16 .b8 sbuf[1024];
    ld.global.b128 %q1, [%rd1];
    mov.u32 %r1, sbuf;
    mad.lo.u32 %r2, %r0, 16, %r1;
    st.shared.b128 [%r2], %q1;
    bar.sync 0;
    xor.b32 %r3, %r0, 1;
    mad.lo.u32 %r4, %r3, 16, %r1;
    ld.shared.b128 %q2, [%r4];
    st.global.b128 [%rd2], %q2;""",
    "local": """\
    .local .align 16 .b8 lbuf[32];
    ld.global.b128 %q1, [%rd1];
    st.local.b128 [lbuf+16], %q1;
    ld.local.b128 %q2, [lbuf+16];
    st.global.b128 [%rd2], %q2;""",
    "generic": """\
    .shared .align 16 .b8 sbuf[1024];
    ld.param.u64 %rd3, [pin];
    add.s64 %rd3, %rd3, %rd12;
    ld.b128 %q1, [%rd3];
    mov.u64 %rd4, sbuf;
    cvta.shared.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd12;
    st.b128 [%rd4], %q1;
    ld.b128 %q2, [%rd4];
    ld.param.u64 %rd5, [pout];
    add.s64 %rd5, %rd5, %rd12;
    st.b128 [%rd5], %q2;""",
}


@pytest.mark.parametrize("space", list(SPACES))
def test_load_store_in_every_space(space):
    """A thread's 16 bytes go through ``.b128`` loads and stores in ``space`` unchanged (shared memory: the
    neighbour's, after a barrier)."""
    name = f"b128_{space}"
    src = data(1)
    got = rows(run_all(kernel(name, SPACES[space]), name, src))
    want = rows(src)
    if space == "shared":
        want = want[np.arange(N) ^ 1]
    assert got.tobytes() == want.tobytes()


def test_const_and_global_variables():
    """``ld.const.b128`` and ``ld.global.b128`` of initialised module variables: their bytes."""
    init = list(range(0x10, 0x30))
    extra = (f".const .align 16 .b8 ctab[32] = {{{', '.join(map(str, init))}}};\n"
             ".global .align 16 .b128 gv;\n")
    body = """\
    and.b32 %r1, %r0, 1;
    mul.wide.u32 %rd3, %r1, 16;
    mov.u64 %rd4, ctab;
    add.s64 %rd4, %rd4, %rd3;
    ld.const.b128 %q1, [%rd4];
    setp.eq.u32 %p1, %r0, 5;
    @%p1 st.global.b128 [gv], %q1;
    bar.sync 0;
    ld.global.b128 %q2, [gv];
    st.global.b128 [%rd2], %q1;
    st.global.b128 [%rd2+1024], %q2;"""
    name = "b128_const"
    got = run_all(kernel(name, body, extra), name, data(2), out_bytes=32 * N)
    tab = np.array(init, np.uint8).reshape(2, 16)
    assert rows(got[:16 * N]).tobytes() == tab[np.arange(N) & 1].tobytes()
    assert rows(got[16 * N:]).tobytes() == np.tile(tab[1], (N, 1)).tobytes()


def test_kernel_parameters():
    """``ld.param.b128`` of a ``.param .b128`` and of a 16-byte ``.b8`` array parameter: the bytes passed."""
    body = """\
    ld.param.b128 %q1, [pq];
    ld.param.b128 %q2, [ps];
    setp.lt.u32 %p1, %r0, 32;
    @%p1 st.global.b128 [%rd2], %q1;
    @!%p1 st.global.b128 [%rd2], %q2;"""
    name = "b128_param"
    a, b = bytes(range(100, 116)), bytes(range(200, 216))
    text = kernel(name, body, params=", .param .b128 pq, .param .align 16 .b8 ps[16]")
    got = rows(run_all(text, name, data(3), extra_args=(a, b)))
    want = np.array([list(a)] * 32 + [list(b)] * 32, np.uint8)
    assert got.tobytes() == want.tobytes()


# ----------------------------------------------------------------- mov: pack, unpack, copy
def test_mov_pack_and_unpack():
    """``{a, b}`` of .b64 and ``{a, b, c, e}`` of .b32 pack and unpack with element 0 least significant;
    ``_`` drops an element; a register copy, a guarded copy and a literal."""
    body = """\
    ld.global.v2.b64 {%rd3, %rd4}, [%rd1];
    mov.b128 %q1, {%rd4, %rd3};
    st.global.b128 [%rd2], %q1;
    ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
    mov.b128 %q2, {%r4, %r3, %r2, %r1};
    st.global.b128 [%rd2+1024], %q2;
    mov.b128 {%rd5, %rd6}, %q2;
    st.global.v2.b64 [%rd2+2048], {%rd6, %rd5};
    mov.b128 {%r5, _, %r6, _}, %q1;
    mov.b128 {_, %r7, _, %r8}, %q1;
    st.global.v4.b32 [%rd2+3072], {%r8, %r6, %r7, %r5};
    mov.b128 %q3, 4660;
    setp.ne.u32 %p1, %r0, 3;
    @%p1 mov.b128 %q3, %q1;
    st.global.b128 [%rd2+4096], %q3;"""
    name = "b128_mov"
    src = data(4)
    got = run_all(kernel(name, body), name, src, out_bytes=16 * N * 5).reshape(5, N, 16)
    r = rows(src)
    w64 = r.view("<u8")              # [N, 2]: little-endian 64-bit words
    w32 = r.view("<u4")              # [N, 4]
    swap64 = np.stack([w64[:, 1], w64[:, 0]], 1)      # q1: {hi word, lo word}
    rev32 = w32[:, ::-1]                                # q2: the 32-bit words reversed
    q2_64 = np.ascontiguousarray(rev32).view("<u8")
    assert got[0].tobytes() == np.ascontiguousarray(swap64).tobytes()
    assert got[1].tobytes() == np.ascontiguousarray(rev32).tobytes()
    assert got[2].tobytes() == np.ascontiguousarray(q2_64[:, ::-1]).tobytes()
    q1_32 = np.ascontiguousarray(swap64).view("<u4")   # q1's words, least significant first
    want3 = np.stack([q1_32[:, 3], q1_32[:, 2], q1_32[:, 1], q1_32[:, 0]], 1)
    assert got[3].tobytes() == np.ascontiguousarray(want3).tobytes()
    want4 = np.ascontiguousarray(swap64).copy()
    want4[3] = [4660, 0]
    assert got[4].tobytes() == want4.tobytes()


# ----------------------------------------------------------------- device functions
FUNCS = """\
.func (.param .b128 r) swap(.param .b128 a)
{
    .reg .b128 %x;
    .reg .b64 %l, %h;
    ld.param.b128 %x, [a];
    mov.b128 {%l, %h}, %x;
    mov.b128 %x, {%h, %l};
    st.param.b128 [r], %x;
    ret;
}
.func (.reg .b128 r) same(.reg .b128 a)
{
    mov.b128 r, a;
    ret;
}
"""


def test_device_function_parameters():
    """``.param .b128`` and ``.reg .b128`` parameters and return values of a ``.func``."""
    body = """\
    ld.global.b128 %q1, [%rd1];
    {
        .param .b128 pa;
        .param .b128 pr;
        st.param.b128 [pa], %q1;
        call.uni (pr), swap, (pa);
        ld.param.b128 %q2, [pr];
    }
    call.uni (%q3), same, (%q2);
    st.global.b128 [%rd2], %q3;"""
    name = "b128_func"
    src = data(5)
    got = rows(run_all(kernel(name, body, FUNCS), name, src))
    w64 = rows(src).view("<u8")
    assert got.tobytes() == np.ascontiguousarray(w64[:, ::-1]).tobytes()


# ----------------------------------------------------------------- refusals
def test_sm80_target():
    """mov/ld/st.b128 need no sm_90: ptxas 13.0 takes them for sm_80."""
    name = "b128_sm80"
    text = kernel(name, SPACES["global"]).replace(".target sm_90", ".target sm_80")
    src = data(6)
    assert rows(run_all(text, name, src)).tobytes() == rows(src).tobytes()


REFUSED = [
    ("ld.relaxed.sys.global.b128 %q1, [%rd1];", "'ld.b128 with .sys' needs PTX ISA 8.4 or later"),
    ("st.mmio.relaxed.sys.global.b128 [%rd1], %q1;", "'st.b128 with .sys' needs PTX ISA 8.4 or later"),
    ("ld.volatile.local.b128 %q1, [%rd1];", "'.volatile' cannot be applied to the .local space"),
    ("st.relaxed.gpu.const.b128 [%rd1], %q1;", "'.relaxed' cannot be applied to the .const space"),
    ("ld.relaxed.gpu.param.b128 %q1, [pin];", "'.relaxed' cannot be applied to the .param space"),
    ("atom.global.add.b128 %q1, [%rd1], %q2;", "operation .add takes"),
    ("atom.global.cas.L2::cache_hint.b128 %q1, [%rd1], %q2, %q3, %rd3;", "atom.cas takes no .L2::cache_hint"),
    ("atom.local.exch.b128 %q1, [%rd1], %q2;", "atom works on the .global and .shared spaces, not .local"),
    ("atom.global.v2.exch.b128 %q1, [%rd1], %q2;", "not .v2.b128"),
    ("atom.sys.global.exch.b128 %q1, [%rd1], %q2;", "'atom.b128' needs PTX ISA 8.4 or later"),
    ("selp.b128 %q1, %q2, %q3, %p1;", "'selp' does not take type '.b128'"),
    ("cvt.u32.u64 %r1, %q1;", ".b128 registers are operands of mov, ld, ldu, st"),
    ("mov.b128 %q1, 0f3F800000;", "a .b128 source is a .b128 register or a 64-bit integer literal"),
    ("st.global.b128 [%rd1], -9223372036854775809;", "a .b128 source is a .b128 register or a 64-bit integer"),
    ("mov.b128 %q1, {%rd1, %rd2, %rd3};", ".b128 packs two .b64 or four .b32 elements"),
]


LITERALS = [-1, -2, 1, -(1 << 63), (1 << 64) - 1, 0x7FFFFFFFFFFFFFFF]


def test_signed_literals_zero_extend():
    """A ``.b128`` integer literal is its 64 bits (two's complement for a negative one) zero-extended: ptxas 13.0
    compiles ``mov.b128 %q, -1`` and ``%q, 1`` to the same high half (docs/semantics.md).  Rows 0 .. 5 come from
    ``mov``, rows 6 .. 11 from ``st.b128`` of the literal."""
    name = "b128_literals"
    body = "\n".join(f"    mov.b128 %q1, {v};\n    st.global.b128 [%rd11+{16 * k}], %q1;\n"
                     f"    st.global.b128 [%rd11+{16 * (k + len(LITERALS))}], {v};" for k, v in enumerate(LITERALS))
    body = "    setp.ne.u32 %p1, %r0, 0;\n    @%p1 bra DONE;\n" + body + "\nDONE:"
    out = run_all(kernel(name, body), name, data(9))
    ref = np.zeros(16 * N, np.uint8)
    for k, v in enumerate(LITERALS * 2):
        ref[16 * k:16 * k + 16] = np.frombuffer((v % (1 << 64)).to_bytes(16, "little"), np.uint8)
    assert out.tobytes() == ref.tobytes()


@pytest.mark.parametrize("line, msg", REFUSED, ids=[" ".join(x[0].split()[:2]) for x in REFUSED])
def test_refusals_are_located_and_check_agrees(line, msg):
    """What xcc refuses, ``xcc check`` and the compile path refuse with the same located message."""
    _assert_refused(kernel("b128_bad", "    " + line), msg)


def test_mmio_shared_refused_as_by_ptxas():
    """ptxas 13.0: "Modifier '.mmio' cannot be applied to '.shared' space" (PTX 8.4, where .sys is allowed)."""
    text = kernel("b128_bad", "    ld.mmio.relaxed.sys.shared.b128 %q1, [%rd1];").replace(".version 8.3", ".version 8.4")
    _assert_refused(text, "'.mmio' cannot be applied to the .shared space")


def _assert_refused(text: str, msg: str) -> None:
    name = "b128_bad"
    try:
        res = check_sources([Source(text, f"{name}.ptx")])
        assert res.errors, msg
        by_check = str(res.errors[0])
    except XccError as e:  # the checker's own refusal (a type the instruction does not take)
        by_check = str(e)
    assert msg in by_check and f"{name}.ptx:" in by_check.splitlines()[0]
    module = rt.load_module(Source(text, f"{name}.ptx"), engine="isa")
    with pytest.raises(XccError) as e:
        module.get_function(name)
    assert str(e.value).splitlines()[0] == by_check.splitlines()[0]


# ----------------------------------------------------------------- atom.cas.b128 / atom.exch.b128 (sm_90)
# The manual's definition (PTX ISA 9.7.13.4): d = the 16 bytes at [a]; for .cas, [a] = (d == b) ? c : d, for
# .exch, [a] = b, in one atomic step.  Each thread works on its own 16 bytes of ``out`` (rows 0 .. N-1) and
# writes the old value it got to row N + tid.
ATOM_FORMS = {  # name: (how the target's address %rd5 is made from its row, the atom's spelling)
    "global": ("add.s64 %rd5, %rd11, %rd12;", "atom.global"),
    "generic": ("add.s64 %rd5, %rd11, %rd12;", "atom"),
    "acq_rel_gpu": ("add.s64 %rd5, %rd11, %rd12;", "atom.acq_rel.gpu.global"),
    "shared": ("mov.u64 %rd5, sbuf; add.s64 %rd5, %rd5, %rd12;", "atom.shared"),
    "shared_cta": ("mov.u64 %rd5, sbuf; add.s64 %rd5, %rd5, %rd12;", "atom.relaxed.cta.shared::cta"),
    "shared_cluster": ("mov.u64 %rd5, sbuf; add.s64 %rd5, %rd5, %rd12;", "atom.acquire.cluster.shared::cluster"),
    "generic_shared": ("mov.u64 %rd5, sbuf; add.s64 %rd5, %rd5, %rd12;", "atom"),
}
SHARED_DECL = f".shared .align 16 .b8 sbuf[{16 * N}];\n"


def atom_kernel(name: str, form: str, op: str) -> str:
    """``in``: three rows per thread (the target's initial value, b, c); the target is row ``tid`` of ``out``
    (global forms) or of ``sbuf`` (shared forms: copied back to ``out`` after); the old value goes to row
    N + tid of ``out``.  The generic forms address the target through cvta."""
    setup, spelling = ATOM_FORMS[form]
    shared = "sbuf" in setup
    space = ".shared" if shared else ".global"
    cvta = f"cvta{space}.u64 %rd6, %rd5;" if spelling == "atom" else "mov.u64 %rd6, %rd5;"
    srcs = "%q2, %q3" if op == "cas" else "%q2"
    body = f"""\
    mul.wide.u32 %rd12, %r0, 16;
    mul.wide.u32 %rd13, %r0, 48;
    add.s64 %rd1, %rd10, %rd13;
    {setup}
    {cvta}
    ld.global.b128 %q1, [%rd1];
    ld.global.b128 %q2, [%rd1+16];
    ld.global.b128 %q3, [%rd1+32];
    st{space}.b128 [%rd5], %q1;
    {spelling}.{op}.b128 %q4, [%rd6], {srcs};
    add.s64 %rd7, %rd11, {16 * N};
    add.s64 %rd7, %rd7, %rd12;
    st.global.b128 [%rd7], %q4;
    ld{space}.b128 %q5, [%rd5];
    add.s64 %rd8, %rd11, %rd12;
    st.global.b128 [%rd8], %q5;
"""
    return kernel(name, body, extra=SHARED_DECL if shared else "")


def run_engines(text: str, name: str, inputs: np.ndarray, out_bytes: int, block: int = N, args=None):
    """The ``out`` bytes of every engine and level (asserted equal), as uint8."""
    assert check_sources([Source(text, f"{name}.ptx")]).ok
    outs = []
    for engine, opt in ENGINES:
        dev = rt.Device()
        din = rt.to_device(inputs, dev)
        dout = rt.to_device(np.zeros(out_bytes, np.uint8), dev)
        module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
        module.get_function(name).launch((1, 1, 1), (block, 1, 1), [din, dout, *(args or [])])
        outs.append(dout.copy_to_host().view(np.uint8))
    for (engine, opt), got in zip(ENGINES, outs):
        assert got.tobytes() == outs[0].tobytes(), (engine, opt)
    return outs[0]


@pytest.mark.parametrize("op", ["cas", "exch"])
@pytest.mark.parametrize("form", list(ATOM_FORMS))
def test_atom_b128_single_thread_each(form, op):
    """Every thread its own target: cas succeeds for the even threads (b equals the target), fails for the odd
    ones in one byte only (low half, then high half); exch always stores b.  The old value is the target's."""
    name = f"atom_{form}_{op}"
    src = data(11).reshape(N, 16)
    ins = np.concatenate([src, data(12).reshape(N, 16), data(13).reshape(N, 16)], axis=1)  # init, b, c
    ins[::2, 16:32] = ins[::2, 0:16]
    ins[1::4, 16:32] = ins[1::4, 0:16]
    ins[1::4, 16 + 3] ^= 0x40  # differs in bits 63:0 only
    ins[3::4, 16:32] = ins[3::4, 0:16]
    ins[3::4, 16 + 12] ^= 0x01  # differs in bits 127:64 only
    got = run_engines(atom_kernel(name, form, op), name, ins.reshape(-1), 32 * N).reshape(2 * N, 16)
    init, b, c = ins[:, 0:16], ins[:, 16:32], ins[:, 32:48]
    if op == "exch":
        want = b
    else:
        hit = (init == b).all(axis=1)
        assert hit.sum() == N // 2
        want = np.where(hit[:, None], c, init)
    assert got[N:].tobytes() == init.tobytes()
    assert got[:N].tobytes() == want.tobytes()


COUNTER = N * 4  # threads incrementing one 128-bit counter


def _carry_kernel(name: str, space: str) -> str:
    """Each thread adds its increment {lo: (tid + 1) * K, hi: tid} to the counter at ``out`` by a cas loop
    (carry from bits 63:0 into 127:64 by add.cc/addc), and writes the old value of its successful cas to row
    1 + tid of ``out``."""
    shared = space == "shared"
    body = f"""\
    mul.wide.u32 %rd12, %r0, 16;
    cvt.u64.u32 %rd9, %r0;
    add.s64 %rd8, %rd9, 1;
    mul.lo.u64 %rd8, %rd8, 0x9E3779B97F4A7C15;
    {"mov.u64 %rd5, sbuf;" if shared else "mov.u64 %rd5, %rd11;"}
    {"ld.global.b128 %q1, [%rd10]; setp.eq.u32 %p1, %r0, 0; @%p1 st.shared.b128 [%rd5], %q1; bar.sync 0;"
     if shared else ""}
    ld.volatile{'.shared' if shared else '.global'}.u64 %rd3, [%rd5];
    ld.volatile{'.shared' if shared else '.global'}.u64 %rd4, [%rd5+8];
    mov.b128 %q1, {{%rd3, %rd4}};
LOOP:
    mov.b128 {{%rd3, %rd4}}, %q1;
    add.cc.u64 %rd6, %rd3, %rd8;
    addc.u64 %rd7, %rd4, %rd9;
    mov.b128 %q2, {{%rd6, %rd7}};
    atom{'.shared' if shared else '.global'}.cas.b128 %q3, [%rd5], %q1, %q2;
    mov.b128 {{%rd6, %rd7}}, %q3;
    mov.b128 %q1, %q3;
    setp.ne.u64 %p2, %rd6, %rd3;
    setp.ne.or.u64 %p2, %rd7, %rd4, %p2;
    @%p2 bra LOOP;
    add.s64 %rd13, %rd11, 16;
    add.s64 %rd13, %rd13, %rd12;
    st.global.b128 [%rd13], %q3;
    {"bar.sync 0; @%p1 ld.shared.b128 %q4, [%rd5]; @%p1 st.global.b128 [%rd11], %q4;" if shared else ""}"""
    return (HEADER + (".shared .align 16 .b8 sbuf[16];\n" if shared else "")
            + f"\n.visible .entry {name}(.param .u64 pin, .param .u64 pout)\n{{\n" + PROLOGUE
            + body + "\n    ret;\n}\n")


@pytest.mark.parametrize("space", ["global", "shared"])
def test_atom_cas_b128_contended_counter(space):
    """256 threads increment one 128-bit counter by cas loops: the final value is the initial one plus every
    increment (mod 2^128), and the old values of the successful cas steps chain from the initial value to
    the final one in some serial order, one step per thread."""
    name = f"atom_counter_{space}"
    init = int.from_bytes(data(21)[:16].tobytes(), "little")
    init |= (1 << 64) - 1 - 0xFF  # bits 63:0 near the top: carries into bits 127:64
    ins = np.frombuffer(init.to_bytes(16, "little"), np.uint8).copy()
    text = _carry_kernel(name, space)
    if space == "global":  # the counter starts as init: the host sets it
        outs = []
        for engine, opt in ENGINES:
            dev = rt.Device()
            out0 = np.zeros(16 * (COUNTER + 1), np.uint8)
            out0[:16] = ins
            din, dout = rt.to_device(ins, dev), rt.to_device(out0, dev)
            module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
            module.get_function(name).launch((1, 1, 1), (COUNTER, 1, 1), [din, dout])
            outs.append(dout.copy_to_host().view(np.uint8))
        for (engine, opt), o in zip(ENGINES, outs):
            assert o.tobytes() == outs[0].tobytes(), (engine, opt)
        got = outs[0]
    else:
        got = run_engines(text, name, ins, 16 * (COUNTER + 1), block=COUNTER)
    vals = [int.from_bytes(got[16 * k:16 * k + 16].tobytes(), "little") for k in range(COUNTER + 1)]
    incs = [(((t + 1) * 0x9E3779B97F4A7C15) % (1 << 64)) | (t << 64) for t in range(COUNTER)]
    assert vals[0] == (init + sum(incs)) % (1 << 128)
    by_old = {v: t for t, v in enumerate(vals[1:])}
    assert len(by_old) == COUNTER  # no two cas steps read the same value
    cur = init
    for _ in range(COUNTER):
        t = by_old[cur]
        cur = (cur + incs[t]) % (1 << 128)
    assert cur == vals[0]


def test_atom_exch_b128_contended():
    """256 threads exchange their own {tid, ~tid} into one location: the old values and the final one are
    the initial value and every thread's, each once (a serial order)."""
    name = "atom_exch_many"
    body = """\
    cvt.u64.u32 %rd3, %r0;
    not.b64 %rd4, %rd3;
    mov.b128 %q1, {%rd3, %rd4};
    atom.global.exch.b128 %q2, [%rd11], %q1;
    mul.wide.u32 %rd12, %r0, 16;
    add.s64 %rd13, %rd11, 16;
    add.s64 %rd13, %rd13, %rd12;
    st.global.b128 [%rd13], %q2;"""
    text = kernel(name, body)
    init = bytes(range(100, 116))
    outs = []
    for engine, opt in ENGINES:
        dev = rt.Device()
        out0 = np.zeros(16 * (COUNTER + 1), np.uint8)
        out0[:16] = np.frombuffer(init, np.uint8)
        din, dout = rt.to_device(np.zeros(16, np.uint8), dev), rt.to_device(out0, dev)
        module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
        module.get_function(name).launch((1, 1, 1), (COUNTER, 1, 1), [din, dout])
        outs.append(dout.copy_to_host().view(np.uint8))
    for (engine, opt), o in zip(ENGINES, outs):
        assert o.tobytes() == outs[0].tobytes(), (engine, opt)
    got = [outs[0][16 * k:16 * k + 16].tobytes() for k in range(COUNTER + 1)]
    mine = [t.to_bytes(8, "little") + ((1 << 64) - 1 - t).to_bytes(8, "little") for t in range(COUNTER)]
    assert sorted(got) == sorted([init, *mine])


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_atom_b128_misaligned_faults(space, engine):
    """A .b128 atomic's address must be 16-byte aligned (PTX ISA 9.7.13.4): 8 bytes off faults, located."""
    name = "atom_misaligned"
    pre = "mov.u64 %rd11, sbuf;" if space == "shared" else ""
    text = kernel(name, f"    {pre}\n    atom.{space}.exch.b128 %q3, [%rd11+8], %q1;\n    st.global.b128 [%rd2], %q3;",
                  extra=".shared .align 16 .b8 sbuf[64];\n")
    dev = rt.Device()
    din, dout = rt.to_device(np.zeros(16 * N, np.uint8), dev), rt.to_device(np.zeros(16 * N, np.uint8), dev)
    module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine)
    with pytest.raises(XccError) as e:
        module.get_function(name).launch((1, 1, 1), (4, 1, 1), [din, dout])
    assert f"misaligned 16-byte {space} access" in str(e.value) and f"{name}.ptx:" in str(e.value)


# ----------------------------------------------------------------- strong ld / st.b128: single-copy atomic
# Each thread stores its row of ``in`` with the strong store into buffer B (rows N .. 2N-1 of ``out``, or shared
# memory), and after a barrier loads its neighbour's row (tid ^ 1) with the strong load into row tid of ``out``.
STRONG_FORMS = {  # name: (B, the load, the store, PTX version)
    "volatile_global": ("global", "ld.volatile.global", "st.volatile.global", "8.3"),
    "relaxed_global": ("global", "ld.relaxed.gpu.global", "st.relaxed.cta.global", "8.3"),
    "acquire_release_global": ("global", "ld.acquire.gpu.global", "st.release.gpu.global", "8.3"),
    "cluster_generic": ("global", "ld.acquire.cluster", "st.release.cluster", "8.3"),
    "mmio_global": ("global", "ld.mmio.relaxed.sys.global", "st.mmio.relaxed.sys.global", "8.4"),
    "sys_generic": ("global", "ld.relaxed.sys", "st.relaxed.sys", "8.4"),
    "volatile_shared": ("shared", "ld.volatile.shared", "st.volatile.shared", "8.3"),
    "acquire_release_shared_cta": ("shared", "ld.acquire.cta.shared::cta", "st.release.cta.shared::cta", "8.3"),
    "relaxed_shared_cluster": ("shared", "ld.relaxed.cluster.shared::cluster", "st.relaxed.cluster.shared::cluster",
                               "8.3"),
    "volatile_generic_shared": ("shared_generic", "ld.volatile", "st.volatile", "8.3"),
}


@pytest.mark.parametrize("form", list(STRONG_FORMS))
def test_strong_load_store(form):
    """Every strong qualifier in every space ptxas 13.0 takes it in (sm_90; volatile/relaxed/acquire/release
    also sm_80): the bytes move unchanged, against numpy."""
    buf, ld, st, version = STRONG_FORMS[form]
    name = f"strong_{form}"
    where = {"global": f"add.s64 %rd5, %rd11, {16 * N}; add.s64 %rd5, %rd5, %rd12;",
             "shared": "mov.u64 %rd5, sbuf; add.s64 %rd5, %rd5, %rd12;",
             "shared_generic": "mov.u64 %rd5, sbuf; cvta.shared.u64 %rd5, %rd5; add.s64 %rd5, %rd5, %rd12;"}[buf]
    body = f"""\
    {where}
    xor.b64 %rd6, %rd12, 16;
    sub.s64 %rd6, %rd6, %rd12;
    ld.global.b128 %q1, [%rd1];
    {st}.b128 [%rd5], %q1;
    bar.sync 0;
    add.s64 %rd7, %rd5, %rd6;
    {ld}.b128 %q2, [%rd7];
    st.global.b128 [%rd2], %q2;"""
    text = kernel(name, body, extra=SHARED_DECL).replace(".version 8.3", f".version {version}")
    src = data(31)
    got = run_engines(text, name, src, 32 * N)
    ref = np.zeros(32 * N, np.uint8)
    ref[:16 * N] = rows(src)[np.arange(N) ^ 1].reshape(-1)
    if buf == "global":
        ref[16 * N:] = src
    assert got.tobytes() == ref.tobytes()


def test_strong_b128_literal_store():
    """``st.volatile.b128 [a], -1`` stores the zero-extended literal, as the weak store does."""
    name = "strong_literal"
    text = kernel(name, "    st.volatile.global.b128 [%rd2], -1;")
    got = rows(run_engines(text, name, np.zeros(16, np.uint8), 16 * N))
    assert (got == np.frombuffer(((1 << 64) - 1).to_bytes(16, "little"), np.uint8)).all()


TORN = 256  # threads: 4 writer warps and 4 reader warps


@pytest.mark.parametrize("space", ["global", "shared"])
def test_strong_b128_never_torn(space):
    """Writer warps store {v, v} (both halves equal, v = 1 + 16 * tid + i) sixteen times into one location with
    ``st.relaxed``/``st.release``; reader warps load it sixteen times with ``ld.relaxed``/``ld.acquire``.  A
    single-copy-atomic access is never torn: every value a reader sees has equal halves and is 0 (the initial
    value) or one a writer stored; each reader writes its count of torn values (0) and its last value."""
    name = f"strong_torn_{space}"
    sp = ".shared" if space == "shared" else ".global"
    loc = "mov.u64 %rd5, sbuf;" if space == "shared" else f"add.s64 %rd5, %rd11, {16 * TORN};"
    body = f"""\
    {loc}
    {"setp.eq.u32 %p3, %r0, 0; mov.b128 %q7, 0; @%p3 st.shared.b128 [%rd5], %q7; bar.sync 0;"
     if space == "shared" else ""}
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
    shr.u32 %r1, %r0, 5;
    and.b32 %r1, %r1, 1;
    setp.eq.u32 %p1, %r1, 0;
    cvt.u64.u32 %rd3, %r0;
    shl.b64 %rd3, %rd3, 4;
    add.s64 %rd3, %rd3, 1;
LOOP:
    @!%p1 bra READ;
    cvt.u64.u32 %rd4, %r2;
    add.s64 %rd4, %rd3, %rd4;
    mov.b128 %q1, {{%rd4, %rd4}};
    and.b32 %r4, %r2, 1;
    setp.eq.u32 %p2, %r4, 0;
    @%p2 st.relaxed.gpu{sp}.b128 [%rd5], %q1;
    @!%p2 st.release.gpu{sp}.b128 [%rd5], %q1;
    bra NEXT;
READ:
    and.b32 %r4, %r2, 1;
    setp.eq.u32 %p2, %r4, 0;
    @%p2 ld.relaxed.gpu{sp}.b128 %q2, [%rd5];
    @!%p2 ld.acquire.gpu{sp}.b128 %q2, [%rd5];
    mov.b128 {{%rd6, %rd7}}, %q2;
    setp.ne.u64 %p2, %rd6, %rd7;
    selp.u32 %r4, 1, 0, %p2;
    add.u32 %r3, %r3, %r4;
    st.global.b128 [%rd2], %q2;
NEXT:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 16;
    @%p2 bra LOOP;
    @%p1 bra DONE;
    st.global.u32 [%rd2+8], %r3;
DONE:"""
    text = kernel(name, body, extra=".shared .align 16 .b8 sbuf[16];\n")
    assert check_sources([Source(text, f"{name}.ptx")]).ok
    written = {0} | {1 + 16 * t + i for t in range(TORN) if (t >> 5) % 2 == 0 for i in range(16)}
    for engine, opt in ENGINES:  # the race's outcome is each engine's interleaving of warps: checked per engine
        dev = rt.Device()
        din, dout = rt.to_device(np.zeros(16, np.uint8), dev), rt.to_device(np.zeros(16 * (TORN + 1), np.uint8), dev)
        module = rt.load_module(Source(text, f"{name}.ptx"), device=dev, engine=engine, opt_level=opt)
        module.get_function(name).launch((1, 1, 1), (TORN, 1, 1), [din, dout])
        got = dout.copy_to_host().view(np.uint8)
        for t in range(TORN):
            if (t >> 5) % 2 == 1:
                lo, torn = (int(x) for x in got[16 * t:16 * t + 16].view(np.uint64))
                assert torn & 0xFFFFFFFF == 0 and (torn >> 32) == (lo >> 32), (engine, opt, t)  # no torn value
                assert lo in written, (engine, opt, t)


def test_strong_generic_load_of_read_only_windows():
    """A strong generic ``ld.volatile.b128`` whose address lies in the ``.const`` window (``cvta.const``) or the
    kernel parameters' window (``cvta.param``) reads the bytes: nothing is written, so read-only memory is no
    fault."""
    name = "strong_read_only"
    body = """\
    mov.u64 %rd5, cv;
    cvta.const.u64 %rd5, %rd5;
    ld.volatile.b128 %q1, [%rd5];
    st.global.b128 [%rd2], %q1;
    mov.u64 %rd6, pq;
    cvta.param.u64 %rd6, %rd6;
    ld.relaxed.gpu.b128 %q2, [%rd6];
    st.global.b128 [%rd2+1024], %q2;"""
    cv = bytes(range(1, 17))
    extra = ".const .align 16 .b8 cv[16] = {" + ", ".join(str(b) for b in cv) + "};\n"
    text = kernel(name, body, extra=extra, params=", .param .align 16 .b8 pq[16]")
    pq = bytes(range(90, 106))
    got = run_engines(text, name, np.zeros(16, np.uint8), 16 * N + 1024, args=[pq]).reshape(-1, 16)
    assert (got[:N] == np.frombuffer(cv, np.uint8)).all() and (got[64:] == np.frombuffer(pq, np.uint8)).all()
