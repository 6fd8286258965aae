"""Instruction selection for the matrix IR ops: a mixin of :class:`xcc.backend.isel.InstructionSelector`
(one ``op_<irop>`` method per IR op, as there)."""

from __future__ import annotations


class MatrixSelection:
    pass
