"""Pipelines you can write and see: pipeline strings, --passes, --list-passes, --print-after and --verify-ir over
the IR passes and the backend stages, --time-passes / -ftime-report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xcc.backend.objfile import ObjectFile
from xcc.backend.stages import BACKEND_STAGES
from xcc.cli import main
from xcc.diagnostics import XccError
from xcc.driver import CompileOptions, compile_module, read_source, stage_names
from xcc.passes import PassManager, parse_pipeline, pipeline_for_level, registered_passes
from xcc.passes.manager import get_pass

ROOT = Path(__file__).resolve().parent.parent
SAXPY = ROOT / "examples" / "saxpy.sm_80.ptx"
BLOCK_REDUCE = ROOT / "examples" / "block_reduce.sm_80.ptx"


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_parse_pipeline_strings():
    assert parse_pipeline("constfold,dce") == [("constfold", {}), ("dce", {})]
    assert parse_pipeline("ifconvert{max-insts=8},dce") == [("ifconvert", {"max-insts": "8"}), ("dce", {})]
    assert parse_pipeline(" a{x=1 y=2} , b{z=3,w=4}") == [("a", {"x": "1", "y": "2"}), ("b", {"z": "3", "w": "4"})]


@pytest.mark.parametrize("bad, message", [
    ("constfold,,dce", "expected a pass name at column 11"),
    ("ifconvert{max-insts=8", "is never closed"),
    ("ifconvert{max-insts}", "needs a value"),
    ("dce}", "unexpected '}'"),
    ("ifconvert{max-insts=2}x", "expected ',' at column 23"),
])
def test_malformed_pipelines_are_located_errors(bad, message):
    with pytest.raises(XccError, match=re.escape(message)):
        parse_pipeline(bad)


def test_options_map_dashes_to_fields_and_are_typed():
    p = get_pass("ifconvert", {"max-insts": "9"})
    assert p.max_insts == 9 and type(p).__dataclass_params__.frozen
    with pytest.raises(XccError, match="pass 'ifconvert' has no option 'max-inst' \\(its options: max-insts\\)"):
        get_pass("ifconvert", {"max-inst": "9"})
    with pytest.raises(XccError, match="option 'max-insts' takes a int, got 'many'"):
        get_pass("ifconvert", {"max-insts": "many"})
    with pytest.raises(XccError, match="unknown pass 'licmm'"):
        PassManager("constfold,licmm")


def test_levels_are_distinct_pipelines_of_registered_passes():
    levels = [pipeline_for_level(n) for n in range(4)]
    assert levels[0] == []
    assert len({tuple(p) for p in levels}) == 4, "-O0..-O3 must be distinct"
    for p in levels:
        assert {n for n, _ in parse_pipeline(",".join(p))} <= set(registered_passes()) if p else True


def test_passes_option_replaces_the_level_pipeline(tmp_path, capsys):
    out = tmp_path / "s.xbin"
    rc, _, err = run(capsys, "compile", SAXPY, "-o", out, "--passes", "constfold", "--print-after", "all")
    assert rc == 0
    ran = re.findall(r"; \*\*\* IR after (\S+) \*\*\*", err)
    assert ran == ["build", "constfold"]
    ran_backend = re.findall(r"; \*\*\* machine code after (\S+) \*\*\*", err)
    assert ran_backend == list(BACKEND_STAGES)  # -O3's backend: scheduling included
    rc, _, err = run(capsys, "compile", SAXPY, "-o", out, "-O0", "--passes", "constfold", "--print-after", "all")
    assert "schedule" not in re.findall(r"machine code after (\S+)", err)  # -O0 still chooses the backend
    rc, _, err = run(capsys, "compile", SAXPY, "-o", out, "--passes", "constfold,nosuch")
    assert rc == 1 and "unknown pass 'nosuch'" in err


def test_passes_enter_the_cache_key():
    a = CompileOptions(passes="constfold").key()
    b = CompileOptions(passes="constfold,dce").key()
    assert a != b and "passes" not in CompileOptions().key()


def test_list_passes(capsys):
    rc, out, _ = run(capsys, "compile", "--list-passes")
    assert rc == 0
    assert re.search(r"^  ifconvert\{max-insts=4\}\s+If-conversion", out, re.M)
    for name in ("constfold", "dce"):
        assert re.search(rf"^  {name}\s", out, re.M)
    assert ", ".join(BACKEND_STAGES) in out


def test_print_after_each_backend_stage(tmp_path, capsys):
    for stage in BACKEND_STAGES:
        rc, _, err = run(capsys, "compile", BLOCK_REDUCE, "-o", tmp_path / "b.xbin", "--print-after", stage)
        assert rc == 0, err
        assert f"; *** machine code after {stage} ***" in err
        body = err.split("***\n", 1)[1]
        if BACKEND_STAGES.index(stage) < BACKEND_STAGES.index("regalloc"):
            assert re.search(r"%[vw]0", body) and not re.search(r"\bR\d", body)
        else:
            assert not re.search(r"%[vwp]\d", body) and re.search(r"\bR\d", body)
        assert ("[S0" in body) == (stage == "control-codes")


def test_print_after_unknown_name_is_an_error(tmp_path, capsys):
    rc, _, err = run(capsys, "compile", SAXPY, "-o", tmp_path / "s.xbin", "--print-after", "regalloc2")
    assert rc == 1 and "no pass or stage named 'regalloc2'" in err
    assert not (tmp_path / "s.xbin").exists()
    assert set(BACKEND_STAGES) | {"build", "all"} <= set(stage_names())


def test_machine_printer_is_deterministic():
    texts = []
    for _ in range(2):
        import io

        buf = io.StringIO()
        compile_module([read_source(str(BLOCK_REDUCE))], CompileOptions(), print_after="isel", out=buf)
        texts.append(buf.getvalue())
    assert texts[0] == texts[1]


@pytest.mark.parametrize("stem", ["saxpy", "block_reduce", "device_functions", "gemm_tensorcore", "scan_sort"])
def test_verify_ir_checks_every_stage_and_changes_nothing(stem):
    src = [read_source(str(ROOT / "examples" / f"{stem}.sm_80.ptx"))]
    plain = compile_module(src, CompileOptions()).to_bytes()
    checked = compile_module(src, CompileOptions(verify=True)).to_bytes()
    assert plain == checked


def test_time_passes_reports_every_pass_and_stage(tmp_path, capsys):
    for flag in ("--time-passes", "-ftime-report"):
        rc, _, err = run(capsys, "compile", SAXPY, "-o", tmp_path / "s.xbin", flag, "-O1")
        assert rc == 0
        names = re.findall(r"^\s+\d+\.\d+ \(\s*[\d.]+%\)\s+(\S+)$", err, re.M)
        assert {"frontend", "isel", "regalloc", "control-codes", "Total"} <= set(names)
        assert set(pipeline_for_level(1)) <= set(names)
    times: dict[str, float] = {}
    compile_module([read_source(str(SAXPY))], CompileOptions(), pass_times=times)
    assert all(t >= 0 for t in times.values()) and set(BACKEND_STAGES) <= set(times)


def test_machine_verifier_names_stage_and_problem():
    from xcc.backend.isel_core import MBlock
    from xcc.backend.minst import VReg, mi
    from xcc.backend.mverify import MachineVerifyError, verify_machine

    blocks = [MBlock("entry", [mi("MOV", d=VReg(1, 1), b=VReg(2, 1)), mi("BRA", b="nowhere")], [])]
    with pytest.raises(MachineVerifyError, match="after isel in 'f', block entry, instruction 1: BRA branches to "
                                                 "'nowhere'"):
        verify_machine(blocks, "isel", "f", False)
    with pytest.raises(MachineVerifyError, match="virtual register %v1 after register allocation"):
        verify_machine(blocks[:1] and [MBlock("entry", blocks[0].insts[:1], [])], "regalloc", "f", True)
    wide = [MBlock("entry", [mi("MOV", d=VReg(3, 2), b=VReg(2, 1))], [])]
    with pytest.raises(MachineVerifyError, match="expected a 32-bit register"):
        verify_machine(wide, "isel", "f", False)
    assert ObjectFile  # the module imports cleanly
