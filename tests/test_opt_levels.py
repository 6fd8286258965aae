"""bench/opt_levels.py and bench/ptxas_ref.py: the -O level / -G / ptxas benchmark of issue 15."""

import math
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(Path(__file__).parent))

import opt_levels  # noqa: E402
import ptxas_ref  # noqa: E402
from opt_levels import Measure, Row  # noqa: E402

NOP = 0x0000000000007918
EXIT = 0x000000000000794D


def _words(*ws: int) -> bytes:
    return b"".join(struct.pack("<QQ", w, 0) for w in ws)


def test_count_sass_leaves_out_padding_and_the_closing_self_branch():
    assert ptxas_ref.count_sass(_words(0x0000000000007A02, EXIT, ptxas_ref.SELF_LOOP, NOP, NOP, NOP)) == 2
    assert ptxas_ref.count_sass(b"") == 0


def test_elf_sections_rejects_other_files():
    with pytest.raises(ValueError):
        ptxas_ref.elf_sections(b"not an elf file at all, just bytes" * 4)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_ptxas_figures_match_its_own_report():
    path = ROOT / "examples" / "block_reduce.sm_80.ptx"
    got = ptxas_ref.ptxas_kernels(path)
    log = subprocess.run(["ptxas", "-v", "-O3", "-arch=sm_80", str(path), "-o", "/dev/null"],
                         capture_output=True, text=True, check=True).stderr
    names = re.findall(r"Compiling entry function '(\w+)'", log)
    regs = [int(n) for n in re.findall(r"Used (\d+) registers", log)]
    assert {n: k.registers for n, k in got.items()} == dict(zip(names, regs, strict=True))
    assert all(8 <= k.instructions < 200 for k in got.values())
    rdc = ptxas_ref.ptxas_kernels(ROOT / "examples" / "rdc_main.sm_80.ptx", relocatable=True)
    assert rdc["rdc_apply"].instructions > 0


def _row(name, c0, c1, c3, g3, g0=None, regs=(10, 10), instr=(20, 20)):
    return Row(name, {0: Measure(c0), 1: Measure(c1), 3: Measure(c3, regs[0], instr[0])},
               Measure(g3, 12, 40), Measure(g0 or g3), regs[1], instr[1])


def test_summary_means_and_targets():
    rows = [_row("a", 200, 150, 100, 110, regs=(8, 10), instr=(18, 20)),
            _row("b", 400, 300, 200, 220, regs=(10, 10), instr=(20, 20))]
    s = opt_levels.summarise(rows)
    assert math.isclose(s["geomean_cycles_debug_over_o3"], 1.1)
    assert math.isclose(s["geomean_speedup_o0_over_o3"], 2.0)
    assert math.isclose(s["geomean_registers_xcc_over_ptxas"], math.sqrt(0.8))
    assert s["slower_at_o3_than_o0"] == 0
    assert all(t["met"] for t in s["targets"].values())

    rows.append(_row("c", 100, 100, 300, 500, regs=(30, 10), instr=(90, 20)))  # slower at -O3, -G far off
    s = opt_levels.summarise(rows)
    assert s["slower_at_o3_than_o0"] == 1
    assert {k for k, t in s["targets"].items() if not t["met"]} == set(opt_levels._TARGET_VALUE)
    lines = opt_levels.table(rows, {"o3": {"dce": 0.5}, "debug": {"dce": 1.5}}, s, "sccp,dce")
    assert "| c | 100 | 100 | 300 | 0.33 |" in "\n".join(lines)
    assert sum("FAIL" in line for line in lines) == 5 and "| dce | 0.500 | 1.500 |" in lines


def test_failed_measures_are_listed_and_left_out_of_the_means():
    rows = [_row("a", 200, 150, 100, 110), _row("b", 400, 300, 200, 220)]
    rows[1].debug = Measure(error="wrong result in argument 3")
    s = opt_levels.summarise(rows)
    assert math.isclose(s["geomean_cycles_debug_over_o3"], 1.1)
    assert s["failures"] == ["b -G -O3: wrong result in argument 3"]


def test_saxpy_end_to_end_and_a_wrong_reference_is_caught():
    pairs = opt_levels.corpus(names=["saxpy"])
    assert [c.name for c, _ in pairs] == ["saxpy"] and pairs[0][1].name == "saxpy_debug"
    times: dict[str, float] = {}
    case, dcase = pairs[0]
    m = opt_levels.measure(dcase, opt_levels.ptx_path(dcase, "sm_80"), 3, None, times)
    assert m.error is None and m.cycles > 0 and m.registers > 0 and m.instructions > 0
    assert times and all(v >= 0 for v in times.values())

    def wrong(rng):
        launch = case.make(rng)
        launch.expected[3][0] += np.float32(1)
        return launch
    bad = opt_levels.measure(replace(case, make=wrong), opt_levels.ptx_path(case, "sm_80"), 0, None, None)
    assert bad.cycles is None and bad.error == "wrong result in argument 3"


def test_quick_corpus_is_one_case_per_debug_file_and_known_failures_are_not_measured():
    quick = opt_levels.corpus(quick=True)
    files = [d.ptx_file for _, d in quick]
    assert len(files) == len(set(files)) >= 12 and not any(d.xfail for _, d in quick)
    assert len(opt_levels.corpus()) > len(quick)


def test_a_bad_pipeline_is_a_usage_error(capsys):
    assert opt_levels.main(["--quick", "--passes", "no-such-pass"]) == 2
    assert "unknown pass 'no-such-pass'" in capsys.readouterr().err
    assert opt_levels.main(["-k", "no_case_has_this_name"]) == 2
