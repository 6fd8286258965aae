"""xcc.semantics: the meaning of every operation, once, in numpy.

Each function takes bit patterns as unsigned numpy arrays (one element per
thread that executes together) and returns bit patterns; ``pred`` values are
bool arrays.  The IR's constant folder and interpreter and the xg1 ISA
interpreter all call these functions, so the compiler's layers can never
disagree about what an operation means.  Sources: PTX ISA 9.0, chapter 9
(instruction set); IEEE 754-2019 for floating point.
"""

from __future__ import annotations

import importlib
import sys
import types

# The package's names, each imported from its submodule on first use (PEP 562), so that importing a
# numpy-free submodule (xcc.semantics.comparisons, what the frontend reads) does not import numpy.
_HOME = {
    "bits": ("UDTYPE", "as_float", "as_signed", "as_unsigned", "from_float", "mask"),
    "compare": ("compare", "select"),
    "convert": ("convert",),
    "floating": ("fadd", "fsub", "fmul", "ffma", "fmin", "fmax", "funary"),
    "integer": ("INT_BINARY", "iabs", "ineg", "inot", "mul", "mad"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """``compare`` and ``convert`` are both submodules and the functions they define: importing the
    submodule binds the function here, as the eager imports of the package did (so
    ``from xcc.semantics import convert`` is the function whatever was imported before)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}" \
                and _MODULE_OF.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
