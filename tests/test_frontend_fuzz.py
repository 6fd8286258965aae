"""Mutation fuzzing of the PTX frontend: valid files, crudely tokenized and damaged (a token
deleted, duplicated, swapped with its neighbour or replaced by another token of the file, a
punctuation character inserted, the text truncated), must either parse or raise an
:class:`~xcc.diagnostics.XccError`; a syntax error must say where it is. Any other exception
is a frontend bug. The default run is short; ``-m slow`` runs many more examples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcc.diagnostics import PtxSyntaxError, XccError
from xcc.frontend.parser import parse
from xcc.frontend.printer import print_module

ROOT = Path(__file__).resolve().parent.parent
SEEDS = [ROOT / "tests" / "data" / "frontend" / n for n in ("features.ptx", "shared.ptx", "modern.ptx",
                                                            "llvm_style.ptx", "math.ptx")]
SEEDS += sorted((ROOT / "examples").glob("*.sm_90.ptx"))[:3]
TEXTS = [p.read_text() for p in SEEDS if p.exists()]

# Crude PTX tokens: comments, strings, numbers, dotted words, registers, punctuation, blanks.
TOKEN = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|0[fFdD][0-9a-fA-F]+|\d+(?:\.\d*)?'
                   r"|%?[.\w$:]+|\s+|.")
PUNCTUATION = list("{}[]()<>;:,.+-*/%|&^!~@=_$\"'\\#")


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text)


@st.composite
def mutated(draw) -> str:
    tokens = tokenize(draw(st.sampled_from(TEXTS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "insert", "truncate"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap" and i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        elif kind == "replace":
            tokens[i] = draw(st.sampled_from(tokens))
        elif kind == "insert":
            tokens.insert(i, draw(st.sampled_from(PUNCTUATION)))
        elif kind == "truncate":
            tokens = tokens[:i]
        if not tokens:
            tokens = [";"]
    return "".join(tokens)


def check_frontend(text: str) -> None:
    """Parse ``text``; only located XccErrors may escape, and what parses must print and re-parse."""
    try:
        module = parse(text, "fuzz.ptx")
    except PtxSyntaxError as err:
        assert err.loc is not None and err.loc.line >= 1, f"syntax error without a place: {err.message}"
        return
    except XccError:
        return
    assert parse(print_module(module)) == module


HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize("text, line", [
    (HEADER + "{\n", 4),  # a '{' where the module expects a directive: '$END' is expected too
    (HEADER + ".visible .entry k()\n{\n\t.reg %r<9>;\n\tret;\n}\n", 6),  # .reg without a type
    (HEADER + ".global x;\n", 4),
])
def test_syntax_errors_found_by_fuzzing(text, line):
    with pytest.raises(PtxSyntaxError) as info:
        parse(text)
    assert info.value.loc is not None and info.value.loc.line == line


def test_constant_expressions_are_exact_and_bounded():
    module = parse(HEADER + ".global .u64 x[3] = {0xFFFFFFFFFFFFFFFF / 3, " + "9" * 400 + " / 7, 1 << -1};\n")
    assert [i.value for i in module.variables[0].init] == [0x5555555555555555, int("9" * 400) // 7, 0]


def test_tokenizer_is_lossless():
    for text in TEXTS:
        assert "".join(tokenize(text)) == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_ptx_fails_cleanly(text):
    check_frontend(text)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_ptx_fails_cleanly_long(text):
    check_frontend(text)
