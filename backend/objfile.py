"""The ``.xbin`` object container: versioned, checksummed, verified on load.

Layout (little-endian)::

    magic   b"XBIN"          4 bytes
    major   u16, minor u16   format version; an unknown major is rejected
    length  u64              bytes of the JSON header that follows
    header  JSON (UTF-8)     module metadata and per-kernel metadata, each kernel's code
                             given as (offset, size) into the code section
    code    bytes            the instruction words of every kernel, concatenated
    sha256  32 bytes         over everything before it

Per kernel: name, parameter layout, registers, shared/local bytes, register spills
(``spill_bytes`` of spill slots in the local frame; ``spill_stores``/``spill_loads``, the bytes
the spill code stores and loads, as ptxas reports them: keys written only when not zero, so an
image without spills is byte-for-byte what xcc wrote before spilling existed), for a kernel that
calls device functions its call stack (``stack_bytes``), the functions laid out after it
(``functions``) and its trap messages (``messages``), also written only when not empty, the module-level
``.global`` variables it uses (size, alignment, initial bytes), barriers,
max threads, the hash of the machine description it was scheduled for, and a
line table (one PTX line, and optional ``.loc`` source position, per
instruction) with the module's ``.file`` entries it uses (``source_files``, written only when not
empty; :mod:`xcc.backend.lineinfo` reads the table).  No pickle, no code execution on load.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from xcc.diagnostics import ObjectFormatError

if TYPE_CHECKING:
    from xcc.backend.minst import MInst

MAGIC = b"XBIN"
# The major version changes whenever old code would mean something else: 2.0 made FLO return
# the bit position of the top set bit (as SASS FLO and PTX bfind do) and appended new opcodes.
# 2.1 added the kernels' module-level .global variables (``globals``).
FORMAT_VERSION = (2, 1)
_PREFIX = struct.Struct("<4sHHQ")
# Kernel metadata keys written only when non-zero (added in 2.1 without a version bump: a reader
# defaults them to 0, and images without spills keep their exact bytes).
_OPTIONAL_ZERO = ("spill_stores", "spill_loads", "stack_bytes", "functions", "messages", "constants",
                  "source_files", "reloc_globals")


@dataclass(frozen=True)
class ParamInfo:
    name: str
    type: str
    offset: int
    size: int


@dataclass(frozen=True)
class GlobalVar:
    """A module-level ``.global`` variable a kernel uses: the launch allocates ``size`` bytes aligned to
    ``align``, initialised from ``init`` (hex; None: zeros), and puts the address in constant bank 0."""

    name: str
    size: int
    align: int
    init: str | None = None
    # the initialiser's variable addresses, [byte offset, width, variable, addend, mask or 0] each, written
    # by the loader when it allocates the variable (docs/isa.md, "Initialised variables"); omitted if none
    relocs: tuple[tuple, ...] = ()


@dataclass
class KernelImage:
    """One compiled kernel: its code and everything a launch needs to know about it."""

    name: str
    code: bytes
    params: list[ParamInfo]
    registers: int
    shared_bytes: int = 0
    local_bytes: int = 0
    barriers: int = 0
    max_threads: int = 1024
    machine_hash: str = ""
    lines: list[int] = field(default_factory=list)  # PTX line per instruction (0 = none)
    debug_lines: list[list[int] | None] = field(default_factory=list)  # [file, line, col] or None
    spill_bytes: int = 0  # bytes of register spill slots, part of local_bytes
    globals: list[GlobalVar] = field(default_factory=list)  # addresses at c[0x0][CBANK_GLOBALS + 8*i]
    # the module's .const variables the kernel reads: constant bank 3, laid out in this order
    # (xcc.ir.core.layout_variables), filled at each launch from the module's copies of them
    constants: list[GlobalVar] = field(default_factory=list)
    # .global variables the kernel reaches only through addresses in initialisers (globals' or constants'
    # relocs): the loader places them too, with no constant-bank slot
    reloc_globals: list[GlobalVar] = field(default_factory=list)
    reqntid: list[int] | None = None
    # thread-block clusters: .reqnctapercluster (the cluster shape every launch must use), .explicitcluster,
    # .maxclusterrank (the most CTAs a launch's cluster may have), from the kernel's directives
    reqnctapercluster: list[int] | None = None
    explicitcluster: bool = False
    maxclusterrank: int | None = None
    spill_stores: int = 0  # bytes written by spill stores (STL of spilled registers), static count
    spill_loads: int = 0  # bytes read by spill reloads, static count
    # Calls (docs/isa.md, "Calls"): the per-thread call stack, part of local_bytes, after the kernel's frame;
    # the device functions laid out after the kernel ([name, first instruction]); SYSCALL.TRAP messages.
    stack_bytes: int = 0
    functions: list[list] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    # the module's .file entries that debug_lines refer to, as [index, name] (filled in by ObjectFile)
    source_files: list[list] = field(default_factory=list)

    @property
    def instructions(self) -> list[MInst]:
        from xcc.backend.encoding import decode_all  # here, not at the top: is_xbin needs no ISA table

        return decode_all(self.code)

    @property
    def param_bytes(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)

    @property
    def instruction_count(self) -> int:
        from xcc.backend.encoding import WORD_BYTES

        return len(self.code) // WORD_BYTES


@dataclass
class ObjectFile:
    kernels: dict[str, KernelImage]
    arch: str = "xg1"
    source_name: str = ""
    source_files: dict[int, str] = field(default_factory=dict)

    def __post_init__(self):
        """Give each kernel the ``.file`` entries its line table uses, so that a kernel image names its
        source files on its own (:mod:`xcc.backend.lineinfo`)."""
        for k in self.kernels.values():
            if not k.source_files and self.source_files and k.debug_lines:
                used = {d[0] for d in k.debug_lines if isinstance(d, list | tuple) and d}
                known = sorted(i for i in used if i in self.source_files)
                k.source_files = [[i, self.source_files[i]] for i in known]

    def to_bytes(self) -> bytes:
        code = bytearray()
        kernels = []
        for name in sorted(self.kernels):
            k = self.kernels[name]
            meta = asdict(k)
            meta.pop("code")
            for key in _OPTIONAL_ZERO:
                if not meta[key]:
                    del meta[key]
            for key in ("globals", "constants", "reloc_globals"):
                for g in meta.get(key, []):
                    if not g["relocs"]:
                        del g["relocs"]
            meta["code_offset"], meta["code_size"] = len(code), len(k.code)
            code += k.code
            kernels.append(meta)
        header = json.dumps({"arch": self.arch, "source": self.source_name,
                             "files": {str(i): f for i, f in sorted(self.source_files.items())},
                             "kernels": kernels}, sort_keys=True, separators=(",", ":")).encode()
        body = _PREFIX.pack(MAGIC, *FORMAT_VERSION, len(header)) + header + bytes(code)
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<xbin>") -> ObjectFile:
        """Parse and verify an image; any damage raises :class:`ObjectFormatError` naming it."""
        from xcc.backend.encoding import WORD_BYTES, decode_all

        data = bytes(data)
        if len(data) < _PREFIX.size + 32:
            raise ObjectFormatError(f"{name}: truncated object file ({len(data)} bytes)")
        magic, major, minor, hlen = _PREFIX.unpack_from(data)
        if magic != MAGIC:
            raise ObjectFormatError(f"{name}: not an xcc object file (bad magic {magic!r})")
        if major != FORMAT_VERSION[0]:
            raise ObjectFormatError(f"{name}: unsupported object format version {major}.{minor} "
                                    f"(this xcc reads {FORMAT_VERSION[0]}.x)")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise ObjectFormatError(f"{name}: checksum mismatch: the file is truncated or corrupt")
        try:
            header = json.loads(body[_PREFIX.size:_PREFIX.size + hlen])
            code = body[_PREFIX.size + hlen:]
            kernels = {}
            for meta in header["kernels"]:
                meta = dict(meta)
                off, size = meta.pop("code_offset"), meta.pop("code_size")
                if not (isinstance(off, int) and isinstance(size, int)):
                    raise TypeError("code_offset and code_size must be integers")
                if off < 0 or size < 0 or off + size > len(code) or size % WORD_BYTES:
                    raise ObjectFormatError(f"{name}: kernel {meta.get('name')} code out of range")
                meta["params"] = [ParamInfo(**p) for p in meta["params"]]
                for key in ("globals", "constants", "reloc_globals"):
                    meta[key] = [GlobalVar(**{**g, "relocs": tuple(tuple(r) for r in g.get("relocs", ()))})
                                 for g in meta.get(key, [])]
                if not all(isinstance(e, list) and len(e) == 2 and isinstance(e[0], int) and isinstance(e[1], str)
                           for e in meta.get("source_files", [])):
                    raise ObjectFormatError(f"{name}: kernel {meta.get('name')!r}: malformed source_files")
                k = KernelImage(code=code[off:off + size], **meta)
                try:
                    decode_all(k.code)  # every word must decode
                except ObjectFormatError as e:
                    raise ObjectFormatError(f"{name}: kernel {k.name!r}: {e.message}") from None
                kernels[k.name] = k
            files = {int(i): f for i, f in header.get("files", {}).items()}
            return cls(kernels, header["arch"], header.get("source", ""), files)
        except ObjectFormatError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            raise ObjectFormatError(f"{name}: malformed object header ({e})") from None


def is_xbin(data: bytes) -> bool:
    return data[:4] == MAGIC
