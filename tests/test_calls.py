"""Device-function calls, recursion and -rdc linking, on both engines (issues 4 and 5).

Each kernel runs on the IR interpreter and on the xg1 backend (the calling convention of
``xcc.backend.isel_calls``, docs/isa.md "Calls"): both are compared bit for bit with a numpy reference
and with each other; inputs are small multiples of 1/4, so every float sum and product is exact and the
reference does not depend on the kernel's association order or fma contraction.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault, LinkError, UnsupportedError
from xcc.driver import CompileOptions, Source, compile_module, frontend
from xcc.ir.printer import print_module
from xcc.ir.verifier import verify_module
from xcc.runtime.ir_engine import launch_ptx

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES  # noqa: E402

EX = Path(__file__).resolve().parent.parent / "examples"
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
LEVELS = (0, 3)


def _quarters(rng, n, lo=-64, hi=64) -> np.ndarray:
    return (rng.integers(lo, hi, n) / 4).astype(np.float32)


def _same(got, want) -> None:
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def _run_on(engine, src, kernel, grid, block, args, opt_level=0, device=None):
    device = device or rt.Device()
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    mod = rt.load_module(src, engine=engine, opt_level=opt_level, device=device)
    mod.get_function(kernel).launch(grid, block, dev)
    return [d.copy_to_host() if isinstance(d, rt.DeviceArray) else None for d in dev]


def _run(src, kernel, grid, block, args, opt_level=0, device=None):
    """The outputs of the launch on the xg1 backend, checked bit for bit against the IR interpreter's."""
    want = _run_on("ir", src, kernel, grid, block, args, opt_level)
    got = _run_on("isa", src, kernel, grid, block, args, opt_level, device)
    for g, w in zip(got, want):
        if w is not None:
            _same(g, w)
    return got


# --------------------------------------------------------------------------- IR


def test_device_functions_build_verify_and_print():
    mod = frontend([Source((EX / "device_functions.sm_80.ptx").read_text(), "device_functions.sm_80.ptx")])
    verify_module(mod)
    fib = mod.function("_Z3fibj")
    assert not fib.is_entry and [p.name for p in fib.ret_params] == ["func_retval0"]
    calls = [i for i in fib.instructions() if i.op == "call"]
    assert [c.attrs["callee"] for c in calls] == ["_Z3fibj", "_Z3fibj"]
    text = print_module(mod)
    assert "func @_Z3fibj(.b32 _Z3fibj_param_0 @0) -> (.b32 func_retval0 @4) {" in text
    assert "call @_Z3fibj(param0.1) -> (retval0.1)" in text


@pytest.mark.parametrize("level", (1, 2, 3))
def test_passes_keep_calls(level):
    from xcc.passes import PassManager, pipeline_for_level

    src = HEADER + """
.func (.param .b32 r) side(.param .b64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], 7;
  st.param.b32 [r], 0;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .b64 a; st.param.b64 [a], %rd1; .param .b32 ret0;
    call.uni (ret0), side, (a); }
  ret;
}
"""
    mod = PassManager(pipeline_for_level(level), verify=True).run(frontend([Source(src, "k.ptx")]))
    calls = [i for i in mod.function("k").instructions() if i.op == "call"]
    if level == 1:  # -O1 does not inline: the call and its argument store stay
        assert calls and any(i.op == "st" for i in mod.function("k").instructions())
    else:  # -O2 and -O3 inline it: the callee's global store is in the kernel, nothing goes through .param
        assert not calls and [i.attrs["space"] for i in mod.function("k").instructions() if i.op == "st"] == ["global"]
    out = _run(src, "k", 1, 1, [np.zeros(1, np.uint32)], opt_level=level)[0]
    assert out[0] == 7


# --------------------------------------------------------------------------- corpus kernels


def _blend(a, b, c, w0, w1, mode):
    r = np.float32(w0) * a + np.float32(w1) * b
    return np.where(mode & 1, r - c, r + c * np.float32(0.5)).astype(np.float32)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("ptx", ["device_functions.sm_80.ptx", "device_functions.sm_90.ptx",
                                 "device_functions.sm_80.debug.ptx", "device_functions.sm_80.lineinfo.ptx"])
def test_noinline_calls(ptx, level):
    rng = np.random.default_rng(1)
    n, tl = 300, 37
    a, b = _quarters(rng, n), _quarters(rng, n)
    table = rng.integers(-1000, 1000, tl).astype(np.int32)
    out = np.full(n + 5, -12345.5, np.float32)
    got = _run(EX / ptx, "_Z14noinline_callsiPKfS0_PKiiPf", 3, 128, [np.int32(n), a, b, table, np.int32(tl), out],
               level)[5]
    i = np.arange(n)
    acc = np.zeros(n, np.float32)
    for k in range(4):
        acc = acc + _blend(a, b, np.float32(k), 0.25 * k, 1 - 0.25 * k, i + k)
    want = out.copy()
    want[:n] = acc + table[np.clip(i - 3, 0, tl - 1)].astype(np.float32)
    _same(got, want)


def _fib(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


@pytest.mark.parametrize("ptx", ["device_functions.sm_80.ptx",
                                 pytest.param("device_functions.sm_80.debug.ptx", marks=pytest.mark.slow)])
def test_recursive_fib(ptx):
    """fib(x % 20) by recursion, 70 values over 128 threads, checked bit for bit between the engines and against
    Python.  The -G build's run (~30 s on the ISA engine) is in the slow tier; the optimised build's is not."""
    rng = np.random.default_rng(2)
    n = 70
    inp = rng.integers(0, 1 << 20, n).astype(np.uint32)
    got = _run(EX / ptx, "recursive_fib", 2, 64, [np.int32(n), inp, np.zeros(n + 3, np.uint32)])[2]
    want = np.zeros(n + 3, np.uint32)
    want[:n] = [_fib(int(x) % 20) for x in inp]
    _same(got, want)


def _csr(rng, rows, cols):
    counts = rng.integers(0, 70, rows)
    counts[::7] = 0
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    col = rng.integers(0, cols, nnz).astype(np.int32)
    vals = _quarters(rng, nnz, -16, 16)
    x = _quarters(rng, cols, -16, 16)
    y = np.zeros(rows, np.float32)
    for r in range(rows):
        s = slice(row_ptr[r], row_ptr[r + 1])
        y[r] = np.float32(np.sum(vals[s].astype(np.float64) * x[col[s]]))
    return row_ptr, col, vals, x, y


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("ptx", ["spmv_csr.sm_80.ptx", "spmv_csr.sm_90.ptx", "spmv_csr.sm_80.debug.ptx",
                                 "spmv_csr.sm_80.lineinfo.ptx"])
@pytest.mark.parametrize("kernel", ["scalar", "vector"])
def test_spmv_csr(ptx, kernel, level):
    """The vector kernel: lanes leave the callee's loop at different trip counts (divergence inside the
    callee); the -G build's __shfl_down_sync is a real function called by the whole warp."""
    rng = np.random.default_rng(3)
    rows, cols = 45, 80
    row_ptr, col, vals, x, y = _csr(rng, rows, cols)
    out = np.full(rows + 2, -12345.5, np.float32)
    name = {"scalar": "_Z15spmv_csr_scalariPKiS0_PKfS2_Pf", "vector": "_Z15spmv_csr_vectoriPKiS0_PKfS2_Pf"}[kernel]
    grid, block = ((1, 64) if kernel == "scalar" else (6, 256))
    got = _run(EX / ptx, name, grid, block, [np.int32(rows), row_ptr, col, vals, x, out], level)[5]
    want = out.copy()
    want[:rows] = y
    _same(got, want)


@pytest.mark.parametrize("ptx", ["spmv_csr.sm_80.debug.ptx", "spmv_csr.sm_80.ptx"])
def test_calls_under_register_pressure(ptx):
    """--maxrregcount 16 with R1-R3 reserved: values saved around calls and register spills share the
    frame (addressed from R1 in the callee); the allocation checker follows both."""
    rng = np.random.default_rng(3)
    rows, cols = 45, 80
    row_ptr, col, vals, x, y = _csr(rng, rows, cols)
    args = [np.int32(rows), row_ptr, col, vals, x, np.zeros(rows, np.float32)]
    name = "_Z15spmv_csr_vectoriPKiS0_PKfS2_Pf"
    want = _run_on("ir", EX / ptx, name, 6, 256, args)[5]
    device = rt.Device()
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    mod = rt.load_module(EX / ptx, max_registers=16, opt_level=0, device=device)
    fn = mod.get_function(name)
    fn.launch(6, 256, dev)
    _same(dev[5].copy_to_host(), want)
    _same(want, y)


SCAN_SORT = [c for c in CASES if c.ptx_stem == "scan_sort" and c.ptx_file is None]


@pytest.mark.parametrize("case", SCAN_SORT, ids=lambda c: c.name)
def test_scan_sort_debug_build(case):
    """scan_sort -G: __shfl_up_sync is a device function called from a warp-synchronous loop; the shared
    arrays are reached through generic addresses (cvta.shared)."""
    launch = case.make(np.random.default_rng(0))
    got = _run(EX / "scan_sort.sm_80.debug.ptx", case.entry, launch.grid, launch.block, launch.args)
    for i, want in launch.expected.items():
        _same(got[i], want)


# --------------------------------------------------------------------------- hand-written calls

DIVERGE = HEADER + """
.func (.param .b32 r) f(.param .b32 a)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [a];
  and.b32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  mov.u32 %r3, 0;
  @%p1 bra DONE;
LOOP:                                   // lanes loop a different number of times
  add.u32 %r3, %r3, %r1;
  sub.u32 %r2, %r2, 1;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra LOOP;
DONE:
  activemask.b32 %r4;                   // who runs together here: reconverged callers
  shfl.sync.bfly.b32 %r5, %r3, 1, 31, %r4;
  popc.b32 %r6, %r4;
  mad.lo.u32 %r7, %r6, 65536, %r5;
  st.param.b32 [r], %r7;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra EVEN;
  { .param .b32 a; st.param.b32 [a], %r1; .param .b32 r;
    call (r), f, (a); ld.param.b32 %r3, [r]; }
  add.u32 %r3, %r3, 1000000;
  bra.uni JOIN;
EVEN:
  { .param .b32 a; st.param.b32 [a], %r1; .param .b32 r;
    call (r), f, (a); ld.param.b32 %r3, [r]; }
JOIN:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_calls_from_two_sites_and_divergence_inside_the_callee():
    """Even and odd lanes call ``f`` from different call sites; they meet inside it (the lowest-position
    scheduler runs the callee for both groups together), diverge in its loop, reconverge, shuffle,
    and each returns to its own call site."""
    got = _run(DIVERGE, "k", 1, 64, [np.zeros(64, np.uint32)])[0]
    t = np.arange(64, dtype=np.uint32)
    acc = t * (t & 3)
    partner = acc[t ^ 1]
    want = (32 * 65536 + partner).astype(np.uint32) + np.where(t & 1, 1000000, 0).astype(np.uint32)
    _same(got, want)


RECURSIVE_LOCAL = HEADER + """
.func (.param .b32 r) sum_down(.param .b32 k)
{
  .local .align 4 .b8 depot[8];          // per-call-frame: the inner call must not overwrite it
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  ld.param.u32 %r1, [k];
  mov.u64 %rd1, depot;
  mul.lo.u32 %r2, %r1, 3;
  st.local.u32 [%rd1], %r2;
  st.local.u32 [%rd1+4], %r1;
  mov.u32 %r5, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra BASE;
  sub.u32 %r3, %r1, 1;
  { .param .b32 a; st.param.b32 [a], %r3; .param .b32 rv;
    call.uni (rv), sum_down, (a); ld.param.b32 %r5, [rv]; }
BASE:
  ld.local.u32 %r6, [%rd1];
  ld.local.u32 %r4, [%rd1+4];
  add.u32 %r7, %r6, %r5;
  add.u32 %r7, %r7, %r4;
  st.param.b32 [r], %r7;
  ret;
}
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  { .param .b32 a; st.param.b32 [a], %r2; .param .b32 rv;
    call.uni (rv), sum_down, (a); ld.param.b32 %r3, [rv]; }
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
}
"""


def test_recursion_with_per_frame_local_memory():
    rng = np.random.default_rng(4)
    inp = rng.integers(0, 40, 96).astype(np.uint32)
    got = _run(RECURSIVE_LOCAL, "k", 1, 96, [inp, np.zeros(96, np.uint32)])[1]
    _same(got, (4 * inp * (inp + 1) // 2).astype(np.uint32))


def test_deep_recursion_within_both_stacks():
    """Depth 60: within the IR interpreter's 1 KiB of .local frames and the backend's 8 KiB call stack."""
    inp = np.arange(60, dtype=np.uint32)[::-1].copy()
    got = _run(RECURSIVE_LOCAL, "k", 1, 60, [inp, np.zeros(60, np.uint32)], opt_level=3)[1]
    _same(got, (4 * inp * (inp + 1) // 2).astype(np.uint32))


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_unbounded_recursion_is_a_located_call_stack_overflow(engine):
    src = RECURSIVE_LOCAL.replace("@%p1 bra BASE;", "// no base case")
    with pytest.raises(KernelFault, match="call stack overflow") as e:
        _run_on(engine, src, "k", 1, 32, [np.ones(32, np.uint32), np.zeros(32, np.uint32)])
    assert e.value.loc is not None and "call.uni" in e.value.loc.source_line


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_call_depth_limit_without_locals(engine):
    src = RECURSIVE_LOCAL.replace("@%p1 bra BASE;", "// no base case").replace(
        ".local .align 4 .b8 depot[8];", ".shared .align 4 .b8 depot[8];").replace(".local.u32", ".shared.u32")
    src = src.replace("mov.u64 %rd1, depot;", "mov.u64 %rd1, 0;")
    # the IR interpreter bounds the nesting; the backend's frames fill its 8 KiB stack first
    with pytest.raises(KernelFault, match="more than 256 nested calls" if engine == "ir" else
                       r"call stack overflow: the frame of the callee 'sum_down' would end at byte \d+ of the "
                       r"thread's \d+-byte local memory") as e:
        _run_on(engine, src, "k", 1, 32, [np.ones(32, np.uint32), np.zeros(32, np.uint32)])
    assert e.value.line > 0


# --------------------------------------------------------------------------- linking


RDC = [EX / "rdc_main.sm_80.ptx", EX / "rdc_lib.sm_80.ptx"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("order", [0, 1])
def test_rdc_pair_links_and_runs(arch, order):
    files = [EX / f"rdc_main.{arch}.ptx", EX / f"rdc_lib.{arch}.ptx"][::1 - 2 * order]
    rng = np.random.default_rng(5)
    n = 200
    x, w = _quarters(rng, n), _quarters(rng, n)
    y = _run(files, "rdc_apply", 2, 128, [np.int32(n), x, w, np.zeros(n, np.float32)])[3]
    _same(y, (w * x + np.float32(0.5) + np.float32(0.5)).astype(np.float32))
    y2 = _run(files, "_Z14rdc_lib_kerneliPKfPf", 2, 128, [np.int32(n), x, np.zeros(n, np.float32)])[2]
    _same(y2, (x * np.float32(2) + np.float32(0.5)).astype(np.float32))


def test_linked_module_resolves_externs():
    mod = frontend([Source(p.read_text(), p.name) for p in RDC])
    verify_module(mod)
    assert [v.name for v in mod.variables if v.name == "rdc_bias"] == ["rdc_bias"]
    assert not any(v.extern for v in mod.variables if v.space == "global")
    assert mod.function("_Z13rdc_transformff").linkage == "visible"


def test_unresolved_symbol_is_a_link_error():
    with pytest.raises(LinkError, match=r"unresolved extern function '_Z13rdc_transformff'.*rdc_main") as e:
        frontend([Source(RDC[0].read_text(), "rdc_main.sm_80.ptx")])
    assert e.value.loc is not None and e.value.loc.line > 0
    only_var = RDC[0].read_text().replace(".extern .func  (.param .b32 func_retval0) _Z13rdc_transformff",
                                          ".extern .func  (.param .b32 func_retval0) _Z13rdc_transformff")
    lib = RDC[1].read_text().replace(".visible .global .align 4 .f32 rdc_bias = 0f3F000000;",
                                     ".global .align 4 .f32 rdc_bias = 0f3F000000;")  # private now
    with pytest.raises(LinkError, match=r"unresolved extern variable 'rdc_bias'.*rdc_main.*rdc_lib"):
        frontend([Source(only_var, "rdc_main.ptx"), Source(lib, "rdc_lib.ptx")])
    with pytest.raises(LinkError, match="unresolved"):
        rt.load_module([RDC[0]], engine="ir").get_function("rdc_apply")


def test_duplicate_symbol_is_a_link_error():
    lib = RDC[1].read_text()
    with pytest.raises(LinkError, match=r"duplicate .*'(rdc_bias|_Z13rdc_transformff|_Z14rdc_lib_kerneliPKfPf)'"
                                        r".*a\.ptx and b\.ptx"):
        frontend([Source(lib, "a.ptx"), Source(lib, "b.ptx")])
    # only the function defined twice (the kernels renamed apart): the message names it
    other = lib.replace(".visible .global .align 4 .f32 rdc_bias = 0f3F000000;",
                        ".extern .global .align 4 .f32 rdc_bias;").replace("rdc_lib_kernel", "other_kernel")
    other = other.replace("rdc_set_bias", "other_set_bias")
    with pytest.raises(LinkError, match=r"duplicate symbol '_Z13rdc_transformff': defined in a\.ptx and b\.ptx"):
        frontend([Source(lib, "a.ptx"), Source(other, "b.ptx")])


def test_private_names_do_not_clash():
    """Two modules with a private helper of the same name each call their own."""
    def module(value: int) -> str:
        return HEADER + f"""
.func (.param .b32 r) helper()
{{
  st.param.b32 [r], {value};
  ret;
}}
.visible .entry k{value}(.param .u64 out)
{{
  .reg .b32 %r1;
  .reg .b64 %rd1;
  ld.param.u64 %rd1, [out];
  {{ .param .b32 rv; call.uni (rv), helper, (); ld.param.b32 %r1, [rv]; }}
  st.global.u32 [%rd1], %r1;
  ret;
}}
"""
    srcs = [module(5), module(9)]
    for k in (5, 9):
        assert _run(srcs, f"k{k}", 1, 1, [np.zeros(1, np.uint32)])[0][0] == k


# --------------------------------------------------------------------------- the backend's image


def test_backend_compiles_callees_into_the_kernel_image():
    """The device functions follow the kernel in its image; the stack is the deepest chain of frames, or
    the fixed recursive stack; R1-R3 (stack pointer, return address) are reserved."""
    from xcc.backend.codegen import RECURSIVE_STACK_BYTES
    from xcc.backend.objfile import ObjectFile

    src = Source((EX / "device_functions.sm_80.ptx").read_text(), "device_functions.sm_80.ptx")
    stats: dict = {}
    obj = compile_module([src], kernels=["recursive_fib"], stats=stats)
    k = obj.kernels["recursive_fib"]
    assert [f[0] for f in k.functions] == ["_Z3fibj"] and k.functions[0][1] > 0
    assert k.stack_bytes == RECURSIVE_STACK_BYTES and k.local_bytes >= RECURSIVE_STACK_BYTES
    assert k.registers >= 4 and stats["recursive_fib"].local_bytes == k.local_bytes
    mn = [i.mnemonic for i in k.instructions]
    assert "CALL" in mn and "RET" in mn
    again = ObjectFile.from_bytes(obj.to_bytes()).kernels["recursive_fib"]  # the call metadata round-trips
    assert again.functions == k.functions and again.stack_bytes == k.stack_bytes
    rdc = compile_module([Source(p.read_text(), p.name) for p in RDC], CompileOptions(passes=""),  # no inlining
                         kernels=["rdc_apply"]).kernels["rdc_apply"]
    assert [f[0] for f in rdc.functions] == ["_Z13rdc_transformff"]
    # a leaf whose frame is its parameter block lives in the kernel's outgoing-argument area: no stack beyond
    assert rdc.stack_bytes == 0 and rdc.local_bytes >= 16 and rdc.local_bytes % 16 == 0


def test_call_to_a_kernel_is_refused_with_a_location():
    src = HEADER + """
.visible .entry inner(.param .u64 p)
{
  ret;
}
.visible .entry outer(.param .u64 p)
{
  .reg .b64 %rd1;
  ld.param.u64 %rd1, [p];
  { .param .b64 a; st.param.b64 [a], %rd1; call.uni inner, (a); }
  ret;
}
"""
    with pytest.raises((UnsupportedError, LinkError), match="inner") as e:
        compile_module([Source(src, "k.ptx")], kernels=["outer"])
    assert e.value.loc is not None


def test_cli_compile_links(tmp_path):
    from xcc.cli import main

    out = tmp_path / "o.xbin"
    assert main(["compile", str(RDC[0]), "-o", str(out)]) == 1  # unresolved: a link error
    assert main(["compile", str(RDC[0]), str(RDC[1]), "-o", str(out)]) == 0  # links and compiles the calls
    assert out.stat().st_size > 0


def test_printf_runs_on_the_ir_engine():
    """vprintf is the CUDA runtime's: the IR interpreter formats it (tests/test_memory_spaces.py has more)."""
    stats = launch_ptx(EX / "globals_misc.sm_80.ptx", "_Z13printf_kerneliiPKf", 1, 1,
                       (np.int32(1), np.int32(1), rt.to_device(np.full(4, 1.5, np.float32))))
    assert stats.printf_output == "x[0] = 1.500000\n"


@pytest.mark.parametrize("level", LEVELS)
def test_printf_on_the_backend_matches_the_ir_engine(capsys, level):
    """SYSCALL.VPRINTF formats as the IR interpreter does; output in thread order after the launch."""
    outs = []
    for engine in ("ir", "isa"):
        device = rt.Device()
        mod = rt.load_module(EX / "globals_misc.sm_80.ptx", engine=engine, opt_level=level, device=device)
        x = rt.to_device(np.arange(10, dtype=np.float32) * np.float32(-0.25), device)
        stats = mod.get_function("_Z13printf_kerneliiPKf").launch((3, 1, 1), (4, 1, 1),
                                                                  [np.int32(10), np.int32(7), x])
        outs.append(stats.printf_output)
    want = "".join(f"x[{i}] = {-0.25 * i:f}\n" for i in range(7))
    assert outs == [want, want]
    assert capsys.readouterr().out == want + want


def test_assert_on_the_backend_is_a_located_fault():
    device = rt.Device()
    mod = rt.load_module(EX / "globals_misc.sm_80.ptx", device=device)
    x = rt.to_device(np.array([1, 2, 3, -4, 5, -6], np.float32), device)
    y = rt.zeros(6, np.float32, device)
    with pytest.raises(KernelFault, match=r"globals_misc.cu:49: void assert_kernel\(int, const float \*, float \*\): "
                                          r"Assertion `x\[i\] >= 0.0f` failed") as e:
        mod.get_function("_Z13assert_kerneliPKfPf").launch(1, 32, [np.int32(6), x, y])
    assert e.value.thread == (3, 0, 0) and e.value.line > 0


def test_reg_parameters_build_and_predicate_ones_are_refused_with_a_location():
    """Scalar .reg parameters compile (run in tests/test_isa_gaps_more.py); a .pred one is refused, located."""
    src = HEADER + ".func (.reg .b32 out) f(.reg .b32 in)\n{\n  add.u32 out, in, 1;\n  ret;\n}\n"
    frontend([Source(src, "r.ptx")])
    bad = HEADER + ".func (.reg .b32 out) f(.reg .pred in)\n{\n  selp.u32 out, 1, 0, in;\n  ret;\n}\n"
    with pytest.raises(UnsupportedError, match="'.reg' parameter") as e:
        frontend([Source(bad, "r.ptx")])
    assert e.value.loc is not None


FNPTR_PTX = HEADER + """
.func (.param .b32 r) twice(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [r], %r2;
  ret;
}
.func (.param .b32 r) negate(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  neg.s32 %r2, %r1;
  st.param.b32 [r], %r2;
  ret;
}
.visible .entry pick(.param .u64 out, .param .u64 fp)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [fp];
  mov.u64 %rd3, twice;
  mov.u32 %r1, %tid.x;
  { .param .b32 a; .param .b32 rv;
    proto : .callprototype (.param .b32 _) _ (.param .b32 _);
    st.param.b32 [a], %r1;
    call (rv), %rd2, (a), proto;
    ld.param.b32 %r2, [rv]; }
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd1, %rd3;
  st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry addresses(.param .u64 out)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, negate;
  mov.u64 %rd3, twice;
  st.global.v2.u64 [%rd1], {%rd2, %rd3};
  ret;
}
"""


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_indirect_call_through_a_pointer_the_kernel_is_given(engine):
    """Function addresses are values (taken with mov); a call through one runs that function, and a
    pointer to no function of the call's signature is a located fault naming the call (on the backend a
    SYSCALL.TRAP with the message)."""
    dev = rt.Device()
    mod = rt.load_module(FNPTR_PTX, engine=engine, device=dev)
    addrs = rt.to_device(np.zeros(2, np.uint64), dev)
    mod.get_function("addresses").launch(1, 1, [addrs])
    neg, twice = (int(a) for a in addrs.copy_to_host())
    assert neg != twice and neg and twice
    out = rt.to_device(np.zeros(32, np.int32), dev)
    for fp, want in ((twice, 2 * np.arange(32)), (neg, -np.arange(32))):
        mod.get_function("pick").launch(1, 32, [out, np.uint64(fp)])
        np.testing.assert_array_equal(out.copy_to_host(), want)
    with pytest.raises(KernelFault, match=r"indirect call at .*:\d+ through a pointer that is no function"):
        mod.get_function("pick").launch(1, 32, [out, np.uint64(out.ptr)])


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_rdc_global_set_by_one_kernel_is_read_through_a_callee(engine):
    """rdc_set_bias writes the .global rdc_bias; rdc_apply reads it inside the linked callee: the image's
    .global table covers the callees' variables."""
    dev = rt.Device()
    mod = rt.load_module(RDC, device=dev, engine=engine)
    n = 64
    x, w = _quarters(np.random.default_rng(6), n), _quarters(np.random.default_rng(7), n)
    d_x, d_w, d_y = rt.to_device(x, dev), rt.to_device(w, dev), rt.to_device(np.zeros(n, np.float32), dev)
    mod.get_function("rdc_set_bias").launch(1, 1, [np.float32(0.25)])
    mod.get_function("rdc_apply").launch(1, n, [np.int32(n), d_x, d_w, d_y])
    _same(d_y.copy_to_host(), (w * x + np.float32(0.25) + np.float32(0.25)).astype(np.float32))


SHARED_IN_CALLEE = HEADER + """
.shared .align 4 .b8 common[128];
.func (.param .b32 r) g(.param .b32 t)
{
  .shared .align 4 .b8 mine[128];
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [t];
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, mine;
  add.u32 %r4, %r3, %r2;
  add.u32 %r5, %r1, 100;
  st.shared.u32 [%r4], %r5;
  mov.u32 %r6, common;
  add.u32 %r6, %r6, %r2;
  ld.shared.u32 %r7, [%r6];
  ld.shared.u32 %r5, [%r4];
  add.u32 %r7, %r7, %r5;
  st.param.b32 [r], %r7;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b8 own[128];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, own;
  add.u32 %r3, %r3, %r2;
  st.shared.u32 [%r3], 7;
  mov.u32 %r4, common;
  add.u32 %r4, %r4, %r2;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r4], %r5;
  { .param .b32 a; st.param.b32 [a], %r1; .param .b32 rv;
    call.uni (rv), g, (a); ld.param.b32 %r6, [rv]; }
  ld.shared.u32 %r7, [%r3];
  add.u32 %r6, %r6, %r7;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}
"""


def test_shared_variables_of_kernel_callee_and_module_do_not_overlap():
    got = _run(SHARED_IN_CALLEE, "k", 1, 32, [np.zeros(32, np.uint32)], opt_level=3)[0]
    t = np.arange(32, dtype=np.uint32)
    _same(got, (3 * t + t + 100 + 7).astype(np.uint32))


CALL_IN_DIVERGENT_CALLEE = HEADER + """
.func (.param .b32 r) leaf(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [a];
  add.u32 %r2, %r1, 7;
  st.param.b32 [r], %r2;
  ret;
}
.func (.param .b32 r) mid(.param .b32 a)
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [a];
  mov.u32 %r3, %r1;
  and.b32 %r2, %r1, 5;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra SKIP;                        // some lanes call leaf, the others skip to the ret
  { .param .b32 a2; st.param.b32 [a2], %r1; .param .b32 r2;
    call (r2), leaf, (a2); ld.param.b32 %r3, [r2]; }
SKIP:
  st.param.b32 [r], %r3;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  { .param .b32 a; st.param.b32 [a], %r1; .param .b32 r;
    call.uni (r), mid, (a); ld.param.b32 %r2, [r]; }
  activemask.b32 %r3;                   // after the call returns, the warp is whole again
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r2, %r3};
  ret;
}
"""


@pytest.mark.parametrize("opt_level", LEVELS)
def test_threads_that_skip_a_nested_call_wait_for_it_at_the_return(opt_level):
    """The lanes of ``mid`` that skip the call to ``leaf`` reach ``mid``'s ret first (``leaf`` lies after it);
    they come back to the kernel together with the lanes that called ``leaf`` (IR: the ret waits for the
    rest of its call; xg1: the caller's convergence barrier counts threads inside a call), so the
    warp is whole at the activemask, as it is once ``mid`` and ``leaf`` are inlined (a translation
    validation seed found the difference)."""
    got = _run(CALL_IN_DIVERGENT_CALLEE, "k", 1, 64, [np.zeros(128, np.uint32)], opt_level)[0].reshape(64, 2)
    t = np.arange(64, dtype=np.uint32)
    _same(got[:, 0], np.where(t & 5, t, t + 7).astype(np.uint32))
    _same(got[:, 1], np.full(64, 0xFFFFFFFF, np.uint32))
