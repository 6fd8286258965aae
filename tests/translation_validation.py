"""Translation validation: every pass, every -O pipeline and the backend checked against the IR interpreter on
random programs (:mod:`ptxgen`), with a reducer for the failures.

For a program, the reference is the IR interpreter running the frontend's IR (no passes).  Then, each compared
bit for bit with the reference (f32 words: any NaN equals any NaN):

* ``-O1``..``-O3``: the IR after *every* pass of :func:`xcc.passes.pipeline_for_level` (``PassManager(...,
  verify=True, on_pass=...)``), on the IR interpreter;
* a pipeline of six available passes drawn by the program's seed (repeats allowed), after every pass: the
  interactions the -O pipelines do not have yet;
* each available pass alone (``PassManager([name], verify=True)``) on the frontend's IR;
* the compiled program at ``-O0``..``-O3`` (:func:`xcc.driver.compile_module` with ``verify=True``: the IR
  verifier after every pass and the machine verifier after every backend stage) on the ISA interpreter.

A crash (any exception), a verifier error, a kernel fault or a different output is a :class:`Failure` naming the
stage.  The IR interpreter's result is remembered per printed IR text, so a pass that changes nothing costs no
second run, and the -O pipelines share their common prefixes.

:func:`reduce` shrinks a failing program by delta debugging over its statement tree (Zeller and Hildebrandt,
"Simplifying and Isolating Failure-Inducing Input", TSE 2002): it deletes statements and replaces ifs and loops
by their bodies while the reduced program still checks (``xcc check``'s parser), its reference run still succeeds,
and the same stage still fails.

Command line (a failure prints its seed, so it reproduces with ``--seed N``)::

    python tests/translation_validation.py --seed 17            # one program, reduced on failure
    python tests/translation_validation.py --seeds 0:500        # a range
    python tests/translation_validation.py --seed 17 --print    # the program's PTX
"""

from __future__ import annotations

import copy
import pickle
import random
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptxgen import OUT_WORDS, If, Loop, Program, generate  # noqa: E402

from xcc import driver  # noqa: E402
from xcc import runtime as rt  # noqa: E402
from xcc.diagnostics import XccError  # noqa: E402
from xcc.driver import CompileOptions, Source, frontend  # noqa: E402
from xcc.frontend.parser import parse  # noqa: E402
from xcc.ir.core import Module  # noqa: E402
from xcc.ir.printer import print_module  # noqa: E402
from xcc.passes import PassManager, available_passes, pipeline_for_level  # noqa: E402
from xcc.runtime.ir_engine import IRFunction  # noqa: E402
from xcc.runtime.launch import Function  # noqa: E402

__all__ = ["Failure", "Validator", "validate", "reduce", "check_seed", "validate_range", "KNOWN_BUGS"]

LEVELS = (0, 1, 2, 3)
KNOWN_BUGS: dict[str, str] = {
    # mnemonic -> the bug it triggers; the generator leaves these out unless told otherwise (``--no-avoid``), and
    # test_translation_validation.py holds a strict-xfail reproducer for each, which fails once the bug is fixed.
}
MAX_STEPS = 200_000  # the watchdog's limit: a generated program needs a few thousand scheduler steps


@dataclass
class Failure:
    """A stage that disagrees with the reference: ``stage`` names it ("-O2 after pass 3 (gvn)", "pass gvn alone",
    "isa -O1", "reference"), ``detail`` says how."""

    seed: int
    stage: str
    detail: str
    ptx: str = ""
    signature: tuple = ()  # what a reduced program must keep: (stage family, exception type, differing words)
    key: str = ""  # the stage of Validator.stages that failed ("-O2 pipeline", "pass gvn alone", "isa -O1")
    reproduce: str = ""  # the command line that gives this failure again
    reduced: bool = False  # is ``ptx`` the reduced program?

    def report(self) -> str:
        return (f"translation validation failed: seed {self.seed}, {self.stage}: {self.detail}\n"
                f"reproduce: {self.reproduce or f'python tests/translation_validation.py --seed {self.seed}'}\n"
                f"--- program{' (reduced)' if self.reduced else ''} ---\n{self.ptx}")


class _Mismatch(Exception):
    def __init__(self, message: str, words: frozenset[int]):
        super().__init__(message)
        self.words = words  # the differing word offsets within a thread's output block


@dataclass
class Validator:
    """Runs one program on both engines, remembering IR-interpreter results by printed IR."""

    prog: Program
    passes: list = field(default_factory=available_passes)  # run alone: names or pass instances
    levels: tuple[int, ...] = LEVELS
    isa: bool = True
    pipelines: dict[int, list] | None = None  # level -> pipeline (None: xcc.passes.pipeline_for_level)
    focus: str | None = None  # run only this stage (Failure.key): what the reducer needs
    random_pipeline: int = 6  # passes in the seeded random pipeline stage (0: none)

    def __post_init__(self):
        self.text = self.prog.text
        self.source = Source(self.text, f"<ptxgen seed {self.prog.seed}>")
        self.base: bytes | None = None  # the frontend's IR, built once, pickled (unpickled afresh for every stage)
        self.device = rt.Device()
        self.inp = rt.to_device(np.array(self.prog.inputs, dtype=np.uint32), self.device)
        self.out = rt.zeros(self.prog.threads * OUT_WORDS, np.uint32, self.device)
        self.runs: dict[str, np.ndarray] = {}
        self.f32 = np.zeros(self.prog.threads * OUT_WORDS, dtype=bool)
        for w in self.prog.f32_words:
            self.f32[w::OUT_WORDS] = True

    # -- engines
    def _launch(self, fn) -> np.ndarray:
        self.out.copy_from_host(np.zeros(self.prog.threads * OUT_WORDS, dtype=np.uint32))
        fn.launch((self.prog.grid, 1, 1), (self.prog.block, 1, 1),
                  (self.out, self.inp, np.uint32(self.prog.n)), 0, timing=False, max_steps=MAX_STEPS)
        return self.out.copy_to_host()

    def frontend_ir(self) -> Module:
        """A fresh copy of the frontend's IR (``xcc.driver.frontend``; the PTX is parsed once, and a pickle round
        trip copies the object graph as ``copy.deepcopy`` does, seven times faster)."""
        if self.base is None:
            self.base = pickle.dumps(frontend([self.source]), pickle.HIGHEST_PROTOCOL)
        return pickle.loads(self.base)

    def run_ir(self, module: Module) -> np.ndarray:
        key = print_module(module)
        if key not in self.runs:
            self.runs[key] = self._launch(IRFunction(module, self.prog.kernel, self.device))
        return self.runs[key]

    def run_isa(self, level: int) -> np.ndarray:
        """The program compiled by :func:`xcc.driver.compile_module` at ``level``, on the ISA interpreter.  The
        driver's frontend is given the IR already built from this PTX (parsing again would give the same)."""
        with mock.patch.object(driver, "frontend", lambda sources, kernels=None: self.frontend_ir()):
            obj = driver.compile_module([self.source], CompileOptions(opt_level=level, verify=True), [self.prog.kernel],
                                        machine=self.device.machine)
        return self._launch(Function(obj.kernels[self.prog.kernel], self.device))

    # -- comparison
    def compare(self, got: np.ndarray, want: np.ndarray) -> None:
        diff = got != want
        fnan = self.f32 & np.isnan(got.view(np.float32)) & np.isnan(want.view(np.float32))
        bad = np.flatnonzero(diff & ~fnan)
        if bad.size:
            where = ", ".join(f"thread {i // OUT_WORDS} word {i % OUT_WORDS}: {got[i]:#010x} != {want[i]:#010x}"
                              for i in bad[:4])
            raise _Mismatch(f"{bad.size} output words differ from the reference ({where})",
                            frozenset(int(i) % OUT_WORDS for i in bad))

    # -- the stages
    def stages(self) -> Iterable[tuple[str, Callable[[np.ndarray], None]]]:
        """(stage name, check against the reference output) in order; each raises on a difference."""
        for level in self.levels:
            if level:
                names = self.pipelines[level] if self.pipelines is not None else pipeline_for_level(level)
                yield f"-O{level} pipeline", lambda ref, lv=level, ns=names: self._pipeline(f"-O{lv}", ns, ref)
        if self.random_pipeline and self.passes:
            names = self.random_passes()
            yield "random pipeline", lambda ref: self._pipeline(f"random pipeline {_names(names)}", names, ref)
        for name in self.passes:
            yield f"pass {getattr(name, 'name', name)} alone", lambda ref, n=name: self.compare(
                self.run_ir(PassManager([n], verify=True).run(self.frontend_ir())), ref)
        if self.isa:
            for level in self.levels:
                yield f"isa -O{level}", lambda ref, lv=level: self.compare(self.run_isa(lv), ref)

    def random_passes(self) -> list:
        """``random_pipeline`` passes drawn (with repeats) from ``passes`` by the program's seed."""
        rng = random.Random(self.prog.seed)
        return [rng.choice(self.passes) for _ in range(self.random_pipeline)]

    def _pipeline(self, label: str, names: list, ref: np.ndarray) -> None:
        done: list[str] = []

        def after(name: str, module: Module) -> None:
            done.append(name)
            try:
                self.compare(self.run_ir(module), ref)
            except Exception as e:
                raise _StageError(f"{label} after pass {len(done)} ({name})", e) from e

        try:
            PassManager(names, verify=True, on_pass=after).run(self.frontend_ir())
        except _StageError:
            raise
        except Exception as e:  # the pass itself, or the verifier after it
            i = len(done)
            name = getattr(names[i], "name", names[i]) if i < len(names) else "?"
            raise _StageError(f"{label} in pass {i + 1} ({name})", e) from e

    def validate(self) -> Failure | None:
        """The first failing stage of the program, or None when every stage agrees with the reference."""
        try:
            ref = self.run_ir(self.frontend_ir())
        except Exception as e:
            return Failure(self.prog.seed, "reference", _describe(e), self.text)
        for stage, check in self.stages():
            if self.focus is not None and stage != self.focus:
                continue
            try:
                check(ref)
            except _StageError as e:
                return Failure(self.prog.seed, e.stage, _describe(e.cause), self.text, _signature(e.stage, e.cause),
                               key=stage)
            except Exception as e:
                return Failure(self.prog.seed, stage, _describe(e), self.text, _signature(stage, e), key=stage)
        return None


class _StageError(Exception):
    def __init__(self, stage: str, cause: BaseException):
        super().__init__(stage)
        self.stage, self.cause = stage, cause


def _names(passes: list) -> str:
    return ",".join(getattr(p, "name", p) for p in passes)


def _signature(stage: str, e: BaseException) -> tuple:
    """The stage family (the stage up to the pass's position: "-O2 after pass 3 (gvn)" -> "-O2 gvn"), the exception
    type, and for a wrong output the differing words (a reduced program must differ in at least one of them)."""
    family = stage.split(" ")[0] + " " + stage.rsplit("(", 1)[1].rstrip(")") if "(" in stage else stage
    if isinstance(e, _Mismatch):
        return family, "mismatch", e.words
    return family, type(e).__name__, frozenset()


def _same_failure(sig: tuple, other: tuple) -> bool:
    return sig[:2] == other[:2] and (not sig[2] or bool(sig[2] & other[2]))


def _describe(e: BaseException) -> str:
    if isinstance(e, _Mismatch):
        return str(e)
    if isinstance(e, XccError):
        return f"{type(e).__name__}: {e}"
    tb = traceback.extract_tb(e.__traceback__)[-3:]
    where = "; ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in tb)
    return f"crash: {type(e).__name__}: {e} (at {where})"


def validate(seed: int, passes: list[str] | None = None, levels: tuple[int, ...] = LEVELS, isa: bool = True,
             size: int = 20, avoid: frozenset[str] | set[str] = frozenset(KNOWN_BUGS)) -> Failure | None:
    """Validate the program ``generate(seed, size, avoid)``: None, or the first :class:`Failure` (unreduced)."""
    prog = generate(seed, size, avoid)
    return Validator(prog, available_passes() if passes is None else passes, levels, isa).validate()


# --------------------------------------------------------------------------- the reducer


def _statement_lists(prog: Program) -> list[list]:
    """Every statement list of the program (function bodies, then branches and loop bodies), outermost first."""
    out: list[list] = []

    def walk(stmts: list) -> None:
        out.append(stmts)
        for s in stmts:
            if isinstance(s, If):
                walk(s.then)
                if s.other is not None:
                    walk(s.other)
            elif isinstance(s, Loop):
                walk(s.body)

    for fn in prog.funcs:
        walk(fn.body)
    return out


def _checks(text: str) -> bool:
    try:
        parse(text, "<reduced>")
        return True
    except XccError:
        return False


def reduce(prog: Program, failure: Failure, passes: list | None = None, pipelines: dict[int, list] | None = None,
           random_pipeline: int = 6, log: Callable[[str], None] | None = None) -> Program:
    """A smaller program on which ``failure`` still happens: the same stage, the same kind of failure, and for a
    wrong output a difference in one of the same words (the input is not modified).  ``passes`` and
    ``pipelines`` and ``random_pipeline`` as the :class:`Validator` that found the failure had them."""
    passes = available_passes() if passes is None else passes
    tried: dict[str, bool] = {}

    def interesting(candidate: Program) -> bool:
        text = candidate.text
        if text not in tried:
            ok = _checks(text)
            if ok:
                f = Validator(candidate, passes, LEVELS, True, pipelines, failure.key, random_pipeline).validate()
                ok = f is not None and f.stage != "reference" and _same_failure(failure.signature, f.signature)
            tried[text] = ok
        return tried[text]

    best = copy.deepcopy(prog)
    changed = True
    while changed:
        changed = False
        for i in range(len(_statement_lists(best))):
            lists = _statement_lists(best)
            if i >= len(lists):
                break
            stmts = lists[i]
            chunk = max(1, len(stmts) // 2)
            while chunk >= 1:  # ddmin-style: remove chunks, halving the chunk size
                j = 0
                while j < len(stmts):
                    removed = stmts[j:j + chunk]
                    del stmts[j:j + chunk]
                    if removed and interesting(best):
                        changed = True
                        if log:
                            log(f"removed {len(removed)} statement(s); {len(best.text.splitlines())} lines")
                        continue
                    stmts[j:j] = removed
                    j += chunk
                chunk //= 2
            for j, s in enumerate(list(stmts)):  # an if or loop replaced by one of its bodies
                bodies = [s.then] + ([s.other] if s.other else []) if isinstance(s, If) else \
                    [s.body] if isinstance(s, Loop) else []
                for body in bodies:
                    stmts[j:j + 1] = body
                    if interesting(best):
                        changed = True
                        break
                    stmts[j:j + len(body)] = [s]
    _drop_unused_functions(best, interesting)
    kernel = best.funcs[-1]
    for line in list(kernel.epilogue[:-1]):  # the stores of outputs that do not matter (ret stays)
        i = kernel.epilogue.index(line)
        del kernel.epilogue[i]
        if not interesting(best):
            kernel.epilogue.insert(i, line)
    return best


def _drop_unused_functions(prog: Program, interesting: Callable[[Program], bool]) -> None:
    for fn in list(prog.funcs[:-1]):
        if f"), {fn.name}, (" not in prog.text:  # no call to it is left
            prog.funcs.remove(fn)
            if not interesting(prog):
                prog.funcs.insert(0, fn)


def reproduce_command(prog: Program) -> str:
    cmd = f"python tests/translation_validation.py --seed {prog.seed} --size {prog.size}"
    if prog.avoid != frozenset(KNOWN_BUGS):
        cmd += f" --avoid '{','.join(sorted(prog.avoid))}'" if prog.avoid else " --no-avoid"
    return cmd


def check_seed(seed: int, passes: list[str] | None = None, levels: tuple[int, ...] = LEVELS, isa: bool = True,
               reduce_failures: bool = True, size: int = 20,
               avoid: frozenset[str] | set[str] = frozenset(KNOWN_BUGS),
               log: Callable[[str], None] | None = None) -> Failure | None:
    """Validate the program ``generate(seed, size, avoid)``; on failure, the failure with its reduced program and
    the command line that reproduces it."""
    prog = generate(seed, size, avoid)
    passes = available_passes() if passes is None else passes
    failure = Validator(prog, passes, levels, isa).validate()
    if failure is None:
        return None
    failure.reproduce = reproduce_command(prog)
    if not reduce_failures:
        return failure
    if log:
        log(f"seed {seed}: {failure.stage}: {failure.detail}; reducing")
    small = reduce(prog, failure, passes, log=log)
    again = Validator(small, passes, LEVELS, isa, focus=failure.key).validate() or failure
    return Failure(seed, again.stage, again.detail, small.text, failure.signature, failure.key, failure.reproduce,
                   reduced=True)


def validate_range(start: int, stop: int, size: int = 20) -> list[Failure]:
    """The (unreduced) failures of seeds ``start..stop-1``: one unit of work for a process pool."""
    return [f for f in (check_seed(s, size=size, reduce_failures=False) for s in range(start, stop)) if f is not None]


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, help="one program")
    ap.add_argument("--seeds", help="a range START:STOP")
    ap.add_argument("--print", action="store_true", help="print the program's PTX and stop")
    ap.add_argument("--no-isa", action="store_true", help="IR stages only")
    ap.add_argument("--no-reduce", action="store_true", help="report failures unreduced")
    ap.add_argument("-v", "--verbose", action="store_true", help="say what the reducer does (on stderr)")
    ap.add_argument("--size", type=int, default=20, help="statements at the kernel's top level (default 20)")
    ap.add_argument("--avoid", default=",".join(sorted(KNOWN_BUGS)),
                    help="comma-separated mnemonics not to generate (default: the known bugs' mnemonics)")
    ap.add_argument("--no-avoid", action="store_true", help="generate every mnemonic, known bugs included")
    ap.add_argument("--passes", help="comma-separated passes to run alone (default: every available one)")
    args = ap.parse_args(argv)
    seeds = [args.seed] if args.seed is not None else range(*map(int, (args.seeds or "0:20").split(":")))
    avoid = frozenset() if args.no_avoid else frozenset(a for a in args.avoid.split(",") if a)
    if args.print:
        for s in seeds:
            print(generate(s, args.size, avoid).text)
        return 0
    passes = args.passes.split(",") if args.passes else None
    failed = 0
    for s in seeds:
        f = check_seed(s, passes, isa=not args.no_isa, reduce_failures=not args.no_reduce, size=args.size,
                       avoid=avoid, log=(lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None)
        if f is not None:
            failed += 1
            print(f.report(), flush=True)
    print(f"{len(seeds) - failed} of {len(seeds)} programs validated")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
