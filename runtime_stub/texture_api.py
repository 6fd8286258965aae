"""CUDA arrays, texture objects and surface objects (CUDA driver API, "Array Management", "Texture Object
Management", "Surface Object Management") in cuda-python's shape: ``cuArrayCreate``, ``cuArray3DCreate``,
``cuArrayDestroy``, ``cuMemcpyHtoA``, ``cuMemcpyAtoH``, ``cuTexObjectCreate(pResDesc, pTexDesc, pResViewDesc)``,
``cuTexObjectDestroy``, ``cuSurfObjectCreate(pResDesc)``, ``cuSurfObjectDestroy`` and their structs and enums.

A ``CUtexObject`` / ``CUsurfObject`` is the 64-bit value a kernel receives (``cudaTextureObject_t``, a ``.u64``
parameter): the global address of the object's 128-byte descriptor (:mod:`xcc.semantics.texture`), which
the destroy call frees.  A CUDA array is a global allocation whose rows are packed (``pitch = Width *
element bytes``, no padding), layer after layer; ``cuMemcpyHtoA`` / ``cuMemcpyAtoH`` copy bytes at an offset
in that layout.

Mipmapped arrays (``cuMipmappedArrayCreate``, ``cuMipmappedArrayGetLevel``, ``cuMipmappedArrayDestroy``): each
level a CUDA array, extents halved per level (a cubemap's, ``CUDA_ARRAY3D_CUBEMAP`` with or without ``LAYERED``:
its faces, the six per cube kept); the texture reads them through ``tex.level``/``tex.base`` with the
descriptor's mipmap filter (point or linear), level bias and level clamps.

Supported: resources of type ``ARRAY`` (1D/2D/3D and layered 1D/2D arrays, cubemaps and cubemap arrays:
``CUDA_ARRAY3D_CUBEMAP``, six square layers per cube), ``MIPMAPPED_ARRAY``, ``LINEAR`` and ``PITCH2D`` (the
pitch a multiple of 32 bytes, the address 16-byte aligned); formats UNSIGNED_INT8/16/32, SIGNED_INT8/16/32,
HALF and FLOAT with 1, 2 or 4 channels; address modes wrap, clamp, mirror, border (with its colour); point and
linear filtering (linear only with float results: a float format, or 8/16-bit integers read as normalized
float); ``CU_TRSF_NORMALIZED_COORDINATES`` and ``CU_TRSF_READ_AS_INTEGER``.  Surfaces need an ``ARRAY``
resource made with ``CUDA_ARRAY3D_SURFACE_LDST``.  Refused with ``CUDA_ERROR_NOT_SUPPORTED``:
resource views, sRGB, anisotropy, cubemap surfaces and layered (non-cubemap) mipmaps; anything malformed is
``CUDA_ERROR_INVALID_VALUE`` naming the field.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from xcc.runtime.driver_core import CudaError, api, as_int, current, lookup, register, unregister
from xcc.runtime.driver_types import CUresult, _Handle, _IntHandle
from xcc.runtime.host_args import host_view
from xcc.semantics import texture as TX

__all__ = ["CUDA_ARRAY3D_CUBEMAP", "CUDA_ARRAY3D_DESCRIPTOR", "CUDA_ARRAY3D_LAYERED", "CUDA_ARRAY3D_SURFACE_LDST", "CUDA_ARRAY_DESCRIPTOR",
           "CUDA_RESOURCE_DESC", "CUDA_RESOURCE_VIEW_DESC", "CUDA_TEXTURE_DESC", "CU_TRSF_NORMALIZED_COORDINATES",
           "CU_TRSF_READ_AS_INTEGER", "CU_TRSF_SRGB", "CUaddress_mode", "CUarray", "CUarray_format", "CUfilter_mode",
           "CUresourcetype", "CUsurfObject", "CUtexObject", "cuArray3DCreate", "cuArrayCreate", "cuArrayDestroy",
           "cuMemcpyAtoH", "cuMemcpyHtoA", "cuSurfObjectCreate", "cuSurfObjectDestroy", "cuTexObjectCreate",
           "cuTexObjectDestroy", "CUmipmappedArray", "cuMipmappedArrayCreate", "cuMipmappedArrayDestroy",
           "cuMipmappedArrayGetLevel", "sampler"]

_LIVE: dict[int, tuple] = {}  # descriptor address -> (magic, context)
_INVALID, _NOT_SUPPORTED = CUresult.CUDA_ERROR_INVALID_VALUE, CUresult.CUDA_ERROR_NOT_SUPPORTED
CU_TRSF_READ_AS_INTEGER, CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_SRGB = 0x01, 0x02, 0x10
CUDA_ARRAY3D_LAYERED, CUDA_ARRAY3D_SURFACE_LDST, CUDA_ARRAY3D_CUBEMAP = 0x01, 0x02, 0x04


class CUarray_format(IntEnum):
    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01
    CU_AD_FORMAT_UNSIGNED_INT16 = 0x02
    CU_AD_FORMAT_UNSIGNED_INT32 = 0x03
    CU_AD_FORMAT_SIGNED_INT8 = 0x08
    CU_AD_FORMAT_SIGNED_INT16 = 0x09
    CU_AD_FORMAT_SIGNED_INT32 = 0x0A
    CU_AD_FORMAT_HALF = 0x10
    CU_AD_FORMAT_FLOAT = 0x20


class CUresourcetype(IntEnum):
    CU_RESOURCE_TYPE_ARRAY = 0
    CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 1
    CU_RESOURCE_TYPE_LINEAR = 2
    CU_RESOURCE_TYPE_PITCH2D = 3


class CUaddress_mode(IntEnum):
    CU_TR_ADDRESS_MODE_WRAP = 0
    CU_TR_ADDRESS_MODE_CLAMP = 1
    CU_TR_ADDRESS_MODE_MIRROR = 2
    CU_TR_ADDRESS_MODE_BORDER = 3


class CUfilter_mode(IntEnum):
    CU_TR_FILTER_MODE_POINT = 0
    CU_TR_FILTER_MODE_LINEAR = 1


class CUarray(_Handle):
    pass


class CUtexObject(_IntHandle):
    pass


class CUsurfObject(_IntHandle):
    pass


class Fields:
    """A plain struct: every field starts at ``_defaults``' value and is set by attribute assignment."""

    _defaults: dict = {}

    def __init__(self):
        for k, v in self._defaults.items():
            object.__setattr__(self, k, list(v) if isinstance(v, list) else v() if isinstance(v, type) else v)

    def __setattr__(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        object.__setattr__(self, name, value)


class CUDA_ARRAY_DESCRIPTOR(Fields):
    _defaults = {"Width": 0, "Height": 0, "Format": 0, "NumChannels": 0}


class CUDA_ARRAY3D_DESCRIPTOR(Fields):
    _defaults = {"Width": 0, "Height": 0, "Depth": 0, "Format": 0, "NumChannels": 0, "Flags": 0}


class _ResArray(Fields):
    _defaults = {"hArray": None}


class _ResMipmap(Fields):
    _defaults = {"hMipmappedArray": None}


class _ResLinear(Fields):
    _defaults = {"devPtr": 0, "format": 0, "numChannels": 0, "sizeInBytes": 0}


class _ResPitch2D(Fields):
    _defaults = {"devPtr": 0, "format": 0, "numChannels": 0, "width": 0, "height": 0, "pitchInBytes": 0}


class _Res(Fields):
    _defaults = {"array": _ResArray, "mipmap": _ResMipmap, "linear": _ResLinear, "pitch2D": _ResPitch2D}


class CUDA_RESOURCE_DESC(Fields):
    _defaults = {"resType": 0, "res": _Res, "flags": 0}


class CUDA_TEXTURE_DESC(Fields):
    _defaults = {"addressMode": [0, 0, 0], "filterMode": 0, "flags": 0, "maxAnisotropy": 0, "mipmapFilterMode": 0,
                 "mipmapLevelBias": 0.0, "minMipmapLevelClamp": 0.0, "maxMipmapLevelClamp": 0.0,
                 "borderColor": [0.0, 0.0, 0.0, 0.0]}


class CUDA_RESOURCE_VIEW_DESC(Fields):
    _defaults = {"format": 0, "width": 0, "height": 0, "depth": 0, "firstMipmapLevel": 0, "lastMipmapLevel": 0,
                 "firstLayer": 0, "lastLayer": 0}


class _Array:
    """A CUDA array: ``address`` (packed rows), its format, channels, extents and flags."""

    def __init__(self, ctx, address, fmt, channels, width, height, depth, flags):
        self.ctx, self.address, self.fmt, self.channels = ctx, address, fmt, channels
        self.width, self.height, self.depth, self.flags = width, height, depth, flags
        self.ebytes = channels * TX.FORMATS[fmt][1]
        self.pitch = width * self.ebytes
        self.nbytes = self.pitch * max(height, 1) * max(depth, 1)


def _format(fmt, channels, fn: str) -> tuple[int, int]:
    f, c = as_int(fmt, "Format"), as_int(channels, "NumChannels")
    if f not in TX.FORMATS:
        raise CudaError(_INVALID, f"{fn}: unknown CUarray_format {f:#x}")
    if c not in (1, 2, 4):
        raise CudaError(_INVALID, f"{fn}: NumChannels {c} must be 1, 2 or 4")
    return f, c


def _new_array(fn, width, height, depth, fmt, channels, flags) -> CUarray:
    w, h, d, fl = (as_int(v, n) for v, n in ((width, "Width"), (height, "Height"), (depth, "Depth"), (flags, "Flags")))
    f, c = _format(fmt, channels, fn)
    if w <= 0 or h < 0 or d < 0 or (d and not h and not fl & CUDA_ARRAY3D_LAYERED):
        raise CudaError(_INVALID, f"{fn}: extents {w} x {h} x {d} (Width > 0; Depth needs Height)")
    if fl & ~(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP):
        raise CudaError(_NOT_SUPPORTED, f"{fn}: Flags {fl:#x} (xcc supports LAYERED, SURFACE_LDST and CUBEMAP)")
    if fl & CUDA_ARRAY3D_CUBEMAP and (w != h or d < 6 or d % 6 or (d != 6 and not fl & CUDA_ARRAY3D_LAYERED)):
        raise CudaError(_INVALID, f"{fn}: a cubemap is Width == Height with Depth 6 (LAYERED: a multiple of 6), "
                        f"not {w} x {h} x {d}")
    ctx = current()
    arr = _Array(ctx, 0, f, c, w, h, d, fl)
    arr.address = ctx.memory.alloc(max(arr.nbytes, 1))
    ctx.memory.memset(arr.address, 0, arr.nbytes)
    return register(CUarray, arr)


@api(1)
def cuArrayCreate(pAllocateArray) -> CUarray:
    a = pAllocateArray
    return _new_array("cuArrayCreate", a.Width, a.Height, 0, a.Format, a.NumChannels, 0)


@api(1)
def cuArray3DCreate(pAllocateArray) -> CUarray:
    a = pAllocateArray
    return _new_array("cuArray3DCreate", a.Width, a.Height, a.Depth, a.Format, a.NumChannels, a.Flags)


def array_of(h, what="hArray") -> _Array:
    """The live CUDA array behind handle ``h``."""
    return lookup(h, CUarray, _Array, what)


@api()
def cuArrayDestroy(hArray) -> None:
    arr = array_of(hArray)
    arr.ctx.memory.free(arr.address)
    unregister(arr)


class CUmipmappedArray(_Handle):
    pass


class _Mipmapped:
    """A mipmapped array: its levels (CUDA arrays, each extent halved per level, at least 1) and the global
    table of their addresses that a texture descriptor names."""

    def __init__(self, ctx, levels: list, table: int):
        self.ctx, self.levels, self.table = ctx, levels, table


@api(1)
def cuMipmappedArrayCreate(pMipmappedArrayDesc, numMipmapLevels) -> CUmipmappedArray:
    a, fn = pMipmappedArrayDesc, "cuMipmappedArrayCreate"
    n = as_int(numMipmapLevels, "numMipmapLevels")
    w, h, d, fl = (as_int(v, k) for v, k in ((a.Width, "Width"), (a.Height, "Height"), (a.Depth, "Depth"),
                                             (a.Flags, "Flags")))
    cube = bool(fl & CUDA_ARRAY3D_CUBEMAP)  # a cubemap (array): each level six square faces per cube, Depth kept
    if fl & ~(CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED) or (fl and not cube):
        raise CudaError(_NOT_SUPPORTED, f"{fn}: Flags {fl:#x} (layered and surface mipmaps are not supported; "
                        "cubemaps are)")
    most = max(w, h, 1 if cube else d, 1).bit_length()
    if not 1 <= n <= min(most, 255):
        raise CudaError(_INVALID, f"{fn}: numMipmapLevels {n} must be 1 .. {most} for {w} x {h} x {d}")
    levels = [_new_array(fn, max(w >> k, 1), max(h >> k, 1) if h else 0, d if cube else max(d >> k, 1) if d else 0,
                         a.Format, a.NumChannels, fl) for k in range(n)]
    ctx = current()
    table = ctx.memory.alloc(8 * n)
    ctx.memory.write(table, b"".join(array_of(h).address.to_bytes(8, "little") for h in levels))
    return register(CUmipmappedArray, _Mipmapped(ctx, levels, table))


def _mipmapped(h, what="hMipmappedArray") -> _Mipmapped:
    return lookup(h, CUmipmappedArray, _Mipmapped, what)


@api(1)
def cuMipmappedArrayGetLevel(hMipmappedArray, level) -> CUarray:
    m, k = _mipmapped(hMipmappedArray), as_int(level, "level")
    if not 0 <= k < len(m.levels):
        raise CudaError(_INVALID, f"cuMipmappedArrayGetLevel: level {k} of {len(m.levels)}")
    return m.levels[k]


@api()
def cuMipmappedArrayDestroy(hMipmappedArray) -> None:
    m = _mipmapped(hMipmappedArray)
    for h in m.levels:
        arr = array_of(h)
        arr.ctx.memory.free(arr.address)
        unregister(arr)
    m.ctx.memory.free(m.table)
    unregister(m)


def _span(arr: _Array, offset, count, fn) -> tuple[int, int]:
    off, n = as_int(offset, "offset"), as_int(count, "ByteCount")
    if off < 0 or n < 0 or off + n > arr.nbytes:
        raise CudaError(_INVALID, f"{fn}: bytes {off} .. {off + n} outside the array's {arr.nbytes}")
    return off, n


@api()
def cuMemcpyHtoA(dstArray, dstOffset, srcHost, ByteCount) -> None:
    arr = array_of(dstArray, "dstArray")
    off, n = _span(arr, dstOffset, ByteCount, "cuMemcpyHtoA")
    if n:
        arr.ctx.memory.write(arr.address + off, host_view(srcHost, n, "srcHost"))


@api()
def cuMemcpyAtoH(dstHost, srcArray, srcOffset, ByteCount) -> None:
    arr = array_of(srcArray, "srcArray")
    off, n = _span(arr, srcOffset, ByteCount, "cuMemcpyAtoH")
    if n:
        host_view(dstHost, n, "dstHost", writable=True)[:] = arr.ctx.memory.read(arr.address + off, n)


def _resource(res, fn: str, surface: bool) -> dict:
    """The descriptor fields of a CUDA_RESOURCE_DESC."""
    kind = as_int(res.resType, "resType")
    if as_int(res.flags, "flags"):
        raise CudaError(_INVALID, f"{fn}: pResDesc.flags must be 0")
    if surface and kind != CUresourcetype.CU_RESOURCE_TYPE_ARRAY:
        raise CudaError(_INVALID, f"{fn}: a surface object needs a CU_RESOURCE_TYPE_ARRAY resource")
    if kind == CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        m = _mipmapped(res.res.mipmap.hMipmappedArray, "pResDesc.res.mipmap.hMipmappedArray")
        r = CUDA_RESOURCE_DESC()
        r.resType, r.res.array.hArray = CUresourcetype.CU_RESOURCE_TYPE_ARRAY, m.levels[0]
        return dict(_resource(r, fn, False), levels=len(m.levels), level_table=m.table)
    if kind == CUresourcetype.CU_RESOURCE_TYPE_ARRAY:
        arr = array_of(res.res.array.hArray, "pResDesc.res.array.hArray")
        if surface and not arr.flags & CUDA_ARRAY3D_SURFACE_LDST:
            raise CudaError(_INVALID, f"{fn}: the array was not created with CUDA_ARRAY3D_SURFACE_LDST")
        if arr.flags & CUDA_ARRAY3D_CUBEMAP:  # six square 2D layers per cube
            if surface:
                raise CudaError(_NOT_SUPPORTED, f"{fn}: cubemap surfaces are not supported")
            return dict(address=arr.address, restype=TX.RES_ARRAY, fmt=arr.fmt, channels=arr.channels, dims=2,
                        layered=True, width=arr.width, height=arr.height, depth=0, layers=arr.depth, pitch=arr.pitch,
                        cube=True)
        layered = bool(arr.flags & CUDA_ARRAY3D_LAYERED)  # Depth layers of a 1D (Height 0) or 2D array
        dims = 1 + bool(arr.height) + (bool(arr.depth) and not layered)
        layers, height, depth = (max(arr.depth, 1) if layered else 0), arr.height, 0 if layered else arr.depth
        return dict(address=arr.address, restype=TX.RES_ARRAY, fmt=arr.fmt, channels=arr.channels, dims=dims,
                    layered=layered, width=arr.width, height=height, depth=depth, layers=layers, pitch=arr.pitch)
    if kind == CUresourcetype.CU_RESOURCE_TYPE_LINEAR:
        r = res.res.linear
        f, c = _format(r.format, r.numChannels, fn)
        eb, size, ptr = c * TX.FORMATS[f][1], as_int(r.sizeInBytes, "sizeInBytes"), as_int(r.devPtr, "devPtr")
        if ptr % 16 or size <= 0 or size % eb:
            raise CudaError(_INVALID, f"{fn}: linear resource at {ptr:#x} of {size} bytes (16-byte aligned, a "
                            f"positive multiple of the {eb}-byte element)")
        return dict(address=ptr, restype=TX.RES_LINEAR, fmt=f, channels=c, dims=1, layered=False, width=size // eb,
                    height=0, depth=0, layers=0, pitch=size)
    if kind == CUresourcetype.CU_RESOURCE_TYPE_PITCH2D:
        r = res.res.pitch2D
        f, c = _format(r.format, r.numChannels, fn)
        w, h, p, ptr = (as_int(v, n) for v, n in ((r.width, "width"), (r.height, "height"),
                                                  (r.pitchInBytes, "pitchInBytes"), (r.devPtr, "devPtr")))
        eb = c * TX.FORMATS[f][1]
        if ptr % 16 or w <= 0 or h <= 0 or p % 32 or p < w * eb:
            raise CudaError(_INVALID, f"{fn}: pitch2D resource {w} x {h} at {ptr:#x}, pitch {p} (16-byte aligned "
                            f"address, pitch a multiple of 32 of at least {w * eb})")
        return dict(address=ptr, restype=TX.RES_PITCH2D, fmt=f, channels=c, dims=2, layered=False, width=w, height=h,
                    depth=0, layers=0, pitch=p)
    raise CudaError(_INVALID, f"{fn}: unknown resType {kind}")


def _publish(fields: dict, magic: int, sampler: dict, cls):
    ctx = current()
    mip = {k: fields[k] for k in ("levels", "level_table", "cube") if k in fields}
    raw = TX.encode(magic, fields["address"], fields["restype"], fields["fmt"], fields["channels"], fields["dims"],
                    fields["layered"], fields["width"], fields["height"], fields["depth"], fields["layers"],
                    fields["pitch"], **sampler, **mip)
    addr = ctx.memory.alloc(TX.DESC_BYTES)
    ctx.memory.write(addr, raw)
    _LIVE[addr] = (magic, ctx)
    return cls(addr)


@api(1)
def cuTexObjectCreate(pResDesc, pTexDesc, pResViewDesc) -> CUtexObject:
    fn = "cuTexObjectCreate"
    if pResViewDesc is not None and pResViewDesc != 0:
        raise CudaError(_NOT_SUPPORTED, f"{fn}: resource views are not supported (pass None)")
    fields = _resource(pResDesc, fn, False)
    t = pTexDesc
    modes = [as_int(m, "addressMode") for m in list(t.addressMode)[:3]] + [1, 1, 1]
    if any(m not in (0, 1, 2, 3) for m in modes[:3]):
        raise CudaError(_INVALID, f"{fn}: addressMode {modes[:3]} (WRAP, CLAMP, MIRROR or BORDER)")
    flt, flags = as_int(t.filterMode, "filterMode"), as_int(t.flags, "flags")
    if flt not in (0, 1):
        raise CudaError(_INVALID, f"{fn}: filterMode {flt} (POINT or LINEAR)")
    if flags & ~(CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES):
        raise CudaError(_NOT_SUPPORTED, f"{fn}: flags {flags:#x} (xcc supports READ_AS_INTEGER and "
                        "NORMALIZED_COORDINATES)")
    if as_int(t.maxAnisotropy, "maxAnisotropy") > 1:
        raise CudaError(_NOT_SUPPORTED, f"{fn}: anisotropic filtering is not supported")
    mflt = as_int(t.mipmapFilterMode, "mipmapFilterMode")
    if mflt not in (0, 1):
        raise CudaError(_INVALID, f"{fn}: mipmapFilterMode {mflt} (POINT or LINEAR)")
    kind, cbytes = TX.FORMATS[fields["fmt"]]
    read_float = kind in "us" and cbytes < 4 and not flags & CU_TRSF_READ_AS_INTEGER
    if flt and not (kind == "f" or read_float):
        raise CudaError(_INVALID, f"{fn}: linear filtering needs float results (a float format, or 8/16-bit "
                        "integers read as normalized float)")
    border = [float(v) for v in list(t.borderColor)[:4]] + [0.0] * 4
    sampler = dict(modes=tuple(modes[:3]), linear=bool(flt), normalized=bool(flags & CU_TRSF_NORMALIZED_COORDINATES),
                   read_float=read_float, border=tuple(border[:4]), mip_linear=bool(mflt),
                   bias=float(t.mipmapLevelBias), min_clamp=float(t.minMipmapLevelClamp),
                   max_clamp=float(t.maxMipmapLevelClamp))
    return _publish(fields, TX.MAGIC_TEX, sampler, CUtexObject)


@api(1)
def cuSurfObjectCreate(pResDesc) -> CUsurfObject:
    return _publish(_resource(pResDesc, "cuSurfObjectCreate", True), TX.MAGIC_SURF, {}, CUsurfObject)


def _destroy(h, magic: int, what: str) -> None:
    addr = as_int(h, what)
    entry = _LIVE.get(addr)
    if entry is None or entry[0] != magic:
        kind = "texture" if magic == TX.MAGIC_TEX else "surface"
        raise CudaError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{what}: {addr:#x} is not a live {kind} object")
    ctx = entry[1]
    ctx.memory.write(addr, bytes(TX.DESC_BYTES))  # a stale handle no longer names an object
    ctx.memory.free(addr)
    del _LIVE[addr]


@api()
def cuTexObjectDestroy(texObject) -> None:
    _destroy(texObject, TX.MAGIC_TEX, "texObject")


@api()
def cuSurfObjectDestroy(surfObject) -> None:
    _destroy(surfObject, TX.MAGIC_SURF, "surfObject")


_SAMPLER_MODES = {"wrap": TX.WRAP, "clamp": TX.CLAMP, "clamp_to_edge": TX.CLAMP, "mirror": TX.MIRROR,
                  "border": TX.BORDER, "clamp_to_border": TX.BORDER, "clamp_ogl": TX.CLAMP_OGL}


def sampler(addr_mode="clamp_to_edge", filter_mode="nearest", force_unnormalized_coords: bool = False):
    """An independent-mode sampler value (``.target ..., texmode_independent``): the ``np.uint64`` a
    ``.samplerref`` kernel parameter takes, or that the host writes into an uninitialised module
    ``.samplerref`` (``Module.get_global``).  Its fields are a ``.samplerref`` initialiser's: ``addr_mode`` one
    mode (every axis) or a sequence of up to three (axes 0, 1, 2; missing ones clamp_to_edge): ``'wrap'``, ``'mirror'``,
    ``'clamp_to_edge'`` (``'clamp'``), ``'clamp_to_border'`` (``'border'``), ``'clamp_ogl'`` (OpenGL's GL_CLAMP:
    the coordinate clamped to [0, size], a linear tap outside the border colour; 4) or CUDA's ``CUaddress_mode``
    numbers 0-3; ``filter_mode`` ``'nearest'``/``'linear'`` (or ``CUfilter_mode`` 0/1);
    ``force_unnormalized_coords``.  The value is xcc's ABI (docs/semantics.md, "Textures and surfaces"): bit 63
    set, the fields in bits 48-58 (address modes' low 2 bits each from bit 48, linear bit 54, forced unnormalized
    coordinates bit 55, the modes' third bit, set by clamp_ogl only, bits 56-58), the rest zero; a ``tex`` ORs it into the texture handle."""
    modes = list(addr_mode) if isinstance(addr_mode, (list, tuple)) else [addr_mode] * 3
    if not 1 <= len(modes) <= 3:
        raise ValueError(f"sampler: addr_mode takes one to three modes, got {len(modes)}")
    codes = []
    for m in modes:
        code = _SAMPLER_MODES.get(m) if isinstance(m, str) else int(m) if int(m) in (0, 1, 2, 3) else None
        if code is None:
            raise ValueError(f"sampler: address mode {m!r} (wrap, mirror, clamp_to_edge, clamp_to_border, clamp_ogl "
                             "or 0-3)")
        codes.append(code)
    codes += [TX.CLAMP] * (3 - len(codes))
    flt = {"nearest": 0, "point": 0, "linear": 1}.get(filter_mode) if isinstance(filter_mode, str) else (
        int(filter_mode) if int(filter_mode) in (0, 1) else None)
    if flt is None:
        raise ValueError(f"sampler: filter_mode {filter_mode!r} (nearest or linear, or 0/1)")
    word = TX.sampler_word(tuple(codes), bool(flt), bool(force_unnormalized_coords))
    return np.uint64(TX.SAMPLED | word << 48)
