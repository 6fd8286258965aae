"""Global dead-code elimination: delete the functions and module variables nothing live refers to.

Source: LLVM's ``GlobalDCEPass`` (``llvm/lib/Transforms/IPO/GlobalDCE.cpp``): mark from the roots, sweep
the rest.  The roots are the kernels, every symbol with linkage (``.visible``, ``.weak``, ``.common``,
``.extern``: other modules may use them; :class:`xcc.passes.internalize.Internalize` takes the linkage
away from what they cannot), and every ``.global`` and ``.const`` variable: the host reaches those by
name (``cuModuleGetGlobal``, ``cudaMemcpyToSymbol``; CUDA registers each with the runtime, which keeps
it alive in LLVM's NVPTX pipeline too).  A live function makes live what it calls, whose address it
takes (``addr_of {space=code}``) and the module variables whose address it takes (``addr_of``); a live
variable makes live the functions its initialiser points to (``relocs``).  Function declarations
(``.extern .func``) nothing calls any more are dropped too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.core import Module
from xcc.passes.manager import ModulePass


@dataclass(frozen=True)
class GlobalDCE(ModulePass):
    """Delete unreferenced functions, declarations and module variables the host cannot name (LLVM's
    GlobalDCE)."""

    name: ClassVar[str] = "globaldce"

    def run(self, module: Module) -> None:
        funcs = {f.name: f for f in module.functions}
        variables = {v.name: v for v in module.variables}
        live: set[str] = set()
        work = [f.name for f in module.functions if f.is_entry or f.linkage is not None]
        work += [v.name for v in module.variables
                 if v.linkage is not None or v.space in ("global", "const") or (v.extern and v.space == "shared")]
        while work:
            name = work.pop()
            if name in live:
                continue
            live.add(name)
            if name in funcs:
                for i in funcs[name].instructions():
                    if i.op == "call" and i.attrs.get("callee"):
                        work.append(i.attrs["callee"])
                    elif i.op == "addr_of" and i.attrs.get("space") not in ("param", "local"):
                        work.append(i.attrs["symbol"])
            if name in variables:
                work.extend(fn for _, fn in variables[name].relocs)
        module.functions = [f for f in module.functions if f.name in live]
        module.variables = [v for v in module.variables if v.name in live]
        module.declarations = {n: loc for n, loc in module.declarations.items() if n in live}
