"""Which item next: a seeded random order (``uniform``), or active selection (Zrnic & Candès, ICML 2024): each item
is drawn with probability rising with the judge's expected error there, mixed with a uniform share so that no
item is left with a tiny probability (which would make its inverse weight explode).

The judge's expected error comes from what the judge left behind: the spread of its samples (a jury's members,
or repeated samples of one judge), else, for a score that is an expectation over the scale (a logprob-weighted
score), how far it sits from the scale's ends. With neither, active selection has nothing to go on and the
order is uniform.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def expected_error(scores: Sequence[float | None], samples: Sequence[Sequence[float]], low: float,
                   high: float) -> np.ndarray | None:  # fmt: skip
    """Per item the judge's expected error on the 0-1 scale: its samples' standard deviation when some item has
    two samples or more, else sqrt(p (1 - p)) of its score rescaled to p in [0, 1]; None with no judge score."""
    span = (high - low) or 1.0
    if any(len(s) > 1 for s in samples):
        return np.array([float(np.std(np.asarray(s, float) / span)) if len(s) > 1 else 0.0 for s in samples])
    if not scores or any(s is None for s in scores):
        return None
    p = np.clip((np.asarray(scores, float) - low) / span, 0.0, 1.0)
    return np.sqrt(p * (1 - p))


def active_probabilities(error: np.ndarray, budget: float, uniform_share: float) -> np.ndarray:
    """Per item its probability of being labelled: proportional to ``error`` mixed with ``uniform_share`` of the
    uniform rule, summing to ``budget`` (the expected number of labels), none above 1 (the excess is spread
    over the others)."""
    n = len(error)
    if budget >= n:
        return np.ones(n)
    error = np.asarray(error, float)
    weights = error / error.mean() if error.mean() > 0 else np.ones(n)
    weights = (1 - uniform_share) * weights + uniform_share
    probs = np.zeros(n)
    free = np.ones(n, bool)
    left = float(budget)
    while True:
        probs[free] = left * weights[free] / weights[free].sum()
        over = free & (probs >= 1)
        if not over.any():
            return probs
        probs[over] = 1.0
        free &= ~over
        left = budget - float(probs[~free].sum())


def draw(probs: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(drawn, order): each item drawn with its probability, and a seeded random order of all items."""
    rng = np.random.default_rng(seed)
    drawn = rng.uniform(size=len(probs)) < probs
    return drawn, rng.permutation(len(probs))
