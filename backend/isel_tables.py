"""The data of instruction selection: IR names (PTX modifiers, ops, special registers) -> xg1 modifiers and
opcodes, and the truth tables the rules emit.  Pure data, no code: the rules (``isel_*.py``) look these up.
"""

from __future__ import annotations

# LOP3 truth tables (bit (a<<2 | b<<1 | c)) and PLOP3 ones (bit (pa<<1 | ps))
LUT_AND, LUT_OR, LUT_XOR, LUT_NOT_A = 0xC0, 0xFC, 0x3C, 0x0F
LUT_SELECT = 0xE2  # (a & b) | (c & ~b)
PLUT_AND, PLUT_OR, PLUT_XOR, PLUT_NOT_A, PLUT_A = 0x8, 0xE, 0x6, 0x3, 0xC
# IR logic op -> (LOP3 table for registers, PLOP3 table for predicates)
LOGIC = {"and": (LUT_AND, PLUT_AND), "or": (LUT_OR, PLUT_OR), "xor": (LUT_XOR, PLUT_XOR)}
PRMT_PACK_LO16 = 0x5410  # d = a[15:0] | c[15:0] << 16
PRMT_PACK_BYTES = 0x0040  # byte 0 = a.b0, byte 1 = c.b0

# comparisons: PTX cmp -> the ISETP/FSETP cmp modifier; the complement (negated) and mirror (swapped operands)
INT_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
           "lo": "LT", "ls": "LE", "hi": "GT", "hs": "GE"}
UNSIGNED_CMPS = ("lo", "ls", "hi", "hs")
FLOAT_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE", "num": "NUM", "nan": "NAN",
             "equ": "EQU", "neu": "NEU", "ltu": "LTU", "leu": "LEU", "gtu": "GTU", "geu": "GEU"}
COMPLEMENT = {"LT": "GEU", "LE": "GTU", "GT": "LEU", "GE": "LTU", "EQ": "NEU", "NE": "EQU", "NUM": "NAN"}
COMPLEMENT.update({v: k for k, v in COMPLEMENT.items()})
MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE", "LTU": "GTU", "GTU": "LTU",
          "LEU": "GEU", "GEU": "LEU", "EQU": "EQU", "NEU": "NEU", "NUM": "NUM", "NAN": "NAN"}

# PTX special registers -> SR_<name> of isa.SPECIAL_REGS (ntid/nctaid are read from constant bank 0)
SREG_NAMES = {"tid": "TID", "ctaid": "CTAID", "laneid": "LANEID", "warpid": "WARPID", "nwarpid": "NWARPID",
              "smid": "SMID", "nsmid": "NSMID", "clock": "CLOCKLO", "clock64": "CLOCK64",
              "lanemask_eq": "LANEMASK_EQ", "lanemask_lt": "LANEMASK_LT", "lanemask_le": "LANEMASK_LE",
              "lanemask_gt": "LANEMASK_GT", "lanemask_ge": "LANEMASK_GE", "globaltimer": "GLOBALTIMER",
              **{r: r.upper() for r in ("cluster_ctarank", "cluster_nctarank", "is_explicit_cluster",
                                        "cluster_ctaid", "cluster_nctaid", "clusterid", "nclusterid")}}
# IR op -> the MUFU fn modifier
MUFU = {"rcp": "RCP", "sqrt": "SQRT", "rsqrt": "RSQ", "ex2": "EX2", "lg2": "LG2", "sin": "SIN", "cos": "COS",
        "tanh": "TANH"}
# IR shift op -> its opcode (".64" appended for 64-bit values)
SHIFTS = {"shl": "SHL", "shr": "SHR"}
# f64 sqrt / rcp -> its opcode
F64_UNARY = {"sqrt": "DSQRT", "rcp": "DDIV"}

# memory: the state space -> the opcode infix (LD<p>, ST<p>, ATOM<p>), and sub-word types -> the size modifier
MEM_PREFIX = {"global": "G", "generic": "", "shared": "S", "local": "L", "param": "L"}
SUB_WORD_SIZE = {(8, "u"): "U8", (8, "b"): "U8", (8, "s"): "S8", (16, "u"): "U16", (16, "b"): "U16",
                 (16, "s"): "S16"}
ATOM_KIND = {"u": "U", "b": "U", "s": "S", "f": "F"}  # + bits: the ATOM* type modifier

# synchronisation and warp-collective modifiers
FENCE_SCOPE = {"cta": "CTA", "sys": "SYS"}  # anything else (gl, gpu): GPU
VOTE_MODE = {"all": "ALL", "any": "ANY", "uni": "EQ"}  # vote.ballot is VOTE's d, not a mode
REDUX_OP = {"add": "SUM"}  # otherwise the PTX name in capitals

# IR attributes (PTX modifiers) that no selector rule implements yet: an instruction carrying one is
# refused rather than compiled as if the modifier were absent.
UNIMPLEMENTED_FLAGS = ("relu", "NaN", "satfinite", "oob")
# IR ops that end a block: the phi copies of its successor go before them
TERMINATORS = ("br", "cbr", "ret", "exit", "trap")
