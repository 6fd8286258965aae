"""Data-driven end-to-end cases for the example kernels in ``examples/``.

Each :class:`KernelCase` names a PTX file stem and the exact ``.entry`` name in
it, and a ``make(rng)`` function returning a :class:`Launch` (a NamedTuple, so
it also unpacks as ``grid, block, args, outputs, expected``). A case runs on
``examples/<stem>.<arch>.ptx`` for every arch in ``ARCHS``, unless it sets
``ptx_file`` (a path relative to ``examples/``, e.g. ``"llvm/vector_add.ptx"``
or ``"scan_sort.sm_80.lineinfo.ptx"``): then it runs on that one file, for the
one arch of its ``.target`` line (``case.archs``).

* ``grid`` / ``block``: 3-tuples of ints.
* ``args``: one entry per kernel parameter, in order. Buffers are numpy arrays
  (the harness copies them to the device; pointer parameters get their device
  address) and scalars are numpy scalars of the parameter's exact PTX type
  (``np.int32`` for ``.u32``/``int`` parameters, ``np.float32`` for ``.f32``).
* ``outputs``: indices into ``args`` of the buffers to read back.
* ``expected``: arg index -> numpy reference contents of that buffer after the
  launch (whole buffer, same dtype and length as the input array).

The references mirror the kernels exactly: int32/uint32 wrap-around, C
truncating division/remainder, float32 arithmetic. Output buffers are usually
longer than ``n`` and pre-filled with a sentinel so that a missing bounds guard
shows up as a changed tail. ``KernelCase.rtol`` is 0 for bit-exact results; it
is non-zero only where atomic ordering changes float rounding. ``KernelCase.atol`` is
non-zero for kernels built on CUDA's math library (``sinf``, ``expf``), whose results numpy
cannot reproduce bit for bit; ``KernelCase.shared_mem`` is the launch's dynamic shared memory.

``KernelCase.engines`` says where a case runs: ``("isa", "ir")`` (the default: compiled by the xg1
backend and run on the ISA interpreter, and on the IR interpreter, the two compared bit for bit) or
``("ir",)`` for a kernel the backend refuses (calls, predicate spilling, ...), checked against numpy on
the IR interpreter only. ``CASES`` are the backend's cases, ``IR_ONLY_CASES`` the others,
``ALL_CASES`` both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

if __name__ == "__main__":  # the case modules below import this one by name: give them this very module
    import sys

    sys.modules.setdefault("kernel_cases", sys.modules["__main__"])

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
ARCHS = ("sm_80", "sm_90")

Dim3 = tuple[int, int, int]

SENTINEL_I32 = np.int32(-559038737)  # 0xDEADBEEF
SENTINEL_U32 = np.uint32(0xDEADBEEF)
SENTINEL_F32 = np.float32(-12345.5)


class Launch(NamedTuple):
    grid: Dim3
    block: Dim3
    args: list
    outputs: list[int]
    expected: dict[int, np.ndarray]


@dataclass(frozen=True)
class KernelCase:
    name: str
    ptx_stem: str
    entry: str
    make: Callable[[np.random.Generator], Launch]
    rtol: float = 0.0  # 0.0 = compare bit-exactly
    ptx_file: str | None = None  # relative to examples/, for a file not named <stem>.<arch>.ptx
    # a known compiler bug (wrong result on the ISA interpreter): the tests that run the compiled
    # kernel (test_examples, the IR-vs-ISA differential) mark the case xfail(strict=True, reason=xfail)
    xfail: str | None = None
    # libm-style results (expf, sinf, ...) have no exact numpy reference: the reference check allows
    # |got - want| <= atol + rtol * |want|; the IR-vs-ISA differential stays bit-exact unless rtol is set
    atol: float = 0.0
    shared_mem: int = 0  # dynamic shared memory bytes of the launch
    # where the case runs: "isa" (compiled by the xg1 backend, on the ISA interpreter) and "ir" (the IR
    # interpreter); ("ir",) for kernels the backend refuses (calls, predicate spilling): no ISA test for them
    engines: tuple[str, ...] = ("isa", "ir")

    def __repr__(self) -> str:  # keeps pytest ids / failure output short
        return f"KernelCase({self.name})"

    @property
    def archs(self) -> tuple[str, ...]:
        """The archs the case runs for: ``ARCHS``, or the ``.target`` of its ``ptx_file``."""
        return ARCHS if self.ptx_file is None else (_target_of(EXAMPLES_DIR / self.ptx_file),)

    @property
    def default_arch(self) -> str:
        """``sm_80`` where the case has it, else its one arch (what the quick tests run)."""
        return "sm_80" if "sm_80" in self.archs else self.archs[0]


@cache
def _target_of(path: Path) -> str:
    m = re.search(r"^\s*\.target\s+(sm_\w+)", path.read_text(), re.M)
    assert m, f"{path}: no .target directive"
    return m.group(1)


def ptx_path(case: KernelCase, arch: str) -> Path:
    """Path of ``examples/<stem>.<arch>.ptx`` (arch like ``"sm_80"``), or of the case's
    ``ptx_file`` (then ``arch`` must be its one arch)."""
    if case.ptx_file is not None:
        if arch not in case.archs:
            raise ValueError(f"{case.name}: {case.ptx_file} is only built for {case.archs[0]}, not {arch}")
        return EXAMPLES_DIR / case.ptx_file
    return EXAMPLES_DIR / f"{case.ptx_stem}.{arch}.ptx"


def case_params(cases, arch: str | None = None) -> list:
    """``pytest.param``s of ``cases`` (xfail-marked where ``case.xfail`` is set), each for one
    arch: every arch of the case (``arch=None``, params are ``(case, arch)`` pairs), or the
    case's default arch (``arch="default"``, params are cases)."""
    import pytest

    out = []
    for case in cases:
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        if arch == "default":
            out.append(pytest.param(case, marks=marks, id=case.name))
        else:
            out += [pytest.param(case, a, marks=marks, id=f"{case.name}-{a}") for a in case.archs]
    return out


# --------------------------------------------------------------------------
# numpy helpers that reproduce device arithmetic exactly
# --------------------------------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _wrap_i32(v: np.ndarray) -> np.ndarray:
    """int64 -> int32 with two's-complement wrap-around."""
    return np.asarray(v, dtype=np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C integer division (truncates toward zero), in int64."""
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_rem(a: np.ndarray, b: int) -> np.ndarray:
    """C ``%`` (result has the sign of the dividend), in int64."""
    a = np.asarray(a, dtype=np.int64)
    return a - _c_div(a, b) * b


def fma_f32(a, x, y) -> np.ndarray:
    """Correctly rounded float32 fma(a, x, y) (what ``fma.rn.f32`` computes).

    a*x of two float32 values is exact in float64; the float64 add is exact up
    to an error term ``e`` (TwoSum). Rounding the float64 sum to float32 is then
    correct except when that sum sits exactly on a float32 rounding midpoint and
    ``e != 0``, in which case ``e`` decides the direction. (Plain
    ``np.float32(np.float64(a)*x + y)`` can double-round in those rare cases.)
    """
    a64 = np.float64(np.float32(a))
    x64 = np.asarray(x, dtype=np.float32).astype(np.float64)
    y64 = np.asarray(y, dtype=np.float32).astype(np.float64)
    p = a64 * x64  # exact
    s = p + y64
    bb = s - p
    e = (p - (s - bb)) + (y64 - bb)  # exact: p + y == s + e
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    fix = (e != 0) & (r64 != s) & np.isfinite(s)
    if fix.any():
        toward = np.where(s > r64, np.inf, -np.inf).astype(np.float32)
        other = np.nextafter(r, toward)
        mid = (r64 + other.astype(np.float64)) / 2  # exact in float64
        on_mid = fix & (s == mid)
        # exact value is s + e: beyond the midpoint (away from r) -> other
        go_other = on_mid & (np.sign(e) == np.sign(s - r64))
        r = np.where(go_other, other, r)
    return r


def mad_f32(a, x, y, fused: bool = True) -> np.ndarray:
    """``a * x + y`` in float32 as nvcc compiles it: one ``fma.rn.f32`` where it contracts (-O3), a rounded
    ``mul.f32`` then ``add.f32`` where it does not (``nvcc -G`` contracts nothing)."""
    if fused:
        return fma_f32(a, x, y)
    return (np.float32(a) * np.asarray(x, np.float32)).astype(np.float32) + np.asarray(y, np.float32)


# --------------------------------------------------------------------------
# case builders
# --------------------------------------------------------------------------


def _make_saxpy(rng: np.random.Generator, fused: bool = True) -> Launch:
    n, bs = 3001, 128
    grid = _ceil_div(n, bs)
    total = grid * bs + 7  # tail beyond n must stay untouched
    a = np.float32(rng.uniform(-4, 4))
    x = rng.uniform(-100, 100, total).astype(np.float32)
    y = rng.uniform(-100, 100, total).astype(np.float32)
    exp_y = y.copy()
    exp_y[:n] = mad_f32(a, x[:n], y[:n], fused)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, x, y], [3], {3: exp_y})


def _make_vector_add(rng: np.random.Generator) -> Launch:
    n, bs, grid = 3001, 128, 5  # 640 threads -> each runs the loop 4-5 times
    total = n + 13
    a = rng.standard_normal(total).astype(np.float32)
    b = rng.standard_normal(total).astype(np.float32)
    c = np.full(total, SENTINEL_F32, dtype=np.float32)
    exp_c = c.copy()
    exp_c[:n] = a[:n] + b[:n]  # float32 + float32 -> float32, round-to-nearest
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, c], [3], {3: exp_c})


def _make_block_reduce(rng: np.random.Generator) -> Launch:
    n, bs = 3000, 256  # kernel's shared array is 256 wide
    grid = _ceil_div(n, bs)
    total = grid * bs + 5  # values past n must be ignored
    data = rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32)  # sums wrap
    out = np.array([123456789], dtype=np.int32)  # atomicAdd accumulates into it
    exp = _wrap_i32(np.int64(out[0]) + data[:n].astype(np.int64).sum()).reshape(1)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out], [2], {2: exp})


def _make_block_reduce_f32(rng: np.random.Generator) -> Launch:
    n, bs = 2900, 256
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    data = rng.uniform(0.0, 1.0, total).astype(np.float32)
    data[n:] = 1000.0  # would be very visible if the i < n guard were wrong
    out = np.array([0.5], dtype=np.float32)
    exp = np.array([np.float64(out[0]) + data[:n].astype(np.float64).sum()], dtype=np.float32)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out], [2], {2: exp})


def _make_divergent_lanes(rng: np.random.Generator) -> Launch:
    n, bs = 1500, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    vals = rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32)
    vals[:8] = [0, -1, 1, -2, -(2**31), 2**31 - 1, -7, 7]
    vals[8:24] = rng.integers(-20, 20, 16)  # small values: signs of / and %
    out = np.full(total, SENTINEL_I32, dtype=np.int32)
    tid = np.arange(total) % bs  # threadIdx.x
    v = vals.astype(np.int64)
    res = np.where(
        tid & 1,
        _wrap_i32(v * 3 + 1),
        np.where(tid % 4 == 0, _wrap_i32(_c_div(v, 2) - 7), _wrap_i32(_c_rem(v, 5) + 100)),
    ).astype(np.int32)
    exp = out.copy()
    exp[:n] = res[:n]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), vals, out], [2], {2: exp})


def collatz_reference(vals: np.ndarray, cap: int = 1000) -> np.ndarray:
    """Steps of ``while (x > 1 && count < cap) x = (x & 1) ? 3*x+1 : x/2;`` in uint32."""
    x = np.asarray(vals, dtype=np.uint32).copy()
    count = np.zeros_like(x)
    active = x > 1
    while active.any():
        xa = x[active]
        xa = np.where(xa & 1, xa * np.uint32(3) + np.uint32(1), xa >> np.uint32(1))  # wraps
        x[active] = xa
        count[active] += 1
        active &= (x > 1) & (count < cap)
    return count


def _make_collatz(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    vals = rng.integers(1, 10000, total, dtype=np.int64).astype(np.uint32)
    # 0/1/2 take 0/0/1 steps; 27 -> 111, 837799 -> 524 steps;
    # 0xFFFFFFFF and 890747638 wrap around in 3x+1 (the latter takes 671 steps).
    special = [0, 1, 2, 3, 27, 837799, 0xFFFFFFFF, 0xAAAAAAAB, 890747638]
    vals[: len(special)] = special
    vals[n - 1] = 77031  # 350 steps, in the partial last block
    steps = np.full(total, SENTINEL_U32, dtype=np.uint32)
    exp = steps.copy()
    exp[:n] = collatz_reference(vals[:n])
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), vals, steps], [2], {2: exp})


def _make_transpose(rng: np.random.Generator) -> Launch:
    rows, cols = 70, 45
    tile, block_rows = 32, 8
    grid = (_ceil_div(cols, tile), _ceil_div(rows, tile), 1)
    src = rng.standard_normal((rows, cols)).astype(np.float32)
    pad = 16
    inp = np.concatenate([src.ravel(), np.full(pad, 777.0, dtype=np.float32)])
    out = np.full(rows * cols + pad, SENTINEL_F32, dtype=np.float32)
    exp = out.copy()
    exp[: rows * cols] = src.T.ravel()  # out is cols x rows, row-major
    return Launch(grid, (tile, block_rows, 1), [np.int32(rows), np.int32(cols), inp, out], [3], {3: exp})


def _make_histogram(rng: np.random.Generator) -> Launch:
    n, bs, grid = 3003, 128, 8  # 1024 threads: grid-stride; bs < 256 bins: bin loop strides
    data = rng.integers(0, 256, n + 9, dtype=np.int64).astype(np.uint8)
    data[:40] = 7  # one hot bin
    hist = rng.integers(0, 5, 256, dtype=np.int64).astype(np.uint32)  # accumulated into
    exp = hist + np.bincount(data[:n], minlength=256).astype(np.uint32)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, hist], [2], {2: exp})


def _make_warp_reduce(rng: np.random.Generator) -> Launch:
    n, bs = 950, 128  # warp 29 partial, warps 30-31 entirely past n (write 0)
    grid = _ceil_div(n, bs)
    total = grid * bs
    data = rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32)
    nwarps = total // 32
    sums = np.full(nwarps, SENTINEL_I32, dtype=np.int32)
    v = np.where(np.arange(total) < n, data.astype(np.int64), 0)
    exp = _wrap_i32(v.reshape(nwarps, 32).sum(axis=1))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, sums], [2], {2: exp})


def _bits_u64(v: np.ndarray) -> np.ndarray:
    """The 64 bits of each uint64 value, least significant first: shape (n, 64), uint8."""
    return ((np.asarray(v, np.uint64)[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)


def _popc(v, width: int) -> np.ndarray:
    return _bits_u64(v)[:, :width].sum(axis=1).astype(np.int64)


def _clz(v, width: int) -> np.ndarray:
    b = _bits_u64(v)[:, :width][:, ::-1]  # most significant first
    return np.where(b.any(axis=1), b.argmax(axis=1), width).astype(np.int64)


def _brev(v, width: int) -> np.ndarray:
    b = _bits_u64(v)[:, :width][:, ::-1].astype(np.uint64)
    return (b << np.arange(width, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)


def _bit_inputs(rng: np.random.Generator, total: int, dtype, width: int) -> np.ndarray:
    v = rng.integers(0, 2**width, total, dtype=np.uint64).astype(dtype)
    edges = [0, 1, 2**width - 1, 2 ** (width - 1), 2 ** (width - 1) - 1, 0x80, 2 ** (width // 2)]
    v[: len(edges)] = edges
    v[len(edges) : 2 * len(edges)] = rng.integers(0, 2**12, len(edges)).astype(dtype)  # many leading zeros
    return v


def _make_bit_ops_u32(rng: np.random.Generator) -> Launch:
    """out[6i + k]: popc, clz, brev, __byte_perm(x, y, 0x3715), __funnelshift_l(x, y, y & 63),
    __funnelshift_rc(x, y, y >> 24) (CUDA C Programming Guide, integer intrinsics)."""
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    x = _bit_inputs(rng, total, np.uint32, 32)
    y = _bit_inputs(rng, total, np.uint32, 32)[::-1].copy()
    y[20:40] = rng.integers(0, 64, 20).astype(np.uint32) | (rng.integers(0, 64, 20).astype(np.uint32) << 24)
    out = np.full(6 * total + 5, SENTINEL_U32, dtype=np.uint32)
    xv, yv = x[:n].astype(np.uint64), y[:n].astype(np.uint64)
    pair = (yv << np.uint64(32)) | xv  # {hi = y, lo = x}
    perm = np.zeros(n, np.uint64)
    for k, sel in enumerate((0x5, 0x1, 0x7, 0x3)):  # selector 0x3715, nibble k picks result byte k
        perm |= ((pair >> np.uint64(8 * sel)) & np.uint64(0xFF)) << np.uint64(8 * k)
    sl = yv & np.uint64(31)  # (y & 63) & 31
    fl = (pair << sl) >> np.uint64(32)
    sr = np.minimum(yv >> np.uint64(24), 32)
    fr = (pair >> sr) & np.uint64(0xFFFFFFFF)
    res = np.stack([_popc(xv, 32), _clz(xv, 32), _brev(xv, 32), perm, fl & np.uint64(0xFFFFFFFF), fr], axis=1)
    exp = out.copy()
    exp[: 6 * n] = res.astype(np.uint64).astype(np.uint32).ravel()
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y, out], [3], {3: exp})


def _make_bit_ops_u64(rng: np.random.Generator) -> Launch:
    """out[4i + k]: __popcll, __clzll, high word of __brevll, __ffsll of x[i]."""
    n, bs = 700, 64
    grid = _ceil_div(n, bs)
    total = grid * bs
    x = _bit_inputs(rng, total, np.uint64, 64)
    x[30:40] = np.uint64(1) << rng.integers(0, 64, 10).astype(np.uint64)  # one bit: ffs at every position
    out = np.full(4 * total + 3, SENTINEL_I32, dtype=np.int32)
    v = x[:n]
    low = _bits_u64(v)
    ffs = np.where(low.any(axis=1), low.argmax(axis=1) + 1, 0)
    res = np.stack([_popc(v, 64), _clz(v, 64), (_brev(v, 64) >> np.uint64(32)).astype(np.int64), ffs], axis=1)
    exp = out.copy()
    exp[: 4 * n] = _wrap_i32(res).ravel()
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, out], [2], {2: exp})


def _make_dp4a(rng: np.random.Generator) -> Launch:
    """out[i] = __dp4a(a, b, acc) on signed bytes; out2[i] = __dp2a_lo on unsigned halves and bytes."""
    n, bs = 900, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    a, b, acc = (rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32) for _ in range(3))
    a[:4] = [-1, 0x7F7F7F7F, -(2**31), 0x80808080 - 2**32]  # extreme bytes and halves
    b[:4] = [-1, 0x7F7F7F7F, -1, -(2**31)]
    acc[:4] = [2**31 - 1, -(2**31), 0, 5]  # the sums wrap
    out = np.full(total + 3, SENTINEL_I32, dtype=np.int32)
    out2 = np.full(total + 3, SENTINEL_U32, dtype=np.uint32)
    au, bu = a[:n].view(np.uint32).astype(np.int64), b[:n].view(np.uint32).astype(np.int64)

    def field(v, k, width, signed):
        f = (v >> (width * k)) & ((1 << width) - 1)
        return np.where(f >> (width - 1), f - (1 << width), f) if signed else f

    dot4 = sum(field(au, k, 8, True) * field(bu, k, 8, True) for k in range(4))
    dot2 = sum(field(au, k, 16, False) * field(bu, k, 8, False) for k in range(2))
    exp, exp2 = out.copy(), out2.copy()
    exp[:n] = _wrap_i32(acc[:n].astype(np.int64) + dot4)
    exp2[:n] = _wrap_i32(acc[:n].view(np.uint32).astype(np.int64) + dot2).view(np.uint32)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, acc, out, out2], [4, 5], {4: exp, 5: exp2})


def _make_gemm_f32(rng: np.random.Generator, fused: bool = True) -> Launch:
    """gemm_tiled_f32: C = A B through 16x16 tiles; acc is one fma chain over k (nvcc contracts
    ``acc += As[ty][k] * Bs[k][tx]``), including the zero-padded k past K."""
    m, n, k = 37, 29, 45  # none a multiple of 16: partial tiles in every dimension
    tile = 16
    a = rng.uniform(-2, 2, (m, k)).astype(np.float32)
    b = rng.uniform(-2, 2, (k, n)).astype(np.float32)
    pad = 9
    a_buf = np.concatenate([a.ravel(), np.full(pad, 555.0, np.float32)])
    b_buf = np.concatenate([b.ravel(), np.full(pad, 777.0, np.float32)])
    c = np.full(m * n + pad, SENTINEL_F32, dtype=np.float32)
    exp = c.copy()
    exp[: m * n] = _gemm_acc(a, b, fused).ravel()
    grid = (_ceil_div(n, tile), _ceil_div(m, tile), 1)
    return Launch(grid, (tile, tile, 1), [np.int32(m), np.int32(n), np.int32(k), a_buf, b_buf, c], [5], {5: exp})


def _gemm_acc(a: np.ndarray, b: np.ndarray, fused: bool = True) -> np.ndarray:
    """acc[r, c] = fma(A[r, k], B[k, c], acc) for k = 0, 1, ... up to K rounded up to 16 (zeros); a rounded
    multiply then add when not ``fused`` (``nvcc -G``)."""
    m, k = a.shape
    n = b.shape[1]
    kp = _ceil_div(k, 16) * 16
    ap = np.zeros((m, kp), np.float32)
    bp = np.zeros((kp, n), np.float32)
    ap[:, :k], bp[:k] = a, b
    acc = np.zeros((m, n), np.float32)
    for kk in range(kp):
        acc = mad_f32(ap[:, kk : kk + 1], bp[kk : kk + 1, :], acc, fused)
    return acc


def _make_gemm_alpha_beta(rng: np.random.Generator, fused: bool = True) -> Launch:
    """gemm_tiled_alpha_beta: C = fma(acc, alpha, C * beta) (nvcc: ``mul.f32`` then ``fma.rn.f32``)."""
    m, n, k = 21, 35, 19
    tile = 16
    alpha, beta = np.float32(rng.uniform(-2, 2)), np.float32(rng.uniform(-2, 2))
    a = rng.uniform(-2, 2, (m, k)).astype(np.float32)
    b = rng.uniform(-2, 2, (k, n)).astype(np.float32)
    pad = 7
    a_buf = np.concatenate([a.ravel(), np.full(pad, 555.0, np.float32)])
    b_buf = np.concatenate([b.ravel(), np.full(pad, 777.0, np.float32)])
    c0 = rng.uniform(-3, 3, m * n).astype(np.float32)
    c = np.concatenate([c0, np.full(pad, SENTINEL_F32, np.float32)])
    exp = c.copy()
    exp[: m * n] = mad_f32(_gemm_acc(a, b, fused).ravel(), alpha, c0 * beta, fused)  # fma(acc, alpha, C*beta)
    grid = (_ceil_div(n, tile), _ceil_div(m, tile), 1)
    args = [np.int32(m), np.int32(n), np.int32(k), alpha, beta, a_buf, b_buf, c]
    return Launch(grid, (tile, tile, 1), args, [7], {7: exp})


def _block_inclusive_scan(v: np.ndarray, bs: int) -> np.ndarray:
    """Per-block (``bs`` elements) inclusive int32 scan with wrap-around; ``len(v)`` a multiple of bs."""
    return _wrap_i32(np.cumsum(v.astype(np.int64).reshape(-1, bs), axis=1).ravel())


def _scan_inputs(rng: np.random.Generator, total: int) -> np.ndarray:
    v = rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32)  # sums wrap
    v[:64] = rng.integers(-100, 100, 64)  # and some small ones, readable in a failure
    return v


def _make_scan_hillis_steele(rng: np.random.Generator) -> Launch:
    n, bs = 700, 256  # blockDim.x must be 256; the last block is partial
    grid = _ceil_div(n, bs)
    total = grid * bs
    data = _scan_inputs(rng, total + 5)  # values past n must be read as 0
    out = np.full(total + 5, SENTINEL_I32, dtype=np.int32)
    sums = np.full(grid + 3, SENTINEL_I32, dtype=np.int32)
    scan = _block_inclusive_scan(np.where(np.arange(total) < n, data[:total], 0), bs)
    exp_out, exp_sums = out.copy(), sums.copy()
    exp_out[:n] = scan[:n]
    exp_sums[:grid] = scan.reshape(grid, bs)[:, -1]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out, sums], [2, 3], {2: exp_out, 3: exp_sums})


def _make_scan_warp(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 160  # 5 warps per block; 7 blocks, the last partial (its warps 1-4 past n)
    grid = _ceil_div(n, bs)
    total = grid * bs
    data = _scan_inputs(rng, total + 5)
    out = np.full(total + 5, SENTINEL_I32, dtype=np.int32)
    scan = _block_inclusive_scan(np.where(np.arange(total) < n, data[:total], 0), bs)
    exp = out.copy()
    exp[:n] = scan[:n]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out], [2], {2: exp})


def _make_scan_warp_1024(rng: np.random.Generator) -> Launch:
    n, bs = 1500, 1024  # 32 warps: the scan of the warp totals uses every lane of warp 0
    grid = _ceil_div(n, bs)
    total = grid * bs
    data = _scan_inputs(rng, total)
    out = np.full(total, SENTINEL_I32, dtype=np.int32)
    scan = _block_inclusive_scan(np.where(np.arange(total) < n, data, 0), bs)
    exp = out.copy()
    exp[:n] = scan[:n]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out], [2], {2: exp})


def _make_bitonic_sort(rng: np.random.Generator) -> Launch:
    n, bs, seg = 1200, 256, 512  # 3 segments, the last one 176 long (padded with INT_MAX)
    grid = _ceil_div(n, seg)
    data = rng.integers(-(2**31), 2**31, n + 6, dtype=np.int64).astype(np.int32)
    data[:40] = rng.integers(-3, 3, 40)  # many duplicates
    data[40:44] = [2**31 - 1, -(2**31), 2**31 - 1, -(2**31)]
    data[n - 3 : n] = 2**31 - 1  # INT_MAX among the tail segment's valid values
    data[n:] = SENTINEL_I32  # past n: never read nor written
    exp = data.copy()
    for base in range(0, n, seg):
        exp[base : min(base + seg, n)] = np.sort(data[base : min(base + seg, n)])
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data], [1], {1: exp})


# ---------------------------------------------------------------- LLVM NVPTX (examples/llvm)


def _make_llvm_vector_add(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 96
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    a = rng.standard_normal(total).astype(np.float32)
    b = rng.standard_normal(total).astype(np.float32)
    c = np.full(total, SENTINEL_F32, dtype=np.float32)
    exp = c.copy()
    exp[:n] = a[:n] + b[:n]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, b, c], [3], {3: exp})


def _make_llvm_saxpy_loop(rng: np.random.Generator) -> Launch:
    n, bs, grid = 2001, 64, 5  # 320 threads: 6-7 trips of the grid-stride loop each
    total = n + 11
    a = np.float32(rng.uniform(-4, 4))
    x = rng.uniform(-100, 100, total).astype(np.float32)
    y = rng.uniform(-100, 100, total).astype(np.float32)
    exp = y.copy()
    exp[:n] = fma_f32(a, x[:n], y[:n])  # llvm.fma.f32 -> fma.rn.f32
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, x, y], [3], {3: exp})


def _make_llvm_block_sum(rng: np.random.Generator) -> Launch:
    n, bs = 1100, 256  # ntid.x must be 256; the last block is partial
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    data = rng.integers(-(2**31), 2**31, total, dtype=np.int64).astype(np.int32)  # sums wrap
    out = np.full(grid + 3, SENTINEL_I32, dtype=np.int32)
    v = np.where(np.arange(grid * bs) < n, data[: grid * bs].astype(np.int64), 0)
    exp = out.copy()
    exp[:grid] = _wrap_i32(v.reshape(grid, bs).sum(axis=1))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), data, out], [2], {2: exp})


def _row_xor_sum_launch(rng: np.random.Generator, rows: int, m: int, bs: int) -> Launch:
    grid = _ceil_div(rows, bs)
    a = rng.integers(-(2**31), 2**31, rows * m + 7, dtype=np.int64).astype(np.int32)  # sums wrap
    out = np.full(grid * bs + 3, SENTINEL_I32, dtype=np.int32)
    j = np.arange(m, dtype=np.int64)
    exp = out.copy()
    exp[:rows] = _wrap_i32((a[: rows * m].astype(np.int64).reshape(rows, m) ^ j).sum(axis=1))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(rows), np.int32(m), a, out], [3], {3: exp})


def _make_llvm_row_xor_sum(rng: np.random.Generator) -> Launch:
    return _row_xor_sum_launch(rng, rows=150, m=37, bs=64)  # m % 4 == 1: unrolled loop plus remainder


def _make_llvm_row_xor_sum_short(rng: np.random.Generator) -> Launch:
    return _row_xor_sum_launch(rng, rows=70, m=3, bs=32)  # m < 4: the remainder loop only


# ---------------------------------------------------------------- Numba (examples/numba)


def _numba_array(a: np.ndarray, n: int) -> list:
    """The 7 parameters of a 1-D C-contiguous Numba array argument: meminfo, parent, nitems,
    itemsize, data, shape[0], strides[0] (``a`` may be longer than ``n``: a sentinel tail)."""
    return [np.uint64(0), np.uint64(0), np.int64(n), np.int64(a.itemsize), a, np.int64(n), np.int64(a.itemsize)]


def _make_numba_vector_add(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128  # the bound is c.size (c's nitems)
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    a = rng.standard_normal(total).astype(np.float32)
    b = rng.standard_normal(total).astype(np.float32)
    c = np.full(total, SENTINEL_F32, dtype=np.float32)
    exp = c.copy()
    exp[:n] = a[:n] + b[:n]
    args = _numba_array(a, n) + _numba_array(b, n) + _numba_array(c, n)
    return Launch((grid, 1, 1), (bs, 1, 1), args, [18], {18: exp})


def _ftz_f32(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < np.float32(2.0**-126), np.copysign(np.float32(0), x), x).astype(np.float32)


def gauss_sqrt_reference(x: np.ndarray, scale: np.float32) -> np.ndarray:
    """``sqrt(|x|) * exp(-x*x*scale)`` exactly as the kernel computes it: ``sqrt.rn.f32`` and
    libdevice's ``__nv_expf`` (as inlined in the PTX): with ``t = -x*x*scale``,
    ``j = floor(252 sat(fma(t, 1/(252 ln 2), 0.5)))``, ``f = fma(t, lo, fma(t, log2 e, 126 - j))``,
    ``2^f`` by ``ex2.approx.ftz.f32`` (modelled as the f64 ``exp2`` rounded to nearest, ftz),
    times ``2^(j - 126)`` made by shifting the bits of ``j + 0x1.8p23 + 1`` left by 23."""
    x = np.asarray(x, np.float32)
    f4 = np.sqrt(np.abs(x))
    f7 = -((x * x) * np.float32(scale))
    f10 = fma_f32(np.float32(np.uint32(0x3BBB989D).view(np.float32)), f7, np.float32(0.5))
    f11 = np.where(np.isnan(f10), np.float32(0), np.clip(f10, np.float32(0), np.float32(1))).astype(np.float32)
    f14 = (np.float64(12582913.0) + np.floor(f11.astype(np.float64) * 252.0)).astype(np.float32)  # fma.rm
    f16 = -(f14 + np.float32(-12583039.0))  # exact
    f18 = fma_f32(np.float32(np.uint32(0x3FB8AA3B).view(np.float32)), f7, f16)
    f20 = fma_f32(np.float32(np.uint32(0x32A57060).view(np.float32)), f7, f18)
    f21 = (f14.view(np.uint32) << np.uint32(23)).view(np.float32)
    f22 = _ftz_f32(np.exp2(_ftz_f32(f20).astype(np.float64)).astype(np.float32))
    return f4 * (f22 * f21)


def _make_numba_gauss_sqrt(rng: np.random.Generator) -> Launch:
    n, bs = 900, 128
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    scale = np.float32(0.37)
    x = rng.uniform(-8, 8, total).astype(np.float32)
    # zeros, a subnormal, 1, results near 1, underflow to a subnormal (t ~ -90) and to zero
    x[:10] = [0.0, -0.0, 1e-40, 1.0, -1.0, 0.01, 15.6, -15.58, 30.0, -100.0]
    out = np.full(total, SENTINEL_F32, dtype=np.float32)
    exp = out.copy()
    exp[:n] = gauss_sqrt_reference(x[:n], scale)
    args = _numba_array(x, n) + [scale] + _numba_array(out, n)
    return Launch((grid, 1, 1), (bs, 1, 1), args, [12], {12: exp})


# ---------------------------------------------------------------- f64, 64-bit atomics, match and redux


def fma_f64(a, x, y) -> np.ndarray:
    """Correctly rounded float64 fma(a, x, y), element by element with exact rationals."""
    from fractions import Fraction

    a, x, y = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64), np.asarray(y, np.float64))
    out = np.empty(a.shape, np.float64)
    for k in np.ndindex(a.shape):
        if not (np.isfinite(a[k]) and np.isfinite(x[k]) and np.isfinite(y[k])):
            out[k] = a[k] * x[k] + y[k]
            continue
        exact = Fraction(float(a[k])) * Fraction(float(x[k])) + Fraction(float(y[k]))
        out[k] = float(exact) if exact != 0 else a[k] * x[k] + y[k]  # float(Fraction) rounds to nearest even
    return out


def _make_daxpy_fma(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    a = np.float64(rng.standard_normal())
    x = rng.standard_normal(total) * 2.0 ** rng.integers(-40, 40, total)
    y = rng.standard_normal(total) * 2.0 ** rng.integers(-40, 40, total)
    exp = y.copy()
    exp[:n] = fma_f64(a, x[:n], y[:n])
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), a, x, y], [3], {3: exp})


def _make_f64_ops(rng: np.random.Generator) -> Launch:
    n, bs = 900, 128
    grid = _ceil_div(n, bs)
    total = grid * bs + 5
    x = rng.uniform(-50, 50, total)
    y = rng.uniform(-2, 10, total)
    x[:6] = [0.0, -0.0, 1e-310, -4.0, 2.5, 1e6]
    out = np.full(total, -12345.5)
    out_f32 = np.full(total, SENTINEL_F32, np.float32)
    out_i64 = np.full(total, -1, np.int64)
    exp, exp_f32, exp_i64 = out.copy(), out_f32.copy(), out_i64.copy()
    a, b = x[:n], y[:n]
    with np.errstate(all="ignore"):
        r = np.sqrt(np.abs(a)) + a / (b + 3.0) - a * b
    exp[:n] = r
    exp_f32[:n] = r.astype(np.float32)
    exp_i64[:n] = np.floor(r * 1000.0).astype(np.int64)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y, out, out_f32, out_i64], [3, 4, 5],
                  {3: exp, 4: exp_f32, 5: exp_i64})


def _make_dnorm_i64(rng: np.random.Generator) -> Launch:
    n, bs, grid = 3000, 64, 5
    threads = bs * grid
    x = rng.standard_normal(n + 7)
    partial = np.full(threads, -12345.5)
    exp = np.zeros(threads)
    for t in range(threads):
        acc = np.zeros(1)
        for i in range(t, n, threads):
            acc = fma_f64(x[i], x[i], acc)
        exp[t] = acc[0]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int64(n), x, partial], [2], {2: exp})


def _make_atomic_add_u64(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    x = rng.integers(0, 2**64, grid * bs, dtype=np.uint64)
    total = np.array([0x123456789ABCDEF0, 0xDEADBEEFDEADBEEF], np.uint64)
    exp = total.copy()
    exp[0] = np.uint64((int(total[0]) + sum(int(v) for v in x[:n])) % 2**64)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, total], [2], {2: exp})


def _make_atomic_add_f64(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128  # integer-valued doubles: every order of additions gives the same sum
    grid = _ceil_div(n, bs)
    x = rng.integers(-(2**30), 2**30, grid * bs).astype(np.float64)
    total = np.array([0.5, -12345.5])
    exp = total.copy()
    exp[0] = total[0] + x[:n].sum()
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, total], [2], {2: exp})


def _make_warp_match_any(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128  # the last warp is partly out of range (key -1)
    grid = _ceil_div(n, bs)
    total = grid * bs
    keys = rng.integers(0, 5, total).astype(np.int32)
    keys[:32] = 7  # one warp with a single group
    size = np.full(total, SENTINEL_I32, np.int32)
    leader = np.full(total, SENTINEL_I32, np.int32)
    exp_size, exp_leader = size.copy(), leader.copy()
    k = np.where(np.arange(total) < n, keys, -1)
    for w0 in range(0, total, 32):
        kw = k[w0:w0 + 32]
        for lane in range(32):
            i = w0 + lane
            if i >= n:
                continue
            same = np.flatnonzero(kw == kw[lane])
            exp_size[i] = same.size
            exp_leader[i] = int(same[0] == lane)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), keys, size, leader], [2, 3], {2: exp_size, 3: exp_leader})


def _make_warp_redux(rng: np.random.Generator) -> Launch:
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    total = grid * bs
    x = rng.integers(0, 2**32, total, dtype=np.uint32)
    x[:32] >>= np.uint32(20)
    nw = total // 32
    outs = [np.full(nw, SENTINEL_U32, np.uint32) for _ in range(4)]
    exps = [o.copy() for o in outs]
    v = np.where(np.arange(total) < n, x, 0).astype(np.uint64).reshape(nw, 32)
    valid = (np.arange(total) < n).reshape(nw, 32)
    exps[0][:] = (v.sum(axis=1) & 0xFFFFFFFF).astype(np.uint32)
    exps[1][:] = np.where(valid, v, 0xFFFFFFFF).min(axis=1).astype(np.uint32)
    exps[2][:] = v.max(axis=1).astype(np.uint32)
    exps[3][:] = np.bitwise_or.reduce(v, axis=1).astype(np.uint32)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, *outs], [2, 3, 4, 5],
                  {2 + k: e for k, e in enumerate(exps)})


def _make_numba_poly_clip(rng: np.random.Generator) -> Launch:
    n, bs, grid = 1500, 128, 4  # a grid-stride loop: fewer threads than elements
    x = rng.uniform(-2, 2, n + 3).astype(np.float32)
    coeffs = rng.standard_normal(6).astype(np.float32)
    lo, hi = np.float32(-1.5), np.float32(2.25)
    out = np.full(n + 3, SENTINEL_F32, np.float32)
    exp = out.copy()
    acc = np.zeros(n, np.float32)
    for c in coeffs:
        acc = fma_f32(x[:n], acc, np.full(n, c, np.float32))
    exp[:n] = np.where(acc < lo, lo, np.where(acc > hi, hi, acc))
    args = _numba_array(x, n) + _numba_array(coeffs, coeffs.size) + [lo, hi] + _numba_array(out, n)
    return Launch((grid, 1, 1), (bs, 1, 1), args, [20], {20: exp})


NUMBA_POLY_CLIP = (
    "_ZN8__main__9poly_clipB2v2B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5"
    "BnXagIAE5ArrayIfLi1E1C7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedEff5ArrayIfLi1E1C7mutable7alignedE"
)


# Numba's mangled entry names (the hash-like part encodes the module and the argument types)
NUMBA_VECTOR_ADD = (
    "_ZN8__main__10vector_addB2v1B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5"
    "BnXagIAE5ArrayIfLi1E1C7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedE"
)
NUMBA_GAUSS_SQRT = (
    "_ZN8__main__10gauss_sqrtB2v4B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSg"
    "J5BnXagIAE5ArrayIfLi1E1C7mutable7alignedEf5ArrayIfLi1E1C7mutable7alignedE"
)


# ---------------------------------------------------------------- memory spaces (generic, dynamic shared, local)


def _make_numba_block_sum(rng: np.random.Generator) -> Launch:
    """256-wide shared tree sum (module-scope ``.shared`` array whose address numba takes with mov.u64)."""
    n, bs = 1000, 256
    grid = _ceil_div(n, bs)
    inp = rng.standard_normal(n + 3).astype(np.float32)
    out = np.full(grid + 2, SENTINEL_F32, np.float32)
    tile = np.zeros(grid * bs, np.float32)
    tile[:n] = inp[:n]
    tile = tile.reshape(grid, bs)
    s = bs // 2
    while s:
        tile[:, :s] += tile[:, s:2 * s]
        s //= 2
    exp = out.copy()
    exp[:grid] = tile[:, 0]
    return Launch((grid, 1, 1), (bs, 1, 1), _numba_array(inp, n) + _numba_array(out, grid), [11], {11: exp})


NUMBA_BLOCK_SUM = (
    "_ZN8__main__9block_sumB2v3B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSg"
    "J5BnXagIAE5ArrayIfLi1E1C7mutable7alignedE5ArrayIfLi1E1C7mutable7alignedE"
)

ATTENTION_SEQ, ATTENTION_D = 40, 24


def _make_attention_row(rng: np.random.Generator) -> Launch:
    """transformer_ops attention_row: scores in ``extern __shared__ float p[]`` (dynamic shared memory)."""
    seq, d = ATTENTION_SEQ, ATTENTION_D
    q, k, v = (rng.standard_normal(seq * d).astype(np.float32) for _ in range(3))
    scale = np.float32(1 / np.sqrt(d))
    o = np.full(seq * d + 4, SENTINEL_F32, np.float32)
    s = (q.reshape(seq, d).astype(np.float64) @ k.reshape(seq, d).T.astype(np.float64)) * float(scale)
    p = np.exp(s - s.max(1, keepdims=True))
    want = (p / p.sum(1, keepdims=True)) @ v.reshape(seq, d).astype(np.float64)
    exp = o.copy()
    exp[:seq * d] = want.reshape(-1)
    return Launch((seq, 1, 1), (64, 1, 1), [np.int32(seq), np.int32(d), scale, q, k, v, o], [6], {6: exp})


def _make_timestep_embedding(rng: np.random.Generator) -> Launch:
    """diffusion_ops timestep_embedding with max_period 1 (every frequency exactly 1): large timesteps
    take sinf/cosf's Payne-Hanek reduction, which keeps its digits in a ``.local`` depot."""
    n, dim = 37, 16
    half = dim // 2
    t = np.concatenate([rng.uniform(-3e5, 3e5, n - 5), [0.0, 1.5, -2e7, 1e30, 105615.0]]).astype(np.float32)
    emb = np.full(n * dim + 3, SENTINEL_F32, np.float32)
    exp = emb.copy()
    view = exp[:n * dim].reshape(n, dim)
    view[:, :half] = np.sin(t.astype(np.float64))[:, None]
    view[:, half:] = np.cos(t.astype(np.float64))[:, None]
    return Launch((_ceil_div(n * half, 64), 1, 1), (64, 1, 1), [np.int32(n), np.int32(dim), np.float32(1.0), t, emb],
                  [4], {4: exp})


def _make_trig_f32(rng: np.random.Generator) -> Launch:
    """math_f32 trig_f32: sinf, cosf and sincosf over small and huge arguments (the latter through the
    ``.local`` depot of the Payne-Hanek reduction)."""
    n, bs = 300, 128
    x = np.concatenate([rng.uniform(-10, 10, 150), rng.uniform(-1e6, 1e6, 140), [0.0, -0.0, 1e38, -3e37, 7e5,
                        105615.0, 105616.0, 1e-20, 3.14159265, 2e4]]).astype(np.float32)
    outs = [np.full(n + 2, SENTINEL_F32, np.float32) for _ in range(3)]
    xd = x.astype(np.float64)
    exp = [o.copy() for o in outs]
    exp[0][:n], exp[1][:n] = np.sin(xd), np.cos(xd)
    hx = (np.float32(0.5) * x).astype(np.float64)
    exp[2][:n] = np.sin(hx) + np.cos(hx)
    return Launch((_ceil_div(n, bs), 1, 1), (bs, 1, 1), [np.int32(n), x, *outs], [2, 3, 4],
                  {2: exp[0], 3: exp[1], 4: exp[2]})



# ---------------------------------------------------------------- transformer_ops / diffusion_ops (f32 tensors)
#
# Where a kernel goes through CUDA's math library (expf, erff, tanhf, rsqrtf, sqrtf + rcp), the reference is the
# exact function in float64 and the case sets ``atol`` to a few float32 ulps of the output's magnitude (the
# libdevice expansions and the MUFU approximations are within 2 ulp; the float32 sums add a few more).


def _rows_launch_buffers(rng, rows: int, cols: int, lo=-3.0, hi=3.0):
    x = rng.uniform(lo, hi, rows * cols + 5).astype(np.float32)
    x[rows * cols:] = 1e30  # past the last row: never read
    y = np.full(rows * cols + 5, SENTINEL_F32, np.float32)
    return x, y


def _make_softmax_rows(rng: np.random.Generator) -> Launch:
    """softmax_rows: one warp per row; cols not a multiple of 32; one extra block past ``rows`` returns."""
    rows, cols = 7, 45
    x, y = _rows_launch_buffers(rng, rows, cols, -6, 6)
    xr = x[: rows * cols].reshape(rows, cols).astype(np.float64)
    e = np.exp(xr - xr.max(1, keepdims=True))
    exp = y.copy()
    exp[: rows * cols] = (e / e.sum(1, keepdims=True)).ravel()
    return Launch((rows + 1, 1, 1), (32, 1, 1), [np.int32(rows), np.int32(cols), x, y], [3], {3: exp})


def _make_layernorm_rows(rng: np.random.Generator) -> Launch:
    """layernorm_rows: one 128-thread block per row (cols 300: 2-3 columns per thread), rsqrtf (approx)."""
    rows, cols, eps = 5, 300, np.float32(1e-5)
    x, y = _rows_launch_buffers(rng, rows, cols)
    gamma = rng.uniform(0.5, 1.5, cols + 3).astype(np.float32)
    beta = rng.uniform(-1, 1, cols + 3).astype(np.float32)
    xr = x[: rows * cols].reshape(rows, cols).astype(np.float64)
    mean = xr.mean(1, keepdims=True)
    var = ((xr - mean) ** 2).mean(1, keepdims=True)
    exp = y.copy()
    exp[: rows * cols] = ((xr - mean) / np.sqrt(var + float(eps)) * gamma[:cols] + beta[:cols]).ravel()
    args = [np.int32(rows), np.int32(cols), eps, x, gamma, beta, y]
    return Launch((rows + 1, 1, 1), (128, 1, 1), args, [6], {6: exp})


def _make_rmsnorm_rows(rng: np.random.Generator) -> Launch:
    """rmsnorm_rows: 64-thread blocks, 1 / sqrtf(mean(x^2) + eps) (sqrt.rn, rcp.rn)."""
    rows, cols, eps = 6, 200, np.float32(1e-6)
    x, y = _rows_launch_buffers(rng, rows, cols)
    w = rng.uniform(0.5, 1.5, cols + 3).astype(np.float32)
    xr = x[: rows * cols].reshape(rows, cols).astype(np.float64)
    r = 1 / np.sqrt((xr * xr).mean(1, keepdims=True) + float(eps))
    exp = y.copy()
    exp[: rows * cols] = (xr * r * w[:cols]).ravel()
    return Launch((rows, 1, 1), (64, 1, 1), [np.int32(rows), np.int32(cols), eps, x, w, y], [5], {5: exp})


def _elementwise_launch(rng, fn, lo=-6.0, hi=6.0, edges=(0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 5.9, -5.9)) -> Launch:
    """``y[i] = fn(x[i])`` (float64 reference) for n = 1000 in blocks of 128, sentinel tails."""
    n, bs = 1000, 128
    grid = _ceil_div(n, bs)
    x = rng.uniform(lo, hi, grid * bs + 5).astype(np.float32)
    x[: len(edges)] = edges
    y = np.full(grid * bs + 5, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:n] = fn(x[:n].astype(np.float64))
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


def _gelu_erf_ref(v):
    from math import erf

    return 0.5 * v * (1 + np.vectorize(erf)(v * 0.70710678118654752))


def _make_gelu_erf(rng: np.random.Generator) -> Launch:
    return _elementwise_launch(rng, _gelu_erf_ref)


def _make_gelu_tanh(rng: np.random.Generator) -> Launch:
    return _elementwise_launch(rng, lambda v: 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v**3))))


def _make_silu(rng: np.random.Generator) -> Launch:
    return _elementwise_launch(rng, lambda v: v / (1 + np.exp(-v)), -20, 20, (0.0, -0.0, 1.0, -1.0, 19.5, -19.5,
                                                                               -87.0, 88.0))


def _conv2d_ref(x, w, bias, n_, cin, h, wd, cout, kh, kw, pad, fused: bool = True) -> np.ndarray:
    """The kernel's fma chain: acc = bias (or 0), then fma(x, w, acc) over ci, ky, kx, skipping the padding
    (a rounded multiply then add when not ``fused``: ``nvcc -G``)."""
    ho, wo = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    xs = x[: n_ * cin * h * wd].reshape(n_, cin, h, wd)
    ws = w[: cout * cin * kh * kw].reshape(cout, cin, kh, kw)
    acc = np.zeros((n_, cout, ho, wo), np.float32)
    if bias is not None:
        acc[:] = bias[None, :cout, None, None]
    for ci in range(cin):
        for ky in range(kh):
            for kx in range(kw):
                oy, ox = np.arange(ho), np.arange(wo)
                iy, ix = oy + ky - pad, ox + kx - pad
                okr, okc = (iy >= 0) & (iy < h), (ix >= 0) & (ix < wd)
                patch = xs[:, ci][:, np.clip(iy, 0, h - 1)][:, :, np.clip(ix, 0, wd - 1)]  # (n, ho, wo)
                new = mad_f32(patch[:, None], ws[None, :, ci, ky, kx, None, None], acc, fused)
                acc = np.where((okr[:, None] & okc[None, :])[None, None], new, acc)
    return acc.ravel()


def _conv2d_launch(rng: np.random.Generator, with_bias: bool, fused: bool = True) -> Launch:
    n_, cin, h, wd, cout, kh, kw, pad = 2, 3, 7, 6, 4, 3, 3, 1  # 2*4*7*6 = 336 outputs over 192 threads
    x = rng.uniform(-2, 2, n_ * cin * h * wd + 3).astype(np.float32)
    w = rng.uniform(-1, 1, cout * cin * kh * kw + 3).astype(np.float32)
    bias = rng.uniform(-1, 1, cout + 2).astype(np.float32)
    total = n_ * cout * h * wd
    y = np.full(total + 5, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:total] = _conv2d_ref(x, w, bias if with_bias else None, n_, cin, h, wd, cout, kh, kw, pad, fused)
    dims = [np.int32(v) for v in (n_, cin, h, wd, cout, kh, kw, pad)]
    return Launch((3, 1, 1), (64, 1, 1), [*dims, x, w, bias if with_bias else np.uint64(0), y], [11], {11: exp})


def _make_conv2d(rng: np.random.Generator) -> Launch:
    return _conv2d_launch(rng, True)


def _make_conv2d_nobias(rng: np.random.Generator) -> Launch:
    """bias == nullptr: acc starts at 0."""
    return _conv2d_launch(rng, False)


def _make_group_norm(rng: np.random.Generator) -> Launch:
    """group_norm_nchw: N=2, C=6, G=3 (2 channels a group), HW=35: 70 values over 64 threads, a shared tree
    reduction, var = E[x^2] - mean^2, rsqrtf (approx); one extra block past N*G returns."""
    n_, c, hw, g, eps = 2, 6, 35, 3, np.float32(1e-5)
    total = n_ * c * hw
    x = rng.uniform(-2, 2, total + 3).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, c + 1).astype(np.float32)
    beta = rng.uniform(-1, 1, c + 1).astype(np.float32)
    y = np.full(total + 3, SENTINEL_F32, np.float32)
    xg = x[:total].astype(np.float64).reshape(n_, g, -1)
    mean = xg.mean(2, keepdims=True)
    var = xg.var(2, keepdims=True)
    norm = ((xg - mean) / np.sqrt(var + float(eps))).reshape(n_, c, hw)
    exp = y.copy()
    exp[:total] = (norm * gamma[None, :c, None] + beta[None, :c, None]).ravel()
    args = [np.int32(n_), np.int32(c), np.int32(hw), np.int32(g), eps, x, gamma, beta, y]
    return Launch((n_ * g + 1, 1, 1), (64, 1, 1), args, [8], {8: exp})


def _make_upsample(rng: np.random.Generator) -> Launch:
    nc, h, w = 3, 5, 7
    bs = 64
    total = nc * 4 * h * w
    x = rng.standard_normal(nc * h * w + 3).astype(np.float32)
    y = np.full(total + 5, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:total] = x[: nc * h * w].reshape(nc, h, w).repeat(2, axis=1).repeat(2, axis=2).ravel()
    return Launch((_ceil_div(total, bs), 1, 1), (bs, 1, 1), [np.int32(nc), np.int32(h), np.int32(w), x, y], [4],
                  {4: exp})


# ---------------------------------------------------------------- math_f32


def _make_explog_pow(rng: np.random.Generator) -> Launch:
    """explog_pow_f32: y = expf(v) + logf(|v| + 1), z = powf(|v|, p) (libdevice expansions)."""
    n, bs = 500, 128
    grid = _ceil_div(n, bs)
    p = np.float32(1.7)
    x = rng.uniform(-3, 3, grid * bs + 3).astype(np.float32)
    x[:6] = [0.0, -0.0, 1.0, -1.0, 1e-30, 2.5]
    y, z = (np.full(grid * bs + 3, SENTINEL_F32, np.float32) for _ in range(2))
    v = x[:n].astype(np.float64)
    exp_y, exp_z = y.copy(), z.copy()
    exp_y[:n] = np.exp(v) + np.log(np.abs(v) + 1)
    exp_z[:n] = np.abs(v) ** float(p)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), p, x, y, z], [3, 4], {3: exp_y, 4: exp_z})


def _make_fast_intrinsics(rng: np.random.Generator) -> Launch:
    """fast_intrinsics_f32: __expf / d + __logf(|v| + 1) + __sinf(v) + rsqrtf(|v| + 1): MUFU approximations
    (ex2/lg2/sin/rsqrt.approx, div.approx), each within about 2^-21 (relative, or absolute for sin/lg2)."""
    n, bs = 500, 128
    grid = _ceil_div(n, bs)
    x = rng.uniform(-3, 3, grid * bs + 3).astype(np.float32)
    x[:4] = [0.0, -0.0, 1.0, -3.0]
    d = rng.uniform(0.5, 2, grid * bs + 3).astype(np.float32)
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    v = x[:n].astype(np.float64)
    exp = y.copy()
    exp[:n] = np.exp(v) / d[:n] + np.log(np.abs(v) + 1) + np.sin(v) + 1 / np.sqrt(np.abs(v) + 1)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, d, y], [3], {3: exp})


def _make_misc_math(rng: np.random.Generator) -> Launch:
    """misc_math_f32: tanhf + sqrtf + exp2f + log2f (float64 reference) plus floorf, ceilf, roundf (half away from
    zero), truncf of the float32 products and fmodf (exact in float32)."""
    n, bs = 500, 128
    grid = _ceil_div(n, bs)
    x = rng.uniform(-10, 10, grid * bs + 3).astype(np.float32)
    x[:12] = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 5.0, 0.2, 0.75, -0.75, 1 / 3, 2.6]  # roundf(4.5) = 5, fmod edges
    x[12:40] = (rng.integers(-40, 40, 28) / 4).astype(np.float32)  # halves and quarters: rounding ties
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    v = x[:n]
    vd = v.astype(np.float64)
    r64 = np.tanh(vd) + np.sqrt(np.abs(vd)) + np.exp2((np.float32(0.25) * v).astype(np.float64)) + np.log2(
        np.abs(vd) + 2)
    t15 = (np.float32(1.5) * v).astype(np.float64)
    rounded = np.copysign(np.floor(np.abs(t15) + 0.5), t15)
    r64 = r64 + np.floor(vd) + np.ceil((np.float32(0.5) * v).astype(np.float64)) + rounded + np.trunc(
        (np.float32(2.5) * v).astype(np.float64))
    r64 = r64 + np.fmod(v, np.float32(0.75)).astype(np.float64)
    exp = y.copy()
    exp[:n] = r64
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


# ---------------------------------------------------------------- atomics (order-independent results)


def _atomic_n(rng) -> tuple[int, int, int]:
    n, bs = 1000, 128
    return n, bs, _ceil_div(n, bs)


def _make_atomic_cas_fmax(rng: np.random.Generator) -> Launch:
    n, bs, grid = _atomic_n(rng)
    x = rng.uniform(-1e3, 1e3, grid * bs).astype(np.float32)
    x[n:] = 1e9  # past n: ignored
    result = np.array([-5e3, SENTINEL_F32], np.float32)
    exp = result.copy()
    exp[0] = max(result[0], x[:n].max())
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, result], [2], {2: exp})


def _make_atomic_cas_fmax_kept(rng: np.random.Generator) -> Launch:
    """Every x below the initial value: no CAS ever stores (the loop breaks at once)."""
    n, bs, grid = _atomic_n(rng)
    x = rng.uniform(-1e3, 1e3, grid * bs).astype(np.float32)
    result = np.array([1e3 + 0.5, SENTINEL_F32], np.float32)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, result], [2], {2: result.copy()})


def _make_atomic_min_max(rng: np.random.Generator) -> Launch:
    n, bs, grid = _atomic_n(rng)
    x = rng.integers(-(2**31), 2**31, grid * bs, dtype=np.int64).astype(np.int32)
    x[n:] = [2**31 - 1, -(2**31)] * ((grid * bs - n) // 2)  # past n: the extremes, ignored
    result = np.array([-(2**30), 2**30, SENTINEL_I32], np.int32)
    uresult = np.array([5, 0xF0000000, SENTINEL_U32], np.uint32)
    v, u = x[:n], x[:n].view(np.uint32)
    exp_r, exp_u = result.copy(), uresult.copy()
    exp_r[:2] = [max(result[0], v.max()), min(result[1], v.min())]
    exp_u[:2] = [max(uresult[0], u.max()), min(uresult[1], u.min())]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, result, uresult], [2, 3], {2: exp_r, 3: exp_u})


def _make_atomic_bitwise(rng: np.random.Generator) -> Launch:
    n, bs, grid = _atomic_n(rng)
    x = rng.integers(0, 2**32, grid * bs, dtype=np.uint64).astype(np.uint32)
    x[: n // 2] |= np.uint32(0x80000001)  # keeps bit 0 and 31 in the AND over the first half
    x[n:] = 0  # past n: would clear the AND
    bits = np.array([0xFFFFFFFF, 0x00010000, 0x12345678, SENTINEL_U32], np.uint32)
    exp = bits.copy()
    v = x[:n]
    exp[0] = bits[0] & np.bitwise_and.reduce(v)
    exp[1] = bits[1] | np.bitwise_or.reduce(v)
    exp[2] = bits[2] ^ np.bitwise_xor.reduce(v)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, bits], [2], {2: exp})


def _make_atomic_exch_unique(rng: np.random.Generator) -> Launch:
    n, bs, grid = _atomic_n(rng)
    nkeys = 300
    keys = rng.integers(0, nkeys, grid * bs).astype(np.int32)
    keys[n:] = nkeys + 1  # past n: would index seen's sentinel
    seen = np.zeros(nkeys + 3, np.int32)
    seen[::17] = 1  # already seen: not counted
    seen[nkeys:] = SENTINEL_I32
    count = np.array([7, SENTINEL_U32], np.uint32)
    used = np.unique(keys[:n])
    exp_seen, exp_count = seen.copy(), count.copy()
    exp_seen[used] = 1
    exp_count[0] = count[0] + np.count_nonzero(seen[used] == 0)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), keys, seen, count], [2, 3], {2: exp_seen, 3: exp_count})


def _make_atomic_sub_counters(rng: np.random.Generator) -> Launch:
    n, bs, grid = _atomic_n(rng)
    m = 13
    x = rng.integers(-(2**31), 2**31, grid * bs, dtype=np.int64).astype(np.int32)  # the sums wrap
    counters = rng.integers(-1000, 1000, m + 2).astype(np.int32)
    counters[m:] = SENTINEL_I32
    exp = counters.copy()
    sums = np.array([x[j:n:m].astype(np.int64).sum() for j in range(m)])
    exp[:m] = _wrap_i32(counters[:m].astype(np.int64) - sums)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), np.int32(m), x, counters], [3], {3: exp})


# ---------------------------------------------------------------- warp_vote


def _warp_vote_inputs(rng):
    n, bs = 300, 128  # 384 threads: warp 9 partial (12 lanes), warps 10-11 entirely past n
    grid = _ceil_div(n, bs)
    total = grid * bs
    x = rng.integers(-5, 5, total).astype(np.int32)
    x[:32] = 1  # all positive
    x[32:64] = -1  # none
    x[64:96] = np.where(np.arange(32) == 17, 3, 0)  # one lane
    x[n:] = 1  # past n: must vote false
    valid = np.arange(total) < n
    return n, bs, grid, total, x, valid


def _lane_masks(bits: np.ndarray) -> np.ndarray:
    """(total,) bools -> the uint32 ballot of each warp."""
    return (bits.reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)


def _make_warp_ballot(rng: np.random.Generator) -> Launch:
    n, bs, grid, total, x, valid = _warp_vote_inputs(rng)
    nw = total // 32
    masks = np.full(nw + 2, SENTINEL_U32, np.uint32)
    counts = np.full(nw + 2, SENTINEL_I32, np.int32)
    pred = valid & (x > 0)
    exp_m, exp_c = masks.copy(), counts.copy()
    exp_m[:nw] = _lane_masks(pred)
    exp_c[:nw] = pred.reshape(-1, 32).sum(1)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, masks, counts], [2, 3], {2: exp_m, 3: exp_c})


def _make_warp_any_all(rng: np.random.Generator) -> Launch:
    n, bs, grid, total, x, valid = _warp_vote_inputs(rng)
    nw = total // 32
    flags = np.full(nw + 2, SENTINEL_I32, np.int32)
    pred = (valid & (x > 0)).reshape(-1, 32)
    all_ = (pred | ~valid.reshape(-1, 32)).all(1)
    exp = flags.copy()
    exp[:nw] = pred.any(1).astype(np.int32) | (all_.astype(np.int32) << 1)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, flags], [2], {2: exp})


def _make_warp_activemask(rng: np.random.Generator) -> Launch:
    """PTX leaves the mask up to the implementation; xcc's rule (compiler/semantics/warp.py): the lanes of the
    warp that execute ``activemask`` together, i.e. here the in-range lanes with an odd ``in[i]``."""
    n, bs, grid, total, x, valid = _warp_vote_inputs(rng)
    out = np.full(total + 3, SENTINEL_U32, np.uint32)
    took = valid & (x & 1).astype(bool)
    exp = out.copy()
    exp[:n] = np.where(took, np.repeat(_lane_masks(took), 32), 0)[:n]
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, out], [2], {2: exp})


# ---------------------------------------------------------------- globals_misc


def _make_poly_constant(rng: np.random.Generator) -> Launch:
    """poly_constant with ``__constant__ poly_coeffs`` as loaded (zeros; tests/test_module_globals.py sets
    them from the host): every fma(v, 0, 0) is +0 (no inf/NaN input: an invalid fma's NaN bit pattern is the
    host's, 0xffc00000, where a GPU gives the canonical 0x7fffffff)."""
    n, bs = 300, 128
    grid = _ceil_div(n, bs)
    x = rng.uniform(-3, 3, grid * bs + 3).astype(np.float32)
    x[:4] = [-0.0, -2.0, 3e38, -1e-40]  # -0 * 0 + 0 = +0; huge and subnormal inputs (no inf: NaN bits differ)
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:n] = 0.0
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


def _make_lut_device_global(rng: np.random.Generator) -> Launch:
    """lut_device_global: y = lut[x & 7] * gain from initialised ``__device__`` data (lut = k^2, gain = 0.5)."""
    n, bs = 300, 128
    grid = _ceil_div(n, bs)
    x = rng.integers(-(2**31), 2**31, grid * bs + 3, dtype=np.int64).astype(np.int32)
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:n] = (x[:n] & 7).astype(np.float32) ** 2 * np.float32(0.5)
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


def _make_assert_kernel(rng: np.random.Generator) -> Launch:
    """assert_kernel with every x >= 0 (the assert holds; its ``__assertfail`` call keeps it off the backend):
    y = sqrtf(x), correctly rounded (sqrt.rn.f32)."""
    n, bs = 300, 128
    grid = _ceil_div(n, bs)
    x = rng.uniform(0, 100, grid * bs + 3).astype(np.float32)
    x[:4] = [0.0, -0.0, 2.0, 1e-40]
    x[n:] = -1.0  # past n: would fail the assert
    y = np.full(grid * bs + 3, SENTINEL_F32, np.float32)
    exp = y.copy()
    exp[:n] = np.sqrt(x[:n])
    return Launch((grid, 1, 1), (bs, 1, 1), [np.int32(n), x, y], [2], {2: exp})


# ---------------------------------------------------------------- Triton (examples/triton): IR interpreter only
#
# num_warps=4: a program is a 128-thread block (``.reqntid 128``); the PTX has two trailing scratch pointers
# (global and profile scratch) that these kernels never touch: they get null.

_TRITON_SCRATCH = [np.uint64(0), np.uint64(0)]


def _make_triton_vector_add(rng: np.random.Generator) -> Launch:
    n, block = 2500, 1024  # 3 programs, the last masked
    grid = _ceil_div(n, block)
    x = rng.standard_normal(grid * block + 3).astype(np.float32)
    y = rng.standard_normal(grid * block + 3).astype(np.float32)
    out = np.full(grid * block + 3, SENTINEL_F32, np.float32)
    exp = out.copy()
    exp[:n] = x[:n] + y[:n]
    return Launch((grid, 1, 1), (128, 1, 1), [x, y, out, np.int32(n), *_TRITON_SCRATCH], [2], {2: exp})


def _make_dyn_smem_reverse(rng: np.random.Generator) -> Launch:
    """dyn_smem_reverse: each block reverses its chunk of blockDim.x ints through extern __shared__ memory;
    n = 1000 with blocks of 96, so the tail block reverses a 40-element chunk."""
    n, block = 1000, 96
    grid = _ceil_div(n, block)
    data = rng.integers(-(2**31), 2**31, n + 5, dtype=np.int64).astype(np.int32)
    exp = data.copy()
    for base in range(0, n, block):
        exp[base:min(base + block, n)] = data[base:min(base + block, n)][::-1]
    return Launch((grid, 1, 1), (block, 1, 1), [np.int32(n), data], [1], {1: exp})


AFFINE = np.dtype([("n", "<i4"), ("scale", "<f4"), ("offset", "<f4"), ("stride", "<i4"), ("clamp_hi", "<f8")],
                  align=True)  # struct Affine of examples/fnptr_struct.cu: 24 bytes, aligned to 8


def _make_affine_struct(rng: np.random.Generator, fused: bool = True) -> Launch:
    """affine_struct(Affine p, x, y): the struct by value, as a numpy structured scalar."""
    n, stride = 300, 3
    p = np.array((n, 1.75, -0.25, stride, 1.5), AFFINE)[()]
    x = rng.standard_normal(n * stride).astype(np.float32)
    y = np.full(n + 4, SENTINEL_F32, np.float32)
    exp = y.copy()
    v = mad_f32(np.float32(1.75), x[::stride][:n], np.float32(-0.25), fused).astype(np.float64)  # nvcc -O3: fma
    exp[:n] = np.minimum(v, 1.5).astype(np.float32)
    return Launch((_ceil_div(n, 128), 1, 1), (128, 1, 1), [p, x, y], [2], {2: exp})


def _make_apply_fnptr(rng: np.random.Generator) -> Launch:
    """apply_fnptr: y[i] = fn_table[sel[i] % 3](x[i]) through function pointers."""
    n = 500
    sel = rng.integers(0, 1000, n).astype(np.int32)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.full(n + 4, SENTINEL_F32, np.float32)
    k = sel % 3
    exp = y.copy()
    exp[:n] = np.where(k == 0, x * x, np.where(k == 1, np.float32(-0.5) * x, np.abs(x) + np.float32(1)))
    return Launch((_ceil_div(n, 64), 1, 1), (64, 1, 1), [np.int32(n), sel, x, y], [3], {3: exp})


def _make_block_vote_counts(rng: np.random.Generator) -> Launch:
    """block_vote_counts: __syncthreads_count / _and / _or (bar.red) per block; the tail block is partial
    and one block is all non-zero, so _and is 1 somewhere."""
    n, block = 700, 128
    grid = _ceil_div(n, block)
    x = rng.integers(-50, 150, n).astype(np.int32)
    x[128:256] = rng.integers(1, 50, 128)  # block 1: all non-zero, none above 100
    out = np.full(3 * grid + 2, SENTINEL_I32, np.int32)
    exp = out.copy()
    v = np.zeros(grid * block, np.int64)
    v[:n] = x
    v = v.reshape(grid, block)
    exp[:3 * grid] = np.stack([(v > 0).sum(1), (v != 0).all(1), (v > 100).any(1)], 1).reshape(-1)
    return Launch((grid, 1, 1), (block, 1, 1), [np.int32(n), x, out], [2], {2: exp})


def _make_producer_consumer(rng: np.random.Generator) -> Launch:
    """producer_consumer: named barrier 1 with bar.arrive (producers) and bar.sync 1, 128 (consumers)."""
    grid = 5
    x = rng.standard_normal(64 * grid).astype(np.float32)
    out = np.full(64 * grid + 3, SENTINEL_F32, np.float32)
    exp = out.copy()
    exp[:64 * grid] = (x.reshape(grid, 64)[:, ::-1] * np.float32(2) + np.float32(1)).reshape(-1)
    return Launch((grid, 1, 1), (128, 1, 1), [x, out], [1], {1: exp})


def _make_triton_softmax_row(rng: np.random.Generator) -> Launch:
    """softmax_row: one program per row of n_cols = 700 (BLOCK_SIZE 1024, masked), row strides 710 / 720."""
    rows, cols, in_stride, out_stride = 4, 700, 710, 720
    x = rng.uniform(-8, 8, rows * in_stride).astype(np.float32)
    out = np.full(rows * out_stride, SENTINEL_F32, np.float32)
    xr = x.reshape(rows, in_stride)[:, :cols].astype(np.float64)
    e = np.exp(xr - xr.max(1, keepdims=True))
    exp = out.copy()
    exp.reshape(rows, out_stride)[:, :cols] = e / e.sum(1, keepdims=True)
    args = [out, x, np.int32(in_stride), np.int32(out_stride), np.int32(cols), *_TRITON_SCRATCH]
    return Launch((rows, 1, 1), (128, 1, 1), args, [0], {0: exp})


def _make_triton_layernorm(rng: np.random.Generator) -> Launch:
    """layernorm: one program per row, N = 600 of BLOCK_SIZE 1024 (masked), stride 610, rstd = 1 / sqrt."""
    rows, cols, stride, eps = 3, 600, 610, np.float32(1e-5)
    x = rng.uniform(-3, 3, rows * stride).astype(np.float32)
    y = np.full(rows * stride, SENTINEL_F32, np.float32)
    w = rng.uniform(0.5, 1.5, cols + 2).astype(np.float32)
    b = rng.uniform(-1, 1, cols + 2).astype(np.float32)
    xr = x.reshape(rows, stride)[:, :cols].astype(np.float64)
    mean = xr.mean(1, keepdims=True)
    var = ((xr - mean) ** 2).mean(1, keepdims=True)
    exp = y.copy()
    exp.reshape(rows, stride)[:, :cols] = (xr - mean) / np.sqrt(var + float(eps)) * w[:cols] + b[:cols]
    args = [x, y, w, b, np.int32(stride), np.int32(cols), eps, *_TRITON_SCRATCH]
    return Launch((rows, 1, 1), (128, 1, 1), args, [1], {1: exp})


OP_CASES = [
    KernelCase("softmax_rows", "transformer_ops", "_Z12softmax_rowsiiPKfPf", _make_softmax_rows, atol=1.2e-7),
    KernelCase("layernorm_rows", "transformer_ops", "_Z14layernorm_rowsiifPKfS0_S0_Pf", _make_layernorm_rows,
               atol=1e-6),
    KernelCase("rmsnorm_rows", "transformer_ops", "_Z12rmsnorm_rowsiifPKfS0_Pf", _make_rmsnorm_rows, atol=1e-6),
    KernelCase("gelu_erf", "transformer_ops", "gelu_erf", _make_gelu_erf, atol=1.5e-6),
    KernelCase("gelu_tanh", "transformer_ops", "_Z9gelu_tanhiPKfPf", _make_gelu_tanh, atol=1.5e-6),
    KernelCase("silu", "transformer_ops", "_Z4siluiPKfPf", _make_silu, atol=4e-6),
    KernelCase("conv2d_nchw", "diffusion_ops", "_Z11conv2d_nchwiiiiiiiiPKfS0_S0_Pf", _make_conv2d),
    KernelCase("conv2d_nchw_nobias", "diffusion_ops", "_Z11conv2d_nchwiiiiiiiiPKfS0_S0_Pf", _make_conv2d_nobias),
    KernelCase("group_norm_nchw", "diffusion_ops", "_Z15group_norm_nchwiiiifPKfS0_S0_Pf", _make_group_norm,
               atol=1e-6),
    KernelCase("upsample_nearest2x", "diffusion_ops", "_Z18upsample_nearest2xiiiPKfPf", _make_upsample),
    KernelCase("explog_pow_f32", "math_f32", "_Z14explog_pow_f32ifPKfPfS1_", _make_explog_pow, atol=8e-6),
    KernelCase("fast_intrinsics_f32", "math_f32", "fast_intrinsics_f32", _make_fast_intrinsics, atol=2e-5),
    KernelCase("misc_math_f32", "math_f32", "_Z13misc_math_f32iPKfPf", _make_misc_math, atol=1.5e-5),
    KernelCase("atomic_cas_fmax", "atomics", "_Z15atomic_cas_fmaxiPKfPf", _make_atomic_cas_fmax),
    KernelCase("atomic_cas_fmax_kept", "atomics", "_Z15atomic_cas_fmaxiPKfPf", _make_atomic_cas_fmax_kept),
    KernelCase("atomic_min_max", "atomics", "_Z14atomic_min_maxiPKiPiPj", _make_atomic_min_max),
    KernelCase("atomic_bitwise", "atomics", "atomic_bitwise", _make_atomic_bitwise),
    KernelCase("atomic_exch_unique", "atomics", "_Z18atomic_exch_uniqueiPKiPiPj", _make_atomic_exch_unique),
    KernelCase("atomic_sub_counters", "atomics", "_Z19atomic_sub_countersiiPKiPi", _make_atomic_sub_counters),
    KernelCase("warp_ballot", "warp_vote", "_Z11warp_ballotiPKiPjPi", _make_warp_ballot),
    KernelCase("warp_any_all", "warp_vote", "_Z12warp_any_alliPKiPi", _make_warp_any_all),
    KernelCase("warp_activemask", "warp_vote", "_Z15warp_activemaskiPKiPj", _make_warp_activemask),
    # poly_constant reads __constant__ memory (constant bank 3 on xg1; the coefficients set by the host in
    # test_module_globals); lut_device_global's ld.global.u32 %rd8 loads a narrow type into a 64-bit register
    KernelCase("poly_constant", "globals_misc", "_Z13poly_constantiPKfPf", _make_poly_constant),
    KernelCase("lut_device_global", "globals_misc", "lut_device_global", _make_lut_device_global),
    KernelCase("triton_vector_add", "vector_add", "vector_add", _make_triton_vector_add,
               ptx_file="triton/vector_add.sm_80.ptx"),
    KernelCase("triton_vector_add_sm90", "vector_add", "vector_add", _make_triton_vector_add,
               ptx_file="triton/vector_add.sm_90.ptx"),
    KernelCase("dyn_smem_reverse", "device_functions", "_Z16dyn_smem_reverseiPi", _make_dyn_smem_reverse,
               shared_mem=96 * 4),
    KernelCase("affine_struct", "fnptr_struct", "_Z13affine_struct6AffinePKfPf", _make_affine_struct),
    KernelCase("apply_fnptr", "fnptr_struct", "_Z11apply_fnptriPKiPKfPf", _make_apply_fnptr),
    KernelCase("block_vote_counts", "barrier_ops", "_Z17block_vote_countsiPKiPi", _make_block_vote_counts),
    KernelCase("producer_consumer", "barrier_ops", "_Z17producer_consumerPKfPf", _make_producer_consumer),
    KernelCase("triton_softmax_row", "softmax_row", "softmax_row", _make_triton_softmax_row, atol=2e-8, shared_mem=16,
               ptx_file="triton/softmax_row.sm_80.ptx"),
    KernelCase("triton_layernorm", "layernorm", "layernorm", _make_triton_layernorm, atol=1e-6, shared_mem=16,
               ptx_file="triton/layernorm.sm_80.ptx"),
    KernelCase("assert_kernel", "globals_misc", "_Z13assert_kerneliPKfPf", _make_assert_kernel),
]


MEMORY_SPACE_CASES = [
    KernelCase("numba_block_sum", "block_sum", NUMBA_BLOCK_SUM, _make_numba_block_sum,
               ptx_file="numba/block_sum.sm_80.ptx"),
    KernelCase("attention_row", "transformer_ops", "_Z13attention_rowiifPKfS0_S0_Pf", _make_attention_row,
               atol=2e-6, shared_mem=4 * ATTENTION_SEQ),
    KernelCase("timestep_embedding", "diffusion_ops", "_Z18timestep_embeddingiifPKfPf", _make_timestep_embedding,
               atol=3e-7),
    KernelCase("trig_f32", "math_f32", "_Z8trig_f32iPKfPfS1_S1_", _make_trig_f32, atol=4e-7),
]

CASES: list[KernelCase] = [
    KernelCase("saxpy", "saxpy", "saxpy", _make_saxpy),
    KernelCase(
        "vector_add_grid_stride",
        "vector_add_grid_stride",
        "_Z22vector_add_grid_strideiPKfS0_Pf",
        _make_vector_add,
    ),
    KernelCase("block_reduce", "block_reduce", "_Z12block_reduceiPKiPi", _make_block_reduce),
    KernelCase(
        "block_reduce_f32",
        "block_reduce",
        "_Z16block_reduce_f32iPKfPf",
        _make_block_reduce_f32,
        rtol=1e-5,  # float atomicAdd order across blocks is unspecified
    ),
    KernelCase("divergent_lanes", "divergent_lanes", "_Z15divergent_lanesiPKiPi", _make_divergent_lanes),
    KernelCase("collatz_steps", "collatz_steps", "_Z13collatz_stepsiPKjPj", _make_collatz),
    KernelCase("transpose_shared", "transpose_shared", "_Z16transpose_sharediiPKfPf", _make_transpose),
    KernelCase("transpose_shared_unpadded", "transpose_shared", "_Z25transpose_shared_unpaddediiPKfPf",
               _make_transpose),
    KernelCase("histogram_atomic", "histogram_atomic", "_Z16histogram_atomiciPKhPj", _make_histogram),
    KernelCase("warp_reduce_shfl", "warp_reduce_shfl", "_Z16warp_reduce_shfliPKiPi", _make_warp_reduce),
    KernelCase("bit_ops_u32", "bit_ops", "_Z11bit_ops_u32iPKjS0_Pj", _make_bit_ops_u32),
    KernelCase("bit_ops_u64", "bit_ops", "bit_ops_u64", _make_bit_ops_u64),
    KernelCase("dp4a_dot", "bit_ops", "_Z8dp4a_dotiPKiS0_S0_PiPj", _make_dp4a),
    KernelCase("gemm_tiled_f32", "gemm_simt", "_Z14gemm_tiled_f32iiiPKfS0_Pf", _make_gemm_f32),
    KernelCase("gemm_tiled_alpha_beta", "gemm_simt", "_Z21gemm_tiled_alpha_betaiiiffPKfS0_Pf", _make_gemm_alpha_beta),
    *(
        KernelCase(name + suffix, "scan_sort", entry, make, ptx_file=ptx_file)
        for suffix, ptx_file in (("", None), ("_lineinfo", "scan_sort.sm_80.lineinfo.ptx"))
        for name, entry, make in (
            ("scan_hillis_steele", "_Z28inclusive_scan_hillis_steeleiPKiPiS1_", _make_scan_hillis_steele),
            ("scan_warp", "_Z19inclusive_scan_warpiPKiPi", _make_scan_warp),
            ("scan_warp_1024", "_Z19inclusive_scan_warpiPKiPi", _make_scan_warp_1024),
            ("bitonic_sort", "_Z18bitonic_sort_blockiPi", _make_bitonic_sort),
        )
    ),
    KernelCase("llvm_vector_add", "vector_add", "vector_add", _make_llvm_vector_add, ptx_file="llvm/vector_add.ptx"),
    KernelCase("llvm_saxpy_loop", "saxpy_loop", "saxpy_loop", _make_llvm_saxpy_loop, ptx_file="llvm/saxpy_loop.ptx"),
    KernelCase("llvm_block_sum", "block_sum", "block_sum", _make_llvm_block_sum, ptx_file="llvm/block_sum.ptx"),
    KernelCase("llvm_row_xor_sum", "row_xor_sum", "row_xor_sum", _make_llvm_row_xor_sum,
               ptx_file="llvm/row_xor_sum.ptx"),
    KernelCase("llvm_row_xor_sum_short", "row_xor_sum", "row_xor_sum", _make_llvm_row_xor_sum_short,
               ptx_file="llvm/row_xor_sum.ptx"),
    KernelCase("numba_vector_add", "vector_add", NUMBA_VECTOR_ADD, _make_numba_vector_add,
               ptx_file="numba/vector_add.sm_80.ptx"),
    KernelCase("numba_gauss_sqrt", "gauss_sqrt", NUMBA_GAUSS_SQRT, _make_numba_gauss_sqrt,
               ptx_file="numba/gauss_sqrt.sm_80.ptx"),
    KernelCase("daxpy_fma", "math_f64", "_Z9daxpy_fmaidPKdPd", _make_daxpy_fma),
    KernelCase("f64_ops", "math_f64", "_Z7f64_opsiPKdS0_PdPfPx", _make_f64_ops),
    KernelCase("dnorm_i64", "math_f64", "_Z9dnorm_i64xPKdPd", _make_dnorm_i64),
    KernelCase("atomic_add_u64", "atomics", "_Z14atomic_add_u64iPKyPy", _make_atomic_add_u64),
    KernelCase("atomic_add_f64", "atomics", "_Z14atomic_add_f64iPKdPd", _make_atomic_add_f64),
    KernelCase("warp_match_any", "warp_vote", "_Z14warp_match_anyiPKiPiS1_", _make_warp_match_any),
    KernelCase("warp_redux", "warp_vote", "warp_redux", _make_warp_redux),
    KernelCase("numba_poly_clip", "poly_clip", NUMBA_POLY_CLIP, _make_numba_poly_clip,
               ptx_file="numba/poly_clip.sm_80.ptx"),
]

# the matrix, async-copy and half-precision cases live in their own modules (they import this one)
from kernel_cases_async import ASYNC_CASES  # noqa: E402
from kernel_cases_half import HALF_CASES  # noqa: E402
from kernel_cases_matrix import MATRIX_CASES  # noqa: E402
from kernel_cases_params import PARAM_CASES  # noqa: E402

OP_CASES += MATRIX_CASES + ASYNC_CASES + HALF_CASES + PARAM_CASES
CASES += MEMORY_SPACE_CASES
CASES += [c for c in OP_CASES if "isa" in c.engines]

# kernels the backend refuses (calls, .const addresses, ...): numpy references on the IR
# interpreter only. ``CASES`` stays the backend's list (test_examples, the timing tests and bench use it whole).
IR_ONLY_CASES: list[KernelCase] = [c for c in OP_CASES if "isa" not in c.engines]
ALL_CASES: list[KernelCase] = CASES + IR_ONLY_CASES
assert all("ir" in c.engines for c in ALL_CASES) and all("isa" in c.engines for c in CASES)


def debug_ptx_file(stem: str) -> str | None:
    """``<stem>.sm_80.debug.ptx`` (nvcc -G, the Makefile's PTX_DEBUG) where that file exists, else None."""
    name = f"{stem}.sm_80.debug.ptx"
    return name if (EXAMPLES_DIR / name).exists() else None


# -G cases whose compiled kernel is known to be wrong or refused: name -> reason (marked xfail(strict=True))
_NO_RECONVERGENCE = ("after a divergent loop whose body calls a function (-G calls fmaxf), the warp does not "
                     "reconverge before __shfl_xor_sync (shfl.sync.bfly with a full member mask), on both engines: "
                     "lanes with fewer trips shuffle alone (tests/test_debug_builds.py has a 30-line reproducer)")
DEBUG_XFAIL: dict[str, str] = {
    "softmax_rows_debug": _NO_RECONVERGENCE,
    "attention_row_debug": _NO_RECONVERGENCE,
    "cp_async_pipeline_debug": "the backend refuses the kernel: with -G it and its callees use 76 .global "
                               "variables (the __assert_fail strings of cuda::pipeline), more than the 37 "
                               "constant bank 0 has room for",
}
# the subset of DEBUG_XFAIL whose result is wrong on the IR interpreter too (against numpy)
DEBUG_IR_XFAIL: dict[str, str] = {k: v for k, v in DEBUG_XFAIL.items() if v is _NO_RECONVERGENCE}

# nvcc -G contracts no ``a * b + c`` into ``fma``: the references of these cases round the product first
DEBUG_MAKE: dict[str, Callable[[np.random.Generator], Launch]] = {
    "saxpy": partial(_make_saxpy, fused=False),
    "gemm_tiled_f32": partial(_make_gemm_f32, fused=False),
    "gemm_tiled_alpha_beta": partial(_make_gemm_alpha_beta, fused=False),
    "conv2d_nchw": partial(_conv2d_launch, with_bias=True, fused=False),
    "conv2d_nchw_nobias": partial(_conv2d_launch, with_bias=False, fused=False),
    "affine_struct": partial(_make_affine_struct, fused=False),
}

# Every case of ``ALL_CASES`` on its stem's ``nvcc -G`` build (``<name>_debug``, ``ptx_file`` the .debug.ptx):
# the same launch, the same engines, the reference of DEBUG_MAKE where -G rounds differently. -G copies every
# value through chains of ``mov``, branches around every statement and calls the intrinsics' wrappers (.func):
# unoptimised PTX for the optimiser (bench/opt_levels.py). They are not in ``CASES`` (so the corpus and timing
# tests keep their size): tests/test_debug_builds.py runs them.
DEBUG_CASES: list[KernelCase] = [
    replace(c, name=c.name + "_debug", ptx_file=debug_ptx_file(c.ptx_stem), make=DEBUG_MAKE.get(c.name, c.make),
            xfail=DEBUG_XFAIL.get(c.name + "_debug", c.xfail))
    for c in ALL_CASES if c.ptx_file in (None, f"{c.ptx_stem}.sm_80.ptx") and debug_ptx_file(c.ptx_stem)
]

CASES_BY_NAME: dict[str, KernelCase] = {c.name: c for c in ALL_CASES + DEBUG_CASES}
assert len(CASES_BY_NAME) == len(ALL_CASES) + len(DEBUG_CASES), "duplicate case names"


if __name__ == "__main__":
    for case in ALL_CASES + DEBUG_CASES:
        grid, block, args, outputs, expected = case.make(np.random.default_rng(1234))
        for arch in case.archs:
            p = ptx_path(case, arch)
            assert p.exists(), p
            assert f".entry {case.entry}(" in p.read_text(), (case.entry, p)
        desc = ", ".join(
            f"{a.dtype}[{a.size}]" if isinstance(a, np.ndarray) else f"{type(a).__name__}({a})" for a in args
        )
        exp = ", ".join(f"{i}:{e.dtype}{list(e.shape)}" for i, e in expected.items())
        threads = np.prod(grid) * np.prod(block)
        print(
            f"{case.name:24s} {case.entry:36s} grid={grid} block={block} threads={threads} "
            f"args=[{desc}] out={outputs} expected={{{exp}}} rtol={case.rtol}"
        )
