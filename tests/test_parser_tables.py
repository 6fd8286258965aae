"""The committed parser module (frontend/ptx_standalone.py) is current and loads the same parser
that Lark builds from ptx.lark; the parse path does not import the ``lark`` package."""

from __future__ import annotations

import os
import subprocess
import sys

import lark
import pytest

from xcc.frontend import gen_parser, ptx_standalone
from xcc.frontend.parser import _get_parser

HINT = "frontend/ptx_standalone.py is out of date: run `make parser` and commit it"


def test_generated_module_matches_the_grammar():
    assert ptx_standalone.GRAMMAR_SHA256 == gen_parser.grammar_digest(gen_parser.GRAMMAR.read_text()), HINT


def test_generated_module_is_current():
    if ptx_standalone.__version__ != lark.__version__:
        pytest.skip(f"generated with Lark {ptx_standalone.__version__}, Lark {lark.__version__} installed "
                    "(the grammar digest is still checked above)")
    assert gen_parser.generate() == gen_parser.OUTPUT.read_text(), HINT


def test_generation_does_not_depend_on_the_hash_seed():
    """Lark numbers states in set order; gen_parser renumbers them, so any PYTHONHASHSEED gives one text."""
    code = "import sys; from xcc.frontend import gen_parser; sys.stdout.write(gen_parser.generate())"
    texts = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        texts.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                 check=True).stdout)
    assert len(texts) == 1


def _table(parser, shift) -> dict:
    """The parse table of a Lark LALR parser in gen_parser's canonical form, rules named by content."""
    table = parser.parser.parser._parse_table
    names = sorted({str(tok) for actions in table.states.values() for tok in actions})
    index = {name: i for i, name in enumerate(names)}

    def rule(r):
        return str(r.origin.name), tuple(str(s.name) for s in r.expansion), str(r.alias), r.order

    states = {s: {index[str(tok)]: (0, arg) if act is shift else (1, {"@": rule(arg)})
                  for tok, (act, arg) in actions.items()} for s, actions in table.states.items()}
    return gen_parser.canonical_parse_table({"tokens": dict(enumerate(names)), "states": states,
                                             "start_states": table.start_states, "end_states": table.end_states})


def _terminals(parser) -> list:
    return sorted((t.name, t.pattern.type, t.pattern.value, tuple(t.pattern.flags), t.priority)
                  for t in parser.terminals)


def test_loaded_tables_equal_lark_built_tables():
    """Same terminals and parse table (up to state and token numbering) as Lark builds from ptx.lark now."""
    built = lark.Lark(gen_parser.GRAMMAR.read_text(), **gen_parser.LARK_OPTIONS)
    loaded = _get_parser()
    assert _terminals(loaded) == _terminals(built)
    assert _table(loaded, ptx_standalone.Shift) == _table(built, lark.parsers.lalr_analysis.Shift)
    assert sorted(loaded.lexer_conf.ignore) == sorted(built.lexer_conf.ignore)


def test_canonical_numbering_rejects_unreachable_states():
    table = {"tokens": {0: "A"}, "states": {0: {0: (0, 1)}, 1: {}, 2: {}},
             "start_states": {"start": 0}, "end_states": {"start": 1}}
    with pytest.raises(ValueError, match=r"unreachable.*\[2\]"):
        gen_parser.canonical_parse_table(table)


def test_parsing_does_not_import_lark():
    code = ("import sys; from xcc.frontend.parser import parse; "
            "parse('.version 8.0\\n.target sm_80\\n.address_size 64\\n'); "
            "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_check_mode_reports_current(capsys):
    if ptx_standalone.__version__ != lark.__version__:
        pytest.skip("generated with another Lark version")
    assert gen_parser.main(["--check"]) == 0
    assert "current" in capsys.readouterr().out
