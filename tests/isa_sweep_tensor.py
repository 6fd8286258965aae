"""Generator of the tensor and asynchronous-machinery qualifier sweep (issue 19):
tests/data/isa_inventory/sweep_tensor.ptx-lines.

Covers the PTX ISA 9.x warp- and warpgroup-level matrix instructions and Hopper's asynchronous machinery, up to
sm_90a: mma.sync (every shape x layout x type, .satfinite, .xor.popc/.and.popc), mma.sp and
mma.sp::ordered_metadata, wmma.load/store/mma (shapes, layouts, types, state spaces, with and without stride),
ldmatrix/stmatrix/movmatrix, wgmma.mma_async (dense and .sp; shapes n8..n256, every type, scale/negate/transpose
immediates, A from a descriptor or registers), wgmma.fence/commit_group/wait_group, mbarrier (every operation x
.sem x .scope x state space, expect_tx/complete_tx, try_wait with a suspend-time hint, parity forms,
pending_count), cp.async.bulk, cp.async.bulk.tensor (directions, dimensions, load modes, multicast, cache hints,
prefetch), cp.reduce.async.bulk (and .tensor), barrier/bar (.sync/.arrive/.red, .aligned, thread counts),
barrier.cluster, elect.sync, setmaxnreg, griddepcontrol, fence.proxy.* and fence.mbarrier_init,
tensormap.replace/cp_fenceproxy and multimem (ld_reduce, st, red).  Qualifiers are combined pairwise rather than
as a full cartesian product, and deliberately wrong combinations (a shape or type the form does not take, a
missing required qualifier, a wrong fragment size, a qualifier of another state space, a bad immediate) are
mixed in so that both ptxas verdicts occur.

Fragments are vectors of the registers tests/test_isa_inventory.kernel() declares (%r0-23, %f0-15, %fd0-7,
%rd0-15), repeated where a fragment is longer (wgmma's m64n256 accumulators): repeating a register is legal PTX.

``python tests/isa_sweep_tensor.py`` writes the data file with every line as ``? | instruction``;
``python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_tensor.ptx-lines`` fills the verdicts."""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).parent / "data" / "isa_inventory" / "sweep_tensor.ptx-lines"

_COUNT = {"r": 24, "f": 16, "fd": 8, "rd": 16, "h": 16}


def vec(cls: str, n: int, first: int = 0) -> str:
    """``{%cls<first>, ...}`` of ``n`` registers, wrapping round the kernel's register file."""
    return "{" + ", ".join(f"%{cls}{(first + k) % _COUNT[cls]}" for k in range(n)) + "}"


def q(*parts: str) -> str:
    """Join qualifiers, dropping empty ones."""
    return ".".join(p for p in parts if p)


def frag(t: str, n: int, first: int) -> str:
    """A fragment of ``n`` registers holding type ``t`` (f32 in %f, f64 in %fd, the rest packed in %r)."""
    return vec({"f32": "f", "f64": "fd"}.get(t, "r"), n, first)


# ----------------------------------------------------------------------------- mma.sync
# (shape, a/b type, d/c types, A regs, B regs, C/D regs) as the manual's fragment tables give them
_MMA = [
    ("m8n8k4", "f16", ("f16", "f32"), 2, 2, {"f16": 4, "f32": 8}),
    ("m16n8k8", "f16", ("f16", "f32"), 2, 1, {"f16": 2, "f32": 4}),
    ("m16n8k16", "f16", ("f16", "f32"), 4, 2, {"f16": 2, "f32": 4}),
    ("m16n8k8", "bf16", ("f32",), 2, 1, {"f32": 4}),
    ("m16n8k16", "bf16", ("f32",), 4, 2, {"f32": 4}),
    ("m16n8k4", "tf32", ("f32",), 2, 1, {"f32": 4}),
    ("m16n8k8", "tf32", ("f32",), 4, 2, {"f32": 4}),
    ("m8n8k4", "f64", ("f64",), 1, 1, {"f64": 2}),
    ("m16n8k4", "f64", ("f64",), 2, 1, {"f64": 4}),
    ("m16n8k8", "f64", ("f64",), 4, 2, {"f64": 4}),
    ("m16n8k16", "f64", ("f64",), 8, 4, {"f64": 4}),
    ("m8n8k16", "s8", ("s32",), 1, 1, {"s32": 2}),
    ("m16n8k16", "s8", ("s32",), 2, 1, {"s32": 4}),
    ("m16n8k32", "s8", ("s32",), 4, 2, {"s32": 4}),
    ("m8n8k32", "s4", ("s32",), 1, 1, {"s32": 2}),
    ("m16n8k32", "s4", ("s32",), 2, 1, {"s32": 4}),
    ("m16n8k64", "s4", ("s32",), 4, 2, {"s32": 4}),
    ("m8n8k128", "b1", ("s32",), 1, 1, {"s32": 2}),
    ("m16n8k128", "b1", ("s32",), 2, 1, {"s32": 4}),
    ("m16n8k256", "b1", ("s32",), 4, 2, {"s32": 4}),
    ("m16n8k32", "e4m3", ("f32", "f16"), 4, 2, {"f32": 4, "f16": 2}),
    ("m16n8k16", "e4m3", ("f32", "f16"), 2, 1, {"f32": 4, "f16": 2}),
]
_SIGNED = {"s8": ("s8", "u8"), "s4": ("s4", "u4"), "e4m3": ("e4m3", "e5m2")}


def _mma_line(shape, lay, sat, d, a, b, c, na, nb, nd, nc, tail=""):
    dt = "f" if d == "f32" else ("fd" if d == "f64" else "r")
    ct = "f" if c == "f32" else ("fd" if c == "f64" else "r")
    at = "fd" if a == "f64" else "r"
    return (f"mma.sync.aligned.{q(shape, lay, sat, d, a, b, c, tail)} {vec(dt, nd, 1)}, {vec(at, na, 2)}, "
            f"{vec(at, nb, 4)}, {vec(ct, nc, 8)};")


def mma():
    layouts = ("row.col", "col.row", "row.row", "col.col")
    for shape, t, dtypes, na, nb, nd in _MMA:
        kinds = _SIGNED.get(t, (t,))
        for i, (a, b) in enumerate((x, y) for x in kinds for y in kinds):
            for _j, d in enumerate(dtypes):
                for k, c in enumerate(dtypes):
                    if t == "e4m3" and c != d:
                        continue
                    lays = layouts if (i == 0 and k == 0) or shape == "m8n8k4" and t == "f16" else ("row.col",)
                    for lay in lays:
                        tail = ""
                        if t == "b1":
                            tail = "xor.popc"
                        yield _mma_line(shape, lay, "", d, a, b, c, na, nb, nd[d], nd[c], tail)
        d = dtypes[0]
        if t in ("s8", "s4"):
            yield _mma_line(shape, "row.col", "satfinite", d, t, t, d, na, nb, nd[d], nd[d])
            yield _mma_line(shape, "row.col", "satfinite", d, kinds[1], t, d, na, nb, nd[d], nd[d])
        elif t == "b1":
            yield _mma_line(shape, "row.col", "", d, t, t, d, na, nb, nd[d], nd[d], "and.popc")
            yield _mma_line(shape, "row.col", "", d, t, t, d, na, nb, nd[d], nd[d])
            yield _mma_line(shape, "row.col", "", d, t, t, d, na, nb, nd[d], nd[d], "or.popc")
            yield _mma_line(shape, "row.col", "satfinite", d, t, t, d, na, nb, nd[d], nd[d], "xor.popc")
        else:
            yield _mma_line(shape, "row.col", "satfinite", d, t, t, d, na, nb, nd[d], nd[d])
        # a wrong fragment size (one A register too few) and a mixed a/b type
        yield _mma_line(shape, "row.col", "", d, t, t, d, max(na - 1, 1) if na > 1 else 2, nb, nd[d], nd[d],
                        "xor.popc" if t == "b1" else "")
        if t in ("f16", "bf16", "tf32"):
            other = {"f16": "bf16", "bf16": "f16", "tf32": "f16"}[t]
            yield _mma_line(shape, "row.col", "", d, t, other, d, na, nb, nd[d], nd[d])
    # m8n8k4 with bf16 / tf32 (no layout in the manual: refused on purpose), rounding on f64, other odd forms
    yield _mma_line("m8n8k4", "row.col", "", "f32", "bf16", "bf16", "f32", 2, 2, 8, 8)
    yield _mma_line("m8n8k4", "row.col", "", "f32", "tf32", "tf32", "f32", 2, 2, 8, 8)
    for rnd in ("rn", "rz"):
        yield _mma_line("m8n8k4", "row.col", rnd, "f64", "f64", "f64", "f64", 1, 1, 2, 2)
    yield _mma_line("m16n8k32", "row.col", "", "f16", "f16", "f16", "f16", 4, 2, 2, 2)
    yield _mma_line("m16n8k16", "row.col", "", "f32", "s8", "s8", "f32", 2, 1, 4, 4)
    yield _mma_line("m16n8k16", "row.col", "", "s32", "f16", "f16", "s32", 4, 2, 4, 4)
    yield _mma_line("m16n16k16", "row.col", "", "f32", "f16", "f16", "f32", 4, 2, 4, 4)
    yield "mma.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, " \
          "{%f5, %f6, %f7, %f8};"
    yield "mma.sync.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, " \
          "{%f5, %f6, %f7, %f8};"
    yield "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, " \
          "{%r5, %r6}, {%f5, %f6, %f7, %f8};"
    yield "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%f1, %f2, %f3, %f4}, " \
          "{%r5, %r6}, {%f5, %f6, %f7, %f8};"
    yield "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%rd1, %rd2, %rd3, %rd4}, " \
          "{%r5, %r6}, {%f5, %f6, %f7, %f8};"


# ----------------------------------------------------------------------------- mma.sp
_MMA_SP = [
    ("m16n8k16", "f16", ("f16", "f32"), 2, 2),
    ("m16n8k32", "f16", ("f16", "f32"), 4, 4),
    ("m16n8k16", "bf16", ("f32",), 2, 2),
    ("m16n8k32", "bf16", ("f32",), 4, 4),
    ("m16n8k8", "tf32", ("f32",), 2, 2),
    ("m16n8k16", "tf32", ("f32",), 4, 4),
    ("m16n8k32", "s8", ("s32",), 2, 2),
    ("m16n8k64", "s8", ("s32",), 4, 4),
    ("m16n8k64", "s4", ("s32",), 2, 2),
    ("m16n8k128", "s4", ("s32",), 4, 4),
    ("m16n8k64", "e4m3", ("f32", "f16"), 4, 4),
]


def _sp_line(kind, shape, lay, sat, d, a, b, c, na, nb, sel="0x0"):
    nd = 2 if d == "f16" else 4
    nc = 2 if c == "f16" else 4
    dt = "f" if d == "f32" else "r"
    ct = "f" if c == "f32" else "r"
    return (f"{kind}.sync.aligned.{q(shape, lay, sat, d, a, b, c)} {vec(dt, nd, 1)}, {vec('r', na, 2)}, "
            f"{vec('r', nb, 8)}, {vec(ct, nc, 12)}, %r20, {sel};")


def mma_sp():
    for n, (shape, t, dtypes, na, nb) in enumerate(_MMA_SP):
        kinds = _SIGNED.get(t, (t,))
        for kind in ("mma.sp", "mma.sp::ordered_metadata"):
            for i, (a, b) in enumerate((x, y) for x in kinds for y in kinds):
                if kind == "mma.sp" and i % 2:
                    continue
                for d in dtypes:
                    for c in dtypes:
                        if t == "e4m3" and c != d:
                            continue
                        yield _sp_line(kind, shape, "row.col", "", d, a, b, c, na, nb)
            d = dtypes[0]
            if t in ("s8", "s4"):
                yield _sp_line(kind, shape, "row.col", "satfinite", d, t, t, d, na, nb)
            yield _sp_line(kind, shape, "col.row" if n % 2 else "row.row", "", d, t, t, d, na, nb)
        d = dtypes[0]
        # sparsity selectors: 0..3 where the thread groups allow it, out of range, a register
        for sel in ("0x1", "0x2", "0x3", "4", "%r21"):
            yield _sp_line("mma.sp", shape, "row.col", "", d, t, t, d, na, nb, sel)
        yield _sp_line("mma.sp::ordered_metadata", shape, "row.col", "", d, t, t, d, na + 1, nb)
    yield _sp_line("mma.sp", "m16n8k8", "row.col", "", "f32", "f16", "f16", "f32", 2, 2)
    yield _sp_line("mma.sp", "m16n8k32", "row.col", "", "f32", "b1", "b1", "f32", 4, 4)
    yield _sp_line("mma.sp::ordered_metadata", "m16n8k32", "row.col", "", "f32", "f64", "f64", "f32", 4, 4)
    yield _sp_line("mma.sp::unordered", "m16n8k16", "row.col", "", "f32", "f16", "f16", "f32", 2, 2)
    yield ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3}, {%r8, %r9}, "
           "{%f5, %f6, %f7, %f8}, %r20;")


# ----------------------------------------------------------------------------- wmma
# (shape, a type, b type, A regs, B regs, accumulator type(s), C regs by type)
_WMMA = [
    ("m16n16k16", "f16", 8, 8), ("m8n32k16", "f16", 8, 8), ("m32n8k16", "f16", 8, 8),
    ("m16n16k16", "s8", 2, 2), ("m8n32k16", "s8", 1, 4), ("m32n8k16", "s8", 4, 1),
    ("m16n16k16", "u8", 2, 2),
    ("m16n16k16", "bf16", 4, 4), ("m8n32k16", "bf16", 2, 8), ("m32n8k16", "bf16", 8, 2),
    ("m16n16k8", "tf32", 4, 4), ("m8n8k4", "f64", 1, 1), ("m8n8k32", "s4", 1, 1), ("m8n8k32", "u4", 1, 1),
    ("m8n8k128", "b1", 1, 1),
]


def _acc(t: str, shape: str) -> tuple[tuple[str, int], ...]:
    small = shape.startswith("m8n8")
    if t == "f16":
        return (("f16", 4), ("f32", 8))
    if t == "f64":
        return (("f64", 2),)
    if t in ("s8", "u8", "s4", "u4", "b1"):
        return (("s32", 2 if small else 8),)
    return (("f32", 8),)


def wmma():
    spaces = ("", "global", "shared", "shared::cta")
    addr = {"": "[%rd9]", "global": "[%rd9]", "shared": "[%r22]", "shared::cta": "[sbuf]"}
    n = 0
    for shape, t, na, nb in _WMMA:
        accs = _acc(t, shape)
        for ab, cnt in (("a", na), ("b", nb)):
            for lay in ("row", "col"):
                sp = spaces[n % 4]
                n += 1
                stride = ", %r23" if n % 2 else ""
                if t == "b1" and ((ab == "a" and lay == "col") or (ab == "b" and lay == "row")):
                    stride = ", %r23"
                yield f"wmma.load.{ab}.sync.aligned.{q(lay, shape, sp, t)} {frag(t, cnt, 1)}, {addr[sp]}{stride};"
        for ct, cnt in accs:
            for lay in ("row", "col"):
                sp = spaces[n % 4]
                n += 1
                stride = ", %r23" if n % 2 else ""
                yield f"wmma.load.c.sync.aligned.{q(lay, shape, sp, ct)} {frag(ct, cnt, 1)}, {addr[sp]}{stride};"
                yield f"wmma.store.d.sync.aligned.{q(lay, shape, sp, ct)} {addr[sp]}, {frag(ct, cnt, 1)}{stride};"
        # a wrong fragment size
        yield f"wmma.load.a.sync.aligned.row.{shape}.global.{t} {frag(t, na + 1, 1)}, [%rd9];"
        # mma: layouts x accumulator types
        for i, lay in enumerate(("row.col", "col.row", "row.row", "col.col")):
            for dt, nd in accs:
                for ct, nc in accs:
                    if t == "f16":
                        types = f"{dt}.{ct}"
                    elif t == "f64":
                        types = "f64.f64.f64.f64"
                    else:
                        types = f"{dt}.{t}.{t}.{ct}"
                    op = "mma.xor.popc" if t == "b1" else "mma"
                    if i and (dt, ct) != accs[0] * 1 and len(accs) > 1 and (dt, ct) != (accs[0][0], accs[0][0]):
                        continue
                    yield (f"wmma.{op}.sync.aligned.{lay}.{shape}.{types} {frag(dt, nd, 1)}, {frag(t, na, 2)}, "
                           f"{frag(t, nb, 6)}, {frag(ct, nc, 9)};")
        dt, nd = accs[0]
        if t in ("s8", "u8", "s4", "u4"):
            yield (f"wmma.mma.sync.aligned.row.col.{shape}.s32.{t}.{t}.s32.satfinite {frag(dt, nd, 1)}, "
                   f"{frag(t, na, 2)}, {frag(t, nb, 6)}, {frag(dt, nd, 9)};")
        elif t == "f16":
            yield (f"wmma.mma.sync.aligned.row.col.{shape}.f16.f16.satfinite {frag('f16', 4, 1)}, "
                   f"{frag(t, na, 2)}, {frag(t, nb, 6)}, {frag('f16', 4, 9)};")
        elif t == "f64":
            for rnd in ("rn", "rz", "rm", "rp"):
                yield (f"wmma.mma.sync.aligned.row.col.m8n8k4.{rnd}.f64.f64.f64.f64 {{%fd1, %fd2}}, {{%fd3}}, "
                       f"{{%fd4}}, {{%fd5, %fd6}};")
        elif t == "b1":
            yield "wmma.mma.and.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};"
            yield "wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};"
    yield "wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.u8.s32 " \
          "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12}, {%r13, %r14, %r15, %r16, %r17, %r18, " \
          "%r19, %r20};"
    yield "wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.u4.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};"
    yield "wmma.load.a.sync.aligned.row.m16n16k16.local.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [lbuf];"
    yield "wmma.load.a.sync.aligned.row.m16n16k16.const.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [cbuf];"
    yield "wmma.load.a.sync.aligned.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];"
    yield "wmma.load.a.sync.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];"
    yield "wmma.load.a.sync.aligned.row.m16n16k16.global.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd9];"
    yield "wmma.load.c.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4}, [%rd9], 16;"
    yield "wmma.load.a.sync.aligned.row.m16n8k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];"
    yield "wmma.store.d.sync.aligned.row.m16n16k16.global.f16 [%rd9], {%r1, %r2, %r3, %r4}, %rd2;"
    yield "wmma.store.d.sync.aligned.row.m16n16k16.const.f32 [cbuf], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};"
    yield "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, " \
          "{%r1, %r2, %r3, %r4}, {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, " \
          "{%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f0};"
    yield "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32.satfinite {%f1, %f2, %f3, %f4, %f5, %f6, %f7, " \
          "%f8}, {%r1, %r2, %r3, %r4}, {%r9, %r10, %r11, %r12}, {%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f0};"


# ----------------------------------------------------------------------------- ldmatrix / stmatrix / movmatrix
def matrix():
    for _i, (num, n) in enumerate((("x1", 1), ("x2", 2), ("x4", 4))):
        for trans in ("", "trans"):
            for sp in ("", "shared", "shared::cta"):
                a = "[sbuf]" if sp == "shared::cta" else "[%r20]"
                yield f"ldmatrix.sync.aligned.{q('m8n8', num, trans, sp, 'b16')} {vec('r', n, 1)}, {a};"
                yield f"stmatrix.sync.aligned.{q('m8n8', num, trans, sp, 'b16')} {a}, {vec('r', n, 1)};"
        yield f"ldmatrix.sync.aligned.m8n8.{num}.shared.b16 {vec('r', n, 1)}, [%rd2];"
        yield f"ldmatrix.sync.aligned.m8n8.{num}.global.b16 {vec('r', n, 1)}, [%rd2];"
        yield f"stmatrix.sync.aligned.m8n8.{num}.global.b16 [%rd2], {vec('r', n, 1)};"
        yield f"ldmatrix.sync.aligned.m8n8.{num}.shared.b32 {vec('r', n, 1)}, [%r20];"
        yield f"ldmatrix.sync.aligned.m8n8.{num}.shared.b16 {vec('r', n + 1, 1)}, [%r20];"
        yield f"stmatrix.sync.aligned.m8n8.{num}.shared.b8 [%r20], {vec('r', n, 1)};"
        # Blackwell shapes (sm_100a: refused at sm_90a)
        yield f"ldmatrix.sync.aligned.m16n16.{num}.trans.shared.b8 {vec('r', 2 * n, 1)}, [%r20];"
        yield f"ldmatrix.sync.aligned.m8n16.{num}.shared.b8x16.b6x16_p32 {vec('r', n, 1)}, [%r20];"
        yield f"stmatrix.sync.aligned.m16n8.{num}.trans.shared.b8 [%r20], {vec('r', n, 1)};"
    yield "ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1, %r2, %r3}, [%r20];"
    yield "ldmatrix.sync.aligned.m8n8.shared.b16 {%r1}, [%r20];"
    yield "ldmatrix.aligned.m8n8.x1.shared.b16 {%r1}, [%r20];"
    yield "ldmatrix.sync.m8n8.x1.shared.b16 {%r1}, [%r20];"
    yield "ldmatrix.sync.aligned.m8n8.x1.shared.b16 %r1, [%r20];"
    yield "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%f1}, [%r20];"
    yield "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%h1}, [%r20];"
    yield "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r1, %r2}, [sbuf+16];"
    yield "stmatrix.sync.aligned.m8n8.x8.shared.b16 [%r20], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};"
    yield "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r20], %r1;"
    for ty in ("b16", "b32", "b8"):
        yield f"movmatrix.sync.aligned.m8n8.trans.{ty} %r1, %r2;"
    yield "movmatrix.sync.aligned.m8n8.b16 %r1, %r2;"
    yield "movmatrix.sync.aligned.m16n16.trans.b16 %r1, %r2;"
    yield "movmatrix.sync.aligned.m8n8.trans.b16 {%r1}, {%r2};"
    yield "movmatrix.sync.aligned.m8n8.trans.b16 %h1, %h2;"
    yield "movmatrix.aligned.m8n8.trans.b16 %r1, %r2;"


# ----------------------------------------------------------------------------- wgmma
_N_ALL = list(range(8, 257, 8))
_N_INT = [8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256]


def _wg(shape, types, d, a, args, sp=False, tail=""):
    kind = "wgmma.mma_async.sp" if sp else "wgmma.mma_async"
    b = "%rd3" if not sp else "%rd3, %r22, 0"
    return f"{kind}.sync.aligned.{q(shape, types, tail)} {d}, {a}, {b}, {args};"


def wgmma():
    # (k of the dense form, a/b types, d types, transpose allowed)
    kinds = [(16, ("f16",), ("f16", "f32"), True), (16, ("bf16",), ("f32",), True), (8, ("tf32",), ("f32",), False),
             (32, ("e4m3", "e5m2"), ("f16", "f32"), False), (32, ("s8", "u8"), ("s32",), False),
             (256, ("b1",), ("s32",), False)]
    for sp in (False, True):
        for _kn, (k, abt, dts, trans) in enumerate(kinds):
            if sp and abt == ("b1",):
                continue
            kk = 2 * k if sp else k
            ns = _N_INT if abt[0] in ("s8", "b1") else _N_ALL
            for i, n in enumerate(ns):
                dt = dts[i % len(dts)]
                a, b = abt[i % len(abt)], abt[(i // 2) % len(abt)]
                types = f"{dt}.{a}.{b}" if abt[0] != "b1" else "s32.b1.b1"
                tail = "and.popc" if abt[0] == "b1" else ("satfinite" if abt[0] == "s8" and i % 3 == 0 else "")
                nd = n // 4 if dt == "f16" else n // 2
                d = vec("f" if dt == "f32" else "r", nd, i)
                if abt[0] in ("s8", "b1"):
                    dargs, rargs = "%p1", "%p1"
                elif trans:
                    dargs = f"%p1, {(1, -1)[i % 2]}, {(1, -1)[i // 2 % 2]}, {i % 2}, {i // 3 % 2}"
                    rargs = f"%p1, {(1, -1)[i % 2]}, {(1, -1)[i // 2 % 2]}, {i // 3 % 2}"
                else:
                    dargs = rargs = f"%p1, {(1, -1)[i % 2]}, {(1, -1)[i // 2 % 2]}"
                shape = f"m64n{n}k{kk}"
                if sp and i % 3 and n not in (8, 256):
                    continue
                if i % 2 == 0 or n in (8, 256):
                    yield _wg(shape, types, d, "%rd2", dargs, sp, tail)
                if abt[0] != "b1" and (i % 2 == 1 or n in (8, 256)):
                    yield _wg(shape, types, d, vec("r", 4, 18), rargs, sp, tail)
            # wrong forms: N not a multiple of 8 / not in the integer list, wrong k, wrong D count
            dt, a = dts[0], abt[0]
            types = f"{dt}.{a}.{a}" if a != "b1" else "s32.b1.b1"
            tail = "and.popc" if a == "b1" else ""
            nd = 2 if dt == "f16" else 4
            dv = vec("f" if dt == "f32" else "r", nd, 0)
            args = "%p1" if a in ("s8", "b1") else ("%p1, 1, 1, 0, 0" if trans else "%p1, 1, 1")
            yield _wg(f"m64n8k{2 * kk}", types, dv, "%rd2", args, sp, tail)
            yield _wg(f"m64n12k{kk}", types, vec("f" if dt == "f32" else "r", 6, 0), "%rd2", args, sp, tail)
            yield _wg(f"m32n8k{kk}", types, dv, "%rd2", args, sp, tail)
            yield _wg(f"m64n8k{kk}", types, vec("f" if dt == "f32" else "r", nd + 1, 0), "%rd2", args, sp, tail)
            if a in ("s8", "b1"):
                yield _wg(f"m64n40k{kk}", types, vec("r", 20, 0), "%rd2", args, sp, tail)
                yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, 1, 1", sp, tail)
            else:
                yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1", sp, tail)
                if trans:
                    yield _wg(f"m64n8k{kk}", types, dv, vec("r", 4, 18), "%p1, 1, 1, 0, 0", sp, tail)
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, 2, 1, 0, 0", sp, tail)
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, 1, 1, 2, 0", sp, tail)
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, 1, 1, 0, %r1", sp, tail)
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "1, 1, 1, 0, 0", sp, tail)
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, %r1, 1, 0, 0", sp, tail)
                else:
                    yield _wg(f"m64n8k{kk}", types, dv, "%rd2", "%p1, 1, 1, 0, 0", sp, tail)
                yield _wg(f"m64n8k{kk}", types, dv, "%rd2", args, sp, "satfinite")
            if a == "f16":
                yield _wg(f"m64n8k{kk}", "f32.f16.bf16", dv.replace("%r", "%f"), "%rd2", args, sp)
                yield _wg(f"m64n8k{kk}", "f16.f16.f16", vec("r", 2, 0), vec("r", 4, 18), args, sp)
                yield _wg(f"m64n8k{kk}", "f16.f16.f16", vec("r", 2, 0), vec("rd", 2, 2), "%p1, 1, 1, 0", sp)
            if a == "bf16":
                yield _wg(f"m64n8k{kk}", "bf16.bf16.bf16", vec("r", 2, 0), "%rd2", args, sp)
            if a == "s8":
                yield _wg(f"m64n8k{kk}", "s32.s8.s8", dv, vec("r", 4, 18), "%p1", sp)
                yield _wg(f"m64n8k{kk}", "s32.s4.s4", dv, "%rd2", "%p1", sp)
    # sparse selector out of range and from a register
    yield "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, %r22, 2, " \
          "%p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, %r22, %r21, " \
          "%p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, 1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, %p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, %p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %r2, %rd3, %p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %r3, %p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd2, %rd3, !%p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r0, %r1, %r2, %r3}, %rd2, %rd3, %p1, 1, 1, 0, 0;"
    yield "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, 5, %rd3, %p1, 1, 1, 0, 0;"
    # fence / commit / wait
    yield "wgmma.fence.sync.aligned;"
    yield "wgmma.commit_group.sync.aligned;"
    for n in ("0", "1", "7", "%r1", "-1"):
        yield f"wgmma.wait_group.sync.aligned {n};"
    yield "wgmma.fence.sync;"
    yield "wgmma.fence.aligned;"
    yield "wgmma.fence;"
    yield "wgmma.commit_group.sync;"
    yield "wgmma.commit_group.sync.aligned 0;"
    yield "wgmma.wait_group.sync.aligned;"
    yield "wgmma.wait_group.aligned 0;"


# ----------------------------------------------------------------------------- mbarrier
def mbarrier():
    cta_sp = ("", "shared", "shared::cta")
    addr = {"": "[%rd9]", "shared": "[mbar]", "shared::cta": "[mbar]", "shared::cluster": "[%r20]"}
    for sp in cta_sp + ("shared::cluster", "global"):
        a = addr.get(sp, "[%rd9]")
        yield f"mbarrier.init.{q(sp, 'b64')} {a}, %r1;"
        yield f"mbarrier.inval.{q(sp, 'b64')} {a};"
    yield "mbarrier.init.shared.b64 [mbar], 32;"
    yield "mbarrier.init.shared.b32 [mbar], %r1;"
    yield "mbarrier.init.shared.b64 [mbar], %rd1;"
    yield "mbarrier.init.shared.b64 [%r20], %r1;"
    yield "mbarrier.init.shared::cta.b64 [%rd9], %r1;"
    for op in ("expect_tx", "complete_tx"):
        for i, sem in enumerate(("", "relaxed", "release", "acquire")):
            for scope in ("", "cta", "cluster", "gpu"):
                for sp in ("", "shared", "shared::cta", "shared::cluster"):
                    if (i + len(scope) + len(sp)) % 3 and sem not in ("release", "acquire") and scope != "gpu":
                        continue
                    if sem in ("release", "acquire") and scope in ("", "gpu"):
                        continue
                    yield f"mbarrier.{q(op, sem, scope, sp, 'b64')} {addr[sp]}, %r1;"
        yield f"mbarrier.{op}.relaxed.cta.shared::cta.b64 [mbar], 64;"
        yield f"mbarrier.{op}.relaxed.cta.shared::cta.b32 [mbar], %r1;"
        yield f"mbarrier.{op}.relaxed.cta.shared::cta.b64 [mbar], %rd1;"
        yield f"mbarrier.{op}.relaxed.cta.shared::cta.b64 [mbar];"
    # arrive / arrive_drop, with .expect_tx / .noComplete, every .sem x .scope x space, count or not
    for op in ("arrive", "arrive_drop"):
        for mod in ("", "expect_tx", "noComplete"):
            j = 0
            for sem in ("", "release", "relaxed", "acquire"):
                for scope in ("", "cta", "cluster", "gpu"):
                    for sp in ("", "shared", "shared::cta", "shared::cluster"):
                        j += 1
                        if j % 5 and sem != "acquire" and scope != "gpu":
                            continue
                        if (sem == "acquire" or scope == "gpu") and j % 4:
                            continue
                        st = "_" if sp == "shared::cluster" else "%rd1"
                        name = q("mbarrier", op, mod, sem, scope, sp, "b64")
                        if mod:
                            yield f"{name} {st}, {addr[sp]}, %r1;"
                        else:
                            yield f"{name} {st}, {addr[sp]};"
                            if j % 2:
                                yield f"{name} {st}, {addr[sp]}, %r1;"
            yield f"{q('mbarrier', op, mod, 'shared::cluster.b64')} %rd1, [%r20]{', %r1' if mod else ''};"
            yield f"{q('mbarrier', op, mod, 'shared::cta.b64')} _, [mbar]{', %r1' if mod else ''};"
            yield f"{q('mbarrier', op, mod, 'shared.b32')} %r2, [mbar]{', %r1' if mod else ''};"
            if not mod:
                yield f"mbarrier.{op}.shared.b64 %rd1, [mbar], 5;"
                yield f"mbarrier.{op}.shared.b64 %rd1, [mbar], %rd2;"
        yield f"mbarrier.{op}.noComplete.shared.b64 %rd1, [mbar];"
        yield f"mbarrier.{op}.expect_tx.noComplete.shared.b64 %rd1, [mbar], %r1;"
        yield f"mbarrier.{op}.expect_tx.shared.b64 %rd1, [mbar];"
        yield f"mbarrier.{op}.expect_tx.shared.b64 %rd1, [mbar], %r1, %r2;"
    # test_wait / try_wait, with parity, .sem x .scope, suspend-time hint
    for op in ("test_wait", "try_wait"):
        for par in ("", "parity"):
            j = 0
            for sem in ("", "acquire", "relaxed", "release"):
                for scope in ("", "cta", "cluster", "gpu"):
                    for sp in ("", "shared", "shared::cta", "shared::cluster"):
                        j += 1
                        if j % 5 and sem != "release" and scope != "gpu" and sp != "shared::cluster":
                            continue
                        if (sem == "release" or scope == "gpu" or sp == "shared::cluster") and j % 4:
                            continue
                        st = "%r2" if par else "%rd2"
                        a = "[%r20]" if sp == "shared::cluster" else addr[sp]
                        name = q("mbarrier", op, par, sem, scope, sp, "b64")
                        yield f"{name} %p1, {a}, {st};"
                        if op == "try_wait" and j % 2:
                            yield f"{name} %p1, {a}, {st}, %r3;"
            st = "%r2" if par else "%rd2"
            name = q("mbarrier", op, par, "shared", "b64")
            yield f"{name} %p1, [mbar], {st}, 1000;"
            yield f"{name} %r1, [mbar], {st};"
            yield f"{name} %p1, [mbar];"
            yield f"{name} %p1, [mbar], {'%rd2' if par else '%r2'};"
            yield f"{name} %p1, [mbar], {st}, %rd3;"
        yield f"mbarrier.{op}.parity.shared.b64 %p1, [mbar], 1;"
        yield f"mbarrier.{op}.shared.b32 %p1, [mbar], %r2;"
    yield "mbarrier.pending_count.b64 %r1, %rd1;"
    yield "mbarrier.pending_count.shared.b64 %r1, %rd1;"
    yield "mbarrier.pending_count.b32 %r1, %rd1;"
    yield "mbarrier.pending_count.b64 %rd1, %rd2;"
    yield "mbarrier.pending_count.b64 %r1, [mbar];"
    yield "mbarrier.arrive.b64 %rd1, [mbar];"
    yield "mbarrier.wait.shared.b64 %p1, [mbar], %rd2;"
    yield "mbarrier.arrive.release.cta.shared::cta.b64 %rd1, [mbar+8];"


# ----------------------------------------------------------------------------- cp.async.bulk / cp.reduce.async.bulk
def bulk():
    mb = "mbarrier::complete_tx::bytes"
    # global -> shared::cluster / shared::cta
    for dst in ("shared::cluster", "shared::cta"):
        for mc in ("", "multicast::cluster"):
            for hint in ("", "L2::cache_hint"):
                extra = (", %h1" if mc else "") + (", %rd3" if hint else "")
                yield f"cp.async.bulk.{q(dst, 'global', mb, mc, hint)} [%r20], [%rd2], 256, [mbar]{extra};"
        yield f"cp.async.bulk.{dst}.global.{mb} [%r20], [%rd2], %r1, [mbar];"
        yield f"cp.async.bulk.{dst}.global.{mb} [sbuf], [gbuf], 128, [mbar];"
        yield f"cp.async.bulk.{dst}.global.{mb} [%r20], [%rd2], 256;"
        yield f"cp.async.bulk.{dst}.global.bulk_group [%r20], [%rd2], 256, [mbar];"
        yield f"cp.async.bulk.{dst}.global.{mb} [%r20], [%rd2], %rd1, [mbar];"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.L2::cache_hint.multicast::cluster [%r20], [%rd2], 256, [mbar], " \
          "%h1, %rd3;"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.multicast::cluster [%r20], [%rd2], 256, [mbar];"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.multicast::cluster [%r20], [%rd2], 256, [mbar], %r1;"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.L2::cache_hint [%r20], [%rd2], 256, [mbar], %r3;"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.L2::evict_last [%r20], [%rd2], 256, [mbar];"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.cta_group::2 [%r20], [%rd2], 256, [mbar];"
    yield f"cp.async.bulk.shared::cluster.global.{mb}.L2::cache_hint [%r20], [%rd2], 256, [mbar];"
    # shared::cta -> shared::cluster
    yield f"cp.async.bulk.shared::cluster.shared::cta.{mb} [%r20], [%r21], 256, [mbar];"
    yield f"cp.async.bulk.shared::cluster.shared::cta.{mb} [%r20], [%r21], %r1, [mbar];"
    yield f"cp.async.bulk.shared::cluster.shared::cta.{mb}.L2::cache_hint [%r20], [%r21], 256, [mbar], %rd3;"
    yield f"cp.async.bulk.shared::cluster.shared::cta.{mb}.multicast::cluster [%r20], [%r21], 256, [mbar], %h1;"
    yield "cp.async.bulk.shared::cluster.shared::cta.bulk_group [%r20], [%r21], 256;"
    yield f"cp.async.bulk.shared::cta.shared::cta.{mb} [%r20], [%r21], 256, [mbar];"
    yield f"cp.async.bulk.shared::cta.shared::cluster.{mb} [%r20], [%r21], 256, [mbar];"
    # shared::cta -> global
    for hint in ("", "L2::cache_hint"):
        extra = ", %rd3" if hint else ""
        yield f"cp.async.bulk.{q('global.shared::cta.bulk_group', hint)} [%rd2], [%r20], 256{extra};"
        yield f"cp.async.bulk.{q('global.shared::cta.bulk_group', hint)} [%rd2], [%r20], %r1{extra};"
    yield "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd2], [%r20], 256, %h1;"
    yield f"cp.async.bulk.global.shared::cta.{mb} [%rd2], [%r20], 256, [mbar];"
    yield "cp.async.bulk.global.shared::cluster.bulk_group [%rd2], [%r20], 256;"
    yield "cp.async.bulk.global.global.bulk_group [%rd2], [%rd3], 256;"
    yield "cp.async.bulk.global.shared.bulk_group [%rd2], [%r20], 256;"
    yield "cp.async.bulk.global.shared::cta [%rd2], [%r20], 256;"
    yield "cp.async.bulk.global.shared::cta.bulk_group [gbuf], [sbuf], 64;"
    # prefetch, commit, wait
    for hint in ("", "L2::cache_hint"):
        extra = ", %rd3" if hint else ""
        yield f"cp.async.bulk.prefetch.{q('L2.global', hint)} [%rd2], 256{extra};"
        yield f"cp.async.bulk.prefetch.{q('L2.global', hint)} [%rd2], %r1{extra};"
    yield "cp.async.bulk.prefetch.L2.global [gbuf], 128;"
    yield "cp.async.bulk.prefetch.L1.global [%rd2], 256;"
    yield "cp.async.bulk.prefetch.L2.shared::cta [%r20], 256;"
    yield "cp.async.bulk.prefetch.global [%rd2], 256;"
    yield "cp.async.bulk.commit_group;"
    yield "cp.async.bulk.commit_group 0;"
    for n in ("0", "3", "%r1"):
        yield f"cp.async.bulk.wait_group {n};"
        yield f"cp.async.bulk.wait_group.read {n};"
    yield "cp.async.bulk.wait_group;"
    yield "cp.async.bulk.wait_group.write 0;"
    # cp.reduce.async.bulk: to shared::cluster (mbarrier) and to global (bulk_group)
    c_ops = ("and", "or", "xor", "add", "inc", "dec", "min", "max")
    c_types = ("b32", "u32", "s32", "b64", "u64", "s64", "f32", "f16", "bf16", "f64")
    for i, op in enumerate(c_ops):
        for j, t in enumerate(c_types):
            if (i + j) % 3:
                continue
            yield f"cp.reduce.async.bulk.shared::cluster.shared::cta.{mb}.{op}.{t} [%r20], [%r21], 256, [mbar];"
    for i, op in enumerate(c_ops):
        for j, t in enumerate(c_types):
            if (i + j) % 2:
                continue
            hint = "L2::cache_hint" if j % 4 == 0 else ""
            extra = ", %rd3" if hint else ""
            yield f"cp.reduce.async.bulk.{q('global.shared::cta.bulk_group', hint, op, t)} [%rd2], [%r20], 256{extra};"
    for t in ("f16", "bf16", "f32", "f64"):
        yield f"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.{t} [%rd2], [%r20], 256;"
        yield f"cp.reduce.async.bulk.shared::cluster.shared::cta.{mb}.add.noftz.{t} [%r20], [%r21], 256, [mbar];"
    yield "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.noftz.f16 [%rd2], [%r20], 256, %rd3;"
    yield "cp.reduce.async.bulk.global.shared::cta.bulk_group.mul.u32 [%rd2], [%r20], 256;"
    yield "cp.reduce.async.bulk.global.shared::cta.bulk_group.add [%rd2], [%r20], 256;"
    yield "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u16 [%rd2], [%r20], 256;"
    yield f"cp.reduce.async.bulk.global.shared::cta.{mb}.add.u32 [%rd2], [%r20], 256, [mbar];"
    yield "cp.reduce.async.bulk.shared::cluster.shared::cta.bulk_group.add.u32 [%r20], [%r21], 256;"
    yield f"cp.reduce.async.bulk.shared::cta.global.{mb}.add.u32 [%r20], [%rd2], 256, [mbar];"


def _coords(n: int) -> str:
    return "{" + ", ".join(f"%r{1 + k}" for k in range(n)) + "}"


def _im2col(n: int) -> str:
    return "{" + ", ".join(f"%h{1 + k}" for k in range(n)) + "}"


def bulk_tensor():
    mb = "mbarrier::complete_tx::bytes"
    # global -> shared::cluster / shared::cta: dims x load modes x multicast x cache hint
    j = 0
    for dst in ("shared::cluster", "shared::cta"):
        for d in range(1, 6):
            for mode in ("", "tile", "im2col"):
                for mc in ("", "multicast::cluster"):
                    for hint in ("", "L2::cache_hint"):
                        j += 1
                        if dst == "shared::cta" and mc and j % 2:
                            continue
                        if (mc or hint) and j % 3 == 0 and not (dst == "shared::cta" and mc):
                            continue
                        im = f", {_im2col(d - 2)}" if mode == "im2col" and d >= 3 else ""
                        if mode == "im2col" and d < 3 and j % 2:
                            continue
                        extra = im + (", %h9" if mc else "") + (", %rd3" if hint else "")
                        yield (f"cp.async.bulk.tensor.{d}d.{q(dst, 'global', mode, mb, mc, hint)} [%r20], "
                               f"[%rd2, {_coords(d)}], [mbar]{extra};")
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [%rd2, {_coords(3)}], [mbar];"
    yield f"cp.async.bulk.tensor.3d.shared::cluster.global.im2col.{mb} [%r20], [%rd2, {_coords(3)}], [mbar];"
    yield f"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.{mb} [%r20], [%rd2, {_coords(4)}], [mbar], " \
          f"{_im2col(1)};"
    yield f"cp.async.bulk.tensor.6d.shared::cluster.global.tile.{mb} [%r20], [%rd2, {_coords(6)}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.{mb} [%r20], [%rd2, {_coords(5)}], [mbar];"
    yield f"cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.{mb} [%r20], [%rd2, {_coords(3)}], [mbar], " \
          "{%h1, %h2};"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb}.cta_group::2 [%r20], [%rd2, {_coords(2)}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.bulk_group [%r20], [%rd2, {_coords(2)}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [%rd2, {_coords(2)}];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [%rd2, {{%rd4, %rd5}}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [%rd2, {{%r1, 0}}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [%r2, {_coords(2)}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.{mb} [%r20], [p0, {_coords(2)}], [mbar];"
    yield f"cp.async.bulk.tensor.2d.global.shared::cluster.tile.{mb} [%rd2, {_coords(2)}], [%r20], [mbar];"
    # shared::cta -> global, and reductions
    for d in range(1, 6):
        for mode in ("", "tile", "im2col_no_offs"):
            for hint in ("", "L2::cache_hint"):
                extra = ", %rd3" if hint else ""
                yield f"cp.async.bulk.tensor.{d}d.{q('global.shared::cta', mode, 'bulk_group', hint)} " \
                      f"[%rd2, {_coords(d)}], [%r20]{extra};"
    yield f"cp.async.bulk.tensor.2d.global.shared::cta.im2col.bulk_group [%rd2, {_coords(2)}], [%r20];"
    yield f"cp.async.bulk.tensor.3d.global.shared::cta.im2col.bulk_group [%rd2, {_coords(3)}], [%r20];"
    yield f"cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%rd2, {_coords(5)}], [%r20];"
    yield f"cp.async.bulk.tensor.2d.global.shared::cta.tile.{mb} [%rd2, {_coords(2)}], [%r20], [mbar];"
    yield f"cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.multicast::cluster [%rd2, {_coords(2)}], " \
          "[%r20], %h1;"
    j = 0
    for op in ("add", "min", "max", "inc", "dec", "and", "or", "xor", "mul"):
        for d in range(1, 6):
            j += 1
            mode = ("tile", "", "im2col_no_offs")[j % 3]
            hint = "L2::cache_hint" if j % 4 == 0 else ""
            extra = ", %rd3" if hint else ""
            yield f"cp.reduce.async.bulk.tensor.{d}d.global.shared::cta.{q(op, mode, 'bulk_group', hint)} " \
                  f"[%rd2, {_coords(d)}], [%r20]{extra};"
    yield f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.{mb} [%rd2, {_coords(2)}], [%r20], [mbar];"
    yield f"cp.reduce.async.bulk.tensor.2d.shared::cluster.shared::cta.add.tile.{mb} [%r20], [%rd2, {_coords(2)}], " \
          "[mbar];"
    yield f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.u32.tile.bulk_group [%rd2, {_coords(2)}], [%r20];"
    yield f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd2, {_coords(2)}], [%r20];"
    # prefetch
    for d in range(1, 6):
        for mode in ("", "tile", "im2col"):
            for hint in ("", "L2::cache_hint"):
                if mode == "im2col" and d < 3 and hint:
                    continue
                im = f", {_im2col(d - 2)}" if mode == "im2col" and d >= 3 else ""
                extra = im + (", %rd3" if hint else "")
                yield f"cp.async.bulk.prefetch.tensor.{d}d.{q('L2.global', mode, hint)} [%rd2, {_coords(d)}]{extra};"
    yield f"cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4 [%rd2, {_coords(5)}];"
    yield f"cp.async.bulk.prefetch.tensor.2d.L1.global.tile [%rd2, {_coords(2)}];"
    yield f"cp.async.bulk.prefetch.tensor.2d.L2.shared::cta.tile [%rd2, {_coords(2)}];"
    yield f"cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%rd2, {_coords(3)}];"


# ----------------------------------------------------------------------------- barriers, elect, misc
def barriers():
    j = 0
    for name in ("barrier", "bar", "barrier.cta", "bar.cta"):
        for al in ("", "aligned"):
            j += 1
            yield f"{q(name, 'sync', al)} 0;"
            yield f"{q(name, 'sync', al)} %r1;"
            yield f"{q(name, 'sync', al)} {j % 16}, {32 * (j % 4 + 1)};"
            yield f"{q(name, 'sync', al)} %r1, %r2;"
            yield f"{q(name, 'arrive', al)} 1, 64;"
            yield f"{q(name, 'arrive', al)} %r1, %r2;"
            yield f"{q(name, 'arrive', al)} 1;"
            yield f"{q(name, 'red.popc', al, 'u32')} %r1, 0, %p1;"
            yield f"{q(name, 'red.popc', al, 'u32')} %r1, 1, 64, !%p1;"
            for op in ("and", "or"):
                yield f"{q(name, 'red', op, al, 'pred')} %p1, {j % 2}, %p2;"
                yield f"{q(name, 'red', op, al, 'pred')} %p1, %r1, %r2, !%p2;"
    yield "barrier.sync 16;"
    yield "barrier.sync 0, 33;"
    yield "barrier.sync 0, 0;"
    yield "barrier.sync 0, 1056;"
    yield "barrier.sync 15, 1024;"
    yield "bar.sync 0, 31;"
    yield "bar.arrive 0, 48;"
    yield "barrier.red.popc.u64 %rd1, 0, %p1;"
    yield "barrier.red.popc.pred %p1, 0, %p2;"
    yield "barrier.red.xor.pred %p1, 0, %p2;"
    yield "barrier.red.and.u32 %r1, 0, %p2;"
    yield "barrier.red.popc.u32 %r1, 0, %r2;"
    yield "barrier.red.and.pred %p1, 0;"
    yield "barrier.sync.aligned.cta 0;"
    yield "barrier.sync %rd1;"
    yield "barrier.arrive.sync 0, 32;"
    yield "barrier.sync.arrive 0, 32;"
    yield "barrier.wait 0;"
    yield "bar.warp.sync 0xffffffff;"
    yield "bar.warp.sync %r1;"
    yield "bar.warp.sync.aligned 0xffffffff;"
    yield "bar.warp.sync;"
    for op, sems in (("arrive", ("", "release", "relaxed", "acquire")), ("wait", ("", "acquire", "release"))):
        for sem in sems:
            for al in ("", "aligned"):
                yield f"barrier.cluster.{q(op, sem, al)};"
    yield "barrier.cluster.arrive.release.relaxed;"
    yield "barrier.cluster.sync;"
    yield "barrier.cluster.arrive 0;"
    yield "barrier.cluster.wait.aligned.acquire;"
    yield "barrier.cluster;"
    # elect.sync
    for d in ("%r1|%p1", "_|%p1", "%r1", "%p1", "%r1|_"):
        for m in ("0xffffffff", "%r2"):
            yield f"elect.sync {d}, {m};"
    yield "elect.sync %rd1|%p1, 0xffffffff;"
    yield "elect %r1|%p1, 0xffffffff;"
    yield "elect.sync.aligned %r1|%p1, 0xffffffff;"
    yield "elect.sync %r1|%p1;"
    # setmaxnreg
    for act in ("inc", "dec"):
        for n in (24, 32, 128, 240, 256, 16, 100, 264, 0):
            yield f"setmaxnreg.{act}.sync.aligned.u32 {n};"
        yield f"setmaxnreg.{act}.sync.aligned.u32 %r1;"
        yield f"setmaxnreg.{act}.sync.u32 64;"
        yield f"setmaxnreg.{act}.aligned.u32 64;"
        yield f"setmaxnreg.{act}.sync.aligned.s32 64;"
        yield f"setmaxnreg.{act}.sync.aligned 64;"
    yield "setmaxnreg.sync.aligned.u32 64;"
    yield "setmaxnreg.set.sync.aligned.u32 64;"
    # griddepcontrol
    yield "griddepcontrol.launch_dependents;"
    yield "griddepcontrol.wait;"
    yield "griddepcontrol.launch_dependents 0;"
    yield "griddepcontrol;"
    yield "griddepcontrol.arrive;"
    yield "griddepcontrol.wait.sync;"


def fences():
    for kind in ("alias", "async", "async.global", "async.shared::cta", "async.shared::cluster", "async.shared",
                 "async.local", "async.const", "global", "constant"):
        yield f"fence.proxy.{kind};"
    for sem in ("release", "acquire"):
        for scope in ("cta", "cluster", "gpu", "sys", ""):
            tail = " [%rd2], 128" if sem == "acquire" else ""
            yield f"fence.proxy.tensormap::generic.{q(sem, scope)}{tail};"
    yield "fence.proxy.tensormap::generic.release.gpu [%rd2], 128;"
    yield "fence.proxy.tensormap::generic.acquire.gpu;"
    yield "fence.proxy.tensormap::generic.acquire.gpu [%rd2], 64;"
    yield "fence.proxy.tensormap::generic.acquire.gpu [%rd2], %r1;"
    yield "fence.proxy.tensormap::generic.acquire.gpu [gbuf], 128;"
    yield "fence.proxy.tensormap::generic.acq_rel.gpu;"
    yield "fence.proxy.generic::tensormap.release.gpu;"
    for sem in ("acquire", "release"):
        for scope in ("cluster", "cta"):
            yield f"fence.proxy.async::generic.{sem}.sync_restrict::shared::cluster.{scope};"
            yield f"fence.proxy.async::generic.{sem}.sync_restrict::shared::cta.{scope};"
    yield "fence.acquire.sync_restrict::shared::cluster.cluster;"
    yield "fence.release.sync_restrict::shared::cta.cluster;"
    yield "fence.mbarrier_init.release.cluster;"
    yield "fence.mbarrier_init.release.cta;"
    yield "fence.mbarrier_init.acquire.cluster;"
    yield "fence.mbarrier_init.cluster;"
    yield "fence.mbarrier_init;"
    yield "fence.mbarrier_init.release.gpu;"
    yield "fence.proxy.async.release.cta;"
    yield "fence.proxy;"


def tensormap():
    fields = [("global_address", "b64", "%rd3", False), ("rank", "b32", "%r3", False),
              ("box_dim", "b32", "%r3", True), ("global_dim", "b32", "%r3", True),
              ("global_stride", "b64", "%rd3", True), ("element_stride", "b32", "%r3", True),
              ("elemtype", "b32", "%r3", False), ("interleave_layout", "b32", "%r3", False),
              ("swizzle_mode", "b32", "%r3", False), ("swizzle_atomicity", "b32", "%r3", False),
              ("fill_mode", "b32", "%r3", False)]
    for _i, (f, t, v, ord_) in enumerate(fields):
        for sp in ("global", "shared::cta", ""):
            a = "[%rd2]" if sp != "shared::cta" else "[%r20]"
            o = "1, " if ord_ else ""
            yield f"tensormap.replace.tile.{q(f, sp, 'b1024', t)} {a}, {o}{v};"
        wrong_t, wrong_v = ("b32", "%r3") if t == "b64" else ("b64", "%rd3")
        yield f"tensormap.replace.tile.{f}.global.b1024.{wrong_t} [%rd2], {'1, ' if ord_ else ''}{wrong_v};"
        if ord_:
            yield f"tensormap.replace.tile.{f}.global.b1024.{t} [%rd2], {v};"
            yield f"tensormap.replace.tile.{f}.global.b1024.{t} [%rd2], %r4, {v};"
            yield f"tensormap.replace.tile.{f}.global.b1024.{t} [%rd2], 5, {v};"
        else:
            yield f"tensormap.replace.tile.{f}.global.b1024.{t} [%rd2], {'1' if t == 'b32' else '0'};"
    yield "tensormap.replace.tile.rank.global.b512.b32 [%rd2], %r3;"
    yield "tensormap.replace.im2col.rank.global.b1024.b32 [%rd2], %r3;"
    yield "tensormap.replace.rank.global.b1024.b32 [%rd2], %r3;"
    yield "tensormap.replace.tile.rank.shared::cluster.b1024.b32 [%r20], %r3;"
    yield "tensormap.replace.tile.bogus.global.b1024.b32 [%rd2], %r3;"
    for scope in ("cta", "cluster", "gpu", "sys"):
        yield f"tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.{scope}.sync.aligned " \
              "[%rd2], [%r20], 128;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%r20], 64;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%r20], %r1;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.acquire.gpu.sync.aligned [%rd2], [%r20], 128;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu [%rd2], [%r20], 128;"
    yield "tensormap.cp_fenceproxy.shared::cta.global.tensormap::generic.release.gpu.sync.aligned [%r20], [%rd2], 128;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.release.gpu.sync.aligned [%rd2], [%r20], 128;"
    yield "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.sync.aligned [%rd2], [%r20], 128;"


# ----------------------------------------------------------------------------- multimem
def multimem():
    int_ops = ("min", "max", "add", "and", "or", "xor")
    types = [("b32", "%r1"), ("u32", "%r1"), ("s32", "%r1"), ("b64", "%rd1"), ("u64", "%rd1"), ("s64", "%rd1"),
             ("f32", "%f1"), ("f64", "%fd1"), ("f16", "%h1"), ("f16x2", "%r1"), ("bf16", "%h1"), ("bf16x2", "%r1")]
    sems = [("", ""), ("relaxed", "sys"), ("acquire", "gpu"), ("relaxed", "cta"), ("acquire", "cluster"),
            ("weak", ""), ("release", "gpu"), ("relaxed", "")]
    j = 0
    for op in int_ops:
        for t, r in types:
            j += 1
            if j % 2:
                continue
            sem, scope = sems[j // 2 % len(sems)]
            yield f"multimem.ld_reduce.{q(sem, scope, 'global', op, t)} {r}, [%rd2];"
    for t, n in (("f32", 2), ("f32", 4), ("f16x2", 4), ("bf16x2", 2), ("f16", 2), ("f16x2", 8), ("u32", 2),
                 ("f64", 2), ("f16", 8), ("bf16x2", 8)):
        cls = "f" if t == "f32" else ("fd" if t == "f64" else ("h" if t == "f16" else "r"))
        for op in ("add", "min"):
            yield f"multimem.ld_reduce.relaxed.sys.global.{op}.v{n}.{t} {vec(cls, n, 1)}, [%rd2];"
    for acc in ("acc::f32", "acc::f16"):
        yield f"multimem.ld_reduce.relaxed.sys.global.add.{acc}.v4.f16x2 {{%r1, %r2, %r3, %r4}}, [%rd2];"
        yield f"multimem.ld_reduce.relaxed.sys.global.add.{acc}.bf16x2 %r1, [%rd2];"
    yield "multimem.ld_reduce.global.add.u32 %r1, [%rd2];"
    yield "multimem.ld_reduce.add.u32 %r1, [%rd2];"
    yield "multimem.ld_reduce.shared.add.u32 %r1, [%r20];"
    yield "multimem.ld_reduce.global.inc.u32 %r1, [%rd2];"
    yield "multimem.ld_reduce.global.and.f32 %f1, [%rd2];"
    yield "multimem.ld_reduce.global.add.u16 %h1, [%rd2];"
    yield "multimem.ld_reduce.global.add.u32 %r1, [gbuf];"
    yield "multimem.ld_reduce.global.add.u32 %r1, %rd2;"
    j = 0
    st_sems = [("", ""), ("relaxed", "sys"), ("release", "gpu"), ("weak", ""), ("relaxed", "cluster"),
               ("release", "cta"), ("acquire", "gpu")]
    for t, r in types:
        j += 1
        sem, scope = st_sems[j % len(st_sems)]
        yield f"multimem.st.{q(sem, scope, 'global', t)} [%rd2], {r};"
    for t, n in (("f32", 2), ("f32", 4), ("f16x2", 4), ("bf16x2", 8), ("u32", 4)):
        cls = "f" if t == "f32" else "r"
        yield f"multimem.st.relaxed.sys.global.v{n}.{t} [%rd2], {vec(cls, n, 1)};"
    yield "multimem.st.global.u8 [%rd2], %h1;"
    j = 0
    red_ops = ("add", "min", "max", "and", "or", "xor", "inc", "dec")
    for op in red_ops:
        for t, r in types:
            j += 1
            if j % 3:
                continue
            sem, scope = st_sems[j // 3 % len(st_sems)]
            yield f"multimem.red.{q(sem, scope, 'global', op, t)} [%rd2], {r};"
    for t, n in (("f32", 2), ("f32", 4), ("f16x2", 4), ("bf16x2", 8), ("u32", 2)):
        cls = "f" if t == "f32" else "r"
        yield f"multimem.red.relaxed.sys.global.add.v{n}.{t} [%rd2], {vec(cls, n, 1)};"
    yield "multimem.red.global.add.u32 [%rd2];"
    yield "multimem.red.global.add.u32 %r1, [%rd2], %r2;"
    yield "multimem.cp.global.u32 [%rd2], [%rd3];"


# ----------------------------------------------------------------------------- known differences
# (pattern, why): an ``ok`` line of the data file matching a pattern is one xcc refuses today (a gap); the test
# marks it a strict xfail, so a pattern matching a line xcc compiles turns the test red.
_GAPS = [
    (r"^mma\.sync\.aligned\.m8n8k4\.row\.col\.f32\.(bf16|tf32)\.",
     "refused on purpose: the PTX ISA gives m8n8k4 .bf16/.tf32 no fragment layout, and ptxas 13.0 emits no "
     "arithmetic for them (commit 238384c)"),
]


def known() -> dict[str, str]:
    """The lines of the data file xcc's verdict differs on today: instruction -> why (tests/test_isa_sweep.py's
    KNOWN takes them)."""
    import re

    out = {}
    for ln in OUT.read_text().splitlines():
        if ln.startswith("ok | "):
            inst = ln[5:].strip()
            why = next((w for p, w in _GAPS if re.search(p, inst)), None)
            if why is not None:
                out[inst] = why
    return out


def lines():
    """Every instruction line of the sweep, in a fixed order, without duplicates."""
    seen = set()
    for part in (mma, mma_sp, wmma, matrix, wgmma, mbarrier, bulk, bulk_tensor, barriers, fences, tensormap,
                 multimem):
        for ln in part():
            if ln not in seen:
                seen.add(ln)
                yield ln


HEADER = """# Tensor and asynchronous-machinery qualifier sweep (issue 19), generated by tests/isa_sweep_tensor.py (see its
# docstring for coverage): mma.sync, mma.sp, wmma, ldmatrix/stmatrix/movmatrix, wgmma, mbarrier, cp.async.bulk(.tensor),
# cp.reduce.async.bulk(.tensor), barrier/bar, barrier.cluster, elect.sync, setmaxnreg, griddepcontrol, fence.proxy,
# fence.mbarrier_init, tensormap.replace/cp_fenceproxy, multimem; qualifiers combined pairwise plus deliberately
# wrong combinations.  Verdicts: ptxas 13.0 -arch=sm_90a at .version 9.0, filled by
# python tests/test_isa_sweep.py --ptxas tests/data/isa_inventory/sweep_tensor.ptx-lines
"""

if __name__ == "__main__":
    OUT.write_text(HEADER + "".join(f"? | {ln}\n" for ln in lines()))
    print(f"{OUT}: {sum(1 for _ in lines())} lines")
