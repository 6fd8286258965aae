"""Generate ``ptx_standalone.py``: the PTX parser as committed Python code and data.

    python -m xcc.frontend.gen_parser            # rewrite frontend/ptx_standalone.py
    python -m xcc.frontend.gen_parser --check    # exit 1 if the committed module is not current
    make parser                                  # the same as the first line

Building Lark's LALR(1) tables from ``ptx.lark`` takes about a quarter of a second, which
was most of a cold ``xcc compile``; Lark's own table cache is a pickle, which xcc does not
load (issue 7). So the tables are computed here, once, and committed as text: the generated
module holds Lark's runtime (the ``###{standalone`` sections of Lark's sources, as Lark's
standalone tool extracts them, see https://lark-parser.readthedocs.io/en/latest/tools.html)
followed by the grammar's serialised parser as JSON text, which costs nothing to compile and
little to load. The parser does not import the ``lark`` package at run time; this generator
and ``tests/test_parser_tables.py`` do.

Lark numbers the LALR states and the parser's tokens in set-iteration order, which changes with
``PYTHONHASHSEED``; :func:`canonical_parse_table` renumbers both (tokens by name, states in
breadth-first order from the start state, following shifts in token order), so the output is a
function of the grammar and the Lark version only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import partial
from pathlib import Path

GRAMMAR = Path(__file__).with_name("ptx.lark")
OUTPUT = Path(__file__).with_name("ptx_standalone.py")

# The options the parser is built with; the transformer is given at load time (parser.py).
LARK_OPTIONS = {"parser": "lalr", "lexer": "contextual", "propagate_positions": False,
                "maybe_placeholders": False}

_LOADER = '''
import json as _json


def _int_keys(d):
    return {int(k): v for k, v in d.items()}


def _tables():
    """(DATA, MEMO) for Lark._load_from_dict, from the JSON text above."""
    memo = {i: entry for i, entry in enumerate(_json.loads(_MEMO_JSON))}
    data = _json.loads(_DATA_JSON)
    table = data["parser"]["parser"]
    table["tokens"] = dict(enumerate(table["tokens"]))
    table["states"] = {
        i: {t: ((1, {"@": arg}) if act == 1 else (0, arg)) for t, act, arg in state}
        for i, state in enumerate(_json.loads(_STATES_JSON))
    }
    return data, memo


def Lark_StandAlone(**kwargs):
    """The PTX parser; kwargs as Lark's (``transformer=``)."""
    data, memo = _tables()
    return Lark._load_from_dict(data, memo, **kwargs)
'''


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def canonical_parse_table(table: dict) -> dict:
    """``table`` (Lark's serialised IntParseTable: tokens, states, start_states, end_states) with
    tokens numbered by name and states numbered breadth-first from the start states (in start-name
    order), each state's shifts followed in token order. Raises ValueError if a state is unreachable."""
    names = table["tokens"]  # old token index -> name
    token_id = {name: i for i, name in enumerate(sorted(names.values()))}
    states = table["states"]
    order: dict[int, int] = {}  # old state -> new state
    queue = [table["start_states"][s] for s in sorted(table["start_states"])]
    for s in queue:
        order.setdefault(s, len(order))
    i = 0
    while i < len(queue):
        actions = states[queue[i]]
        i += 1
        for tok in sorted(actions, key=lambda t: token_id[names[t]]):
            act, arg = actions[tok]
            if act == 0 and arg not in order:
                order[arg] = len(order)
                queue.append(arg)
    missing = set(states) - set(order)
    if missing:
        raise ValueError(f"parse table states unreachable from the start: {sorted(missing)}")
    new_states = [None] * len(order)
    for old, new in order.items():
        rows = []
        for tok, (act, arg) in states[old].items():
            if act == 0:
                rows.append((token_id[names[tok]], 0, order[arg]))
            else:
                rows.append((token_id[names[tok]], 1, arg["@"]))
        new_states[new] = sorted(rows)
    return {"tokens": sorted(names.values()), "states": new_states,
            "start_states": {k: order[v] for k, v in sorted(table["start_states"].items())},
            "end_states": {k: order[v] for k, v in sorted(table["end_states"].items())}}


def _runtime_code() -> str:
    """Lark's runtime, as ``python -m lark.tools.standalone`` extracts it (same files, same stripping)."""
    import lark
    from lark.tools import standalone

    larkdir = Path(lark.__file__).parent
    parts = []
    for i, pyfile in enumerate(standalone.EXTRACT_STANDALONE_FILES):
        with open(larkdir / pyfile) as f:
            code = standalone.extract_sections(f)["standalone"]
        if i:  # as Lark does: docstrings and comments stripped from all but the first file
            code = standalone.strip_docstrings(partial(next, iter(code.splitlines(True))))
        parts.append(code)
    return "\n".join(parts)


def _json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _lines(items) -> str:
    """A JSON array, one item a line (so a grammar change gives a readable diff)."""
    return "[\n" + ",\n".join(_json(x) for x in items) + "\n]"


def _raw(name: str, text: str) -> str:
    if "'''" in text or text.endswith("\\"):
        raise ValueError(f"{name}: cannot be written as a raw string literal")
    return f"{name} = r'''{text}'''\n"


def generate(grammar_text: str | None = None) -> str:
    """The text of ``ptx_standalone.py`` for ``grammar_text`` (default: ``ptx.lark``)."""
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    if grammar_text is None:
        grammar_text = GRAMMAR.read_text()
    parser = lark.Lark(grammar_text, **LARK_OPTIONS)
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    if sorted(memo) != list(range(len(memo))):
        raise ValueError("Lark's memo ids are not 0..n-1")
    frontend = data["parser"]
    table = canonical_parse_table(frontend["parser"])
    states = table.pop("states")
    frontend["parser"] = table
    header = (
        f"# Generated by xcc.frontend.gen_parser from ptx.lark: do not edit; run `make parser`.\n"
        f"# Lark v{lark.__version__} runtime (MIT licence, https://github.com/lark-parser/lark) and the PTX\n"
        f"# grammar's LALR(1) tables as JSON text.\n"
        f'__version__ = "{lark.__version__}"\n'
        f'GRAMMAR_SHA256 = "{grammar_digest(grammar_text)}"\n'
    )
    return (header + "\n" + _runtime_code() + "\n"
            + _raw("_MEMO_JSON", _lines(memo[i] for i in range(len(memo))))
            + _raw("_DATA_JSON", _json(data))
            + _raw("_STATES_JSON", _lines(states))
            + "Shift = 0\nReduce = 1\n" + _LOADER)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if argv == ["--check"]:
        current = OUTPUT.exists() and OUTPUT.read_text() == text
        print(f"{OUTPUT.name}: {'current' if current else 'out of date: run make parser'}")
        return 0 if current else 1
    if argv:
        print("usage: python -m xcc.frontend.gen_parser [--check]", file=sys.stderr)
        return 2
    tmp = OUTPUT.with_name(f".{OUTPUT.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, OUTPUT)
    print(f"wrote {OUTPUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
