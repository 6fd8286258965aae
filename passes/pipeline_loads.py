"""Software pipelining of loads: a single-block loop issues the loads of iteration ``i + distance`` during
iteration ``i``, so their memory latency overlaps the work (and the waits) of the iterations in between.

The load half of modulo scheduling (Rau, "Iterative Modulo Scheduling", MICRO 1994; LLVM's
``MachinePipeliner``), with a prologue and no epilogue: for ``distance = d``, a plain load ``v = ld [a]`` of a
loop that is one block (header = latch = the only exit, ``cbr c`` back or out, a preheader) becomes

* ``d`` phis ``q0 .. q(d-1)`` in the header; the load's uses read ``q0`` (the value of this iteration), and
  on the back edge ``q(k)`` takes ``q(k+1)``;
* in the body, the load of iteration ``i + d``: ``ld [sel(runs, a(i+d), a(i))]`` into ``q(d-1)``'s back-edge
  value, where ``a(i+k)`` is the address with the header phis advanced ``k`` iterations (the pure
  instructions that compute it from the phis, cloned with each phi replaced by its back-edge value, ``k``
  times) and ``runs`` says that iteration ``i + d`` runs (the loop's continue test holds at iterations
  ``i .. i + d - 1``, advanced the same way).  When it does not run, the load reads this iteration's
  address again, which was loaded already and cannot fault: no load is speculated to an address the
  original loop would not have read;
* in the preheader, the loads of iterations ``0 .. d-1`` (iteration ``k`` only when the continue test holds
  at ``0 .. k-1``; else again the address of iteration 0) as the phis' first values.

A load qualifies when it is plain (:func:`xcc.passes.memory_model.is_plain_load`, or a register of a
``wmma.load`` / ``ldmatrix``, whose other operands are loop-invariant), nothing in the loop
writes or orders its space (:func:`xcc.passes.memory_model.clobbers`: stores to an aliasing space, atomics,
barriers, fences, acquire loads; loops with calls are left alone), and its address and the continue test
are pure functions (:func:`xcc.passes.gvn.numberable`) of the header phis and loop-invariant values.  The
results are the values the original loads would have read (no store intervenes), so the program's
results do not change; it costs ``d`` registers per load, a select per load and one load per load on
the last ``d`` iterations that nobody reads.  The pre-RA scheduler then issues the new load early in the
block.

``distance = 0`` pipelines nothing, except, with a profile (``profile_use``), the loops whose profiled mean
trip count is at least 2 and whose loads' uses the profile shows waiting on memory (long-scoreboard stall
cycles): those get ``min(trip - 1, max_distance)``, their loads marked ``ahead="profile"`` (the driver builds a
kernel that then spills again without them, :func:`xcc.driver.compile_ir`).  The autotuner searches ``distance`` as a knob.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xcc.ir.cfg import Loop, natural_loops
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value
from xcc.ir.rewrite import replace_uses
from xcc.ir.types import PRED
from xcc.passes.constfold import ConstantFold
from xcc.passes.dce import DeadCodeElimination
from xcc.passes.gvn import numberable
from xcc.passes.loop_utils import ensure_preheader, is_invariant, outside_preds
from xcc.passes.manager import FunctionPass
from xcc.passes.memory_model import clobbers, is_plain_load, kills, space_of
from xcc.passes.unroll import unroll_partially

MAX_LOADS = 32
"""Loads pipelined per loop at most (each costs ``distance`` registers; a ``wmma.load`` fragment is 4-8 loads)."""


@dataclass(frozen=True)
class PipelineLoads(FunctionPass):
    """Issue each load of a single-block loop ``distance`` iterations ahead (software pipelining of loads)."""

    name: ClassVar[str] = "pipeline-loads"
    distance: int = 0  # iterations ahead (0: only where a profile says the loop waits on its loads)
    max_distance: int = 4  # the most a profile may choose

    def run_function(self, fn: Function) -> None:
        index = getattr(fn, "profile_index", None)
        if self.distance <= 0 and index is None:
            return
        changed = False
        for loop in natural_loops(fn):
            if not _single_block(loop):
                continue
            d = self.distance if self.distance > 0 else \
                index.pipeline_distance(loop.header.terminator, loop.header.instructions, self.max_distance)
            if d > 0 and _pipeline(fn, loop, d, True if self.distance > 0 else "profile"):
                unroll_partially(fn, loop, d + 1)
                changed = True
        if changed:  # the prologue's copies of the address arithmetic start from constants; clones nobody reads
            ConstantFold().run_function(fn)
            DeadCodeElimination().run_function(fn)


def _single_block(loop: Loop) -> bool:
    h = loop.header
    term = h.terminator
    if loop.body != {h} or len(h.preds) != 2 or term is None or term.op != "cbr":
        return False
    inside = [t is h for t in term.targets]
    return inside.count(True) == 1


class _Advancer:
    """Values of the loop block at a later iteration: pure instructions cloned with the header phis replaced."""

    def __init__(self, block: Block, latch_index: int, out: list[Instruction]):
        self.block = block
        self.li = latch_index
        self.defs = {i.result: i for i in block.instructions if i.result is not None}
        self.phis = {p.result: p for p in block.phis}
        self.out = out

    def computable(self, v: Value, seen: set | None = None) -> bool:
        """``v`` is a pure function of the header phis and values from outside the loop, and so is every phi's
        value on the back edge that it reads (so ``v`` can be computed for any later iteration)."""
        seen = set() if seen is None else seen
        if isinstance(v, Const) or v in seen:
            return True
        seen.add(v)
        if v in self.phis:
            return self.computable(self.phis[v].args[self.li], seen)
        inst = self.defs.get(v)
        if inst is None:
            return True  # defined outside the loop
        if not numberable(inst) or inst.op == "ld_param":
            return False
        return all(self.computable(a, seen) for a in inst.args)

    def at(self, v: Value, env: dict[Value, Value] | None, memo: dict[Value, Value]) -> Value:
        """``v`` with each header phi ``p`` read as ``env[p]`` (``env`` None: ``v`` itself)."""
        if env is None or isinstance(v, Const):
            return v
        if v in self.phis:
            return env[v]
        inst = self.defs.get(v)
        if inst is None:
            return v
        if v not in memo:
            args = [self.at(a, env, memo) for a in inst.args]
            new = Instruction(inst.op, inst.type, args, Value(v.type, v.name), dict(inst.attrs), inst.loc,
                              inst.debug_loc)
            self.out.append(new)
            memo[v] = new.result
        return memo[v]

    def next_env(self, env: dict[Value, Value] | None, memo: dict[Value, Value]) -> dict[Value, Value]:
        """The phis' values one iteration after ``env``'s."""
        return {p: self.at(phi.args[self.li], env, memo) for p, phi in self.phis.items()}


def _all(conds: list[Value], continue_on_true: bool, out: list[Instruction], loc) -> Value | None:
    """A predicate that is true when every continue test in ``conds`` holds (None: no test, always)."""
    if not conds:
        return None
    acc = conds[0]
    for c in conds[1:]:
        v = Value(PRED)
        out.append(Instruction("and" if continue_on_true else "or", PRED, [acc, c], v, {}, loc))
        acc = v
    return acc


def _guarded_load(load: Instruction, addr: Value, fallback: Value, runs: Value | None, continue_on_true: bool,
                  out: list[Instruction], mark: bool | str = True) -> Value:
    """``ld [runs ? addr : fallback]`` (``runs`` None: ``ld [addr]``)."""
    if runs is not None:
        sel = Value(addr.type)
        args = [addr, fallback, runs] if continue_on_true else [fallback, addr, runs]
        out.append(Instruction("selp", addr.type, args, sel, {}, load.loc, load.debug_loc))
        addr = sel
    v = Value(load.result.type, load.result.name)
    out.append(Instruction(load.op, load.type, [addr, *load.args[1:]], v, {**load.attrs, "ahead": mark}, load.loc,
                           load.debug_loc))
    return v


def _loadable(inst: Instruction, written: frozenset[str], adv: _Advancer, loop: Loop) -> bool:
    """A load the pass may issue ahead: a plain ``ld``, or a warp's ``wmma.load`` / ``ldmatrix`` part (weak
    reads too), of a space nothing in the loop writes or orders, its address computable for later iterations,
    its other operands (a ``wmma.load`` stride) loop-invariant."""
    plain = is_plain_load(inst) or (inst.op in ("wmma_load", "ldmatrix") and inst.result is not None)
    return (plain and not kills(space_of(inst), written) and adv.computable(inst.args[0])
            and all(is_invariant(a, loop) for a in inst.args[1:]))


def _pipeline(fn: Function, loop: Loop, d: int, mark: bool | str = True) -> bool:
    h = loop.header
    if any(i.op == "call" for i in h.instructions):
        return False
    written = frozenset().union(*(clobbers(i) for i in h.instructions))
    term = h.terminator
    cond = term.args[0]
    continue_on_true = term.targets[0] is h
    body: list[Instruction] = []
    adv = _Advancer(h, h.preds.index(h), body)
    if not adv.computable(cond):
        return False
    loads = [i for i in h.instructions if _loadable(i, written, adv, loop)][:MAX_LOADS]
    if not loads:
        return False
    outside = outside_preds(loop)
    pre = outside[0] if len(outside) == 1 and outside[0].succs == [h] else ensure_preheader(fn, loop)
    li, oi = h.preds.index(h), h.preds.index(pre)
    adv = _Advancer(h, li, body)
    # iterations ahead inside the loop: env[k] holds the phis at iteration i + k
    memo_loop: list[dict] = [{} for _ in range(d + 1)]
    envs: list[dict | None] = [None]
    for k in range(1, d + 1):
        envs.append(adv.next_env(envs[k - 1], memo_loop[k - 1]) if k > 1 else
                    {p: phi.args[li] for p, phi in adv.phis.items()})
    conds = [adv.at(cond, envs[k], memo_loop[k]) for k in range(d)]
    runs = _all(conds, continue_on_true, body, term.loc)
    # the preheader's: the phis at iterations 0 .. d - 1
    prologue: list[Instruction] = []
    pre_adv = _Advancer(h, li, prologue)
    memo_pre: list[dict] = [{} for _ in range(d)]
    penvs = [{p: phi.args[oi] for p, phi in adv.phis.items()}]
    for k in range(1, d):
        penvs.append(pre_adv.next_env(penvs[k - 1], memo_pre[k - 1]))
    pconds = [pre_adv.at(cond, penvs[k], memo_pre[k]) for k in range(d - 1)]
    for load in loads:
        first = pre_adv.at(load.args[0], penvs[0], memo_pre[0])
        inits = [_guarded_load(load, first, first, None, continue_on_true, prologue, mark)]
        for k in range(1, d):
            addr = pre_adv.at(load.args[0], penvs[k], memo_pre[k])
            inits.append(_guarded_load(load, addr, first, _all(pconds[:k], continue_on_true, prologue, term.loc),
                                       continue_on_true, prologue, mark))
        ahead = adv.at(load.args[0], envs[d], memo_loop[d])
        nxt = _guarded_load(load, ahead, load.args[0], runs, continue_on_true, body, mark)
        phis = [Phi(Value(load.result.type, load.result.name), [None, None], h) for _ in range(d)]
        for k, phi in enumerate(phis):
            phi.args[oi] = inits[k]
            phi.args[li] = phis[k + 1].result if k + 1 < d else nxt
        h.phis.extend(phis)
        h.instructions.remove(load)
        replace_uses(fn, {load.result: phis[0].result})
    for inst in body:
        inst.block = h
    h.instructions[-1:-1] = body
    pre_term = pre.instructions.pop()
    for inst in prologue:
        pre.append(inst)
    pre.append(pre_term)
    return True
