"""The public runtime contract and `xcc run`: sources, caching, argument checks, faults."""

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.objfile import ObjectFile
from xcc.cli import main
from xcc.diagnostics import KernelFault, LaunchError, XccError
from xcc.driver import CompileOptions, compile_module, read_source

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR  # noqa: E402

SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"


def saxpy(mod, n=300, device=None):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    d_x, d_y = rt.to_device(x, device), rt.to_device(y, device)
    stats = mod.get_function("saxpy").launch((2, 1, 1), (256, 1, 1), (np.int32(n), np.float32(2), d_x, d_y))
    return stats, d_y.copy_to_host()


@pytest.mark.parametrize("form", ["path", "str_path", "text", "bytes", "xbin_bytes", "list"])
def test_every_source_form_loads_and_runs(form):
    device = rt.Device()
    src = {"path": SAXPY, "str_path": str(SAXPY), "text": SAXPY.read_text(), "bytes": SAXPY.read_bytes(),
           "xbin_bytes": compile_module([read_source(SAXPY)], CompileOptions()).to_bytes(),
           "list": [SAXPY]}[form]
    mod = rt.load_module(src, device=device)
    assert mod.function_names == ["saxpy"]
    stats, y = saxpy(mod, device=device)
    np.testing.assert_array_equal(y, np.arange(300, dtype=np.float32) * 2 + 1)
    assert stats.cycles > 0 and stats.warp_instructions > 0


def test_second_load_is_a_cache_hit_and_same_binary():
    text = SAXPY.read_text()
    k1 = rt.load_module(text).get_function("saxpy").kernel
    from xcc.runtime.module import jit_cache

    hits = jit_cache().hits
    k2 = rt.load_module(text).get_function("saxpy").kernel
    assert jit_cache().hits == hits + 1
    assert k1.code == k2.code


def test_device_addresses_are_64_bit():
    assert rt.zeros(4, np.int32).ptr > 1 << 32


def test_argument_checks_name_the_parameter():
    fn = rt.load_module(SAXPY).get_function("saxpy")
    d = rt.zeros(10, np.float32)
    with pytest.raises(LaunchError, match="argument 1 .*saxpy_param_1"):
        fn.launch(1, 32, (np.int32(10), np.float64(2), d, d))
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        fn.launch(1, 32, (np.int32(10),))
    with pytest.raises(LaunchError, match="block of 2048 threads"):
        fn.launch(1, 2048, (np.int32(10), np.float32(2), d, d))
    with pytest.raises(Exception, match="no kernel named 'nope'"):
        rt.load_module(SAXPY).get_function("nope")


def test_out_of_bounds_access_is_a_located_kernel_fault():
    fn = rt.load_module(SAXPY).get_function("saxpy")
    small = rt.zeros(10, np.float32)
    with pytest.raises(KernelFault, match=r"line \d+.*out-of-bounds") as e:
        fn.launch(1, 64, (np.int32(64), np.float32(2), small, small))
    # the compiled kernel's fault points into the PTX file, as the IR interpreter's does
    loc = e.value.loc
    assert loc is not None and loc.file.endswith("saxpy.sm_80.ptx") and loc.line == e.value.line
    assert loc.source_line.strip().startswith("ld.global.f32") and str(e.value).startswith(f"{loc.file}:{loc.line}:")


def test_corrupt_xbin_is_rejected():
    data = bytearray(compile_module([read_source(SAXPY)], CompileOptions()).to_bytes())
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(Exception, match="checksum"):
        rt.load_module(bytes(data))
    assert ObjectFile.from_bytes(bytes(compile_module([read_source(SAXPY)], CompileOptions()).to_bytes()))


def test_xcc_run_cli(tmp_path, capsys):
    x = tmp_path / "x.npy"
    y = tmp_path / "y.npy"
    np.save(x, np.arange(100, dtype=np.float32))
    np.save(y, np.ones(100, dtype=np.float32))
    out = tmp_path / "r.npz"
    rc = main(["run", str(SAXPY), "--kernel", "saxpy", "--grid", "1", "--block", "128", "s32:100", "f32:2.5",
               str(x), str(y), "--out", str(out), "--stats"])
    assert rc == 0
    np.testing.assert_array_equal(np.load(y), np.arange(100, dtype=np.float32) * 2.5 + 1)
    assert np.load(out)["arg3"].shape == (100,)
    assert "warp_instructions=" in capsys.readouterr().out


def test_xcc_run_fault_and_usage_exit_codes(tmp_path, capsys):
    rc = main(["run", str(SAXPY), "--kernel", "saxpy", "--grid", "1", "--block", "64", "s32:64", "f32:1",
               "zeros:float32[8]", "zeros:float32[8]"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "out-of-bounds" in err and "Traceback" not in err
    assert main(["run", str(SAXPY), "--kernel", "saxpy", "--grid", "0", "--block", "1"]) == 2
    assert main(["run", str(SAXPY), "--kernel", "saxpy", "--grid", "1", "--block", "1", "q32:1"]) == 2


def test_occupancy_follows_the_machine_description():
    fn = rt.load_module(EXAMPLES_DIR / "block_reduce.sm_80.ptx").get_function("_Z12block_reduceiPKiPi")
    occ = fn.occupancy(256)
    assert occ.ctas_per_sm >= 1 and occ.warps_per_sm == occ.ctas_per_sm * 8
    assert occ.limiter in ("warps", "ctas", "registers", "shared_memory")
    assert fn.occupancy(256, shared_mem=200_000).limiter == "shared_memory"
    assert fn.occupancy(1024).ctas_per_sm <= fn.occupancy(256).ctas_per_sm


# ----------------------------------------------------------------------------- engine="ir": the IR interpreter
@pytest.mark.parametrize("opt_level", [0, 3])
def test_ir_engine_runs_saxpy_like_numpy_and_like_the_isa_engine(opt_level):
    device = rt.Device()
    ir_mod = rt.load_module(SAXPY, opt_level=opt_level, device=device, engine="ir")
    assert ir_mod.function_names == ["saxpy"] and ir_mod.engine == "ir"
    ir_stats, ir_y = saxpy(ir_mod, device=device)
    isa_stats, isa_y = saxpy(rt.load_module(SAXPY, opt_level=opt_level, device=device), device=device)
    want = np.arange(300, dtype=np.float32) * np.float32(2) + np.float32(1)
    assert ir_y.tobytes() == isa_y.tobytes() == want.tobytes()
    assert type(ir_stats) is type(isa_stats) and ir_stats.thread_instructions > 0


def test_ir_engine_checks_like_the_isa_engine():
    fn = rt.load_module(SAXPY, engine="ir").get_function("saxpy")
    d = rt.zeros(10, np.float32)
    with pytest.raises(LaunchError, match="argument 1 .*saxpy_param_1"):
        fn.launch(1, 32, (np.int32(10), np.float64(2), d, d))
    with pytest.raises(KernelFault, match=r"line \d+.*out-of-bounds"):
        fn.launch(1, 64, (np.int32(64), np.float32(2), d, d))
    with pytest.raises(LaunchError, match="no kernel named 'nope'"):
        rt.load_module(SAXPY, engine="ir").get_function("nope")
    with pytest.raises(LaunchError, match="not .xbin"):
        rt.load_module(compile_module([read_source(SAXPY)], CompileOptions()).to_bytes(), engine="ir")
    with pytest.raises(XccError, match="unknown engine 'gpu'"):
        rt.load_module(SAXPY, engine="gpu")


SHFL_MASK = """.version 8.0
.target sm_80
.address_size 64
.visible .entry shfl_mask(.param .u64 out, .param .u32 mask)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r2, [mask];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r3, %r1, 10;
    shfl.sync.MODE.b32 %r4|%p1, %r3, 1, 31, %r2;
    selp.u32 %r5, 65536, 0, %p1;
    or.b32 %r4, %r4, %r5;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""


@pytest.mark.parametrize("mode", ["bfly", "down"])
@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0x0000FFFF, 0x55555555])
def test_shfl_honours_the_member_mask_on_both_engines(mode, mask):
    """A source lane in range but outside membermask reads 0 with p = true, as an H200 does (docs/semantics.md,
    xcc.semantics.warp); a source out of range gives the thread's own value and p = false."""
    lane = np.arange(64) & 31
    j = lane ^ 1 if mode == "bfly" else lane + 1
    in_range = j <= 31
    member = ((mask >> np.minimum(j, 31)) & 1) == 1
    tid = np.arange(64)
    value = np.where(in_range, np.where(member, (tid - lane + j) * 10, 0), tid * 10)
    want = (value | in_range << 16).astype(np.uint32)
    for engine in ("isa", "ir"):
        device = rt.Device()
        out = rt.zeros(64, np.uint32, device)
        fn = rt.load_module(SHFL_MASK.replace("MODE", mode), device=device, engine=engine).get_function("shfl_mask")
        fn.launch(1, 64, (out, np.uint32(mask)))
        np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=engine)
