"""``xcc check``: will these PTX sources compile?  Every refusal ``xcc compile`` would give, without writing code.

A check runs the compile itself, kernel by kernel, as the runtime's lazy loading does (each kernel with its
device functions: :func:`xcc.driver.compile_module` with ``kernels=[k]``): parsing and the checker, building the
IR (the instructions and forms lowering refuses), the ``-O`` pipeline of the options, then the backend up to
machine code (instruction selection's refusals, register limits, constant-bank room, ...), whose object is
dropped.  So a check passes exactly when ``xcc compile`` with the same options would, and a refusal is the same
located message.  Two differences, both deliberate: the errors of every kernel are reported, not only the
first; and an ``.extern`` function no source defines is left for the link (``nvcc -rdc`` code, checked as
``xcc compile -c`` takes it), so the kernels that call it are checked up to the IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.diagnostics import XccError
from xcc.driver import CompileOptions, compile_ir
from xcc.frontend import ast
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.cfg import reachable_functions
from xcc.ir.funcptr import resolve_function_pointers
from xcc.ir.link import RUNTIME_FUNCTIONS, link_modules
from xcc.sources import Source


@dataclass
class CheckResult:
    """What a check of some sources found: the parsed modules, the kernels checked whole, those left for the
    link (they call an unresolved ``.extern``), and every error (one per failing kernel, in order, no repeats)."""

    trees: list[ast.Module] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    errors: list[XccError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_sources(sources: list[Source], options: CompileOptions | None = None) -> CheckResult:
    """Check ``sources`` (linked together, as one ``xcc compile`` of them) as ``options`` would compile them;
    a syntax or checker error stops the check at once (raised, as the parser raises it)."""
    options = options or CompileOptions()
    res = CheckResult(trees=[parse(s.text, s.name) for s in sources])
    names = [f.name for t in res.trees for f in t.functions if f.is_entry and f.body is not None]
    seen: set[str] = set()
    for k in names:
        try:
            if _check_kernel(res.trees, k, options):
                res.kernels.append(k)
            else:
                res.deferred.append(k)
        except XccError as e:
            if str(e) not in seen:
                seen.add(str(e))
                res.errors.append(e)
    return res


def _check_kernel(trees: list[ast.Module], kernel: str, options: CompileOptions) -> bool:
    """Compile ``kernel`` (False: it reaches an ``.extern`` function no source defines, checked up to the IR)."""
    module = link_modules([build_module(t, [kernel]) for t in trees], partial=True)
    by_name = {f.name: f for f in module.functions}
    fn = by_name[kernel]
    reached = {g.name for g in reachable_functions(fn, by_name)}
    # (the CUDA runtime's vprintf/__assertfail stay declared and compile: not left for the link)
    if any(name in module.declarations for name in (reached | _callees(fn, by_name)) - RUNTIME_FUNCTIONS):
        return False
    compile_ir(resolve_function_pointers(module), options, [kernel])
    return True


def _callees(fn, by_name: dict) -> set[str]:
    """Names called directly by ``fn`` and the functions it reaches (defined or not)."""
    out: set[str] = set()
    for g in reachable_functions(fn, by_name):
        for inst in g.instructions():
            if inst.op == "call" and inst.attrs.get("callee"):
                out.add(inst.attrs["callee"])
    return out
