"""Issue 19's remaining PTX forms: ``brx.idx`` through ``.branchtargets`` lists (xcc.ir.build lowers it to a
compare-and-branch chain), ``.reg`` parameters of ``.func``, variable addresses in initialisers (relocated by the
loader), ``atom.cas.b16`` and the f16/bf16 (x2) ``atom.add.noftz`` forms, ``vmad`` with negated operands; run on
both engines at -O0 and -O3.  Expected values restate the PTX ISA 9.0
manual's definitions with Python integers, never xcc.semantics."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_isa_gaps import ENGINES

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.sources import Source

DATA = Path(__file__).parent / "data" / "runtime"


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_brx_idx_chooses_the_listed_target(engine, opt):
    """brx_idx.ptx: out[i] = 10 + i % 4 (the i % 4-th target), then even threads' guarded brx.idx.uni adds 200
    when i % 3 == 1 (the second target), else 100."""
    n = 64
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module((DATA / "brx_idx.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("brx_idx").launch((1, 1, 1), (n, 1, 1), [out])
    want = [10 + i % 4 + (0 if i % 2 else (200 if i % 3 == 1 else 100)) for i in range(n)]
    assert [int(v) for v in out.copy_to_host()] == want


def test_brx_idx_to_an_undefined_table_is_a_located_error():
    src = (DATA / "brx_idx.ptx").read_text().replace("brx.idx %r2, ts;", "brx.idx %r2, L0;")
    errors = check_sources([Source(src, "bad.ptx")]).errors
    assert len(errors) == 1 and "brx.idx takes a register and a .branchtargets label" in str(errors[0]), errors
    assert errors[0].loc is not None and errors[0].loc.line == 17


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_reg_parameters_of_a_func(engine, opt):
    """reg_params.ptx: .reg arguments (registers and constants) and .reg return values, two of them, mixed
    with .param ones: out[i] = (3 i + 7) + 2 i + hi32(i << 32 | i) + (lo32(i << 32 | i) + 1000)."""
    n = 40
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module((DATA / "reg_params.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("reg_params").launch((1, 1, 1), (n, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [(3 * i + 7) + 2 * i + i + (i + 1000) for i in range(n)]


PICK = """.version 8.4
.target sm_90
.address_size 64
.func (.reg .b32 d) pick(.reg .pred q)
{
\tselp.b32 d, 1, 2, q;
\tret;
}
.visible .entry k(.param .u64 out)
{
\t.reg .pred %p;
\t.reg .b32 %r;
\tsetp.eq.u32 %p, %r, 0;
\tcall (%r), pick, (%p);
\tret;
}
"""


def test_predicate_reg_parameter_is_a_located_refusal():
    errors = check_sources([Source(PICK, "bad.ptx")]).errors
    assert len(errors) == 1 and "'.reg' parameter 'q' of 'pick' (a predicate" in str(errors[0]), errors
    assert errors[0].loc is not None and errors[0].loc.line == 4


def _addr_init(engine: str, opt: int, xbin: bool = False):
    dev = rt.Device()
    src = (DATA / "addr_init.ptx").read_text()
    if xbin:  # the .xbin's relocations (GlobalVar.relocs, KernelImage.reloc_globals) applied by the loader
        from xcc.driver import CompileOptions, compile_module

        src = compile_module([Source(src, "addr_init.ptx")], CompileOptions(opt_level=opt)).to_bytes()
    return dev, rt.load_module(src, device=dev, engine=engine, opt_level=opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_variable_addresses_in_initialisers(engine, opt):
    """addr_init.ptx: p = generic(lut)+8, q = lut, tbl = {lut, lut+4} (.u32: the address's low word), twice =
    {q, p}, b0 = {0xFF(lut+4), 0xFF00(lut)} (PTX ISA 9.0 section 5.4.4); the loader writes the addresses."""
    dev, m = _addr_init(engine, opt)
    out = rt.to_device(np.zeros(9, np.uint32), dev)
    m.get_function("addr_init").launch((1, 1, 1), (1, 1, 1), [out])
    got = [int(v) for v in out.copy_to_host()]
    lut = int(m.get_global("lut", np.uint32).ptr)
    assert lut & 0xFFFFFFFF == got[8]
    assert got == [3, 1, 8, 4, 0, 0, (lut + 4) & 0xFF, (lut >> 8) & 0xFF, lut & 0xFFFFFFFF]
    assert int(m.get_global("p", np.uint64).copy_to_host()[0]) == lut + 8


@pytest.mark.parametrize("engine, opt, xbin", [(e, o, False) for e, o in ENGINES] + [("isa", 0, True), ("isa", 3, True)])
def test_variables_reached_only_through_initialisers(engine, opt, xbin):
    dev, m = _addr_init(engine, opt, xbin)
    out = rt.to_device(np.zeros(2, np.uint32), dev)
    m.get_function("via_pointers").launch((1, 1, 1), (1, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [1, 3]


def test_modern_ptx_initialiser_is_no_longer_refused():
    """tests/data/frontend/modern.ptx's ``lut_ptr = generic(lut)+8`` builds."""
    src = (Path(__file__).parent / "data" / "frontend" / "modern.ptx").read_text()
    errors = check_sources([Source(src, "modern.ptx")]).errors
    assert not any("initialiser" in str(e) for e in errors), errors


@pytest.mark.parametrize("engine, opt", [("ir", 0), ("isa", 0), ("isa", 3)])
def test_modern_ptx_compiles_whole(engine, opt):
    """tests/data/frontend/modern.ptx (mbarriers, a TMA load and a TMA store with bulk-group waits, clusters,
    calls, ...) passes ``xcc check`` and its kernel compiles on both engines (it stopped at its TMA store)."""
    src = (Path(__file__).parent / "data" / "frontend" / "modern.ptx").read_text()
    assert check_sources([Source(src, "modern.ptx")]).errors == []
    m = rt.load_module(src, device=rt.Device(), engine=engine, opt_level=opt)
    assert m.get_function("modern_kernel") is not None


# ----------------------------------------------------------------------------- 16-bit and packed-half atomics
def _half_value(bits: int, fmt: str):
    """The exact value of f16/bf16 ``bits``: a Fraction, or a float for inf/NaN (IEEE 754 binary16 / bfloat16)."""
    eb, mb = (5, 10) if fmt == "f16" else (8, 7)
    sign, e, m = bits >> 15 & 1, bits >> mb & ((1 << eb) - 1), bits & ((1 << mb) - 1)
    bias = (1 << eb - 1) - 1
    if e == (1 << eb) - 1:
        return float("nan") if m else (-1) ** sign * float("inf")
    v = (Fraction(m, 1 << mb) if e == 0 else 1 + Fraction(m, 1 << mb)) * Fraction(2) ** (max(e, 1) - bias)
    return -v if sign else v


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


def _half_round(x, fmt: str, neg_zero: bool = False) -> int:
    """``x`` (a Fraction, or an infinite float) rounded to nearest, ties to even, into f16/bf16 bits (overflow:
    infinity; subnormals kept)."""
    eb, mb = (5, 10) if fmt == "f16" else (8, 7)
    bias, inf = (1 << eb - 1) - 1, ((1 << eb) - 1) << mb
    sign = 0x8000 if x < 0 or (x == 0 and neg_zero) else 0
    if isinstance(x, float):
        return sign | inf
    x = abs(x)
    if x == 0:
        return sign
    ulp = Fraction(2) ** (max(_floor_log2(x), 1 - bias) - mb)
    q, r = divmod(x / ulp, 1)
    q = int(q) + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and int(q) % 2) else 0)
    v = q * ulp
    if v >= Fraction(2) ** (bias + 1):
        return sign | inf
    if v < Fraction(2) ** (1 - bias):
        return sign | q
    e = _floor_log2(v)
    return sign | (e + bias) << mb | int(v / Fraction(2) ** (e - mb)) - (1 << mb)


def _half_add(a: int, b: int, fmt: str) -> int | None:
    """PTX ``add.rn.noftz`` of two f16/bf16 values from the bit patterns (None: any NaN)."""
    x, y = _half_value(a, fmt), _half_value(b, fmt)
    if isinstance(x, float) or isinstance(y, float):
        s = float(x) + float(y)
        return None if s != s else _half_round(s, fmt)
    if x + y == 0:  # an exact zero sum: -0 only for -0 + -0 (round to nearest)
        return _half_round(Fraction(0), fmt, neg_zero=bool(a >> 15 and b >> 15))
    return _half_round(x + y, fmt)


H16 = {"f16": [0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x3555, 0x1400,
               0x6800, 0x7E00],
       "bf16": [0x0000, 0x8000, 0x3F80, 0xBF80, 0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x3EAB, 0x3400,
                0x4B00, 0x7FC0]}

ATOM_PTX = """.version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 val, .param .u64 old)
{{
    .reg .b16 %h<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<10>;
    .shared .align 4 .b8 sbuf[1024];
    ld.param.u64 %rd1, [mem];
    ld.param.u64 %rd2, [val];
    ld.param.u64 %rd3, [old];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, {w};
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    mov.u32 %r5, sbuf;
    cvt.u32.u64 %r4, %rd4;
    add.u32 %r5, %r5, %r4;
{body}
    ret;
}}
"""
ATOM_BODY = {
    ("global", 2): "ld.global.b16 %h1, [%rd6]; atom.global.{op}.{t} %h2, [%rd5], %h1; st.global.b16 [%rd7], %h2;",
    ("global", 4): "ld.global.b32 %r2, [%rd6]; atom.global.{op}.{t} %r3, [%rd5], %r2; st.global.b32 [%rd7], %r3;",
    ("shared", 2): ("ld.global.b16 %h3, [%rd5]; st.shared.b16 [%r5], %h3; ld.global.b16 %h1, [%rd6];"
                    " atom.shared.{op}.{t} %h2, [%r5], %h1; st.global.b16 [%rd7], %h2; ld.shared.b16 %h3, [%r5];"
                    " st.global.b16 [%rd5], %h3;"),
    ("generic", 4): "ld.global.b32 %r2, [%rd6]; atom.{op}.{t} %r3, [%rd5], %r2; st.global.b32 [%rd7], %r3;",
}


def _run_atom(engine, opt, space, t, op, mem, val, dtype):
    w = np.dtype(dtype).itemsize
    src = ATOM_PTX.format(w=w, body=ATOM_BODY[(space, w)].format(op=op, t=t))
    dev = rt.Device()
    dm, dv, do = (rt.to_device(np.array(x, dtype), dev) for x in (mem, val, [0] * len(mem)))
    m = rt.load_module(src, device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (len(mem), 1, 1), [dm, dv, do])
    return [int(x) for x in dm.copy_to_host()], [int(x) for x in do.copy_to_host()]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("fmt, space", [("f16", "global"), ("bf16", "global"), ("f16", "shared"), ("bf16", "shared")])
def test_atom_add_noftz_half(engine, opt, fmt, space):
    """atom.add.noftz.{f16,bf16} on global and shared memory: every pair of edge values (zeros, one, the
    smallest and largest subnormals, the largest finite, infinities, NaN); old value back, sum rounded once."""
    pairs = [(a, b) for a in H16[fmt] for b in H16[fmt]]
    mem, val = [a for a, _ in pairs], [b for _, b in pairs]
    got_mem, got_old = _run_atom(engine, opt, space, fmt, "add.noftz", mem, val, np.uint16)
    assert got_old == mem
    for (a, b), g, w in zip(pairs, got_mem, [_half_add(a, b, fmt) for a, b in pairs]):
        if w is None:
            assert g & 0x7FFF > (0x7C00 if fmt == "f16" else 0x7F80), (hex(a), hex(b), hex(g))
        else:
            assert g == w, (hex(a), hex(b), hex(g), hex(w))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("fmt, space", [("f16x2", "global"), ("bf16x2", "global"), ("f16x2", "generic")])
def test_atom_add_noftz_packed_half(engine, opt, fmt, space):
    base = fmt[:-2]
    vals = H16[base]
    mem = [vals[i] | vals[-1 - i] << 16 for i in range(len(vals))] * 2
    val = [vals[(i * 7) % len(vals)] | vals[(i * 3) % len(vals)] << 16 for i in range(len(mem))]
    got_mem, got_old = _run_atom(engine, opt, space, fmt, "add.noftz", mem, val, np.uint32)
    assert got_old == mem
    for a, b, g in zip(mem, val, got_mem):
        for k in (0, 1):
            w = _half_add(a >> 16 * k & 0xFFFF, b >> 16 * k & 0xFFFF, base)
            gk = g >> 16 * k & 0xFFFF
            if w is None:
                assert gk & 0x7FFF > (0x7C00 if base == "f16" else 0x7F80), (hex(a), hex(b), hex(g))
            else:
                assert gk == w, (k, hex(a), hex(b), hex(g), hex(w))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("space", ["global", "shared"])
def test_atom_cas_b16(engine, opt, space):
    """atom.cas.b16 d, [a], b, c: d = old; the memory becomes c when old == b (here b = old for even threads)."""
    n = 40
    mem = [(0x1234 * i + 0x8001) & 0xFFFF for i in range(n)]
    cmp = [m if i % 2 == 0 else m ^ 0x8000 for i, m in enumerate(mem)]
    new = [(0xBEEF + i) & 0xFFFF for i in range(n)]
    src_body = {"global": "ld.global.b16 %h1, [%rd6]; add.s64 %rd8, %rd6, 128; ld.global.b16 %h3, [%rd8];"
                          " atom.global.cas.b16 %h2, [%rd5], %h1, %h3; st.global.b16 [%rd7], %h2;",
                "shared": "ld.global.b16 %h3, [%rd5]; st.shared.b16 [%r5], %h3; ld.global.b16 %h1, [%rd6];"
                          " add.s64 %rd8, %rd6, 128; ld.global.b16 %h3, [%rd8];"
                          " atom.shared.cas.b16 %h2, [%r5], %h1, %h3; st.global.b16 [%rd7], %h2;"
                          " ld.shared.b16 %h3, [%r5]; st.global.b16 [%rd5], %h3;"}[space]
    dev = rt.Device()
    dm = rt.to_device(np.array(mem, np.uint16), dev)
    dv = rt.to_device(np.array(cmp + [0] * (64 - n) + new + [0] * (64 - n), np.uint16), dev)
    do = rt.to_device(np.zeros(n, np.uint16), dev)
    m = rt.load_module(ATOM_PTX.format(w=2, body=src_body), device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (n, 1, 1), [dm, dv, do])
    assert [int(x) for x in do.copy_to_host()] == mem
    assert [int(x) for x in dm.copy_to_host()] == [new[i] if i % 2 == 0 else mem[i] for i in range(n)]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_atom_add_f16_contended(engine, opt):
    """64 threads add 1.0 to one f16 in turn: the final value is 64 and the old values are 0..63 (each once)."""
    body = ("mov.b16 %h1, 0x3C00; atom.global.add.noftz.f16 %h2, [%rd1], %h1; st.global.b16 [%rd7], %h2;")
    dev = rt.Device()
    dm, do = rt.to_device(np.zeros(1, np.uint16), dev), rt.to_device(np.zeros(64, np.uint16), dev)
    m = rt.load_module(ATOM_PTX.format(w=2, body=body), device=dev, engine=engine, opt_level=opt)
    m.get_function("k").launch((1, 1, 1), (64, 1, 1), [dm, dm, do])
    assert int(dm.copy_to_host()[0]) == _half_round(Fraction(64), "f16")
    assert sorted(int(x) for x in do.copy_to_host()) == [_half_round(Fraction(i), "f16") for i in range(64)]


# ----------------------------------------------------------------------------- vmad with negated operands
VSEL = {"": (0, 32), ".b0": (0, 8), ".b3": (24, 8), ".h0": (0, 16), ".h1": (16, 16)}


def vmad_ref(a, b, c, at_s, bt_s, negs, sels, mods) -> int:
    """PTX ISA 9.0 section 9.7.10.2's vmad pseudo-code, with Python integers for its 128-bit tmp."""
    def part(v, sel, signed):
        shift, w = VSEL[sel]
        x = v >> shift & ((1 << w) - 1)
        return x - (1 << w) if signed and x >> (w - 1) else x

    m128, m64 = (1 << 128) - 1, (1 << 64) - 1
    signed_final = at_s or bt_s or (negs[0] != negs[1]) or negs[2]
    tmp = part(a, sels[0], at_s) * part(b, sels[1], bt_s) & m128
    lsb = 0
    if ".po" in mods:
        lsb = 1
    elif negs[0] != negs[1]:
        tmp, lsb = ~tmp & m128, 1
    elif negs[2]:
        c, lsb = ~c & 0xFFFFFFFF, 1
    c128 = (c - (1 << 32) if c >> 31 else c) & m128 if signed_final else c
    tmp = (tmp + c128 + lsb) & m128
    result = (tmp >> (7 if ".shr7" in mods else 15 if ".shr15" in mods else 0)) & m64
    if ".sat" in mods:
        if signed_final:
            r = result - (1 << 64) if result >> 63 else result
            result = max(-(1 << 31), min((1 << 31) - 1, r))
        else:
            result = min(0xFFFFFFFF, result)
    return result & 0xFFFFFFFF


VMAD_ROWS = [(a, b, c) for a in (0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x12345678)
             for b in (0, 3, 0xFFFFFFFF, 0x80000000, 0xFFFF8001) for c in (0, 1, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF)]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("types", ["u32.u32.u32", "s32.s32.s32", "s32.u32.s32", "u32.u32.s32"])
@pytest.mark.parametrize("negs", [(True, False, False), (False, True, False), (False, False, True),
                                  (True, True, False), (True, True, True)])
@pytest.mark.parametrize("mods, sels", [("", ("", "")), (".sat", ("", "")), (".shr7", ("", "")),
                                        (".shr15.sat", (".h1", ".b0")), (".sat", (".b3", ".h0"))])
def test_vmad_negated_operands(engine, opt, types, negs, mods, sels):
    from test_isa_gaps import check

    _, at, bt = types.split(".")
    ops = [("-" if n else "") + r + s for n, r, s in zip(negs, ("%r2", "%r3", "%r4"), (*sels, ""))]
    body = f"vmad.{types}{mods} %r5, {', '.join(ops)}; cvt.u64.u32 %rd8, %r5;"
    want = [vmad_ref(a, b, c, at == "s32", bt == "s32", negs, sels, mods) for a, b, c in VMAD_ROWS]
    check(body, VMAD_ROWS, want, engine, opt)


def test_vmad_negating_the_product_and_c_is_refused():
    """ptxas: 'Operand negation limited to either (source A xor source B) or source C'; .po with negation."""
    for form in ("vmad.s32.s32.s32 %r1, -%r2, %r3, -%r4;", "vmad.u32.u32.u32.po %r1, -%r2, %r3, %r4;"):
        src = (".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<6>;\n\t"
               + form + "\n\tret;\n}\n")
        errors = check_sources([Source(src, "v.ptx")]).errors
        assert len(errors) == 1 and ("operand negation is limited" in str(errors[0])
                                     or "'-' negates" in str(errors[0])), errors
        assert errors[0].loc is not None and errors[0].loc.line == 7
