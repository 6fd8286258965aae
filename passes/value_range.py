"""Unsigned value ranges of integer IR values: ``[lo, hi]`` of the bit pattern, or None when unknown.

A small, demand-driven interval analysis (the "value range" idea of LLVM's ``LazyValueInfo`` and
``ConstantRange``, without control-flow refinement): each rule returns a range only when the operation
provably does not wrap on it, so a range is always exact.  Leaves:

* constants; the special registers with limits fixed by PTX ISA 9.0 chapter 10 and the CUDA limits
  (``%tid.x/y`` < 1024, ``%tid.z`` < 64, ``%ntid.x/y`` <= 1024, ``%ntid.z`` <= 64, ``%laneid`` < 32,
  ``%ctaid.x`` < 2^31, ``%ctaid.y/z`` < 65536, ``%nctaid`` likewise);
* ``addr_of`` a ``.shared``/``.local``/``.const`` variable: its offset in the space's window, below
  :data:`ADDR_BOUND` (16 MiB: shared memory is at most 228 KiB per CTA, a constant bank 64 KiB and a
  thread's local frame at most 512 KiB).

Operations: ``add``, ``mul`` (``lo`` and ``wide``), ``mad``, ``shl``/``shr`` by constants, ``and`` with a
constant, ``rem``/``div`` of unsigned values by constants, ``min``/``max``, zero- and sign-extending ``cvt``
and ``mov``.  Phis and everything else are unknown.
"""

from __future__ import annotations

from xcc.ir.core import Const, Instruction, Value

ADDR_BOUND = 1 << 24
_SREG = {"tid.x": (0, 1023), "tid.y": (0, 1023), "tid.z": (0, 63), "ntid.x": (1, 1024), "ntid.y": (1, 1024),
         "ntid.z": (1, 64), "laneid": (0, 31), "ctaid.x": (0, (1 << 31) - 1), "ctaid.y": (0, 65535),
         "ctaid.z": (0, 65535), "nctaid.x": (1, (1 << 31) - 1), "nctaid.y": (1, 65535), "nctaid.z": (1, 65535)}

Range = tuple[int, int] | None


class ValueRanges:
    """Ranges of the values of one function (``defs``: value -> defining instruction), memoised."""

    def __init__(self, defs: dict[Value, Instruction]):
        self.defs = defs
        self.memo: dict[Value, Range] = {}

    def of(self, v: Value, depth: int = 0) -> Range:
        if isinstance(v, Const):
            return (v.bits, v.bits)
        if v in self.memo:
            return self.memo[v]
        inst = self.defs.get(v)
        r = None if inst is None or depth > 12 else self._rule(inst, depth + 1)
        bits = v.type.bits
        if r is not None and not (0 <= r[0] <= r[1] < (1 << bits)):
            r = None
        self.memo[v] = r
        return r

    def _rule(self, inst: Instruction, depth: int) -> Range:
        op, at, t = inst.op, inst.attrs, inst.type
        if op == "sreg":
            return _SREG.get(at.get("name"))
        if op == "addr_of":
            return (0, ADDR_BOUND - 1) if at.get("space") in ("shared", "local", "const") else None
        if t is None or t.is_float or t.name in ("f16x2", "bf16x2") or at.get("sat") or at.get("carry"):
            return None
        args = [self.of(a, depth) for a in inst.args]
        if op in ("cvt", "mov"):
            return self._extend(inst, args[0])
        if any(a is None for a in args) and op not in ("and", "rem"):
            return None
        mode = at.get("mode", "lo")
        if mode == "wide" and t.kind == "s" and any(r[1] >> (t.bits - 1) for r in args):
            return None  # a negative operand of a sign-extending multiplication
        if op == "add":
            return (args[0][0] + args[1][0], args[0][1] + args[1][1])
        if op == "sub" and isinstance(inst.args[1], Const):
            return (args[0][0] - args[1][0], args[0][1] - args[1][1])
        if op == "mul" and mode in ("lo", "wide"):
            return (args[0][0] * args[1][0], args[0][1] * args[1][1])
        if op == "mad" and mode in ("lo", "wide"):
            return (args[0][0] * args[1][0] + args[2][0], args[0][1] * args[1][1] + args[2][1])
        if op == "shl" and isinstance(inst.args[1], Const):
            k = inst.args[1].bits
            return (args[0][0] << k, args[0][1] << k) if k < t.bits else None
        if op == "shr" and isinstance(inst.args[1], Const):
            k = inst.args[1].bits
            if t.kind == "s" and args[0][1] >> (t.bits - 1):
                return None
            return (args[0][0] >> k, args[0][1] >> k)
        if op == "and":
            masks = [a.bits for a in inst.args if isinstance(a, Const)]
            known = [r[1] for r in args if r is not None]
            return (0, min(masks + known)) if masks or known else None
        if op in ("rem", "div") and t.kind != "s" and isinstance(inst.args[1], Const) and inst.args[1].bits:
            k = inst.args[1].bits
            if op == "rem":
                return (0, min(k - 1, args[0][1])) if args[0] is not None else (0, k - 1)
            return (args[0][0] // k, args[0][1] // k) if args[0] is not None else None
        if op in ("min", "max") and (t.kind != "s" or all(r[1] < (1 << (t.bits - 1)) for r in args)):
            f = min if op == "min" else max
            return (f(args[0][0], args[1][0]), f(args[0][1], args[1][1]))
        return None

    @staticmethod
    def _extend(inst: Instruction, r: Range) -> Range:
        """cvt/mov: the value is kept when it fits the result, sign-extension aside."""
        if r is None:
            return None
        src = inst.attrs.get("src", inst.args[0].type.name) if inst.op == "cvt" else inst.args[0].type.name
        if inst.op == "cvt" and (src[0] not in "usb" or inst.type.is_float):
            return None
        sbits = int(src[1:]) if src[1:].isdigit() else inst.args[0].type.bits
        if src[0] == "s" and r[1] >> (sbits - 1):
            return None  # a negative value would be sign-extended
        if r[1] >= (1 << min(sbits, inst.type.bits)):
            return None  # truncated
        return r


def signed(bits: int, width: int) -> int:
    """The two's-complement value of a ``width``-bit pattern."""
    return bits - (1 << width) if bits >> (width - 1) else bits
