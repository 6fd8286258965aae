"""-O0 as ptxas -O0 builds it, and bench/gpu_opt_levels.py without a GPU.

At -O0 every instruction waits on all scoreboards and stalls the maximum (xcc.backend.control, ``serial``), as
the control bits of ptxas -O0's SASS do; -O1 up keep the computed codes.  The bench script's ``prepare`` builds
both levels' cubins with their SASS counts (needs ptxas), and ``report`` joins a GPU run with xcc's cycles."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from xcc.backend.control import MAX_STALL
from xcc.backend.encoding import decode_all
from xcc.backend.isa import NUM_SCOREBOARDS
from xcc.driver import CompileOptions, compile_module, read_source

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import gpu_opt_levels as gol  # noqa: E402

PTX = ROOT / "examples" / "block_reduce.sm_80.ptx"


def _codes(level: int) -> list:
    obj = compile_module([read_source(PTX)], CompileOptions(opt_level=level))
    return [m.ctrl for img in obj.kernels.values() for m in decode_all(img.code)]


def test_O0_control_codes_are_serial_and_O1_up_are_not():
    every = (1 << NUM_SCOREBOARDS) - 1
    assert all(c.stall == MAX_STALL and c.wait == every for c in _codes(0))
    for level in (1, 3):
        codes = _codes(level)
        assert sum(c.stall for c in codes) < MAX_STALL * len(codes) / 2
        assert any(c.wait != every for c in codes)


def test_O0_is_slower_on_the_cycle_model_and_computes_the_same():
    import numpy as np

    from xcc import runtime as rt

    n = 1000
    x = np.arange(n, dtype=np.int32)
    out = {}
    for level in (0, 3):
        dev = rt.Device()
        fn = rt.load_module(PTX, opt_level=level, device=dev).get_function("_Z12block_reduceiPKiPi")
        dx, dy = rt.to_device(x, dev), rt.to_device(np.zeros(4, np.int32), dev)
        res = fn.launch((4, 1, 1), (256, 1, 1), [np.int32(n), dx, dy])
        out[level] = (res.cycles, dy.copy_to_host())
    assert np.array_equal(out[0][1], out[3][1]) and out[0][1].sum() == x.sum()
    assert out[0][0] > 1.3 * out[3][0]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_prepare_builds_both_levels_with_sass_counts(tmp_path):
    import gpu_check as gc

    gc.record(tmp_path, ["saxpy"], pairs=False)
    gol.prepare(tmp_path, "sm_90")
    manifest = json.loads((tmp_path / "opt_manifest.json").read_text())
    assert manifest["arch"] == "sm_90"
    counts = [v for k, v in manifest["sass"].items() if "saxpy" in k]
    assert counts and all(c["0"] > c["3"] > 0 for c in counts)  # ptxas -O0 writes more instructions
    for level in gol.LEVELS:
        assert any(p.name.endswith(f".O{level}.cubin") for p in (tmp_path / "cubin").iterdir())


def test_report_joins_the_gpu_run_with_xcc_cycles(tmp_path):
    gpu = {"device": "TEST GPU", "driver": 13000, "empty_kernel_ms": 0.006, "cases": {
        "a": {"entry": "ka", "ptx": "a.ptx", "O0": {"ms": 0.030, "ref_ok": True}, "O3": {"ms": 0.010, "ref_ok": True}},
        "b": {"entry": "kb", "ptx": "b.ptx", "O0": {"ms": 0.008, "ref_ok": True}, "O3": {"ms": 0.008, "ref_ok": True}},
        "c": {"entry": "kc", "ptx": "c.ptx", "O0": {"ms": 0.008, "ref_ok": False}, "O3": {"ms": 0.008, "ref_ok": True}},
        "d": {"entry": "kd", "ptx": "d.ptx", "O0": {"error": "cuLaunchKernel: X"}, "O3": {"ms": 0.008, "ref_ok": True}}}}
    ol = {"rows": [{"case": k, "levels": {"0": {"cycles": c0}, "3": {"cycles": c3}}}
                   for k, c0, c3 in (("a", 400, 100), ("b", 200, 100), ("c", 100, 100), ("d", 100, 100))]}
    (tmp_path / "g.json").write_text(json.dumps(gpu))
    (tmp_path / "o.json").write_text(json.dumps(ol))
    md = tmp_path / "B.md"
    md.write_text("# x\n")
    text = gol.report(tmp_path / "g.json", tmp_path / "o.json", None, md)
    assert "| a * |" in text and "| b |" in text  # a's -O0 launch is above 1.25x the median -O3 launch
    assert "c |" not in text and "| d" not in text  # a wrong result or a failed launch is left out
    assert "over all 2 kernels: GPU (ptxas) -O0/-O3 **1.732**, xcc -O0/-O3 **2.828**" in text
    assert "Over the 1 kernels marked *" in text and "GPU **3.000**, xcc **4.000**" in text
    assert md.read_text().startswith("# x\n") and gol.BEGIN in md.read_text()
