"""The retrieval kinds of result file: ``evaluate_trec``, ``evaluate_trec_pvalue``, ``trec_rag_table``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.report.kinds.shapes import declared, mapping
from servers.report.model import Found
from servers.report.readers import new_run
from ultra_base.errors import InputError


def read_evaluate_trec(document: dict[str, Any], path: str) -> Found:
    run = new_run(Path(path).stem, "evaluate_trec", path, document.get("settings"))
    run.add_mapping(mapping(document, "per_query", path), source=f"evaluate_trec: {path}", skip=set())
    declared(run, document.get("settings"))  # num_ret, num_rel, num_rel_ret: counts
    return Found("evaluate_trec", [run])


def read_pvalue(document: dict[str, Any], path: str) -> Found:
    per_query = mapping(document, "per_query", path)
    names = {"baseline": f"{Path(str(document.get('baseline', 'baseline'))).name} (baseline)"}
    runs = []
    for name, queries in per_query.items():
        run = new_run(names.get(name, Path(name).name), "evaluate_trec_pvalue", path)
        if not isinstance(queries, dict):
            raise InputError(f"per_query[{name!r}] must map query ids to measures", path=path)
        run.add_mapping(queries, source=f"evaluate_trec_pvalue: {path}", skip=set())
        declared(run, document.get("settings"))
        runs.append(run)
    if runs:
        runs[0].parameters[f"evaluate_trec_pvalue: {Path(path).name}"] = document.get("settings", {})
    rows = [dict(row) for row in document.get("table", []) if isinstance(row, dict)]
    for row in rows:
        row["run"] = Path(str(row.get("run", ""))).name
    return Found("evaluate_trec_pvalue", runs, significance=rows)


def read_trec_rag_table(rows: list[dict[str, Any]], path: str) -> Found:
    """``trec_rag_table``'s JSON: a row per (query, run); one report run per run."""
    by_run: dict[str, dict[str, dict[str, Any]]] = {}
    for position, row in enumerate(rows):
        qid = str(row["qid"])
        group = by_run.setdefault(str(row["run"]), {})
        if qid in group:
            raise InputError(f"row {position} repeats query {qid!r} of run {row['run']!r}", path=path)
        group[qid] = row
    runs = []
    for name, per_query in by_run.items():
        run = new_run(name, "trec_rag_table", path)
        run.add_mapping(per_query, source=f"trec_rag_table: {path}", skip={"qid", "run"})
        attempted = [r["answer_attempted"] for r in per_query.values() if r.get("answer_attempted") is not None]
        if attempted:
            run.answered = {"answered": float(sum(attempted)), "judged": len(attempted), "items": len(per_query)}
        runs.append(run)
    return Found("trec_rag_table", runs)
