"""The ``xcc`` command line.

    xcc compile [-arch=xg1] [-O0..-O3] [--maxrregcount=N] [--machine=FILE] [-v] [--stats-json FILE]
                [--print-after=PASS|all] -o out.xbin in.ptx...
    xcc compile -c [options] -o out.xo in.ptx...          (a relocatable object: IR, for xcc link)
    xcc link [-O0..-O3] [options] -o out.xbin in.xo|in.ptx...
    xcc check in.ptx...
    xcc disasm out.xbin
    xcc run in.ptx|in.xbin --kernel NAME --grid X[,Y,Z] --block X[,Y,Z] [--engine isa|ir]
            [--out results.npz] [--trace FILE [--format json|sqlite]] ARG...
    xcc report TRACE.json | STATS.json... | --run SOURCE --kernel NAME ... ARG...  -o report.html
    xcc regress CORPUS.toml [-O3] [--passes P] [--machine M] [--record|--baseline FILE] [--attribute]
                [--junit|--markdown|--html FILE] [--workers N|--scheduler ADDRESS]   (exit 0, 1, 2 or 125)
    xcc cache stats|list [--json] | clear | verify     (the JIT cache: XCC_CACHE_DIR)
    xcc profile merge -o OUT.json IN.json...           (profiles of launches: xcc run --profile-out FILE;
                                                        used by xcc compile --profile-use FILE / -fprofile-use=FILE)

Exit codes: 0 success; 1 an error in the input (bad PTX, a kernel fault), with
diagnostics, or for ``xcc cache verify`` bad entries found (and dropped); 2 a usage
error; 3 an internal error (a bug in xcc).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import click

from xcc import __version__
from xcc.diagnostics import LaunchInterrupted, XccError

EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def _normalise_argv(argv: list[str]) -> list[str]:
    """Accept nvcc/ptxas/clang spellings: -arch=xg1, -arch xg1, -O3, -maxrregcount=N, -ftime-report."""
    out = []
    for a in argv:
        m = re.fullmatch(r"-O([0-3])", a)
        if m:
            out += ["--opt-level", m.group(1)]
        elif a.startswith("-arch="):
            out += ["--arch", a[6:]]
        elif a == "-arch":
            out.append("--arch")
        elif a.startswith("-maxrregcount="):
            out.append("--maxrregcount=" + a.split("=", 1)[1])
        elif a == "-ftime-report":  # clang's spelling of --time-passes
            out.append("--time-passes")
        elif a.startswith("-fprofile-use="):  # clang's spelling of --profile-use
            out += ["--profile-use", a.split("=", 1)[1]]
        else:
            out.append(a)
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="xcc")
def cli() -> None:
    """xcc: compile PTX for the xg1 GPU, disassemble, and run kernels on its ISA interpreter."""


@cli.command()
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Output .xbin file.")
@click.option("--arch", default="xg1", show_default=True, help="Target architecture.")
@click.option("--opt-level", type=click.IntRange(0, 3), default=3, show_default=True, help="-O0 .. -O3.")
@click.option("--maxrregcount", type=int, default=255, show_default=True, help="Registers per thread at most.")
@click.option("--machine", default="xg1", show_default=True, help="Machine description (name or TOML file).")
@click.option("-v", "--verbose", is_flag=True, help="Report registers, shared memory and size per kernel.")
@click.option("--stats-json", type=click.Path(dir_okay=False, path_type=Path), help="Write per-kernel stats.")
@click.option("--passes", "passes", help="IR pass pipeline replacing the -O level's, e.g. "
              "'sccp,gvn,licm,unroll{max-trip=32},dce' (the -O level still sets the backend's options).")
@click.option("--list-passes", is_flag=True, help="List every pass with its options, and the backend stages.")
@click.option("--print-after", help="Print the IR or machine code after a pass or backend stage (or 'all').")
@click.option("--verify-ir", is_flag=True, help="Verify the IR after every pass and the machine code after every "
              "backend stage (debug mode).")
@click.option("--time-passes", is_flag=True, help="Print the time of each pass and backend stage (-ftime-report).")
@click.option("-c", "relocatable", is_flag=True, help="Write one .xo relocatable object holding the inputs' IR after "
              "the -O pipeline, externs unresolved allowed, for `xcc link` (as ptxas -c / nvcc -dc).")
@click.option("--profile-use", type=click.Path(dir_okay=False, path_type=Path),
              help="Profile-guided optimisation from a profile of these inputs (xcc run --profile-out; "
                   "-fprofile-use=FILE; docs/profiles.md).")
def compile(inputs, output, arch, opt_level, maxrregcount, machine, verbose, stats_json, passes, list_passes,
            print_after, verify_ir, time_passes, relocatable, profile_use):
    """Compile PTX files into one .xbin object file."""
    from xcc.driver import CompileOptions, KernelStats, Source, check_print_after, compile_module, read_source

    if list_passes:
        from xcc.backend.stages import BACKEND_STAGES
        from xcc.passes.manager import describe_passes

        click.echo("IR passes (--passes, --print-after):\n" + describe_passes())
        click.echo("backend stages (--print-after, --verify-ir, --time-passes), in order:\n  "
                   + ", ".join(BACKEND_STAGES))
        return
    if not inputs:
        raise click.UsageError("no input files")
    check_print_after(print_after)
    options = CompileOptions(arch=arch, opt_level=opt_level, max_registers=maxrregcount, machine=machine,
                             verify=verify_ir, passes=passes, profile_use=profile_use)
    sources = []
    for p in inputs:
        s = read_source(p)
        if not isinstance(s, Source):
            raise XccError(f"{p}: is already an .xbin object file")
        sources.append(s)
    if relocatable:  # -c: the IR in an .xo (docs/xo-format.md), linked later by `xcc link`
        from xcc.lto import compile_relocatable

        xo = compile_relocatable(sources, options, print_after=print_after, out=sys.stderr)
        _write_atomically(output or inputs[0].with_suffix(".xo"), xo.to_bytes())
        return
    stats: dict[str, KernelStats] = {}
    times: dict[str, float] | None = {} if time_passes else None
    obj = compile_module(sources, options, print_after=print_after, out=sys.stderr, stats=stats, pass_times=times)
    out = output or inputs[0].with_suffix(".xbin")
    _write_atomically(out, obj.to_bytes())
    if times is not None:
        _report_times(times)
    if maxrregcount < options.max_registers:  # raised to the floor (xcc.backend.spill.MIN_REGISTERS)
        click.echo(f"xcc warning : adjusting per thread register count of {maxrregcount} to lower bound of "
                   f"{options.max_registers}", err=True)
    if verbose:
        for name, k in stats.items():
            click.echo(f"xcc info    : Compiling entry function '{name}' for '{arch}'", err=True)
            click.echo(f"xcc info    : Function properties for {name}", err=True)
            click.echo(f"    {k.local_bytes} bytes stack frame, {k.spill_stores} bytes spill stores, "
                       f"{k.spill_loads} bytes spill loads", err=True)
            if k.pred_spills:
                click.echo(f"    {k.pred_spills} predicates spilled to registers", err=True)
            click.echo(f"xcc info    : Used {k.registers} registers, used {k.barriers} barriers, "
                       f"{k.shared_bytes} bytes smem, {k.instructions} instructions", err=True)
    if stats_json:
        data = {n: {"registers": k.registers, "instructions": k.instructions, "shared_bytes": k.shared_bytes,
                    "local_bytes": k.local_bytes, "spill_bytes": k.spill_bytes, "compile_ms": k.compile_ms} for n, k in stats.items()}
        _write_atomically(stats_json, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


@cli.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Output .xbin file.")
@click.option("--arch", default="xg1", show_default=True, help="Target architecture.")
@click.option("--opt-level", type=click.IntRange(0, 3), default=3, show_default=True, help="-O0 .. -O3.")
@click.option("--maxrregcount", type=int, default=255, show_default=True, help="Registers per thread at most.")
@click.option("--machine", default="xg1", show_default=True, help="Machine description (name or TOML file).")
@click.option("--passes", "passes", help="IR pass pipeline replacing the -O level's (after the link-time passes).")
@click.option("--print-after", help="Print the IR or machine code after a pass or backend stage (or 'all').")
@click.option("--verify-ir", is_flag=True, help="Verify the IR after every pass (debug mode).")
@click.option("-v", "--verbose", is_flag=True, help="Report registers, shared memory and size per kernel.")
def link(inputs, output, arch, opt_level, maxrregcount, machine, passes, print_after, verify_ir, verbose):
    """Link .xo objects (xcc compile -c) and PTX files into one .xbin, optimising across them (LTO)."""
    from xcc.driver import CompileOptions, KernelStats
    from xcc.lto import link as link_objects

    options = CompileOptions(arch=arch, opt_level=opt_level, max_registers=maxrregcount, machine=machine,
                             verify=verify_ir, passes=passes)
    stats: dict[str, KernelStats] = {}
    obj = link_objects(list(inputs), options, print_after=print_after, out=sys.stderr, stats=stats)
    _write_atomically(output or inputs[0].with_suffix(".xbin"), obj.to_bytes())
    if verbose:
        for name, k in stats.items():
            click.echo(f"xcc info    : Linked entry function '{name}' for '{arch}': used {k.registers} registers, "
                       f"{k.local_bytes} bytes stack frame, {k.shared_bytes} bytes smem, {k.instructions} "
                       "instructions", err=True)


def _report_times(times: dict[str, float]) -> None:
    """The ``--time-passes`` report: seconds per pass and stage, as LLVM's -time-passes prints them."""
    total = sum(times.values()) or 1e-12
    click.echo("===" + "-" * 60 + "===\n                      ... Pass execution timing report ...\n"
               "===" + "-" * 60 + "===", err=True)
    click.echo(f"  Total Execution Time: {total:.4f} seconds\n\n   ---Wall Time---  --- Name ---", err=True)
    for name, t in sorted(times.items(), key=lambda kv: (-kv[1], kv[0])):
        click.echo(f"   {t:.4f} ({100 * t / total:5.1f}%)  {name}", err=True)
    click.echo(f"   {total:.4f} (100.0%)  Total", err=True)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and move it into place: never a half-written file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # not tempfile: its imports slow every cold start
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise XccError(f"cannot write '{path}': {e.strerror}") from None


@cli.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-v", "--verbose", is_flag=True, help="Say what each valid file holds.")
@click.option("--syntax-only", is_flag=True, help="Parse and check the PTX only (no IR, no backend: faster, "
              "but 'ok' no longer means that `xcc compile` will succeed).")
@click.option("--opt-level", type=click.IntRange(0, 3), default=3, show_default=True, help="-O0 .. -O3, as compile's.")
@click.option("--maxrregcount", type=int, default=255, show_default=True, help="Registers per thread at most.")
@click.option("--machine", default="xg1", show_default=True, help="Machine description (name or TOML file).")
def check(inputs, verbose, syntax_only, opt_level, maxrregcount, machine):
    """Check that each PTX file will compile: every error `xcc compile` would give, located (exit 0 if none, else 1).

    Each file is compiled kernel by kernel with compile's options, nothing written (xcc.check): the parser's and
    checker's errors, the instructions and forms not supported yet, the backend's refusals.  An .extern function
    no file defines is left for the link (as `xcc compile -c` does)."""
    from xcc.frontend.checker import blackwell_refusals
    from xcc.frontend.parser import parse
    from xcc.sources import Source, read_source

    if not syntax_only:  # (imported only here: --syntax-only loads neither the IR nor code generation)
        from xcc.check import check_sources
        from xcc.driver import CompileOptions

        options = CompileOptions(opt_level=opt_level, max_registers=maxrregcount, machine=machine)
    failed = 0
    for p in inputs:
        deferred: list[str] = []
        try:
            s = read_source(p)
            if not isinstance(s, Source):
                raise XccError(f"{p}: is an .xbin object file, not PTX")
            if syntax_only:
                module = parse(s.text, s.name)
                refused = blackwell_refusals(module)  # (lowering refuses them with the same message)
                for e in refused:
                    click.echo(str(e), err=True)
                if refused:
                    failed += 1
                    continue
            else:
                res = check_sources([s], options)
                module, deferred = res.trees[0], res.deferred
                for e in res.errors:
                    click.echo(str(e), err=True)
                if res.errors:
                    failed += 1
                    continue
        except XccError as e:
            click.echo(str(e), err=True)
            failed += 1
            continue
        if verbose:
            kernels = sum(f.is_entry and f.body is not None for f in module.functions)
            funcs = sum(not f.is_entry and f.body is not None for f in module.functions)
            left = f" ({len(deferred)} left for the link: {', '.join(deferred)})" if deferred else ""
            click.echo(f"{p}: ok: PTX ISA {module.version}, {', '.join(module.target)}, {kernels} kernel(s){left}, "
                       f"{funcs} device function(s), {len(module.variables)} module variable(s)")
    if failed:
        raise click.exceptions.Exit(EXIT_INPUT)


@cli.command()
@click.argument("xbin", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def disasm(xbin):
    """Disassemble an .xbin object file: byte addresses (branch targets too), control codes, instructions,
    PTX lines, and for a -lineinfo/-G build the CUDA source lines above the instructions they produced."""
    from xcc.backend.codegen import disassemble_kernel
    from xcc.backend.objfile import ObjectFile

    obj = ObjectFile.from_bytes(xbin.read_bytes(), str(xbin))
    for name in sorted(obj.kernels):
        k = obj.kernels[name]
        click.echo(f"// kernel {name}: {k.registers} registers, {k.shared_bytes} bytes smem, "
                   f"{k.instruction_count} instructions, params "
                   + ", ".join(f".{p.type} {p.name}@{p.offset}" for p in k.params))
        click.echo(f".text.{name}:")
        click.echo(disassemble_kernel(k, obj.source_name or None))
        click.echo("")


def _dim(text: str) -> tuple[int, int, int]:
    try:
        parts = [int(x) for x in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"expected X[,Y,Z], got '{text}'") from None
    if not 1 <= len(parts) <= 3 or min(parts) < 1:
        raise click.BadParameter(f"expected 1-3 positive integers, got '{text}'")
    return tuple((parts + [1, 1])[:3])


def parse_run_arg(text: str):
    """``TYPE:VALUE`` scalar, ``FILE.npy`` buffer or ``zeros:DTYPE[N]`` (:mod:`xcc.runtime.run_args`, the one
    parser of the syntax, shared with ``xcc regress``); returns ('scalar', v) or ('buffer', array)."""
    from xcc.runtime.run_args import RunArgSyntaxError
    from xcc.runtime.run_args import parse_run_arg as parse

    try:
        return parse(text)
    except RunArgSyntaxError as e:
        raise click.BadParameter(str(e)) from None


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--kernel", "kernel_name", required=True, help="Entry name as written in the PTX.")
@click.option("--grid", required=True, help="X[,Y,Z]")
@click.option("--block", required=True, help="X[,Y,Z]")
@click.option("--shared-mem", type=int, default=0, help="Dynamic shared memory bytes.")
@click.option("--opt-level", type=click.IntRange(0, 3), default=3)
@click.option("--engine", type=click.Choice(["isa", "ir"]), default="isa", show_default=True,
              help="isa: compiled code on the ISA interpreter; ir: the IR interpreter (PTX semantics).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Save every buffer (.npz).")
@click.option("--machine", default="xg1", show_default=True, help="Machine description (name or TOML file).")
@click.option("--stats", "show_stats", is_flag=True,
              help="Print the launch statistics (Nsight Compute's sections, from the cycle model).")
@click.option("--stats-json", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the launch statistics (Nsight-named metrics) as JSON, with the advisor's findings "
                   "(measured) when the launch is timed.")
@click.option("--advise", "advise_estimates", is_flag=True,
              help="With --stats: the Advisor section's estimates measured (a replay per finding; docs/advisor.md).")
@click.option("--timing/--no-timing", default=True, show_default=True,
              help="--no-timing: functional run only (no cycle model: faster; no cycles, no metrics).")
@click.option("--hotspots", type=click.IntRange(1), default=None, metavar="N",
              help="Print the N PTX lines the cycle model attributes the most warp-cycles to (engine isa).")
@click.option("--max-steps", type=click.IntRange(0), default=None, metavar="N",
              help="Watchdog: stop the kernel after N scheduler steps with a report of where its warps are "
                   "(default: XCC_MAX_STEPS, else 1000000; 0: no limit).")
@click.option("--profile-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Record the launch's profile into FILE (JSON, docs/profiles.md).")
@click.option("--profile-use", type=click.Path(dir_okay=False, path_type=Path),
              help="Compile with profile-guided optimisation from FILE.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a timeline of the run in modelled time to FILE (Chrome trace-event JSON; a .sqlite path: "
                   "Nsight Systems' export schema; docs/trace.md).")
@click.option("--format", "trace_format", type=click.Choice(["json", "sqlite"]), default=None,
              help="The --trace file's format (default: from its extension).")
@click.argument("args", nargs=-1)
def run(source, kernel_name, grid, block, shared_mem, opt_level, engine, out, machine, show_stats, stats_json,
        advise_estimates, timing, hotspots, max_steps, profile_out, profile_use, trace_path, trace_format, args):
    """Run one kernel on the ISA interpreter (or, with --engine ir, on the IR interpreter)."""
    import numpy as np

    from xcc import runtime as rt

    grid_d, block_d = _dim(grid), _dim(block)
    if hotspots and (engine != "isa" or not timing):
        raise click.BadParameter("--hotspots needs the cycle model: --engine isa, without --no-timing")
    parsed = [parse_run_arg(a) for a in args]
    device = rt.Device(machine=machine)
    if trace_format and not trace_path:
        raise click.BadParameter("--format is the format of the --trace file: give --trace FILE")
    if trace_path:  # written when the command ends (xcc.runtime.timeline)
        click.get_current_context().with_resource(rt.trace(trace_path, trace_format, device.machine))
    if profile_out and engine != "isa":
        raise click.BadParameter("--profile-out records the ISA engine's launch: --engine isa")
    mod = rt.load_module(source, opt_level=opt_level, engine=engine, device=device, profile_use=profile_use)
    fn = mod.get_function(kernel_name)
    launch_args, buffers = [], {}
    for i, (kind, v) in enumerate(parsed):
        if kind == "buffer":
            d = rt.to_device(v, device)
            buffers[i] = (args[i], d)
            launch_args.append(d)
        else:
            launch_args.append(v)
    stats = (fn.launch(grid_d, block_d, launch_args, shared_mem, timing=timing, max_steps=max_steps, profile=True)
             if profile_out else fn.launch(grid_d, block_d, launch_args, shared_mem, timing=timing,
                                            max_steps=max_steps))
    if profile_out:
        _write_atomically(profile_out, stats.profile.to_json().encode())
    results = {}
    for i, (name, d) in buffers.items():
        arr = d.copy_to_host()
        results[f"arg{i}"] = arr
        if name.endswith(".npy"):
            np.save(name, arr, allow_pickle=False)
    if out:
        tmp = out.with_name(f".{out.name}.tmp.npz")
        np.savez(tmp, **results)
        os.replace(tmp, out)
    for i, arr in results.items():
        click.echo(f"{i}: {np.array2string(arr, threshold=16, edgeitems=4)}")
    if show_stats or not results:
        click.echo(f"thread_instructions={stats.thread_instructions} warp_instructions={stats.warp_instructions} "
                   f"cycles={stats.cycles}")
        if show_stats:
            from xcc.sim.perf.report import format_report

            click.echo(format_report(stats, advise_estimates))
    if stats_json:
        data = {"kernel": stats.kernel, "grid": list(stats.grid), "block": list(stats.block),
                "machine": device.machine.name, "cycles": stats.cycles,
                "thread_instructions": stats.thread_instructions, "warp_instructions": stats.warp_instructions,
                "instructions_executed": stats.instructions_executed,
                "metrics": {k: v for k, v in stats.metrics.items() if not isinstance(v, list)}}
        if getattr(stats, "timed", None) is not None:  # the advisor's findings, as xcc advise --json's
            from xcc.sim.perf.advisor import findings_json

            data["findings"] = findings_json(stats.advise())
        _write_atomically(stats_json, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
    if hotspots:
        from xcc.sim.perf.hotspots import format_hotspots
        from xcc.sim.perf.hotspots import hotspots as rank

        click.echo(format_hotspots(rank(stats, fn.kernel, hotspots), source.read_text().splitlines()))


_RUN_OUTPUTS = ("out", "show_stats", "stats_json", "advise_estimates", "hotspots", "profile_out")  # what xcc advise does not write


def _advise(as_json, source, kernel_name, grid, block, shared_mem, opt_level, engine, machine, timing, max_steps,
            profile_use, args, **_):
    """Run one kernel as `xcc run` does and print the advisor's findings (docs/advisor.md), most promising first:
    Nsight Compute's rule, what it found, the speedup measured by re-running the cycle model with the cause
    idealised, and the PTX and source lines responsible."""
    from xcc import runtime as rt
    from xcc.sim.perf.advisor import findings_json, format_findings

    if engine != "isa" or not timing:
        raise click.BadParameter("the advisor needs the cycle model: --engine isa, without --no-timing")
    parsed = [parse_run_arg(a) for a in args]
    device = rt.Device(machine=machine)
    fn = rt.load_module(source, opt_level=opt_level, device=device, profile_use=profile_use).get_function(kernel_name)
    launch_args = [rt.to_device(v, device) if kind == "buffer" else v for kind, v in parsed]
    stats = fn.launch(_dim(grid), _dim(block), launch_args, shared_mem, max_steps=max_steps)
    findings = stats.advise()
    if as_json:
        click.echo(json.dumps({"kernel": stats.kernel, "grid": list(stats.grid), "block": list(stats.block),
                               "machine": device.machine.name, "cycles": stats.cycles,
                               "findings": findings_json(findings)}, indent=2, sort_keys=True))
    else:
        click.echo(f"{stats.kernel} ({', '.join(map(str, stats.grid))})x({', '.join(map(str, stats.block))}): "
                   f"{stats.cycles:,} cycles on {device.machine.name}")
        click.echo(format_findings(findings))


cli.add_command(click.Command(
    "advise", callback=_advise, help=_advise.__doc__, context_settings={"ignore_unknown_options": True},
    params=[*(p for p in run.params if p.name not in _RUN_OUTPUTS),
            click.Option(["--json", "as_json"], is_flag=True, help="Print the findings as JSON.")]))


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The HTML page to write.")
@click.option("--run", "run_launch", is_flag=True,
              help="The arguments are xcc run's (SOURCE --kernel ... ARG...): run that launch with a timeline and "
                   "report it, with the advisor's findings.")
@click.option("--title", default=None, help="The page's title (default: the inputs).")
@click.argument("inputs", nargs=-1)
def report(output, run_launch, title, inputs):
    """One static HTML page of plots (timeline, stall breakdown, occupancy, the advisor's findings) from a trace
    (rt.trace, xcc run --trace, XCC_TRACE: the JSON), from xcc run --stats-json files, or with --run from a
    launch run now (docs/report.md)."""
    from xcc.report import load
    from xcc.report_html import render

    if run_launch:
        rep = _report_of_run(list(inputs), title)
    else:
        if not inputs:
            raise click.UsageError("give a trace (.json), --stats-json files, or --run and xcc run's arguments")
        for p in inputs:
            if not Path(p).is_file():
                raise click.BadParameter(f"'{p}' is not a file (a trace or a --stats-json file)")
        rep = load([Path(p) for p in inputs], title)
    _write_atomically(output, render(rep).encode())
    found = sum(len(k.findings) for k in rep.kernels)
    click.echo(f"xcc report: wrote {output}: {len(rep.kernels)} kernel launch(es), {len(rep.copies)} copies, "
               f"{found} finding(s)", err=True)


def _report_of_run(args: list[str], title: str | None):
    """Run ``xcc run ARGS`` with a timeline that keeps each launch's statistics; its report, with the advisor's
    findings on each launch where this xcc has the advisor."""
    import tempfile

    from xcc import runtime as rt
    from xcc.report import findings_of, from_trace
    from xcc.runtime import timeline_json

    if not args:
        raise click.UsageError("--run needs xcc run's arguments: SOURCE --kernel NAME --grid X --block X ARG...")
    ctx = run.make_context("xcc report --run", args)
    if ctx.params.get("trace_path"):
        raise click.BadParameter("--run records the launch's timeline itself: give xcc run's --trace to xcc run, "
                                 "then xcc report the trace")
    with tempfile.TemporaryDirectory() as tmp, ctx:
        with rt.trace(Path(tmp) / "trace.json", machine=ctx.params.get("machine") or "xg1") as tl:
            tl.keep_stats = True
            run.invoke(ctx)
    found = {op.corr: findings_of(op.info["stats"]) for op in tl.ops if "stats" in op.info}
    doc = json.loads(timeline_json.dumps(tl))
    advisor = any(v is not None for v in found.values())
    rep = from_trace(doc, title or "xcc run " + " ".join(args), found if advisor else None)
    rep.origin = "run"
    return rep


@cli.group()
def cache() -> None:
    """The JIT cache (XCC_CACHE_DIR, else ~/.cache/xcc): statistics, entries, clearing, verification.
    Exit status 1 when the cache cannot be read, or when verify found bad entries."""


def _open_cache(required: bool = True):
    """The JIT cache, its warnings reported as xcc's; an unusable one ends the command (status 1) when
    ``required``."""
    import warnings

    from xcc.cache import JitCache

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = JitCache()
    for w in caught:
        click.echo(f"xcc: warning: {w.message}", err=True)
    if required and c.problem is not None:
        raise click.exceptions.Exit(EXIT_INPUT)
    return c


@cache.command("stats")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def cache_stats(as_json):
    """Entries, bytes on disk, and the hits and misses of every process that used the cache."""
    with _open_cache(required=False) as c:
        st = c.stats()
    if as_json:
        click.echo(json.dumps(st, sort_keys=True))
    else:
        for name in ("directory", "enabled", "problem", "entries", "bytes", "hits", "misses"):
            if st[name] is not None:
                click.echo(f"{name + ':':11}{str(st[name]).lower() if name == 'enabled' else st[name]}")
    if st["problem"] is not None:
        raise click.exceptions.Exit(EXIT_INPUT)


@cache.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line: key, kind, problem, metadata.")
def cache_list(as_json):
    """Every entry: key, kind, kernel, size, age, machine and options (a damaged one with its problem)."""
    import time

    with _open_cache() as c:
        entries = c.entries()
    now = time.time()
    for e in entries:
        if as_json:
            click.echo(json.dumps({"key": e.key, "kind": e.kind, "problem": e.problem, "meta": e.meta},
                                  sort_keys=True))
        elif e.problem is not None:
            click.echo(f"{e.key[:16]}  {e.kind or '?':7} damaged: {e.problem}")
        else:
            m = e.meta
            options = " ".join(f"{k}={v}" for k, v in sorted((m.get("options") or {}).items()))
            click.echo(f"{e.key[:16]}  {e.kind:7} {m.get('kernel') or '(linked module)':24} {m['size']:>8} B  "
                       f"{_age(now - m['created']):>5}  {m.get('machine', '?')}  {options}")
    if not as_json:
        click.echo(f"{len(entries)} entries")


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"


@cache.command("clear")
def cache_clear():
    """Remove every entry (the hit and miss counters stay)."""
    with _open_cache() as c:
        click.echo(f"removed {c.clear()} entries from {c.directory}")


@cache.command("verify")
def cache_verify():
    """Check every entry (object format and checksum, metadata, the key, kernel and machine it names) and drop
    the bad ones, naming each; exit status 1 when any was dropped."""
    with _open_cache() as c:
        checked, dropped = c.verify()
    for key, why in dropped:
        click.echo(f"dropped {key[:16]}: {why}")
    click.echo(f"{checked} entries checked, {checked - len(dropped)} good, {len(dropped)} dropped")
    if dropped:
        raise click.exceptions.Exit(EXIT_INPUT)


@cli.command(context_settings={"max_content_width": 110})
@click.argument("corpus", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--opt-level", type=click.IntRange(0, 3), default=None,
              help="-O0 .. -O3 for every kernel (default: each kernel's opt_levels).")
@click.option("--passes", help="IR pass pipeline replacing the -O level's, for every kernel.")
@click.option("--machine", help="Machine description (name or TOML file) for every kernel.")
@click.option("--maxrregcount", type=int, default=255, show_default=True, help="Registers per thread at most.")
@click.option("--record", type=click.Path(dir_okay=False, path_type=Path), help="Write a baseline (JSON).")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Compare with a baseline.")
@click.option("--threshold", default="0", show_default=True,
              help="A figure worse by more than this fraction (0.05 or 5%) is a regression; 0: any change.")
@click.option("--repeats", type=click.IntRange(1), default=5, show_default=True, help="Compile-time samples.")
@click.option("--compile-time-threshold", default="10%", show_default=True,
              help="Median compile time rise (with Mann-Whitney p < 0.05) that counts as slower.")
@click.option("--gate-compile-time", is_flag=True, help="A slower compile time is a regression too.")
@click.option("--attribute", "attribute", is_flag=True, help="Name the pass, option or machine key behind "
              "each regression.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help="Write JUnit XML.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown summary.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path), help="Write an HTML report with plots.")
@click.option("--history", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Older baselines for the HTML report's history plot (oldest first; repeatable).")
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True,
              help="N > 1: run kernels in parallel on a Dask LocalCluster of N processes.")
@click.option("--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster (tcp://host:8786).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal).")
@click.option("--label", default="", help="A label stored in the recorded baseline.")
def regress(corpus, opt_level, passes, machine, maxrregcount, record, baseline, threshold, repeats,
            compile_time_threshold, gate_compile_time, attribute, junit, markdown, html, history, workers,
            scheduler, progress, label):
    """Compile, run and check a corpus of kernels; record a baseline or compare with one (exit 0 no regression,
    1 a regression or output failure, 2 a usage error, 125 the corpus cannot be tested: git bisect run)."""
    from xcc.regress.baseline import parse_threshold
    from xcc.regress.command import Request, execute
    from xcc.regress.runner import RunOptions

    try:
        limits = parse_threshold(threshold), parse_threshold(compile_time_threshold)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    req = Request(Path(corpus), RunOptions(opt_level, passes, machine, maxrregcount, repeats), record, baseline,
                  limits[0], limits[1], gate_compile_time, attribute, junit, markdown, html, tuple(history), workers,
                  scheduler, progress, label)
    raise click.exceptions.Exit(execute(req)[0])


@cli.command(context_settings={"ignore_unknown_options": True, "max_content_width": 110})
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--kernel", "kernel_name", required=True, help="Entry name as written in the PTX.")
@click.option("--grid", required=True, help="X[,Y,Z]")
@click.option("--block", required=True, help="X[,Y,Z]")
@click.option("--shared-mem", type=click.IntRange(0), default=0, help="Dynamic shared memory bytes.")
@click.option("--budget", type=click.IntRange(1), default=32, show_default=True, help="Candidate builds at most.")
@click.option("--strategy", type=click.Choice(["auto", "exhaustive", "greedy", "evolutionary"]), default="auto",
              show_default=True, help="auto: exhaustive when the space fits the budget, else greedy + evolutionary.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the evolutionary search.")
@click.option("--knob", "knobs", multiple=True, metavar="NAME=V1,V2",
              help="Search this knob over these values (the plain build's first; repeatable; default: every knob).")
@click.option("--opt-level", type=click.IntRange(0, 3), default=3, show_default=True)
@click.option("--machine", default="xg1", show_default=True, help="Machine description (name or TOML file).")
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True,
              help="N > 1: build and run candidates on a Dask LocalCluster of N processes.")
@click.option("--scheduler", metavar="ADDRESS", help="Run candidates on an existing Dask cluster.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal).")
@click.option("--max-steps", type=click.IntRange(0), default=None, metavar="N", help="Watchdog limit per launch.")
@click.option("--retune", is_flag=True, help="Search again even when the JIT cache has a record.")
@click.option("--profile", metavar="FILE|record", help="Add profile use as a knob: a saved profile (xcc run "
              "--profile-out), or 'record' to profile this launch first.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the result.")
@click.argument("args", nargs=-1)
def tune(source, kernel_name, grid, block, shared_mem, budget, strategy, seed, knobs, opt_level, machine, workers,
         scheduler, progress, max_steps, retune, profile, json_out, args):
    """Autotune a kernel's compiler knobs for one launch on the cycle model (arguments as for xcc run); later
    launches of that shape with rt.load_module(..., autotuned=True) run the tuned binary."""
    from xcc.tune.command import TuneRequest, execute

    req = TuneRequest(source, kernel_name, _dim(grid), _dim(block), shared_mem, tuple(parse_run_arg(a) for a in args),
                      budget, strategy, seed, opt_level, machine, tuple(knobs), workers, scheduler, progress,
                      max_steps, retune, json_out, True if profile == "record" else profile)
    raise click.exceptions.Exit(execute(req, click.echo))


@cli.group()
def profile() -> None:
    """Profiles of launches (docs/profiles.md): record with xcc run --profile-out, use with --profile-use."""


@profile.command("merge")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The merged profile.")
def profile_merge(inputs, output):
    """Merge profiles of launches of one module into one (counts add up)."""
    from xcc.profile import load_profile, merge_profiles

    merged = merge_profiles([load_profile(p) for p in inputs])
    _write_atomically(output, merged.to_json().encode())
    k = merged.kernels
    click.echo(f"{output}: {len(inputs)} profiles, kernels {', '.join(sorted(k))}, "
               f"{sum(v['launches'] for v in k.values())} launches")


def main(argv: list[str] | None = None) -> int:
    argv = _normalise_argv(list(sys.argv[1:] if argv is None else argv))
    try:
        rc = cli.main(args=argv, prog_name="xcc", standalone_mode=False)  # an Exit(n) comes back as n
        return rc if isinstance(rc, int) else 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_INPUT
    except LaunchInterrupted as e:  # Ctrl-C during a launch: where the kernel was, then the shell's code
        click.echo(str(e), err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as e:
        e.show()
        return EXIT_USAGE
    except XccError as e:
        click.echo(str(e), err=True)
        return EXIT_INPUT
    except Exception:  # a bug in xcc: say so, with the traceback for the report
        click.echo("xcc: internal error (this is a bug in xcc; please report it with the input):", err=True)
        import traceback

        click.echo(traceback.format_exc(), err=True)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
