"""Opaque-variable initialisers as ptxas 13.0 reads them (issue 19): integer and other-group field values in
``.samplerref`` and unified-mode ``.texref`` initialisers, independent-mode ``.texref`` initialisers and ``.surfref``
initialisers, on both engines at -O0 and -O3, against the sampling reference of tests/test_texture_more.py.

What ptxas does, measured (``-arch=sm_80``, the EIATTR_SAMPLER_INIT attribute of the cubin's .nv.info, one byte per
field: addr_mode_0, addr_mode_1, addr_mode_2, filter_mode; 0xFF where unset), recorded in :data:`PTXAS_SAMPLER_INIT`
and re-measured by :func:`test_ptxas_stores_what_the_table_says` when ptxas is on PATH:

* a keyword is stored as its position in its own group: wrap 0, mirror 1, clamp_ogl 2, clamp_to_edge 3,
  clamp_to_border 4; nearest 0, linear 1 - in any field, so ``addr_mode_0 = linear`` stores mirror's 1;
* an integer N of 1-7 is the N-th keyword of (wrap, mirror, clamp_ogl, clamp_to_edge, clamp_to_border, nearest,
  linear) and is stored as that keyword; 0, negative integers and 8 up store 0xFF, as a field not named does, and
  a later such value unsets an earlier one;
* an independent-mode ``.texref``'s and a ``.surfref``'s fields leave no trace: the cubin is byte-identical with
  and without them (ptxas says of a ``.texref``'s filter_mode/addr_mode_N: "ignored in .texref variables in
  independent texture mode").

xcc reads each field as the keyword ptxas stores (its address-mode numbers: docs/semantics.md); a filter_mode that
stores 2-4 (``= 3`` .. ``5``, ``= clamp_ogl`` ..) names no filter and is refused."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_texture_more import (  # noqa: E402
    BORDER,
    CLAMP,
    CLAMP_OGL,
    DEST,
    ENGINES,
    IMG2,
    KERNEL,
    MIRROR,
    N_THREADS,
    SAMPLER_QUERY,
    WRAP,
    _refusals,
    cuda,
    fbits,
    inputs,
    make_texture,
    ok,
    reference,
    run,
    run_texref,
    run_with_variable,
)

from xcc import runtime as rt  # noqa: E402

# (initialiser fields, the four bytes ptxas 13.0 stores): measured with the sampler module of
# test_ptxas_stores_what_the_table_says.
PTXAS_SAMPLER_INIT = [
    ("addr_mode_0 = 0", "ffffffff"), ("addr_mode_0 = 1", "00ffffff"), ("addr_mode_0 = 2", "01ffffff"),
    ("addr_mode_0 = 3", "02ffffff"), ("addr_mode_0 = 4", "03ffffff"), ("addr_mode_0 = 5", "04ffffff"),
    ("addr_mode_0 = 6", "00ffffff"), ("addr_mode_0 = 7", "01ffffff"), ("addr_mode_0 = 8", "ffffffff"),
    ("addr_mode_0 = -1", "ffffffff"), ("addr_mode_0 = 256", "ffffffff"),
    ("addr_mode_0 = wrap", "00ffffff"), ("addr_mode_0 = mirror", "01ffffff"), ("addr_mode_0 = clamp_ogl", "02ffffff"),
    ("addr_mode_0 = clamp_to_edge", "03ffffff"), ("addr_mode_0 = clamp_to_border", "04ffffff"),
    ("addr_mode_0 = linear", "01ffffff"), ("addr_mode_1 = wrap", "ff00ffff"), ("addr_mode_2 = 3", "ffff02ff"),
    ("filter_mode = 0", "ffffffff"), ("filter_mode = 1", "ffffff00"), ("filter_mode = 2", "ffffff01"),
    ("filter_mode = 6", "ffffff00"), ("filter_mode = 7", "ffffff01"), ("filter_mode = 9", "ffffffff"),
    ("filter_mode = nearest", "ffffff00"), ("filter_mode = linear", "ffffff01"), ("filter_mode = wrap", "ffffff00"),
    ("addr_mode_0 = wrap, addr_mode_0 = 0", "ffffffff"), ("filter_mode = linear, filter_mode = 99", "ffffffff"),
    ("addr_mode_0 = wrap, addr_mode_0 = mirror", "01ffffff"),
]
ADDR_CODES = {0: WRAP, 1: MIRROR, 2: CLAMP_OGL, 3: CLAMP, 4: BORDER}  # ptxas's stored code -> CUDA's numbering
SAMPLER_MODULE = """.version 8.0
.target sm_80, texmode_independent
.address_size 64
.global .texref gt;
.global .samplerref smp = {{ {fields} }};
.entry k(.param .u64 o)
{{
    .reg .s32 %r<5>;
    .reg .f32 %f<2>;
    .reg .u64 %rd<2>;
    ld.param.u64 %rd1, [o];
    mov.f32 %f1, 0f3F000000;
    tex.2d.v4.s32.f32 {{%r1, %r2, %r3, %r4}}, [gt, smp, {{%f1, %f1}}];
    st.global.u32 [%rd1], %r1;
    ret;
}}
"""


def expected(stored: str) -> tuple[tuple[int, int, int], bool]:
    """The address modes (CUDA's numbers, unset: clamp) and filter a stored EIATTR_SAMPLER_INIT value means."""
    b = bytes.fromhex(stored)
    return tuple(ADDR_CODES.get(x, CLAMP) for x in b[:3]), b[3] == 1


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas on PATH to re-measure")
@pytest.mark.parametrize("fields, stored", PTXAS_SAMPLER_INIT[::3])
def test_ptxas_stores_what_the_table_says(fields, stored):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.ptx"
        p.write_text(SAMPLER_MODULE.format(fields=fields))
        subprocess.run(["ptxas", "-arch=sm_80", str(p), "-o", str(Path(d) / "s.cubin")], check=True,
                       capture_output=True)
        dump = subprocess.run(["readelf", "-x", ".nv.info", str(Path(d) / "s.cubin")], capture_output=True,
                              text=True, check=True).stdout
    words = "".join(re.findall(r"^\s+0x[0-9a-f]+ ((?:[0-9a-f]{8} ?)+)", dump, re.M)).replace(" ", "")
    at = words.index("04090800")  # EIATTR_SAMPLER_INIT (0x09), format 4, 8 bytes: the sampler's index, the fields
    assert words[at + 16:at + 24] == stored


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("fields, stored", PTXAS_SAMPLER_INIT)
def test_txq_answers_the_fields_ptxas_stores(device, engine, opt, fields, stored):
    """txq of an initialised ``.samplerref`` answers each field as the keyword ptxas stores."""
    out = ok(cuda.cuMemAlloc(20))
    f = rt.load_module(SAMPLER_QUERY.format(init=f"{{ {fields} }}"), device=device, engine=engine, opt_level=opt)
    f.get_function("k").launch((1, 1, 1), (1, 1, 1), [np.uint64(int(out))])
    got = np.zeros(5, np.uint32)
    ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
    ok(cuda.cuMemFree(out))
    modes, linear = expected(stored)
    assert list(got) == [*modes, int(linear), 0]


# (initialiser, address modes of x and y, linear): sampled through, against the reference
INT_SAMPLERS = [
    ("{ addr_mode_0 = 5, addr_mode_1 = 1, filter_mode = 7 }", (BORDER, WRAP), True),
    ("{ addr_mode_0 = 2, addr_mode_1 = 7, filter_mode = 2 }", (MIRROR, MIRROR), True),
    ("{ addr_mode_0 = linear, filter_mode = mirror }", (MIRROR, CLAMP), True),
    ("{ addr_mode_0 = wrap, addr_mode_0 = 0, filter_mode = linear, filter_mode = -1 }", (CLAMP, CLAMP), False),
    ("{ addr_mode_1 = 6, addr_mode_0 = 9, filter_mode = 6 }", (CLAMP, WRAP), False),
    ("{ addr_mode_0 = 4, addr_mode_1 = 3, filter_mode = 1 }", (CLAMP, CLAMP_OGL), False),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("sampler, modes, linear", INT_SAMPLERS, ids=range(len(INT_SAMPLERS)))
def test_integer_sampler_fields_sample_as_their_keywords(device, engine, opt, sampler, modes, linear):
    tex, arr = make_texture(IMG2, 2, mode=CLAMP, linear=False, normalized=True, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 / 6)
    got = run(device, f"tex.2d.v4.s32.f32 {DEST}, [gt, smp, {{%f1, %f2}}];", tex, rows, engine, opt, sampler=sampler)
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], modes, linear, True, -2.5)
        assert list(got[t]) == want, (t, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


# Unified mode: a field an integer unsets keeps the bound object's own (as one not named).
INT_TEXREFS = [  # (initialiser, {axis: address mode it names}, filter it names: linear / None: the object's)
    ("{ addr_mode_0 = 3, filter_mode = 7 }", {0: CLAMP_OGL}, True),
    ("{ addr_mode_1 = 5, addr_mode_1 = 0, filter_mode = 1 }", {}, False),
    ("{ filter_mode = 2, addr_mode_0 = linear, addr_mode_1 = 12 }", {0: MIRROR}, True),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("init, named, named_linear", INT_TEXREFS, ids=range(len(INT_TEXREFS)))
def test_integer_texref_fields_sample_as_their_keywords(device, engine, opt, init, named, named_linear):
    tex, arr = make_texture(IMG2, 2, mode=BORDER, linear=True, normalized=False, border=-2.5)
    modes = tuple(named.get(k, BORDER) for k in range(2))
    linear = True if named_linear is None else named_linear
    rows = inputs(N_THREADS, 2, 1.0)
    got = run_texref(device, f"tex.2d.v4.s32.f32 {DEST}, [gt, {{%f1, %f2}}];", tex, rows, engine, opt, init)
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], modes, linear, False, -2.5)
        assert list(got[t]) == want, (t, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


# Independent mode: a .texref's initialiser declares; the sampler operand and the bound object decide.
DECLARING = ("{ width = 99, height = -7, depth = linear, channel_data_type = 5, channel_order = 3, "
             "normalized_coords = 1, filter_mode = linear, addr_mode_0 = wrap, addr_mode_1 = 2 }")


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("normalized", [False, True], ids=["unnormalized-object", "normalized-object"])
def test_independent_mode_texref_initialisers_declare_only(device, engine, opt, normalized):
    tex, arr = make_texture(IMG2, 2, mode=WRAP, linear=True, normalized=normalized, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 / 6 if normalized else 1.0)
    sampler = "{ addr_mode_0 = clamp_to_border, addr_mode_1 = mirror, filter_mode = nearest }"
    inst = (f"tex.2d.v4.s32.f32 {DEST}, [gt, smp, {{%f1, %f2}}];\n    txq.width.b32 %r14, [gt];\n"
            "    txq.height.b32 %r15, [gt];\n    add.s32 %r13, %r14, %r15;")
    got = _run_declared(device, inst, tex, rows, engine, opt, sampler)
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], (BORDER, MIRROR), False, normalized, -2.5)
        assert list(got[t][:3]) == want[:3], (t, got[t], want)
        assert got[t][3] == IMG2.shape[1] + IMG2.shape[0]  # txq: the object's width + height
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


def _run_declared(device, inst, tex, rows, engine, opt, sampler):
    """As :func:`test_texture_more.run` with a sampler, gt declared by :data:`DECLARING`."""
    ptx = KERNEL.format(inst=inst).replace(
        ".target sm_80\n", f".target sm_80, texmode_independent\n.global .texref gt = {DECLARING};\n"
        f".global .samplerref smp = {sampler};\n")
    return run_with_variable(device, ptx, tex, rows, engine, opt, "gt")


# A .surfref's initialiser (either mode) declares: suld reads the bound surface, suq answers its geometry.
SURFACE = "{ width = 99, height = 7, depth = 2, channel_data_type = linear, channel_order = -4 }"


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("target", ["sm_80", "sm_80, texmode_independent"])
def test_surfref_initialisers_declare_only(device, engine, opt, target):
    h, w = 4, 6
    data = (np.arange(h * w, dtype=np.int32).reshape(h, w) * 7 - 20)
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth = w, h, 0
    d.Format, d.NumChannels = cuda.CUarray_format.CU_AD_FORMAT_SIGNED_INT32, 1
    d.Flags = cuda.CUDA_ARRAY3D_SURFACE_LDST
    arr = ok(cuda.cuArray3DCreate(d))
    ok(cuda.cuMemcpyHtoA(arr, 0, data, data.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
    r.res.array.hArray = arr
    surf = ok(cuda.cuSurfObjectCreate(r))
    inst = ("mul.lo.s32 %r14, %r2, 4;\n    suld.b.2d.b32.zero {%r10}, [gs, {%r14, %r3}];\n"
            "    suq.width.b32 %r11, [gs];\n    suq.height.b32 %r12, [gs];\n    mov.u32 %r13, 0;")
    ptx = KERNEL.format(inst=inst).replace(".target sm_80\n", f".target {target}\n.global .surfref gs = {SURFACE};\n")
    rows = np.array([[x, y] for y in range(-1, h + 1) for x in range(-1, w + 1)], np.int32).view(np.uint32)
    got = run_with_variable(device, ptx, surf, rows, engine, opt, "gs")
    for t, (x, y) in enumerate(rows.view(np.int32)):
        inside = 0 <= x < w and 0 <= y < h
        assert list(got[t]) == [np.uint32(data[y, x]) if inside else 0, w, h, 0], (x, y, got[t])
    ok(cuda.cuSurfObjectDestroy(surf))
    ok(cuda.cuArrayDestroy(arr))


def _module(decls: str, inst: str = "tex.2d.v4.s32.f32 " + DEST + ", [gt, smp, {%f1, %f2}];",
            target: str = "sm_80, texmode_independent") -> str:
    return KERNEL.format(inst=inst).replace(".target sm_80\n", f".target {target}\n{decls}\n")


GT, SMP = ".global .texref gt;", ".global .samplerref smp = { filter_mode = linear };"


@pytest.mark.parametrize("text, why", [  # ptxas 13.0 -arch=sm_80 refuses each but the last three
    (_module(f"{GT}\n.global .samplerref smp = {{ addr_mode_1 = sideways }};"),
     "addr_mode_1 = sideways: unknown value 'sideways'"),
    (_module(f".global .texref gt = {{ width = sideways }};\n{SMP}"), "width = sideways: unknown value 'sideways'"),
    (_module(f".global .texref gt = {{ force_unnormalized_coords = 1 }};\n{SMP}"),
     "unknown .texref field 'force_unnormalized_coords'"),
    (_module(f"{GT}\n{SMP}\n.global .surfref gs = {{ filter_mode = linear }};"),
     "unknown .surfref field 'filter_mode'"),
    (_module(f"{GT}\n{SMP}\n.global .surfref gs = {{ normalized_coords = 1 }};"),
     "unknown .surfref field 'normalized_coords'"),
    (_module(f"{GT}\n{SMP}\n.global .surfref gs = {{ depth = CL_RGBA }};"), "depth = CL_RGBA: unknown value"),
    (_module(f"{GT}\n.global .samplerref smp = {{ width = 4 }};"), "unknown .samplerref field 'width'"),
    (_module(f"{GT}\n.global .samplerref smp = {{ filter_mode = 3 }};"),
     "filter_mode = 3 names no filter (ptxas stores filter mode 2 for it"),
    (_module(f"{GT}\n.global .samplerref smp = {{ filter_mode = clamp_to_border }};"),
     "filter_mode = clamp_to_border names no filter (ptxas stores filter mode 4"),
    (_module(".global .texref gt = { filter_mode = 5 };", "tex.2d.v4.s32.f32 " + DEST + ", [gt, {%f1, %f2}];",
             "sm_80"), "filter_mode = 5 names no filter"),
])
def test_bad_opaque_initialisers_are_located_errors_in_check_and_compile(device, text, why):
    by_check, by_compile = _refusals(text)
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)
