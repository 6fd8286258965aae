"""The pass manager: named, registered passes, -O pipelines, print-after and verification.

A pass is a frozen dataclass with a ``name`` and a ``run(module)`` method; its
fields are its options (as in xDSL and MLIR).  ``-O0`` runs no optimisation,
``-O1`` folds constants and removes dead code, ``-O2``/``-O3`` also if-convert short branches over
pure code (:mod:`xcc.passes.ifconvert`) and fold and clean up again.
With ``verify=True`` (debug mode) the IR verifier runs after every pass.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import TextIO

from xcc.ir.core import Module
from xcc.ir.printer import print_module
from xcc.ir.verifier import verify_module


class FunctionPass:
    """Base of passes that transform each function on its own: subclasses define ``run_function``."""

    name = ""

    def run(self, module: Module) -> None:
        for fn in module.functions:
            self.run_function(fn)

    def run_function(self, fn) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# name -> "module:Class"; imported lazily.
_REGISTRY: dict[str, str] = {
    "constfold": "xcc.passes.constfold:ConstantFold",
    "dce": "xcc.passes.dce:DeadCodeElimination",
    "ifconvert": "xcc.passes.ifconvert:IfConversion",
}

PIPELINES: dict[int, list[str]] = {
    0: [],
    1: ["constfold", "dce"],
    2: ["constfold", "dce", "ifconvert", "constfold", "dce"],
    3: ["constfold", "dce", "ifconvert", "constfold", "dce"],
}


def registered_passes() -> list[str]:
    return sorted(_REGISTRY)


def get_pass(name: str):
    if name not in _REGISTRY:
        raise KeyError(f"unknown pass '{name}' (known: {', '.join(registered_passes())})")
    mod, cls = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(mod), cls)()


def pipeline_for_level(level: int) -> list[str]:
    if level not in PIPELINES:
        raise ValueError(f"optimisation level must be 0-3, got {level}")
    return list(PIPELINES[level])


class PassManager:
    def __init__(self, passes: list[str], verify: bool = False, print_after: str | None = None,
                 out: TextIO | None = None, on_pass: Callable[[str, Module], None] | None = None):
        self.passes = [get_pass(n) for n in passes]
        self.verify = verify
        self.print_after = print_after
        self.out = out or sys.stderr
        self.on_pass = on_pass

    def run(self, module: Module) -> Module:
        if self.verify:
            verify_module(module, "IR construction")
        for p in self.passes:
            p.run(module)
            if self.verify:
                verify_module(module, p.name)
            if self.print_after in (p.name, "all"):
                self.out.write(f"; *** IR after {p.name} ***\n{print_module(module)}")
            if self.on_pass is not None:
                self.on_pass(p.name, module)
        return module
