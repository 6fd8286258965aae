"""What the matrix ISA instructions do when interpreted (executors registered with
:func:`xcc.sim.isa.exec_base.impl`; imported by :mod:`xcc.sim.isa.executors` before its completeness
check).

* ``HMMA.16816.F32/.F16``, ``HMMA.1688.F32/.F16``, ``IMMA.16832``, ``HMMA.16832.F32/.F16`` (FP8),
  ``HMMA.1688.F32.TF32``, ``HMMA.1684.F32.TF32``: one 8-row
  half of a PTX ``mma.sync`` D fragment.  The half's operands are placed in the registers of a whole
  ``m16n8k16`` / ``m16n8k8`` / ``m16n8k32`` fragment (the other half's registers zero) and
  :func:`xcc.semantics.matrix.mma` - the function the IR interpreter calls - computes it; every element
  of D depends only on its own row of A and C, so the half is exactly those rows of the PTX result.
* ``LDSM``: one 8x8 b16 matrix of ``ldmatrix`` (:func:`xcc.semantics.matrix.ldmatrix`), its rows at the
  shared addresses of lanes ``8*mat .. 8*mat+7``.
* ``LDGSTS``, ``LDGDEPBAR``, ``DEPBAR``: ``cp.async``, ``commit_group``, ``wait_group`` with the model of
  :mod:`xcc.semantics.async_copy` (:class:`~xcc.semantics.async_copy.CopyGroups`, as the IR interpreter):
  the source is read when LDGSTS executes, the destination written at the thread's DEPBAR that covers the
  copy's group.  The groups of a wave live on the wave's context (``ctx.cp_async``).

* ``WGMMA.F32``, ``QGMMA.F32`` (FP8, m64nNk32), ``TGMMA.F32`` (TF32, m64nNk8), ``IGMMA.S32`` (s8/u8, m64nNk32, :func:`xcc.semantics.wgmma.int_part`): one accumulator register (part ``b``) of ``wgmma.mma_async`` m64nNk16: A and B are read from
  the CTA's shared memory at the addresses :func:`xcc.semantics.wgmma.matrix_addresses` gives for the
  decoded descriptors and :func:`xcc.semantics.wgmma.mma_part` - the functions the IR interpreter calls -
  computes the part; with ``AREG`` (A in registers) operand a is the register pair of the part's half of A in
  each thread, gathered over the warpgroup by :func:`xcc.semantics.wgmma.register_a`.  ``WARPGROUP.ARRIVE`` /
  ``.COMMIT`` / ``.DEPBAR`` (wgmma.fence / commit_group / wait_group) only check the warpgroup; ``FENCE.VIEW.ASYNC`` (fence.proxy.async) does nothing.

HMMA, IMMA and LDSM are warp-collective: all 32 lanes of the warp must execute them together, otherwise the
kernel faults (as :mod:`xcc.sim.ir.matrix` does); WGMMA and WARPGROUP.* are warpgroup-collective: all 128
threads of a warpgroup (CTA threads 128g .. 128g+127), as :mod:`xcc.sim.ir.async_ops`.
"""

from __future__ import annotations

import numpy as np

from xcc.backend.isa import MMA_SHAPE, TENSOR_FAMILY, of_class
from xcc.semantics import matrix, warp, wgmma
from xcc.semantics.async_copy import CopyGroups, oversized_source, read_zero_filled
from xcc.sim.copies import commit_executor, copy_groups, wait_executor
from xcc.sim.isa.exec_base import Binder, ExecFault, impl
from xcc.sim.isa.exec_memory import shared_addr
from xcc.sim.memory import MemoryFault, check_window

U32, U64 = np.uint32, np.uint64
_LO = U64(0xFFFFFFFF)
_32 = U64(32)


def full_warps(idx: np.ndarray, what: str) -> int:
    """The number of warps in ``idx`` when each executes with all 32 lanes; else an :class:`ExecFault`."""
    bad = warp.partial_warp(idx, what)
    if bad is not None:
        raise ExecFault(*bad)
    return idx.size // 32


# ============================================================================= HMMA / IMMA
def _pair(rd, sel, n: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """A W operand as (low, high) uint32 ``[w, 32]``."""
    v = np.broadcast_to(np.asarray(rd(sel, n), U64), (n,))
    return (v & _LO).astype(U32).reshape(w, 32), (v >> _32).astype(U32).reshape(w, 32)


def _one(rd, sel, n: int, w: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(rd(sel, n)), (n,)).astype(U32).reshape(w, 32)


def _fragments(mnemonic: str) -> tuple[str, int, int, int, bool, bool]:
    """(PTX shape, registers of A, B, C in the whole fragment, whether the half's A and C operands are register
    pairs) of the MMA half ``mnemonic``, from its :data:`~xcc.backend.isa.MMA_SHAPE` and element widths (8-bit
    A/B for the imma family, 16-bit otherwise; a 16-bit accumulator for the .F16 rows, 32-bit otherwise): a
    fragment of ``r x c`` elements of ``bits`` is ``r*c*bits/1024`` registers per lane.  A pair fills
    registers (0, 2) of A (rows groupID and groupID+8) and (0, 1) of C; a single R operand fills register 0."""
    m, n, k = MMA_SHAPE[mnemonic]
    ab = 8 if TENSOR_FAMILY[mnemonic] == "imma" or k == 32 else 16  # m16n8k32: s8/u8 or e4m3/e5m2
    if mnemonic.endswith(".TF32"):
        ab = 32
    cb = 16 if mnemonic.endswith(".F16") else 32
    na, nb, nc = m * k * ab // 1024, k * n * ab // 1024, m * n * cb // 1024
    return f"m{m}n{n}k{k}", na, nb, nc, na == 4, nc == 4


_MMA = {mn: _fragments(mn) for mn, family in TENSOR_FAMILY.items() if family in ("hmma", "imma")}


def mma_half(mnemonic: str, types: tuple[str, str, str, str], a: np.ndarray, b: np.ndarray, c: np.ndarray,
             satfinite: bool = False) -> np.ndarray:
    """The half instruction ``mnemonic`` on whole warps: its A, B, C operand registers ``[W, 32, k]`` (k = 2 for
    a pair, 1 for a single register) -> its D registers ``[W, 32, k]``, via :func:`xcc.semantics.matrix.mma`."""
    shape, na, nb, nc, a_pair, c_pair = _MMA[mnemonic]
    w = a.shape[0]
    fa = np.zeros((w, 32, na), U32)
    fa[..., [0, 2] if a_pair else [0]] = a
    fc = np.zeros((w, 32, nc), U32)
    fc[..., [0, 1] if c_pair else [0]] = c
    d = matrix.mma(shape, types, fa, np.asarray(b, U32).reshape(w, 32, nb), fc, satfinite)
    return d[..., :2] if c_pair else d[..., :1]


def _mma_types(x: Binder) -> tuple[str, str, str, str]:
    mn = x.inst.mnemonic
    if mn == "IMMA.16832":
        return ("s32", x.mod("atype").lower(), x.mod("btype").lower(), "s32")
    if mn.endswith(".TF32"):
        return ("f32", "tf32", "tf32", "f32")
    if mn.startswith("HMMA.16832."):  # FP8
        dt = mn.rsplit(".", 1)[1].lower()
        return (dt, x.mod("atype").lower(), x.mod("btype").lower(), dt)
    if mn.endswith(".F16"):
        return ("f16", "f16", "f16", "f16")
    at = x.mod("atype").lower()
    return ("f32", at, at, "f32")


@impl(*_MMA)
def _mma(x: Binder):
    mn = x.inst.mnemonic
    _, _, nb, _, a_pair, c_pair = _MMA[mn]
    types, sat = _mma_types(x), x.flag("SAT")
    ra = x.w("a") if a_pair else x.r("a")
    rb = x.w("b") if nb == 2 else x.r("b")
    rc = x.w("c") if c_pair else x.r("c")
    wd = x.set_w() if c_pair else x.set_r()

    def ops(rd, pair, sel, n, w):
        return np.stack(_pair(rd, sel, n, w), axis=-1) if pair else _one(rd, sel, n, w)[..., None]

    def run(sel, idx, n):
        w = full_warps(idx, mn)
        d = mma_half(mn, types, ops(ra, a_pair, sel, n, w), ops(rb, nb == 2, sel, n, w),
                     ops(rc, c_pair, sel, n, w), sat)
        if c_pair:
            wd(sel, (d[..., 0].astype(U64) | (d[..., 1].astype(U64) << _32)).reshape(n))
        else:
            wd(sel, d[..., 0].reshape(n))

    return run


# ============================================================================= LDSM
@impl("LDSM")
def _ldsm(x: Binder):
    """One matrix: rows from the shared addresses of lanes 8*mat .. 8*mat+7 of each warp."""
    mat, trans = int(x.mod("mat")[1]), x.flag("T")
    a, off, ctx, d = x.r("a"), int(x.ops["b"]), x.ctx, x.set_r()

    def run(sel, idx, n):
        w = full_warps(idx, "LDSM")
        rel = (np.broadcast_to(a(sel, n), (n,)).astype(np.int64) + off).reshape(w, 32)[:, 8 * mat:8 * mat + 8]
        bad = matrix.misaligned_rows(rel, mat, 0xFFFFFFFF)
        if bad is not None:
            raise ExecFault(*bad)
        cta = (idx.reshape(w, 32)[:, 8 * mat:8 * mat + 8] // ctx.tpb_pad).astype(np.int64)
        el = (rel[:, :, None] + 2 * np.arange(8)).reshape(w, 64)
        try:
            check_window(el.ravel(), ctx.smem_size, 2, "shared", f"the CTA's shared memory is {ctx.smem_size} bytes")
        except MemoryFault as f:
            if f.thread is not None:
                f.thread = int(f.thread) // 64 * 32 + 8 * mat + int(f.thread) % 64 // 8
            raise
        flat = (np.repeat(cta, 8, axis=1) * ctx.smem_stride + el).ravel()
        rows = np.asarray(ctx.smem.load(flat, 2)).reshape(w, 8, 8)
        d(sel, matrix.ldmatrix(rows, trans).reshape(n))

    return run


# ============================================================================= LDGSTS / LDGDEPBAR / DEPBAR
def _groups(ctx) -> CopyGroups:
    """The cp.async state of the wave now running (a new wave starts with none pending)."""
    return copy_groups(ctx.launch, ctx.regs.shape[1])


_CP_BYTES = {"32": 4, "64": 8, "128": 16}


@impl("LDGSTS")
def _ldgsts(x: Binder):
    cp = _CP_BYTES[x.mod("size")]
    dst_at, src_at, ctx = shared_addr(x), x.w("c"), x.ctx
    zfill = x.flag("ZFILL")
    size = x.r("e")

    def store(dst, words, width):
        ctx.smem.store(dst, words, width)

    def run(sel, idx, n):
        dst = dst_at(sel, idx, n, cp)
        src = np.broadcast_to(np.asarray(src_at(sel, n), U64), (n,))
        if zfill:
            src_size = np.broadcast_to(np.asarray(size(sel, n)).astype(np.int64), (n,))
            bad = oversized_source(src_size, cp)
            if bad is not None:
                raise ExecFault(*bad)
        else:
            src_size = np.full(n, cp, np.int64)
        _groups(ctx).issue(idx, dst, read_zero_filled(ctx.gmem, src, cp, src_size), cp, store)

    return run


@impl("LDGDEPBAR")
def _ldgdepbar(x: Binder):
    return commit_executor(lambda: _groups(x.ctx))


@impl("DEPBAR")
def _depbar(x: Binder):
    return wait_executor(lambda: _groups(x.ctx), int(x.ops["b"]))


# ============================================================================= WGMMA / WARPGROUP
def full_warpgroups(ctx, idx: np.ndarray, what: str) -> int:
    """The number of warpgroups in ``idx`` when each executes with all its 128 threads; else an ExecFault."""
    block = getattr(ctx, "block", None)  # the launch's block; without one, every padded slot is a thread
    threads = block[0] * block[1] * block[2] if block is not None else ctx.tpb_pad
    bad = warp.partial_warpgroup(idx, ctx.tpb_pad, threads, what)
    if bad is not None:
        raise ExecFault(*bad)
    return idx.size // 128


def _uniform(values: np.ndarray, g: int, what: str) -> np.ndarray:
    """The one value of each of ``g`` warpgroups (``values`` per thread); a differing one is a fault."""
    v = np.asarray(values).reshape(g, 128)
    bad = (v != v[:, :1]).any(axis=1)
    if bad.any():
        w = int(np.argmax(bad))
        t = int(np.argmax(v[w] != v[w, 0]))
        raise ExecFault(f"wgmma.mma_async: {what} differs between the threads of a warpgroup (it must be the same "
                        "in all)", w * 128 + t)
    return v[:, 0]


def wgmma_operand(ctx, desc: np.ndarray, lead: np.ndarray, rows: int, k_major: bool, etype: str,
                  depth: int = 1) -> np.ndarray:
    """The (G, rows, K) f64 matrix of each warpgroup's descriptor ``desc`` (G,) from the shared memory of the
    CTA of its first thread's wave slot ``lead`` (G,)."""
    d = wgmma.decode_descriptor(desc)
    if (d.base_offset != 0).any():
        w = int(np.argmax(d.base_offset != 0))
        raise ExecFault(f"wgmma.mma_async: matrix descriptor {int(desc[w]):#x} has base offset "
                        f"{int(d.base_offset[w])}; only 0 is supported", w * 128)
    eb, k = wgmma.ELEMENT_BYTES[etype], wgmma.k_of(etype) * depth  # depth 2: a sparse wgmma's B (K = 32)
    rel = wgmma.matrix_addresses(d, rows, eb, k_major, k).reshape(lead.size, -1)
    try:
        check_window(rel.ravel(), ctx.smem_size, eb, "shared", f"the CTA's shared memory is {ctx.smem_size} bytes")
    except MemoryFault as f:  # name the warpgroup's first thread
        f.thread = None if f.thread is None else int(f.thread) // rel.shape[1] * 128
        raise
    flat = (lead // ctx.tpb_pad).astype(np.int64)[:, None] * ctx.smem_stride + rel
    bits = np.asarray(ctx.smem.load(flat.ravel(), eb))
    return wgmma.to_f64(bits, etype).reshape(lead.size, rows, k)


@impl("WGMMA.F32", "QGMMA.F32", "TGMMA.F32", "IGMMA.S32", "WGMMA.SP", "TGMMA.SP", "QGMMA.SP", "IGMMA.SP")
def _wgmma(x: Binder):
    mn = x.inst.mnemonic
    sparse = mn.endswith(".SP")  # e: the accumulator (lo) and the metadata (hi); A compressed, B 2K deep
    part, n = int(x.ops["b"]), int(x.mod("n")[1:])
    atype, btype = x.mod("atype").lower(), x.mod("btype").lower()
    ka, kb, acc16, areg = not x.flag("TRANS_A"), not x.flag("TRANS_B"), x.flag("ACC_F16"), x.flag("AREG")
    sa, sb = (-1.0 if x.flag("NEG_A") else 1.0), (-1.0 if x.flag("NEG_B") else 1.0)
    da, db, scale_d, wr, ctx = x.w("a"), x.w("c"), x.p("ps"), x.set_r(), x.ctx
    c = x.w("e") if sparse else x.r("e")
    spsel = int(x.mod("sel")[3:]) if sparse else 0
    if not 0 <= part < n // 2:
        raise ExecFault(f"{mn} part {part} is not an accumulator register of m64n{n}k{wgmma.k_of(atype) * (1 + sparse)} "
                        f"(0..{n // 2 - 1})")

    def run(sel, idx, cnt):
        g = full_warpgroups(ctx, idx, "wgmma.mma_async")
        lead = idx.reshape(g, 128)[:, 0]
        a_val = np.broadcast_to(np.asarray(da(sel, cnt), U64), (cnt,))
        b_desc = _uniform(np.broadcast_to(np.asarray(db(sel, cnt), U64), (cnt,)), g, "matrix descriptor b")
        if areg:  # the part's half of A from the warpgroup's register pairs
            a = wgmma.register_a(a_val.reshape(g, 128), atype, (part // 2) % 2)
        else:
            a = wgmma_operand(ctx, _uniform(a_val, g, "matrix descriptor a"), lead, wgmma.M, ka, atype)
        b = wgmma_operand(ctx, b_desc, lead, n, kb, btype, 2 if sparse else 1) * sb
        sd = _uniform(np.broadcast_to(np.asarray(scale_d(sel, cnt), bool), (cnt,)), g, "scale-d")
        if sparse:
            ce = np.broadcast_to(np.asarray(c(sel, cnt), U64), (cnt,)).reshape(g, 128)
            cb = (ce & U64(0xFFFFFFFF)).astype(U32)
            a = wgmma.sparse_a(a, ce >> U64(32), spsel, atype)
        else:
            cb = np.broadcast_to(np.asarray(c(sel, cnt), U32), (cnt,)).reshape(g, 128)
        a = a * sa
        if atype in ("s8", "u8", "b1"):  # IGMMA.S32, IGMMA.SP
            wr(sel, wgmma.int_part(a, b, part, cb, sd, x.flag("SAT"), atype == "b1").reshape(cnt))
        else:
            wr(sel, wgmma.mma_part(a, b, part, cb, sd, "f16" if acc16 else "f32").reshape(cnt))

    return run


_WARPGROUP_PTX = {"ARRIVE": "wgmma.fence", "COMMIT": "wgmma.commit_group", "DEPBAR": "wgmma.wait_group"}
"""The PTX instruction each warpgroup fence (``WARPGROUP.<op>``) comes from, named in its faults."""


@impl(*sorted(of_class("warpgroup") - set(TENSOR_FAMILY)))
def _warpgroup(x: Binder):
    """Nothing to order or wait for (every WGMMA is complete when it executes): the warpgroup check only."""
    ctx, what = x.ctx, _WARPGROUP_PTX[x.inst.mnemonic.split(".")[1]]
    return lambda sel, idx, n: full_warpgroups(ctx, idx, what) and None


@impl("FENCE.VIEW.ASYNC")
def _fence_view_async(x: Binder):
    return lambda sel, idx, n: None
