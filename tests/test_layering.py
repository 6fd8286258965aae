"""The layering of xcc, checked from its own imports (issue 14).

Every module installed under ``xcc`` (the folders of ``pyproject.toml``'s ``package-dir``) is parsed with
:mod:`ast`; every import counts, at module level or inside a function, and so does
``importlib.import_module("<literal>")``.  ``xcc.*`` names resolve to the module they name (``from
xcc.sim.isa import executors`` is an import of ``xcc.sim.isa.executors``).

* :data:`LAYERS` is the layer table, bottom to top: each module belongs to the row with the longest
  matching prefix and may import modules of its own row and of the rows that row names, nothing else.
  The compiler side (semantics, frontend, ir, passes, the backend, driver.py and cache.py) never imports
  the simulator or the runtime; the simulator sits above the semantics library, the IR and the backend's
  target description (ISA table, instruction encoding, machine descriptions, object file) and below the
  runtime; ``xcc.cli`` is the top.  The object file sits under code generation with the ISA table: code
  generation writes it (``backend/codegen.py`` builds the KernelImage) and the simulator reads it without
  importing any of code generation.
* No import cycle among modules (Tarjan's strongly connected components over the same graph).
* Size: the median module is at most 250 lines, and no function of ``compiler/sim/`` or ``backend/`` is
  longer than 150.
"""

from __future__ import annotations

import ast
import statistics
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top: (layer, modules: a name and everything under it, layers it may import besides its own).
BASE = ("base",)
COMPILER_FRONT = (*BASE, "semantics", "frontend", "ir", "passes")
LAYERS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # xcc.tune's result and decorator are plain Python over the base, so that xcc.TuneResult / xcc.Config /
    # xcc.autotune (lazy attributes of the xcc package) load light.
    ("base", ("xcc", "xcc.diagnostics", "xcc.tune.result", "xcc.tune.decorator"), ()),
    ("semantics", ("xcc.semantics",), BASE),
    ("frontend", ("xcc.frontend",), (*BASE, "semantics")),
    ("ir", ("xcc.ir",), (*BASE, "semantics", "frontend")),
    ("passes", ("xcc.passes",), (*BASE, "semantics", "frontend", "ir")),
    # profiles (docs/profiles.md): the file format, merging, and the mapping onto the IR for the passes
    ("profile", ("xcc.profile",), COMPILER_FRONT),
    # The backend's target description: what code generation and the simulator both read.
    ("target", ("xcc.backend.isa", "xcc.backend.minst", "xcc.backend.encoding", "xcc.backend.machine",
                "xcc.backend.objfile", "xcc.backend.occupancy", "xcc.backend.lineinfo"), BASE),
    ("codegen", ("xcc.backend",), (*COMPILER_FRONT, "target")),
    ("compiler", ("xcc.driver", "xcc.sources", "xcc.cache", "xcc.lto", "xcc.check", "xcc.parallel"), (*COMPILER_FRONT, "target", "codegen",
                                                                        "profile")),
    # Autotuning's search space, strategies and cache record (over the compile driver); the runtime builds and
    # launches the candidates (xcc.runtime.tuning), `xcc tune` (xcc.tune.command) sits over the runtime.
    ("tune", ("xcc.tune",), (*COMPILER_FRONT, "target", "codegen", "compiler")),
    # Execution: the cycle model (a function of a trace and a machine description), the shared engine
    # (memory, waves, launch ...) and, above it, the two sets of executors.
    ("sim.perf", ("xcc.sim.perf",), (*BASE, "semantics", "ir", "target")),
    ("sim", ("xcc.sim",), (*BASE, "semantics", "ir", "target", "sim.perf")),
    ("sim.ir", ("xcc.sim.ir",), (*BASE, "semantics", "ir", "target", "sim")),
    ("sim.isa", ("xcc.sim.isa",), (*BASE, "semantics", "ir", "target", "sim", "sim.perf")),
    ("runtime", ("xcc.runtime",), (*COMPILER_FRONT, "target", "codegen", "compiler", "profile",
                                   "sim.perf", "sim", "sim.ir", "sim.isa", "tune")),
    ("tune.command", ("xcc.tune.command",), (*COMPILER_FRONT, "target", "codegen", "compiler", "tune",
                                             "sim.perf", "sim", "sim.ir", "sim.isa", "runtime")),
    # xcc regress: CI jobs over a corpus (compile, run, compare, attribute, report), over the runtime.
    ("regress", ("xcc.regress",), (*COMPILER_FRONT, "target", "codegen", "compiler", "sim.perf", "sim", "sim.ir",
                                   "sim.isa", "runtime")),
    # The launch paths of other frameworks (issue 16): Triton's and Numba's drivers over the runtime.
    ("launch", ("xcc.triton", "xcc.numba"), (*COMPILER_FRONT, "target", "codegen", "compiler",
                                             "sim.perf", "sim", "sim.ir", "sim.isa", "runtime")),
    # xcc report: a trace or launches as an HTML page (its plots drawn with xcc regress's figure helpers).
    ("report", ("xcc.report", "xcc.report_html"), (*COMPILER_FRONT, "target", "codegen", "compiler", "sim.perf",
                                                   "sim", "sim.ir", "sim.isa", "runtime", "regress")),
    ("cli", ("xcc.cli",), ("*",)),
)
COMPILER_SIDE = ("semantics", "frontend", "ir", "passes", "profile", "target", "codegen", "compiler")
SIZE_ROOTS = ("compiler", "frontend", "passes", "backend", "runtime_stub")
LONG_FUNCTION_ROOTS = ("compiler/sim", "backend")
MEDIAN_MODULE_LINES, FUNCTION_LINES = 250, 150


# ------------------------------------------------------------------------------------------ the graph
def modules() -> dict[str, Path]:
    """Every module installed under xcc: dotted name -> source file (package-dir of pyproject.toml)."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    out = {}
    for pkg, folder in cfg["package-dir"].items():
        for f in sorted((ROOT / folder).glob("*.py")):
            out[pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"] = f
    return out


def _resolve(name: str, known) -> str | None:
    """The known module ``name`` denotes: itself, or its nearest enclosing known module."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(mods: dict[str, Path]) -> list[tuple[str, int, str]]:
    """(importer, line, imported module) for every xcc import of every module, function-level included."""
    out = []
    for mod, path in mods.items():
        pkg = mod if path.stem == "__init__" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the importer's package
                    anchor = pkg.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_module" and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                names = [node.args[0].value]
            for name in names:
                if name == "xcc" or name.startswith("xcc."):
                    target = _resolve(name, mods)
                    if target and target != mod:
                        out.append((mod, node.lineno, target))
    return out


def layer_of(mod: str) -> str:
    best = max(((p, layer) for layer, prefixes, _ in LAYERS for p in prefixes
                if mod == p or mod.startswith(p + ".")), key=lambda t: len(t[0]))
    return best[1]


def _where(mods, mod: str, line: int) -> str:
    return f"{mods[mod].relative_to(ROOT)}:{line}"


# ------------------------------------------------------------------------------------------ layering
def layering_violations() -> list[str]:
    mods = modules()
    allowed = {layer: set(uses) | {layer} for layer, _, uses in LAYERS}
    bad = []
    for mod, line, target in imports(mods):
        src, dst = layer_of(mod), layer_of(target)
        if "*" not in allowed[src] and dst not in allowed[src]:
            bad.append(f"{_where(mods, mod, line)} ({src}) -> {target} ({dst})")
    return sorted(bad)


def test_layer_table_is_ordered_and_complete():
    names = [layer for layer, _, _ in LAYERS]
    for i, (layer, _, uses) in enumerate(LAYERS):
        below = set(names[:i])
        assert set(uses) - {"*"} <= below, f"layer {layer} may only use layers listed before it"
    for mod in modules():
        layer_of(mod)  # every module has a row
    for layer in COMPILER_SIDE:
        uses = dict((n, u) for n, _, u in LAYERS)[layer]
        assert not {"sim", "sim.perf", "sim.ir", "sim.isa", "runtime"} & set(uses), layer


def test_no_import_runs_back_up_the_layers():
    bad = layering_violations()
    assert not bad, f"{len(bad)} import(s) break the layering (file:line (layer) -> target (layer)):\n" + \
        "\n".join(bad)


# ------------------------------------------------------------------------------------------ cycles
def import_cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for mod, _, target in imports(modules()):
        graph[mod].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
    return sorted(sccs)


def test_no_import_cycle():
    mods = modules()
    edges = imports(mods)
    report = []
    for comp in import_cycles():
        inside = set(comp)
        lines = [f"  {_where(mods, m, line)} -> {t}" for m, line, t in sorted(set(edges)) if m in inside and t in inside]
        report.append(f"cycle among {', '.join(comp)}:\n" + "\n".join(lines))
    assert not report, "\n".join(report)


def test_cycle_finder_finds_cycles():
    """The SCC search itself, on a made-up graph (a -> b -> c -> a, c -> d, d -> e -> d)."""
    import test_layering as t

    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": set()}
    saved = t.modules, t.imports
    try:
        t.modules = lambda: dict.fromkeys(graph)
        t.imports = lambda mods: [(m, 1, d) for m, ds in graph.items() for d in ds]
        assert t.import_cycles() == [["a", "b", "c"], ["d", "e"]]
    finally:
        t.modules, t.imports = saved


# ------------------------------------------------------------------------------------------ size
def _py_files(roots) -> list[Path]:
    return sorted(f for r in roots for f in (ROOT / r).rglob("*.py") if "__pycache__" not in f.parts)


def test_median_module_size():
    sizes = [len(f.read_text().splitlines()) for f in _py_files(SIZE_ROOTS)]
    median = statistics.median(sizes)
    assert median <= MEDIAN_MODULE_LINES, f"median module is {median} lines over {len(sizes)} modules"


def long_functions() -> list[str]:
    out = []
    for f in _py_files(LONG_FUNCTION_ROOTS):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > FUNCTION_LINES:
                    out.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    return sorted(out)


def test_no_long_function_in_sim_or_backend():
    bad = long_functions()
    assert not bad, f"functions over {FUNCTION_LINES} lines:\n" + "\n".join(bad)
