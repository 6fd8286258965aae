"""``cuTensorMapEncodeTiled`` and ``cuTensorMapEncodeIm2col`` (CUDA driver API, "Tensor Map Object
Management") in cuda-python's shape: the
``CUtensorMap`` a kernel takes as a ``const __grid_constant__ CUtensorMap`` parameter for its
``cp.async.bulk.tensor`` loads, and the enums that describe it.

The 128 bytes are xcc's layout of :mod:`xcc.semantics.tensormap` (CUDA's is opaque); the checks are those
CUDA documents for the call (rank 1 - 5, a 16-byte-aligned global address, strides multiples of 16 below
2^40, box dims 1 - 256 whose inner extent is a multiple of 16 bytes and fits the swizzle span), each a
``CUDA_ERROR_INVALID_VALUE`` naming the argument; interleaved layouts (16B/32B) and element strides 1 - 8 as
:mod:`xcc.semantics.tensormap` states; the L2 promotion is accepted and has no effect.
The im2col map adds the pixel box's corners (``rank - 2`` each, in the range the rank allows), channelsPerPixel
(1 - 256, a multiple of 16 bytes) and pixelsPerColumn (1 - 1024) for ``.im2col`` loads and ``.im2col_no_offs``
stores; its element strides stride the pixel walk along D, H and W (a batch stride other than 1, and a channel
stride other than 1 with an interleaved layout, are ``CUDA_ERROR_INVALID_VALUE``: not supported yet).
"""

from __future__ import annotations

import ctypes
from enum import IntEnum

from xcc.runtime.driver_core import CudaError, api, as_int
from xcc.runtime.driver_types import CUresult
from xcc.semantics import tensormap as T

__all__ = ["CUtensorMap", "CUtensorMapDataType", "CUtensorMapFloatOOBfill", "CUtensorMapInterleave",
           "CUtensorMapL2promotion", "CUtensorMapSwizzle", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeTiled"]


class CUtensorMapDataType(IntEnum):
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0
    CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1
    CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2
    CU_TENSOR_MAP_DATA_TYPE_INT32 = 3
    CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4
    CU_TENSOR_MAP_DATA_TYPE_INT64 = 5
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12


class CUtensorMapInterleave(IntEnum):
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0
    CU_TENSOR_MAP_INTERLEAVE_16B = 1
    CU_TENSOR_MAP_INTERLEAVE_32B = 2


class CUtensorMapSwizzle(IntEnum):
    CU_TENSOR_MAP_SWIZZLE_NONE = 0
    CU_TENSOR_MAP_SWIZZLE_32B = 1
    CU_TENSOR_MAP_SWIZZLE_64B = 2
    CU_TENSOR_MAP_SWIZZLE_128B = 3


class CUtensorMapL2promotion(IntEnum):
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3


class CUtensorMapFloatOOBfill(IntEnum):
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1


class CUtensorMap(ctypes.Structure):
    """The 128-byte tensor map (cuda-python's ``CUtensorMap``: 16 opaque 64-bit words); pass it by value."""

    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


def _ints(v, n: int, what: str, fn: str = "cuTensorMapEncodeTiled") -> list[int]:
    try:
        xs = [as_int(x, what) for x in list(v)[:n]]
    except TypeError:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{fn}: {what} must be a sequence of integers") from None
    if len(xs) < n:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{fn}: {what} has {len(xs)} values, {n} needed")
    return xs


def _as_map(raw: bytes) -> CUtensorMap:
    m = CUtensorMap()
    ctypes.memmove(ctypes.addressof(m), raw, len(raw))
    return m


@api(1)
def cuTensorMapEncodeTiled(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim,
                           elementStrides, interleave, swizzle, l2Promotion, oobFill) -> CUtensorMap:
    rank = as_int(tensorRank, "tensorRank")
    if not 1 <= rank <= 5:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuTensorMapEncodeTiled: tensorRank {rank} must be 1 .. 5")
    try:
        raw = T.encode_tiled(as_int(tensorDataType, "tensorDataType"), rank, as_int(globalAddress, "globalAddress"),
                             _ints(globalDim, rank, "globalDim"), _ints(globalStrides, max(rank - 1, 0),
                                                                        "globalStrides"),
                             _ints(boxDim, rank, "boxDim"), _ints(elementStrides, rank, "elementStrides"),
                             as_int(interleave, "interleave"), as_int(swizzle, "swizzle"), as_int(oobFill, "oobFill"))
    except T.TensorMapError as e:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuTensorMapEncodeTiled: {e}") from None
    as_int(l2Promotion, "l2Promotion")
    return _as_map(raw)


@api(1)
def cuTensorMapEncodeIm2col(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, pixelBoxLowerCorner,
                            pixelBoxUpperCorner, channelsPerPixel, pixelsPerColumn, elementStrides, interleave, swizzle,
                            l2Promotion, oobFill) -> CUtensorMap:
    fn = "cuTensorMapEncodeIm2col"
    rank = as_int(tensorRank, "tensorRank")
    if not 3 <= rank <= 5:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{fn}: tensorRank {rank} must be 3 .. 5")
    try:
        raw = T.encode_im2col(as_int(tensorDataType, "tensorDataType"), rank, as_int(globalAddress, "globalAddress"),
                              _ints(globalDim, rank, "globalDim", fn), _ints(globalStrides, rank - 1, "globalStrides", fn),
                              _ints(pixelBoxLowerCorner, rank - 2, "pixelBoxLowerCorner", fn),
                              _ints(pixelBoxUpperCorner, rank - 2, "pixelBoxUpperCorner", fn),
                              as_int(channelsPerPixel, "channelsPerPixel"), as_int(pixelsPerColumn, "pixelsPerColumn"),
                              _ints(elementStrides, rank, "elementStrides", fn), as_int(interleave, "interleave"),
                              as_int(swizzle, "swizzle"), as_int(oobFill, "oobFill"))
    except T.TensorMapError as e:
        raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{fn}: {e}") from None
    as_int(l2Promotion, "l2Promotion")
    return _as_map(raw)
