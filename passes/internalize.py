"""Internalize: at link time, every device function that no other module can call any more loses its linkage.

Source: LLVM's ``InternalizePass`` (``llvm/lib/Transforms/IPO/Internalize.cpp``), run first by LLVM's LTO
pipeline: once every module of the program is linked, a ``.visible``/``.weak`` symbol nothing outside
the program can reach is as private as a ``static`` one, which lets the inliner treat a function's last
call as its only one (:class:`xcc.passes.inline.Inliner`), interprocedural constant propagation see every
caller (:class:`xcc.passes.ipconst.InterproceduralConstants`) and global DCE delete what is left
unreferenced (:class:`xcc.passes.globaldce.GlobalDCE`).

What stays: kernels (the host launches them by name), the functions named in ``keep`` (a comma-separated
list, LLVM's ``-internalize-public-api-list``), and module variables: a ``__device__`` variable is reached
by name from the host (``cuModuleGetGlobal``, ``cudaMemcpyToSymbol``), so its linkage stays unless
``variables`` is set.  Run it on a whole program only (``xcc link``, a multi-file compile): in a
relocatable object (``xcc compile -c``) other modules may still call the functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from xcc.ir.core import Module
from xcc.passes.manager import ModulePass


@dataclass(frozen=True)
class Internalize(ModulePass):
    """Give device functions (and optionally variables) no other module can use internal linkage (LLVM's
    InternalizePass)."""

    name: ClassVar[str] = "internalize"
    keep: str = ""
    variables: bool = False

    def run(self, module: Module) -> None:
        kept = {n.strip() for n in self.keep.split(",") if n.strip()}
        for f in module.functions:
            if not f.is_entry and f.name not in kept:
                f.linkage = None
        if self.variables:
            module.variables = [v if v.extern or v.name in kept else replace(v, linkage=None)
                                for v in module.variables]
