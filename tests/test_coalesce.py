"""Copy coalescing before register allocation (backend/coalesce.py) and the operand folds after instruction
selection (backend/combine.py): on hand-built machine code, what is folded and what must not be; on nvcc's
block_reduce, the loop's phi copy is gone, the back edge is one branch, and the results are numpy's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from xcc import runtime as rt
from xcc.backend.coalesce import coalesce_copies, drop_unreachable, hoist_common, thread_branches
from xcc.backend.combine import combine
from xcc.backend.isa import PT, RZ, SR_INDEX
from xcc.backend.isel import MBlock
from xcc.backend.minst import CBank, Half, Imm, mi, new_vreg
from xcc.backend.regalloc import allocate, check_allocation
from xcc.driver import CompileOptions, compile_module, read_source

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES_BY_NAME, ptx_path  # noqa: E402


def _loop(use_after: bool):
    """``v = tid; do { n = v >> 1; v = n } while (n != 0)`` with the phi copy ``MOV v, n`` on the back edge;
    ``use_after`` reads the old ``v`` after ``n`` is defined (then the two interfere)."""
    tid, v, n, p, out = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(0), new_vreg(2)
    body = [mi("SHR", d=n, a=v, b=Imm(1)), mi("ISETP", pd=p, a=n, b=RZ, ps=(PT, False), mods={"cmp": "NE"})]
    if use_after:
        body.append(mi("STG", a=out, b=0, c=v))
    body += [mi("BRA", guard=(p, False), b="latch"), mi("BRA", b="exit")]
    blocks = [
        MBlock("entry", [mi("S2R", d=tid, b=SR_INDEX["SR_TID.X"]), mi("LDC.64", d=out, b=_cb(0x160)),
                         mi("MOV", d=v, b=tid), mi("BRA", b="loop")], ["loop"]),
        MBlock("loop", body, ["latch", "exit"]),
        MBlock("latch", [mi("MOV", d=v, b=n), mi("BRA", b="loop")], ["loop"]),
        MBlock("exit", [mi("STG", a=out, b=4, c=n), mi("EXIT")], []),
    ]
    return blocks, v, n


def _cb(off):
    return CBank(0, off)


def _movs(blocks):
    return [m for b in blocks for m in b.insts if m.mnemonic == "MOV" and not isinstance(m.ops["b"], Imm)]


def test_loop_carried_copy_is_coalesced_and_the_back_edge_is_one_branch():
    blocks, v, n = _loop(use_after=False)
    rename = coalesce_copies(blocks)
    assert rename, "the phi copies' registers never hold different values at once"
    assert _movs(blocks) == []
    thread_branches(blocks)
    assert [b.name for b in blocks] == ["entry", "loop", "exit"]
    loop = blocks[1]
    assert loop.insts[-2].mnemonic == "BRA" and loop.insts[-2].ops["b"] == "loop" and "loop" in loop.succs
    assign, used = allocate(blocks)
    check_allocation(blocks, assign)
    assert used == 4  # R0 for tid, v and n; R2:R3 for the output address (without coalescing: 5)


def test_interfering_copy_is_kept():
    blocks, v, n = _loop(use_after=True)  # the old v is stored after n is defined: both live at once
    coalesce_copies(blocks)
    kept = _movs(blocks)
    assert [(m.ops["d"], m.ops["b"]) for m in kept if m.ops["b"] == n] == [(v, n)]
    assign, _ = allocate(blocks)
    check_allocation(blocks, assign)
    assert assign[v] != assign[n]


def test_guarded_copy_is_not_a_copy():
    a, b, p = new_vreg(1), new_vreg(1), new_vreg(0)
    blocks = [MBlock("entry", [mi("S2R", d=a, b=SR_INDEX["SR_TID.X"]), mi("S2R", d=b, b=SR_INDEX["SR_LANEID"]),
                               mi("ISETP", pd=p, a=a, b=RZ, ps=(PT, False), mods={"cmp": "NE"}),
                               mi("MOV", guard=(p, False), d=b, b=a),
                               mi("STS", a=a, b=0, c=b), mi("EXIT")], [])]
    assert coalesce_copies(blocks) == {}


def test_pair_and_predicate_copies_are_coalesced():
    w, x, p, q = new_vreg(2), new_vreg(2), new_vreg(0), new_vreg(0)
    blocks = [MBlock("entry", [
        mi("LDC.64", d=w, b=_cb(0x160)),
        mi("MOV", d=Half(x, 0), b=Half(w, 0)), mi("MOV", d=Half(x, 1), b=Half(w, 1)),
        mi("ISETP.64", pd=p, a=x, b=RZ, ps=(PT, False), mods={"cmp": "NE"}),
        mi("PLOP3", pd=q, pa=p, ps=(PT, False), mods={"lut": "0x0c"}),
        mi("STG", guard=(q, False), a=x, b=0, c=RZ), mi("EXIT")], [])]
    coalesce_copies(blocks)
    assert [m.mnemonic for m in blocks[0].insts] == ["LDC.64", "ISETP.64", "STG", "EXIT"]
    assign, _ = allocate(blocks)
    check_allocation(blocks, assign)


def test_combine_folds_multiply_adds_and_constants():
    i, base, t, d, k, s, e, z = (new_vreg(1), new_vreg(2), new_vreg(2), new_vreg(2), new_vreg(1), new_vreg(1),
                                 new_vreg(1), new_vreg(1))
    r = new_vreg(1)
    blocks = [MBlock("entry", [
        mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("LDC.64", d=base, b=_cb(0x160)),
        mi("IMAD.WIDE", d=t, a=i, b=Imm(4), c=RZ), mi("IADD.64", d=d, a=base, b=t),
        mi("MOV", d=z, b=Imm(0)), mi("SHL", d=k, a=i, b=Imm(2)), mi("IADD3", d=s, a=z, b=k, c=RZ),
        mi("MOV", d=e, b=Imm(16)), mi("LDS", d=r, a=e, b=4),
        mi("STS", a=s, b=0, c=r), mi("STG", a=d, b=0, c=s), mi("EXIT")], [])]
    combine(blocks)
    live = [m for m in blocks[0].insts if m.mnemonic not in ("MOV", "SHL", "IMAD.WIDE") or m.ops["d"] in (d, s)]
    ops = {m.mnemonic: m.ops for m in live}
    assert ops["IMAD.WIDE"] == {"d": d, "a": i, "b": Imm(4), "c": base}
    assert "IADD.64" not in ops
    assert ops["IMAD"] == {"d": s, "a": i, "b": Imm(4), "c": RZ}  # (i << 2) + 0
    lds = next(m for m in blocks[0].insts if m.mnemonic == "LDS")
    assert (lds.ops["a"], lds.ops["b"]) == (RZ, 20)  # [16 + 4]: the constant address became the offset


def test_combine_leaves_a_product_with_two_readers_or_a_changed_source():
    i, t, s, u = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(1)
    two = [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("IMAD", d=t, a=i, b=Imm(3), c=RZ),
           mi("IADD3", d=s, a=t, b=i, c=RZ), mi("STS", a=t, b=0, c=s), mi("EXIT")]
    blocks = [MBlock("entry", two, [])]
    combine(blocks)
    assert [m.mnemonic for m in blocks[0].insts] == ["S2R", "IMAD", "IADD3", "STS", "EXIT"]
    changed = [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("S2R", d=u, b=SR_INDEX["SR_LANEID"]),
               mi("IMAD", d=t, a=i, b=Imm(3), c=RZ), mi("S2R", d=i, b=SR_INDEX["SR_LANEID"]),
               mi("IADD3", d=s, a=t, b=u, c=RZ), mi("STS", a=i, b=0, c=s), mi("EXIT")]
    blocks = [MBlock("entry", changed, [])]
    combine(blocks)
    assert [m.mnemonic for m in blocks[0].insts] == ["S2R", "S2R", "IMAD", "S2R", "IADD3", "STS", "EXIT"]


def test_block_reduce_loop_has_no_copies_and_matches_numpy():
    case = CASES_BY_NAME["block_reduce"]
    path = ptx_path(case, "sm_80")
    obj = compile_module([read_source(path)], CompileOptions(opt_level=3), kernels=[case.entry])
    k = obj.kernels[case.entry]
    insts = k.instructions
    assert not [m for m in insts if m.mnemonic == "MOV" and isinstance(m.ops["b"], int) and m.ops["b"] != RZ]
    device = rt.Device()
    fn = rt.load_module(obj.to_bytes(), device=device).get_function(case.entry)
    launch = case.make(np.random.default_rng(0))
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem, timing=False)
    for i, want in launch.expected.items():
        np.testing.assert_array_equal(args[i].copy_to_host(), want)


def test_combine_shares_repeated_constants_and_merges_shuffle_pairs():
    """shfl.sync d|p is selected as two SHFLs (one writes d, one p), each reading its own MOVs of the clamp
    and the member mask: one SHFL and one MOV of each constant remain."""
    x, d, p = new_vreg(1), new_vreg(1), new_vreg(0)
    c1, e1, c2, e2 = new_vreg(1), new_vreg(1), new_vreg(1), new_vreg(1)
    insts = [mi("S2R", d=x, b=SR_INDEX["SR_LANEID"]),
             mi("MOV", d=c1, b=Imm(31)), mi("MOV", d=e1, b=Imm(0xFFFFFFFF)),
             mi("SHFL", d=d, pd=PT, a=x, b=Imm(16), c=c1, e=e1, mods={"mode": "DOWN"}),
             mi("MOV", d=c2, b=Imm(31)), mi("MOV", d=e2, b=Imm(0xFFFFFFFF)),
             mi("SHFL", d=RZ, pd=p, a=x, b=Imm(16), c=c2, e=e2, mods={"mode": "DOWN"}),
             mi("STS", guard=(p, False), a=RZ, b=0, c=d), mi("EXIT")]
    blocks = [MBlock("entry", insts, [])]
    combine(blocks)
    shfl = [m for m in blocks[0].insts if m.mnemonic == "SHFL"]
    assert len(shfl) == 1 and shfl[0].ops["d"] == d and shfl[0].ops["pd"] == p
    assert (shfl[0].ops["c"], shfl[0].ops["e"]) == (c1, e1)


def test_unreachable_exit_block_is_dropped():
    """A loop whose exit test became ``@!P EXIT; BRA loop`` leaves its exit block reached by nothing (its
    successor lists still name it)."""
    i, p = new_vreg(1), new_vreg(0)
    blocks = [
        MBlock("entry", [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"])], ["loop"]),
        MBlock("loop", [mi("IADD3", d=i, a=i, b=Imm(1), c=RZ),
                        mi("ISETP", pd=p, a=i, b=Imm(9), ps=(PT, False), mods={"cmp": "LT"}),
                        mi("EXIT", guard=(p, True)), mi("BRA", b="loop")], ["loop", "done"]),
        MBlock("done", [mi("EXIT")], []),
    ]
    drop_unreachable(blocks)
    assert [b.name for b in blocks] == ["entry", "loop"] and blocks[1].succs == ["loop"]
    blocks.append(MBlock("done", [mi("EXIT")], []))
    blocks[1].insts[-1] = mi("BRA", guard=(p, False), b="loop")  # now the loop falls through into it
    drop_unreachable(blocks)
    assert [b.name for b in blocks] == ["entry", "loop", "done"]


def test_combine_folds_a_sign_extension_into_the_address():
    """``cvt.s64.s32 t, i; add.s64 a, base, t`` (MOV t.lo, i; SHR.S32 t.hi, i, 31; IADD.64) is one
    ``IMAD.WIDE.S32 a, i, 1, base``; with a zero high word, the unsigned IMAD.WIDE."""
    for hi_def, mods in ((lambda t, i: mi("SHR", d=Half(t, 1), a=i, b=Imm(31), mods={"type": "S32"}),
                          {"type": "S32"}),
                         (lambda t, i: mi("MOV", d=Half(t, 1), b=Imm(0)), {})):
        i, base, t, a = new_vreg(1), new_vreg(2), new_vreg(2), new_vreg(2)
        blocks = [MBlock("entry", [
            mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("LDC.64", d=base, b=_cb(0x168)),
            mi("MOV", d=Half(t, 0), b=i), hi_def(t, i), mi("IADD.64", d=a, a=base, b=t),
            mi("STG", a=a, b=0, c=i), mi("EXIT")], [])]
        combine(blocks)
        assert [m.mnemonic for m in blocks[0].insts] == ["S2R", "LDC.64", "IMAD.WIDE", "STG", "EXIT"]
        wide = blocks[0].insts[2]
        assert wide.ops == {"d": a, "a": i, "b": Imm(1), "c": base} and wide.mods == mods


def test_instruction_both_sides_start_with_is_hoisted_and_the_empty_side_threaded():
    """After coalescing, a zero-trip test's two edges both set the counter to 0: one MOV above the branch."""
    n, c, p = new_vreg(1), new_vreg(1), new_vreg(0)
    blocks = [
        MBlock("entry", [mi("S2R", d=n, b=SR_INDEX["SR_TID.X"]),
                         mi("ISETP", pd=p, a=n, b=RZ, ps=(PT, False), mods={"cmp": "EQ"}),
                         mi("BRA", guard=(p, False), b="skip"), mi("BRA", b="pre")], ["skip", "pre"]),
        MBlock("pre", [mi("MOV", d=c, b=Imm(0)), mi("BRA", b="loop")], ["loop"]),
        MBlock("loop", [mi("IADD3", d=c, a=c, b=Imm(1), c=RZ),
                        mi("ISETP", pd=p, a=c, b=n, ps=(PT, False), mods={"cmp": "LT"}),
                        mi("BRA", guard=(p, False), b="loop"), mi("BRA", b="done")], ["loop", "done"]),
        MBlock("skip", [mi("MOV", d=c, b=Imm(0)), mi("BRA", b="done")], ["done"]),
        MBlock("done", [mi("STS", a=RZ, b=0, c=c), mi("EXIT")], []),
    ]
    hoist_common(blocks)
    assert [m.mnemonic for m in blocks[0].insts] == ["S2R", "ISETP", "MOV", "BRA", "BRA"]
    thread_branches(blocks)
    assert [b.name for b in blocks] == ["entry", "loop", "done"]
    assert [m.ops["b"] for m in blocks[0].insts[-2:]] == ["done", "loop"]
    assign, _ = allocate(blocks)
    check_allocation(blocks, assign)


def test_combine_folds_a_product_into_each_of_its_additions():
    """``t = i * 4`` added to three base addresses: three IMAD.WIDE, no product; one reader that is not an
    addition keeps it."""
    for keep in (False, True):
        i, t = new_vreg(1), new_vreg(2)
        bases, outs = [new_vreg(2) for _ in range(3)], [new_vreg(2) for _ in range(3)]
        insts = [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), *[mi("LDC.64", d=x, b=_cb(0x168 + 8 * k))
                                                         for k, x in enumerate(bases)],
                 mi("IMAD.WIDE", d=t, a=i, b=Imm(4), c=RZ),
                 *[mi("IADD.64", d=o, a=x, b=t) for o, x in zip(outs, bases)],
                 *[mi("STG", a=o, b=0, c=i) for o in outs]]
        if keep:
            insts.append(mi("STG.64", a=outs[0], b=8, c=t))
        blocks = [MBlock("entry", insts + [mi("EXIT")], [])]
        combine(blocks)
        names = [m.mnemonic for m in blocks[0].insts]
        if keep:
            assert names.count("IADD.64") == 3 and names.count("IMAD.WIDE") == 1
        else:
            assert names.count("IADD.64") == 0 and names.count("IMAD.WIDE") == 3
            assert [m.ops["c"] for m in blocks[0].insts if m.mnemonic == "IMAD.WIDE"] == bases
