"""Cooperative launches with grid-wide sync (issue 16): nvcc's ``cooperative_groups::this_grid().sync()``
(examples/grid_sync.cu) on both engines through the runtime API (``launch(..., cooperative=True)``), the
grid-sync workspace (``%envreg1/2``), the co-residency check, and the launch engine's CTA turns
(:class:`xcc.sim.waves.FairScheduler`).  The driver API's ``cuLaunchCooperativeKernel`` is tested in
test_cuda_python_driver.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import xcc.runtime as rt
from xcc.diagnostics import KernelFault, LaunchError
from xcc.sim.waves import STARVE_LIMIT, FairScheduler, Scheduler

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR  # noqa: E402

GRID_SYNC = EXAMPLES_DIR / "grid_sync.sm_80.ptx"

# CTA 0 spins until CTA 1 (whose code lies after the spin loop) raises a flag: lowest-position-first
# scheduling would run CTA 0's spin forever; in a cooperative launch the CTAs take turns.
HANDOFF_PTX = """
.version 8.0
.target sm_80
.address_size 64

.visible .entry handoff(.param .u64 handoff_param_0)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [handoff_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra $PRODUCER;
$WAIT:
    ld.acquire.gpu.u32 %r2, [%rd2];
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra $WAIT;
    st.global.u32 [%rd2+4], %r2;
    ret;
$PRODUCER:
    mov.u32 %r3, 7;
    st.release.gpu.u32 [%rd2], %r3;
    ret;
}
"""


def _smooth_ref(x: np.ndarray, iters: int) -> np.ndarray:
    a = x.copy()
    for _ in range(iters):
        a = (np.concatenate([a[:1], a[:-1]]) + a + np.concatenate([a[1:], a[-1:]])) / np.float32(3)
    return a


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_grid_sync_kernels_match_numpy(engine):
    mod = rt.load_module(GRID_SYNC, engine=engine)
    x = np.random.default_rng(1).random(1000).astype(np.float32)
    # one grid barrier: block sums, then every element divided by the total
    f = mod.get_function("grid_sync_normalize")
    d_x, d_part, d_out = rt.to_device(x), rt.zeros(4, np.float32), rt.zeros(1000, np.float32)
    f.launch(4, 256, (np.int32(1000), d_x, d_part, d_out), cooperative=True)
    part = np.array([x[i * 256:(i + 1) * 256].sum(dtype=np.float64) for i in range(4)])
    np.testing.assert_allclose(d_out.copy_to_host(), x / part.sum(), rtol=1e-5)
    np.testing.assert_allclose(d_part.copy_to_host(), part, rtol=1e-5)
    # a grid barrier in a loop, CTAs with more elements still working when the others wait at it
    g = mod.get_function("grid_sync_smooth")
    for blocks, iters in ((6, 5), (3, 4)):
        b0, b1 = rt.to_device(x), rt.zeros(1000, np.float32)
        g.launch(blocks, 128, (np.int32(1000), np.int32(iters), b0, b1), cooperative=True)
        np.testing.assert_array_equal((b1 if iters % 2 else b0).copy_to_host(), _smooth_ref(x, iters))


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_grid_sync_outside_a_cooperative_launch_traps(engine):
    f = rt.load_module(GRID_SYNC, engine=engine).get_function("grid_sync_normalize")
    d = rt.zeros(256, np.float32)
    with pytest.raises(KernelFault, match="trap"):  # nvcc's grid.sync() finds no workspace, as on a GPU
        f.launch(1, 256, (np.int32(256), d, d, d))


def test_too_large_cooperative_grid_is_refused():
    f = rt.load_module(GRID_SYNC).get_function("grid_sync_smooth")
    sms = int(f.device.machine.data["sm"]["count"])
    resident = f.occupancy(128).ctas_per_sm * sms
    d = rt.zeros(16, np.float32)
    with pytest.raises(LaunchError, match="cooperative grid of .* too large.*CooperativeLaunchTooLarge"):
        f.launch(resident + 1, 128, (np.int32(16), np.int32(1), d, d), cooperative=True)


@pytest.mark.parametrize("engine", ["isa", "ir"])
def test_ctas_of_a_cooperative_launch_take_turns(engine):
    f = rt.load_module(HANDOFF_PTX.encode(), engine=engine).get_function("handoff")
    flag = rt.zeros(2, np.uint32)
    f.launch(2, 1, (flag,), cooperative=True, max_steps=10_000)
    assert flag.copy_to_host().tolist() == [7, 7]
    # An ordinary launch's CTAs of one wave are co-resident too, and the scheduler lets no runnable group starve
    # (xcc.sim.waves.STARVE_LIMIT): the spinning CTA 0 lets CTA 1 run, as a GPU does (CUTLASS's serial split-K
    # semaphore relies on it).
    flag = rt.zeros(2, np.uint32)
    f.launch(2, 1, (flag,), max_steps=10_000)
    assert flag.copy_to_host().tolist() == [7, 7]


def test_fair_scheduler_turns():
    s = FairScheduler(32)
    s.push(0, np.arange(64))  # CTAs 0 and 1 at position 0
    assert s.heap and s.heap[0] == -1
    pos, idx = s.pop()
    assert (pos, idx.tolist()) == (0, list(range(32)))  # CTA 0's turn, lowest position of its own
    s.push(5, idx)
    assert s.heap[0] == 5  # CTA 0 still holds the turn: its next position
    pos, idx = s.pop()
    assert (pos, int(idx[0])) == (5, 0)
    s.push(2, idx)  # a backward branch: CTA 1's turn
    pos, idx = s.pop()
    assert (pos, int(idx[0])) == (0, 32)
    s.push(1, idx)
    pos, idx = s.pop()
    assert (pos, int(idx[0])) == (1, 32)
    s.push(0, idx)  # CTA 1 branches back too: CTA 0 again
    assert s.pop()[0] == 2
    assert [p for p, _ in s.pending()] == [0]


def test_scheduler_lets_no_cta_starve():
    """The ordinary scheduler runs the lowest position first, but a group that waited STARVE_LIMIT pops runs
    next when it is its CTA's lowest, and its forward successors keep its age (it goes on until it branches
    backwards); the spinning group then waits its turn again.  Within a CTA the lowest position runs first."""
    s = Scheduler(32)  # 32 thread slots per CTA
    s.push(0, np.arange(32))  # CTA 0
    s.push(5, np.arange(32, 64))  # CTA 1
    for _ in range(STARVE_LIMIT - 1):  # CTA 0 spins at position 0 (a backward branch each time)
        pos, idx = s.pop()
        assert pos == 0
        s.push(0, idx)
    pos, idx = s.pop()
    assert (pos, int(idx[0])) == (5, 32)  # the starving CTA
    s.push(6, idx)  # it goes forward: still old, so it runs again before the spinner
    assert s.pop()[0] == 6
    s.push(5, idx)  # a backward branch: young again, the lowest position runs
    assert s.pop()[0] == 0
    one = Scheduler(64)  # the same threads in one CTA: its lowest position always runs first
    one.push(0, np.arange(32))
    one.push(5, np.arange(32, 64))
    for _ in range(2 * STARVE_LIMIT):
        pos, idx = one.pop()
        assert pos == 0
        one.push(0, idx)
