"""Shared pytest configuration: keep every test away from the user's JIT cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_xcc_cache(monkeypatch, tmp_path_factory):
    """Point XCC_CACHE_DIR at a fresh temporary directory for each test."""
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path_factory.mktemp("xcc-cache")))
