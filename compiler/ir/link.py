"""Linking: several IR modules (PTX compiled with ``-rdc=true``) become one, as nvlink links cubins.

Every ``.extern`` function declaration and ``.extern`` variable (other than ``.extern .shared``,
which is dynamic shared memory, not a symbol) that a module uses is resolved against the one
``.visible`` (or ``.weak``/``.common``) definition of that name in the modules; a used name that
no module defines, or that two modules define (neither ``.weak``), is a :class:`LinkError` naming
the symbol and the modules involved.  Symbols without linkage are private to their module: one
whose name an earlier module or a global symbol also uses is renamed ``name.N`` (N: its module's
index).  ``vprintf`` and ``__assertfail`` come from the CUDA runtime and stay declared.
"""

from __future__ import annotations

from dataclasses import replace

from xcc.diagnostics import LinkError
from xcc.ir.core import Function, Module, Variable

RUNTIME_FUNCTIONS = frozenset({"vprintf", "__assertfail"})
_GLOBAL = ("visible", "weak", "common")


def _is_symbol(v: Variable) -> bool:
    return not (v.extern and v.space == "shared")


def _references(m: Module) -> dict[str, object]:
    """Names the module's code uses (called functions, variables whose address it takes) -> a location."""
    refs: dict[str, object] = {}
    for v in m.variables:  # function pointers and variable addresses in initialisers
        for _, name in v.relocs:
            refs.setdefault(name, None)
        for _, _, name, _, _ in v.addr_relocs:
            refs.setdefault(name, None)
    for f in m.functions:
        for i in f.instructions():
            name = i.attrs.get("callee") if i.op == "call" else i.attrs.get("symbol") if i.op == "addr_of" else None
            if name is not None:
                refs.setdefault(name, i.loc)
    return refs


def _rename(m: Module, names: dict[str, str]) -> None:
    """Rename private symbols of ``m`` (definitions and every use)."""
    for f in m.functions:
        f.name = names.get(f.name, f.name)
        for i in f.instructions():
            for key in ("callee", "symbol"):
                if i.attrs.get(key) in names and (key == "callee" or i.attrs.get("space") not in ("local", "param")):
                    i.attrs[key] = names[i.attrs[key]]
    m.variables = [replace(v, name=names.get(v.name, v.name), relocs=tuple((o, names.get(n, n)) for o, n in v.relocs),
                           addr_relocs=tuple((o, w, names.get(n, n), a, k) for o, w, n, a, k in v.addr_relocs))
                   for v in m.variables]


def link_modules(modules: list[Module], partial: bool = False) -> Module:
    """One module holding every function and variable of ``modules``, with externs resolved.  With ``partial``
    (``xcc compile -c``, as ``ptxas -c``) an extern no module defines stays declared for a later link."""
    # Private names used by more than one module, or also global somewhere: rename all but the first.
    def is_global(obj) -> bool:
        return obj.linkage in _GLOBAL or (isinstance(obj, Function) and obj.is_entry)

    global_names = {o.name for m in modules for o in [*m.functions, *m.variables] if is_global(o)}
    taken: set[str] = set()
    for k, m in enumerate(modules):
        private = {f.name for f in m.functions if not is_global(f)}
        private |= {v.name for v in m.variables if not is_global(v) and not v.extern}
        clash = {n: f"{n}.{k}" for n in sorted(private) if n in taken or n in global_names}
        if clash:
            _rename(m, clash)
        taken |= {clash.get(n, n) for n in private}

    # Global definitions: name -> (module index, object).
    defs: dict[str, tuple[int, Function | Variable]] = {}
    for k, m in enumerate(modules):
        for obj in [*m.functions, *(v for v in m.variables if not v.extern)]:
            if not is_global(obj):
                continue
            prev = defs.get(obj.name)
            if prev is None or (prev[1].linkage in ("weak", "common") and obj.linkage not in ("weak", "common")):
                defs[obj.name] = (k, obj)
            elif obj.linkage not in ("weak", "common"):
                what = "kernel" if isinstance(obj, Function) and obj.is_entry else "symbol"
                raise LinkError(f"duplicate {what} '{obj.name}': defined in {modules[prev[0]].filename} and "
                                f"{m.filename}", obj.loc if isinstance(obj, Function) else None)

    # Every used extern must resolve to a definition of the same kind.
    declarations: dict = {}
    for m in modules:
        refs = _references(m)
        externs = {**{n: "function" for n in m.declarations},
                   **{v.name: "variable" for v in m.variables if v.extern and _is_symbol(v)}}
        local = {f.name for f in m.functions} | {v.name for v in m.variables if not v.extern}
        for name, kind in externs.items():
            if name not in refs or name in local:
                continue
            if kind == "function" and name in RUNTIME_FUNCTIONS:
                declarations.setdefault(name, m.declarations[name])
                continue
            found = defs.get(name)
            if found is None and partial:
                if kind == "function":
                    declarations.setdefault(name, m.declarations[name])
                continue
            if found is None:
                others = ", ".join(x.filename for x in modules if x is not m)
                where = f"not defined (.visible) in {others}" if others else "and no other module was linked with it"
                raise LinkError(f"unresolved extern {kind} '{name}': used in {m.filename}, {where}", refs[name])
            if isinstance(found[1], Function) != (kind == "function"):
                raise LinkError(f"'{name}' is declared as a {kind} in {m.filename} but defined as a "
                                f"{'function' if kind == 'variable' else 'variable'} in "
                                f"{modules[found[0]].filename}", refs[name])

    functions = [f for m in modules for f in m.functions if not is_global(f) or defs[f.name][1] is f]
    variables, seen = [], set()
    for m in modules:
        for v in m.variables:
            if v.extern and _is_symbol(v) and not (partial and v.name not in defs):
                continue  # resolved to its definition
            if v.name in seen or (is_global(v) and defs[v.name][1] is not v):
                continue
            seen.add(v.name)
            variables.append(v)
    files: dict[int, str] = {}
    for m in modules:
        files.update(m.source_files)
    return Module(functions, variables, files, modules[0].filename if modules else "<ptx>", declarations)
