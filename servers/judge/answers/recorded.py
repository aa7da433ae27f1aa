"""Recorded judgments: an answer judge's values read from a file of judgments made earlier; nothing is sent.

The file (``recorded_judgments``) is JSONL, or a JSON list, of rows ``{"id": ..., "answer": ..., METRIC: value}``
(MT-RAG's stored scores, or another tool's). An item takes the row with its id and, when the row gives an
``answer``, the same answer: so one file may hold several systems' answers to one question. An item with no such
row, or whose row has no number for any of the judge's metrics, fails (``error``, counted like any failure); an
item without an answer stays ``unanswered``. The rows' other fields (``system``, ``source`` ...) are not read.
"""

from __future__ import annotations

import math
from typing import Any

from servers.judge.answers.declare import AnswerJudge
from ultra_base.errors import InputError
from ultra_kit.answered import UNANSWERED
from ultra_kit.limits.json_files import MAX_RECORD_BYTES
from ultra_kit.readers import read_json, read_jsonl

NOT_RECORDED = "no recorded judgment for this id and answer"


def read_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a recorded-judgments file, each checked to be an object with an ``id``."""
    # judgments a run recorded: within the size limit of the records a run writes
    rows = (
        read_jsonl(path, max_bytes=MAX_RECORD_BYTES)
        if path.endswith(".jsonl")
        else read_json(path, max_bytes=MAX_RECORD_BYTES)
    )
    if not isinstance(rows, list):
        raise InputError("expected JSONL rows (or a JSON list) {id, answer, metric: value}", path=path)
    for line, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or "id" not in row:
            raise InputError("expected a row {id, answer, metric: value}", path=path, line=line)
    return rows


def _value(row: dict[str, Any], metric: str, path: str) -> float | None:
    value = row.get(metric)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"row {row['id']!r}: {metric} must be a finite number or null, got {value!r}", path=path)
    return float(value)


def recorded_results(judge: AnswerJudge, items: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """Per item its result (``id``, ``status``, the judge's metrics, ``requests`` 0), read from ``path``."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in read_rows(path):
        by_id.setdefault(str(row["id"]), []).append(row)
    results = []
    for item in items:
        if item.get("unanswered"):
            results.append({"id": item["id"], "status": UNANSWERED, "requests": 0, "cached": False})
            continue
        rows = [r for r in by_id.get(item["id"], []) if "answer" not in r or str(r["answer"]) == item["answer"]]
        values = {metric: _value(rows[0], metric, path) for metric in judge.metrics} if rows else {}
        if any(v is not None for v in values.values()):
            results.append({"id": item["id"], "status": "ok", **values, "requests": 0, "cached": False})
        else:
            results.append({"id": item["id"], "status": "error", "error": NOT_RECORDED, "requests": 0, "cached": False})
    return results
