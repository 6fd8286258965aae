"""Instruction selection for the matrix IR ops: a rule group of :class:`xcc.backend.isel.InstructionSelector`
(one ``op_<irop>`` method per IR op, as in :mod:`xcc.backend.isel_core`).

* ``mma`` (mma.sync and wmma.mma; one IR instruction per D register, ``attrs.part``) -> HMMA.16816.F32/.F16,
  HMMA.1688.F32/.F16, IMMA.16832, (.e4m3/.e5m2 inputs) HMMA.16832.F32/.F16 or (.tf32 inputs, m16n8k8 /
  m16n8k4) HMMA.1688.F32.TF32 / HMMA.1684.F32.TF32 (A pair (a0, a2) / (a1, a3), or a0 / a1 at k = 4), each computing one 8-row half of a m16n8 D fragment: rows groupID take
  A registers (a0, a2), rows groupID + 8 take (a1, a3) (k = 8: a0 / a1), with the B pair (b0, b1) and the
  half's C/D registers (c0, c1) / (c2, c3) (an f16 accumulator: c0 / c1).  The parts of one PTX
  instruction share its halves: the first part selected emits its half, the others read the same D.
  ``wmma.mma`` m16n16k16 (f16 inputs) is two m16n8k16, on B registers (b0, b1) and (b2, b3) and the
  accumulators of columns 0-7 and 8-15 (:mod:`xcc.semantics.matrix`), so four HMMA.16816 halves.
  Operands that are separate 32-bit values are moved into a register pair (MOV), unless they already are
  the two halves of one pair (the D of an earlier HMMA), and every D register is a half of its HMMA's pair.
* ``ldmatrix`` -> one LDSM per destination register (``mat`` = the part).  A generic ldmatrix address is
  taken as a shared-window address (PTX requires it to point to shared memory): its low word.
* ``wmma_load`` / ``wmma_store`` -> ordinary loads and stores (LDG/LDS/LD, STG/STS/ST), as ptxas compiles
  them: the fragment layout of :func:`xcc.semantics.matrix.layout` is resolved at selection time into a
  lane-dependent part (``groupID`` or ``2*(lane%4)``, from S2R SR_LANEID, times the stride for the leading
  dimension) and constants folded into the address immediates.  An f16 register whose two elements are
  adjacent in memory is one 32-bit access, otherwise two 16-bit ones (PRMT packs, SHR unpacks).
* ``wgmma`` (wgmma.mma_async, one IR instruction per accumulator register, ``attrs.part``) -> one WGMMA.F32
  per part: ``d`` the part's D register, ``a``/``c`` the A/B matrix descriptor pairs, ``b`` the part (an
  immediate), ``e`` the part's C register, ``ps`` scale-d; ``n``, the types, imm-trans-a/-b (TRANS_A/B) and
  imm-scale-a/-b = -1 (NEG_A/B) as modifiers; FP8 (m64nNk32 .e4m3/.e5m2, K-major) the same as QGMMA.F32, TF32
  (m64nNk8, K-major) as TGMMA.F32, integer (m64nNk32 .s32.{s8,u8}.{s8,u8}, K-major, SAT for .satfinite) as
  IGMMA.S32; A in registers (``attrs.a_regs``): ``a`` the part's pair of A registers, and AREG; sparse
  (``attrs.sparse``, .f16/.bf16 m64nNk32) as WGMMA.SP, ``e`` the pair (C register, metadata register), SEL0/SEL1
  the sparsity selector; sparse tf32 (m64nNk16), FP8 and integer (m64nNk64) as TGMMA.SP, QGMMA.SP, IGMMA.SP.  ``wgmma_sync``
  fence / commit_group / wait_group n -> WARPGROUP.ARRIVE / WARPGROUP.COMMIT / WARPGROUP.DEPBAR n
  (``fence.proxy.async``, an IR ``fence`` of scope ``proxy``, is FENCE.VIEW.ASYNC: see
  :meth:`InstructionSelector.op_fence`).
* ``cp_async`` -> LDGSTS (ZFILL with a src-size that is not the constant cp-size), ``cp_async_commit`` ->
  LDGDEPBAR, ``cp_async_wait`` -> DEPBAR n (wait_all: LDGDEPBAR + DEPBAR 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcc.backend.isa import LDGSTS_BYTES, RZ, SR_INDEX
from xcc.backend.isel_core import SelectorCore
from xcc.backend.isel_tables import LUT_AND, PRMT_PACK_LO16
from xcc.backend.minst import Half, Imm, new_vreg
from xcc.ir.core import Const, Instruction, Value

if TYPE_CHECKING:
    import numpy as np

FP8 = ("e4m3", "e5m2")  # xcc.semantics.matrix.FP8 (not imported here: it imports numpy)
_CP_SIZE = {nbytes: size for size, nbytes in LDGSTS_BYTES.items()}  # cp.async cp-size -> LDGSTS's size
_MEM_PREFIX = {"global": "G", "generic": "", "shared": "S"}


def mma_half_plan(shape: str, types: tuple[str, str, str, str], part: int, na: int, nb: int):
    """How D register ``part`` of ``mma.shape.types`` is computed: ``(mnemonic, mods, half, a, b, c, index)``
    with ``a``/``b``/``c`` the indices of the A, B, C fragment registers the half instruction reads (two: a
    pair, one: a register), ``half`` what identifies the instruction among the PTX instruction's halves and
    ``index`` which register of its D (0/1 of a pair, None for a single register).  None if unsupported."""
    dtype, atype, btype, ctype = types
    if dtype != ctype:
        return None
    if shape == "m16n8k32" and atype in ("s8", "u8") and btype in ("s8", "u8") and dtype == "s32":
        h = part >> 1
        return ("IMMA.16832", {"atype": atype.upper(), "btype": btype.upper()}, h, (h, h + 2), (0, 1),
                (2 * h, 2 * h + 1), part & 1)
    if atype == btype == "tf32" and dtype == "f32" and shape in ("m16n8k8", "m16n8k4"):
        h = part >> 1  # rows groupID: A a0 (k8: and a2), rows groupID + 8: a1 (and a3)
        if shape == "m16n8k8":
            return ("HMMA.1688.F32.TF32", {}, h, (h, h + 2), (0, 1), (2 * h, 2 * h + 1), part & 1)
        return ("HMMA.1684.F32.TF32", {}, h, (h,), (0,), (2 * h, 2 * h + 1), part & 1)
    if shape == "m16n8k32" and atype in FP8 and btype in FP8 and dtype in ("f32", "f16"):
        f32 = dtype == "f32"
        h = part >> 1 if f32 else part
        return (f"HMMA.16832.{dtype.upper()}", {"atype": atype.upper(), "btype": btype.upper()}, h, (h, h + 2),
                (0, 1), (2 * h, 2 * h + 1) if f32 else (h,), part & 1 if f32 else None)
    if atype != btype or atype not in ("f16", "bf16") or dtype not in ("f32", "f16") \
            or dtype == "f16" and atype != "f16":
        return None
    f32 = dtype == "f32"
    mods = {"atype": atype.upper()} if f32 else {}
    if shape == "m16n16k16":  # two m16n8k16: columns 0-7 (B b0, b1) and 8-15 (b2, b3)
        j, q = (part >> 2, part & 3) if f32 else (part >> 1, part & 1)
        h = q >> 1 if f32 else q
        c = (4 * j + 2 * h, 4 * j + 2 * h + 1) if f32 else (2 * j + h,)
        return (f"HMMA.16816.{dtype.upper()}", mods, (j, h), (h, h + 2), (2 * j, 2 * j + 1), c,
                q & 1 if f32 else None)
    if shape not in ("m16n8k16", "m16n8k8") or na != (4 if shape == "m16n8k16" else 2):
        return None
    h = part >> 1 if f32 else part
    a = (h, h + 2) if shape == "m16n8k16" else (h,)
    b = (0, 1) if nb == 2 else (0,)
    c = (2 * h, 2 * h + 1) if f32 else (h,)
    mn = ("HMMA.16816." if shape == "m16n8k16" else "HMMA.1688.") + dtype.upper()
    return (mn, mods, h, a, b, c, part & 1 if f32 else None)


def _lane_part(values: np.ndarray) -> str:
    """Which lane function (``g`` = lane >> 2, ``t2`` = 2 * (lane % 4)) ``values [32]`` is."""
    import numpy as np

    lane = np.arange(32)
    for name, f in (("g", lane >> 2), ("t2", 2 * (lane & 3))):
        if np.array_equal(values, f):
            return name
    raise AssertionError("unexpected fragment layout")


def wmma_plan(frag: str, layout: str):
    """The m16n16k16 fragment ``frag`` in memory with ``layout``: (lane part of the leading index, lane part of
    the minor index, per element (lead constant, minor constant)): element ``i`` of lane ``l`` is at element
    offset ``(L(l) + lead_i) * stride + M(l) + minor_i`` from the base."""
    import numpy as np  # here, not at the top: numpy is imported by the kernels that use wmma only

    from xcc.semantics import matrix

    rows, cols = np.broadcast_arrays(*matrix.layout("m16n16k16", frag)[:2])
    r0, c0 = rows[0], cols[0]
    rl, cl = rows - r0, cols - c0
    assert (rl == rl[:, :1]).all() and (cl == cl[:, :1]).all()
    rp, cp = _lane_part(rl[:, 0]), _lane_part(cl[:, 0])
    consts = list(zip(r0.tolist(), c0.tolist()))
    if layout == "row":
        return rp, cp, consts
    return cp, rp, [(c, r) for r, c in consts]


_MATRIX_OPS = frozenset({"mma", "ldmatrix", "wmma_load", "wmma_store", "cp_async", "cp_async_commit",
                         "cp_async_wait", "wgmma", "wgmma_sync"})
_WGMMA_TYPES = {"f16": "F16", "bf16": "BF16"}
_WGMMA_SYNC = {"fence": "WARPGROUP.ARRIVE", "commit_group": "WARPGROUP.COMMIT", "wait_group": "WARPGROUP.DEPBAR"}


class MatrixSelection(SelectorCore):
    # ----------------------------------------------------------------- hooks of SelectorCore
    def half_rule(self, inst: Instruction):
        """The matrix ops are selected here whatever their element type (wmma on .f16 is not half arithmetic);
        everything else goes to the half-precision rules (HalfSelection, next in the MRO)."""
        if inst.op in _MATRIX_OPS:
            return None
        return super().half_rule(inst)

    def implements_flag(self, inst: Instruction, flag: str) -> bool:
        if inst.op in ("mma", "wgmma") and flag == "satfinite":
            return True  # IMMA.16832.SAT / IGMMA.S32.SAT (.satfinite is allowed on integer mma / wgmma only)
        return super().implements_flag(inst, flag)

    def _mx_cache(self, name: str) -> dict:
        c = self.__dict__.get(name)
        if c is None:
            c = self.__dict__[name] = {}
        return c

    def _mx_result(self, inst: Instruction, reg) -> None:
        """The result of ``inst`` is ``reg`` (a register or a half of a pair)."""
        have = self.vregs.get(inst.result)
        if have is None:
            self.vregs[inst.result] = reg
        elif have != reg:
            self.emit("MOV", d=have, b=reg)

    def _mx_pair(self, lo: Value, hi: Value):
        """``lo``, ``hi`` as one register pair: RZ for two zeros, the pair they already are, or a new one
        (two MOVs)."""
        if isinstance(lo, Const) and isinstance(hi, Const) and lo.bits == 0 and hi.bits == 0:
            return RZ
        if not isinstance(lo, Const) and not isinstance(hi, Const):
            rl, rh = self.vregs.get(lo), self.vregs.get(hi)
            if isinstance(rl, Half) and isinstance(rh, Half) and rl.vreg == rh.vreg and (rl.index, rh.index) == (0, 1):
                return rl.vreg
        p = new_vreg(2)
        self.emit("MOV", d=Half(p, 0), b=self.src_b(lo))
        self.emit("MOV", d=Half(p, 1), b=self.src_b(hi))
        return p

    def _mx_operand(self, vals: tuple[Value, ...]):
        return self._mx_pair(*vals) if len(vals) == 2 else self.reg(vals[0])

    # ----------------------------------------------------------------- mma
    def op_mma(self, inst):
        shape, types = inst.attrs["shape"], tuple(inst.attrs["types"].split("."))
        na, nb, part = inst.attrs["na"], inst.attrs["nb"], inst.attrs["part"]
        plan = mma_half_plan(shape, types, part, na, nb) if len(types) == 4 else None
        if plan is None:
            raise self.error(f"mma.{shape}.{inst.attrs['types']} is not supported by the xg1 backend (HMMA: "
                             ".f16/.bf16 inputs with matching .f32/.f16 accumulators; IMMA: .s8/.u8 -> .s32; "
                             "m16n8k32 .e4m3/.e5m2 -> .f32/.f16; m16n8k4/k8 .tf32 -> .f32)")
        mn, mods, half, ai, bi, ci, index = plan
        sat = bool(inst.attrs.get("satfinite"))
        if sat:
            mods = {**mods, "SAT": "SAT"}
        args = inst.args
        key = (id(inst.block), shape, types, sat, tuple(id(a) for a in args), half)
        cache = self._mx_cache("_mma_halves")
        d = cache.get(key)
        if d is None:
            A, B, C = args[:na], args[na:na + nb], args[na + nb:]
            d = new_vreg(1 if index is None else 2)
            self.emit(mn, d=d, a=self._mx_operand(tuple(A[i] for i in ai)),
                      b=self._mx_operand(tuple(B[i] for i in bi)), c=self._mx_operand(tuple(C[i] for i in ci)),
                      mods=mods)
            cache[key] = d
        self._mx_result(inst, d if index is None else Half(d, index))

    # ----------------------------------------------------------------- ldmatrix
    def _mx_shared_base(self, base: Value, off: int):
        """(32-bit register, offset) of a shared (or shared-window generic) address."""
        if isinstance(base, Const):
            return RZ, off + (base.bits & 0xFFFFFFFF)
        if base.type.bits == 64:
            return Half(self.vreg(base), 0), off
        return self.reg(base), off

    def op_ldmatrix(self, inst):
        space = inst.attrs.get("space", "shared")
        if space not in ("shared", "generic"):
            raise self.error(f"ldmatrix from the .{space} space is not supported (PTX: shared memory only)")
        a, off = self._mx_shared_base(inst.args[0], int(inst.attrs.get("offset", 0)))
        self._mx_check_offset(off)
        mods = {"mat": f"M{inst.attrs['part']}"}
        if inst.attrs.get("trans"):
            mods["T"] = "T"
        d = new_vreg(1)
        self.emit("LDSM", d=d, a=a, b=off, mods=mods)
        self._mx_result(inst, d)

    def _mx_check_offset(self, off: int) -> None:
        if not -(1 << 31) <= off < (1 << 31):
            raise self.error(f"address offset {off} does not fit 32 bits")

    # ----------------------------------------------------------------- wmma.load / wmma.store
    def _wmma_setup(self, inst, frag: str):
        """Per distinct leading constant, the address of that fragment row/column for this lane (with the
        lane's minor part), cached for the parts of one PTX instruction; and the element constants."""
        base, stride = inst.args[0], inst.args[1]
        space, layout = inst.attrs.get("space", "generic"), inst.attrs["layout"]
        if space not in _MEM_PREFIX:
            raise self.error(f"wmma on the .{space} space is not supported by the xg1 backend")
        esize = inst.type.bits // 8
        off = int(inst.attrs.get("offset", 0))
        key = (id(inst.block), id(base), id(stride), frag, layout, space, off, esize)
        cache = self._mx_cache("_wmma_setups")
        got = cache.get(key)
        if got is not None:
            return got
        lead_part, minor_part, consts = wmma_plan(frag, layout)
        lane = new_vreg(1)
        self.emit("S2R", d=lane, b=SR_INDEX["SR_LANEID"])
        parts = {}
        g = parts["g"] = new_vreg(1)
        self.emit("SHR", d=g, a=lane, b=Imm(2))
        t1, t2 = new_vreg(1), new_vreg(1)
        self.emit("SHL", d=t1, a=lane, b=Imm(1))
        self.emit("LOP3", d=t2, a=t1, b=Imm(6), c=RZ, mods={"lut": f"{LUT_AND:#04x}"})
        parts["t2"] = t2
        if isinstance(stride, Const):
            sb = Imm((stride.bits * esize) & 0xFFFFFFFF)
        else:
            sb = new_vreg(1)
            self.emit("SHL", d=sb, a=self.reg(stride), b=Imm(esize.bit_length() - 1))
        wide = space != "shared"
        if wide:
            if base.type.bits != 64:
                raise self.error("a global or generic wmma address must be 64 bits")
            basem = new_vreg(2)
            self.emit("IMAD.WIDE", d=basem, a=parts[minor_part], b=Imm(esize), c=self.reg(base))
        else:
            b32, off = self._mx_shared_base(base, off)
            basem = new_vreg(1)
            self.emit("IMAD", d=basem, a=parts[minor_part], b=Imm(esize), c=b32)
        rows = {}
        for lead, _ in consts:
            if lead in rows:
                continue
            if lead:
                ln = new_vreg(1)
                self.emit("IADD3", d=ln, a=parts[lead_part], b=Imm(lead), c=RZ)
            else:
                ln = parts[lead_part]
            r = new_vreg(2 if wide else 1)
            self.emit("IMAD.WIDE" if wide else "IMAD", d=r, a=ln, b=sb, c=basem)
            rows[lead] = r
        got = cache[key] = (rows, consts, _MEM_PREFIX[space], off, esize)
        return got

    def _wmma_elements(self, setup, reg: int):
        """[(address register, immediate offset)] of the elements of fragment register ``reg``."""
        rows, consts, _, off, esize = setup
        per = 4 // esize
        out = []
        for i in range(reg * per, (reg + 1) * per):
            lead, minor = consts[i]
            out.append((rows[lead], off + minor * esize))
        for _, o in out:
            self._mx_check_offset(o)
        return out

    def op_wmma_load(self, inst):
        frag = inst.attrs["frag"]
        setup = self._wmma_setup(inst, frag)
        prefix = setup[2]
        els = self._wmma_elements(setup, inst.attrs["part"])
        loaded = self._mx_cache("_wmma_loaded")
        key = (id(setup), tuple((id(r), o) for r, o in els))
        d = loaded.get(key)  # wmma A/B fragments repeat their registers: load once
        if d is None:
            d = new_vreg(1)
            if len(els) == 1 or (els[1][0] is els[0][0] and els[1][1] == els[0][1] + 2):
                self.emit(f"LD{prefix}", d=d, a=els[0][0], b=els[0][1])
            else:
                lo, hi = new_vreg(1), new_vreg(1)
                self.emit(f"LD{prefix}", d=lo, a=els[0][0], b=els[0][1], mods={"size": "U16"})
                self.emit(f"LD{prefix}", d=hi, a=els[1][0], b=els[1][1], mods={"size": "U16"})
                self.emit("PRMT", d=d, a=lo, b=Imm(PRMT_PACK_LO16), c=hi)
            loaded[key] = d
        self._mx_result(inst, d)

    def op_wmma_store(self, inst):
        setup = self._wmma_setup(inst, "d")
        prefix = setup[2]
        for k, v in enumerate(inst.args[2:]):
            els = self._wmma_elements(setup, k)
            r = self.reg(v)
            if len(els) == 1 or (els[1][0] is els[0][0] and els[1][1] == els[0][1] + 2):
                self.emit(f"ST{prefix}", a=els[0][0], b=els[0][1], c=r)
                continue
            hi = new_vreg(1)
            self.emit(f"ST{prefix}", a=els[0][0], b=els[0][1], c=r, mods={"size": "U16"})
            self.emit("SHR", d=hi, a=r, b=Imm(16))
            self.emit(f"ST{prefix}", a=els[1][0], b=els[1][1], c=hi, mods={"size": "U16"})

    # ----------------------------------------------------------------- cp.async
    def op_cp_async(self, inst):
        dst, src, size = inst.args
        cp = int(inst.attrs["cp_size"])
        if cp not in _CP_SIZE:
            raise self.error(f"cp.async with cp-size {cp} is not supported")
        a, off = self._mx_shared_base(dst, int(inst.attrs.get("dst_offset", 0)))
        self._mx_check_offset(off)
        if isinstance(src, Const) or src.type.bits != 64:
            raise self.error("the source of cp.async must be a 64-bit global address in a register")
        c = self.reg(src)
        soff = int(inst.attrs.get("src_offset", 0))
        if soff:
            if not -(1 << 31) <= soff < (1 << 31):
                raise self.error(f"address offset {soff} does not fit 32 bits")
            c2 = new_vreg(2)
            self.emit("IADD.64", d=c2, a=c, b=Imm(soff & 0xFFFFFFFF))
            c = c2
        mods = {"size": _CP_SIZE[cp]}
        if inst.attrs.get("cache") == "cg":
            mods["BYPASS"] = "BYPASS"
        if isinstance(size, Const) and size.bits == cp:
            e = RZ
        else:
            mods["ZFILL"] = "ZFILL"
            e = self.reg(size)
        self.emit("LDGSTS", a=a, b=off, c=c, e=e, mods=mods)

    def op_cp_async_commit(self, inst):
        self.emit("LDGDEPBAR")

    def op_cp_async_wait(self, inst):
        if inst.attrs.get("all"):
            self.emit("LDGDEPBAR")
        self.emit("DEPBAR", b=int(inst.attrs.get("n", 0)))

    # ----------------------------------------------------------------- wgmma
    def op_wgmma(self, inst):
        at = inst.attrs
        n, atype, btype = int(at["n"]), at["atype"], at["btype"]
        part = int(at["part"])
        if at.get("sparse") and 8 <= n <= 256 and n % 8 == 0 and 0 <= part < n // 2 \
                and (atype in FP8 and btype in FP8 or atype == btype == "tf32" or at.get("acc") == "s32"
                     and atype in ("s8", "u8") and btype in ("s8", "u8")):
            return self._wgmma_sparse(inst, "QGMMA.SP" if atype in FP8 else "TGMMA.SP" if atype == "tf32"
                                      else "IGMMA.SP")
        fp8 = atype in FP8 and btype in FP8
        acc16 = {"ACC_F16": "ACC_F16"} if at.get("acc") == "f16" else {}
        if fp8 and 8 <= n <= 256 and n % 8 == 0 and 0 <= part < n // 2 and not int(at["trans_a"]) \
                and not int(at["trans_b"]):
            return self._wgmma_emit(inst, "QGMMA.F32", {"n": f"N{n}", "atype": atype.upper(),
                                                        "btype": btype.upper(), **acc16})
        if at.get("acc") == "s32" and (atype in ("s8", "u8") and btype in ("s8", "u8") or atype == btype == "b1") \
                and 8 <= n <= 256 \
                and n % 8 == 0 and 0 <= part < n // 2:
            sat = {"SAT": "SAT"} if at.get("satfinite") else {}
            return self._wgmma_emit(inst, "IGMMA.S32", {"n": f"N{n}", "atype": atype.upper(), "btype": btype.upper(),
                                                        **sat})
        if atype == btype == "tf32" and 8 <= n <= 256 and n % 8 == 0 and 0 <= part < n // 2 and not acc16:
            return self._wgmma_emit(inst, "TGMMA.F32", {"n": f"N{n}", "atype": "TF32", "btype": "TF32"})
        if at.get("sparse") and 8 <= n <= 256 and n % 8 == 0 and atype in _WGMMA_TYPES and btype == atype \
                and 0 <= part < n // 2:
            return self._wgmma_sparse(inst)
        if not (8 <= n <= 256 and n % 8 == 0) or atype not in _WGMMA_TYPES or btype not in _WGMMA_TYPES \
                or not 0 <= part < n // 2 or at.get("sparse"):
            raise self.error(f"wgmma.mma_async m64n{n}k16.f32.{atype}.{btype} is not supported by the xg1 backend "
                             "(m64nNk16, N a multiple of 8 up to 256, f32 accumulators, f16/bf16 A and B)")
        mods = {"n": f"N{n}", "atype": _WGMMA_TYPES[atype], "btype": _WGMMA_TYPES[btype], **acc16}
        for flag, key in (("TRANS_A", "trans_a"), ("TRANS_B", "trans_b")):
            if int(at[key]) == 1:
                mods[flag] = flag
        self._wgmma_emit(inst, "WGMMA.F32", mods)

    def _wgmma_sparse(self, inst, mnemonic: str = "WGMMA.SP") -> None:
        """wgmma.mma_async.sp: one WGMMA.SP (TGMMA.SP, QGMMA.SP, IGMMA.SP), the accumulator register and the
        metadata register paired in e."""
        at = inst.attrs
        types = _WGMMA_TYPES if mnemonic == "WGMMA.SP" else {t: t.upper() for t in (at["atype"], at["btype"])}
        mods = {"n": f"N{int(at['n'])}", "atype": types[at["atype"]], "btype": types[at["btype"]],
                "sel": f"SEL{int(at['sp_sel'])}", **({"ACC_F16": "ACC_F16"} if at.get("acc") == "f16" else {}),
                **({"SAT": "SAT"} if at.get("satfinite") else {})}
        for flag, key in (("TRANS_A", "trans_a"), ("TRANS_B", "trans_b")):
            if int(at[key]) == 1:
                mods[flag] = flag
        for flag, key in (("NEG_A", "scale_a"), ("NEG_B", "scale_b")):
            if int(at[key]) == -1:
                mods[flag] = flag
        if at.get("a_regs"):
            mods["AREG"] = "AREG"
        c, da, db, scale_d, meta = inst.args
        e = new_vreg(2)
        self.emit("MOV", d=Half(e, 0), b=self.src_b(c))
        self.emit("MOV", d=Half(e, 1), b=self.src_b(meta))
        d = new_vreg(1)
        self.emit(mnemonic, d=d, a=self.reg(da), b=int(at["part"]), c=self.reg(db), e=e,
                  ps=self.pred_src(scale_d), mods=mods)
        self._mx_result(inst, d)

    def _wgmma_emit(self, inst, mnemonic: str, mods: dict) -> None:
        """One WGMMA.F32 / QGMMA.F32 for accumulator register ``part``; imm-scale-a/-b = -1 as NEG_A/B."""
        at = inst.attrs
        for flag, key in (("NEG_A", "scale_a"), ("NEG_B", "scale_b")):
            if int(at[key]) == -1:
                mods[flag] = flag
        if at.get("a_regs"):  # operand a: the part's pair of A registers (xcc.semantics.wgmma.register_a)
            mods["AREG"] = "AREG"
        c, da, db, scale_d = inst.args
        d = new_vreg(1)
        self.emit(mnemonic, d=d, a=self.reg(da), b=int(at["part"]), c=self.reg(db), e=self.reg(c),
                  ps=self.pred_src(scale_d), mods=mods)
        self._mx_result(inst, d)

    def op_wgmma_sync(self, inst):
        kind = inst.attrs["kind"]
        if kind not in _WGMMA_SYNC:
            raise self.error(f"wgmma.{kind} is not supported by the xg1 backend")
        if kind == "wait_group":
            self.emit("WARPGROUP.DEPBAR", b=int(inst.attrs.get("n", 0)))
        else:
            self.emit(_WGMMA_SYNC[kind])
