"""Generator of the memory qualifier sweep (issue 19): tests/data/isa_inventory/sweep_memory.ptx-lines.

Covers the PTX ISA 9.x memory instructions: ld, ldu, st, st.async, prefetch, prefetchu, applypriority, discard,
createpolicy, cvta, isspacep, mov of addresses, atom, red, red.async, fence, membar and the non-bulk cp.async
family (cp.async.ca/.cg, cp.async.commit_group/wait_group/wait_all, cp.async.mbarrier.arrive).  Qualifiers: the
state spaces (.global .shared .shared::cta .shared::cluster .local .const .param .param::entry .param::func and
generic), the memory-model qualifiers (.weak .volatile .relaxed .acquire .release .acq_rel .sc .mmio) with the
scopes (.cta .cluster .gpu .sys), the cache operators (.ca .cg .cs .lu .cv .wb .wt), .nc, the eviction
priorities (.L1::evict_* .L1::no_allocate .L2::evict_*), .L2::cache_hint and the prefetch sizes
(.L2::64B/128B/256B), .unified, the vector widths .v2/.v4/.v8 and every type .b8 to .b128, and the atom/red
operations over the integer, float and half types (.noftz included).  Qualifiers are combined pairwise, not as a
full cartesian product, and deliberately wrong combinations (a qualifier in the wrong space, a type the form does
not take, a wrong vector width, a missing required qualifier or operand, a wrong register class) are mixed in so
that both ptxas verdicts occur.

``python tests/isa_sweep_memory.py`` writes the data file with every line as ``? | instruction``;
``python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_memory.ptx-lines`` fills the verdicts."""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).parent / "data" / "isa_inventory" / "sweep_memory.ptx-lines"

LDST = ["b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64"]
VEC_TYPES = ["b8", "s8", "u16", "b32", "f32", "u64", "f64", "b128"]
# state space -> an address operand of the kernel that lies in it
ADDR = {"": "[%rd1]", "global": "[%rd1]", "shared": "[%r1]", "shared::cta": "[sbuf+8]", "shared::cluster": "[%r1]",
        "local": "[lbuf]", "const": "[cbuf]", "param": "[p0]", "param::entry": "[p0]", "param::func": "[p0]"}
SPACES = list(ADDR)
MAIN_SPACES = ["", "global", "shared", "shared::cluster", "local", "const", "param"]


_COUNT = {"h": 16, "r": 24, "rd": 16, "f": 16, "fd": 8, "q": 4}


def reg(t: str, i: int) -> str:
    """A register of the kernel's fixed set that fits type ``t`` (numbers wrap around the set's size)."""
    name = _reg(t, i)
    cls = name[1:].rstrip("0123456789")
    return f"%{cls}{int(name[1 + len(cls):]) % _COUNT[cls]}"


def _reg(t: str, i: int) -> str:
    if t in ("b8", "u8", "s8", "b16", "u16", "s16", "f16", "bf16"):
        return f"%h{i}"
    if t in ("b32", "u32", "s32", "f16x2", "bf16x2"):
        return f"%r{i}"
    if t in ("b64", "u64", "s64"):
        return f"%rd{i}"
    if t == "f32":
        return f"%f{i}"
    if t == "f64":
        return f"%fd{i}"
    if t == "b128":
        return f"%q{i}"
    raise ValueError(t)


def vec(t: str, n: int, first: int = 1) -> str:
    """A destination or source of ``n`` elements of type ``t``: a register or a ``{...}`` vector."""
    if n == 1:
        return reg(t, first)
    return "{" + ", ".join(reg(t, first + k) for k in range(n)) + "}"


def q(*parts: str) -> str:
    """Join qualifiers, dropping empty ones: q("ld", "", "global", "u32") == "ld.global.u32"."""
    return ".".join(p for p in parts if p)


def ld_line(mods: str, t: str = "u32", addr: str = "[%rd1]", n: int = 1, extra: str = "") -> str:
    return f"{q('ld', mods, f'v{n}' if n > 1 else '', t)} {vec(t, n)}, {addr}{extra};"


def st_line(mods: str, t: str = "u32", addr: str = "[%rd1]", n: int = 1, extra: str = "") -> str:
    return f"{q('st', mods, f'v{n}' if n > 1 else '', t)} {addr}, {vec(t, n, 2)}{extra};"


SEMS_LD = ["weak", "volatile", "relaxed.cta", "relaxed.gpu", "relaxed.sys", "relaxed.cluster", "acquire.cta",
           "acquire.gpu", "acquire.sys", "acquire.cluster", "mmio.relaxed.sys",
           # wrong: missing scope, a scope without a semantics, a store/fence-only semantics, .mmio's other scopes
           "relaxed", "acquire", "volatile.gpu", "release.gpu", "acq_rel.gpu", "sc.gpu", "mmio", "mmio.relaxed.gpu",
           "mmio.acquire.sys", "weak.gpu", "gpu"]
SEMS_ST = ["weak", "volatile", "relaxed.cta", "relaxed.gpu", "relaxed.sys", "relaxed.cluster", "release.cta",
           "release.gpu", "release.sys", "release.cluster", "mmio.relaxed.sys",
           "relaxed", "release", "volatile.sys", "acquire.gpu", "acq_rel.gpu", "sc.sys", "mmio", "mmio.release.sys",
           "mmio.relaxed.cta", "sys"]


def ld():
    # every type in global and generic memory, four widths in the other spaces
    for sp in SPACES:
        for t in LDST if sp in ("", "global") else ("u32", "u64", "b128", "s8"):
            yield ld_line(sp, t, ADDR[sp])
    # memory-model qualifiers x spaces (.u32), and the 64-bit / 8-bit / 128-bit widths in the spaces that differ
    for sem in SEMS_LD:
        for sp in SPACES if sem in SEMS_LD[:6] else MAIN_SPACES if sem in SEMS_LD[:11] else ("", "global", "local"):
            yield ld_line(q(sem, sp), "u32", ADDR[sp])
    for sem in ("volatile", "relaxed.gpu", "mmio.relaxed.sys"):
        for sp in ("", "global", "shared", "local", "param"):
            for t in ("u64", "b128", "s8"):
                yield ld_line(q(sem, sp), t, ADDR[sp])
    yield "ld.volatile.param.u64 %rd1, [p0];"
    yield "ld.mmio.relaxed.sys.shared.u32 %r1, [%r1];"
    yield "ld.relaxed.gpu.global.v2.u32 {%r1, %r2}, [%rd1];"
    yield "ld.volatile.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];"
    yield "ld.acquire.gpu.v2.u64 {%rd1, %rd2}, [%rd3];"
    yield "ld.mmio.relaxed.sys.global.v2.u32 {%r1, %r2}, [%rd1];"
    yield "ld.mmio.relaxed.sys.v2.u32 {%r1, %r2}, [%rd1];"
    yield "ld.relaxed.global.gpu.u32 %r1, [%rd1];"
    yield "ld.global.relaxed.gpu.u32 %r1, [%rd1];"
    yield "ld.volatile.relaxed.gpu.global.u32 %r1, [%rd1];"
    # cache operators x spaces, and with the memory-model qualifiers
    for cop in ("ca", "cg", "cs", "lu", "cv", "wb", "wt"):
        for sp in ("", "global", "shared", "const"):
            yield ld_line(q(sp, cop), "u32", ADDR[sp])
        yield ld_line(q("global", cop), "u32", "[%rd1]", n=4)
        yield ld_line(q("volatile", "global", cop))
        yield ld_line(q("relaxed.gpu", "global", cop))
        yield ld_line(q("weak", "global", cop))
        yield ld_line(q("global", cop, "L2::128B"))
        yield ld_line(q("global", cop, "L2::cache_hint"), extra=", %rd2")
        yield ld_line(q("global", cop, "L1::evict_last"))
    yield "ld.global.ca.cg.u32 %r1, [%rd1];"
    # .nc
    for t in VEC_TYPES:
        yield ld_line("global.nc", t)
    for mods in ("nc", "shared.nc", "local.nc", "const.nc", "nc.global", "global.ca.nc", "global.cg.nc",
                 "global.cs.nc", "global.lu.nc", "global.cv.nc", "global.nc.ca", "volatile.global.nc",
                 "relaxed.gpu.global.nc", "acquire.gpu.global.nc", "weak.global.nc", "global.nc.L2::64B",
                 "global.nc.L2::256B", "global.nc.L1::evict_first", "global.nc.L1::evict_last",
                 "global.nc.L1::evict_normal", "global.nc.L1::evict_unchanged", "global.nc.L1::no_allocate",
                 "global.nc.L2::evict_last", "global.nc.L2::evict_normal", "global.nc.L2::evict_first",
                 "global.nc.L1::evict_last.L2::evict_first", "global.nc.L1::no_allocate.L2::256B",
                 "global.cg.nc.L2::128B"):
        yield ld_line(mods)
    for n, t in ((2, "u32"), (4, "f32"), (2, "f64"), (4, "u64"), (8, "b16"), (8, "f32"), (2, "b128"), (4, "u8")):
        yield ld_line("global.nc", t, n=n)
    yield ld_line("global.nc.L2::cache_hint", extra=", %rd2")
    yield ld_line("global.ca.nc.L2::cache_hint", extra=", %rd2")
    yield ld_line("global.nc.L1::evict_last.L2::cache_hint", extra=", %rd2")
    # eviction priorities, cache hints and prefetch sizes, pairwise with the spaces and memory-model qualifiers
    l1 = ["L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate"]
    l2 = ["L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::evict_unchanged"]
    size = ["L2::64B", "L2::128B", "L2::256B"]
    for i, e in enumerate(l1 + l2):
        for sp in ("", "global", "shared", "param"):
            yield ld_line(q(sp, e), "u32", ADDR[sp])
        yield ld_line(q(["relaxed.gpu", "acquire.sys", "volatile", "weak", "mmio.relaxed.sys"][i % 5], "global", e))
        yield ld_line(q("global", e, size[i % 3]))
        yield ld_line(q("global", e, "L2::cache_hint"), extra=", %rd2")
    for a in l1:
        for b in l2:
            yield ld_line(q("global", a, b))
    yield ld_line("global.L1::evict_first.L1::evict_last")
    yield ld_line("global.L2::evict_first.L2::evict_last")
    yield ld_line("global.L2::evict_last.L1::evict_first")
    for s in size:
        for sp in ("", "global", "shared", "local", "const", "param"):
            yield ld_line(q(sp, s), "u32", ADDR[sp])
        yield ld_line(q("volatile.global", s))
        yield ld_line(q("relaxed.gpu.global", s))
        yield ld_line(q("global", s), "f32", n=4)
    yield ld_line("global.L2::64B.L2::128B")
    yield ld_line("global.L2::128B.L2::cache_hint", extra=", %rd2")
    # L2::cache_hint: the policy operand, its presence and its register class
    for sp in ("", "global", "shared", "local", "const", "param"):
        yield ld_line(q(sp, "L2::cache_hint"), "u32", ADDR[sp], extra=", %rd2")
    for sem in ("volatile", "relaxed.gpu", "acquire.gpu", "mmio.relaxed.sys", "weak"):
        yield ld_line(q(sem, "global.L2::cache_hint"), extra=", %rd2")
    yield ld_line("global.L2::cache_hint")
    yield ld_line("global", extra=", %rd2")
    yield ld_line("global.L2::cache_hint", extra=", %r2")
    yield ld_line("global.L2::cache_hint", extra=", 5")
    yield ld_line("global.L2::cache_hint", "f32", n=4, extra=", %rd2")
    yield ld_line("global.L2::cache_hint", "b128", extra=", %rd2")
    # vector widths x types x spaces
    for n in (2, 4, 8):
        for t in VEC_TYPES:
            yield ld_line("global", t, n=n)
        for sp in ("", "shared", "local", "const", "param"):
            yield ld_line(sp, "b16" if n == 8 else "f32", ADDR[sp], n=n)
    yield ld_line("global.v3", "u32").replace("v3.u32 %r1", "v3.u32 {%r1, %r2, %r3}")
    yield "ld.global.v16.b8 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8, %h9, %h10, %h11, %h12, %h13, %h14, %h15, %h0}, [%rd1];"
    yield "ld.global.v2.u32 {%r1, %r2, %r3}, [%rd1];"
    yield "ld.global.v4.u32 {%r1, %r2}, [%rd1];"
    yield "ld.global.v2.u32 %rd1, [%rd2];"
    yield "ld.global.v2.u32 {%r1, _}, [%rd1];"
    yield "ld.global.v4.f32 {%f1, _, %f3, _}, [%rd1];"
    yield "ld.global.u32 {%r1}, [%rd1];"
    # .unified
    yield "ld.global.u32 %r1, [%rd1].unified;"
    yield "ld.u32 %r1, [%rd1].unified;"
    yield "ld.global.v2.f32 {%f1, %f2}, [%rd1].unified;"
    yield "ld.global.L2::cache_hint.u32 %r1, [%rd1].unified, %rd2;"
    yield "ld.shared.u32 %r1, [%r1].unified;"
    yield "ld.unified.global.u32 %r1, [%rd1];"
    # operand classes and address forms
    yield "ld.global.u32 %rd1, [%rd2];"
    yield "ld.global.u64 %r1, [%rd1];"
    yield "ld.global.f32 %r1, [%rd1];"
    yield "ld.global.u32 %f1, [%rd1];"
    yield "ld.global.f32 %fd1, [%rd1];"
    yield "ld.global.f64 %rd1, [%rd2];"
    yield "ld.global.u8 %r1, [%rd1];"
    yield "ld.global.s8 %rd1, [%rd2];"
    yield "ld.global.u16 %r1, [%rd1];"
    yield "ld.global.f16 %h1, [%rd1];"
    yield "ld.global.b16 %f1, [%rd1];"
    yield "ld.global.u32 %p1, [%rd1];"
    yield "ld.global.pred %p1, [%rd1];"
    yield "ld.global.b128 %rd1, [%rd2];"
    yield "ld.global.u32 %r1, [%rd1+16];"
    yield "ld.global.u32 %r1, [%rd1+-4];"
    yield "ld.global.u32 %r1, [gbuf];"
    yield "ld.global.u32 %r1, [gbuf+12];"
    yield "ld.global.u32 %r1, [%r2];"
    yield "ld.global.u32 %r1, [64];"
    yield "ld.shared.u32 %r1, [%rd1];"
    yield "ld.shared.u32 %r1, [sbuf+1020];"
    yield "ld.shared::cta.u32 %r1, [%rd1];"
    yield "ld.shared::cluster.u32 %r1, [sbuf];"
    yield "ld.shared::cluster.u64 %rd1, [%rd2];"
    yield "ld.local.u32 %r1, [%rd1];"
    yield "ld.local.u32 %r1, [%r1];"
    yield "ld.const.u32 %r1, [%rd1];"
    yield "ld.const.u32 %r1, [cbuf+252];"
    yield "ld.param.u32 %r1, [p0+4];"
    yield "ld.param.u64 %rd1, [%rd2];"
    yield "ld.param::entry.u64 %rd1, [%rd2];"
    yield "ld.u32 %r1, [gbuf];"
    yield "ld.u32 %r1, [sbuf];"
    yield "ld.u32 %r1, [%r1];"
    yield "ld.global.u32 %r1, %rd1;"
    yield "ld.global.u32 [%rd1], %r1;"
    yield "ld.global.u32 5, [%rd1];"
    yield "ld.global.u32 %r1;"
    yield "ld.global.u32 %r1, [%rd1], %rd2, %rd3;"
    yield "ld.global %r1, [%rd1];"
    yield "ld.global.u32.u32 %r1, [%rd1];"
    yield "ld.global.f16x2 %r1, [%rd1];"
    yield "ld.global.bf16 %h1, [%rd1];"
    yield "ld.global.cluster.u32 %r1, [%rd1];"
    yield "ld.global.sys.u32 %r1, [%rd1];"
    yield "ld.generic.u32 %r1, [%rd1];"
    yield "ld.global.shared.u32 %r1, [%rd1];"
    yield "ld.global.async.u32 %r1, [%rd1];"
    yield "ld.global.wb.u32 %r1, [%rd1];"


def ldu():
    for sp in ("global", "", "shared", "local", "const", "param"):
        for t in LDST if sp == "global" else ("u32", "b128"):
            yield f"ldu{'.' + sp if sp else ''}.{t} {reg(t, 1)}, {ADDR[sp]};"
    for n in (2, 4, 8):
        for t in ("u8", "b16", "u32", "f32", "u64", "f64", "b128"):
            yield f"ldu.global.v{n}.{t} {vec(t, n)}, [%rd1];"
    for mods in ("global.ca", "global.nc", "volatile.global", "relaxed.gpu.global", "global.L1::evict_last",
                 "global.L2::64B", "global.L2::evict_last"):
        yield f"ldu.{mods}.u32 %r1, [%rd1];"
    yield "ldu.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;"
    yield "ldu.global.u32 %r1, [%rd1], %rd2;"
    yield "ldu.global.u32 %r1, [gbuf+4];"
    yield "ldu.global.u32 %rd1, [%rd2];"
    yield "ldu.global.u64 %r1, [%rd1];"
    yield "ldu.global.f32 %h1, [%rd1];"
    yield "ldu.global.v2.u32 {%r1, %r2, %r3}, [%rd1];"
    yield "ldu.global.u32 %r1, [%rd1].unified;"


def st():
    for sp in SPACES:
        for t in LDST if sp in ("", "global") else ("u32", "u64", "b128", "s8"):
            yield st_line(sp, t, ADDR[sp])
    for sem in SEMS_ST:
        for sp in SPACES if sem in SEMS_ST[:6] else MAIN_SPACES if sem in SEMS_ST[:11] else ("", "global", "local"):
            yield st_line(q(sem, sp), "u32", ADDR[sp])
    for sem in ("volatile", "release.sys", "mmio.relaxed.sys"):
        for sp in ("", "global", "shared", "local"):
            for t in ("u64", "b128", "s8"):
                yield st_line(q(sem, sp), t, ADDR[sp])
    yield "st.release.gpu.global.v2.u32 [%rd1], {%r2, %r3};"
    yield "st.volatile.shared.v4.f32 [%r1], {%f2, %f3, %f4, %f5};"
    yield "st.mmio.relaxed.sys.global.v2.u32 [%rd1], {%r2, %r3};"
    yield "st.relaxed.shared.gpu.u32 [%r1], %r2;"
    yield "st.volatile.release.gpu.global.u32 [%rd1], %r2;"
    for cop in ("wb", "cg", "cs", "wt", "ca", "lu", "cv"):
        for sp in ("", "global", "shared", "local"):
            yield st_line(q(sp, cop), "u32", ADDR[sp])
        yield st_line(q("global", cop), "f32", n=4)
        yield st_line(q("volatile", "global", cop))
        yield st_line(q("release.gpu", "global", cop))
        yield st_line(q("weak", "global", cop))
        yield st_line(q("global", cop, "L2::cache_hint"), extra=", %rd4")
        yield st_line(q("global", cop, "L1::evict_last"))
    yield "st.global.wb.wt.u32 [%rd1], %r2;"
    l1 = ["L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate"]
    l2 = ["L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::evict_unchanged"]
    for i, e in enumerate(l1 + l2):
        for sp in ("", "global", "shared"):
            yield st_line(q(sp, e), "u32", ADDR[sp])
        yield st_line(q(["relaxed.gpu", "release.sys", "volatile", "weak", "mmio.relaxed.sys"][i % 5], "global", e))
        yield st_line(q("global", e, "L2::cache_hint"), extra=", %rd4")
        yield st_line(q("global", e), "f32", n=4)
    for i, a in enumerate(l1):
        yield st_line(q("global", a, l2[i % 4]))
        yield st_line(q("global", l2[i % 4], a))
    for s in ("L2::64B", "L2::128B", "L2::256B"):
        yield st_line(q("global", s))
    yield "st.global.nc.u32 [%rd1], %r2;"
    for sp in ("", "global", "shared", "local", "param"):
        yield st_line(q(sp, "L2::cache_hint"), "u32", ADDR[sp], extra=", %rd4")
    for sem in ("volatile", "relaxed.gpu", "release.gpu", "mmio.relaxed.sys"):
        yield st_line(q(sem, "global.L2::cache_hint"), extra=", %rd4")
    yield st_line("global.L2::cache_hint")
    yield st_line("global", extra=", %rd4")
    yield st_line("global.L2::cache_hint", extra=", %r4")
    yield st_line("global.L2::cache_hint", "b128", extra=", %rd4")
    for n in (2, 4, 8):
        for t in VEC_TYPES:
            yield st_line("global", t, n=n)
        for sp in ("", "shared", "local", "param"):
            yield st_line(sp, "b16" if n == 8 else "f32", ADDR[sp], n=n)
    yield "st.global.v2.u32 [%rd1], {%r2, %r3, %r4};"
    yield "st.global.v4.u32 [%rd1], {%r2, %r3};"
    yield "st.global.v2.u32 [%rd1], %rd2;"
    yield "st.global.v2.u32 [%rd1], {%r2, _};"
    yield "st.global.u32 [%rd1].unified, %r2;"
    # immediates and operand classes
    yield "st.global.u32 [%rd1], 5;"
    yield "st.global.f32 [%rd1], 0f3F800000;"
    yield "st.global.f32 [%rd1], 1;"
    yield "st.global.u32 [%rd1], 1.5;"
    yield "st.global.v2.u32 [%rd1], {1, 2};"
    yield "st.global.v4.f32 [%rd1], {%f1, 0f00000000, %f2, 0f3F800000};"
    yield "st.global.u64 [%rd1], -1;"
    yield "st.global.b128 [%rd1], 0;"
    yield "st.global.u32 [%rd1], %rd2;"
    yield "st.global.u64 [%rd1], %r2;"
    yield "st.global.u8 [%rd1], %r2;"
    yield "st.global.u16 [%rd1], %rd2;"
    yield "st.global.f32 [%rd1], %r2;"
    yield "st.global.f32 [%rd1], %fd2;"
    yield "st.global.f64 [%rd1], %rd2;"
    yield "st.global.u32 [%rd1], %f2;"
    yield "st.global.u32 [%rd1], %tid.x;"
    yield "st.global.u32 [gbuf+8], %r2;"
    yield "st.shared.u32 [sbuf], %r2;"
    yield "st.shared.u32 [%rd1], %r2;"
    yield "st.const.u32 [%rd1], %r2;"
    yield "st.param.u32 [p0], %r2;"
    yield "st.global.u32 %rd1, %r2;"
    yield "st.global.u32 [%rd1], [%rd2];"
    yield "st.global.u32 [%rd1];"
    yield "st.global.pred [%rd1], %p1;"
    yield "st.global.f16 [%rd1], %h2;"
    yield "st.global.cluster.u32 [%rd1], %r2;"
    yield "st.generic.u32 [%rd1], %r2;"
    yield "st.global.async.u32 [%rd1], %r2;"


def st_async():
    mb = "mbarrier::complete_tx::bytes"
    for t in ("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64", "b16", "u8", "b128"):
        for n in (1, 2, 4):
            yield f"st.async.shared::cluster.{q(mb, f'v{n}' if n > 1 else '', t)} [%r1], {vec(t, n, 2)}, [%r3];"
    for sem in ("weak", "weak.cluster", "relaxed.cluster", "release.cluster", "cluster", "weak.gpu"):
        yield f"st.async.{sem}.shared::cluster.{mb}.u32 [%r1], %r2, [%r3];"
    for sp in ("shared", "shared::cta", "global", ""):
        yield f"st.async.{q(sp, mb)}.u32 {ADDR[sp]}, %r2, [%r3];"
    yield "st.async.shared::cluster.u32 [%r1], %r2, [%r3];"
    yield f"st.async.shared::cluster.{mb}.u32 [%r1], %r2;"
    yield f"st.async.shared::cluster.{mb}.v8.b16 [%r1], {vec('b16', 8, 2)}, [%r3];"
    yield f"st.async.shared::cluster.{mb}.u32 [%rd1], %r2, [%rd3];"
    yield f"st.async.shared::cluster.{mb}.u32 [sbuf], %r2, [mbar];"
    yield f"st.async.shared::cluster.{mb}.u32 [%r1], 5, [%r3];"
    yield f"st.async.shared::cluster.{mb}.L2::cache_hint.u32 [%r1], %r2, [%r3], %rd4;"
    yield "st.async.release.gpu.global.u32 [%rd1], %r2;"
    yield "st.async.mmio.release.sys.global.u32 [%rd1], %r2;"


def prefetch():
    for sp in ("", "global", "local", "shared", "const", "param", "shared::cluster"):
        for lvl in ("L1", "L2", "L2::evict_last", "L2::evict_normal", "L2::evict_first", "L1::evict_last",
                    "tensormap", ""):
            yield f"{q('prefetch', sp, lvl)} {ADDR[sp]};"
    yield "prefetch.global.L1.L2 [%rd1];"
    yield "prefetch.global.L2::evict_last.L2::evict_normal [%rd1];"
    yield "prefetch.global.L2 [gbuf+64];"
    yield "prefetch.global.L2 [%rd1], 128;"
    yield "prefetch.L2 %rd1;"
    yield "prefetch.tensormap [p0];"
    yield "prefetch.const.tensormap [cbuf];"
    yield "prefetch.param.tensormap [%rd1];"
    for sp in ("", "global", "local", "shared"):
        for lvl in ("L1", "L2", ""):
            yield f"{q('prefetchu', sp, lvl)} {ADDR[sp]};"
    yield "prefetchu.L1 [gbuf];"
    yield "prefetchu.L1::evict_last [%rd1];"


def cache_control():
    for sp in ("", "global", "shared", "local"):
        for lvl in ("L2::evict_normal", "L2::evict_last", "L2::evict_first", "L2", "L1::evict_normal"):
            yield f"{q('applypriority', sp, lvl)} {ADDR[sp]}, 128;"
            yield f"{q('discard', sp, lvl)} {ADDR[sp]}, 128;"
    for size in ("64", "256", "%r2", "%rd2"):
        yield f"applypriority.global.L2::evict_normal [%rd1], {size};"
        yield f"discard.global.L2 [%rd1], {size};"
    yield "applypriority.global.L2::evict_normal [%rd1];"
    yield "discard.global.L2 [%rd1];"
    yield "discard.global.L2 [gbuf], 128;"
    yield "discard.global.L1 [%rd1], 128;"
    prim = ["L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"]
    sec = ["", "L2::evict_first", "L2::evict_unchanged", "L2::evict_last", "L2::evict_normal"]
    for p in prim:
        for s in sec:
            yield f"createpolicy.fractional.{q(p, s)}.b64 %rd1, 0.5;"
            yield f"createpolicy.range.global.{q(p, s)}.b64 %rd1, [%rd2], %r3, %r4;"
    for frac in ("", ", 1.0", ", 0.0", ", 0.25", ", 1.5", ", -0.5", ", %f1", ", 1", ", 0f3F000000"):
        yield f"createpolicy.fractional.L2::evict_last.b64 %rd1{frac};"
    yield "createpolicy.range.L2::evict_last.b64 %rd1, [%rd2], %r3, %r4;"
    yield "createpolicy.range.global.L2::evict_last.b64 %rd1, [%rd2], 64, 128;"
    yield "createpolicy.range.global.L2::evict_last.b64 %rd1, [gbuf], %r3, %r4;"
    yield "createpolicy.range.global.L2::evict_last.b64 %rd1, [%rd2], %rd3, %rd4;"
    yield "createpolicy.range.shared.L2::evict_last.b64 %rd1, [%r2], %r3, %r4;"
    yield "createpolicy.range.global.L2::evict_last.b64 %rd1, [%rd2], %r3;"
    yield "createpolicy.cvt.L2.b64 %rd1, %rd2;"
    yield "createpolicy.cvt.L2.b32 %r1, %r2;"
    yield "createpolicy.cvt.b64 %rd1, %rd2;"
    yield "createpolicy.cvt.L2.b64 %rd1, %r2;"
    yield "createpolicy.fractional.L2::evict_last.b32 %r1, 0.5;"
    yield "createpolicy.fractional.L2::evict_last %rd1, 0.5;"
    yield "createpolicy.fractional.b64 %rd1, 0.5;"
    yield "createpolicy.fractional.L2::evict_last.b64 %r1, 0.5;"
    yield "createpolicy.L2::evict_last.b64 %rd1, 0.5;"
    yield "createpolicy.fractional.range.L2::evict_last.b64 %rd1, 0.5;"


def addresses():
    for to in ("", "to"):
        for sp in ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "param::entry",
                   "param::func", "generic", ""):
            for t in ("u64", "u32") if sp in ("global", "shared") else ("u64",):
                r = reg(t, 1)
                yield f"{q('cvta', to, sp, t)} {r}, {reg(t, 2)};"
    var = {"global": "gbuf", "shared": "sbuf", "shared::cta": "sbuf", "shared::cluster": "sbuf", "local": "lbuf",
           "const": "cbuf", "param": "p0"}
    for sp, v in var.items():
        yield f"cvta.{sp}.u64 %rd1, {v};"
        if sp in ("global", "shared"):
            yield f"cvta.{sp}.u64 %rd1, {v}+8;"
        yield f"cvta.to.{sp}.u64 %rd1, {v};"
    yield "cvta.global.u64 %rd1, sbuf;"
    yield "cvta.shared.u64 %rd1, gbuf;"
    yield "cvta.global.b64 %rd1, %rd2;"
    yield "cvta.global.s64 %rd1, %rd2;"
    yield "cvta.global.u16 %h1, %h2;"
    yield "cvta.global.u64 %rd1, %r2;"
    yield "cvta.global.u64 %r1, %rd2;"
    yield "cvta.global.u64 %rd1, 4096;"
    yield "cvta.global.u64 %rd1, [%rd2];"
    yield "cvta.to.shared.u32 %r1, %rd2;"
    yield "cvta.global.to.u64 %rd1, %rd2;"
    for sp in ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "param::entry",
               "param::func", "generic", ""):
        yield f"{q('isspacep', sp)} %p1, %rd1;"
        if sp in ("global", "shared"):
            yield f"{q('isspacep', sp)} %p1, %r1;"
    for v in ("gbuf", "sbuf", "lbuf", "cbuf", "p0", "gbuf+8"):
        yield f"isspacep.global %p1, {v};"
    yield "isspacep.global %r1, %rd1;"
    yield "isspacep.global.u64 %p1, %rd1;"
    yield "isspacep.global %p1, 4096;"
    yield "isspacep.global.shared %p1, %rd1;"
    for v in ("gbuf", "sbuf", "lbuf", "cbuf", "mbar", "p0", "f0", "gbuf+16", "sbuf+4", "cbuf+-8"):
        for t in ("u64", "b64", "s64", "u32") if "+" not in v else ("u64",):
            yield f"mov.{t} {reg(t, 1)}, {v};"
    yield "mov.f64 %fd1, gbuf;"
    yield "mov.u16 %h1, sbuf;"
    yield "mov.b128 %q1, gbuf;"
    yield "mov.u64 %rd1, gbuf+%rd2;"
    yield "mov.u64 %rd1, DONE;"
    yield "mov.u64 %rd1, undefined_var;"
    yield "mov.v2.u64 {%rd1, %rd2}, {gbuf, sbuf};"


ATOM_TYPES = ["b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64", "b16", "f16", "bf16", "f16x2", "bf16x2",
              "b128"]
ATOM_OPS = ["and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"]


def _atom(mods: str, op: str, t: str, addr: str = "[%rd1]", hint: str = "", noftz: bool = False) -> str:
    src = f"{reg(t, 3)}, {reg(t, 4)}" if op == "cas" else reg(t, 3)
    return f"atom.{q(mods, op, 'noftz' if noftz else '', hint, t)} {reg(t, 2)}, {addr}, {src}{', %rd5' if hint else ''};"


def _red(mods: str, op: str, t: str, addr: str = "[%rd1]", hint: str = "", noftz: bool = False) -> str:
    return f"red.{q(mods, op, 'noftz' if noftz else '', hint, t)} {addr}, {reg(t, 3)}{', %rd5' if hint else ''};"


def atom():
    # op x type, in global memory; half types with and without .noftz
    for op in ATOM_OPS:
        for t in ATOM_TYPES:
            yield _atom("global", op, t)
            if t in ("f16", "bf16x2", "f32"):
                yield _atom("global", op, t, noftz=True)
    # ops x spaces (a fixed type per op)
    typ = {"and": "b32", "or": "b64", "xor": "b32", "cas": "b64", "exch": "b32", "add": "f32", "inc": "u32",
           "dec": "u32", "min": "s32", "max": "u64"}
    for op in ATOM_OPS:
        for sp in ("", "shared", "shared::cluster", "local") if op not in ("add", "cas") else SPACES:
            yield _atom(sp, op, typ[op], ADDR[sp])
    for sp in ("", "shared", "shared::cluster"):
        for t in ("f64", "f16x2", "bf16", "b128", "u64"):
            yield _atom(sp, "add" if t != "b128" else "exch", t, ADDR[sp], noftz=t in ("f16x2", "bf16"))
        yield _atom(sp, "cas", "b16", ADDR[sp])
        yield _atom(sp, "cas", "b128", ADDR[sp])
    # memory-model qualifiers x scopes x spaces
    for sem in ("", "relaxed", "acquire", "release", "acq_rel", "volatile", "weak", "sc", "mmio"):
        for sc in ("", "cta", "cluster", "gpu", "sys") if sem in ("", "relaxed", "acquire") else ("", "gpu"):
            yield _atom(q(sem, sc, "global"), "add", "u32")
        for sp in ("", "shared", "shared::cluster"):
            yield _atom(q(sem, "gpu", sp), "cas", "b32", ADDR[sp])
    for sem in ("relaxed.gpu", "acquire.sys", "acq_rel.cta", "release.cluster"):
        for op, t in (("exch", "b128"), ("cas", "b128"), ("cas", "b16"), ("add", "f16"), ("max", "bf16x2"),
                      ("add", "f64")):
            yield _atom(q(sem, "global"), op, t, noftz=t in ("f16", "bf16x2"))
    yield "atom.global.relaxed.gpu.add.u32 %r2, [%rd1], %r3;"
    yield "atom.gpu.relaxed.global.add.u32 %r2, [%rd1], %r3;"
    yield "atom.add.global.u32 %r2, [%rd1], %r3;"
    # L2::cache_hint
    for op in ATOM_OPS:
        yield _atom("global", op, typ[op], hint="L2::cache_hint")
    for t in ("f16", "bf16x2", "b128", "f64"):
        yield _atom("global", "add" if t != "b128" else "exch", t, hint="L2::cache_hint", noftz=t in ("f16", "bf16x2"))
    for sp in ("", "shared"):
        yield _atom(sp, "add", "u32", ADDR[sp], hint="L2::cache_hint")
    yield _atom("acq_rel.gpu.global", "cas", "b32", hint="L2::cache_hint")
    yield "atom.global.cas.L2::cache_hint.b128 %q1, [%rd1], %q2, %q3, %rd5;"
    yield "atom.global.L2::cache_hint.add.u32 %r2, [%rd1], %r3;"
    yield "atom.global.add.u32 %r2, [%rd1], %r3, %rd5;"
    yield "atom.global.L2::cache_hint.add.u32 %r2, [%rd1], %r3, %r5;"
    for e in ("L1::evict_last", "L2::evict_first", "L2::128B", "L1::no_allocate", "cg", "nc"):
        yield f"atom.global.{e}.add.u32 %r2, [%rd1], %r3;"
    # vector atoms: width x type x op
    for n in (2, 4, 8):
        for t in ("f32", "f16", "bf16x2", "f64", "u32"):
            for op in ("add", "max", "exch"):
                nf = "" if t in ("f32", "f64", "u32", "b64") else ".noftz"
                yield f"atom.global.v{n}.{t}.{op}{nf} {vec(t, n, 1)}, [%rd1], {vec(t, n, 8)};"
    yield "atom.global.v2.f16.add {%h1, %h2}, [%rd1], {%h3, %h4};"
    yield "atom.global.v4.f32.add.noftz {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6, %f7, %f8};"
    yield "atom.global.add.v2.f32 {%f1, %f2}, [%rd1], {%f3, %f4};"
    yield "atom.global.add.noftz.v2.f16 {%h1, %h2}, [%rd1], {%h3, %h4};"
    yield "atom.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};"
    yield "atom.shared.v2.f32.add {%f1, %f2}, [%r1], {%f3, %f4};"
    yield "atom.relaxed.gpu.global.v4.f32.add {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6, %f7, %f8};"
    yield "atom.global.v2.f32.add.L2::cache_hint {%f1, %f2}, [%rd1], {%f3, %f4}, %rd5;"
    yield "atom.global.L2::cache_hint.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4}, %rd5;"
    yield "atom.global.v2.f32.add {%f1, %f2, %f3}, [%rd1], {%f4, %f5};"
    yield "atom.global.v4.f32.add %f1, [%rd1], %f2;"
    # operands
    yield "atom.global.add.u32 %r2, [%rd1], 1;"
    yield "atom.global.cas.b32 %r2, [%rd1], 0, 1;"
    yield "atom.global.add.f32 %f2, [%rd1], 0f3F800000;"
    yield "atom.global.add.u32 _, [%rd1], %r3;"
    yield "atom.global.add.u32 %rd2, [%rd1], %r3;"
    yield "atom.global.add.u64 %r2, [%rd1], %r3;"
    yield "atom.global.add.f32 %r2, [%rd1], %r3;"
    yield "atom.global.add.u32 %r2, [%rd1];"
    yield "atom.global.cas.b32 %r2, [%rd1], %r3;"
    yield "atom.global.add.u32 %r2, [%rd1], %r3, %r4;"
    yield "atom.global.exch.b32 %r2, [%rd1], %r3, %r4;"
    yield "atom.global.add.u32 %r2, %rd1, %r3;"
    yield "atom.global.add.u32 %r2, [gbuf+4], %r3;"
    yield "atom.shared.add.u32 %r2, [sbuf], %r3;"
    yield "atom.global.add.u32 %r2, [%r1], %r3;"
    yield "atom.global.u32 %r2, [%rd1], %r3;"
    yield "atom.global.add.cas.b32 %r2, [%rd1], %r3, %r4;"
    yield "atom.global.add.add.u32 %r2, [%rd1], %r3;"
    yield "atom.global.add.u8 %h2, [%rd1], %h3;"
    yield "atom.global.cas.b8 %h2, [%rd1], %h3, %h4;"
    yield "atom.global.add.s16 %h2, [%rd1], %h3;"


def red():
    for op in ATOM_OPS:
        for t in ATOM_TYPES if op not in ("cas", "exch") else ("b32",):
            yield _red("global", op, t)
            if t in ("f16", "bf16x2", "f32"):
                yield _red("global", op, t, noftz=True)
    typ = {"and": "b32", "or": "b64", "xor": "b32", "add": "f32", "inc": "u32", "dec": "u32", "min": "s32",
           "max": "u64"}
    for op in typ:
        for sp in ("", "shared", "shared::cluster", "local") if op != "add" else SPACES:
            yield _red(sp, op, typ[op], ADDR[sp])
    for sem in ("", "relaxed", "acquire", "release", "acq_rel", "volatile", "weak", "sc", "mmio"):
        for sc in ("", "cta", "cluster", "gpu", "sys") if sem in ("", "relaxed", "release") else ("", "gpu"):
            yield _red(q(sem, sc, "global"), "add", "u32")
        for sp in ("", "shared", "shared::cluster"):
            yield _red(q(sem, "gpu", sp), "or", "b32", ADDR[sp])
    for op in typ:
        yield _red("global", op, typ[op], hint="L2::cache_hint")
    for t in ("f16", "bf16x2", "f64"):
        yield _red("global", "add", t, hint="L2::cache_hint", noftz=t != "f64")
    yield _red("shared", "add", "u32", ADDR["shared"], hint="L2::cache_hint")
    yield _red("release.gpu.global", "add", "u32", hint="L2::cache_hint")
    yield "red.global.add.u32 [%rd1], %r3, %rd5;"
    yield "red.global.L2::cache_hint.add.u32 [%rd1], %r3;"
    for e in ("L1::evict_last", "L2::evict_first", "L2::64B", "cs"):
        yield f"red.global.{e}.add.u32 [%rd1], %r3;"
    for n in (2, 4, 8):
        for t in ("f32", "bf16", "f16x2", "f64"):
            for op in ("add", "min", "and"):
                nf = "" if t in ("f32", "f64", "u32") else ".noftz"
                yield f"red.global.v{n}.{t}.{op}{nf} [%rd1], {vec(t, n, 8)};"
    yield "red.global.v2.f16.add [%rd1], {%h3, %h4};"
    yield "red.shared.v2.f32.add [%r1], {%f3, %f4};"
    yield "red.v4.f32.add [%rd1], {%f3, %f4, %f5, %f6};"
    yield "red.release.sys.global.v2.f32.add [%rd1], {%f3, %f4};"
    yield "red.global.v2.f32.add.L2::cache_hint [%rd1], {%f3, %f4}, %rd5;"
    yield "red.global.v2.f32.add [%rd1], {%f3, %f4, %f5};"
    yield "red.global.add.u32 [%rd1], 1;"
    yield "red.global.add.f32 [%rd1], 0f3F800000;"
    yield "red.global.add.u32 [%rd1], %rd3;"
    yield "red.global.add.u32 [%rd1];"
    yield "red.global.add.u32 %r2, [%rd1], %r3;"
    yield "red.global.add.u32 [gbuf], %r3;"
    yield "red.global.u32 [%rd1], %r3;"
    yield "red.global.add.min.u32 [%rd1], %r3;"
    yield "red.global.add.u8 [%rd1], %h3;"


def red_async():
    mb = "mbarrier::complete_tx::bytes"
    for op in ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"):
        for t in ("u32", "s32", "u64", "b32", "b64"):
            yield f"red.async.relaxed.cluster.shared::cluster.{mb}.{op}.{t} [%r1], {reg(t, 2)}, [%r3];"
    for sem in ("", "relaxed", "relaxed.gpu", "release.cluster", "relaxed.cta", "cluster", "weak.cluster"):
        yield f"red.async.{q(sem, 'shared::cluster', mb)}.add.u32 [%r1], %r2, [%r3];"
    for sp in ("shared", "shared::cta", "global", ""):
        yield f"red.async.relaxed.cluster.{q(sp, mb)}.add.u32 {ADDR[sp]}, %r2, [%r3];"
    yield "red.async.relaxed.cluster.shared::cluster.add.u32 [%r1], %r2, [%r3];"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.add.u32 [%r1], %r2;"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.add.u32 [sbuf], 5, [mbar];"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.add.noftz.f16 [%r1], %h2, [%r3];"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.v2.add.u32 [%r1], {{%r2, %r4}}, [%r3];"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.L2::cache_hint.add.u32 [%r1], %r2, [%r3], %rd4;"
    yield f"red.async.relaxed.cluster.shared::cluster.{mb}.add.u32 [%rd1], %r2, [%rd3];"
    yield "red.async.release.gpu.global.add.u32 [%rd1], %r2;"


def fences():
    for sem in ("", "sc", "acq_rel", "acquire", "release", "relaxed", "volatile", "weak", "mmio"):
        for sc in ("", "cta", "cluster", "gpu", "sys"):
            yield f"{q('fence', sem, sc)};"
    yield "fence.sc.acq_rel.gpu;"
    yield "fence.gpu.sc;"
    yield "fence.acq_rel.gl;"
    for pk in ("alias", "async", "async.global", "async.shared::cta", "async.shared::cluster", "async.shared",
               "async.local", "global", "tensormap::generic", "generic", ""):
        yield f"{q('fence.proxy', pk)};"
        yield f"{q('membar.proxy', pk)};"
    for sem in ("release", "acquire", "acq_rel"):
        for sc in ("cta", "cluster", "gpu", "sys", ""):
            yield f"{q('fence.proxy.tensormap::generic', sem, sc)};"
    yield "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;"
    yield "fence.proxy.tensormap::generic.acquire.sys [%rd1], 64;"
    yield "fence.proxy.tensormap::generic.acquire.gpu [%rd1], %r2;"
    yield "fence.proxy.tensormap::generic.release.gpu [%rd1], 128;"
    yield "fence.proxy.tensormap::generic.acquire.gpu [p0], 128;"
    for sc in ("cta", "cluster", "gpu", "sys", ""):
        yield f"{q('fence.mbarrier_init.release', sc)};"
    yield "fence.mbarrier_init.acquire.cluster;"
    yield "fence.mbarrier_init.cluster;"
    yield "fence.op_restrict.release.cluster;"
    for sem, ss in (("acquire", "shared::cluster"), ("release", "shared::cta"), ("acquire", "shared::cta"),
                    ("release", "shared::cluster")):
        for sc in ("cluster", "cta", "gpu"):
            yield f"fence.proxy.async::generic.{sem}.sync_restrict::{ss}.{sc};"
    yield "fence.acquire.sync_restrict::shared::cluster.cluster;"
    yield "fence.release.sync_restrict::shared::cta.cluster;"
    yield "fence.acquire.sync_restrict::shared::cta.cluster;"
    for lvl in ("cta", "gl", "sys", "gpu", "cluster", "", "sc.gl", "cta.gl"):
        yield f"{q('membar', lvl)};"
    yield "membar.gl %r1;"
    yield "fence.sc.gpu %r1;"


def cp_async():
    for cop in ("ca", "cg", "cs", ""):
        for sp in ("shared", "shared::cta", "shared::cluster"):
            for size in (4, 8, 16):
                yield f"{q('cp.async', cop, sp, 'global')} [%r1], [%rd1], {size};"
    for size in ("2", "32", "%r2", "0"):
        yield f"cp.async.ca.shared.global [%r1], [%rd1], {size};"
    yield "cp.async.ca.global.shared [%rd1], [%r1], 4;"
    yield "cp.async.ca.shared.local [%r1], [lbuf], 4;"
    yield "cp.async.ca.shared.global [sbuf], [gbuf], 16;"
    yield "cp.async.ca.shared.global [%rd2], [%rd1], 16;"
    yield "cp.async.ca.shared.global [%r1], [%r2], 16;"
    yield "cp.async.ca.shared.global [%r1+16], [%rd1+32], 8;"
    yield "cp.async.cg.shared.global [%r1], %rd1, 16;"
    # src-size / ignore-src / cache hint / prefetch size, pairwise
    for cop, size in (("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16)):
        for extra in (", 2", ", %r2", ", %p1", ", !%p1", ", %rd2", ", 32", ", %r2, %p1"):
            yield f"cp.async.{cop}.shared.global [%r1], [%rd1], {size}{extra};"
        for pf in (("L2::64B", "L2::128B", "L2::256B", "L2::512B") if size == 16 else ("L2::128B",)):
            yield f"cp.async.{cop}.shared.global.{pf} [%r1], [%rd1], {size};"
            yield f"cp.async.{cop}.shared.global.L2::cache_hint.{pf} [%r1], [%rd1], {size}, %rd2;"
        yield f"cp.async.{cop}.shared.global.L2::cache_hint [%r1], [%rd1], {size}, %r2, %rd2;"
        yield f"cp.async.{cop}.shared.global.L2::cache_hint [%r1], [%rd1], {size}, %p1, %rd2;"
    yield "cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd1], 16;"
    yield "cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd1], 16, %r2;"
    yield "cp.async.ca.shared.global.L2::128B.L2::cache_hint [%r1], [%rd1], 16, %rd2;"
    yield "cp.async.ca.shared.global.L2::64B.L2::128B [%r1], [%rd1], 16;"
    for e in ("L1::evict_last", "L2::evict_first", "L1::no_allocate"):
        yield f"cp.async.ca.shared.global.{e} [%r1], [%rd1], 16;"
    yield "cp.async.ca.shared.global.u32 [%r1], [%rd1], 4;"
    yield "cp.async.ca.ca.shared.global [%r1], [%rd1], 4;"
    yield "cp.async.ca.cg.shared.global [%r1], [%rd1], 16;"
    # groups
    yield "cp.async.commit_group;"
    yield "cp.async.commit_group %r1;"
    yield "cp.async.commit_group.sync;"
    yield "cp.async.commit_group.b64;"
    for n in ("0", "1", "7", "%r1", "-1", ""):
        yield f"cp.async.wait_group {n};".replace(" ;", ";")
    yield "cp.async.wait_all;"
    yield "cp.async.wait_all 0;"
    yield "cp.async.wait_group.b32 1;"
    yield "cp.async.wait_all.sync;"
    # cp.async.mbarrier.arrive
    for noinc in ("", "noinc"):
        for sp in ("", "shared", "shared::cta", "shared::cluster", "global"):
            for addr in ("[mbar]", "[%r1]", "[%rd1]"):
                yield f"{q('cp.async.mbarrier.arrive', noinc, sp, 'b64')} {addr};"
    for t in ("b32", "u64", ""):
        yield f"{q('cp.async.mbarrier.arrive.shared', t)} [mbar];"
    yield "cp.async.mbarrier.arrive.shared.b64 [mbar], %r1;"
    yield "cp.async.mbarrier.arrive.shared.b64 %rd1, [mbar];"
    yield "cp.async.mbarrier.arrive.noinc.noinc.shared.b64 [mbar];"
    yield "cp.async.mbarrier.arrive.release.cta.shared.b64 [mbar];"


def _crashes_ptxas(ln: str) -> bool:
    """ptxas 13.0 dies (SIGSEGV, no verdict) on ld/ldu .v8 of 8- or 16-bit elements outside .const/.param."""
    head = ln.split()[0]
    return (head.startswith(("ld.", "ldu.")) and ".v8." in head and head.rsplit(".", 1)[1] in
            ("b8", "u8", "s8", "b16", "u16", "s16") and ".const." not in head and ".param." not in head)


def lines():
    """Every instruction line of the sweep, in a fixed order, without duplicates."""
    seen = set()
    for part in (ld, ldu, st, st_async, prefetch, cache_control, addresses, atom, red, red_async, fences, cp_async):
        for ln in part():
            if ln not in seen and not _crashes_ptxas(ln):
                seen.add(ln)
                yield ln


HEADER = """# Memory qualifier sweep (issue 19), generated by tests/isa_sweep_memory.py (see its docstring for coverage):
# ld ldu st st.async prefetch prefetchu applypriority discard createpolicy cvta isspacep, mov of addresses,
# atom red red.async fence membar and the non-bulk cp.async family, over state spaces, memory-model qualifiers
# and scopes, cache operators, .nc, eviction priorities, cache hints, prefetch sizes, .unified, vector widths and
# types; qualifiers combined pairwise plus deliberately wrong combinations.  Verdicts: ptxas 13.0 -arch=sm_90a at
# .version 9.0, filled by python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_memory.ptx-lines
"""

if __name__ == "__main__":
    OUT.write_text(HEADER + "".join(f"? | {ln}\n" for ln in lines()))
    print(f"{OUT}: {sum(1 for _ in lines())} lines")
