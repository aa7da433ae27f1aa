"""Paired tests: exact enumeration against brute force, determinism, t-test, Holm, bootstrap."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ultra_trec.significance import holm, paired_tests


def brute_force_p(d: list[Fraction]) -> float:
    """Exact two-sided sign-flip p in rational arithmetic (ties are exact)."""
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", range(6))
def test_exact_enumeration_matches_brute_force_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, size=(3, 9)) / 5  # P@5-like values: many exact ties
    b = rng.integers(0, 6, size=(3, 9)) / 5
    result = paired_tests(a, b, n_resamples=10_000, seed=42, alpha=0.05)
    assert result.exact
    for row in range(3):
        d = [Fraction(int(x), 5) - Fraction(int(y), 5) for x, y in zip(a[row] * 5 + 0.5, b[row] * 5 + 0.5, strict=True)]
        assert result.p_value[row] == pytest.approx(brute_force_p(d), abs=1e-12)


def test_randomisation_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random((2, 16)), rng.random((2, 16))
    first = paired_tests(a, b, n_resamples=20_000, seed=3, alpha=0.05)
    again = paired_tests(a, b, n_resamples=20_000, seed=3, alpha=0.05)
    assert not first.exact
    np.testing.assert_array_equal(first.p_value, again.p_value)
    exact = paired_tests(a, b, n_resamples=2**16, seed=42, alpha=0.05)
    assert exact.exact
    np.testing.assert_allclose(first.p_value, exact.p_value, atol=0.015)


def test_t_test_effect_size_and_means() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((4, 40)), rng.random((4, 40))
    result = paired_tests(a, b, n_resamples=500, seed=42, alpha=0.05)
    np.testing.assert_allclose(result.t_test_p_value, stats.ttest_rel(a, b, axis=1).pvalue, rtol=1e-10)
    d = a - b
    np.testing.assert_allclose(result.effect_size, d.mean(1) / d.std(1, ddof=1))
    np.testing.assert_allclose(result.diff, d.mean(1))
    assert np.all(result.ci_low <= result.diff) and np.all(result.diff <= result.ci_high)


def test_identical_runs_and_constant_shift() -> None:
    a = np.array([[0.1, 0.5, 0.9, 0.3] * 5])
    same = paired_tests(a, a, n_resamples=1000, seed=42, alpha=0.05)
    assert same.p_value[0] == 1.0 and same.t_test_p_value[0] == 1.0 and same.effect_size[0] == 0.0
    shifted = paired_tests(a + 0.25, a, n_resamples=1000, seed=42, alpha=0.05)
    assert shifted.ci_low[0] == pytest.approx(0.25) and shifted.ci_high[0] == pytest.approx(0.25)
    assert shifted.p_value[0] == pytest.approx(1 / 1001)  # only all-plus or all-minus reach it: chance 2 / 2**20


def test_holm_matches_the_step_down_definition() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.005])
    order = np.argsort(p)
    expected, running = np.empty(5), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (5 - rank) * p[i]))
        expected[i] = running
    np.testing.assert_allclose(holm(p), expected)
