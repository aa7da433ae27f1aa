"""A model of the judge's error |judge - human|, fitted on the labels given so far: active selection's fourth
source of the judge's expected error (docs/annotate.md, "Which item next").

Features per item (``item_features``): the judge's score p rescaled to [0, 1], its closeness to the middle
sqrt(p (1 - p)), the spread of its samples, the lengths of the question, the answer and the passages, the number
of passages and, with several systems, which system answered. The model is a ridge regression on standardised
features, its penalty chosen by leave-one-out error among ``PENALTIES``; it is used only when its leave-one-out
error is below that of the labels' mean (a model that does not beat the constant says nothing about which items
the judge gets wrong, and its noise would only cost labels). Plain numpy: a closed form, refitted on each new label.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ultra_client.annotate.source import Item

PENALTIES = (0.1, 1.0, 10.0, 100.0)  # ridge penalties tried, on standardised features
MAX_SYSTEMS = 20  # systems beyond this many get no indicator feature of their own


def item_features(items: Sequence[Item], low: float, high: float) -> np.ndarray:
    """One row per item: judge score, its closeness to the middle, sample spread, text lengths, system."""
    span = (high - low) or 1.0
    p = np.array([np.clip(((i.judge if i.judge is not None else low) - low) / span, 0, 1) for i in items])
    columns = [
        p,
        np.sqrt(p * (1 - p)),
        np.array([np.std(np.asarray(i.samples) / span) if len(i.samples) > 1 else 0.0 for i in items]),
        np.log1p([len(i.question) for i in items]),
        np.log1p([len(i.answer) for i in items]),
        np.log1p([sum(len(t) for t in i.passages) for i in items]),
        np.array([len(i.passages) for i in items], float),
    ]
    systems = list(dict.fromkeys(i.system for i in items))
    if len(systems) > 1:
        columns += [np.array([i.system == s for i in items], float) for s in systems[:MAX_SYSTEMS]]
    return np.column_stack(columns)


def _loo_ridge(x: np.ndarray, e: np.ndarray, penalty: float) -> tuple[float, np.ndarray]:
    """Leave-one-out mean squared error of a ridge fit (intercept unpenalised: x and e centred), and the weights."""
    gram = x.T @ x + penalty * np.eye(x.shape[1])
    weights = np.linalg.solve(gram, x.T @ e)
    hat = np.einsum("ij,ji->i", x, np.linalg.solve(gram, x.T)) + 1.0 / len(e)  # the centring is a fit too
    residual = (e - x @ weights) / np.clip(1.0 - hat, 1e-9, None)
    return float(np.mean(residual**2)), weights


def fit_error(features: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, float] | None:
    """(weights on standardised features, mean error) of the best ridge fit of ``error`` on ``features``, or
    None when no fit's leave-one-out error beats the mean's (or the error is constant)."""
    error = np.asarray(error, float)
    n = len(error)
    if n < 3 or np.ptp(error) == 0:
        return None
    mean, scale = features.mean(axis=0), features.std(axis=0)
    keep = scale > 0
    if not keep.any():
        return None
    x = (features[:, keep] - mean[keep]) / scale[keep]
    centred = error - error.mean()
    constant = float(np.mean((centred * n / (n - 1)) ** 2))  # leave-one-out error of the mean
    loss, weights = min((_loo_ridge(x, centred, penalty) for penalty in PENALTIES), key=lambda fit: fit[0])
    if loss >= constant:
        return None
    full = np.zeros(len(keep))
    full[keep] = weights / scale[keep]
    return full, float(error.mean() - (mean * full).sum())


def predict_error(model: tuple[np.ndarray, float], features: np.ndarray) -> np.ndarray:
    """The fitted model's expected error per item, kept in [0, 1]."""
    weights, intercept = model
    return np.clip(features @ weights + intercept, 0.0, 1.0)
