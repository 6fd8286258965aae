"""Texture and surface instructions for both interpreters' executors (``tex``, ``tld4``, ``txq``, ``suq``,
``istypep``, ``suld.b``, ``sust.b``, ``sured.b``; PTX ISA 9.7.10 - 9.7.11): each thread's handle is the global
address of a descriptor that :mod:`xcc.semantics.texture` decodes and applies, so the IR interpreter and the
xg1 interpreter fetch bit for bit alike.  A handle that is not a live object of the right kind is a located
fault naming the instruction (a :class:`MemoryFault` where its address is not mapped).
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import texture as TX
from xcc.semantics.faults import MemoryFault
from xcc.sim.waves import ExecFault

__all__ = ["cube_lod_executor", "grad_sq_executor", "istypep_executor", "lod_executor", "lod_sq_executor",
           "query_executor", "suld_executor", "sured_executor", "sust_executor", "tex_executor"]

_WORDS = np.arange(16, dtype=np.uint64) * np.uint64(8)


def _vals(r, sel, n, dtype=np.uint64) -> np.ndarray:
    return np.broadcast_to(np.asarray(r(sel, n)), (n,)).astype(dtype)


def _reader(gmem, i: int):
    def read(address: int, nbytes: int) -> bytes:
        try:
            raw = gmem.load(np.arange(address, address + nbytes, dtype=np.uint64), 1)
        except MemoryFault as f:
            f.thread = i
            raise
        return np.asarray(raw, np.uint8).tobytes()
    return read


def _descriptors(what: str, gmem, handle, sel, n, want: str | None) -> list[dict]:
    """Each thread's decoded descriptor; ``want``: 'texref' or 'surfref' (None: either); a texture handle that
    carries an independent-mode sampler (:func:`xcc.semantics.texture.split_handle`) reads as it says."""
    h = _vals(handle, sel, n)
    out = []
    for i in range(n):
        addr, sampler = TX.split_handle(int(h[i])) if want == "texref" else (int(h[i]), None)
        try:
            words = gmem.load(np.uint64(addr) + _WORDS, 8)
        except MemoryFault as f:
            f.thread = i
            raise
        try:
            d = TX.decode(np.asarray(words, np.uint64))
        except TX.TextureError:
            obj = {"texref": "texture", "surfref": "surface"}.get(want, "texture or surface")
            raise ExecFault(f"{what}: handle {int(h[i]):#x} is not a live {obj} object", i) from None
        if want is not None and d["surface"] != (want == "surfref"):
            kind = "surface" if d["surface"] else "texture"
            raise ExecFault(f"{what}: handle {int(h[i]):#x} is a {kind} object", i)
        if sampler is not None:
            try:
                d = TX.with_sampler(d, sampler)
            except TX.TextureError as e:
                raise ExecFault(f"{what}: {e}", i) from None
        out.append(d)
    return out


def tex_executor(gmem, handle, coords, layer, integer: bool, comp: int, write, what: str = "tex",
                 gather: int | None = None, half: str | None = None, lod=None, base: bool = False,
                 cube: bool = False, sample: bool = False, offsets=None, dc=None):
    """``run(sel, idx, n)``: word ``comp`` of each thread's fetch (``gather``: tld4's component) written;
    ``half``: ``f16`` (four halves) or ``f16x2`` (two packed words) results of a float texture; ``lod``: the
    reader of tex.level's level of detail (f32), ``base``: tex.base; ``sample``: tex.2dms/.a2dms, the last
    coordinate reader the sample index; ``offsets``: the reader of the packed texel offsets
    (:func:`xcc.semantics.texture.unpack_offsets`), ``dc``: of the depth compare value (f32)."""
    def run(sel, idx, n):
        ds = _descriptors(what, gmem, handle, sel, n, "texref")
        cs = [_vals(c, sel, n, np.uint32) for c in coords]
        lay = None if layer is None else _vals(layer, sel, n, np.uint32).view(np.int32)
        lods = None if lod is None else _vals(lod, sel, n, np.uint32).view(np.float32)
        offs = None if offsets is None else _vals(offsets, sel, n, np.uint32)
        dcs = None if dc is None else _vals(dc, sel, n, np.uint32).view(np.float32)
        out = np.zeros(n, np.uint32)
        for i, d in enumerate(ds):
            if integer:
                xs = [int(np.int32(np.uint32(c[i]).view(np.int32))) for c in cs]
            else:
                xs = [float(np.uint32(c[i]).view(np.float32)) for c in cs]
            if cube != d["cube"]:
                raise ExecFault(f"{what}: {'a cube' if cube else 'a non-cube'} fetch through a "
                                f"{'cubemap' if d['cube'] else 'non-cubemap'} texture", i)
            if len(xs) < d["dims"]:
                raise ExecFault(f"{what}: a {len(xs)}d fetch through a {d['dims']}d texture", i)
            if (layer is not None) != d["layered"] and not cube:
                raise ExecFault(f"{what}: {'an array' if layer is not None else 'a non-array'} fetch through a "
                                f"{'layered' if d['layered'] else 'non-layered'} texture", i)
            ext = {"offsets": None if offs is None else TX.unpack_offsets(int(offs[i]), 3),
                   "dc": None if dcs is None else float(dcs[i])}
            try:
                if sample:
                    words = TX.fetch_sample(d, _reader(gmem, i), xs[0], xs[1], xs[2],
                                            0 if lay is None else int(lay[i]), ext["offsets"])
                elif gather is not None:
                    words = TX.gather(d, _reader(gmem, i), xs, gather, 0 if lay is None else int(lay[i]), **ext)
                else:
                    words = TX.fetch(d, _reader(gmem, i), xs if cube else xs[:d["dims"]], integer,
                                     0 if lay is None else int(lay[i]),
                                     None if lods is None else float(lods[i]), base, **ext)
            except TX.TextureError as e:
                raise ExecFault(f"{what}: {e}", i) from None
            if half is not None:
                if not TX.float_output(d):
                    raise ExecFault(f"{what}: .{half} results of a texture whose texels are not floats", i)
                words = TX.half_words(words, half == "f16x2")
            out[i] = words[comp]
        write(sel, out)
    return run


def lod_executor(gmem, handle, dx, dy, write, what: str = "tex.grad"):
    """``tex.grad``'s level of detail (f32 bits) from the gradient readers ``dx`` and ``dy`` (f32 each)."""
    def run(sel, idx, n):
        ds = _descriptors(what, gmem, handle, sel, n, "texref")
        gx = [_vals(g, sel, n, np.uint32).view(np.float32) for g in dx]
        gy = [_vals(g, sel, n, np.uint32).view(np.float32) for g in dy]
        out = np.zeros(n, np.float32)
        for i, d in enumerate(ds):
            out[i] = TX.grad_lod(d, [float(g[i]) for g in gx], [float(g[i]) for g in gy])
        write(sel, out.view(np.uint32))
    return run


def grad_sq_executor(gmem, handle, g, write, what: str = "tex.grad", direction=None):
    """The squared length (f64 bits) of one tex.grad gradient (readers ``g``, f32) in level-0 texels;
    ``direction`` (readers, f32): a cube fetch's direction, the gradient measured on its face."""
    def run(sel, idx, n):
        ds = _descriptors(what, gmem, handle, sel, n, "texref")
        gs = [_vals(r, sel, n, np.uint32).view(np.float32) for r in g]
        if direction is None:
            out = np.array([TX.grad_sq(d, [float(x[i]) for x in gs]) for i, d in enumerate(ds)], np.float64)
        else:
            ps = [_vals(r, sel, n, np.uint32).view(np.float32) for r in direction]
            out = np.array([TX.grad_sq_cube(d, [float(p[i]) for p in ps], [float(x[i]) for x in gs])
                            for i, d in enumerate(ds)], np.float64)
        write(sel, out.view(np.uint64))
    return run


def cube_lod_executor(gmem, handle, direction, dx, dy, write, what: str = "tex.grad"):
    """``tex.grad.cube``'s level of detail (f32 bits): each gradient's squared length on the direction's face
    (:func:`xcc.semantics.texture.grad_sq_cube`, as TEXGRAD.CUBE), then as TEXLOD.SQ
    (:func:`xcc.semantics.texture.lod_of_sq`)."""
    def run(sel, idx, n):
        ds = _descriptors(what, gmem, handle, sel, n, "texref")
        ps = [_vals(r, sel, n, np.uint32).view(np.float32) for r in direction]
        gx = [_vals(r, sel, n, np.uint32).view(np.float32) for r in dx]
        gy = [_vals(r, sel, n, np.uint32).view(np.float32) for r in dy]
        out = np.zeros(n, np.float32)
        for i, d in enumerate(ds):
            p = [float(c[i]) for c in ps]
            sq = [float(np.float64(TX.grad_sq_cube(d, p, [float(c[i]) for c in g]))) for g in (gx, gy)]
            out[i] = TX.lod_of_sq(*sq)
        write(sel, out.view(np.uint32))
    return run


def lod_sq_executor(sx, sy, write):
    """tex.grad's level of detail (f32 bits) from the squared gradient lengths ``sx``, ``sy`` (f64 bits)."""
    def run(sel, idx, n):
        a = _vals(sx, sel, n).view(np.float64)
        b = _vals(sy, sel, n).view(np.float64)
        out = np.array([TX.lod_of_sq(float(a[i]), float(b[i])) for i in range(n)], np.float32)
        write(sel, out.view(np.uint32))
    return run


def query_executor(gmem, handle, query: str, surface: bool, write, level=None):
    """``txq.query`` / ``suq.query``: one 32-bit answer per thread; ``level``: the reader of
    ``txq.level``'s level operand (.s32)."""
    what = f"{'suq' if surface else 'txq'}.{'level.' if level is not None else ''}{query}"

    def run(sel, idx, n):
        ds = _descriptors(what, gmem, handle, sel, n, "surfref" if surface else "texref")
        if level is None:
            write(sel, np.array([TX.query(d, query) for d in ds], np.uint32))
            return
        lv = _vals(level, sel, n, np.uint32).view(np.int32)
        write(sel, np.array([TX.query_level(d, query, int(lv[i])) for i, d in enumerate(ds)], np.uint32))
    return run


def istypep_executor(gmem, handle, kind: str, write):
    """``istypep.kind``: whether the handle is a live object of that kind (a texture object is also a sampler:
    it carries one); an unmapped handle is not one."""
    def run(sel, idx, n):
        h = _vals(handle, sel, n)
        out = np.zeros(n, bool)
        for i in range(n):
            try:
                words = gmem.load(np.uint64(h[i]) + _WORDS, 8)
            except MemoryFault:
                continue
            k = TX.kind_of(np.asarray(words, np.uint64))
            out[i] = k == kind or (kind == "samplerref" and k == "texref")
        write(sel, out)
    return run


def _surface_addresses(what, gmem, handle, coords, layer, size, mode, sel, n, ds=None):
    """(descriptors, each thread's address or None) of a surface access of ``size`` bytes; ``ds``: the threads'
    descriptors when the caller has decoded them already."""
    if ds is None:
        ds = _descriptors(what, gmem, handle, sel, n, "surfref")
    cs = [_vals(c, sel, n, np.uint32).view(np.int32).astype(np.int64) for c in coords]
    lay = None if layer is None else _vals(layer, sel, n, np.uint32).view(np.int32).astype(np.int64)
    out = []
    for i, d in enumerate(ds):
        xyz = [int(c[i]) for c in cs] + [0, 0]
        if len(cs) < d["dims"]:
            raise ExecFault(f"{what}: a {len(cs)}d access to a {d['dims']}d surface", i)
        try:
            out.append(TX.surface_address(d, xyz[0], xyz[1], xyz[2], 0 if lay is None else int(lay[i]),
                                          TX.element_bytes(d) if size is None else size, mode))
        except TX.TextureError as e:
            raise ExecFault(f"{what}: {e}", i) from None
    return ds, out


def suld_executor(gmem, handle, coords, layer, width: int, vec: int, comp: int, mode: str, write,
                  what: str = "suld.b"):
    """Element ``comp`` (``width`` bytes) of each thread's ``vec * width``-byte surface load."""
    def run(sel, idx, n):
        _, addrs = _surface_addresses(what, gmem, handle, coords, layer, width * vec, mode, sel, n)
        out = np.zeros(n, np.uint64)
        for i, a in enumerate(addrs):
            if a is None:
                continue
            try:
                out[i] = int(np.asarray(gmem.load(np.array([a + comp * width], np.uint64), width)).ravel()[0])
            except MemoryFault as f:
                f.thread = i
                raise
        write(sel, out if width == 8 else out.astype(np.uint32))
    return run


def sust_executor(gmem, handle, coords, layer, width: int, vec: int, comp: int, mode: str, value,
                  what: str = "sust.b", formatted: bool = False):
    """Element ``comp`` of each thread's ``vec * width``-byte surface store (dropped out of range under .zero);
    ``formatted`` (``sust.p``): the x coordinate counts elements and word ``comp`` becomes channel ``comp`` of
    the surface's format (a word past the element's channels is ignored)."""
    def run(sel, idx, n):
        if formatted:
            ds, xcoords = _element_x(gmem, handle, coords, what, sel, n)
            _, addrs = _surface_addresses(what, gmem, handle, xcoords, layer, None, mode, sel, n, ds)
        else:
            _, addrs = _surface_addresses(what, gmem, handle, coords, layer, width * vec, mode, sel, n)
        v = _vals(value, sel, n)
        for i, a in enumerate(addrs):
            if a is None:
                continue
            if formatted:
                d = ds[i]
                if comp >= d["channels"]:
                    continue
                try:
                    gmem.store(np.array([a + comp * d["cbytes"]], np.uint64),
                               np.array([TX.formatted_channel(d, int(v[i]))], np.uint64), d["cbytes"])
                except MemoryFault as f:
                    f.thread = i
                    raise
                continue
            try:
                gmem.store(np.array([a + comp * width], np.uint64), v[i:i + 1] & np.uint64((1 << 8 * width) - 1),
                           width)  # (the memory narrows the word to its width)
            except MemoryFault as f:
                f.thread = i
                raise
    return run


def _element_x(gmem, handle, coords, what, sel, n):
    """(descriptors, coordinate readers with x scaled from elements to bytes) of a sample-addressed access."""
    ds = _descriptors(what, gmem, handle, sel, n, "surfref")
    eb = np.array([TX.element_bytes(d) for d in ds], np.int64)

    def xbytes(s_, n_):
        return (_vals(coords[0], s_, n_, np.uint32).view(np.int32).astype(np.int64) * eb).astype(np.uint32)

    return ds, [xbytes, *coords[1:]]


def sured_executor(gmem, handle, coords, layer, op: str, width: int, kind: str, mode: str, value,
                   what: str = "sured.b", formatted: bool = False):
    """``sured.b.op``: each thread's value reduced into its surface element as an atomic (thread order);
    ``formatted`` (``sured.p``): x counts elements, the element (``width`` bytes, one integer channel) is signed
    or unsigned as the surface's format says."""
    def run(sel, idx, n):
        kinds = [kind] * n
        if formatted:
            ds, xcoords = _element_x(gmem, handle, coords, what, sel, n)
            for i, d in enumerate(ds):
                if d["kind"] == "f" or TX.element_bytes(d) != width:
                    raise ExecFault(f"{what}: a {8 * width}-bit reduction on a surface of "
                                    f"{TX.element_bytes(d)}-byte {'float' if d['kind'] == 'f' else 'integer'} "
                                    "elements", i)
                kinds[i] = d["kind"]
            _, addrs = _surface_addresses(what, gmem, handle, xcoords, layer, None, mode, sel, n, ds)
        else:
            _, addrs = _surface_addresses(what, gmem, handle, coords, layer, width, mode, sel, n)
        udt = np.uint64 if width == 8 else np.uint32
        raw = (_vals(value, sel, n) & np.uint64((1 << 8 * width) - 1)).astype(udt)
        for i, a in enumerate(addrs):
            if a is None:
                continue
            v = raw[i:i + 1].view(np.int64 if width == 8 else np.int32) if kinds[i] == "s" else raw[i:i + 1]
            try:
                gmem.atomic(op, np.array([a], np.uint64), v, width, kinds[i])
            except MemoryFault as f:
                f.thread = i
                raise
    return run
