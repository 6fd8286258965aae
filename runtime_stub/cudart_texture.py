"""CUDA arrays, texture objects and surface objects through the runtime API, as ``cuda.bindings.runtime`` shapes
them (re-exported by :mod:`xcc.runtime.cudart`): ``cudaCreateChannelDesc``, ``cudaMallocArray``,
``cudaMalloc3DArray``, ``cudaFreeArray``, ``cudaMemcpy2DToArray``, ``cudaMemcpy2DFromArray``,
``cudaCreateTextureObject``, ``cudaDestroyTextureObject``, ``cudaCreateSurfaceObject``,
``cudaDestroySurfaceObject`` and the structs and enums they take.

Each is the driver call of the same job (:mod:`xcc.runtime.texture_api`), so what is supported and refused is
what the driver says: a channel format is 1, 2 or 4 channels of one width (8, 16 or 32 bits; float 16 or 32);
``cudaReadModeElementType`` is ``CU_TRSF_READ_AS_INTEGER`` (8/16-bit integers read as integers),
``cudaReadModeNormalizedFloat`` reads them as normalized floats; sRGB, mipmaps and anisotropy are
``cudaErrorNotSupported``.  A 2D copy moves ``height`` rows of ``width`` bytes between host (or device)
memory with pitch ``spitch``/``dpitch`` and the array's packed rows at (``wOffset`` bytes, ``hOffset``).
"""

from __future__ import annotations

from enum import IntEnum

from xcc.runtime import texture_api as T
from xcc.runtime.cudart_base import _kind, _ptr, _rt
from xcc.runtime.driver_core import CudaError, as_int, value_of
from xcc.runtime.driver_types import CUresult
from xcc.runtime.host_args import host_view
from xcc.runtime.host_memory_api import is_device_memory

__all__ = ["cudaAddressMode", "cudaArraySurfaceLoadStore", "cudaArrayLayered", "cudaChannelFormatDesc",
           "cudaChannelFormatKind", "cudaCreateChannelDesc", "cudaCreateSurfaceObject", "cudaCreateTextureObject",
           "cudaDestroySurfaceObject", "cudaDestroyTextureObject", "cudaFilterMode", "cudaFreeArray",
           "cudaMalloc3DArray", "cudaMallocArray", "cudaMemcpy2DFromArray", "cudaMemcpy2DToArray",
           "cudaReadMode", "cudaResourceDesc", "cudaResourceType", "cudaTextureDesc"]

_INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
cudaArrayLayered, cudaArraySurfaceLoadStore = T.CUDA_ARRAY3D_LAYERED, T.CUDA_ARRAY3D_SURFACE_LDST


class cudaChannelFormatKind(IntEnum):
    cudaChannelFormatKindSigned = 0
    cudaChannelFormatKindUnsigned = 1
    cudaChannelFormatKindFloat = 2


class cudaResourceType(IntEnum):
    cudaResourceTypeArray = 0
    cudaResourceTypeMipmappedArray = 1
    cudaResourceTypeLinear = 2
    cudaResourceTypePitch2D = 3


class cudaAddressMode(IntEnum):
    cudaAddressModeWrap = 0
    cudaAddressModeClamp = 1
    cudaAddressModeMirror = 2
    cudaAddressModeBorder = 3


class cudaFilterMode(IntEnum):
    cudaFilterModePoint = 0
    cudaFilterModeLinear = 1


class cudaReadMode(IntEnum):
    cudaReadModeElementType = 0
    cudaReadModeNormalizedFloat = 1


class cudaChannelFormatDesc(T.Fields):
    _defaults = {"x": 0, "y": 0, "z": 0, "w": 0, "f": 0}


class _Array(T.Fields):
    _defaults = {"array": None}


class _Mipmap(T.Fields):
    _defaults = {"mipmap": None}


class _Linear(T.Fields):
    _defaults = {"devPtr": 0, "desc": cudaChannelFormatDesc, "sizeInBytes": 0}


class _Pitch2D(T.Fields):
    _defaults = {"devPtr": 0, "desc": cudaChannelFormatDesc, "width": 0, "height": 0, "pitchInBytes": 0}


class _Res(T.Fields):
    _defaults = {"array": _Array, "mipmap": _Mipmap, "linear": _Linear, "pitch2D": _Pitch2D}


class cudaResourceDesc(T.Fields):
    _defaults = {"resType": 0, "res": _Res, "flags": 0}


class cudaTextureDesc(T.Fields):
    _defaults = {"addressMode": [0, 0, 0], "filterMode": 0, "readMode": 0, "sRGB": 0, "borderColor": [0.0] * 4,
                 "normalizedCoords": 0, "maxAnisotropy": 0, "mipmapFilterMode": 0, "mipmapLevelBias": 0.0,
                 "minMipmapLevelClamp": 0.0, "maxMipmapLevelClamp": 0.0, "disableTrilinearOptimization": 0,
                 "seamlessCubemap": 0}


@_rt(1)
def cudaCreateChannelDesc(x, y, z, w, f) -> cudaChannelFormatDesc:
    d = cudaChannelFormatDesc()
    d.x, d.y, d.z, d.w = (as_int(v, n) for v, n in ((x, "x"), (y, "y"), (z, "z"), (w, "w")))
    d.f = cudaChannelFormatKind(as_int(f, "f"))
    return d


_F = T.CUarray_format
_ARRAY_FORMAT = {(0, 8): _F.CU_AD_FORMAT_SIGNED_INT8, (0, 16): _F.CU_AD_FORMAT_SIGNED_INT16,
                 (0, 32): _F.CU_AD_FORMAT_SIGNED_INT32, (1, 8): _F.CU_AD_FORMAT_UNSIGNED_INT8,
                 (1, 16): _F.CU_AD_FORMAT_UNSIGNED_INT16, (1, 32): _F.CU_AD_FORMAT_UNSIGNED_INT32,
                 (2, 16): _F.CU_AD_FORMAT_HALF, (2, 32): _F.CU_AD_FORMAT_FLOAT}
"""(cudaChannelFormatKind: signed 0, unsigned 1, float 2; channel bits) -> CUarray_format."""


def _format(desc) -> tuple[int, int]:
    """(CUarray_format, channels) of a cudaChannelFormatDesc."""
    bits = [as_int(desc.x, "x"), as_int(desc.y, "y"), as_int(desc.z, "z"), as_int(desc.w, "w")]
    n = sum(1 for b in bits if b)
    kind = as_int(desc.f, "f")
    if n not in (1, 2, 4) or any(b and b != bits[0] for b in bits) or bits[n:] != [0] * (4 - n):
        raise CudaError(_INVALID, f"channel format {bits}: 1, 2 or 4 channels of one width")
    fmt = _ARRAY_FORMAT.get((kind, bits[0]))
    if fmt is None:
        raise CudaError(_INVALID, f"channel format of kind {kind} with {bits[0]}-bit channels is not supported")
    return fmt, n


def _new_array(desc, width, height, depth, flags):
    fmt, n = _format(desc)
    d = T.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels, d.Flags = width, height, depth, fmt, n, flags
    return value_of(T.cuArray3DCreate(d))


@_rt(1)
def cudaMallocArray(desc, width, height, flags):
    return _new_array(desc, width, height, 0, flags)


@_rt(1)
def cudaMalloc3DArray(desc, extent, flags):
    return _new_array(desc, extent.width, extent.height, extent.depth, flags)


@_rt()
def cudaFreeArray(array) -> None:
    value_of(T.cuArrayDestroy(array))


def _rows(arr, wOffset, hOffset, width, height, fn: str):
    w, h, x0, y0 = (as_int(v, n) for v, n in ((width, "width"), (height, "height"), (wOffset, "wOffset"),
                                              (hOffset, "hOffset")))
    rows = max(arr.height, 1) * max(arr.depth, 1)
    if min(w, h, x0, y0) < 0 or x0 + w > arr.pitch or y0 + h > rows:
        raise CudaError(_INVALID, f"{fn}: {w} x {h} bytes at ({x0}, {y0}) outside the array's {arr.pitch} x {rows}")
    return w, h, arr.address + y0 * arr.pitch + x0


@_rt()
def cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind) -> None:
    _kind(kind)
    arr = T.array_of(dst, "dst")
    w, h, at = _rows(arr, wOffset, hOffset, width, height, "cudaMemcpy2DToArray")
    p, s = _ptr(src), as_int(spitch, "spitch")
    if s < w:
        raise CudaError(_INVALID, f"cudaMemcpy2DToArray: spitch {s} is below width {w}")
    mem = arr.ctx.memory
    for r in range(h):
        if isinstance(p, int) and is_device_memory(p):
            mem.copy(at + r * arr.pitch, p + r * s, w)
        else:
            mem.write(at + r * arr.pitch, host_view(p, (h - 1) * s + w, "src")[r * s:r * s + w])


@_rt()
def cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind) -> None:
    _kind(kind)
    arr = T.array_of(src, "src")
    w, h, at = _rows(arr, wOffset, hOffset, width, height, "cudaMemcpy2DFromArray")
    p, s = _ptr(dst), as_int(dpitch, "dpitch")
    if s < w:
        raise CudaError(_INVALID, f"cudaMemcpy2DFromArray: dpitch {s} is below width {w}")
    mem = arr.ctx.memory
    for r in range(h):
        if isinstance(p, int) and is_device_memory(p):
            mem.copy(p + r * s, at + r * arr.pitch, w)
        else:
            host_view(p, (h - 1) * s + w, "dst", writable=True)[r * s:r * s + w] = mem.read(at + r * arr.pitch, w)


def _driver_resource(res) -> T.CUDA_RESOURCE_DESC:
    r = T.CUDA_RESOURCE_DESC()
    r.resType, r.flags = as_int(res.resType, "resType"), as_int(res.flags, "flags")
    if r.resType == cudaResourceType.cudaResourceTypeArray:
        r.res.array.hArray = res.res.array.array
    elif r.resType == cudaResourceType.cudaResourceTypeLinear:
        lin = res.res.linear
        (r.res.linear.format, r.res.linear.numChannels), r.res.linear.devPtr = _format(lin.desc), _ptr(lin.devPtr)
        r.res.linear.sizeInBytes = lin.sizeInBytes
    elif r.resType == cudaResourceType.cudaResourceTypePitch2D:
        p2 = res.res.pitch2D
        (r.res.pitch2D.format, r.res.pitch2D.numChannels), r.res.pitch2D.devPtr = _format(p2.desc), _ptr(p2.devPtr)
        r.res.pitch2D.width, r.res.pitch2D.height, r.res.pitch2D.pitchInBytes = p2.width, p2.height, p2.pitchInBytes
    return r


@_rt(1)
def cudaCreateTextureObject(pResDesc, pTexDesc, pResViewDesc):
    t = pTexDesc
    if as_int(t.sRGB, "sRGB"):
        raise CudaError(CUresult.CUDA_ERROR_NOT_SUPPORTED, "cudaCreateTextureObject: sRGB is not supported")
    d = T.CUDA_TEXTURE_DESC()
    d.addressMode, d.filterMode = list(t.addressMode), t.filterMode
    d.flags = ((T.CU_TRSF_NORMALIZED_COORDINATES if as_int(t.normalizedCoords, "normalizedCoords") else 0)
               | (T.CU_TRSF_READ_AS_INTEGER if as_int(t.readMode, "readMode") == 0 else 0))
    d.maxAnisotropy, d.mipmapFilterMode, d.borderColor = t.maxAnisotropy, t.mipmapFilterMode, list(t.borderColor)
    return int(value_of(T.cuTexObjectCreate(_driver_resource(pResDesc), d, pResViewDesc)))


@_rt()
def cudaDestroyTextureObject(texObject) -> None:
    value_of(T.cuTexObjectDestroy(texObject))


@_rt(1)
def cudaCreateSurfaceObject(pResDesc):
    return int(value_of(T.cuSurfObjectCreate(_driver_resource(pResDesc))))


@_rt()
def cudaDestroySurfaceObject(surfObject) -> None:
    value_of(T.cuSurfObjectDestroy(surfObject))

