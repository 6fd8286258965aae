"""Random PTX kernels through the scalar passes: forward branches on thread-dependent and constant
conditions, back edges bounded by one shared counter (loops, phis), integer arithmetic (division by constants included) and a local frame reached directly and
through cvta.local.  Every pass alone, and the group together, must leave the IR verifying and every
thread's results bit-identical on the IR interpreter (hypothesis draws the programs)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_cases import Launch
from pass_harness import PassCase, build_text, run_outputs

from xcc.passes import PassManager

PASSES = ["simplifycfg", "mem2reg", "sccp", "copyprop", "instcombine", "dse", "jump-threading",
          "simplifycfg,mem2reg,sccp,copyprop,instcombine,dse,jump-threading,dce,simplifycfg",
          "simplifycfg,pipeline-loads{distance=1},dce", "simplifycfg,pipeline-loads{distance=3},dce"]
REGS = 4
OPS = ["add.u32", "sub.u32", "mul.lo.u32", "xor.b32", "and.b32", "or.b32", "shl.b32", "shr.u32", "div.u32",
       "rem.u32", "div.s32", "rem.s32", "min.s32"]
CONSTS = [0, 1, 2, 3, 4, 7, 8, 10, 16, 31, -1, -5, 0x7FFFFFFF, -0x80000000]


@st.composite
def programs(draw) -> str:
    nblocks = draw(st.integers(2, 6))
    lines = []
    for b in range(nblocks):
        lines.append(f"B{b}:")
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["op", "op", "store", "load", "flag"]))
            d, a = draw(st.integers(0, REGS - 1)), draw(st.integers(0, REGS - 1))
            if kind == "op":
                op = draw(st.sampled_from(OPS))
                src = f"%r{draw(st.integers(0, REGS - 1))}" if draw(st.booleans()) else str(draw(st.sampled_from(CONSTS)))
                if op.startswith(("shl", "shr")):
                    src = str(draw(st.integers(0, 33)))
                if op.startswith(("div", "rem")) and src in ("0", "%r0", "%r1", "%r2", "%r3"):
                    src = "7"
                lines.append(f"  {op} %r{d}, %r{a}, {src};")
            elif kind == "store":
                off = 4 * draw(st.integers(0, 3))
                lines.append(draw(st.sampled_from([f"  st.local.u32 [%SPL+{off}], %r{a};",
                                                   f"  st.u32 [%SP+{off}], %r{a};"])))
            elif kind == "load":
                off = 4 * draw(st.integers(0, 3))
                lines.append(draw(st.sampled_from([f"  ld.local.u32 %r{d}, [%SPL+{off}];",
                                                   f"  ld.u32 %r{d}, [%SP+{off}];"])))
            else:
                c = draw(st.sampled_from(CONSTS))
                lines.append(f"  setp.eq.s32 %p1, %r{a}, {c};")
                lines.append(f"  selp.u32 %r{d}, 1, 0, %p1;")
        if draw(st.integers(0, 3)) == 0:  # a back edge, taken at most 3 times in all (one shared counter)
            lines.append("  add.u32 %c0, %c0, 1;")
            lines.append("  setp.lt.u32 %p0, %c0, 3;")
            lines.append(f"  @%p0 bra B{draw(st.integers(0, b))};")
        if b + 1 < nblocks:
            target = draw(st.integers(b + 1, nblocks - 1))
            kind = draw(st.sampled_from(["cond", "cond", "uncond", "flag", "none"]))
            if kind == "cond":
                cmp = draw(st.sampled_from(["lt.u32", "eq.s32", "gt.s32", "ne.u32"]))
                c = draw(st.sampled_from(CONSTS))
                lines.append(f"  setp.{cmp} %p2, %r{draw(st.integers(0, REGS - 1))}, {c};")
                if draw(st.booleans()):  # nvcc -G negates the condition: setp; not; bra
                    lines.append("  not.pred %p2, %p2;")
                lines.append(f"  @%p2 bra B{target};")
            elif kind == "flag":  # a phi of constants feeding a branch later (jump threading)
                lines.append(f"  setp.ne.u32 %p2, %r{draw(st.integers(0, REGS - 1))}, 0;")
                lines.append(f"  @%p2 bra B{target};")
            elif kind == "uncond":
                lines.append(f"  bra.uni B{target};")
    body = "\n".join(lines)
    stores = "\n".join(f"  st.global.u32 [%rd3+{4 * k}], %r{k};" for k in range(REGS))
    return f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .local .align 4 .b8 __local_depot0[16];
  .reg .b64 %SP, %SPL;
  .reg .pred %p<3>;
  .reg .b32 %r<{REGS}>;
  .reg .b32 %c<1>;
  .reg .b64 %rd<4>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd1, [out];
  mov.u32 %c0, 0;
  mov.u32 %r0, %tid.x;
  mul.lo.u32 %r1, %r0, -7;
  mov.u32 %r2, 5;
  xor.b32 %r3, %r0, 12;
  mul.wide.u32 %rd2, %r0, {4 * REGS};
  add.s64 %rd3, %rd1, %rd2;
{body}
{stores}
  ret;
}}
"""


def _launch(rng):
    return Launch((1, 1, 1), (64, 1, 1), [np.zeros(64 * REGS, np.uint32)], [0], {})


@settings(max_examples=60, deadline=None)
@given(text=programs(), passes=st.sampled_from(PASSES))
def test_random_kernels_unchanged(tmp_path_factory, text, passes):
    path = tmp_path_factory.mktemp("rand") / "k.ptx"
    path.write_text(text)
    case = PassCase("random", path, "k", _launch)
    want = run_outputs(build_text(text), case)
    mod = build_text(text)
    PassManager(passes, verify=True).run(mod)
    got = run_outputs(mod, case)
    np.testing.assert_array_equal(got[0], want[0], err_msg=f"{passes} changed the results of\n{text}")
