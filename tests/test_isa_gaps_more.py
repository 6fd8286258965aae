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


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_reg_parameters_of_a_func(engine, opt):
    """reg_params.ptx: .reg arguments (registers and constants) and .reg return values, two of them, mixed
    with .param ones: out[i] = (3 i + 7) + 2 i + hi32(i << 32 | i) + (lo32(i << 32 | i) + 1000)."""
    n = 40
    dev = rt.Device()
    out = rt.to_device(np.zeros(n, np.uint32), dev)
    m = rt.load_module((DATA / "reg_params.ptx").read_text(), device=dev, engine=engine, opt_level=opt)
    m.get_function("reg_params").launch((1, 1, 1), (n, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [(3 * i + 7) + 2 * i + i + (i + 1000) for i in range(n)]


PICK = """.version 8.4
.target sm_90
.address_size 64
.func (.reg .b32 d) pick(.reg .pred q)
{
\tselp.b32 d, 1, 2, q;
\tret;
}
.visible .entry k(.param .u64 out)
{
\t.reg .pred %p;
\t.reg .b32 %r;
\tsetp.eq.u32 %p, %r, 0;
\tcall (%r), pick, (%p);
\tret;
}
"""


def test_predicate_reg_parameter_is_a_located_refusal():
    errors = check_sources([Source(PICK, "bad.ptx")]).errors
    assert len(errors) == 1 and "'.reg' parameter 'q' of 'pick' (a predicate" in str(errors[0]), errors
    assert errors[0].loc is not None and errors[0].loc.line == 4


def _addr_init(engine: str, opt: int, xbin: bool = False):
    dev = rt.Device()
    src = (DATA / "addr_init.ptx").read_text()
    if xbin:  # the .xbin's relocations (GlobalVar.relocs, KernelImage.reloc_globals) applied by the loader
        from xcc.driver import CompileOptions, compile_module

        src = compile_module([Source(src, "addr_init.ptx")], CompileOptions(opt_level=opt)).to_bytes()
    return dev, rt.load_module(src, device=dev, engine=engine, opt_level=opt)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_variable_addresses_in_initialisers(engine, opt):
    """addr_init.ptx: p = generic(lut)+8, q = lut, tbl = {lut, lut+4} (.u32: the address's low word), twice =
    {q, p}, b0 = {0xFF(lut+4), 0xFF00(lut)} (PTX ISA 9.0 section 5.4.4); the loader writes the addresses."""
    dev, m = _addr_init(engine, opt)
    out = rt.to_device(np.zeros(9, np.uint32), dev)
    m.get_function("addr_init").launch((1, 1, 1), (1, 1, 1), [out])
    got = [int(v) for v in out.copy_to_host()]
    lut = int(m.get_global("lut", np.uint32).ptr)
    assert lut & 0xFFFFFFFF == got[8]
    assert got == [3, 1, 8, 4, 0, 0, (lut + 4) & 0xFF, (lut >> 8) & 0xFF, lut & 0xFFFFFFFF]
    assert int(m.get_global("p", np.uint64).copy_to_host()[0]) == lut + 8


@pytest.mark.parametrize("engine, opt, xbin", [(e, o, False) for e, o in ENGINES] + [("isa", 0, True), ("isa", 3, True)])
def test_variables_reached_only_through_initialisers(engine, opt, xbin):
    dev, m = _addr_init(engine, opt, xbin)
    out = rt.to_device(np.zeros(2, np.uint32), dev)
    m.get_function("via_pointers").launch((1, 1, 1), (1, 1, 1), [out])
    assert [int(v) for v in out.copy_to_host()] == [1, 3]


def test_modern_ptx_initialiser_is_no_longer_refused():
    """tests/data/frontend/modern.ptx's ``lut_ptr = generic(lut)+8`` builds (its kernel stops later, at a TMA store)."""
    src = (Path(__file__).parent / "data" / "frontend" / "modern.ptx").read_text()
    errors = check_sources([Source(src, "modern.ptx")]).errors
    assert not any("initialiser" in str(e) for e in errors), errors
