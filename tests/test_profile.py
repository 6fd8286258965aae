"""Profiles (docs/profiles.md): recording, the file format, merging, errors, and their use by the compiler.

The kernel ``loop_branch`` has known behaviour: a uniform loop of ``n`` trips (its back edge never diverges), a
branch on ``tid.x < 16`` that diverges in every warp of 32 threads, and a store only the upper half-warp makes.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.cli import main
from xcc.diagnostics import LaunchError
from xcc.driver import CompileOptions, compile_module
from xcc.profile import Profile, ProfileError, load_profile, merge_profiles
from xcc.sources import Source

PTX = """.version 7.0
.target sm_80
.address_size 64

.visible .entry loop_branch(
    .param .u32 n,
    .param .u64 out
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;

    ld.param.u32 %r1, [n];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
LOOP:
    mad.lo.u32 %r3, %r3, 3, %r4;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r1;
    @%p1 bra LOOP;
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    setp.lt.u32 %p2, %r2, 16;
    @%p2 bra SKIP;
    st.global.u32 [%rd3+128], %r2;
SKIP:
    ret;
}
"""
OTHER = PTX.replace("mad.lo.u32 %r3, %r3, 3, %r4;", "mad.lo.u32 %r3, %r3, 5, %r4;")
LOOP_LINE = next(i for i, t in enumerate(PTX.splitlines(), 1) if "@%p1 bra LOOP" in t)
BRANCH_LINE = next(i for i, t in enumerate(PTX.splitlines(), 1) if "@%p2 bra SKIP" in t)


def expected(n: int, threads: int = 32) -> np.ndarray:
    acc = 0
    for i in range(n):
        acc = (acc * 3 + i) & 0xFFFFFFFF
    out = np.zeros(64, np.uint32)
    out[:threads] = acc
    out[32 + 16:32 + threads] = np.arange(16, threads)
    return out


def launch(fn, n: int, profile: bool = False, grid=1, block=32):
    out = rt.to_device(np.zeros(64, np.uint32))
    res = fn.launch(grid, block, (np.uint32(n), out), profile=profile)
    np.testing.assert_array_equal(out.copy_to_host(), expected(n, block))
    return res


def profile_of(*ns: int, src: str = PTX) -> Profile:
    fn = rt.load_module(src).get_function("loop_branch")
    return merge_profiles([launch(fn, n, profile=True).profile for n in ns])


# ------------------------------------------------------------------------------------------------ recording
def test_recording_counts_blocks_branches_loops_and_values():
    p = launch(rt.load_module(PTX).get_function("loop_branch"), 4, profile=True).profile
    k = p.kernels["loop_branch"]
    assert k["launches"] == 1
    assert k["shapes"] == [{"grid": [1, 1, 1], "block": [32, 1, 1], "launches": 1}]
    (arg,) = k["args"].values()
    assert arg == {"type": "u32", "values": [[4, 1]], "other": 0}
    branches = {b["line"]: b for b in k["branches"]}
    assert (branches[LOOP_LINE]["taken"], branches[LOOP_LINE]["not_taken"], branches[LOOP_LINE]["divergent"]) \
        == (3, 1, 0)  # one warp, four trips: back edge taken three times, all lanes together
    assert branches[BRANCH_LINE]["divergent"] == 1 and branches[BRANCH_LINE]["taken"] == 0
    (loop,) = k["loops"]
    assert (loop["line"], loop["entries"], loop["iterations"]) == (LOOP_LINE, 1, 4)
    store = [b for b in k["blocks"] if b["threads"] == 16]  # the upper half-warp's store: half the lanes active
    assert store and store[0]["warps"] == 1
    assert k["stalls"] and all(s["cycles"] >= s["issued"] for s in k["stalls"])


def test_stream_launch_profile_after_synchronisation():
    fn = rt.load_module(PTX).get_function("loop_branch")
    s = rt.Stream()
    out = rt.to_device(np.zeros(64, np.uint32))
    pending = fn.launch(1, 32, (np.uint32(3), out), stream=s, profile=True)
    with pytest.raises(LaunchError, match="has not run yet"):
        _ = pending.profile
    s.synchronize()
    assert pending.profile.kernels["loop_branch"]["launches"] == 1


def test_profile_without_flag_is_none():
    assert launch(rt.load_module(PTX).get_function("loop_branch"), 2).profile is None


# ---------------------------------------------------------------------------------------------- file, merge
def test_save_load_round_trip_and_merge(tmp_path):
    a = launch(rt.load_module(PTX).get_function("loop_branch"), 4, profile=True).profile
    path = tmp_path / "a.json"
    a.save(path)
    assert load_profile(path) == a and load_profile(path).to_json() == a.to_json()
    m = merge_profiles([a, load_profile(path)])
    k = m.kernels["loop_branch"]
    assert k["launches"] == 2
    (arg,) = k["args"].values()
    assert arg["values"] == [[4, 2]]
    assert {(lp["entries"], lp["iterations"]) for lp in k["loops"]} == {(2, 8)}
    assert merge_profiles([m, a]) == merge_profiles([a, m])  # order does not matter
    json.loads(path.read_text())  # plain JSON, never pickle
    assert json.loads(path.read_text())["version"] == 1


def test_merge_of_another_module_is_an_error():
    with pytest.raises(ProfileError, match="another module"):
        merge_profiles([profile_of(2), profile_of(2, src=OTHER)])


def test_profile_of_another_module_is_an_error():
    p = profile_of(3)
    with pytest.raises(ProfileError, match="another module"):
        rt.load_module(OTHER, profile_use=p)


@pytest.mark.parametrize("text, where", [
    ('{"format": "xcc-profile", ', "invalid JSON"),
    ('{"format": "other"}', "format"),
    ('{"format": "xcc-profile", "version": 99}', "version 99"),
    ('{"format": "xcc-profile", "version": 1, "module": {"hash": "x", "name": "m"}, '
     '"kernels": {"k": {"launches": -1}}}', "kernels.k.launches"),
])
def test_corrupt_profile_is_a_located_error(tmp_path, text, where):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ProfileError, match=where) as e:
        load_profile(path)
    assert str(path) in str(e.value)


def test_cli_errors_without_traceback(tmp_path, capsys):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PTX)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["compile", f"-fprofile-use={bad}", str(ptx), "-o", str(tmp_path / "k.xbin")]) == 1
    other = tmp_path / "other.json"
    profile_of(2, src=OTHER).save(other)
    assert main(["compile", "--profile-use", str(other), str(ptx), "-o", str(tmp_path / "k.xbin")]) == 1
    assert main(["profile", "merge", "-o", str(tmp_path / "m.json"), str(other), str(bad)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "invalid JSON" in err and "another module" in err


def test_cli_run_profile_out_merge_and_use(tmp_path, capsys):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PTX)
    for i, n in enumerate((3, 3)):
        assert main(["run", str(ptx), "--kernel", "loop_branch", "--grid", "1", "--block", "32",
                     "--profile-out", str(tmp_path / f"p{i}.json"), f"u32:{n}", "zeros:uint32[64]"]) == 0
    assert main(["profile", "merge", "-o", str(tmp_path / "m.json"), str(tmp_path / "p0.json"),
                 str(tmp_path / "p1.json")]) == 0
    assert load_profile(tmp_path / "m.json").kernels["loop_branch"]["launches"] == 2
    assert main(["compile", f"-fprofile-use={tmp_path / 'm.json'}", str(ptx), "-o", str(tmp_path / "k.xbin")]) == 0


# ------------------------------------------------------------------------------------------------- use
def _ir_after(pass_name: str, profile: Profile | None) -> str:
    buf = io.StringIO()
    compile_module([Source(PTX, "<ptx>")], CompileOptions(profile_use=profile), print_after=pass_name, out=buf)
    return buf.getvalue()


def test_cache_key_includes_the_profile():
    plain = CompileOptions()
    assert "profile_use" not in plain.key()
    a, b = CompileOptions(profile_use=profile_of(3)), CompileOptions(profile_use=profile_of(5))
    assert a.key()["profile_use"] == profile_of(3).digest
    assert a.key() != b.key() and a.key() != plain.key()


def test_value_specialised_clone_behind_a_guard_and_its_fallback():
    p = profile_of(4, 4)  # n was always 4: a clone with n = 4 folded in, behind setp.eq n, 4
    text = _ir_after("simplifycfg", p)
    assert "spec.guard" in text
    guard = text.split("spec.guard:")[1].split("\n\n")[0]
    assert "setp.u32" in guard and "0x4 {cmp=eq}" in guard
    fn = rt.load_module(PTX, profile_use=p).get_function("loop_branch")
    launch(fn, 4)  # the clone
    launch(fn, 7)  # another value: the general code
    launch(fn, 0)


def test_unroll_factor_is_the_profiled_trip_count():
    p = profile_of(3, 5)  # n varied (no clone), mean trip count 4, back edge never diverged
    text = _ir_after("unroll", p)
    assert "spec.guard" not in text
    assert ".rt3" in text and ".rt4" not in text  # runtime unrolling by 4
    assert ".rt" not in _ir_after("unroll", None)  # -O3 alone does not unroll it
    fn = rt.load_module(PTX, profile_use=p).get_function("loop_branch")
    for n in (0, 1, 3, 4, 5, 9):
        launch(fn, n)


def test_block_layout_puts_never_taken_paths_last():
    from xcc.passes.block_layout import layout_blocks
    from xcc.profile.use import ProfileIndex

    p = profile_of(2)
    k = dict(p.kernels["loop_branch"])
    k["branches"] = [dict(b, taken=0, not_taken=1, divergent=0) if b["line"] == BRANCH_LINE else b
                     for b in k["branches"]]  # as if the upper half-warp's store always ran
    from xcc.driver import frontend

    fn = frontend([Source(PTX, "<ptx>")]).function("loop_branch")
    fn.profile_index = ProfileIndex(k)
    layout_blocks(fn)
    branch = next(b for b in fn.blocks if b.terminator is not None and b.terminator.op == "cbr"
                  and b.terminator.loc.line == BRANCH_LINE)
    taken, fallthrough = branch.terminator.targets
    assert fn.blocks.index(fallthrough) == fn.blocks.index(branch) + 1
    assert fn.blocks[-1] is taken  # never entered: last


# --------------------------------------------------------------------------------- launch-time specialisation
def test_specialize_variants_cached_per_values_and_shape():
    fn = rt.load_module(PTX, specialize=True).get_function("loop_branch")
    launch(fn, 4)
    launch(fn, 4)
    assert fn.variants.builds == 1
    launch(fn, 6)
    assert fn.variants.builds == 2
    launch(fn, 4, block=24)  # another shape
    assert fn.variants.builds == 3
    fn.variants.limit = 2
    launch(fn, 9)
    assert len(fn.variants.cache) == 2
    k = next(iter(fn.variants.cache.values()))
    assert k.instruction_count < fn.kernel.instruction_count  # constants folded: the loop is gone


def test_specialize_option_folds_floats_and_names_unknown_parameters():
    from xcc.diagnostics import XccError

    opts = CompileOptions(specialize={"saxpy_param_1": np.float32(2.5)}, launch_shape=((4, 1, 1), (256, 1, 1)))
    assert opts.key()["specialize"] == (("saxpy_param_1", 2.5),)
    src = Source(open("examples/saxpy.sm_90.ptx").read(), "saxpy.ptx")
    compile_module([src], opts)
    with pytest.raises(XccError, match="no kernel compiled has a parameter 'nope'"):
        compile_module([src], CompileOptions(specialize={"nope": 1}))


def test_index_decisions_for_inlining_ifconversion_and_unrolling():
    from types import SimpleNamespace

    from xcc.diagnostics import SourceLoc
    from xcc.passes.inline import _threshold
    from xcc.profile.use import ProfileIndex

    def row(line, **kw):
        return {"file": "k.ptx", "line": line, "block": "b", **kw}

    index = ProfileIndex({
        "branches": [row(1, taken=10, not_taken=0, divergent=0), row(2, taken=5, not_taken=3, divergent=2),
                     row(3, taken=30, not_taken=10, divergent=0), row(4, taken=30, not_taken=10, divergent=5)],
        "loops": [{"file": "k.ptx", "line": 3, "header": "h", "entries": 10, "iterations": 40},
                  {"file": "k.ptx", "line": 4, "header": "h", "entries": 10, "iterations": 40}],
        "calls": [{"file": "k.ptx", "line": 5, "callee": "f", "warps": 7},
                  {"file": "k.ptx", "line": 6, "callee": "f", "warps": 0}]})
    at = lambda line: SimpleNamespace(loc=SourceLoc("k.ptx", line))  # noqa: E731
    assert index.divergent(at(1)) is False and index.divergent(at(2)) is True and index.divergent(at(9)) is None
    assert index.unroll_factor(at(3)) == 4  # 40 iterations over 10 entries, back edge never diverged
    assert index.unroll_factor(at(4)) is None  # the same loop with a divergent back edge: left alone
    fn = SimpleNamespace(profile_index=index)
    assert _threshold(1100, fn, at(5)) == 4400  # a hot call
    assert _threshold(1100, fn, at(6)) < 0  # a call that never ran: not inlined
    assert _threshold(1100, fn, at(7)) == 1100 and _threshold(1100, SimpleNamespace(), at(5)) == 1100


def test_profiling_needs_ptx_and_the_isa_engine():
    image = compile_module([Source(PTX, "<ptx>")], CompileOptions()).to_bytes()
    fn = rt.load_module(image).get_function("loop_branch")
    out = rt.to_device(np.zeros(64, np.uint32))
    with pytest.raises(LaunchError, match="not loaded from PTX"):
        fn.launch(1, 32, (np.uint32(2), out), profile=True)
    with pytest.raises(LaunchError, match="ISA engine"):
        rt.load_module(PTX, engine="ir").get_function("loop_branch").launch(1, 32, (np.uint32(2), out), profile=True)


def test_recording_is_deterministic():
    a = launch(rt.load_module(PTX).get_function("loop_branch"), 5, profile=True).profile
    b = launch(rt.load_module(PTX).get_function("loop_branch"), 5, profile=True).profile
    assert a.to_json() == b.to_json() and a.digest == b.digest
