"""A rubric's ``scale`` as a declaration writes it, read once for every reader: the judge's ``rubric_judge`` (its
scores and their values) and ``ultra annotate --scale RUBRIC.yaml`` (the page's options).

    scale: [1, 5]                        # whole numbers low..high, each worth itself
    scale: {pass: 1, partly: 0.5, fail: 0}   # labels, each worth its own finite number

A label is read as the judge's reply reader reads it (lower case, ``_`` for spaces and dashes). A scale that is not
one raises ``ScaleError``: its message, and the label at fault where the fault is one label's; the caller turns it
into an error at its file and line (``line_of(scale, label)``, or the line of the ``scale`` key).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ultra_kit.yaml_files.lines import plain

MAX_SCALE_VALUES = 21  # [0, 20] at most: a schema enum, and a scale a judge can use


@dataclass(frozen=True)
class RubricScale:
    """A read scale: each score (a whole number, or a label) and its value, in the order declared."""

    values: dict[Any, float]
    labelled: bool


class ScaleError(ValueError):
    """A scale that is not one; ``label``: the label at fault (None: the scale as a whole)."""

    def __init__(self, message: str, label: Any = None) -> None:
        super().__init__(message)
        self.label = label


def read_rubric_scale(value: Any) -> RubricScale:
    """``value`` (a rubric's ``scale``) read: ``[low, high]`` (two whole numbers, low < high) or labels with finite
    numbers, each label worth its own value, 2 to ``MAX_SCALE_VALUES`` scores; ScaleError saying what is wrong."""
    if isinstance(value, list):
        return _bounds(value)
    if isinstance(value, Mapping):
        return _labels(value)
    raise ScaleError("scale must be [low, high] (whole numbers) or labels with values {pass: 1, fail: 0}")


def _bounds(value: list[Any]) -> RubricScale:
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ScaleError(f"scale [low, high] takes two whole numbers, got {plain(value)!r}")
    low, high = value
    if not low < high:
        raise ScaleError(f"scale [{low}, {high}] has {'one value' if low == high else 'low > high'}: a scale needs "
                         "two values or more, low first")  # fmt: skip
    if high - low + 1 > MAX_SCALE_VALUES:
        raise ScaleError(f"scale [{low}, {high}] has more than {MAX_SCALE_VALUES} values")
    return RubricScale({score: float(score) for score in range(low, high + 1)}, labelled=False)


def _labels(value: Mapping[Any, Any]) -> RubricScale:
    values: dict[str, float] = {}
    labels_of: dict[float, Any] = {}  # a value -> the label that took it first
    for label, worth in value.items():
        key = str(label).strip().lower().replace(" ", "_").replace("-", "_")  # as the reply reader reads it
        if not key or isinstance(worth, bool) or not isinstance(worth, (int, float)) or not math.isfinite(worth):
            raise ScaleError(f"scale label {plain(label)!r} must be a non-empty label with a finite number, got "
                             f"{plain(worth)!r}")  # fmt: skip
        if key in values:
            raise ScaleError(f"scale label {plain(label)!r} is given twice")
        if float(worth) in labels_of:
            first = labels_of[float(worth)]
            raise ScaleError(f"scale labels {plain(first)!r} and {plain(label)!r} are both worth {worth:g}: each label "
                             "needs its own value, or a value (a judge's score, a stored label) would not say which "
                             "label was chosen; give them different values ({pass: 1, fail: 0}) or merge them into "
                             "one label", label=label)  # fmt: skip
        values[key] = float(worth)
        labels_of[float(worth)] = label
    if len(values) < 2:
        raise ScaleError("the scale has one value: give two labels or more ({pass: 1, fail: 0})")
    if len(values) > MAX_SCALE_VALUES:
        raise ScaleError(f"the scale has more than {MAX_SCALE_VALUES} labels")
    return RubricScale(values, labelled=True)
