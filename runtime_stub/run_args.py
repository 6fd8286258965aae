"""Launch arguments written as text: the syntax of ``xcc run`` and of ``xcc regress`` corpus files.

A scalar is ``TYPE:VALUE`` (``s32:1024``, ``f32:2.5``, ``u64:0x10``); a buffer is ``FILE.npy`` (loaded
with numpy, no pickles) or ``zeros:DTYPE[N]``.  numpy is imported on first use: the command line's cold
start does without it.
"""

from __future__ import annotations

import re
from pathlib import Path

from xcc.diagnostics import XccError

# numpy's type of each PTX scalar
SCALAR_TYPES = {"s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64", "u8": "uint8",
                "u16": "uint16", "u32": "uint32", "u64": "uint64", "f32": "float32", "f64": "float64"}


class RunArgSyntaxError(XccError):
    """An argument that is not written in the syntax (a usage error, exit 2 in ``xcc run``)."""


def buffer_path(text: str, base: Path | None = None) -> Path | None:
    """The ``.npy`` file argument ``text`` names (relative to ``base`` when given), or None."""
    if not text.endswith(".npy"):
        return None
    p = Path(text)
    return p if base is None or p.is_absolute() else base / p


def parse_run_arg(text: str, base: Path | None = None):
    """``TYPE:VALUE`` scalar, ``FILE.npy`` buffer (a path relative to ``base`` when given) or
    ``zeros:DTYPE[N]``; returns ('scalar', value) or ('buffer', array).  Text outside the syntax is a
    :class:`RunArgSyntaxError`; a buffer file that cannot be loaded an :class:`XccError`."""
    import numpy as np

    m = re.fullmatch(r"zeros:(\w+)\[(\d+)\]", text)
    if m:
        try:
            return "buffer", np.zeros(int(m.group(2)), dtype=np.dtype(m.group(1)))
        except TypeError:
            raise RunArgSyntaxError(f"unknown dtype '{m.group(1)}' in '{text}'") from None
    path = buffer_path(text, base)
    if path is not None:
        try:
            return "buffer", np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise XccError(f"cannot load buffer '{text}': {e}") from None
    t, sep, v = text.partition(":")
    if sep and t in SCALAR_TYPES:
        try:
            value = float(v) if t.startswith("f") else int(v, 0)
            return "scalar", np.dtype(SCALAR_TYPES[t]).type(value)
        except (ValueError, OverflowError):
            raise RunArgSyntaxError(f"'{v}' is not a valid {t} value") from None
    raise RunArgSyntaxError(f"'{text}' is neither TYPE:VALUE, FILE.npy nor zeros:DTYPE[N]")
