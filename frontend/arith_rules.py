"""The checker's rules for arithmetic-like instructions that ptxas enforces beyond their modifier vocabulary
(issue 19, tests/data/isa_inventory/sweep_arith.ptx-lines): which combinations of rounding, ``.ftz``, ``.sat``,
``.approx``, ``.relu`` and types the integer, float, half, comparison, ``cvt`` and warp-level instructions take.

Each rule was measured against ptxas 13.0 (sm_90a, PTX ISA 9.0); the messages name the cause as ptxas's do.
:func:`modifier_problem` judges an opcode's spelling alone (:func:`xcc.frontend.checker._opcode_problems` asks it
after its own rules); :func:`operand_problems` the few rules that depend on the operands, the registers' declared
types or the module's target and version."""

from __future__ import annotations

from xcc.frontend import ast
from xcc.frontend.instructions import ROUND_F, ROUND_I, TYPE_WIDTH, category

_HALF = frozenset({"f16", "f16x2", "bf16", "bf16x2"})
_BF = frozenset({"bf16", "bf16x2"})
_NO_BIT_TYPES = frozenset({"add", "sub", "mul", "mad", "sad", "div", "rem", "min", "max"})
_ROUNDED = frozenset({"add", "sub", "mul", "mad", "fma", "div", "sqrt", "rcp"})
_NO_FTZ_F64 = frozenset({"min", "max", "abs", "neg", "setp", "set", "testp", "sqrt"})
_INT_CVT = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"})
_FP8X2 = frozenset({"e4m3x2", "e5m2x2"})
_REDUX = {"add": ("u32", "s32"), "min": ("u32", "s32"), "max": ("u32", "s32"), "and": ("b32",), "or": ("b32",),
          "xor": ("b32",)}


def modifier_problem(opcode: str, ms: set[str], types: list[str]) -> str | None:
    """What ptxas refuses in this spelling (None: nothing this module knows of)."""
    t = types[-1] if opcode == "set" else types[0]
    if opcode in _NO_BIT_TYPES and category(t) == "b":
        return f"'{opcode}' does not take a bit-size type (.{t}): use .u{TYPE_WIDTH[t]} or .s{TYPE_WIDTH[t]}"
    if opcode in _ROUNDED and len(ms & (ROUND_F | ROUND_I)) > 1:
        return "more than one rounding modifier"
    if opcode in _VIDEO and len(ms & {"add", "min", "max"}) > 1:
        return "more than one secondary operation (.add, .min, .max)"
    if opcode in ("addc", "subc") and "cc" in ms and TYPE_WIDTH[t] == 16:  # ptxas 13.0's words
        return f"'.cc' applies only to {opcode} on 32- and 64-bit integer types"
    if opcode == "lop3" and t != "b32":  # ptxas 13.0's words, on every target (the PTX ISA: .b32 only)
        return f"unexpected instruction type .{t} for 'lop3' (.b32 only)"
    if opcode in ("szext", "bmsk") and len(ms & {"clamp", "wrap"}) != 1:
        return "exactly one of '.clamp' and '.wrap' is required"
    msg = _f64(opcode, ms) if t == "f64" else _half(opcode, ms, t) if t in _HALF and opcode != "cvt" else None
    if msg:
        return msg
    if opcode in ("min", "max") and "relu" in ms and category(t) == "f":
        return f"'.relu' is for .s32 and .s16x2 only, not .{t}"
    if opcode in ("setp", "set") and category(types[-1]) == "b" and ms & {"lt", "le", "gt", "ge", "lo", "ls",
                                                                         "hi", "hs"}:
        return f"a bit-size type (.{types[-1]}) compares only with .eq and .ne"
    if opcode == "set":
        return _set(types)
    if opcode == "cvt":
        return _cvt(ms, types)
    if opcode == "redux":
        return _redux(ms, t)
    return None


def _f64(opcode: str, ms: set[str]) -> str | None:
    if "ftz" in ms and opcode in _NO_FTZ_F64:
        return "'.ftz' does not apply to .f64"
    if opcode in ("min", "max") and ms & {"NaN", "xorsign", "abs"}:
        return f"'.{min(ms & {'NaN', 'xorsign', 'abs'})}' does not apply to .f64"
    if opcode in ("div", "sqrt") and ms & {"approx", "full"}:
        return f"'.{min(ms & {'approx', 'full'})}' is for .f32 only: .f64 takes a rounding modifier"
    if opcode == "rcp" and "approx" in ms and "ftz" not in ms:
        return "'rcp.approx.f64' needs '.ftz'"
    return None


def _half(opcode: str, ms: set[str], t: str) -> str | None:
    rounding = ms & (ROUND_F | ROUND_I)
    if opcode in ("add", "sub", "mul", "fma") and rounding - {"rn"} and (opcode != "fma" or t not in _BF):
        return f"'.{min(rounding - {'rn'})}' is not a rounding of .{t} {opcode} (only .rn)"
    if opcode == "fma" and not rounding:
        return f"'fma.{t}' needs a rounding modifier ('.rn')"
    if t in _BF and "ftz" in ms and opcode != "ex2":
        return f"'.ftz' does not apply to .{t}"
    if t in _BF and "sat" in ms:
        return f"'.sat' does not apply to .{t}"
    if opcode == "fma" and {"sat", "relu"} <= ms:
        return "'.relu' cannot be combined with '.sat'"
    if opcode == "fma" and {"ftz", "oob"} <= ms:  # ptxas 13.0's words
        return "'.ftz' cannot be combined with '.oob'"
    if opcode in ("min", "max") and "relu" in ms:
        return f"'.relu' is for .s32 and .s16x2 only, not .{t}"
    if opcode == "ex2" and t in _BF and "ftz" not in ms:
        return f"'ex2.approx.{t}' needs '.ftz'"
    if opcode == "ex2" and t not in _BF and "ftz" in ms:
        return f"'.ftz' does not apply to ex2.approx.{t}"
    return None


def _set(types: list[str]) -> str | None:
    """set.CmpOp.dtype.stype: the destination types each source type takes."""
    if len(types) != 2:
        return None
    d, s = types
    if s in ("f16", "bf16"):
        ok = {"f16", "bf16", "u16", "s16", "u32", "s32"}
    elif s in ("f16x2", "bf16x2"):
        ok = {s, "u32", "s32"}
    else:
        ok = {"u32", "s32", "f32", "f16", "bf16"}
    if d not in ok:
        return f"a .{s} comparison sets {', '.join('.' + x for x in sorted(ok))}, not .{d}"
    return None


def _cvt(ms: set[str], types: list[str]) -> str | None:
    if "pack" in ms:
        if types[1] != "s32" or len(types) == 3 and types[2] != "b32":
            return "cvt.pack converts .s32 sources (and takes a .b32 third operand)"
        return None
    if any(category(x) in ("b", "pred") for x in types):
        return f"cvt does not take .{next(x for x in types if category(x) in ('b', 'pred'))}"
    if len(types) != 2:
        return None
    d, s = types
    rounding = ms & (ROUND_F | ROUND_I | {"rna", "rs"})
    if d in _INT_CVT and s in _INT_CVT and "sat" in ms and _contains(d, s):
        return f"'.sat' does not apply: every .{s} value fits .{d}"
    if "bf16" in (d, s) and ({d, s} & {"u8", "s8"}):
        return "cvt between .bf16 and 8-bit integers is not an instruction (convert through 16 bits)"
    if "bf16" in (d, s) and "sat" in ms:
        return "'.sat' does not apply to a .bf16 conversion"
    if "ftz" in ms and {d, s} & (_FP8X2 | {"f16x2", "bf16x2", "tf32"}):
        return "'.ftz' does not apply to a packed, FP8 or tf32 conversion"
    if "ftz" in ms and "f32" not in (d, s):
        return "'.ftz' applies only to conversions from or to .f32"
    if d == "tf32" and {"relu", "rna"} <= ms:
        return "'.relu' cannot be combined with '.rna'"
    if "relu" in ms and d not in _FP8X2 | {"tf32"} and s not in _FP8X2 and (s != "f32" or d not in _HALF):
        return "'.relu' applies only to conversions of .f32 to .f16/.bf16 (and their x2 and FP8 forms)"
    if {"relu", "ftz"} <= ms:
        return "'.relu' cannot be combined with '.ftz'"
    if d in ("f16x2", "bf16x2") and s == "f32":
        if not rounding & {"rn", "rz", "rs"}:
            return f"cvt.{d}.f32 needs the rounding modifier '.rn' or '.rz'"
        if rounding - {"rn", "rz", "rs"}:
            return f"'.{min(rounding)}' is not a rounding of cvt.{d}.f32 (.rn or .rz)"
        if "sat" in ms:
            return "'.sat' does not apply to a packed conversion (use '.satfinite')"
    if d == "f16x2" and s in _FP8X2 and rounding != {"rn"}:
        return f"cvt.f16x2.{s} needs the rounding modifier '.rn' (and no other)"
    return None


def _contains(d: str, s: str) -> bool:
    """Does integer type .d hold every value of .s (so that saturation cannot happen)?"""
    wd, ws = TYPE_WIDTH[d], TYPE_WIDTH[s]
    if d[0] == s[0]:
        return wd >= ws
    return d[0] == "s" and wd > ws


def _redux(ms: set[str], t: str) -> str | None:
    if "sync" not in ms:
        return "'redux' needs '.sync'"
    if t == "f32":
        return "redux.f32 needs .target sm_100a"
    op = next((o for o in _REDUX if o in ms), None)
    if op is not None and t not in _REDUX[op]:
        return f"redux.{op} takes {' or '.join('.' + x for x in _REDUX[op])}, not .{t}"
    return None


# ----------------------------------------------------------------------------- rules on the operands

_VIDEO = frozenset("vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2 "
                   "vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4".split())
_EXACT_CVT_DEST = frozenset({"bf16", "e4m3x2", "e5m2x2", "tf32", "f16x2", "bf16x2"})


_ONE_OF = {"mul": ("hi lo wide",), "mad": ("hi lo wide",), "mul24": ("hi lo",), "mad24": ("hi lo",),
           "div": ("approx full",), "match": ("any all",), "redux": ("add min max and or xor",),
           "shf": ("l r", "clamp wrap"), "prmt": ("f4e b4e rc8 ecl ecr rc16",), "dp2a": ("lo hi",),
           "testp": ("finite infinite number notanumber normal subnormal",), "lop3": ("and or",)}
_ARITH_OPS = frozenset((
    "add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi szext bmsk dp4a dp2a "
    "addc subc madc fma rcp sqrt rsqrt sin cos lg2 ex2 tanh copysign testp set setp selp slct and or xor not cnot "
    "lop3 shf shl shr prmt cvt shfl vote match redux activemask").split()) | _VIDEO


def _spelling_order(ins: ast.Instruction, text: str) -> str | None:
    """What ptxas refuses in the order or repetition of the modifiers (the checker's tables see them as a set)."""
    mods = [m for m in ins.modifiers if m not in TYPE_WIDTH]
    if ins.opcode not in _ARITH_OPS:
        return None
    dup = next((m for m in mods if mods.count(m) > 1), None)
    if dup:
        return f"'{text}': '.{dup}' is given twice"
    for group in _ONE_OF.get(ins.opcode, ()):
        both = [m for m in mods if m in group.split()]
        if len(both) > 1:
            return f"'{text}': '.{both[0]}' and '.{both[1]}' exclude each other"
    if ins.opcode == "div" and set(mods) & {"approx", "full"} and set(mods) & ROUND_F:
        return f"'{text}': '.approx' and '.full' take no rounding modifier"
    pos = {m: i for i, m in enumerate(ins.modifiers)}
    direction, mode = min(pos.get("l", 99), pos.get("r", 99)), min(pos.get("clamp", 99), pos.get("wrap", 99))
    if ins.opcode == "shf" and 99 not in (direction, mode) and direction > mode:
        return f"'{text}': the direction (.l, .r) comes before the mode (.clamp, .wrap)"
    if ins.opcode in ("mad", "mad24") and "sat" in pos and pos["sat"] < min(pos.get("hi", 99), pos.get("lo", 99)) < 99:
        return f"'{text}': '.sat' comes after '.hi'"
    first_type = min((i for i, m in enumerate(ins.modifiers) if m in TYPE_WIDTH), default=99)
    if ins.opcode == "dp2a" and max(pos.get("lo", -1), pos.get("hi", -1)) > first_type:
        return f"'{text}': '.lo'/'.hi' comes before the types"
    return None


def operand_problems(ins: ast.Instruction, reg_type, target, version) -> list[tuple[str, object]]:
    """(message, place) of each problem ptxas finds in ``ins``'s operands, in the order or repetition of its
    modifiers, or in its use on this target and version; ``reg_type(op)`` is the declared type of a register
    operand (None when unknown)."""
    text = ".".join((ins.opcode, *ins.modifiers))
    types = [m for m in ins.modifiers if m in TYPE_WIDTH]
    out: list[tuple[str, object]] = []
    msg = _spelling_order(ins, text)
    if msg:
        out.append((msg, ins.loc))
    ops = ins.operands
    if ins.opcode == "setp" and types and types[-1] in ("f16", "bf16") and ops and isinstance(ops[0], ast.Vector):
        out.append((f"'{text}': a scalar .{types[-1]} comparison writes one predicate, not a pair p|q", ops[0].loc))
    if ins.opcode in ("shfl", "vote") and "sync" not in ins.modifiers and target is not None and target.sm >= 70 \
            and version is not None and version >= (6, 4):
        out.append((f"'{text}': '{ins.opcode}' without '.sync' is not supported on .target sm_70 and later from "
                    "PTX ISA 6.4 (use the .sync form)", ins.loc))
    if ins.opcode == "cvt" and "tf32" in types and "satfinite" in ins.modifiers and {"rn", "rz"} & set(ins.modifiers) \
            and target is not None and target.sm < 100:
        out.append((f"'{text}': '.satfinite' with .rn/.rz needs .target sm_100 or later (this module targets "
                    f"{target.name})", ins.loc))
    if ins.opcode in _VIDEO:
        for op in ops:
            reg = op.operand if isinstance(op, ast.Negated) else op
            if not isinstance(reg, ast.Reg):
                continue
            r = reg_type(ast.Reg(reg.name.split(".", 1)[0]))
            if r is not None and (TYPE_WIDTH.get(r) != 32 or category(r) not in ("b", "u", "s")):
                out.append((f"'{text}': register '{reg.name}' is .{r}; video instructions take 32-bit integer "
                            "registers", reg.loc))
    if ins.opcode == "cvt" and len(types) == 2 and len(ops) >= 2:
        for t, op in ((types[0], ops[0]), *((types[1], op) for op in ops[1:] if types[1] in _FP8X2 | {"f16x2"})):
            r = reg_type(op)
            if t not in _EXACT_CVT_DEST or r is None or r not in TYPE_WIDTH:
                continue
            if (TYPE_WIDTH[r] != TYPE_WIDTH[t] and not (t in ("f16x2", "bf16x2") and category(r) == "b")) \
                    or category(r) == "f":
                out.append((f"'{text}': register '{op.name}' is .{r}; a .{t} operand of cvt needs a "
                            f"{TYPE_WIDTH[t]}-bit .b/.u/.s register", op.loc))
    return out
