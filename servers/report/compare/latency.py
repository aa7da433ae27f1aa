"""Latency in compare: the paired comparison of two runs' latency percentiles (p50, p95, the quantiles a run
declares: ``servers.report.kinds.target``) with a bootstrap interval and a randomisation p-value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servers.report.model import Run


def quantile_difference(
    a: np.ndarray, b: np.ndarray, q: float, *, resamples: int, confidence: float, seed: int
) -> tuple[float, float, float, float, float, float]:
    """(q-th percentile of a, of b, b - a, interval low, high, two-sided p) over paired items.

    The interval is the percentile bootstrap of the items (pairs resampled together); the p-value is the paired
    randomisation test (each pair's two values swapped at random) of the percentiles' difference.
    """
    rng = np.random.default_rng(seed)
    n = len(a)
    observed = float(np.percentile(b, q) - np.percentile(a, q))
    picks = rng.integers(0, n, size=(resamples, n))
    boots = np.percentile(b[picks], q, axis=1) - np.percentile(a[picks], q, axis=1)
    tail = (1 - confidence) / 2
    low, high = (float(v) for v in np.quantile(boots, [tail, 1 - tail]))
    swap = rng.random((resamples, n)) < 0.5
    flipped = np.percentile(np.where(swap, a, b), q, axis=1) - np.percentile(np.where(swap, b, a), q, axis=1)
    p_value = float((1 + np.count_nonzero(np.abs(flipped) >= abs(observed) - 1e-12)) / (resamples + 1))
    return float(np.percentile(a, q)), float(np.percentile(b, q)), observed, low, high, p_value


def quantile_rows(runs: Sequence[Run], pairs: Sequence[Any], *, resamples: int, confidence: float, seed: int) -> list:
    """Compare's rows ``latency p50``, ``latency p95`` for every pair and metric with declared quantiles: the
    percentiles' difference B - A over the items both answered, its bootstrap interval, the randomisation
    p-value (Holm over the pair's quantile rows), and the items where B is faster, as fast, slower."""
    from servers.report.compare.pairs import Row
    from ultra_trec.significance import holm

    rows = []
    for pair in pairs:
        first, second = runs[pair.a], runs[pair.b]
        found = []
        for name, quantiles in first.quantiles.items():
            if name not in second.columns or name not in second.quantiles:
                continue
            x = first.columns[name][pair.a_positions]
            y = second.columns[name][pair.b_positions]
            both = np.isfinite(x) & np.isfinite(y)
            if not both.any():
                continue
            x, y = x[both], y[both]
            for q in quantiles:
                figures = quantile_difference(x, y, q, resamples=resamples, confidence=confidence, seed=seed)
                found.append((f"{name} p{q:g}", len(x), figures, (int((y < x).sum()), int((y == x).sum()))))
        adjusted = holm(np.array([figures[5] for _, _, figures, _ in found])) if found else []
        for (metric, n, figures, (wins, ties)), p_holm in zip(found, adjusted, strict=True):
            a_q, b_q, diff, low, high, p_value = figures
            rows.append(
                Row(
                    metric=metric,
                    a=first.label,
                    b=second.label,
                    n=n,
                    a_mean=a_q,
                    b_mean=b_q,
                    diff=diff,
                    ci_low=low,
                    ci_high=high,
                    p_value=p_value,
                    p_holm=float(p_holm),
                    wins=wins,
                    ties=ties,
                    losses=n - wins - ties,
                    significant=bool(p_holm < 1 - confidence),
                    test="percentile bootstrap",
                    higher_is_better=False,
                )
            )
    return rows
