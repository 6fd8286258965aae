"""xcc: a PTX-to-xg1 compiler toolchain, ISA interpreter and JIT runtime.

Import map: ``xcc`` (compiler/), ``xcc.ir``, ``xcc.semantics``, ``xcc.frontend``,
``xcc.passes``, ``xcc.backend``, ``xcc.runtime``.
"""

__version__ = "0.1.0"
