"""IR passes: FileCheck golden tests (tests/golden/*.ptx and tests/golden/<pass>/*.ptx), constant-folding
results against exact references, -O0/-O3 on the examples, and the pass manager.

A golden file is a PTX module with comment directives, checked by the ``filecheck`` package (a Python clone of
LLVM's FileCheck, https://github.com/AntonLydike/filecheck, as xDSL uses it):

    // PASSES: constfold,dce       the pipeline to run (through PassManager, verifying): a list of names or an
                                   xDSL/MLIR-style pipeline string, ``unroll{max-trip=32},dce``
    // CHECK: text                 the printed IR after those passes contains ``text``, after the previous match
    // CHECK-NEXT: text            ... on the line right after the previous match
    // CHECK-NOT: text             no text between the neighbouring matches contains ``text``
    // O0: / O0-NEXT: / O0-NOT:    the same, for the IR at -O0 (no passes): ``--check-prefix O0``

and everything else FileCheck understands (CHECK-DAG, CHECK-LABEL, CHECK-SAME, ``[[VAR:regex]]`` captures).
``{{regex}}`` inside a pattern is a regular expression; runs of horizontal whitespace match any run (FileCheck
without ``--strict-whitespace``).
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus import SUPPORTED
from filecheck.matcher import Matcher
from filecheck.options import Options
from hypothesis import given, settings
from hypothesis import strategies as st
from pass_check import refuse_rsqrt

from xcc.diagnostics import XccError
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.core import Const, Module
from xcc.ir.printer import print_module
from xcc.ir.verifier import VerifyError, verify_module
from xcc.passes import PassManager, pipeline_for_level

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden"
GOLDEN = sorted([*GOLDEN_DIR.glob("*.ptx"), *GOLDEN_DIR.glob("*/*.ptx")])
EXAMPLES = SUPPORTED
EFFECT_OPS = ("st", "atom", "bar_sync", "fence", "shfl", "vote", "ret", "exit", "trap")

# --------------------------------------------------------------------------- the matcher: the filecheck package


class CheckFailure(AssertionError):
    pass


def _prefixes(text: str) -> set[str]:
    """The check prefixes with at least one positive directive (``PREFIX:`` or ``PREFIX-NEXT:``...) in ``text``."""
    return {m.group(1) for m in re.finditer(r"//\s*([A-Z][A-Z0-9_]*)(?:-(?:NEXT|SAME|DAG|LABEL|COUNT-\d+))?:", text)}


def filecheck(output: str, check_file: Path, prefix: str = "CHECK") -> None:
    """Raise :class:`CheckFailure`, with filecheck's report and the output, unless ``output`` satisfies the
    ``prefix`` directives of ``check_file`` (``filecheck --check-prefix PREFIX check_file < output``, run in
    this process: the package's own ``Options`` and ``Matcher.from_opts``, as its command line does)."""
    kinds = re.findall(rf"{re.escape(prefix)}(-NEXT|-SAME|-EMPTY)?(?:-NOT)?:", check_file.read_text())
    if kinds and kinds[0]:  # LLVM FileCheck's rule, which the package does not enforce
        raise CheckFailure(f"{check_file}: the first {prefix} directive is {prefix}{kinds[0]} (no previous match)")
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "output.ir"
        inp.write_text(output)
        report = io.StringIO()
        with contextlib.redirect_stderr(report):  # the matcher reports on sys.stderr as it is when built
            code = Matcher.from_opts(Options(str(check_file), str(inp), check_prefixes=[prefix])).run()
    if code != 0:
        raise CheckFailure(f"filecheck --check-prefix {prefix} {check_file} failed ({code}):\n"
                           f"{report.getvalue()}\n--- output:\n{output}")


def test_matcher_itself(tmp_path):
    out = "a: x\n  b  =  y\nc z\nd w\n"

    def check(text: str, prefix: str = "CHECK") -> None:
        path = tmp_path / "checks.ptx"
        path.write_text(text)
        filecheck(out, path, prefix)

    check("// CHECK: a\n// CHECK-NEXT: b = {{[xy]}}\n// CHECK-NOT: q\n// CHECK: d\n")
    bad_cases = [
        "// CHECK: c\n// CHECK: a\n",  # out of order
        "// CHECK: a\n// CHECK-NEXT: c\n",  # not adjacent
        "// CHECK: a\n// CHECK-NOT: c\n// CHECK: d\n",  # forbidden between matches
        "// CHECK: b\n// CHECK-NOT: w\n",  # forbidden after the last match
        "// CHECK-NOT: a\n// CHECK: b\n",  # forbidden before the first match
        "// CHECK: nothing like this\n",
        "// CHECK: {{^y}}\n",  # ^ anchors at the start of a line
        "// CHECK-NEXT: a\n",
        "// O0: a\n",  # no CHECK directive at all
    ]
    for text in bad_cases:
        with pytest.raises(CheckFailure):
            check(text)
    check("// CHECK: b =  y\n")  # runs of whitespace match any run
    # CHECK-NOT between two matches does not look outside them
    check("// CHECK: b\n// CHECK-NOT: a\n// CHECK-NOT: d\n// CHECK: c\n")
    # other prefixes are ignored; --check-prefix selects them
    check("// O0: a\n// O0-NEXT: b\n// CHECK: nothing like this\n", "O0")
    with pytest.raises(CheckFailure, match="O0"):
        check("// O0: nothing like this\n// CHECK: a\n", "O0")
    assert _prefixes("// O0: a\n// CHECK-NEXT: b\n// CHECK-NOT: c\n// PASSES: dce\n") == {"O0", "CHECK", "PASSES"}


# --------------------------------------------------------------------------- golden files


def _build(text: str, name: str) -> Module:
    return build_module(parse(text, name))


def _passes_of(text: str) -> str:
    """The ``// PASSES:`` pipeline: a pipeline string (``a,b{opt=1},c``) for :class:`PassManager`."""
    m = re.search(r"^//\s*PASSES:\s*(.+)$", text, re.M)
    assert m, "golden file without a '// PASSES:' line"
    return m.group(1).strip()


def _golden_id(path: Path) -> str:
    return path.relative_to(GOLDEN_DIR).with_suffix("").as_posix()


def test_golden_files_exist():
    names = {p.stem for p in GOLDEN}
    assert {"constfold_arith", "constfold_branch", "dce", "dce_dead_phi", "o3_pipeline"} <= names


def test_golden_subfolders_are_collected():
    # tests/golden/<pass>/*.ptx are golden files too (one folder per pass); deeper folders are not
    assert [p for p in GOLDEN if p.parent != GOLDEN_DIR] == sorted(GOLDEN_DIR.glob("*/*.ptx"))
    assert all(p.parent == GOLDEN_DIR or p.parent.parent == GOLDEN_DIR for p in GOLDEN)


@pytest.mark.parametrize("path", GOLDEN, ids=_golden_id)
def test_golden(path):
    text = path.read_text()
    assert {"CHECK", "O0"} <= _prefixes(text), f"{path}: needs CHECK and O0 directives"

    at_o0 = PassManager(pipeline_for_level(0), verify=True).run(_build(text, str(path)))
    filecheck(print_module(at_o0), path, "O0")

    after = PassManager(_passes_of(text), verify=True).run(_build(text, str(path)))
    verify_module(after)
    filecheck(print_module(after), path, "CHECK")


@pytest.mark.parametrize("path", GOLDEN, ids=_golden_id)
def test_golden_pipeline_reaches_a_fixpoint(path):
    text = path.read_text()
    mod = PassManager(pipeline_for_level(3), verify=True).run(_build(text, str(path)))
    once = print_module(mod)
    PassManager(["constfold", "dce"], verify=True).run(mod)
    assert print_module(mod) == once


# --------------------------------------------------------------------------- examples at -O0 / -O3


def _effects(mod: Module) -> list[tuple[str, str]]:
    return sorted((fn.name, i.op) for fn in mod.functions for i in fn.instructions() if i.op in EFFECT_OPS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_verify_at_o0_and_o3(path):
    text = path.read_text()
    o0 = PassManager(pipeline_for_level(0), verify=True).run(_build(text, str(path)))
    o3 = PassManager(pipeline_for_level(3), verify=True).run(_build(text, str(path)))
    verify_module(o0)
    verify_module(o3)
    # every kernel stays (device functions may be inlined away); results are checked by the example tests and
    # translation validation (tests/test_translation_validation.py)
    assert [f.name for f in o0.functions if f.is_entry] == [f.name for f in o3.functions if f.is_entry]
    assert {f.name for f in o3.functions} <= {f.name for f in o0.functions}


# --------------------------------------------------------------------------- constfold = semantics

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
BINOPS = ["add", "sub", "mul.lo", "mul.hi", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"]


def _reference(op: str, a: int, b: int, bits: int, signed: bool) -> int:
    m = (1 << bits) - 1

    def val(x):
        return x - (1 << bits) if signed and x >> (bits - 1) else x

    x, y = val(a), val(b)
    if op == "add":
        r = x + y
    elif op == "sub":
        r = x - y
    elif op == "mul.lo":
        r = x * y
    elif op == "mul.hi":
        r = (x * y) >> bits
    elif op in ("div", "rem"):
        if b == 0:  # all ones for both, as an H200 gives (docs/semantics.md)
            return m
        q = abs(x) // abs(y)
        q = q if (x < 0) == (y < 0) else -q
        r = q if op == "div" else x - q * y
    elif op == "min":
        r = min(x, y)
    elif op == "max":
        r = max(x, y)
    elif op == "and":
        r = a & b
    elif op == "or":
        r = a | b
    elif op == "xor":
        r = a ^ b
    elif op == "shl":
        r = a << b if b < bits else 0
    elif op == "shr":
        r = x >> b if signed else a >> b
    else:
        raise ValueError(op)
    return r & m


def _fold_kernel(op: str, typ: str, bits: int, a: int, b: int) -> str:
    shift = op in ("shl", "shr")
    op_type = {"and": f"b{bits}", "or": f"b{bits}", "xor": f"b{bits}"}.get(op, typ)
    if shift:
        op_type = typ if op == "shr" else f"b{bits}"
    bdecl = ".reg .b32 %s<2>;" if shift else ""
    bmov = f"mov.b32 %s1, {b:#x};" if shift else f"mov.b{bits} %v2, {b:#x};"
    return HEADER + f"""
.visible .entry fold(.param .u64 out)
{{
  .reg .b{bits} %v<4>;
  .reg .b64 %rd<2>;
  {bdecl}
  ld.param.u64 %rd1, [out];
  mov.b{bits} %v1, {a:#x};
  {bmov}
  {op}.{op_type} %v3, %v1, {"%s1" if shift else "%v2"};
  st.global.b{bits} [%rd1], %v3;
  ret;
}}
"""


def _edge_ints(bits):
    m = (1 << bits) - 1
    return st.one_of(st.integers(0, m), st.sampled_from([0, 1, m, 1 << (bits - 1), (1 << (bits - 1)) - 1, 3]))


@settings(max_examples=120, deadline=None)
@given(data=st.data(), op=st.sampled_from(BINOPS), typ=st.sampled_from(["u32", "s32", "u64", "s64"]))
def test_constfold_matches_exact_reference(data, op, typ):
    bits, signed = int(typ[1:]), typ[0] == "s"
    a = data.draw(_edge_ints(bits), "a")
    b = data.draw(st.integers(0, 80) if op in ("shl", "shr") else _edge_ints(bits), "b")
    mod = _build(_fold_kernel(op, typ, bits, a, b), "fold.ptx")
    store = next(i for i in mod.functions[0].instructions() if i.op == "st")
    assert not isinstance(store.args[1], Const)  # something to fold at -O0
    PassManager(["constfold", "dce"], verify=True).run(mod)
    fn = mod.functions[0]
    store = next(i for i in fn.instructions() if i.op == "st")
    assert isinstance(store.args[1], Const), print_module(mod)
    assert store.args[1].bits == _reference(op, a, b, bits, signed)
    assert [i.op for i in fn.instructions()] == ["ld_param", "st", "ret"]


def test_constfold_leaves_unsupported_folds_alone(monkeypatch):
    # An operation the semantics refuse (UnsupportedError; rsqrt.approx.f64 stands in, refused here as
    # it was before it had semantics) stays for run time; the foldable ones around it fold.
    refuse_rsqrt(monkeypatch)
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .f64 %fd<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  rsqrt.approx.f64 %fd1, 0d4000000000000000;
  add.f64 %fd2, 0d3FF0000000000000, 0d4000000000000000;
  fma.rn.f64 %fd3, 0d3FF0000000000000, 0d4000000000000000, 0d4008000000000000;
  st.global.f64 [%rd1], %fd1;
  st.global.f64 [%rd1+8], %fd2;
  st.global.f64 [%rd1+16], %fd3;
  ret;
}
"""
    mod = PassManager(["constfold", "dce"], verify=True).run(_build(text, "f.ptx"))
    ops = [i.op for i in mod.functions[0].instructions()]
    assert ops == ["ld_param", "rsqrt", "st", "st", "st", "ret"]
    st2, st3 = [i for i in mod.functions[0].instructions() if i.op == "st"][1:]
    assert isinstance(st2.args[1], Const) and st2.args[1].bits == 0x4008000000000000  # 1.0 + 2.0
    assert isinstance(st3.args[1], Const) and st3.args[1].bits == 0x4014000000000000  # fma(1, 2, 3) = 5.0


# --------------------------------------------------------------------------- the pass manager


def test_pipelines_are_copies_and_levels_checked():
    assert pipeline_for_level(0) == []
    p = pipeline_for_level(1)
    p.append("mutated")
    assert "mutated" not in pipeline_for_level(1)  # a copy, not the table
    for bad in (-1, 4, 10):
        with pytest.raises(ValueError, match=f"optimisation level must be 0-3, got {bad}"):
            pipeline_for_level(bad)


def test_unknown_pass_name():
    with pytest.raises(XccError, match=r"unknown pass 'nosuchpass' \(known: .*constfold, .*dce"):
        PassManager(["constfold", "nosuchpass"])


SAXPY = ROOT / "examples" / "saxpy.sm_80.ptx"
OLD_PIPELINE = "constfold,dce,ifconvert,constfold,dce"  # a pipeline naming some passes twice


@pytest.mark.parametrize(("print_after", "expected"), [
    ("dce", ["dce", "dce"]), ("constfold", ["constfold", "constfold"]), ("all", ["constfold", "dce", "ifconvert", "constfold", "dce"]),
    (None, []), ("nonexistent", []),
])
def test_print_after(print_after, expected):
    out = io.StringIO()
    mod = _build(SAXPY.read_text(), str(SAXPY))
    PassManager(OLD_PIPELINE, print_after=print_after, out=out).run(mod)
    text = out.getvalue()
    assert re.findall(r"^; \*\*\* IR after (\w+) \*\*\*$", text, re.M) == expected
    if expected:
        # each dump is the whole module as the printer prints it; the last equals the final IR
        last = text.rsplit(f"; *** IR after {expected[-1]} ***\n", 1)[1]
        assert last == print_module(mod)
        assert "entry @saxpy(" in last


def test_print_after_defaults_to_stderr(capsys):
    PassManager(["dce"], print_after="dce").run(_build(SAXPY.read_text(), str(SAXPY)))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("; *** IR after dce ***\nentry @saxpy(")


def test_on_pass_callback_order():
    seen = []
    PassManager(OLD_PIPELINE, on_pass=lambda name, m: seen.append((name, len(m.functions)))).run(
        _build(SAXPY.read_text(), str(SAXPY)))
    assert seen == [("constfold", 1), ("dce", 1), ("ifconvert", 1), ("constfold", 1), ("dce", 1)]


@dataclass(frozen=True)
class _DropTerminators:
    name: str = "breaker"

    def run(self, module: Module) -> None:
        for fn in module.functions:
            fn.blocks[-1].instructions.pop()


def test_verify_mode_catches_a_broken_pass():
    pm = PassManager(["dce"], verify=True)
    pm.passes.append(_DropTerminators())
    with pytest.raises(VerifyError, match="IR verification failed after breaker in saxpy: block .* has no terminator"):
        pm.run(_build(SAXPY.read_text(), str(SAXPY)))
    # without verification the broken IR goes through unnoticed (that is what verify is for)
    pm = PassManager([], verify=False)
    pm.passes.append(_DropTerminators())
    pm.run(_build(SAXPY.read_text(), str(SAXPY)))


def test_verify_mode_checks_the_input_first():
    mod = _build(SAXPY.read_text(), str(SAXPY))
    mod.functions[0].blocks[0].instructions.pop()
    with pytest.raises(VerifyError, match="after IR construction"):
        PassManager(["constfold"], verify=True).run(mod)
