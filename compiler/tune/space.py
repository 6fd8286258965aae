"""The autotuner's search space: compiler knobs and how a choice of their values becomes :class:`CompileOptions`.

A knob is a name and its values, the first being the plain build's, so the configuration of first values is
the plain build itself (the same options, the same cache key, the same binary).  The knobs of
:func:`default_space`:

==========================  ===================================================================================
``pipeline``                the IR pipeline: the build's own (``default``), ``O2``, or the build's without
                            ``vectorize`` / ``jump-threading`` / ``ifconvert`` (pass-pipeline variants)
``pipeline-loads.distance`` iterations ahead a one-block loop issues its loads (0: none; software pipelining,
                            :mod:`xcc.passes.pipeline_loads`)
``unroll.max-trip``         full unrolling up to this trip count (``unroll{max-trip=N}``)
``unroll.factor``           partial / runtime unrolling factor (1: none)
``unroll.max-size``         instructions after unrolling, at most
``inline.threshold``        the inliner's cost threshold (LLVM InlineCost units)
``ifconvert.max-insts``     the longest branch arm turned into ``selp``
``max_registers``           the register limit, and so the occupancy aimed at (``--maxrregcount``)
``pre_schedule``            list scheduling before register allocation on / off
``post_schedule``           list scheduling after register allocation on / off
``specialize``              the launch's scalar arguments and shape folded in as constants (launch-time
                            specialisation; a tuned binary built so runs only for launches with those values)
``profile_use``             the build uses the profile given to the tuner (profile-guided optimisation,
                            docs/profiles.md; only with ``fn.autotune(profile=...)``)
==========================  ===================================================================================

A knob ``PASS.OPTION`` sets that option on every occurrence of the pass in the pipeline (none when the
pipeline has no such pass).  :meth:`SearchSpace.fingerprint` names the space in the tuning record's key.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass

from xcc.diagnostics import XccError
from xcc.driver import CompileOptions, pipeline
from xcc.passes.manager import option_fields, parse_pipeline, pass_class, pipeline_for_level

PIPELINE_VARIANTS = ("default", "O2", "no-vectorize", "no-jump-threading", "no-ifconvert")
BOOL_OPTIONS = ("pre_schedule", "post_schedule")


@dataclass(frozen=True)
class Knob:
    """One compiler knob: ``values[0]`` is the plain build's."""

    name: str
    values: tuple

    def __post_init__(self):
        if not self.values:
            raise XccError(f"search space: knob '{self.name}' has no values")
        if len(set(map(repr, self.values))) != len(self.values):
            raise XccError(f"search space: knob '{self.name}' lists a value twice: {list(self.values)}")


@dataclass(frozen=True)
class SearchSpace:
    knobs: tuple[Knob, ...]

    def __post_init__(self):
        names = [k.name for k in self.knobs]
        for name in names:
            _check_knob(name)
        if len(set(names)) != len(names):
            raise XccError(f"search space: a knob is named twice ({', '.join(names)})")

    @property
    def defaults(self) -> dict:
        return {k.name: k.values[0] for k in self.knobs}

    @property
    def size(self) -> int:
        return math.prod(len(k.values) for k in self.knobs)

    def all_configs(self):
        """Every configuration, the plain build's first."""
        names = [k.name for k in self.knobs]
        for values in itertools.product(*(k.values for k in self.knobs)):
            yield dict(zip(names, values))

    def fingerprint(self) -> str:
        """The space as canonical JSON: knob names and their values, in order."""
        return json.dumps([[k.name, list(k.values)] for k in self.knobs], separators=(",", ":"))

    def check(self, config: dict) -> None:
        for name, value in config.items():
            knob = next((k for k in self.knobs if k.name == name), None)
            if knob is None or value not in knob.values:
                raise XccError(f"configuration {config}: '{name}={value}' is not in the search space")


def _check_knob(name: str) -> None:
    """A knob name xcc knows: a CompileOptions choice or PASS.OPTION of a registered pass."""
    if name in ("pipeline", "max_registers", "specialize", "profile_use", *BOOL_OPTIONS):
        return
    pass_name, dot, option = name.partition(".")
    if not dot:
        raise XccError(f"search space: unknown knob '{name}' (knobs: pipeline, max_registers, specialize, "
                       f"{', '.join(BOOL_OPTIONS)}, or PASS.OPTION such as unroll.max-trip)")
    fields = [f.name for f in option_fields(pass_class(pass_name))]  # an unknown pass is an error naming it
    if option.replace("-", "_") not in fields:
        raise XccError(f"search space: pass '{pass_name}' has no option '{option}' "
                       f"(options: {', '.join(f.replace('_', '-') for f in fields) or 'none'})")


def default_space(base: CompileOptions, specialisable: bool = False, profile: bool = False) -> SearchSpace:
    """The knobs worth trying on a build with ``base`` options (see the module's table); ``specialisable``:
    the launch has scalar arguments to fold in; ``profile``: the tuner has a profile to use."""
    regs = tuple(r for r in (base.max_registers, 128, 96, 64, 40) if r <= base.max_registers)
    own = _variant("default", base)
    knobs = [Knob("specialize", (False, True))] if specialisable else []
    knobs += [Knob("profile_use", (False, True))] if profile and base.profile_use is None else []
    knobs += [  # the likeliest to pay first: the greedy search tries one value of each knob per round
        Knob("pipeline-loads.distance", (0, 1, 2, 4)),
        Knob("unroll.factor", (1, 4, 2)),
        Knob("max_registers", tuple(dict.fromkeys(regs))),
        Knob("unroll.max-trip", (32, 128, 64, 8)),
        Knob("pre_schedule", (base.pre_schedule, not base.pre_schedule)),
        Knob("post_schedule", (base.post_schedule, not base.post_schedule)),
        Knob("pipeline", tuple(v for v in PIPELINE_VARIANTS if v == "default" or _variant(v, base) != own)),
        Knob("ifconvert.max-insts", (4, 16, 8, 1)),
        Knob("inline.threshold", (1100, 4000, 300)),
        Knob("unroll.max-size", (256, 1024)),
    ]
    return SearchSpace(tuple(k for k in knobs if len(k.values) > 1 or k.name == "pipeline"))


def space_of(knobs: dict) -> SearchSpace:
    """A space from ``{knob: [values...]}`` (the plain build's value first), as ``fn.autotune(space=...)`` and
    ``xcc tune --knob NAME=V1,V2`` give it."""
    if not isinstance(knobs, dict) or not knobs:
        raise XccError("search space: expected a non-empty dict of knob -> list of values")
    return SearchSpace(tuple(Knob(name, tuple(values)) for name, values in knobs.items()))


def options_for(config: dict, base: CompileOptions, specialize: dict | None = None,
                shape: tuple | None = None, profile=None) -> CompileOptions:
    """The compile options of ``config`` on top of ``base``: the plain build's values give ``base`` itself.
    ``specialize`` / ``shape`` are the launch's scalar arguments by parameter name and its (grid, block),
    folded in when the ``specialize`` knob is on; ``profile`` is used when the ``profile_use`` knob is on."""
    changes: dict = {}
    if config.get("max_registers", base.max_registers) != base.max_registers:
        changes["max_registers"] = int(config["max_registers"])
    for name in BOOL_OPTIONS:
        if name in config and bool(config[name]) != getattr(base, name):
            changes[name] = bool(config[name])
    if config.get("specialize"):
        changes["specialize"] = dict(specialize or {})
        changes["launch_shape"] = shape
    if config.get("profile_use"):
        if profile is None:
            raise XccError("search space: the knob 'profile_use' needs a profile (fn.autotune(profile=...))")
        changes["profile_use"] = profile
    text = _pipeline_text(config, base)
    if text is not None:
        changes["passes"] = text
    return dataclasses.replace(base, **changes) if changes else base


def _pipeline_text(config: dict, base: CompileOptions) -> str | None:
    """The ``--passes`` string of ``config``'s pipeline knobs, or None when they are all the plain build's."""
    variant = config.get("pipeline", "default")
    options = {k: v for k, v in config.items() if "." in k}
    if variant == "default" and all(_is_default_option(k, v, base) for k, v in options.items()):
        return None
    items = parse_pipeline(",".join(_variant(variant, base)))
    for key, value in options.items():
        pass_name, _, option = key.partition(".")
        for name, opts in items:
            if name == pass_name:
                opts[option] = str(value).lower() if isinstance(value, bool) else str(value)
    return ",".join(name + ("{" + " ".join(f"{k}={v}" for k, v in opts.items()) + "}" if opts else "")
                    for name, opts in items)


def _variant(variant: str, base: CompileOptions) -> list[str]:
    own = pipeline(base)
    own = parse_pipeline(own) if isinstance(own, str) else parse_pipeline(",".join(own))
    own_text = [n + ("{" + " ".join(f"{k}={v}" for k, v in o.items()) + "}" if o else "") for n, o in own]
    if variant == "default":
        return own_text
    if variant in ("O1", "O2", "O3"):
        return pipeline_for_level(int(variant[1]))
    if variant.startswith("no-"):
        dropped = variant[3:]
        return [t for t, (n, _) in zip(own_text, own) if n != dropped]
    raise XccError(f"search space: unknown pipeline variant '{variant}' (known: default, O1, O2, O3, "
                   "no-PASS)")


def _is_default_option(key: str, value, base: CompileOptions) -> bool:
    """``PASS.OPTION=value`` changes nothing in ``base``'s pipeline: every occurrence of the pass already has
    that value (given, or its field's default), or the pipeline has no such pass."""
    pass_name, _, option = key.partition(".")
    field = option.replace("-", "_")
    default = next(f.default for f in option_fields(pass_class(pass_name)) if f.name == field)
    own = pipeline(base)
    own = parse_pipeline(own) if isinstance(own, str) else parse_pipeline(",".join(own))
    return all(str(opts.get(option, default)).lower() == str(value).lower() for name, opts in own if name == pass_name)
