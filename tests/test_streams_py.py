"""The Pythonic runtime's streams (xcc.runtime.queues): deferred launches, events, the legacy default
stream's implicit synchronisation, non-blocking streams, sticky faults; on both engines."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, LaunchError

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR, fma_f32  # noqa: E402

SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"


def _setup(engine="isa", n=500):
    dev = rt.Device()
    fn = rt.load_module(SAXPY, device=dev, engine=engine).get_function("saxpy")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return dev, fn, x, y, rt.to_device(x, dev), rt.to_device(y, dev)


def _args(n, a, d_x, d_y):
    return (np.int32(n), np.float32(a), d_x, d_y)


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_a_launch_on_a_stream_returns_at_once_and_runs_at_synchronisation(engine):
    n = 500
    dev, fn, x, y, d_x, d_y = _setup(engine, n)
    s = rt.Stream(dev)
    p1 = fn.launch((n + 127) // 128, 128, _args(n, 2.0, d_x, d_y), stream=s)
    p2 = fn.launch((n + 127) // 128, 128, _args(n, 3.0, d_x, d_y), stream=s)
    assert not p1.done and not s.query()
    with pytest.raises(LaunchError, match="has not run yet"):
        _ = p1.stats
    assert dev.memory.read(d_y.ptr, 4 * n).view(np.float32).tolist() == y.tolist()  # nothing ran
    p1.synchronize()  # runs the stream up to p1 only
    assert p1.done and not p2.done
    s.synchronize()
    assert s.query() and p2.stats.thread_instructions > 0
    np.testing.assert_array_equal(d_y.copy_to_host(), fma_f32(np.float32(3), x, fma_f32(np.float32(2), x, y)))


def test_the_default_stream_waits_for_blocking_streams_not_for_non_blocking_ones():
    n = 256
    dev, fn, x, y, d_x, d_y = _setup(n=n)
    blocking, free = rt.Stream(dev), rt.Stream(dev, non_blocking=True)
    pb = fn.launch(2, 128, _args(n, 2.0, d_x, d_y), stream=blocking)
    out = d_y.copy_to_host()  # a default-stream copy: the blocking stream's launch runs first
    assert pb.done
    np.testing.assert_array_equal(out, fma_f32(np.float32(2), x, y))
    pf = fn.launch(2, 128, _args(n, 5.0, d_x, d_y), stream=free)
    d_y.copy_to_host()
    assert not pf.done  # non-blocking: the default stream does not wait for it
    dev.synchronize()
    assert pf.done


def test_events_order_streams_and_time_them_with_the_cycle_model():
    n = 256
    dev, fn, x, y, d_x, d_y = _setup(n=n)
    s1, s2 = rt.Stream(dev), rt.Stream(dev)
    start = s1.record()
    p = fn.launch(2, 128, _args(n, 2.0, d_x, d_y), stream=s1)
    end = s1.record()
    s2.wait(end)
    q = fn.launch(2, 128, _args(n, 1.0, d_x, d_y), stream=s2)
    s2.synchronize()  # reaching the wait runs s1 up to the event first
    assert p.done and q.done and end.done
    clock_khz = dev.machine.data["sm"]["clock_mhz"] * 1e3
    assert end.elapsed_ms(start) == pytest.approx(p.stats.cycles / clock_khz)
    np.testing.assert_array_equal(d_y.copy_to_host(), fma_f32(np.float32(1), x, fma_f32(np.float32(2), x, y)))


def test_a_fault_surfaces_at_synchronisation_and_sticks_to_the_stream():
    n = 500
    dev, fn, x, y, d_x, d_y = _setup(n=n)
    small = rt.zeros(8, np.float32, dev)
    s = rt.Stream(dev)
    bad = fn.launch(4, 128, _args(n, 2.0, d_x, small), stream=s)  # enqueued: no error yet
    fn.launch(4, 128, _args(n, 2.0, d_x, d_y), stream=s)
    with pytest.raises(KernelFault, match="out-of-bounds"):
        s.synchronize()
    assert not bad.done
    with pytest.raises(KernelFault):
        s.synchronize()
    np.testing.assert_array_equal(d_y.copy_to_host(), y)  # the launch after the fault never ran
