"""Lowering of the rest of PTX's sm_75..sm_90 warp and asynchronous forms into existing IR operations, so both
engines (the IR interpreter and xg1) run them with no new IR or machine operation:

* ``movmatrix.sync.aligned.m8n8.trans.b16 d, a`` (PTX ISA 9.7.14.5.16, sm_75): the warp's 8x8 matrix of 16-bit
  elements, lane ``l`` holding elements ``2(l%4)`` and ``2(l%4)+1`` of row ``l/4`` (ldmatrix's fragment), is
  transposed.  Lane ``l`` of the result holds ``A[2(l%4)][l/4]`` and ``A[2(l%4)+1][l/4]``: the words of lanes
  ``8(l%4) + (l/4)/2`` and that plus 4 (two ``shfl.idx``), each at half ``(l/4)%2``.
* ``st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b, [mbar]``
  (9.7.9.12, sm_90): the store, into the (remote) shared memory ``a`` names, then a complete-tx of the store's
  byte count on the mbarrier ``mbar`` (in the same CTA as ``a``).  ``red.async.relaxed.cluster.shared::cluster
  .mbarrier::complete_tx::bytes.op.type [a], b, [mbar]`` (9.7.13.6): the reduction (an atomic without a
  result), then a complete-tx of the operand's bytes.  xcc performs both when the instruction executes, so
  they are complete when the mbarrier is waited on, as the asynchronous proxy guarantees.
* ``atom{.sem}{.scope}{.global}.op{.noftz}.vN.type d, [a], b`` and ``red...vN.type [a], b`` (9.7.13.5/6, sm_90,
  PTX 8.1): ``.add`` on ``.v2``/``.v4`` ``.f32``; ``.add``/``.min``/``.max`` ``.noftz`` on ``.v2``/``.v4``/``.v8``
  ``.f16``/``.bf16`` and ``.v2``/``.v4`` ``.f16x2``/``.bf16x2``; global memory only (generic addressing must
  point to it).  The manual guarantees atomicity "separately for each of the individual scalar elements", so
  each element ``k`` is one scalar atomic at ``a + k * size``, element ``k`` of ``d`` its old value; all of
  ``b`` is read before any of ``d`` is written (they may name the same registers).
* ``pmevent a`` / ``pmevent.mask m`` (9.7.18.2): raises performance-monitor events, which have no architectural
  effect; xcc has no performance-monitor counters (``%pm0..7`` read 0), so it lowers to nothing.
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

_COMPLETE_TX = "mbarrier::complete_tx::bytes"
# PTX ISA 9.7.9.12: st.async's types and vector widths (.v4 only with 32-bit elements)
_ST_ASYNC_TYPES = frozenset({"b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"})
# PTX ISA 9.7.13.6: red.async's operations and types (and .add.s64, which ptxas 13.0 accepts too)
_RED_ASYNC = frozenset({("inc", "u32"), ("dec", "u32"), ("min", "u32"), ("min", "s32"), ("max", "u32"),
                        ("max", "s32"), ("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "s64"), ("and", "b32"),
                        ("or", "b32"), ("xor", "b32")})


_MM_VECTOR_TYPES = ("f32", "f16x2", "bf16x2")
# PTX ISA 9.7.13.5 (atom) / 9.7.13.6 (red), vector types: element type -> (vector widths, operations)
_ATOM_VECTOR = {"f32": ((2, 4), ("add",)), "f16": ((2, 4, 8), ("add", "min", "max")),
                "bf16": ((2, 4, 8), ("add", "min", "max")), "f16x2": ((2, 4), ("add", "min", "max")),
                "bf16x2": ((2, 4), ("add", "min", "max"))}


def _multimem_op_ok(kind: str, op: str, t: str) -> bool:
    """Whether ``multimem.{ld_reduce,red}.op.t`` is PTX (as ptxas 13.0 decides for sm_90a): floats only ``.add``
    (``ld_reduce`` also ``.min``/``.max`` on ``.f16x2``/``.bf16x2``), ``.add`` on .u32/.s32/.u64, ``.min``/``.max``
    on 32- and 64-bit integers, the bitwise operations on .b32/.b64."""
    if t in ("f16", "bf16", "f16x2", "bf16x2", "f32", "f64"):
        return op == "add" or (kind == "ld_reduce" and op in ("min", "max") and t in ("f16x2", "bf16x2"))
    if op in ("and", "or", "xor"):
        return t in ("b32", "b64")
    if op == "add":
        return t in ("u32", "s32", "u64")
    return t in ("u32", "s32", "u64", "s64")


def _text(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class Sm90Lowering:
    # ----------------------------------------------------------------- movmatrix
    def op_movmatrix(self, inst) -> None:
        ms = set(inst.modifiers)
        if ms != {"sync", "aligned", "m8n8", "trans", "b16"}:
            raise self.error(f"'{_text(inst)}': expected movmatrix.sync.aligned.m8n8.trans.b16", PtxSemanticError)
        self._check(inst, 2)
        u32 = ptx_type("u32")
        d, a = inst.operands
        v = self.read(a, u32)

        def op(name, x, y):
            return self.emit(name, u32, [x, Const(u32, y) if isinstance(y, int) else y], u32).result

        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        row = op("shr", lane, 2)
        src = op("add", op("shl", op("and", lane, 3), 3), op("shr", row, 1))
        shift = op("shl", op("and", row, 1), 4)
        halves = []
        for k in (0, 1):
            owner = op("add", src, 4 * k)
            w = self.emit("shfl", u32, [v, owner, Const(u32, 0x1F), Const(u32, 0xFFFFFFFF)], u32, mode="idx").result
            halves.append(op("and", op("shr", w, shift), 0xFFFF))
        self.write(d, op("or", halves[0], op("shl", halves[1], 16)))

    # ----------------------------------------------------------------- st.async / red.async
    def _async_mbar(self, inst, mbar, nbytes: int) -> None:
        """complete-tx of ``nbytes`` on the mbarrier at ``[mbar]`` (a shared::cluster address in every form: ptxas
        13.0 puts the register in the high half of STAS/REDAS's address pair as it is)."""
        base, off = self._hp_address(inst, mbar)
        self.emit("mbar_tx", None, [base, Const(ptx_type("u32"), nbytes)], offset=off, complete=True)

    def _async_address(self, inst, op):
        """(base, offset) of st.async/red.async's destination, a shared::cluster address.  ptxas 13.0 (sm_90a SASS)
        compiles ``.shared``, ``.shared::cta`` and ``.shared::cluster`` alike (``STAS [R4.64]``: R4 the address,
        R5 the mbarrier), and with no state space takes the low word of the generic address (``MOV R4, R2``, R2
        the address's low half): the shared::cluster address of a generic one in the shared window."""
        if any(m in ("shared", "shared::cta", "shared::cluster") for m in inst.modifiers):
            return self._hp_shared(inst, op)
        base, off = self._hp_address(inst, op)
        if base.type.bits == 64:
            base = self.emit("cvt", ptx_type("u32"), [base], ptx_type("u32"), src="u64").result
        return base, off

    def _async_form(self, inst, allowed: set[str]) -> bool:
        """Check the form; False for one without its mbarrier operand, which ptxas 13.0 compiles to nothing
        (sm_90a SASS: no STAS/REDAS, only the operands' own definitions), so xcc does too."""
        ms = inst.modifiers
        extra = [m for m in ms if m not in allowed | {"shared", "shared::cta"}]
        if _COMPLETE_TX not in ms or extra or sum(m in ("shared", "shared::cta", "shared::cluster") for m in ms) > 1:
            raise self.error(f"'{_text(inst)}': expected {inst.opcode}.async...{{.shared{{::cta,::cluster}}}}."
                             f"{_COMPLETE_TX}" + (f" (unexpected .{extra[0]})" if extra else ""), PtxSemanticError)
        if len(inst.operands) == 2:
            return False
        self._check(inst, 3)
        return True

    def store_async(self, inst) -> None:
        """``st.async``: the store, then complete-tx of its bytes on ``[mbar]``."""
        t = self._type(inst)
        vec = self._vec(inst)
        complete = self._async_form(inst, {"async", "weak", "cluster", "shared::cluster", _COMPLETE_TX, "v2", "v4",
                                           *_ST_ASYNC_TYPES})
        if t.name not in _ST_ASYNC_TYPES or (vec == 4 and t.bits == 64):
            raise self.error(f"'{_text(inst)}': st.async stores .b32/.b64/.u32/.u64/.s32/.s64/.f32/.f64 "
                             "(.v4 only with 32-bit elements)", PtxSemanticError)
        srcs = inst.operands[1].elements if isinstance(inst.operands[1], ast.Vector) else (inst.operands[1],)
        if len(srcs) != vec:
            raise self.error(f"'{_text(inst)}' stores {vec} value(s), got {len(srcs)}", PtxSemanticError)
        if not complete:
            return
        base, off = self._async_address(inst, inst.operands[0])
        for k, s in enumerate(srcs):
            extra = {"vec": vec * t.bytes} if k == 0 and vec > 1 else {}
            self.emit("st", t, [base, self.read(s, t)], None, space="shared", offset=off + k * t.bytes, **extra)
        self._async_mbar(inst, inst.operands[2], vec * t.bytes)

    def reduce_async(self, inst) -> None:
        """``red.async``: the reduction (an atomic whose result is dropped), then complete-tx of its bytes."""
        t = self._type(inst)
        aop = next((m for m in inst.modifiers if m in {o for o, _ in _RED_ASYNC}), None)
        complete = self._async_form(inst, {"async", "relaxed", "cluster", "shared::cluster", _COMPLETE_TX,
                                           *(o for o, _ in _RED_ASYNC), *(ty for _, ty in _RED_ASYNC)})
        if (aop, t.name) not in _RED_ASYNC:
            raise self.error(f"'{_text(inst)}': red.async takes .inc/.dec/.min/.max/.add on .u32, .min/.max/.add "
                             "on .s32, .add on .u64/.s64, .and/.or/.xor on .b32", PtxSemanticError)
        if not complete:
            return
        base, off = self._async_address(inst, inst.operands[0])
        self.emit("atom", t, [base, self.read(inst.operands[1], t)], t, space="shared", offset=off, atom_op=aop)
        self._async_mbar(inst, inst.operands[2], t.bytes)

    def atom_vector(self, inst, has_result: bool) -> None:
        """``atom``/``red`` with a ``.v2``/``.v4``/``.v8`` type: one scalar atomic per element (module docstring)."""
        t, vec = self._type(inst), self._vec(inst)
        aop = next((m for m in inst.modifiers if m in ("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min",
                                                         "max")), None)
        widths, ops = _ATOM_VECTOR.get(t.name, ((), ()))
        if vec not in widths or aop not in ops:
            raise self.error(f"'{_text(inst)}': vector {inst.opcode} takes .add on .v2/.v4 .f32, and .add/.min/.max "
                             "on .v2/.v4/.v8 .f16/.bf16 and .v2/.v4 .f16x2/.bf16x2", PtxSemanticError)
        if t.name != "f32" and "noftz" not in inst.modifiers:
            raise self.error(f"'{_text(inst)}': vector {inst.opcode} on .{t.name} requires .noftz", PtxSemanticError)
        space = self._space(inst)
        if space not in ("global", "generic"):
            raise self.error(f"'{_text(inst)}': vector {inst.opcode} is defined on .global memory only",
                             PtxSemanticError)
        inst = self.without_cache_hint(inst)
        self._check(inst, 3 if has_result else 2)
        operands = inst.operands if has_result else [ast.Sink(), *inst.operands]
        d, src = operands[0], operands[2]
        if not isinstance(src, ast.Vector) or len(src.elements) != vec or has_result and (
                not isinstance(d, ast.Vector) or len(d.elements) != vec):
            raise self.error(f"'{_text(inst)}' takes {{}} vectors of {vec} elements", PtxSemanticError)
        base, off, param = self._address(operands[1])
        if param is not None:
            raise self.error("atomics on kernel parameters are not supported (they are read-only)")
        values = [self.read(e, t) for e in src.elements]  # every source before any destination is written
        olds = [self.emit("atom", t, [base, v], t, space=space, offset=off + k * t.bytes, atom_op=aop).result
                for k, v in enumerate(values)]
        if has_result:
            for e, v in zip(d.elements, olds):
                if not isinstance(e, ast.Sink):
                    self.write(e, v)

    # ----------------------------------------------------------------- pmevent
    def op_pmevent(self, inst) -> None:
        self._check(inst, 1)
        a = inst.operands[0]
        limit = 0xFFFF if "mask" in inst.modifiers else 15
        if not isinstance(a, ast.Imm) or a.kind != "int" or not 0 <= a.value <= limit:
            raise self.error(f"'{_text(inst)}': the event must be an integer constant 0..{limit}"
                             + (" (a 16-bit mask)" if limit > 15 else ""), PtxSemanticError)

    # ----------------------------------------------------------------- multimem
    def op_multimem(self, inst) -> None:
        """``multimem.ld_reduce`` / ``multimem.st`` / ``multimem.red`` (PTX ISA 9.7.9.16, sm_90) on one device.

        A multimem address names a multicast object, which CUDA binds to memory on each device of a group
        (``cuMulticastCreate``, ``cuMulticastBindMem``).  xcc runs one device, so a multicast object is bound to that
        device's memory alone and the address is an ordinary global (or generic) address of it: ``ld_reduce``
        reduces the one copy, which is the value loaded (for every operation, ``.acc::f32`` included: one f16 or
        bf16 value converted to f32 and back is itself); ``st`` stores to the one copy; ``red`` reduces into it
        as ``red.global`` does (``.acc::f32``: the f16/bf16 sum of two values is computed exactly enough in f32
        that its rounding to 16 bits is the direct rounding).  Reductions over copies on several devices cannot
        arise, so nothing is refused.  The operations and types are ptxas 13.0's (:func:`_multimem_op_ok`).

        ``multimem.ld_reduce.{add,min,max}{.acc::f32}.{v2,v4,v8}.{f16,bf16}`` (vectors of 16-bit halves, which the
        PTX ISA writes as .f16x2/.bf16x2 words; ptxas 13.0 takes them, .acc::f32 with .add only) are the packed
        forms: ptxas compiles ``.v2.f16 {%h1, %h2}`` to the same ``LDGMC.E.ADD.F16x2.RN.STRONG.SYS R7, [...]`` as
        ``.f16x2 %r1`` (``.v4``/``.v8``: ``LDGMC.E.ADD.F16x4``/``F16x8`` into two/four registers, ``.min``:
        ``LDGMC.E.MIN.F16x2``, ``.bf16``: ``BF16x2``), element k the half at byte 2k (the low half of word k/2
        first, as the stores of %h1 .. %h8 that follow read them), so element k is the value at address + 2k.
        ``multimem.st``/``red`` take the same vectors of halves (ptxas 13.0, sm_90a SASS: ``st.v2.f16 {%h1, %h2}``
        is one ``STG.E.STRONG.SYS`` of the packed word, ``red.min.v4.bf16`` one ``REDG.E.MIN.BF16x4``; ``red``
        with .add/.min/.max, ``.acc::f32`` or not): element k stored to, or reduced into, address + 2k."""
        ms = inst.modifiers
        kind = ms[0] if ms else None
        if kind not in ("ld_reduce", "st", "red"):
            raise self.error(f"'{_text(inst)}': expected multimem.ld_reduce, multimem.st or multimem.red",
                             PtxSemanticError)
        t = self._type(inst)
        if t.name in ("f16x2", "bf16x2"):  # a packed pair moves as one 32-bit word
            word = ptx_type("b32")
        else:
            word = t
        vec = self._vec(inst)
        space = "global" if "global" in ms else "generic"
        self._check(inst, 2)
        data, addr = (inst.operands[0], inst.operands[1]) if kind == "ld_reduce" else inst.operands[1::-1]
        base, off, param = self._address(addr)
        if param is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a multimem address", PtxSemanticError)
        regs = data.elements if isinstance(data, ast.Vector) else (data,)
        if len(regs) != vec:
            raise self.error(f"'{_text(inst)}' moves {vec} value(s), got {len(regs)}", PtxSemanticError)
        op = next((m for m in ms if m in ("add", "min", "max", "and", "or", "xor")), None)
        if kind != "st" and op is None:
            raise self.error(f"'{_text(inst)}' has no reduction operation", PtxSemanticError)
        halves = vec > 1 and t.name in ("f16", "bf16")  # .vN.f16 is .v(N/2).f16x2
        if vec > 1 and not halves and (vec == 8 or t.name not in _MM_VECTOR_TYPES):
            raise self.error(f"'{_text(inst)}': multimem takes .v2/.v4 only with .f32, .f16x2 or .bf16x2 "
                             "(and .v2/.v4/.v8 with .f16 or .bf16)", PtxSemanticError)
        if halves and kind == "red":  # ptxas 13.0: REDG.E.{ADD,MIN,MAX}.{F16,BF16}xN, .acc::f32 or not
            if op not in ("add", "min", "max"):
                raise self.error(f"'{_text(inst)}': .{op} is not a multimem.red operation on .{t.name}",
                                 PtxSemanticError)
        elif kind != "st" and not _multimem_op_ok(kind, op, f"{t.name}x2" if halves else t.name):
            raise self.error(f"'{_text(inst)}': .{op} is not a multimem.{kind} operation on .{t.name}",
                             PtxSemanticError)
        for k, r in enumerate(regs):
            at = off + k * word.bytes
            if kind == "ld_reduce":
                rt = r.type if hasattr(r, "type") else word
                extra = {"vec": vec * word.bytes} if k == 0 and vec > 1 else {}
                self.write(r, self.emit("ld", word, [base], rt, space=space, offset=at, **extra).result)
            elif kind == "st":
                extra = {"vec": vec * word.bytes} if k == 0 and vec > 1 else {}
                self.emit("st", word, [base, self.read(r, word)], None, space=space, offset=at, **extra)
            else:
                self.emit("atom", t, [base, self.read(r, t)], t, space=space, offset=at, atom_op=op)
