"""The JIT's content-addressed disk cache of compiled objects (on diskcache).

A key (:func:`cache_key`) is a SHA-256 over everything that can change the
compiled object: a cache schema version, ``xcc.__version__``, a hash of xcc's
own sources (:func:`source_hash`), the object format version, the PTX bytes as
given, the kernel name, the compile options and the target machine's hash.
The PTX is never parsed to compute a key.

:class:`JitCache` stores values as raw ``bytes`` (diskcache keeps bytes raw,
inline in SQLite or in a file; nothing is pickled). Environment:

* ``XCC_CACHE_DIR`` - cache directory (default ``$XDG_CACHE_HOME/xcc`` or
  ``~/.cache/xcc``), created with mode 0700;
* ``XCC_CACHE_DISABLE=1`` - no caching: ``get`` misses, ``put`` does nothing;
* ``XCC_ALWAYS_COMPILE=1`` - ``get`` always misses but ``put`` still stores;
* ``XCC_CACHE_MAXSIZE`` - size limit in bytes, least-recently-used eviction
  (default 1 GiB, least-recently-stored eviction). The limit is approximate,
  as in diskcache: a store that finds the cache over it evicts up to two
  entries.

Each entry carries small metadata beside its raw bytes: a JSON object (UTF-8
bytes, kept as the diskcache tag of the entry) with its ``key``, ``kind``
(:data:`ENTRY_KINDS`: ``"kernel"``, a compiled object: one kernel's, or a linked
module's with ``kernel`` null; ``"tuning"``, an autotuning record), ``size``,
``created`` (Unix time) and what the writer adds (for a kernel: ``kernel``, ``options``, ``machine``,
``machine_hash``). The directory also keeps the ``hits`` and ``misses`` of every
process that used it (``directory/counters``). ``xcc cache stats|list|clear|verify``
reads them (:meth:`JitCache.stats`, :meth:`JitCache.entries`, :meth:`JitCache.verify`).

A cache that cannot be read or written (corrupt database, full disk) is
reported with an :class:`XccCacheWarning` and treated as a miss; it never
makes a compile fail.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import os
import sqlite3
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import diskcache

import xcc
from xcc.diagnostics import ObjectFormatError

__all__ = ["CACHE_SCHEMA", "ENTRY_KINDS", "KIND_TUNING", "CacheEntry", "JitCache", "XccCacheWarning", "cache_key",
           "check_entry", "source_hash"]

CACHE_SCHEMA = 2
"""Bump when the meaning of a key or a stored value changes (2: entries carry JSON metadata)."""

KIND_KERNEL = "kernel"
KIND_TUNING = "tuning"
ENTRY_KINDS = (KIND_KERNEL, KIND_TUNING)
"""The kinds of entry: ``kernel``, a compiled object (.xbin bytes); ``tuning``, an autotuning record (UTF-8
JSON, :mod:`xcc.tune.record`)."""

_PACKAGES = ("xcc", "xcc.frontend", "xcc.passes", "xcc.backend", "xcc.runtime", "xcc.ir", "xcc.semantics")
_SUFFIXES = (".py", ".lark", ".toml")
_LOCK_EXPIRE_S = 600.0
_DEFAULT_SIZE = 2**30
_ERRORS = (OSError, sqlite3.Error, diskcache.Timeout)


class XccCacheWarning(UserWarning):
    """A cache entry or the cache itself was unusable and was skipped."""


@functools.cache
def source_hash() -> str:
    """SHA-256 over every .py/.lark/.toml file of the installed xcc packages.

    Files are taken from each package directory (recursively, deduplicated),
    named ``package:relative/path`` and hashed in sorted name order with the
    name included. Computed once per process.
    """
    files: dict[str, Path] = {}
    seen: set[Path] = set()
    for pkg in _PACKAGES:
        spec = importlib.util.find_spec(pkg)
        for root in (spec.submodule_search_locations or []) if spec else []:
            root = Path(root)
            for path in sorted(root.rglob("*")):
                if path.suffix not in _SUFFIXES or not path.is_file():
                    continue
                rel = path.relative_to(root)
                if any(p == "__pycache__" or p.startswith(".") for p in rel.parts):
                    continue
                real = path.resolve()
                if real not in seen:
                    seen.add(real)
                    files[f"{pkg}:{rel.as_posix()}"] = path
    h = hashlib.sha256()
    for name in sorted(files):
        _field(h, name.encode())
        _field(h, files[name].read_bytes())
    return h.hexdigest()


def _field(h, data: bytes) -> None:
    h.update(len(data).to_bytes(8, "little"))
    h.update(data)


def _format_version() -> int:
    try:
        mod = importlib.import_module("xcc.backend.objfile")
    except ImportError:
        return 1
    return getattr(mod, "FORMAT_VERSION", 1)


def _json_default(obj):
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(f"compile option value {obj!r} is not JSON-serialisable")


def cache_key(ptx: bytes | list[bytes], kernel: str | None, options: dict, machine_hash: str) -> str:
    """The SHA-256 hex key of one compile. Every field is length-prefixed.

    ``ptx`` is one module or a list of modules (a single ``bytes`` is the same
    as a one-element list); ``options`` must be JSON-serialisable (sets are
    sorted) and is normalised with sorted keys.
    """
    modules = [ptx] if isinstance(ptx, (bytes, bytearray, memoryview, str)) else list(ptx)
    h = hashlib.sha256()
    for part in (f"xcc-jit-cache/{CACHE_SCHEMA}", xcc.__version__, source_hash(), str(_format_version())):
        _field(h, part.encode())
    _field(h, str(len(modules)).encode())
    for m in modules:
        _field(h, m.encode() if isinstance(m, str) else bytes(m))
    _field(h, b"\x00" if kernel is None else b"\x01" + kernel.encode())
    _field(h, json.dumps(options, sort_keys=True, separators=(",", ":"), default=_json_default).encode())
    _field(h, machine_hash.encode())
    return h.hexdigest()


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def default_directory() -> Path:
    """``XCC_CACHE_DIR``, else ``$XDG_CACHE_HOME/xcc``, else ``~/.cache/xcc``."""
    if os.environ.get("XCC_CACHE_DIR"):
        return Path(os.environ["XCC_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "xcc"


class _RawDisk(diskcache.Disk):
    """diskcache storage that keeps bytes raw and refuses to pickle or unpickle."""

    stores = bytes

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if type(value) is not self.stores:
            raise TypeError(f"the JIT cache stores {self.stores.__name__}, not {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode, filename, value, read):
        if mode == diskcache.core.MODE_PICKLE:
            raise ObjectFormatError("cache entry is a pickle, not raw bytes")
        return super().fetch(mode, filename, value, read)


class _CounterDisk(_RawDisk):
    """The counters' storage: integers, kept raw by SQLite; never a pickle."""

    stores = int


@dataclass(frozen=True)
class CacheEntry:
    """One entry as ``xcc cache list`` shows it: its key, its metadata (None when missing or unreadable,
    with ``problem`` saying why)."""

    key: str
    meta: dict | None
    problem: str | None = None

    @property
    def kind(self) -> str | None:
        return self.meta.get("kind") if self.meta else None


class JitCache:
    """Content-addressed store of compiled objects, safe across processes.

    ``directory`` holds the diskcache database and files; compile locks live
    in ``directory/locks``, a separate cache with no size limit (eviction never
    drops a held lock) whose entries expire after ``lock_expire`` seconds so a
    crashed holder cannot block others for ever; ``directory/counters`` holds
    the hits and misses of every process. ``hits``/``misses`` count lookups
    made through this object.
    """

    def __init__(self, directory: str | os.PathLike | None = None, *, lock_expire: float = _LOCK_EXPIRE_S):
        self.directory = Path(directory).expanduser() if directory is not None else default_directory()
        self.enabled = not _flag("XCC_CACHE_DISABLE")
        self.always_compile = _flag("XCC_ALWAYS_COMPILE")
        self.lock_expire = lock_expire
        self.hits = self.misses = 0
        self.problem: str | None = None  # why the cache disabled itself (unreadable database, no permission)
        self._cache = self._locks = self._counters = None
        if not self.enabled:
            return
        size, policy = _DEFAULT_SIZE, "least-recently-stored"
        if os.environ.get("XCC_CACHE_MAXSIZE"):
            try:
                size, policy = int(os.environ["XCC_CACHE_MAXSIZE"]), "least-recently-used"
            except ValueError:
                warnings.warn(f"ignoring XCC_CACHE_MAXSIZE={os.environ['XCC_CACHE_MAXSIZE']!r}: "
                              "not a number of bytes", XccCacheWarning, stacklevel=2)
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(self.directory, 0o700)
            self._cache = diskcache.Cache(str(self.directory), size_limit=size, eviction_policy=policy,
                                          cull_limit=2, disk=_RawDisk)
            self._locks = diskcache.Cache(str(self.directory / "locks"), size_limit=2**62,
                                          eviction_policy="none", disk=_RawDisk)
            self._counters = diskcache.Cache(str(self.directory / "counters"), size_limit=2**62,
                                             eviction_policy="none", disk=_CounterDisk)
        except _ERRORS as e:
            self.problem = str(e) or type(e).__name__
            warnings.warn(f"JIT cache at {self.directory} is unusable, caching disabled: {self.problem}",
                          XccCacheWarning, stacklevel=2)
            self.enabled = False

    # -- basic operations -----------------------------------------------------------------

    def _lookup(self, key: str, validate: Callable[[bytes], None]) -> bytes | None:
        """Entry for ``key`` after validation; no statistics."""
        if not self.enabled or self.always_compile:
            return None
        try:
            data = self._cache.get(key)
            if data is None:
                return None
            if not isinstance(data, bytes):
                raise ObjectFormatError(f"cache entry holds {type(data).__name__}, not bytes")
            validate(data)
        except _ERRORS as e:
            warnings.warn(f"JIT cache read failed, recompiling: {e}", XccCacheWarning, stacklevel=3)
            return None
        except ObjectFormatError as e:
            warnings.warn(f"dropping corrupt JIT cache entry {key[:16]}: {e.message}", XccCacheWarning,
                          stacklevel=3)
            self._drop(key)
            return None
        return data

    def _drop(self, key: str) -> None:
        try:
            self._cache.delete(key)
        except _ERRORS:
            pass

    def _count(self, hit: bool) -> None:
        """One more hit or miss, in this object and in the directory's counters."""
        if hit:
            self.hits += 1
        else:
            self.misses += 1
        if self._counters is not None:
            try:
                self._counters.incr("hits" if hit else "misses")
            except (*_ERRORS, ObjectFormatError, TypeError):  # TypeError: a counter that is not an integer
                pass  # statistics are best effort: a busy, read-only or damaged directory loses a count

    def get(self, key: str, validate: Callable[[bytes], None]) -> bytes | None:
        """The validated entry for ``key`` or None; a corrupt entry is deleted with a warning."""
        data = self._lookup(key, validate)
        self._count(data is not None)
        return data

    def put(self, key: str, data: bytes, meta: dict | None = None) -> None:
        """Store ``data`` (raw bytes) under ``key`` with its metadata: ``meta`` (JSON-serialisable; its
        ``kind`` defaults to ``"kernel"``) and ``key``, ``size`` and ``created``; a no-op when disabled."""
        if not self.enabled:
            return
        data = bytes(data)
        tag = {"kind": KIND_KERNEL, **(meta or {}), "key": key, "size": len(data), "created": time.time()}
        try:
            self._cache.set(key, data, tag=json.dumps(tag, sort_keys=True, default=_json_default).encode())
        except _ERRORS as e:
            warnings.warn(f"JIT cache write failed: {e}", XccCacheWarning, stacklevel=2)

    def get_or_compile(self, key: str, compile_fn: Callable[[], bytes], validate: Callable[[bytes], None],
                       meta: dict | None = None) -> tuple[bytes, bool]:
        """``(data, hit)``: the cached object, or ``compile_fn()`` stored under ``key`` with ``meta``
        (:meth:`put`).

        On a miss a per-key lock is taken so that processes missing at the
        same time compile once: the others wait, and take the stored result
        as a hit once it appears.
        """
        data = self._lookup(key, validate)
        if data is None and self.enabled and not self.always_compile:
            with _KeyLock(self, key, validate) as data:
                if data is None:
                    return self._compile(key, compile_fn, meta), False
        if data is None:
            return self._compile(key, compile_fn, meta), False
        self._count(True)
        return data, True

    def _compile(self, key: str, compile_fn: Callable[[], bytes], meta: dict | None) -> bytes:
        self._count(False)
        data = compile_fn()
        self.put(key, data, meta)
        return data

    @functools.cached_property
    def _owner(self) -> bytes:
        return f"{os.getpid()}:{uuid.uuid4().hex}".encode()

    # -- maintenance ----------------------------------------------------------------------

    def clear(self) -> int:
        """Delete every entry (locks and counters are left alone); the number deleted."""
        return self._cache.clear() if self.enabled else 0

    def stats(self) -> dict:
        """``directory``, ``enabled``, ``problem`` (why the cache is unusable, or None), ``entries``, ``bytes``
        (on disk: diskcache's volume), and the ``hits`` and ``misses`` of every process that used the directory."""
        out = {"directory": str(self.directory), "enabled": self.enabled, "problem": self.problem, "entries": 0,
               "bytes": 0, "hits": 0, "misses": 0}
        if self.enabled:
            try:
                out.update(entries=len(self._cache), bytes=self._cache.volume(),
                           hits=self._counter("hits"), misses=self._counter("misses"))
            except _ERRORS as e:
                warnings.warn(f"JIT cache statistics unreadable: {e}", XccCacheWarning, stacklevel=2)
        return out

    def _counter(self, name: str) -> int:
        try:
            value = self._counters.get(name, 0)
        except ObjectFormatError:  # a planted pickle: never unpickled
            return 0
        return value if isinstance(value, int) else 0

    def entries(self) -> list[CacheEntry]:
        """Every entry with its metadata (read without the stored bytes), in key order."""
        if not self.enabled:
            return []
        out = []
        for key in sorted(self._keys()):
            try:
                value, tag = self._cache.get(key, read=True, tag=True)
            except ObjectFormatError as e:
                out.append(CacheEntry(key, None, e.message))
                continue
            except _ERRORS as e:
                out.append(CacheEntry(key, None, f"unreadable: {e}"))
                continue
            if hasattr(value, "close"):  # read=True: a large value is an open file
                value.close()
            meta, problem = _metadata(key, tag)
            out.append(CacheEntry(key, meta, problem))
        return out

    def _keys(self) -> list[str]:
        try:
            return [k for k in self._cache.iterkeys() if isinstance(k, str)]
        except _ERRORS as e:
            warnings.warn(f"JIT cache keys unreadable: {e}", XccCacheWarning, stacklevel=3)
            return []

    def verify(self) -> tuple[int, list[tuple[str, str]]]:
        """Check every entry (:func:`check_entry`) and delete the bad ones: ``(entries checked, [(key,
        why it was dropped)])``."""
        if not self.enabled:
            return 0, []
        keys = sorted(self._keys())
        dropped = []
        for key in keys:
            try:
                data, tag = self._cache.get(key, tag=True)
                meta, problem = _metadata(key, tag)
                if problem is None:
                    problem = check_entry(data, meta)
            except ObjectFormatError as e:
                problem = e.message
            except _ERRORS as e:
                problem = f"unreadable: {e}"
            if problem is not None:
                dropped.append((key, problem))
                self._drop(key)
        return len(keys), dropped

    def close(self) -> None:
        for c in (self._cache, self._locks, self._counters):
            if c is not None:
                c.close()

    def __enter__(self) -> JitCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _metadata(key: str, tag) -> tuple[dict | None, str | None]:
    """An entry's metadata and None, or None and what is wrong with it."""
    if tag is None:
        return None, "no metadata (an entry of an older xcc, or not written by xcc)"
    if not isinstance(tag, bytes | str):
        return None, f"metadata is {type(tag).__name__}, not JSON bytes"
    try:
        meta = json.loads(tag)
    except (ValueError, RecursionError) as e:
        return None, f"metadata is not JSON ({e})"
    if not isinstance(meta, dict):
        return None, f"metadata is a JSON {type(meta).__name__}, not an object"
    if meta.get("key") != key:
        return meta, f"metadata names another key ({str(meta.get('key'))[:16]})"
    if meta.get("kind") not in ENTRY_KINDS:
        return meta, f"unknown kind {meta.get('kind')!r} (known: {', '.join(ENTRY_KINDS)})"
    if not isinstance(meta.get("size"), int) or not isinstance(meta.get("created"), int | float):
        return meta, "metadata lacks its size or creation time"
    return meta, None


def check_entry(data, meta: dict) -> str | None:
    """What is wrong with an entry's bytes given its (well-formed) metadata, or None: the size matches, and
    a ``kernel`` entry is an object file that verifies, holds the kernel it names, for the machine named."""
    if not isinstance(data, bytes):
        return f"holds {type(data).__name__}, not bytes"
    if len(data) != meta["size"]:
        return f"holds {len(data)} bytes, its metadata says {meta['size']}"
    if meta.get("kind") == KIND_TUNING:  # JSON (xcc.tune.record checks its fields when it is read)
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            return f"a tuning record that is not UTF-8 JSON ({e})"
        return None if isinstance(doc, dict) else f"a tuning record that is a JSON {type(doc).__name__}"
    from xcc.backend.objfile import ObjectFile

    try:
        obj = ObjectFile.from_bytes(data, "the entry")
    except ObjectFormatError as e:
        return e.message
    kernel = meta.get("kernel")
    if kernel is not None and kernel not in obj.kernels:
        return f"the object has no kernel '{kernel}' (it has: {', '.join(sorted(obj.kernels)) or 'none'})"
    machine_hash = meta.get("machine_hash")
    if machine_hash is not None and any(k.machine_hash != machine_hash for k in obj.kernels.values()):
        return "the object was compiled for another machine than its metadata names"
    return None


class _KeyLock:
    """Context manager: hold ``locks[key]`` (expiring) or see the entry appear.

    ``__enter__`` returns the entry if another process stored it while we
    waited (the lock is then not held), else None with the lock held.
    """

    def __init__(self, cache: JitCache, key: str, validate):
        self.cache, self.key, self.validate, self.held = cache, key, validate, False

    def __enter__(self) -> bytes | None:
        c, delay = self.cache, 0.002
        while True:
            try:
                if c._locks.add(self.key, c._owner, expire=c.lock_expire):
                    self.held = True
                    return c._lookup(self.key, self.validate)  # re-check under the lock
            except _ERRORS as e:
                warnings.warn(f"JIT cache lock failed, compiling without it: {e}", XccCacheWarning,
                              stacklevel=3)
                return None
            found = c._lookup(self.key, self.validate)
            if found is not None:
                return found
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)

    def __exit__(self, *exc) -> None:
        if not self.held:
            return
        locks = self.cache._locks
        try:
            with locks.transact():
                if locks.get(self.key) == self.cache._owner:  # not expired and re-taken
                    locks.delete(self.key)
        except _ERRORS:
            pass
