"""The pass manager: named, registered passes, pipeline strings, -O pipelines, timing, print-after, verification.

A pass is a frozen dataclass whose fields are its options (as in xDSL and MLIR) with a class-level ``name``;
a :class:`FunctionPass` transforms each function on its own, a :class:`ModulePass` the whole module.  Pipelines
are written as xDSL/MLIR-style strings, ``sccp,gvn,licm,unroll{max-trip=32},dce``: an option name's dashes map to
the dataclass field's underscores (:func:`parse_pipeline`).  The ``-O`` levels are the named pipelines of
:data:`PIPELINES` (documented in docs/optimiser.md).  With ``verify=True`` (``--verify-ir``) the IR verifier runs
after every pass; ``print_after`` (``--print-after``) dumps the IR after the named pass or ``all``; ``timings``
(``--time-passes``) accumulates seconds per pass name.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
import time
from collections.abc import Callable
from typing import ClassVar, TextIO

from xcc.diagnostics import XccError
from xcc.ir.core import Module
from xcc.ir.printer import print_module
from xcc.ir.verifier import verify_module


class Pass:
    """Base of every pass: ``name`` is its registry name; dataclass fields are its options."""

    name: ClassVar[str] = ""

    def run(self, module: Module) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class FunctionPass(Pass):
    """A pass that transforms each function on its own: subclasses define ``run_function``."""

    def run(self, module: Module) -> None:
        for fn in module.functions:
            self.run_function(fn)

    def run_function(self, fn) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class ModulePass(Pass):
    """A pass over the whole module (inlining, interprocedural constants, global DCE): subclasses define ``run``."""


# name -> "module:Class"; imported lazily, so a compile imports only the passes its pipeline names.
_REGISTRY: dict[str, str] = {
    "constfold": "xcc.passes.constfold:ConstantFold",
    "dce": "xcc.passes.dce:DeadCodeElimination",
    "ifconvert": "xcc.passes.ifconvert:IfConversion",
    # scalar clean-up
    "mem2reg": "xcc.passes.mem2reg:PromoteMemoryToRegisters",
    "dse": "xcc.passes.dse:DeadStoreElimination",
    "sccp": "xcc.passes.sccp:SparseConditionalConstantPropagation",
    "copyprop": "xcc.passes.copyprop:CopyPropagation",
    "instcombine": "xcc.passes.instcombine:InstCombine",
    "simplifycfg": "xcc.passes.simplifycfg:SimplifyCFG",
    "jump-threading": "xcc.passes.jump_threading:JumpThreading",
    # redundancy, loops and addressing
    "gvn": "xcc.passes.gvn:GlobalValueNumbering",
    "licm": "xcc.passes.licm:LoopInvariantCodeMotion",
    "indvars": "xcc.passes.indvars:InductionVariableSimplification",
    "addrfold": "xcc.passes.addrfold:AddressFolding",
    "unroll": "xcc.passes.unroll:LoopUnroll",
    "pipeline-loads": "xcc.passes.pipeline_loads:PipelineLoads",
    "vectorize": "xcc.passes.vectorize:LoadStoreVectorizer",
    "infer-address-spaces": "xcc.passes.infer_address_spaces:InferAddressSpaces",
    # interprocedural (and link-time)
    "inline": "xcc.passes.inline:Inliner",
    "internalize": "xcc.passes.internalize:Internalize",
    "globaldce": "xcc.passes.globaldce:GlobalDCE",
    "ipconst": "xcc.passes.ipconst:InterproceduralConstants",
}

_CLEANUP = ["simplifycfg", "infer-address-spaces", "mem2reg", "sccp", "copyprop", "instcombine", "simplifycfg"]
_LOOPS = ["infer-address-spaces", "gvn", "licm", "indvars"]
_LATE = ["instcombine", "gvn", "addrfold", "dse", "ifconvert", "dce", "simplifycfg"]

PIPELINES: dict[int, list[str]] = {
    # -O0: nothing (the IR as built goes to the backend, which neither schedules nor drops barriers)
    0: [],
    # -O1: function-local clean-up: dead and empty blocks, the stack frame and generic addresses, constants,
    # copies and algebra (LLVM's -O1 function simplification, without inlining or loop passes)
    1: _CLEANUP + ["dce", "simplifycfg"],
    # -O2: inlining first (gpucc's threshold), then clean-up, redundancy (GVN with loads), loop-invariant code
    # motion, induction variables, address folding, dead stores, if-conversion
    2: ["inline"] + _CLEANUP + _LOOPS + _LATE,
    # -O3: -O2 plus constants into callees, jump threading, full unrolling of small constant-trip loops (partial
    # unrolling only on request: unroll{factor=N}), a second round of constant propagation and value numbering
    # after unrolling, and load/store vectorisation; loads issued iterations ahead only where a profile or the
    # autotuner asks (pipeline-loads{distance=0})
    3: ["inline", "ipconst"] + _CLEANUP + ["jump-threading"] + _LOOPS
       + ["unroll{factor=1}", "sccp", "instcombine", "gvn", "addrfold", "vectorize", "dse", "ifconvert", "dce",
          "simplifycfg", "pipeline-loads"],
}


def registered_passes() -> list[str]:
    """Every registered pass name, sorted."""
    return sorted(_REGISTRY)


def available_passes() -> list[str]:
    """The registered passes whose module is importable (all of them in a complete build)."""
    return [n for n in registered_passes() if importlib.util.find_spec(_REGISTRY[n].split(":")[0]) is not None]


def pass_class(name: str) -> type:
    """The class registered as ``name``; an :class:`XccError` naming the pass when there is none."""
    if name not in _REGISTRY:
        raise XccError(f"unknown pass '{name}' (known: {', '.join(registered_passes())})")
    mod, cls = _REGISTRY[name].split(":")
    if importlib.util.find_spec(mod) is None:
        raise XccError(f"pass '{name}' is registered but not built in this installation (no module {mod})")
    return getattr(importlib.import_module(mod), cls)


def option_fields(cls: type) -> list[dataclasses.Field]:
    """A pass class's options: its dataclass fields."""
    return list(dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else []


def get_pass(name: str, options: dict[str, str] | None = None):
    """An instance of pass ``name`` with ``options`` (option spellings as in pipeline strings, values as text)."""
    cls = pass_class(name)
    fields = {f.name: f for f in option_fields(cls)}
    kwargs = {}
    for key, text in (options or {}).items():
        field = fields.get(key.replace("-", "_"))
        if field is None:
            known = ", ".join(f.name.replace("_", "-") for f in fields.values()) or "none"
            raise XccError(f"pass '{name}' has no option '{key}' (its options: {known})")
        kwargs[field.name] = _convert(name, key, text, field.default)
    return cls(**kwargs)


def _convert(pass_name: str, key: str, text: str, default):
    kind = type(default)
    try:
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return text.lower() in ("true", "1")
        if kind is int:
            return int(text, 0)
        if kind is float:
            return float(text)
        return text
    except ValueError:
        raise XccError(f"pass '{pass_name}': option '{key}' takes a {kind.__name__}, got '{text}'") from None


def parse_pipeline(text: str) -> list[tuple[str, dict[str, str]]]:
    """``'sccp,gvn,unroll{max-trip=32 factor=2},dce'`` -> [(name, {option: value})]; options inside braces are
    separated by spaces or commas (MLIR uses spaces, xDSL commas).  A malformed string is an :class:`XccError`
    naming the position."""
    out: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in ",{}":
            j += 1
        name = text[i:j].strip()
        if not name:
            raise XccError(f"pass pipeline '{text}': expected a pass name at column {i + 1}")
        options: dict[str, str] = {}
        if j < n and text[j] == "{":
            k = text.find("}", j)
            if k < 0:
                raise XccError(f"pass pipeline '{text}': '{{' at column {j + 1} is never closed")
            for item in text[j + 1:k].replace(",", " ").split():
                if "=" not in item:
                    raise XccError(f"pass pipeline '{text}': option '{item}' of '{name}' needs a value (NAME=VALUE)")
                key, value = item.split("=", 1)
                options[key.strip()] = value.strip()
            j = k + 1
        elif j < n and text[j] == "}":
            raise XccError(f"pass pipeline '{text}': unexpected '}}' at column {j + 1}")
        out.append((name, options))
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] != ",":
            raise XccError(f"pass pipeline '{text}': expected ',' at column {j + 1}")
        i = j + 1
    return out


def build_pipeline(spec: str | list) -> list:
    """Pass instances for a pipeline string or a list of names / (name, options) pairs / pass instances."""
    items = parse_pipeline(spec) if isinstance(spec, str) else spec
    passes = []
    for item in items:
        if isinstance(item, Pass):
            passes.append(item)
        elif isinstance(item, str):
            passes.extend(get_pass(n, o) for n, o in parse_pipeline(item))  # a name, or a name{options}
        else:
            passes.append(get_pass(*item))
    return passes


def pipeline_text(level: int) -> str:
    """The -O level's pipeline as a ``--passes`` string."""
    return ",".join(pipeline_for_level(level))


def pipeline_for_level(level: int) -> list[str]:
    if level not in PIPELINES:
        raise ValueError(f"optimisation level must be 0-3, got {level}")
    return list(PIPELINES[level])


def describe_passes() -> str:
    """One line per registered pass with its options and defaults (``xcc compile --list-passes``)."""
    lines = []
    for name in available_passes():
        cls = pass_class(name)
        opts = " ".join(f"{f.name.replace('_', '-')}={_text(f.default)}" for f in option_fields(cls))
        doc = cls.__doc__ or ""
        if doc.startswith(cls.__name__ + "("):  # the signature dataclass writes: the module says what it does
            doc = sys.modules[cls.__module__].__doc__ or ""
        doc = doc.strip().splitlines()[0] if doc.strip() else ""
        lines.append(f"  {name + ('{' + opts + '}' if opts else ''):<44} {doc}")
    return "\n".join(lines)


def _text(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class PassManager:
    """Runs a pipeline over a module: ``passes`` is a pipeline string, or a list of names, (name, options) pairs
    or pass instances."""

    def __init__(self, passes: str | list, verify: bool = False, print_after: str | None = None,
                 out: TextIO | None = None, on_pass: Callable[[str, Module], None] | None = None,
                 timings: dict[str, float] | None = None):
        self.passes = build_pipeline(passes)
        self.verify = verify
        self.print_after = print_after
        self.out = out or sys.stderr
        self.on_pass = on_pass
        self.timings = timings

    def run(self, module: Module) -> Module:
        if self.verify:
            verify_module(module, "IR construction")
        for p in self.passes:
            t0 = time.perf_counter()
            p.run(module)
            if self.timings is not None:
                self.timings[p.name] = self.timings.get(p.name, 0.0) + time.perf_counter() - t0
            if self.verify:
                verify_module(module, p.name)
            if self.print_after in (p.name, "all"):
                self.out.write(f"; *** IR after {p.name} ***\n{print_module(module)}")
            if self.on_pass is not None:
                self.on_pass(p.name, module)
        return module
