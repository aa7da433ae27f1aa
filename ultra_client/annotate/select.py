"""Which item next: a seeded random order (``uniform``), or active selection (Zrnic & Candès, ICML 2024): each item
is drawn with probability rising with the judge's expected error there, mixed with a uniform share so that no
item is left with a tiny probability (which would make its inverse weight explode).

Active selection decides item by item, in a seeded random order, as people need the next item (``Sequential``):
each item's probability is set from the labels given before it is decided, then a fixed uniform number of its
own decides whether it is drawn. So an item's probability never depends on its own draw, and the
inverse-probability-weighted estimate stays unbiased however the probabilities were learnt.

The judge's expected error comes from a model of |judge - human| fitted on the labels so far (``error_model``),
once ``fit_after`` labels are in; when it predicts no better than their mean, the labels say the error is not
predictable, and the probabilities are uniform. Before that, from what the judge left behind: the spread of its
samples (a jury's members, or repeated samples of one judge), else, for a score that is an expectation over the
scale (a logprob-weighted score), how far it sits from the scale's ends; with neither, uniform. Uniform
probabilities are recorded too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ultra_client.annotate.error_model import fit_error, predict_error


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


def own_uniform(seed: int, position: int) -> float:
    """The uniform number that decides the draw of the item at ``position`` in the queue: fixed by the seed, so
    that every server sharing a store draws alike, and independent of everything set before it."""
    return float(np.random.default_rng([seed, 7, position]).uniform())


@dataclass
class Sequential:
    """Active selection's probabilities, set item by item from the labels given so far.

    ``judge`` (0-1 scale), ``features`` (one row per item, ``error_model.item_features``) and ``heuristic``
    (``expected_error``, or None) are per item in SOURCE's order; ``budget`` labels are expected over all items.
    """

    judge: np.ndarray
    features: np.ndarray
    heuristic: np.ndarray | None
    budget: float
    uniform_share: float
    fit_after: int
    _seen: tuple = field(default=(), repr=False)
    _probs: np.ndarray | None = field(default=None, repr=False)
    _source: str = field(default="", repr=False)

    def expected(self, labels: Mapping[int, float]) -> tuple[np.ndarray | None, str]:
        """Per item the judge's expected error and its source, given {item index: human label on 0-1}."""
        if len(labels) >= self.fit_after:
            index = np.fromiter(labels, int, len(labels))
            human = np.fromiter(labels.values(), float, len(labels))
            model = fit_error(self.features[index], np.abs(self.judge[index] - human))
            if model is not None:
                return predict_error(model, self.features), f"fitted on {len(labels)} labels"
            # the labels are the evidence: the model had the judge's uncertainty among its features, and it did
            # not predict the error better than the mean
            return None, f"uniform (no model beats the mean error of {len(labels)} labels)"
        if self.heuristic is not None:
            return self.heuristic, "judge's uncertainty"
        return None, "uniform"

    def probability(self, item: int, undecided: Sequence[int], labels: Mapping[int, float]) -> tuple[float, str]:
        """The probability of drawing ``item`` (one of ``undecided``, the items not decided yet), and its source;
        the probabilities are set again whenever the labels changed."""
        seen = tuple(sorted(labels.items()))
        if self._probs is None or seen != self._seen or self._probs[item] == 0:  # 0: not among the items then left
            error, self._source = self.expected(labels)
            rest = np.asarray(undecided, int)
            budget = self.budget * len(rest) / len(self.judge)  # the budget's share of the items left
            self._probs = np.zeros(len(self.judge))
            if error is None:
                self._probs[rest] = min(1.0, budget / len(rest))
            else:
                self._probs[rest] = active_probabilities(error[rest], budget, self.uniform_share)
            self._seen = seen
        return float(self._probs[item]), self._source


def simulate(
    selector: Sequential, human: np.ndarray, order: np.ndarray, uniforms: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Active selection run to the end with each label given as soon as its item is drawn (people simulated by
    ``human``, on 0-1): per item whether it was drawn, and its probability. Items are decided in ``order``, the
    item at position k drawn when ``uniforms[k]`` is below its probability."""
    drawn, probs, labels = np.zeros(len(human), bool), np.zeros(len(human)), {}
    for k, item in enumerate(order):
        probs[item] = selector.probability(int(item), order[k:], labels)[0]
        if uniforms[k] < probs[item]:
            drawn[item] = True
            labels[int(item)] = float(human[item])
    return drawn, probs


def plan(judge: list[float | None], *, select: str, seed: int, overlap: float) -> tuple[list[dict], str]:
    """Per item its place in the queue: ``position`` (a seeded random order), ``prob`` and ``drawn`` (None under
    active selection, which decides them item by item: ``Sequential``; all drawn under uniform), ``copies``;
    and the selection used (``active`` needs a judge score on every item, else it is ``uniform``)."""
    n = len(judge)
    if select == "active" and any(j is None for j in judge):
        select = "uniform"
    order = np.random.default_rng(seed).permutation(n)
    position = np.empty(n, int)
    position[order] = np.arange(n)
    twice = np.random.default_rng(seed + 1).uniform(size=n) < overlap
    decided = None if select == "active" else True
    queue = [{"position": int(position[i]), "prob": None, "drawn": decided, "copies": 2 if twice[i] else 1}
             for i in range(n)]  # fmt: skip
    return queue, select
