"""Lowering of the texture and surface instructions (a mixin of :class:`xcc.ir.lower.InstLowering`), unified
mode: the object is a 64-bit handle (CUDA's ``cudaTextureObject_t`` / ``cudaSurfaceObject_t``, a ``.u64``
kernel parameter); a ``.texref`` / ``.surfref`` / ``.samplerref`` kernel parameter holds one too, and a module
variable of those types is an 8-byte ``.global`` holding one (zero, no object, until the host writes a handle
there through ``cuModuleGetGlobal``: CUDA 12 removed the API that bound texture references).  Meaning:
:mod:`xcc.semantics.texture`.

* ``tex.{1d,2d,3d,a1d,a2d,cube,acube}.v4.{f32,s32,u32,f16}.{f32,s32} d, [h, c]`` -> four ``tex`` ops (``comp`` 0 - 3;
  ``.v2.f16x2``: two, ``half`` set); the
  coordinates of 3d, a2d and cube are a four-element vector whose last element is ignored; a1d/a2d/acube's first is
  the layer (.u32; acube: the cube).
* ``tex.2dms.v4.{f32,s32,u32,f16}.s32 d, [h, {sample, x, y, -}]`` and ``tex.a2dms ... [h, {layer, sample, x,
  y}]`` (multisample) -> four ``tex {ms}`` of the 2d / a2d geometry, the sample index the last coordinate
  argument (texel offsets ``{e}``: added to the integer x, y of the sample's texel).
* ``tex.base`` and ``tex.level ... , lod`` (mipmapped textures) -> ``tex {mip}``, the level of detail the last
  argument of ``.level``; ``tex.grad ..., dPdx, dPdy`` -> ``tex_lod`` of the gradients (cube, acube:
  ``tex_lod {cube}`` of the direction and the gradients, measured on the direction's face), then as
  ``tex.level``.
* ``tld4.{r,g,b,a}.{2d,a2d,cube,acube}.v4.{f32,s32,u32}.f32 d, [h, c]`` -> four ``tex {gather}``.
* ``txq.q.b32 d, [h]`` and ``suq.q.b32 d, [h]`` -> ``txq``; ``txq.level.{width,height,depth}.b32 d, [h], lod``
  -> ``txq`` with the level a second argument; ``istypep.kind p, h`` -> ``istypep``.
* ``suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,.zero}`` -> one ``suld`` per element,
  ``sust.b...`` -> one ``sust`` per element, ``sured.b.{add,min,max,and,or}.dim.{u32,s32,b32,u64,s64,b64}`` ->
  ``sured``; ``sust.p.dim{.v2,.v4}.b32`` (formatted: x in elements, words converted to the format) -> ``sust
  {formatted}``, ``sured.p.op.dim.{b32,b64}`` (x in elements, signedness the format's) -> ``sured {formatted}``.

``tex``/``tld4``'s ``d|p`` residency predicate: p = true (every texel xcc holds is resident).  Their optional
``{e}`` texel offsets (.s32, packed 4 bits per axis into one word) and ``f`` depth compare value (.f32) follow
the level of detail as the last arguments (attrs ``off``, ``dc``).

Independent mode: ``[h, s, c]`` -> the handle combined with the sampler value, ``h | s``
(:meth:`TextureLowering._tx_sampled`): ``s`` an initialised module ``.samplerref`` (its fields read at compile
time, a constant), an uninitialised one (the value the host wrote into it), a ``.samplerref`` kernel parameter
or a ``.u64`` register holding a sampler value (``mov.u64 %rd, smp`` reads one); ``txq.{filter_mode,addr_mode_N,
force_unnormalized_coords}.b32 d, [s]`` -> their constants (a run-time sampler's: its bits shifted out).

Unified mode's initialised ``.texref`` (``{ filter_mode = linear, addr_mode_0 = clamp_ogl }``): each use ORs its
fields into the handle it holds as a sampler's, the fields it does not name marked kept (:func:`sampler_of`).

Refused with a located message: ``.v8``.
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError, UnsupportedError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.scopes import RegVar
from xcc.ir.types import PRED, ptx_type
from xcc.semantics.texture import (
    ADDR_KEYWORDS,
    CLAMP,
    KEEP_FILTER,
    KEEP_MODE,
    OPAQUE_KEYWORDS,
    SAMPLER_MODES,
    SUQ_QUERIES,
    TXQ_QUERIES,
    field_keyword,
    keyword_code,
    sampler_bits,
    sampler_word,
)

_DIMS = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True), "cube": (3, False),
         "acube": (3, True)}
_SURFACE_DIMS = ("1d", "2d", "3d", "a1d", "a2d")
_MS_DIMS = ("2dms", "a2dms")  # multisample: tex only, surfaces refuse them
_SURF_MODES = ("trap", "clamp", "zero")
_SURF_WIDTH = {"b8": 1, "b16": 2, "b32": 4, "b64": 8}
_SURED_OPS = ("add", "min", "max", "and", "or")
_SAMPLER_QUERIES = ("force_unnormalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2")
_CACHE_OPS = ("ca", "cg", "cs", "cv", "lu", "wb", "wt")  # cache operators: hints, no effect on the result


def inst_dim(inst) -> str | None:
    return next((m for m in inst.modifiers if m in _DIMS or m in _MS_DIMS), None)


def _text(inst) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


_TEXREF_DECLARED = ("width", "height", "depth", "channel_data_type", "channel_order")


def sampler_of(decl: ast.VarDecl) -> int:
    """The sampler word (:func:`xcc.semantics.texture.sampler_word`) of an initialised ``.samplerref``: its
    ``addr_mode_N`` (wrap, mirror, clamp_to_edge, clamp_to_border, clamp_ogl), ``filter_mode`` (nearest,
    linear) and ``force_unnormalized_coords`` (0, 1), a later field overriding an earlier one.  *A field it does
    not name reads clamp_to_edge, nearest, 0* (the manual gives no defaults; OpenCL's unnamed ones are its zeros:
    CLK_ADDRESS_NONE, which needs in-range coordinates, CLK_FILTER_NEAREST).  An initialised ``.texref``
    (unified mode): the same fields but ``force_unnormalized_coords``; *one it does not name keeps the bound
    texture object's own* (the word's keep bits, :data:`xcc.semantics.texture.KEEP_MODE`); its
    ``normalized_coords = 0`` / ``1`` forces unnormalized / normalized coordinates (the word's bit 7 / 15); ``width``, ``height``, ``depth``,
    ``channel_data_type``, ``channel_order`` (any value) are declarations the bound object's own properties
    override (*xcc's choice*: the object comes from the driver API, and ``txq`` answers the object's).

    An address or filter mode given as an integer, or as the other group's keyword, reads as ptxas 13.0 stores it
    (:data:`xcc.semantics.texture.OPAQUE_KEYWORDS`): 1-7 name the keywords in ptxas's order, any other integer
    unsets the field (the default above again); a filter mode that stores a code other than nearest's 0 or
    linear's 1 (``filter_mode = 3`` .. ``5``, ``= clamp_ogl`` ..) names no filter and is refused."""
    modes, linear, force, normalize = [CLAMP, CLAMP, CLAMP], False, False, False
    texref = decl.type == "texref"
    keep = (KEEP_MODE[0] | KEEP_MODE[1] | KEEP_MODE[2] | KEEP_FILTER) if texref else 0
    for f in decl.init or ():
        where = f.loc or decl.loc
        kw = opaque_value(decl, f)
        if texref and f.name in _TEXREF_DECLARED:  # declarations: the bound object's own properties win
            continue
        if texref and f.name == "normalized_coords":
            if f.value not in (0, 1):
                raise PtxSemanticError(f"'{decl.name}': normalized_coords = {f.value} takes 0 or 1", where)
            force, normalize = f.value == 0, f.value == 1
            continue
        if texref and f.name not in ("addr_mode_0", "addr_mode_1", "addr_mode_2", "filter_mode"):
            raise UnsupportedError(f"'{decl.name}': a .texref initialiser's field {f.name} is not supported yet "
                                   "(xcc takes filter_mode, addr_mode_0..2, normalized_coords, width, height, depth, "
                                   "channel_data_type, channel_order)", where)
        if f.name.startswith("addr_mode_"):
            axis = int(f.name[-1])
            if kw is None:  # unset: the default again
                modes[axis] = CLAMP
                keep |= KEEP_MODE[axis] if texref else 0
                continue
            modes[axis] = SAMPLER_MODES[ADDR_KEYWORDS[keyword_code(kw)]]
            keep &= ~KEEP_MODE[axis]
        elif f.name == "filter_mode":
            if kw is None:
                linear = False
                keep |= KEEP_FILTER if texref else 0
                continue
            code = keyword_code(kw)
            if code > 1:
                raise UnsupportedError(f"'{decl.name}': filter_mode = {f.value} names no filter (ptxas stores filter "
                                       f"mode {code} for it; nearest is 0, linear 1)", where)
            linear = code == 1
            keep &= ~KEEP_FILTER
        elif f.name == "force_unnormalized_coords":
            if f.value not in (0, 1):
                raise PtxSemanticError(f"'{decl.name}': force_unnormalized_coords takes 0 or 1", where)
            force = f.value == 1
    return sampler_word(tuple(modes), linear, force, keep, normalize)


def opaque_value(decl: ast.VarDecl, f: ast.InitField) -> str | None:
    """The keyword field ``f``'s value names (:func:`xcc.semantics.texture.field_keyword`; None: unset), a
    located error for a name that is none."""
    try:
        return field_keyword(f.value)
    except ValueError:
        raise PtxSemanticError(f"'{decl.name}': {f.name} = {f.value}: unknown value '{f.value}' (an integer, or "
                               f"{', '.join(OPAQUE_KEYWORDS)})", f.loc or decl.loc) from None


class TextureLowering:
    def _tx_refuse(self, inst, why: str):
        return self.error(f"'{_text(inst)}': {why} is not supported yet (xcc runs unified-mode texture and "
                          "surface objects, and independent mode's samplers: "
                          "docs/semantics.md, 'Textures and surfaces')")

    def _tx_handle(self, op, sampling: bool = True):
        """The 64-bit handle an address operand's base names: a register, a kernel parameter or a module
        ``.texref``-like variable (which holds a handle; an initialised ``.texref``'s fields ORed in as a
        sampler's unless not ``sampling``: istypep asks about the object itself)."""
        u64 = ptx_type("u64")
        if isinstance(op, RegVar):
            v = self.b.read(op, self.b.block)
            if v.type.bits != 64:
                v = self.emit("cvt", u64, [v], u64, src=f"u{v.type.bits}").result
            return v
        if isinstance(op, ast.Symbol):
            if op.name in self.b.param_by_name:
                p = self.b.param_by_name[op.name]
                return self.emit("ld_param", u64, [], u64, offset=p.offset).result
            var = self.b.local_vars.get(op.name) or self.b.module_vars.get(op.name)
            if var is not None and var.space == "global":
                h = self.emit("ld", u64, [self.address_of(op.name)], u64, space="global", offset=0).result
                decl = self.b.samplers.get(op.name) if op.name not in self.b.local_vars else None
                if sampling and decl is not None and decl.type == "texref":  # its initialiser's fields
                    h = self.emit("or", u64, [h, Const(u64, sampler_bits(sampler_of(decl)))], u64).result
                return h
        raise self.error(f"'{_text(self.inst)}': expected a texture or surface handle (a .u64 register, a kernel "
                         "parameter or a .texref/.surfref variable)", PtxSemanticError)

    def _tx_operand(self, inst, op, want_coords: bool, sampler_ok: bool = False):
        """(handle, coordinate operands) of ``[h]`` / ``[h, {c...}]``; ``sampler_ok`` (tex, tld4): also ``[h, s,
        {c...}]``, the sampler ``s`` an initialised ``.samplerref`` (:meth:`_tx_sampled`)."""
        if not isinstance(op, ast.Address):
            raise self.error(f"'{_text(inst)}': expected [handle{', {coordinates}' if want_coords else ''}]",
                             PtxSemanticError)
        if len(op.elements) > 1 + sampler_ok or (op.elements and not want_coords):
            raise self._tx_refuse(inst, "independent mode (a separate sampler operand)")
        if op.offset:
            raise self.error(f"'{_text(inst)}': a handle operand takes no offset", PtxSemanticError)
        h = self._tx_handle(op.base)
        if not want_coords:
            return h, []
        if not op.elements:
            raise self.error(f"'{_text(inst)}': expected [handle, {{coordinates}}]", PtxSemanticError)
        if len(op.elements) == 2:
            h = self._tx_sampled(inst, h, op.elements[0])
        c = op.elements[-1]
        return h, list(c.elements if isinstance(c, ast.Vector) else (c,))

    def sampler_value(self, op):
        """The sampler value (``SAMPLED | fields << 48``, :data:`xcc.semantics.texture.SAMPLED`; docs/semantics.md)
        a ``.samplerref`` name ``op`` stands for, or None when it names none: an initialised module variable's is
        a constant (:func:`sampler_of`); an uninitialised module variable's the 8 bytes it holds (the host writes
        one, ``xcc.runtime.sampler``), a ``.samplerref`` kernel parameter's its value."""
        if not isinstance(op, ast.Symbol):
            return None
        u64 = ptx_type("u64")
        decl = self.b.samplers.get(op.name)
        if decl is not None and decl.type == "samplerref" and op.name not in self.b.local_vars:
            if decl.init is not None:
                return Const(u64, sampler_bits(sampler_of(decl)))
            return self.emit("ld", u64, [self.address_of(op.name)], u64, space="global", offset=0).result
        p = self.b.param_by_name.get(op.name)
        if p is not None and p.type == "samplerref":
            return self.emit("ld_param", u64, [], u64, offset=p.offset).result
        return None

    def opaque_value(self, op):
        """The value ``mov.u64 d, x`` gives for an opaque name ``x``, or None when ``x`` names no opaque variable or
        parameter: a ``.samplerref``'s sampler value (:meth:`sampler_value`); a module ``.texref``/``.surfref``
        variable's or kernel parameter's the handle it holds (an initialised ``.texref``'s fields ORed in, as a
        texture instruction naming it would use it), not the variable's address."""
        s = self.sampler_value(op)
        if s is not None or not isinstance(op, ast.Symbol):
            return s
        p = self.b.param_by_name.get(op.name)
        if (op.name in self.b.handles and op.name not in self.b.local_vars) or \
                (p is not None and p.type in ("texref", "surfref")):
            return self._tx_handle(op)
        return None

    def _tx_sampled(self, inst, h, sampler):
        """Independent mode: the texture handle combined with the sampler (``h | s``, the sampler's fields in
        bits 48-55 and bit 63 set; :data:`xcc.semantics.texture.SAMPLED`): a ``.samplerref`` name
        (:meth:`sampler_value`: an initialised one's fields read at compile time) or a 64-bit register holding
        a sampler value."""
        u64 = ptx_type("u64")
        if isinstance(sampler, RegVar):
            if sampler.type.bits != 64:
                raise self.error(f"'{_text(inst)}': the sampler operand must be a .samplerref or a .u64 register "
                                 f"(got a {sampler.type.bits}-bit register)", PtxSemanticError)
            s = self.b.read(sampler, self.b.block)
        else:
            s = self.sampler_value(sampler)
        if s is None:
            raise self.error(f"'{_text(inst)}': the sampler operand must be a .samplerref (a module variable or a "
                             "kernel parameter) or a .u64 register", PtxSemanticError)
        return self.emit("or", u64, [h, s], u64).result

    def _tx_dests(self, inst, op, n: int) -> list:
        ds = list(op.elements) if isinstance(op, ast.Vector) else [op]
        if len(ds) != n:
            raise self.error(f"'{_text(inst)}': expected {n} destination(s), got {len(ds)}", PtxSemanticError)
        return ds

    def _tx_geometry(self, inst, coords, surface: bool):
        """(dims, layered, coordinate operands without the ignored ones, layer operand or None)."""
        dim = inst_dim(inst)
        if dim in _MS_DIMS:
            raise self._tx_refuse(inst, f"the .{dim} geometry")
        if dim is None:
            raise self.error(f"'{_text(inst)}': missing geometry (.1d, .2d, .3d, .a1d, .a2d)", PtxSemanticError)
        if surface and dim not in _SURFACE_DIMS:
            raise self.error(f"'{_text(inst)}': surfaces take .1d, .2d, .3d, .a1d or .a2d", PtxSemanticError)
        dims, layered = _DIMS[dim]
        need = dims + layered
        if len(coords) < need:
            raise self.error(f"'{_text(inst)}': .{dim} needs {need} coordinate(s), got {len(coords)}",
                             PtxSemanticError)
        layer = coords[0] if layered else None
        xs = coords[1:1 + dims] if layered else coords[:dims]
        return dim, dims, layered, xs, layer

    def _tx_check_mods(self, inst, known: set):
        extra = [m for m in inst.modifiers if m not in known]
        if extra:
            raise self._tx_refuse(inst, "modifier(s) " + ", ".join(f".{m}" for m in extra))

    def op_tex(self, inst, gather: str | None = None) -> None:
        ms = inst.modifiers
        dests, resident = inst.operands[0] if inst.operands else None, None
        if isinstance(dests, ast.Vector) and len(dests.elements) == 2 and isinstance(dests.elements[0], ast.Vector):
            dests, resident = dests.elements  # d|p: every texel is resident in xcc's memory, so p = true
        types = [m for m in ms if m in ("f32", "s32", "u32", "f16", "f16x2")]
        dim = inst_dim(inst)
        known = {"v4", "v2", "f32", "s32", "u32", "f16", "f16x2", *(_DIMS if dim not in _MS_DIMS else ()),
                 *(_MS_DIMS), *(() if gather else ("base", "level", "grad"))}
        mip = next((m for m in ms if m in ("base", "level", "grad")), None)
        if gather:
            known.add(gather)
        self._tx_check_mods(inst, known)
        vec = 4 if "v4" in ms else 2 if "v2" in ms else 0
        if len(types) != 2 or types[1] not in ("f32", "s32") or vec != (2 if types[0] == "f16x2" else 4) or (
                gather and types[0] in ("f16", "f16x2")):
            raise self._tx_refuse(inst, "this form (xcc runs .v4.{f32,s32,u32,f16}.{f32,s32} and .v2.f16x2)")
        if gather and types[1] != "f32":
            raise self.error(f"'{_text(inst)}': tld4 takes .f32 coordinates", PtxSemanticError)
        nmip = 2 + (mip == "level") + 2 * (mip == "grad")
        tail = list(inst.operands[nmip:])  # {, e} {, f}: texel offsets (a vector), depth compare (a scalar)
        offs = tail.pop(0) if tail and isinstance(tail[0], ast.Vector) else None
        dcop = tail.pop(0) if tail and not isinstance(tail[0], (ast.Vector, ast.Address)) else None
        if len(inst.operands) < nmip or tail or isinstance(dests, ast.Address):
            raise self.error(f"'{_text(inst)}': expected d, [handle, {{coordinates}}]{', lod' if mip == 'level' else ''}"
                             f"{', dPdx, dPdy' if mip == 'grad' else ''} {{, {{offsets}}}} {{, depth compare}}",
                             PtxSemanticError)
        h, coords = self._tx_operand(inst, inst.operands[1], True, sampler_ok=True)
        sample = []
        if dim in _MS_DIMS:  # multisample: {sample, x, y, -} / {layer, sample, x, y}, .s32 (PTX ISA, tex)
            if gather or mip or types[1] != "s32":
                raise self.error(f"'{_text(inst)}': .{dim} takes .s32 coordinates (no tld4, .base, .level, .grad)",
                                 PtxSemanticError)
            if len(coords) != 4:
                raise self.error(f"'{_text(inst)}': .{dim} needs a four-element coordinate vector", PtxSemanticError)
            ms_layered = dim == "a2dms"
            sample = [self.read(coords[int(ms_layered)], ptx_type("s32"))]
            coords = [coords[0], *coords[2:4]] if ms_layered else list(coords[1:3])
            dim = "a2d" if ms_layered else "2d"
            dims, layered, xs, layer = 2, ms_layered, coords[1:] if ms_layered else coords, (
                coords[0] if ms_layered else None)
        else:
            dim, dims, layered, xs, layer = self._tx_geometry(inst, coords, False)
        if gather and dim not in ("2d", "a2d", "cube", "acube"):
            raise self.error(f"'{_text(inst)}': tld4 takes .2d, .a2d, .cube or .acube", PtxSemanticError)
        if dim in ("cube", "acube") and types[1] != "f32":
            raise self.error(f"'{_text(inst)}': .{dim} takes .f32 coordinates", PtxSemanticError)
        if offs is not None and dim in ("cube", "acube"):
            raise self.error(f"'{_text(inst)}': .{dim} takes no texel offsets (PTX ISA, tex)", PtxSemanticError)
        if dcop is not None and (dim == "3d" or sample or types[1] != "f32"):
            raise self.error(f"'{_text(inst)}': a depth compare takes .f32 coordinates and no .3d or multisample "
                             "geometry (PTX ISA, tex)", PtxSemanticError)
        # (.f16 results are typed by their bits: they are no half arithmetic for the selector's half rules)
        dt, ct = ptx_type({"f16": "b16", "f16x2": "b32"}.get(types[0], types[0])), ptx_type(types[1])
        cvals = [self.read(c, ct) for c in xs]
        lvals = [self.read(layer, ptx_type("u32"))] if layer is not None else []
        extra = {"gather": "rgba".index(gather)} if gather else {}
        if types[0] in ("f16", "f16x2"):
            extra["half"] = types[0]
        if sample:  # the sample index after the coordinates
            extra["ms"] = True
        tail_vals = []  # after the level of detail: the packed offsets, the depth compare value
        if offs is not None:
            extra["off"] = True
            tail_vals.append(self._tx_offsets(inst, offs, dims))
        if dcop is not None:
            extra["dc"] = True
            tail_vals.append(self.read(dcop, ptx_type("f32")))
        lod = []
        if mip is not None:
            extra["mip"] = "level" if mip == "grad" else mip
            if mip == "level":
                lod = [self.read(inst.operands[2], ptx_type("f32"))]
            if mip == "grad":  # the level of detail of the gradients, then as tex.level
                lod = [self._tx_grad(inst, h, dims, cvals if dim in ("cube", "acube") else None)]
        for k, d in enumerate(self._tx_dests(inst, dests, vec)):
            if isinstance(d, ast.Sink):
                continue
            rt = d.type if isinstance(d, RegVar) else dt
            v = self.emit("tex", dt, [h, *lvals, *cvals, *sample, *lod, *tail_vals], rt, dim=dim, ctype=types[1],
                          comp=k,
                          layered=layered, **extra)
            self.write(d, v.result)
        if resident is not None:
            self.write(resident, Const(PRED, 1))

    def _tx_offsets(self, inst, op, dims: int):
        """``{e}``'s texel offsets (.s32, the first ``dims`` elements) packed 4 bits each, x in bits 0-3
        (:func:`xcc.semantics.texture.unpack_offsets`: a value outside -8..+7 wraps)."""
        es = list(op.elements)
        if len(es) < dims or any(isinstance(e, ast.Sink) for e in es[:dims]):
            raise self.error(f"'{_text(inst)}': expected a texel offset vector of {dims} element(s)",
                             PtxSemanticError)
        u32 = ptx_type("u32")
        word = None
        for k, e in enumerate(es[:dims]):
            v = self.read(e, ptx_type("s32"))
            v = self.emit("and", u32, [v, Const(u32, 0xF)], u32).result
            if k:
                v = self.emit("shl", u32, [v, Const(u32, 4 * k)], u32).result
            word = v if word is None else self.emit("or", u32, [word, v], u32).result
        return word

    def _tx_grad(self, inst, h, dims: int, direction=None):
        """``tex_lod`` of ``tex.grad``'s gradient vectors (operands 2 and 3: .v2.f32 for 1d/2d, .v4.f32 for 3d,
        cube and acube, the fourth element ignored); ``direction``: a cube fetch's, the gradients measured on
        its face (``tex_lod {cube}``, the direction first)."""
        f32, grads = ptx_type("f32"), []
        for op in inst.operands[2:4]:
            es = list(op.elements) if isinstance(op, ast.Vector) else [op]
            if len(es) < dims:
                raise self.error(f"'{_text(inst)}': expected gradient vectors of {dims} element(s)", PtxSemanticError)
            grads.append([self.read(e, f32) for e in es[:dims]])
        if direction is not None:
            return self.emit("tex_lod", f32, [h, *direction, *grads[0], *grads[1]], f32, cube=True).result
        return self.emit("tex_lod", f32, [h, *grads[0], *grads[1]], f32).result

    def op_tld4(self, inst) -> None:
        comp = next((m for m in inst.modifiers if m in ("r", "g", "b", "a")), None)
        if comp is None:
            raise self.error(f"'{_text(inst)}': missing component (.r, .g, .b, .a)", PtxSemanticError)
        self.op_tex(inst, gather=comp)

    def _query(self, inst, queries, surface: bool) -> None:
        q = next((m for m in inst.modifiers if m in queries), None)
        level = "level" in inst.modifiers and not surface
        self._tx_check_mods(inst, {*queries, "b32", *(("level",) if level else ())})
        if level and q not in ("width", "height", "depth"):
            raise self.error(f"'{_text(inst)}': txq.level queries .width, .height or .depth", PtxSemanticError)
        if q is None or "b32" not in inst.modifiers or len(inst.operands) != 2 + level:
            form = "txq.level.query.b32 d, [handle], lod" if level else f"{inst.opcode}.query.b32 d, [handle]"
            raise self.error(f"'{_text(inst)}': expected {form}", PtxSemanticError)
        u32 = ptx_type("u32")
        addr = inst.operands[1]
        decl = self.b.samplers.get(addr.base.name) if isinstance(addr, ast.Address) and isinstance(
            addr.base, ast.Symbol) and not surface else None
        if decl is not None and decl.type != "samplerref":  # an initialised .texref: the texture's txq
            decl = None
        sv = None
        if isinstance(addr, ast.Address) and not surface and (decl is None or decl.init is None):
            decl, sv = None, self.sampler_value(addr.base)  # a .samplerref parameter or uninitialised variable
        if sv is not None:  # a run-time sampler value: its fields (bits 48-55) shifted out
            if q not in _SAMPLER_QUERIES or level:
                raise self.error(f"'{_text(inst)}': a .samplerref answers .force_unnormalized_coords, "
                                 ".filter_mode and .addr_mode_0..2 (a texture query needs a .texref or a .u64 "
                                 "register)", PtxSemanticError)
            u64 = ptx_type("u64")
            shift, mask = ((54, 1) if q == "filter_mode" else (55, 1) if q == "force_unnormalized_coords"
                           else (48 + 2 * int(q[-1]), 3))
            v = self.emit("shr", u64, [sv, Const(u64, shift)], u64).result
            v = self.emit("and", u64, [v, Const(u64, mask)], u64).result
            if q.startswith("addr_mode_"):  # the mode's third bit (clamp_ogl, 4): bit 56 + N
                hi = self.emit("shr", u64, [sv, Const(u64, 54 + int(q[-1]))], u64).result
                v = self.emit("or", u64, [v, self.emit("and", u64, [hi, Const(u64, 4)], u64).result], u64).result
            self.write(inst.operands[0], self.emit("cvt", u32, [v], u32, src="u64").result)
            return
        if decl is not None:  # an initialised .samplerref: its fields are known at compile time
            if q not in _SAMPLER_QUERIES or level:
                raise self.error(f"'{_text(inst)}': a .samplerref answers .force_unnormalized_coords, "
                                 ".filter_mode and .addr_mode_0..2 (a texture query needs a .texref or a .u64 "
                                 "register)", PtxSemanticError)
            w = sampler_of(decl)
            val = {"filter_mode": w >> 6 & 1, "force_unnormalized_coords": w >> 7 & 1}.get(q)
            mode = None if val is not None else w >> 2 * int(q[-1]) & 3 | (w >> 8 + int(q[-1]) & 1) << 2
            self.write(inst.operands[0], Const(u32, mode if val is None else val))
            return
        h, _ = self._tx_operand(inst, inst.operands[1], False)
        lod = [self.read(inst.operands[2], ptx_type("s32"))] if level else []
        v = self.emit("txq", u32, [h, *lod], u32, query=q, surface=surface)
        self.write(inst.operands[0], v.result)

    def op_txq(self, inst) -> None:
        self._query(inst, TXQ_QUERIES, False)

    def op_suq(self, inst) -> None:
        self._query(inst, SUQ_QUERIES, True)

    def op_istypep(self, inst) -> None:
        kind = next((m for m in inst.modifiers if m in ("texref", "samplerref", "surfref")), None)
        if kind is None or len(inst.operands) != 2:
            raise self.error(f"'{_text(inst)}': expected istypep.{{texref,samplerref,surfref}} p, a",
                             PtxSemanticError)
        src = inst.operands[1]
        h = self._tx_handle(src.base if isinstance(src, ast.Address) else src, sampling=False)
        v = self.emit("istypep", PRED, [h], PRED, kind=kind)
        self.write(inst.operands[0], v.result)

    def _surface(self, inst, what: str, extra=()) -> tuple:
        """(handle, width, vector length, mode, coordinate values, layer values, attrs) of a surface access."""
        ms = inst.modifiers
        if "p" in ms and inst.opcode == "suld":
            raise self.error(f"'{_text(inst)}': suld has no formatted (.p) form: suld.b", PtxSemanticError)
        if "p" in ms and inst.opcode == "sust" and "b32" not in ms:
            raise self.error(f"'{_text(inst)}': sust.p stores .b32 words", PtxSemanticError)
        if "b" not in ms and "p" not in ms:
            raise self.error(f"'{_text(inst)}': expected {inst.opcode}.b", PtxSemanticError)
        width_names = [m for m in ms if m in _SURF_WIDTH or m in ("u32", "s32", "u64", "s64")]
        self._tx_check_mods(inst, {"b", "p", "v2", "v4", *_SURF_WIDTH, *_SURF_MODES, *_DIMS, *_MS_DIMS,
                                   *_CACHE_OPS, *extra})
        if len(width_names) != 1:
            raise self.error(f"'{_text(inst)}': expected one element type", PtxSemanticError)
        vec = 4 if "v4" in ms else 2 if "v2" in ms else 1
        mode = next((m for m in ms if m in _SURF_MODES), "trap")
        addr = inst.operands[1 if what == "load" else 0]
        h, coords = self._tx_operand(inst, addr, True)
        dim, dims, layered, xs, layer = self._tx_geometry(inst, coords, True)
        s32 = ptx_type("s32")
        cvals = [self.read(c, s32) for c in xs]
        lvals = [self.read(layer, s32)] if layer is not None else []
        wname = width_names[0]
        width = _SURF_WIDTH.get(wname) or int(wname[1:]) // 8
        at = dict(dim=dim, mode=mode, layered=layered, width=width, vec=vec, **({"formatted": True} if "p" in ms else {}))
        return h, wname, width, vec, [*lvals, *cvals], at

    def op_suld(self, inst) -> None:
        if len(inst.operands) != 2:
            raise self.error(f"'{_text(inst)}': expected suld.b... d, [handle, {{coordinates}}]", PtxSemanticError)
        h, _, width, vec, cs, at = self._surface(inst, "load")
        t = ptx_type(f"b{8 * width}")
        for k, d in enumerate(self._tx_dests(inst, inst.operands[0], vec)):
            if isinstance(d, ast.Sink):
                continue
            rt = d.type if isinstance(d, RegVar) else ptx_type("b64" if width == 8 else "b32")
            v = self.emit("suld", t, [h, *cs], rt, comp=k, **at)
            self.write(d, v.result)

    def op_sust(self, inst) -> None:
        if len(inst.operands) != 2:
            raise self.error(f"'{_text(inst)}': expected sust.b... [handle, {{coordinates}}], a", PtxSemanticError)
        h, _, width, vec, cs, at = self._surface(inst, "store")
        t = ptx_type(f"b{8 * width}")
        for k, s in enumerate(self._tx_dests(inst, inst.operands[1], vec)):
            self.emit("sust", t, [h, *cs, self.read(s, t)], None, comp=k, **at)

    def op_sured(self, inst) -> None:
        op = next((m for m in inst.modifiers if m in _SURED_OPS), None)
        if op is None or len(inst.operands) != 2:
            raise self.error(f"'{_text(inst)}': expected sured.b.{{add,min,max,and,or}}... [handle, {{coordinates}}]"
                             ", a", PtxSemanticError)
        h, wname, width, vec, cs, at = self._surface(inst, "store", extra=(*_SURED_OPS, "u32", "s32", "u64", "s64"))
        if vec != 1:
            raise self.error(f"'{_text(inst)}': sured takes no vector", PtxSemanticError)
        kind = "s" if wname.startswith("s") else "u"
        if "p" in inst.modifiers:  # sured.p: the operation's signedness is the surface format's
            if wname not in ("b32", "b64"):
                raise self.error(f"'{_text(inst)}': sured.p takes .b32 or .b64", PtxSemanticError)
            t = ptx_type(f"u{8 * width}")
            self.emit("sured", t, [h, *cs, self.read(inst.operands[1], t)], None, redop=op, etype=t.name, **at)
            return
        if wname.startswith("b") and op not in ("and", "or"):
            raise self.error(f"'{_text(inst)}': .{op} needs .u32/.s32/.u64/.s64", PtxSemanticError)
        if wname in ("b8", "b16") or width not in (4, 8):
            raise self.error(f"'{_text(inst)}': sured takes 32- or 64-bit elements", PtxSemanticError)
        t = ptx_type(f"{'s' if kind == 's' else 'u'}{8 * width}")
        self.emit("sured", t, [h, *cs, self.read(inst.operands[1], t)], None, redop=op, etype=t.name, **at)
