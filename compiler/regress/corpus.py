"""The corpus file of ``xcc regress``: one ``[[kernel]]`` table per launch, checked field by field.

tomllib locates only syntax errors, so the schema is checked here and every error names the file, the line
of the ``[[kernel]]`` table, the table's position and name, and the field (docs/regress.md, "Corpus").
A file that fails the check cannot be tested: ``xcc regress`` exits 125 so that ``git bisect run`` skips.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from xcc.diagnostics import SourceLoc, XccError
from xcc.runtime.run_args import buffer_path, parse_run_arg

CORPUS_VERSION = 1
FIELDS = ("name", "ptx", "entry", "grid", "block", "shared_mem", "args", "check", "opt_levels", "engines",
          "machine", "max_steps")
REQUIRED = ("name", "ptx", "entry", "grid", "block")
CHECK_FIELDS = ("arg", "expected", "rtol", "atol")
ENGINES = ("isa", "ir")


class CorpusError(XccError):
    """The corpus cannot be tested: a bad corpus file or a missing input (exit 125)."""


@dataclass(frozen=True)
class Check:
    arg: int
    expected: str  # an absolute path to a .npy file
    rtol: float = 0.0
    atol: float = 0.0


@dataclass(frozen=True)
class Kernel:
    """One launch of the corpus; paths are absolute (resolved against the corpus file's folder)."""

    name: str
    ptx: tuple[str, ...]
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...] = ()
    check: tuple[Check, ...] = ()
    shared_mem: int = 0
    opt_levels: tuple[int, ...] = (3,)
    engines: tuple[str, ...] = ("isa",)
    machine: str | None = None
    max_steps: int | None = None


@dataclass
class Corpus:
    path: Path
    kernels: list[Kernel] = field(default_factory=list)


def _header_lines(text: str) -> list[int]:
    """The 1-based line of each ``[[kernel]]`` header, in order."""
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*kernel\s*\]\]", line)]


class _Where:
    """The place of one ``[[kernel]]`` table: errors point at the line of the field, or of the table."""

    def __init__(self, path: Path, lines: list[str], headers: list[int], index: int, name):
        self.path, self.lines = path, lines
        self.start = headers[index] if index < len(headers) else None
        self.end = headers[index + 1] if index + 1 < len(headers) else len(lines) + 1
        self.table = f"[[kernel]] #{index + 1}" + (f" ('{name}')" if isinstance(name, str) else "")

    def _loc(self, fieldname: str | None) -> SourceLoc | None:
        if self.start is None:
            return None
        line = self.start
        key = re.split(r"[\[.]", fieldname)[0] if fieldname else None
        for n in range(self.start + 1, self.end):
            if key and re.match(rf"\s*{re.escape(key)}\s*=", self.lines[n - 1]):
                line = n
                break
        text = self.lines[line - 1]
        return SourceLoc(str(self.path), line, len(text) - len(text.lstrip()) + 1, text)

    def error(self, fieldname: str | None, cause: str) -> CorpusError:
        return CorpusError(f"{self.table}" + (f", field '{fieldname}'" if fieldname else "") + f": {cause}",
                           self._loc(fieldname))


def _dims(v, where: _Where, name: str) -> tuple[int, int, int]:
    items = [v] if _is_int(v) else v
    if not isinstance(items, list) or not 1 <= len(items) <= 3 or not all(_is_int(x) and x >= 1 for x in items):
        raise where.error(name, f"expected a positive integer or a list of 1-3 positive integers, got {v!r}")
    return tuple((items + [1, 1])[:3])


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v, where: _Where, name: str) -> float:
    if not isinstance(v, int | float) or isinstance(v, bool) or v < 0:
        raise where.error(name, f"expected a non-negative number, got {v!r}")
    return float(v)


def _file(base: Path, text: str, where: _Where, name: str) -> str:
    p = Path(text) if Path(text).is_absolute() else base / text
    if not p.is_file():
        raise where.error(name, f"no such file '{text}' (looked for {p})")
    return str(p.resolve())


def _kernel(t, index: int, lines: list[str], headers: list[int], path: Path) -> Kernel:
    base = path.parent
    where = _Where(path, lines, headers, index, t.get("name") if isinstance(t, dict) else None)
    if not isinstance(t, dict):
        raise where.error(None, "must be a table")
    unknown = sorted(set(t) - set(FIELDS))
    if unknown:
        raise where.error(unknown[0], f"unknown field (known: {', '.join(FIELDS)})")
    for f in REQUIRED:
        if f not in t:
            raise where.error(f, "missing (required: " + ", ".join(REQUIRED) + ")")
    for f in ("name", "entry"):
        if not isinstance(t[f], str) or not t[f]:
            raise where.error(f, f"expected a non-empty string, got {t[f]!r}")
    ptx = t["ptx"] if isinstance(t["ptx"], list) else [t["ptx"]]
    if not ptx or not all(isinstance(p, str) and p for p in ptx):
        raise where.error("ptx", f"expected a path or a non-empty list of paths, got {t['ptx']!r}")
    args = t.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise where.error("args", f"expected a list of strings (xcc run's syntax), got {args!r}")
    resolved_args = []
    for i, a in enumerate(args):
        try:
            kind, _ = parse_run_arg(a, base)
        except XccError as e:  # RunArgSyntaxError, or a buffer file that cannot be loaded
            raise where.error(f"args[{i}]", e.message) from None
        p = buffer_path(a, base)
        resolved_args.append(str(p.resolve()) if p is not None else a)
    checks = _checks(t.get("check", []), where, base, args)
    shared = t.get("shared_mem", 0)
    if not _is_int(shared) or shared < 0:
        raise where.error("shared_mem", f"expected a non-negative integer, got {shared!r}")
    levels = t.get("opt_levels", [3])
    if not isinstance(levels, list) or not levels or not all(_is_int(x) and 0 <= x <= 3 for x in levels):
        raise where.error("opt_levels", f"expected a non-empty list of levels 0-3, got {levels!r}")
    engines = t.get("engines", ["isa"])
    if not isinstance(engines, list) or not engines or not all(e in ENGINES for e in engines):
        raise where.error("engines", f"expected a non-empty list of {' / '.join(ENGINES)}, got {engines!r}")
    machine = t.get("machine")
    if machine is not None and (not isinstance(machine, str) or not machine):
        raise where.error("machine", f"expected a machine name or a TOML file, got {machine!r}")
    if machine is not None:
        machine = _machine(base, machine, where)
    steps = t.get("max_steps")
    if steps is not None and (not _is_int(steps) or steps < 0):
        raise where.error("max_steps", f"expected a non-negative integer, got {steps!r}")
    return Kernel(t["name"], tuple(_file(base, p, where, "ptx") for p in ptx), t["entry"],
                  _dims(t["grid"], where, "grid"), _dims(t["block"], where, "block"), tuple(resolved_args),
                  checks, shared, tuple(dict.fromkeys(levels)), tuple(dict.fromkeys(engines)), machine, steps)


def _machine(base: Path, spec: str, where: _Where) -> str:
    """A kernel's ``machine``: a shipped description's name, or a TOML file (made absolute); either must load."""
    from xcc.backend.machine import MACHINES_DIR, load_machine

    if spec.endswith(".toml"):
        spec = _file(base, spec, where, "machine")
    elif not (MACHINES_DIR / f"{spec}.toml").is_file():
        shipped = ", ".join(sorted(p.stem for p in MACHINES_DIR.glob("*.toml")))
        raise where.error("machine", f"no machine description named '{spec}' (shipped: {shipped}; "
                          "or the path of a .toml file)")
    try:
        load_machine(spec)
    except XccError as e:  # a description that does not parse or lacks a key
        raise where.error("machine", e.message) from None
    return spec


def _checks(items, where: _Where, base: Path, args: list) -> tuple[Check, ...]:
    if not isinstance(items, list):
        raise where.error("check", f"expected a list of {{arg = INDEX, expected = \"FILE.npy\"}} tables, got {items!r}")
    out = []
    for i, c in enumerate(items):
        name = f"check[{i}]"
        if not isinstance(c, dict):
            raise where.error(name, f"expected a table {{arg = INDEX, expected = \"FILE.npy\"}}, got {c!r}")
        unknown = sorted(set(c) - set(CHECK_FIELDS))
        if unknown:
            raise where.error(f"{name}.{unknown[0]}", f"unknown field (known: {', '.join(CHECK_FIELDS)})")
        arg = c.get("arg")
        if not _is_int(arg) or not 0 <= arg < len(args):
            raise where.error(f"{name}.arg", f"expected the index of a buffer argument (0-{len(args) - 1}), "
                              f"got {arg!r}")
        if not (args[arg].endswith(".npy") or args[arg].startswith("zeros:")):
            raise where.error(f"{name}.arg", f"argument {arg} ('{args[arg]}') is a scalar, not a buffer")
        exp = c.get("expected")
        if not isinstance(exp, str) or not exp.endswith(".npy"):
            raise where.error(f"{name}.expected", f"expected a .npy file, got {exp!r}")
        out.append(Check(arg, _file(base, exp, where, f"{name}.expected"),
                         _number(c.get("rtol", 0.0), where, f"{name}.rtol"),
                         _number(c.get("atol", 0.0), where, f"{name}.atol")))
    return tuple(out)


def load_corpus(path: str | Path) -> Corpus:
    """Read and check the corpus file ``path``: a :class:`CorpusError` naming the place and cause on any fault."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"cannot read corpus file '{path}': {getattr(e, 'strerror', None) or e}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = None
        if m:
            n = int(m.group(1))
            loc = SourceLoc(str(path), n, int(m.group(2)), text.splitlines()[n - 1] if n <= text.count("\n") + 1 else None)
        raise CorpusError(f"{path}: invalid TOML: {e}" if loc is None else f"invalid TOML: {str(e).split(' (at line')[0]}",
                          loc) from None
    unknown = sorted(set(data) - {"version", "kernel"})
    if unknown:
        raise CorpusError(f"{path}: unknown top-level key '{unknown[0]}' (known: version, kernel)")
    version = data.get("version", CORPUS_VERSION)
    if version != CORPUS_VERSION:
        raise CorpusError(f"{path}: version = {version!r}: this xcc reads corpus version {CORPUS_VERSION}")
    tables = data.get("kernel", [])
    if not isinstance(tables, list) or not tables:
        raise CorpusError(f"{path}: no [[kernel]] table")
    lines, headers = text.splitlines(), _header_lines(text)
    kernels = [_kernel(t, i, lines, headers, path) for i, t in enumerate(tables)]
    seen: dict[str, int] = {}
    for i, k in enumerate(kernels):
        if k.name in seen:
            where = _Where(path, lines, headers, i, k.name)
            raise where.error("name", f"'{k.name}' is already the name of [[kernel]] #{seen[k.name] + 1}")
        seen[k.name] = i
    return Corpus(path.resolve(), kernels)
