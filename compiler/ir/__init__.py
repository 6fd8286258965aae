"""xcc.ir: the SSA IR shared by every layer (core classes, op table, builder, printer, verifier)."""

from xcc.ir.core import Block, Const, Function, Instruction, Module, Param, Phi, Value, Variable

__all__ = ["Block", "Const", "Function", "Instruction", "Module", "Param", "Phi", "Value", "Variable"]
