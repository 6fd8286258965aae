"""Kernel parameters as memory (issue 19): the ``.param`` state space of a kernel addressable.

``mov.u64 %rd, param`` gives a parameter's param-space address (its offset in the parameter buffer),
``ld.param`` reads through it at any offset and width, ``cvta.param`` gives its generic address (the
param window over constant bank 0, docs/isa.md "Kernel parameters as memory") for generic loads, and
``.b8`` struct parameters of any size (CUTLASS's 1.8 KB ``Params``) pass by value from the host as
``bytes``, a numpy structured scalar or the driver API's ``kernelParams``.  Both engines (the IR
interpreter and the compiled code on the ISA interpreter), at -O0 and -O3, must agree bit for bit.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.isa import WINDOWS
from xcc.diagnostics import KernelFault, LaunchError, UnsupportedError, XccError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ENGINES = ("ir", "isa")
HEADER_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"
LEVELS = (0, 3)

# struct Params of examples/struct_params.cu: 1800 bytes, aligned to 8
PARAMS = np.dtype([("A", "<u8"), ("B", "<u8"), ("C", "<u8"), ("D", "<u8"),
                   ("M", "<i4"), ("N", "<i4"), ("K", "<i4"), ("lda", "<i4"), ("ldb", "<i4"), ("ldc", "<i4"),
                   ("alpha", "<f4"), ("beta", "<f4"), ("perm", "<i4", (16,)), ("col_scale", "<f4", (418,))],
                  align=True)
ENTRIES = {"gemm": "_Z18struct_params_gemm6Params",
           "grid_constant": "_Z27struct_params_grid_constant6Params",
           "escape": "_Z20struct_params_escape6Params"}


def test_params_struct_is_cutlass_sized():
    assert PARAMS.itemsize == 1800
    text = (EXAMPLES / "struct_params.sm_90.ptx").read_text()
    assert ".param .align 8 .b8 _Z18struct_params_gemm6Params_param_0[1800]" in text
    assert "cvta.param.u64" in text  # the __grid_constant__ kernel takes its parameter's generic address


def _gemm_problem(rng, M=4, N=40, K=8):
    """Small-integer data (every product and sum exact in f32, so any fma contraction gives the same bits)."""
    a = rng.integers(-4, 5, (M, K)).astype(np.float32)
    b = rng.integers(-4, 5, (K, N)).astype(np.float32)
    c = rng.integers(-8, 9, (M, N)).astype(np.float32)
    perm = rng.permutation(418)[:16].astype(np.int32)
    scale = (2.0 ** rng.integers(-2, 3, 418)).astype(np.float32)
    alpha, beta = np.float32(2.0), np.float32(-0.5)
    j = np.arange(N)
    want = (alpha * (a @ b) + beta * c) * scale[perm[j % 16]][None, :]
    return a, b, c, perm, scale, alpha, beta, want.astype(np.float32)


def _params(a, b, c, d, perm, scale, alpha, beta) -> np.void:
    M, K = a.shape
    N = b.shape[1]
    p = np.zeros((), PARAMS)
    p["A"], p["B"], p["C"], p["D"] = a.ptr, b.ptr, c.ptr, d.ptr
    p["M"], p["N"], p["K"], p["lda"], p["ldb"], p["ldc"] = M, N, K, K, N, N
    p["alpha"], p["beta"], p["perm"], p["col_scale"] = alpha, beta, perm, scale
    return p[()]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kernel", sorted(ENTRIES))
def test_struct_params_gemm_on_both_engines(kernel, arch):
    a, b, c, perm, scale, alpha, beta, want = _gemm_problem(np.random.default_rng(7))
    results = []
    for engine in ENGINES:
        for level in LEVELS:
            mod = rt.load_module(EXAMPLES / f"struct_params.{arch}.ptx", engine=engine, opt_level=level)
            fn = mod.get_function(ENTRIES[kernel])
            da, db, dc = rt.to_device(a), rt.to_device(b), rt.to_device(c)
            dd = rt.to_device(np.full(want.shape, -1.0, np.float32))
            p = _params(da, db, dc, dd, perm, scale, alpha, beta)
            fn.launch((2, want.shape[0], 1), (32, 1, 1), (p,))
            got = dd.copy_to_host()
            np.testing.assert_array_equal(got, want, err_msg=f"{kernel} {arch} {engine} -O{level}")
            results.append(got.tobytes())
    assert len(set(results)) == 1


# -------------------------------------------------------------------------- every width, both ways
WIDTHS = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry widths(.param .align 8 .b8 blob[72], .param .u64 out, .param .u32 k)
{
  .reg .pred %p<2>;
  .reg .b16 %h<2>;
  .reg .b32 %r<30>;
  .reg .b64 %rd<30>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r2, [k];
  mov.u64 %rd2, blob;
  and.b32 %r3, %r1, 7;
  add.s32 %r3, %r3, %r2;
  cvt.u64.u32 %rd3, %r3;
  mul.wide.u32 %rd9, %r1, 64;
  add.s64 %rd9, %rd1, %rd9;
  add.s64 %rd4, %rd2, %rd3;
  ld.param.u8 %r4, [%rd4];
  st.global.u32 [%rd9], %r4;
  ld.param.s8 %r5, [%rd4+1];
  st.global.u32 [%rd9+4], %r5;
  shl.b64 %rd5, %rd3, 1;
  add.s64 %rd6, %rd2, %rd5;
  ld.param.u16 %r6, [%rd6+2];
  st.global.u32 [%rd9+8], %r6;
  ld.param.s16 %r7, [%rd6];
  st.global.u32 [%rd9+12], %r7;
  shl.b64 %rd7, %rd3, 2;
  add.s64 %rd8, %rd2, %rd7;
  ld.param.u32 %r8, [%rd8+4];
  st.global.u32 [%rd9+16], %r8;
  shl.b64 %rd10, %rd3, 3;
  add.s64 %rd11, %rd2, %rd10;
  ld.param.u64 %rd12, [%rd11];
  st.global.u64 [%rd9+24], %rd12;
  ld.param.v2.u32 {%r9, %r10}, [%rd11+8];
  st.global.v2.u32 [%rd9+32], {%r9, %r10};
  and.b32 %r11, %r3, 3;
  mul.wide.u32 %rd13, %r11, 16;
  add.s64 %rd14, %rd2, %rd13;
  ld.param.v4.u32 {%r12, %r13, %r14, %r15}, [%rd14];
  st.global.v4.u32 [%rd9+48], {%r12, %r13, %r14, %r15};
  cvta.param.u64 %rd15, %rd2;
  add.s64 %rd16, %rd15, %rd7;
  ld.u32 %r16, [%rd16];
  st.global.u32 [%rd9+40], %r16;
  add.s64 %rd17, %rd15, %rd3;
  ld.s8 %r17, [%rd17+3];
  isspacep.param %p1, %rd17;
  selp.b32 %r18, 1000, 0, %p1;
  add.s32 %r17, %r17, %r18;
  st.global.u32 [%rd9+44], %r17;
  ld.param.s32 %rd18, [%rd8+32];
  st.global.u64 [%rd9+56], %rd18;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra DONE;
  st.global.u64 [%rd1+2048], %rd2;
  st.global.u64 [%rd1+2056], %rd15;
  cvta.param.u64 %rd19, blob;
  add.s64 %rd19, %rd19, 40;
  cvta.to.param.u64 %rd20, %rd19;
  st.global.u64 [%rd1+2064], %rd20;
DONE:
  ret;
}
"""


def _widths_reference(blob: bytes, k: int) -> np.ndarray:
    out = np.zeros(2072, np.uint8)
    b = np.frombuffer(blob, np.uint8)

    def word(t: int, at: int, value: int, size: int = 4):
        out[t * 64 + at:t * 64 + at + size] = np.frombuffer(int(value % (1 << 8 * size)).to_bytes(size, "little"),
                                                            np.uint8)

    def get(at: int, size: int, signed: bool = False) -> int:
        return int.from_bytes(b[at:at + size].tobytes(), "little", signed=signed)

    for t in range(32):
        i = (t & 7) + k
        word(t, 0, get(i, 1))
        word(t, 4, get(i + 1, 1, True))
        word(t, 8, get(2 * i + 2, 2))
        word(t, 12, get(2 * i, 2, True))
        word(t, 16, get(4 * i + 4, 4))
        word(t, 24, get(8 * i, 8), 8)
        word(t, 32, get(8 * i + 8, 4))
        word(t, 36, get(8 * i + 12, 4))
        for e in range(4):
            word(t, 48 + 4 * e, get(16 * (i & 3) + 4 * e, 4))
        word(t, 40, get(4 * i, 4))
        word(t, 44, get(i + 3, 1, True) + 1000)
        word(t, 56, get(4 * i + 32, 4, True), 8)
    out[2048:2056] = np.frombuffer((0).to_bytes(8, "little"), np.uint8)  # blob's param-space address
    out[2056:2064] = np.frombuffer(WINDOWS["param"].to_bytes(8, "little"), np.uint8)
    out[2064:2072] = np.frombuffer((40).to_bytes(8, "little"), np.uint8)
    return out


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("engine", ENGINES)
def test_every_width_through_param_and_generic_addresses(engine, level):
    blob = np.random.default_rng(3).integers(0, 256, 72, dtype=np.uint8).tobytes()
    fn = rt.load_module(WIDTHS, engine=engine, opt_level=level).get_function("widths")
    out = rt.to_device(np.zeros(2072, np.uint8))
    fn.launch((1, 1, 1), (32, 1, 1), (blob, out, np.int32(0)))
    np.testing.assert_array_equal(out.copy_to_host(), _widths_reference(blob, 0))


POKE = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry poke(.param .align 8 .b8 blob[16], .param .u32 k)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u32 %r1, [k];
  mov.u64 %rd1, blob;
  cvta.param.u64 %rd2, %rd1;
  st.u32 [%rd2+4], %r1;
  ret;
}

.visible .entry peek(.param .align 8 .b8 blob[16], .param .u32 k, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u32 %r1, [k];
  ld.param.u64 %rd4, [out];
  mov.u64 %rd1, blob;
  cvt.u64.u32 %rd2, %r1;
  add.s64 %rd3, %rd1, %rd2;
  ld.param.u32 %r2, [%rd3];
  st.u32 [%rd4], %r2;
  ret;
}
"""


def _line(src: str, text: str) -> int:
    return next(k for k, line in enumerate(src.splitlines(), 1) if text in line)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_store_through_the_param_window_faults(engine):
    fn = rt.load_module(POKE, engine=engine).get_function("poke")
    with pytest.raises(KernelFault, match=r"read-only 4-byte param access at address 0x4.*kernel parameters are "
                                          r"read-only") as e:
        fn.launch((1, 1, 1), (32, 1, 1), (bytes(16), np.int32(5)))
    assert f":{_line(POKE, 'st.u32 [%rd2+4]')}:" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_read_past_the_parameters_faults(engine):
    fn = rt.load_module(POKE, engine=engine).get_function("peek")
    out = rt.to_device(np.zeros(1, np.uint32))
    fn.launch((1, 1, 1), (1, 1, 1), (bytes(range(16)), np.int32(8), out))
    assert out.copy_to_host()[0] == int.from_bytes(bytes(range(8, 12)), "little")
    with pytest.raises(KernelFault, match=r"out-of-bounds 4-byte param access") as e:
        fn.launch((1, 1, 1), (1, 1, 1), (bytes(16), np.int32(40), out))
    assert f":{_line(POKE, 'ld.param.u32 %r2, [%rd3]')}:" in str(e.value)


def test_stores_to_kernel_parameters_are_refused_at_compile_time():
    src = POKE.replace("st.u32 [%rd2+4], %r1;", "st.param.u32 [%rd1+4], %r1;")
    with pytest.raises(UnsupportedError, match="stores to kernel parameters are not supported") as e:
        rt.load_module(src).get_function("poke")
    assert e.value.loc is not None and e.value.loc.line == _line(src, "st.param.u32")


def test_atomics_on_kernel_parameters_are_refused_at_compile_time():
    """ptxas 13.0: "State space incorrect for instruction 'atom'" (atom takes .global and .shared only)."""
    src = POKE.replace("st.u32 [%rd2+4], %r1;", "atom.param.add.u32 %r2, [blob+4], %r1;")
    with pytest.raises(XccError, match="atom works on the .global and .shared spaces, not .param") as e:
        rt.load_module(src).get_function("poke")
    assert e.value.loc is not None and e.value.loc.line == _line(src, "atom.param")


@pytest.mark.parametrize("engine", ENGINES)
def test_an_atomic_through_the_param_window_faults(engine):
    src = POKE.replace("st.u32 [%rd2+4], %r1;", "atom.add.u32 %r2, [%rd2+4], %r1;")
    fn = rt.load_module(src, engine=engine).get_function("poke")
    with pytest.raises(KernelFault, match=r"read-only 4-byte param access at address 0x4"):
        fn.launch((1, 1, 1), (1, 1, 1), (bytes(16), np.int32(5)))


def test_constant_offsets_of_a_struct_read_the_constant_bank_at_o2():
    """``mov.b64 %rd, params; ld.param [%rd+8]``: once the offsets fold, an LDC of bank 0 (no generic LD)."""
    from xcc.backend.codegen import disassemble_kernel
    from xcc.driver import CompileOptions, compile_module
    from xcc.sources import Source

    src = HEADER_PTX + """
.visible .entry fields(.param .align 8 .b8 blob[32], .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.b64 %rd1, blob;
  add.s64 %rd2, %rd1, 8;
  ld.param.u32 %r1, [%rd2+4];
  ld.param.u64 %rd3, [%rd1+16];
  cvt.u32.u64 %r2, %rd3;
  add.s32 %r1, %r1, %r2;
  ld.param.u64 %rd3, [out];
  st.global.u32 [%rd3], %r1;
  ret;
}
"""
    for level, generic in ((0, True), (2, False), (3, False)):
        k = compile_module([Source(src, "fields.ptx")], CompileOptions(opt_level=level)).kernels["fields"]
        text = disassemble_kernel(k)
        assert bool(re.search(r"\bLD(\.64)? ", text)) == generic, text
        for engine in ENGINES:
            out = rt.to_device(np.zeros(1, np.uint32))
            blob = bytes(range(32))
            rt.load_module(src, engine=engine, opt_level=level).get_function("fields").launch(
                (1, 1, 1), (1, 1, 1), (blob, out))
            want = (int.from_bytes(blob[12:16], "little") + int.from_bytes(blob[16:20], "little")) % (1 << 32)
            assert out.copy_to_host()[0] == want


WIDE = HEADER_PTX + """
.visible .entry wide(.param .align 8 .b8 blob[16], .param .u64 out)
{
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.s32 %rd2, [blob];
  st.global.u64 [%rd1], %rd2;
  ld.param.u32 %rd3, [blob+8];
  st.global.u64 [%rd1+8], %rd3;
  ld.param.s32 %rd4, [blob+12];
  st.global.u64 [%rd1+16], %rd4;
  ld.param.s16 %rd5, [blob+10];
  st.global.u64 [%rd1+24], %rd5;
  ld.param.u8 %rd5, [blob+11];
  st.global.u64 [%rd1+32], %rd5;
  ld.param.s8 %rd5, [blob+1];
  st.global.u64 [%rd1+40], %rd5;
  ret;
}
"""


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_32_bit_parameter_into_a_64_bit_register_is_extended(engine, level):
    """``ld.param.s32 %rd, [p]`` sign-extends and ``.u32`` zero-extends (PTX ISA 6.4), reading 4 bytes only; the
    same for 8- and 16-bit parameters."""
    blob = bytes([0xF0, 0xFF, 0xFF, 0xFF, 0x11, 0x22, 0x33, 0x44, 0xAB, 0xCD, 0xEF, 0x81, 0x02, 0x03, 0x04, 0x05])
    out = rt.to_device(np.zeros(6, np.uint64))
    rt.load_module(WIDE, engine=engine, opt_level=level).get_function("wide").launch((1, 1, 1), (1, 1, 1), (blob, out))
    assert out.copy_to_host().tolist() == [0xFFFFFFFFFFFFFFF0, 0x81EFCDAB, 0x05040302, 0xFFFFFFFFFFFF81EF, 0x81,
                                           0xFFFFFFFFFFFFFFFF]


ENTRY_SPACE = HEADER_PTX.replace("8.0", "9.0") + """
.visible .entry entry_space(.param .align 8 .b8 blob[16], .param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, blob;
  cvta.param::entry.u64 %rd3, %rd2;
  cvta.param.u64 %rd4, %rd2;
  ld.u32 %r1, [%rd3+4];
  st.global.u32 [%rd1], %r1;
  cvta.to.param::entry.u64 %rd5, %rd3;
  cvta.to.param.u64 %rd6, %rd4;
  st.global.u64 [%rd1+8], %rd5;
  st.global.u64 [%rd1+16], %rd6;
  sub.s64 %rd7, %rd3, %rd4;
  st.global.u64 [%rd1+24], %rd7;
  isspacep.param::entry %p1, %rd3;
  isspacep.param::entry %p2, %rd1;
  isspacep.param %p3, %rd3;
  selp.b32 %r2, 1, 0, %p1;
  selp.b32 %r3, 2, 0, %p2;
  selp.b32 %r4, 4, 0, %p3;
  or.b32 %r2, %r2, %r3;
  or.b32 %r2, %r2, %r4;
  st.global.u32 [%rd1+4], %r2;
  ret;
}
"""


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("engine", ENGINES)
def test_param_entry_is_the_kernels_param_space(engine, level):
    """In a kernel, ``.param::entry`` is ``.param`` (PTX ISA 5.1.6.4): ``cvta.param::entry`` gives the same generic
    address as ``cvta.param``, a generic load through it reads the parameter, ``cvta.to.param::entry`` gives the
    param-space address back, and ``isspacep.param::entry`` is true for it and false for a global pointer."""
    blob = bytes(range(16, 32))
    out = rt.to_device(np.zeros(4, np.uint64))
    rt.load_module(ENTRY_SPACE, engine=engine, opt_level=level).get_function("entry_space").launch(
        (1, 1, 1), (1, 1, 1), (blob, out))
    got = out.copy_to_host()
    assert int(got[0]) & 0xFFFFFFFF == int.from_bytes(blob[4:8], "little")
    assert int(got[0]) >> 32 == 0b101  # isspacep.param::entry true, false on the global pointer; isspacep.param true
    assert got[1:].tolist() == [0, 0, 0]  # blob is at param-space address 0; both windows are the same


# -------------------------------------------------------------------------- the host side
def test_struct_argument_forms_and_size_errors():
    a, b, c, perm, scale, alpha, beta, want = _gemm_problem(np.random.default_rng(11))
    fn = rt.load_module(EXAMPLES / "struct_params.sm_80.ptx").get_function(ENTRIES["gemm"])
    da, db, dc = rt.to_device(a), rt.to_device(b), rt.to_device(c)
    dd = rt.to_device(np.zeros(want.shape, np.float32))
    p = _params(da, db, dc, dd, perm, scale, alpha, beta)
    fn.launch((2, want.shape[0], 1), (32, 1, 1), (p.tobytes(),))  # bytes work as the structured scalar does
    np.testing.assert_array_equal(dd.copy_to_host(), want)
    with pytest.raises(LaunchError, match=r"argument 0 .*1799 bytes given, 1800 expected"):
        fn.launch((1, 1, 1), (32, 1, 1), (p.tobytes()[:-1],))


def test_struct_argument_through_the_driver_api():
    from xcc.runtime import driver as cuda

    a, b, c, perm, scale, alpha, beta, want = _gemm_problem(np.random.default_rng(5))
    assert cuda.cuInit(0)[0] == cuda.CUresult.CUDA_SUCCESS
    err, dev = cuda.cuDeviceGet(0)
    err, ctx = cuda.cuCtxCreate(0, dev)
    try:
        err, mod = cuda.cuModuleLoadData((EXAMPLES / "struct_params.sm_90.ptx").read_bytes() + b"\0")
        assert err == cuda.CUresult.CUDA_SUCCESS, cuda.last_error_message()
        err, kern = cuda.cuModuleGetFunction(mod, ENTRIES["grid_constant"].encode())
        assert err == cuda.CUresult.CUDA_SUCCESS, cuda.last_error_message()
        ptrs = []
        for h in (a, b, c, np.zeros_like(want)):
            err, d = cuda.cuMemAlloc(h.nbytes)
            cuda.cuMemcpyHtoD(d, h.ctypes.data, h.nbytes)
            ptrs.append(d)
        p = np.zeros(1, PARAMS)
        p["A"], p["B"], p["C"], p["D"] = (int(x) for x in ptrs)
        M, K = a.shape
        N = b.shape[1]
        p["M"], p["N"], p["K"], p["lda"], p["ldb"], p["ldc"] = M, N, K, K, N, N
        p["alpha"], p["beta"], p["perm"], p["col_scale"] = alpha, beta, perm, scale
        args = np.array([p.ctypes.data], dtype=np.uint64)  # kernelParams: the address of each argument
        err, = cuda.cuLaunchKernel(kern, 2, M, 1, 32, 1, 1, 0, 0, args.ctypes.data, 0)
        assert err == cuda.CUresult.CUDA_SUCCESS, cuda.last_error_message()
        got = np.zeros_like(want)
        cuda.cuMemcpyDtoH(got.ctypes.data, ptrs[3], got.nbytes)
        np.testing.assert_array_equal(got, want)
        class Blob(ctypes.Structure):  # ((values), (ctypes types)) form: a ctypes.Structure as cuda-python takes
            _fields_ = [("bytes", ctypes.c_uint8 * 1800)]

        blob = Blob.from_buffer_copy(p.tobytes())
        cuda.cuMemsetD8(ptrs[3], 0, got.nbytes)
        err, = cuda.cuLaunchKernel(kern, 2, M, 1, 32, 1, 1, 0, 0, ((blob,), (None,)), 0)
        assert err == cuda.CUresult.CUDA_SUCCESS, cuda.last_error_message()
        cuda.cuMemcpyDtoH(got.ctypes.data, ptrs[3], got.nbytes)
        np.testing.assert_array_equal(got, want)
    finally:
        cuda.cuCtxDestroy(ctx)
