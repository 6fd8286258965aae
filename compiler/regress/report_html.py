"""A static HTML report of a run with its plots drawn by matplotlib, inlined as SVG (one file, no script):

* the change of each kernel's modelled cycles against the baseline;
* the stall-reason breakdown of each kernel, the baseline's and the run's side by side;
* each kernel's cycles across several baselines (``--history``), the baseline and the run;

and, as tables, each kernel's status and gated changes with their causes, and every explanatory figure that
moved (IPC, stall reasons, Nsight-named metrics: baseline, run, change), reported without gating.

The SVG is deterministic (no date, a fixed hash salt): the same run gives the same page.
"""

from __future__ import annotations

import html
import io
import re

from xcc.regress.baseline import Finding, match_base, moved_rows


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline: without the XML declaration and DOCTYPE


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "xcc-regress"
    matplotlib.rcParams["svg.fonttype"] = "none"
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def cycle_change_plot(findings: list[Finding]) -> str | None:
    rows = [(f.id, f.base["figures"]["cycles"], f.result["figures"]["cycles"]) for f in findings
            if f.base and f.base["figures"].get("cycles") and f.result["figures"].get("cycles") is not None]
    if not rows:
        return None
    fig = _figure(7, 0.8 + 0.3 * len(rows))
    ax = fig.add_subplot()
    change = [100 * (new - old) / old for _, old, new in rows]
    ax.barh([r[0] for r in rows], change, color=["#c0392b" if c > 0 else "#27ae60" for c in change])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("modelled cycles: change against the baseline (%)")
    ax.set_title("Cycles per kernel")
    return _svg(fig)


def stall_plot(findings: list[Finding]) -> str | None:
    pairs = [(f.id, f.base.get("stalls", {}) if f.base else {}, f.result.get("stalls", {})) for f in findings
             if f.result.get("stalls")]
    if not pairs:
        return None
    reasons = sorted({r for _, b, n in pairs for r in (*b, *n)})
    fig = _figure(8, 1 + 0.45 * len(pairs))
    ax = fig.add_subplot()
    labels, bottoms = [], []
    for uid, b, n in pairs:
        for side, data in (("baseline", b), ("run", n)):
            if data:
                labels.append(f"{uid} {side}")
                bottoms.append(data)
    left = [0.0] * len(labels)
    cmap = __import__("matplotlib").colormaps["tab10"]
    for i, reason in enumerate(reasons):
        total = [max(sum(d.values()), 1) for d in bottoms]
        share = [100 * d.get(reason, 0) / t for d, t in zip(bottoms, total)]
        ax.barh(labels, share, left=left, label=reason, color=cmap(i % 10))
        left = [a + b for a, b in zip(left, share)]
    ax.invert_yaxis()
    ax.set_xlabel("share of warp-cycles (%)")
    ax.set_title("Stall reasons (smsp__pcsamp_warps_issue_stalled_*), baseline and run side by side")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=4, fontsize="small")
    return _svg(fig)


def history_plot(findings: list[Finding], history: list[tuple[str, dict]]) -> str | None:
    """Cycles of each kernel across the ``history`` baselines ([(label, document)], oldest first) and the run."""
    if not history:
        return None
    labels = [label for label, _ in history] + ["run"]
    fig = _figure(8, 4)
    ax = fig.add_subplot()
    drawn = 0
    for f in findings:
        ys = []
        for _, doc in history:
            b = match_base(f.result, doc.get("results", []))
            ys.append(b["figures"].get("cycles") if b else None)
        ys.append(f.result["figures"].get("cycles"))
        if sum(y is not None for y in ys) >= 1:
            ax.plot(labels, [float("nan") if y is None else y for y in ys], marker="o", label=f.id)
            drawn += 1
    if not drawn:
        return None
    ax.set_ylabel("modelled cycles")
    ax.set_title("History across baselines")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1))
    return _svg(fig)


_STYLE = """body{font-family:sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left}.bad{background:#fdecea}.good{background:#eafaf1}"""


def moved_table(findings: list[Finding]) -> str | None:
    """The explanatory figures that moved, one row each: kernel, figure, baseline, run, change."""
    e = html.escape
    rows = []
    for f in findings:
        for what, c in moved_rows(f):
            rel = c.relative
            rows.append(f"<tr><td>{e(f.id)}</td><td>{e(('stall ' if what == 'stall' else '') + c.metric)}</td>"
                        f"<td>{e(_value(c.old))}</td><td>{e(_value(c.new))}</td>"
                        f"<td>{'-' if rel is None else f'{rel:+.1%}'}</td></tr>")
    if not rows:
        return None
    return ("<table class=\"moved\"><tr><th>kernel</th><th>figure</th><th>baseline</th><th>run</th><th>change</th>"
            "</tr>\n" + "\n".join(rows) + "</table>\n")


def _value(v) -> str:
    if v is None:
        return "-"
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def html_report(findings: list[Finding], corpus: str, history: list[tuple[str, dict]] | None = None) -> str:
    e = html.escape
    rows = []
    for f in findings:
        cls = "bad" if f.failed or f.regressed else ("good" if f.improvements else "")
        what = "<br>".join(e(x) for x in f.failures + [c.text() for c in f.regressions + f.improvements])
        cause = "<br>".join(e(f"{c['metric']}: {c['cause']} ({c['before']} -> {c['after']})") for c in f.attribution)
        cyc = f.result["figures"].get("cycles")
        cyc = "-" if cyc is None else cyc
        rows.append(f"<tr class=\"{cls}\"><td>{e(f.id)}</td><td>{e(f.result['status'])}</td><td>{cyc}</td>"
                    f"<td>{what or '-'}</td><td>{cause or '-'}</td></tr>")
    plots = [("Cycle change", cycle_change_plot(findings)), ("Stall breakdown", stall_plot(findings)),
             ("History", history_plot(findings, history or []))]
    body = "".join(f"<h2>{e(t)}</h2>\n<figure>{svg}</figure>\n" for t, svg in plots if svg)
    moved = moved_table(findings)
    if moved:  # after the plots: the long table of details
        body += ("<h2>Explanatory figures that moved</h2>\n<p>IPC, stall reasons (warp-cycles) and Nsight-named "
                 "metrics against the baseline; reported, never gating.</p>\n" + moved)
    bad = sum(1 for f in findings if f.failed or f.regressed)
    runs = sum(1 for f in findings if not f.missing)
    missing = len(findings) - runs
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>xcc regress: {e(corpus)}</title>"
            f"<style>{_STYLE}</style></head><body>\n<h1>xcc regress: {e(corpus)}</h1>\n"
            f"<p>{runs} kernel run(s)" + (f", {missing} in the baseline but not run" if missing else "")
            + f", {bad} regression(s) or failure(s).</p>\n"
            "<table><tr><th>kernel</th><th>status</th><th>cycles</th><th>changes</th><th>cause</th></tr>\n"
            + "\n".join(rows) + "</table>\n" + body + "</body></html>\n")
    return re.sub(r"[ \t]+\n", "\n", page)
