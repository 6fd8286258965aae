"""A qualifier sweep of the PTX ISA against ptxas (issue 19): "check = will compile" and "check refuses what ptxas
refuses", measured on the combinations of each instruction's qualifiers, not only one line per family.

tests/data/isa_inventory/sweep_*.ptx-lines hold generated instruction lines, each with ptxas 13.0's verdict for
sm_90a at PTX 9.0 in the kernel of tests/test_isa_inventory.py (:func:`kernel`): ``ok | instruction`` (ptxas
compiles it) or ``no | instruction`` (ptxas refuses it).  ``python tests/test_isa_sweep.py --ptxas`` re-measures
every verdict with the ptxas on PATH (a line written as ``? | instruction`` gets its first one); the test itself
needs no ptxas.

For every line, ``xcc check`` and the runtime's compile path give the same verdict and the same located message;
an ``ok`` line compiles; a ``no`` line is refused - except the lines of :data:`KNOWN`, each with why, as strict
xfails (a difference that closes turns the test red until its entry goes)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_isa_inventory import kernel, verdicts  # noqa: E402

DATA = Path(__file__).parent / "data" / "isa_inventory"
VERSION = "9.0"

# Lines where xcc's verdict differs from ptxas's today: instruction -> why.
_UNMEASURED = "what ptxas makes of it is unmeasured (no GPU or disassembler to check)"
KNOWN: dict[str, str] = {
    # sweep_memory (tests/isa_sweep_memory.py)
    "atom.global.exch.b32 %r2, [%rd1], %r3, %r4;": "ptxas 13.0 takes a fourth operand on atom.exch as the access's "
        "memory descriptor (sm_90a SASS: R2UR UR6, R6 with R6 = %r4, R2UR UR7 of a register nothing defines, then "
        "ATOMG.E.EXCH.STRONG.GPU PT, R8, desc[UR6][R2.64], R9): half of the descriptor undefined, so no meaning to "
        "implement; xcc keeps refusing it ('takes 3 operands')",
}
KNOWN.update(__import__("isa_sweep_tensor").known())  # sweep_tensor: its gaps, by pattern, in tests/isa_sweep_tensor.py


def sweep() -> list[tuple[str, str, str]]:
    """(file stem, verdict, instruction) of every sweep line, files in name order."""
    out = []
    for path in sorted(DATA.glob("sweep_*.ptx-lines")):
        for ln in path.read_text().splitlines():
            if ln.strip() and not ln.startswith("#"):
                verdict, inst = (x.strip() for x in ln.split("|", 1))
                out.append((path.stem, verdict, inst))
    return out


FAST_EVERY = 4
"""The fast tier checks every FAST_EVERY-th line and every KNOWN line; the slow tier the rest (the whole sweep,
about 7,000 lines, takes minutes)."""


def _params():
    out = []
    for i, (stem, verdict, inst) in enumerate(sweep()):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[inst])] if inst in KNOWN else []
        if inst not in KNOWN and i % FAST_EVERY:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(i, verdict, inst, marks=marks, id=f"{stem[6:]}{i}:{inst.split()[0]}"))
    return out


@pytest.mark.parametrize("i, verdict, inst", _params())
def test_xcc_agrees_with_ptxas(i, verdict, inst):
    """``check`` == compile, message for message; ``ok`` lines compile, ``no`` lines are refused."""
    by_check, by_compile = verdicts(inst, "sm_90a", VERSION, f"s{i}")
    assert by_check == by_compile, (inst, by_check, by_compile)
    assert verdict in ("ok", "no"), f"{inst}: verdict {verdict!r} (run python tests/test_isa_sweep.py --ptxas)"
    if verdict == "ok":
        assert by_check is None, (inst, by_check)
    else:
        assert by_check is not None, f"ptxas refuses, xcc accepts: {inst}"


def test_known_are_sweep_lines():
    lines = {inst for _, _, inst in sweep()}
    assert set(KNOWN) <= lines, set(KNOWN) - lines


# ----------------------------------------------------------------------------- re-measuring with ptxas
def _ptxas_verdict(inst: str) -> str:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.ptx"
        p.write_text(kernel(inst, "k", "sm_90a", VERSION))
        ok = subprocess.run(["ptxas", "-arch=sm_90a", str(p), "-o", str(Path(d) / "k.cubin")],
                            capture_output=True).returncode == 0
    return "ok" if ok else "no"


def remeasure(paths: list[Path]) -> None:
    """Rewrite each line's verdict as the ptxas on PATH decides (duplicate lines dropped)."""
    from concurrent.futures import ThreadPoolExecutor

    for path in paths:
        lines = path.read_text().splitlines()
        seen, body, insts = set(), [], []
        for ln in lines:
            if not ln.strip() or ln.startswith("#"):
                body.append(ln)
                continue
            inst = ln.split("|", 1)[1].strip()
            if inst not in seen:
                seen.add(inst)
                body.append(inst)
                insts.append(inst)
        with ThreadPoolExecutor(2) as ex:
            got = dict(zip(insts, ex.map(_ptxas_verdict, insts)))
        out = [ln if ln in ("",) or ln.startswith("#") or ln not in got else f"{got[ln]} | {ln}" for ln in body]
        path.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ptxas"]:
        remeasure([Path(a) for a in sys.argv[2:]] or sorted(DATA.glob("sweep_*.ptx-lines")))
