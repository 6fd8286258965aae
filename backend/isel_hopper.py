"""Instruction selection for the mbarrier and bulk-copy ops (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`).

* ``mbar_init`` -> SYNCS.INIT (``inval``: .INVAL), ``mbar_arrive`` -> SYNCS.ARRIVE (.DROP, .NOCOMPLETE),
  ``mbar_tx`` -> SYNCS.TX (.COMPLETE), ``cp_async_arrive`` -> LDGSTS.ARRIVE (.NOINC), ``mbar_test`` / ``mbar_wait`` -> SYNCS.PHASECHK (.PARITY; .TRYWAIT for
  try_wait, which may suspend the thread), each on ``[a + offset]`` in shared memory (a 64-bit address: its
  low word, the shared window's offset).
* ``bulk_copy`` -> BLKCP.BYPASS (global -> shared) followed by SYNCS.TX.COMPLETE of the same byte count on
  the mbarrier, or BLKCP.S2G (shared -> global), or BLKCP.S2S (shared -> a CTA of the cluster, then
  SYNCS.TX.COMPLETE); ``bulk_reduce`` -> BLKRED.op.type (.f16/.bf16: BLKRED.H; into a CTA of the cluster:
  BLKRED.S2S); ``bulk_copy_mc`` -> BLKCP.MC and SYNCS.TX.MC; ``tma_load`` (1d, 2d) ->
  TMALD (coordinates in a register pair, its bytes in d; TMALD.3D: the third in b; TMALD.ND for 4d/5d: coordinates
  in the pairs e, b and a.hi, the shared address in a.lo) and SYNCS.TX.COMPLETE of those bytes; ``tma_store``
  -> TMAST (.red for a reduction, .I2C for .im2col_no_offs), ``tma_prefetch`` -> TMAPF (im2col: TMAPF.I2C),
  with TMALD.ND's operand layout; a multicast
  ``tma_load`` -> TMALD.MC (the ctaMask in a.hi) and SYNCS.TX.MC of its bytes on each named CTA's mbarrier; an
  ``.im2col`` one (3d, 4d) -> TMALD.I2C (the 16-bit offsets packed in a.hi); 5d im2col, 5d multicast and
  multicast im2col loads -> BOXBYTES, TMALD.X (offsets and ctaMask in the pair d) and SYNCS.TX(.MC).
"""

from __future__ import annotations

from xcc.backend.isa import RZ
from xcc.backend.isel_core import SelectorCore
from xcc.backend.isel_tables import PRMT_PACK_LO16
from xcc.backend.minst import Half, Imm, new_vreg
from xcc.ir.core import Const, Value


class HopperSelection(SelectorCore):
    def _hp_shared(self, base: Value, off: int):
        """(32-bit register, offset) of a shared-space address ``base + off``."""
        if isinstance(base, Const):
            off += base.bits & 0xFFFFFFFF
            base_reg = RZ
        elif base.type.bits == 64:
            base_reg = Half(self.vreg(base), 0)
        else:
            base_reg = self.reg(base)
        off = ((off + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # shared addresses wrap at 32 bits
        return base_reg, off

    def _hp_u32(self, v: Value):
        if isinstance(v, Const) and v.bits & 0xFFFFFFFF == 0:
            return RZ
        return self.reg(v)

    def op_mbar_init(self, inst):
        a, off = self._hp_shared(inst.args[0], int(inst.attrs.get("offset", 0)))
        mods = {"INVAL": "INVAL"} if inst.attrs.get("inval") else {}
        self.emit("SYNCS.INIT", a=a, b=off, c=self._hp_u32(inst.args[1]), mods=mods)

    def op_mbar_arrive(self, inst):
        a, off = self._hp_shared(inst.args[0], int(inst.attrs.get("offset", 0)))
        mods = {f: f for f, k in (("DROP", "drop"), ("NOCOMPLETE", "nocomplete")) if inst.attrs.get(k)}
        self.emit("SYNCS.ARRIVE", d=self.vreg(inst.result), a=a, b=off, c=self._hp_u32(inst.args[1]),
                  e=self._hp_u32(inst.args[2]), mods=mods)

    def op_cp_async_arrive(self, inst):
        a, off = self._hp_shared(inst.args[0], int(inst.attrs.get("offset", 0)))
        self.emit("LDGSTS.ARRIVE", a=a, b=off, mods={"NOINC": "NOINC"} if inst.attrs.get("noinc") else {})

    def op_mbar_tx(self, inst):
        a, off = self._hp_shared(inst.args[0], int(inst.attrs.get("offset", 0)))
        mods = {"COMPLETE": "COMPLETE"} if inst.attrs.get("complete") else {}
        self.emit("SYNCS.TX", a=a, b=off, c=self._hp_u32(inst.args[1]), mods=mods)

    def op_mbar_test(self, inst):
        a, off = self._hp_shared(inst.args[0], int(inst.attrs.get("offset", 0)))
        mods = {"PARITY": "PARITY"} if inst.attrs.get("parity") else {}
        if inst.op == "mbar_wait":
            mods["TRYWAIT"] = "TRYWAIT"
        self.emit("SYNCS.PHASECHK", pd=self.vreg(inst.result), a=a, b=off, c=self.reg(inst.args[1]), mods=mods)

    op_mbar_wait = op_mbar_test

    def op_cluster_arrive(self, inst):
        self.emit("UCGABAR.ARV")

    def op_cluster_wait(self, inst):
        self.emit("UCGABAR.WAIT")

    def _hp_global(self, v: Value, off: int):
        """A 64-bit register holding global address ``v + off``."""
        if isinstance(v, Const) or v.type.bits != 64:
            raise self.error("the global address of a bulk copy must be a 64-bit register")
        c = self.reg(v)
        if off:
            if not -(1 << 31) <= off < (1 << 31):
                raise self.error(f"address offset {off} does not fit 32 bits")
            c2 = new_vreg(2)
            self.emit("IADD.64", d=c2, a=c, b=Imm(off & 0xFFFFFFFF))
            c = c2
        return c

    def _hp_shared_reg(self, v: Value, off: int):
        """A 32-bit register holding the shared (or shared::cluster) address ``v + off``."""
        r, off = self._hp_shared(v, off)
        if not off:
            return r
        d = new_vreg(1)
        self.emit("IADD3", d=d, a=r, b=Imm(off & 0xFFFFFFFF), c=RZ)
        return d

    def op_bulk_reduce(self, inst):
        at = inst.attrs
        dst, src, size = inst.args
        a, off = self._hp_shared(src, int(at.get("src_offset", 0)))
        et = str(at["etype"])
        mods = {"op": str(at["redop"]).upper(), "type": et.upper() if et in ("f16", "bf16")
                else et.upper().replace("B", "U")}
        if at.get("to_shared"):
            self.emit("BLKRED.S2S", a=a, b=off, c=self._hp_shared_reg(dst, int(at.get("dst_offset", 0))),
                      e=self.reg(size), mods=mods)
            return
        self.emit("BLKRED.H" if et in ("f16", "bf16") else "BLKRED", a=a, b=off,
                  c=self._hp_global(dst, int(at.get("dst_offset", 0))), e=self.reg(size), mods=mods)

    def _tma_pairs(self, shared, coords, mask=None):
        """(a, b, e) register pairs of TMALD.ND/TMAST/TMAPF: a = (32-bit shared address, coordinate 4),
        b = coordinates 2, 3, e = coordinates 0, 1 (missing ones zero); TMALD.MC: the ctaMask in a.hi, TMALD.I2C:
        the packed im2col offsets."""
        pairs = [new_vreg(2) for _ in range(3)]
        vals = [shared, *(coords[k] if k < len(coords) else None for k in (4, 2, 3, 0, 1))]
        if mask is not None:
            vals[1] = mask
        for n, v in enumerate(vals):
            half = Half(pairs[n // 2], n % 2)
            if v is None:
                self.emit("MOV", d=half, b=RZ)
            elif isinstance(v, tuple):  # (register, offset) of the shared address
                reg, off = v
                if off:
                    self.emit("IADD3", d=half, a=reg, b=Imm(off & 0xFFFFFFFF), c=RZ)
                else:
                    self.emit("MOV", d=half, b=reg)
            else:  # an IR value, or a register already selected (TMALD.I2C's packed offsets)
                self.emit("MOV", d=half, b=self.src_b(v) if isinstance(v, Value) else v)
        return pairs

    def op_tma_store(self, inst):
        src, tmap, *coords = inst.args
        a, b, e = self._tma_pairs(self._hp_shared(src, int(inst.attrs.get("src_offset", 0))), coords)
        red = inst.attrs.get("redop")
        mods = {"rank": f"R{len(coords)}", **({"red": str(red).upper()} if red else {}),
                **({"I2C": "I2C"} if inst.attrs.get("im2col") else {})}
        self.emit("TMAST", a=a, b=b, c=self.reg(tmap), e=e, mods=mods)

    def op_tma_prefetch(self, inst):
        tmap, *coords = inst.args
        a, b, e = self._tma_pairs(None, coords)
        self.emit("TMAPF.I2C" if inst.attrs.get("im2col") else "TMAPF", a=a, b=b, c=self.reg(tmap), e=e,
                  mods={"rank": f"R{len(coords)}"})

    def op_tma_load(self, inst):
        at = inst.attrs
        dst, tmap, mb, *coords = inst.args
        rank = int(at["rank"])
        if at.get("im2col") and (rank > 4 or at.get("multicast")) or at.get("multicast") and rank > 4:
            return self._tma_load_wide(inst)
        if at.get("im2col"):
            coords, offs = coords[:rank], coords[rank:]
            packed = offs[0] if rank == 3 else self._pair16(self.reg(offs[0]), self.reg(offs[1]))  # isel_half
            a, b, e = self._tma_pairs(self._hp_shared(dst, int(at.get("dst_offset", 0))), coords, packed)
            size = new_vreg(1)
            self.emit("TMALD.I2C", d=size, a=a, b=b, c=self.reg(tmap), e=e, mods={"rank": f"R{rank}"})
            ma, moff = self._hp_shared(mb, int(at.get("mbar_offset", 0)))
            self.emit("SYNCS.TX", a=ma, b=moff, c=size, mods={"COMPLETE": "COMPLETE"})
            return
        if at.get("multicast"):
            *coords, mask = coords
            a, b, e = self._tma_pairs(self._hp_shared(dst, int(at.get("dst_offset", 0))), coords, mask)
            size = new_vreg(1)
            self.emit("TMALD.MC", d=size, a=a, b=b, c=self.reg(tmap), e=e, mods={"rank": f"R{len(coords)}"})
            ma, moff = self._hp_shared(mb, int(at.get("mbar_offset", 0)))
            self.emit("SYNCS.TX.MC", a=ma, b=moff, c=size, e=self.reg(mask))
            return
        if len(coords) > 3:
            a, b, e = self._tma_pairs(self._hp_shared(dst, int(at.get("dst_offset", 0))), coords)
            size = new_vreg(1)
            self.emit("TMALD.ND", d=size, a=a, b=b, c=self.reg(tmap), e=e, mods={"rank": f"R{len(coords)}"})
            ma, moff = self._hp_shared(mb, int(at.get("mbar_offset", 0)))
            self.emit("SYNCS.TX", a=ma, b=moff, c=size, mods={"COMPLETE": "COMPLETE"})
            return
        a, off = self._hp_shared(dst, int(at.get("dst_offset", 0)))
        pair = new_vreg(2)
        for k in range(2):
            c = coords[k] if k < len(coords) else Const(coords[0].type, 0)
            self.emit("MOV", d=Half(pair, k), b=self.src_b(c))
        size = new_vreg(1)
        if len(coords) == 3:  # TMALD.3D: the third coordinate in b, the offset folded into a
            if off:
                a2 = new_vreg(1)
                self.emit("IADD3", d=a2, a=a, b=Imm(off & 0xFFFFFFFF), c=RZ)
                a = a2
            self.emit("TMALD.3D", d=size, a=a, b=self.src_b(coords[2]), c=self.reg(tmap), e=pair)
        else:
            self.emit("TMALD", d=size, a=a, b=off, c=self.reg(tmap), e=pair, mods={"rank": f"R{len(coords)}"})
        ma, moff = self._hp_shared(mb, int(at.get("mbar_offset", 0)))
        self.emit("SYNCS.TX", a=ma, b=moff, c=size, mods={"COMPLETE": "COMPLETE"})

    def _tma_load_wide(self, inst):
        """5d im2col, 5d multicast and multicast im2col loads: BOXBYTES of the map, then TMALD.X with the offsets
        and the ctaMask packed in the pair d (d.lo = o0 | o1 << 16, d.hi = o2 | ctaMask << 16), then the
        completion (SYNCS.TX.MC for a multicast)."""
        at = inst.attrs
        dst, tmap, mb, *rest = inst.args
        rank, i2c, mc = int(at["rank"]), bool(at.get("im2col")), bool(at.get("multicast"))
        coords, rest = rest[:rank], rest[rank:]
        offs, mask = (rest[:rank - 2], rest[rank - 2:]) if i2c else ([], rest)
        halves = [self.reg(o) for o in offs] + [RZ] * (3 - len(offs)) + [self.reg(mask[0]) if mc else RZ]
        d = new_vreg(2)
        for k in range(2):
            if halves[2 * k] is RZ and halves[2 * k + 1] is RZ:
                self.emit("MOV", d=Half(d, k), b=RZ)
            else:
                self.emit("PRMT", d=Half(d, k), a=halves[2 * k], b=Imm(PRMT_PACK_LO16), c=halves[2 * k + 1])
        a, b, e = self._tma_pairs(self._hp_shared(dst, int(at.get("dst_offset", 0))), coords)
        size, c = new_vreg(1), self.reg(tmap)
        flags = {**({"I2C": "I2C"} if i2c else {})}
        self.emit("BOXBYTES", d=size, c=c, mods={"rank": f"R{rank}", **flags})
        self.emit("TMALD.X", d=d, a=a, b=b, c=c, e=e, mods={"rank": f"R{rank}", **flags, **({"MC": "MC"} if mc else {})})
        ma, moff = self._hp_shared(mb, int(at.get("mbar_offset", 0)))
        if mc:
            self.emit("SYNCS.TX.MC", a=ma, b=moff, c=size, e=self.reg(mask[0]))
        else:
            self.emit("SYNCS.TX", a=ma, b=moff, c=size, mods={"COMPLETE": "COMPLETE"})

    def op_bulk_copy_mc(self, inst):
        """BLKCP.MC (shared offset in a.lo, ctaMask in a.hi), then SYNCS.TX.MC of the same bytes."""
        at = inst.attrs
        dst, src, size, mbar, mask = inst.args
        reg, off = self._hp_shared(dst, int(at.get("dst_offset", 0)))
        a = new_vreg(2)
        self.emit("MOV", d=Half(a, 0), b=reg)
        self.emit("MOV", d=Half(a, 1), b=self.src_b(mask))
        e = self.reg(size)
        self.emit("BLKCP.MC", a=a, b=off, c=self._hp_global(src, int(at.get("src_offset", 0))), e=e)
        ma, moff = self._hp_shared(mbar, int(at.get("mbar_offset", 0)))
        self.emit("SYNCS.TX.MC", a=ma, b=moff, c=e, e=self.reg(mask))

    def op_bulk_copy(self, inst):
        at = inst.attrs
        dst, src, size, mbar = inst.args
        to_shared = bool(at.get("to_shared"))
        if at.get("from_shared"):  # this CTA's shared memory -> a CTA of the cluster
            a, off = self._hp_shared(src, int(at.get("src_offset", 0)))
            e = self.reg(size)
            self.emit("BLKCP.S2S", a=a, b=off, c=self._hp_shared_reg(dst, int(at.get("dst_offset", 0))), e=e)
            ma, moff = self._hp_shared(mbar, int(at.get("mbar_offset", 0)))
            self.emit("SYNCS.TX", a=ma, b=moff, c=e, mods={"COMPLETE": "COMPLETE"})
            return
        shared, soff = (dst, "dst_offset") if to_shared else (src, "src_offset")
        glob, goff = (src, "src_offset") if to_shared else (dst, "dst_offset")
        a, off = self._hp_shared(shared, int(at.get(soff, 0)))
        c = self._hp_global(glob, int(at.get(goff, 0)))
        e = self.reg(size)
        if to_shared:
            self.emit("BLKCP", a=a, b=off, c=c, e=e, mods={"BYPASS": "BYPASS"})
        else:
            self.emit("BLKCP.S2G", a=a, b=off, c=c, e=e)
        if to_shared:
            ma, moff = self._hp_shared(mbar, int(at.get("mbar_offset", 0)))
            self.emit("SYNCS.TX", a=ma, b=moff, c=e, mods={"COMPLETE": "COMPLETE"})
