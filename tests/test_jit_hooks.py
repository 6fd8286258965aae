"""JIT hooks (xcc.runtime.jit_hooks): middleware around each resolution of a kernel to a binary."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.objfile import ObjectFile
from xcc.diagnostics import ObjectFormatError, XccError
from xcc.driver import CompileOptions, compile_module, read_source
from xcc.runtime import JitRequest, jit, jit_hooks

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import EXAMPLES_DIR  # noqa: E402

SAXPY = EXAMPLES_DIR / "saxpy.sm_80.ptx"


@pytest.fixture(autouse=True)
def fresh_jit(monkeypatch):
    """The runtime's cache reopened in this test's XCC_CACHE_DIR; no hook left registered afterwards."""
    monkeypatch.setattr(jit, "_cache", None)
    yield
    for hook in jit_hooks.registered():
        jit_hooks.unregister(hook)


class Recorder:
    """A hook that records each request and whether it was a hit, and returns what compile() gave."""

    def __init__(self, log: list | None = None, name: str = "rec"):
        self.requests: list[JitRequest] = []
        self.log, self.name = log if log is not None else [], name

    def __call__(self, request, compile):
        self.log.append(f"{self.name} in")
        binary = compile()
        self.log.append(f"{self.name} out")
        self.requests.append(request)
        return binary


def run_saxpy(fn, n=64):
    x = np.arange(n, dtype=np.float32)
    d_x, d_y = rt.to_device(x), rt.to_device(np.ones(n, np.float32))
    fn.launch(1, 64, (np.int32(n), np.float32(2), d_x, d_y))
    return d_y.copy_to_host()


def test_a_hook_sees_a_cold_compile_then_a_hit_with_the_key():
    rec = jit_hooks.register(Recorder())
    rt.load_module(SAXPY).get_function("saxpy")
    rt.load_module(SAXPY).get_function("saxpy")
    cold, warm = rec.requests
    assert (cold.hit, warm.hit) == (False, True)
    assert cold.kernel == "saxpy" and cold.sources == (SAXPY.read_bytes(),)
    assert cold.machine == "xg1" and len(cold.machine_hash) == 64
    assert cold.options["opt_level"] == 3
    assert cold.key == warm.key and len(cold.key) == 64
    assert rt.load_module(SAXPY, opt_level=1).get_function("saxpy") and rec.requests[-1].key != cold.key


def test_once_per_module_and_kernel():
    rec = jit_hooks.register(Recorder())
    mod = rt.load_module(SAXPY)
    mod.get_function("saxpy")
    mod.get_function("saxpy")
    assert len(rec.requests) == 1


def test_a_hook_returns_its_own_binary_which_is_used_and_not_stored():
    own = compile_module([read_source(SAXPY)], CompileOptions(opt_level=0)).to_bytes()

    def replace(request, compile):
        return own

    jit_hooks.register(replace)
    fn = rt.load_module(SAXPY).get_function("saxpy")
    assert fn.kernel.code == ObjectFile.from_bytes(own).kernels["saxpy"].code
    np.testing.assert_array_equal(run_saxpy(fn), np.arange(64, dtype=np.float32) * 2 + 1)
    assert jit.jit_cache().stats()["entries"] == 0  # compile() never called: nothing compiled or stored
    jit_hooks.unregister(replace)
    rec = jit_hooks.register(Recorder())
    rt.load_module(SAXPY).get_function("saxpy")
    assert rec.requests[0].hit is False


def test_hooks_are_middleware_first_registered_outermost():
    log: list[str] = []
    outer, inner = Recorder(log, "outer"), Recorder(log, "inner")
    jit_hooks.register(outer)
    jit_hooks.register(inner)
    assert jit_hooks.registered() == (outer, inner)
    rt.load_module(SAXPY).get_function("saxpy")
    assert log == ["outer in", "inner in", "inner out", "outer out"]
    assert outer.requests[0] is inner.requests[0]


def test_unregister_and_registration_errors():
    rec = jit_hooks.register(Recorder())
    jit_hooks.unregister(rec)
    rt.load_module(SAXPY).get_function("saxpy")
    assert rec.requests == [] and jit_hooks.registered() == ()
    with pytest.raises(XccError, match="is not registered"):
        jit_hooks.unregister(rec)
    jit_hooks.register(rec)
    with pytest.raises(XccError, match="already registered"):
        jit_hooks.register(rec)
    with pytest.raises(XccError, match="must be callable"):
        jit_hooks.register("not a function")


def test_a_bad_binary_from_a_hook_is_a_located_error():
    good = compile_module([read_source(SAXPY)], CompileOptions()).to_bytes()

    def corrupt(request, compile):
        data = bytearray(compile())
        data[len(data) // 2] ^= 0xFF
        return bytes(data)

    jit_hooks.register(corrupt)
    with pytest.raises(ObjectFormatError) as err:
        rt.load_module(SAXPY).get_function("saxpy")
    text = str(err.value)
    assert "JIT hook test_jit_hooks.test_a_bad_binary_from_a_hook_is_a_located_error.<locals>.corrupt" in text
    assert "checksum mismatch" in text and "kernel 'saxpy'" in text
    assert err.value.loc.file == __file__
    jit_hooks.unregister(corrupt)

    def wrong_type(request, compile):
        return "text"

    def other_kernel(request, compile):
        obj = ObjectFile.from_bytes(good)
        obj.kernels = {"other": dataclasses.replace(obj.kernels["saxpy"], name="other")}
        return obj.to_bytes()

    jit_hooks.register(wrong_type)
    with pytest.raises(XccError, match="returned str, not the bytes of an .xbin image"):
        rt.load_module(SAXPY).get_function("saxpy")
    jit_hooks.unregister(wrong_type)
    jit_hooks.register(other_kernel)
    with pytest.raises(ObjectFormatError, match=r"without kernel 'saxpy' \(it has: other\)"):
        rt.load_module(SAXPY).get_function("saxpy")


def test_an_inner_hooks_substitute_reaches_the_outer_hook_verified():
    own = compile_module([read_source(SAXPY)], CompileOptions(opt_level=0)).to_bytes()
    seen = []

    def outer(request, compile):
        seen.append(compile())
        return seen[-1]

    jit_hooks.register(outer)
    jit_hooks.register(lambda request, compile: own)
    fn = rt.load_module(SAXPY).get_function("saxpy")
    assert seen == [own] and fn.kernel.code == ObjectFile.from_bytes(own).kernels["saxpy"].code


def test_the_linked_path_is_resolved_once_for_the_whole_module(tmp_path):
    from xcc.cli import main

    xo = tmp_path / "saxpy.xo"
    assert main(["compile", "-c", str(SAXPY), "-o", str(xo)]) == 0
    rec = jit_hooks.register(Recorder())
    mod = rt.load_module([xo])
    assert len(rec.requests) == 1 and rec.requests[0].kernel is None and rec.requests[0].hit is False
    assert rec.requests[0].options.get("link") is True
    mod.get_function("saxpy")
    assert len(rec.requests) == 1
    rt.load_module([xo])
    assert rec.requests[-1].hit is True
