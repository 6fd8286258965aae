"""``xcc report``'s page: one static HTML file whose plots matplotlib draws, inlined as SVG (no script).

Sections (each a ``<section id=...>``): ``summary`` (a table of the launches: row, modelled start and duration,
cycles, shape, occupancy, CUDA source), ``timeline`` (kernels and copies per stream against modelled time),
``stalls`` (each kernel's warp-cycles by Nsight warp state, as shares, summed over its launches),
``occupancy`` (theoretical and achieved per kernel, the limiter in the label), ``findings`` (the advisor's,
with their estimated speedups and PTX/source lines).  Every bar carries an SVG ``id`` (``kernel-N``,
``copy-N``, ``stall-REASON-K``, ``occupancy-theoretical-K``, ``occupancy-achieved-K``, ``finding-N``) so a
reader, or a test, finds it.  The figure helpers are those of ``xcc regress --html``
(:mod:`xcc.regress.report_html`: a fixed hash salt and no date, so the same input gives the same page).
"""

from __future__ import annotations

import html
import re

from xcc.regress.report_html import _STYLE, _figure, _svg
from xcc.report import Report
from xcc.sim.perf.metrics import STALL_REASONS

__all__ = ["render"]

_KIND_COLOURS = {"HtoD": "#566573", "DtoH": "#85929e", "DtoD": "#1c2833", "memset": "#d5d8dc"}  # greys: copies
_TOP_FINDINGS = 12


def _colours(n: int) -> list:
    cmap = __import__("matplotlib").colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _by_name(rep: Report) -> dict[str, list]:
    out: dict[str, list] = {}
    for k in rep.kernels:
        out.setdefault(k.name, []).append(k)
    return out


def timeline_plot(rep: Report) -> str | None:
    rows = rep.rows
    if not rows:
        return None
    names = list(_by_name(rep))
    colour = dict(zip(names, _colours(len(names))))
    fig = _figure(9, 1.2 + 0.5 * len(rows))
    ax = fig.add_subplot()
    y = {r: i for i, r in enumerate(rows)}
    seen: set[str] = set()  # one legend entry per kernel and per kind of copy
    for i, k in enumerate(rep.kernels):
        (bar,) = ax.barh(y[k.row], (k.end - k.start) / 1000, left=k.start / 1000, height=0.6, color=colour[k.name],
                         edgecolor="black", linewidth=0.3, label=None if k.name in seen else k.name)
        bar.set_gid(f"kernel-{i}")
        seen.add(k.name)
    for i, c in enumerate(rep.copies):
        (bar,) = ax.barh(y[c.row], (c.end - c.start) / 1000, left=c.start / 1000, height=0.3,
                         color=_KIND_COLOURS.get(c.kind, "#95a5a6"), label=None if c.kind in seen else c.kind)
        bar.set_gid(f"copy-{i}")
        seen.add(c.kind)
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel("modelled time (us)")
    ax.set_title("Timeline: kernels and copies per stream")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return _svg(fig)


def stall_plot(rep: Report) -> str | None:
    groups = [(n, ks) for n, ks in _by_name(rep).items() if any(k.stalls for k in ks)]
    if not groups:
        return None
    totals = [{r: sum(k.stalls.get(r, 0.0) for k in ks) for r in STALL_REASONS} for _, ks in groups]
    reasons = [r for r in STALL_REASONS if any(t[r] > 0 for t in totals)]
    fig = _figure(9, 1.2 + 0.45 * len(groups))
    ax = fig.add_subplot()
    left = [0.0] * len(groups)
    labels = [n for n, _ in groups]
    for reason, colour in zip(reasons, _colours(len(reasons))):
        share = [100 * t[reason] / (sum(t.values()) or 1) for t in totals]
        bars = ax.barh(labels, share, left=left, label=reason, color=colour)
        for k, bar in enumerate(bars):
            bar.set_gid(f"stall-{reason}-{k}")
        left = [a + b for a, b in zip(left, share)]
    ax.invert_yaxis()
    ax.set_xlabel("share of warp-cycles (%)")
    ax.set_title("Stall breakdown per kernel (smsp__pcsamp_warps_issue_stalled_*)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return _svg(fig)


def occupancy_plot(rep: Report) -> str | None:
    groups = [(n, [k for k in ks if k.theoretical is not None]) for n, ks in _by_name(rep).items()]
    groups = [(n, ks) for n, ks in groups if ks]
    if not groups:
        return None
    fig = _figure(9, 1.2 + 0.6 * len(groups))
    ax = fig.add_subplot()
    pos = list(range(len(groups)))
    theo = [sum(k.theoretical for k in ks) / len(ks) for _, ks in groups]
    ach = [sum(k.achieved or 0.0 for k in ks) / len(ks) for _, ks in groups]
    for what, vals, off, colour in (("theoretical", theo, -0.2, "#aab7b8"), ("achieved", ach, 0.2, "#2874a6")):
        bars = ax.barh([p + off for p in pos], vals, height=0.4, label=what, color=colour)
        for k, bar in enumerate(bars):
            bar.set_gid(f"occupancy-{what}-{k}")
    ax.set_yticks(pos, [f"{n} (limit: {ks[0].limiter or '?'})" for n, ks in groups])
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel("occupancy (% of the SM's warps)")
    ax.set_title("Occupancy: theoretical and achieved, and the limiter")
    ax.legend(loc="lower right", fontsize="small")
    return _svg(fig)


def _findings(rep: Report) -> list[tuple[str, dict]]:
    rows = [(k.name, f) for k in rep.kernels for f in k.findings]
    rows.sort(key=lambda t: -float(t[1].get("estimated_speedup") or 1.0))  # stable: launch order among ties
    return rows[:_TOP_FINDINGS]


def findings_plot(rows: list[tuple[str, dict]]) -> str | None:
    if not rows:
        return None
    fig = _figure(9, 1.2 + 0.4 * len(rows))
    ax = fig.add_subplot()
    labels = [f"{i + 1}. {name}: {f.get('rule')}" for i, (name, f) in enumerate(rows)]
    bars = ax.barh(labels, [float(f.get("estimated_speedup") or 1.0) for _, f in rows], color="#d35400")
    for i, bar in enumerate(bars):
        bar.set_gid(f"finding-{i}")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("estimated speedup: cycles now / cycles with the cause idealised")
    ax.set_title("The advisor's findings")
    return _svg(fig)


def _loc(loc) -> str:
    if not isinstance(loc, list | tuple) or len(loc) < 2:
        return str(loc)
    ptx = f"{loc[0] or 'PTX'}:{loc[1]}" if loc[1] else str(loc[0] or "")
    src = f"{str(loc[2]).rsplit('/', 1)[-1]}:{loc[3]}" if len(loc) > 3 and loc[2] and loc[3] else ""
    return f"{src} ({ptx})" if src else ptx


def _summary(rep: Report) -> str:
    e = html.escape
    rows = []
    for k in rep.kernels:
        occ = (f"{k.theoretical:.0f}% / {k.achieved:.1f}% ({e(str(k.limiter))})" if k.theoretical is not None
               and k.achieved is not None else "-")
        rows.append(f"<tr><td>{e(k.name)}</td><td>{e(k.row)}</td><td>{k.start / 1000:.3f}</td>"
                    f"<td>{(k.end - k.start) / 1000:.3f}</td><td>{'-' if k.cycles is None else k.cycles}</td>"
                    f"<td>{e(str(list(k.grid)))} x {e(str(list(k.block)))}</td><td>{occ}</td>"
                    f"<td>{e(k.source or '-')}</td><td>{k.ptx_line or '-'}</td></tr>")
    copies = f"; {len(rep.copies)} copies and memsets" if rep.copies else ""
    return (f"<p>{len(rep.kernels)} kernel launch(es){copies}"
            + (f" on {e(rep.machine)}" if rep.machine else "") + ", in modelled time.</p>\n"
            "<table><tr><th>kernel</th><th>stream</th><th>start (us)</th><th>duration (us)</th><th>cycles</th>"
            "<th>grid x block</th><th>occupancy: theoretical / achieved (limiter)</th><th>source</th>"
            "<th>PTX line</th></tr>\n" + "\n".join(rows) + "</table>\n")


def _findings_section(rep: Report) -> str:
    e = html.escape
    rows = _findings(rep)
    if not rows:
        why = ("the advisor found nothing worth reporting" if rep.advisor else
               "no findings: a trace does not carry them, and this xcc's advisor was not run "
               "(xcc report --run SOURCE ... runs the launch and asks the advisor, where it is present)")
        return f"<p>{e(why)}.</p>\n"
    body = [f"<figure>{findings_plot(rows)}</figure>\n<table><tr><th>#</th><th>kernel</th><th>rule</th>"
            "<th>estimated speedup</th><th>finding</th><th>where (source (PTX))</th></tr>"]
    for i, (name, f) in enumerate(rows, 1):
        where = "<br>".join(e(_loc(loc)) for loc in f.get("locations") or []) or "-"
        body.append(f"<tr><td>{i}</td><td>{e(name)}</td><td>{e(str(f.get('rule')))}</td>"
                    f"<td>{float(f.get('estimated_speedup') or 1.0):.2f}x</td><td>{e(str(f.get('message')))}</td>"
                    f"<td>{where}</td></tr>")
    return "\n".join(body) + "</table>\n"


def render(rep: Report) -> str:
    """The page of ``rep``: deterministic for the same report."""
    e = html.escape
    parts = [("summary", "Launches", _summary(rep))]
    for sid, title, svg, empty in (
            ("timeline", "Timeline", timeline_plot(rep), "no kernels or copies"),
            ("stalls", "Stall breakdown", stall_plot(rep), "no timed kernels (run with the cycle model)"),
            ("occupancy", "Occupancy", occupancy_plot(rep), "no timed kernels (run with the cycle model)")):
        parts.append((sid, title, f"<figure>{svg}</figure>\n" if svg else f"<p>{e(empty)}.</p>\n"))
    parts.append(("findings", "Advisor findings", _findings_section(rep)))
    body = "".join(f"<section id=\"{sid}\"><h2>{e(t)}</h2>\n{content}</section>\n" for sid, t, content in parts)
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>xcc report: {e(rep.title)}"
            f"</title><style>{_STYLE}</style></head><body>\n<h1>xcc report: {e(rep.title)}</h1>\n{body}"
            "</body></html>\n")
    return re.sub(r"[ \t]+\n", "\n", page)
