"""Launch-time specialisation (``rt.load_module(src, specialize=True)``): a variant per argument values and shape.

On the first launch of a kernel with given scalar argument values (those passed as numpy scalars of 4 or 8 bytes;
device arrays and plain integer addresses are never specialised on) and launch shape (grid, block), a variant is
compiled with them folded in as constants (``CompileOptions.specialize`` and ``launch_shape``,
:mod:`xcc.passes.specialize`): trip counts become known, divisions by them constant, loops unroll, branches on
flags disappear.  Variants go through the JIT cache like any build (their key holds the values and the shape), so
another process, or a later launch after eviction, finds them there.  Each function keeps at most
:data:`MAX_VARIANTS` in memory, least recently used evicted (Proteus, CGO 2025, does the same on NVIDIA and AMD
GPUs, there by LLVM IR JIT).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from xcc.backend.objfile import KernelImage
from xcc.driver import compile_module
from xcc.runtime.jit import resolve
from xcc.runtime.profiling import module_of, scalar_arguments

MAX_VARIANTS = 8
"""Variants kept per function in memory (the JIT cache on disk keeps every one)."""


class Variants:
    """The specialised builds of one function, by (argument values, grid, block)."""

    def __init__(self, limit: int = MAX_VARIANTS):
        self.limit = limit
        self.cache: OrderedDict[tuple, KernelImage] = OrderedDict()
        self.builds = 0  # variants resolved (compiled or found in the JIT cache)

    def kernel_for(self, function, grid, block, args) -> KernelImage:
        """The variant of ``function`` for these argument values and launch shape (resolved at first use)."""
        values = {n: v for n, (_, v) in scalar_arguments(function.kernel.params, args).items()}
        key = (tuple(sorted((n, v.hex() if isinstance(v, float) else v) for n, v in values.items())),
               tuple(grid), tuple(block))
        k = self.cache.get(key)
        if k is not None:
            self.cache.move_to_end(key)
            return k
        module = module_of(function)
        options = replace(module.options, specialize=values or None, launch_shape=(tuple(grid), tuple(block)))
        name = function.name

        def build() -> bytes:
            return compile_module(module.sources, options, [name], machine=module.device.machine).to_bytes()

        obj = resolve(tuple(s.text.encode() for s in module.sources), name, options, module.device.machine, build,
                      ", ".join(s.name for s in module.sources))
        k = self.cache[key] = obj.kernels[name]
        self.builds += 1
        while len(self.cache) > self.limit:
            self.cache.popitem(last=False)
        return k
