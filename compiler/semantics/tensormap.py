"""Tensor maps of the Tensor Memory Accelerator (TMA): what ``cuTensorMapEncodeTiled`` (CUDA driver API,
"Tensor Map Object Management") encodes and what ``cp.async.bulk.tensor`` in tile mode (PTX ISA
9.7.9.25.5) loads from it.

CUDA leaves the 128-byte ``CUtensorMap`` opaque; xcc's layout (little-endian):

=========  ==========================================================================================
bytes      field
=========  ==========================================================================================
0 - 3      magic ``XTM1``
4, 5, 6    data type (``CUtensorMapDataType``), rank (1 - 5), interleave
7          swizzle (bits 0-3), OOB fill (bit 4: NaN for float types)
8 - 15     global address
16 - 35    global dims 0 .. 4 (u32, dim 0 the innermost)
40 - 71    global strides of dims 1 .. 4 in bytes (u64; dim 0's is the element size)
72 - 81    box dims 0 .. 4 (u16)
82 - 86    element strides 0 .. 4 (u8)
87         mode: 0 tiled (``cuTensorMapEncodeTiled``), 1 im2col (``cuTensorMapEncodeIm2col``)
88 - 99    im2col: pixel-box lower corners, then upper corners, of spatial dims 1 .. 3 (i16)
100 - 103  im2col: channels per pixel, pixels per column (u16)
=========  ==========================================================================================

A tile-mode load of box coordinates ``c`` reads box element ``i`` (``i_0`` innermost) from global
coordinates ``c + i``: inside the tensor, ``address + x_0 * esize + sum(x_d * stride_d)``; outside, zero
(NaN for float types with the NaN OOB fill).  The box lands in shared memory densely, ``i_0`` fastest;
with a swizzle of ``S`` = 32, 64 or 128 bytes, the 16-byte chunk bits (4 ..) of each byte's shared address
are XORed with its bits 7 .. (``log2(S / 16)`` bits), as for wgmma's swizzled layouts.  With element strides
``e_d`` (``cuTensorMapEncodeTiled``'s ``elementStrides``, 1 - 8; ``e_0`` only with an interleaved layout, the
driver API ignoring it otherwise) the box holds ``ceil(boxDim_d / e_d)`` elements along dim ``d`` and box element
``i`` comes from coordinates ``c + i * e`` (PTX ISA 5.5.3.2, "Traversal-Stride"; the box lands densely).  An
interleaved layout (``CU_TENSOR_MAP_INTERLEAVE_16B``/``32B``: NC/8HWC8, NC/16HWC16, the interleaved channel
chunk being dim 0) addresses elements as any other tensor of its dims and strides; it changes the map's checks
(rank >= 3; 32B: 32-byte aligned address and strides, the 32-byte swizzle; no swizzle-span limit on dim 0) and
lets dim 0 have an element stride.

An im2col-mode load (``.im2col``, tensors of rank 3 - 5: channels, 1 - 3 spatial dims, batch; PTX ISA 9.7.9.25.5,
"Im2col mode") at coordinates ``(c, s_1 .. s_k, n)`` with unsigned 16-bit im2col offsets ``o_1 .. o_k`` (an
H200 reads an offset of 0xFFFF as 65535, not -1: tests/data/gpu/tma_h200.jsonl) reads
``pixelsPerColumn`` pixels of ``channelsPerPixel`` channels each: the pixels are visited from ``(s, n)`` in
order, dim 1 fastest, inside the bounding box ``lower_d .. dims_d - 1 + upper_d`` of each spatial dim (past its
end, a dim restarts at ``lower_d`` and the next one steps; past the last spatial dim, ``n`` steps); pixel ``p``
reads channels ``c .. c + channelsPerPixel - 1`` at spatial coordinates ``s + o`` (zero, or NaN, outside the
tensor) to shared offset ``(p * channelsPerPixel + channel) * esize`` (swizzled as a box).  With element strides
``e_d`` (PTX ISA 5.5.4.2, "Traversal Stride": they stride the walk along D, H and W and leave the pixel count to
pixelsPerColumn) a step moves dim 1 by ``e_1`` and a carry moves the next spatial dim by its ``e_d`` (a dim that
wraps restarts at ``lower_d``); ``n`` steps by 1.  xcc refuses (``TensorMapError``) what the manual leaves
undefined there: a batch stride ``e_N`` other than 1, and a channel stride ``e_0`` other than 1 with an interleaved
layout.  An interleaved im2col map addresses and lands its elements as an uninterleaved one; it changes the map's
checks as it does a tiled map's.

An im2col-mode store (``cp.async.bulk.tensor.Nd.global.shared::cta.im2col_no_offs.bulk_group``, 3d - 5d, no im2col
offsets) is the inverse of the load with zero offsets: column element ``(p, channel)`` is read from the load's
shared offset and written to the global coordinates the load reads it from, when they lie inside the tensor
(others are not written: the bounding box is clipped, as a tile store's).  PTX ISA 9.7.9.25.5.1 requires of the
``.global.shared::cta`` direction non-negative coordinates, a non-negative pixel-box lower corner and a
non-positive upper corner (the box inside the tensor): :func:`im2col_store_check` makes each a
``TensorMapError``.

A tile-mode store (``cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group``) is the inverse: box element
``i`` is read from the same (swizzled) shared offset and written to global coordinates ``c + i`` when they lie
inside the tensor; elements outside it are not written (PTX ISA 9.7.9.25.5, "Tensor copy": the bounding box
is clipped to the tensor).  ``cp.reduce.async.bulk.tensor`` reduces each in-bounds element into global memory
with the operation, in the tensor map's element type; :data:`REDUCE_OK` is what PTX ISA 9.7.9.25.5 (cp.reduce.async.bulk.tensor) allows
per type (of those xcc's atomics perform).
"""

from __future__ import annotations

import struct

import numpy as np

from xcc.semantics.halfp import OOB_NAN

MAGIC = b"XTM1"
ELEMENT_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
"""CUtensorMapDataType -> bytes: UINT8, UINT16, UINT32, INT32, UINT64, INT64, FLOAT16, FLOAT32, FLOAT64,
BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ."""
_FLOAT_NAN = {6: OOB_NAN, 7: OOB_NAN * 0x10001, 8: 0x7FFFFFFFFFFFFFFF, 9: OOB_NAN, 10: 0x7FFFFFFF,
              11: 0x7FFFFFFF, 12: 0x7FFFFFFF}
"""The NaN OOB fill's bits per element type: FLOAT32's is what an H200 writes (0x7FF77FF7,
tests/data/gpu/tensormap_replace_probe.h200.txt); FLOAT16's and BFLOAT16's its 16-bit half 0x7FF7, the OOB NaN that
``fma.oob`` gives +0 for (PTX ISA 9.7.4.4; xcc.semantics.halfp.OOB_NAN), not measured; the others were not
measured (canonical NaNs)."""
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
INTERLEAVE_BYTES = {0: 0, 1: 16, 2: 32}
"""CUtensorMapInterleave -> the interleaved chunk's bytes (NONE, 16B: NC/8HWC8 of 2-byte channels, 32B)."""
DTYPE_NAMES = {0: "u8", 1: "u16", 2: "u32", 3: "s32", 4: "u64", 5: "s64", 6: "f16", 7: "f32", 8: "f64", 9: "bf16",
               10: "f32 (ftz)", 11: "tf32", 12: "tf32 (ftz)"}
REDUCE_KIND = {2: ("u", 4), 3: ("s", 4), 4: ("u", 8), 5: ("s", 8), 6: ("f16", 2), 7: ("f", 4), 9: ("bf16", 2)}
"""CUtensorMapDataType -> (the atomics' kind, bytes) of a reducible element type."""
REDUCE_OK = {"add": frozenset({2, 3, 4, 6, 7, 9}), "min": frozenset({2, 3, 5, 6, 9}), "max": frozenset({2, 3, 5, 6, 9}),
             "inc": frozenset({2}), "dec": frozenset({2}), "and": frozenset({2, 3, 4}),
             "or": frozenset({2, 3, 4}), "xor": frozenset({2, 3, 4})}
"""redOp -> the element types ``cp.reduce.async.bulk.tensor`` reduces with it: .add on .u32/.s32/.u64/.f32/.f16/
.bf16, .min/.max on .u32/.s32/.s64/.f16/.bf16 (as ``min``/``max``: -0 < +0, a NaN gives the other value, two
NaNs the canonical NaN), .inc/.dec on .u32, the bitwise operations on u32, s32 and u64 (an H200 stops
``.or`` on an s64 map with an illegal-instruction error: tests/data/gpu/tma_h200.jsonl)."""


class TensorMapError(Exception):
    """A tensor map or a use of it that CUDA or PTX does not allow (the caller says where)."""


def encode_tiled(dtype: int, rank: int, address: int, dims, strides, box, element_strides, interleave: int,
                 swizzle: int, oob_fill: int) -> bytes:
    """The 128 bytes of a tiled tensor map, checked as ``cuTensorMapEncodeTiled`` documents (strides: the
    ``rank - 1`` byte strides of dims 1 ..)."""
    if dtype not in ELEMENT_BYTES:
        raise TensorMapError(f"tensorDataType {dtype} is not a CUtensorMapDataType")
    if not 1 <= rank <= 5 or len(dims) < rank or len(box) < rank or len(element_strides) < rank \
            or len(strides) < rank - 1:
        raise TensorMapError(f"tensorRank {rank} must be 1 .. 5, with that many dims, box dims and element "
                             "strides and one stride fewer")
    if interleave not in INTERLEAVE_BYTES or swizzle not in SWIZZLE_BYTES:
        raise TensorMapError("interleave must be CU_TENSOR_MAP_INTERLEAVE_NONE/16B/32B and swizzle one of the "
                             "32/64/128-byte swizzles (or none)")
    if interleave and rank < 3:
        raise TensorMapError(f"an interleaved layout needs tensorRank >= 3, not {rank}")
    if interleave == 2 and swizzle != 1:
        raise TensorMapError("CU_TENSOR_MAP_INTERLEAVE_32B needs CU_TENSOR_MAP_SWIZZLE_32B")
    es = ELEMENT_BYTES[dtype]
    align = 32 if interleave == 2 else 16
    if address % align:
        raise TensorMapError(f"globalAddress {address:#x} must be {align}-byte aligned")
    for d in range(rank):
        if not 1 <= dims[d] <= 1 << 32:
            raise TensorMapError(f"globalDim[{d}] = {dims[d]} must be in 1 .. 2^32")
        if not 1 <= box[d] <= 256:
            raise TensorMapError(f"boxDim[{d}] = {box[d]} must be in 1 .. 256")
        if not 1 <= element_strides[d] <= 8:
            raise TensorMapError(f"elementStrides[{d}] = {element_strides[d]} must be in 1 .. 8")
    for d in range(rank - 1):
        if strides[d] % align or not 0 < strides[d] < 1 << 40:
            raise TensorMapError(f"globalStrides[{d}] = {strides[d]} must be a positive multiple of {align} below "
                                 "2^40")
    if not interleave and box[0] * es % 16:
        raise TensorMapError(f"boxDim[0] * element size = {box[0] * es} bytes must be a multiple of 16")
    inner = -(-box[0] // (element_strides[0] if interleave else 1)) * es
    if interleave and inner % 16:  # PTX ISA 5.5.3.1: a bounding box is a multiple of 16 bytes (xcc: its rows)
        raise TensorMapError(f"the box's inner dimension ({inner} bytes) must be a multiple of 16")
    span = SWIZZLE_BYTES[swizzle]
    if span and not interleave and box[0] * es > span:
        raise TensorMapError(f"boxDim[0] * element size = {box[0] * es} bytes exceeds the {span}-byte swizzle span")
    pad = lambda xs, n: list(xs[:rank]) + [0] * (n - rank)  # noqa: E731
    out = bytearray(128)
    struct.pack_into("<4sBBBB", out, 0, MAGIC, dtype, rank, interleave, swizzle | (1 if oob_fill else 0) << 4)
    struct.pack_into("<Q", out, 8, address)
    struct.pack_into("<5I", out, 16, *[(x - 1) for x in pad(dims, 5)][:rank], *[0] * (5 - rank))
    struct.pack_into("<4Q", out, 40, *(list(strides[:rank - 1]) + [0] * (5 - rank)))
    struct.pack_into("<5H", out, 72, *pad(box, 5))
    struct.pack_into("<5B", out, 82, *pad(element_strides, 5))
    return bytes(out)


def encode_im2col(dtype: int, rank: int, address: int, dims, strides, lower, upper, channels: int, pixels: int,
                  element_strides, interleave: int, swizzle: int, oob_fill: int) -> bytes:
    """The 128 bytes of an im2col tensor map, checked as ``cuTensorMapEncodeIm2col`` documents: rank 3 - 5,
    ``rank - 2`` corners in -2^(20 - 4 (rank - 2)) .. 2^(...) - 1 (rank 3: 16 bits, 4: 8 bits, 5: 4 bits),
    channelsPerPixel 1 - 256, pixelsPerColumn 1 - 1024, and the tiled map's checks with the box
    ``channelsPerPixel`` x ``pixelsPerColumn``."""
    if not 3 <= rank <= 5:
        raise TensorMapError(f"tensorRank {rank} must be 3 .. 5 for an im2col tensor map")
    k = rank - 2
    bits = {3: 16, 4: 8, 5: 4}[rank]
    if len(lower) < k or len(upper) < k:
        raise TensorMapError(f"pixelBoxLowerCorner and pixelBoxUpperCorner need {k} value(s) (rank - 2)")
    for name, xs in (("pixelBoxLowerCorner", lower), ("pixelBoxUpperCorner", upper)):
        for d in range(k):
            if not -(1 << bits - 1) <= xs[d] < 1 << bits - 1:
                raise TensorMapError(f"{name}[{d}] = {xs[d]} must fit {bits} signed bits for a rank-{rank} map")
    if not 1 <= channels <= 256:
        raise TensorMapError(f"channelsPerPixel = {channels} must be in 1 .. 256")
    if not 1 <= pixels <= 1024:
        raise TensorMapError(f"pixelsPerColumn = {pixels} must be in 1 .. 1024")
    if len(element_strides) >= rank and element_strides[rank - 1] != 1:
        raise TensorMapError(f"elementStrides[{rank - 1}] = {element_strides[rank - 1]} (the batch dim) other than 1 "
                             "is not supported yet for an im2col tensor map (PTX ISA 5.5.4.2 strides only D, H, W)")
    if interleave and element_strides[:1] and element_strides[0] != 1:
        raise TensorMapError(f"elementStrides[0] = {element_strides[0]} (the channel dim) other than 1 is not "
                             "supported yet for an interleaved im2col tensor map")
    box = [channels] + [1] * (rank - 1)
    try:
        out = bytearray(encode_tiled(dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle,
                                     oob_fill))
    except TensorMapError as e:
        raise TensorMapError(str(e).replace("boxDim[0]", "channelsPerPixel")) from None
    out[87] = 1
    struct.pack_into("<3h3hHH", out, 88, *(list(lower[:k]) + [0] * (3 - k)), *(list(upper[:k]) + [0] * (3 - k)),
                     channels, pixels)
    return bytes(out)


def decode(raw: bytes) -> dict:
    """The fields of a tensor map (``TensorMapError`` if it is not one)."""
    magic, dtype, rank, interleave, sw = struct.unpack_from("<4sBBBB", raw, 0)
    if magic != MAGIC or dtype not in ELEMENT_BYTES or not 1 <= rank <= 5:
        raise TensorMapError("the tensor map operand does not point at a tensor map made by cuTensorMapEncodeTiled "
                             "or cuTensorMapEncodeIm2col")
    dims = [x + 1 for x in struct.unpack_from("<5I", raw, 16)[:rank]]
    tm = {"dtype": dtype, "rank": rank, "esize": ELEMENT_BYTES[dtype], "swizzle": SWIZZLE_BYTES[sw & 15],
            "nan_fill": bool(sw >> 4 & 1) and dtype in _FLOAT_NAN, "address": struct.unpack_from("<Q", raw, 8)[0],
            "dims": dims, "strides": list(struct.unpack_from("<4Q", raw, 40)[:rank - 1]),
            "box": list(struct.unpack_from("<5H", raw, 72)[:rank]), "im2col": _im2col_fields(raw, rank),
            "interleave": INTERLEAVE_BYTES.get(interleave, 0),
            # elementStrides (0 read as 1); dim 0's only with an interleaved layout (the driver API ignores it else)
            "estrides": [max(1, x) if d or interleave else 1 for d, x in
                         enumerate(struct.unpack_from("<5B", raw, 82)[:rank])]}
    if tm["im2col"] is not None and (tm["estrides"][rank - 1] != 1 or tm["estrides"][0] != 1):
        raise TensorMapError("an im2col tensor map with an element stride other than 1 along the batch dim (or the "
                             "channel dim of an interleaved layout) is not supported yet (tensormap.replace)")
    return tm


def _im2col_fields(raw: bytes, rank: int) -> dict | None:
    if raw[87] != 1:
        return None
    k = rank - 2
    f = struct.unpack_from("<3h3hHH", raw, 88)
    return {"lower": list(f[:k]), "upper": list(f[3:3 + k]), "channels": f[6], "pixels": f[7]}


def im2col_box(tm: dict, coords, offsets) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`tile_box`'s tuple for an im2col-mode load at ``coords`` (c, spatial .., n; signed) with the
    im2col ``offsets`` (one unsigned 16-bit value per spatial dim), as the module's docstring states."""
    ic, rank, es = tm["im2col"], tm["rank"], tm["esize"]
    k, dims = rank - 2, tm["dims"]
    lo = ic["lower"]
    hi = [dims[1 + d] - 1 + ic["upper"][d] for d in range(k)]
    step = list(tm.get("estrides", [1] * rank)[1:rank - 1]) + [1]  # D, H, W strided (5.5.4.2); n by 1
    pos = [int(coords[1 + d]) for d in range(k)] + [int(coords[rank - 1])]
    pix = []
    for _ in range(ic["pixels"]):
        pix.append(list(pos))
        pos[0] += step[0]
        for d in range(k):  # carry past the bounding box into the next dim (the last into n)
            if pos[d] > hi[d]:
                pos[d] = lo[d]
                pos[d + 1] += step[d + 1]
    pix = np.asarray(pix, np.int64)  # (pixels, k + 1)
    ch = int(coords[0]) + np.arange(ic["channels"], dtype=np.int64)
    xs = [np.broadcast_to(ch[None, :], (len(pix), ch.size))]
    xs += [np.broadcast_to((pix[:, d] + int(offsets[d]))[:, None], xs[0].shape) for d in range(k)]
    xs.append(np.broadcast_to(pix[:, k][:, None], xs[0].shape))
    addr = np.full(xs[0].shape, tm["address"], np.int64)
    inside = np.ones(xs[0].shape, bool)
    for d in range(rank):
        inside &= (xs[d] >= 0) & (xs[d] < dims[d])
        addr = addr + xs[d] * (es if d == 0 else tm["strides"][d - 1])
    offsets_b = np.arange(addr.size, dtype=np.int64) * es
    return addr.reshape(-1), inside.reshape(-1), offsets_b, (_FLOAT_NAN[tm["dtype"]] if tm["nan_fill"] else 0)


def im2col_store_check(tm: dict, coords) -> None:
    """What PTX ISA 9.7.9.25.5.1 requires of an im2col-mode (``.im2col_no_offs``) store, as ``TensorMapError``:
    non-negative coordinates, and the pixel box inside the tensor (lower corners >= 0, upper corners <= 0)."""
    ic = tm["im2col"]
    cs = [int(c) for c in coords]
    if min(cs) < 0:
        raise TensorMapError(f"an im2col-mode store at negative coordinates {tuple(cs)} (the .global.shared::cta "
                             "direction needs non-negative ones)")
    if min(ic["lower"]) < 0 or max(ic["upper"]) > 0:
        raise TensorMapError(f"an im2col-mode store through a map whose pixel box (lower corner {tuple(ic['lower'])}, "
                             f"upper corner {tuple(ic['upper'])}) leaves the tensor: the .global.shared::cta direction "
                             "needs lower corners >= 0 and upper corners <= 0")


def reduce_kind(op: str, dtype: int) -> tuple[str, int]:
    """(atomic kind, element bytes) of a tensor reduction ``op`` on elements of ``dtype``
    (``TensorMapError`` where PTX or xcc does not allow it)."""
    if dtype not in REDUCE_OK.get(op, ()):
        raise TensorMapError(f".{op} is not supported on a tensor of {DTYPE_NAMES.get(dtype, dtype)} elements")
    return REDUCE_KIND[dtype]


def box_elements(tm: dict) -> int:
    """Elements of a tile-mode box: ceil(box / elementStrides) in each dimension."""
    n = 1
    for b, st in zip(tm["box"], tm.get("estrides", [1] * tm["rank"])):
        n *= -(-b // st)
    return n


def tile_box(tm: dict, coords) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(global byte address of each box element, in-bounds mask, its byte offset in the shared box before
    swizzling, the fill value's bits) of a tile-mode load or store at ``coords`` (one signed int32 per
    dimension)."""
    rank, es, box = tm["rank"], tm["esize"], tm["box"]
    st = tm.get("estrides", [1] * rank)
    grids = np.meshgrid(*[np.arange(-(-box[d] // st[d]), dtype=np.int64) * st[d] for d in reversed(range(rank))],
                        indexing="ij")
    idx = [g.reshape(-1) for g in reversed(grids)]  # idx[d]: offset j * elementStrides[d] in dim d, dim 0 fastest
    addr = np.full(idx[0].size, tm["address"], np.int64)
    inside = np.ones(idx[0].size, bool)
    for d in range(rank):
        x = int(coords[d]) + idx[d]
        inside &= (x >= 0) & (x < tm["dims"][d])
        addr += x * (es if d == 0 else tm["strides"][d - 1])
    offsets = np.arange(idx[0].size, dtype=np.int64) * es
    return addr, inside, offsets, (_FLOAT_NAN[tm["dtype"]] if tm["nan_fill"] else 0)


def swizzle(addr: np.ndarray, span: int) -> np.ndarray:
    """Shared addresses with the ``span``-byte swizzle applied (16-byte chunk bits XOR bits 7 ..)."""
    if not span:
        return addr
    bits = (span // 16).bit_length() - 1
    mask = (1 << bits) - 1
    return addr ^ (((addr >> 7) & mask) << 4)
