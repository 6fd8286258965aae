"""The cp.async groups of a wave, for both interpreters' executors (PTX ISA 9.0 section 9.7.9.25;
the model is :class:`xcc.semantics.async_copy.CopyGroups`): one :class:`CopyGroups` per wave, kept by the
launch engine, and the executors of ``cp.async.commit_group`` (LDGDEPBAR) and ``cp.async.wait_group`` /
``wait_all`` (DEPBAR)."""

from __future__ import annotations

from collections.abc import Callable

from xcc.semantics.async_copy import CopyGroups

__all__ = ["copy_groups", "commit_executor", "wait_executor"]


def copy_groups(launch, threads: int) -> CopyGroups:
    """The cp.async state of ``launch``'s current wave of ``threads`` slots (a new wave starts with none
    pending)."""
    return launch.wave_state("cp.async", lambda: CopyGroups(threads))


def commit_executor(groups: Callable[[], CopyGroups]):
    """``cp.async.commit_group``: each executing thread closes its open group."""
    return lambda sel, idx, n: groups().commit(idx)


def wait_executor(groups: Callable[[], CopyGroups], keep: int, commit_first: bool = False):
    """``cp.async.wait_group keep`` (``commit_first``: ``wait_all``, a commit then ``wait_group 0``): each
    executing thread performs its copies of every committed group but the ``keep`` most recent."""
    def run(sel, idx, n):
        g = groups()
        if commit_first:
            g.commit(idx)
        g.wait(idx, keep)

    return run
