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
