"""What the warp-level matrix ops do when interpreted (registered with :func:`xcc.sim.ir.ops.impl`).

``mma``, ``ldmatrix``, ``wmma_load`` and ``wmma_store`` (lowered by :mod:`xcc.ir.lower_matrix`) are
``.sync.aligned``: every one of the 32 lanes of a warp must execute the instruction together (PTX
ISA 9.7.14); a warp with a lane missing (diverged, exited, or past the end of the block) is a
kernel fault naming the lanes present.  The arithmetic and the fragment layouts are
:mod:`xcc.semantics.matrix`; memory goes through the launch's addressers, as ``ld``/``st`` do.

Addresses: ``ldmatrix`` takes row ``r`` of matrix ``i`` from the address of lane ``8*i + r`` (each
row 16 bytes, which must be 16-byte aligned); ``wmma.load``/``wmma.store`` compute each lane's
element addresses from that lane's own base address and stride (PTX requires both to be the same
in every lane), and every row (.row) or column (.col) must start at a multiple of the fragment's
size in bytes (9.7.14.4.2: 32 for A, B and .f32 accumulators, 16 for .f16 accumulators).
"""

from __future__ import annotations

import numpy as np

from xcc.semantics import matrix, warp
from xcc.sim.ir.ops import OpBinder, impl
from xcc.sim.memory import MemoryFault
from xcc.sim.waves import ExecFault

_OPNAME = {"mma": "mma.sync.aligned", "ldmatrix": "ldmatrix.sync.aligned", "wmma_load": "wmma.load.sync.aligned",
           "wmma_store": "wmma.store.sync.aligned"}


def full_warps(idx: np.ndarray, what: str) -> int:
    """The number of warps in ``idx`` when every one executes with all 32 lanes; else a located ExecFault."""
    bad = warp.partial_warp(idx, what)
    if bad is not None:
        raise ExecFault(*bad)
    return idx.size // 32


def _regs(readers, sel, n: int, w: int) -> np.ndarray:
    """The registers read by ``readers`` as uint32 ``[W, 32, len(readers)]``."""
    cols = [np.broadcast_to(np.asarray(r(sel, n)), (n,)).astype(np.uint32) for r in readers]
    return np.stack(cols, axis=1).reshape(w, 32, len(readers))


def _accessor(x: OpBinder, width: int):
    """``access(addresses, slots) -> (memory, where)``: checked accesses of ``width`` bytes at any number
    of addresses, each issued by the thread of wave slot ``slots[j]`` (for its CTA's shared memory)."""
    box = {}
    space = x.attrs["space"]
    got = x.launch.addresser(space, lambda sel, n: box["a"], 0, width)
    if got is None:
        raise x.error(f"{_OPNAME[x.inst.op]} on the .{space} space is not supported by the IR interpreter")
    mem, where = got

    def access(addresses, slots):
        box["a"] = addresses
        return mem(), where(None, slots, addresses.size)

    return access


def _relocate(f: MemoryFault, slots: np.ndarray, idx: np.ndarray) -> MemoryFault:
    """A fault at position ``f.thread`` of a flattened access, pointed at that thread's place in ``idx``."""
    if f.thread is not None and f.thread < slots.size:
        f.thread = int(np.searchsorted(idx, slots[f.thread]))
    return f


# ============================================================================= mma
@impl("mma")
def _mma(x: OpBinder):
    """``mma.sync.aligned`` / ``wmma.mma``: register ``part`` of :func:`xcc.semantics.matrix.mma`."""
    shape, types = x.attrs["shape"], tuple(x.attrs["types"].split("."))
    if shape not in matrix.MMA_SHAPES or len(types) != 4:
        raise x.error(f"mma shape {shape} with types {x.attrs['types']} is not supported by the IR interpreter")
    na, nb, part = x.attrs["na"], x.attrs["nb"], x.attrs["part"]
    sat = bool(x.attrs.get("satfinite"))
    readers = [x.arg(i) for i in range(len(x.inst.args))]
    wr = x.set()

    def run(sel, idx, n):
        w = full_warps(idx, _OPNAME["mma"])
        regs = _regs(readers, sel, n, w)
        d = matrix.mma(shape, types, regs[..., :na], regs[..., na:na + nb], regs[..., na + nb:], sat)
        wr(sel, d[:, :, part].reshape(n))

    return run


# ============================================================================= ldmatrix
@impl("ldmatrix")
def _ldmatrix(x: OpBinder):
    """``ldmatrix.sync.aligned.m8n8``: matrix ``part``'s rows from lanes ``8*part .. 8*part+7``, then
    :func:`xcc.semantics.matrix.ldmatrix`."""
    part, trans, off = x.attrs["part"], bool(x.attrs["trans"]), int(x.attrs.get("offset", 0))
    addr, wr = x.arg(0), x.set()
    access = _accessor(x, 2)

    def run(sel, idx, n):
        w = full_warps(idx, _OPNAME["ldmatrix"])
        a = (np.asarray(addr(sel, n)).astype(np.int64) + off).reshape(w, 32)[:, 8 * part:8 * part + 8]
        slots = idx.reshape(w, 32)[:, 8 * part:8 * part + 8]
        bad = matrix.misaligned_rows(a, part, 2**64 - 1)
        if bad is not None:
            raise ExecFault(*bad)
        el = (a[:, :, None] + 2 * np.arange(8)).ravel().astype(np.uint64)
        el_slots = np.repeat(slots.ravel(), 8)
        try:
            mem, where = access(el, el_slots)
            rows = np.asarray(mem.load(where, 2)).reshape(w, 8, 8)
        except MemoryFault as f:
            raise _relocate(f, el_slots, idx) from None
        wr(sel, matrix.ldmatrix(rows, trans).reshape(n))

    return run


# ============================================================================= wmma.load / wmma.store
def _wmma_addresses(x: OpBinder, base, stride, sel, idx, n):
    """(element addresses ``[n, E]``, element bytes) of every lane's m16n16k16 fragment, checked for the
    row/column alignment PTX requires."""
    frag, lay = x.attrs["frag"], x.attrs["layout"]
    esize = x.inst.type.bytes
    p = np.asarray(base(sel, n)).astype(np.int64) + int(x.attrs.get("offset", 0))
    st = np.broadcast_to(np.asarray(stride(sel, n)).astype(np.int64), (n,))
    lane = idx & 31
    offs = matrix.wmma_offsets(frag, lay, st)[np.arange(n), lane]      # [n, E]
    fragment_bytes = 32 if frag in "ab" or esize == 4 else 16
    bad = (p % fragment_bytes != 0) | ((st * esize) % fragment_bytes != 0)
    if bad.any():
        t = int(np.argmax(bad))
        raise ExecFault(f"misaligned {_OPNAME[x.inst.op]}: base address {int(p[t]) & (2**64 - 1):#x} and stride "
                    f"{int(st[t])} elements must make every {'row' if lay == 'row' else 'column'} start at a "
                    f"multiple of the fragment size ({fragment_bytes} bytes)", t)
    return p[:, None] + offs * esize, esize


@impl("wmma_load")
def _wmma_load(x: OpBinder):
    """``wmma.load.{a,b,c}.m16n16k16``: register ``part`` of each lane's fragment, elements read from
    its own base address with its own stride."""
    base, stride, wr = x.arg(0), x.arg(1), x.set()
    part, bits = x.attrs["part"], x.inst.type.bits
    per = 32 // bits
    access = _accessor(x, bits // 8)

    def run(sel, idx, n):
        full_warps(idx, _OPNAME["wmma_load"])
        addrs, esize = _wmma_addresses(x, base, stride, sel, idx, n)
        mine = addrs[:, part * per:(part + 1) * per]
        flat, slots = mine.ravel().astype(np.uint64), np.repeat(idx, per)
        try:
            mem, where = access(flat, slots)
            el = np.asarray(mem.load(where, esize)).reshape(n, per)
        except MemoryFault as f:
            raise _relocate(f, slots, idx) from None
        wr(sel, matrix.pack(el, bits)[:, 0])

    return run


@impl("wmma_store")
def _wmma_store(x: OpBinder):
    """``wmma.store.d.m16n16k16``: every lane stores its 8 accumulator elements."""
    base, stride = x.arg(0), x.arg(1)
    readers = [x.arg(i) for i in range(2, len(x.inst.args))]
    bits = x.inst.type.bits
    access = _accessor(x, bits // 8)

    def run(sel, idx, n):
        w = full_warps(idx, _OPNAME["wmma_store"])
        addrs, esize = _wmma_addresses(x, base, stride, sel, idx, n)
        el = matrix.unpack(_regs(readers, sel, n, w).reshape(n, -1), bits)   # [n, 8]
        flat, slots = addrs.ravel().astype(np.uint64), np.repeat(idx, el.shape[1])
        try:
            mem, where = access(flat, slots)
            mem.store(where, el.ravel().astype(np.uint16 if bits == 16 else np.uint32), esize)
        except MemoryFault as f:
            raise _relocate(f, slots, idx) from None

    return run
