"""Lowering of double-precision warp MMA, ``mma.sync.aligned.shape.row.col{.rn}.f64.f64.f64.f64 d, a, b, c``
(PTX ISA 9.7.14.5: ``.m8n8k4`` sm_80, ``.m16n8k4``/``.m16n8k8``/``.m16n8k16`` sm_90; ``.rz``/``.rm``/``.rp`` round
each step of the chain below that way), into SIMT IR: xg1 has no
FP64 tensor-core instruction, so each lane gathers the A row and B column elements its D elements need with
``shfl.idx`` (each f64 as two 32-bit halves) and computes each element as a chain of fused multiply-adds.

**Fragments** (``g`` = lane >> 2, ``t`` = lane & 3; the PTX ISA's "Matrix Fragments for mma.m8n8k4 / m16n8k4 /
m16n8k8 / m16n8k16" with ``.f64``, which CUTLASS's ``SM80_8x8x4_F64F64F64F64_TN`` and ``SM90_16x8x*_F64...``
atoms restate):

* ``m8n8k4``: A ``a0`` at (g, t); B ``b0`` at (t, g); C/D ``c0, c1`` at (g, 2t + i).
* ``m16n8kK`` (K = 4, 8, 16): A ``a0 .. a(K/2 - 1)`` at (g + 8 (i % 2), t + 4 (i / 2)); B ``b0 .. b(K/4 - 1)`` at
  (t + 4i, g); C/D ``c0 .. c3`` at (g + 8 (i / 2), 2t + i % 2).

So A element (r, k) is register ``(r / 8) + 2 (k / 4)`` (m8n8k4: register 0) of lane ``4 (r % 8) + k % 4``, and
B element (k, n) register ``k / 4`` of lane ``4n + k % 4``.

**Arithmetic** (xcc's rule; PTX gives the result as ``D = A * B + C`` in f64 with round to nearest and does not
state the order): ``d = fma(A[r, K-1], B[K-1, n], ... fma(A[r, 1], B[1, n], fma(A[r, 0], B[0, n], C[r, n])))``,
each ``fma.rn.f64`` (one rounding per step, k ascending), so NaNs, infinities and subnormals follow ``fma.rn.f64``.
Whether an NVIDIA GPU's DMMA rounds in this order is open (docs/semantics.md).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

F64_SHAPES = {"m8n8k4": (8, 4), "m16n8k4": (16, 4), "m16n8k8": (16, 8), "m16n8k16": (16, 16)}
"""The f64 mma shapes: (M, K); N is 8."""


class Float64MmaLowering:
    def f64_mma(self, inst, shape: str, rnd: str = "rn") -> None:
        """``mma.sync.aligned.shape.row.col{.rnd}.f64.f64.f64.f64`` as shuffles and an fma chain, each step rounded
        in ``rnd`` (.rn, .rz, .rm, .rp: PTX ISA 9.7.14.5.14's .rnd; module doc)."""
        m, k = F64_SHAPES[shape]
        na, nb, ncd = (1, 1, 2) if m == 8 else (k // 2, k // 4, 4)
        if len(inst.operands) != 4:
            raise self.error(f"'{'.'.join((inst.opcode, *inst.modifiers))}' takes 4 operands (d, a, b, c)",
                             PtxSemanticError)
        d, a, b, c = inst.operands
        f64 = ptx_type("f64")
        regs_a = [self.read(o, f64) for o in self._mx_vector(a, na, "A")]
        regs_b = [self.read(o, f64) for o in self._mx_vector(b, nb, "B")]
        regs_c = [self.read(o, f64) for o in self._mx_vector(c, ncd, "C")]
        self.f64_mma_regs(shape, regs_a, regs_b, regs_c, list(self._mx_vector(d, ncd, "D")), rnd)

    def f64_mma_regs(self, shape: str, regs_a, regs_b, regs_c, dests, rnd: str) -> None:
        """D (``dests``, f64 registers or sinks) of the f64 MMA ``shape`` on the fragment values ``regs_a``,
        ``regs_b``, ``regs_c``, each step an ``fma`` rounded in ``rnd`` (``wmma.mma`` m8n8k4 takes .rn, .rz, .rm
        or .rp, and so does mma.sync)."""
        m, k = F64_SHAPES[shape]
        f64, u32 = ptx_type("f64"), ptx_type("u32")
        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        g4 = self._dm("and", lane, 0x1C)              # 4 g: the lanes of this lane's row group
        t8 = self._dm("shl", self._dm("and", lane, 3), 3)  # 4 (2t): the lanes of column 2t
        halves = {}

        def fetch(v, src):
            """The f64 ``v`` of lane ``src`` (a u32 value), as two 32-bit shuffles."""
            parts = []
            for h in range(2):
                w = self.emit("unpack", f64, [v], u32, index=h).result
                parts.append(self.emit("shfl", u32, [w, src, Const(u32, 0x1F), Const(u32, 0xFFFFFFFF)], u32,
                                       mode="idx").result)
            return self.emit("pack", f64, parts, f64).result

        for i, dst in enumerate(dests):
            if isinstance(dst, ast.Sink):
                continue
            h, p = (0, i) if m == 8 else (i >> 1, i & 1)  # row g + 8h, column 2t + p
            acc = regs_c[i]
            for kk in range(k):
                key_a = ("a", h, kk)
                if key_a not in halves:
                    halves[key_a] = fetch(regs_a[h + 2 * (kk >> 2)], self._dm("or", g4, kk & 3))
                key_b = ("b", p, kk)
                if key_b not in halves:
                    halves[key_b] = fetch(regs_b[kk >> 2], self._dm("or", t8, 4 * p + (kk & 3)))
                acc = self.emit("fma", f64, [halves[key_a], halves[key_b], acc], f64, rnd=rnd).result
            self.write(dst, acc)

    def _dm(self, op: str, x, y: int):
        u32 = ptx_type("u32")
        return self.emit(op, u32, [x, Const(u32, y)], u32).result
