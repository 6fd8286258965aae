"""The advisor (xcc.sim.perf.advisor): on kernels built to have one known bottleneck each
(examples/advisor.cu, examples/transpose_shared.cu, -lineinfo builds), the top finding names the cause,
its estimated speedup (the cycle model re-run with the cause idealised) is within 10% of the speedup the
hand-fixed kernel measures on the same model, and its locations name the CUDA source line.

The launches run on xg1 cut to 4 SMs (its device-wide L2 and DRAM bandwidths scaled alike), so that a
kernel fills a few waves in a few thousand threads; docs/advisor.md gives the same comparisons on the
full xg1.  The what-if switches themselves are checked to change nothing when off.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.sim.perf.idealise import Idealise

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
SMS = 4


@pytest.fixture(scope="module")
def machine_file(tmp_path_factory) -> Path:
    text = (ROOT / "backend" / "machines" / "xg1.toml").read_text()
    scale = SMS / 132
    text = re.sub(r"(?m)^count = 132", f"count = {SMS}", text)
    for key in ("l2_bytes_per_cycle", "dram_bytes_per_cycle"):
        text = re.sub(rf"(?m)^{key} = (\d+)", lambda m: f"{key} = {max(1, round(int(m.group(1)) * scale))}", text)
    path = tmp_path_factory.mktemp("machine") / "xg1_4sm.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def device(machine_file):
    return rt.Device(machine=str(machine_file))


def _line(cu: str, marker: str) -> int:
    """The 1-based line of ``cu`` (a file of examples/) holding ``marker``."""
    lines = (EX / cu).read_text().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if marker in text)


def _launch(device, ptx, name, grid, block, args, out: list | None = None):
    """Launch ``name``; ``out`` (if given) receives the arguments' contents after the launch."""
    fn = rt.load_module(str(EX / ptx), device=device).get_function(name)
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    stats = fn.launch(grid, block, dev)
    if out is not None:
        out += [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]
    return stats


def _step(k: np.ndarray, r: int, v: np.ndarray) -> np.ndarray:
    """advisor.cu's step(), in float32 (nvcc contracts some of it to fma: compared with a tolerance)."""
    f = np.float32
    cases = [v * f(0.999) + f(0.25), np.minimum(v, f(4)) + f(0.5), v * v * f(0.125), np.maximum(v, f(-4)) - f(0.75),
             v - f(0.375), np.abs(v) * f(0.5), v * f(1.5), -v + f(1)]
    return np.choose((k + r) & 7, cases).astype(np.float32)


def _chain_ref(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    for r in range(16):
        v = _step(k, r, v)
    return v


def _reference(case: str, name: str, a: list, got: list) -> None:
    """The outputs of kernel ``name`` of ``case`` (arguments ``a`` before, ``got`` after the launch) against numpy."""
    if case == "transpose":
        np.testing.assert_array_equal(got[3].reshape(256, 256), a[2].reshape(256, 256).T)
    elif case == "strided":
        i = np.arange(N, dtype=np.int64)
        j = (i & 31) * (N >> 5) + (i >> 5) if name == "strided_copy" else i
        np.testing.assert_array_equal(got[2], a[1][j])
    elif case == "divergent":
        t = np.arange(N) % 256
        k = t & 7 if name == "branch_chain" else (t >> 5) & 7
        np.testing.assert_allclose(got[2], _chain_ref(a[1], k), rtol=1e-4, atol=1e-5)
    elif case == "occupancy":
        j = np.arange(a[0])
        for _ in range(int(a[1])):
            j = a[3][j]
        np.testing.assert_array_equal(got[5], j.astype(np.float32))
    else:
        np.testing.assert_array_equal(got[3], a[1] * a[2] + a[3])


RNG = np.random.default_rng(20)
N = 64 * 256


def _copy():
    return [np.uint32(N), RNG.random(N, dtype=np.float32), np.zeros(N, np.float32)]


def _chain():
    return [np.int32(N), RNG.random(N, dtype=np.float32), np.zeros(N, np.float32)]


def _chase():
    n = 32 * 256
    return [np.int32(n), np.int32(8), np.int32(0), ((np.arange(n) + 1024) % n).astype(np.int32),
            np.zeros(1, np.float32), np.zeros(n, np.float32)]


def _scale():
    n = 32 * 256 * 2
    return [np.int32(n), np.float32(2.0), RNG.random(n, dtype=np.float32), np.zeros(n, np.float32)]


def _transpose():
    r = c = 256
    return [np.int32(r), np.int32(c), RNG.random(r * c, dtype=np.float32), np.zeros(r * c, np.float32)]


# rule, PTX, kernel, fixed kernel, grid, fixed grid, block, arguments, (source, the line the cause is on)
CASES = {
    "transpose": ("SharedMemoryConflicts", "transpose_shared.sm_80.lineinfo.ptx", "_Z25transpose_shared_unpaddediiPKfPf",
                  "_Z16transpose_sharediiPKfPf", (8, 8), (8, 8), (32, 8), _transpose,
                  ("transpose_shared.cu", "out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j]")),
    "strided": ("UncoalescedGlobalAccess", "advisor.sm_80.lineinfo.ptx", "strided_copy", "coalesced_copy", 64, 64, 256,
                _copy, ("advisor.cu", "        out[i] = in[j];")),
    "divergent": ("ThreadDivergence", "advisor.sm_80.lineinfo.ptx", "branch_chain", "branch_chain_uniform", 64, 64, 256,
                  _chain, ("advisor.cu", ("float step(int k", "default: return path<7>(v);"))),
    "occupancy": ("TheoreticalOccupancy", "advisor.sm_80.lineinfo.ptx", "chase", "chase_fewer_live", 32, 32, 256,
                  _chase, ("advisor.cu", ("void chase_body(int n", "chase_body<true>(n, steps"))),
    "small_grid": ("LaunchConfiguration", "advisor.sm_80.lineinfo.ptx", "grid_stride_scale", "grid_stride_scale", 2,
                   32, 256, _scale, ("advisor.cu", "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;")),
}


def _cause_lines(cu: str, marker: str | tuple[str, str]) -> set[int]:
    """The lines of ``cu`` the cause is on: the line of ``marker``, or the lines from the first marker's to the
    second's."""
    if isinstance(marker, tuple):
        return set(range(_line(cu, marker[0]), _line(cu, marker[1]) + 1))
    return {_line(cu, marker)}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_top_finding_names_the_cause_and_its_speedup(device, case):
    rule, ptx, bad, good, grid, fixed_grid, block, args, (cu, marker) = CASES[case]
    a = args()
    got_before, got_after = [], []
    before = _launch(device, ptx, bad, grid, block, a, got_before)
    after = _launch(device, ptx, good, fixed_grid, block, a, got_after)
    _reference(case, bad, a, got_before)
    _reference(case, good, a, got_after)
    findings = before.advise()
    top = findings[0]
    measured = before.cycles / after.cycles
    assert top.rule == rule, [(f.rule, f.estimated_speedup) for f in findings]
    assert measured > 1.1, f"the fix must pay: {measured:.3f}"
    assert abs(top.estimated_speedup / measured - 1) <= 0.10, (top.estimated_speedup, measured)
    assert [f.estimated_speedup for f in findings] == sorted((f.estimated_speedup for f in findings), reverse=True)
    lines = _cause_lines(cu, marker)
    assert top.locations and all(loc[0].endswith(ptx) and loc[1] > 0 for loc in top.locations)
    assert any(src and src.endswith("/" + cu) and line in lines for _, _, src, line in top.locations), top.locations


def test_the_what_if_switches_off_change_nothing(device):
    """Idealise() (every switch off) replays exactly as the launch's own timing; a switch that finds nothing to
    idealise (no shared memory, no spills) changes nothing either."""
    st = _launch(device, "advisor.sm_80.ptx", "strided_copy", 32, 256,
                 [np.uint32(8192), RNG.random(8192, dtype=np.float32), np.zeros(8192, np.float32)])
    cycles, metrics = st.timed.time(Idealise())
    assert not Idealise() and Idealise(pipes=("fp64",))
    assert cycles == st.cycles and metrics["xcc__pc_samples"] == st.metrics["xcc__pc_samples"]
    assert st.timed.time(Idealise(bank_conflicts=True, spills=True, divergence=True))[0] == st.cycles
    assert st.timed.time(Idealise(uncoalesced=True))[0] < st.cycles


def test_findings_and_the_stats_report(device):
    """LaunchStats.advise() gives xcc.Finding values (frozen); the --stats report has an Advisor section; a
    launch without the cycle model has no findings."""
    import xcc

    st = _launch(device, "advisor.sm_80.lineinfo.ptx", "strided_copy", 32, 256,
                 [np.uint32(8192), RNG.random(8192, dtype=np.float32), np.zeros(8192, np.float32)])
    found = st.advise()
    assert found and all(isinstance(f, xcc.Finding) and f.estimated_speedup >= 1.0 for f in found)
    with pytest.raises(AttributeError):
        found[0].rule = "x"
    assert "Section: Advisor" in st.report() and found[0].rule in st.report()
    fn = rt.load_module(str(EX / "advisor.sm_80.ptx"), device=device).get_function("strided_copy")
    assert fn.launch(1, 32, [np.uint32(32), rt.to_device(np.zeros(32, np.float32), device),
                             rt.to_device(np.zeros(32, np.float32), device)], timing=False).advise() == []


def test_advise_cli_output(machine_file, tmp_path, capsys):
    """`xcc advise` takes `xcc run`'s arguments and prints the findings; --json prints them as JSON; without the
    cycle model (--no-timing, --engine ir) it is a usage error."""
    from xcc.cli import main

    src = tmp_path / "x.npy"
    np.save(src, np.arange(N, dtype=np.float32))
    base = ["advise", str(EX / "advisor.sm_80.lineinfo.ptx"), "--kernel", "strided_copy", "--grid", "64", "--block",
            "256", "--machine", str(machine_file), f"u32:{N}", str(src), f"zeros:float32[{N}]"]
    assert main([*base, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernel"] == "strided_copy" and data["cycles"] > 0
    found = data["findings"][0]
    assert found["rule"] == "UncoalescedGlobalAccess"
    assert found["estimated_speedup"] > 1.0 and found["locations"][0][0].endswith("advisor.sm_80.lineinfo.ptx")
    assert found["locations"][0][2].endswith("advisor.cu")
    assert found["locations"][0][3] == _line("advisor.cu", "        out[i] = in[j];")
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "[UncoalescedGlobalAccess]" in out and f"advisor.cu:{_line('advisor.cu', '        out[i] = in[j];')}" in out
    assert main([*base, "--no-timing"]) == 2
    assert main([*base, "--engine", "ir"]) == 2
    # xcc run --stats-json carries the same findings (the same schema) for a timed launch; none without timing
    stats = tmp_path / "stats.json"
    run = ["run", *base[1:], "--stats-json", str(stats)]
    assert main(run) == 0
    doc = json.loads(stats.read_text())
    assert doc["findings"] == data["findings"] and {k: doc[k] for k in data if k != "findings"} == \
        {k: data[k] for k in data if k != "findings"}
    page = tmp_path / "report.html"  # xcc report draws the findings of a --stats-json file
    assert main(["report", str(stats), "-o", str(page)]) == 0
    assert "UncoalescedGlobalAccess" in page.read_text() and "no findings" not in page.read_text()
    assert main([*run, "--no-timing"]) == 0 and "findings" not in json.loads(stats.read_text())
    assert main([*run, "--stats"]) == 0 and "[UncoalescedGlobalAccess] x" in capsys.readouterr().out
    # a kernel loaded from an .xbin keeps its line table: the same source lines (xcc.backend.lineinfo)
    xbin = tmp_path / "advisor.xbin"
    assert main(["compile", "-o", str(xbin), str(EX / "advisor.sm_80.lineinfo.ptx")]) == 0
    capsys.readouterr()
    assert main(["advise", str(xbin), *base[2:], "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["findings"][0]
    assert got["rule"] == "UncoalescedGlobalAccess" and [loc[1:] for loc in got["locations"]] == \
        [loc[1:] for loc in found["locations"]]


def test_register_spilling_estimate_matches_the_unspilled_build():
    """On xg1, chase's rare path built with at most 32 registers spills; run on that path (wide = 1; its rows
    are read uncoalesced too, which on the 4-SM machine's scaled-down DRAM would weigh more) the top finding is
    RegisterSpilling, at the spill instructions, and its estimate (the spills not issued) is within 10% of the
    speedup of the same kernel built without a register limit (56 registers, no spills; 16 blocks, so occupancy
    plays no part)."""
    n = 16 * 256
    rng = np.random.default_rng(3)
    vals = rng.random(n * 48, dtype=np.float32)
    args = [np.int32(n), np.int32(1), np.int32(1), np.zeros(n, np.int32), vals, np.zeros(n, np.float32)]
    runs = []
    for limit in (32, 255):
        device = rt.Device()
        fn = rt.load_module(str(EX / "advisor.sm_80.lineinfo.ptx"), device=device,
                            max_registers=limit).get_function("chase")
        out = rt.to_device(np.zeros(n, np.float32), device)
        dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args[:5]]
        runs.append((fn, fn.launch(n // 256, 256, [*dev, out])))
        v = vals.reshape(n, 48).astype(np.float64)
        s = np.zeros(n)
        for r in range(48):  # s = s * v[r] + v[47 - r], in float32 with fma contraction: a tolerance
            s = s * v[:, r] + v[:, 47 - r]
        np.testing.assert_allclose(out.copy_to_host(), s, rtol=1e-4)
    (spilled_fn, spilled), (_, plain) = runs
    assert spilled_fn.kernel.spill_bytes > 0
    top = spilled.advise()[0]
    assert top.rule == "RegisterSpilling", [(f.rule, f.estimated_speedup) for f in spilled.advise()]
    assert abs(top.estimated_speedup / (spilled.cycles / plain.cycles) - 1) <= 0.10
    assert any(src and src.endswith("/advisor.cu") for _, _, src, _ in top.locations)


def test_slow_pipe_limiter_names_the_sfu(device):
    """sfu_bound's fast exponentials keep the SFU pipe (a quarter rate) busy: the top finding is SlowPipeLimiter
    at the __expf lines, with the SFU at full rate measured as the estimate."""
    n = 64 * 256
    x = RNG.random(n, dtype=np.float32)
    got = []
    st = _launch(device, "advisor.sm_80.lineinfo.ptx", "sfu_bound", 64, 256, [np.int32(n), x, np.zeros(n, np.float32)],
                 got)
    ref = [x.astype(np.float64) + k for k in range(4)]
    for _ in range(16):
        ref = [np.exp(-v) for v in ref]
    np.testing.assert_allclose(got[2], sum(ref), rtol=1e-4)
    top = st.advise()[0]
    assert top.rule == "SlowPipeLimiter" and "sfu" in top.message and top.estimated_speedup > 1.3
    first = _line("advisor.cu", "a = __expf(-a);")
    assert {line for *_, line in top.locations} <= set(range(first, first + 4))
    assert st.timed.time(Idealise(pipes=("sfu",)))[0] == round(st.cycles / top.estimated_speedup)


def test_tail_wave_estimate_matches_whole_waves(device):
    """grid_stride_scale over 35 x 256 x 8 elements with 35 blocks is 1.09 waves of the 4-SM machine (8 blocks per
    SM): the last wave holds 3 blocks.  The same work in one whole wave (32 blocks; the fix is the launch, the
    grid-stride loop keeps the work) measures the speedup; LaunchConfiguration's estimate (the tail's work
    balanced over whole waves, Idealise(balance=True)) is within 10% of it, and AchievedOccupancy's is the same
    replay.  The CPIStall and SOLBottleneck estimates are their what-ifs' replays."""
    n = 35 * 256 * 8
    a = [np.int32(n), np.float32(2.0), RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)]
    runs = []
    for grid in (35, 32):
        got = []
        runs.append(_launch(device, "advisor.sm_80.lineinfo.ptx", "grid_stride_scale", grid, 256, a, got))
        _reference("small_grid", "grid_stride_scale", a, got)
    tail, whole = runs
    assert tail.metrics["launch__waves_per_multiprocessor"] == pytest.approx(35 / 32)
    found = {f.rule: f for f in tail.advise()}
    measured = tail.cycles / whole.cycles
    cfg = found["LaunchConfiguration"]
    assert tail.advise()[0].rule == "LaunchConfiguration"
    assert measured > 1.2 and "tail" in cfg.message
    assert abs(cfg.estimated_speedup / measured - 1) <= 0.10, (cfg.estimated_speedup, measured)
    assert found["AchievedOccupancy"].estimated_speedup == cfg.estimated_speedup
    stall = found["CPIStall"]  # the tail's long scoreboard stalls: LaunchConfiguration is their cause
    assert stall.estimated_speedup == cfg.estimated_speedup and "LaunchConfiguration's" in stall.message
    # the whole wave has no cause finding: CPIStall's and SOLBottleneck's estimates are their own what-ifs
    found = {f.rule: f for f in whole.advise()}
    stall = found["CPIStall"]
    assert "long_scoreboard" in stall.message and stall.estimated_speedup > 1.01  # bandwidth-bound: modest
    assert stall.estimated_speedup == pytest.approx(whole.cycles / whole.timed.time(Idealise(memory_latency=True))[0])
    sol = found["SOLBottleneck"]
    assert sol.message.startswith("memory-bound") and "dram" in sol.message
    assert sol.estimated_speedup == pytest.approx(whole.cycles / whole.timed.time(Idealise(throughput=("dram",)))[0])


def test_stall_what_ifs_and_the_cheap_report(device):
    """The bank-conflicted transpose: each stall what-if replays faster than the launch where its stalls are
    (barriers, the shared unit's queue); the --stats report names the findings without replaying (x ?, a hint)
    unless asked to measure them, and once measured (cached on the launch) shows the figures."""
    st = _launch(device, "transpose_shared.sm_80.lineinfo.ptx", "_Z25transpose_shared_unpaddediiPKfPf", (8, 8),
                 (32, 8), _transpose())
    assert st.metrics["smsp__pcsamp_warps_issue_stalled_barrier"] > 0
    for ideal in (Idealise(barriers=True), Idealise(lsu_queues=True)):
        assert st.timed.time(ideal)[0] < st.cycles
    cheap = st.report()
    assert "[SharedMemoryConflicts] x ?" in cheap and "xcc advise" in cheap
    assert not getattr(st.timed, "whatif", None)
    top = st.advise()[0]
    assert f"[SharedMemoryConflicts] x{top.estimated_speedup:.2f}" in st.report()
    assert f"[SharedMemoryConflicts] x{top.estimated_speedup:.2f}" in st.report(advise=True)
