"""What ``evaluate_trec_pvalue`` does (the tool face is ``tools/trec.py``): evaluate the new runs and the
baseline, test each new run against it per metric (``ultra_trec.comparison.compare_runs``), write the result."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_text, result_path
from ultra_trec.comparison import compare_runs
from ultra_trec.measures import parse_measure


def run_pvalue(
    *,
    run_new_path: str,
    run_old_path: str,
    qrels_path: str,
    run_paths: list[str] | None,
    ir_metrics: Sequence[str],
    ks: Sequence[int],
    relevance_level: int,
    n_resamples: int,
    seed: int,
    alpha: float,
    correction: str,
    names: str,
    save_path: str,
    run_new: Any,
    run_old: Any,
    report: Callable[[float, float | None, str | None], None],
) -> dict[str, Any]:
    """``evaluate_trec_pvalue``'s result (its settings as the tool received them, ``report`` its progress)."""
    new_runs: list[Any]
    if run_new is not None:
        new_runs = [run_new]
    elif run_paths:
        new_runs = list(run_paths)
    else:
        new_runs = [run_new_path]
    if not all(isinstance(r, (str, dict)) for r in new_runs):
        raise InputError("run_paths must be a list of file paths")
    report(0, 2, f"evaluating {len(new_runs) + 1} runs and testing")
    run_labels = [r if isinstance(r, str) else "run_new" for r in new_runs]
    comparison = compare_runs(
        qrels_path,
        new_runs,
        run_old if run_old is not None else run_old_path,
        ir_metrics,
        ks=ks,
        relevance_level=relevance_level,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        correction=correction,
        run_names=run_labels,
    )
    report(1, 2, "writing the result file")
    results = [result.renamed(names) for result in comparison.results]  # per_query and metric_kinds as the rows
    if names == "trec_eval":
        for row in comparison.rows:
            row["metric"] = parse_measure(row["metric"]).trec_name
    data = {
        "eval_res": comparison.by_metric(),
        "table": comparison.rows,
        "baseline": comparison.baseline,
        "runs": comparison.runs,
        "num_q": comparison.num_queries,
        "settings": {
            **comparison.settings,
            **{"qrels": qrels_path, "ir_metrics": list(ir_metrics), "ks": list(ks)},
            "metric_kinds": results[0].kinds,  # num_ret ... are counts: the report never compares them
        },
        "per_query": {
            "baseline": results[0].per_query,
            **{name: result.per_query for name, result in zip(comparison.runs, results[1:], strict=True)},
        },
    }
    path = atomic_write_text(result_path(save_path, "evaluate_trec_pvalue"), json.dumps(data))
    report(2, 2, "done")
    return {
        "eval_res": data["eval_res"],
        "table": comparison.rows,
        "num_q": comparison.num_queries,
        "result_path": str(path),
    }
