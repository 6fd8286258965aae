"""The tuning record: a search's outcome in the JIT cache (:class:`xcc.cache.JitCache`, entry kind ``tuning``).

The bytes are UTF-8 JSON, never a pickle::

    {"format": "xcc-tuning/1", "kernel": "saxpy", "config": {"unroll.max-trip": 64, ...},
     "defaults": {...}, "options": {"max_registers": 64, "passes": "...", ...},
     "cycles": 1234, "baseline_cycles": 1500, "strategy": "exhaustive", "candidates": 12,
     "shape": [[grid], [block], shared_mem], "space": "<fingerprint>", "specialize": {...} | null}

(``options.profile_use``, when the winner uses a profile, is the profile's JSON document itself, so that any
process can rebuild the tuned binary.)

It is stored under two keys (:func:`record_key`), both over the PTX bytes, the kernel, the module's compile
options, the machine description's hash, the launch shape, xcc's version and sources: one with the search
space's fingerprint (``fn.autotune`` with that space finds it and does not search again; another space
misses), and one without (``space=None``: the latest tuning of that launch shape, which
``rt.load_module(src, autotuned=True)`` launches).  A record that cannot be read is a
:class:`TuningRecordError` naming the entry and the cause; it is dropped from the cache.
"""

from __future__ import annotations

import dataclasses
import json

from xcc.cache import KIND_TUNING, JitCache, cache_key
from xcc.diagnostics import XccError
from xcc.driver import CompileOptions
from xcc.tune.result import TuneResult

FORMAT = "xcc-tuning/1"
_OPTION_TYPES = {"opt_level": int, "max_registers": int, "passes": str, "pre_schedule": bool,
                 "post_schedule": bool, "specialize": dict, "launch_shape": list, "profile_use": dict}


class TuningRecordError(XccError):
    """A tuning record in the cache that is not one xcc wrote (damaged, truncated, another format)."""


def record_key(sources: tuple[bytes, ...], kernel: str, options: dict, machine_hash: str, shape: tuple,
               space: str | None) -> str:
    """The cache key of the tuning of ``kernel`` for launch ``shape`` = (grid, block, shared_mem) with search
    space fingerprint ``space`` (None: the latest tuning for the shape, whatever its space)."""
    grid, block, shared = shape
    fields = {"tuning": FORMAT, "options": options, "shape": [list(grid), list(block), shared],
              "space": space if space is not None else "*latest*"}
    return cache_key(list(sources), kernel, fields, machine_hash)


def encode(result: TuneResult, shape: tuple, space: str, specialize: dict | None) -> bytes:
    grid, block, shared = shape
    doc = {"format": FORMAT, "kernel": result.kernel, "config": result.config, "defaults": result.defaults,
           "options": result.options, "cycles": result.cycles, "baseline_cycles": result.baseline_cycles,
           "strategy": result.strategy, "candidates": len(result.candidates),
           "shape": [list(grid), list(block), shared], "space": space, "specialize": specialize}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def decode(data: bytes, where: str) -> dict:
    """The record's JSON object, checked; a :class:`TuningRecordError` naming ``where`` and the cause."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise TuningRecordError(f"{where} is corrupt: not UTF-8 JSON ({e})") from None
    if not isinstance(doc, dict):
        raise TuningRecordError(f"{where} is corrupt: a JSON {type(doc).__name__}, not an object")
    if doc.get("format") != FORMAT:
        raise TuningRecordError(f"{where} is corrupt: format {doc.get('format')!r}, expected {FORMAT!r}")
    for name, kind in (("kernel", str), ("config", dict), ("defaults", dict), ("options", dict),
                       ("cycles", int), ("baseline_cycles", int), ("strategy", str), ("space", str)):
        if not isinstance(doc.get(name), kind) or isinstance(doc.get(name), bool) and kind is int:
            raise TuningRecordError(f"{where} is corrupt: '{name}' is missing or not a {kind.__name__}")
    for name, value in doc["options"].items():
        kind = _OPTION_TYPES.get(name)
        if kind is None or not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TuningRecordError(f"{where} is corrupt: compile option '{name}' = {value!r} is not one the "
                                    "tuner sets")
    if doc.get("specialize") is not None and not isinstance(doc["specialize"], dict):
        raise TuningRecordError(f"{where} is corrupt: 'specialize' is not an object")
    return doc


def winner_options(doc: dict, base: CompileOptions, where: str) -> CompileOptions:
    """``base`` with the record's options: the tuned build's :class:`CompileOptions`."""
    opts = dict(doc["options"])
    if "launch_shape" in opts:
        opts["launch_shape"] = tuple(tuple(d) for d in opts["launch_shape"])
    try:
        return dataclasses.replace(base, **opts)
    except (XccError, TypeError, ValueError) as e:
        raise TuningRecordError(f"{where} is corrupt: its compile options are not valid ({e})") from None


def options_record(options: CompileOptions, base: CompileOptions) -> dict:
    """The fields of ``options`` that differ from ``base`` (what a record keeps), as JSON values."""
    out = {}
    for name in _OPTION_TYPES:
        if not hasattr(options, name) or getattr(options, name) == getattr(base, name):
            continue
        value = getattr(options, name)
        out[name] = (dict(value) if name == "specialize" else value.data if name == "profile_use" else
                     [list(d) for d in value] if name == "launch_shape" else value)
    return out


def to_result(doc: dict, key: str) -> TuneResult:
    return TuneResult(doc["kernel"], dict(doc["config"]), doc["cycles"], doc["baseline_cycles"], (),
                      doc["strategy"], True, key, dict(doc["options"]), dict(doc["defaults"]))


def load(cache: JitCache, key: str, what: str) -> dict | None:
    """The checked record under ``key`` or None; a corrupt one is dropped and raised as a
    :class:`TuningRecordError` (``what`` names the kernel and shape)."""
    data = cache.get(key, lambda d: None)
    if data is None:
        return None
    try:
        return decode(data, f"the tuning record {key[:16]} ({what}) in the JIT cache {cache.directory}")
    except TuningRecordError as e:
        cache._drop(key)
        raise TuningRecordError(f"{e.message}; it has been removed: tune again") from None


def store(cache: JitCache, keys: list[str], data: bytes, meta: dict) -> None:
    for key in keys:
        cache.put(key, data, {**meta, "kind": KIND_TUNING})
