"""JIT hooks: middleware around the runtime's resolution of a kernel to a binary.

    from xcc.runtime import jit_hooks

    def log(request, compile):
        binary = compile()                 # the normal path: a cache hit, or compile and store
        print(request.kernel, request.key[:12], "hit" if request.hit else "compiled")
        return binary                      # or another .xbin of the kernel, used and not stored

    jit_hooks.register(log)                # ... jit_hooks.unregister(log)

A hook ``fn(request, compile) -> bytes`` is called each time the runtime resolves a kernel to a
binary: at ``Module.get_function`` (and ``cuModuleGetFunction``), once per module and kernel, the
kernel named in ``request.kernel``; and at ``load_module`` of a list holding ``.xo`` objects, once for
the whole linked module (``request.kernel`` None, ``request.sources`` the bytes of every input, PTX or
``.xo``).  An ``.xbin`` image is loaded as it is: no hook is called.

Hooks are middleware: the first registered is the outermost, and each one's ``compile`` calls the next
one (the last one's runs the normal path).  ``request.hit`` is set when the normal path returns: True
for a cache hit, False for a compile; None if no hook called ``compile``.  A hook may return the bytes
``compile()`` gave it, or its own ``.xbin`` image, which is used and not stored in the cache; that image
is verified (format, checksum, the kernel asked for) and a bad one is an :class:`ObjectFormatError`
naming the hook and where it is defined.  With no hook registered the runtime builds no request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from xcc.diagnostics import SourceLoc, XccError

__all__ = ["JitRequest", "register", "registered", "run", "unregister"]

Hook = Callable[["JitRequest", Callable[[], bytes]], bytes]
T = TypeVar("T")

_hooks: tuple[Hook, ...] = ()


@dataclass
class JitRequest:
    """What the runtime is resolving: the PTX ``sources`` (bytes, as given), the ``kernel`` (None: a whole
    linked module), the compile ``options`` and ``machine`` (name and ``machine_hash``) as they enter the
    cache ``key``; ``hit`` is set once the normal path has run (True: a cache hit)."""

    sources: tuple[bytes, ...]
    kernel: str | None
    options: dict
    machine: str
    machine_hash: str
    key: str
    hit: bool | None = None


def register(fn: Hook) -> Hook:
    """Add ``fn`` as the innermost hook (it runs after those registered before it); returns ``fn``, so
    this works as a decorator.  Registering a hook twice is an error."""
    global _hooks
    if not callable(fn):
        raise XccError(f"a JIT hook must be callable as fn(request, compile), got {type(fn).__name__}")
    if fn in _hooks:
        raise XccError(f"JIT hook {describe(fn)} is already registered")
    _hooks = (*_hooks, fn)
    return fn


def unregister(fn: Hook) -> None:
    """Remove ``fn``; an error if it is not registered."""
    global _hooks
    if fn not in _hooks:
        raise XccError(f"JIT hook {describe(fn)} is not registered")
    _hooks = tuple(h for h in _hooks if h is not fn)


def registered() -> tuple[Hook, ...]:
    """The hooks, outermost first."""
    return _hooks


def describe(fn) -> str:
    """A hook's name as a user wrote it: ``module.qualname``."""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{getattr(fn, '__module__', None) or '?'}.{name}"


def location(fn) -> SourceLoc | None:
    """Where a hook is defined (its function's first line), if it is Python code."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None) or getattr(type(fn).__call__, "__code__", None)
    return SourceLoc(code.co_filename, code.co_firstlineno) if code is not None else None


def run(request: JitRequest, normal: Callable[[], tuple[bytes, T]], load: Callable[[Any, Hook], T]) -> T:
    """Resolve ``request`` through the hooks: ``normal()`` is the normal path, ``(binary, loaded)``;
    ``load(data, hook)`` loads (and verifies) a binary that ``hook`` returned instead of the one its
    ``compile`` gave it.  Returns the loaded form of what the outermost hook returned."""
    hooks = _hooks
    loaded: dict[int, tuple[Any, T]] = {}  # id(binary) -> (binary, loaded form); the binary kept alive

    def call(i: int) -> bytes:
        if i == len(hooks):
            data, obj = normal()
            loaded[id(data)] = (data, obj)
            return data
        out = hooks[i](request, lambda: call(i + 1))
        known = loaded.get(id(out))
        if known is None or known[0] is not out:
            loaded[id(out)] = (out, load(out, hooks[i]))
        return out

    return loaded[id(call(0))][1]
