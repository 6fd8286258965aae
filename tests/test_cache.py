"""The JIT disk cache: keys, hits, environment switches, corruption, eviction, races."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import time
import warnings

import diskcache
import pytest

from xcc.cache import JitCache, XccCacheWarning, cache_key, source_hash
from xcc.diagnostics import ObjectFormatError

ENV = ("XCC_CACHE_DIR", "XCC_CACHE_DISABLE", "XCC_ALWAYS_COMPILE", "XCC_CACHE_MAXSIZE", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def ok(data: bytes) -> None:
    if not data.startswith(b"XBIN"):
        raise ObjectFormatError("bad magic")


class Compiler:
    def __init__(self, payload: bytes = b"XBIN object"):
        self.calls, self.payload = 0, payload

    def __call__(self) -> bytes:
        self.calls += 1
        return self.payload


def test_source_hash_is_stable_hex():
    h = source_hash()
    assert len(h) == 64 and int(h, 16) >= 0 and source_hash() == h


def test_key_changes_with_each_ingredient():
    base = dict(ptx=b".version 8.0", kernel="k", options={"opt": 2, "fast": True}, machine_hash="m1")
    k0 = cache_key(**base)
    assert k0 == cache_key(**base) and len(k0) == 64
    assert k0 == cache_key(**{**base, "options": {"fast": True, "opt": 2}})  # order-insensitive
    assert k0 == cache_key(**{**base, "ptx": [b".version 8.0"]})
    variants = [
        {"ptx": b".version 8.1"},
        {"ptx": [b".version 8.0", b""]},
        {"ptx": [b".version 8", b".0"]},
        {"kernel": "k2"},
        {"kernel": None},
        {"kernel": ""},
        {"options": {"opt": 3, "fast": True}},
        {"options": {"opt": 2}},
        {"machine_hash": "m2"},
    ]
    keys = {cache_key(**{**base, **v}) for v in variants}
    assert len(keys) == len(variants) and k0 not in keys


def test_key_depends_on_versions(monkeypatch):
    import xcc
    import xcc.cache as c

    k0 = cache_key(b"x", "k", {}, "m")
    monkeypatch.setattr(xcc, "__version__", "99.0")
    k1 = cache_key(b"x", "k", {}, "m")
    monkeypatch.setattr(c, "_format_version", lambda: 12345)
    k2 = cache_key(b"x", "k", {}, "m")
    monkeypatch.setattr(c, "source_hash", lambda: "0" * 64)
    k3 = cache_key(b"x", "k", {}, "m")
    monkeypatch.setattr(c, "CACHE_SCHEMA", 999)
    k4 = cache_key(b"x", "k", {}, "m")
    assert len({k0, k1, k2, k3, k4}) == 5


def test_hit_and_miss(tmp_path):
    cache = JitCache(tmp_path / "c")
    comp = Compiler()
    assert cache.get("k", ok) is None
    assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", False)
    assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", True)
    assert comp.calls == 1
    assert cache.get("k", ok) == b"XBIN object"
    st = cache.stats()
    assert (st["entries"], st["hits"], st["misses"]) == (1, 2, 2) and st["bytes"] > 0
    assert JitCache(tmp_path / "c").get("k", ok) == b"XBIN object"  # persistent
    cache.clear()
    assert cache.get("k", ok) is None and cache.stats()["entries"] == 0


def test_directory_from_env_and_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path / "env" / "dir"))
    cache = JitCache()
    assert cache.directory == tmp_path / "env" / "dir"
    assert stat.S_IMODE(os.stat(cache.directory).st_mode) == 0o700
    monkeypatch.delenv("XCC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert JitCache().directory == tmp_path / "xdg" / "xcc"
    assert JitCache(tmp_path / "arg").directory == tmp_path / "arg"


def test_disable(tmp_path, monkeypatch):
    monkeypatch.setenv("XCC_CACHE_DISABLE", "1")
    cache = JitCache(tmp_path / "c")
    comp = Compiler()
    cache.put("k", b"XBIN x")
    assert cache.get("k", ok) is None
    assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", False)
    assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", False)
    assert comp.calls == 2 and not (tmp_path / "c").exists()


def test_always_compile_still_stores(tmp_path, monkeypatch):
    monkeypatch.setenv("XCC_ALWAYS_COMPILE", "1")
    cache = JitCache(tmp_path)
    comp = Compiler()
    assert cache.get_or_compile("k", comp, ok)[1] is False
    assert cache.get_or_compile("k", comp, ok)[1] is False
    assert comp.calls == 2 and cache.get("k", ok) is None
    monkeypatch.delenv("XCC_ALWAYS_COMPILE")
    assert JitCache(tmp_path).get("k", ok) == b"XBIN object"


def test_corrupt_entry_dropped_with_warning_and_recompiled(tmp_path):
    cache = JitCache(tmp_path)
    cache.put("k", b"garbage")
    with pytest.warns(XccCacheWarning, match="corrupt"):
        assert cache.get("k", ok) is None
    assert cache.stats()["entries"] == 0
    cache.put("k", b"garbage")
    comp = Compiler()
    with pytest.warns(XccCacheWarning):
        assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", False)
    assert comp.calls == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get_or_compile("k", comp, ok) == (b"XBIN object", True)


def test_values_are_raw_bytes_never_pickled(tmp_path):
    cache = JitCache(tmp_path)
    cache.put("small", b"XBIN" + bytes(100))
    cache.put("large", b"XBIN" + bytes(100_000))  # stored as a file
    cache.close()
    with sqlite3.connect(tmp_path / "cache.db") as db:
        rows = dict(db.execute("SELECT key, mode FROM Cache").fetchall())
    assert rows == {"small": 1, "large": 2}  # diskcache MODE_RAW / MODE_BINARY, not MODE_PICKLE (4)
    assert JitCache(tmp_path).get("large", ok) == b"XBIN" + bytes(100_000)
    with diskcache.Cache(str(tmp_path)) as plain:
        plain.set("pickled", {"not": "bytes"})  # a foreign, pickled entry is never unpickled
    with pytest.warns(XccCacheWarning, match="pickle"):
        assert JitCache(tmp_path).get("pickled", ok) is None


def test_maxsize_evicts_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XCC_CACHE_MAXSIZE", str(400_000))
    cache = JitCache(tmp_path)
    blob = b"XBIN" + bytes(50_000)
    cache.put("k0", blob)
    for i in range(1, 20):
        assert cache.get("k0", ok) == blob  # keep k0 recently used
        time.sleep(0.002)
        cache.put(f"k{i}", blob)
    st = cache.stats()
    assert st["entries"] < 20 and st["bytes"] <= 400_000 + 100_000
    assert cache.get("k0", ok) == blob and cache.get("k19", ok) == blob
    assert cache.get("k1", ok) is None


def _race_worker(directory, counter, barrier, results):
    def compile_fn():
        with open(counter, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        return b"XBIN compiled once"

    cache = JitCache(directory)
    barrier.wait()
    results.put(cache.get_or_compile("race-key", compile_fn, ok))


def test_processes_racing_on_a_key_compile_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    counter = tmp_path / "compiles.txt"
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race_worker, args=(str(tmp_path / "c"), str(counter), barrier, results))
             for _ in range(2)]
    for p in procs:
        p.start()
    outs = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(counter.read_text().splitlines()) == 1
    assert sorted(hit for _, hit in outs) == [False, True]
    assert {data for data, _ in outs} == {b"XBIN compiled once"}


def test_stale_lock_of_crashed_holder_expires(tmp_path):
    dead = JitCache(tmp_path, lock_expire=0.3)
    assert dead._locks.add("k", b"crashed", expire=0.3)  # a holder that never releases
    cache = JitCache(tmp_path)
    start = time.monotonic()
    assert cache.get_or_compile("k", Compiler(), ok) == (b"XBIN object", False)
    assert 0.2 < time.monotonic() - start < 5
