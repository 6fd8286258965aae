"""Runtime unrolling with a remainder loop, for :mod:`xcc.passes.unroll` (LLVM's ``LoopUnrollRuntime``, epilogue
form).

For a rotated counted loop ``i = phi [start, i + 1]`` whose latch continues while ``i + 1 < bound`` (``setp.lt``
of a signed type, or ``lo``/``lt`` of an unsigned one, ``bound`` invariant), the number of iterations is known
before the loop runs: ``T = (bound - start) mod 2^w`` when the first test passes, else 1.  (``i + 1`` can only
wrap on the first step, when ``start`` is the type's maximum: every later ``i`` passed ``i < bound``; from
there ``i`` counts up by one to ``bound``, so the modular difference is exact in every case.)  Then

    preheader:  T, G = T >> log2(factor), R = T & (factor - 1);  G != 0 ? main : mid
    main:       factor copies of the body with no test, a counter from G down to 0 (one test per group)
    mid:        the loop values after the groups (or the start values);  R != 0 ? loop : exit
    loop:       the original loop, now the remainder: it runs the last R iterations through its own test
    exit:       loop-closed phis take the remainder's values, or main's when R = 0

``factor`` must be a power of two.  Values used after the loop come through loop-closed phis in a dedicated
exit block (:func:`xcc.passes.loop_utils.close_loop`); the path that skips both loops cannot happen (T >= 1),
its phi operands are zeros.
"""

from __future__ import annotations

from xcc.ir.cfg import Loop
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.types import ptx_type
from xcc.passes.loop_utils import CountedLoop, clone_body, close_loop, ensure_preheader, split_edge


def runtime_ok(cl: CountedLoop | None, factor: int) -> bool:
    """Whether :func:`unroll_runtime` handles ``cl`` with ``factor``."""
    if cl is None or factor < 2 or factor & (factor - 1):
        return False
    t, cmp = cl.next.type, cl.cmp
    if t.bits not in (32, 64) or not isinstance(cl.step, Const) or cl.step.bits != 1:
        return False
    if not cl.next_on_left or not cl.stay or cmp.type.bits != t.bits:
        return False
    c, kind = cmp.attrs.get("cmp"), cmp.type.kind
    return (c == "lt" and kind in "sub") or (c == "lo" and kind in "ub")


def unroll_runtime(fn: Function, loop: Loop, cl: CountedLoop, factor: int, rank: dict[Block, int]) -> None:
    pre = ensure_preheader(fn, loop)
    h, latch = loop.header, loop.latches[0]
    exit_ = next(t for t in latch.terminator.targets if t not in loop.body)
    exit_ = split_edge(fn, latch, exit_) if len(exit_.preds) > 1 or exit_.phis else exit_
    close_loop(fn, loop, exit_)
    order = sorted(loop.body, key=rank.__getitem__)
    li = h.preds.index(latch)
    pi = 1 - li
    back = {p.result: p.args[li] for p in h.phis}
    w = cl.next.type.bits
    ut, bt = ptx_type(f"u{w}"), ptx_type(f"b{w}")
    loc = latch.terminator.loc

    def emit(block: Block, op: str, t, args: list, rt=None, **attrs) -> Value:
        v = Value(rt or t)
        block.append(Instruction(op, t, args, v, attrs, loc))
        return v

    # the trip count, in the preheader
    term = pre.instructions.pop()
    n0 = emit(pre, "add", cl.next.type, [cl.start, Const(cl.next.type, 1)])
    first = emit(pre, "setp", cl.cmp.type, [n0, cl.bound], ptx_type("pred"), **cl.cmp.attrs)
    diff = emit(pre, "sub", ut, [cl.bound, cl.start])
    trips = emit(pre, "selp", bt, [diff, Const(bt, 1), first])
    groups = emit(pre, "shr", ut, [trips, Const(ptx_type("u32"), factor.bit_length() - 1)])
    rest = emit(pre, "and", bt, [trips, Const(bt, factor - 1)])
    any_group = emit(pre, "setp", ut, [groups, Const(ut, 0)], ptx_type("pred"), cmp="ne")
    mpre, mexit, mid = (Block(_name(fn, h.name + s)) for s in (".rt.pre", ".rt.exit", ".rt.mid"))
    pre.append(Instruction("cbr", None, [any_group], None, {"targets": [mpre, mid]}, term.loc))

    # the main loop: factor copies, a counter
    phis = [Phi(Value(p.result.type, p.result.name)) for p in h.phis]
    vmap = {p.result: q.result for p, q in zip(h.phis, phis)}
    copies = []
    for k in range(factor):
        bmap = clone_body(fn, order, h, vmap, f".rt{k}")
        copies.append(bmap)
        if k + 1 < factor:
            vmap = {p.result: vmap.get(back[p.result], back[p.result]) for p in h.phis}
    head = copies[0][h]
    for k, bmap in enumerate(copies):
        lk = bmap[latch]
        if k + 1 < factor:
            lk.instructions[-1] = Instruction("br", None, [], None, {"targets": [copies[k + 1][h]]}, loc)
            lk.instructions[-1].block = lk
            copies[k + 1][h].preds = [lk]
    last = copies[-1][latch]
    out = {p.result: vmap.get(back[p.result], back[p.result]) for p in h.phis}  # after a group
    count = Phi(Value(ut))
    last.instructions.pop()
    left = emit(last, "sub", ut, [count.result, Const(ut, 1)])
    again = emit(last, "setp", ut, [left, Const(ut, 0)], ptx_type("pred"), cmp="ne")
    last.append(Instruction("cbr", None, [again], None, {"targets": [head, mexit]}, loc))
    head.preds = [mpre, last]
    for p, q in zip(h.phis, phis):
        q.args, q.block = [p.args[pi], out[p.result]], head
    count.args, count.block = [groups, left], head
    head.phis = phis + [count]
    mpre.preds, mexit.preds = [pre], [last]
    mpre.append(Instruction("br", None, [], None, {"targets": [head]}, loc))
    mexit.append(Instruction("br", None, [], None, {"targets": [mid]}, loc))

    # mid: where the remainder starts (or the loop ends, R = 0)
    mid.preds = [pre, mexit]
    starts = []
    for p in h.phis:
        q = Phi(Value(p.result.type, p.result.name), [p.args[pi], out[p.result]], mid)
        mid.phis.append(q)
        starts.append(q.result)
    done = []
    for e in exit_.phis:  # loop-closed values when the remainder does not run
        v = e.args[0]
        q = Phi(Value(v.type, v.name), [Const(v.type, 0), vmap.get(v, v)], mid)
        mid.phis.append(q)
        done.append(q.result)
    some = emit(mid, "setp", ut, [rest, Const(ut, 0)], ptx_type("pred"), cmp="ne")
    mid.append(Instruction("cbr", None, [some], None, {"targets": [h, exit_]}, loc))
    h.preds[pi] = mid
    for p, s in zip(h.phis, starts):
        p.args[pi] = s
    exit_.preds.append(mid)
    for e, v in zip(exit_.phis, done):
        e.args.append(v)
    at = fn.blocks.index(h)
    fn.blocks[at:at] = [mpre, *(bm[b] for bm in copies for b in order), mexit, mid]


def _name(fn: Function, base: str) -> str:
    names = {b.name for b in fn.blocks}
    name, k = base, 1
    while name in names:
        k += 1
        name = f"{base}{k}"
    return name
