"""The PTX corpus under ``examples/``: every file, and the ones the whole pipeline supports.

``SUPPORTED`` are the files whose every kernel has a numpy-referenced backend case in
``kernel_cases.CASES`` (subfolders included); they must build, verify and compile whole. A file
with a backend case beside a kernel the backend refuses (``device_functions``: calls) is among
``OTHERS``. ``IR_SUPPORTED`` are the files only the IR interpreter runs cases on
(``kernel_cases.IR_ONLY_CASES``: the backend refuses some kernel in them); they are among
``OTHERS``. The rest (tensor cores, calls, f64, ...) must at least parse, check and round-trip,
and every later stage must refuse them with a located :class:`~xcc.diagnostics.UnsupportedError`
rather than fail in any other way.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernel_cases import CASES, IR_ONLY_CASES, ptx_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
ALL_PTX = sorted(EXAMPLES_DIR.glob("**/*.ptx"))
_BACKEND_ENTRIES: dict[Path, set[str]] = {}
for _case in CASES:
    for _arch in _case.archs:
        _BACKEND_ENTRIES.setdefault(ptx_path(_case, _arch), set()).add(_case.entry)
SUPPORTED = sorted(p for p, entries in _BACKEND_ENTRIES.items()
                   if set(re.findall(r"\.entry\s+(\w+)", p.read_text())) <= entries)
# the stems of the cases (``scan_sort``, ...); a file with a supported stem need not be supported
# itself (``scan_sort.sm_80.debug.ptx`` has calls): test membership in SUPPORTED instead
SUPPORTED_STEMS = frozenset(case.ptx_stem for case in CASES)
OTHERS = [p for p in ALL_PTX if p not in SUPPORTED]
IR_SUPPORTED = sorted({ptx_path(case, arch) for case in IR_ONLY_CASES for arch in case.archs})

assert set(SUPPORTED) <= set(ALL_PTX), sorted(set(SUPPORTED) - set(ALL_PTX))
assert set(IR_SUPPORTED) <= set(OTHERS), sorted(set(IR_SUPPORTED) & set(SUPPORTED))


def corpus_id(path: Path) -> str:
    return str(path.relative_to(EXAMPLES_DIR))


CUTLASS_DIR = EXAMPLES_DIR / "cutlass"


def tiered(paths: list[Path]) -> list:
    """``paths`` as pytest parameters named by :func:`corpus_id`, the CUTLASS corpus's files (examples/cutlass/,
    1-5k lines each, which tests/test_cutlass_corpus.py checks, compiles with -v and runs in the fast tier) in the
    slow tier, to keep ``make test`` short."""
    import pytest

    return [pytest.param(p, id=corpus_id(p), marks=[pytest.mark.slow] if CUTLASS_DIR in p.parents else [])
            for p in paths]
