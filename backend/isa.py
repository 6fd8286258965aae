"""The xg1 instruction set, defined once.

Every xg1 instruction is one row of :data:`TABLE`: mnemonic, operands (each
bound to a field of the 128-bit word), modifier groups, pipe, latency class,
the SASS instructions it corresponds to, and its semantics in one line.  The
encoder, decoder, disassembler and the interpreter's dispatch are all derived
from this table; the cycles of each latency class live in the machine
description (``machines/xg1.toml``).

Instruction word (128 bits, little-endian; see docs/isa.md)::

    [0:10)   opcode            [10:12) kind of operand B: 0 reg, 1 imm32, 2 constant bank
    [12:15)  guard predicate   [15]    guard negated
    [16:24)  d   destination register        [24:32) a   source register
    [32:64)  b   register / imm32 / c[bank][offset] (bank in [48:53), offset in [32:48))
    [64:72)  c   source register             [72:75) pd  destination predicate
    [75:78)  pa  source predicate            [78:81) ps  source predicate, [81] ps negated
    [82:96)  modifier groups, packed in table order
    [96:104) e   fourth source register
    [104:108) stall cycles   [108] yield   [109:112) write scoreboard   [112:115) read scoreboard
    [115:121) scoreboard wait mask        [121:128) reserved (zero)
"""

from __future__ import annotations

from dataclasses import dataclass

RZ = 255  # the zero register
PT = 7  # the true predicate
NUM_REGS = 255  # R0..R254
NUM_PREDS = 7  # P0..P6
NUM_SCOREBOARDS = 6
NUM_CONV_BARRIERS = 16  # B0..B15, the convergence barriers of BSSY/BSYNC
NUM_CTA_BARRIERS = 16  # barriers 0..15 of BAR / BAR.CNT / BAR.RED (PTX bar.sync a: a < 16)

# field -> (low bit, width)
FIELDS = {
    "opcode": (0, 10), "bkind": (10, 2), "guard": (12, 3), "guard_neg": (15, 1),
    "d": (16, 8), "a": (24, 8), "b": (32, 32), "c": (64, 8), "pd": (72, 3), "pa": (75, 3),
    "ps": (78, 3), "ps_neg": (81, 1), "mods": (82, 14), "e": (96, 8),
    "stall": (104, 4), "yield": (108, 1), "wsb": (109, 3), "rsb": (112, 3), "wait": (115, 6),
}
B_REG, B_IMM, B_CBANK = 0, 1, 2

# Operand kinds:
#   R  32-bit register          W  64-bit register pair (even-aligned)     P  predicate
#   RIC register / imm32 / constant bank (field b)   WIC the same for a 64-bit operand
#   C  constant bank only       I  immediate only    L  branch target (relative, in instructions)
#   SR special register number  B  convergence barrier number (field c)
OPERAND_KINDS = ("R", "W", "P", "RIC", "WIC", "C", "I", "L", "SR", "B")


@dataclass(frozen=True)
class Mod:
    """A modifier group: one of ``values`` (the first is the default), or a flag when values is ('', NAME)."""

    name: str
    values: tuple[str, ...]

    @property
    def width(self) -> int:
        return max(1, (len(self.values) - 1).bit_length())


@dataclass(frozen=True)
class Operand:
    field: str
    kind: str
    is_def: bool = False


# The instruction classes a row of the table may name (its last, optional element: words separated by
# spaces).  Every set of instructions the compiler, the interpreters and the cycle model treat alike is
# derived from these words (below the table), never listed by mnemonic elsewhere.
CLASSES = {
    # memory: the access, and the state space it addresses (SPACES)
    "load": "reads memory into its destination",
    "store": "writes memory",
    "atomic": "reads, modifies and writes memory, returning the old value",
    "async_copy": "starts an asynchronous global -> shared copy (cp.async); the write lands at a DEPBAR",
    "async_wait": "closes or waits for groups of asynchronous copies (a scheduling fence)",
    # control
    "branch": "changes control flow within the function",
    "leave": "leaves the function or the thread: control never reaches the next instruction",
    "reconverge": "convergence-barrier bookkeeping (BSSY/BSYNC)",
    "call": "transfers control to or from another function or the runtime: every register may change",
    # synchronisation
    "barrier": "a CTA barrier (barriers 0 .. NUM_CTA_BARRIERS - 1)",
    "barrier_wait": "always waits at its CTA barrier until the barrier completes",
    "sync": "an ordering point that computes nothing (memory and proxy fences, warpgroup fences)",
    "warp_sync": "exchanges values among the lanes of its member mask (e); a scheduling fence",
    "collective": "warp-collective: the 32 lanes of the warp execute it together",
    "warpgroup": "warpgroup-collective: the 128 threads of a warpgroup execute it together",
    "tensor": "a tensor-core instruction (its family: tensor=hmma, imma or gmma; its shape in MMA_SHAPE)",
    "nop": "does nothing; kept in place",
    "latch": "reads or writes the thread's 128-bit atomic latch X (ATOM*.128, ATOMX.*): kept in order, in place",
}
SPACES = ("global", "shared", "local", "generic", "const")
TENSOR_FAMILIES = ("hmma", "imma", "gmma")  # Nsight's op kinds of the tensor pipe: HMMA, IMMA, HGMMA
# classes whose instructions are never removed as dead code: they write memory, synchronise or change
# control flow
EFFECT_CLASSES = frozenset({"store", "atomic", "async_copy", "async_wait", "branch", "reconverge", "call",
                            "barrier", "sync", "warp_sync", "latch"})
# classes nothing is scheduled across (control flow, synchronisation, warp- and warpgroup-collective
# exchanges, cp.async group boundaries): the active mask each instruction runs with is unchanged
FENCE_CLASSES = frozenset({"branch", "reconverge", "barrier", "sync", "warp_sync", "async_wait", "warpgroup",
                           "nop", "latch"})


@dataclass(frozen=True)
class InstrDef:
    mnemonic: str
    opcode: int
    operands: tuple[Operand, ...]
    mods: tuple[Mod, ...]
    pipe: str
    latency: str
    sass: str
    doc: str
    classes: frozenset[str] = frozenset()  # words of CLASSES
    space: str | None = None  # the state space of a memory instruction (SPACES)
    tensor: str | None = None  # the family of a tensor-core instruction (TENSOR_FAMILIES)

    @property
    def has_effects(self) -> bool:
        """Writes memory, synchronises or changes control flow: never removed as dead code."""
        return bool(self.classes & EFFECT_CLASSES)

    @property
    def is_fence(self) -> bool:
        """Nothing is scheduled across it (see FENCE_CLASSES)."""
        return bool(self.classes & FENCE_CLASSES)

    @property
    def is_load(self) -> bool:
        return "load" in self.classes

    @property
    def independent_load(self) -> bool:
        """A load through [a + b] that other such loads may pass (a warp-collective one is ordered as a
        store)."""
        return self.memory_operand and "load" in self.classes and "collective" not in self.classes

    @property
    def memory_operand(self) -> bool:
        """Fields a and b form the address ``[a + b]``."""
        return self.pipe == "lsu" and any(o.field == "a" for o in self.operands) and self.mnemonic != "SHFL"

    @property
    def fixed_latency(self) -> bool:
        return self.latency in FIXED_LATENCY_CLASSES

    def mod(self, name: str) -> Mod:
        return next(m for m in self.mods if m.name == name)


def _flag(name: str) -> Mod:
    return Mod(name, ("", name))


CMP_INT = Mod("cmp", ("F", "LT", "EQ", "LE", "GT", "NE", "GE", "T"))
CMP_FLOAT = Mod("cmp", ("F", "LT", "EQ", "LE", "GT", "NE", "GE", "NUM", "NAN", "LTU", "EQU", "LEU", "GTU",
                        "NEU", "GEU", "T"))
BOOL = Mod("bool", ("AND", "OR", "XOR"))
INT_TYPE = Mod("type", ("U32", "S32"))
INT64_TYPE = Mod("type", ("U64", "S64"))
RND = Mod("rnd", ("RN", "RZ", "RM", "RP"))
FTZ, SAT, NEG_A, NEG_B = _flag("FTZ"), _flag("SAT"), _flag("NEG_A"), _flag("NEG_B")
LUT = Mod("lut", tuple(f"{i:#04x}" for i in range(256)))
SIZE = Mod("size", ("32", "U8", "S8", "U16", "S16"))
# a global load that skips the L1 (PTX .cg/.cv/.volatile, strong loads at .gpu/.sys scope): the same
# result, only the cycle model's L1 lookup differs
BYPASS = _flag("BYPASS")
A_REGS = _flag("AREG")  # a warpgroup MMA's A from registers (operand a: a register pair), not a descriptor
ATOM_OP = Mod("op", ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS"))
ATOM_TYPE = Mod("type", ("U32", "S32", "F32"))
MINMAX = Mod("minmax", ("MIN", "MAX"))
MUFU_FN = Mod("fn", ("RCP", "SQRT", "RSQ", "EX2", "LG2", "SIN", "COS", "TANH"))
PREC = Mod("prec", ("APPROX", "RN"))
SHFL_MODE = Mod("mode", ("IDX", "UP", "DOWN", "BFLY"))
VOTE_MODE = Mod("mode", ("ALL", "ANY", "EQ"))
F2I_RND = Mod("rnd", ("RZI", "RNI", "RMI", "RPI"))
F2I_TYPE = Mod("type", ("S32", "U32"))
I2F_TYPE = Mod("type", ("S32", "U32"))
FENCE_SCOPE = Mod("scope", ("CTA", "GPU", "SYS"))
PRMT_MODE = Mod("mode", ("IDX", "F4E", "B4E", "RC8", "ECL", "ECR", "RC16"))
FDIV_PREC = Mod("prec", ("RN", "FULL", "APPROX"))
ATOM64_TYPE = Mod("type", ("U64", "S64", "F64"))
# ATOMG.128/ATOMS.128/ATOM.128; LD and ST: the single-copy-atomic strong ld/st.b128 (xcc.ir.lower_b128)
ATOM128_OP = Mod("op", ("EXCH", "CAS", "LD", "ST"))
# ATOMG.H/ATOMS.H/ATOM.H: 16-bit (U16 CAS, F16/BF16 ADD) and packed-half (F16X2/BF16X2 ADD, 32-bit) atomics
HALF_ATOM_TYPE = Mod("type", ("U16", "F16", "BF16", "F16X2", "BF16X2"))
MATCH_MODE = Mod("mode", ("ANY", "ALL"))
REDUX_OP = Mod("op", ("SUM", "MIN", "MAX", "AND", "OR", "XOR"))

D_R, D_W, D_P = Operand("d", "R", True), Operand("d", "W", True), Operand("pd", "P", True)
A_R, A_W, B_RIC, B_WIC, C_R, C_W = (Operand("a", "R"), Operand("a", "W"), Operand("b", "RIC"),
                                    Operand("b", "WIC"), Operand("c", "R"), Operand("c", "W"))
PA, PS, E_R, B_I = Operand("pa", "P"), Operand("ps", "P"), Operand("e", "R"), Operand("b", "I")
E_W = Operand("e", "W")

# Latency classes whose result is ready after a fixed number of cycles (the compiler stalls for them);
# every other class is variable and tracked with a scoreboard.
FIXED_LATENCY_CLASSES = frozenset({"alu", "fma", "imad_wide", "branch", "fp64"})

# What PTX allows f32 division (PTX ISA 9.0 section 9.7.3.8): .rn is correctly rounded; .full has a
# maximum error of 2 ulp over the whole range; .approx 2 ulp for 2^-126 <= |b| <= 2^126 (and 0, or
# NaN for an infinite a, when 2^126 < |b| < 2^128).  xcc.semantics computes all three correctly
# rounded, which is within every bound; FDIV executes exactly that definition.

_FP8_A, _FP8_B = Mod("atype", ("E4M3", "E5M2")), Mod("btype", ("E4M3", "E5M2"))
# texture and surface rows: geometry, result word, vector length, out-of-range mode, reduction
_TEX_DIM = Mod("dim", ("D1", "D2", "D3", "A1", "A2", "CUBE", "ACUBE"))
_SU_DIM = Mod("dim", ("D1", "D2", "D3", "A1", "A2"))
_TEX_COMP = Mod("comp", ("X", "Y", "Z", "W"))
_SU_VEC = Mod("vec", ("V1", "V2", "V4"))
_SU_MODE = Mod("mode", ("TRAP", "CLAMP", "ZERO"))
_SU_RED = Mod("op", ("ADD", "MIN", "MAX", "AND", "OR"))

_ROWS = [
    # mnemonic, operands, mods, pipe, latency class, SASS, semantics
    ("NOP", (), (), "alu", "alu", "NOP", "no operation", "nop"),
    ("EXIT", (), (), "cbu", "branch", "EXIT", "the thread ends", "branch leave"),
    ("BRA", (Operand("b", "L"),), (), "cbu", "branch", "BRA", "pc = target", "branch"),
    ("BSSY", (Operand("c", "B"), Operand("b", "L")), (), "cbu", "branch", "BSSY",
     "B[c] = active threads of the warp; their reconvergence point is target", "reconverge"),
    ("BSYNC", (Operand("c", "B"),), (), "cbu", "branch", "BSYNC",
     "wait until every non-exited thread of B[c] has arrived, then continue together", "reconverge"),
    ("BAR", (B_RIC,), (), "cbu", "branch", "BAR.SYNC", "wait until every thread of the CTA arrives at barrier b",
     "barrier barrier_wait"),
    ("MEMBAR", (), (FENCE_SCOPE,), "lsu", "lsu", "MEMBAR", "order memory accesses of the thread", "sync"),
    ("MOV", (D_R, B_RIC), (), "alu", "alu", "MOV / MOV32I", "d = b"),
    ("S2R", (D_R, Operand("b", "SR")), (), "adu", "s2r", "S2R", "d = special register b"),
    ("CS2R.64", (D_W, Operand("b", "SR")), (), "alu", "alu", "CS2R", "d = 64-bit special register b (clock64)"),
    ("LDC", (D_R, Operand("b", "C")), (), "lsu", "ldc", "LDC", "d = c[bank][offset] (32 bits)", "load const"),
    ("LDC.64", (D_W, Operand("b", "C")), (), "lsu", "ldc", "LDC.64", "d = c[bank][offset] (64 bits)", "load const"),
    ("IADD3", (D_R, A_R, B_RIC, C_R), (NEG_B, NEG_A), "alu", "alu", "IADD3",
     "d = (NEG_A ? -a : a) + (NEG_B ? -b : b) + c"),
    ("IADD.64", (D_W, A_W, B_WIC), (NEG_B,), "alu", "alu", "IADD3 + IADD3.X", "d = a + (NEG_B ? -b : b), 64-bit"),
    ("IMAD", (D_R, A_R, B_RIC, C_R), (Mod("mode", ("LO", "HI")), INT_TYPE), "fma", "fma", "IMAD / IMAD.HI",
     "d = (a * b).mode + c"),
    ("IMAD.WIDE", (D_W, A_R, B_RIC, C_W), (INT_TYPE,), "fma", "imad_wide", "IMAD.WIDE",
     "d = a * b (64-bit product, sign by type) + c"),
    ("IMAD.64", (D_W, A_W, B_WIC, C_W), (Mod("mode", ("LO", "HI")), INT64_TYPE), "fma", "imad_wide",
     "IMAD.WIDE.U32 + IMAD.X sequence", "d = (a * b).mode + c, 64-bit"),
    ("ISETP", (D_P, A_R, B_RIC, PS), (CMP_INT, INT_TYPE, BOOL), "alu", "alu", "ISETP",
     "pd = (a cmp b) bool ps"),
    ("ISETP.64", (D_P, A_W, B_WIC, PS), (CMP_INT, INT64_TYPE, BOOL), "alu", "alu", "ISETP + ISETP.EX",
     "pd = (a cmp b) bool ps, 64-bit"),
    ("FSETP", (D_P, A_R, B_RIC, PS), (CMP_FLOAT, FTZ, BOOL), "fma", "alu", "FSETP", "pd = (a cmp b) bool ps"),
    ("PLOP3", (D_P, PA, PS), (LUT,), "alu", "alu", "PLOP3", "pd = lut(pa, ps)  (lut bit (pa<<1|ps))"),
    ("SEL", (D_R, A_R, B_RIC, PS), (), "alu", "alu", "SEL / FSEL", "d = ps ? a : b"),
    ("P2R", (D_R, PS), (), "alu", "alu", "SEL d, 1, RZ", "d = ps ? 1 : 0"),
    ("LOP3", (D_R, A_R, B_RIC, C_R), (LUT,), "alu", "alu", "LOP3.LUT", "d = lut(a, b, c) bitwise"),
    ("SHL", (D_R, A_R, B_RIC), (), "alu", "alu", "SHF.L.U32 / IMAD.SHL", "d = b >= 32 ? 0 : a << b"),
    ("SHR", (D_R, A_R, B_RIC), (INT_TYPE,), "alu", "alu", "SHF.R.U32.HI / SHF.R.S32.HI",
     "d = a >> b (arithmetic for S32, counts >= 32 give 0 or the sign)"),
    ("SHL.64", (D_W, A_W, B_RIC), (), "alu", "alu", "SHF.L.U64.HI + SHF.L.U32", "d = a << b, 64-bit"),
    ("SHR.64", (D_W, A_W, B_RIC), (INT64_TYPE,), "alu", "alu", "SHF.R.U64 + SHF.R.*.HI", "d = a >> b, 64-bit"),
    ("SGXT", (D_R, A_R, B_RIC), (), "alu", "alu", "SGXT", "d = a sign-extended from its low b bits"),
    ("IMNMX", (D_R, A_R, B_RIC), (MINMAX, INT_TYPE), "alu", "alu", "IMNMX", "d = min|max(a, b)"),
    ("IABS", (D_R, A_R), (), "alu", "alu", "IABS", "d = |a|"),
    ("POPC", (D_R, A_R), (), "alu", "sfu", "POPC", "d = number of one bits of a"),
    ("FLO", (D_R, A_R), (INT_TYPE, _flag("SH")), "alu", "sfu", "FLO.U32 / FLO.S32 [.SH]",
     "d = bit position of the most significant 1 of a (S32: of ~a when a < 0), ~0 if none; "
     "SH: 31 - position instead (PTX bfind[.shiftamt])"),
    ("BREV", (D_R, A_R), (), "alu", "sfu", "BREV", "d = a with its bits reversed"),
    ("FADD", (D_R, A_R, B_RIC), (RND, FTZ, SAT, NEG_B), "fma", "fma", "FADD", "d = a + (NEG_B ? -b : b)"),
    ("FMUL", (D_R, A_R, B_RIC), (RND, FTZ, SAT), "fma", "fma", "FMUL", "d = a * b"),
    ("FFMA", (D_R, A_R, B_RIC, C_R), (RND, FTZ, SAT), "fma", "fma", "FFMA", "d = a * b + c, one rounding"),
    ("FMNMX", (D_R, A_R, B_RIC), (MINMAX, FTZ), "alu", "alu", "FMNMX", "d = min|max(a, b) with PTX's NaN rules"),
    ("MUFU", (D_R, A_R), (MUFU_FN, PREC, FTZ), "sfu", "sfu", "MUFU", "d = fn(a)"),
    ("I2F", (D_R, A_R), (I2F_TYPE, RND), "sfu", "sfu", "I2F", "d = f32(a)"),
    ("F2I", (D_R, A_R), (F2I_TYPE, F2I_RND, FTZ), "sfu", "sfu", "F2I", "d = int(round(a)), saturating, NaN -> 0"),
    ("F2F.F64.F32", (D_W, A_R), (), "fp64", "fp64", "F2F.F64.F32", "d = f64(a)"),
    ("F2F.F32.F64", (D_R, A_W), (RND, FTZ), "fp64", "fp64", "F2F.F32.F64", "d = f32(a) rounded"),
    ("LDG", (D_R, A_W, B_I), (SIZE, BYPASS), "lsu", "lsu", "LDG.E [.STRONG.GPU]",
     "d = global[a + b] (zero/sign-extended); BYPASS: not cached in L1 (timing only)", "load global"),
    ("LDG.64", (D_W, A_W, B_I), (BYPASS,), "lsu", "lsu", "LDG.E.64 [.STRONG.GPU]", "d = global[a + b], 64-bit",
     "load global"),
    ("STG", (A_W, B_I, C_R), (SIZE,), "lsu", "lsu", "STG.E", "global[a + b] = c (low bits by size)", "store global"),
    ("STG.64", (A_W, B_I, C_W), (), "lsu", "lsu", "STG.E.64", "global[a + b] = c, 64-bit", "store global"),
    ("LDS", (D_R, A_R, B_I), (SIZE,), "lsu", "lsu", "LDS", "d = shared[a + b]", "load shared"),
    ("STS", (A_R, B_I, C_R), (SIZE,), "lsu", "lsu", "STS", "shared[a + b] = c", "store shared"),
    ("ATOMG", (D_R, A_W, B_I, C_R, E_R), (ATOM_OP, ATOM_TYPE), "lsu", "lsu", "ATOMG / RED",
     "d = global[a + b]; global[a + b] = op(d, c[, e])  (CAS: c = compare, e = new)", "atomic global"),
    ("ATOMS", (D_R, A_R, B_I, C_R, E_R), (ATOM_OP, ATOM_TYPE), "lsu", "lsu", "ATOMS",
     "d = shared[a + b]; shared[a + b] = op(d, c[, e])", "atomic shared"),
    ("SHFL", (D_R, D_P, A_R, B_RIC, C_R, E_R), (SHFL_MODE,), "lsu", "shfl", "SHFL",
     "d = a of the lane chosen by mode, b (lane/offset) and c (clamp/segment); pd = lane in range; "
     "e = member mask", "warp_sync"),
    ("VOTE", (D_R, D_P, PS, E_R), (VOTE_MODE,), "alu", "alu", "VOTE",
     "d = ballot of ps over the warp's active lanes in e; pd = all|any|eq of ps", "warp_sync"),
    # Bit-field, byte, dot-product and division instructions (appended: opcodes stay stable).
    ("PRMT", (D_R, A_R, B_RIC, C_R), (PRMT_MODE,), "alu", "alu", "PRMT",
     "d = bytes of the pair {c, a} chosen by selector b (PTX prmt; IDX: four 4-bit selectors with sign "
     "replication, other modes: b[1:0])"),
    ("SHF", (D_R, A_R, B_RIC, C_R), (Mod("dir", ("L", "R")), _flag("W")), "alu", "alu",
     "SHF.L.U32.HI / SHF.R.U32 [.W]",
     "d = the upper (L) or lower (R) 32 bits of the pair {c, a} shifted by min(b, 32), or by b & 31 with W"),
    ("BFE", (D_R, A_R, B_RIC), (INT_TYPE,), "alu", "alu", "BFE.U32 / BFE.S32 (sm_50-sm_62)",
     "d = bit field of a at position b[7:0], length b[15:8], zero/sign-extended (PTX bfe)"),
    ("BFE.64", (D_W, A_W, B_RIC), (INT64_TYPE,), "alu", "alu", "BFE.U32/S32 pair (sm_50-sm_62)",
     "d = bit field of a at position b[7:0], length b[15:8], zero/sign-extended, 64-bit"),
    ("BFI", (D_R, A_R, B_RIC, C_R), (), "alu", "alu", "BFI (sm_50-sm_62)",
     "d = c with the low b[15:8] bits of a inserted at position b[7:0] (PTX bfi)"),
    ("BFI.64", (D_W, A_W, B_RIC, C_W), (), "alu", "alu", "BFI pair (sm_50-sm_62)",
     "d = c with the low b[15:8] bits of a inserted at position b[7:0], 64-bit"),
    ("BMSK", (D_R, A_R, B_RIC), (_flag("W"),), "alu", "alu", "BMSK [.W]",
     "d = mask of b bits from bit a; counts clamp at 32, or wrap mod 32 with W (PTX bmsk)"),
    ("IDP.4A", (D_R, A_R, B_RIC, C_R), (Mod("atype", ("U8", "S8")), Mod("btype", ("U8", "S8"))), "fma", "fma",
     "IDP.4A", "d = c + sum of the products of the four bytes of a and b, extended by type (PTX dp4a)"),
    ("IDP.2A", (D_R, A_R, B_RIC, C_R), (Mod("mode", ("LO", "HI")), Mod("atype", ("U16", "S16")),
                                         Mod("btype", ("U8", "S8"))), "fma", "fma", "IDP.2A.LO / IDP.2A.HI",
     "d = c + the two 16-bit halves of a times bytes 0-1 (LO) or 2-3 (HI) of b (PTX dp2a)"),
    ("IDIV", (D_R, A_R, B_RIC), (Mod("op", ("DIV", "REM")), INT_TYPE), "fma", "idiv",
     "sequence: I2F.U32.RP, MUFU.RCP, F2I.FTZ.U32.TRUNC, IMAD/IMAD.HI refinement, ISETP + IADD3 corrections "
     "(+ IABS/sign fix-up for S32)",
     "d = a / b or a % b, truncating; x / 0 = ~0, x % 0 = x (NVIDIA's results); multi-cycle"),
    ("IDIV.64", (D_W, A_W, B_WIC), (Mod("op", ("DIV", "REM")), INT64_TYPE), "fma", "idiv",
     "CALL.REL to ptxas's 64-bit division subroutine (I2F.U64.RP, MUFU.RCP.64H, IMAD.WIDE refinement, "
     "corrections)", "d = a / b or a % b, truncating, 64-bit; x / 0 = ~0, x % 0 = x; multi-cycle"),
    # Floating-point division, FP64 arithmetic and conversions, 64-bit atomics, match and redux
    # (appended: opcodes stay stable).
    ("FDIV", (D_R, A_R, B_RIC), (FDIV_PREC, RND, FTZ), "fma", "fdiv",
     "sequence: RN/FULL: MUFU.RCP + FFMA refinement (d = a*r, e = fma(-b, d, a), d = fma(e, r, d)) with "
     "FCHK + CALL.REL slow path for RN; APPROX: MUFU.RCP + FMUL",
     "d = a / b rounded in rnd (every prec correctly rounded, within PTX's bounds: FULL and APPROX "
     "allow 2 ulp); multi-cycle"),
    ("FRND", (D_R, A_R), (F2I_RND, FTZ), "sfu", "sfu", "FRND / FRND.TRUNC / FRND.FLOOR / FRND.CEIL",
     "d = a rounded to an integral f32 (PTX cvt.rni/rzi/rmi/rpi.f32.f32)"),
    ("I2F.64", (D_R, A_W), (INT64_TYPE, RND), "sfu", "sfu", "I2F.S64 / I2F.U64", "d = f32(a), a 64-bit integer"),
    ("F2I.64", (D_W, A_R), (INT64_TYPE, F2I_RND, FTZ), "sfu", "sfu", "F2I.S64 / F2I.U64",
     "d = int64(round(a)), saturating, NaN -> the top bit alone"),
    ("DADD", (D_W, A_W, B_WIC), (RND, NEG_B), "fp64", "fp64", "DADD", "d = a + (NEG_B ? -b : b), f64"),
    ("DMUL", (D_W, A_W, B_WIC), (RND,), "fp64", "fp64", "DMUL", "d = a * b, f64"),
    ("DFMA", (D_W, A_W, B_WIC, C_W), (RND,), "fp64", "fp64", "DFMA", "d = a * b + c, one rounding, f64"),
    ("DSETP", (D_P, A_W, B_WIC, PS), (CMP_FLOAT, BOOL), "fp64", "fp64", "DSETP", "pd = (a cmp b) bool ps, f64"),
    ("DMNMX", (D_W, A_W, B_WIC), (MINMAX,), "fp64", "fp64",
     "DSETP.MIN/MAX + FSEL pair (sm_80/sm_90 have no DMNMX)",
     "d = min|max(a, b) with PTX's NaN rules, f64"),
    ("DDIV", (D_W, A_W, B_WIC), (RND,), "fp64", "ddiv",
     "sequence: MUFU.RCP64H + DFMA Newton iterations + DFMA correction, FCHK-style range check and "
     "CALL.REL slow path (div.rn.f64; rcp.rn.f64 is DDIV of 1.0)",
     "d = a / b correctly rounded in rnd, f64; multi-cycle"),
    ("DSQRT", (D_W, A_W), (RND,), "fp64", "ddiv",
     "sequence: MUFU.RSQ64H + DFMA Newton iterations + DFMA correction, CALL.REL slow path",
     "d = sqrt(a) correctly rounded in rnd, f64; multi-cycle"),
    ("DRND", (D_W, A_W), (F2I_RND,), "fp64", "fp64", "FRND.F64 (.TRUNC/.FLOOR/.CEIL)",
     "d = a rounded to an integral f64 (PTX cvt.rni/rzi/rmi/rpi.f64.f64)"),
    ("F2I.F64", (D_R, A_W), (F2I_TYPE, F2I_RND), "fp64", "fp64", "F2I.F64 / F2I.U32.F64",
     "d = int32(round(a)), saturating, NaN -> the top bit alone"),
    ("F2I.F64.64", (D_W, A_W), (INT64_TYPE, F2I_RND), "fp64", "fp64", "F2I.S64.F64 / F2I.U64.F64",
     "d = int64(round(a)), saturating, NaN -> the top bit alone"),
    ("I2F.F64", (D_W, A_R), (I2F_TYPE,), "fp64", "fp64", "I2F.F64 / I2F.F64.U32", "d = f64(a) (exact)"),
    ("I2F.F64.64", (D_W, A_W), (INT64_TYPE, RND), "fp64", "fp64", "I2F.F64.S64 / I2F.F64.U64",
     "d = f64(a), a 64-bit integer"),
    ("ATOMG.64", (D_W, A_W, B_I, C_W, E_W), (ATOM_OP, ATOM64_TYPE), "lsu", "lsu", "ATOMG.E.64 / RED.E.64",
     "d = global[a + b]; global[a + b] = op(d, c[, e]), 64-bit  (CAS: c = compare, e = new)", "atomic global"),
    ("ATOMS.64", (D_W, A_R, B_I, C_W, E_W), (ATOM_OP, ATOM64_TYPE), "lsu", "lsu", "ATOMS.64 / ATOMS.CAS.64",
     "d = shared[a + b]; shared[a + b] = op(d, c[, e]), 64-bit", "atomic shared"),
    ("LDS.64", (D_W, A_R, B_I), (), "lsu", "lsu", "LDS.64", "d = shared[a + b], 64-bit", "load shared"),
    ("STS.64", (A_R, B_I, C_W), (), "lsu", "lsu", "STS.64", "shared[a + b] = c, 64-bit", "store shared"),
    ("MATCH", (D_R, D_P, A_R, E_R), (MATCH_MODE,), "alu", "shfl", "MATCH.ANY / MATCH.ALL",
     "ANY: d = lanes of the warp taking part (in e) whose a equals this lane's; ALL: d = the taking-part "
     "lanes if all their a are equal, else 0, pd = whether they are (PTX match.sync)", "warp_sync"),
    ("MATCH.64", (D_R, D_P, A_W, E_R), (MATCH_MODE,), "alu", "shfl", "MATCH.ANY.U64 / MATCH.ALL.U64",
     "as MATCH on a 64-bit a", "warp_sync"),
    ("REDUX", (D_R, A_R, E_R), (REDUX_OP, INT_TYPE), "alu", "shfl",
     "REDUX (to a uniform register) + MOV R, UR",
     "d = op over a of the warp's lanes taking part (in e), wrapping add (PTX redux.sync)", "warp_sync"),
    ("LDL", (D_R, A_R, B_I), (SIZE,), "lsu", "lsu", "LDL", "d = local[a + b] (the thread's own local memory)",
     "load local"),
    ("STL", (A_R, B_I, C_R), (SIZE,), "lsu", "lsu", "STL", "local[a + b] = c", "store local"),
    ("LDL.64", (D_W, A_R, B_I), (), "lsu", "lsu", "LDL.64", "d = local[a + b], 64-bit", "load local"),
    ("STL.64", (A_R, B_I, C_W), (), "lsu", "lsu", "STL.64", "local[a + b] = c, 64-bit", "store local"),
    ("LD", (D_R, A_W, B_I), (SIZE, BYPASS), "lsu", "lsu", "LD.E [.STRONG.GPU]",
     "d = generic[a + b]: the shared, local or const window, else global (see Memory spaces)", "load generic"),
    ("ST", (A_W, B_I, C_R), (SIZE,), "lsu", "lsu", "ST.E", "generic[a + b] = c", "store generic"),
    ("LD.64", (D_W, A_W, B_I), (BYPASS,), "lsu", "lsu", "LD.E.64 [.STRONG.GPU]", "d = generic[a + b], 64-bit",
     "load generic"),
    ("ST.64", (A_W, B_I, C_W), (), "lsu", "lsu", "ST.E.64", "generic[a + b] = c, 64-bit", "store generic"),
    ("ATOM", (D_R, A_W, B_I, C_R, E_R), (ATOM_OP, ATOM_TYPE), "lsu", "lsu", "ATOM.E",
     "d = generic[a + b]; generic[a + b] = op(d, c[, e])  (CAS: c = compare, e = new)", "atomic generic"),
    ("ATOM.64", (D_W, A_W, B_I, C_W, E_W), (ATOM_OP, ATOM64_TYPE), "lsu", "lsu", "ATOM.E.64",
     "d = generic[a + b]; generic[a + b] = op(d, c[, e]), 64-bit", "atomic generic"),
    # Half precision (f16/bf16, scalar and packed x2), conversions to and from f16/bf16, and carry
    # chains (appended: opcodes stay stable; executors in exec_half.py, selection in isel_half.py).
    # type F16/BF16; shape X2: both 16-bit elements, H0: element 0 only, the result zero-extended.
    ("HADD2", (D_R, A_R, B_RIC),
     (Mod("type", ("F16", "BF16")), Mod("shape", ("X2", "H0")), RND, FTZ, SAT, NEG_B), "fma", "fma",
     "HADD2 / HADD2.BF16_V2 (H0: .H0_H0 operands)", "d = a + (NEG_B ? -b : b) per element, rounded once"),
    ("HMUL2", (D_R, A_R, B_RIC), (Mod("type", ("F16", "BF16")), Mod("shape", ("X2", "H0")), RND, FTZ, SAT),
     "fma", "fma", "HMUL2 / HMUL2.BF16_V2", "d = a * b per element, rounded once"),
    ("HFMA2", (D_R, A_R, B_RIC, C_R),
     (Mod("type", ("F16", "BF16")), Mod("shape", ("X2", "H0")), RND, FTZ, SAT, _flag("RELU"), _flag("OOB")),
     "fma", "fma", "HFMA2 / HFMA2.BF16_V2 [.RELU] [.OOB]",
     "d = a * b + c per element, one rounding; RELU: negative -> +0; OOB: +0 where a or b is the OOB-NaN 0x7FF7"),
    ("HMNMX2", (D_R, A_R, B_RIC),
     (Mod("type", ("F16", "BF16")), Mod("shape", ("X2", "H0")), MINMAX, FTZ, _flag("NAN"), _flag("RELU")),
     "alu", "alu", "HMNMX2 / HMNMX2.BF16_V2 [.NAN] [.RELU]",
     "d = min|max(a, b) per element (-0 < +0; a NaN gives the other input, NAN: any NaN gives NaN); "
     "RELU: negative -> +0"),
    ("HSETP2", (D_P, A_R, B_RIC, PS),
     (Mod("type", ("F16", "BF16")), CMP_FLOAT, Mod("lane", ("H0", "H1")), FTZ, BOOL), "fma", "alu",
     "HSETP2 (.H0_H0 / .H1_H1 operands; one of its two predicates)", "pd = (a.lane cmp b.lane) bool ps"),
    ("HMUFU", (D_R, A_R), (Mod("fn", ("EX2", "TANH")), Mod("type", ("F16", "BF16")), Mod("shape", ("X2", "H0")),
                           FTZ), "sfu", "sfu",
     "MUFU.EX2.F16 / MUFU.TANH.F16 (.BF16_V2 on sm_90), one per element", "d = fn(a) per element"),
    ("F2F.16", (D_R, A_R),
     (Mod("dtype", ("F16", "BF16", "F32")), Mod("stype", ("F16", "BF16", "F32")),
      Mod("rnd", ("RN", "RZ", "RM", "RP", "RNI", "RZI", "RMI", "RPI")), FTZ, SAT, _flag("RELU"), _flag("SATFINITE")),
     "sfu", "sfu",
     "F2FP.F16.F32.PACK_AB / F2FP.BF16.F32.PACK_AB, HADD2.F32 (f16 -> f32), F2F.F16.F32 / F2F.BF16.F32 "
     "(directed), FRND.F16 (RNI..RPI)",
     "d = a converted from stype to dtype (f16, bf16, f32) rounded in rnd (RNI..RPI: to an integral value)"),
    ("F2F.16.F64", (D_R, A_W), (Mod("dtype", ("F16", "BF16")), RND, SAT, _flag("RELU"), _flag("SATFINITE")),
     "fp64", "fp64", "F2F.F16.F64 / F2F.BF16.F64", "d = f64 a rounded to dtype"),
    ("F2F.F64.16", (D_W, A_R), (Mod("stype", ("F16", "BF16")), SAT), "fp64", "fp64",
     "F2F.F64.F16 / F2F.F64.BF16", "d = f64(a) (exact)"),
    ("I2F.16", (D_R, A_R),
     (Mod("dtype", ("F16", "BF16")), I2F_TYPE, RND, SAT, _flag("RELU"), _flag("SATFINITE")), "sfu", "sfu",
     "I2F.F16 / I2F.BF16 (I2F.F16.S16 ...)", "d = f16|bf16(a), a 32-bit integer, rounded in rnd"),
    ("I2F.16.64", (D_R, A_W),
     (Mod("dtype", ("F16", "BF16")), INT64_TYPE, RND, SAT, _flag("RELU"), _flag("SATFINITE")), "sfu", "sfu",
     "I2F.F16.S64 / I2F.F16.U64", "d = f16|bf16(a), a 64-bit integer, rounded in rnd"),
    ("F2I.16", (D_R, A_R),
     (Mod("stype", ("F16", "BF16")), Mod("dtype", ("S32", "U32", "S16", "U16", "S8", "U8")), F2I_RND),
     "sfu", "sfu", "F2I.F16 / F2I.U32.F16 / F2I.S16.F16 ...",
     "d = int(round(a)) of dtype (zero-extended), saturating, NaN -> 0"),
    ("F2I.16.64", (D_W, A_R), (Mod("stype", ("F16", "BF16")), INT64_TYPE, F2I_RND), "sfu", "sfu",
     "F2I.S64.F16 / F2I.U64.F16", "d = int64(round(a)), saturating, NaN -> the top bit alone (F16), 0 (BF16)"),
    ("IADD3.CC", (D_R, D_P, A_R, B_RIC, PS), (Mod("op", ("ADD", "SUB")),), "alu", "alu",
     "IADD3 R, P, a, b, RZ / IADD3.X R, P, a, b, RZ, P (SUB: -b / ~b)",
     "ADD: d = a + b + ps, pd = carry-out; SUB: d = a + ~b + ps = a - b - !ps, pd = carry-out (the "
     "complement of the borrow, as NVIDIA's carry flag)"),
    ("IADD.64.CC", (D_W, D_P, A_W, B_WIC, PS), (Mod("op", ("ADD", "SUB")),), "alu", "alu",
     "IADD3 + IADD3.X pair, carry through both", "as IADD3.CC, 64-bit"),
    ("IMAD.CC", (D_R, D_P, A_R, B_RIC, C_R, PS), (Mod("mode", ("LO", "HI")), INT_TYPE), "fma", "fma",
     "IMAD / IMAD.HI.U32 + IADD3.X carry (IMAD.X, IMAD.HI.U32.X with a carry-in)",
     "d = (a * b).mode + c + ps, pd = the carry-out of the addition"),
    ("IMAD.64.CC", (D_W, D_P, A_W, B_WIC, C_W, PS), (Mod("mode", ("LO", "HI")), INT64_TYPE), "fma", "imad_wide",
     "IMAD.WIDE.U32 + IMAD.X sequence, IADD3.X carry", "as IMAD.CC, 64-bit"),
    # Tensor cores and asynchronous copies (appended: opcodes stay stable; executors in exec_matrix.py,
    # selection in isel_matrix.py).  Warp-collective: every one of the 32 lanes of the warp executes
    # HMMA/IMMA/LDSM together (a lane missing faults).  An MMA row computes ONE 8-row half of the
    # mma.sync D fragment (rows groupID, or groupID + 8, of every lane): SASS's HMMA.16816 / IMMA.16832
    # take four-register A operands the register allocator cannot hold, so a PTX mma is two of these,
    # each with the half's A pair (a0, a2) or (a1, a3), the B pair and the half's C/D pair (see "Tensor
    # cores and asynchronous copies" above).
    ("HMMA.16816.F32", (D_W, A_W, Operand("b", "W"), C_W), (Mod("atype", ("F16", "BF16")),), "tensor", "tensor",
     "half of HMMA.16816.F32 / HMMA.16816.F32.BF16",
     "d = rows of a (8 x 16 f16|bf16: a.lo k 0-7, a.hi k 8-15) times b (16 x 8) + c (8 x 8 f32), each element "
     "rounded once to f32 (xcc.semantics.matrix.mma, m16n8k16)", "collective tensor=hmma"),
    ("HMMA.16816.F16", (D_R, A_W, Operand("b", "W"), C_R), (), "tensor", "tensor", "half of HMMA.16816.F16",
     "as HMMA.16816.F32 with f16 inputs and f16x2 accumulators c and d (one register per half)",
     "collective tensor=hmma"),
    ("HMMA.1688.F32", (D_W, A_R, Operand("b", "R"), C_W), (Mod("atype", ("F16", "BF16")),), "tensor", "tensor",
     "half of HMMA.1688.F32 / HMMA.1688.F32.BF16",
     "d = rows of a (8 x 8 f16|bf16) times b (8 x 8) + c (8 x 8 f32) (m16n8k8)", "collective tensor=hmma"),
    ("HMMA.1688.F16", (D_R, A_R, Operand("b", "R"), C_R), (), "tensor", "tensor", "half of HMMA.1688.F16",
     "as HMMA.1688.F32 with f16 inputs and f16x2 accumulators", "collective tensor=hmma"),
    ("IMMA.16832", (D_W, A_W, Operand("b", "W"), C_W),
     (Mod("atype", ("S8", "U8")), Mod("btype", ("S8", "U8")), SAT), "tensor", "tensor",
     "half of IMMA.16832.S8.S8 / .U8 [.SAT]",
     "d = rows of a (8 x 32 bytes: a.lo k 0-15, a.hi k 16-31) times b (32 x 8) + c (8 x 8 s32), exact, "
     "wrapping mod 2^32 or with SAT clamped to s32 (m16n8k32)", "collective tensor=imma"),
    ("LDSM", (D_R, A_R, B_I), (Mod("mat", ("M0", "M1", "M2", "M3")), _flag("T")), "lsu", "lsu",
     "one matrix of LDSM.16.M88 / .M88.2 / .M88.4 [.T] (.MT88 with T)",
     "d = lane's 2 elements of the 8x8 b16 matrix whose rows are at shared[a + b] of lanes 8*mat .. 8*mat+7 "
     "(each 16-byte aligned): row lane/4, elements 2*(lane%4), +1; T: column lane/4 (PTX ldmatrix)",
     "load shared collective"),
    ("LDGSTS", (A_R, B_I, Operand("c", "W"), E_R), (Mod("size", ("32", "64", "128")), _flag("BYPASS"),
                                                    _flag("ZFILL")), "lsu", "lsu",
     "LDGSTS.E [.BYPASS] .32/.64/.128 [.ZFILL]",
     "start an asynchronous copy of size bits from global[c] to shared[a + b] in the thread's open group: "
     "the source is read now, the destination written at the DEPBAR that covers the group; ZFILL: only "
     "the first e bytes come from global, the rest are zeros (PTX cp.async)", "async_copy global"),
    ("LDGDEPBAR", (), (), "lsu", "lsu", "LDGDEPBAR",
     "close the thread's open LDGSTS group (PTX cp.async.commit_group)", "async_wait"),
    ("DEPBAR", (B_I,), (), "lsu", "lsu", "DEPBAR.LE SB0, b",
     "perform, in issue order, the thread's LDGSTS copies of all but its b most recently closed groups "
     "(PTX cp.async.wait_group b; wait_all is LDGDEPBAR + DEPBAR 0)", "async_wait"),
    # Calls (appended: opcodes stay stable; executors in exec_calls.py, selection in isel_calls.py; the
    # calling convention is in docs/isa.md, "Calls").  d.lo of CALL is the return pc (an instruction index
    # of the image), d.hi the caller's saved state: bits 0-15 its convergence-barrier membership B0..B15,
    # bits 16-22 its predicates P0..P6.
    ("CALL", (D_W, Operand("b", "L"), A_R), (), "cbu", "branch", "CALL.REL.NOINC",
     "d = {pc + 1, saved state}; the thread leaves every convergence barrier; pc = target.  Faults "
     "'call stack overflow' when a (the end of the callee's frame) exceeds the thread's local memory", "call"),
    ("RET", (A_W,), (), "cbu", "branch", "RET.REL.NODEC",
     "pc = a.lo; the convergence-barrier membership and predicates saved in a.hi are restored", "call leave"),
    ("SYSCALL", (A_R, B_I), (Mod("svc", ("TRAP", "VPRINTF", "ASSERTFAIL")),), "cbu", "branch",
     "BPT.TRAP / CALL.ABS.NOINC of the CUDA runtime's vprintf / __assertfail",
     "TRAP: fault with message b of the image; VPRINTF: printf(local[a], local[a + 8]) collected for the "
     "launch's output, local[a + 16] = arguments formatted; ASSERTFAIL: fault with the assertion message "
     "of local[a .. a + 40)", "call"),
    # Named barriers with thread counts and barrier reductions (appended: opcodes stay stable).  A thread
    # count c (a multiple of the warp size; RZ: every non-exited thread of the CTA) completes barrier b
    # once c threads arrived, counting both instructions; the result of BAR.RED is written when the
    # barrier completes.
    ("BAR.CNT", (B_RIC, C_R), (Mod("mode", ("SYNC", "ARV")),), "cbu", "branch", "BAR.SYNC b, c / BAR.ARV b, c",
     "SYNC: wait until c threads (RZ: the CTA) arrived at barrier b; ARV: arrive and go on", "barrier"),
    ("BAR.RED", (D_R, B_RIC, C_R, PS), (Mod("op", ("POPC", "AND", "OR")),), "cbu", "branch",
     "BAR.RED.POPC / BAR.RED.AND / BAR.RED.OR",
     "wait as BAR.CNT.SYNC, then d = the number of arrived threads whose ps is true (POPC), or 1 if all (AND) / "
     "any (OR) of them had ps true, else 0", "barrier barrier_wait"),
    # Warpgroup MMA, sm_90a wgmma (appended: opcodes stay stable; executors in exec_matrix.py, selection in
    # isel_matrix.py).  Warpgroup-collective: the 128 threads of a warpgroup (CTA threads 128g .. 128g+127)
    # execute WGMMA and WARPGROUP.* together (a thread missing faults).  SASS's HGMMA.64xNx16.F32 writes N/2
    # accumulator registers at once, which no operand of the register allocator can hold, so a PTX
    # wgmma.mma_async is N/2 WGMMA.F32, each computing ONE accumulator register (part b) from its own C
    # register e.  A wgmma completes when it executes (it reads shared memory then), so the fences and group
    # barriers order nothing more than any scheduling fence.
    ("WGMMA.F32", (D_R, A_W, B_I, C_W, E_R, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("F16", "BF16")),
      Mod("btype", ("F16", "BF16")), _flag("TRANS_A"), _flag("TRANS_B"), NEG_A, NEG_B, _flag("ACC_F16"), A_REGS),
     "tensor", "tensor",
     "one accumulator register of HGMMA.64xNx16.F32 (.F16 / .BF16) gdesc[a], gdesc[c]",
     "d = accumulator register b (< N/2) of D = A*B + (ps ? e : 0), m64nNk16 (modifier n = NN) over the "
     "warpgroup: A (64 x 16) at shared matrix descriptor a, B (16 x N) at descriptor c, K-major (TRANS_A / "
     "TRANS_B: MN-major), NEG_A / NEG_B negated; the descriptors and ps must be the same in all 128 threads; "
     "register b of thread t is element (16(t/32) + (t%32)/4 + 8((b/2)%2), 8(b/4) + 2(t%4) + b%2) of D; the "
     "exact sum rounded once to f32 (xcc.semantics.wgmma); ACC_F16 (.f16 accumulator, F16 A and B): e is the packed "
     "f16x2 register holding element b (its half b % 2), d the element's f16 bits zero-extended, the exact sum "
     "rounded once to f16; AREG (A in registers, SASS's HGMMA with R operand A; no TRANS_A): a is not a descriptor "
     "but the thread's A fragment registers (b/2)%2 (low) and (b/2)%2 + 2 (high), gathered over the warpgroup "
     "(xcc.semantics.wgmma.register_a)", "warpgroup tensor=gmma"),
    ("WARPGROUP.ARRIVE", (), (), "cbu", "branch", "WARPGROUP.ARRIVE",
     "wgmma.fence over the warpgroup: no effect on values (WGMMA completes when it executes); a scheduling fence",
     "sync warpgroup"),
    ("WARPGROUP.COMMIT", (), (), "cbu", "branch", "the gsb0 token of the last HGMMA",
     "wgmma.commit_group over the warpgroup: no effect on values; a scheduling fence", "sync warpgroup"),
    ("WARPGROUP.DEPBAR", (B_I,), (), "cbu", "branch", "WARPGROUP.DEPBAR.LE gsb0, b",
     "wgmma.wait_group b over the warpgroup: no effect on values (nothing is pending); a scheduling fence",
     "sync warpgroup"),
    ("FENCE.VIEW.ASYNC", (), (), "lsu", "lsu", "FENCE.VIEW.ASYNC.S",
     "fence.proxy.async: generic-proxy writes are already visible to WGMMA; a scheduling fence", "sync"),
    # mbarrier and bulk copies, sm_90 (appended: opcodes stay stable; executors in exec_sync.py, selection in
    # isel_hopper.py; the 64-bit object's layout and rules are xcc.semantics.mbarrier's, docs/semantics.md).  Each
    # addresses an 8-byte-aligned mbarrier at shared[a + b]; several threads on one object act in thread order.
    ("SYNCS.INIT", (A_R, B_I, C_R), (_flag("INVAL"),), "lsu", "lsu", "SYNCS.EXCH.64",
     "mbarrier.init: the mbarrier at shared[a + b] starts phase 0 expecting c arrivals (INVAL: mbarrier.inval, "
     "the object becomes invalid)", "sync"),
    ("SYNCS.ARRIVE", (D_W, A_R, B_I, C_R, E_R), (_flag("DROP"), _flag("NOCOMPLETE")), "lsu", "lsu",
     "SYNCS.ARRIVE.TRANS64[.RED].A1T0 / .ART0",
     "d = the mbarrier at shared[a + b] (its state); then an expect-tx of e bytes and an arrive-on of c arrivals "
     "(DROP: arrive_drop, the expected count drops by c too; NOCOMPLETE: completing the phase faults)", "sync"),
    ("SYNCS.TX", (A_R, B_I, C_R), (_flag("COMPLETE"),), "lsu", "lsu", "SYNCS.ARRIVE.TRANS64.A0TX",
     "an expect-tx (COMPLETE: complete-tx) of c bytes on the mbarrier at shared[a + b]", "sync"),
    ("SYNCS.PHASECHK", (D_P, A_R, B_I, C_W), (_flag("PARITY"), _flag("TRYWAIT")), "cbu", "branch",
     "SYNCS.PHASECHK.TRANS64[.TRYWAIT]",
     "pd = whether the phase of state c (PARITY: of parity c) of the mbarrier at shared[a + b] has completed; "
     "TRYWAIT: a thread whose phase is incomplete waits until it completes, then pd = 1", "sync"),
    ("BLKCP", (A_R, B_I, C_W, E_R), (BYPASS,), "lsu", "lsu", "UBLKCP.S.G",
     "cp.async.bulk of e bytes (a positive multiple of 16, 16-byte aligned addresses): global[c] -> shared[a + b], "
     "performed when it executes; the cycle model charges its global reads (BYPASS: not through the L1)",
     "sync global load"),
    ("BLKCP.S2G", (A_R, B_I, C_W, E_R), (), "lsu", "lsu", "UBLKCP.G.S",
     "cp.async.bulk of e bytes: shared[a + b] -> global[c] (as BLKCP), charged as global stores", "sync global"),
    ("BLKRED", (A_R, B_I, C_W, E_R), (Mod("op", ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")),
                                      Mod("type", ("U32", "S32", "F32", "U64", "S64", "F64"))), "lsu", "lsu",
     "UBLKRED.G.S", "cp.reduce.async.bulk of e bytes: each element of shared[a + b] reduced into global[c] as an "
     "atomic op.type (ATOMG's arithmetic), performed when it executes", "sync global"),
    ("TMALD", (D_R, A_R, B_I, C_W, E_W), (Mod("rank", ("R1", "R2")),), "lsu", "lsu", "UTMALDG.1D / .2D",
     "cp.async.bulk.tensor tile-mode load: the box of the tensor map at generic address c at coordinates e.lo "
     "(R2: and e.hi), signed, to shared[a + b] (xcc.semantics.tensormap), performed when it executes; d = its "
     "bytes (for the SYNCS.TX.COMPLETE that follows); the cycle model charges the box's global reads",
     "sync global load"),
    # FP8 tensor-core instructions, sm_89 mma.sync .e4m3/.e5m2 (appended: opcodes stay stable; executors in
    # exec_matrix.py, selection in isel_matrix.py): like IMMA.16832, one 8-row half of a m16n8k32 D fragment.
    ("HMMA.16832.F32", (D_W, A_W, Operand("b", "W"), C_W), (_FP8_A, _FP8_B), "tensor", "tensor",
     "half of HMMA.16832.F32.E4M3.E4M3 (.E5M2)",
     "d = rows of a (8 x 32 e4m3|e5m2: a.lo k 0-15, a.hi k 16-31) times b (32 x 8 e4m3|e5m2) + c (8 x 8 f32), each "
     "element the exact sum rounded once to f32 (xcc.semantics.matrix.mma, m16n8k32)", "collective tensor=hmma"),
    ("HMMA.16832.F16", (D_R, A_W, Operand("b", "W"), C_R), (_FP8_A, _FP8_B), "tensor", "tensor",
     "half of HMMA.16832.F16.E4M3.E4M3 (.E5M2)",
     "as HMMA.16832.F32 with f16x2 accumulators c and d (one register per half), rounded once to f16",
     "collective tensor=hmma"),
    # thread-block clusters, sm_90 (appended: opcodes stay stable; executors in exec_sync.py, selection in
    # isel_hopper.py; the barrier's rule is xcc.sim.waves's, distributed shared memory xcc.semantics.cluster's)
    ("UCGABAR.ARV", (), (), "cbu", "branch", "UCGABAR_ARV",
     "barrier.cluster.arrive: the thread arrives at its cluster's barrier and goes on", "sync"),
    ("UCGABAR.WAIT", (), (), "cbu", "branch", "UCGABAR_WAIT",
     "barrier.cluster.wait: the thread waits until every non-exited thread of every CTA of its cluster has "
     "arrived in the phase it arrived in", "sync"),
    # FP8 warpgroup MMA, sm_90a wgmma .e4m3/.e5m2 (appended: opcodes stay stable): as WGMMA.F32 with K = 32.
    ("QGMMA.F32", (D_R, A_W, B_I, C_W, E_R, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), _FP8_A, _FP8_B, NEG_A, NEG_B, _flag("ACC_F16"), A_REGS),
     "tensor", "tensor",
     "one accumulator register of QGMMA.64xNx32.F32.E4M3.E4M3 (.E5M2) gdesc[a], gdesc[c]",
     "as WGMMA.F32 for m64nNk32 with e4m3|e5m2 A (64 x 32) and B (32 x N), both K-major: d = accumulator "
     "register b of D = A*B + (ps ? e : 0), the exact sum rounded once to f32 (xcc.semantics.wgmma); ACC_F16 and "
     "AREG as WGMMA.F32's",
     "warpgroup tensor=gmma"),
    # 16-bit and packed-half atomics, sm_70/sm_90 atom.cas.b16 and atom.add.noftz.{f16,bf16}{,x2} (appended:
    # opcodes stay stable; executors in exec_memory.py, the half adds in xcc.sim.memory._half_atomic)
    ("ATOMG.H", (D_R, A_W, B_I, C_R, E_R), (ATOM_OP, HALF_ATOM_TYPE), "lsu", "lsu", "ATOMG.E.16 / ATOMG.E.ADD.F16x2",
     "as ATOMG on a 16-bit element (U16 CAS, F16/BF16 ADD/MIN/MAX: the low halves of c and e, d zero-extended) or "
     "a packed pair (F16X2/BF16X2 ADD/MIN/MAX, each half alone); ADD rounds to nearest, subnormals kept (.noftz); "
     "MIN/MAX as PTX min/max of the type (-0 < +0, a NaN gives the other value)",
     "atomic global"),
    ("ATOMS.H", (D_R, A_R, B_I, C_R, E_R), (ATOM_OP, HALF_ATOM_TYPE), "lsu", "lsu", "ATOMS.16 / ATOMS.ADD.F16x2",
     "as ATOMG.H on shared[a + b]", "atomic shared"),
    ("ATOM.H", (D_R, A_W, B_I, C_R, E_R), (ATOM_OP, HALF_ATOM_TYPE), "lsu", "lsu", "ATOM.E.16 / ATOM.E.ADD.F16x2",
     "as ATOMG.H on generic[a + b]", "atomic generic"),
    # rank-3 TMA tile loads (CUTLASS 3.x's maps: M/N, K, batch) (appended: opcodes stay stable)
    ("TMALD.3D", (D_R, A_R, B_RIC, C_W, E_W), (), "lsu", "lsu", "UTMALDG.3D",
     "cp.async.bulk.tensor.3d tile-mode load: as TMALD R2 at coordinates e.lo, e.hi and b (signed) to shared[a]; "
     "d = its bytes; the cycle model charges the box's global reads", "sync global load"),
    # TMA tile stores, reductions and prefetches (1d to 5d) and 4d/5d tile loads (appended: opcodes stay stable;
    # executors in exec_sync.py, selection in isel_hopper.py).  Five coordinates: e.lo, e.hi, b.lo, b.hi, a.hi.
    ("TMALD.ND", (D_R, A_W, B_WIC, C_W, E_W), (Mod("rank", ("R4", "R5")),), "lsu", "lsu", "UTMALDG.4D / .5D",
     "cp.async.bulk.tensor.4d/.5d tile-mode load: as TMALD at coordinates e.lo, e.hi, b.lo, b.hi (R5: and a.hi), "
     "signed, to shared[a.lo]; d = its bytes; the cycle model charges the box's global reads", "sync global load"),
    ("TMAST", (A_W, B_WIC, C_W, E_W), (Mod("rank", ("R1", "R2", "R3", "R4", "R5")),
                                        Mod("red", ("", "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")),
                                        _flag("I2C")),
     "lsu", "lsu", "UTMASTG / UTMAREDG",
     "cp.async.bulk.tensor tile-mode store: the box at shared[a.lo] to the tensor map at generic address c at "
     "coordinates e.lo, e.hi, b.lo, b.hi, a.hi (the first rank of them, signed); elements outside the tensor are not "
     "written (red: cp.reduce.async.bulk.tensor, reduced as atomics in the map's element type; I2C: .im2col_no_offs, "
     "the im2col map's column, xcc.semantics.tensormap.im2col_box with zero offsets); performed when it executes "
     "(xcc.semantics.tensormap)", "sync global store"),
    ("TMAPF", (A_W, B_WIC, C_W, E_W), (Mod("rank", ("R1", "R2", "R3", "R4", "R5")),), "lsu", "lsu", "UTMAPF",
     "cp.async.bulk.prefetch.tensor: the tensor map at generic address c and the rank checked (coordinates as "
     "TMAST's); moves no data", "sync"),
    # multicast TMA loads, .multicast::cluster (appended: opcodes stay stable)
    ("TMALD.MC", (D_R, A_W, B_WIC, C_W, E_W), (Mod("rank", ("R1", "R2", "R3", "R4")),), "lsu", "lsu",
     "UTMALDG.MULTICAST",
     "cp.async.bulk.tensor...multicast::cluster tile-mode load: as TMALD.ND at coordinates e.lo, e.hi, b.lo, b.hi "
     "(the first rank of them) to offset a.lo of the shared memory of each CTA of the cluster whose bit is set in "
     "the 16-bit ctaMask a.hi; d = the box's bytes; the cycle model charges the box's global reads",
     "sync global load"),
    ("SYNCS.TX.MC", (A_R, B_I, C_R, E_R), (), "lsu", "lsu", "SYNCS.ARRIVE.TRANS64.A0TX (multicast)",
     "a complete-tx of c bytes on the mbarrier at shared[a + b] of each CTA of the cluster whose bit is set in the "
     "16-bit ctaMask e (a multicast TMA load's completion)", "sync"),
    # im2col-mode TMA loads, .im2col (appended: opcodes stay stable)
    ("TMALD.I2C", (D_R, A_W, B_WIC, C_W, E_W), (Mod("rank", ("R3", "R4")),), "lsu", "lsu", "UTMALDG.IM2COL",
     "cp.async.bulk.tensor.3d/.4d.im2col load: the column of the im2col tensor map at generic address c at "
     "coordinates e.lo, e.hi, b.lo (R4: and b.hi), signed, with the 16-bit im2col offsets a.hi[15:0] (R4: and "
     "a.hi[31:16]) to shared[a.lo] (xcc.semantics.tensormap.im2col_box); d = its bytes; the cycle model charges "
     "its global reads", "sync global load"),
    # texture and surface objects, unified mode (appended: opcodes stay stable; executors in exec_texture.py,
    # selection in isel_texture.py; the descriptor and the fetch are xcc.semantics.texture's).  a: the object's
    # 64-bit handle; b: coordinates x (a surface's in bytes), y; e: z, layer (signed; unused ones zero).
    ("TEX", (D_R, A_W, Operand("b", "W"), C_R, E_W), (_TEX_DIM, Mod("ctype", ("F32", "S32")), _TEX_COMP,
                                                       Mod("gather", ("NONE", "R", "G", "B", "A")),
                                                       Mod("out", ("B32", "F16", "F16X2")),
                                                       Mod("mip", ("NONE", "BASE", "LEVEL")), _flag("MS")),
     "lsu", "lsu",
     "TEX / TLD / TLD4", "d = word comp of the fetch of the texture object a at coordinates b.lo, b.hi, e.lo (ctype "
     "F32: floats, filtered as its sampler says; S32: integer texels), layer e.hi (A1/A2/ACUBE; CUBE/ACUBE: the "
     "direction's cubemap face); gather: tld4's component "
     "of the four bilinear texels; out F16: half comp of the values rounded to f16, F16X2: packed pair comp; mip: "
     "a mipmapped texture's level 0 (NONE, BASE) or level of detail c (LEVEL, f32); MS (D2/A2, tex.2dms/.a2dms): "
     "the S32 texel b.lo, b.hi of sample e.lo, moved by the texel offsets packed in c as TEX.X packs them (RZ: "
     "none) (xcc.semantics.texture.fetch_sample)",
     "sync load"),
    ("TXQ", (D_R, A_W), (Mod("query", ("WIDTH", "HEIGHT", "DEPTH", "CHANNEL_DATA_TYPE", "CHANNEL_ORDER",
                                       "NORMALIZED_COORDS", "ARRAY_SIZE", "NUM_MIPMAP_LEVELS", "NUM_SAMPLES",
                                       "FILTER_MODE", "ADDR_MODE_0", "ADDR_MODE_1", "ADDR_MODE_2",
                                       "FORCE_UNNORMALIZED_COORDS", "MEMORY_LAYOUT")), _flag("SURF")), "lsu", "lsu",
     "TXQ / SUQUERY", "d = the query of the texture object a (SURF: suq, of the surface object a)", "sync load"),
    ("ISTYPEP", (D_P, A_W), (Mod("kind", ("TEXREF", "SAMPLERREF", "SURFREF")),), "lsu", "lsu", "(descriptor check)",
     "pd = whether a is a live object of the kind (a texture object is also a sampler)", "sync load"),
    ("SULD", (D_R, A_W, Operand("b", "W"), E_W), (_SU_DIM, Mod("size", ("B8", "B16", "B32")), _SU_VEC, _TEX_COMP,
                                                   _SU_MODE), "lsu", "lsu", "SULD.P / SULD.D",
     "d = element comp (size, zero-extended) of the vec-element surface load of object a at byte x b.lo, y b.hi, "
     "z e.lo, layer e.hi (mode: out of range traps, clamps or reads zero)", "sync load"),
    ("SULD.64", (D_W, A_W, Operand("b", "W"), E_W), (_SU_DIM, _SU_VEC, _TEX_COMP, _SU_MODE), "lsu", "lsu",
     "SULD.D.64", "as SULD with 64-bit elements", "sync load"),
    ("SUST", (A_W, Operand("b", "W"), C_R, E_W), (_SU_DIM, Mod("size", ("B8", "B16", "B32")), _SU_VEC, _TEX_COMP,
                                                   _SU_MODE, _flag("P")), "lsu", "lsu", "SUST.D / SUST.P",
     "element comp of the vec-element surface store at SULD's coordinates = c (its low size bits); ZERO drops it "
     "out of range; P (sust.p): x counts elements, c becomes channel comp of the surface's format", "sync store"),
    ("SUST.64", (A_W, Operand("b", "W"), C_W, E_W), (_SU_DIM, _SU_VEC, _TEX_COMP, _SU_MODE), "lsu", "lsu",
     "SUST.D.64", "as SUST with 64-bit elements", "sync store"),
    ("SURED", (A_W, Operand("b", "W"), C_R, E_W), (_SU_DIM, _SU_RED, Mod("type", ("U32", "S32")), _SU_MODE,
                                                    _flag("P")),
     "lsu", "lsu", "SURED.D / SURED.P", "the surface element at SULD's coordinates op= c, an atomic of the type "
     "(P: sured.p, x counts elements and the type's signedness is the surface format's)", "sync store"),
    ("SURED.64", (A_W, Operand("b", "W"), C_W, E_W), (_SU_DIM, _SU_RED, Mod("type", ("U64", "S64")), _SU_MODE,
                                                       _flag("P")),
     "lsu", "lsu", "SURED.D.64", "as SURED on 64-bit elements", "sync store"),
    # tex.grad's level of detail (appended: opcodes stay stable)
    ("TEXLOD", (D_R, A_W, Operand("b", "W"), E_W), (Mod("dim", ("D1", "D2")),), "lsu", "lsu", "(TEX.GRAD's LOD)",
     "d = tex.grad's level of detail (f32) of the texture object a for the gradients dPdx = b.lo (D2: and b.hi), "
     "dPdy = e.lo (D2: and e.hi): log2 of the longer gradient in level-0 texels (xcc.semantics.texture)",
     "sync load"),
    # tex.grad on 3d textures: six gradient values take two rows (appended: opcodes stay stable)
    ("TEXGRAD.SQ", (D_W, A_W, Operand("b", "W"), C_R), (), "lsu", "lsu", "(TEX.GRAD's LOD)",
     "d = the squared length (f64) of the gradient (b.lo, b.hi, c) in level-0 texels of the texture object a "
     "(xcc.semantics.texture.grad_sq)", "sync load"),
    ("TEXLOD.SQ", (D_R, Operand("b", "W"), E_W), (), "sfu", "sfu", "(TEX.GRAD's LOD)",
     "d = tex.grad's level of detail (f32): log2 of the square root of the larger of the f64 b and e "
     "(xcc.semantics.texture.lod_of_sq)"),
    # TF32 tensor-core instructions, sm_80 mma.sync m16n8k8 / m16n8k4 .f32.tf32.tf32.f32 (appended: opcodes stay
    # stable; executors in exec_matrix.py, selection in isel_matrix.py): one 8-row half of the m16n8 D fragment.
    ("HMMA.1688.F32.TF32", (D_W, A_W, Operand("b", "W"), C_W), (), "tensor", "tensor", "half of HMMA.1688.F32.TF32",
     "d = rows of a (8 x 8 tf32: a.lo k 0-3, a.hi k 4-7) times b (8 x 8 tf32: b.lo k 0-3, b.hi k 4-7) + c (8 x 8 "
     "f32), each element the exact sum rounded once to f32; a tf32 is an f32 with its low 13 bits ignored "
     "(xcc.semantics.matrix.mma, m16n8k8)", "collective tensor=hmma"),
    ("HMMA.1684.F32.TF32", (D_W, A_R, Operand("b", "R"), C_W), (), "tensor", "tensor", "half of HMMA.1684.F32.TF32",
     "as HMMA.1688.F32.TF32 on 8 x 4 rows of a and 4 x 8 b (m16n8k4)", "collective tensor=hmma"),
    # cp.async.mbarrier.arrive, sm_80 (appended: opcodes stay stable; executor in exec_sync.py, selection in
    # isel_hopper.py)
    ("LDGSTS.ARRIVE", (A_R, B_I), (_flag("NOINC"),), "lsu", "lsu", "ARRIVES.LDGSTSBAR.64 [.TRANSCNT]",
     "perform, in issue order, every pending LDGSTS copy of the thread (its open group included; the group "
     "counters unchanged), then an arrive-on of the mbarrier at shared[a + b]: NOINC counts it against the "
     "expected count, otherwise the pending count is incremented first (net zero) (PTX "
     "cp.async.mbarrier.arrive{.noinc}; xcc.semantics.mbarrier.copy_arrive)", "async_wait sync"),
    # TF32 warpgroup MMA, sm_90a wgmma.mma_async m64nNk8.f32.tf32.tf32 (appended: opcodes stay stable; executor in
    # exec_matrix.py, selection in isel_matrix.py)
    ("TGMMA.F32", (D_R, A_W, B_I, C_W, E_R, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("TF32",)), Mod("btype", ("TF32",)), NEG_A,
      NEG_B, A_REGS), "tensor", "tensor",
     "one accumulator register of HGMMA.64xNx8.F32.TF32 gdesc[a], gdesc[c]",
     "as WGMMA.F32 for m64nNk8 with tf32 A (64 x 8) and B (8 x N), 4-byte elements, both K-major: d = accumulator "
     "register b of D = A*B + (ps ? e : 0), each tf32 the upper 19 bits of its f32, the exact sum rounded once to "
     "f32 (xcc.semantics.wgmma); AREG as WGMMA.F32's",
     "warpgroup tensor=gmma"),
    # Integer warpgroup MMA, sm_90a wgmma.mma_async m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite} (appended: opcodes stay
    # stable; executor in exec_matrix.py, selection in isel_matrix.py)
    ("IGMMA.S32", (D_R, A_W, B_I, C_W, E_R, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("S8", "U8", "B1")),
      Mod("btype", ("S8", "U8", "B1")), SAT, A_REGS), "tensor", "tensor",
     "one accumulator register of IGMMA.64xNx32.S8.S8 (.U8) / BGMMA.64xNx256.AND.POPC gdesc[a], gdesc[c]",
     "as WGMMA.F32 for m64nNk32 with s8|u8 A (64 x 32) and B (32 x N), both K-major: d = accumulator register b "
     "(.s32) of D = A*B + (ps ? e : 0), exact, wrapping mod 2^32 or with SAT clamped to s32; B1 (m64nNk256, both "
     "B1): popc(A & B) over 256 bits (32 bytes, bit i of byte j element 8j + i) (xcc.semantics.wgmma); AREG as "
     "WGMMA.F32's",
     "warpgroup tensor=gmma"),
    # txq.level, a mipmap level's extent (appended: opcodes stay stable; executor in exec_texture.py, selection in
    # isel_texture.py)
    ("TXQ.LEVEL", (D_R, A_W, C_R), (Mod("query", ("WIDTH", "HEIGHT", "DEPTH")),), "lsu", "lsu", "TXQ (level)",
     "d = the extent query of mipmap level c (.s32) of the texture object a: the level-0 extent halved per level, "
     "at least 1 (0 for an absent dimension or a level the texture lacks) (xcc.semantics.texture.query_level)",
     "sync load"),
    # Bulk copies and reductions into another CTA of the cluster, and half-precision bulk reductions, sm_90
    # cp.{reduce.}async.bulk (appended: opcodes stay stable; executors in exec_sync.py, selection in isel_hopper.py)
    ("BLKCP.S2S", (A_R, B_I, C_R, E_R), (), "lsu", "lsu", "UBLKCP.S.S",
     "cp.async.bulk.shared::cluster.shared::cta of e bytes (as BLKCP): shared[a + b] -> the shared::cluster "
     "address c (a CTA of the cluster, xcc.semantics.cluster), performed when it executes", "sync"),
    ("BLKRED.S2S", (A_R, B_I, C_R, E_R), (Mod("op", ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")),
                                          Mod("type", ("U32", "S32", "U64"))), "lsu", "lsu", "UBLKRED.S.S",
     "cp.reduce.async.bulk.shared::cluster.shared::cta of e bytes: each element of shared[a + b] reduced into the "
     "shared::cluster address c as an atomic op.type (ATOMS's arithmetic), performed when it executes", "sync"),
    ("BLKRED.H", (A_R, B_I, C_W, E_R), (Mod("op", ("ADD", "MIN", "MAX")), Mod("type", ("F16", "BF16"))), "lsu",
     "lsu", "UBLKRED.G.S.F16", "cp.reduce.async.bulk.global.shared::cta of e bytes of .f16/.bf16 (ADD: .add.noftz, "
     "subnormals kept): each element of shared[a + b] reduced into global[c] as atom.global.op.noftz.type, "
     "performed when it executes", "sync global"),
    ("BLKCP.MC", (A_W, B_I, C_W, E_R), (), "lsu", "lsu", "UBLKCP.S.G.MULTICAST",
     "cp.async.bulk...multicast::cluster of e bytes (as BLKCP): global[c] -> offset a.lo + b of the shared memory "
     "of each CTA of the cluster whose bit is set in the 16-bit ctaMask a.hi, performed when it executes (its "
     "completion: SYNCS.TX.MC)", "sync global load"),
    ("TMAPF.I2C", (A_W, B_WIC, C_W, E_W), (Mod("rank", ("R3", "R4", "R5")),), "lsu", "lsu", "UTMAPF.IM2COL",
     "cp.async.bulk.prefetch.tensor...im2col: as TMAPF, the tensor map one made by cuTensorMapEncodeIm2col (the "
     "im2col offsets place no data: not operands); moves no data", "sync"),
    # TMA loads whose operands do not fit TMALD.ND/.MC/.I2C (5d im2col, 5d multicast, multicast im2col): the extra
    # operands in a fourth register pair, d (read), and the box's bytes from BOXBYTES (appended: opcodes stay stable)
    ("TMALD.X", (Operand("d", "W"), A_W, B_WIC, C_W, E_W), (Mod("rank", ("R1", "R2", "R3", "R4", "R5")),
                                                           _flag("I2C"), _flag("MC")), "lsu", "lsu",
     "UTMALDG (im2col / multicast, wide operands)",
     "cp.async.bulk.tensor load as TMALD.ND (coordinates e.lo, e.hi, b.lo, b.hi, a.hi, the first rank of them; "
     "shared offset a.lo) with I2C: .im2col, the 16-bit offsets d.lo[15:0], d.lo[31:16], d.hi[15:0] (rank - 2 "
     "of them), and MC: .multicast::cluster to each CTA of the cluster whose bit is set in the ctaMask d.hi[31:16]; "
     "performed when it executes; its completion: SYNCS.TX / SYNCS.TX.MC of BOXBYTES's count",
     "sync global load"),
    ("BOXBYTES", (D_R, C_W), (Mod("rank", ("R1", "R2", "R3", "R4", "R5")), _flag("I2C")), "lsu", "lsu",
     "(part of UTMALDG)",
     "d = the bytes of one box of the tensor map at generic address c (I2C: an im2col map's channelsPerPixel x "
     "pixelsPerColumn elements; else the tiled box, element strides applied), the map checked as a load of that "
     "rank and mode checks it", "sync"),
    # tex/tld4 with texel offsets or a depth compare (appended: opcodes stay stable; TEX's modifiers fill the field)
    ("TEX.X", (D_R, A_W, Operand("b", "W"), C_W, E_W), (_TEX_DIM, Mod("ctype", ("F32", "S32")), _TEX_COMP,
                                                         Mod("gather", ("NONE", "R", "G", "B", "A")),
                                                         Mod("out", ("B32", "F16", "F16X2")),
                                                         Mod("mip", ("NONE", "BASE", "LEVEL")), _flag("DC")),
     "lsu", "lsu", "TEX.AOFFI.DC / TLD4.AOFFI.DC",
     "as TEX (coordinates b.lo, b.hi, e.lo, layer e.hi; level of detail c.lo) with texel offsets packed 4 bits "
     "each (x bits 0-3, y 4-7, z 8-11, signed) in the coordinate slot the geometry leaves free: e.lo (D1, D2, A1, "
     "A2), e.hi (D3), none (CUBE, ACUBE); DC: depth compare against the f32 c.hi "
     "(xcc.semantics.texture.fetch/gather's offsets and dc)", "sync load"),
    # tex.grad on cube geometries: the direction and one gradient per row (appended: opcodes stay stable)
    ("TEXGRAD.CUBE", (D_W, A_W, Operand("b", "W"), C_W, E_W), (), "lsu", "lsu", "(TEX.GRAD's LOD)",
     "d = the squared length (f64) of the gradient (c.hi, e.lo, e.hi) in level-0 texels of the face the direction "
     "(b.lo, b.hi, c.lo) picks of the cubemap texture object a (xcc.semantics.texture.grad_sq_cube)", "sync load"),
    # atom.cas.b128 / atom.exch.b128 (sm_90): one 16-byte transaction.  The word holds two register pairs, so
    # a CAS's new value goes in, and the old bits 127:64 come out, through the thread's 128-bit atomic latch X
    # (appended: opcodes stay stable)
    ("ATOMX.SET", (C_W, E_W), (), "alu", "alu", "(part of ATOMG.E.CAS.128)",
     "X = {c, e} (c bits 63:0): the new value of the ATOM*.128 CAS that follows", "latch"),
    ("ATOMG.128", (D_W, A_W, B_I, C_W, E_W), (ATOM128_OP,), "lsu", "lsu", "ATOMG.E.EXCH.128 / ATOMG.E.CAS.128",
     "old = global[a + b], 16 bytes; global[a + b] = EXCH, ST: {c, e}, CAS: old == {c, e} ? X : old (c bits "
     "63:0), LD: unchanged, in one step; d = old bits 63:0, X = old", "atomic global latch"),
    ("ATOMS.128", (D_W, A_R, B_I, C_W, E_W), (ATOM128_OP,), "lsu", "lsu", "ATOMS.EXCH.128 / ATOMS.CAS.128",
     "as ATOMG.128 on shared[a + b]", "atomic shared latch"),
    ("ATOM.128", (D_W, A_W, B_I, C_W, E_W), (ATOM128_OP,), "lsu", "lsu", "ATOM.E.EXCH.128 / ATOM.E.CAS.128",
     "as ATOMG.128 on generic[a + b]", "atomic generic latch"),
    ("ATOMX.GET", (D_W, A_W), (), "alu", "alu", "(part of ATOMG.E.CAS.128)",
     "d = X bits 127:64: the old high half of the ATOM*.128 before it, whose d is a (read for ordering only)",
     "latch"),
    # Sparse warpgroup MMA, sm_90a wgmma.mma_async.sp m64nNk32 .f16/.bf16 (appended: opcodes stay stable; executor in
    # exec_matrix.py, selection in isel_matrix.py)
    ("WGMMA.SP", (D_R, A_W, B_I, C_W, E_W, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("F16", "BF16")),
      Mod("btype", ("F16", "BF16")), _flag("TRANS_A"), _flag("TRANS_B"), NEG_A, NEG_B, _flag("ACC_F16"), A_REGS,
      Mod("sel", ("SEL0", "SEL1"))), "tensor", "tensor",
     "one accumulator register of HGMMA.64xNx32.F32.SP (.F16 / .BF16) gdesc[a], gdesc[c]",
     "as WGMMA.F32 for m64nNk32 with a 2:4 sparse A: a (descriptor or AREG registers) is the compressed A "
     "(64 x 16, a dense m64nNk16 A's layout), c B (32 x N); e.lo the accumulator register, e.hi the thread's "
     "metadata register, the pair of each quad that modifier sel names holding it (xcc.semantics.wgmma.sparse_a); "
     "d = accumulator register b of D = A*B + (ps ? e.lo : 0), the exact sum rounded once",
     "warpgroup tensor=gmma"),
    # Sparse warpgroup MMA of the other kinds, sm_90a wgmma.mma_async.sp m64nNk16 .tf32, m64nNk64 .e4m3/.e5m2 and
    # .s8/.u8 (appended: opcodes stay stable; WGMMA.SP's modifiers fill the field; executor in exec_matrix.py)
    ("TGMMA.SP", (D_R, A_W, B_I, C_W, E_W, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("TF32",)), Mod("btype", ("TF32",)), NEG_A,
      NEG_B, A_REGS, Mod("sel", ("SEL0", "SEL1"))), "tensor", "tensor",
     "one accumulator register of HGMMA.64xNx16.F32.TF32.SP gdesc[a], gdesc[c]",
     "as WGMMA.SP for m64nNk16 with a 1:2 sparse tf32 A: a the compressed A (64 x 8, a dense m64nNk8 A's layout), "
     "c B (16 x N), both K-major; e.lo the accumulator, e.hi the metadata (xcc.semantics.wgmma.sparse_a)",
     "warpgroup tensor=gmma"),
    ("QGMMA.SP", (D_R, A_W, B_I, C_W, E_W, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), _FP8_A, _FP8_B, NEG_A, NEG_B, _flag("ACC_F16"), A_REGS,
      Mod("sel", ("SEL0",))), "tensor", "tensor",
     "one accumulator register of QGMMA.64xNx64.F32.SP (.E4M3 / .E5M2) gdesc[a], gdesc[c]",
     "as WGMMA.SP for m64nNk64 with a 2:4 sparse e4m3|e5m2 A: a the compressed A (64 x 32, a dense m64nNk32 A's "
     "layout), c B (64 x N), both K-major; e.lo the accumulator, e.hi the metadata (xcc.semantics.wgmma.sparse_a)",
     "warpgroup tensor=gmma"),
    ("IGMMA.SP", (D_R, A_W, B_I, C_W, E_W, PS),
     (Mod("n", tuple(f"N{8 * i}" for i in range(1, 33))), Mod("atype", ("S8", "U8")), Mod("btype", ("S8", "U8")),
      SAT, A_REGS, Mod("sel", ("SEL0",))), "tensor", "tensor",
     "one accumulator register of IGMMA.64xNx64.S32.SP (.S8 / .U8) gdesc[a], gdesc[c]",
     "as IGMMA.S32 for m64nNk64 with a 2:4 sparse s8|u8 A: a the compressed A (64 x 32, a dense m64nNk32 A's "
     "layout), c B (64 x N), both K-major; e.lo the .s32 accumulator, e.hi the metadata "
     "(xcc.semantics.wgmma.sparse_a); exact, wrapping or with SAT clamped to s32",
     "warpgroup tensor=gmma"),
]


def _classes(mn: str, words: str) -> tuple[frozenset[str], str | None, str | None]:
    """(classes, space, tensor family) of a row's class words."""
    classes, space, family = set(), None, None
    for w in words.split():
        if w in SPACES:
            space = w
        elif w.startswith("tensor="):
            family = w.removeprefix("tensor=")
            assert family in TENSOR_FAMILIES, f"{mn}: unknown tensor family {family!r}"
            classes.add("tensor")
        else:
            assert w in CLASSES, f"{mn}: unknown instruction class {w!r}"
            classes.add(w)
    return frozenset(classes), space, family


def _build() -> tuple[dict[str, InstrDef], dict[int, InstrDef]]:
    by_name, by_op = {}, {}
    for opcode, (mn, operands, mods, pipe, lat, sass, doc, *words) in enumerate(_ROWS, start=1):
        d = InstrDef(mn, opcode, tuple(operands), tuple(mods), pipe, lat, sass, doc,
                     *_classes(mn, words[0] if words else ""))
        width = sum(m.width for m in d.mods)
        assert width <= FIELDS["mods"][1], f"{mn}: modifiers need {width} bits"
        by_name[mn] = by_op[opcode] = d
    return by_name, by_op


TABLE, BY_OPCODE = _build()


def of_class(name: str) -> frozenset[str]:
    """The mnemonics of the rows of class ``name`` (a word of :data:`CLASSES`)."""
    assert name in CLASSES, name
    return frozenset(mn for mn, d in TABLE.items() if name in d.classes)


# -- instruction classes, derived from the rows --------------------------------------------------------------
EFFECTS = frozenset(mn for mn, d in TABLE.items() if d.has_effects)
"""Instructions with effects beyond their register results (never removed as dead code)."""
FENCES = frozenset(mn for mn, d in TABLE.items() if d.is_fence)
"""Instructions nothing is scheduled across."""
LOADS = of_class("load")
STORES = of_class("store")
ATOMICS = of_class("atomic")
CALLS = of_class("call")
"""CALL, RET, SYSCALL: the callee or caller may overwrite any register."""
LEAVES = of_class("leave")
"""Control never continues to the next instruction (an unguarded BRA neither: not a class, a guard)."""
CTA_BARRIERS = of_class("barrier")
BARRIER_WAITS = of_class("barrier_wait")
"""CTA barriers that always wait for their barrier to complete (BAR.CNT waits or not by its mode)."""
BRANCH_TARGETS = frozenset(mn for mn, d in TABLE.items()
                           if any(o.kind == "L" for o in d.operands) and "call" not in d.classes)
"""Instructions whose operand b is a branch target within the function (BRA, BSSY; CALL's is a function)."""
MEMORY_SPACE = {mn: d.space for mn, d in TABLE.items() if d.space is not None}
"""The state space each memory instruction addresses (LDGSTS: its global source)."""
CONSTANT_LOADS = frozenset(mn for mn, d in TABLE.items() if d.is_load and d.space == "const")
"""Loads from a constant bank (LDC, LDC.64): the same value wherever they execute."""
TENSOR_FAMILY = {mn: d.tensor for mn, d in TABLE.items() if d.tensor is not None}
"""Each tensor-core instruction's family (Nsight's op kind of the tensor pipe)."""
LDGSTS_BYTES = {v: int(v) // 8 for v in TABLE["LDGSTS"].mod("size").values}
"""The async copy's size modifier -> the bytes it copies (cp.async cp-size 4, 8, 16)."""

# The PTX mma.sync shape (m, n, k) each HMMA/IMMA half instruction computes 8 rows of, and the product a
# WGMMA.F32 contributes to: one accumulator register of a warpgroup's m64nNk16 (64 x N x 16 over 4 warps x N/2
# instructions: 32 elements of k = 16 each, as 8 x 4 x 16).
MMA_SHAPE = {"HMMA.16816.F32": (16, 8, 16), "HMMA.16816.F16": (16, 8, 16), "HMMA.1688.F32": (16, 8, 8),
             "HMMA.1688.F16": (16, 8, 8), "IMMA.16832": (16, 8, 32), "WGMMA.F32": (16, 4, 16),
             "HMMA.16832.F32": (16, 8, 32), "HMMA.16832.F16": (16, 8, 32), "QGMMA.F32": (16, 4, 32),
             "HMMA.1688.F32.TF32": (16, 8, 8), "HMMA.1684.F32.TF32": (16, 8, 4), "TGMMA.F32": (16, 4, 8),
             "IGMMA.S32": (16, 4, 32), "WGMMA.SP": (16, 4, 32), "TGMMA.SP": (16, 4, 16), "QGMMA.SP": (16, 4, 64),
             "IGMMA.SP": (16, 4, 64)}


def tensor_ops(mnemonic: str) -> int:
    """Multiply-add ops (2 per product) one warp's tensor-core instruction ``mnemonic`` performs: a half (or
    WGMMA register) is 8 of the m rows of its :data:`MMA_SHAPE`."""
    m, n, k = MMA_SHAPE[mnemonic]
    return 2 * (m // 2) * n * k


SPECIAL_REGS = ("SR_TID.X", "SR_TID.Y", "SR_TID.Z", "SR_NTID.X", "SR_NTID.Y", "SR_NTID.Z",
                "SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z", "SR_NCTAID.X", "SR_NCTAID.Y", "SR_NCTAID.Z",
                "SR_LANEID", "SR_WARPID", "SR_NWARPID", "SR_SMID", "SR_NSMID", "SR_CLOCKLO", "SR_CLOCK64",
                "SR_LANEMASK_EQ", "SR_LANEMASK_LT", "SR_LANEMASK_LE", "SR_LANEMASK_GT", "SR_LANEMASK_GE",
                "SR_GLOBALTIMER",
                # thread-block clusters, sm_90 (appended: indices stay stable; values in xcc.semantics.cluster)
                "SR_CLUSTER_CTARANK", "SR_CLUSTER_NCTARANK", "SR_IS_EXPLICIT_CLUSTER",
                "SR_CLUSTER_CTAID.X", "SR_CLUSTER_CTAID.Y", "SR_CLUSTER_CTAID.Z",
                "SR_CLUSTER_NCTAID.X", "SR_CLUSTER_NCTAID.Y", "SR_CLUSTER_NCTAID.Z",
                "SR_CLUSTERID.X", "SR_CLUSTERID.Y", "SR_CLUSTERID.Z",
                "SR_NCLUSTERID.X", "SR_NCLUSTERID.Y", "SR_NCLUSTERID.Z")
SR_INDEX = {name: i for i, name in enumerate(SPECIAL_REGS)}

# Constant bank 0 layout (as on NVIDIA GPUs: launch dimensions first, then the parameters).
CBANK_NTID = 0x0  # ntid.x, .y, .z
CBANK_NCTAID = 0xC  # nctaid.x, .y, .z
CBANK_DYNAMIC_SMEM = 0x18  # the launch's dynamic shared memory bytes (%dynamic_smem_size)
CBANK_TOTAL_SMEM = 0x1C  # static + dynamic shared memory of a CTA, rounded up to 128 bytes (%total_smem_size)
CBANK_GLOBALS = 0x20  # the addresses of the kernel's module-level .global variables, 8 bytes each
CBANK_GRIDID = 0x148  # the launch's %gridid (64 bits)
CBANK_GRAPH_EXEC = 0x150  # %current_graph_exec: the executable graph launching the kernel, 0 outside one
CBANK_ENVREG = 0x158  # %envreg2 (low word) and %envreg1 (high word): a cooperative launch's grid-sync workspace
CBANK_PARAMS = 0x160
MAX_GLOBALS = (CBANK_GRIDID - CBANK_GLOBALS) // 8
LAUNCH_SREGS = {"dynamic_smem_size": (CBANK_DYNAMIC_SMEM, 1), "total_smem_size": (CBANK_TOTAL_SMEM, 1),
                "gridid": (CBANK_GRIDID, 2), "current_graph_exec": (CBANK_GRAPH_EXEC, 2)}
"""Special registers the launch writes into constant bank 0: PTX name -> (offset, 32-bit words)."""
ENVREGS = {"envreg2": CBANK_ENVREG, "envreg1": CBANK_ENVREG + 4}
"""The ``%envreg`` special registers the launch writes into constant bank 0, by PTX name: the 64-bit address
of the grid-sync workspace of a cooperative launch (0 otherwise), which nvcc's
``cooperative_groups::this_grid().sync()`` reads as ``envreg1 << 32 | envreg2``."""

# -- the generic address space (PTX ISA 9.0 section 6.4.1, "Generic addressing") --------------------------
WINDOW_BYTES = 1 << 32
"""Size of each generic-space window (shared, local, const, param)."""
WINDOWS = {"shared": 0x7FFD_0000_0000, "local": 0x7FFE_0000_0000, "const": 0x7FFF_0000_0000,
           "param": 0x8000_0000_0000}
"""Generic address of byte 0 of each state space's window (above the global heap's base, as NVIDIA
places its shared and local windows high in the address space; low 32 bits zero).  The param window
shows the launch's kernel parameters (constant bank 0 from :data:`CBANK_PARAMS`), read-only."""
