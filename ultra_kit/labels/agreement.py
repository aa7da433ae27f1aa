"""What people and the judge disagree on, read from a label store: what the disagreements page of ``ultra annotate``,
the report's section and ``ultra annotate --align`` show.

- **Between annotators**: Krippendorff's alpha (nominal, ordinal, interval) over the items two or more people
  labelled (``ultra_kit.reliability``).
- **Judge and people**: per item, the people's label is their majority (a tie goes to the lower value) and the
  judge's score is snapped to the nearest value on the scale (a tie goes to the lower). Over the items with both:
  the confusion matrix (rows people, columns judge), exact agreement, Cohen's kappa and the quadratic-weighted kappa.
- **Disagreements**: the items whose judge verdict differs from the people's label, the largest gap
  |judge - mean of the people's values| first (then by key), each with the people's values and comments and the
  judge's reasoning.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from ultra_kit.labels.store import current_labels, open_store
from ultra_kit.limits.json_files import loads_limited
from ultra_kit.reliability import LEVELS, cohen_kappa, confusion_matrix, krippendorff_alpha, majority, weighted_kappa


def disagreement_report(path: str | Path) -> dict[str, Any]:
    """The agreement figures and every disagreeing item of the store at ``path`` (see the module's docstring)."""
    with open_store(path) as connection:
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        items = {row["key"]: dict(row) for row in connection.execute("SELECT key, system, item_id, judge FROM items")}
        has_reasons = connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'reasons'").fetchone()
        reasons = dict(connection.execute("SELECT key, reasoning FROM reasons").fetchall()) if has_reasons else {}
    scale = loads_limited(meta.get("scale") or "{}", path=f"{path} (its scale)")
    values = sorted(float(option["value"]) for option in scale.get("options") or [])
    names = {float(option["value"]): str(option["label"]) for option in scale.get("options") or []}
    given: dict[str, list[dict[str, Any]]] = {}
    for row in current_labels(path):
        given.setdefault(row["key"], []).append(
            {"annotator": row["annotator"], "value": float(row["value"]), "comment": row["comment"] or ""}
        )
    annotators: dict[str, int] = {}
    for labels in given.values():
        for label in labels:
            annotators[label["annotator"]] = annotators.get(label["annotator"], 0) + 1
    units = [[label["value"] for label in labels] for labels in given.values()]
    alpha = {level: krippendorff_alpha(units, level) for level in LEVELS}
    rows = [_row(key, items[key], labels, values, reasons.get(key, "")) for key, labels in given.items()]
    judged = [row for row in rows if row["judge"] is not None]
    pairs = [(row["human_label"], row["judge_on_scale"]) for row in judged]
    disagreeing = sorted((row for row in judged if row["human_label"] != row["judge_on_scale"]),
                         key=lambda row: (-row["gap"], row["key"]))  # fmt: skip
    return {
        "scale": {
            "name": scale.get("name", ""),
            "hash": meta.get("scale_hash", ""),
            "values": values,
            "labels": [names[v] for v in values],
        },  # fmt: skip
        "items_labelled": len(given),
        "annotators": annotators,
        "alpha": {**alpha, "units": sum(len(unit) >= 2 for unit in units)},
        "judge": {
            "pairs": len(pairs),
            "labels": values,
            "rows": "people",
            "columns": "judge",
            "matrix": confusion_matrix(pairs, values) if pairs else [],
            "exact_agreement": sum(h == j for h, j in pairs) / len(pairs) if pairs else None,
            "kappa": cohen_kappa(pairs),
            "kappa_quadratic": weighted_kappa(pairs, values, "quadratic"),
        },
        "disagreements": disagreeing,
    }


def nearest(value: float, values: list[float]) -> float:
    """The value on the scale nearest ``value``; a tie goes to the lower."""
    return min(values, key=lambda v: (abs(v - value), v))


def _row(key: str, item: dict[str, Any], labels: list[dict[str, Any]], values: list[float], why: str) -> dict:
    people = [label["value"] for label in labels]
    judge = item["judge"]
    return {
        "key": key,
        "system": item["system"],
        "item_id": item["item_id"],
        "people": labels,
        "human_label": majority(people),
        "human_mean": statistics.fmean(people),
        "judge": judge,
        "judge_on_scale": nearest(judge, values) if judge is not None else None,
        "gap": abs(judge - statistics.fmean(people)) if judge is not None else None,
        "reasoning": why,
    }
