"""xcc.semantics: the meaning of every operation, once, in numpy.

Each function takes bit patterns as unsigned numpy arrays (one element per
thread that executes together) and returns bit patterns; ``pred`` values are
bool arrays.  The IR's constant folder and interpreter and the xg1 ISA
interpreter all call these functions, so the compiler's layers can never
disagree about what an operation means.  Sources: PTX ISA 9.0, chapter 9
(instruction set); IEEE 754-2019 for floating point.
"""

from xcc.semantics.bits import UDTYPE, as_float, as_signed, as_unsigned, from_float, mask
from xcc.semantics.compare import compare, select
from xcc.semantics.convert import convert
from xcc.semantics.floating import fadd, ffma, fmax, fmin, fmul, fsub, funary
from xcc.semantics.integer import INT_BINARY, iabs, ineg, inot, mad, mul

__all__ = [
    "UDTYPE", "as_float", "as_signed", "as_unsigned", "from_float", "mask",
    "compare", "select", "convert",
    "fadd", "fsub", "fmul", "ffma", "fmin", "fmax", "funary",
    "INT_BINARY", "iabs", "ineg", "inot", "mul", "mad",
]
