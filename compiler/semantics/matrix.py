"""Warp-level matrix operations (PTX ISA 9.0 section 9.7.14): fragment layouts and the arithmetic of
``mma.sync.aligned``, ``ldmatrix`` and ``wmma`` on m16n16k16, vectorised over warps with numpy.

Every function works on whole warps: a fragment is an array ``[W, 32, R]`` of 32-bit register bit
patterns (``W`` warps, lane, register), a matrix ``[W, rows, cols]`` of element bit patterns.

**Fragment layouts** (``groupID = lane >> 2``, ``tig = lane % 4``; element ``i`` of a lane's fragment
is packed low to high, ``32 / bits`` elements per register):

* ``mma.m16n8k16`` .f16/.bf16 (9.7.14.5.8): A ``a0..a7`` at row ``groupID + 8*((i >> 1) & 1)``, column
  ``2*tig + (i & 1) + 8*(i >> 2)``; B ``b0..b3`` at row ``2*tig + (i & 1) + 8*(i >> 1)``, column
  ``groupID``; C/D ``c0..c3`` at row ``groupID + 8*(i >> 1)``, column ``2*tig + (i & 1)``.
* ``mma.m16n8k8`` .f16/.bf16 (9.7.14.5.7): A ``a0..a3`` at row ``groupID + 8*(i >> 1)``, column
  ``2*tig + (i & 1)``; B ``b0, b1`` at row ``2*tig + i``, column ``groupID``; C/D as m16n8k16.
* ``mma.m16n8k32`` .s8/.u8 and .e4m3/.e5m2 (9.7.14.5.10, the same layout for every 8-bit type): A ``a0..a15`` at row ``groupID + 8*((i >> 2) & 1)``, column
  ``4*tig + (i & 3) + 16*(i >> 3)``; B ``b0..b7`` at row ``4*tig + (i & 3) + 16*(i >> 2)``, column
  ``groupID``; C/D (.s32, .f32, .f16) as m16n8k16.
* ``mma.m16n8k8`` / ``mma.m16n8k4`` .tf32 (9.7.14.5.7, 9.7.14.5.6; layout key ``shape.tf32``, see
  :func:`layout_key`): A ``a0..a3`` (k4: ``a0, a1``) at row ``groupID + 8*(i & 1)``, column ``tig + 4*(i >> 1)``;
  B ``b0, b1`` (k4: ``b0``) at row ``tig + 4*i``, column ``groupID``; C/D as m16n8k16.
* ``wmma.m16n16k16`` .f16 (and .bf16 with .f32 accumulators: the same layout, but its A and B fragments are
  4 registers, the distinct elements, as nvcc declares them): PTX leaves the layout unspecified (9.7.14.4.1).  xcc uses the one of
  NVIDIA's sm_80 code generation, where ``wmma.mma`` becomes two ``m16n8k16`` operations (as mapped
  by the WMMA extension library's ``detail/sm_80.hpp``): A elements ``0..7`` are the m16n8k16 A
  fragment and elements ``8..15`` repeat them; B elements ``0..3`` are the m16n8k16 B fragment of
  columns 0-7 and ``4..7`` that of columns 8-15 (row ``2*tig + (i & 1) + 8*((i >> 1) & 1)``, column
  ``groupID + 8*(i >> 2)``), ``8..15`` repeat them; the accumulator's ``0..3`` and ``4..7`` are the
  m16n8 accumulators of columns 0-7 and 8-15 (row ``groupID + 8*((i >> 1) & 1)``, column
  ``2*tig + (i & 1) + 8*(i >> 2)``).  The fragment is the same for .row and .col (only the memory
  addressing of ``wmma.load``/``wmma.store`` differs); ``wmma.mma`` reads the first copy of a
  repeated element, as the two m16n8k16 operations do.

**Accumulation** (xcc's rule; PTX does not specify the order or the intermediate precision):

* .f16/.bf16 inputs: ``D = C + sum_k A[m,k] * B[k,n]`` computed exactly (every product of two
  f16/bf16 values is exact in binary64) and rounded once to the destination type (.f32 or .f16),
  round to nearest even, subnormals kept.  The sum is taken in binary64 with an error-free
  transformation (TwoSum) at each step; where an intermediate sum was inexact, the element is
  recomputed with Python integers, so the result is the correctly rounded exact value.  Infinite
  inputs follow IEEE (``inf - inf`` and ``0 * inf`` give NaN); a NaN result is the canonical NaN
  (``0x7FFFFFFF``, ``0x7FFF``).  NVIDIA tensor cores are reported to truncate during alignment
  (Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021), so a GPU can differ from this
  in the last bits: compare kernels with a tolerance.
* .e4m3/.e5m2 inputs (sm_89, any of the four A/B combinations, .f32 or .f16 accumulators): decoded
  exactly (OCP 8-bit floating point v1.0: e4m3 bias 7, no infinities, ``S.1111.111`` NaN, largest 448;
  e5m2 bias 15, IEEE-like with infinities and NaNs, largest 57344), then the .f16 rule above: every
  product of two FP8 values is exact in binary64 and the exact sum with C is rounded once.
* .tf32 inputs (m16n8k8, m16n8k4, .f32 accumulators): the upper 19 bits of each f32 register (the low 13
  mantissa bits ignored; a NaN stays a NaN), then the .f16 rule: products exact, the sum rounded once.
* .s8/.u8 inputs: exact integer products and sum; without ``.satfinite`` the result wraps modulo
  2^32, with ``.satfinite`` it is clamped to ``[-2^31, 2^31 - 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

_U32 = np.uint32
ELEM_BITS = {"f16": 16, "bf16": 16, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32, "tf32": 32}
FP8 = ("e4m3", "e5m2")


@dataclass(frozen=True)
class MmaShape:
    """One supported (shape, input types) combination: matrix sizes and fragment sizes."""

    name: str
    m: int
    n: int
    k: int
    inputs: tuple[str, ...]   # allowed .atype/.btype
    accums: tuple[str, ...]   # allowed .ctype/.dtype
    wmma: bool = False

    def regs(self, operand: str, etype: str) -> int:
        """Registers of ``operand`` ('a', 'b', 'c'/'d') for elements of ``etype``."""
        rows, _, distinct = layout(layout_key(self.name, etype), operand)
        # wmma .bf16 A/B fragments hold the distinct elements only (nvcc: 4 registers), .f16 the repeats too
        return (distinct if self.wmma and etype == "bf16" else len(rows[0])) * ELEM_BITS[etype] // 32


MMA_SHAPES = {
    "m16n8k16": MmaShape("m16n8k16", 16, 8, 16, ("f16", "bf16"), ("f32", "f16")),
    "m16n8k8": MmaShape("m16n8k8", 16, 8, 8, ("f16", "bf16", "tf32"), ("f32", "f16")),
    "m16n8k4": MmaShape("m16n8k4", 16, 8, 4, ("tf32",), ("f32",)),
    "m16n8k32": MmaShape("m16n8k32", 16, 8, 32, ("s8", "u8", "e4m3", "e5m2"), ("s32", "f32", "f16")),
    "m16n16k16": MmaShape("m16n16k16", 16, 16, 16, ("f16", "bf16"), ("f32", "f16"), wmma=True),
}


def layout_key(shape: str, etype: str) -> str:
    """The :func:`layout` key of ``shape``'s fragments of element type ``etype``: 32-bit (.tf32) A and B
    fragments have their own layouts (``shape.tf32``)."""
    return f"{shape}.tf32" if etype == "tf32" else shape


@cache
def layout(shape: str, operand: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(rows ``[32, E]``, columns ``[32, E]``, distinct elements per lane) of ``operand`` ('a', 'b',
    'c' or 'd') of ``shape``: where element ``i`` of lane ``l``'s fragment lies in the matrix (A is
    m x k, B k x n, C/D m x n).  Elements at or past the distinct count repeat earlier ones."""
    lane = np.arange(32)[:, None]
    g, t = lane >> 2, lane & 3
    op = "c" if operand == "d" else operand
    wide = shape == "m16n16k16"
    if shape in ("m16n8k16", "m16n16k16"):
        if op == "a":  # wmma: elements 8..15 repeat 0..7
            i = np.arange(16 if wide else 8)[None, :] % 8
            return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2), 8
        if op == "b":  # wmma: 0..3 columns 0-7, 4..7 columns 8-15, 8..15 repeat 0..7
            i = np.arange(16 if wide else 4)[None, :] % 8
            return 2 * t + (i & 1) + 8 * ((i >> 1) & 1), g + 8 * (i >> 2), 8 if wide else 4
        i = np.arange(8 if wide else 4)[None, :]
        return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2), i.size
    if shape in ("m16n8k8.tf32", "m16n8k4.tf32", "m16n8k4"):  # CUTLASS SM80_16x8x{8,4}_F32TF32TF32F32_TN
        if op == "a":
            i = np.arange(4 if shape == "m16n8k8.tf32" else 2)[None, :]
            return g + 8 * (i & 1), t + 4 * (i >> 1), i.size
        if op == "b":
            i = np.arange(2 if shape == "m16n8k8.tf32" else 1)[None, :]
            return t + 4 * i, g + 0 * i, i.size
        return layout("m16n8k16", "c")
    if shape == "m16n8k8":
        if op == "a":
            i = np.arange(4)[None, :]
            return g + 8 * (i >> 1), 2 * t + (i & 1), 4
        if op == "b":
            i = np.arange(2)[None, :]
            return 2 * t + i, g + 0 * i, 2
        return layout("m16n8k16", "c")
    if shape == "m16n8k32":
        if op == "a":
            i = np.arange(16)[None, :]
            return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3), 16
        if op == "b":
            i = np.arange(8)[None, :]
            return 4 * t + (i & 3) + 16 * (i >> 2), g + 0 * i, 8
        return layout("m16n8k16", "c")
    raise ValueError(f"no fragment layout for shape {shape!r}")


def unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    """``[..., R]`` 32-bit registers -> ``[..., R * 32/bits]`` element bit patterns, low element first."""
    regs = np.asarray(regs).astype(_U32)
    per = 32 // bits
    sh = (np.arange(per) * bits).astype(_U32)
    el = (regs[..., None] >> sh) & _U32((1 << bits) - 1) if bits < 32 else regs[..., None]
    return el.reshape(regs.shape[:-1] + (regs.shape[-1] * per,))


def pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """``[..., E]`` element bit patterns -> ``[..., E * bits/32]`` 32-bit registers (low element first)."""
    elems = np.asarray(elems).astype(_U32)
    per = 32 // bits
    el = elems.reshape(elems.shape[:-1] + (elems.shape[-1] // per, per))
    sh = (np.arange(per) * bits).astype(_U32)
    return np.bitwise_or.reduce(el << sh, axis=-1).astype(_U32)


def gather(shape: str, operand: str, regs: np.ndarray, etype: str) -> np.ndarray:
    """A warp's fragments ``[W, 32, R]`` -> the matrix ``[W, rows, cols]`` of element bit patterns
    (the first copy of a repeated element)."""
    rows, cols, distinct = layout(shape, operand)
    rows, cols = np.broadcast_arrays(rows, cols)
    el = unpack(regs, ELEM_BITS[etype])[:, :, :distinct]
    rows, cols = rows[:, :distinct], cols[:, :distinct]
    out = np.zeros((el.shape[0], int(rows.max()) + 1, int(cols.max()) + 1), el.dtype)
    out[:, rows, cols] = el
    return out


def scatter(shape: str, operand: str, matrix: np.ndarray, etype: str) -> np.ndarray:
    """The matrix ``[W, rows, cols]`` -> each lane's fragment ``[W, 32, R]`` (repeats filled in)."""
    rows, cols = np.broadcast_arrays(*layout(shape, operand)[:2])
    return pack(np.asarray(matrix)[:, rows, cols], ELEM_BITS[etype])


# ============================================================================= arithmetic
_FORMATS = {"f32": (24, -126, 127), "f16": (11, -14, 15)}  # precision, min normal exponent, max exponent
_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}


@cache
def fp8_values(etype: str) -> np.ndarray:
    """The 256 values of ``etype`` (.e4m3 or .e5m2) as binary64, indexed by bit pattern (OCP FP8 v1.0)."""
    b = np.arange(256, dtype=np.uint16)
    if etype == "e5m2":  # the upper byte of an f16
        return (b << np.uint16(8)).view(np.float16).astype(np.float64)
    e, m = (b >> 3) & 15, (b & 7).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(m, -9), np.ldexp(8.0 + m, e.astype(np.int64) - 10))
    mag = np.where((b & 0x7F) == 0x7F, np.nan, mag)
    return np.where(b & 0x80, -mag, mag)


def to_float64(bits: np.ndarray, etype: str) -> np.ndarray:
    """Element bit patterns of ``etype`` (.f16, .bf16, .f32, .e4m3, .e5m2) -> exact binary64 values."""
    b = np.asarray(bits)
    if etype in FP8:
        return fp8_values(etype)[b.astype(np.int64) & 0xFF]
    if etype == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if etype == "bf16":
        return (b.astype(_U32) << _U32(16)).view(np.float32).astype(np.float64)
    if etype == "f32":
        return b.astype(_U32).view(np.float32).astype(np.float64)
    if etype == "tf32":  # the upper 19 bits of an f32; a NaN stays a NaN whatever bits carry its payload
        b = b.astype(_U32)
        nan = (b & _U32(0x7FFFFFFF)) > _U32(0x7F800000)
        return np.where(nan, np.nan, (b & _U32(0xFFFFE000)).view(np.float32).astype(np.float64))
    raise ValueError(f"{etype} is not a floating-point matrix element type")


def round_exact(terms, dtype: str) -> float:
    """The exact sum of the binary64 values ``terms`` rounded once to ``dtype`` (.f32 or .f16), round
    to nearest even, with subnormals and overflow to infinity; an exact zero is +0."""
    p, emin, emax = _FORMATS[dtype]
    ratios = [float(t).as_integer_ratio() for t in terms]
    den = max(d for _, d in ratios)
    num = sum(n * (den // d) for n, d in ratios)
    if num == 0:
        return 0.0
    a, shift_den = abs(num), den.bit_length() - 1            # value = a / 2**shift_den
    e = a.bit_length() - 1 - shift_den                         # 2**e <= value < 2**(e+1)
    q = max(e, emin) - (p - 1)                                 # exponent of the result's last place
    drop = shift_den + q                                       # value / 2**q = a / 2**drop
    if drop <= 0:
        quot = a << -drop
    else:
        quot, rem = a >> drop, a & ((1 << drop) - 1)
        half = 1 << (drop - 1)
        if rem > half or (rem == half and quot & 1):
            quot += 1
    r = math.ldexp(quot, q)
    if r >= 2.0 ** (emax + 1):
        r = math.inf
    return -r if num < 0 else r


def _from_float64(v: np.ndarray, dtype: str) -> np.ndarray:
    """Exactly representable (or infinite) values -> bit patterns of ``dtype``."""
    with np.errstate(over="ignore"):
        if dtype == "f32":
            return v.astype(np.float32).view(_U32)
        return v.astype(np.float16).view(np.uint16)


def float_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: str) -> np.ndarray:
    """``D = A B + C`` on exact binary64 values ``a [W,M,K]``, ``b [W,K,N]``, ``c [W,M,N]``, each element
    the exact sum rounded once to ``dtype`` (.f32 or .f16); returns bit patterns ``[W,M,N]``."""
    with np.errstate(all="ignore"):
        prods = a[:, :, :, None] * b[:, None, :, :]           # [W, M, K, N], exact
        s = np.array(c, np.float64)
        inexact = np.zeros(s.shape, bool)
        for k in range(prods.shape[2]):
            p = prods[:, :, k, :]
            t = s + p                                          # TwoSum (Knuth): err = (s + p) - t exactly
            bp = t - s
            err = (s - (t - bp)) + (p - bp)
            inexact |= err != 0
            s = t
    finite = np.isfinite(s)  # inf and NaN: the binary64 sum is IEEE's, whatever the order
    slow = np.argwhere(inexact & finite)
    if slow.size:
        s = s.copy()
        for w, m, n in slow:
            s[w, m, n] = round_exact([c[w, m, n], *prods[w, m, :, n]], dtype)
        # the remaining (exact) values are rounded once by the conversion below
    out = _from_float64(s, dtype)
    nan = np.isnan(s)
    if nan.any():
        out = np.where(nan, out.dtype.type(_NAN[dtype]), out)
    return out


def int_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, satfinite: bool) -> np.ndarray:
    """``D = A B + C`` on integers (int64 ``a [W,M,K]``, ``b [W,K,N]``, ``c [W,M,N]``): exact, then
    wrapped modulo 2^32 or, with ``satfinite``, clamped to the .s32 range; returns uint32 patterns."""
    d = np.einsum("wmk,wkn->wmn", a.astype(np.int64), b.astype(np.int64)) + c.astype(np.int64)
    if satfinite:
        d = np.clip(d, -(2**31), 2**31 - 1)
    return (d & 0xFFFFFFFF).astype(_U32)


def _int_values(bits: np.ndarray, etype: str) -> np.ndarray:
    b = np.asarray(bits).astype(np.int64)
    w = ELEM_BITS[etype]
    if etype[0] == "s":
        b = np.where(b >= 1 << (w - 1), b - (1 << w), b)
    return b


def mma(shape: str, types: tuple[str, str, str, str], a_regs, b_regs, c_regs, satfinite: bool = False):
    """``mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype`` (9.7.14.5.14) on whole warps:
    fragments ``[W, 32, R]`` of A, B and C -> the D fragments ``[W, 32, Rd]``.  ``types`` is
    (dtype, atype, btype, ctype).  ``wmma.mma`` is the shape ``m16n16k16``."""
    dtype, atype, btype, ctype = types
    am = gather(layout_key(shape, atype), "a", a_regs, atype)
    bm = gather(layout_key(shape, btype), "b", b_regs, btype)
    cm = gather(shape, "c", c_regs, ctype)
    if atype in ("s8", "u8"):
        d = int_mma(_int_values(am, atype), _int_values(bm, btype), _int_values(cm, ctype), satfinite)
    else:
        d = float_mma(to_float64(am, atype), to_float64(bm, btype), to_float64(cm, ctype), dtype)
    return scatter(shape, "d", d, dtype)


# ============================================================================= ldmatrix
def ldmatrix(rows: np.ndarray, trans: bool) -> np.ndarray:
    """``ldmatrix.sync.aligned.m8n8.num{.trans}.b16`` (9.7.14.5.15) for one of the ``num`` matrices:
    ``rows [W, 8, 8]`` holds its 16-bit elements (row r from the address of lane ``8*i + r``); returns
    each lane's destination register ``[W, 32]``: lane ``t`` gets elements ``2*(t%4)`` and
    ``2*(t%4)+1`` of row ``t//4`` (low half first), or with ``.trans`` of column ``t//4`` (rows
    ``2*(t%4)``, ``2*(t%4)+1``)."""
    rows = np.asarray(rows).astype(_U32)
    t = np.arange(32)
    r, c = t // 4, 2 * (t % 4)
    if trans:
        lo, hi = rows[:, c, r], rows[:, c + 1, r]
    else:
        lo, hi = rows[:, r, c], rows[:, r, c + 1]
    return lo | (hi << _U32(16))


# ============================================================================= wmma memory layout
def wmma_offsets(operand: str, layout_name: str, stride) -> np.ndarray:
    """Element offsets ``[32, E]`` (or ``[n, 32, E]`` for per-thread ``stride``) from the base address of
    each element of each lane's m16n16k16 fragment of ``operand``: ``row*stride + col`` for .row,
    ``col*stride + row`` for .col (9.7.14.4.2)."""
    rows, cols = np.broadcast_arrays(*layout("m16n16k16", operand)[:2])
    st = np.asarray(stride, np.int64)[..., None, None]
    lead, minor = (rows, cols) if layout_name == "row" else (cols, rows)
    return lead * st + minor


def misaligned_rows(rows: np.ndarray, part: int, mask: int) -> tuple[str, int] | None:
    """``ldmatrix`` (PTX ISA 9.0 section 9.7.14.5.15): each row of an 8x8 ``.b16`` matrix is 16 bytes at the
    address one of the lanes ``8*part .. 8*part+7`` gives, and must be 16-byte aligned.  ``rows`` holds those
    addresses, one row of 8 per warp; returns (reason, thread of the warps' lanes) of the first misaligned
    one (shown masked with ``mask``), or None."""
    bad = (rows & 15) != 0
    if not bad.any():
        return None
    k = np.argwhere(bad)[0]
    return (f"misaligned ldmatrix row address {int(rows[k[0], k[1]]) & mask:#x}: each row of an 8x8 .b16 matrix "
            "is 16 bytes and must be 16-byte aligned", int(k[0]) * 32 + 8 * part + int(k[1]))
