"""A random PTX program generator for translation validation (Csmith / YARPGen in spirit), seeded and deterministic.

``generate(seed)`` gives a :class:`Program`: one ``.entry`` kernel ``k(out, in, n)`` and a few ``.func`` device
functions, whose every thread computes on a handful of variables (initialised from the input buffer) and writes
them, its scratch words and its ``.local`` slots to its own block of the output buffer.  The program is a tree of
statements (:class:`Leaf`, :class:`If`, :class:`Loop`) kept beside the text, so the reducer of
:mod:`translation_validation` can delete statements and render the program again.

What it generates, and why each is free of undefined behaviour (PTX ISA 8.x, "Instructions"):

* integer arithmetic on s32/u32/s64/u64 (``add sub mul.lo mul.hi mul.wide mad.lo min max and or xor not neg shl shr
  popc clz brev cvt selp setp``): wrap-around and clamped shift amounts are defined; ``div``/``rem`` only by a
  divisor forced non-zero (``or 1``), signed ones only by a positive divisor (no ``INT_MIN / -1``);
* f32 ``add/sub/mul/fma`` with explicit ``.rn``, ``min max neg abs``, ``cvt.rn.f32.s32`` and the saturating
  ``cvt.rzi.s32.f32`` (NaN -> 0): defined bit for bit except NaN payloads, which the comparison treats as equal;
* predicates: ``setp`` + ``selp``, guarded instructions (``@%p`` / ``@!%p``);
* nested loops whose trip counts are bounded (a constant, the uniform parameter ``n`` masked, or a variable masked to
  0..3; dedicated counter and bound registers), do-while and while forms, early exits, ``.pragma "nounroll";``;
* if/else on uniform values and divergent ones (``%tid``, data);
* shared memory: each thread writes only its own word, then ``bar.sync``, reads any word, ``bar.sync`` (no race), only
  in converged code; warp ``shfl.sync`` (up/down/bfly/idx) and ``vote.sync`` (ballot/any/all/uni) only in
  converged code (blocks are whole warps); ``activemask`` only before the kernel's first divergent branch (after a
  divergent region PTX does not promise that the threads run together again: the IR interpreter, for one, runs
  the threads that skipped a call on ahead of those inside it); and no warp collective after a call in divergent
  code, nor a ``bar.sync`` (the known "no reconvergence after a divergent loop with a call" of
  tests/test_debug_builds.py: the IR interpreter runs ``shfl.sync``/``vote.sync`` with a full member mask on part
  of the warp, and compiled code deadlocks at the next ``bar.sync``, part of the warp still at the loop's BSYNC);
* ``.local`` memory as nvcc ``-G`` uses it (a ``__local_depot`` addressed through ``%SPL``, and generically through
  ``%SP = cvta.local %SPL``): slots zeroed first, every index masked into the array;
* global loads from the input buffer at masked indices (in bounds), with the address arithmetic repeated as
  optimisers see it, through ``cvta.to.global`` or generically through the raw parameter; stores only to the
  thread's own output block;
* ``.func`` device functions with ``.param`` arguments and a return value, called (``call``/``call.uni``) from the
  kernel and from other functions (no recursion).

Launches are 1-2 CTAs of 32 or 64 threads, so everything terminates after a few thousand instructions per thread.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
NIN = 256  # u32 words of the input buffer (a power of two: indices are masked into it)
NV32, NV64, NVF = 6, 2, 3  # variables of each kind
NSCRATCH = 8  # per-thread scratch words in the output buffer (stored and loaded back)
NLOCAL = 8  # u32 slots of the kernel's .local depot
OUT_WORDS = 32  # output words per thread: 2*NV64 + NV32 + NVF + NSCRATCH + NLOCAL <= 32
V64_AT, V32_AT, VF_AT, SCRATCH_AT, LOCAL_AT = 0, 2 * NV64, 2 * NV64 + NV32, 16, 24  # scratch 16-byte aligned
assert VF_AT + NVF <= SCRATCH_AT
assert SCRATCH_AT + NSCRATCH <= LOCAL_AT and LOCAL_AT + NLOCAL <= OUT_WORDS


# --------------------------------------------------------------------------- the statement tree


@dataclass
class Leaf:
    """Straight-line lines."""

    lines: list[str]


@dataclass
class If:
    """``if (cond) then else``: ``cond`` lines set predicate ``pred``; taken to ``else`` when it is false."""

    cond: list[str]
    pred: str
    label: str
    then: list = field(default_factory=list)
    other: list | None = None


@dataclass
class Loop:
    """A bounded loop: ``setup`` sets the counter and bound; ``form`` "do" (test at the bottom), "while" (test at
    the top: ``setp.ge; @p bra end``; a ``Break`` inside leaves through ``label_end``) or "for" (test at the top
    as compilers write it: ``setp.lt; @!p bra end``, the shape induction-variable passes look for)."""

    setup: list[str]
    counter: str
    bound: str
    pred: str
    label: str
    form: str
    nounroll: bool
    body: list = field(default_factory=list)


@dataclass
class Break:
    """``if (cond) break;`` inside a while loop."""

    cond: list[str]
    pred: str
    target: str


@dataclass
class Func:
    """A function: ``entry`` (the kernel) or a ``.func`` with ``nparams`` b32 arguments and a b32 result."""

    name: str
    entry: bool
    nparams: int
    regs: dict[str, tuple[str, int]]  # prefix -> (type, count)
    prologue: list[str]
    body: list
    epilogue: list[str]
    depot: int = 0  # bytes of .local depot


@dataclass
class Program:
    seed: int
    funcs: list[Func]  # callees first, the kernel last
    grid: int
    block: int
    n: int  # the kernel's uniform parameter
    inputs: list[int]  # NIN u32 words
    size: int = 20  # generate()'s arguments, to reproduce it
    avoid: frozenset[str] = frozenset()

    kernel = "k"

    @property
    def threads(self) -> int:
        return self.grid * self.block

    @property
    def f32_words(self) -> list[int]:
        """Output word offsets (within a thread's block) that hold f32 values."""
        return list(range(VF_AT, VF_AT + NVF))

    @property
    def text(self) -> str:
        return render(self)


# --------------------------------------------------------------------------- rendering


def render(prog: Program) -> str:
    out = [HEADER, ".shared .align 4 .b32 sh_k[64];\n"]
    for fn in prog.funcs:
        out.append(_render_func(fn))
    return "\n".join(out)


def _render_func(fn: Func) -> str:
    if fn.entry:
        head = f".visible .entry {fn.name}(\n\t.param .u64 {fn.name}_out,\n\t.param .u64 {fn.name}_in,\n" \
               f"\t.param .u32 {fn.name}_n\n)"
    else:
        params = ",\n".join(f"\t.param .b32 {fn.name}_param_{i}" for i in range(fn.nparams))
        head = f".func (.param .b32 {fn.name}_ret) {fn.name}(\n{params}\n)"
    lines = [head, "{"]
    if fn.depot:
        lines.append(f"\t.local .align 16 .b8 __local_depot_{fn.name}[{fn.depot}];")
    for prefix, (typ, count) in fn.regs.items():  # a count of 0: one register of that name
        lines.append(f"\t.reg .{typ} %{prefix}<{count}>;" if count else f"\t.reg .{typ} %{prefix};")
    lines += ["\t" + x for x in fn.prologue]
    _render_stmts(fn.body, lines, 1)
    lines += ["\t" + x for x in fn.epilogue]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_stmts(stmts: list, out: list[str], depth: int) -> None:
    pad = "\t" * depth
    for s in stmts:
        if isinstance(s, Leaf):
            out += [pad + x for x in s.lines]
        elif isinstance(s, Break):
            out += [pad + x for x in s.cond] + [f"{pad}@{s.pred} bra {s.target};"]
        elif isinstance(s, If):
            out += [pad + x for x in s.cond]
            target = f"{s.label}_else" if s.other is not None else f"{s.label}_end"
            out.append(f"{pad}@!{s.pred} bra {target};")
            _render_stmts(s.then, out, depth + 1)
            if s.other is not None:
                out.append(f"{pad}bra.uni {s.label}_end;")
                out.append(f"{s.label}_else:")
                _render_stmts(s.other, out, depth + 1)
            out.append(f"{s.label}_end:")
        elif isinstance(s, Loop):
            out += [pad + x for x in s.setup]
            out.append(f"{s.label}_head:")
            if s.nounroll:
                out.append(f'{pad}.pragma "nounroll";')
            if s.form == "while":
                out.append(f"{pad}setp.ge.u32 {s.pred}, {s.counter}, {s.bound};")
                out.append(f"{pad}@{s.pred} bra {s.label}_end;")
            elif s.form == "for":
                out.append(f"{pad}setp.lt.u32 {s.pred}, {s.counter}, {s.bound};")
                out.append(f"{pad}@!{s.pred} bra {s.label}_end;")
            _render_stmts(s.body, out, depth + 1)
            out.append(f"{pad}add.s32 {s.counter}, {s.counter}, 1;")
            if s.form in ("while", "for"):
                out.append(f"{pad}bra.uni {s.label}_head;")
            else:
                out.append(f"{pad}setp.lt.u32 {s.pred}, {s.counter}, {s.bound};")
                out.append(f"{pad}@{s.pred} bra {s.label}_head;")
            out.append(f"{s.label}_end:")
        else:  # pragma: no cover - the generator makes nothing else
            raise TypeError(s)


# --------------------------------------------------------------------------- generation

INT_BINOPS = [("add", "s32"), ("sub", "s32"), ("mul.lo", "s32"), ("min", "s32"), ("max", "s32"), ("min", "u32"),
              ("max", "u32"), ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("mul.hi", "s32"), ("mul.hi", "u32"),
              ("add", "u32"), ("sub", "u32")]
INT64_BINOPS = [("add", "s64"), ("sub", "s64"), ("mul.lo", "s64"), ("min", "s64"), ("max", "u64"),
                ("and", "b64"), ("or", "b64"), ("xor", "b64")]
CMPS = ["eq", "ne", "lt", "le", "gt", "ge"]
F32_CONSTS = ["0f3F800000", "0f40000000", "0fBF000000", "0f3E800000", "0f41200000", "0f00000000", "0f80000000"]


def opcode(line: str) -> str:
    """The mnemonic of an instruction line, without its guard: ``@!%p0 add.s32 ...`` -> ``add.s32``."""
    words = line.strip().split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words else ""


class _Gen:
    def __init__(self, seed: int, avoid: frozenset[str] = frozenset()):
        self.rng = random.Random(seed)
        self.labels = 0
        self.avoid = avoid
        self.diverged = False  # has the kernel branched on a thread-dependent value yet?
        self.divergent_call = False  # has it called a function in divergent code yet?

    # -- registers of the function being generated
    def start(self, fn_name: str, entry: bool):
        self.fn_name, self.entry, self.diverged, self.divergent_call = fn_name, entry, False, False
        self.count = {"t": 0, "td": 0, "tf": 0, "p": 0, "c": 0, "b": 0}

    def tmp(self, kind: str) -> str:
        n = self.count[kind]
        self.count[kind] += 1
        return f"%{kind}{n}"

    def label(self) -> str:
        self.labels += 1
        return f"$L_{self.fn_name}_{self.labels}"

    # -- operands
    def v32(self) -> str:
        return f"%v{self.rng.randrange(self.nv32)}"

    def v64(self) -> str:
        return f"%vd{self.rng.randrange(NV64)}"

    def vf(self) -> str:
        return f"%vf{self.rng.randrange(NVF)}"

    def imm32(self) -> str:
        r = self.rng
        return str(r.choice([0, 1, 2, 3, 7, 31, 32, -1, -7, 255, 0x7FFFFFFF, -0x80000000, r.randrange(-1000, 1000)]))

    def op32(self) -> str:
        return self.imm32() if self.rng.random() < 0.25 else self.v32()

    def opf(self) -> str:
        return self.rng.choice(F32_CONSTS) if self.rng.random() < 0.2 else self.vf()

    # -- statements
    def stmts(self, ctx: dict, budget: int) -> list:
        out = []
        while budget > 0:
            s, cost = self.stmt(ctx, budget)
            out += s if isinstance(s, list) else [s]
            budget -= cost
        return out

    def stmt(self, ctx: dict, budget: int):
        r = self.rng
        kinds = ["int"] * 6 + ["int64"] * 2 + ["f32"] * 3 + ["pred"] * 3 + ["divrem", "bits", "cvt", "const",
                                                                            "invariant"]
        if ctx["entry"]:
            kinds += ["load", "load", "scratch", "scratch", "vector"]
            if ctx["counter"] is not None:
                kinds += ["loopload"] * 4
            if ctx["converged"]:
                kinds += ["shared", "warp", "warp"] * (not self.divergent_call)
        if ctx["local"]:
            kinds += ["local", "local", "localvar"]
        if self.callees:
            kinds += ["call", "call"]
        if ctx["depth"] < 3 and budget > 3:
            kinds += ["if", "if", "loop", "loop", "flag"]
        if ctx["break_to"] is not None:
            kinds.append("break")
        kind = r.choice(kinds)
        if kind == "if":
            return self.if_stmt(ctx, budget)
        if kind == "loop":
            return self.loop_stmt(ctx, budget)
        if kind == "flag":
            return self.flag_stmt(ctx, budget)
        if kind == "break":
            p = self.tmp("p")
            return Break([f"setp.{r.choice(CMPS)}.s32 {p}, {self.v32()}, {self.op32()};"], p, ctx["break_to"]), 1
        for _ in range(100):  # a leaf without the avoided mnemonics
            lines = getattr(self, "s_" + kind)(ctx)
            if not any(opcode(x) in self.avoid for x in lines):
                return Leaf(lines), 1
        return Leaf([]), 1

    def cond(self, divergent: bool) -> tuple[list[str], str]:
        r, p = self.rng, self.tmp("p")
        if not divergent and not self.entry:  # a function's arguments may differ between threads: a constant
            return [f"setp.{r.choice(CMPS)}.u32 {p}, {r.randrange(0, 4)}, {r.randrange(0, 4)};"], p
        if not divergent:  # on the uniform parameter n
            return [f"setp.{r.choice(CMPS)}.u32 {p}, %n, {r.randrange(0, 8)};"], p
        choice = r.randrange(4)
        if choice == 0:
            t = self.tmp("t")
            return [f"mov.u32 {t}, %tid.x;", f"setp.{r.choice(CMPS)}.u32 {p}, {t}, {r.randrange(0, 64)};"], p
        if choice == 1:
            t = self.tmp("t")
            return [f"and.b32 {t}, {self.v32()}, {r.choice([1, 3, 16])};", f"setp.ne.u32 {p}, {t}, 0;"], p
        if choice == 2:
            return [f"setp.{r.choice(CMPS)}.f32 {p}, {self.vf()}, {self.opf()};"], p
        return [f"setp.{r.choice(CMPS)}.s32 {p}, {self.v32()}, {self.op32()};"], p

    def if_stmt(self, ctx: dict, budget: int):
        divergent = self.rng.random() < 0.7
        self.diverged |= divergent
        cond, p = self.cond(divergent)
        inner = dict(ctx, depth=ctx["depth"] + 1, converged=ctx["converged"] and not divergent)
        n = min(budget - 1, self.rng.randrange(1, 5))
        then = self.stmts(inner, n)
        other = self.stmts(inner, self.rng.randrange(1, 4)) if self.rng.random() < 0.5 else None
        return If(cond, p, self.label(), then, other), n + 1 + (len(other) if other else 0)

    def flag_stmt(self, ctx: dict, budget: int):
        """``x = cond ? 1 : 0`` by branches, then ``if (x != 0)``: a phi of constants deciding a branch (what jump
        threading threads)."""
        cond, p = self.cond(self.rng.random() < 0.7)
        self.diverged = True
        inner = dict(ctx, depth=ctx["depth"] + 1, converged=False)
        flag = self.v32()
        first = If(cond, p, self.label(), [Leaf([f"mov.u32 {flag}, 1;"])], [Leaf([f"mov.u32 {flag}, 0;"])])
        q = self.tmp("p")
        n = min(budget - 2, self.rng.randrange(1, 3))
        second = If([f"setp.ne.u32 {q}, {flag}, 0;"], q, self.label(), self.stmts(inner, n))
        return [first, second], n + 2

    def loop_stmt(self, ctx: dict, budget: int):
        r = self.rng
        c, b, p = self.tmp("c"), self.tmp("b"), self.tmp("p")
        kind = r.randrange(3)
        if kind == 0:  # a constant trip count
            setup, divergent = [f"mov.u32 {b}, {r.randrange(0, 5)};"], False
        elif kind == 1:  # the uniform parameter, masked (a function has none: a constant)
            setup, divergent = [f"and.b32 {b}, %n, 3;" if self.entry else f"mov.u32 {b}, 2;"], False
        else:  # data-dependent: a variable masked to 0..3
            setup, divergent = [f"and.b32 {b}, {self.v32()}, 3;"], True
        setup.append(f"mov.u32 {c}, 0;")
        # "for" only on uniform trip counts: the IR interpreter does not reconverge a warp after a divergent loop
        # that exits by @!%p bra (the known xfail of tests/test_debug_builds.py)
        form = r.choice(["do", "while"] + ["for", "for"] * (not divergent))
        loop = Loop(setup, c, b, p, self.label(), form, r.random() < 0.4)
        breaks = form == "while" and r.random() < 0.3  # early exits (which make the loop divergent)
        self.diverged |= divergent or breaks
        inner = dict(ctx, depth=ctx["depth"] + 1, converged=ctx["converged"] and not divergent and not breaks,
                     break_to=f"{loop.label}_end" if breaks else None, counter=c)
        n = min(budget - 1, r.randrange(1, 5))
        loop.body = self.stmts(inner, n)
        if r.random() < 0.5 and "add.s32" not in self.avoid:  # the counter as a value
            loop.body.append(Leaf([f"add.s32 {self.v32()}, {self.v32()}, {c};"]))
        return loop, n + 1

    def s_int(self, ctx):
        r = self.rng
        d = self.v32()
        k = r.randrange(5)
        if k == 0:
            return [f"mad.lo.s32 {d}, {self.v32()}, {self.op32()}, {self.op32()};"]
        if k == 1:
            return [f"{r.choice(['shl.b32', 'shr.u32', 'shr.s32'])} {d}, {self.v32()}, "
                    f"{r.choice([self.v32(), str(r.randrange(0, 40))])};"]
        if k == 2:
            return [f"{r.choice(['not.b32', 'neg.s32'])} {d}, {self.v32()};"]
        op, typ = r.choice(INT_BINOPS)
        return [f"{op}.{typ} {d}, {self.v32()}, {self.op32()};"]

    def s_int64(self, ctx):
        r = self.rng
        d = self.v64()
        k = r.randrange(5)
        if k == 0:
            return [f"mul.wide.{r.choice(['s32', 'u32'])} {d}, {self.v32()}, {self.op32()};"]
        if k == 1:
            return [f"{r.choice(['shl.b64', 'shr.u64', 'shr.s64'])} {d}, {self.v64()}, "
                    f"{r.choice([str(r.randrange(0, 70)), self.v32()])};"]
        if k == 2:
            t = self.tmp("td")
            return [f"cvt.{r.choice(['s64.s32', 'u64.u32'])} {t}, {self.v32()};", f"add.s64 {d}, {d}, {t};"]
        op, typ = r.choice(INT64_BINOPS)
        other = self.v64() if r.random() < 0.8 else str(r.choice([1, -1, 1 << 40, 12345]))
        return [f"{op}.{typ} {d}, {self.v64()}, {other};"]

    def s_f32(self, ctx):
        r = self.rng
        d = self.vf()
        k = r.randrange(7)
        if k == 0:
            return [f"fma.rn.f32 {d}, {self.vf()}, {self.opf()}, {self.opf()};"]
        if k == 1:
            return [f"{r.choice(['min.f32', 'max.f32'])} {d}, {self.vf()}, {self.opf()};"]
        if k == 2:
            return [f"{r.choice(['neg.f32', 'abs.f32'])} {d}, {self.vf()};"]
        if k == 3:
            t = self.tmp("t")
            return [f"shr.s32 {t}, {self.v32()}, {r.choice([20, 24, 28])};", f"cvt.rn.f32.s32 {d}, {t};"]
        if k == 4:
            return [f"cvt.rzi.s32.f32 {self.v32()}, {self.vf()};"]
        return [f"{r.choice(['add', 'sub', 'mul'])}.rn.f32 {d}, {self.vf()}, {self.opf()};"]

    def s_pred(self, ctx):
        r = self.rng
        p = self.tmp("p")
        k = r.randrange(3)
        if k == 0:
            return [f"setp.{r.choice(CMPS)}.{r.choice(['s32', 'u32'])} {p}, {self.v32()}, {self.op32()};",
                    f"selp.b32 {self.v32()}, {self.op32()}, {self.v32()}, {p};"]
        if k == 1:
            op, typ = r.choice(INT_BINOPS[:8])
            d = self.v32()
            return [f"setp.{r.choice(CMPS)}.s32 {p}, {self.v32()}, {self.op32()};",
                    f"@{r.choice(['', '!'])}{p} {op}.{typ} {d}, {d}, {self.op32()};"]
        q = self.tmp("p")
        return [f"setp.{r.choice(CMPS)}.f32 {p}, {self.vf()}, {self.opf()};",
                f"setp.{r.choice(CMPS)}.u64 {q}, {self.v64()}, {self.v64()};",
                f"{r.choice(['and', 'or', 'xor'])}.pred {p}, {p}, {q};",
                f"selp.f32 {self.vf()}, {self.vf()}, {self.opf()}, {p};"]

    def s_divrem(self, ctx):
        r = self.rng
        t = self.tmp("t")
        if r.random() < 0.5:
            return [f"or.b32 {t}, {self.v32()}, 1;", f"{r.choice(['div', 'rem'])}.u32 {self.v32()}, {self.v32()}, {t};"]
        if r.random() < 0.5:
            return [f"and.b32 {t}, {self.v32()}, 32767;", f"or.b32 {t}, {t}, 1;",
                    f"{r.choice(['div', 'rem'])}.s32 {self.v32()}, {self.v32()}, {t};"]
        td = self.tmp("td")
        return [f"or.b64 {td}, {self.v64()}, 1;", f"{r.choice(['div', 'rem'])}.u64 {self.v64()}, {self.v64()}, {td};"]

    def s_bits(self, ctx):
        r = self.rng
        op = r.choice(["popc.b32", "clz.b32", "brev.b32"])
        return [f"{op} {self.v32()}, {self.v32()};"]

    def s_cvt(self, ctx):
        r = self.rng
        if r.random() < 0.5:
            return [f"cvt.u32.u64 {self.v32()}, {self.v64()};"]
        return [f"cvt.{r.choice(['s32.s16', 'u32.u8', 's32.s8', 'u32.u16'])} {self.v32()}, {self.v32()};"]

    def s_load(self, ctx):
        """A load from the input buffer at a masked index (plus a constant: what address folding moves into the
        offset); the address arithmetic is repeated, as unoptimised code repeats it."""
        r = self.rng
        t, a, o = self.tmp("t"), self.tmp("td"), self.tmp("td")
        lines = [f"and.b32 {t}, {self.v32()}, {NIN // 4 - 1};"]
        if r.random() < 0.5:
            lines.append(f"add.{r.choice(['s32', 'u32'])} {t}, {t}, {r.randrange(1, NIN // 4)};")
        lines.append(f"mul.wide.u32 {o}, {t}, 4;")
        generic = r.random() < 0.3
        base = "%in_generic" if generic else "%in"
        lines.append(f"add.s64 {a}, {base}, {o};")
        space = "" if generic else ".global"
        if r.random() < 0.3:  # a constant added to the 64-bit address
            a2 = self.tmp("td")
            lines.append(f"add.s64 {a2}, {a}, {4 * r.randrange(0, 8)};")
            lines.append(f"ld{space}.u32 {self.v32()}, [{a2}];")
        else:
            lines.append(f"ld{space}.u32 {self.v32()}, [{a}+{4 * r.randrange(0, 8)}];")
        if r.random() < 0.6:  # the same address arithmetic again, as unoptimised code repeats it
            o2, a2 = self.tmp("td"), self.tmp("td")
            lines += [f"mul.wide.u32 {o2}, {t}, 4;", f"add.s64 {a2}, {base}, {o2};",
                      f"ld{space}.u32 {self.v32()}, [{a2}+{4 * r.randrange(0, NIN // 2)}];"]
        return lines

    def s_const(self, ctx):
        """A constant into a variable (food for constant propagation)."""
        r = self.rng
        k = r.randrange(3)
        if k == 0:
            return [f"mov.u32 {self.v32()}, {self.imm32()};"]
        if k == 1:
            return [f"mov.f32 {self.vf()}, {r.choice(F32_CONSTS)};"]
        return [f"mov.u64 {self.v64()}, {r.choice([0, 1, 1 << 33, -5])};"]

    def s_invariant(self, ctx):
        """A value of the uniform parameter and constants only (loop-invariant wherever it stands), or a load at
        such an index."""
        r = self.rng
        src = "%n" if ctx["entry"] else str(r.randrange(0, 9))
        if not ctx["entry"] or r.random() < 0.5:
            return [f"mad.lo.s32 {self.v32()}, {src}, {r.randrange(1, 40)}, {r.randrange(0, 9)};"]
        t, o, a = self.tmp("t"), self.tmp("td"), self.tmp("td")
        return [f"and.b32 {t}, %n, {NIN // 2 - 1};", f"mul.wide.u32 {o}, {t}, 4;", f"add.s64 {a}, %in, {o};",
                f"ld.global.u32 {self.v32()}, [{a}+{4 * r.randrange(0, 16)}];"]

    def s_vector(self, ctx):
        """Four adjacent, 16-byte aligned words: loaded from the input into variables, or stored to the scratch
        words (what a load/store vectoriser merges)."""
        r = self.rng
        if r.random() < 0.5:
            t, o, a = self.tmp("t"), self.tmp("td"), self.tmp("td")
            lines = [f"and.b32 {t}, {self.v32()}, {NIN - 4};", f"mul.wide.u32 {o}, {t}, 4;",
                     f"add.s64 {a}, %in, {o};"]
            dests = r.sample(range(self.nv32), 4)
            return lines + [f"ld.global.u32 %v{d}, [{a}+{4 * i}];" for i, d in enumerate(dests)]
        base = 4 * (SCRATCH_AT + 4 * r.randrange(NSCRATCH // 4))
        return [f"st.global.u32 [%outp+{base + 4 * i}], {self.op32()};" for i in range(4)]

    def s_loopload(self, ctx):
        """A load at the innermost loop's counter (an induction variable: at most 4) plus a masked offset."""
        r = self.rng
        t, o, a = self.tmp("t"), self.tmp("td"), self.tmp("td")
        if r.random() < 0.5:
            return [f"mul.wide.u32 {o}, {ctx['counter']}, 4;", f"add.s64 {a}, %in, {o};",
                    f"ld.global.u32 {self.v32()}, [{a}+{4 * r.randrange(0, 64)}];"]
        return [f"shl.b32 {t}, {ctx['counter']}, 2;", f"add.s32 {t}, {t}, {4 * r.randrange(0, 64)};",
                f"cvt.u64.u32 {o}, {t};", f"add.s64 {a}, %in, {o};", f"ld.global.u32 {self.v32()}, [{a}];",
                f"st.global.u32 [%outp+{4 * (SCRATCH_AT + r.randrange(NSCRATCH))}], {self.v32()};"]

    def _out(self) -> tuple[str, str]:
        """The thread's output block as (base, state space): through the global pointer, or (one time in three)
        through the generic one, so that global and generic accesses to the same words meet."""
        return ("%outg", "") if self.rng.random() < 0.33 else ("%outp", ".global")

    def s_scratch(self, ctx):
        """Store to / load from the thread's scratch words (constant or masked index; a store stored over)."""
        r = self.rng
        (b1, s1), (b2, s2), (b3, s3) = self._out(), self._out(), self._out()
        if r.random() < 0.15:
            off = 4 * (SCRATCH_AT + r.randrange(NSCRATCH))
            return [f"st{s1}.u32 [{b1}+{off}], {self.v32()};", f"ld{s2}.u32 {self.v32()}, [{b2}+{off}];",
                    f"st{s3}.u32 [{b3}+{off}], {self.op32()};"]
        if r.random() < 0.5:
            off = 4 * (SCRATCH_AT + r.randrange(NSCRATCH))
            if r.random() < 0.5:
                return [f"st{s1}.u32 [{b1}+{off}], {self.v32()};"]
            return [f"ld{s1}.u32 {self.v32()}, [{b1}+{off}];"]
        t, o, a = self.tmp("t"), self.tmp("td"), self.tmp("td")
        lines = [f"and.b32 {t}, {self.v32()}, {NSCRATCH - 1};", f"mul.wide.u32 {o}, {t}, 4;",
                 f"add.s64 {a}, {b1}, {o};"]
        if r.random() < 0.5:
            return lines + [f"st{s1}.u32 [{a}+{4 * SCRATCH_AT}], {self.v32()};"]
        return lines + [f"ld{s1}.u32 {self.v32()}, [{a}+{4 * SCRATCH_AT}];"]

    def s_local(self, ctx):
        """A .local slot through %SPL (st.local/ld.local) or generically through %SP, constant or masked index."""
        r = self.rng
        generic = r.random() < 0.3
        base, space = ("%SP", "") if generic else ("%SPL", ".local")
        if r.random() < 0.5:
            addr = f"{base}+{4 * r.randrange(NLOCAL)}"
            lines = []
        else:
            t, o, a = self.tmp("t"), self.tmp("td"), self.tmp("td")
            lines = [f"and.b32 {t}, {self.v32()}, {NLOCAL - 1};", f"mul.wide.u32 {o}, {t}, 4;",
                     f"add.s64 {a}, {base}, {o};"]
            addr = a
        if r.random() < 0.5:
            return lines + [f"st{space}.u32 [{addr}], {self.v32()};"]
        return lines + [f"ld{space}.u32 {self.v32()}, [{addr}];"]

    def s_localvar(self, ctx):
        """``c = a op b`` with a, b, c in .local slots, as nvcc -G compiles every variable."""
        r = self.rng
        s = [4 * r.randrange(NLOCAL) for _ in range(3)]
        t1, t2, t3 = self.tmp("t"), self.tmp("t"), self.tmp("t")
        op, typ = r.choice(INT_BINOPS[:10])
        return [f"ld.local.u32 {t1}, [%SPL+{s[0]}];", f"ld.local.u32 {t2}, [%SPL+{s[1]}];",
                f"{op}.{typ} {t3}, {t1}, {t2};", f"st.local.u32 [%SPL+{s[2]}], {t3};",
                f"ld.local.u32 {self.v32()}, [%SPL+{s[2]}];"]

    def s_shared(self, ctx):
        """Each thread writes its own word, bar.sync, reads any (masked) word, bar.sync."""
        r = self.rng
        t, u, a, ga = self.tmp("t"), self.tmp("t"), self.tmp("t"), self.tmp("td")
        lines = ["mov.u32 %tid_s, %tid.x;", f"shl.b32 {a}, %tid_s, 2;", f"mov.u32 {u}, sh_{self.fn_name};",
                 f"add.s32 {a}, {u}, {a};", f"st.shared.u32 [{a}], {self.v32()};", "bar.sync 0;",
                 f"and.b32 {t}, {self.v32()}, {self.block - 1};", f"shl.b32 {t}, {t}, 2;"]
        if r.random() < 0.5:
            lines += [f"add.s32 {t}, {u}, {t};", f"ld.shared.u32 {self.v32()}, [{t}];"]
        else:  # generically, through cvta.shared
            g = self.tmp("td")
            lines += [f"mov.u64 {g}, sh_{self.fn_name};", f"cvta.shared.u64 {g}, {g};",
                      f"cvt.u64.u32 {ga}, {t};", f"add.s64 {ga}, {g}, {ga};", f"ld.u32 {self.v32()}, [{ga}];"]
        return lines + ["bar.sync 0;"]

    def s_warp(self, ctx):
        r = self.rng
        k = r.randrange(4 if not self.diverged else 3)
        if k == 0:
            mode = r.choice(["up", "down", "bfly", "idx"])
            c = 0 if mode == "up" else 31
            b = self.v32() if mode == "idx" and r.random() < 0.5 else str(r.randrange(0, 32))
            if r.random() < 0.5:
                p = self.tmp("p")
                d = self.v32()
                return [f"shfl.sync.{mode}.b32 {d}|{p}, {self.v32()}, {b}, {c}, -1;",
                        f"@!{p} add.s32 {d}, {d}, 1;"]
            return [f"shfl.sync.{mode}.b32 {self.v32()}, {self.v32()}, {b}, {c}, -1;"]
        p = self.tmp("p")
        setp = f"setp.{r.choice(CMPS)}.s32 {p}, {self.v32()}, {self.op32()};"
        if k == 1:
            return [setp, f"vote.sync.ballot.b32 {self.v32()}, {p}, -1;"]
        if k == 2:
            q = self.tmp("p")
            return [setp, f"vote.sync.{r.choice(['any', 'all', 'uni'])}.pred {q}, {p}, -1;",
                    f"selp.b32 {self.v32()}, {self.op32()}, {self.v32()}, {q};"]
        return [f"activemask.b32 {self.v32()};"]

    def s_call(self, ctx):
        r = self.rng
        callee = r.choice(self.callees)
        lines = ["{"]
        for i in range(callee.nparams):
            lines += [f"\t.param .b32 param{i};", f"\tst.param.b32 [param{i}], {self.op32()};"]
        lines.append("\t.param .b32 retval0;")
        args = ", ".join(f"param{i}" for i in range(callee.nparams))
        uni = ".uni" if ctx["converged"] else ""
        self.divergent_call |= not ctx["converged"]
        lines += [f"\tcall{uni} (retval0), {callee.name}, ({args});", f"\tld.param.b32 {self.v32()}, [retval0];", "}"]
        return lines


def _regs(g: _Gen, nv32: int, entry: bool) -> dict[str, tuple[str, int]]:
    regs = {"v": ("b32", nv32), "vd": ("b64", NV64), "vf": ("f32", NVF)}
    for kind, typ in (("t", "b32"), ("td", "b64"), ("p", "pred"), ("c", "b32"), ("b", "b32")):
        regs[kind] = (typ, max(1, g.count[kind]))
    return regs


def _device_function(g: _Gen, index: int, callees: list[Func]) -> Func:
    name = f"f{index}"
    g.start(name, False)
    r = g.rng
    nparams = r.randrange(1, 4)
    g.nv32, g.callees = 4, callees
    prologue = [f"ld.param.u32 %v{i}, [{name}_param_{i % nparams}];" for i in range(4)]
    prologue += [f"cvt.u64.u32 %vd{i}, %v{i};" for i in range(NV64)]
    prologue += [f"cvt.rn.f32.s32 %vf{i}, %v{i};" for i in range(NVF)]
    local = r.random() < 0.5  # a .local depot of its own, as nvcc -G gives every function
    if local:
        prologue += [f"mov.u64 %SPL, __local_depot_{name};", "cvta.local.u64 %SP, %SPL;"]
        prologue += [f"st.local.u32 [%SPL+{4 * i}], {i};" for i in range(NLOCAL)]
    ctx = {"entry": False, "converged": False, "depth": 1, "break_to": None, "counter": None, "local": local}
    body = g.stmts(ctx, r.randrange(2, 7))
    epilogue = ["xor.b32 %v0, %v0, %v1;", "add.s32 %v0, %v0, %v2;", "cvt.rzi.s32.f32 %v3, %vf0;",
                "add.s32 %v0, %v0, %v3;", "cvt.u32.u64 %v3, %vd0;", "xor.b32 %v0, %v0, %v3;"]
    if local:
        for i in range(0, NLOCAL, 3):
            epilogue += [f"ld.local.u32 %v3, [%SPL+{4 * i}];", "add.s32 %v0, %v0, %v3;"]
    epilogue += [f"st.param.b32 [{name}_ret], %v0;", "ret;"]
    regs = _regs(g, 4, False)
    if local:
        regs["SP"], regs["SPL"] = ("b64", 0), ("b64", 0)
    return Func(name, False, nparams, regs, prologue, body, epilogue, depot=4 * NLOCAL if local else 0)


def _kernel(g: _Gen, callees: list[Func], block: int, size: int) -> Func:
    g.start("k", True)
    g.nv32, g.callees, g.block = NV32, callees, block
    pro = ["ld.param.u64 %in_generic, [k_in];", "cvta.to.global.u64 %in, %in_generic;",
           "ld.param.u64 %outp, [k_out];", "cvta.to.global.u64 %outp, %outp;", "ld.param.u32 %n, [k_n];",
           "mov.u64 %SPL, __local_depot_k;", "cvta.local.u64 %SP, %SPL;",
           "mov.u32 %gid, %ctaid.x;", "mov.u32 %tid_s, %ntid.x;", "mov.u32 %gid_t, %tid.x;",
           "mad.lo.s32 %gid, %gid, %tid_s, %gid_t;",
           f"mul.wide.u32 %gid_d, %gid, {4 * OUT_WORDS};", "add.s64 %outp, %outp, %gid_d;",
           "ld.param.u64 %outg, [k_out];", "add.s64 %outg, %outg, %gid_d;"]  # the same block, generically
    pro += [f"and.b32 %gid_t, %gid, {NIN // 2 - 1};", "mul.wide.u32 %gid_d, %gid_t, 4;",
            "add.s64 %gid_d, %in, %gid_d;"]
    pro += [f"ld.global.u32 %v{i}, [%gid_d+{4 * 17 * i}];" for i in range(NV32)]  # (gid & 127) + 17 i < NIN
    assert NIN // 2 + 17 * NV32 <= NIN
    pro += [f"mul.wide.s32 %vd{i}, %v{i}, %v{i + 1};" for i in range(NV64)]
    for i in range(NVF):
        pro += [f"shr.s32 %gid_t, %v{i + 2}, 22;", f"cvt.rn.f32.s32 %vf{i}, %gid_t;"]
    pro += [f"st.local.u32 [%SPL+{4 * i}], 0;" for i in range(NLOCAL)]
    ctx = {"entry": True, "converged": True, "depth": 0, "break_to": None, "counter": None, "local": True}
    body = g.stmts(ctx, g.rng.randrange(size // 3, size + 1))
    epi = [f"st.global.u64 [%outp+{4 * (V64_AT + 2 * i)}], %vd{i};" for i in range(NV64)]
    epi += [f"st.global.u32 [%outp+{4 * (V32_AT + i)}], %v{i};" for i in range(NV32)]
    epi += [f"st.global.f32 [%outp+{4 * (VF_AT + i)}], %vf{i};" for i in range(NVF)]
    for i in range(NLOCAL):
        epi += [f"ld.local.u32 %gid_t, [%SPL+{4 * i}];", f"st.global.u32 [%outp+{4 * (LOCAL_AT + i)}], %gid_t;"]
    epi.append("ret;")
    regs = _regs(g, NV32, True)
    regs["in"], regs["in_generic"], regs["outp"], regs["outg"] = ("b64", 0), ("b64", 0), ("b64", 0), ("b64", 0)
    regs["SP"], regs["SPL"], regs["gid_d"] = ("b64", 0), ("b64", 0), ("b64", 0)
    regs["n"], regs["gid"], regs["gid_t"], regs["tid_s"] = ("b32", 0), ("b32", 0), ("b32", 0), ("b32", 0)
    return Func("k", True, 3, regs, pro, body, epi, depot=4 * NLOCAL)


def generate(seed: int, size: int = 20, avoid: frozenset[str] | set[str] = frozenset()) -> Program:
    """The program of ``seed`` (the same text for the same seed, on every machine and Python version); the kernel
    has up to ``size`` statements at its top level (each if or loop counting as its body's size plus one).
    ``avoid``: mnemonics (``cvt.u32.u8``) no generated statement uses (a known bug being kept out of the way)."""
    g = _Gen(seed, frozenset(avoid))
    r = g.rng
    block = r.choice([32, 64])
    grid = r.choice([1, 1, 2])
    funcs: list[Func] = []
    for i in range(r.choice([0, 1, 1, 2])):
        funcs.append(_device_function(g, i, list(funcs)))
    funcs.append(_kernel(g, funcs, block, max(3, size)))
    inputs = [r.getrandbits(32) for _ in range(NIN)]
    return Program(seed, funcs, grid, block, r.randrange(0, 8), inputs, size, frozenset(avoid))


if __name__ == "__main__":  # pragma: no cover - a look at one program
    import sys

    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0).text)
