"""The items to label, read from SOURCE: a dataset (JSONL, or a JSON list of rows), a judge's result file
(``items`` and ``aggregate``; its content from the run folder it lies in), or an ``ultra run`` folder
(``memory.json``: ``q_ls``, ``pred_ls``, ``ret_psg``, ``id_ls``; the judge from a result file under ``files/``).

A dataset row may name its fields in the common ways: the id (``id``, ``item_id``, ``task_id``), the system
(``system``, ``model_id``; default none), the question (``question``, ``query``), the answer (``answer``,
``prediction``, ``response``), the passages (``passages``, ``contexts``: texts or ``{text}``), the judge's
score (``judge``, ``judge_score``), the reference answer (``reference``, ``gt``, ``ground_truth``; only
``--align`` uses it), its samples (``judge_samples``, ``sample_values``) and its reasoning
(``judge_reasoning``, ``reasoning``). Every text is cut to ``MAX_FIELD_CHARS``; nothing is interpreted.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, existing_file
from ultra_client.annotate import MAX_FIELD_CHARS
from ultra_kit.limits.json_files import MAX_RECORD_BYTES, load_json_file
from ultra_kit.readers import read_jsonl

ALIASES = {
    "id": ("id", "item_id", "task_id", "qid"),
    "system": ("system", "model_id", "run"),
    "question": ("question", "query", "q"),
    "answer": ("answer", "prediction", "response", "pred"),
    "passages": ("passages", "contexts", "ret_psg"),
    "judge": ("judge", "judge_score"),
    "reference": ("reference", "gt", "ground_truth"),
    "samples": ("judge_samples", "sample_values"),
    "reasoning": ("judge_reasoning", "reasoning"),
}


@dataclass
class Item:
    """One item to label: what the page shows, and the judge's verdict (hidden unless asked for)."""

    system: str
    item_id: str
    question: str = ""
    answer: str = ""
    passages: list[str] = field(default_factory=list)
    judge: float | None = None
    samples: list[float] = field(default_factory=list)
    reasoning: str = ""
    reference: str = ""  # not shown to annotators; an example of --align carries it when the rubric asks for it

    @property
    def key(self) -> str:
        return f"{self.system}::{self.item_id}" if self.system else self.item_id

    def content_hash(self) -> str:
        """A hash of what a person sees: a label given to other content is recognisable as such."""
        text = json.dumps([self.question, self.answer, self.passages], ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def shown(self, with_judge: bool) -> dict[str, Any]:
        """The item as the page receives it (the judge only when asked for)."""
        out = {"item_id": self.key, "system": self.system, "id": self.item_id, "question": self.question,
               "answer": self.answer, "passages": self.passages}  # fmt: skip
        if with_judge:
            out["judge"] = {"score": self.judge, "samples": self.samples, "reasoning": self.reasoning}
        return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:MAX_FIELD_CHARS]


def _first(row: dict[str, Any], name: str) -> Any:
    return next((row[k] for k in ALIASES[name] if k in row and row[k] is not None), None)


def _passages(value: Any) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [_text(v.get("text", v) if isinstance(v, dict) else v) for v in values][:50]


def _number(value: Any, what: str, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {value!r}", path=where)
    return float(value)


def item_from_row(row: Any, line: int, where: str) -> Item:
    """One dataset row as an item; a row without an id is an error naming its line."""
    if not isinstance(row, dict) or _first(row, "id") is None:
        raise InputError(f"expected an object with an id ({' / '.join(ALIASES['id'])})", path=where, line=line)
    samples = _first(row, "samples")
    if isinstance(samples, dict):  # a judge item's sample_values: {metric: [values]}
        samples = next(iter(samples.values()), [])
    return Item(
        system=str(_first(row, "system") or ""), item_id=str(_first(row, "id")),
        question=_text(_first(row, "question")), answer=_text(_first(row, "answer")),
        passages=_passages(_first(row, "passages")), judge=_number(_first(row, "judge"), "judge", where),
        samples=[float(s) for s in samples or [] if isinstance(s, (int, float))],
        reasoning=_text(_first(row, "reasoning")), reference=_text(_first(row, "reference")),
    )  # fmt: skip


def read_items(source: str, metric: str) -> list[Item]:
    """The items of ``source`` (see the module's docstring); ``metric``: the judge's metric to read as its score."""
    path = Path(source).expanduser()
    if path.is_dir():
        return _run_folder(path, metric)
    file = existing_file(path, what="SOURCE")
    if file.suffix == ".jsonl":
        rows = read_jsonl(file)
    else:
        rows = load_json_file(file, kind="SOURCE", max_bytes=MAX_RECORD_BYTES)
    if isinstance(rows, dict) and isinstance(rows.get("items"), list):
        folder = next((p for p in file.parents if (p / "memory.json").is_file()), None)
        base = _memory_items(folder) if folder else {}
        return _with_judge(base, rows, metric, str(file))
    if not isinstance(rows, list) or not rows:
        raise InputError("SOURCE must hold rows (a dataset), a judge result or be a run folder", path=str(file))
    items = [item_from_row(row, line, str(file)) for line, row in enumerate(rows, start=1)]
    return _unique(items, str(file))


def _memory_items(folder: Path) -> dict[str, Item]:
    memory = load_json_file(folder / "memory.json", kind="memory.json", max_bytes=MAX_RECORD_BYTES)
    questions = memory.get("q_ls") if isinstance(memory, dict) else None
    if not isinstance(questions, list):
        raise InputError("memory.json has no q_ls: nothing to label in this run folder", path=str(folder))
    ids, answers, passages, references = (memory.get(k) or [] for k in ("id_ls", "pred_ls", "ret_psg", "gt_ls"))
    items = {}
    for i, question in enumerate(questions):
        item_id = str(ids[i]) if i < len(ids) else str(i)
        items[item_id] = Item("", item_id, _text(question), _text(answers[i] if i < len(answers) else ""),
                              _passages(passages[i] if i < len(passages) else None),
                              reference=_text(references[i] if i < len(references) else ""))  # fmt: skip
    return items


def _with_judge(base: dict[str, Item], result: dict[str, Any], metric: str, where: str) -> list[Item]:
    """The judge result's items, their content from ``base`` (a run's memory) where it has them."""
    metrics = [k for k in result.get("aggregate") or {} if not k.startswith("num_")]
    chosen = metric if metric in metrics else (metrics[0] if len(metrics) == 1 else None)
    items = []
    for line, row in enumerate(result["items"], start=1):
        item = item_from_row({**(row if isinstance(row, dict) else {}), "judge": None}, line, where)
        item = base.get(item.item_id, item)
        if chosen and row.get("status", "ok") == "ok" and isinstance(row.get(chosen), (int, float)):
            item.judge = float(row[chosen])
            item.samples = [float(v) for v in (row.get("sample_values") or {}).get(chosen) or []]
        item.reasoning = _text(row.get("reasoning") or row.get(f"{chosen}_reasoning"))
        items.append(item)
    return _unique(items, where)


def _run_folder(folder: Path, metric: str) -> list[Item]:
    base = _memory_items(folder) if (folder / "memory.json").is_file() else None
    if base is None:
        raise InputError("not an `ultra run` folder (no memory.json)", path=str(folder))
    for file in sorted((folder / "files").rglob("*.json")) if (folder / "files").is_dir() else []:
        data = load_json_file(file, kind="result file", max_bytes=MAX_RECORD_BYTES)
        if isinstance(data, dict) and isinstance(data.get("items"), list) and isinstance(data.get("aggregate"), dict):
            return _with_judge(base, data, metric, str(file))
    return list(base.values())


def _unique(items: list[Item], where: str) -> list[Item]:
    seen: set[str] = set()
    for item in items:
        if item.key in seen:
            raise InputError(f"item {item.key!r} appears twice: give ids unique within a system", path=where)
        seen.add(item.key)
    if not items:
        raise InputError("SOURCE holds no item to label", path=where)
    return items
