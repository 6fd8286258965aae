"""Emulated device memory for the vectorised ISA interpreter.

The interpreter executes one instruction for many threads at once, so every
access here takes a numpy array of addresses, one per active thread, in thread
order, and one access width in bytes (1, 2, 4, 8 or 16).

* :class:`FlatMemory` - a zero-initialised byte buffer addressed by offsets
  (shared memory: one per launch, CTA ``c`` owning ``[c*size, (c+1)*size)``;
  local memory).
* :class:`GlobalMemory` - device global memory with 64-bit addresses, a bump
  allocator with red zones between allocations, and one backing store where
  ``address -> offset`` is a subtraction after the vectorised bounds check.

Value conventions (shared by both classes):

* ``load`` returns raw bits: ``uint8/16/32/64`` for widths 1..8 and an
  ``(n, 2)`` ``uint64`` array ``[low, high]`` for width 16 (little endian).
* ``store``/``atomic`` accept arrays (or scalars, broadcast). An array whose
  item size equals the width is reinterpreted bit for bit (so ``float32``
  registers store as their bits and ``uint32`` bits feed a float atomic),
  except that signed integers feeding a float atomic convert numerically;
  other integers convert with wrap-around, other floats convert numerically.
* Several threads storing to one address: the highest thread index wins.
* Atomics are serialised in ascending thread order: each thread's returned old
  value is the value before *its* update and later threads see earlier updates,
  so results (float ``add`` included, bit for bit) equal those of a sequential
  loop over threads. ``inc``/``dec`` follow PTX (``inc: old >= b ? 0 : old+1``,
  ``dec: old == 0 || old > b ? b : old-1``); float ``add`` is IEEE round to
  nearest even without flushing subnormals.

Cost: an atomic groups threads by address with one stable sort (numpy's
16-bit radix sort; skipped when addresses are already non-decreasing), then
``add``/``xor``/``exch`` use flat prefix scans, float ``add``/``min``/``max``/
``and``/``or`` a segmented ``accumulate``, ``cas`` one vector step per
successful swap on the busiest address, and ``inc``/``dec`` a closed form when
each address sees one bound (else one vector step per thread on the busiest
address).

Misaligned (``address % width != 0``) or out-of-range accesses raise
:class:`MemoryFault`, which the interpreter turns into a located
:class:`~xcc.diagnostics.KernelFault` naming the instruction.

**The generic address space** (PTX ISA 9.0 section 6.4.1.x, "Generic addressing"): as on NVIDIA
GPUs, shared, local and const memory appear in the 64-bit generic space through fixed 4 GiB
windows (:data:`WINDOWS`), and every other generic address is a global address.  A window's base
has zero low 32 bits, so ``cvta.<space>`` adds the base to the high word only and ``cvta.to.<space>``
subtracts it.  The shared window shows the executing thread's CTA's shared memory and the local
window the executing thread's own local memory (the same generic address means different memory
in different CTAs or threads).  An access through a window past the space's size faults as an
out-of-bounds access of that space.  :class:`GenericMemory` implements the map for both
interpreters.
"""

from __future__ import annotations

import bisect

import numpy as np

from xcc.backend.isa import WINDOW_BYTES, WINDOWS
from xcc.semantics.cluster import decode_shared
from xcc.semantics.faults import MemoryFault

__all__ = ["FlatMemory", "GlobalMemory", "GenericMemory", "MemoryFault", "GLOBAL_BASE", "WINDOWS",
           "WINDOW_BYTES", "window_space", "ReadOnlyMemory", "param_window"]

GLOBAL_BASE = 0x7F00_0000_0000
"""First global address: above 4 GiB so that 32-bit truncation faults."""

_WINDOW_LO = min(WINDOWS.values())
_WINDOW_ORDER = sorted(WINDOWS, key=WINDOWS.get)


def window_space(addresses) -> np.ndarray:
    """Per generic address: 0 for global, else 1 + the index of its window in address order
    (shared, local, const)."""
    a = np.asarray(addresses, np.uint64)
    k = (a - np.uint64(_WINDOW_LO)) >> np.uint64(32)
    return np.where(k < np.uint64(len(WINDOWS)), k + np.uint64(1), np.uint64(0)).astype(np.int8)

_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_FLOAT = {4: np.dtype(np.float32), 8: np.dtype(np.float64)}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}
ATOMIC_OPS = frozenset({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"})


# ---------------------------------------------------------------------------
# Shared helpers: gathers, scatters and serialised atomics on a uint8 buffer.


def check_window(rel: np.ndarray, size: int, width: int, space: str, detail: str) -> None:
    """Raise MemoryFault unless every offset ``rel`` holds a whole, aligned ``width``-byte access
    inside a window of ``size`` bytes (shared, local or const memory of one CTA or thread)."""
    bad = (rel < 0) | (rel > size - width)
    if width > 1:
        bad |= (rel & (width - 1)) != 0
    if bad.any():
        t = int(np.argmax(bad))
        kind = "misaligned" if 0 <= rel[t] <= size - width else "out-of-bounds"
        raise MemoryFault(kind, rel[bad].astype(np.uint64), t, width=width, space=space, detail=detail)


def _addresses(a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype != np.uint64:
        a = a.astype(np.uint64)  # negative int64 wraps to huge and faults
    return a.reshape(-1)


def _check_width(width: int) -> None:
    if width not in _SHIFT:
        raise ValueError(f"access width must be 1, 2, 4, 8 or 16 bytes, not {width}")


def _coerce(values, n: int, dtype: np.dtype) -> np.ndarray:
    """Values as ``dtype``, shape ``(n,)``: same item size -> bits, else convert."""
    v = np.asarray(values)
    if v.dtype != dtype:
        if v.dtype.itemsize == dtype.itemsize and (v.dtype.kind == "u" or dtype.kind != "f"):
            v = v.view(dtype)
        else:
            with np.errstate(all="ignore"):
                v = v.astype(dtype)
    return np.broadcast_to(v.reshape(-1) if v.size == n else v, (n,))


def _gather(buf: np.ndarray, off: np.ndarray, width: int) -> np.ndarray:
    if width == 16:
        words = buf[: buf.size & ~15].view(np.uint64).reshape(-1, 2)
        return words[off >> 4]
    return buf.view(_UINT[width])[off >> _SHIFT[width]]


def _scatter(buf: np.ndarray, off: np.ndarray, values, width: int) -> None:
    n = off.size
    if width == 16:
        v = np.asarray(values)
        if v.dtype != np.uint64:
            v = v.view(np.uint64) if v.dtype.itemsize == 8 else v.astype(np.uint64)
        v = np.broadcast_to(v.reshape(-1, 2) if v.size == 2 * n else v, (n, 2))
        buf[: buf.size & ~15].view(np.uint64).reshape(-1, 2)[off >> 4] = v
        return
    buf.view(_UINT[width])[off >> _SHIFT[width]] = _coerce(values, n, _UINT[width])


def _stable_order(idx: np.ndarray) -> np.ndarray:
    """``argsort(idx, kind='stable')``, via numpy's 16-bit radix sort when the span allows."""
    lo = int(idx.min())
    span = int(idx.max()) - lo
    if idx.size < 4096 or span >= 1 << 32:
        return np.argsort(idx, kind="stable")
    key = idx - lo
    order = np.argsort(key.astype(np.uint16), kind="stable")
    if span >= 1 << 16:
        order = order[np.argsort((key[order] >> 16).astype(np.uint16), kind="stable")]
    return order


def _segmented_scan(ufunc, init, sv, gid, rank, lens):
    """Inclusive scan of ``ufunc`` per group, seeded with ``init[group]``.

    Returns ``(before, final)``: ``before[i]`` is the running value before
    element ``i`` is applied, ``final[g]`` the value after the whole group.
    Groups are padded into matrices bucketed by length (padding < 2x), and
    ``ufunc.accumulate`` along rows is strictly sequential, so float results are
    bit-identical to a left-to-right loop.
    """
    G = init.size
    L = lens + 1
    bucket = np.frexp(L.astype(np.float64))[1]  # L in [2**(b-1), 2**b)
    before = np.empty(sv.size, sv.dtype)
    final = np.empty(G, sv.dtype)
    buckets = np.unique(bucket)
    row = np.empty(G, np.int64)
    for b in buckets:
        gs = np.flatnonzero(bucket == b) if buckets.size > 1 else np.arange(G)
        elems = np.flatnonzero(bucket[gid] == b) if buckets.size > 1 else slice(None)
        row[gs] = np.arange(gs.size)
        r, k = row[gid[elems]], rank[elems]
        m = np.zeros((gs.size, int(L[gs].max())), sv.dtype)
        m[:, 0] = init[gs]
        m[r, k + 1] = sv[elems]
        acc = ufunc.accumulate(m, axis=1)
        before[elems] = acc[r, k]
        final[gs] = acc[np.arange(gs.size), L[gs] - 1]
    return before, final


HALF_ATOMIC_KINDS = ("f16", "bf16", "f16x2", "bf16x2")


def _half_atomic(buf: np.ndarray, off: np.ndarray, op: str, values, width: int, kind: str) -> np.ndarray:
    """``atom.add.noftz`` on f16/bf16 (2 bytes) or packed f16x2/bf16x2 (4 bytes, each half on its own): one
    thread at a time in thread order, each add rounded to nearest with subnormals kept
    (:func:`xcc.semantics.halfp.hadd`); returns the old raw bits.  ``min``/``max`` (the vector atomics of sm_90,
    ``atom.global.vN.{f16,bf16,...}.min.noftz``): the manual gives no rule of their own, so they are PTX's
    ``min``/``max`` of the type (:func:`xcc.semantics.halfp.hminmax`: -0 < +0, a NaN gives the other value)."""
    from xcc.semantics.halfp import fmt_of, hadd, hminmax

    fns = {"add": lambda a, b, f: hadd(a, b, f), "min": lambda a, b, f: hminmax(a, b, f, True),
           "max": lambda a, b, f: hminmax(a, b, f, False)}
    if op not in fns or width != (4 if kind.endswith("x2") else 2):
        raise ValueError(f"atomic {op} on {width}-byte .{kind} is not defined")
    udt, fmt, lanes = _UINT[width], fmt_of(kind), width // 2
    mem, idx = buf.view(udt), off >> _SHIFT[width]
    v = _coerce(np.asarray(values).astype(np.uint64) & np.uint64((1 << 8 * width) - 1), off.size, udt)
    old = np.empty(off.size, udt)
    for i in range(off.size):
        o, b = int(mem[idx[i]]), int(v[i])
        old[i] = o
        new = 0
        for k in range(lanes):
            h = fns[op](np.array([o >> 16 * k & 0xFFFF], np.uint16), np.array([b >> 16 * k & 0xFFFF], np.uint16), fmt)
            new |= int(h[0]) << 16 * k
        mem[idx[i]] = new
    return old


def _atomic_core(buf: np.ndarray, off: np.ndarray, op: str, values, width: int, kind: str, compare):
    """Apply one atomic for all threads; ``off`` is already checked."""
    if width == 16:
        return _atomic16(buf, off, op, values, compare)
    if kind in HALF_ATOMIC_KINDS:
        return _half_atomic(buf, off, op, values, width, kind)
    if op not in ATOMIC_OPS:
        raise ValueError(f"unknown atomic operation {op!r}")
    if kind not in ("u", "s", "f"):
        raise ValueError(f"atomic kind must be 'u', 's' or 'f', not {kind!r}")
    if width not in _UINT:
        raise ValueError(f"atomics are 1, 2, 4 or 8 bytes wide, not {width}")
    if kind == "f" and op not in ("add", "exch", "cas"):
        raise ValueError(f"atomic {op} is not defined on floats")
    if kind == "f" and op == "add" and width not in _FLOAT:
        raise ValueError(f"float atomic add on {width}-byte values is not supported")
    if op == "cas" and compare is None:
        raise ValueError("atomic cas needs compare values")
    udt = _UINT[width]
    tdt = {"u": udt, "s": _SINT[width], "f": _FLOAT.get(width, udt)}[kind]
    if op not in ("min", "max") and not (op == "add" and kind == "f"):
        tdt = udt  # bit-exact ops and wrapping integer add work on raw bits
    n = off.size
    if n == 0:
        return np.empty(0, udt)
    mem = buf.view(udt).view(tdt)
    idx = off >> _SHIFT[width]
    cdt = _FLOAT[width] if kind == "f" and width in _FLOAT else tdt  # exch/cas: floats in, bits out
    v = _coerce(values, n, cdt).view(tdt)

    if n == 1 or bool((idx[1:] >= idx[:-1]).all()):
        order, sidx, sv = None, idx, v  # already grouped in thread order (coalesced)
    else:
        order = _stable_order(idx)
        sidx, sv = idx[order], v[order]
    scmp = None
    if op == "cas":
        scmp = _coerce(compare, n, cdt).view(tdt)
        scmp = scmp if order is None else scmp[order]
    head = np.empty(n, bool)
    head[0] = True
    np.not_equal(sidx[1:], sidx[:-1], out=head[1:])
    with np.errstate(all="ignore"):
        if head.all():  # every address distinct: one plain vector step
            gaddr = sidx
            before = mem[gaddr]
            final = _apply(op, before, sv, scmp)
        else:
            starts = np.flatnonzero(head)
            gaddr = sidx[starts]
            before, final = _grouped(op, kind, mem[gaddr], sv, scmp, head, starts, width)
    mem[gaddr] = final
    if order is None:
        return before.view(udt)
    old = np.empty(n, tdt)
    old[order] = before
    return old.view(udt)


def _atomic16(buf: np.ndarray, off: np.ndarray, op: str, values, compare) -> np.ndarray:
    """``atom.cas.b128`` / ``atom.exch.b128`` (PTX ISA 9.7.13.4) and the single-copy-atomic strong ``ld.b128``
    (``op`` 'ld': nothing written) and ``st.b128`` ('st': as exch): each thread's 16 bytes read and written in one
    step, the threads one after another in order.  ``values`` and ``compare`` (cas) are ``(n, 2)`` uint64, the low
    half first (memory is little-endian); returns the old 16 bytes of each thread the same way."""
    if op not in ("cas", "exch", "ld", "st"):
        raise ValueError(f"16-byte atomics are cas, exch, ld and st only, not {op!r}")
    if op == "cas" and compare is None:
        raise ValueError("atomic cas needs compare values")
    n = off.size
    words = buf[: buf.size & ~15].view(np.uint64).reshape(-1, 2)
    v = np.broadcast_to(np.asarray(values, np.uint64).reshape(-1, 2), (n, 2))
    c = None if compare is None else np.broadcast_to(np.asarray(compare, np.uint64).reshape(-1, 2), (n, 2))
    old = np.empty((n, 2), np.uint64)
    for t, k in enumerate((off >> 4).tolist()):
        old[t] = words[k]
        if op != "ld" and (c is None or (old[t] == c[t]).all()):
            words[k] = v[t]
    return old


def _apply(op, o, v, c):
    """One serialised step: the new value from old ``o``, operand ``v``, compare ``c``."""
    if op == "add":
        return o + v
    if op in ("min", "max"):
        return (np.minimum if op == "min" else np.maximum)(o, v)
    if op in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](o, v)
    if op == "exch":
        return np.array(v)
    if op == "cas":
        return np.where(o == c, v, o)
    if op == "inc":
        return np.where(o >= v, 0, o + 1).astype(o.dtype)
    return np.where((o == 0) | (o > v), v, o - 1).astype(o.dtype)  # dec


def _grouped(op, kind, init, sv, scmp, head, starts, width):
    """``(before, final)`` for threads sorted by address with conflicts."""
    n, G = sv.size, starts.size
    lens = np.diff(np.append(starts, n))
    ends = starts + lens - 1
    gid = np.cumsum(head) - 1
    if op == "exch":
        before = np.empty(n, sv.dtype)
        before[1:] = sv[:-1]
        before[starts] = init
        return before, sv[ends]
    if op in ("add", "xor") and kind != "f":  # invertible: flat scan minus group base
        if op == "add":
            excl = np.cumsum(sv, dtype=sv.dtype) - sv
            before = init[gid] + (excl - excl[starts][gid])
        else:
            excl = np.bitwise_xor.accumulate(sv) ^ sv
            before = init[gid] ^ (excl ^ excl[starts][gid])
        return before, _apply(op, before[ends], sv[ends], None)
    if op == "cas":
        return _cas(init, sv, scmp, gid, G)
    rank = np.arange(n) - starts[gid]
    if op in ("inc", "dec"):
        return _inc_dec(op, init, sv, gid, rank, lens, starts, width)
    uf = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}[op]
    return _segmented_scan(uf, init, sv, gid, rank, lens)


def _cas(init, sv, scmp, gid, G):
    """Serialised compare-and-swap; iterations = most successful swaps on one address."""
    n = sv.size
    cur = init.copy()
    before = np.empty(n, sv.dtype)
    act = np.arange(n)
    while act.size:
        ga = gid[act]
        hit = scmp[act] == cur[ga]
        hpos, hg = act[hit], ga[hit]
        first = np.full(G, n)
        if hpos.size:
            lead = np.empty(hg.size, bool)
            lead[0] = True
            np.not_equal(hg[1:], hg[:-1], out=lead[1:])
            hpos, hg = hpos[lead], hg[lead]
            first[hg] = hpos
        done = act <= first[ga]
        before[act[done]] = cur[ga[done]]
        cur[hg] = sv[hpos]
        act = act[~done]
    return before, cur


def _inc_dec(op, init, sv, gid, rank, lens, starts, width):
    """PTX inc/dec: closed form when each address sees one bound, else rounds."""
    b = sv[starts]
    if width <= 4 and np.array_equal(sv, b[gid]):
        m, bb = init.astype(np.int64), b.astype(np.int64)
        mod = bb + 1
        if op == "inc":
            base = np.where(m > bb, bb, m)
            val = lambda g, k: (base[g] + k) % mod[g]  # noqa: E731
        else:
            base = np.where(m > bb, 0, m)
            val = lambda g, k: (base[g] - k) % mod[g]  # noqa: E731
        before = val(gid, rank).astype(sv.dtype)
        before[starts] = init
        final = val(np.arange(init.size), lens).astype(sv.dtype)
        return before, final
    cur = init.copy()
    before = np.empty(sv.size, sv.dtype)
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(rank))))
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        sel = by_rank[lo:hi]
        g = gid[sel]
        before[sel] = cur[g]
        cur[g] = _apply(op, before[sel], sv[sel], None)
    return before, cur


# ---------------------------------------------------------------------------


class _ThreadAccess:
    """Vectorised per-thread access, shared by both memories: ``_check`` turns addresses into
    checked byte offsets of the backing buffer ``_backing``."""

    def load(self, addresses, width: int) -> np.ndarray:
        """Raw bits at each address (see module docstring for dtypes)."""
        return _gather(self._backing, self._check(addresses, width), width)

    def store(self, addresses, values, width: int) -> None:
        """Store ``values`` (one per address, or a scalar) at ``width`` bytes each."""
        _scatter(self._backing, self._check(addresses, width), values, width)

    def atomic(self, op: str, addresses, values, width: int, kind: str, compare=None) -> np.ndarray:
        """Serialised read-modify-write per thread; returns the old raw bits."""
        return _atomic_core(self._backing, self._check(addresses, width), op, values, width, kind, compare)


class FlatMemory(_ThreadAccess):
    """A zero-initialised byte buffer addressed by offsets ``[0, size)``.

    ``size`` is rounded up to a multiple of 8. Offsets may be ``uint64`` or
    ``int64`` (negative offsets fault as out of bounds).
    """

    def __init__(self, size: int, space: str = "shared"):
        if size < 0:
            raise ValueError("memory size must be >= 0")
        self.size = (int(size) + 7) & ~7
        self.space = space
        self.buf = np.zeros(self.size, np.uint8)

    @property
    def _backing(self) -> np.ndarray:
        return self.buf

    def _check(self, offsets, width: int) -> np.ndarray:
        _check_width(width)
        off = _addresses(offsets)
        if off.size == 0:
            return off.view(np.int64)
        mis = width > 1 and bool((off & np.uint64(width - 1)).any())
        if mis or self.size < width or int(off.max()) > self.size - width:
            bad_mis = (off & np.uint64(width - 1)) != 0
            bad = bad_mis | (off > np.uint64(max(self.size - width, 0))) | (self.size < width)
            t = int(np.argmax(bad))
            kind = "misaligned" if bad_mis[t] else "out-of-bounds"
            raise MemoryFault(kind, off[bad], t, width=width, space=self.space,
                              detail=f"{self.space} memory is {self.size} bytes")
        return off.view(np.int64)

    def read(self, offset: int, nbytes: int) -> np.ndarray:
        """A copy of ``nbytes`` bytes at ``offset``."""
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise MemoryFault("out-of-bounds", [offset], None, space=self.space,
                              detail=f"{nbytes} bytes exceed the {self.size}-byte {self.space} memory")
        return self.buf[offset:offset + nbytes].copy()

    def write(self, offset: int, data) -> None:
        """Copy ``data`` (bytes or any contiguous array) to ``offset``."""
        raw = _raw_bytes(data)
        if offset < 0 or offset + raw.size > self.size:
            raise MemoryFault("out-of-bounds", [offset], None, space=self.space,
                              detail=f"{raw.size} bytes exceed the {self.size}-byte {self.space} memory")
        self.buf[offset:offset + raw.size] = raw


_READ_ONLY = {"param": "kernel parameters are read-only", "const": "constant memory is read-only"}


def _refuse_write(space: str, addresses, width: int):
    """The fault of a store or atomic into read-only ``space`` (a generic address in its window)."""
    raise MemoryFault("read-only", _addresses(addresses), 0, width=width, space=space,
                      detail=_READ_ONLY.get(space, f"{space} memory is read-only"))


class ReadOnlyMemory(FlatMemory):
    """A :class:`FlatMemory` holding ``data`` that loads read and stores or atomics fault: the kernel
    parameters seen through the param window, and ``.const`` memory seen through the const window (both
    engines; docs/isa.md, "Kernel parameters as memory"; PTX ISA 6.4.1: ``.const`` is read-only)."""

    def __init__(self, data: bytes, space: str = "param"):
        super().__init__(len(data), space)
        self.buf[:len(data)] = np.frombuffer(bytes(data), np.uint8)

    def _refuse(self, addresses, width: int):
        _refuse_write(self.space, addresses, width)

    def store(self, addresses, values, width: int) -> None:
        self._refuse(addresses, width)

    def atomic(self, op: str, addresses, values, width: int, kind: str, compare=None) -> np.ndarray:
        if op == "ld":  # a strong ld.b128 (xcc.ir.lower_b128): a 16-byte read that writes nothing
            return super().atomic(op, addresses, values, width, kind, compare)
        self._refuse(addresses, width)


class ReadOnlyView:
    """Loads of ``mem``, a :class:`FlatMemory` its owner keeps filling (the IR interpreter's const memory,
    copied from the module at each launch); stores and atomics through the view fault as in
    :class:`ReadOnlyMemory`.  The const window of :class:`GenericMemory` shows const memory through one."""

    def __init__(self, mem: FlatMemory):
        self.mem, self.space = mem, mem.space

    def load(self, addresses, width: int) -> np.ndarray:
        return self.mem.load(addresses, width)

    def store(self, addresses, values, width: int) -> None:
        _refuse_write(self.space, addresses, width)

    def atomic(self, op: str, addresses, values, width: int, kind: str, compare=None) -> np.ndarray:
        if op == "ld":  # a strong ld.b128: reads only
            return self.mem.atomic(op, addresses, values, width, kind, compare)
        _refuse_write(self.space, addresses, width)

    def __getattr__(self, name: str):
        return getattr(self.mem, name)


def param_window(params: bytes) -> tuple:
    """The :class:`GenericMemory` entry of the param window over a launch's parameter buffer ``params``."""
    mem = ReadOnlyMemory(params)
    return (lambda: mem, lambda: len(params), lambda: 0, lambda idx: 0 * np.asarray(idx))


def _raw_bytes(data) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(data).cast("B"), np.uint8)


class GlobalMemory(_ThreadAccess):
    """Device global memory: 64-bit addresses over one growable backing store.

    Allocations start at ``base`` (default ``0x7F00_0000_0000``), are aligned
    to ``align`` bytes (256) and separated by at least ``gap`` bytes of
    unallocated red zone, so small overruns fault. New and reused memory reads
    as zero. Freed address ranges are reused only when the backing store would
    otherwise have to grow, and are remembered so that later accesses report
    ``freed`` until reused.
    Device accesses must fall entirely inside one live allocation.
    """

    _MAX_FREED = 4096

    def __init__(self, base: int = GLOBAL_BASE, align: int = 256, gap: int = 256):
        if base % align or align & (align - 1) or align < 16:
            raise ValueError("base must be aligned to align, a power of two >= 16")
        self.base, self.align, self.gap = base, align, gap
        self._buf = np.zeros(1 << 20, np.uint8)
        self._top = base  # end of the highest allocation ever made (+ gap)
        self._live: dict[int, int] = {}
        self._freed: dict[int, int] = {}
        self._reindex()  # _start_list, _starts, _limits (start + size, exclusive end)

    # -- allocation -----------------------------------------------------------------------

    @property
    def used_bytes(self) -> int:
        """Bytes in live allocations."""
        return sum(self._live.values())

    @property
    def allocations(self) -> list[tuple[int, int]]:
        """Live allocations as sorted ``(address, size)`` pairs."""
        return sorted(self._live.items())

    def _round(self, x: int) -> int:
        return (x + self.align - 1) & ~(self.align - 1)

    def alloc(self, nbytes: int) -> int:
        """Allocate ``nbytes`` zeroed bytes; returns the (256-aligned) address."""
        if nbytes < 0:
            raise ValueError("allocation size must be >= 0")
        addr = self._round(self._top)
        end = addr + nbytes - self.base
        if end > self._buf.size:
            hole = self._find_hole(nbytes)
            if hole is not None:
                addr = hole
                off = addr - self.base
                self._buf[off:off + nbytes] = 0
            else:
                grown = np.zeros(max(self._round(end), 2 * self._buf.size), np.uint8)
                grown[: self._buf.size] = self._buf
                self._buf = grown
        if addr == self._round(self._top):
            self._top = addr + nbytes + self.gap
        self._live[addr] = nbytes
        for f in [f for f, s in self._freed.items() if f < addr + nbytes and addr < f + max(s, 1)]:
            del self._freed[f]
        self._reindex()
        return addr

    def _find_hole(self, nbytes: int) -> int | None:
        prev_end = self.base - self.gap
        for start, size in self.allocations + [(self._top, 0)]:
            cand = self._round(prev_end + self.gap)
            if cand + nbytes + self.gap <= start and cand + nbytes - self.base <= self._buf.size:
                return cand
            prev_end = start + size
        return None

    def free(self, addr: int) -> None:
        """Free a live allocation; unknown addresses and double frees raise MemoryFault."""
        addr = int(addr)
        size = self._live.pop(addr, None)
        if size is None:
            kind = "double-free" if addr in self._freed else "invalid-free"
            raise MemoryFault(kind, [addr], None, detail=self._describe(addr))
        self._freed[addr] = size
        if len(self._freed) > self._MAX_FREED:
            del self._freed[next(iter(self._freed))]
        self._reindex()

    def _reindex(self) -> None:
        items = self.allocations
        self._start_list = [a for a, _ in items]
        self._starts = np.array(self._start_list, np.uint64)
        self._limits = np.array([a + s for a, s in items], np.uint64)

    def _describe(self, addr: int) -> str:
        """Human explanation of where ``addr`` lies, for fault messages."""
        for a, s in self._freed.items():
            if a <= addr < a + max(s, 1):
                return f"inside freed allocation {a:#x} ({s} bytes)"
        items = self.allocations
        i = bisect.bisect_right(self._start_list, addr) - 1
        if i >= 0:
            a, s = items[i]
            if addr < a + s:
                return f"inside allocation {a:#x} ({s} bytes) at offset {addr - a}"
            return f"{addr - (a + s)} bytes past the end of allocation {a:#x} ({s} bytes)"
        if items:
            a, s = items[0]
            return f"{a - addr} bytes before allocation {a:#x} ({s} bytes)"
        return "no live allocations"

    def _kind(self, addr: int, width: int) -> str:
        if any(a <= addr < a + max(s, 1) for a, s in self._freed.items()):
            return "freed"
        i = bisect.bisect_right(self._start_list, addr) - 1
        inside = i >= 0 and addr < int(self._limits[i])
        return "misaligned" if inside and width and addr % width else "out-of-bounds"

    # -- host access ----------------------------------------------------------------------

    def _span(self, addr: int, nbytes: int) -> int:
        addr = int(addr)
        i = bisect.bisect_right(self._start_list, addr) - 1
        if i < 0 or nbytes < 0 or addr + nbytes > int(self._limits[i]):
            raise MemoryFault(self._kind(addr, 0), [addr], None,
                              detail=f"{nbytes}-byte host copy; address is {self._describe(addr)}")
        return addr - self.base

    def write(self, addr: int, data) -> None:
        """Copy bytes (or a contiguous array's bytes) into one allocation."""
        raw = _raw_bytes(data)
        off = self._span(addr, raw.size)
        self._buf[off:off + raw.size] = raw

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """A ``uint8`` copy of ``nbytes`` bytes inside one allocation."""
        off = self._span(addr, nbytes)
        return self._buf[off:off + nbytes].copy()

    def memset(self, addr: int, byte: int, nbytes: int) -> None:
        """Fill ``nbytes`` bytes at ``addr`` with ``byte``."""
        off = self._span(addr, nbytes)
        self._buf[off:off + nbytes] = byte & 0xFF

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """Device-to-device copy (overlap-safe)."""
        s, d = self._span(src, nbytes), self._span(dst, nbytes)
        self._buf[d:d + nbytes] = self._buf[s:s + nbytes].copy()

    # -- device access ---------------------------------------------------------------------

    @property
    def _backing(self) -> np.ndarray:
        return self._buf

    def _check(self, addresses, width: int) -> np.ndarray:
        """Bounds/alignment check; returns backing-store offsets as int64."""
        _check_width(width)
        a = _addresses(addresses)
        if a.size == 0:
            return a.view(np.int64)
        w = np.uint64(width)
        mis = width > 1 and bool((a & (w - np.uint64(1))).any())
        lo, hi = int(a.min()), int(a.max())
        i = bisect.bisect_right(self._start_list, lo) - 1
        if not mis and i >= 0 and hi + width <= int(self._limits[i]):
            return (a - np.uint64(self.base)).view(np.int64)  # all in one allocation
        j = np.searchsorted(self._starts, a, "right").astype(np.int64) - 1
        jc = np.maximum(j, 0)
        ok = (j >= 0) & (a >= self._starts[jc]) if self._starts.size else np.zeros(a.size, bool)
        if self._starts.size:
            ok &= (self._limits[jc] >= w) & (a <= self._limits[jc] - w)
        if width > 1:
            ok &= (a & (w - np.uint64(1))) == 0
        if not ok.all():
            t = int(np.argmin(ok))
            addr = int(a[t])
            raise MemoryFault(self._kind(addr, width), a[~ok], t, width=width,
                              detail=f"address is {self._describe(addr)}")
        return (a - np.uint64(self.base)).view(np.int64)


class GenericMemory:
    """Generic accesses of one wave: each address goes to global memory or, inside a window, to the
    executing thread's CTA's shared memory, its local memory or const memory.

    ``spaces`` maps a space name to ``(memory getter, window bytes getter, stride getter, frame_of)``:
    the space's :class:`FlatMemory`, how many bytes of it each CTA or thread sees, how far apart the
    frames are, and ``frame_of(idx)`` (the frame of wave slots ``idx``).  A window without an entry
    maps nothing (every access through it faults).  Addresses come as ``(addresses, idx)`` pairs:
    the generic addresses and the wave slots of the threads issuing them.
    """

    def __init__(self, gmem: GlobalMemory, spaces: dict, cluster: int = 1):
        self.gmem, self.spaces, self.cluster = gmem, spaces, cluster  # cluster: CTAs per cluster

    def _parts(self, at, width: int):
        """[(positions or None, memory, checked offsets)] of an access, global last."""
        a, idx = at
        a = _addresses(a)
        code = window_space(a)
        if not code.any():
            return [(None, self.gmem, a)]
        parts = []
        for k, space in enumerate(_WINDOW_ORDER, start=1):
            pos = np.flatnonzero(code == k)
            if not pos.size:
                continue
            rel = (a[pos] - np.uint64(WINDOWS[space])).astype(np.int64)
            entry = self.spaces.get(space)
            mem_of, size_of, stride_of, frame_of = entry or (None, lambda: 0, lambda: 0, None)
            frame = None
            if space == "shared" and entry is not None:  # distributed shared memory: a CTA of the cluster
                frame, rel = decode_shared(rel, frame_of(np.asarray(idx)[pos]), self.cluster)
            size = size_of()
            try:
                check_window(rel, size, width, space, f"generic address {int(a[pos][0]):#x} is in the {space} "
                             f"window, whose {space} memory is {size} bytes")
            except MemoryFault as f:
                f.thread = int(pos[f.thread])
                raise
            if frame is None:
                frame = frame_of(np.asarray(idx)[pos])
            parts.append((pos, mem_of(), frame * stride_of() + rel))
        pos = np.flatnonzero(code == 0)
        if pos.size:
            parts.append((pos, self.gmem, a[pos]))
        return parts

    @staticmethod
    def _take(values, pos, n: int):
        v = np.asarray(values)
        return v[pos] if v.ndim and v.shape[0] == n and pos is not None else v

    def _each(self, at, width: int, fn):
        n = np.asarray(at[0]).size
        out = None
        for pos, mem, off in self._parts(at, width):
            try:
                r = fn(mem, off, pos, n)
            except MemoryFault as f:
                if pos is not None and f.thread is not None:
                    f.thread = int(pos[f.thread])
                raise
            if pos is None:
                return r
            if r is not None:
                if out is None:
                    out = np.zeros((n,) + r.shape[1:], r.dtype)
                out[pos] = r
        return out

    def load(self, at, width: int) -> np.ndarray:
        return self._each(at, width, lambda mem, off, pos, n: mem.load(off, width))

    def store(self, at, values, width: int) -> None:
        self._each(at, width, lambda mem, off, pos, n: mem.store(off, self._take(values, pos, n), width))

    def atomic(self, op: str, at, values, width: int, kind: str, compare=None) -> np.ndarray:
        def one(mem, off, pos, n):
            c = None if compare is None else self._take(compare, pos, n)
            return mem.atomic(op, off, self._take(values, pos, n), width, kind, c)

        return self._each(at, width, one)

    def read_bytes(self, address: int, slot: int, nbytes: int | None = None) -> bytes:
        """Host-side read for one thread (``slot``): ``nbytes`` bytes at generic ``address``, or up to
        and excluding a NUL byte when ``nbytes`` is None (a C string)."""
        out = bytearray()
        while nbytes is None or len(out) < nbytes:
            b = int(self.load((np.array([address + len(out)], np.uint64), np.array([slot])), 1)[0])
            if nbytes is None and b == 0:
                break
            out.append(b)
        return bytes(out)


class ModuleGlobals:
    """The module-scope ``.global`` variables of one loaded module, in one :class:`GlobalMemory`.

    As with CUDA's ``__device__`` variables, each is allocated and initialised once, at its first use
    (a launch of a kernel that names it, or a host query such as ``cuModuleGetGlobal``), and keeps its
    contents across launches until :meth:`free` (module unload).  A launch without a module (the
    low-level ``run_kernel`` / ``run_function``) gets a fresh set that it frees when it ends.
    """

    def __init__(self, gmem: GlobalMemory):
        self.gmem = gmem
        self.vars: dict[str, tuple[int, int]] = {}  # name -> (address, size)

    def address(self, name: str, size: int, init: bytes | None = None, relocs=(), targets=None) -> int:
        """The address of variable ``name`` of ``size`` bytes, allocated and initialised at the first call.
        ``relocs`` are the initialiser's variable addresses (``xcc.ir.core.Variable.addr_relocs``: byte offset,
        width, variable, addend, mask): each named variable is placed too (``targets(name)`` gives its
        ``(size, init, relocs)``) and its address + addend (masked and shifted down, for ``0xFF00(v)``) is
        written at the offset, the loader's relocation (docs/isa.md, "Initialised variables")."""
        got = self.vars.get(name)
        if got is not None:
            if got[1] != size:
                raise ValueError(f".global variable '{name}' is {got[1]} bytes in this module, not {size}")
            return got[0]
        addr = self.gmem.alloc(max(size, 1))
        if init:
            self.gmem.write(addr, init)
        self.vars[name] = (addr, size)  # (before its relocations: variables may point at each other)
        for off, width, target, addend, mask in relocs:
            t_size, t_init, t_relocs = targets(target)
            value = self.address(target, t_size, t_init, t_relocs, targets) + addend
            if mask:
                value = (value & mask) >> ((mask & -mask).bit_length() - 1)
            self.gmem.write(addr + off, (value & ((1 << 8 * width) - 1)).to_bytes(width, "little"))
        return addr

    def free(self) -> None:
        for addr, _ in self.vars.values():
            self.gmem.free(addr)
        self.vars.clear()
