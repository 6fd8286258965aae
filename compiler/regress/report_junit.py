"""JUnit XML: one test case per kernel, engine and level, so that any CI system shows the run.

The document validates against the JUnit schema Jenkins' xUnit plugin and pytest use (junit-10.xsd): a
regression or an output failure is a ``<failure>``, a compile error, kernel fault or crash an ``<error>``,
and the figures go to the case's ``<system-out>``, with every explanatory figure that moved (IPC, stall
reasons, Nsight-named metrics).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from xcc.regress.baseline import Finding, moved_rows


def _attribution_lines(f: Finding) -> list[str]:
    return [f"  {c['metric']}: {c['cause']} ({c['before']} -> {c['after']})" for c in f.attribution]


def junit_xml(findings: list[Finding], suite: str, options: dict) -> str:
    failures = sum(1 for f in findings if f.result["status"] != "error" and (f.failed or f.regressed))
    errors = sum(1 for f in findings if f.result["status"] == "error")
    total_s = sum(_seconds(f) for f in findings)
    root = ET.Element("testsuites", name="xcc regress", tests=str(len(findings)), failures=str(failures),
                      errors=str(errors), time=f"{total_s:.3f}")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(findings)), failures=str(failures),
                       errors=str(errors), skipped="0", time=f"{total_s:.3f}")
    props = ET.SubElement(ts, "properties")
    for k in sorted(options):
        ET.SubElement(props, "property", name=k, value=str(options[k]))
    for f in findings:
        r = f.result
        case = ET.SubElement(ts, "testcase", name=f.id, classname=f"xcc.regress.{suite}", time=f"{_seconds(f):.3f}")
        if r["status"] == "error":
            ET.SubElement(case, "error", type="error", message=f.failures[0][:500] if f.failures else "error").text = \
                "\n".join(f.failures)
        elif f.failed or f.regressed:
            what = f.failures + [c.text() for c in f.regressions]
            ET.SubElement(case, "failure", type="regression" if f.regressed else "output",
                          message="; ".join(what)[:500]).text = "\n".join(what + _attribution_lines(f))
        figs = ", ".join(f"{k}={v}" for k, v in r["figures"].items() if v is not None)
        ct = f.compile_time
        lines = [figs]
        if ct:
            lines.append(f"compile time {ct['old_ms']:.1f} -> {ct['new_ms']:.1f} ms (p={ct['p']:.3f})")
        lines += [f"moved (not gating): {'stall ' if what == 'stall' else ''}{c.text()}" for what, c in moved_rows(f)]
        ET.SubElement(case, "system-out").text = "\n".join(lines)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _seconds(f: Finding) -> float:
    ms = f.result.get("compile_ms") or []
    return (sorted(ms)[len(ms) // 2] / 1000) if ms else 0.0
