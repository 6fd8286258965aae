"""What the call instructions do when interpreted (executors registered with
:func:`xcc.sim.isa.exec_base.impl`; imported by :mod:`xcc.sim.isa.executors` before its completeness
check).

* ``CALL`` and ``RET`` are :class:`~xcc.sim.isa.exec_base.Control` instructions: the emulator's scheduler
  (:mod:`xcc.sim.isa.emulator`) moves each thread to the callee or back to the pc its return-address
  register pair holds, saving and restoring the thread's convergence-barrier membership and predicates
  in the high word of that pair (see docs/isa.md, "Calls").  This module provides their operand
  readers and the stack-overflow check.
* ``SYSCALL`` runs the CUDA runtime's services: ``TRAP`` faults with a message of the image,
  ``VPRINTF`` formats with C semantics (:func:`xcc.sim.printf.c_printf`, the IR interpreter's
  formatter) and collects the text per thread (``ctx.printf``: (CTA, thread, order, text), printed in
  thread order after the launch), ``ASSERTFAIL`` faults with the assertion message.
"""

from __future__ import annotations

import numpy as np

from xcc.backend.isa import NUM_CONV_BARRIERS, NUM_PREDS
from xcc.sim.isa.exec_base import Binder, Control, ExecFault, impl

U32, U64 = np.uint32, np.uint64
_LO = U64(0xFFFFFFFF)
_32 = U64(32)
PRED_SHIFT = 16  # d.hi bits 0-15: membership of B0..B15; bits 16-22: P0..P6


def save_state(bmask: np.ndarray, preds: np.ndarray, sel) -> np.ndarray:
    """The saved-state word (uint64, the high half of the return-address pair) of threads ``sel``."""
    m = bmask[:, sel]
    hi = np.zeros(m.shape[1], U64)
    for k in range(NUM_CONV_BARRIERS):
        hi |= m[k].astype(U64) << U64(k)
    for p in range(NUM_PREDS):
        hi |= preds[p][sel].astype(U64) << U64(PRED_SHIFT + p)
    return hi


def restore_state(bmask: np.ndarray, preds: np.ndarray, sel, hi: np.ndarray) -> None:
    hi = np.asarray(hi, U64)
    for k in range(NUM_CONV_BARRIERS):
        bmask[k][sel] = ((hi >> U64(k)) & U64(1)).astype(bool)
    for p in range(NUM_PREDS):
        preds[p][sel] = ((hi >> U64(PRED_SHIFT + p)) & U64(1)).astype(bool)


@impl("CALL")
def _call(x: Binder):
    """Control('CALL', target, barrier=(probe reader, return-pair writer))."""
    return Control("call", target=x.pc + 1 + int(x.ops["b"]), barrier=(x.r("a"), x.set_w("d")))


@impl("RET")
def _ret(x: Binder):
    """Control('RET', barrier=reader of the return-address pair)."""
    return Control("return", barrier=x.w("a"))


def check_stack(probe: np.ndarray, local_size: int, callee: str) -> None:
    """A CALL whose callee's frame would end past the thread's local memory: a stack overflow."""
    over = np.asarray(probe, np.int64) > local_size
    if over.any():
        t = int(np.argmax(over))
        raise ExecFault(f"call stack overflow: the frame of the callee{callee} would end at byte "
                        f"{int(np.asarray(probe)[t])} of the thread's {local_size}-byte local memory "
                        "(unbounded recursion?)", t, int(over.sum()))


@impl("SYSCALL")
def _syscall(x: Binder):
    svc, ctx = x.mod("svc"), x.ctx
    a = x.r("a")
    code = int(x.ops["b"])

    if svc == "TRAP":
        def trap(sel, idx, n):
            messages = getattr(ctx, "messages", None) or []
            raise ExecFault(messages[code] if 0 <= code < len(messages) else "trap: the kernel aborted", 0, n)

        return trap

    def word(base: int, slot: int, off: int, nbytes: int = 8) -> int:
        at = slot * ctx.local_stride + base + off
        if base + off + nbytes > ctx.local_size or base + off < 0:
            raise ExecFault(f"the argument block of {svc} at local address {base:#x} lies outside the thread's "
                            f"{ctx.local_size}-byte local memory")
        return int.from_bytes(ctx.lmem.buf[at:at + nbytes].tobytes(), "little")

    def run(sel, idx, n):
        base = np.broadcast_to(np.asarray(a(sel, n)), (n,)).astype(np.int64)
        generic = ctx.generic
        for i, slot in enumerate(idx.tolist()):
            b = int(base[i])
            if svc == "ASSERTFAIL":
                msg, file, func = (generic.read_bytes(word(b, slot, off), slot).decode(errors="replace")
                                   for off in (0, 8, 24))
                raise ExecFault(f"assertion failed: {file}:{word(b, slot, 16, 4)}: {func}: Assertion `{msg}` "
                                "failed.", i)
            from xcc.sim.printf import c_printf

            fmt = generic.read_bytes(word(b, slot, 0), slot)
            text, count = c_printf(fmt, lambda addr, size, s=slot: generic.read_bytes(addr, s, size),
                                   word(b, slot, 8))
            out = ctx.printf
            out.append((ctx.cta0 + slot // ctx.tpb_pad, slot % ctx.tpb_pad, len(out), text))
            at = slot * ctx.local_stride + b + 16
            ctx.lmem.buf[at:at + 4] = np.frombuffer(np.int32(count).tobytes(), np.uint8)

    return run

