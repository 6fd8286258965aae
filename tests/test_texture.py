"""Texture and surface objects (issue 19): examples/texture_surface.cu (nvcc 13 -ptx -arch=sm_80: tex2D<float>,
tex1Dfetch, tex2D<int4>, surf2Dread/surf2Dwrite, surf1Dread with cudaBoundaryModeZero) with its host side through
xcc's driver API (cuArray3DCreate, cuMemcpyHtoA, cuTexObjectCreate, cuSurfObjectCreate), on both engines at -O0 and
-O3, against a numpy reference written here from the CUDA Programming Guide's "Texture Fetching" appendix
(nearest-point and linear filtering with a 9-bit fixed-point weight, the address modes); plus hand-written PTX for
the forms nvcc's example does not emit (3d, layered, tld4, txq, suq, istypep, vector and 64-bit surface accesses,
sured, .texref module variables), the located fault of a handle that is not a live object, and the refused forms.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.diagnostics import KernelFault
from xcc.runtime import driver as cuda

ROOT = Path(__file__).resolve().parents[1]
PTX = (ROOT / "examples/texture_surface.sm_80.ptx").read_text()
ENGINES = [(e, o) for e in ("ir", "isa") for o in (0, 3)]
F = cuda.CUarray_format
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3


_MODULES: dict = {}


def kernel(device, name: str, engine: str, opt: int, ptx: str = PTX):
    key = (id(device), hash(ptx), engine, opt)
    if key not in _MODULES:
        _MODULES[key] = rt.load_module(ptx, device=device, engine=engine, opt_level=opt)
    return _MODULES[key].get_function(name)


def ok(res):
    err, *vals = res
    assert err == 0, cuda.last_error_message()
    return vals[0] if len(vals) == 1 else vals


def array(data: np.ndarray, fmt, channels: int = 1, depth: int = 0, flags: int = cuda.CUDA_ARRAY3D_SURFACE_LDST,
          height: int | None = None, width: int | None = None):
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width = width if width is not None else data.shape[-1] // channels if data.ndim else 1
    d.Height = height if height is not None else (data.shape[-2] if data.ndim >= 2 else 0)
    d.Depth, d.Format, d.NumChannels, d.Flags = depth, fmt, channels, flags
    arr = ok(cuda.cuArray3DCreate(d))
    data = np.ascontiguousarray(data)
    ok(cuda.cuMemcpyHtoA(arr, 0, data, data.nbytes))
    return arr


def array_resource(arr):
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
    r.res.array.hArray = arr
    return r


def texture(res, mode=CLAMP, linear=False, normalized=False, as_int=False, border=(0.0, 0.0, 0.0, 0.0)):
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode = [mode, mode, mode]
    t.filterMode = int(linear)
    t.flags = (cuda.CU_TRSF_NORMALIZED_COORDINATES if normalized else 0) | (cuda.CU_TRSF_READ_AS_INTEGER if as_int
                                                                             else 0)
    t.borderColor = list(border)
    return ok(cuda.cuTexObjectCreate(res, t, None))


def alloc(n: int) -> int:
    return int(ok(cuda.cuMemAlloc(max(n, 1))))


def fetch(dptr: int, n: int, dtype=np.float32) -> np.ndarray:
    out = np.zeros(n, dtype)
    ok(cuda.cuMemcpyDtoH(out, dptr, out.nbytes))
    return out


# ----------------------------------------------------------------------------------------- the reference
def _address(i: np.ndarray, n: int, mode: int, normalized: bool):
    """(index, inside) of texel indices under an address mode (the guide: wrap and mirror need normalized
    coordinates; unnormalized, they clamp)."""
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == WRAP:
        return np.mod(i, n), np.ones(i.shape, bool)
    if mode == MIRROR:
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), np.ones(i.shape, bool)
    if mode == BORDER:
        return np.clip(i, 0, n - 1), (i >= 0) & (i < n)
    return np.clip(i, 0, n - 1), np.ones(i.shape, bool)


def reference_2d(img: np.ndarray, u: np.ndarray, v: np.ndarray, mode: int, linear: bool, normalized: bool,
                 border: float = 0.0) -> np.ndarray:
    """tex2D<float> of a one-channel float image at coordinates (u, v) (float32 arrays)."""
    h, w = img.shape
    if normalized:
        u, v = (u * np.float32(w)).astype(np.float32), (v * np.float32(h)).astype(np.float32)
    if not linear:
        (i, ii), (j, ji) = _address(np.floor(u).astype(np.int64), w, mode, normalized), \
            _address(np.floor(v).astype(np.int64), h, mode, normalized)
        return np.where(ii & ji, img[j, i], np.float32(border)).astype(np.float32)
    ub, vb = (u - np.float32(0.5)).astype(np.float32), (v - np.float32(0.5)).astype(np.float32)
    i0, j0 = np.floor(ub), np.floor(vb)
    a = np.floor((ub - i0).astype(np.float64) * 256 + 0.5)  # the 9-bit weight: 8 fraction bits
    b = np.floor((vb - j0).astype(np.float64) * 256 + 0.5)
    acc = np.zeros(u.shape, np.float64)
    for di, wi in ((0, 256 - a), (1, a)):
        for dj, wj in ((0, 256 - b), (1, b)):
            (i, ii), (j, ji) = _address(i0.astype(np.int64) + di, w, mode, normalized), \
                _address(j0.astype(np.int64) + dj, h, mode, normalized)
            t = np.where(ii & ji, img[j, i].astype(np.float64), border)
            acc += wi * wj * t
    return (acc / 65536.0).astype(np.float32)


# ----------------------------------------------------------------------------------------- the example
W, H = 8, 6
IMG = ((np.arange(W * H, dtype=np.float32).reshape(H, W) * 1.25 - 7.5) * np.where(np.arange(W) % 3, 1, -1)
       ).astype(np.float32)


def run_sample2d(device, engine, opt, mode, linear, normalized, scale, shift, border=0.0):
    arr = array(IMG.astype(np.float32), F.CU_AD_FORMAT_FLOAT)
    tex = texture(array_resource(arr), mode, linear, normalized, border=(border,) * 4)
    out = alloc(W * H * 4)
    kernel(device, "sample2d", engine, opt).launch((1, 1, 1), (W, H, 1), [
        np.uint64(int(tex)), np.uint64(out), np.int32(W), np.int32(H), np.float32(scale), np.float32(shift),
        np.int32(normalized)])
    got = fetch(out, W * H).reshape(H, W)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuArrayDestroy(arr))
    ok(cuda.cuMemFree(out))
    x, y = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32))
    s, t = np.float32(scale), np.float32(shift)
    u = ((x + np.float32(0.5)) * s + t).astype(np.float32)  # exact: the fma of the example rounds nothing here
    v = ((y + np.float32(0.5)) * s - t).astype(np.float32)
    if normalized:
        u, v = (u / np.float32(W)).astype(np.float32), (v / np.float32(H)).astype(np.float32)
    return got, reference_2d(IMG, u, v, mode, linear, normalized, border)


@pytest.mark.parametrize("engine, opt", ENGINES)
@pytest.mark.parametrize("mode, linear, normalized", [
    (CLAMP, False, False), (CLAMP, True, False), (WRAP, False, True), (WRAP, True, True), (MIRROR, True, True),
    (BORDER, True, False), (BORDER, False, True)])
def test_tex2d_point_and_linear_in_every_address_mode_matches_the_reference(device, engine, opt, mode, linear,
                                                                            normalized):
    got, want = run_sample2d(device, engine, opt, mode, linear, normalized, 1.375, 2.125 if normalized else -1.625,
                             border=-3.0)
    assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_linear_filtering_quantises_the_weight_to_8_fraction_bits(device, engine, opt):
    """Coordinates 1/512 apart fall between two 9-bit weights: the result moves in steps of 1/256 of a texel."""
    got, want = run_sample2d(device, engine, opt, CLAMP, True, False, 1.0 + 1 / 512, 0.25 + 1 / 1024)
    assert np.array_equal(got, want)
    exact = reference_2d(IMG, *np.meshgrid(np.arange(W, dtype=np.float32) + np.float32(0.5),
                                           np.arange(H, dtype=np.float32) + np.float32(0.5)), CLAMP, True, False)
    assert np.array_equal(exact, IMG)  # at the texel centres linear filtering returns the texels


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_tex1dfetch_from_linear_memory_reads_zero_out_of_range(device, engine, opt):
    n = 40
    data = np.linspace(-3, 5, n, dtype=np.float32)
    buf = alloc(data.nbytes)
    ok(cuda.cuMemcpyHtoD(buf, data, data.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_LINEAR
    r.res.linear.devPtr, r.res.linear.format, r.res.linear.numChannels = buf, F.CU_AD_FORMAT_FLOAT, 1
    r.res.linear.sizeInBytes = data.nbytes
    tex = texture(r)
    out = alloc(n * 4)
    for shift in (0, 7, -5):
        kernel(device, "fetch1d", engine, opt).launch((1, 1, 1), (64, 1, 1), [np.uint64(int(tex)), np.uint64(out),
                                                                             np.int32(n), np.int32(shift)])
        idx = np.arange(n) + shift
        want = np.where((idx >= 0) & (idx < n), 2 * data[np.clip(idx, 0, n - 1)], 0).astype(np.float32)
        assert np.array_equal(fetch(out, n), want)
    ok(cuda.cuTexObjectDestroy(tex))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_tex2d_int4_reads_the_four_channels_as_integers(device, engine, opt):
    img = (np.arange(W * H * 4, dtype=np.int32) * 7919 - 100000).reshape(H, W * 4)
    arr = array(img, F.CU_AD_FORMAT_SIGNED_INT32, channels=4)
    tex = texture(array_resource(arr))
    out = alloc(W * H * 16)
    kernel(device, "sample2d_int4", engine, opt).launch((1, 1, 1), (W, H, 1), [np.uint64(int(tex)), np.uint64(out),
                                                                               np.int32(W), np.int32(H)])
    assert np.array_equal(fetch(out, W * H * 4, np.int32), img.ravel())


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_surf2d_read_modify_write(device, engine, opt):
    img = (np.arange(W * H, dtype=np.float32).reshape(H, W) * 0.25 - 3)
    arr = array(img, F.CU_AD_FORMAT_FLOAT)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    kernel(device, "surf_update", engine, opt).launch((1, 1, 1), (W, H, 1), [np.uint64(int(surf)), np.int32(W),
                                                                             np.int32(H)])
    got = np.zeros_like(img)
    ok(cuda.cuMemcpyAtoH(got, arr, 0, got.nbytes))
    x, y = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32))
    assert np.array_equal(got, img * 3 + x - y)
    ok(cuda.cuSurfObjectDestroy(surf))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_surf1d_read_with_boundary_mode_zero(device, engine, opt):
    n = 16
    data = np.arange(n, dtype=np.int32) * 3 + 1
    arr = array(data, F.CU_AD_FORMAT_SIGNED_INT32, height=0)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    out = alloc(n * 4)
    kernel(device, "surf_read_zero", engine, opt).launch((1, 1, 1), (n, 1, 1), [np.uint64(int(surf)), np.uint64(out),
                                                                                np.int32(n), np.int32(5)])
    idx = np.arange(n) + 5
    assert np.array_equal(fetch(out, n, np.int32), np.where(idx < n, data[np.clip(idx, 0, n - 1)], 0))


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_handle_that_is_not_a_live_object_is_a_located_fault(device, engine):
    arr = array(IMG, F.CU_AD_FORMAT_FLOAT)
    tex = texture(array_resource(arr))
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    out = alloc(W * H * 4)
    args = [np.uint64(out), np.int32(W), np.int32(H), np.float32(1), np.float32(0), np.int32(0)]
    ok(cuda.cuTexObjectDestroy(tex))
    for bad, why in ((int(tex), "not a live texture object|freed"), (int(surf), "is a surface object"),
                     (out, "not a live texture object")):
        with pytest.raises(KernelFault, match=why) as e:
            kernel(device, "sample2d", engine, 3).launch((1, 1, 1), (W, H, 1), [np.uint64(bad), *args])
        assert "tex.2d" in PTX.splitlines()[e.value.line - 1]
    with pytest.raises(KernelFault, match="is a texture object|not a live surface object"):
        t2 = texture(array_resource(arr))
        kernel(device, "surf_update", engine, 3).launch((1, 1, 1), (W, H, 1), [np.uint64(int(t2)), np.int32(W),
                                                                               np.int32(H)])


def test_the_driver_api_checks_its_descriptors(device):
    arr = array(np.zeros((4, 4), np.int32), F.CU_AD_FORMAT_SIGNED_INT32, flags=0)
    err, tex = cuda.cuTexObjectCreate(array_resource(arr), cuda.CUDA_TEXTURE_DESC(), cuda.CUDA_RESOURCE_VIEW_DESC())
    assert err == cuda.CUresult.CUDA_ERROR_NOT_SUPPORTED and tex is None and "resource views" in cuda.last_error_message()
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Format, d.NumChannels = 16, 4, F.CU_AD_FORMAT_FLOAT, 1
    assert cuda.cuMipmappedArrayCreate(d, 6)[0] == cuda.CUresult.CUDA_ERROR_INVALID_VALUE  # 16 x 4 has 5 levels
    t = cuda.CUDA_TEXTURE_DESC()
    t.filterMode = 1
    err, _ = cuda.cuTexObjectCreate(array_resource(arr), t, None)
    assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE and "linear filtering" in cuda.last_error_message()
    err, _ = cuda.cuSurfObjectCreate(array_resource(arr))
    assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE and "SURFACE_LDST" in cuda.last_error_message()
    assert cuda.cuTexObjectDestroy(12345)[0] == cuda.CUresult.CUDA_ERROR_INVALID_HANDLE
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Format, d.NumChannels = 4, 4, F.CU_AD_FORMAT_FLOAT, 3
    assert cuda.cuArray3DCreate(d)[0] == cuda.CUresult.CUDA_ERROR_INVALID_VALUE


# ----------------------------------------------------------------------------------------- hand-written forms
FORMS = (ROOT / "tests/data/texture/forms.ptx").read_text()  # (ptxas 13.0 -arch=sm_80 accepts it)


def _nearest(n: int, c: float) -> int:
    return min(max(int(np.floor(c)), 0), n - 1)


def launch_forms(device, name, engine, opt, handles, coords, nout, threads, dtype=np.float32):
    cs = np.ascontiguousarray(coords).view(np.uint32).ravel() if coords is not None else np.zeros(1, np.uint32)
    dcs, out = alloc(cs.nbytes), alloc(max(nout * 4, 128))
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    ok(cuda.cuMemsetD8(out, 0, max(nout * 4, 128)))
    args = [np.uint64(int(h)) for h in handles] + ([np.uint64(dcs)] if coords is not None else []) + [np.uint64(out)]
    kernel(device, name, engine, opt, FORMS).launch((1, 1, 1), (threads, 1, 1), args)
    return fetch(out, nout, dtype)


def _coords(rows) -> np.ndarray:
    """Thread records of three 32-bit words: a u32 or f32 each (as the kernel reads them)."""
    out = np.zeros((len(rows), 3), np.uint32)
    for i, row in enumerate(rows):
        for k, v in enumerate(row):
            out[i, k] = np.uint32(v) if isinstance(v, int) else np.float32(v).view(np.uint32)
    return out


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_tex3d_point_and_trilinear(device, engine, opt):
    D, Hh, Ww = 2, 3, 4
    vol = (np.arange(D * Hh * Ww, dtype=np.float32).reshape(D, Hh, Ww) * 2 - 5).astype(np.float32)
    arr = array(vol, F.CU_AD_FORMAT_FLOAT, depth=D, flags=0)
    pts = [(0.2, 0.7, 0.3), (3.9, 2.5, 1.7), (-2.0, 1.25, 5.0), (1.5, 1.5, 1.0), (2.75, 0.625, 1.375)]
    for linear in (False, True):
        tex = texture(array_resource(arr), linear=linear)
        got = launch_forms(device, "fetch3d", engine, opt, [tex], _coords(pts), 4 * len(pts), len(pts))
        got = got.reshape(-1, 4)
        for (x, y, z), g in zip(pts, got, strict=True):
            if not linear:
                want = vol[_nearest(D, z), _nearest(Hh, y), _nearest(Ww, x)]
            else:
                acc = 0.0
                taps = []
                for c, n in ((x, Ww), (y, Hh), (z, D)):
                    b = np.float32(np.float32(c) - np.float32(0.5))
                    i0 = int(np.floor(b))
                    a = int(np.floor((float(b) - i0) * 256 + 0.5))
                    taps.append([(min(max(i0, 0), n - 1), 256 - a), (min(max(i0 + 1, 0), n - 1), a)])
                for i, wi in taps[0]:
                    for j, wj in taps[1]:
                        for k, wk in taps[2]:
                            acc += wi * wj * wk * float(vol[k, j, i])
                want = np.float32(acc / 256 ** 3)
            assert g[0] == want and g[1] == 0 and g[2] == 0 and g[3] == 1, (x, y, z, g, want)
        ok(cuda.cuTexObjectDestroy(tex))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_layered_textures_pick_the_clamped_layer(device, engine, opt):
    L, Hh, Ww = 3, 3, 4
    data = (np.arange(L * Hh * Ww * 4, dtype=np.float32) * 0.5).reshape(L, Hh, Ww * 4)
    arr = array(data, F.CU_AD_FORMAT_FLOAT, channels=4, depth=L, flags=cuda.CUDA_ARRAY3D_LAYERED)
    tex = texture(array_resource(arr))
    pts = [(0, 0.5, 0.5), (2, 3.5, 2.5), (7, 1.2, 0.1), (1, -4.0, 9.0)]
    got = launch_forms(device, "fetch_a2d", engine, opt, [tex], _coords(pts), 4 * len(pts), len(pts)).reshape(-1, 4)
    for (layer, x, y), g in zip(pts, got, strict=True):
        i, j = _nearest(Ww, x), _nearest(Hh, y)
        assert np.array_equal(g, data[min(layer, L - 1), j, 4 * i:4 * i + 4])
    data1 = (np.arange(2 * 5 * 2, dtype=np.float32) + 1).reshape(2, 10)
    arr1 = array(data1, F.CU_AD_FORMAT_FLOAT, channels=2, depth=2, height=0, flags=cuda.CUDA_ARRAY3D_LAYERED)
    tex1 = texture(array_resource(arr1))
    pts1 = [(0, 0.5, 0), (1, 4.9, 0), (1, 2.0, 0)]
    got1 = launch_forms(device, "fetch_a1d", engine, opt, [tex1], _coords(pts1), 4 * 3, 3).reshape(-1, 4)
    for (layer, x, _), g in zip(pts1, got1, strict=True):
        i = _nearest(5, x)
        assert np.array_equal(g, [*data1[layer, 2 * i:2 * i + 2], 0, 1])


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_tld4_gathers_one_component_of_the_bilinear_footprint(device, engine, opt):
    data = (np.arange(4 * 4 * 2, dtype=np.float32) * 1.5).reshape(4, 8)
    arr = array(data, F.CU_AD_FORMAT_FLOAT, channels=2, flags=0)
    tex = texture(array_resource(arr))
    pts = [(0, 1.5, 1.5), (0, 0.2, 3.9), (0, 2.75, 0.5)]
    got = launch_forms(device, "gather", engine, opt, [tex], _coords(pts), 8 * 3, 3).reshape(-1, 2, 4)
    for (_, x, y), g in zip(pts, got, strict=True):
        i0, j0 = int(np.floor(np.float32(x) - np.float32(0.5))), int(np.floor(np.float32(y) - np.float32(0.5)))
        for c in (0, 1):
            def t(i, j, c=c):
                return data[min(max(j, 0), 3), 2 * min(max(i, 0), 3) + c]
            assert np.array_equal(g[c], [t(i0, j0 + 1), t(i0 + 1, j0 + 1), t(i0 + 1, j0), t(i0, j0)])


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_txq_suq_and_istypep(device, engine, opt):
    arr = array(IMG, F.CU_AD_FORMAT_FLOAT)
    tex = texture(array_resource(arr), mode=WRAP, linear=True, normalized=True)
    sarr = array(np.zeros((4, 8), np.uint32), F.CU_AD_FORMAT_UNSIGNED_INT32, channels=2)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(sarr)))
    got = launch_forms(device, "queries", engine, opt, [tex, surf], None, 16, 1, np.uint32)
    # OpenCL's CL_FLOAT and CL_R for the texture, CL_RG for the surface (PTX ISA: txq/suq answer with them)
    assert list(got) == [W, H, 0, 0x10DE, 0x10B0, 1, 1, WRAP, 4, 4, 0x10B2, 1, 0, 1, 0, 0]


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_vector_64_bit_and_byte_surface_accesses_and_reductions(device, engine, opt):
    s = (np.arange(4 * 8, dtype=np.uint32) * 0x01010101 + 3).reshape(4, 8)  # 4 x 4 elements of 2 x u32
    arr = array(s, F.CU_AD_FORMAT_UNSIGNED_INT32, channels=2)
    arr2 = array(np.zeros((4, 4), np.uint32), F.CU_AD_FORMAT_UNSIGNED_INT32)
    surf, surf2 = ok(cuda.cuSurfObjectCreate(array_resource(arr))), ok(cuda.cuSurfObjectCreate(array_resource(arr2)))
    got = launch_forms(device, "surfaces", engine, opt, [surf, surf2], None, 16 * 4, 16, np.uint32).reshape(16, 4)
    s64 = s.view(np.uint64)  # (4, 4): element x of row y as one 64-bit word
    after = np.zeros_like(s)
    ok(cuda.cuMemcpyAtoH(after, arr, 0, after.nbytes))
    after2 = np.zeros((4, 4), np.uint32)
    ok(cuda.cuMemcpyAtoH(after2, arr2, 0, after2.nbytes))
    want_min = s.copy()
    for i in range(16):
        x, y = i % 4, i // 4
        assert list(got[i, :2]) == list(s[y, 2 * max(x - 1, 0):2 * max(x - 1, 0) + 2])  # .clamp: element 0
        assert got[i, 2:].view(np.uint64)[0] == (s64[y, x + 2] if x + 2 < 4 else 0)  # .zero: beyond the row
        want_min[y, x % 2] = np.array(min(int(want_min[y, x % 2].view(np.int32)), 5 - i), np.int32).view(np.uint32)
    assert np.array_equal(after, want_min)
    i = np.arange(16).reshape(4, 4)
    packed = (i | (i + 1) << 8 | (i + 2) << 16 | (i + 3) << 24).astype(np.uint32)
    packed[:, 0] += (i[:, 0] + 1 + i[:, 2] + 1).astype(np.uint32)
    packed[:, 1] += (i[:, 1] + 1 + i[:, 3] + 1).astype(np.uint32)
    assert np.array_equal(after2, packed)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_texref_module_variable_and_parameter_hold_handles(device, engine, opt):
    arr = array(IMG, F.CU_AD_FORMAT_FLOAT)
    tex = texture(array_resource(arr))
    mod = kernel(device, "texrefs", engine, opt, FORMS)
    g = _MODULES[(id(device), hash(FORMS), engine, opt)].get_global("gtex", np.uint64)
    g.copy_from_host(np.array([int(tex)], np.uint64))
    out = alloc(8)
    mod.launch((1, 1, 1), (1, 1, 1), [np.uint64(int(tex)), np.uint64(out)])
    assert list(fetch(out, 2)) == [IMG[1, 1], IMG[1, 1]]
    g.copy_from_host(np.zeros(1, np.uint64))  # unbound again: a located fault, not a traceback
    with pytest.raises(KernelFault, match="not a live texture object|out-of-bounds"):
        mod.launch((1, 1, 1), (1, 1, 1), [np.uint64(int(tex)), np.uint64(out)])


def test_a_sampler_register_in_a_unified_module_checks_and_compiles(capsys, tmp_path):
    """``[texture, sampler, c]`` with the sampler in a .u64 register: ptxas 13 takes it in a texmode_unified
    module too; xcc compiles it (a run-time sampler value, docs/semantics.md; before: "independent mode ... is
    not supported yet"), ``check`` and ``compile`` agreeing."""
    from xcc.cli import main

    src = tmp_path / "sampler.ptx"
    src.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 t)\n{\n"
                   "\t.reg .f32 %f<6>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n"
                   "\tmov.u64 %rd2, %rd1;\n\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, %rd2, {%f5, %f5}];\n"
                   "\tret;\n}\n")
    for argv in (["check", src], ["compile", src, "-o", tmp_path / "out.xbin"]):
        assert main([str(a) for a in argv]) == 0, capsys.readouterr().err


def test_check_accepts_the_example_and_the_opaque_declarations(capsys):
    from xcc.cli import main

    for path in (ROOT / "examples/texture_surface.sm_80.ptx", *sorted((ROOT / "tests/data/texture").glob("*.ptx"))):
        assert main(["check", str(path)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("mode, linear, normalized", [(CLAMP, True, False), (WRAP, False, True), (MIRROR, True, True),
                                                      (BORDER, True, True)])
def test_both_engines_agree_on_nan_infinite_and_huge_coordinates(device, mode, linear, normalized):
    """NaN reads as coordinate 0; infinities and huge values address the texel at +-2^31 (clamped, wrapped,
    mirrored or the border colour), the same on both engines."""
    D, Hh, Ww = 2, 3, 4
    vol = (np.arange(D * Hh * Ww, dtype=np.float32).reshape(D, Hh, Ww) + 1).astype(np.float32)
    arr = array(vol, F.CU_AD_FORMAT_FLOAT, depth=D, flags=0)
    tex = texture(array_resource(arr), mode, linear, normalized, border=(-1.0,) * 4)
    inf, nan = float("inf"), float("nan")
    pts = [(nan, 0.5, 0.5), (inf, -inf, 0.5), (1e30, -1e30, 3e9), (-2.5e9, 7.0, nan), (0.7, 0.2, -0.3)]
    got = [launch_forms(device, "fetch3d", e, 3, [tex], _coords(pts), 4 * len(pts), len(pts)) for e in ("ir", "isa")]
    assert np.array_equal(got[0].view(np.uint32), got[1].view(np.uint32))
    vals = set(vol.ravel().tolist()) | {-1.0}
    assert all(np.isfinite(got[0])) and (linear or set(got[0].reshape(-1, 4)[:, 0].tolist()) <= vals)
    first = got[0].reshape(-1, 4)[0, 0]  # NaN x reads as x = 0
    again = launch_forms(device, "fetch3d", "ir", 3, [tex], _coords([(0.0, 0.5, 0.5)]), 4, 1)
    assert first == again[0]


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_an_out_of_range_trap_surface_access_is_a_located_fault(device, engine):
    arr = array((np.arange(W * H, dtype=np.float32).reshape(H, W)), F.CU_AD_FORMAT_FLOAT)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    with pytest.raises(KernelFault, match=r"out of range \(\.trap\)") as e:
        kernel(device, "surf_update", engine, 3).launch((1, 1, 1), (W, H + 1, 1), [np.uint64(int(surf)), np.int32(W),
                                                                                   np.int32(H + 1)])
    assert "suld.b.2d" in PTX.splitlines()[e.value.line - 1]


def test_the_driver_api_launches_with_the_texture_object_as_a_kernel_parameter(device):
    """cuModuleLoadData + cuLaunchKernel, the CUtexObject passed as cuda-python passes a handle (type None)."""
    import ctypes

    n = 24
    data = (np.arange(n, dtype=np.float32) - 4) * 0.75
    buf, out = alloc(data.nbytes), alloc(n * 4)
    ok(cuda.cuMemcpyHtoD(buf, data, data.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_LINEAR
    r.res.linear.devPtr, r.res.linear.format, r.res.linear.numChannels = buf, F.CU_AD_FORMAT_FLOAT, 1
    r.res.linear.sizeInBytes = data.nbytes
    tex = texture(r)
    mod = ok(cuda.cuModuleLoadData(PTX.encode()))
    fn = ok(cuda.cuModuleGetFunction(mod, b"fetch1d"))
    params = ((tex, cuda.CUdeviceptr(out), n, -3), (None, None, ctypes.c_int, ctypes.c_int))
    assert cuda.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, 0)[0] == 0, cuda.last_error_message()
    idx = np.arange(n) - 3
    assert np.array_equal(fetch(out, n), np.where(idx >= 0, 2 * data[np.clip(idx, 0, n - 1)], 0).astype(np.float32))
    ok(cuda.cuTexObjectDestroy(tex))
    assert cuda.cuTexObjectDestroy(tex)[0] == cuda.CUresult.CUDA_ERROR_INVALID_HANDLE  # destroyed once
    ok(cuda.cuModuleUnload(mod))


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_the_runtime_api_makes_the_same_objects(device, engine):
    """cudaMallocArray + cudaMemcpy2DToArray (a padded host pitch), cudaCreateTextureObject (linear filtering,
    normalized coordinates, wrap) and a surface read-modify-write read back with cudaMemcpy2DFromArray."""
    from xcc.runtime import cudart

    def rok(res):
        err, *vals = res
        assert err == cudart.cudaError_t.cudaSuccess, cuda.last_error_message()
        return vals[0] if vals else None

    desc = rok(cudart.cudaCreateChannelDesc(32, 0, 0, 0, cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat))
    arr = rok(cudart.cudaMallocArray(desc, W, H, cudart.cudaArraySurfaceLoadStore))
    padded = np.zeros((H, W + 3), np.float32)
    padded[:, :W] = IMG
    rok(cudart.cudaMemcpy2DToArray(arr, 0, 0, padded, (W + 3) * 4, W * 4, H, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice))
    res = cudart.cudaResourceDesc()
    res.resType = cudart.cudaResourceType.cudaResourceTypeArray
    res.res.array.array = arr
    td = cudart.cudaTextureDesc()
    td.addressMode = [cudart.cudaAddressMode.cudaAddressModeWrap] * 3
    td.filterMode = cudart.cudaFilterMode.cudaFilterModeLinear
    td.readMode = cudart.cudaReadMode.cudaReadModeElementType
    td.normalizedCoords = 1
    tex = rok(cudart.cudaCreateTextureObject(res, td, None))
    out = alloc(W * H * 4)
    kernel(device, "sample2d", engine, 3).launch((1, 1, 1), (W, H, 1), [
        np.uint64(tex), np.uint64(out), np.int32(W), np.int32(H), np.float32(1.375), np.float32(2.125), np.int32(1)])
    x, y = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32))
    u = (((x + np.float32(0.5)) * np.float32(1.375) + np.float32(2.125)) / np.float32(W)).astype(np.float32)
    v = (((y + np.float32(0.5)) * np.float32(1.375) - np.float32(2.125)) / np.float32(H)).astype(np.float32)
    assert np.array_equal(fetch(out, W * H).reshape(H, W), reference_2d(IMG, u, v, WRAP, True, True))
    surf = rok(cudart.cudaCreateSurfaceObject(res))
    kernel(device, "surf_update", engine, 3).launch((1, 1, 1), (W, H, 1), [np.uint64(surf), np.int32(W), np.int32(H)])
    back = np.full((H, W + 1), -1, np.float32)
    rok(cudart.cudaMemcpy2DFromArray(back, (W + 1) * 4, arr, 0, 0, W * 4, H,
                                     cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    assert np.array_equal(back[:, :W], IMG * 3 + x - y) and (back[:, W] == -1).all()
    rok(cudart.cudaDestroyTextureObject(tex))
    rok(cudart.cudaDestroySurfaceObject(surf))
    rok(cudart.cudaFreeArray(arr))
    bad = cudart.cudaCreateChannelDesc(32, 32, 32, 0, cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat)[1]
    assert cudart.cudaMallocArray(bad, 4, 4, 0)[0] == cudart.cudaError_t.cudaErrorInvalidValue


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("fmt, dtype, scale", [
    (F.CU_AD_FORMAT_UNSIGNED_INT8, np.uint8, 255), (F.CU_AD_FORMAT_SIGNED_INT8, np.int8, 127),
    (F.CU_AD_FORMAT_UNSIGNED_INT16, np.uint16, 65535), (F.CU_AD_FORMAT_SIGNED_INT16, np.int16, 32767),
    (F.CU_AD_FORMAT_HALF, np.float16, None)])
def test_normalized_float_reads_of_narrow_integers_and_half_texels(device, engine, opt, fmt, dtype, scale):
    """tex1Dfetch<float> of 8/16-bit integers read as normalized float (the guide: v / (2^n - 1) unsigned,
    max(v / (2^(n-1) - 1), -1) signed) and of half floats (widened exactly)."""
    if scale is None:
        data = np.array([0, 1, -2.5, 65504, -0.0, 6e-8, 1 / 3, np.inf, 0.1, 7, -7, 1000, 0.5, 2, -1, 3], dtype)
    else:
        info = np.iinfo(dtype)
        data = np.array([info.min, info.min + 1, -1, 0, 1, 2, 3, 64, 100, info.max // 2, info.max - 1, info.max,
                         info.max // 3, 17, 9, 5], np.int64).clip(info.min, info.max).astype(dtype)
    buf = alloc(max(data.nbytes, 16))
    ok(cuda.cuMemcpyHtoD(buf, data, data.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_LINEAR
    r.res.linear.devPtr, r.res.linear.format, r.res.linear.numChannels = buf, fmt, 1
    r.res.linear.sizeInBytes = data.nbytes
    tex = texture(r)
    out = alloc(data.size * 4)
    kernel(device, "fetch1d", engine, opt).launch((1, 1, 1), (32, 1, 1), [np.uint64(int(tex)), np.uint64(out),
                                                                         np.int32(data.size), np.int32(0)])
    if scale is None:
        want = data.astype(np.float32)
    else:
        want = np.maximum(data.astype(np.float64) / scale, -1.0).astype(np.float32)
    assert np.array_equal(fetch(out, data.size), (want * np.float32(2)).astype(np.float32))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_f16_and_f16x2_results_round_the_filtered_values(device, engine, opt):
    """tex.2d.v4.f16.f32 and tex.2d.v2.f16x2.f32 (tests/data/texture/f16.ptx): the float fetch rounded to the
    nearest even half (x, y, z, w = value, 0, 0, 1; f16x2 packs x | y << 16 and z | w << 16)."""
    ptx = (ROOT / "tests/data/texture/f16.ptx").read_text()
    img = (IMG * np.float32(1500.7)).astype(np.float32)  # values beyond the halves' 11 bits, some past 65504
    arr = array(img, F.CU_AD_FORMAT_FLOAT, flags=0)
    tex = texture(array_resource(arr), CLAMP, linear=True)
    pts = [(0, 0.3, 0.9), (0, 3.7, 2.2), (0, 7.9, 5.5), (0, 1.1, 4.4), (0, 5.5, 0.5), (0, 2.25, 3.125)]
    cs = _coords(pts)
    dcs, out = alloc(cs.nbytes), alloc(16 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    kernel(device, "fetch_f16", engine, opt, ptx).launch((1, 1, 1), (len(pts), 1, 1),
                                                         [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, 8 * len(pts), np.uint16).reshape(len(pts), 8)
    u = np.array([p[1] for p in pts], np.float32)
    v = np.array([p[2] for p in pts], np.float32)
    want = np.zeros((len(pts), 4), np.float16)
    with np.errstate(over="ignore"):  # past the largest half: infinity, as round-to-nearest gives
        want[:, 0] = reference_2d(img, u, v, CLAMP, True, False).astype(np.float16)
    want[:, 3] = 1
    assert np.array_equal(got[:, :4], want.view(np.uint16)) and np.array_equal(got[:, 4:], want.view(np.uint16))
    assert np.isinf(want[:, 0].astype(np.float32)).any()  # (one value rounds past the largest half)


def _mipmapped_16x8():
    """A 4-level 16 x 8 f32 mipmapped array whose level l holds 1000 l + 10 y + x, as a resource description, and
    its levels' images."""
    Wm, Hm, L = 16, 8, 4
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels = Wm, Hm, 0, F.CU_AD_FORMAT_FLOAT, 1
    mm = ok(cuda.cuMipmappedArrayCreate(d, L))
    imgs = []
    for lv in range(L):
        w, h = max(Wm >> lv, 1), max(Hm >> lv, 1)
        img = (1000.0 * lv + 10 * np.arange(h)[:, None] + np.arange(w)[None, :]).astype(np.float32)
        ok(cuda.cuMemcpyHtoA(ok(cuda.cuMipmappedArrayGetLevel(mm, lv)), 0, img, img.nbytes))
        imgs.append(img)
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
    r.res.mipmap.hMipmappedArray = mm
    return r, imgs


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("linear, mip_linear, bias, lo, hi", [(False, False, 0.0, 0.0, 3.0), (True, True, 0.0, 0.0, 3.0),
                                                           (True, True, 0.75, 0.5, 2.25), (False, True, -0.5, 0.0, 9.0)])
def test_mipmapped_textures_tex_level_and_tex_base(device, engine, opt, linear, mip_linear, bias, lo, hi):
    """tex.level / tex.base (tests/data/texture/mip.ptx) on a 4-level 16 x 8 mipmapped array: the level of detail
    plus the bias, clamped to [minMipmapLevelClamp, maxMipmapLevelClamp] and the levels; the nearest level (ties
    up) or, with linear mipmap filtering, the two around it weighted in 9-bit fixed point; tex.base reads level 0."""
    ptx = (ROOT / "tests/data/texture/mip.ptx").read_text()
    L = 4
    r, imgs = _mipmapped_16x8()
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode, t.filterMode, t.flags = [CLAMP] * 3, int(linear), cuda.CU_TRSF_NORMALIZED_COORDINATES
    t.mipmapFilterMode, t.mipmapLevelBias, t.minMipmapLevelClamp, t.maxMipmapLevelClamp = int(mip_linear), bias, lo, hi
    tex = ok(cuda.cuTexObjectCreate(r, t, None))
    pts = [(0.3, 0.6, 0.0), (0.51, 0.27, 1.0), (0.9, 0.1, 1.3), (0.12, 0.88, 2.5), (0.77, 0.41, 2.75), (0.5, 0.5, 9.0),
           (0.05, 0.95, -3.0), (0.33, 0.66, float("nan")), (0.62, 0.2, 1.5)]
    cs = np.array(pts, np.float32)
    dcs, out = alloc(cs.nbytes), alloc(8 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    kernel(device, "fetch_mip", engine, opt, ptx).launch((1, 1, 1), (len(pts), 1, 1),
                                                         [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, 2 * len(pts)).reshape(-1, 2)

    def sample(lv, x, y):
        u, v = np.array([x], np.float32), np.array([y], np.float32)
        return float(reference_2d(imgs[lv], u, v, CLAMP, linear, True)[0])

    for (x, y, lod), g in zip(cs, got, strict=True):
        lam = min(max((0.0 if np.isnan(lod) else float(lod)) + bias, lo), hi)
        lam = min(max(lam, 0.0), L - 1.0)
        if not mip_linear:
            want = sample(int(np.floor(lam + 0.5)), x, y)
        else:
            l0 = int(np.floor(lam))
            a = int(np.floor((lam - l0) * 256 + 0.5))
            s0 = sample(l0, x, y)
            want = s0 if a == 0 or l0 + 1 >= L else float(np.float32(((256 - a) * s0 + a * sample(l0 + 1, x, y)) / 256))
        assert g[0] == np.float32(want), (x, y, lod, g, want)
        assert g[1] == np.float32(sample(0, x, y))
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuMipmappedArrayDestroy(r.res.mipmap.hMipmappedArray))


def _cube_reference(faces: np.ndarray, dirs: np.ndarray, linear: bool) -> np.ndarray:
    """texCubemap of one-channel faces (6, n, n) per the CUDA Programming Guide's cubemap table: the major axis
    picks the face (ties to x, then y), (s / m + 1) / 2 and (t / m + 1) / 2 are the normalized face coordinates."""
    out = []
    for x, y, z in dirs.astype(np.float32):
        if abs(x) >= abs(y) and abs(x) >= abs(z):
            face, m, s, t = (0, x, -z, -y) if x >= 0 else (1, -x, z, -y)
        elif abs(y) >= abs(z):
            face, m, s, t = (2, y, x, z) if y >= 0 else (3, -y, x, -z)
        else:
            face, m, s, t = (4, z, x, -y) if z >= 0 else (5, -z, -x, -y)
        u = np.float32((np.float32(s / m) + np.float32(1)) * np.float32(0.5))
        v = np.float32((np.float32(t / m) + np.float32(1)) * np.float32(0.5))
        out.append(reference_2d(faces[face], np.array([u]), np.array([v]), CLAMP, linear, True)[0])
    return np.array(out, np.float32)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("linear", [False, True])
def test_cubemap_and_cubemap_array_fetches(device, engine, opt, linear):
    """tex.cube / tex.acube (tests/data/texture/cube.ptx) on cubemaps of 4 x 4 faces (CUDA_ARRAY3D_CUBEMAP; a
    two-cube LAYERED array), against the guide's face table restated here; the cube index is clamped."""
    ptx = (ROOT / "tests/data/texture/cube.ptx").read_text()
    n = 4
    faces = (100 * np.arange(12)[:, None, None] + 10 * np.arange(n)[None, :, None] + np.arange(n)[None, None, :]
             ).astype(np.float32)  # two cubes of six faces
    dirs = np.array([(1, 0.2, -0.3), (-2, 0.5, 0.5), (0.1, 3, -0.7), (0.4, -1, 0.9), (0.3, -0.2, 5), (-0.6, 0.6, -1),
                     (1, 1, 0.5), (0.5, 0.5, 0.5), (-1, -1, -1), (0.99, 0.01, -0.98)], np.float32)
    flags = cuda.CUDA_ARRAY3D_CUBEMAP
    one = array(faces[:6], F.CU_AD_FORMAT_FLOAT, depth=6, flags=flags)
    two = array(faces, F.CU_AD_FORMAT_FLOAT, depth=12, flags=flags | cuda.CUDA_ARRAY3D_LAYERED)
    for arr, name, cube, want in ((one, "fetch_cube", 0, _cube_reference(faces[:6], dirs, linear)),
                                  (two, "fetch_acube", 1, _cube_reference(faces[6:], dirs, linear)),
                                  (two, "fetch_acube", 5, _cube_reference(faces[6:], dirs, linear))):
        tex = texture(array_resource(arr), WRAP, linear, normalized=True)
        cs, out = alloc(dirs.nbytes), alloc(16 * len(dirs))
        ok(cuda.cuMemcpyHtoD(cs, dirs, dirs.nbytes))
        kernel(device, name, engine, opt, ptx).launch((1, 1, 1), (len(dirs), 1, 1), [
            np.uint64(int(tex)), np.uint64(cs), np.uint64(out), np.uint32(cube)])
        got = fetch(out, 4 * len(dirs)).reshape(-1, 4)
        assert np.array_equal(got[:, 0], want), (name, cube, got[:, 0], want)
        assert (got[:, 1:3] == 0).all() and (got[:, 3] == 1).all()
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels, d.Flags = 4, 5, 6, F.CU_AD_FORMAT_FLOAT, 1, flags
    assert cuda.cuArray3DCreate(d)[0] == cuda.CUresult.CUDA_ERROR_INVALID_VALUE  # faces must be square


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_tex_grad_picks_the_level_of_the_longer_gradient(device, engine, opt):
    """tex.grad.2d (tests/data/texture/grad.ptx): level of detail log2 of the longer of dPdx, dPdy scaled to
    level-0 texels (normalized coordinates: by the 16 x 8 extent), then as tex.level with linear mipmap filtering."""
    ptx = (ROOT / "tests/data/texture/grad.ptx").read_text()
    Wm, Hm, L = 16, 8, 4
    r, imgs = _mipmapped_16x8()
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode, t.filterMode, t.flags = [CLAMP] * 3, 1, cuda.CU_TRSF_NORMALIZED_COORDINATES
    t.mipmapFilterMode, t.maxMipmapLevelClamp = 1, 3.0
    tex = ok(cuda.cuTexObjectCreate(r, t, None))
    pts = np.array([(0.3, 0.6, 1 / 16, 0, 0, 1 / 8), (0.5, 0.5, 0.1, 0.05, -0.02, 0.2), (0.7, 0.2, 0, 0, 0, 0),
                    (0.2, 0.8, 0.5, 0.5, 0.25, 0.1), (0.45, 0.35, -0.3, 0.01, 0.02, 0.01)], np.float32)
    dcs, out = alloc(pts.nbytes), alloc(4 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, pts, pts.nbytes))
    kernel(device, "fetch_grad", engine, opt, ptx).launch((1, 1, 1), (len(pts), 1, 1),
                                                          [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, len(pts))
    for (x, y, dux, dvx, duy, dvy), g in zip(pts.astype(np.float64), got, strict=True):
        rho = max(np.hypot(dux * Wm, dvx * Hm), np.hypot(duy * Wm, dvy * Hm))
        lam = -np.inf if rho == 0 else float(np.float32(np.log2(rho)))
        lam = min(max(min(max(lam, 0.0), 3.0), 0.0), L - 1.0)
        l0 = int(np.floor(lam))
        a = int(np.floor((lam - l0) * 256 + 0.5))

        def sample(lv, x=x, y=y):
            return float(reference_2d(imgs[lv], np.array([x], np.float32), np.array([y], np.float32), CLAMP, True,
                                      True)[0])
        want = sample(l0) if a == 0 or l0 + 1 >= L else float(np.float32(((256 - a) * sample(l0) + a * sample(l0 + 1))
                                                                         / 256))
        assert g == np.float32(want), (x, y, lam, g, want)


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("fmt, channels, dtype", [(F.CU_AD_FORMAT_UNSIGNED_INT8, 2, np.uint8),
                                                   (F.CU_AD_FORMAT_SIGNED_INT16, 4, np.int16),
                                                   (F.CU_AD_FORMAT_HALF, 1, np.float16),
                                                   (F.CU_AD_FORMAT_FLOAT, 4, np.float32)])
def test_sust_p_converts_each_word_to_a_channel(device, engine, opt, fmt, channels, dtype):
    """sust.p.2d.v4.b32 (tests/data/texture/sustp.ptx): x counts elements; word k becomes channel k (words past the
    element's channels are ignored): f32 kept or rounded to the nearest even half, integers saturated."""
    ptx = (ROOT / "tests/data/texture/sustp.ptx").read_text()
    rng = np.random.default_rng(7)
    if dtype in (np.float16, np.float32):
        words = (rng.standard_normal((16, 4)) * 40000).astype(np.float32).view(np.uint32)
    else:
        words = rng.integers(-200000, 200000, (16, 4)).astype(np.int32).view(np.uint32)
    arr = array(np.zeros((4, 4 * channels), dtype), fmt, channels=channels)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    dws = alloc(words.nbytes)
    ok(cuda.cuMemcpyHtoD(dws, words, words.nbytes))
    kernel(device, "store_p", engine, opt, ptx).launch((1, 1, 1), (16, 1, 1), [np.uint64(int(surf)), np.uint64(dws)])
    got = np.zeros((4, 4 * channels), dtype)
    ok(cuda.cuMemcpyAtoH(got, arr, 0, got.nbytes))
    src = words[:, :channels]
    if dtype == np.float32:
        want = src.view(np.float32)
    elif dtype == np.float16:
        with np.errstate(over="ignore"):
            want = src.view(np.float32).astype(np.float16)
    else:
        info = np.iinfo(dtype)
        signed = src.view(np.int32).astype(np.int64) if info.min < 0 else src.astype(np.int64)
        want = np.clip(signed, info.min, info.max).astype(dtype)
    assert np.array_equal(got.reshape(16, channels).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
@pytest.mark.parametrize("fmt, dtype", [(F.CU_AD_FORMAT_SIGNED_INT32, np.int32),
                                        (F.CU_AD_FORMAT_UNSIGNED_INT32, np.uint32)])
def test_sured_p_reduces_with_the_formats_signedness(device, engine, opt, fmt, dtype):
    """sured.p.min / .add.2d.b32 (tests/data/texture/suredp.ptx): x counts elements; min compares as the
    surface's format says (signed for SIGNED_INT32, unsigned for UNSIGNED_INT32)."""
    ptx = (ROOT / "tests/data/texture/suredp.ptx").read_text()
    start = np.array([5, -7, 1 << 20, 0], np.int64).astype(dtype)
    arr = array(start.reshape(1, 4), fmt)
    surf = ok(cuda.cuSurfObjectCreate(array_resource(arr)))
    ws = np.array([3, -2, 9, 7, -8, 4, 1 << 21, 2, 6, -1, -5, 1], np.int64).astype(np.int32)
    dws = alloc(ws.nbytes)
    ok(cuda.cuMemcpyHtoD(dws, ws, ws.nbytes))
    kernel(device, "reduce_p", engine, opt, ptx).launch((1, 1, 1), (ws.size, 1, 1), [np.uint64(int(surf)),
                                                                                    np.uint64(dws)])
    got = np.zeros(4, dtype)
    ok(cuda.cuMemcpyAtoH(got, arr, 0, got.nbytes))
    want = start.copy()
    for i, w in enumerate(ws.view(dtype)):
        want[i % 4] = min(want[i % 4], w)
    want = (want.astype(np.int64) + 3).astype(dtype)  # three threads add 1 to each element
    assert np.array_equal(got, want), (got, want)


def _gather_reference(img: np.ndarray, x: float, y: float, channel: int, channels: int) -> list:
    """tex2Dgather of one 2D image (h, w * channels) at unnormalized (x, y), clamp: (i0, j1), (i1, j1), (i1, j0),
    (i0, j0) with i0 = floor(x - 0.5)."""
    h, w = img.shape[0], img.shape[1] // channels
    i0 = int(np.floor(np.float32(np.float32(x) - np.float32(0.5))))
    j0 = int(np.floor(np.float32(np.float32(y) - np.float32(0.5))))

    def t(i, j):
        return img[min(max(j, 0), h - 1), channels * min(max(i, 0), w - 1) + channel]
    return [t(i0, j0 + 1), t(i0 + 1, j0 + 1), t(i0 + 1, j0), t(i0, j0)]


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_tld4_on_layered_and_cubemap_textures(device, engine, opt):
    """tld4.g.a2d (the clamped layer) and tld4.r.cube (the direction's face at normalized face coordinates, as
    tex.cube reads it) (tests/data/texture/gather.ptx)."""
    ptx = (ROOT / "tests/data/texture/gather.ptx").read_text()
    L, n = 3, 4
    data = (np.arange(L * n * n * 2, dtype=np.float32) * 0.5).reshape(L, n, 2 * n)
    arr = array(data, F.CU_AD_FORMAT_FLOAT, channels=2, depth=L, flags=cuda.CUDA_ARRAY3D_LAYERED)
    tex = texture(array_resource(arr))
    pts = [(0, 1.5, 1.5), (2, 0.2, 3.9), (9, 2.75, 0.5)]
    cs = _coords(pts)
    dcs, out = alloc(cs.nbytes), alloc(16 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    kernel(device, "gather_a2d", engine, opt, ptx).launch((1, 1, 1), (3, 1, 1), [np.uint64(int(tex)), np.uint64(dcs),
                                                                                 np.uint64(out)])
    got = fetch(out, 12).reshape(-1, 4)
    for (layer, x, y), g in zip(pts, got, strict=True):
        assert list(g) == _gather_reference(data[min(layer, L - 1)], x, y, 1, 2), (layer, x, y, g)
    faces = (100 * np.arange(6)[:, None, None] + 10 * np.arange(n)[None, :, None] + np.arange(n)[None, None, :]
             ).astype(np.float32)
    cube = texture(array_resource(array(faces, F.CU_AD_FORMAT_FLOAT, depth=6, flags=cuda.CUDA_ARRAY3D_CUBEMAP)))
    dirs = np.array([(1, 0.2, -0.3), (0.1, -3, -0.7), (0.3, -0.2, 5), (-0.6, 0.6, -1)], np.float32)
    dcs, out = alloc(dirs.nbytes), alloc(16 * len(dirs))
    ok(cuda.cuMemcpyHtoD(dcs, dirs, dirs.nbytes))
    kernel(device, "gather_cube", engine, opt, ptx).launch((1, 1, 1), (len(dirs), 1, 1), [
        np.uint64(int(cube)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, 4 * len(dirs)).reshape(-1, 4)
    for (x, y, z), g in zip(dirs, got, strict=True):
        if abs(x) >= abs(y) and abs(x) >= abs(z):
            face, m, s, t = (0, x, -z, -y) if x >= 0 else (1, -x, z, -y)
        elif abs(y) >= abs(z):
            face, m, s, t = (2, y, x, z) if y >= 0 else (3, -y, x, -z)
        else:
            face, m, s, t = (4, z, x, -y) if z >= 0 else (5, -z, -x, -y)
        u = np.float32((np.float32(s / m) + np.float32(1)) * np.float32(0.5)) * np.float32(n)
        v = np.float32((np.float32(t / m) + np.float32(1)) * np.float32(0.5)) * np.float32(n)
        assert list(g) == _gather_reference(faces[face], u, v, 0, 1), ((x, y, z), g)


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_tex_grad_3d(device, engine, opt):
    """tex.grad.3d (tests/data/texture/grad.ptx; xg1: TEXGRAD.SQ twice, then TEXLOD.SQ) on an 8 x 4 x 4 mipmapped
    volume: the level of detail of the longer gradient, point mipmap filtering (nearest level, ties up)."""
    ptx = (ROOT / "tests/data/texture/grad.ptx").read_text()
    Wm, Hm, Dm, L = 8, 4, 4, 3
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels = Wm, Hm, Dm, F.CU_AD_FORMAT_FLOAT, 1
    mm = ok(cuda.cuMipmappedArrayCreate(d, L))
    for lv in range(L):
        w, h, dd = max(Wm >> lv, 1), max(Hm >> lv, 1), max(Dm >> lv, 1)
        vol = np.full((dd, h, w), 100.0 * lv, np.float32)
        ok(cuda.cuMemcpyHtoA(ok(cuda.cuMipmappedArrayGetLevel(mm, lv)), 0, vol, vol.nbytes))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
    r.res.mipmap.hMipmappedArray = mm
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode, t.flags, t.maxMipmapLevelClamp = [CLAMP] * 3, cuda.CU_TRSF_NORMALIZED_COORDINATES, 8.0
    tex = ok(cuda.cuTexObjectCreate(r, t, None))
    rows = np.array([(0.5, 0.5, 0.5, 1 / 8, 0, 0, 0, 1 / 4, 0), (0.2, 0.3, 0.4, 0.3, 0.1, 0.2, 0, 0, 0.05),
                     (0.6, 0.1, 0.9, 0, 0, 0, 0, 0, 0), (0.3, 0.7, 0.2, 0.05, 0.05, 0.05, 0.2, -0.2, 0.3),
                     (0.5, 0.5, 0.5, 1e30, 0, 0, 0, 0, 0)], np.float32)
    dcs, out = alloc(rows.nbytes), alloc(4 * len(rows))
    ok(cuda.cuMemcpyHtoD(dcs, rows, rows.nbytes))
    kernel(device, "fetch_grad3d", engine, opt, ptx).launch((1, 1, 1), (len(rows), 1, 1),
                                                            [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, len(rows))
    for row, g in zip(rows.astype(np.float64), got, strict=True):
        sx = sum((row[3 + k] * n) ** 2 for k, n in enumerate((Wm, Hm, Dm)))
        sy = sum((row[6 + k] * n) ** 2 for k, n in enumerate((Wm, Hm, Dm)))
        rho = np.sqrt(max(sx, sy))
        lam = -np.inf if rho == 0 else float(np.float32(np.log2(rho)))
        lam = min(max(lam, 0.0), L - 1.0)
        assert g == np.float32(100.0 * int(np.floor(lam + 0.5))), (row, g, lam)


MS_LEVEL = ROOT / "tests/data/texture/ms_level.ptx"


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_txq_level_answers_each_mipmap_levels_extent(device, engine, opt):
    """txq.level.{width,height,depth} (tests/data/texture/ms_level.ptx) of a 4-level 16 x 8 x 4 mipmapped 3D array
    at levels -1 .. 4: each extent halved per level, at least 1 (the CUDA driver API's cuMipmappedArrayCreate
    rule); levels the texture lacks answer 0 (xcc's choice); a 2D array answers depth 0 at every level, and a
    texture that is not mipmapped has level 0 only."""
    ptx = MS_LEVEL.read_text()
    d = cuda.CUDA_ARRAY3D_DESCRIPTOR()
    d.Width, d.Height, d.Depth, d.Format, d.NumChannels = 16, 8, 4, F.CU_AD_FORMAT_FLOAT, 1
    mm = ok(cuda.cuMipmappedArrayCreate(d, 4))
    r = cuda.CUDA_RESOURCE_DESC()
    r.resType = cuda.CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
    r.res.mipmap.hMipmappedArray = mm
    t = cuda.CUDA_TEXTURE_DESC()
    t.addressMode, t.maxMipmapLevelClamp = [CLAMP] * 3, 3.0
    tex = ok(cuda.cuTexObjectCreate(r, t, None))
    flat = texture(array_resource(array(np.zeros((3, 5), np.float32), F.CU_AD_FORMAT_FLOAT)))
    for h, extents, levels in ((tex, (16, 8, 4), 4), (flat, (5, 3, 0), 1)):
        out = alloc(6 * 12)
        kernel(device, "query_level", engine, opt, ptx).launch((1, 1, 1), (6, 1, 1), [np.uint64(int(h)),
                                                                                         np.uint64(out)])
        got = fetch(out, 18, np.uint32).reshape(6, 3)
        for i, row in enumerate(got):
            lv = i - 1
            want = [0 if not 0 <= lv < levels or n == 0 else max(n >> lv, 1) for n in extents]
            assert list(row) == want, (h, lv, row, want)
    ok(cuda.cuTexObjectDestroy(tex))
    ok(cuda.cuMipmappedArrayDestroy(r.res.mipmap.hMipmappedArray))


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_multisample_fetches_read_the_one_sample_of_xccs_textures(device, engine, opt):
    """tex.2dms / tex.a2dms (ms_level.ptx; coordinates {sample, x, y, -} and {layer, sample, x, y}, PTX ISA tex):
    no public CUDA API makes a multisample array, so xcc's objects hold one sample per texel and sample 0 reads
    texel (x, y) unfiltered as tex.2d.s32 does (clamped; the layer clamped); checked against numpy indexing."""
    ptx = MS_LEVEL.read_text()
    Hh, Ww = 3, 4
    img = (np.arange(Hh * Ww * 4, dtype=np.float32) * 0.25 - 3).reshape(Hh, Ww * 4)
    tex = texture(array_resource(array(img, F.CU_AD_FORMAT_FLOAT, channels=4)), linear=True)
    pts = [(0, 0), (3, 2), (1, 2), (-2, 1), (9, 7)]
    cs = np.array([(x, y, 0) for x, y in pts], np.int32)
    dcs, out = alloc(cs.nbytes), alloc(16 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    kernel(device, "fetch_2dms", engine, opt, ptx).launch((1, 1, 1), (len(pts), 1, 1),
                                                          [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])
    got = fetch(out, 4 * len(pts)).reshape(-1, 4)
    for (x, y), g in zip(pts, got, strict=True):
        i, j = min(max(x, 0), Ww - 1), min(max(y, 0), Hh - 1)
        assert np.array_equal(g, img[j, 4 * i:4 * i + 4]), (x, y, g)
    L = 3
    data = (np.arange(L * Hh * Ww, dtype=np.int32) * 7 - 40).reshape(L, Hh, Ww)
    arr = array(data, F.CU_AD_FORMAT_SIGNED_INT32, depth=L, flags=cuda.CUDA_ARRAY3D_LAYERED)
    tex2 = texture(array_resource(arr))
    pts2 = [(0, 0, 0), (3, 1, 2), (2, 2, 9), (-1, 5, -3)]
    cs2 = np.array([(x, y, 0, layer) for x, y, layer in pts2], np.int32)
    dcs2, out2 = alloc(cs2.nbytes), alloc(16 * len(pts2))
    ok(cuda.cuMemcpyHtoD(dcs2, cs2, cs2.nbytes))
    kernel(device, "fetch_a2dms", engine, opt, ptx).launch((1, 1, 1), (len(pts2), 1, 1),
                                                           [np.uint64(int(tex2)), np.uint64(dcs2), np.uint64(out2)])
    got2 = fetch(out2, 4 * len(pts2), np.int32).reshape(-1, 4)
    for (x, y, layer), g in zip(pts2, got2, strict=True):
        i, j, lay = min(max(x, 0), Ww - 1), min(max(y, 0), Hh - 1), min(max(layer, 0), L - 1)
        assert list(g) == [data[lay, j, i], 0, 0, 1], (x, y, layer, g)


@pytest.mark.parametrize("engine", ["ir", "isa"])
def test_a_multisample_fetch_of_sample_1_is_a_located_fault(device, engine):
    ptx = MS_LEVEL.read_text()
    tex = texture(array_resource(array(np.zeros((2, 2), np.float32), F.CU_AD_FORMAT_FLOAT)))
    cs = np.array([(0, 0, 1)], np.int32)
    dcs, out = alloc(cs.nbytes), alloc(16)
    ok(cuda.cuMemcpyHtoD(dcs, cs, cs.nbytes))
    with pytest.raises(KernelFault, match="tex.2dms.*sample index 1"):
        kernel(device, "fetch_2dms", engine, 3, ptx).launch((1, 1, 1), (1, 1, 1),
                                                             [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out)])


def test_a_texmode_independent_module_refuses_the_unified_tex_form(capsys, tmp_path):
    """tests/data/texture/refused/independent_unified_tex.ptx: ptxas 13 refuses it at line 15 ("Argument 2 of
    instruction 'tex': .samplerref or .u64 register expected"); check and compile give the same located error,
    and the same module with texmode_unified passes check."""
    from xcc.cli import main

    src = ROOT / "tests/data/texture/refused/independent_unified_tex.ptx"
    errs = []
    for argv in (["check", src], ["compile", src, "-o", tmp_path / "out.xbin"]):
        assert main([str(a) for a in argv]) != 0
        err = capsys.readouterr().err
        assert "Traceback" not in err
        errs.append([e for e in err.splitlines() if ": error: " in e])
    assert errs[0] == errs[1] and len(errs[0]) == 1
    assert f"{src}:15:" in errs[0][0] and "texmode_independent" in errs[0][0] and ".samplerref" in errs[0][0]
    unified = tmp_path / "unified.ptx"
    unified.write_text(src.read_text().replace("texmode_independent", "texmode_unified"))
    assert main(["check", str(unified)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("engine, opt", ENGINES)
def test_the_residency_predicate_is_true_and_the_fetch_unchanged(device, engine, opt):
    """tex / tld4 with d|p (tests/data/texture/resident.ptx, ptxas-checked): PTX sets p when the texels are
    resident in memory (zeros otherwise); every texel xcc holds is resident, so p = true (written over a false
    p) and the values are the plain fetch's (tex2D nearest-point and tex2Dgather references)."""
    ptx = (ROOT / "tests/data/texture/resident.ptx").read_text()
    Hh, Ww = 4, 5
    img = (np.arange(Hh * Ww, dtype=np.float32) * 1.5 - 4).reshape(Hh, Ww)
    tex = texture(array_resource(array(img, F.CU_AD_FORMAT_FLOAT)))
    pts = np.array([(0.5, 0.5), (2.25, 3.75), (4.9, 1.1), (-1.0, 9.0)], np.float32)
    dcs, out, out2 = alloc(pts.nbytes), alloc(32 * len(pts)), alloc(32 * len(pts))
    ok(cuda.cuMemcpyHtoD(dcs, pts, pts.nbytes))
    kernel(device, "fetch_resident", engine, opt, ptx).launch(
        (1, 1, 1), (len(pts), 1, 1), [np.uint64(int(tex)), np.uint64(dcs), np.uint64(out), np.uint64(out2)])
    got = fetch(out, 8 * len(pts), np.uint32).reshape(-1, 8)
    got2 = fetch(out2, 8 * len(pts), np.uint32).reshape(-1, 8)
    want = reference_2d(img, pts[:, 0].copy(), pts[:, 1].copy(), CLAMP, False, False)
    for k, (x, y) in enumerate(pts):
        assert got[k, 4] == 1 and got2[k, 4] == 1
        assert np.array_equal(got[k, :4].view(np.float32), np.array([want[k], 0, 0, 1], np.float32))
        assert np.array_equal(got2[k, :4].view(np.float32), np.array(_gather_reference(img, x, y, 0, 1), np.float32))


MOV_HANDLES = """.version 8.0
.target sm_80
.address_size 64
.global .texref gtex;
.visible .entry texref_mov(.param .texref pt, .param .u64 out)
{
\t.reg .f32 %f<10>;
\t.reg .b64 %rd<4>;
\t.reg .pred %p<2>;
\t.reg .b32 %r<2>;
\tld.param.u64 %rd1, [out];
\tmov.u64 %rd2, gtex;
\tmov.u64 %rd3, pt;
\tmov.f32 %f1, 0f3FC00000;
\ttex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd2, {%f1, %f1}];
\ttex.2d.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd3, {%f1, %f1}];
\tistypep.texref %p1, %rd2;
\tselp.u32 %r1, 1, 0, %p1;
\tst.global.f32 [%rd1], %f2;
\tst.global.f32 [%rd1+4], %f6;
\tst.global.u32 [%rd1+8], %r1;
\tret;
}
"""


@pytest.mark.parametrize("engine, opt", ENGINES[::3])
def test_mov_of_a_texref_gives_the_handle_it_holds(device, engine, opt):
    """``mov.u64 %rd, gtex`` / ``mov.u64 %rd, pt`` (ptxas 13.0 -arch=sm_80 takes both): the handle the .texref
    variable or parameter holds, which a texture instruction through the register then uses (before: the
    variable's address, read as a handle)."""
    arr = array(IMG, F.CU_AD_FORMAT_FLOAT)
    tex = texture(array_resource(arr))
    mod = kernel(device, "texref_mov", engine, opt, MOV_HANDLES)
    g = _MODULES[(id(device), hash(MOV_HANDLES), engine, opt)].get_global("gtex", np.uint64)
    g.copy_from_host(np.array([int(tex)], np.uint64))
    out = alloc(12)
    mod.launch((1, 1, 1), (1, 1, 1), [np.uint64(int(tex)), np.uint64(out)])
    assert list(fetch(out, 2)) == [IMG[1, 1], IMG[1, 1]]
    assert fetch(out, 3).view(np.uint32)[2] == 1  # istypep.texref of the handle
