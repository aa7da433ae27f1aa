"""Active statistical inference for a mean (Zrnic & Candès, "Active Statistical Inference", ICML 2024): items
are labelled with known probabilities pi_i (higher where the judge is expected to err), and the labels correct
the judge's scores with inverse-probability weights.

Over all N judged items, with xi_i = 1 when item i was labelled (with probability pi_i), human label y_i and
judge score f_i:

    Z_i(lam)   = lam * f_i + (y_i - lam * f_i) * xi_i / pi_i
    estimate   = mean(Z(lam))                 se = std(Z(lam)) / sqrt(N)           (divisor N)
    lam_hat    = cov(y * xi / pi, f * (xi / pi - 1)) / var(f * (xi / pi - 1))     (power tuning, divisor N)

lam_hat minimises the estimated variance of the estimate (the paper's power tuning; not clipped), lam = 1 is
the plain augmented inverse-probability-weighted estimator, lam = 0 the inverse-probability-weighted human mean.
Intervals are normal: estimate +- z_(1 - alpha/2) * se. With pi_i = n / N for every item it is PPI++ with the
judge's mean taken over all N items.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from servers.evaluation.judged.ppi import Estimate


def _weighted(y_l: np.ndarray, pi_l: np.ndarray, n_unlabelled: int) -> tuple[np.ndarray, np.ndarray]:
    """Over all N items, labelled first: xi / pi, and y * xi / pi (0 on the unlabelled items)."""
    weights = np.concatenate([1.0 / pi_l, np.zeros(n_unlabelled)])
    return weights, np.concatenate([y_l / pi_l, np.zeros(n_unlabelled)])


def active_lambda(y_l: np.ndarray, f_l: np.ndarray, pi_l: np.ndarray, f_u: np.ndarray) -> float:
    """The variance-minimising lambda of the active estimator; 0 when the judge's correction term is constant."""
    weights, yw = _weighted(y_l, pi_l, len(f_u))
    g = np.concatenate([f_l, f_u]) * (weights - 1.0)
    var = float(np.var(g))
    if var == 0:
        return 0.0
    return float(np.mean((yw - yw.mean()) * (g - g.mean())) / var)


def active_mean_at(y_l: np.ndarray, f_l: np.ndarray, pi_l: np.ndarray, f_u: np.ndarray, lam: float) -> Estimate:
    """The active estimate with a given lambda, and its standard error."""
    weights, _ = _weighted(y_l, pi_l, len(f_u))
    f = np.concatenate([f_l, f_u])
    y = np.concatenate([y_l, np.zeros(len(f_u))])
    z = lam * f + (y - lam * f) * weights
    return Estimate(float(z.mean()), float(np.std(z) / np.sqrt(len(z))))


def active_judged_mean(
    y_l: np.ndarray, f_l: np.ndarray, pi_l: np.ndarray, f_u: np.ndarray, alpha: float
) -> dict[str, Any]:
    """The power-tuned active estimate with its interval and lambda, beside lambda = 1 and lambda = 0.

    ``y_l``, ``f_l``, ``pi_l``: the labelled items' human labels, judge scores and sampling probabilities;
    ``f_u``: the judge scores of the items that were not labelled.
    """
    y_l, f_l, pi_l, f_u = (np.asarray(a, dtype=float) for a in (y_l, f_l, pi_l, f_u))
    lam = active_lambda(y_l, f_l, pi_l, f_u)
    tuned = active_mean_at(y_l, f_l, pi_l, f_u, lam)
    ipw = active_mean_at(y_l, f_l, pi_l, f_u, 0.0)
    return {
        **tuned.as_dict(alpha),
        "lambda": lam,
        "method": "active (Zrnic & Candes 2024): inverse-probability weights, power-tuned lambda",
        "aipw": active_mean_at(y_l, f_l, pi_l, f_u, 1.0).as_dict(alpha),
        "human_only": ipw.as_dict(alpha),
        "effective_n": len(y_l) * ipw.se**2 / tuned.se**2 if tuned.se > 0 else None,
        "n_human": len(y_l),
        "n_unlabelled": len(f_u),
        "note": None,
    }
