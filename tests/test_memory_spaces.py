"""Generic addressing and the state spaces real kernels use, on both engines: cvta to and from the
shared, local and global windows, generic ld/st/atom through them, isspacep, module-scope and
dynamic (``.extern``) shared memory, ``.local`` depots and module-level ``.global`` tables.  Each
kernel runs on the IR interpreter and, compiled, on the ISA interpreter; both must match numpy bit
for bit, and out-of-window generic accesses fault with the PTX line on both."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.driver import CompileOptions, Source, compile_module
from xcc.sim.memory import WINDOWS, window_space
from xcc.sim.printf import c_printf

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
ENGINES = ["ir", "isa"]


def run(ptx: str, kernel: str, grid, block, args, engine: str, opt_level: int = 3, shared_mem: int = 0):
    device = rt.Device()
    dev = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in args]
    mod = rt.load_module(ptx, engine=engine, opt_level=opt_level, device=device)
    mod.get_function(kernel).launch(grid, block, dev, shared_mem)
    return [d.copy_to_host() if isinstance(d, rt.DeviceArray) else None for d in dev]


def both(ptx, kernel, grid, block, args, shared_mem=0, level=3):
    """The outputs on the IR and the ISA interpreter, checked equal bit for bit; returns the IR's."""
    ir = run(ptx, kernel, grid, block, args, "ir", level, shared_mem)
    isa = run(ptx, kernel, grid, block, args, "isa", level, shared_mem)
    for a, b in zip(ir, isa):
        if a is not None:
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg="IR vs ISA interpreter")
    return ir


def line_of(ptx: str, text: str) -> int:
    return next(i for i, line in enumerate(ptx.splitlines(), 1) if line.strip().startswith(text))


# ----------------------------------------------------------------------------- the address map
def test_window_map():
    assert all(base % (1 << 32) == 0 for base in WINDOWS.values())
    a = np.array([0, WINDOWS["shared"], WINDOWS["shared"] + 5, WINDOWS["local"] + 7, WINDOWS["const"],
                  WINDOWS["const"] + (1 << 32), WINDOWS["param"] + 9, WINDOWS["param"] + (1 << 32),
                  0x7F00_0000_0000], np.uint64)
    assert WINDOWS["param"] == WINDOWS["const"] + (1 << 32)  # the kernel parameters' window, after const's
    assert window_space(a).tolist() == [0, 1, 1, 2, 3, 4, 4, 0, 0]


# ----------------------------------------------------------------------------- shared
SHARED_GENERIC = HEADER + """
.shared .align 4 .b8 tile[512];
.visible .entry k(.param .u64 out, .param .u64 spaces)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd9, [spaces];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd2, tile;                    // the shared-space address of a module-scope array
  cvta.shared.u64 %rd3, %rd2;            // ... as a generic address
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  mul.lo.u32 %r2, %r1, 3;
  st.u32 [%rd5], %r2;                    // generic store into shared memory
  bar.sync 0;
  xor.b32 %r3, %r1, 1;
  mul.wide.u32 %rd6, %r3, 4;
  add.s64 %rd7, %rd3, %rd6;
  ld.u32 %r4, [%rd7];                    // generic load of the neighbour's word
  atom.add.u32 %r5, [%rd3+256], 1;       // generic atomic on shared: old values 0..n-1
  cvta.to.shared.u64 %rd8, %rd7;         // back to a shared address
  cvt.u32.u64 %r6, %rd8;
  ld.shared.u32 %r7, [%r6];
  add.s64 %rd10, %rd1, %rd4;
  st.global.u32 [%rd10], %r4;
  st.global.u32 [%rd10+256], %r7;
  isspacep.shared %p1, %rd5;
  isspacep.global %p2, %rd5;
  isspacep.global %p3, %rd1;
  selp.u32 %r8, 1, 0, %p1;
  selp.u32 %r9, 2, 0, %p2;
  selp.u32 %r10, 4, 0, %p3;
  or.b32 %r8, %r8, %r9;
  or.b32 %r8, %r8, %r10;
  add.s64 %rd11, %rd9, %rd4;
  st.global.u32 [%rd11], %r8;
  bar.sync 0;
  @%p1 st.global.u32 [%rd10+512], %r5;
  ret;
}
"""


@pytest.mark.parametrize("level", [0, 3])
def test_generic_access_to_shared_through_cvta(level):
    n = 64
    out, spaces = np.zeros(3 * n, np.uint32), np.zeros(n, np.uint32)
    got, sp = both(SHARED_GENERIC, "k", 1, n, [out, spaces], level=level)[:2]
    t = np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(got[:n], (t ^ 1) * 3)
    np.testing.assert_array_equal(got[n:2 * n], (t ^ 1) * 3)
    np.testing.assert_array_equal(np.sort(got[2 * n:]), t)  # each thread saw a distinct old value
    np.testing.assert_array_equal(sp, np.full(n, 1 | 4))  # shared, not global; a global pointer is global


DYNAMIC = HEADER + """
.shared .align 4 .b8 fixed[12];
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, dyn;                      // 32-bit shared address of the dynamic array
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  st.shared.u32 [%r4], %r1;
  mov.u32 %r5, fixed;
  st.shared.u32 [%r5+4], 77;
  bar.sync 0;
  sub.s32 %r6, %r9, 1;
  sub.s32 %r6, %r6, %r1;                 // reversed
  shl.b32 %r6, %r6, 2;
  add.s32 %r6, %r2, %r6;
  ld.shared.u32 %r7, [%r6];
  ld.shared.u32 %r8, [%r5+4];
  add.u32 %r7, %r7, %r8;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  mov.u32 %r8, %dynamic_smem_size;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.global.u32 [%rd1+512], %r2;
  ret;
}
"""


def test_dynamic_shared_memory_sized_by_the_launch():
    n = 100
    out = np.zeros(129, np.uint32)
    got = both(DYNAMIC, "k", 1, n, [out, np.uint32(n)], shared_mem=4 * n)[0]
    np.testing.assert_array_equal(got[:n], np.arange(n)[::-1] + 77)
    assert got[128] == 16  # the .extern array starts at the 16-aligned end of the static ones


def test_dynamic_shared_overrun_faults():
    out = np.zeros(129, np.uint32)
    for engine in ENGINES:
        with pytest.raises(KernelFault, match="out-of-bounds.*shared") as e:
            run(DYNAMIC, "k", 1, 64, [out, np.uint32(64)], engine, shared_mem=4 * 32)
        assert e.value.line > 0


# ----------------------------------------------------------------------------- local
LOCAL_DEPOT = HEADER + """
.visible .entry k(.param .u64 out)
{
  .local .align 8 .b8 __local_depot0[40];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
FILL:                                    // a stack array written through generic addresses
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %SP, %rd2;
  mad.lo.u32 %r3, %r1, 100, %r2;
  st.u32 [%rd3], %r3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 8;
  @%p1 bra FILL;
  and.b32 %r4, %r1, 7;
  mul.wide.u32 %rd4, %r4, 4;
  add.s64 %rd5, %SPL, %rd4;
  ld.local.u32 %r5, [%rd5];              // read back through the local space
  st.local.u64 [%SPL+32], %rd5;
  ld.u64 %rd6, [%SP+32];
  cvta.to.local.u64 %rd7, %SP;
  sub.s64 %rd8, %rd6, %rd7;
  cvt.u32.u64 %r6, %rd8;
  isspacep.local %p1, %SP;
  selp.u32 %r7, 1, 0, %p1;
  mul.wide.u32 %rd9, %r1, 12;
  add.s64 %rd10, %rd1, %rd9;
  st.global.u32 [%rd10], %r5;
  st.global.u32 [%rd10+4], %r6;
  st.global.u32 [%rd10+8], %r7;
  ret;
}
"""


@pytest.mark.parametrize("level", [0, 3])
def test_local_depot_through_generic_and_local_addresses(level):
    n = 70
    got = both(LOCAL_DEPOT, "k", 1, n, [np.zeros(3 * n, np.uint32)], level=level)[0].reshape(n, 3)
    t = np.arange(n)
    np.testing.assert_array_equal(got[:, 0], t * 100 + (t & 7))
    np.testing.assert_array_equal(got[:, 1], 4 * (t & 7))
    np.testing.assert_array_equal(got[:, 2], 1)


def test_local_bytes_in_the_object_and_stack_frame_report(tmp_path, capsys):
    obj = compile_module([Source(LOCAL_DEPOT, "depot.ptx")], CompileOptions(opt_level=3))
    assert obj.kernels["k"].local_bytes == 40
    from xcc.backend.objfile import ObjectFile

    assert ObjectFile.from_bytes(obj.to_bytes()).kernels["k"].local_bytes == 40
    from xcc.cli import main

    src = tmp_path / "depot.ptx"
    src.write_text(LOCAL_DEPOT)
    assert main(["compile", "-v", "-o", str(tmp_path / "d.xbin"), str(src)]) == 0
    assert "    40 bytes stack frame, 0 bytes spill stores" in capsys.readouterr().err


# ----------------------------------------------------------------------------- faults
OUT_OF_WINDOW = HEADER + """
.shared .align 4 .b8 s[64];
.visible .entry k(.param .u64 out, .param .u32 off)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [off];
  mov.u64 %rd2, s;
  cvta.shared.u64 %rd3, %rd2;
  cvt.u64.u32 %rd4, %r1;
  add.s64 %rd5, %rd3, %rd4;
  ld.u32 %r2, [%rd5];
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_generic_access_past_the_shared_window_faults(engine):
    out = np.zeros(1, np.uint32)
    run(OUT_OF_WINDOW, "k", 1, 32, [out, np.uint32(60)], engine)  # inside: fine
    # (from -O1 the generic access through cvta.shared is a .shared one: the same fault, told as a shared access)
    with pytest.raises(KernelFault, match=r"out-of-bounds 4-byte shared access.*(shared window|shared memory is "
                                          r"64 bytes)") as e:
        run(OUT_OF_WINDOW, "k", 1, 32, [out, np.uint32(64)], engine)
    assert e.value.line == line_of(OUT_OF_WINDOW, "ld.u32") and e.value.thread == (0, 0, 0)


LOCAL_OVERRUN = HEADER + """
.visible .entry k(.param .u32 i)
{
  .local .align 4 .b8 depot[16];
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  ld.param.u32 %r1, [i];
  mov.u64 %rd1, depot;
  cvta.local.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.u32 [%rd4], %r1;
  ret;
}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_generic_access_past_the_local_window_faults(engine):
    run(LOCAL_OVERRUN, "k", 1, 32, [np.uint32(3)], engine)
    with pytest.raises(KernelFault, match=r"out-of-bounds 4-byte local access") as e:
        run(LOCAL_OVERRUN, "k", 1, 32, [np.uint32(4)], engine)
    assert e.value.line == line_of(LOCAL_OVERRUN, "st.u32")


# ----------------------------------------------------------------------------- .global tables
GLOBAL_TABLE = HEADER + """
.global .align 4 .b8 table[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  mov.u64 %rd2, table;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.u32 %r3, [%rd4];                    // generic load of a global variable
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd1, %rd5;
  st.global.u32 [%rd6], %r3;
  ret;
}
"""


def test_module_global_table():
    got = both(GLOBAL_TABLE, "k", 1, 40, [np.zeros(40, np.uint32)])[0]
    np.testing.assert_array_equal(got, (np.arange(40) & 3) + 1)


# ----------------------------------------------------------------------------- device printf and assert
GLOBALS_MISC = Path(__file__).resolve().parent.parent / "examples" / "globals_misc.sm_80.ptx"


def test_device_printf_on_the_ir_engine(capsys):
    """printf's format string is a .global string reached through cvta.global, its arguments a packed
    buffer in the thread's .local depot; output is collected in thread order and printed after the launch."""
    device = rt.Device()
    mod = rt.load_module(GLOBALS_MISC, engine="ir", device=device)
    x = rt.to_device(np.arange(10, dtype=np.float32) * np.float32(-0.25), device)
    stats = mod.get_function("_Z13printf_kerneliiPKf").launch((3, 1, 1), (4, 1, 1), [np.int32(10), np.int32(7), x])
    want = "".join(f"x[{i}] = {-0.25 * i:f}\n" for i in range(7))
    assert stats.printf_output == want
    assert capsys.readouterr().out == want


def test_device_assert_is_a_located_fault():
    device = rt.Device()
    mod = rt.load_module(GLOBALS_MISC, engine="ir", device=device)
    x = rt.to_device(np.array([1, 2, 3, -4, 5, -6], np.float32), device)
    y = rt.zeros(6, np.float32, device)
    with pytest.raises(KernelFault, match=r"globals_misc.cu:49: void assert_kernel\(int, const float \*, float \*\): "
                                          r"Assertion `x\[i\] >= 0.0f` failed") as e:
        mod.get_function("_Z13assert_kerneliPKfPf").launch(1, 32, [np.int32(6), x, y])
    assert e.value.thread == (3, 0, 0) and e.value.line > 0


def test_c_printf_conversions():
    buf = bytearray(64)
    values = [(0, -5 & 0xFFFFFFFF, 4), (8, 0xFFFFFFFFFFFFFFFE, 8), (16, 255, 4), (24, 2.5, 8), (32, 0x41, 4), (40, 0x1000, 8)]
    for off, v, size in values:
        buf[off:off + size] = struct.pack("<d", v) if isinstance(v, float) else v.to_bytes(size, "little")
    strings = {0x1000: b"hi\0"}

    def read(a, n):
        for base, text in strings.items():
            if base <= a < base + len(text):
                return text[a - base:a - base + n]
        return bytes(buf[a - 0x100:a - 0x100 + n])

    text, count = c_printf(b"%d|%lld|%04x|%.3e|%c|%s|%%|%5u", read, 0x100)
    assert count == 7
    assert text == "-5|-2|00ff|2.500e+00|A|hi|%|    0"
