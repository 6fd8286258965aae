"""Kernel cases for the half examples (see :mod:`kernel_cases` for the format).

Imported only by ``kernel_cases`` (which adds ``HALF_CASES`` to its lists): import that module, not this one.
"""

from __future__ import annotations

from kernel_cases import KernelCase, Launch  # noqa: F401

HALF_CASES: list[KernelCase] = []
