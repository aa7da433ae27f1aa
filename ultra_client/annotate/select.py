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
        spread = np.array([float(np.std(np.asarray(s, float) / span)) if len(s) > 1 else 0.0 for s in samples])
        return spread if spread.any() else None
    if not scores or any(s is None for s in scores):
        return None
    p = np.clip((np.asarray(scores, float) - low) / span, 0.0, 1.0)
    error = np.sqrt(p * (1 - p))
    return error if error.any() else None  # scores only at the scale's ends say nothing of the judge's error


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


def plan(judge: list[float | None], samples: list[list[float]], *, select: str, budget: int, uniform_share: float,
         seed: int, overlap: float, low: float, high: float) -> tuple[list[dict], str]:  # fmt: skip
    """Per item its place in the queue: ``position``, ``prob`` (None under uniform), ``drawn``, ``copies``; and
    the selection used (``active`` falls back to ``uniform`` when the judge left no expected error)."""
    n = len(judge)
    error = expected_error(judge, samples, low, high) if select == "active" else None
    if error is None:
        select, probs, drawn = "uniform", None, np.ones(n, bool)
        order = np.random.default_rng(seed).permutation(n)
    else:
        probs = active_probabilities(error, budget, uniform_share)
        drawn, order = draw(probs, seed)
    position = np.empty(n, int)
    position[order] = np.arange(n)
    twice = np.random.default_rng(seed + 1).uniform(size=n) < overlap
    queue = [{"position": int(position[i]), "prob": None if probs is None else float(probs[i]),
              "drawn": bool(drawn[i]), "copies": 2 if twice[i] else 1} for i in range(n)]  # fmt: skip
    return queue, select
