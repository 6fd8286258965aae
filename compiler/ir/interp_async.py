"""What the asynchronous copy and warpgroup ops do when interpreted (registered with
:func:`xcc.ir.interp_ops.impl`)."""

from __future__ import annotations
