"""The headline block at the top of the page: the runs, the number of items, the key metrics and the failures.

The key metrics are ``headline_metrics`` when given (those the runs have), else the first metric of each kind
of result file (evaluate, each judge, evaluate_trec ...), then the second of each ..., at most ``KEY_METRICS``,
leaving out the metrics that are constant over every item (they tell nothing apart) and the counts (``num_ret``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servers.report.model import Run, counts_of
from servers.report.stats import Summary

KEY_METRICS = 4


def constant(runs: Sequence[Run], name: str) -> bool:
    """Whether ``name`` takes one value (or none) over every item of every run: it tells runs and items apart
    nowhere (em and acc at 0 on long answers), so it never leads the page."""
    values = np.concatenate([run.columns[name] for run in runs if name in run.columns])
    values = values[np.isfinite(values)]
    return values.size == 0 or bool(values.min() == values.max())


def key_metrics(runs: Sequence[Run], chosen: Sequence[str]) -> list[str]:
    """The metrics the headline shows: those chosen, else (see the module) among the metrics that vary."""
    names = list(dict.fromkeys(name for run in runs for name in run.columns))
    if chosen:
        return [name for name in chosen if name in names]
    counts = counts_of(runs)
    by_tool: dict[str, list[str]] = {}
    for run in runs:
        for name in run.columns:
            if name in counts or constant(runs, name):
                continue
            metrics = by_tool.setdefault(run.origin.get(name, ""), [])
            if name not in metrics:
                metrics.append(name)
    chosen_in_turn = []  # each tool's first metric, then each tool's second ...
    for rank in range(max((len(m) for m in by_tool.values()), default=0)):
        chosen_in_turn += [metrics[rank] for metrics in by_tool.values() if rank < len(metrics)]
    return list(dict.fromkeys(chosen_in_turn))[:KEY_METRICS]


def headline(
    runs: Sequence[Run], summary: Sequence[Summary], risks: Sequence[dict[str, Any]], chosen: Sequence[str]
) -> dict[str, Any]:
    """The block's contents: runs, items, a row per key metric (mean [CI] per run), failures by source."""
    from servers.report.cells import number

    names = key_metrics(runs, chosen)
    cells = {(row.run, row.metric): row for row in summary}
    rows = []
    for name in names:
        shown = []
        for run in runs:
            row = cells.get((run.label, name))
            shown.append(f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]" if row and row.n else "")
        rows.append([name, *shown])
    failures: dict[str, int] = {}
    for run in runs:
        for tool, count in run.failures.items():
            failures[f"{run.label}: {tool}"] = failures.get(f"{run.label}: {tool}", 0) + count
    for risk in risks:
        failures[f"{risk['label']}: risk_table"] = sum(int(row.get("failures") or 0) for row in risk["rows"])
    items = len({key for run in runs for key in run.ids}) or sum(int(r.get("n") or 0) for k in risks for r in k["rows"])
    return {
        "runs": [run.label for run in runs] or [risk["label"] for risk in risks],
        "n_items": items,
        "metrics": rows,
        "failures": failures,
        "failed": sum(failures.values()),
    }
