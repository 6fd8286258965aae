"""Build the SSA IR from the PTX syntax tree.

SSA construction follows Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau,
"Simple and Efficient Construction of Static Single Assignment Form" (CC 2013):
each register is a variable, reads look up the block's current definition or
recurse into predecessors, placing phis, and a block is sealed once all its
predecessors are filled.  Trivial phis are removed afterwards.

A guarded instruction ``@p op`` becomes a ``selp`` of the new and the old value
when ``op`` has no effects, and a branch around ``op`` otherwise.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from xcc.diagnostics import PtxSemanticError, SourceLoc, UnsupportedError, XccError
from xcc.frontend import ast
from xcc.ir import alloca
from xcc.ir.cfg import reverse_postorder_from
from xcc.ir.core import Block, Const, Function, Instruction, Module, Param, Phi, Value, Variable
from xcc.ir.lower import InstLowering, imm_bits
from xcc.ir.scopes import FlatInst, FlatLabel, RegVar, flatten
from xcc.ir.types import PRED, ptx_type

# Instructions that may be executed under a false guard only by branching around them.
EFFECTFUL = frozenset({"ld", "ldu", "st", "atom", "red", "bar", "barrier", "membar", "fence", "shfl",
                       "vote", "call", "trap", "exit", "ret", "prefetch", "cp", "mbarrier", "activemask",
                       "match", "redux", "div", "rem", "ldmatrix", "wmma", "multimem", "tensormap",
                       "stmatrix"})

# brkpt (PTX ISA, miscellaneous instructions) suspends the thread for a debugger; the engines have none, so it
# stops the kernel as trap does, with this reason (CUTLASS puts __brkpt() on its invalid control paths).
BRKPT_REASON = "brkpt: a breakpoint with no debugger attached stops the kernel (as trap)"


@dataclass(eq=False)
class _ProtoBlock:
    """A block before SSA: the PTX instructions it holds and how it ends."""

    block: Block
    items: list[FlatInst] = field(default_factory=list)
    # ('br', target) | ('cbr', RegVar, negated, true_target, false_target) | ('ret'|'exit'|'trap', inst)
    end: tuple | None = None
    loc: SourceLoc | None = None


def build_module(mod: ast.Module, entries: Collection[str] | None = None) -> Module:
    """The IR module for a parsed PTX module: kernels and device functions; functions without a
    body are declarations (``Module.declarations``), resolved by :mod:`xcc.ir.link`.  ``entries``
    (None: all) are the kernels that must build: another kernel whose IR cannot be built (it uses what
    the IR cannot express yet) is left out instead of failing them, which is the runtime's lazy loading
    per kernel.  Every other kernel is kept, so the module is the same whichever of its kernels is asked
    for (function addresses, numbered module-wide, agree across kernels compiled one at a time)."""
    function_names = frozenset(fn.name for fn in mod.functions)
    signatures = {fn.name: fn for fn in mod.functions}
    spaces = {v.name: v.space for v in mod.variables}
    variables = [_variable(v, functions=function_names, spaces=spaces) for v in mod.variables]
    # .samplerref variables (texmode_independent): a tex naming an initialised one takes its fields at compile
    # time, an uninitialised one's value is read at run time; an initialised .texref's fields likewise in unified
    # mode (independent mode's are declarations with no effect: xcc.frontend.checker._Checker.opaque_initialisers)
    unified = "texmode_independent" not in mod.target
    samplers = {v.name: v for v in mod.variables
                if v.type == "samplerref" or (v.type == "texref" and v.init and unified)}
    handles = frozenset(v.name for v in mod.variables if v.type in ("texref", "surfref"))  # hold a handle
    functions, declarations = [], {}
    defined = {fn.name for fn in mod.functions if fn.body is not None}
    for fn in mod.functions:
        if fn.body is None:
            if fn.name not in defined:
                declarations.setdefault(fn.name, fn.loc)
            continue
        try:
            functions.append(FunctionBuilder(fn, variables, function_names, signatures, samplers, handles).build())
        except XccError:
            if entries is None or not fn.is_entry or fn.name in entries:
                raise  # else a kernel not asked for is left out: its error comes when it is asked for
    return Module(functions, variables, dict(mod.files), mod.filename, declarations)


def _mark_nounroll(body: list, blocks: list[Block]) -> None:
    """``L: .pragma "nounroll";`` (what nvcc emits for ``#pragma unroll 1``, PTX ISA 9.0 section 11.5.1): every
    branch to the loop header ``L`` gets ``attrs.nounroll``, which xcc.passes.unroll honours."""
    heads, prev = set(), None
    for st in body:
        if isinstance(st, ast.Pragma) and "nounroll" in st.text.split() and isinstance(prev, ast.Label):
            heads.add(prev.name.replace("$", ""))
        prev = st
    for b in blocks if heads else ():
        t = b.terminator
        if t is not None and any(s.name in heads for s in t.targets):
            t.attrs["nounroll"] = True


def _variable(decl: ast.VarDecl, key: str | None = None, functions: frozenset[str] = frozenset(),
              spaces: dict[str, str] | None = None) -> Variable:
    """The IR variable of ``decl``; an initialiser element naming one of ``functions`` (a 64-bit function
    pointer) is a relocation that :mod:`xcc.ir.funcptr` resolves after linking; one naming a module
    ``.global`` variable (``lut``, ``lut+4``, ``generic(lut)+8``, ``0xFF00(lut)``; ``spaces``: the module's
    variables) an address relocation the loader applies (``Variable.addr_relocs``)."""
    t = ptx_type(decl.type)
    count = 1
    for d in decl.dims:
        count *= d if d is not None else 0
    size = t.bytes * (decl.vector or 1) * count
    init, relocs, addr_relocs = None, [], []
    if decl.init and decl.type not in ("texref", "samplerref", "surfref"):  # (an opaque one's fields: no bytes)
        if t.kind == "pred":
            raise UnsupportedError(f"initialiser of variable '{decl.name}' is not supported yet", decl.loc)
        data, relocs, addr_relocs = bytearray(), [], []
        for e in decl.init:
            if isinstance(e, ast.Symbol) and e.name in functions and t.bytes == 8:
                relocs.append((len(data), e.name))
                data += bytes(8)
                continue
            target = e if isinstance(e, ast.Symbol) else e.base if isinstance(e, ast.Address) else None
            if isinstance(target, ast.Symbol) and (spaces or {}).get(target.name) == "global":
                mask = getattr(e, "mask", None) or 0
                if not mask and t.bytes not in (4, 8):
                    raise UnsupportedError(f"initialiser of variable '{decl.name}': an address needs a 32- or "
                                           f"64-bit element, not .{decl.type}", decl.loc)
                addr_relocs.append((len(data), t.bytes, target.name, getattr(e, "offset", 0), mask))
                data += bytes(t.bytes)
                continue
            if not isinstance(e, ast.Imm):
                raise UnsupportedError(f"initialiser of variable '{decl.name}' (an address) is not supported yet",
                                       decl.loc)
            data += imm_bits(e, t).to_bytes(t.bytes, "little")
        init = bytes(data.ljust(size, b"\0"))
    extern = decl.linkage == "extern"
    return Variable(key or decl.name, decl.space, size, decl.align or t.bytes, init, extern, decl.linkage,
                    tuple(relocs), tuple(addr_relocs))


def _params(fn: ast.Function, plist: list[ast.Param] | None = None, offset: int = 0) -> list[Param]:
    """Parameters laid out from ``offset`` with their alignment (kernel: the launch buffer;
    device function: its ``.param`` frame, ins then return parameters)."""
    params = []
    for p in fn.params if plist is None else plist:
        if p.space == "reg" and (fn.is_entry or p.type == "pred" or p.dims or getattr(p, "vector", None)):
            what = "a kernel's" if fn.is_entry else "a predicate, array or vector"
            raise UnsupportedError(f"'.reg' parameter '{p.name}' of '{fn.name}' ({what}) is not supported yet "
                                   "(scalar .reg parameters of a .func are)", p.loc or fn.loc)
        t = ptx_type(p.type)
        count = 1
        for d in p.dims:
            count *= d
        size = t.bytes * count
        align = p.align or t.bytes
        offset = (offset + align - 1) // align * align
        params.append(Param(p.name, p.type, offset, size, align))
        offset += size
    return params


class FunctionBuilder:
    def __init__(self, fn: ast.Function, module_vars: list[Variable], function_names: frozenset[str] = frozenset(),
                 signatures: dict[str, ast.Function] | None = None, samplers: dict[str, ast.VarDecl] | None = None,
                 handles: frozenset[str] = frozenset()):
        self.ast_fn = fn
        self.samplers = samplers or {}  # the module's .samplerref variables and initialised .texref ones
        self.handles = handles  # the module's .texref/.surfref variables (each holds a texture/surface handle)
        self.signatures = signatures or {}  # the module's functions (the types of a callee's .reg parameters)
        self.function_names = function_names  # the module's functions (their addresses are function pointers)
        self.params = _params(fn)
        self.ret_params: list[Param] = []
        self.module_vars = {v.name: v for v in module_vars}
        self.local_vars: dict[str, Variable] = {}
        if fn.is_entry:
            self.param_by_name = {p.name: p for p in self.params}
            self.frame_params: set[str] = set()
        else:  # a device function's parameters are variables of its .param frame
            end = max((p.offset + p.size for p in self.params), default=0)
            self.ret_params = _params(fn, fn.return_params, end)
            self.param_by_name = {}
            for p in self.params + self.ret_params:
                self.local_vars[p.name] = Variable(p.name, "param", p.size, p.align)
            self.frame_params = set(self.local_vars)
        self.current_def: dict[str, dict[Block, Value]] = {}
        self.sealed: set[Block] = set()
        self.filled: set[Block] = set()
        self.incomplete: dict[Block, list[tuple[RegVar, Phi]]] = {}
        self.block: Block | None = None
        self.counter = 0

    # ----------------------------------------------------------------- CFG
    def _new_block(self, name: str) -> _ProtoBlock:
        self.counter += 1
        return _ProtoBlock(Block(name or f"bb{self.counter}"))

    def _cfg(self, items) -> list[_ProtoBlock]:
        blocks = [self._new_block("entry")]
        by_label: dict[str, _ProtoBlock] = {}

        def labelled(key: str) -> _ProtoBlock:
            if key not in by_label:
                by_label[key] = self._new_block(key.replace("$", ""))
            return by_label[key]

        cur = blocks[0]
        tables = {it.key: it.targets for it in items if isinstance(it, FlatLabel) and it.targets is not None}
        for it in items:
            if isinstance(it, FlatLabel):
                nxt = labelled(it.key)
                if cur.end is None:
                    cur.end = ("br", nxt)
                blocks.append(nxt)
                cur = nxt
                continue
            inst = it.inst
            if cur.end is not None:  # unreachable code after a terminator: a fresh block
                cur = self._new_block("")
                blocks.append(cur)
            op = "trap" if inst.opcode == "brkpt" else inst.opcode  # no debugger to stop in: brkpt ends as trap
            g = inst.guard
            if op == "brx":
                cur = self._brx(inst, cur, blocks, tables, labelled)
            elif op == "bra":
                target = labelled(inst.operands[0])
                if g is None:
                    cur.end = ("br", target)
                else:
                    fall = self._new_block("")
                    cur.end = ("cbr", g.reg, g.negated, target, fall, inst.loc, inst.debug_loc)
                    blocks.append(fall)
                    cur = fall
            elif op in ("ret", "exit", "trap") and g is None:
                cur.end = (op, inst)
            elif g is not None and (op in EFFECTFUL or op in ("ret", "exit", "trap")):
                then, join = self._new_block(""), self._new_block("")
                cur.end = ("cbr", g.reg, g.negated, then, join, inst.loc, inst.debug_loc)
                unguarded = FlatInst(_unguard(inst))
                if op in ("ret", "exit", "trap"):
                    then.end = (op, inst)
                else:
                    then.items.append(unguarded)
                    then.end = ("br", join)
                blocks += [then, join]
                cur = join
            else:
                cur.items.append(it)
        if cur.end is None:
            cur.end = ("ret", None)
        # Preds in a fixed order: the order blocks appear.
        for pb in blocks:
            for s in _succ_blocks(pb):
                s.block.preds.append(pb.block)
        self.proto = {pb.block: pb for pb in blocks}
        return blocks

    def _brx(self, inst: ast.Instruction, cur: _ProtoBlock, blocks: list, tables: dict, labelled) -> _ProtoBlock:
        """``[@p] brx.idx[.uni] %i, T;`` (PTX ISA 9.0 section 9.7.13.2): a compare-and-branch chain over the
        ``.branchtargets`` list ``T``: target ``k`` when ``%i == k``; an index past the list (undefined
        behaviour in PTX) takes the last target.  Returns the block that follows (the guard's fall-through)."""
        index, table = inst.operands[0], inst.operands[1]
        if not isinstance(index, RegVar) or not isinstance(table, str) or table not in tables:
            raise PtxSemanticError(f"brx.idx takes a register and a .branchtargets label, not "
                                   f"'{getattr(table, 'name', table)}'", inst.loc)
        targets = [labelled(t) for t in tables[table]]
        fall = None
        if inst.guard is not None:
            test, fall = self._new_block(""), self._new_block("")
            cur.end = ("cbr", inst.guard.reg, inst.guard.negated, test, fall, inst.loc, inst.debug_loc)
            blocks.append(test)
            cur = test
        for k, target in enumerate(targets[:-1]):
            nxt = self._new_block("")
            cur.end = ("case", index, k, target, nxt, inst.loc, inst.debug_loc)
            blocks.append(nxt)
            cur = nxt
        cur.end = ("br", targets[-1])
        if fall is None:  # code after an unguarded brx is unreachable: a fresh block
            fall = self._new_block("")
        blocks.append(fall)
        return fall

    # ----------------------------------------------------------------- SSA (Braun et al.)
    def write(self, var: RegVar, block: Block, value: Value) -> None:
        self.current_def.setdefault(var.key, {})[block] = value

    def read(self, var: RegVar, block: Block) -> Value:
        defs = self.current_def.get(var.key)
        if defs is not None and block in defs:
            return defs[block]
        return self._read_recursive(var, block)

    def _read_recursive(self, var: RegVar, block: Block) -> Value:
        if block not in self.sealed:
            phi = Phi(Value(var.type, _vname(var)), block=block)
            block.phis.append(phi)
            self.incomplete.setdefault(block, []).append((var, phi))
            val = phi.result
        elif len(block.preds) == 1:
            val = self.read(var, block.preds[0])
        elif not block.preds:
            val = Const(var.type, 0)  # read before any write: PTX registers start undefined
        else:
            phi = Phi(Value(var.type, _vname(var)), block=block)
            block.phis.append(phi)
            self.write(var, block, phi.result)
            self._add_phi_operands(var, phi)
            val = phi.result
        self.write(var, block, val)
        return val

    def _add_phi_operands(self, var: RegVar, phi: Phi) -> None:
        for p in phi.block.preds:
            phi.args.append(self.read(var, p))

    def _seal(self, block: Block) -> None:
        for var, phi in self.incomplete.pop(block, []):
            self._add_phi_operands(var, phi)
        self.sealed.add(block)

    # ----------------------------------------------------------------- build
    def build(self) -> Function:
        fn = self.ast_fn = alloca.rewrite(self.ast_fn)  # alloca/stacksave/stackrestore: ordinary PTX
        reg_params = [p for p in fn.params + (fn.return_params or []) if p.space == "reg"]
        # a .reg parameter is also a register of the body (declared here), copied from/to its frame slot
        items, fvars = flatten(replace(fn, body=[ast.RegDecl(p.type, [p.name], loc=p.loc) for p in reg_params]
                                       + list(fn.body or [])))
        for fv in fvars:
            self.local_vars[fv.decl.name] = self.local_vars[fv.key] = _variable(fv.decl, fv.key)
        blocks = self._cfg(items)
        order = reverse_postorder_from(blocks[0], _succ_blocks)
        reachable = set(id(pb) for pb in order)
        for pb in blocks:  # unreachable blocks do not feed phis
            if id(pb) not in reachable:
                for s in _succ_blocks(pb):
                    s.block.preds.remove(pb.block)
        lowering = InstLowering(self)
        self.reg_rets = [p for p in fn.return_params or [] if p.space == "reg"]
        for pb in order:
            b = pb.block
            if all(p in self.filled for p in b.preds):
                self._seal(b)
            self.block = b
            if pb is order[0]:  # .reg parameters: the register starts as the argument
                for p in fn.params if not fn.is_entry else ():
                    if p.space == "reg":
                        lowering.lower(_reg_param_move("ld", p))
            for it in pb.items:
                lowering.lower(it.inst)
            self._terminate(pb, lowering)
            self.filled.add(b)
            for s in _succ_blocks(pb):
                if s.block not in self.sealed and all(p in self.filled for p in s.block.preds):
                    self._seal(s.block)
        for pb in order:
            if pb.block not in self.sealed:
                self._seal(pb.block)
        ir_blocks = [pb.block for pb in order]
        _remove_trivial_phis(ir_blocks)
        _mark_nounroll(fn.body or [], ir_blocks)
        variables = sorted({v.name: v for k, v in self.local_vars.items() if k not in self.frame_params}.values(),
                           key=lambda v: v.name)
        return Function(fn.name, fn.is_entry, self.params, ir_blocks, variables, dict(fn.directives), fn.loc,
                        self.ret_params, fn.linkage)

    def _terminate(self, pb: _ProtoBlock, lowering: InstLowering) -> None:
        kind = pb.end[0]
        b = pb.block
        if kind == "br":
            b.append(Instruction("br", None, [], attrs={"targets": [pb.end[1].block]}))
        elif kind == "cbr":
            _, var, negated, target, fall, loc, debug_loc = pb.end
            cond = self.read(var, b)
            t, f = (fall, target) if negated else (target, fall)
            b.append(Instruction("cbr", None, [cond], attrs={"targets": [t.block, f.block]}, loc=loc,
                                 debug_loc=debug_loc))
        elif kind == "case":  # one test of a brx.idx chain
            _, var, k, target, nxt, loc, debug_loc = pb.end
            cond, t = Value(PRED), ptx_type(f"u{var.type.bits}")
            b.append(Instruction("setp", t, [self.read(var, b), Const(t, k)], cond, {"cmp": "eq"}, loc))
            b.append(Instruction("cbr", None, [cond], attrs={"targets": [target.block, nxt.block]}, loc=loc,
                                 debug_loc=debug_loc))
        else:
            inst = pb.end[1]
            if kind == "ret" and not self.ast_fn.is_entry:  # .reg return parameters: the register's value
                for p in self.reg_rets:
                    lowering.lower(_reg_param_move("st", p))
            brkpt = inst is not None and inst.opcode == "brkpt"
            overflow = inst is not None and alloca.OVERFLOW_MARK in inst.modifiers
            reason = BRKPT_REASON if brkpt else alloca.OVERFLOW_REASON if overflow else None
            b.append(Instruction(kind, None, [], attrs={"reason": reason} if reason else {},
                                 loc=inst.loc if inst is not None else None,
                                 debug_loc=inst.debug_loc if inst is not None else None))


def _reg_param_move(op: str, p: ast.Param) -> ast.Instruction:
    """``ld.param.bN p, [p]`` (a .reg parameter's register from its frame slot) or ``st.param.bN [p], p``."""
    t = ptx_type(p.type)
    reg, slot = RegVar(p.name, t), ast.Address(ast.Symbol(p.name, p.loc))
    return ast.Instruction(op, ("param", f"b{t.bits}"), [reg, slot] if op == "ld" else [slot, reg], loc=p.loc)


def _vname(var: RegVar) -> str:
    return var.key.lstrip("%")


def _unguard(inst: ast.Instruction) -> ast.Instruction:
    return replace(inst, guard=None)


def _succ_blocks(pb: _ProtoBlock) -> list[_ProtoBlock]:
    if pb.end is None:
        return []
    if pb.end[0] == "br":
        return [pb.end[1]]
    if pb.end[0] in ("cbr", "case"):
        return [pb.end[3], pb.end[4]]
    return []


def _remove_trivial_phis(blocks: list[Block]) -> None:
    """Replace every phi whose operands are all one value (or itself) by that value, to a fixpoint."""
    repl: dict[Value, Value] = {}

    def find(v: Value) -> Value:
        while v in repl:
            v = repl[v]
        return v

    changed = True
    while changed:
        changed = False
        for b in blocks:
            for phi in list(b.phis):
                ops = {find(a) for a in phi.args} - {phi.result}
                consts = [o for o in ops if isinstance(o, Const)]
                if len(consts) > 1 and all(c.same(consts[0]) for c in consts) and len(consts) == len(ops):
                    ops = {consts[0]}
                if len(ops) <= 1:
                    repl[phi.result] = ops.pop() if ops else Const(phi.result.type, 0)
                    b.phis.remove(phi)
                    changed = True
    if not repl:
        return
    for b in blocks:
        for phi in b.phis:
            phi.args = [find(a) for a in phi.args]
        for inst in b.instructions:
            inst.args = [find(a) for a in inst.args]
