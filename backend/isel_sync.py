"""Instruction selection for control and synchronisation: terminators, CTA barriers, fences and the
warp-collective ops (shfl, vote, match, redux, activemask) (a rule group of
:class:`xcc.backend.isel.InstructionSelector`; see :mod:`xcc.backend.isel_core`)."""

from __future__ import annotations

from xcc.backend.isa import PT, RZ
from xcc.backend.isel_core import SelectorCore, width_of
from xcc.backend.isel_tables import FENCE_SCOPE, REDUX_OP, VOTE_MODE
from xcc.backend.minst import Imm, new_vreg
from xcc.passes.divergence import analyse_uniformity


def _only_exits(block, hops: int = 4) -> bool:
    """Whether reaching ``block`` ends the thread at once: it (or the chain of empty blocks it jumps to)
    holds nothing but ``ret``/``exit`` and no phis."""
    for _ in range(hops):
        if block.phis or len(block.instructions) != 1:
            return False
        term = block.instructions[0]
        if term.op in ("ret", "exit"):
            return True
        if term.op != "br":
            return False
        block = term.targets[0]
    return False


class SyncSelection(SelectorCore):
    # ----------------------------------------------------------------- terminators
    def op_br(self, inst):
        self.emit("BRA", b=inst.targets[0].name)

    def op_cbr(self, inst):
        t, f = inst.targets
        if self.early_exit and self.fn.is_entry:
            for target, other, negated in ((t, f, False), (f, t, True)):
                if _only_exits(target) and not _only_exits(other):
                    # a guard such as `if (i >= n) return;`: the threads that leave exit here, as ptxas does
                    # (no branch, no reconvergence barrier: exited threads leave every barrier's mask)
                    self.emit("EXIT", guard=self.pred_src(inst.args[0], negated))
                    self.emit("BRA", b=other.name)
                    return
        bra = self.emit("BRA", guard=self.pred_src(inst.args[0]), b=t.name)
        if self.uniform_branches:
            if self._uniformity is None:
                self._uniformity = analyse_uniformity(self.fn)
            bra.uniform = not self._uniformity.operand_divergent(inst.args[0], self.block)
        self.emit("BRA", b=f.name)

    def op_ret(self, inst):
        if not self.fn.is_entry:  # a device function returns to its caller (isel_calls)
            self.select_return(inst)
            return
        self.emit("EXIT")

    def op_exit(self, inst):
        self.emit("EXIT")


    # ----------------------------------------------------------------- synchronisation and warps
    def op_bar_sync(self, inst):
        if len(inst.args) > 1:  # bar.sync a, b: a named barrier completed by b threads
            self.emit("BAR.CNT", b=self.src_b(inst.args[0]), c=self.reg(inst.args[1]), mods={"mode": "SYNC"})
            return
        self.emit("BAR", b=self.src_b(inst.args[0]))

    def op_bar_arrive(self, inst):
        self.emit("BAR.CNT", b=self.src_b(inst.args[0]), c=self.reg(inst.args[1]), mods={"mode": "ARV"})

    def op_bar_red(self, inst):
        """bar.red.popc.u32 d / bar.red.and|or.pred p: BAR.RED into a register (then ISETP for a predicate)."""
        p, bar, *count = inst.args
        op = inst.attrs["redop"].upper()
        d = self.vreg(inst.result) if op == "POPC" else new_vreg(1)
        self.emit("BAR.RED", d=d, b=self.src_b(bar), c=self.reg(count[0]) if count else RZ, ps=self.pred_src(p),
                  mods={"op": op})
        if op != "POPC":
            self.emit("ISETP", pd=self.vreg(inst.result), a=d, b=Imm(0), ps=(PT, False), mods={"cmp": "NE"})

    def op_fence(self, inst):
        if inst.attrs.get("scope") == "proxy":  # fence.proxy.async: orders generic against async-proxy accesses
            self.emit("FENCE.VIEW.ASYNC")
            return
        scope = FENCE_SCOPE.get(inst.attrs.get("scope", "gl"), "GPU")
        self.emit("MEMBAR", mods={"scope": scope} if scope != "CTA" else {})

    def op_shfl(self, inst):
        a, b, c, mask = inst.args
        mode = inst.attrs["mode"].upper()
        if inst.attrs.get("valid"):
            self.emit("SHFL", d=RZ, pd=self.vreg(inst.result), a=self.reg(a), b=self.src_b(b), c=self.reg(c),
                      e=self.reg(mask), mods={"mode": mode})
        else:
            self.emit("SHFL", d=self.vreg(inst.result), pd=PT, a=self.reg(a), b=self.src_b(b), c=self.reg(c),
                      e=self.reg(mask), mods={"mode": mode})

    def op_vote(self, inst):
        p, mask = inst.args
        mode = inst.attrs["mode"]
        d = self.vreg(inst.result)
        if mode == "ballot":
            self.emit("VOTE", d=d, pd=PT, ps=self.pred_src(p), e=self.reg(mask))
        else:
            self.emit("VOTE", d=RZ, pd=d, ps=self.pred_src(p), e=self.reg(mask),
                      mods={"mode": VOTE_MODE[mode]})

    def op_match(self, inst):
        """match.{any,all}.sync: MATCH (b32) or MATCH.64 (b64); match.all's predicate is pd."""
        a, mask = inst.args
        mn = "MATCH.64" if width_of(inst.type) == 2 else "MATCH"
        mods = {"mode": inst.attrs["mode"].upper()}
        if inst.attrs.get("pred"):
            self.emit(mn, d=RZ, pd=self.vreg(inst.result), a=self.reg(a), e=self.reg(mask), mods=mods)
        else:
            self.emit(mn, d=self.vreg(inst.result), pd=PT, a=self.reg(a), e=self.reg(mask), mods=mods)

    def op_redux(self, inst):
        a, mask = inst.args
        op = REDUX_OP.get(inst.attrs["redop"], inst.attrs["redop"].upper())
        self.emit("REDUX", d=self.vreg(inst.result), a=self.reg(a), e=self.reg(mask),
                  mods={"op": op, **({"type": "S32"} if inst.type.kind == "s" else {})})

    def op_activemask(self, inst):
        ones = new_vreg(1)
        self.emit("MOV", d=ones, b=Imm(0xFFFFFFFF))
        self.emit("VOTE", d=self.vreg(inst.result), pd=PT, ps=(PT, False), e=ones)
