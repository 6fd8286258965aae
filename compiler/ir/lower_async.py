"""Lowering of the asynchronous copy and warpgroup instructions (``cp.async``, ``wgmma``) into IR.

A mixin of :class:`xcc.ir.lower.InstLowering`: one ``op_<opcode>`` method per PTX opcode.
"""

from __future__ import annotations


class AsyncLowering:
    pass
