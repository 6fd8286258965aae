"""One ``wgmma.mma_async`` (sm_90a) launched from operands the test lays out itself: the shared kernel and layout
helpers of tests/test_fp8_mma.py, tests/test_wgmma_tf32.py and tests/test_wgmma_int.py.

The kernel: 128 threads copy a 16 KiB image (A at byte 0, B at 8192) into shared memory, load their
accumulator words from out + 4 (N/2) t, run the one wgmma line from the descriptors da, db (offset by the shared
array's address) and store the accumulators back.  Nothing here calls xcc.semantics."""

from __future__ import annotations

import numpy as np

from xcc import runtime as rt

ENGINES = [("ir", 0), ("ir", 3), ("isa", 0), ("isa", 3)]

_KERNEL = r"""
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 img, .param .u64 out, .param .u64 da, .param .u64 db, .param .u32 sd)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .TYPE %a<NR>;
    .shared .align 1024 .b8 smem[16384];
    ld.param.u64 %rd1, [img];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r6, smem;
COPY:
    mad.lo.u32 %r3, %r2, 128, %r1;
    shl.b32 %r4, %r3, 2;
    cvt.u64.u32 %rd3, %r4;
    add.s64 %rd5, %rd1, %rd3;
    ld.global.u32 %r5, [%rd5];
    add.u32 %r7, %r6, %r4;
    st.shared.u32 [%r7], %r5;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 32;
    @%p1 bra COPY;
    mul.wide.u32 %rd6, %r1, STRIDE;
    add.s64 %rd4, %rd2, %rd6;
LOADS
    ld.param.u64 %rd7, [da];
    ld.param.u64 %rd8, [db];
    shr.u32 %r8, %r6, 4;
    cvt.u64.u32 %rd9, %r8;
    add.s64 %rd7, %rd7, %rd9;
    add.s64 %rd8, %rd8, %rd9;
    ld.param.u32 %r9, [sd];
    setp.ne.u32 %p2, %r9, 0;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    wgmma.fence.sync.aligned;
    MMA {REGS}, %rd7, %rd8, %p2TAIL;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
STORES
    ret;
}
"""

SW_MODE = {0: 0, 128: 1, 64: 2, 32: 3}
"""Swizzle bytes -> the descriptor's layout-type field (bits 62-63)."""


def kernel(mma: str, nr: int, acc: str, tail: str = "") -> str:
    """The kernel around ``mma`` (the instruction without operands), with ``nr`` accumulator registers of type
    ``acc`` (``f32``, ``s32``, or ``b32`` for packed f16 pairs: N/2 or N/4 of them for an m64nN shape); ``tail``:
    operands after scale-d (", imm-scale-a, imm-scale-b" ...)."""
    return (_KERNEL.replace("TYPE", acc).replace("NR", str(nr)).replace("STRIDE", str(4 * nr))
            .replace("MMA", mma).replace("TAIL", tail).replace("REGS", ", ".join(f"%a{i}" for i in range(nr)))
            .replace("LOADS", "\n".join(f"    ld.global.{acc} %a{i}, [%rd4+{4 * i}];" for i in range(nr)))
            .replace("STORES", "\n".join(f"    st.global.{acc} [%rd4+{4 * i}], %a{i};" for i in range(nr))))


def kmajor_offset(r: int, k: int, sw: int, lbo: int, sbo: int, elem_bytes: int) -> int:
    """PTX 9.7.15.5.1.2 (canonical K-major layouts): the byte offset of element (r, k) from the matrix start, for
    elements of ``elem_bytes`` bytes (16 bytes per chunk), swizzled (16-byte chunk ^= bits 7.. of the address)."""
    per_chunk = 16 // elem_bytes
    if sw == 0:
        return (r % 8) * 16 + (r // 8) * sbo + (k % per_chunk) * elem_bytes + (k // per_chunk) * lbo
    lin = (r % 8) * sw + (r // 8) * sbo + elem_bytes * k
    return lin ^ (((lin >> 7) & (sw // 16 - 1)) << 4)


def strides(sw: int) -> tuple[int, int]:
    """The (leading, stride) byte offsets the tests use for swizzle ``sw``."""
    return (128, 256) if sw == 0 else (0, 8 * sw)


def image(a: np.ndarray, b: np.ndarray, sw: int, elem_bytes: int) -> np.ndarray:
    """The 16 KiB shared-memory image as bytes: A (rows x K elements) at 0, B^T (N x K) at 8192, each element's
    ``elem_bytes`` little-endian bytes at its K-major offset."""
    lbo, sbo = strides(sw)
    img = np.zeros(16384, np.uint8)
    for base, m in ((0, a), (8192, b)):
        raw = np.ascontiguousarray(m.astype(f"<u{elem_bytes}" if elem_bytes > 1 else np.uint8)).view(np.uint8)
        raw = raw.reshape(m.shape[0], m.shape[1], elem_bytes)
        for r in range(m.shape[0]):
            for k in range(m.shape[1]):
                off = base + kmajor_offset(r, k, sw, lbo, sbo, elem_bytes)
                img[off:off + elem_bytes] = raw[r, k]
    return img


def owner(t: int, i: int) -> tuple[int, int]:
    """(row, column) of D held by accumulator register ``i`` of thread ``t`` (the wgmma D fragment)."""
    return 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (t % 4) + i % 2


def launch(ptx: str, img: np.ndarray, c0: np.ndarray, sw: int, engine: str, opt: int, scale_d: bool) -> np.ndarray:
    """Run ``ptx``'s kernel ``k`` on one 128-thread CTA; the accumulator words after it, as uint32 (128, N/2)."""
    lbo, sbo = strides(sw)

    def desc(start: int) -> int:
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | SW_MODE[sw] << 62

    dev = rt.Device()
    d_img, d_out = rt.to_device(img.view(np.uint32), dev), rt.to_device(np.ascontiguousarray(c0), dev)
    module = rt.load_module(ptx, device=dev, engine=engine, opt_level=opt)
    module.get_function("k").launch((1, 1, 1), (128, 1, 1), [d_img, d_out, np.uint64(desc(0)), np.uint64(desc(8192)),
                                                             np.uint32(scale_d)])
    return d_out.copy_to_host().view(np.uint32).reshape(c0.shape)
