"""Lowering of the Volta-era half-precision warp MMA,
``mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype d, a, b, c`` (PTX ISA 9.7.14.5.1; sm_70, PTX 6.4),
into SIMT IR: xg1's tensor unit has no 8x8x4 operation and no quad-pair mode, so each lane gathers the A and B
elements its D elements need with ``shfl.idx`` and computes each element as a chain of ``fma.rn.f32``.

**Quad pairs**: the warp computes four independent ``D = A B + C`` of 8 x 8 x 4, each on the eight lanes of one
quad pair: the low group ``4q .. 4q + 3`` and the high group ``16 + 4q .. 19 + 4q`` (q = 0..3).  No data crosses
quad pairs.

**Fragments** (the manual's "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"; ``r`` = lane % 4,
``h`` = 1 in the high group; element ``i`` of a fragment is half ``i % 2`` of register ``i / 2``, low first):

* A (two .f16x2 registers, ``a0..a3``): ``.row`` a_i at (r + 4h, i); ``.col`` a_i at (i + 4h, r).
* B (two .f16x2 registers, ``b0..b3``): ``.row`` b_i at (r, i + 4h); ``.col`` b_i at (i, r + 4h).
* C/D ``.f16`` (four .f16x2 registers, ``c0..c7``): c_i at (r + 4h, i).
* C/D ``.f32`` (eight .f32 registers): c_i at ((lane & 1) + (i & 2) + 4h, (i & 4) + (lane & 2) + (i & 1)).

Every lane that holds a wanted element is ``(lane & mask) | const`` for a mask and constant fixed at compile
time (the quad pair's bits are kept, the rest chosen), so each gather is one ``shfl.idx`` of one register; where
the element within the fetched register pair depends on the lane, a ``prmt`` with a lane-computed selector picks
it.  An ``.f32`` D with an ``.f16`` C takes C's elements from the lanes of the ``.f16`` layout.

**Types** (ptxas 13.0 accepts them for sm_75 .. sm_90, and PTX for sm_70): ``.f16.f16.f16.f16``,
``.f32.f16.f16.f32`` and ``.f32.f16.f16.f16``; ``.alayout``/``.blayout`` each ``.row`` or ``.col``.
``.f16.f16.f16.f32`` is refused, as ptxas refuses it (".dtype must be '.f32' when .ctype is '.f32'"), and so are
the ``.bf16`` and ``.tf32`` m8n8k4 forms ptxas takes but the PTX ISA does not document (no fragment layout):
for them ptxas 13.0 emits no arithmetic at all (sm_80 SASS through nvdisasm: no HMMA, FFMA or SHFL; D's stores
read registers nothing wrote), so they have no result to match.

**Arithmetic** (xcc's rule; PTX: products in at least single precision, accumulation in at least single
precision when C or D is .f32 and at least half precision otherwise, order, rounding and subnormal handling
unspecified): ``d = fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, c))))`` over k ascending, each an
``fma.rn.f32`` on the exactly widened .f16 values (an .f16 C widened exactly too).  A product of two .f16 values
is exact in f32, so each step rounds ``acc + a_k b_k`` once to nearest even; subnormal inputs, products and sums
are kept (no flush); infinities and NaNs follow ``fma.rn.f32``.  An ``.f16`` D is that f32 result converted with
``cvt.rn.f16.f32``.  An NVIDIA tensor core may round differently in the last bits (docs/semantics.md).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

QP_TYPES = {("f16", "f16"), ("f32", "f32"), ("f32", "f16")}
"""The (.dtype, .ctype) pairs of ``mma.m8n8k4`` with .f16 A and B."""
_OWN = (0x1F, 0)  # the source lane (lane & 0x1F) | 0: this lane


def _full(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


def _operand_lanes(dtype: str, alay: str, blay: str, i: int, k: int):
    """Where D element ``i``'s A(m, k), B(k, n) and (an .f16 C for an .f32 D) C(m, n) lie: for each, (source lane
    as (mask, const), first register of the pair, element in the pair: an int or, lane-dependent, (mask, const)),
    every lane quantity meaning ``(lane & mask) | const`` (module doc's fragments)."""
    if dtype == "f16":  # m = r + 4h (this lane's row), n = i
        a = (_OWN, 0, k) if alay == "row" else ((0x1C, k), 0, (0x3, 0))
        hn = (i & 4) << 2  # the group holding column n
        b = ((0x0C, k | hn), 0, (i & 3)) if blay == "row" else ((0x0C, (i & 3) | hn), 0, k)
        return a, b, None
    # m = (lane & 1) + (i & 2) + 4h, n = (i & 4) + (lane & 2) + (i & 1)
    a = ((0x1D, i & 2), 0, k) if alay == "row" else ((0x1C, k), 0, (0x1, i & 2))
    hn = (i & 4) << 2
    b = ((0x0C, k | hn), 0, (0x2, i & 1)) if blay == "row" else ((0x0E, (i & 1) | hn), 0, k)
    c = ((0x1D, i & 2), 2 * (i >> 2), (0x2, i & 1))
    return a, b, c


class QuadPairMmaLowering:
    def quad_pair_mma(self, inst) -> None:
        """``mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype`` as shuffles and an fma chain (module
        doc)."""
        full = _full(inst)
        mods = inst.modifiers
        for req in ("sync", "aligned"):
            if req not in mods:
                raise self.error(f"'{full}' without .{req} is not supported")
        types = [m for m in mods if m in ("f16", "f32", "f64", "bf16", "tf32", "s8", "u8", "s32", "e4m3", "e5m2")]
        extra = [m for m in mods if m not in ("sync", "aligned", "m8n8k4", "row", "col") and m not in types]
        if extra:
            raise self.error(f"'{full}': {', '.join('.' + m for m in extra)} is not supported with .m8n8k4")
        lays = [m for m in mods if m in ("row", "col")]
        if len(lays) != 2:
            raise self.error(f"'{full}': .m8n8k4 takes an A and a B layout (.row or .col each)", PtxSemanticError)
        if len(types) != 4:
            raise self.error(f"'{full}' needs .dtype.atype.btype.ctype", PtxSemanticError)
        dtype, atype, btype, ctype = types
        if {atype, btype} & {"bf16", "tf32"} and {atype, btype} <= {"bf16", "tf32", "f16"}:
            raise self.error(f"'{full}': .m8n8k4 with .{atype}/.{btype} A and B is not supported (the PTX ISA "
                             "documents .f16 A and B only, and no fragment layout for these; ptxas 13.0 takes them "
                             "but emits no arithmetic for them, leaving D undefined)")
        if (atype, btype) != ("f16", "f16") or (dtype, ctype) not in QP_TYPES | {("f16", "f32")}:
            raise self.error(f"'{full}': .m8n8k4 takes .dtype.f16.f16.ctype with .f16 or .f32 C and D",
                             PtxSemanticError)
        if (dtype, ctype) == ("f16", "f32"):
            raise self.error(f"'{full}': .dtype must be .f32 when .ctype is .f32 for .m8n8k4", PtxSemanticError)
        if len(inst.operands) != 4:
            raise self.error(f"'{full}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        b32, f32 = ptx_type("b32"), ptx_type("f32")
        regs_a = [self.read(o, b32) for o in self._mx_vector(a, 2, "A")]
        regs_b = [self.read(o, b32) for o in self._mx_vector(b, 2, "B")]
        nc, nd = (8 if ctype == "f32" else 4), (8 if dtype == "f32" else 4)
        regs_c = [self.read(o, f32 if ctype == "f32" else b32) for o in self._mx_vector(c, nc, "C")]
        dests = self._mx_dests(d, nd, "D")
        self._qp_compute(dtype, ctype, lays, regs_a, regs_b, regs_c, dests)

    def _qp_compute(self, dtype, ctype, lays, regs_a, regs_b, regs_c, dests) -> None:
        u32, b32, f16, f32 = (ptx_type(t) for t in ("u32", "b32", "f16", "f32"))
        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        lanes: dict = {}
        fetched: dict = {}
        elems: dict = {}

        def lane_value(q):
            """``(lane & mask) | const`` as a u32 value."""
            if q not in lanes:
                mask, const = q
                v = self._qp_op("and", lane, mask)
                lanes[q] = self._qp_op("or", v, const) if const else v
            return lanes[q]

        def fetch(name, regs, idx, src):
            """Register ``idx`` of fragment ``regs`` in lane ``src``."""
            if src == _OWN:
                return regs[idx]
            key = (name, idx, src)
            if key not in fetched:
                v = regs[idx]
                if v.type != u32:
                    v = self.emit("mov", u32, [v], u32).result
                fetched[key] = self.emit("shfl", u32, [v, lane_value(src), Const(u32, 0x1F),
                                                       Const(u32, 0xFFFFFFFF)], u32, mode="idx").result
            return fetched[key]

        def element(name, regs, where):
            """The f16 element (as an exact f32) at ``where`` = (source lane, first register, element)."""
            src, base, e = where
            key = (name, src, base, e)
            if key not in elems:
                if isinstance(e, int):
                    h = self.emit("unpack", b32, [fetch(name, regs, base + (e >> 1), src)], f16, index=e & 1).result
                else:
                    mask, const = e
                    choices = {(v & mask) | const for v in range(4)}
                    lo = fetch(name, regs, base + (min(choices) >> 1), src)
                    hi = fetch(name, regs, base + (max(choices) >> 1), src)
                    # bytes 2e, 2e + 1 of {hi, lo}: the selector 0x22 e + 0x10
                    sel = self._qp_op("add", self._qp_op("mul", lane_value(e), 0x22), 0x10)
                    p = self.emit("prmt", b32, [lo, hi, sel], b32).result
                    h = self.emit("unpack", b32, [p], f16, index=0).result
                elems[key] = self.emit("cvt", f32, [h], f32, src="f16").result
            return elems[key]

        alay, blay = lays
        results = []
        for i in range(8):
            if isinstance(dests[i if dtype == "f32" else i >> 1], ast.Sink):
                results.append(None)
                continue
            if ctype == dtype == "f32":
                acc = regs_c[i]
                if acc.type != f32 and not isinstance(acc, Const):
                    acc = self.emit("mov", f32, [acc], f32).result
            elif ctype == dtype:  # .f16: this lane's own row, element i
                acc = element("c", regs_c, (_OWN, 0, i))
            else:  # .f32 D, .f16 C: from the .f16 layout's lanes
                acc = element("c", regs_c, _operand_lanes(dtype, alay, blay, i, 0)[2])
            for k in range(4):
                wa, wb, _ = _operand_lanes(dtype, alay, blay, i, k)
                acc = self.emit("fma", f32, [element("a", regs_a, wa), element("b", regs_b, wb), acc], f32,
                                rnd="rn").result
            results.append(acc)
        if dtype == "f32":
            for dst, v in zip(dests, results):
                if v is not None:
                    self.write(dst, v)
            return
        for j, dst in enumerate(dests):
            if isinstance(dst, ast.Sink):
                continue
            lo, hi = (self.emit("cvt", f16, [results[2 * j + p]], f16, src="f32", rnd="rn").result for p in (0, 1))
            self.write(dst, self.emit("pack", b32, [lo, hi], b32).result)

    def _qp_op(self, op: str, x, y: int):
        u32 = ptx_type("u32")
        return self.emit(op, u32, [x, Const(u32, y)], u32, **({"mode": "lo"} if op == "mul" else {})).result
