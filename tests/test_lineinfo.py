"""Source lines (issue 20): faults, hot spots, ``xcc disasm`` and the timeline of a ``-lineinfo`` build name the
CUDA ``file.cu:line`` (``.loc``/``.file``), beside the PTX line, through :mod:`xcc.backend.lineinfo`.

The kernel is ``examples/fault_lineinfo.cu`` (nvcc -lineinfo -O3 -arch=sm_80): its store is shifted by one, so
an output of ``n`` floats is written one element past its end; with ``n + 1`` floats the launch is correct.
Expected lines are found in the ``.cu`` and PTX texts, not written down.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_passes import filecheck

from xcc import runtime as rt
from xcc.backend.encoding import WORD_BYTES
from xcc.backend.lineinfo import LineInfo, kernel_source, line_info, resolve_source, source_text
from xcc.backend.objfile import ObjectFile
from xcc.cli import main
from xcc.diagnostics import KernelFault, ObjectFormatError
from xcc.driver import CompileOptions, Source, compile_module

ROOT = Path(__file__).resolve().parent.parent
CU = ROOT / "examples" / "fault_lineinfo.cu"
LINEINFO = ROOT / "examples" / "fault_lineinfo.sm_80.lineinfo.ptx"
PLAIN = ROOT / "examples" / "fault_lineinfo.sm_80.ptx"
GOLDEN = ROOT / "tests" / "golden" / "disasm" / "fault_lineinfo.txt"
N = 256


def cu_line(text: str) -> int:
    """The line of examples/fault_lineinfo.cu holding ``text``."""
    return next(i for i, line in enumerate(CU.read_text().splitlines(), 1) if text in line)


def ptx_line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def args(out_len: int):
    x = rt.to_device(np.arange(N, dtype=np.float32))
    y = rt.to_device(np.zeros(out_len, np.float32))
    return (np.int32(N), np.float32(0.5), x, y), y


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_fault_names_the_cuda_line_beside_the_ptx_line():
    fn = rt.load_module(LINEINFO).get_function("shift_scale")
    launch_args, _ = args(N)  # one float short: the last thread stores past the end
    with pytest.raises(KernelFault) as info:
        fn.launch((N // 64, 1, 1), (64, 1, 1), launch_args)
    e = info.value
    store = ptx_line(LINEINFO, "st.global.f32")
    assert e.line == store and e.loc.line == store  # the PTX location stays the diagnostic's place
    assert (Path(e.source_file).name, e.source_line) == ("fault_lineinfo.cu", cu_line("out[i + 1] = acc;"))
    assert f"faulted at PTX line {store} (STG" in str(e)
    assert f"fault_lineinfo.cu:{cu_line('out[i + 1] = acc;')}: out-of-bounds" in str(e)
    assert "thread (63, 0, 0)" in str(e)


def test_fault_without_lineinfo_names_only_the_ptx_line():
    fn = rt.load_module(PLAIN).get_function("shift_scale")
    launch_args, _ = args(N)
    with pytest.raises(KernelFault) as info:
        fn.launch((N // 64, 1, 1), (64, 1, 1), launch_args)
    assert ".cu:" not in str(info.value) and info.value.source_file is None
    assert f"PTX line {ptx_line(PLAIN, 'st.global.f32')} (STG" in str(info.value)


def test_ir_engine_fault_names_the_cuda_line_too():
    fn = rt.load_module(LINEINFO, engine="ir").get_function("shift_scale")
    launch_args, _ = args(N)
    with pytest.raises(KernelFault) as info:
        fn.launch((N // 64, 1, 1), (64, 1, 1), launch_args)
    line = cu_line("out[i + 1] = acc;")
    assert f"faulted at PTX line {ptx_line(LINEINFO, 'st.global.f32')} (st.global.f32" in str(info.value)
    assert f"fault_lineinfo.cu:{line}: out-of-bounds" in str(info.value) and info.value.source_line == line


def test_cli_fault_diagnostic(capsys):
    rc, _, err = run_cli(capsys, "run", LINEINFO, "--kernel", "shift_scale", "--grid", "4", "--block", "64",
                         f"s32:{N}", "f32:0.5", f"zeros:float32[{N}]", f"zeros:float32[{N}]")
    assert rc == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{LINEINFO}:{ptx_line(LINEINFO, 'st.global.f32')}:")
    assert f"fault_lineinfo.cu:{cu_line('out[i + 1] = acc;')}" in first


def test_hotspots_have_a_source_column(capsys):
    rc, out, _ = run_cli(capsys, "run", LINEINFO, "--kernel", "shift_scale", "--grid", "4", "--block", "64",
                         f"s32:{N}", "f32:0.5", f"zeros:float32[{N}]", f"zeros:float32[{N + 1}]", "--hotspots", "20")
    assert rc == 0
    table = out[out.index("cycles%"):].splitlines()
    assert table[0].split()[:3] == ["cycles%", "line", "source"]
    rows = {int(r.split()[1]): r.split()[2] for r in table[1:]}
    ptx = LINEINFO.read_text().splitlines()
    # the row of each PTX line names the CUDA line of the .loc in force at that PTX line
    for line, src in rows.items():
        loc = next((m for m in (re.match(r"\s*\.loc\s+1\s+(\d+)", t) for t in reversed(ptx[:line])) if m), None)
        if src != "-":
            assert src == f"fault_lineinfo.cu:{loc.group(1)}", (line, src)
    assert rows[ptx_line(LINEINFO, "st.global.f32")] == f"fault_lineinfo.cu:{cu_line('out[i + 1] = acc;')}"
    # a conditional branch keeps its .loc through the IR (the guarded early exit of `if (i >= n)`)
    assert rows[ptx_line(LINEINFO, "@%p1 bra")] == f"fault_lineinfo.cu:{cu_line('if (i >= n)')}"
    fma = ptx_line(LINEINFO, "fma.rn.f32")
    assert rows[fma] == f"fault_lineinfo.cu:{cu_line('acc = acc * x + scale;')}"
    assert int(table[1].split()[1]) == fma  # the loop's dependent FMAs (waiting on the load) are the hot spot


def test_hotspots_without_lineinfo_have_no_source_column(capsys):
    rc, out, _ = run_cli(capsys, "run", PLAIN, "--kernel", "shift_scale", "--grid", "4", "--block", "64",
                         f"s32:{N}", "f32:0.5", f"zeros:float32[{N}]", f"zeros:float32[{N + 1}]", "--hotspots", "3")
    assert rc == 0 and "source" not in out and ".cu:" not in out


def test_disasm_interleaves_source_lines_golden(capsys, tmp_path):
    xbin = tmp_path / "k.xbin"
    assert run_cli(capsys, "compile", "-o", xbin, LINEINFO)[0] == 0
    rc, out, err = run_cli(capsys, "disasm", xbin)
    assert (rc, err) == (0, "")
    filecheck(out, GOLDEN)


def test_disasm_branch_targets_are_printed_addresses(capsys, tmp_path):
    """Every branch target (BRA, BSSY, CALL) is shown as the byte address disasm prints for the target."""
    src = ROOT / "examples" / "scan_sort.sm_80.lineinfo.ptx"
    xbin = tmp_path / "k.xbin"
    assert run_cli(capsys, "compile", "-o", xbin, src)[0] == 0
    obj = ObjectFile.from_bytes(xbin.read_bytes())
    out = run_cli(capsys, "disasm", xbin)[1]
    listing = [ln for ln in out.splitlines() if ln.startswith("  /*")]
    checked = 0
    base = 0
    for name in sorted(obj.kernels):
        k = obj.kernels[name]
        for i, inst in enumerate(k.instructions):
            line = listing[base + i]
            assert line.startswith(f"  /*{i * WORD_BYTES:04x}*/")
            for op in inst.d.operands:
                if op.kind == "L" and isinstance(inst.ops.get(op.field), int):
                    target = (i + 1 + inst.ops[op.field]) * WORD_BYTES
                    assert f"{target:#06x}" in line.split("]  ", 1)[1], line
                    assert 0 <= target < k.instruction_count * WORD_BYTES
                    assert any(t.startswith(f"  /*{target:04x}*/") for t in listing[base:base + k.instruction_count])
                    checked += 1
        base += k.instruction_count
    assert checked >= 5


def test_timeline_kernel_slice_names_the_source(tmp_path):
    path = tmp_path / "t.json"
    fn = rt.load_module(LINEINFO).get_function("shift_scale")
    launch_args, _ = args(N + 1)
    with rt.trace(path):
        fn.launch((N // 64, 1, 1), (64, 1, 1), launch_args)
    (kernel,) = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    a = kernel["args"]
    assert Path(a["sourceFile"]).name == "fault_lineinfo.cu"
    assert a["sourceLine"] == cu_line("__global__ void shift_scale")
    assert a["ptxLine"] == min(x for x in fn.kernel.lines if x)  # the kernel's first PTX line with code
    assert ptx_line(LINEINFO, ".entry shift_scale") < a["ptxLine"] < ptx_line(LINEINFO, "st.global")
    assert a["occupancyLimiter"] and 0 < a["achievedOccupancy"] <= a["theoreticalOccupancy"] <= 100


def test_line_table_api():
    k = compile_module([Source(LINEINFO.read_text(), str(LINEINFO))], CompileOptions()).kernels["shift_scale"]
    store = next(pc for pc, inst in enumerate(k.instructions) if inst.mnemonic == "STG")
    info = line_info(k, store)
    assert info == LineInfo(ptx_line(LINEINFO, "st.global.f32"), "/work/main/examples/fault_lineinfo.cu",
                            cu_line("out[i + 1] = acc;"), 5)
    assert info.short == f"fault_lineinfo.cu:{info.line}" and info.source.endswith(info.short)
    assert line_info(k, 10_000) == LineInfo() and kernel_source(k).line == cu_line("__global__ void shift_scale")
    plain = compile_module([Source(PLAIN.read_text(), str(PLAIN))], CompileOptions()).kernels["shift_scale"]
    assert line_info(plain, 0).file is None and plain.source_files == []


def test_source_files_are_found_by_base_name_beside_the_ptx(tmp_path):
    elsewhere = "/no/such/checkout/examples/fault_lineinfo.cu"  # nvcc's absolute path on another machine
    assert resolve_source(elsewhere) is None
    assert resolve_source(elsewhere, LINEINFO) == CU.parent / "fault_lineinfo.cu"
    assert resolve_source("fault_lineinfo.cu", LINEINFO) == CU.parent / "fault_lineinfo.cu"
    assert source_text(elsewhere, cu_line("out[i + 1] = acc;"), LINEINFO).strip() == "out[i + 1] = acc;"
    assert source_text(elsewhere, 10_000, LINEINFO) is None
    assert source_text(elsewhere, 1, tmp_path / "x.ptx") is None


def test_object_file_carries_the_file_table():
    obj = compile_module([Source(LINEINFO.read_text(), str(LINEINFO))], CompileOptions())
    k = obj.kernels["shift_scale"]
    assert k.source_files == [[1, "/work/main/examples/fault_lineinfo.cu"]]
    back = ObjectFile.from_bytes(obj.to_bytes())
    assert back == obj and back.kernels["shift_scale"].source_files == k.source_files
    bad = ObjectFile({"shift_scale": dataclasses.replace(k, source_files=[["x", "a.cu"]])})
    with pytest.raises(ObjectFormatError, match="malformed source_files"):
        ObjectFile.from_bytes(bad.to_bytes())
