"""Readers of the result kinds that need more than one JSON document: ``consistency``, ``mtrag_evaluated_records``
(its summary names the records file) and ``nuggetize``'s assignments (the vital nuggets each answer supports)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.report.model import Found, Run
from ultra_base.errors import readable_path
from ultra_kit.limits.json_files import MAX_RECORD_BYTES, load_jsonl_file


def new_run(label: str, kind: str, path: str, settings: Any = None) -> Run:
    """A run read from one file, with the settings the file recorded."""
    run = Run(label=label, sources=[f"{kind}: {path}"])
    if settings:
        run.parameters[f"{kind}: {Path(path).name}"] = settings
    return run


def read_consistency(document: dict[str, Any], path: str) -> Found:
    """``consistency``: each query's mean pairwise answer similarity (per measure) over the repeated runs."""
    ids = document.get("id_ls")
    answers = document.get("answers") or {}
    per_query = answers.get("per_query") if isinstance(answers, dict) else None
    run = new_run(Path(path).stem, "consistency", path, document.get("settings"))
    if isinstance(ids, list) and isinstance(per_query, list) and len(per_query) == len(ids):
        means = {str(k): q.get("means", {}) for k, q in zip(ids, per_query, strict=True) if isinstance(q, dict)}
        run.add_mapping(means, source=f"consistency: {path}", skip=set())
    scores = document.get("scores") or {}
    scalars = {
        f"{name}.{key}": float(value)
        for name, figures in (scores.items() if isinstance(scores, dict) else [])
        for key, value in (figures.items() if isinstance(figures, dict) else [])
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    return Found("consistency", [run] if run.columns else [], scalars=scalars)


def supported_vital(document: dict[str, Any], path: str) -> dict[str, dict[str, set[str]]]:
    """run -> qid -> the vital nuggets its answer fully supports, from the assignments file (when readable)."""
    named = Path(str(document.get("assignments_path") or ""))
    candidates = [named, Path(path).parent / named.name] if named.name else []
    found: dict[str, dict[str, set[str]]] = {}
    for candidate in candidates:
        if candidate.is_file():
            for answer in _records(candidate):
                if not isinstance(answer, dict) or answer.get("status") != "ok":
                    continue
                vital = {
                    str(n.get("text"))
                    for n in answer.get("nuggets") or []
                    if n.get("importance") == "vital" and n.get("assignment") == "support"
                }
                found.setdefault(str(answer.get("run")), {})[str(answer.get("qid"))] = vital
            break
    return found


def read_mtrag_records(document: dict[str, Any], path: str) -> Found:
    """``mtrag_evaluated_records``' summary: the records file it names, one run of the records' metrics."""
    records_path = Path(str(document["records_path"]))
    if not records_path.is_file():  # a run folder keeps the file beside its summary
        records_path = Path(path).parent / records_path.name
    records = _records(records_path)
    per_id = {
        str(r.get("task_id")): {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in r["metrics"].items()}
        for r in records
        if isinstance(r, dict) and isinstance(r.get("metrics"), dict)
    }
    run = new_run(Path(path).stem, "mtrag_evaluated_records", path, document.get("settings"))
    run.add_mapping(per_id, source=f"mtrag_evaluated_records: {path}", skip=set())
    return Found("mtrag_evaluated_records", [run])


def _records(path: Path) -> list[Any]:
    """A JSON Lines file a result names, read inside the read roots and within the records' size and depth limits."""
    confined = readable_path(path, setting="result_paths")
    return load_jsonl_file(confined, kind="records", max_bytes=MAX_RECORD_BYTES)
