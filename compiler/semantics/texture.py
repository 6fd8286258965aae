"""Texture and surface objects: what ``cuTexObjectCreate`` / ``cuSurfObjectCreate`` (CUDA driver API, "Texture
Object Management", "Surface Object Management") describe and what ``tex``, ``tld4``, ``txq``, ``suld``, ``sust``,
``sured``, ``suq`` and ``istypep`` (PTX ISA 9.0 sections 9.7.10 and 9.7.11, unified mode: the handle is a 64-bit
value) do with them.  Both interpreters call these functions, so they fetch bit for bit alike.

A handle is the global address of a 128-byte descriptor that the runtime allocates (CUDA's handles are opaque);
xcc's layout, sixteen little-endian 64-bit words:

=====  ======================================================================================================
word   field
=====  ======================================================================================================
0      magic: ``XTEX`` (a texture object) or ``XSRF`` (a surface object) in bits 0-31
1      the texels' global address
2      resource type (bits 0-7: 0 array, 2 linear, 3 pitch2D), ``CUarray_format`` (8-15), channels (16-23),
       dimensions 1-3 (24-27), layered (28), cubemap (29: six square 2D layers per cube)
3      width (bits 0-31), height (32-63)
4      depth (bits 0-31), layers (32-63)
5      row pitch in bytes
6      sampler: address modes of dims 0, 1, 2 (3 bits each: 0 wrap, 1 clamp, 2 mirror, 3 border, 4 clamp_ogl),
       filter (bit 9: linear), normalized coordinates (bit 10), normalized-float read (bit 11)
7, 8   border colour: four f32 bit patterns
9      mipmapped: the address of the level table (one 64-bit address per level)
10     mipmapped: levels (bits 0-7), linear mipmap filtering (bit 8)
11, 12 mipmap level bias, minimum and maximum level clamp (f32 bit patterns)
=====  ======================================================================================================

Texels (CUDA Programming Guide, appendix "Texture Fetching"): element ``(x, y, z)`` of layer ``l`` is at
``address + ((l * depth + z) * height + y) * pitch + x * element_bytes``; an element is ``channels`` values of
the format.  A fetch returns four 32-bit words (x, y, z, w): a float channel (f32, f16 widened) as f32 bits; an
8- or 16-bit integer channel read as normalized float as f32 ``v / 255`` or ``v / 65535`` (signed: ``max(v / 127,
-1)``, ``max(v / 32767, -1)``; computed in f64, rounded once); any other integer channel as its value, sign- or
zero-extended.  Missing channels read 0, and w reads 1 (1.0 where the channel is a float).

Coordinates: with float coordinates, each of width ``N`` is ``u = x * N`` (f32) if normalized, else ``x``.
Nearest-point sampling reads texel ``floor(u)``; linear filtering reads ``i = floor(u - 0.5)`` and ``i + 1`` with
weights ``1 - a`` and ``a``, ``a = frac(u - 0.5)`` held in 9-bit fixed point with 8 fraction bits (rounded to
nearest), products summed in f64 and rounded once to f32 (2D and 3D: the tensor product of the axes' weights).
Integer coordinates (``tex.*.s32``, ``tex1Dfetch``) read texel ``x`` unfiltered.  ``.f16`` results
(``.v4.f16``, ``.v2.f16x2``) are a float fetch's values rounded to nearest even half.  A NaN coordinate reads as 0.
Each texel index is then addressed: clamp to ``[0, N - 1]``; border: outside, the border colour; wrap: ``i mod
N``; mirror: ``i mod 2N`` reflected; clamp_ogl (OpenGL's GL_CLAMP, PTX's ``clamp_ogl``): the coordinate ``u``
clamped to ``[0, N]`` first, then with linear filtering each tap outside ``[0, N - 1]`` the border colour, with
nearest-point sampling (and integer coordinates) clamp to ``[0, N - 1]``.  Wrap and mirror need normalized
coordinates (the guide: "only supported for normalized texture coordinates"); with unnormalized ones they clamp.  A linear resource fetched out of range reads
zeros (``tex1Dfetch``).  The layer of an array texture is clamped to ``[0, layers - 1]``.

Surfaces (``suld.b`` / ``sust.b`` / ``sured.b``): the x coordinate is in bytes and must be a multiple of the
access size (``sust.p``: in elements, each source word converted to a channel, :func:`formatted_channel`); out of range, ``.trap`` faults, ``.clamp`` accesses the nearest in-range element and ``.zero`` loads
zeros (stores and reductions are dropped).
"""

from __future__ import annotations

import math
import struct

MAGIC_TEX = 0x58455458  # b"XTEX"
MAGIC_SURF = 0x46525358  # b"XSRF"
DESC_BYTES = 128
RES_ARRAY, RES_LINEAR, RES_PITCH2D = 0, 2, 3
WRAP, CLAMP, MIRROR, BORDER, CLAMP_OGL = 0, 1, 2, 3, 4
FORMATS = {0x01: ("u", 1), 0x02: ("u", 2), 0x03: ("u", 4), 0x08: ("s", 1), 0x09: ("s", 2), 0x0A: ("s", 4),
           0x10: ("f", 2), 0x20: ("f", 4)}
"""``CUarray_format`` -> (kind, bytes per channel): UNSIGNED_INT8/16/32, SIGNED_INT8/16/32, HALF, FLOAT."""
# txq / suq .channel_data_type and .channel_order answer with OpenCL's enumerations (PTX ISA 9.7.10.4: "uses
# OpenCL-defined enumeration values"): CL_SNORM_INT8 .. CL_FLOAT and CL_R, CL_RG, CL_RGBA.
_CL_TYPE = {(0x01, True): 0x10D2, (0x02, True): 0x10D3, (0x08, True): 0x10D0, (0x09, True): 0x10D1,
            0x01: 0x10DA, 0x02: 0x10DB, 0x03: 0x10DC, 0x08: 0x10D7, 0x09: 0x10D8, 0x0A: 0x10D9, 0x10: 0x10DD,
            0x20: 0x10DE}
_CL_ORDER = {1: 0x10B0, 2: 0x10B2, 4: 0x10B5}
ONE_F32 = 0x3F800000


class TextureError(Exception):
    """A descriptor that is not what the instruction needs (the executors locate it)."""


def encode(magic: int, address: int, restype: int, fmt: int, channels: int, dims: int, layered: bool,
           width: int, height: int, depth: int, layers: int, pitch: int, modes=(CLAMP, CLAMP, CLAMP),
           linear: bool = False, normalized: bool = False, read_float: bool = False,
           border=(0.0, 0.0, 0.0, 0.0), levels: int = 0, level_table: int = 0, mip_linear: bool = False,
           bias: float = 0.0, min_clamp: float = 0.0, max_clamp: float = 0.0, cube: bool = False) -> bytes:
    """The 128-byte descriptor (layout: module docstring)."""
    w = [0] * 16
    w[0] = magic
    w[1] = address
    w[2] = restype | fmt << 8 | channels << 16 | dims << 24 | int(layered) << 28 | int(cube) << 29
    w[3] = width | height << 32
    w[4] = depth | layers << 32
    w[5] = pitch
    w[6] = modes[0] | modes[1] << 3 | modes[2] << 6 | int(linear) << 9 | int(normalized) << 10 | int(read_float) << 11
    bc = [struct.unpack("<I", struct.pack("<f", float(c)))[0] for c in border]
    w[7], w[8] = bc[0] | bc[1] << 32, bc[2] | bc[3] << 32
    w[9], w[10] = level_table, levels | int(mip_linear) << 8
    w[11] = _f32_bits(bias) | _f32_bits(min_clamp) << 32
    w[12] = _f32_bits(max_clamp)
    return struct.pack("<16Q", *w)


def decode(words) -> dict:
    """The fields of a descriptor given as its 16 words; :class:`TextureError` if it is not one."""
    w = [int(x) for x in words]
    magic = w[0] & 0xFFFFFFFF
    if magic not in (MAGIC_TEX, MAGIC_SURF):
        raise TextureError("not a live texture or surface object")
    fmt = w[2] >> 8 & 0xFF
    kind, cbytes = FORMATS.get(fmt, ("u", 1))
    s = w[6]
    return {"surface": magic == MAGIC_SURF, "address": w[1], "restype": w[2] & 0xFF, "format": fmt, "kind": kind,
            "cbytes": cbytes, "channels": w[2] >> 16 & 0xFF, "dims": w[2] >> 24 & 0xF, "layered": bool(w[2] >> 28 & 1),
            "cube": bool(w[2] >> 29 & 1),
            "width": w[3] & 0xFFFFFFFF, "height": w[3] >> 32, "depth": w[4] & 0xFFFFFFFF, "layers": w[4] >> 32,
            "pitch": w[5], "modes": (s & 7, s >> 3 & 7, s >> 6 & 7), "linear": bool(s >> 9 & 1),
            "normalized": bool(s >> 10 & 1), "read_float": bool(s >> 11 & 1),
            "border": (w[7] & 0xFFFFFFFF, w[7] >> 32, w[8] & 0xFFFFFFFF, w[8] >> 32),
            "level_table": w[9], "levels": w[10] & 0xFF, "mip_linear": bool(w[10] >> 8 & 1),
            "bias": _bits_f32(w[11]), "min_clamp": _bits_f32(w[11] >> 32), "max_clamp": _bits_f32(w[12])}


SAMPLER_MODES = {"wrap": WRAP, "clamp_to_edge": CLAMP, "mirror": MIRROR, "clamp_to_border": BORDER,
                 "clamp_ogl": CLAMP_OGL}
"""A ``.samplerref`` / ``.texref`` initialiser's ``addr_mode_N`` values (PTX ISA, "Texture Sampler and Surface
Types")."""
SAMPLER_FIELDS = ("addr_mode_0", "addr_mode_1", "addr_mode_2", "filter_mode", "force_unnormalized_coords")
SAMPLED = 1 << 63
"""Independent mode: a handle with this bit carries a sampler (:func:`sampler_word`) in bits 47-62 (bit 47:
:data:`FORCE_NORMALIZED`) and the texture object's descriptor address in bits 0-46 (as NVIDIA's bindless handles
combine a texture and a sampler index); a unified-mode ``.texref`` with an initialiser carries its fields the same way."""
OPAQUE_KEYWORDS = ("wrap", "mirror", "clamp_ogl", "clamp_to_edge", "clamp_to_border", "nearest", "linear")
"""The names an opaque initialiser's field takes, in ptxas's numbering: an integer value N of 1-7 is keyword
N - 1 of this tuple, any other integer (0, negative, 8 and up) leaves the field unset, as if not named.  Measured
on ptxas 13.0 (the PTX ISA gives integer values no meaning): ``.samplerref`` cubins store each field in
EIATTR_SAMPLER_INIT as its keyword's position within its own group (:data:`ADDR_KEYWORDS`, :data:`FILTER_KEYWORDS`)
or 0xFF when unset, and ``addr_mode_0 = 4`` / ``= clamp_to_edge``, ``filter_mode = 7`` / ``= linear``, ``= 0`` /
not named give byte-identical cubins; a keyword of the other group is stored by its position too
(``addr_mode_0 = linear`` is mirror's 1, ``filter_mode = mirror`` linear's 1)."""
ADDR_KEYWORDS = ("wrap", "mirror", "clamp_ogl", "clamp_to_edge", "clamp_to_border")
FILTER_KEYWORDS = ("nearest", "linear")


def field_keyword(value: str | int) -> str | None:
    """The keyword an opaque field's value names (:data:`OPAQUE_KEYWORDS`), None for an integer that leaves the
    field unset; a name that is no keyword raises ValueError."""
    if isinstance(value, int):
        return OPAQUE_KEYWORDS[value - 1] if 1 <= value <= len(OPAQUE_KEYWORDS) else None
    if value not in OPAQUE_KEYWORDS:
        raise ValueError(value)
    return value


def keyword_code(keyword: str) -> int:
    """The code ptxas stores for ``keyword`` in any sampler field: its position within its own group."""
    return (ADDR_KEYWORDS if keyword in ADDR_KEYWORDS else FILTER_KEYWORDS).index(keyword)


KEEP_MODE = (1 << 11, 1 << 12, 1 << 13)
KEEP_FILTER = 1 << 14
"""Sampler-word bits: keep the texture object's own address mode of axis 0, 1, 2 / filter mode (a ``.texref``
initialiser that does not name the field)."""


def sampler_word(modes=(CLAMP, CLAMP, CLAMP), linear: bool = False, force_unnormalized: bool = False,
                 keep: int = 0, force_normalized: bool = False) -> int:
    """The 15 bits of a sampler (handle bits 48-62): address modes' low 2 bits each (bits 0-5), linear
    filtering (bit 6), forced unnormalized coordinates (bit 7), the modes' third bit (8-10: clamp_ogl, mode 4,
    does not fit in two), ``keep`` (:data:`KEEP_MODE`, :data:`KEEP_FILTER`: bits 11-14), forced normalized
    coordinates (bit 15, :data:`FORCE_NORMALIZED`: a ``.texref``'s only)."""
    return int(force_normalized) << 15 | (modes[0] & 3 | (modes[1] & 3) << 2 | (modes[2] & 3) << 4 | int(linear) << 6 | int(force_unnormalized) << 7
            | (modes[0] >> 2) << 8 | (modes[1] >> 2) << 9 | (modes[2] >> 2) << 10 | keep)


FORCE_NORMALIZED = 1 << 15
"""Sampler-word bit 15 (handle bit 47, :func:`sampler_bits`): a ``.texref`` initialiser's ``normalized_coords =
1`` forces normalized coordinates (global addresses stay below 2^47: ``GLOBAL_BASE`` is 0x7F00_0000_0000)."""


def sampler_bits(word: int) -> int:
    """The bits a sampler word ORs into a handle: :data:`SAMPLED`, bits 0-14 in handle bits 48-62,
    :data:`FORCE_NORMALIZED` in handle bit 47."""
    return SAMPLED | (word & 0x7FFF) << 48 | (word >> 15 & 1) << 47


def split_handle(h: int) -> tuple[int, int | None]:
    """(descriptor address, sampler word or None) of a handle (:data:`SAMPLED`, :func:`sampler_bits`)."""
    h = int(h)
    return (h & ((1 << 47) - 1), h >> 48 & 0x7FFF | (h >> 47 & 1) << 15) if h & SAMPLED else (h, None)


def with_sampler(d: dict, word: int) -> dict:
    """The descriptor as a sampler reads it: its address modes and filter replaced (but those the word keeps),
    its normalized coordinates kept unless the sampler forces unnormalized ones (PTX ISA: the texture's
    ``normalized_coords``, the sampler's ``filter_mode``, ``addr_mode_N``, ``force_unnormalized_coords``)."""
    linear = d["linear"] if word & KEEP_FILTER else bool(word >> 6 & 1)
    if linear and not word & KEEP_FILTER and not float_output(d):
        raise TextureError("a linear-filtering sampler on a texture whose texels are not floats")
    modes = tuple(d["modes"][k] if word & KEEP_MODE[k] else (word >> 2 * k & 3 | (word >> 8 + k & 1) << 2)
                  for k in range(3))
    normalized = (d["normalized"] or bool(word & FORCE_NORMALIZED)) and not word >> 7 & 1
    return dict(d, modes=modes, linear=linear, normalized=normalized)


def kind_of(words) -> str | None:
    """'texref' (a texture object), 'surfref' (a surface object) or None (``istypep``)."""
    magic = int(words[0]) & 0xFFFFFFFF
    return {MAGIC_TEX: "texref", MAGIC_SURF: "surfref"}.get(magic)


def element_bytes(d: dict) -> int:
    return d["channels"] * d["cbytes"]


def texel_address(d: dict, x: int, y: int = 0, z: int = 0, layer: int = 0) -> int:
    h, dep = max(d["height"], 1), max(d["depth"], 1)
    return d["address"] + ((layer * dep + z) * h + y) * d["pitch"] + x * element_bytes(d)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _f32_bits(x: float) -> int:
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0x7F800000 if x > 0 else 0xFF800000


def _bits_f32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def _half(b: int) -> float:
    return struct.unpack("<e", struct.pack("<H", b & 0xFFFF))[0]


def float_output(d: dict) -> bool:
    """Whether fetches return floats (a float format, or an 8/16-bit integer one read as normalized float)."""
    return d["kind"] == "f" or d["read_float"]


def _channel(d: dict, raw: int):
    """One channel's value: a Python float (float results) or int."""
    kind, nb = d["kind"], d["cbytes"]
    if kind == "f":
        return _bits_f32(raw) if nb == 4 else _half(raw)
    v = raw - (1 << 8 * nb) if kind == "s" and raw >> (8 * nb - 1) else raw
    if d["read_float"]:
        scale = (1 << (8 * nb - (1 if kind == "s" else 0))) - 1
        return _f32(max(v / scale, -1.0))
    return v


def texel(d: dict, raw: bytes) -> list:
    """The four channel values (x, y, z, w) of one element's bytes."""
    nb = d["cbytes"]
    vals = [_channel(d, int.from_bytes(raw[k * nb:(k + 1) * nb], "little")) for k in range(d["channels"])]
    one = 1.0 if float_output(d) else 1
    zero = 0.0 if float_output(d) else 0
    return vals + [zero] * (3 - len(vals)) + [one] * (4 - max(len(vals), 3))


def _border(d: dict) -> list:
    bc = [_bits_f32(b) for b in d["border"]]
    return bc if float_output(d) else [0 if math.isnan(v) else int(max(min(v, 2.0 ** 31), -2.0 ** 31)) for v in bc]


def _words(vals, d: dict) -> list[int]:
    if float_output(d):
        return [_f32_bits(v) for v in vals]
    return [int(v) & 0xFFFFFFFF for v in vals]


def address_index(i: int, n: int, mode: int, normalized: bool) -> int | None:
    """Texel index ``i`` of an axis of ``n`` texels under an address mode; None: the border colour."""
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == WRAP:
        return i % n
    if mode == MIRROR:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if mode == BORDER:
        return i if 0 <= i < n else None
    return min(max(i, 0), n - 1)


def _axis_u(x: float, n: int, normalized: bool) -> float:
    if math.isnan(x):
        x = 0.0
    u = _f32(x * n) if normalized else x
    return max(min(u, 2.0 ** 31), -2.0 ** 31)


def _sizes(d: dict) -> list[int]:
    return [max(d["width"], 1), max(d["height"], 1), max(d["depth"], 1)][:d["dims"]]


def unpack_offsets(word: int, n: int) -> list[int]:
    """The ``n`` texel offsets of ``tex``/``tld4``'s offset operand packed as xcc's lowering packs them: 4 bits per
    axis (x bits 0-3, y 4-7, z 8-11), each signed, so an offset is its value's low 4 bits (the manual's range -8
    to +7; *a value outside it wraps*)."""
    return [((int(word) >> 4 * k & 0xF) ^ 8) - 8 for k in range(n)]


def _taps(d: dict, coords, integer: bool, gather: bool = False, offsets=None):
    """Per axis, [(texel index or None, weight numerator of 256)] (linear) or [(index, 256)] (point); ``offsets``:
    texel offsets added to the unnormalized coordinate (an integer one exactly, a float one ``u + o`` in f32)."""
    out = []
    for k, n in enumerate(_sizes(d)):
        mode = d["modes"][k]
        off = offsets[k] if offsets else 0
        if integer:
            i = int(coords[k]) + off
            if d["restype"] == RES_LINEAR:
                out.append([(i if 0 <= i < n else None, 256)])
            else:
                out.append([(address_index(i, n, mode, d["normalized"]), 256)])
            continue
        u = _axis_u(float(coords[k]), n, d["normalized"])
        if off:
            u = _f32(u + off)
        if mode == CLAMP_OGL:  # GL_CLAMP: u clamped to [0, N]; a linear tap outside, the border colour
            u = min(max(u, 0.0), float(n))
            mode = BORDER if d["linear"] or gather else CLAMP
        if d["linear"] or gather:
            ub = _f32(u - 0.5)
            i0 = math.floor(ub)
            a = math.floor((ub - i0) * 256 + 0.5)
            out.append([(address_index(i0, n, mode, d["normalized"]), 256 - a),
                        (address_index(i0 + 1, n, mode, d["normalized"]), a)])
        else:
            out.append([(address_index(math.floor(u), n, mode, d["normalized"]), 256)])
    return out


def cube_face(x: float, y: float, z: float) -> tuple[int, float, float]:
    """(face, u, v) of direction (x, y, z): the CUDA Programming Guide's cubemap table (the major axis picks the
    face: +x 0, -x 1, +y 2, -y 3, +z 4, -z 5; ties go to x, then y), ``u = (s / m + 1) / 2``, ``v = (t / m + 1)
    / 2`` in f32 with (m, s, t) = (x, -z, -y), (-x, z, -y), (y, x, z), (-y, x, -z), (z, x, -y), (-z, -x, -y)."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, m, sc, tc = (0, x, -z, -y) if x >= 0 else (1, -x, z, -y)
    elif ay >= az:
        face, m, sc, tc = (2, y, x, z) if y >= 0 else (3, -y, x, -z)
    else:
        face, m, sc, tc = (4, z, x, -y) if z >= 0 else (5, -z, -x, -y)
    if m == 0 or math.isnan(m):
        return face, 0.5, 0.5
    return face, _f32(_f32(_f32(sc / m) + 1.0) * 0.5), _f32(_f32(_f32(tc / m) + 1.0) * 0.5)


def level_of(d: dict, read, level: int) -> dict:
    """The descriptor of mipmap level ``level`` of a mipmapped texture: its address from the level table, each
    extent halved per level (at least 1), rows packed."""
    lv = dict(d, levels=0)
    lv["address"] = int.from_bytes(read(d["level_table"] + 8 * level, 8), "little")
    lv["width"] = max(d["width"] >> level, 1)
    lv["height"] = max(d["height"] >> level, 1) if d["height"] else 0
    lv["depth"] = max(d["depth"] >> level, 1) if d["depth"] else 0
    lv["pitch"] = lv["width"] * element_bytes(d)
    return lv


def _lod(d: dict, lod: float | None) -> float:
    """The level of detail: ``lod`` (None: 0, the implicit level of a compute fetch) plus the bias, clamped to
    the sampler's [min, max] level clamp and to the levels there are; NaN reads as 0."""
    x = 0.0 if lod is None or math.isnan(lod) else lod
    x = min(max(x + d["bias"], d["min_clamp"]), d["max_clamp"])  # (an infinite lod clamps too)
    return min(max(x, 0.0), d["levels"] - 1.0)


def grad_sq(d: dict, g: list[float]) -> float:
    """The squared length (f64) of one ``tex.grad`` gradient in level-0 texels (scaled by the extents with
    normalized coordinates)."""
    scale = [n if d["normalized"] else 1 for n in _sizes(d)]
    return sum((x * k) * (x * k) for x, k in zip(g, scale))


_CUBE_AXES = ((0, 1, 2, -1, 1, -1), (0, -1, 2, 1, 1, -1), (1, 1, 0, 1, 2, 1), (1, -1, 0, 1, 2, -1),
              (2, 1, 0, 1, 1, -1), (2, -1, 0, -1, 1, -1))
"""Per face of :func:`cube_face`: (axis, sign) of m, s and t: ``m = sign * P[axis]`` and so on."""


def grad_sq_cube(d: dict, direction: list[float], g: list[float]) -> float:
    """The squared length (f64) of one ``tex.grad.cube``/``.acube`` gradient ``g`` (of the direction, three
    elements) in texels of the face :func:`cube_face` picks for ``direction``: the derivative of the face's
    normalized coordinates ``(s / m + 1) / 2`` is ``(ds * m - s * dm) / (2 m^2)`` (the quotient rule; OpenGL
    4.6's cube-map derivatives), each scaled by the face's width (*computed in f64*); a direction with no major
    axis (m = 0) gives 0 (the base level)."""
    face = cube_face(*direction)[0]
    am, sm, as_, ss, at, st = _CUBE_AXES[face]
    m, sc, tc = sm * direction[am], ss * direction[as_], st * direction[at]
    dm, ds, dt = sm * g[am], ss * g[as_], st * g[at]
    if m == 0 or math.isnan(m):
        return 0.0
    n = max(d["width"], 1)
    du = (ds * m - sc * dm) / (2 * m * m) * n
    dv = (dt * m - tc * dm) / (2 * m * m) * n
    return du * du + dv * dv


def lod_of_sq(sx: float, sy: float) -> float:
    """``tex.grad``'s level of detail (f32) from the two squared gradient lengths: ``log2`` of the longer,
    computed in f64 and rounded once; a zero gradient gives -inf (the level clamps then pick the base level),
    NaN stays NaN (read as 0)."""
    if math.isnan(sx) or math.isnan(sy):
        return math.nan
    rho = math.sqrt(max(sx, sy))
    return -math.inf if rho == 0 else _f32(math.log2(rho)) if math.isfinite(rho) else math.inf


def grad_lod(d: dict, dx: list[float], dy: list[float]) -> float:
    """``tex.grad``'s level of detail of gradients ``dx``, ``dy`` (:func:`grad_sq`, :func:`lod_of_sq`)."""
    return lod_of_sq(grad_sq(d, dx), grad_sq(d, dy))


def _compared(texel_x: float, ref: float) -> float:
    """A depth compare's per-texel result (PTX ISA, ``tex``: "each element fetched from texture is compared
    against [the operand]. If comparison passes, result is 1.0; otherwise result is 0.0", and these results are
    filtered).  The compare function is the sampler's, and no CUDA API sets one (``CUDA_TEXTURE_DESC`` has no
    compare mode), so *xcc compares as OpenGL's default ``GL_LEQUAL``: passes when ``ref <= texel``* (the texel's
    x channel; NaN fails); the result reads ``(r, 0, 0, 1)`` as a one-channel float texel does."""
    return 1.0 if ref <= texel_x else 0.0


def fetch(d: dict, read, coords, integer: bool, layer: int = 0, lod: float | None = None,
          base: bool = False, offsets=None, dc: float | None = None) -> list[int]:
    """The four result words of a ``tex`` at ``coords`` (floats, or ints with ``integer``); ``read(address,
    nbytes)`` reads global memory (bytes).  A mipmapped texture is read at level 0 (``base``: ``tex.base``) or
    at the level of detail ``lod`` (``tex.level``; None: 0) plus the bias, clamped: the nearest level (ties up)
    or, with linear mipmap filtering, the two levels around it weighted as linear filtering weighs texels
    (9-bit fixed point).  ``offsets``: texel offsets (:func:`_taps`; at each level in that level's texels);
    ``dc``: depth compare (:func:`_compared`)."""
    if d["surface"]:
        raise TextureError("a tex through a surface object")
    if dc is not None and not float_output(d):
        raise TextureError("a depth compare on a texture whose texels are not floats")
    if d["cube"]:  # a face of six (per cube of the array) square 2D layers, read with normalized coordinates
        if integer or len(coords) != 3:
            raise TextureError("a cubemap texture takes .cube/.acube fetches with .f32 coordinates")
        face, u, v = cube_face(*(float(c) for c in coords))
        flat = dict(d, cube=False, normalized=True, modes=(CLAMP, CLAMP, CLAMP))
        cubes = max(d["layers"] // 6, 1)
        return fetch(flat, read, [u, v], False, 6 * min(max(int(layer), 0), cubes - 1) + face, lod, base, dc=dc)
    if d["levels"]:
        lam = 0.0 if base else _lod(d, lod)
        if not (d["mip_linear"] and float_output(d)) or base:
            return fetch(level_of(d, read, int(math.floor(lam + 0.5))), read, coords, integer, layer,
                         offsets=offsets, dc=dc)
        l0 = int(math.floor(lam))
        a = int(math.floor((lam - l0) * 256 + 0.5))
        w0 = fetch(level_of(d, read, l0), read, coords, integer, layer, offsets=offsets, dc=dc)
        if a == 0 or l0 + 1 >= d["levels"]:
            return w0
        w1 = fetch(level_of(d, read, l0 + 1), read, coords, integer, layer, offsets=offsets, dc=dc)
        return [_f32_bits(_f32(((256 - a) * _bits_f32(x) + a * _bits_f32(y)) / 256)) for x, y in zip(w0, w1)]
    if d["layered"]:
        layer = min(max(int(layer), 0), max(d["layers"], 1) - 1)
    taps = _taps(d, coords, integer, offsets=offsets)
    eb = element_bytes(d)
    border = _border(d)

    def value(idx):
        if any(i is None for i in idx):
            v = border if d["restype"] != RES_LINEAR else [0.0 if float_output(d) else 0] * 4
        else:
            v = texel(d, read(texel_address(d, *idx, *([0] * (3 - len(idx))), layer=layer), eb))
        return v if dc is None else [_compared(v[0], dc), 0.0, 0.0, 1.0]

    if all(len(t) == 1 for t in taps):
        return _words(value([t[0][0] for t in taps]), d)
    acc = [0.0] * 4
    scale = 256.0 ** len(taps)
    for combo in _product(taps):
        wgt = 1
        for _, w in combo:
            wgt *= w
        if wgt == 0:
            continue
        v = value([i for i, _ in combo])
        for c in range(4):
            acc[c] += wgt * float(v[c])
    return _words([_f32(a / scale) for a in acc], d)


def fetch_sample(d: dict, read, x: int, y: int, sample: int, layer: int = 0, offsets=None) -> list[int]:
    """``tex.2dms`` / ``tex.a2dms``: sample ``sample`` of texel ``(x, y)`` (integer coordinates, unfiltered, as
    ``tex.2d.s32`` reads; ``.a2dms``: of the clamped layer; ``offsets``: texel offsets added to ``x``, ``y`` before
    the addressing mode, as :func:`fetch`'s integer coordinates take them).  No public CUDA API makes a multisample array
    (``CUDA_ARRAY3D_DESCRIPTOR`` has no sample count; such arrays come only from graphics interop), so every
    object xcc makes holds one sample per texel: *sample 0 reads the texel; any other sample index, and a
    cubemap or non-2D texture, is a* :class:`TextureError` (the executors make it a located fault)."""
    if d["surface"] or d["dims"] != 2 or d["cube"]:
        raise TextureError("a multisample fetch needs a 2D or layered 2D texture object")
    if sample != 0:
        raise TextureError(f"sample index {sample} of a texture with one sample per texel (xcc's objects are "
                           "single-sample: no public CUDA API creates multisample arrays)")
    if d["levels"]:
        d = level_of(d, read, 0)
    return fetch(d, read, [x, y], True, layer, offsets=offsets)


def _half_bits(x: float) -> int:
    """The f16 nearest ``x`` (ties to even; beyond the largest finite half, an infinity; NaN the quiet NaN)."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def half_words(words: list[int], packed: bool) -> list[int]:
    """The ``.f16`` results (four halves) or ``.f16x2`` ones (two words: x | y << 16, z | w << 16) of a float
    fetch's four f32 words, each rounded to nearest even."""
    hs = [_half_bits(_bits_f32(w)) for w in words]
    return [hs[0] | hs[1] << 16, hs[2] | hs[3] << 16] if packed else hs


def _product(taps):
    combos = [[]]
    for axis in taps:
        combos = [c + [t] for t in axis for c in combos]
    return combos


def gather(d: dict, read, coords, comp: int, layer: int = 0, offsets=None, dc: float | None = None) -> list[int]:
    """``tld4.comp``: component ``comp`` of the four texels a bilinear fetch at ``coords`` reads, in the order
    (i0, j1), (i1, j1), (i1, j0), (i0, j0) (``i1 = i0 + 1``; CUDA's ``tex2Dgather``), of level 0; ``.a2d``: of
    the (clamped) layer; ``.cube``/``.acube``: coords is a direction, gathered on its face as ``tex.cube`` reads; ``offsets``: texel offsets (:func:`_taps`); ``dc``: each texel's
    depth compare (:func:`_compared`, of its x channel whatever ``comp``)."""
    if d["surface"] or d["dims"] != 2:
        raise TextureError("tld4 needs a 2D, layered 2D or cubemap texture object")
    if dc is not None and not float_output(d):
        raise TextureError("a depth compare on a texture whose texels are not floats")
    if d["levels"]:
        d = level_of(d, read, 0)
    if d["cube"]:
        if len(coords) != 3:
            raise TextureError("a cubemap texture takes .cube/.acube gathers")
        face, u, v = cube_face(*(float(c) for c in coords))
        cubes = max(d["layers"] // 6, 1)
        layer, coords = 6 * min(max(int(layer), 0), cubes - 1) + face, [u, v]
        d = dict(d, cube=False, normalized=True, modes=(CLAMP, CLAMP, CLAMP))
    elif d["layered"]:
        layer = min(max(int(layer), 0), max(d["layers"], 1) - 1)
    tx, ty = _taps(d, list(coords[:2]), False, gather=True, offsets=offsets)
    eb, border = element_bytes(d), _border(d)

    def value(i, j):
        v = border if i is None or j is None else texel(d, read(texel_address(d, i, j, layer=layer), eb))
        return v[comp] if dc is None else _compared(v[0], dc)

    (i0, _), (i1, _) = tx
    (j0, _), (j1, _) = ty
    return _words([value(i0, j1), value(i1, j1), value(i1, j0), value(i0, j0)], d)


TXQ_QUERIES = ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
               "array_size", "num_mipmap_levels", "num_samples", "filter_mode", "addr_mode_0", "addr_mode_1",
               "addr_mode_2", "force_unnormalized_coords")
"""What ``txq`` answers (:func:`query`)."""
SUQ_QUERIES = ("width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout")
"""What ``suq`` answers (:func:`query`)."""


def query(d: dict, what: str) -> int:
    """``txq.what`` / ``suq.what`` (width, height and depth in elements; 0 for an absent dimension)."""
    dims = d["dims"]
    if what == "width":
        return d["width"]
    if what == "height":
        return d["height"] if dims >= 2 else 0
    if what == "depth":
        return d["depth"] if dims >= 3 else 0
    if what == "channel_data_type":
        return _CL_TYPE.get((d["format"], d["read_float"] and d["kind"] != "f"), _CL_TYPE.get(d["format"], 0))
    if what == "channel_order":
        return _CL_ORDER.get(d["channels"], 0)
    if what == "normalized_coords":
        return int(d["normalized"])
    if what == "array_size":
        return d["layers"] if d["layered"] else 0
    if what in ("num_mipmap_levels", "num_samples"):
        return max(d["levels"], 1) if what == "num_mipmap_levels" else 0
    if what == "filter_mode":
        return int(d["linear"])
    if what.startswith("addr_mode_"):
        return d["modes"][int(what[-1])]
    if what == "force_unnormalized_coords":
        return 0
    if what == "memory_layout":
        return int(d["restype"] == RES_LINEAR)
    raise TextureError(f"unknown query .{what}")


def query_level(d: dict, what: str, level: int) -> int:
    """``txq.level.what d, [h], lod`` (width, height, depth): the extent of mipmap level ``lod`` as
    :func:`level_of` makes it (each level-0 extent halved per level, at least 1; 0 for an absent dimension); a
    texture that is not mipmapped has level 0 only.  *xcc's choice*: a level outside ``[0, levels - 1]``
    answers 0 (the manual does not say)."""
    if what not in ("width", "height", "depth"):
        raise TextureError(f"unknown level query .{what}")
    if not 0 <= level < max(d["levels"], 1):
        return 0
    return max(query(d, what) >> level, 1) if query(d, what) else 0


def formatted_channel(d: dict, word: int) -> int:
    """``sust.p``: a 32-bit source word as one channel of the surface's format (PTX ISA: read as .f32 for float
    formats, .u32 / .s32 for unsigned / signed ones, then converted): f32 kept, f16 rounded to nearest even;
    integers *saturated* to the channel's range (xcc's choice: the manual does not say)."""
    kind, nb = d["kind"], d["cbytes"]
    if kind == "f":
        return word & 0xFFFFFFFF if nb == 4 else _half_bits(_bits_f32(word))
    bits = 8 * nb
    if kind == "s":
        v = word - (1 << 32) if word >> 31 & 1 else word
        v = min(max(v, -(1 << (bits - 1))), (1 << (bits - 1)) - 1)
    else:
        v = min(word & 0xFFFFFFFF, (1 << bits) - 1)
    return v & ((1 << bits) - 1)


def surface_address(d: dict, xbytes: int, y: int, z: int, layer: int, size: int, mode: str) -> int | None:
    """The global address of a ``size``-byte surface access at byte x coordinate ``xbytes`` (row y, slice z,
    layer); None: out of range under ``.zero``; :class:`TextureError` out of range under ``.trap`` or misaligned."""
    if not d["surface"]:
        raise TextureError("a surface instruction through a texture object")
    if xbytes % size:
        raise TextureError(f"byte coordinate x = {xbytes} is not a multiple of the {size}-byte access")
    row = d["width"] * element_bytes(d)
    lims = [(xbytes, row - size + 1)]
    if d["dims"] >= 2:
        lims.append((y, max(d["height"], 1)))
    if d["dims"] >= 3:
        lims.append((z, max(d["depth"], 1)))
    if d["layered"]:
        lims.append((layer, max(d["layers"], 1)))
    outside = any(not 0 <= v < n for v, n in lims)
    if outside and mode == "trap":
        coords = ", ".join(str(v) for v, _ in lims)
        raise TextureError(f"surface coordinates ({coords}) out of range (.trap)")
    if outside and mode == "zero":
        return None
    vals = [min(max(v, 0), n - 1) for v, n in lims]
    vals[0] -= vals[0] % size
    xb = vals.pop(0)
    yy = vals.pop(0) if d["dims"] >= 2 else 0
    zz = vals.pop(0) if d["dims"] >= 3 else 0
    ll = vals.pop(0) if d["layered"] else 0
    h, dep = max(d["height"], 1), max(d["depth"], 1)
    return d["address"] + ((ll * dep + zz) * h + yy) * d["pitch"] + xb
