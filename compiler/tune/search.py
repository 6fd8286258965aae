"""Search strategies over a :class:`~xcc.tune.space.SearchSpace`, each candidate scored by a caller's
``evaluate(configs) -> [(cycles, problem)]`` (modelled cycles; ``inf`` with a problem for a rejected one).

* ``exhaustive``: every configuration (the space must fit the budget);
* ``greedy``: coordinate descent guided by the cycle model: from the best configuration so far, the
  alternative values of every knob, taken round-robin over the knobs (so a small budget still sees each
  knob), then the best of that batch becomes the new start; it stops when a batch improves nothing;
* ``evolutionary``: a seeded genetic search (tournament selection, uniform crossover, one- or two-knob
  mutation) from the best candidates so far;
* ``auto`` (the default): exhaustive when the space fits the budget, else greedy and then evolutionary with
  what the budget has left.

The plain build (every knob at its first value) is always the first candidate and counts against the
budget.  Candidates are proposed in batches (run in parallel when the evaluator fans out) and the batches do
not depend on the parallelism, so a search with a given ``seed`` makes the same candidates and picks the
same winner however it runs: the first of the candidates with the fewest modelled cycles.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable

from xcc.diagnostics import XccError
from xcc.tune.result import Candidate
from xcc.tune.space import SearchSpace

STRATEGIES = ("auto", "exhaustive", "greedy", "evolutionary")
Evaluate = Callable[[list[dict]], list[tuple[float, str | None]]]


class _Search:
    def __init__(self, space: SearchSpace, evaluate: Evaluate, budget: int, seed: int):
        self.space, self.evaluate, self.budget = space, evaluate, budget
        self.rng = random.Random(seed)
        self.candidates: list[Candidate] = []
        self.seen: set[str] = set()

    @property
    def left(self) -> int:
        return self.budget - len(self.candidates)

    def run(self, configs: list[dict]) -> list[Candidate]:
        """Evaluate the unseen ones of ``configs`` (at most what the budget has left), in order."""
        fresh = []
        for c in configs:
            if _ident(c) not in self.seen and len(fresh) < self.left:
                self.seen.add(_ident(c))
                fresh.append(c)
        if not fresh:
            return []
        scores = self.evaluate(fresh)
        out = [Candidate(c, float(cycles), problem) for c, (cycles, problem) in zip(fresh, scores)]
        self.candidates += out
        return out

    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: c.cycles)  # min keeps the first of equals

    def exhaustive(self) -> None:
        self.run(list(self.space.all_configs()))

    def greedy(self) -> None:
        current = self.best()
        while self.left > 0:
            batch = self.run(self._neighbours(current.config))
            if not batch:
                return
            top = min(batch, key=lambda c: c.cycles)
            if not top.cycles < current.cycles:
                return
            current = top

    def _neighbours(self, config: dict) -> list[dict]:
        """Every configuration one knob away from ``config``, round-robin over the knobs."""
        alternatives = [[(k.name, v) for v in k.values if v != config[k.name]] for k in self.space.knobs]
        out = []
        for i in range(max((len(a) for a in alternatives), default=0)):
            for alts in alternatives:
                if i < len(alts):
                    out.append({**config, alts[i][0]: alts[i][1]})
        return out

    def evolutionary(self, population: int = 6, batch: int = 8) -> None:
        stale = 0
        while self.left > 0 and stale < 20:
            parents = sorted(self.candidates, key=lambda c: c.cycles)[:population]
            children = [self._child(parents) for _ in range(batch)]
            stale = stale + 1 if not self.run(children) else 0

    def _child(self, parents: list[Candidate]) -> dict:
        a = self._tournament(parents)
        b = self._tournament(parents)
        child = {k: (a.config if self.rng.random() < 0.5 else b.config)[k] for k in a.config}
        for _ in range(self.rng.choice((1, 1, 2))):
            knob = self.rng.choice(self.space.knobs)
            child[knob.name] = self.rng.choice(knob.values)
        return child

    def _tournament(self, parents: list[Candidate]) -> Candidate:
        x, y = self.rng.choice(parents), self.rng.choice(parents)
        return x if (x.cycles, parents.index(x)) <= (y.cycles, parents.index(y)) else y


def _ident(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


def search(space: SearchSpace, evaluate: Evaluate, budget: int, strategy: str = "auto",
           seed: int = 0) -> tuple[list[Candidate], str]:
    """Run ``strategy`` with at most ``budget`` candidate builds: (the candidates in the order they were
    built, the plain build's first; the strategy that ran)."""
    if strategy not in STRATEGIES:
        raise XccError(f"unknown tuning strategy '{strategy}' (known: {', '.join(STRATEGIES)})")
    if not isinstance(budget, int) or budget < 1:
        raise XccError(f"the tuning budget must be a positive number of candidate builds, got {budget!r}")
    s = _Search(space, evaluate, budget, seed)
    base = s.run([space.defaults])[0]
    if math.isinf(base.cycles):
        raise XccError(f"the plain build cannot be tuned: {base.problem}")
    if strategy == "auto":
        strategy = "exhaustive" if space.size <= budget else "greedy+evolutionary"
    if strategy == "exhaustive":
        if space.size > budget:
            raise XccError(f"exhaustive search of {space.size} configurations exceeds the budget of {budget}")
        s.exhaustive()
    if "greedy" in strategy:
        s.greedy()
    if "evolutionary" in strategy:
        s.evolutionary()
    return s.candidates, strategy


def winner(candidates: list[Candidate]) -> Candidate:
    """The first of the candidates with the fewest modelled cycles."""
    return min(candidates, key=lambda c: c.cycles)
