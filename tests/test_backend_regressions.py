"""Programs translation validation reduced from miscompiles, kept as regression tests: each runs at -O0..-O3 on the
ISA interpreter (no IR pass, so the backend's own -O settings are what differs) and must match the IR interpreter
bit for bit.

* ``nested_calls_frame_*.ptx`` (F6): a kernel calling f1 calling f0, each with a local frame; pre-RA scheduling
  moved frame accesses across the calling convention's stack-pointer updates (physical registers it did not see
  as dependences), so f1 read its argument outside the thread's local memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt

DATA = Path(__file__).resolve().parent / "data" / "regressions"


def _run(text: str, engine: str, opt_level: int) -> np.ndarray:
    dev = rt.Device()
    out = rt.to_device(np.zeros(256, np.uint32), dev)
    inp = rt.to_device((np.arange(256, dtype=np.uint32) * 2654435761) & 0xFFFFFFFF, dev)
    mod = rt.load_module(text, device=dev, opt_level=opt_level, engine=engine, passes="" if engine == "isa" else None)
    mod.get_function("k").launch((1, 1, 1), (64, 1, 1), [out, inp, np.uint32(5)])
    return out.copy_to_host()


@pytest.mark.parametrize("path", sorted(DATA.glob("nested_calls_frame_*.ptx")), ids=lambda p: p.stem)
@pytest.mark.parametrize("opt_level", [0, 1, 3])
def test_reduced_program_matches_the_ir_interpreter(path, opt_level):
    text = path.read_text()
    assert np.array_equal(_run(text, "isa", opt_level), _run(text, "ir", 0))
