"""The launch engine's watchdog: a kernel that never finishes ends as a located fault on both engines,
from Python and from ``xcc run``, with an explicit limit, ``XCC_MAX_STEPS`` or the default; Ctrl-C
during a launch gives the same report.  Kernels: ``examples/runaway.cu``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.cli import main
from xcc.diagnostics import KernelFault, LaunchError
from xcc.sim.launch import DEFAULT_MAX_STEPS, LaunchInterrupted

PTX = Path(__file__).resolve().parent.parent / "examples" / "runaway.sm_80.ptx"
ENGINES = ("isa", "ir")


def _launch(engine: str, kernel: str, grid=2, block=64, **kw):
    dev = rt.Device()
    fn = rt.load_module(PTX, engine=engine, device=dev).get_function(kernel)
    flag, out = rt.zeros(1, np.int32, dev), rt.zeros(grid * block, np.int32, dev)
    return fn.launch((grid, 1, 1), (block, 1, 1), (flag, out), timing=False, **kw)


def _spin_lines(kernel: str) -> range:
    """The PTX lines of ``kernel``'s spin loop: from its last label to the backward branch."""
    lines = PTX.read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if f".entry {kernel}(" in t)
    bra = next(i for i in range(start, len(lines)) if "ld.volatile" in lines[i])
    label = max(i for i in range(start, bra) if lines[i].startswith("$L"))
    end = next(i for i in range(bra, len(lines)) if " bra " in lines[i] or "\tbra" in lines[i])
    return range(label + 2, end + 2)  # 1-based, the label's next line to the branch


def _check_report(err: KernelFault, kernel: str, limit: int, warps: int) -> None:
    msg = str(err)
    assert f"kernel '{kernel}'" in msg and err.kernel == kernel
    assert f"did not finish within {limit} scheduler steps" in msg
    assert f"{warps} warp(s) still running" in msg
    spots = re.findall(r"(\d+) warp\(s\) at PTX line (\d+) \(.*?\) \(pc (\d+)\)", msg)
    assert spots, msg
    loop = _spin_lines(kernel)
    assert any(int(line) in loop for _, line, _ in spots), (spots, loop)  # spinning warps, where they spin
    assert err.line in loop


@pytest.mark.parametrize("engine", ENGINES)
def test_spinning_kernel_is_stopped_and_located(engine):
    with pytest.raises(KernelFault) as info:
        _launch(engine, "wait_for_flag", max_steps=3000)
    _check_report(info.value, "wait_for_flag", 3000, 4)


@pytest.mark.parametrize("engine", ENGINES)
def test_diverged_runaway_names_running_warps(engine):
    """Only the odd threads spin: every warp is still running (half its lanes exited)."""
    with pytest.raises(KernelFault) as info:
        _launch(engine, "odd_threads_wait", grid=3, block=64, max_steps=2000)
    _check_report(info.value, "odd_threads_wait", 2000, 6)
    assert len(re.findall(r"warp\(s\) at PTX line", str(info.value))) >= 2  # the spinners and the finished


@pytest.mark.parametrize("engine", ENGINES)
def test_limit_from_the_environment(engine, monkeypatch):
    monkeypatch.setenv("XCC_MAX_STEPS", "1500")
    with pytest.raises(KernelFault, match="did not finish within 1500 scheduler steps"):
        _launch(engine, "wait_for_flag")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_finishing_kernel_is_not_stopped(engine):
    """With the flag set the same kernel ends; max_steps=0 means no limit."""
    dev = rt.Device()
    fn = rt.load_module(PTX, engine=engine, device=dev).get_function("wait_for_flag")
    flag, out = rt.to_device(np.ones(1, np.int32), dev), rt.zeros(64, np.int32, dev)
    stats = fn.launch((1, 1, 1), (64, 1, 1), (flag, out), timing=False, max_steps=0)
    assert stats.steps > 0
    np.testing.assert_array_equal(out.copy_to_host(), np.zeros(64, np.int32))  # no spin: 0 iterations


@pytest.mark.parametrize("bad", [-1, 2.5, "10"])
def test_bad_limits_are_launch_errors(bad):
    with pytest.raises(LaunchError, match="max_steps must be a non-negative integer"):
        _launch("isa", "wait_for_flag", max_steps=bad)


def test_bad_environment_limit_is_a_launch_error(monkeypatch):
    monkeypatch.setenv("XCC_MAX_STEPS", "lots")
    with pytest.raises(LaunchError, match="XCC_MAX_STEPS must be a non-negative integer"):
        _launch("isa", "wait_for_flag")


@pytest.mark.parametrize("engine", ENGINES)
def test_xcc_run_max_steps(engine, capsys):
    rc = main(["run", str(PTX), "--kernel", "wait_for_flag", "--grid", "1", "--block", "32", "--engine", engine,
               "--no-timing", "--max-steps", "1000", "zeros:int32[1]", "zeros:int32[32]"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "runaway.sm_80.ptx:" in err and "did not finish within 1000 scheduler steps" in err
    assert "1 warp(s) still running" in err and "Traceback" not in err


@pytest.mark.parametrize("engine", ENGINES)
def test_ctrl_c_stops_the_launch_with_the_report(engine):
    """A KeyboardInterrupt during a launch (SIGINT from a timer here) becomes a LaunchInterrupted fault
    that says where the warps are, instead of a bare KeyboardInterrupt."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(LaunchInterrupted) as info:
            _launch(engine, "wait_for_flag", max_steps=0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    msg = str(info.value)
    assert "interrupted (Ctrl-C)" in msg and "4 warp(s) still running" in msg and "PTX line" in msg


def test_ctrl_c_in_xcc_run_prints_the_report_and_exits_130():
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "xcc.cli", "run", str(PTX), "--kernel", "wait_for_flag",
                             "--grid", "1", "--block", "32", "--max-steps", "0", "zeros:int32[1]",
                             "zeros:int32[32]"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(4.0)  # start-up, compile, then spinning
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err and "1 warp(s) still running" in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_default_limit_stops_a_runaway_kernel(engine, monkeypatch):
    """No limit given: the documented default stops the kernel (a minute at most on this machine)."""
    monkeypatch.delenv("XCC_MAX_STEPS", raising=False)
    with pytest.raises(KernelFault, match=f"did not finish within {DEFAULT_MAX_STEPS} scheduler steps"):
        _launch(engine, "wait_for_flag", grid=1, block=32)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_default_limit_from_xcc_run(engine, capsys, monkeypatch):
    monkeypatch.delenv("XCC_MAX_STEPS", raising=False)
    rc = main(["run", str(PTX), "--kernel", "wait_for_flag", "--grid", "1", "--block", "32", "--engine", engine,
               "--no-timing", "zeros:int32[1]", "zeros:int32[32]"])
    err = capsys.readouterr().err
    assert rc == 1 and f"did not finish within {DEFAULT_MAX_STEPS} scheduler steps" in err
