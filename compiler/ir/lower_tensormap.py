"""Lowering of ``tensormap.replace`` and ``tensormap.cp_fenceproxy`` (PTX ISA 9.7.9.27 / 9.7.9.28, sm_90a) into
ordinary loads and stores of the 128-byte tensor map, in xcc's layout (:mod:`xcc.semantics.tensormap`, the one
the driver API's ``cuTensorMapEncodeTiled`` writes and the TMA copies read).

``tensormap.replace.tile.field{.global,.shared::cta}.b1024.{b32,b64} [tm], {ord,} new_val`` writes one field of
the map at ``tm`` (generic without a state space):

==================  ==========================================================================================
field               what it stores (``new_val`` semantics as an NVIDIA H200 showed, see below)
==================  ==========================================================================================
global_address      bytes 8 - 15: the 64-bit address
rank                byte 5: ``new_val + 1`` (the value is the rank less one)
box_dim ord         bytes 72 + 2 ord: ``new_val`` (u16)
global_dim ord      bytes 16 + 4 ord: ``new_val - 1`` (the layout keeps dims less one)
global_stride ord   bytes 40 + 8 ord: ``new_val`` with its low 4 bits cleared: the stride of dim ``ord + 1`` in
                    bytes (ord 0 .. 3; the hardware drops the low 4 bits of a stride that is not a multiple of 16)
element_stride ord  byte 82 + ord
elemtype            byte 4: the PTX code (0 .u8, 1 .u16, 2 .u32, 3 .s32, 4 .u64, 5 .s64, 6 .f16, 7 .f32,
                    8 .f32.ftz, 9 .f64, 10 .bf16, 11 .tf32, 12 .tf32.ftz) as its ``CUtensorMapDataType``
interleave_layout   byte 6: 0 none, 1 16B, 2 32B (xcc.semantics.tensormap)
swizzle_mode        byte 7 bits 0 - 3: 0 none, 1 32B, 2 64B, 3 128B (4, 96B, is sm_100's: refused)
fill_mode           byte 7 bit 4: 0 zeros, 1 NaN outside the tensor
==================  ==========================================================================================

``ord`` and the immediate-only fields' values are constants (ptxas requires them).  ``swizzle_atomicity`` is an
sm_100 field (ptxas 13.0 refuses it for sm_90a): refused.  The semantics of ``rank``, ``global_dim``,
``global_stride``, ``box_dim`` and ``elemtype`` were confirmed on an H200 (a map from ``cuTensorMapEncodeTiled``
edited in shared memory, copied out with ``tensormap.cp_fenceproxy`` and read by a TMA tile load).

``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128``
copies the 128 bytes from shared to global memory (each executing thread copies them: the same bytes) and then
fences; xcc's memory is sequentially consistent and its TMA reads the map when the copy executes, so the proxy
fence (and ``fence.proxy.tensormap::generic.acquire``) need nothing more.
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.types import ptx_type

# PTX's elemtype codes -> CUtensorMapDataType (PTX ISA 9.7.9.27, "tensormap new_val validity"; 9 = .f64 confirmed)
_ELEMTYPE = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 10, 9: 8, 10: 9, 11: 11, 12: 12}
_FIELD1 = ("global_address", "rank")
_FIELD2 = ("box_dim", "global_dim", "global_stride", "element_stride")
_FIELD3 = ("elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode")
_SCOPES = ("cta", "cluster", "gpu", "sys")


def _text(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class TensormapLowering:
    def op_tensormap(self, inst) -> None:
        ms = inst.modifiers
        if ms and ms[0] == "cp_fenceproxy":
            return self._tm_cp_fenceproxy(inst)
        fields = [m for m in ms if m in _FIELD1 + _FIELD2 + _FIELD3]
        spaces = [m for m in ms if m in ("global", "shared::cta")]
        want = {"replace", "tile", "b1024", *fields, *spaces}
        t = "b64" if "b64" in ms else "b32"
        if ms[:1] != ("replace",) or len(fields) != 1 or len(spaces) > 1 or set(ms) != want | {t}:
            raise self.error(f"'{_text(inst)}': expected tensormap.replace.tile.field{{.global,.shared::cta}}.b1024"
                             ".{b32,b64} or tensormap.cp_fenceproxy", PtxSemanticError)
        field = fields[0]
        if field == "swizzle_atomicity":
            raise self.error(f"'{_text(inst)}': .swizzle_atomicity is a field of sm_100 tensor maps; xcc does not "
                             "support it yet")
        b64_fields = ("global_address", "global_stride")
        if (t == "b64") != (field in b64_fields):
            raise self.error(f"'{_text(inst)}': .{field} takes {'.b64' if field in b64_fields else '.b32'}",
                             PtxSemanticError)
        self._check(inst, 3 if field in _FIELD2 else 2)
        space = {"global": "global", "shared::cta": "shared"}.get(spaces[0] if spaces else "", "generic")
        base, off, param = self._address(inst.operands[0])
        if param is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is read-only", PtxSemanticError)
        u8, u16, u32, u64 = (ptx_type(n) for n in ("u8", "u16", "u32", "u64"))

        def store(ty, at: int, value) -> None:
            self.emit("st", ty, [base, value], None, space=space, offset=off + at)

        if field in _FIELD3:
            v = self._tm_imm(inst, inst.operands[1], "the new value", 0, 15)
            if field == "elemtype":
                if v not in _ELEMTYPE:
                    raise self.error(f"'{_text(inst)}': elemtype {v} is not one of PTX's 0 .. 12", PtxSemanticError)
                return store(u8, 4, Const(u8, _ELEMTYPE[v]))
            if field == "interleave_layout":
                if v not in (0, 1, 2):
                    raise self.error(f"'{_text(inst)}': interleave_layout is 0, 1 or 2", PtxSemanticError)
                return store(u8, 6, Const(u8, v))
            if field == "swizzle_mode" and v > 3:
                raise self.error(f"'{_text(inst)}': swizzle mode {v} is not supported (0 none, 1 32B, 2 64B, 3 128B; "
                                 "4, 96B, needs sm_100)")
            if field == "fill_mode" and v > 1:
                raise self.error(f"'{_text(inst)}': fill_mode is 0 (zeros) or 1 (NaN)", PtxSemanticError)
            keep, new = (0xF0, v) if field == "swizzle_mode" else (0xEF, v << 4)
            old = self.emit("ld", u8, [base], u32, space=space, offset=off + 7).result
            merged = self.emit("and", u32, [old, Const(u32, keep)], u32).result
            merged = self.emit("or", u32, [merged, Const(u32, new)], u32).result
            return store(u8, 7, merged)
        if field == "global_address":
            return store(u64, 8, self.read(inst.operands[1], u64))
        if field == "rank":
            v = self.emit("add", u32, [self.read(inst.operands[1], u32), Const(u32, 1)], u32).result
            return store(u8, 5, v)
        ord_ = self._tm_imm(inst, inst.operands[1], "ord", 0, 3 if field == "global_stride" else 4)
        if field == "global_stride":
            v = self.emit("and", u64, [self.read(inst.operands[2], u64), Const(u64, ~15 & (1 << 64) - 1)], u64).result
            return store(u64, 40 + 8 * ord_, v)
        v = self.read(inst.operands[2], u32)
        if field == "box_dim":
            return store(u16, 72 + 2 * ord_, v)
        if field == "global_dim":
            return store(u32, 16 + 4 * ord_, self.emit("sub", u32, [v, Const(u32, 1)], u32).result)
        store(u8, 82 + ord_, v)  # element_stride

    def _tm_imm(self, inst, op, what: str, lo: int, hi: int) -> int:
        if not isinstance(op, ast.Imm) or op.kind != "int" or not lo <= op.value <= hi:
            raise self.error(f"'{_text(inst)}': {what} must be an integer constant {lo} .. {hi}"
                             + (" (xcc's tensor maps keep the strides of dims 1 .. 4)" if what == "ord" and hi == 3
                                else ""), PtxSemanticError)
        return op.value

    def _tm_cp_fenceproxy(self, inst) -> None:
        ms = set(inst.modifiers)
        want = {"cp_fenceproxy", "global", "shared::cta", "tensormap::generic", "release", "sync", "aligned"}
        scopes = ms & set(_SCOPES)
        if ms - scopes != want or len(scopes) != 1:
            raise self.error(f"'{_text(inst)}': expected tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic"
                             ".release.{cta,cluster,gpu,sys}.sync.aligned", PtxSemanticError)
        self._check(inst, 3)
        self._tm_imm(inst, inst.operands[2], "the size", 128, 128)
        dst, doff, dparam = self._address(inst.operands[0])
        src, soff, sparam = self._address(inst.operands[1])
        if dparam is not None or sparam is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a tensor-map copy operand", PtxSemanticError)
        u64 = ptx_type("u64")
        for k in range(16):
            v = self.emit("ld", u64, [src], u64, space="shared", offset=soff + 8 * k).result
            self.emit("st", u64, [dst, v], None, space="global", offset=doff + 8 * k)
        self.emit("fence", None, [], scope=next(iter(scopes)))
