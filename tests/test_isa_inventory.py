"""An inventory of the PTX ISA up to sm_90a (issue 19): "every instruction compiles" checked, not assumed.

tests/data/isa_inventory/forms.ptx-lines holds one representative line per instruction family and variant group
of the PTX ISA 9.x manual's instruction chapters (integer, extended precision, float, half, comparison and
selection, logic and shift, data movement and conversion with every state space, cache and eviction qualifier
group and vector width, texture and surface, control flow, parallel synchronisation, asynchronous copies and
tensor-map forms, warp and warpgroup matrix instructions, video, miscellaneous, special registers), each
accepted by ptxas 13.0 for sm_90a.  Each line is ``TARGET VERSION | instruction``: the lowest target and PTX
version ptxas 13.0 accepts the line with (targets below sm_75 are not known to ptxas 13.0, so ``sm_75`` means
"any"); ``python tests/test_isa_inventory.py --ptxas`` re-measures them (and drops lines ptxas no longer accepts).

Each line is compiled in a kernel of its own (:func:`kernel`): every register it names is defined first from
``%tid.x`` and the pointer parameter (so nothing is a constant the optimiser could fold away) and stored to
global memory after it (so its results are live and reach instruction selection).  For each line, ``xcc check``
(:func:`xcc.check.check_sources`) and the runtime's compile path (lazy loading, ``module.get_function``) give the
same verdict and the same located message, and the line compiles - except the lines of :data:`KNOWN_GAPS`, each
with the exact refusal xcc gives today and why; those tests are ``xfail(strict=True)``, so a gap that closes turns
the test red until its entry is removed.

Every line is checked in the fast tier (the whole inventory takes seconds: the kernels are tiny)."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FORMS = Path(__file__).parent / "data" / "isa_inventory" / "forms.ptx-lines"
HEADER_VERSION = "8.7"  # raised to a line's own version when it needs a newer one

PRELUDE = """.version {version}
.target {target}
.address_size 64
.global .align 16 .b8 gbuf[1024];
.const .align 16 .b8 cbuf[256];
.func (.param .b32 r) f0 (.param .b32 a)
{{
    .reg .b32 %t;
    ld.param.b32 %t, [a];
    st.param.b32 [r], %t;
    ret;
}}
"""
KERNEL = """.visible .entry {name}(.param .u64 p0)
{{
    .reg .pred %p<8>;
    .reg .b16 %h<16>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<16>;
    .reg .f64 %fd<8>;
{b128}    .reg .b32 %tx;
    .reg .b64 %base;
    .shared .align 16 .b8 sbuf[1024];
    .shared .align 8 .b64 mbar;
    .local .align 16 .b8 lbuf[64];
    TS: .branchtargets DONE;
    ld.param.u64 %base, [p0];
    mov.u32 %tx, %tid.x;
{defs}
    {line}
DONE:
{uses}
    ret;
}}
"""
_REG = re.compile(r"%(rd|fd|r|f|h|p|q)(\d+)\b")
# register class -> (how it is defined from %tx / %base, how it is stored, its width in bytes)
_DEF = {"r": ("add.u32 {r}, %tx, {k};", "st.global.u32 [%base+{o}], {r};", 4),
        "rd": ("add.s64 {r}, %base, {k16};", "st.global.u64 [%base+{o}], {r};", 8),
        "f": ("cvt.rn.f32.u32 {r}, %tx;", "st.global.f32 [%base+{o}], {r};", 4),
        "fd": ("cvt.rn.f64.u32 {r}, %tx;", "st.global.f64 [%base+{o}], {r};", 8),
        "h": ("cvt.u16.u32 {r}, %tx;", "st.global.u16 [%base+{o}], {r};", 2),
        "p": ("setp.ne.u32 {r}, %tx, {k};", "selp.u32 %tx, 1, 0, {r};\n    st.global.u32 [%base+{o}], %tx;", 4)}


def kernel(line: str, name: str = "k", target: str = "sm_90a", version: str = HEADER_VERSION) -> str:
    """A module with one kernel running ``line`` (module docstring).  ``.b128`` registers (``%q``) are declared
    only where used and left undefined: moving 128-bit values in and out is itself an inventory line."""
    regs = sorted({(m.group(1), int(m.group(2))) for m in _REG.finditer(line)})
    defs, uses, off = [], [], 0
    for cls, k in regs:
        if cls == "q":
            continue
        d, u, w = _DEF[cls]
        r = f"%{cls}{k}"
        defs.append("    " + d.format(r=r, k=k, k16=16 * k))
        off = (off + w - 1) // w * w
        uses.append("    " + u.format(r=r, o=off))
        off += w
    b128 = "    .reg .b128 %q<4>;\n" if "%q" in line else ""
    return (PRELUDE.format(version=version, target=target)
            + KERNEL.format(name=name, line=line, b128=b128, defs="\n".join(defs), uses="\n".join(uses)))


def forms() -> list[tuple[str, str, str]]:
    """(target, version, instruction) of every line of the inventory, in order."""
    out = []
    for ln in FORMS.read_text().splitlines():
        if ln.strip() and not ln.startswith("#"):
            need, inst = (x.strip() for x in ln.split("|", 1))
            target, version = need.split()
            out.append((target, version, inst))
    return out


def _version(v: str) -> str:
    return max(v, HEADER_VERSION, key=lambda s: tuple(map(int, s.split("."))))


# Lines xcc refuses today: instruction -> (the exact refusal message, without its location; why).
KNOWN_GAPS: dict[str, tuple[str, str]] = {}


def _refusal(fn) -> str | None:
    from xcc.diagnostics import XccError

    try:
        fn()
    except XccError as e:
        return str(e)
    return None


@functools.cache
def verdicts(inst: str, target: str, version: str, name: str) -> tuple[str | None, str | None]:
    """(check's refusal, compile's refusal) of ``inst`` (None: accepted), full located messages."""
    from xcc import runtime as rt
    from xcc.check import check_sources
    from xcc.sources import Source

    text = kernel(inst, name, "sm_90a", _version(version))
    by_check = _refusal(lambda: _first_error(check_sources([Source(text, f"{name}.ptx")])))
    module = _refusal_or_value(lambda: rt.load_module(Source(text, f"{name}.ptx"), engine="isa"))
    if isinstance(module, str):
        return by_check, module
    return by_check, _refusal(lambda: module.get_function(name))


def _first_error(res) -> None:
    if res.errors:
        raise res.errors[0]


def _refusal_or_value(fn):
    from xcc.diagnostics import XccError

    try:
        return fn()
    except XccError as e:
        return str(e)


def _unlocated(msg: str) -> str:
    """The message without its ``file:line:col: error:`` prefix and source excerpt."""
    first = msg.splitlines()[0]
    return re.sub(r"^\S+:\d+:\d+: error: |^error: ", "", first)


def _params():
    out = []
    for i, (target, version, inst) in enumerate(forms()):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[inst][1])] if inst in KNOWN_GAPS else []
        out.append(pytest.param(i, target, version, inst, marks=marks, id=f"{i}:{inst.split()[0]}"))
    return out


@pytest.mark.parametrize("i, target, version, inst", _params())
def test_line_compiles(i, target, version, inst):
    """The line compiles; a known gap fails only with its recorded refusal, so a gap that closes or whose
    message changes passes, which strict xfail reports as a failure (update KNOWN_GAPS)."""
    by_check = verdicts(inst, target, version, f"k{i}")[0]
    if inst in KNOWN_GAPS and by_check is not None and _unlocated(by_check) == KNOWN_GAPS[inst][0]:
        pytest.fail(f"known gap: {inst}: {KNOWN_GAPS[inst][0]}")
    assert inst in KNOWN_GAPS or by_check is None, (inst, by_check)


@pytest.mark.parametrize("i, target, version, inst", [pytest.param(*p.values, id=p.id) for p in _params()])
def test_check_says_what_compile_does(i, target, version, inst):
    """``xcc check`` and the runtime's compile give the same verdict and the same located message."""
    by_check, by_compile = verdicts(inst, target, version, f"k{i}")
    assert by_check == by_compile, (inst, by_check, by_compile)


def test_known_gaps_are_inventory_lines():
    """Every entry of KNOWN_GAPS names a line of the inventory (a removed line leaves no stale entry)."""
    lines = {inst for _, _, inst in forms()}
    assert set(KNOWN_GAPS) <= lines, set(KNOWN_GAPS) - lines


def test_inventory_is_broad():
    """One line per family and variant group: at least 250, every chapter present."""
    text = FORMS.read_text()
    assert len(forms()) >= 250
    ops = {re.match(r"(?:@!?%\w+\s+)?(\w+)", inst).group(1) for _, _, inst in forms()}
    for op in ("add", "mad", "fma", "cvt", "ld", "st", "atom", "red", "mbarrier", "cp", "mma", "wmma", "wgmma",
               "ldmatrix", "stmatrix", "tex", "suld", "vadd", "shfl", "vote", "redux", "elect", "setmaxnreg",
               "griddepcontrol", "fence", "barrier", "multimem", "tensormap", "nanosleep", "brkpt", "trap"):
        assert op in ops, op
    assert "%cluster_ctarank" in text and "%globaltimer" in text


# ----------------------------------------------------------------------------- re-measuring with ptxas
_TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"]
_VERSIONS = ["6.3", "6.4", "6.5", "7.0", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.0", "8.1", "8.2",
             "8.3", "8.4", "8.5", "8.6", "8.7", "8.8", "9.0"]


def _ptxas_ok(inst: str, target: str, version: str) -> bool:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.ptx"
        p.write_text(kernel(inst, "k", target, version))
        return subprocess.run(["ptxas", f"-arch={target}", str(p), "-o", str(Path(d) / "k.cubin")],
                              capture_output=True).returncode == 0


def _measure(inst: str) -> tuple[str, str] | None:
    if not _ptxas_ok(inst, "sm_90a", "9.0"):
        return None
    target = next(t for t in _TARGETS if _ptxas_ok(inst, t, "9.0"))
    return target, next(v for v in _VERSIONS if _ptxas_ok(inst, target, v))


def remeasure() -> None:
    """Rewrite each line's target and version as ptxas (on PATH) decides; drop lines it rejects for sm_90a."""
    from concurrent.futures import ThreadPoolExecutor

    lines = FORMS.read_text().splitlines()
    insts = [ln.split("|", 1)[1].strip() for ln in lines if ln.strip() and not ln.startswith("#")]
    with ThreadPoolExecutor(2) as ex:
        need = dict(zip(insts, ex.map(_measure, insts)))
    out = []
    for ln in lines:
        if not ln.strip() or ln.startswith("#"):
            out.append(ln)
            continue
        inst = ln.split("|", 1)[1].strip()
        if need[inst] is None:
            print(f"ptxas rejects, dropped: {inst}", file=sys.stderr)
            continue
        out.append(f"{need[inst][0]:<6} {need[inst][1]} | {inst}")
    FORMS.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--ptxas"]:
        remeasure()
