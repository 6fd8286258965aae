"""The PTX instruction table the checker reads: for each opcode, the modifiers it takes, the
shape of its operands, and the target and ISA version it needs.

Source: PTX ISA 9.0, chapter 9 ("Instruction Set"): the syntax block and the "PTX ISA Notes" and
"Target ISA Notes" of each instruction; section 6.4 ("Operand Type Information", including the
relaxed type-checking rules for ``ld``, ``st`` and ``cvt``). Where the manual is terse, ptxas
13.0 decided: every rule here was checked against what ptxas accepts and rejects.

A :class:`Form` gives an opcode's modifier vocabulary and its operand signatures. A signature
is a string of role letters, one per operand; operands after ``?`` are optional:

====  ==========================================================================================
d     destination of the instruction type (first type modifier); ``_`` allowed
s     source of the instruction type: register, immediate or special register
a     source of the second type modifier (``cvt.f32.s32 d, a``, ``set.lt.u32.f32 d, a, b``)
v     data of ``ld``/``st``: a register (which may be wider) or a ``{...}`` vector of them
q     predicate destination, or a ``p|q`` pair
p     predicate source, ``!p`` allowed
u     32-bit integer source (shift amounts, bit positions, lane masks)
U     32-bit integer destination (``popc.b64 d, a`` writes 32 bits)
W     destination twice as wide as the instruction type (``mul.wide``)
w     source twice as wide as the instruction type (``mad.wide`` addend)
A     address operand of the machine's address width (``cvta``, ``isspacep``)
m     memory operand ``[...]``
l     branch target label
x     anything (not checked)
====  ==========================================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xcc.semantics.comparisons import FLOAT_CMPS, INT_CMPS

# --------------------------------------------------------------------------- types

TYPE_WIDTH = {
    "pred": 1, "b1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "e2m1": 4,
    "b8": 8, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "e2m3": 8, "e3m2": 8, "ue8m0": 8, "e2m1x2": 8,
    "b16": 16, "s16": 16, "u16": 16, "f16": 16, "bf16": 16, "e4m3x2": 16, "e5m2x2": 16,
    "e2m3x2": 16, "e3m2x2": 16, "ue8m0x2": 16,
    "b32": 32, "s32": 32, "u32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "tf32": 32, "e4m3x4": 32,
    "u16x2": 32, "s16x2": 32,
    "e5m2x4": 32, "e2m1x4": 16,
    "b64": 64, "s64": 64, "u64": 64, "f64": 64, "f32x2": 64,
    "b128": 128,
}
TYPES = frozenset(TYPE_WIDTH)


def category(t: str) -> str:
    """'b' (bits), 'u', 's', 'f' (any float format) or 'pred'."""
    if t == "pred":
        return "pred"
    if t.startswith("bf"):
        return "f"
    return t[0] if t[0] in "bus" else "f"


# --------------------------------------------------------------------------- modifier vocabularies

ROUND_F = frozenset("rn rz rm rp".split())
ROUND_I = frozenset("rni rzi rmi rpi".split())
SCOPES = "cta cluster gpu sys"
SEMANTICS = "relaxed acquire release acq_rel sc weak volatile mmio"
SPACES = "global shared shared::cta shared::cluster local const param param::entry param::func generic"
EVICT = ("L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last L1::no_allocate "
         "L2::evict_normal L2::evict_first L2::evict_last L2::cache_hint L2::64B L2::128B L2::256B "
         "L2::evict_unchanged")
# The comparisons themselves are defined once, in xcc.semantics.comparisons (their meaning: .compare).
COMPARISONS = " ".join(sorted(INT_CMPS | FLOAT_CMPS))
BOOL_OPS = "and or xor"
# Shape-like modifiers of the matrix and bulk-copy families: m16n8k16, m8n8, x4, 2d, 16x256b, ...
SHAPE = re.compile(r"m\d+(?:n\d+)?(?:k\d+)?|x\d+|[1-5]d|\d+x\d+b?|\d+x\d+x\d+b?")


@dataclass(frozen=True)
class Form:
    """How one opcode is written. ``mods`` is its vocabulary of non-type modifiers (None: not
    checked, for the tensor-memory and texture families whose modifiers are too many to list);
    ``types`` the type modifiers it accepts; ``ntypes`` how many it takes (min, max);
    ``operands`` its signatures (None: not checked); ``relaxed``: registers may be wider than
    the type (section 6.4.1: ``ld``, ``st``, ``cvt``); ``symbols``: a variable's name may stand
    for its address in a source operand."""

    mods: frozenset[str] | None
    types: frozenset[str]
    ntypes: tuple[int, int] = (1, 1)
    operands: tuple[str, ...] | None = None
    relaxed: bool = False
    symbols: bool = False


def _f(mods: str | None, types: str, operands: str | tuple | None = None, ntypes=(1, 1),
       relaxed=False, symbols=False) -> Form:
    vocab = None if mods is None else frozenset(mods.split())
    sigs = (operands,) if isinstance(operands, str) else operands
    return Form(vocab, frozenset(types.split()), ntypes, sigs, relaxed, symbols)


INT = "b16 b32 b64 u16 u32 u64 s16 s32 s64"
INT8 = "b8 u8 s8 " + INT
SINT = "s16 s32 s64"
UINT = "u16 u32 u64"
FLT = "f32 f64"
HALF = "f16 f16x2 bf16 bf16x2"
BITS = "b16 b32 b64"
LDST_TYPES = "b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 f32 f64"
ALL_TYPES = " ".join(sorted(TYPES - {"u16x2", "s16x2"}))  # the SIMD integer types are min/max/add's only
ARITH = "rn rz rm rp ftz sat cc"

FORMS: dict[str, Form] = {
    # integer and floating-point arithmetic
    "add": _f(ARITH + " relu", f"{INT} {FLT} {HALF} f32x2 u8 s8 u16x2 s16x2", "dss"),
    "sub": _f(ARITH + " relu", f"{INT} {FLT} {HALF} f32x2", "dss"),
    "addc": _f("cc", "u16 s16 u32 s32 u64 s64 b32 b64", "dss"),  # 16-bit: ptxas 13.0 takes it (without .cc)
    "subc": _f("cc", "u16 s16 u32 s32 u64 s64 b32 b64", "dss"),
    "mul": _f("hi lo wide rn rz rm rp ftz sat", f"{INT} {FLT} {HALF} f32x2", ("dss", "Wss")),
    "mad": _f("hi lo wide rn rz rm rp ftz sat cc", f"{INT} {FLT}", ("dsss", "Wssw")),
    "madc": _f("hi lo cc", "u32 s32 u64 s64 b32 b64", "dsss"),
    "mul24": _f("hi lo", "u32 s32", "dss"),
    "mad24": _f("hi lo sat", "u32 s32", "dsss"),
    "sad": _f("", INT, "dsss"),
    "div": _f("approx full rn rz rm rp ftz", f"{INT} {FLT}", "dss"),
    "rem": _f("", INT, "dss"),
    "abs": _f("ftz relu", f"{SINT} {FLT} {HALF}", "ds"),
    "neg": _f("ftz relu", f"{SINT} {FLT} {HALF}", "ds"),
    "min": _f("ftz NaN xorsign.abs xorsign abs relu", f"{INT} {FLT} {HALF} u16x2 s16x2", ("dss", "dsss")),
    "max": _f("ftz NaN xorsign abs relu", f"{INT} {FLT} {HALF} u16x2 s16x2", ("dss", "dsss")),
    "popc": _f("", "b32 b64", "Us"),
    "clz": _f("", "b32 b64", "Us"),
    "bfind": _f("shiftamt", "u32 u64 s32 s64", "Us"),
    "fns": _f("", "b32", "dsss"),
    "brev": _f("", "b32 b64", "ds"),
    "bfe": _f("", "u32 u64 s32 s64", "dsuu"),
    "bfi": _f("", "b32 b64", "dssuu"),
    "bmsk": _f("clamp wrap", "b32", "duu"),
    "szext": _f("clamp wrap", "u32 s32", "dsu"),
    "dp4a": _f("", "u32 s32", "dsss", ntypes=(2, 2)),
    "dp2a": _f("lo hi", "u32 s32", "dsss", ntypes=(2, 2)),
    "testp": _f("finite infinite number notanumber normal subnormal", FLT, "qs"),
    "copysign": _f("", FLT, "dss"),
    "fma": _f("rn rz rm rp ftz sat relu oob", f"{FLT} {HALF} f32x2", "dsss"),
    "rcp": _f("approx rn rz rm rp ftz", FLT, "ds"),
    "sqrt": _f("approx rn rz rm rp ftz", FLT, "ds"),
    "rsqrt": _f("approx ftz", FLT, "ds"),
    "sin": _f("approx ftz", "f32", "ds"),
    "cos": _f("approx ftz", "f32", "ds"),
    "lg2": _f("approx ftz", "f32", "ds"),
    "ex2": _f("approx ftz", f"f32 {HALF}", "ds"),
    "tanh": _f("approx", f"f32 {HALF}", "ds"),
    # comparison and selection
    "set": _f(f"{COMPARISONS} {BOOL_OPS} ftz", f"{INT} {FLT} u32 s32 f32 {HALF}", ("daa", "daap"),
              ntypes=(2, 2)),
    "setp": _f(f"{COMPARISONS} {BOOL_OPS} ftz", f"{INT} {FLT} {HALF}", ("qss", "qssp")),
    "selp": _f("", f"{INT} {FLT}", "dssp"),
    "slct": _f("ftz", f"{INT} {FLT}", "dssa", ntypes=(2, 2)),
    # logic and shift
    "and": _f("", f"pred {BITS}", "dss"),
    "or": _f("", f"pred {BITS}", "dss"),
    "xor": _f("", f"pred {BITS}", "dss"),
    "not": _f("", f"pred {BITS}", "ds"),
    "cnot": _f("", BITS, "ds"),
    "lop3": _f("or and", "b32 b64", ("dssss", "dssssp")),
    "shf": _f("l r clamp wrap", "b32", "dssu"),
    "shl": _f("", BITS, "dsu"),
    "shr": _f("", f"{BITS} {UINT} {SINT}", "dsu"),
    "prmt": _f("f4e b4e rc8 ecl ecr rc16", "b32", ("dss", "dsss")),
    # data movement
    "mov": _f("v2 v4", f"pred {INT} {FLT} b128 f16 bf16 f16x2 bf16x2", "ds", symbols=True),
    "ld": _f(f"{SEMANTICS} {SCOPES} {SPACES} nc ca cg cs lu cv {EVICT} v2 v4 v8",
             LDST_TYPES, ("vm", "vmx", "vmxx"), relaxed=True),
    "ldu": _f("global v2 v4", LDST_TYPES, "vm", relaxed=True),
    "st": _f(f"{SEMANTICS} {SCOPES} {SPACES} wb cg cs wt {EVICT} v2 v4 v8 async "
             "mbarrier::complete_tx::bytes", LDST_TYPES, ("mv", "mvx", "mvx"), relaxed=True),
    "prefetch": _f(f"{SPACES} L1 L2 {EVICT} tensormap", "", ("m",), ntypes=(0, 0)),
    "prefetchu": _f("L1", "", "m", ntypes=(0, 0)),
    "cvt": _f("rn rz rm rp rni rzi rmi rpi rna rs ftz sat relu satfinite pack", ALL_TYPES,
              ("da", "daa", "daaa", "daaaa", "dasu"), ntypes=(2, 3), relaxed=True),
    "cvta": _f("to global shared shared::cta shared::cluster local const param param::entry",
               "u32 u64", "dA", symbols=True),
    "isspacep": _f(f"{SPACES} param::entry", "", "qA", ntypes=(0, 0), symbols=True),
    "mapa": _f("shared::cluster", "u32 u64", "dAu", symbols=True),
    "getctarank": _f("shared::cluster", "u32 u64", "UA", symbols=True),
    "shfl": _f("sync up down bfly idx", "b32", ("dssuu", "dsuuu", "dsuu")),
    "vote": _f("sync all any uni ballot", "pred b32", ("dpu", "dp")),
    "activemask": _f("", "b32", "d"),
    "match": _f("any all sync", "b32 b64", ("Usu",)),
    "redux": _f("sync add min max and or xor abs NaN", "u32 s32 b32 f32", "dsu"),
    "elect": _f("sync", "", "du", ntypes=(0, 0)),
    # control flow
    "bra": _f("uni", "", "l", ntypes=(0, 0)),
    "brx": _f("idx uni", "", "ux", ntypes=(0, 0)),
    "call": _f("uni", "", None, ntypes=(0, 0)),
    "ret": _f("uni", "", "", ntypes=(0, 0)),
    "exit": _f("", "", "", ntypes=(0, 0)),
    "trap": _f("", "", "", ntypes=(0, 0)),
    "brkpt": _f("", "", "", ntypes=(0, 0)),
    "nanosleep": _f("", "u32", "u"),
    "pmevent": _f("mask", "", "x", ntypes=(0, 0)),
    # synchronisation
    "bar": _f("warp sync arrive red cta aligned popc and or", "u32 pred", None, ntypes=(0, 1)),
    "barrier": _f("sync arrive red cta aligned popc and or cluster wait relaxed acquire release", "u32 pred",
                  None, ntypes=(0, 1)),
    "membar": _f("cta gl sys proxy alias", "", "", ntypes=(0, 0)),
    "fence": _f(f"{SEMANTICS} {SCOPES} proxy alias async async::generic tensormap::generic "
                "generic::acquire generic::release global shared::cta shared::cluster sync_restrict op_restrict "
                "sync_restrict::shared::cluster sync_restrict::shared::cta "
                "mbarrier_init", "", None, ntypes=(0, 0)),
    "atom": _f(f"{SEMANTICS} {SCOPES} {SPACES} and or xor cas exch add inc dec min max noftz {EVICT} v2 v4 v8",
               f"{INT} {FLT} {HALF} b128", ("dms", "dmss", "dmsx", "dmssx")),
    "red": _f(f"{SEMANTICS} {SCOPES} {SPACES} and or xor add inc dec min max noftz {EVICT} v2 v4 v8 async "
              "mbarrier::complete_tx::bytes", f"{INT} {FLT} {HALF}", ("ms", "msx", "msx")),
    "griddepcontrol": _f("launch_dependents wait", "", "", ntypes=(0, 0)),
    "setmaxnreg": _f("inc dec sync aligned", "u32 s32", "u"),  # ptxas 13.0 takes .s32 too
    "stackrestore": _f("", "u32 u64", "s"),
    "stacksave": _f("", "u32 u64", "d"),
    "alloca": _f("", "u32 u64", ("ds", "dsu")),
    "createpolicy": _f("fractional L2::evict_last L2::evict_normal L2::evict_first L2::evict_unchanged "
                       "L2::cache_hint cvt range L2 global", "b64", None),
    "applypriority": _f("global L2::evict_normal", "", None, ntypes=(0, 0)),
    "discard": _f("global L2", "", None, ntypes=(0, 0)),
    "istypep": _f("texref samplerref surfref", "", None, ntypes=(0, 1)),
}

# The matrix and asynchronous-copy families take shapes, layouts and operand types in many
# combinations: their vocabularies below are every modifier PTX ISA 9.0 defines for them, with
# shapes (m16n8k16, x4, 2d, ...) matched by SHAPE; operands are checked by later stages.
_MMA_VOCAB = ("sync aligned row col satfinite sp sp::ordered_metadata xor and popc kind::f16 kind::f8f6f4 "
              "kind::mxf8f6f4 kind::mxf4 kind::mxf4nvf4 kind::i8 kind::tf32 block_scale scale_vec::1X "
              "scale_vec::2X scale_vec::4X rn rz rm rp relu ftz")
_MATRIX_SPACES = "shared shared::cta shared::cluster global generic"
_TENSOR_FAMILIES = {
    "mma": _MMA_VOCAB,
    "wmma": f"{_MMA_VOCAB} load store mma a b c d {_MATRIX_SPACES}",
    "wgmma": "fence commit_group wait_group mma_async sync aligned sp satfinite and popc",
    "ldmatrix": f"sync aligned trans {_MATRIX_SPACES} b8x16 b6x16_p32 b4x16_p64",
    "stmatrix": f"sync aligned trans {_MATRIX_SPACES} b8x16",
    "movmatrix": "sync aligned trans",
    "cp": (f"async bulk tensor reduce ca cg commit_group wait_group wait_all read mbarrier arrive noinc "
           f"{_MATRIX_SPACES} shared::cluster.global shared::cta.global global.shared::cta "
           "mbarrier::complete_tx::bytes bulk_group L2::cache_hint L2::64B L2::128B L2::256B "
           "multicast::cluster tile im2col im2col_no_offs im2col::w im2col::w::128 tile::gather4 tile::scatter4 "
           "prefetch L2 cta_group::1 cta_group::2 add min max inc dec and or xor noftz cp_mask "
           "L1::evict_normal L1::evict_first L1::evict_last L1::no_allocate L2::evict_first L2::evict_last"),
    "mbarrier": ("init arrive arrive_drop expect_tx complete_tx try_wait test_wait pending_count inval "
                 f"{_MATRIX_SPACES} noComplete release acquire relaxed cta cluster parity"),
}
TENSOR_FAMILIES = frozenset(_TENSOR_FAMILIES)
for _name, _vocab in _TENSOR_FAMILIES.items():
    FORMS[_name] = Form(frozenset(_vocab.split()), TYPES, (0, 8), None)
# Texture, surface, tensor-memory and SIMD-video families: too many spellings to list; the
# checker verifies their names, type modifiers and target requirements only.
for _name in ("tcgen05", "tensormap", "multimem", "tex", "tld4", "txq", "suld", "sust", "sured", "suq",
              "clusterlaunchcontrol", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad",
              "vset", "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4",
              "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4"):
    FORMS.setdefault(_name, Form(None, TYPES, (0, 16), None))


# --------------------------------------------------------------------------- target requirements


@dataclass(frozen=True)
class Requirement:
    """A feature that needs ``sm_<sm>`` (``arch_specific``: exactly that 'a' architecture) and
    PTX ISA ``ptx`` or later."""

    feature: str
    sm: int
    ptx: tuple[int, int]
    arch_specific: bool = False


def requirements(opcode: str, mods: tuple[str, ...], ntypes_operands: int) -> list[Requirement]:
    """The target and version requirements of one instruction (PTX ISA 9.0 "Target ISA Notes")."""
    text = ".".join((opcode, *mods))
    ms = set(mods)
    out: list[Requirement] = []

    def need(feature, sm, ptx, arch_specific=False):
        out.append(Requirement(feature, sm, ptx, arch_specific))

    simple = _OPCODE_REQUIREMENTS.get(opcode)
    if simple is not None:
        need(opcode, *simple)
    if opcode == "mma":
        if "m8n8k4" in ms and ms & {"f16", "f32"} and "f64" not in ms:
            need("mma.m8n8k4 (f16)", 70, (6, 4))
        elif "m16n8k8" in ms and ms & {"f16"} and not ms & {"bf16", "tf32"}:
            need("mma.m16n8k8 (f16)", 75, (6, 5))
        elif ms & {"e4m3", "e5m2"}:
            need("mma with fp8 operands", 89, (8, 4))
        else:
            need(f"{text}", 80, (7, 0))
    if opcode == "mma" and "sp::ordered_metadata" in ms:
        need("mma.sp::ordered_metadata", 80, (8, 5))
    elif opcode == "mma" and "sp" in ms:
        need("mma.sp", 80, (7, 1))
    if opcode in ("st", "red") and "async" in ms:
        need(f"{opcode}.async", 90, (8, 1))
    if opcode == "tensormap" and "replace" in ms:
        need("tensormap.replace", 90, (8, 3), True)
    if opcode == "ldmatrix":
        need("ldmatrix", 75, (6, 5))
    if opcode == "cp" and "async" in ms:
        if "bulk" in ms:
            need("cp.async.bulk", 90, (8, 0))
        else:
            need("cp.async", 80, (7, 0))
    if opcode in ("atom", "red"):
        if ms & {"bf16", "bf16x2"}:
            need(f"{opcode} on .bf16", 90, (7, 8))
        elif ms & {"f16", "f16x2"}:
            need(f"{opcode}.add.f16", 70, (6, 3))
        if ms & {"v2", "v4", "v8"}:
            need(f"vector {opcode}", 90, (8, 1))
        if "cluster" in ms or "shared::cluster" in ms:
            need(f"{opcode} with cluster scope", 90, (7, 8))
        if "b128" in ms:  # ptxas 13.0: sm_90; with .sys, PTX ISA 8.4
            need(f"{opcode}.b128", 90, (8, 4) if "sys" in ms else (8, 3))
    if opcode in ("ld", "st") and "async" not in ms and _vector_bits(ms) == 256:  # ptxas 13.0: sm_100
        need(f"{opcode} of 256 bits", 100, (8, 8))
    if opcode in ("ld", "st") and "b128" in ms and "sys" in ms:  # ptxas 13.0: '.b128 with .sys', PTX ISA 8.4
        need(f"{opcode}.b128 with .sys", 70, (8, 4))
    if ms & {"bf16", "bf16x2"} and opcode in ("add", "sub", "mul") and "rn" in ms:
        need(f"{opcode}.rn.bf16", 90, (7, 8))
    if ms & {"bf16", "bf16x2"} and opcode in ("fma", "min", "max", "neg", "abs", "cvt"):
        need(f"{opcode}.bf16", 80, (7, 0))
    if opcode == "cvt" and "pack" in ms:  # PTX ISA 9.7.9.22: sm_72, the 4- and 2-bit fields sm_75; PTX 6.5
        sub_byte = ms & {"u4", "s4", "u2", "s2"}
        need("cvt.pack" + (f" to .{min(sub_byte)}" if sub_byte else ""), 75 if sub_byte else 72, (6, 5))
    if opcode == "fma" and "oob" in ms:  # ptxas 13.0: "Modifier '.oob' requires .target sm_90 or higher"
        need("fma.oob", 90, (8, 1))
    if opcode == "cvt" and ms & {"e4m3x2", "e5m2x2"}:
        need("cvt to/from .e4m3x2/.e5m2x2", 89, (7, 8))
    if opcode == "cvt" and ms & {"tf32"}:
        need("cvt.tf32", 80, (7, 0))
    if opcode in ("tanh", "ex2") and (opcode == "tanh" or ms & set(HALF.split())):
        need(f"{opcode}.approx on {'/'.join(sorted(ms & TYPES))}", 75, (7, 0))
    if opcode in ("min", "max") and ntypes_operands == 4:
        need(f"{opcode} with 3 input operands", 100, (8, 8))
    if "shared::cluster" in ms and opcode not in ("mbarrier", "cp"):
        need(f"{opcode}.shared::cluster", 90, (7, 8))
    if "cluster" in ms and opcode in ("fence", "membar", "barrier", "ld", "st"):
        need(f"{opcode} with cluster scope", 90, (7, 8))
    return out


def _vector_bits(ms: set[str]) -> int:
    """The width of a vector access (``.v4.b64``: 256)."""
    n = next((int(m[1:]) for m in ms if m in ("v2", "v4", "v8")), 1)
    return n * next((TYPE_WIDTH[m] for m in ms if m in TYPE_WIDTH), 0)


_OPCODE_REQUIREMENTS: dict[str, tuple] = {
    "wmma": (70, (6, 0)),
    "match": (70, (6, 0)),
    "nanosleep": (70, (6, 3)),
    "activemask": (30, (6, 2)),
    "redux": (80, (7, 0)),
    "mbarrier": (80, (7, 0)),
    "stmatrix": (90, (7, 8)),
    "movmatrix": (75, (7, 8)),
    "griddepcontrol": (90, (7, 8)),
    "elect": (90, (8, 0)),
    "mapa": (90, (7, 8)),
    "getctarank": (90, (7, 8)),
    "multimem": (90, (8, 1)),
    "wgmma": (90, (8, 0), True),
    "setmaxnreg": (90, (8, 0), True),
    "tcgen05": (100, (8, 6), True),
    "tensormap": (90, (8, 3)),
    "clusterlaunchcontrol": (100, (8, 6)),
    "dp4a": (61, (5, 0)),
    "dp2a": (61, (5, 0)),
    "bmsk": (70, (7, 6)),
    "szext": (70, (7, 6)),
    "alloca": (52, (7, 3)),
    "stacksave": (52, (7, 3)),
    "stackrestore": (52, (7, 3)),
    "createpolicy": (80, (7, 4)),
    "applypriority": (80, (7, 4)),
    "discard": (80, (7, 4)),
}

# --------------------------------------------------------------------------- Blackwell-only forms

BLACKWELL_TYPES = frozenset({"e2m1", "e2m1x2", "e2m1x4", "e2m3", "e2m3x2", "e3m2", "e3m2x2", "ue8m0", "ue8m0x2"})
_BLACKWELL_MMA = frozenset({"block_scale", "kind::f8f6f4", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"})


def blackwell_only(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """Whether an instruction is one PTX ISA 8.6+ defines for Blackwell (sm_100a and later) only, which xcc does
    not support yet: tcgen05 and clusterlaunchcontrol, FP6/FP4 (e2m1, e2m3, e3m2) and ue8m0 conversions,
    stochastic rounding (``.rs``) and block-scaled or FP6/FP4 ``mma``."""
    ms = set(modifiers)
    if opcode in ("tcgen05", "clusterlaunchcontrol"):
        return True
    if opcode == "cvt":
        return bool(ms & BLACKWELL_TYPES) or "rs" in ms
    if opcode in ("mma", "wmma"):
        return bool(ms & (_BLACKWELL_MMA | BLACKWELL_TYPES))
    return False


__all__ = ["FORMS", "Form", "Requirement", "TYPES", "TYPE_WIDTH", "blackwell_only", "category", "requirements"]
