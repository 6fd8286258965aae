"""Divergence (uniformity) analysis: which values are the same in every thread of a warp that computes them
together, and which conditional branches can split a warp.

A value is *divergent* when threads of one warp executing the same instruction together may see different
values; otherwise *uniform*.  The analysis is the classic forward propagation of Ryoo/Coutinho et al.'s
divergence analysis ("Divergence Analysis", Sampaio, Souza, Collange, Pereira, TOPLAS 2013) as LLVM's
``UniformityAnalysis`` (formerly ``DivergenceAnalysis``) implements it for NVPTX and AMDGPU:

* **sources** — special registers that differ per thread (``%tid``, ``%laneid``, the ``%lanemask_*`` registers,
  clocks and timers, ``%warpid``/``%smid``), atomics' returned values, loads from thread-private memory
  (``.local``) and from ``.param`` frame variables of device functions (per-thread), shuffles, ``match`` and
  the warp-matrix ops (each lane holds its own fragment), and every function parameter of a device function
  (its callers may pass divergent values).  ``%ctaid``/``%ntid``/``%nctaid`` and kernel parameters are uniform.
  A collective whose result every participating lane shares (``vote``, ``redux``, ``activemask``, ``bar.red``)
  is uniform.
* **data dependence** — an instruction with a divergent operand is divergent (loads included: a load from a
  divergent address is divergent, one from a uniform address uniform).
* **sync dependence** — a conditional branch on a divergent predicate is a *divergent branch*; every phi in a
  block where its paths can meet again (the blocks of the branch's region up to and including its immediate
  post-dominator that have several predecessors) is divergent, since threads arrive from different sides.
* **temporal divergence** — a value defined inside a loop that has a divergent exit (a divergent branch in the
  loop with a successor outside) and used outside the loop is divergent at that use: threads leave in
  different iterations.  Uses are resolved per user block (:meth:`Uniformity.operand_divergent`).

The result is conservative (a divergent verdict may be wrong, a uniform one never is) and is iterated to a
fixed point.  :func:`analyse_uniformity` is queried by passes and by instruction selection (a branch on a
uniform predicate needs no reconvergence barrier, :mod:`xcc.backend.convergence`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xcc.ir.cfg import EXIT, immediate_post_dominators, natural_loops
from xcc.ir.core import Block, Const, Function, Instruction, Phi, Value

DIVERGENT_SREGS = ("tid", "laneid", "lanemask", "clock", "globaltimer", "warpid", "smid", "pm")
"""Special-register name prefixes whose value differs per thread (or per read)."""

UNIFORM_COLLECTIVES = frozenset({"vote", "redux", "activemask", "bar_red"})
"""Warp collectives whose result every participating lane shares."""

ALWAYS_DIVERGENT = frozenset({"atom", "shfl", "match", "mma", "ldmatrix", "wmma_load", "wgmma", "mbar_arrive"})
"""Operations whose result differs per lane whatever their operands."""

THREAD_PRIVATE_SPACES = frozenset({"local"})


@dataclass
class Uniformity:
    """The analysis result for one function."""

    fn: Function
    divergent: set[Value] = field(default_factory=set)
    divergent_branches: set[Block] = field(default_factory=set)
    # value -> the loops with a divergent exit it is defined in (temporal divergence at uses outside them)
    escaping: dict[Value, list[set[Block]]] = field(default_factory=dict)

    def is_uniform(self, v: Value) -> bool:
        """Whether ``v`` is the same in every thread of a warp that computes it together (constants are)."""
        return isinstance(v, Const) or v not in self.divergent

    def operand_divergent(self, v: Value, user: Block) -> bool:
        """Whether ``v`` as read in block ``user`` may differ between the threads reading it together."""
        if not self.is_uniform(v):
            return True
        return any(user not in body for body in self.escaping.get(v, ()))

    def is_divergent_branch(self, block: Block) -> bool:
        """Whether ``block`` ends in a conditional branch that can split a warp."""
        return block in self.divergent_branches


def analyse_uniformity(fn: Function) -> Uniformity:
    """The :class:`Uniformity` of ``fn``'s values and branches."""
    u = Uniformity(fn)
    ipdom = immediate_post_dominators(fn)
    loops = natural_loops(fn)
    defined_in: dict[Value, Block] = {}
    for b in fn.blocks:
        for phi in b.phis:
            defined_in[phi.result] = b
        for inst in b.instructions:
            if inst.result is not None:
                defined_in[inst.result] = b
    changed = True
    while changed:
        changed = False
        for b in fn.blocks:
            for phi in b.phis:
                if phi.result not in u.divergent and _phi_divergent(u, phi, b):
                    u.divergent.add(phi.result)
                    changed = True
            for inst in b.instructions:
                if inst.op == "cbr":
                    if b not in u.divergent_branches and u.operand_divergent(inst.args[0], b):
                        u.divergent_branches.add(b)
                        changed |= _mark_sync_dependence(u, b, ipdom)
                        changed |= _mark_temporal(u, b, loops, defined_in)
                        changed = True
                    continue
                if inst.result is not None and inst.result not in u.divergent and _inst_divergent(u, inst, b):
                    u.divergent.add(inst.result)
                    changed = True
    return u


def _inst_divergent(u: Uniformity, inst: Instruction, b: Block) -> bool:
    op = inst.op
    if op == "sreg":
        return str(inst.attrs.get("name", "")).startswith(DIVERGENT_SREGS)
    if op in UNIFORM_COLLECTIVES:
        return False
    if op in ALWAYS_DIVERGENT:
        return True
    if op in ("ld", "cp_async") and inst.attrs.get("space") in THREAD_PRIVATE_SPACES:
        return True
    if op == "ld" and inst.attrs.get("space") == "param":
        return True  # a .param frame variable (kernel parameters are ld_param): written per thread
    if op == "ld" and inst.attrs.get("space") == "generic":
        return True  # may read thread-private .local memory through its generic window
    return any(u.operand_divergent(a, b) for a in inst.args)


def _phi_divergent(u: Uniformity, phi: Phi, b: Block) -> bool:
    return any(u.operand_divergent(a, p) for a, p in zip(phi.args, b.preds))


def _region(branch: Block, join: Block | str) -> list[Block]:
    """The blocks reachable from ``branch``'s successors without passing ``join`` (join itself included)."""
    seen: list[Block] = []
    marks: set[int] = set()
    work = list(branch.succs)
    while work:
        n = work.pop()
        if id(n) in marks:
            continue
        marks.add(id(n))
        seen.append(n)
        if n is not join:
            work.extend(n.succs)
    return seen


def _mark_sync_dependence(u: Uniformity, branch: Block, ipdom) -> bool:
    changed = False
    for blk in _region(branch, ipdom.get(branch, EXIT)):
        if len(blk.preds) > 1:
            for phi in blk.phis:
                if phi.result not in u.divergent:
                    u.divergent.add(phi.result)
                    changed = True
    return changed


def _mark_temporal(u: Uniformity, branch: Block, loops, defined_in: dict[Value, Block]) -> bool:
    changed = False
    for loop in loops:
        if branch in loop.body and any(s not in loop.body for s in branch.succs):
            for v, blk in defined_in.items():
                if blk in loop.body:
                    bodies = u.escaping.setdefault(v, [])
                    if not any(body is loop.body for body in bodies):
                        bodies.append(loop.body)
                        changed = True
    return changed
