"""A profile mapped onto the IR for the passes: what each branch, loop and call did, found by PTX position.

The driver (:func:`apply_profile`) checks the profile is of the module being compiled, clones each profiled
kernel behind a check of the argument values it always had (:func:`xcc.passes.specialize.guarded_clone`), and
hangs a :class:`ProfileIndex` on every function of the module (``fn.profile_index``).  Passes look up the
instruction they are deciding about there, by its ``loc`` (file and line), at the time they decide, so the
lookup survives the passes that ran before them:

* ``unroll``: a loop with no known trip count whose back edge never diverged is unrolled by the profile's mean
  trip count (2..8);
* ``ifconvert``: a branch that diverged in at least a tenth of its warps is converted with a larger budget, one
  that never diverged and is biased is left alone;
* ``pipeline-loads``: a single-block loop whose instructions waited on memory and whose mean trip count is at
  least 2 issues its loads that many iterations ahead, less one (at most ``max-distance``); a kernel that then
  spills is built again without it and the build with fewer spill bytes kept (:func:`xcc.driver.compile_ir`);
* ``inline``: a call that ran gets a four times higher threshold, one that never ran is not inlined;
* block layout (:func:`xcc.passes.block_layout.layout_blocks`, after the pipeline): the likelier successor of
  each branch falls through, blocks that never ran go last.
"""

from __future__ import annotations

from xcc.ir.core import Const, Function, Instruction, Module
from xcc.ir.ops import PURE_OPS
from xcc.passes.specialize import SPECIALISABLE_SIZES, guarded_clone, shape_registers
from xcc.profile.format import Profile, decode_value

MIN_UNROLL, MAX_UNROLL = 2, 8
DIVERGENT_SHARE = 0.1  # a branch diverging in at least this share of its warps is if-converted more eagerly
HOT_INLINE_FACTOR = 4


class ProfileIndex:
    """One kernel's profile, indexed by PTX position (file, line)."""

    def __init__(self, kernel: dict):
        self.kernel = kernel
        self.branches: dict[tuple[str, int], list[int]] = {}
        for b in kernel["branches"]:
            acc = self.branches.setdefault((b["file"], b["line"]), [0, 0, 0])
            acc[0] += b["taken"]
            acc[1] += b["not_taken"]
            acc[2] += b["divergent"]
        self.loops: dict[tuple[str, int], list[int]] = {}
        for lp in kernel["loops"]:
            acc = self.loops.setdefault((lp["file"], lp["line"]), [0, 0])
            acc[0] += lp["entries"]
            acc[1] += lp["iterations"]
        self.pipelining = True  # False: pipeline_distance is 0 everywhere (the driver's build without it)
        self.memory_waits: dict[tuple[str, int], int] = {}
        for st in kernel.get("stalls", ()):
            key = (st["file"], st["line"])
            self.memory_waits[key] = self.memory_waits.get(key, 0) + st["reasons"].get("long_scoreboard", 0)
        self.calls: dict[tuple[str, int], int] = {}
        for c in kernel["calls"]:
            key = (c["file"], c["line"])
            self.calls[key] = self.calls.get(key, 0) + c["warps"]

    @staticmethod
    def _key(inst: Instruction | None):
        return (inst.loc.file, inst.loc.line) if inst is not None and inst.loc is not None else None

    def branch(self, inst: Instruction) -> tuple[int, int, int] | None:
        """(warps all taken, all not taken, divergent) of the PTX branch ``inst`` came from, or None."""
        r = self.branches.get(self._key(inst))
        return tuple(r) if r is not None else None

    def trip_count(self, latch_branch: Instruction) -> float | None:
        """Mean iterations per entry of the loop whose back edge ``latch_branch`` is, or None (not profiled)."""
        r = self.loops.get(self._key(latch_branch))
        return r[1] / r[0] if r is not None and r[0] > 0 else None

    def call_warps(self, call: Instruction) -> int | None:
        """Warps that executed ``call`` (None: the profile does not know the call)."""
        return self.calls.get(self._key(call))

    def unroll_factor(self, latch_branch: Instruction) -> int | None:
        """The profile's mean trip count (2..8) for a loop whose back edge never diverged; None otherwise: the
        copies keep their exit tests, and a divergent test costs a reconvergence barrier in every copy."""
        t, r = self.trip_count(latch_branch), self.branch(latch_branch)
        if t is None or t < MIN_UNROLL or (r is not None and r[2]):
            return None
        return min(MAX_UNROLL, int(round(t)))

    def waits_on_memory(self, insts: list[Instruction]) -> bool:
        """Whether the cycle model saw warps wait on a long-scoreboard dependence (a global or local load's
        result) at the PTX line of one of ``insts``."""
        return any(self.memory_waits.get(self._key(i), 0) > 0 for i in insts)

    def pipeline_distance(self, latch_branch: Instruction, insts: list[Instruction], most: int) -> int:
        """Iterations ahead to issue the loads of the loop whose back edge ``latch_branch`` is: the profile's mean
        trip count less one (at most ``most``) when ``insts`` (the loop's) waited on memory; 0 otherwise."""
        t = self.trip_count(latch_branch)
        if not self.pipelining or t is None or t < MIN_UNROLL or not self.waits_on_memory(insts):
            return 0
        return max(1, min(most, int(round(t)) - 1))

    def divergent(self, inst: Instruction) -> bool | None:
        r = self.branch(inst)
        if r is None or not sum(r):
            return None
        return r[2] >= DIVERGENT_SHARE * sum(r)


def single_values(kernel: dict, fn: Function) -> tuple[dict[str, int | float], dict[str, int]]:
    """The scalar parameters of ``fn`` that had one value in every profiled launch (param -> that value) and,
    when every launch had one shape, its ``%ntid``/``%nctaid`` registers; only those worth folding
    (:func:`worth_folding`)."""
    by_name = {p.name: p for p in fn.params}
    values = {}
    for name, a in kernel["args"].items():
        p = by_name.get(name)
        if p is not None and p.size in SPECIALISABLE_SIZES and len(a["values"]) == 1 and a["other"] == 0 \
                and worth_folding(fn, lambda i, p=p: i.op == "ld_param"
                                  and p.offset <= i.attrs.get("offset", 0) < p.offset + p.size):
            values[name] = decode_value(a["values"][0][0])
    registers = {}
    if len(kernel["shapes"]) == 1:
        s = kernel["shapes"][0]
        for name, v in shape_registers((tuple(s["grid"]), tuple(s["block"]))).items():
            if worth_folding(fn, lambda i, name=name: i.op == "sreg" and i.attrs.get("name") == name):
                registers[name] = v
    return values, registers


FOLDS_WELL = frozenset({"div", "rem", "shl", "shr"})


def _known(fn: Function, defines) -> set:
    """The values that would be compile-time constants if the values ``defines(inst)`` picks out were (pure
    arithmetic of constants; phis whose operands all are, found optimistically, so a counter stepping from a known
    start by a known step towards a known bound is known)."""
    insts = [i for i in fn.instructions() if i.result is not None]
    phis = [p for b in fn.blocks for p in b.phis]
    known = {i.result for i in insts if defines(i) or i.op in PURE_OPS} | {p.result for p in phis}
    ok = lambda a: isinstance(a, Const) or a in known  # noqa: E731
    changed = True
    while changed:
        changed = False
        for i in insts:
            if i.result in known and not defines(i) and not all(ok(a) for a in i.args):
                known.discard(i.result)
                changed = True
        for p in phis:
            if p.result in known and not all(ok(a) for a in p.args):
                known.discard(p.result)
                changed = True
    return known


def worth_folding(fn: Function, defines) -> bool:
    """Whether a constant for the values ``defines(inst)`` picks out pays: with it (and not without) a branch's
    condition becomes a constant (a dead branch, or a loop with a known trip count: unrolling, no exit tests) or a
    divisor or shift amount does (a division by a constant becomes a multiplication).  A value that only takes part
    in a bounds check against a thread index (``if (i < n)``) does not pay for the check in front of the clone."""
    after = _known(fn, defines)
    if not any(defines(i) for i in fn.instructions()):
        return False
    before = _known(fn, lambda i: False)
    gained = after - before
    for i in fn.instructions():
        if (i.op == "cbr" and i.args[0] in gained) or (i.op in FOLDS_WELL and i.args[-1] in gained):
            return True
    return False


def apply_profile(module: Module, kernels: list[Function], profile: Profile, texts_hash: str | None = None,
                  what: str = "the module", specialise_values: bool = True) -> dict[str, dict]:
    """Check ``profile`` belongs to the module (when ``texts_hash`` is given), clone the profiled ``kernels``
    behind checks of their single-valued arguments and index the profile on every function.  Returns kernel
    -> the values specialised on."""
    if texts_hash is not None:
        profile.check_module(texts_hash, what)
    specialised = {}
    indexes = {}
    for fn in kernels:
        k = profile.kernels.get(fn.name)
        if k is None:
            continue
        indexes[fn.name] = ProfileIndex(k)
        values, registers = single_values(k, fn) if specialise_values else ({}, {})
        if guarded_clone(fn, values, registers):
            specialised[fn.name] = {**values, **{f"%{r}": v for r, v in registers.items()}}
    if indexes:  # device functions run inside some kernel: they see the merged index of all profiled kernels
        merged = ProfileIndex({"branches": [r for n in sorted(indexes) for r in profile.kernels[n]["branches"]],
                               "loops": [r for n in sorted(indexes) for r in profile.kernels[n]["loops"]],
                               "calls": [r for n in sorted(indexes) for r in profile.kernels[n]["calls"]]})
        for fn in module.functions:
            fn.profile_index = indexes.get(fn.name, merged)
    return specialised
