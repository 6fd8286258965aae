"""cuLink*: PTX modules compiled separately (-rdc=true) linked into one image that cuModuleLoadData loads."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from xcc.runtime import driver as cuda

sys.path.insert(0, str(Path(__file__).parent))
from test_driver_api import check  # noqa: E402

R = cuda.CUresult
PTX = cuda.CUjitInputType.CU_JIT_INPUT_PTX
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
LIB = HEADER + """
.visible .global .align 4 .u32 counter = 5;
.visible .entry bump(.param .u32 by)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [by];
  ld.global.u32 %r2, [counter];
  add.u32 %r3, %r2, %r1;
  st.global.u32 [counter], %r3;
  ret;
}
"""
MAIN = HEADER + """
.extern .global .align 4 .u32 counter;
.visible .entry read_counter(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [counter];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


@pytest.fixture
def ctx():
    check(cuda.cuInit(0))
    c = check(cuda.cuCtxCreate(None, 0, check(cuda.cuDeviceGet(0))))
    yield c
    cuda.cuCtxDestroy(c)


def _link(*modules, log=None):
    opts, vals = ([cuda.CUjit_option.CU_JIT_ERROR_LOG_BUFFER], [log]) if log is not None else ([], [])
    st = check(cuda.cuLinkCreate(len(opts), opts, vals))
    for i, text in enumerate(modules):
        data = text.encode()
        check(cuda.cuLinkAddData(st, PTX, data, len(data), f"m{i}.ptx".encode(), 0, None, None))
    return st


def test_linked_modules_share_a_variable_across_kernels(ctx, tmp_path):
    path = tmp_path / "lib.ptx"
    path.write_text(LIB)
    st = check(cuda.cuLinkCreate(0, [], []))
    data = MAIN.encode()
    check(cuda.cuLinkAddData(st, PTX, data, len(data), b"main.ptx", 0, None, None))
    check(cuda.cuLinkAddFile(st, PTX, str(path), 0, None, None))
    addr, size = check(cuda.cuLinkComplete(st))
    assert size > 0 and ctypes.string_at(addr, 4) == b"XBIN"
    mod = check(cuda.cuModuleLoadData(addr))
    bump, read = check(cuda.cuModuleGetFunction(mod, b"bump")), check(cuda.cuModuleGetFunction(mod, b"read_counter"))
    out = check(cuda.cuMemAlloc(4))
    for by in (3, 4):
        check(cuda.cuLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, 0, ((by,), (ctypes.c_uint,)), 0))
    check(cuda.cuLaunchKernel(read, 1, 1, 1, 1, 1, 1, 0, 0, ((out,), (None,)), 0))
    host = np.zeros(1, np.uint32)
    check(cuda.cuMemcpyDtoH(host, out, 4))
    assert host[0] == 5 + 3 + 4  # the extern in main.ptx is lib.ptx's variable, kept across launches
    check(cuda.cuLinkDestroy(st))


def test_link_errors(ctx):
    log = bytearray(512)
    st = _link(MAIN, log=log)
    assert cuda.cuLinkComplete(st)[0] == R.CUDA_ERROR_INVALID_PTX
    assert b"unresolved extern variable 'counter'" in bytes(log)
    st = _link(LIB, LIB)
    assert cuda.cuLinkComplete(st)[0] == R.CUDA_ERROR_INVALID_PTX
    assert "duplicate" in cuda.last_error_message()
    st = check(cuda.cuLinkCreate(0, [], []))
    assert cuda.cuLinkComplete(st)[0] == R.CUDA_ERROR_INVALID_VALUE
    assert cuda.cuLinkAddData(st, cuda.CUjitInputType.CU_JIT_INPUT_CUBIN, b"x", 1, b"x", 0, None, None)[0] == \
        R.CUDA_ERROR_NOT_SUPPORTED
    assert cuda.cuLinkAddFile(st, PTX, "/nonexistent.ptx", 0, None, None)[0] == R.CUDA_ERROR_FILE_NOT_FOUND
