"""Illegal memory accesses as PTX defines them (PTX ISA 9.0 section 6.4, "State spaces": an access
must be naturally aligned and inside the state space it names).

:class:`MemoryFault` is what the semantics library and both interpreters' memories raise; each
interpreter turns it into a located :class:`~xcc.diagnostics.KernelFault` naming the instruction.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MemoryFault"]


class MemoryFault(Exception):
    """An illegal device memory access (or a bad host-side memory call).

    ``kind`` is ``'misaligned'``, ``'out-of-bounds'``, ``'freed'`` (use after
    free), ``'double-free'`` or ``'invalid-free'``; ``addresses`` holds every
    offending address in thread order, ``address`` the first; ``thread`` is the
    index (into the address array) of the first offending thread, ``None`` for
    host-side calls.
    """

    def __init__(self, kind: str, addresses, thread: int | None, *, width: int = 0,
                 space: str = "global", detail: str = ""):
        self.kind = kind
        self.addresses = np.atleast_1d(np.asarray(addresses, dtype=np.uint64))
        self.address = int(self.addresses[0])
        self.thread = thread
        self.width = width
        self.space = space
        what = f"{width}-byte {space} access" if width else f"{space} memory call"
        msg = f"{kind} {what} at address {self.address:#x}"
        if thread is not None:
            msg += f" (thread {thread}"
            if self.addresses.size > 1:
                msg += f"; {self.addresses.size} threads faulted"
            msg += ")"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)
