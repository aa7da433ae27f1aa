"""Consistency of N runs over the same queries: how alike their answers are, and how much their scores vary.

Answers: for each query, every pair of runs (i < j, run i's answer as the reference) is scored with
ROUGE-1/2/L precision, recall and F-measure (exactly rouge-score's ``score(target=answer_i,
prediction=answer_j)``) and BERTScore F1 (``servers.evaluation.answers.bertscore``; F1 = 2PR / (P + R), 0 when
P + R = 0). Per query the mean over its pairs; overall the mean over queries. F-measures do not depend
on the order of a pair; precision and recall swap with it.

Scores: for each numeric per-query metric found in every run, per query the mean, the sample variance
(N - 1 in the denominator) and the coefficient of variation (standard deviation / |mean|, None when the
mean is 0) over the runs that have a value; overall the mean of those per-query figures, and the same
three figures over the runs' own means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from servers.evaluation.answers.rouge import RougeScorer, rouge_l_prf, rouge_n_prf
from ultra_base.errors import InputError

ROUGE_NAMES = ("rouge1", "rouge2", "rougeL")
PARTS = ("precision", "recall", "fmeasure")


def check_runs(runs: Sequence[Sequence[Any]], what: str) -> int:
    """The number of queries of N >= 2 equally long runs; an error naming the run that differs otherwise."""
    if len(runs) < 2:
        raise InputError(f"{what}: consistency needs at least 2 runs, got {len(runs)}")
    size = len(runs[0])
    for index, run in enumerate(runs):
        if not isinstance(run, (list, tuple)) or len(run) != size:
            length = len(run) if isinstance(run, (list, tuple)) else type(run).__name__
            raise InputError(f"{what}[{index}] has {length} items but {what}[0] has {size}: one per query in each run")
    if not size:
        raise InputError(f"{what}: the runs hold no query")
    return size


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def pair_scores(
    reference: str, candidate: str, scorer: RougeScorer, bertscore: tuple[float, float] | None
) -> dict[str, float]:
    """ROUGE P/R/F of ``candidate`` against ``reference`` (and BERTScore F1 from its (P, R))."""
    target, prediction = scorer.text(reference), scorer.text(candidate)
    scores: dict[str, float] = {}
    for name in ROUGE_NAMES:
        values = rouge_l_prf(target, prediction) if name == "rougeL" else rouge_n_prf(target, prediction, int(name[5]))
        scores.update({f"{name}_{part}": value for part, value in zip(PARTS, values, strict=True)})
    if bertscore is not None:
        p, r = bertscore
        scores["bertscore_f1"] = 2 * p * r / (p + r) if p + r else 0.0
    return scores


def answer_consistency(
    answer_runs: Sequence[Sequence[str]],
    *,
    rouge_stemmer: bool,
    bertscore_model: str | None,
    bertscore_layer: int,
) -> dict[str, Any]:
    """Pairwise answer similarity per query and overall (module docstring); no BERTScore when the model is None."""
    count = check_runs(answer_runs, "answer_runs")
    scorer = RougeScorer(use_stemmer=bool(rouge_stemmer))
    pairs = list(combinations(range(len(answer_runs)), 2))
    bert: dict[tuple[int, int, int], tuple[float, float]] = {}
    if bertscore_model is not None:
        from servers.evaluation.answers.bertscore import bert_scorer

        keys = [(q, i, j) for q in range(count) for i, j in pairs]
        candidates = [str(answer_runs[j][q] or "") for q, i, j in keys]
        references = [str(answer_runs[i][q] or "") for q, i, j in keys]
        precision, recall = bert_scorer(bertscore_model, bertscore_layer).score(candidates, references)
        bert = dict(zip(keys, zip(precision, recall, strict=True), strict=True))
    per_query = []
    for q in range(count):
        scored = [
            {"runs": [i, j], **pair_scores(str(answer_runs[i][q] or ""), str(answer_runs[j][q] or ""), scorer,
                                           bert.get((q, i, j)))}
            for i, j in pairs
        ]  # fmt: skip
        names = [k for k in scored[0] if k != "runs"]
        per_query.append({"means": {n: _mean([s[n] for s in scored]) for n in names}, "pairs": scored})
    names = list(per_query[0]["means"])
    overall = {n: _mean([query["means"][n] for query in per_query]) for n in names}
    return {"overall": overall, "per_query": per_query, "num_pairs_per_query": len(pairs)}


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Mean, sample variance (N - 1) and coefficient of variation (sd / |mean|; None when the mean is 0)."""
    mean = _mean(values)
    if mean is None:
        return {"mean": None, "variance": None, "cv": None, "n": 0}
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else None
    cv = math.sqrt(variance) / abs(mean) if variance is not None and mean != 0 else None
    return {"mean": mean, "variance": variance, "cv": cv, "n": len(values)}


def numeric_metrics(run: dict[str, Any], count: int) -> dict[str, list[float | None]]:
    """The per-query metrics of one run: lists of ``count`` numbers (or None) under a metric name."""
    found = {}
    for name, values in run.items():
        if not isinstance(values, list) or len(values) != count:
            continue
        numeric = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)
        if numeric and any(v is not None for v in values):
            found[name] = [None if v is None else float(v) for v in values]
    return found


def score_consistency(score_runs: Sequence[dict[str, Any]], count: int) -> dict[str, Any]:
    """Per metric present in every run: per-query spread, its mean over queries, and the spread of the run means."""
    if len(score_runs) < 2:
        raise InputError(f"score_runs: consistency needs at least 2 runs, got {len(score_runs)}")
    per_run = [numeric_metrics(run, count) for run in score_runs]
    shared = [name for name in per_run[0] if all(name in metrics for metrics in per_run[1:])]
    if not shared:
        raise InputError(
            f"score_runs: no per-query metric (a list of {count} numbers) is found in every run; "
            f"run 0 has {sorted(per_run[0]) or 'none'}"
        )
    result: dict[str, Any] = {}
    for name in shared:
        queries = [spread([m[name][q] for m in per_run if m[name][q] is not None]) for q in range(count)]
        run_means = [_mean([v for v in m[name] if v is not None]) for m in per_run]
        result[name] = {
            "mean_over_queries": {
                key: _mean([s[key] for s in queries if s[key] is not None]) for key in ("mean", "variance", "cv")
            },
            "run_means": run_means,
            "over_run_means": spread([v for v in run_means if v is not None]),
            "per_query": queries,
        }
    return result
