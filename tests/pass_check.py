"""Before/after checks for one optimisation pass on the IR interpreter (the PTX semantics oracle).

:func:`run_on_ir` builds a kernel case's PTX, runs a pass pipeline on it (verifying the IR after every pass)
and launches it on the IR interpreter; :func:`check_pass_on_case` compares the outputs with no pass and with
the pipeline bit for bit, and with the case's numpy reference.  :func:`timed_pass` gives the seconds one
pass takes on a module (reported, never asserted).
"""

from __future__ import annotations

import time

import numpy as np
from kernel_cases import CASES_BY_NAME, ptx_path

from xcc import runtime as rt
from xcc.driver import frontend, read_source
from xcc.ir.core import Module
from xcc.passes import PassManager
from xcc.runtime.device import Device
from xcc.runtime.ir_engine import IRFunction


def build(path) -> Module:
    return frontend([read_source(str(path))])


def count_ops(mod: Module, *ops: str) -> int:
    return sum(1 for f in mod.functions for i in f.instructions() if not ops or i.op in ops)


def run_on_ir(case, passes: str | list, arch: str | None = None, seed: int = 0):
    """(outputs by arg index, the launch, the module) of ``case`` after ``passes`` on the IR interpreter."""
    arch = arch or case.default_arch
    mod = PassManager(passes, verify=True).run(build(ptx_path(case, arch)))
    device = Device()
    launch = case.make(np.random.default_rng(seed))
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    IRFunction(mod, case.entry, device).launch(launch.grid, launch.block, args, case.shared_mem)
    return {i: args[i].copy_to_host() for i in launch.outputs}, launch, mod


def check_pass_on_case(name: str, passes: str | list, arch: str | None = None) -> Module:
    """Run case ``name`` with no pass and with ``passes``: bit-identical outputs, and the reference holds."""
    case = CASES_BY_NAME[name]
    before, _, _ = run_on_ir(case, [], arch)
    after, launch, mod = run_on_ir(case, passes, arch)
    for i, want in before.items():
        np.testing.assert_array_equal(after[i].view(np.uint8), want.view(np.uint8),
                                      err_msg=f"{name} arg {i} changed by {passes}")
    for i, want in launch.expected.items():
        if case.rtol or case.atol:
            np.testing.assert_allclose(after[i], want, rtol=case.rtol, atol=case.atol)
        else:
            np.testing.assert_array_equal(after[i].view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    return mod


def timed_pass(mod: Module, name: str) -> float:
    t0 = time.perf_counter()
    PassManager([name]).run(mod)
    return time.perf_counter() - t0


def run_ptx(text: str, entry: str, passes: str | list, grid, block, args: list, outputs: list[int]) -> list:
    """Launch kernel ``entry`` of PTX ``text`` after ``passes`` on the IR interpreter; the host copies of the
    buffers ``outputs`` (indices into ``args``) afterwards."""
    mod = PassManager(passes, verify=True).run(frontend([read_source(text, "t.ptx")]))
    device = Device()
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    IRFunction(mod, entry, device).launch(grid, block, dev)
    return [dev[i].copy_to_host() for i in outputs]


def same_on_ir(text: str, entry: str, passes: str | list, grid, block, args: list, outputs: list[int]) -> list:
    """:func:`run_ptx` with no pass and with ``passes``: the outputs must be bit-identical; returns them."""
    before = run_ptx(text, entry, [], grid, block, [a.copy() if isinstance(a, np.ndarray) else a for a in args],
                     outputs)
    after = run_ptx(text, entry, passes, grid, block, args, outputs)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    return after


def refuse_rsqrt(monkeypatch) -> None:
    """Make the semantics refuse rsqrt (UnsupportedError), as they refuse an operation they cannot evaluate:
    the tests of what the folders leave for run time stand it in for such an operation."""
    from xcc.diagnostics import UnsupportedError
    from xcc.semantics import floating

    real = floating.funary

    def funary(op, *args, **kwargs):
        if op == "rsqrt":
            raise UnsupportedError("rsqrt: refused for this test")
        return real(op, *args, **kwargs)

    monkeypatch.setattr(floating, "funary", funary)
