"""SQuAD v2's no-answer items: an item whose golds are empty scores 1 if the normalised prediction is
empty, else 0; with both kinds of item the result adds the HasAns / NoAns breakdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servers.evaluation.answers.items import Item


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def merge_no_answer(items: list[Item], has_answer: list[bool], answered: list[float]) -> list[float]:
    """Values of the answerable items, in order, with each no-answer item scored by abstention.

    A no-answer item scores 1 if its normalised prediction is empty, else 0 (SQuAD v2).
    """
    values = iter(answered)
    return [next(values) if known else float(not item.pred_norm) for item, known in zip(items, has_answer, strict=True)]


def split_means(per_item: dict[str, list[float]], has_answer: list[bool]) -> dict[str, Any]:
    """SQuAD v2's breakdown: the means over answerable (HasAns) and unanswerable (NoAns) items."""
    out: dict[str, Any] = {"num_HasAns": sum(has_answer), "num_NoAns": len(has_answer) - sum(has_answer)}
    for name, values in per_item.items():
        out[f"avg_{name}_HasAns"] = mean([v for v, known in zip(values, has_answer, strict=True) if known])
        out[f"avg_{name}_NoAns"] = mean([v for v, known in zip(values, has_answer, strict=True) if not known])
    return out
