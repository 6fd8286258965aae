"""Executors of the warp-level instructions (SHFL, VOTE, MATCH, REDUX), over :mod:`xcc.semantics.warp`;
registered in :data:`xcc.sim.isa.exec_base.IMPLS`."""

from __future__ import annotations

from xcc.semantics import warp
from xcc.sim.isa.exec_base import Binder, _drop, impl


# ============================================================================= warp-level
@impl("SHFL")
def _shfl(x: Binder):
    """PTX shfl.sync with the member mask e: :func:`xcc.semantics.warp.shfl`."""
    a, b, c, e = x.r("a"), x.ric("b"), x.r("c"), x.r("e")
    d, pd = x.set_r(), x.set_p("pd")
    mode = x.mod("mode").lower()

    def run(sel, idx, n):
        out, ok = warp.shfl(mode, idx, a(sel, n), b(sel, n), c(sel, n), e(sel, n))
        d(sel, out)
        pd(sel, ok)

    return run


@impl("VOTE")
def _vote(x: Binder):
    """PTX vote.sync (d = ballot, pd = mode) over the member mask e: :mod:`xcc.semantics.warp`."""
    ps, e, d, pd = x.p("ps"), x.r("e"), x.set_r(), x.set_p("pd")
    mode = {"ALL": "all", "ANY": "any", "EQ": "uni"}[x.mod("mode")]

    def run(sel, idx, n):
        p, mask = ps(sel, n), e(sel, n)
        if d is not _drop:
            d(sel, warp.ballot(idx, p, mask))
        if pd is not _drop:
            pd(sel, warp.vote(mode, idx, p, mask))

    return run


@impl("MATCH", "MATCH.64")
def _match(x: Binder):
    """PTX match.sync over the member mask e: :func:`xcc.semantics.warp.match`."""
    a = x.r("a") if x.inst.mnemonic == "MATCH" else x.w("a")
    e, d, pd, mode = x.r("e"), x.set_r(), x.set_p("pd"), x.mod("mode").lower()

    def run(sel, idx, n):
        mask, same = warp.match(mode, idx, a(sel, n), e(sel, n))
        d(sel, mask)
        pd(sel, same)

    return run


_REDUX = {"SUM": "add", "MIN": "min", "MAX": "max", "AND": "and", "OR": "or", "XOR": "xor"}


@impl("REDUX")
def _redux(x: Binder):
    """PTX redux.sync over the member mask e: :func:`xcc.semantics.warp.redux`."""
    a, e, d = x.r("a"), x.r("e"), x.set_r()
    op, signed = _REDUX[x.mod("op")], x.mod("type") == "S32"
    return lambda sel, idx, n: d(sel, warp.redux(op, idx, a(sel, n), e(sel, n), signed))
