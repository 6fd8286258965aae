"""Autotuning on the cycle model (issue 17): ``fn.autotune``, the tuning record in the JIT cache,
``rt.load_module(..., autotuned=True)``, ``@xcc.autotune`` and ``xcc tune``."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import xcc
from xcc import runtime as rt
from xcc.cli import main
from xcc.diagnostics import XccError
from xcc.runtime import jit, tuning
from xcc.tune import record
from xcc.tune.search import winner
from xcc.tune.space import default_space, options_for, space_of

ROOT = Path(__file__).resolve().parents[1]

# y[t] = sum over j < k of x[t * k + j]: a loop whose trip count is an argument (unrolling and specialisation
# change its cycles; the additions keep their order, so every correct build is bit-exact).
ROWSUM = """.version 7.0
.target sm_80
.address_size 64

.visible .entry rowsum(.param .u32 k, .param .u64 x, .param .u64 y)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<9>;
    ld.param.u32 %r1, [k];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r2, %tid.x;
    mul.lo.s32 %r3, %r2, %r1;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r4, 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra STORE;
LOOP:
    add.s32 %r5, %r3, %r4;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f2, [%rd6];
    add.f32 %f1, %f1, %f2;
    add.s32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r1;
    @%p2 bra LOOP;
STORE:
    mul.wide.u32 %rd7, %r2, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.f32 %f3, [%rd8];
    add.f32 %f1, %f1, %f3;
    st.global.f32 [%rd8], %f1;
    ret;
}
"""
K, THREADS = 16, 64
SPACE = {"unroll.factor": [1, 4], "post_schedule": [True, False], "specialize": [False, True]}


@pytest.fixture(autouse=True)
def _fresh_jit_cache():
    """The process's JIT cache follows each test's XCC_CACHE_DIR (conftest's fixture)."""
    jit._cache = None
    yield
    if jit._cache is not None:
        jit._cache.close()
    jit._cache = None


def _launch(tmp_path: Path, **load):
    src = tmp_path / "rowsum.ptx"
    src.write_text(ROWSUM)
    fn = rt.load_module(str(src), **load).get_function("rowsum")
    x = rt.to_device(np.random.default_rng(0).random(K * THREADS, dtype=np.float32))
    y = rt.to_device(np.arange(THREADS, dtype=np.float32))  # read and written: y += row sums
    return fn, ((1, 1, 1), (THREADS, 1, 1), [np.uint32(K), x, y])


def test_winner_is_the_argmin_of_the_candidates(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    res = fn.autotune(grid, block, args, budget=20, space=SPACE, progress=False)
    assert isinstance(res, xcc.TuneResult) and res.strategy == "exhaustive" and len(res.candidates) == 8
    assert res.candidates[0].config == {"unroll.factor": 1, "post_schedule": True, "specialize": False}
    assert res.baseline_cycles == res.candidates[0].cycles
    assert res.cycles == min(c.cycles for c in res.candidates) and res.config == winner(list(res.candidates)).config
    assert res.cycles < res.baseline_cycles  # specialising k = 16 unrolls the loop
    assert all(c.problem is None for c in res.candidates)


def test_buffers_are_restored_before_every_candidate(tmp_path):
    """y is read and written (y += ...): a candidate that started from another's output would differ from the
    plain build and score infinity; none does, and the caller's buffers are as they were."""
    fn, (grid, block, args) = _launch(tmp_path)
    before = args[2].copy_to_host()
    res = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    assert all(math.isfinite(c.cycles) for c in res.candidates)
    assert np.array_equal(args[2].copy_to_host(), before)
    stats = fn.launch(grid, block, args)  # the tuned binary, right result
    assert stats.cycles == res.cycles
    x = args[1].copy_to_host().reshape(THREADS, K)
    want = before.copy()
    for t in range(THREADS):
        acc = np.float32(0)
        for j in range(K):
            acc = np.float32(acc + x[t, j])
        want[t] = np.float32(acc + before[t])
    assert np.array_equal(args[2].copy_to_host(), want)


def _broken(variant: str) -> str:
    if variant == "wrong":  # a miscompile: the loaded value is doubled
        return ROWSUM.replace("add.f32 %f1, %f1, %f2;", "add.f32 %f1, %f1, %f2;\n    add.f32 %f1, %f1, %f2;")
    if variant == "runaway":  # never leaves the loop
        return ROWSUM.replace("@%p2 bra LOOP;", "bra LOOP;")
    return ROWSUM.replace("st.global.f32 [%rd8], %f1;", "st.global.f32 [%rd3+1048576], %f1;")  # out of bounds


def test_a_candidate_that_differs_faults_or_runs_away_scores_infinity(tmp_path, monkeypatch):
    """A test-only miscompile: the builds with max_registers 128 / 96 / 64 are given a wrong / runaway /
    faulting kernel; each scores infinity with its cause, and the winner is the plain build."""
    real = tuning.compile_kernel
    bad = {128: "wrong", 96: "runaway", 64: "fault"}

    def compile_kernel(sources, kernel, options, machine):
        if options.max_registers in bad:
            sources = [dataclasses.replace(sources[0], text=_broken(bad[options.max_registers]))]
        return real(sources, kernel, options, machine)

    monkeypatch.setattr(tuning, "compile_kernel", compile_kernel)
    fn, (grid, block, args) = _launch(tmp_path)
    res = fn.autotune(grid, block, args, budget=4, space={"max_registers": [255, 128, 96, 64]}, progress=False)
    scores = {c.config["max_registers"]: c for c in res.candidates}
    assert math.isfinite(scores[255].cycles) and res.config == {"max_registers": 255}
    assert scores[128].cycles == math.inf and "differs from the plain build" in scores[128].problem
    assert scores[96].cycles == math.inf and "scheduler steps" in scores[96].problem
    assert scores[64].cycles == math.inf and scores[64].problem


def test_tuning_twice_gives_the_same_winner(tmp_path, monkeypatch):
    """The default space with a budget below its size (greedy, then the seeded evolutionary search), in two
    empty caches: the same candidates in the same order, the same winner."""
    runs = []
    for i in range(2):
        monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path / f"cache{i}"))
        jit._cache = None
        fn, (grid, block, args) = _launch(tmp_path)
        res = fn.autotune(grid, block, args, budget=14, progress=False)
        assert not res.from_cache and len(res.candidates) == 14
        runs.append(res)
    assert runs[0].config == runs[1].config and runs[0].cycles == runs[1].cycles
    assert [c.config for c in runs[0].candidates] == [c.config for c in runs[1].candidates]
    assert runs[0].strategy == "greedy+evolutionary"


_SECOND = """
import json, sys
import numpy as np
from xcc import runtime as rt
compiled = []
def hook(request, compile):
    data = compile()
    compiled.append(not request.hit)
    return data
rt.jit_hooks.register(hook)
mod = rt.load_module(sys.argv[1], autotuned=True)
fn = mod.get_function("rowsum")
x = rt.to_device(np.load(sys.argv[2])); y = rt.to_device(np.arange(64, dtype=np.float32))
tuned = fn.launch((1, 1, 1), (64, 1, 1), [np.uint32(16), x, y]).cycles
other = fn.launch((1, 1, 1), (32, 1, 1), [np.uint32(16), x, y]).cycles  # another shape: the plain build
res = fn.autotune((1, 1, 1), (64, 1, 1), [np.uint32(16), x, y], budget=8, space=json.loads(sys.argv[3]))
print(json.dumps({"tuned": tuned, "compiled": compiled, "from_cache": res.from_cache, "cycles": res.cycles,
                  "other": other}))
"""


def test_a_second_process_launches_the_tuned_binary_without_searching(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    res = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    assert res.config != res.defaults and res.cycles < res.baseline_cycles
    plain32 = rt.load_module(str(tmp_path / "rowsum.ptx")).get_function("rowsum").launch(
        grid, (32, 1, 1), args).cycles
    np.save(tmp_path / "x.npy", args[1].copy_to_host())
    out = subprocess.run([sys.executable, "-c", _SECOND, str(tmp_path / "rowsum.ptx"), str(tmp_path / "x.npy"),
                          json.dumps(SPACE)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["tuned"] == res.cycles and got["from_cache"] and got["cycles"] == res.cycles
    assert got["other"] == plain32
    assert not any(got["compiled"])  # every binary (tuned and plain) came from the cache


def test_machine_or_space_change_misses(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    first = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    assert fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False).from_cache
    other_space = dict(SPACE, **{"unroll.factor": [1, 2]})
    assert not fn.autotune(grid, block, args, budget=8, space=other_space, progress=False).from_cache
    toml = (ROOT / "backend" / "machines" / "xg1.toml").read_text()
    changed = tmp_path / "xg1_more_regs.toml"
    changed.write_text(toml + "\n# a comment changes nothing but the description's bytes\n")
    device = rt.Device(machine=str(changed))
    if device.machine.hash == rt.Device().machine.hash:
        pytest.skip("the machine hash ignores comments")
    src = tmp_path / "rowsum.ptx"
    fn2 = rt.load_module(str(src), device=device).get_function("rowsum")
    args2 = [args[0], rt.to_device(args[1].copy_to_host(), device), rt.to_device(args[2].copy_to_host(), device)]
    res = fn2.autotune(grid, block, args2, budget=8, space=SPACE, progress=False)
    assert not res.from_cache and res.key != first.key


def _corrupt(tmp_path, data: bytes) -> tuple:
    fn, (grid, block, args) = _launch(tmp_path)
    res = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    cache = jit.jit_cache()
    latest = record.record_key((ROWSUM.encode(),), "rowsum", jit._options_key(fn.module.options, False),
                               fn.device.machine.hash, (grid, block, 0), None)
    for key in (res.key, latest):
        assert cache._cache.get(key) is not None
        meta = json.loads(cache._cache.get(key, tag=True)[1])
        cache._cache.set(key, data, tag=json.dumps({**meta, "size": len(data)}).encode())  # bytes damaged alone
    return fn, grid, block, args


@pytest.mark.parametrize("data", [b"\x00garbage", b"[1, 2]", b'{"format": "xcc-tuning/1", "kernel": 3}'])
def test_a_corrupt_tuning_record_is_a_clear_error(tmp_path, data):
    _, grid, block, args = _corrupt(tmp_path, data)
    fn = rt.load_module(str(tmp_path / "rowsum.ptx"), autotuned=True).get_function("rowsum")
    with pytest.raises(record.TuningRecordError, match=r"tuning record [0-9a-f]{16} \(kernel 'rowsum'.*is "
                                                        r"corrupt: .*; it has been removed: tune again"):
        fn.launch(grid, block, args)
    fn.launch(grid, block, args)  # the record is gone: the plain build


def test_a_corrupt_record_is_searched_again_by_autotune_and_the_cli(tmp_path, capsys):
    fn, grid, block, args = _corrupt(tmp_path, b"not json")
    with pytest.warns(UserWarning, match="corrupt: not UTF-8 JSON.*searching again"):
        res = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    assert not res.from_cache
    assert main(["cache", "verify"]) == 0


def test_cache_verify_drops_a_corrupt_tuning_record(tmp_path, capsys):
    _corrupt(tmp_path, b"\xff\xfe")
    jit.jit_cache().close()
    assert main(["cache", "verify"]) == 1
    assert "a tuning record that is not UTF-8 JSON" in capsys.readouterr().out


def test_space_and_arguments_are_checked(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    with pytest.raises(XccError, match="unknown knob 'bogus'"):
        fn.autotune(grid, block, args, space={"bogus": [1]})
    with pytest.raises(XccError, match="pass 'unroll' has no option 'speed'"):
        fn.autotune(grid, block, args, space={"unroll.speed": [1]})
    with pytest.raises(XccError, match="first value of each knob must be the plain build's"):
        fn.autotune(grid, block, args, space={"post_schedule": [False, True]})
    with pytest.raises(XccError, match="budget must be a positive"):
        fn.autotune(grid, block, args, budget=0)
    with pytest.raises(XccError, match="argument 1 \\('x'\\) is an integer"):
        fn.autotune(grid, block, [args[0], int(args[1]), args[2]])


def test_default_space_plain_config_is_the_plain_build():
    from xcc.driver import CompileOptions

    for base in (CompileOptions(), CompileOptions(opt_level=2), CompileOptions(max_registers=64)):
        space = default_space(base, specialisable=True)
        assert options_for(space.defaults, base) is base
        assert space.size > 1000
    with pytest.raises(XccError, match="lists a value twice"):
        space_of({"unroll.factor": [1, 1]})


# ----------------------------------------------------------------------------------------- the decorator
def test_decorator_picks_the_fastest_config_and_retunes_on_a_new_key(tmp_path):
    src = tmp_path / "rowsum.ptx"
    src.write_text(ROWSUM)
    fn = rt.load_module(str(src)).get_function("rowsum")
    x = rt.to_device(np.ones(K * 256, dtype=np.float32))
    y = rt.to_device(np.zeros(256, dtype=np.float32))
    calls = []

    @xcc.autotune(configs=[xcc.Config({"THREADS": 64}), xcc.Config({"THREADS": 32}), xcc.Config({"THREADS": 256})],
                  key=["n"], restore_value=["y"])
    def rowsums(n, x, y, THREADS):
        calls.append((n, THREADS))
        return fn.launch((1, 1, 1), (THREADS, 1, 1), [np.uint32(n), x, y])

    rowsums(K, x, y)
    timings = rowsums.configs_timings
    assert len(timings) == 3 and rowsums.best_config == min(timings, key=timings.get)
    assert len(calls) == 4  # three configurations, then the call itself
    assert y.copy_to_host()[0] == K  # restored before each configuration: one call's worth
    rowsums(K, x, y)
    assert len(calls) == 5  # the same key: no tuning
    rowsums(K // 2, x, y)
    assert len(calls) == 9  # a new key value: tuned again
    assert set(rowsums.cache) == {(K,), (K // 2,)}


def test_decorator_needs_the_launch_results(tmp_path):
    @xcc.autotune(configs=[xcc.Config({"B": 1})], key=[])
    def nothing(B):
        return None

    with pytest.raises(XccError, match="must return its launches' results"):
        nothing()
    with pytest.raises(XccError, match="'m' is not an argument"):
        xcc.autotune(configs=[xcc.Config({"B": 1})], key=["m"])(lambda n, B: None)


def test_import_xcc_stays_light():
    code = ("import sys, xcc; assert 'xcc.tune' not in sys.modules; xcc.Config; xcc.TuneResult; xcc.autotune; "
            "print(sorted(m for m in sys.modules if m.startswith(('xcc.', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout.replace("'", '"')) == ["xcc.diagnostics", "xcc.tune", "xcc.tune.decorator",
                                                         "xcc.tune.result"]


# ----------------------------------------------------------------------------------------- xcc tune
def test_cli_tunes_then_finds_the_record(tmp_path, capsys):
    src = tmp_path / "rowsum.ptx"
    src.write_text(ROWSUM)
    np.save(tmp_path / "x.npy", np.ones(K * THREADS, dtype=np.float32))
    args = [str(src), "--kernel", "rowsum", "--grid", "1", "--block", str(THREADS), "--budget", "8",
            "--knob", "unroll.factor=1,4", "--knob", "specialize=false,true", "--no-progress", "u32:16",
            str(tmp_path / "x.npy"), f"zeros:float32[{THREADS}]"]
    assert main(["tune", *args, "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "search:          4 candidate builds, exhaustive" in out and "speedup:" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["cycles"] < doc["baseline_cycles"] and doc["changed"]
    jit._cache = None
    assert main(["tune", *args]) == 0
    assert "found in the JIT cache (no search)" in capsys.readouterr().out
    assert main(["tune", *args, "--profile", "record", "--knob", "profile_use=false,true"]) == 0
    assert "search:          8 candidate builds, exhaustive" in capsys.readouterr().out
    assert main(["tune", *args, "--profile", str(tmp_path / "missing.json")]) == 1
    assert "cannot read the profile" in capsys.readouterr().err


def test_cli_exit_codes(tmp_path, capsys):
    src = tmp_path / "rowsum.ptx"
    src.write_text(ROWSUM)
    base = [str(src), "--grid", "1", "--block", "64", "u32:16", "zeros:float32[1024]", "zeros:float32[64]"]
    assert main(["tune", *base, "--kernel", "rowsum", "--knob", "nope=1,2"]) == 1
    assert "unknown knob 'nope'" in capsys.readouterr().err
    assert main(["tune", *base, "--kernel", "missing"]) == 1
    assert main(["tune", *base, "--kernel", "rowsum", "--budget", "0"]) == 2
    assert main(["tune", *base, "--kernel", "rowsum", "--knob", "novalues"]) == 1
    assert main(["tune", str(src), "--kernel", "rowsum", "--grid", "1", "--block", "64", "u99:1"]) == 2


@pytest.mark.slow
def test_workers_and_a_cluster_give_the_same_result_as_in_process(tmp_path, capsys):
    fn, (grid, block, args) = _launch(tmp_path)
    local = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    fanned = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False, workers=2, retune=True)
    assert [c.cycles for c in local.candidates] == [c.cycles for c in fanned.candidates]
    assert local.config == fanned.config
    from dask.distributed import LocalCluster  # xcc tune --scheduler: an existing cluster

    np.save(tmp_path / "x.npy", args[1].copy_to_host())
    np.save(tmp_path / "y.npy", args[2].copy_to_host())
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert main(["tune", str(tmp_path / "rowsum.ptx"), "--kernel", "rowsum", "--grid", "1", "--block",
                     str(THREADS), "--budget", "8", "--retune", "--no-progress", "--scheduler",
                     cluster.scheduler_address, "--json", str(tmp_path / "r.json"), *(
                         f"--knob={k}={','.join(str(v).lower() for v in vs)}" for k, vs in SPACE.items()),
                     "u32:16", str(tmp_path / "x.npy"), str(tmp_path / "y.npy")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["config"] == local.config and doc["cycles"] == local.cycles and doc["candidates"] == 8


def test_record_text_is_json_not_pickle(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    res = fn.autotune(grid, block, args, budget=8, space=SPACE, progress=False)
    data = jit.jit_cache()._cache.get(res.key)
    doc = json.loads(data)
    assert doc["format"] == record.FORMAT and doc["config"] == res.config
    assert textwrap.shorten(str(res), 20)


def test_float_atomic_outputs_are_compared_with_a_tolerance():
    """Bit for bit, except floating-point buffers of a kernel with floating-point atomics (rtol/atol)."""
    base = {"problem": None, "cycles": 100, "steps": 10, "outputs": [np.float32([1.0, 2.0]), np.int32([1, 2])]}
    near = {"problem": None, "cycles": 90, "steps": 10,
            "outputs": [np.float32([1.0, np.nextafter(np.float32(2), np.float32(3))]), np.int32([1, 2])]}
    for atomics, want in ((False, math.inf), (True, 90.0)):
        state = {"baseline": None, "steps": 0}
        assert tuning._score(base, state, None, atomics, 1e-5, 1e-6) == (100.0, None)
        assert tuning._score(near, state, None, atomics, 1e-5, 1e-6)[0] == want
    assert tuning._FLOAT_ATOMIC.search("atom.global.add.f32 %f1, [%rd1], %f2;")
    assert tuning._FLOAT_ATOMIC.search("red.global.add.noftz.bf16x2 [%rd1], %r1;")
    assert not tuning._FLOAT_ATOMIC.search("atom.global.add.u32 %r1, [%rd1], 1;")


def test_profile_use_is_a_knob_and_the_record_carries_the_profile(tmp_path):
    fn, (grid, block, args) = _launch(tmp_path)
    with pytest.raises(XccError, match="'profile_use' needs a profile"):
        fn.autotune(grid, block, args, space={"profile_use": [False, True]})
    before = args[2].copy_to_host()
    res = fn.autotune(grid, block, args, budget=4, space={"profile_use": [False, True]}, profile=True,
                      progress=False)
    assert [c.config["profile_use"] for c in res.candidates] == [False, True]
    assert np.array_equal(args[2].copy_to_host(), before)  # the profile was recorded on a copy
    if res.config["profile_use"]:
        assert isinstance(res.options["profile_use"], dict)  # the profile itself, for any process
    again = rt.load_module(str(tmp_path / "rowsum.ptx"), autotuned=True).get_function("rowsum")
    assert again.launch(grid, block, args).cycles == res.cycles
