"""The summary's bootstrap interval against a direct numpy computation, mean/median/n, and the seed."""

from __future__ import annotations

import numpy as np
import pytest

from servers.report.model import Run
from servers.report.stats import resample_means, summarise


def direct_interval(values: np.ndarray, resamples: int, seed: int, confidence: float) -> tuple[float, float]:
    """The textbook percentile bootstrap: resample the values with replacement, take the means' percentiles."""
    positions = np.random.default_rng(seed).integers(0, len(values), size=(resamples, len(values)))
    means = values[positions].mean(axis=1)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _run(columns: dict[str, np.ndarray]) -> Run:
    run = Run(label="r")
    size = len(next(iter(columns.values())))
    for name, values in columns.items():
        run.add_column(name, [f"q{i}" for i in range(size)], values, source=f"test: {name}")
    return run


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_interval_matches_a_direct_bootstrap(confidence: float) -> None:
    rng = np.random.default_rng(3)
    skewed = rng.exponential(size=500) ** 2
    binary = (rng.random(500) < 0.3).astype(float)
    with_gaps = rng.random(500)
    with_gaps[rng.random(500) < 0.2] = np.nan  # queries without a value: resampled over the ones that have one
    rows = {
        row.metric: row
        for row in summarise(
            [_run({"skewed": skewed, "binary": binary, "gaps": with_gaps})],
            resamples=700,  # not a multiple of the chunk of draws
            confidence=confidence,
            seed=11,
        )
    }
    for name, values in (("skewed", skewed), ("binary", binary), ("gaps", with_gaps[np.isfinite(with_gaps)])):
        low, high = direct_interval(values, 700, 11, confidence)
        assert rows[name].ci_low == pytest.approx(low, rel=1e-12, abs=1e-14)
        assert rows[name].ci_high == pytest.approx(high, rel=1e-12, abs=1e-14)
        assert rows[name].mean == pytest.approx(values.mean(), rel=1e-12)
        assert rows[name].median == np.median(values)
        assert rows[name].n == len(values)
        assert rows[name].ci_low < rows[name].mean < rows[name].ci_high
    assert rows["gaps"].missing == 500 - rows["gaps"].n > 0


def test_resample_means_of_many_metrics_equal_the_direct_means() -> None:
    values = np.random.default_rng(5).random((321, 4))
    positions = np.random.default_rng(9).integers(0, 321, size=(130, 321))
    assert resample_means(values, resamples=130, seed=9) == pytest.approx(values[positions].mean(axis=1), rel=1e-12)


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    run = _run({"m": np.random.default_rng(1).random(200)})
    first = summarise([run], resamples=300, confidence=0.95, seed=1)[0]
    again = summarise([run], resamples=300, confidence=0.95, seed=1)[0]
    other = summarise([run], resamples=300, confidence=0.95, seed=2)[0]
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)


def test_a_metric_without_values_and_one_with_a_single_value() -> None:
    run = _run({"none": np.full(3, np.nan), "one": np.array([np.nan, 0.25, np.nan])})
    rows = {row.metric: row for row in summarise([run], resamples=50, confidence=0.95, seed=0)}
    assert rows["none"].n == 0 and np.isnan(rows["none"].mean) and np.isnan(rows["none"].ci_low)
    assert (rows["one"].n, rows["one"].mean, rows["one"].ci_low, rows["one"].ci_high) == (1, 0.25, 0.25, 0.25)


def test_several_runs_are_listed_metric_by_metric() -> None:
    first, second = _run({"a": np.ones(3), "b": np.zeros(3)}), _run({"a": np.zeros(3), "b": np.ones(3)})
    second.label = "s"
    rows = summarise([first, second], resamples=10, confidence=0.95, seed=0)
    assert [(row.metric, row.run) for row in rows] == [("a", "r"), ("a", "s"), ("b", "r"), ("b", "s")]
