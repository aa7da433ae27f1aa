"""A label store with fixed labels of two annotators on an UMBRELA (0-3) or rubric scale, and the figures it should
give, computed here independently of ``ultra_kit``: Krippendorff's alpha from the pairable-values formula, kappa with
sklearn, the confusion matrix and the order of disagreements by hand."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

from tests.client.annotate.serving import HOSTILE

JUDGE = [0.2, 2.6, 1.0, 3.0, 0.0, 1.4, 2.0, 2.5, 0.9, 3.0]
ANN = [0, 1, 1, 3, 2, 1, 3, 2, 0, 0]
BOB = {0: 0, 1: 0, 2: 2, 3: 3, 4: 2, 5: 1, 9: 1}  # item -> label: bob labels seven items
COMMENTS = {("bob", 1): HOSTILE, ("ann", 4): "the passage answers it in full"}
SCALE = [0.0, 1.0, 2.0, 3.0]


def write_labelled(folder: Path, scale: str = "umbrela") -> tuple[Path, Path]:
    """data.jsonl (the first two items' answer and reasoning hostile) and output/labels.sqlite labelled on
    ``scale`` (a built-in name or a rubric file of scale [0, 3])."""
    from ultra_client.annotate.scales import read_scale
    from ultra_client.annotate.source import read_items
    from ultra_client.annotate.store import LabelStore

    rows = [{"id": f"q{i}", "question": f"Question {i}?", "answer": HOSTILE if i == 1 else f"Answer {i}",
             "passages": [f"passage {i}"], "judge": score,
             "judge_reasoning": HOSTILE if i == 1 else f"reason {i}"} for i, score in enumerate(JUDGE)]  # fmt: skip
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store_path = folder / "output" / "labels.sqlite"
    items = read_items(str(data), "")
    store = LabelStore(store_path, read_scale(scale))
    queue = [{"position": i, "prob": None, "drawn": True, "copies": 2} for i in range(len(items))]
    store.setup(items, queue, {"select": "uniform", "seed": 0, "budget": 10, "source": str(data)})
    for who, labels in (("ann", dict(enumerate(ANN))), ("bob", BOB)):
        for i, value in labels.items():
            store.record(who, f"q{i}", "label", float(value), COMMENTS.get((who, i)))
    store.record("bob", "q8", "skip", None, None)  # a skip is no label
    store.close()
    return data, store_path


def people() -> dict[int, list[float]]:
    out = {i: [float(v)] for i, v in enumerate(ANN)}
    for i, v in BOB.items():
        out[i].append(float(v))
    return out


def majority(values: list[float]) -> float:
    counts = Counter(values)
    return min(values, key=lambda v: (-counts[v], v))


def snapped(score: float) -> float:
    return min(SCALE, key=lambda v: (abs(v - score), v))


def alpha(level: str) -> float:
    """Krippendorff's alpha from the pairable values: 1 - (n - 1) * sum_u sum_{i != j in u} d / (m_u - 1) over
    sum_{i != j of all pairable values} d."""
    units = [v for v in people().values() if len(v) >= 2]
    pooled = [v for unit in units for v in unit]
    n = len(pooled)
    counts = Counter(pooled)

    def d(a: float, b: float) -> float:
        if level == "nominal":
            return float(a != b)
        if level == "interval":
            return (a - b) ** 2
        low, high = min(a, b), max(a, b)
        return (sum(counts[g] for g in SCALE if low <= g <= high) - (counts[a] + counts[b]) / 2) ** 2

    within = sum(sum(d(a, b) for a, b in itertools.permutations(unit, 2)) / (len(unit) - 1) for unit in units)
    between = sum(d(a, b) for a, b in itertools.permutations(pooled, 2))
    return 1 - (n - 1) * within / between


def judge_pairs() -> tuple[list[float], list[float]]:
    """(people's majority, judge snapped) per labelled item."""
    labelled = people()
    return [majority(labelled[i]) for i in labelled], [snapped(JUDGE[i]) for i in labelled]


def disagreement_order() -> list[str]:
    labelled = people()
    rows = [(abs(JUDGE[i] - sum(v) / len(v)), f"q{i}") for i, v in labelled.items()
            if majority(v) != snapped(JUDGE[i])]  # fmt: skip
    return [key for _, key in sorted(rows, key=lambda r: (-r[0], r[1]))]
