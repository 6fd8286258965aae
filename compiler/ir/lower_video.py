"""Lowering of PTX instructions that compose from other IR ops: ``sad`` and ``nanosleep`` (a mixin of
:class:`xcc.ir.lower.InstLowering`, one ``op_<opcode>`` method per PTX opcode).

* ``sad.type d, a, b, c`` (PTX ISA 9.7.1.13): ``d = c + ((a < b) ? b - a : a - b)``, wrap-around arithmetic of
  ``type`` (the comparison is signed for ``.s*``) -> ``setp.lt``, two ``sub``, ``selp``, ``add``. On xg1
  this is what ptxas emits for ``sad`` outside the video units (ISETP + IADD3 + SEL).
* ``nanosleep.u32 t`` (PTX ISA 9.7.13.10): suspends the thread for a time in ``[0, 2t]`` ns; a duration of 0 is
  allowed, so it lowers to nothing (the engines model no wall-clock time).
"""

from __future__ import annotations

from xcc.ir.types import PRED, ptx_type


class VideoLowering:
    def op_sad(self, inst) -> None:
        self._check(inst, 4)
        t = self._type(inst)
        d, a, b, c = inst.operands
        va, vb, vc = self.read(a, t), self.read(b, t), self.read(c, t)
        lt = self.emit("setp", t, [va, vb], PRED, cmp="lt").result
        ba = self.emit("sub", t, [vb, va], t).result
        ab = self.emit("sub", t, [va, vb], t).result
        diff = self.emit("selp", t, [ba, ab, lt], t).result
        self.write(d, self.emit("add", t, [vc, diff], t).result)

    def op_nanosleep(self, inst) -> None:
        self._check(inst, 1)
        self.read(inst.operands[0], ptx_type("u32"))  # a register operand must still be defined
