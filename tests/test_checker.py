"""The semantic checker agrees with ptxas on what is valid PTX.

``tests/data/checker/cases.txt`` lists single instructions with ptxas 13.0's verdict; each is
checked inside the same small kernel. When ptxas is on PATH the verdicts are re-asked from it,
so the table cannot drift from the reference tool.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from xcc.diagnostics import PtxSemanticError, XccError
from xcc.frontend.parser import parse

CASES_FILE = Path(__file__).parent / "data" / "checker" / "cases.txt"
KERNEL = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 k_param_0){{
.reg .pred %p<3>; .reg .b32 %r<5>; .reg .u32 %u<3>; .reg .f32 %f<5>; .reg .b64 %rd<3>; .reg .f64 %fd<3>; .reg .b16 %rs<3>;
L0:
{body}
ret;
}}
"""


def _cases() -> list[tuple[str, str]]:
    out = []
    for line in CASES_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            verdict, body = (s.strip() for s in line.split("|", 1))
            out.append((verdict, body))
    return out


CASES = _cases()


def kernel(body: str, version: str = "8.0", target: str = "sm_80") -> str:
    return KERNEL.format(version=version, target=target, body=body)


def verdict(text: str) -> str:
    try:
        parse(text, "case.ptx")
    except PtxSemanticError:
        return "error"
    return "ok"


@pytest.mark.parametrize(("expected", "body"), CASES, ids=[b for _, b in CASES])
def test_checker_agrees_with_ptxas_verdict(expected, body):
    assert verdict(kernel(body)) == expected


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not on PATH")
def test_recorded_verdicts_are_ptxas_verdicts(tmp_path):
    wrong = []
    for expected, body in CASES:
        src = tmp_path / "case.ptx"
        src.write_text(kernel(body))
        ok = subprocess.run(["ptxas", "-arch=sm_80", str(src), "-o", "/dev/null"], capture_output=True).returncode == 0
        if ("ok" if ok else "error") != expected:
            wrong.append(body)
    assert wrong == []


def test_error_points_at_the_operand():
    with pytest.raises(PtxSemanticError) as e:
        parse(kernel("add.u32 %r1, %rd1, %r1;"), "case.ptx")
    assert (e.value.loc.line, e.value.loc.col) == (7, 14)
    assert "'%rd1' is .b64" in e.value.message


def test_error_points_at_the_modifier():
    with pytest.raises(PtxSemanticError) as e:
        parse(kernel("add.bogus.s32 %r1, %r1, %r1;"), "case.ptx")
    assert (e.value.loc.line, e.value.loc.col) == (7, 4)
    assert e.value.message == "'.bogus' is not a modifier of 'add'"


def test_every_error_is_reported_in_source_order():
    body = "add.s32 %r1, %f1, %r1;\nmov.u32 %r1, %rd1;\nfoo.b32 %r1;\nmov.u32 %r9, 1;"
    with pytest.raises(PtxSemanticError) as e:
        parse(kernel(body), "case.ptx")
    lines = [err.loc.line for err in e.value.errors]
    assert lines == [7, 8, 9, 10]
    text = str(e.value)
    assert "unknown opcode 'foo'" in text and "undeclared register '%r9'" in text
    assert text.endswith("4 errors generated.")


@pytest.mark.parametrize(("body", "target", "version", "message"), [
    ("redux.sync.add.s32 %r1, %r2, -1;", "sm_75", "8.0", "'redux' needs .target sm_80 or later"),
    ("redux.sync.add.s32 %r1, %r2, -1;", "sm_80", "6.5", "target sm_80 needs PTX ISA 7.0"),
    ("activemask.b32 %r1;", "sm_80", "8.0", None),
    ("griddepcontrol.wait;", "sm_80", "8.0", "'griddepcontrol' needs .target sm_90 or later"),
    ("griddepcontrol.wait;", "sm_90", "8.0", None),
    ("setmaxnreg.inc.sync.aligned.u32 64;", "sm_90", "8.0", "'setmaxnreg' needs .target sm_90a"),
    ("setmaxnreg.inc.sync.aligned.u32 64;", "sm_90a", "8.0", None),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%rd1];", "sm_70", "8.0",
     "'ldmatrix' needs .target sm_75 or later"),
    ("cp.async.ca.shared.global [%rd1], [%rd2], 4;", "sm_75", "8.0", "'cp.async' needs .target sm_80"),
    ("fma.rn.bf16 %rs1, %rs1, %rs2, %rs2;", "sm_75", "8.0", "'fma.bf16' needs .target sm_80"),
])
def test_target_and_version_requirements(body, target, version, message):
    text = kernel(body, version=version, target=target)
    if message is None:
        parse(text, "case.ptx")
        return
    with pytest.raises(PtxSemanticError) as e:
        parse(text, "case.ptx")
    assert message in str(e.value)


@pytest.mark.parametrize(("header", "message"), [
    (".version 9.9\n.target sm_80", "PTX ISA version 9.9 is newer than this xcc reads"),
    (".version 8.0\n.target sm_79", "unknown target architecture 'sm_79'"),
    (".version 8.0\n.target sm_80, sm_90", "names two architectures"),
    (".version 8.0\n.target texmode_unified", "names no architecture"),
    (".version 7.0\n.target sm_90", "target sm_90 needs PTX ISA 7.8 or later"),
    (".target sm_80", "missing '.version' directive"),
])
def test_module_header(header, message):
    text = f"{header}\n.address_size 64\n.visible .entry k() {{ ret; }}\n"
    with pytest.raises(XccError) as e:
        parse(text, "case.ptx")
    assert message in str(e.value)


def test_block_scopes_shadow_and_type_check_the_inner_declaration():
    body = "{ .reg .f32 %r<5>; add.f32 %r1, %r2, %r3; }\nadd.s32 %r1, %r2, %r3;"
    parse(kernel(body), "case.ptx")
    with pytest.raises(PtxSemanticError, match="'%r1' is .f32"):
        parse(kernel("{ .reg .f32 %r<5>; add.s32 %r1, %r2, %r3; }"), "case.ptx")
