"""The xg1 instruction word: encode/decode round trips for every row of the ISA table,
rejection of invalid words, and the disassembler's text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcc.backend.encoding import (
    WORD_BYTES,
    decode,
    decode_all,
    disassemble,
    encode,
    encode_all,
    format_ctrl,
    format_inst,
)
from xcc.backend.isa import BY_OPCODE, FIELDS, PT, RZ, SPECIAL_REGS, TABLE
from xcc.backend.minst import CBank, Ctrl, Imm, MInst, mi
from xcc.diagnostics import ObjectFormatError

MNEMONICS = sorted(TABLE)

# --------------------------------------------------------------------------- strategies

regs = st.one_of(st.integers(0, 254), st.just(RZ))
pairs = st.one_of(st.integers(0, 127).map(lambda r: 2 * r), st.just(RZ))
preds = st.integers(0, 7)
imm32 = st.builds(Imm, st.integers(0, 0xFFFFFFFF))
cbanks = st.builds(CBank, st.integers(0, 31), st.integers(0, 0xFFFF))
signed32 = st.integers(-(1 << 31), (1 << 31) - 1)


def operand(field: str, kind: str):
    if kind == "R":
        return regs
    if kind == "W":
        return pairs
    if kind == "P":
        return st.tuples(preds, st.booleans()) if field == "ps" else preds
    if kind == "RIC":
        return st.one_of(regs, imm32, cbanks)
    if kind == "WIC":
        return st.one_of(pairs, imm32, cbanks)
    if kind == "C":
        return cbanks
    if kind in ("I", "L"):
        return signed32
    if kind == "SR":
        return st.integers(0, len(SPECIAL_REGS) - 1)
    if kind == "B":
        return st.integers(0, 15)
    raise AssertionError(f"operand kind {kind} has no strategy")


guards = st.one_of(st.none(), st.tuples(preds, st.booleans()).filter(lambda g: g != (PT, False)))
ctrls = st.builds(Ctrl, stall=st.integers(0, 15), yield_=st.booleans(), wsb=st.integers(0, 7),
                  rsb=st.integers(0, 7), wait=st.integers(0, 63))


@st.composite
def minsts(draw, mnemonic: str) -> MInst:
    d = TABLE[mnemonic]
    ops = {o.field: draw(operand(o.field, o.kind), label=o.field) for o in d.operands}
    mods = {m.name: draw(st.sampled_from(m.values), label=m.name) for m in d.mods}
    return MInst(d, ops, mods, draw(guards, label="guard"), draw(ctrls, label="ctrl"))


# --------------------------------------------------------------------------- round trips


def test_table_is_consistent():
    assert len(TABLE) == len(BY_OPCODE)
    assert 0 not in BY_OPCODE  # opcode 0 is never valid
    for name, d in TABLE.items():
        assert d.mnemonic == name and BY_OPCODE[d.opcode] is d
        assert d.opcode < 1 << FIELDS["opcode"][1]
        assert sum(m.width for m in d.mods) <= FIELDS["mods"][1]
        assert len({o.field for o in d.operands}) == len(d.operands)
    # the fields tile [0, 121) without overlap; [121, 128) is reserved
    covered = sorted((lo, lo + w) for lo, w in FIELDS.values())
    for (_, hi), (lo, _) in zip(covered, covered[1:]):
        assert hi == lo
    assert covered[0][0] == 0 and covered[-1][1] == 121


@pytest.mark.parametrize("mnemonic", MNEMONICS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_encode_decode_encode(mnemonic, data):
    inst = data.draw(minsts(mnemonic))
    word = encode(inst)
    assert 0 <= word < 1 << 121  # reserved bits stay zero
    back = decode(word, 3)
    assert back.d is inst.d
    assert encode(back) == word
    assert back.ops == inst.ops
    non_default = {k: v for k, v in inst.mods.items() if v != inst.d.mod(k).values[0]}
    assert back.mods == non_default
    assert back.guard == inst.guard
    assert back.ctrl == inst.ctrl
    # a default modifier value is not written out, so it disassembles the same as one left implicit
    normalised = MInst(inst.d, inst.ops, non_default, inst.guard, inst.ctrl)
    assert format_inst(back, 5) == format_inst(normalised, 5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(MNEMONICS).flatmap(minsts), min_size=0, max_size=12))
def test_encode_all_decode_all(insts):
    code = encode_all(insts)
    assert len(code) == WORD_BYTES * len(insts)
    back = decode_all(code)
    assert encode_all(back) == code
    assert [b.mnemonic for b in back] == [i.mnemonic for i in insts]


@pytest.mark.parametrize("mnemonic", MNEMONICS)
def test_defaults_encode_as_zero_modifier_bits(mnemonic):
    d = TABLE[mnemonic]
    ops = {o.field: ((0, False) if o.field == "ps" else CBank(0, 0) if o.kind == "C" else 0) for o in d.operands}
    explicit = MInst(d, dict(ops), {m.name: m.values[0] for m in d.mods})
    implicit = MInst(d, dict(ops), {})
    assert encode(explicit) == encode(implicit)
    lo, width = FIELDS["mods"]
    assert (encode(implicit) >> lo) & ((1 << width) - 1) == 0


@pytest.mark.parametrize("mnemonic", MNEMONICS)
def test_omitted_operands_encode_as_rz_and_pt(mnemonic):
    d = TABLE[mnemonic]
    back = decode(encode(MInst(d, {})))
    for o in d.operands:
        v = back.ops[o.field]
        if o.kind == "P":
            assert v == ((PT, False) if o.field == "ps" else PT), o
        elif o.kind in ("R", "W", "RIC", "WIC"):
            assert v == RZ, o
    assert back.guard is None


# --------------------------------------------------------------------------- invalid words


def _with(word: int, field: str, value: int) -> int:
    lo, width = FIELDS[field]
    return (word & ~(((1 << width) - 1) << lo)) | (value << lo)


NOP_WORD = encode(mi("NOP"))


@pytest.mark.parametrize("opcode", [0, len(TABLE) + 1, 0x200, 0x3FF])
def test_invalid_opcode_raises_object_format_error(opcode):
    word = _with(NOP_WORD, "opcode", opcode)
    with pytest.raises(ObjectFormatError, match=f"invalid opcode {opcode:#x} in instruction 7"):
        decode(word, 7)
    code = encode_all([mi("NOP"), mi("EXIT")]) + word.to_bytes(WORD_BYTES, "little")
    with pytest.raises(ObjectFormatError, match="in instruction 2"):
        decode_all(code)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 128) - 1))
def test_decode_of_any_word_is_an_instruction_or_object_format_error(word):
    try:
        inst = decode(word)
    except ObjectFormatError:
        return
    assert inst.d is BY_OPCODE[word & 0x3FF]


def test_invalid_modifier_value_raises():
    # ISETP's bool group has 3 values in 2 bits; 3 is not one of them.
    isetp = TABLE["ISETP"]
    word = encode(mi("ISETP", pd=0, a=1, b=2, ps=(PT, False)))
    shift = sum(m.width for m in isetp.mods[:2])
    word |= 3 << (FIELDS["mods"][0] + shift)
    with pytest.raises(ObjectFormatError, match=r"invalid modifier bool=3 in instruction 0 \(ISETP\)"):
        decode(word)


@pytest.mark.parametrize("size", [1, 15, 17, 33])
def test_code_size_not_a_multiple_of_the_word(size):
    with pytest.raises(ObjectFormatError, match=f"code size {size} is not a multiple of 16 bytes"):
        decode_all(bytes(size))


def test_encode_rejects_values_that_do_not_fit():
    with pytest.raises(ValueError, match="does not fit field d"):
        encode(mi("MOV", d=256, b=Imm(0)))
    bad = mi("NOP")
    bad.ctrl = Ctrl(stall=16)
    with pytest.raises(ValueError, match="does not fit field stall"):
        encode(bad)


def test_undefined_operand_b_kind_is_rejected():
    word = _with(encode(mi("MOV", d=1, b=2)), "bkind", 3)
    word = _with(word, "b", 0x12345)
    try:
        inst = decode(word)
    except ObjectFormatError:
        return
    assert encode(inst) == word


# --------------------------------------------------------------------------- disassembly


def test_disassembly_text_is_stable():
    iadd = mi("IADD3", d=1, a=2, b=Imm(4), c=RZ)
    ffma = mi("FFMA", guard=(0, True), mods={"rnd": "RZ", "SAT": "SAT"}, d=2, a=0, b=CBank(0, 0x164), c=1)
    ldg = mi("LDG", mods={"size": "U8"}, d=0, a=6, b=0x10)
    isetp = mi("ISETP", mods={"cmp": "GE", "type": "S32"}, pd=0, a=6, b=CBank(0, 0x160), ps=(PT, False))
    bra = mi("BRA", guard=(3, False), b=-4)
    assert format_inst(iadd) == "IADD3 R1, R2, 0x4, RZ"
    assert format_inst(ffma) == "@!P0 FFMA.RZ.SAT R2, R0, c[0x0][0x164], R1"
    assert format_inst(ldg) == "LDG.U8 R0, [R6:R7+0x10]"
    assert format_inst(isetp) == "ISETP.GE.S32 P0, R6, c[0x0][0x160], PT"
    assert format_inst(bra, 10) == "@P3 BRA 0x0007"
    # decoding does not change the text
    for m in (iadd, ffma, ldg, isetp):
        assert format_inst(decode(encode(m))) == format_inst(m)


def test_disassemble_listing_format():
    a = mi("S2R", d=4, b=SPECIAL_REGS.index("SR_TID.X"))
    a.ctrl = Ctrl(stall=1, wsb=2, wait=0b111111)
    b = mi("EXIT")
    b.ctrl = Ctrl(stall=4, yield_=True, wait=0b000100)
    assert format_ctrl(a.ctrl) == "[S01- W2 R- B012345]"
    assert format_ctrl(b.ctrl) == "[S04Y W- R- B--2---]"
    text = disassemble([a, b], [12, 0])
    assert text == ("  /*0000*/  [S01- W2 R- B012345]  S2R R4, SR_TID.X ;  // line 12\n"
                    "  /*0010*/  [S04Y W- R- B--2---]  EXIT ;")
