"""A hot-spot view of a timed launch, by PTX line: Nsight Compute's source view in text.

The cycle model (:mod:`xcc.sim.perf.timing`, its stall attribution in :mod:`xcc.sim.perf.metrics`)
attributes every resident warp-cycle to the instruction the warp issues next
(``metrics['xcc__pc_samples']``): the issue cycle to ``selected``, the cycles before it to the reason
the warp waited (``wait``, ``long_scoreboard``, ...).  :func:`hotspots` sums those samples over the
instructions of each PTX line (the kernel image's line table) and ranks the lines by warp-cycles, so a
user sees which lines of *their* PTX the time goes to and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.sim.perf.metrics import STALL_REASONS


@dataclass
class Hotspot:
    line: int  # PTX line (0: instructions with no line, e.g. inserted by the backend)
    instructions: list[str]  # the xg1 mnemonics issued for that line
    issued: int  # warp-instructions issued (the sampled CTAs)
    cycles: int  # warp-cycles attributed: issue + stalls
    reasons: dict[str, int]  # stall reason -> warp-cycles (``selected`` excluded)

    @property
    def top_reason(self) -> str:
        return max(self.reasons, key=self.reasons.get) if any(self.reasons.values()) else "selected"


def hotspots(stats, kernel, top: int | None = 10) -> list[Hotspot]:
    """The PTX lines of ``kernel`` (a KernelImage) ranked by the warp-cycles ``stats`` attributes to them."""
    rows = stats.metrics.get("xcc__pc_samples") if getattr(stats, "metrics", None) else None
    if not rows:
        return []
    insts = kernel.instructions
    by_line: dict[int, Hotspot] = {}
    for pc, *samples in rows:
        line = kernel.lines[pc] if pc < len(kernel.lines) else 0
        h = by_line.get(line)
        if h is None:
            h = by_line[line] = Hotspot(line, [], 0, 0, dict.fromkeys(STALL_REASONS[1:], 0))
        mn = insts[pc].mnemonic
        if mn not in h.instructions:
            h.instructions.append(mn)
        h.issued += samples[0]
        h.cycles += sum(samples)
        for r, n in zip(STALL_REASONS[1:], samples[1:]):
            h.reasons[r] += n
    ranked = sorted(by_line.values(), key=lambda h: (-h.cycles, h.line))
    return ranked[:top] if top is not None else ranked


def format_hotspots(spots: list[Hotspot], source_lines: list[str] | None = None) -> str:
    """A text table: share of warp-cycles, PTX line, the PTX text, instructions, top stall reason."""
    total = sum(h.cycles for h in spots) or 1
    out = [f"{'cycles%':>7}  {'line':>5}  {'issued':>8}  {'top stall':<18} PTX"]
    for h in spots:
        text = source_lines[h.line - 1].strip() if source_lines and 0 < h.line <= len(source_lines) else ""
        text = text or "(" + " ".join(h.instructions) + ")"
        out.append(f"{100 * h.cycles / total:6.1f}%  {h.line:>5}  {h.issued:>8}  {h.top_reason:<18} {text}")
    return "\n".join(out)
