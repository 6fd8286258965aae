"""The texture forms beyond tests/test_texture.py (issue 19): ``tex``/``tld4`` with texel offsets (the manual's
operand ``e``) and with a depth compare (operand ``f``), on both engines at -O0 and -O3, each against a reference
written out here from the PTX ISA's ``tex`` section and docs/semantics.md's rules (never xcc.semantics):

* texel offsets: ``.s32`` values "applied to coordinates before doing texture lookup", range -8..+7; xcc adds each to
  the unnormalized coordinate (``u = x * N`` for normalized ones) in f32 (an integer coordinate exactly) and keeps
  an offset's low 4 bits, signed (so 9 reads as -7);
* depth compare: "each element fetched from texture is compared against [f]. If comparison passes, result is 1.0;
  otherwise result is 0.0. These per-element comparison results are used for the filtering"; no CUDA API sets the
  compare function, so xcc's rule is OpenGL's default LEQUAL (``f <= texel.x``), the result reading (r, 0, 0, 1).

Filtering as the CUDA Programming Guide's "Texture Fetching" appendix: nearest texel ``floor(u)``; linear: texels
``floor(u - 0.5)`` and the next, weight ``frac(u - 0.5)`` in 9-bit fixed point (8 fraction bits, rounded to
nearest), weighted sum rounded once to f32.  tld4: the four bilinear texels (i0, j1), (i1, j1), (i1, j0), (i0, j0).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.check import check_sources
from xcc.diagnostics import XccError
from xcc.runtime import driver as cuda
from xcc.sources import Source

ENGINES = [(e, o) for e in ("ir", "isa") for o in (0, 3)]
F = cuda.CUarray_format
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
CLAMP_OGL = 4  # PTX's clamp_ogl (OpenGL's GL_CLAMP): no CUaddress_mode; xcc's number 4 (docs/semantics.md)
N_THREADS = 64


def ok(res):
    err, *vals = res
    assert err == 0, cuda.last_error_message()
    return vals[0] if len(vals) == 1 else vals


def make_texture(data: np.ndarray, dims: int, layered: bool = False, mode=CLAMP, linear=False, normalized=False,
                 border=0.0, cube: bool = False):
    """A one-channel f32 texture object of ``data`` (shape [layers,] [depth,] [height,] width)."""
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width = data.shape[-1]
    d.Height = data.shape[-2] if dims >= 2 else 0
    d.Depth = data.shape[0] if (dims == 3 or layered or cube) else 0
    d.Format, d.NumChannels = F.CU_AD_FORMAT_FLOAT, 1
    d.Flags = (cuda.CUDA_ARRAY3D_LAYERED if layered else 0) | (cuda.CUDA_ARRAY3D_CUBEMAP if cube else 0)
    arr = ok(cuda.cuArray3DCreate(d))
    data = np.ascontiguousarray(data, np.float32)
    ok(cuda.cuMemcpyHtoA(arr, 0, data, data.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
    r.res.array.hArray = arr
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode = [mode, mode, mode]
    t.filterMode = int(linear)
    t.flags = cuda.CU_TRSF_NORMALIZED_COORDINATES if normalized else 0
    t.borderColor = [border] * 4
    return ok(cuda.cuTexObjectCreate(r, t, None)), arr


# Each thread reads sixteen 32-bit words: coordinate words c0, c1, c2, c3 (f32 bits, or .s32 / the .u32 layer),
# offsets o0, o1, o2 (.s32), the depth compare value (f32), then eight more (%f14 .. %f21: tex.grad's gradients),
# and stores its four result words.
KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 tex, .param .u64 inp, .param .u64 outp)
{{
    .reg .b32 %r<24>;
    .reg .f32 %f<24>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [inp];
    ld.param.u64 %rd3, [outp];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 64;
    add.u64 %rd4, %rd2, %rd4;
    ld.global.v4.b32 {{%r2, %r3, %r4, %r5}}, [%rd4];
    ld.global.v4.b32 {{%r6, %r7, %r8, %r9}}, [%rd4+16];
    ld.global.v4.f32 {{%f14, %f15, %f16, %f17}}, [%rd4+32];
    ld.global.v4.f32 {{%f18, %f19, %f20, %f21}}, [%rd4+48];
    mov.b32 %f1, %r2;
    mov.b32 %f2, %r3;
    mov.b32 %f3, %r4;
    mov.b32 %f4, %r5;
    mov.b32 %f9, %r9;
    {inst}
    mul.wide.u32 %rd5, %r1, 16;
    add.u64 %rd5, %rd3, %rd5;
    st.global.v4.b32 [%rd5], {{%r10, %r11, %r12, %r13}};
    ret;
}}
"""
DEST = "{%r10, %r11, %r12, %r13}"


def _upload(words) -> tuple[int, int, int]:
    """(threads, device copy of ``words``: one row of 16 32-bit words per thread, zero-padded, and a 16-byte
    result slot per thread)."""
    n = len(words)
    words = np.pad(np.asarray(words, np.uint32), ((0, 0), (0, 16 - words.shape[1])))
    buf = ok(cuda.cuMemAlloc(words.nbytes))
    ok(cuda.cuMemcpyHtoD(buf, np.ascontiguousarray(words, np.uint32), words.nbytes))
    return n, buf, ok(cuda.cuMemAlloc(n * 16))


def run(device, inst: str, tex, words: np.ndarray, engine: str, opt: int, sampler: str | None = None) -> np.ndarray:
    """The four result words of each thread (rows of ``words``: its input words, up to sixteen); ``sampler``: a
    texmode_independent module with ``.global .texref gt`` (holding ``tex``) and ``.global .samplerref smp =
    {sampler}``."""
    ptx = KERNEL.format(inst=inst)
    if sampler is not None:
        ptx = ptx.replace(".target sm_80\n", ".target sm_80, texmode_independent\n.global .texref gt;\n"
                          f".global .samplerref smp = {sampler};\n")
    n, buf, out = _upload(words)
    mod = rt.load_module(ptx, device=device, engine=engine, opt_level=opt)
    f = mod.get_function("k")
    if sampler is not None:
        mod.get_global("gt", np.uint64).copy_from_host(np.array([int(tex)], np.uint64))
    f.launch((1, 1, 1), (n, 1, 1), [np.uint64(int(tex)), np.uint64(int(buf)), np.uint64(int(out))])
    got = np.zeros((n, 4), np.uint32)
    ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
    ok(cuda.cuMemFree(buf))
    ok(cuda.cuMemFree(out))
    return got


# ----------------------------------------------------------------------------------------- the reference
def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def fbits(w: int) -> float:
    return struct.unpack("<f", struct.pack("<I", int(w) & 0xFFFFFFFF))[0]


def offset4(o: int) -> int:
    """A texel offset as the 4-bit signed field keeps it (the manual's range -8..+7)."""
    return ((o & 0xF) ^ 8) - 8


def address(i: int, n: int, mode: int, normalized: bool):
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == WRAP:
        return i % n
    if mode == MIRROR:  # i mod 2N, reflected
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if mode == BORDER:
        return i if 0 <= i < n else None
    return min(max(i, 0), n - 1)


def axis_taps(x, n: int, mode: int, linear: bool, normalized: bool, off: int, integer: bool = False):
    """[(texel index or None, weight of 256)] of one axis."""
    if integer:
        return [(address(int(x) + off, n, mode, normalized), 256)]
    u = f32(x * n) if normalized else x
    u = f32(u + off)
    if mode == CLAMP_OGL:  # GL_CLAMP: u clamped to [0, N] texels; a linear tap outside takes the border colour,
        u = min(max(u, 0.0), float(n))  # nearest-point sampling reads as clamp_to_edge
        mode = BORDER if linear else CLAMP
    if not linear:
        return [(address(math.floor(u), n, mode, normalized), 256)]
    ub = f32(u - 0.5)
    i0 = math.floor(ub)
    a = math.floor((ub - i0) * 256 + 0.5)
    return [(address(i0, n, mode, normalized), 256 - a), (address(i0 + 1, n, mode, normalized), a)]


def reference(img: np.ndarray, coords, mode=CLAMP, linear=False, normalized=False, border=0.0, offs=(0, 0, 0),
              dc=None, integer=False) -> list[int]:
    """tex of a one-channel f32 image (shape [depth,] [height,] width) at ``coords``: the four result words."""
    dims = img.ndim
    sizes = list(img.shape[::-1])
    modes = mode if isinstance(mode, tuple) else (mode,) * 3
    taps = [axis_taps(coords[k], sizes[k], modes[k], linear, normalized, offset4(offs[k]), integer)
            for k in range(dims)]

    def value(idx):
        """The texel (x, 0, 0, 1) or the border colour (b, b, b, b); compared: (x <= f, 0, 0, 1)."""
        outside = any(i is None for i in idx)
        v = [border] * 4 if outside else [float(img[tuple(idx[::-1])]), 0.0, 0.0, 1.0]
        return v if dc is None else [1.0 if dc <= v[0] else 0.0, 0.0, 0.0, 1.0]

    combos = [[]]
    for axis in taps:
        combos = [c + [t] for c in combos for t in axis]
    if all(len(t) == 1 for t in taps):
        return [bits(x) for x in value([t[0][0] for t in taps])]
    acc = [0.0] * 4
    for combo in combos:
        w = 1
        for _, wk in combo:
            w *= wk
        v = value([i for i, _ in combo])
        acc = [a + w * x for a, x in zip(acc, v)]
    return [bits(f32(a / 256.0 ** dims)) for a in acc]


def reference_gather(img: np.ndarray, coords, mode=CLAMP, normalized=False, border=0.0, offs=(0, 0), dc=None):
    """tld4.r of a one-channel f32 2D image: the four bilinear texels (i0, j1), (i1, j1), (i1, j0), (i0, j0)."""
    h, w = img.shape
    modes = mode if isinstance(mode, tuple) else (mode,) * 2
    (i0, _), (i1, _) = axis_taps(coords[0], w, modes[0], True, normalized, offset4(offs[0]))
    (j0, _), (j1, _) = axis_taps(coords[1], h, modes[1], True, normalized, offset4(offs[1]))

    def value(i, j):
        v = border if i is None or j is None else float(img[j, i])
        return v if dc is None else (1.0 if dc <= v else 0.0)

    return [bits(value(i0, j1)), bits(value(i1, j1)), bits(value(i1, j0)), bits(value(i0, j0))]


# ----------------------------------------------------------------------------------------- the inputs
RNG = np.random.default_rng(19)
W, H, D, L = 7, 5, 3, 3
IMG2 = (RNG.integers(-40, 40, (H, W)) * 0.25).astype(np.float32)
IMG1 = (RNG.integers(-40, 40, (W,)) * 0.5).astype(np.float32)
IMG3 = (RNG.integers(-40, 40, (D, H, W)) * 0.125).astype(np.float32)
IMGL = (RNG.integers(-40, 40, (L, H, W)) * 0.375).astype(np.float32)


def inputs(n: int, ncoords: int, scale: float, integer: bool = False, layers: int = 0):
    """Rows of eight words: coordinates (a layer first when ``layers``), offsets in -10..10 (some outside
    -8..+7), a depth compare value."""
    rows = np.zeros((n, 8), np.uint32)
    for t in range(n):
        cs = []
        if layers:
            cs.append(int(RNG.integers(-1, layers + 1)) & 0xFFFFFFFF)
        for _ in range(ncoords):
            if integer:
                cs.append(int(RNG.integers(-3, 10)) & 0xFFFFFFFF)
            else:
                cs.append(bits(f32(float(RNG.integers(-64, 10 * 64)) / 64 * scale)))
        rows[t, :len(cs)] = cs
        rows[t, 4:7] = [int(RNG.integers(-10, 11)) & 0xFFFFFFFF for _ in range(3)]
        rows[t, 7] = bits(f32(float(RNG.integers(-40, 40)) * 0.25))
    return rows


def s32(w) -> int:
    w = int(w)
    return w - (1 << 32) if w >> 31 else w


# ----------------------------------------------------------------------------------------- texel offsets
OFFSET_CASES = [
    # (name, instruction, image, dims, layered, integer coordinates)
    ("1d", "tex.1d.v4.s32.f32 " + DEST + ", [%rd1, {%f1}], {%r6};", "1", False, False),
    ("1d.s32", "tex.1d.v4.s32.s32 " + DEST + ", [%rd1, {%r2}], {%r6};", "1", False, True),
    ("2d", "tex.2d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2}], {%r6, %r7};", "2", False, False),
    ("2d.s32", "tex.2d.v4.s32.s32 " + DEST + ", [%rd1, {%r2, %r3}], {%r6, %r7};", "2", False, True),
    ("3d", "tex.3d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2, %f3, %f4}], {%r6, %r7, %r8, %r8};", "3", False,
     False),
    ("a2d", "tex.a2d.v4.s32.f32 " + DEST + ", [%rd1, {%r2, %f2, %f3, %f4}], {%r6, %r7};", "L", True, False),
]
IMAGES = {"1": IMG1, "2": IMG2, "3": IMG3, "L": IMGL}


SAMPLINGS = [(CLAMP, False, False), (BORDER, True, False), (WRAP, True, True)]
# integer coordinates are never filtered nor normalized: those cases sample once
OFFSET_RUNS = [(*c, *m) for c in OFFSET_CASES for m in SAMPLINGS if not (c[4] and (m[1] or m[2]))]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("name, inst, img, layered, integer, mode, linear, normalized", OFFSET_RUNS,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(OFFSET_RUNS)])
def test_texel_offsets_match_the_reference(device, engine, opt, name, inst, img, layered, integer, mode, linear,
                                           normalized):
    data = IMAGES[img]
    dims = data.ndim - layered
    tex, arr = make_texture(data, dims, layered, mode, linear, normalized, border=-2.5)
    n = N_THREADS
    rows = inputs(n, dims, 1.0 / 6 if normalized else 1.0, integer, layers=L if layered else 0)
    got = run(device, inst, tex, rows, engine, opt)
    for t in range(n):
        r = rows[t]
        if layered:
            layer = min(max(s32(r[0]), 0), L - 1)
            img_t, cs = data[layer], [fbits(w) for w in r[1:1 + dims]]
        else:
            img_t = data
            cs = [s32(w) for w in r[:dims]] if integer else [fbits(w) for w in r[:dims]]
        offs = [s32(w) for w in r[4:7]]
        want = reference(img_t, cs, mode, linear, normalized, -2.5, offs, integer=integer)
        assert list(got[t]) == want, (t, cs, offs, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


MS_CASES = [  # (name, instruction, layered): coordinates {sample, x, y, -} / {layer, sample, x, y}
    ("2dms", "tex.2dms.v4.s32.s32 " + DEST + ", [%rd1, {%r2, %r3, %r4, %r5}], {%r6, %r7};", False),
    ("a2dms", "tex.a2dms.v4.s32.s32 " + DEST + ", [%rd1, {%r2, %r3, %r4, %r5}], {%r6, %r7};", True),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("name, inst, layered", MS_CASES, ids=[c[0] for c in MS_CASES])
@pytest.mark.parametrize("mode", [CLAMP, BORDER])
def test_texel_offsets_on_multisample_geometries(device, engine, opt, name, inst, layered, mode):
    """tex.2dms / tex.a2dms with {offsets}: sample 0 (xcc's objects hold one sample per texel) of texel
    (x + o0, y + o1), the offsets (4-bit signed, -10..10 wrapping) added to the integer coordinates before the
    address mode, the layer clamped and not offset."""
    data = IMGL if layered else IMG2
    tex, arr = make_texture(data, 2, layered, mode, border=-2.5)
    n = N_THREADS
    base = inputs(n, 2, 1.0, True, layers=L if layered else 0)
    rows = np.zeros_like(base)  # the sample index 0 in its slot: {0, x, y, -} / {layer, 0, x, y}
    if layered:
        rows[:, 0], rows[:, 2:4] = base[:, 0], base[:, 1:3]
    else:
        rows[:, 1:3] = base[:, 0:2]
    rows[:, 4:8] = base[:, 4:8]
    got = run(device, inst, tex, rows, engine, opt)
    for t in range(n):
        r = rows[t]
        img_t = data[min(max(s32(r[0]), 0), L - 1)] if layered else data
        xy = [s32(w) for w in (r[2:4] if layered else r[1:3])]
        want = reference(img_t, xy, mode, False, False, -2.5, [s32(w) for w in r[4:7]], integer=True)
        assert list(got[t]) == want, (name, t, list(r), list(got[t]), want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dc", [False, True])
def test_tld4_with_offsets_and_depth_compare(device, engine, opt, dc):
    tex, arr = make_texture(IMG2, 2, mode=BORDER, border=1.5)
    rows = inputs(N_THREADS, 2, 1.0)
    inst = f"tld4.r.2d.v4.s32.f32 {DEST}, [%rd1, {{%f1, %f2}}], {{%r6, %r7}}{', %f9' if dc else ''};"
    got = run(device, inst, tex, rows, engine, opt)
    for t, r in enumerate(rows):
        want = reference_gather(IMG2, [fbits(r[0]), fbits(r[1])], BORDER, False, 1.5, [s32(r[4]), s32(r[5])],
                                fbits(r[7]) if dc else None)
        assert list(got[t]) == want, (t, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_immediate_offsets_fold_and_wrap_to_four_bits(device, engine, opt):
    """{9, -20}: 9 reads as -7, -20 as -4 (the low 4 bits, signed)."""
    tex, arr = make_texture(IMG2, 2)
    rows = inputs(16, 2, 1.0)
    got = run(device, f"tex.2d.v4.s32.f32 {DEST}, [%rd1, {{%f1, %f2}}], {{9, -20}};", tex, rows, engine, opt)
    for t, r in enumerate(rows):
        assert list(got[t]) == reference(IMG2, [fbits(r[0]), fbits(r[1])], offs=(-7, -4, 0))
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


# ----------------------------------------------------------------------------------------- depth compare
DC_CASES = [
    ("1d", "tex.1d.v4.s32.f32 " + DEST + ", [%rd1, {%f1}], %f9;", "1", False, False),
    ("2d", "tex.2d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2}], %f9;", "2", False, False),
    ("2d+offsets", "tex.2d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2}], {%r6, %r7}, %f9;", "2", False, True),
    ("a2d", "tex.a2d.v4.s32.f32 " + DEST + ", [%rd1, {%r2, %f2, %f3, %f4}], %f9;", "L", True, False),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("name, inst, img, layered, offsets", DC_CASES, ids=[c[0] for c in DC_CASES])
@pytest.mark.parametrize("mode, linear, normalized", [(CLAMP, False, False), (BORDER, True, False),
                                                      (WRAP, True, True)])
def test_depth_compare_matches_the_reference(device, engine, opt, name, inst, img, layered, offsets, mode, linear,
                                             normalized):
    data = IMAGES[img]
    dims = data.ndim - layered
    tex, arr = make_texture(data, dims, layered, mode, linear, normalized, border=0.75)
    rows = inputs(N_THREADS, dims, 1.0 / 6 if normalized else 1.0, layers=L if layered else 0)
    rows[::7, 7] = bits(math.nan)  # NaN never compares: 0.0
    got = run(device, inst, tex, rows, engine, opt)
    for t, r in enumerate(rows):
        if layered:
            img_t, cs = data[min(max(s32(r[0]), 0), L - 1)], [fbits(w) for w in r[1:1 + dims]]
        else:
            img_t, cs = data, [fbits(w) for w in r[:dims]]
        offs = [s32(w) for w in r[4:7]] if offsets else (0, 0, 0)
        want = reference(img_t, cs, mode, linear, normalized, 0.75, offs, dc=fbits(r[7]))
        assert list(got[t]) == want, (t, cs, fbits(r[7]), got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


def test_depth_compare_filters_the_comparisons_not_the_texels(device):
    """Halfway between texels 1.0 and 3.0 compared against 2.0: one passes, one fails, so 0.5 (filtering the
    texels first would give 2.0, which passes: 1.0)."""
    img = np.array([1.0, 3.0], np.float32)
    tex, arr = make_texture(img, 1, linear=True)
    rows = np.zeros((1, 8), np.uint32)
    rows[0, 0], rows[0, 7] = bits(1.0), bits(2.0)
    for engine in ("ir", "isa"):
        got = run(device, "tex.1d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd1, {%f1}], %f9;\n"
                          "mov.b32 %r10, %f10; mov.b32 %r11, %f11; mov.b32 %r12, %f12; mov.b32 %r13, %f13;",
                  tex, rows, engine, 0)
        assert [fbits(w) for w in got[0]] == [0.5, 0.0, 0.0, 1.0]
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


def _mipmapped_object(mm):
    """A texture object over the mipmapped array ``mm``: clamped, normalized coordinates, every level."""
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
    r.res.mipmap.hMipmappedArray = mm
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode, t.flags, t.maxMipmapLevelClamp = [CLAMP] * 3, cuda.CU_TRSF_NORMALIZED_COORDINATES, 10.0
    return ok(cuda.cuTexObjectCreate(r, t, None))


def mipmapped_2d(levels: int = 4, w: int = 16, h: int = 8):
    """A point-filtered, point-mip-filtered mipmapped 16 x 8 f32 texture (normalized coordinates, level clamps 0 ..
    10) whose level l holds 1000 l + 10 y + x, and its levels' images."""
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels = w, h, 0, F.CU_AD_FORMAT_FLOAT, 1
    mm = ok(cuda.cuMipmappedArrayCreate(d, levels))
    imgs = []
    for lv in range(levels):
        img = (1000.0 * lv + 10 * np.arange(max(h >> lv, 1))[:, None] + np.arange(max(w >> lv, 1))[None, :]
               ).astype(np.float32)
        ok(cuda.cuMemcpyHtoA(ok(cuda.cuMipmappedArrayGetLevel(mm, lv)), 0, img, img.nbytes))
        imgs.append(img)
    return _mipmapped_object(mm), mm, imgs


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("dc", [False, True])
def test_tex_level_with_offsets_reads_them_in_the_levels_texels(device, engine, opt, dc):
    """tex.level.2d ..., lod, {e} {, f}: the nearest level (lod clamped to the levels), the offsets in that
    level's texels."""
    tex, mm, imgs = mipmapped_2d()
    rows = inputs(N_THREADS, 2, 1.0 / 10)
    for t in range(N_THREADS):
        rows[t, 2] = bits(f32(float(RNG.integers(-8, 34)) / 8))  # the level of detail, -1 .. 4.1
        rows[t, 7] = bits(f32(float(RNG.integers(0, 3500))))
    inst = f"tex.level.2d.v4.s32.f32 {DEST}, [%rd1, {{%f1, %f2}}], %f3, {{%r6, %r7}}{', %f9' if dc else ''};"
    got = run(device, inst, tex, rows, engine, opt)
    for t, r in enumerate(rows):
        lam = min(max(fbits(r[2]), 0.0), len(imgs) - 1.0)
        img = imgs[math.floor(lam + 0.5)]
        want = reference(img, [fbits(r[0]), fbits(r[1])], CLAMP, False, True, 0.0, [s32(r[4]), s32(r[5]), 0],
                         fbits(r[7]) if dc else None)
        assert list(got[t]) == want, (t, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuMipmappedArrayDestroy(mm))


# ----------------------------------------------------------------------------------------- tex.grad on cubemaps
# The CUDA Programming Guide's cubemap table: per face (+x, -x, +y, -y, +z, -z) the (axis, sign) of m, s and t.
CUBE_TABLE = {0: ((0, 1), (2, -1), (1, -1)), 1: ((0, -1), (2, 1), (1, -1)), 2: ((1, 1), (0, 1), (2, 1)),
              3: ((1, -1), (0, 1), (2, -1)), 4: ((2, 1), (0, 1), (1, -1)), 5: ((2, -1), (0, -1), (1, -1))}
CN, CLEVELS = 16, 5


def cube_face_ref(p):
    """The face of direction p: the major axis (ties to x, then y), its sign."""
    ax, ay, az = (abs(c) for c in p)
    if ax >= ay and ax >= az:
        return 0 if p[0] >= 0 else 1
    if ay >= az:
        return 2 if p[1] >= 0 else 3
    return 4 if p[2] >= 0 else 5


def cube_grad_reference(levels, p, gx, gy, cube: int = 0) -> list[int]:
    """tex.grad.cube of a point-filtered, point-mip-filtered mipmapped cubemap (level clamps 0 .. 10): the level of
    detail log2 of the longer gradient on the direction's face, in level-0 texels (the derivative of the face's
    normalized coordinate (s / m + 1) / 2 by the quotient rule: (ds m - s dm) / (2 m^2), times the width), the
    nearest level, then the face's texel at ((s / m + 1) / 2, (t / m + 1) / 2) (f32)."""
    face = cube_face_ref(p)
    (am, sm), (a_s, ss), (at, st) = CUBE_TABLE[face]
    m, sc, tc = sm * p[am], ss * p[a_s], st * p[at]
    sq = []
    for g in (gx, gy):
        dm, ds, dt = sm * g[am], ss * g[a_s], st * g[at]
        du = (ds * m - sc * dm) / (2 * m * m) * CN
        dv = (dt * m - tc * dm) / (2 * m * m) * CN
        sq.append(du * du + dv * dv)
    rho = math.sqrt(max(sq))
    lod = -math.inf if rho == 0 else f32(math.log2(rho))
    lam = min(max(min(max(lod, 0.0), 10.0), 0.0), CLEVELS - 1.0)
    lv = math.floor(lam + 0.5)
    n = CN >> lv
    u = f32(f32(f32(sc / m) + 1.0) * 0.5)
    v = f32(f32(f32(tc / m) + 1.0) * 0.5)
    i = min(max(math.floor(f32(u * n)), 0), n - 1)
    j = min(max(math.floor(f32(v * n)), 0), n - 1)
    return [bits(float(levels[lv][6 * cube + face, j, i])), 0, 0, bits(1.0)]


def mipmapped_cube(cubes: int):
    """A 5-level 16 x 16 mipmapped cubemap (array of ``cubes``): level l, layer k holds 1000 l + 100 k + 10 y + x
    (x, y < 10 keep it distinct enough), and the levels' images."""
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width = d.Height = CN
    d.Depth, d.Format, d.NumChannels = 6 * cubes, F.CU_AD_FORMAT_FLOAT, 1
    d.Flags = cuda.CUDA_ARRAY3D_CUBEMAP | (cuda.CUDA_ARRAY3D_LAYERED if cubes > 1 else 0)
    mm = ok(cuda.cuMipmappedArrayCreate(d, CLEVELS))
    imgs = []
    for lv in range(CLEVELS):
        n = CN >> lv
        img = (1000.0 * lv + 100 * np.arange(6 * cubes)[:, None, None] + 10 * (np.arange(n)[None, :, None] % 10)
               + np.arange(n)[None, None, :] % 10).astype(np.float32)
        ok(cuda.cuMemcpyHtoA(ok(cuda.cuMipmappedArrayGetLevel(mm, lv)), 0, img, img.nbytes))
        imgs.append(img)
    return _mipmapped_object(mm), mm, imgs


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("geom", ["cube", "acube"])
def test_tex_grad_on_cubemaps_picks_the_level_of_the_gradients_on_the_face(device, engine, opt, geom):
    cubes = 2 if geom == "acube" else 1
    tex, mm, imgs = mipmapped_cube(cubes)
    n = N_THREADS
    rows = np.zeros((n, 16), np.uint32)
    for t in range(n):
        p = [float(RNG.integers(-64, 65)) / 64 for _ in range(3)]
        if not any(p):
            p[t % 3] = 0.5
        rows[t, 0:3] = [bits(c) for c in p]
        rows[t, 3] = int(RNG.integers(-1, cubes + 1)) & 0xFFFFFFFF
        scale = 2.0 ** int(RNG.integers(-8, 1))
        grads = [0.0] * 6 if t == 0 else [float(RNG.integers(-64, 65)) / 64 * scale for _ in range(6)]
        rows[t, 8:14] = [bits(f32(g)) for g in grads]
    coords = "{%r5, %f1, %f2, %f3}" if geom == "acube" else "{%f1, %f2, %f3, %f4}"
    inst = (f"tex.grad.{geom}.v4.s32.f32 {DEST}, [%rd1, {coords}], {{%f14, %f15, %f16, %f16}}, "
            "{%f17, %f18, %f19, %f19};")
    got = run(device, inst, tex, rows, engine, opt)
    seen = set()
    for t, r in enumerate(rows):
        p = [fbits(w) for w in r[0:3]]
        g = [fbits(w) for w in r[8:14]]
        cube = min(max(s32(r[3]), 0), cubes - 1) if geom == "acube" else 0
        want = cube_grad_reference(imgs, p, g[0:3], g[3:6], cube)
        assert list(got[t]) == want, (t, p, g, got[t], want)
        seen.add(int(fbits(want[0]) // 1000))
    assert len(seen) >= 4, seen  # the gradients reach most levels
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuMipmappedArrayDestroy(mm))


# ----------------------------------------------------------------------------------------- independent samplers
# (initialiser, address modes of x and y, linear, force unnormalized): the sampler's fields replace the texture
# object's address modes and filter; a field it does not name reads clamp_to_edge / nearest / 0; the later of two
# names wins; the texture's normalized_coords and border colour stay the object's.
SAMPLERS = [
    ("{ addr_mode_0 = clamp_to_border, addr_mode_1 = wrap, filter_mode = linear }", (BORDER, WRAP), True, False),
    ("{ addr_mode_0 = mirror, addr_mode_1 = mirror, filter_mode = nearest, force_unnormalized_coords = 1 }",
     (MIRROR, MIRROR), False, True),
    ("{ addr_mode_1 = mirror, filter_mode = linear }", (CLAMP, MIRROR), True, False),
    ("{ filter_mode = linear, filter_mode = nearest, addr_mode_0 = wrap }", (WRAP, CLAMP), False, False),
    ("{ }", (CLAMP, CLAMP), False, False),
]


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("sampler, modes, linear, force", SAMPLERS, ids=range(len(SAMPLERS)))
@pytest.mark.parametrize("op", ["tex", "tld4"])
def test_independent_mode_samplerref_initialisers(device, engine, opt, sampler, modes, linear, force, op):
    tex, arr = make_texture(IMG2, 2, mode=CLAMP, linear=False, normalized=True, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 if force else 1.0 / 6)
    inst = (f"tex.2d.v4.s32.f32 {DEST}, [gt, smp, {{%f1, %f2}}];" if op == "tex" else
            f"tld4.r.2d.v4.s32.f32 {DEST}, [gt, smp, {{%f1, %f2}}], {{%r6, %r7}};")
    got = run(device, inst, tex, rows, engine, opt, sampler=sampler)
    for t, r in enumerate(rows):
        cs = [fbits(r[0]), fbits(r[1])]
        if op == "tex":
            want = reference(IMG2, cs, modes, linear, not force, -2.5)
        else:
            want = reference_gather(IMG2, cs, modes, not force, -2.5, [s32(r[4]), s32(r[5])])
        assert list(got[t]) == want, (t, cs, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


SAMPLER_QUERY = """.version 8.0
.target sm_80, texmode_independent
.address_size 64
.global .samplerref smp = {init};
.entry k(.param .u64 outp)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<2>;
    txq.addr_mode_0.b32 %r1, [smp];
    txq.addr_mode_1.b32 %r2, [smp];
    txq.addr_mode_2.b32 %r3, [smp];
    txq.filter_mode.b32 %r4, [smp];
    txq.force_unnormalized_coords.b32 %r5, [smp];
    ld.param.u64 %rd1, [outp];
    st.global.v4.b32 [%rd1], {{%r1, %r2, %r3, %r4}};
    st.global.b32 [%rd1+16], %r5;
    ret;
}}
"""


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("sampler, modes, linear, force", SAMPLERS, ids=range(len(SAMPLERS)))
def test_txq_of_an_initialised_samplerref_answers_its_fields(device, engine, opt, sampler, modes, linear, force):
    """txq.{addr_mode_N, filter_mode, force_unnormalized_coords} of the sampler: address modes as CUDA numbers
    them (wrap 0, clamp 1, mirror 2, border 3), unnamed ones clamp."""
    out = ok(cuda.cuMemAlloc(20))
    f = rt.load_module(SAMPLER_QUERY.format(init=sampler), device=device, engine=engine, opt_level=opt)
    f.get_function("k").launch((1, 1, 1), (1, 1, 1), [np.uint64(int(out))])
    got = np.zeros(5, np.uint32)
    ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
    ok(cuda.cuMemFree(out))
    assert list(got) == [*modes, *([CLAMP] * (3 - len(modes))), int(linear), int(force)]


# ----------------------------------------------------------------------------------------- refusals
def _refusals(text: str) -> tuple[str | None, str | None]:
    """(xcc check's first error, compile's), full located messages (None: accepted)."""
    try:  # (a parse or checker error raises; later ones are collected)
        res = check_sources([Source(text, "t.ptx")])
        by_check = str(res.errors[0]) if res.errors else None
    except XccError as e:
        by_check = str(e)
    try:
        rt.load_module(Source(text, "t.ptx"), engine="isa").get_function("k")
    except XccError as e:
        return by_check, str(e)
    return by_check, None


@pytest.mark.parametrize("inst, why", [
    ("tex.cube.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2, %f3, %f4}], {%r6, %r7};", "takes no texel offsets"),
    ("tex.3d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2, %f3, %f4}], %f9;", "depth compare"),
    ("tex.2d.v4.s32.s32 " + DEST + ", [%rd1, {%r2, %r3}], %f9;", "depth compare"),
    ("tex.2d.v4.s32.f32 " + DEST + ", [%rd1, {%f1, %f2}], {%r6};", "texel offset vector of 2"),
    ("tex.2dms.v4.s32.s32 " + DEST + ", [%rd1, {%r2, %r3, %r4, %r5}], {%r6};", "texel offset vector of 2"),
])
def test_bad_forms_are_located_errors_in_check_and_compile(device, inst, why):
    by_check, by_compile = _refusals(KERNEL.format(inst=inst))
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)


def _independent(sampler_decl: str, inst: str = "tex.2d.v4.s32.f32 " + DEST + ", [gt, smp, {%f1, %f2}];",
                 target: str = "sm_80, texmode_independent") -> str:
    return KERNEL.format(inst=inst).replace(".target sm_80\n", f".target {target}\n.global .texref gt;\n"
                                            f"{sampler_decl}\n")


@pytest.mark.parametrize("text, why", [
    (_independent(".global .samplerref smp = { filter_mode = linear };", target="sm_80"),
     "an initialised .samplerref needs .target texmode_independent"),
    (_independent(".global .samplerref smp = { normalized_coords = 1 };"), "unknown .samplerref field"),
    (_independent(".global .samplerref smp = { addr_mode_1 = sideways };"), "unknown value 'sideways'"),
    (_independent(".global .samplerref smp = { filter_mode = linear };", "txq.width.b32 %r10, [smp];"),
     "a texture query needs a .texref"),
])
def test_bad_samplers_are_located_errors_in_check_and_compile(device, text, why):
    by_check, by_compile = _refusals(text)
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)


# ----------------------------------------------------------------------------------------- run-time samplers
# A sampler held in a .samplerref kernel parameter, an uninitialised module .samplerref the host writes, or a .u64
# register (mov.u64 %rd, smp): its value is xcc's ABI (docs/semantics.md): bit 63 set, address modes 2 bits each
# from bit 48, linear filtering bit 54, forced unnormalized coordinates bit 55, ORed into the texture handle; the
# fetches read as through the initialised .samplerref of the same fields.
def sampler_bits(modes, linear: bool, force: bool) -> int:
    """The sampler value written out from docs/semantics.md's layout."""
    modes = [*modes, *[CLAMP] * (3 - len(modes))]
    return 1 << 63 | (modes[0] | modes[1] << 2 | modes[2] << 4 | int(linear) << 6 | int(force) << 7) << 48


SAMPLER_FORMS = {  # how the tex names its sampler
    "initialised": "{op} [gt, smp, {c}]{tail};",
    "parameter": "{op} [gt, sp, {c}]{tail};",
    "register": "mov.u64 %rd6, sp;\n    {op} [gt, %rd6, {c}]{tail};",
    "register of an initialised": "mov.u64 %rd6, smp;\n    {op} [gt, %rd6, {c}]{tail};",
    "uninitialised variable": "{op} [gt, us, {c}]{tail};",
    "register of an uninitialised": "mov.u64 %rd7, us;\n    {op} [gt, %rd7, {c}]{tail};",
}


def run_sampled(device, inst: str, tex, words, engine: str, opt: int, init: str, value: int) -> np.ndarray:
    """As :func:`run` with ``.global .samplerref smp = {init}``, a ``.param .samplerref sp`` (passed ``value``)
    and ``.global .samplerref us`` (written ``value`` by the host)."""
    ptx = KERNEL.format(inst=inst).replace(".target sm_80\n", ".target sm_80, texmode_independent\n").replace(
        ".address_size 64\n", ".address_size 64\n.global .texref gt;\n"
        f".global .samplerref smp = {init};\n.global .samplerref us;\n").replace(
        ".param .u64 outp)", ".param .u64 outp, .param .samplerref sp)")
    n, buf, out = _upload(words)
    mod = rt.load_module(ptx, device=device, engine=engine, opt_level=opt)
    mod.get_global("gt", np.uint64).copy_from_host(np.array([int(tex)], np.uint64))
    mod.get_global("us", np.uint64).copy_from_host(np.array([value], np.uint64))
    mod.get_function("k").launch((1, 1, 1), (n, 1, 1), [np.uint64(int(tex)), np.uint64(int(buf)),
                                                        np.uint64(int(out)), np.uint64(value)])
    got = np.zeros((n, 4), np.uint32)
    ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
    ok(cuda.cuMemFree(buf))
    ok(cuda.cuMemFree(out))
    return got


def test_the_runtime_sampler_helper_builds_the_documented_value():
    for (init, modes, linear, force), kw in zip(SAMPLERS, [
            dict(addr_mode=("clamp_to_border", "wrap"), filter_mode="linear"),
            dict(addr_mode=["mirror", "mirror"], force_unnormalized_coords=True),
            dict(addr_mode=(CLAMP, MIRROR), filter_mode=1),
            dict(addr_mode=("wrap",)), dict()], strict=True):
        v = rt.sampler(**kw)
        assert isinstance(v, np.uint64) and int(v) == sampler_bits(modes, linear, force), (init, hex(int(v)))
    assert int(rt.sampler("border", "linear")) == 1 << 63 | (3 | 3 << 2 | 3 << 4 | 1 << 6) << 48
    for bad in (dict(addr_mode="sideways"), dict(filter_mode="cubic"), dict(addr_mode=(0, 0, 0, 0))):
        with pytest.raises(ValueError, match="sampler"):
            rt.sampler(**bad)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("sampler, modes, linear, force", SAMPLERS, ids=range(len(SAMPLERS)))
@pytest.mark.parametrize("form", list(SAMPLER_FORMS))
def test_run_time_samplers_read_as_the_initialised_one(device, engine, opt, sampler, modes, linear, force, form):
    tex, arr = make_texture(IMG2, 2, mode=CLAMP, linear=False, normalized=True, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 if force else 1.0 / 6)
    gather = form in ("parameter", "register")  # tld4 through them as well, in the same kernel's second half
    inst = SAMPLER_FORMS[form].format(op=f"tex.2d.v4.s32.f32 {DEST},", c="{%f1, %f2}", tail="")
    got = run_sampled(device, inst, tex, rows, engine, opt, sampler, sampler_bits(modes, linear, force))
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], modes, linear, not force, -2.5)
        assert list(got[t]) == want, (t, got[t], want)
    if gather:
        inst = SAMPLER_FORMS[form].format(op=f"tld4.r.2d.v4.s32.f32 {DEST},", c="{%f1, %f2}", tail=", {%r6, %r7}")
        got = run_sampled(device, inst, tex, rows, engine, opt, sampler, sampler_bits(modes, linear, force))
        for t, r in enumerate(rows):
            want = reference_gather(IMG2, [fbits(r[0]), fbits(r[1])], modes, not force, -2.5, [s32(r[4]), s32(r[5])])
            assert list(got[t]) == want, (t, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("name", ["sp", "us"])
def test_txq_of_a_run_time_sampler_answers_its_fields(device, engine, opt, name):
    text = SAMPLER_QUERY.format(init="{ }").replace("[smp]", f"[{name}]").replace(
        ".global .samplerref smp = { };", ".global .samplerref us;").replace(
        ".param .u64 outp)", ".param .u64 outp, .param .samplerref sp)")
    for modes, linear, force in [((BORDER, WRAP, MIRROR), True, False), ((MIRROR, CLAMP, WRAP), False, True)]:
        value = sampler_bits(modes, linear, force)
        out = ok(cuda.cuMemAlloc(20))
        mod = rt.load_module(text, device=device, engine=engine, opt_level=opt)
        mod.get_global("us", np.uint64).copy_from_host(np.array([value], np.uint64))
        mod.get_function("k").launch((1, 1, 1), (1, 1, 1), [np.uint64(int(out)), np.uint64(value)])
        got = np.zeros(5, np.uint32)
        ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
        ok(cuda.cuMemFree(out))
        assert list(got) == [*modes, int(linear), int(force)]


@pytest.mark.parametrize("text, why", [
    (_independent(".global .samplerref smp;\n.global .u64 g;",
                  "tex.2d.v4.s32.f32 " + DEST + ", [gt, g, {%f1, %f2}];"), "the sampler operand must be a .samplerref"),
    (_independent(".global .samplerref smp;", "tex.2d.v4.s32.f32 " + DEST + ", [gt, %r1, {%f1, %f2}];"),
     "must be a .samplerref or a .u64 register (got a 32-bit register)"),
    (_independent(".global .samplerref smp;", "txq.width.b32 %r10, [smp];"), "a texture query needs a .texref"),
])
def test_bad_run_time_samplers_are_located_errors_in_check_and_compile(device, text, why):
    by_check, by_compile = _refusals(text)
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)


# ----------------------------------------------------------------------------------------- clamp_ogl
# PTX's clamp_ogl address mode (OpenGL's GL_CLAMP): the coordinate clamped to [0, N] texels, then with linear
# filtering (and tld4) each tap outside [0, N - 1] the border colour; nearest-point sampling reads as
# clamp_to_edge (the reference: axis_taps).  xcc numbers it 4: in a sampler value, the low two bits in the
# axis's field (bits 48 + 2N) and the third in bit 56 + N (docs/semantics.md).
OGL_SAMPLERS = [
    ("{ addr_mode_0 = clamp_ogl, filter_mode = linear }", (CLAMP_OGL, CLAMP), True, False),
    ("{ addr_mode_0 = clamp_ogl, addr_mode_1 = clamp_ogl, filter_mode = nearest }", (CLAMP_OGL, CLAMP_OGL), False,
     False),
    ("{ addr_mode_1 = clamp_ogl, addr_mode_0 = wrap, filter_mode = linear, force_unnormalized_coords = 1 }",
     (WRAP, CLAMP_OGL), True, True),
]


def ogl_sampler_bits(modes, linear: bool, force: bool) -> int:
    """The sampler value from docs/semantics.md's layout, the modes' third bit in bits 56-58."""
    modes = [*modes, *[CLAMP] * (3 - len(modes))]
    low = sum((m & 3) << 2 * k for k, m in enumerate(modes)) | int(linear) << 6 | int(force) << 7
    return 1 << 63 | low << 48 | sum((m >> 2) << 56 + k for k, m in enumerate(modes))


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("sampler, modes, linear, force", OGL_SAMPLERS, ids=range(len(OGL_SAMPLERS)))
@pytest.mark.parametrize("op", ["tex", "tld4"])
def test_clamp_ogl_samplers_match_the_reference(device, engine, opt, sampler, modes, linear, force, op):
    """An initialised .samplerref and the same fields as a .samplerref kernel parameter's run-time value."""
    tex, arr = make_texture(IMG2, 2, mode=CLAMP, linear=False, normalized=True, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 if force else 1.0 / 6)
    c, tail = "{%f1, %f2}", "" if op == "tex" else ", {%r6, %r7}"
    opname = f"tex.2d.v4.s32.f32 {DEST}," if op == "tex" else f"tld4.r.2d.v4.s32.f32 {DEST},"
    for form in ("initialised", "parameter"):
        inst = SAMPLER_FORMS[form].format(op=opname, c=c, tail=tail)
        got = run_sampled(device, inst, tex, rows, engine, opt, sampler, ogl_sampler_bits(modes, linear, force))
        for t, r in enumerate(rows):
            cs = [fbits(r[0]), fbits(r[1])]
            if op == "tex":
                want = reference(IMG2, cs, modes, linear, not force, -2.5)
            else:
                want = reference_gather(IMG2, cs, modes, not force, -2.5, [s32(r[4]), s32(r[5])])
            assert list(got[t]) == want, (form, t, cs, got[t], want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


def test_clamp_ogl_edges_written_out():
    """The reference's clamp_ogl at the edges of a 4-texel axis, by hand: linear at u <= 0 reads half texel 0 and
    half the border colour, at u >= 4 half texel 3 and half the border; nearest clamps to the edge texels."""
    img = np.array([8.0, 4.0, 2.0, 1.0], np.float32)
    for x, lin, want in [(-3.0, True, (8.0 - 2.0) / 2), (0.0, True, 3.0), (4.0, True, (1.0 - 2.0) / 2),
                         (9.0, True, -0.5), (2.0, True, 3.0), (-3.0, False, 8.0), (4.0, False, 1.0),
                         (9.0, False, 1.0)]:
        assert fbits(reference(img, [x], CLAMP_OGL, lin, False, -2.0)[0]) == want, (x, lin)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_txq_of_clamp_ogl_samplers_answers_4(device, engine, opt):
    """An initialised .samplerref's txq (compile-time constants) and a run-time one's (its bits shifted out)."""
    for sampler, modes, linear, force in OGL_SAMPLERS:
        out = ok(cuda.cuMemAlloc(20))
        mod = rt.load_module(SAMPLER_QUERY.format(init=sampler), device=device, engine=engine, opt_level=opt)
        mod.get_function("k").launch((1, 1, 1), (1, 1, 1), [np.uint64(int(out))])
        got = np.zeros(5, np.uint32)
        ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
        assert list(got) == [*modes, CLAMP, int(linear), int(force)], sampler
        text = SAMPLER_QUERY.format(init="{ }").replace("[smp]", "[sp]").replace(
            ".param .u64 outp)", ".param .u64 outp, .param .samplerref sp)")
        value = ogl_sampler_bits(modes, linear, force)
        mod = rt.load_module(text, device=device, engine=engine, opt_level=opt)
        mod.get_function("k").launch((1, 1, 1), (1, 1, 1), [np.uint64(int(out)), np.uint64(value)])
        ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
        ok(cuda.cuMemFree(out))
        assert list(got) == [*modes, CLAMP, int(linear), int(force)], (sampler, "run time")


def test_the_runtime_sampler_helper_takes_clamp_ogl():
    assert int(rt.sampler(("clamp_ogl", "wrap"), "linear")) == ogl_sampler_bits((CLAMP_OGL, WRAP), True, False)
    assert int(rt.sampler("clamp_ogl")) == ogl_sampler_bits((CLAMP_OGL,) * 3, False, False)


# ----------------------------------------------------------------------------------------- .texref initialisers
# Unified mode: `.global .texref gt = { filter_mode = ..., addr_mode_N = ... }` sets the sampling state of the
# texture object the host binds to gt (writes its handle into it); a field the initialiser does not name keeps
# the object's own (xcc's choice, docs/semantics.md); the object's normalized_coords and border colour stay.
TEXREFS = [  # (initialiser, {axis: address mode it names}, filter it names: linear / None: the object's)
    ("{ filter_mode = linear, addr_mode_0 = clamp_ogl }", {0: CLAMP_OGL}, True),
    ("{ addr_mode_1 = clamp_to_border }", {1: BORDER}, None),
    ("{ filter_mode = nearest }", {}, False),
    ("{ addr_mode_0 = wrap, addr_mode_1 = clamp_ogl, filter_mode = linear, addr_mode_0 = mirror }",
     {0: MIRROR, 1: CLAMP_OGL}, True),
    ("{ }", {}, None),
]
OBJECTS = [(WRAP, False, True), (BORDER, True, False)]  # the bound object's (address mode, linear, normalized)


def run_texref(device, inst: str, tex, words, engine: str, opt: int, init: str, n_out: int = 4) -> np.ndarray:
    """As :func:`run` in a unified-mode module with ``.global .texref gt = {init}`` holding ``tex``."""
    ptx = KERNEL.format(inst=inst).replace(".address_size 64\n", f".address_size 64\n.global .texref gt = {init};\n")
    return run_with_variable(device, ptx, tex, words, engine, opt, "gt")


def run_with_variable(device, ptx: str, handle, words, engine: str, opt: int, var: str) -> np.ndarray:
    """Launch ``k`` of ``ptx`` (:data:`KERNEL`'s parameters, ``tex`` 0) on ``words`` with ``handle`` written into
    the module variable ``var``; each thread's four result words."""
    n, buf, out = _upload(words)
    mod = rt.load_module(ptx, device=device, engine=engine, opt_level=opt)
    mod.get_global(var, np.uint64).copy_from_host(np.array([int(handle)], np.uint64))
    mod.get_function("k").launch((1, 1, 1), (n, 1, 1), [np.uint64(0), np.uint64(int(buf)), np.uint64(int(out))])
    got = np.zeros((n, 4), np.uint32)
    ok(cuda.cuMemcpyDtoH(got, out, got.nbytes))
    ok(cuda.cuMemFree(buf))
    ok(cuda.cuMemFree(out))
    return got


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("init, named, named_linear", TEXREFS, ids=range(len(TEXREFS)))
@pytest.mark.parametrize("obj", OBJECTS, ids=["wrap-nearest-normalized", "border-linear"])
def test_texref_initialisers_set_the_bound_objects_sampling(device, engine, opt, init, named, named_linear, obj):
    mode, obj_linear, normalized = obj
    tex, arr = make_texture(IMG2, 2, mode=mode, linear=obj_linear, normalized=normalized, border=-2.5)
    modes = tuple(named.get(k, mode) for k in range(2))
    linear = obj_linear if named_linear is None else named_linear
    rows = inputs(N_THREADS, 2, 1.0 / 6 if normalized else 1.0)
    got = run_texref(device, f"tex.2d.v4.s32.f32 {DEST}, [gt, {{%f1, %f2}}];", tex, rows, engine, opt, init)
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], modes, linear, normalized, -2.5)
        assert list(got[t]) == want, (t, got[t], want)
    got = run_texref(device, f"tld4.r.2d.v4.s32.f32 {DEST}, [gt, {{%f1, %f2}}], {{%r6, %r7}};", tex, rows, engine,
                     opt, init)
    for t, r in enumerate(rows):
        want = reference_gather(IMG2, [fbits(r[0]), fbits(r[1])], modes, normalized, -2.5, [s32(r[4]), s32(r[5])])
        assert list(got[t]) == want, (t, got[t], want)
    txq = ("txq.addr_mode_0.b32 %r10, [gt];\n    txq.addr_mode_1.b32 %r11, [gt];\n    txq.filter_mode.b32 %r12, "
           "[gt];\n    txq.normalized_coords.b32 %r13, [gt];")
    got = run_texref(device, txq, tex, rows[:1], engine, opt, init)
    assert list(got[0]) == [*modes, int(linear), int(normalized)]
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_the_issue_texref_file_runs(device, engine, opt):
    """A 1D form as the issue gives it: linear + clamp_ogl at x = 0 reads half texel 0, half the border colour."""
    img = np.array([6.0, 2.0, 1.0], np.float32)
    tex, arr = make_texture(img, 1, mode=CLAMP, linear=False, normalized=False, border=-4.0)
    rows = np.array([[bits(x)] for x in (0.0, -5.0, 1.25, 3.0, 7.5)], np.uint32)
    got = run_texref(device, "tex.1d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [gt, {%f1}];\n    mov.b32 %r10, "
                     "%f10;\n    mov.b32 %r11, %f11;\n    mov.b32 %r12, %f12;\n    mov.b32 %r13, %f13;", tex, rows,
                     engine, opt, "{ filter_mode = linear, addr_mode_0 = clamp_ogl }")
    for t, x in enumerate((0.0, -5.0, 1.25, 3.0, 7.5)):
        assert list(got[t]) == reference(img, [x], CLAMP_OGL, True, False, -4.0), (x, got[t])
    assert [fbits(w) for w in got[:, 0]] == [1.0, 1.0, f32(0.25 * 6.0 + 0.75 * 2.0), -1.5, -1.5]
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


@pytest.mark.parametrize("text, why", [
    (KERNEL.format(inst="tex.2d.v4.s32.f32 " + DEST + ", [gt, {%f1, %f2}];").replace(
        ".address_size 64\n", ".address_size 64\n.global .texref gt = { addr_mode_0 = sideways };\n"),
     "addr_mode_0 = sideways: unknown value 'sideways'"),
])
def test_bad_texref_initialisers_are_located_errors_in_check_and_compile(device, text, why):
    by_check, by_compile = _refusals(text)
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)


# A .texref initialiser's normalized_coords = 0 / 1 forces unnormalized / normalized coordinates on the bound
# object (0 as a sampler's force_unnormalized_coords); width, height, depth, channel_data_type, channel_order are declarations the bound
# object's own properties override (xcc's choice, docs/semantics.md): txq answers the object's.
DECLARED = "width = 99, height = 7, depth = 3, channel_data_type = 5, channel_order = 1"


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("init, linear, obj_normalized, normalized", [
    ("{ normalized_coords = 0 }", False, True, False),
    (f"{{ {DECLARED}, filter_mode = linear, normalized_coords = 0 }}", True, True, False),
    (f"{{ {DECLARED} }}", None, True, True),
    ("{ normalized_coords = 1 }", None, False, True),
    ("{ normalized_coords = 0, filter_mode = linear, normalized_coords = 1 }", True, False, True),
    (f"{{ {DECLARED} }}", None, False, False),
], ids=["unnormalized", "declared-linear-unnormalized", "declared-only", "normalized", "linear-later-normalized",
        "declared-object-unnormalized"])
def test_texref_normalized_coords_and_declared_geometry(device, engine, opt, init, linear, obj_normalized,
                                                        normalized):
    tex, arr = make_texture(IMG2, 2, mode=CLAMP, linear=False, normalized=obj_normalized, border=-2.5)
    rows = inputs(N_THREADS, 2, 1.0 / 6 if normalized else 1.0)
    got = run_texref(device, f"tex.2d.v4.s32.f32 {DEST}, [gt, {{%f1, %f2}}];", tex, rows, engine, opt, init)
    for t, r in enumerate(rows):
        want = reference(IMG2, [fbits(r[0]), fbits(r[1])], CLAMP, bool(linear), normalized, -2.5)
        assert list(got[t]) == want, (t, got[t], want)
    txq = ("txq.width.b32 %r10, [gt];\n    txq.height.b32 %r11, [gt];\n    txq.depth.b32 %r12, "
           "[gt];\n    txq.normalized_coords.b32 %r13, [gt];")
    got = run_texref(device, txq, tex, rows[:1], engine, opt, init)
    assert list(got[0]) == [IMG2.shape[1], IMG2.shape[0], 0, int(normalized)]
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))


def _texref_text(init: str) -> str:
    return KERNEL.format(inst="tex.2d.v4.s32.f32 " + DEST + ", [gt, {%f1, %f2}];").replace(
        ".address_size 64\n", f".address_size 64\n.global .texref gt = {init};\n")


@pytest.mark.parametrize("text, why", [  # ptxas 13.0 -arch=sm_80 takes it (integer fields: test_opaque_initialisers)
    (_texref_text("{ normalized_coords = 2 }"), "normalized_coords = 2 takes 0 or 1"),
])
def test_texref_normalized_coords_beyond_1_is_a_located_refusal(device, text, why):
    by_check, by_compile = _refusals(text)
    assert by_check == by_compile and by_check is not None and why in by_check and "t.ptx:" in by_check, (
        by_check, by_compile)
