"""Modules and functions: the JIT face of the runtime.

``load_module`` takes PTX (a path, text or bytes; a list is one module) or an
``.xbin`` image.  PTX is compiled lazily, per kernel, at ``get_function``
(:mod:`xcc.runtime.jit`): the content-addressed cache (:mod:`xcc.cache`) is
consulted first, keyed on the PTX bytes as given, the kernel name, the
options, the machine description and xcc's own sources, so a hit costs no
parsing; the JIT hooks (:mod:`xcc.runtime.jit_hooks`) see each resolution.
As with CUDA's lazy loading, a module whose other kernels compile loads and
runs them even when one of its kernels cannot be compiled: the located error
comes when that kernel is fetched.

``engine`` picks what runs a launch: ``"isa"`` (the default) the compiled
microcode on the ISA interpreter, ``"ir"`` the IR interpreter
(:mod:`xcc.runtime.ir_engine`), the PTX semantics oracle: the IR after the
``-O`` pipeline of ``opt_level``, no backend.  Both take the same launch
arguments in the same device memory and return the same :class:`LaunchStats`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from xcc.backend.objfile import KernelImage, ObjectFile
from xcc.diagnostics import LaunchError, XccError
from xcc.driver import CompileOptions, Source, compile_module, kernel_names
from xcc.lto import RelocatableObject, read_input
from xcc.profile.format import module_hash
from xcc.runtime import timeline
from xcc.runtime.device import Device, DeviceArray, default_device
from xcc.runtime.jit import jit_cache, resolve
from xcc.runtime.launch import Function
from xcc.runtime.specialize import Variants
from xcc.runtime.tuning import Tuned, autotune
from xcc.sim.memory import ModuleGlobals

__all__ = ["ENGINES", "Module", "jit_cache", "load_module"]

ENGINES = ("isa", "ir")


class Module:
    specialize = False  # load_module(specialize=True): launch-time specialisation (xcc.runtime.specialize)

    def __init__(self, sources: list[Source] | None, image: ObjectFile | None, options: CompileOptions,
                 device: Device, engine: str = "isa", autotuned: bool = False):
        self.sources = sources
        self.autotuned = autotuned  # launches look for a tuning record of their shape (xcc.runtime.tuning)
        self.image = image
        self.options = options
        self.device = device
        self.engine = engine
        self._ir = None  # the IR module (engine "ir"), built at the first get_function
        self._functions: dict[str, Function] = {}
        self._names: list[str] | None = list(image.kernels) if image is not None else None
        # the module's .global variables: allocated at first use, kept across launches until unload()
        self.globals = ModuleGlobals(device.memory)

    @property
    def function_names(self) -> list[str]:
        if self._names is None:
            self._names = kernel_names(self.sources)
        return list(self._names)

    @timeline.traced("cuModuleGetFunction", "Module.get_function")
    def get_function(self, name: str) -> Function:
        """Kernel ``name``: a :class:`Function` (engine "isa") or an ``IRFunction`` (engine "ir"),
        both launched with ``launch(grid, block, args, shared_mem)``."""
        fn = self._functions.get(name)
        if fn is None:
            fn = (self._ir_function(name) if self.engine == "ir"
                  else Function(self._kernel(name), self.device, self.globals, self._source_of(name)))
            if self.engine == "isa":  # an IRFunction's ``module`` is its IR module
                fn.module = self
            if self.specialize and self.engine == "isa":
                fn.variants = Variants()
            if self.autotuned and self.engine == "isa":
                fn.tuned = Tuned(lookup=True)
            self._functions[name] = fn
        return fn

    def _source_of(self, kernel: str) -> Source | None:
        """The PTX source that defines ``kernel`` (None for an .xbin image)."""
        if self.sources is None:
            return None
        return next((s for s in self.sources if re.search(rf"\.entry\s+{re.escape(kernel)}\s*\(", s.text)),
                    self.sources[0] if len(self.sources) == 1 else None)

    def autotune(self, fn: Function, *args, **options):
        """``fn.autotune(...)`` (:func:`xcc.runtime.tuning.autotune`)."""
        return autotune(fn, *args, **options)

    def _ir_function(self, name: str):
        from xcc.runtime.ir_engine import IRFunction, ir_of_sources

        if self._ir is None:
            self._ir = ir_of_sources(self.sources, self.options.opt_level, self.options.verify)
        return IRFunction(self._ir, name, self.device, self.globals)

    def get_global(self, name: str, dtype=np.uint8) -> DeviceArray:
        """The module-scope ``.global`` or ``.const`` variable ``name`` as a device array of ``dtype``
        (CUDA's ``cuModuleGetGlobal``, CuPy's ``RawModule.get_global``; cudaMemcpyToSymbol writes through
        it): the memory every kernel of the module uses, allocated and initialised now if no launch has
        used it yet.  Constant memory is read-only to kernels: each launch sees what the host wrote
        before it.  The array is a view: it stays valid until :meth:`unload`; do not ``free`` it."""
        table = self._global_variables()
        size, init, relocs = table.get(name, (None, None, ()))
        if size is None:
            known = ", ".join(sorted(self._global_variables())) or "none"
            raise LaunchError(f"no .global or .const variable named '{name}' in the module (it has: {known})")
        itemsize = np.dtype(dtype).itemsize
        if size % itemsize:
            raise LaunchError(f".global variable '{name}' is {size} bytes, not a whole number of {np.dtype(dtype)}")
        return DeviceArray(self.device, (size // itemsize,), dtype,
                           self.globals.address(name, size, init, relocs, table.__getitem__))

    def _global_variables(self) -> dict[str, tuple[int, bytes | None, tuple]]:
        """name -> (size, initial bytes, address relocations) of the module's defined .global variables."""
        if self.image is not None:
            return {g.name: (g.size, bytes.fromhex(g.init) if g.init else None, tuple(tuple(r) for r in g.relocs))
                    for k in self.image.kernels.values() for g in [*k.globals, *k.constants, *k.reloc_globals]}
        from xcc.driver import frontend

        mod = self._ir if self._ir is not None else frontend(self.sources, kernels=[])  # no kernel must build
        return {v.name: (v.size, v.init, v.addr_relocs) for v in mod.variables
                if v.space in ("global", "const") and not v.extern}

    def unload(self) -> None:
        """Free the module's .global variables (``cuModuleUnload``); its functions must not run again."""
        self.globals.free()

    def _kernel(self, name: str) -> KernelImage:
        if self.image is not None:
            if name not in self.image.kernels:
                raise LaunchError(f"no kernel named '{name}' in the module "
                                  f"(it has: {', '.join(sorted(self.image.kernels)) or 'none'})")
            return self.image.kernels[name]
        def build() -> bytes:
            return compile_module(self.sources, self.options, [name], machine=self.device.machine).to_bytes()

        obj = resolve(tuple(s.text.encode() for s in self.sources), name, self.options, self.device.machine, build,
                      ", ".join(s.name for s in self.sources))
        return obj.kernels[name]


@timeline.traced("cuModuleLoadData", "rt.load_module")
def load_module(src, arch: str = "xg1", opt_level: int = 3, max_registers: int = 255,
                device: Device | None = None, engine: str = "isa", passes: str | None = None,
                autotuned: bool = False, profile_use=None, specialize: bool = False) -> Module:
    """Load PTX or an .xbin: ``src`` is a path (str or Path), PTX text, bytes, or a list of these.  A list
    with ``.xo`` relocatable objects (``xcc compile -c``) among its PTX is linked with link-time
    optimisation first, as ``xcc link`` does (:mod:`xcc.lto`).

    ``passes`` is an IR pass pipeline replacing the ``opt_level``'s (as ``xcc compile --passes``).

    ``engine`` is "isa" (compiled code on the ISA interpreter) or "ir" (the IR interpreter; PTX only).

    ``autotuned=True``: a launch whose shape (grid, block, shared memory) has a tuning record in the JIT cache
    (``fn.autotune`` or ``xcc tune``, in any process) runs the tuned binary; other shapes the plain build.

    ``profile_use`` is a profile (``xcc.profile.Profile`` or the path of one, ``res.profile.save``) of this
    module: its kernels are compiled with profile-guided optimisation (docs/profiles.md); a profile of another
    module is an error.  ``specialize=True``: each launch runs a variant compiled for its scalar argument values
    and launch shape (:mod:`xcc.runtime.specialize`).
    """
    if engine not in ENGINES:
        raise XccError(f"unknown engine '{engine}' (known: {', '.join(ENGINES)})")
    device = device or default_device()
    options = CompileOptions(arch=arch, opt_level=opt_level, max_registers=max_registers,
                             machine=device.machine.name, passes=passes, profile_use=profile_use)
    items = src if isinstance(src, list | tuple) else [src]
    read = [read_input(s, f"<ptx {i}>" if len(items) > 1 else "<ptx>") for i, s in enumerate(items)]
    if any(isinstance(r, RelocatableObject) for r in read):
        return _linked_module(read, options, device, engine)
    images = [r for r in read if isinstance(r, bytes)]
    if images:
        if engine == "ir":
            raise LaunchError("the IR interpreter runs PTX, not .xbin images")
        if len(read) != 1:
            raise XccError("an .xbin image cannot be linked with other sources")
        image = ObjectFile.from_bytes(images[0], str(items[0]) if isinstance(items[0], str | Path) else "<xbin>")
        return Module(None, image, options, device)
    if options.profile_use is not None:
        options.profile_use.check_module(module_hash([r.text for r in read]), ", ".join(r.name for r in read))
    module = Module(read, None, options, device, engine, autotuned)
    module.specialize = specialize
    return module


def _linked_module(read: list, options: CompileOptions, device: Device, engine: str) -> Module:
    """A module of ``.xo`` objects and PTX linked with LTO (:func:`xcc.lto.link`): compiled whole at load (the JIT
    cache is keyed on every input's bytes), or for engine "ir" the linked IR after the ``-O`` pipeline."""
    from xcc.driver import optimise
    from xcc.lto import link, link_program

    if any(isinstance(r, bytes) for r in read):
        raise XccError("an .xbin image cannot be linked with other sources")
    if engine == "ir":
        mod = Module(None, None, options, device, engine)
        mod._ir = optimise(link_program(read, options), options)
        mod._names = [f.name for f in mod._ir.functions if f.is_entry]
        return mod
    parts = tuple(r.to_bytes() if isinstance(r, RelocatableObject) else r.text.encode() for r in read)
    names = ", ".join(r.name if isinstance(r, Source) else "an .xo object" for r in read)
    image = resolve(parts, None, options, device.machine,
                    lambda: link(read, options, machine=device.machine).to_bytes(), names, link=True)
    return Module(None, image, options, device)
