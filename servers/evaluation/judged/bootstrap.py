"""Paired comparison of two systems whose items carry k judge samples each: a hierarchical bootstrap.

Each of ``n_resamples`` rounds draws the queries with replacement (both systems keep the same draw), then,
within each drawn query, draws that query's judge samples with replacement, separately for each system,
and records the mean over the drawn queries of (mean of A's drawn samples - mean of B's). The naive test
does the first stage only, taking each query's sample mean as exact. For both:

- ci: the alpha/2 and 1 - alpha/2 percentiles of the recorded differences (percentile bootstrap);
- p_value: two-sided, of the differences re-centred on 0 (the null): (1 + #{|d* - d| >= |d|}) / (1 + B).

Resampling the samples within each query adds the judge's noise to the spread (Davison and Hinkley 1997,
section 3.8, two-stage sampling; Field and Welsh 2007).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _sample_means(samples: list[np.ndarray], picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per round, per drawn query: the mean of that query's samples drawn again with replacement."""
    sizes = np.array([len(s) for s in samples])
    out = np.empty(picks.shape)
    for query, values in enumerate(samples):
        where = picks == query
        count = int(where.sum())
        if count:
            draws = rng.integers(0, sizes[query], size=(count, sizes[query]))
            out[where] = values[draws].mean(axis=1)
    return out


def _summary(observed: float, resampled: np.ndarray, alpha: float) -> dict[str, Any]:
    extreme = np.abs(resampled - observed) >= abs(observed) - 1e-12
    low, high = np.quantile(resampled, [alpha / 2, 1 - alpha / 2])
    p_value = float((1 + extreme.sum()) / (1 + len(resampled)))
    return {"ci": [float(low), float(high)], "p_value": p_value, "significant": p_value < alpha}


def resampled_differences(
    a: list[np.ndarray], b: list[np.ndarray], *, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(hierarchical, naive): the bootstrap rounds' mean differences A - B over paired queries."""
    means_a = np.array([s.mean() for s in a])
    means_b = np.array([s.mean() for s in b])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(a), size=(n_resamples, len(a)))
    naive = (means_a[picks] - means_b[picks]).mean(axis=1)
    hierarchical = (_sample_means(a, picks, rng) - _sample_means(b, picks, rng)).mean(axis=1)
    return hierarchical, naive


def compare_samples(
    a: list[np.ndarray], b: list[np.ndarray], *, n_resamples: int, seed: int, alpha: float
) -> dict[str, Any]:
    """Hierarchical and naive bootstrap of mean(A) - mean(B) over paired queries (lists in the same order)."""
    means_a = np.array([s.mean() for s in a])
    means_b = np.array([s.mean() for s in b])
    observed = float((means_a - means_b).mean())
    hierarchical, naive = resampled_differences(a, b, n_resamples=n_resamples, seed=seed)
    with_noise, exact = _summary(observed, hierarchical, alpha), _summary(observed, naive, alpha)
    return {
        "diff": observed,
        "mean_a": float(means_a.mean()),
        "mean_b": float(means_b.mean()),
        "with_judge_noise": with_noise,
        "judge_as_exact": exact,
        "significant_only_if_judge_exact": exact["significant"] and not with_noise["significant"],
    }
