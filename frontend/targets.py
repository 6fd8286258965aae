"""PTX targets and ISA versions: what a ``.target`` line means and which ``.version`` it needs.

Sources: PTX ISA 9.0, section 11.3 (".target"), and its release-history table; the minimum
PTX version of each target is the one LLVM's NVPTX backend uses (``NVPTX.td``), which follows
that table. A target ``sm_NN`` runs PTX written for any ``sm_MM`` with MM <= NN (the onion
model); ``sm_NNa`` adds architecture-specific features that only that exact architecture has;
``sm_NNf`` adds the features of its family (PTX ISA 8.8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The newest PTX ISA version this xcc reads: CUDA 13.0 writes 9.0; Triton 3.9 with its bundled
# ptxas 13.4 writes 9.4.
NEWEST_PTX = (9, 4)

# Minimum PTX ISA version for each real architecture (NVPTX.td ``Proc`` records).
_MIN_PTX = {
    20: (2, 0), 21: (2, 0), 30: (3, 0), 32: (4, 0), 35: (3, 1), 37: (4, 1), 50: (4, 0), 52: (4, 1),
    53: (4, 2), 60: (5, 0), 61: (5, 0), 62: (5, 0), 70: (6, 0), 72: (6, 1), 75: (6, 3), 80: (7, 0),
    86: (7, 1), 87: (7, 4), 88: (9, 0), 89: (7, 8), 90: (7, 8), 100: (8, 6), 101: (8, 6), 103: (8, 8),
    110: (9, 0), 120: (8, 7), 121: (8, 8),
}
_MIN_PTX_ARCH_SPECIFIC = {90: (8, 0), 100: (8, 6), 101: (8, 6), 103: (8, 8), 110: (9, 0), 120: (8, 7),
                          121: (8, 8)}
_TARGET_OPTIONS = frozenset({"texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"})
_SM = re.compile(r"sm_(\d+)([af]?)")


@dataclass(frozen=True)
class Target:
    """The architecture of a module: ``sm_90a`` -> sm=90, suffix='a'."""

    sm: int
    suffix: str = ""
    debug: bool = False

    @property
    def name(self) -> str:
        return f"sm_{self.sm}{self.suffix}"

    def supports(self, sm: int, arch_specific: bool = False) -> bool:
        """Can code for this target use a feature introduced in ``sm_<sm>``?

        An architecture-specific feature (``arch_specific``, e.g. wgmma on sm_90a) needs exactly
        that architecture with the 'a' suffix, or a family target ('f') of the same major."""
        if arch_specific:
            if self.suffix == "a":
                return self.sm == sm
            return self.suffix == "f" and self.sm // 10 == sm // 10 and self.sm >= sm
        return self.sm >= sm


def parse_version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def min_ptx_version(sm: int, suffix: str) -> tuple[int, int] | None:
    """The oldest PTX ISA version that knows ``sm_<sm><suffix>``; None for an unknown target."""
    if suffix == "f":
        return (8, 8) if sm in _MIN_PTX and sm >= 100 else None
    if suffix == "a":
        return _MIN_PTX_ARCH_SPECIFIC.get(sm)
    return _MIN_PTX.get(sm)


def parse_target(names: list[str]) -> tuple[Target | None, list[str]]:
    """(the architecture, problems) of a ``.target`` line's names."""
    arch, problems, debug = None, [], False
    for name in names:
        m = _SM.fullmatch(name)
        if m:
            if arch is not None:
                problems.append(f"'.target' names two architectures ({arch.name} and {name})")
            arch = Target(int(m.group(1)), m.group(2))
            if min_ptx_version(arch.sm, arch.suffix) is None:
                problems.append(f"unknown target architecture '{name}'")
        elif name == "debug":
            debug = True
        elif name not in _TARGET_OPTIONS:
            problems.append(f"unknown '.target' option '{name}'")
    if arch is not None and debug:
        arch = Target(arch.sm, arch.suffix, True)
    return arch, problems


__all__ = ["NEWEST_PTX", "Target", "min_ptx_version", "parse_target", "parse_version"]
