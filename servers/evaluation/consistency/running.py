"""What ``consistency`` does (the tool face is ``tools/consistency.py``): read the runs (given, or from N
result files), score the answers' pairwise similarity and the scores' spread, write the per-query detail."""

from __future__ import annotations

from typing import Any

from servers.evaluation.consistency.run_files import longest, runs_from_files
from servers.evaluation.consistency.scoring import answer_consistency, check_runs, score_consistency
from servers.evaluation.results import item_ids
from ultra_base.errors import InputError
from ultra_kit.factory import __version__
from ultra_kit.files import atomic_write_json, result_path


def run_consistency(
    *,
    answer_runs: list[list[str]] | None,
    score_runs: list[dict[str, Any]] | None,
    id_ls: list[Any] | None,
    consistency_files: list[str],
    consistency_bertscore: bool,
    rouge_stemmer: bool,
    bertscore_model: str,
    bertscore_layer: int,
    save_path: str,
) -> dict[str, Any]:
    """``consistency``'s result (its settings as the tool received them)."""
    file_ids, from_files = None, not answer_runs and not score_runs
    if from_files:
        if not consistency_files:
            raise InputError("give answer_runs / score_runs (collect_run in a loop) or consistency_files (N files)")
        answer_runs, score_runs, file_ids = runs_from_files(list(consistency_files))
    answer_runs, score_runs = answer_runs or [], score_runs or []
    if not answer_runs and not score_runs:
        raise InputError("the runs hold neither answers nor per-query scores")
    if answer_runs:
        count = check_runs(answer_runs, "answer_runs")
    else:
        count = len(id_ls) if id_ls is not None else len(file_ids) if file_ids is not None else longest(score_runs[0])
    ids = item_ids(id_ls if id_ls is not None else file_ids, count)
    answers = None
    if answer_runs:
        model = bertscore_model if consistency_bertscore else None
        answers = answer_consistency(
            answer_runs, rouge_stemmer=rouge_stemmer, bertscore_model=model, bertscore_layer=bertscore_layer
        )
        for query_id, query in zip(ids, answers["per_query"], strict=True):
            query["id"] = query_id
    scores = score_consistency(score_runs, count) if score_runs else None
    num_runs = len(answer_runs) or len(score_runs)
    settings = {"rouge_stemmer": bool(rouge_stemmer), "consistency_bertscore": bool(consistency_bertscore)}
    if consistency_bertscore and answers is not None:
        settings.update(bertscore_model=bertscore_model, bertscore_layer=bertscore_layer, bertscore_rescaled=False)
    document = {
        "id_ls": ids, "num_runs": num_runs, "answers": answers, "scores": scores, "settings": settings,
        "files": list(consistency_files) if from_files else [],
        "versions": {"ultra-eval": __version__},
    }  # fmt: skip
    path = atomic_write_json(result_path(save_path, "consistency"), document)
    summary = {n: {k: v for k, v in s.items() if k != "per_query"} for n, s in scores.items()} if scores else None
    return {
        "answer_consistency": answers["overall"] if answers else None,
        "score_consistency": summary,
        "num_runs": num_runs,
        "num_queries": count,
        "result_path": str(path),
    }
