"""The one spill chooser, for general registers (:mod:`xcc.backend.spill`) and predicates
(:mod:`xcc.backend.pred_spill`) alike.

When a linear scan (Poletto and Sarkar, "Linear Scan Register Allocation", TOPLAS 1999, section 2.2)
finds more values live than registers, it evicts one of the candidates: the active intervals and the
new one.  The chooser takes, in this order of preference,

1. a rematerialisable value (its only definition computes a constant from no register, see
   :func:`xcc.backend.spill.allocate_with_spilling`) that is not read at this very position: it costs
   no memory (Briggs, Cooper and Torczon, "Rematerialization", PLDI 1992);
2. the value read furthest ahead (Belady's rule, as Braun and Hack, "Register Spilling and Live-Range
   Splitting for SSA-Form Programs", CC 2009, argue for), a value read again only around a loop
   counting past the end of the code, and one never read again furthest of all;
3. then the wider value (a 64-bit pair frees two registers), then the newer one (the higher id).

Positions number the instructions in layout order, as :func:`xcc.backend.regalloc.intervals` does.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping

from xcc.backend.isel import MBlock
from xcc.backend.minst import MInst, VReg
from xcc.backend.regalloc import inst_uses


class SpillChooser:
    """The spiller :func:`xcc.backend.regalloc.linear_scan` consults (its ``Spiller`` protocol): ``pinned``
    values are never offered, ``remat`` maps each rematerialisable value to its one definition.  Only
    the reads of values ``tracked`` accepts are recorded (all values by default)."""

    def __init__(self, blocks: list[MBlock], pinned: set[VReg], remat: Mapping[VReg, MInst] | None = None,
                 tracked: Callable[[VReg], bool] | None = None):
        self.pinned = pinned
        self.remat = dict(remat or {})
        self.reads: dict[VReg, list[int]] = {}  # each value's read positions, ascending, once each
        pos = 0
        for b in blocks:
            for m in b.insts:
                for v in inst_uses(m):
                    if tracked is None or tracked(v):
                        r = self.reads.setdefault(v, [])
                        if not r or r[-1] != pos:
                            r.append(pos)
                pos += 1
        self.total = pos

    def next_use(self, v: VReg, at: int) -> int:
        """The first position at or after ``at`` that reads ``v``; past the end of the code (by its first
        read) if ``v`` is read again only around a loop, twice the length if never."""
        r = self.reads.get(v, [])
        i = bisect.bisect_left(r, at)
        if i < len(r):
            return r[i]
        return self.total + (r[0] if r else self.total)

    def choose(self, candidates: list[VReg], position: int) -> VReg:
        """The candidate to evict at ``position`` (see the module's order of preference)."""
        def key(v: VReg):
            nxt = self.next_use(v, position)
            return (v in self.remat and nxt > position, nxt, v.width, v.id)

        return max(candidates, key=key)
