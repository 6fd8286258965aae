"""Executors of the loads, stores and atomics of the global, shared, local and generic spaces (the
address readers ``global_addr`` and ``shared_addr`` serve exec_matrix and the emulator too);
registered in :data:`xcc.sim.isa.exec_base.IMPLS`."""

from __future__ import annotations

import numpy as np

from xcc.semantics.cluster import decode_shared
from xcc.semantics.convert import convert
from xcc.sim.isa.exec_base import U64, Binder, _raise, impl
from xcc.sim.memory import check_window

# ============================================================================= memory
SIZE_BYTES = {"32": (4, "u"), "U8": (1, "u"), "S8": (1, "s"), "U16": (2, "u"), "S16": (2, "s")}


def _extend(v, width: int, kind: str):
    """A loaded 1/2/4-byte value zero/sign-extended into a 32-bit register."""
    return v if width == 4 else convert(v, 32, kind, 8 * width, kind)


def _truncate(v, width: int):
    """The low ``width`` bytes of a 32-bit register value."""
    return v if width == 4 else convert(v, 8 * width, "u", 32, "u")


def global_addr(x: Binder):
    a = x.w("a")
    off = U64(int(x.ops["b"]) % (1 << 64))
    if off == 0:
        return a
    return lambda sel, n: a(sel, n) + off


def shared_addr(x: Binder):
    """Reader of (flat offset into the wave's shared memory, CTA-relative address) for a width."""
    a, b, c = x.r("a"), int(x.ops["b"]), x.ctx

    def addr(sel, idx, n, width):
        frame, rel = decode_shared(a(sel, n).astype(np.int64) + b, idx // c.tpb_pad, c.launch.csize)
        size = c.smem_size
        check_window(rel, size, width, "shared", f"the CTA's shared memory is {size} bytes")
        return frame * c.smem_stride + rel

    return addr


def _local_addr(x: Binder):
    """Reader of the flat offset into the wave's local memory of ``[a + b]`` (the thread's own frame)."""
    a, b, c = x.r("a"), int(x.ops["b"]), x.ctx

    def addr(sel, idx, n, width):
        rel = a(sel, n).astype(np.int64) + b
        size = c.local_size
        check_window(rel, size, width, "local", f"the thread's local memory is {size} bytes")
        return idx * c.local_stride + rel

    return addr


def _generic_addr(x: Binder):
    """Reader of ``(generic addresses, wave slots)`` of ``[a + b]``, for :class:`GenericMemory`."""
    a = global_addr(x)
    return lambda sel, idx, n, width: (a(sel, n), idx)


_SPACE_ADDR = {"L": _local_addr, "": _generic_addr}
_SPACE_MEM = {"L": "lmem", "": "generic"}


def _loads_stores(prefix: str) -> None:
    """LD<prefix>, ST<prefix> and their .64 forms over ``ctx.<memory>`` (local or generic)."""
    addr_of, mem_name = _SPACE_ADDR[prefix], _SPACE_MEM[prefix]

    @impl(f"LD{prefix}")
    def _ld(x: Binder):
        addr, d, ctx = addr_of(x), x.set_r(), x.ctx
        width, kind = SIZE_BYTES[x.mod("size")]
        return lambda sel, idx, n: d(sel, _extend(getattr(ctx, mem_name).load(addr(sel, idx, n, width), width),
                                                  width, kind))

    @impl(f"ST{prefix}")
    def _st(x: Binder):
        addr, c, ctx = addr_of(x), x.r("c"), x.ctx
        width = SIZE_BYTES[x.mod("size")][0]
        return lambda sel, idx, n: getattr(ctx, mem_name).store(addr(sel, idx, n, width),
                                                                _truncate(c(sel, n), width), width)

    @impl(f"LD{prefix}.64")
    def _ld64(x: Binder):
        addr, d, ctx = addr_of(x), x.set_w(), x.ctx
        return lambda sel, idx, n: d(sel, getattr(ctx, mem_name).load(addr(sel, idx, n, 8), 8))

    @impl(f"ST{prefix}.64")
    def _st64(x: Binder):
        addr, c, ctx = addr_of(x), x.w("c"), x.ctx
        return lambda sel, idx, n: getattr(ctx, mem_name).store(addr(sel, idx, n, 8), c(sel, n), 8)


_loads_stores("L")
_loads_stores("")


@impl("LDG")
def _ldg(x: Binder):
    addr, d, g = global_addr(x), x.set_r(), x.ctx.gmem
    width, kind = SIZE_BYTES[x.mod("size")]
    return lambda sel, idx, n: d(sel, _extend(g.load(addr(sel, n), width), width, kind))


@impl("LDG.64")
def _ldg64(x: Binder):
    addr, d, g = global_addr(x), x.set_w(), x.ctx.gmem
    return lambda sel, idx, n: d(sel, g.load(addr(sel, n), 8))


@impl("STG")
def _stg(x: Binder):
    addr, c, g = global_addr(x), x.r("c"), x.ctx.gmem
    width = SIZE_BYTES[x.mod("size")][0]
    return lambda sel, idx, n: g.store(addr(sel, n), _truncate(c(sel, n), width), width)


@impl("STG.64")
def _stg64(x: Binder):
    addr, c, g = global_addr(x), x.w("c"), x.ctx.gmem
    return lambda sel, idx, n: g.store(addr(sel, n), c(sel, n), 8)


@impl("LDS")
def _lds(x: Binder):
    addr, d, ctx = shared_addr(x), x.set_r(), x.ctx
    width, kind = SIZE_BYTES[x.mod("size")]
    return lambda sel, idx, n: d(sel, _extend(ctx.smem.load(addr(sel, idx, n, width), width), width, kind))


@impl("STS")
def _sts(x: Binder):
    addr, c, ctx = shared_addr(x), x.r("c"), x.ctx
    width = SIZE_BYTES[x.mod("size")][0]
    return lambda sel, idx, n: ctx.smem.store(addr(sel, idx, n, width), _truncate(c(sel, n), width), width)


@impl("LDS.64")
def _lds64(x: Binder):
    addr, d, ctx = shared_addr(x), x.set_w(), x.ctx
    return lambda sel, idx, n: d(sel, ctx.smem.load(addr(sel, idx, n, 8), 8))


@impl("STS.64")
def _sts64(x: Binder):
    addr, c, ctx = shared_addr(x), x.w("c"), x.ctx
    return lambda sel, idx, n: ctx.smem.store(addr(sel, idx, n, 8), c(sel, n), 8)


_ATOM_KIND = {"U32": "u", "S32": "s", "F32": "f", "U64": "u", "S64": "s", "F64": "f", "U16": "u", "F16": "f16",
              "BF16": "bf16", "F16X2": "f16x2", "BF16X2": "bf16x2"}


def _atomic(x: Binder, space: str):
    op, kind = x.mod("op").lower(), _ATOM_KIND[x.mod("type")]
    width = 8 if x.inst.mnemonic.endswith(".64") else 4
    if x.inst.mnemonic.endswith(".H"):  # 16-bit elements; packed pairs are 32 bits
        width = 4 if kind.endswith("x2") else 2
        if (op == "cas") != (kind == "u") or op not in ("cas", "add", "min", "max"):
            return _raise(f"invalid atomic: {x.inst.mnemonic}.{x.mod('op')}.{x.mod('type')}")
    if width == 8:
        d, c, e = x.set_w(), x.w("c"), x.w("e")
    elif width == 2:
        d, c, e = x.set_r(), _low16(x.r("c")), _low16(x.r("e"))
    else:
        d, c, e = x.set_r(), x.r("c"), x.r("e")
    ctx = x.ctx
    if kind == "f" and op not in ("add", "exch", "cas"):
        return _raise(f"invalid atomic: {x.inst.mnemonic}.{x.mod('op')}.{x.mod('type')} is not defined on floats")
    if width == 8 and op in ("inc", "dec"):
        return _raise(f"invalid atomic: {x.inst.mnemonic}.{x.mod('op')} is defined on 32 bits only")
    if space == "global":
        gaddr, mem = global_addr(x), ctx.gmem

        def where(sel, idx, n):
            return gaddr(sel, n)
    elif space == "generic":
        gaddr, mem = global_addr(x), ctx.generic

        def where(sel, idx, n):
            return gaddr(sel, n), idx
    else:
        saddr, mem = shared_addr(x), ctx.smem

        def where(sel, idx, n):
            return saddr(sel, idx, n, width)

    if op == "cas":  # c = compare, e = new value
        return lambda sel, idx, n: d(sel, mem.atomic("cas", where(sel, idx, n), e(sel, n), width, kind,
                                                     compare=c(sel, n)))
    return lambda sel, idx, n: d(sel, mem.atomic(op, where(sel, idx, n), c(sel, n), width, kind))


def _low16(r):
    return lambda sel, n: np.asarray(r(sel, n)).astype(np.uint16)


@impl("ATOMG", "ATOMG.64", "ATOMG.H")
def _atomg(x: Binder):
    return _atomic(x, "global")


@impl("ATOMS", "ATOMS.64", "ATOMS.H")
def _atoms(x: Binder):
    return _atomic(x, "shared")


@impl("ATOM", "ATOM.64", "ATOM.H")
def _atom_generic(x: Binder):
    return _atomic(x, "generic")


def _latch(x: Binder) -> np.ndarray:
    """The wave's 128-bit atomic latches X (uint64 [T, 2], bits 63:0 first), made with the wave's registers."""
    ctx, T = x.ctx, x.ctx.regs.shape[1]
    if getattr(ctx, "xlatch", None) is None or ctx.xlatch.shape[0] != T:
        ctx.xlatch = np.zeros((T, 2), np.uint64)
    return ctx.xlatch


@impl("ATOMX.SET")
def _atomx_set(x: Binder):
    latch, c, e = _latch(x), x.w("c"), x.w("e")

    def run(sel, idx, n):
        latch[sel, 0], latch[sel, 1] = c(sel, n), e(sel, n)

    return run


@impl("ATOMX.GET")
def _atomx_get(x: Binder):
    latch, d = _latch(x), x.set_w()
    return lambda sel, idx, n: d(sel, latch[sel, 1])


@impl("ATOMG.128", "ATOMS.128", "ATOM.128")
def _atom128(x: Binder):
    """16 bytes in one step (xcc.sim.memory._atomic16): EXCH and ST store {c, e}; CAS compares with {c, e} and
    stores the latch; LD stores nothing; d = the old bits 63:0, the latch = the old 16 bytes."""
    latch, d, c, e, ctx = _latch(x), x.set_w(), x.w("c"), x.w("e"), x.ctx
    op = x.mod("op").lower()
    if x.inst.mnemonic == "ATOMS.128":
        saddr, mem = shared_addr(x), ctx.smem

        def where(sel, idx, n):
            return saddr(sel, idx, n, 16)
    else:
        gaddr, mem = global_addr(x), (ctx.gmem if x.inst.mnemonic == "ATOMG.128" else ctx.generic)

        def where(sel, idx, n):
            return gaddr(sel, n) if mem is ctx.gmem else (gaddr(sel, n), idx)

    def run(sel, idx, n):
        ce = np.stack([np.broadcast_to(np.asarray(c(sel, n), U64), (n,)),
                       np.broadcast_to(np.asarray(e(sel, n), U64), (n,))], axis=1)
        new, cmp = (latch[sel], ce) if op == "cas" else (ce, None)  # LD: writes nothing (c, e are RZ)
        old = np.asarray(mem.atomic(op, where(sel, idx, n), new, 16, "u", compare=cmp)).reshape(-1, 2)
        latch[sel] = old
        d(sel, old[:, 0])

    return run

