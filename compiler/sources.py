"""The compiler's input: PTX text with its name, read from a path, bytes or a string (an .xbin image
comes back as its bytes).

Apart from the driver so that ``xcc check`` reads its files without importing code generation;
:mod:`xcc.driver` re-exports :class:`Source` and :func:`read_source`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xcc.diagnostics import XccError


@dataclass
class Source:
    text: str
    name: str


def read_source(src: str | Path | bytes, default_name: str = "<ptx>") -> Source | bytes:
    """A PTX :class:`Source`, or the bytes of an .xbin image."""
    from xcc.backend.objfile import is_xbin

    if isinstance(src, Path) or (isinstance(src, str) and "\n" not in src and len(src) < 4096
                                 and Path(src).is_file()):
        path = Path(src)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise XccError(f"cannot read '{path}': {e.strerror}") from None
        if is_xbin(data):
            return data
        return Source(_decode(data, str(path)), str(path))
    if isinstance(src, bytes | bytearray):
        if is_xbin(bytes(src)):
            return bytes(src)
        return Source(_decode(bytes(src), default_name), default_name)
    if isinstance(src, str):
        return Source(src, default_name)
    raise XccError(f"expected PTX text, a path or bytes, got {type(src).__name__}")


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise XccError(f"{name}: not a text file (byte {e.start} is not UTF-8)") from None
