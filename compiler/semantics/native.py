"""Correctly rounded f32/f64 arithmetic in every IEEE rounding mode, on the host CPU.

numpy has neither fma nor directed rounding, so these few loops are compiled
with llvmlite, once per process on first use:

    d[i] = op(a[i], b[i], c[i]) rounded in rnd      op in OPS, rnd in .rn .rz .rm .rp

Each loop is a ``strictfp`` function whose arithmetic is LLVM's constrained
floating-point intrinsics (``llvm.experimental.constrained.fadd/fsub/fmul/
fdiv/sqrt/fma``, LLVM LangRef "Constrained Floating-Point Intrinsics") with
the rounding mode as metadata and ``fpexcept.ignore``.  The metadata only says
what LLVM may assume; the loop also sets the hardware's mode itself: on x86 it
saves MXCSR (``llvm.x86.sse.stmxcsr``), loads one with the rounding-control
bits set, every exception masked and FTZ/DAZ clear (subnormals are IEEE), and
restores the saved word afterwards; elsewhere ``llvm.get.rounding`` /
``llvm.set.rounding`` do the same portably.

The target machine is the host CPU's name and features, so ``llvm.fma`` is the
hardware's fused multiply-add (x86 FMA3 ``vfmadd``; checked in the emitted
assembly).  A host without FMA gets LLVM's libcall to the C library's ``fma``,
which C99 (7.12.13.1) requires to round once in the current mode.  Either way
the first use checks known cases that only an exact implementation gets right
(``fma(1+2^-52, 1-2^-52, -1) = -2^-104``, ``1 + 2^-60`` in each mode, gradual
underflow, ...) and raises :class:`NativeFloatError` if the host disagrees:
results are exact or there are none.

Round-to-nearest add, sub, mul, div and sqrt (the .rn of PTX and the common case) are numpy's own IEEE
operations, which round the same way: only fma and the directed modes build the loops.
"""

from __future__ import annotations

import ctypes
import math
import threading
from dataclasses import dataclass

import numpy as np

from xcc.diagnostics import XccError

# op -> (arity, constrained intrinsic)
OPS = {
    "add": (2, "fadd"), "sub": (2, "fsub"), "mul": (2, "fmul"), "div": (2, "fdiv"),
    "sqrt": (1, "sqrt"), "fma": (3, "fma"),
}


@dataclass(frozen=True)
class Rounding:
    metadata: str  # LLVM constrained-intrinsic rounding metadata
    mxcsr_rc: int  # x86 MXCSR rounding-control field (bits 13-14)
    flt_rounds: int  # llvm.set.rounding / FLT_ROUNDS value


ROUNDINGS = {
    "rn": Rounding("round.tonearest", 0, 1),
    "rz": Rounding("round.towardzero", 3, 0),
    "rm": Rounding("round.downward", 1, 3),
    "rp": Rounding("round.upward", 2, 2),
}
_LLVM_TYPE = {32: ("float", "f32"), 64: ("double", "f64")}
_DTYPE = {np.dtype(np.float32): 32, np.dtype(np.float64): 64}


class NativeFloatError(XccError):
    """The host cannot give exactly rounded floating-point results through the JIT."""


def _name(op: str, bits: int, rnd: str) -> str:
    return f"xcc_{op}_f{bits}_{rnd}"


def _kernel_ir(op: str, bits: int, rnd: str, x86: bool, libm_fma: bool = False) -> str:
    """One strictfp loop ``d[i] = op(a[i], b[i], c[i])`` in rounding mode ``rnd``.  ``libm_fma``: x86
    without FMA, where ``fma`` is a C library call that may read the x87 control word too."""
    arity, intrinsic = OPS[op]
    t, sfx = _LLVM_TYPE[bits]
    mode = ROUNDINGS[rnd]
    loads = "\n".join(
        f"  %p{k} = getelementptr {t}, ptr %{'abc'[k]}, i64 %i\n  %x{k} = load {t}, ptr %p{k}"
        for k in range(arity))
    operands = ", ".join(f"{t} %x{k}" for k in range(arity))
    enter = leave = ""
    if x86:
        # keep the sticky flags (bits 0-5), mask all exceptions (7-12), set RC, clear DAZ (6) and FZ (15)
        want = 0x1F80 | (mode.mxcsr_rc << 13)
        enter = (f"  %saved = alloca i32, align 4\n  %want = alloca i32, align 4\n"
                 f"  call void @llvm.x86.sse.stmxcsr(ptr %saved) #0\n"
                 f"  %old = load i32, ptr %saved, align 4\n  %flags = and i32 %old, 63\n"
                 f"  %new = or i32 %flags, {want}\n  store i32 %new, ptr %want, align 4\n"
                 f"  call void @llvm.x86.sse.ldmxcsr(ptr %want) #0")
        leave = "  call void @llvm.x86.sse.ldmxcsr(ptr %saved) #0"
    if not x86 or libm_fma:
        enter += (f"\n  %oldrnd = call i32 @llvm.get.rounding() #0\n"
                  f"  call void @llvm.set.rounding(i32 {mode.flt_rounds}) #0")
        leave = "  call void @llvm.set.rounding(i32 %oldrnd) #0\n" + leave
    return f"""
define void @{_name(op, bits, rnd)}(ptr noalias %a, ptr noalias %b, ptr noalias %c, ptr noalias %d, i64 %n) #0 {{
entry:
{enter.lstrip()}
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %inext, %loop ]
{loads}
  %r = call {t} @llvm.experimental.constrained.{intrinsic}.{sfx}({operands}, metadata !"{mode.metadata}", metadata !"fpexcept.ignore") #0
  %pd = getelementptr {t}, ptr %d, i64 %i
  store {t} %r, ptr %pd
  %inext = add i64 %i, 1
  %done = icmp eq i64 %inext, %n
  br i1 %done, label %exit, label %loop
exit:
{leave}
  ret void
}}
"""


def _declarations(x86: bool) -> str:
    lines = []
    for bits in (32, 64):
        t, sfx = _LLVM_TYPE[bits]
        for arity, intrinsic in OPS.values():
            params = ", ".join([t] * arity)
            lines.append(f"declare {t} @llvm.experimental.constrained.{intrinsic}.{sfx}({params}, metadata, metadata)")
    if x86:
        lines += ["declare void @llvm.x86.sse.stmxcsr(ptr)", "declare void @llvm.x86.sse.ldmxcsr(ptr)"]
    lines += ["declare i32 @llvm.get.rounding()", "declare void @llvm.set.rounding(i32)"]
    return "\n".join(sorted(set(lines))) + "\nattributes #0 = { strictfp }\n"


def module_ir(x86: bool, libm_fma: bool = False) -> str:
    """The LLVM IR of every loop (for inspection: ``print(native.module_ir(True))``)."""
    bodies = [_kernel_ir(op, bits, rnd, x86, libm_fma and op == "fma") for op in OPS for bits in (32, 64) for rnd in ROUNDINGS]
    return "".join(bodies) + "\n" + _declarations(x86)


_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_int64)


class Library:
    """The compiled loops of one process (build with :func:`library`)."""

    def __init__(self, cpu: str | None = None, features: str | None = None):
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        triple = llvm.get_process_triple()
        self.cpu = llvm.get_host_cpu_name() if cpu is None else cpu
        self.features = llvm.get_host_cpu_features().flatten() if features is None else features
        x86 = triple.startswith(("x86_64", "i386", "i686"))
        feats = set(self.features.split(","))
        self.hardware_fma = "+fma" in feats if x86 else True
        if not self.hardware_fma:
            import ctypes.util  # here, not at the top: it imports subprocess

            libm = ctypes.CDLL(ctypes.util.find_library("m"))
            for sym in ("fma", "fmaf"):
                llvm.add_symbol(sym, ctypes.cast(getattr(libm, sym), ctypes.c_void_p).value)
        tm = llvm.Target.from_triple(triple).create_target_machine(
            cpu=self.cpu, features=self.features, opt=2, reloc="default", codemodel="jitdefault")
        mod = llvm.parse_assembly(module_ir(x86, not self.hardware_fma))
        mod.triple, mod.data_layout = triple, str(tm.target_data)
        mod.verify()
        self.fma_instruction = None
        if x86 and self.hardware_fma:
            asm = tm.emit_assembly(mod)
            self.fma_instruction = next((w for w in ("vfmadd", "vfnmadd") if w in asm), None)
            if self.fma_instruction is None:
                raise NativeFloatError(f"LLVM did not lower llvm.fma to an FMA instruction on {self.cpu}")
        self._engine = llvm.create_mcjit_compiler(mod, tm)
        self._engine.finalize_object()
        self.kernels = {(op, bits, rnd): _KERNEL(self._engine.get_function_address(_name(op, bits, rnd)))
                        for op in OPS for bits in (32, 64) for rnd in ROUNDINGS}
        self.self_test()

    def __call__(self, op: str, rnd: str, *args: np.ndarray) -> np.ndarray:
        """``op`` of the broadcast operands, elementwise, rounded in ``rnd`` (a new array)."""
        arity = OPS[op][0]
        if len(args) != arity:
            raise TypeError(f"{op} takes {arity} operands, got {len(args)}")
        dtype = np.result_type(*args)
        if dtype not in _DTYPE:
            raise TypeError(f"native.{op} needs float32 or float64 operands, got {dtype}")
        shape = np.shape(args[0])
        if any(np.shape(x) != shape for x in args[1:]):
            shape = np.broadcast_shapes(*(np.shape(x) for x in args))
        n = math.prod(shape)
        kernel = self.kernels[(op, _DTYPE[dtype], rnd)]
        if n > _SCRATCH_MAX:  # large: no copies
            xs = [np.ascontiguousarray(np.broadcast_to(x, shape), dtype) for x in args]
            out = np.empty(shape, dtype)
            kernel(*[x.ctypes.data for x in xs], *[None] * (3 - arity), out.ctypes.data, n)
        else:  # small: the per-thread scratch buffer, whose address is already known
            buf, base, stride = _scratch(n, dtype)
            xs = [buf[k, :n].reshape(shape) for k in range(arity)]
            for x, arg in zip(xs, args):
                np.copyto(x, arg)
            kernel(base, base + stride, base + 2 * stride, base + 3 * stride, n)
            out = buf[3, :n].reshape(shape).copy()
        return _fma_nan(xs, out) if op == "fma" else out

    def self_test(self) -> None:
        """Check the cases in :data:`SELF_TEST`; raise :class:`NativeFloatError` on any difference."""
        bad = []
        for op, bits, rnd, args, want in SELF_TEST:
            dt = np.float64 if bits == 64 else np.float32
            xs = [np.array([float.fromhex(a)], dt) for a in args]
            got = self(op, rnd, *xs)[0]
            want_v = dt(float.fromhex(want))
            if got.tobytes() != want_v.tobytes():
                bad.append(f"{op}.{rnd}.f{bits}{tuple(args)} = {float(got).hex()}, expected {want}")
        if bad:
            raise NativeFloatError(
                f"the host ({self.cpu}, {'hardware' if self.hardware_fma else 'libm'} fma) does not round "
                "exactly through the LLVM JIT: " + "; ".join(bad))


_SCRATCH_MAX = 1 << 14  # elements; larger calls pass their own arrays
_scratch_local = threading.local()


def _scratch(n: int, dtype: np.dtype):
    """A (4, >= n) buffer of ``dtype`` (rows a, b, c, d), its address and row stride in bytes, reused
    per thread: taking a numpy array's address costs more than a warp-sized loop."""
    cache = _scratch_local.__dict__
    entry = cache.get(dtype)
    if entry is None or entry[0].shape[1] < n:
        buf = np.empty((4, max(n, 256, 2 * (entry[0].shape[1] if entry else 0))), dtype)
        entry = cache[dtype] = (buf, buf.ctypes.data, buf.strides[0])
    return entry


def _fma_nan(xs, out):
    """x86 FMA returns the NaN of whichever operand its encoding names first; make it a's, then b's, then
    c's (quieted), as the two-operand instructions do, so results do not depend on register allocation."""
    nan_out = np.isnan(out)
    if not nan_out.any():
        return out
    bits = _DTYPE[out.dtype]
    udt = np.uint64 if bits == 64 else np.uint32
    quiet = udt(1 << (51 if bits == 64 else 22))
    r = out.view(udt).copy()
    for x in reversed(xs):
        r = np.where(np.isnan(x), x.view(udt) | quiet, r)
    return np.where(nan_out, r, out.view(udt)).view(out.dtype)


# (op, bits, rnd, operands, exact result), all as float.hex: each is wrong if the product is not exact,
# the rounding mode is not the one asked for, or subnormals are flushed (FTZ/DAZ).
SELF_TEST = [
    ("fma", 64, "rn", ("0x1.0000000000001p0", "0x1.ffffffffffffep-1", "-0x1p0"), "-0x1p-104"),
    ("fma", 64, "rz", ("0x1.0000000000001p0", "0x1.ffffffffffffep-1", "-0x1p0"), "-0x1p-104"),
    ("fma", 64, "rn", ("0x1.0000000000001p0", "0x1.0000000000001p0", "0x0p0"), "0x1.0000000000002p0"),
    ("fma", 64, "rp", ("0x1.0000000000001p0", "0x1.0000000000001p0", "0x0p0"), "0x1.0000000000003p0"),
    ("fma", 64, "rm", ("-0x1.0000000000001p0", "0x1.0000000000001p0", "0x0p0"), "-0x1.0000000000003p0"),
    ("fma", 64, "rz", ("-0x1.0000000000001p0", "0x1.0000000000001p0", "0x0p0"), "-0x1.0000000000002p0"),
    ("fma", 32, "rn", ("0x1.000002p0", "0x1.fffffcp-1", "-0x1p0"), "-0x1p-46"),
    ("fma", 32, "rp", ("0x1.000002p0", "0x1.000002p0", "0x0p0"), "0x1.000006p0"),
    ("add", 64, "rn", ("0x1p0", "0x1p-60"), "0x1p0"),
    ("add", 64, "rz", ("0x1p0", "0x1p-60"), "0x1p0"),
    ("add", 64, "rm", ("0x1p0", "0x1p-60"), "0x1p0"),
    ("add", 64, "rp", ("0x1p0", "0x1p-60"), "0x1.0000000000001p0"),
    ("add", 64, "rz", ("-0x1p0", "-0x1p-60"), "-0x1p0"),
    ("add", 64, "rm", ("-0x1p0", "-0x1p-60"), "-0x1.0000000000001p0"),
    ("add", 64, "rp", ("-0x1p0", "-0x1p-60"), "-0x1p0"),
    ("sub", 64, "rm", ("0x1p0", "0x1p0"), "-0x0p0"),
    ("sub", 64, "rp", ("0x1p0", "0x1p0"), "0x0p0"),
    ("add", 32, "rp", ("0x1p0", "0x1p-30"), "0x1.000002p0"),
    ("add", 32, "rm", ("-0x1p0", "-0x1p-30"), "-0x1.000002p0"),
    ("mul", 64, "rn", ("0x1p-1022", "0x1p-1"), "0x0.8p-1022"),
    ("mul", 64, "rn", ("0x0.0000000000001p-1022", "0x1p-1"), "0x0p0"),
    ("mul", 64, "rp", ("0x0.0000000000001p-1022", "0x1p-1"), "0x0.0000000000001p-1022"),
    ("mul", 64, "rz", ("0x1.fffffffffffffp1023", "0x1p1"), "0x1.fffffffffffffp1023"),
    ("mul", 64, "rn", ("0x1.fffffffffffffp1023", "0x1p1"), "inf"),
    ("mul", 32, "rn", ("0x1p-126", "0x1p-1"), "0x1p-127"),
    ("div", 64, "rz", ("0x1p0", "0x1.8p1"), "0x1.5555555555555p-2"),
    ("div", 64, "rp", ("0x1p0", "0x1.8p1"), "0x1.5555555555556p-2"),
    ("div", 32, "rp", ("0x1p0", "0x1.8p1"), "0x1.555556p-2"),
    ("div", 32, "rz", ("0x1p0", "0x1.8p1"), "0x1.555554p-2"),
    ("sqrt", 64, "rn", ("0x1p1",), "0x1.6a09e667f3bcdp0"),
    ("sqrt", 64, "rm", ("0x1p1",), "0x1.6a09e667f3bccp0"),
    ("sqrt", 64, "rp", ("0x1p1",), "0x1.6a09e667f3bcdp0"),
    ("sqrt", 32, "rz", ("0x1p1",), "0x1.6a09e6p0"),
    ("sqrt", 32, "rp", ("0x1p1",), "0x1.6a09e8p0"),
]

_lock = threading.Lock()
_library: Library | None = None


def library() -> Library:
    """The process's compiled, self-tested loops (built on first use; thread-safe)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                _library = Library()
    return _library


# Round-to-nearest without the loops: numpy's own float32/float64 add, subtract, multiply, divide and square
# root are the host's IEEE 754 instructions in the default mode (round to nearest even, subnormals kept), so
# they give the same correctly rounded values; only fma and the directed modes need the JIT (and building it
# costs a cold `xcc compile` that folds an f32 product most of its time).
_NEAREST = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "sqrt": np.sqrt}


def _run(op: str, rnd: str, *args) -> np.ndarray:
    if rnd == "rn" and op in _NEAREST:
        dtype = np.result_type(*args)
        if dtype not in _DTYPE:
            raise TypeError(f"native.{op} needs float32 or float64 operands, got {dtype}")
        with np.errstate(all="ignore"):
            return np.asarray(_NEAREST[op](*(np.asarray(x, dtype) for x in args)))
    return library()(op, rnd, *args)


def fma(a, b, c, rnd: str = "rn") -> np.ndarray:
    """a * b + c rounded once in ``rnd`` (float32 or float64 arrays)."""
    return library()("fma", rnd, a, b, c)


def add(a, b, rnd: str = "rn") -> np.ndarray:
    return _run("add", rnd, a, b)


def sub(a, b, rnd: str = "rn") -> np.ndarray:
    return _run("sub", rnd, a, b)


def mul(a, b, rnd: str = "rn") -> np.ndarray:
    return _run("mul", rnd, a, b)


def div(a, b, rnd: str = "rn") -> np.ndarray:
    return _run("div", rnd, a, b)


def sqrt(a, rnd: str = "rn") -> np.ndarray:
    return _run("sqrt", rnd, a)
