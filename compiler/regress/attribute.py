"""Attribution: what made a kernel's figure worse than the baseline's.

Three questions, each answered by rebuilding and re-running the kernel (docs/regress.md, "Attribution"):

* **The pipeline and options.**  When the run's pass pipeline, -O level or register limit differs from the
  baseline's, the baseline's configuration is replayed and turned into the run's one edit at a time
  (a pass removed, a pass added, the -O level's backend settings, --maxrregcount), on the run's machine;
  every edit after which the figure changes is named, with the figure before and after it.
* **The machine description.**  When it differs from the baseline's, each changed key is reverted to the
  baseline's value on its own and the kernel re-run: a key whose reversion changes the figure is named.
* **The compiler itself.**  When the baseline's own configuration no longer gives the baseline's figure,
  the baseline's stage outputs are replayed through this compiler: the IR the baseline build had after IR
  stage k (kept in the baseline, ``stage_ir``) goes through this compiler's stages after k, and the kernel
  runs.  With H(k) that figure (H(-1): this compiler throughout), the stage named is the first k whose
  H(k-1) differs from H(k): this compiler's version of stage k, given the baseline's input, moves the
  figure.  When no IR stage does, the backend or the simulator does: the backend stages, fed the baseline's
  final IR, are fingerprinted and compared with the baseline's fingerprints (machine code between backend
  stages has no serialised form to replay), and the first that differs is named; when none differs, the
  simulator's model changed, not the code.  A baseline without ``stage_ir`` (or whose IR this compiler cannot
  read back) gets the first stage whose output differs from the baseline build's, and the cause says so.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from pathlib import Path

from xcc.diagnostics import XccError
from xcc.regress.runner import Unit, decode_stage_ir, measure, measure_ir, stage_record


def _toml(data: dict) -> str:
    """A machine description's data as TOML (tables of scalars and lists of numbers)."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for table, entries in data.items():
        if isinstance(entries, dict):
            lines += ["", f"[{table}]"] + [f"{k} = {value(v)}" for k, v in entries.items()]
    return "\n".join(lines) + "\n"


def flatten(data: dict) -> dict[str, object]:
    """``{"latency": {"alu": 4}}`` -> ``{"latency.alu": 4}``."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def _with(data: dict, key: str, value, present: bool) -> dict:
    new = json.loads(json.dumps(data))
    table, _, name = key.rpartition(".")
    target = new.setdefault(table, {}) if table else new
    if present:
        target[name] = value
    else:
        target.pop(name, None)
    return new


def _key_text(key: str) -> str:
    table, _, name = key.rpartition(".")
    return f"[{table}] {name}" if table else name


class _Machines:
    """Machine descriptions written to a temporary folder and loaded from there (each one a file, as
    ``--machine FILE`` takes it)."""

    def __init__(self, folder: Path):
        self.folder, self.n = folder, 0

    def load(self, toml_text: str):
        from xcc.backend.machine import load_machine

        self.n += 1
        path = self.folder / f"machine{self.n}.toml"
        path.write_text(toml_text)
        return load_machine(path)


def attribute(unit: Unit, result: dict, base: dict, machines: dict, metrics: list[str]) -> list[dict]:
    """The causes of ``metrics`` of ``result`` being worse than ``base``'s (a baseline entry; ``machines`` the
    baseline's machine descriptions by hash).  Each cause: metric, kind (pass, option, machine, stage,
    model), cause (text), before, after."""
    causes: list[dict] = []
    memo: dict = {}
    with tempfile.TemporaryDirectory(prefix="xcc-regress-") as tmp:
        ms = _Machines(Path(tmp))
        current = ms.load(_toml_of(unit.machine))
        base_m = machines.get(base.get("machine_hash", ""))
        baseline_machine = ms.load(base_m["toml"]) if base_m else current

        def fig(level, pipeline, maxrreg, machine) -> dict:
            key = (level, tuple(pipeline), maxrreg, machine.hash)
            if key not in memo:
                memo[key] = measure(unit, level, ",".join(pipeline), maxrreg, machine)[0]
            return memo[key]

        cur_cfg = (result["level"], list(result["pipeline"]), result["maxrregcount"])
        base_cfg = (base["level"], list(base.get("pipeline", [])), base.get("maxrregcount", 255))
        if cur_cfg != base_cfg:
            causes += _replay_options(base_cfg, cur_cfg, lambda c: fig(*c, current), metrics)
        if base_m and baseline_machine.hash != current.hash:
            causes += _revert_keys(baseline_machine, current, ms, lambda m: fig(*cur_cfg, m), metrics)
        replay = fig(*base_cfg, baseline_machine)
        changed = [m for m in metrics if replay.get(m) != base["figures"].get(m)]
        if changed:
            causes += _compiler_change(unit, base, base_cfg, baseline_machine, changed, replay)
    if not causes:
        causes = [{"metric": m, "kind": "unknown", "cause": "no single edit reproduces the change",
                   "before": base["figures"].get(m), "after": result["figures"].get(m)} for m in metrics]
    return causes


def _toml_of(spec: str) -> str:
    from xcc.regress.runner import machine_record

    return machine_record(spec)["toml"]


def pipeline_edits(old: list[str], new: list[str]) -> list[tuple[list[str], str]]:
    """The pipelines from ``old`` to ``new``, one pass removed or added at a time, each with what the edit
    did: [(pipeline after the edit, description)]."""
    steps = []
    done: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            done += old[i1:i2]
            continue
        for i in range(i1, i2) if tag in ("delete", "replace") else ():
            steps.append((done + old[i + 1:], f"pass '{old[i]}' removed (item {i + 1} of the baseline's pipeline)"))
        for j in range(j1, j2) if tag in ("insert", "replace") else ():
            done.append(new[j])
            steps.append((done + old[i2:], f"pass '{new[j]}' added (item {j + 1} of the run's pipeline)"))
    return steps


def _replay_options(base_cfg, cur_cfg, fig, metrics: list[str]) -> list[dict]:
    level, pipeline, maxrreg = base_cfg
    configs = [((level, p, maxrreg), what, "pass") for p, what in pipeline_edits(pipeline, cur_cfg[1])]
    if cur_cfg[0] != level:
        configs.append(((cur_cfg[0], cur_cfg[1], maxrreg), f"-O{cur_cfg[0]}'s backend settings (baseline -O{level})",
                        "option"))
    if cur_cfg[2] != maxrreg:
        configs.append((cur_cfg, f"--maxrregcount {cur_cfg[2]} (baseline {maxrreg})", "option"))
    causes = []
    prev = fig(base_cfg)
    for cfg, what, kind in configs:
        now = fig(cfg)
        causes += [{"metric": m, "kind": kind, "cause": what, "before": prev.get(m), "after": now.get(m)}
                   for m in metrics if now.get(m) != prev.get(m)]
        prev = now
    return causes


def _revert_keys(baseline_machine, current, ms: _Machines, fig, metrics: list[str]) -> list[dict]:
    old, new = flatten(baseline_machine.data), flatten(current.data)
    keys = sorted(k for k in set(old) | set(new) if (k in old, old.get(k)) != (k in new, new.get(k)))
    now = fig(current)
    causes = []
    for key in keys:
        if key == "name":
            continue
        try:
            reverted = ms.load(_toml(_with(current.data, key, old.get(key), key in old)))
        except XccError as e:
            causes.append({"metric": "-", "kind": "machine", "cause": f"machine key {_key_text(key)}: cannot revert "
                           f"alone ({e})", "before": None, "after": None})
            continue
        then = fig(reverted)
        causes += [{"metric": m, "kind": "machine", "cause": f"machine key {_key_text(key)} = {new.get(key)!r} "
                    f"(baseline {old.get(key)!r})", "before": then.get(m), "after": now.get(m)}
                   for m in metrics if then.get(m) != now.get(m)]
    return causes


def _compiler_change(unit: Unit, base: dict, base_cfg, machine, metrics: list[str], replay: dict) -> list[dict]:
    """The stage of this compiler (or the simulator) behind ``metrics`` of ``replay`` (the baseline's
    configuration built and run now) differing from ``base``'s (module docstring)."""
    def cause(ms: list[str], kind: str, text: str, before=None, after=None) -> list[dict]:
        return [{"metric": m, "kind": kind, "cause": text,
                 "before": base["figures"].get(m) if before is None else before.get(m),
                 "after": replay.get(m) if after is None else after.get(m)} for m in ms]

    recorded = base.get("stages") or []
    if not recorded:
        return cause(metrics, "stage", "the compiler or the simulator (the baseline's options give other figures "
                     "now; the baseline has no stage fingerprints to say which stage)")
    level, pipeline, maxrreg = base_cfg
    n_ir = len(pipeline) + 1  # the build, then each pass
    now, _ = stage_record(unit, level, ",".join(pipeline), maxrreg, machine)
    first = next((i for i, (a, b) in enumerate(zip(recorded, now)) if a != b), min(len(recorded), len(now)))
    docs = decode_stage_ir(base.get("stage_ir"))
    if docs is not None and len(docs) == n_ir and len(recorded) == len(now):
        try:
            return _replay_stages(unit, base, base_cfg, machine, metrics, replay, recorded, now, first, docs, cause)
        except XccError as e:  # the baseline's IR does not read back or build with this compiler
            why = f"its stage IR could not be replayed: {e.message}"
    else:
        why = "it has no stage IR to replay" if docs is None else "its stage IR does not match its stages"
    if first < min(len(recorded), len(now)):
        where = (_stage_text(first, now[first][0], len(now)) if first < n_ir
                 else f"backend stage '{now[first][0]}' (stage {first + 1} of {len(now)})")
        return cause(metrics, "stage", f"{where}: the first stage whose output differs from the baseline build's, "
                     f"with the baseline's options and machine (whether it moves the figure is not checked: {why})")
    if len(recorded) != len(now):
        return cause(metrics, "stage", f"the stage list changed ({len(recorded)} stages in the baseline, {len(now)} now)")
    return cause(metrics, "model", "the simulator's model: the compiled code is the baseline's at every stage")


def _stage_text(k: int, name: str, total: int) -> str:
    what = "the IR build" if k == 0 else f"IR pass '{name}'"
    return f"{what} (stage {k + 1} of {total})"


def _replay_stages(unit: Unit, base: dict, base_cfg, machine, metrics: list[str], replay: dict, recorded, now,
                   first: int, docs: list[bytes], cause) -> list[dict]:
    level, pipeline, maxrreg = base_cfg
    n_ir = len(pipeline) + 1
    causes: list[dict] = []
    pending = list(metrics)
    prev = replay  # H(k-1); H(k) = replay for every k before the first stage whose output differs
    for k in range(first, n_ir):
        h = measure_ir(unit, docs[k], level, ",".join(pipeline[k:]), maxrreg, machine)[0]
        moved = [m for m in pending if h.get(m) != prev.get(m)]
        if moved:
            causes += cause(moved, "stage", f"{_stage_text(k, recorded[k][0], len(now))}: this compiler's version "
                            "moves the figure (replaying the baseline build's stage outputs)",
                            before=h, after=prev)
            pending = [m for m in pending if m not in moved]
            if not pending:
                return causes
        prev = h
    # the backend stages' fingerprints, given the baseline's final IR: when the IR is the baseline's at every
    # stage, those of the build from the PTX; else those of the baseline's final IR compiled with no pass
    after_ir = now[n_ir:] if first >= n_ir else backend_fingerprints(unit, docs[-1], level, maxrreg, machine)
    backend = next((j for j, (a, b) in enumerate(zip(recorded[n_ir:], after_ir)) if a != b), None)
    if backend is not None:
        causes += cause(pending, "stage", f"backend stage '{recorded[n_ir + backend][0]}' (stage {n_ir + backend + 1} "
                        f"of {len(now)}): given the baseline's final IR, the first backend stage whose output differs "
                        "from the baseline build's (machine code is not replayed)", after=prev)
    elif first >= len(recorded):
        causes += cause(pending, "model", "the simulator's model: the compiled code is the baseline's at every stage",
                        after=prev)
    else:
        causes += cause(pending, "model", "the simulator's model: given the baseline's final IR, the compiled code "
                        "is the baseline's at every backend stage", after=prev)
    return causes


def backend_fingerprints(unit: Unit, ir: bytes, level: int, maxrreg: int, machine) -> list[list[str]]:
    """The fingerprints of each backend stage compiling the IR document ``ir`` (no pass) at ``level``."""
    import io

    from xcc.driver import CompileOptions, compile_ir
    from xcc.ir.serialize import load_module_ir
    from xcc.regress.runner import _portable, fingerprints

    options = CompileOptions(opt_level=level, max_registers=maxrreg, machine=machine.name, passes="")
    out = io.StringIO()
    compile_ir(load_module_ir(ir, f"the stage IR of {unit.id}"), options, [unit.kernel.entry], print_after="all",
               out=out, machine=machine)
    return fingerprints(_portable(out.getvalue(), unit))[1:]  # without 'build'
