"""The IR's serialised form: a versioned JSON document that reads back to an equal module (no pickle).

``dump_module(m) -> bytes`` and ``load_module_ir(data, name) -> Module``; what the ``.xo`` relocatable
object (docs/xo-format.md) carries as its payload, as LLVM bitcode is what ``-flto`` objects carry.
The document (UTF-8 JSON, keys sorted, so the same module always gives the same bytes)::

    {"format": "xcc-ir", "version": 1, "filename": ..., "files": {"1": "a.cu"},
     "locs": [[file, line, col, source line or null], ...],         source places, each once
     "consts": [[type, bits], ...],                                   constants, each object once
     "variables": [VAR...], "declarations": [["f", loc | null]...],
     "functions": [{"name", "entry", "linkage", "loc", "directives": [[name, [int...]]...],
                    "params": [PARAM...], "rets": [PARAM...], "variables": [VAR...],
                    "blocks": [{"name", "preds": [block index...], "phis": [[type, name, [ARG...]]...],
                                "insts": [[op, type | null, [ARG...], [type, name] | null,
                                           [[attr, VALUE]...], loc | null, debug_loc | null]...]}]}]}

Values are numbered per function in order of definition (each block's phis, then its instructions); an
ARG is that number, or ``[k]`` for constant ``k`` of the table (a constant object used in several places is
one entry: code generation tells shared constants apart, so the round trip keeps the sharing).  PARAM is ``[name, type, offset, size, align]``,
VAR ``[name, space, size, align, init hex | null, extern, linkage, [[offset, function]...]]``.  Attribute
values are JSON scalars as they are, and tagged otherwise: ``{"list": [...]}``, ``{"tuple": [...]}``,
``{"blocks": [index...]}`` (branch targets), ``{"float": hex}``, ``{"dict": [[key, value]...]}``.

A document of another format or version, malformed JSON, a missing or ill-typed field, or IR that does
not verify is an :class:`~xcc.diagnostics.ObjectFormatError` naming the input and the place in it.
"""

from __future__ import annotations

import json
from typing import Any

from xcc.diagnostics import ObjectFormatError, SourceLoc, XccError
from xcc.ir.core import Block, Const, Function, Instruction, Module, Param, Phi, Value, Variable
from xcc.ir.types import TYPES, ScalarType
from xcc.ir.verifier import verify_module

FORMAT = "xcc-ir"
VERSION = 1


def dump_module(module: Module) -> bytes:
    """``module`` as the serialised document (deterministic bytes)."""
    w = _Writer()
    doc = {"format": FORMAT, "version": VERSION, "filename": module.filename,
           "files": {str(k): v for k, v in sorted(module.source_files.items())},
           "variables": [_var(v) for v in module.variables],
           "declarations": [[n, w.loc(loc)] for n, loc in module.declarations.items()],
           "functions": [w.function(f) for f in module.functions]}
    doc["locs"], doc["consts"] = w.locs, w.consts
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def load_module_ir(data: bytes, name: str = "<ir>") -> Module:
    """The module serialised in ``data`` (see the module docstring); ``name`` names the input in errors."""
    try:
        doc = json.loads(bytes(data).decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ObjectFormatError(f"{name}: not an xcc IR document (byte {e.start} is not UTF-8)") from None
    except json.JSONDecodeError as e:
        raise ObjectFormatError(f"{name}: malformed IR document: {e.msg}",
                                SourceLoc(name, e.lineno, e.colno)) from None
    except RecursionError:
        raise ObjectFormatError(f"{name}: malformed IR document: nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ObjectFormatError(f"{name}: not an xcc IR document (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ObjectFormatError(f"{name}: unsupported IR version {doc.get('version')!r} (this xcc reads {VERSION})")
    r = _Reader(name)
    try:
        module = r.module(doc)
    except XccError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise ObjectFormatError(f"{name}: malformed IR document at {r.where()}: {type(e).__name__}: {e}") from None
    empty = next((f.name for f in module.functions if not f.blocks), None)
    if empty is not None:
        raise ObjectFormatError(f"{name}: the IR does not verify: function '{empty}' has no blocks")
    try:
        verify_module(module, f"reading {name}")
    except XccError as e:
        raise ObjectFormatError(f"{name}: the IR does not verify: {e.message}") from None
    return module


# ------------------------------------------------------------------------------------------------ writing


def _param(p: Param) -> list:
    return [p.name, p.type, p.offset, p.size, p.align]


def _var(v: Variable) -> list:
    out = [v.name, v.space, v.size, v.align, None if v.init is None else v.init.hex(), v.extern, v.linkage,
           [[off, fn] for off, fn in v.relocs]]
    return out + [[list(r) for r in v.addr_relocs]] if v.addr_relocs else out  # (a 9th entry only when set)


class _Writer:
    def __init__(self):
        self.locs: list[list] = []
        self._loc_index: dict[SourceLoc, int] = {}
        self.consts: list[list] = []
        self._const_index: dict[Const, int] = {}  # by identity: code generation tells shared constants apart

    def loc(self, loc: SourceLoc | None) -> int | None:
        if loc is None:
            return None
        k = self._loc_index.get(loc)
        if k is None:
            k = self._loc_index[loc] = len(self.locs)
            self.locs.append([loc.file, loc.line, loc.col, loc.source_line])
        return k

    def function(self, f: Function) -> dict:
        index = {b: k for k, b in enumerate(f.blocks)}
        number: dict[Value, int] = {}
        for b in f.blocks:
            for phi in b.phis:
                number[phi.result] = len(number)
            for inst in b.instructions:
                if inst.result is not None:
                    number[inst.result] = len(number)

        def arg(v: Value):
            if isinstance(v, Const):
                if v not in self._const_index:
                    self._const_index[v] = len(self.consts)
                    self.consts.append([v.type.name, v.bits])
                return [self._const_index[v]]
            if v not in number:
                raise XccError(f"cannot serialise '{f.name}': a value used but defined nowhere in it")
            return number[v]

        def attr(v: Any):
            if v is None or isinstance(v, bool | int | str):
                return v
            if isinstance(v, float):
                return {"float": v.hex()}
            if isinstance(v, list | tuple) and v and all(isinstance(x, Block) for x in v):
                return {"blocks": [index[x] for x in v]}
            if isinstance(v, list):
                return {"list": [attr(x) for x in v]}
            if isinstance(v, tuple):
                return {"tuple": [attr(x) for x in v]}
            if isinstance(v, dict):
                return {"dict": [[k, attr(x)] for k, x in v.items()]}
            raise XccError(f"cannot serialise '{f.name}': an attribute of type {type(v).__name__}")

        blocks = []
        for b in f.blocks:
            phis = [[p.result.type.name, p.result.name, [arg(a) for a in p.args]] for p in b.phis]
            insts = [[i.op, None if i.type is None else i.type.name, [arg(a) for a in i.args],
                      None if i.result is None else [i.result.type.name, i.result.name],
                      [[k, attr(v)] for k, v in i.attrs.items()], self.loc(i.loc),
                      None if i.debug_loc is None else list(i.debug_loc)] for i in b.instructions]
            blocks.append({"name": b.name, "preds": [index[p] for p in b.preds], "phis": phis, "insts": insts})
        return {"name": f.name, "entry": f.is_entry, "linkage": f.linkage, "loc": self.loc(f.loc),
                "directives": [[k, list(v)] for k, v in f.directives.items()],
                "params": [_param(p) for p in f.params], "rets": [_param(p) for p in f.ret_params],
                "variables": [_var(v) for v in f.variables], "blocks": blocks}


# ------------------------------------------------------------------------------------------------ reading


class _Reader:
    def __init__(self, name: str):
        self.name = name
        self.path: list[str] = []
        self.locs: list[SourceLoc] = []
        self.consts: list[Const] = []

    def where(self) -> str:
        return ".".join(self.path) or "the top level"

    def module(self, doc: dict) -> Module:
        self.path = ["locs"]
        self.locs = [SourceLoc(_str(f), _int(ln), _int(col), None if src is None else _str(src))
                     for f, ln, col, src in doc["locs"]]
        self.path = ["consts"]
        self.consts = [Const(_type(t), _int(bits)) for t, bits in doc["consts"]]
        self.path = ["variables"]
        variables = [_read_var(v) for v in doc["variables"]]
        self.path = ["declarations"]
        declarations = {_str(n): self.loc(k) for n, k in doc["declarations"]}
        functions = []
        for k, f in enumerate(doc["functions"]):
            self.path = [f"functions[{k}]"]
            functions.append(self.function(f))
        self.path = ["files"]
        files = {int(k): _str(v) for k, v in doc["files"].items()}
        return Module(functions, variables, files, _str(doc["filename"]), declarations)

    def loc(self, k) -> SourceLoc | None:
        return None if k is None else self.locs[_int(k)]

    def function(self, d: dict) -> Function:
        blocks = [Block(_str(b["name"])) for b in d["blocks"]]
        values: list[Value] = []
        for b in d["blocks"]:  # every definition first: a phi may use a value defined further down
            for t, n, _ in b["phis"]:
                values.append(Value(_type(t), _str(n)))
            for inst in b["insts"]:
                if inst[3] is not None:
                    values.append(Value(_type(inst[3][0]), _str(inst[3][1])))

        def arg(a) -> Value:
            if isinstance(a, list):
                (k,) = a
                return self.consts[_int(k)]
            return values[_int(a)]

        def attr(v):
            if v is None or isinstance(v, bool | int | str):
                return v
            (tag, x), = v.items()
            if tag == "blocks":
                return [blocks[_int(i)] for i in x]
            if tag == "list":
                return [attr(y) for y in x]
            if tag == "tuple":
                return tuple(attr(y) for y in x)
            if tag == "float":
                return float.fromhex(x)
            if tag == "dict":
                return {_str(key): attr(y) for key, y in x}
            raise ValueError(f"unknown attribute tag '{tag}'")

        n = 0
        for k, (b, data) in enumerate(zip(blocks, d["blocks"])):
            self.path[1:] = [f"blocks[{k}]"]
            b.preds = [blocks[_int(i)] for i in data["preds"]]
            for _t, _, args in data["phis"]:
                b.phis.append(Phi(values[n], [arg(a) for a in args], b))
                n += 1
            for j, (op, t, args, res, attrs, loc, dloc) in enumerate(data["insts"]):
                self.path[2:] = [f"insts[{j}]"]
                result = None
                if res is not None:
                    result, n = values[n], n + 1
                b.append(Instruction(_str(op), None if t is None else _type(t), [arg(a) for a in args], result,
                                     {_str(key): attr(v) for key, v in attrs}, self.loc(loc),
                                     None if dloc is None else tuple(_int(x) for x in dloc)))
            del self.path[2:]
        del self.path[1:]
        return Function(_str(d["name"]), bool(d["entry"]), [_read_param(p) for p in d["params"]], blocks,
                        [_read_var(v) for v in d["variables"]],
                        {_str(k): [_int(x) for x in v] for k, v in d["directives"]}, self.loc(d["loc"]),
                        [_read_param(p) for p in d["rets"]], d["linkage"] if d["linkage"] is None else
                        _str(d["linkage"]))


def _read_param(p: list) -> Param:
    name, t, offset, size, align = p
    return Param(_str(name), _str(t), _int(offset), _int(size), _int(align))


def _read_var(v: list) -> Variable:
    name, space, size, align, init, extern, linkage, relocs, *more = v
    addr = tuple((_int(o), _int(w), _str(s), _int(a), _int(m)) for o, w, s, a, m in (more[0] if more else ()))
    return Variable(_str(name), _str(space), _int(size), _int(align), None if init is None else bytes.fromhex(init),
                    bool(extern), None if linkage is None else _str(linkage),
                    tuple((_int(o), _str(f)) for o, f in relocs), addr)


def _type(name) -> ScalarType:
    if name not in TYPES:
        raise ValueError(f"unknown type {name!r}")
    return TYPES[name]


def _int(x) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError(f"expected an integer, got {x!r}")
    return x


def _str(x) -> str:
    if not isinstance(x, str):
        raise TypeError(f"expected a string, got {x!r}")
    return x
