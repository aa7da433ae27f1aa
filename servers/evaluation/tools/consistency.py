"""MCP tools for repeated runs: ``collect_run`` gathers one run per pipeline ``loop`` pass, ``consistency`` scores them.

The runs come from variables (``answer_runs``, ``score_runs``: what ``collect_run`` accumulates) or from
result files (``consistency_files``): a ``generate`` JSONL (its ``answer`` column), an ``evaluate`` /
``evaluate_mtrag`` / ``semantic_similarity`` JSON (its per-query lists, aligned by ``id_ls``), or an answer
judge's JSON (its items' metrics, aligned by ``id``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.evaluation.answers.bertscore import WHEEL_MODEL
from servers.evaluation.results import SavePathParam
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints


class CollectResult(TypedDict):
    """The runs so far, this one appended."""

    answer_runs: list[list[str]]
    score_runs: list[dict[str, Any]]


class ConsistencyResult(TypedDict):
    """Overall answer similarity, per-metric spread, the counts, and the file holding the per-query detail."""

    answer_consistency: dict[str, Any] | None
    score_consistency: dict[str, Any] | None
    num_runs: int
    num_queries: int
    result_path: str


@tool_hints(read_only=True, idempotent=False)
def collect_run(
    *,
    ans_ls: Annotated[list[str] | None, Field(description="this run's answers, one per query")] = None,
    eval_res: Annotated[dict[str, Any] | None, Field(description="this run's scores: {metric: [per query]}")] = None,
    answer_runs: Annotated[list[list[str]] | None, Field(description="the answer lists collected so far")] = None,
    score_runs: Annotated[list[dict[str, Any]] | None, Field(description="the score mappings collected so far")] = None,
) -> CollectResult:
    """Append this run's answers (ans_ls) and scores (eval_res) to answer_runs / score_runs; put it inside a `loop`."""
    if ans_ls is None and eval_res is None:
        raise InputError("collect_run needs ans_ls (this run's answers) or eval_res (its per-query scores)")
    answers = list(answer_runs or []) + ([list(ans_ls)] if ans_ls is not None else [])
    scores = list(score_runs or []) + ([dict(eval_res)] if eval_res is not None else [])
    return {"answer_runs": answers, "score_runs": scores}


@tool_hints(read_only=False, idempotent=True)
def consistency(
    *,
    answer_runs: Annotated[
        list[list[str]] | None, Field(description="N answer lists for the same queries (collect_run's output)")
    ] = None,
    score_runs: Annotated[
        list[dict[str, Any]] | None, Field(description="N score mappings {metric: [per query]} (collect_run's output)")
    ] = None,
    id_ls: Annotated[list[Any] | None, Field(description="query ids (default: the files' ids, else positions)")] = None,
    consistency_files: Annotated[
        list[str], Field(description="N result files, used when answer_runs and score_runs are not given")
    ],
    consistency_bertscore: Annotated[bool, Field(description="also BERTScore F1 between answers (extra bertscore)")],
    rouge_stemmer: Annotated[bool, Field(description="Porter stemming inside ROUGE (rouge-score use_stemmer)")],
    bertscore_model: Annotated[str, Field(description=f"'{WHEEL_MODEL}' or a local model directory")],
    bertscore_layer: Annotated[int, Field(description="hidden layer for BERTScore (0 = embeddings)")],
    save_path: SavePathParam,
) -> ConsistencyResult:
    """How consistent N runs over the same queries are: pairwise answer similarity and the spread of scores.

    Answers: per query, every pair of runs scored with ROUGE-1/2/L precision / recall / F and BERTScore F1;
    means per query and overall. Scores: per numeric per-query metric, per query the mean, sample variance
    and coefficient of variation over the runs, their means over queries, and the same over the runs' means.
    Writes the per-query detail (with ids) to a JSON file.
    """
    from servers.evaluation.consistency.running import run_consistency

    runs = {
        "answer_runs": answer_runs,
        "score_runs": score_runs,
        "id_ls": id_ls,
        "consistency_files": consistency_files,
    }
    return run_consistency(  # type: ignore[return-value]
        **runs,
        consistency_bertscore=consistency_bertscore,
        rouge_stemmer=rouge_stemmer,
        bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer,
        save_path=save_path,
    )


TOOLS = [collect_run, consistency]
