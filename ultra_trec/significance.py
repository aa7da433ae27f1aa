"""Paired significance tests between runs, vectorised over metrics, runs and resamples.

For each (new run, metric) the per-query differences d_i = A_i - B_i over the evaluated query set
(METRICS.md "Significance") give:

* a two-sided paired randomisation (sign-flip) test on |mean(d)|: p = (1 + #{|mean(s*d)| >= |mean(d)|})
  / (1 + n_resamples); all 2^n sign patterns are enumerated instead when 2^n <= n_resamples
  (p = #{...} / 2^n, the identity pattern included);
* the paired t-test p-value; the mean difference with a percentile bootstrap confidence interval
  (level 1 - alpha); the effect size mean(d) / sd(d) (sample sd);
* Holm-adjusted p-values over every row of the table.

When each query carries k judge samples per system, ``compare_samples`` tests mean(A) - mean(B) with a
hierarchical bootstrap instead: each of ``n_resamples`` rounds draws the queries with replacement (both systems
keep the same draw), then, within each drawn query, that query's judge samples with replacement, separately for
each system, and records the mean over the drawn queries of (mean of A's drawn samples - mean of B's). The naive
test does the first stage only, taking each query's sample mean as exact. For both: ci, the alpha/2 and
1 - alpha/2 percentiles of the recorded differences; p_value, two-sided, of the differences re-centred on 0:
(1 + #{|d* - d| >= |d|}) / (1 + B). Resampling the samples within each query adds the judge's noise to the spread
(Davison and Hinkley 1997, section 3.8, two-stage sampling; Field and Welsh 2007).

Resampled statistics equal to the observed one up to rounding count as ties: a resample counts when
its statistic >= observed - 1e-12 * max(observed, mean |d|). The same sign patterns and bootstrap
samples serve every row (one matrix product per chunk of resamples), drawn from
``numpy.random.default_rng(seed)``, so a seed fixes every p-value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ultra_base.errors import InputError

RELATIVE_TIE = 1e-12
_CHUNK = 1024  # resamples per matrix product: bounds memory at _CHUNK x queries floats


@dataclass(frozen=True)
class PairedTests:
    """Row-aligned results for k difference vectors (one per (run, metric))."""

    a_mean: np.ndarray
    b_mean: np.ndarray
    diff: np.ndarray
    p_value: np.ndarray
    exact: bool
    t_test_p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray  # NaN where undefined (sd = 0 and diff != 0, or one query)


def paired_tests(a: np.ndarray, b: np.ndarray, *, n_resamples: int, seed: int, alpha: float) -> PairedTests:
    """Run every test on the rows of ``a`` (new) against ``b`` (baseline); both k x n_queries."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    if a.shape != b.shape or a.shape[1] == 0:
        raise InputError(f"paired tests need equal, non-empty shapes, got {a.shape} and {b.shape}")
    if n_resamples < 1:
        raise InputError(f"n_resamples must be a positive integer, got {n_resamples}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    d = a - b
    n = d.shape[1]
    rng = np.random.default_rng(seed)
    p_value, exact = randomisation_p_values(d, n_resamples, rng)
    ci_low, ci_high = bootstrap_interval(d, n_resamples, rng, alpha)
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1) if n > 1 else np.full(d.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(sd > 0, mean / sd, np.where(mean == 0, 0.0, np.nan))
    return PairedTests(
        a_mean=a.mean(axis=1),
        b_mean=b.mean(axis=1),
        diff=mean,
        p_value=p_value,
        exact=exact,
        t_test_p_value=t_test_p_values(mean, sd, n),
        ci_low=ci_low,
        ci_high=ci_high,
        effect_size=effect,
    )


def randomisation_p_values(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Two-sided sign-flip p-values of each row of ``d``; exact enumeration when 2^n <= n_resamples."""
    k, n = d.shape
    observed = np.abs(d.sum(axis=1))
    tolerance = RELATIVE_TIE * np.maximum(observed, np.abs(d).sum(axis=1))
    threshold = observed - tolerance
    total = d.sum(axis=1)
    twice = 2.0 * d.T  # n x k: sum(s*d) = 2 * (bits @ d) - sum(d) with s = 2*bits - 1
    exact = n < 63 and (1 << n) <= n_resamples
    if exact:
        patterns = 1 << n
        count = np.zeros(k, dtype=np.int64)
        for start in range(0, patterns, _CHUNK):
            codes = np.arange(start, min(start + _CHUNK, patterns), dtype=np.int64)
            bits = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
            count += _at_least(bits @ twice - total, threshold)
        return count / patterns, True
    count = np.zeros(k, dtype=np.int64)
    for start in range(0, n_resamples, _CHUNK):
        rows = min(_CHUNK, n_resamples - start)
        packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n).astype(np.float64)
        count += _at_least(bits @ twice - total, threshold)
    return (1.0 + count) / (1.0 + n_resamples), False


def _at_least(sums: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    return np.count_nonzero(np.abs(sums) >= threshold, axis=0)


def bootstrap_interval(
    d: np.ndarray, n_resamples: int, rng: np.random.Generator, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval (level 1 - alpha) of each row's mean, queries resampled with replacement."""
    k, n = d.shape
    means = np.empty((n_resamples, k))
    for start in range(0, n_resamples, _CHUNK):
        rows = min(_CHUNK, n_resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        picks += (np.arange(rows) * n)[:, None]
        counts = np.bincount(picks.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        means[start : start + rows] = counts @ d.T / n
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high


def t_test_p_values(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """Two-sided paired t-test p-values; 1 when every difference is 0, 0 when all are equal and non-zero."""
    from scipy.special import stdtr  # scipy.stats.t.sf(x, df) is stdtr(df, -x); scipy.stats costs 0.7 s to import

    if n < 2:
        return np.full(mean.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = mean / (sd / np.sqrt(n))
    p = 2.0 * stdtr(n - 1, -np.abs(statistic))
    return np.where(sd > 0, p, np.where(mean == 0, 1.0, 0.0))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def _sample_means(samples: list[np.ndarray], picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per round, per drawn query: the mean of that query's samples drawn again with replacement (queries in
    order, each query's draws in row-major order of ``picks``)."""
    flat = picks.ravel()
    order = np.argsort(flat, kind="stable")  # positions of each query's picks, in row-major order
    starts = np.concatenate([[0], np.cumsum(np.bincount(flat, minlength=len(samples)))])
    out = np.empty(flat.shape)
    for query, values in enumerate(samples):
        where = order[starts[query] : starts[query + 1]]
        if len(where):
            draws = rng.integers(0, len(values), size=(len(where), len(values)))
            out[where] = values[draws].mean(axis=1)
    return out.reshape(picks.shape)


def _summary(observed: float, resampled: np.ndarray, alpha: float) -> dict[str, Any]:
    extreme = np.abs(resampled - observed) >= abs(observed) - 1e-12
    low, high = np.quantile(resampled, [alpha / 2, 1 - alpha / 2])
    p_value = float((1 + extreme.sum()) / (1 + len(resampled)))
    return {"ci": [float(low), float(high)], "p_value": p_value, "significant": p_value < alpha}


def resampled_differences(
    a: list[np.ndarray], b: list[np.ndarray], *, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(hierarchical, naive): the bootstrap rounds' mean differences A - B over paired queries, drawn _CHUNK
    rounds at a time (memory: two floats per round, plus one chunk's draws)."""
    means_a = np.array([s.mean() for s in a])
    means_b = np.array([s.mean() for s in b])
    rng = np.random.default_rng(seed)
    naive, hierarchical = np.empty(n_resamples), np.empty(n_resamples)
    for start in range(0, n_resamples, _CHUNK):
        picks = rng.integers(0, len(a), size=(min(_CHUNK, n_resamples - start), len(a)))
        naive[start : start + len(picks)] = (means_a[picks] - means_b[picks]).mean(axis=1)
        rounds = _sample_means(a, picks, rng) - _sample_means(b, picks, rng)
        hierarchical[start : start + len(picks)] = rounds.mean(axis=1)
    return hierarchical, naive


def compare_samples(
    a: list[np.ndarray], b: list[np.ndarray], *, n_resamples: int, seed: int, alpha: float
) -> dict[str, Any]:
    """The judge-noise-aware test: hierarchical and naive bootstrap of mean(A) - mean(B) over paired queries
    (``a[i]`` and ``b[i]``: query i's judge samples of each system; see the module). Returns diff, mean_a,
    mean_b, with_judge_noise and judge_as_exact ({ci, p_value, significant}) and
    significant_only_if_judge_exact."""
    if not a or len(a) != len(b) or any(len(s) == 0 for s in (*a, *b)):
        raise InputError("compare_samples needs the same number of queries in a and b, each with a sample")
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
