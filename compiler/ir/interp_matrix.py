"""What the warp-level matrix ops do when interpreted (registered with :func:`xcc.ir.interp_ops.impl`)."""

from __future__ import annotations
