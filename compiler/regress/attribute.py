"""Attribution: what made a kernel's figure worse than the baseline's.

Three questions, each answered by rebuilding and re-running the kernel (docs/regress.md, "Attribution"):

* **The pipeline and options.**  When the run's pass pipeline, -O level or register limit differs from the
  baseline's, the baseline's configuration is replayed and turned into the run's one edit at a time
  (a pass removed, a pass added, the -O level's backend settings, --maxrregcount), on the run's machine;
  every edit after which the figure changes is named, with the figure before and after it.
* **The machine description.**  When it differs from the baseline's, each changed key is reverted to the
  baseline's value on its own and the kernel re-run: a key whose reversion changes the figure is named.
* **The compiler itself.**  When the baseline's own configuration no longer gives the baseline's figure,
  the output of every stage (the IR after each pass, the machine code after each backend stage) is
  fingerprinted and compared with the fingerprints the baseline recorded: the first stage whose output
  differs is named; when none does, the simulator's model changed, not the code.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from pathlib import Path

from xcc.diagnostics import XccError
from xcc.regress.runner import Unit, measure, stage_fingerprints


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
    def cause(kind: str, text: str) -> list[dict]:
        return [{"metric": m, "kind": kind, "cause": text, "before": base["figures"].get(m), "after": replay.get(m)}
                for m in metrics]

    recorded = base.get("stages") or []
    if not recorded:
        return cause("stage", "the compiler or the simulator (the baseline's options give other figures now; "
                     "the baseline has no stage fingerprints to say which stage)")
    now = stage_fingerprints(unit, *base_cfg, machine)
    for i, (a, b) in enumerate(zip(recorded, now)):
        if a != b:
            kind = "IR pass" if i < len(base_cfg[1]) + 1 else "backend stage"
            return cause("stage", f"{kind} '{b[0]}' (stage {i + 1} of {len(now)}): its output differs from the "
                         "baseline build's, with the baseline's options and machine")
    if len(recorded) != len(now):
        return cause("stage", f"the stage list changed ({len(recorded)} stages in the baseline, {len(now)} now)")
    return cause("model", "the simulator's model: the compiled code is the baseline's at every stage")
