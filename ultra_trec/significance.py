"""Paired significance tests between runs, vectorised over metrics, runs and resamples.

For each (new run, metric) the per-query differences d_i = A_i - B_i over the evaluated query set
(METRICS.md "Significance") give:

* a two-sided paired randomisation (sign-flip) test on |mean(d)|: p = (1 + #{|mean(s*d)| >= |mean(d)|})
  / (1 + n_resamples); all 2^n sign patterns are enumerated instead when 2^n <= n_resamples
  (p = #{...} / 2^n, the identity pattern included);
* the paired t-test p-value; the mean difference with a percentile bootstrap confidence interval
  (level 1 - alpha); the effect size mean(d) / sd(d) (sample sd);
* Holm-adjusted p-values over every row of the table.

Resampled statistics equal to the observed one up to rounding count as ties: a resample counts when
its statistic >= observed - 1e-12 * max(observed, mean |d|). The same sign patterns and bootstrap
samples serve every row (one matrix product per chunk of resamples), drawn from
``numpy.random.default_rng(seed)``, so a seed fixes every p-value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ultra_kit.errors import InputError

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
    from scipy.stats import t as student_t

    if n < 2:
        return np.full(mean.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = mean / (sd / np.sqrt(n))
    p = 2.0 * student_t.sf(np.abs(statistic), df=n - 1)
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
