"""The ISA table owns every instruction class, the machine descriptions every latency (issue 14).

Scans the source (ast) of every module of the compiler, the frontend, the passes, the backend and the
runtime, except the ISA table itself (``backend/isa.py``) and the machine descriptions
(``backend/machines/*.toml``, not Python), and fails on

(a) a set, frozenset, tuple, list or dict literal holding two or more string constants that are xg1
    mnemonics (full names such as ``"LDG.64"`` or their base, ``"LDG"``): such a collection is an
    instruction class, which belongs in the table (a row's class words; ``isa.EFFECTS``, ``isa.FENCES``,
    ``isa.CALLS``, ``isa.MEMORY_SPACE`` ...).  Instruction selection names the opcodes it emits: in the
    ``isel*`` modules a single mnemonic anywhere is fine, and so is a dict that maps the selector's keys (IR
    ops, modifiers) to the mnemonics it emits (a rule table); a collection of mnemonics used as a class, or a
    dict keyed by mnemonics, is not.
(b) a latency figure outside ``machines/*.toml``: a name containing ``latency`` (or ``_lat``/``lat_``)
    assigned a number (or a conditional falling back to one), defaulted or passed a number, ``<...>.get(<latency key>, <number>)`` where the key is a
    ``[latency]`` key of xg1.toml or contains ``latency``, any ``.get(key, <number>)`` on an expression that
    names the ``latency`` table, and a dict literal mapping two or more ``[latency]`` keys to numbers.  A
    module-level name bound to a number counts as that number.

The execution and cycle-model modules (``compiler/sim/``) are being reworked by others: their offences found
when this test was written are listed in :data:`ALLOWED`, to be emptied, never extended.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from xcc.backend import isa

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("compiler", "frontend", "passes", "backend", "runtime_stub")
EXEMPT = {"backend/isa.py"}
MNEMONICS = set(isa.TABLE)
BASES = {mn.split(".")[0] for mn in MNEMONICS}
LATENCY_KEYS = set(tomllib.loads((ROOT / "backend/machines/xg1.toml").read_text())["latency"])

# Offences tolerated, as :func:`offences` reports them: (path, kind, detail).  Empty since issue 14;
# never add to it (an entry that is gone fails test_allow_list_is_not_stale).
ALLOWED: set[tuple[str, str, str]] = set()


def _is_mnemonic(s: str) -> bool:
    return s in MNEMONICS or s.split(".")[0] in BASES


def _strings(nodes) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _number(node, consts: dict) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _number(node.operand, consts)
    return isinstance(node, ast.Name) and node.id in consts


def _falls_back(node, consts: dict) -> bool:
    """``node`` is a number, or a conditional or ``or`` with a number among its outcomes."""
    if isinstance(node, ast.IfExp):
        return _falls_back(node.body, consts) or _falls_back(node.orelse, consts)
    if isinstance(node, ast.BoolOp):
        return any(_falls_back(v, consts) for v in node.values)
    return _number(node, consts)


def _latency_name(name: str) -> bool:
    n = name.lower()
    return "latency" in n or n.startswith("lat_") or n.endswith("_lat") or "_lat_" in n or n == "lat"


def _names_latency_table(node) -> bool:
    return any(isinstance(n, ast.Constant) and n.value == "latency" or isinstance(n, ast.Name)
               and _latency_name(n.id) or isinstance(n, ast.Attribute) and _latency_name(n.attr)
               for n in ast.walk(node))


def _module_numbers(tree: ast.Module) -> dict:
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None and _number(stmt.value, {}):
            for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(t, ast.Name):
                    out[t.id] = stmt.value
    return out


def _collection_offences(tree: ast.Module, isel: bool) -> list[tuple[str, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k for k in _strings([k for k in node.keys if k is not None]) if _is_mnemonic(k)]
            values = [v for v in _strings(node.values) if _is_mnemonic(v)]
            found = keys + ([] if isel and not keys else values)
        elif isinstance(node, ast.Set | ast.Tuple | ast.List):
            found = [s for s in _strings(node.elts) if _is_mnemonic(s)]
        else:
            continue
        if len(found) >= 2:
            out.append(("mnemonics", ", ".join(sorted(set(found)))))
    return out


def _latency_offences(tree: ast.Module) -> list[tuple[str, str]]:
    consts = _module_numbers(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None \
                and _falls_back(node.value, consts):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
                if _latency_name(name):
                    out.append(("latency", f"{name} = {ast.unparse(node.value)}"))
        elif isinstance(node, ast.arguments):
            pos = node.posonlyargs + node.args
            pairs = list(zip(pos[len(pos) - len(node.defaults):], node.defaults))
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
            out += [("latency", f"{a.arg}={ast.unparse(d)}") for a, d in pairs
                    if _latency_name(a.arg) and _number(d, consts)]
        elif isinstance(node, ast.Call):
            out += [("latency", f"{k.arg}={ast.unparse(k.value)}") for k in node.keywords
                    if k.arg and _latency_name(k.arg) and _number(k.value, consts)]
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "get" and len(node.args) == 2 \
                    and _number(node.args[1], consts):
                key = node.args[0]
                named = isinstance(key, ast.Constant) and isinstance(key.value, str) and (
                    key.value in LATENCY_KEYS or "latency" in key.value)
                if named or _names_latency_table(f.value):
                    out.append(("latency", ast.unparse(node)))
        elif isinstance(node, ast.Dict):
            keys = [k for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)
                    and k.value in LATENCY_KEYS and _number(v, consts)]
            if len(keys) >= 2:
                out.append(("latency", ast.unparse(node)))
    return out


def offences() -> list[tuple[str, str, str]]:
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in EXEMPT:
                continue
            tree = ast.parse(path.read_text(), rel)
            isel = path.name.startswith("isel")
            for kind, detail in _collection_offences(tree, isel) + _latency_offences(tree):
                found.append((rel, kind, detail))
    return found


def test_no_instruction_class_or_latency_outside_the_table():
    bad = [o for o in offences() if o not in ALLOWED]
    assert not bad, ("sets of mnemonics belong in backend/isa.py (a row's class words), latencies in "
                     "backend/machines/*.toml:\n" + "\n".join(f"  {p}: {k}: {d}" for p, k, d in bad))


def test_allow_list_is_not_stale():
    """An allowed offence that is gone must leave the list (it only ever shrinks)."""
    stale = ALLOWED - set(offences())
    assert not stale, "remove from ALLOWED: " + ", ".join(map(str, sorted(stale)))


def test_the_scanner_finds_what_it_looks_for(tmp_path):
    src = ('X = frozenset({"LDG", "LDG.64"})\nFAST = 20\n_LATENCY = 4\n'
           'def f(m, latency=3):\n    return m.data["latency"].get("l1_hit", FAST) + d.get("alu", 4)\n'
           'Y = {"alu": 4, "fma": 4}\n')
    tree = ast.parse(src)
    assert _collection_offences(tree, isel=False) == [("mnemonics", "LDG, LDG.64")]
    kinds = [d for _, d in _latency_offences(tree)]
    assert _latency_offences(ast.parse("self.lat = m.latency(c) if c in t else 1"))
    assert "_LATENCY = 4" in kinds and "latency=3" in kinds
    assert any("l1_hit" in d for d in kinds) and any("'alu', 4" in d for d in kinds)
    assert any(d.startswith("{'alu'") for d in kinds)
    rules = ast.parse('T = {"fence": "WARPGROUP.ARRIVE", "commit": "WARPGROUP.COMMIT"}\nK = {"EXIT": 1, "BRA": 2}')
    assert _collection_offences(rules, isel=True) == [("mnemonics", "BRA, EXIT")]
    assert len(_collection_offences(rules, isel=False)) == 2
