"""Timelines (issue 20): ``rt.trace`` / ``xcc run --trace`` / ``XCC_TRACE`` in modelled time, written as Chrome
trace-event JSON (checked here against the format's documented schema) and as Nsight Systems' SQLite export
schema (queried with the SQL of nsys's reports).

The JSON checker follows Google's "Trace Event Format" document: the JSON Object Format (``traceEvents``,
``displayTimeUnit`` ``ms`` or ``ns``); the fields each phase requires (``X`` complete events: ``name``, ``ts``,
``dur``, ``pid``, ``tid``; ``M`` metadata: ``process_name``/``thread_name`` with ``args.name``; ``C`` counters:
``name``, ``ts``, ``pid`` and numeric ``args``; flow ``s``/``f``: ``id``, ``cat``, ``ts``, ``pid``, ``tid``,
``bp`` ``e`` binding a flow end to its enclosing slice); complete events on one thread must nest; a flow's
start and end each lie inside a slice of their thread, and every flow id has one start and one end.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.cli import main
from xcc.diagnostics import XccError

ROOT = Path(__file__).resolve().parents[1]
VADD = ROOT / "examples" / "vector_add_grid_stride.sm_90.ptx"
VADD_NAME = "_Z22vector_add_grid_strideiPKfS0_Pf"
SAXPY = ROOT / "examples" / "saxpy.sm_90.ptx"
CLOCK_MHZ = 1755  # xg1's [sm] clock_mhz
PHASES = {"X", "M", "C", "s", "t", "f", "B", "E", "i", "I"}
EPS = 1e-6  # microseconds: timestamps are printed to the nanosecond


# ------------------------------------------------------------------------------------- the checker
def _number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v


def check_trace_events(doc) -> dict:
    """Check ``doc`` against the trace-event format; returns the complete events by (pid, tid)."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "JSON Object Format"
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    names: dict[tuple, str] = {}
    slices: dict[tuple, list] = {}
    flows: dict[object, dict[str, list]] = {}
    for e in doc["traceEvents"]:
        assert isinstance(e, dict) and e.get("ph") in PHASES, e
        ph = e["ph"]
        assert isinstance(e.get("name"), str) and e["name"], e
        assert isinstance(e.get("pid"), int), e
        if ph == "M":
            assert e["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index"), e
            if e["name"].endswith("_name"):
                assert isinstance(e["args"]["name"], str), e
                names[(e["name"], e["pid"], e["tid"] if e["name"] == "thread_name" else None)] = e["args"]["name"]
            continue
        assert _number(e.get("ts")) and e["ts"] >= 0, e
        if ph == "X":
            assert isinstance(e.get("tid"), int) and _number(e.get("dur")) and e["dur"] >= 0, e
            assert isinstance(e.get("args", {}), dict) and isinstance(e.get("cat", ""), str), e
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif ph == "C":
            assert isinstance(e.get("args"), dict) and e["args"], e
            assert all(_number(v) for v in e["args"].values()), e
        elif ph in "stf":
            assert isinstance(e.get("id"), int | str) and isinstance(e.get("cat"), str), e
            assert isinstance(e.get("tid"), int), e
            assert ph != "f" or e.get("bp", "e") == "e", e
            flows.setdefault(e["id"], {}).setdefault(ph, []).append(e)
    for (pid, tid), evs in slices.items():  # named, and nested on each thread
        assert ("process_name", pid, None) in names and ("thread_name", pid, tid) in names, (pid, tid)
        stack: list = []
        for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - EPS:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + EPS, f"{e} overlaps {top} without nesting"
            stack.append(e)
    for fid, ends in flows.items():  # one start and one end, each inside a slice of its thread
        assert len(ends.get("s", [])) == 1 and len(ends.get("f", [])) == 1, (fid, ends)
        for e in (ends["s"][0], ends["f"][0]):
            assert any(x["ts"] - EPS <= e["ts"] <= x["ts"] + x["dur"] + EPS
                       for x in slices.get((e["pid"], e["tid"]), [])), f"flow {fid} end outside any slice: {e}"
    return slices


# ------------------------------------------------------------------------------------- the program
def two_streams(n: int = 4096):
    """Two streams, copies and three launches of example kernels (vector add on each stream, then saxpy on
    the second); returns (the timeline, the results, the launches' statistics)."""
    a, b = np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)
    with rt.range("load"):
        vadd = rt.load_module(VADD).get_function(VADD_NAME)
        saxpy = rt.load_module(SAXPY).get_function("saxpy")
    s1, s2 = rt.Stream(), rt.Stream()
    with rt.range("upload"):
        da, db = rt.to_device(a), rt.to_device(b)
        c1, c2 = rt.empty(n), rt.empty(n)
    with rt.range("compute"):
        p1 = vadd.launch((1, 1, 1), (128, 1, 1), (np.int32(n), da, db, c1), stream=s1)
        p2 = vadd.launch((1, 1, 1), (128, 1, 1), (np.int32(n), da, da, c2), stream=s2)
        p3 = saxpy.launch(((n + 255) // 256, 1, 1), (256, 1, 1), (np.int32(n), np.float32(3), da, c2), stream=s2)
        s1.synchronize()
        s2.synchronize()
    return (c1.copy_to_host(), c2.copy_to_host()), [p.stats for p in (p1, p2, p3)], (a, b)


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    with rt.trace(d / "prog.json") as tl:
        results, stats, (a, b) = two_streams()
    tl.write(d / "prog.sqlite", "sqlite")
    np.testing.assert_array_equal(results[0], a + b)
    np.testing.assert_array_equal(results[1], 3 * a + 2 * a)
    return tl, json.loads((d / "prog.json").read_text()), d / "prog.sqlite", stats


def _kernel_ns(cycles: int) -> int:
    return round(cycles * 1000 / CLOCK_MHZ)


# ------------------------------------------------------------------------------------- JSON
def test_json_trace_passes_the_format_check(traced):
    _, doc, _, stats = traced
    slices = check_trace_events(doc)
    kernels = [e for evs in slices.values() for e in evs if e.get("cat") == "kernel"]
    assert len(kernels) == len(stats) == 3
    for e, st in zip(sorted(kernels, key=lambda e: e["args"]["correlationId"]), stats):
        assert e["name"] == st.kernel and st.cycles > 0
        assert e["dur"] > 0 and round(e["dur"] * 1000) == _kernel_ns(st.cycles), (e, st.cycles)
        assert e["args"]["cycles"] == st.cycles and e["args"]["grid"] == list(st.grid)
    host = slices[(1, 1)]
    assert [e["name"] for e in host if e["cat"] == "nvtx"] == ["load", "upload", "compute"]
    calls = [e["name"] for e in host if e["cat"] == "cuda_api"]
    assert calls.count("cuLaunchKernel") == 3 and calls.count("cuMemcpyHtoD") == 2
    assert calls.count("cuMemcpyDtoH") == 2 and "cuStreamSynchronize" in calls and "cuModuleLoadData" in calls
    jit = [e for e in host if e["cat"] == "jit"]
    assert {e["args"]["kernel"] for e in jit} == {VADD_NAME, "saxpy"}
    assert all(e["args"]["jit"] in ("compile", "cache hit") for e in jit)
    launches = {e["args"]["correlationId"] for e in host if e["name"] == "cuLaunchKernel"}
    flow_ids = {e["id"] for e in doc["traceEvents"] if e["ph"] == "f" and e["cat"] == "flow"}
    assert launches <= flow_ids


def test_streams_overlap_and_synchronisation_waits(traced):
    tl, _, _, _ = traced
    k1, k2, k3 = [op for op in tl.ops if op.kind == "kernel"]
    assert k1.stream is not k2.stream and k2.stream is k3.stream
    assert k2.start < k1.end and k1.start < k2.end, "kernels on two streams overlap"
    assert k3.start >= k2.end, "work on one stream runs in order"
    sync = [c for c in tl.calls if c.name == "cuStreamSynchronize"]
    assert sync[-1].end >= k3.end and sync[0].end >= k1.end, "a synchronize waits for its stream"
    launch = next(c for c in tl.calls if c.corr == k1.corr)
    assert k1.start >= launch.end + 2000  # [host] launch_latency_us after the call
    copies = [op for op in tl.ops if op.kind == "memcpy"]
    h2d = copies[0]
    assert h2d.end - h2d.start == 1000 + round(16384 / 63.0)  # link latency + bytes over 63 GB/s
    assert all(c.end >= h2d.end for c in tl.calls if c.corr == h2d.corr), "a pageable copy makes the host wait"


def test_per_sm_residency_and_warp_state_counters(traced):
    _, doc, _, stats = traced
    ctas = [e for e in doc["traceEvents"] if e.get("cat") == "cta"]
    assert len(ctas) == 1 + 1 + 16  # one CTA per vector add, 16 of saxpy
    assert {e["args"]["sm"] for e in ctas} == set(range(16))
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    states = [e for e in counters if e["name"].startswith("warps by state")]
    assert len(states) == 6 and {"long_scoreboard", "selected"} <= set(states[0]["args"])
    saxpy = stats[2]
    start = next(e for e in states if e["args"]["selected"] and e["ts"] >= max(s["ts"] for s in states) - 1)
    assert start["args"]["selected"] == pytest.approx(
        saxpy.metrics["smsp__pcsamp_warps_issue_stalled_selected"] / saxpy.cycles, abs=1e-3)
    resident = [e["args"]["CTAs"] for e in counters if e["name"].startswith("resident CTAs")]
    assert max(resident) == 16 and resident[-1] == 0


# ------------------------------------------------------------------------------------- SQLite
def _median_stdev(con):
    """nsys registers median() and stdev() as SQL functions for its reports; so does a script that runs them."""
    class Agg:
        def __init__(self):
            self.v = []

        def step(self, x):
            self.v.append(x)

    class Median(Agg):
        def finalize(self):
            return statistics.median(self.v)

    class Stdev(Agg):
        def finalize(self):
            return statistics.stdev(self.v) if len(self.v) > 1 else 0.0

    con.create_aggregate("median", 1, Median)
    con.create_aggregate("stdev", 1, Stdev)


# The query of nsys's cuda_gpu_kern_sum report (its stats scripts), with demangledName as the name column
KERN_SUM = """
WITH summary AS (
    SELECT coalesce(demangledName, demangledName) AS nameId, sum(end - start) AS total, count(*) AS num,
           avg(end - start) AS avg, median(end - start) AS med, min(end - start) AS min,
           max(end - start) AS max, stdev(end - start) AS stddev,
           printf('%4d %4d %4d', gridX, gridY, gridZ) AS grid, printf('%4d %4d %4d', blockX, blockY, blockZ) AS block
    FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, grid, block),
totals AS (SELECT sum(total) AS total FROM summary)
SELECT round(summary.total * 100.0 / (SELECT total FROM totals), 1) AS "Time:ratio_%", summary.total AS "Total Time:dur_ns",
       summary.num AS "Instances", round(summary.avg, 1) AS "Avg:dur_ns", round(summary.med, 1) AS "Med:dur_ns",
       summary.min AS "Min:dur_ns", summary.max AS "Max:dur_ns", round(summary.stddev, 1) AS "StdDev:dur_ns",
       grid AS "GridXYZ", block AS "BlockXYZ", ids.value AS "Name"
FROM summary LEFT JOIN StringIds AS ids ON ids.id == summary.nameId ORDER BY 2 DESC
"""


def test_sqlite_kernel_summary_as_nsys_reports_it(traced):
    _, _, db, stats = traced
    con = sqlite3.connect(db)
    _median_stdev(con)
    rows = con.execute(KERN_SUM).fetchall()
    vadd = sorted(_kernel_ns(st.cycles) for st in stats[:2])
    assert [(r[2], r[1], r[10]) for r in rows] == [(2, sum(vadd), VADD_NAME), (1, _kernel_ns(stats[2].cycles), "saxpy")]
    assert (rows[0][5], rows[0][6], rows[0][4]) == (vadd[0], vadd[1], sum(vadd) / 2)  # min, max, median
    assert rows[0][8] == "   1    1    1" and rows[1][9] == " 256    1    1"
    assert round(sum(r[0] for r in rows)) == 100


def test_sqlite_runtime_calls_correlate_with_their_kernels_and_copies(traced):
    tl, _, db, _ = traced
    con = sqlite3.connect(db)
    joined = con.execute("""
        SELECT r.start, r.end, rn.value, k.start, k.end, kn.value, k.streamId, k.registersPerThread
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON r.correlationId = k.correlationId
        JOIN StringIds AS rn ON rn.id = r.nameId JOIN StringIds AS kn ON kn.id = k.shortName ORDER BY k.correlationId
    """).fetchall()
    assert [(j[2], j[5]) for j in joined] == [("cuLaunchKernel", VADD_NAME), ("cuLaunchKernel", VADD_NAME),
                                               ("cuLaunchKernel", "saxpy")]
    assert all(j[1] <= j[3] for j in joined) and joined[0][6] != joined[1][6] and joined[0][7] > 0
    copies = con.execute("""
        SELECT o.label, m.bytes, m.end - m.start, rn.value FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
        JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = m.correlationId JOIN StringIds AS rn ON rn.id = r.nameId
        ORDER BY m.start""").fetchall()
    assert [(c[0], c[1], c[3]) for c in copies] == [("Host-to-Device", 16384, "cuMemcpyHtoD")] * 2 + [
        ("Device-to-Host", 16384, "cuMemcpyDtoH")] * 2
    nvtx = con.execute("SELECT text, end - start FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start").fetchall()
    assert [t for t, _ in nvtx] == ["load", "upload", "compute"] and all(d > 0 for _, d in nvtx)
    gpu = con.execute("SELECT name, smCount, clockRate FROM TARGET_INFO_GPU").fetchall()
    assert gpu == [("xcc emulated xg1", 132, CLOCK_MHZ * 1000)]


# ------------------------------------------------------------------------------------- the driver API
def test_driver_api_copy_overlaps_a_kernel_on_another_stream(tmp_path):
    from xcc.runtime import driver as cuda

    def ok(r):
        assert r[0] == cuda.CUresult.CUDA_SUCCESS, cuda.last_error_message()
        return None if len(r) == 1 else r[1] if len(r) == 2 else r[1:]

    n, big = 1024, 1 << 20
    with rt.trace(tmp_path / "drv.sqlite") as tl:
        ok(cuda.cuInit(0))
        ctx = ok(cuda.cuCtxCreate(None, 0, ok(cuda.cuDeviceGet(0))))
        ptx = np.char.array(SAXPY.read_bytes())
        kernel = ok(cuda.cuModuleGetFunction(ok(cuda.cuModuleLoadData(ptx.ctypes.data)), b"saxpy"))
        s1, s2 = ok(cuda.cuStreamCreate(0)), ok(cuda.cuStreamCreate(0))
        host = np.ones(big // 4, np.float32)
        dbig, dx = ok(cuda.cuMemAlloc(big)), ok(cuda.cuMemAlloc(n * 4))
        ok(cuda.cuMemsetD32(dx, 0, n))
        ok(cuda.cuMemcpyHtoDAsync(dbig, host.ctypes.data, big, s1))
        values = [np.array(n, np.int32), np.array(2, np.float32), np.array([int(dx)], np.uint64),
                  np.array([int(dx)], np.uint64)]
        params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        ok(cuda.cuLaunchKernel(kernel, 4, 1, 1, 256, 1, 1, 0, s2, params.ctypes.data, 0))
        ok(cuda.cuStreamSynchronize(s1))
        ok(cuda.cuCtxDestroy(ctx))
    copy, kern = (next(op for op in tl.ops if op.kind == k) for k in ("memcpy", "kernel"))
    assert copy.end - copy.start == 1000 + round(big / 63.0) and kern.start < copy.end, "copy and kernel overlap"
    sync = next(c for c in tl.calls if c.name == "cuStreamSynchronize")
    assert sync.end == copy.end
    con = sqlite3.connect(tmp_path / "drv.sqlite")
    rows = con.execute("""SELECT s.value, k.streamId, m.streamId FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId JOIN StringIds AS s ON s.id = r.nameId,
        CUPTI_ACTIVITY_KIND_MEMCPY AS m""").fetchall()
    assert rows[0][0] == "cuLaunchKernel" and rows[0][1] != rows[0][2]
    assert con.execute("SELECT bytes, memKind FROM CUPTI_ACTIVITY_KIND_MEMSET").fetchall() == [(4 * n, 3)]


# ------------------------------------------------------------------------------------- the ways in
def test_xcc_run_trace_and_its_errors(tmp_path, capsys):
    argv = ["run", str(SAXPY), "--kernel", "saxpy", "--grid", "4", "--block", "256", "s32:1024", "f32:2",
            "zeros:float32[1024]", "zeros:float32[1024]"]
    assert main(argv + ["--trace", str(tmp_path / "run.json")]) == 0
    check_trace_events(json.loads((tmp_path / "run.json").read_text()))
    assert main(argv + ["--trace", str(tmp_path / "run.db"), "--format", "sqlite"]) == 0
    con = sqlite3.connect(tmp_path / "run.db")
    assert con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone() == (1,)
    capsys.readouterr()
    assert main(argv + ["--trace", str(tmp_path / "missing" / "run.json")]) == 1
    assert "directory" in capsys.readouterr().err and not (tmp_path / "missing").exists()
    assert main(argv + ["--format", "sqlite"]) == 2


def test_a_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "a.json"
    target.mkdir()  # a directory where the trace should go: the final rename fails
    with pytest.raises(XccError, match="cannot write trace"):
        with rt.trace(target):
            rt.to_device(np.zeros(4, np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"] and not list(target.iterdir())
    with pytest.raises(XccError, match="does not exist"):
        with rt.trace(tmp_path / "nope" / "a.sqlite"):
            pass


def test_xcc_trace_environment_variable(tmp_path):
    out = tmp_path / "env.json"
    prog = ("import numpy as np; from xcc import runtime as rt\n"
            "with rt.range('copy'): rt.to_device(np.ones(8, np.float32)).copy_to_host()\n")
    env = {**os.environ, "XCC_TRACE": str(out)}
    subprocess.run([sys.executable, "-c", prog], env=env, check=True, timeout=120)
    names = [e["name"] for e in check_trace_events(json.loads(out.read_text()))[(1, 1)]]
    assert names == ["copy", "cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH"]
    bad = subprocess.run([sys.executable, "-c", "import xcc.runtime"], capture_output=True, text=True, timeout=120,
                         env={**env, "XCC_TRACE": str(tmp_path / "no" / "t.json")})
    assert bad.returncode == 1 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr


def test_range_as_a_decorator_and_outside_a_trace(tmp_path):
    @rt.range("step")
    def step():
        return rt.to_device(np.ones(4, np.float32))

    step()  # no trace: nothing recorded, nothing fails
    with rt.trace(tmp_path / "r.json") as tl:
        step()
    assert [r[0] for r in tl.ranges] == ["step"] and tl.ranges[0][2] > tl.ranges[0][1]


@pytest.mark.parametrize("old,new,key", [
    ("link_bandwidth_gbs = 63.0", "link_bandwidth_gbs = 0", "[host] link_bandwidth_gbs"),
    ("launch_api_us = 3.0", 'launch_api_us = "3"', "[host] launch_api_us"),
    ('link = "PCIe 5.0 x16"', "link = 5", "[host] link"),
    ("sync_us = 1.0 ", "", "[host] sync_us"),
])
def test_a_bad_or_missing_host_figure_is_named(tmp_path, old, new, key):
    from harness import modified_description

    from xcc.backend.machine import load_machine

    with pytest.raises(XccError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_machine(modified_description(tmp_path, "bad", {old: new}))


def test_host_figures_do_not_change_a_kernels_cycles(tmp_path):
    from harness import modified_description

    slow = rt.Device(machine=modified_description(tmp_path, "slow", {"link_bandwidth_gbs = 63.0": "link_bandwidth_gbs = 1.0",
                                                                      "launch_api_us = 3.0": "launch_api_us = 300.0"}))
    cycles = []
    for device in (rt.Device(), slow):
        fn = rt.load_module(SAXPY, device=device).get_function("saxpy")
        x = rt.to_device(np.ones(256, np.float32), device)
        cycles.append(fn.launch((1, 1, 1), (256, 1, 1), (np.int32(256), np.float32(2), x, x)).cycles)
    assert cycles[0] == cycles[1]
