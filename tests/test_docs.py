"""docs/isa.md is generated from the ISA table and must be current."""

from pathlib import Path

from xcc.backend.isadoc import render


def test_isa_doc_is_current():
    doc = Path(__file__).resolve().parent.parent / "docs" / "isa.md"
    assert doc.read_text() == render(), "regenerate with: python -m xcc.backend.isadoc > docs/isa.md"
