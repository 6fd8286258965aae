"""Instruction selection for the half IR ops: a mixin of :class:`xcc.backend.isel.InstructionSelector`
(one ``op_<irop>`` method per IR op, as there)."""

from __future__ import annotations


class HalfSelection:
    pass
