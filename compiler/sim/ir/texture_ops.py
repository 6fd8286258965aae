"""What the texture and surface ops do when interpreted (registered with :func:`xcc.sim.ir.ops.impl`):
``tex``, ``tex_lod``, ``txq``, ``istypep``, ``suld``, ``sust``, ``sured`` (meaning: :mod:`xcc.semantics.texture`, applied by
:mod:`xcc.sim.texture`, the executors the xg1 interpreter's TEX/SULD/SUST/SURED/TXQ/ISTYPEP rows call too)."""

from __future__ import annotations

from xcc.sim.ir.ops import OpBinder, impl
from xcc.sim.texture import (
    cube_lod_executor,
    istypep_executor,
    lod_executor,
    query_executor,
    suld_executor,
    sured_executor,
    sust_executor,
    tex_executor,
)


def _geometry(x: OpBinder, last: int | None = None):
    """(layer reader or None, coordinate readers) of args 1 .. (before ``last``)."""
    layered = bool(x.attrs.get("layered"))
    n = len(x.inst.args) if last is None else last
    readers = [x.arg(i) for i in range(1, n)]
    return (readers[0], readers[1:]) if layered else (None, readers)


@impl("tex")
def _tex(x: OpBinder):
    mip = x.attrs.get("mip")
    off, dc = bool(x.attrs.get("off")), bool(x.attrs.get("dc"))
    end = len(x.inst.args) - off - dc  # after the coordinates (and the level of detail): offsets, depth compare
    layer, coords = _geometry(x, end - 1 if mip == "level" else end)
    g = x.attrs.get("gather")
    ms = bool(x.attrs.get("ms"))
    what = f"tld4.{'rgba'[int(g)]}" if g is not None else f"tex.{x.attrs['dim']}{'ms' if ms else ''}"
    return tex_executor(x.launch.gmem, x.arg(0), coords, layer, x.attrs["ctype"] == "s32", int(x.attrs["comp"]),
                        x.set(), what, None if g is None else int(g), x.attrs.get("half"),
                        x.arg(end - 1) if mip == "level" else None, mip == "base",
                        x.attrs["dim"] in ("cube", "acube"), ms, x.arg(end) if off else None,
                        x.arg(end + off) if dc else None)


@impl("tex_lod")
def _tex_lod(x: OpBinder):
    if x.attrs.get("cube"):  # the direction, then the two gradients (three elements each)
        a = [x.arg(i) for i in range(1, 10)]
        return cube_lod_executor(x.launch.gmem, x.arg(0), a[0:3], a[3:6], a[6:9], x.set())
    k = (len(x.inst.args) - 1) // 2
    return lod_executor(x.launch.gmem, x.arg(0), [x.arg(1 + i) for i in range(k)],
                        [x.arg(1 + k + i) for i in range(k)], x.set())


@impl("txq")
def _txq(x: OpBinder):
    return query_executor(x.launch.gmem, x.arg(0), str(x.attrs["query"]), bool(x.attrs.get("surface")), x.set(),
                          x.arg(1) if len(x.inst.args) > 1 else None)


@impl("istypep")
def _istypep(x: OpBinder):
    return istypep_executor(x.launch.gmem, x.arg(0), str(x.attrs["kind"]), x.set())


@impl("suld")
def _suld(x: OpBinder):
    layer, coords = _geometry(x)
    at = x.attrs
    return suld_executor(x.launch.gmem, x.arg(0), coords, layer, int(at["width"]), int(at["vec"]), int(at["comp"]),
                         str(at["mode"]), x.set())


@impl("sust")
def _sust(x: OpBinder):
    last = len(x.inst.args) - 1
    layer, coords = _geometry(x, last)
    at = x.attrs
    return sust_executor(x.launch.gmem, x.arg(0), coords, layer, int(at["width"]), int(at["vec"]), int(at["comp"]),
                         str(at["mode"]), x.arg(last), "sust.p" if at.get("formatted") else "sust.b",
                         bool(at.get("formatted")))


@impl("sured")
def _sured(x: OpBinder):
    last = len(x.inst.args) - 1
    layer, coords = _geometry(x, last)
    at = x.attrs
    fmt = bool(at.get("formatted"))
    return sured_executor(x.launch.gmem, x.arg(0), coords, layer, str(at["redop"]), int(at["width"]),
                          str(at["etype"])[0], str(at["mode"]), x.arg(last), "sured.p" if fmt else "sured.b", fmt)
