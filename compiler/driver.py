"""The compiler driver: PTX text -> parsed -> IR -> passes -> xg1 kernels -> object file.

The pipeline is a sequence of stages, each of which can be stopped at and
dumped (``--print-after``); every kernel is compiled on its own, so the JIT
compiles only the kernels that are launched.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TextIO

from xcc.backend.codegen import BackendOptions, compile_function
from xcc.backend.machine import Machine, load_machine
from xcc.backend.objfile import ObjectFile
from xcc.backend.spill import MIN_REGISTERS
from xcc.backend.stages import BACKEND_STAGES, StageObserver
from xcc.diagnostics import XccError
from xcc.frontend.parser import parse
from xcc.ir.build import build_module
from xcc.ir.cfg import reachable_functions
from xcc.ir.core import Module
from xcc.ir.funcptr import resolve_function_pointers
from xcc.ir.link import link_modules
from xcc.ir.printer import print_module
from xcc.passes import PassManager, pipeline_for_level
from xcc.passes.manager import build_pipeline, registered_passes
from xcc.sources import Source, read_source  # noqa: F401 (read_source: re-exported, xcc.driver's API)

ARCHS = ("xg1",)


@dataclass(frozen=True)
class CompileOptions:
    """Everything that changes the generated code (and so enters the JIT cache key)."""

    arch: str = "xg1"
    opt_level: int = 3
    max_registers: int = 255
    machine: str = "xg1"
    verify: bool = False
    # an explicit IR pass pipeline ('sccp,gvn,unroll{max-trip=32},dce') replacing the -O level's; the -O level
    # still chooses the backend's settings (scheduling)
    passes: str | None = None
    # list scheduling on virtual registers before allocation (-O1 up); off for hand-written instruction streams
    # such as the cycle model's microbenchmarks, which time exactly the order they were written in
    pre_schedule: bool = True
    # list scheduling after register allocation (-O1 up); a knob of the autotuner (xcc.tune)
    post_schedule: bool = True
    # launch-time specialisation (docs/profiles.md): scalar kernel parameter name -> value folded in as a
    # constant (a dict is accepted and kept as sorted (name, value) pairs); the caller guarantees every launch
    # of the result passes these values.  ``launch_shape`` = (grid, block) folds %nctaid and %ntid likewise.
    specialize: tuple[tuple[str, int | float], ...] | None = None
    launch_shape: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None
    # profile-guided optimisation: an xcc.profile.Profile (or a path to one); its digest enters the key
    profile_use: object | None = None

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise XccError(f"unknown architecture '{self.arch}' (known: {', '.join(ARCHS)})")
        if self.opt_level not in (0, 1, 2, 3):
            raise XccError(f"optimisation level must be 0-3, got {self.opt_level}")
        if not 1 <= self.max_registers <= 255:
            raise XccError(f"--maxrregcount must be between 1 and 255, got {self.max_registers}")
        if self.passes is not None:
            build_pipeline(self.passes)  # an unknown pass or option is an error now, naming it
        if self.specialize is not None:  # xcc.passes.specialize, xcc.profile: imported when used (cold start)
            from xcc.passes.specialize import normalise_values

            object.__setattr__(self, "specialize", normalise_values(self.specialize))
        if self.launch_shape is not None:
            object.__setattr__(self, "launch_shape", tuple(tuple(int(x) for x in d) for d in self.launch_shape))
        if self.profile_use is not None and not hasattr(self.profile_use, "digest"):
            from xcc.profile.format import load_profile

            object.__setattr__(self, "profile_use", load_profile(self.profile_use))
        if self.max_registers < MIN_REGISTERS:  # raised to the floor, as ptxas does below its ABI minimum
            object.__setattr__(self, "max_registers", MIN_REGISTERS)

    def key(self) -> dict:
        d = asdict(replace(self, profile_use=None))
        d.pop("machine")  # enters the key through the machine description's hash instead
        d.pop("verify")
        if d["passes"] is None:  # the -O level's pipeline: keys stay what they were before --passes existed
            d.pop("passes")
        if d["pre_schedule"]:
            d.pop("pre_schedule")
        if d["post_schedule"]:
            d.pop("post_schedule")
        for k in ("specialize", "launch_shape", "profile_use"):  # absent when unused: keys stay as they were
            if d[k] is None:
                d.pop(k)
        if self.profile_use is not None:
            d["profile_use"] = self.profile_use.digest
        return d


@dataclass
class KernelStats:
    registers: int
    instructions: int
    shared_bytes: int
    spill_bytes: int
    compile_ms: float
    barriers: int = 0
    local_bytes: int = 0  # the .local frame of a thread, call stack included (ptxas's "bytes stack frame")
    pred_spills: int = 0  # predicates kept in general registers (P2R/ISETP, not memory: no spill bytes)
    spill_stores: int = 0  # bytes stored by register spill code (ptxas's "bytes spill stores")
    spill_loads: int = 0  # bytes loaded by register reloads (ptxas's "bytes spill loads")


def frontend(sources: list[Source], kernels: list[str] | None = None) -> Module:
    """Parse and build IR for every source and link them (:func:`xcc.ir.link.link_modules`): one
    module whose ``.extern`` functions and variables are resolved; a kernel defined twice, or a used
    symbol that is unresolved or defined twice, is a :class:`LinkError`.  Function pointers then get
    addresses and indirect calls become direct ones (:mod:`xcc.ir.funcptr`).  ``kernels`` (None: all)
    are the kernels that must build; another kernel the IR cannot express is left out rather than
    failing them (:func:`xcc.ir.build.build_module`)."""
    trees = [parse(s.text, s.name) for s in sources]
    if kernels is not None:
        require_kernels(kernels, [name for t in trees for name in _entry_names(t)])
    return resolve_function_pointers(link_modules([build_module(t, kernels) for t in trees]))


def require_kernels(kernels: list[str], defined: list[str]) -> None:
    """An :class:`XccError` naming the first of ``kernels`` not ``defined``, and those defined."""
    missing = [k for k in kernels if k not in defined]
    if missing:
        raise XccError(f"no kernel named '{missing[0]}' (the PTX defines: {', '.join(defined) or 'none'})")


IR_STAGES = ("build",)
"""Stages before the passes that ``--print-after`` can name: ``build`` is the IR as built from the PTX."""


def stage_names() -> list[str]:
    """Every name ``--print-after`` accepts: the IR as built, each registered pass, each backend stage, ``all``."""
    return [*IR_STAGES, *registered_passes(), *BACKEND_STAGES, "all"]


def check_print_after(name: str | None) -> None:
    if name is not None and name not in stage_names():
        raise XccError(f"--print-after: no pass or stage named '{name}' (known: {', '.join(stage_names())})")


def pipeline(options: CompileOptions) -> str | list[str]:
    """The IR pass pipeline ``options`` run: ``options.passes`` when given, else the -O level's."""
    return options.passes if options.passes is not None else pipeline_for_level(options.opt_level)


def optimise(module: Module, options: CompileOptions, print_after: str | None = None,
             out: TextIO | None = None, pass_times: dict[str, float] | None = None,
             on_stage: Callable[[str, Module], None] | None = None) -> Module:
    """Run the pipeline over ``module``; ``on_stage(name, module)`` (when given) sees the IR as built
    (``build``) and after each pass, as ``--print-after=all`` prints it."""
    if print_after in ("build", "all"):
        (out or sys.stderr).write(f"; *** IR after build ***\n{print_module(module)}")
    if on_stage is not None:
        on_stage("build", module)
    return PassManager(pipeline(options), verify=options.verify, print_after=print_after, out=out,
                       timings=pass_times, on_pass=on_stage).run(module)


def compile_module(sources: list[Source], options: CompileOptions = CompileOptions(),
                   kernels: list[str] | None = None, print_after: str | None = None, out: TextIO | None = None,
                   stats: dict[str, KernelStats] | None = None, machine: Machine | None = None,
                   pass_times: dict[str, float] | None = None,
                   on_stage: Callable[[str, Module], None] | None = None) -> ObjectFile:
    """Compile ``kernels`` (all when None) of the PTX ``sources`` into one object file.  ``print_after`` names a
    pass or backend stage (:func:`stage_names`) after which to print the IR or machine code to ``out``;
    ``pass_times``, when given, accumulates seconds per pass and backend stage name (``--time-passes``);
    ``on_stage(name, module)`` sees the IR after each IR stage (:func:`optimise`)."""
    check_print_after(print_after)
    t0 = time.perf_counter()
    if options.profile_use is not None:
        from xcc.profile.format import module_hash

        options.profile_use.check_module(module_hash([s.text for s in sources]), ", ".join(s.name for s in sources))
    module = frontend(sources, kernels)
    if pass_times is not None:
        pass_times["frontend"] = pass_times.get("frontend", 0.0) + time.perf_counter() - t0
    return compile_ir(module, options, kernels, print_after, out, stats, machine, pass_times,
                      sources[0].name if sources else "", on_stage, rebuild=lambda: frontend(sources, kernels))


def compile_ir(module: Module, options: CompileOptions = CompileOptions(), kernels: list[str] | None = None,
               print_after: str | None = None, out: TextIO | None = None,
               stats: dict[str, KernelStats] | None = None, machine: Machine | None = None,
               pass_times: dict[str, float] | None = None, source_name: str = "",
               on_stage: Callable[[str, Module], None] | None = None,
               rebuild: Callable[[], Module] | None = None) -> ObjectFile:
    """The back half of :func:`compile_module`, from a linked IR ``module`` (changed in place): the ``-O``
    pipeline (or ``options.passes``) and the backend, for ``kernels`` (all when None).  ``xcc link`` enters here
    with the IR of ``.xo`` objects (xcc.lto).  ``on_stage``: see :func:`optimise`.  ``rebuild``: the module
    built again from its sources, for a profile-guided build's second try (:class:`_Unpipelined`)."""
    check_print_after(print_after)
    machine = machine or load_machine(options.machine)
    if kernels is not None:
        require_kernels(kernels, [f.name for f in module.functions if f.is_entry])
    _prepare(module, options, kernels)
    unpipelined = None
    if options.profile_use is not None and rebuild is not None and print_after is None and on_stage is None:
        unpipelined = _Unpipelined(rebuild, options, kernels)
    optimise(module, options, print_after, out, pass_times, on_stage)
    if options.profile_use is not None:
        _lay_out(module)
    observer = None
    if print_after is not None or options.verify or pass_times is not None:
        observer = StageObserver(print_after, options.verify, out, pass_times)
    images = {}
    backend = BackendOptions(max_registers=options.max_registers,
                             schedule=options.opt_level > 0 and options.post_schedule,
                             uniform_branches=options.opt_level > 0, pre_schedule=options.pre_schedule,
                             serial=options.opt_level == 0, observer=observer)
    functions = {f.name: f for f in module.functions}
    for fn in module.functions:
        if not fn.is_entry:
            continue  # compiled into the image of each kernel that calls it
        t0 = time.perf_counter()
        report: dict = {}
        k = compile_function(fn, machine, backend, module.variables, report, functions)
        if unpipelined is not None and k.spill_bytes and _profile_pipelined(fn):
            k, report = unpipelined.fewer_spills(k, report, fn.name, machine, backend)
        images[k.name] = k
        if stats is not None:
            stats[k.name] = KernelStats(k.registers, k.instruction_count, k.shared_bytes, k.spill_bytes,
                                        round((time.perf_counter() - t0) * 1000, 3), k.barriers, k.local_bytes,
                                        report["pred_spills"].count, k.spill_stores, k.spill_loads)
    return ObjectFile(images, options.arch, source_name, dict(module.source_files))


def _prepare(module: Module, options: CompileOptions, kernels: list[str] | None) -> None:
    """The kernels asked for (all when None) and the device functions they call; launch-time values folded in;
    with a profile, its value-specialised clones and the index the passes read (xcc.profile.use)."""
    chosen = [f for f in module.functions if f.is_entry and (kernels is None or f.name in kernels)]
    by_name = {f.name: f for f in module.functions}
    called = {g.name for fn in chosen for g in reachable_functions(fn, by_name)[1:]}
    module.functions = chosen + [f for f in module.functions if f.name in called]  # with the device functions
    specialise(chosen, options)
    if options.profile_use is not None:
        from xcc.profile.use import apply_profile

        apply_profile(module, chosen, options.profile_use)


def _lay_out(module: Module) -> None:
    from xcc.passes.block_layout import layout_blocks

    for fn in module.functions:
        layout_blocks(fn)


def _profile_pipelined(fn) -> bool:
    """Whether a profile had ``pipeline-loads`` issue some of ``fn``'s loads iterations ahead."""
    return any(i.attrs.get("ahead") == "profile" for i in fn.instructions())


class _Unpipelined:
    """The module built again from its sources, prepared as profile use prepares it and optimised without the
    profile's software pipelining, on demand: a kernel whose pipelined loads made it spill is compiled from it too, and the
    build with fewer spill bytes is kept (the loads a profile issues ahead take registers the limit may not have;
    an explicit ``pipeline-loads{distance=N}``, such as the autotuner's, is left as asked)."""

    def __init__(self, rebuild: Callable[[], Module], options: CompileOptions, kernels: list[str] | None):
        self.rebuild, self.options, self.kernels, self.module = rebuild, options, kernels, None

    def fewer_spills(self, k, report: dict, name: str, machine: Machine, backend) -> tuple:
        if self.module is None:
            self.module = self.rebuild()
            _prepare(self.module, self.options, self.kernels)
            for fn in self.module.functions:
                index = getattr(fn, "profile_index", None)
                if index is not None:
                    index.pipelining = False
            optimise(self.module, self.options)
            _lay_out(self.module)
        functions = {f.name: f for f in self.module.functions}
        again: dict = {}
        other = compile_function(functions[name], machine, backend, self.module.variables, again, functions)
        return (other, again) if other.spill_bytes < k.spill_bytes else (k, report)


def specialise(kernels: list, options: CompileOptions) -> None:
    """Fold ``options.specialize`` and ``options.launch_shape`` into ``kernels`` (xcc.passes.specialize); a
    parameter named by ``specialize`` that none of them has is an error naming it."""
    if options.specialize is None and options.launch_shape is None:
        return
    from xcc.passes.specialize import fold_arguments

    values = dict(options.specialize or ())
    for fn in kernels:
        mine = {n: v for n, v in values.items() if any(p.name == n for p in fn.params)}
        fold_arguments(fn, mine, options.launch_shape)
    unknown = [n for n in values if not any(p.name == n for fn in kernels for p in fn.params)]
    if unknown:
        params = ", ".join(p.name for fn in kernels for p in fn.params) or "none"
        raise XccError(f"specialize: no kernel compiled has a parameter '{unknown[0]}' (parameters: {params})")


def kernel_names(sources: list[Source]) -> list[str]:
    """The entry names defined by the sources (parses, builds nothing)."""
    return [name for s in sources for name in _entry_names(parse(s.text, s.name))]


def _entry_names(tree) -> list[str]:
    """The kernels a parsed PTX module defines."""
    return [f.name for f in tree.functions if f.is_entry and f.body is not None]
