"""``target.ask``'s records read as a run: a per-item ``latency`` column (seconds, lower is better, drawn as an
ECDF; compare adds its p50 and p95 rows: ``servers.report.compare.latency``).

The records are the JSON Lines ``target.ask`` writes (``result_path``): one object per item with ``id``,
``status`` (``ok`` or ``error``), ``latency`` (seconds of the attempt that answered; None for a failed or
cached item), ``question`` and ``answer``. A failed item has no latency (it is counted, never scored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.report.model import Found
from servers.report.readers import new_run
from ultra_base.errors import InputError

LATENCY = "latency"  # the column's name: seconds per item
QUANTILES = (50, 95)  # compare's rows: the difference of these percentiles between two runs
RECORD_KEYS = ("id", "status", "latency", "question", "answer")
TARGET_RECORDS = "JSON Lines of target.ask's records: {id, status, latency, question, answer ...} per item"


def is_target_records(document: Any) -> bool:
    """A list of ``target.ask`` records (JSON Lines read as a list)."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(r, dict) and all(k in r for k in RECORD_KEYS) for r in document)
    )


def read_target_records(records: list[dict[str, Any]], path: str) -> Found:
    """One run: the ``latency`` of every answered item (lower is better, an ECDF), the questions and answers."""
    ids = [str(record["id"]) for record in records]
    run = new_run(Path(path).stem, "target.ask", path)
    latency = [
        record["latency"] if record["status"] == "ok" and not record.get("cached") else None for record in records
    ]
    if any(value is not None and not isinstance(value, (int, float)) for value in latency):
        raise InputError("a record's latency is not a number of seconds", path=path)
    given = run.add_column(LATENCY, ids, latency, source=f"target.ask: {path}")
    run.lower_is_better.add(given)
    run.kinds[given] = "ecdf"
    run.quantiles[given] = QUANTILES
    for key, record in zip(ids, records, strict=True):
        question, answer = record.get("question"), record.get("answer")
        run.texts.setdefault(key, {"question": str(question or ""), "answer": str(answer or "")})
    failed = sum(record["status"] != "ok" for record in records)
    found = Found("target.ask", [run])
    if failed:
        run.failures["target.ask"] = failed
        found.notes.append(f"target.ask ({Path(path).name}): {failed} of {len(records)} items failed (no latency)")
    return found
