"""``ultra annotate --export``: the label store written in the formats the evaluation tools read.

- ``human_labels.jsonl``: rows ``{system, item_id, label}`` (the mean of an item's annotators), ``ppi``'s
  ``human_path``;
- ``sampling_probs.json``: ``{system: {item_id: p}}``, ``ppi``'s ``sampling_probs`` (active selection only);
- ``human_samples.json``: ``{system: {item_id: [each annotator's label]}}``, ``compare_judged``'s ``samples``;
- ``qrels.human.txt``: ``system 0 item_id label`` (an UMBRELA labelling's items are query / passage pairs:
  the system is the query id, the item id the passage's), ``judge_agreement``'s ``human_qrels_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ultra_kit.files import atomic_write_json, atomic_write_text
from ultra_kit.labels.store import current_labels, label_samples, labels_by_system, sampling_probs
from ultra_kit.paths.output_root import check_inside_output


def export(store: str, folder: str) -> dict[str, str]:
    """Write the four files into ``folder`` (under the output root); returns {name: path}."""
    out = check_inside_output(folder, setting="--export")
    out.mkdir(parents=True, exist_ok=True)
    labels = labels_by_system(store)
    rows = [{"system": s, "item_id": i, "label": v} for s, items in labels.items() for i, v in items.items()]
    written = {
        "human_labels": atomic_write_text(out / "human_labels.jsonl",
                                          "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)),
        "human_samples": atomic_write_json(out / "human_samples.json", label_samples(store)),
        "qrels": atomic_write_text(out / "qrels.human.txt", "".join(
            f"{r['system'] or 'q'} 0 {r['item_id']} {_grade(r['label'])}\n" for r in rows)),
    }  # fmt: skip
    probs = sampling_probs(store)
    if probs:
        written["sampling_probs"] = atomic_write_json(out / "sampling_probs.json", probs)
    written["annotators"] = atomic_write_json(out / "annotators.json", _annotators(store))
    return {name: str(Path(path)) for name, path in written.items()}


def _grade(value: float) -> str:
    return str(int(round(value)))


def _annotators(store: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in current_labels(store):
        counts[row["annotator"]] = counts.get(row["annotator"], 0) + 1
    return counts
