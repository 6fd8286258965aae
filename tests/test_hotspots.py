"""The hot-spot view: the cycle model's per-instruction stall samples summed by PTX line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from xcc import runtime as rt
from xcc.cli import main
from xcc.sim.perf.hotspots import format_hotspots, hotspots
from xcc.sim.perf.timing import STALL_REASONS

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES_BY_NAME, ptx_path  # noqa: E402


def _launch(name: str):
    case = CASES_BY_NAME[name]
    path = ptx_path(case, "sm_80")
    dev = rt.Device()
    fn = rt.load_module(path, device=dev).get_function(case.entry)
    launch = case.make(np.random.default_rng(0))
    args = [rt.to_device(a, dev) if isinstance(a, np.ndarray) else a for a in launch.args]
    return fn.launch(launch.grid, launch.block, args, case.shared_mem), fn, path


def test_samples_account_for_every_warp_cycle_and_map_to_ptx_lines():
    stats, fn, path = _launch("gemm_tiled_f32")
    rows = stats.metrics["xcc__pc_samples"]
    assert all(len(r) == 1 + len(STALL_REASONS) for r in rows)
    assert sum(sum(r[1:]) for r in rows) == stats.metrics["smsp__warp_cycles.sum"]
    assert sum(r[1] for r in rows) == stats.metrics["smsp__inst_executed.sum"]
    spots = hotspots(stats, fn.kernel, top=None)
    assert sum(h.cycles for h in spots) == stats.metrics["smsp__warp_cycles.sum"]
    assert [h.cycles for h in spots] == sorted((h.cycles for h in spots), reverse=True)
    lines = path.read_text().splitlines()
    fma = [h for h in spots if h.line and "fma.rn.f32" in lines[h.line - 1]]
    assert fma and all(h.instructions == ["FFMA"] for h in fma)
    text = format_hotspots(spots[:5], lines)
    assert text.splitlines()[0].split()[:3] == ["cycles%", "line", "issued"] and len(text.splitlines()) == 6


def test_cli_hotspots(capsys):
    path = ptx_path(CASES_BY_NAME["saxpy"], "sm_80")
    rc = main(["run", str(path), "--kernel", "saxpy", "--grid", "4", "--block", "128", "s32:500", "f32:2",
               "zeros:float32[512]", "zeros:float32[512]", "--hotspots", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    table = out[out.index("cycles%"):].splitlines()
    assert len(table) == 4 and any("ld.global" in row or "fma" in row for row in table[1:])
    rc = main(["run", str(path), "--kernel", "saxpy", "--grid", "1", "--block", "32", "s32:1", "f32:2",
               "zeros:float32[32]", "zeros:float32[32]", "--hotspots", "3", "--engine", "ir"])
    assert rc == 2
