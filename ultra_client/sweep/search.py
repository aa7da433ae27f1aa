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


def canonical(values: dict[str, Any]) -> str:
    """One string per combination of values (for telling duplicates apart)."""
    return json.dumps(values, sort_keys=True, ensure_ascii=False, default=str)


class Search:
    """``ask()`` the next trial's ``{key: value}`` (None when done); ``tell(value)`` its metric (None: failed)."""

    def ask(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def tell(self, value: float | None) -> None:  # noqa: B027 - only Bayesian search learns
        pass


class ListSearch(Search):
    """A fixed list of trials: the grid, or random draws made up front."""

    def __init__(self, trials: list[dict[str, Any]]) -> None:
        self.trials = trials
        self.position = 0

    def ask(self) -> dict[str, Any] | None:
        if self.position >= len(self.trials):
            return None
        self.position += 1
        return self.trials[self.position - 1]


def grid_trials(spec: SweepSpec) -> list[dict[str, Any]]:
    """Every combination; the first key varies slowest (put a key that needs an index rebuild first)."""
    keys = spec.keys
    lists = [space.values for space in spec.spaces]
    return [dict(zip(keys, combination, strict=True)) for combination in itertools.product(*lists)]


def random_trials(spec: SweepSpec) -> tuple[list[dict[str, Any]], str | None]:
    """``spec.trials`` distinct draws (fewer, with a note, when the space holds fewer combinations)."""
    rng = random.Random(spec.seed)
    seen: set[str] = set()
    trials: list[dict[str, Any]] = []
    wanted = spec.trials or 0
    for _ in range(wanted * RANDOM_ATTEMPTS):
        if len(trials) == wanted:
            break
        draw = {space.key: _draw(rng, space.values) for space in spec.spaces}
        if canonical(draw) not in seen:
            seen.add(canonical(draw))
            trials.append(draw)
    note = None
    if len(trials) < wanted:
        note = f"--random {wanted}: the space holds only {len(trials)} distinct combinations; running those"
    return trials, note


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
    """The search ``spec`` asks for; a note (fewer random trials than asked) goes into ``spec.notes``."""
    if spec.method == "bayes":
        return BayesSearch(spec)
    if spec.method == "random":
        trials, note = random_trials(spec)
        if note:
            spec.notes.append(note)
        return ListSearch(trials)
    return ListSearch(grid_trials(spec))
