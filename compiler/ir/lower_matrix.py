"""Lowering of the warp-level matrix instructions (``mma``, ``ldmatrix``, ``wmma``) into IR.

A mixin of :class:`xcc.ir.lower.InstLowering`: one ``op_<opcode>`` method per PTX opcode.
"""

from __future__ import annotations


class MatrixLowering:
    pass
