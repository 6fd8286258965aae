"""Instruction selection: IR -> xg1 machine instructions on virtual registers.

:class:`InstructionSelector` is the selector: the core of :mod:`xcc.backend.isel_core` (operands, copies,
the driver that calls ``op_<irop>`` for each IR instruction, out of SSA) with the rule groups, one module
each:

==========================  =================================================================
:mod:`.isel_arith`          integer and float arithmetic, logic, shifts, division, MUFU
:mod:`.isel_bits`           bit counts, bit fields, bytes, dot products, mul24
:mod:`.isel_convert`        setp, selp, cvt
:mod:`.isel_memory`         launch values, addresses, ld / st / atom
:mod:`.isel_sync`           terminators, CTA barriers, fences, warp-collective ops
:mod:`.isel_half`           f16 / bf16 arithmetic and conversions, pack / unpack, carry chains
:mod:`.isel_matrix`         mma, ldmatrix, wmma, wgmma, cp.async
:mod:`.isel_hopper`         mbarrier, cp.async.bulk
:mod:`.isel_calls`          the calling convention: calls, returns, the frame, SYSCALL services
:mod:`.isel_tables`         the data the rules look up (IR names -> xg1 modifiers and opcodes)
==========================  =================================================================

Every group extends :class:`~xcc.backend.isel_core.SelectorCore` and imports only it and the tables, so
the modules form no import cycle; this one puts them together.
"""

from __future__ import annotations

from xcc.backend.isel_arith import ArithSelection
from xcc.backend.isel_bits import BitSelection
from xcc.backend.isel_calls import CallSelection
from xcc.backend.isel_convert import ConvertSelection
from xcc.backend.isel_core import MBlock, SelectedFunction, SelectorCore, split_critical_edges, width_of
from xcc.backend.isel_half import HalfSelection
from xcc.backend.isel_hopper import HopperSelection
from xcc.backend.isel_matrix import MatrixSelection
from xcc.backend.isel_memory import MemorySelection
from xcc.backend.isel_sync import SyncSelection
from xcc.backend.isel_tables import COMPLEMENT, FLOAT_CMP, INT_CMP, MIRROR
from xcc.backend.isel_texture import TextureSelection

__all__ = ["COMPLEMENT", "FLOAT_CMP", "INT_CMP", "MIRROR", "InstructionSelector", "MBlock", "SelectedFunction",
           "SelectorCore", "split_critical_edges", "width_of"]


class InstructionSelector(MatrixSelection, HalfSelection, HopperSelection, CallSelection, ArithSelection,
                          BitSelection, ConvertSelection, MemorySelection, SyncSelection, TextureSelection,
                          SelectorCore):
    """The instruction selector of one function: ``InstructionSelector(fn, module_vars).select()``
    (see :class:`~xcc.backend.isel_core.SelectorCore`).  The matrix rules route before the half rules
    (``half_rule``): wmma on .f16 is not half arithmetic."""
