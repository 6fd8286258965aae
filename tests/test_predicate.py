"""If-conversion on machine code (backend/predicate.py) and the liveness of guarded temporaries
(regalloc.guarded_kills): a short diamond becomes ptxas's ``MOV R, 0; @!P LDG R``, what may not be guarded
stays a branch, and kernels keep numpy's results with fewer instructions and no more registers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xcc import runtime as rt
from xcc.backend.isa import PT, RZ, SR_INDEX
from xcc.backend.isel import MBlock
from xcc.backend.minst import CBank, Imm, mi, new_vreg
from xcc.backend.objfile import ObjectFile
from xcc.backend.predicate import MAX_INSTRUCTIONS, predicate
from xcc.backend.regalloc import allocate, check_allocation, liveness
from xcc.driver import CompileOptions, compile_module, read_source

sys.path.insert(0, str(Path(__file__).parent))
from kernel_cases import CASES_BY_NAME, ptx_path  # noqa: E402


def _diamond(then_extra=(), then_len: int = 0):
    """``v = i < n ? x[i] : 0; y[0] = v`` as instruction selection leaves it."""
    i, p, x, a, t, v = new_vreg(1), new_vreg(0), new_vreg(2), new_vreg(2), new_vreg(1), new_vreg(1)
    then = [mi("IMAD.WIDE", d=a, a=i, b=Imm(4), c=x), mi("LDG", d=t, a=a, b=0), *then_extra]
    then += [mi("IADD3", d=t, a=t, b=Imm(1), c=RZ) for _ in range(then_len)]
    blocks = [
        MBlock("entry", [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("LDC.64", d=x, b=CBank(0, 0x168)),
                         mi("ISETP", pd=p, a=i, b=CBank(0, 0x160), ps=(PT, False), mods={"cmp": "GE"}),
                         mi("BRA", guard=(p, False), b="else"), mi("BRA", b="then")], ["else", "then"]),
        MBlock("then", [*then, mi("MOV", d=v, b=t), mi("BRA", b="join")], ["join"]),
        MBlock("else", [mi("MOV", d=v, b=Imm(0)), mi("BRA", b="join")], ["join"]),
        MBlock("join", [mi("STG", a=x, b=0, c=v), mi("EXIT")], []),
    ]
    return blocks, p, v


def test_short_diamond_becomes_guarded_instructions():
    blocks, p, v = _diamond()
    predicate(blocks)
    assert [b.name for b in blocks] == ["entry", "join"]
    entry = blocks[0].insts
    text = [(m.mnemonic, m.guard) for m in entry]
    assert ("MOV", None) in text and ("LDG", (p, True)) in text  # MOV v, 0 unguarded; @!P LDG v
    assert text.index(("MOV", None)) < text.index(("LDG", (p, True)))
    ldg = next(m for m in entry if m.mnemonic == "LDG")
    assert ldg.ops["d"] == v, "the load writes the join value itself, as ptxas's @!P0 LDG R4"
    assert next(m for m in entry if m.mnemonic == "IMAD.WIDE").guard is None  # cannot fault: runs unguarded
    assert [m.mnemonic for m in entry[-1:]] == ["BRA"] and entry[-1].ops["b"] == "join"
    assert blocks[0].succs == ["join"]
    live_in, _ = liveness(blocks)
    assert live_in["entry"] == set()
    assign, _ = allocate(blocks)
    check_allocation(blocks, assign)


def test_what_may_not_be_guarded_stays_a_branch():
    blocks, _, _ = _diamond(then_extra=[mi("BAR", b=Imm(0))])
    predicate(blocks)
    assert [b.name for b in blocks] == ["entry", "then", "else", "join"]
    blocks, _, _ = _diamond(then_len=MAX_INSTRUCTIONS)
    predicate(blocks)
    assert len(blocks) == 4, "longer than MAX_INSTRUCTIONS: left to the branch"


def test_a_side_that_redefines_the_predicate_stays_a_branch():
    blocks, p, _ = _diamond()
    then = blocks[1]
    then.insts.insert(0, mi("PLOP3", pd=p, pa=PT, ps=(PT, False), mods={"lut": "0x00"}))
    predicate(blocks)
    assert len(blocks) == 4


def test_guarded_temporary_is_not_live_before_its_definition():
    """``@P LDS t; @P IADD3 u, t, 1`` inside a loop: t's old value is never read, so t is not live around the
    loop (without guarded_kills it would be, from the kernel's entry)."""
    i, p, t, u = new_vreg(1), new_vreg(0), new_vreg(1), new_vreg(1)
    blocks = [
        MBlock("entry", [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]), mi("BRA", b="loop")], ["loop"]),
        MBlock("loop", [mi("ISETP", pd=p, a=i, b=Imm(3), ps=(PT, False), mods={"cmp": "LT"}),
                        mi("LDS", guard=(p, False), d=t, a=i, b=0),
                        mi("IADD3", guard=(p, False), d=u, a=t, b=Imm(1), c=RZ),
                        mi("STS", guard=(p, False), a=i, b=0, c=u),
                        mi("BRA", guard=(p, False), b="loop"), mi("EXIT")], ["loop"]),
    ]
    live_in, _ = liveness(blocks)
    assert t not in live_in["loop"] and u not in live_in["loop"]
    blocks[1].insts[3] = mi("STS", a=i, b=0, c=u)  # an unguarded read of u: its old value may be read
    live_in, _ = liveness(blocks)
    assert u in live_in["loop"] and t not in live_in["loop"]


@pytest.mark.parametrize("name", ["block_reduce", "scan_hillis_steele", "warp_reduce_shfl"])
def test_predicated_kernels_match_numpy(name):
    case = CASES_BY_NAME[name]
    src = read_source(ptx_path(case, "sm_80"))
    o3 = compile_module([src], CompileOptions(opt_level=3), kernels=[case.entry]).kernels[case.entry]
    o0 = compile_module([src], CompileOptions(opt_level=0), kernels=[case.entry]).kernels[case.entry]
    guarded = [m for m in o3.instructions if m.guard is not None and m.mnemonic not in ("BRA", "EXIT")]
    assert guarded, "-O3 predicates the short branches"
    assert not [m for m in o0.instructions if m.guard is not None and m.mnemonic not in ("BRA", "EXIT")]
    assert len(o3.instructions) < len(o0.instructions) and o3.registers <= o0.registers
    device = rt.Device()
    fn = rt.load_module(ObjectFile({case.entry: o3}).to_bytes(), device=device).get_function(case.entry)
    launch = case.make(np.random.default_rng(1))
    args = [rt.to_device(a, device) if isinstance(a, np.ndarray) else a for a in launch.args]
    fn.launch(launch.grid, launch.block, args, shared_mem=case.shared_mem, timing=False)
    for i, want in launch.expected.items():
        np.testing.assert_array_equal(args[i].copy_to_host(), want)


def test_branch_to_an_exit_only_block_becomes_exit():
    """Each side of ``if (..) y = a; else y = b; return;`` ends with its own EXIT (ptxas's tail duplication):
    no branch to the join, no join left for a convergence barrier; a fall-through into it stays."""
    p, i = new_vreg(0), new_vreg(1)
    blocks = [
        MBlock("entry", [mi("S2R", d=i, b=SR_INDEX["SR_TID.X"]),
                         mi("ISETP", pd=p, a=i, b=Imm(3), ps=(PT, False), mods={"cmp": "LT"}),
                         mi("BRA", guard=(p, False), b="a"), mi("BRA", b="b")], ["a", "b"]),
        MBlock("a", [mi("BAR", b=Imm(0)), mi("BRA", b="done")], ["done"]),
        MBlock("b", [mi("BAR", b=Imm(1)), mi("BRA", b="done")], ["done"]),
        MBlock("done", [mi("EXIT")], []),
    ]
    predicate(blocks)
    assert [b.name for b in blocks] == ["entry", "a", "b", "done"]
    assert blocks[1].insts[-1].mnemonic == "EXIT" and blocks[1].succs == []
    assert blocks[2].insts[-1].mnemonic == "BRA" and blocks[2].succs == ["done"]  # falls through: free


def test_atomics_and_memory_accesses_in_loops_stay_branches():
    """Guarded off, an atomic or a load still issues (and is waited for): in a loop, or for an atomic
    anywhere, the branch is cheaper in cycles, so ``if (i == 0) atomicAdd(..)`` keeps its branch."""
    blocks, _, _ = _diamond(then_extra=[mi("ATOMG", d=RZ, a=new_vreg(2), b=0, c=RZ, e=RZ,
                                           mods={"op": "ADD", "type": "U32"})])
    predicate(blocks)
    assert len(blocks) == 4
    blocks, _, _ = _diamond()
    blocks[-1].insts[-1:] = [mi("BRA", b="entry")]  # the join loops back: the diamond is in a loop
    blocks[-1].succs = ["entry"]
    predicate(blocks)
    assert len(blocks) == 4
