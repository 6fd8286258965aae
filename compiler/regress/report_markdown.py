"""A Markdown summary of a run, for a pull-request comment: the verdict, then one row per kernel that
regressed, failed or improved, with the cause attribution found, then (folded) every explanatory figure
that moved: IPC, stall reasons and Nsight-named metrics, baseline and run, reported without gating."""

from __future__ import annotations

from xcc.regress.baseline import Finding, moved_rows


def markdown(findings: list[Finding], corpus: str, compared: bool, gate_compile_time: bool = False) -> str:
    runs = [f for f in findings if not f.missing]
    missing = len(findings) - len(runs)
    bad = [f for f in findings if f.failed or f.regressed]
    slow = [f for f in findings if f.compile_time.get("slower")]
    better = [f for f in findings if f.improvements and not f.regressed and not f.failed]
    moved = [f for f in findings if f.moved]
    verdict = "no regression" if not bad and not (gate_compile_time and slow) else \
        f"**{len(bad)} regression(s) or failure(s)**"
    lines = [f"### xcc regress: {corpus}", "",
             f"{len(runs)} kernel run(s)" + (f", {missing} in the baseline but not run" if missing else "")
             + f", {verdict}" + ("" if compared else " (no baseline: outputs only)") + ".", ""]
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
    if moved:
        lines += [f"<details><summary>Explanatory figures that moved (IPC, stall reasons, Nsight metrics; not "
                  f"gating): {len(moved)} kernel run(s)</summary>", "",
                  "| kernel | figure | baseline | run | change |", "|---|---|---|---|---|"]
        for f in moved:
            for i, (what, c) in enumerate(moved_rows(f)):
                name = f"stall {c.metric}" if what == "stall" else c.metric
                rel = c.relative
                lines.append(f"| {f'`{f.id}`' if i == 0 else ''} | `{name}` | {_value(c.old)} | {_value(c.new)} | "
                             + (f"{rel:+.1%}" if rel is not None else "–") + " |")
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def _value(v) -> str:
    if v is None:
        return "–"
    return _cell(f"{v:.6g}" if isinstance(v, float) else str(v))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
