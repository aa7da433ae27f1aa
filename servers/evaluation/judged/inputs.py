"""Judge scores and human labels, from mappings or files, checked against each other.

Judge scores: ``{system: {item_id: score}}``, or per system the path of a result file: an answer judge's JSON
(``items`` with ``id`` and ``status``; the score is the item's ``judge_metric``, or its only metric), or a JSON
object ``{item_id: score}``. Items whose judgment failed (status not ok, or no value) are not judged (a rubric
judge's item: its rubric's own status). Judge samples (``compare_judged``): the same, or per item its
``sample_values`` when the judge ran with ``judge_llm.samples: k``. Human labels: ``{system: {item_id: label}}``,
or a file: JSONL rows (or a JSON list of rows) ``{"system": ..., "item_id": ..., "label": ...}``, a JSON object
``{system: {item_id: label}}``, or the label store of ``ultra annotate`` (``labels.sqlite``). Sampling
probabilities (active selection): ``{item_id: p}``, ``{system: {item_id: p}}``, a JSON file of either, or the
label store (which records them). Ids are compared as text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, readable_path
from ultra_kit.labels.store import is_label_store, label_samples, labels_by_system
from ultra_kit.labels.store import sampling_probs as stored_probs
from ultra_kit.limits.json_files import MAX_RECORD_BYTES
from ultra_kit.readers import read_json, read_jsonl

MIN_HUMAN_LABELS = 10  # fewer labels per system give no usable interval


@dataclass
class Judged:
    """One system's judge scores (ok items only) and the ids whose judgment failed."""

    scores: dict[str, float]
    failed: set[str] = field(default_factory=set)


MAX_MAGNITUDE = 1e100  # a score or label beyond this overflows the variances (their squares pass 1e308)


def _number(value: Any, what: str, path: str | None = None) -> float:
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {value!r}", path=path)
    if abs(value) > MAX_MAGNITUDE:
        raise InputError(f"{what} is {value:g}: scores and labels must lie within ±{MAX_MAGNITUDE:g} (their "
                         "variances would overflow); rescale them", path=path)  # fmt: skip
    return float(value)


def _from_items(items: list[Any], metric: str, path: str | None = None) -> Judged:
    """The scores of a judge's items (``id``, ``status``, the metric); items not ok or without a value failed."""
    judged = Judged({})
    for item in items:
        if not isinstance(item, dict):
            raise InputError(f"a judge item must be an object with id, status and {metric}", path=path)
        item_id = str(item.get("id"))
        value = item.get(metric)
        own = (item.get("rubrics") or {}).get(metric)  # a rubric judge's item: the rubric's own status
        status = own.get("status", "ok") if isinstance(own, dict) else item.get("status", "ok")
        if status != "ok" or value is None:
            judged.failed.add(item_id)
        else:
            judged.scores[item_id] = _number(value, f"item {item_id}'s {metric}", path)
    return judged


def items_by_system(items: list[Any], system_ls: list[Any] | None, judge_metric: str) -> dict[str, Judged]:
    """Per system the scores of one judge's ``items`` (its output), ``system_ls`` naming each item's system."""
    if not judge_metric:
        raise InputError("set judge_metric: the metric of judged_items to read as the score (e.g. faithfulness)")
    if not isinstance(system_ls, list) or len(system_ls) != len(items):
        size = len(system_ls) if isinstance(system_ls, list) else "no"
        raise InputError(f"judged_items has {len(items)} items but system_ls {size} names: give one system per item")
    grouped: dict[str, list[Any]] = {}
    for system, item in zip(system_ls, items, strict=True):
        grouped.setdefault(str(system), []).append(item)
    out = {}
    for system, group in grouped.items():
        out[system] = _from_items(group, judge_metric)
        if len(out[system].scores) + len(out[system].failed) < len(group):
            raise InputError(f"{system} has two judge items with the same id: give ids unique within a system")
    return out


def _judge_file(path: str, judge_metric: str) -> Judged:
    data = read_json(path, max_bytes=MAX_RECORD_BYTES)
    if isinstance(data, dict) and isinstance(data.get("items"), list) and isinstance(data.get("aggregate"), dict):
        metrics = [k for k in data["aggregate"] if not k.startswith("num_")]
        metric = judge_metric or (metrics[0] if len(metrics) == 1 else "")
        if metric not in metrics:
            raise InputError(f"set judge_metric to one of this judge's metrics: {metrics}", path=path)
        return _from_items(data["items"], metric, path)
    if isinstance(data, dict):
        return Judged({str(k): _number(v, f"the score of item {k}", path) for k, v in data.items()})
    raise InputError("expected an answer judge's result JSON (items, aggregate) or {item_id: score}", path=path)


def judge_scores(judged: dict[str, Any], judge_metric: str) -> dict[str, Judged]:
    """Per system its judge scores, from a mapping ``{item_id: score}`` or a result file's path."""
    if not isinstance(judged, dict) or not judged:
        raise InputError("judged must be {system: {item_id: score}} or {system: path of a judge result file}")
    out = {}
    for system, value in judged.items():
        if isinstance(value, str):
            out[str(system)] = _judge_file(value, judge_metric)
        elif isinstance(value, dict):
            out[str(system)] = Judged({str(k): _number(v, f"judged[{system!r}][{k!r}]") for k, v in value.items()})
        else:
            raise InputError(f"judged[{system!r}] must be {{item_id: score}} or a file path")
    return out


def judge_samples(samples: dict[str, Any], judge_metric: str) -> dict[str, dict[str, list[float]]]:
    """Per system, per item its judge samples: from ``{item_id: [s1, ..., sk]}``, or from judge result files
    (a path or a list of them): each file gives each item the samples it recorded (``sample_values``, written
    by a judge run with ``judge_llm.samples: k``) or its one value, so one file of a k-sample run, or k files
    of single passes, give k samples per item; or a file of ``{item_id: [samples]}``."""
    if not isinstance(samples, dict) or not samples:
        raise InputError("samples must be {system: {item_id: [scores]}} or {system: [judge result files]}")
    out: dict[str, dict[str, list[float]]] = {}
    for system, value in samples.items():
        if isinstance(value, str):
            data = read_json(value, max_bytes=MAX_RECORD_BYTES)
            value = [value] if _is_result(data) else data
        per_item: dict[str, list[float]] = {}
        if isinstance(value, list):
            for path in value:
                for item_id, scores in _sample_file(str(path), judge_metric).items():
                    per_item.setdefault(item_id, []).extend(scores)
        elif isinstance(value, dict):
            for item_id, scores in value.items():
                listed = scores if isinstance(scores, list) else [scores]
                per_item[str(item_id)] = [_number(v, f"a sample of {system}/{item_id}") for v in listed]
        else:
            raise InputError(f"samples[{system!r}] must be {{item_id: [scores]}} or judge result files")
        out[str(system)] = {i: v for i, v in per_item.items() if v}
    return out


def _is_result(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("items"), list) and isinstance(data.get("aggregate"), dict)


def _sample_file(path: str, judge_metric: str) -> dict[str, list[float]]:
    """Per ok item of a judge result file its recorded samples of the metric (else its value, one sample)."""
    data = read_json(path, max_bytes=MAX_RECORD_BYTES)
    if not _is_result(data):
        return {item_id: [score] for item_id, score in _judge_file(path, judge_metric).scores.items()}
    judged = _judge_file(path, judge_metric)  # checks the metric, and which items count
    metric = judge_metric or next(k for k in data["aggregate"] if not k.startswith("num_"))
    return item_samples(data["items"], judged, metric, path)


def item_samples(items: list[Any], judged: Judged, metric: str, path: str | None = None) -> dict[str, list[float]]:
    """Per item ``judged`` kept (ok, with a value): its recorded samples of ``metric``, else its value."""
    out = {}
    for item in items:
        item_id = str(item.get("id"))
        if item_id not in judged.scores:
            continue
        values = item.get("sample_values") or {}
        if not isinstance(values, dict):
            where = f"{path}: " if path else ""
            raise InputError(f"{where}item {item_id}'s sample_values must be a mapping {{metric: [k samples]}} (as a "
                             f"judge run with judge_llm.samples k writes it), got {type(values).__name__}")  # fmt: skip
        recorded = values.get(metric)
        known = [_number(v, f"a sample of item {item_id}'s {metric}", path) for v in recorded or [] if v is not None]
        out[item_id] = known or [judged.scores[item_id]]
    return out


def samples_of_systems(
    samples: dict[str, Any] | str | None,
    judged_items: list[Any] | None,
    system_ls: list[Any] | None,
    sample_files: dict[str, Any],
    judge_metric: str,
) -> dict[str, dict[str, list[float]]]:
    """``compare_judged``'s samples per system, per item: from ``samples``, else ``judged_items`` with
    ``system_ls``, else ``sample_files`` (of at least two systems). ``samples`` may be ``ultra annotate``'s label
    store: each item's samples are its annotators' labels."""
    if isinstance(samples, str):
        if not is_label_store(samples):
            raise InputError("samples as a file must be ultra annotate's label store (.sqlite); give judge result "
                             "files per system: {system: file}", path=samples)  # fmt: skip
        samples = label_samples(readable_path(samples, setting="samples"))
    source = samples if samples is not None else sample_files
    if samples is None and judged_items is not None:
        return samples_by_system(judged_items, system_ls, judge_metric)
    if not source or len(source) < 2:
        raise InputError("give samples (or sample_files) of at least two systems, or judged_items with system_ls")
    return judge_samples(dict(source), judge_metric)


def samples_by_system(
    items: list[Any], system_ls: list[Any] | None, judge_metric: str
) -> dict[str, dict[str, list[float]]]:
    """Per system, per item its samples, from one judge's ``items`` over several systems (``system_ls``)."""
    scores = items_by_system(items, system_ls, judge_metric)
    grouped: dict[str, list[Any]] = {}
    for system, item in zip(system_ls or [], items, strict=True):
        grouped.setdefault(str(system), []).append(item)
    return {system: item_samples(grouped[system], scores[system], judge_metric) for system in scores}


def _label_rows(rows: list[Any], path: str) -> dict[str, dict[str, float]]:
    labels: dict[str, dict[str, float]] = {}
    for line, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not {"system", "item_id", "label"} <= set(row):
            raise InputError("expected a row {system, item_id, label}", path=path, line=line)
        system, item_id = str(row["system"]), str(row["item_id"])
        if item_id in labels.setdefault(system, {}):
            raise InputError(f"a second label for {system}/{item_id}: give one label per item (average raters first)",
                             path=path, line=line)  # fmt: skip
        labels[system][item_id] = _number(row["label"], "label", path)
    return labels


def human_labels(human: dict[str, Any] | str) -> dict[str, dict[str, float]]:
    """Per system its human labels, from a mapping or a file (see the module's docstring)."""
    if isinstance(human, str) and is_label_store(human):
        return labels_by_system(human)
    if isinstance(human, str):
        data: Any = (
            read_jsonl(human, max_bytes=MAX_RECORD_BYTES)
            if Path(human).suffix == ".jsonl"
            else read_json(human, max_bytes=MAX_RECORD_BYTES)
        )
        if isinstance(data, list):
            return _label_rows(data, human)
        source = human
    else:
        data, source = human, None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InputError("human labels must be {system: {item_id: label}} or rows {system, item_id, label}",
                         path=source)  # fmt: skip
    return {
        str(s): {str(k): _number(v, f"the label of {s}/{k}", source) for k, v in d.items()} for s, d in data.items()
    }


def checked(judged: dict[str, Judged], labels: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Refuse labels of unknown systems or of ids never judged, and systems with fewer than 10 labels.

    Returns, per system, the labelled ids whose judgment failed (left out of the analysis).
    """
    unknown = sorted(set(labels) - set(judged))
    if unknown:
        raise InputError(f"human labels for systems that were not judged: {unknown}; judged: {sorted(judged)}")
    dropped = {}
    for system, judged_system in judged.items():
        ids = labels.get(system, {})
        never = sorted(set(ids) - set(judged_system.scores) - judged_system.failed)
        if never:
            raise InputError(f"{len(never)} human labels of {system} are for ids that were not judged: {never[:5]}")
        dropped[system] = sorted(set(ids) & judged_system.failed)
        usable = len(ids) - len(dropped[system])
        if usable < MIN_HUMAN_LABELS:
            raise InputError(
                f"{system} has {usable} human labels on judged items; at least {MIN_HUMAN_LABELS} are needed "
                "for an interval: label more items"
            )
    return dropped


def _probability(value: Any, what: str, path: str | None) -> float:
    p = _number(value, what, path)
    if not 0 < p <= 1:
        raise InputError(f"{what} must be a probability in (0, 1], got {p}", path=path)
    return p


def sampling_probabilities(probs: dict[str, Any] | str, systems: list[str]) -> dict[str, dict[str, float]]:
    """Per system, per item the probability it was labelled with: from ``{item_id: p}`` (every system),
    ``{system: {item_id: p}}``, a JSON file of either, or a label store."""
    source = probs if isinstance(probs, str) else None
    if isinstance(probs, str):
        if is_label_store(probs):
            return stored_probs(probs)
        probs = read_json(probs, max_bytes=MAX_RECORD_BYTES)
    if not isinstance(probs, dict) or not probs:
        raise InputError("sampling_probs must be {item_id: p}, {system: {item_id: p}} or a file", path=source)
    if all(isinstance(v, dict) for v in probs.values()):
        return {str(s): {str(k): _probability(p, f"the probability of {s}/{k}", source) for k, p in d.items()}
                for s, d in probs.items()}  # fmt: skip
    same = {str(k): _probability(p, f"the probability of item {k}", source) for k, p in probs.items()}
    return {system: same for system in systems}
