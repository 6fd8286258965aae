"""Tests of the PTX frontend: grammar coverage on real nvcc/llc output, the AST it builds, and
the located diagnostics for bad input."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from xcc.diagnostics import PtxSemanticError, PtxSyntaxError
from xcc.frontend import ast
from xcc.frontend.parser import parse

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "frontend"
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str, params: str = "") -> str:
    """A module with one kernel ``k`` whose body is ``body`` (lines 5.. of the text)."""
    return f"{HEADER}.visible .entry k({params})\n{{\n{body}}}\n"


def load(name: str) -> ast.Module:
    path = DATA / name
    return parse(path.read_text(), str(path))


def instructions(body: list) -> list[ast.Instruction]:
    """All instructions of a body, nested blocks included, in text order."""
    out = []
    for st in body:
        if isinstance(st, ast.Block):
            out += instructions(st.body)
        elif isinstance(st, ast.Instruction):
            out.append(st)
    return out


def function(module: ast.Module, name: str) -> ast.Function:
    return next(f for f in module.functions if f.name == name and f.body is not None)


# --------------------------------------------------------------------------- whole files


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.ptx")), ids=lambda p: p.name)
def test_examples_parse(path):
    module = parse(path.read_text(), str(path))
    assert module.functions and all(f.body is not None for f in module.functions if f.is_entry)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.ptx")), ids=lambda p: p.name)
def test_test_data_parses(path):
    module = parse(path.read_text(), str(path))
    assert module.version and module.target and module.address_size == 64
    assert any(f.is_entry for f in module.functions)


def test_features_printf_call_asm_block_and_debug_locations():
    m = load("features.ptx")
    vprintf = m.functions[0]
    assert (vprintf.name, vprintf.linkage, vprintf.body) == ("vprintf", "extern", None)
    assert [p.name for p in vprintf.return_params] == ["func_retval0"]
    assert m.variables[0].name == "$str" and m.variables[0].dims == [27]
    assert m.files[1] == "features.cu"

    k = function(m, "_Z8features6ParamsPfPi")
    struct_param = k.params[0]
    assert (struct_param.type, struct_param.align, struct_param.dims) == ("b8", 8, [48])
    ins = instructions(k.body)
    calls = [i for i in ins if i.opcode == "call"]
    assert [c.modifiers for c in calls] == [("uni",), ("uni",)]
    ret, target, args = calls[1].operands
    assert ret == ast.Vector((ast.Symbol("retval0"),))
    assert target == ast.Symbol("vprintf")
    assert args == ast.Vector((ast.Symbol("param0"), ast.Symbol("param1")))
    # the inline-asm block declares a plain-named predicate; it must resolve to a register
    asm_block = next(s for s in k.body if isinstance(s, ast.Block) and isinstance(s.body[0], ast.RegDecl)
                     and s.body[0].names == ["p"])
    setp, selp = asm_block.body[1:]
    assert setp.operands[0] == ast.Reg("p") and selp.operands[3] == ast.Reg("p")
    shfl = next(i for i in ins if i.opcode == "shfl")
    assert shfl.modifiers == ("sync", "down", "b32")
    assert shfl.operands[0] == ast.Vector((ast.Reg("%r13"), ast.Reg("%p2")))
    assert shfl.debug_loc == (3, 440, 9)  # the .loc with "inlined_at" applies too
    assert {i.opcode for i in ins} >= {"atom", "ld", "cvta", "fma", "selp", "setp", "bra"}
    ldg = next(i for i in ins if i.modifiers[:2] == ("global", "nc"))
    assert ldg.operands[1] == ast.Address(ast.Reg("%rd7"))


def test_shared_initialisers_prototypes_and_directives():
    m = load("shared.ptx")
    var = {v.name: v for v in m.variables}
    assert var["coeffs"].space == "const" and var["coeffs"].init[2:4] == [ast.Imm(128), ast.Imm(63)]
    assert var["table_ptr"].init == [ast.Address(ast.Symbol("table"), 0, generic=True)]
    assert var["fns"].init == [ast.Symbol("_Z5twicef"), ast.Symbol("_Z6squaref")]
    tile = var["tile"]
    assert (tile.linkage, tile.space, tile.align, tile.dims, tile.init) == ("extern", "shared", 16, [None], None)

    stencil = function(m, "_Z7stencilPKfPfii")
    assert stencil.directives == {"maxntid": [256, 1, 1], "minnctapersm": [2]}
    proto = next(s for b in stencil.body if isinstance(b, ast.Block) for s in b.body
                 if isinstance(s, ast.Label))
    assert proto.name == "prototype_0" and proto.prototype is not None
    assert [p.type for p in proto.prototype.params] == ["b32"]
    call = next(i for i in instructions(stencil.body) if i.opcode == "call")
    assert call.operands[1] == ast.Reg("%rd13") and call.operands[3] == ast.Symbol("prototype_0")

    wmma = [i for i in instructions(function(m, "_Z9wmma_gemmPK6__halfS1_Pf").body) if i.opcode == "wmma"]
    assert [w.modifiers[0] for w in wmma] == ["load", "load", "mma", "store"]
    assert all(len(op.elements) == 8 for op in wmma[2].operands)


def test_debug_build_sections_and_targets():
    m = load("debug.ptx")
    assert m.target == ["sm_80", "debug"]
    assert m.files == {1: "debug.cu"}
    helper = function(m, "_Z6helperPii")
    assert helper.linkage == "visible" and not helper.is_entry
    labels = [s.name for s in helper.body if isinstance(s, ast.Label)]
    assert "$L__func_begin0" in labels and "$L__BB0_4" in labels


def test_math_float_literals():
    m = load("math.ptx")
    imms = [op for i in instructions(function(m, "_Z5dmathPKdPdi").body) for op in i.operands
            if isinstance(op, ast.Imm) and op.kind == "float"]
    assert ast.Imm(0x4086232B, "float", 32) in imms
    assert ast.Imm(0, "float", 64) in imms


def test_llvm_style_output():
    m = load("llvm_style.ptx")
    var = {v.name: v for v in m.variables}
    assert var["p"].init == [ast.Address(ast.Symbol("g"), 8)]
    assert var["q"].init == [ast.Address(ast.Symbol("g"), 0, generic=True)]
    assert var["w"].linkage == "weak"
    assert var["dd"].init == [ast.Imm(0x400A000000000000, "float", 64)]
    kern = function(m, "kern")
    st = [i for i in instructions(kern.body) if i.opcode == "st" and i.modifiers == ("global", "f32")]
    assert st[0].operands[0] == ast.Address(ast.Reg("%rd12"), -12)
    helper = function(m, "helper")
    asm = next(s for s in helper.body if isinstance(s, ast.Block))
    assert [s.name for s in asm.body if isinstance(s, ast.Label)] == ["LBL", "DONE"]
    bra = [i for i in asm.body if isinstance(i, ast.Instruction) and i.opcode == "bra"][0]
    assert bra.guard == ast.Guard(ast.Reg("p")) and bra.operands == [ast.Symbol("LBL")]


def test_modern_sm90_features():
    m = load("modern.ptx")
    k = function(m, "modern_kernel")
    assert k.directives == {"maxntid": [128, 1, 1], "minnctapersm": [1], "reqnctapercluster": [2, 1, 1]}
    p0 = k.params[0]
    assert (p0.type, p0.ptr_space, p0.ptr_align, p0.align) == ("u64", "global", 16, None)
    assert function(m, "abort_now").directives == {"noreturn": []}
    ins = instructions(k.body)
    by_op = {}
    for i in ins:
        by_op.setdefault(i.opcode, []).append(i)
    assert by_op["elect"][0].operands == [ast.Vector((ast.Reg("%r13"), ast.Reg("%p2"))), ast.Imm(-1)]
    assert by_op["mbarrier"][0].modifiers == ("init", "shared::cta", "b64")
    assert by_op["mbarrier"][2].operands[0] == ast.Reg("P1")  # plain name declared in the inner block
    assert by_op["selp"][0].operands[3] == ast.Negated(ast.Reg("%p4"))
    assert by_op["setp"][1].operands[0] == ast.Vector((ast.Reg("%p4"), ast.Reg("%p5")))
    assert by_op["ld"][1].modifiers == ("param", "v2", "u32")
    assert by_op["ld"][1].operands[1] == ast.Address(ast.Symbol("modern_kernel_param_1"), 8)
    tma_load, tma_store = (i for i in by_op["cp"] if i.modifiers[:3] == ("async", "bulk", "tensor"))
    coords = ast.Vector((ast.Reg("%r1"), ast.Reg("%r2")))
    assert tma_load.operands == [ast.Address(ast.Reg("%r11")), ast.Address(ast.Reg("%rd1"), elements=(coords,)),
                                 ast.Address(ast.Reg("%r12"))]
    assert tma_store.operands[0] == ast.Address(ast.Reg("%rd1"), elements=(coords,))
    cp = next(i for i in by_op["cp"] if i.modifiers == ("async", "ca", "shared", "global"))
    assert cp.operands[:2] == [ast.Address(ast.Reg("%r11"), 16), ast.Address(ast.Reg("%rd1"), -32)]
    assert by_op["mbarrier"][3].operands[0] == ast.Sink()
    wait = next(i for i in by_op["bra"] if i.guard and i.guard.reg.name == "complete")
    assert wait.guard.negated and wait.operands == [ast.Symbol("waitLoop")]
    specials = {op.name: op.component for i in by_op["mov"] for op in i.operands if isinstance(op, ast.SpecialReg)}
    assert specials == {"tid": "x", "ctaid": "x", "nctaid": "y", "laneid": None, "warpid": None,
                        "clock64": None, "lanemask_lt": None, "cluster_ctarank": None}
    assert m.variables[2].init == [ast.Address(ast.Symbol("lut"), 8, generic=True)]


# --------------------------------------------------------------------------- AST in detail


SMALL = kernel(
    "\t.reg .pred %p<3>;\n"                                    # 6
    "\t.reg .b32 %r<8>;\n"                                     # 7
    "\t.reg .f32 %f<4>;\n"                                     # 8
    "\t.reg .b64 %rd<4>;\n"                                    # 9
    "\tld.param.u64 %rd1, [k_param_0];\n"                      # 10
    "\tmov.u32 %r1, %tid.x;\n"                                 # 11
    "\tsetp.ge.u32 %p1, %r1, 0x100;\n"                         # 12
    "@%p1 bra $L__done;\n"                                     # 13
    "\tld.global.v2.f32 {%f1, _}, [%rd1+-8];\n"                # 14
    "\t@!%p1 fma.rn.f32 %f2, %f1, 0f3F800000, -2.5;\n"         # 15
    "$L__done:\n"                                              # 16
    "\tret;\n",                                                # 17
    params=".param .u64 .ptr .global .align 8 k_param_0",
)


def test_small_kernel_ast():
    m = parse(SMALL, "small.ptx")
    assert (m.version, m.target, m.address_size, m.filename) == ("8.0", ["sm_80"], 64, "small.ptx")
    (k,) = m.functions
    assert (k.name, k.is_entry, k.linkage) == ("k", True, "visible")
    assert k.params == [ast.Param("k_param_0", "u64", "param", None, [], "global", ptr_align=8)]
    decls = k.body[:4]
    assert [(d.type, d.names, d.count) for d in decls] == [
        ("pred", ["%p"], 3), ("b32", ["%r"], 8), ("f32", ["%f"], 4), ("b64", ["%rd"], 4)]
    ld, mov, setp, bra, ldv, fma = k.body[4:10]
    label, ret = k.body[10:]

    assert (ld.opcode, ld.modifiers) == ("ld", ("param", "u64"))
    assert ld.operands == [ast.Reg("%rd1"), ast.Address(ast.Symbol("k_param_0"), 0)]
    assert mov.operands == [ast.Reg("%r1"), ast.SpecialReg("tid", "x")]
    assert (setp.opcode, setp.modifiers) == ("setp", ("ge", "u32"))
    assert setp.operands[2] == ast.Imm(256)
    assert bra.guard == ast.Guard(ast.Reg("%p1"), negated=False)
    assert bra.operands == [ast.Symbol("$L__done")]
    assert ldv.operands == [ast.Vector((ast.Reg("%f1"), ast.Sink())), ast.Address(ast.Reg("%rd1"), -8)]
    assert fma.guard == ast.Guard(ast.Reg("%p1"), negated=True)
    assert fma.operands[2] == ast.Imm(0x3F800000, "float", 32)
    assert fma.operands[3] == ast.Imm(struct.unpack("<Q", struct.pack("<d", -2.5))[0], "float", 64)
    assert label == ast.Label("$L__done", label.loc) and ret.opcode == "ret" and ret.operands == []

    # locations: 1-based line and column of the opcode / operand, with the source line
    assert (ld.loc.file, ld.loc.line, ld.loc.col) == ("small.ptx", 10, 2)
    assert ld.loc.source_line == "\tld.param.u64 %rd1, [k_param_0];"
    assert (bra.loc.line, bra.loc.col) == (13, 6)
    assert (bra.guard.reg.loc.line, bra.guard.reg.loc.col) == (13, 2)
    assert (ldv.operands[1].loc.line, ldv.operands[1].loc.col) == (14, 29)
    assert (label.loc.line, label.loc.col) == (16, 1)
    assert (fma.operands[2].loc.line, fma.operands[2].loc.col) == (15, 29)


def test_integer_literal_forms():
    m = parse(kernel("\t.reg .b32 %r<2>;\n\tmov.b32 %r1, 0x1F;\n\tmov.b32 %r1, 017;\n\tmov.b32 %r1, 0b101;\n"
                     "\tmov.b32 %r1, 4294967295U;\n\tmov.b32 %r1, -12;\n\tmov.b32 %r1, 0;\n"))
    values = [i.operands[1].value for i in instructions(m.functions[0].body)]
    assert values == [31, 15, 5, 4294967295, -12, 0]


def test_float_literal_bits():
    m = parse(kernel("\t.reg .f32 %f<2>;\n\t.reg .f64 %fd<2>;\n"
                     "\tmov.f32 %f1, 0f3F800000;\n\tmov.f32 %f1, 0fBF800000;\n\tmov.f32 %f1, 0f7FC00000;\n"
                     "\tmov.f64 %fd1, 0d400921FB54442D18;\n\tmov.f64 %fd1, 1.5;\n\tmov.f64 %fd1, 2e3;\n"))
    imms = [i.operands[1] for i in instructions(m.functions[0].body)]
    assert [(i.value, i.bits) for i in imms[:4]] == [
        (0x3F800000, 32), (0xBF800000, 32), (0x7FC00000, 32), (0x400921FB54442D18, 64)]
    assert struct.unpack("<d", struct.pack("<Q", imms[4].value))[0] == 1.5 and imms[4].bits == 64
    assert struct.unpack("<d", struct.pack("<Q", imms[5].value))[0] == 2000.0
    assert all(i.kind == "float" for i in imms)


def test_address_forms():
    m = parse(f"{HEADER}.global .align 4 .b8 buf[64];\n" + kernel(
        "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
        "\tld.global.u32 %r1, [%rd1+-16];\n\tld.global.u32 %r1, [%rd1+0x10];\n"
        "\tld.global.u32 %r1, [buf];\n\tld.global.u32 %r1, [buf+-4];\n\tld.local.u32 %r1, [128];\n")[len(HEADER):])
    addrs = [i.operands[1] for i in instructions(m.functions[0].body)]
    assert addrs == [ast.Address(ast.Reg("%rd1"), -16),
                     ast.Address(ast.Reg("%rd1"), 16), ast.Address(ast.Symbol("buf"), 0),
                     ast.Address(ast.Symbol("buf"), -4), ast.Address(None, 128)]


@pytest.mark.parametrize("address", ["[%rd1 - 4]", "[buf-4]"])
def test_a_minus_in_an_address_is_refused_as_ptxas_does(address):
    """ptxas 13.0 stops at '-' in an address ("Parsing error near '-'"); a negative offset is written '+-4'."""
    text = f"{HEADER}.global .align 4 .b8 buf[64];\n" + kernel(
        f"\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.global.u32 %r1, {address};\n")[len(HEADER):]
    with pytest.raises(PtxSyntaxError, match=r"a negative one '\[(%rd1|buf)\+-4\]'") as e:
        parse(text)
    assert e.value.loc is not None and e.value.loc.line == text.splitlines().index(
        f"\tld.global.u32 %r1, {address};") + 1


def test_vector_register_declarations_and_ranges():
    m = parse(kernel("\t.reg .v4 .f32 %v<2>;\n\t.reg .b32 a, b, %r<3>;\n\t.reg .pred p;\n"
                     "\tmov.b32 a, b;\n\tsetp.eq.s32 p, a, %r2;\n\t@!p mov.v4.f32 %v1, {0f00000000, 0f00000000, 0f00000000, 0f00000000};\n"))
    body = m.functions[0].body
    assert (body[0].vector, body[0].type, body[0].count) == (4, "f32", 2)
    assert body[1].names == ["a", "b"] and body[2].names == ["%r"] and body[2].count == 3
    mov, setp, movv = instructions(body)
    assert mov.operands == [ast.Reg("a"), ast.Reg("b")]
    assert setp.operands == [ast.Reg("p"), ast.Reg("a"), ast.Reg("%r2")]
    assert movv.guard == ast.Guard(ast.Reg("p"), True) and len(movv.operands[1].elements) == 4


def test_initialisers_and_constant_expressions():
    m = parse(HEADER + (
        ".const .u32 foo = 42;\n"
        ".global .u32 parr[] = {generic(foo), generic(foo)+4, foo+8};\n"
        ".global .u8 bytes[] = {0xff(foo), 0xff00(generic(foo)+4), 0xFF(1000 + 546)};\n"
        ".global .f32 grid[][2] = {{.5, 1.0}, {-0.5, 0f3F800000}};\n"
        ".global .s32 e = (1 << 4) | 3 * 2 - -1;\n"
        ".visible .global .attribute(.managed) .align 8 .u64 managed;\n"))
    v = {x.name: x for x in m.variables}
    assert v["foo"].init == [ast.Imm(42)] and v["foo"].space == "const"
    assert v["parr"].dims == [None]
    assert v["parr"].init == [ast.Address(ast.Symbol("foo"), 0, generic=True),
                              ast.Address(ast.Symbol("foo"), 4, generic=True), ast.Address(ast.Symbol("foo"), 8)]
    assert v["bytes"].init == [ast.Address(ast.Symbol("foo"), 0, mask=0xFF),
                               ast.Address(ast.Symbol("foo"), 4, mask=0xFF00, generic=True), ast.Imm(0x0A)]
    assert v["grid"].dims == [None, 2] and len(v["grid"].init) == 4
    assert v["grid"].init[3] == ast.Imm(0x3F800000, "float", 32)
    assert struct.unpack("<d", struct.pack("<Q", v["grid"].init[2].value))[0] == -0.5
    assert v["e"].init == [ast.Imm(23)]
    assert (v["managed"].linkage, v["managed"].align, v["managed"].init) == ("visible", 8, None)


def test_functions_declarations_and_header_directives():
    m = parse(HEADER + (
        ".extern .func (.param .b32 r) ext(.param .b64 a);\n"
        ".weak .func (.reg .b32 out) old_style(.reg .b32 in)\n{\n\tadd.s32 out, in, 1;\n\tret;\n}\n"
        ".visible .entry e(.param .align 8 .b8 blob[368]) .reqntid 32, 4 .maxnreg 64 .pragma \"nounroll\";\n"
        "{\n\t.loc 1 3 7\n\tret;\n}\n"
        ".file 1 \"src/k.cu\", 1700000000, 1234\n"))
    ext, old, e = m.functions
    assert ext.body is None and ext.linkage == "extern" and ext.return_params[0].name == "r"
    assert old.params[0].space == "reg" and old.body[0].operands == [ast.Reg("out"), ast.Reg("in"), ast.Imm(1)]
    assert e.params[0].dims == [368] and e.params[0].align == 8
    assert e.directives == {"reqntid": [32, 4], "maxnreg": [64]}
    assert e.body[0] == ast.Pragma("nounroll", e.body[0].loc)
    assert e.body[1].debug_loc == (1, 3, 7) and m.files == {1: "src/k.cu"}


def test_scoping_of_blocks_and_labels():
    src = kernel("\t.reg .b32 %r<2>;\n\t{\n\t.reg .b32 t;\n\tL: mov.b32 t, %r1;\n\t@%p bra L;\n\t}\n"
                 "\t{\n\t.reg .b32 t;\n\tL: mov.b32 t, %r0;\n\t}\n\tret;\n").replace("@%p ", "")
    parse(src)  # the same label and register name in sibling blocks is fine
    with pytest.raises(PtxSemanticError, match="use of undeclared name 't'"):
        parse(kernel("\t.reg .b32 %r<2>;\n\t{\n\t.reg .b32 t;\n\t}\n\tmov.b32 %r1, t;\n"))
    with pytest.raises(PtxSemanticError, match="branch to undefined label 'L'"):
        parse(kernel("\t{\n\tL: ret;\n\t}\n\tbra L;\n"))
    with pytest.raises(PtxSemanticError, match="duplicate label 'L'"):
        parse(kernel("L:\n\tret;\nL:\n\tret;\n"))


# --------------------------------------------------------------------------- diagnostics


def error(exc_type, text: str, filename: str = "bad.ptx"):
    with pytest.raises(exc_type) as info:
        parse(text, filename)
    return info.value


def test_unknown_opcode():
    e = error(PtxSemanticError, kernel("\t.reg .b32 %r<4>;\n\tad.s32 %r1, %r2, %r3;\n\tret;\n"))
    assert e.message.startswith("unknown opcode 'ad'") and "did you mean 'add'" in e.message
    assert (e.loc.file, e.loc.line, e.loc.col) == ("bad.ptx", 7, 2)
    assert str(e).splitlines() == [
        "bad.ptx:7:2: error: unknown opcode 'ad' (did you mean 'add'?)",
        " ad.s32 %r1, %r2, %r3;",
        " ^",
    ]


def test_undeclared_register():
    e = error(PtxSemanticError, kernel("\t.reg .b32 %r<10>;\n\tadd.s32 %r1, %r9, %r10;\n"))
    assert e.message == "use of undeclared register '%r10'"
    assert (e.loc.line, e.loc.col) == (7, 20)
    e = error(PtxSemanticError, kernel("\t.reg .pred %p<2>;\n\t@%q bra L;\nL:\n\tret;\n"))
    assert e.message == "use of undeclared register '%q'" and (e.loc.line, e.loc.col) == (7, 3)


def test_truncated_file():
    text = kernel("\t.reg .b32 %r<4>;\n\tadd.s32 %r1, %r2, %r3;\n")[: -len("}\n")]
    e = error(PtxSyntaxError, text)
    assert e.message.startswith("unexpected end of file, expected '}'")
    assert "the '{' on line 5 is never closed" in e.message
    assert (e.loc.line, e.loc.col) == (7, 24)
    e = error(PtxSyntaxError, HEADER + ".visible .entry k(\n")
    assert "end of file" in e.message and e.loc.line == 4


def test_bad_operand():
    e = error(PtxSyntaxError, kernel("\t.reg .b32 %r<4>;\n\tadd.s32 %r1, , %r3;\n"))
    assert e.message == "unexpected token ',', expected an operand"
    assert (e.loc.line, e.loc.col) == (7, 15)
    assert str(e).endswith("\n add.s32 %r1, , %r3;\n              ^")
    e = error(PtxSyntaxError, kernel("\t.reg .b32 %r<4>;\n\tadd.s32 %r1, %r2, #3;\n"))
    assert e.message.startswith("unexpected character '#'") and e.loc.col == 20


def test_missing_semicolon_points_at_previous_line():
    e = error(PtxSyntaxError, kernel("\t.reg .b32 %r<4>;\n\tadd.s32 %r1, %r2, %r3 // oops\n\tret;\n"))
    assert e.message.startswith("expected ';' at end of line")
    assert (e.loc.line, e.loc.col) == (7, 23)


def test_undefined_label():
    e = error(PtxSemanticError, kernel("\t.reg .pred %p<2>;\n\t@%p1 bra $L__nowhere;\n\tret;\n"))
    assert e.message == "branch to undefined label '$L__nowhere'"
    assert (e.loc.line, e.loc.col) == (7, 11)


def test_other_semantic_errors():
    e = error(PtxSemanticError, kernel("\tcall.uni missing, ();\n"))
    assert e.message == "call to undeclared function 'missing'"
    e = error(PtxSemanticError, kernel("\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, nosuch;\n"))
    assert e.message == "use of undeclared name 'nosuch'" and e.loc.col == 16
    e = error(PtxSemanticError, kernel("\t.reg .b32 x;\n\t.reg .b32 x;\n"))
    assert e.message == "redeclaration of register 'x'"


def test_bracketed_operand_lists():
    m = parse(f"{HEADER}.global .texref t;\n" + kernel(
        "\t.reg .f32 %f<5>;\n\t.reg .b32 %r<3>;\n"
        "\ttex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [t, {%r1, %r2}];\n")[len(HEADER):])
    (tex,) = instructions(m.functions[0].body)
    assert tex.operands[1] == ast.Address(ast.Symbol("t"), elements=(ast.Vector((ast.Reg("%r1"), ast.Reg("%r2"))),))
    e = error(PtxSemanticError, kernel("\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
                                       "\tcp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r9}], [%r1];\n"))
    assert e.message == "use of undeclared register '%r9'"


def test_jump_tables_parse_and_build():
    from xcc.ir.build import build_module

    m = parse(kernel("\t.reg .b32 %r<2>;\nts: .branchtargets A, B;\n\tbrx.idx %r1, ts;\nA:\nB:\n\tret;\n"))
    table = m.functions[0].body[1]
    assert table == ast.Label("ts", targets=["A", "B"])
    ops = [i.op for b in build_module(m).functions[0].blocks for i in b.instructions]
    assert ops.count("setp") == 1 and "cbr" in ops  # brx.idx: a compare-and-branch chain (tests/test_isa_gaps_more)


def test_bad_directive_and_header():
    e = error(PtxSyntaxError, kernel("\t.reg .b33 %r<4>;\n"))
    assert e.message.startswith("unexpected text '.b33'") and (e.loc.line, e.loc.col) == (6, 7)
    e = error(PtxSyntaxError, ".version 8.0\n.target sm_80\n.address_size\n")
    assert "expected an integer" in e.message


def test_parameter_without_a_type():
    e = error(PtxSyntaxError, HEADER + ".visible .entry k(.param p)\n{\nret;\n}\n")
    assert e.message == "parameter 'p' needs a type such as .u64" and e.loc.line == 4


# --------------------------------------------------------------------------- size


def big_kernel(iterations: int) -> str:
    """A CUTLASS-like unrolled main loop, 12 lines per iteration."""
    lines = [HEADER + ".visible .entry gemm(.param .u64 a, .param .u64 b)", ".maxntid 128, 1, 1", "{",
             "\t.reg .pred %p<4>;", "\t.reg .b32 %r<4000>;", "\t.reg .f32 %f<4000>;", "\t.reg .b64 %rd<4>;",
             "\t.shared .align 16 .b8 smem[16384];", "\tld.param.u64 %rd1, [a];", "\tld.param.u64 %rd2, [b];",
             "\tmov.u32 %r1, smem;"]
    for i in range(iterations):
        r = 8 + (i * 8) % 3900
        regs = f"%r{r}, %r{r + 1}, %r{r + 2}, %r{r + 3}"
        acc = f"%f{r}, %f{r + 1}, %f{r + 2}, %f{r + 3}"
        lines += [
            f"$L__BB0_{i}:",
            f"\tcp.async.cg.shared.global [%r1+{i * 16 % 16000}], [%rd1+{i * 16}], 16;",
            f"\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{regs}}}, [%r1+{i * 64 % 16000}];",
            f"\tld.shared.v2.b32 {{%r{r + 4}, %r{r + 5}}}, [%r1+-{i * 32 % 16000}];",
            f"\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{{acc}}}, {{{regs}}}, "
            f"{{%r{r + 4}, %r{r + 5}}}, {{{acc}}};",
            f"\tfma.rn.f32 %f{r + 4}, %f{r}, 0f3F800000, %f{r + 1};",
            f"\tsetp.lt.s32 %p1, %r{r}, {i};",
            f"\t@%p1 add.s32 %r{r + 6}, %r{r + 5}, -{i};",
            f"\tshfl.sync.bfly.b32 %r{r + 7}|%p2, %r{r + 6}, 1, 31, -1;",
            "\tcp.async.commit_group;",
            "\tcp.async.wait_group 1;",
            f"\t@!%p2 bra.uni $L__BB0_{i + 1};",
        ]
    lines += [f"$L__BB0_{iterations}:", "\tst.global.f32 [%rd2+-4], %f9;", "\tret;", "}", ""]
    return "\n".join(lines)


def test_a_5000_line_unrolled_kernel_parses():
    """Size, not speed: throughput is measured in bench/run.py, never asserted in a test."""
    text = big_kernel(420)
    assert text.count("\n") >= 5000
    module = parse(text, "big.ptx")
    assert len(instructions(module.functions[0].body)) > 4500
