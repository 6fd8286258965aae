"""``xcc report`` (issue 20): a trace, ``--stats-json`` files or a launch run now (``--run``) as one static HTML
page of matplotlib SVG plots, checked by parsing the page (html.parser) and each plot (xml.etree): the sections,
and in each plot the bars the inputs call for (every bar has an SVG id, xcc.report_html); plus a headless
Chromium screenshot where Debian's chromium is installed.
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

from xcc import runtime as rt
from xcc.cli import main
from xcc.report import from_trace, load
from xcc.report_html import render
from xcc.sim.stats import LaunchStats

ROOT = Path(__file__).resolve().parent.parent
LINEINFO = ROOT / "examples" / "fault_lineinfo.sm_80.lineinfo.ptx"
SAXPY = ROOT / "examples" / "saxpy.sm_80.ptx"
SECTIONS = ["summary", "timeline", "stalls", "occupancy", "findings"]
N = 256
RUN = ["--run", LINEINFO, "--kernel", "shift_scale", "--grid", "4", "--block", "64", f"s32:{N}", "f32:0.5",
       f"zeros:float32[{N}]", f"zeros:float32[{N + 1}]"]


class Page(HTMLParser):
    """The sections of a page (id -> its text and inline SVG documents)."""

    def __init__(self, text: str):
        super().__init__()
        self.sections: dict[str, str] = {}
        self._at = None
        self.feed(text)
        for sid in list(self.sections):
            start = text.index(f'<section id="{sid}">')
            self.sections[sid] = text[start:text.index("</section>", start)]

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.sections[dict(attrs)["id"]] = ""

    def svgs(self, sid: str) -> list[ET.Element]:
        return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", self.sections[sid], re.S)]


def ids(svg: ET.Element, prefix: str) -> list[str]:
    return [e.get("id") for e in svg.iter() if (e.get("id") or "").startswith(prefix)]


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """A program with two streams, copies and four launches of two kernels."""
    path = tmp_path_factory.mktemp("report") / "trace.json"
    shift = rt.load_module(LINEINFO).get_function("shift_scale")
    saxpy = rt.load_module(SAXPY).get_function("saxpy")
    s1, s2 = rt.Stream(), rt.Stream()
    with rt.trace(path):
        x = rt.to_device(np.arange(N, dtype=np.float32))
        y1, y2 = rt.to_device(np.zeros(N + 1, np.float32)), rt.to_device(np.zeros(N + 1, np.float32))
        shift.launch((4, 1, 1), (64, 1, 1), (np.int32(N), np.float32(0.5), x, y1), stream=s1)
        shift.launch((4, 1, 1), (64, 1, 1), (np.int32(N), np.float32(2.0), x, y2), stream=s2)
        saxpy.launch((2, 1, 1), (128, 1, 1), (np.int32(N), np.float32(3.0), x, y1), stream=s1)
        shift.launch((4, 1, 1), (64, 1, 1), (np.int32(N), np.float32(1.0), x, y2), stream=s1)
        s1.synchronize()
        s2.synchronize()
        y1.copy_to_host()
    return path


def test_page_of_a_trace(trace):
    events = json.loads(trace.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    copies = [e for e in events if e.get("cat") in ("memcpy", "memset")]
    assert len(kernels) == 4 and copies
    page = Page(render(load([trace])))
    assert list(page.sections) == SECTIONS
    for sid in ("timeline", "stalls", "occupancy"):
        assert len(page.svgs(sid)) == 1, sid
    (timeline,) = page.svgs("timeline")
    assert len(ids(timeline, "kernel-")) == 4 and len(ids(timeline, "copy-")) == len(copies)
    (stalls,) = page.svgs("stalls")
    series = {}
    for i in ids(stalls, "stall-"):
        reason, k = i[len("stall-"):].rsplit("-", 1)
        series.setdefault(reason, []).append(int(k))
    assert series and all(sorted(ks) == [0, 1] for ks in series.values())  # two kernels: shift_scale, saxpy
    states = {k for e in events if e.get("ph") == "C" and e["name"].startswith("warps by state")
              for k, v in e["args"].items() if v}
    assert set(series) == states  # one series per warp state any kernel spent time in
    (occ,) = page.svgs("occupancy")
    assert sorted(ids(occ, "occupancy-")) == sorted(f"occupancy-{w}-{k}" for w in ("theoretical", "achieved")
                                                     for k in (0, 1))
    assert "(limit: " in page.sections["occupancy"]
    summary = page.sections["summary"]
    assert summary.count("<tr>") == 1 + 4 and "fault_lineinfo.cu:8" in summary
    assert "Stream 13" in summary and "Stream 14" in summary
    assert "a trace does not carry them" in page.sections["findings"]


def test_page_is_deterministic(capsys, trace, tmp_path):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert run_cli(capsys, "report", trace, "-o", a)[0] == 0
    assert run_cli(capsys, "report", "-o", b, trace)[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_page_of_stats_json_files(capsys, tmp_path):
    files = []
    for i, grid in enumerate(("2", "4")):
        f = tmp_path / f"s{i}.json"
        assert run_cli(capsys, "run", LINEINFO, "--kernel", "shift_scale", "--grid", grid, "--block", "64",
                       f"s32:{N}", "f32:0.5", f"zeros:float32[{N}]", f"zeros:float32[{N + 1}]",
                       "--stats-json", f)[0] == 0
        files.append(f)
    out = tmp_path / "r.html"
    rc, _, err = run_cli(capsys, "report", "-o", out, *files, "--title", "two launches")
    assert rc == 0 and "2 kernel launch(es)" in err
    page = Page(out.read_text())
    assert list(page.sections) == SECTIONS and "<title>xcc report: two launches</title>" in out.read_text()
    (timeline,) = page.svgs("timeline")
    assert len(ids(timeline, "kernel-")) == 2 and not ids(timeline, "copy-")
    (occ,) = page.svgs("occupancy")
    assert len(ids(occ, "occupancy-")) == 2  # one kernel name: theoretical and achieved


def test_page_of_a_run_has_the_advisors_findings(capsys, tmp_path):
    out = tmp_path / "r.html"
    rc, stdout, _ = run_cli(capsys, "report", "-o", out, *RUN)
    assert rc == 0 and "arg3:" in stdout  # xcc run's own output
    page = Page(out.read_text())
    assert list(page.sections) == SECTIONS
    if not hasattr(LaunchStats, "advise"):
        assert "advisor was not run" in page.sections["findings"]
        return
    (plot,) = page.svgs("findings")
    rows = page.sections["findings"].count("<tr>") - 1
    assert rows >= 1 and len(ids(plot, "finding-")) == rows
    assert "fault_lineinfo.cu:" in page.sections["findings"]  # the findings' source lines


def test_findings_are_rendered_from_what_the_advisor_gives(trace):
    doc = json.loads(trace.read_text())
    corr = next(e["args"]["correlationId"] for e in doc["traceEvents"] if e.get("cat") == "kernel")
    found = {corr: [{"rule": "SharedMemoryConflicts", "message": "conflicts <here>", "estimated_speedup": 1.31,
                     "locations": [["k.ptx", 56, "/elsewhere/fault_lineinfo.cu", 19], ["k.ptx", 57, None, None]]},
                    {"rule": "CPIStall", "message": "stalls", "estimated_speedup": 1.0, "locations": []}]}
    page = Page(render(from_trace(doc, "t", found)))
    f = page.sections["findings"]
    assert f.index("SharedMemoryConflicts") < f.index("CPIStall") and "1.31x" in f
    assert "fault_lineinfo.cu:19 (k.ptx:56)" in f and "k.ptx:57" in f and "conflicts &lt;here&gt;" in f
    assert len(ids(page.svgs("findings")[0], "finding-")) == 2
    assert "the advisor found nothing" in Page(render(from_trace(doc, "t", {}))).sections["findings"]


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"kernel": 3}', "neither a trace"),
    ('[{"ph": "X"}]', "trace-event array without its object"),
])
def test_bad_inputs_are_located_errors(capsys, tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    rc, _, err = run_cli(capsys, "report", "-o", tmp_path / "r.html", bad)
    assert rc == 1 and message in err and str(bad) in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_usage_errors(capsys, tmp_path):
    assert run_cli(capsys, "report", "-o", tmp_path / "r.html")[0] == 2
    assert run_cli(capsys, "report", "-o", tmp_path / "r.html", tmp_path / "missing.json")[0] == 2
    assert run_cli(capsys, "report", "-o", tmp_path / "r.html", "--run")[0] == 2
    assert run_cli(capsys, "report", "-o", tmp_path / "r.html", "--run", LINEINFO, "--grid", "1")[0] == 2
    rc, _, err = run_cli(capsys, "report", "-o", tmp_path / "r.html", *RUN, "--trace", tmp_path / "t.json")
    assert rc == 2 and "--trace" in err and not (tmp_path / "r.html").exists()


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromium"), reason="no headless Chromium (Debian: apt-get install chromium)")
def test_page_renders_in_headless_chromium(capsys, tmp_path):
    from matplotlib.image import imread

    page, png = tmp_path / "report.html", tmp_path / "report.png"
    assert run_cli(capsys, "report", "-o", page, *RUN)[0] == 0
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                    "--window-size=1000,2400", page.as_uri()], capture_output=True, timeout=120, check=True)
    pixels = imread(png)[..., :3]
    green = (pixels[..., 1] > 0.5) & (pixels[..., 0] < 0.35) & (pixels[..., 2] < 0.35)  # long_scoreboard's bar
    grey = np.abs(pixels - np.array([0xAA, 0xB7, 0xB8]) / 255).max(axis=-1) < 0.02  # theoretical occupancy
    assert pixels.shape[:2] == (2400, 1000) and green.sum() > 500 and grey.sum() > 500
