"""What an IR instruction may read or write, by PTX state space: the alias rules the memory optimisations share.

Sources: PTX ISA 9.0, section 5.1 ("State Spaces": ``.shared``, ``.local``, ``.param``, ``.const`` and
``.global`` are distinct address spaces) and 6.4.1 ("Generic Addressing": a generic address lies in the
``.shared``, ``.local`` or ``.const`` window, or else is a ``.global`` address; ``.param`` has no generic
window here, :mod:`xcc.sim.memory`), and chapter 8 (the memory consistency model: a ``.volatile``,
``.relaxed`` or ``.acquire`` load is a *strong* operation that must be performed each time; an acquire
load, a fence, a barrier or an atomic orders the loads after it).

The model, as sets of spaces:

* a load of space ``s`` may see a write to space ``w`` when :func:`may_alias` ``(s, w)``: the same space,
  or ``generic`` against ``global``/``shared``/``local``/``generic``;
* ``.const`` is read-only during a launch and kernel parameters (``ld_param``) are immutable: nothing
  invalidates them;
* :func:`clobbers` gives the spaces an instruction may write *or* whose loads it orders (fences,
  barriers, atomics, acquire loads: the CTA's other threads may have written ``.global``/``.shared``
  memory, so loads before it cannot stand in for loads after it), ``.local`` memory is private to the
  thread (only its own stores and calls write it) and ``.param`` is written by ``st.param`` and calls;
* :func:`is_plain_load` is a load that may be merged with an equal one: a weak ``ld`` without
  ``.volatile``/``.relaxed``/``.acquire``/``.sc``/``.mmio`` ordering (``attrs.sem``), ``.cv`` caching
  (``attrs.cache``) or ``.lu`` (``attrs.lu``).

Used by ``gvn`` (redundant loads), ``licm`` (invariant loads) and ``vectorize`` (what lies between two
accesses).
"""

from __future__ import annotations

from xcc.ir.core import Instruction
from xcc.ir.ops import OPS

GENERIC_TARGETS = frozenset({"global", "shared", "local", "generic"})
"""The spaces a generic address may point into (and generic itself)."""

ALL_WRITABLE = frozenset({"global", "shared", "local", "param", "generic"})
SHARED_WITH_OTHER_THREADS = frozenset({"global", "shared"})
"""What other threads may write: what a barrier, fence, atomic or acquire load makes stale (generic loads
too, through :func:`may_alias`; a thread's ``.local`` memory is its own)."""

_NO_MEMORY_EFFECT = frozenset({"br", "cbr", "ret", "exit", "trap", "shfl", "vote", "match", "redux",
                               "activemask"})
_SPACE_WRITES = frozenset({"st", "wmma_store"})
_ORDERING = frozenset({"bar_sync", "bar_arrive", "bar_red", "fence", "cp_async", "cp_async_commit",
                       "cp_async_wait", "wgmma_sync"})
_STRONG = frozenset({"volatile", "relaxed", "acquire", "sc", "mmio"})


def may_alias(a: str, b: str) -> bool:
    """Whether an access to space ``a`` and one to space ``b`` may touch the same byte (``.const`` against a
    write is never: it is read-only)."""
    if a == b:
        return True
    if a == "generic":
        return b in GENERIC_TARGETS
    if b == "generic":
        return a in GENERIC_TARGETS
    return False


def space_of(inst: Instruction) -> str:
    """The state space an access addresses (``generic`` when the instruction names none)."""
    return inst.attrs.get("space", "generic")


def clobbers(inst: Instruction) -> frozenset[str]:
    """The spaces whose earlier loads may no longer be reused after ``inst`` (see the module docstring)."""
    op = inst.op
    if op in _NO_MEMORY_EFFECT or op == "ld_param":
        return frozenset()
    if op == "ld":
        return SHARED_WITH_OTHER_THREADS if inst.attrs.get("sem") in ("acquire", "sc") else frozenset()
    if op in _SPACE_WRITES:
        return frozenset({space_of(inst)})
    if op == "atom":
        return SHARED_WITH_OTHER_THREADS | {space_of(inst)}
    if op in _ORDERING:
        return SHARED_WITH_OTHER_THREADS
    opd = OPS.get(op)
    if opd is not None and not opd.effects:
        return frozenset()  # pure arithmetic, and loads of matrix fragments (they read, write nothing)
    return ALL_WRITABLE  # calls, and any effect not modelled above


def kills(load_space: str, written: frozenset[str]) -> bool:
    """Whether a load of ``load_space`` is made stale by the clobber set ``written``."""
    return any(may_alias(load_space, w) for w in written)


def is_plain_load(inst: Instruction) -> bool:
    """An ``ld`` that may be merged with, or moved to, an equal one (weak, cacheable, not last-use)."""
    at = inst.attrs
    return (inst.op == "ld" and at.get("sem") not in _STRONG and at.get("cache") != "cv" and not at.get("lu")
            and inst.result is not None)


def is_invariant_memory(inst: Instruction) -> bool:
    """A read of memory no instruction changes during a launch: ``ld_param`` and plain ``ld.const``."""
    return inst.op == "ld_param" or (is_plain_load(inst) and space_of(inst) == "const")
