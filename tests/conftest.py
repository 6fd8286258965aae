"""Shared pytest configuration: keep every test away from the user's JIT cache, and run the ISA
interpreter in its strict mode (every register read checked against the control codes,
:mod:`xcc.sim.isa.hazards`) throughout, subprocesses included."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("XCC_STRICT_HAZARDS", "1")


@pytest.fixture(autouse=True)
def _isolated_xcc_cache(monkeypatch, tmp_path_factory):
    """Point XCC_CACHE_DIR at a fresh temporary directory for each test."""
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path_factory.mktemp("xcc-cache")))


@pytest.fixture(scope="module")
def device():
    """A driver-API context for the module's tests (cuInit, cuCtxCreate on device 0), destroyed after them; the
    value is the context's :class:`xcc.runtime.Device`.  A module that defines its own ``device`` uses that."""
    from xcc.runtime import driver as cuda
    from xcc.runtime.driver_core import current

    assert cuda.cuInit(0)[0] == 0
    _, dev = cuda.cuDeviceGet(0)
    err, ctx = cuda.cuCtxCreate(0, dev)
    assert err == 0
    yield current().device
    cuda.cuCtxDestroy(ctx)
