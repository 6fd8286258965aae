"""Lowering of Hopper's asynchronous machinery and warp-level odds into IR: ``mbarrier``, ``cp.async.bulk``,
``stmatrix``, ``elect.sync``, ``setmaxnreg``, ``griddepcontrol`` (PTX ISA 8.x/9.x).

A mixin of :class:`xcc.ir.lower.InstLowering`: one ``op_<opcode>`` method per PTX opcode.

* ``mbarrier.init [a], count`` -> ``mbar_init``; ``inval`` -> ``mbar_init {inval}``; ``arrive{_drop}
  {.expect_tx}{.noComplete} state, [a]{, count|tx}`` -> ``mbar_arrive(a, count, tx)`` (the state: the
  object before the arrive); ``expect_tx``/``complete_tx [a], n`` -> ``mbar_tx``; ``test_wait``/``try_wait
  {.parity} p, [a], state|parity{, hint}`` -> ``mbar_test`` / ``mbar_wait`` (try_wait suspends the thread
  until the phase completes, :mod:`xcc.sim.mbarrier`); ``pending_count n, state`` -> bits 20-39 of the
  state (:mod:`xcc.semantics.mbarrier`'s layout).  The address is ``.shared::cta`` (``.shared``;
  a ``.shared::cluster`` address from ``mapa`` names another CTA of the cluster, xcc.semantics.cluster) or
  generic (converted with ``cvta.to.shared``).  The ``.release``/``.acquire``/``.relaxed`` and ``.cta``/``.cluster``
  qualifiers order memory no further: the simulator's memory is sequentially consistent.
* Thread-block clusters: ``mapa`` and ``getctarank`` -> IR arithmetic on xcc.semantics.cluster's address
  encoding (``(rank + 1) << 24 | offset``; a generic address through ``cvta``), ``barrier.cluster.arrive`` /
  ``.wait`` -> ``cluster_arrive`` / ``cluster_wait`` (:mod:`xcc.sim.waves` keeps the barrier).
* ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [s], size, [mbar]``,
  ``cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [d], [s], size, [mbar]`` (from this
  CTA's shared memory to a CTA of the cluster: ``bulk_copy {from_shared}``), the global one with
  ``.multicast::cluster`` and a 16-bit ``ctaMask`` after ``[mbar]`` (-> ``bulk_copy_mc``: the bytes and the
  complete-tx land at the same offsets in every CTA of the cluster the mask names) and
  ``cp.async.bulk.global.shared::cta.bulk_group [d], [s], size`` -> ``bulk_copy``; the bulk
  ``commit_group`` / ``wait_group{.read} N`` -> a ``fence`` (the copies are performed when they execute).
* ``stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 [p], {r...}`` -> per matrix a ``shfl.idx`` of the
  row address and a 32-bit store (``.trans``: two 16-bit stores) per lane (:meth:`op_stmatrix`).
* ``cp.reduce.async.bulk.global.shared::cta.bulk_group.op{.noftz}.type [d], [s], size`` -> ``bulk_reduce``
  (performed when it executes, element by element as atomics; .f16/.bf16 as atom.add.noftz/min/max); into a CTA of
  the cluster, ``cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.op.type [d], [s],
  size, [mbar]`` -> ``bulk_reduce {to_shared}`` and a complete-tx of ``size`` bytes on ``mbar``.
* ``cp.async.bulk.tensor`` tile-mode loads (into ``.shared::cluster`` or ``.shared::cta``) -> ``tma_load``, stores -> ``tma_store``; ``cp.reduce.async.bulk
  .tensor`` -> ``tma_store {redop}`` (``.im2col`` loads, ``.im2col_no_offs`` stores and reductions:
  ``{im2col}``); ``cp.async.bulk.prefetch.tensor`` -> ``tma_prefetch`` (performed when they execute,
  :mod:`xcc.sim.tma`).
* ``elect.sync d|p, membermask`` -> the lowest lane of ``activemask & membermask`` (``bfind`` of its lowest
  set bit), ``p = laneid == d``.
* ``setmaxnreg.{inc,dec}.sync.aligned.u32 n`` (n a multiple of 8 in 24 .. 256) and ``griddepcontrol
  .launch_dependents`` / ``.wait``: nothing on xg1 (its register file is not repartitioned between warps;
  dependent grids are never launched early, so every preceding grid has completed).
"""

from __future__ import annotations

from xcc.diagnostics import PtxSemanticError
from xcc.frontend import ast
from xcc.ir.core import Const
from xcc.ir.scopes import RegVar
from xcc.ir.types import PRED, ptx_type
from xcc.semantics.cluster import CLUSTER_RANK_SHIFT, OFFSET_MASK

_SHARED = ("shared", "shared::cta", "shared::cluster")
_REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_REDUCE_TYPES = ("b32", "u32", "s32", "b64", "u64", "s64", "f32", "f64", "f16", "bf16")
# what PTX ISA 9.7.9.25.4.2 (cp.reduce.async.bulk) allows, of the types xcc's atomics reduce
_REDUCE_OK = frozenset({*(("add", t) for t in ("u32", "s32", "u64", "f32", "f64")),
                        *((o, t) for o in ("min", "max") for t in ("u32", "s32", "u64", "s64")),
                        ("inc", "u32"), ("dec", "u32"),
                        *((o, t) for o in ("and", "or", "xor") for t in ("b32", "b64")),
                        *((o, t) for o in ("add", "min", "max") for t in ("f16", "bf16"))})
# ... and into another CTA's shared memory (.shared::cluster.shared::cta.mbarrier::complete_tx::bytes; ptxas 13.0
# accepts exactly these)
_REDUCE_CLUSTER_OK = frozenset({("add", "u32"), ("add", "s32"), ("add", "u64"), ("min", "u32"), ("min", "s32"),
                                ("max", "u32"), ("max", "s32"), ("inc", "u32"), ("dec", "u32"),
                                *((o, "b32") for o in ("and", "or", "xor"))})
_TENSOR_DIMS = ("1d", "2d", "3d", "4d", "5d")
_MB_KINDS = ("init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait",
             "pending_count")


def _text(inst: ast.Instruction) -> str:
    return ".".join((inst.opcode, *inst.modifiers))


class HopperLowering:
    # ----------------------------------------------------------------- helpers
    def _hp_count(self, inst, n: int | tuple[int, ...]) -> None:
        ns = (n,) if isinstance(n, int) else n
        if len(inst.operands) not in ns:
            want = " or ".join(map(str, ns))
            raise self.error(f"'{_text(inst)}' takes {want} operand(s), got {len(inst.operands)}", PtxSemanticError)

    def _hp_shared(self, inst, op):
        """(shared-space base value, offset) of the address operand ``op`` of ``inst``."""
        base, off = self._hp_address(inst, op)
        if not any(m in _SHARED for m in inst.modifiers) and isinstance(op.base, RegVar):
            u64 = ptx_type("u64")  # a generic address: its shared-window offset
            if base.type.bits != 64:
                base = self.emit("cvt", u64, [base], u64, src=f"u{base.type.bits}").result
            base = self.emit("cvta", u64, [base], u64, space="shared", to_generic=False).result
        return base, off

    def _hp_address(self, inst, op):
        """(base value, offset) of the address operand ``op`` of ``inst`` as written (no generic address converted),
        a kernel parameter refused."""
        base, off, param = self._address(op)
        if param is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a shared-memory address", PtxSemanticError)
        return base, off

    # ----------------------------------------------------------------- thread-block clusters
    def op_mapa(self, inst) -> None:
        """``mapa{.shared::cluster}.u32|u64 d, a, rank``: a (shared::cta or generic) address of this CTA's shared
        memory -> the same offset in CTA ``rank`` of the cluster (xcc.semantics.cluster's encoding)."""
        self._hp_count(inst, 3)
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        t = u64 if "u64" in inst.modifiers else u32
        generic = "shared::cluster" not in inst.modifiers and t is u64
        a = self.read(inst.operands[1], t)
        if generic:
            a = self.emit("cvta", u64, [a], u64, space="shared", to_generic=False).result
        if t is u64:
            a = self.emit("cvt", u32, [a], u32, src="u64").result
        r = self.read(inst.operands[2], u32)
        tag = self.emit("add", u32, [r, Const(u32, 1)], u32).result
        tag = self.emit("shl", u32, [tag, Const(u32, CLUSTER_RANK_SHIFT)], u32).result
        off = self.emit("and", u32, [a, Const(u32, OFFSET_MASK)], u32).result
        d = self.emit("or", u32, [tag, off], u32).result
        if t is u64:
            d = self.emit("cvt", u64, [d], u64, src="u32").result
            if generic:
                d = self.emit("cvta", u64, [d], u64, space="shared", to_generic=True).result
        self.write(inst.operands[0], d)

    def op_getctarank(self, inst) -> None:
        """``getctarank{.shared::cluster}.u32|u64 d, a``: the rank of the CTA whose shared memory ``a`` addresses."""
        self._hp_count(inst, 2)
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        t = u64 if "u64" in inst.modifiers else u32
        a = self.read(inst.operands[1], t)
        if "shared::cluster" not in inst.modifiers and t is u64:
            a = self.emit("cvta", u64, [a], u64, space="shared", to_generic=False).result
        if t is u64:
            a = self.emit("cvt", u32, [a], u32, src="u64").result
        field = self.emit("shr", u32, [a, Const(u32, CLUSTER_RANK_SHIFT)], u32).result
        field = self.emit("and", u32, [field, Const(u32, 0xFF)], u32).result
        own = self.emit("sreg", u32, [], u32, name="cluster_ctarank").result
        other = self.emit("sub", u32, [field, Const(u32, 1)], u32).result
        is_own = self.emit("setp", u32, [field, Const(u32, 0)], PRED, cmp="eq").result
        self.write(inst.operands[0], self.emit("selp", u32, [own, other, is_own], u32).result)

    def cluster_barrier(self, inst) -> None:
        """``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` / ``barrier.cluster.wait{.acquire}{.aligned}``
        (every thread of every CTA of the cluster; .relaxed drops only the ordering, which xcc's sequential
        memory gives anyway)."""
        mode = next((m for m in inst.modifiers if m in ("arrive", "wait")), None)
        if mode is None or inst.operands:
            raise self.error(f"'{_text(inst)}': expected barrier.cluster.arrive or barrier.cluster.wait, no "
                             "operands", PtxSemanticError)
        self.emit("cluster_arrive" if mode == "arrive" else "cluster_wait", None, [])

    # ----------------------------------------------------------------- mbarrier
    def op_mbarrier(self, inst) -> None:
        ms = inst.modifiers
        kind = next((m for m in ms if m in _MB_KINDS), None)
        if kind is None or "b64" not in ms and kind != "pending_count":
            raise self.error(f"'{_text(inst)}': expected mbarrier.{{{','.join(_MB_KINDS)}}}...b64", PtxSemanticError)
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        ops = inst.operands
        if kind == "pending_count":
            self._hp_count(inst, 2)
            tok = self.read(ops[1], u64)
            hi = self.emit("shr", u64, [tok, Const(u32, 20)], u64).result
            lo = self.emit("cvt", u32, [hi], u32, src="u64").result
            self.write(ops[0], self.emit("and", u32, [lo, Const(u32, (1 << 20) - 1)], u32).result)
            return
        if kind in ("init", "inval"):
            self._hp_count(inst, 2 if kind == "init" else 1)
            base, off = self._hp_shared(inst, ops[0])
            count = self.read(ops[1], u32) if kind == "init" else Const(u32, 0)
            self.emit("mbar_init", None, [base, count], offset=off, inval=kind == "inval")
            return
        if kind in ("expect_tx", "complete_tx"):
            self._hp_count(inst, 2)
            base, off = self._hp_shared(inst, ops[0])
            self.emit("mbar_tx", None, [base, self.read(ops[1], u32)], offset=off, complete=kind == "complete_tx")
            return
        if kind in ("arrive", "arrive_drop"):
            return self._mb_arrive(inst, kind)
        self._hp_count(inst, (3, 4))
        base, off = self._hp_shared(inst, ops[1])
        parity = "parity" in ms
        tok = self.read(ops[2], u32 if parity else u64)
        if parity:
            tok = self.emit("cvt", u64, [tok], u64, src="u32").result
        if len(ops) == 4:
            self.read(ops[3], u32)  # suspendTimeHint: try_wait waits until the phase completes
        op = "mbar_wait" if kind == "try_wait" else "mbar_test"
        if kind == "test_wait" and len(ops) == 4:
            raise self.error(f"'{_text(inst)}' takes 3 operands (only try_wait has a suspend-time hint)",
                             PtxSemanticError)
        self.write(ops[0], self.emit(op, PRED, [base, tok], PRED, offset=off, parity=parity).result)

    def _mb_arrive(self, inst, kind: str) -> None:
        ms, ops = inst.modifiers, inst.operands
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        tx = "expect_tx" in ms
        nocomp = "noComplete" in ms
        self._hp_count(inst, 3 if tx or nocomp else (2, 3))
        if tx and nocomp:
            raise self.error(f"'{_text(inst)}': .expect_tx and .noComplete do not combine", PtxSemanticError)
        base, off = self._hp_shared(inst, ops[1])
        count, txc = Const(u32, 1), Const(u32, 0)
        if len(ops) == 3:
            v = self.read(ops[2], u32)
            count, txc = (count, v) if tx else (v, txc)
        tok = self.emit("mbar_arrive", u64, [base, count, txc], u64, offset=off, drop=kind == "arrive_drop",
                        nocomplete=nocomp)
        self.write(ops[0], tok.result)

    # ----------------------------------------------------------------- cp.async.bulk
    def _cp_bulk(self, inst) -> None:
        ms = inst.modifiers
        u32 = ptx_type("u32")
        if any(m in ms for m in ("commit_group", "wait_group")):
            self._hp_count(inst, 1 if "wait_group" in ms else 0)
            if "wait_group" in ms:  # any integer N: ptxas 13.0 (sm_90a SASS) waits with DEPBAR.LE SB0, N for
                # 0 <= N <= 63 and with 0x3f for any other N, negative ones included; N orders nothing here
                self._imm(inst.operands[0], "N", -(1 << 63))
            self.emit("fence", None, [], scope="cta")  # the bulk copies are complete when they execute
            return
        known = {"async", "bulk", "shared::cluster", "global", "shared::cta", "mbarrier::complete_tx::bytes",
                 "bulk_group", "L2::cache_hint", "multicast::cluster"}
        extra = [m for m in ms if m not in known]
        s2c = ms[2:4] == ("shared::cluster", "shared::cta") and "mbarrier::complete_tx::bytes" in ms
        to_cta = ms[2:4] == ("shared::cta", "global")  # PTX ISA 8.6: the executing CTA's memory, the same copy
        g2s = (ms[2:4] == ("shared::cluster", "global") or to_cta) and "mbarrier::complete_tx::bytes" in ms or s2c
        s2g = ms[2:4] == ("global", "shared::cta") and "bulk_group" in ms
        multicast = "multicast::cluster" in ms
        if extra or not (g2s or s2g) or (s2c or to_cta) and multicast or s2c and "L2::cache_hint" in ms \
                or s2g and multicast:
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (supported: cp.async.bulk"
                             ".shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster}, "
                             "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes, "
                             "cp.async.bulk.shared::cluster"
                             ".shared::cta.mbarrier::complete_tx::bytes and cp.async.bulk.global.shared::cta"
                             ".bulk_group)")
        ops = list(inst.operands)
        if "L2::cache_hint" in ms:
            ops = ops[:-1]
        want = (4 if g2s else 3) + multicast
        if len(ops) != want:
            raise self.error(f"'{_text(inst)}' takes {want} operands (and an optional cache policy), got "
                             f"{len(ops)}", PtxSemanticError)
        if multicast:  # [dst], [src], size, [mbar], ctaMask
            dst, doff = self._hp_shared(inst, ops[0])
            src, soff, sp = self._address(ops[1])
            mbar, moff = self._hp_shared(inst, ops[3])
            if sp is not None:
                raise self.error(f"'{_text(inst)}': a kernel parameter is not a global address", PtxSemanticError)
            self.emit("bulk_copy_mc", None, [dst, src, self.read(ops[2], u32), mbar, self.read(ops[4], ptx_type("u16"))],
                      dst_offset=doff, src_offset=soff, mbar_offset=moff)
            return
        dst, doff, dp = self._address(ops[0])
        src, soff, sp = self._address(ops[1])
        if dp is not None or sp is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a global or shared address",
                             PtxSemanticError)
        size = self.read(ops[2], u32)
        mbar, moff = (self._address(ops[3])[:2] if g2s else (Const(u32, 0), 0))
        self.emit("bulk_copy", None, [dst, src, size, mbar], to_shared=g2s, dst_offset=doff, src_offset=soff,
                  mbar_offset=moff, **({"from_shared": True} if s2c else {}))

    def _cp_reduce_bulk(self, inst) -> None:
        """``cp.reduce.async.bulk.global.shared::cta.bulk_group.op{.noftz}.type [d], [s], size{, policy}`` and
        ``cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.op.type [d], [s], size,
        [mbar]`` (-> ``bulk_reduce {to_shared}`` then a complete-tx of ``size`` bytes on ``mbar``, of the
        destination's CTA).  ``.add`` on ``.f16``/``.bf16`` needs ``.noftz`` (subnormals kept), as ptxas requires."""
        ms = inst.modifiers
        op = next((m for m in ms if m in _REDUCE_OPS), None)
        t = next((m for m in ms if m in _REDUCE_TYPES), None)
        s2c = ms[3:5] == ("shared::cluster", "shared::cta") and "mbarrier::complete_tx::bytes" in ms
        s2g = ms[3:5] == ("global", "shared::cta") and "bulk_group" in ms
        known = {"reduce", "async", "bulk", "shared::cta", op, t,
                 *(("shared::cluster", "mbarrier::complete_tx::bytes") if s2c else
                   ("global", "bulk_group", "L2::cache_hint", "noftz"))}
        if not (s2c or s2g) or any(m not in known for m in ms) or op is None or t is None \
                or (op, t) not in (_REDUCE_CLUSTER_OK if s2c else _REDUCE_OK):
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (supported: cp.reduce.async.bulk"
                             ".global.shared::cta.bulk_group with .add/.min/.max/.inc/.dec/.and/.or/.xor on 32- and "
                             "64-bit integers, .add on .f32/.f64 and .add.noftz/.min/.max on .f16/.bf16, and cp.reduce"
                             ".async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes with .add on "
                             ".u32/.s32/.u64, .min/.max on .u32/.s32, .inc/.dec on .u32, .and/.or/.xor on .b32, as "
                             "PTX allows them)")
        if t in ("f16", "bf16") and op == "add" and "noftz" not in ms:
            raise self.error(f"'{_text(inst)}': .add on .{t} needs .noftz", PtxSemanticError)
        ops = list(inst.operands)
        if "L2::cache_hint" in ms:
            ops = ops[:-1]
        if len(ops) != (4 if s2c else 3):
            raise self.error(f"'{_text(inst)}' takes {4 if s2c else 3} operands"
                             + ("" if s2c else " (and an optional cache policy)"), PtxSemanticError)
        dst, doff, dp = self._address(ops[0])
        src, soff, sp = self._address(ops[1])
        if dp is not None or sp is not None:
            raise self.error(f"'{_text(inst)}': a kernel parameter is not a global or shared address",
                             PtxSemanticError)
        size = self.read(ops[2], ptx_type("u32"))
        self.emit("bulk_reduce", None, [dst, src, size], redop=op, etype=t, dst_offset=doff, src_offset=soff,
                  **({"to_shared": True} if s2c else {}))
        if s2c:
            mbar, moff = self._address(ops[3])[:2]
            self.emit("mbar_tx", None, [mbar, size], offset=moff, complete=True)

    def _tensor_operand(self, inst, op, rank: int):
        """(tensor map's generic address, coordinate values) of ``[tensorMap, {c0, ...}]``."""
        coords = op.elements[0].elements if isinstance(op, ast.Address) and len(op.elements) == 1 \
            and isinstance(op.elements[0], ast.Vector) else None
        if coords is None or len(coords) != rank or op.offset:
            raise self.error(f"'{_text(inst)}': expected [tensorMap, {{{rank} coordinate(s)}}]", PtxSemanticError)
        u32, u64 = ptx_type("u32"), ptx_type("u64")
        if isinstance(op.base, ast.Symbol) and op.base.name in self.b.param_by_name:  # ptxas: state space mismatch
            raise self.error(f"'{_text(inst)}': the tensor map is a generic or .global address, not a kernel "
                             "parameter's name (take its address with cvta.param or mov first)", PtxSemanticError)
        tmap = self.read(op.base, u64) if isinstance(op.base, RegVar) else self.address_of(op.base.name)
        return tmap, [self.read(c, u32) for c in coords]

    def _tensor_ops(self, inst, want: int) -> tuple[list, int]:
        """(operands without the cache policy, rank) of a tensor copy taking ``want`` operands."""
        ms = inst.modifiers
        dims = next((m for m in ms if m in _TENSOR_DIMS), None)
        ops = list(inst.operands)
        if "L2::cache_hint" in ms:
            ops = ops[:-1]
        if len(ops) != want:
            raise self.error(f"'{_text(inst)}' takes {want} operand(s) (and an optional cache policy), got "
                             f"{len(ops)}", PtxSemanticError)
        return ops, int(dims[0])

    def _cp_tensor(self, inst) -> None:
        """Tile-mode loads ``cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes
        {.multicast::cluster}{.L2::cache_hint} [dst], [tensorMap, {c0, ...}], [mbar]{, ctaMask}{, policy}`` and
        PTX ISA 8.6's ``.shared::cta.global`` form (no multicast; a shared::cta address names the executing CTA's
        memory in the shared::cluster window too, xcc.semantics.cluster, so it is the same copy) ->
        ``tma_load`` (``attrs.im2col``: ``.im2col`` with ``{o...}``, rank - 2 16-bit offsets after [mbar], the
        arguments after the coordinates; ``attrs.multicast``: the 16-bit ctaMask the last argument); stores
        ``cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group{.L2::cache_hint} [tensorMap, {c0, ...}],
        [src]{, policy}`` -> ``tma_store`` (``.im2col_no_offs``, 3d-5d: ``attrs.im2col``)."""
        ms = inst.modifiers
        dims = next((m for m in ms if m in _TENSOR_DIMS), None)
        to_cta = ms[4:6] == ("shared::cta", "global")  # PTX ISA 8.6: into the executing CTA, no multicast
        load = (ms[4:6] == ("shared::cluster", "global") or to_cta) and "mbarrier::complete_tx::bytes" in ms
        store = ms[4:6] == ("global", "shared::cta") and "bulk_group" in ms
        multicast = load and "multicast::cluster" in ms
        im2col = "im2col" in ms if load else "im2col_no_offs" in ms
        known = {"async", "bulk", "tensor", "shared::cluster", "global", "shared::cta", "tile", "L2::cache_hint",
                 "mbarrier::complete_tx::bytes" if load else "bulk_group", dims,
                 *(("multicast::cluster", "im2col") if load else ("im2col_no_offs",))}
        if dims is None or not (load or store) or any(m not in known for m in ms) or im2col and "tile" in ms \
                or im2col and dims in ("1d", "2d") or to_cta and multicast:
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (supported: tile-mode and (3d-5d) "
                             "im2col-mode loads cp.async.bulk.tensor.Nd.shared::cluster.global{.tile,.im2col}"
                             ".mbarrier::complete_tx::bytes{.multicast::cluster} and "
                             "cp.async.bulk.tensor.Nd.shared::cta.global{.tile,.im2col}.mbarrier::complete_tx::bytes, "
                             "tile-mode and (3d-5d) im2col-mode "
                             "stores cp.async.bulk.tensor.Nd.global.shared::cta{.tile,.im2col_no_offs}.bulk_group)")
        ops, rank = self._tensor_ops(inst, (3 + multicast + im2col) if load else 2)
        if load:
            dst, doff = self._hp_shared(inst, ops[0])
            mb, moff = self._hp_shared(inst, ops[2])
            tmap, coords = self._tensor_operand(inst, ops[1], rank)
            extra, attrs = [], {}
            if im2col:
                offs = ops[3]
                if not isinstance(offs, ast.Vector) or len(offs.elements) != rank - 2:
                    raise self.error(f"'{_text(inst)}' takes {{{rank - 2} im2col offset(s)}} after [mbar]",
                                     PtxSemanticError)
                extra += [self.read(o, ptx_type("u16")) for o in offs.elements]
                attrs["im2col"] = True
            if multicast:
                extra.append(self.read(ops[-1], ptx_type("u16")))
                attrs["multicast"] = True
            self.emit("tma_load", None, [dst, tmap, mb, *coords, *extra], rank=rank, dst_offset=doff, mbar_offset=moff,
                      **attrs)
            return
        src, soff = self._hp_shared(inst, ops[1])
        tmap, coords = self._tensor_operand(inst, ops[0], rank)
        self.emit("tma_store", None, [src, tmap, *coords], rank=rank, src_offset=soff,
                  **({"im2col": True} if im2col else {}))

    def _cp_reduce_tensor(self, inst) -> None:
        """``cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op{.tile}.bulk_group{.L2::cache_hint}
        [tensorMap, {c0, ...}], [src]{, policy}`` -> ``tma_store {redop}`` (the element type is the tensor
        map's, checked when it executes; ``.im2col_no_offs``, 3d-5d: ``attrs.im2col``)."""
        ms = inst.modifiers
        dims = next((m for m in ms if m in _TENSOR_DIMS), None)
        op = next((m for m in ms if m in _REDUCE_OPS), None)
        im2col = "im2col_no_offs" in ms
        known = {"reduce", "async", "bulk", "tensor", "global", "shared::cta", "tile", "im2col_no_offs", "bulk_group",
                 "L2::cache_hint", dims, op}
        if dims is None or op is None or ms[5:7] != ("global", "shared::cta") or "bulk_group" not in ms \
                or any(m not in known for m in ms) or im2col and ("tile" in ms or dims in ("1d", "2d")):
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (supported: tile-mode and (3d-5d) "
                             "im2col-mode cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op{.tile,.im2col_no_offs}"
                             ".bulk_group, op one of .add/.min/.max/.inc/.dec/.and/.or/.xor)")
        ops, rank = self._tensor_ops(inst, 2)
        src, soff = self._hp_shared(inst, ops[1])
        tmap, coords = self._tensor_operand(inst, ops[0], rank)
        self.emit("tma_store", None, [src, tmap, *coords], rank=rank, src_offset=soff, redop=op,
                  **({"im2col": True} if im2col else {}))

    def _cp_prefetch(self, inst) -> None:
        """``cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}{.L2::cache_hint} [tensorMap, {c0, ...}]{, policy}``
        -> ``tma_prefetch`` (the map checked, no data moved; ``.im2col`` with ``{o...}``, rank - 2 16-bit offsets:
        ``attrs.im2col``, the map must be an im2col one); ``cp.async.bulk.prefetch.L2.global{.L2::cache_hint}
        [a], size{, policy}`` -> nothing (a hint: xcc models no L2)."""
        ms = inst.modifiers
        dims = next((m for m in ms if m in _TENSOR_DIMS), None)
        tensor = "tensor" in ms and dims is not None
        im2col = tensor and "im2col" in ms
        known = {"async", "bulk", "prefetch", "L2", "global", "L2::cache_hint",
                 *(("tensor", "tile", "im2col", dims) if tensor else ())}
        if ms[:3] != ("async", "bulk", "prefetch") or "L2" not in ms or "global" not in ms \
                or any(m not in known for m in ms) or im2col and ("tile" in ms or dims in ("1d", "2d")):
            raise self.error(f"instruction '{_text(inst)}' is not supported yet (supported: "
                             "cp.async.bulk.prefetch.L2.global, tile-mode cp.async.bulk.prefetch.tensor.Nd.L2.global "
                             "and (3d-5d) im2col-mode cp.async.bulk.prefetch.tensor.Nd.L2.global.im2col)")
        if not tensor:
            ops = list(inst.operands)[:-1] if "L2::cache_hint" in ms else list(inst.operands)
            if len(ops) != 2:
                raise self.error(f"'{_text(inst)}' takes [address], size (and an optional cache policy)",
                                 PtxSemanticError)
            self._address(ops[0])
            self.read(ops[1], ptx_type("u32"))
            return
        ops, rank = self._tensor_ops(inst, 1 + im2col)
        tmap, coords = self._tensor_operand(inst, ops[0], rank)
        if im2col:  # the offsets only place a load's box in shared memory: a prefetch moves nothing
            offs = ops[1]
            if not isinstance(offs, ast.Vector) or len(offs.elements) != rank - 2:
                raise self.error(f"'{_text(inst)}' takes {{{rank - 2} im2col offset(s)}} after the tensor operand",
                                 PtxSemanticError)
            for o in offs.elements:
                self.read(o, ptx_type("u16"))
        self.emit("tma_prefetch", None, [tmap, *coords], rank=rank, **({"im2col": True} if im2col else {}))

    # ----------------------------------------------------------------- stmatrix
    def op_stmatrix(self, inst) -> None:
        """``stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared{::cta}.b16 [p], {r...}``: the inverse of
        ldmatrix.  Matrix i's row j lies at the address lane 8i + j gives; lane l holds elements 2(l%4) and
        2(l%4) + 1 of row l/4 (``.trans``: of column l/4).  Each lane fetches the row address it needs from
        its owner lane (``shfl.idx``) and stores its 32 bits (``.trans``: two 16-bit elements)."""
        nums = {"x1": 1, "x2": 2, "x4": 4}
        ms = inst.modifiers
        num = next((nums[m] for m in ms if m in nums), None)
        extra = [m for m in ms if m not in {"sync", "aligned", "m8n8", "trans", "shared", "shared::cta", "b16", *nums}]
        if num is None or "m8n8" not in ms or "b16" not in ms or extra:
            raise self.error(f"'{_text(inst)}' is not supported yet (supported: stmatrix.sync.aligned.m8n8"
                             ".x1/.x2/.x4{.trans}.shared.b16)")
        self._hp_count(inst, 2)
        srcs = inst.operands[1]
        srcs = srcs.elements if isinstance(srcs, ast.Vector) else (srcs,)
        if len(srcs) != num:
            raise self.error(f"'{_text(inst)}' stores {num} register(s), got {len(srcs)}", PtxSemanticError)
        u32, b16 = ptx_type("u32"), ptx_type("b16")
        base, off, param = self._address(inst.operands[0])
        if param is not None:
            raise self.error(f"'{_text(inst)}' to a kernel parameter", PtxSemanticError)
        if base.type.bits != 32:
            base = self.emit("cvt", u32, [base], u32, src=f"u{base.type.bits}").result
        lane = self.emit("sreg", u32, [], u32, name="laneid").result
        quad = self.emit("and", u32, [lane, Const(u32, 3)], u32).result
        row = self.emit("shr", u32, [lane, Const(u32, 2)], u32).result

        def op(name, a, b):
            return self.emit(name, u32, [a, b if not isinstance(b, int) else Const(u32, b)], u32).result

        def row_address(i: int, src_row):
            owner = op("add", src_row, 8 * i)
            return self.emit("shfl", u32, [base, owner, Const(u32, 0x1F), Const(u32, 0xFFFFFFFF)], u32,
                             mode="idx").result

        trans = "trans" in ms
        for i, r in enumerate(srcs):
            v = self.read(r, u32)
            if not trans:
                addr = op("add", row_address(i, row), op("shl", quad, 2))
                self.emit("st", u32, [addr, v], None, space="shared", offset=off)
                continue
            for h in (0, 1):
                addr = op("add", row_address(i, op("add", op("shl", quad, 1), h)), op("shl", row, 1))
                half = op("shr", v, 16) if h else v
                part = self.emit("cvt", b16, [half], b16, src="u32").result
                self.emit("st", b16, [addr, part], None, space="shared", offset=off)

    # ----------------------------------------------------------------- elect, setmaxnreg, griddepcontrol
    def op_elect(self, inst) -> None:
        if "sync" not in inst.modifiers:
            raise self.error(f"'{_text(inst)}': elect needs .sync", PtxSemanticError)
        self._hp_count(inst, 2)
        u32 = ptx_type("u32")
        dest, mask = inst.operands
        d, p = (dest.elements if isinstance(dest, ast.Vector) else (None, None))
        if d is None:
            raise self.error(f"'{_text(inst)}' writes d|p (a register, or _, and a predicate)", PtxSemanticError)
        m = self.read(mask, u32)
        act = self.emit("activemask", u32, [], u32).result
        both = self.emit("and", u32, [act, m], u32).result
        minus = self.emit("sub", u32, [Const(u32, 0), both], u32).result
        low = self.emit("and", u32, [both, minus], u32).result
        lane = self.emit("bfind", u32, [low], u32).result
        me = self.emit("sreg", u32, [], u32, name="laneid").result
        self.write(d, lane)
        self.write(p, self.emit("setp", u32, [me, lane], PRED, cmp="eq").result)

    def op_setmaxnreg(self, inst) -> None:
        ms = inst.modifiers
        self._hp_count(inst, 1)
        if not ("inc" in ms) ^ ("dec" in ms) or "sync" not in ms or "aligned" not in ms:
            raise self.error(f"'{_text(inst)}': expected setmaxnreg.{{inc,dec}}.sync.aligned.u32", PtxSemanticError)
        n = inst.operands[0]
        if not isinstance(n, ast.Imm) or n.kind != "int" or not 24 <= n.value <= 256 or n.value % 8:
            raise self.error(f"'{_text(inst)}': the register count must be a constant multiple of 8 in 24 .. 256",
                             PtxSemanticError)

    def op_griddepcontrol(self, inst) -> None:
        self._hp_count(inst, 0)
        if not any(m in inst.modifiers for m in ("launch_dependents", "wait")):
            raise self.error(f"'{_text(inst)}': expected griddepcontrol.launch_dependents or .wait",
                             PtxSemanticError)
