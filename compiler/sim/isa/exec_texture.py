"""Executors of the texture and surface instructions (``TEX``, ``TEX.X``, ``TEXLOD``, ``TEXGRAD.SQ``,
``TEXGRAD.CUBE``, ``TEXLOD.SQ``, ``TXQ``, ``TXQ.LEVEL``, ``ISTYPEP``, ``SULD``, ``SULD.64``,
``SUST``, ``SUST.64``, ``SURED``, ``SURED.64``; PTX ISA 9.7.10 - 9.7.11).

Each binds its operands (the handle in the pair a, coordinates x, y in the pair b and z, layer in the pair e)
and calls :mod:`xcc.sim.texture`, the executors the IR interpreter calls, so both engines fetch and store bit
for bit alike.
"""

from __future__ import annotations

import numpy as np

from xcc.sim.isa.exec_base import Binder, impl
from xcc.sim.texture import (
    grad_sq_executor,
    istypep_executor,
    lod_executor,
    lod_sq_executor,
    query_executor,
    suld_executor,
    sured_executor,
    sust_executor,
    tex_executor,
)

_DIMS = {"D1": (1, False), "D2": (2, False), "D3": (3, False), "A1": (1, True), "A2": (2, True), "CUBE": (3, False),
         "ACUBE": (3, True)}
_COMP = {"X": 0, "Y": 1, "Z": 2, "W": 3}
_VEC = {"V1": 1, "V2": 2, "V4": 4}
_SIZE = {"B8": 1, "B16": 2, "B32": 4}


def _half(r, k: int):
    return lambda sel, n: ((np.asarray(r(sel, n), np.uint64) >> np.uint64(32 * k)) & np.uint64(0xFFFFFFFF)
                           ).astype(np.uint32)


def _coords(x: Binder):
    """(coordinate readers x, y, z of the geometry, layer reader or None)."""
    dims, layered = _DIMS[x.mod("dim")]
    b, e = x.w("b"), x.w("e")
    cs = [_half(b, 0), _half(b, 1), _half(e, 0)][:dims]
    return cs, (_half(e, 1) if layered else None)


@impl("TEX")
def _tex(x: Binder):
    coords, layer = _coords(x)
    g = x.mod("gather")
    gather = None if g == "NONE" else "RGBA".index(g)
    what = f"tld4.{g.lower()}" if gather is not None else f"tex.{x.mod('dim').lower()}"
    out, mip = x.mod("out"), x.mod("mip")
    ms = x.flag("MS")
    if ms:  # the sample index in e.lo, the packed texel offsets in c (RZ: none)
        coords = [*coords, _half(x.w("e"), 0)]
        what = f"tex.{'a2dms' if layer is not None else '2dms'}"
    return tex_executor(x.ctx.gmem, x.w("a"), coords, layer, x.mod("ctype") == "S32", _COMP[x.mod("comp")],
                        x.set_r("d"), what, gather, None if out == "B32" else out.lower(),
                        x.r("c") if mip == "LEVEL" else None, mip == "BASE", x.mod("dim") in ("CUBE", "ACUBE"), ms,
                        x.r("c") if ms else None)


@impl("TEX.X")
def _tex_x(x: Binder):
    """TEX with texel offsets (packed, in the coordinate slot the geometry leaves free) and DC's depth compare
    value c.hi; the level of detail c.lo."""
    dim = x.mod("dim")
    coords, layer = _coords(x)
    g = x.mod("gather")
    gather = None if g == "NONE" else "RGBA".index(g)
    what = f"tld4.{g.lower()}" if gather is not None else f"tex.{dim.lower()}"
    out, mip = x.mod("out"), x.mod("mip")
    c, e = x.w("c"), x.w("e")
    offsets = None if dim in ("CUBE", "ACUBE") else _half(e, 1 if dim == "D3" else 0)
    return tex_executor(x.ctx.gmem, x.w("a"), coords, layer, x.mod("ctype") == "S32", _COMP[x.mod("comp")],
                        x.set_r("d"), what, gather, None if out == "B32" else out.lower(),
                        _half(c, 0) if mip == "LEVEL" else None, mip == "BASE", dim in ("CUBE", "ACUBE"), False,
                        offsets, _half(c, 1) if x.flag("DC") else None)


@impl("TEXLOD")
def _texlod(x: Binder):
    k = int(x.mod("dim")[1])
    b, e = x.w("b"), x.w("e")
    return lod_executor(x.ctx.gmem, x.w("a"), [_half(b, i) for i in range(k)], [_half(e, i) for i in range(k)],
                        x.set_r("d"))


@impl("TEXGRAD.SQ")
def _texgrad_sq(x: Binder):
    b = x.w("b")
    return grad_sq_executor(x.ctx.gmem, x.w("a"), [_half(b, 0), _half(b, 1), x.r("c")], x.set_w("d"))


@impl("TEXGRAD.CUBE")
def _texgrad_cube(x: Binder):
    b, c, e = x.w("b"), x.w("c"), x.w("e")
    return grad_sq_executor(x.ctx.gmem, x.w("a"), [_half(c, 1), _half(e, 0), _half(e, 1)], x.set_w("d"),
                            direction=[_half(b, 0), _half(b, 1), _half(c, 0)])


@impl("TEXLOD.SQ")
def _texlod_sq(x: Binder):
    return lod_sq_executor(x.w("b"), x.w("e"), x.set_r("d"))


@impl("TXQ")
def _txq(x: Binder):
    return query_executor(x.ctx.gmem, x.w("a"), x.mod("query").lower(), x.flag("SURF"), x.set_r("d"))


@impl("TXQ.LEVEL")
def _txq_level(x: Binder):
    return query_executor(x.ctx.gmem, x.w("a"), x.mod("query").lower(), False, x.set_r("d"), x.r("c"))


@impl("ISTYPEP")
def _istypep(x: Binder):
    return istypep_executor(x.ctx.gmem, x.w("a"), x.mod("kind").lower(), x.set_p("pd"))


@impl("SULD", "SULD.64")
def _suld(x: Binder):
    coords, layer = _coords(x)
    wide = x.inst.mnemonic == "SULD.64"
    width = 8 if wide else _SIZE[x.mod("size")]
    return suld_executor(x.ctx.gmem, x.w("a"), coords, layer, width, _VEC[x.mod("vec")], _COMP[x.mod("comp")],
                         x.mod("mode").lower(), x.set_w("d") if wide else x.set_r("d"))


@impl("SUST", "SUST.64")
def _sust(x: Binder):
    coords, layer = _coords(x)
    wide = x.inst.mnemonic == "SUST.64"
    width = 8 if wide else _SIZE[x.mod("size")]
    fmt = not wide and x.flag("P")
    return sust_executor(x.ctx.gmem, x.w("a"), coords, layer, width, _VEC[x.mod("vec")], _COMP[x.mod("comp")],
                         x.mod("mode").lower(), x.w("c") if wide else x.r("c"), "sust.p" if fmt else "sust.b", fmt)


@impl("SURED", "SURED.64")
def _sured(x: Binder):
    coords, layer = _coords(x)
    wide = x.inst.mnemonic == "SURED.64"
    t = x.mod("type")
    fmt = x.flag("P")
    return sured_executor(x.ctx.gmem, x.w("a"), coords, layer, x.mod("op").lower(), 8 if wide else 4,
                          "s" if t.startswith("S") else "u", x.mod("mode").lower(), x.w("c") if wide else x.r("c"),
                          "sured.p" if fmt else "sured.b", fmt)
