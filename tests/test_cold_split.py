"""Profile use places spill code in cold blocks: live ranges split around the blocks a profile shows never ran
(xcc.backend.cold_split) and allocated over live ranges with holes (xcc.backend.regalloc_ranges).  Results stay
bit for bit those of the plain build and of the IR interpreter, on the launch profiled and on one that takes the
cold path; the hot loop keeps its registers; the allocation with holes is checked on corpus kernels too."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from kernel_cases import CASES_BY_NAME, ptx_path

import xcc.backend.codegen as codegen
from xcc import runtime as rt
from xcc.backend.isel import MBlock
from xcc.backend.minst import mi, new_vreg
from xcc.backend.regalloc_ranges import live_ranges, meet
from xcc.driver import CompileOptions, compile_module, read_source

ROOT = Path(__file__).resolve().parent.parent
PTX = str(ROOT / "examples" / "cold_path.sm_80.ptx")
N = 256


def _fresh_cache(monkeypatch, path) -> None:
    """Builds from here on compile again (into an empty JIT cache) instead of finding the earlier binaries."""
    from xcc.runtime import jit

    monkeypatch.setenv("XCC_CACHE_DIR", str(path))
    monkeypatch.setattr(jit, "_cache", None)


def _launch(fn, x):
    args = [np.int32(N), rt.to_device(x), rt.to_device(np.zeros(N, np.float32)), rt.to_device(np.zeros(N, np.int32))]
    stats = fn.launch((2, 1, 1), (128, 1, 1), args, profile=False)
    return stats, args[2].copy_to_host(), args[3].copy_to_host()


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    x = np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32)
    fn = rt.load_module(PTX, max_registers=20).get_function("rare_fixup")
    args = [np.int32(N), rt.to_device(x), rt.to_device(np.zeros(N, np.float32)), rt.to_device(np.zeros(N, np.int32))]
    res = fn.launch((2, 1, 1), (128, 1, 1), args, profile=True)
    assert not args[3].copy_to_host().any()  # the fix-up path never ran: its blocks are cold
    path = tmp_path_factory.mktemp("prof") / "cold.json"
    res.profile.save(str(path))
    return str(path), x


def _machine_code(profile_use=None, regs=20) -> str:
    import io

    out = io.StringIO()
    compile_module([read_source(PTX)], CompileOptions(opt_level=3, max_registers=regs, profile_use=profile_use),
                   print_after="control-codes", out=out)
    return out.getvalue()


def _spills_per_block(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    block = ""
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_.$0-9]+):", line)
        if m:
            block = m.group(1)
            counts.setdefault(block, 0)
        elif line.strip().startswith(("LDL", "STL")):
            counts[block] = counts.get(block, 0) + 1
    return counts


def test_spill_code_moves_into_the_cold_block(profile, monkeypatch):
    path, _ = profile
    split = _spills_per_block(_machine_code(path))
    monkeypatch.setattr(codegen, "_split_if_spilling", lambda *a: ([], set()))
    plain = _spills_per_block(_machine_code(path))
    # the loop block (L__BB0_2) and its latch keep their registers; the fix-up block (bb6) takes the spills
    assert split["L__BB0_2"] < plain["L__BB0_2"]
    assert split["bb6"] > plain["bb6"]
    hot = sum(n for b, n in split.items() if b != "bb6")
    assert hot < sum(n for b, n in plain.items() if b != "bb6")


@pytest.mark.parametrize("regs", [16, 20, 24])
def test_results_on_the_profiled_launch_and_on_the_cold_path(profile, regs):
    """The profiled launch, and one where every element overflows into the fix-up path, give the plain build's
    bits and the IR interpreter's (PTX semantics)."""
    path, x = profile
    hot_in = x
    cold_in = np.where(np.arange(N) % 3 == 0, np.float32(1e10), x).astype(np.float32)
    plain = rt.load_module(PTX, max_registers=regs).get_function("rare_fixup")
    pgo = rt.load_module(PTX, max_registers=regs, profile_use=path).get_function("rare_fixup")
    ir = rt.load_module(PTX, engine="ir").get_function("rare_fixup")
    for inp in (hot_in, cold_in):
        _, y0, f0 = _launch(plain, inp)
        _, y1, f1 = _launch(pgo, inp)
        _, y2, f2 = _launch(ir, inp)
        np.testing.assert_array_equal(y1.view(np.uint32), y0.view(np.uint32))
        np.testing.assert_array_equal(y1.view(np.uint32), y2.view(np.uint32))
        np.testing.assert_array_equal(f1, f0)
        np.testing.assert_array_equal(f1, f2)
    assert f1[::3].all()  # the cold path ran where the input overflowed


def test_fewer_modelled_cycles_than_without_the_split(profile, monkeypatch, tmp_path):
    """A comparison of two deterministic cycle-model figures (no timing): with the split the loop does not
    reload its coefficients."""
    path, x = profile
    with_split = _launch(rt.load_module(PTX, max_registers=20, profile_use=path).get_function("rare_fixup"), x)
    monkeypatch.setattr(codegen, "_split_if_spilling", lambda *a: ([], set()))
    _fresh_cache(monkeypatch, tmp_path)
    without = _launch(rt.load_module(PTX, max_registers=20, profile_use=path).get_function("rare_fixup"), x)
    np.testing.assert_array_equal(with_split[1], without[1])
    assert with_split[0].cycles < without[0].cycles


def test_no_split_without_spilling(profile):
    """With registers to spare the profile changes nothing about allocation: no copies are added."""
    path, _ = profile
    text = _machine_code(path, regs=255)
    assert not any(line.strip().startswith(("LDL", "STL")) for line in text.splitlines())


def test_live_ranges_have_holes():
    """``v`` read at the top of a block and written again at its end is dead in between; a value defined and
    never read takes its own position only."""
    v, w, dead = new_vreg(1), new_vreg(1), new_vreg(1)
    a = MBlock("a", [mi("MOV", d=v, b=w), mi("MOV", d=w, b=v)], ["b"])
    b = MBlock("b", [mi("IADD3", d=dead, a=w, b=w, c=w), mi("MOV", d=w, b=w), mi("MOV", d=v, b=w),
                     mi("MOV", d=w, b=v), mi("IADD3", d=w, a=v, b=w, c=w)], [])
    r = live_ranges([a, b])
    assert r[dead] == [(2, 2)]
    assert r[v] == [(0, 1), (4, 6)]
    assert meet(r[v], [(1, 1)]) and not meet(r[v], [(2, 3)])


def test_a_pair_written_half_at_a_time_is_live_between_the_halves():
    """Writing one half of a pair does not end what the pair held (the other half may have been written already):
    the range covers the gap between the two half writes (a hole there let another value take the register)."""
    from xcc.backend.minst import Half

    w, x = new_vreg(2), new_vreg(1)
    b = MBlock("b", [mi("MOV", d=Half(w, 0), b=x), mi("MOV", d=x, b=x), mi("MOV", d=Half(w, 1), b=x),
                     mi("IADD3", d=x, a=Half(w, 0), b=Half(w, 1), c=x)], [])
    assert live_ranges([b])[w] == [(0, 3)]


@pytest.mark.parametrize("regs", [16, 32])
@pytest.mark.parametrize("name", ["attention_row", "timestep_embedding", "gemm_tiled_f32", "layernorm_rows",
                                  "conv2d_nchw", "gemm_mma_m16n8k16", "gemm_wmma_f16_f32"])
def test_allocation_with_holes_on_the_corpus(name, regs, monkeypatch):
    """Every allocation made over live ranges with holes (forced on, at a register limit that spills) passes the
    allocation checker and runs bit for bit like the interval allocation."""
    import xcc.backend.spill as spill

    case = CASES_BY_NAME[name]
    path = str(ptx_path(case, "sm_80"))

    def run():
        fn = rt.load_module(path, max_registers=regs).get_function(case.entry)
        launch = case.make(np.random.default_rng(0))
        args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
        fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem)
        return {i: args[i].copy_to_host() for i in launch.outputs}

    want = run()
    real = spill.allocate_with_spilling

    def with_holes(*a, **k):
        k["split"] = k.get("split") or [new_vreg(1)]  # a copy no instruction names: only the scan changes
        return real(*a, **k)

    monkeypatch.setattr(codegen, "allocate_with_spilling", with_holes)
    from xcc.backend.regalloc_ranges import check_ranges

    monkeypatch.setattr(codegen, "check_allocation", check_ranges)
    import tempfile

    _fresh_cache(monkeypatch, tempfile.mkdtemp())
    got = run()
    for i in want:
        np.testing.assert_array_equal(got[i].view(np.uint8), want[i].view(np.uint8))


@pytest.mark.parametrize("regs", [16, 32])
@pytest.mark.parametrize("name", ["attention_row", "timestep_embedding", "conv2d_nchw"])
def test_profile_use_under_register_limits_on_the_corpus(name, regs, tmp_path):
    """Profile-guided builds that spill (cold splits, live ranges with holes, the retry without pipelining) pass
    the allocation checker and give the plain build's bits."""
    case = CASES_BY_NAME[name]
    path = str(ptx_path(case, "sm_80"))
    launch = case.make(np.random.default_rng(0))

    def run(**kw):
        args = [rt.to_device(a) if isinstance(a, np.ndarray) else a for a in launch.args]
        res = rt.load_module(path, max_registers=regs, **kw).get_function(case.entry).launch(
            launch.grid, launch.block, args, shared_mem=case.shared_mem, profile=not kw)
        return res, {i: args[i].copy_to_host() for i in launch.outputs}

    res, want = run()
    prof = tmp_path / "p.json"
    res.profile.save(str(prof))
    _, got = run(profile_use=str(prof))
    for i in want:
        np.testing.assert_array_equal(got[i].view(np.uint8), want[i].view(np.uint8))
