"""Paired comparison of runs, item by item: items are matched on their ids (never on positions).

For every pair of runs (each later run B against each earlier run A) and every metric both have, over the ids
both have a value for: the mean of each, the mean difference B - A with its percentile-bootstrap interval, the
two-sided paired randomisation (sign-flip) p-value (``ultra_trec.significance.paired_tests``: exact when
2^n <= resamples), Holm's adjustment across the pair's metrics, and the items where B wins, ties or loses.
B wins an item where it is better: higher, or lower for a metric its result file declares lower-is-better
(``higher_is_better``, from the tool's registry: toxicity, bias); the row says which (``higher_is_better``).

A judge metric whose both runs recorded judge samples for every compared id (``sample_values``, a judge run with
``judge_llm.samples: k``) takes the judge-noise-aware test instead (``ultra_trec.significance.compare_samples``:
a hierarchical bootstrap, queries then samples within each query): its means, difference, interval and p-value
are over the items' sample means, and ``p_exact`` is the same bootstrap with the judge taken as exact (queries
only). ``only_if_exact`` flags a metric significant after Holm only when the judge is taken as exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from servers.report.model import Run, counts_of
from ultra_base.errors import InputError

ALL_PAIRS_UP_TO = 8  # runs compared pair by pair; with more (a sweep's trials), each against the first


@dataclass(frozen=True)
class Pair:
    """Two runs matched on their shared ids: positions of those ids in each run."""

    a: int  # index of the earlier run (the baseline of the pair)
    b: int
    ids: list[str]
    a_positions: np.ndarray
    b_positions: np.ndarray


@dataclass(frozen=True)
class Row:
    """One (pair, metric) of the comparison."""

    metric: str
    a: str  # run labels
    b: str
    n: int  # ids with a value in both runs
    a_mean: float
    b_mean: float
    diff: float  # b_mean - a_mean, the mean of the per-item differences
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float
    wins: int  # items where B is better than A (higher, or lower for a lower-is-better metric)
    ties: int
    losses: int
    significant: bool  # p_holm < 1 - confidence
    test: str = "randomisation"  # or "judge-noise-aware (k samples)"
    p_exact: float = float("nan")  # the judge-noise-aware test's p with the judge taken as exact
    only_if_exact: bool = False  # significant (Holm) only if the judge is taken as exact
    higher_is_better: bool = True  # False for a metric declared lower-is-better: B - A < 0 is then better

    @property
    def better(self) -> bool:
        """B's mean is better than A's (in the metric's direction)."""
        return self.diff > 0 if self.higher_is_better else self.diff < 0

    @property
    def worse(self) -> bool:
        """B's mean is worse than A's (in the metric's direction)."""
        return self.diff < 0 if self.higher_is_better else self.diff > 0


def pairs_of(runs: Sequence[Run]) -> list[Pair]:
    """Every pair (earlier, later) of runs matched on ids (beyond ``ALL_PAIRS_UP_TO`` runs, each run against the
    first only); refuses a run that shares no id with the first."""
    if len(runs) < 2:
        raise InputError(f"a comparison needs at least two runs; got {len(runs)}: {[r.label for r in runs]}")
    index = [{key: i for i, key in enumerate(run.ids)} for run in runs]
    pairs = []
    for a in range(len(runs) if len(runs) <= ALL_PAIRS_UP_TO else 1):
        for b in range(a + 1, len(runs)):
            shared = [key for key in runs[a].ids if key in index[b]]
            if not shared:
                if a == 0:
                    raise InputError(
                        f"runs {runs[a].label!r} and {runs[b].label!r} share no item id (e.g. {runs[a].ids[:3]} "
                        f"against {runs[b].ids[:3]}): items are matched by id, never by position; compare runs "
                        "over the same questions"
                    )
                continue
            a_positions = np.fromiter((index[a][k] for k in shared), dtype=np.intp, count=len(shared))
            b_positions = np.fromiter((index[b][k] for k in shared), dtype=np.intp, count=len(shared))
            pairs.append(Pair(a, b, shared, a_positions, b_positions))
    return pairs


def shared_metrics(runs: Sequence[Run], pair: Pair) -> list[str]:
    """The metrics both runs of the pair have, in first-seen order; counts (``num_ret``) are never compared."""
    counts = counts_of([runs[pair.a], runs[pair.b]])
    return [name for name in runs[pair.a].columns if name in runs[pair.b].columns and name not in counts]


def higher_is_better(runs: Sequence[Run], pair: Pair, name: str) -> bool:
    """False when either run's result file declared ``name`` lower-is-better, else True."""
    return not (name in runs[pair.a].lower_is_better or name in runs[pair.b].lower_is_better)


def compare(runs: Sequence[Run], *, resamples: int, confidence: float, seed: int) -> tuple[list[Pair], list[Row]]:
    """The pairs and a row per (pair, shared metric) with a value for some shared id."""
    from ultra_trec.significance import holm, paired_tests

    pairs = pairs_of(runs)
    rows: list[Row] = []
    for pair in pairs:
        vectors: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        groups: dict[bytes, list[str]] = {}  # metrics with values for the same items: one batch of tests
        for name in shared_metrics(runs, pair):
            x = runs[pair.a].columns[name][pair.a_positions]
            y = runs[pair.b].columns[name][pair.b_positions]
            both = np.isfinite(x) & np.isfinite(y)
            if both.any():
                vectors[name] = (x[both], y[both])
                groups.setdefault(np.packbits(both).tobytes() + bytes(str(len(both)), "ascii"), []).append(name)
        tested = {}
        for names in groups.values():
            a = np.vstack([vectors[n][0] for n in names])
            b = np.vstack([vectors[n][1] for n in names])
            result = paired_tests(b, a, n_resamples=resamples, seed=seed, alpha=1 - confidence)
            for k, name in enumerate(names):
                tested[name] = (result, k)
        names = list(vectors)
        noisy = {n: judged for n in names if (judged := _judge_noise_aware(runs, pair, n, resamples, confidence, seed))}
        p_values = np.array([noisy[n][0] if n in noisy else tested[n][0].p_value[tested[n][1]] for n in names])
        p_exact = np.array(
            [
                noisy[n][1]["judge_as_exact"]["p_value"] if n in noisy else p
                for n, p in zip(names, p_values, strict=True)
            ]
        )
        alpha = 1 - confidence
        for name, p_holm, exact_holm in zip(names, holm(p_values), holm(p_exact), strict=True):
            result, k = tested[name]
            x, y = vectors[name]
            means = (float(result.b_mean[k]), float(result.a_mean[k]), float(result.diff[k]))
            interval = (float(result.ci_low[k]), float(result.ci_high[k]))
            p, test, exact = float(result.p_value[k]), "randomisation", float("nan")
            if name in noisy:
                p, judged, test = noisy[name]
                means = (judged["mean_b"], judged["mean_a"], judged["diff"])
                interval = tuple(judged["with_judge_noise"]["ci"])
                exact = judged["judge_as_exact"]["p_value"]
            up = higher_is_better(runs, pair, name)
            better, worse = (y > x, y < x) if up else (y < x, y > x)
            rows.append(
                Row(
                    metric=name,
                    a=runs[pair.a].label,
                    b=runs[pair.b].label,
                    n=len(x),
                    a_mean=means[0],
                    b_mean=means[1],
                    diff=means[2],
                    ci_low=interval[0],
                    ci_high=interval[1],
                    p_value=p,
                    p_holm=float(p_holm),
                    wins=int(np.count_nonzero(better)),
                    ties=int(np.count_nonzero(y == x)),
                    losses=int(np.count_nonzero(worse)),
                    significant=bool(p_holm < alpha),
                    test=test,
                    p_exact=exact,
                    only_if_exact=bool(exact_holm < alpha and not p_holm < alpha),
                    higher_is_better=up,
                )
            )
    order = {name: i for i, name in enumerate(dict.fromkeys(row.metric for row in rows))}
    rows.sort(key=lambda row: order[row.metric])  # stable: each metric's pairs together
    return pairs, rows


def _judge_noise_aware(
    runs: Sequence[Run], pair: Pair, name: str, resamples: int, confidence: float, seed: int
) -> tuple[float, dict, str] | None:
    """(p, the library's result, the test's name) of B - A when both runs recorded judge samples of ``name``
    for every shared id with a value in both; None otherwise (the randomisation test stays)."""
    from ultra_trec.significance import compare_samples

    first, second = runs[pair.a].samples.get(name), runs[pair.b].samples.get(name)
    if not first or not second:
        return None
    x = runs[pair.a].columns[name][pair.a_positions]
    y = runs[pair.b].columns[name][pair.b_positions]
    ids = [key for key, both in zip(pair.ids, np.isfinite(x) & np.isfinite(y), strict=True) if both]
    if not all(key in first and key in second for key in ids):
        return None
    a, b = [first[key] for key in ids], [second[key] for key in ids]
    judged = compare_samples(b, a, n_resamples=resamples, seed=seed, alpha=1 - confidence)
    k = max(len(s) for s in (*a, *b))
    return judged["with_judge_noise"]["p_value"], judged, f"judge-noise-aware ({k} samples)"
