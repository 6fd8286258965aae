"""A hot-spot view of a timed launch, by PTX line: Nsight Compute's source view in text.

The cycle model (:mod:`xcc.sim.perf.timing`, its stall attribution in :mod:`xcc.sim.perf.metrics`)
attributes every resident warp-cycle to the instruction the warp issues next
(``metrics['xcc__pc_samples']``): the issue cycle to ``selected``, the cycles before it to the reason
the warp waited (``wait``, ``long_scoreboard``, ...).  :func:`hotspots` sums those samples over the
instructions of each PTX line (the kernel image's line table) and ranks the lines by warp-cycles, so a
user sees which lines of *their* PTX the time goes to and why.  For PTX built with ``nvcc -lineinfo`` or
``-G`` each line also names the CUDA source line it came from (``file.cu:line``, :mod:`xcc.backend.lineinfo`),
as Nsight Compute's source view correlates SASS with CUDA source.
"""

from __future__ import annotations

from dataclasses import dataclass

from xcc.backend.lineinfo import file_table, line_info
from xcc.sim.perf.metrics import STALL_REASONS


@dataclass
class Hotspot:
    line: int  # PTX line (0: instructions with no line, e.g. inserted by the backend)
    instructions: list[str]  # the xg1 mnemonics issued for that line
    issued: int  # warp-instructions issued (the sampled CTAs)
    cycles: int  # warp-cycles attributed: issue + stalls
    reasons: dict[str, int]  # stall reason -> warp-cycles (``selected`` excluded)
    source_file: str | None = None  # the CUDA source position of the line's first instruction that has one
    source_line: int | None = None  # (-lineinfo/-G PTX; the file as the PTX names it)

    @property
    def source(self) -> str | None:
        """``name.cu:line`` (the file's base name), or None."""
        return f"{self.source_file.rsplit('/', 1)[-1]}:{self.source_line}" if self.source_file else None

    @property
    def top_reason(self) -> str:
        return max(self.reasons, key=self.reasons.get) if any(self.reasons.values()) else "selected"


def hotspots(stats, kernel, top: int | None = 10) -> list[Hotspot]:
    """The PTX lines of ``kernel`` (a KernelImage) ranked by the warp-cycles ``stats`` attributes to them."""
    rows = stats.metrics.get("xcc__pc_samples") if getattr(stats, "metrics", None) else None
    if not rows:
        return []
    insts = kernel.instructions
    files = file_table(kernel)
    by_line: dict[int, Hotspot] = {}
    for pc, *samples in rows:
        info = line_info(kernel, pc, files)
        line = info.ptx_line
        h = by_line.get(line)
        if h is None:
            h = by_line[line] = Hotspot(line, [], 0, 0, dict.fromkeys(STALL_REASONS[1:], 0))
        if h.source_file is None and info.file is not None:
            h.source_file, h.source_line = info.file, info.line
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
    """A text table: share of warp-cycles, PTX line, the CUDA source line (when any spot has one), warp
    instructions issued, top stall reason, the PTX text (or the instructions)."""
    total = sum(h.cycles for h in spots) or 1
    width = max((len(h.source) for h in spots if h.source), default=0)
    src = f"  {'source':<{width}}" if width else ""
    out = [f"{'cycles%':>7}  {'line':>5}{src}  {'issued':>8}  {'top stall':<18} PTX"]
    for h in spots:
        text = source_lines[h.line - 1].strip() if source_lines and 0 < h.line <= len(source_lines) else ""
        text = text or "(" + " ".join(h.instructions) + ")"
        src = f"  {h.source or '-':<{width}}" if width else ""
        out.append(f"{100 * h.cycles / total:6.1f}%  {h.line:>5}{src}  {h.issued:>8}  {h.top_reason:<18} {text}")
    return "\n".join(out)
