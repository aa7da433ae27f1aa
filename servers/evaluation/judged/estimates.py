"""PPI estimates per system and per pair of systems, from checked judge scores and human labels."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from servers.evaluation.judged.active import active_judged_mean
from servers.evaluation.judged.inputs import MIN_HUMAN_LABELS, Judged
from servers.evaluation.judged.ppi import judged_mean, z_p_value
from ultra_base.errors import InputError


def _arrays(labels: dict[str, float], scores: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(human labels, judge scores on the labelled ids, judge scores on the others), ids in sorted order."""
    labelled = sorted(set(labels) & set(scores))
    others = sorted(set(scores) - set(labels))
    return (
        np.array([labels[i] for i in labelled]),
        np.array([scores[i] for i in labelled]),
        np.array([scores[i] for i in others]),
    )


def _mean(labels: dict[str, float], scores: dict[str, float], probs: dict[str, float] | None, alpha: float,
          where: str) -> dict[str, Any]:  # fmt: skip
    """PPI++ (``probs`` None), or the active estimate with each labelled item's sampling probability."""
    if probs is None:
        return judged_mean(*_arrays(labels, scores), alpha)
    labelled = sorted(set(labels) & set(scores))
    missing = [i for i in labelled if i not in probs]
    if missing:
        raise InputError(f"sampling_probs has no probability for {len(missing)} labelled items of {where}: "
                         f"{missing[:5]}; give one for every labelled item")  # fmt: skip
    y, f_l, f_u = _arrays(labels, scores)
    return active_judged_mean(y, f_l, np.array([probs[i] for i in labelled]), f_u, alpha)


def system_estimates(
    judged: dict[str, Judged],
    labels: dict[str, dict[str, float]],
    alpha: float,
    probs: dict[str, dict[str, float]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per system: PPI++, classical PPI, judge-only and human-only means (see ``ppi.judged_mean``); with
    sampling probabilities ``probs`` ({system: {item_id: p}}), the active estimate (``active.active_judged_mean``)."""
    return {
        system: _mean(labels[system], j.scores, None if probs is None else probs.get(system, {}), alpha, system)
        for system, j in judged.items()
    }


def pair_estimates(
    judged: dict[str, Judged],
    labels: dict[str, dict[str, float]],
    alpha: float,
    probs: dict[str, dict[str, float]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per pair "A - B": PPI++ on the per-item differences over the items both systems have.

    The labelled items are those both systems have a label and a judge score for; the unlabelled ones those
    both have a judge score for and not both a label. A pair with fewer than 10 such labelled items, or no
    common judged item, is listed with ``skipped`` (why) instead of an estimate. With sampling probabilities, an
    item's probability must be the same for both systems (one draw labels both); a pair where it is not is skipped.
    """
    pairs: dict[str, dict[str, Any]] = {}
    for a, b in combinations(judged, 2):
        scores_a, scores_b = judged[a].scores, judged[b].scores
        common = set(scores_a) & set(scores_b)
        both = set(labels[a]) & set(labels[b]) & common
        key = f"{a} - {b}"
        if len(both) < MIN_HUMAN_LABELS:
            pairs[key] = {"skipped": f"{len(both)} items carry a human label of both systems (at least "
                                     f"{MIN_HUMAN_LABELS} needed)", "n_common": len(common)}  # fmt: skip
            continue
        diff_scores = {i: scores_a[i] - scores_b[i] for i in common}
        diff_labels = {i: labels[a][i] - labels[b][i] for i in both}
        pair_probs = None
        if probs is not None:
            pa, pb = probs.get(a, {}), probs.get(b, {})
            if any(pa.get(i) != pb.get(i) for i in both):
                pairs[key] = {"skipped": "the items were labelled with different probabilities for the two systems",
                              "n_common": len(common)}  # fmt: skip
                continue
            pair_probs = pa
        result = _mean(diff_labels, diff_scores, pair_probs, alpha, key)
        result["p_value"] = z_p_value(result["estimate"], result["se"])
        low, high = result["ci"]
        result["excludes_zero"] = bool(low > 0 or high < 0)
        pairs[key] = result
    return pairs
