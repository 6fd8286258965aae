"""Issue 19: ``cvta.const.u64`` / ``cvta.to.const.u64`` and generic access to ``.const`` memory on both engines at
-O0 and -O3 (PTX ISA, "Generic Addressing" and cvta): a ``.const`` variable's generic address reads the variable
through a generic ``ld``, ``cvta.to.const`` gives back its const-space address, ``isspacep.const`` holds for it and
``isspacep.global`` does not; ``.const`` is read-only, so a generic store through the address is a located
KernelFault.  The kernels (data/const_window, ptxas-clean for sm_90a) read ``tbl[tid]``; the expected values are
the initialiser's, from the PTX text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault

PTX = Path(__file__).parent / "data" / "const_window" / "const_window.sm_90a.ptx"
TABLE = [11, 22, 33, 44]  # tbl's initialiser


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("opt", [0, 3])
def test_generic_loads_through_the_const_window(engine, opt):
    dev = rt.Device()
    out = rt.zeros(16, np.uint32, dev)
    rt.load_module(PTX.read_text(), device=dev, engine=engine, opt_level=opt).get_function("rd").launch(
        (1, 1, 1), (4, 1, 1), [out])
    got = out.copy_to_host().reshape(4, 4)
    # per thread t: tbl[t] read generically, its const address back minus tbl's (4 t), isspacep.const, .global
    assert got.tolist() == [[TABLE[t], 4 * t, 1, 0] for t in range(4)]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_generic_store_to_const_faults_at_its_line(engine):
    dev = rt.Device()
    out = rt.zeros(4, np.uint32, dev)
    fn = rt.load_module(PTX.read_text(), device=dev, engine=engine, opt_level=3).get_function("wr")
    with pytest.raises(KernelFault, match=r"PTX line 38 .*read-only 4-byte const access.*constant memory is "
                                          r"read-only"):
        fn.launch((1, 1, 1), (4, 1, 1), [out])
