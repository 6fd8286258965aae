"""Issue 19's remaining PTX forms: ``brx.idx`` through ``.branchtargets`` lists (xcc.ir.build lowers it to a
compare-and-branch chain), run on both engines at -O0 and -O3.  Expected values restate the PTX ISA 9.0
manual's definitions with Python integers, never xcc.semantics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_isa_gaps import ENGINES

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.sources import Source

DATA = Path(__file__).parent / "data" / "runtime"


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_brx_idx_chooses_the_listed_target(engine, opt):
    """brx_idx.ptx: out[i] = 10 + i % 4 (the i % 4-th target), then even threads' guarded brx.idx.uni adds 200
    when i % 3 == 1 (the second target), else 100."""
    n = 64
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module((DATA / "brx_idx.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("brx_idx").launch((1, 1, 1), (n, 1, 1), [out])
    want = [10 + i % 4 + (0 if i % 2 else (200 if i % 3 == 1 else 100)) for i in range(n)]
    assert [int(v) for v in out.copy_to_host()] == want


def test_brx_idx_to_an_undefined_table_is_a_located_error():
    src = (DATA / "brx_idx.ptx").read_text().replace("brx.idx %r2, ts;", "brx.idx %r2, L0;")
    errors = check_sources([Source(src, "bad.ptx")]).errors
    assert len(errors) == 1 and "brx.idx takes a register and a .branchtargets label" in str(errors[0]), errors
    assert errors[0].loc is not None and errors[0].loc.line == 17
