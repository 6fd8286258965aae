"""Lowering of the ``wmma`` shapes whose fragments xg1 has no load/store rule for, as ordinary loads and stores
and the ``mma`` they are made of (PTX ISA 9.7.14.4, sm_80):

* ``.m16n16k8`` with ``.tf32`` A/B and ``.f32`` C/D: ``wmma.load.{a,b}...m16n16k8{.space}.tf32``,
  ``wmma.load.c / wmma.store.d ...m16n16k8{.space}.f32``, ``wmma.mma.sync.aligned.alayout.blayout.m16n16k8.f32.tf32.tf32.f32``;
* ``.m8n8k4`` ``.f64``: ``wmma.load.{a,b,c}...m8n8k4{.space}.f64``, ``wmma.store.d...m8n8k4{.space}.f64``,
  ``wmma.mma.sync.aligned.alayout.blayout.m8n8k4.f64.f64.f64.f64{.rn,.rz,.rm,.rp}``;
* ``.m16n16k16`` ``.s8``/``.u8`` A/B with ``.s32`` C/D (``wmma.mma...s32.{s8,u8}.{s8,u8}.s32{.satfinite}``): A is the
  ``mma.m16n8k16`` byte A fragment (register ``r``: row ``g + 8r``, columns ``4t .. 4t + 3``), B register ``r`` the
  m16n8k16 B fragment of columns ``8r ..`` (rows ``4t .. 4t + 3`` of column ``g + 8r``), C/D the m16n16k16
  accumulator layout; each register's four bytes are one 32-bit access where they are adjacent in memory, four
  byte loads otherwise; ``wmma.mma`` is two byte MMAs (IMMA);
* ``.m8n8k32`` ``.s4``/``.u4`` and ``.m8n8k128`` ``.b1`` (A ``.row``, B ``.col`` only, as PTX requires), ``.s32``
  C/D: loads, stores, and ``wmma.mma`` by :mod:`xcc.ir.lower_subbyte_mma`;
* ``.m32n8k16`` and ``.m8n32k16`` with ``.f16`` A/B and ``.f16``/``.f32`` C/D, and with
  ``.bf16`` A/B (their distinct elements only, as m16n16k16's) and ``.f32`` C/D; and with ``.s8``/``.u8`` A/B and
  ``.s32`` C/D (bytes as m16n16k16's, ``_wmma_int8_tall_wide``): two halves a register, one 32-bit access where adjacent in memory, two 16-bit ones otherwise;
  ``wmma.mma`` is two (m32n8k16) or four (m8n32k16) ``mma.m16n8k16`` (``_wmma_f16_tall_wide``); an .f16 D from
  an .f32 C is the .f32 product rounded to f16 afterwards, as ptxas compiles it (``_f16_from_f32_d``).

**Fragments.**  PTX leaves wmma fragment layouts unspecified; xcc takes those of the ``mma`` the product is made
of, as it does for m16n16k16 (:mod:`xcc.semantics.matrix`), with ``g`` = lane >> 2, ``t`` = lane & 3:

* m16n16k8 A (16 x 8, 4 registers): the ``mma.m16n8k8 .tf32`` A fragment, element ``i`` at (g + 8 (i % 2),
  t + 4 (i / 2)); B (8 x 16, 4 registers): registers 0, 1 the m16n8k8 B fragment of columns 0-7, 2, 3 that of
  columns 8-15, element ``i`` at (t + 4 (i % 2), g + 8 (i / 2)); C/D (16 x 16 f32, 8 registers): the m16n16k16
  accumulator layout, element ``i`` at (g + 8 ((i / 2) % 2), 2t + i % 2 + 8 (i / 4)).  ``wmma.mma`` is two
  ``mma.m16n8k8.f32.tf32.tf32.f32`` (columns 0-7 and 8-15), with their rule (the exact sum rounded once).
* m32n8k16 A (32 x 16, 8 registers): registers 0-3 the m16n8k16 A fragment of rows 0-15, 4-7 that of rows 16-31;
  B (16 x 8, 8 registers): registers 0, 1 the m16n8k16 B fragment, 2-7 repeat them; C/D (32 x 8): elements 0-3 the
  m16n8 accumulator of rows 0-15, 4-7 that of rows 16-31.  m8n32k16 A (8 x 16): registers 0, 1 hold row g,
  columns 2t, 2t + 1 and 2t + 8, 2t + 9 (the m16n8k16 A registers 0 and 2), 2-7 repeat them; B (16 x 32):
  registers 2j, 2j + 1 the m16n8k16 B fragment of columns 8j ..; C/D (8 x 32): elements 2j, 2j + 1 at (g,
  8j + 2t + i).
* m8n8k4 A (8 x 4): element 0 at (g, t); B (4 x 8): (t, g); C/D (8 x 8): element ``i`` at (g, 2t + i): the
  ``mma.m8n8k4 .f64`` fragments.  ``wmma.mma`` is :mod:`xcc.ir.lower_dmma`'s fma chain, in the rounding mode
  given (default .rn).
* m8n8k32 / m8n8k128: the ``mma.m8n8k32`` / ``mma.m8n8k128`` fragments: A register 0 holds row g, columns
  ``E t .. E t + E - 1`` (E = 8 nibbles or 32 bits, low first); B register 0 rows ``E t ..`` of column g; C/D as
  m8n8k4.  In memory each is one 32-bit word (the ``.row`` A row or ``.col`` B column is packed, element x at
  bit ``x * bits`` from the start).

Fragments are register-for-register what nvcc's ``nvcuda::wmma`` code passes between these instructions, so any
kernel that only loads, stores, multiplies and applies element-wise operations (as ``__float_to_tf32`` over
``x[]``) gets the same matrices on any layout.

**Memory.**  Element (r, c) of a ``.row`` matrix is at ``p + (r * stride + c) * size``, of a ``.col`` matrix at
``p + (c * stride + r) * size`` (9.7.14.4.2); each lane computes its addresses from its own ``p`` and stride
(PTX requires them warp-uniform); without a stride operand the matrix is dense (stride = its columns for
``.row``, rows for ``.col``).  The accesses are ordinary ``ld``/``st`` of 4 or 8 bytes: their natural alignment is
checked, not the fragment-size alignment of rows that 9.7.14.4.2 requires (a misaligned row that is still
element-aligned is not reported).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import is_type_name, ptx_type


def _elem_type(m: str) -> bool:
    return is_type_name(m) or m in ("e4m3", "e5m2", "tf32")

# shape -> operand -> (rows, columns, [(row lane part, row const, col lane part, col const) per element])
_G, _T, _T2, _T4, _T8, _T32 = "g", "t", "t2", "t4", "t8", "t32"
WMMA_SIMT = {
    "m16n16k8": {
        "a": (16, 8, [(_G, 8 * (i % 2), _T, 4 * (i // 2)) for i in range(4)]),
        "b": (8, 16, [(_T, 4 * (i % 2), _G, 8 * (i // 2)) for i in range(4)]),
        "c": (16, 16, [(_G, 8 * ((i // 2) % 2), _T2, i % 2 + 8 * (i // 4)) for i in range(8)]),
    },
    "m16n16k16.int": {  # .s8/.u8 A/B (4 bytes a register, entries per byte), .s32 C/D
        "a": (16, 16, [(_G, 8 * r, _T4, j) for r in range(2) for j in range(4)]),
        "b": (16, 16, [(_T4, j, _G, 8 * r) for r in range(2) for j in range(4)]),
        "c": (16, 16, [(_G, 8 * ((i // 2) % 2), _T2, i % 2 + 8 * (i // 4)) for i in range(8)]),
    },
    "m8n8k32": {  # one register: 8 nibbles of a row of A (a column of B)
        "a": (8, 32, [(_G, 0, _T8, 0)]),
        "b": (32, 8, [(_T8, 0, _G, 0)]),
        "c": (8, 8, [(_G, 0, _T2, i) for i in range(2)]),
    },
    "m8n8k128": {  # one register: 32 bits of a row of A (a column of B)
        "a": (8, 128, [(_G, 0, _T32, 0)]),
        "b": (128, 8, [(_T32, 0, _G, 0)]),
        "c": (8, 8, [(_G, 0, _T2, i) for i in range(2)]),
    },
    "m32n8k16": {  # .f16: two m16n8k16 (rows 0-15, 16-31) on the same B
        "a": (32, 16, [(_G, 8 * ((i >> 1) & 1) + 16 * (i >> 3), _T2, (i & 1) + 8 * ((i >> 2) & 1)) for i in range(16)]),
        "b": (16, 8, [(_T2, (i & 1) + 8 * ((i >> 1) & 1), _G, 0) for i in range(16)]),
        "c": (32, 8, [(_G, 8 * ((i >> 1) & 1) + 16 * (i >> 2), _T2, i & 1) for i in range(8)]),
    },
    "m8n32k16": {  # .f16: four m16n8k16 (columns 8j ..) on the same 8-row A (rows 8-15 of the mma: zero)
        "a": (8, 16, [(_G, 0, _T2, (i & 1) + 8 * ((i >> 1) & 1)) for i in range(16)]),
        "b": (16, 32, [(_T2, (i & 1) + 8 * ((i >> 1) & 1), _G, 8 * ((i >> 2) & 3)) for i in range(16)]),
        "c": (8, 32, [(_G, 0, _T2, (i & 1) + 8 * (i >> 1)) for i in range(8)]),
    },
    "m32n8k16.int": {  # .s8/.u8: two m16n8k16 byte MMAs (rows 0-15: A registers 0, 1; rows 16-31: 2, 3)
        "a": (32, 16, [(_G, 8 * r + 16 * h, _T4, j) for h in range(2) for r in range(2) for j in range(4)]),
        "b": (16, 8, [(_T4, j, _G, 0) for j in range(4)]),
        "c": (32, 8, [(_G, 8 * ((i >> 1) & 1) + 16 * (i >> 2), _T2, i & 1) for i in range(8)]),
    },
    "m8n32k16.int": {  # .s8/.u8: four m16n8k16 byte MMAs (columns 8j ..: B register j) on the 8-row A
        "a": (8, 16, [(_G, 0, _T4, j) for j in range(4)]),
        "b": (16, 32, [(_T4, j, _G, 8 * r) for r in range(4) for j in range(4)]),
        "c": (8, 32, [(_G, 0, _T2, (i & 1) + 8 * (i >> 1)) for i in range(8)]),
    },
    "m8n8k4": {
        "a": (8, 4, [(_G, 0, _T, 0)]),
        "b": (4, 8, [(_T, 0, _G, 0)]),
        "c": (8, 8, [(_G, 0, _T2, i) for i in range(2)]),
    },
}
"""Each wmma shape lowered here: its fragments (module doc)."""
_TYPES = {"m16n16k8": {"a": ("tf32",), "b": ("tf32",), "c": ("f32",)},
          "m8n8k4": {"a": ("f64",), "b": ("f64",), "c": ("f64",)},
          "m8n8k32": {"a": ("s4", "u4"), "b": ("s4", "u4"), "c": ("s32",)},
          "m8n8k128": {"a": ("b1",), "b": ("b1",), "c": ("s32",)},
          "m16n16k16.int": {"a": ("s8", "u8"), "b": ("s8", "u8"), "c": ("s32",)},
          "m32n8k16.int": {"a": ("s8", "u8"), "b": ("s8", "u8"), "c": ("s32",)},
          "m8n32k16.int": {"a": ("s8", "u8"), "b": ("s8", "u8"), "c": ("s32",)},
          "m32n8k16": {"a": ("f16", "bf16"), "b": ("f16", "bf16"), "c": ("f16", "f32")},
          "m8n32k16": {"a": ("f16", "bf16"), "b": ("f16", "bf16"), "c": ("f16", "f32")}}
_BITS = {"tf32": 32, "f32": 32, "s32": 32, "f64": 64, "s4": 4, "u4": 4, "b1": 1, "s8": 8, "u8": 8, "f16": 16,
         "bf16": 16}
# .bf16 A/B fragments of these shapes hold the distinct elements only (as for m16n16k16: nvcc's registers)
_BF16_ELEMS = {("m32n8k16", "a"): 16, ("m32n8k16", "b"): 4, ("m8n32k16", "a"): 4, ("m8n32k16", "b"): 16}
_SUBBYTE = ("m8n8k32", "m8n8k128")
_ROUNDING = ("rn", "rz", "rm", "rp")


def _full(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class F32Temp:
    """An MMA destination that keeps its .f32 value for the caller (:meth:`WmmaSimtLowering._f16_from_f32_d`)
    instead of writing a register."""

    def __init__(self):
        self.type = ptx_type("f32")
        self.value = None


class WmmaSimtLowering:
    def wmma_simt(self, inst, verb: str, shape: str) -> None:
        """``wmma.{load,store,mma}`` on ``shape`` (a key of :data:`WMMA_SIMT`): module doc."""
        if verb == "mma":
            return self._wmma_simt_mma(inst, shape)
        frags = ("a", "b", "c") if verb == "load" else ("d",)
        self._mx_check(inst, {verb, *frags, "sync", "aligned", "row", "col", shape.split(".")[0], "global", "shared",
                              "shared::cta", *_BITS})
        frag = inst.modifiers[1] if len(inst.modifiers) > 1 else ""
        lay = next((m for m in inst.modifiers if m in ("row", "col")), None)
        types = [m for m in inst.modifiers if is_type_name(m) or m in _BITS]
        op = "c" if frag == "d" else frag
        if frag not in frags or lay is None or len(types) != 1:
            raise self.error(f"'{_full(inst)}': only wmma.{verb}.{'/'.join(frags)}.layout.{shape}.type is supported")
        if types[0] not in _TYPES[shape][op]:
            raise self.error(f"'{_full(inst)}': .{shape} {op.upper()} fragments take "
                             f"{'/'.join('.' + x for x in _TYPES[shape][op])}, not .{types[0]}")
        ops = inst.operands
        if len(ops) not in (2, 3):
            raise self.error(f"'{_full(inst)}' takes 2 or 3 operands", PtxSemanticError)
        if shape in _SUBBYTE and op in "ab" and lay != ("row" if op == "a" else "col"):
            raise self.error(f"'{_full(inst)}': sub-byte wmma takes a .row A and a .col B", PtxSemanticError)
        rows, cols, elems = WMMA_SIMT[shape][op]
        if types[0] == "bf16":
            elems = elems[:_BF16_ELEMS[shape, op]]
        etype = ptx_type("f64" if types[0] == "f64" else "b32")
        base, off, param = self._address(ops[1] if verb == "load" else ops[0])
        if param is not None:
            raise self.error(f"'{_full(inst)}' on a kernel parameter is not supported", PtxSemanticError)
        space = next((s for s in ("global", "shared") if s in inst.modifiers or f"{s}::cta" in inst.modifiers),
                     "generic")
        u32 = ptx_type("u32")
        stride = self.read(ops[2], u32) if len(ops) == 3 else Const(u32, cols if lay == "row" else rows)
        addrs = self._wmma_simt_addresses(base, stride, lay, elems, _BITS[types[0]])
        if verb == "load":
            per = {8: 4, 16: 2}.get(_BITS[types[0]], 1)      # byte (half) elements: four (two) a register
            dests = list(self._mx_vector(ops[0], len(elems) // per, f"the {frag.upper()} fragment"))
            for k, d in enumerate(dests):
                if isinstance(d, ast.Sink):
                    continue
                rt = getattr(d, "type", etype)
                els = addrs[k * per:(k + 1) * per]
                if per == 1 or all(a is els[0][0] and o == els[0][1] + i * 4 // per for i, (a, o) in enumerate(els)):
                    v = self.emit("ld", etype, [els[0][0]], rt, space=space, offset=off + els[0][1]).result
                else:  # four bytes (two halves) from four (two) places, packed low first
                    small = ptx_type("u8" if per == 4 else "u16")
                    parts = [self.emit("ld", small, [a], u32, space=space, offset=off + o).result for a, o in els]
                    v = self.emit("pack", etype, parts, etype).result
                self.write(d, v)
            return
        if _BITS[types[0]] == 16:  # two halves a register: one 32-bit store where adjacent, else two 16-bit ones
            srcs = self._mx_vector(ops[1], len(elems) // 2, "the D fragment")
            u16 = ptx_type("u16")
            for k, s in enumerate(srcs):
                v = self.read(s, etype)
                (a0, o0), (a1, o1) = addrs[2 * k], addrs[2 * k + 1]
                if a0 is a1 and o1 == o0 + 2:
                    self.emit("st", etype, [a0, v], None, space=space, offset=off + o0)
                    continue
                hi = self.emit("shr", u32, [v, Const(u32, 16)], u32).result
                for (a, o), h in (((a0, o0), v), ((a1, o1), hi)):
                    self.emit("st", u16, [a, self.emit("cvt", u16, [h], u16, src="u32").result], None, space=space,
                              offset=off + o)
            return
        srcs = self._mx_vector(ops[1], len(elems), "the D fragment")
        for (addr, imm), s in zip(addrs, srcs, strict=True):
            self.emit("st", etype, [addr, self.read(s, etype)], None, space=space, offset=off + imm)

    def _wmma_simt_addresses(self, base, stride, lay: str, elems, ebits: int) -> list:
        """(address value, immediate byte offset) of each fragment element of this lane (elements of ``ebits``:
        element x of a row or column is at byte x * ebits / 8)."""
        at = ptx_type("u64" if base.type.bits == 64 else "u32")
        u32 = ptx_type("u32")

        def op(name, x, y, t=at, **kw):
            return self.emit(name, t, [x, y], t, **kw).result

        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        parts = {_G: op("shr", lane, Const(u32, 2), u32), _T: op("and", lane, Const(u32, 3), u32)}
        for name, sh in ((_T2, 1), (_T4, 2), (_T8, 3), (_T32, 5)):
            parts[name] = op("shl", parts[_T], Const(u32, sh), u32)
        if at.bits == 64:
            parts = {k: self.emit("cvt", at, [v], at, src="u32").result for k, v in parts.items()}
            stride = self.emit("cvt", at, [stride], at, src="u32").result if not isinstance(stride, Const) \
                else Const(at, stride.bits)
        def to_bytes(v):
            if ebits >= 8:
                return op("mul", v, Const(at, ebits // 8), mode="lo")
            return op("shr", op("mul", v, Const(at, ebits), mode="lo"), Const(u32, 3), at)

        bstride = to_bytes(stride)                                     # bytes per leading step
        lead_part = {e[0] if lay == "row" else e[2] for e in elems}
        minor_part = {e[2] if lay == "row" else e[0] for e in elems}
        assert len(lead_part) == 1 and len(minor_part) == 1
        lead, minor = parts[lead_part.pop()], parts[minor_part.pop()]
        lane_base = op("add", op("add", base, op("mul", lead, bstride, mode="lo")),
                       to_bytes(minor))
        rows, out = {}, []
        for _rp, rc, _cp, cc in elems:
            lc, mc = (rc, cc) if lay == "row" else (cc, rc)
            if lc not in rows:
                rows[lc] = lane_base if lc == 0 else op("add", lane_base, op("mul", bstride, Const(at, lc), mode="lo"))
            out.append((rows[lc], mc * ebits // 8))
        return out

    def _wmma_simt_mma(self, inst, shape: str) -> None:
        if shape in _SUBBYTE:  # xcc.ir.lower_subbyte_mma, on the m8n8 mma fragments
            types = [m for m in inst.modifiers if m in _BITS]
            return self.subbyte_mma(inst, shape, types)
        if shape == "m16n16k16.int":
            return self._wmma_int8_mma(inst)
        if shape in ("m32n8k16.int", "m8n32k16.int"):
            return self._wmma_int8_tall_wide(inst, shape.split(".")[0])
        if shape in ("m32n8k16", "m8n32k16"):
            return self._wmma_f16_tall_wide(inst, shape)
        rnd = [m for m in inst.modifiers if m in _ROUNDING]
        self._mx_check(inst, {"mma", "sync", "aligned", "row", "col", shape, *_ROUNDING})
        lays = [m for m in inst.modifiers if m in ("row", "col")]
        types = [m for m in inst.modifiers if m in ("tf32", "f32", "f64", "f16", "bf16")]
        want = ["f32", "tf32", "tf32", "f32"] if shape == "m16n16k8" else ["f64"] * 4
        if len(lays) != 2 or types != want or (rnd and shape != "m8n8k4") or len(rnd) > 1:
            raise self.error(f"'{_full(inst)}': only wmma.mma.alayout.blayout.{shape}.{'.'.join(want)}"
                             f"{'{.rnd}' if shape == 'm8n8k4' else ''} is supported")
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        if shape == "m8n8k4":
            f64 = ptx_type("f64")
            regs = [[self.read(o, f64) for o in self._mx_vector(v, n, w)]
                    for v, n, w in ((a, 1, "A"), (b, 1, "B"), (c, 2, "C"))]
            return self.f64_mma_regs("m8n8k4", *regs, list(self._mx_vector(d, 2, "D")), rnd[0] if rnd else "rn")
        ra = self._mx_regs(self._mx_vector(a, 4, "A"))
        rb = self._mx_regs(self._mx_vector(b, 4, "B"))
        rc = self._mx_regs(self._mx_vector(c, 8, "C"))
        dests = self._mx_dests(d, 8, "D")
        f32 = ptx_type("f32")
        for j in range(2):  # columns 8j .. 8j + 7: one mma.m16n8k8 tf32
            self._mx_emit_parts("mma", dests[4 * j:4 * j + 4], ra + rb[2 * j:2 * j + 2] + rc[4 * j:4 * j + 4], f32,
                                shape="m16n8k8", types="f32.tf32.tf32.f32", na=4, nb=2)

    def _wmma_int8_mma(self, inst) -> None:
        """``wmma.mma.sync.aligned.alayout.blayout.m16n16k16.s32.{s8,u8}.{s8,u8}.s32{.satfinite}``: two m16n8k16
        byte MMAs (columns 0-7: B register 0, 8-15: B register 1), each the m16n8k32 byte MMA on its first
        registers."""
        self._mx_check(inst, {"mma", "sync", "aligned", "row", "col", "m16n16k16", "satfinite", "s8", "u8"})
        types = [m for m in inst.modifiers if m in _BITS]
        if len(types) != 4 or types[0] != "s32" or types[3] != "s32" or types[1] not in ("s8", "u8") \
                or types[2] not in ("s8", "u8") or len([m for m in inst.modifiers if m in ("row", "col")]) != 2:
            raise self.error(f"'{_full(inst)}': only wmma.mma.alayout.blayout.m16n16k16.s32.{{s8,u8}}.{{s8,u8}}.s32"
                             "{.satfinite} is supported")
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        ra = self._mx_regs(self._mx_vector(a, 2, "A"))
        rb = self._mx_regs(self._mx_vector(b, 2, "B"))
        rc = self._mx_regs(self._mx_vector(c, 8, "C"))
        dests = self._mx_dests(d, 8, "D")
        s32, zero = ptx_type("s32"), Const(ptx_type("u32"), 0)
        sat = {"satfinite": True} if "satfinite" in inst.modifiers else {}
        attrs = dict(shape="m16n8k32", types=f"s32.{types[1]}.{types[2]}.s32", na=4, nb=2)
        for j in range(2):
            self._mx_emit_parts("mma", dests[4 * j:4 * j + 4], [ra[0], ra[1], zero, zero, rb[j], zero] + rc[4 * j:4 * j + 4],
                                s32, **attrs, **sat)

    def _wmma_f16_tall_wide(self, inst, shape: str) -> None:
        """``wmma.mma.sync.aligned.alayout.blayout.{m32n8k16,m8n32k16}.dtype.ctype`` (.f16 A and B): m32n8k16 is
        two m16n8k16 (rows 0-15: A registers 0-3, C/D elements 0-3; rows 16-31: A 4-7, C/D 4-7) on B registers
        0, 1; m8n32k16 four m16n8k16 (columns 8j ..: B registers 2j, 2j + 1, C/D elements 2j, 2j + 1) whose A is
        this A in rows 0-7 (registers 0, 1 as the m16n8k16 A registers 0, 2) and zero in rows 8-15, whose
        results there are dropped.  .f32 D from .f16 C widens C exactly first (one rounding, as xcc's rule)."""
        self._mx_check(inst, {"mma", "sync", "aligned", "row", "col", shape})
        types = [m for m in inst.modifiers if _elem_type(m)]
        bf16 = types == ["f32", "bf16", "bf16", "f32"]
        if not bf16 and (len(types) != 2 or not set(types) <= {"f16", "f32"}) \
                or len([m for m in inst.modifiers if m in ("row", "col")]) != 2:
            raise self.error(f"'{_full(inst)}': only wmma.mma.alayout.blayout.{shape}.dtype.ctype with .f16 A and B "
                             f"and .{shape}.f32.bf16.bf16.f32 are supported")
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        dtype, ctype = (types[0], types[3]) if bf16 else types
        narrow = (dtype, ctype) == ("f16", "f32")  # the .f32 product, then each pair to f16 (_f16_from_f32_d)
        if narrow:
            dtype = "f32"
        na, nb = ((_BF16_ELEMS[shape, "a"] // 2, _BF16_ELEMS[shape, "b"] // 2) if bf16 else (8, 8))
        ra = self._mx_regs(self._mx_vector(a, na, "A"))
        rb = self._mx_regs(self._mx_vector(b, nb, "B"))
        if ctype == "f16" and dtype == "f32":
            rc = self._f16_fragment_as_f32(c)
        else:
            rc = self._mx_regs(self._mx_vector(c, 8 if ctype == "f32" else 4, "C"))
        dests = [F32Temp() for _ in range(8)] if narrow else list(self._mx_vector(d, 8 if dtype == "f32" else 4, "D"))
        f32 = dtype == "f32"
        t = ptx_type("f32" if f32 else "b32")
        zero, sink = Const(ptx_type("b32"), 0), ast.Sink()
        ab = "bf16" if bf16 else "f16"
        attrs = dict(shape="m16n8k16", types=f"{dtype}.{ab}.{ab}.{dtype}", na=4, nb=2)
        if shape == "m32n8k16":
            for h in range(2):
                cs, ds = (rc[4 * h:4 * h + 4], dests[4 * h:4 * h + 4]) if f32 else (rc[2 * h:2 * h + 2],
                                                                                  dests[2 * h:2 * h + 2])
                self._mx_emit_parts("mma", ds, ra[4 * h:4 * h + 4] + rb[0:2] + cs, t, **attrs)
        else:
            for j in range(4):
                cs, ds = ((rc[2 * j:2 * j + 2] + [zero, zero], dests[2 * j:2 * j + 2] + [sink, sink]) if f32
                          else ([rc[j], zero], [dests[j], sink]))
                self._mx_emit_parts("mma", ds, [ra[0], zero, ra[1], zero] + rb[2 * j:2 * j + 2] + cs, t, **attrs)
        if narrow:
            self._f16_from_f32_d(d, dests)

    def _f16_from_f32_d(self, d, temps: list) -> None:
        """``wmma.mma...f16.f32`` (an .f16 D from an .f32 C), as ptxas 13.0 compiles it: the .f32 MMA, each element
        rounded once to f32, then each pair rounded to f16 and packed (sm_90a SASS of
        ``wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32``: ``HMMA.16816.F32 R12, R4, R20, R8; HMMA.16816.F32 R16,
        R4, R2, R16`` then ``F2FP.F16.F32.PACK_AB R23, R13, R12`` for each pair: two roundings, not one).  Element
        2j of the .f16 fragment is the low half of register j and sits where .f32 element 2j does (module doc)."""
        f16, f16x2 = ptx_type("f16"), ptx_type("f16x2")
        for reg, lo, hi in zip(self._mx_dests(d, len(temps) // 2, "D"), temps[0::2], temps[1::2], strict=True):
            if isinstance(reg, ast.Sink):
                continue
            halves = [self.emit("cvt", f16, [t.value], f16, src="f32", rnd="rn").result for t in (lo, hi)]
            self.write(reg, self.emit("pack", f16x2, halves, f16x2).result)

    def _wmma_int8_tall_wide(self, inst, shape: str) -> None:
        """``wmma.mma.sync.aligned.alayout.blayout.{m32n8k16,m8n32k16}.s32.{s8,u8}.{s8,u8}.s32{.satfinite}``: byte
        MMAs m16n8k16 (each the m16n8k32 one on its first registers, the rest zero: exact for integers, and
        .satfinite saturates the same sum): m32n8k16 two (rows 0-15: A registers 0, 1, C/D 0-3; rows 16-31: A 2, 3,
        C/D 4-7) on B register 0; m8n32k16 four (columns 8j ..: B register j, C/D 2j, 2j + 1) on A register 0 as
        rows 0-7, rows 8-15 zero and their results dropped."""
        self._mx_check(inst, {"mma", "sync", "aligned", "row", "col", shape, "satfinite", "s8", "u8"})
        types = [m for m in inst.modifiers if m in _BITS]
        if len(types) != 4 or types[0] != "s32" or types[3] != "s32" or types[1] not in ("s8", "u8") \
                or types[2] not in ("s8", "u8") or len([m for m in inst.modifiers if m in ("row", "col")]) != 2:
            raise self.error(f"'{_full(inst)}': only wmma.mma.alayout.blayout.{shape}.s32.{{s8,u8}}.{{s8,u8}}.s32"
                             "{.satfinite} is supported")
        if len(inst.operands) != 4:
            raise self.error(f"'{_full(inst)}' takes 4 operands (d, a, b, c)", PtxSemanticError)
        d, a, b, c = inst.operands
        tall = shape == "m32n8k16"
        ra = self._mx_regs(self._mx_vector(a, 4 if tall else 1, "A"))
        rb = self._mx_regs(self._mx_vector(b, 1 if tall else 4, "B"))
        rc = self._mx_regs(self._mx_vector(c, 8, "C"))
        dests = list(self._mx_vector(d, 8, "D"))
        s32, zero, sink = ptx_type("s32"), Const(ptx_type("u32"), 0), ast.Sink()
        sat = {"satfinite": True} if "satfinite" in inst.modifiers else {}
        attrs = dict(shape="m16n8k32", types=f"s32.{types[1]}.{types[2]}.s32", na=4, nb=2)
        if tall:
            for h in range(2):
                self._mx_emit_parts("mma", dests[4 * h:4 * h + 4], [ra[2 * h], ra[2 * h + 1], zero, zero, rb[0], zero]
                                    + rc[4 * h:4 * h + 4], s32, **attrs, **sat)
            return
        for j in range(4):
            self._mx_emit_parts("mma", dests[2 * j:2 * j + 2] + [sink, sink],
                                [ra[0], zero, zero, zero, rb[j], zero] + rc[2 * j:2 * j + 2] + [zero, zero], s32,
                                **attrs, **sat)
