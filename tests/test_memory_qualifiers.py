"""Memory-instruction qualifier forms the memory sweep (tests/isa_sweep_memory.py, issue 19) found ptxas 13.0
taking and xcc refusing, now compiled: ``ld``/``st.b128`` with ``.L2::cache_hint`` and its policy operand (a hint,
no effect on the values: the reference is the plain copy), on both engines at -O0 and -O3, bit for bit."""

from __future__ import annotations

import numpy as np
from test_b128 import data, kernel, rows, run_all


def test_b128_copy_with_cache_hint_moves_every_byte():
    body = """\
    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;
    ld.global.L2::cache_hint.b128 %q1, [%rd1], %rd5;
    st.global.L2::cache_hint.b128 [%rd2], %q1, %rd5;"""
    src = data(21)
    out = run_all(kernel("b128_hint", body), "b128_hint", src)
    assert rows(out).tobytes() == rows(src).tobytes()


def test_b128_relaxed_load_with_cache_hint_is_one_16_byte_read():
    body = """\
    createpolicy.fractional.L2::evict_first.b64 %rd5, 0.5;
    ld.relaxed.gpu.global.L2::cache_hint.b128 %q1, [%rd1], %rd5;
    st.global.b128 [%rd2], %q1;"""
    src = data(22)
    out = run_all(kernel("b128_hint_relaxed", body), "b128_hint_relaxed", src)
    assert np.array_equal(rows(out), rows(src))
