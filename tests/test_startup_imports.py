"""`xcc compile` and `xcc check` start without importing what they do not use: the simulator, the
runtime, the JIT disk cache, llvmlite, or the lark package (the parser's tables are committed,
frontend/ptx_standalone.py). `xcc check` and `import xcc.cli` import neither numpy nor code generation;
`xcc compile` imports numpy only when a pass evaluates a constant outside the integer operations that
xcc.ir.fold computes on Python ints (a float, a half, a bit-field operation: xcc.ir.evaluate) or a kernel
uses the matrix operations, and llvmlite not even then (only fma and directed rounding build its loops). Each case runs in a fresh interpreter, as the command does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PTX = ROOT / "examples" / "saxpy.sm_80.ptx"

# A module is unwanted if its name is one of these or starts with one of them and a dot.
UNWANTED = ("xcc.sim", "xcc.runtime", "xcc.cache", "llvmlite", "lark", "diskcache")
# ... and, for `xcc compile` without --profile-use or specialisation, profile-guided optimisation's modules.
COMPILE_UNWANTED = (*UNWANTED, "xcc.profile", "xcc.passes.specialize", "xcc.passes.block_layout")
# ... and, for `xcc check --syntax-only`, these as well: it parses and checks, nothing more (a plain `xcc check`
# compiles, as `xcc compile` does: xcc.check).
CHECK_UNWANTED = (*UNWANTED, "numpy", "xcc.ir", "xcc.passes", "xcc.backend.isa", "xcc.backend.codegen", "xcc.driver")

_PROBE = """
import json, sys
from xcc.cli import main
rc = main(sys.argv[1:])
unwanted = tuple(json.loads({unwanted!r}))
found = sorted(m for m in sys.modules if m in unwanted or m.startswith(tuple(u + "." for u in unwanted)))
print(json.dumps({{"rc": rc, "unwanted": found}}))
"""


def _imports_of(*args: str, unwanted: tuple[str, ...] = UNWANTED) -> dict:
    code = _PROBE.format(unwanted=json.dumps(unwanted))
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", ["compile", "check", "check --syntax-only"])
def test_command_does_not_import_unused_layers(command, tmp_path):
    args = ["compile", str(PTX), "-o", str(tmp_path / "out.xbin")] if command == "compile" else [*command.split(),
                                                                                                  str(PTX)]
    unwanted = {"compile": COMPILE_UNWANTED, "check --syntax-only": CHECK_UNWANTED}.get(command, UNWANTED)
    result = _imports_of(*args, unwanted=unwanted)
    assert result["rc"] == 0
    assert result["unwanted"] == []
    if command == "compile":
        assert (tmp_path / "out.xbin").stat().st_size > 0


# A kernel with nothing to fold: no instruction whose operands are all constants.
_COPY = """.version 7.0
.target sm_80
.address_size 64
.visible .entry copy(.param .u64 dst, .param .u64 src)
{
    .reg .b64 %rd<5>;
    .reg .f32 %f<2>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [src];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    ld.global.f32 %f1, [%rd4];
    st.global.f32 [%rd3], %f1;
    ret;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O3"])
def test_compile_imports_numpy_only_to_evaluate(level, tmp_path):
    """numpy (xcc.semantics, through xcc.ir.evaluate) is imported at the first constant a pass evaluates,
    not by importing the passes, the IR or the backend."""
    src = tmp_path / "copy.ptx"
    src.write_text(_COPY)
    result = _imports_of("compile", level, str(src), "-o", str(tmp_path / "copy.xbin"),
                         unwanted=(*UNWANTED, "numpy", "xcc.ir.evaluate"))
    assert result["rc"] == 0
    assert result["unwanted"] == []


# Integer folds (index arithmetic: shl, add, setp, selp, mul.wide), then an f32 product of two constants.
_FOLDS = """.version 7.0
.target sm_80
.address_size 64
.visible .entry fold(.param .u64 dst)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<5>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [dst];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 3;
    shl.b32 %r2, %r1, 4;
    add.s32 %r3, %r2, 5;
    setp.lt.u32 %p1, %r3, 60;
    selp.b32 %r4, %r3, 7, %p1;
    mul.wide.s32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r4;
{float}    ret;
}}
"""
_F32_PRODUCT = """    mov.f32 %f1, 0f40400000;
    mov.f32 %f2, 0f3FC00000;
    mul.rn.f32 %f3, %f1, %f2;
    st.global.f32 [%rd2], %f3;
"""


@pytest.mark.parametrize("with_float", [False, True], ids=["integer", "f32"])
def test_folding_imports_numpy_only_for_float_folds(with_float, tmp_path):
    """Integer folds are computed without numpy (xcc.ir.fold); a round-to-nearest f32 product is folded by
    the semantics (numpy) without building the llvmlite loops, which only fma and directed rounding need."""
    src = tmp_path / "fold.ptx"
    src.write_text(_FOLDS.format(float=_F32_PRODUCT if with_float else ""))
    unwanted = UNWANTED if with_float else (*UNWANTED, "numpy", "xcc.ir.evaluate", "xcc.semantics.integer")
    code = _PROBE.format(unwanted=json.dumps(unwanted))
    proc = subprocess.run([sys.executable, "-c", code, "compile", "-O3", str(src), "-o", str(tmp_path / "f.xbin"),
                           "--print-after=sccp"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"rc": 0, "unwanted": []}
    assert "st.u32 %2, b32:0x35" in proc.stderr  # (3 << 4) + 5, folded
    if with_float:
        assert "f32:0x40900000" in proc.stderr  # 3.0 * 1.5 = 4.5, folded


def test_import_of_the_cli_alone_is_light():
    """`xcc --help` and the argument parsing load no compiler layer, nor numpy; each command imports what it
    uses."""
    code = ("import sys, xcc.cli; "
            "print(sorted(m for m in sys.modules if m.startswith(('xcc.', 'lark', 'llvmlite', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout.replace("'", '"')) == ["xcc.cli", "xcc.diagnostics"]


def test_probe_sees_an_unwanted_import():
    """The check can fail: `xcc run` does use the runtime and the simulator."""
    result = _imports_of("run", str(PTX), "--kernel", "saxpy", "--grid", "1", "--block", "32", "--no-timing",
                         "s32:32", "f32:2.0", "zeros:float32[32]", "zeros:float32[32]")
    assert result["rc"] == 0
    assert any(m.startswith("xcc.runtime") for m in result["unwanted"])
    assert any(m.startswith("xcc.sim") for m in result["unwanted"])
