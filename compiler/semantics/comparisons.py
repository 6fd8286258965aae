"""The comparison operators of ``setp``/``set`` (PTX ISA 9.0 sections 9.7.6.1-9.7.6.4), without numpy.

Integer comparisons: eq ne lt le gt ge (signed or unsigned by type) and the explicitly unsigned lo ls hi
hs, aliases of lt le gt ge on unsigned operands.  Float comparisons: the six ordered ones, the unordered
``<c>u`` forms, num and nan.  :func:`xcc.semantics.compare.compare` gives them their meaning; the
frontend reads only the names, so parsing PTX does not import numpy.
"""

from __future__ import annotations

import operator

ORDERED = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
           "gt": operator.gt, "ge": operator.ge}
UNSIGNED_ALIAS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
INT_CMPS = frozenset(ORDERED) | frozenset(UNSIGNED_ALIAS)
FLOAT_CMPS = frozenset(ORDERED) | {c + "u" for c in ORDERED} | {"num", "nan"}
