"""Differential checks for IR passes: a kernel's outputs on the IR interpreter before and after a pipeline.

``debug_cases()`` are the kernels of every ``examples/*.debug.ptx`` (nvcc ``-G`` builds, the scalar passes'
main target) that have a launch: a :class:`kernel_cases.KernelCase` with the file's stem and entry name, or
one of :data:`EXTRA_LAUNCHES` (the call-heavy kernels that tests/test_calls.py checks by hand).
``debug_cases(one_per_file=True)`` keeps the first kernel of each file (the fast tier's sample).
``corpus_cases()`` are every kernel case of ``kernel_cases.ALL_CASES`` on its default arch.
:func:`assert_pass_preserves` runs a case with no passes and with ``passes`` (verifying the IR after each)
and compares every output buffer bit for bit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kernel_cases import ALL_CASES, Launch, ptx_path

from xcc import runtime as rt
from xcc.driver import Source, frontend, read_source
from xcc.ir.core import Module
from xcc.passes import PassManager
from xcc.runtime.ir_engine import IRModule

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass(frozen=True)
class PassCase:
    id: str
    path: Path
    entry: str
    make: Callable[[np.random.Generator], Launch]
    shared_mem: int = 0

    def __repr__(self) -> str:
        return self.id


def _quarters(rng, n, lo=-64, hi=64) -> np.ndarray:
    return (rng.integers(lo, hi, n) / 4).astype(np.float32)


def _spmv(name: str, grid: int, block: int):
    def make(rng):
        rows, cols = 45, 80
        counts = rng.integers(0, 70, rows)
        counts[::7] = 0
        row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        nnz = int(row_ptr[-1])
        col = rng.integers(0, cols, nnz).astype(np.int32)
        vals, x = _quarters(rng, nnz, -16, 16), _quarters(rng, cols, -16, 16)
        out = np.full(rows + 2, -12345.5, np.float32)
        return Launch((grid, 1, 1), (block, 1, 1), [np.int32(rows), row_ptr, col, vals, x, out], [5], {})
    return name, make


def _noinline(rng):
    n, tl = 300, 37
    a, b = _quarters(rng, n), _quarters(rng, n)
    table = rng.integers(-1000, 1000, tl).astype(np.int32)
    out = np.full(n + 5, -12345.5, np.float32)
    return Launch((3, 1, 1), (128, 1, 1), [np.int32(n), a, b, table, np.int32(tl), out], [5], {})


def _fib(rng):
    n = 40  # fib(x % 20) recursion: inputs below 12 keep the call trees small
    inp = rng.integers(0, 12, n).astype(np.uint32)
    return Launch((2, 1, 1), (64, 1, 1), [np.int32(n), inp, np.zeros(n + 3, np.uint32)], [2], {})


# stem -> [(entry, make)]: kernels without a KernelCase (their checks live in tests/test_calls.py)
EXTRA_LAUNCHES = {
    "spmv_csr": [_spmv("_Z15spmv_csr_scalariPKiS0_PKfS2_Pf", 1, 64), _spmv("_Z15spmv_csr_vectoriPKiS0_PKfS2_Pf", 6, 256)],
    "device_functions": [("_Z14noinline_callsiPKfS0_PKiiPf", _noinline), ("recursive_fib", _fib)],
}


def debug_cases(one_per_file: bool = False) -> list[PassCase]:
    """The -G kernels with a launch; ``one_per_file``: only the first of each file (the fast tier)."""
    out = []
    for path in sorted(EXAMPLES.glob("*.debug.ptx")):
        stem = path.name.split(".")[0]
        entries = re.findall(r"\.entry\s+(\w+)", path.read_text())
        for entry in entries:
            for c in ALL_CASES:
                if c.ptx_stem == stem and c.entry == entry and c.ptx_file is None:
                    out.append(PassCase(f"{path.name}:{c.name}", path, entry, c.make, c.shared_mem))
            for name, make in EXTRA_LAUNCHES.get(stem, []):
                if name == entry:
                    out.append(PassCase(f"{path.name}:{name}", path, entry, make))
    if one_per_file:
        firsts = {}
        for c in out:
            firsts.setdefault(c.path, c)
        return list(firsts.values())
    return out


def corpus_cases() -> list[PassCase]:
    return [PassCase(c.name, ptx_path(c, c.default_arch), c.entry, c.make, c.shared_mem) for c in ALL_CASES]


def build(path: Path) -> Module:
    return frontend([read_source(str(path))])


def build_text(text: str, name: str = "test.ptx") -> Module:
    return frontend([Source(text, name)])


def run_outputs(mod: Module, case: PassCase, seed: int = 0) -> list[np.ndarray]:
    """The output buffers of ``case``'s launch on the IR interpreter running ``mod``."""
    launch = case.make(np.random.default_rng(seed))
    device = rt.Device()
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    IRModule(mod, device).get_function(case.entry).launch(launch.grid, launch.block, args, case.shared_mem)
    return [args[i].copy_to_host() for i in launch.outputs]


def assert_pass_preserves(passes, case: PassCase, before: str = "") -> Module:
    """Run ``case`` on the IR with ``before`` and then with ``before`` + ``passes`` (verified); outputs must be
    bit-identical.  Returns the transformed module."""
    ref = build(case.path)
    if before:
        PassManager(before, verify=True).run(ref)
    want = run_outputs(ref, case)
    mod = build(case.path)
    if before:
        PassManager(before, verify=True).run(mod)
    PassManager(passes, verify=True).run(mod)
    got = run_outputs(mod, case)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.ascontiguousarray(g).view(np.uint8), np.ascontiguousarray(w).view(np.uint8),
                                      err_msg=f"{case.id}: {passes} changed an output")
    return mod


def count_ops(mod: Module, op: str) -> int:
    return sum(1 for f in mod.functions for i in f.instructions() if i.op == op)
