"""The PTX corpus under ``examples/``: every file, and the ones the whole pipeline supports.

``SUPPORTED`` are the files of the kernels with numpy references in ``kernel_cases``; they
must build, verify and compile. The rest (tensor cores, calls, f64, ...) must at least parse,
check and round-trip, and every later stage must refuse them with a located
:class:`~xcc.diagnostics.UnsupportedError` rather than fail in any other way.
"""

from __future__ import annotations

from pathlib import Path

from kernel_cases import CASES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
ALL_PTX = sorted(EXAMPLES_DIR.glob("**/*.ptx"))
SUPPORTED_STEMS = frozenset(case.ptx_stem for case in CASES)
SUPPORTED = [p for p in ALL_PTX if p.parent == EXAMPLES_DIR and p.name.split(".")[0] in SUPPORTED_STEMS]
OTHERS = [p for p in ALL_PTX if p not in SUPPORTED]


def corpus_id(path: Path) -> str:
    return str(path.relative_to(EXAMPLES_DIR))
