"""PTX fundamental types as the IR sees them.

A value of any type is held as its bit pattern: ``pred`` as a bool, every
other type as an unsigned integer of its width (``f32`` as the 32 bits of the
IEEE single).  The interpretation (signed, unsigned, float) belongs to the
operation, as in PTX.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScalarType:
    name: str
    bits: int
    kind: str  # 'b' untyped bits, 'u' unsigned, 's' signed, 'f' float, 'pred'

    @property
    def bytes(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"

    def __str__(self) -> str:
        return self.name


TYPES: dict[str, ScalarType] = {
    "pred": ScalarType("pred", 1, "pred"),
    **{f"{k}{w}": ScalarType(f"{k}{w}", w, k) for k in "bus" for w in (8, 16, 32, 64)},
    "f16": ScalarType("f16", 16, "f"),
    "bf16": ScalarType("bf16", 16, "f"),
    "f32": ScalarType("f32", 32, "f"),
    "f64": ScalarType("f64", 64, "f"),
    "f16x2": ScalarType("f16x2", 32, "b"),
    "bf16x2": ScalarType("bf16x2", 32, "b"),
    "b128": ScalarType("b128", 128, "b"),
}

PRED = TYPES["pred"]


# The opaque types of texture, sampler and surface references (PTX ISA 9.0 section 5.3): a kernel parameter or
# a module variable of one holds a 64-bit handle (xcc.ir.lower_texture).
OPAQUE = frozenset({"texref", "samplerref", "surfref"})


def ptx_type(name: str) -> ScalarType:
    """The :class:`ScalarType` named ``name`` ('u32', 'f32', 'pred', ...); an opaque type's is ``u64``."""
    return TYPES["u64" if name in OPAQUE else name]


def is_type_name(name: str) -> bool:
    return name in TYPES


def register_type(t: ScalarType) -> ScalarType:
    """The type a register of ``t`` holds: PTX widens 8-bit registers' arithmetic to 16 bits
    only in ``cvt``; xcc keeps sub-word values zero/sign-extended in 32-bit registers."""
    return t


def bits_type(bits: int) -> ScalarType:
    return TYPES[f"b{bits}"]
