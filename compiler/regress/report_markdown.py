"""A Markdown summary of a run, for a pull-request comment: the verdict, then one row per kernel that
regressed, failed or improved, with the cause attribution found."""

from __future__ import annotations

from xcc.regress.baseline import Finding


def markdown(findings: list[Finding], corpus: str, compared: bool, gate_compile_time: bool = False) -> str:
    bad = [f for f in findings if f.failed or f.regressed]
    slow = [f for f in findings if f.compile_time.get("slower")]
    better = [f for f in findings if f.improvements and not f.regressed and not f.failed]
    verdict = "no regression" if not bad and not (gate_compile_time and slow) else \
        f"**{len(bad)} regression(s) or failure(s)**"
    lines = [f"### xcc regress: {corpus}", "",
             f"{len(findings)} kernel run(s), {verdict}" + ("" if compared else " (no baseline: outputs only)") + ".", ""]
    if bad:
        lines += ["| kernel | what | cause |", "|---|---|---|"]
        for f in bad:
            what = "<br>".join(_cell(x) for x in f.failures + [c.text() for c in f.regressions])
            cause = "<br>".join(_cell(f"{c['metric']}: {c['cause']} ({c['before']} → {c['after']})")
                                for c in f.attribution) or "–"
            lines.append(f"| `{f.id}` | {what} | {cause} |")
        lines.append("")
    if better:
        lines += ["Improved: " + ", ".join(f"`{f.id}` ({'; '.join(c.text() for c in f.improvements)})"
                                           for f in better), ""]
    if slow:
        lines += ["Compile time slower (Mann-Whitney U, p < 0.05" + ("" if gate_compile_time else ", not gating")
                  + "): " + ", ".join(f"`{f.id}` {f.compile_time['old_ms']:.1f} → {f.compile_time['new_ms']:.1f} ms"
                                       for f in slow), ""]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
