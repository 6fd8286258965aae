"""Separate compilation and link-time optimisation: ``xcc compile -c`` writes ``.xo`` relocatable objects,
``xcc link`` (and ``rt.load_module`` given ``.xo`` files) links them with PTX and optimises across modules.

The model is LLVM's full LTO as ``nvcc -dc -dlto`` / ``clang -flto`` use it: an object holds IR, not machine
code, so the link sees every function of the program.

* :func:`compile_relocatable` (``-c``): parse and build each PTX input, link the inputs of the invocation with
  unresolved externs allowed (:func:`xcc.ir.link.link_modules` ``partial``), run the per-module pipeline (the
  ``-O`` level's, or ``--passes``) with every pass that has a ``whole_program`` option told that other modules
  may call the functions with linkage, and wrap the IR in a :class:`RelocatableObject` (docs/xo-format.md).
* :func:`link_program` (``link``): read ``.xo`` and PTX inputs, link them (every extern resolved, or a
  :class:`~xcc.diagnostics.LinkError` naming the symbol and the input that needs it), give function pointers
  their addresses (:mod:`xcc.ir.funcptr`), then run :data:`LTO_PIPELINE`: internalize what no one outside the
  program uses (kernels and ``__device__`` variables stay), propagate constants into callees, inline across
  modules, and delete what is left unreferenced.
* :func:`link`: :func:`link_program`, then the normal ``-O`` pipeline and the backend
  (:func:`xcc.driver.compile_ir`) into one ``.xbin``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from xcc.backend.objfile import ObjectFile
from xcc.diagnostics import LinkError, ObjectFormatError, XccError
from xcc.driver import CompileOptions, KernelStats, Source, compile_ir, pipeline, read_source
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.core import Module
from xcc.ir.funcptr import resolve_function_pointers
from xcc.ir.link import link_modules
from xcc.ir.serialize import dump_module, load_module_ir
from xcc.passes import PassManager
from xcc.passes.manager import build_pipeline

XO_MAGIC = b"XCCO"
XO_VERSION = (1, 0)
_PREFIX = struct.Struct("<4sHHQQ")  # magic, major, minor, header bytes, payload bytes

LTO_PIPELINE = "internalize,ipconst,inline,globaldce"
"""What :func:`link_program` runs on the linked module before the ``-O`` pipeline (``-O1`` and up; ``-O0``
runs only :data:`LTO_PIPELINE_O0`), as LLVM's LTO pipeline starts with InternalizePass, IPSCCP, the inliner
and GlobalDCE."""
LTO_PIPELINE_O0 = "internalize,globaldce"
DEFAULT_OPTIONS = CompileOptions()


@dataclass
class RelocatableObject:
    """An ``.xo``: the IR of the inputs of one ``xcc compile -c`` after the per-module pipeline, the options it
    was compiled with and the inputs' names (docs/xo-format.md)."""

    module: Module
    options: dict = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        payload = zlib.compress(dump_module(self.module), 6)
        header = json.dumps({"arch": self.options.get("arch", "xg1"), "options": self.options,
                             "inputs": self.inputs, "payload": "xcc-ir+zlib"},
                            sort_keys=True, separators=(",", ":")).encode()
        body = _PREFIX.pack(XO_MAGIC, *XO_VERSION, len(header), len(payload)) + header + payload
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<xo>") -> RelocatableObject:
        """Parse and check an ``.xo``; damage, another format or an unknown major version is an
        :class:`~xcc.diagnostics.ObjectFormatError` naming ``name``."""
        data = bytes(data)
        if len(data) < _PREFIX.size + 32:
            raise ObjectFormatError(f"{name}: truncated relocatable object ({len(data)} bytes)")
        magic, major, minor, hlen, plen = _PREFIX.unpack_from(data)
        if magic != XO_MAGIC:
            raise ObjectFormatError(f"{name}: not an xcc relocatable object (bad magic {magic!r})")
        if major != XO_VERSION[0]:
            raise ObjectFormatError(f"{name}: unsupported relocatable object version {major}.{minor} "
                                    f"(this xcc reads {XO_VERSION[0]}.x)")
        body, digest = data[:-32], data[-32:]
        if len(body) != _PREFIX.size + hlen + plen or hashlib.sha256(body).digest() != digest:
            raise ObjectFormatError(f"{name}: checksum mismatch: the file is truncated or corrupt")
        try:
            header = json.loads(body[_PREFIX.size:_PREFIX.size + hlen])
            options, inputs = dict(header["options"]), [str(x) for x in header["inputs"]]
            if header.get("payload") != "xcc-ir+zlib":
                raise ObjectFormatError(f"{name}: unknown payload encoding {header.get('payload')!r}")
            ir = zlib.decompress(body[_PREFIX.size + hlen:])
        except ObjectFormatError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, zlib.error) as e:
            raise ObjectFormatError(f"{name}: malformed relocatable object header ({e})") from None
        return cls(load_module_ir(ir, name), options, inputs)


def is_xo(data: bytes) -> bool:
    return bytes(data[:4]) == XO_MAGIC


def read_input(src, default_name: str = "<ptx>") -> Source | bytes | RelocatableObject:
    """:func:`xcc.driver.read_source`, plus ``.xo`` objects (a path or bytes) as :class:`RelocatableObject`."""
    if isinstance(src, RelocatableObject | Source):
        return src
    if isinstance(src, bytes | bytearray) and is_xo(src):
        return RelocatableObject.from_bytes(bytes(src), default_name)
    if isinstance(src, Path) or (isinstance(src, str) and "\n" not in src and len(src) < 4096 and Path(src).is_file()):
        try:
            with open(src, "rb") as f:
                head = f.read(4)
        except OSError as e:
            raise XccError(f"cannot read '{src}': {e.strerror}") from None
        if is_xo(head):
            return RelocatableObject.from_bytes(Path(src).read_bytes(), str(src))
    return read_source(src, default_name)


def relocatable_passes(options: CompileOptions) -> list:
    """The per-module pipeline of ``-c``: the ``-O`` level's (or ``options.passes``), with ``whole_program``
    off wherever a pass has that option, and without ``internalize`` (other modules may use the symbols)."""
    out = []
    for p in build_pipeline(pipeline(options)):
        if p.name == "internalize":
            continue
        if any(f.name == "whole_program" for f in dataclasses.fields(p)):
            p = dataclasses.replace(p, whole_program=False)
        out.append(p)
    return out


def compile_relocatable(sources: list[Source], options: CompileOptions = DEFAULT_OPTIONS,
                        print_after: str | None = None, out: TextIO | None = None) -> RelocatableObject:
    """``xcc compile -c``: the IR of ``sources`` linked together (externs may stay unresolved) after the
    per-module pipeline (:func:`relocatable_passes`)."""
    module = link_modules([build_module(parse(s.text, s.name)) for s in sources], partial=True)
    PassManager(relocatable_passes(options), verify=options.verify, print_after=print_after, out=out).run(module)
    return RelocatableObject(module, options.key(), [s.name for s in sources])


def link_program(inputs: list, options: CompileOptions = DEFAULT_OPTIONS, print_after: str | None = None,
                 out: TextIO | None = None) -> Module:
    """The linked, link-time-optimised IR of ``inputs`` (:class:`RelocatableObject`, :class:`Source`, paths
    or bytes of ``.xo`` or PTX): link, function pointers, then :data:`LTO_PIPELINE`."""
    modules = []
    for k, item in enumerate(inputs):
        r = read_input(item, f"<input {k}>")
        if r is item and isinstance(item, RelocatableObject):  # link a copy: the passes change it in place
            r = RelocatableObject.from_bytes(item.to_bytes(), item.module.filename)
        if isinstance(r, bytes):
            raise LinkError(f"{_name(item, k)}: an .xbin image holds machine code and cannot be linked "
                            "(link its .xo or PTX instead)")
        if isinstance(r, RelocatableObject):
            if isinstance(item, str | Path):
                r.module.filename = str(item)  # link errors name the object that needs a symbol
            arch = r.options.get("arch", "xg1")
            if arch != options.arch:
                raise LinkError(f"{r.module.filename}: compiled for '{arch}', linking for '{options.arch}'")
            modules.append(r.module)
        else:
            modules.append(build_module(parse(r.text, r.name)))
    if not modules:
        raise LinkError("nothing to link: no input files")
    module = resolve_function_pointers(link_modules(modules))
    lto = LTO_PIPELINE if options.opt_level > 0 else LTO_PIPELINE_O0
    return PassManager(lto, verify=options.verify, print_after=print_after, out=out).run(module)


def link(inputs: list, options: CompileOptions = DEFAULT_OPTIONS, kernels: list[str] | None = None,
         print_after: str | None = None, out: TextIO | None = None,
         stats: dict[str, KernelStats] | None = None, machine=None) -> ObjectFile:
    """``xcc link``: :func:`link_program`, then the ``-O`` pipeline and the backend, into one object file."""
    module = link_program(inputs, options, print_after, out)
    return compile_ir(module, options, kernels, print_after, out, stats, machine, source_name=module.filename)


def _name(item, k: int) -> str:
    return str(item) if isinstance(item, str | Path) else f"<input {k}>"
