"""Small IR surgery shared by passes: replacing uses, removing CFG edges."""

from __future__ import annotations

from xcc.ir.core import Block, Function, Value


def replace_uses(fn: Function, repl: dict[Value, Value]) -> None:
    """Replace every use of a key of ``repl`` by its value (following chains)."""
    if not repl:
        return

    def find(v: Value) -> Value:
        while v in repl:
            v = repl[v]
        return v

    for b in fn.blocks:
        for phi in b.phis:
            phi.args = [find(a) for a in phi.args]
        for inst in b.instructions:
            inst.args = [find(a) for a in inst.args]


def remove_edge(src: Block, dst: Block) -> None:
    """Forget the CFG edge src -> dst on dst's side (its pred entry and phi operands)."""
    i = next(k for k, p in enumerate(dst.preds) if p is src)
    del dst.preds[i]
    for phi in dst.phis:
        del phi.args[i]
