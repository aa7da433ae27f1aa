"""Paired comparison of systems whose items carry k judge samples each (``compare_judged``): every pair of systems
over the items both have. The hierarchical bootstrap (resample queries, then judge samples within each query)
lives in the library, ``ultra_trec.significance.compare_samples`` (shared with the report's ``compare``)."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.significance import compare_samples, resampled_differences

__all__ = ["compare_samples", "compare_systems", "resampled_differences"]


def compare_systems(
    per_system: dict[str, dict[str, list[float]]], *, n_resamples: int, seed: int, alpha: float
) -> dict[str, dict[str, Any]]:
    """``{"A - B": the test}`` for every pair of ``per_system`` ({system: {item_id: [k samples]}}), over the items
    both have (at least 2), with the number of items, the samples per item (fewest, most) and the items left out."""
    if len(per_system) < 2:
        raise InputError(f"compare_judged needs at least two systems, got {sorted(per_system)}")
    comparisons: dict[str, dict[str, Any]] = {}
    for a, b in combinations(per_system, 2):
        common = sorted(set(per_system[a]) & set(per_system[b]))
        if len(common) < 2:
            raise InputError(f"{a} and {b} have {len(common)} items in common: a comparison needs at least 2")
        result = compare_samples(
            [np.array(per_system[a][i]) for i in common],
            [np.array(per_system[b][i]) for i in common],
            n_resamples=n_resamples, seed=seed, alpha=alpha,
        )  # fmt: skip
        sizes = [len(per_system[s][i]) for s in (a, b) for i in common]
        result.update(n_items=len(common), samples_per_item=[min(sizes), max(sizes)],
                      items_left_out=len(set(per_system[a]) ^ set(per_system[b])))  # fmt: skip
        comparisons[f"{a} - {b}"] = result
    return comparisons
