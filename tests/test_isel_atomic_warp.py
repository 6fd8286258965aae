"""Instruction selection of 64-bit and float atomics (atom/red on global and shared memory) and of
match.sync and redux.sync: each runs through the whole pipeline at -O0 and -O3 on the ISA
interpreter.  Atomics are checked against a model that applies the operations in thread order
(xcc's deterministic serialisation, shared by both interpreters) and against the IR interpreter;
the warp operations against an independent per-warp model, with lanes that leave the warp before
the instruction (so that the member mask is partial)."""

from __future__ import annotations

import numpy as np
import pytest

from xcc import runtime as rt

BLOCK, GRID, SLOTS = 64, 2, 4  # SLOTS words per CTA, contended by BLOCK / SLOTS threads each

ATOM_KERNEL = """\
.version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pmem, .param .u64 pold)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<24>;
  .reg .f64 %fd<4>;
  .shared .align 8 .b64 sm[{slots}];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd1, %r4, 8;
  ld.param.u64 %rd2, [pa];
  add.s64 %rd3, %rd2, %rd1;
  ld.global.u64 %rd7, [%rd3];
  ld.param.u64 %rd2, [pb];
  add.s64 %rd3, %rd2, %rd1;
  ld.global.u64 %rd8, [%rd3];
  mov.b64 %fd1, %rd7;
  and.b32 %r5, %r1, {slot_mask};
  mul.wide.u32 %rd4, %r5, 8;
  mad.lo.s32 %r6, %r2, {slots}, %r5;
  mul.wide.u32 %rd5, %r6, 8;
  ld.param.u64 %rd2, [pmem];
  add.s64 %rd9, %rd2, %rd5;
  mov.u32 %r7, sm;
  cvt.u32.u64 %r8, %rd4;
  add.s32 %r9, %r7, %r8;
  setp.ge.u32 %p1, %r1, {slots};
  @%p1 bra WAIT;
  ld.global.u64 %rd10, [%rd9];
  st.shared.u64 [%r9], %rd10;
WAIT:
  bar.sync 0;
  mov.u64 %rd20, 0;
  {body}
  bar.sync 0;
  @%p1 bra DONE;
  ld.shared.u64 %rd10, [%r9];
  {writeback}st.global.u64 [%rd9], %rd10;
DONE:
  ld.param.u64 %rd2, [pold];
  add.s64 %rd3, %rd2, %rd1;
  st.global.u64 [%rd3], %rd20;
  ret;
}}
"""
# In the body: %rd9 is the global word, %r9 the shared word (copied back to global at the end for
# shared atomics, never for global ones),
# %rd7 / %fd1 the operand, %rd8 the CAS new value; the old value goes to %rd20.

U64_MASK = (1 << 64) - 1


def _apply(op: str, kind: str, old: int, v: int, new: int) -> int:
    if kind == "f":
        x, y = (np.array([w], np.uint64).view(np.float64)[0] for w in (old, v))
        return int(np.array([x + y]).view(np.uint64)[0])
    if kind == "s":
        so, sv = (w - (1 << 64) if w >> 63 else w for w in (old, v))
        if op in ("min", "max"):
            return (min if op == "min" else max)(so, sv) & U64_MASK
    return {"add": lambda: (old + v) & U64_MASK, "min": lambda: min(old, v), "max": lambda: max(old, v),
            "and": lambda: old & v, "or": lambda: old | v, "xor": lambda: old ^ v, "exch": lambda: v,
            "cas": lambda: new if old == v else old}[op]()


def _model(op, kind, a, b, mem0):
    """Old values and final memory when each CTA's threads apply their atomics in thread order."""
    mem, old = mem0.copy(), np.zeros(GRID * BLOCK, np.uint64)
    for g in range(GRID * BLOCK):
        w = (g // BLOCK) * SLOTS + (g % BLOCK) % SLOTS
        old[g] = mem[w]
        mem[w] = _apply(op, kind, int(mem[w]), int(a[g]), int(b[g]))
    return old, mem


def _cases():
    cases = {}
    for space, addr in (("global", "%rd9"), ("shared", "%r9")):
        for op in ("add", "min", "max", "and", "or", "xor", "exch", "cas"):
            # no add.s64: ptxas 13.0 refuses it ("Operation .add requires .u32 or .s32 or .u64 ..."), and so does xcc
            for t in ({"add": ("u64",), "min": ("u64", "s64"), "max": ("u64", "s64")}.get(op, ("b64",))):
                src = "%rd7, %rd8" if op == "cas" else "%rd7"
                cases[f"atom.{space}.{op}.{t}"] = (f"atom.{space}.{op}.{t} %rd20, [{addr}], {src};", op, t[0], True)
                if op not in ("exch", "cas"):
                    cases[f"red.{space}.{op}.{t}"] = (f"red.{space}.{op}.{t} [{addr}], %rd7;", op, t[0], False)
        cases[f"atom.{space}.add.f64"] = (f"atom.{space}.add.f64 %fd2, [{addr}], %fd1;\n  mov.b64 %rd20, %fd2;",
                                          "add", "f", True)
        cases[f"red.{space}.add.f64"] = (f"red.{space}.add.f64 [{addr}], %fd1;", "add", "f", False)
    return cases


ATOM_CASES = _cases()


def _atom_inputs(rng, kind):
    n = GRID * BLOCK
    if kind == "f":
        a = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).view(np.uint64)
        mem = rng.standard_normal(GRID * SLOTS).view(np.uint64)
        return a, np.zeros(n, np.uint64), mem
    a = rng.integers(0, 2**64, n, dtype=np.uint64)
    a[::3] = rng.integers(-(2**33), 2**33, a[::3].size).astype(np.int64).astype(np.uint64)
    mem = rng.integers(0, 2**64, GRID * SLOTS, dtype=np.uint64)
    b = rng.integers(0, 2**64, n, dtype=np.uint64)
    a[::4] = np.resize(mem, a[::4].size)  # some CAS compares succeed
    return a, b, mem


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(ATOM_CASES))
def test_atomic(name, opt_level):
    body, op, kind, has_old = ATOM_CASES[name]
    src = ATOM_KERNEL.format(body=body, slots=SLOTS, slot_mask=SLOTS - 1,
                             writeback="" if ".shared." in name else "// ")
    a, b, mem0 = _atom_inputs(np.random.default_rng(sum(map(ord, name))), kind)
    results = {}
    for engine in ("isa", "ir"):
        dev = rt.Device()
        fn = rt.load_module(src, opt_level=opt_level, device=dev, engine=engine).get_function("k")
        mem, old = rt.to_device(mem0, dev), rt.zeros(GRID * BLOCK, np.uint64, dev)
        fn.launch((GRID, 1, 1), (BLOCK, 1, 1), [rt.to_device(a, dev), rt.to_device(b, dev), mem, old])
        results[engine] = (old.copy_to_host(), mem.copy_to_host())
    want_old, want_mem = _model(op, kind, a, b, mem0)
    got_old, got_mem = results["isa"]
    np.testing.assert_array_equal(got_mem, results["ir"][1], err_msg=f"{name}: memory differs from the IR interpreter")
    np.testing.assert_array_equal(got_old, results["ir"][0], err_msg=f"{name}: old values differ from the IR interpreter")
    if kind == "f":  # the order of float additions decides the rounding: compare within tolerance
        np.testing.assert_allclose(got_mem.view(np.float64), want_mem.view(np.float64), rtol=1e-12)
        return
    np.testing.assert_array_equal(got_mem, want_mem, err_msg=f"{name}: final memory")
    if has_old:
        np.testing.assert_array_equal(got_old, want_old, err_msg=f"{name}: old values")


WARP_KERNEL = """\
.version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout, .param .u32 mask)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<24>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd1, %r4, 8;
  ld.param.u64 %rd2, [pa];
  add.s64 %rd3, %rd2, %rd1;
  ld.global.u64 %rd7, [%rd3];
  cvt.u32.u64 %r5, %rd7;
  ld.param.u32 %r10, [mask];
  mov.u64 %rd20, 0;
  and.b32 %r6, %r1, 31;
  shr.u32 %r7, %r10, %r6;
  and.b32 %r8, %r7, 1;
  setp.eq.u32 %p1, %r8, 0;
  @%p1 bra DONE;
  {body}
DONE:
  ld.param.u64 %rd2, [pout];
  add.s64 %rd3, %rd2, %rd1;
  st.global.u64 [%rd3], %rd20;
  ret;
}}
"""
# Lanes whose bit is clear in the member mask branch past the instruction; the others execute it
# with %r5 / %rd7 as operand and the mask in %r10; the result goes to %rd20 (0 in absent lanes).


def _s32(v):
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _warp_model(name, vals, mask):
    """Per warp over the member lanes, from the definitions in the PTX ISA."""
    out = np.zeros(vals.size, np.uint64)
    for w0 in range(0, vals.size, 32):
        lanes = [i for i in range(32) if mask >> i & 1]
        members = 0
        for i in lanes:
            members |= 1 << i
        v = {i: int(vals[w0 + i]) for i in lanes}
        v32 = {i: x & 0xFFFFFFFF for i, x in v.items()}
        for i in lanes:
            if name.startswith("match.any"):
                key = v if name.endswith("b64") else v32
                r = sum(1 << j for j in lanes if key[j] == key[i])
            elif name.startswith("match.all"):
                key = v if "b64" in name else v32
                same = len(set(key.values())) == 1
                r = (members if same else 0) | (int(same) << 32)
            else:
                op, t = name.split(".")[2], name.split(".")[3]
                xs = [_s32(x) for x in v32.values()] if t == "s32" else list(v32.values())
                r = {"add": lambda: sum(xs), "min": lambda: min(xs), "max": lambda: max(xs),
                     "and": lambda: np.bitwise_and.reduce(xs), "or": lambda: np.bitwise_or.reduce(xs),
                     "xor": lambda: np.bitwise_xor.reduce(xs)}[op]()
                r = int(r) & 0xFFFFFFFF
            out[w0 + i] = r
    return out


def _warp_cases():
    cases = {}
    cases["match.any.sync.b32"] = "and.b32 %r11, %r5, 3;\n  match.any.sync.b32 %r0, %r11, %r10;\n  cvt.u64.u32 %rd20, %r0;"
    cases["match.any.sync.b64"] = ("and.b64 %rd8, %rd7, 0x100000001;\n  match.any.sync.b64 %r0, %rd8, %r10;\n"
                                   "  cvt.u64.u32 %rd20, %r0;")
    for t, src in (("b32", "%r11"), ("b64", "%rd8")):
        pre = "and.b32 %r11, %r5, {m};" if t == "b32" else "and.b64 %rd8, %rd7, {m};"
        for tag, m in (("same", "0"), ("differ", "3" if t == "b32" else "0x100000001")):
            cases[f"match.all.sync.{t}.{tag}"] = (
                pre.format(m=m) + f"\n  match.all.sync.{t} %r0|%p2, {src}, %r10;\n  selp.u32 %r12, 1, 0, %p2;\n"
                "  cvt.u64.u32 %rd20, %r0;\n  cvt.u64.u32 %rd21, %r12;\n  shl.b64 %rd21, %rd21, 32;\n"
                "  or.b64 %rd20, %rd20, %rd21;")
    for op in ("add", "min", "max", "and", "or", "xor"):
        for t in (("u32", "s32") if op in ("add", "min", "max") else ("b32",)):
            cases[f"redux.sync.{op}.{t}"] = f"redux.sync.{op}.{t} %r0, %r5, %r10;\n  cvt.u64.u32 %rd20, %r0;"
    return cases


WARP_CASES = _warp_cases()


def _warp_inputs(rng, name):
    vals = rng.integers(0, 2**64, GRID * BLOCK, dtype=np.uint64)
    if "same" in name:
        vals[:] = vals[0]
    return vals


def _masked_vals(name, vals):
    if name.startswith("match.any.sync.b32") or (name.startswith("match.all.sync.b32")):
        return vals & np.uint64(0 if "same" in name else 3)
    if name.startswith("match"):
        return vals & np.uint64(0 if "same" in name else 0x100000001)
    return vals


@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0x5A5AF00F])
@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", sorted(WARP_CASES))
def test_warp_op(name, opt_level, mask):
    vals = _warp_inputs(np.random.default_rng(sum(map(ord, name))), name)
    want = _warp_model(name, _masked_vals(name, vals), mask)
    src = WARP_KERNEL.format(body=WARP_CASES[name])
    for engine in ("isa", "ir"):
        dev = rt.Device()
        fn = rt.load_module(src, opt_level=opt_level, device=dev, engine=engine).get_function("k")
        out = rt.zeros(GRID * BLOCK, np.uint64, dev)
        fn.launch((GRID, 1, 1), (BLOCK, 1, 1), [rt.to_device(vals, dev), out, np.uint32(mask)])
        got = out.copy_to_host()
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (f"{name} ({engine}): {bad.size} threads differ; first thread {bad[0]}: "
                               f"{int(got[bad[0]]):#x}, want {int(want[bad[0]]):#x}")
