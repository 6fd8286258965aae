"""Generate the LLVM-NVPTX PTX corpus in ``examples/llvm/`` with llvmlite.

Each kernel is built with llvmlite's IR builder (``llvmlite.ir``), marked as a kernel with
``nvvm.annotations`` (``!{ptr @fn, !"kernel", i32 1}``), optimised with LLVM's default
``-O2`` module pipeline and lowered by LLVM's NVPTX backend (``llvmlite.binding``, triple
``nvptx64-nvidia-cuda``) to ``examples/llvm/<name>.ptx``. Nothing here needs a GPU or CUDA.

Kernels (all 1-D launches; element counts are ``i32`` parameters):

* ``vector_add``   (sm_70): ``c[i] = a[i] + b[i]`` for ``i = ctaid.x*ntid.x + tid.x < n`` (f32).
* ``saxpy_loop``   (sm_70): grid-stride loop ``y[i] = a*x[i] + y[i]`` (f32, ``llvm.fma``).
* ``block_sum``    (sm_70): 256 x i32 shared-memory (addrspace 3) tree sum with
  ``llvm.nvvm.barrier0``; thread 0 stores ``out[ctaid.x]``. Needs ``ntid.x == 256``.
* ``row_xor_sum``  (sm_80): one thread per row, ``out[r] = sum_j (a[r*m + j] ^ j)`` (i32 loop).

Needs only llvmlite (the project venv has it). Run from the repository root:

    .venv/bin/python examples/llvm/gen_llvm.py

The output is deterministic: rerunning rewrites byte-identical files.
"""

from __future__ import annotations

import os
from pathlib import Path

# Print every pointer as an opaque ``ptr`` (LLVM 17+ reads no typed pointers); must be set
# before llvmlite is imported.
os.environ["LLVMLITE_ENABLE_IR_LAYER_TYPED_POINTERS"] = "0"

import llvmlite.binding as llvm  # noqa: E402
import llvmlite.ir as ir  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent
TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
GPTR = ir.PointerType(addrspace=1)  # global
VOID = ir.VoidType()


# --------------------------------------------------------------------------- helpers


def _new_module(name: str) -> ir.Module:
    mod = ir.Module(name=name)
    mod.triple = TRIPLE
    mod.data_layout = DATA_LAYOUT
    return mod


def _intrinsic(mod: ir.Module, name: str, ret: ir.Type, args: tuple = ()) -> ir.Function:
    if name in mod.globals:
        return mod.globals[name]
    return ir.Function(mod, ir.FunctionType(ret, list(args)), name=name)


def _sreg(mod: ir.Module, b: ir.IRBuilder, reg: str) -> ir.Value:
    """Call llvm.nvvm.read.ptx.sreg.<reg> (e.g. 'tid.x')."""
    fn = _intrinsic(mod, f"llvm.nvvm.read.ptx.sreg.{reg}", I32)
    return b.call(fn, [], name=reg.replace(".", "_"))


def _kernel(mod: ir.Module, name: str, params: list[tuple[str, ir.Type]]) -> ir.Function:
    fn = ir.Function(mod, ir.FunctionType(VOID, [t for _, t in params]), name=name)
    for arg, (pname, _) in zip(fn.args, params):
        arg.name = pname
    # !nvvm.annotations = !{!{ptr @name, !"kernel", i32 1}} -> .entry
    mod.add_named_metadata("nvvm.annotations", [fn, "kernel", I32(1)])
    return fn


def _global_index(mod: ir.Module, b: ir.IRBuilder) -> ir.Value:
    ctaid = _sreg(mod, b, "ctaid.x")
    ntid = _sreg(mod, b, "ntid.x")
    tid = _sreg(mod, b, "tid.x")
    return b.add(b.mul(ctaid, ntid), tid, name="i")


def _elem_ptr(b: ir.IRBuilder, base: ir.Value, idx32: ir.Value, ty: ir.Type) -> ir.Value:
    return b.gep(base, [b.sext(idx32, I64)], inbounds=True, source_etype=ty)


# --------------------------------------------------------------------------- kernels


def build_vector_add() -> ir.Module:
    mod = _new_module("vector_add")
    fn = _kernel(mod, "vector_add", [("n", I32), ("a", GPTR), ("b", GPTR), ("c", GPTR)])
    n, a, bb, c = fn.args
    entry, body, done = (fn.append_basic_block(x) for x in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    i = _global_index(mod, b)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    x = b.load(_elem_ptr(b, a, i, F32), typ=F32, align=4)
    y = b.load(_elem_ptr(b, bb, i, F32), typ=F32, align=4)
    b.store(b.fadd(x, y), _elem_ptr(b, c, i, F32), align=4)
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return mod


def build_saxpy_loop() -> ir.Module:
    mod = _new_module("saxpy_loop")
    fn = _kernel(mod, "saxpy_loop", [("n", I32), ("a", F32), ("x", GPTR), ("y", GPTR)])
    n, a, x, y = fn.args
    fma = _intrinsic(mod, "llvm.fma.f32", F32, (F32, F32, F32))
    entry, loop, done = (fn.append_basic_block(s) for s in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    i0 = _global_index(mod, b)
    stride = b.mul(_sreg(mod, b, "nctaid.x"), _sreg(mod, b, "ntid.x"), name="stride")
    b.cbranch(b.icmp_signed("<", i0, n), loop, done)
    b.position_at_end(loop)
    i = b.phi(I32, name="idx")
    i.add_incoming(i0, entry)
    xp, yp = _elem_ptr(b, x, i, F32), _elem_ptr(b, y, i, F32)
    r = b.call(fma, [a, b.load(xp, typ=F32, align=4), b.load(yp, typ=F32, align=4)])
    b.store(r, yp, align=4)
    nxt = b.add(i, stride, name="next")
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    return mod


def build_block_sum() -> ir.Module:
    mod = _new_module("block_sum")
    fn = _kernel(mod, "block_sum", [("n", I32), ("inp", GPTR), ("out", GPTR)])
    n, inp, out = fn.args
    tile_ty = ir.ArrayType(I32, 256)
    tile = ir.GlobalVariable(mod, tile_ty, "block_sum_tile", addrspace=3)
    tile.linkage = "internal"
    tile.initializer = ir.Constant(tile_ty, ir.Undefined)  # __shared__ has no initialiser
    tile.align = 4
    barrier = _intrinsic(mod, "llvm.nvvm.barrier0", VOID)

    blocks = [fn.append_basic_block(s) for s in
              ("entry", "load", "stored", "loop", "add", "next", "tail", "write", "done")]
    entry, load, stored, loop, add, nxt, tail, write, done = blocks
    b = ir.IRBuilder(entry)
    tid = _sreg(mod, b, "tid.x")
    i = b.add(b.mul(_sreg(mod, b, "ctaid.x"), _sreg(mod, b, "ntid.x")), tid, name="i")
    slot = b.gep(tile, [I32(0), tid], inbounds=True)
    b.cbranch(b.icmp_signed("<", i, n), load, stored)
    b.position_at_end(load)
    v = b.load(_elem_ptr(b, inp, i, I32), typ=I32, align=4)
    b.branch(stored)
    b.position_at_end(stored)
    val = b.phi(I32, name="val")
    val.add_incoming(v, load)
    val.add_incoming(I32(0), entry)
    b.store(val, slot, align=4)
    b.call(barrier, [])
    b.branch(loop)
    # for (s = 128; s > 0; s >>= 1) { if (tid < s) tile[tid] += tile[tid + s]; barrier0(); }
    b.position_at_end(loop)
    s = b.phi(I32, name="s")
    s.add_incoming(I32(128), stored)
    b.cbranch(b.icmp_unsigned("<", tid, s), add, nxt)
    b.position_at_end(add)
    other = b.gep(tile, [I32(0), b.add(tid, s)], inbounds=True)
    total = b.add(b.load(slot, typ=I32, align=4), b.load(other, typ=I32, align=4))
    b.store(total, slot, align=4)
    b.branch(nxt)
    b.position_at_end(nxt)
    b.call(barrier, [])
    s2 = b.lshr(s, I32(1), name="s.next")
    s.add_incoming(s2, nxt)
    b.cbranch(b.icmp_unsigned("!=", s2, I32(0)), loop, tail)
    b.position_at_end(tail)
    b.cbranch(b.icmp_unsigned("==", tid, I32(0)), write, done)
    b.position_at_end(write)
    res = b.load(slot, typ=I32, align=4)
    b.store(res, _elem_ptr(b, out, _sreg(mod, b, "ctaid.x"), I32), align=4)
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return mod


def build_row_xor_sum() -> ir.Module:
    mod = _new_module("row_xor_sum")
    fn = _kernel(mod, "row_xor_sum", [("rows", I32), ("m", I32), ("a", GPTR), ("out", GPTR)])
    rows, m, a, out = fn.args
    entry, pre, loop, store, done = (fn.append_basic_block(s)
                                     for s in ("entry", "pre", "loop", "store", "done"))
    b = ir.IRBuilder(entry)
    r = _global_index(mod, b)
    b.cbranch(b.icmp_signed("<", r, rows), pre, done)
    b.position_at_end(pre)
    base = b.mul(r, m, name="base")
    b.cbranch(b.icmp_signed(">", m, I32(0)), loop, store)
    b.position_at_end(loop)
    j = b.phi(I32, name="j")
    acc = b.phi(I32, name="acc")
    j.add_incoming(I32(0), pre)
    acc.add_incoming(I32(0), pre)
    v = b.load(_elem_ptr(b, a, b.add(base, j), I32), typ=I32, align=4)
    acc2 = b.add(acc, b.xor(v, j), name="acc.next")
    j2 = b.add(j, I32(1), name="j.next")
    j.add_incoming(j2, loop)
    acc.add_incoming(acc2, loop)
    b.cbranch(b.icmp_signed("<", j2, m), loop, store)
    b.position_at_end(store)
    res = b.phi(I32, name="res")
    res.add_incoming(I32(0), pre)
    res.add_incoming(acc2, loop)
    b.store(res, _elem_ptr(b, out, r, I32), align=4)
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return mod


KERNELS = [
    ("vector_add", build_vector_add, "sm_70"),
    ("saxpy_loop", build_saxpy_loop, "sm_70"),
    ("block_sum", build_block_sum, "sm_70"),
    ("row_xor_sum", build_row_xor_sum, "sm_80"),
]


# --------------------------------------------------------------------------- lowering


def to_ptx(mod: ir.Module, cpu: str) -> str:
    llmod = llvm.parse_assembly(str(mod))
    llmod.verify()
    target = llvm.Target.from_triple(TRIPLE)
    tm = target.create_target_machine(cpu=cpu, opt=2, reloc="default", codemodel="default")
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(llmod, pb)
    llmod.verify()
    return tm.emit_assembly(llmod)


def main() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for name, build, cpu in KERNELS:
        path = OUT_DIR / f"{name}.ptx"
        path.write_text(to_ptx(build(), cpu))
        print(f"wrote {path.relative_to(OUT_DIR.parent.parent)} ({cpu})")


if __name__ == "__main__":
    main()
