"""`xcc check` = "will compile" (issue 19): check runs every refusal `xcc compile` would (the IR's lowering, the
passes, the backend's instruction selection and limits), with the same located message and exit status 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus import ALL_PTX, corpus_id

from xcc.check import check_sources
from xcc.cli import main
from xcc.sources import read_source

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
GOOD = HEADER + """
.visible .entry good(.param .u64 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
# a backend refusal that no instruction support changes: more .global variables than constant bank 0 has slots
TOO_MANY_GLOBALS = HEADER + "".join(f".global .align 4 .u32 g{k};\n" for k in range(48)) + """
.visible .entry many(.param .u64 p)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 0;
""" + "".join(f"  ld.global.u32 %r2, [g{k}];\n  add.s32 %r1, %r1, %r2;\n" for k in range(48)) + """
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
MBARRIER = HEADER + """
.visible .entry hopper(.param .u64 p)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .shared .align 8 .b64 bar;
  .shared .align 128 .b8 buf[256];
  mov.u64 %rd1, bar;
  mbarrier.init.shared.b64 [%rd1], 32;
  ld.param.u64 %rd2, [p];
  mov.u32 %r1, 0;
  cp.async.bulk.tensor.2d.global.shared::cta.im2col_no_offs.bulk_group [%rd2, {%r1, %r1}], [buf];  // im2col needs 3d+
  ret;
}
"""


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if DIAG.match(line)]


def _both(capsys, tmp_path, path: Path) -> tuple[tuple[int, list[str]], tuple[int, list[str]]]:
    rc_c, _, err_c = run(capsys, "compile", path, "-o", tmp_path / "out.xbin")
    rc_k, out_k, err_k = run(capsys, "check", path)
    assert out_k == ""
    return (rc_c, errors(err_c)), (rc_k, errors(err_k))


@pytest.mark.parametrize("name", ["good", "too_many_globals", "mbarrier"])
def test_check_says_what_compile_says(capsys, tmp_path, name):
    src = tmp_path / f"{name}.ptx"
    src.write_text({"good": GOOD, "too_many_globals": TOO_MANY_GLOBALS, "mbarrier": MBARRIER}[name])
    compiled, checked = _both(capsys, tmp_path, src)
    assert compiled == checked
    if name == "too_many_globals":  # the backend's own refusal, stable whatever instructions come
        assert checked[0] == 1 and len(checked[1]) == 1 and str(src) in checked[1][0]


def test_an_unsupported_instruction_fails_check_with_compiles_message(capsys, tmp_path):
    """A form the IR builds and the backend refuses: whichever it is today, check gives compile's located message."""
    src = tmp_path / "cvta_const.ptx"
    text = (EXAMPLES / "globals_misc.sm_80.debug.ptx").read_text()
    src.write_text(text)
    compiled, checked = _both(capsys, tmp_path, src)
    assert compiled == checked
    if compiled[0]:
        assert re.search(r":\d+:\d+: error: .*not supported", checked[1][0])


def test_check_reports_every_failing_kernel_and_passes_the_rest(tmp_path):
    body = MBARRIER.split(HEADER, 1)[1]
    text = HEADER + body + body.replace("hopper", "hopper2") + GOOD.split(HEADER, 1)[1]
    src = tmp_path / "mixed.ptx"
    src.write_text(text)
    res = check_sources([read_source(src)])
    lines = [k for k, line in enumerate(text.splitlines(), 1) if "cp.async.bulk.tensor" in line]
    assert [e.loc.line for e in res.errors] == lines and len(lines) == 2
    assert res.kernels == ["good"]


def test_rdc_code_checks_with_externs_left_for_the_link(capsys):
    rc, out, err = run(capsys, "check", "-v", EXAMPLES / "rdc_main.sm_80.ptx", EXAMPLES / "rdc_lib.sm_80.ptx")
    assert (rc, err) == (0, "")
    assert "left for the link: rdc_apply" in out


def test_syntax_only_check_accepts_what_compile_refuses(capsys):
    path = EXAMPLES / "globals_misc.sm_80.debug.ptx"
    assert run(capsys, "check", "--syntax-only", path)[0] == 0


@pytest.mark.parametrize("name", ["struct_params.sm_90.ptx", "saxpy.sm_80.ptx", "fnptr_struct.sm_80.ptx"])
def test_examples_that_compile_check_ok(capsys, name):
    assert run(capsys, "check", EXAMPLES / name) == (0, "", "")


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL_PTX, ids=corpus_id)
def test_every_example_checks_as_it_compiles(capsys, tmp_path, path):
    compiled, checked = _both(capsys, tmp_path, path)
    if compiled[0] and any("unresolved extern function" in e for e in compiled[1]):
        assert checked == (0, [])  # -rdc code alone: its externs come at the link
    else:
        assert compiled == checked
