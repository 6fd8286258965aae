"""The ``xcc`` command line (compile, disasm, check, and run's ``--engine``): outputs, diagnostics
and exit codes.

Run in-process through :func:`xcc.cli.main`, plus once through the installed console
script for real process exit codes.  (The rest of ``xcc run`` is covered in test_runtime.py.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import ALL_PTX, SUPPORTED, tiered

from xcc.backend.objfile import ObjectFile
from xcc.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ALL_PTX
SAXPY = ROOT / "examples" / "saxpy.sm_80.ptx"
XCC = Path(sys.executable).with_name("xcc")
DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")
VERBOSE_USED = re.compile(r"^xcc info    : Used (\d+) registers, used (\d+) barriers, (\d+) bytes smem, "
                          r"(\d+) instructions$")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def entry_names(ptx: str) -> list[str]:
    return re.findall(r"\.entry\s+(\w+)\s*\(", ptx)


@pytest.fixture
def saxpy(tmp_path) -> Path:
    p = tmp_path / "saxpy.ptx"
    p.write_text(SAXPY.read_text())
    return p


# --------------------------------------------------------------------------- compile


@pytest.mark.parametrize("opt", ["-O0", "-O3"])
@pytest.mark.parametrize("path", tiered(EXAMPLES))
def test_compile_every_example(capsys, tmp_path, path, opt):
    """The kernels with numpy references compile; every other example either compiles or is
    refused with located diagnostics (exit 1), never a traceback, and leaves no output behind."""
    out = tmp_path / "out.xbin"
    rc, stdout, stderr = run(capsys, "compile", opt, "-o", out, path)
    if path in SUPPORTED:
        assert (rc, stdout, stderr) == (0, "", "")
    if rc == 0:
        obj = ObjectFile.from_bytes(out.read_bytes())
        assert sorted(obj.kernels) == sorted(entry_names(path.read_text()))
        assert all(k.instruction_count > 0 and k.registers >= 1 for k in obj.kernels.values())
        assert sorted(os.listdir(tmp_path)) == ["out.xbin"]  # no temporary files left
    else:
        assert rc == 1, stderr
        assert stderr.startswith((f"{path}:", "error: ")) and "Traceback" not in stderr
        assert os.listdir(tmp_path) == []


def test_default_output_name(capsys, saxpy):
    rc, _, _ = run(capsys, "compile", saxpy)
    assert rc == 0
    assert ObjectFile.from_bytes(saxpy.with_suffix(".xbin").read_bytes()).kernels.keys() == {"saxpy"}


@pytest.mark.parametrize("spelling", [
    ["-arch=xg1", "-O3"], ["-arch", "xg1", "-O0"], ["--arch", "xg1", "--opt-level", "2"], ["-O1"],
    ["-maxrregcount=32"], ["--maxrregcount", "64", "--verify-ir"],
])
def test_nvcc_style_spellings_accepted(capsys, saxpy, tmp_path, spelling):
    out = tmp_path / "o.xbin"
    rc, _, err = run(capsys, "compile", *spelling, "-o", out, saxpy)
    assert (rc, err) == (0, "")
    assert "saxpy" in ObjectFile.from_bytes(out.read_bytes()).kernels


@pytest.mark.parametrize("level", ["-O0", "-O3"])
def test_same_flags_give_the_same_bytes(capsys, saxpy, tmp_path, level):
    first, again = tmp_path / "first.xbin", tmp_path / "again.xbin"
    assert run(capsys, "compile", level, "-o", first, saxpy)[0] == 0
    assert run(capsys, "compile", level, "-o", again, saxpy)[0] == 0
    assert again.read_bytes() == first.read_bytes()


def test_verbose_prints_ptxas_shaped_lines(capsys, tmp_path):
    path = ROOT / "examples" / "block_reduce.sm_80.ptx"
    out = tmp_path / "o.xbin"
    rc, stdout, stderr = run(capsys, "compile", "-v", "-o", out, path)
    assert rc == 0 and stdout == ""
    obj = ObjectFile.from_bytes(out.read_bytes())
    lines = stderr.splitlines()
    for name in obj.kernels:
        assert f"xcc info    : Compiling entry function '{name}' for 'xg1'" in lines
        assert f"xcc info    : Function properties for {name}" in lines
    used = [VERBOSE_USED.match(line) for line in lines]
    used = [tuple(map(int, m.groups())) for m in used if m]
    assert len(used) == len(obj.kernels) == 2
    expected = {(k.registers, k.barriers, k.shared_bytes, k.instruction_count) for k in obj.kernels.values()}
    assert set(used) == expected
    assert any(b >= 1 for _, b, smem, _ in used if smem > 0)  # block_reduce uses shared memory and bar.sync
    assert "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in lines


BARRIER_IDS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, ID;
  mov.u32 %r2, 128;
  bar.sync %r1, %r2;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


@pytest.mark.parametrize("bar_id, barriers", [("0", 1), ("5", 6), ("%tid.y", 16)])
def test_verbose_counts_barriers_as_ptxas(capsys, tmp_path, bar_id, barriers):
    """"used N barriers" is the highest named-barrier id + 1 (constant ids, also folded from a register), all 16
    when the id is only known at run time - as ptxas 13.0 -v reports these three kernels."""
    path = tmp_path / "bar.ptx"
    path.write_text(BARRIER_IDS.replace("ID", bar_id))
    rc, _, stderr = run(capsys, "compile", "-v", "-o", tmp_path / "o.xbin", path)
    used = [VERBOSE_USED.match(line) for line in stderr.splitlines()]
    assert rc == 0 and [int(m.group(2)) for m in used if m] == [barriers]


def test_stats_json(capsys, tmp_path):
    path = ROOT / "examples" / "transpose_shared.sm_80.ptx"
    out, stats = tmp_path / "o.xbin", tmp_path / "stats.json"
    rc, stdout, stderr = run(capsys, "compile", "--stats-json", stats, "-o", out, path)
    assert (rc, stdout, stderr) == (0, "", "")
    data = json.loads(stats.read_text())
    obj = ObjectFile.from_bytes(out.read_bytes())
    assert set(data) == set(obj.kernels)
    for name, s in data.items():
        assert set(s) == {"registers", "instructions", "shared_bytes", "local_bytes", "spill_bytes", "compile_ms"}
        k = obj.kernels[name]
        assert (s["registers"], s["instructions"], s["shared_bytes"], s["spill_bytes"]) == \
            (k.registers, k.instruction_count, k.shared_bytes, k.spill_bytes)
        assert all(isinstance(s[f], int) for f in ("registers", "instructions", "shared_bytes", "spill_bytes"))
        assert isinstance(s["compile_ms"], int | float) and s["compile_ms"] >= 0
        assert s["shared_bytes"] > 0  # the tile in shared memory


def test_print_after_dce_prints_ir_to_stderr(capsys, saxpy, tmp_path):
    rc, stdout, stderr = run(capsys, "compile", "--print-after=dce", "-o", tmp_path / "o.xbin", saxpy)
    assert rc == 0 and stdout == ""
    assert stderr.startswith("; *** IR after dce ***\nentry @saxpy(.u32 saxpy_param_0 @0, ")
    from xcc.passes import pipeline_for_level

    assert stderr.count("; *** IR after dce ***") == pipeline_for_level(3).count("dce")
    assert "constfold" not in stderr
    assert re.search(r"^  st\.f32 ", stderr, re.M) and stderr.rstrip().endswith("}")


def test_print_after_all_at_o0_prints_no_pass(capsys, saxpy, tmp_path):
    """-O0 runs no IR pass: --print-after=all shows the IR as built and the backend's stages only."""
    rc, _, stderr = run(capsys, "compile", "-O0", "--print-after=all", "-o", tmp_path / "o.xbin", saxpy)
    assert rc == 0
    assert re.findall(r"; \*\*\* IR after (\S+) \*\*\*", stderr) == ["build"]
    assert "; *** machine code after isel ***" in stderr


# --------------------------------------------------------------------------- disasm


def test_disasm(capsys, saxpy, tmp_path):
    out = tmp_path / "o.xbin"
    assert run(capsys, "compile", "-o", out, saxpy)[0] == 0
    k = ObjectFile.from_bytes(out.read_bytes()).kernels["saxpy"]
    rc, stdout, stderr = run(capsys, "disasm", out)
    assert (rc, stderr) == (0, "")
    lines = stdout.splitlines()
    assert lines[0] == (f"// kernel saxpy: {k.registers} registers, 0 bytes smem, {k.instruction_count} "
                        "instructions, params .u32 saxpy_param_0@0, .f32 saxpy_param_1@4, .u64 saxpy_param_2@8, "
                        ".u64 saxpy_param_3@16")
    assert lines[1] == ".text.saxpy:"
    body = lines[2:2 + k.instruction_count]
    word = re.compile(r"^  /\*([0-9a-f]{4})\*/  \[S\d\d[Y-] W[0-5-] R[0-5-] B[0-5-]{6}\]  \S.* ;(  // line \d+)?$")
    for i, line in enumerate(body):
        m = word.match(line)
        assert m, line
        assert int(m.group(1), 16) == 16 * i
    assert "EXIT" in body[-1] and any("FFMA" in line for line in body) and any("STG" in line for line in body)
    assert lines[2 + k.instruction_count:] == [""]
    # deterministic
    assert run(capsys, "disasm", out)[1] == stdout


def test_disasm_of_a_damaged_file(capsys, saxpy, tmp_path):
    out = tmp_path / "o.xbin"
    assert run(capsys, "compile", "-o", out, saxpy)[0] == 0
    data = bytearray(out.read_bytes())
    data[100] ^= 1
    out.write_bytes(bytes(data))
    rc, stdout, stderr = run(capsys, "disasm", out)
    assert rc == 1 and stdout == ""
    assert stderr.strip() == f"error: {out}: checksum mismatch: the file is truncated or corrupt"


def test_compile_refuses_an_xbin_input(capsys, saxpy, tmp_path):
    out = tmp_path / "o.xbin"
    assert run(capsys, "compile", "-o", out, saxpy)[0] == 0
    rc, _, stderr = run(capsys, "compile", "-o", tmp_path / "p.xbin", out)
    assert rc == 1 and "is already an .xbin object file" in stderr
    assert not (tmp_path / "p.xbin").exists()


# --------------------------------------------------------------------------- bad input


def _misspelt(text: str) -> str:
    return text.replace("mad.lo.s32", "mda.lo.s32", 1)


def _undeclared(text: str) -> str:
    return text.replace("%r5, %tid.x", "%r9, %tid.x", 1)


def _truncated(text: str) -> str:
    return text[:text.index("ld.global.f32") + 5]  # cut in the middle of the function body


BAD = {
    "misspelt-opcode": (_misspelt, "unknown opcode 'mda'", "mda.lo.s32"),
    "undeclared-register": (_undeclared, "use of undeclared register '%r9'", "%r9"),
    "truncated": (_truncated, "unexpected end of file", None),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_ptx_diagnostic(capsys, tmp_path, case):
    mutate, message, token = BAD[case]
    src = tmp_path / "bad.ptx"
    src.write_text(mutate(SAXPY.read_text()))
    out = tmp_path / "bad.xbin"
    out_before = sorted(os.listdir(tmp_path))
    rc, stdout, stderr = run(capsys, "compile", "-o", out, src)
    assert rc == 1 and stdout == ""
    assert "Traceback" not in stderr
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == out_before  # nothing half-written left behind
    first, source_line, caret = stderr.splitlines()[:3]
    m = DIAG.match(first)
    assert m, first
    assert m.group("file") == str(src)
    assert message in m.group("msg")
    line, col = int(m.group("line")), int(m.group("col"))
    expected_line = src.read_text().splitlines()[line - 1].expandtabs(1)
    assert source_line == expected_line
    assert caret == " " * (col - 1) + "^"
    if token is not None:
        assert source_line[col - 1:].startswith(token)
    else:  # end of file: the caret is at or just past the last character of the last line
        assert line == len(src.read_text().splitlines()) and col - 1 >= len(source_line.rstrip()) - 1


def test_failed_compile_leaves_existing_output_untouched(capsys, tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(_misspelt(SAXPY.read_text()))
    out = tmp_path / "out.xbin"
    out.write_bytes(b"previous contents")
    assert run(capsys, "compile", "-o", out, src)[0] == 1
    assert out.read_bytes() == b"previous contents"


def test_missing_input_file(capsys, tmp_path):
    rc, _, stderr = run(capsys, "compile", "-o", tmp_path / "o.xbin", tmp_path / "nope.ptx")
    assert rc == 1 and "cannot read" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("arch", ["sm_80", "xg2", ""])
def test_unknown_arch(capsys, saxpy, tmp_path, arch):
    rc, stdout, stderr = run(capsys, "compile", f"-arch={arch}", "-o", tmp_path / "o.xbin", saxpy)
    assert rc in (1, 2) and stdout == ""
    assert f"unknown architecture '{arch}'" in stderr and "xg1" in stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "o.xbin").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["compile", "--bogus", "{src}"], "No such option '--bogus'"),
    (["compile", "{src}", "-o"], "Option '-o' requires an argument"),
    (["compile"], "no input files"),
    (["compile", "--opt-level", "5", "{src}"], "Invalid value for '--opt-level'"),
    (["compile", "-O7", "{src}"], "No such option"),
    (["frobnicate"], "No such command 'frobnicate'"),
    (["disasm", "{tmp}/missing.xbin"], "does not exist"),
])
def test_usage_errors_exit_2(capsys, saxpy, tmp_path, argv, message):
    argv = [a.format(src=saxpy, tmp=tmp_path) for a in argv]
    rc, _, stderr = run(capsys, *argv)
    assert rc == 2
    assert message in stderr
    assert "Traceback" not in stderr
    assert not saxpy.with_suffix(".xbin").exists()


def test_version(capsys):
    rc, stdout, _ = run(capsys, "--version")
    assert rc == 0 and stdout.strip() == "xcc, version 0.1.0"


def test_internal_error_exits_3(capsys, saxpy, tmp_path, monkeypatch):
    import xcc.driver

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(xcc.driver, "compile_module", boom)
    rc, _, stderr = run(capsys, "compile", "-o", tmp_path / "o.xbin", saxpy)
    assert rc == 3
    assert "internal error" in stderr and "RuntimeError: simulated bug" in stderr
    assert not (tmp_path / "o.xbin").exists()


# --------------------------------------------------------------------------- the installed script


def test_console_script_exit_codes(tmp_path):
    assert XCC.exists(), f"console script not installed at {XCC}"
    src = tmp_path / "saxpy.ptx"
    src.write_text(SAXPY.read_text())
    bad = tmp_path / "bad.ptx"
    bad.write_text(_undeclared(SAXPY.read_text()))
    env = {**os.environ, "XCC_CACHE_DIR": str(tmp_path / "cache")}

    def xcc(*args):
        return subprocess.run([str(XCC), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)

    ok = xcc("compile", "-arch=xg1", "-O3", "-v", "-o", tmp_path / "o.xbin", src)
    assert ok.returncode == 0, ok.stderr
    assert VERBOSE_USED.search(ok.stderr.splitlines()[-1])
    assert ObjectFile.from_bytes((tmp_path / "o.xbin").read_bytes()).kernels.keys() == {"saxpy"}

    err = xcc("compile", "-o", tmp_path / "b.xbin", bad)
    assert err.returncode == 1
    assert DIAG.match(err.stderr.splitlines()[0]) and "Traceback" not in err.stderr
    assert not (tmp_path / "b.xbin").exists()

    usage = xcc("compile", src, "--no-such-flag")
    assert usage.returncode == 2 and "No such option" in usage.stderr


# --------------------------------------------------------------------------- check

MANY_SYNTAX_ERRORS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
\t.reg .b32 %r<5>;
\tadd.s32 %r1, %r2 %r3;
\tmov.u32 %r1, ;
\tadd.s32 %r1, %r2, %r3
\tsub.s32 %r1, %r2, %r3;
\tret;
}
"""


def test_check_accepts_the_whole_corpus(capsys):  # parse and check: what compiles is tests/test_check.py's
    rc, out, err = run(capsys, "check", "--syntax-only", *ALL_PTX)
    assert (rc, out, err) == (0, "", "")


def test_check_verbose_summarises_each_file(capsys, saxpy):
    rc, out, _ = run(capsys, "check", "-v", saxpy)
    assert rc == 0 and out.startswith(f"{saxpy}: ok: PTX ISA ") and "1 kernel(s)" in out


def test_check_reports_every_syntax_error_and_exits_1(capsys, tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(MANY_SYNTAX_ERRORS)
    rc, out, err = run(capsys, "check", src, ROOT / "examples" / "saxpy.sm_80.ptx")
    assert rc == 1 and out == ""
    places = [(int(m["line"]), int(m["col"])) for m in map(DIAG.match, err.splitlines()) if m]
    assert places == [(7, 19), (8, 15), (9, 23)]
    assert err.rstrip().endswith("3 errors generated.")


def test_check_reports_semantic_errors_with_places(capsys, tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(MANY_SYNTAX_ERRORS.replace("%r2 %r3", "%rd2, %r3").replace("mov.u32 %r1, ;", "mov.u32 %r1, 1;")
                   .replace("%r3\n\tsub", "%r3;\n\tsub"))
    rc, _, err = run(capsys, "check", src)
    assert rc == 1
    assert DIAG.match(err.splitlines()[0])["msg"] == "use of undeclared register '%rd2'"


def test_stray_brace_at_module_level_is_a_diagnostic(capsys, tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(".version 9.0\n.target sm_80\n.address_size 64\n.global .u32 g;\n{\n}\n")
    rc, _, err = run(capsys, "check", src)
    assert rc == 1 and "Traceback" not in err
    assert DIAG.match(err.splitlines()[0])["msg"].startswith("unexpected token '{'")


# --------------------------------------------------------------------------- run --engine
def test_run_engine_ir_matches_numpy_and_engine_isa(capsys, tmp_path):
    import numpy as np

    x, n = np.linspace(-3, 3, 200, dtype=np.float32), 200
    np.save(tmp_path / "x.npy", x)
    results = {}
    for engine in ("ir", "isa"):
        y = tmp_path / f"y_{engine}.npy"
        np.save(y, np.full(n, 0.25, np.float32))
        out = tmp_path / f"{engine}.npz"
        rc, stdout, err = run(capsys, "run", SAXPY, "--kernel", "saxpy", "--grid", "1", "--block", "256",
                              "--engine", engine, f"s32:{n}", "f32:1.5", tmp_path / "x.npy", y,
                              "--out", out, "--stats")
        assert rc == 0, err
        assert "warp_instructions=" in stdout
        results[engine] = np.load(out)["arg3"]
    want = (x.astype(np.float64) * 1.5 + 0.25).astype(np.float32)  # fma.rn: exact in f64, one rounding
    assert results["ir"].tobytes() == results["isa"].tobytes() == want.tobytes()


def test_run_engine_ir_fault_and_unknown_engine(capsys, saxpy):
    rc, _, err = run(capsys, "run", saxpy, "--kernel", "saxpy", "--grid", "1", "--block", "64", "--engine", "ir",
                     "s32:64", "f32:1", "zeros:float32[8]", "zeros:float32[8]")
    assert rc == 1 and "out-of-bounds" in err and "Traceback" not in err
    rc, _, err = run(capsys, "run", saxpy, "--kernel", "saxpy", "--grid", "1", "--block", "1", "--engine", "gpu")
    assert rc == 2 and "gpu" in err


# --------------------------------------------------------------------------- run: the performance model
TRANSPOSE = ROOT / "examples" / "transpose_shared.sm_80.ptx"
UNPADDED = "_Z25transpose_shared_unpaddediiPKfPf"
TRANSPOSE_ARGS = ("--kernel", UNPADDED, "--grid", "2,2", "--block", "32,8", "s32:64", "s32:64",
                  "zeros:float32[4096]", "zeros:float32[4096]")


def test_run_stats_prints_nsight_sections(capsys):
    rc, out, err = run(capsys, "run", TRANSPOSE, *TRANSPOSE_ARGS, "--stats")
    assert rc == 0, err
    for section in ("GPU Speed Of Light Throughput", "Launch Statistics", "Occupancy", "Warp State Statistics",
                    "Memory Workload Analysis", "Instruction Statistics"):
        assert f"Section: {section}" in out
    ways = re.search(r"Shared Load Wavefronts Per Request\s+(\S+)", out)
    assert ways and ways.group(1) == "32"  # the unpadded tile's column reads
    assert re.search(r"Block Limit Warps\s+block\s+8\b", out)  # 64 warp slots / 8 warps per CTA


def test_run_stats_json_machine_and_no_timing(capsys, tmp_path):
    text = (ROOT / "backend" / "machines" / "xg1.toml").read_text()
    wide = tmp_path / "wide.toml"
    wide.write_text(text.replace("banks = 32", "banks = 64"))
    got = {}
    for machine in ("xg1", wide):
        js = tmp_path / "stats.json"
        rc, _, err = run(capsys, "run", TRANSPOSE, *TRANSPOSE_ARGS, "--machine", machine, "--stats-json", js)
        assert rc == 0, err
        got[str(machine)] = json.loads(js.read_text())
    ld = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    base, wide_ = got["xg1"], got[str(wide)]
    assert base["metrics"][ld] == 2 * wide_["metrics"][ld]  # 32-way -> 16-way
    assert wide_["cycles"] < base["cycles"] and wide_["warp_instructions"] == base["warp_instructions"]
    rc, out, err = run(capsys, "run", TRANSPOSE, *TRANSPOSE_ARGS, "--no-timing", "--stats",
                       "--stats-json", tmp_path / "f.json")
    assert rc == 0, err
    assert "no cycle model" in out
    functional = json.loads((tmp_path / "f.json").read_text())
    assert functional["cycles"] is None and functional["metrics"] == {}
    assert functional["warp_instructions"] == base["warp_instructions"]
    rc, _, err = run(capsys, "run", TRANSPOSE, *TRANSPOSE_ARGS, "--no-timing", "--hotspots", "3")
    assert rc == 2 and "--hotspots" in err
    rc, _, err = run(capsys, "run", TRANSPOSE, *TRANSPOSE_ARGS, "--machine", tmp_path / "missing.toml")
    assert rc == 1 and "cannot read machine description" in err and "Traceback" not in err
