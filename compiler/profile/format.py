"""The profile file: versioned JSON (never pickle), validated field by field with located errors.

Layout (``version`` 1; docs/profiles.md describes every field)::

    {"format": "xcc-profile", "version": 1,
     "module": {"hash": "<sha256 of the PTX sources>", "name": "<file name>"},
     "kernels": {"<kernel>": {"launches": N,
         "shapes":   [{"grid": [x, y, z], "block": [x, y, z], "launches": N}],
         "args":     {"<param>": {"type": "u32", "values": [[value, launches], ...], "other": N}},
         "blocks":   [{"block": name, "file": f, "line": L, "warps": N, "threads": N}],
         "branches": [{"block": name, "file": f, "line": L, "taken": N, "not_taken": N, "divergent": N}],
         "loops":    [{"header": name, "file": f, "line": L, "entries": N, "iterations": N}],
         "calls":    [{"callee": name, "file": f, "line": L, "warps": N}],
         "stalls":   [{"file": f, "line": L, "issued": N, "cycles": N, "reasons": {"<reason>": N}}]}}}

Everything is keyed by PTX position (file and line, with the IR block's name beside it), not by machine pc, so a
profile survives recompilation.  Float argument values are written with ``float.hex`` (exact, NaN included).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from xcc.diagnostics import XccError

FORMAT = "xcc-profile"
VERSION = 1
MAX_VALUES = 8
"""Distinct values kept per scalar argument; launches with further values count in ``other``."""


class ProfileError(XccError):
    """A profile that cannot be read or does not belong where it is used: names the file, the field and the cause."""


def module_hash(texts: list[str]) -> str:
    """The content hash naming a module in a profile: sha256 over its PTX sources, in order."""
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    return h.hexdigest()


class Profile:
    """A validated profile: ``data`` is the JSON document (module docstring); immutable once made."""

    def __init__(self, data: dict, where: str = "<profile>"):
        validate(data, where)
        self.data = data
        self.where = where
        self.digest = hashlib.sha256(self.to_json().encode()).hexdigest()

    @property
    def module_hash(self) -> str:
        return self.data["module"]["hash"]

    @property
    def kernels(self) -> dict[str, dict]:
        return self.data["kernels"]

    def to_json(self) -> str:
        """The canonical text: sorted keys, so the same profile is the same bytes (and digest)."""
        return json.dumps(self.data, sort_keys=True, indent=1) + "\n"

    def save(self, path) -> None:
        Path(path).write_text(self.to_json())

    def check_module(self, texts_hash: str, what: str) -> None:
        """A :class:`ProfileError` unless this profile was recorded on the module whose hash is ``texts_hash``."""
        if self.module_hash != texts_hash:
            raise ProfileError(f"{self.where}: the profile is of another module ('{self.data['module']['name']}', "
                               f"hash {self.module_hash[:12]}), not of {what} (hash {texts_hash[:12]})")

    def __eq__(self, other) -> bool:
        return isinstance(other, Profile) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __deepcopy__(self, memo) -> Profile:
        return self  # immutable

    def __repr__(self) -> str:
        return f"<Profile {self.data['module']['name']} kernels={sorted(self.kernels)} {self.digest[:12]}>"


def load_profile(src, where: str | None = None) -> Profile:
    """A :class:`Profile` from a path, JSON text or a Profile; a corrupt file is a located :class:`ProfileError`."""
    if isinstance(src, Profile):
        return src
    if isinstance(src, dict):
        return Profile(src, where or "<profile>")
    if isinstance(src, str) and src.lstrip().startswith("{"):
        text, where = src, where or "<profile text>"
    else:
        where = where or str(src)
        try:
            text = Path(src).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ProfileError(f"{where}: cannot read the profile: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProfileError(f"{where}:{e.lineno}:{e.colno}: not a profile (invalid JSON: {e.msg})") from None
    return Profile(data, where)


# ------------------------------------------------------------------------------------------------ validation
_INT, _STR, _DIM = "int", "str", "dim3"
RECORDS = {
    "shapes": {"grid": _DIM, "block": _DIM, "launches": _INT},
    "blocks": {"block": _STR, "file": _STR, "line": _INT, "warps": _INT, "threads": _INT},
    "branches": {"block": _STR, "file": _STR, "line": _INT, "taken": _INT, "not_taken": _INT, "divergent": _INT},
    "loops": {"header": _STR, "file": _STR, "line": _INT, "entries": _INT, "iterations": _INT},
    "calls": {"callee": _STR, "file": _STR, "line": _INT, "warps": _INT},
    "stalls": {"file": _STR, "line": _INT, "issued": _INT, "cycles": _INT, "reasons": "reasons"},
}


def _fail(where: str, field: str, cause: str):
    raise ProfileError(f"{where}: {field}: {cause}")


def _check(value, kind: str, where: str, field: str) -> None:
    ok = {_INT: lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
          _STR: lambda v: isinstance(v, str),
          _DIM: lambda v: isinstance(v, list) and len(v) == 3 and all(isinstance(x, int) and x >= 1 for x in v),
          "reasons": lambda v: isinstance(v, dict) and all(isinstance(n, int) and n >= 0 for n in v.values())}[kind]
    if not ok(value):
        want = {_INT: "a non-negative integer", _STR: "a string", _DIM: "three positive integers",
                "reasons": "an object of non-negative integers"}[kind]
        _fail(where, field, f"expected {want}, got {value!r:.60}")


def validate(data, where: str) -> None:
    """Raise a :class:`ProfileError` naming the first field of ``data`` that is missing or of the wrong kind."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        _fail(where, "format", f"not an xcc profile (expected \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        _fail(where, "version", f"version {data.get('version')!r} is not supported (this xcc reads {VERSION})")
    mod = data.get("module")
    if not isinstance(mod, dict):
        _fail(where, "module", "missing")
    for k in ("hash", "name"):
        _check(mod.get(k), _STR, where, f"module.{k}")
    kernels = data.get("kernels")
    if not isinstance(kernels, dict):
        _fail(where, "kernels", "expected an object of kernels")
    for name, k in kernels.items():
        at = f"kernels.{name}"
        if not isinstance(k, dict):
            _fail(where, at, "expected an object")
        _check(k.get("launches"), _INT, where, f"{at}.launches")
        for rec, fields in RECORDS.items():
            rows = k.get(rec)
            if not isinstance(rows, list):
                _fail(where, f"{at}.{rec}", "expected a list")
            for i, row in enumerate(rows):
                if not isinstance(row, dict):
                    _fail(where, f"{at}.{rec}[{i}]", "expected an object")
                for f, kind in fields.items():
                    _check(row.get(f), kind, where, f"{at}.{rec}[{i}].{f}")
        args = k.get("args")
        if not isinstance(args, dict):
            _fail(where, f"{at}.args", "expected an object")
        for p, a in args.items():
            f = f"{at}.args.{p}"
            if not isinstance(a, dict):
                _fail(where, f, "expected an object")
            _check(a.get("type"), _STR, where, f"{f}.type")
            _check(a.get("other"), _INT, where, f"{f}.other")
            vals = a.get("values")
            if not isinstance(vals, list) or not all(
                    isinstance(v, list) and len(v) == 2 and isinstance(v[0], int | str) and isinstance(v[1], int)
                    for v in vals):
                _fail(where, f"{f}.values", "expected a list of [value, launches] pairs")


def decode_value(v: int | str) -> int | float:
    """An argument value as written: an int, or a float in ``float.hex`` form."""
    return float.fromhex(v) if isinstance(v, str) else v


def encode_value(v: int | float) -> int | str:
    return v.hex() if isinstance(v, float) else int(v)
