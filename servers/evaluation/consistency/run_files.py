"""The runs ``consistency`` reads from result files: generate's JSONL, evaluate-like JSON, an answer judge's JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.evaluation.consistency.scoring import numeric_metrics
from ultra_base.errors import InputError
from ultra_kit.limits.json_files import MAX_RECORD_BYTES
from ultra_kit.readers import read_json, read_jsonl


def read_run_file(path: str) -> tuple[list[Any] | None, list[str] | None, dict[str, list[Any]]]:
    """(ids or None, answers or None, per-query metrics) of one result file."""
    if Path(path).suffix == ".jsonl":
        rows = read_jsonl(path, max_bytes=MAX_RECORD_BYTES)
        if not rows or not all(isinstance(r, dict) and isinstance(r.get("answer"), str) for r in rows):
            raise InputError("expected generate's JSONL rows with an 'answer' text each", path=path)
        rows = sorted(rows, key=lambda r: r.get("index", 0))
        return None, [r["answer"] for r in rows], {}
    data = read_json(path, max_bytes=MAX_RECORD_BYTES)
    if isinstance(data, dict) and isinstance(data.get("items"), list) and isinstance(data.get("aggregate"), dict):
        items = [i for i in data["items"] if isinstance(i, dict)]
        names = [k for k in data["aggregate"] if not k.startswith("num_")]
        return [i.get("id") for i in items], None, {name: [i.get(name) for i in items] for name in names}
    if isinstance(data, dict) and isinstance(data.get("id_ls"), list):
        ids = data["id_ls"]
        answers = next((data[k] for k in ("pred_ls", "ans_ls") if isinstance(data.get(k), list)), None)
        return ids, answers, numeric_metrics(data, len(ids))
    raise InputError(
        "not a result file this tool reads: expected generate's .jsonl, a JSON with id_ls and per-query lists "
        "(evaluate, evaluate_mtrag, semantic_similarity) or an answer judge's JSON (items and aggregate)",
        path=path,
    )


def runs_from_files(paths: list[str]) -> tuple[list[list[str]], list[dict[str, Any]], list[Any] | None]:
    """(answer runs, score runs, ids) of N result files, each reordered to the first file's ids when all have ids."""
    read = [read_run_file(p) for p in paths]
    ids = read[0][0]
    if ids is not None and all(r[0] is not None for r in read):
        aligned = []
        for path, (run_ids, answers, scores) in zip(paths, read, strict=True):
            where = {str(i): k for k, i in enumerate(run_ids)}
            if sorted(where) != sorted(str(i) for i in ids):
                raise InputError(f"its ids differ from those of {paths[0]}: give runs over the same queries", path=path)
            order = [where[str(i)] for i in ids]
            answers = None if answers is None else [answers[k] for k in order]
            aligned.append((answers, {n: [v[k] for k in order] for n, v in scores.items()}))
    else:
        aligned = [(answers, scores) for _, answers, scores in read]
    answer_runs = [a for a, _ in aligned if a is not None]
    if 0 < len(answer_runs) < len(paths):
        raise InputError(f"{len(answer_runs)} of the {len(paths)} consistency_files hold answers: give all or none")
    return answer_runs, [s for _, s in aligned if s], ids


def longest(run: dict[str, Any]) -> int:
    """The length of a run's longest list: its number of queries when it holds per-query lists."""
    lengths = [len(v) for v in run.values() if isinstance(v, list)]
    if not lengths:
        raise InputError("score_runs[0] holds no per-query list")
    return max(lengths)
