"""What filling the holes changed: per run and measure the value before and after, Judged@k before and after,
Kendall's tau-b between the runs' rankings, and the pairs of runs whose significance decision flips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from ultra_trec.comparison import compare_runs
from ultra_trec.engine import evaluate

Qrels = Mapping[str, Mapping[str, int]]


def _values(qrels: Qrels, runs: Mapping[str, str], measures: list[str], relevance_level: int) -> dict[str, dict]:
    return {
        name: evaluate(dict(qrels), path, measures, relevance_level=relevance_level).aggregate
        for name, path in runs.items()
    }


def _tau_b(before: Sequence[float], after: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same runs (None when either has no two distinct values)."""
    from scipy.stats import kendalltau

    if len(set(before)) < 2 or len(set(after)) < 2:
        return None
    return float(kendalltau(before, after, variant="b").statistic)


def _decisions(qrels: Qrels, runs: Mapping[str, str], measures: list[str], tests: dict[str, Any]) -> dict:
    """{(run_a, run_b, measure): row} of paired tests of every pair of runs (no correction: one decision each)."""
    rows = {}
    for a, b in combinations(runs, 2):
        table = compare_runs(dict(qrels), [runs[a]], runs[b], measures, ks=None, correction="none",
                             run_names=[a], **tests)  # fmt: skip
        for row in table.rows:
            rows[a, b, row["metric"]] = {k: row[k] for k in ("diff", "p_value", "significant")}
    return rows


def changes(
    before: Qrels,
    after: Qrels,
    runs: Mapping[str, str],
    measures: list[str],
    *,
    depth: int,
    relevance_level: int,
    alpha: float,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The report of ``fill_qrels`` (see the module's docstring)."""
    judged = f"Judged@{depth}"
    old = _values(before, runs, [*measures, judged], relevance_level)
    new = _values(after, runs, [*measures, judged], relevance_level)
    per_run = {
        name: {
            **{
                m: {"before": old[name][m], "after": new[name][m], "delta": new[name][m] - old[name][m]}
                for m in measures
            },
            judged: {"before": old[name][judged], "after": new[name][judged]},
        }
        for name in runs
    }
    tau = {m: _tau_b([old[r][m] for r in runs], [new[r][m] for r in runs]) for m in measures}
    tests = {"relevance_level": relevance_level, "alpha": alpha, "n_resamples": n_resamples, "seed": seed}
    flips = []
    if len(runs) > 1:
        was, now = _decisions(before, runs, measures, tests), _decisions(after, runs, measures, tests)
        for key, row in was.items():
            if row["significant"] != now[key]["significant"]:
                flips.append({"run_a": key[0], "run_b": key[1], "measure": key[2], "before": row, "after": now[key]})
    return {"per_run": per_run, "kendall_tau_b": tau, "significance_flips": flips}
