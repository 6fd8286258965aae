"""`xcc cache stats|list|clear|verify` on a cache with entries, one of them corrupted by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import diskcache
import pytest
from click.testing import CliRunner

from xcc import runtime as rt
from xcc.cache import JitCache
from xcc.cli import EXIT_INPUT, cli
from xcc.runtime import jit

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR  # noqa: E402

SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"
LAZY = Path(__file__).parent / "data" / "runtime" / "lazy_two_kernels.ptx"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache in a fresh XCC_CACHE_DIR holding two kernels, loaded twice (two misses, two hits)."""
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jit, "_cache", None)
    for _ in range(2):
        rt.load_module(SAXPY).get_function("saxpy")
        rt.load_module(LAZY).get_function("add_one")
    jit.jit_cache().close()
    monkeypatch.setattr(jit, "_cache", None)
    return tmp_path / "cache"


def xcc(*args: str):
    return CliRunner().invoke(cli, ["cache", *args])


def corrupt_one(directory: Path) -> str:
    """Flip a byte in the middle of the saxpy entry's binary (its metadata stays as written)."""
    with diskcache.Cache(str(directory)) as c:
        key = next(k for k in c.iterkeys() if json.loads(c.get(k, tag=True)[1])["kernel"] == "saxpy")
        data, tag = c.get(key, tag=True)
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0xFF
        c.set(key, bytes(bad), tag=tag)
    return key


def test_stats_counts_entries_bytes_hits_and_misses(cache_dir):
    st = json.loads(xcc("stats", "--json").output)
    assert (st["entries"], st["hits"], st["misses"]) == (2, 2, 2) and st["bytes"] > 0
    assert st["directory"] == str(cache_dir) and st["enabled"] is True
    text = xcc("stats").output
    assert "entries:   2" in text and "hits:      2" in text and "misses:    2" in text


def test_list_shows_kind_kernel_options_and_age(cache_dir):
    result = xcc("list")
    assert result.exit_code == 0
    rows = result.output.splitlines()
    assert rows[-1] == "2 entries"
    assert any(" kernel " in r and " saxpy " in r and "opt_level=3" in r and r.split()[-5].endswith("s")
               for r in rows)
    entries = [json.loads(line) for line in xcc("list", "--json").output.splitlines()]
    assert sorted(e["meta"]["kernel"] for e in entries) == ["add_one", "saxpy"]
    assert all(e["kind"] == "kernel" and e["problem"] is None and e["meta"]["options"]["opt_level"] == 3
               for e in entries)


def test_verify_drops_the_corrupted_entry_and_the_runtime_recompiles(cache_dir):
    key = corrupt_one(cache_dir)
    assert xcc("list").exit_code == 0  # listing reads metadata only: the damage is verify's to find
    result = xcc("verify")
    assert result.exit_code == EXIT_INPUT, result.output
    assert f"dropped {key[:16]}: the entry: checksum mismatch" in result.output
    assert "2 entries checked, 1 good, 1 dropped" in result.output
    result = xcc("verify")
    assert result.exit_code == 0 and "1 entries checked, 1 good, 0 dropped" in result.output
    rt.load_module(SAXPY).get_function("saxpy")  # a miss again, compiled and stored
    assert json.loads(xcc("stats", "--json").output)["entries"] == 2


def test_damaged_metadata_and_foreign_entries_are_listed_and_dropped(cache_dir):
    with diskcache.Cache(str(cache_dir)) as c:
        key = next(iter(c.iterkeys()))
        c.set(key, c.get(key), tag=b"{not json")
        c.set("pickled", {"a": "pickle"})  # never unpickled
        c.set("raw-no-metadata", b"XBIN")
    listed = xcc("list").output
    assert "damaged: metadata is not JSON" in listed and "damaged: cache entry is a pickle" in listed
    assert "damaged: no metadata" in listed
    result = xcc("verify")
    assert result.exit_code == EXIT_INPUT and result.output.count("dropped ") == 3
    assert "4 entries checked, 1 good, 3 dropped" in result.output
    assert json.loads(xcc("stats", "--json").output)["entries"] == 1


def test_a_corrupt_entry_is_recompiled_at_load_without_a_traceback(cache_dir):
    corrupt_one(cache_dir)
    with pytest.warns(Warning, match="checksum mismatch"):
        fn = rt.load_module(SAXPY).get_function("saxpy")
    assert fn.kernel.name == "saxpy"


def test_clear_removes_every_entry_and_keeps_the_counters(cache_dir):
    result = xcc("clear")
    assert result.exit_code == 0 and f"removed 2 entries from {cache_dir}" in result.output
    st = json.loads(xcc("stats", "--json").output)
    assert (st["entries"], st["hits"], st["misses"]) == (0, 2, 2)
    assert xcc("list").output.strip() == "0 entries"
    assert xcc("verify").exit_code == 0


def test_a_disabled_cache_reports_itself(cache_dir, monkeypatch):
    monkeypatch.setenv("XCC_CACHE_DISABLE", "1")
    assert json.loads(xcc("stats", "--json").output)["enabled"] is False
    assert xcc("verify").exit_code == 0 and xcc("clear").exit_code == 0


def test_a_damaged_database_is_reported_not_a_traceback(tmp_path, monkeypatch):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "cache.db").write_bytes(b"this is not an SQLite database" * 100)
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path / "broken"))
    for command in ("stats", "list", "verify", "clear"):
        result = xcc(command)
        assert result.exit_code == EXIT_INPUT and not isinstance(result.exception, Exception), result.output
        assert "xcc: warning: JIT cache at" in result.output and "is unusable" in result.output
    with pytest.warns(Warning, match="unusable"):
        assert JitCache(tmp_path / "broken").stats()["problem"] == "file is not a database"


def test_damaged_counters_lose_counts_not_loads(cache_dir):
    with diskcache.Cache(str(cache_dir / "counters")) as c:
        c.set("hits", {"a": "pickle"})  # never unpickled
        c.set("misses", b"not a number")
    rt.load_module(SAXPY).get_function("saxpy")
    rt.load_module(SAXPY, opt_level=0).get_function("saxpy")
    st = json.loads(xcc("stats", "--json").output)
    assert (st["hits"], st["misses"], st["entries"]) == (0, 0, 3)
