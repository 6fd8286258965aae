"""Lowering of PTX's 128-bit values (``.b128``, PTX ISA 8.3, section 5.2.2 "Fundamental types") into pairs of
64-bit values, so both engines (the IR interpreter and xg1) run them with no 128-bit IR value or machine register.

A ``.reg .b128`` register ``%q`` is, to the SSA builder, two ``.b64`` registers ``%q.lo`` (bits 63:0) and
``%q.hi`` (bits 127:64) that no PTX name can denote (:func:`halves`); an IR value is never wider than 64 bits,
as a backend register is never wider than a 64-bit pair (:class:`xcc.backend.minst.VReg`).  The forms, each as
ptxas 13.0 accepts it (``.target sm_80`` and up for mov/ld/st):

* ``mov.b128 d, a`` (a register, or a 64-bit integer literal, -2^63 .. 2^64-1: its 64 bits zero-extended, a
  negative one too, as ptxas does: :func:`literal_low`) copies both halves;
  ``mov.b128 d, {a, b}`` packs two ``.b64`` (``a`` the low half), ``mov.b128 d, {a, b, c, e}`` four ``.b32``
  (``a`` bits 31:0); ``mov.b128 {a, b}, d`` and ``mov.b128 {a, b, c, e}, d`` unpack (``_`` for an element not
  wanted): element 0 is the least significant (PTX ISA 9.7.9.10).
* ``ld{.ss}{.nc}.b128 d, [a]`` / ``ldu`` / ``st{.ss}.b128 [a], b`` in every state space (``.param`` too: a
  kernel parameter, a device function's ``.param`` frame, a ``.reg .b128`` parameter): two 64-bit accesses at
  ``a`` and ``a + 8``, the first marked ``attrs.vec = 16`` as a ``.v2.b64`` access is (PTX requires a
  ``.b128`` address to be 16-byte aligned; as for ``.v2.b64``, neither engine checks more than each half's
  8-byte alignment).  Memory is little-endian, so the bytes are those of the 128-bit value.  The strong forms
  (``ld.{volatile,relaxed.scope,acquire.scope,mmio.relaxed.sys}``, ``st.{volatile,relaxed.scope,release.scope,
  mmio.relaxed.sys}``; .global, .shared{::cta,::cluster} and generic, as ptxas 13.0 takes them, sm_80 and up) are
  single-copy atomic: one 16-byte step, the two parts of an ``atom`` (below) with ``atom_op`` ``ld`` (reads the
  16 bytes, writes nothing) or ``st`` (writes them), ``attrs.sem`` the qualifier; xg1 ``ATOM{G,S,}.128.LD`` /
  ``.ST`` and ``ATOMX.GET``.
* ``atom{.sem}{.scope}{.ss}.cas.b128 d, [a], b, c`` / ``atom....exch.b128 d, [a], b`` (PTX 8.3, sm_90; .global,
  .shared{::cta,::cluster}, generic): one 16-byte transaction.  An IR value being 64 bits, it is two ``atom``
  instructions with the same operands (address, then the halves of b and c, low first), ``attrs.part`` 0 and
  1: part 0 performs the whole transaction, d = the old bits 63:0, and leaves the old bits 127:64 in the
  thread's 64-bit *atomic latch*; part 1, always right after it, d = the latch.  xg1 does the same with
  ``ATOMG.128``/``ATOMS.128``/``ATOM.128`` and ``ATOMX.GET`` (and ``ATOMX.SET``, which puts a CAS's new value in
  the 128-bit latch first: the instruction word has room for two register pairs only).  Both interpreters
  perform the 16 bytes in one step (xcc.sim.memory._atomic16).

Any other instruction naming a ``.b128`` register (but ``call``, whose ``.reg .b128`` arguments move through
``st.param.b128``/``ld.param.b128``) is refused at its place.
"""

from __future__ import annotations

from dataclasses import replace

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.scopes import RegVar
from xcc.ir.types import ptx_type

_B64, _B32 = ptx_type("b64"), ptx_type("b32")
_STRONG = ("volatile", "relaxed", "acquire", "release", "mmio", "sc")


def halves(reg: RegVar) -> tuple[RegVar, RegVar]:
    """The two 64-bit registers (low, high) the SSA builder keeps for ``.b128`` register ``reg``."""
    return RegVar(f"{reg.key}.lo", _B64), RegVar(f"{reg.key}.hi", _B64)


def literal_low(value: int) -> int:
    """Bits 63:0 of a ``.b128`` integer literal: the literal's 64 bits (PTX ISA 4.5.1: an integer literal is a
    64-bit value, a negative one in two's complement).  Bits 127:64 are 0: ptxas 13.0 *zero*-extends, even a
    negative literal (``mov.b128 %q, -1`` gives the same code as ``mov.b128 %q, 1`` and ``-2`` for the high
    half; docs/semantics.md)."""
    return value & ((1 << 64) - 1)


def is_b128(op) -> bool:
    return isinstance(op, RegVar) and op.type.bits == 128


def _text(inst: ast.Instruction) -> str:
    return ".".join([inst.opcode, *inst.modifiers])


class B128Lowering:
    """``.b128`` forms of mov, ld/ldu and st (module docstring); mixed into :class:`xcc.ir.lower.InstLowering`."""

    def read128(self, op) -> tuple:
        """(low, high) 64-bit values of a ``.b128`` source: a ``.b128`` register or a non-negative literal."""
        if is_b128(op):
            lo, hi = halves(op)
            return self.b.read(lo, self.b.block), self.b.read(hi, self.b.block)
        if isinstance(op, ast.Imm) and op.kind == "int" and -(1 << 63) <= op.value < 1 << 64:
            return Const(_B64, literal_low(op.value)), Const(_B64, 0)
        if isinstance(op, ast.Symbol | ast.SymbolOffset) and self.inst.opcode == "mov":
            # mov.b128 %q, var: the address zero-extended (ptxas 13.0, sm_90a SASS: LDC.64 R4, c[0x4][RZ] for the
            # low half of gbuf's, STG.E.64 ... RZ for the high half; a .shared one's 32-bit address likewise)
            return self.zero_extend(self.read(op, _B64), _B64), Const(_B64, 0)
        raise self.error(f"'{_text(self.inst)}': a .b128 source is a .b128 register or a 64-bit integer "
                         "literal", PtxSemanticError)

    def write128(self, dest, lo, hi) -> None:
        if isinstance(dest, ast.Sink):
            return
        if not is_b128(dest):
            raise self.error(f"'{_text(self.inst)}': the destination must be a .b128 register", PtxSemanticError)
        dlo, dhi = halves(dest)
        self.write(dlo, lo)
        self.write(dhi, hi)

    def refuse_b128(self, inst) -> None:
        """A located refusal for an instruction naming a ``.b128`` register that no form here lowers."""
        if inst.opcode == "call":  # a .reg .b128 argument or return value moves through ld/st.param.b128
            return
        ops = [*inst.operands, *(e for o in inst.operands if isinstance(o, ast.Vector) for e in o.elements)]
        if any(is_b128(o) or isinstance(o, ast.Address) and is_b128(o.base) for o in ops):
            raise self.error(f"'{_text(inst)}': .b128 registers are operands of mov, ld, ldu, st and atom.cas/"
                             "atom.exch only", PtxSemanticError)

    def mov_b128(self, inst) -> None:
        self._check(inst, 2)
        d, a = inst.operands
        if isinstance(a, ast.Vector) and isinstance(d, ast.Vector):
            raise self.error(f"'{_text(inst)}': both operands are vectors", PtxSemanticError)
        vec = a if isinstance(a, ast.Vector) else d if isinstance(d, ast.Vector) else None
        if vec is None:
            self.write128(d, *self.read128(a))
            return
        n = len(vec.elements)
        if n not in (2, 4):
            raise self.error(f"'{_text(inst)}': .b128 packs two .b64 or four .b32 elements, not {n}",
                             PtxSemanticError)
        et = _B64 if n == 2 else _B32
        if vec is a:  # pack
            elems = []
            for e in a.elements:
                if isinstance(e, ast.Sink):
                    raise self.error(f"'{_text(inst)}': '_' is not a source", PtxSemanticError)
                v = self.read(e, et)
                elems.append(v if v.type.bits == et.bits else self.emit("mov", et, [v], et).result)
            if n == 4:
                elems = [self.emit("pack", _B64, elems[k:k + 2], _B64).result for k in (0, 2)]
            self.write128(d, *elems)
            return
        lo, hi = self.read128(a)  # unpack
        for k, e in enumerate(d.elements):
            if isinstance(e, ast.Sink):
                continue
            half = (lo, hi)[k * et.bits // 64]
            v = half if n == 2 else self.emit("unpack", _B64, [half], _B32, index=k % 2).result
            self.write(e, v)

    def atom_b128(self, inst) -> None:
        """``atom{.sem}{.scope}{.ss}.cas.b128 d, [a], b, c`` / ``.exch.b128 d, [a], b`` (sm_90): one 16-byte
        transaction, as two ``atom`` IR instructions with the same operands (the address, then each .b128
        source's halves, low first): ``attrs.part = 0`` performs it and gives the old bits 63:0, ``part = 1``,
        right after it, the old bits 127:64 of the same transaction (module docstring)."""
        aop = next((m for m in inst.modifiers if m in ("cas", "exch")), None)
        if aop is None:
            raise self.error(f"'{_text(inst)}': .b128 atomics are .cas and .exch only", PtxSemanticError)
        if "L2::cache_hint" in inst.modifiers and aop == "cas":
            raise self.error(f"'{_text(inst)}': atom.cas takes no .L2::cache_hint", PtxSemanticError)
        if self._vec(inst) > 1:
            raise self.error(f"'{_text(inst)}': a vector of .b128 exceeds 128 bits", PtxSemanticError)
        inst = self.without_cache_hint(inst)
        self._check(inst, 4 if aop == "cas" else 3)
        d, addr, *srcs = inst.operands
        base, off, param = self._address(addr)
        space = self._space(inst)
        if param is not None or space == "param":
            raise self.error("atomics on kernel parameters are not supported (they are read-only)")
        if space not in ("global", "shared", "generic"):
            raise self.error(f"'{_text(inst)}': .b128 atomics address .global, .shared or generic memory",
                             PtxSemanticError)
        args = [base, *(h for s in srcs for h in self.read128(s))]
        lo, hi = (self.emit("atom", _B64, list(args), _B64, space=space, offset=off, atom_op=aop, part=k).result
                  for k in (0, 1))
        self.write128(d, lo, hi)

    def _b128_access(self, inst) -> str | None:
        """The memory-model qualifier of a ``.b128`` access (``volatile``, ``relaxed``, ``acquire``, ``release``,
        ``mmio``), None for a weak one."""
        if self._vec(inst) > 1:
            raise self.error(f"'{_text(inst)}': a vector of .b128 exceeds 128 bits", PtxSemanticError)
        return next((m for m in inst.modifiers if m in _STRONG), None)

    def _strong_b128(self, inst, sem: str, addr, srcs: tuple) -> tuple:
        """A strong ``ld``/``st.b128`` (module docstring): one single-copy-atomic 16-byte access, the two parts of
        an ``atom`` with ``atom_op`` ``ld`` (writes nothing) or ``st`` (the halves of the value, low first);
        returns the (low, high) values read (a store's are the old bytes, unused)."""
        base, off, param = self._address(addr)
        space = self._space(inst)
        if param is not None or space not in ("global", "shared", "generic"):  # .param, .local, .const: as ptxas
            raise self.error(f"'{_text(inst)}': a .{sem} .b128 access addresses .global, .shared or generic "
                             "memory", PtxSemanticError)
        if sem == "mmio" and space == "shared":  # as ptxas 13.0
            raise self.error(f"'{_text(inst)}': .mmio does not apply to the .shared space", PtxSemanticError)
        op = "st" if srcs else "ld"
        args = [base, *srcs]
        return tuple(self.emit("atom", _B64, list(args), _B64, space=space, offset=off, atom_op=op, sem=sem,
                               part=k).result for k in (0, 1))

    def _no_cache_hint(self, inst):
        """``inst`` without ``.L2::cache_hint`` and its policy operand (a hint: read, then dropped)."""
        if "L2::cache_hint" not in inst.modifiers:
            return inst
        inst = self.without_cache_hint(inst)
        return replace(inst, modifiers=tuple(m for m in inst.modifiers if m != "L2::cache_hint"))

    def ld_b128(self, inst) -> None:
        """``ld.b128 d, [a]``: the halves from ``[a]`` and ``[a + 8]`` (module docstring), as ``ld.v2.b64``; a
        strong load as one 16-byte atomic read."""
        inst = self._no_cache_hint(inst)
        self._check(inst, 2)
        d, addr = inst.operands
        sem = self._b128_access(inst)
        if not isinstance(d, ast.Sink | RegVar) or isinstance(d, RegVar) and not is_b128(d):
            raise self.error(f"'{_text(inst)}': the destination must be a .b128 register", PtxSemanticError)
        if sem is not None:
            lo, hi = self._strong_b128(inst, sem, addr, ())
            self.write128(d, lo, hi)
            return
        dlo, dhi = halves(d) if is_b128(d) else (ast.Sink(), ast.Sink())
        self.op_ld(replace(inst, modifiers=_as_v2_b64(inst.modifiers), operands=[ast.Vector((dlo, dhi)), addr]))
        self.inst = inst

    def st_b128(self, inst) -> None:
        """``st.b128 [a], b``: the halves to ``[a]`` and ``[a + 8]``, as ``st.v2.b64``; a strong store as one
        16-byte atomic write."""
        inst = self._no_cache_hint(inst)
        self._check(inst, 2)
        addr, src = inst.operands
        sem = self._b128_access(inst)
        if is_b128(src):
            parts = list(halves(src))
        elif isinstance(src, ast.Imm) and src.kind == "int" and -(1 << 63) <= src.value < 1 << 64:
            parts = [replace(src, value=literal_low(src.value)), ast.Imm(0, loc=src.loc)]
        else:
            raise self.error(f"'{_text(inst)}': a .b128 source is a .b128 register or a 64-bit integer "
                             "literal", PtxSemanticError)
        if sem is not None:
            self._strong_b128(inst, sem, addr, self.read128(src))
            return
        self.op_st(replace(inst, modifiers=_as_v2_b64(inst.modifiers), operands=[addr, ast.Vector(tuple(parts))]))
        self.inst = inst


def _as_v2_b64(mods: tuple[str, ...]) -> tuple[str, ...]:
    """A ``.b128`` access's modifiers as the ``.v2.b64`` access's that performs it."""
    return tuple(m for m in mods if m != "b128") + ("v2", "b64")
