"""Triton on xcc (issue 16): Triton's tutorials launch on the ISA interpreter and match numpy, and
Triton's benchmarker and autotuner read the cycle model.

Needs the ``triton`` extra (``pip install -e '.[triton]'``); without it the module is skipped.  The
tutorial ports live in ``examples/triton/tutorial_*.py``; the tests run them at sizes the interpreter
finishes in seconds (the full tutorial 03 autotuning list is in the slow tier).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

triton = pytest.importorskip("triton")

import triton.language as tl  # noqa: E402

import xcc.triton  # noqa: E402
from xcc import runtime as rt  # noqa: E402
from xcc.diagnostics import LaunchError, XccError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "triton"


def tutorial(name: str):
    """The module examples/triton/tutorial_<name>.py."""
    spec = importlib.util.spec_from_file_location(f"triton_tutorial_{name}", EXAMPLES / f"tutorial_{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module", autouse=True)
def _triton_on_xcc(tmp_path_factory):
    """xcc as Triton's driver, with a private Triton cache, for the module's tests."""
    saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TRITON_DEFAULT_FP_FUSION")}
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton-cache"))
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"  # Triton 3.9's default, without its deprecation warning
    xcc.triton.activate()
    yield
    xcc.triton.deactivate()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def sm80():
    xcc.triton.activate("sm_80")


@pytest.fixture(scope="module")
def t01():
    return tutorial("01_vector_add")


@pytest.fixture(scope="module")
def t03():
    return tutorial("03_matrix_multiplication")


def clock_mhz() -> float:
    return float(rt.default_device().machine.data["sm"]["clock_mhz"])


# ------------------------------------------------------------------------------------------ tutorials
def test_vector_add(t01, sm80):
    assert t01.main(5000) == 0.0


def test_fused_softmax(sm80):
    assert tutorial("02_fused_softmax").main(37, 781) < 1e-6


def test_layer_norm_forward_fp16(sm80):
    assert tutorial("05_layer_norm").main(16, 1000) < 1e-2


def test_layer_norm_forward_fp32_statistics(sm80):
    t05 = tutorial("05_layer_norm")
    x = np.random.default_rng(1).standard_normal((5, 300)).astype(np.float32)
    w, b = np.ones(300, np.float32), np.zeros(300, np.float32)
    y, mean, rstd = t05.layer_norm(rt.to_device(x), rt.to_device(w), rt.to_device(b))
    np.testing.assert_allclose(y.copy_to_host(), t05.numpy_layer_norm(x, w, b), atol=1e-5)
    np.testing.assert_allclose(mean.copy_to_host(), x.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(rstd.copy_to_host(), 1 / np.sqrt(x.var(axis=1) + 1e-5), rtol=1e-5)


# Three of the tutorial's fp16 configurations, those whose tiles the interpreter runs fastest, so that the
# test tier autotunes in seconds (the full list of sixteen runs in test_matmul_tutorial_autotune_configs).
SMALL_CONFIGS = [(128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
MNK = (96, 80, 72)  # irregular: the tutorial's wrap-around loads and masked stores


@pytest.fixture(scope="module")
def autotuned(t03):
    """The tutorial's matmul with leaky ReLU fused, autotuned over SMALL_CONFIGS: (kernel, a, b, c)."""
    xcc.triton.activate("sm_80")
    kernel = t03.make_matmul_kernel([t03.config(*c) for c in SMALL_CONFIGS])
    M, N, K = MNK
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    da, db = rt.to_device(a), rt.to_device(b)
    c = t03.matmul(da, db, "leaky_relu", kernel=kernel)
    return kernel, (a, da), (b, db), c


def test_matmul_autotuned(t03, autotuned):
    kernel, (a, _), (b, _), c = autotuned
    np.testing.assert_allclose(c.copy_to_host().astype(np.float32),
                               t03.numpy_matmul(a, b, "leaky_relu").astype(np.float32), atol=1e-2, rtol=1e-2)
    assert len(kernel.configs_timings) == len(SMALL_CONFIGS)


def test_autotune_picks_the_config_with_fewest_modelled_cycles(t03, autotuned, sm80):
    """The autotuner's winner is the argmin of the modelled cycles of each configuration, launched here
    one by one without the autotuner, and its timings are those cycles at the machine's clock."""
    kernel, (_, a), (_, b), _ = autotuned
    M, N, K = MNK
    c = rt.empty((M, N), np.float16)
    cycles = {}
    for cfg in kernel.configs:
        meta = cfg.kwargs
        grid = (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
        t03._matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, ACTIVATION="leaky_relu",
                                 num_warps=cfg.num_warps, num_stages=cfg.num_stages, **meta)
        cycles[cfg] = xcc.triton.launches()[-1].cycles
    assert len(set(cycles.values())) == len(cycles), cycles  # no tie: the choice means something
    assert kernel.best_config is min(cycles, key=cycles.get)
    for cfg, timing in kernel.configs_timings.items():
        assert timing[0] == pytest.approx(cycles[cfg] / (clock_mhz() * 1e3))


@pytest.mark.slow
def test_matmul_tutorial_autotune_configs(t03, sm80):
    """The tutorial's full list: sixteen configurations at 128^3 (two exceed the shared memory of a block,
    as they would on a GPU, and time as infinite)."""
    assert t03.main(128, 128, 128) < 1e-2
    timings = t03.matmul_kernel.configs_timings
    assert len(timings) == 16
    finite = {cfg: t[0] for cfg, t in timings.items() if np.isfinite(t[0])}
    assert len(finite) >= 10
    assert t03.matmul_kernel.best_config is min(finite, key=finite.get)


def test_matmul_sm90a_wgmma(t03):
    """sm_90a: Triton lowers tl.dot to wgmma, which xcc compiles and runs (its control codes once took
    minutes: the scoreboard data flow did not converge on its loop; backend/control.py joins now)."""
    xcc.triton.activate("sm_90a")
    try:
        kernel = t03.make_matmul_kernel([t03.config(64, 64, 32, 3, 4)])
        rng = np.random.default_rng(3)
        a = rng.standard_normal((64, 64)).astype(np.float16)
        b = rng.standard_normal((64, 64)).astype(np.float16)
        c = t03.matmul(rt.to_device(a), rt.to_device(b), kernel=kernel).copy_to_host()
        np.testing.assert_allclose(c.astype(np.float32), t03.numpy_matmul(a, b).astype(np.float32),
                                   atol=1e-2, rtol=1e-2)
    finally:
        xcc.triton.activate("sm_80")


# ------------------------------------------------------------------------------------------ the driver
def test_sm90a_target(t01):
    xcc.triton.activate("sm_90a")
    try:
        x = rt.to_device(np.arange(3000, dtype=np.float32))
        out = t01.add(x, x)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(3000, dtype=np.float32))
        assert triton.runtime.driver.active.get_current_target() == triton.backends.compiler.GPUTarget("xcc", 90, 32)
        compiled = next(iter(t01.add_kernel.device_caches[triton.runtime.driver.active.get_current_device()][0].values()))
        assert b".target sm_90a" in compiled.asm["ptx"]  # the PTX is the binary
    finally:
        xcc.triton.activate("sm_80")


def test_unknown_arch_is_refused():
    with pytest.raises(XccError, match="sm_80 or sm_90a"):
        xcc.triton.activate("sm_75")


def test_do_bench_reports_modelled_time(t01, sm80):
    x = rt.to_device(np.ones(4096, np.float32))
    start = len(xcc.triton.launches())
    ms = triton.testing.do_bench(lambda: t01.add(x, x))
    stats = xcc.triton.launches()[start:]
    assert len(stats) == 1
    assert ms == pytest.approx(stats[0].cycles / (clock_mhz() * 1e3))
    assert triton.testing.do_bench(lambda: t01.add(x, x), quantiles=[0.2, 0.5, 0.8]) == [ms] * 3
    assert triton.testing.do_bench(lambda: t01.add(x, x), return_mode="all") == [ms]
    assert triton.runtime.driver.active.get_benchmarker() is triton.testing.do_bench


def test_specialisation_as_on_a_gpu(sm80):
    """Integers equal to 1 become constants, multiples of 16 and 16-byte aligned pointers are marked."""
    @triton.jit
    def scale(x_ptr, n, k):
        i = tl.arange(0, 16)
        tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) * k, mask=i < n)

    x = rt.to_device(np.ones(16, np.float32))
    divisible = [["tt.divisibility", 16]]
    for n, k in ((16, 1), (5, 3)):
        compiled = scale[(1,)](x, n, k)
        assert (compiled.src.signature["k"] == "constexpr") == (k == 1)
        assert compiled.src.attrs[(0,)] == divisible  # xcc allocations are 16-byte aligned
        assert compiled.src.attrs[(1,)] == (divisible if n % 16 == 0 else [])
    np.testing.assert_array_equal(x.copy_to_host(), [3] * 5 + [1] * 11)
    assert xcc.triton.launches()[-1].kernel == "scale"


def test_host_array_is_a_clear_error(t01, sm80):
    x = np.ones(8, np.float32)
    with pytest.raises(LaunchError, match="numpy array in host memory.*to_device"):
        t01.add(x, rt.to_device(x))
    with pytest.raises(LaunchError, match="dtype int32"):
        t01.add(rt.to_device(x), rt.to_device(np.ones(8, np.int32)))


def test_compiled_kernel_checks_its_arguments(t01, sm80):
    """A compiled kernel launched directly names the argument it cannot pass."""
    x = rt.to_device(np.ones(8, np.float32))
    compiled = t01.add_kernel.warmup(x, x, x, 8, BLOCK_SIZE=1024, grid=(1,))
    with pytest.raises(LaunchError, match="argument 'y_ptr' .*expected an xcc device array"):
        compiled[(1, 1, 1)](x, "not an array", x, 8, 1024)
    with pytest.raises(LaunchError, match="argument 'n_elements' .*does not fit"):
        compiled[(1, 1, 1)](x, x, x, 2**31, 1024)


def test_deactivate_gives_triton_back_its_do_bench():
    from triton.runtime.driver import driver

    original = xcc.triton.bench._original_do_bench
    xcc.triton.deactivate()
    try:
        assert triton.testing.do_bench is original
        assert not xcc.triton.is_active()
    finally:
        xcc.triton.activate()
    assert xcc.triton.is_active() and isinstance(driver.active, xcc.triton.driver.XccDriver)


def test_environment_variable_selects_xcc(tmp_path):
    """XCC_TRITON=1: Triton discovers xcc through its entry point and makes it the driver, no code change."""
    code = ("import numpy as np, triton, triton.language as tl\n"
            "from xcc import runtime as rt\n"
            "@triton.jit\n"
            "def k(x_ptr):\n"
            "    i = tl.arange(0, 32)\n"
            "    tl.store(x_ptr + i, i * 2)\n"
            "x = rt.empty(32, np.int32)\n"
            "k[(1,)](x)\n"
            "print(type(triton.runtime.driver.active).__name__, (x.copy_to_host() == 2 * np.arange(32)).all())\n")
    env = {**os.environ, "XCC_TRITON": "1", "TRITON_CACHE_DIR": str(tmp_path / "tc")}
    env.pop("TRITON_DEFAULT_BACKEND", None)
    script = tmp_path / "launch.py"  # Triton reads a @jit function's source from its file
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["XccDriver", "True"]
