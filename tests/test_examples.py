"""Every example kernel, compiled from nvcc's PTX at -O0 and -O3, matches its numpy reference
on the ISA interpreter (bit for bit, except float atomics whose order may differ)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import check_case  # noqa: E402
from kernel_cases import ARCHS, CASES  # noqa: E402


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_example_sm80(case, opt_level):
    stats = check_case(case, "sm_80", opt_level)
    assert stats.thread_instructions > 0 and stats.warp_instructions > 0
    assert stats.thread_instructions >= stats.warp_instructions


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_example_all_levels_and_archs(case, arch, opt_level):
    for seed in (1, 2):
        check_case(case, arch, opt_level, seed)
