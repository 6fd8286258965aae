"""Issue 19: the SIMD video instructions' selectors and masks (PTX ISA 9.7.10.3, "SIMD video instructions"):
``vop2.dtype.atype.btype{.sat|.add} d{.mask}, a{.asel}, b{.bsel}, c`` for vadd2/vsub2/vavrg2/vabsdiff2/vmin2/vmax2
and vset2, and the 4-way forms, on both engines at -O0 and -O3.

The reference below restates the manual's pseudo-code (not xcc.semantics): ``.asel``/``.bsel`` pick each element
from the half-words (``.hxy``) or bytes (``.bxyzw``) of the pair ``b:a`` (0-1 / 0-3 are ``a``'s, the rest ``b``'s;
the last digit is element 0); defaults ``.h10``/``.b3210`` for ``a`` and ``.h32``/``.b7654`` for ``b``.  Each
element is extended by its type and the operation is exact; ``.sat`` clamps to dtype's element range; the merge
form takes the elements of ``.mask`` from the results and the others from ``c``; ``.add`` is ``c`` plus the
results of the elements of ``.mask``.  The cases include the manual's own examples; the module is ptxas-clean for
sm_90a (``KERNELS`` below, checked with ptxas 13 when written); the malformed selectors ptxas refuses ("Incorrect
video selector") are located errors of ``xcc check`` and compile alike."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.sources import Source

# (instruction with d, a, b, c spelled D, A, B, C) - the manual's examples first
CASES = [
    "vsub2.s32.s32.s32.sat D.h0, A.h10, B.h32, C",
    "vmin2.s32.u32.u32.add D.h10, A.h00, B.h22, C",
    "vadd2.s32.s32.u32.sat D, A, B, C",
    "vadd2.u32.u32.u32.sat D.h1, A.h33, B.h01, C",
    "vabsdiff2.s32.s32.u32 D, A.h21, B.h03, C",
    "vavrg2.u32.s32.s32 D.h1, A.h12, B.h30, C",
    "vmax2.s32.s32.s32.add D.h0, A.h23, B.h11, C",
    "vsub2.u32.u32.u32.sat D, A.h10, B, C",
    "vset2.u32.s32.lt D.h1, A.h13, B.h20, C",
    "vset2.s32.s32.ne.add D.h10, A.h01, B.h23, C",
    "vadd4.u32.u32.u32 D.b20, A.b7654, B.b0123, C",
    "vabsdiff4.s32.s32.s32.add D.b31, A.b3210, B.b7777, C",
    "vavrg4.u32.u32.u32.sat D.b3210, A.b3210, B.b7654, C",
    "vsub4.s32.u32.s32.sat D.b321, A.b0415, B.b6273, C",
    "vsub4.u32.u32.u32 D, A.b3210, B, C",
    "vmin4.u32.s32.u32 D.b0, A.b1111, B.b5432, C",
    "vmax4.s32.s32.s32.add D.b3210, A.b7531, B.b6420, C",
    "vset4.s32.u32.ge.add D.b210, A.b4567, B.b0123, C",
    "vset4.u32.u32.eq D.b30, A.b0000, B.b4444, C",
]

KERNEL = """.visible .entry k{i}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %r<6>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
    ld.param.u64 %rd4, [pd];
    mov.u32 %r5, %tid.x;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd1, %rd5;
    add.s64 %rd7, %rd2, %rd5;
    add.s64 %rd8, %rd3, %rd5;
    add.s64 %rd9, %rd4, %rd5;
    ld.global.u32 %r1, [%rd6];
    ld.global.u32 %r2, [%rd7];
    ld.global.u32 %r3, [%rd8];
    mov.u32 %r4, %r3;
    {inst};
    st.global.u32 [%rd9], %r4;
    ret;
}}
"""
HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def _spell(case: str) -> str:
    return case.replace("D", "%r4").replace("A", "%r1").replace("B", "%r2").replace("C", "%r3")


KERNELS = HEADER + "".join(KERNEL.format(i=i, inst=_spell(c)) for i, c in enumerate(CASES))


def _reference(case: str, a: int, b: int, c: int) -> int:
    """The manual's pseudo-code for one thread."""
    opcode, *operands = case.replace(",", " ").split()
    mods = opcode.split(".")
    op, n = mods[0][:-1], int(mods[0][-1])
    w = 32 // n
    types = [m for m in mods if m in ("u32", "s32")]
    if op == "vset":
        types = ["u32", *types]
    cmp = next((m for m in mods if m in ("eq", "ne", "lt", "le", "gt", "ge")), None)
    dt, at, bt = types

    def sel(operand: str, default: list[int]) -> list[int]:
        if "." not in operand:
            return default
        digits = operand.split(".")[1][1:]
        return [int(digits[n - 1 - i]) for i in range(n)]

    def part(k: int, signed: bool) -> int:
        v = ((a if k < n else b) >> (w * (k % n))) & ((1 << w) - 1)
        return v - (1 << w) if signed and v >> (w - 1) else v

    d_op, a_op, b_op, _ = operands
    mask = [int(x) for x in d_op.split(".")[1][1:]] if "." in d_op else list(range(n))
    asel, bsel = sel(a_op, list(range(n))), sel(b_op, list(range(n, 2 * n)))
    t = {}
    for i in range(n):
        va, vb = part(asel[i], at == "s32"), part(bsel[i], bt == "s32")
        if op == "vset":
            r = int({"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb, "gt": va > vb,
                     "ge": va >= vb}[cmp])
        elif op == "vadd":
            r = va + vb
        elif op == "vsub":
            r = va - vb
        elif op == "vavrg":
            r = (va + vb + 1) >> 1 if va + vb >= 0 else (va + vb) >> 1
        elif op == "vabsdiff":
            r = abs(va - vb)
        elif op == "vmin":
            r = min(va, vb)
        else:
            r = max(va, vb)
        if "sat" in mods:
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt == "s32" else (0, (1 << w) - 1)
            r = min(max(r, lo), hi)
        t[i] = r
    if "add" in mods:
        return (c + sum(t[i] for i in mask)) & 0xFFFFFFFF
    d = 0
    for i in range(n):
        v = t[i] if i in mask else c >> (w * i)
        d |= (v & ((1 << w) - 1)) << (w * i)
    return d


def _inputs(rng: np.random.Generator, count: int) -> np.ndarray:
    edges = np.array([0, 0xFFFFFFFF, 0x80008000, 0x7FFF7FFF, 0x80808080, 0x7F7F7F7F, 0x00FF00FF, 0x12345678],
                     np.uint32)
    return np.concatenate([edges, rng.integers(0, 1 << 32, count - edges.size, dtype=np.uint64).astype(np.uint32)])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(19)
    n = 256
    a, b, c = _inputs(rng, n), rng.permutation(_inputs(rng, n)), _inputs(rng, n)[::-1].copy()
    return a, b, c


@pytest.mark.parametrize("engine", ["ir", "isa"])
@pytest.mark.parametrize("opt", [0, 3])
def test_selectors_and_masks_follow_the_manual(engine, opt, data):
    a, b, c = data
    dev = rt.Device()
    mod = rt.load_module(KERNELS, device=dev, engine=engine, opt_level=opt)
    da, db, dc = (rt.to_device(x, dev) for x in (a, b, c))
    for i, case in enumerate(CASES):
        out = rt.zeros(a.size, np.uint32, dev)
        mod.get_function(f"k{i}").launch((1, 1, 1), (a.size, 1, 1), [da, db, dc, out])
        want = np.array([_reference(case, int(x), int(y), int(z)) for x, y, z in zip(a, b, c)], np.uint32)
        got = out.copy_to_host()
        bad = np.flatnonzero(got != want)
        assert not bad.size, (case, [(hex(a[j]), hex(b[j]), hex(c[j]), hex(got[j]), hex(want[j])) for j in bad[:3]])


@pytest.mark.parametrize("inst, message", [
    ("vadd2.u32.u32.u32 %r4, %r1.h0, %r2, %r3", r"\.h0 is not a source selector of a 2-way SIMD video instruction"),
    ("vadd2.u32.u32.u32 %r4.h01, %r1, %r2, %r3", r"\.h01 is not a mask of a 2-way SIMD video instruction"),
    ("vadd4.u32.u32.u32 %r4.b02, %r1, %r2, %r3", r"\.b02 is not a mask of a 4-way SIMD video instruction"),
    ("vadd4.u32.u32.u32 %r4, %r1.h10, %r2, %r3", r"\.h10 is not a source selector of a 4-way SIMD"),
    ("vadd4.u32.u32.u32 %r4, %r1.b321, %r2, %r3", r"\.b321 is not a source selector of a 4-way SIMD"),
    ("vadd2.u32.u32.u32 %r4, %r1, %r2, %r3.h10", r"operand c takes no selector"),
    ("vadd.u32.u32.u32 %r4, %r1.h10, %r2", r"\.h10 is not a selector of a scalar video instruction"),
])
def test_selectors_ptxas_refuses_are_located_errors(inst, message):
    """Each is refused by ptxas 13 ("Incorrect video selector for operand N" / "Video selector is not allowed on
    'source C' operand"); xcc check and compile give the same located error."""
    text = HEADER + KERNEL.format(i=0, inst=inst)
    line = text.splitlines().index(f"    {inst};") + 1
    by_check = check_sources([Source(text, "bad.ptx")])
    assert by_check.errors and f"bad.ptx:{line}:" in str(by_check.errors[0])
    assert re.search(message, str(by_check.errors[0]))
    with pytest.raises(XccError, match=message) as e:
        rt.load_module(Source(text, "bad.ptx"), engine="isa").get_function("k0")
    assert f"bad.ptx:{line}:" in str(e.value)
