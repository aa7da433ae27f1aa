"""``trec_rag_table``: the open-rag-eval "TREC evaluator" results as one table, one row per (query, run).

Joins what ``umbrela_judge`` (per query), ``nuggetize`` (per query and run), ``citation_judge`` and
``idk_judge`` (per answer) return, and writes the rows as CSV and JSON (a list of row objects), ready for
pandas or a spreadsheet. Pure: no LLM request; the joins are checked, never guessed.

rows = build_rows(umbrela_per_query, nugget_per_query, citation_items, idk_items)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_json, atomic_write_text, csv_text, result_path, unique_path

CITATION_FIELDS = ("citation_precision", "citation_recall", "citation_f1", "num_citations", "invalid_citations")
IDK_FIELDS = ("idk", "answer_attempted")
# scores that are only meaningful when the item's status is ok (a failure never becomes a score)
_SCORED = {"citation": CITATION_FIELDS[:3], "idk": IDK_FIELDS}


class TrecRagTableResult(TypedDict):
    table_path: str
    table_json_path: str
    columns: list[str]
    num_rows: int
    rows: list[dict[str, Any]]  # the table, a row per (query, run)
    aggregate: dict[str, dict[str, Any]]
    unanswered_queries: list[str]


def _answer_keys(nugget_per_query: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """Item id -> (qid, run): ``<qid>/<run>`` always, and the bare ``<qid>`` when the query has one run."""
    keys: dict[str, tuple[str, str]] = {}
    for qid, runs in nugget_per_query.items():
        if not isinstance(runs, Mapping) or not runs:
            raise InputError(f"nugget_per_query[{qid!r}] must map run names to scores (nuggetize's per_query)")
        for run in runs:
            keys[f"{qid}/{run}"] = (str(qid), str(run))
        if len(runs) == 1:
            keys[str(qid)] = (str(qid), str(next(iter(runs))))
    return keys


def _index(
    name: str, items: Sequence[Mapping[str, Any]], keys: dict[str, tuple[str, str]]
) -> dict[tuple[str, str], Mapping[str, Any]]:
    indexed: dict[tuple[str, str], Mapping[str, Any]] = {}
    for position, item in enumerate(items):
        if not isinstance(item, Mapping) or "id" not in item:
            raise InputError(f"{name}[{position}] has no 'id': pass the `items` output of the judge")
        key = keys.get(str(item["id"]))
        if key is None:
            raise InputError(
                f"{name}[{position}] has id {item['id']!r}, which names no answer of nugget_per_query: "
                f"give each answer the id '<qid>/<run>' (or '<qid>' when the query has one run), e.g. "
                f"{next(iter(keys), '<qid>/<run>')!r}"
            )
        if key in indexed:
            raise InputError(f"{name} has two items for query {key[0]!r}, run {key[1]!r} (id {item['id']!r})")
        indexed[key] = item
    return indexed


def _scored(item: Mapping[str, Any], kind: str, field: str) -> Any:
    if field in _SCORED[kind] and item.get("status") != "ok":
        return None
    return item.get(field)


def build_rows(
    umbrela_per_query: Mapping[str, Mapping[str, Any]],
    nugget_per_query: Mapping[str, Mapping[str, Mapping[str, Any]]],
    citation_items: Sequence[Mapping[str, Any]],
    idk_items: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, rows): one row per answer, in the order of ``citation_items``.

    Every answer of ``nugget_per_query`` needs exactly one citation item and one IDK item and its query
    an UMBRELA entry, and every item must name an answer; anything else is an InputError. Scores of an
    item whose status is not ok are left empty, with the status in its own column.
    """
    if not citation_items:
        raise InputError("citation_items is empty: nothing to tabulate")
    keys = _answer_keys(nugget_per_query)
    answers = {(str(qid), str(run)) for qid, runs in nugget_per_query.items() for run in runs}
    citations = _index("citation_items", citation_items, keys)
    idks = _index("idk_items", idk_items, keys)
    for name, indexed in (("citation_items", citations), ("idk_items", idks)):
        missing = sorted(answers - set(indexed))
        if missing:
            shown = ", ".join(f"{q}/{r}" for q, r in missing[:5])
            raise InputError(f"{name} has no item for {len(missing)} answer(s) of nugget_per_query: {shown}")
    no_umbrela = sorted({qid for qid, _ in answers} - {str(q) for q in umbrela_per_query})
    if no_umbrela:
        raise InputError(f"umbrela_per_query has no entry for {len(no_umbrela)} answered query(ies): {no_umbrela[:5]}")
    umbrela_fields = list(dict.fromkeys(f for q in umbrela_per_query.values() for f in q))
    nugget_fields = ["status", *dict.fromkeys(f for q in nugget_per_query.values() for s in q.values() for f in s)]
    nugget_fields = list(dict.fromkeys(nugget_fields))
    columns = [
        "qid",
        "run",
        *(f"umbrela_{f}" for f in umbrela_fields),
        *(f"nugget_{f}" for f in nugget_fields),
        "citation_status",
        *CITATION_FIELDS,
        "idk_status",
        *IDK_FIELDS,
    ]
    rows = []
    for item in citation_items:
        qid, run = keys[str(item["id"])]
        umbrela = umbrela_per_query[qid]
        nugget = nugget_per_query[qid][run]
        nugget_ok = nugget.get("status") == "ok"
        row: dict[str, Any] = {"qid": qid, "run": run}
        row.update({f"umbrela_{f}": umbrela.get(f) for f in umbrela_fields})
        for f in nugget_fields:
            value = nugget.get(f)
            row[f"nugget_{f}"] = value if nugget_ok or f in ("status", "num_nuggets") else None
        citation, idk = citations[(qid, run)], idks[(qid, run)]
        row["citation_status"] = citation.get("status")
        row.update({f: _scored(citation, "citation", f) for f in CITATION_FIELDS})
        row["idk_status"] = idk.get("status")
        row.update({f: _scored(idk, "idk", f) for f in IDK_FIELDS})
        rows.append(row)
    return columns, rows


def aggregate_rows(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per run: the mean of every numeric column over the rows where it has a value, and ``num_rows``."""
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(row["run"], []).append(row)
    result: dict[str, dict[str, Any]] = {}
    for run, group in by_run.items():
        means: dict[str, Any] = {"num_rows": len(group)}
        for column in columns:
            values = [r[column] for r in group if _number(r.get(column))]
            if values:
                means[column] = sum(values) / len(values)
        result[run] = means
    return result


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def to_csv(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text with a header row; a missing value is an empty cell (``ultra_kit.files.csv_text``)."""
    return csv_text(columns, [["" if row.get(c) is None else row[c] for c in columns] for row in rows])


def write_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], save_path: str) -> tuple[Path, Path]:
    """Write ``<stem>.csv`` and ``<stem>.json`` (a list of row objects) atomically; return both paths."""
    stem = result_path(save_path, "trec_rag_table").with_suffix("")
    csv_path = atomic_write_text(unique_path(stem.with_name(stem.name + ".csv")), to_csv(columns, rows))
    json_path = atomic_write_json(unique_path(stem.with_name(stem.name + ".json")), [dict(r) for r in rows])
    return csv_path, json_path
