"""Every example kernel, compiled from nvcc's PTX at -O0 and -O3, matches its numpy reference
on the ISA interpreter (bit for bit, except float atomics whose order may differ)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import check_case  # noqa: E402
from kernel_cases import CASES, case_params  # noqa: E402


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", case_params(CASES, "default"))
def test_example_sm80(case, opt_level):
    """sm_80, or the one arch of a case's single-arch file (``case.default_arch``)."""
    stats = check_case(case, case.default_arch, opt_level)
    assert stats.thread_instructions > 0 and stats.warp_instructions > 0
    assert stats.thread_instructions >= stats.warp_instructions


@pytest.mark.slow
@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("case,arch", case_params(CASES))
def test_example_all_levels_and_archs(case, arch, opt_level):
    for seed in (1, 2):
        check_case(case, arch, opt_level, seed)
