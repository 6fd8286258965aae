"""Instruction selection for the texture and surface ops (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`).

``tex`` -> TEX (``gather``: tld4; ``ms``: .2dms/.a2dms, the sample index in e.lo, texel offsets in c; texel
offsets or a depth compare otherwise: TEX.X), ``tex_lod`` -> TEXLOD (the gradients in b and e; 3d: TEXGRAD.SQ per gradient, cube:
TEXGRAD.CUBE per gradient, then TEXLOD.SQ), ``txq`` -> TXQ (.SURF for suq; txq.level: TXQ.LEVEL), ``istypep`` -> ISTYPEP, ``suld`` -> SULD
(SULD.64 for 64-bit elements), ``sust`` -> SUST / SUST.64, ``sured`` -> SURED / SURED.64.  The handle is the
register pair a; the coordinates travel in two pairs: b = (x, y), e = (z, layer), unused ones zero, built once
per block for the ops of one PTX instruction (which read the same values).
"""

from __future__ import annotations

from xcc.backend.isa import RZ
from xcc.backend.isel_core import SelectorCore
from xcc.backend.minst import Half, new_vreg
from xcc.ir.core import Value

_DIM = {"1d": "D1", "2d": "D2", "3d": "D3", "a1d": "A1", "a2d": "A2", "cube": "CUBE", "acube": "ACUBE"}
_COMP = ("X", "Y", "Z", "W")
_VEC = {1: "V1", 2: "V2", 4: "V4"}
_SIZE = {1: "B8", 2: "B16", 4: "B32"}


class TextureSelection(SelectorCore):
    def _tx_coords(self, inst, first: int, last: int | None = None, offsets: Value | None = None):
        """(b, e) pairs of the coordinates args[first:last]: x, y | z, layer; ``offsets`` (TEX.X): the packed texel
        offsets, in the slot the geometry leaves free (z, or the layer of a 3d texture)."""
        args = list(inst.args[first:last])
        # the ops of one PTX instruction (one per element) share the pairs built for the first, in its block
        key = (id(self.out), inst.attrs.get("layered"), *(id(a) for a in args), id(offsets))
        cache = self.__dict__.setdefault("_tx_pairs", {})
        if key in cache and all(a is b for a, b in zip(cache[key][0], [*args, offsets], strict=True)):
            return cache[key][1]
        layer = args.pop(0) if inst.attrs.get("layered") else None
        vals = [*args, *[None] * (3 - len(args))][:3] + [layer]
        if offsets is not None:
            vals[3 if len(args) == 3 else 2] = offsets
        pairs = [new_vreg(2), new_vreg(2)]
        cache[key] = ([*inst.args[first:last], offsets], pairs)
        for n, v in enumerate(vals):
            half = Half(pairs[n // 2], n % 2)
            self.emit("MOV", d=half, b=RZ if v is None else self.src_b(v))
        return pairs

    def op_tex(self, inst):
        at = inst.attrs
        off, dc = bool(at.get("off")), bool(at.get("dc"))
        end = len(inst.args) - off - dc  # then the packed offsets, the depth compare value
        level = at.get("mip") == "level"  # the level of detail is the last argument before them
        if at.get("ms"):  # .2dms/.a2dms: the sample index in e.lo, the packed offsets (or none: RZ) in c
            b, e = self._tx_coords(inst, 1, end)
            mods = {"dim": _DIM[at["dim"]], "ctype": str(at["ctype"]).upper(), "comp": _COMP[int(at["comp"])],
                    "out": str(at.get("half", "b32")).upper(), "MS": "MS"}
            self.emit("TEX", d=self.vreg(inst.result), a=self.reg(inst.args[0]), b=b,
                      c=self.reg(inst.args[end]) if off else RZ, e=e, mods=mods)
            return
        b, e = self._tx_coords(inst, 1, end - 1 if level else end, inst.args[end] if off else None)
        g = at.get("gather")
        mods = {"dim": _DIM[at["dim"]], "ctype": str(at["ctype"]).upper(), "comp": _COMP[int(at["comp"])],
                "gather": "NONE" if g is None else "RGBA"[int(g)], "out": str(at.get("half", "b32")).upper(),
                "mip": str(at.get("mip") or "none").upper(), **({"MS": "MS"} if at.get("ms") else {})}
        if off or dc:  # TEX.X: c = (level of detail, depth compare value)
            c = new_vreg(2)
            for half, v in enumerate((inst.args[end - 1] if level else None, inst.args[-1] if dc else None)):
                self.emit("MOV", d=Half(c, half), b=RZ if v is None else self.src_b(v))
            self.emit("TEX.X", d=self.vreg(inst.result), a=self.reg(inst.args[0]), b=b, c=c, e=e,
                      mods={**mods, **({"DC": "DC"} if dc else {})})
            return
        c = self.reg(inst.args[end - 1]) if level else RZ
        self.emit("TEX", d=self.vreg(inst.result), a=self.reg(inst.args[0]), b=b, c=c, e=e, mods=mods)

    def op_tex_lod(self, inst):
        if inst.attrs.get("cube"):  # per gradient TEXGRAD.CUBE (b = x, y; c = z, g0; e = g1, g2), then TEXLOD.SQ
            sq = []
            for grads in (inst.args[4:7], inst.args[7:10]):
                vals = [*inst.args[1:4], *grads]
                pairs = [new_vreg(2) for _ in range(3)]
                for n, v in enumerate(vals):
                    self.emit("MOV", d=Half(pairs[n // 2], n % 2), b=self.src_b(v))
                out = new_vreg(2)
                self.emit("TEXGRAD.CUBE", d=out, a=self.reg(inst.args[0]), b=pairs[0], c=pairs[1], e=pairs[2])
                sq.append(out)
            self.emit("TEXLOD.SQ", d=self.vreg(inst.result), b=sq[0], e=sq[1])
            return
        k = (len(inst.args) - 1) // 2
        if k == 3:  # six gradients: each one's squared length (TEXGRAD.SQ), then the level (TEXLOD.SQ)
            sq = []
            for grads in (inst.args[1:4], inst.args[4:7]):
                pair, out = new_vreg(2), new_vreg(2)
                for half in (0, 1):
                    self.emit("MOV", d=Half(pair, half), b=self.src_b(grads[half]))
                self.emit("TEXGRAD.SQ", d=out, a=self.reg(inst.args[0]), b=pair, c=self.reg(grads[2]))
                sq.append(out)
            self.emit("TEXLOD.SQ", d=self.vreg(inst.result), b=sq[0], e=sq[1])
            return
        pairs = [new_vreg(2), new_vreg(2)]
        for n, grads in enumerate((inst.args[1:1 + k], inst.args[1 + k:])):
            for half in (0, 1):
                v = grads[half] if half < k else None
                self.emit("MOV", d=Half(pairs[n], half), b=RZ if v is None else self.src_b(v))
        self.emit("TEXLOD", d=self.vreg(inst.result), a=self.reg(inst.args[0]), b=pairs[0], e=pairs[1],
                  mods={"dim": f"D{k}"})

    def op_txq(self, inst):
        if len(inst.args) > 1:  # txq.level: the level in c
            self.emit("TXQ.LEVEL", d=self.vreg(inst.result), a=self.reg(inst.args[0]), c=self.reg(inst.args[1]),
                      mods={"query": str(inst.attrs["query"]).upper()})
            return
        mods = {"query": str(inst.attrs["query"]).upper(), **({"SURF": "SURF"} if inst.attrs.get("surface") else {})}
        self.emit("TXQ", d=self.vreg(inst.result), a=self.reg(inst.args[0]), mods=mods)

    def op_istypep(self, inst):
        self.emit("ISTYPEP", pd=self.vreg(inst.result), a=self.reg(inst.args[0]),
                  mods={"kind": str(inst.attrs["kind"]).upper()})

    def _su_mods(self, inst, sized: bool = True) -> dict:
        at = inst.attrs
        mods = {"dim": _DIM[at["dim"]], "mode": str(at["mode"]).upper()}
        if "comp" in at:
            mods.update(vec=_VEC[int(at["vec"])], comp=_COMP[int(at["comp"])])
        if sized and int(at["width"]) < 8:
            mods["size"] = _SIZE[int(at["width"])]
        return mods

    def op_suld(self, inst):
        b, e = self._tx_coords(inst, 1)
        wide = int(inst.attrs["width"]) == 8
        if wide != (inst.result.type.bits == 64):
            raise self.error(f"suld of {inst.attrs['width']}-byte elements into a {inst.result.type.bits}-bit register")
        self.emit("SULD.64" if wide else "SULD", d=self.vreg(inst.result), a=self.reg(inst.args[0]), b=b, e=e,
                  mods=self._su_mods(inst))

    def _value(self, v: Value, wide: bool):
        return self.reg(v) if wide or v.type.bits <= 32 else Half(self.vreg(v), 0)

    def op_sust(self, inst):
        b, e = self._tx_coords(inst, 1, -1)
        wide = int(inst.attrs["width"]) == 8
        mods = {**self._su_mods(inst), **({"P": "P"} if inst.attrs.get("formatted") else {})}
        self.emit("SUST.64" if wide else "SUST", a=self.reg(inst.args[0]), b=b, c=self._value(inst.args[-1], wide),
                  e=e, mods=mods)

    def op_sured(self, inst):
        b, e = self._tx_coords(inst, 1, -1)
        wide = int(inst.attrs["width"]) == 8
        mods = {**self._su_mods(inst, sized=False), "op": str(inst.attrs["redop"]).upper(),
                "type": str(inst.attrs["etype"]).upper(), **({"P": "P"} if inst.attrs.get("formatted") else {})}
        self.emit("SURED.64" if wide else "SURED", a=self.reg(inst.args[0]), b=b, c=self._value(inst.args[-1], wide),
                  e=e, mods=mods)
