"""Runs a :class:`kernel_cases.KernelCase` through the public runtime API and checks it against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xcc import runtime as rt
from xcc.backend.machine import MACHINES_DIR


def run_case(case, arch: str, opt_level: int, seed: int = 0, device: rt.Device | None = None, timing: bool = True):
    """Compile and launch ``case`` on a fresh device (``timing=False``: functional mode); returns
    (stats, {arg index: host array}, the launch)."""
    from kernel_cases import ptx_path

    if "isa" not in case.engines:
        raise ValueError(f"{case.name} runs on engines {case.engines}: the backend does not compile it")
    device = device or rt.Device()
    launch = case.make(np.random.default_rng(seed))
    mod = rt.load_module(ptx_path(case, arch), opt_level=opt_level, device=device)
    fn = mod.get_function(case.entry)
    dev_args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    stats = fn.launch(launch.grid, launch.block, dev_args, case.shared_mem, timing=timing)
    return stats, {i: dev_args[i].copy_to_host() for i in launch.outputs}, launch


def check_case(case, arch: str, opt_level: int, seed: int = 0):
    stats, got, launch = run_case(case, arch, opt_level, seed)
    for i, want in launch.expected.items():
        if case.rtol or case.atol:
            np.testing.assert_allclose(got[i], want, rtol=case.rtol, atol=case.atol, err_msg=f"{case.name} arg {i}")
        else:
            np.testing.assert_array_equal(got[i].view(np.uint8), np.ascontiguousarray(want).view(np.uint8),
                                          err_msg=f"{case.name} arg {i} differs bit for bit")
    return stats


def modified_description(tmp_path: Path, name: str, edits: dict[str, str]) -> str:
    """xg1.toml with each ``old`` of ``edits`` (found exactly once) replaced by ``new``, written to
    ``tmp_path / name.toml``; its path (for ``rt.Device(machine=...)``)."""
    text = (MACHINES_DIR / "xg1.toml").read_text()
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return str(path)
