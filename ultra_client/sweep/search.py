"""Which settings each trial tries: the grid, seeded random draws, or Optuna's TPE sampler.

A search is asked for one trial's values at a time and told the trial's metric afterwards, so a
Bayesian search learns from every trial. Each search is deterministic for its seed: a resumed sweep
asks again from the start and gets the same trials, and finished ones are told from their record.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from typing import Any

from ultra_client.errors import UltraError
from ultra_client.sweep.spec import Range, SweepSpec

RANDOM_ATTEMPTS = 100  # draws per wanted trial before a random search gives up finding unseen settings
RANDOM_MISSES = 10_000  # draws in a row that find only seen settings before a random search gives up


def canonical(values: dict[str, Any]) -> str:
    """One string per combination of values (for telling duplicates apart)."""
    return json.dumps(values, sort_keys=True, ensure_ascii=False, default=str)


class Search:
    """``ask()`` the next trial's ``{key: value}`` (None when done); ``tell(value)`` its metric (None: failed).

    Every search streams its trials: nothing is enumerated or drawn before it is asked for.
    """

    def ask(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def tell(self, value: float | None) -> None:  # noqa: B027 - only Bayesian search learns
        pass


class GridSearch(Search):
    """Every combination, one at a time; the first key varies slowest (put a key that needs an index rebuild
    first). The grid is iterated, never built: its size is ``spec.total``, computed from the list lengths."""

    def __init__(self, spec: SweepSpec) -> None:
        self.keys = spec.keys
        self.combinations = itertools.product(*[space.values for space in spec.spaces])

    def ask(self) -> dict[str, Any] | None:
        combination = next(self.combinations, None)
        return None if combination is None else dict(zip(self.keys, combination, strict=True))


class RandomSearch(Search):
    """``spec.trials`` distinct seeded draws, drawn as asked. When the space holds fewer combinations it
    stops early, with a note in ``spec.notes``: after ``RANDOM_ATTEMPTS`` draws per wanted trial in all,
    or ``RANDOM_MISSES`` in a row (so one ask stays short)."""

    def __init__(self, spec: SweepSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.seen: set[str] = set()
        self.wanted = spec.trials or 0
        self.draws_left = self.wanted * RANDOM_ATTEMPTS

    def ask(self) -> dict[str, Any] | None:
        misses = 0
        while len(self.seen) < self.wanted and self.draws_left > 0 and misses < RANDOM_MISSES:
            self.draws_left -= 1
            misses += 1
            draw = {space.key: _draw(self.rng, space.values) for space in self.spec.spaces}
            if canonical(draw) not in self.seen:
                self.seen.add(canonical(draw))
                return draw
        if len(self.seen) < self.wanted:
            self.spec.notes.append(
                f"--random {self.wanted}: the space holds only {len(self.seen)} distinct combinations; running those"
            )
            self.wanted = len(self.seen)  # the note once
        return None


def _draw(rng: random.Random, values: list[Any] | Range) -> Any:
    if isinstance(values, list):
        return values[rng.randrange(len(values))]
    if values.integer:
        if values.log:
            return min(int(values.high), int(math.exp(rng.uniform(math.log(values.low), math.log(values.high + 1)))))
        return rng.randint(int(values.low), int(values.high))
    if values.log:
        return math.exp(rng.uniform(math.log(values.low), math.log(values.high)))
    return rng.uniform(values.low, values.high)


class BayesSearch(Search):
    """Optuna's TPE sampler (seeded), asked and told one trial at a time."""

    def __init__(self, spec: SweepSpec) -> None:
        try:
            import optuna
        except ImportError:
            raise UltraError("--bayes needs Optuna: pip install -e '.[sweep]' (or pip install optuna)") from None

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        self.spec = spec
        total = spec.trials or 0
        sampler = optuna.samplers.TPESampler(seed=spec.seed, n_startup_trials=max(2, min(10, total // 3)))
        direction = "minimize" if spec.minimize else "maximize"
        self.study = optuna.create_study(direction=direction, sampler=sampler)
        self.distributions = {space.key: _distribution(optuna, space.values) for space in spec.spaces}
        self.asked = 0
        self.current: Any = None

    def ask(self) -> dict[str, Any] | None:
        """Unbounded but for a cap: the sweep stops asking after N distinct trials (repeats are told, not run)."""
        if self.asked >= (self.spec.trials or 0) * RANDOM_ATTEMPTS:
            return None
        self.asked += 1
        self.current = self.study.ask(self.distributions)
        values = {}
        for space in self.spec.spaces:
            raw = self.current.params[space.key]
            values[space.key] = space.values[raw] if isinstance(space.values, list) else raw
        return values

    def tell(self, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            self.study.tell(self.current, state=self.optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(self.current, value)


def _distribution(optuna: Any, values: list[Any] | Range) -> Any:
    """A list is categorical over its positions (so any YAML value can be a choice); a range is numeric."""
    if isinstance(values, list):
        return optuna.distributions.CategoricalDistribution(list(range(len(values))))
    if values.integer:
        return optuna.distributions.IntDistribution(int(values.low), int(values.high), log=values.log)
    return optuna.distributions.FloatDistribution(float(values.low), float(values.high), log=values.log)


def make_search(spec: SweepSpec) -> Search:
    """The search ``spec`` asks for (a note, e.g. fewer random trials than asked, goes into ``spec.notes``)."""
    if spec.method == "bayes":
        return BayesSearch(spec)
    if spec.method == "random":
        return RandomSearch(spec)
    return GridSearch(spec)
