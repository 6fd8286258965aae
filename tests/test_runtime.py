"""The public runtime contract and `xcc run`: sources, caching, argument checks, faults."""

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.objfile import ObjectFile
from xcc.cli import main
from xcc.diagnostics import KernelFault, LaunchError
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
    assert stats.cycles is None and stats.warp_instructions > 0


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
    with pytest.raises(KernelFault, match=r"line \d+.*out-of-bounds"):
        fn.launch(1, 64, (np.int32(64), np.float32(2), small, small))


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
