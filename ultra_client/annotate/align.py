"""``ultra annotate SOURCE --align RUBRIC``: a copy of a rubric (``rubric_judge``'s declaration format) with the
items where the judge and the people disagree most added as few-shot examples, labelled as the people labelled them.

The labels must have been given on the rubric's own scale (``--scale RUBRIC``: the store records the scale's hash).
Each example carries the rubric's inputs from SOURCE, the people's label (their majority, a tie going to the lower
value) as its score and their comments as its reasoning. The rubric is the file's first declaration; the others are
copied as they are. The original is never touched: the copy goes to a new file, whose name is reserved atomically
and never overwritten. YAML comments are not carried over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ultra_base.errors import InputError, existing_file
from ultra_client.annotate.scales import read_scale
from ultra_client.annotate.source import Item, read_items
from ultra_kit.files import atomic_write_text, new_path
from ultra_kit.labels.agreement import disagreement_report
from ultra_kit.paths.output_root import check_inside_output
from ultra_kit.yaml_files.lines import load_yaml_with_lines, plain


def align(store: str, source: str, rubric: str, out: str, *, examples: int, judge_metric: str) -> tuple[Path, int]:
    """Write the aligned copy of ``rubric`` to ``out``; returns its path and the number of examples added."""
    file = existing_file(rubric, what="rubric declaration (--align)")
    scale = read_scale(str(file))
    report = disagreement_report(store)
    if report["scale"]["hash"] != scale.digest():
        raise InputError(f"the labels in {store} were given on the scale {report['scale']['name']!r}, not on this "
                         "rubric's (label with --scale RUBRIC to align it)", path=str(file))  # fmt: skip
    rows = report["disagreements"][:examples]
    if not rows:
        raise InputError(f"the judge and the people disagree on no item in {store}: no example to add")
    data = plain(load_yaml_with_lines(file, kind="rubric"))
    declarations = data if isinstance(data, list) else [data]
    first = declarations[0]
    items = {item.key: item for item in read_items(source, judge_metric or scale.name)}
    added = [_example(row, items, first, str(file)) for row in rows]
    first["examples"] = [*(first.get("examples") or []), *added]
    target = new_path(check_inside_output(out, setting="--align-out"))
    header = (f"# {file.name} aligned by `ultra annotate --align`: {len(added)} examples where the judge and the "
              f"people disagreed (labels: {store})\n")  # fmt: skip
    text = header + yaml.safe_dump(declarations, sort_keys=False, allow_unicode=True, width=100)
    return atomic_write_text(target, text), len(added)


def _example(row: dict[str, Any], items: dict[str, Item], rubric: dict[str, Any], where: str) -> dict[str, Any]:
    item = items.get(row["key"])
    if item is None:
        raise InputError(f"item {row['key']!r} of the label store is not in SOURCE: give the SOURCE it was labelled "
                         "from", path=where)  # fmt: skip
    fields = {"question": item.question, "answer": item.answer, "reference": item.reference,
              "passages": item.passages}  # fmt: skip
    example: dict[str, Any] = {}
    for name in rubric.get("inputs") or []:
        if name not in fields:
            continue  # rubric_judge names the unknown input when it reads the copy
        if not fields[name]:
            raise InputError(f"the rubric's input {name!r} is empty for item {row['key']!r} in SOURCE", path=where)
        example[name] = fields[name]
    example["score"] = _score(row["human_label"], rubric["scale"])
    comments = [p["comment"] for p in row["people"] if p["comment"]]
    if comments:
        example["reasoning"] = " ".join(comments)
    return example


def _score(value: float, scale: Any) -> Any:
    """The rubric's score for a stored value: the label worth it, or the whole number."""
    if isinstance(scale, dict):
        return next(label for label, worth in scale.items() if float(worth) == value)
    return int(value)
