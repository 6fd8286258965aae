"""Warpgroup matrix multiply-accumulate ``wgmma.mma_async`` (PTX ISA 9.0 section 9.7.15, "Asynchronous
Warpgroup Level Matrix Multiply-Accumulate Instructions").

``wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc, b-desc, scale-d, imm-scale-a,
imm-scale-b, imm-trans-a, imm-trans-b`` computes ``D = A*B + (scale-d ? D : 0)`` for A 64x16, B 16xN and D
64xN over one *warpgroup* (four consecutive warps of a CTA, 128 threads, executing it together).

* **Matrix descriptors** (9.7.15.5.1.1, "Matrix Descriptor Format"): a 64-bit value; bits 0-13 the start
  address, 16-29 the leading dimension byte offset (LBO), 32-45 the stride dimension byte offset (SBO),
  each stored as ``(x & 0x3FFFF) >> 4``; bits 49-51 the matrix base offset; bits 62-63 the swizzle mode
  (0 none, 1 128-byte, 2 64-byte, 3 32-byte).  xcc supports base offset 0 only (the swizzle pattern
  repeats from address 0, which is where the pattern of every aligned layout starts).
* **Shared memory layouts** (9.7.15.5.1.2, "Shared Memory Matrix Layout"): ``imm-trans-a``/``-b`` 0 means
  K-major (the K index runs along contiguous memory), 1 MN-major.  With ``e``-byte elements, ``T = 16/e``
  elements per 16-byte chunk and swizzle width ``W`` bytes, the canonical layouts (as CUTLASS's
  ``make_gmma_desc`` writes them) place element (``r``, ``k``) -- ``r`` the M row of A or the N column of
  B -- at start plus

  ======================  ====================================================================
  K-major, no swizzle     ``(r%8)*16 + (r/8)*SBO + (k%T)*e + (k/T)*LBO`` (8x16-byte core matrices)
  K-major, W swizzle      ``(r%8)*W + (r/8)*SBO + k*e`` (rows of W bytes; LBO unused)
  MN-major, no swizzle    ``(r%T)*e + (r/T)*SBO + (k%8)*16 + (k/8)*LBO``
  MN-major, W swizzle     ``(r%(W/e))*e + (r/(W/e))*LBO + (k%8)*W + (k/8)*SBO``
  ======================  ====================================================================

  and then swizzles the address: the 16-byte chunk number (address bits 4 and up) is XORed with address
  bits 7 and up, ``log2(W/16)`` bits of each (CUTLASS's ``Swizzle<3,4,3>``, ``<2,4,3>``, ``<1,4,3>``).
* **Accumulator fragments** (9.7.15.5.1, "Register Fragments", the D matrix of ``.m64nNk16``): thread ``t``
  of the warpgroup (warp ``w = t/32``, lane ``l = t%32``) holds ``N/2`` f32 registers; register ``i`` is
  element (``16w + l/4 + 8*((i/2)%2)``, ``8*(i/4) + 2*(l%4) + i%2``) of D.

Arithmetic (PTX leaves the order and the intermediate precision of the tensor core's sums open): every
product of two f16/bf16 values is exact in f64; the exact sum of the 16 products and the f32 accumulator (or
0 when ``scale-d`` is false) is rounded once to f32 (nearest even): :func:`xcc.semantics.matrix.float_mma`,
the rule mma.sync uses.
``imm-scale-a``/``-b`` = -1 negate A/B.

FP8 (``wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2} d, a-desc, b-desc, scale-d,
imm-scale-a, imm-scale-b``): K = 32 one-byte elements, both operands K-major (PTX has no imm-trans operands for
8-bit types), the same layouts with ``e = 1`` (``T = 16``), each FP8 value decoded exactly (OCP FP8 v1.0, as
:func:`xcc.semantics.matrix.to_float64`) and the same rule: the exact sum of the 32 products and the
accumulator rounded once to f32.

TF32 (``wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 d, a-desc, b-desc, scale-d, imm-scale-a,
imm-scale-b``): K = 8 four-byte elements, both operands K-major, the same layouts with ``e = 4`` (``T = 4``);
each element read as the upper 19 bits of its f32 (:func:`xcc.semantics.matrix.to_float64`, as tf32 mma.sync),
products exact, the exact sum of the 8 products and the accumulator rounded once to f32.

Integer (``wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite} d, a-desc, b-desc, scale-d``):
K = 32 bytes, both K-major, the same layouts with ``e = 1``; the exact sum of the 32 products and the .s32
accumulator (0 when ``scale-d`` is false) wraps modulo 2^32, or with ``.satfinite`` is clamped to the .s32 range
(:func:`int_part`), as integer mma.sync.  ``.b1`` (``m64nNk256.s32.b1.b1.and.popc``): K = 256 bits = 32 bytes, read
as bytes in the byte layouts, element ``8j + i`` being bit ``i`` of byte ``j`` (xcc's reading: the PTX ISA gives
the layouts in bytes); ``D = popc(A & B) + (scale-d ? C : 0)``, wrapping.

A in registers (``wgmma.mma_async... d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b{, imm-trans-b}``,
9.7.15.5.1.1, "Register Fragments"; no imm-trans-a): each thread holds four .b32 registers of A, packing ``p = 4/e``
elements each (low bits first; .b1: bytes of 8 elements, as above).  Register ``j``, element ``s`` of thread ``t``
(warp ``w``, lane ``l``) is A(``16w + l/4 + 8(j%2)``, ``p(l%4) + s + 4p(j/2)``): each warp holds 16 rows, and
registers 0 and 2 hold rows ``l/4``, 1 and 3 rows ``l/4 + 8`` -- the mma.sync A fragments m16n8k16 (f16/bf16),
m16n8k8 (tf32), m16n8k32 (8-bit) and m16n8k256 (.b1, xcc's reading by analogy) per warp.  An accumulator register
``part`` reads only rows of its own half ``(part/2)%2``, so one instruction's part needs just the pair of registers
(``half``, ``half + 2``) of every thread: :func:`register_a`.

A ``.f16`` accumulator (``m64nNk16.f16.f16.f16`` and ``m64nNk32.f16.{e4m3,e5m2}.{e4m3,e5m2}``; ptxas 13.0 rejects
``.f16.bf16.bf16``): ``N/4`` packed f16x2 registers per thread, register ``j`` holding elements ``2j`` (low half)
and ``2j+1`` (high half) of the f32 layout above; each element the exact sum of the products and its f16
accumulator rounded once to f16 (nearest even, subnormals kept, overflow to infinity; NaN ``0x7FFF``), the rule
mma.sync's f16 accumulators follow.

Sparse A (``wgmma.mma_async.sp.sync.aligned.m64nNk32.{f32,f16}.{f16,bf16}.{f16,bf16} d, a, b-desc, sp-meta, sp-sel,
scale-d, ...``, 9.7.15.6; also ``m64nNk16.f32.tf32.tf32``, ``m64nNk64.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}`` and
``m64nNk64.s32.{s8,u8}.{s8,u8}{.satfinite}``): the compressed A (64 x K) is laid out as a dense A of the kind's
dense K (descriptor or registers), B is 2K deep, and :func:`sparse_a` rebuilds the dense 64 x 2K A from the
metadata registers in the layout of the manual's sparse wgmma metadata (per warp the ``mma.sp`` layout of the same
kind: m16n8k32 f16, m16n8k16 tf32, m16n8k64 8-bit); not confirmed on a GPU for wgmma.sp.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xcc.semantics import matrix
from xcc.semantics.matrix import float_mma

M, K = 64, 16
SWIZZLE_BYTES = (0, 128, 64, 32)
"""Swizzle width in bytes of descriptor bits 62-63 (0: no swizzling)."""
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "tf32": 4, "s8": 1, "u8": 1, "b1": 1}
"""Bytes per element as the layouts see it; .b1 is read a byte (8 elements, element 8j + i at bit i) at a time."""


def k_of(etype: str) -> int:
    """The K of one wgmma with A/B elements of ``etype``: 16 for .f16/.bf16, 32 for .e4m3/.e5m2/.s8/.u8, 8 for .tf32
    (32 bytes)."""
    return 32 // ELEMENT_BYTES[etype]


class Descriptor(NamedTuple):
    """The decoded fields of matrix descriptors (arrays, one per descriptor); addresses and offsets in bytes."""

    start: np.ndarray
    lbo: np.ndarray
    sbo: np.ndarray
    base_offset: np.ndarray
    swizzle: np.ndarray  # bytes: 0, 32, 64 or 128


def decode_descriptor(desc) -> Descriptor:
    d = np.asarray(desc).astype(np.uint64).astype(np.int64, casting="unsafe")
    field = lambda lo: ((d >> lo) & 0x3FFF) << 4  # noqa: E731
    sw = np.asarray(SWIZZLE_BYTES, np.int64)[(d >> 62) & 3]
    return Descriptor(field(0), field(16), field(32), (d >> 49) & 7, sw)


def swizzle(addr: np.ndarray, width: np.ndarray) -> np.ndarray:
    """``addr`` with its 16-byte chunk bits XORed with bits 7.. (``log2(width/16)`` bits; width 0: unchanged)."""
    mask = np.where(width > 0, width // 16 - 1, 0)
    return addr ^ (((addr >> 7) & mask) << 4)


def matrix_addresses(desc: Descriptor, rows: int, elem_bytes: int, k_major: bool, k: int = K) -> np.ndarray:
    """Shared-memory byte addresses, shape ``(G, rows, k)``, of element (r, k) of each of the ``G``
    descriptors' matrices (r: the M row of A or the N column of B)."""
    start, lbo, sbo, sw = (np.asarray(f, np.int64).reshape(-1, 1, 1) for f in
                           (desc.start, desc.lbo, desc.sbo, desc.swizzle))
    r = np.arange(rows, dtype=np.int64).reshape(1, -1, 1)
    kk = np.arange(k, dtype=np.int64).reshape(1, 1, -1)
    e, t = elem_bytes, 16 // elem_bytes
    w = np.maximum(sw, 16)  # a swizzled row's bytes (16 where unswizzled: unused there)
    if k_major:
        plain = (r % 8) * 16 + (r // 8) * sbo + (kk % t) * e + (kk // t) * lbo
        swz = (r % 8) * w + (r // 8) * sbo + kk * e
    else:
        per_row = w // e
        plain = (r % t) * e + (r // t) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
        swz = (r % per_row) * e + (r // per_row) * lbo + (kk % 8) * w + (kk // 8) * sbo
    return swizzle(start + np.where(sw > 0, swz, plain), sw)


def to_f64(bits: np.ndarray, etype: str) -> np.ndarray:
    """f16/bf16 (uint16), e4m3/e5m2 (uint8) or tf32 (uint32: the upper 19 bits) bit patterns as exact f64 values."""
    if etype in matrix.FP8 or etype == "tf32":
        return matrix.to_float64(bits, etype)
    if etype == "b1":  # bytes of 8 single-bit elements (int_part unpacks them)
        return np.asarray(bits, np.uint8).astype(np.float64)
    if etype in ("s8", "u8"):  # integers, exact in f64
        v = np.asarray(bits, np.uint8)
        return (v.view(np.int8) if etype == "s8" else v).astype(np.float64)
    bits = np.asarray(bits, np.uint16)
    if etype == "f16":
        return bits.view(np.float16).astype(np.float64)
    if etype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    raise ValueError(f"wgmma element type {etype}")


def register_a(pairs: np.ndarray, etype: str, half: int) -> np.ndarray:
    """A (G, 64, K) f64 from the register pairs of ``G`` warpgroups: ``pairs`` (G, 128) uint64, thread t's registers
    ``half`` (low word) and ``half + 2`` (high word) of its A fragment; the rows of the other half are 0 (no part of
    this half reads them)."""
    eb = ELEMENT_BYTES[etype]
    per, k = 4 // eb, k_of(etype)
    pairs = np.asarray(pairs, np.uint64)
    g = pairs.shape[0]
    t = np.arange(128)
    row = 16 * (t // 32) + (t % 32) // 4 + 8 * half
    words = np.stack([pairs & np.uint64(0xFFFFFFFF), pairs >> np.uint64(32)], axis=-1)  # (G, 128, 2): j/2
    shift = np.arange(per, dtype=np.uint64) * np.uint64(8 * eb)
    elems = (words[..., None] >> shift) & np.uint64((1 << (8 * eb)) - 1)  # (G, 128, 2, per)
    col = per * (t % 4)[:, None, None] + np.arange(per)[None, None, :] + 4 * per * np.arange(2)[None, :, None]
    bits = np.zeros((g, M, k), np.uint64)
    bits[:, np.broadcast_to(row[:, None, None], col.shape), col] = elems
    return to_f64(bits.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[eb]), etype)


def accumulator_coords(part: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of D that accumulator register ``part`` holds in each of the 128 threads of a warpgroup."""
    t = np.arange(128)
    w, lane = t // 32, t % 32
    row = 16 * w + lane // 4 + 8 * ((part // 2) % 2)
    col = 8 * (part // 4) + 2 * (lane % 4) + part % 2
    return row, col


def mma_part(a: np.ndarray, b: np.ndarray, part: int, c_bits: np.ndarray, scale_d: np.ndarray,
             acc: str = "f32") -> np.ndarray:
    """Accumulator element ``part`` of D = A*B (+ C) for ``G`` warpgroups, as f32 bits (or, ``acc`` = "f16", f16
    bits zero-extended to 32), shape ``(G, 128)``.

    ``a``: (G, 64, K) f64 (already scaled by imm-scale-a), ``b``: (G, N, K) f64 (B transposed, scaled),
    ``c_bits``: (G, 128) the threads' f32 accumulator bits (f16: the packed f16x2 register holding elements
    ``part & ~1`` in its low and ``part | 1`` in its high half), ``scale_d``: (G,) bool."""
    row, col = accumulator_coords(part)
    c_bits = np.asarray(c_bits, np.uint32)
    if acc == "f16":
        c = ((c_bits >> np.uint32(16 * (part % 2))) & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16)
    else:
        c = c_bits.view(np.float32)
    acc_v = np.where(np.asarray(scale_d, bool)[:, None], c.astype(np.float64), 0.0)
    g, k = a.shape[0], a.shape[2]
    n = g * row.size  # one 1x1 product per (warpgroup, thread): the same exactly rounded rule as mma.sync
    d = float_mma(a[:, row, :].reshape(n, 1, k), b[:, col, :].reshape(n, k, 1), acc_v.reshape(n, 1, 1), acc)
    return d.astype(np.uint32).reshape(g, row.size)


def int_part(a: np.ndarray, b: np.ndarray, part: int, c_bits: np.ndarray, scale_d: np.ndarray,
             satfinite: bool, b1: bool = False) -> np.ndarray:
    """Accumulator element ``part`` of the integer D = A*B (+ C) for ``G`` warpgroups, as uint32 bits ``(G, 128)``:
    ``a`` (G, 64, K), ``b`` (G, N, K) integer values (as f64), ``c_bits`` (G, 128) the threads' .s32 accumulators;
    the exact sum wraps modulo 2^32 or, with ``satfinite``, is clamped to the .s32 range.  ``b1``: ``a``, ``b`` hold
    bytes of single-bit elements and the product is ``popc(a & b)``."""
    row, col = accumulator_coords(part)
    if b1:  # .b1.and.popc: bytes -> bits (element 8j + i is bit i of byte j); popc(a & b) is their dot product
        a = np.unpackbits(a.astype(np.uint8), axis=-1, bitorder="little")
        b = np.unpackbits(b.astype(np.uint8), axis=-1, bitorder="little")
    dot = np.einsum("gtk,gtk->gt", a[:, row, :].astype(np.int64), b[:, col, :].astype(np.int64))
    c = np.asarray(c_bits, np.uint32).view(np.int32).astype(np.int64)
    d = dot + np.where(np.asarray(scale_d, bool)[:, None], c, 0)
    if satfinite:
        d = np.clip(d, -(2**31), 2**31 - 1)
    return (d & 0xFFFFFFFF).astype(np.uint32)


def sparse_a(compressed: np.ndarray, meta: np.ndarray, selector: int, etype: str = "f16") -> np.ndarray:
    """The dense A (G, 64, 2K) of ``wgmma.mma_async.sp`` from its compressed A (G, 64, K) (K = :func:`k_of` of
    ``etype``) and the warpgroup's metadata registers ``meta`` (G, 128); row ``r``: warp ``w = r/16``, ``g = r%8``,
    half ``h = (r%16)/8``.

    * .f16/.bf16 (m64nNk32): chunk ``j`` (dense columns 4j .. 4j+3, compressed 2j, 2j+1) has the nibble
      ``i1 << 2 | i0`` at bits ``16h + 4(j%4)`` of thread ``32w + 4g + 2*selector + j/4``; the compressed values land
      at columns ``4j + i0`` and ``4j + i1`` (i0 == i1, undefined in PTX: the first value wins), the rest are zeros.
    * .tf32 (m64nNk16, 1:2): the same in 16-bit units: chunk ``j`` is dense columns 2j, 2j+1 and compressed
      column j, its nibble (0x4 or 0xE; others undefined) at the same place; the value lands at ``2j + i0/2``.
    * 8-bit .e4m3/.e5m2/.s8/.u8 (m64nNk64, selector 0): chunk ``j`` (0 .. 15, dense 4j .., compressed 2j, 2j+1)
      has its nibble at bits ``4(j%8)`` of thread ``32w + 4g + 2(j/8) + h`` (per warp mma.sp m16n8k64's)."""
    compressed = np.asarray(compressed, np.float64)
    g_count, k = compressed.shape[0], compressed.shape[2]
    meta = np.asarray(meta, np.uint64).reshape(g_count, 128)
    byte = ELEMENT_BYTES[etype] == 1
    chunks = k if etype == "tf32" else k // 2  # a tf32 chunk holds 1 stored value, the others 2
    r = np.arange(M)[:, None]
    j = np.arange(chunks)[None, :]
    if byte:
        thread = 32 * (r // 16) + 4 * (r % 8) + 2 * (j // 8) + (r % 16) // 8
        shift = np.broadcast_to(4 * (j % 8), thread.shape).astype(np.uint64)
    else:
        thread = 32 * (r // 16) + 4 * (r % 8) + 2 * selector + j // 4  # (64, chunks)
        shift = (16 * ((r % 16) // 8) + 4 * (j % 4)).astype(np.uint64)
    nib = ((meta[:, thread] >> shift) & np.uint64(0xF)).astype(np.int64)  # (G, 64, chunks)
    gi, ri, ji = np.meshgrid(np.arange(g_count), np.arange(M), np.arange(chunks), indexing="ij")
    dense = np.zeros((g_count, M, 2 * k), np.float64)
    if etype == "tf32":
        dense[gi, ri, 2 * ji + ((nib & 3) >> 1)] = compressed[gi, ri, ji]
        return dense
    dense[gi, ri, 4 * ji + (nib >> 2)] = compressed[gi, ri, 2 * ji + 1]
    dense[gi, ri, 4 * ji + (nib & 3)] = compressed[gi, ri, 2 * ji]
    return dense
