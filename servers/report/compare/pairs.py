"""Paired comparison of runs, item by item: items are matched on their ids (never on positions).

For every pair of runs (each later run B against each earlier run A) and every metric both have, over the ids
both have a value for: the mean of each, the mean difference B - A with its percentile-bootstrap interval, the
two-sided paired randomisation (sign-flip) p-value (``ultra_trec.significance.paired_tests``: exact when
2^n <= resamples), Holm's adjustment across the pair's metrics, and the items where B wins, ties or loses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from servers.report.model import Run
from ultra_kit.errors import InputError

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
    wins: int  # items where B > A
    ties: int
    losses: int
    significant: bool  # p_holm < 1 - confidence


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
    """The metrics both runs of the pair have, in first-seen order."""
    return [name for name in runs[pair.a].columns if name in runs[pair.b].columns]


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
        adjusted = holm(np.array([tested[n][0].p_value[tested[n][1]] for n in names]))
        for name, p_holm in zip(names, adjusted, strict=True):
            result, k = tested[name]
            x, y = vectors[name]
            rows.append(
                Row(
                    metric=name,
                    a=runs[pair.a].label,
                    b=runs[pair.b].label,
                    n=len(x),
                    a_mean=float(result.b_mean[k]),
                    b_mean=float(result.a_mean[k]),
                    diff=float(result.diff[k]),
                    ci_low=float(result.ci_low[k]),
                    ci_high=float(result.ci_high[k]),
                    p_value=float(result.p_value[k]),
                    p_holm=float(p_holm),
                    wins=int(np.count_nonzero(y > x)),
                    ties=int(np.count_nonzero(y == x)),
                    losses=int(np.count_nonzero(y < x)),
                    significant=bool(p_holm < 1 - confidence),
                )
            )
    order = {name: i for i, name in enumerate(dict.fromkeys(row.metric for row in rows))}
    rows.sort(key=lambda row: order[row.metric])  # stable: each metric's pairs together
    return pairs, rows
