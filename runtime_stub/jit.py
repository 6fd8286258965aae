"""Resolving a kernel to a binary: the JIT cache (:mod:`xcc.cache`) and the hooks around it
(:mod:`xcc.runtime.jit_hooks`).

The key covers the PTX bytes as given, the kernel, the compile options, the machine description's hash
and xcc's own sources, so a hit parses no PTX.  A hit costs a SHA-256 of the PTX, one diskcache read, the
object's verification (checksum and decoding: once per distinct entry per process, see
:func:`verified_object`) and the hit counter's update; with no hook registered nothing else
(``python bench/jit_hit.py`` measures it).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import time
from collections.abc import Callable

from xcc.backend.machine import Machine
from xcc.backend.objfile import ObjectFile
from xcc.cache import JitCache, cache_key
from xcc.diagnostics import ObjectFormatError, XccError
from xcc.driver import CompileOptions
from xcc.runtime import jit_hooks, timeline

_cache: JitCache | None = None


def jit_cache() -> JitCache:
    """The process's JIT cache (``XCC_CACHE_DIR``, opened at first use)."""
    global _cache
    if _cache is None:
        _cache = JitCache()
    return _cache


@functools.lru_cache(maxsize=64)
def _options_key(options: CompileOptions, link: bool) -> dict:
    """The options as they enter the key (memoised, CompileOptions being frozen: never mutate the result);
    a linked module's carry ``link``."""
    return {**options.key(), "link": True} if link else options.key()


def resolve(sources: tuple[bytes, ...], kernel: str | None, options: CompileOptions, machine: Machine,
            build: Callable[[], bytes], what: str, link: bool = False) -> ObjectFile:
    """The object file of ``kernel`` of ``sources`` (None: the whole linked module, ``link``), from the cache
    or ``build()`` (stored), through the registered hooks.  ``what`` names the module in messages."""
    opts = _options_key(options, link)
    key = cache_key(list(sources), kernel, opts, machine.hash)
    meta = {"kernel": kernel, "options": opts, "machine": machine.name, "machine_hash": machine.hash}
    request = (jit_hooks.JitRequest(sources, kernel, dict(opts), machine.name, machine.hash, key)
               if jit_hooks.registered() else None)

    seen: list = [None]  # hit: True, False (compiled), None (a hook's binary)

    def normal() -> tuple[bytes, ObjectFile]:
        verified = _Verified()
        data, hit = jit_cache().get_or_compile(key, build, verified, meta)
        seen[0] = hit
        if request is not None:
            request.hit = hit
        return data, verified.object_of(data)

    t0 = time.perf_counter_ns()
    if request is None:
        obj = normal()[1]
    else:
        obj = jit_hooks.run(request, normal, lambda data, hook: _load_hooked(data, hook, kernel, what))
    tl = timeline.active()
    if tl is not None:  # the JIT slice of the module load on the timeline
        tl.jit(kernel, seen[0], time.perf_counter_ns() - t0)
    return obj


class _Verified:
    """The cache's validator that keeps what it verified, so that a hit is parsed once."""

    def __init__(self):
        self.data = self.object = None

    def __call__(self, data: bytes) -> None:
        self.object, self.data = verified_object(data), data

    def object_of(self, data: bytes) -> ObjectFile:
        return self.object if self.data is data else ObjectFile.from_bytes(data, "compiled object")


_VERIFIED_MAX = 64
_verified: dict[bytes, ObjectFile] = {}  # entry bytes -> the object they verified as, least recent first


def verified_object(data: bytes) -> ObjectFile:
    """``ObjectFile.from_bytes(data)`` for a cache entry, memoised on the bytes themselves (equal bytes
    verify the same way): a repeated hit skips decoding every instruction again.  Each call returns its
    own ObjectFile and KernelImages (shallow copies), so no caller sees another's changes to them."""
    obj = _verified.pop(data, None)
    if obj is None:
        obj = ObjectFile.from_bytes(data, "cache entry")
        if len(_verified) >= _VERIFIED_MAX:
            _verified.pop(next(iter(_verified), None), None)
    _verified[data] = obj
    return dataclasses.replace(obj, kernels={n: copy.copy(k) for n, k in obj.kernels.items()})


def _load_hooked(data, hook, kernel: str | None, what: str) -> ObjectFile:
    """The object file in the binary ``hook`` returned, verified, or a located error naming the hook."""
    subject = f"for kernel '{kernel}' of {what}" if kernel is not None else f"for the linked module {what}"
    head = f"JIT hook {jit_hooks.describe(hook)} returned"
    if not isinstance(data, bytes | bytearray | memoryview):
        raise XccError(f"{head} {type(data).__name__}, not the bytes of an .xbin image, {subject}",
                       jit_hooks.location(hook))
    try:
        obj = ObjectFile.from_bytes(bytes(data), "the image")
    except ObjectFormatError as e:
        raise ObjectFormatError(f"{head} a bad binary {subject}: {e.message}", jit_hooks.location(hook)) from None
    if kernel is not None and kernel not in obj.kernels:
        raise ObjectFormatError(f"{head} a binary without kernel '{kernel}' (it has: "
                                f"{', '.join(sorted(obj.kernels)) or 'none'}) {subject}", jit_hooks.location(hook))
    return obj
