"""Loop unrolling: full unrolling of loops with a small constant trip count, partial unrolling of other small
innermost loops (LLVM's ``LoopUnroll``).

Candidates are the innermost natural loops (one round: a loop that becomes innermost is left for the next
run of the pass) in the *rotated* shape nvcc -O3 and LLVM emit: one latch, which is also
the only way out (``cbr`` back to the header or to the exit; no ``ret``/``exit``/``trap`` inside), a
preheader (created when missing), and no ``attrs.nounroll`` on a branch to the header (the IR builder sets it
from ``.pragma "nounroll";``, nvcc's ``#pragma unroll 1``).  The loop body is copied; copy ``k``'s header
phis become copy ``k-1``'s values on the back edge, and values used after the loop get a phi in a dedicated
exit block (loop-closed SSA) with one operand per copy that can leave.

* **Full**: when :func:`xcc.passes.loop_utils.trip_count` knows the number of iterations ``n`` (constant
  start, step and bound, stepped with the interpreters' integer semantics, wrap-around included),
  ``1 <= n <= max_trip`` and ``n`` times the body's size is at most ``max_size`` instructions: ``n``
  copies in a row, every latch test gone (its outcome is known), no loop left.
* **Partial**: otherwise, for a loop of at most ``max_size / factor`` instructions, ``factor`` copies
  per trip around the loop, each keeping its own exit test, so any trip count, known or not, runs
  exactly as before and no remainder loop is needed (the back-edge jumps of ``factor - 1`` iterations
  become fall-throughs and the copies can be scheduled together).  When the trip count is a known constant
  (at most :data:`KNOWN_TRIP_LIMIT`) and a multiple of ``factor``, only the last copy keeps its test.
* **Runtime** (``runtime``, the default for partial unrolling): a counted loop stepping by one towards an
  invariant bound with an unknown trip count gets ``factor`` copies with one test per group and the original
  loop as the remainder (:mod:`xcc.passes.unroll_runtime`, LLVM's ``LoopUnrollRuntime``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import Loop, natural_loops, reverse_postorder
from xcc.ir.core import Block, Function, Instruction, Value
from xcc.ir.rewrite import replace_uses
from xcc.passes.loop_utils import (
    clone_body,
    close_loop,
    counted_loop,
    ensure_preheader,
    split_edge,
    trip_count,
)
from xcc.passes.manager import FunctionPass
from xcc.passes.unroll_runtime import runtime_ok, unroll_runtime

KNOWN_TRIP_LIMIT = 1024
"""Constant trip counts are found by stepping the loop's counter at most this many times."""


@dataclass(frozen=True)
class LoopUnroll(FunctionPass):
    """Fully unroll small constant-trip loops; unroll other small innermost loops by ``factor``."""

    name: ClassVar[str] = "unroll"
    max_trip: int = 32  # full unrolling up to this many iterations
    max_size: int = 256  # instructions after unrolling, at most
    factor: int = 4  # partial unrolling: copies per trip around the loop (1: none)
    runtime: bool = True  # unknown trip counts of counted loops: groups of factor with one test, and a remainder

    def run_function(self, fn: Function) -> None:
        loops = natural_loops(fn)
        headers = {lp.header for lp in loops}
        inner = [lp for lp in loops if not any(b in headers for b in lp.body if b is not lp.header)]
        rank = {b: k for k, b in enumerate(reverse_postorder(fn))}
        for loop in inner:  # innermost loops are disjoint: unrolling one leaves the others' blocks alone
            if _shape_ok(loop):
                self._unroll(fn, loop, rank)

    def _unroll(self, fn: Function, loop: Loop, rank: dict[Block, int]) -> None:
        size = sum(len(b.instructions) + len(b.phis) for b in loop.body)
        cl = counted_loop(loop)
        n = trip_count(cl, KNOWN_TRIP_LIMIT) if cl is not None else None
        factor = self.factor
        index = getattr(fn, "profile_index", None)  # profile use (xcc.profile.use): the loop's mean trip count
        if index is not None and n is None:
            latch = loop.latches[0]
            if loop.body == {latch} and index.pipeline_distance(latch.terminator, latch.instructions, 1):
                return  # a one-block loop that waited on its loads: pipeline-loads issues them ahead instead
            factor = index.unroll_factor(latch.terminator) or factor
        if n is not None and 1 <= n <= self.max_trip and n * size <= self.max_size:
            _Copier(fn, loop, rank).run(n, full=True)
        elif factor > 1 and size * factor <= self.max_size:
            if n is None and self.runtime and runtime_ok(cl, factor):
                unroll_runtime(fn, loop, cl, factor, rank)
                return
            multiple = n is not None and n % factor == 0  # then only every factor-th test can leave
            _Copier(fn, loop, rank).run(factor, full=False, tests_only_last=multiple)


def unroll_partially(fn: Function, loop: Loop, copies: int) -> None:
    """``copies`` copies of ``loop`` (in the shape :func:`_shape_ok` accepts, ``nounroll`` aside) per trip
    around it, each keeping its own exit test."""
    _Copier(fn, loop, {b: k for k, b in enumerate(reverse_postorder(fn))}).run(copies, full=False)


def _shape_ok(loop: Loop) -> bool:
    if len(loop.latches) != 1:
        return False
    latch, h = loop.latches[0], loop.header
    term = latch.terminator
    if term is None or term.op != "cbr" or term.attrs.get("nounroll"):
        return False
    if sum(t is h for t in term.targets) != 1 or sum(t not in loop.body for t in term.targets) != 1:
        return False
    for b in loop.body:
        t = b.terminator
        if t is None or t.op not in ("br", "cbr") or t.attrs.get("nounroll"):
            return False
        if b is not latch and any(s not in loop.body for s in b.succs):
            return False
    if any(p.terminator is not None and p.terminator.attrs.get("nounroll") for p in h.preds):
        return False
    return sum(p not in loop.body for p in h.preds) >= 1


class _Copier:
    def __init__(self, fn: Function, loop: Loop, rank: dict[Block, int]):
        self.fn, self.loop, self.rank = fn, loop, rank

    def run(self, copies: int, full: bool, tests_only_last: bool = False) -> None:
        fn, loop = self.fn, self.loop
        pre = ensure_preheader(fn, loop)
        h, latch = loop.header, loop.latches[0]
        exit_ = next(t for t in latch.terminator.targets if t not in loop.body)
        exit_ = split_edge(fn, latch, exit_) if len(exit_.preds) > 1 or exit_.phis else exit_
        close_loop(fn, loop, exit_)
        order = sorted(loop.body, key=self.rank.__getitem__)
        li = h.preds.index(latch)
        pi = 1 - li
        back = {phi.result: phi.args[li] for phi in h.phis}
        copies_blocks: list[dict[Block, Block]] = [{b: b for b in order}]
        vmaps: list[dict[Value, Value]] = [{}]
        for k in range(1, copies):
            prev_map = vmaps[-1]
            vmap = {phi.result: prev_map.get(v, v) for phi, v in ((p, back[p.result]) for p in h.phis)}
            bmap = clone_body(fn, order, h, vmap, f".u{k}")
            copies_blocks.append(bmap)
            vmaps.append(vmap)
        # chain the copies: latch k -> header k+1, the last latch back to the header (or out, when full)
        for k, bmap in enumerate(copies_blocks):
            lk = bmap[latch]
            t = lk.terminator
            nxt = copies_blocks[k + 1][h] if k + 1 < copies else h
            if full or (tests_only_last and k + 1 < copies):
                dest = nxt if k + 1 < copies else exit_
                lk.instructions[-1] = Instruction("br", None, [], None, {"targets": [dest]}, t.loc, t.debug_loc)
                lk.instructions[-1].block = lk
            else:
                t.attrs["targets"] = [nxt if x is h else x for x in t.targets]
            if k + 1 < copies:
                copies_blocks[k + 1][h].preds = [lk]
        # the exit's phis (loop-closed values) take one operand per copy that can leave
        leaving = [copies_blocks[-1][latch]] if full or tests_only_last else [bm[latch] for bm in copies_blocks]
        for phi in exit_.phis:
            v = phi.args[0]
            phi.args = [vm.get(v, v) for bm, vm in zip(copies_blocks, vmaps) if bm[latch] in leaving]
        exit_.preds = leaving
        last_latch = copies_blocks[-1][latch]
        if full:  # the header's phis now only see the preheader; the exit's loop-closing phis one copy
            repl = {phi.result: phi.args[pi] for phi in h.phis}
            repl.update({phi.result: phi.args[0] for phi in exit_.phis})
            h.preds = [pre]
            h.phis = []
            exit_.phis = []
            replace_uses(fn, repl)
        else:
            h.preds[li] = last_latch
            for phi in h.phis:
                v = phi.args[li]
                phi.args[li] = vmaps[-1].get(v, v)
        at = fn.blocks.index(exit_) if exit_ in fn.blocks else len(fn.blocks)
        new_blocks = [bm[b] for bm in copies_blocks[1:] for b in order]
        fn.blocks[at:at] = new_blocks
