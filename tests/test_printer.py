"""Tests of the PTX printer: every PTX file we have round-trips through
``parse(print_module(parse(text)))`` to an equal tree, printing is idempotent, and each
operand, initialiser and declaration form prints as PTX that ptxas accepts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from xcc.diagnostics import PtxSyntaxError
from xcc.frontend import ast
from xcc.frontend.parser import parse
from xcc.frontend.printer import format_constant, format_instruction, format_operand, print_module

ROOT = Path(__file__).resolve().parent.parent
PTX_FILES = sorted((ROOT / "examples").glob("**/*.ptx")) + sorted((ROOT / "tests" / "data" / "frontend").glob("*.ptx"))
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# Every form the printer knows, in one module that ptxas 13 accepts.
ALL_FORMS = """\
.version 8.0
.target sm_90
.address_size 64
.file 1 "k.cu"
.file 2 "inc/h.h", 1700000000, 123

.global .attribute(.managed) .align 8 .u64 managed_x;
.const .u32 foo = 42;
.global .u32 parr[3] = {generic(foo), generic(foo)+4, foo+8};
.global .u8 bytes[3] = {0xff(foo), 0xff00(generic(foo)+4), 0xFF(1000 + 546)};
.global .f32 grid[2][2] = {{.5, 1.0}, {-0.5}};
.global .v2 .u32 vv[2] = {{1, 2}, {3, 4}};
.global .s32 e = (1 << 4) | 3 * 2 - -1;
.global .f64 dd = 0d400A000000000000;
.extern .func (.param .b32 r) ext(.param .b64 a);
.func (.reg .b32 out) old_style(.reg .b32 in)
{
	add.s32 out, in, 1;
	ret;
}
.func target_fn()
{
	ret;
}
.func alias_fn();
.alias alias_fn, target_fn;
.global .u64 fptr = target_fn;

.visible .entry k(.param .u64 .ptr .global .align 8 p0, .param .align 8 .b8 blob[16], .param .u32 n)
.maxntid 128, 1, 1
.minnctapersm 1
{
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<8>;
	.reg .v2 .b32 %v<2>;
	.shared .align 16 .b8 smem[256];
	.local .align 4 .b8 scratch[16];
	.loc 1 10 3
	ld.param.u64 %rd1, [p0];
	mov.u32 %r1, %tid.x;
	.loc 2 5 1
	mov.u32 %r2, %laneid;
	mov.f32 %f4, 1.5;
	add.f32 %f4, %f4, -2.5;
	mov.u32 %r3, (4*8);
	add.s32 %r4, %r3, (1<<4);
	add.s32 %r4, %r4, -12;
	setp.lt.s32 %p1|%p2, %r1, 0x20;
	@!%p1 bra $L__skip;
	ld.global.v2.f32 {%f1, _}, [%rd1+-8];
	st.shared.f32 [smem+4], %f1;
	ld.shared.f32 %f2, [smem];
	fma.rn.f32 %f3, %f1, 0f3F800000, 0fBF000000;
	selp.b32 %r5, 1, 0, !%p2;
	shfl.sync.bfly.b32 %r6|%p3, %r5, 1, 31, -1;
	ld.param.b32 %r7, [blob+8];
	ld.local.u32 %r8, [128];
	mov.b64 %rd2, {%r1, %r2};
$L__skip:
	{
		.reg .b32 %r<3>;
		.reg .pred p;
		setp.eq.s32 p, %r1, 0;
		@p mov.b32 %r1, 7;
	}
	{
		.param .b32 param0;
		.param .b32 retval0;
		st.param.b32 [param0], %r1;
		call.uni (retval0), old_style, (param0);
		ld.param.b32 %r9, [retval0];
	}
	{
		.param .b32 param0;
		.param .b32 retval0;
		prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
		mov.u64 %rd3, old_style;
		st.param.b32 [param0], %r1;
		call (retval0), %rd3, (param0), prototype_0;
	}
	call.uni target_fn, ();
	and.b32 %r10, %r1, 1;
	ts: .branchtargets L0, L1;
	brx.idx %r10, ts;
L0:
	ret;
L1:
	exit;
}
"""


def round_trip(text: str) -> tuple[ast.Module, str]:
    module = parse(text)
    printed = print_module(module)
    again = parse(printed)
    assert again == module
    assert print_module(again) == printed
    return module, printed


@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_file_round_trips(path):
    round_trip(path.read_text())


def test_all_forms_round_trip():
    module, printed = round_trip(ALL_FORMS)
    var = {v.name: v for v in module.variables}
    assert var["managed_x"].attributes == ["managed"]
    assert var["grid"].init[3] == ast.Imm(0, "float", 32)  # the short inner list is padded
    assert ".global .attribute(.managed) .align 8 .u64 managed_x;" in printed
    assert ".global .u32 parr[3] = {generic(foo), generic(foo)+4, foo+8};" in printed
    assert ".global .u8 bytes[3] = {0xFF(foo), 0xFF00(generic(foo)+4), 10};" in printed
    assert ".global .v2 .u32 vv[2] = {{1, 2}, {3, 4}};" in printed
    assert module.aliases == [ast.Alias("alias_fn", "target_fn")]
    assert printed.index(".func alias_fn(") < printed.index(".alias alias_fn, target_fn;")
    assert printed.index(".func target_fn(") < printed.index(".global .u64 fptr = target_fn;")
    for line in ("\tcall.uni (retval0), old_style, (param0);", "\tcall.uni target_fn, ();",
                 "\tcall (retval0), %rd3, (param0), prototype_0;",
                 "prototype_0: .callprototype (.param .b32 _) _ (.param .b32 _);",
                 "\tsetp.lt.s32 %p1|%p2, %r1, 32;", "\tshfl.sync.bfly.b32 %r6|%p3, %r5, 1, 31, -1;",
                 "ts: .branchtargets L0, L1;", "\t.loc 2 5 1", "\tmov.u32 %r3, 32;",
                 "\t.param .u64 .ptr .global .align 8 p0,", "\t.param .align 8 .b8 blob[16],",
                 ".func (.reg .b32 out) old_style(", "\t.maxntid 128, 1, 1"):
        assert line + "\n" in printed, line
    assert printed.count("\t.loc ") == 2


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_printed_module_assembles(tmp_path):
    path = tmp_path / "all_forms.ptx"
    path.write_text(print_module(parse(ALL_FORMS)))
    result = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "out.cubin")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def ins(text: str) -> ast.Instruction:
    body = HEADER + ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<3>;\n\t.reg .b64 %rd<2>;\n"
    module = parse(body + "\t" + text + "\n}\n")
    return module.functions[0].body[-1]


@pytest.mark.parametrize("text", [
    "mov.u32 %r1, %tid.x;", "mov.u32 %r1, %laneid;", "mov.u32 %r1, -7;", "mov.u32 %r1, 4294967295;",
    "mov.f32 %r1, 0f3F800000;", "mov.f64 %rd1, 0dBFF0000000000000;", "@!%p1 ret;", "@%p2 exit;",
    "ld.global.u32 %r1, [%rd1+-16];", "ld.global.u32 %r1, [%rd1+16];", "ld.local.u32 %r1, [128];",
    "ld.global.v2.u32 {%r1, _}, [%rd1];", "selp.b32 %r1, %r2, %r3, !%p1;", "setp.eq.s32 %p1|%p2, %r1, 0;",
    "tex.2d.v4.f32.s32 {%r0, %r1, %r2, %r3}, [%rd1, {%r1, %r2}];",
])
def test_operand_forms_print_as_written(text):
    assert format_instruction(ins(text)) == text


def test_operand_spellings():
    assert format_operand(ast.SpecialReg("ctaid", "y")) == "%ctaid.y"
    assert format_operand(ast.Imm(0x3F800000, "float", 32)) == "0f3F800000"
    assert format_operand(ast.Imm(1, "float", 64)) == "0d0000000000000001"
    assert format_operand(ast.Address(None, 0, elements=(ast.Vector((ast.Reg("%r1"),)), ast.Reg("%r2")))) \
        == "[{%r1}, %r2]"
    assert format_operand(ast.Negated(ast.Reg("p"))) == "!p"
    assert format_constant(ast.Address(ast.Symbol("g"), -8)) == "g-8"
    assert format_constant(ast.Address(ast.Symbol("g"), 4, mask=0xFF, generic=True)) == "0xFF(generic(g)+4)"


def test_parenthesised_constant_operands_fold():
    assert ins("add.s32 %r1, %r2, (1<<4);").operands[2] == ast.Imm(16)
    assert ins("mov.u32 %r1, ((2+3)*-4);").operands[1] == ast.Imm(-20)
    assert ins("mov.u32 %r1, (4);").operands[1] == ast.Imm(4)
    assert ins("mov.u32 %r1, (~0 & 0xFF);").operands[1] == ast.Imm(255)
    assert ins("mov.u32 %r1, (1 << 99);").operands[1] == ast.Imm(0)  # 64-bit arithmetic
    with pytest.raises(PtxSyntaxError):
        parse(HEADER + ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, (%r1*2);\n}\n")


def test_block_shadowing_and_plain_register_names_round_trip():
    module, printed = round_trip(HEADER + (
        ".visible .entry k()\n{\n\t.reg .b32 a, %r<3>;\n\tmov.b32 a, 1;\n"
        "\t{\n\t.reg .b32 a;\n\t{\n\t.reg .pred a;\n\tsetp.eq.s32 a, %r1, 0;\n\t}\n\tmov.b32 a, %r1;\n\t}\n"
        "L:\n\t{\nL:\n\tbra L;\n\t}\n\tret;\n}\n"))
    outer, inner = module.functions[0].body[0], module.functions[0].body[3].body[1].body[0]
    assert outer.names == ["a"] and inner.type == "pred"
    assert "\t\t{\n\t\t\t.reg .pred a;\n" in printed


def test_initialiser_shapes():
    module, printed = round_trip(HEADER + (
        ".global .u32 a[2][3] = {{1, 2}, {4, 5, 6}};\n"
        ".global .u32 b[] = {1, 2, 3};\n"
        ".global .u32 c[2][2] = {1, 2, 3};\n"
        ".global .v4 .f32 d = {1.0, 0f3F800000, -2.0, 0.0};\n"
        ".global .u32 s = {7};\n"
        ".global .b8 x[4] = {0x7F(513), ~1 & 3, 8 / 3, -7 % 3};\n"))
    var = {v.name: v for v in module.variables}
    assert [i.value for i in var["a"].init] == [1, 2, 0, 4, 5, 6]
    assert [i.value for i in var["c"].init] == [1, 2, 3]
    assert [i.value for i in var["x"].init] == [1, 2, 2, -1]
    assert ".global .u32 a[2][3] = {{1, 2, 0}, {4, 5, 6}};" in printed
    assert ".global .u32 c[2][2] = {1, 2, 3};" in printed
    assert ".global .u32 s = 7;" in printed


def test_module_directives_sections_and_pragmas():
    text = HEADER + (
        ".pragma \"nounroll\";\n"
        ".visible .entry k() .reqntid 32, 4 .pragma \"nounroll\";\n{\n\tret;\n}\n"
        ".section .debug_str\n{\n$L__info_string0:\n.b8 107\n.b8 0\n}\n")
    module, printed = round_trip(text)
    assert module.pragmas == [ast.Pragma("nounroll")]
    assert module.sections == [".section .debug_str\n{\n$L__info_string0:\n.b8 107\n.b8 0\n}"]
    assert module.functions[0].body[0] == ast.Pragma("nounroll")
    assert printed.endswith(".section .debug_str\n{\n$L__info_string0:\n.b8 107\n.b8 0\n}\n")


def test_equality_ignores_locations():
    a = parse(HEADER + ".visible .entry k()\n{\n\tret;\n}\n", "a.ptx")
    b = parse("\n\n" + HEADER + ".visible .entry k()\n{\n\n\n    ret;\n}\n", "b.ptx")
    assert a.functions[0].body[0].loc != b.functions[0].body[0].loc
    assert a == b
