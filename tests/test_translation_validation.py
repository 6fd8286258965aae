"""Translation validation always on: random PTX programs (tests/ptxgen.py) through every pass, every -O pipeline
and the backend, compared with the IR interpreter on the frontend's IR (tests/translation_validation.py).

A failure prints the seed, the failing stage and the reduced program; ``python tests/translation_validation.py
--seed N --size S`` (the command in the message) gives it again.  The fast tier validates a few hundred small
programs (200 of size 8: about 70 CPU-seconds); the slow tier (``-m slow``) thousands of larger ones (2000 of size
12, seeds from 100000; ``XCC_TV_SLOW_SEEDS=START:STOP`` picks others), in two processes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import pytest
import translation_validation as tv
from ptxgen import OUT_WORDS, Leaf, generate, opcode

from xcc.frontend.parser import parse
from xcc.passes import FunctionPass

FAST_SEEDS, FAST_SIZE, FAST_CHUNK = range(0, 200), 8, 25
SLOW_SEEDS = range(*map(int, os.environ.get("XCC_TV_SLOW_SEEDS", "100000:102000").split(":")))  # START:STOP
SLOW_SIZE = 12


def _validate_seeds(seeds, size: int) -> list[tv.Failure]:
    """The failures of ``seeds``: the first reduced, the others as found (their seeds reproduce them)."""
    failures: list[tv.Failure] = []
    for seed in seeds:
        f = tv.check_seed(seed, size=size, reduce_failures=not failures)
        if f is not None:
            failures.append(f)
    return failures


def _report(failures: list[tv.Failure]) -> str:
    first, rest = failures[0], failures[1:]
    lines = [first.report()]
    lines += [f"also: seed {f.seed}, {f.stage}: {f.detail} (reproduce: {f.reproduce})" for f in rest]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the generator


def test_generator_is_deterministic_and_varied():
    assert generate(7).text == generate(7).text
    assert generate(7, 8).text == generate(7, 8).text
    texts = {generate(s, FAST_SIZE).text for s in range(20)}
    assert len(texts) == 20


def test_generated_programs_check_and_cover_the_features():
    seen: set[str] = set()
    for seed, size in [(s, 20) for s in range(60)] + [(s, FAST_SIZE) for s in range(20)]:
        text = generate(seed, size).text
        parse(text, f"<seed {seed}>")  # xcc check
        seen |= {opcode(line) for line in text.splitlines()}
        seen |= {m for m in ('.pragma "nounroll"', ".func", "__local_depot") if m in text}
    wanted = {"shfl.sync.up.b32", "shfl.sync.idx.b32", "shfl.sync.bfly.b32", "shfl.sync.down.b32",
              "vote.sync.ballot.b32", "activemask.b32", "bar.sync", "st.shared.u32", "ld.shared.u32", "st.local.u32",
              "ld.local.u32", "ld.u32", "st.u32", "cvta.shared.u64", "cvta.local.u64", "cvta.to.global.u64",
              "call", "call.uni", "div.u32", "div.u64", "fma.rn.f32", "add.rn.f32", "mul.rn.f32",
              "cvt.rzi.s32.f32", "cvt.rn.f32.s32", "selp.b32", "selp.f32", "mul.wide.s32", "mul.hi.u32",
              "mad.lo.s32", "shr.s64", "popc.b32", "bra", "bra.uni", '.pragma "nounroll"', ".func", "__local_depot"}
    assert wanted <= seen, sorted(wanted - seen)
    assert {"div.s32", "rem.s32"} & seen and {"shr.s32", "shr.u32"} <= seen


def test_avoided_mnemonics_are_never_generated():
    avoid = {"add.s32", "xor.b32", "cvt.u32.u8", "shfl.sync.up.b32"}
    for seed in range(30):
        prog = generate(seed, 12, avoid)
        body = [line for fn in prog.funcs for line in _leaf_lines(fn.body)]
        assert not avoid & {opcode(x) for x in body}


def _leaf_lines(stmts):
    for s in stmts:
        if isinstance(s, Leaf):
            yield from s.lines
        for sub in (getattr(s, "then", None), getattr(s, "other", None), getattr(s, "body", None)):
            if sub:
                yield from _leaf_lines(sub)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA) not on PATH")
def test_generated_programs_pass_ptxas(tmp_path):
    for seed in range(12):
        path = tmp_path / f"g{seed}.ptx"
        path.write_text(generate(seed, 20).text)
        done = subprocess.run(["ptxas", "-arch=sm_80", str(path), "-o", str(tmp_path / "g.cubin")],
                              capture_output=True, text=True)
        assert done.returncode == 0, f"seed {seed}: {done.stderr}"


# --------------------------------------------------------------------------- the harness finds and reduces bugs


@dataclass(frozen=True)
class _XorIsOr(FunctionPass):
    """A miscompiling pass: every xor becomes an or."""

    name: ClassVar[str] = "xor-is-or"

    def run_function(self, fn) -> None:
        for inst in fn.instructions():
            if inst.op == "xor":
                inst.op = "or"


@dataclass(frozen=True)
class _DropLastTerminator(FunctionPass):
    """A pass that breaks the IR: the kernel's last block loses its terminator."""

    name: ClassVar[str] = "drop-terminator"

    def run_function(self, fn) -> None:
        fn.blocks[-1].instructions.pop()


def _seeds_with(mnemonic: str) -> list[int]:
    """Seeds whose kernel computes a variable with ``mnemonic`` at its top level."""
    return [s for s in range(200) if any(opcode(x) == mnemonic and x.split()[1].startswith("%v")
                                         for leaf in generate(s, FAST_SIZE).funcs[-1].body
                                         if isinstance(leaf, Leaf) for x in leaf.lines)]


def test_a_miscompiling_pass_is_found_named_and_reduced():
    # the first of the programs with an xor whose result reaches the output (or can differ from xor's)
    found = ((s, tv.Validator(generate(s, FAST_SIZE), [_XorIsOr()], levels=(0,), isa=False,
                              random_pipeline=0).validate()) for s in _seeds_with("xor.b32")[:10])
    seed, failure = next(((s, f) for s, f in found if f is not None), (None, None))
    assert failure is not None and failure.stage == "pass xor-is-or alone"
    prog = generate(seed, FAST_SIZE)
    assert "output words differ from the reference" in failure.detail
    small = tv.reduce(prog, failure, [_XorIsOr()], random_pipeline=0)
    assert len(small.text) < len(prog.text)
    assert "xor." in small.text
    again = tv.Validator(small, [_XorIsOr()], levels=(0,), isa=False, random_pipeline=0).validate()
    assert again is not None and again.stage == failure.stage
    # the reduced program has no statement left that the failure does not need
    kernel_leaves = [x for x in _leaf_lines(small.funcs[-1].body)]
    assert len(kernel_leaves) <= len(list(_leaf_lines(prog.funcs[-1].body)))
    assert f"seed {seed}" in failure.report()


def test_a_pass_in_a_pipeline_is_named_by_position():
    prog = generate(next(s for s in _seeds_with("xor.b32") if tv.Validator(
        generate(s, FAST_SIZE), [_XorIsOr()], levels=(0,), isa=False, random_pipeline=0).validate()), FAST_SIZE)
    v = tv.Validator(prog, [], levels=(2,), isa=False, pipelines={2: ["constfold", _XorIsOr(), "dce"]})
    failure = v.validate()
    assert failure is not None and failure.stage == "-O2 after pass 2 (xor-is-or)", failure.stage


def test_a_pass_that_breaks_the_ir_is_a_verifier_failure():
    prog = generate(3, FAST_SIZE)
    failure = tv.Validator(prog, [_DropLastTerminator()], levels=(0,), isa=False, random_pipeline=0).validate()
    assert failure is not None and failure.stage == "pass drop-terminator alone"
    assert "VerifyError" in failure.detail and "no terminator" in failure.detail
    v = tv.Validator(prog, [], levels=(1,), isa=False, pipelines={1: ["dce", _DropLastTerminator()]})
    assert v.validate().stage == "-O1 in pass 2 (drop-terminator)"
    v = tv.Validator(prog, ["dce", _DropLastTerminator()], levels=(0,), isa=False, random_pipeline=4)
    names = ",".join(getattr(p, "name", p) for p in v.random_passes())
    if "drop-terminator" in names:  # the seeded draw: the random pipeline stage fails at its first such pass
        first = names.split(",").index("drop-terminator") + 1
        assert v.validate().stage == f"random pipeline {names} in pass {first} (drop-terminator)"


def test_outputs_compare_bit_for_bit_but_any_nan_equals_any_nan():
    import numpy as np

    v = tv.Validator(generate(0, FAST_SIZE), [], isa=False)
    want = np.zeros(v.prog.threads * OUT_WORDS, dtype=np.uint32)
    got = want.copy()
    f32 = v.prog.f32_words[0]
    want[f32], got[f32] = 0x7FC00000, 0xFFC00001  # two NaNs
    v.compare(got, want)
    got[f32 + 1] = 0x80000000  # -0.0 is not +0.0
    with pytest.raises(Exception, match="1 output words differ .*word 11: 0x80000000 != 0x00000000"):
        v.compare(got, want)


def test_command_line(capsys):
    assert tv.main(["--seed", "4", "--size", "6", "--print"]) == 0
    assert capsys.readouterr().out == generate(4, 6, frozenset(tv.KNOWN_BUGS)).text + "\n"
    assert tv.main(["--seeds", "0:2", "--size", "4", "--no-isa", "--passes", "dce"]) == 0
    assert "2 of 2 programs validated" in capsys.readouterr().out


# --------------------------------------------------------------------------- known bugs: reproducers


@pytest.mark.parametrize("mnemonic", sorted(tv.KNOWN_BUGS) or [
    pytest.param(None, marks=pytest.mark.skip(reason="no known bug: translation_validation.KNOWN_BUGS is empty"))])
def test_known_bug(mnemonic):
    """Each mnemonic the generator avoids by default still miscompiles, in a kernel of one generated statement that
    uses it; once fixed, this fails (a strict xfail): take the mnemonic out of KNOWN_BUGS."""
    prog, leaf = next((p, leaf) for p in (generate(s, FAST_SIZE, frozenset()) for s in range(400))
                      for leaf in p.funcs[-1].body
                      if isinstance(leaf, Leaf) and any(opcode(x) == mnemonic for x in leaf.lines))
    prog.funcs[-1].body = [leaf]
    failure = tv.Validator(prog, []).validate()
    if failure is not None:
        pytest.xfail(f"{tv.KNOWN_BUGS[mnemonic]}: seed {prog.seed}, {failure.stage}: {failure.detail}")
    pytest.fail(f"{mnemonic} validates now (seed {prog.seed}): remove it from KNOWN_BUGS")


# --------------------------------------------------------------------------- the tiers


@pytest.mark.parametrize("start", range(FAST_SEEDS.start, FAST_SEEDS.stop, FAST_CHUNK),
                         ids=lambda s: f"seeds{s}-{s + FAST_CHUNK - 1}")
def test_translation_validation_fast(start):
    failures = _validate_seeds(range(start, start + FAST_CHUNK), FAST_SIZE)
    assert not failures, _report(failures)


@pytest.mark.slow
def test_translation_validation_slow():
    step = 50
    starts = list(range(SLOW_SEEDS.start, SLOW_SEEDS.stop, step))
    with ProcessPoolExecutor(2) as pool:
        found = pool.map(tv.validate_range, starts, [min(s + step, SLOW_SEEDS.stop) for s in starts],
                         [SLOW_SIZE] * len(starts))
        failures = [f for chunk in found for f in chunk]
    if failures:  # the first one reduced, for the report
        failures[0] = tv.check_seed(failures[0].seed, size=SLOW_SIZE) or failures[0]
    assert not failures, _report(failures)
