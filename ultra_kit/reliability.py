"""How far judges agree and how much a judge disagrees with itself: the statistics of juries and samples.

- ``krippendorff_alpha``: Krippendorff's alpha from its definition (coincidence matrix, Krippendorff 2011,
  "Computing Krippendorff's Alpha-Reliability") at the nominal, ordinal or interval level; any number of
  raters per unit, missing values allowed.
- ``cohen_kappa``: Cohen's kappa of two raters' labels; ``weighted_kappa``: with linear or quadratic weights
  (ordered labels: a near miss counts less than a far one); ``confusion_matrix``: the counts behind them.
- ``majority``: the most frequent value; a tie goes to the lowest of the tied values (for grades, the stricter).
- ``spread``: the sample standard deviation (n - 1) of scores, or the entropy in bits of labels.
- ``within_share``: the share of the total sum of squares that lies within items (a judge's own noise).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, Literal

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval")


def krippendorff_alpha(units: Sequence[Sequence[Any]], level: Level) -> float | None:
    """Alpha over ``units`` (each the values the raters gave one item; None = no value); None when undefined
    (no unit with two values, or no variation at all)."""
    units = [[v for v in unit if v is not None] for unit in units]
    units = [unit for unit in units if len(unit) >= 2]
    values = sorted({v for unit in units for v in unit})
    if not values:
        return None
    index = {value: i for i, value in enumerate(values)}
    size = len(values)
    coincidences = [[0.0] * size for _ in range(size)]
    for unit in units:
        counts = Counter(index[v] for v in unit)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                coincidences[c][k] += n_c * (n_k - (c == k)) / (len(unit) - 1)
    marginals = [sum(row) for row in coincidences]
    total = sum(marginals)

    def delta(c: int, k: int) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (float(values[c]) - float(values[k])) ** 2
        low, high = min(c, k), max(c, k)
        return (sum(marginals[low : high + 1]) - (marginals[c] + marginals[k]) / 2) ** 2

    pairs = [(c, k) for c in range(size) for k in range(size)]
    observed = sum(coincidences[c][k] * delta(c, k) for c, k in pairs)
    expected = sum(marginals[c] * marginals[k] * delta(c, k) for c, k in pairs)
    if expected == 0:
        return None
    return 1.0 - (total - 1) * observed / expected


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of (rater A, rater B) labels; None when undefined (no pairs, or chance agreement 1)."""
    n = len(pairs)
    if n == 0:
        return None
    count_a = Counter(a for a, _ in pairs)
    count_b = Counter(b for _, b in pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


def weighted_kappa(pairs: Sequence[tuple[float, float]], labels: Sequence[float], weights: str) -> float | None:
    """Cohen's kappa with ``weights`` "linear" or "quadratic" over the ordered ``labels`` (as
    ``sklearn.metrics.cohen_kappa_score``: disagreement weight |i - j| or (i - j)^2 between label positions);
    None when undefined (no pairs, or no expected disagreement)."""
    if not pairs:
        return None
    matrix = confusion_matrix(pairs, labels)
    size, n = len(labels), len(pairs)
    rows = [sum(row) for row in matrix]
    columns = [sum(matrix[i][j] for i in range(size)) for j in range(size)]
    power = 1 if weights == "linear" else 2
    observed = expected = 0.0
    for i in range(size):
        for j in range(size):
            weight = abs(i - j) ** power
            observed += weight * matrix[i][j]
            expected += weight * rows[i] * columns[j] / n
    return None if expected == 0 else 1.0 - observed / expected


def confusion_matrix(pairs: Sequence[tuple[Hashable, Hashable]], labels: Sequence[Hashable]) -> list[list[int]]:
    """``matrix[i][j]`` = pairs whose first label is ``labels[i]`` and second ``labels[j]``."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for first, second in pairs:
        matrix[index[first]][index[second]] += 1
    return matrix


def majority(values: Sequence[Any]) -> Any:
    """The most frequent of ``values``; a tie goes to the lowest of the tied values."""
    counts = Counter(values)
    most = max(counts.values())
    return min(value for value, count in counts.items() if count == most)


def spread(values: Sequence[Any], level: Level) -> float | None:
    """Scores (interval): the sample standard deviation; labels: the entropy in bits. None for fewer than 2."""
    if len(values) < 2:
        return None
    if level == "interval":
        return statistics.stdev(float(v) for v in values)
    n = len(values)
    return abs(-sum(c / n * math.log2(c / n) for c in Counter(values).values()))


def within_share(groups: Sequence[Sequence[Sequence[float]]]) -> float | None:
    """Sum of squares within items over the total, pooled over ``groups`` (a judge each: its items, each item
    its samples; each group's deviations from its own grand mean). None when there is no variation."""
    within = total = 0.0
    for items in groups:
        every = [float(v) for item in items for v in item]
        if not every:
            continue
        grand = sum(every) / len(every)
        total += sum((v - grand) ** 2 for v in every)
        for item in items:
            if item:
                mean = sum(item) / len(item)
                within += sum((float(v) - mean) ** 2 for v in item)
    return within / total if total > 0 else None
