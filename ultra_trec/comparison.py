"""Compare new runs with a baseline on every measure: one table of paired tests (pure API).

>>> table = compare_runs("qrels.test", ["bm25+rerank.run"], "bm25.run", ["map", "ndcg@10"], ks=None,
...     relevance_level=1, n_resamples=10_000, seed=42, alpha=0.05, correction="holm")  # doctest: +SKIP
>>> table.rows[0]  # doctest: +SKIP
{"run": "bm25+rerank.run", "metric": "map", "A_mean": ..., "B_mean": ..., "diff": ..., "p_value": ..., ...}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.engine import QrelsLike, RunLike, TrecResult, evaluate_tables
from ultra_trec.measures import Measure, parse_measures
from ultra_trec.reading.sources import load_qrels, load_run
from ultra_trec.significance import holm, paired_tests

Correction = Literal["holm", "none"]


@dataclass(frozen=True)
class Comparison:
    """One row per (new run, metric), in run order then measure order."""

    rows: list[dict[str, Any]]
    baseline: str
    runs: list[str]
    num_queries: int
    settings: dict[str, Any] = field(default_factory=dict)
    results: list[TrecResult] = field(default_factory=list, repr=False)

    def by_metric(self) -> dict[str, dict[str, Any]]:
        """``{metric: row}`` for one new run, ``{"run/metric": row}`` for several (UltraRAG's eval_res shape)."""
        several = len(self.runs) > 1
        return {(f"{row['run']}/{row['metric']}" if several else row["metric"]): row for row in self.rows}


def compare_runs(
    qrels: QrelsLike,
    new_runs: Sequence[RunLike],
    baseline: RunLike,
    measures: str | Sequence[str | Measure],
    *,
    ks: Sequence[int] | None,
    relevance_level: int,
    n_resamples: int,
    seed: int,
    alpha: float,
    correction: Correction,
    run_names: Sequence[str] | None = None,
) -> Comparison:
    """Evaluate each new run and the baseline, then test every (run, measure) difference.

    ``significant`` compares ``alpha`` with the Holm-adjusted p-value (``correction="holm"``,
    adjusted over all rows) or the raw one (``"none"``); ``significant_raw`` always with the raw one.
    """
    if correction not in ("holm", "none"):
        raise InputError(f"correction must be 'holm' or 'none', got {correction!r}")
    if isinstance(new_runs, (str, bytes)) or not new_runs:
        raise InputError("give at least one new run (a list of paths or run mappings)")
    _check_positive_int(n_resamples, "n_resamples")
    _check_positive_int(seed, "seed", minimum=0)
    parsed = [m for m in parse_measures(measures, ks) if m.aggregate != "text"]  # runid, relstring: no test
    if not parsed:
        raise InputError("give at least one numeric measure to compare (runid and relstring are text)")
    qrels_table = load_qrels(qrels)
    names = list(run_names) if run_names else [_run_label(run, i) for i, run in enumerate(new_runs)]
    if len(names) != len(new_runs) or len(set(names)) != len(names):
        raise InputError(f"run names must be unique, one per new run; got {names}")

    base = evaluate_tables(qrels_table, load_run(baseline, name="run_old"), parsed, relevance_level=relevance_level)
    results = [
        evaluate_tables(qrels_table, load_run(run, name=name), parsed, relevance_level=relevance_level)
        for run, name in zip(new_runs, names, strict=True)
    ]
    new = np.vstack([np.vstack([r.values[m.name] for m in parsed]) for r in results])
    old = np.vstack([np.vstack([base.values[m.name] for m in parsed])] * len(results))
    tests = paired_tests(new, old, n_resamples=n_resamples, seed=seed, alpha=alpha)
    adjusted = holm(tests.p_value) if correction == "holm" else tests.p_value
    rows = []
    for i, (name, measure) in enumerate((name, m) for name in names for m in parsed):
        rows.append(
            {
                "run": name,
                "metric": measure.name,
                "A_mean": float(tests.a_mean[i]),
                "B_mean": float(tests.b_mean[i]),
                "diff": float(tests.diff[i]),
                "p_value": float(tests.p_value[i]),
                "p_value_adjusted": float(adjusted[i]),
                "significant": bool(adjusted[i] < alpha),
                "significant_raw": bool(tests.p_value[i] < alpha),
                "t_test_p_value": _number(tests.t_test_p_value[i]),
                "ci_low": float(tests.ci_low[i]),
                "ci_high": float(tests.ci_high[i]),
                "effect_size": _number(tests.effect_size[i]),
            }
        )
    settings = {
        "measures": [m.name for m in parsed],
        "relevance_level": relevance_level,
        "n_resamples": n_resamples,
        "seed": seed,
        "alpha": alpha,
        "correction": correction,
        "test": "exact sign-flip enumeration" if tests.exact else "paired randomisation (sign-flip)",
        "confidence_level": 1 - alpha,
    }
    return Comparison(
        rows=rows,
        baseline=base.settings["run"],
        runs=names,
        num_queries=len(base.qids),
        settings=settings,
        results=[base, *results],
    )


def _run_label(run: RunLike, index: int) -> str:
    if isinstance(run, (str,)) or hasattr(run, "__fspath__"):
        return str(run)
    return f"run_{index + 1}"


def _number(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else float(value)


def _check_positive_int(value: Any, name: str, *, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
