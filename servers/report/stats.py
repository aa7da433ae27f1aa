"""The summary of each metric: mean, median, a seeded percentile-bootstrap interval of the mean, and n.

For a metric with n values (the queries that have one), resample b draws the positions
``np.random.default_rng(seed).integers(0, n, size=(resamples, n))[b]``; the interval is the
``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles (``np.percentile``, linear) of
the resample means. Columns with the same n (of any run) share the draws, and a draw's mean is computed from
the counts of each position (a matrix product), so 20 metrics cost about as much as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from servers.report.model import Run, counts_of

_CHUNK = 64  # resamples drawn at once (bounds memory at 64 x n positions)


@dataclass(frozen=True)
class Summary:
    """One row of the summary table."""

    run: str
    metric: str
    mean: float
    median: float
    ci_low: float
    ci_high: float
    n: int
    missing: int  # queries of the run without a value for this metric


def resample_means(columns: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """(resamples, metrics) bootstrap means of ``columns`` (n values x metrics), drawn as documented above."""
    n = columns.shape[0]
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, columns.shape[1]))
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        positions = rng.integers(0, n, size=(rows, n))
        offsets = (np.arange(rows) * n)[:, None]
        counts = np.bincount((positions + offsets).ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        means[start : start + rows] = counts @ columns / n
    return means


def summarise(runs: Sequence[Run], *, resamples: int, confidence: float, seed: int) -> list[Summary]:
    """A row per (run, metric): by metric (first-seen order), then by run; counts (``num_ret``) are no metric."""
    tail = 100 * (1 - confidence) / 2
    counts = counts_of(runs)
    values = {
        (index, name): column[np.isfinite(column)]
        for index, run in enumerate(runs)
        for name, column in run.columns.items()
        if name not in counts
    }
    by_size: dict[int, list[tuple[int, str]]] = {}
    for key, kept in values.items():
        by_size.setdefault(len(kept), []).append(key)
    intervals: dict[tuple[int, str], tuple[float, float]] = {}
    for n, keys in by_size.items():  # every column of n values, of every run, from the same draws
        if n == 0:
            intervals.update({key: (np.nan, np.nan) for key in keys})
            continue
        means = resample_means(np.column_stack([values[key] for key in keys]), resamples=resamples, seed=seed)
        low, high = np.percentile(means, [tail, 100 - tail], axis=0)
        intervals.update({key: (float(lo), float(hi)) for key, lo, hi in zip(keys, low, high, strict=True)})
    rows = [
        Summary(
            run=runs[index].label,
            metric=name,
            mean=float(kept.mean()) if len(kept) else np.nan,
            median=float(np.median(kept)) if len(kept) else np.nan,
            ci_low=intervals[(index, name)][0],
            ci_high=intervals[(index, name)][1],
            n=len(kept),
            missing=len(runs[index].ids) - len(kept),
        )
        for (index, name), kept in values.items()
    ]
    if len(runs) > 1:  # each metric's runs next to each other
        order = {name: i for i, name in enumerate(dict.fromkeys(row.metric for row in rows))}
        rows.sort(key=lambda row: order[row.metric])  # stable: runs keep their order
    return rows
