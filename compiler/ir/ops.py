"""The table of IR operations: name, operand count, effects and one-line semantics.

``arity`` is the number of value operands (None: variable).  ``effects`` marks
operations that dead-code elimination must keep (memory writes, barriers,
control flow) and ``reads_memory`` those whose results depend on memory,
which constant folding must not touch.  The arithmetic meaning of each
operation is implemented once in :mod:`xcc.semantics`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpDef:
    name: str
    arity: int | None
    doc: str
    has_result: bool = True
    effects: bool = False
    reads_memory: bool = False
    terminator: bool = False


_ROWS = [
    # name, arity, semantics
    ("add", 2, "d = a + b"),
    ("sub", 2, "d = a - b"),
    ("mul", 2, "d = a * b; attrs.mode = lo|hi|wide (integers)"),
    ("mad", 3, "d = a * b + c; attrs.mode = lo|hi|wide (integers)"),
    ("fma", 3, "d = a * b + c, one rounding"),
    ("div", 2, "d = a / b"),
    ("rem", 2, "d = a % b"),
    ("min", 2, "d = min(a, b)"),
    ("max", 2, "d = max(a, b)"),
    ("and", 2, "d = a & b"),
    ("or", 2, "d = a | b"),
    ("xor", 2, "d = a ^ b"),
    ("shl", 2, "d = a << b"),
    ("shr", 2, "d = a >> b (arithmetic for signed types)"),
    ("neg", 1, "d = -a"),
    ("abs", 1, "d = |a|"),
    ("not", 1, "d = ~a"),
    ("popc", 1, "d = number of one bits of a (u32)"),
    ("clz", 1, "d = leading zero bits of a (u32)"),
    ("brev", 1, "d = a with its bits reversed"),
    ("bfind", 1, "d = position of the most significant non-sign bit of a (u32, ~0 if none); attrs.shiftamt"),
    ("bfe", 3, "d = bit field of a at position b, length c (u32 operands), zero/sign-extended by type"),
    ("bfi", 4, "d = b with the low d bits of a inserted at position c (u32 operands c, d)"),
    ("bmsk", 2, "d = mask of b bits from bit a (u32); attrs.mode = clamp|wrap"),
    ("prmt", 3, "d = bytes of {b, a} chosen by selector c; attrs.mode = f4e|b4e|rc8|ecl|ecr|rc16 (absent: generic)"),
    ("shf", 3, "d = 32 bits of the funnel {b, a} shifted by c; attrs.dir = l|r, attrs.mode = clamp|wrap"),
    ("dp4a", 3, "d = c + dot(bytes of a, bytes of b); attrs.atype, attrs.btype = u32|s32"),
    ("dp2a", 3, "d = c + dot(halves of a, bytes 0-1 or 2-3 of b); attrs.mode = lo|hi, attrs.atype, attrs.btype"),
    ("mul24", 2, "d = (a[23:0] * b[23:0]).mode; attrs.mode = lo (bits 31:0) | hi (bits 47:16)"),
    ("mad24", 3, "d = (a[23:0] * b[23:0]).mode + c; attrs.mode = lo|hi, attrs.sat"),
    ("copysign", 2, "d = b with the sign of a (floats)"),
    ("rcp", 1, "d = 1 / a"),
    ("sqrt", 1, "d = sqrt(a)"),
    ("rsqrt", 1, "d = 1 / sqrt(a) (approx)"),
    ("ex2", 1, "d = 2 ** a (approx)"),
    ("lg2", 1, "d = log2(a) (approx)"),
    ("sin", 1, "d = sin(a) (approx)"),
    ("cos", 1, "d = cos(a) (approx)"),
    ("tanh", 1, "d = tanh(a) (approx)"),
    ("setp", None, "p = a cmp b [bool c]; attrs.cmp, attrs.bool = and|or|xor with predicate c"),
    ("selp", 3, "d = c ? a : b"),
    ("cvt", 1, "d = a converted from attrs.src to type"),
    ("mov", 1, "d = a (only where a register is read as another type: a bit copy)"),
    ("sreg", 0, "d = special register attrs.name (tid.x, ctaid.y, laneid, ...)"),
    ("addr_of", 0, "d = address of variable attrs.symbol in attrs.space"),
    ("ld_param", 0, "d = kernel parameter bytes at attrs.offset, of type"),
    ("cvta", 1, "d = a converted between attrs.space and the generic space (attrs.to_generic): the space's "
                "generic window base added or subtracted (xcc.backend.isa.WINDOWS; identity for global)"),
    ("isspacep", 1, "p = whether generic address a lies in attrs.space's window (global: in no window)"),
    # --- packing and extended precision (mov with vector operands; add.cc/addc/sub.cc/subc/mad.cc/madc)
    ("pack", None, "d = the args concatenated, element k (width type.bits / n) in bits [k*w, (k+1)*w)"),
    ("unpack", 1, "d = element attrs.index of a (type: a's type; width: the result's; element 0 = low bits)"),
    ("addc", 3, "d = a + b + c (c: the carry-in predicate); with attrs.carry, p = its carry-out"),
    ("subc", 3, "d = a + ~b + c = a - b - !c (c: the carry-in predicate); with attrs.carry, p = its carry-out "
             "(not the borrow)"),
    ("madc", 4, "d = (a * b).attrs.mode + c + cin (mode lo|hi, cin a predicate); with attrs.carry, p = the "
                "carry-out of the addition"),
]

OPS: dict[str, OpDef] = {name: OpDef(name, arity, doc) for name, arity, doc in _ROWS}
OPS.update({
    "ld": OpDef("ld", 1, "d = memory[attrs.space][a + attrs.offset] as type (extended to the result's type)",
                reads_memory=True),
    "st": OpDef("st", 2, "memory[attrs.space][a + attrs.offset] = b as type", has_result=False, effects=True),
    "atom": OpDef("atom", None, "d = old memory[a + offset]; memory = attrs.atom_op(old, b[, c])",
                  effects=True, reads_memory=True),
    "bar_sync": OpDef("bar_sync", None, "wait until all threads of the CTA (or b threads) arrive at barrier a",
                      has_result=False, effects=True),
    "bar_arrive": OpDef("bar_arrive", 2, "count an arrival at barrier a (which b threads complete) without waiting",
                        has_result=False, effects=True),
    "bar_red": OpDef("bar_red", None, "bar_sync on barrier b[, c threads], then d = attrs.redop (popc: u32 count; "
                     "and, or: pred) of predicate a over the threads that took part", effects=True),
    "fence": OpDef("fence", 0, "order memory accesses (attrs.scope)", has_result=False, effects=True),
    "shfl": OpDef("shfl", 4, "d = a of lane(b) by attrs.mode, clamp c, member mask",
                  effects=True),
    "vote": OpDef("vote", 2, "d = attrs.mode (all|any|uni|ballot) of predicate a over member mask b",
                  effects=True),
    "match": OpDef("match", 2, "d = match mask (attrs.mode = any|all) of a over member mask b; with "
                   "attrs.pred, whether all taking-part lanes hold the same a (match.all's p)", effects=True),
    "redux": OpDef("redux", 2, "d = attrs.redop (add|min|max|and|or|xor) of a over the lanes of member mask b",
                   effects=True),
    "activemask": OpDef("activemask", 0, "d = mask of the lanes executing this together", effects=True),
    # -- warp-level matrix ops (xcc.semantics.matrix; one IR instruction per destination register,
    #    attrs.part = which one; every lane of the warp executes them together)
    "mma": OpDef("mma", None, "d = register attrs.part of the D fragment of A B + C (mma.sync / wmma.mma); args: "
                 "attrs.na A, attrs.nb B, then C fragment registers; attrs.shape, attrs.types = d, a, b, c, "
                 "attrs.satfinite"),
    "ldmatrix": OpDef("ldmatrix", 1, "d = register attrs.part (matrix attrs.part) of ldmatrix.m8n8.x{attrs.num}"
                      "[.trans] from the row addresses a + attrs.offset of the warp's lanes in attrs.space",
                      reads_memory=True),
    "wmma_load": OpDef("wmma_load", 2, "d = register attrs.part of the m16n16k16 fragment attrs.frag (a|b|c) "
                       "loaded from a + attrs.offset with stride b elements, attrs.layout (row|col), "
                       "attrs.space, element type", reads_memory=True),
    "wmma_store": OpDef("wmma_store", None, "store the m16n16k16 D fragment (args 2..) at a + attrs.offset "
                        "with stride b elements, attrs.layout, attrs.space, element type", has_result=False,
                        effects=True),
    "call": OpDef("call", None, "call attrs.callee: copy the caller's .param variables attrs.params into its "
                  "parameters, run it, copy its return parameters into attrs.rets; an indirect call (callee None) "
                  "takes the function pointer as its one operand until xcc.ir.funcptr turns it into direct calls",
                  has_result=False, effects=True, reads_memory=True),
    "br": OpDef("br", 0, "jump to targets[0]", has_result=False, effects=True, terminator=True),
    "cbr": OpDef("cbr", 1, "jump to targets[0] if a else targets[1]", has_result=False, effects=True,
                 terminator=True),
    "ret": OpDef("ret", 0, "return from the function (ends the thread in a kernel)", has_result=False,
                 effects=True, terminator=True),
    "exit": OpDef("exit", 0, "end the thread", has_result=False, effects=True, terminator=True),
    "trap": OpDef("trap", 0, "abort the kernel with an error", has_result=False, effects=True, terminator=True),
})

# -- asynchronous copies and warpgroup MMA (xcc.ir.lower_async, xcc.sim.ir.async_ops; meaning in
#    xcc.semantics.async_copy and xcc.semantics.wgmma)
OPS.update({
    "cp_async": OpDef("cp_async", 3, "cp.async: copy attrs.cp_size bytes to shared a + attrs.dst_offset, the first "
                      "c of them from global b + attrs.src_offset and the rest zeros, in the thread's open group; "
                      "performed at the wait that covers the group", has_result=False, effects=True,
                      reads_memory=True),
    "cp_async_commit": OpDef("cp_async_commit", 0, "cp.async.commit_group: close the thread's open copy group",
                             has_result=False, effects=True),
    "cp_async_wait": OpDef("cp_async_wait", 0, "cp.async.wait_group attrs.n: perform the thread's copies in all but "
                           "its attrs.n most recent groups (attrs.all: wait_all, commit first)", has_result=False,
                           effects=True),
    "wgmma": OpDef("wgmma", None, "d = accumulator register attrs.part of D = A*B + (scale-d ? C : 0), "
                   "wgmma.mma_async.m64n{attrs.n}k16 over the warpgroup; args: this part's f32 register of C, "
                   "the u64 shared matrix descriptors of A and B, the scale-d predicate (attrs.a_regs: A in registers, "
                   "the first u64 the thread's A registers (part/2)%2 and +2, low and high word); attrs.atype, btype, "
                   "scale_a, scale_b, trans_a, trans_b, wgmma_id (one per PTX instruction); attrs.acc = f16 (.f16 "
                   "accumulator): C is the packed f16x2 register holding the part, d the f16 bits zero-extended; "
                   "attrs.sparse (wgmma.mma_async.sp m64nNk32, attrs.sp_sel): a fifth arg, the thread's u32 "
                   "metadata register, and A the compressed 64 x 16 (xcc.semantics.wgmma.sparse_a)",
                   reads_memory=True),
    "wgmma_sync": OpDef("wgmma_sync", 0, "wgmma.attrs.kind (fence|commit_group|wait_group, attrs.n) over the "
                        "warpgroup", has_result=False, effects=True),
})


# -- thread-block clusters (xcc.ir.lower_hopper; the barrier's rule is xcc.sim.waves's)
OPS.update({
    "cluster_arrive": OpDef("cluster_arrive", 0, "barrier.cluster.arrive: arrive at the cluster's barrier",
                            has_result=False, effects=True),
    "cluster_wait": OpDef("cluster_wait", 0, "barrier.cluster.wait: wait until every non-exited thread of the "
                          "cluster arrived in this thread's phase", has_result=False, effects=True),
})


# -- mbarrier and bulk copies (xcc.ir.lower_hopper, xcc.sim.ir.async_ops; meaning in xcc.semantics.mbarrier and
#    xcc.sim.mbarrier).  The address a is a shared-space address, plus attrs.offset.
OPS.update({
    "mbar_init": OpDef("mbar_init", 2, "mbarrier.init [a + attrs.offset], b (attrs.inval: mbarrier.inval)",
                       has_result=False, effects=True),
    "mbar_arrive": OpDef("mbar_arrive", 3, "d = the mbarrier at a before an expect-tx of c and an arrive-on of b "
                         "(attrs.drop: arrive_drop, attrs.nocomplete: .noComplete)", effects=True, reads_memory=True),
    "cp_async_arrive": OpDef("cp_async_arrive", 1, "cp.async.mbarrier.arrive: perform the thread's pending cp.async "
                             "copies, then an arrive-on of the mbarrier at a + attrs.offset (attrs.noinc: counted "
                             "against the expected count; else the pending count is incremented first, net zero)",
                             has_result=False, effects=True, reads_memory=True),
    "mbar_tx": OpDef("mbar_tx", 2, "expect-tx (attrs.complete: complete-tx) of b bytes on the mbarrier at a",
                     has_result=False, effects=True),
    "mbar_test": OpDef("mbar_test", 2, "d = whether the phase of state b (attrs.parity: of parity b) of the "
                       "mbarrier at a has completed (test_wait)", effects=True, reads_memory=True),
    "mbar_wait": OpDef("mbar_wait", 2, "try_wait: as mbar_test, but a thread whose phase is incomplete waits "
                       "until it completes (then d = 1)", effects=True, reads_memory=True),
    "bulk_copy": OpDef("bulk_copy", 4, "cp.async.bulk of c bytes from b + attrs.src_offset to a + attrs.dst_offset: "
                       "global -> shared then a complete-tx of c on the mbarrier at d (attrs.to_shared; with "
                       "attrs.from_shared the source is this CTA's shared memory and a, d shared::cluster "
                       "addresses), or shared -> global", has_result=False, effects=True, reads_memory=True),
    "bulk_copy_mc": OpDef("bulk_copy_mc", 5, "cp.async.bulk...multicast::cluster: c bytes of global b + "
                          "attrs.src_offset to shared a + attrs.dst_offset of each CTA of the cluster whose bit is set "
                          "in the 16-bit ctaMask e, then a complete-tx of c on the mbarrier at d + attrs.mbar_offset "
                          "of each", has_result=False, effects=True, reads_memory=True),
    "tma_load": OpDef("tma_load", None, "cp.async.bulk.tensor tile-mode load: the box at coordinates args 3.. "
                      "(attrs.rank) of the tensor map at generic address b to shared a + attrs.dst_offset, then a "
                      "complete-tx of its bytes on the mbarrier at c + attrs.mbar_offset (attrs.im2col: an im2col-mode "
                      "load, rank - 2 16-bit offsets after the coordinates; attrs.multicast: to those offsets in each "
                      "CTA of the cluster the ctaMask, the last argument, names)", has_result=False,
                      effects=True, reads_memory=True),
    "tma_store": OpDef("tma_store", None, "cp.async.bulk.tensor tile-mode store: the box at shared a + attrs.src_offset "
                       "to the in-bounds elements at coordinates args 2.. (attrs.rank) of the tensor map at generic "
                       "address b (attrs.redop: cp.reduce.async.bulk.tensor, reduced in the map's element type)",
                       has_result=False, effects=True, reads_memory=True),
    "tma_prefetch": OpDef("tma_prefetch", None, "cp.async.bulk.prefetch.tensor: checks the tensor map at generic "
                          "address a and its rank (attrs.rank coordinates args 1..; attrs.im2col: an im2col map); moves "
                          "no data", has_result=False, effects=True, reads_memory=True),
    "bulk_reduce": OpDef("bulk_reduce", 3, "cp.reduce.async.bulk: the c bytes of shared b + attrs.src_offset reduced "
                         "element by element into global a + attrs.dst_offset (attrs.to_shared: the shared::cluster "
                         "address a) (attrs.redop, attrs.etype: the atom operation and element type)", has_result=False,
                         effects=True, reads_memory=True),
})


# -- texture and surface objects (xcc.ir.lower_texture; meaning in xcc.semantics.texture, executors in
#    xcc.sim.texture).  a is the object's 64-bit handle; one op per destination or source element.
OPS.update({
    "tex": OpDef("tex", None, "word attrs.comp of tex.attrs.dim (attrs.gather: tld4's component r|g|b|a) of the "
                 "texture object a at coordinates args 1.. (attrs.ctype f32|s32; attrs.layered: the layer first; then "
                 "the level of detail, attrs.off: the packed texel offsets, attrs.dc: the depth compare value)",
                 reads_memory=True),
    "tex_lod": OpDef("tex_lod", None, "d = tex.grad's level of detail (f32) of the texture object a for the "
                     "gradients dPdx = args 1 .. k, dPdy = args k+1 .. 2k (k = the geometry's dimensions; attrs.cube: "
                     "the direction args 1 .. 3 first, the gradients of three elements measured on its face)",
                     reads_memory=True),
    "txq": OpDef("txq", None, "d = txq.attrs.query (attrs.surface: suq) of the texture (surface) object a; "
                 "with a second argument b, txq.level: the query of mipmap level b (.s32)", reads_memory=True),
    "istypep": OpDef("istypep", 1, "d = whether a is a live object of attrs.kind (texref|samplerref|surfref)",
                     reads_memory=True),
    "suld": OpDef("suld", None, "element attrs.comp (attrs.width bytes) of the attrs.vec-element suld.b.attrs.dim "
                  "of the surface object a at coordinates args 1.. (x in bytes; attrs.mode trap|clamp|zero)",
                  reads_memory=True),
    "sust": OpDef("sust", None, "sust.b: the last argument to element attrs.comp of the surface access at args 1.. "
                  "(as suld)", has_result=False, effects=True, reads_memory=True),
    "sured": OpDef("sured", None, "sured.b.attrs.redop.attrs.etype: the last argument reduced into the surface "
                   "element at args 1.. (as suld)", has_result=False, effects=True, reads_memory=True),
})


def opdef(name: str) -> OpDef:
    return OPS[name]


# What :func:`xcc.ir.evaluate.evaluate` computes from constant operands (the constant folders' domain), and
# the half-precision types whose arithmetic is :mod:`xcc.semantics.halfp`'s; here, without numpy, for the
# passes that only ask whether an instruction qualifies.
PURE_OPS = frozenset({"add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "and", "or", "xor",
                      "shl", "shr", "neg", "abs", "not", "popc", "clz", "brev", "rcp", "sqrt", "rsqrt",
                      "ex2", "lg2", "sin", "cos", "tanh", "setp", "selp", "cvt", "mov", "bfind", "bfe",
                      "bfi", "bmsk", "prmt", "shf", "dp4a", "dp2a", "mul24", "mad24", "copysign",
                      "pack", "unpack", "addc", "subc", "madc"})
HALF_TYPES = frozenset({"f16", "bf16", "f16x2", "bf16x2"})
