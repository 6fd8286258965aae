"""The qualifier combinations of the memory instructions that ptxas refuses (issue 19's memory sweep).

PTX ISA 9.0 sections 9.7.9 (data movement: ld, ldu, st, st.async, prefetch, prefetchu, applypriority, discard,
createpolicy, cvta, isspacep, cp.async), 9.7.13 (parallel synchronisation: atom, red, red.async, fence, membar)
and chapter 8 (the memory consistency model: which memory orders and scopes each instruction takes).  Where the
manual is terse, ptxas 13.0 for sm_90a decided: each rule below reproduces a refusal measured in
tests/data/isa_inventory/sweep_memory.ptx-lines, and says its cause in ptxas's own terms.

:func:`memory_problem` looks at an instruction's modifiers only (their order does not matter, as for ptxas);
the operands are checked elsewhere."""

from __future__ import annotations

from xcc.frontend import ast
from xcc.frontend.instructions import TYPE_WIDTH, TYPES

SPACES = frozenset("global shared shared::cta shared::cluster local const param param::entry param::func generic".split())
_PARAM = frozenset({"param", "param::entry", "param::func"})
_SHARED = frozenset({"shared", "shared::cta", "shared::cluster"})
ORDERS = frozenset("weak volatile relaxed acquire release acq_rel sc mmio".split())
SCOPES = frozenset("cta cluster gpu sys".split())
COPS = frozenset("ca cg cs lu cv wb wt".split())
L1_EVICT = frozenset("L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last L1::no_allocate".split())
L2_EVICT = frozenset("L2::evict_normal L2::evict_first L2::evict_last L2::evict_unchanged".split())
PREFETCH_SIZE = frozenset("L2::64B L2::128B L2::256B".split())
_VEC = {"v2": 2, "v4": 4, "v8": 8}
_HALF = frozenset({"f16", "bf16", "f16x2", "bf16x2"})

# atom/red: the types each operation takes (ptxas 13.0: "Operation .and requires .b32 or .b64 type", ...)
_ATOM_TYPES = {
    "and": {"b32", "b64"}, "or": {"b32", "b64"}, "xor": {"b32", "b64"},
    "cas": {"b16", "b32", "b64", "b128"}, "exch": {"b32", "b64", "b128"},
    "add": {"u32", "s32", "u64", "f32", "f64"} | _HALF,
    "inc": {"u32"}, "dec": {"u32"},
    "min": {"u32", "s32", "u64", "s64"} | _HALF, "max": {"u32", "s32", "u64", "s64"} | _HALF,
}
_RED_ASYNC_TYPES = {"add": {"u32", "s32", "u64", "s64"}, "min": {"u32", "s32"}, "max": {"u32", "s32"},
                    "inc": {"u32"}, "dec": {"u32"}, "and": {"b32"}, "or": {"b32"}, "xor": {"b32"}}


def _dots(names) -> str:
    return ", ".join("." + n for n in sorted(names))


def _one(ms: set[str], group: frozenset[str], what: str) -> tuple[str | None, str | None]:
    """(the one modifier of ``group`` in ``ms`` or None, a problem if there are several)."""
    found = ms & group
    if len(found) > 1:
        return None, f"more than one {what} ({_dots(found)})"
    return (next(iter(found)) if found else None), None


def memory_problem(opcode: str, modifiers: tuple[str, ...]) -> str | None:
    """What ptxas refuses in this combination of ``opcode``'s modifiers, or None."""
    ms = set(modifiers)
    rule = _RULES.get(opcode)
    if rule is None:
        return None
    if opcode == "cp" and "async" not in ms or opcode == "cp" and ms & {"bulk", "tensor", "reduce"}:
        return None  # the bulk and tensor copies belong to the asynchronous-copy families
    return rule(opcode, ms)


def _space(opcode: str, ms: set[str]) -> tuple[str | None, str | None]:
    if "generic" in ms:
        return None, f"'.generic' is not a state space of {opcode} (a generic address takes no state space)"
    return _one(ms, SPACES, "state space")


def _vector(ms: set[str], t: str) -> tuple[int, int]:
    n = next((_VEC[m] for m in ms if m in _VEC), 1)
    return n, n * TYPE_WIDTH.get(t, 0)


def _ld_st(opcode: str, ms: set[str]) -> str | None:
    if opcode == "st" and "async" in ms:
        return _st_async(opcode, ms)
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    types = [m for m in ms if m in TYPES]
    t = types[0] if types else "b32"
    allowed = {"weak", "volatile", "relaxed", "mmio", "acquire" if opcode == "ld" else "release"}
    orders = ms & ORDERS
    if orders - allowed:
        bad = min(orders - allowed)
        return f"'.{bad}' is not a memory order of {opcode} (it takes {_dots(allowed)})"
    if len(orders - {"mmio"}) > 1:
        return f"more than one memory order ({_dots(orders - {'mmio'})})"
    scope, msg = _one(ms, SCOPES, "scope")
    if msg:
        return msg
    strong = orders & {"relaxed", "acquire", "release"}
    if scope and not strong:
        return (f"'.{scope}' cannot be combined with '.{min(orders)}'" if orders
                else f"scope '.{scope}' needs a memory order (.relaxed or .{'acquire' if opcode == 'ld' else 'release'})")
    if strong and not scope:
        return f"'.{min(strong)}' needs a scope (.cta, .cluster, .gpu or .sys)"
    if "mmio" in orders:
        if orders != {"mmio", "relaxed"} or scope != "sys":
            return "'.mmio' is written '.mmio.relaxed.sys'"
        if space not in (None, "global"):
            return f"'.mmio' cannot be applied to the .{space} space (only .global or a generic address)"
        if ms & _VEC.keys():
            return "'.mmio' cannot be combined with a vector"
        if ms & {"L1::no_allocate", "L2::cache_hint"}:
            return f"'.mmio' cannot be combined with '.{min(ms & {'L1::no_allocate', 'L2::cache_hint'})}'"
    if orders - {"weak"} and space in ({"local", "const"} | _PARAM):
        return f"'.{min(orders - {'weak'})}' cannot be applied to the .{space} space"
    # cache operators
    cops = ms & COPS
    own = {"ca", "cg", "cs", "lu", "cv"} if opcode == "ld" else {"wb", "cg", "cs", "wt"}
    if cops - own:
        return f"'.{min(cops - own)}' is not a cache operator of {opcode} (it takes {_dots(own)})"
    if len(cops) > 1:
        return f"more than one cache operator ({_dots(cops)})"
    if cops and orders - {"weak"}:
        return f"cache operator '.{min(cops)}' cannot be combined with '.{min(orders - {'weak'})}'"
    l1 = ms & L1_EVICT
    if cops and l1:
        return f"cache operator '.{min(cops)}' cannot be combined with an eviction priority ('.{min(l1)}')"
    if "nc" in ms:
        if space != "global":
            return "'.nc' needs the .global state space"
        if orders:
            return f"'.nc' cannot be combined with '.{min(orders)}'"
        if cops - {"ca", "cg", "cs"}:
            return f"'.nc' takes the cache operators .ca, .cg and .cs, not '.{min(cops)}'"
    # eviction priorities, cache hints and prefetch sizes: global (or generic) accesses only
    if len(l1) > 1:
        return f"more than one L1 eviction priority ({_dots(l1)})"
    l2 = ms & L2_EVICT
    if len(l2) > 1:
        return f"more than one L2 eviction priority ({_dots(l2)})"
    n, bits = _vector(ms, t)
    if l2 and bits != 256:
        return f"'.{min(l2)}' needs a 256-bit access (.v8.b32 or .v4.b64)"
    for group in (l1, ms & {"L2::cache_hint"}, ms & PREFETCH_SIZE):
        if group and space not in (None, "global"):
            return f"'.{min(group)}' cannot be applied to the .{space} space (only .global or a generic address)"
    if l1 and "volatile" in orders:
        return f"'.{min(l1)}' cannot be combined with '.volatile'"
    if "L2::cache_hint" in ms and "volatile" in orders:
        return "'.L2::cache_hint' cannot be combined with '.volatile'"
    size = ms & PREFETCH_SIZE
    if size and opcode == "st":
        return f"'.{min(size)}' (a prefetch size) is not a modifier of st"
    if len(size) > 1:
        return f"more than one prefetch size ({_dots(size)})"
    # vector widths
    if n > 1 and t == "b128":
        return "a .b128 access cannot be a vector"
    if bits > 256:
        return f".v{n}.{t} is {bits} bits, over the 256-bit limit of a vector access"
    if n == 8 and bits < 256 and TYPE_WIDTH.get(t, 0) > 16:
        return f".v8 takes 8- or 16-bit elements or 256 bits in all, not .{t}"
    return None


def _ldu(opcode: str, ms: set[str]) -> str | None:
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if space not in (None, "global"):
        return f"ldu reads the .global space, not .{space}"
    t = next((m for m in ms if m in TYPES), "b32")
    n, bits = _vector(ms, t)
    if n == 8 or bits > 128:
        return f"ldu.v{n}.{t} is over ldu's 128-bit limit (.v2 and .v4 up to 128 bits)"
    return None


def _st_async(opcode: str, ms: set[str]) -> str | None:
    """st.async{.weak}{.cluster}{.shared{::cta,::cluster}}.mbarrier::complete_tx::bytes{.v2,.v4}.type"""
    orders = ms & ORDERS
    if orders - {"weak"}:
        return f"'.{min(orders - {'weak'})}' is not a memory order of st.async on sm_90 (it takes .weak)"
    scope = ms & SCOPES
    if scope - {"cluster"}:
        return f"st.async takes the .cluster scope, not '.{min(scope - {'cluster'})}'"
    if scope and orders:
        return "st.async takes '.weak' or '.cluster', not both"
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if space not in (None,) and space not in _SHARED:
        return f"st.async writes shared memory, not the .{space} space"
    if "mbarrier::complete_tx::bytes" not in ms:
        return "st.async needs the completion mechanism '.mbarrier::complete_tx::bytes'"
    t = next((m for m in ms if m in TYPES), "b32")
    if TYPE_WIDTH.get(t) not in (32, 64) or t in _HALF:
        return f"st.async stores 32- or 64-bit types, not .{t}"
    n, bits = _vector(ms, t)
    if n == 8 or bits > 128:
        return f"st.async.v{n}.{t} is over its 128-bit limit"
    return None


def _atom_red(opcode: str, ms: set[str]) -> str | None:
    if opcode == "red" and "async" in ms:
        return _red_async(opcode, ms)
    orders = ms & ORDERS
    allowed = {"relaxed", "acquire", "release", "acq_rel"} if opcode == "atom" else {"relaxed", "release"}
    if orders - allowed:
        return f"'.{min(orders - allowed)}' is not a memory order of {opcode} (it takes {_dots(allowed)})"
    if len(orders) > 1:
        return f"more than one memory order ({_dots(orders)})"
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if space not in (None, "global") and space not in _SHARED:
        return f"{opcode} works on the .global and .shared spaces, not .{space}"
    extra = ms & (COPS | {"nc"} | L1_EVICT | L2_EVICT | PREFETCH_SIZE)
    if extra:
        return f"'.{min(extra)}' is not a modifier of {opcode} (of the cache qualifiers it takes .L2::cache_hint)"
    if "L2::cache_hint" in ms and space not in (None, "global"):
        return f"'.L2::cache_hint' cannot be applied to the .{space} space"
    ops = [o for o in _ATOM_TYPES if o in ms]
    types = [m for m in ms if m in TYPES]
    if len(ops) != 1 or len(types) != 1:
        return None  # the count rules of the checker's table say it
    op, t = ops[0], types[0]
    if t not in _ATOM_TYPES[op]:
        return f"operation .{op} takes {_dots(_ATOM_TYPES[op])}, not .{t}"
    if t in _HALF and "noftz" not in ms:
        return f"'.noftz' is required with .{t}"
    if t not in _HALF and "noftz" in ms:
        return f"'.noftz' applies to the half types only, not .{t}"
    n = next((_VEC[m] for m in ms if m in _VEC), 1)
    if n == 1:
        if op in ("min", "max") and t in _HALF:
            return f"{opcode}.{op} on .{t} needs a vector (.v2, .v4 or .v8)"
        return None
    if space not in (None, "global"):
        return f"a vector {opcode} works on the .global space only, not .{space}"
    widths = {"f32": (2, 4), "f16x2": (2, 4), "bf16x2": (2, 4), "f16": (2, 4, 8), "bf16": (2, 4, 8)}
    if t not in widths or n not in widths[t]:
        return f"a vector {opcode} takes .v2/.v4 of .f32, .f16x2, .bf16x2 or .v2/.v4/.v8 of .f16, .bf16, not .v{n}.{t}"
    if op not in ("add", "min", "max") or (t == "f32" and op != "add"):
        return f"a vector {opcode} on .{t} does not take .{op}"
    return None


def _red_async(opcode: str, ms: set[str]) -> str | None:
    """red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type"""
    orders, scope = ms & ORDERS, ms & SCOPES
    if orders != {"relaxed"}:
        return "red.async needs the memory order '.relaxed'" + (f", not {_dots(orders)}" if orders else "")
    if scope != {"cluster"}:
        return "red.async needs the scope '.cluster'" + (f", not {_dots(scope)}" if scope else "")
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if space not in (None, "shared::cluster"):
        return f"red.async works on .shared::cluster, not .{space}"
    if "mbarrier::complete_tx::bytes" not in ms:
        return "red.async needs the completion mechanism '.mbarrier::complete_tx::bytes'"
    extra = ms & ({"noftz", "L2::cache_hint"} | _VEC.keys())
    if extra:
        return f"'.{min(extra)}' is not a modifier of red.async"
    ops = [o for o in _RED_ASYNC_TYPES if o in ms]
    t = next((m for m in ms if m in TYPES), None)
    if len(ops) == 1 and t is not None and t not in _RED_ASYNC_TYPES[ops[0]]:
        return f"red.async.{ops[0]} takes {_dots(_RED_ASYNC_TYPES[ops[0]])}, not .{t}"
    return None


def _prefetch(opcode: str, ms: set[str]) -> str | None:
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if opcode == "prefetchu":
        if space is not None:
            return f"prefetchu takes no state space (a generic address), not .{space}"
        if ms != {"L1"}:
            return "prefetchu is written 'prefetchu.L1'"
        return None
    if "tensormap" in ms:
        if space not in (None, "const") and space not in _PARAM:
            return f"prefetch.tensormap cannot be applied to the .{space} space (.const, .param or generic)"
        return None
    levels = ms & {"L1", "L2"}
    evict = ms & (L1_EVICT | L2_EVICT)
    if len(levels) + len(evict) > 1:
        return "more than one cache level or eviction priority"
    if not levels and not evict:
        return "prefetch needs a cache level (.L1 or .L2) or an eviction priority"
    if space not in (None, "global", "local"):
        return f"prefetch works on .global, .local or generic addresses, not .{space}"
    if evict:
        e = min(evict)
        if e not in ("L2::evict_last", "L2::evict_normal"):
            return f"prefetch takes the eviction priorities .L2::evict_last and .L2::evict_normal, not '.{e}'"
        if space == "local":
            return f"'.{e}' cannot be applied to the .local space"
    return None


def _cache_control(opcode: str, ms: set[str]) -> str | None:
    space, msg = _space(opcode, ms)
    if msg:
        return msg
    if space not in (None, "global"):
        return f"{opcode} works on .global or generic addresses, not .{space}"
    want = "L2::evict_normal" if opcode == "applypriority" else "L2"
    if ms - {"global"} != {want}:
        return f"{opcode} is written '{opcode}{{.global}}.{want}'"
    return None


def _createpolicy(opcode: str, ms: set[str]) -> str | None:
    kinds = ms & {"fractional", "range", "cvt"}
    if len(kinds) != 1:
        return "createpolicy needs exactly one of .fractional, .range and .cvt"
    kind = min(kinds)
    if kind == "cvt":
        return None if ms - {"b64"} == {"cvt", "L2"} else "createpolicy.cvt is written 'createpolicy.cvt.L2.b64'"
    if "global" in ms and kind != "range":
        return "'.global' applies to createpolicy.range only"
    prio = ms & (L2_EVICT | {"L2::cache_hint"})
    if not prio & L2_EVICT:
        return f"createpolicy.{kind} needs a primary priority (.L2::evict_last, ...)"
    if "L2::cache_hint" in prio or len(prio) > 2:
        return f"createpolicy.{kind} takes a primary and an optional secondary priority"
    return None


def _secondary_ok(modifiers: tuple[str, ...]) -> str | None:
    """createpolicy's secondary priority (the second L2 one, in order) is .L2::evict_first or .L2::evict_unchanged."""
    prios = [m for m in modifiers if m in L2_EVICT]
    if len(prios) == 2 and prios[1] not in ("L2::evict_first", "L2::evict_unchanged"):
        return f"the secondary priority of createpolicy is .L2::evict_first or .L2::evict_unchanged, not '.{prios[1]}'"
    return None


def _fence(opcode: str, ms: set[str]) -> str | None:
    if opcode == "membar":
        if "proxy" in ms:
            return None if ms - {"proxy"} == {"alias"} else "membar.proxy takes the proxy kind .alias"
        levels = ms & {"cta", "gl", "sys"}
        if len(levels) != 1 or ms - levels:
            return "membar needs exactly one level (.cta, .gl or .sys)"
        return None
    scope = ms & SCOPES
    orders = ms & ORDERS
    if len(scope) > 1:
        return f"more than one scope ({_dots(scope)})"
    if "proxy" in ms:
        return _fence_proxy(ms, orders, scope)
    if "mbarrier_init" in ms:
        if orders != {"release"} or scope != {"cluster"}:
            return "fence.mbarrier_init is written 'fence.mbarrier_init.release.cluster'"
        return None
    restrict = {m for m in ms if m.startswith("sync_restrict")}
    if orders - {"sc", "acq_rel", "acquire", "release"}:
        return f"'.{min(orders - {'sc', 'acq_rel', 'acquire', 'release'})}' is not a memory order of fence"
    if len(orders) > 1:
        return f"more than one memory order ({_dots(orders)})"
    if not scope:
        return "fence needs a scope (.cta, .cluster, .gpu or .sys)"
    if restrict and (scope != {"cluster"} or (orders, restrict) not in (
            ({"acquire"}, {"sync_restrict::shared::cluster"}), ({"release"}, {"sync_restrict::shared::cta"}))):
        return "fence.sync_restrict is '.acquire.sync_restrict::shared::cluster' or " \
               "'.release.sync_restrict::shared::cta', at .cluster scope"
    return None


def _fence_proxy(ms: set[str], orders: set[str], scope: set[str]) -> str | None:
    kinds = ms - {"proxy"} - orders - scope
    if kinds in ({"alias"}, {"async"}, {"async", "global"}, {"async", "shared::cta"}, {"async", "shared::cluster"}):
        return None if not orders and not scope else "fence.proxy.alias/.async takes no memory order or scope"
    if kinds == {"tensormap::generic"}:
        if orders not in ({"release"}, {"acquire"}):
            return "fence.proxy.tensormap::generic needs '.release' or '.acquire'"
        if not scope:
            return "fence.proxy.tensormap::generic needs a scope"
        return None
    if "async::generic" in kinds:
        restrict = kinds - {"async::generic"}
        if scope == {"cluster"} and (orders, restrict) in (({"acquire"}, {"sync_restrict::shared::cluster"}),
                                                           ({"release"}, {"sync_restrict::shared::cta"})):
            return None
        return "fence.proxy.async::generic is '.acquire.sync_restrict::shared::cluster.cluster' or " \
               "'.release.sync_restrict::shared::cta.cluster'"
    return "fence.proxy needs a proxy kind (.alias, .async{.global,.shared::cta,.shared::cluster}, .tensormap::generic)"


def _cp_async(opcode: str, ms: set[str]) -> str | None:
    """The non-bulk cp.async forms: the copy, commit_group/wait_group/wait_all and mbarrier.arrive."""
    rest = ms - {"async"}
    types = {m for m in rest if m in TYPES}
    if rest & {"commit_group", "wait_group", "wait_all"}:
        return None if len(rest) == 1 else f"cp.async.{min(rest & {'commit_group', 'wait_group', 'wait_all'})} " \
                                           "takes no modifiers"
    if "mbarrier" in rest:
        space = rest & SPACES
        if space - {"shared", "shared::cta"}:
            return f"cp.async.mbarrier.arrive works on .shared{{::cta}}, not .{min(space)}"
        if types != {"b64"}:
            return "cp.async.mbarrier.arrive needs the type .b64"
        if rest - {"mbarrier", "arrive", "noinc", "b64"} - space:
            return f"'.{min(rest - {'mbarrier', 'arrive', 'noinc', 'b64'} - space)}' is not a modifier of " \
                   "cp.async.mbarrier.arrive"
        return None
    cops = rest & {"ca", "cg"}
    if len(cops) != 1:
        return "cp.async needs exactly one of .ca and .cg"
    if "shared::cluster" in rest or "global" not in rest or not rest & {"shared", "shared::cta"}:
        return "cp.async copies .global to .shared{::cta}: write cp.async.ca.shared.global"
    if types:
        return f"cp.async takes no type, got .{min(types)}"
    size = rest & PREFETCH_SIZE
    if len(size) > 1:
        return f"more than one prefetch size ({_dots(size)})"
    extra = rest - {"ca", "cg", "shared", "shared::cta", "global", "L2::cache_hint"} - PREFETCH_SIZE
    if extra:
        return f"'.{min(extra)}' is not a modifier of cp.async"
    return None


_RULES = {"ld": _ld_st, "st": _ld_st, "ldu": _ldu, "atom": _atom_red, "red": _atom_red, "prefetch": _prefetch,
          "prefetchu": _prefetch, "applypriority": _cache_control, "discard": _cache_control,
          "createpolicy": _createpolicy, "fence": _fence, "membar": _fence, "cp": _cp_async}


def _address_ops(opcode: str, ms: set[str]) -> str | None:
    """cvta and isspacep: one state space."""
    _, msg = _one(ms, SPACES, "state space")
    return msg


_RULES.update(cvta=_address_ops, isspacep=_address_ops)


def memory_problems(opcode: str, modifiers: tuple[str, ...]) -> str | None:
    """:func:`memory_problem`, and the rules that see the modifiers' order and repeats: a repeated modifier
    (ptxas: "Multiple cache operation modifiers", "Multiple .noinc modifiers"), cvta's ``.to`` first, createpolicy's
    secondary priority."""
    if opcode not in _RULES:
        return None
    repeated = sorted({m for m in modifiers if modifiers.count(m) > 1 and m not in L2_EVICT})
    if repeated:
        return f"'.{repeated[0]}' is repeated"
    if opcode == "cvta" and "to" in modifiers and modifiers[0] != "to":
        return "'.to' comes first: cvta.to.<space>"
    if opcode == "fence" and "op_restrict" in modifiers:
        return "'.op_restrict' stands for the operation, write fence.mbarrier_init.release.cluster"
    msg = memory_problem(opcode, modifiers)
    if msg is None and opcode == "createpolicy":
        msg = _secondary_ok(modifiers)
    return msg




# --------------------------------------------------------------------------- operands

def memory_operand_problems(ins, reg_width) -> list[tuple[str, object]]:
    """The operands ptxas refuses in a memory instruction whose modifiers are fine: (message, location) pairs.
    ``reg_width(op)`` is the declared width in bits of a plain register operand (None for anything else)."""
    ms, ops, out = set(ins.modifiers), ins.operands, []
    text = ".".join((ins.opcode, *ins.modifiers))

    def bad(i: int, why: str) -> None:
        out.append((f"operand {i + 1} of '{text}' {why}", getattr(ops[i], "loc", None) or ins.loc))

    if ins.opcode in ("ld", "st", "atom", "red", "cp") and "L2::cache_hint" in ms and ops:
        if reg_width(ops[-1]) not in (None, 64):
            bad(len(ops) - 1, "is the cache policy: a 64-bit register")
    if ins.opcode in ("ld", "st") and "async" not in ms and len(ops) >= 2:
        data, addr = (0, 1) if ins.opcode == "ld" else (1, 0)
        n = next((_VEC[m] for m in ms if m in _VEC), 1)
        if n > 1 and not isinstance(ops[data], ast.Vector):
            bad(data, f"must be a {{...}} vector of {n} elements for .v{n}")
        if isinstance(ops[data], ast.SpecialReg):
            bad(data, "cannot be a special register (move it to a register first)")
        a = ops[addr]
        if isinstance(a, ast.Address) and a.base is None and not a.elements and "local" not in ms:
            bad(addr, "is an immediate address, which only the .local space takes")
    for i, a in enumerate(ops):  # [a].unified: ld, ldu, atom, multimem.ld_reduce on a register, generic or .global
        if isinstance(a, ast.Address) and a.unified and a.base is not None and not (
                (ins.opcode in ("ld", "ldu", "atom") or (ins.opcode == "multimem" and "ld_reduce" in ms))
                and not ms & (SPACES - {"global"}) and isinstance(a.base, ast.Reg) and not a.elements):
            out.append((f"operand {i + 1} of '{text}': illegal use of attribute '.unified' (ptxas 13.0 takes it on "
                        "a register address of ld, ldu, atom and multimem.ld_reduce, generic or .global)",
                        a.loc or ins.loc))
    if ins.opcode in ("isspacep", "cvta") and len(ops) == 2 and (ins.opcode == "isspacep" or "to" in ms):
        if isinstance(ops[1], ast.Symbol):
            bad(1, "must be a register holding an address (a variable's name is not one here)")
    if ins.opcode in ("fence", "membar") and ops and not ("tensormap::generic" in ms and "acquire" in ms):
        out.append((f"'{text}' takes no operands", ins.loc))
    if (ins.opcode == "mov" and len(ops) == 2 and isinstance(ops[1], (ast.Symbol, ast.SymbolOffset))
            and ms & {"f32", "f64", "f16"}):
        bad(1, "is a variable's address, an integer: mov.u64/.b64 takes it, not a floating-point type")
    if ins.opcode == "cp" and "async" in ms and ms & {"ca", "cg"} and len(ops) >= 4:
        size = ops[2].value if isinstance(ops[2], ast.Imm) and ops[2].kind == "int" else None
        extra = ops[3]
        if "L2::cache_hint" in ms and len(ops) == 4:
            pass  # [dst], [src], size, policy
        elif isinstance(extra, ast.Imm) and extra.kind == "int" and size is not None and not 0 <= extra.value <= size:
            bad(3, f"(src-size) must be in [0, {size}]")
        elif reg_width(extra) == 64:
            bad(3, "(src-size) must be a 32-bit register or a predicate (ignore-src)")
    if ins.opcode == "createpolicy" and ops:
        if reg_width(ops[0]) not in (None, 64):
            bad(0, "(the policy) must be a 64-bit register")
        if "fractional" in ms and len(ops) == 2 and isinstance(ops[1], ast.Imm) and ops[1].kind == "int":
            bad(1, "(the fraction) must be a floating-point constant or an .f32 register")
        if "range" in ms and len(ops) == 4:
            for i in (2, 3):
                if reg_width(ops[i]) == 64:
                    bad(i, "(a size) must be a 32-bit register or constant")
        if "cvt" in ms and len(ops) == 2 and reg_width(ops[1]) not in (None, 64):
            bad(1, "(the access property) must be a 64-bit register")
    return out


# --------------------------------------------------------------------------- declarations

_SPACE_CHECKED = frozenset({"ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", "cvta"})


def _var_space(space: str) -> str:
    """A space modifier as a declaration's space: ``.shared::cta`` -> shared, ``.param::entry`` -> param."""
    return space.split("::")[0]


def declaration_problems(ins, space_of, address_bits: int, target) -> list[tuple[str, object]]:
    """What ptxas 13.0 refuses once it knows the declarations: ``space_of(name)`` is the state space a name in scope
    is declared in ("func" for a function, None if unknown); ``target`` the module's (or None).

    * A variable named by ``cvta`` or as a memory address (``ld``, ``ldu``, ``st``, ``atom``, ``red``, ``prefetch``,
      ``prefetchu``) in another state space than the instruction's: "State space mismatch between instruction and
      address in instruction 'cvta'"; with no space (a generic address) a ``.const`` or ``.param`` variable (which
      has no generic address; a ``.global``, ``.shared`` or ``.local`` one does); ``prefetchu`` of a ``.shared`` or
      ``.local`` variable ("Non-generic address is not supported as operand for prefetchu").
    * A 32-bit address in a 64-bit module: ``cvta`` of ``.u32``, ``mov.{u32,b32,s32}`` of a ``.global`` variable
      (ptxas: "Program uses 32-bit address ... which is conflicting with .address_size 64", then on sm_90 and
      later "32-Bit ABI (--machine 32 or 32-Bit addressing) is not supported on sm_90 or higher architectures",
      before sm_90 "32-Bit compilation is no longer supported")."""
    ms, ops, out = set(ins.modifiers), ins.operands, []
    text = ".".join((ins.opcode, *ins.modifiers))
    if address_bits == 64 and (
            (ins.opcode == "cvta" and "u32" in ms)
            or (ins.opcode == "mov" and len(ops) == 2 and isinstance(ops[1], ast.Symbol)
                and ms & {"u32", "b32", "s32"} and space_of(ops[1].name) == "global")):
        why = ("32-bit addressing is not supported on sm_90 or higher architectures" if target is None
               or target.sm >= 90 else "32-bit compilation is no longer supported")
        out.append((f"'{text}' uses a 32-bit address, which conflicts with .address_size 64 ({why}, as ptxas 13.0 "
                    "says)", ins.loc))
    if ins.opcode not in _SPACE_CHECKED or ("async" in ms and ins.opcode != "st"):
        return out
    spaces = ms & SPACES
    if len(spaces) > 1:
        return out
    want = _var_space(next(iter(spaces))) if spaces else None
    for i, op in enumerate(ops):
        name = (op.name if isinstance(op, (ast.Symbol, ast.SymbolOffset)) and ins.opcode == "cvta" and i == 1
                else op.base.name if isinstance(op, ast.Address) and isinstance(op.base, ast.Symbol)
                and not op.elements and ins.opcode != "cvta" else None)
        got = space_of(name) if name is not None else None
        if got is None or got not in ("global", "shared", "local", "const", "param", "func"):
            continue
        if ins.opcode == "prefetchu" and got in ("shared", "local"):  # ptxas: "Non-generic address is not supported"
            out.append((f"operand {i + 1} of '{text}': state space mismatch between instruction and address "
                        f"('{name}' is a .{got} variable, a non-generic address, which prefetchu does not take)",
                        getattr(op, "loc", None) or ins.loc))
            continue
        if got != want and (want is not None or got in ("const", "param", "func")):
            what = "a function" if got == "func" else f"a .{got} variable"
            why = f"the instruction's space is .{want}" if want else "which has no generic address"
            out.append((f"operand {i + 1} of '{text}': state space mismatch between instruction and address "
                        f"('{name}' is {what}, {why})", getattr(op, "loc", None) or ins.loc))
    return out


__all__ = ["declaration_problems", "memory_operand_problems", "memory_problems"]
