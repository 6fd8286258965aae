"""Source lines of a kernel image: pc -> (PTX line, CUDA source file, source line), read from its line table.

Code generation records, for every instruction of a :class:`~xcc.backend.objfile.KernelImage`, the PTX line
it came from (``lines``) and the ``.loc`` position in force there (``debug_lines``: ``[file index, line,
column]``, present in PTX built with ``nvcc -lineinfo`` or ``-G``), and the image carries the module's
``.file`` table for the indices it uses (``source_files``).  This module reads that table; the fault
diagnostics, the hot-spot view, ``xcc disasm``, the timeline and the advisor all name source lines through
it, as compute-sanitizer and Nsight Compute do from the DWARF line table of a ``-lineinfo`` cubin.

nvcc writes the ``.cu`` path as it was given to it (usually absolute, the build machine's).  To show the
source text, :func:`resolve_source` looks for the file (1) at that path, (2) relative to the folder of the
PTX file, (3) by its base name in the folder of the PTX file (the PTX was generated beside its ``.cu``, as
in ``examples/``): the rule that finds ``examples/X.cu`` for a PTX written in another checkout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LineInfo", "file_table", "kernel_source", "line_info", "resolve_source", "source_text"]


@dataclass(frozen=True)
class LineInfo:
    """Where instruction ``pc`` came from: its PTX line (0: none) and its CUDA source position (None: no
    ``.loc``, or line 0, nvcc's mark for code of no particular line)."""

    ptx_line: int = 0
    file: str | None = None  # the .file name, as the PTX wrote it
    line: int | None = None
    column: int | None = None

    @property
    def source(self) -> str | None:
        """``file:line`` with the file as the PTX names it (compute-sanitizer's form), or None."""
        return f"{self.file}:{self.line}" if self.file is not None else None

    @property
    def short(self) -> str | None:
        """``name.cu:line`` (the file's base name), or None: for narrow columns."""
        return f"{Path(self.file).name}:{self.line}" if self.file is not None else None


def file_table(kernel) -> dict[int, str]:
    """The ``.file`` entries the image ``kernel`` carries: index -> name (malformed entries are skipped)."""
    out = {}
    for entry in getattr(kernel, "source_files", None) or []:
        if isinstance(entry, list | tuple) and len(entry) == 2 and isinstance(entry[0], int) \
                and isinstance(entry[1], str):
            out[entry[0]] = entry[1]
    return out


def line_info(kernel, pc: int, files: dict[int, str] | None = None) -> LineInfo:
    """The PTX line and source position of instruction ``pc`` of ``kernel`` (a KernelImage); ``files``
    overrides the image's own ``.file`` table."""
    lines = getattr(kernel, "lines", None) or []
    ptx = lines[pc] if 0 <= pc < len(lines) and isinstance(lines[pc], int) else 0
    dbg = getattr(kernel, "debug_lines", None) or []
    d = dbg[pc] if 0 <= pc < len(dbg) else None
    if not (isinstance(d, list | tuple) and len(d) >= 2 and all(isinstance(x, int) for x in d[:3])) or d[1] <= 0:
        return LineInfo(ptx)
    table = file_table(kernel) if files is None else files
    name = table.get(d[0])
    if name is None:
        return LineInfo(ptx)
    return LineInfo(ptx, name, d[1], d[2] if len(d) > 2 else None)


def kernel_source(kernel) -> LineInfo:
    """Where the kernel itself is: its first PTX line, and the first line it has in the source file of its
    first instruction with a position (the function's declaration, which nvcc's first ``.loc`` names);
    without positions, an empty :class:`LineInfo` but for the PTX line."""
    files = file_table(kernel)
    first_ptx = min((x for x in getattr(kernel, "lines", None) or [] if isinstance(x, int) and x > 0), default=0)
    infos = [line_info(kernel, pc, files) for pc in range(len(getattr(kernel, "debug_lines", None) or []))]
    named = [i for i in infos if i.file is not None]
    if not named:
        return LineInfo(first_ptx)
    top = min((i for i in named if i.file == named[0].file), key=lambda i: (i.line, i.column or 0))
    return LineInfo(first_ptx, top.file, top.line, top.column)


def resolve_source(name: str, ptx_path: str | Path | None = None) -> Path | None:
    """The file a ``.file`` name denotes on this machine (the module docstring's rule), or None."""
    p = Path(name)
    candidates = [p]
    if ptx_path is not None:
        near = Path(ptx_path).parent
        if not p.is_absolute():
            candidates.append(near / p)
        candidates.append(near / p.name)
    return next((c for c in candidates if c.is_file()), None)


@functools.lru_cache(maxsize=64)
def _read_lines(path: str, mtime: float) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(errors="replace").splitlines())
    except OSError:
        return ()


def source_text(name: str, line: int, ptx_path: str | Path | None = None) -> str | None:
    """Line ``line`` of source file ``name`` (found by :func:`resolve_source`), without its newline; None
    when the file cannot be found or is shorter."""
    path = resolve_source(name, ptx_path)
    if path is None:
        return None
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    lines = _read_lines(str(path), mtime)
    return lines[line - 1] if 0 < line <= len(lines) else None
