"""The SSA IR: construction from PTX (phis, guards, scopes), the verifier and the printer."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import OTHERS, SUPPORTED, corpus_id

from xcc.diagnostics import UnsupportedError
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.core import Block, Const, Instruction, Module, Phi, Value
from xcc.ir.printer import print_module
from xcc.ir.types import ptx_type
from xcc.ir.verifier import VerifyError, verify_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = SUPPORTED
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 out, .param .u32 n") -> str:
    return f"{HEADER}.visible .entry k({params})\n{{\n{body}}}\n"


def build(src: str) -> Module:
    return build_module(parse(src, "t.ptx"))


def ops(fn) -> list[str]:
    return [i.op for i in fn.instructions()]


def only(items):
    items = list(items)
    assert len(items) == 1, items
    return items[0]


def defining(fn, v: Value) -> Instruction | Phi | None:
    for b in fn.blocks:
        for phi in b.phis:
            if phi.result is v:
                return phi
        for inst in b.instructions:
            if inst.result is v:
                return inst
    return None


LOOP = kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 100;
$L_loop:
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $L_loop;
  st.global.u32 [%rd1], %r2;
  st.global.u32 [%rd1+4], %r3;
  ret;
""")

STRAIGHT = kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r2, %r1;
  mul.lo.s32 %r3, %r3, 3;
  setp.lt.u32 %p1, %r3, %r1;
  selp.b32 %r4, %r3, %r2, %p1;
  st.global.u32 [%rd1], %r4;
  ret;
""")


# --------------------------------------------------------------------------- SSA construction


def test_loop_carried_register_gets_one_phi():
    fn = build(LOOP).functions[0]
    loop = next(b for b in fn.blocks if b.name == "L_loop")
    phi = only(loop.phis)
    assert [p.name for p in loop.preds] == ["entry", "L_loop"]
    init, back = phi.args
    assert isinstance(init, Const) and init.bits == 0
    add = defining(fn, back)
    assert add.op == "add" and add.block is loop and add.args[0] is phi.result
    assert isinstance(add.args[1], Const) and add.args[1].bits == 1
    # %r3 is live through the loop but never redefined in it: no phi, the constant reaches the store.
    stores = [i for i in fn.instructions() if i.op == "st"]
    assert stores[0].args[1] is back
    assert isinstance(stores[1].args[1], Const) and stores[1].args[1].bits == 100
    assert sum(len(b.phis) for b in fn.blocks) == 1
    verify_module(build(LOOP))


def test_straight_line_code_has_no_phis():
    fn = build(STRAIGHT).functions[0]
    assert len(fn.blocks) == 1
    assert all(not b.phis for b in fn.blocks)
    assert ops(fn) == ["ld_param", "ld_param", "sreg", "add", "mul", "setp", "selp", "st", "ret"]
    # each redefinition of %r3 is a new value, used by the next instruction
    add, mul = (i for i in fn.instructions() if i.op in ("add", "mul"))
    assert mul.args[0] is add.result and mul.result is not add.result


def test_diamond_join_gets_phi_with_one_operand_per_predecessor():
    fn = build(kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_else;
  add.u32 %r2, %r1, 5;
  bra.uni $L_join;
$L_else:
  add.u32 %r2, %r1, 7;
$L_join:
  st.global.u32 [%rd1], %r2;
  ret;
""")).functions[0]
    join = next(b for b in fn.blocks if b.name == "L_join")
    phi = only(join.phis)
    assert len(phi.args) == len(join.preds) == 2
    consts = sorted(defining(fn, a).args[1].bits for a in phi.args)
    assert consts == [5, 7]
    assert only(i for i in fn.instructions() if i.op == "st").args[1] is phi.result


GUARDED = kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  setp.gt.u32 %p1, %r1, 10;
  mov.u32 %r2, %tid.x;
  @%p1 add.u32 %r2, %r2, 7;
  @!%p1 mul.lo.u32 %r2, %r2, 3;
  st.global.u32 [%rd1], %r2;
  ret;
""")


def test_guarded_pure_instruction_becomes_selp():
    fn = build(GUARDED).functions[0]
    assert len(fn.blocks) == 1 and not fn.blocks[0].phis  # no control flow for pure guarded ops
    setp = only(i for i in fn.instructions() if i.op == "setp")
    tid = only(i for i in fn.instructions() if i.op == "sreg")
    add = only(i for i in fn.instructions() if i.op == "add")
    mul = only(i for i in fn.instructions() if i.op == "mul")
    sel1, sel2 = (i for i in fn.instructions() if i.op == "selp")
    # @p: d = selp(new, old, p)
    assert add.args[0] is tid.result
    assert sel1.args == [add.result, tid.result, setp.result]
    # @!p: d = selp(old, new, p)
    assert mul.args[0] is sel1.result
    assert sel2.args == [sel1.result, mul.result, setp.result]
    assert only(i for i in fn.instructions() if i.op == "st").args[1] is sel2.result


def test_guarded_store_becomes_branch_around_it():
    fn = build(kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  setp.gt.u32 %p1, %r1, 10;
  @%p1 st.global.u32 [%rd1], %r1;
  @!%p1 atom.global.add.u32 %r2, [%rd1], 1;
  ret;
""")).functions[0]
    assert "selp" not in ops(fn)
    st_inst = only(i for i in fn.instructions() if i.op == "st")
    atom = only(i for i in fn.instructions() if i.op == "atom")
    setp = only(i for i in fn.instructions() if i.op == "setp")
    for inst, taken_index in ((st_inst, 0), (atom, 1)):
        then = inst.block
        assert [i.op for i in then.instructions] == [inst.op, "br"]
        head = only(then.preds)
        cbr = head.terminator
        assert cbr.op == "cbr" and cbr.args == [setp.result]
        # @p: the store is on the true edge; @!p: on the false edge
        assert cbr.targets[taken_index] is then
        join = cbr.targets[1 - taken_index]
        assert then.succs == [join]
        assert sorted(p.name for p in join.preds) == sorted([head.name, then.name])
    verify_module(Module([fn]))


def test_nested_scopes_shadow_registers():
    fn = build(kernel("""\
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 1;
  {
    .reg .b32 %r2;
    add.u32 %r2, %r1, 2;
    st.global.u32 [%rd1], %r2;
    {
      .reg .b32 %r2;
      add.u32 %r2, %r1, 3;
      st.global.u32 [%rd1+4], %r2;
    }
    st.global.u32 [%rd1+8], %r2;
  }
  st.global.u32 [%rd1+12], %r2;
  ret;
""")).functions[0]
    stores = [i for i in fn.instructions() if i.op == "st"]
    assert [s.attrs["offset"] for s in stores] == [0, 4, 8, 12]
    stored = [defining(fn, s.args[1]) for s in stores]
    assert [d.op for d in stored] == ["add"] * 4
    assert [d.args[1].bits for d in stored] == [2, 3, 2, 1]
    assert len({id(d) for d in stored}) == 3  # inner, innermost, inner again, outer
    tid = only(i for i in fn.instructions() if i.op == "sreg")
    assert all(d.args[0] is tid.result for d in stored)  # %r1 of the outer scope everywhere


def test_register_read_before_write_is_zero_constant():
    fn = build(kernel("""\
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  add.u32 %r2, %r1, 4;
  st.global.u32 [%rd1], %r2;
  ret;
""")).functions[0]
    add = only(i for i in fn.instructions() if i.op == "add")
    assert isinstance(add.args[0], Const) and add.args[0].bits == 0


# --------------------------------------------------------------------------- verifier


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_verifier_accepts_every_example(path):
    mod = build_module(parse(path.read_text(), str(path)))
    assert mod.functions
    verify_module(mod)


@pytest.mark.parametrize("path", OTHERS, ids=corpus_id)
def test_other_examples_build_or_are_refused_with_a_location(path):
    try:
        mod = build_module(parse(path.read_text(), str(path)))
    except UnsupportedError as e:
        assert e.loc is not None and e.loc.file == str(path) and "not supported" in e.message
    else:
        verify_module(mod)


def _entry_insts(mod):
    return mod.functions[0].blocks[0].instructions


def test_verifier_rejects_use_before_def():
    mod = build(STRAIGHT)
    insts = _entry_insts(mod)
    i_add = next(k for k, i in enumerate(insts) if i.op == "add")
    i_mul = next(k for k, i in enumerate(insts) if i.op == "mul")
    insts[i_add], insts[i_mul] = insts[i_mul], insts[i_add]
    with pytest.raises(VerifyError, match="not dominated by its definition"):
        verify_module(mod)


def test_verifier_rejects_use_of_value_from_non_dominating_block():
    mod = build(kernel("""\
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_skip;
  add.u32 %r2, %r1, 5;
  st.global.u32 [%rd1], %r2;
$L_skip:
  st.global.u32 [%rd1+4], %r1;
  ret;
"""))
    fn = mod.functions[0]
    add = only(i for i in fn.instructions() if i.op == "add")
    last_store = [i for i in fn.instructions() if i.op == "st"][-1]
    verify_module(mod)
    last_store.args[1] = add.result  # defined only on one path
    with pytest.raises(VerifyError, match="not dominated"):
        verify_module(mod)


def test_verifier_rejects_missing_terminator():
    mod = build(STRAIGHT)
    _entry_insts(mod).pop()
    with pytest.raises(VerifyError, match="block entry has no terminator"):
        verify_module(mod)


def test_verifier_rejects_terminator_in_the_middle():
    mod = build(STRAIGHT)
    blk = mod.functions[0].blocks[0]
    ret = blk.instructions[-1]
    blk.append(Instruction("ret", None, []))
    assert ret.op == "ret"
    with pytest.raises(VerifyError, match="terminator 'ret' not at the end of entry"):
        verify_module(mod)


@pytest.mark.parametrize("change", ["extra", "missing"])
def test_verifier_rejects_phi_arity_mismatch(change):
    mod = build(LOOP)
    loop = next(b for b in mod.functions[0].blocks if b.name == "L_loop")
    phi = loop.phis[0]
    if change == "extra":
        phi.args.append(Const(ptx_type("b32"), 1))
    else:
        phi.args.pop()
    with pytest.raises(VerifyError, match=r"phi in L_loop has \d operands for 2 predecessors"):
        verify_module(mod)


def test_verifier_rejects_wrong_operand_count_and_unknown_op():
    mod = build(STRAIGHT)
    add = next(i for i in _entry_insts(mod) if i.op == "add")
    add.args.append(add.args[0])
    with pytest.raises(VerifyError, match="'add' has 3 operands, expects 2"):
        verify_module(mod)
    mod = build(STRAIGHT)
    next(i for i in _entry_insts(mod) if i.op == "add").op = "frobnicate"
    with pytest.raises(VerifyError, match="unknown operation 'frobnicate'"):
        verify_module(mod)


def test_verifier_rejects_value_defined_twice_and_stale_block_link():
    mod = build(STRAIGHT)
    insts = _entry_insts(mod)
    add = next(i for i in insts if i.op == "add")
    mul = next(i for i in insts if i.op == "mul")
    mul.result = add.result
    with pytest.raises(VerifyError, match="defined twice"):
        verify_module(mod)
    mod = build(STRAIGHT)
    _entry_insts(mod)[0].block = Block("elsewhere")
    with pytest.raises(VerifyError, match="stale block link"):
        verify_module(mod)


def test_verifier_rejects_bad_cfg_edges():
    mod = build(LOOP)
    fn = mod.functions[0]
    fn.blocks[-1].preds.append(fn.blocks[0])  # a pred without an edge
    with pytest.raises(VerifyError, match="predecessor list of .* does not match the CFG"):
        verify_module(mod)
    mod = build(LOOP)
    fn = mod.functions[0]
    fn.blocks[0].terminator.attrs["targets"] = [Block("nowhere")]
    with pytest.raises(VerifyError, match="branches to a block outside the function"):
        verify_module(mod)


def test_verifier_rejects_phi_operand_not_available_on_edge():
    mod = build(LOOP)
    fn = mod.functions[0]
    loop = next(b for b in fn.blocks if b.name == "L_loop")
    phi = loop.phis[0]
    add = next(i for i in loop.instructions if i.op == "add")
    phi.args[0] = add.result  # flowing in from entry, where it is not yet defined
    with pytest.raises(VerifyError, match="phi operand in L_loop not defined on the edge from entry"):
        verify_module(mod)


def test_verify_error_names_the_pass_and_function():
    mod = build(STRAIGHT)
    _entry_insts(mod).pop()
    with pytest.raises(VerifyError, match=r"IR verification failed after mypass in k: "):
        verify_module(mod, "mypass")


# --------------------------------------------------------------------------- printer


@pytest.mark.parametrize("path", EXAMPLES[:4] + [None], ids=lambda p: p.name if p else "loop")
def test_printer_is_deterministic(path):
    text = path.read_text() if path else LOOP
    name = str(path) if path else "t.ptx"
    m1 = build_module(parse(text, name))
    # Build something else in between, so global value ids move on.
    build(STRAIGHT)
    m2 = build_module(parse(text, name))
    p1 = print_module(m1)
    assert p1 == print_module(m1)
    assert p1 == print_module(m2)
    assert print_module(m1, with_lines=True) == print_module(m2, with_lines=True)


def test_printer_format():
    text = print_module(build(LOOP))
    assert text.endswith("}\n")
    lines = text.splitlines()
    assert lines[0] == "entry @k(.u64 out @0, .u32 n @8) {"
    assert "L_loop:" in lines
    assert any(" = phi [u32:0x0, entry], [" in line and ", L_loop]" in line for line in lines)
    assert any(line.strip().startswith("cbr ") and line.endswith("L_loop, bb3") for line in lines)
    assert "; line " not in text
    with_lines = print_module(build(LOOP), with_lines=True)
    assert "; line 14" in with_lines  # the add.s32 in the loop


def test_pointer_alignment_does_not_move_the_parameter():
    """``.ptr .global .align 1`` aligns what the pointer points to; the u64 parameter after a
    u32 still sits at offset 8, as ptxas lays it out (LLVM writes this form)."""
    src = (f"{HEADER}.visible .entry k(.param .u32 n, .param .u64 .ptr .global .align 1 p, "
           ".param .align 16 .b8 blob[4])\n{\nret;\n}\n")
    fn = build(src).functions[0]
    assert [(p.name, p.offset) for p in fn.params] == [("n", 0), ("p", 8), ("blob", 16)]
