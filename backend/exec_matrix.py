"""What the matrix ISA instructions do when interpreted (executors registered with
:func:`xcc.backend.exec_ops.impl`; imported by exec_ops before its completeness check)."""

from __future__ import annotations
