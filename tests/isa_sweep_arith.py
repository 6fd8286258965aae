"""Generator of the arithmetic qualifier sweep (issue 19): tests/data/isa_inventory/sweep_arith.ptx-lines.

Covers the PTX ISA 9.x arithmetic-like chapters: integer arithmetic (add sub mul mad mul24 mad24 sad div rem abs
neg min max popc clz bfind fns brev bfe bfi szext bmsk dp4a dp2a, the extended-precision .cc/addc/subc/madc forms),
float arithmetic in f32/f64/f16/f16x2/bf16/bf16x2 (rounding, .ftz, .sat, .approx/.full, .NaN, .xorsign.abs,
.relu, .oob), comparison and selection (set setp selp slct), logic and shift (and or xor not cnot lop3 shf shl shr
prmt), cvt (type pairs, roundings, .sat/.ftz/.relu/.satfinite, cvt.pack, FP8, tf32, .frnd2), the video
instructions (scalar and 2-/4-way SIMD) and the warp-level shfl/vote/match/redux/activemask, deprecated forms
included.  Qualifiers are combined pairwise, not as a full cartesian product, and deliberately wrong combinations
(a type the form does not take, a rounding where none is allowed, a missing required qualifier, a wrong register
class) are mixed in so that both ptxas verdicts occur.

``python tests/isa_sweep_arith.py`` writes the data file with every line as ``? | instruction``;
``python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_arith.ptx-lines`` fills the verdicts."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path

OUT = Path(__file__).parent / "data" / "isa_inventory" / "sweep_arith.ptx-lines"

_16 = {"b16", "u16", "s16", "f16", "bf16", "u8", "s8", "b8", "e4m3x2", "e5m2x2"}
_32 = {"b32", "u32", "s32", "f16x2", "bf16x2", "u16x2", "s16x2", "tf32"}
_64 = {"b64", "u64", "s64"}


def reg(t: str, i: int) -> str:
    """A register of the kernel's fixed set that fits type ``t``."""
    if t == "pred":
        return f"%p{i}"
    if t in _16:
        return f"%h{i}"
    if t in _32:
        return f"%r{i}"
    if t in _64:
        return f"%rd{i}"
    if t == "f32":
        return f"%f{i}"
    if t == "f64":
        return f"%fd{i}"
    raise ValueError(t)


def ops(t: str, n: int, first: int = 1) -> str:
    return ", ".join(reg(t, first + k) for k in range(n))


def q(*parts: str) -> str:
    """Join qualifiers, dropping empty ones: q("add", "", "sat", "s32") == "add.sat.s32"."""
    return ".".join(p for p in parts if p)


INT = ["u16", "u32", "u64", "s16", "s32", "s64"]
FRND = ["", "rn", "rz", "rm", "rp"]
IRND = ["rni", "rzi", "rmi", "rpi"]


def integer():
    for op in ("add", "sub"):
        for t in INT + ["u16x2", "s16x2", "b32", "u8"]:
            yield f"{op}.{t} {ops(t, 3)};"
        for t in ("s32", "u32", "s64", "s16", "s16x2"):
            yield f"{op}.sat.{t} {ops(t, 3)};"
        for t in ("u32", "s32", "u64", "s64", "u16"):
            yield f"{op}.cc.{t} {ops(t, 3)};"
        yield f"{op}.cc.sat.s32 {ops('s32', 3)};"
        yield f"{op}.s32 %r1, %r2, 7;"
        yield f"{op}.s32 %r1, %rd2, %r3;"
        yield f"{op}.u64 %rd1, %rd2, %r3;"
    for op in ("addc", "subc"):
        for cc in ("", "cc"):
            for t in ("u32", "s32", "u64", "s64", "u16"):
                yield f"{q(op, cc, t)} {ops(t, 3)};"
        yield f"{op}.cc.sat.u32 {ops('u32', 3)};"
    for mode in ("lo", "hi", "wide", ""):
        for t in INT:
            wide = mode == "wide"
            d = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}.get(t, t) if wide else t
            yield f"{q('mul', mode, t)} {reg(d, 1)}, {ops(t, 2, 2)};"
            yield f"{q('mad', mode, t)} {reg(d, 1)}, {ops(t, 2, 2)}, {reg(d, 4)};"
    yield "mul.lo.u16x2 %r1, %r2, %r3;"
    yield "mul.lo.sat.s32 %r1, %r2, %r3;"
    yield "mul.wide.u64 %rd1, %rd2, %rd3;"
    yield "mul.wide.u32 %r1, %r2, %r3;"
    for mode in ("lo", "hi"):
        for t in ("s32", "u32", "s64"):
            yield f"mad.{mode}.sat.{t} {ops(t, 4)};"
    yield "mad.wide.sat.s32 %rd1, %r2, %r3, %rd4;"
    for mode in ("lo", "hi"):
        for t in ("u32", "s32", "u64", "s64"):
            yield f"mad.{mode}.cc.{t} {ops(t, 4)};"
            yield f"madc.{mode}.{t} {ops(t, 4)};"
            yield f"madc.{mode}.cc.{t} {ops(t, 4)};"
    yield "mad.wide.cc.u32 %rd1, %r2, %r3, %rd4;"
    yield "madc.cc.u32 %r1, %r2, %r3, %r4;"
    yield "madc.lo.cc.u16 %h1, %h2, %h3, %h4;"
    for op in ("mul24", "mad24"):
        n = 3 if op == "mul24" else 4
        for mode in ("lo", "hi", ""):
            for t in ("u32", "s32", "u64", "s16"):
                yield f"{q(op, mode, t)} {ops(t, n)};"
    yield "mad24.hi.sat.s32 %r1, %r2, %r3, %r4;"
    yield "mad24.lo.sat.s32 %r1, %r2, %r3, %r4;"
    yield "mad24.hi.sat.u32 %r1, %r2, %r3, %r4;"
    yield "mul24.hi.sat.s32 %r1, %r2, %r3;"
    for t in INT + ["b32", "u8"]:
        yield f"sad.{t} {ops(t, 4)};"
    for op in ("div", "rem"):
        for t in INT + ["b32", "u16x2"]:
            yield f"{op}.{t} {ops(t, 3)};"
        yield f"{op}.sat.s32 %r1, %r2, %r3;"
        yield f"{op}.s32 %r1, %r2, 3;"
    for op in ("abs", "neg"):
        for t in ("s16", "s32", "s64", "u32", "b32", "s16x2"):
            yield f"{op}.{t} {ops(t, 2)};"
        yield f"{op}.sat.s32 %r1, %r2;"
    for op in ("min", "max"):
        for t in INT + ["u16x2", "s16x2", "b32", "u8"]:
            yield f"{op}.{t} {ops(t, 3)};"
        for t in ("s32", "s16x2", "u32", "s64", "u16x2", "s16"):
            yield f"{op}.relu.{t} {ops(t, 3)};"
        yield f"{op}.s32 %r1, %r2, %r3, %r4;"
    for op in ("popc", "clz"):
        for t in ("b32", "b64", "u32", "b16"):
            yield f"{op}.{t} %r1, {reg(t, 2)};"
        yield f"{op}.b64 %rd1, %rd2;"
    for sh in ("", "shiftamt"):
        for t in ("u32", "u64", "s32", "s64", "b32", "u16"):
            yield f"{q('bfind', sh, t)} %r1, {reg(t, 2)};"
    yield "bfind.u64 %rd1, %rd2;"
    yield "fns.b32 %r1, %r2, %r3, 5;"
    yield "fns.b32 %r1, %r2, %r3, %r4;"
    yield "fns.u32 %r1, %r2, %r3, %r4;"
    yield "fns.b64 %rd1, %rd2, %r3, %r4;"
    for t in ("b32", "b64", "b16", "u32"):
        yield f"brev.{t} {ops(t, 2)};"
    for t in ("u32", "u64", "s32", "s64", "b32", "u16"):
        yield f"bfe.{t} {ops(t, 2)}, %r3, %r4;"
    yield "bfe.u32 %r1, %r2, 8, 4;"
    yield "bfe.u64 %rd1, %rd2, %rd3, %r4;"
    for t in ("b32", "b64", "u32", "b16"):
        yield f"bfi.{t} {ops(t, 3)}, %r4, %r5;"
    yield "bfi.b32 %r1, %r2, %r3, 0, 8;"
    for op, types in (("szext", ("u32", "s32", "b32", "u64")), ("bmsk", ("b32", "u32", "b64"))):
        for mode in ("clamp", "wrap", ""):
            for t in types:
                yield f"{q(op, mode, t)} {ops(t, 3)};"
        yield f"{op}.clamp.wrap.{types[0]} %r1, %r2, %r3;"
    for a in ("u32", "s32", "b32"):
        for b in ("u32", "s32", "u16"):
            yield f"dp4a.{a}.{b} %r1, %r2, %r3, %r4;"
            for mode in ("lo", "hi"):
                yield f"dp2a.{mode}.{a}.{b} %r1, %r2, %r3, %r4;"
    yield "dp4a.u32 %r1, %r2, %r3, %r4;"
    yield "dp2a.u32.u32 %r1, %r2, %r3, %r4;"
    yield "dp4a.lo.u32.u32 %r1, %r2, %r3, %r4;"
    yield "dp4a.u32.u32 %rd1, %r2, %r3, %r4;"


def float_ops():
    # add / sub / mul: f32 rounding x .ftz x .sat, f64 rounding (no .ftz/.sat)
    pairs = [("", ""), ("ftz", ""), ("", "sat"), ("ftz", "sat")]
    for op in ("add", "sub", "mul"):
        for i, rnd in enumerate(FRND + ["rni", "rna"]):
            ftz, sat = pairs[i % 4]
            yield f"{q(op, rnd, ftz, sat, 'f32')} {ops('f32', 3)};"
            yield f"{q(op, rnd, 'f64')} {ops('f64', 3)};"
        yield f"{op}.rn.ftz.f64 {ops('f64', 3)};"
        yield f"{op}.sat.f64 {ops('f64', 3)};"
        yield f"{op}.sat.ftz.f32 {ops('f32', 3)};"
        yield f"{op}.rn.rz.f32 {ops('f32', 3)};"
        yield f"{op}.f32 %f1, %f2, 0f3F800000;"
        yield f"{op}.f32 %f1, %r2, %f3;"
        yield f"{op}.f64 %fd1, %fd2, %f3;"
        yield f"{op}.approx.f32 {ops('f32', 3)};"
    # fma / mad
    for op in ("fma", "mad"):
        for i, rnd in enumerate(FRND):
            for ftz, sat in pairs:
                if (ftz, sat) != pairs[i % 4] and (ftz, sat) != ("", ""):
                    continue
                yield f"{q(op, rnd, ftz, sat, 'f32')} {ops('f32', 4)};"
            yield f"{q(op, rnd, 'f64')} {ops('f64', 4)};"
        yield f"{op}.rn.ftz.f64 {ops('f64', 4)};"
        yield f"{op}.rn.sat.f64 {ops('f64', 4)};"
        yield f"{op}.rni.f32 {ops('f32', 4)};"
    # div
    for mode in ("approx", "full", "rn", "rz", "rm", "rp", ""):
        for ftz in ("", "ftz"):
            yield f"{q('div', mode, ftz, 'f32')} {ops('f32', 3)};"
        yield f"{q('div', mode, 'f64')} {ops('f64', 3)};"
    yield "div.full.sat.f32 %f1, %f2, %f3;"
    yield "div.rn.sat.f32 %f1, %f2, %f3;"
    yield "div.approx.ftz.f64 %fd1, %fd2, %fd3;"
    yield "div.rn.ftz.f64 %fd1, %fd2, %fd3;"
    # rcp / sqrt / rsqrt
    for op in ("rcp", "sqrt"):
        for i, mode in enumerate(("approx", "rn", "rz", "rm", "rp", "")):
            for ftz in ("", "ftz"):
                yield f"{q(op, mode, ftz, 'f32')} {ops('f32', 2)};"
            yield f"{q(op, mode, 'ftz' if i % 2 == 0 else '', 'f64')} {ops('f64', 2)};"
        yield f"{op}.approx.f64 %fd1, %fd2;"
        yield f"{op}.rn.ftz.f64 %fd1, %fd2;"
        yield f"{op}.approx.f16 %h1, %h2;"
        yield f"{op}.rn.sat.f32 %f1, %f2;"
    for mode in ("approx", "rn", ""):
        for ftz in ("", "ftz"):
            for t in ("f32", "f64"):
                yield f"{q('rsqrt', mode, ftz, t)} {ops(t, 2)};"
    yield "rsqrt.approx.f16 %h1, %h2;"
    # sin cos lg2 ex2 tanh
    for i, op in enumerate(("sin", "cos", "lg2", "ex2", "tanh")):
        for mode, ftz in (("approx", ""), ("approx", "ftz"), ("", ""), ("rn", "ftz"), ("full", "")):
            yield f"{q(op, mode, ftz, 'f32')} {ops('f32', 2)};"
        yield f"{op}.approx.f64 %fd1, %fd2;"
        for j, t in enumerate(("f16", "f16x2", "bf16", "bf16x2")):
            yield f"{q(op, 'approx', 'ftz' if (i + j) % 2 else '', t)} {ops(t, 2)};"
        yield f"{op}.approx.sat.f32 %f1, %f2;"
    # min / max f32 f64
    for op in ("min", "max"):
        for ftz in ("", "ftz"):
            for mod in ("", "NaN", "xorsign.abs", "NaN.xorsign.abs", "abs", "xorsign"):
                yield f"{q(op, ftz, mod, 'f32')} {ops('f32', 3)};"
        for mod in ("", "ftz", "NaN", "xorsign.abs", "relu"):
            yield f"{q(op, mod, 'f64')} {ops('f64', 3)};"
        yield f"{op}.relu.f32 {ops('f32', 3)};"
        yield f"{op}.f32 {ops('f32', 4)};"
        yield f"{op}.NaN.f32 {ops('f32', 4)};"
        yield f"{op}.xorsign.abs.f32 {ops('f32', 4)};"
    # abs neg copysign testp
    for op in ("abs", "neg"):
        for mod in ("", "ftz", "sat", "rn"):
            yield f"{q(op, mod, 'f32')} {ops('f32', 2)};"
            yield f"{q(op, mod, 'f64')} {ops('f64', 2)};"
    for t in ("f32", "f64", "f16", "b32", "bf16"):
        yield f"copysign.{t} {ops(t, 3)};"
    yield "copysign.ftz.f32 %f1, %f2, %f3;"
    odd = ["f16", "b32", "u32", "bf16", "f16x2", "f32"]
    for i, cls in enumerate(("finite", "infinite", "number", "notanumber", "normal", "subnormal")):
        for t in ("f32", "f64", odd[i]):
            yield f"testp.{cls}.{t} %p1, {reg(t, 2)};"
    yield "testp.f32 %p1, %f2;"
    yield "testp.finite.ftz.f32 %p1, %f2;"
    yield "testp.nan.f32 %p1, %f2;"
    yield "testp.normal.f32 %r1, %f2;"


HALF = ["f16", "f16x2", "bf16", "bf16x2"]


def half_ops():
    for op in ("add", "sub", "mul"):
        for j, t in enumerate(HALF):
            for k, mods in enumerate(("", "rn", "ftz", "sat", "rn.ftz.sat", "rz", "rm", "relu")):
                if op == "add" or k < 2 or (k + j) % 2:
                    yield f"{q(op, mods, t)} {ops(t, 3)};"
        yield f"{op}.f16 %h1, %h2, %r3;"
        yield f"{op}.f16x2 %h1, %h2, %h3;"
    for t in HALF:
        for mods in ("rn", "", "rn.ftz", "rn.sat", "rn.ftz.sat", "rn.relu", "rn.ftz.relu", "rn.sat.relu",
                     "rn.oob", "rn.oob.relu", "rn.ftz.oob", "rz", "rm.relu"):
            yield f"{q('fma', mods, t)} {ops(t, 4)};"
    yield "mad.rn.f16 %h1, %h2, %h3, %h4;"
    yield "fma.rn.oob.f32 %f1, %f2, %f3, %f4;"
    yield "fma.rn.relu.f32 %f1, %f2, %f3, %f4;"
    for op in ("abs", "neg"):
        for t in HALF:
            for mods in ("", "ftz", "sat"):
                yield f"{q(op, mods, t)} {ops(t, 2)};"
    for op in ("min", "max"):
        for j, t in enumerate(HALF):
            for k, mods in enumerate(("", "ftz", "NaN", "xorsign.abs", "ftz.NaN", "ftz.xorsign.abs", "NaN.xorsign.abs",
                                      "ftz.NaN.xorsign.abs", "relu", "sat")):
                if op == "min" or (k + j) % 2:
                    yield f"{q(op, mods, t)} {ops(t, 3)};"
    for op in ("div", "rcp", "sqrt"):
        for t in HALF:
            n = 3 if op == "div" else 2
            yield f"{op}.rn.{t} {ops(t, n)};"


CMP_INT = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]
CMP_FLT = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def compare():
    # setp: every cmp op over a rotation of types, bool ops and .ftz
    int_types = ["u16", "u32", "u64", "s16", "s32", "s64"]
    for cmp, t in zip(CMP_INT, cycle(int_types)):
        yield f"setp.{cmp}.{t} %p1, {ops(t, 2, 2)};"
        s = "s32" if t.startswith("u") else "u32"
        yield f"setp.{cmp}.{s} %p1|%p2, {ops(s, 2, 2)};"
    for cmp in CMP_INT:
        for t in ("b16", "b32", "b64"):
            yield f"setp.{cmp}.{t} %p1, {ops(t, 2, 2)};"
    for cmp in CMP_FLT:
        yield f"setp.{cmp}.s32 %p1, %r2, %r3;" if cmp not in CMP_INT else f"setp.{cmp}.ftz.s32 %p1, %r2, %r3;"
    fl = ["f32", "f64", "f16", "f16x2", "bf16", "bf16x2"]
    for i, cmp in enumerate(CMP_FLT):
        for t in fl:
            ftz = "ftz" if (i + fl.index(t)) % 3 == 0 and t in ("f32", "f16", "f16x2", "f64") else ""
            d = "%p1|%p2" if t.endswith("x2") else "%p1"
            yield f"{q('setp', cmp, ftz, t)} {d}, {ops(t, 2, 2)};"
    for cmp in CMP_INT[6:]:
        yield f"setp.{cmp}.f32 %p1, %f2, %f3;"
    for bop, t, neg in zip(("and", "or", "xor", "and", "or", "xor", "nand", "andn"),
                           ("s32", "f32", "u64", "f64", "f16", "b32", "s32", "u32"),
                           ("", "!", "", "!", "", "", "", "")):
        cmp = "lt" if t[0] != "b" else "ne"
        yield f"setp.{cmp}.{bop}.{t} %p1, {ops(t, 2, 2)}, {neg}%p3;"
        yield f"setp.{cmp}.{bop}.{t} %p1|%p2, {ops(t, 2, 2)}, %p3;"
    yield "setp.lt.and.ftz.f32 %p1, %f2, %f3, %p3;"
    yield "setp.lt.ftz.and.f32 %p1, %f2, %f3, %p3;"
    yield "setp.lt.and.s32 %p1, %r2, %r3;"
    yield "setp.lt.f16x2 %p1, %r2, %r3;"
    yield "setp.lt.s32 %r1, %r2, %r3;"
    yield "setp.s32 %p1, %r2, %r3;"
    yield "setp.lt.pred %p1, %p2, %p3;"
    yield "setp.eq.pred %p1, %p2, %p3;"
    yield "setp.lt.s32 %p1, %r2, 5;"
    yield "setp.lt.f32 %p1, %f2, 0f00000000;"
    yield "setp.lt.u8 %p1, %h2, %h3;"
    # set: cmp ops x dtype x stype
    dtypes = ["u32", "s32", "f32"]
    stypes = ["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64", "f16", "bf16"]
    for i, st in enumerate(stypes):
        cmps = CMP_FLT if st[0] in "fb" and st not in ("b16", "b32", "b64") else CMP_INT
        for j, cmp in enumerate(cmps[i % 3::3]):
            dt = dtypes[(i + j) % 3]
            ftz = "ftz" if st == "f32" and j % 2 else ""
            yield f"{q('set', cmp, ftz, dt, st)} {reg(dt, 1)}, {ops(st, 2, 2)};"
    for bop in ("and", "or", "xor"):
        yield f"set.lt.{bop}.u32.s32 %r1, %r2, %r3, %p1;"
        yield f"set.gtu.{bop}.ftz.f32.f32 %f1, %f2, %f3, !%p1;"
    for dt, st in (("f16", "f16"), ("bf16", "bf16"), ("u16", "f16"), ("s16", "f16"), ("u32", "f16"),
                   ("f16x2", "f16x2"), ("u32", "f16x2"), ("s32", "f16x2"), ("bf16x2", "bf16x2"),
                   ("u32", "bf16x2"), ("u16", "bf16"), ("f32", "f16"), ("f16", "f32"), ("f16x2", "f32")):
        yield f"set.lt.{dt}.{st} {reg(dt, 1)}, {ops(st, 2, 2)};"
        yield f"set.ne.ftz.{dt}.{st} {reg(dt, 1)}, {ops(st, 2, 2)};"
    yield "set.lt.and.f16.f16 %h1, %h2, %h3, %p1;"
    yield "set.lt.b32.s32 %r1, %r2, %r3;"
    yield "set.lt.u64.s32 %rd1, %r2, %r3;"
    yield "set.lt.s32 %r1, %r2, %r3;"
    yield "set.lt.pred.s32 %p1, %r2, %r3;"
    yield "set.lo.u32.f32 %r1, %f2, %f3;"
    # selp / slct
    for t in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64", "pred", "f16",
              "u8", "bf16", "f16x2"):
        yield f"selp.{t} {ops(t, 3)}, %p4;"
    yield "selp.b32 %r1, %r2, %r3, %r4;"
    yield "selp.b32 %r1, 1, 0, %p1;"
    yield "selp.b32 %r1, %r2, %r3, !%p1;"
    yield "selp.ftz.f32 %f1, %f2, %f3, %p4;"
    for dt in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64", "f16", "pred"):
        for ct, ftz in (("s32", ""), ("f32", ""), ("f32", "ftz"), ("u32", ""), ("f64", "")):
            if ct in ("s32", "f32") or dt in ("u32", "f32"):
                yield f"{q('slct', ftz, dt, ct)} {ops(dt, 3)}, {reg(ct, 4)};"
    yield "slct.ftz.s32.s32 %r1, %r2, %r3, %r4;"
    yield "slct.s32 %r1, %r2, %r3, %r4;"
    yield "slct.s32.s32 %r1, %r2, %r3, 5;"


def logic():
    for op in ("and", "or", "xor"):
        for t in ("pred", "b16", "b32", "b64", "u32", "s32", "b8", "f32"):
            yield f"{op}.{t} {ops(t, 3)};"
        yield f"{op}.b32 %r1, %r2, 0xff;"
        yield f"{op}.pred %p1, !%p2, %p3;"
        yield f"{op}.b32 %r1, %rd2, %r3;"
    for op in ("not", "cnot"):
        for t in ("pred", "b16", "b32", "b64", "u32", "s64", "f32"):
            yield f"{op}.{t} {ops(t, 2)};"
    for lut in ("0x96", "0", "255", "0xff", "256", "-1"):
        yield f"lop3.b32 %r1, %r2, %r3, %r4, {lut};"
    yield "lop3.b32 %r1, %r2, %r3, %r4, %r5;"
    yield "lop3.b64 %rd1, %rd2, %rd3, %rd4, 0x96;"
    yield "lop3.b16 %h1, %h2, %h3, %h4, 0x96;"
    for bop in ("and", "or", "xor"):
        yield f"lop3.{bop}.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;"
        yield f"lop3.{bop}.b32 %r1|%p1, %r2, %r3, %r4, 0x80, !%p2;"
    yield "lop3.or.b32 %r1, %r2, %r3, %r4, 0x80, %p2;"
    yield "lop3.b32 %r1|%p1, %r2, %r3, %r4, 0x80;"
    yield "lop3.nand.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;"
    for d in ("l", "r", ""):
        for mode in ("wrap", "clamp", ""):
            for t in ("b32", "u32", "b64"):
                yield f"{q('shf', d, mode, t)} {ops(t, 3)}, %r4;"
    yield "shf.l.wrap.b32 %r1, %r2, %r3, 7;"
    yield "shf.r.clamp.b32 %r1, %r2, %r3, %rd4;"
    for op in ("shl", "shr"):
        for t in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "pred"):
            yield f"{op}.{t} {ops(t, 2)}, %r3;"
        yield f"{op}.b64 %rd1, %rd2, %rd3;"
        yield f"{op}.b32 %r1, %r2, %h3;"
        yield f"{op}.b32 %r1, %r2, 31;"
        yield f"{op}.b16 %h1, %h2, %h3;"
    for mode in ("", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16", "bad"):
        yield f"{q('prmt', 'b32', mode)} %r1, %r2, %r3, %r4;"
    yield "prmt.b32 %r1, %r2, %r3, 0x3210;"
    yield "prmt.b32.f4e %r1, %r2, %r3, 1;"
    yield "prmt.b64 %rd1, %rd2, %rd3, %r4;"
    yield "prmt.u32 %r1, %r2, %r3, %r4;"
    yield "prmt.f4e.b32 %r1, %r2, %r3, %r4;"


CVT = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f32", "f64", "bf16"]


def _is_f(t):
    return t in ("f16", "f32", "f64", "bf16")


def _w(t):
    return {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "u32": 32, "s32": 32, "f32": 32,
            "u64": 64, "s64": 64, "f64": 64}[t]


def cvt():
    rot = cycle(range(4))
    for d in CVT:
        for s in CVT:
            k = next(rot)
            if _is_f(d) and _is_f(s):
                good = "" if _w(d) > _w(s) or d == s else FRND[1 + k]
                if d == s:
                    good = IRND[k] if k % 2 else ""
                bad = IRND[k] if _w(d) > _w(s) else ("" if d != s else FRND[1 + k])
                if d == s and bad == "":
                    bad = "rna"
            elif _is_f(d):
                good, bad = FRND[1 + k], IRND[k] if k % 2 else ""
            elif _is_f(s):
                good, bad = IRND[k], FRND[1 + k] if k % 2 else ""
            else:
                good, bad = "", ["rn", "rzi"][k % 2]
            yield f"{q('cvt', good, d, s)} {reg(d, 1)}, {reg(s, 2)};"
            yield f"{q('cvt', bad, d, s)} {reg(d, 1)}, {reg(s, 2)};"
            if k == 0 or (_is_f(s) and d == "f32"):
                yield f"{q('cvt', good, 'sat', d, s)} {reg(d, 1)}, {reg(s, 2)};"
            if "f32" in (d, s) and k == 1:
                yield f"{q('cvt', good, 'ftz', 'sat', d, s)} {reg(d, 1)}, {reg(s, 2)};"
            elif "f32" in (d, s) and k == 2 or k == 3 and _is_f(d) != _is_f(s):
                yield f"{q('cvt', good, 'ftz', d, s)} {reg(d, 1)}, {reg(s, 2)};"
    # register widths other than the type's
    yield "cvt.u8.u32 %r1, %r2;"
    yield "cvt.u32.u8 %r1, %r2;"
    yield "cvt.u16.u32 %r1, %r2;"
    yield "cvt.u32.u16 %r1, %r2;"
    yield "cvt.u32.u64 %r1, %r2;"
    yield "cvt.u64.u32 %rd1, %rd2;"
    yield "cvt.rn.f32.s32 %f1, %f2;"
    yield "cvt.rn.f16.f32 %r1, %f2;"
    yield "cvt.f32.f16 %f1, %r2;"
    yield "cvt.s32.s32 %r1, %r2;"
    yield "cvt.b32.s32 %r1, %r2;"
    yield "cvt.u32.pred %r1, %p2;"
    yield "cvt.rzi.u32.f32 %r1, 0f3F800000;"
    # .relu / .satfinite / .rna / .rs on the f16/bf16/tf32 forms
    for d in ("f16", "bf16"):
        for mods in ("rn", "rz", "rn.relu", "rz.relu", "rn.satfinite", "rn.relu.satfinite", "rna", "rna.satfinite",
                     "rs", "rn.ftz", "rn.sat"):
            yield f"cvt.{mods}.{d}.f32 %h1, %f2;"
        for mods in ("rn", "rz", "rn.relu", "rz.satfinite", "rn.relu.satfinite", "rm", "rs", "rna", "", "rn.sat"):
            yield f"{q('cvt', mods, d + 'x2', 'f32')} %r1, %f2, %f3;"
        yield f"cvt.rs.{d}x2.f32 %r1, %f2, %f3, %r4;"
        yield f"cvt.rs.relu.satfinite.{d}x2.f32 %r1, %f2, %f3, %r4;"
        yield f"cvt.rn.{d}x2.f32 %r1, %f2;"
        yield f"cvt.rn.{d}x2.f64 %r1, %fd2, %fd3;"
        yield f"cvt.rn.relu.{d}.f64 %h1, %fd2;"
    yield "cvt.rn.f16.bf16 %h1, %h2;"
    yield "cvt.rn.bf16.f16 %h1, %h2;"
    yield "cvt.f32.bf16 %f1, %h2;"
    yield "cvt.rn.relu.f16.f16 %h1, %h2;"
    yield "cvt.rni.bf16.bf16 %h1, %h2;"
    yield "cvt.rn.f32.bf16 %f1, %h2;"
    for mods in ("rna", "rna.satfinite", "rn", "rz", "rn.satfinite", "rz.satfinite", "rn.relu.satfinite", "", "rm",
                 "rna.relu"):
        yield f"{q('cvt', mods, 'tf32', 'f32')} %r1, %f2;"
    yield "cvt.rna.tf32.f32 %f1, %f2;"
    yield "cvt.rna.tf32.f64 %r1, %fd2;"
    yield "cvt.rn.f32.tf32 %f1, %r2;"
    # FP8 pairs
    for d in ("e4m3x2", "e5m2x2"):
        for mods in ("rn.satfinite", "rn.satfinite.relu", "rn", "rz.satfinite", "satfinite", "rn.relu"):
            yield f"{q('cvt', mods, d, 'f32')} %h1, %f2, %f3;"
            yield f"{q('cvt', mods, d, 'f16x2')} %h1, %r2;"
        yield f"cvt.rn.satfinite.{d}.bf16x2 %h1, %r2;"
        yield f"cvt.rn.satfinite.{d}.f32 %h1, %f2;"
        yield f"cvt.rn.satfinite.{d}.f32 %r1, %f2, %f3;"
        for mods in ("rn", "rn.relu", "", "rz"):
            yield f"{q('cvt', mods, 'f16x2', d)} %r1, %h2;"
        yield f"cvt.rn.bf16x2.{d} %r1, %h2;"
        yield f"cvt.rn.f32.{d} %f1, %h2;"
    yield "cvt.rn.satfinite.e4m3x2.e5m2x2 %h1, %h2;"
    yield "cvt.rn.satfinite.e2m1x2.f32 %h1, %f2, %f3;"
    yield "cvt.rn.satfinite.e3m2x2.f32 %h1, %f2, %f3;"
    yield "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f2, %f3;"
    # frnd2 (f32 pair -> f16x2 via .f16x2/.bf16x2 as destination only)
    yield "cvt.rn.f16x2.f16x2 %r1, %r2;"
    # cvt.pack
    for d, s in (("u16", "s32"), ("s16", "s32"), ("u16", "u32"), ("u8", "s32"), ("s8", "s32"), ("u4", "s32"),
                 ("s4", "s32"), ("u2", "s32"), ("u8", "u32")):
        yield f"cvt.pack.sat.{d}.{s} %r1, %r2, %r3;"
        yield f"cvt.pack.sat.{d}.{s}.b32 %r1, %r2, %r3, %r4;"
    yield "cvt.pack.u16.s32 %r1, %r2, %r3;"
    yield "cvt.pack.sat.u16.s32 %rd1, %r2, %r3;"
    yield "cvt.pack.sat.u8.s32.u32 %r1, %r2, %r3, %r4;"
    yield "cvt.pack.rn.sat.u16.s32 %r1, %r2, %r3;"


def video():
    sels = ["", "b0", "b1", "b2", "b3", "h0", "h1"]
    scalar = ("vadd", "vsub", "vabsdiff", "vmin", "vmax")
    types = [("u32", "u32", "u32"), ("s32", "s32", "s32"), ("u32", "s32", "u32"), ("s32", "u32", "s32")]
    for i, op in enumerate(scalar):
        for j, (dt, at, bt) in enumerate(types):
            sa, sb = sels[(i + j) % 7], sels[(i + 2 * j + 3) % 7]
            a = "%r2" + (f".{sa}" if sa else "")
            b = "%r3" + (f".{sb}" if sb else "")
            sat = "sat" if j % 2 else ""
            yield f"{q(op, dt, at, bt, sat)} %r1, {a}, {b};"
            op2 = ["add", "min", "max"][(i + j) % 3]
            yield f"{q(op, dt, at, bt, sat, op2)} %r1, {a}, {b}, %r4;"
            dsel = ["b0", "b1", "b2", "b3", "h0", "h1"][(i + j) % 6]
            if j < 2:
                yield f"{q(op, dt, at, bt, sat)} %r1.{dsel}, {a}, {b}, %r4;"
        yield f"{op}.s32.s32.s32.sub %r1, %r2, %r3, %r4;"
        yield f"{op}.u16.u32.u32 %r1, %r2, %r3;"
        yield f"{op}.u32.u32 %r1, %r2, %r3;"
        yield f"{op}.u32.u32.u32 %r1, %r2.b4, %r3;"
        yield f"{op}.u32.u32.u32 %r1, %r2, %r3, %r4;"
    for i, op in enumerate(("vshl", "vshr")):
        for j, (dt, at, bt) in enumerate(types + [("u32", "u32", "s32")]):
            mode = ["clamp", "wrap", ""][(i + j) % 3]
            sat = "sat" if j % 2 else ""
            yield f"{q(op, dt, at, bt, sat, mode)} %r1, %r2, %r3;"
            yield f"{q(op, dt, at, bt, sat, mode, 'add')} %r1, %r2.b1, %r3, %r4;"
            yield f"{q(op, dt, at, bt, mode)} %r1.h1, %r2, %r3.b0, %r4;"
    for j, (dt, at, bt) in enumerate(types):
        for sat, scale in (("", ""), ("sat", ""), ("", "shr7"), ("sat", "shr15"), ("", "shr8")):
            neg = ["", "-"][(j + len(scale)) % 2]
            yield f"{q('vmad', dt, at, bt, sat, scale)} %r1, {neg}%r2.h{j % 2}, %r3, {neg}%r4;"
        yield f"vmad.{dt}.{at}.{bt} %r1, %r2, -%r3, %r4;"
    yield "vmad.u32.u32.u32.add %r1, %r2, %r3, %r4;"
    yield "vmad.u32.u32.u32 %r1, %r2, %r3;"
    for i, cmp in enumerate(("eq", "ne", "lt", "le", "gt", "ge", "lo", "hi")):
        at, bt = ["u32", "s32"][i % 2], ["s32", "u32", "u32", "s32"][i % 4]
        sa = sels[i % 7]
        a = "%r2" + (f".{sa}" if sa else "")
        yield f"vset.{at}.{bt}.{cmp} %r1, {a}, %r3;"
        yield f"vset.{at}.{bt}.{cmp}.{['add', 'min', 'max'][i % 3]} %r1, %r2, %r3, %r4;"
        yield f"vset.{at}.{bt}.{cmp} %r1.b{i % 4}, %r2, %r3, %r4;"
    yield "vset.u32.u32.u32.lt %r1, %r2, %r3;"
    yield "vset.u32.u32 %r1, %r2, %r3;"
    # SIMD 2-/4-way
    m2 = ["", "h0", "h1", "h10", "h01", "h00", "h11"]
    m4 = ["", "b0", "b3210", "b7654", "b0000", "b1111", "b4567"]
    for n, masks in ((2, m2), (4, m4)):
        for i, op in enumerate(("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax")):
            for j, (dt, at, bt) in enumerate(types):
                sat = "sat" if (i + j) % 2 else ""
                add = "add" if (i + j) % 3 == 0 else ""
                ma, mb = masks[(i + j) % 7], masks[(i + 2 * j + 1) % 7]
                a = "%r2" + (f".{ma}" if ma else "")
                b = "%r3" + (f".{mb}" if mb else "")
                d = "%r1" + (f".{masks[(j + 2) % 7]}" if j == 1 and masks[(j + 2) % 7] else "")
                yield f"{q(op + str(n), dt, at, bt, sat, add)} {d}, {a}, {b}, %r4;"
            yield f"{op}{n}.u32.u32.u32 %r1, %r2, %r3;"
            yield f"{op}{n}.u32.u32.u32.min %r1, %r2, %r3, %r4;"
        for i, cmp in enumerate(("eq", "ne", "lt", "le", "gt", "ge", "lo")):
            at, bt = ["u32", "s32"][i % 2], ["s32", "u32", "u32", "s32"][i % 4]
            add = "add" if i % 2 else ""
            yield f"{q('vset' + str(n), at, bt, cmp, add)} %r1, %r2.{masks[1 + i % 6]}, %r3, %r4;"
        yield f"vset{n}.u32.u32.lt.sat %r1, %r2, %r3, %r4;"
        yield f"vshl{n}.u32.u32.u32 %r1, %r2, %r3, %r4;"
        yield f"vmad{n}.u32.u32.u32 %r1, %r2, %r3, %r4;"
    yield "vadd2.u32.u32.u32 %r1, %r2.b0, %r3, %r4;"
    yield "vadd4.u32.u32.u32 %r1, %r2.h10, %r3, %r4;"
    yield "vadd8.u32.u32.u32 %r1, %r2, %r3, %r4;"


def warp():
    membs = ["0xffffffff", "%r4", "1", "0"]
    for i, mode in enumerate(("idx", "up", "down", "bfly")):
        for j, (sync, pred) in enumerate((("sync", ""), ("sync", "|%p1"), ("", ""), ("", "|%p1"))):
            b, c = ["%r3", "1", "31", "%r5"][(i + j) % 4], ["0x1f", "%r6", "0", "0x1c1f"][(i + 2 * j) % 4]
            m = f", {membs[(i + j) % 4]}" if sync else ""
            yield f"{q('shfl', sync, mode, 'b32')} %r1{pred}, %r2, {b}, {c}{m};"
        yield f"shfl.sync.{mode}.b64 %rd1, %rd2, 1, 0x1f, 0xffffffff;"
        yield f"shfl.sync.{mode}.f32 %f1, %f2, 1, 0x1f, 0xffffffff;"
        yield f"shfl.sync.{mode}.b32 %r1, %r2, 1, 0x1f;"
    yield "shfl.sync.b32 %r1, %r2, 1, 0x1f, 0xffffffff;"
    yield "shfl.sync.idx.b32 %r1, %f2, 1, 0x1f, 0xffffffff;"
    yield "shfl.sync.idx.b32 %r1, %r2, 1, 0x1f, 0xffffffff, 0;"
    for i, mode in enumerate(("all", "any", "uni")):
        for sync, neg in (("sync", ""), ("sync", "!"), ("", ""), ("", "!")):
            m = f", {membs[i]}" if sync else ""
            yield f"{q('vote', sync, mode, 'pred')} %p1, {neg}%p2{m};"
        yield f"vote.sync.{mode}.b32 %r1, %p2, 0xffffffff;"
    yield "vote.sync.ballot.b32 %r1, %p2, %r3;"
    yield "vote.sync.ballot.b32 %r1, !%p2, 0xffffffff;"
    yield "vote.ballot.b32 %r1, %p2;"
    yield "vote.sync.ballot.pred %p1, %p2, 0xffffffff;"
    yield "vote.sync.ballot.b64 %rd1, %p2, 0xffffffff;"
    yield "vote.sync.any.pred %p1, %p2;"
    yield "vote.sync.all.pred %p1, %r2, 0xffffffff;"
    for mode in ("any", "all"):
        for t in ("b32", "b64", "u32", "s64", "f32", "b16"):
            yield f"match.{mode}.sync.{t} %r1, {reg(t, 2)}, 0xffffffff;"
        yield f"match.{mode}.sync.b32 %r1|%p1, %r2, %r3;"
        yield f"match.{mode}.b32 %r1, %r2;"
        yield f"match.sync.{mode}.b32 %r1, %r2, 0xffffffff;"
    yield "match.any.sync.b32 %r1, %r2, 0xffffffff, %p1;"
    yield "match.any.sync.b64 %rd1, %rd2, 0xffffffff;"
    yield "match.any.sync.b32 %r1, 5, 0xffffffff;"
    for op, types in (("add", ("u32", "s32", "b32", "u64", "f32")), ("min", ("u32", "s32", "f32", "b32")),
                      ("max", ("u32", "s32", "f32", "s64")), ("and", ("b32", "u32", "b64")), ("or", ("b32", "s32")),
                      ("xor", ("b32", "pred"))):
        for t in types:
            yield f"redux.sync.{op}.{t} {reg(t, 1)}, {reg(t, 2)}, 0xffffffff;"
    yield "redux.sync.min.abs.f32 %f1, %f2, 0xffffffff;"
    yield "redux.sync.max.NaN.f32 %f1, %f2, 0xffffffff;"
    yield "redux.sync.add.u32 %r1, %r2;"
    yield "redux.add.u32 %r1, %r2, 0xffffffff;"
    yield "redux.sync.mul.u32 %r1, %r2, 0xffffffff;"
    yield "redux.sync.add.u32 %r1, 7, %r3;"
    for t in ("b32", "b64", "u32"):
        yield f"activemask.{t} {reg(t, 1)};"
    yield "activemask %r1;"
    yield "activemask.b32 %r1, %r2;"


def corners():
    """Lines that pin down the rules found while measuring: .sat between integer types, .ftz and .relu on cvt,
    register classes of the packed cvt operands, set's destination types, bf16 fma rounding, tf32 modifiers."""
    for d in CVT[:8]:
        for s in CVT[:8]:
            yield f"cvt.sat.{d}.{s} {reg(d, 1)}, {reg(s, 2)};"
    for d, s in (("f32", "bf16"), ("bf16", "f32"), ("f16", "f32"), ("f32", "f16"), ("f64", "f16"), ("f16", "s32"),
                 ("s32", "f16"), ("f64", "f32"), ("u32", "f64")):
        r = "" if _w(d) > _w(s) and _is_f(s) else ("rn" if _is_f(d) else "rzi")
        yield f"{q('cvt', r, 'ftz', d, s)} {reg(d, 1)}, {reg(s, 2)};"
    for r in FRND + IRND + ["rna"]:
        yield f"{q('cvt', r, 'f16', 'bf16')} %h1, %h2;"
        yield f"{q('cvt', r, 'f32', 'bf16')} %f1, %h2;"
    yield "cvt.rn.ftz.relu.bf16.f32 %h1, %f2;"
    yield "cvt.rn.relu.f16.f16 %h1, %h2;"
    yield "cvt.rn.relu.bf16.f32 %h1, %f2;"
    for dst in ("%r1", "%f1", "%rd1"):
        yield f"cvt.rn.bf16.f32 {dst}, %f2;"
        yield f"cvt.rn.f16.f32 {dst}, %f2;"
        yield f"cvt.rn.f16x2.f32 {dst}, %f2, %f3;"
        yield f"cvt.rna.tf32.f32 {dst}, %f2;"
        yield f"cvt.rn.satfinite.e4m3x2.f32 {dst}, %f2, %f3;"
    yield "cvt.rn.satfinite.e4m3x2.f16x2 %h1, %f2;"
    yield "cvt.rn.f16x2.e4m3x2 %f1, %h2;"
    yield "cvt.rn.f16x2.e4m3x2 %r1, %r2;"
    yield "cvt.rna.tf32.f32 %r1, %r2;"
    for mods in ("rn.relu", "rz.relu", "rna.relu", "rna.satfinite.relu", "rz.relu.satfinite"):
        yield f"cvt.{mods}.tf32.f32 %r1, %f2;"
    for s, regs in (("f32", "%f2, %f3"), ("s32", "%r2, %r3"), ("f64", "%fd2, %fd3"), ("f16", "%h2, %h3"),
                    ("bf16x2", "%r2, %r3")):
        for d in ("f16", "bf16", "u16", "f16x2", "u32", "f32"):
            yield f"set.eq.{d}.{s} {reg(d, 1)}, {regs};"
    for r in FRND:
        yield f"{q('fma', r, 'sat', 'bf16')} %h1, %h2, %h3, %h4;"
        yield f"{q('fma', r, 'bf16x2')} %r1, %r2, %r3, %r4;"
    yield "fma.rz.oob.bf16 %h1, %h2, %h3, %h4;"
    for t in ("f16", "bf16", "f32"):
        yield f"setp.lt.{t} %p1|%p2, {ops(t, 2, 2)};"
    yield "setp.lt.and.f16x2 %p1, %r2, %r3, %p3;"
    for t in ("b16", "b32", "b64"):
        yield f"mul.lo.{t} {ops(t, 3)};"
        yield f"mad.lo.{t} {ops(t, 4)};"
    yield "sqrt.rn.ftz.f64 %fd1, %fd2;"
    yield "sqrt.approx.ftz.f64 %fd1, %fd2;"
    yield "testp.finite.ftz.f64 %p1, %fd2;"
    yield "rsqrt.approx.ftz.f64 %fd1, %fd2;"
    yield "min.NaN.f64 %fd1, %fd2, %fd3;"
    yield "setp.lt.ftz.bf16 %p1, %h2, %h3;"
    for d, s in (("f32", "u32"), ("f32", "s64"), ("f64", "u16"), ("f64", "s32")):
        yield f"cvt.rz.sat.{d}.{s} {reg(d, 1)}, {reg(s, 2)};"
    yield "cvt.rn.f32.u8 %f1, %r2;"
    yield "cvt.rn.f64.u16 %fd1, %r2;"
    for r in IRND:
        yield f"cvt.{r}.ftz.sat.f32.f32 %f1, %f2;"
    yield "cvt.sat.f64.f64 %fd1, %fd2;"
    for d in ("f16x2", "bf16x2"):
        yield f"cvt.rn.ftz.{d}.f32 %r1, %f2, %f3;"
        yield f"cvt.rz.satfinite.{d}.f32 %r1, %f2, %f3;"
    yield "cvt.rna.ftz.tf32.f32 %r1, %f2;"
    yield "cvt.rn.ftz.satfinite.e4m3x2.f32 %h1, %f2, %f3;"
    yield "cvt.rn.ftz.satfinite.e5m2x2.f16x2 %h1, %r2;"
    yield "cvt.rn.satfinite.f16.f32 %h1, %f2;"
    yield "cvt.rn.satfinite.f32.f64 %f1, %fd2;"
    yield from ("add.f16 %h1, %h2, 0x3C00;", "add.f16 %h1, %h2, 0f3F800000;", "add.f16x2 %r1, %r2, 0x3C003C00;",
                "fma.rn.bf16 %h1, %h2, %h3, 0f3F800000;", "setp.lt.f16 %p1, %h2, 0f3F800000;",
                "cvt.f32.f16 %f1, 0f3F800000;", "cvt.rn.f16.f32 %h1, 0f3F800000;", "testp.finite.f32 %p1, 0f3F800000;",
                 "testp.normal.f64 %p1, 0d0000000000000001;", "add.f32 %f1, %f2, 1;", "add.u32 %r1, %r2, 1.5;")
    yield from ("vadd.u32.u32.u32 %rd1, %r2, %r3;", "vadd.u32.u32.u32 %r1, %f2, %r3;", "vadd.u32.u32.u32 %r1, %h2, %r3;",
                "vadd.u32.u32.u32 %r1.h0, %r2.b1, %rd3;", "vmad.u32.u32.u32 %r1, -%rd2, %r3, %r4;",
                "vmad.u32.u32.u32 %r1, %r2, %r3, %rd4;", "vadd4.u32.u32.u32 %r1, %r2, %r3, %rd4;",
                "vset2.u32.u32.lt %r1, %r2, %r3, %h4;", "vshl.u32.u32.u32.clamp %r1, %r2, %rd3;",
                "vadd.u32.u32.u32 %r1, %r2.b1, %r3.h1;", "vadd.u32.u32.u32.add.min %r1, %r2, %r3, %r4;",
                "vset.u32.u32.lt.max.add %r1, %r2, %r3, %r4;", "vadd4.u32.u32.u32.add.max %r1, %r2, %r3, %r4;")
    yield from ("mul.lo.wide.s32 %rd1, %r2, %r3;", "mul.hi.lo.s32 %r1, %r2, %r3;", "div.approx.full.f32 %f1, %f2, %f3;",
                "div.full.rn.f32 %f1, %f2, %f3;", "div.approx.rn.f32 %f1, %f2, %f3;", "abs.ftz.ftz.f32 %f1, %f2;",
                "match.any.all.sync.b32 %r1, %r2, 0xffffffff;", "redux.sync.add.min.u32 %r1, %r2, 0xffffffff;",
                "shf.l.r.wrap.b32 %r1, %r2, %r3, %r4;", "shf.wrap.l.b32 %r1, %r2, %r3, %r4;",
                "shf.r.clamp.b32 %r1, %r2, %r3, %r4;", "prmt.b32.f4e.b4e %r1, %r2, %r3, %r4;",
                "dp2a.lo.hi.u32.u32 %r1, %r2, %r3, %r4;", "dp2a.u32.u32.lo %r1, %r2, %r3, %r4;",
                "mad24.sat.hi.s32 %r1, %r2, %r3, %r4;", "mad.sat.hi.s32 %r1, %r2, %r3, %r4;",
                "testp.finite.normal.f32 %p1, %f2;", "lop3.and.or.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;",
                "ex2.approx.ftz.ftz.f32 %f1, %f2;", "add.sat.rn.f32 %f1, %f2, %f3;", "fma.ftz.rn.f32 %f1, %f2, %f3, %f4;",
                "setp.ftz.lt.f32 %p1, %f2, %f3;", "cvt.sat.rzi.s32.f32 %r1, %f2;", "vote.all.sync.pred %p1, %p2, 1;")
    yield "cvt.rni.sat.f64.f64 %fd1, %fd2;"


def lines():
    """Every instruction line of the sweep, in a fixed order, without duplicates."""
    seen = set()
    for part in (integer, float_ops, half_ops, compare, logic, cvt, video, warp, corners):
        for ln in part():
            if ln not in seen:
                seen.add(ln)
                yield ln


HEADER = """# Arithmetic qualifier sweep (issue 19), generated by tests/isa_sweep_arith.py (coverage: its docstring):
# integer, extended-precision, float and half arithmetic, comparison and selection, logic and shift, cvt,
# video and warp-level (shfl vote match redux activemask) instructions, qualifiers combined pairwise plus
# deliberately wrong combinations, then corner lines pinning the rules found while measuring.
# Verdicts: ptxas 13.0 -arch=sm_90a at .version 9.0, filled by
# python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_arith.ptx-lines
"""

if __name__ == "__main__":
    OUT.write_text(HEADER + "".join(f"? | {ln}\n" for ln in lines()))
    print(f"{OUT}: {sum(1 for _ in lines())} lines")
