"""``xcc regress`` (issue 18): the corpus schema, record and compare, attribution to a pass and to a machine
key, the reports, exit codes for ``git bisect run``, and the compile-time rule.

The corpus here is small (three kernels, one CTA each) so that each test runs in seconds on the ISA
interpreter; bench/regress/examples.toml is the larger one CI runs (make regress).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from xcc.cli import main
from xcc.passes.manager import pipeline_for_level
from xcc.regress.baseline import compile_time_rule, exit_code, match_base, parse_threshold
from xcc.regress.corpus import CorpusError, load_corpus
from xcc.regress.stats import mann_whitney_greater

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
XSD = ROOT / "tests" / "data" / "regress" / "junit-10.xsd"
WITHOUT_LICM = ",".join(p for p in pipeline_for_level(3) if p != "licm")

CORPUS = f"""version = 1

[[kernel]]
name = "saxpy"
ptx = "{EXAMPLES / 'saxpy.sm_80.ptx'}"
entry = "saxpy"
grid = 1
block = 64
args = ["s32:64", "f32:2.5", "x.npy", "y.npy"]
check = [{{ arg = 3, expected = "saxpy_expected.npy", rtol = 1e-6, atol = 1e-6 }}]

[[kernel]]
name = "gemm"
ptx = "{EXAMPLES / 'gemm_simt.sm_80.ptx'}"
entry = "_Z14gemm_tiled_f32iiiPKfS0_Pf"
grid = [1, 1]
block = [16, 16]
args = ["s32:16", "s32:16", "s32:32", "a.npy", "b.npy", "zeros:float32[256]"]
check = [{{ arg = 5, expected = "gemm_expected.npy", rtol = 1e-5, atol = 1e-5 }}]

[[kernel]]
name = "reduce"
ptx = "{EXAMPLES / 'warp_reduce_shfl.sm_80.ptx'}"
entry = "_Z16warp_reduce_shfliPKiPi"
grid = 1
block = 64
args = ["s32:64", "w.npy", "zeros:int32[2]"]
check = [{{ arg = 2, expected = "w_expected.npy" }}]
"""


@pytest.fixture
def corpus(tmp_path) -> Path:
    rng = np.random.default_rng(18)
    x, y = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    a, b = rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
    w = rng.integers(-100, 100, 64, dtype=np.int32)
    for name, arr in {"x": x, "y": y, "saxpy_expected": np.float32(2.5) * x + y, "a": a.ravel(), "b": b.ravel(),
                      "gemm_expected": (a.astype(np.float64) @ b).astype(np.float32).ravel(), "w": w,
                      "w_expected": w.reshape(2, 32).sum(axis=1).astype(np.int32)}.items():
        np.save(tmp_path / f"{name}.npy", arr)
    path = tmp_path / "corpus.toml"
    path.write_text(CORPUS)
    return path


def regress(*args, repeats: int = 1, progress: bool = False) -> int:
    return main(["regress", *map(str, args), "--repeats", str(repeats), "--progress" if progress else "--no-progress"])


def results(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in json.loads(path.read_text())["results"]}


def regressed_lines(out: str) -> dict[str, list[str]]:
    """kernel id -> its attribution lines, from the terminal summary."""
    found: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"REGRESSED (\S+):", line)
        if m:
            current = m.group(1)
            found[current] = []
        elif line.startswith("          ") and current:
            if not line.strip().startswith("moved: "):  # the explanatory figures, not a cause
                found[current].append(line.strip())
        else:
            current = None
    return found


# ------------------------------------------------------------------------------------------ the corpus
BAD = [
    ('grid = [1, 1]\n', 'grid = "a"\n', 2, "grid", "expected a positive integer or a list of 1-3 positive integers"),
    ('block = 64\nargs = ["s32:64", "f32', 'block = [1, 2, 3, 4]\nargs = ["s32:64", "f32', 1, "block", "1-3"),
    ('entry = "saxpy"\n', "", 1, "entry", "missing"),
    ('args = ["s32:64", "w.npy"', 'args = ["s32:64", "q32:1"', 3, "args[1]", "neither TYPE:VALUE"),
    ('{ arg = 2, expected = "w_expected.npy" }', '{ arg = 0, expected = "w_expected.npy" }', 3, "check[0].arg",
     "is a scalar, not a buffer"),
    ('{ arg = 2, expected = "w_expected.npy" }', '{ arg = 2, expected = "w_expected.npy", tol = 1 }', 3,
     "check[0].tol", "unknown field"),
    ('grid = 1\nblock = 64\nargs = ["s32:64", "w.npy"', 'grid = 1\nblock = 64\nopt_levels = [4]\nargs = ["s32:64", "w.npy"',
     3, "opt_levels", "levels 0-3"),
    ('name = "gemm"', 'name = "saxpy"', 2, "name", "already the name of [[kernel]] #1"),
    ('name = "gemm"\n', 'name = "gemm"\nmachine = "nosuch"\n', 2, "machine",
     "no machine description named 'nosuch' (shipped: xg1;"),
]


@pytest.mark.parametrize("old,new,index,field,cause", BAD, ids=[b[3] for b in BAD])
def test_schema_errors_name_the_kernel_table_and_field(corpus, old, new, index, field, cause, capsys):
    text = corpus.read_text()
    assert old in text
    corpus.write_text(text.replace(old, new, 1) if index != 3 else _replace_last(text, old, new))
    with pytest.raises(CorpusError) as e:
        load_corpus(corpus)
    msg = str(e.value)
    headers = [i + 1 for i, line in enumerate(corpus.read_text().splitlines()) if line == "[[kernel]]"] + [10**6]
    m = re.match(rf"{re.escape(str(corpus))}:(\d+):\d+: error: \[\[kernel\]\] #{index} \(", msg)
    assert m and headers[index - 1] <= int(m.group(1)) < headers[index], msg  # the field's line, in its table
    assert f"field '{field}'" in msg and cause in msg, msg
    assert regress(corpus) == 125  # the command: no traceback, the same message, and bisection skips
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"field '{field}'" in err


def _replace_last(text: str, old: str, new: str) -> str:
    i = text.rindex(old)
    return text[:i] + new + text[i + len(old):]


def test_a_machine_file_that_does_not_load_is_a_located_error(corpus, capsys):
    (corpus.parent / "half.toml").write_text('name = "half"\nwarp_size = 32\n')
    text = corpus.read_text()
    corpus.write_text(text.replace('name = "gemm"\n', 'name = "gemm"\nmachine = "half.toml"\n', 1))
    with pytest.raises(CorpusError) as e:
        load_corpus(corpus)
    assert re.match(rf"{re.escape(str(corpus))}:\d+:1: error: \[\[kernel\]\] #2 \('gemm'\), field 'machine': "
                    r".*half.toml: machine description lacks \[", str(e.value)), str(e.value)
    assert regress(corpus) == 125 and "field 'machine'" in capsys.readouterr().err


def test_workers_share_the_cache_directory_the_cache_itself_uses(monkeypatch, tmp_path):
    from xcc.cache import default_directory
    from xcc.parallel import cache_dir

    monkeypatch.delenv("XCC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == str(tmp_path / "xdg" / "xcc") == str(default_directory())
    monkeypatch.setenv("XCC_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == str(tmp_path / "mine")


def test_missing_input_and_bad_toml_cannot_be_tested(corpus, capsys):
    (corpus.parent / "w.npy").unlink()
    assert regress(corpus) == 125
    assert "[[kernel]] #3 ('reduce'), field 'args[1]': cannot load buffer 'w.npy'" in capsys.readouterr().err
    corpus.write_text("[[kernel]]\nname = \n")
    assert regress(corpus) == 125
    assert "invalid TOML" in capsys.readouterr().err
    assert regress(corpus.parent / "nothing.toml") == 125


# ------------------------------------------------------------------------------------------ record, compare
def test_same_pipeline_reports_nothing_and_a_removed_pass_names_itself(corpus, tmp_path, capsys):
    base = tmp_path / "base.json"
    assert regress(corpus, "-O3", "--record", base) == 0
    doc = json.loads(base.read_text())
    assert doc["format"] == "xcc-regress-baseline" and doc["version"] == 1
    assert doc["options"]["opt_level"] == 3 and list(doc["machines"].values())[0]["name"] == "xg1"
    assert all(r["status"] == "pass" and r["pipeline"] == pipeline_for_level(3) and r["stages"]
               for r in doc["results"])
    capsys.readouterr()

    assert regress(corpus, "-O3", "--baseline", base, "--attribute") == 0
    out = capsys.readouterr().out
    assert "REGRESSED" not in out and "FAIL" not in out and "0 regressed" in out

    run = tmp_path / "run.json"
    rc = regress(corpus, "-O3", "--passes", WITHOUT_LICM, "--baseline", base, "--attribute", "--record", run)
    out = capsys.readouterr().out
    old, new = results(base), results(run)
    worse = {i for i in new if any((new[i]["figures"][m] or 0) > (old[i]["figures"][m] or 0)
                                   for m in ("registers", "instructions", "spill_bytes", "shared_bytes",
                                             "local_bytes", "warp_instructions", "cycles"))}
    assert worse, "removing licm changes no figure of the corpus: the test lost its point"
    assert "gemm[isa,O3]" in worse and "saxpy[isa,O3]" not in worse
    found = regressed_lines(out)
    assert set(found) == worse and rc == 1
    for lines in found.values():
        assert lines and all("pass 'licm' removed" in line for line in lines), lines


def test_machine_latency_change_is_attributed_to_its_key(corpus, tmp_path, capsys):
    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    text = (ROOT / "backend" / "machines" / "xg1.toml").read_text()
    changed = re.sub(r"^alu = 4\b", "alu = 7", text, count=1, flags=re.M)
    assert changed != text
    machine = tmp_path / "slow_alu.toml"
    machine.write_text(changed)
    capsys.readouterr()
    assert regress(corpus, "--machine", machine, "--baseline", base, "--attribute") == 1
    found = regressed_lines(capsys.readouterr().out)
    assert found
    for lines in found.values():
        assert lines and all(line.startswith("cycles: machine key [latency] alu = 7 (baseline 4)") for line in lines)


def test_a_simulator_change_is_attributed_to_the_model(corpus, tmp_path, capsys):
    """Same options, same machine, same code at every stage, other figures: the simulator's model moved.  The
    simulator change is stood in for by a baseline whose cycle count is better than this simulator gives."""
    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    doc = json.loads(base.read_text())
    gemm = next(r for r in doc["results"] if r["kernel"] == "gemm")
    gemm["figures"]["cycles"] -= 10
    base.write_text(json.dumps(doc))
    capsys.readouterr()
    assert regress(corpus, "--baseline", base, "--attribute") == 1
    assert regressed_lines(capsys.readouterr().out) == {
        "gemm[isa,O3]": [f"cycles: the simulator's model: the compiled code is the baseline's at every stage "
                         f"({gemm['figures']['cycles']} -> {gemm['figures']['cycles'] + 10})"]}


def _fresh_compiler_cache(monkeypatch) -> None:
    """The JIT cache's key holds xcc's sources, not a monkeypatch: a changed compiler must not hit the baseline's
    builds, so the process's cache is reopened disabled."""
    from xcc.runtime import jit

    monkeypatch.setenv("XCC_CACHE_DISABLE", "1")
    monkeypatch.setattr(jit, "_cache", None)


def _rename_blocks(module) -> None:
    """A change of output that moves no figure: every block of every function renamed."""
    for fn in module.functions:
        for b in fn.blocks:
            b.name = f"{b.name}_renamed"


def test_a_compiler_change_is_attributed_to_the_stage_that_moves_the_figure(corpus, tmp_path, capsys, monkeypatch):
    """A real change of the compiler, in-process: 'inline' (stage 2) now renames every block, which changes its
    output and every later stage's but no figure, and 'licm' is gone from the compiler (its pass does
    nothing), which moves gemm's figures.  The baseline's stage outputs replayed through the changed compiler
    name licm; the first stage whose output differs (what a baseline without its stage IR can say) is inline."""
    from xcc.passes.manager import pass_class

    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    doc = json.loads(base.read_text())
    assert all(r["stage_ir"] for r in doc["results"])
    old_base = results(base)

    inline = pass_class("inline")
    run_inline = inline.run
    monkeypatch.setattr(inline, "run", lambda self, module: (run_inline(self, module), _rename_blocks(module))[0])
    monkeypatch.setattr(pass_class("licm"), "run", lambda self, module: None)
    _fresh_compiler_cache(monkeypatch)
    capsys.readouterr()
    run = tmp_path / "run.json"
    assert regress(corpus, "--baseline", base, "--attribute", "--record", run) == 1
    found = regressed_lines(capsys.readouterr().out)
    new = results(run)
    stages = [name for name, _ in new["gemm[isa,O3]"]["stages"]]
    licm = stages.index("licm")
    for uid in new:  # the change of output reached every kernel; the figures moved for gemm only
        first = next(i for i, (a, b) in enumerate(zip(old_base[uid]["stages"], new[uid]["stages"])) if a != b)
        assert new[uid]["stages"][first][0] == "inline", uid
    assert set(found) == {"gemm[isa,O3]"}
    assert found["gemm[isa,O3]"] and all(
        re.match(rf"\w+: IR pass 'licm' \(stage {licm + 1} of {len(stages)}\): this compiler's version moves the "
                 r"figure", line) for line in found["gemm[isa,O3]"]), found
    regressed = {line.split(":")[0] for line in found["gemm[isa,O3]"]}
    assert "cycles" in regressed

    for r in doc["results"]:  # an older baseline, without the stage IR: the first stage that differs, said so
        del r["stage_ir"]
    base.write_text(json.dumps(doc))
    assert regress(corpus, "--baseline", base, "--attribute") == 1
    (lines,) = regressed_lines(capsys.readouterr().out).values()
    assert lines and all(re.search(r"IR pass 'inline' \(stage 2 of \d+\): the first stage whose output differs.*"
                                   r"not checked: it has no stage IR to replay", line) for line in lines), lines


def test_a_backend_change_is_attributed_to_its_stage(corpus, tmp_path, capsys, monkeypatch):
    """A real change of the backend, in-process: the post-allocation scheduler no longer runs.  The IR is the
    baseline's at every stage, so the first backend stage whose output differs is named."""
    import xcc.backend.codegen as codegen

    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    monkeypatch.setattr(codegen, "_schedule_if_faster", lambda blocks, machine: None)
    _fresh_compiler_cache(monkeypatch)
    capsys.readouterr()
    rc = regress(corpus, "--baseline", base, "--attribute")
    found = regressed_lines(capsys.readouterr().out)
    assert found and rc == 1
    for lines in found.values():
        assert lines and all(re.search(r"backend stage 'schedule' \(stage \d+ of \d+\): given the baseline's final "
                                       r"IR, the first backend stage whose output differs", line) for line in lines)


def test_output_failure_is_exit_1_and_usage_errors_exit_2(corpus, capsys):
    np.save(corpus.parent / "w_expected.npy", np.array([0, 0], dtype=np.int32))
    assert regress(corpus) == 1
    assert re.search(r"FAIL +reduce\[isa,O3\]: arg 2: 2 of 2 elements differ \(bit-exact\)", capsys.readouterr().out)
    assert regress(corpus, "--threshold", "lots") == 2
    assert regress(corpus, "--passes", "nosuchpass") == 2
    assert regress(corpus, "--baseline", corpus.parent / "missing.json") == 125


# ------------------------------------------------------------------------------------------ reports
class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svg_count, self.tables = 0, 0

    def handle_starttag(self, tag, attrs):
        self.svg_count += tag == "svg"
        self.tables += tag == "table"


def test_junit_validates_and_html_has_its_plots(corpus, tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    junit, html, md = tmp_path / "junit.xml", tmp_path / "report.html", tmp_path / "summary.md"
    rc = regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--history", base, "--junit", junit,
                 "--html", html, "--markdown", md, "--attribute")
    assert rc == 1
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["saxpy[isa,O3]", "gemm[isa,O3]", "reduce[isa,O3]"]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert "gemm[isa,O3]" in failed and "licm" in cases[1].find("failure").text

    page = html.read_text()
    parser = _Page()
    parser.feed(page)
    assert parser.tables == 2 and parser.svg_count == 3  # kernels, what moved; cycle change, stalls, history
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    for svg in svgs:
        ET.fromstring(svg)  # each plot is well-formed SVG
    assert "Cycles per kernel" in svgs[0] and "long_scoreboard" in svgs[1]
    assert "licm" in md.read_text() and "| `gemm[isa,O3]` |" in md.read_text()
    html2 = tmp_path / "again.html"
    regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--history", base, "--html", html2, "--attribute")
    assert html2.read_text() == page  # deterministic


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromium"), reason="no headless Chromium (Debian: apt-get install chromium)")
def test_html_report_renders_in_headless_chromium(corpus, tmp_path):
    from matplotlib.image import imread

    base, html, png = tmp_path / "base.json", tmp_path / "report.html", tmp_path / "report.png"
    assert regress(corpus, "--record", base) == 0
    regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--html", html)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                    "--window-size=1000,1800", html.as_uri()], capture_output=True, timeout=120, check=True)
    pixels = imread(png)[..., :3]
    red = (pixels[..., 0] > 0.6) & (pixels[..., 1] < 0.35) & (pixels[..., 2] < 0.35)  # the regressed bar
    assert pixels.shape[:2] == (1800, 1000) and red.sum() > 50


@pytest.mark.slow
def test_one_and_two_workers_and_a_cluster_give_the_same_results(corpus, tmp_path):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert regress(corpus, "--record", one) == 0
    assert regress(corpus, "--record", two, "--workers", "2") == 0

    def strip(path):
        return [{k: v for k, v in r.items() if k != "compile_ms"} for r in json.loads(path.read_text())["results"]]

    assert strip(one) == strip(two)
    # compared with a baseline, attribution included: the same report whatever the parallelism (compile times,
    # the one figure that is not deterministic, kept out of it by a threshold they cannot reach)
    reports = []
    for workers in ("1", "2"):
        md = tmp_path / f"summary{workers}.md"
        assert regress(corpus, "--passes", WITHOUT_LICM, "--baseline", one, "--attribute", "--workers", workers,
                       "--markdown", md, "--compile-time-threshold", "100000%") == 1
        reports.append(md.read_text())
    assert reports[0] == reports[1] and "licm" in reports[0] and "| `gemm[isa,O3]` | `ipc` |" in reports[0]
    from dask.distributed import LocalCluster  # --scheduler: an existing cluster, as a user's would be

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        three = tmp_path / "three.json"
        assert regress(corpus, "--record", three, "--scheduler", cluster.scheduler_address) == 0
    assert strip(one) == strip(three)


@pytest.mark.slow
def test_O1_against_an_O3_baseline_names_the_passes(corpus, tmp_path, capsys):
    base, run = tmp_path / "base.json", tmp_path / "run.json"
    assert regress(corpus, "-O3", "--record", base) == 0
    capsys.readouterr()
    rc = regress(corpus, "-O1", "--baseline", base, "--attribute", "--record", run)
    found = regressed_lines(capsys.readouterr().out)
    old, new = results(base), results(run)
    worse = {i.replace("O1", "O3") for i in new
             if any((new[i]["figures"][m] or 0) > (old[i.replace("O1", "O3")]["figures"][m] or 0)
                    for m in ("registers", "instructions", "warp_instructions", "cycles"))}
    assert worse, "-O1 makes no kernel of the corpus worse than -O3: the test lost its point"
    assert {i.replace("O1", "O3") for i in found} == worse and rc == 1
    for lines in found.values():
        assert lines and all(re.search(r"pass '[^']+' removed", line) for line in lines), lines
    passes = {re.search(r"pass '([^']+)' removed", line).group(1) for lines in found.values() for line in lines}
    assert passes and passes <= set(pipeline_for_level(3)) - set(pipeline_for_level(1)), passes


# ------------------------------------------------------------------------------------------ pieces
def test_mann_whitney_matches_scipy():
    # values from scipy.stats.mannwhitneyu(x, y, alternative="greater").pvalue (exact, and with ties)
    assert mann_whitney_greater([5, 6, 7], [1, 2, 3]) == pytest.approx(0.05)
    assert mann_whitney_greater([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]) == pytest.approx(0.8548265831696178)
    assert mann_whitney_greater([1.5, 2.2, 3.1, 9, 8], [1.1, 2.0, 2.5, 3, 3.3]) == pytest.approx(0.21031746031746032)
    assert mann_whitney_greater([1, 1, 2, 3], [1, 2, 2, 2, 5]) == pytest.approx(0.7828545221897079)


def test_compile_time_rule_needs_significance_and_size():
    old = [10.0, 10.2, 9.9, 10.1, 10.0]
    assert compile_time_rule(old, [20.0, 20.5, 19.8, 21.0, 20.2], 0.1)["slower"]
    assert not compile_time_rule(old, [10.5, 10.6, 10.4, 10.7, 10.5], 0.1)["slower"]  # 5%: under the threshold
    assert not compile_time_rule(old, [9.0, 30.0, 9.5, 10.1, 9.8], 0.1)["slower"]  # one outlier: not significant
    assert parse_threshold("5%") == parse_threshold("0.05") == 0.05


def test_exit_code_gates_compile_time_only_when_asked():
    from xcc.regress.baseline import Finding

    f = Finding("k", {"status": "pass"}, None, compile_time={"slower": True})
    assert exit_code([f]) == 0 and exit_code([f], gate_compile_time=True) == 1


def test_a_run_at_another_level_pairs_with_the_baseline_entry_of_its_kernel():
    base = [{"kernel": "k", "engine": "isa", "level": 3}, {"kernel": "j", "engine": "isa", "level": 1},
            {"kernel": "j", "engine": "isa", "level": 3}]
    assert match_base({"kernel": "k", "engine": "isa", "level": 1}, base) is base[0]
    assert match_base({"kernel": "j", "engine": "isa", "level": 3}, base) is base[2]
    assert match_base({"kernel": "j", "engine": "isa", "level": 2}, base) is None


def test_a_kernel_removed_from_the_corpus_fails_against_the_baseline(corpus, tmp_path, capsys):
    """A kernel the baseline has and the run lacks is reported as a failure (exit 1), never dropped."""
    base = tmp_path / "base.json"
    assert regress(corpus, "-O3", "--record", base) == 0
    text = corpus.read_text()
    start = text.index('[[kernel]]\nname = "gemm"')
    end = text.find("[[kernel]]", start + 1)
    corpus.write_text(text[:start] + (text[end:] if end >= 0 else ""))
    capsys.readouterr()
    assert regress(corpus, "-O3", "--baseline", base) == 1
    out = capsys.readouterr().out
    assert "gemm" in out and "in the baseline but was not run" in out


def _with_levels(corpus: Path, name: str, levels: str) -> None:
    text = corpus.read_text()
    corpus.write_text(text.replace(f'name = "{name}"\n', f'name = "{name}"\nopt_levels = {levels}\n', 1))


def test_an_O_override_expects_only_the_baseline_entries_at_its_level(corpus, tmp_path, capsys):
    """gemm at opt_levels = [1, 3], recorded without -O (as bench/regress/examples.toml's gemm_tiled_f32): a run
    with -O3 runs gemm at -O3 only, so the baseline's gemm -O1 entry is not missing from it; a kernel gone from
    the corpus still fails, once, at the level the run asked for."""
    _with_levels(corpus, "gemm", "[1, 3]")
    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base) == 0
    assert sorted(results(base)) == ["gemm[isa,O1]", "gemm[isa,O3]", "reduce[isa,O3]", "saxpy[isa,O3]"]
    capsys.readouterr()
    assert regress(corpus, "-O3", "--baseline", base) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "xcc regress: 3 kernel run(s), 0 failed, 0 regressed, 0 improved" in out, out
    regress(corpus, "--opt-level", "1", "--baseline", base)  # saxpy and reduce at -O1 against their -O3 entries
    out = capsys.readouterr().out
    assert "FAIL" not in out and re.search(r"xcc regress: 3 kernel run\(s\), 0 failed, \d+ regressed", out), out

    text = corpus.read_text()
    start = text.index('[[kernel]]\nname = "gemm"')
    corpus.write_text(text[:start] + text[text.index("[[kernel]]", start + 1):])
    assert regress(corpus, "-O3", "--baseline", base) == 1
    out = capsys.readouterr().out
    assert re.findall(r"FAIL +(\S+): (.*)", out) == [
        ("gemm[isa,O3]", "gemm (isa, run at -O3) is in the baseline but was not run: removed from the corpus? "
                         "(record the baseline again: make rebaseline)")]
    assert "xcc regress: 2 kernel run(s), 0 failed, 1 in the baseline but not run, 0 regressed, 0 improved" in out


def test_threshold_and_the_explanatory_figures_end_to_end(corpus, tmp_path, capsys):
    """Without licm, gemm executes 1.1% more warp instructions and one more cycle: any threshold under 0.025%
    reports both, 1% only the instructions, 20% nothing (exit 0); IPC, the stall reasons and the Nsight metrics
    that moved are reported in every case, gating nothing, in the terminal, Markdown, HTML and JUnit."""
    base, run = tmp_path / "base.json", tmp_path / "run.json"
    assert regress(corpus, "--record", base) == 0
    capsys.readouterr()
    assert regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--record", run) == 1
    old, new = results(base)["gemm[isa,O3]"], results(run)["gemm[isa,O3]"]
    assert new["figures"]["warp_instructions"] > old["figures"]["warp_instructions"] * 1.01
    assert old["figures"]["cycles"] < new["figures"]["cycles"] < old["figures"]["cycles"] * 1.01
    assert re.search(r"^REGRESSED gemm\[isa,O3\]: warp_instructions \d+ -> \d+ \(\+[\d.]+%\); cycles \d+ -> \d+",
                     capsys.readouterr().out, re.M)
    assert regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--threshold", "1%") == 1
    assert re.search(r"^REGRESSED gemm\[isa,O3\]: warp_instructions \d+ -> \d+ \(\+[\d.]+%\)$",
                     capsys.readouterr().out, re.M)

    md, html, junit = tmp_path / "summary.md", tmp_path / "report.html", tmp_path / "junit.xml"
    assert regress(corpus, "--passes", WITHOUT_LICM, "--baseline", base, "--threshold", "20%", "--markdown", md,
                   "--html", html, "--junit", junit) == 0
    out = capsys.readouterr().out
    assert "REGRESSED" not in out and "FAIL" not in out and "0 regressed" in out
    ipc = f"ipc {old['figures']['ipc']:.4g} -> {new['figures']['ipc']:.4g}"
    moved = re.findall(r"^moved +(\S+): (.*)$", out, re.M)
    assert [uid for uid, _ in moved] == ["gemm[isa,O3]"], out  # saxpy and reduce: nothing moved
    line = moved[0][1]
    assert line.startswith(ipc) and "; stalls: " in line and " metric(s): " in line, line
    stalls = {k for k in old["stalls"] if old["stalls"][k] != new["stalls"].get(k)}
    assert stalls and any(f"{k} {old['stalls'][k]} -> {new['stalls'][k]}" in line for k in stalls), line
    assert f"smsp__inst_executed.sum {old['metrics']['smsp__inst_executed.sum']} -> " \
           f"{new['metrics']['smsp__inst_executed.sum']}" in line

    text = md.read_text()
    assert "no regression" in text and "Explanatory figures that moved" in text
    assert f"| `gemm[isa,O3]` | `ipc` | {old['figures']['ipc']:.6g} | {new['figures']['ipc']:.6g} |" in text
    assert all(f"| `stall {k}` | {old['stalls'][k]} | {new['stalls'][k]} |" in text for k in stalls)
    assert "smsp__pcsamp_warps_issue_stalled_" not in text  # the stall metrics are the stall rows
    page = html.read_text()
    assert "Explanatory figures that moved" in page and "<td>gemm[isa,O3]</td><td>ipc</td>" in page
    out_text = ET.parse(junit).getroot().find("./testsuite/testcase[@name='gemm[isa,O3]']/system-out").text
    assert f"moved (not gating): {ipc}" in out_text and ET.parse(junit).getroot().get("failures") == "0"


def test_gate_compile_time_makes_a_slower_compile_a_regression(corpus, tmp_path, capsys, monkeypatch):
    """A compiler made slower by 100 ms a compile: the Mann-Whitney rule finds it (5 samples each side, p =
    1/252), the report says so, and only --gate-compile-time makes it exit 1."""
    import time

    import xcc.driver

    text = corpus.read_text()
    corpus.write_text(text[:text.index("[[kernel]]", text.index("[[kernel]]") + 1)])  # saxpy only
    base = tmp_path / "base.json"
    assert regress(corpus, "--record", base, repeats=5) == 0
    compile_module = xcc.driver.compile_module

    def slow(*args, **kwargs):
        time.sleep(0.1)
        return compile_module(*args, **kwargs)

    monkeypatch.setattr(xcc.driver, "compile_module", slow)
    capsys.readouterr()
    assert regress(corpus, "--baseline", base, repeats=5) == 0
    out = capsys.readouterr().out
    assert re.search(r"^SLOWER    saxpy\[isa,O3\]: compile time [\d.]+ -> [\d.]+ ms \(Mann-Whitney U p=0\.004\) "
                     r"\(not gating: --gate-compile-time\)$", out, re.M), out
    junit = tmp_path / "junit.xml"
    assert regress(corpus, "--baseline", base, "--gate-compile-time", "--junit", junit, repeats=5) == 1
    out = capsys.readouterr().out
    assert re.search(r"^SLOWER    saxpy\[isa,O3\]: compile time .*\(Mann-Whitney U p=0\.004\)$", out, re.M), out
    assert regress(corpus, "--baseline", base, "--gate-compile-time", "--compile-time-threshold", "5000%",
                   repeats=5) == 0  # a rise under the compile-time threshold is not slower


def test_a_maxrregcount_override_spills_and_is_attributed_to_the_option(corpus, tmp_path, capsys):
    base, run = tmp_path / "base.json", tmp_path / "run.json"
    assert regress(corpus, "--record", base) == 0
    capsys.readouterr()
    assert regress(corpus, "--maxrregcount", "16", "--baseline", base, "--attribute", "--record", run) == 1
    out = capsys.readouterr().out
    old, new = results(base)["gemm[isa,O3]"], results(run)["gemm[isa,O3]"]
    spill = new["figures"]["spill_bytes"]
    assert new["maxrregcount"] == 16 and old["figures"]["spill_bytes"] == 0 < spill
    assert re.search(rf"^REGRESSED gemm\[isa,O3\]: .*spill_bytes 0 -> {spill}\b", out, re.M), out
    lines = regressed_lines(out)["gemm[isa,O3]"]
    assert f"spill_bytes: --maxrregcount 16 (baseline 255) (0 -> {spill})" in lines, lines
    assert all(re.match(r"\w+: --maxrregcount 16 \(baseline 255\) ", line) for line in lines), lines


def test_the_progress_bar_shows_with_progress(corpus, capsys):
    assert regress(corpus, progress=True) == 0
    err = capsys.readouterr().err
    assert re.search(r"xcc regress: +\d+%\|.*\| [0-3]/3 \[", err), err  # tqdm's bar (redrawn at most every 0.1 s)
    assert regress(corpus) == 0
    assert "xcc regress:" not in capsys.readouterr().err


def test_explanatory_changes_are_compared_and_gate_nothing():
    from xcc.regress.baseline import Finding, compare, is_regression

    def result(cycles, ipc, stall, metric, status="pass"):
        return {"id": "k[isa,O3]", "kernel": "k", "engine": "isa", "level": 3, "status": status, "failures": [],
                "figures": {"cycles": cycles, "ipc": ipc}, "stalls": {"wait": stall},
                "metrics": {"smsp__pcsamp_warps_issue_stalled_wait": stall, "l1tex__hit.pct": metric,
                            "launch__occupancy_limit": "warps"}}

    base = {"results": [result(100, 0.5, 10, 50.0)]}
    (f,) = compare([result(100, 0.4, 12, 40.0)], base)
    assert not f.regressed and f.moved and exit_code([f]) == 0
    assert [(c.metric, c.old, c.new) for c in f.other_changes] == [("ipc", 0.5, 0.4)]
    assert [(c.metric, c.old, c.new) for c in f.stall_changes] == [("wait", 10, 12)]
    assert [(c.metric, c.old, c.new) for c in f.metric_changes] == [("l1tex__hit.pct", 50.0, 40.0)]
    (f,) = compare([result(100, 0.5, 10, 50.0)], base)
    assert not f.moved and not f.regressed
    assert isinstance(Finding("k", {}, None), Finding)
    # the gating rule: worse by more than threshold x |old|; from 0, any rise
    assert is_regression(100, 101, 0.0) and not is_regression(100, 101, 0.01) and is_regression(100, 102, 0.01)
    assert is_regression(0, 16, 0.5) and not is_regression(100, 100, 0.0) and not is_regression(100, 90, 0.0)
